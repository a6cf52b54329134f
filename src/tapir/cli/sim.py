"""``tapir sim``: a simulated Android device that adb and Tapir can use."""

from __future__ import annotations

import argparse

from tapir.cli.common import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "sim",
        help="run a simulated Android device that adb and Tapir can use",
        description="Run a simulated Android phone in the foreground and attach it to the adb server,\n"
                    "so `adb -s SERIAL ...`, adbutils and `tapir run --device SERIAL` all work with it.\n"
                    "Ctrl-C stops it and disconnects it from adb.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--app", action="append", metavar="NAME",
                   help="sample app to install (repeatable; default: music)")
    p.add_argument("--replay", action="append", metavar="DIR",
                   help="install an app that replays a recorded DroidBot session from DIR (repeatable)")
    p.add_argument("--port", type=int, default=0, help="TCP port of the simulated device (default: a free one)")
    p.add_argument("--adb-port", type=int, metavar="PORT",
                   help="port of the adb server (default: $ANDROID_ADB_SERVER_PORT, else 5037; started if needed)")
    p.add_argument("--home", action="store_true", help="start on the home screen instead of in the first app")
    p.add_argument("--latency", action="append", metavar="CMD=SECONDS",
                   help="delay a device command, e.g. uiautomator=1.5 or input=0.3 ('*' for all; repeatable)")
    p.add_argument("--dump-errors", type=int, default=0, metavar="N",
                   help="the next N `uiautomator dump`s fail with 'could not get idle state'")
    p.add_argument("--drop-after", type=int, metavar="N", help="drop the adb connection after N commands")
    p.add_argument("--drop-at", choices=["open", "reply"], default="open",
                   help="where --drop-after drops: before the command runs (open, the default), or after it "
                        "ran and before its answer (reply)")
    p.add_argument("--input-lag", type=float, default=0.0, metavar="SECONDS",
                   help="an app that redraws late: for this long after an input, dumps show the screen from before it")
    p.add_argument("--event", action="append", metavar="WHAT@N[:COMMAND]",
                   help="something that happens by itself after the Nth command (default: input): crash (the app "
                        "dies), dialog (a system permission dialog covers the app), home or back; "
                        "e.g. crash@3, dialog@2:uiautomator (repeatable)")
    p.add_argument("--drift", metavar="KIND", help="UI drift of the apps (text, ids, insert, reorder or all)")
    p.add_argument("--drift-seed", type=int, default=0, metavar="N", help="which drifted variant (default: 0)")
    p.add_argument("--drift-rate", type=float, default=0.5, metavar="R", help="share of elements drifted (0-1)")
    p.add_argument("--auth", choices=["accept", "reject"],
                   help="simulate USB-debugging authorization: accept any key, or stay unauthorized")
    p.set_defaults(handler=_cmd_sim)


def try_commands(adb_path: str, adb_port: int, serial: str) -> list[str]:
    """Commands that reach the simulator from a fresh shell: the adb binary by its full path when
    ``adb`` on PATH is not that one, and the server's port whenever it is not adb's default."""
    import os
    import shlex
    import shutil

    from tapir.runtime.adb_transport import DEFAULT_PORT

    on_path = shutil.which("adb")
    same = on_path is not None and os.path.realpath(on_path) == os.path.realpath(adb_path)
    adb = "adb" if same else shlex.quote(adb_path)
    port = "" if adb_port == DEFAULT_PORT else f" -P {adb_port}"
    run_port = "" if adb_port == DEFAULT_PORT else f" --adb-port {adb_port}"
    target = f"{adb}{port} -s {shlex.quote(serial)}"
    return [f"{target} exec-out uiautomator dump /dev/tty",
            f"{target} exec-out screencap -p > screen.png",
            f"tapir run SCRIPT.tap --device {shlex.quote(serial)}{run_port}"]


def _cmd_sim(args: argparse.Namespace) -> int:
    from tapir.runtime.simulator import simulator_errors

    with simulator_errors():
        return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    import signal
    import threading

    from tapir.runtime.adb_transport import server_address
    from tapir.sim.faults import Faults, parse_event, parse_latency
    from tapir.sim.launch import replay_app, resolve_app, start_sim

    adb_port = server_address(args.adb_port)[1]
    apps = [resolve_app(name) for name in (args.app or ([] if args.replay else ["music"]))]
    apps += [replay_app(folder) for folder in args.replay or []]
    faults = Faults.from_options(
        latency=parse_latency(args.latency), dump_errors=args.dump_errors, drop_after=args.drop_after,
        drop_at=args.drop_at, input_lag=args.input_lag, events=[parse_event(e) for e in args.event or []],
        drift=args.drift, drift_options={"seed": args.drift_seed, "rate": args.drift_rate} if args.drift else None)
    sim = start_sim(apps, port=args.port, adb_port=adb_port, faults=faults, auth=args.auth,
                    foreground=None if args.home else apps[0].package)
    installed = ", ".join(f"{app.label} ({app.package})" for app in apps)
    commands = "\n".join(f"  {c}" for c in try_commands(sim.adb_path, adb_port, sim.serial))
    print(f"serial: {sim.serial}", flush=True)
    print(f"Simulated device {sim.serial} is attached to the adb server on port {adb_port}.\n"
          f"Installed: {installed}. On screen: {sim.device.current_package}.\n"
          f"Try, from any shell:\n{commands}\n"
          f"Press Ctrl-C to stop.", flush=True)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # A shell starting us in the background ignores SIGINT for us; `kill -INT` should still stop us.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        while not stop.wait(0.5):  # a timed wait, so Ctrl-C is delivered promptly
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
        sim.stop()
    print(f"\nstopped; {sim.serial} is disconnected", flush=True)
    return 0
