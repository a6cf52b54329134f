"""``tapir inspect``: a local web page showing the live screen as Tapir sees it (docs/inspector.md).

    tapir inspect --device sim:music                  # http://127.0.0.1:8765/ (the sample document)
    tapir inspect --device SERIAL --doc app.yaml --open
    tapir inspect --device SERIAL --doc app.yaml --host 0.0.0.0 --allow-remote   # token printed with the URL

The page, the device and the document editing all live in ``tapir.inspector``; this module and
``record.py`` only read flags (``add_page_flags`` / ``serve``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tapir.cli.common import (
    Subparsers,
    adb_server,
    add_adb_flags,
    check_device_flag,
    check_positive,
    device_on_server,
    project_config,
    stop_signals,
)
from tapir.core.errors import UsageError


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "inspect",
        help="a local web page: the live screen, the hierarchy, the document's grounding; edit the document",
        description="Serve a page (on this machine only, by default) that shows the device's screen as Tapir\n"
                    "sees it: the screenshot beside the view hierarchy (hover highlights both), the document\n"
                    "screen identified now and each of its elements outlined where it grounds, with how\n"
                    "(identifier N, fuzzy, embedding) and its score; elements that do not ground are listed.\n"
                    "Click a view for its attributes and the identifiers Tapir would write for it (each checked\n"
                    "for uniqueness on this screen), then add it to the document as an element, add an\n"
                    "identifier to an element, or mark one sensitive: the document file is edited in place\n"
                    "(comments and order kept) and checked. Tap, type, scroll and back from the page drive the\n"
                    "device; the page follows every change. Ctrl-C stops.\n\n"
                    "examples:\n"
                    "  tapir inspect --device sim:music --open\n"
                    "  tapir inspect --device emulator-5554 --doc app.yaml --port 9000\n"
                    "  tapir inspect --device emulator-5554 --doc app.yaml --record flow.tap",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_device_flags(p)
    p.add_argument("--record", metavar="FILE.tap",
                   help="record a script from the start (as `tapir record -o FILE.tap` does)")
    add_page_flags(p)
    p.set_defaults(handler=_cmd_inspect)


def add_device_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", metavar="SERIAL|sim[:APP]", required=True,
                   help="the device (an adb serial, HOST:PORT/SERIAL for one on another adb server, or the "
                        "simulator: sim:APP)")
    add_adb_flags(p)
    p.add_argument("--doc", metavar="APP.yaml",
                   help="the app document, edited from the page (default: tapir.toml [documents], or with "
                        "--device sim:APP that app's sample document)")
    p.add_argument("--interval", type=float, default=None, metavar="S",
                   help="seconds between dumps while nothing happens (default: 0.5)")


def add_page_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=None,
                   help="the port (default: 8765, or a free one when it is taken; 0: any free port)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow --host to be an address other machines reach; a token is then required")
    p.add_argument("--token", help="require this token (default: none on localhost, a random one with --allow-remote)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--no-screenshots", action="store_true",
                   help="do not take screenshots (a slow device: the page draws the views' outlines only)")


def options(args: argparse.Namespace, *, record: Path | None, page: bool = True) -> object:
    """The ``InspectorOptions`` the flags ask for (the document resolved as the REPL resolves it)."""
    from tapir.inspector.live import DEFAULT_INTERVAL_S
    from tapir.inspector.session import InspectorOptions
    from tapir.service import Workspace
    from tapir.service.sessions import session_document
    from tapir.sim.launch import check_sim_spec

    check_device_flag(args.device)
    check_sim_spec(args.device)
    adb_host, adb_port = adb_server(args, project_config(None))
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError("the inspector's web page needs Starlette and uvicorn: pip install 'tapir[inspect]'") from None
    check_positive(interval=args.interval)
    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: give 0 to 65535")
    document, _ = session_document(Workspace(), args.device, args.doc, Path.cwd())
    if document is None:
        raise UsageError("no app document: give --doc APP.yaml (or a [documents] entry in tapir.toml)")
    return InspectorOptions(
        device=device_on_server(args.device, adb_host, adb_port), adb_port=adb_port, document=document,
        host=args.host, port=args.port, token=args.token,
        allow_remote=args.allow_remote, interval=args.interval or DEFAULT_INTERVAL_S,
        screenshots=not args.no_screenshots, record=record, page=page)


def serve(args: argparse.Namespace, opts: object, banner: str) -> int:
    """Open the session, print where the page is, serve until Ctrl-C, close everything."""
    import webbrowser

    from tapir.inspector.session import InspectorOptions, InspectorSession

    assert isinstance(opts, InspectorOptions)
    session = InspectorSession(opts)
    print(f"tapir {banner} · {opts.device} · document {opts.document}", file=sys.stderr)
    try:
        session.open()
        if session.input_note and opts.record is not None:
            print(f"tapir: actions on the device itself are not recorded ({session.input_note}); "
                  "act from the page", file=sys.stderr)
        if session.server is None:
            with stop_signals():  # a `kill PID` closes the session as Ctrl-C does
                print("recording what is done on the device · Ctrl-C stops", file=sys.stderr)
                _wait_forever()
            return 0
        url = session.url
        print(f"the inspector is at {url}" + ("" if session.policy.local_only else "  (reachable from other machines)"),
              file=sys.stderr)
        print("Ctrl-C stops", file=sys.stderr)
        sys.stderr.flush()
        if args.open:
            webbrowser.open(url)
        session.server.run()  # uvicorn: returns on Ctrl-C
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        session.close()


def _wait_forever() -> None:
    import threading

    threading.Event().wait()


def _cmd_inspect(args: argparse.Namespace) -> int:
    record = Path(args.record) if args.record else None
    if record is not None:
        _check_output(record)
    status = serve(args, options(args, record=record), "inspect")
    if record is not None:
        print(f"recorded to {record}", file=sys.stderr)
    return status


def _check_output(path: Path) -> None:
    if path.is_dir():
        raise UsageError(f"{path} is a directory: give a script file name (flow.tap)")
    if not path.resolve().parent.is_dir():
        raise UsageError(f"{path.parent} does not exist")
