"""Where the wall time of a whole ``tapir run`` goes, by sampling its main thread; prints JSON.

    python bench/run_profile.py [--interval-ms 5] [--runs 3] -- samples/music/longest_song.tap --device sim:music

Runs ``tapir run ARGS`` in this process ``--runs`` times (the first one also pays for imports,
so it is reported apart: ``first``), and a sampling thread records the main thread's stack
every ``--interval-ms``. Each sample is put in the first category its stack matches:

* ``imports``: a module being imported (``importlib._bootstrap`` on the stack);
* ``adbutils``: inside adbutils (listing devices; before issue 9 also every device command);
* ``simulator start/stop``: starting or stopping the simulated device and its adb server;
* ``device round trip``: waiting for the adb server and the device (``runtime/adb_transport.py``);
* ``parse dump``, ``grounding``, ``document load``, ``interpreter``, ``runtime glue``, ``other``.

The simulator runs in threads of this same process, so its own work shows as waiting in the
main thread (``device round trip``), as a phone's would. Wall times come from
``time.perf_counter``; the same runs without the sampler are timed too (``unsampled``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import threading
import time
from collections import Counter
from types import FrameType
from typing import Any

CATEGORIES: list[tuple[str, tuple[str, ...]]] = [
    ("imports", ("importlib._bootstrap", "<frozen importlib")),
    ("adbutils", ("/adbutils/",)),
    ("simulator start/stop", ("sim/launch.py", "runtime/simulator.py")),
    ("device round trip", ("runtime/adb_transport.py", "runtime/device.py")),
    ("parse dump", ("hierarchy/parse.py",)),
    ("grounding", ("runtime/grounding/", "hierarchy/")),
    ("document load", ("docgen/",)),
    ("interpreter", ("tapir/dsl/", "/dsl/")),
    ("runtime glue", ("runtime/",)),
]


def categorise(frame: FrameType | None) -> str:
    files = []
    while frame is not None:
        files.append(frame.f_code.co_filename)
        frame = frame.f_back
    for name, needles in CATEGORIES:
        if any(needle in f for f in files for needle in needles):
            return name
    return "other"


class Sampler(threading.Thread):
    """Samples one thread's stack at a fixed interval until stopped."""

    def __init__(self, target: int, interval: float) -> None:
        super().__init__(daemon=True, name="run-profile-sampler")
        self.target, self.interval = target, interval
        self.counts: Counter[str] = Counter()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            frame = sys._current_frames().get(self.target)
            if frame is not None:
                self.counts[categorise(frame)] += 1

    def stop(self) -> Counter[str]:
        self._stop_event.set()
        self.join()
        return self.counts


def one_run(argv: list[str], interval: float) -> tuple[float, Counter[str], int]:
    from tapir.cli import main

    sampler = Sampler(threading.get_ident(), interval)
    sampler.start()
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["run", *argv])
    wall = time.perf_counter() - start
    return wall, sampler.stop(), code


def shares(counts: Counter[str], wall: float) -> dict[str, Any]:
    total = sum(counts.values()) or 1
    return {name: {"share": round(n / total, 3), "ms": round(wall * 1000 * n / total, 1)}
            for name, n in counts.most_common()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval-ms", type=float, default=5.0, help="sampling interval")
    parser.add_argument("--runs", type=int, default=3, help="runs in this process (the first pays for imports)")
    parser.add_argument("run_args", nargs=argparse.REMAINDER, help="arguments of `tapir run` (after --)")
    args = parser.parse_args()
    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    if not run_args:
        parser.error("give the arguments of `tapir run`, e.g. -- samples/music/longest_song.tap --device sim:music")
    interval = args.interval_ms / 1000
    out: dict[str, Any] = {"benchmark": "run_profile", "argv": ["tapir", "run", *run_args],
                           "python": sys.version.split()[0], "interval_ms": args.interval_ms}
    walls, later = [], Counter[str]()
    for i in range(args.runs):
        wall, counts, code = one_run(run_args, interval)
        if code != 0:
            out["error"] = f"run {i + 1} exited with status {code}"
            break
        walls.append(wall)
        if i == 0:
            out["first"] = {"wall_ms": round(wall * 1000, 1), "categories": shares(counts, wall)}
        else:
            later.update(counts)
    if len(walls) > 1:
        wall = statistics.median(walls[1:])
        out["later"] = {"runs": len(walls) - 1, "median_wall_ms": round(wall * 1000, 1),
                        "categories": shares(later, wall)}
    # what sampling costs: as many runs again without the sampler
    from tapir.cli import main as tapir_main

    unsampled = []
    for _ in walls[1:]:
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            tapir_main(["run", *run_args])
        unsampled.append(time.perf_counter() - start)
    if unsampled:
        out["unsampled_median_wall_ms"] = round(statistics.median(unsampled) * 1000, 1)
    print(json.dumps(out, indent=2))
    return 0 if "error" not in out else 1


if __name__ == "__main__":
    sys.exit(main())
