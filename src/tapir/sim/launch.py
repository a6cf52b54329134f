"""Start a simulated device, attach it to a real adb server, and stop it cleanly.

``start_sim`` runs a ``SimDevice`` behind a fake adbd on a free local port in background
threads, makes an adb server ``adb connect`` to it and waits until the server lists it as
``device``. From then on it is an ordinary device for every ADB client::

    with start_sim([my_app]) as sim:          # a private adb server on a free port
        d = sim.adb_device()                 # adbutils.AdbDevice
        d.shell("input tap 10 20")
        subprocess.run(sim.adb_command("pull", "/sdcard/window_dump.xml", "."))

``open_sim("sim:music")`` does the same from a ``--device`` value. The adb server is either
private (``adb_port=None``: started on a free port, killed by ``stop``) or a shared one such
as the user's 5037 (started if needed and left running, as adb itself does; only our device
is disconnected). Talking to the server uses the host protocol directly rather than adbutils,
whose connection helper starts a stray ``adb start-server`` on 5037 when a server is down.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tapir.sim.adbd import AdbdServer
from tapir.sim.app import SimApp
from tapir.sim.device import SimDevice
from tapir.sim.errors import SimDeviceError, SimUsageError
from tapir.sim.faults import Faults

if TYPE_CHECKING:
    import adbutils

DEFAULT_ADB_PORT = 5037
SIM_PREFIX = "sim"
_HOST = "127.0.0.1"


# ---------------------------------------------------------------------------------------------
# The adb binary and server


def find_adb(explicit: str | None = None) -> str:
    """The adb binary: ``explicit``, ``$TAPIR_ADB``, ``adb`` on PATH, else the one adbutils bundles."""
    for candidate in (explicit, os.environ.get("TAPIR_ADB")):
        if candidate:
            if shutil.which(candidate) or os.access(candidate, os.X_OK):
                return candidate
            raise SimDeviceError(f"adb binary {candidate!r} does not exist or is not executable")
    on_path = shutil.which("adb")
    if on_path:
        return on_path
    spec = importlib.util.find_spec("adbutils")
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "binaries" / "adb"
        if os.access(bundled, os.X_OK):
            return str(bundled)
    raise SimDeviceError("no adb binary found: install Android platform-tools or adbutils, or set TAPIR_ADB")


def adb_env(adb_port: int) -> dict[str, str]:
    """Environment for running adb against the server on ``adb_port``.

    ``ADB_LIBUSB=0`` keeps adb 36 from a 3-second USB scan at server start.
    """
    env = dict(os.environ)
    env["ANDROID_ADB_SERVER_PORT"] = str(adb_port)
    env.setdefault("ADB_LIBUSB", "0")
    return env


class _HostError(Exception):
    pass


def _host_request(adb_port: int, request: str, timeout: float = 5.0) -> str:
    """One request of the adb host protocol (``host:version``, ``host:connect:ADDR``...)."""
    with socket.create_connection((_HOST, adb_port), timeout=timeout) as sock:
        raw = request.encode()
        sock.sendall(f"{len(raw):04x}".encode() + raw)

        def read(n: int) -> bytes:
            buf = b""
            while len(buf) < n:
                chunk = sock.recv(n - len(buf))
                if not chunk:
                    raise _HostError(f"adb server closed the connection during {request!r}")
                buf += chunk
            return buf

        status = read(4)
        if request == "host:kill":
            return ""
        length = int(read(4), 16)
        body = read(length).decode("utf-8", "replace")
        if status != b"OKAY":
            raise _HostError(body)
        return body


def server_running(adb_port: int) -> bool:
    try:
        _host_request(adb_port, "host:version", timeout=1.0)
        return True
    except (OSError, _HostError, ValueError):
        return False


def start_adb_server(adb_port: int, adb: str | None = None) -> bool:
    """Make sure an adb server listens on ``adb_port``; True when this call started it."""
    if server_running(adb_port):
        return False
    binary = find_adb(adb)
    try:
        proc = subprocess.run([binary, "-P", str(adb_port), "start-server"], env=adb_env(adb_port),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SimDeviceError(f"could not start the adb server on port {adb_port}: {exc}") from None
    if proc.returncode != 0 or not server_running(adb_port):
        detail = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        raise SimDeviceError(f"could not start the adb server on port {adb_port}: {detail or 'no reason given'}")
    return True


def kill_adb_server(adb_port: int, timeout: float = 5.0) -> None:
    """Ask the server on ``adb_port`` to exit and wait until the port is closed."""
    try:
        _host_request(adb_port, "host:kill", timeout=1.0)
    except (OSError, _HostError, ValueError):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server_running(adb_port):
        time.sleep(0.02)


def start_private_adb_server(adb: str | None = None, *, tries: int = 3) -> int:
    """Start an adb server of our own on a free port; its port. A port found free can be taken by
    another process before adb binds it (several runs on one machine), so a failed start is tried
    again on another port."""
    for attempt in range(tries):
        port = free_port()
        try:
            start_adb_server(port, adb)
            return port
        except SimDeviceError:
            if attempt == tries - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def free_port() -> int:
    """A free TCP port from the ephemeral range (so never adb's 5037 or emulator ports 5555-5585)."""
    with socket.socket() as sock:
        sock.bind((_HOST, 0))
        return int(sock.getsockname()[1])


def device_state(adb_port: int, serial: str) -> str | None:
    """``device``, ``offline``, ``unauthorized``... as ``adb devices`` shows it; None when not listed."""
    # (``get-state`` answers FAIL for an unauthorized device, so read the list instead)
    try:
        listing = _host_request(adb_port, "host:devices", timeout=2.0)
    except (OSError, _HostError, ValueError):
        return None
    for line in listing.splitlines():
        name, _, state = line.partition("\t")
        if name == serial:
            return state.strip()
    return None


def connect_device(adb_port: int, serial: str, *, expect: str = "device", timeout: float = 15.0) -> None:
    """``adb connect SERIAL`` and wait until the server reports ``expect`` for it."""
    try:
        reply = _host_request(adb_port, f"host:connect:{serial}", timeout=timeout)
    except (OSError, _HostError) as exc:
        raise SimDeviceError(f"adb could not connect to the simulator at {serial}: {exc}") from None
    refused = expect == "unauthorized" and reply.startswith("failed to authenticate")
    if not reply.startswith(("connected to", "already connected to")) and not refused:
        raise SimDeviceError(f"adb could not connect to the simulator at {serial}: {reply}")
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = device_state(adb_port, serial)
        if state == expect:
            return
        time.sleep(0.01)
    raise SimDeviceError(f"the simulator at {serial} stayed {state or 'unknown'!s} instead of {expect}")


def disconnect_device(adb_port: int, serial: str, *, timeout: float = 5.0) -> None:
    """``adb disconnect SERIAL``, returning once the server no longer lists the device.

    The server answers ``disconnected`` as soon as it has *kicked* the transport; the transport
    leaves the device list later, from the server's main loop. A ``host:connect`` that arrives
    in between is answered ``already connected`` by the dying transport, which then goes away
    and leaves the device unlisted for good. So a disconnect is complete only when the list
    says so, and that is what this waits for.
    """
    try:
        _host_request(adb_port, f"host:disconnect:{serial}", timeout=2.0)
    except (OSError, _HostError, ValueError):
        return
    deadline = time.monotonic() + timeout
    while device_state(adb_port, serial) is not None and time.monotonic() < deadline:
        time.sleep(0.005)


# ---------------------------------------------------------------------------------------------
# Apps by name


def known_app_names() -> list[str]:
    """Names of the built-in sample apps (empty when the app registry is not installed)."""
    if importlib.util.find_spec("tapir.sim.apps") is None:
        return []
    from tapir.sim import apps as registry

    return list(getattr(registry, "APP_NAMES", []))


def replay_app(directory: str | Path) -> SimApp:
    """An app that replays a recorded DroidBot session from ``directory``; ``DIR#TASK`` replays it
    for one task of the folder's ``traces/`` (it starts where ``traces/TASK.yaml`` starts)."""
    task: str | None = None
    text = str(directory)
    if "#" in text and not Path(text).is_dir():
        text, _, task = text.rpartition("#")
    path = Path(text)
    if not path.is_dir():
        problem = "is not a directory" if path.exists() else "does not exist"
        raise SimUsageError(f"replay directory {str(directory)!r} {problem}")
    if importlib.util.find_spec("tapir.sim.replay") is None:
        raise SimUsageError("replaying recordings is not available in this installation")
    from tapir.sim.replay import ReplayApp

    return ReplayApp(path, task or None)  # type: ignore[no-any-return]


def resolve_app(name: str) -> SimApp:
    """A sample app by name (``music``), or a recording to replay (``replay:DIR``, or a path)."""
    if name.startswith("replay:"):
        return replay_app(name[len("replay:"):])
    names = known_app_names()
    if name in names:
        from tapir.sim.apps import get_app

        return get_app(name)  # type: ignore[no-any-return]
    if os.sep in name or name.startswith(".") or Path(name).is_dir():
        return replay_app(name)
    known = ", ".join(names) if names else "none are installed"
    raise SimUsageError(f"unknown simulated app {name!r}; known apps: {known} (or replay:DIR for a recording)")


def is_sim_spec(spec: str) -> bool:
    """True for ``--device`` values that ask for the simulator: ``sim`` or ``sim:NAME[,NAME...]``."""
    return spec == SIM_PREFIX or spec.startswith(SIM_PREFIX + ":")


def check_sim_spec(spec: str) -> None:
    """Raise ``SimUsageError`` now for a ``sim:...`` value that names no known app or recording.

    Runs are lazy (the simulator starts on the script's first UI call), so a typo in ``--device``
    must be caught before the script starts, not reported against its first line.
    """
    if not is_sim_spec(spec):
        return
    names = spec[len(SIM_PREFIX) + 1:] if ":" in spec else ""
    known = known_app_names()
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name in known or name.startswith("replay:"):
            continue
        if os.sep in name or name.startswith(".") or Path(name).is_dir():
            continue
        listed = ", ".join(known) if known else "none are installed"
        raise SimUsageError(f"unknown simulated app {name!r}; known apps: {listed} (or replay:DIR for a recording)")


def apps_for_spec(spec: str) -> list[SimApp]:
    """The apps a ``sim`` / ``sim:NAME[,NAME]`` / ``sim:replay:DIR`` device value installs."""
    if not is_sim_spec(spec):
        raise SimUsageError(f"{spec!r} is not a simulator device (use 'sim' or 'sim:APP')")
    names = spec[len(SIM_PREFIX) + 1:] if ":" in spec else ""
    if not names:
        return [resolve_app(n) for n in known_app_names()]
    return [resolve_app(n.strip()) for n in names.split(",") if n.strip()]


# ---------------------------------------------------------------------------------------------
# A running simulator


class RunningSim:
    """A simulator attached to an adb server. Stop it with ``stop()`` or a ``with`` block."""

    def __init__(self, device: SimDevice, server: AdbdServer, adb_port: int, adb_path: str,
                 owns_adb_server: bool) -> None:
        self.device = device
        self.server = server
        self.adb_port = adb_port
        self.adb_path = adb_path
        self.owns_adb_server = owns_adb_server
        self._stopped = False

    @property
    def serial(self) -> str:
        """The device's adb serial, e.g. ``127.0.0.1:41234``."""
        return self.server.serial

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) of the adb server the simulator is attached to."""
        return _HOST, self.adb_port

    def adb_client(self) -> adbutils.AdbClient:
        import adbutils

        return adbutils.AdbClient(host=_HOST, port=self.adb_port)

    def adb_device(self) -> adbutils.AdbDevice:
        """An adbutils device for this simulator, through the real adb server."""
        return self.adb_client().device(self.serial)

    def adb_command(self, *args: str) -> list[str]:
        """argv for the adb CLI aimed at this device: ``[adb, -P, PORT, -s, SERIAL, *args]``."""
        return [self.adb_path, "-P", str(self.adb_port), "-s", self.serial, *args]

    def env(self) -> dict[str, str]:
        """Environment for subprocesses that should use this simulator's adb server."""
        return adb_env(self.adb_port)

    def state(self) -> str | None:
        return device_state(self.adb_port, self.serial)

    def reconnect(self, timeout: float = 15.0) -> None:
        """Disconnect and connect again, e.g. after an injected dropped connection."""
        disconnect_device(self.adb_port, self.serial)
        connect_device(self.adb_port, self.serial, timeout=timeout,
                       expect="unauthorized" if self.server.auth == "reject" else "device")

    def reattach(self, timeout: float = 15.0) -> None:
        """Attach again after the adb server went away or forgot the device (``adb kill-server``
        and a new server, a dropped link the server gave up on): start a server on the same port
        when none answers, and ``adb connect`` when it does not list the device as usable."""
        if self._stopped:
            raise SimDeviceError(f"the simulator at {self.serial} was stopped")
        if not server_running(self.adb_port):
            start_adb_server(self.adb_port, self.adb_path)
        expect = "unauthorized" if self.server.auth == "reject" else "device"
        state = self.state()
        if state == expect:
            return
        if state is not None:
            disconnect_device(self.adb_port, self.serial)
        connect_device(self.adb_port, self.serial, timeout=timeout, expect=expect)

    def stop(self) -> None:
        """Disconnect from the adb server, stop the fake adbd, and kill a private adb server."""
        if self._stopped:
            return
        self._stopped = True
        disconnect_device(self.adb_port, self.serial)
        self.server.stop()
        if self.owns_adb_server:
            kill_adb_server(self.adb_port)

    def __enter__(self) -> RunningSim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_sim(apps: SimApp | Sequence[SimApp] | SimDevice | None = None, *, port: int = 0,
              adb_port: int | None = None, adb_path: str | None = None, faults: Faults | None = None,
              foreground: str | None = None, auth: str | None = None, timeout: float = 15.0,
              trace: Callable[[str], None] | None = None) -> RunningSim:
    """Start a simulator on ``port`` (0: a free one) and attach it to an adb server.

    ``apps``: the apps to install (or a ready ``SimDevice``). ``adb_port``: None for a private
    adb server on a free port (killed by ``stop``), or the port of a shared server (started if
    needed, left running). ``foreground``: a package to start, else the home screen shows.
    ``auth``: see ``AdbdServer`` (``"reject"`` leaves the device ``unauthorized``).
    ``trace``: called with a line per packet received (protocol debugging).
    """
    if not 0 <= port <= 65535:
        raise SimUsageError(f"the simulator's port must be between 0 (any free one) and 65535, not {port}")
    if adb_port is not None and not 0 < adb_port < 65535:  # adb itself refuses 0 and 65535
        raise SimUsageError(f"the adb server's port must be between 1 and 65534, not {adb_port}")
    if isinstance(apps, SimDevice):
        device = apps
    else:
        app_list = [apps] if isinstance(apps, SimApp) else list(apps or [])
        device = SimDevice(app_list, faults=faults)
    if foreground is not None:
        if foreground not in device.apps:
            raise SimUsageError(f"cannot start {foreground!r}: it is not installed "
                             f"(installed: {', '.join(device.apps) or 'nothing'})")
        device.start_app(foreground)
    binary = find_adb(adb_path)
    owns = adb_port is None
    server_port = adb_port if adb_port is not None else 0
    try:
        server = AdbdServer(device, port=port, auth=auth, trace=trace)
    except OSError as exc:
        # A port the user chose being taken is their call to fix; failing on a free one is not.
        error = SimUsageError if port else SimDeviceError
        raise error(f"cannot listen on port {port} for the simulator: {exc.strerror}") from None
    server.start()
    device.serial = server.serial
    device.props["ro.serialno"] = server.serial
    started = False
    try:
        if owns:
            server_port, started = start_private_adb_server(binary), True
        else:
            started = start_adb_server(server_port, binary)
        connect_device(server_port, server.serial, timeout=timeout,
                       expect="unauthorized" if auth == "reject" else "device")
    except BaseException:
        server.stop()
        if owns and started:
            kill_adb_server(server_port)
        raise
    return RunningSim(device, server, server_port, binary, owns_adb_server=owns and started)


def open_sim(spec: str, **kwargs: Any) -> RunningSim:
    """``start_sim`` for a ``--device`` value: ``sim`` (every sample app), ``sim:music``,
    ``sim:music,notes`` or ``sim:replay:DIR`` (a recorded app to replay)."""
    return start_sim(apps_for_spec(spec), **kwargs)
