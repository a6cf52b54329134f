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
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from tapir.docgen.model import AppDocument, Element, Step
from tapir.dsl.errors import (
    ActionError,
    DeviceError,
    ElementNotFound,
    HierarchyError,
    Span,
    TapirError,
    UnknownElement,
)
from tapir.dsl.values import Child, ElementHandle, Index, Match, freeze_query
from tapir.runtime.device import Device
from tapir.runtime.grounding.config import GroundingConfig
from tapir.runtime.grounding.items import match_text, node_attributes, node_text
from tapir.runtime.hierarchy.model import Bounds, UINode, UITree
from tapir.runtime.hierarchy.parse import parse_uiautomator
from tapir.runtime.lists import ListState, ListView, well_visible
from tapir.runtime.navigation import Navigation, NavigationConfig, Navigator
from tapir.runtime.settle import (
    Expectation,
    Observation,
    SettleConfig,
    Settled,
    clip,
    foreground_package,
    region_digest,
    settle,
    tree_digest,
)
from tapir.runtime.trace import NullTrace, TraceSink

# ---------------------------------------------------------------------------------------------
# What the session needs from the grounding core (tapir.runtime.grounding.Grounder)


class GrounderLike(Protocol):
    """Its answers are duck-typed: a screen match has ``.name`` and ``.score``; a grounding has
    ``.node``, ``.method``, ``.identifier_index``, ``.score``, ``.runner_up_score``, ``.detail``."""

    def identify_screen(self, tree: UITree) -> Any: ...

    def ground(self, element_name: str, tree: UITree, *, within: Any = None) -> Any: ...

    def items(self, list_element_name: str, tree: UITree) -> list[UINode]: ...

    def match_item(self, list_element_name: str, items: list[UINode], tree: UITree, query: Any) -> Any: ...

    def child(self, list_element_name: str, child_element_name: str, item: UINode, tree: UITree) -> Any: ...


# ---------------------------------------------------------------------------------------------
# Configuration and statistics

#: ``match_text`` limited to its exact stages (equal, then equal after case and space folding).
_EXACT_ONLY = GroundingConfig(use_fuzzy=False, use_embedding=False)


@dataclass(frozen=True)
class SessionConfig:
    settle: SettleConfig = field(default_factory=SettleConfig)
    navigation: NavigationConfig = field(default_factory=NavigationConfig)
    #: Swipes allowed to reach one list item, count a list or find a match.
    max_scrolls: int = 40
    #: A list swipe moves this fraction of the list's height (leaving overlap to align items).
    swipe_fraction: float = 0.55
    #: ``page_*`` directions move this much.
    page_fraction: float = 0.8
    swipe_ms: int = 500
    long_tap_ms: int = 800
    #: Swipes to look for an element on its own screen before ``ElementNotFound``.
    find_scrolls: int = 3


@dataclass
class SessionStats:
    """Counters of one session (the trace's last line; ``bench/dumps_per_action.py`` reads them)."""

    dumps: int = 0
    #: Inputs sent to the device: taps, long taps, swipes, keys, typed texts, app starts.
    device_actions: int = 0
    #: UI actions of the script (what the interpreter's action budget counts).
    script_actions: int = 0
    reads: int = 0
    navigation_steps: int = 0
    list_scrolls: int = 0
    settle_extra_dumps: int = 0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["dumps_per_device_action"] = round(self.dumps / self.device_actions, 3) if self.device_actions else None
        return d


# ---------------------------------------------------------------------------------------------
# Resolution results


@dataclass(frozen=True)
class Target:
    """A handle resolved on the current (or a remembered) dump."""

    element: Element
    node: UINode
    obs: Observation
    how: str
    score: float | None = None
    runner_up: float | None = None
    detail: str | None = None
    #: The list and absolute item index when the node is an item or inside one.
    list_name: str | None = None
    item_index: int | None = None
    #: True for the item itself (not a child element inside it).
    is_item: bool = False


@dataclass
class _Call:
    """Facts gathered while one script call runs, for its trace line."""

    name: str
    started: float
    dumps0: int
    actions0: int
    target: Target | None = None
    navigation: Navigation | None = None
    screen_before: str | None = None
    observed: bool = False
    point: tuple[int, int] | None = None
    settle_reason: str | None = None
    ground_s: float = 0.0
    act_s: float = 0.0
    settle_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def _editable_node(tree: UITree, node: UINode) -> UINode | None:
    if node.editable:
        return node
    for n in tree.descendants(node.id):
        if n.editable:
            return n
    return None


