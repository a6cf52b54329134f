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
from tapir.dsl.errors import TapirError, UsageError

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


# The order of `tapir --help`.
_COMMANDS: list[Callable[[Subparsers], None]] = [
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
