"""The adb host-protocol transport against a fake adb server: what goes on the wire (one socket,
two requests per command), which failures are retried, and that a tap is never sent twice.

The fake server speaks just enough of the host protocol (``host:devices``,
``host:transport:SERIAL``, ``shell:CMD``) and can misbehave on purpose: refuse the service,
hang up before answering it, or drop the link halfway through the output.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import adbutils
import pytest

from tapir.core.errors import DeviceError, UsageError
from tapir.runtime.adb_transport import AdbServerTransport, list_devices, server_address
from tapir.runtime.device import AdbDevice, open_device, resolve_serial
from tapir.runtime.retry import AdbServerError, FailureKind, NotSent, classify

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\n\r\n" * 4
XML = b"<?xml version='1.0' ?><hierarchy rotation=\"0\"><node/></hierarchy>"

#: how the fake server answers a shell command: its output, or one of these misbehaviours
REFUSE = "refuse"  # FAIL to the service request: the device never ran it
HANG_UP = "hang-up"  # close after reading the service request, before any status
DROP_MID_OUTPUT = "drop"  # OKAY, half of the output, then a reset


@dataclass
class Sleeps:
    waits: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class FakeAdbServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, serials: dict[str, str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.serials = serials
        #: command -> bytes, or a list of answers used one per request (the last one repeats)
        self.outputs: dict[str, bytes | str | list[bytes | str]] = {}
        #: every request, grouped by connection
        self.connections: list[list[str]] = []
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def answer(self, command: str) -> bytes | str:
        with self.lock:
            out = self.outputs.get(command, b"")
            if isinstance(out, list):
                return out.pop(0) if len(out) > 1 else out[0]
            return out

    def commands(self) -> list[str]:
        return [r for conn in self.connections for r in conn if r.startswith("shell:")]


class _Handler(socketserver.BaseRequestHandler):
    server: FakeAdbServer

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.request.recv(n - len(data))
            if not chunk:
                return b""
            data += chunk
        return data

    def _request(self, seen: list[str]) -> str:
        head = self._read(4)
        text = self._read(int(head, 16)).decode() if head else ""
        if text:
            seen.append(text)
        return text

    def _fail(self, message: str) -> None:
        self.request.sendall(b"FAIL" + f"{len(message):04x}".encode() + message.encode())

    def handle(self) -> None:
        seen: list[str] = []
        with self.server.lock:
            self.server.connections.append(seen)
        request = self._request(seen)
        if request == "host:devices":
            listing = "".join(f"{s}\t{state}\n" for s, state in self.server.serials.items()).encode()
            self.request.sendall(b"OKAY" + f"{len(listing):04x}".encode() + listing)
        elif request.startswith("host:transport:"):
            serial = request.removeprefix("host:transport:")
            state = self.server.serials.get(serial)
            if state != "device":
                self._fail(f"device '{serial}' not found" if state is None else f"device {state}")
                return
            self.request.sendall(b"OKAY")
            command = self._request(seen).removeprefix("shell:")
            out = self.server.answer(command)
            if out == REFUSE:
                self._fail("closed")
            elif out == HANG_UP:
                pass
            elif out == DROP_MID_OUTPUT:
                self.request.sendall(b"OKAY" + XML[:20])
                self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            else:
                assert isinstance(out, bytes)
                self.request.sendall(b"OKAY" + out)
        self.request.close()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAdbServer]:
    # the device listing uses adbutils, which must never start a real server here
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    srv = FakeAdbServer({"sim-1": "device", "sim-off": "offline"})
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def device(server: FakeAdbServer, serial: str = "sim-1") -> tuple[AdbDevice, Sleeps]:
    sleep = Sleeps()
    return AdbDevice(serial, address=("127.0.0.1", server.port), sleep=sleep), sleep


def test_each_command_is_one_connection_with_two_requests(server: FakeAdbServer) -> None:
    server.outputs = {"wm size": b"Physical size: 1080x2400\n", "input tap 3 4": b""}
    dev, _ = device(server)
    assert dev.screen_size() == (1080, 2400)
    dev.tap(3, 4)
    # no host:version probe, no second connection: adbutils opened two per command
    assert server.connections == [["host:transport:sim-1", "shell:wm size"],
                                  ["host:transport:sim-1", "shell:input tap 3 4"]]


def test_large_output_is_read_whole(server: FakeAdbServer) -> None:
    big = PNG + bytes(range(256)) * 16384  # 4 MB
    server.outputs = {"screencap -p": big}
    dev, _ = device(server)
    assert dev.screenshot_png() == big


def test_open_device_lists_with_adbutils_then_uses_the_transport(server: FakeAdbServer) -> None:
    dev = open_device(None, adb_port=server.port, env={})
    assert dev.serial == "sim-1"
    dev = open_device(None, env={"ANDROID_ADB_SERVER_PORT": str(server.port), "ANDROID_SERIAL": "sim-1"})
    server.outputs = {"input keyevent KEYCODE_BACK": b""}
    dev.key("back")
    assert server.connections[-1] == ["host:transport:sim-1", "shell:input keyevent KEYCODE_BACK"]
    client = adbutils.AdbClient("127.0.0.1", server.port)
    assert open_device("sim-1", client=client).serial == "sim-1"


def test_unknown_serial_fails_at_once_without_retrying(server: FakeAdbServer) -> None:
    dev, sleep = device(server, "ghost")
    with pytest.raises(DeviceError) as err:
        dev.tap(1, 2)
    assert err.value.message == "device ghost: `input tap 1 2` failed: device 'ghost' not found"
    assert "adb devices" in (err.value.hint or "") and sleep.waits == []
    with pytest.raises(NotSent) as not_sent:
        AdbServerTransport("ghost", "127.0.0.1", server.port).shell("echo", timeout=1)
    assert classify(not_sent.value) is FailureKind.FATAL


def test_offline_device_is_retried_then_reported(server: FakeAdbServer) -> None:
    dev, sleep = device(server, "sim-off")
    with pytest.raises(DeviceError, match="after 4 attempts: device offline") as err:
        dev.tap(1, 2)  # the server refused the device: the tap never left, so retrying is safe
    assert sleep.waits == [0.2, 0.5, 1.0] and "reconnect" in (err.value.hint or "")


def test_a_refused_service_never_ran_so_even_a_tap_is_retried(server: FakeAdbServer) -> None:
    server.outputs = {"input tap 5 6": [REFUSE, b""]}
    dev, sleep = device(server)
    dev.tap(5, 6)
    assert server.commands() == ["shell:input tap 5 6"] * 2 and sleep.waits == [0.2]


@pytest.mark.parametrize("misbehaviour", [HANG_UP, DROP_MID_OUTPUT])
def test_a_tap_that_may_have_run_is_never_sent_twice(server: FakeAdbServer, misbehaviour: str) -> None:
    server.outputs = {"input tap 5 6": misbehaviour}
    dev, sleep = device(server)
    with pytest.raises(DeviceError, match="input tap 5 6"):
        dev.tap(5, 6)
    assert server.commands() == ["shell:input tap 5 6"] and sleep.waits == []


@pytest.mark.parametrize("misbehaviour", [HANG_UP, DROP_MID_OUTPUT])
def test_a_dump_is_retried_after_a_broken_link(server: FakeAdbServer, misbehaviour: str) -> None:
    dev, sleep = device(server)
    from tapir.runtime.adb_shell import dump_command

    server.outputs = {dump_command(): [misbehaviour, XML]}
    assert dev.dump_hierarchy() == XML.decode()
    assert len(server.commands()) == 2 and sleep.waits == [0.2]


def test_no_server_is_a_device_error_naming_the_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DeviceError, match=f"cannot reach the adb server at 127.0.0.1:{port}"):
        resolve_serial(None, client=adbutils.AdbClient("127.0.0.1", port), env={})
    sleep = Sleeps()
    dev = AdbDevice("emu-1", address=("127.0.0.1", port), sleep=sleep)
    with pytest.raises(DeviceError, match=f"after 4 attempts: cannot connect to the adb server at 127.0.0.1:{port}"):
        dev.tap(1, 2)  # never reached the device, so retrying a tap is safe
    assert sleep.waits == [0.2, 0.5, 1.0]


def test_devices_are_listed_over_the_host_protocol(server: FakeAdbServer) -> None:
    assert list_devices("127.0.0.1", server.port) == [("sim-1", "device"), ("sim-off", "offline")]
    assert resolve_serial(None, env={"ANDROID_ADB_SERVER_PORT": str(server.port)}) == "sim-1"
    assert server.connections[-1] == ["host:devices"]


def test_no_server_for_a_device_run_says_how_to_start_one_and_starts_none(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # an adb that would leave a mark if anything ran it (adbutils' listing ran `adb start-server`,
    # on 5037 whatever port it had been asked about)
    marker = tmp_path / "adb-ran"
    fake_adb = tmp_path / "adb"
    fake_adb.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake_adb.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb))
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DeviceError) as err:
        open_device(None, adb_port=port, env={})
    assert err.value.message.startswith(f"cannot reach the adb server at 127.0.0.1:{port}")
    assert f"adb -P {port} start-server" in (err.value.hint or "")
    assert not marker.exists()


def test_server_address_from_flag_environment_or_default() -> None:
    assert server_address(None, {}) == ("127.0.0.1", 5037)
    assert server_address(None, {"ANDROID_ADB_SERVER_PORT": "5038"}) == ("127.0.0.1", 5038)
    assert server_address(6000, {"ANDROID_ADB_SERVER_PORT": "5038"}) == ("127.0.0.1", 6000)
    assert server_address(None, {"ANDROID_ADB_SERVER_HOST": "10.0.2.2"}) == ("10.0.2.2", 5037)
    with pytest.raises(UsageError, match="ANDROID_ADB_SERVER_PORT must be a port number, not 'x'"):
        server_address(None, {"ANDROID_ADB_SERVER_PORT": "x"})
    with pytest.raises(UsageError, match="--adb-port must be a port between 1 and 65534, not 0"):
        server_address(0, {})


def test_server_errors_are_classified_by_their_text() -> None:
    assert classify(AdbServerError("device offline")) is FailureKind.TRANSIENT
    assert classify(AdbServerError("device unauthorized.")) is FailureKind.FATAL
    assert classify(NotSent(AdbServerError("closed"))) is FailureKind.NOT_SENT
