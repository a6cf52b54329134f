"""The ``tapir`` command.

This package only presents: it parses arguments, calls into the layers below and turns every
``TapirError`` into its rendered message and an exit status. No traceback reaches a user unless
``--debug`` is given.

Each command is a module here with ``register(sub)``, which adds its parser and sets ``handler``;
handlers import what they need lazily (so `tapir --help` stays fast), stay thin (the work lives in
the layers below) and return the exit status.

Exit status: 0 success, 1 the script/check/run failed, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from tapir import __version__
from tapir.cli.common import flag_for
from tapir.core.errors import TapirError, UsageError

__all__ = ["COMMANDS", "main"]

#: The command modules, in the order of `tapir --help`.
COMMANDS: tuple[str, ...] = (
    "check", "fmt", "run", "repl", "test", "gen", "eval", "synth", "doc", "compile", "explore", "docgen",
    "inspect", "record", "sim", "lsp", "model",
)


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
    for name in COMMANDS:
        importlib.import_module(f"tapir.cli.{name}").register(sub)
    return parser


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command that ``args`` were parsed for: ``tapir doc validate``'s, say."""
    while True:
        # argparse keeps its subcommands only in a private action list; nothing public finds them.
        chosen = [a.choices[getattr(args, a.dest)] for a in parser._actions
                  if isinstance(a, argparse._SubParsersAction) and a.choices and getattr(args, a.dest, None)]
        if not chosen:
            return parser
        parser = chosen[0]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # parse_args would have the top parser refuse them, showing `tapir`'s usage; the command's
        # own usage is the one that lists the flags the user meant.
        _command_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        # A simulator knows nothing of Tapir; whatever command started one, its errors read as ours.
        from tapir.runtime.simulator import simulator_errors

        with simulator_errors():
            return int(args.handler(args) or 0)
    except UsageError as exc:
        # the layers below name settings; here a setting is the flag that sets it
        print(f"tapir: {exc.in_words(flag_for(exc.setting))}", file=sys.stderr)
        if exc.hint:  # what to do about it: `tapir model install NAME`, the keys there are...
            print(f"  hint: {exc.hint}", file=sys.stderr)
        return 2
    except TapirError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        # An error that belongs to no file (a device, a port) still says who is speaking.
        print(exc.render() if exc.location() else f"tapir: {exc.render()}", file=sys.stderr)
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

