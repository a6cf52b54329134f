"""The one object that owns running a script: a document, a device and the run's options in; the
check, the connection, the interpreter (in a child process or here), the trace and the device's
figures handled; one result out. Every front end calls it (``tapir run``, ``tapir test``, the
pytest plugin, ``tapir eval``, ``tapir synth``, ``tapir gen --run``, the REPL, the inspector) and
keeps only what is its own::

    runner = Runner(load_document("samples/music/music.yaml"), "sim:music", RunOptions(isolation="inline"))
    run = runner.run(source, "play_song.tap")
    run.ok, run.result.printed, run.records[-1]["event"], run.stats.dumps

A script that makes no UI call runs without a device (the device is connected on the first UI
call, never before). Several scripts can share one device in a ``session()`` (an evaluation's
setup, then its script; a REPL's lines)::

    with runner.session() as session:
        session.run(setup, "task (setup)")
        run = session.run(script, "task.tap")
        session.simulator.app_state(package)      # what only a simulator offers (SimulatorHooks)

Like jinja2's ``Environment``, it is the only place that knows the order of the steps; the layers
below it (language, documents, runtime) know nothing of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from tapir.core.document import AppDocument
from tapir.core.errors import DeviceError, TapirError
from tapir.core.safety import Safety
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.interpreter import RunResult, run_script
from tapir.dsl.runtime_api import RuntimeFactory
from tapir.dsl.symbols import SymbolTable
from tapir.run.options import RunOptions
from tapir.runtime.connect import Connection
from tapir.runtime.session import DeviceRuntime
from tapir.runtime.simulator import SimulatorHooks
from tapir.runtime.trace import JsonLinesTrace, MemoryTrace, TraceSink

__all__ = ["DeviceStats", "Finish", "Runner", "ScriptRun", "Session"]

#: Called where the runtime lives, after the script and before the device is released, with the
#: runtime (still open: the script was lent a ``Borrowed`` view of it) and the script's result;
#: what it returns (JSON) comes back in ``ScriptRun.finished`` (the test runner saves the
#: failure's screenshot and dump there).
Finish = Callable[[DeviceRuntime, RunResult], Any]


@dataclass(frozen=True)
class DeviceStats:
    """What the device did for one script: dumps read and actions sent."""

    dumps: int = 0
    device_actions: int = 0


@dataclass(frozen=True)
class ScriptRun:
    """One script's run: its outcome, the device's figures and the trace records, in memory."""

    #: The interpreter's result: the error that stopped the script (None: it finished), steps,
    #: UI actions, time, what it printed.
    result: RunResult
    #: The trace records of this script (``session`` and ``end`` included), in order, as the trace
    #: file holds them (JSON values); a child process that was killed leaves those written till then.
    records: tuple[dict[str, Any], ...] = ()
    stats: DeviceStats = field(default_factory=DeviceStats)
    #: What the guards did that the person should hear of (the run went back into its app...).
    notices: tuple[str, ...] = ()
    #: What ``finish`` returned (None without one).
    finished: Any = None
    #: Wall-clock seconds of the whole run (connecting the device included).
    seconds: float = 0.0
    #: The folder where a failed run kept its screenshot, dump, trace and error
    #: (``RunOptions.failure_artifacts``); None when nothing was kept.
    kept: Path | None = None

    @property
    def ok(self) -> bool:
        return self.result.error is None

    @property
    def error(self) -> TapirError | None:
        return self.result.error


class _Recorder:
    """The trace sink of a run: keeps the records (as the file holds them: JSON values), writes the
    file and the caller's sink, tells ``on_record``; ``records[n:]`` is what one script of a session
    wrote."""

    def __init__(self, path: str | Path | None, sink: TraceSink | None,
                 on_record: Callable[[dict[str, Any]], None] | None) -> None:
        self._memory = MemoryTrace()
        self.records: list[dict[str, Any]] = self._memory.records
        self.file = JsonLinesTrace(path) if path is not None else None
        self.sink = sink
        self.on_record = on_record

    def write(self, record: dict[str, Any]) -> None:
        self._memory.write(record)
        if self.file is not None:
            self.file.write(record)  # (each line flushed: a killed child leaves what it wrote)
        if self.sink is not None:
            self.sink.write(record)
        if self.on_record is not None:
            self.on_record(self.records[-1])

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
        if self.sink is not None:
            close = getattr(self.sink, "close", None)
            if callable(close):
                close()


class Runner:
    """Runs scripts against one document on one device with one set of options (module docstring).

    By default (``RunOptions.isolation="process"``) every script, of ``run`` or of a ``session()``,
    runs in a child process under OS limits and is stopped at its time budget plus a grace,
    whatever it does; ``isolation="inline"`` runs scripts here, with the interpreter's checks only
    (``docs/interpreter.md``: what the Python API promises).

    ``device`` is what ``--device`` takes (``sim``, ``sim:APP``, ``sim:RECORDING``, an adb serial),
    or None for the default device (``$ANDROID_SERIAL``, else the only one connected). Without a
    document there is no device: a script's first UI call then fails with ``missing`` (a
    ``TapirError`` naming what to pass), or with a plain "no device" error.
    """

    def __init__(self, document: AppDocument | None, device: str | None, options: RunOptions | None = None, *,
                 missing: TapirError | None = None) -> None:
        self.document = document
        self.device = device
        self.options = options or RunOptions()
        self.missing = missing
        if device is not None:
            _check_device(device, self.options.adb_port, self.options.adb_host)

    # -- one script, one device --------------------------------------------------------------------

    def run(self, source: str, filename: str = "<script>", *, symbols: SymbolTable | None = None,
            finish: Finish | None = None) -> ScriptRun:
        """Run ``source`` on a device of its own (connected on the first UI call, released after),
        in a child process under OS limits unless the options say ``inline``. Never raises for the
        script's own failure: it is ``ScriptRun.error``."""
        from tapir.dsl.isolation import Relay, isolation_available, run_script_isolated

        options = self.options
        started = time.monotonic()
        isolated = options.isolation == "process" and isolation_available()
        # records written in a child come here as they are written: kept (a child that is killed
        # leaves those it wrote) and passed to on_record
        relayed: list[dict[str, Any]] = []
        relay = Relay(lambda record: _received(record, relayed, options.on_record)) if isolated else None
        recorder = _Recorder(options.trace, options.trace_sink,
                             relay.send if relay is not None else options.on_record)
        made: list[DeviceRuntime] = []
        # one Safety for the guards and the script: its allow() reaches the guards
        safety = options.safety if options.safety is not None else Safety()
        # with a ``finish`` (or a failure to keep), the script is lent the runtime, so that it is
        # still open after the script
        factory = self._factory(source, filename, recorder, made, safety,
                                lend=finish is not None or options.failure_artifacts is not None)

        def collect(result: RunResult) -> dict[str, Any]:
            """Where the runtime lived, after the script: ``finish``, the device released, what the
            run reports of it (JSON, to cross the process boundary)."""
            out: dict[str, Any] = {}
            keep = Path(options.failure_artifacts) if made and result.error is not None \
                and options.failure_artifacts is not None else None
            try:
                if made and finish is not None:
                    out["finished"] = finish(made[0], result)
                if keep is not None:
                    keep = _keep_screen(made[0], keep)
            finally:
                if made:
                    made[0].close()  # closes the trace too
                recorder.close()
            if keep is not None and _keep_trace(keep, recorder.records, result):
                out["kept"] = str(keep)
            if made:
                runtime = made[0]
                out["stats"] = [runtime.stats.dumps, runtime.stats.device_actions]
                out["notices"] = [str(n) for n in getattr(runtime, "notices", ())]
            if not isolated:  # (a child's records came over the relay as they were written)
                out["records"] = recorder.records
            return out

        inputs = ScriptInputs(dict(options.params), safety)
        if isolated:
            try:
                result = run_script_isolated(source, factory, options.budgets, output=options.output,
                                             symbols=symbols, filename=filename, debug=options.debug, inputs=inputs,
                                             collect=collect, relay=relay)
            finally:
                if recorder.file is not None:
                    recorder.file.close()  # this process's copy: the child wrote and closed its own
            done = dict(result.collected) if isinstance(result.collected, dict) else {}
            done["records"] = relayed
        else:
            try:
                result = run_script(source, factory, options.budgets, output=options.output, symbols=symbols,
                                    filename=filename, debug=options.debug, inputs=inputs)
                done = collect(result)
            finally:
                for runtime in made:
                    runtime.close()  # (again, when collect did not get to it: close is idempotent)
                recorder.close()
        return _script_run(result, done, time.monotonic() - started)

    # -- several scripts, one device ----------------------------------------------------------------

    @contextmanager
    def session(self, source: str | None = None, filename: str | None = None) -> Iterator[Session]:
        """A device shared by the scripts run in it, kept in this process (a session is for code
        that keeps the device between scripts; each script runs as the options say, see
        ``Session.run``). ``source`` and ``filename`` name what the trace quotes (None: it gives
        line numbers only, as for a setup and a script in one session)."""
        recorder = _Recorder(self.options.trace, self.options.trace_sink, self.options.on_record)
        session = Session(self, recorder, source, filename,
                          self.options.safety if self.options.safety is not None else Safety())
        try:
            yield session
        finally:
            session.close()

    def connect(self, source: str | None = None, filename: str | None = None,
                trace: TraceSink | None = None, safety: Safety | None = None) -> DeviceRuntime:
        """A device runtime now, for a front end that drives it itself (the REPL, the inspector);
        the caller closes it. ``safety`` (default: the options') is what its guards read; ``trace``
        (default: the options' ``trace_sink``) receives its trace records."""
        return self._connect(self._connection(source, filename, trace or self.options.trace_sink,
                                              safety or self.options.safety))

    def rebind(self, runtime: DeviceRuntime) -> DeviceRuntime:
        """``runtime``'s device under this runner's document (a REPL that switches documents): the
        runtime returned takes over the device, trace and simulator; ``runtime`` is closed without them."""
        from tapir.runtime.connect import make_grounder

        if self.document is None:
            raise self.missing or TapirError("no app document to bind the device to")
        return runtime.rebind(self.document, make_grounder(self.document))

    # -- the steps ------------------------------------------------------------------------------------

    def _connect(self, connection: Connection) -> DeviceRuntime:
        """The runtime of ``connection``, given to ``on_connect``."""
        from tapir.runtime.connect import connect  # (looked up now: tests stand in for it)

        runtime = connect(connection)
        if self.options.on_connect is not None:
            try:
                self.options.on_connect(runtime)
            except BaseException:
                runtime.close()
                raise
        return runtime

    def _connection(self, source: str | None, filename: str | None, trace: TraceSink | None,
                    safety: Safety | None) -> Connection:
        if self.document is None:
            raise self.missing or TapirError("no app document for a device run")
        o = self.options
        return Connection(device=self.device, document=self.document, trace_sink=trace, source=source,
                          script=filename, config=o.session, adb_port=o.adb_port, adb_host=o.adb_host,
                          artifacts=str(o.artifacts) if o.artifacts is not None else None, safety=safety,
                          screenshots=str(o.screenshots) if o.screenshots is not None else None, prepare=o.prepare)

    def _factory(self, source: str, filename: str, trace: TraceSink, made: list[DeviceRuntime],
                 safety: Safety, *, lend: bool = False) -> RuntimeFactory:
        from tapir.runtime.borrowed import Borrowed

        def make() -> Any:
            if self.document is None:
                raise self.missing or DeviceError(
                    "this run has no device: the script's UI calls need one",
                    hint="pass --device SERIAL (or sim:APP for the simulated phone), or set ANDROID_SERIAL")
            runtime = self._connect(self._connection(source, filename, trace, safety))
            made.append(runtime)
            # lent: the interpreter's close leaves it open; the run closes it after ``finish``
            return Borrowed(runtime) if lend else runtime

        return make


