"""Round-trip times of the simulated device through the REAL adb server; prints JSON.

    python bench/adb_roundtrip.py [--n 50] [--app music]

Starts a simulator with a private adb server (adbutils' bundled adb, or the one on PATH) and
times, over adbutils (which opens two TCP connections and sleeps 10 ms on each close, so about
22 ms is the floor of any operation against any server):

* ``dump_adbutils``: ``AdbDevice.dump_hierarchy()`` (shell ``uiautomator dump`` + sync pull);
* ``dump_one_shell``: one shell round trip ``rm -f F; uiautomator dump F; cat F`` (what
  Tapir's runtime sends);
* ``tap``: ``AdbDevice.click(x, y)`` (``input tap``);
* ``shell_echo``: ``AdbDevice.shell("echo x")``, the transport floor;
* ``dump_adb_cli``: ``adb exec-out uiautomator dump /dev/tty`` with the adb CLI (a process each time).

Tapir's own device layer no longer goes through adbutils for commands: ``bench/step_speed.py``
times its round trips next to a raw socket. Reports median and p90 in milliseconds. The app is a
sample app when they are installed (default music), else the home screen.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {"median_ms": round(statistics.median(ordered) * 1000, 2), "p90_ms": round(p90 * 1000, 2),
            "n": len(ordered)}


def _time(fn: Callable[[], object], n: int) -> dict[str, float]:
    fn()  # warm up: first connections, lazy imports
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return _stats(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=50, help="samples per measurement")
    parser.add_argument("--app", default="music", help="sample app to put on screen (if installed)")
    args = parser.parse_args(argv)
    # adbutils must never start a stray server on 5037 if ours goes away.
    os.environ["ADBUTILS_ADB_PATH"] = "/bin/false"

    from tapir.sim.launch import known_app_names, resolve_app, start_sim

    apps = [resolve_app(args.app)] if args.app in known_app_names() else []
    with start_sim(apps, foreground=apps[0].package if apps else None) as sim:
        d = sim.adb_device()
        version = subprocess.run([sim.adb_path, "version"], capture_output=True, text=True).stdout.splitlines()
        dump_path = "/data/local/tmp/bench_dump.xml"
        results = {
            "shell_echo": _time(lambda: d.shell("echo x"), args.n),
            "dump_adbutils": _time(d.dump_hierarchy, args.n),
            "dump_one_shell": _time(
                lambda: d.shell(f"rm -f {dump_path}; uiautomator dump {dump_path}; cat {dump_path}"), args.n),
            # a tap on the status-bar strip, which no sample app reacts to, keeps the screen fixed
            "tap": _time(lambda: d.click(540, 40), args.n),
            "dump_adb_cli": _time(lambda: subprocess.run(
                sim.adb_command("exec-out", "uiautomator", "dump", "/dev/tty"), env=sim.env(),
                capture_output=True, check=True), max(5, args.n // 5)),
        }
        print(json.dumps({
            "benchmark": "adb_roundtrip",
            "adb": " / ".join(version[:2]),
            "app": apps[0].package if apps else "launcher",
            "dump_bytes": len(d.dump_hierarchy()),
            "python": sys.version.split()[0],
            "results": results,
        }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
