"""The AutoDroid-V2 HTML form of a screen, and XPath evaluation on it.

Upstream app documents locate elements with XPaths written against this rendering, so it
has to match upstream byte for byte. The rules, checked against DroidTask ground truth
(tests/test_html_golden.py):

* Kept: visible views whose resource id is not the status- or navigation-bar background.
  A dropped view takes its whole subtree with it.
* A view is *described* if it has text, a content description, or is scrollable itself.
  Its tag is ``input`` (editable), ``checkbox`` (checkable, itself or an ancestor),
  ``button`` (clickable, itself or an ancestor; long-clickable does not count), ``scrollbar``
  (scrollable) or ``p``; its content is the text cut to 50 characters (newlines kept), and
  ``status='selected'`` marks checked or selected views. Other views keep their short class
  name as tag and show no text.
* Attributes, in order: ``id`` (DroidBot temp id / our node id), ``resource_id`` (the part
  after ``/``), ``alt`` (content description), ``status``; empty ones are left out.
* Pruning: a view none of whose leaves is described loses its children (it stays, empty).
  Leaves always stay.
* Layout: two spaces per level, one element per line, a leaf closed on its own line,
  ``& < > " '`` escaped.

Two deliberate deviations, both where upstream's own parser would crash: characters XML
forbids are removed from text, and tag names that are not XML names (``Outer$Inner``) have the
offending characters replaced with ``_``. A forest (several roots) is wrapped in
``<hierarchy>``.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from lxml import etree

from tapir.core.errors import DocumentError
from tapir.hierarchy.model import UINode, UITree

BAR_RESOURCE_IDS = frozenset({"android:id/navigationBarBackground", "android:id/statusBarBackground"})
CONTENT_LIMIT = 50
DESCRIBED_TAGS = frozenset({"input", "checkbox", "button", "scrollbar", "p"})

# (ASCII only: \w also matches characters no XML name may hold, such as ² and º)
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.\-]")
# One table both escapes and drops the characters XML forbids, so a string is walked once.
_INVALID = [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0xD800, 0xE000), 0xFFFE, 0xFFFF]
_ESCAPES: dict[int, str | None] = {
    **dict.fromkeys(_INVALID),
    **{ord(c): e for c, e in {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}.items()},
}


def _esc(text: str) -> str:
    return text.translate(_ESCAPES)


@functools.lru_cache(maxsize=1024)
def _tag_name(short_class: str) -> str:
    name = _NAME_BAD.sub("_", short_class) or "div"
    if not (name[0].isalpha() or name[0] == "_") or name.lower().startswith("xml"):
        name = "_" + name
    return name


class HtmlElement(NamedTuple):
    """How one node shows in the HTML: its tag, and whether it is a described element.

    (A named tuple: one is made per view on every render, and a frozen dataclass cost 1 us each.)
    """

    node_id: int
    tag: str
    described: bool
    content: str
    status: str


def _classify(node: UINode, in_checkable: bool, in_clickable: bool) -> HtmlElement:
    if node.text or node.content_desc or node.scrollable:
        if node.editable:
            tag = "input"
        elif in_checkable:
            tag = "checkbox"
        elif in_clickable:
            tag = "button"
        elif node.scrollable:
            tag = "scrollbar"
        else:
            tag = "p"
        status = "selected" if node.checked or node.selected else ""
        return HtmlElement(node.id, tag, True, node.text[:CONTENT_LIMIT], status)
    return HtmlElement(node.id, _tag_name(node.short_class) if node.class_name else "div", False, "", "")


def _kept(node: UINode) -> bool:
    return node.visible and node.resource_id not in BAR_RESOURCE_IDS


def _layout(tree: UITree) -> tuple[list[tuple[int, int, bool]], dict[int, HtmlElement]]:
    """Decide what is shown: (node id, depth, has shown children) in document order."""
    elements: dict[int, HtmlElement] = {}
    # checkable/clickable are inherited from any ancestor, shown or not; pre-order puts
    # parents first, so one pass carries them down
    checkable: dict[int, bool] = {}
    clickable: dict[int, bool] = {}
    for node in tree.nodes:
        p = node.parent
        nid = node.id
        checkable[nid] = node.checkable or (p is not None and checkable[p])
        clickable[nid] = node.clickable or (p is not None and clickable[p])
        if _kept(node):
            elements[nid] = _classify(node, checkable[nid], clickable[nid])
    kids = {nid: [c for c in tree.node(nid).children if c in elements] for nid in elements}

    # does any leaf below a node get described? bottom-up, so reversed pre-order
    has_described_leaf: dict[int, bool] = {}
    for node in reversed(tree.nodes):
        cs = kids.get(node.id)
        if cs is None:
            continue
        has_described_leaf[node.id] = any(
            (has_described_leaf[c] if kids[c] else elements[c].described) for c in cs
        )

    order: list[tuple[int, int, bool]] = []
    for root in tree.roots:
        if root not in kids:
            continue
        stack = [(root, 0)]
        while stack:
            nid, depth = stack.pop()
            shown = kids[nid] if has_described_leaf[nid] else []
            order.append((nid, depth, bool(shown)))
            stack.extend((c, depth + 1) for c in reversed(shown))
    return order, elements


def _render(tree: UITree) -> tuple[str, dict[int, HtmlElement]]:
    order, elements = _layout(tree)
    roots = sum(1 for _, depth, _ in order if depth == 0)
    base = 1 if roots > 1 else 0
    out: list[str] = ["<hierarchy>\n"] if base else []
    closers: list[tuple[int, str]] = []  # (depth, closing line) of open parents
    for nid, depth, has_children in order:
        while closers and closers[-1][0] >= depth:
            out.append(closers.pop()[1])
        el = elements[nid]
        node = tree.node(nid)
        indent = "  " * (depth + base)
        start = f"{indent}<{el.tag} id='{nid}'"
        rid = node.resource_name if node.resource_id else ""
        if rid:
            start += f" resource_id='{_esc(rid)}'"
        if el.described and node.content_desc:
            start += f" alt='{_esc(node.content_desc)}'"
        if el.status:
            start += f" status='{el.status}'"
        start += ">" + _esc(el.content)
        if has_children:
            out.append(start + "\n")
            closers.append((depth, f"{indent}</{el.tag}>\n"))
        else:
            out.append(f"{start}</{el.tag}>\n")
    while closers:
        out.append(closers.pop()[1])
    if base:
        out.append("</hierarchy>\n")
    return "".join(out), {nid: elements[nid] for nid, _, _ in order}


def render_html(tree: UITree) -> str:
    """The screen in AutoDroid-V2's HTML form (the ``State`` string of upstream traces)."""
    return _render(tree)[0]