class Session:
    """Scripts sharing one device (``Runner.session()``); the device is connected on the first UI
    call of the first script that makes one, or, when the scripts run in a child process (the
    options' ``isolation``), before the first script: the device and a simulator stay in this
    process, where ``simulator`` reads what each script did, and each script's child reaches the
    device through its adb server."""

    def __init__(self, runner: Runner, recorder: _Recorder, source: str | None, filename: str | None,
                 safety: Safety) -> None:
        self.runner = runner
        #: The guards' and the scripts' settings, shared by every script of the session.
        self.safety = safety
        self._recorder = recorder
        self._source = source
        self._filename = filename
        self.runtime: DeviceRuntime | None = None

    @property
    def simulator(self) -> SimulatorHooks | None:
        """What only a simulator offers (None on a phone, or before the device is connected)."""
        return self.runtime.simulator if self.runtime is not None else None

    def open(self) -> DeviceRuntime:
        """The session's device runtime, connected now if it is not yet."""
        if self.runtime is None:
            self.runtime = self.runner.connect(self._source, self._filename, self._recorder, self.safety)
        return self.runtime

    def run(self, source: str, filename: str = "<script>", *, symbols: SymbolTable | None = None,
            finish: Finish | None = None) -> ScriptRun:
        """Run ``source`` on the session's device; its records and device figures are this script's
        only. ``finish``, as in ``Runner.run``, is called after the script when the script used the
        device (which stays the session's); what it returns is ``finished``.

        As ``Runner.run``, the script runs in a child process under OS limits unless the options
        say ``inline``: the child connects a runtime of its own to the session's device through
        the adb server (a simulator's clock moves with its shell's ``sleep``), and ``finish`` is
        called there (what it returns must be JSON). A device no other process can reach (a
        stand-in with no adb server, in tests) runs the script here."""
        from tapir.dsl.isolation import isolation_available
        from tapir.runtime.borrowed import Borrowed

        options = self.runner.options
        if options.isolation == "process" and isolation_available():
            reached = self._reachable()
            if reached is not False:
                return self._run_isolated(source, filename, reached, symbols, finish)
        started = time.monotonic()
        first = len(self._recorder.records)
        before = (self.runtime.stats.dumps, self.runtime.stats.device_actions) if self.runtime else (0, 0)
        used: list[DeviceRuntime] = []

        def factory() -> Any:
            used.append(self.open())
            return Borrowed(used[-1])  # the script releases a loan, not the session's device

        inputs = ScriptInputs(dict(options.params), self.safety)
        result = run_script(source, factory, options.budgets, output=options.output, symbols=symbols,
                            filename=filename, debug=options.debug, inputs=inputs)
        finished = finish(used[0], result) if used and finish is not None else None
        runtime = self.runtime
        stats = DeviceStats(runtime.stats.dumps - before[0], runtime.stats.device_actions - before[1]) \
            if runtime is not None else DeviceStats()
        notices = tuple(str(n) for n in getattr(runtime, "notices", ())) if runtime is not None else ()
        return ScriptRun(result, tuple(self._recorder.records[first:]), stats, notices, finished,
                         seconds=time.monotonic() - started)

    def close(self) -> None:
        try:
            if self.runtime is not None:
                self.runtime.close()
        finally:
            self._recorder.close()

    def _reachable(self) -> str | Literal[False] | None:
        """The device as another process names it (``HOST:PORT/SERIAL``, connected here now when it
        is not yet); None without a document (a UI call then fails as it would here); False for a
        device only this process can reach."""
        from tapir.runtime.device_spec import format_server

        if self.runner.document is None:
            return None
        device = self.open().device
        address = getattr(device, "address", None)
        if not (isinstance(address, tuple) and len(address) == 2):
            return False
        return f"{format_server(address[0], address[1])}/{device.serial}"

    def _run_isolated(self, source: str, filename: str, device: str | None, symbols: SymbolTable | None,
                      finish: Finish | None) -> ScriptRun:
        """``run`` in a child process (see ``run``); ``device`` is what the child connects to."""
        from tapir.dsl.isolation import Relay, run_script_isolated
        from tapir.runtime.borrowed import Borrowed

        options = self.runner.options
        started = time.monotonic()
        here = self.runtime
        relayed: list[dict[str, Any]] = []

        def received(record: Any) -> None:
            # the child's runtime opens and ends a trace of its own; the session's has one of each
            if isinstance(record, dict) and record.get("event") not in ("session", "end"):
                relayed.append(record)
                self._recorder.write(record)

        relay = Relay(received)
        made: list[DeviceRuntime] = []

        def make() -> Any:  # in the child, on the script's first UI call
            if device is None or here is None:
                return self.runner._factory(source, filename, _Recorder(None, None, relay.send), made,
                                            self.safety)()
            connection = replace(self.runner._connection(self._source, self._filename,
                                                         _Recorder(None, None, relay.send), self.safety),
                                 device=device, adb_port=None, adb_host=None, prepare=None, config=here.config)
            made.append(self.runner._connect(connection))
            return Borrowed(made[-1])

        def collect(result: RunResult) -> dict[str, Any]:  # in the child, after the script
            out: dict[str, Any] = {}
            try:
                if made and finish is not None:
                    out["finished"] = finish(made[0], result)
            finally:
                for runtime in made:
                    runtime.close()
            if made:
                out["stats"] = [made[0].stats.dumps, made[0].stats.device_actions]
                out["notices"] = [str(n) for n in made[0].notices]
            return out

        inputs = ScriptInputs(dict(options.params), self.safety)
        try:
            result = run_script_isolated(source, make, options.budgets, output=options.output, symbols=symbols,
                                         filename=filename, debug=options.debug, inputs=inputs, collect=collect,
                                         relay=relay)
        finally:
            if here is not None:
                here.screen.forget()  # the child changed the device behind this runtime's back
        done = dict(result.collected) if isinstance(result.collected, dict) else {}
        done["records"] = relayed
        return _script_run(result, done, time.monotonic() - started)


