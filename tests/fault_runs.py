"""Scripts run on the simulator through real adb, with faults armed on the device.

``run_with_faults`` runs a script as ``tapir run --device sim:APP --trace FILE`` does (the
document loaded, a simulator started by ``connect`` behind a private adb server), and hands the
fresh ``RunningSim`` to ``arm`` before the script's first UI call, so that a test can break the
device in any way ``tapir.sim.faults`` offers::

    out = run_with_faults(tmp_path, SCRIPT, lambda sim: setattr(sim.device.faults, "dump_errors", 2))
    assert out.result.ok and out.trace_complete()

``FaultRun.records`` is the trace read back strictly: every line must be a JSON object, the
first a ``session`` line and the last an ``end`` line (``trace_complete``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tapir.docgen.loader import load_document
from tapir.dsl.budget import Budgets
from tapir.dsl.interpreter import RunResult, run_script
from tapir.runtime.connect import Connection, connect
from tapir.runtime.session import DeviceRuntime, SessionConfig
from tapir.sim.launch import RunningSim

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"


@dataclass
class FaultRun:
    result: RunResult
    runtime: DeviceRuntime | None
    sim: RunningSim | None
    trace_path: Path
    seconds: float

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every trace line, parsed strictly (a torn or invalid line fails the test)."""
        lines = self.trace_path.read_text(encoding="utf-8").splitlines()
        out = []
        for i, line in enumerate(lines, 1):
            record = json.loads(line)  # raises on a torn line
            assert isinstance(record, dict), f"trace line {i} is not an object: {line[:80]}"
            out.append(record)
        return out

    def trace_complete(self) -> bool:
        records = self.records
        return bool(records) and records[0]["event"] == "session" and records[-1]["event"] == "end"

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("event") == kind]

    @property
    def error_text(self) -> str:
        error = self.result.error
        return "" if error is None else f"{error.message}\n{error.hint or ''}"


def run_with_faults(tmp: Path, source: str, arm: Callable[[RunningSim], None] | None = None, *,
                    app: str = "music", doc: Path | None = None, config: SessionConfig | None = None,
                    budgets: Budgets | None = None) -> FaultRun:
    """Run ``source`` (a script against ``samples/APP/APP.yaml`` unless ``doc`` says otherwise)
    on a fresh simulator; ``arm`` gets the simulator before the first UI call."""
    script = tmp / "script.tap"
    script.write_text(source, encoding="utf-8")
    trace = tmp / "trace.jsonl"
    document = doc or SAMPLES / app / f"{app}.yaml"
    conn = Connection(device=f"sim:{app}", document=load_document(document), trace_path=str(trace), source=source,
                      script=str(script), config=config)
    made: list[DeviceRuntime] = []

    def factory() -> DeviceRuntime:
        rt = connect(conn)
        made.append(rt)
        if arm is not None:
            arm(rt.simulator.handle)  # type: ignore[union-attr]  # the running simulator itself
        return rt

    started = time.monotonic()
    result = run_script(source, factory, budgets, output=None, filename=str(script))
    seconds = time.monotonic() - started
    rt = made[0] if made else None
    sim = rt.simulator.handle if rt is not None and rt.simulator is not None else None  # type: ignore[attr-defined]
    return FaultRun(result, rt, sim, trace, seconds)
