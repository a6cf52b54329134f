"""A private adb server starts on another port when the free port found is taken before adb binds
it (several runs on one machine race for ports): the soak once died of it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from tapir.sim import launch
from tapir.sim.errors import SimDeviceError


@pytest.fixture
def squatter() -> Iterator[int]:
    """A port held by something that answers like nothing adb knows (another program)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"000cnot adb at all")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield sock.getsockname()[1]
    stop.set()
    thread.join()
    sock.close()


@pytest.mark.adb
def test_a_taken_port_is_tried_again_elsewhere(squatter: int, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        launch.find_adb()
    except SimDeviceError as exc:  # pragma: no cover - adbutils ships adb
        pytest.skip(exc.message)
    ports = iter([squatter, launch.free_port()])
    real_free_port = launch.free_port
    monkeypatch.setattr(launch, "free_port", lambda: next(ports, None) or real_free_port())
    with pytest.raises(SimDeviceError):
        launch.start_adb_server(squatter)  # what the pool did before: one port, one try
    port = launch.start_private_adb_server()
    try:
        assert port != squatter and launch.server_running(port)
    finally:
        launch.kill_adb_server(port)
