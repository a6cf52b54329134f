"""What the guards cost per step, measured side by side with the same runs unguarded, in one
process; prints JSON (``docs/safety.md``).

    python bench/guard_overhead.py [--rounds 5] [--apps notes,music,clock,contacts,weather]
                                   [--repeat 200] [--clock cpu|wall]

* ``steps``: the sample scripts of ``--apps`` (``samples/<app>/*.tap``) run on a fresh simulator
  behind a real adb server, once **guarded** (as ``tapir run`` runs them: confinement before each
  call and along navigation, the sensitive-action gate on every tap, secrets checked and the
  trace written through ``MaskedTrace``, with a secret handed out so that masking does real
  work) and once on the **floor**: the same runtime with every guard replaced by a no-op and the
  trace written unmasked. Each run is timed from the first call to the end (the simulator's
  start is outside the timer); the two sides alternate, the order flipping every round, so that
  load on the machine falls on both. Per script the best of ``--rounds`` is kept; reported: time
  per UI action (``ms_per_action``) of both sides and the ratio, per app and overall (sums).
  ``--clock cpu`` (the default) is this process's CPU time, the simulated device's threads
  included and the adb server (another process) not: other processes' load does not count on a
  shared machine; ``wall`` is wall-clock time, adb round trips included.
* ``masking``: ``Redactor.mask_value`` on the records of those runs, with no secret and with a
  56-character secret handed out, beside JSON-encoding the same records (what a trace file costs
  per record anyway); microseconds per record, best of ``--repeat`` passes.
* ``sensitive_gate``: ``SensitiveGate.reason`` on every clickable node of the Notes screens a
  delete taps on, beside parsing the same dumps (every action is followed by at least one parse).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SECRET = "hunter2-Zebra-quartz-9f3c1d7a-long-enough-to-be-clipped"
#: What the sample scripts may do (a few delete, clear or call): the gate still classifies every tap.
ALLOW = ("sensitive", "secrets")


@contextmanager
def unguarded() -> Iterator[None]:
    """Every guard a no-op, and the trace unmasked: the floor the guards add to."""
    from tapir.runtime import session
    from tapir.runtime.guards import Confinement, Guards, SensitiveGate

    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    patch(session, "MaskedTrace", lambda inner, masker: inner)
    patch(Confinement, "ensure", lambda self, c, span: None)
    patch(Confinement, "during_navigation", lambda self, obs, span: None)
    patch(SensitiveGate, "check", lambda self, *args, **kwargs: None)
    patch(Guards, "check_secret", lambda self, text, t, shown, span: None)
    patch(Guards, "mask", lambda self, text: text)
    patch(Guards, "mask_value", lambda self, value: value)
    patch(Guards, "mask_error", lambda self, exc: None)
    try:
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


def _scripts(apps: list[str]) -> list[Any]:
    from tapir.runner.execute import PreparedScript
    from tapir.runner.suite import prepare_script
    from tapir.service import Workspace

    ws = Workspace()
    out = []
    for app in apps:
        for path in sorted((REPO / "samples" / app).glob("*.tap")):
            prepared = prepare_script(ws, path)
            if isinstance(prepared, PreparedScript):
                out.append(prepared)
    return out


def _run_once(script: Any, adb_port: int, clock: Callable[[], float]) -> tuple[float, int, list[dict[str, Any]]]:
    """(seconds from the first call to the end, UI actions, trace records) of one fresh run."""
    from tapir.core.safety import Safety
    from tapir.core.secrets import SecretStore
    from tapir.dsl.inputs import ScriptInputs
    from tapir.dsl.interpreter import run_script
    from tapir.runtime.borrowed import Borrowed
    from tapir.runtime.connect import Connection, connect
    from tapir.runtime.trace import JsonLinesTrace

    safety = Safety.from_options(allow=ALLOW)
    safety.secrets = SecretStore({"BENCH": SECRET})
    safety.secrets.get("BENCH", None)  # handed out: the redactor masks it from now on
    buffer = io.StringIO()
    runtime = connect(Connection(device="sim", document=script.document, adb_port=adb_port, source=script.source,
                                 script=script.name, trace_sink=JsonLinesTrace(buffer), safety=safety))
    try:
        started = clock()
        result = run_script(script.source, lambda: Borrowed(runtime), output=None, symbols=script.symbols,
                            filename=script.name, inputs=ScriptInputs(safety=safety))
        seconds = clock() - started
    finally:
        runtime.close()
    if result.error is not None:
        raise SystemExit(f"{script.name} failed: {result.error.render()}")
    return seconds, result.actions, [json.loads(line) for line in buffer.getvalue().splitlines() if line]


def _steps(scripts: list[Any], rounds: int, clock: Callable[[], float], adb_port: int
           ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    best: dict[tuple[str, str], float] = {}
    actions: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    for r in range(rounds):
        for script in scripts:
            for side in (("guarded", "floor") if r % 2 == 0 else ("floor", "guarded")):
                if side == "floor":
                    with unguarded():
                        seconds, n, _ = _run_once(script, adb_port, clock)
                else:
                    seconds, n, trace = _run_once(script, adb_port, clock)
                    if r == 0:
                        records += trace
                key = (script.name, side)
                best[key] = min(best.get(key, float("inf")), seconds)
                actions[script.name] = n
    sums: dict[str, dict[str, float]] = {}
    for script in scripts:
        app = Path(script.name).parent.name
        row = sums.setdefault(app, {"scripts": 0, "actions": 0, "guarded_s": 0.0, "floor_s": 0.0})
        row["scripts"] += 1
        row["actions"] += actions[script.name]
        row["guarded_s"] += best[(script.name, "guarded")]
        row["floor_s"] += best[(script.name, "floor")]
    sums["total"] = {k: sum(row[k] for row in sums.values()) for k in ("scripts", "actions", "guarded_s", "floor_s")}
    shown: dict[str, dict[str, Any]] = {}
    for app, row in sums.items():
        n = max(1, int(row["actions"]))
        shown[app] = {
            "scripts": int(row["scripts"]), "actions": int(row["actions"]),
            "guarded_s": round(row["guarded_s"], 4), "floor_s": round(row["floor_s"], 4),
            "guarded_ms_per_action": round(row["guarded_s"] / n * 1e3, 3),
            "floor_ms_per_action": round(row["floor_s"] / n * 1e3, 3),
            "ratio": round(row["guarded_s"] / row["floor_s"], 3) if row["floor_s"] else None,
        }
    total = shown.pop("total")
    per_app = shown
    return {"per_app": per_app, "total": total}, records


def _per_item(fn: Callable[[Any], Any], items: list[Any], repeat: int) -> float:
    """Microseconds per item, the best of ``repeat`` passes."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - started)
    return round(best / max(1, len(items)) * 1e6, 3)


