"""``tapir synth`` on a replayed DroidTask recording, and its pairs as examples for ``tapir eval
--model`` (issue 21): walks the recording cannot follow are rejected, the pairs carry their
action log, the suite's tasks (and near-copies) never become pairs nor examples.

The DroidTask tests need the shared data (``../shared/upstream/droidtask``) and skip without it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tapir.cli import main
from tapir.codegen import language as L
from tapir.codegen.backend import ScriptedBackend
from tapir.codegen.examples import ExampleStore, example_files, load_examples, near_duplicate
from tapir.codegen.source import script_source
from tapir.eval import load_suite, run_suite
from tapir.eval.sources import OracleSource
from tapir.synth import SynthApp, SynthConfig, Validator, synthesize

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "samples" / "suite"
NOTES = ROOT / "samples" / "notes" / "notes.yaml"
DROIDTASK = ROOT.parent / "shared" / "upstream" / "droidtask"
needs_droidtask = pytest.mark.skipif(not (DROIDTASK / "tasks.json").is_file(),
                                     reason="the shared DroidTask data is not here")


def _replay(app: str) -> tuple[Any, str]:
    from tapir.eval.droidtask import document_for
    from tapir.sim.replay import ReplayApp

    folder = (DROIDTASK / "apps" / app).resolve()
    document, _, _ = document_for(folder, ReplayApp(folder).package)
    return document, f"sim:{folder}"


def _record(app: str, task: str, script: str) -> dict[str, Any]:
    return {"messages": [], "meta": {"app": app, "task": task, "script": script}}


# -- validation on a replay ----------------------------------------------------------------------


@needs_droidtask
def test_a_replay_keeps_what_the_recording_follows_and_rejects_what_it_cannot() -> None:
    document, device = _replay("clock")
    with Validator(document, device, isolation="inline") as v:
        assert v.replay
        followed = v.validate('$main_screen__tab_navigation_bar.match("Stopwatch").tap()\n')
        assert followed.ok, followed.message
        assert followed.actions == ("tap: stopwatch",)
        assert len(followed.checks) == 1 and followed.checks[0].startswith("app.current_state == ")
        assert v.recheck('$main_screen__tab_navigation_bar.match("Stopwatch").tap()\n', followed.checks) == []
        assert v.recheck("", followed.checks) != []  # the start screen is not where the walk ends
        # DroidBot never tapped this divider: the recording has no transition for it
        unrecorded = v.validate('$settings_screen__settings_dividers.match("COLOR CUSTOMIZATION").tap()\n')
        assert unrecorded.category == "not-recorded" and unrecorded.line == 0, unrecorded
        nothing = v.validate("")
        assert nothing.category == "effect-not-confirmed"


@needs_droidtask
def test_synthesis_on_a_replay_gives_pairs_with_action_logs_and_never_a_held_out_text() -> None:
    document, device = _replay("applauncher")
    config = SynthConfig(count=3, seed=2, max_complexity=2, in_process=True)
    run = synthesize([SynthApp("applauncher/doc.json", device, document)], config)
    assert len(run.pairs) == 3
    assert all(p.actions and p.checks[0].startswith("app.current_state") for p in run.pairs)
    card = run.card()
    assert card["candidates"] == 3 + card["rejected_total"] + card["duplicates"] + card["held_out"]
    assert set(card["rejected"]) <= {"not-recorded", "navigation", "grounding", "action", "runtime", "budget",
                                     "effect-not-confirmed", "check-not-reproduced"}
    # the same seed, with the first pair's text (reworded) held out as a suite task: never a pair
    held = run.pairs[0].task.upper().rstrip(".")
    again = synthesize([SynthApp("applauncher/doc.json", device, document, (held,))], config)
    assert again.held_out >= 1 and again.card()["held_out"] == again.held_out
    assert not any(near_duplicate(p.task, held) for p in again.pairs)


@needs_droidtask
def test_the_cli_synthesises_for_a_droidtask_app_and_eval_reads_the_pool(tmp_path: Path, capsys) -> None:
    out = tmp_path / "pool" / "applauncher.jsonl"
    code = main(["synth", "--droidtask", str(DROIDTASK), "--app", "applauncher", "-o", str(out), "--count", "2",
                 "--max-complexity", "2", "--in-process"])
    assert code == 0, capsys.readouterr()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2 and all(r["meta"]["app"] == "applauncher" and r["meta"]["actions"] for r in lines)
    card = json.loads((tmp_path / "pool" / "applauncher.card.json").read_text())
    assert card["pairs"] == 2 and card["apps"] == {"applauncher": str(DROIDTASK / "apps/applauncher/doc.json")}
    # the pool folder (cards beside the pairs) is an examples source of tapir eval --model
    from tapir.eval.droidtask import load_droidtask_suite

    suite = load_droidtask_suite(DROIDTASK / "tasks.json", ["applauncher"])
    source = script_source("scripted", backend=ScriptedBackend(["x"]), example_files=[tmp_path / "pool"],
                           retrieval="tf-idf")
    spec = suite.apps["applauncher"]
    store = source.examples_for(spec.document, spec.document_path)
    assert store is not None and sorted(e.task for e in store.examples) == sorted(r["meta"]["task"] for r in lines)
    assert main(["synth", "--droidtask", str(DROIDTASK), "--app", "nosuchapp", "-o", str(out)]) == 2
    assert "no app nosuchapp" in capsys.readouterr().err


@needs_droidtask
def test_a_droidtask_task_copied_into_the_pool_is_never_an_example(tmp_path: Path) -> None:
    from tapir.eval.droidtask import load_droidtask_suite

    suite = load_droidtask_suite(DROIDTASK / "tasks.json", ["applauncher"])
    task = suite.tasks[0]
    pool = tmp_path / "applauncher.jsonl"
    copies = [_record("applauncher", task.text, task.reference or ""),
              _record("applauncher", task.text.lower().rstrip(".") + "!", task.reference or ""),
              _record("applauncher", "Open the settings of the launcher", "$main_screen__more_options.tap()\n")]
    pool.write_text("".join(json.dumps(r) + "\n" for r in copies))
    source = script_source("scripted", backend=ScriptedBackend(["x"]), example_files=[pool], retrieval="tf-idf")
    spec = suite.apps["applauncher"]
    before = ExampleStore(load_examples(pool))
    assert sum(near_duplicate(e.task, task.text) for e in before.examples) == 2  # the copies are in the file...
    source.hold_out([t.text for t in suite.tasks])
    store = source.examples_for(spec.document, spec.document_path)
    assert store is not None
    assert not any(near_duplicate(e.task, task.text) for e in store.examples)  # ...never in the pool


# -- the example pool (no shared data) -----------------------------------------------------------


def test_a_pool_of_several_apps_gives_each_document_its_own_app_s_pairs(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    groceries = _record("notes", "Open the note Groceries", '$notes_screen__note_list.match("Groceries").tap()\n')
    (pool / "notes.jsonl").write_text(json.dumps(groceries) + "\n")
    # a pair of another app whose script happens to check against the notes document too
    (pool / "music.jsonl").write_text(json.dumps(_record("music", "Open the notes list",
                                                         "$notes_screen__note_list[0].tap()\n")) + "\n")
    (pool / "notes.card.json").write_text("{}")
    assert [f.name for f in example_files([pool])] == ["music.jsonl", "notes.jsonl"]
    doc = L.load_document(NOTES)
    store = ExampleStore.for_document(NOTES, L.symbols(doc), extra=[pool], app=doc.app.name)
    from_pool = [e.task for e in store.examples if Path(e.source).parent == pool]
    assert from_pool == ["Open the note Groceries"]
    assert len(store.examples) > 1  # the hand-written examples beside the document name no app: kept
    unfiltered = ExampleStore.for_document(NOTES, L.symbols(doc), extra=[pool])
    assert "Open the notes list" in [e.task for e in unfiltered.examples]


class _HoldingOracle(OracleSource):
    def __init__(self) -> None:
        self.held: list[str] = []

    def hold_out(self, tasks: list[str]) -> None:
        self.held += tasks


def test_a_run_of_part_of_a_suite_holds_out_every_task_of_the_suite() -> None:
    suite = load_suite(SUITE)
    part = suite.select(ids=["notes/add_item"])
    assert len(part.tasks) == 1 and len(part.unselected) == len(suite.tasks) - 1
    source = _HoldingOracle()
    run_suite(part, source)
    assert sorted(source.held) == sorted(t.text for t in suite.tasks)
