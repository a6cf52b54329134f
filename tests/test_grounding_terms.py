"""The HTML term index built straight from the tree equals the one read from the rendered HTML.

``terms.html_facts`` replaces render + parse for identifier lookups and skeletons, so it must
agree with what lxml reads back from ``render_html`` on every screen: recorded DroidTask states,
real uiautomator dumps, every view of the sample apps, and a tree full of awkward characters.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from tapir.core.document import Dialect, Identifier
from tapir.hierarchy import UITree, html_view, parse_droidbot_state, parse_uiautomator, parse_view_list
from tapir.runtime.grounding.identifiers import evaluate
from tapir.runtime.grounding.screen_view import ScreenView
from tapir.runtime.grounding.screens import skeleton_paths
from tapir.runtime.grounding.terms import HtmlFacts, HtmlOnDemand, TreeTerms, html_facts
from tapir.sim.apps import APP_NAMES, get_app
from tapir.sim.toolkit.app import ToolkitApp
from tapir.sim.toolkit.explore import crawl

TermSets = dict[tuple[str, str], list[int]]


def rendered_facts(tree: UITree) -> tuple[TermSets, dict[int, str], frozenset[tuple[tuple[str, str], ...]]]:
    """The reference: every attribute value and text node of the parsed HTML, per element id."""
    view = html_view(tree)
    index: TermSets = {}
    tags: dict[int, str] = {}
    for el in view.root.iter():
        raw = el.get("id")
        if not isinstance(el.tag, str) or raw is None:
            continue
        nid = int(raw)
        tags[nid] = el.tag
        for key, value in el.attrib.items():
            index.setdefault(("@" + key, value), []).append(nid)
        for text in [el.text] + [c.tail for c in el]:
            if text is not None:
                index.setdefault(("text()", text), []).append(nid)
    return _dedup(index), tags, skeleton_paths(view.root)


def _dedup(index: TermSets) -> TermSets:
    return {k: list(dict.fromkeys(v)) for k, v in index.items()}


def assert_same(tree: UITree, where: str) -> HtmlFacts:
    facts = html_facts(tree)
    terms, tags, skeleton = rendered_facts(tree)
    assert _dedup(facts.terms) == terms, where
    assert facts.tags == tags, where
    assert facts.skeleton == skeleton, where
    assert_on_demand(tree, terms, tags, where)
    return facts


def assert_on_demand(tree: UITree, terms: TermSets, tags: dict[int, str], where: str) -> None:
    """``HtmlOnDemand`` answers the identifiers upstream writes exactly as the full index does."""
    demand = HtmlOnDemand(tree, TreeTerms(tree))
    by_node: dict[int, list[tuple[str, str]]] = {}
    for term, ids in terms.items():
        if term[0] != "@id":
            for nid in ids:
                by_node.setdefault(nid, []).append(term)
    for nid, own in by_node.items():
        queries = [(t,) for t in own] + [tuple(own[:2]), tuple(own[:3])]
        for query in queries:
            for tag in ("*", tags[nid], "p"):
                expected = [i for i in dict.fromkeys(min((terms[t] for t in query), key=len))
                            if all(i in terms[t] for t in query) and (tag == "*" or tags[i] == tag)]
                got = demand.query(tag, query)
                if got is None:
                    # only status tests and the whitespace between tags propose no candidates
                    assert all(t[0] == "@status" or not t[1].strip() for t in query), (where, query)
                    continue
                assert got == expected, (where, tag, query)


def test_awkward_characters_and_a_forest() -> None:
    views = [
        {"temp_id": 0, "parent": -1, "children": [1, 2, 5], "class": "android.widget.FrameLayout",
         "bounds": [[0, 0], [1080, 2400]], "visible": True},
        {"temp_id": 1, "parent": 0, "children": [], "class": "android.widget.TextView", "resource_id": "a:id/t",
         "text": "one\r\ntwo\rthree\tfour & <5> 'six' \"7\"\x01", "bounds": [[0, 0], [10, 10]],
         "visible": True},
        {"temp_id": 2, "parent": 0, "children": [3, 4], "class": "com.x.Outer$Inner", "resource_id": "a:id/row\tx",
         "text": "Row", "content_description": "desc\nwith\r\nbreaks", "clickable": True,
         "bounds": [[0, 10], [10, 20]], "visible": True},
        {"temp_id": 3, "parent": 2, "children": [], "class": "android.widget.CheckBox", "checkable": True,
         "checked": True, "text": "x" * 80, "bounds": [[0, 10], [5, 20]], "visible": True},
        {"temp_id": 4, "parent": 2, "children": [], "class": "android.widget.ImageView",
         "bounds": [[5, 10], [10, 20]], "visible": True},
        {"temp_id": 5, "parent": 0, "children": [], "class": "android.widget.EditText", "editable": True,
         "text": "", "bounds": [[0, 20], [10, 30]], "visible": True},
        # a second root: the HTML wraps the forest in <hierarchy>
        {"temp_id": 6, "parent": -1, "children": [], "class": "android.widget.TextView", "text": "toast",
         "bounds": [[0, 30], [10, 40]], "visible": True},
    ]
    facts = assert_same(parse_view_list(views), "synthetic")
    assert (("hierarchy", ""),) in facts.skeleton
    assert ("text()", "one\ntwo\nthree\tfour & <5> 'six' \"7\"") in facts.terms
    assert ("@alt", "desc with breaks") in facts.terms


@pytest.mark.parametrize("name", APP_NAMES)
def test_every_view_of_the_sample_apps(name: str) -> None:
    app = get_app(name)
    assert isinstance(app, ToolkitApp)
    for key, there in crawl(app).items():
        assert_same(parse_uiautomator(there.dump_xml()), f"{name} {key}")


@pytest.mark.upstream
def test_recorded_droidtask_states_and_real_dumps(upstream: Path) -> None:
    checked = 0
    for path in sorted((upstream / "droidtask" / "apps").glob("*/states/state_*.json")):
        assert_same(parse_droidbot_state(json.loads(path.read_text(encoding="utf-8"))), str(path))
        checked += 1
    for path in sorted((upstream / "uiautomator").glob("*.xml")):
        try:
            tree = parse_uiautomator(path.read_bytes())
        except etree.XMLSyntaxError:
            continue
        assert_same(tree, str(path))
        checked += 1
    assert checked >= 100


def assert_within_agrees(tree: UITree, where: str, limit: int = 40) -> int:
    """Inside a view (a list item), an identifier answered from the indexes selects what lxml
    selects on that view's subtree as a document of its own, in both dialects; and the
    uiautomator dialect runs on the dump itself when the tree has one. Returns the checks made."""
    view = ScreenView(tree)
    terms, _ = view.html_terms
    checks = 0
    containers = [n for n in tree.nodes if len(n.children) >= 2][:limit]
    for node in containers:
        below = [node, *tree.descendants(node.id)][:6]
        xpaths: list[Identifier] = []
        for d in below:
            if d.resource_id:
                xpaths.append(Identifier(f"//node[@resource-id='{d.resource_id}']", Dialect.UIAUTOMATOR))
                if "'" not in d.resource_name:
                    xpaths.append(Identifier(f"//*[@resource_id='{d.resource_name}']", Dialect.HTML))
            if d.text and "'" not in d.text and "\n" not in d.text:
                xpaths.append(Identifier(f"//node[@text='{d.text}']", Dialect.UIAUTOMATOR))
        for ident in xpaths:
            indexed = [n.id for n in evaluate(ident, view, within=node.id)]
            plain = [n.id for n in evaluate(ident, view, within=node.id, indexed=False)]
            assert indexed == plain, (where, node.id, ident.xpath)
            checks += 1
    return checks


@pytest.mark.parametrize("name", APP_NAMES)
def test_identifiers_inside_items_agree_with_lxml_on_the_sample_apps(name: str) -> None:
    app = get_app(name)
    assert isinstance(app, ToolkitApp)
    checks = sum(assert_within_agrees(parse_uiautomator(there.dump_xml()), f"{name} {key}")
                 for key, there in list(crawl(app).items())[:12])
    assert checks >= 50


@pytest.mark.upstream
def test_identifiers_inside_items_agree_with_lxml_on_recorded_states(upstream: Path) -> None:
    checks = 0
    for path in sorted((upstream / "droidtask" / "apps").glob("*/states/state_*.json"))[:40]:
        checks += assert_within_agrees(parse_droidbot_state(json.loads(path.read_text(encoding="utf-8"))), str(path))
    for path in sorted((upstream / "uiautomator").glob("*.xml")):
        try:
            tree = parse_uiautomator(path.read_bytes())
        except etree.XMLSyntaxError:
            continue
        checks += assert_within_agrees(tree, str(path))
    assert checks >= 500


def test_the_tree_index_skips_empty_values_and_finds_them_when_asked() -> None:
    app = get_app("music")
    assert isinstance(app, ToolkitApp)
    tree = parse_uiautomator(app.dump_xml())
    terms = TreeTerms(tree)
    assert "" not in terms.index("@text")
    assert terms.ids("@text", "") == [n.id for n in tree.nodes if not n.text]
    assert terms.ids("@resource-id", "") == [n.id for n in tree.nodes if not n.resource_id]
    by_rid, by_text = tree.values_index("resource-id", "text")
    rids = {n.resource_id for n in tree.nodes if n.resource_id}
    assert by_rid == {r: [n.id for n in tree.nodes if n.resource_id == r] for r in rids}
    assert sum(map(len, by_text.values())) == sum(1 for n in tree.nodes if n.text)
    # the dump as lxml reads it, view for view
    assert [tree.document_ids[tree.element_of(n.id)] for n in tree.nodes] == [n.id for n in tree.nodes]
    assert tree.element_of(len(tree.nodes)) is None
