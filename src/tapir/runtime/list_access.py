"""A list's items on the device: counting, indexing, iterating and matching them across swipes.

``tapir.runtime.lists`` holds what is known of a list's items; this part of ``DeviceRuntime``
swipes the list, aligns what each dump shows with that knowledge and brings items into view.

A list first seen is not assumed to be at its top (an app may restore a scrolled list): before an
absolute position is needed (``$list[i]``, ``len``, iteration) it is swiped up until it does not
move, once. Iteration (``iter_items``) reaches items one at a time, so a loop that stops at the
first item does not scroll through the whole list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.core.document import AppDocument, Element
from tapir.core.errors import ActionError, Span
from tapir.dsl.values import ElementHandle, freeze_query
from tapir.hierarchy.model import UINode
from tapir.runtime.grounding.fuzzy import fold, label_similarity
from tapir.runtime.grounding.items import match_text
from tapir.runtime.lists import ListState, ListView
from tapir.runtime.reaching import Reacher
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import EXACT_ONLY, CallFacts, GrounderLike, SessionConfig, describe_query
from tapir.runtime.settle import Expectation, Observation, region_digest
from tapir.runtime.trace import TraceSink


class ListAccess:
    """List items numbered from the top of the whole list, reached by swiping inside the list."""

    def __init__(self, screen: ScreenCache, reacher: Reacher, grounder: GrounderLike, config: SessionConfig,
                 trace: TraceSink) -> None:
        self.screen = screen
        self.reacher = reacher
        self.grounder = grounder
        self.config = config
        self.trace = trace
        #: What is known of each list element's items (tests inspect it).
        self.lists: dict[str, ListState] = {}

    # =========================================================================================
    # Lists

    def list_element(self, handle: ElementHandle, span: Span, what: str) -> Element:
        el = self.reacher.element(handle.name, span)
        if handle.path:
            raise ActionError(f"{what} needs a list element, not an item or child ({handle})", span)
        if not el.is_list:
            raise ActionError(f"{what} needs a list element, but ${el.name} is a {el.kind.value}", span)
        return el

    def list_view(self, el: Element, span: Span, c: CallFacts, *, read: bool = True) -> tuple[ListState, ListView]:
        """The list on the current screen, and what is known of its items."""
        obs, g = self.reacher.reach(el, span, c, read=read)
        view = ListView.of(obs, g.node, self.grounder.items(el.name, obs.tree))
        generation = self.screen.generation
        state = self.lists.get(el.name)
        if state is not None and state.generation != generation and not state.reconcile(view, generation):
            state = None
        if state is None:
            state = ListState.first_sight(view, generation)
        self.lists[el.name] = state
        return state, view

    def scroll_list(self, el: Element, state: ListState, view: ListView, direction: str, span: Span,
                    c: CallFacts) -> tuple[bool, ListView]:
        """Swipe the list once; align the new items with the known ones. False: it did not move."""
        before = region_digest(view.obs.tree, view.node)
        self.screen.swipe(view.area.bounds, direction, c)
        self.screen.stats.list_scrolls += 1
        # did not move, or not redrawn yet? a list end is confirmed by a second look
        after = self.screen.settle(Expectation(change=True), c, scrolling=True).observation
        g = self.reacher.present(el, after)
        watching = self.reacher.watching
        if g is None and watching is not None and (dismissed := watching.check(after, c)) is not None:
            # an interruption covered the list (a watcher dismissed it); if the swipe never reached
            # the list, it is swiped again (the number of firings per call bounds this)
            after = dismissed
            g = self.reacher.present(el, after)
            if g is not None and region_digest(after.tree, g.node) == before:
                return self.scroll_list(el, state, view, direction, span, c)
        if g is None:
            raise ActionError(f"scrolling ${el.name} left its screen (the device shows {self.reacher.where(after)})",
                              span)
        view2 = ListView.of(after, g.node, self.grounder.items(el.name, after.tree))
        moved = region_digest(after.tree, g.node) != before
        fraction = self.config.page_fraction if direction.startswith("page_") else self.config.swipe_fraction
        state.scrolled(view2, direction, moved, self.screen.generation, fraction)
        self.trace.write({"event": "scroll", "element": "$" + el.name, "direction": direction, "moved": moved,
                          "window": list(state.window), "known": len(state.sigs), "screen": after.screen,
                          "t": self.screen.elapsed()})
        return moved, view2

    def at_top(self, el: Element, span: Span, c: CallFacts, *, read: bool = True) -> tuple[ListState, ListView]:
        """The list, with its first item known to be the list's first: a list first seen may
        not be at its top, so it is swiped up until it stops moving (once per list)."""
        state, view = self.list_view(el, span, c, read=read)
        scrolls = 0
        while not state.top_known:
            if scrolls >= self.config.max_scrolls:
                raise ActionError(f"${el.name} has more items above than {self.config.max_scrolls} swipes reach",
                                  span)
            moved, view = self.scroll_list(el, state, view, "page_up", span, c)
            scrolls += 1
            if not moved:
                state.top_known = True
        return state, view

    def scan(self, el: Element, span: Span, c: CallFacts, until: Callable[[ListState], bool]) -> ListState:
        """From the top, scroll down until ``until(state)`` holds or the end of the list."""
        state, view = self.at_top(el, span, c)
        scrolls = 0
        while not until(state) and not state.at_end:
            if scrolls >= self.config.max_scrolls:
                raise ActionError(f"${el.name} has more items than {self.config.max_scrolls} swipes reach", span)
            _, view = self.scroll_list(el, state, view, "down", span, c)
            scrolls += 1
        return state

    def item_node(self, el: Element, index: int, span: Span, c: CallFacts, *, act: bool,
                  from_top: bool = True) -> tuple[UINode, Observation]:
        """The node of item ``index``: in view and not cut off by the list's edges (scrolling
        there when needed); reads may also use a dump of this generation in which it was fully
        visible. ``from_top``: ``index`` counts from the list's top (``$list[i]``), which must then
        be known; an index ``find_match`` gave counts from the first item known, top or not."""
        if from_top:
            state, view = self.at_top(el, span, c, read=not act)
        else:
            state, view = self.list_view(el, span, c, read=not act)
        generation = self.screen.generation
        for _ in range(self.config.max_scrolls + 1):
            start, end = state.window
            shown = max(end - start, 1)
            if start <= index < end:
                k = index - start
                node = view.items[k]
                if view.full[k]:
                    return node, view.obs
                snap = None if act else state.readable(index, generation)
                if snap is not None:
                    return snap.node, snap.obs  # cut off here, but read whole in an earlier dump
                direction = "down" if node.bounds.y2 >= view.area.bounds.y2 - 1 else "up"
            else:
                snap = None if act else state.readable(index, generation)
                if snap is not None:
                    return snap.node, snap.obs
                if index < start:
                    direction = "page_up" if start - index > shown else "up"
                elif state.at_end and index >= len(state.sigs):
                    raise ActionError(f"index {index} is out of range: ${el.name} has {len(state.sigs)} items", span)
                elif state.at_end:
                    raise ActionError(f"item {index} of ${el.name} is no longer there: the list now ends at "
                                      f"item {end - 1}", span)
                else:
                    direction = "page_down" if index - end >= shown else "down"
            moved, view = self.scroll_list(el, state, view, direction, span, c)
            if not moved and direction.endswith("up"):
                raise ActionError(f"cannot scroll ${el.name} back up to item {index}", span)
        raise ActionError(f"could not bring item {index} of ${el.name} into view", span)

    def find_match(self, el: Element, query: Any, span: Span, c: CallFacts, *, read: bool = True) -> int:
        """The absolute index of the item matching ``query``.

        Exact matches (equal text after case and space folding, or attributes that hold) are
        looked for in the whole list first: the items seen in this generation (no device call),
        then scrolling down to the end, then up over rows not seen since the last action. Only
        when no item matches exactly does the grounder's similarity matching (fuzzy, embedding)
        choose among every item seen, so a near miss on screen never wins over an exact match
        further down."""
        key = freeze_query(query) if isinstance(query, dict) else query
        state, view = self.list_view(el, span, c, read=read)
        generation = self.screen.generation
        if key in state.matches:
            return state.matches[key]

        def exact(nodes: list[UINode], where: Observation) -> UINode | None:
            if not nodes:
                return None
            if isinstance(query, dict):
                g = self.grounder.match_item(el.name, nodes, where.tree, query)
                return g.node if g is not None else None
            found, _ = match_text(where.tree, nodes, str(query), context=el.local_name, config=EXACT_ONLY,
                                  embedder=None)
            return found.node if found is not None else None

        def in_window(v: ListView) -> int | None:
            hit = exact(list(v.items), v.obs)
            return None if hit is None else state.window[0] + [n.id for n in v.items].index(hit.id)

        def found(index: int) -> int:
            state.matches[key] = index
            c.extra["match"] = "exact"
            return index

        start, end = state.window
        index = in_window(view)
        if index is not None:
            return found(index)
        for where, nodes, offsets in self._readable_groups(state, generation, exclude=(start, end)):
            hit = exact(nodes, where)
            if hit is not None:
                return found(offsets[[n.id for n in nodes].index(hit.id)])
        scrolls = 0
        while not state.at_end and scrolls < self.config.max_scrolls:
            _, view = self.scroll_list(el, state, view, "down", span, c)
            scrolls += 1
            index = in_window(view)
            if index is not None:
                return found(index)
        while (not state.top_known or any(state.readable(i, generation) is None for i in range(state.window[0]))) \
                and scrolls < self.config.max_scrolls:
            moved, view = self.scroll_list(el, state, view, "page_up", span, c)
            scrolls += 1
            index = in_window(view)
            if index is not None:
                return found(index)
            if not moved:
                state.top_known = True
                break
        why = ""
        if not isinstance(query, dict):
            best: tuple[float, int, str] | None = None
            for where, nodes, offsets in self._readable_groups(state, generation):
                g = self.grounder.match_item(el.name, nodes, where.tree, query)
                why = why or str(getattr(self.grounder, "last_detail", ""))
                if g is not None and g.node.id in [n.id for n in nodes]:
                    score = g.score
                    if best is None or score > best[0]:
                        best = (score, offsets[[n.id for n in nodes].index(g.node.id)], str(g.method))
            if best is not None:
                state.matches[key] = best[1]
                c.extra["match"] = f"{best[2]} {best[0]:.2f}"
                return best[1]
        shown = [s.split("\x1f", 1)[0] for s in state.sigs[:5] if s]
        reason = why.split(": ", 1)[1] if why.startswith("no item of ") and ": " in why else ""
        elsewhere = documented_elsewhere(self.reacher.document, query, el) if isinstance(query, str) else []
        raise ActionError(
            f"no item of ${el.name} matches {describe_query(query)} ({len(state.sigs)} items seen"
            + (f", e.g. {', '.join(repr(s) for s in shown)})" if shown else ")")
            + (f"; {reason}" if reason else "")
            + (f"; the document lists {query!r} as an item of "
               + " and of ".join(f"${e.name}" for e in elsewhere) if elsewhere else ""), span,
            hint=f"match it on that list: ${elsewhere[0].name}.match({query!r})" if elsewhere else
                 "match() finds an item the list shows now; an item to be added is typed into the app's input "
                 "(set_text) instead, and items chosen by a state are visited with a for loop")

    def _readable_groups(self, state: ListState, generation: int, exclude: tuple[int, int] = (0, 0)
                         ) -> list[tuple[Observation, list[UINode], list[int]]]:
        """The items readable in this generation, grouped by the dump they were seen in."""
        groups: dict[int, tuple[Observation, list[UINode], list[int]]] = {}
        for i in range(len(state.snaps)):
            if exclude[0] <= i < exclude[1]:
                continue
            snap = state.readable(i, generation)
            if snap is not None:
                entry = groups.setdefault(snap.obs.seq, (snap.obs, [], []))
                entry[1].append(snap.node)
                entry[2].append(i)
        return list(groups.values())


#: How near a documented item's text must be to a query for a no-match error to name its list
#: (whole-label similarity; a part of a longer label scores at most ``PARTIAL_SCALE``).
ELSEWHERE_SIMILARITY = 0.9


def documented_elsewhere(document: AppDocument, query: str, besides: Element, limit: int = 2) -> list[Element]:
    """The other lists whose documented items include ``query`` (case and space folded; else
    nearly the same words), those on ``besides``'s screen first, ``limit`` at most. A no-match error
    names them: a model that matched on the wrong one of a dialog's two lists ("First name" on the
    sorting order's list, not the sort field's) writes the same line again unless told which list
    has the item."""
    q = fold(query)
    if not q:
        return []
    lists = [e for e in document.elements if e.is_list and e.options and e.name != besides.name]
    hits = [e for e in lists if any(fold(o) == q for o in e.options)]
    if not hits:
        hits = [e for e in lists if max(label_similarity(query, o) for o in e.options) >= ELSEWHERE_SIMILARITY]
    hits.sort(key=lambda e: e.screen != besides.screen)
    return hits[:limit]
