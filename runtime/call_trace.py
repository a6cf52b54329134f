"""One script call of ``DeviceRuntime``: its counters, its error span and its trace line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.dsl.errors import Span, TapirError
from tapir.dsl.values import ElementHandle
from tapir.runtime.grounding.items import node_text
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import Call, action_label, bounds_tuple


class CallTrace(ScreenCache):
    """Runs one script call and writes its JSON trace line."""

    _seq: int
    _source_lines: list[str]

    # =========================================================================================
    # One script call: timing, errors, the trace line

    def _run(self, name: str, handle: ElementHandle | None, child: ElementHandle | None, span: Span,
             fn: Callable[[Call], Any], *, action: bool = True, args: dict[str, Any] | None = None) -> Any:
        c = Call(name, self._clock(), self.stats.dumps, self.stats.device_actions)
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

    def _write_call(self, c: Call, handle: ElementHandle | None, child: ElementHandle | None, span: Span,
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
            record["bounds"] = list(bounds_tuple(t.node.bounds))
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
