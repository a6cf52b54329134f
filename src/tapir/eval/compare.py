"""Two reports side by side: what changed, per task and per group (``tapir eval --compare A B``).

    a, b = load_report("oracle.json"), load_report("model.json")
    diff = compare_reports(a, b)
    print(diff.render())            # summary deltas, then each task whose outcome changed
    diff.regressions                # tasks that passed in A and do not in B

A task "changed" when its verdict changed, or its reversed redundancy ratio moved by at least a
percentage point, or it is in only one of the reports. Reports of different suites (their digests
differ) are still compared by task id, with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir.core.errors import UsageError
from tapir.eval.report import REPORT_FORMAT, failure_reason, percent, ratio, summary_rows

#: Smallest change of a task's reversed redundancy ratio worth reporting.
RRR_EPSILON = 0.01


def load_report(path: str | Path) -> dict[str, Any]:
    """A report written by ``tapir eval --json`` (UsageError for anything else)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"no such report: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the report {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT or not isinstance(data.get("tasks"), list):
        raise UsageError(f"{path} is not a report of `tapir eval --json` (format {REPORT_FORMAT})")
    return data


@dataclass(frozen=True)
class TaskChange:
    id: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None

    @property
    def kind(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        was, now = self.before["verdict"] == "pass", self.after["verdict"] == "pass"
        if was and not now:
            return "regressed"
        if now and not was:
            return "fixed"
        return "changed"

    def line(self) -> str:
        if self.before is None or self.after is None:
            present = self.after if self.before is None else self.before
            assert present is not None
            where = "only in B" if self.before is None else "only in A"
            return f"{self.id:<32} {where}: {present['verdict']}"
        before, after = self.before["verdict"], self.after["verdict"]
        text = f"{self.id:<32} {before} -> {after}" if before != after else f"{self.id:<32} {after}"
        if self.before.get("rrr") != self.after.get("rrr"):
            text += f"   RRR {ratio(self.before.get('rrr'))} -> {ratio(self.after.get('rrr'))}"
        why = failure_reason(self.after)
        if why:
            text += f"\n{'':<34}{why}"
        return text


@dataclass
class Comparison:
    a: Mapping[str, Any]
    b: Mapping[str, Any]
    changes: list[TaskChange] = field(default_factory=list)

    @property
    def regressions(self) -> list[TaskChange]:
        return [c for c in self.changes if c.kind == "regressed"]

    @property
    def same_suite(self) -> bool:
        return bool(self.a["suite"].get("digest") == self.b["suite"].get("digest"))

    def render(self) -> str:
        out = [f"A: {_describe(self.a)}", f"B: {_describe(self.b)}"]
        if not self.same_suite:
            out.append("warning: the reports come from different suites (digests differ); tasks are matched by id")
        settings_a, settings_b = self.a.get("source", {}).get("settings"), self.b.get("source", {}).get("settings")
        if settings_a != settings_b:
            out.append(f"source settings: A {json.dumps(settings_a, sort_keys=True)}")
            out.append(f"                 B {json.dumps(settings_b, sort_keys=True)}")
        out.append("")
        b_rows = dict(summary_rows(self.b))
        out.append(f"{'group':<20} {'success A':>10} {'success B':>10} {'change':>9}   {'RRR A':>7} {'RRR B':>7}")
        for name, sa in summary_rows(self.a):
            sb = b_rows.get(name)
            if sb is None:
                continue
            delta = (sb["success_rate"] - sa["success_rate"]) * 100
            out.append(f"{name:<20} {percent(sa['success_rate']):>10} {percent(sb['success_rate']):>10} "
                       f"{delta:>+8.1f}p   {ratio(sa['rrr']):>7} {ratio(sb['rrr']):>7}")
        out.append("")
        if not self.changes:
            out.append("no task changed")
        else:
            counts: dict[str, int] = {}
            for c in self.changes:
                counts[c.kind] = counts.get(c.kind, 0) + 1
            out.append(f"{len(self.changes)} task(s) changed: "
                       + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
            out += [c.line() for c in self.changes]
        return "\n".join(out)


def _describe(data: Mapping[str, Any]) -> str:
    return (f"{data['source']['name']} on {data['suite']['name']} ({data['total']} tasks, "
            f"{percent(data['success_rate'])}, started {data.get('started', '?')})")


def compare_reports(a: Mapping[str, Any], b: Mapping[str, Any]) -> Comparison:
    before = {t["id"]: t for t in a["tasks"]}
    after = {t["id"]: t for t in b["tasks"]}
    changes = []
    for ident in [*before, *(i for i in after if i not in before)]:
        x, y = before.get(ident), after.get(ident)
        if x is None or y is None or x["verdict"] != y["verdict"] or _rrr_moved(x, y):
            changes.append(TaskChange(ident, x, y))
    return Comparison(a, b, changes)


def _rrr_moved(x: Mapping[str, Any], y: Mapping[str, Any]) -> bool:
    rx, ry = x.get("rrr"), y.get("rrr")
    if rx is None or ry is None:
        return False
    return abs(float(rx) - float(ry)) >= RRR_EPSILON


__all__ = ["Comparison", "TaskChange", "compare_reports", "load_report"]
