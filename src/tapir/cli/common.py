"""What the command modules share: reading scripts, printing document problems, flag checks, the
project's ``tapir.toml``."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tapir.core.diagnostics import Diagnostic
from tapir.core.errors import UsageError

if TYPE_CHECKING:
    from tapir.core.safety import Confirm, Safety
    from tapir.service import ProjectConfig, Workspace

#: The ``sub`` argument each command module's ``register`` receives.
Subparsers = argparse._SubParsersAction  # type: ignore[type-arg]


def print_problems(problems: Sequence[Diagnostic], filename: str, source: str | None = None) -> None:
    """Document problems (or any diagnostics of one file) as every error is shown, then a count."""
    from pathlib import Path

    from tapir.core.diagnostics import render_diagnostics

    if source is None:
        try:
            source = Path(filename).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            source = None
    print(render_diagnostics(problems, source, filename), file=sys.stderr)


def check_device_flag(device: str | None) -> None:
    # an empty value (e.g. an unset shell variable) must not silently mean "no device" or "sim"
    if device is not None and not device.strip():
        raise UsageError("is empty: give an adb serial, sim or sim:APP", setting="device")
    if device is not None:
        from tapir.runtime.device_spec import parse_device
        from tapir.sim.launch import is_sim_spec

        if not is_sim_spec(device):
            parse_device(device)  # HOST:PORT/SERIAL with a server part that is none


def project_devices(project: ProjectConfig) -> tuple[str, ...]:
    """``tapir.toml``'s ``[device] default``, a ``sim:APP`` naming no known app refused now as the
    file's mistake (a user who gave no --device would not know where 'sim:nope' came from)."""
    from tapir.sim.errors import SimUsageError
    from tapir.sim.launch import check_sim_spec

    for spec in project.device.default:
        try:
            check_sim_spec(spec)
        except SimUsageError as exc:
            raise UsageError(f"{project.path}: [device] default: {exc}") from None
    return project.device.default


