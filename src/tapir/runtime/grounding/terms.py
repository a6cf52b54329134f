"""The AutoDroid-V2 HTML form's searchable facts, built straight from the tree.

Nearly every identifier of an upstream document is ``//TAG[@attr='v' and text()='w']``, and
screen identification compares structure skeletons; both only need, per shown view, its HTML
tag, attributes and text nodes, and the root-to-view tag paths. ``html_facts(tree)`` computes
exactly those from the same layout decision the renderer uses (``hierarchy.html``), without
building the HTML string and parsing it back with lxml, which is most of the cost of a
rendering. The full ``HtmlView`` is still built, lazily, for the XPaths the index cannot answer.

    facts = html_facts(tree)
    facts.terms[("@resource_id", "sort")]     # ids of the views with that attribute value
    facts.tags[12]                             # 'button'
    facts.skeleton                             # frozenset of ((tag, resource_id), ...) paths

"Exactly" includes what an XML parser does to the rendered text: characters XML forbids are
dropped, line ends become ``\\n``, and in attribute values every line end and tab becomes a space
(``tests/test_grounding_terms.py`` checks the index against the rendered-and-parsed form on every
recorded screen).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from operator import attrgetter

from tapir.hierarchy.html import (  # the renderer's own rules, shared on purpose
    BAR_RESOURCE_IDS,
    CONTENT_LIMIT,
    _layout,
    _tag_name,
)
from tapir.hierarchy.model import UINode, UITree

#: (``@attribute`` or ``text()``, value) -> ids of the elements that have it, in document order.
TermIndex = dict[tuple[str, str], list[int]]
#: A root-to-element path of (lower-cased tag, resource id) pairs.
SkeletonPath = tuple[tuple[str, str], ...]

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_LINE_END = re.compile(r"\r\n?")
_ATTR_SPACE = re.compile(r"\r\n|[\r\n\t]")


def text_value(raw: str) -> str:
    """A text node as an XML parser reads the rendered text back."""
    if raw.isprintable():
        return raw  # (no control character, line end or surrogate: nearly every label)
    text = _XML_INVALID.sub("", raw)
    return _LINE_END.sub("\n", text) if "\r" in text else text


def attribute_value(raw: str) -> str:
    """An attribute as an XML parser reads it back (line ends and tabs normalised to spaces)."""
    if raw.isprintable():
        return raw
    text = _XML_INVALID.sub("", raw)
    return _ATTR_SPACE.sub(" ", text) if ("\n" in text or "\r" in text or "\t" in text) else text


@dataclass(frozen=True)
class HtmlFacts:
    """What the HTML form says about each shown view (see the module docstring)."""

    terms: TermIndex
    #: node id -> HTML tag, for the views the HTML shows
    tags: dict[int, str]
    skeleton: frozenset[SkeletonPath]


def html_facts(tree: UITree) -> HtmlFacts:
    order, elements = _layout(tree)
    roots = sum(1 for _, depth, _ in order if depth == 0)
    base = 1 if roots > 1 else 0
    terms: TermIndex = {}
    tags: dict[int, str] = {}
    skeleton: set[SkeletonPath] = set()
    prefix: SkeletonPath = (("hierarchy", ""),) if base else ()
    if base:
        skeleton.add(prefix)
    # open ancestors: (depth, skeleton path)
    stack: list[tuple[int, SkeletonPath]] = []
    # shown children per element, to know which text nodes (tails) it holds
    shown_children: dict[int, int] = {}
    parents: list[int | None] = []
    open_ids: list[int] = []
    for nid, depth, _ in order:
        while stack and stack[-1][0] >= depth:
            stack.pop()
            open_ids.pop()
        parent = open_ids[-1] if open_ids else None
        parents.append(parent)
        if parent is not None:
            shown_children[parent] = shown_children.get(parent, 0) + 1
        el = elements[nid]
        node = tree.node(nid)
        rid = attribute_value(node.resource_name) if node.resource_id else ""
        path = (*(stack[-1][1] if stack else prefix), (el.tag.lower(), rid))
        skeleton.add(path)
        stack.append((depth, path))
        open_ids.append(nid)

    def add(key: str, value: str, nid: int) -> None:
        found = terms.get((key, value))
        if found is None:
            terms[(key, value)] = [nid]
        else:
            found.append(nid)

    for nid, depth, has_children in order:
        el = elements[nid]
        node = tree.node(nid)
        tags[nid] = el.tag
        add("@id", str(nid), nid)
        if node.resource_id:
            rid = attribute_value(node.resource_name)
            if rid:
                add("@resource_id", rid, nid)
        if el.described and node.content_desc:
            add("@alt", attribute_value(node.content_desc), nid)
        if el.status:
            add("@status", el.status, nid)
        content = text_value(el.content)
        if not has_children:
            if content:
                add("text()", content, nid)
            continue
        # the text after the start tag runs to the first child's indentation; each child's tail
        # to the next child's indentation, the last one's to this element's closing tag
        inner = "\n" + "  " * (depth + 1 + base)
        add("text()", content + inner, nid)
        if shown_children.get(nid, 0) > 1:
            add("text()", inner, nid)
        add("text()", "\n" + "  " * (depth + base), nid)
    return HtmlFacts(terms, tags, frozenset(skeleton))


# ---------------------------------------------------------------------------------------------
# Answering identifiers from the tree, one candidate at a time

#: uiautomator attribute name -> the ``UINode`` field it shows
UIA_FIELDS = {"@resource-id": "resource_id", "@text": "text", "@content-desc": "content_desc", "@class": "class_name"}
_DUMP_NAMES = {"@resource-id": "resource-id", "@text": "text", "@content-desc": "content-desc", "@class": "class"}
_BASE = ("@resource-id", "@text", "@content-desc")


class TreeTerms:
    """The tree's attribute values, indexed per attribute on first use.

    ``ids("@resource-id", "org.x:id/title")`` are the views with that full resource id, in
    document order. Besides the uiautomator attributes (``UIA_FIELDS``) it indexes what the HTML
    form shows: ``html-rid`` (the short resource id), ``html-alt`` (the description) and
    ``html-text`` (the text cut to the HTML's 50 characters), as an XML parser reads them.
    """

    def __init__(self, tree: UITree) -> None:
        self.tree = tree
        self._by: dict[str, dict[str, list[int]]] = {}
        self._order: dict[int, int] | None = None

    def position(self, node_id: int) -> int:
        """Where the view comes in document order (to merge index entries in order)."""
        if self._order is None:
            self._order = {n.id: i for i, n in enumerate(self.tree.nodes)}
        return self._order[node_id]

    def index(self, attribute: str) -> dict[str, list[int]]:
        """Values -> ids for one attribute; empty values are left out (``ids`` finds them)."""
        found = self._by.get(attribute)
        if found is None:
            found = self._by[attribute] = self._build(attribute)
        return found

    def ids(self, attribute: str, value: str) -> list[int]:
        index = self.index(attribute)
        found = index.get(value)
        if found is None and not value and attribute in UIA_FIELDS:
            # views without the attribute are not indexed (most of them): found when asked
            field = attrgetter(UIA_FIELDS[attribute])
            found = index[""] = [n.id for n in self.tree.nodes if not field(n)]
        return found or []

    def _build(self, attribute: str) -> dict[str, list[int]]:
        if attribute in _BASE:
            # the three a screen is identified by, in one pass over the views
            for name, built in zip(_BASE, self.tree.values_index(*(_DUMP_NAMES[n] for n in _BASE)), strict=True):
                self._by[name] = built
            return self._by[attribute]
        if attribute in UIA_FIELDS:
            return self.tree.values_index(_DUMP_NAMES[attribute])[0]
        # the HTML form's values, worked out once per distinct value, not per view
        if attribute == "html-rid":
            source, key = self.index("@resource-id"), lambda rid: attribute_value(rid.rsplit("/", 1)[-1])
        elif attribute == "html-alt":
            source, key = self.index("@content-desc"), attribute_value
        elif attribute == "html-text":
            source, key = self.index("@text"), lambda text: text_value(text[:CONTENT_LIMIT])
        else:
            raise KeyError(attribute)
        out: dict[str, list[int]] = {}
        for value, ids in source.items():
            if not value:
                continue
            k = key(value)
            if k in out:  # two values that read the same: merged in document order
                out[k] = sorted({*out[k], *ids}, key=self.position)
            else:
                out[k] = ids
        return out


#: HTML terms answered from a ``TreeTerms`` index, and the index that proposes candidates.
_HTML_INDEXED = {"@resource_id": "html-rid", "@alt": "html-alt", "text()": "html-text"}
_INDENT_TAIL = re.compile(r"\n *$")


class HtmlOnDemand:
    """The HTML form's facts for single views, worked out from the tree when asked.

    Evaluating ``//TAG[@resource_id='x' and text()='y']`` takes the views the tree index proposes
    for the most selective term and checks each: shown in the HTML (kept, under kept views whose
    children are not pruned), its tag, attributes and text nodes, by the renderer's rules
    (``tapir.hierarchy.html``, deliberately restated per view here; the tests compare the
    answers with the rendered form on every recorded screen). A screen costs a few ancestor walks
    per identifier instead of a rendering.
    """

    def __init__(self, tree: UITree, terms: TreeTerms) -> None:
        self.tree = tree
        self.terms = terms
        self._hdl: dict[int, bool] = {}
        self._kids: dict[int, list[UINode]] = {}
        self._shown: dict[int, bool] = {}
        self._kept: dict[int, bool] = {}
        self._flags: dict[int, tuple[bool, bool]] = {}
        self._base: int | None = None

    # -- the renderer's rules, per view ------------------------------------------------------

    def kept(self, node: UINode) -> bool:
        found = self._kept.get(node.id)
        if found is None:
            found = self._kept[node.id] = node.visible and node.resource_id not in BAR_RESOURCE_IDS
        return found

    @staticmethod
    def described(node: UINode) -> bool:
        return bool(node.text or node.content_desc or node.scrollable)

    def kept_children(self, node: UINode) -> list[UINode]:
        found = self._kids.get(node.id)
        if found is None:
            by = self.tree.node
            found = self._kids[node.id] = [c for c in (by(i) for i in node.children) if self.kept(c)]
        return found

    def _contributes(self, node: UINode) -> bool:
        """Whether ``node`` makes its parent show its children (it is, or holds, a described leaf)."""
        if self._hdl.get(node.id):
            return True  # a described leaf below: it has kept children, and holds one
        return self.has_described_leaf(node) if self.kept_children(node) else self.described(node)

    def has_described_leaf(self, node: UINode) -> bool:
        """Whether a described view with no kept children lies below (the renderer keeps the
        children of such views only); a depth-first search that stops at the first one."""
        found = self._hdl.get(node.id)
        if found is None:
            found = False
            stack = list(reversed(self.kept_children(node)))
            while stack:
                n = stack.pop()
                known = self._hdl.get(n.id)
                kids = self.kept_children(n)
                if known is not None and kids:
                    if known:
                        found = True
                        break
                    continue
                if not kids:
                    if self.described(n):
                        found = True
                        break
                    continue
                stack.extend(reversed(kids))
            self._hdl[node.id] = found
        return found

    def shown(self, node: UINode) -> bool:
        """Whether the view is an element of the HTML form."""
        found = self._shown.get(node.id)
        if found is not None:
            return found
        shown, by, kept = self._shown, self.tree.node, self.kept
        chain = [node]  # up to the first ancestor already known (or the root)
        while chain[-1].parent is not None and chain[-1].parent not in shown:
            chain.append(by(chain[-1].parent))
        # a kept view that is (or holds) a described leaf makes every kept ancestor show its children
        for child, parent in zip(chain, chain[1:], strict=False):
            if not (kept(child) and self._contributes(child)):
                break
            self._hdl[parent.id] = True
        for n in reversed(chain):
            if not kept(n):
                result = False
            elif n.parent is None:
                result = True
            else:
                result = shown[n.parent] and self.has_described_leaf(by(n.parent))
            shown[n.id] = result
        return shown[node.id]

    def leaf(self, node: UINode) -> bool:
        """Shown without children (none kept, or all pruned)."""
        return not self.kept_children(node) or not self.has_described_leaf(node)

    def tag(self, node: UINode) -> str:
        if self.described(node):
            if node.editable:
                return "input"
            checkable, clickable = self._inherited(node)
            if checkable:
                return "checkbox"
            if clickable:
                return "button"
            return "scrollbar" if node.scrollable else "p"
        return _tag_name(node.short_class) if node.class_name else "div"

    def _inherited(self, node: UINode) -> tuple[bool, bool]:
        """Whether the view or an ancestor is checkable, and clickable; one walk up for both,
        each answer on the way kept."""
        known = self._flags
        path: list[UINode] = []
        n: UINode | None = node
        above = (False, False)
        by = self.tree.node
        while n is not None:
            memo = known.get(n.id)
            if memo is not None:
                above = memo
                break
            path.append(n)
            n = None if n.parent is None else by(n.parent)
        checkable, clickable = above
        for v in reversed(path):  # from the top down
            checkable = checkable or v.attribute("checkable") == "true"
            clickable = clickable or v.attribute("clickable") == "true"
            known[v.id] = (checkable, clickable)
        return known[node.id]

    def texts(self, node: UINode) -> list[str]:
        """The element's text nodes as an XML parser reads them (its own and its children's tails)."""
        content = text_value(node.text[:CONTENT_LIMIT]) if self.described(node) else ""
        if self.leaf(node):
            return [content] if content else []
        depth = len(node.path) + self.base
        inner = "\n" + "  " * (depth + 1)
        out = [content + inner, "\n" + "  " * depth]
        if len(self.kept_children(node)) > 1:
            out.append(inner)
        return out

    @property
    def base(self) -> int:
        """1 when the HTML wraps several roots in ``<hierarchy>`` (indentation starts one deeper)."""
        if self._base is None:
            self._base = 1 if sum(1 for r in self.tree.roots if self.kept(self.tree.node(r))) > 1 else 0
        return self._base

    def has(self, node: UINode, key: str, value: str) -> bool:
        """Whether the view's HTML element has the attribute value or text node."""
        if key == "@resource_id":
            return bool(node.resource_id) and attribute_value(node.resource_name) == value
        if key == "@alt":
            return bool(node.content_desc) and attribute_value(node.content_desc) == value
        if key == "text()":
            return value in self.texts(node)
        if key == "@id":
            return str(node.id) == value
        if key == "@status":
            return self.described(node) and (node.checked or node.selected) and value == "selected"
        return False

    # -- queries ---------------------------------------------------------------------------------

    def query(self, tag: str, terms: tuple[tuple[str, str], ...], limit: int | None = None) -> list[int] | None:
        """The ids ``//TAG[terms]`` selects on the HTML form, in document order (the first
        ``limit`` of them); None when no term can propose candidates (the caller uses the full
        index)."""
        lists: list[list[int]] = []
        for k, v in terms:
            if k == "text()":
                # a container's text node is its content followed by the next line's indentation
                content = _INDENT_TAIL.sub("", v)
                if not content:
                    continue  # whitespace between tags: no view's text proposes it
                found = self.terms.ids("html-text", v)
                if content != v:
                    found = sorted({*found, *self.terms.ids("html-text", content)}, key=self.terms.position)
                lists.append(found)
            elif k in _HTML_INDEXED:
                lists.append(self.terms.ids(_HTML_INDEXED[k], v))
        ids_ = [int(v) for k, v in terms if k == "@id" and v.isdigit()]
        if ids_:
            lists.append([i for i in ids_[:1] if i in self.tree])
        if not lists:
            return None
        candidates = min(lists, key=len)
        out: list[int] = []
        tree = self.tree
        for nid in candidates:
            node = tree.node(nid)
            if not self.shown(node):
                continue
            if tag != "*" and self.tag(node) != tag:
                continue
            if all(self.has(node, k, v) for k, v in terms):
                out.append(nid)
                if limit is not None and len(out) >= limit:
                    break
        return out
