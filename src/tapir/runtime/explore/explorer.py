"""Explore an app through the device interface a real phone offers, recording a trace.

The explorer drives any ``Device`` (a phone or emulator over adb, or the simulated device behind
a real adb server) like a GUI testing tool: it starts the app fresh, then repeatedly dumps the
screen, lets the strategy pick an action (``actions``, ``strategy``), performs it and records the
step (hierarchy before, action with its target node, hierarchy after; a screenshot per new state)
in a trace (``tapir.docgen.build.trace``), until the step or time budget is spent or the strategy
has nothing left to try.

When an action leaves the app (a share sheet, the launcher after BACK on the first screen, a
link), the step is recorded as it happened, then the explorer presses BACK once and, if the app
is still not in front, starts it again. Elements the danger policy marks are never touched.
Ctrl-C stops it cleanly: the step under way is finished (an interrupt in the middle of one could
leave the device connection's lock held, and the teardown waiting on it), everything recorded so
far is kept and the trace is marked incomplete; a second Ctrl-C stops at once.

    explorer = Explorer(device, ExploreConfig("org.tapir.music", max_steps=200), writer,
                        on_progress=print)
    result = explorer.run()
    print(result.summary())
"""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from tapir.core.errors import TapirError
from tapir.docgen.build.anatomy import Anatomy
from tapir.docgen.build.policy import DangerPolicy
from tapir.docgen.build.trace import Action, Target, TraceWriter
from tapir.hierarchy import UITree, parse_uiautomator
from tapir.runtime.device import Device
from tapir.runtime.explore.actions import Candidate, candidates
from tapir.runtime.explore.strategy import Strategy, make_strategy


@dataclass(frozen=True)
class ExploreConfig:
    package: str
    strategy: str = "dfs"
    seed: int | None = 0
    max_steps: int = 200
    #: Wall-clock budget in seconds (None: only the step budget).
    max_seconds: float | None = None
    screenshots: bool = True
    policy: DangerPolicy = field(default_factory=DangerPolicy.default)
    #: Seconds to wait after an action before dumping the screen.
    delay: float = 0.5
    #: Dump again (up to this many dumps) until two dumps agree: apps keep drawing after a tap.
    max_dumps: int = 3
    #: Stop the app before the first start, so exploration begins on a fresh launch.
    fresh_start: bool = True


@dataclass(frozen=True)
class ExploreProgress:
    steps: int
    max_steps: int
    screens: int
    elapsed: float
    #: Seconds left (from the time budget, else estimated from the pace so far); None at first.
    remaining: float | None
    last: str


@dataclass
class ExploreResult:
    trace: str
    steps: int = 0
    states: int = 0
    screens: int = 0
    restarts: int = 0
    left_app: int = 0
    #: Dangerous elements never touched: their label -> the word that made them dangerous.
    avoided: dict[str, str] = field(default_factory=dict)
    actions: Counter[str] = field(default_factory=Counter)
    interrupted: bool = False
    #: The signal that stopped the run ("SIGINT", "SIGTERM"); "" when none did.
    stopped_by: str = ""
    exhausted: bool = False
    elapsed: float = 0.0
    error: str | None = None

    def summary(self) -> str:
        how = ("interrupted: kept what was recorded" if self.interrupted else
               f"stopped by an error: {self.error}" if self.error else
               "nothing left to try" if self.exhausted else "budget spent")
        acts = ", ".join(f"{k} {n}" for k, n in sorted(self.actions.items()))
        lines = [f"explored {self.steps} steps in {self.elapsed:.1f} s ({how}): {self.screens} screens, "
                 f"{self.states} distinct hierarchies -> {self.trace}",
                 f"actions: {acts or 'none'}; left the app {self.left_app} times; {self.restarts} restarts"]
        if self.avoided:
            shown = ", ".join(f"{k!r} ({v})" for k, v in list(self.avoided.items())[:6])
            lines.append(f"never touched (dangerous): {shown}" + (" ..." if len(self.avoided) > 6 else ""))
        return "\n".join(lines)


@dataclass
class _Obs:
    state: str
    xml: str
    tree: UITree
    package: str
    activity: str
    anatomy: Anatomy | None


