"""``tapir test``: run test scripts (``*.tap`` with ``assert``s), each on a fresh device.

A test passes when the script runs to its end: every ``assert`` held and no error stopped it.
Each script is first checked by the language service exactly as ``tapir check`` checks it: one
with errors fails without a device being started, and its warnings are reported with its result.
On the simulator (``--device sim`` or ``sim:APP``, the default) each script gets a freshly
started simulated device with its document's app in front, so tests cannot leak state into each
other; all of them share one private adb server, started once. On a real device (``--device
SERIAL``) the app is force-stopped before each script so that it starts from its launch screen.

``run_tests`` returns one ``TestResult`` per script; ``junit_xml`` renders them in the JUnit
format CI systems read.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from tapir.dsl.budget import Budgets
from tapir.dsl.errors import TapirError, UsageError
from tapir.dsl.safety import Safety
from tapir.runtime.connect import Connection, connection_for, is_simulator
from tapir.runtime.session import DeviceRuntime


@dataclass(frozen=True)
class TestResult:
    script: str
    ok: bool
    seconds: float
    #: The rendered error (file:line:col, the line, a caret) when it failed.
    error: str | None = None
    category: str | None = None
    printed: tuple[str, ...] = ()
    actions: int = 0
    dumps: int = 0
    device_actions: int = 0
    #: The warnings ``tapir check`` reports for the script, rendered (None when there are none).
    warnings: str | None = None


@dataclass
class TestRun:
    results: list[TestResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.ok for r in self.results)

    @property
    def failed(self) -> int:
        return sum(not r.ok for r in self.results)

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"


def collect(paths: Iterable[str | Path]) -> list[Path]:
    """The ``.tap`` files named, and those under the folders named (sorted, generated/ skipped)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(p for p in sorted(path.rglob("*.tap")) if "generated" not in p.parts)
        elif path.is_file():
            if path.suffix != ".tap":
                raise UsageError(f"not a test script (*.tap): {raw}")
            out.append(path)
        else:
            raise UsageError(f"no such file or folder: {raw}")
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    if not unique:
        raise UsageError("no test scripts (*.tap) found in " + ", ".join(str(p) for p in paths))
    return unique


class _SharedAdbServer:
    """One private adb server for every simulator of a test run."""

    def __init__(self) -> None:
        self.port: int | None = None

    def __enter__(self) -> _SharedAdbServer:
        return self

    def start(self) -> int:
        if self.port is None:
            from tapir.runtime.sim.launch import free_port, start_adb_server
            from tapir.runtime.simulator import simulator_errors

            port = free_port()
            with simulator_errors():
                start_adb_server(port)
            self.port = port
        return self.port

    def __exit__(self, *exc: object) -> None:
        if self.port is not None:
            from tapir.runtime.sim.launch import kill_adb_server

            kill_adb_server(self.port)


def run_tests(
    scripts: list[Path],
    *,
    device: str | None = "sim",
    doc: str | None = None,
    budgets: Budgets | None = None,
    trace_dir: Path | None = None,
    on_result: Callable[[TestResult], None] | None = None,
    runtimes: list[DeviceRuntime] | None = None,
    safety_for: Callable[[Path], Safety] | None = None,
) -> TestRun:
    """Run each script on a fresh device; ``on_result`` is called as each one finishes.

    ``runtimes`` (for tests of the runner) collects the runtime of each script that made one.
    ``safety_for`` makes each script's permissions (``--allow``, ``--secrets``...: a fresh
    ``Safety`` per script, so one script's ``allow()`` does not reach the next); default: none.
    """
    from tapir.dsl.inputs import ScriptInputs
    from tapir.dsl.interpreter import run_script
    from tapir.service import Workspace

    run = TestRun()
    spec = device or "sim"
    ws = Workspace()
    with _SharedAdbServer() as adb:
        for script in scripts:
            started = time.monotonic()
            made: list[DeviceRuntime] = []
            warnings: str | None = None
            rendered: str | None = None
            category: str | None = None
            try:
                source = ws.text_of(script)
                checked = ws.check(script, source, doc=doc)
                policy = ws.warnings_policy(script)
                blocking = checked.blocking(policy)
                if blocking:
                    # refused before any device is started, exactly as `tapir check` reports it
                    raise _Refused(checked.render(policy))
                shown = [d for d in checked.shown(policy) if not d.is_error]
                warnings = "\n".join(d.render(checked.source, str(script)) for d in shown) or None
                trace = str(trace_dir / (script.stem + ".jsonl")) if trace_dir else None
                loaded = ws.load_document(checked.document.path) if checked.document is not None else None
                safety = safety_for(script) if safety_for is not None else Safety()
                conn = connection_for(script, source, device=spec, doc=doc, trace=trace,
                                      document=loaded.document if loaded is not None else None, safety=safety)
                if is_simulator(spec):
                    conn = replace(conn, adb_port=adb.start())
                factory = _fresh_factory(conn, made)
                result = run_script(source, factory, budgets, output=None, symbols=checked.symbols,
                                    filename=str(script), inputs=ScriptInputs(safety=safety))
                error = result.error
                printed, actions = result.printed, result.actions
            except _Refused as refused:
                error, printed, actions = None, (), 0
                rendered, category = refused.report, "check"
            except TapirError as exc:
                error, printed, actions = exc, (), 0
            if error is not None:
                rendered, category = error.render(), error.category
            stats = made[0].stats if made else None
            outcome = TestResult(
                script=str(script), ok=rendered is None, seconds=round(time.monotonic() - started, 3),
                error=rendered, category=category,
                printed=tuple(printed), actions=actions,
                dumps=stats.dumps if stats else 0, device_actions=stats.device_actions if stats else 0,
                warnings=warnings,
            )
            run.results.append(outcome)
            if runtimes is not None:
                runtimes.extend(made)
            if on_result is not None:
                on_result(outcome)
    return run


class _Refused(Exception):
    """A script the check refused: ``report`` is what ``tapir check`` prints for it."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


def _fresh_factory(conn: Connection, made: list[DeviceRuntime]) -> Callable[[], DeviceRuntime]:
    """The runtime factory of one test: on a real device the app is stopped first, so the test
    starts from the launch screen (the simulator is fresh anyway)."""
    from tapir.runtime.connect import connect

    def make() -> DeviceRuntime:
        rt = connect(conn)
        if not is_simulator(conn.device):
            rt.device.app_stop(conn.document.app.package)
        made.append(rt)
        return rt

    return make


def junit_xml(run: TestRun, name: str = "tapir") -> str:
    """The results as a JUnit XML report (one testcase per script)."""
    suite = ET.Element("testsuite", {
        "name": name, "tests": str(len(run.results)), "failures": str(run.failed), "errors": "0",
        "time": f"{sum(r.seconds for r in run.results):.3f}",
    })
    for r in run.results:
        case = ET.SubElement(suite, "testcase", {
            "classname": name, "name": r.script, "time": f"{r.seconds:.3f}",
        })
        if not r.ok:
            failure = ET.SubElement(case, "failure", {"type": r.category or "error",
                                                      "message": _first_line(r.error or "")})
            failure.text = r.error
        if r.printed:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join(r.printed)
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _first_line(text: str) -> str:
    return next(iter(_lines(text)), "")


def _lines(text: str) -> Iterator[str]:
    for line in text.splitlines():
        if line.strip():
            yield line.strip()
