"""Watchers at run time: the declared interruptions (``tapir.core.watchers.Watcher``) dismissed
when they get in the way.

A watcher is checked only when the runtime cannot find what the script asked for: before it
navigates to an absent element, when navigation or the element's own screen fails it, and
between the looks of a wait (``docs/runtime.md``, "Watchers"). A check looks at the current
dump: the first watcher whose trigger shows there (and whose target is there to tap) fires, the
screen settles, and the caller tries again. Every firing is counted (``SessionStats.watchers``)
and is one ``watcher`` line in the trace. A watcher's tap passes the sensitive-action guard
(``tapir.runtime.guards``): a watcher may decline a permission prompt, not accept one, unless the
run allows it. Two caps keep an interruption that keeps coming back
from looping: each watcher fires at most its ``limit`` times in a run, and one script call lets
watchers fire at most ``MAX_PER_CALL`` times.

    watching = Watching(document, screen, reacher, checks, trace)
    after = watching.check(screen.observe(), call)    # the settled screen, or None: nothing fired
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tapir.core.document import AppDocument
from tapir.core.errors import ActionError, Span
from tapir.core.watchers import Watcher
from tapir.hierarchy.model import UINode, UITree
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import CallFacts, action_label, bounds_tuple
from tapir.runtime.settle import Expectation, Observation

if TYPE_CHECKING:
    from tapir.runtime.action_checks import ActionChecks
    from tapir.runtime.call_trace import CallTrace
    from tapir.runtime.guards import Guards
    from tapir.runtime.reaching import Reacher

__all__ = ["MAX_PER_CALL", "Watching", "text_node"]

#: Firings one script call allows, whatever the watchers' own limits.
MAX_PER_CALL = 3


def text_node(tree: UITree, text: str) -> UINode | None:
    """The first visible view showing ``text`` (its text or description, whole, ignoring case and
    surrounding space)."""
    wanted = text.strip().casefold()
    for n in tree.nodes:
        if n.visible and wanted in (n.text.strip().casefold(), n.content_desc.strip().casefold()):
            return n
    return None


class Watching:
    """The run's watchers, the document's and the script's (see the module docstring)."""

    def __init__(self, document: AppDocument, screen: ScreenCache, reacher: Reacher, checks: ActionChecks,
                 trace: CallTrace, *, guards: Guards | None = None) -> None:
        self.guards = guards
        self.screen = screen
        self.reacher = reacher
        self.checks = checks
        self.trace = trace
        self.rules: dict[str, Watcher] = {w.name: w for w in document.watchers}
        #: Firings per watcher name (also in the session's stats).
        self.fired = screen.stats.watchers
        #: Watchers that wanted to fire but had reached their limit (named in errors).
        self.exhausted: set[str] = set()

    def add(self, watcher: Watcher, span: Span) -> None:
        """A script's ``watch()``: its elements must be elements of the document that show once."""
        for name in (watcher.tap, watcher.when):
            if name is None:
                continue
            el = self.reacher.element(name, span)
            if el.item_of is not None or el.is_list:
                raise ActionError(f"watch(): ${name} is a list or inside a list's items; a watcher taps (or "
                                  "looks for) an element that shows once", span)
        self.rules[watcher.name] = watcher

    def check(self, obs: Observation, c: CallFacts | None) -> Observation | None:
        """Fire the first watcher whose trigger shows on ``obs``; the settled screen after its tap,
        or None when none fired."""
        if not self.rules:
            return None
        if c is not None and len(c.extra.get("watchers", ())) >= MAX_PER_CALL:
            return None  # this call has seen enough interruptions: let it fail and say where it is
        for w in self.rules.values():
            if not self._triggered(w, obs):
                continue
            target = self._target(w, obs)
            if target is None:
                continue  # the trigger shows but there is nothing to tap: not this watcher's screen
            if self.fired.get(w.name, 0) >= w.limit:
                if w.name not in self.exhausted:
                    self.exhausted.add(w.name)
                    self.trace.write({"event": "watcher", "name": w.name, "rule": w.describe(), "exhausted": True,
                                      "limit": w.limit, "t": self.screen.elapsed()})
                continue
            return self._fire(w, target, obs, c)
        return None

    def exhausted_hint(self) -> str | None:
        """For an error: which watchers stopped firing because of their limit."""
        if not self.exhausted:
            return None
        names = ", ".join(sorted(self.exhausted))
        return f"watcher {names} reached its limit of firings in this run; the interruption may keep coming back"

    def _triggered(self, w: Watcher, obs: Observation) -> bool:
        if w.trigger_text is not None:
            return text_node(obs.tree, w.trigger_text) is not None
        assert w.trigger is not None
        return self.reacher.present(self.reacher.element(w.trigger, None), obs) is not None

    def _target(self, w: Watcher, obs: Observation) -> UINode | None:
        if w.tap_text is not None:
            return text_node(obs.tree, w.tap_text)
        assert w.tap is not None
        g = self.reacher.present(self.reacher.element(w.tap, None), obs)
        return g.node if g is not None else None

    def _fire(self, w: Watcher, node: UINode, obs: Observation, c: CallFacts | None) -> Observation:
        screen = self.screen
        started = screen.clock()
        if self.guards is not None:
            el = self.reacher.element(w.tap, None) if w.tap is not None else None
            shown = f"${w.tap}" if w.tap is not None else f"the view showing {w.tap_text!r}"
            self.guards.sensitive.check("tap", node, obs, element=el, shown=shown, item=False, span=None,
                                        by=f"the watcher {w.name}")
        x, y = self.checks.tap_point(node, obs)
        device = screen.device
        screen.input(lambda: device.tap(x, y), c)
        after = screen.settle(Expectation(change=True), c).observation
        count = self.fired[w.name] = self.fired.get(w.name, 0) + 1
        self.trace.write({
            "event": "watcher", "name": w.name, "rule": w.describe(), "count": count, "limit": w.limit,
            "element": f"${w.tap}" if w.tap is not None else None, "label": action_label(obs.tree, node),
            "bounds": list(bounds_tuple(node.bounds)),
            "point": [x, y], "screen_before": obs.screen, "screen_after": after.screen,
            "t": screen.elapsed(), "ms": round((screen.clock() - started) * 1000, 1),
        })
        if c is not None:
            c.extra.setdefault("watchers", []).append(w.name)
        return after
