"""``DeviceRuntime``: the interpreter's UI calls carried out on a device.

Each call goes observe -> reach -> act -> settle:

* **Observe.** The screen is dumped once after each action and that dump is reused by
  everything until the next action (reads, grounding, checks), for at most
  ``SettleConfig.fresh_s`` seconds, so a polling read sees the screen change by itself
  (``screen_cache``; ``settle`` decides when one dump after an action is enough).
* **Reach.** Element first: the element is grounded on the current dump and, when it is there,
  acted on, whatever screen identification named. Otherwise its screen is reached through the
  document's dependency paths (Algorithm 1, ``navigation``), under a policy: no unnamed list
  item, destructive or sensitive step unless the target's own path names it, and reads take no
  such step and never open a dialog or menu (``reaching``). On the element's screen with the
  element absent, scroll views are scrolled a little before ``ElementNotFound``.
* **Items.** A list's items (``len``, ``[i]``, iteration, ``match``) are the grounder's ``items``
  of the list, counted from the top of the whole list, which is found by swiping up once when
  the list was first seen: items off screen are reached by swiping inside the list bounds, and
  the items of successive dumps are aligned by their text signature so that none is counted
  twice (``list_access``, ``lists``).
* **Act, with checks before and after** (AndroidGen's AutoCheck): a tap needs a visible,
  enabled element; ``set_text`` needs an editable one, clears it, types, and checks on the next
  dump that the text landed (one retry); ``scroll`` compares the list region before and after
  (``action_checks``).
* **Trace.** Every call is one JSON line (``call_trace``, ``trace``): the script line, the
  element, how it was grounded, bounds, screens before and after, dumps and timings; a run of
  identical reads is one line and a count.
* **Guards** (``guards``, ``docs/safety.md``): before each call the run is checked to be in its
  app (another app in front is left, or stops the run); a sensitive tap (document-marked, a
  label that says delete/send/pay, an answer to a payment, permission or warning dialog) needs
  permission or a yes in the REPL, whoever taps (the script, navigation, a watcher); a
  ``secret()`` is typed only into password fields and masked in the trace, errors and reads.
* **Interruptions, waits, the app.** Watchers (the document's ``watchers:`` and the script's
  ``watch()``) dismiss an interruption when an element cannot be found (``watching``);
  presence checks and waits look at the screen without navigating, on the runtime's clock
  (``waiting``, ``clock``: a simulator's time moves on instead of the host sleeping); the app is
  launched, stopped and cleared, and screenshots saved with the run's artifacts (``app_control``).

``DeviceRuntime`` is composed of those parts, each with the parts it needs handed to it:
``ScreenCache`` (dumps, inputs, groundings per dump), ``Reacher`` (element first, navigation),
``Navigator`` + ``PathSteps`` (dependency paths), ``ListAccess`` (items), ``Resolver`` (handles to
nodes), ``ActionChecks``, ``Guards``, ``Watching``, ``Waiter``, ``AppControl`` and ``CallTrace``.
Its ``UIRuntime`` methods are thin entry points.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tapir.core.document import AppDocument
from tapir.core.errors import ActionError, ScreenNotReached, Span, TapirError
from tapir.core.safety import Safety
from tapir.core.secrets import Secret
from tapir.core.watchers import Watcher
from tapir.dsl.values import ElementHandle, Match
from tapir.runtime.action_checks import ActionChecks
from tapir.runtime.app_control import AppControl
from tapir.runtime.artifacts import Artifacts, default_folder
from tapir.runtime.call_trace import CallTrace
from tapir.runtime.clock import HostClock, WaitClock
from tapir.runtime.device import Device
from tapir.runtime.grounding.items import node_attributes, node_text
from tapir.runtime.guards import Guards
from tapir.runtime.list_access import ListAccess
from tapir.runtime.lists import Sig
from tapir.runtime.navigation import Navigator
from tapir.runtime.path_steps import PathSteps
from tapir.runtime.reaching import Reacher
from tapir.runtime.resolve import Resolver
from tapir.runtime.screen_actions import ScreenActions
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.screenshots import StepScreenshots
from tapir.runtime.session_model import (
    CallFacts,
    GrounderLike,
    ResolvedTarget,
    SessionConfig,
    SessionStats,
    action_label,
)
from tapir.runtime.settle import Expectation, region_digest
from tapir.runtime.simulator import SimulatorHooks
from tapir.runtime.trace import MaskedTrace, NullTrace, TraceSink
from tapir.runtime.waiting import Waiter
from tapir.runtime.watching import Watching

__all__ = ["DeviceRuntime", "GrounderLike", "SessionConfig", "SessionStats", "ResolvedTarget", "action_label"]


class DeviceRuntime:
    """Implements ``tapir.dsl.runtime_api.UIRuntime`` over a ``Device``, a grounder and a document.

    ``on_close`` runs when the interpreter releases the runtime (a simulator is stopped there).
    The trace sink belongs to the runtime from then on and is closed with it. ``wait_clock`` is
    what waits and ``sleep()`` pass (default: the host's; a simulator's moves its own time);
    ``artifacts`` the folder screenshots go to (default ``tapir-artifacts/<script>/``); ``safety``
    what the run is allowed to do (default: nothing sensitive, no other app; the script's
    ``# allow:`` lines in ``source`` are read here). ``screenshots`` captures the screen at the
    start and after each call that sent input or failed (off when None). A runtime is also a
    context manager that closes it.
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
        screenshots: StepScreenshots | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        wait_clock: WaitClock | None = None,
        artifacts: Path | None = None,
        safety: Safety | None = None,
    ) -> None:
        self.document = document
        self.grounder = grounder
        self.config = config or SessionConfig()
        self.stats = SessionStats()
        self.safety = safety if safety is not None else Safety()
        self.safety.apply_header(source)
        #: The sink as given (``rebind`` hands it on); everything is written masked, through ``_sink``.
        self._given_sink: TraceSink = trace or NullTrace()
        self._sink: TraceSink = MaskedTrace(self._given_sink, self.safety.secrets.redactor)
        self.screen = ScreenCache(device, grounder, self.config, self.stats, clock=clock, sleep=sleep)
        self.calls = CallTrace(self.screen, self._sink, source, screenshots)
        self.guards = Guards(document, self.screen, self.safety, self.calls.write)
        self.guards.check_tokens()
        self.calls.mask_error = self.guards.mask_error
        self.reacher = Reacher(document, self.screen, self.config)
        self.reacher.handed_over = self.guards.confinement.handed_over  # the same set, kept up to date there
        self.lists = ListAccess(self.screen, self.reacher, grounder, self.config, self.calls)
        self.checks = ActionChecks(self.screen, self.reacher)
        self.steps = PathSteps(document, self.screen, self.reacher, self.lists, self.checks, self.calls,
                               guards=self.guards)
        self.navigator = Navigator(self.steps, self.config.navigation)
        # the one late link: reaching navigates, and navigation steps use list access
        self.reacher.navigator = self.navigator
        self.resolver = Resolver(self.screen, self.reacher, self.lists)
        self.watching = Watching(document, self.screen, self.reacher, self.checks, self.calls, guards=self.guards)
        self.reacher.watching = self.watching
        # a system dialog over the app (a permission prompt) is the watchers' before it is the
        # confinement's: answering it is how the run gets back to its app
        self.guards.confinement.watch = self.watching.check
        self.wait_clock: WaitClock = wait_clock or HostClock(clock, sleep)
        self.waiter = Waiter(self.screen, self.reacher, grounder, self.watching, self.wait_clock, self.config)
        self.screen_actions = ScreenActions(document, self.screen, self.checks, self.guards, self.waiter, self.config)
        self.artifacts = Artifacts(artifacts if artifacts is not None else default_folder(script))
        self.app_control = AppControl(document, self.screen, self.artifacts, confinement=self.guards.confinement)
        self._on_close = on_close
        self._closed = False
        #: What only a simulator offers (its clock, drift, an app's state), when this runtime started
        #: one (``connect`` sets it; ``tapir.runtime.simulator.SimulatorHooks``); None on a phone.
        self.simulator: SimulatorHooks | None = None
        session: dict[str, Any] = {
            "event": "session", "device": getattr(device, "serial", str(device)),
            "document": document.source, "app": document.app.package, "script": script,
        }
        if screenshots is not None:
            session["screenshot"] = screenshots.take(device, "000-start")
        self._sink.write(session)

    def __enter__(self) -> DeviceRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def device(self) -> Device:
        return self.screen.device

    @device.setter
    def device(self, device: Device) -> None:
        self.screen.device = device

    @property
    def notices(self) -> list[str]:
        """What the guards did that the person should hear of (another app left), and what the
        grounder had to do without (the embedding stage, when a match needed it), in words."""
        return [*self.guards.notices, *getattr(self.grounder, "notes", ())]

    # =========================================================================================
    # UIRuntime

    def _confined(self, span: Span, fn: Callable[[CallFacts], Any]) -> Callable[[CallFacts], Any]:
        """``fn`` after the confinement check (another app in front is left, or stops the run)."""
        def run(c: CallFacts) -> Any:
            self.guards.confinement.ensure(c, span)
            return fn(c)

        return run

    def tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
        self.calls.run("tap", handle, child, span,
                       self._confined(span, lambda c: self._tap(handle, child, span, c, long=False)))

    def long_tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
        self.calls.run("long_tap", handle, child, span,
                       self._confined(span, lambda c: self._tap(handle, child, span, c, long=True)))

    def set_text(self, handle: ElementHandle, text: str | Secret, span: Span) -> None:
        # the trace's args hold the Secret itself: MaskedTrace writes it as *****
        self.calls.run("set_text", handle, None, span,
                       self._confined(span, lambda c: self._set_text(handle, text, span, c)), args={"text": text})

    def scroll(self, handle: ElementHandle, direction: str, span: Span) -> bool:
        result: bool = self.calls.run("scroll", handle, None, span,
                                      self._confined(span, lambda c: self._scroll(handle, direction, span, c)),
                                      args={"direction": direction})
        return result

    def get_text(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> str:
        def read(c: CallFacts) -> str:
            t = self.resolver.resolve(handle, child, span, c, act=False)
            # a secret typed into a field that shows it comes back masked: the script never holds it
            return self.guards.mask(node_text(t.obs.tree, t.node))

        result: str = self.calls.run("get_text", handle, child, span, self._confined(span, read), action=False)
        return result

    def get_attributes(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> dict[str, Any]:
        def read(c: CallFacts) -> dict[str, Any]:
            t = self.resolver.resolve(handle, child, span, c, act=False)
            # an item's state includes the views inside it (a radio row is checked when its radio is)
            attributes: dict[str, Any] = self.guards.mask_value(node_attributes(t.obs.tree, t.node, item=t.is_item))
            return attributes

        result: dict[str, Any] = self.calls.run("get_attributes", handle, child, span, self._confined(span, read),
                                                action=False)
        return result

    def item_count(self, handle: ElementHandle, span: Span) -> int:
        def count(c: CallFacts) -> int:
            el = self.lists.list_element(handle, span, "len()")
            return len(self.lists.scan(el, span, c, until=lambda st: False).sigs)

        result: int = self.calls.run("len", handle, None, span, self._confined(span, count), action=False)
        return result

    def item(self, handle: ElementHandle, index: int, span: Span) -> ElementHandle:
        def get(c: CallFacts) -> ElementHandle:
            el = self.lists.list_element(handle, span, "indexing")
            if index < 0:
                raise ActionError(f"index {index} is out of range for {handle}", span)
            state = self.lists.scan(el, span, c, until=lambda st: len(st.sigs) > index)
            if index >= len(state.sigs):
                raise ActionError(f"index {index} is out of range: {handle} has {len(state.sigs)} items", span)
            return handle.at(index)

        result: ElementHandle = self.calls.run("item", handle, None, span, self._confined(span, get), action=False,
                                               args={"index": index})
        return result

    def iter_items(self, handle: ElementHandle, span: Span) -> Iterator[ElementHandle]:
        """The items of a list in order, each reached only when the loop asks for it (a loop that
        breaks after the first item does not scroll the list); one ``item`` trace line each.

        The loop's body may change the list. When it removed its item ("delete every ticked
        item"), the next item moved up into its place: the place is visited again (the item that
        came after now shows there) rather than skipping that item. When it moved its item further
        down (a checklist that sorts ticked items last), the item is not visited twice: an item
        (by its texts) is visited at most as often as the list shows it."""
        index = 0
        # the place of the item visited last, its signature and that of the item after it
        last: tuple[int, Sig, Sig] | None = None
        visited: Counter[Sig] = Counter()
        while True:
            def get(c: CallFacts, i: int = index) -> ElementHandle | None:
                nonlocal index, last
                el = self.lists.list_element(handle, span, "iteration")
                if last is not None:
                    at, here, after = last
                    state = self.lists.scan(el, span, c, until=lambda st: len(st.sigs) > at)
                    if at < len(state.sigs) and after is not None and after != here and state.sigs[at] == after:
                        i = at  # removed: its place holds the next item now
                while True:
                    state = self.lists.scan(el, span, c, until=lambda st, j=i: len(st.sigs) > j)  # type: ignore[misc]
                    if i >= len(state.sigs):
                        return None
                    sig = state.sigs[i]
                    if sig is None or visited[sig] < state.sigs.count(sig):
                        break
                    i += 1  # moved here from a place visited before
                visited[sig] += 1
                snap = state.snaps[i]
                if snap is not None:  # the loop is at this item: a path through "an item" takes it
                    self.steps.chosen[el.name] = node_text(snap.obs.tree, snap.node)
                else:
                    self.steps.chosen.pop(el.name, None)
                index = i
                last = (i, sig, state.sigs[i + 1] if i + 1 < len(state.sigs) else None)
                return handle.at(i)

            found: ElementHandle | None = self.calls.run("item", handle, None, span, self._confined(span, get),
                                                         action=False, args={"index": index})
            if found is None:
                return
            yield found
            index += 1

    def match(self, handle: ElementHandle, query: str | dict[str, Any], span: Span) -> ElementHandle:
        def find(c: CallFacts) -> ElementHandle:
            el = self.lists.list_element(handle, span, "match()")
            if isinstance(query, str):
                self.steps.chosen[el.name] = query  # the script's item of this list, for navigation
            actions = self.stats.device_actions
            try:
                c.extra["index"] = self.lists.find_match(el, query, span, c)
            except ScreenNotReached as exc:
                if self.stats.device_actions != actions:
                    raise
                # ``$dialog__list.match("x").tap()``: a read may not open the dialog, the tap may;
                # the item is looked up when it is used (a read of it fails then, as here)
                c.extra["deferred"] = exc.message
            return handle.matching(query)

        result: ElementHandle = self.calls.run("match", handle, None, span, self._confined(span, find), action=False,
                                               args={"query": query})
        return result

    def back(self, span: Span) -> None:
        self.calls.run("back", None, None, span, lambda c: self._key("back", c, Expectation(change=True)))

    def enter(self, span: Span) -> None:
        self.calls.run("enter", None, None, span,
                       self._confined(span, lambda c: self._key("enter", c, Expectation(change=False))))

    def wait_for(self, target: ElementHandle | str, gone: bool, timeout: float, span: Span, *,
                 watchers: bool = True, must: bool = False) -> bool:
        if isinstance(target, str):
            name, handle, args = "wait_text", None, {"text": target, "timeout": timeout}
        else:
            name = "wait_gone" if gone else ("wait" if watchers else "exists")
            handle, args = target, {"timeout": timeout}
        def wait(c: CallFacts) -> bool:
            if watchers:  # exists() sends nothing to the device, not even to leave another app
                self.guards.confinement.ensure(c, span)
            return self.waiter.wait(target, gone=gone, timeout=timeout, span=span, c=c, watchers=watchers, must=must)

        result: bool = self.calls.run(name, handle, None, span, wait, action=False, args=args)
        return result

    def sleep(self, seconds: float, span: Span) -> None:
        def pause(c: CallFacts) -> None:
            self.wait_clock.sleep(seconds)
            self.screen.expire()  # the screen may have changed meanwhile

        self.calls.run("sleep", None, None, span, pause, action=False, args={"seconds": seconds})

    def simulated_seconds(self) -> float:
        """Seconds waits and sleeps passed on a simulated clock (``UIRuntime`` docstring)."""
        return self.wait_clock.simulated

    def app(self, action: str, extras: dict[str, Any] | None, span: Span) -> None:
        def control(c: CallFacts) -> None:
            self.app_control.run(action, extras, c, span)
            # a restarted or cleared app shows its lists afresh: what was known of them is void
            self.lists.lists.clear()

        self.calls.run(f"{action}_app", None, None, span, control, args={"args": extras} if extras else None)

    def screenshot(self, name: str | None, span: Span) -> str:
        result: str = self.calls.run("screenshot", None, None, span,
                                     lambda c: self.app_control.screenshot(name, c, span), action=False,
                                     args={"name": name} if name else None)
        return result

    def watch(self, watcher: Watcher, span: Span) -> None:
        self.calls.run("watch", None, None, span, lambda c: self.watching.add(watcher, span), action=False,
                       args={"watcher": watcher.name, "rule": watcher.describe(), "limit": watcher.limit})

    # -- screen-level actions (``tapir.dsl.screen_calls.ScreenRuntime``): no element, no navigation,
    # no confinement (they act on whatever is in front, as back() does); taps pass the sensitive guard

    def tap_text(self, text: str, long: bool, timeout: float, span: Span) -> None:
        self.calls.run("long_tap_text" if long else "tap_text", None, None, span,
                       lambda c: self.screen_actions.tap_text(text, long=long, timeout=timeout, span=span, c=c),
                       args={"text": text})

    def tap_at(self, x: float, y: float, long: bool, span: Span) -> None:
        self.calls.run("tap_at", None, None, span,
                       lambda c: self.screen_actions.tap_at(x, y, long=long, span=span, c=c), args={"x": x, "y": y})

    def swipe_screen(self, direction: str, span: Span) -> bool:
        result: bool = self.calls.run("swipe", None, None, span, lambda c: self.screen_actions.swipe(direction, c=c),
                                      args={"direction": direction})
        return result

    def press_key(self, keycode: str, span: Span) -> None:
        self.calls.run("press_key", None, None, span, lambda c: self.screen_actions.press_key(keycode, c=c),
                       args={"key": keycode})

    def type_text(self, text: str | Secret, span: Span) -> None:
        # the trace's args hold the Secret itself: MaskedTrace writes it as *****
        self.calls.run("type_text", None, None, span,
                       lambda c: self.screen_actions.type_text(text, span=span, c=c), args={"text": text})

    def hide_keyboard(self, span: Span) -> bool:
        result: bool = self.calls.run("hide_keyboard", None, None, span,
                                      lambda c: self.screen_actions.hide_keyboard(c=c))
        return result

    def open_link(self, url: str, span: Span) -> None:
        def run(c: CallFacts) -> None:
            self.screen_actions.open_link(url, span=span, c=c)
            self.lists.lists.clear()  # another screen, perhaps another app: what lists knew is void

        self.calls.run("open_link", None, None, span, run, args={"url": url})

    def failure_dump(self) -> str | None:
        """The last hierarchy dump read (else a fresh one), for a failure's artifacts, with the
        run's secret values masked (a field may show one). None when the device is gone."""
        try:
            xml = self.screen.last_xml or self.device.dump_hierarchy()
        except TapirError:
            return None
        return self.guards.mask(xml)

    def rebind(self, document: AppDocument, grounder: GrounderLike) -> DeviceRuntime:
        """A runtime for another document on the same device (a REPL that switches documents).

        The new runtime takes over the device, configuration, trace sink, simulator and close
        action; this one is closed without them (the device stays up)."""
        new = DeviceRuntime(self.device, document, grounder, config=self.config, trace=self._given_sink,
                            on_close=self._on_close, clock=self.screen.clock, sleep=self.screen.sleep,
                            wait_clock=self.wait_clock, artifacts=self.artifacts.folder, safety=self.safety)
        new.simulator = self.simulator
        self.calls.close()
        self._on_close = None
        self._closed = True
        return new

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.calls.close()
            self._sink.write({"event": "end", "t": self.screen.elapsed(), "stats": self.stats.as_dict()})
        finally:
            try:
                self._sink.close()
            finally:
                if self._on_close is not None:
                    self._on_close()

    # =========================================================================================
    # Actions

    def _tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span, c: CallFacts, *, long: bool) -> None:
        t = self.resolver.resolve(handle, child, span, c, act=True)
        last = handle.path[-1] if handle.path and child is None and t.is_item else None
        if isinstance(last, Match) and isinstance(last.query, str):
            inner = self.checks.shown_target(t.obs.tree, t.node, last.query)
            if inner is not None:  # the day of a month page, not the page's centre
                t = c.target = dataclasses.replace(t, node=inner)
        self.checks.check_tappable(t, handle, span)
        shown = f"{handle}" + (f" / {child}" if child is not None else "")
        self.guards.sensitive.check("long tap" if long else "tap", t.node, t.obs, element=t.element, shown=shown,
                                    item=t.is_item, span=span)
        x, y = self.checks.tap_point(t.node, t.obs)
        c.point = (x, y)
        device, screen = self.screen.device, self.screen
        if long:
            screen.input(lambda: device.long_tap(x, y, self.config.long_tap_ms), c)
        else:
            screen.input(lambda: device.tap(x, y), c)
        after = screen.settle(Expectation(change=True, screen=t.element.leads_to), c).observation
        # AutoCheck's "did it do anything": a tap that changed nothing is worth seeing in the trace
        c.extra["changed"] = after.digest != t.obs.digest

    def _scroll(self, handle: ElementHandle, direction: str, span: Span, c: CallFacts) -> bool:
        el = self.reacher.element(handle.name, span)
        if handle.path:
            raise ActionError(f"scroll() works on a list or scroll view, not on an item ({handle})", span)
        if el.is_list and direction in ("up", "down", "page_up", "page_down"):
            state, view = self.lists.list_view(el, span, c, read=False)
            moved, _ = self.lists.scroll_list(el, state, view, direction, span, c)
            c.extra["moved"] = moved
            return not moved
        t = self.resolver.resolve(handle, None, span, c, act=True)
        before = region_digest(t.obs.tree, t.node)
        self.screen.swipe(t.node.bounds, direction, c)
        self.stats.list_scrolls += 1
        # an unmoved view is looked at twice: it may not have redrawn yet
        after = self.screen.settle(Expectation(change=True), c).observation
        g = self.reacher.present(el, after)
        moved = g is None or region_digest(after.tree, g.node) != before
        c.extra["moved"] = moved
        return not moved

    def _set_text(self, handle: ElementHandle, text: str | Secret, span: Span, c: CallFacts) -> None:
        t = self.resolver.resolve(handle, None, span, c, act=True)
        self.guards.check_secret(text, t, str(handle), span)
        self.checks.type_into(t, text, span, c, handle=handle)
        typed = self.document.element(handle.name)
        self.steps.typed_on = typed.screen if typed is not None else None

    def _key(self, key: str, c: CallFacts, expect: Expectation) -> None:
        obs = self.screen.observe()
        c.observed, c.screen_before = True, obs.screen
        device = self.screen.device
        self.screen.input(lambda: device.key(key), c)
        self.screen.settle(expect, c)
