"""``tapir repl``: an interactive session, statements run live on a device (docs/repl.md)."""

from __future__ import annotations

import argparse
import sys

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
        "repl",
        help="an interactive session: statements run live on a device as you type them",
        description="Type Tapir statements and they run on the device at once, in one environment that\n"
                    "lasts the session; an expression's value is printed. Input is checked as `tapir check`\n"
                    "checks a script, with completion (elements, methods, options, variables) and colours as\n"
                    "you type; history is kept across sessions. Ctrl-C stops the running statement between\n"
                    "two device commands, Ctrl-D leaves. Meta commands: :screen :tree :find :doc :trace\n"
                    ":save :load :document :vars :help.\n\n"
                    "Without a terminal (piped input) lines are read and run as they come, results to stdout,\n"
                    "errors to stderr; the exit status is 1 when an input failed.\n\n"
                    "A sensitive tap (delete, send, pay; a payment, permission or warning dialog) is asked\n"
                    "about first (y/n), unless --allow or allow() covers it; piped input refuses it instead.\n\n"
                    "examples:\n"
                    "  tapir repl --device sim:music          # the simulator, with the music sample document\n"
                    "  tapir repl --device SERIAL --doc app.yaml\n"
                    "  tapir repl --device sim:music < steps.tap",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--device", metavar="SERIAL|sim[:APP]",
                   help="the device to drive (an adb serial, or the simulator), connected when the session starts "
                        "(default: $ANDROID_SERIAL, else tapir.toml [device] default, else none)")
    add_adb_flags(p)
    p.add_argument("--doc", metavar="APP.yaml",
                   help="the app document (default: tapir.toml [documents], or with --device sim:APP that app's "
                        "sample document); :document switches later")
    p.add_argument("--trace", metavar="FILE.jsonl", help="also write every device call to a trace file")
    p.add_argument("--max-actions", type=int, metavar="N",
                   help="UI actions per statement (default: tapir.toml [budgets], else 100)")
    p.add_argument("--max-steps", type=int, metavar="N",
                   help="steps per statement (default: tapir.toml [budgets], else 1,000,000)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds per statement (default: tapir.toml [budgets], else 300)")
    p.add_argument("--history", metavar="FILE",
                   help="the history file (default: $TAPIR_HISTORY, else $XDG_STATE_HOME/tapir/history, "
                        "else ~/.local/state/tapir/history)")
    p.add_argument("--no-history", action="store_true", help="keep no history on disk")
    add_safety_flags(p)
    p.set_defaults(handler=_cmd_repl)


def _cmd_repl(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from tapir.cli.common import adb_server, device_on_server, project_config, project_devices
    from tapir.repl.session import REPL_BUDGETS, ReplSession, session_document
    from tapir.service import Workspace
    from tapir.sim.launch import check_sim_spec

    check_positive(max_actions=args.max_actions, max_steps=args.max_steps, timeout=args.timeout)
    check_device_flag(args.device)
    # defaults as `tapir run` takes them: --device, else $ANDROID_SERIAL, else tapir.toml (a session
    # is a script in the working folder: its [documents] glob, [device] and [budgets] apply)
    project = project_config(None)
    args.device_origin = "--device" if args.device else None
    if args.device is None:
        serial = os.environ.get("ANDROID_SERIAL", "").strip()
        if serial:
            args.device, args.device_origin = serial, "$ANDROID_SERIAL"
        elif project is not None and project_devices(project):
            args.device, args.device_origin = project.device.first, "tapir.toml"
    if args.device:
        check_sim_spec(args.device)
    ws = Workspace()
    cwd = Path.cwd()
    document, why = session_document(ws, args.device, args.doc, cwd)
    budgets = project.budgets.apply(REPL_BUDGETS) if project is not None else REPL_BUDGETS
    budgets = budgets.replace(max_actions=args.max_actions, max_steps=args.max_steps, timeout_s=args.timeout)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    confirm = None
    if interactive:
        from tapir.repl.terminal import ask_in_terminal

        confirm = ask_in_terminal
    for flag, given in (("--adb-port", args.adb_port), ("--adb-host", args.adb_host)):
        if given is not None and not args.device:
            raise UsageError(f"{flag} needs a device (--device)")
    adb_host, adb_port = adb_server(args, project)
    args.device = device_on_server(args.device, adb_host, adb_port) if args.device else None
    safety = safety_from_args(args, ws, cwd / "<repl>.tap")
    session = ReplSession(device=args.device, document=document, budgets=budgets, workspace=ws, trace=args.trace,
                          confirm=confirm, cwd=cwd, debug=args.debug, adb_port=adb_port, safety=safety)
    try:
        if args.device and session.document_path is not None:
            session.link.runtime()  # connect now: a device that cannot be reached is said at once
        if not interactive:
            from tapir.repl.lines import run_lines

            return run_lines(session, sys.stdin)
        return _interactive(session, args, document, why)
    finally:
        session.close()


def _interactive(session: object, args: argparse.Namespace, document: object, why: str) -> int:
    import os
    from pathlib import Path

    from tapir.repl.history import history_path, open_history
    from tapir.repl.session import ReplSession
    from tapir.repl.terminal import make_prompt, run_terminal

    assert isinstance(session, ReplSession)
    where = args.device or "no device"
    if session.link.serial and session.link.serial != args.device:
        where += f" ({session.link.serial})"
    if args.device and args.device_origin not in (None, "--device"):
        where += f" (from {args.device_origin})"
    doc = "no document (:document APP.yaml loads one)"
    if isinstance(document, Path):
        shown = os.path.relpath(document) if document.resolve().is_relative_to(Path.cwd()) else str(document)
        doc = f"document {shown}" + (f" ({why})" if why and why != "--doc" else "")
    print(f"tapir repl · {where} · {doc}", file=sys.stderr)
    print(":help lists the commands · Tab completes · Ctrl-C stops a statement · Ctrl-D leaves", file=sys.stderr)
    path = None if args.no_history else Path(args.history) if args.history else history_path()
    history, problem = open_history(path)
    if problem:
        print(f"tapir: {problem}", file=sys.stderr)
    return run_terminal(session, make_prompt(session, history=history))
