"""``tapir docgen``: build an app document from exploration traces."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from tapir.cli.common import Subparsers, check_positive
from tapir.core.errors import UsageError

if TYPE_CHECKING:
    from tapir.docgen.build.trace import Trace
    from tapir.runtime.explore.compare import DocumentComparison


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "docgen",
        help="build an app document from exploration traces",
        description=(
            "Build an app document from what `tapir explore` recorded (or a DroidBot recording\n"
            "converted with `tapir explore --import-droidbot`): screens grouped by layout and\n"
            "function, their elements with checked identifiers, effects and dependency paths.\n"
            "No model is needed: names come from titles, ids and labels.\n\n"
            "  tapir docgen music-trace -o music.yaml\n"
            "  tapir docgen music-trace more-trace -o music.yaml --update   # keep names and hand edits\n"
            "  tapir docgen music-trace -o gen.yaml --compare samples/music/music.yaml"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("traces", nargs="+", metavar="TRACE_DIR", help="trace directories (from `tapir explore`)")
    p.add_argument("-o", "--output", required=True, metavar="APP.yaml", help="the document to write")
    p.add_argument("--update", action="store_true",
                   help="merge into the existing OUTPUT: keep its names, descriptions and other hand edits")
    p.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists (hand edits are lost)")
    p.add_argument("--package", help="the app's package (default: the one the traces recorded)")
    p.add_argument("--name", help="the app's name in the document (default: from the package)")
    p.add_argument("--report", metavar="FILE.json", help="also write the build report as JSON")
    p.add_argument("--max-paths", type=int, default=4, metavar="N", help="dependency paths per screen (default: 4)")
    p.add_argument("--max-path-length", type=int, default=8, metavar="N", help="steps per path (default: 8)")
    p.add_argument("--danger", action="append", default=[], metavar="WORD",
                   help="another word that marks an element as sensitive (repeatable)")
    p.add_argument("--compare", metavar="REFERENCE.yaml",
                   help="compare the result with another document on the traces' screens")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=_cmd_docgen)


def _cmd_docgen(args: argparse.Namespace) -> int:
    from tapir.docgen.build.builder import BuildOptions, build_document
    from tapir.docgen.build.policy import DangerPolicy
    from tapir.docgen.build.trace import read_trace
    from tapir.docgen.writer import to_yaml

    check_positive(max_paths=args.max_paths, max_path_length=args.max_path_length)
    out = Path(args.output)
    if out.is_dir():
        raise UsageError(f"-o {args.output} is a directory; give the document's file name")
    if out.exists() and not (args.update or args.force):
        raise UsageError(f"{args.output} exists: --update merges into it (names and hand edits kept), "
                         "--force overwrites it")
    if args.update and not out.exists():
        raise UsageError(f"--update: {args.output} does not exist yet (leave --update out to create it)")
    traces = [read_trace(t) for t in args.traces]
    options = BuildOptions(package=args.package, app_name=args.name, max_paths=args.max_paths,
                           max_path_length=args.max_path_length,
                           policy=DangerPolicy.default().extended(args.danger))
    old = None
    if args.update:
        from tapir.docgen.loader import load_document

        old = load_document(out)
        options = BuildOptions(package=options.package or old.app.package, app_name=options.app_name,
                               max_paths=options.max_paths, max_path_length=options.max_path_length,
                               policy=options.policy)
    result = build_document(traces, options)
    text = result.text
    merged = None
    if old is not None:
        from tapir.core.errors import DocumentError
        from tapir.docgen.build.merge import merge
        from tapir.docgen.loader import loads_document

        data, merged = merge(old, result)
        header = (f"Updated by `tapir docgen --update` from {', '.join(args.traces)}; names and hand edits kept.\n"
                  "Regenerate with the same command after exploring again.")
        text = to_yaml(data, header)
        check = loads_document(text, source=str(out))
        if check.document is None:
            raise DocumentError("the merged document does not validate (the old file is unchanged)",
                                list(check.errors), filename=str(out))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    if args.report:
        Path(args.report).write_text(json.dumps(result.report.to_json(), indent=2) + "\n", encoding="utf-8")
    comparison = None
    if args.compare:
        comparison = _compare(out, args.compare, traces)
    if args.json:
        data = {"output": str(out), "report": result.report.to_json()}
        if merged is not None:
            data["merge"] = vars(merged)
        if comparison is not None:
            data["compare"] = comparison.to_json()
        print(json.dumps(data, indent=2))
    else:
        print(result.report.render())
        if merged is not None:
            print(merged.render())
        if comparison is not None:
            print(f"compared with {args.compare}: {comparison.render()}")
        print(f"wrote {out}")
    return 0


def _compare(generated: Path, reference: str, traces: list[Trace]) -> DocumentComparison:
    from tapir.docgen.loader import load_document
    from tapir.runtime.explore.compare import compare_documents

    if not Path(reference).is_file():
        raise UsageError(f"--compare: no such file: {reference}")
    ref = load_document(reference)
    gen = load_document(generated)
    trees = [t.tree(s) for t in traces for s in t.states if t.package_of(s) == ref.app.package]
    return compare_documents(gen, ref, trees)
