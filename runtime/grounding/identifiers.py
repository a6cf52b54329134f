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
from dataclasses import dataclass

from lxml import etree
from tapir.docgen.model import Dialect, Identifier
from tapir.dsl.errors import DocumentError
from tapir.runtime.grounding.fuzzy import LABEL_CAP
from tapir.runtime.grounding.screen_view import ScreenView
from tapir.runtime.hierarchy import UINode

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
# The commonest identifiers: a resource id and nothing else, answered from an index.
_HTML_RID_ONLY = re.compile(r"""^//\*\[@resource_id=(["'])([^"']+)\1\]$""")
_UIA_RID_ONLY = re.compile(r"""^//(?:\*|node)\[@resource-id=(["'])([^"']+)\1\]$""")


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


def _by_resource_id(view: ScreenView, rid: str, dialect: Dialect) -> list[UINode]:
    """What ``//*[@resource_id='x']`` selects, from an index instead of lxml (the commonest form)."""
    if dialect == Dialect.HTML:
        shown = view.html.elements
        return [n for n in view.by_resource_id(rid, short=True) if n.id in shown]
    return [n for n in view.by_resource_id(rid, short=False) if n.visible]


def required_resource_id(expr: str) -> str | None:
    """A resource id every hit of ``expr`` must carry, or None when that cannot be told cheaply."""
    if _DISJUNCTIVE.search(expr):
        return None
    m = _REQUIRED_RID.search(expr)
    return (m.group(1) or m.group(2)) if m else None


def evaluate(identifier: Identifier, view: ScreenView, *, within: int | None = None) -> list[UINode]:
    """The visible nodes ``identifier`` selects on ``view``, in document order, without repeats.

    ``within`` restricts the search to that node's subtree, evaluated as a document of its own.
    Attribute and text results select the element that holds them.
    """
    rid = required_resource_id(identifier.xpath)
    if rid is not None and rid not in view.resource_names:
        compile_xpath(identifier.xpath)  # still report a malformed XPath
        return []
    if within is None:
        m = (_HTML_RID_ONLY if identifier.dialect == Dialect.HTML else _UIA_RID_ONLY).match(identifier.xpath)
        if m is not None:
            return _by_resource_id(view, m.group(2), identifier.dialect)
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


def labels(identifiers: Iterable[Identifier]) -> Labels:
    texts: list[str] = []
    descs: list[str] = []
    rids: list[str] = []
    for ident in identifiers:
        for m in _LITERAL.finditer(ident.xpath):
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
