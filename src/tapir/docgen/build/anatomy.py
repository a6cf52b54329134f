"""What one hierarchy shows: the nodes that count, lists and their items, element keys, the
layout and what the screen is for.

    a = Anatomy.of(tree, activity="org.tapir.music.activities.MainActivity")
    a.layout        # layout key: classes and resource ids, content removed, repeated siblings collapsed
    a.function      # what the screen is for: window kind, dialog title, selected tabs, fixed labels
    a.role(node_id) # Role('single', key) / Role('list', key) / Role('item', ...) / Role('child', ...)

Element keys name the same abstract element in every hierarchy of a screen: a node's resource id
and class under the resource ids of its ancestors, and, for a node without an id, its content
description, the label of an interactive node, or its position among like siblings. Nodes inside
the items of a list are keyed relative to their item, so every row's title is one child element.

Lists are collections (``RecyclerView``, ``ListView``, ``GridView``, ``RadioGroup``...), scrolling
containers whose children are alike, and siblings that repeat one resource id; their children are
the items. Both exploration (``tapir.runtime.explore``, to tell screens apart while it runs) and
document building use this module, so they agree on what a screen is.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from tapir.hierarchy import UINode, UITree

BAR_IDS = frozenset({"android:id/navigationBarBackground", "android:id/statusBarBackground"})
COLLECTIONS = ("RecyclerView", "ListView", "GridView", "RadioGroup", "AbsListView", "ExpandableListView")
#: Resource names of dialog titles.
TITLE_IDS = frozenset({"alertTitle", "dialog_title", "dialog_title_textview", "title_template"})
#: Static option lists longer than this are content, not a fixed set of choices.
MAX_OPTIONS = 12
#: Labels longer than this are content, not labels.
MAX_LABEL = 40
_DIGIT = re.compile(r"\d")


def is_collection(node: UINode) -> bool:
    short = node.short_class
    return any(c in short for c in COLLECTIONS)


def interactive(node: UINode) -> bool:
    return node.clickable or node.long_clickable or node.checkable or node.editable or node.scrollable


def looks_static(label: str) -> bool:
    """A label that can identify a screen or an element: short, no digits (times, counts, dates)."""
    return bool(label) and len(label) <= MAX_LABEL and not _DIGIT.search(label) and "\n" not in label


@dataclass(frozen=True)
class Role:
    """What a node is in its screen's document: see ``Anatomy.role``."""

    #: ``single`` (an element of its own), ``list`` (a list container), ``item`` (a list item as a
    #: whole) or ``child`` (a child element inside an item).
    kind: str
    #: The element key, or the list's key for ``item``/``child``.
    key: str
    child: str = ""
    #: The item's node id (``item``/``child``).
    item: int = -1


@dataclass
class ListInfo:
    container: int
    items: tuple[int, ...]
    key: str
    scrollable: bool


