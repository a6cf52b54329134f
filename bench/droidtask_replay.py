"""DroidTask tasks replayed through Tapir, scored with the upstream metric.

For every DroidTask app whose recording (raw states and events) and AutoDroid-V2 document are in
``../shared/upstream`` (applauncher and clock), each task's ground-truth trace becomes a Tapir
script (``tapir.runtime.droidtask``), which runs on the recording replayed as a simulated app
behind a real adb server, with the imported document. A task passes when every ground-truth
action (``tap: <text/alt>``, typed text; scrolls dropped) is in the runtime's action log.

    python bench/droidtask_replay.py [--upstream DIR] [--scripts]

Prints JSON: per task the verdict, the script, what was expected and performed; per app and
overall tasks passed / total, dumps and device actions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from tapir.runtime.droidtask import evaluate_app, replay_apps
from tapir.runtime.sim.launch import free_port, kill_adb_server, start_adb_server

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", default=str(REPO.parent / "shared" / "upstream"))
    parser.add_argument("--scripts", action="store_true", help="include each generated script and the action logs")
    args = parser.parse_args(argv)
    upstream = Path(args.upstream)
    if not (upstream / "droidtask").is_dir():
        print(json.dumps({"error": f"no DroidTask data in {upstream}"}))
        return 2
    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray adb server on 5037
    started = time.monotonic()
    port = free_port()
    start_adb_server(port)
    apps: dict[str, dict[str, object]] = {}
    try:
        for app in replay_apps(upstream):
            outcomes = evaluate_app(upstream, app, adb_port=port)
            tasks = {}
            for o in outcomes:
                entry = asdict(o)
                if not args.scripts:
                    for key in ("script", "performed", "expected"):
                        entry.pop(key)
                tasks[o.name] = entry
            apps[app] = {
                "passed": sum(o.passed for o in outcomes),
                "finished": sum(o.finished for o in outcomes),
                "total": len(outcomes),
                "tasks": tasks,
            }
    finally:
        kill_adb_server(port)
    outcomes_all = [t for a in apps.values() for t in a["tasks"].values()]  # type: ignore[attr-defined]
    passed = sum(a["passed"] for a in apps.values())  # type: ignore[misc]
    total = sum(a["total"] for a in apps.values())  # type: ignore[misc]
    dumps = sum(t["dumps"] for t in outcomes_all)
    inputs = sum(t["device_actions"] for t in outcomes_all)
    print(json.dumps({
        "metric": "DroidTask (upstream): every ground-truth action in the action log",
        "apps": apps,
        "passed": passed,
        "finished": sum(a["finished"] for a in apps.values()),  # type: ignore[misc]
        "total": total,
        "dumps": dumps,
        "device_actions": inputs,
        "dumps_per_device_action": round(dumps / inputs, 3) if inputs else None,
        "seconds": round(time.monotonic() - started, 2),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
