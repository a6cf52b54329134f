"""``tapir test``: run test scripts, each on a fresh simulated device or on a device."""

from __future__ import annotations

import argparse

from tapir.cli.common import Subparsers, add_safety_flags, check_device_flag, check_positive, safety_from_args
from tapir.dsl.errors import UsageError


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "test",
        help="run test scripts (*.tap with asserts), each on a fresh simulated device or on a device",
        description="Run every script named (or found under the folders named) and print one PASS/FAIL line\n"
                    "per script, then `N passed, M failed`. Each script is checked first, as `tapir check` does:\n"
                    "one with errors fails without starting a device (warnings are shown). A script passes when\n"
                    "it runs to its end (every assert held). Exit status 1 when any failed.\n\n"
                    "The guards apply as in `tapir run` (docs/safety.md): sensitive taps need --allow (or the\n"
                    "script's `# allow:` line), secrets come from --secrets or $TAPIR_SECRET_NAME.",
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
    add_safety_flags(p)
    p.set_defaults(handler=_cmd_test)


def _cmd_test(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tapir.dsl.budget import Budgets
    from tapir.runtime.testrun import TestResult, collect, junit_xml, run_tests

    check_device_flag(args.device)
    scripts = collect(args.paths)
    check_positive(max_actions=args.max_actions, timeout=args.timeout)
    trace_dir = Path(args.trace_dir) if args.trace_dir else None
    if trace_dir is not None:
        try:
            trace_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--trace-dir: cannot make the folder {trace_dir}: {exc.strerror or exc}") from None

    def report(r: TestResult) -> None:
        print(f"{'PASS' if r.ok else 'FAIL'} {r.script} ({r.seconds:.2f} s)", flush=True)
        if r.warnings:
            print("    " + r.warnings.replace("\n", "\n    "), flush=True)
        if args.verbose:
            for line in r.printed:
                print(f"    | {line}")
        if r.error:
            print("    " + r.error.replace("\n", "\n    "), flush=True)

    from tapir.service import Workspace

    ws = Workspace()
    safety_from_args(args, ws, None)  # a malformed flag or secrets file is a usage error now, not per script
    budgets = Budgets().replace(max_actions=args.max_actions, timeout_s=args.timeout)
    run = run_tests(scripts, device=args.device, doc=args.doc, budgets=budgets, trace_dir=trace_dir,
                    on_result=report, safety_for=lambda script: safety_from_args(args, ws, script))
    print(run.summary())
    if args.junit:
        Path(args.junit).write_text(junit_xml(run), encoding="utf-8")
    return 0 if run.failed == 0 else 1