def action_label(tree: UITree, node: UINode) -> str:
    """What a person would call the view acted on: its text (as AutoDroid-V2's HTML shows it, cut
    to 50 characters), else its description, else the first text inside it."""
    return node.text[:50].strip() or node.content_desc.strip() or node_text(tree, node)[:50].strip()


def _describe_query(query: Any) -> str:
    return repr(query) if isinstance(query, str) else str(dict(query) if not isinstance(query, dict) else query)


# ---------------------------------------------------------------------------------------------
# The runtime


class DeviceRuntime:
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
        def read(c: _Call) -> str:
            t = self._resolve(handle, child, span, c, act=False)
            return node_text(t.obs.tree, t.node)

        result: str = self._run("get_text", handle, child, span, read, action=False)
        return result

    def get_attributes(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> dict[str, Any]:
        def read(c: _Call) -> dict[str, Any]:
            t = self._resolve(handle, child, span, c, act=False)
            return self._attributes(t)

        result: dict[str, Any] = self._run("get_attributes", handle, child, span, read, action=False)
        return result

    def item_count(self, handle: ElementHandle, span: Span) -> int:
        def count(c: _Call) -> int:
            el = self._list_element(handle, span, "len()")
            state = self._scan(el, span, c, until=lambda st: False)
            return len(state.sigs)

        result: int = self._run("len", handle, None, span, count, action=False)
        return result

    def item(self, handle: ElementHandle, index: int, span: Span) -> ElementHandle:
        def get(c: _Call) -> ElementHandle:
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
        def find(c: _Call) -> ElementHandle:
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
    # Observing

    def observe(self) -> Observation:
        """The current screen: the last dump, or a fresh one when there is none yet."""
        if self._obs is None:
            self._obs = self._dump()
        return self._obs

    def _dump(self) -> Observation:
        xml = self.device.dump_hierarchy()
        self.stats.dumps += 1
        try:
            tree = parse_uiautomator(xml)
        except HierarchyError as exc:
            raise DeviceError(f"device {getattr(self.device, 'serial', '?')}: unreadable hierarchy dump: "
                              f"{exc.message}") from exc
        match = self.grounder.identify_screen(tree)
        return Observation(
            tree=tree,
            screen=getattr(match, "name", None),
            digest=tree_digest(tree),
            package=foreground_package(tree),
            seq=self.stats.dumps,
            screen_score=getattr(match, "score", None),
            at=self._elapsed(),
        )

    def _settle(self, expect: Expectation, c: _Call | None, *, scrolling: bool = False) -> Settled:
        """Dump after an action until the screen can be trusted. Any action but a list swipe starts
        a new generation: what was read from older dumps is no longer trusted as is."""
        started = self._clock()
        done = settle(self._dump, self._obs, expect, self.config.settle, self._sleep)
        self.stats.settle_extra_dumps += done.dumps - 1
        self._obs = done.observation
        if not scrolling:
            self._generation += 1
        self._ground_cache.clear()
        if c is not None:
            c.settle_s += self._clock() - started
            c.settle_reason = done.reason
        return done

    @staticmethod
    def _grounding_fields(g: Any) -> dict[str, Any]:
        return {"grounded": _how(g), "score": getattr(g, "score", None),
                "runner_up": getattr(g, "runner_up_score", None)}

    def _elapsed(self) -> float:
        return round(self._clock() - self._t0, 4)

    # =========================================================================================
    # Device inputs (counted)

    def _input(self, fn: Callable[[], None], c: _Call | None) -> None:
        started = self._clock()
        fn()
        self.stats.device_actions += 1
        if c is not None:
            c.act_s += self._clock() - started

    def _keys(self, names: list[str], c: _Call | None) -> None:
        """Several key presses in one round trip where the device has a shell (``input keyevent``
        takes many codes), else one by one."""
        if not names:
            return
        shell = getattr(self.device, "shell", None)
        if callable(shell):
            codes = " ".join(n if n.startswith("KEYCODE_") else f"KEYCODE_{n.upper()}" for n in names)
            self._input(lambda: shell(f"input keyevent {codes}"), c)
            return
        for name in names:
            self._input(lambda name=name: self.device.key(name), c)  # type: ignore[misc]

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
                c = _Call("navigation", self._clock(), self.stats.dumps, self.stats.device_actions)
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
            record["bounds"] = list(_bounds(node.bounds))
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

    # =========================================================================================
    # Grounding and reaching

    def _element(self, name: str, span: Span | None) -> Element:
        el = self.document.element(name)
        if el is None:
            names = [e.name for e in self.document.elements]
            close = difflib.get_close_matches(name, names, n=3)
            raise UnknownElement(
                f"${name} is not an element of the app document {self.document.source or self.document.app.name}",
                span, hint=("did you mean " + ", ".join("$" + n for n in close) + "?") if close else None,
            )
        return el

    def _ground(self, name: str, obs: Observation, within: UINode | None = None) -> Any:
        key = (name, obs.seq, within.id if within is not None else None)
        if key in self._ground_cache:
            return self._ground_cache[key]
        g = self.grounder.ground(name, obs.tree, within=within) if within is not None else \
            self.grounder.ground(name, obs.tree)
        if obs is self._obs:
            self._ground_cache[key] = g
        return g

    def _present(self, el: Element, obs: Observation) -> Any:
        """The grounding of ``el`` when its screen is showing, else None."""
        if obs.screen is not None and obs.screen != el.screen:
            return None
        if obs.package and obs.package != self.document.app.package:
            return None
        g = self._ground(el.name, obs)
        if g is None:
            return None
        if obs.screen is None and getattr(g, "method", "") != "identifier":
            return None  # an unknown screen: only an exact identifier hit is trusted
        return g

    def _reach(self, el: Element, span: Span, c: _Call) -> tuple[Observation, Any]:
        """Make ``el`` present (navigating if needed); return the screen and its grounding."""
        started = self._clock()
        obs = self.observe()
        if not c.observed:
            c.observed, c.screen_before = True, obs.screen
        g = self._present(el, obs)
        if g is None and obs.screen == el.screen:
            g = self._find_by_scrolling(el, span, c)
            obs = self.observe()
            if g is None:
                raise ElementNotFound(
                    f"${el.name} is not on the screen: the device shows {el.screen!r} but no view matches "
                    "the element's identifiers", span,
                    hint="the app may be in another state than the document describes (an empty list, a "
                         "closed section), or the identifiers are out of date",
                )
        if g is None:
            try:
                obs, nav = self.navigator.reach(el, lambda o: self._present(el, o) is not None, span)
            except TapirError as exc:
                if exc.span is None:
                    exc.span = span
                raise
            c.navigation = nav
            g = self._present(el, obs)
            assert g is not None
        c.ground_s += self._clock() - started
        return obs, g

    def _find_by_scrolling(self, el: Element, span: Span, c: _Call) -> Any:
        """On the right screen but the element is absent: it may be further down a scroll view."""
        for _ in range(self.config.find_scrolls):
            obs = self.observe()
            scrollers = sorted((n for n in obs.tree.nodes if n.scrollable and n.bounds.area > 0),
                               key=lambda n: -n.bounds.area)
            if not scrollers:
                return None
            before = region_digest(obs.tree, scrollers[0])
            self._swipe(scrollers[0].bounds, "down", c)
            self.stats.list_scrolls += 1
            after = self._settle(Expectation(change=False), c).observation
            g = self._present(el, after)
            if g is not None:
                return g
            moved = [n for n in after.tree.nodes if n.scrollable and n.bounds == scrollers[0].bounds]
            if not moved or region_digest(after.tree, moved[0]) == before:
                return None
        return None

    def _resolve(self, handle: ElementHandle, child: ElementHandle | None, span: Span, c: _Call, *,
                 act: bool) -> Target:
        """Find what ``handle`` (and ``child``) select. ``act``: the node will be acted on, so an
        item must be brought into view; reads may use the dump an item was last seen in."""
        el = self._element(handle.name, span)
        obs, g = self._reach(el, span, c)
        target = Target(el, g.node, obs, _how(g), getattr(g, "score", None), getattr(g, "runner_up_score", None),
                        getattr(g, "detail", None))
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
                target = Target(ch, g2.node, target.obs, _how(g2), getattr(g2, "score", None),
                                getattr(g2, "runner_up_score", None), getattr(g2, "detail", None),
                                target.list_name, target.item_index)
        c.target = target
        return target

    # =========================================================================================
    # Lists

    def _list_element(self, handle: ElementHandle, span: Span, what: str) -> Element:
        el = self._element(handle.name, span)
        if handle.path:
            raise ActionError(f"{what} needs a list element, not an item or child ({handle})", span)
        if not el.is_list:
            raise ActionError(f"{what} needs a list element, but ${el.name} is a {el.kind.value}", span)
        return el

    def _list_view(self, el: Element, span: Span, c: _Call) -> tuple[ListState, ListView]:
        """The list on the current screen, and what is known of its items."""
        obs, g = self._reach(el, span, c)
        view = ListView.of(obs, g.node, self.grounder.items(el.name, obs.tree))
        state = self._lists.get(el.name)
        if state is not None and state.generation != self._generation and not state.reconcile(view, self._generation):
            state = None
        if state is None:
            state = ListState.first_sight(view, self._generation)
        self._lists[el.name] = state
        return state, view

    def _scroll_list(self, el: Element, state: ListState, view: ListView, direction: str, span: Span,
                     c: _Call) -> tuple[bool, ListView]:
        """Swipe the list once; align the new items with the known ones. False: it did not move."""
        before = region_digest(view.obs.tree, view.node)
        self._swipe(view.area.bounds, direction, c)
        self.stats.list_scrolls += 1
        after = self._settle(Expectation(change=False), c, scrolling=True).observation
        g = self._present(el, after)
        if g is None:
            raise ActionError(f"scrolling ${el.name} left its screen (the device shows {after.screen!r})", span)
        view2 = ListView.of(after, g.node, self.grounder.items(el.name, after.tree))
        moved = region_digest(after.tree, g.node) != before
        fraction = self.config.page_fraction if direction.startswith("page_") else self.config.swipe_fraction
        state.scrolled(view2, direction, moved, self._generation, fraction)
        self.trace.write({"event": "scroll", "element": "$" + el.name, "direction": direction, "moved": moved,
                          "window": list(state.window), "known": len(state.sigs), "screen": after.screen,
                          "t": self._elapsed()})
        return moved, view2

    def _scan(self, el: Element, span: Span, c: _Call, until: Callable[[ListState], bool]) -> ListState:
        """Scroll down until ``until(state)`` holds or the end of the list."""
        state, view = self._list_view(el, span, c)
        scrolls = 0
        while not until(state) and not state.at_end:
            if scrolls >= self.config.max_scrolls:
                raise ActionError(f"${el.name} has more items than {self.config.max_scrolls} swipes reach", span)
            _, view = self._scroll_list(el, state, view, "down", span, c)
            scrolls += 1
        return state

    def _item_node(self, el: Element, index: int, span: Span, c: _Call, *, act: bool) -> tuple[UINode, Observation]:
        """The node of item ``index``: in view and not cut off by the list's edges (scrolling there
        when needed); reads may also use a dump of this generation in which it was fully visible."""
        state, view = self._list_view(el, span, c)
        for _ in range(self.config.max_scrolls + 1):
            start, end = state.window
            shown = max(end - start, 1)
            if start <= index < end:
                k = index - start
                node = view.items[k]
                if view.full[k]:
                    return node, view.obs
                direction = "down" if node.bounds.y2 >= view.area.bounds.y2 - 1 else "up"
            else:
                snap = None if act else state.readable(index, self._generation)
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
            moved, view = self._scroll_list(el, state, view, direction, span, c)
            if not moved and direction.endswith("up"):
                raise ActionError(f"cannot scroll ${el.name} back up to item {index}", span)
        raise ActionError(f"could not bring item {index} of ${el.name} into view", span)

    def _find_match(self, el: Element, query: Any, span: Span, c: _Call) -> int:
        """The absolute index of the item matching ``query``.

        Exact matches (equal text after case and space folding, or attributes that hold) are
        looked for in the whole list first: the items seen in this generation (no device call),
        then scrolling down to the end, then up over rows not seen since the last action. Only
        when no item matches exactly does the grounder's similarity matching (fuzzy, embedding)
        choose among every item seen, so a near miss on screen never wins over an exact match
        further down."""
        key = freeze_query(query) if isinstance(query, dict) else query
        state, view = self._list_view(el, span, c)
        if key in state.matches:
            return state.matches[key]

        def exact(nodes: list[UINode], where: Observation) -> UINode | None:
            if not nodes:
                return None
            if isinstance(query, dict):
                g = self.grounder.match_item(el.name, nodes, where.tree, query)
                return g.node if g is not None else None
            found, _ = match_text(where.tree, nodes, str(query), context=el.local_name, config=_EXACT_ONLY,
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
        for where, nodes, offsets in self._readable_groups(state, exclude=(start, end)):
            hit = exact(nodes, where)
            if hit is not None:
                return found(offsets[[n.id for n in nodes].index(hit.id)])
        scrolls = 0
        while not state.at_end and scrolls < self.config.max_scrolls:
            _, view = self._scroll_list(el, state, view, "down", span, c)
            scrolls += 1
            index = in_window(view)
            if index is not None:
                return found(index)
        while any(state.readable(i, self._generation) is None for i in range(state.window[0])) \
                and scrolls < self.config.max_scrolls:
            moved, view = self._scroll_list(el, state, view, "page_up", span, c)
            scrolls += 1
            index = in_window(view)
            if index is not None:
                return found(index)
            if not moved:
                break
        if not isinstance(query, dict):
            best: tuple[float, int, str] | None = None
            for where, nodes, offsets in self._readable_groups(state):
                g = self.grounder.match_item(el.name, nodes, where.tree, query)
                if g is not None and g.node.id in [n.id for n in nodes]:
                    score = float(getattr(g, "score", 0.0) or 0.0)
                    if best is None or score > best[0]:
                        best = (score, offsets[[n.id for n in nodes].index(g.node.id)], str(g.method))
            if best is not None:
                state.matches[key] = best[1]
                c.extra["match"] = f"{best[2]} {best[0]:.2f}"
                return best[1]
        shown = [s.split("\x1f", 1)[0] for s in state.sigs[:5] if s]
        raise ActionError(
            f"no item of ${el.name} matches {_describe_query(query)} ({len(state.sigs)} items seen"
            + (f", e.g. {', '.join(repr(s) for s in shown)})" if shown else ")"), span)

    def _readable_groups(self, state: ListState, exclude: tuple[int, int] = (0, 0)
                         ) -> list[tuple[Observation, list[UINode], list[int]]]:
        """The items readable in this generation, grouped by the dump they were seen in."""
        groups: dict[int, tuple[Observation, list[UINode], list[int]]] = {}
        for i in range(len(state.snaps)):
            if exclude[0] <= i < exclude[1]:
                continue
            snap = state.readable(i, self._generation)
            if snap is not None:
                entry = groups.setdefault(snap.obs.seq, (snap.obs, [], []))
                entry[1].append(snap.node)
                entry[2].append(i)
        return list(groups.values())

    # =========================================================================================
    # Actions

    def _do_tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span, c: _Call, *, long: bool) -> None:
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

    def _check_tappable(self, t: Target, handle: ElementHandle, span: Span) -> None:
        node, tree = t.node, t.obs.tree
        if not node.enabled or any(not a.enabled for a in tree.ancestors(node.id) if a.clickable):
            raise ActionError(f"{handle} is disabled: it cannot be tapped now", span,
                              hint="an earlier step may be missing (e.g. a required field is still empty)")
        screen = Bounds(0, 0, tree.width or 10**6, tree.height or 10**6)
        if clip(node.bounds, screen).area == 0:
            raise ActionError(f"{handle} is not visible (bounds {node.bounds})", span)

    def _tap_point(self, node: UINode, obs: Observation) -> tuple[int, int]:
        """Where to touch the node: the centre of its label when it is a container without text
        of its own (a row around a title), else its centre; always inside the visible part of
        the node, the screen and the scroll view around it.

        A label inside the node that no other clickable view owns passes the touch to the node
        on any phone, and it is where a person (and a recording of one) touches."""
        tree = obs.tree
        screen = Bounds(0, 0, tree.width or node.bounds.x2, tree.height or node.bounds.y2)
        visible = clip(node.bounds, screen) if clip(node.bounds, screen).area else node.bounds
        for a in tree.ancestors(node.id):
            if a.scrollable and a.bounds.area:
                inner = clip(visible, a.bounds)
                if inner.area:
                    visible = inner
                break
        if not node.text and not node.content_desc:
            label = self._label_node(tree, node)
            if label is not None:
                spot = clip(label.bounds, visible)
                if spot.area:
                    return spot.center
        return visible.center

    @staticmethod
    def _label_node(tree: UITree, node: UINode) -> UINode | None:
        """The first text inside ``node`` whose touches ``node`` itself would receive."""
        for d in tree.descendants(node.id):
            if not (d.visible and d.text and d.bounds.area):
                continue
            owner: UINode | None = d
            while owner is not None and owner.id != node.id and not (owner.clickable or owner.checkable):
                owner = tree.parent(owner.id)
            if owner is not None and owner.id == node.id:
                return d
        return None

    def _swipe(self, bounds: Bounds, direction: str, c: _Call | None) -> None:
        fraction = self.config.page_fraction if direction.startswith("page_") else self.config.swipe_fraction
        way = direction.removeprefix("page_")
        w, h = bounds.width, bounds.height
        cx, cy = bounds.center
        if way in ("down", "up"):
            span_px = max(int(h * fraction), 1)
            low = bounds.y1 + (h - span_px) // 2
            high = low + span_px
            # "down" shows what is below: the finger moves up
            y1, y2 = (high, low) if way == "down" else (low, high)
            x1 = x2 = cx
        else:
            span_px = max(int(w * fraction), 1)
            left = bounds.x1 + (w - span_px) // 2
            right = left + span_px
            x1, x2 = (right, left) if way == "right" else (left, right)
            y1 = y2 = cy
        self._input(lambda: self.device.swipe(x1, y1, x2, y2, self.config.swipe_ms), c)

    def _do_scroll(self, handle: ElementHandle, direction: str, span: Span, c: _Call) -> bool:
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

    def _do_set_text(self, handle: ElementHandle, text: str, span: Span, c: _Call) -> None:
        t = self._resolve(handle, None, span, c, act=True)
        self._type_into(t, text, span, c, handle=handle)

    def _type_into(self, t: Target, text: str, span: Span | None, c: _Call | None, *,
                   handle: ElementHandle | None = None) -> None:
        """Focus, clear, type; then check on the next dump that the field shows ``text``; once more if not."""
        shown = handle or ElementHandle(t.element.name)
        field_node = _editable_node(t.obs.tree, t.node)
        if field_node is None:
            raise ActionError(f"{shown} is not an editable field ({t.node.short_class or 'a view'}): "
                              "set_text() needs a text input", span)
        if not field_node.enabled:
            raise ActionError(f"{shown} is disabled: no text can be entered now", span)
        obs = t.obs
        for attempt in (1, 2):
            if not field_node.focused:
                x, y = self._tap_point(field_node, obs)
                self._input(lambda x=x, y=y: self.device.tap(x, y), c)  # type: ignore[misc]
            current = field_node.text
            if current and not field_node.password:
                self._keys(["KEYCODE_MOVE_END", *(["KEYCODE_DEL"] * len(current))], c)
            if text:
                self._input(lambda: self.device.input_text(text), c)
            after = self._settle(Expectation(change=True), c).observation
            landed, now = self._text_landed(t, shown, text, after)
            if c is not None:
                c.extra["verified"] = landed
            if landed:
                return
            if attempt == 2 or now is None:
                break
            field_node = now
            obs = after
        raise ActionError(
            f"the text did not land in {shown}: it shows {(now.text if now is not None else '(field gone)')!r} "
            f"instead of {text!r}", span,
            hint="the field may reformat or limit its input, or another view took the keyboard focus",
        )

    def _text_landed(self, t: Target, shown: ElementHandle, text: str,
                     after: Observation) -> tuple[bool, UINode | None]:
        """Whether the field shows ``text`` on ``after`` (a password field cannot be read back)."""
        g = self._present(t.element, after) if t.list_name is None else None
        node = g.node if g is not None else None
        if node is None and t.list_name is None:
            return (text == "" or after.digest != t.obs.digest), None  # the field left the screen: trust it
        if node is None:
            return True, None  # an item's field: re-finding it would cost scrolls; typed text is trusted
        field_node = _editable_node(after.tree, node) or node
        if field_node.password or not text:
            # a password cannot be read back; an emptied field shows its hint, which is not known
            return True, field_node
        return field_node.text == text, field_node

    def _do_key(self, key: str, c: _Call, expect: Expectation) -> None:
        obs = self.observe()
        c.observed, c.screen_before = True, obs.screen
        self._input(lambda: self.device.key(key), c)
        self._settle(expect, c)

    @staticmethod
    def _attributes(t: Target) -> dict[str, Any]:
        # an item's state includes the views inside it (a radio row is checked when its radio is)
        return node_attributes(t.obs.tree, t.node, item=t.is_item)

    # =========================================================================================
    # One script call: timing, errors, the trace line

    def _run(self, name: str, handle: ElementHandle | None, child: ElementHandle | None, span: Span,
             fn: Callable[[_Call], Any], *, action: bool = True, args: dict[str, Any] | None = None) -> Any:
        c = _Call(name, self._clock(), self.stats.dumps, self.stats.device_actions)
        if action:
            self.stats.script_actions += 1
        else:
            self.stats.reads += 1
        error: TapirError | None = None
        result: Any = None
        try:
            result = fn(c)
            return result
        except TapirError as exc:
            if exc.span is None:
                exc.span = span
            error = exc
            raise
        finally:
            self._write_call(c, handle, child, span, args, result, error)

    def _write_call(self, c: _Call, handle: ElementHandle | None, child: ElementHandle | None, span: Span,
                    args: dict[str, Any] | None, result: Any, error: TapirError | None) -> None:
        self._seq += 1
        t = c.target
        record: dict[str, Any] = {
            "event": "action",
            "seq": self._seq,
            "t": self._elapsed(),
            "line": span.line,
            "column": span.column,
            "statement": self._statement(span),
            "call": c.name,
            "element": str(handle) if handle is not None else None,
        }
        if child is not None:
            record["child"] = str(child)
        if args:
            record["args"] = args
        if t is not None:
            record["grounded"] = "navigation+" + t.how if c.navigation and c.navigation.steps else t.how
            record["resolved"] = t.element.name
            record["score"] = t.score
            record["runner_up"] = t.runner_up
            if t.detail:
                record["detail"] = t.detail
            record["bounds"] = list(_bounds(t.node.bounds))
            record["text"] = node_text(t.obs.tree, t.node) or None
            record["label"] = action_label(t.obs.tree, t.node)
        if c.point is not None:
            record["point"] = list(c.point)
        if c.navigation is not None and c.navigation.steps:
            record["navigation"] = [s.step for s in c.navigation.steps]
            record["paths_tried"] = c.navigation.tried
        record["screen_before"] = c.screen_before
        record["screen_after"] = self._obs.screen if self._obs is not None else None
        record["dumps"] = self.stats.dumps - c.dumps0
        record["device_actions"] = self.stats.device_actions - c.actions0
        if c.settle_reason:
            record["settled"] = c.settle_reason
        record["ms"] = {
            "ground": round(c.ground_s * 1000, 1), "act": round(c.act_s * 1000, 1),
            "settle": round(c.settle_s * 1000, 1), "total": round((self._clock() - c.started) * 1000, 1),
        }
        if c.extra:
            record.update(c.extra)
        if error is None:
            if isinstance(result, ElementHandle):
                record["result"] = str(result)
            elif result is not None:
                record["result"] = result
            record["ok"] = True
        else:
            record["ok"] = False
            record["error"] = {"category": error.category, "message": error.message}
        self.trace.write(record)

    def _statement(self, span: Span) -> str | None:
        if 1 <= span.line <= len(self._source_lines):
            return self._source_lines[span.line - 1].strip()
        return None


def _how(g: Any) -> str:
    method = getattr(g, "method", "identifier")
    if method == "identifier":
        k = getattr(g, "identifier_index", None)
        return f"identifier {k}" if k is not None else "identifier"
    return str(method)


def _bounds(b: Bounds) -> tuple[int, int, int, int]:
    return (b.x1, b.y1, b.x2, b.y2)
