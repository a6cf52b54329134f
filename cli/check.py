"""``tapir check``: report every problem of scripts, against their app document."""

from __future__ import annotations

import argparse
import sys

from tapir.cli.common import Subparsers, print_problems, read_script
from tapir.dsl.errors import UsageError


def register(sub: Subparsers) -> None:
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

    sources = {name: read_script(name) for name in args.scripts}
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
                print_problems(exc.problems, exc.filename or str(document))
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
