"""Model-written scripts run behind the same wall as ``tapir run`` (issue 22, "the in-process paths").

The interpreter charges what a script does step by step, but not everything Python does in C: a
``dict`` built from keys whose hashes all collide takes quadratic time inside one call. The keys
here are pairs of tuples whose hashes CPython's tuple hash (xxHash) maps to one value: 146 such
tuples, computed in the script with a few hundred steps, give 21,316 colliding keys, and
``dict(zip(keys, keys))`` then runs for about 20 s on a 2-core machine whatever the time budget
says. ``tapir eval --model``, ``tapir synth``'s validation and the Python API (``Runner.run`` and
``Runner.session()``) must stop it at the deadline of the child process (timeout + grace) with the
time-budget error, while ``tapir eval`` still reads the simulated app's state in this process.

Every case runs in a subprocess under an address-space limit and a wall-clock timeout, as
``tests/test_sandbox_attacks.py`` does, so that a regression fails the test instead of taking the
machine down.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tapir.dsl.budget import Budgets
from tapir.dsl.isolation import ChildLimits, isolation_available

pytestmark = pytest.mark.skipif(not isolation_available(), reason="scripts run in a child process on Linux only")

REPO = Path(__file__).resolve().parent.parent
GiB = 1 << 30
#: The scripts' time budget; the child is stopped at ``ChildLimits.for_budgets`` (1 s + 2 s grace).
TIMEOUT_S = 1.0
#: How much later than the child's deadline a run may end (a loaded 2-core machine, closing).
SLACK_S = 3.0

#: An uncharged C loop: the tuple hash's first lane is solved for (lane2 = (C - acc1) / P2 mod
#: 2**64), so every ``(i, b)`` in ``base`` hashes alike, and so does every pair of them.
COLLIDING_DICT = textwrap.dedent("""\
    W = 2**64
    M = 2**61 - 1
    accs = [(2870177450012600261 + i * 14029467366897019727) % W for i in range(600)]
    accs = [((a * 2**31) % W + a // 2**33) * 11400714785074694791 % W for a in accs]
    lanes = [((12345 - a) * 839798700976720815) % W for a in accs]
    base = [(i, b if b < M else b - W) for i, b in enumerate(lanes) if b < M or W - M < b < W - 1]
    keys = [(p, q) for p in base[:150] for q in base[:150]]
    d = dict(zip(keys, keys))
    print(len(d))
    """)

_DRIVER = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path

    spec = json.load(sys.stdin)
    OPEN_NOTE = '$notes_screen__note_list.match("Meeting notes").tap()\\n'
    script, timeout, case = spec["script"], spec["timeout"], spec["case"]

    def answer(request):
        return "Plan: count\\nElements: $notes_screen__note_list\\n```python\\n" + script + "```"

    if case == "eval":  # the command itself, with a scripted model in place of the real one
        import tapir.codegen
        from tapir.cli import main
        from tapir.codegen.backend import ScriptedBackend

        make = tapir.codegen.script_source
        tapir.codegen.script_source = lambda spec_, **kw: make(spec_, seed=kw.get("seed", 0),
                                                               backend=ScriptedBackend(answer))
        started = time.monotonic()
        code = main(["eval", spec["suite"], "--model", "scripted", "--task", "notes/open_note", "--timeout",
                     str(timeout), "--adb-port", str(spec["adb_port"]), "--json", spec["out"], "-q"])
        task = json.loads(Path(spec["out"]).read_text())["tasks"][0]
        print(json.dumps({"code": code, "verdict": task["verdict"], "category": task["category"],
                          "error": task["error"], "run_s": task["run_s"], "failed": task["failed_checks"],
                          "elapsed": time.monotonic() - started}))
    elif case == "synth":
        from tapir.docgen.loader import load_document
        from tapir.dsl.budget import Budgets
        from tapir.synth.validate import Validator

        with Validator(load_document(spec["doc"]), "sim:notes", Budgets(timeout_s=timeout)) as v:
            v.fresh_state()
            started = time.monotonic()
            outcome = v.validate(script)
        print(json.dumps({"ok": outcome.ok, "category": outcome.category, "error": outcome.message,
                          "elapsed": time.monotonic() - started}))
    else:  # the Python API: Runner.run and a session's run, with the default options
        from tapir.docgen.loader import load_document
        from tapir.dsl.budget import Budgets
        from tapir.run import Runner, RunOptions

        options = RunOptions(budgets=Budgets(timeout_s=timeout), output=None, adb_port=spec["adb_port"])
        runner = Runner(load_document(spec["doc"]), "sim:notes", options)
        out = {}
        started = time.monotonic()
        run = runner.run(script, "attack.tap")
        out["run"] = {"category": run.error and run.error.category, "error": run.error and run.error.render(),
                      "elapsed": time.monotonic() - started}
        with runner.session() as session:
            session.open()
            started = time.monotonic()
            run = session.run(script, "attack.tap")
            again = session.run(OPEN_NOTE, "after.tap")  # the device is still there
            out["session"] = {"category": run.error and run.error.category,
                              "error": run.error and run.error.render(), "elapsed": time.monotonic() - started,
                              "after": again.error and again.error.render(),
                              "screen": session.simulator.app_state("org.tapir.notes").current_screen}
        print(json.dumps(out))
''')


def _run_case(case: str, tmp_path: Path, adb_port: int | None = None, timeout: float = 240) -> dict[str, Any]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 * GiB, 4 * GiB))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    spec = {"case": case, "script": COLLIDING_DICT, "timeout": TIMEOUT_S, "adb_port": adb_port,
            "suite": str(REPO / "samples" / "suite"), "doc": str(REPO / "samples" / "notes" / "notes.yaml"),
            "out": str(tmp_path / "report.json")}
    try:
        proc = subprocess.run([sys.executable, "-c", _DRIVER], input=json.dumps(spec), capture_output=True,
                              text=True, timeout=timeout, preexec_fn=limit, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: the run did not end in {timeout} s")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{case}: no result (status {proc.returncode}):\n{proc.stderr[-3000:]}"
    return dict(json.loads(lines[-1]))


#: When a run must have ended: the child's wall-clock limit, plus slack.
WITHIN_S = ChildLimits.for_budgets(Budgets(timeout_s=TIMEOUT_S)).wall_seconds + SLACK_S


def _stopped_at_the_deadline(what: str, r: dict[str, Any]) -> None:
    assert r["category"] == "BudgetExceeded", f"{what}: {r['category']}: {r['error']}"
    assert "time budget exceeded" in r["error"] and "its process was stopped" in r["error"], r["error"]
    assert "Traceback" not in r["error"]


def test_tapir_eval_stops_a_model_scripts_uncharged_c_loop_at_the_deadline(tmp_path: Path, adb_port: int) -> None:
    r = _run_case("eval", tmp_path, adb_port)
    _stopped_at_the_deadline("tapir eval --model", r)
    assert r["verdict"] == "error" and r["code"] == 0, r
    assert r["run_s"] < WITHIN_S, f"the script ran {r['run_s']:.1f} s (its child is stopped after {WITHIN_S} s)"
    # the task's checks read the simulated app (in this process) after the child was stopped
    assert r["failed"] and not any("could not be read" in f for f in r["failed"]), r["failed"]


def test_synth_validation_stops_a_sampled_scripts_uncharged_c_loop_at_the_deadline(tmp_path: Path) -> None:
    r = _run_case("synth", tmp_path)
    assert r["ok"] is False and r["category"] == "budget", r
    assert "time budget exceeded" in r["error"] and "its process was stopped" in r["error"], r["error"]
    assert r["elapsed"] < WITHIN_S, f"validation took {r['elapsed']:.1f} s (at most {WITHIN_S} s)"


def test_the_runner_and_its_sessions_stop_an_uncharged_c_loop_by_default(tmp_path: Path, adb_port: int) -> None:
    r = _run_case("api", tmp_path, adb_port)
    for what in ("run", "session"):
        _stopped_at_the_deadline(f"Runner {what}", r[what])
    assert r["run"]["elapsed"] < WITHIN_S + 2.0, r["run"]  # (a simulator starts in the child first)
    session = r["session"]
    assert session["elapsed"] < WITHIN_S + 2.0, session  # (both scripts: the second is quick)
    # the session's device outlived the child that was stopped: the next script and the app's state
    assert session["after"] is None and session["screen"] == "note", session