def _dumps() -> list[tuple[str, str]]:
    """(screen name, dump) of the Notes screens a delete taps on."""
    from tapir.sim.apps import get_app

    out = []
    for name, bring in (("notes_screen", lambda a: None), ("note_screen", lambda a: a.open("note", note=2)),
                        ("delete_note_dialog", lambda a: a.open("delete_note", note=2)),
                        ("note_options_menu", lambda a: a.open("note_options", note=2))):
        app: Any = get_app("notes")
        app.reset()
        bring(app)
        out.append((name, app.dump_xml()))
    return out


def _masking(records: list[dict[str, Any]], repeat: int) -> dict[str, Any]:
    from tapir.core.secrets import Redactor

    empty, loaded = Redactor(), Redactor([SECRET])
    out: dict[str, Any] = {
        "records": len(records),
        "encode_us": _per_item(lambda r: json.dumps(r, ensure_ascii=False, separators=(",", ":")), records, repeat),
        "mask_no_secret_us": _per_item(empty.mask_value, records, repeat),
        "mask_one_secret_us": _per_item(loaded.mask_value, records, repeat),
    }
    out["ratio_to_encoding"] = round(out["mask_one_secret_us"] / out["encode_us"], 3) if out["encode_us"] else None
    return out


def _gate(repeat: int) -> dict[str, Any]:
    from tapir.core.safety import Safety
    from tapir.docgen.loader import load_document
    from tapir.hierarchy import parse_uiautomator
    from tapir.runtime.guards import SensitiveGate
    from tapir.runtime.settle import Observation

    doc = load_document(REPO / "samples" / "notes" / "notes.yaml")
    gate = SensitiveGate(doc, Safety(), lambda r: None, lambda: 0.0)
    dumps = _dumps()
    cases = []
    for screen, xml in dumps:
        tree = parse_uiautomator(xml)
        obs = Observation(tree, screen, "d", "org.tapir.notes", 1)
        cases += [(node, obs) for node in tree.nodes if node.clickable]
    out: dict[str, Any] = {
        "taps": len(cases),
        "reason_us": _per_item(lambda c: gate.reason(c[0], c[1], element=None, item=False), cases, repeat),
        "parse_dump_us": _per_item(parse_uiautomator, [xml for _, xml in dumps], repeat),
    }
    out["ratio_to_one_dump_parse"] = round(out["reason_us"] / out["parse_dump_us"], 3) if out["parse_dump_us"] else None
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="guarded/floor runs of each script; the best is kept")
    parser.add_argument("--apps", default="notes,music,clock,contacts,weather",
                        help="sample apps whose scripts run (comma-separated)")
    parser.add_argument("--repeat", type=int, default=200, help="passes of the micro-benchmarks; the best is kept")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="CPU time of this process (default) or wall-clock time")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.repeat < 1:
        parser.error("--rounds and --repeat must be at least 1")
    os.environ["ADBUTILS_ADB_PATH"] = "/bin/false"  # never start a stray adb server on 5037
    from tapir.runtime.heap import settle
    from tapir.sim.launch import free_port, kill_adb_server, start_adb_server

    scripts = _scripts([a.strip() for a in args.apps.split(",") if a.strip()])
    if not scripts:
        parser.error(f"no runnable script under samples/{{{args.apps}}}/")
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    port = free_port()
    start_adb_server(port)
    try:
        settle()
        steps, records = _steps(scripts, args.rounds, clock, port)
    finally:
        kill_adb_server(port)
    report = {
        "clock": args.clock, "rounds": args.rounds,
        "steps": steps,
        "masking": _masking(records, args.repeat),
        "sensitive_gate": _gate(args.repeat),
    }
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