def _check_device(device: str, adb_port: int | None, adb_host: str | None = None) -> None:
    """A device spec or adb port that cannot work is a ``UsageError`` now, not at the first UI call."""
    from tapir.core.errors import UsageError
    from tapir.runtime.connect import is_simulator
    from tapir.runtime.device_spec import parse_device
    from tapir.runtime.simulator import simulator_errors
    from tapir.sim.launch import check_sim_spec

    with simulator_errors():
        check_sim_spec(device)
    if is_simulator(device) and adb_host not in (None, "127.0.0.1", "localhost", "::1"):
        raise UsageError(f"--adb-host {adb_host}: a simulator attaches to an adb server on this machine",
                         hint="give --adb-host to phones only, or name the server in the device: HOST:PORT/SERIAL")
    if not is_simulator(device):
        parse_device(device)  # HOST:PORT/SERIAL with a bad server part
    if adb_port is not None or not is_simulator(device):
        from tapir.runtime.adb_transport import server_address

        server_address(adb_port, host=adb_host)


def _received(record: Any, kept: list[dict[str, Any]],
              on_record: Callable[[dict[str, Any]], None] | None) -> None:
    """A trace record a child process wrote, arrived here."""
    if isinstance(record, dict):
        kept.append(record)
        if on_record is not None:
            on_record(record)


