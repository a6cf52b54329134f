"""``tapir compile``: an app document to page objects, symbols, prompt text and a reference."""

from __future__ import annotations

import argparse

from tapir.cli.common import Subparsers, print_problems
from tapir.core.errors import UsageError


def register(sub: Subparsers) -> None:
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

    from tapir.core.errors import DocumentError
    from tapir.docgen.compile import OUTPUTS, compile_document, write_outputs

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
            print_problems(exc.problems, args.document)
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
