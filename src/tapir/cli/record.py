"""``tapir record``: a person's actions written as a Tapir script (docs/inspector.md, "Recording").

    tapir record --device sim:music -o play.tap          # act from the inspector's page
    tapir record --device SERIAL --doc app.yaml -o flow.tap   # ... or on the phone itself

Each action is grounded to a document element and written as a statement as soon as it is done
(the file is always a script so far); when recording stops the script is checked as `tapir check`
checks it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tapir.cli.common import Subparsers
from tapir.cli.inspect import _check_output, add_device_flags, add_page_flags, options, serve


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "record",
        help="record a script: each action on the device (or from the inspector's page) becomes a statement",
        description="Record what a person does as a Tapir script. Every tap, long tap, text typed, scroll and\n"
                    "key is grounded to a document element and written as a statement ($screen__element.tap(),\n"
                    "set_text, match(\"...\") for list items, scroll, back()); an action on a view no element\n"
                    "claims is written as comments with suggested identifiers (add the element from the page and\n"
                    "do it again). Actions are read from the device's input (getevent) where it offers it, and\n"
                    "from the inspector's page, which this command serves too. The script is saved after every\n"
                    "action and checked when recording stops (Ctrl-C); replay it with `tapir run`.\n\n"
                    "examples:\n"
                    "  tapir record --device sim:music -o play.tap --open\n"
                    "  tapir record --device emulator-5554 --doc app.yaml -o flow.tap --no-page",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", metavar="FILE.tap", required=True, help="the script to write")
    add_device_flags(p)
    p.add_argument("--no-page", action="store_true",
                   help="do not serve the inspector's page: record only what is done on the device")
    add_page_flags(p)
    p.set_defaults(handler=_cmd_record)


def _cmd_record(args: argparse.Namespace) -> int:
    output = Path(args.output)
    _check_output(output)
    status = serve(args, options(args, record=output, page=not args.no_page), "record")
    if not output.is_file():
        return status
    from tapir.service import Workspace

    result = Workspace().check(str(output))
    text = output.read_text(encoding="utf-8")
    for d in result.errors:
        print(d.render(text, str(output)), file=sys.stderr)
    statements = sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    print(f"recorded {statements} statement{'s' if statements != 1 else ''} to {output}"
          + (f"; {len(result.errors)} error(s) to fix before `tapir run`" if result.errors else
             f"; replay it with `tapir run {output} --device {args.device}`"), file=sys.stderr)
    return 1 if result.errors else status
