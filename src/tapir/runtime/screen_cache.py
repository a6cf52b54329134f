"""The screen as the session knows it: the last dump, reused while it is fresh, settling after
each input, the inputs themselves (counted) and groundings on the current dump.

    screen = ScreenCache(device, grounder, config, stats)
    obs = screen.observe()                       # the last dump, or a new one when it is stale
    screen.input(lambda: device.tap(540, 1200), call)
    obs = screen.settle(Expectation(change=True), call).observation
    g = screen.ground("songs_screen__song_list", obs)   # cached for this dump

A dump is reused by everything until the next input, for at most ``SettleConfig.fresh_s``
seconds: after that the next call dumps again (a screen also changes by itself). Every input but
a list swipe starts a new *generation*, and so does a fresh dump that shows a changed screen:
what list access read from older dumps is no longer trusted as is.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tapir.core.errors import DeviceError, HierarchyError
from tapir.hierarchy.model import Bounds, UINode
from tapir.hierarchy.parse import parse_uiautomator
from tapir.runtime.device import Device
from tapir.runtime.grounding.result import Grounding
from tapir.runtime.session_model import CallFacts, GrounderLike, SessionConfig, SessionStats
from tapir.runtime.settle import Expectation, Observation, Settled, foreground_package, settle, tree_digest


class ScreenCache:
    """The current dump and the inputs that invalidate it (see the module docstring)."""

    def __init__(self, device: Device, grounder: GrounderLike, config: SessionConfig, stats: SessionStats, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.device = device
        self.grounder = grounder
        self.config = config
        self.stats = stats
        self.clock = clock
        self.sleep = sleep
        self._t0 = clock()
        #: The last dump (None before the first).
        self.current: Observation | None = None
        #: The last dump before the last input was sent: where the last action was taken.
        self.acted_on: Observation | None = None
        self._last_raw: str | bytes | None = None
        self._dumped_at = 0.0
        #: Bumped by every input but a list swipe, and by a fresh dump of a changed screen.
        self.generation = 0
        self._grounded: dict[tuple[str, int, int | None], Grounding | None] = {}

    @property
    def last_xml(self) -> str | None:
        """The XML of the last dump (None before the first): failure artifacts keep it."""
        raw = self._last_raw
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw

    def elapsed(self) -> float:
        """Seconds since the session started (trace timestamps)."""
        return round(self.clock() - self._t0, 4)

    # =========================================================================================
    # Observing

    def observe(self, *, fresh: bool = True) -> Observation:
        """The current screen: the last dump while it is fresh (see the module docstring), else a
        new one. ``fresh=False`` reuses the last dump however old (within one call's work)."""
        if self.current is None:
            self.current = self._dump()
        elif fresh and self.clock() - self._dumped_at > self.config.settle.fresh_s:
            before = self.current
            self.current = self._dump()
            self._grounded.clear()
            self.stats.refresh_dumps += 1
            if self.current.digest != before.digest:
                self.generation += 1  # it changed by itself: what lists knew is only a hint now
        return self.current

    def refresh(self) -> Observation:
        """A new dump now, whatever the age of the last (a wait looking again)."""
        self.expire()
        return self.observe()

    def expire(self) -> None:
        """Let the next ``observe`` dump again: time passed that the cache's clock did not see (a
        wait on a simulated clock)."""
        self._dumped_at = float("-inf")

    def forget(self) -> None:
        """The device may have changed in ways the session did not see (a call was stopped
        between two device commands): the next call dumps again, and what lists knew of their
        items is only a hint, as after a screen that changed by itself."""
        self.current = None
        self.generation += 1
        self._grounded.clear()

    def _dump(self) -> Observation:
        # the bytes the device sent when its class offers them (the parser reads bytes); a
        # wrapper that only overrides dump_hierarchy is asked for that
        raw = getattr(type(self.device), "dump_hierarchy_bytes", None)
        xml: str | bytes = raw(self.device) if callable(raw) else self.device.dump_hierarchy()
        self._last_raw = xml
        self._dumped_at = self.clock()
        self.stats.dumps += 1
        try:
            try:
                tree = parse_uiautomator(xml)
            except HierarchyError:
                if not isinstance(xml, bytes):
                    raise
                tree = parse_uiautomator(xml.decode("utf-8", "replace"))  # a broken character or two
        except HierarchyError as exc:
            raise DeviceError(f"device {getattr(self.device, 'serial', '?')}: unreadable hierarchy dump: "
                              f"{exc.message}") from exc
        match = self.grounder.identify_screen(tree)
        return Observation(
            tree=tree,
            screen=match.name,
            digest=tree_digest(tree),
            package=foreground_package(tree),
            seq=self.stats.dumps,
            screen_score=match.score,
            at=self.elapsed(),
        )

    def settle(self, expect: Expectation, c: CallFacts | None, *, scrolling: bool = False) -> Settled:
        """Dump after an input until the screen can be trusted (``tapir.runtime.settle``)."""
        started = self.clock()
        done = settle(self._dump, self.current, expect, self.config.settle, self.sleep)
        self.stats.settle_extra_dumps += done.dumps - 1
        self.current = done.observation
        if not scrolling:
            self.generation += 1
        self._grounded.clear()
        if c is not None:
            c.settle_s += self.clock() - started
            c.settle_reason = done.reason
        return done

    def ground(self, name: str, obs: Observation, within: UINode | None = None) -> Grounding | None:
        """The grounder's answer for ``name`` on ``obs``, asked once per dump."""
        key = (name, obs.seq, within.id if within is not None else None)
        if key in self._grounded:
            return self._grounded[key]
        g = self.grounder.ground(name, obs.tree, within=within)
        if obs is self.current:
            self._grounded[key] = g
        return g

    # =========================================================================================
    # Device inputs (counted)

    def input(self, fn: Callable[[], None], c: CallFacts | None) -> None:
        started = self.clock()
        self.acted_on = self.current
        fn()
        self.stats.device_actions += 1
        if c is not None:
            c.act_s += self.clock() - started

    def keys(self, names: list[str], c: CallFacts | None) -> None:
        """Several key presses in one round trip where the device has a shell (``input keyevent``
        takes many codes), else one by one."""
        if not names:
            return
        shell = getattr(self.device, "shell", None)
        if callable(shell):
            codes = " ".join(n if n.startswith("KEYCODE_") else f"KEYCODE_{n.upper()}" for n in names)
            self.input(lambda: shell(f"input keyevent {codes}"), c)
            return
        for name in names:
            self.input(lambda name=name: self.device.key(name), c)  # type: ignore[misc]

    def swipe(self, bounds: Bounds, direction: str, c: CallFacts | None) -> None:
        """Swipe inside ``bounds`` to show what is ``direction`` (``down``: further down the list)."""
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
        self.input(lambda: self.device.swipe(x1, y1, x2, y2, self.config.swipe_ms), c)
