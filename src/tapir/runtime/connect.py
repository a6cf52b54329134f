"""From a device spec and a document to a device runtime: ``Connection`` says what to connect,
``connect`` opens the device and binds a ``DeviceRuntime`` to it. Running a script is the
business of ``tapir.run.Runner``, which calls this on the script's first UI call; Python code
that drives a device itself uses ``open_runtime``.

``sim`` starts the simulated device (every sample app installed), ``sim:music`` only the named
app(s), ``sim:PATH`` a DroidBot recording replayed (``ReplayApp``); in each case behind a real
adb server (a private one on a free port, or the one on ``--adb-port``), with the document's
app in the foreground, and the simulator is stopped when the runtime is closed. Anything else
is an adb serial (``resolve_serial``: ``--device``, else ``$ANDROID_SERIAL``, else the only
device connected) on the adb server the spec names (``HOST:PORT/SERIAL``,
``tapir.runtime.device_spec``), else at ``--adb-host``:``--adb-port``, else
``$ANDROID_ADB_SERVER_HOST``:``$ANDROID_ADB_SERVER_PORT``, else 127.0.0.1:5037.

Once the runtime is made, the heap is settled (``tapir.runtime.heap``): everything loaded so far
is kept out of the garbage collector's way for the rest of the run.

Waits and ``sleep()`` pass the device's time (``tapir.runtime.clock``): a simulator's moves on at
once, a phone's by itself (a device by serial sleeps on the device).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tapir.core.document import AppDocument
from tapir.core.errors import UsageError
from tapir.core.safety import Safety
from tapir.dsl.runtime_api import RuntimeFactory
from tapir.runtime.clock import DeviceShellClock, SimulatedClock, WaitClock
from tapir.runtime.heap import settle
from tapir.runtime.screenshots import StepScreenshots
from tapir.runtime.session import DeviceRuntime, SessionConfig
from tapir.runtime.settle import SettleConfig
from tapir.runtime.trace import JsonLinesTrace, TraceSink


def load_run_document(path: str | Path) -> AppDocument:
    """Load the document of a run (``DocumentError`` listing every problem when it is invalid)."""
    from tapir.docgen.loader import load_document

    return load_document(path)


@dataclass(frozen=True)
class Connection:
    """What a run connects to; ``factory()`` makes the runtime."""

    device: str | None
    document: AppDocument
    trace_path: str | None = None
    source: str | None = None
    script: str | None = None
    config: SessionConfig | None = None
    #: The adb server's port. For ``sim`` devices None means a private server on a free port;
    #: for adb serials, ``$ANDROID_ADB_SERVER_PORT``, else 5037.
    adb_port: int | None = None
    #: The adb server's host for adb serials (None: ``$ANDROID_ADB_SERVER_HOST``, else 127.0.0.1).
    #: A device spec that names its server (``HOST:PORT/SERIAL``) wins over both.
    adb_host: str | None = None
    #: Where screenshots go (None: ``tapir-artifacts/<script>/``).
    artifacts: str | None = None
    #: Where trace records go instead of a ``trace_path`` file (the REPL keeps the last calls).
    trace_sink: TraceSink | None = None
    #: What the run may do (``tapir.core.safety``; the interpreter's ``ScriptInputs.safety`` is the
    #: same object, so the script's ``allow()`` reaches the guards). None: nothing sensitive.
    safety: Safety | None = None
    #: A folder for a screenshot at the start and after each call that sent input or failed.
    screenshots: str | None = None
    #: Before the session starts: ``stop`` the document's app (a phone then starts from its launch
    #: screen), ``reset`` it (``pm clear``, then launch it), or leave it as it is (None).
    prepare: str | None = None

    def factory(self) -> RuntimeFactory:
        return lambda: connect(self)


def is_simulator(spec: str | None) -> bool:
    from tapir.sim.launch import is_sim_spec

    return spec is not None and is_sim_spec(spec)


def make_grounder(document: AppDocument) -> Any:
    from tapir.runtime.grounding import Grounder

    return Grounder(document)


def connect(conn: Connection) -> DeviceRuntime:
    """Open the device (starting a simulator for ``sim`` specs) and bind a session to it."""
    from tapir.runtime.device import AdbDevice, open_device

    doc = conn.document
    on_close: Callable[[], None] | None = None
    wait_clock: WaitClock
    config = conn.config or SessionConfig()
    if is_simulator(conn.device):
        from tapir.runtime.simulator import SimulatorControl, simulator_errors
        from tapir.sim.launch import apps_for_spec, start_sim

        assert conn.device is not None
        with simulator_errors():
            apps = apps_for_spec(conn.device)
        packages = {a.package for a in apps}
        if doc.app.package and doc.app.package not in packages:
            raise UsageError(
                f"the simulated device {conn.device!r} does not have the document's app {doc.app.package} "
                f"(it has {', '.join(sorted(packages)) or 'nothing'})",
                hint="use --device sim:APP with the app the document describes",
            )
        with simulator_errors():
            # without a document (screen-level actions only), the one app of `sim:APP` is in front
            front = doc.app.package or (apps[0].package if len(apps) == 1 else None)
            sim = start_sim(apps, foreground=front, adb_port=conn.adb_port)
        hooks = SimulatorControl(sim)

        def reattach() -> None:
            with simulator_errors():
                sim.reattach()

        # a simulator this run started is attached again when the adb server restarts
        device: Any = AdbDevice(sim.serial, address=sim.address, reattach=reattach)
        on_close = sim.stop
        wait_clock = SimulatedClock(hooks.advance_time)
        if conn.config is None:
            config = replace(config, settle=SettleConfig.for_simulator())
    else:
        device = open_device(conn.device, adb_port=conn.adb_port, adb_host=conn.adb_host)
        wait_clock = DeviceShellClock(lambda command: device.shell(command, idempotent=True))
    trace: TraceSink | None = conn.trace_sink
    try:
        if not doc.app.package:
            pass  # no document, no app of its own to prepare
        elif conn.prepare == "reset":
            reset_app(device, doc.app.package)
        elif conn.prepare == "stop":
            device.app_stop(doc.app.package)
        grounder = make_grounder(doc)
        if trace is None and conn.trace_path:
            try:
                trace = JsonLinesTrace(conn.trace_path)
            except OSError as exc:
                raise UsageError(f"cannot write {conn.trace_path}: {exc.strerror or exc}", setting="trace") from None
        shots = StepScreenshots(conn.screenshots) if conn.screenshots else None
        runtime = DeviceRuntime(device, doc, grounder, config=config, trace=trace, source=conn.source,
                                script=conn.script, on_close=on_close, wait_clock=wait_clock,
                                artifacts=Path(conn.artifacts) if conn.artifacts else None, screenshots=shots,
                                safety=conn.safety)
        if on_close is not None:
            runtime.simulator = hooks
        settle()
        return runtime
    except BaseException:
        if on_close is not None:
            on_close()
        raise


def open_runtime(
    document: str | Path | AppDocument,
    device: str | None = "sim",
    *,
    trace: str | Path | None = None,
    screenshots: str | Path | None = None,
    adb_port: int | None = None,
    adb_host: str | None = None,
    reset: bool = False,
) -> DeviceRuntime:
    """A device runtime for Python code (tests on the generated page objects, notebooks)::

        from tapir.runtime import open_runtime
        from music_pages import connect                    # generated by `tapir compile music.yaml`

        with open_runtime("samples/music/music.yaml", "sim:music") as runtime:
            app = connect(runtime)
            app.songs_screen.song_list.match("Lanterns").tap()

    ``device`` is what ``--device`` takes: ``sim`` / ``sim:APP`` (a fresh simulator with the
    document's app in front, stopped on close; ``adb_port`` shares an adb server between several)
    or an adb serial (None: ``$ANDROID_SERIAL``, else the only device connected), on the server
    ``HOST:PORT/SERIAL`` names, else ``adb_host``/``adb_port``. ``reset``
    clears the app's data first (``pm clear``) and launches it. Close the runtime when done (it is
    a context manager); the ``tapir_runtime`` pytest fixture does that for you.
    """
    doc = document if isinstance(document, AppDocument) else load_run_document(document)
    if device is not None:
        from tapir.runtime.simulator import simulator_errors
        from tapir.sim.launch import check_sim_spec

        with simulator_errors():
            check_sim_spec(device)
    return connect(Connection(device=device, document=doc, trace_path=str(trace) if trace else None,
                              adb_port=adb_port, adb_host=adb_host,
                              screenshots=str(screenshots) if screenshots else None,
                              prepare="reset" if reset else None))


def reset_app(device: Any, package: str) -> None:
    """Clear ``package``'s data (``pm clear``: what a fresh install has) and launch it.

    Raises ``DeviceError`` when the device refuses (the app is not installed)."""
    from tapir.core.errors import DeviceError

    out = device.shell(f"pm clear {package}")
    if "Success" not in out:
        raise DeviceError(f"device {device.serial}: `pm clear {package}` failed: {out.strip() or 'no output'}")
    device.app_start(package)
