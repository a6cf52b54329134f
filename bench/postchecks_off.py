"""What a `tapir eval --model` run would have scored with the post-run checks off, read from its
report without running anything.

    python bench/postchecks_off.py docs/results/droidtask-qwen2.5-coder-1.5b-rows.json

With ``--no-postchecks`` (which turns completion off too: completion appends the step a finding
names) the repair loop ends at the first run that finishes. Up to that run everything is the same
with the checks on or off (greedy decoding, the same prompts), so where a task's first attempt
finished without a correction, ``first_attempt_ok`` (that run's verdict, as the model wrote it) is
the task's outcome with the checks off. Where the first finished run came after a repair or a
correction, the report does not keep its verdict: those tasks are counted apart, and the result
is a range. (One difference is not read: with the checks off, a failed run's repair prompt also
loses the screen-walk finding ``tapir eval`` adds to its error.)

Prints JSON: passes with the checks on, the range with them off, the tasks that passed only
because of them (exactly known), those that failed only because of them, and the unknown ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_ACTED = ("postcheck", "completed", "completion-broke")
_CORRECTED = ("corrected", "correction-broke")


def counterfactual(tasks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The post-run checks off, for the tasks of one report (see the module docstring)."""
    passed = sum(bool(t["success"]) for t in tasks)
    lost: list[str] = []
    gained: list[str] = []
    unknown: dict[str, bool] = {}
    for t in tasks:
        events = list(t.get("events") or ())
        acted = [i for i, e in enumerate(events) if e.startswith(_ACTED)]
        if not acted:
            continue  # the checks found nothing: the same run either way
        errors = list(t.get("attempt_errors") or ())
        corrected_before = any(e.startswith(_CORRECTED) for e in events[:acted[0]])
        if (not errors or errors[0].startswith("PostRunCheck")) and not corrected_before:
            off = bool(t.get("first_attempt_ok"))
            if t["success"] and not off:
                lost.append(t["id"])
            elif off and not t["success"]:
                gained.append(t["id"])
        else:
            unknown[t["id"]] = bool(t["success"])
    known = passed - len(lost) + len(gained)
    return {
        "tasks": len(tasks), "passed_on": passed,
        "passed_off_min": known - sum(unknown.values()),
        "passed_off_max": known + sum(not s for s in unknown.values()),
        "passed_only_with_checks": lost, "failed_only_with_checks": gained,
        "unknown": sorted(unknown), "unknown_passed_on": sorted(k for k, s in unknown.items() if s),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path, help="a `tapir eval --model ... --json` report")
    args = ap.parse_args(argv)
    try:
        report = json.loads(args.report.read_text(encoding="utf-8"))
        result = counterfactual(report["tasks"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        print(f"{args.report}: not a tapir eval report ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 2
    print(json.dumps({"report": str(args.report), **result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