def _script_run(result: RunResult, done: dict[str, Any], seconds: float) -> ScriptRun:
    stats = done.get("stats")
    records = done.get("records")
    notices = done.get("notices")
    kept = done.get("kept")
    return ScriptRun(
        result=replace(result, collected=None),
        records=tuple(r for r in records if isinstance(r, dict)) if isinstance(records, list) else (),
        stats=DeviceStats(stats[0], stats[1]) if isinstance(stats, list) and len(stats) == 2
        and all(type(n) is int for n in stats) else DeviceStats(),
        notices=tuple(str(n) for n in notices) if isinstance(notices, list) else (),
        finished=done.get("finished"),
        seconds=seconds,
        kept=Path(kept) if isinstance(kept, str) else None,
    )


def _keep_screen(runtime: DeviceRuntime, folder: Path) -> Path | None:
    """The failure's screen and last dump in ``folder`` (``RunOptions.failure_artifacts``); None
    when the folder cannot be made (the error is still shown; nothing else is lost)."""
    from tapir.runtime.artifacts import save_failure

    try:
        save_failure(runtime, folder)
    except OSError:
        return None
    return folder


def _keep_trace(folder: Path, records: list[dict[str, Any]], result: RunResult) -> bool:
    """The run's trace and error beside the failure's screen; False when they cannot be written."""
    import json

    try:
        with open(folder / "trace.jsonl", "w", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        if result.error is not None:
            (folder / "error.txt").write_text(result.error.render() + "\n", encoding="utf-8")
    except OSError:
        return False
    return True