@dataclass
class Anatomy:
    tree: UITree
    activity: str = ""
    package: str = ""
    kept: dict[int, tuple[int, ...]] = field(default_factory=dict)
    lists: dict[int, ListInfo] = field(default_factory=dict)
    #: node id -> (list container, item node) for every node inside an item (the item included).
    in_item: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: element key -> node id, and back, for singles and list containers (keys are ``L:`` + key).
    by_key: dict[str, int] = field(default_factory=dict)
    key_of: dict[int, str] = field(default_factory=dict)
    #: (list key, child key) per node inside items: child nodes, and item roots (child key "").
    child_key: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: a clickable container that only wraps one checkable: container -> the checkable.
    alias: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: UITree, activity: str = "", package: str = "") -> Anatomy:
        a = cls(tree, activity or tree.activity, package or tree.package)
        a._keep()
        a._find_lists()
        a._assign_keys()
        return a

    # -- construction ---------------------------------------------------------------------------

    def _keep(self) -> None:
        t = self.tree
        width = t.width or (t.root.bounds.x2 if t.root else 0)
        height = t.height or (t.root.bounds.y2 if t.root else 0)

        def ok(n: UINode) -> bool:
            b = n.bounds
            on_screen = (not width or (b.x1 < width and b.y1 < height)) and b.x2 > 0 and b.y2 > 0
            return n.visible and b.area > 0 and on_screen and n.resource_id not in BAR_IDS

        for root in t.roots:
            stack = [root]
            while stack:
                nid = stack.pop()
                node = t.node(nid)
                if not ok(node):
                    continue
                kids = tuple(c for c in node.children if ok(t.node(c)))
                self.kept[nid] = kids
                stack.extend(reversed(kids))

    @cached_property
    def _shape(self) -> dict[int, str]:
        """Per kept node: class, id and the set of its children's shapes (content-free)."""
        shape: dict[int, str] = {}
        for nid in reversed(self.order):
            n = self.tree.node(nid)
            inner = ",".join(sorted({shape[c] for c in self.kept[nid]}))
            shape[nid] = hashlib.sha1(f"{n.short_class}#{n.resource_name}({inner})".encode()).hexdigest()[:16]
        return shape

    @cached_property
    def order(self) -> list[int]:
        """Kept node ids in pre-order."""
        return [n.id for n in self.tree.nodes if n.id in self.kept]

    def _find_lists(self) -> None:
        t = self.tree
        shape = self._shape
        for nid in self.order:
            if nid in self.in_item:
                continue  # a list inside an item belongs to its item
            node = t.node(nid)
            kids = self.kept[nid]
            items: tuple[int, ...] = ()
            if is_collection(node) and kids:
                items = kids
            elif node.scrollable and kids:
                inner = nid
                while len(self.kept[inner]) == 1 and not interactive(t.node(self.kept[inner][0])):
                    inner = self.kept[inner][0]
                candidates = self.kept[inner]
                if len(candidates) >= 2:
                    common = max({shape[c] for c in candidates}, key=lambda s: sum(shape[c] == s for c in candidates))
                    alike = [c for c in candidates if shape[c] == common]
                    if len(alike) >= 2 and len(alike) * 2 >= len(candidates):
                        items = tuple(alike)
            elif len(kids) >= 2:
                by_id: dict[tuple[str, str], list[int]] = {}
                for c in kids:
                    child = t.node(c)
                    if child.resource_id:
                        by_id.setdefault((child.resource_id, shape[c]), []).append(c)
                # repeated ids make a list, except a tab bar: its tabs are elements of their own
                repeated = [ids for ids in by_id.values() if len(ids) >= 2 and not self.is_tab(ids[0])]
                if repeated:
                    longest: list[int] = max(repeated, key=len)
                    items = tuple(longest)
            if not items:
                continue
            self.lists[nid] = ListInfo(nid, items, "", node.scrollable)
            for item in items:
                stack = [item]
                while stack:
                    inside = stack.pop()
                    self.in_item[inside] = (nid, item)
                    stack.extend(self.kept[inside])

    def _disambiguator(self, node: UINode, siblings: tuple[int, ...]) -> str:
        if node.resource_id:
            twins = [c for c in siblings if c != node.id and self.tree.node(c).resource_id == node.resource_id]
            label = self.label(node.id) if twins else ""
            # siblings sharing an id (the tabs of a tab bar) are told apart by their labels
            return "t=" + label if label and looks_static(label) else ""
        if node.content_desc and looks_static(node.content_desc):
            return "d=" + node.content_desc
        if node.text and interactive(node) and not node.editable and looks_static(node.text):
            # (a field's text is what was typed into it, or its hint: never its name)
            return "t=" + node.text
        like = [c for c in siblings if not self.tree.node(c).resource_id
                and self.tree.node(c).class_name == node.class_name]
        return f"i={like.index(node.id)}" if node.id in like else "i=0"

    def _relative_key(self, nid: int, top: int | None) -> str:
        """Resource ids of ancestors below ``top`` (exclusive), then class, id and disambiguator."""
        t = self.tree
        node = t.node(nid)
        chain: list[str] = []
        for anc in t.ancestors(nid):
            if anc.id == top:
                break
            if anc.resource_id:
                chain.append(anc.resource_name)
        parent = node.parent
        siblings = self.kept.get(parent, ()) if parent is not None else tuple(r for r in t.roots if r in self.kept)
        dis = self._disambiguator(node, siblings)
        own = f"{node.short_class}#{node.resource_name}" + (f"@{dis}" if dis else "")
        return "/".join(reversed(chain)) + ">" + own

    def _assign_keys(self) -> None:
        t = self.tree
        counts: dict[str, int] = {}

        def unique(key: str) -> str:
            n = counts.get(key, 0) + 1
            counts[key] = n
            return key if n == 1 else f"{key}#{n}"

        for nid in self.order:
            node = t.node(nid)
            if nid in self.lists:
                key = unique("L:" + self._relative_key(nid, None))
                self.lists[nid].key = key
                self.key_of[nid] = key
                self.by_key[key] = nid
                continue
            owner = self.in_item.get(nid)
            if owner is not None:
                container, item = owner
                lkey = self.key_of[container]
                if nid == item:
                    self.child_key[nid] = (lkey, "")
                elif interactive(node) or node.text or node.content_desc:
                    self.child_key[nid] = (lkey, self._relative_key(nid, item))
                continue
            if interactive(node) or node.text:
                key = unique(self._relative_key(nid, None))
                self.key_of[nid] = key
                self.by_key[key] = nid
        # a clickable row that only wraps a switch or checkbox is that switch
        for nid, key in list(self.key_of.items()):
            node = t.node(nid)
            if key.startswith("L:") or not (node.clickable and not node.checkable):
                continue
            inside = [d for d in t.descendants(nid) if d.id in self.kept and interactive(d)]
            if len(inside) == 1 and inside[0].checkable and inside[0].id in self.key_of:
                self.alias[nid] = inside[0].id

    # -- queries --------------------------------------------------------------------------------

    def role(self, node_id: int) -> Role | None:
        """What acting on ``node_id`` acts on: the nearest keyed, interactive node at or above it."""
        t = self.tree
        node: UINode | None = t.get(node_id)
        first: UINode | None = None
        while node is not None:
            nid = node.id
            if nid in self.kept:
                owner = self.in_item.get(nid)
                if owner is not None:
                    container, item = owner
                    ck = self.child_key.get(nid)
                    if ck is not None and (nid == item or interactive(node)):
                        lkey = ck[0]
                        return Role("item", lkey, "", item) if nid == item else Role("child", lkey, ck[1], item)
                elif nid in self.key_of and (interactive(node) or first is None):
                    if nid in self.lists:
                        return Role("list", self.key_of[nid])
                    if interactive(node):
                        target = self.alias.get(nid, nid)
                        return Role("single", self.key_of[target])
                    first = node
            node = t.parent(nid) if nid in t else None
        return Role("single", self.key_of[first.id]) if first is not None else None

    @cached_property
    def empty_lists(self) -> frozenset[str]:
        """The keys lists would have here that show no item (an empty folder's RecyclerView): no
        element, as nothing is in them, but the list's view all the same."""
        out: set[str] = set()
        for nid in self.order:
            node = self.tree.node(nid)
            if nid in self.lists or nid in self.in_item or self.kept[nid]:
                continue
            if not (is_collection(node) or node.scrollable):
                continue
            out.add("L:" + self._relative_key(nid, None))
        return frozenset(out)

    def keys_around(self, node_id: int) -> list[str]:
        """The element keys the node and the views around it (nearest first) have, or would have
        were they elements here: a view interactive only in other hierarchies of its screen (the
        selected tab, not clickable while selected) has there the key it would have here."""
        t = self.tree
        around = [n for n in (t.node(node_id), *t.ancestors(node_id)) if n.id in self.kept and n.id not in self.in_item]
        return [self.key_of.get(n.id) or self._relative_key(n.id, None) for n in around]

    def label(self, node_id: int) -> str:
        """Text or description of the node, else the first text or description below it."""
        node = self.tree.node(node_id)
        if node.text.strip():
            return node.text.strip()
        if node.content_desc.strip():
            return node.content_desc.strip()
        for d in self.tree.descendants(node_id):
            if d.id in self.kept and (d.text.strip() or d.content_desc.strip()):
                return (d.text or d.content_desc).strip()
        return ""

    @cached_property
    def layout_paths(self) -> frozenset[str]:
        """Every root-to-node path of classes and resource ids: content and repetition removed."""
        t = self.tree
        paths: dict[int, str] = {}
        for nid in self.order:
            n = t.node(nid)
            parent = paths.get(n.parent, "") if n.parent is not None else ""
            paths[nid] = f"{parent}/{n.short_class}#{n.resource_name}"
        return frozenset(paths.values())

    @cached_property
    def layout(self) -> str:
        joined = "\n".join(sorted(self.layout_paths))
        return hashlib.sha1(joined.encode()).hexdigest()[:16]

    @cached_property
    def window(self) -> str:
        """``full``, ``dialog`` (has a title or buttons) or ``menu`` (a list in a small window)."""
        roots = [r for r in self.tree.roots if r in self.kept]
        if not roots:
            return "full"
        root = self.tree.node(roots[0])
        width = self.tree.width or root.bounds.x2
        height = self.tree.height or root.bounds.y2
        b = root.bounds
        # a full screen spans the width; dialogs and popups are inset from the sides
        if width and height and b.x1 <= 0 and b.x2 >= width and b.height >= 0.6 * height:
            return "full"
        if self.dialog_title is None and self.lists and not any(
            self.tree.node(n).resource_name.startswith("button") for n in self.order
        ):
            return "menu"
        return "dialog"

    @cached_property
    def dialog_title(self) -> str | None:
        for nid in self.order:
            n = self.tree.node(nid)
            if n.resource_name in TITLE_IDS and n.text.strip():
                return n.text.strip()
        return None

    @cached_property
    def toolbar_title(self) -> str | None:
        """The first text without an id directly in a toolbar (the screen's title on most apps)."""
        t = self.tree
        for nid in self.order:
            n = t.node(nid)
            if "toolbar" in n.resource_name.lower() or n.short_class.endswith("Toolbar"):
                for c in self.kept[nid]:
                    child = t.node(c)
                    if child.text.strip() and not child.resource_id and not interactive(child):
                        return child.text.strip()
        return None

    def is_tab(self, node_id: int) -> bool:
        """A tab: its id or class says so, or it sits in a tab bar or bottom navigation."""
        t = self.tree
        for n in (t.node(node_id), t.parent(node_id)):
            if n is None:
                continue
            words = (n.resource_name + " " + n.short_class).lower()
            if "tab" in words or "navigation" in words:
                return True
        return False

    @cached_property
    def selected(self) -> tuple[str, ...]:
        """Selected tabs (outside lists): their id, or their label where tabs share one id (a tab
        bar of alike holders). Other selected views (a toggled shuffle button) are state, not
        function."""
        t = self.tree
        kept = set(self.order)
        ids = Counter(t.node(nid).resource_name for nid in self.order if self.is_tab(nid))
        out = []
        for nid in self.order:
            n = t.node(nid)
            if not n.selected or not self.is_tab(nid):
                continue
            # the views inside a selected tab are selected with it; a selected wrapper that is
            # no tab itself (a tab bar's row around the tab) does not hide the tab inside it
            p = t.get(n.parent) if n.parent is not None else None
            if p is not None and p.selected and p.id in kept and self.is_tab(p.id):
                continue
            label = self.label(nid)
            shared = not n.resource_name or ids[n.resource_name] > 1
            out.append(label if shared and label and looks_static(label) else n.resource_name or label)
        return tuple(out)

    def option_labels(self, info: ListInfo) -> list[str]:
        return [self.label(i) for i in info.items]

    @cached_property
    def function_parts(self) -> tuple[str, ...]:
        """What the screen is for, as content-light facts: see ``function``."""
        t = self.tree
        parts = [f"window:{self.window}"]
        if self.dialog_title and self.window != "full":
            parts.append("title:" + self.dialog_title)
        parts += [f"selected:{s}" for s in self.selected if s]
        for nid in self.order:
            n = t.node(nid)
            if nid in self.in_item or n.resource_id or not interactive(n) or nid in self.lists:
                continue
            label = n.content_desc or n.text
            if looks_static(label):
                parts.append("label:" + label)
        # the options of a menu, or of a dialog without a title, are what it is for; lists in full
        # screens and titled dialogs hold content (songs, playlists) that changes
        fixed_lists = self.window == "menu" or (self.window == "dialog" and not self.dialog_title)
        for info in self.lists.values():
            if not fixed_lists or info.scrollable or len(info.items) > MAX_OPTIONS:
                continue
            labels = self.option_labels(info)
            if labels and all(looks_static(x) for x in labels):
                parts.append("options:" + "|".join(sorted(labels)))
        return tuple(sorted(set(parts)))

    @cached_property
    def function(self) -> str:
        return hashlib.sha1("\n".join(self.function_parts).encode()).hexdigest()[:16]

    @cached_property
    def state_key(self) -> str:
        """Activity (of full screens), layout and function: what exploration counts as one screen."""
        activity = self.activity if self.window == "full" else ""
        return f"{activity}:{self.layout}:{self.function}"
