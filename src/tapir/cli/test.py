"""``tapir test``: run test scripts on one or several devices, with reports for CI."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tapir.cli.common import (
    Subparsers,
    adb_server,
    add_adb_flags,
    add_safety_flags,
    check_device_flag,
    check_positive,
    project_devices,
    signals_ignored,
    stop_signals,
    stopped_name,
    stopped_status,
)
from tapir.core.errors import UsageError

if TYPE_CHECKING:
    from tapir.runner.results import TestRun
    from tapir.runner.suite import RunOptions
    from tapir.service import ProjectConfig

_DESCRIPTION = """\
Run test scripts (*.tap with asserts) and report each: PASS, FAIL, ERROR (it could not run),
FLAKY (failed, then passed on a retry) or SKIP (a `# skip: reason` header line). PATH is a
script, a folder (every *.tap below it; generated/ folders skipped) or a glob ('flows/**/*.tap').

Each script is first checked as `tapir check` checks it; one with errors is an ERROR that never
reaches a device. Then it runs on a fresh simulator (--device sim, the default; -j N runs N at
once) or on a phone (--device SERIAL, repeatable: one script at a time per phone), the app
force-stopped first (--reset: its data cleared). A failed script leaves its screenshot, last
hierarchy dump, trace and error in the artifacts folder (tapir-artifacts/<script>/).
Each script runs in a child process with OS limits on memory and CPU time (--in-process:
in this one, for debugging).

Tags come from a header comment, `# tags: smoke, music`; --include/--exclude take tags or shell
patterns. --shard-index/--shard-total split the selected scripts between CI machines (index from 0).
--param NAME=VALUE is what param('NAME') reads in every script, as with `tapir run`.
Defaults come from the project's tapir.toml ([device], [budgets], [test], [test.params], [report];
docs/testing.md).

The guards apply as in `tapir run` (docs/safety.md): a sensitive tap needs --allow, tapir.toml
[safety] or the script's `# allow:` line; secrets come from --secrets or $TAPIR_SECRET_NAME.

Exit status: 0 every script passed (flaky ones included), 1 a script failed or could not run,
2 a usage or configuration error, 130 interrupted by Ctrl-C, 143 by SIGTERM (the reports hold what
ran).

  tapir test samples/ --device sim -j 2 --junit out.xml --html out.html
  tapir test flows/ --include smoke --retries 1 --device emulator-5554 --device emulator-5556
  tapir test flows/ --device 127.0.0.1:5037/emulator-5554 --device 10.0.0.2:5037/R58M123ABC
