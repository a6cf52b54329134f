"""Device commands over the adb server's host protocol, one socket per command.

``AdbServerTransport(serial, host, port).shell(command, timeout=...)`` opens one TCP connection
to the adb server, selects the device (``host:transport:<serial>``), opens ``shell:<command>``, reads
the output until the device closes the stream, and closes the socket. That is the whole
exchange a command needs::

    transport = AdbServerTransport("emulator-5554", *server_address())
    xml = transport.shell("uiautomator dump /data/local/tmp/d.xml; cat /data/local/tmp/d.xml", timeout=20)

Why not adbutils for this: it opens a second connection per command to ask the server's version,
and its ``close()`` sleeps 10 ms after a half-close, twice a command; that was 22 of the 26 ms a
command cost against the simulator (44% of a sample run). Tapir keeps adbutils for what it does
well and rarely (forwarding ports, installing); ``list_devices`` is ``adb devices``.

Failures say whether the command can have reached the device, which is what the retry policy
(``tapir.runtime.retry``) needs to never send a tap twice:

* ``NotSent``: no connection, the server refused the device (``FAIL device offline``), or the
  device refused the service (``FAIL``). Nothing ran; any command may be retried.
* ``ConnectionError`` / ``TimeoutError``: the link broke after the service was requested, so the
  command may have run; only idempotent commands are retried.

Protocol (``SERVICES.TXT`` and ``OVERVIEW.TXT`` in adb's sources): a request is its length as
four hex digits and the text; the server answers ``OKAY``, or ``FAIL`` and a hex-length message.
After ``OKAY`` to ``host:transport:`` the same socket carries the device service; after ``OKAY``
to ``shell:`` it carries the command's output until the device closes the stream.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

from tapir.core.errors import UsageError
from tapir.runtime.retry import AdbServerError, NotSent

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5037
#: a dump is 30-300 KB and a screenshot a few MB; larger reads mean fewer system calls
_CHUNK = 256 * 1024


def server_address(port: int | None = None, env: Mapping[str, str] | None = None, *,
                   host: str | None = None) -> tuple[str, int]:
    """(host, port) of the adb server: ``port`` (``--adb-port``), else ``$ANDROID_ADB_SERVER_PORT``,
    else 5037; the host is ``host`` (``--adb-host``), else ``$ANDROID_ADB_SERVER_HOST`` (as adbutils
    reads it), else 127.0.0.1.

    A port outside 1-65534 (adb refuses 0 and 65535) or a variable that is not a number is a
    ``UsageError`` naming where it came from.
    """
    environ = os.environ if env is None else env
    host = host or environ.get("ANDROID_ADB_SERVER_HOST") or DEFAULT_HOST
    if port is not None:
        source, value = "--adb-port", str(port)
    elif environ.get("ANDROID_ADB_SERVER_PORT"):
        source, value = "ANDROID_ADB_SERVER_PORT", environ["ANDROID_ADB_SERVER_PORT"]
    else:
        return host, DEFAULT_PORT
    try:
        number = int(value.strip())
    except ValueError:
        raise UsageError(f"{source} must be a port number, not {value!r}") from None
    if not 0 < number < 65535:
        raise UsageError(f"{source} must be a port between 1 and 65534, not {number}")
    return host, number


def list_devices(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, timeout: float = 5.0) -> list[tuple[str, str]]:
    """(serial, state) of every device the server knows (``adb devices``): ``device``,
    ``offline``, ``unauthorized``... Raises ``OSError`` when no server answers, ``AdbServerError``
    when it refuses. Unlike adbutils' listing, this never starts a server (adbutils started one
    on 5037 whatever port it had been asked about)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(_request("host:devices"))
        status = _read_exact(sock, 4)
        length = int(_read_exact(sock, 4), 16)
        body = _read_exact(sock, length).decode("utf-8", "replace") if length else ""
    if status != b"OKAY":
        raise AdbServerError(body or f"unexpected reply {status!r}")
    devices = []
    for line in body.splitlines():
        serial, _, state = line.partition("\t")
        if serial.strip():
            devices.append((serial.strip(), state.strip()))
    return devices


