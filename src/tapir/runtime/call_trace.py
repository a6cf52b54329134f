"""One script call of ``DeviceRuntime``: its counters, its error span and its trace line.

A script that polls (``while $x.get_text() != "done": pass``) makes the same read many thousand
times; the trace keeps the first line of such a run of identical reads (same call, element,
statement, result and screen) and then one ``repeat`` line with the count, written when the run
ends and, in case it never does, each time the count reaches a power of two (so a crash still
leaves how many there were). A trace grows with what changed, not with how long a loop spun.

With ``StepScreenshots`` (``tapir test --html``) every call that sent input to the device, or
failed, is followed by a screenshot, named on its line (``screenshot``); a screen unchanged since
the last one (same dump digest) names the same file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.core.errors import Span, TapirError
from tapir.dsl.values import ElementHandle
from tapir.hierarchy.model import UINode, UITree
from tapir.runtime.grounding.items import node_text
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.screenshots import StepScreenshots
from tapir.runtime.session_model import CallFacts, action_label, bounds_tuple
from tapir.runtime.trace import TraceSink

#: Fields that differ between identical reads (when and how long), left out of the comparison.
_VOLATILE = frozenset({"seq", "t", "ms", "dumps", "settled"})
#: Calls whose record says the tapped view's checked state before the tap.
_TAPS = frozenset({"tap", "long_tap"})


class CallTrace:
    """Runs one script call and writes its JSON trace line (see the module docstring)."""

    def __init__(self, screen: ScreenCache, trace: TraceSink, source: str | None,
                 screenshots: StepScreenshots | None = None, *,
                 mask_error: Callable[[TapirError], None] | None = None) -> None:
        self.screen = screen
        self.trace = trace
        self.screenshots = screenshots
        #: Masks secret values in a call's error before it is written or raised (the guards').
        self.mask_error = mask_error
        # the dump digest at the last screenshot, and its file (an unchanged screen reuses it)
        self._shot_digest: str | None = None
        self._shot_name: str | None = None
        self._source_lines = source.splitlines() if source else []
        self._seq = 0
        # the last read written, and how many identical ones followed it unwritten
        self._last_read: dict[str, Any] | None = None
        self._repeats = 0
        self._reported = 0

    def run(self, name: str, handle: ElementHandle | None, child: ElementHandle | None, span: Span,
            fn: Callable[[CallFacts], Any], *, action: bool = True, args: dict[str, Any] | None = None) -> Any:
        stats = self.screen.stats
        c = CallFacts(name, self.screen.clock(), stats.dumps, stats.device_actions)
        if action:
            stats.script_actions += 1
        else:
            stats.reads += 1
        error: TapirError | None = None
        result: Any = None
        try:
            result = fn(c)
            return result
        except TapirError as exc:
            if exc.span is None:
                exc.span = span
            if self.mask_error is not None:
                self.mask_error(exc)
            error = exc
            raise
        finally:
            self._write_call(c, handle, child, span, args, result, error, read=not action)

    def write(self, record: dict[str, Any]) -> None:
        """A line that is not a script call (navigation, scrolls): ends a run of repeated reads."""
        self._end_repeats()
        self.trace.write(record)

    def close(self) -> None:
        self._end_repeats()

    def _write_call(self, c: CallFacts, handle: ElementHandle | None, child: ElementHandle | None, span: Span,
                    args: dict[str, Any] | None, result: Any, error: TapirError | None, *, read: bool) -> None:
        self._seq += 1
        record = self._record(c, handle, child, span, args, result, error)
        if self.screenshots is not None and (error is not None or self.screen.stats.device_actions != c.actions0):
            record["screenshot"] = self._screenshot(c.name, fresh=error is not None)
        if read and error is None and c.navigation is None and self.screen.stats.device_actions == c.actions0:
            key = {k: v for k, v in record.items() if k not in _VOLATILE}
            if self._last_read is not None and key == self._last_read:
                self._repeats += 1
                if self._repeats & (self._repeats - 1) == 0:  # 1, 2, 4, 8...: a crash loses little
                    self._flush_repeats()
                return
            self._end_repeats()
            self._last_read = key
        else:
            self._end_repeats()
        self.trace.write(record)

    def _screenshot(self, call: str, *, fresh: bool) -> str | None:
        """The screen after a call (taken after its timings, so that it is the report's cost, not
        the call's). A screen whose dump is the same as at the last screenshot (a tap that changed
        nothing visible, a scroll at the end) names that file again instead of taking another;
        a failed call always gets its own."""
        assert self.screenshots is not None
        current = self.screen.current
        if not fresh and current is not None and current.digest == self._shot_digest:
            return self._shot_name
        name = self.screenshots.take(self.screen.device, f"{self._seq:03d}-{call}")
        self._shot_digest, self._shot_name = (current.digest if current is not None else None), name
        return name

    def _flush_repeats(self) -> None:
        if self._repeats > self._reported:
            last = self._last_read or {}
            self.trace.write({"event": "repeat", "call": last.get("call"), "element": last.get("element"),
                              "line": last.get("line"), "statement": last.get("statement"),
                              "count": self._repeats, "t": self.screen.elapsed()})
            self._reported = self._repeats

    def _end_repeats(self) -> None:
        self._flush_repeats()
        self._last_read = None
        self._repeats = self._reported = 0

    def _record(self, c: CallFacts, handle: ElementHandle | None, child: ElementHandle | None, span: Span,
                args: dict[str, Any] | None, result: Any, error: TapirError | None) -> dict[str, Any]:
        t = c.target
        stats = self.screen.stats
        record: dict[str, Any] = {
            "event": "action",
            "seq": self._seq,
            "t": self.screen.elapsed(),
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
            g = t.grounding
            record["score"] = g.score if g is not None else None
            record["runner_up"] = g.runner_up_score if g is not None else None
            if g is not None and g.detail:
                record["detail"] = g.detail
            record["bounds"] = list(bounds_tuple(t.node.bounds))
            record["text"] = node_text(t.obs.tree, t.node) or None
            record["label"] = action_label(t.obs.tree, t.node)
            if c.name in _TAPS:
                checked = _checked_before(t.obs.tree, t.node)
                if checked is not None:
                    # the state the tap changed: a tap on a box already ticked unticks it, which
                    # only the state before tells (tapir.codegen's toggle checks read it)
                    record["checked"] = checked
        if c.point is not None:
            record["point"] = list(c.point)
        if c.navigation is not None and c.navigation.steps:
            record["navigation"] = [s.step for s in c.navigation.steps]
            record["paths_tried"] = c.navigation.tried
        if c.navigation is not None and c.navigation.refused:
            record["not_taken"] = c.navigation.refused
        current = self.screen.current
        record["screen_before"] = c.screen_before
        record["screen_after"] = current.screen if current is not None else None
        if current is not None and current.screen is None:
            # a screen no document names (another app's: a permission prompt over the app): which
            # app, and the texts it shows, so that what comes after can say what was in the way
            record["app_after"] = current.package
            record["texts_after"] = _texts(current.tree.nodes)
        record["dumps"] = stats.dumps - c.dumps0
        record["device_actions"] = stats.device_actions - c.actions0
        if c.settle_reason:
            record["settled"] = c.settle_reason
        record["ms"] = {
            "ground": round(c.ground_s * 1000, 1), "act": round(c.act_s * 1000, 1),
            "settle": round(c.settle_s * 1000, 1), "total": round((self.screen.clock() - c.started) * 1000, 1),
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
        return record

    def _statement(self, span: Span) -> str | None:
        if 1 <= span.line <= len(self._source_lines):
            return self._source_lines[span.line - 1].strip()
        return None


def _texts(nodes: Any, limit: int = 8) -> list[str]:
    """The first ``limit`` distinct texts (or descriptions) of the visible views, in order."""
    texts: list[str] = []
    for n in nodes:
        label = (n.text or n.content_desc).strip()
        if n.visible and label and label not in texts:
            texts.append(label[:160])
            if len(texts) == limit:
                break
    return texts


def _checked_before(tree: UITree, node: UINode) -> bool | None:
    """Whether the tapped view was checked before the tap: its own state when it is checkable,
    else that of the one checkable view inside it (a settings row around its checkbox); None when
    it has none, or several."""
    if node.checkable:
        return bool(node.checked)
    inside = [n for n in tree.descendants(node.id) if n.checkable]
    return bool(inside[0].checked) if len(inside) == 1 else None