@dataclass(frozen=True)
class HtmlView:
    """A rendered screen that XPaths can be run on, with hits mapped back to nodes."""

    tree: UITree
    html: str
    #: the rendered elements by node id (only nodes that appear in the HTML)
    elements: Mapping[int, HtmlElement]
    root: etree._Element = field(repr=False, compare=False)
    _by_id: Mapping[int, etree._Element] = field(repr=False, compare=False)

    @classmethod
    def of(cls, tree: UITree) -> HtmlView:
        html, elements = _render(tree)
        if not html:
            root = etree.Element("hierarchy")
        else:
            root = etree.fromstring(html, etree.XMLParser(huge_tree=True, resolve_entities=False))
        by_id = {int(el.get("id")): el for el in root.iter() if el.get("id") is not None}
        return cls(tree, html, MappingProxyType(elements), root, MappingProxyType(by_id))

    def tag(self, node_id: int) -> str | None:
        """The HTML tag of a node (``button``, ``input``, ``LinearLayout``...), None if not shown."""
        el = self.elements.get(node_id)
        return el.tag if el else None

    def element(self, node_id: int) -> etree._Element | None:
        return self._by_id.get(node_id)

    def node_of(self, element: etree._Element) -> UINode:
        return self.tree.node(int(element.get("id")))

    def xpath(self, expr: str, *, within: int | None = None) -> list[UINode]:
        """Nodes selected by an upstream XPath, in document order, without duplicates.

        ``within`` evaluates it on the subtree of that node as if it were the whole page,
        which is how an element's child is looked up (``$list.tap($child)``). Attribute and
        text results select the element that holds them. Raises ``DocumentError`` for an
        XPath that does not parse or does not select nodes.
        """
        if within is None:
            context = self.root
        else:
            el = self._by_id.get(within)
            if el is None:
                return []
            context = copy.deepcopy(el)
        try:
            result = context.xpath(expr)
        except etree.XPathError as exc:
            raise DocumentError(f"invalid XPath {expr!r}: {exc}") from exc
        if not isinstance(result, list):
            raise DocumentError(f"XPath {expr!r} gives a {type(result).__name__}, not elements")
        out: list[UINode] = []
        seen: set[int] = set()
        for item in result:
            el = item if isinstance(item, etree._Element) else getattr(item, "getparent", lambda: None)()
            nid = el.get("id") if el is not None else None
            if nid is None:
                continue
            node_id = int(nid)
            if node_id not in seen:
                seen.add(node_id)
                out.append(self.tree.node(node_id))
        return out

    def first(self, expr: str, *, within: int | None = None) -> UINode | None:
        hits = self.xpath(expr, within=within)
        return hits[0] if hits else None


def html_view(tree: UITree) -> HtmlView:
    """Render ``tree`` and parse the result, ready for ``xpath``."""
    return HtmlView.of(tree)
