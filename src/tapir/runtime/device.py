"""Devices: what the runtime needs from a phone, and the adb implementation of it.

``Device`` is the whole interface the runtime uses; ``AdbDevice`` implements it over an adb
server (a real phone, an emulator, or Tapir's simulated device behind a real or fake adb
server). Every command is one round trip on one socket (``tapir.runtime.adb_transport``) under
the retry policy in ``tapir.runtime.retry``; what the device prints is checked, and a failure
the user sees is one ``DeviceError`` naming the device serial and the command::

    dev = open_device(None)                  # --device, else $ANDROID_SERIAL, else the only one
    dev.tap(*dev.screen_size())              # AdbDevice(serial, address=("127.0.0.1", 5037))

Choosing the server (``adb_transport.server_address``): ``--adb-port``, else
``$ANDROID_ADB_SERVER_PORT``, else 5037. Choosing the device (``resolve_serial``):
``--device SERIAL``, else ``$ANDROID_SERIAL``, else the only device connected.

adb server notes. Tapir never starts an adb server for a device run: when none answers, the
error says how to start one. (adbutils' listing used to run ``adb start-server``, on 5037
whatever port it had been asked about.) Tapir leaves ``ADB_LIBUSB`` alone: a server the
simulator starts inherits the user's setting (``ADB_LIBUSB=0`` makes adb 36 start in
milliseconds instead of three seconds when only emulators or TCP devices are used).
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Protocol, TypeVar, runtime_checkable

from tapir.core.errors import DeviceError, UsageError
from tapir.runtime import adb_shell
from tapir.runtime.adb_transport import DEFAULT_PORT, AdbServerTransport, list_devices, server_address
from tapir.runtime.retry import DEFAULT_RETRY, NotSent, RetryPolicy, TransientError, call_with_retry

T = TypeVar("T")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@runtime_checkable
class Device(Protocol):
    """A phone as the runtime sees it. Coordinates are screen pixels."""

    @property
    def serial(self) -> str: ...

    def dump_hierarchy(self) -> str:
        """The current screen as ``uiautomator dump`` XML."""
        ...

    def tap(self, x: int, y: int) -> None: ...

    def long_tap(self, x: int, y: int, duration_ms: int = 800) -> None: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None: ...

    def input_text(self, text: str) -> None:
        """Type into the focused field (it does not clear it first)."""
        ...

    def key(self, name: str | int) -> None:
        """Press a key: ``"back"``, ``"enter"``, ``"home"``, a ``KEYCODE_*`` name or a code."""
        ...

    def app_start(self, package: str, activity: str | None = None,
                  extras: Mapping[str, str | int | float | bool] | None = None) -> None:
        """Start the app (its launcher activity unless ``activity`` is given), or bring it to the
        front; ``extras`` are put on the launch intent."""
        ...

    def app_stop(self, package: str) -> None: ...

    def app_clear(self, package: str) -> None:
        """Stop the app and wipe its data (``pm clear``)."""
        ...

    def current_app(self) -> tuple[str, str]:
        """(package, fully qualified activity) in the foreground."""
        ...

    def screen_size(self) -> tuple[int, int]:
        """(width, height) in pixels, natural orientation."""
        ...

    def screenshot_png(self) -> bytes: ...


class ShellTransport(Protocol):
    """One shell round trip. Raise ``NotSent`` for failures before the command reached the device."""

    def shell(self, command: str, *, timeout: float) -> bytes: ...


def _clip(text: str, limit: int = 40) -> str:
    """Typed text as it appears in messages: quoted, and cut so a long secret is not logged whole."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _check_silent(output: bytes) -> None:
    """``input``/``am force-stop`` print nothing on success; anything error-like is a failure."""
    text = output.decode("utf-8", "replace")
    if "Exception" in text or text.lstrip().startswith(("Error", "error:")) or "not found" in text:
        raise DeviceError(_first_line(text))


