"""``tapir explore``: explore an app on a device and record a trace (or import a DroidBot recording)."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from tapir.cli.common import (
    Subparsers,
    adb_server,
    add_adb_flags,
    check_device_flag,
    check_positive,
    device_on_server,
    project_config,
    stopped_status,
)
from tapir.core.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$", re.IGNORECASE)


def parse_duration(text: str) -> float:
    """``90`` / ``90s`` / ``5m`` / ``1.5h`` -> seconds."""
    m = _DURATION.match(text)
    if m is None:
        raise UsageError(f"--time: {text!r} is not a duration (e.g. 90, 90s, 5m, 1h)")
    value = float(m.group(1))
    unit = (m.group(2) or "s").lower()
    return value * {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}[unit]


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "explore",
        help="explore an app on a device and record a trace for `tapir docgen`",
        description=(
            "Explore an app like a GUI testing tool and record what it sees: every step's screen\n"
            "before, the action and its target, and the screen after (a screenshot per new screen).\n"
            "Depth-first (default) tries every control of every screen it reaches; random walks.\n"
            "Controls that delete, send, pay or sign out are never touched (see --allow-dangerous).\n"
            "Ctrl-C (or SIGTERM) stops at once and keeps what was recorded: exit status 130 (143).\n\n"
            "  tapir explore --device sim:music --app org.tapir.music --steps 300 -o music-trace\n"
            "  tapir explore --device emulator-5554 --app com.example --time 10m -o trace\n"
            "  tapir explore --import-droidbot droidbot-output/ -o trace"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", required=True, metavar="TRACE_DIR", help="the trace directory to create")
    p.add_argument("--device", metavar="SERIAL", help="adb serial, HOST:PORT/SERIAL, `sim` or `sim:APP` (default: "
                   "$ANDROID_SERIAL or the only device connected)")
    add_adb_flags(p)
    p.add_argument("--app", metavar="PACKAGE", help="the app to explore (default with sim:APP: that app)")
    p.add_argument("--steps", type=int, default=200, metavar="N", help="step budget (default: 200)")
    p.add_argument("--time", metavar="DURATION", help="time budget, e.g. 90s, 10m, 1h (default: none)")
    p.add_argument("--strategy", choices=["dfs", "random"], default="dfs",
                   help="depth-first (default) or a random walk")
    p.add_argument("--seed", type=int, default=0, help="seed of the random walk (default: 0)")
    p.add_argument("--delay", type=float, metavar="SECONDS",
                   help="wait after each action before reading the screen (default: 0.5, 0 on the simulator)")
    p.add_argument("--no-screenshots", action="store_true", help="do not take a screenshot of each new screen")
    p.add_argument("--no-restart", action="store_true", help="do not stop the app before the first launch")
    p.add_argument("--danger", action="append", default=[], metavar="WORD",
                   help="another word that marks a control as dangerous (repeatable)")
    p.add_argument("--allow-dangerous", action="store_true",
                   help="touch dangerous controls too (delete, send, pay...): only on a throw-away device")
    p.add_argument("--import-droidbot", metavar="DIR",
                   help="convert the DroidBot recording in DIR (states/, events/) instead of exploring")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=_cmd_explore)


def _cmd_explore(args: argparse.Namespace) -> int:
    if args.import_droidbot:
        return _import(args)
    from tapir.docgen.build.policy import DangerPolicy
    from tapir.runtime.explore import ExploreConfig, explore, sim_package
    from tapir.sim.launch import check_sim_spec, is_sim_spec

    check_device_flag(args.device)
    adb_host, adb_port = adb_server(args, project_config(None))
    check_positive(steps=args.steps, delay=args.delay if args.delay else None)
    seconds = parse_duration(args.time) if args.time else None
    check_positive(time=seconds)
    sim = args.device is not None and is_sim_spec(args.device)
    if sim:
        check_sim_spec(args.device)
    package = args.app or (sim_package(args.device) if sim else None)
    if not package:
        raise UsageError("--app PACKAGE is required (which app to explore)",
                         hint="with --device sim:APP the app is that simulated app")
    policy = DangerPolicy.none() if args.allow_dangerous else DangerPolicy.default().extended(args.danger)
    config = ExploreConfig(
        package=package, strategy=args.strategy, seed=args.seed, max_steps=args.steps, max_seconds=seconds,
        screenshots=not args.no_screenshots, policy=policy,
        delay=args.delay if args.delay is not None else (0.0 if sim else 0.5),
        fresh_start=not args.no_restart,
    )
    with _ExploreProgressBar(args.steps, quiet=args.json) as progress:
        result = explore(device_on_server(args.device, adb_host, adb_port), config, args.output,
                         on_progress=progress.update, adb_port=adb_port)
    if args.json:
        import json

        print(json.dumps({"trace": result.trace, "steps": result.steps, "states": result.states,
                          "screens": result.screens, "restarts": result.restarts, "left_app": result.left_app,
                          "avoided": result.avoided, "actions": dict(result.actions),
                          "interrupted": result.interrupted, "exhausted": result.exhausted,
                          "seconds": round(result.elapsed, 2)}, indent=2))
    else:
        print(result.summary())
    if result.interrupted:
        return stopped_status([result.stopped_by] if result.stopped_by else [])
    return 0


def _import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tapir.docgen.build.droidbot import import_droidbot

    if not Path(args.import_droidbot).is_dir():
        raise UsageError(f"--import-droidbot: {args.import_droidbot} is not a directory")
    summary = import_droidbot(args.import_droidbot, args.output)
    if args.json:
        import json

        print(json.dumps({"source": summary.source, "output": summary.output, "package": summary.package,
                          "states": summary.states, "steps": summary.steps, "actions": dict(summary.actions),
                          "left_out": dict(summary.skipped), "warnings": summary.warnings}, indent=2))
    else:
        print(summary.render())
    return 0


class _ExploreProgressBar:
    """A progress bar on a terminal (steps, screens found, time left); a line now and then otherwise."""

    def __init__(self, total: int, *, quiet: bool = False) -> None:
        self.total = total
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._bar: Any = None
        self._task: Any = None
        self._last_line = 0

    def __enter__(self) -> _ExploreProgressBar:
        if self.tty and not self.quiet:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(
                TextColumn("exploring"), BarColumn(), MofNCompleteColumn(), TextColumn("steps"),
                TextColumn("{task.fields[screens]} screens"), TextColumn("{task.fields[left]}"),
                console=Console(stderr=True), transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("explore", total=self.total, screens=0, left="")
        return self

    def update(self, p: Any) -> None:
        left = "" if p.remaining is None else f"{_clock(p.remaining)} left"
        if self._bar is not None:
            self._bar.update(self._task, completed=p.steps, screens=p.screens, left=left)
        elif not self.quiet and (p.steps - self._last_line >= max(self.total // 10, 10) or p.steps == self.total):
            self._last_line = p.steps
            print(f"step {p.steps}/{self.total}: {p.screens} screens, {left or 'estimating time'}",
                  file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds < 3600 else f"{seconds // 3600}h{seconds % 3600 // 60:02d}"
