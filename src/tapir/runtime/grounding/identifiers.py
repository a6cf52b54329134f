"""Evaluating identifier XPaths in both dialects, and what an identifier says about its element.

``uiautomator`` XPaths run on the dump-shaped lxml tree and ``html`` XPaths on AutoDroid-V2's
rendering (see ``screen_view``); either way the hits come back as ``UINode`` values in document
order. XPaths are compiled once per process. An XPath that does not compile or selects no nodes
(``count(//x)``) is a document defect: ``evaluate`` raises ``DocumentError`` and the grounder
skips that identifier and says so in its detail.

``labels`` reads the literals out of an element's identifiers (texts, content descriptions,
resource ids): they are what the fuzzy and embedding stages compare screens against when no
identifier matches any more.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from lxml import etree

from tapir.core.document import Dialect, Identifier
from tapir.core.errors import DocumentError
from tapir.hierarchy import UINode, UITree
from tapir.runtime.grounding.fuzzy import LABEL_CAP
from tapir.runtime.grounding.screen_view import ScreenView, uiautomator_attributes
from tapir.runtime.grounding.terms import UIA_FIELDS

_COMPILED: dict[str, etree.XPath | DocumentError] = {}


# ``@attr = 'v'`` / ``text() = "v"`` / ``contains(@attr, 'v')``. Upstream documents also carry
# ``and alt="<text>"`` (a child test, an upstream bug: the value is the element's text).
_LITERAL = re.compile(
    r"""(?:contains\(\s*)?(@[\w-]+|text\(\)|\balt\b)\s*(?:=|,)\s*(?:"([^"]*)"|'([^']*)')"""
)
_TEXT_ATTRS = frozenset({"@text", "text()", "alt"})
_DESC_ATTRS = frozenset({"@content-desc", "@alt", "@content_desc", "@content_description"})
_RID_ATTRS = frozenset({"@resource-id", "@resource_id"})
# A resource id the XPath requires in every hit: only sound for pure conjunctions.
_REQUIRED_RID = re.compile(r"""@resource[-_]id\s*=\s*(?:"([^"]+)"|'([^']+)')""")
_DISJUNCTIVE = re.compile(r"\bor\b|\bnot\s*\(|\|")
# ``//TAG[term and term ...]`` with terms ``@attr='v'`` or ``text()='v'``: see ``simple_xpath``.
_HEAD = re.compile(r"^//(\*|[A-Za-z_][\w.\-]*)\[")
_TERM = re.compile(r"""\s*(?:@([A-Za-z_][\w.\-]*)|text\(\))\s*=\s*(?:"([^"]*)"|'([^']*)')\s*""")
_AND = re.compile(r"and\s+")
_SIMPLE: dict[str, tuple[str, tuple[tuple[str, str], ...]] | None] = {}


def compile_xpath(expr: str) -> etree.XPath:
    """The compiled XPath; ``DocumentError`` if it does not parse."""
    found = _COMPILED.get(expr)
    if found is None:
        try:
            found = etree.XPath(expr)
        except etree.XPathSyntaxError as exc:
            found = DocumentError(f"invalid XPath {expr!r}: {exc}")
        _COMPILED[expr] = found
    if isinstance(found, DocumentError):
        raise found
    return found