class AdbDevice:
    """A device reached through adb.

    ``address`` is the adb server's (host, port) (default: ``server_address()``); ``client``,
    an adbutils ``AdbClient``, stands for its server. ``transport`` replaces the adb connection
    (tests pass a fake); ``retry`` bounds the retries of transient failures; ``sleep`` is what
    the retry pauses call. ``reattach``, when given, is called once when a command failed for
    want of the link (the adb server gone or restarted, the device no longer listed), and the
    command is sent again if it cannot have run twice: a simulator the run started attaches
    itself to a new server this way.
    """

    def __init__(
        self,
        serial: str,
        *,
        address: tuple[str, int] | None = None,
        client: object | None = None,
        transport: ShellTransport | None = None,
        retry: RetryPolicy = DEFAULT_RETRY,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = 20.0,
        dump_timeout: float = 60.0,
        reattach: Callable[[], None] | None = None,
    ) -> None:
        self._serial = serial
        if transport is None:
            if address is None:
                address = _client_address(client) if client is not None else server_address()
            transport = AdbServerTransport(serial, *address)
        self._transport = transport
        self._retry = retry
        self._sleep = sleep
        self._timeout = timeout
        self._dump_timeout = dump_timeout
        self._reattach = reattach
        #: How many times ``reattach`` brought the link back.
        self.reattached = 0

    @property
    def serial(self) -> str:
        return self._serial

    @property
    def address(self) -> tuple[str, int] | None:
        """The adb server's (host, port) the commands go through; None when a stand-in transport
        carries them (a test's fake). Another process reaches the same device there."""
        t = self._transport
        return (t.host, t.port) if isinstance(t, AdbServerTransport) else None

    def __repr__(self) -> str:
        return f"AdbDevice({self._serial!r})"

    # -- plumbing -------------------------------------------------------------------------

    def _run(
        self,
        command: str,
        check: Callable[[bytes], T],
        *,
        idempotent: bool,
        timeout: float | None = None,
        what: str | None = None,
    ) -> T:
        """Send ``command``, pass the output to ``check`` (which may raise), retry per policy."""

        def attempt() -> T:
            output = self._transport.shell(command, timeout=timeout or self._timeout)
            try:
                return check(output)
            except DeviceError as exc:
                # checks raise a bare message; name the device and command here, once
                raise DeviceError(
                    f"device {self._serial}: `{what or command}` failed: {exc.message}", hint=exc.hint
                ) from exc

        def send() -> T:
            return call_with_retry(
                attempt, serial=self._serial, command=what or command, policy=self._retry,
                idempotent=idempotent, sleep=self._sleep,
            )

        try:
            return send()
        except DeviceError as exc:
            if self._reattach is None or not _link_lost(exc.__cause__, idempotent):
                raise
            try:
                self._reattach()
            except Exception as again:  # noqa: BLE001 - whatever stopped it, the command's error stands
                raise DeviceError(f"{exc.message}; attaching the device again failed: {again}", hint=exc.hint) from exc
            self.reattached += 1
            return send()

    def shell(self, command: str, *, idempotent: bool = False) -> str:
        """Run any shell command and return its output (stdout and stderr merged)."""
        return self._run(command, lambda out: out.decode("utf-8", "replace"), idempotent=idempotent)

    def stream_shell(self, command: str) -> ShellStream:
        """A command left running on the device, its output read as it comes (``getevent -lt``).

        Not part of ``Device``: the recorder watches a phone's input with it where the device's
        transport can stream. Raises ``DeviceError`` when the command cannot be started."""
        stream = getattr(self._transport, "stream", None)
        if stream is None:
            raise DeviceError(f"device {self._serial}: this connection cannot stream a command's output")
        try:
            return ShellStream(stream(command))
        except (NotSent, OSError) as exc:
            raise DeviceError(f"device {self._serial}: cannot start `{command}`: {exc}") from exc

    # -- screen ---------------------------------------------------------------------------

    def dump_hierarchy(self) -> str:
        return self._run(adb_shell.dump_command(), _check_dump, idempotent=True,
                         timeout=self._dump_timeout, what="uiautomator dump")

    def dump_hierarchy_bytes(self) -> bytes:
        """``dump_hierarchy`` as the device sent it, not decoded: what the parser reads (decoding
        a dump to text only for the parser to encode it again cost 0.4 ms on a 688-view screen).
        Text around the XML is left in (the parser skips it)."""
        return self._run(adb_shell.dump_command(), _check_dump_bytes, idempotent=True,
                         timeout=self._dump_timeout, what="uiautomator dump")

    def screenshot_png(self) -> bytes:
        return self._run("screencap -p", _check_png, idempotent=True, what="screencap -p")

    def screen_size(self) -> tuple[int, int]:
        def check(out: bytes) -> tuple[int, int]:
            _answered(out)
            size = adb_shell.parse_wm_size(out.decode("utf-8", "replace"))
            if size is None:
                raise DeviceError(f"unexpected output: {_first_line(out.decode('utf-8', 'replace'))!r}")
            return size

        return self._run("wm size", check, idempotent=True)

    def current_app(self) -> tuple[str, str]:
        def check(out: bytes) -> tuple[str, str] | None:
            _answered(out)
            return adb_shell.parse_current_app(out.decode("utf-8", "replace"))

        # `dumpsys window windows` names the focused window on every version; when the focus
        # is not an activity (lock screen, a popup) the activity manager knows the resumed one
        found = self._run("dumpsys window windows", check, idempotent=True)
        if found is None:
            found = self._run("dumpsys activity activities", check, idempotent=True)
        if found is None:
            raise DeviceError(
                f"device {self._serial}: cannot tell the foreground app from dumpsys",
                hint="is the screen locked? unlock it and try again",
            )
        return found

    # -- input ----------------------------------------------------------------------------

    def tap(self, x: int, y: int) -> None:
        self._run(adb_shell.tap_command(x, y), _check_silent, idempotent=False)

    def long_tap(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._run(adb_shell.long_tap_command(x, y, duration_ms), _check_silent, idempotent=False)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._run(adb_shell.swipe_command(x1, y1, x2, y2, duration_ms), _check_silent, idempotent=False)

    def key(self, name: str | int) -> None:
        self._run(adb_shell.key_command(name), _check_silent, idempotent=False)

    def input_text(self, text: str) -> None:
        """Type ``text`` into the focused field.

        Printable ASCII (plus newline and tab) goes through ``input text``, escaped as
        ``adb_shell.input_text_commands`` describes, in one shell round trip.

        Anything else (accents, CJK, emoji) cannot be typed by ``input text``: its key map
        is ASCII only. The fallback is the ADBKeyBoard IME
        (https://github.com/senzhk/ADBKeyBoard): when it is the active input method the text
        is sent as a base64 broadcast (``am broadcast -a ADB_INPUT_B64 --es msg ...``).
        Otherwise a ``DeviceError`` explains how to install and select it; Tapir does not
        switch the user's keyboard by itself.
        """
        if not text:
            return
        if adb_shell.is_typeable(text):
            command = " && ".join(adb_shell.input_text_commands(text))
            self._run(command, _check_silent, idempotent=False, what=f"input text {_clip(text)}")
            return
        ime = self._run("settings get secure default_input_method", _parse_ime, idempotent=True)
        if ime != adb_shell.ADB_KEYBOARD_IME:
            raise DeviceError(
                f"device {self._serial}: cannot type {_clip(text)}: `input text` handles ASCII only, "
                f"and non-ASCII text needs the ADBKeyBoard input method (active now: {ime or 'none'})",
                hint=(f"install ADBKeyBoard.apk, then `adb shell ime enable {adb_shell.ADB_KEYBOARD_IME}` "
                      f"and `adb shell ime set {adb_shell.ADB_KEYBOARD_IME}`"),
            )
        self._run(adb_shell.adb_keyboard_command(text), _check_broadcast, idempotent=False,
                  what=f"ADBKeyBoard input {_clip(text)}")

    # -- apps -----------------------------------------------------------------------------

    def app_start(self, package: str, activity: str | None = None,
                  extras: Mapping[str, str | int | float | bool] | None = None) -> None:
        """``monkey`` fires the launcher intent when nothing is to be added to it; an intent with
        extras needs the launcher activity, which ``cmd package resolve-activity`` names."""
        if extras and activity is None:
            activity = self._run(adb_shell.resolve_launcher_command(package),
                                 lambda out: _parse_launcher(out, package), idempotent=True)
        self._run(adb_shell.app_start_command(package, activity, extras), _check_start, idempotent=True)

    def app_stop(self, package: str) -> None:
        self._run(adb_shell.app_stop_command(package), _check_silent, idempotent=True)

    def app_clear(self, package: str) -> None:
        self._run(adb_shell.app_clear_command(package), _check_success, idempotent=True)


class ShellStream:
    """The output of a command left running, line by line; ``close()`` ends it.

    ``lines()`` yields each line (without its newline) as it arrives and returns when the device
    ends the command or ``close()`` was called (from any thread)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._closed = False

    def lines(self) -> Iterator[str]:
        pending = b""
        while not self._closed:
            try:
                chunk = self._sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                yield raw.rstrip(b"\r").decode("utf-8", "replace")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


def _link_lost(cause: BaseException | None, idempotent: bool) -> bool:
    """A failure that attaching the device again may cure, of a command that may be sent again:
    one that never reached the device (no server, the device not listed), or a read whose link
    broke while it ran. Not what the device itself answered (an idle-state error)."""
    if isinstance(cause, NotSent):
        return True
    return idempotent and isinstance(cause, (ConnectionError, EOFError)) and not isinstance(cause, TransientError)


# -- output checks ---------------------------------------------------------------------------

_TRANSIENT_DUMP = ("could not get idle state", "null root node")


def _answered(output: bytes) -> None:
    """A command that always prints something printed nothing: its connection closed before the
    answer came (shell v1 cannot tell that from an empty answer), which passes when retried."""
    if not output:
        raise TransientError("no answer: the connection closed before the device answered")


def _check_dump(output: bytes) -> str:
    _answered(output)
    text = output.decode("utf-8", "replace")
    start = text.find("<?xml")
    if start < 0:
        start = text.find("<hierarchy")
    if start >= 0:
        end = text.rfind("</hierarchy>")
        if end < start:
            raise TransientError("uiautomator dump was cut short (no </hierarchy>)")
        return text[start:end + len("</hierarchy>")]
    lowered = text.lower()
    if any(t in lowered for t in _TRANSIENT_DUMP):
        raise TransientError(_first_line(text))
    if "already registered" in lowered:
        raise DeviceError(
            _first_line(text),
            hint="another UI automation client (uiautomator2, Appium) holds the accessibility "
                 "bridge; stop it and try again",
        )
    raise DeviceError(f"no hierarchy in the output: {_first_line(text)!r}")


def _check_dump_bytes(output: bytes) -> bytes:
    start = output.find(b"<?xml")
    if start < 0:
        start = output.find(b"<hierarchy")
    if start >= 0 and output.rfind(b"</hierarchy>") > start:
        return output
    _check_dump(output)  # raises the error the text says (transient, or why there is none)
    raise TransientError("uiautomator dump was cut short (no </hierarchy>)")


def _check_png(output: bytes) -> bytes:
    if output.startswith(b"\x89PNG\r\r\n"):
        # an old adbd ran the shell on a pty, which turned every \n into \r\n
        output = output.replace(b"\r\n", b"\n")
    if not output:
        raise TransientError("screencap printed nothing")
    if not output.startswith(PNG_SIGNATURE):
        raise DeviceError(f"not a PNG: {_first_line(output[:200].decode('utf-8', 'replace'))!r}")
    return output


def _check_start(output: bytes) -> None:
    text = output.decode("utf-8", "replace")
    if "No activities found" in text or "monkey aborted" in text:
        raise DeviceError("no launchable activity (is the app installed?)")
    for line in text.splitlines():
        if line.startswith(("Error", "Exception")) or "does not exist" in line:
            raise DeviceError(line.strip())


def _check_success(output: bytes) -> None:
    """``pm clear`` prints ``Success``, or ``Failed`` / an exception."""
    _answered(output)
    text = output.decode("utf-8", "replace")
    if "Success" not in text:
        raise DeviceError(_first_line(text) or "no answer", hint="is the app installed? (`adb shell pm list packages`)")


def _parse_launcher(output: bytes, package: str) -> str:
    """The activity of ``package/activity`` in ``resolve-activity --brief``'s last line."""
    for line in reversed(output.decode("utf-8", "replace").splitlines()):
        name, sep, activity = line.strip().partition("/")
        if sep and name == package and activity:
            return activity
    raise DeviceError(f"{package} has no launcher activity (is it installed?)")


_IME_ID = re.compile(r"[\w.]+/[\w.$]+")


def _parse_ime(output: bytes) -> str:
    """The active input method id, or "" ("null", an error message or nothing at all)."""
    text = output.decode("utf-8", "replace").strip()
    return text if _IME_ID.fullmatch(text) else ""


def _check_broadcast(output: bytes) -> None:
    text = output.decode("utf-8", "replace")
    if "Broadcast completed" not in text:
        raise DeviceError(f"broadcast not delivered: {_first_line(text)!r}")


# -- choosing a device ------------------------------------------------------------------------

def _list_devices(client: object | None, address: tuple[str, int]) -> list[tuple[str, str]]:
    """``adb devices`` on the server at ``address``, or through ``client`` (an adbutils client)."""
    try:
        if client is None:
            return list_devices(*address)
        return [(info.serial, info.state) for info in client.list()]  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - sockets and adbutils raise several types for "no server"
        host, port = address
        start = "adb start-server" if port == DEFAULT_PORT else f"adb -P {port} start-server"
        raise DeviceError(
            f"cannot reach the adb server at {host}:{port}: {exc}",
            hint=f"start it with `{start}`, or point --adb-port / ANDROID_ADB_SERVER_PORT at the one running",
        ) from exc


def _describe_devices(devices: list[tuple[str, str]]) -> str:
    if not devices:
        return "none"
    return ", ".join(serial if state == "device" else f"{serial} ({state})" for serial, state in devices)


def resolve_serial(
    explicit: str | None = None,
    *,
    client: object | None = None,
    env: Mapping[str, str] | None = None,
    address: tuple[str, int] | None = None,
) -> str:
    """Pick the device: ``explicit`` (``--device``), else ``$ANDROID_SERIAL``, else the only one.

    The devices are listed on the server at ``address`` (default: ``server_address()``), or by
    ``client`` (an adbutils ``AdbClient``, or anything with its ``list()``). Raises
    ``DeviceError`` if the chosen device is missing, offline or unauthorised, or if no device is
    connected; ``UsageError`` if several are and none was chosen. The messages list what is
    connected.
    """
    environ = os.environ if env is None else env
    if address is None:
        address = _client_address(client) if client is not None else server_address(None, environ)
    wanted, source = explicit, "--device"
    if not wanted:
        wanted, source = environ.get("ANDROID_SERIAL") or None, "ANDROID_SERIAL"
    devices = _list_devices(client, address)
    connected = _describe_devices(devices)

    if wanted:
        state = dict(devices).get(wanted)
        if state == "device":
            return wanted
        if state is None:
            hint = (f"for a device on the network run `{_adb_command(address)} connect {wanted}` first"
                    if ":" in wanted else "check `adb devices`")
            raise DeviceError(f"{source} names device {wanted!r}, which is not connected "
                              f"(connected{_server_words(address)}: {connected})", hint=hint)
        hints = {
            "unauthorized": "accept the 'Allow USB debugging' prompt on the phone",
            "offline": "reconnect the device or run `adb reconnect`",
        }
        raise DeviceError(f"device {wanted!r} is {state}", hint=hints.get(state))

    ready = [serial for serial, state in devices if state == "device"]
    if len(ready) == 1:
        return ready[0]
    if not ready:
        raise DeviceError(f"no device connected (adb sees: {connected})",
                          hint="plug in a phone with USB debugging on, start an emulator, "
                               "or use the simulated device")
    raise UsageError(f"several devices connected: {connected}",
                     hint="choose one with --device SERIAL or the ANDROID_SERIAL variable")


def _server_words(address: tuple[str, int]) -> str:
    """`` to the adb server at HOST:PORT`` unless it is the usual one (127.0.0.1:5037)."""
    from tapir.runtime.adb_transport import DEFAULT_HOST

    host, port = address
    return "" if (host, port) == (DEFAULT_HOST, DEFAULT_PORT) else f" to the adb server at {host}:{port}"


def _adb_command(address: tuple[str, int]) -> str:
    """``adb`` with the -H/-P options that reach the server at ``address``."""
    from tapir.runtime.adb_transport import DEFAULT_HOST

    host, port = address
    return "adb" + (f" -H {host}" if host != DEFAULT_HOST else "") + (f" -P {port}" if port != DEFAULT_PORT else "")


def _client_address(client: object) -> tuple[str, int]:
    return str(getattr(client, "host", "127.0.0.1")), int(getattr(client, "port", 5037))


def open_device(
    explicit: str | None = None,
    *,
    adb_port: int | None = None,
    adb_host: str | None = None,
    client: object | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
    env: Mapping[str, str] | None = None,
) -> AdbDevice:
    """Resolve the serial (see ``resolve_serial``) and return an ``AdbDevice`` for it.

    ``explicit`` may name its server (``HOST:PORT/SERIAL``, ``tapir.runtime.device_spec``); else
    the server is ``client``'s when one is given, else ``server_address(adb_port, host=adb_host)``
    (``--adb-port``, else ``$ANDROID_ADB_SERVER_PORT``, else 5037; ``--adb-host``, else
    ``$ANDROID_ADB_SERVER_HOST``, else 127.0.0.1).
    """
    from tapir.runtime.device_spec import parse_device

    if explicit:
        spec = parse_device(explicit)
        explicit = spec.serial
        if spec.names_server:
            adb_port, adb_host, client = spec.port, spec.host or adb_host, None
    address = _client_address(client) if client is not None else server_address(adb_port, env, host=adb_host)
    serial = resolve_serial(explicit, client=client, env=env, address=address)
    return AdbDevice(serial, address=address, retry=retry)
