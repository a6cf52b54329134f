"""``DeviceRuntime``: the interpreter's UI calls carried out on a device.

Each call goes screen identification -> grounding -> action -> settling:

* **Observe.** The screen is dumped once after each action and that dump is reused by
  everything until the next action (reads, grounding, checks). ``tapir.runtime.settle`` decides
  when one dump after an action is enough.
* **Reach.** The element must be on its screen: the screen identified on the dump is the
  element's screen and the grounder finds the element there. Otherwise the navigator executes
  the element's dependency paths (Algorithm 1, ``tapir.runtime.navigation``). On the right
  screen with the element absent, the screen's scrollable views are scrolled a little before
  giving up with ``ElementNotFound``.
* **Items.** A list's items (``len``, ``[i]``, iteration, ``match``) are the grounder's
  ``items`` of the list, counted from the top of the whole list: items off screen are reached
  by swiping inside the list bounds, and the items of successive dumps are aligned by their
  text signature so that none is counted twice. Reads of an item seen earlier reuse the dump it
  was seen in; only actions scroll it back into view.
* **Act, with checks before and after** (AndroidGen's AutoCheck): a tap needs a visible,
  enabled element; ``set_text`` needs an editable one, clears it, types, and checks on the next
  dump that the text landed (one retry); ``scroll`` compares the list region before and after.
* **Trace.** Every call is one JSON line (``tapir.runtime.trace``): the script line, the
  element, how it was grounded, bounds, screens before and after, dumps and timings.

The parts live beside this module: ``session_model`` (configuration, statistics, resolved
targets), ``screen_cache`` (dumps, settling, device inputs), ``reaching`` (grounding, reaching
an element), ``list_access`` (list items), ``action_checks`` (AutoCheck) and ``call_trace``
(one call's trace line). ``DeviceRuntime`` puts them together.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tapir.docgen.model import AppDocument, Element, Step
from tapir.dsl.errors import ActionError, ElementNotFound, Span, TapirError
from tapir.dsl.values import Child, ElementHandle, Index, Match
from tapir.runtime.action_checks import ActionChecks
from tapir.runtime.call_trace import CallTrace
from tapir.runtime.device import Device
from tapir.runtime.grounding.items import node_attributes, node_text
from tapir.runtime.hierarchy.model import UINode
from tapir.runtime.list_access import ListAccess
from tapir.runtime.lists import ListState, well_visible
from tapir.runtime.navigation import Navigator
from tapir.runtime.session_model import (
    Call,
    GrounderLike,
    SessionConfig,
    SessionStats,
    Target,
    action_label,
    bounds_tuple,
    how_grounded,
)
from tapir.runtime.settle import Expectation, Observation, region_digest
from tapir.runtime.trace import NullTrace, TraceSink

__all__ = ["DeviceRuntime", "GrounderLike", "SessionConfig", "SessionStats", "Target", "action_label"]


class DeviceRuntime(CallTrace, ActionChecks, ListAccess):
    """Implements ``tapir.dsl.runtime_api.UIRuntime`` over a ``Device``, a grounder and a document.

    ``on_close`` runs when the interpreter releases the runtime (a simulator is stopped there).
    The trace sink belongs to the runtime from then on and is closed with it.
    """

    def __init__(
        self,
        device: Device,
        document: AppDocument,
        grounder: GrounderLike,
        *,
        config: SessionConfig | None = None,
        trace: TraceSink | None = None,
        source: str | None = None,
        script: str | None = None,
        on_close: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.device = device
        self.document = document
        self.grounder = grounder
        self.config = config or SessionConfig()
        self.trace: TraceSink = trace or NullTrace()
        self.stats = SessionStats()
        self.navigator = Navigator(self, self.config.navigation)
        self._source_lines = source.splitlines() if source else []
        self._on_close = on_close
        self._clock = clock
        self._sleep = sleep
        self._t0 = clock()
        self._obs: Observation | None = None
        self._generation = 0
        self._lists: dict[str, ListState] = {}
        self._ground_cache: dict[tuple[str, int, int | None], Any] = {}
        self._seq = 0
        self._closed = False
        #: The simulator this runtime started, if any (``connect`` sets it; tests inspect app state).
        self.simulator: Any = None
        self.trace.write({
            "event": "session", "device": getattr(device, "serial", str(device)),
            "document": document.source, "app": document.app.package, "script": script,
        })

    # =========================================================================================
    # UIRuntime

    def tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
        self._run("tap", handle, child, span, lambda c: self._do_tap(handle, child, span, c, long=False))

    def long_tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
        self._run("long_tap", handle, child, span, lambda c: self._do_tap(handle, child, span, c, long=True))

    def set_text(self, handle: ElementHandle, text: str, span: Span) -> None:
        self._run("set_text", handle, None, span, lambda c: self._do_set_text(handle, text, span, c),
                  args={"text": text})

    def scroll(self, handle: ElementHandle, direction: str, span: Span) -> bool:
        result: bool = self._run("scroll", handle, None, span, lambda c: self._do_scroll(handle, direction, span, c),
                                 args={"direction": direction})
        return result

    def get_text(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> str:
        def read(c: Call) -> str:
            t = self._resolve(handle, child, span, c, act=False)
            return node_text(t.obs.tree, t.node)

        result: str = self._run("get_text", handle, child, span, read, action=False)
        return result

    def get_attributes(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> dict[str, Any]:
        def read(c: Call) -> dict[str, Any]:
            t = self._resolve(handle, child, span, c, act=False)
            return self._attributes(t)

        result: dict[str, Any] = self._run("get_attributes", handle, child, span, read, action=False)
        return result

    def item_count(self, handle: ElementHandle, span: Span) -> int:
        def count(c: Call) -> int:
            el = self._list_element(handle, span, "len()")
            state = self._scan(el, span, c, until=lambda st: False)
            return len(state.sigs)

        result: int = self._run("len", handle, None, span, count, action=False)
        return result

    def item(self, handle: ElementHandle, index: int, span: Span) -> ElementHandle:
        def get(c: Call) -> ElementHandle:
            el = self._list_element(handle, span, "indexing")
            if index < 0:
                raise ActionError(f"index {index} is out of range for {handle}", span)
            state = self._scan(el, span, c, until=lambda st: len(st.sigs) > index)
            if index >= len(state.sigs):
                raise ActionError(f"index {index} is out of range: {handle} has {len(state.sigs)} items", span)
            return handle.at(index)

        result: ElementHandle = self._run("item", handle, None, span, get, action=False, args={"index": index})
        return result

    def match(self, handle: ElementHandle, query: str | dict[str, Any], span: Span) -> ElementHandle:
        def find(c: Call) -> ElementHandle:
            el = self._list_element(handle, span, "match()")
            index = self._find_match(el, query, span, c)
            c.extra["index"] = index
            return handle.matching(query)

        result: ElementHandle = self._run("match", handle, None, span, find, action=False, args={"query": query})
        return result

    def back(self, span: Span) -> None:
        self._run("back", None, None, span, lambda c: self._do_key("back", c, Expectation(change=True)))

    def enter(self, span: Span) -> None:
        self._run("enter", None, None, span, lambda c: self._do_key("enter", c, Expectation(change=False)))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.trace.write({"event": "end", "t": self._elapsed(), "stats": self.stats.as_dict()})
        finally:
            try:
                self.trace.close()
            finally:
                if self._on_close is not None:
                    self._on_close()

    # =========================================================================================
    # NavigationHost

    def step_available(self, step: Step, obs: Observation) -> bool:
        if step.target is None:
            return True
        el = self.document.element(step.target)
        if el is None:
            return obs.screen == step.target  # `<screen>.back()`
        if obs.screen is not None and obs.screen != el.screen:
            return False
        if obs.package and obs.package != self.document.app.package:
            return False
        anchor = self.document.element(el.item_of) if el.item_of else el
        if anchor is None:
            return False
        g = self._ground(anchor.name, obs)
        if g is None or (obs.screen is None and getattr(g, "method", "") != "identifier"):
            return False
        if el.item_of or (el.is_list and step.match is None):
            return self._step_node(step, el, obs) is not None
        return True

    def _step_node(self, step: Step, el: Element, obs: Observation) -> UINode | None:
        """What a path step acts on when it names no item: a list's first item, or the child
        element inside the first item that has it (any item opens the screen the path leads to)."""
        list_el = self.document.element(el.item_of) if el.item_of else el
        if list_el is None:
            return None
        try:
            items = self.grounder.items(list_el.name, obs.tree)
        except TapirError:
            return None
        g = self._ground(list_el.name, obs)
        area = g.node if g is not None else None
        for item in items:
            if area is not None and not well_visible(item, items, area):
                continue
            if not el.item_of:
                return item
            found = self.grounder.child(list_el.name, el.name, item, obs.tree)
            if found is not None:
                return found.node  # type: ignore[no-any-return]
        return None

    def run_step(self, step: Step, obs: Observation, span: Span | None) -> Observation:
        """One dependency-path step, with its own trace line."""
        started = self._clock()
        dumps0, before = self.stats.dumps, obs.screen
        record: dict[str, Any] = {"event": "navigation", "step": str(step), "screen_before": before}
        if step.target is None or self.document.element(step.target) is None:
            key = "enter" if step.action == "enter" else "back"
            self._input(lambda: self.device.key(key), None)
            after = self._settle(Expectation(change=key == "back"), None).observation
        else:
            el = self.document.element(step.target)
            assert el is not None
            node: UINode | None
            if step.match is not None and el.is_list:
                c = Call("navigation", self._clock(), self.stats.dumps, self.stats.device_actions)
                index = self._find_match(el, step.match, span or Span.point(1, 1), c)
                node, obs = self._item_node(el, index, span or Span.point(1, 1), c, act=True)
                record["grounded"] = f"item {index}"
            elif el.item_of or (el.is_list and step.action in ("tap", "long_tap")):
                node = self._step_node(step, el, obs)
                record["grounded"] = "first item"
            else:
                g = self._ground(el.name, obs)
                node = g.node if g is not None else None
                if g is not None:
                    record.update(self._grounding_fields(g))
            if node is None:
                raise ElementNotFound(f"navigation step {step}: ${el.name} is not on the screen", span)
            record["bounds"] = list(bounds_tuple(node.bounds))
            record["action"] = step.action
            record["label"] = action_label(obs.tree, node)
            if step.action == "set_text":
                record["text_typed"] = step.args[0] if step.args else ""
            after = self._act_on_step(step, el, node, obs, span)
        self.stats.navigation_steps += 1
        record.update({
            "screen_after": after.screen, "dumps": self.stats.dumps - dumps0, "t": self._elapsed(),
            "ms": round((self._clock() - started) * 1000, 1),
        })
        self.trace.write(record)
        return after

    def _act_on_step(self, step: Step, el: Element, node: UINode, obs: Observation, span: Span | None) -> Observation:
        if step.action in ("tap", "long_tap"):
            x, y = self._tap_point(node, obs)
            if step.action == "tap":
                self._input(lambda: self.device.tap(x, y), None)
            else:
                self._input(lambda: self.device.long_tap(x, y, self.config.long_tap_ms), None)
            return self._settle(Expectation(change=True, screen=el.leads_to), None).observation
        if step.action == "set_text":
            target = Target(el, node, obs, "navigation")
            self._type_into(target, step.args[0] if step.args else "", span, None)
            assert self._obs is not None
            return self._obs
        if step.action == "scroll":
            direction = step.args[0] if step.args else "down"
            self._swipe(node.bounds, direction, None)
            return self._settle(Expectation(change=False), None).observation
        raise ActionError(f"navigation step {step}: cannot perform {step.action}()", span)

    def launch_app(self, span: Span | None) -> Observation:
        package = self.document.app.package
        before = self._obs.screen if self._obs else None
        self._input(lambda: self.device.app_start(package), None)
        after = self._settle(Expectation(change=True, screen=self.document.app.start_screen), None).observation
        self.trace.write({"event": "navigation", "step": f"launch {package}", "screen_before": before,
                          "screen_after": after.screen, "t": self._elapsed()})
        return after

    def _resolve(self, handle: ElementHandle, child: ElementHandle | None, span: Span, c: Call, *,
                 act: bool) -> Target:
        """Find what ``handle`` (and ``child``) select. ``act``: the node will be acted on, so an
        item must be brought into view; reads may use the dump an item was last seen in."""
        el = self._element(handle.name, span)
        obs, g = self._reach(el, span, c)
        target = Target(el, g.node, obs, how_grounded(g), getattr(g, "score", None),
                        getattr(g, "runner_up_score", None), getattr(g, "detail", None))
        selectors = list(handle.path)
        if child is not None:
            if child.path:
                raise ActionError(f"{child} cannot select a child element: give the element alone", span)
            selectors.append(Child(child.name))
        for n, sel in enumerate(selectors):
            last_item = not any(isinstance(s, Index | Match) for s in selectors[n + 1:])
            if isinstance(sel, Index | Match):
                if not target.element.is_list:
                    raise ActionError(f"{handle} selects an item of ${target.element.name}, which is a "
                                      f"{target.element.kind.value}, not a list", span)
                if target.list_name is not None:
                    raise ActionError(f"{handle}: nested lists are not supported", span)
                lst = target.element
                if isinstance(sel, Index):
                    index = sel.position
                else:
                    index = self._find_match(lst, sel.as_query(), span, c)
                node, where = self._item_node(lst, index, span, c, act=act and last_item)
                target = Target(lst, node, where, f"item {index}", list_name=lst.name, item_index=index, is_item=True)
            elif isinstance(sel, Child):
                ch = self._element(sel.name, span)
                if target.list_name is not None:
                    g2 = self.grounder.child(target.list_name, ch.name, target.node, target.obs.tree)
                else:
                    g2 = self._ground(ch.name, target.obs, within=target.node)
                if g2 is None:
                    where_ = f"item {target.item_index} of ${target.list_name}" if target.list_name else \
                        f"${target.element.name}"
                    raise ElementNotFound(f"${ch.name} is not inside {where_}", span)
                target = Target(ch, g2.node, target.obs, how_grounded(g2), getattr(g2, "score", None),
                                getattr(g2, "runner_up_score", None), getattr(g2, "detail", None),
                                target.list_name, target.item_index)
        c.target = target
        return target

    # =========================================================================================
    # Actions

    def _do_tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span, c: Call, *, long: bool) -> None:
        t = self._resolve(handle, child, span, c, act=True)
        self._check_tappable(t, handle, span)
        x, y = self._tap_point(t.node, t.obs)
        c.point = (x, y)
        if long:
            self._input(lambda: self.device.long_tap(x, y, self.config.long_tap_ms), c)
        else:
            self._input(lambda: self.device.tap(x, y), c)
        leads = t.element.leads_to
        after = self._settle(Expectation(change=True, screen=leads), c).observation
        # AutoCheck's "did it do anything": a tap that changed nothing is worth seeing in the trace
        c.extra["changed"] = after.digest != t.obs.digest

    def _do_scroll(self, handle: ElementHandle, direction: str, span: Span, c: Call) -> bool:
        el = self._element(handle.name, span)
        if handle.path:
            raise ActionError(f"scroll() works on a list or scroll view, not on an item ({handle})", span)
        if el.is_list and direction in ("up", "down", "page_up", "page_down"):
            state, view = self._list_view(el, span, c)
            moved, _ = self._scroll_list(el, state, view, direction, span, c)
            c.extra["moved"] = moved
            return not moved
        t = self._resolve(handle, None, span, c, act=True)
        before = region_digest(t.obs.tree, t.node)
        self._swipe(t.node.bounds, direction, c)
        self.stats.list_scrolls += 1
        after = self._settle(Expectation(change=False), c).observation
        g = self._present(el, after)
        moved = g is None or region_digest(after.tree, g.node) != before
        c.extra["moved"] = moved
        return not moved

    def _do_set_text(self, handle: ElementHandle, text: str, span: Span, c: Call) -> None:
        t = self._resolve(handle, None, span, c, act=True)
        self._type_into(t, text, span, c, handle=handle)

    def _do_key(self, key: str, c: Call, expect: Expectation) -> None:
        obs = self.observe()
        c.observed, c.screen_before = True, obs.screen
        self._input(lambda: self.device.key(key), c)
        self._settle(expect, c)

    @staticmethod
    def _attributes(t: Target) -> dict[str, Any]:
        # an item's state includes the views inside it (a radio row is checked when its radio is)
        return node_attributes(t.obs.tree, t.node, item=t.is_item)
