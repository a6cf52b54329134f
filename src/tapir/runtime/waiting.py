"""Presence checks and waits: whether an element, a list item chosen by ``match`` or a text is on
the screen, now or within a timeout.

A presence check never navigates, scrolls or taps: it answers about the screen as it is. The
first look uses the current dump by the fresh-dump rule (``ScreenCache``: never one from before
the last input, never older than ``SettleConfig.fresh_s``); every later look dumps again, one
settle interval (``SettleConfig.poll_interval_s``; on a simulator, whose apps keep time in whole
seconds, one simulated second) after the last, on the runtime's clock (``tapir.runtime.clock``: a
simulator's time moves on instead of the host sleeping). Those dumps are counted apart
(``SessionStats.wait_dumps``): they measure how long the app took, not how well the runtime
acts. Between
looks, a wait (not ``exists``) lets the watchers dismiss an interruption that hides what it waits
for.

    waiter = Waiter(screen, reacher, grounder, watching, clock, config)
    waiter.wait(ElementHandle("notes_screen__note_list"), gone=False, timeout=10, span=span, c=call)
"""

from __future__ import annotations

from tapir.core.errors import ActionError, Span, WaitTimeout
from tapir.dsl.values import ElementHandle, Match
from tapir.runtime.clock import WaitClock
from tapir.runtime.reaching import Reacher
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts, GrounderLike, SessionConfig
from tapir.runtime.settle import Observation
from tapir.runtime.watching import Watching, text_node

__all__ = ["Waiter"]


class Waiter:
    """``DeviceRuntime.wait_for`` (see the module docstring)."""

    def __init__(self, screen: ScreenCache, reacher: Reacher, grounder: GrounderLike, watching: Watching,
                 clock: WaitClock, config: SessionConfig) -> None:
        self.screen = screen
        self.reacher = reacher
        self.grounder = grounder
        self.watching = watching
        self.clock = clock
        self.config = config

    def wait(self, target: ElementHandle | str, *, gone: bool, timeout: float, span: Span, c: CallFacts,
             watchers: bool = True, must: bool = False) -> bool:
        """True once ``target`` is shown (``gone``: not shown); False, or ``WaitTimeout`` when
        ``must``, after ``timeout`` seconds."""
        clock = self.clock
        deadline = clock.now() + timeout
        interval = max(self.config.settle.poll_interval_s, clock.resolution)
        obs = self.screen.observe()
        if not c.observed:
            c.observed, c.screen_before = True, obs.screen
        looks, waited = 0, 0.0
        while True:
            looks += 1
            if self.shown(target, obs, span) != gone:
                c.extra.update(looks=looks, waited_s=round(waited, 3))
                return True
            if watchers:
                after = self.watching.check(obs, c)
                if after is not None:
                    obs = after
                    continue
            now = clock.now()
            if now >= deadline:
                break
            pause = min(interval, deadline - now)
            clock.sleep(pause)
            waited += pause
            obs = self.screen.refresh()
            self.screen.stats.wait_dumps += 1
        c.extra.update(looks=looks, waited_s=round(waited, 3), timed_out=True)
        if not must:
            return False
        what = repr(target) if isinstance(target, str) else str(target)
        verb = "was still on the screen" if gone else ("did not show" if isinstance(target, str) else "did not appear")
        hint = self.watching.exhausted_hint() or (
            "the app may be slower than the timeout, or the screen shows something else; "
            "a screenshot(...) before the wait shows what it was" if not gone else None)
        raise WaitTimeout(f"{what} {verb} within {timeout:g} s: the device shows {self.reacher.where(obs)}", span,
                          hint=hint)

    def shown(self, target: ElementHandle | str, obs: Observation, span: Span) -> bool:
        """Whether ``target`` is on ``obs`` (no input, no navigation)."""
        if isinstance(target, str):
            return text_node(obs.tree, target) is not None
        el = self.reacher.element(target.name, span)
        if not target.path:
            return self.reacher.present(el, obs) is not None
        if len(target.path) != 1 or type(target.path[0]) is not Match or not el.is_list:
            raise ActionError(f"{target}: a presence check or wait takes an element, or a list item chosen by "
                              "match() (an item by position needs the list scrolled)", span)
        g = self.reacher.present(el, obs)
        if g is None:
            return False
        items = self.grounder.items(el.name, obs.tree)
        return self.grounder.match_item(el.name, items, obs.tree, target.path[0].as_query()) is not None
