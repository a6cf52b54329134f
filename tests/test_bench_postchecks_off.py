"""``bench/postchecks_off.py`` reads a run's report as a run with the post-run checks off would
have ended: at its first finished run, whose verdict the report keeps only for a first attempt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent / "bench" / "postchecks_off.py"
FINDING = "PostRunCheck: the script finished, but never acted on what the task names"


def task(tid: str, success: bool, first_ok: bool, events: list[str], errors: list[str]) -> dict[str, Any]:
    return {"id": tid, "success": success, "first_attempt_ok": first_ok, "events": events,
            "attempt_errors": errors}


def run(tmp_path: Path, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"tasks": tasks}), encoding="utf-8")
    out = subprocess.run([sys.executable, str(BENCH), str(report)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_first_finished_run_decides_where_the_report_keeps_it(tmp_path: Path) -> None:
    tasks = [
        task("a/untouched", True, True, [], []),                                 # no finding: the same
        task("a/completed", True, False, ["completed:dialog-left-open"], []),   # the OK appended
        task("a/repaired", True, False, ["postcheck:unused-element"], [FINDING]),
        task("a/false-alarm", False, True, ["postcheck:unused-element:passing"], [FINDING]),
        # the first attempt stopped on an error: its repair's verdict is not in the report
        task("a/after-repair", True, False, ["postcheck:option-not-picked"], ["ElementNotFound: x", FINDING]),
        # a correction came first: the corrected run's verdict is not kept either
        task("a/corrected", False, False, ["corrected:wrong-list", "completed:dialog-left-open"], []),
    ]
    got = run(tmp_path, tasks)
    assert got["passed_on"] == 4
    assert got["passed_only_with_checks"] == ["a/completed", "a/repaired"]
    assert got["failed_only_with_checks"] == ["a/false-alarm"]
    assert got["unknown"] == ["a/after-repair", "a/corrected"] and got["unknown_passed_on"] == ["a/after-repair"]
    # 4 - 2 + 1 = 3 known; the unknown one that passed may fail, the one that failed may pass
    assert (got["passed_off_min"], got["passed_off_max"]) == (2, 4)


def test_not_a_report_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for text in ("{}", '{"tasks": [{"id": "a/b"}]}', '{"tasks": [1]}', "not json"):
        bad.write_text(text, encoding="utf-8")
        out = subprocess.run([sys.executable, str(BENCH), str(bad)], capture_output=True, text=True)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not a tapir eval report" in out.stderr
