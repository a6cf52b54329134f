"""The dump cache under ``DeviceRuntime``: one dump per action reused until the next, settling
after an action, and the device inputs (counted in the session's statistics)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.docgen.model import AppDocument
from tapir.dsl.errors import DeviceError, HierarchyError
from tapir.runtime.device import Device
from tapir.runtime.hierarchy.model import Bounds
from tapir.runtime.hierarchy.parse import parse_uiautomator
from tapir.runtime.session_model import Call, GrounderLike, SessionConfig, SessionStats, how_grounded
from tapir.runtime.settle import (
    Expectation,
    Observation,
    Settled,
    foreground_package,
    settle,
    tree_digest,
)
from tapir.runtime.trace import TraceSink


class ScreenCache:
    """The current dump and the inputs that invalidate it (``DeviceRuntime`` sets the fields)."""

    device: Device
    document: AppDocument
    grounder: GrounderLike
    config: SessionConfig
    trace: TraceSink
    stats: SessionStats
    _clock: Callable[[], float]
    _sleep: Callable[[float], None]
    _t0: float
    _obs: Observation | None
    #: Bumped by every action but a list swipe: reads from older dumps are no longer trusted as is.
    _generation: int
    _ground_cache: dict[tuple[str, int, int | None], Any]

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

    def _settle(self, expect: Expectation, c: Call | None, *, scrolling: bool = False) -> Settled:
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
        return {"grounded": how_grounded(g), "score": getattr(g, "score", None),
                "runner_up": getattr(g, "runner_up_score", None)}

    def _elapsed(self) -> float:
        return round(self._clock() - self._t0, 4)

    # =========================================================================================
    # Device inputs (counted)

    def _input(self, fn: Callable[[], None], c: Call | None) -> None:
        started = self._clock()
        fn()
        self.stats.device_actions += 1
        if c is not None:
            c.act_s += self._clock() - started

    def _keys(self, names: list[str], c: Call | None) -> None:
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

    def _swipe(self, bounds: Bounds, direction: str, c: Call | None) -> None:
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
