"""``tapir run``: run one script, on a device or without one."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from tapir.cli.common import Subparsers, check_device_flag, check_positive
from tapir.dsl.errors import UsageError

if TYPE_CHECKING:
    from tapir.dsl.runtime_api import RuntimeFactory


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "run",
        help="run a Tapir script (on a device, or without one if it makes no UI call)",
        description="Check a script as `tapir check` does, then run it in the sandboxed interpreter: a script\n"
                    "with errors is refused before any device is touched (warnings are shown and it runs). Its\n"
                    "print() output goes to stdout; an error is shown as file:line:col with the line and a caret.\n"
                    "Exit status 0 when the script finished, 1 when it was refused or failed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("script", metavar="FILE.tap", help="the script to run")
    p.add_argument("--device", metavar="SERIAL|sim[:APP]",
                   help="the device to drive: an adb serial or the simulator, connected on the first UI call "
                        "(default: $ANDROID_SERIAL, else tapir.toml [device] default)")
    p.add_argument("--adb-port", type=int, metavar="PORT",
                   help="port of the adb server (default: $ANDROID_ADB_SERVER_PORT, else 5037); with --device sim, "
                        "attach the simulator to that server instead of a private one")
    p.add_argument("--doc", metavar="APP.yaml",
                   help="the app document: unknown $elements and illegal actions fail before touching the device "
                        "(default: the script's `# doc: APP.yaml` first line, or tapir.toml [documents])")
    p.add_argument("--trace", metavar="FILE.jsonl",
                   help="write one JSON line per UI call (element, grounding, screens, dumps, timings) as it happens")
    p.add_argument("--max-actions", type=int, metavar="N", help="UI action budget (default: 50)")
    p.add_argument("--max-steps", type=int, metavar="N", help="step budget (default: 1,000,000)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="time budget in seconds: the wall clock, and time waited on a simulator (default: 60)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="a parameter the script reads with param('NAME') (repeatable)")
    p.add_argument("--artifacts", metavar="DIR",
                   help="where screenshot() saves its files (default: tapir-artifacts/<script name>/)")
    p.add_argument("--screenshots", metavar="DIR",
                   help="save a screenshot at the start and after every UI action in DIR (named in the trace)")
    p.add_argument("--stats", action="store_true", help="print steps, UI actions and time to stderr at the end")
    p.set_defaults(handler=_cmd_run)


def _run_runtime_factory(args: argparse.Namespace, connection: Any) -> RuntimeFactory | None:
    """THE DEVICE HOOK of `tapir run`: how the interpreter gets a device runtime.

    Returns a factory the interpreter calls on the script's first UI call (never before), or
    None when no device was asked for (``tapir.runtime.connect``: an adb serial or the simulator,
    bound to the app document by a ``DeviceRuntime``).
    """
    if connection is None:
        return None
    return connection.factory()  # type: ignore[no-any-return]


def _serial_from_environment(args: argparse.Namespace) -> str | None:
    """``$ANDROID_SERIAL`` when ``--device`` is absent, as adb itself reads it."""
    import os

    if args.device is not None:
        return None
    return os.environ.get("ANDROID_SERIAL", "").strip() or None


def _document_missing(serial: str) -> RuntimeFactory:
    """For a script run with ``$ANDROID_SERIAL`` set and no document: it runs (a script without UI
    calls needs no device), and its first UI call says what is missing."""
    from tapir.dsl.errors import DeviceError

    def fail() -> Any:
        raise DeviceError(f"ANDROID_SERIAL names device {serial!r}, but a device run needs the app document",
                          hint="pass --doc APP.yaml, or start the script with a comment such as `# doc: app.yaml`")

    return fail


def _cmd_run(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from pathlib import Path

    from tapir.cli.common import project_config, project_devices
    from tapir.dsl.budget import Budgets
    from tapir.dsl.inputs import ScriptInputs
    from tapir.dsl.interpreter import run_script
    from tapir.runtime.connect import connection_for
    from tapir.service import Workspace

    path = Path(args.script)
    ws = Workspace()
    source = ws.text_of(args.script)
    project = project_config(args.script)  # [device] and [budgets] are defaults; flags and the environment win
    check_positive(max_actions=args.max_actions, max_steps=args.max_steps, timeout=args.timeout)
    check_device_flag(args.device)
    inputs = ScriptInputs.from_options(args.param)
    if args.artifacts and Path(args.artifacts).exists() and not Path(args.artifacts).is_dir():
        raise UsageError(f"--artifacts: {args.artifacts} is a file, not a folder")
    if args.doc and not Path(args.doc).is_file():
        raise UsageError(f"--doc: {args.doc} {'is a directory' if Path(args.doc).is_dir() else 'does not exist'}")
    env_serial = _serial_from_environment(args)
    if args.device is None and env_serial is None and project is not None and project_devices(project):
        args.device = project.device.first
    device_run = bool(args.device or env_serial)
    if args.trace and not device_run:
        raise UsageError("--trace needs a device run (--device)")
    if args.adb_port is not None and not device_run:
        raise UsageError("--adb-port needs a device run (--device, or $ANDROID_SERIAL)")
    if args.screenshots and not device_run:
        raise UsageError("--screenshots needs a device run (--device)")
    if args.screenshots and Path(args.screenshots).exists() and not Path(args.screenshots).is_dir():
        raise UsageError(f"--screenshots: {args.screenshots} is a file, not a folder")
    factory: RuntimeFactory | None = None
    if args.trace:
        # Checked now: the trace is opened on the first UI call, after the device has started.
        trace = Path(args.trace)
        if trace.is_dir():
            raise UsageError(f"--trace: {trace} is a directory")
        if not trace.resolve().parent.is_dir():
            raise UsageError(f"--trace: the folder of {trace} does not exist")
    # what `tapir check` reports, before anything runs: errors refuse the run, warnings are shown
    checked = ws.check(args.script, source, doc=args.doc)
    policy = ws.warnings_policy(args.script)
    report = checked.render(policy)
    if report:
        print(report, file=sys.stderr)
    blocking = checked.blocking(policy)
    if blocking:
        print(f"{args.script}: not run: {len(blocking)} problem{'s' if len(blocking) != 1 else ''} "
              "found before running (see above)", file=sys.stderr)
        return 1
    if env_serial and checked.document is None:
        factory = _document_missing(env_serial)
    elif device_run:
        if checked.document is None:
            raise UsageError("no app document: pass --doc APP.yaml, or start the script with a comment such as "
                             "`# doc: app.yaml`")
        loaded = ws.load_document(checked.document.path)
        if loaded.document is None:
            raise UsageError(f"{checked.document.path} is a compiled symbol table: a device run needs the app "
                             "document itself (its identifiers and paths)")
        # ($ANDROID_SERIAL is left for resolve_serial to read, so that its messages name it)
        connection = connection_for(path, source, device=args.device, doc=str(checked.document.path),
                                    trace=args.trace, document=loaded.document, adb_port=args.adb_port,
                                    artifacts=args.artifacts)
        if args.screenshots:
            connection = replace(connection, screenshots=args.screenshots)
        factory = _run_runtime_factory(args, connection)
    budgets = project.budgets.apply(Budgets()) if project is not None else Budgets()
    budgets = budgets.replace(max_actions=args.max_actions, max_steps=args.max_steps, timeout_s=args.timeout)
    result = run_script(source, factory, budgets,
                        output=lambda line: print(line, flush=True),
                        symbols=checked.symbols, filename=args.script, debug=args.debug, inputs=inputs)
    if args.stats:
        actions = f"{result.actions} UI action{'' if result.actions == 1 else 's'}"
        print(f"{args.script}: {'ok' if result.ok else 'failed'}: {result.steps:,} steps, {actions},"
              f" {result.duration_s:.3f} s", file=sys.stderr)
    if result.error is not None:
        if args.debug and result.error.__cause__ is not None:
            import traceback

            traceback.print_exception(result.error.__cause__)
        print(result.error.render(), file=sys.stderr)
        return 1
    return 0
