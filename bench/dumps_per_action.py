"""Hierarchy dumps per UI action over the sample scripts (issue 5's target: at most 1.5).

Runs every ``samples/**/*.tap`` the way ``tapir test samples`` does (a fresh simulated device per
script, behind a real adb server) and prints JSON: per script the dumps, the device inputs the
runtime sent (taps, swipes, keys, typed texts, app starts: every one is followed by at least
one dump) and the script's own UI actions; then the totals and both ratios.

    python bench/dumps_per_action.py [PATH ...]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from tapir.runner.collect import collect
from tapir.runner.suite import RunOptions, run_tests

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray adb server on 5037
    paths = argv or [str(REPO / "samples")]
    started = time.monotonic()
    run = run_tests(collect(paths), RunOptions(devices=("sim",)))
    runs = [(r, r.attempts[-1]) for r in run.results if r.attempts]
    scripts = {
        r.script: {"ok": r.ok, "dumps": a.dumps, "device_actions": a.device_actions, "script_actions": a.actions,
                   "dumps_per_device_action": round(a.dumps / a.device_actions, 3) if a.device_actions else None}
        for r, a in runs
    }
    dumps = sum(a.dumps for _, a in runs)
    inputs = sum(a.device_actions for _, a in runs)
    actions = sum(a.actions for _, a in runs)
    print(json.dumps({
        "scripts": scripts,
        "passed": run.passed,
        "failed": run.failed,
        "dumps": dumps,
        "device_actions": inputs,
        "script_actions": actions,
        "dumps_per_device_action": round(dumps / inputs, 3) if inputs else None,
        "dumps_per_script_action": round(dumps / actions, 3) if actions else None,
        "mean_of_script_ratios": round(sum(s["dumps_per_device_action"] or 0 for s in scripts.values())
                                       / max(len(scripts), 1), 3),
        "target": 1.5,
        "seconds": round(time.monotonic() - started, 2),
    }, indent=2))
    return 0 if run.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