"""


def register(sub: Subparsers) -> None:
    p = sub.add_parser("test", help="run test scripts on simulators or phones, with JUnit/JSON/HTML reports",
                       description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="scripts, folders or globs (default: tapir.toml [test] paths, else .)")
    where = p.add_argument_group("devices")
    where.add_argument("--device", action="append", metavar="SERIAL|sim[:APP]",
                       help="where scripts run: sim (a fresh simulator per script; the default), sim:APP, an adb "
                            "serial, or HOST:PORT/SERIAL (a serial on that adb server); repeat to run on several "
                            "devices at once, on one adb server or several")
    add_adb_flags(where)
    where.add_argument("-j", "--jobs", type=int, metavar="N",
                       help="simulators running at once (default: 1); each phone runs one script at a time")
    where.add_argument("--reset", action=argparse.BooleanOptionalAction, default=None,
                       help="clear the app's data (pm clear) and launch it before each script")
    which = p.add_argument_group("which scripts")
    which.add_argument("--include", action="append", default=[], metavar="TAG",
                       help="only scripts with one of these tags (comma-separated, shell patterns; repeatable)")
    which.add_argument("--exclude", action="append", default=[], metavar="TAG",
                       help="leave out scripts with one of these tags (wins over --include)")
    which.add_argument("--shard-index", type=int, metavar="I", help="run shard I (from 0) of --shard-total")
    which.add_argument("--shard-total", type=int, metavar="N", help="split the selected scripts into N shards")
    which.add_argument("--list", action="store_true", help="print the selected scripts and their tags; run nothing")
    how = p.add_argument_group("running")
    how.add_argument("--doc", metavar="APP.yaml", help="the app document of every script (default: each script's own)")
    how.add_argument("--param", action="append", metavar="NAME=VALUE",
                     help="a parameter every script reads with param('NAME') (repeatable; wins over tapir.toml "
                          "[test.params])")
    how.add_argument("--retries", type=int, metavar="N",
                     help="run a failed script again up to N times; one that then passes is reported FLAKY")
    how.add_argument("--max-actions", type=int, metavar="N", help="UI action budget per script (default: 50)")
    how.add_argument("--max-steps", type=int, metavar="N", help="step budget per script (default: 1,000,000)")
    how.add_argument("--timeout", type=float, metavar="S", help="wall-clock budget per script in seconds (default: 60)")
    how.add_argument("--in-process", action="store_true",
                     help="run each script in this process, without its child process and OS limits (for debugging)")
    out = p.add_argument_group("reports")
    out.add_argument("--junit", metavar="FILE.xml", help="write a JUnit XML report")
    out.add_argument("--json", metavar="FILE.json", help="write a JSON report (every attempt and step)")
    out.add_argument("--html", metavar="FILE.html",
                     help="write one self-contained HTML report: every step with its screenshot (turns screenshots on)")
    out.add_argument("--artifacts", metavar="DIR",
                     help="where failed scripts' screenshot, dump, trace and error go (default: tapir-artifacts)")
    out.add_argument("--screenshots", action="store_true",
                     help="a screenshot after every step (on with --html), kept with a failed script's artifacts")
    out.add_argument("--trace-dir", metavar="DIR", help="keep every script's trace as DIR/<script>.jsonl")
    out.add_argument("-v", "--verbose", action="store_true",
                     help="a line per step as it runs, what each script printed, and every script in the summary")
    add_safety_flags(p.add_argument_group("safety (docs/safety.md)"))  # type: ignore[arg-type]
    p.set_defaults(handler=_cmd_test)


def _report_path(flag: str, value: str | Path | None) -> Path | None:
    if value is None:
        return None
    path = Path(value)
    if path.is_dir():
        raise UsageError(f"{flag}: {path} is a directory")
    try:
        path.resolve().parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag}: cannot make the folder of {path}: {exc.strerror or exc}") from None
    return path


def _write(path: Path, text: str, flag: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class _Reports:
    junit: Path | None = None
    json: Path | None = None
    html: Path | None = None


def _settings(args: argparse.Namespace, config: ProjectConfig | None) -> tuple[list[str], RunOptions, _Reports]:
    """The paths, run options and reports: flags, else tapir.toml, else the defaults."""
    from pathlib import Path

    from tapir.core.safety import SafetyOptions
    from tapir.dsl.budget import Budgets
    from tapir.dsl.inputs import ScriptInputs
    from tapir.runner.suite import RunOptions

    params = ScriptInputs.from_options(args.param).params
    devices = list(args.device or (project_devices(config) if config else ()) or ["sim"])
    for device in devices:
        check_device_flag(device)
    adb_host, adb_port = adb_server(args, config)
    jobs = args.jobs if args.jobs is not None else (config.device.jobs if config and config.device.jobs else 1)
    retries = args.retries
    if retries is None:
        retries = config.test.retries if config and config.test.retries is not None else 0
    check_positive(jobs=jobs, max_actions=args.max_actions, max_steps=args.max_steps, timeout=args.timeout)
    if retries < 0:
        raise UsageError("--retries must be 0 or more")
    if args.doc and not Path(args.doc).is_file():
        raise UsageError(f"--doc: {args.doc} does not exist")
    budgets = config.budgets.apply(Budgets()) if config else Budgets()
    budgets = budgets.replace(max_actions=args.max_actions, max_steps=args.max_steps, timeout_s=args.timeout)
    report = config.report if config else None
    reports = _Reports(
        junit=_report_path("--junit", args.junit or (report.junit if report else None)),
        json=_report_path("--json", args.json or (report.json if report else None)),
        html=_report_path("--html", args.html or (report.html if report else None)),
    )
    artifacts = args.artifacts or (report.artifacts if report and report.artifacts else "tapir-artifacts")
    options = RunOptions(
        devices=tuple(devices), jobs=jobs, doc=args.doc, budgets=budgets, retries=retries,
        reset=args.reset if args.reset is not None else bool(config and config.test.reset),
        screenshots=bool(args.screenshots or reports.html), thumbnails=reports.html is not None,
        artifacts=Path(artifacts),
        trace_dir=Path(args.trace_dir) if args.trace_dir else None,
        params=dict(params), project_params=config.test.params if config else None,
        in_process=args.in_process, adb_host=adb_host, adb_port=adb_port,
        safety=SafetyOptions(allow=tuple(args.allow or ()), allow_apps=tuple(args.allow_app or ()),
                             foreign_app=args.foreign_app, secrets_file=args.secrets),
    )
    paths = args.paths or [str(p) for p in (config.test.paths if config else ())] or ["."]
    return paths, options, reports


def _cmd_test(args: argparse.Namespace) -> int:
    import sys

    from tapir.cli.common import project_config
    from tapir.runner.collect import collect, read_header, select, split_tags
    from tapir.runner.console import ConsoleListener, make_console, print_summary
    from tapir.runner.suite import run_tests
    from tapir.service import Workspace

    config = project_config(args.paths[0] if args.paths else None)
    paths, options, reports = _settings(args, config)
    if (args.shard_index is None) != (args.shard_total is None):
        raise UsageError("--shard-index and --shard-total go together")
    scripts = collect(paths)
    ws = Workspace()
    headers = {s: read_header(ws.text_of(s)) for s in scripts}
    include = split_tags(args.include) or list(config.test.include if config else ())
    exclude = split_tags(args.exclude) or list(config.test.exclude if config else ())
    shard = (args.shard_index, args.shard_total) if args.shard_total is not None else None
    chosen = select(scripts, headers=headers, include=include, exclude=exclude, shard=shard)
    out = make_console(sys.stdout)
    left_out = f"{len(chosen.deselected)} deselected by tags" + (
        f", {len(chosen.other_shards)} in other shards" if shard else "")
    if args.list:
        for s in chosen.scripts:
            tags = f"  [{', '.join(headers[s].tags)}]" if headers[s].tags else ""
            skip = f"  (skip: {headers[s].skip})" if headers[s].skip else ""
            out.print(f"{s}{tags}{skip}", markup=False)
        out.print(f"{len(chosen.scripts)} selected, {left_out}", markup=False)
        return 0
    if not chosen.scripts:
        # an empty shard is normal (more machines than scripts); an empty tag selection is a mistake
        print(f"no script selected: {left_out}", file=sys.stderr)
        return 0 if shard is not None and not chosen.deselected else 1
    # a CI job cancelled (SIGTERM) still gets its reports of the scripts that ran
    with stop_signals() as stopped_by, ConsoleListener(out, verbose=args.verbose) as listener:
        run = run_tests(chosen.scripts, options, headers=headers, listener=listener)
    run.deselected, run.other_shards = len(chosen.deselected), len(chosen.other_shards)
    with signals_ignored():
        print_summary(out, run, verbose=args.verbose)
        # said once for the whole run, after the scripts' lines (each script's child process noted them)
        for notice in dict.fromkeys(n for r in run.results for a in r.attempts for n in a.notices):
            print(f"tapir: {notice}", file=sys.stderr)
        for path in _write_reports(run, reports):
            out.print(f"wrote {path}", markup=False)
    if run.interrupted:
        signame = stopped_name(stopped_by)
        print(f"interrupted ({signame}): the reports hold the scripts that ran", file=sys.stderr)
        return stopped_status(stopped_by)
    return 0 if run.ok else 1


def _write_reports(run: TestRun, reports: _Reports) -> list[Path]:
    import json

    from tapir.runner.html_report import report_html
    from tapir.runner.json_report import report_json
    from tapir.runner.junit import junit_xml

    written = []
    for flag, path, render in (
        ("--junit", reports.junit, junit_xml),
        ("--json", reports.json, lambda r: json.dumps(report_json(r), indent=1, ensure_ascii=False) + "\n"),
        ("--html", reports.html, lambda r: report_html(r, base=reports.html.parent if reports.html else None)),
    ):
        if path is not None:
            _write(path, render(run), flag)
            written.append(path)
    return written
