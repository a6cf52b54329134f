"""``tapir fmt``: lay scripts out one way (comments kept); ``--check`` only says which would change."""

from __future__ import annotations

import argparse
import sys

from tapir.cli.common import Subparsers
from tapir.core.errors import UsageError


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "fmt",
        help="format Tapir scripts (spacing, indentation, blank lines; comments and line breaks kept)",
        description="Rewrite each script in the one Tapir layout: four-space blocks, PEP 8 spacing, at most two\n"
                    "blank lines, comments and line breaks kept, strings untouched. Formatting never changes what\n"
                    "a script does. A script with syntax errors is left as it is and its errors are shown.\n"
                    "Folders are searched for *.tap (generated/ skipped); '-' formats stdin to stdout.\n"
                    "Exit status: 0 done (or, with --check, nothing to change), 1 a script would change (--check)\n"
                    "or has syntax errors, 2 usage error.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="scripts or folders, or '-' for stdin")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a script would be reformatted")
    p.add_argument("--diff", action="store_true", help="change nothing; print what would change as a unified diff")
    p.set_defaults(handler=_cmd_fmt)


def _scripts(paths: list[str]) -> list[str]:
    from pathlib import Path

    out: list[str] = []
    for raw in paths:
        path = Path(raw)
        if raw == "-":
            out.append(raw)
        elif path.is_dir():
            out += [str(p) for p in sorted(path.rglob("*.tap")) if "generated" not in p.parts]
        elif path.is_file():
            out.append(raw)
        else:
            raise UsageError(f"no such file or folder: {raw}")
    if not out:
        raise UsageError("no scripts (*.tap) found in " + ", ".join(paths))
    return out


def _cmd_fmt(args: argparse.Namespace) -> int:
    import difflib
    from pathlib import Path

    from tapir.service import Workspace, format_source

    ws = Workspace()
    scripts = _scripts(args.paths)
    status = 0
    changed = unchanged = failed = 0
    for name in scripts:
        source = sys.stdin.read() if name == "-" else ws.text_of(name)
        result = format_source(source)
        if result.text is None:
            failed += 1
            status = 1
            for d in result.errors:
                print(d.render(source, name if name != "-" else "<stdin>"), file=sys.stderr)
            continue
        if name == "-":
            sys.stdout.write(result.text)
            continue
        if not result.changed:
            unchanged += 1
            continue
        changed += 1
        if args.diff:
            sys.stdout.writelines(difflib.unified_diff(source.splitlines(keepends=True),
                                                       result.text.splitlines(keepends=True), name, name))
        if args.check or args.diff:
            print(f"would reformat {name}", file=sys.stderr)
            status = 1 if args.check else status
            continue
        try:
            Path(name).write_text(result.text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {name}: {exc.strerror or exc}") from None
        print(f"reformatted {name}", file=sys.stderr)
    if scripts != ["-"]:
        verb = "would be reformatted" if args.check or args.diff else "reformatted"
        parts = [f"{changed} script{'s' if changed != 1 else ''} {verb}", f"{unchanged} unchanged"]
        if failed:
            parts.append(f"{failed} with syntax errors")
        print(", ".join(parts), file=sys.stderr)
    return status