class Explorer:
    def __init__(
        self,
        device: Device,
        config: ExploreConfig,
        writer: TraceWriter,
        *,
        on_progress: Callable[[ExploreProgress], None] | None = None,
        strategy: Strategy | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.device = device
        self.config = config
        self.writer = writer
        self.on_progress = on_progress
        self.strategy = strategy or make_strategy(config.strategy, config.seed)
        self.clock = clock
        self.sleep = sleep
        self.result = ExploreResult(str(writer.directory))
        self._screens: set[str] = set()
        self._started = 0.0

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> ExploreResult:
        cfg = self.config
        self._started = self.clock()
        main = threading.current_thread() is threading.main_thread()
        # SIGTERM (a time limit, `kill PID`) stops as Ctrl-C does: the trace is closed, not cut
        wanted = [signal.SIGTERM] + ([] if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else [signal.SIGINT])
        previous = {s: signal.signal(s, self._on_interrupt) for s in wanted} if main else {}
        try:
            return self._run(cfg)
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler if handler is not None else signal.SIG_DFL)

    def _on_interrupt(self, signum: int, frame: object) -> None:
        if self.result.interrupted:
            raise KeyboardInterrupt  # the second Ctrl-C: at once
        self.result.interrupted = True  # the loop stops after this step
        self.result.stopped_by = signal.Signals(signum).name

    def _run(self, cfg: ExploreConfig) -> ExploreResult:
        try:
            if cfg.fresh_start:
                self.device.app_stop(cfg.package)
            obs = self._observe()
            obs = self._step(obs, Action("start"), note="launch")
            last_outside: str | None = None
            while not self._spent():
                if obs.anatomy is None:
                    # outside the app: BACK once (a share sheet, a browser), then start it again
                    if last_outside != "back" and not _is_launcher(obs):
                        last_outside = "back"
                        obs = self._step(obs, Action("back"), note="outside the app")
                    else:
                        last_outside = None
                        self.result.restarts += 1
                        obs = self._step(obs, Action("start"), note="restart: outside the app")
                    continue
                last_outside = None
                found = candidates(obs.anatomy, cfg.policy)
                for key, reason in found.dangerous.items():
                    self.result.avoided.setdefault(_label_of(key), reason)
                screen = obs.anatomy.state_key
                choice = self.strategy.choose(screen, found.actions)
                if choice is None:
                    if self.strategy.done:
                        self.result.exhausted = True
                        break
                    self.result.restarts += 1
                    self.device.app_stop(cfg.package)
                    obs = self._step(obs, Action("start"), note="restart: nothing new here")
                    continue
                obs = self._step(obs, self._action(choice, obs.tree))
                after = obs.anatomy.state_key if obs.anatomy is not None else None
                self.strategy.record(screen, choice, after)
                if after is None:
                    self.result.left_app += 1
        except KeyboardInterrupt:
            self.result.interrupted = True
        except TapirError as exc:
            self.result.error = exc.message
            self._close()
            raise
        self._close()
        return self.result

    def _close(self) -> None:
        r = self.result
        r.elapsed = self.clock() - self._started
        r.states = self.writer.state_count
        r.screens = len(self._screens)
        self.writer.close(complete=not r.interrupted and r.error is None, strategy=self.strategy.name,
                          budget={"steps": self.config.max_steps, "seconds": self.config.max_seconds},
                          screens=r.screens, restarts=r.restarts, left_app=r.left_app,
                          interrupted=r.interrupted, exhausted=r.exhausted, error=r.error,
                          avoided=r.avoided)

    def _spent(self) -> bool:
        if self.result.interrupted or self.result.steps >= self.config.max_steps:
            return True
        limit = self.config.max_seconds
        return limit is not None and self.clock() - self._started >= limit

    # -- one step -------------------------------------------------------------------------------

    def _action(self, choice: Candidate, tree: UITree) -> Action:
        target = Target.of(tree.node(choice.node)) if choice.node is not None else None
        return Action(choice.kind, target, choice.text, choice.direction)

    def _step(self, obs: _Obs, action: Action, *, note: str | None = None) -> _Obs:
        self._perform(action, obs.tree)
        after = self._observe()
        self.writer.add_step(obs.state, action, after.state, note)
        self.result.steps += 1
        self.result.actions[action.kind] += 1
        self._report(action)
        return after

    def _perform(self, action: Action, tree: UITree) -> None:
        d = self.device
        kind = action.kind
        if kind == "start":
            d.app_start(self.config.package)
        elif kind == "back":
            d.key("back")
        elif kind == "enter":
            d.key("enter")
        else:
            assert action.target is not None
            b = action.target.bounds
            x, y = _inside(b.x1, b.y1, b.x2, b.y2, tree)
            if kind == "tap":
                d.tap(x, y)
            elif kind == "long_tap":
                d.long_tap(x, y)
            elif kind == "text":
                d.tap(x, y)  # focus the field first
                d.input_text(action.text or "")
            elif kind == "scroll":
                # the finger moves up: the content scrolls down
                top, bottom = b.y1 + (b.y2 - b.y1) // 5, b.y2 - (b.y2 - b.y1) // 5
                d.swipe(x, bottom, x, top, 400)
        if self.config.delay:
            self.sleep(self.config.delay)

    def _dump(self) -> str:
        xml = self.device.dump_hierarchy()
        for _ in range(self.config.max_dumps - 1):
            if not self.config.delay:
                break
            self.sleep(self.config.delay / 2)
            again = self.device.dump_hierarchy()
            if again == xml:
                break
            xml = again
        return xml

    def _observe(self) -> _Obs:
        xml = self._dump()
        package, activity = self.device.current_app()
        shot = None
        if self.config.screenshots and self.writer.known_state(xml, package=package, activity=activity) is None:
            try:
                shot = self.device.screenshot_png()
            except TapirError:
                shot = None  # a screenshot is a nicety: never lose a step over it
        state = self.writer.add_state(xml, package=package, activity=activity, screenshot=shot)
        tree = parse_uiautomator(xml)
        anatomy = None
        if package == self.config.package:
            anatomy = Anatomy.of(tree, activity=activity, package=package)
            self._screens.add(anatomy.state_key)
        return _Obs(state, xml, tree, package, activity, anatomy)

    def _report(self, action: Action) -> None:
        if self.on_progress is None:
            return
        r = self.result
        elapsed = self.clock() - self._started
        remaining: float | None
        if self.config.max_seconds is not None:
            by_steps = (self.config.max_steps - r.steps) * elapsed / max(r.steps, 1)
            remaining = min(max(self.config.max_seconds - elapsed, 0.0), by_steps)
        else:
            remaining = (self.config.max_steps - r.steps) * elapsed / r.steps if r.steps else None
        self.on_progress(ExploreProgress(r.steps, self.config.max_steps, len(self._screens), elapsed, remaining,
                                         action.describe()))


def _is_launcher(obs: _Obs) -> bool:
    """The home screen: BACK does nothing useful there, the app is started at once."""
    return "launcher" in obs.package.lower() or "launcher" in obs.activity.lower()


def _inside(x1: int, y1: int, x2: int, y2: int, tree: UITree) -> tuple[int, int]:
    """The centre of the bounds, clipped to the screen."""
    width = tree.width or 10**6
    height = tree.height or 10**6
    cx1, cy1, cx2, cy2 = max(x1, 0), max(y1, 0), min(x2, width), min(y2, height)
    if cx2 <= cx1 or cy2 <= cy1:
        return (x1 + x2) // 2, (y1 + y2) // 2
    return (cx1 + cx2) // 2, (cy1 + cy2) // 2


def _label_of(key: str) -> str:
    """A readable label from a candidate key (``...>Button#@t=Delete:tap`` -> ``Delete``)."""
    core = key.rsplit(":", 1)[0] if key.endswith((":tap", ":long", ":text", ":scroll")) else key
    if ":item:" in core:
        return core.rsplit(":item:", 1)[1]
    last = core.rsplit(">", 1)[-1]
    if "@" in last:
        return last.split("@", 1)[1].split("=", 1)[-1]
    return last.split("#", 1)[-1] or last
