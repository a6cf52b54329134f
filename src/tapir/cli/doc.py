"""``tapir doc import|validate``: bring AutoDroid-V2 documents in, and validate documents."""

from __future__ import annotations

import argparse
import sys

from tapir.cli.common import Subparsers, print_problems
from tapir.core.errors import UsageError


def register(sub: Subparsers) -> None:
    p = sub.add_parser("doc", help="work with app documents (import from AutoDroid-V2, validate)")
    dsub = p.add_subparsers(dest="doc_command", metavar="DOC_COMMAND")
    imp = dsub.add_parser("import", help="convert an AutoDroid-V2 document (JSON) into a Tapir app document")
    imp.add_argument("upstream", help="the upstream JSON document")
    imp.add_argument("-o", "--output", required=True, help="the YAML document to write")
    imp.add_argument("--package", help="the app's package name (upstream documents do not say)")
    imp.add_argument("--name", help="the app's name (default: from the file name)")
    imp.add_argument("--json", action="store_true", help="print the import report as JSON")
    imp.add_argument("--strict", action="store_true",
                     help="refuse a document with defects instead of repairing them (the repairs become errors)")
    imp.set_defaults(handler=_cmd_doc_import)
    val = dsub.add_parser("validate", help="load a document and report every problem")
    val.add_argument("document", help="app document (YAML or JSON)")
    val.set_defaults(handler=_cmd_doc_validate)
    p.set_defaults(handler=lambda args: _doc_usage(p))


def _doc_usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _cmd_doc_import(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict
    from pathlib import Path

    from tapir.core.errors import DocumentError
    from tapir.docgen.upstream import import_file

    if not Path(args.upstream).is_file():
        raise UsageError(f"no such file: {args.upstream}")
    try:
        text, report = import_file(args.upstream, package=args.package, app_name=args.name, strict=args.strict)
    except DocumentError as exc:
        if exc.problems:
            print_problems(exc.problems, exc.filename or args.upstream)
            return 1
        raise
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    if report.repairs:
        # On stderr, as warnings, even with --json: what was changed or left out must reach the user.
        print_problems(report.repair_warnings(), args.upstream, source="")
    if args.json:
        data = asdict(report)
        data["problems"] = [p.to_dict() for p in report.problems]
        data["output"] = args.output
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        print(report.render(repairs=False))
        print(f"wrote {args.output}")
    return 0


def _cmd_doc_validate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tapir.docgen.loader import load_document_report

    if not Path(args.document).is_file():
        raise UsageError(f"no such file: {args.document}")
    result = load_document_report(args.document)
    if result.problems:
        print_problems(result.problems, args.document)
    if result.document is None:
        return 1
    c = result.document.counts()
    watchers = len(result.document.watchers)
    print(f"{args.document}: ok: {c['screens']} screens, {c['elements']} elements, {c['identifiers']} identifiers, "
          f"{c['paths']} dependency paths" + (f", {watchers} watcher{'s' if watchers != 1 else ''}" if watchers else "")
          + (f", {len(result.warnings)} warnings" if result.warnings else ""))
    return 0
