"""Grounding on real recorded screens and real upstream documents (skipped without shared/upstream)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml

from tapir.core.document import AppDocument, Dialect, Identifier
from tapir.docgen.loader import loads_document
from tapir.docgen.upstream import import_file
from tapir.hierarchy import load_tree
from tapir.runtime.grounding import Grounder, GroundingConfig
from tapir.runtime.grounding.baseline import upstream_identifiers, upstream_locate
from tapir.runtime.grounding.identifiers import evaluate, simple_xpath
from tapir.runtime.grounding.screen_view import ScreenView

pytestmark = pytest.mark.upstream
EXACT = GroundingConfig(use_embedding=False)


@functools.cache
def _document(upstream: Path, app: str) -> AppDocument:
    text, _ = import_file(upstream / "droidtask" / "apps" / app / "doc.json")
    doc = loads_document(text).document
    assert doc is not None
    return doc


def _states(upstream: Path, app: str, every: int = 1) -> list[Path]:
    return sorted((upstream / "droidtask" / "apps" / app / "states").glob("state_*.json"))[::every]


@pytest.mark.parametrize("app", ["clock", "applauncher"])
def test_indexed_xpaths_select_what_lxml_selects(upstream: Path, app: str) -> None:
    doc = _document(upstream, app)
    xpaths = {i.xpath for e in doc.elements for i in e.identifiers}
    xpaths |= {i.xpath for s in doc.screens for i in s.signature.all_of}
    simple = [x for x in xpaths if simple_xpath(x) is not None]
    assert len(simple) > 0.8 * len(xpaths), "most upstream identifiers have the indexed form"
    compared = 0
    for state in _states(upstream, app, every=9):
        view = ScreenView(load_tree(state))
        for x in sorted(xpaths):
            ident = Identifier(x, Dialect.HTML)
            fast = evaluate(ident, view)
            slow = evaluate(ident, view, indexed=False)
            assert [n.id for n in fast] == [n.id for n in slow], (state.name, x)
            compared += bool(slow)
    assert compared > 100


def test_indexed_uiautomator_xpaths_select_what_lxml_selects(upstream: Path) -> None:
    tree = load_tree(upstream / "uiautomator" / "chrome_search_results.xml")
    view = ScreenView(tree)
    xpaths = ["//node[@class='android.widget.Button']", "//*[@clickable='true' and @class='android.view.View']",
              "//node[@resource-id='Q7Ulpb']", "//node[@text='Search by voice' and @enabled='true']",
              "//node[@content-desc='Google']", "//node[@checked='true']", "//android.view.View[@text='x']",
              "//node[@text='Clear Search' and @resource-id='tsuid_2-0yZ-jtAcyGptQPofi-iA8_3']"]
    for x in xpaths:
        ident = Identifier(x, Dialect.UIAUTOMATOR)
        assert [n.id for n in evaluate(ident, view)] == [n.id for n in evaluate(ident, view, indexed=False)], x
    assert evaluate(Identifier("//node[@resource-id='Q7Ulpb']", Dialect.UIAUTOMATOR), view)[0].text == \
        "Search by voice"


def _trace_steps(upstream: Path, app: str) -> list[tuple[str, int, Path]]:
    steps = []
    for trace in sorted((upstream / "droidtask" / "apps" / app / "traces").glob("task*.yaml")):
        for r in yaml.safe_load(trace.read_text(encoding="utf-8"))["records"]:
            state = upstream / "droidtask" / "apps" / app / "states" / f"state_{r['tag']}.json"
            if int(r["Choice"]) >= 0 and state.is_file():
                steps.append((trace.stem, int(r["Choice"]), state))
    return steps


def test_the_imported_clock_document_grounds_the_recorded_taps(upstream: Path) -> None:
    """Every element of the real document that upstream's own lookup resolves to the view the
    person tapped is grounded by Tapir to the same view (or the same clickable row)."""
    doc = _document(upstream, "clock")
    g = Grounder(doc, config=EXACT)
    agree = total = 0
    for _, choice, state in _trace_steps(upstream, "clock"):
        tree = load_tree(state)
        view = ScreenView(tree)
        screen = g.identify_screen(tree)
        if screen.name is None:
            continue
        elements = doc.screen(screen.name).elements  # type: ignore[union-attr]
        for element in elements:
            if element.item_of is not None:
                continue
            hit = upstream_locate(element, view, elements)
            if hit is None or view.clickable_owner(hit.id) != view.clickable_owner(choice) or \
                    view.clickable_owner(choice) is None:
                continue
            total += 1
            found = g.ground(element.name, tree)
            agree += found is not None and view.clickable_owner(found.node.id) == view.clickable_owner(choice)
    assert total >= 10 and agree == total


def test_screen_identification_on_recorded_clock_screens(upstream: Path) -> None:
    doc = _document(upstream, "clock")
    g = Grounder(doc, config=EXACT)
    named = 0
    states = _states(upstream, "clock", every=5)
    for state in states:
        match = g.identify_screen(load_tree(state))
        named += match.name is not None
        if match.name is not None:
            assert match.candidates[0][0] == match.name and 0 < match.score <= 1
    assert named >= 0.6 * len(states)


def test_upstream_identifier_rules_reproduce_the_documents_queues(upstream: Path) -> None:
    """The baseline writes the same XPath queue as upstream's document for the element
    upstream recorded (the settings button of the clock's main screen)."""
    doc = _document(upstream, "clock")
    steps = _trace_steps(upstream, "clock")
    trace, choice, state = steps[0]
    view = ScreenView(load_tree(state))
    queue = [i.xpath for i in upstream_identifiers(view, choice)]
    assert queue == [i.xpath for i in doc.element("main_screen__settings_button").identifiers]  # type: ignore[union-attr]
