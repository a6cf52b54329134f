"""What the session knows of a list's items across dumps and swipes.

A list element's items are numbered from the top of the whole list, not of the screen: item 30
of a 44-song list exists although only ten rows are on screen. ``ListState`` keeps the item
*signatures* (an item's texts) in list order as they are discovered, the window of absolute
indexes the current dump shows, whether the end has been seen, and for each item the last dump
it was fully visible in (reads reuse that dump instead of scrolling back).

After a swipe the new visible items are *aligned* with the known ones: the offset at which the
overlapping signatures agree, nearest to where the swipe should have brought the list, so no
item is counted twice and none is skipped even when several items read the same. After any
other action the knowledge is kept as a hint: when the list is next seen its visible items are
aligned again (a dialog opened from row 30 and closed leaves the list where it was), and what
was read from older dumps is no longer trusted for reads. A list first seen is *not* assumed to
be at its top (apps restore scrolled lists; a dump does not say where a list is scrolled to):
``top_known`` says whether the first known item is the list's first, which only a swipe up that
moves nothing (or a list that cannot scroll) proves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tapir.hierarchy.model import UINode, UITree
from tapir.runtime.settle import Observation


def item_signature(tree: UITree, item: UINode) -> str:
    """The texts of an item (its own and its descendants'): how items are told apart across dumps."""
    parts = []
    nodes = [item, *tree.descendants(item.id)]
    for n in nodes:
        if n.text:
            parts.append(n.text)
        if n.content_desc:
            parts.append("~" + n.content_desc)
    if not parts:  # an item without any text: its structure is all there is
        parts = [n.resource_name or n.short_class for n in nodes]
    return "\x1f".join(parts)


Sig = str | None


def _agree(a: Sig, b: Sig) -> bool:
    return a is None or b is None or a == b


def align(known: list[Sig], visible: list[Sig], hint: int, *, minimum: int = 0, maximum: int | None = None) -> int:
    """The absolute index of ``visible[0]`` in a list whose first items are ``known``.

    Every offset in ``[minimum, maximum]`` at which the visible items agree with the known ones
    where they overlap is a candidate; the one closest to ``hint`` (where the swipe should have
    brought the list) wins. When none overlaps, the visible items are all new: ``len(known)``.
    ``None`` is a row cut off by the list's edge, whose texts are partly missing: it agrees with
    anything, and an overlap made only of such rows does not count.
    """
    best: tuple[int, int] | None = None
    found = len(known)
    top = len(known) if maximum is None else min(maximum, len(known))
    for o in range(max(minimum, 0), top + 1):
        overlap = min(len(known) - o, len(visible))
        if overlap <= 0:
            continue
        if not any(known[o + k] is not None and visible[k] is not None for k in range(overlap)):
            continue
        if all(_agree(known[o + k], visible[k]) for k in range(overlap)):
            rank = (abs(o - hint), o)
            if best is None or rank < best:
                best, found = rank, o
    return found


def new_above(known: list[Sig], visible: list[Sig]) -> int:
    """How many of ``visible`` (shown after scrolling up from the first known item) are new:
    the longest tail of ``visible`` that is a head of ``known`` is already known."""
    for p in range(len(visible)):
        tail = visible[p:]
        head = known[:len(tail)]
        if len(head) == len(tail) and all(_agree(a, b) for a, b in zip(tail, head, strict=True)) and any(
                a is not None and b is not None for a, b in zip(tail, head, strict=True)):
            return p
    return len(visible)


def scroller(tree: UITree, node: UINode) -> UINode:
    """The view that scrolls a list: the list itself, else a scrollable view inside it (the
    identifier may name a container), else the scroll view around it."""
    if node.scrollable:
        return node
    for d in tree.descendants(node.id):
        if d.scrollable and d.bounds.area:
            return d
    for a in tree.ancestors(node.id):
        if a.scrollable and a.bounds.area:
            return a
    return node


def _typical_height(items: tuple[UINode, ...] | list[UINode]) -> int:
    heights = sorted(i.bounds.height for i in items)
    return heights[len(heights) // 2] if heights else 0


def well_visible(node: UINode, items: tuple[UINode, ...] | list[UINode], area: UINode) -> bool:
    """Not cut off by the list's edges (or at least 80% of a typical item's height on screen)."""
    inside = node.bounds.y1 > area.bounds.y1 and node.bounds.y2 < area.bounds.y2
    return node.bounds.area > 0 and (inside or node.bounds.height >= 0.8 * _typical_height(items))


@dataclass(frozen=True)
class ListView:
    """A list as one dump shows it."""

    obs: Observation
    node: UINode
    #: The view swipes go to (``scroller``).
    area: UINode
    items: tuple[UINode, ...]
    #: Item signatures; None for a row cut off by the list's edge.
    sigs: tuple[Sig, ...]
    full: tuple[bool, ...]
    #: Nothing more below: the list cannot scroll, or its last item ends well above its bottom.
    ended: bool

    @classmethod
    def of(cls, obs: Observation, node: UINode, items: list[UINode]) -> ListView:
        tree = obs.tree
        area = scroller(tree, node)
        its = tuple(items)
        if not area.scrollable:
            ended = True
        elif not its:
            ended = False
        else:
            ended = its[-1].bounds.y2 < area.bounds.y2 - max(_typical_height(its) // 2, 1)
        full = tuple(well_visible(i, its, area) for i in its)
        sigs = tuple(item_signature(tree, i) if f else None for i, f in zip(its, full, strict=True))
        return cls(obs, node, area, its, sigs, full, ended)


@dataclass
class Snap:
    """An item as last seen fully: its node, the dump, and the generation of that dump."""

    node: UINode
    obs: Observation
    generation: int


@dataclass
class ListState:
    #: The session generation (bumped by every action) the window and ``at_end`` refer to.
    generation: int
    sigs: list[Sig]
    snaps: list[Snap | None]
    #: Absolute indexes [start, end) of the items in the current dump.
    window: tuple[int, int]
    at_end: bool
    #: Match queries already resolved in this generation -> absolute index.
    matches: dict[Any, int] = field(default_factory=dict)
    #: Whether item 0 is the list's first item (see the module docstring).
    top_known: bool = False

    @classmethod
    def first_sight(cls, view: ListView, generation: int) -> ListState:
        state = cls(generation, [], [], (0, 0), False)
        state.place(view, 0, generation)
        state.at_end = view.ended
        state.top_known = not view.area.scrollable
        return state

    def place(self, view: ListView, offset: int, generation: int) -> None:
        """Record the visible items as items ``offset``... of the list."""
        for k, (node, sig, full) in enumerate(zip(view.items, view.sigs, view.full, strict=True)):
            i = offset + k
            snap = Snap(node, view.obs, generation) if full else None
            if i < len(self.sigs):
                if sig is not None:
                    self.sigs[i] = sig
                old = self.snaps[i]
                if snap is not None or (old is not None and old.generation != generation):
                    self.snaps[i] = snap  # a cut-off row does not replace a full view of this generation
            else:
                self.sigs.append(sig)
                self.snaps.append(snap)
        self.window = (offset, offset + len(view.items))

    def reconcile(self, view: ListView, generation: int) -> bool:
        """The list seen again after other actions: align it with what was known. False when
        nothing overlaps (different content: the caller starts afresh)."""
        if not view.sigs or not view.area.scrollable:
            return False  # the whole list is in view: nothing older is needed
        offset = align(self.sigs, list(view.sigs), self.window[0])
        if offset >= len(self.sigs):
            return False
        self.generation = generation
        self.matches.clear()
        self.place(view, offset, generation)
        self.at_end = view.ended and offset + len(view.items) >= len(self.sigs)
        if self.at_end:
            del self.sigs[offset + len(view.items):]
            del self.snaps[offset + len(view.items):]
        return True

    def scrolled(self, view: ListView, direction: str, moved: bool, generation: int, fraction: float) -> None:
        """Account for a swipe of the list itself (``direction``: down, up, page_down, page_up)."""
        self.generation = generation
        start, end = self.window
        if not moved:
            if direction.endswith("down"):
                self.at_end = True
            elif start == 0:
                self.top_known = True
            self.place(view, start, generation)
            return
        shown = max(end - start, 1)
        step = max(1, round(shown * fraction))
        if direction.endswith("down"):
            offset = align(self.sigs, list(view.sigs), start + step, minimum=start)
            self.place(view, offset, generation)
            self.at_end = view.ended and offset + len(view.items) >= len(self.sigs)
            return
        self.at_end = False
        if start == 0:
            # items above the first one seen: the list was not at its top when first seen
            fresh = new_above(self.sigs, list(view.sigs))
            if fresh:
                self.sigs[:0] = list(view.sigs[:fresh])
                self.snaps[:0] = [None] * fresh
                self.matches = {k: v + fresh for k, v in self.matches.items()}
            offset = 0
        else:
            offset = align(self.sigs, list(view.sigs), max(start - step, 0), maximum=start)
        self.place(view, offset, generation)

    def readable(self, index: int, generation: int) -> Snap | None:
        """The item's node from a dump of this generation in which it was fully visible."""
        if 0 <= index < len(self.snaps):
            snap = self.snaps[index]
            if snap is not None and snap.generation == generation:
                return snap
        return None
