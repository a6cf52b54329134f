"""``tapir check``: report every problem of scripts, against their app document."""

from __future__ import annotations

import argparse
import sys

from tapir.cli.common import Subparsers
from tapir.core.errors import UsageError


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "check",
        help="check Tapir scripts: syntax, and names, kinds and calls against the app document",
        description="Report every problem of each script: every syntax error (the rest of the script is still\n"
                    "checked), unknown $elements (with suggestions), actions the element's kind does not allow,\n"
                    "wrong arguments, unknown names, use before assignment, and problems of the app document.\n"
                    "The document comes from --doc, the script's first line `# doc: path/app.yaml`, or the\n"
                    "[documents] of the project's tapir.toml. `tapir run` and `tapir test` refuse exactly the\n"
                    "errors reported here. Exit status: 0 clean (warnings allowed), 1 errors, 2 usage error.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scripts", nargs="+", metavar="FILE.tap", help="script files to check")
    p.add_argument("--doc", metavar="APP.yaml", help="the app document (YAML/JSON, or a compiled .symbols.json)")
    p.add_argument("--json", action="store_true", help="print the diagnostics as JSON (one list for all scripts)")
    p.set_defaults(handler=_cmd_check)


def _cmd_check(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from tapir.service import Workspace

    if args.doc and not Path(args.doc).is_file():
        raise UsageError(f"no such file: {args.doc}")
    ws = Workspace()
    results = [ws.check(name, doc=args.doc) for name in args.scripts]  # (reads every file first)
    status = 0
    found: list[dict[str, object]] = []
    reported: set[str] = set()
    for name, result in zip(args.scripts, results, strict=True):
        policy = ws.warnings_policy(name)
        if result.blocking(policy):
            status = 1
        if args.json:
            found += [{"file": name, **d.to_dict()} for d in result.shown(policy)]
            for other in result.related:
                if other.path not in reported:
                    reported.add(other.path)
                    found += [{"file": other.path, **d.to_dict()} for d in other.diagnostics]
            continue
        for d in result.shown(policy):
            print(d.render(result.source, name), file=sys.stderr)
        for other in result.related:
            if other.path not in reported:
                reported.add(other.path)
                for d in other.diagnostics:
                    print(d.render(other.text, other.path), file=sys.stderr)
        if not result.shown(policy):
            against = f" (against {result.document.path})" if result.document is not None else ""
            print(f"{name}: ok{against}")
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
    elif len(results) > 1 or status:
        errors = sum(len(r.errors) for r in results)
        warnings = sum(len(r.warnings) for r in results)
        print(f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''} "
              f"in {len(results)} script{'s' if len(results) != 1 else ''}", file=sys.stderr)
    return status