def add_adb_flags(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--adb-host`` and ``--adb-port``: the adb server of every device that names none
    (``HOST:PORT/SERIAL`` names its own; docs/devices.md)."""
    p.add_argument("--adb-host", metavar="HOST",
                   help="host of the adb server of the phones (default: tapir.toml [device] adb_host, else "
                        "$ANDROID_ADB_SERVER_HOST, else 127.0.0.1); a device can name its own server: "
                        "--device HOST:PORT/SERIAL")
    p.add_argument("--adb-port", type=int, metavar="PORT",
                   help="port of the adb server (default: tapir.toml [device] adb_port, else "
                        "$ANDROID_ADB_SERVER_PORT, else 5037); with sim, the simulator attaches to that server "
                        "instead of a private one")


def adb_server(args: argparse.Namespace, project: ProjectConfig | None) -> tuple[str | None, int | None]:
    """(host, port) of the adb server from ``add_adb_flags``' flags, else ``tapir.toml`` ``[device]``
    (None each: the environment's, else 127.0.0.1:5037); a ``UsageError`` for one adb refuses."""
    from tapir.runtime.adb_transport import server_address

    host = getattr(args, "adb_host", None)
    port = getattr(args, "adb_port", None)
    if host is not None and not host.strip():
        raise UsageError("is empty: give a host name or address", setting="adb_host")
    if project is not None:
        host = host if host is not None else project.device.adb_host
        port = port if port is not None else project.device.adb_port
    if port is not None:
        server_address(port)  # a port adb refuses is a usage error now
    return (host.strip() if host else None), port


#: Hosts that are this machine: a simulator's adb server must be one of them.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def device_on_server(device: str | None, host: str | None, port: int | None) -> str | None:
    """``device`` with the server of ``adb_server`` written into it (``HOST:PORT/SERIAL``) when it is
    a phone that names none; a simulator is left as it is (its server is the ``adb_port`` a run is
    given) and may not be sent to another machine's server."""
    from tapir.runtime.device_spec import with_server
    from tapir.sim.launch import is_sim_spec

    if device is not None and is_sim_spec(device):
        if host is not None and host not in LOCAL_HOSTS:
            raise UsageError(f"{host}: a simulator attaches to an adb server on this machine", setting="adb_host",
                             hint="give --adb-host to phones only, or name the server in the device: "
                                  "HOST:PORT/SERIAL")
        return device
    return with_server(device, host, port)


def check_positive(**flags: float | None) -> None:
    """Refuse zero or negative budget flags (``check_positive(max_actions=args.max_actions)``)."""
    for name, value in flags.items():
        if value is not None and value <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")


def add_safety_flags(p: argparse.ArgumentParser, *, foreign_app: bool = True) -> None:
    """The guards' flags (``docs/safety.md``): ``--allow``, ``--allow-app``, ``--foreign-app``, ``--secrets``."""
    p.add_argument("--allow", action="append", metavar="WHAT",
                   help="allow what the guards refuse: 'sensitive' (every sensitive action), a word such as "
                        "'delete', 'send', 'payment' or 'permission', an element ($screen__element), or 'secrets' "
                        "(secrets in fields that are not password fields); repeatable")
    p.add_argument("--allow-app", action="append", metavar="PACKAGE",
                   help="another app the run may be in besides the document's (repeatable)")
    if foreign_app:
        p.add_argument("--foreign-app", choices=("return", "stop"),
                       help="when another app comes to the front: return to the run's app (BACK, then relaunch; "
                            "the default) or stop with an error")
    p.add_argument("--secrets", metavar="FILE",
                   help="NAME=value lines the script reads with secret('NAME') (else the environment's "
                        "TAPIR_SECRET_NAME); values are never printed, traced or reported")


def safety_from_args(args: argparse.Namespace, workspace: Workspace, script: str | Path | None, *,
                     confirm: Confirm | None = None, trust_script: bool = True) -> Safety:
    """The ``Safety`` of a run from the flags of ``add_safety_flags`` and the project's
    ``tapir.toml`` ``[safety]`` (``UsageError`` for a malformed flag or secrets file)."""
    from pathlib import Path

    from tapir.core.safety import Safety

    project = workspace.safety_config(script or Path.cwd() / "<script>.tap")
    return Safety.from_options(allow=args.allow, allow_apps=args.allow_app,
                               foreign_app=getattr(args, "foreign_app", None), secrets_file=args.secrets,
                               confirm=confirm, trust_script=trust_script, project=project)
def project_config(path: str | None) -> ProjectConfig | None:
    """The ``tapir.toml`` that governs ``path`` (the working folder when None), or None; a
    ``UsageError`` showing every problem with its line when the file is invalid."""
    from pathlib import Path

    from tapir.service import ConfigError, Workspace

    try:
        return Workspace().config_for(Path(path) if path else Path.cwd() / "x.tap")
    except ConfigError as exc:
        shown = "\n".join(p.render(exc.text, str(exc.path)) for p in exc.problems)
        raise UsageError(f"{exc.path} is invalid:\n{shown}") from None


#: Settings whose flag is not the setting's name with dashes (``allow_apps`` is ``--allow-app``).
_FLAGS = {"allow_apps": "--allow-app", "params": "--param", "document": "--doc"}


def flag_for(setting: str | None) -> str | None:
    """The flag that sets ``setting`` (``trace`` -> ``--trace``, ``foreign_app`` -> ``--foreign-app``)."""
    if setting is None:
        return None
    return _FLAGS.get(setting, "--" + setting.replace("_", "-"))


@contextmanager
def stop_signals() -> Iterator[list[str]]:
    """SIGTERM (a CI job cancelled, ``kill PID``) stops a long run as Ctrl-C does: a
    KeyboardInterrupt, so what ran is kept and its reports written. Yields a list that gets the
    name of the signal that stopped the run.

    A SIGINT the process was started ignoring stays ignored: a shell script's background job is
    not meant to die with the script's Ctrl-C. SIGTERM still stops it, report and all."""
    got: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def stop(signum: int, frame: object) -> None:
        got.append(signal.Signals(signum).name)
        raise KeyboardInterrupt

    wanted = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        wanted.append(signal.SIGINT)
    old = {s: signal.signal(s, stop) for s in wanted}
    try:
        yield got
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextmanager
def signals_ignored() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while the reports of a stopped run are written (a second Ctrl-C
    must not lose them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def stopped_name(stopped_by: Sequence[str]) -> str:
    """The name of the signal that stopped a run (``stop_signals``' list); SIGINT when the run
    stopped on a KeyboardInterrupt no handler saw."""
    return stopped_by[0] if stopped_by else "SIGINT"


def stopped_status(stopped_by: Sequence[str]) -> int:
    """The exit status of a run a signal stopped: 128 + its number (130 for Ctrl-C)."""
    return 128 + int(getattr(signal, stopped_name(stopped_by), signal.SIGINT))
