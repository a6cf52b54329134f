"""``tapir run``: run one script, on a device or without one."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tapir.cli.common import (
    Subparsers,
    add_adb_flags,
    add_safety_flags,
    check_device_flag,
    check_positive,
    safety_from_args,
)
from tapir.core.errors import UsageError


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "run",
        help="run a Tapir script (on a device, or without one if it makes no UI call)",
        description="Check a script as `tapir check` does, then run it in the sandboxed interpreter: a script\n"
                    "with errors is refused before any device is touched (warnings are shown and it runs). Its\n"
                    "print() output goes to stdout; an error is shown as file:line:col with the line and a caret.\n"
                    "The script runs in a child process with OS limits on memory and CPU time (see\n"
                    "docs/interpreter.md); --in-process runs it here instead, for debugging.\n"
                    "Exit status 0 when the script finished, 1 when it was refused or failed.\n\n"
                    "Guards (docs/safety.md): the run stays in the document's app (--allow-app, --foreign-app);\n"
                    "sensitive taps (delete, send, pay; payment, permission and warning dialogs) are refused\n"
                    "unless allowed (--allow, a `# allow: WORD` first line, allow('WORD')); secret('NAME')\n"
                    "reads --secrets FILE or $TAPIR_SECRET_NAME, types only into password fields, prints *****.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("script", metavar="FILE.tap", help="the script to run")
    p.add_argument("--device", metavar="SERIAL|sim[:APP]",
                   help="the device to drive: an adb serial or the simulator, connected on the first UI call "
                        "(default: $ANDROID_SERIAL, else tapir.toml [device] default)")
    add_adb_flags(p)
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
    keep = p.add_mutually_exclusive_group()
    keep.add_argument("--failure-artifacts", metavar="DIR",
                      help="where a run that fails on the device keeps the screen (screenshot.png), the last "
                           "hierarchy dump, the trace and the error (default: tapir-artifacts/<script>-<time>/; "
                           "named after the error)")
    keep.add_argument("--no-failure-artifacts", action="store_true", help="keep nothing when the run fails")
    p.add_argument("--screenshots", metavar="DIR",
                   help="save a screenshot at the start and after every UI action in DIR (named in the trace)")
    p.add_argument("--stats", action="store_true", help="print steps, UI actions and time to stderr at the end")
    p.add_argument("--in-process", action="store_true",
                   help="run the script in this process, without the child process and its OS limits "
                        "(for debugging; the interpreter's budgets still apply)")
    add_safety_flags(p)
    p.set_defaults(handler=_cmd_run)


def _screen_only(filename: str, source: str) -> Any:
    """The document of a device run without one (``tap_text``, ``swipe``, ``press_key``... need
    none); a script that names an element is refused at its first ``$element``."""
    from tapir.core.errors import UnknownElement
    from tapir.dsl.parser import parse
    from tapir.dsl.screen_calls import element_refs
    from tapir.runtime.screen_actions import screen_only_document

    refs = element_refs(parse(source, filename))
    if refs:
        raise UnknownElement(
            f"${refs[0].name} names an element of an app document, and this run has none", refs[0].span,
            filename=filename, source=source,
            hint="pass --doc APP.yaml, or start the script with a comment such as `# doc: app.yaml`; without one, "
                 "use screen-level actions such as tap_text('Settings') (docs/maestro.md)")
    return screen_only_document()


def _check_paths(args: argparse.Namespace, device_run: bool) -> None:
    """The flags that name files and folders, checked before anything runs."""
    from pathlib import Path

    for flag, folder in (("--artifacts", args.artifacts), ("--failure-artifacts", args.failure_artifacts)):
        if folder and Path(folder).exists() and not Path(folder).is_dir():
            raise UsageError(f"{flag}: {folder} is a file, not a folder")
    if args.doc and not Path(args.doc).is_file():
        raise UsageError(f"--doc: {args.doc} {'is a directory' if Path(args.doc).is_dir() else 'does not exist'}")
    for flag, given in (("--trace", args.trace), ("--adb-port", args.adb_port), ("--adb-host", args.adb_host),
                        ("--screenshots", args.screenshots)):
        if given is not None and not device_run:
            also = ", or $ANDROID_SERIAL" if flag.startswith("--adb") else ""
            raise UsageError(f"{flag} needs a device run (--device{also})")
    if args.screenshots and Path(args.screenshots).exists() and not Path(args.screenshots).is_dir():
        raise UsageError(f"--screenshots: {args.screenshots} is a file, not a folder")
    if args.trace:  # the trace is opened on the first UI call, after the device has started
        trace = Path(args.trace)
        if trace.is_dir():
            raise UsageError(f"--trace: {trace} is a directory")
        if not trace.resolve().parent.is_dir():
            raise UsageError(f"--trace: the folder of {trace} does not exist")


def _run_document(ws: Any, checked: Any, safety: Any) -> Any:
    """The document a device run needs, loaded (not a compiled symbol table), its --allow checked."""
    from tapir.runtime.guards import check_tokens

    loaded = ws.load_document(checked.document.path)
    if loaded.document is None:
        raise UsageError(f"{checked.document.path} is a compiled symbol table: a device run needs the app "
                         "document itself (its identifiers and paths)")
    check_tokens(safety, loaded.document)  # an --allow naming no element: a usage error before anything runs
    return loaded.document


def _cmd_run(args: argparse.Namespace) -> int:
    import os

    from tapir.cli.common import adb_server, project_config, project_devices
    from tapir.dsl.budget import Budgets, check_source_size
    from tapir.dsl.inputs import ScriptInputs
    from tapir.dsl.interpreter import print_line
    from tapir.run import Runner, RunOptions
    from tapir.runtime.artifacts import failure_folder
    from tapir.service import Workspace
    from tapir.service.sessions import sample_document

    ws = Workspace()
    source = ws.text_of(args.script)
    project = project_config(args.script)  # [device] and [budgets] are defaults; flags and the environment win
    check_positive(max_actions=args.max_actions, max_steps=args.max_steps, timeout=args.timeout)
    budgets = project.budgets.apply(Budgets()) if project is not None else Budgets()
    budgets = budgets.replace(max_actions=args.max_actions, max_steps=args.max_steps, timeout_s=args.timeout)
    check_source_size(source, budgets, args.script)  # before the check reads it
    check_device_flag(args.device)
    safety = safety_from_args(args, ws, args.script)
    params = ScriptInputs.from_options(args.param, safety=safety).params
    # $ANDROID_SERIAL is left for the device layer to read, so that its messages name it
    env_serial = None if args.device is not None else (os.environ.get("ANDROID_SERIAL", "").strip() or None)
    if args.device is None and env_serial is None and project is not None and project_devices(project):
        args.device = project.device.first
    device_run = bool(args.device or env_serial)
    _check_paths(args, device_run)
    adb_host, adb_port = adb_server(args, project)
    # what `tapir check` reports, before anything runs: errors refuse the run, warnings are shown
    doc = args.doc
    if doc is None and ws.document_for(args.script, source) is None:
        sample = sample_document(args.device)  # `--device sim:APP`: the simulated app's own document
        doc = str(sample) if sample is not None else None
    checked = ws.check(args.script, source, doc=doc)
    policy = ws.warnings_policy(args.script)
    report = checked.render(policy)
    if report:
        print(report, file=sys.stderr)
    blocking = checked.blocking(policy)
    if blocking:
        print(f"{args.script}: not run: {len(blocking)} problem{'s' if len(blocking) != 1 else ''} "
              "found before running (see above)", file=sys.stderr)
        return 1
    document = _run_document(ws, checked, safety) if device_run and checked.document is not None else None
    if device_run and document is None:
        document = _screen_only(args.script, source)  # screen-level actions need no document
    runner = Runner(document, args.device, RunOptions(
        budgets=budgets, safety=safety, params=params, isolation="inline" if args.in_process else "process",
        trace=args.trace, screenshots=args.screenshots, artifacts=args.artifacts, adb_port=adb_port,
        adb_host=adb_host, failure_artifacts=None if args.no_failure_artifacts else (
            args.failure_artifacts or failure_folder(args.script)),
        output=lambda line: print_line(line, flush=True), debug=args.debug,
    ))
    run = runner.run(source, args.script, symbols=checked.symbols)
    for notice in run.notices:
        print(f"tapir: {notice}", file=sys.stderr)
    result = run.result
    if args.stats:
        actions = f"{result.actions} UI action{'' if result.actions == 1 else 's'}"
        print(f"{args.script}: {'ok' if result.ok else 'failed'}: {result.steps:,} steps, {actions},"
              f" {result.duration_s:.3f} s", file=sys.stderr)
    if result.error is not None:
        if args.debug and result.error.__cause__ is not None:
            import traceback

            traceback.print_exception(result.error.__cause__)
        print(result.error.render(), file=sys.stderr)
        if run.kept is not None:
            print(f"tapir: the failure's screenshot, hierarchy dump, trace and error are in {run.kept}/",
                  file=sys.stderr)
        return 1
    return 0
