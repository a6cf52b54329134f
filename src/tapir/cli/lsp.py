"""``tapir lsp``: the language server, for editors (stdio, or ``--tcp PORT``)."""

from __future__ import annotations

import argparse
import sys

from tapir.cli.common import Subparsers
from tapir.core.errors import UsageError


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "lsp",
        help="run the language server for editors (diagnostics, completion, hover, go to definition...)",
        description="Speak the Language Server Protocol for Tapir scripts: problems as you type, completion of\n"
                    "elements, methods, options and names, hover, go to definition, references, outline,\n"
                    "signature help, semantic tokens, quick fixes and formatting (tapir fmt).\n"
                    "Editors start it themselves (docs/editors.md); it reads stdin and writes stdout until the\n"
                    "editor closes them or its process exits. With --tcp it listens on a port instead and\n"
                    "serves each client that connects (one after another, or several at once) until Ctrl-C.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    p.add_argument("--tcp", type=int, metavar="PORT", help="listen on PORT instead (0: any free port, printed)")
    p.add_argument("--host", default="127.0.0.1", help="the address --tcp listens on (default 127.0.0.1)")
    p.add_argument("--debounce", type=float, default=50, metavar="MS",
                   help="milliseconds to wait after an edit before checking the script again (default 50)")
    p.add_argument("--max-file-size", type=float, default=1.0, metavar="MB",
                   help="do not analyse scripts larger than this (default 1 MB)")
    p.add_argument("--log-file", metavar="PATH", help="write the server's log here (default: stderr)")
    p.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: every message)")
    p.set_defaults(handler=_cmd_lsp)


def _cmd_lsp(args: argparse.Namespace) -> int:
    import logging

    from tapir.lsp import ServerOptions, serve_stdio, serve_tcp

    if args.stdio and args.tcp is not None:
        raise UsageError("choose --stdio or --tcp PORT, not both")
    if args.tcp is not None and not 0 <= args.tcp <= 65535:
        raise UsageError(f"--tcp needs a port from 0 to 65535, not {args.tcp}")
    if args.debounce < 0 or args.max_file_size <= 0:
        raise UsageError("--debounce must be 0 or more and --max-file-size more than 0")
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    try:
        handler: logging.Handler = (logging.FileHandler(args.log_file, encoding="utf-8") if args.log_file
                                    else logging.StreamHandler(sys.stderr))
    except OSError as exc:
        raise UsageError(f"cannot write the log file {args.log_file}: {exc.strerror or exc}") from None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    if args.verbose < 2:
        logging.getLogger("pygls").setLevel(max(level, logging.WARNING))
    options = ServerOptions(debounce=args.debounce / 1000, max_file_size=int(args.max_file_size * (1 << 20)))
    if args.tcp is None:
        serve_stdio(options)
        return 0

    def ready(port: int) -> None:
        print(f"tapir lsp: listening on {args.host}:{port}", file=sys.stderr, flush=True)

    try:
        serve_tcp(args.host, args.tcp, options, ready)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.tcp}: {exc.strerror or exc}") from None
    return 0
