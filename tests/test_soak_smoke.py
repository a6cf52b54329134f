"""A short soak (``bench/soak.py`` is the long one): sample scripts run round after round in this
process, and several simulators driven at once, leave no runtime, file descriptor, thread or
adb server behind."""

from __future__ import annotations

import gc
import os
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from tapir.docgen.loader import load_document
from tapir.dsl.interpreter import run_script
from tapir.runner import RunOptions, run_tests
from tapir.runtime import connect as connect_module
from tapir.runtime import heap
from tapir.runtime.connect import Connection
from tapir.runtime.session import DeviceRuntime
from tapir.sim import launch
from tapir.sim.apps import get_app
from tapir.sim.errors import SimDeviceError

pytestmark = [pytest.mark.adb, pytest.mark.timeout(300)]

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SCRIPTS = [SAMPLES / "music" / "play_song.tap", SAMPLES / "notes" / "write_note.tap",
           SAMPLES / "weather" / "fahrenheit.tap"]


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def adb_servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[int]]:
    """The ports of the adb servers started meanwhile (to check none is left running)."""
    try:
        launch.find_adb()
    except SimDeviceError as exc:  # pragma: no cover - adbutils ships adb
        pytest.skip(exc.message)
    ports: set[int] = set()
    original = launch.start_adb_server

    def recording(port: int, adb: str | None = None) -> bool:
        started = original(port, adb)
        if started:
            ports.add(port)
        return started

    monkeypatch.setattr(launch, "start_adb_server", recording)
    yield ports
    for port in ports:  # whatever a failing test left
        launch.kill_adb_server(port)


def test_rounds_of_scripts_leave_nothing_behind(adb_servers: set[int], monkeypatch: pytest.MonkeyPatch) -> None:
    heap.settle()  # as an earlier run of this process would have: later settles must not freeze
    made: list[weakref.ref[DeviceRuntime]] = []
    original = connect_module.connect

    def recording(conn: connect_module.Connection) -> DeviceRuntime:
        runtime = original(conn)
        made.append(weakref.ref(runtime))
        return runtime

    monkeypatch.setattr(connect_module, "connect", recording)  # the runner imports it when it runs
    counts: list[tuple[int, int]] = []
    for _ in range(5):
        # in this process: what is measured is this process's runtimes (`tapir test` runs each
        # script in a child process by default, which hides a leak rather than fixing it)
        run = run_tests(SCRIPTS, RunOptions(in_process=True))
        assert run.failed == 0, [r.error for r in run.results if not r.ok]
        del run
        gc.collect()
        counts.append((fds(), threading.active_count()))
    assert len(made) == 5 * len(SCRIPTS)
    alive = [ref for ref in made if ref() is not None]
    assert not alive, f"{len(alive)} runtimes of finished scripts are still alive"
    first, last = counts[0], counts[-1]
    assert last[0] <= first[0] and last[1] <= first[1], counts
    assert len(adb_servers) == 5 and not any(launch.server_running(p) for p in adb_servers)


def test_three_simulators_driven_at_once(adb_servers: set[int]) -> None:
    before = fds(), threading.active_count()
    port = launch.free_port()
    launch.start_adb_server(port)
    failures: list[str] = []

    def drive(script: Path) -> None:
        app = get_app(script.parent.name)
        with launch.start_sim([app], adb_port=port, foreground=app.package) as sim:
            for _ in range(2):
                sim.device.clear_data(app.package)
                sim.device.start_app(app.package)
                source = script.read_text(encoding="utf-8")
                document = load_document(script.parent / f"{script.parent.name}.yaml")
                conn = Connection(device=sim.serial, document=document, source=source, script=str(script),
                                  adb_port=port)
                result = run_script(source, conn.factory(), None, output=None, filename=str(script))
                if result.error is not None:
                    failures.append(result.error.render())

    threads = [threading.Thread(target=drive, args=(s,)) for s in SCRIPTS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    launch.kill_adb_server(port)
    assert not failures, failures
    assert not any(t.is_alive() for t in threads)
    gc.collect()
    after = fds(), threading.active_count()
    assert after[0] <= before[0] and after[1] <= before[1], (before, after)
    assert not any(launch.server_running(p) for p in adb_servers)
