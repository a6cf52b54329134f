"""Soak: the sample suite many times in one process, then many simulated devices at once;
memory, file descriptors, threads and adb servers must stay flat. Prints JSON.

    python bench/soak.py                                  # 100 rounds, then 8 devices x 3 rounds
    python bench/soak.py --rounds 10 --trace-rounds 3 --devices 4 --device-rounds 2
    python bench/soak.py --workload eval --rounds 20      # `tapir eval samples/suite --oracle`

**Rounds** (``--rounds``, in this process, one after another): ``tapir test samples`` through
``tapir.runner.run_tests`` (every sample script and suite reference, each on a fresh simulator
behind the run's own private adb server, failures' artifacts in a temporary folder), or with
``--workload eval`` the sample suite through ``tapir.eval.run_suite`` with the oracle. After
each round: RSS (``/proc/self/status``), open file descriptors, threads, and the adb servers the
rounds started that still answer.
``tracemalloc`` slows a round several times, so it traces only the last ``--trace-rounds``
rounds (10; 0: none): the memory it sees and the ten source lines whose traced memory grew most
between the first and the last of them. Reported: each figure's first, last and max, and the
growth from round 2 (the first round loads the models and caches) to the last, and over the
second half of the rounds (caches fill during the first rounds; a leak goes on growing). Ctrl-C
or SIGTERM (``timeout``) ends the rounds early: the rounds that finished are reported, marked
``interrupted``.

**Devices** (``--devices``): that many simulators attached to one adb server, each driven by
its own thread through the sample scripts of one app (the app's data reset before each script),
``--device-rounds`` times; reported: scripts run, failures (with their first errors), wall time,
and the same figures before and after.

Exit status 1 when a script failed, the rounds were interrupted, an adb server was left running,
fds grew by more than 2 or threads grew from round 2, or RSS grew past ``--slack`` MB over the
second half of the rounds run without tracemalloc.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
APPS = ("music", "notes", "clock", "contacts", "weather")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class AdbServers:
    """Records the port of every adb server this process starts, to tell which still run."""

    def __init__(self) -> None:
        from tapir.sim import launch

        self.ports: set[int] = set()
        self._launch = launch
        original = launch.start_adb_server

        def recording(port: int, adb: str | None = None) -> bool:
            started = original(port, adb)
            if started:
                self.ports.add(port)
            return started

        launch.start_adb_server = recording  # type: ignore[assignment]

    def running(self) -> int:
        return sum(self._launch.server_running(p) for p in self.ports)


def figures(servers: AdbServers) -> dict[str, Any]:
    gc.collect()
    out = {"rss_mb": rss_mb(), "fds": fds(), "threads": threading.active_count(), "adb_servers": servers.running()}
    if tracemalloc.is_tracing():
        out["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 2)
    return out


def workload(kind: str) -> Callable[[], tuple[int, int, list[str]]]:
    """One round: (scripts run, failed, first errors)."""
    if kind == "test":
        import tempfile

        from tapir.runner import RunOptions, collect, run_tests

        scripts = collect([SAMPLES])

        def test_round() -> tuple[int, int, list[str]]:
            with tempfile.TemporaryDirectory(prefix="tapir-soak-") as folder:
                # in this process (not one child a script, tapir test's default): the soak
                # measures what runs accumulate in the process that runs them
                run = run_tests(scripts, RunOptions(artifacts=Path(folder), in_process=True))
            errors = [f"{r.script}: {(r.error or '').splitlines()[0]}" for r in run.results if not r.ok]
            return len(run.results), run.failed, errors[:3]

        return test_round
    from tapir.eval import EvalConfig, OracleSource, load_suite, run_suite

    suite = load_suite(SAMPLES / "suite")

    def eval_round() -> tuple[int, int, list[str]]:
        run = run_suite(suite, OracleSource(), EvalConfig(jobs=1))
        bad = [r for r in run.results if r.verdict != "pass"]
        return len(run.results), len(bad), [f"{r.task}: {r.verdict} {r.error or ''}"[:200] for r in bad[:3]]

    return eval_round


def summary(series: list[dict[str, Any]], key: str) -> dict[str, Any]:
    values = [s[key] for s in series]
    base = values[1] if len(values) > 1 else values[0]
    # caches fill over the first rounds; a leak keeps growing in the second half too
    middle = values[len(values) // 2]
    return {"first": values[0], "last": values[-1], "max": max(values),
            "growth_from_round_2": round(values[-1] - base, 2),
            "growth_second_half": round(values[-1] - middle, 2)}


def soak_rounds(rounds: int, kind: str, trace_rounds: int, servers: AdbServers, progress: bool) -> dict[str, Any]:
    run_round = workload(kind)
    series: list[dict[str, Any]] = []
    failed_total = 0
    first_errors: list[str] = []
    started = time.monotonic()
    baseline = None
    interrupted = False
    for i in range(rounds):
        if trace_rounds and i == rounds - trace_rounds:
            tracemalloc.start(1)
        t0 = time.monotonic()
        try:
            ran, failed, errors = run_round()
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: report the rounds that finished
            interrupted = True
            break
        failed_total += failed
        first_errors = first_errors or errors
        point = {"round": i + 1, "scripts": ran, "failed": failed, "seconds": round(time.monotonic() - t0, 2),
                 **figures(servers)}
        series.append(point)
        if tracemalloc.is_tracing() and baseline is None:
            baseline = tracemalloc.take_snapshot()
        if progress:
            print(f"\rround {i + 1}/{rounds}: {ran} scripts, {failed} failed, rss {point['rss_mb']} MB, "
                  f"fds {point['fds']}, threads {point['threads']}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    if not series:
        raise SystemExit("soak: interrupted before the first round ended")
    out: dict[str, Any] = {
        "workload": "tapir test samples" if kind == "test" else "tapir eval samples/suite --oracle",
        "rounds": len(series), "rounds_asked": rounds, "interrupted": interrupted,
        "scripts": sum(p["scripts"] for p in series), "failed": failed_total,
        "first_errors": first_errors, "seconds": round(time.monotonic() - started, 1),
        "round_seconds": summary(series, "seconds"),
    }
    for key in ("fds", "threads", "adb_servers"):
        out[key] = summary(series, key)
    # RSS over the rounds without tracemalloc: the tracer's own tables are not the program's
    # memory (they add ~80 MB over the traced rounds); those rounds' RSS is reported apart
    plain = [p for p in series if "traced_mb" not in p] or series
    out["rss_mb"] = summary(plain, "rss_mb") | {"rounds": f"{plain[0]['round']}-{plain[-1]['round']}"}
    if len(plain) < len(series):
        out["rss_mb_traced_rounds"] = summary(series[len(plain):], "rss_mb")
    traced = [p for p in series if "traced_mb" in p]
    if len(traced) > 1 and baseline is not None:
        out["traced_mb"] = summary(traced, "traced_mb") | {"rounds": f"{traced[0]['round']}-{traced[-1]['round']}"}
        growth = tracemalloc.take_snapshot().compare_to(baseline, "lineno")[:10]
        out["tracemalloc_top_growth"] = [
            {"where": str(stat.traceback[0]), "kb": round(stat.size_diff / 1024, 1), "blocks": stat.count_diff}
            for stat in growth]
    tracemalloc.stop()
    out["per_round"] = [{k: p[k] for k in ("round", "seconds", "rss_mb", "fds", "threads")} for p in series]
    return out


def soak_devices(n: int, rounds: int, servers: AdbServers) -> dict[str, Any]:
    """``n`` simulators on one adb server, each driven by its own thread."""
    from tapir.dsl.interpreter import run_script
    from tapir.runner import collect
    from tapir.runtime.connect import connection_for
    from tapir.sim.apps import get_app
    from tapir.sim.launch import kill_adb_server, start_private_adb_server, start_sim

    before = figures(servers)
    port = start_private_adb_server()
    results: list[dict[str, Any]] = [{} for _ in range(n)]

    def drive(i: int) -> None:
        name = APPS[i % len(APPS)]
        app = get_app(name)
        scripts = collect([SAMPLES / name])
        ran, failures = 0, []
        with start_sim([app], adb_port=port, foreground=app.package) as sim:
            for _ in range(rounds):
                for script in scripts:
                    sim.device.clear_data(app.package)  # a fresh install, on its launch screen
                    sim.device.start_app(app.package)
                    source = script.read_text(encoding="utf-8")
                    conn = connection_for(script, source, device=sim.serial, doc=None, adb_port=port)
                    result = run_script(source, conn.factory(), None, output=None, filename=str(script))
                    ran += 1
                    if not result.ok and result.error is not None:
                        failures.append(f"{script}: {result.error.message.splitlines()[0]}"[:200])
        results[i] = {"device": i + 1, "app": name, "scripts": ran, "failed": len(failures),
                      "first_errors": failures[:2]}

    started = time.monotonic()
    threads = [threading.Thread(target=drive, args=(i,), name=f"soak-device-{i + 1}") for i in range(n)]
    peak_threads = 0
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak_threads = max(peak_threads, threading.active_count())
        time.sleep(0.2)
    wall = time.monotonic() - started
    kill_adb_server(port)
    after = figures(servers)
    scripts = sum(r.get("scripts", 0) for r in results)
    return {
        "devices": n, "rounds": rounds, "scripts": scripts, "failed": sum(r.get("failed", 0) for r in results),
        "seconds": round(wall, 1), "scripts_per_s": round(scripts / wall, 2) if wall else None,
        "peak_threads": peak_threads, "before": before, "after": after, "per_device": results,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100, help="rounds of the sample suite (default 100; 0: none)")
    parser.add_argument("--workload", choices=["test", "eval"], default="test",
                        help="test: `tapir test samples` (default); eval: `tapir eval samples/suite --oracle`")
    parser.add_argument("--devices", type=int, default=8, help="simulators driven at once (default 8; 0: none)")
    parser.add_argument("--device-rounds", type=int, default=3, help="rounds of each device's scripts (default 3)")
    parser.add_argument("--trace-rounds", type=int, default=10, metavar="N",
                        help="trace allocations with tracemalloc in the last N rounds (default 10; 0: none)")
    parser.add_argument("--slack", type=float, default=32.0, metavar="MB",
                        help="RSS growth over the second half of the rounds allowed before the exit status is 1 "
                             "(default 32)")
    parser.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `timeout` and kill end it as Ctrl-C does
    # adbutils must never start a stray server on 5037
    os.environ["ADBUTILS_ADB_PATH"] = "/bin/false"
    servers = AdbServers()
    out: dict[str, Any] = {"start": figures(servers)}
    ok = True
    if args.rounds > 0:
        rounds = soak_rounds(args.rounds, args.workload, min(args.trace_rounds, args.rounds), servers,
                             not args.no_progress)
        out["rounds"] = rounds
        ok &= rounds["failed"] == 0 and rounds["adb_servers"]["last"] == 0
        ok &= rounds["fds"]["growth_from_round_2"] <= 2 and rounds["threads"]["growth_from_round_2"] <= 0
        ok &= rounds["rss_mb"]["growth_second_half"] <= args.slack and not rounds["interrupted"]
    if args.devices > 0 and not out.get("rounds", {}).get("interrupted"):
        devices = soak_devices(args.devices, args.device_rounds, servers)
        out["parallel"] = devices
        ok &= devices["failed"] == 0 and devices["after"]["threads"] <= devices["before"]["threads"]
        ok &= devices["after"]["fds"] <= devices["before"]["fds"] + 2 and devices["after"]["adb_servers"] == 0
    out["ok"] = ok
    print(json.dumps(out, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
