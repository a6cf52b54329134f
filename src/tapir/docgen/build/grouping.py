"""Functionality-aware grouping of recorded hierarchies into screens (AutoDroid-V2, 3.1.1).

1. **Layout**: hierarchies with the same activity and the same layout (classes and resource ids,
   content removed, repeated siblings collapsed: ``Anatomy.layout``) form a group.
2. **Split by function**: a group is split by what its screens are for (``Anatomy.function_parts``:
   window kind, dialog title, selected tab, fixed labels of controls without ids, the options of
   small fixed lists), so look-alike dialogs with different options are different screens. A dialog
   title that only repeats the label of what was tapped to open it ("Road trip" opening a dialog
   titled "Road trip") is content, not function, and is left out.
3. **Merge by function**: groups of one activity with the same function whose layouts overlap
   (Jaccard similarity of the layout paths, or one nearly containing the other) are one screen:
   the same list with and without a now-playing bar; not lists of other ids, nor dialogs with
   other contents in one frame (a message, a date picker). So are two layouts that are one page
   scrolled: the same frame around the same vertical scroll view, whose rows overlap, under no
   other toolbar title (a long settings page recorded at its top and at its bottom shares a few
   rows and nothing else of what it shows).

A model may later refine the split (``Annotator``); without one this is the whole algorithm.

    groups = group_states({sid: anatomy, ...}, echoes={sid: {"Road trip"}})
    [g.states for g in groups]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tapir.docgen.build.anatomy import Anatomy

#: Layout similarity above which two groups with the same function are one screen.
MERGE_JACCARD = 0.5
#: ... or when the smaller layout is almost all inside the larger.
MERGE_CONTAINMENT = 0.85
#: Frame similarity (Jaccard, the scroll view's contents left out) of one page at two positions.
SCROLLED_FRAME = 0.85


@dataclass
class ScreenGroup:
    """The recorded hierarchies of one abstract screen, in trace order."""

    index: int
    states: list[str]
    anatomies: dict[str, Anatomy] = field(repr=False)
    function: tuple[str, ...] = ()

    @property
    def activity(self) -> str:
        """The activity all its hierarchies share ("" when they differ: a dialog opened from two)."""
        found = {self.anatomies[s].activity for s in self.states}
        return found.pop() if len(found) == 1 else ""

    @property
    def first(self) -> Anatomy:
        return self.anatomies[self.states[0]]

    def layout_paths(self) -> frozenset[str]:
        out: set[str] = set()
        for sid in self.states:
            out |= self.anatomies[sid].layout_paths
        return frozenset(out)


def function_of(anatomy: Anatomy, echo: set[str] | None = None) -> tuple[str, ...]:
    """``anatomy.function_parts`` without the dialog title when it echoes what was tapped."""
    if not echo:
        return anatomy.function_parts
    return tuple(p for p in anatomy.function_parts if not (p.startswith("title:") and p[6:] in echo))


def _similar(a: frozenset[str], b: frozenset[str]) -> bool:
    common = len(a & b)
    if not common:
        return False
    return common / len(a | b) >= MERGE_JACCARD or common / min(len(a), len(b)) >= MERGE_CONTAINMENT


def _collections(paths: frozenset[str]) -> frozenset[str]:
    """The scrolling collections (by class and id) a layout holds: screens showing different
    content lists are different screens however much else they share."""
    out = set()
    for p in paths:
        last = p.rsplit("/", 1)[-1]
        cls, _, rid = last.partition("#")
        if rid and any(c in cls for c in ("RecyclerView", "ListView", "GridView")):
            out.add(last)
    return frozenset(out)


def _vertical_scrollers(paths: frozenset[str]) -> set[str]:
    """The paths of the vertical scroll views (with an id) in a layout; a list is content, and a
    horizontal scroller holds a tab bar, not a page."""
    out = set()
    for p in paths:
        cls, _, rid = p.rsplit("/", 1)[-1].partition("#")
        if rid and "ScrollView" in cls and "Horizontal" not in cls:
            out.add(p)
    return out


def _other_contents(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether a view both layouts have holds views with ids in each, none of them the same: a
    dialog's frame (title, buttons) around other contents (a message, a date picker, a list of
    checkboxes) is another dialog, however much of the layout is frame."""
    def children(paths: frozenset[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for p in paths:
            parent, _, last = p.rpartition("/")
            if not last.endswith("#"):
                out.setdefault(parent, set()).add(last)
        return out

    in_a, in_b = children(a), children(b)
    return any(in_a[p].isdisjoint(in_b[p]) for p in in_a.keys() & in_b.keys())


def _scrolled(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether layouts ``a`` and ``b`` are one page at two scroll positions: their frames (all but
    the scroll view's contents) nearly the same, and a row inside the scroll view in both."""
    for scroller in _vertical_scrollers(a) & _vertical_scrollers(b):
        inside = scroller + "/"
        rows_a = {p for p in a if p.startswith(inside)}
        rows_b = {p for p in b if p.startswith(inside)}
        # the holder directly inside is in every position: a row is deeper than that
        if not any(p[len(inside):].count("/") >= 1 for p in rows_a & rows_b):
            continue
        frame_a, frame_b = a - rows_a, b - rows_b
        if len(frame_a & frame_b) / max(len(frame_a | frame_b), 1) >= SCROLLED_FRAME:
            return True
    return False


def _titles(group: ScreenGroup) -> set[str]:
    return {t for t in (group.anatomies[s].toolbar_title for s in group.states) if t}


def group_states(anatomies: Mapping[str, Anatomy], echoes: Mapping[str, set[str]] | None = None) -> list[ScreenGroup]:
    """Group states (in the given order) into screens; see the module docstring."""
    echoes = echoes or {}
    initial: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for sid, a in anatomies.items():
        # dialogs and menus are the same whichever activity they are opened over
        activity = a.activity if a.window == "full" else ""
        initial.setdefault((activity, a.layout, function_of(a, echoes.get(sid))), []).append(sid)
    groups = [ScreenGroup(i, sids, {s: anatomies[s] for s in sids}, key[2])
              for i, (key, sids) in enumerate(initial.items())]
    paths = [g.layout_paths() for g in groups]
    # union-find over groups with the same activity and function and overlapping layouts
    parent = list(range(len(groups)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_function: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for g in groups:
        window_activity = g.activity if g.first.window == "full" else ""
        by_function.setdefault((window_activity, g.function), []).append(g.index)
    for members in by_function.values():
        # largest first, so small variants join the main layout rather than each other
        members.sort(key=lambda i: -len(groups[i].states))
        merged_paths = {i: paths[i] for i in members}
        merged_titles = {i: _titles(groups[i]) for i in members}
        for pos, i in enumerate(members):
            for j in members[:pos]:
                ri, rj = find(i), find(j)
                if ri == rj:
                    continue
                joined, candidate = merged_paths[rj], paths[i]
                ca, cb = _collections(joined), _collections(candidate)
                if ca and cb and not (ca & cb):
                    continue
                if groups[i].first.window != "full" and _other_contents(joined, candidate):
                    continue
                titles = _titles(groups[i])
                other_page = titles and merged_titles[rj] and not titles & merged_titles[rj]
                if _similar(joined, candidate) or (not other_page and _scrolled(joined, candidate)):
                    parent[ri] = rj
                    merged_paths[rj] = joined | candidate
                    merged_titles[rj] |= titles
                    break
    out: dict[int, list[str]] = {}
    for g in groups:
        out.setdefault(find(g.index), []).extend(g.states)
    order = {sid: n for n, sid in enumerate(anatomies)}
    result = []
    for i, sids in enumerate(sorted(out.values(), key=lambda s: min(order[x] for x in s))):
        sids.sort(key=order.__getitem__)
        result.append(ScreenGroup(i, sids, {s: anatomies[s] for s in sids},
                                  function_of(anatomies[sids[0]], echoes.get(sids[0]))))
    return result
