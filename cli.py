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

from tapir import __version__
from tapir.dsl.errors import Problem, TapirError, UsageError

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
    Path(args.output).write_text(text, encoding="utf-8")
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
    try:
        compiled = compile_document(args.document, outputs)
    except DocumentError as exc:
        if exc.problems:
            _print_problems(exc.problems, args.document)
            return 1
        raise
    out_dir = Path(args.out_dir) if args.out_dir else Path(args.document).parent / "generated"
    written = write_outputs(compiled, out_dir)
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


# The order of `tapir --help`.
_COMMANDS: list[Callable[[Subparsers], None]] = [
    _register_doc,
    _register_compile,
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
        print(exc.render(), file=sys.stderr)
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