def simple_xpath(expr: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """``//TAG[@a='x' and text()='y' ...]`` as (tag, terms); None for anything else.

    Nearly every identifier in upstream documents has this form; it is answered from an index of
    the screen's attribute values (``ScreenView.html_terms``) instead of by lxml, with the same
    result: an element is selected when it has every attribute value, and a text node child
    equal to every ``text()`` value.
    """
    if expr in _SIMPLE:
        return _SIMPLE[expr]
    found: tuple[str, tuple[tuple[str, str], ...]] | None = None
    m = _HEAD.match(expr)
    if m is not None and expr.endswith("]"):
        end = len(expr) - 1
        pos = m.end()
        terms: list[tuple[str, str]] = []
        while True:
            t = _TERM.match(expr, pos)
            if t is None:
                break
            value = t.group(2) if t.group(2) is not None else t.group(3)
            terms.append(("@" + t.group(1) if t.group(1) else "text()", value))
            pos = t.end()
            if pos == end:
                found = (m.group(1), tuple(terms))
                break
            a = _AND.match(expr, pos)
            if a is None:
                break
            pos = a.end()
    _SIMPLE[expr] = found
    return found


def _by_terms(view: ScreenView, dialect: Dialect, tag: str,
              terms: tuple[tuple[str, str], ...], limit: int | None = None) -> list[UINode] | None:
    """The hits of a simple XPath from the indexes (the first ``limit`` of them); None when
    they cannot answer it."""
    tree = view.tree
    if dialect == Dialect.HTML:
        ids = view.html_on_demand.query(tag, terms, limit)
        if ids is None:
            ids = _intersect(view.html_terms, terms, tag)
        return [n for n in (tree.node(i) for i in ids) if n.visible]
    if tag not in ("*", "node"):
        return []
    if any(name == "text()" for name, _ in terms):
        return []  # uiautomator elements hold no text
    indexed = [t for t in terms if t[0] in UIA_FIELDS]
    if not indexed:
        return None
    rest = [t for t in terms if t[0] not in UIA_FIELDS]
    lists = sorted((view.tree_terms.ids(name, value) for name, value in indexed), key=len)
    if not lists[0]:
        return []
    others = [set(x) for x in lists[1:]]
    out: list[UINode] = []
    for nid in dict.fromkeys(lists[0]):
        if not all(nid in o for o in others):
            continue
        node = tree.node(nid)
        if not node.visible:
            continue
        if rest:
            attrs = uiautomator_attributes(node)
            if any(attrs.get(name[1:]) != value for name, value in rest):
                continue
        out.append(node)
        if limit is not None and len(out) >= limit:
            break
    return out


def _intersect(indexed: tuple[dict[tuple[str, str], list[int]], dict[int, str]],
               terms: tuple[tuple[str, str], ...], tag: str) -> list[int]:
    """The ids having every term in a full term index (and the tag, unless ``*``), in order."""
    index, tags = indexed
    lists = [index.get(term, ()) for term in terms]
    if not all(lists):
        return []
    lists.sort(key=len)
    others = [set(x) for x in lists[1:]]
    return [nid for nid in dict.fromkeys(lists[0])
            if all(nid in o for o in others) and (tag == "*" or tags.get(nid) == tag)]


def positional(xpath: str) -> bool:
    """A bare path (``//FrameLayout/LinearLayout/button[3]``): no attribute or text test at all."""
    return "@" not in xpath and "text()" not in xpath and "contains(" not in xpath


_REQUIRED: dict[str, str | None] = {}


def required_resource_id(expr: str) -> str | None:
    """A resource id every hit of ``expr`` must carry, or None when that cannot be told cheaply."""
    if expr in _REQUIRED:
        return _REQUIRED[expr]
    found = None
    if not _DISJUNCTIVE.search(expr):
        m = _REQUIRED_RID.search(expr)
        found = (m.group(1) or m.group(2)) if m else None
    _REQUIRED[expr] = found
    return found


def renamed_identifier(identifier: Identifier, view: ScreenView) -> Identifier | None:
    """The identifier with the resource id it requires replaced by the id the screen shows for it
    under another naming convention (``ScreenView.renamed``), when that id is absent; else None."""
    rid = required_resource_id(identifier.xpath)
    if rid is None or rid in view.resource_names:
        return None
    alias = view.renamed(rid)
    if alias is None:
        return None
    xpath = identifier.xpath.replace(f"'{rid}'", f"'{alias}'").replace(f'"{rid}"', f'"{alias}"')
    return replace(identifier, xpath=xpath)


def evaluate(identifier: Identifier, view: ScreenView, *, within: int | None = None,
             indexed: bool = True, limit: int | None = None) -> list[UINode]:
    """The visible nodes ``identifier`` selects on ``view``, in document order, without repeats.

    ``within`` restricts the search to that node's subtree, evaluated as a document of its own
    (a simple XPath is answered from the indexes, keeping the hits in the subtree). Attribute
    and text results select the element that holds them. ``indexed=False`` always runs lxml
    (the tests compare both ways). ``limit``: the caller needs no more hits than that (whether
    there is one): the index stops looking, lxml may give more.
    """
    rid = required_resource_id(identifier.xpath)
    if rid is not None and rid not in view.resource_names:
        compile_xpath(identifier.xpath)  # still report a malformed XPath
        return []
    if indexed:
        simple = simple_xpath(identifier.xpath)
        if simple is not None:
            hits = _by_terms(view, identifier.dialect, *simple, limit=limit if within is None else None)
            if hits is not None:
                # inside an item, ``//x[...]`` selects the item or views below it that have the terms
                return hits if within is None else [h for h in hits if _inside(view.tree, h, within)]
    xpath = compile_xpath(identifier.xpath)
    if identifier.dialect == Dialect.HTML:
        html = view.html
        if within is None:
            context = html.root
        else:
            el = html.element(within)
            if el is None:
                return []
            context = copy.deepcopy(el)
        ids = _ids_by_attribute
        mapping = None
    else:
        found = view.uiautomator.context(within)
        if found is None:
            return []
        context, mapping = found
        ids = None
    try:
        result = xpath(context)
    except etree.XPathEvalError as exc:
        raise DocumentError(f"XPath {identifier.xpath!r} cannot be evaluated: {exc}") from exc
    if not isinstance(result, list):
        raise DocumentError(f"XPath {identifier.xpath!r} gives a {type(result).__name__}, not elements")
    out: list[UINode] = []
    seen: set[int] = set()
    tree = view.tree
    for item in result:
        el = item if isinstance(item, etree._Element) else getattr(item, "getparent", lambda: None)()
        if el is None:
            continue
        nid = ids(el) if ids is not None else mapping.get(el) if mapping is not None else None
        if nid is None or nid in seen:
            continue
        seen.add(nid)
        node = tree.get(nid)
        if node is not None and node.visible:
            out.append(node)
    return out


def _inside(tree: UITree, node: UINode, within: int) -> bool:
    """``node`` is the view ``within`` or lies below it."""
    nid: int | None = node.id
    while nid is not None:
        if nid == within:
            return True
        nid = tree.node(nid).parent
    return False


def _ids_by_attribute(el: etree._Element) -> int | None:
    value = el.get("id")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Labels:
    """What an element's identifiers say it shows: texts, content descriptions, resource names."""

    texts: tuple[str, ...] = ()
    descs: tuple[str, ...] = ()
    #: short resource names (the part after ``/``)
    rids: tuple[str, ...] = ()

    @property
    def words(self) -> tuple[str, ...]:
        """Texts and descriptions together (a label may move from text to description)."""
        return tuple(dict.fromkeys(self.texts + self.descs))

    def __bool__(self) -> bool:
        return bool(self.texts or self.descs or self.rids)


def labels(identifiers: Iterable[Identifier], *, own: bool = False) -> Labels:
    """The literals of the identifiers. ``own``: only those that say what the element is, not
    those of the container an identifier looks in (``//node[@resource-id='x:id/holder']//node[...]``
    names where the element is; another view with that id is not the element)."""
    texts: list[str] = []
    descs: list[str] = []
    rids: list[str] = []
    for ident in identifiers:
        for m in _LITERAL.finditer(" ".join(_own_steps(ident.xpath)) if own else ident.xpath):
            attr, value = m.group(1), m.group(2) if m.group(2) is not None else m.group(3)
            value = value.strip()[:LABEL_CAP]
            if not value:
                continue
            if attr in _TEXT_ATTRS:
                texts.append(value)
            elif attr in _DESC_ATTRS:
                descs.append(value)
            elif attr in _RID_ATTRS:
                rids.append(value.rsplit("/", 1)[-1])
    return Labels(tuple(dict.fromkeys(texts)), tuple(dict.fromkeys(descs)), tuple(dict.fromkeys(rids)))


#: Steps that leave a view for one inside it: the view before such a step is a container.
_DOWN_AXES = ("child::", "descendant::", "descendant-or-self::")


def _own_steps(xpath: str) -> list[str]:
    """The location steps of ``xpath`` that describe the view it selects: every step but those
    followed by a step down into them (a container's). A step followed by a step up or aside
    (``//node[@text='Groups']/ancestor::node[@clickable='true'][1]``) describes the element's own
    label, and is kept."""
    steps: list[str] = []
    depth, quote, start = 0, "", 0
    for i, ch in enumerate(xpath + "|"):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0 and ch in "/|":
            steps.append(xpath[start:i].strip())
            if ch == "|":
                steps.append("|")
            start = i + 1
    own: list[str] = []
    parts = [s for s in steps if s]
    if not parts:  # a bracket or quote left open: the XPath is broken, all of it is kept
        return [xpath]
    for step, after in zip(parts, [*parts[1:], "|"], strict=True):
        if step == "|":
            continue
        down = after != "|" and (after.startswith(_DOWN_AXES) or not (
            "::" in after.split("[", 1)[0] or after.startswith(".")))
        if not down:
            own.append(step)
    return own
