"""The ``tapir`` command.

This module only presents: it parses arguments, calls into the layers below and turns every
``TapirError`` into its rendered message and an exit status. No traceback reaches a user unless
``--debug`` is given.

Exit status: 0 success, 1 the script/check/run failed, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tapir import __version__
from tapir.dsl.errors import Problem, TapirError, UsageError

if TYPE_CHECKING:
    from tapir.dsl.runtime_api import RuntimeFactory

Handler = Callable[[argparse.Namespace], int]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tapir",
        description=(
            "Tapir drives Android apps with small scripts written against an app document.\n"
            "Run `tapir COMMAND --help` for each command."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tapir {__version__}")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for internal errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in _COMMANDS:
        register(sub)
    return parser


# ---------------------------------------------------------------------------------------------
# Commands. Each has a ``_register_<name>(sub)`` that adds its parser and sets ``handler``, and
# a ``_cmd_<name>(args)`` that imports what it needs lazily (so `tapir --help` stays fast) and
# returns the exit status. Handlers stay thin: the work lives in the layers below.

Subparsers = argparse._SubParsersAction  # type: ignore[type-arg]


# (commands are added here)


# -- tapir check (scripts) ----------------------------------------------------------------------


def _read_script(name: str) -> str:
    """The text of a script file, or a UsageError saying in words why it cannot be read."""
    from pathlib import Path

    path = Path(name)
    if path.is_dir():
        raise UsageError(f"{name} is a directory, not a script file")
    if not path.is_file():
        raise UsageError(f"no such file: {name}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{name} is not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line}"
                         " (save the script as UTF-8)") from None


def _register_check(sub: Subparsers) -> None:
    p = sub.add_parser(
        "check",
        help="check Tapir scripts: syntax, and names, kinds and calls against the app document",
        description="Report every problem of each script: syntax, unknown $elements (with suggestions), actions\n"
                    "the element's kind does not allow, wrong arguments, unknown names, use before assignment.\n"
                    "The document comes from --doc or the script's first line `# doc: path/app.yaml`; without\n"
                    "one, only the document-free checks run. Exit status: 0 clean, 1 diagnostics, 2 usage error.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scripts", nargs="+", metavar="FILE.tap", help="script files to check")
    p.add_argument("--doc", metavar="APP.yaml", help="the app document (YAML/JSON, or a compiled .symbols.json)")
    p.add_argument("--json", action="store_true", help="print the diagnostics as JSON (one list for all scripts)")
    p.set_defaults(handler=_cmd_check)


def _cmd_check(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from tapir.docgen.check import document_for, symbols_for
    from tapir.dsl.checker import check
    from tapir.dsl.errors import DocumentError, TapirSyntaxError
    from tapir.dsl.parser import parse

    sources = {name: _read_script(name) for name in args.scripts}
    if args.doc and not Path(args.doc).is_file():
        raise UsageError(f"no such file: {args.doc}")
    status = 0
    found: list[dict[str, object]] = []
    for name, source in sources.items():
        try:
            module = parse(source, name)
        except TapirSyntaxError as exc:
            if args.json:
                span = exc.span
                found.append({"file": name, "line": span.line if span else 1, "column": span.column if span else 1,
                              "severity": "error", "code": exc.code, "message": exc.message})
            else:
                print(exc.render(), file=sys.stderr)
            status = 1
            continue
        document = document_for(Path(name), source, args.doc)
        if document is not None and not document.is_file():
            raise UsageError(f"{name}: the app document {document} does not exist")
        try:
            symbols = symbols_for(document) if document is not None else None
        except DocumentError as exc:
            if exc.problems:
                _print_problems(exc.problems, exc.filename or str(document))
                return 1
            raise
        diagnostics = check(module, symbols)
        if diagnostics:
            status = 1
        for d in diagnostics:
            if args.json:
                found.append({"file": name, "line": d.span.line, "column": d.span.column,
                              "end_line": d.span.end_line, "end_column": d.span.end_column, "severity": d.severity,
                              "code": d.code, "message": d.message, "suggestions": list(d.suggestions)})
            else:
                print(d.render(source, name), file=sys.stderr)
        if not diagnostics and not args.json:
            print(f"{name}: ok" + (f" (against {document})" if document is not None else ""))
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
    return status


# -- tapir doc import / validate, tapir compile (app documents) ------------------------------


def _register_doc(sub: Subparsers) -> None:
    p = sub.add_parser("doc", help="work with app documents (import from AutoDroid-V2, validate)")
    dsub = p.add_subparsers(dest="doc_command", metavar="DOC_COMMAND")
    imp = dsub.add_parser("import", help="convert an AutoDroid-V2 document (JSON) into a Tapir app document")
    imp.add_argument("upstream", help="the upstream JSON document")
    imp.add_argument("-o", "--output", required=True, help="the YAML document to write")
    imp.add_argument("--package", help="the app's package name (upstream documents do not say)")
    imp.add_argument("--name", help="the app's name (default: from the file name)")
    imp.add_argument("--json", action="store_true", help="print the import report as JSON")
    imp.set_defaults(handler=_cmd_doc_import)
    val = dsub.add_parser("validate", help="load a document and report every problem")
    val.add_argument("document", help="app document (YAML or JSON)")
    val.set_defaults(handler=_cmd_doc_validate)
    p.set_defaults(handler=lambda args: _doc_usage(p))


def _doc_usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _print_problems(problems: Sequence[Problem], filename: str) -> None:
    from tapir.docgen.diagnostics import render_problems

    print(render_problems(problems, filename), file=sys.stderr)


def _cmd_doc_import(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict
    from pathlib import Path

    from tapir.docgen.upstream import import_file
    from tapir.dsl.errors import DocumentError

    if not Path(args.upstream).is_file():
        raise UsageError(f"no such file: {args.upstream}")
    try:
        text, report = import_file(args.upstream, package=args.package, app_name=args.name)
    except DocumentError as exc:
        if exc.problems:
            _print_problems(exc.problems, exc.filename or args.upstream)
            return 1
        raise
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    if args.json:
        data = asdict(report)
        data["problems"] = [asdict(p) for p in report.problems]
        data["output"] = args.output
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        print(report.render())
        print(f"wrote {args.output}")
    return 0


def _cmd_doc_validate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tapir.docgen.loader import load_document_report

    if not Path(args.document).is_file():
        raise UsageError(f"no such file: {args.document}")
    result = load_document_report(args.document)
    if result.problems:
        _print_problems(result.problems, args.document)
    if result.document is None:
        return 1
    c = result.document.counts()
    print(f"{args.document}: ok: {c['screens']} screens, {c['elements']} elements, {c['identifiers']} identifiers, "
          f"{c['paths']} dependency paths" + (f", {len(result.warnings)} warnings" if result.warnings else ""))
    return 0


def _register_compile(sub: Subparsers) -> None:
    p = sub.add_parser(
        "compile",
        help="an app document to typed page objects, a symbol table, prompt text and a Markdown reference",
    )
    p.add_argument("document", help="app document (YAML or JSON)")
    p.add_argument("-o", "--out-dir", help="where to write (default: generated/ beside the document)")
    p.add_argument("--only", help="comma-separated subset of: stubs,symbols,prompt,reference")
    p.add_argument("--json", action="store_true", help="print what was written, timings and token counts as JSON")
    p.set_defaults(handler=_cmd_compile)


def _cmd_compile(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from tapir.docgen.compile import OUTPUTS, compile_document, write_outputs
    from tapir.dsl.errors import DocumentError

    if not Path(args.document).is_file():
        raise UsageError(f"no such file: {args.document}")
    outputs = tuple(o.strip() for o in args.only.split(",")) if args.only else OUTPUTS
    bad = [o for o in outputs if o not in OUTPUTS]
    if bad:
        raise UsageError(f"--only: unknown output {', '.join(bad)} (known: {', '.join(OUTPUTS)})")
    out_dir = Path(args.out_dir) if args.out_dir else Path(args.document).parent / "generated"
    try:
        compiled = compile_document(args.document, outputs, out_dir)
    except DocumentError as exc:
        if exc.problems:
            _print_problems(exc.problems, args.document)
            return 1
        raise
    try:
        written = write_outputs(compiled, out_dir)
    except OSError as exc:
        raise UsageError(f"cannot write into {out_dir}: {exc.strerror or exc}") from exc
    if args.json:
        print(json.dumps({
            "document": args.document,
            "written": [str(p) for p in written],
            "counts": compiled.document.counts(),
            "tokens": {k: {"count": v.count, "method": v.method} for k, v in compiled.tokens.items()},
            "seconds": {k: round(v, 6) for k, v in compiled.seconds.items()},
        }, indent=2))
    else:
        for path in written:
            print(f"wrote {path}")
        for style, tok in compiled.tokens.items():
            print(f"prompt ({style}): {tok.count} tokens of document prefix ({tok.method})")
    return 0


# -- tapir sim (the simulated device) -------------------------------------------------------


def _register_sim(sub: Subparsers) -> None:
    p = sub.add_parser(
        "sim",
        help="run a simulated Android device that adb and Tapir can use",
        description="Run a simulated Android phone in the foreground and attach it to the adb server,\n"
                    "so `adb -s SERIAL ...`, adbutils and `tapir run --device SERIAL` all work with it.\n"
                    "Ctrl-C stops it and disconnects it from adb.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--app", action="append", metavar="NAME",
                   help="sample app to install (repeatable; default: music)")
    p.add_argument("--replay", action="append", metavar="DIR",
                   help="install an app that replays a recorded DroidBot session from DIR (repeatable)")
    p.add_argument("--port", type=int, default=0, help="TCP port of the simulated device (default: a free one)")
    p.add_argument("--adb-port", type=int, metavar="PORT",
                   help="port of the adb server (default: $ANDROID_ADB_SERVER_PORT or 5037; started if needed)")
    p.add_argument("--home", action="store_true", help="start on the home screen instead of in the first app")
    p.add_argument("--latency", action="append", metavar="CMD=SECONDS",
                   help="delay a device command, e.g. uiautomator=1.5 or input=0.3 ('*' for all; repeatable)")
    p.add_argument("--dump-errors", type=int, default=0, metavar="N",
                   help="the next N `uiautomator dump`s fail with 'could not get idle state'")
    p.add_argument("--drop-after", type=int, metavar="N", help="drop the adb connection after N commands")
    p.add_argument("--drift", metavar="KIND", help="UI drift of the apps (text, ids, insert, reorder or all)")
    p.add_argument("--drift-seed", type=int, default=0, metavar="N", help="which drifted variant (default: 0)")
    p.add_argument("--drift-rate", type=float, default=0.5, metavar="R", help="share of elements drifted (0-1)")
    p.add_argument("--auth", choices=["accept", "reject"],
                   help="simulate USB-debugging authorization: accept any key, or stay unauthorized")
    p.set_defaults(handler=_cmd_sim)


def _cmd_sim(args: argparse.Namespace) -> int:
    import os
    import signal
    import threading

    from tapir.runtime.sim.faults import Faults, parse_latency
    from tapir.runtime.sim.launch import DEFAULT_ADB_PORT, replay_app, resolve_app, start_sim

    apps = [resolve_app(name) for name in (args.app or ([] if args.replay else ["music"]))]
    apps += [replay_app(folder) for folder in args.replay or []]
    faults = Faults.from_options(
        latency=parse_latency(args.latency), dump_errors=args.dump_errors, drop_after=args.drop_after,
        drift=args.drift, drift_options={"seed": args.drift_seed, "rate": args.drift_rate} if args.drift else None)
    adb_port = args.adb_port or int(os.environ.get("ANDROID_ADB_SERVER_PORT") or DEFAULT_ADB_PORT)
    sim = start_sim(apps, port=args.port, adb_port=adb_port, faults=faults, auth=args.auth,
                    foreground=None if args.home else apps[0].package)
    adb = "adb" if adb_port == DEFAULT_ADB_PORT else f"adb -P {adb_port}"
    installed = ", ".join(f"{app.label} ({app.package})" for app in apps)
    print(f"serial: {sim.serial}", flush=True)
    print(f"Simulated device {sim.serial} is attached to the adb server on port {adb_port}.\n"
          f"Installed: {installed}. On screen: {sim.device.current_package}.\n"
          f"Try:\n"
          f"  {adb} -s {sim.serial} shell uiautomator dump\n"
          f"  {adb} -s {sim.serial} exec-out screencap -p > screen.png\n"
          f"  tapir run SCRIPT --device {sim.serial}\n"
          f"Press Ctrl-C to stop.", flush=True)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # A shell starting us in the background ignores SIGINT for us; `kill -INT` should still stop us.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        while not stop.wait(0.5):  # a timed wait, so Ctrl-C is delivered promptly
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
        sim.stop()
    print(f"\nstopped; {sim.serial} is disconnected", flush=True)
    return 0


# -- tapir run (scripts) ------------------------------------------------------------------------


def _register_run(sub: Subparsers) -> None:
    p = sub.add_parser(
        "run",
        help="run a Tapir script (on a device, or without one if it makes no UI call)",
        description="Parse and run a script in the sandboxed interpreter. Its print() output goes to stdout;\n"
                    "an error is shown as file:line:col with the line and a caret. Exit status 0 when the\n"
                    "script finished, 1 when it failed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("script", metavar="FILE.tap", help="the script to run")
    p.add_argument("--device", metavar="SERIAL|sim[:APP]",
                   help="the device to drive (an adb serial, or the simulator); connected on the first UI call")
    p.add_argument("--doc", metavar="APP.yaml",
                   help="the app document: unknown $elements and illegal actions fail before touching the device "
                        "(default: the script's `# doc: APP.yaml` first line)")
    p.add_argument("--trace", metavar="FILE.jsonl",
                   help="write one JSON line per UI call (element, grounding, screens, dumps, timings) as it happens")
    p.add_argument("--max-actions", type=int, metavar="N", help="UI action budget (default: 50)")
    p.add_argument("--max-steps", type=int, metavar="N", help="step budget (default: 1,000,000)")
    p.add_argument("--timeout", type=float, metavar="S", help="wall-clock budget in seconds (default: 60)")
    p.add_argument("--stats", action="store_true", help="print steps, UI actions and time to stderr at the end")
    p.set_defaults(handler=_cmd_run)


def _run_runtime_factory(args: argparse.Namespace, connection: Any) -> RuntimeFactory | None:
    """THE DEVICE HOOK of `tapir run`: how the interpreter gets a device runtime.

    Returns a factory the interpreter calls on the script's first UI call (never before), or
    None when no device was asked for (``tapir.runtime.connect``: an adb serial or the simulator,
    bound to the app document by a ``DeviceRuntime``).
    """
    if not args.device or connection is None:
        return None
    return connection.factory()  # type: ignore[no-any-return]


def _check_device_flag(device: str | None) -> None:
    # an empty value (e.g. an unset shell variable) must not silently mean "no device" or "sim"
    if device is not None and not device.strip():
        raise UsageError("--device is empty: give an adb serial, sim or sim:APP")


def _cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tapir.dsl.budget import Budgets
    from tapir.dsl.checker import doc_comment
    from tapir.dsl.interpreter import run_script
    from tapir.runtime.connect import connection_for, find_document

    path = Path(args.script)
    source = _read_script(args.script)
    for flag, value in (("--max-actions", args.max_actions), ("--max-steps", args.max_steps),
                        ("--timeout", args.timeout)):
        if value is not None and value <= 0:
            raise UsageError(f"{flag} must be positive")
    symbols, connection = None, None
    _check_device_flag(args.device)
    if args.trace and not args.device:
        raise UsageError("--trace needs a device run (--device)")
    if args.trace:
        # Checked now: the trace is opened on the first UI call, after the device has started.
        trace = Path(args.trace)
        if trace.is_dir():
            raise UsageError(f"--trace: {trace} is a directory")
        if not trace.resolve().parent.is_dir():
            raise UsageError(f"--trace: the folder of {trace} does not exist")
    # the document: --doc, else the script's `# doc: app.yaml` first line (required with a device)
    if args.device:
        from tapir.docgen.symbols import build_symbols

        connection = connection_for(path, source, device=args.device, doc=args.doc, trace=args.trace)
        symbols = build_symbols(connection.document)
    elif args.doc or doc_comment(source):
        from tapir.docgen.symbols import load_symbols  # a document or a compiled symbol table

        symbols = load_symbols(find_document(path, source, args.doc))
    budgets = Budgets().replace(max_actions=args.max_actions, max_steps=args.max_steps, timeout_s=args.timeout)
    result = run_script(source, _run_runtime_factory(args, connection), budgets,
                        output=lambda line: print(line, flush=True),
                        symbols=symbols, filename=args.script, debug=args.debug)
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


# -- tapir test (test scripts on fresh devices) -------------------------------------------------


def _register_test(sub: Subparsers) -> None:
    p = sub.add_parser(
        "test",
        help="run test scripts (*.tap with asserts), each on a fresh simulated device or on a device",
        description="Run every script named (or found under the folders named) and print one PASS/FAIL line\n"
                    "per script, then `N passed, M failed`. A script passes when it runs to its end (every\n"
                    "assert held). Exit status 1 when any failed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="scripts or folders (default: .)")
    p.add_argument("--device", metavar="SERIAL|sim[:APP]", default="sim",
                   help="where to run: a fresh simulator per script (sim, sim:APP; the default) or an adb serial")
    p.add_argument("--doc", metavar="APP.yaml", help="the app document (default: each script's `# doc:` line)")
    p.add_argument("--junit", metavar="FILE.xml", help="also write a JUnit XML report")
    p.add_argument("--trace-dir", metavar="DIR", help="write each script's trace to DIR/<script>.jsonl")
    p.add_argument("--max-actions", type=int, metavar="N", help="UI action budget per script (default: 50)")
    p.add_argument("--timeout", type=float, metavar="S", help="wall-clock budget per script in seconds (default: 60)")
    p.add_argument("-v", "--verbose", action="store_true", help="show what each script printed")
    p.set_defaults(handler=_cmd_test)


def _cmd_test(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tapir.dsl.budget import Budgets
    from tapir.runtime.testrun import TestResult, collect, junit_xml, run_tests

    _check_device_flag(args.device)
    scripts = collect(args.paths)
    for flag, value in (("--max-actions", args.max_actions), ("--timeout", args.timeout)):
        if value is not None and value <= 0:
            raise UsageError(f"{flag} must be positive")
    trace_dir = Path(args.trace_dir) if args.trace_dir else None
    if trace_dir is not None:
        try:
            trace_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--trace-dir: cannot make the folder {trace_dir}: {exc.strerror or exc}") from None

    def report(r: TestResult) -> None:
        print(f"{'PASS' if r.ok else 'FAIL'} {r.script} ({r.seconds:.2f} s)", flush=True)
        if args.verbose:
            for line in r.printed:
                print(f"    | {line}")
        if r.error:
            print("    " + r.error.replace("\n", "\n    "), flush=True)

    budgets = Budgets().replace(max_actions=args.max_actions, timeout_s=args.timeout)
    run = run_tests(scripts, device=args.device, doc=args.doc, budgets=budgets, trace_dir=trace_dir,
                    on_result=report)
    print(run.summary())
    if args.junit:
        Path(args.junit).write_text(junit_xml(run), encoding="utf-8")
    return 0 if run.failed == 0 else 1


# The order of `tapir --help`.
_COMMANDS: list[Callable[[Subparsers], None]] = [
    _register_check,
    _register_run,
    _register_test,
    _register_doc,
    _register_compile,
    _register_sim,
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except UsageError as exc:
        print(f"tapir: {exc.message}", file=sys.stderr)
        return 2
    except TapirError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        # An error that belongs to no file (a device, a port) still says who is speaking.
        print(exc.render() if exc.location() else f"tapir: {exc.render()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # an internal bug: say so plainly, keep the traceback for --debug
        if args.debug:
            raise
        print(
            f"tapir: internal error: {type(exc).__name__}: {exc}\n(run again with --debug for a traceback)",
            file=sys.stderr,
        )
        return 70


if __name__ == "__main__":
    sys.exit(main())