def _request(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"%04x%s" % (len(raw), raw)


class AdbServerTransport:
    """Shell commands for one device, each on its own connection to the adb server.

    ``connect_timeout`` bounds reaching the server; the ``timeout`` of a command bounds each
    wait for its output (a dump that takes 20 s is fine as long as bytes keep coming).
    """

    def __init__(self, serial: str, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *,
                 connect_timeout: float = 5.0) -> None:
        self.serial = serial
        self.host = host
        self.port = port
        self.connect_timeout = connect_timeout
        self._select = _request(f"host:transport:{serial}")

    def __repr__(self) -> str:
        return f"AdbServerTransport({self.serial!r}, {self.host!r}, {self.port})"

    def shell(self, command: str, *, timeout: float) -> bytes:
        """``adb shell COMMAND`` (shell v1): stdout and stderr merged, the exit status not reported."""
        return self._run(_request(f"shell:{command}"), timeout)

    def stream(self, command: str, *, timeout: float | None = None) -> socket.socket:
        """``adb shell COMMAND`` left running: the socket its output arrives on as it is printed
        (``getevent``); closing the socket ends the command on the device. ``timeout`` bounds each
        read (None: block until output or the end)."""
        sock = self._open(self.connect_timeout)
        try:
            sock.sendall(_request(f"shell:{command}"))
            status = _read_exact(sock, 4)
            if status != b"OKAY":
                raise NotSent(AdbServerError(self._failure(sock, status)))
            sock.settimeout(timeout)
        except BaseException:
            sock.close()
            raise
        return sock

    def _run(self, service: bytes, timeout: float) -> bytes:
        sock = self._open(timeout)
        try:
            try:
                sock.sendall(service)
                status = _read_exact(sock, 4)
            except OSError as exc:
                # the service may have started on the device before the link broke
                raise _ambiguous(exc) from exc
            if status != b"OKAY":
                # the device refused to open the service: nothing ran
                raise NotSent(AdbServerError(self._failure(sock, status)))
            return _read_to_end(sock)
        finally:
            sock.close()

    def _open(self, timeout: float) -> socket.socket:
        """A connection to the server with this device selected; ``NotSent`` when that fails."""
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except OSError as exc:
            refused = ConnectionRefusedError(
                f"cannot connect to the adb server at {self.host}:{self.port}: {exc.strerror or exc}")
            raise NotSent(refused) from refused
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(timeout)
            sock.sendall(self._select)
            status = _read_exact(sock, 4)
            if status != b"OKAY":
                raise AdbServerError(self._failure(sock, status))
        except (OSError, AdbServerError) as exc:
            sock.close()
            raise NotSent(exc) from exc
        return sock

    def _failure(self, sock: socket.socket, status: bytes) -> str:
        """The message after ``FAIL`` (or a description of whatever came instead)."""
        if status != b"FAIL":
            return f"unexpected reply {status!r} from the adb server at {self.host}:{self.port}"
        try:
            length = int(_read_exact(sock, 4), 16)
            return _read_exact(sock, length).decode("utf-8", "replace")
        except (OSError, ValueError):
            return "the adb server refused the request without a reason"


def _ambiguous(exc: OSError) -> OSError:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return exc
    return ConnectionResetError(exc.errno, f"connection to the adb server broke: {exc.strerror or exc}")


def _read_exact(sock: socket.socket, n: int) -> bytes:
    data = sock.recv(n)
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionResetError(f"the adb server closed the connection after {len(data)} of {n} bytes")
        data += chunk
    return data


def _read_to_end(sock: socket.socket) -> bytes:
    """Everything until the device closes the stream, read linearly (adbutils' own reader
    concatenates 4 KiB chunks, quadratic in the size: a 2 MB screenshot cost a second)."""
    chunks: list[bytes] = []
    while chunk := sock.recv(_CHUNK):
        chunks.append(chunk)
    return b"".join(chunks)
