"""DroidTask tasks replayed through Tapir, scored with the upstream metric.

A thin wrapper over the evaluation harness (``tapir eval DROIDTASK_DIR --oracle`` does the same
with a table): every DroidTask app whose recording (raw states and events) and AutoDroid-V2
document are in ``../shared/upstream/droidtask`` (applauncher and clock) is a replay suite
(``tapir.eval.droidtask``); each task's ground-truth trace becomes a Tapir script, which runs on
the recording replayed as a simulated app behind a real adb server, with the imported document.
A task passes when every ground-truth action (``tap: <text/alt>``, typed text; scrolls dropped)
is in the runtime's action log.

    python bench/droidtask_replay.py [--upstream DIR] [--scripts] [-j N]

Prints JSON: per app and overall tasks passed / total, and per task whether it passed, the error,
the missing actions, the reversed redundancy ratio, dumps and device actions (with ``--scripts``
also each script, what was expected and what was performed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("TAPIR_UPSTREAM") or str(REPO.parent / "shared" / "upstream")
    parser.add_argument("--upstream", default=default,
                        help="the shared upstream folder (default: $TAPIR_UPSTREAM, else ../shared/upstream)")
    parser.add_argument("--scripts", action="store_true", help="include each generated script and the action logs")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="simulators running at once (default: 1)")
    args = parser.parse_args(argv)
    folder = Path(args.upstream) / "droidtask"
    if not (folder / "tasks.json").is_file():
        print(json.dumps({"error": f"no DroidTask data in {args.upstream}"}))
        return 2
    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray adb server on 5037

    from tapir.eval import EvalConfig, OracleSource, load_suite, report_json, run_suite

    run = run_suite(load_suite(folder), OracleSource(), EvalConfig(jobs=args.jobs))
    data = report_json(run)
    apps: dict[str, dict[str, Any]] = {}
    for t in data["tasks"]:
        app = apps.setdefault(t["app"], {"passed": 0, "finished": 0, "total": 0, "tasks": {}})
        app["passed"] += t["success"]
        app["finished"] += t["finished"]
        app["total"] += 1
        name = t["id"].split("/", 1)[1] + ".yaml"  # the trace's name, as DroidTask names its tasks
        entry = {"name": name, "task": t["task"], "passed": t["success"], "finished": t["finished"],
                 "error": t["error"], "missing": t["missing_actions"], "verdict": t["verdict"], "steps": t["steps"],
                 "actions": t["actions"], "rrr": t["rrr"], "dumps": t["dumps"], "device_actions": t["device_actions"],
                 "seconds": t["wall_s"]}
        if args.scripts:
            entry.update(script=t["script"], expected=list(_expected(run, t["id"])), performed=t["action_log"])
        app["tasks"][name] = entry
    dumps = sum(t["dumps"] for t in data["tasks"])
    inputs = sum(t["device_actions"] for t in data["tasks"])
    print(json.dumps({
        "metric": "DroidTask (upstream): every ground-truth action in the action log",
        "apps": apps,
        "passed": data["passed"],
        "finished": data["finished"],
        "total": data["total"],
        "rrr": data["rrr"],
        "dumps": dumps,
        "device_actions": inputs,
        "dumps_per_device_action": round(dumps / inputs, 3) if inputs else None,
        "seconds": data["wall_s"],
    }, indent=2))
    return 0


def _expected(run: Any, task_id: str) -> tuple[str, ...]:
    return next(t.actions for t in run.suite.tasks if t.id == task_id)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
