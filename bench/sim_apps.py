"""Time the simulated apps in-process: a uiautomator dump, a tap, a swipe and a screenshot.

    python bench/sim_apps.py [--n 30]

Prints one JSON object: per sample app, median and p90 milliseconds and the dump size (nodes and
bytes) of the launch screen; and the same for the replayed applauncher recording when
../shared/upstream is present. These are the simulator's own costs, without adb in between.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from tapir.sim.apps import APP_NAMES, get_app
from tapir.sim.replay import ReplayApp

RECORDING = Path(__file__).resolve().parent.parent.parent / "shared" / "upstream" / "droidtask" / "apps" / "applauncher"


def timed(fn: Callable[[], object], n: int) -> dict[str, float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"median_ms": round(statistics.median(samples), 3), "p90_ms": round(samples[int(0.9 * (n - 1))], 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=30)
    n = parser.parse_args().n
    out: dict[str, object] = {}
    for name in APP_NAMES:
        app = get_app(name)
        xml = app.dump_xml()
        x, y = app.screen_size[0] // 2, app.screen_size[1] // 2
        out[name] = {
            "nodes": xml.count("<node "),
            "bytes": len(xml.encode()),
            "dump": timed(app.dump_xml, n),
            # a tap in the middle of the launch screen, then back to it: two inputs per sample
            "tap_and_back": timed(lambda app=app, x=x, y=y: (app.tap(x, y), app.launch()), n),
            "swipe": timed(lambda app=app, x=x: app.swipe(x, 1900, x, 1400, 100), n),
            "screenshot": timed(app.screenshot_png, max(3, n // 5)),
        }
    if RECORDING.is_dir():
        start = time.perf_counter()
        replay = ReplayApp(RECORDING)
        load_ms = (time.perf_counter() - start) * 1000
        replay._trees.clear()
        out["replay_applauncher"] = {
            "load_ms": round(load_ms, 1),
            "states": len(replay.states),
            "events": len(replay.events),
            "first_dump_uncached": timed(lambda: (replay._trees.clear(), replay.dump_xml()), n),
            "dump_cached": timed(replay.dump_xml, n),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
