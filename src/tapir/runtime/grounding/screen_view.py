"""One screen prepared for grounding: both XPath forms of the tree and per-node facts, built lazily.

A ``ScreenView`` wraps a ``UITree`` and builds, on first use only,

* the facts of AutoDroid-V2's HTML form (``terms.html_facts``: tags, attribute values, text
  nodes, skeleton) straight from the tree, which answer nearly every ``html`` identifier;
* the HTML rendering itself (``tapir.hierarchy.html_view``), only for the ``html`` XPaths
  the index cannot answer;
* a ``uiautomator dump``-shaped lxml tree (``<hierarchy><node resource-id=... text=...>``) for
  ``uiautomator`` XPaths, with every element mapped back to its node;
* the nearest clickable / scrollable ancestor of every node, and the set of resource names.

The grounder keeps the views of the last few trees, so identifying the screen and grounding
several elements on one dump share all of this work.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from lxml import etree

from tapir.hierarchy import HtmlView, UINode, UITree, html_view
from tapir.runtime.grounding.fuzzy import LABEL_CAP, same_id
from tapir.runtime.grounding.terms import HtmlFacts, HtmlOnDemand, SkeletonPath, TermIndex, TreeTerms, html_facts

_UNKNOWN = object()


def _flag(value: bool) -> str:
    return "true" if value else "false"


def uiautomator_attributes(node: UINode) -> dict[str, str]:
    """The attributes ``uiautomator dump`` writes for a node, in its order."""
    return {
        "index": str(node.path[-1] if node.path else 0),
        "text": node.text,
        "resource-id": node.resource_id,
        "class": node.class_name,
        "package": node.package,
        "content-desc": node.content_desc,
        "checkable": _flag(node.checkable),
        "checked": _flag(node.checked),
        "clickable": _flag(node.clickable),
        "enabled": _flag(node.enabled),
        "focusable": _flag(node.focusable),
        "focused": _flag(node.focused),
        "scrollable": _flag(node.scrollable),
        "long-clickable": _flag(node.long_clickable),
        "password": _flag(node.password),
        "selected": _flag(node.selected),
        "bounds": str(node.bounds),
    }



class UiautomatorView:
    """The tree as ``uiautomator dump`` writes it, ready for XPath: the dump itself as lxml reads
    it (``UITree.document``) for a tree parsed from one, else a document written from the nodes
    (a DroidBot state, a view list)."""

    def __init__(self, tree: UITree) -> None:
        self.tree = tree
        document = tree.document
        if document is not None:
            self.root = document
            self._node_of: Mapping[etree._Element, int] = tree.document_ids
            self._element_of: Callable[[int], etree._Element | None] = tree.element_of
            return
        self.root = etree.Element("hierarchy", rotation="0")
        node_of: dict[etree._Element, int] = {}
        element: dict[int, etree._Element] = {}
        sub = etree.SubElement
        for node in tree.nodes:
            parent = element[node.parent] if node.parent is not None else self.root
            el = sub(parent, "node", uiautomator_attributes(node))
            element[node.id] = el
            node_of[el] = node.id
        self._node_of = node_of
        self._element_of = lambda nid: element.get(nid)

    def context(self, within: int | None) -> tuple[etree._Element, Mapping[etree._Element, int]] | None:
        """The element to evaluate on and the element -> node id map for its results.

        ``within`` gives a copy of that node's subtree as a document of its own, so ``//node``
        searches only inside it (how upstream evaluates a list item's child XPaths).
        """
        if within is None:
            return self.root, self._node_of
        el = self._element_of(within)
        if el is None:
            return None
        clone = copy.deepcopy(el)
        mapping = {c: self._node_of[o] for o, c in zip(el.iter(), clone.iter(), strict=True)}
        return clone, mapping


class ScreenView:
    """A tree and everything grounding derives from it.

    ``reserved`` are the short resource ids the document names: a resource id the document names
    that is absent from the screen may be found *renamed* (``renamed``), but never as another
    id the document names.
    """

    def __init__(self, tree: UITree, reserved: frozenset[str] = frozenset()) -> None:
        self.tree = tree
        self.reserved = reserved
        #: results the grounder derives from this screen (its screen match, identifier hits)
        self.memo: dict[str, Any] = {}
        self._renamed: dict[str, str | None] = {}
        self._owners: dict[int, int | None] = {}

    @cached_property
    def html(self) -> HtmlView:
        return html_view(self.tree)

    @cached_property
    def uiautomator(self) -> UiautomatorView:
        return UiautomatorView(self.tree)

    @cached_property
    def html_facts(self) -> HtmlFacts:
        """The HTML form's attribute values, text nodes, tags and skeleton, straight from the tree."""
        return html_facts(self.tree)

    @property
    def html_terms(self) -> tuple[TermIndex, dict[int, str]]:
        """Every attribute value and text node of the HTML form, indexed; and each element's tag."""
        facts = self.html_facts
        return facts.terms, facts.tags

    @property
    def skeleton(self) -> frozenset[SkeletonPath]:
        """Root-to-view (tag, resource id) paths of the HTML form (``screens.skeleton_paths``)."""
        return self.html_facts.skeleton

    @cached_property
    def tree_terms(self) -> TreeTerms:
        """The views' attribute values, indexed per attribute on first use (both dialects)."""
        return TreeTerms(self.tree)

    @cached_property
    def html_on_demand(self) -> HtmlOnDemand:
        """The HTML form's facts for single views, for answering identifiers without rendering."""
        return HtmlOnDemand(self.tree, self.tree_terms)

    @cached_property
    def resource_names(self) -> frozenset[str]:
        """Resource ids on screen, both full (``pkg:id/x``) and short (``x``)."""
        out: set[str] = set()
        for rid in self.tree_terms.index("@resource-id"):
            if rid:
                out.add(rid)
                out.add(rid.rsplit("/", 1)[-1])
        return frozenset(out)

    def renamed(self, rid: str) -> str | None:
        """The resource id on screen that is ``rid`` (absent from the screen) under another naming
        convention (``songs_list`` -> ``songsList``, ``tv_songs_list``, ``songs_list_view``:
        ``fuzzy.same_id``), when exactly one id on screen is, and it is not an id the document
        names; in the form ``rid`` has (full when it is full). Apps rename ids between versions
        that way; other renamings are left to the similarity stages."""
        if rid in self._renamed:
            return self._renamed[rid]
        package, _, short = rid.rpartition("/")
        found: set[str] = set()
        for full in self.tree_terms.index("@resource-id"):
            if not full:
                continue
            head, _, name = full.rpartition("/")
            if package and head != package:
                continue
            if name not in self.reserved and name != short and same_id(short, name):
                found.add(full if package else name)
        alias = found.pop() if len(found) == 1 else None
        self._renamed[rid] = alias
        return alias

    def _clickable_up(self, node_id: int) -> int | None:
        """Nearest clickable node, the node itself included, found walking up (each step's answer
        kept: identifying a screen asks a few nodes, the similarity stages many)."""
        known = self._owners
        by = self.tree.get
        path: list[int] = []
        nid: int | None = node_id
        found: int | None = None
        while nid is not None:
            if nid in known:
                found = known[nid]
                break
            node = by(nid)
            if node is None:
                break
            if node.clickable or node.long_clickable:
                found = nid
                break
            path.append(nid)
            nid = node.parent
        for p in path:
            known[p] = found
        if nid is not None:
            known[nid] = found
        return found

    @cached_property
    def _scrollable_owner(self) -> dict[int, int | None]:
        owner: dict[int, int | None] = {}
        for node in self.tree.nodes:
            if node.scrollable:
                owner[node.id] = node.id
            else:
                owner[node.id] = owner.get(node.parent) if node.parent is not None else None
        return owner

    @cached_property
    def _holds_checkable(self) -> frozenset[int]:
        """Nodes with a visible checkable view below them."""
        found: set[int] = set()
        by = self.tree.node
        for node in reversed(self.tree.nodes):  # children before parents
            if any(c in found or (by(c).checkable and by(c).visible) for c in node.children):
                found.add(node.id)
        return frozenset(found)

    def holds_checkable(self, node_id: int) -> bool:
        return node_id in self._holds_checkable

    @cached_property
    def _editable_below(self) -> dict[int, int]:
        """For nodes with an editable view below them: the first one (pre-order)."""
        below: dict[int, int] = {}
        for node in reversed(self.tree.nodes):  # children before parents
            for c in node.children:
                child = self.tree.node(c)
                found = c if child.editable and child.visible else below.get(c)
                if found is not None:
                    below[node.id] = found
                    break
        return below

    @cached_property
    def _subtree_text(self) -> dict[int, str]:
        """Each node's and its descendants' texts run together, as upstream's ``text()`` XPaths
        of containers have them ("Max reminder duration5 minutes"); capped in length."""
        out: dict[int, str] = {}
        for node in reversed(self.tree.nodes):
            own = node.text[:50].strip() if node.visible else ""
            text = own + "".join(out.get(c, "") for c in node.children)
            out[node.id] = text[:LABEL_CAP]
        return out

    def subtree_text(self, node_id: int) -> str:
        return self._subtree_text.get(node_id, "")

    def strings(self, node: UINode) -> tuple[str, ...]:
        """What a node shows: its text and description, and for a clickable container (a row,
        a card) the texts inside it run together."""
        own = tuple(s for s in (node.text.strip(), node.content_desc.strip()) if s)
        if node.children and (node.clickable or node.long_clickable):
            inner = self.subtree_text(node.id)
            if inner and inner not in own:
                return (*own, inner)
        return own

    def editable_below(self, node_id: int) -> int | None:
        return self._editable_below.get(node_id)

    def clickable_owner(self, node_id: int) -> int | None:
        found = self._owners.get(node_id, _UNKNOWN)
        return self._clickable_up(node_id) if found is _UNKNOWN else found  # type: ignore[return-value]

    def scrollable_owner(self, node_id: int) -> int | None:
        return self._scrollable_owner.get(node_id)
