"""``tapir eval --model``: the code generator as the harness's script source.

With a scripted backend (answers fixed in advance, no model) the whole chain runs on simulated
apps: the command, ``model_source`` and its adapter, ``tapir.codegen.script_source``, the repair
prompt built from the harness's rendered error, and the report's first-attempt and after-repair
figures per task and per level. A last test runs the real SmolLM2-135M on two tasks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import tapir.codegen
from tapir.codegen.backend import Request, ScriptedBackend
from tapir.codegen.source import ModelSource, SourceAnswer, SourceTokens, repair_note, script_source
from tapir.core.errors import UsageError
from tapir.eval import EvalConfig, Tokens, load_suite, report_json, report_markdown, run_suite
from tapir.eval.sources import AdaptedSource, Generation, as_generation, can_repair, model_source

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "samples" / "suite"

WRONG_SONG = '$songs_screen__song_list.match("No such song at all").tap()\n'


def _answer(script: str) -> str:
    # the plan names the script's own elements (a plan naming others is sent back by the post-run checks)
    elements = ", ".join(dict.fromkeys(re.findall(r"\$\w+", script))) or "$songs_screen__song_list"
    return f"Plan: do it\nElements: {elements}\n```python\n{script}```"


def _scripted(suite_tasks: dict[str, str]) -> ScriptedBackend:
    """Play "Lanterns" goes wrong first and is fixed by its repair; other tasks get their reference."""

    def answer(request: Request) -> str:
        task = request.user_rest.split("Your task is: ", 1)[1].splitlines()[0]
        if task == 'Play the song "Lanterns".' and "Your previous script" not in request.user_rest:
            return _answer(WRONG_SONG)
        return _answer(suite_tasks[task])

    return ScriptedBackend(answer)


# -- without a device ------------------------------------------------------------------------------


def test_a_rendered_error_becomes_the_repair_prompts_category_message_and_line() -> None:
    script = "x = 1\n$songs_screen__song_list.match(\"Nope\").tap()\n"
    note = repair_note(script, "play.tap:2:1: ActionError: no item of $songs_screen__song_list matches 'Nope'\n"
                               "  $songs_screen__song_list.match(\"Nope\").tap()\n  ^")
    assert (note.category, note.line) == ("match or index failure", 2)
    assert note.message == "no item of $songs_screen__song_list matches 'Nope'"
    assert note.source_line == script.splitlines()[1] and note.script == script
    assert repair_note(script, "t.tap:1:1: ElementNotFound: gone").category == "element not on the screen"
    assert repair_note(script, "ScriptError: name 'y' is not defined").category == "script logic"
    plain = repair_note(script, "something odd happened")
    assert (plain.category, plain.line, plain.message) == ("script logic", None, "something odd happened")
    # the render's hint goes with the message: it says what to write instead
    hinted = repair_note(script, "play.tap:2:1: ActionError: no item matches 'Nope'\n  $x\n  ^\n"
                                 "  hint: type a new item instead")
    assert hinted.message == "no item matches 'Nope' (type a new item instead)"


def test_codegen_answers_become_generations_at_the_boundary() -> None:
    answer = SourceAnswer("back()\n", SourceTokens(100, 7, 12), 1.5, None, {"cache": "memory"})
    gen = as_generation(answer)
    assert gen == Generation("back()\n", Tokens(100, 7, 12), 1.5, None, {"cache": "memory"})
    assert as_generation("back()\n") == Generation("back()\n")
    assert as_generation(Generation(None, error="x")).error == "x"
    with pytest.raises(TypeError):
        as_generation(42)


def test_the_model_source_is_a_script_source_with_repair_and_refuses_a_bad_spec(
        monkeypatch: pytest.MonkeyPatch) -> None:
    source = model_source_with(monkeypatch, ScriptedBackend(["x"]))
    assert isinstance(source, AdaptedSource) and can_repair(source)
    settings = source.settings()
    assert settings["model"] == "scripted" and settings["prompt_version"] and settings["temperature"] == 0.0
    with pytest.raises(UsageError, match="neither a GGUF file nor a model name"):
        script_source("no-such-model")

    class NotASource:
        name = "x"

    monkeypatch.setattr(tapir.codegen, "script_source", lambda spec, seed=0: NotASource())
    with pytest.raises(UsageError, match="did not give a script source"):
        model_source("x")


def model_source_with(monkeypatch: pytest.MonkeyPatch, backend: ScriptedBackend) -> Any:
    made: list[ModelSource] = []

    def factory(spec: str, *, seed: int = 0, **options: Any) -> ModelSource:
        made.append(script_source(spec, seed=seed, backend=backend))
        return made[-1]

    monkeypatch.setattr(tapir.codegen, "script_source", factory)
    source = model_source("scripted", seed=3)
    assert len(made) == 1 and made[0].config.seed == 3
    return source


def test_groups_count_first_scripts_and_repaired_ones_apart() -> None:
    from tapir.eval.report import summarize

    tasks = [
        {"id": "a/1", "app": "a", "difficulty": "easy", "verdict": "pass", "finished": True, "actions": 1,
         "wall_s": 1.0, "attempts": 1, "first_attempt_ok": True},
        {"id": "a/2", "app": "a", "difficulty": "easy", "verdict": "pass", "finished": True, "actions": 1,
         "wall_s": 1.0, "attempts": 3, "first_attempt_ok": False},
        {"id": "a/3", "app": "a", "difficulty": "easy", "verdict": "error", "finished": False, "actions": 0,
         "wall_s": 1.0, "attempts": 3, "first_attempt_ok": False},
        # a report written before first_attempt_ok: a pass with one script counts as a first-script pass
        {"id": "a/4", "app": "a", "difficulty": "easy", "verdict": "pass", "finished": True, "actions": 1,
         "wall_s": 1.0, "attempts": 1},
    ]
    s = summarize(tasks)
    assert (s["passed"], s["success_rate"]) == (3, 0.75)
    assert (s["passed_first_attempt"], s["success_rate_without_repair"]) == (2, 0.5)
    assert (s["repaired"], s["repairs_used"]) == (1, 4)


# -- on simulated apps -----------------------------------------------------------------------------


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_one_run_reports_success_with_and_without_repair_per_task_and_level(
        monkeypatch: pytest.MonkeyPatch, adb_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    suite = load_suite(SUITE).select(ids=["music/play_song", "music/sort_by_duration", "music/create_playlist"])
    backend = _scripted({t.text: t.reference or "" for t in suite.tasks})
    made: list[ModelSource] = []

    def factory(spec: str, *, seed: int = 0, **options: Any) -> ModelSource:
        made.append(script_source(spec, seed=seed, backend=backend))
        return made[-1]

    monkeypatch.setattr(tapir.codegen, "script_source", factory)
    report, markdown = tmp_path / "model.json", tmp_path / "model.md"
    code = main(["eval", str(SUITE), "--model", "scripted", "--repairs", "2", "--task", "music/play_song",
                 "--task", "music/sort_by_duration", "--task", "music/create_playlist",
                 "--json", str(report), "--markdown", str(markdown)])
    out = capsys.readouterr().out
    data = json.loads(report.read_text(encoding="utf-8"))
    tasks = {t["id"]: t for t in data["tasks"]}
    assert code == 0 and data["success_rate"] == 1.0

    fixed = tasks["music/play_song"]
    assert fixed["verdict"] == "pass" and fixed["first_attempt_ok"] is False and fixed["repairs_used"] == 1
    assert fixed["attempts"] == 2
    assert fixed["attempt_errors"][0].startswith("music/play_song (script 1):1:1: ActionError")
    assert "No such song at all" in fixed["attempt_errors"][0]
    one = backend.requests[0]
    both = [r for r in backend.requests if "Lanterns" in r.user_rest]
    assert len(both) == 2 and "Your previous script" in both[1].user_rest
    assert "It failed at line 1: match or index failure" in both[1].user_rest
    assert "The failing line: " + WRONG_SONG.strip() in both[1].user_rest
    # tokens and latency of both model calls are the task's
    estimate = sum(backend.count_tokens(r.system + r.user_prefix + r.user_rest) for r in both)
    assert fixed["tokens"]["computed"] == estimate and fixed["tokens"]["generated"] > 0
    assert fixed["model_latency_s"] is not None
    for ident in ("music/sort_by_duration", "music/create_playlist"):
        assert tasks[ident]["first_attempt_ok"] is True and tasks[ident]["repairs_used"] == 0

    assert data["success_rate_without_repair"] == round(2 / 3, 4) and data["passed_first_attempt"] == 2
    easy, medium = data["by_difficulty"]["easy"], data["by_difficulty"]["medium"]
    assert (easy["success_rate"], easy["success_rate_without_repair"], easy["repaired"]) == (1.0, 0.5, 1)
    assert (medium["success_rate"], medium["success_rate_without_repair"]) == (1.0, 1.0)
    assert data["source"]["settings"]["model"] == "scripted" and data["settings"]["repairs"] == 2
    # one source, one generator per document, for the whole run
    assert len(made) == 1 and len(made[0]._generators) == 1
    assert one.user_prefix == both[1].user_prefix  # the prefix (the cached part) is the same for every task

    assert "without repair 66.7% (2/3)" in out and "no repair" in out
    md = markdown.read_text(encoding="utf-8")
    assert "| easy | 2 | 2 | 100.0% | 50.0% (1) |" in md
    assert "| music/play_song | easy | pass | 1 |" in md
    assert report_markdown(data) == md


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_source_that_cannot_fix_a_task_uses_every_repair_and_counts_no_first_attempt(adb_port: int) -> None:
    suite = load_suite(SUITE).select(ids=["music/play_song"])
    backend = ScriptedBackend(lambda request: _answer(WRONG_SONG))
    run = run_suite(suite, AdaptedSource(script_source("scripted", backend=backend)),
                    EvalConfig(repairs=2, adb_port=adb_port))
    [result] = run.results
    assert result.verdict == "error" and result.attempts == 3 and result.repairs_used == 2
    assert result.first_attempt_ok is False and len(result.attempt_errors) == 2
    assert len(backend.requests) == 3 + 2 * 2  # each repair repeated the script and was asked twice more
    data = report_json(run)
    assert data["success_rate"] == data["success_rate_without_repair"] == 0.0 and data["repairs_used"] == 2
    assert result.events == ("resampled:2", "resampled:2") and data["resampled"] == {"tasks": 1, "fixed": 0}


# -- a real model ----------------------------------------------------------------------------------


@pytest.mark.adb
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_smollm2_runs_two_tasks_with_one_model_and_reports_its_cost(
        adb_port: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    from tapir.codegen.models import find_model

    if find_model("smollm2-135m") is None:
        pytest.skip("SmolLM2 is not installed (tapir model install smollm2-135m)")
    monkeypatch.setenv("TAPIR_CACHE_DIR", str(tmp_path))
    source = model_source("smollm2-135m")
    backend = source.inner.backend
    suite = load_suite(SUITE).select(ids=["music/play_song", "music/sort_by_duration"])
    try:
        run = run_suite(suite, source, EvalConfig(repairs=1, adb_port=adb_port))
        model = backend._llm
    finally:
        source.close()
    first, second = run.results
    for r in run.results:
        assert r.verdict in ("pass", "fail", "error") and r.tokens is not None and r.tokens.generated > 0
        assert r.model_latency_s is not None and r.model_latency_s > 0 and 1 <= r.attempts <= 2
        assert r.first_attempt_ok == (r.success and r.attempts == 1)
    # the document prefix is computed once: the second task (and any repair) reuses it
    assert first.tokens is not None and second.tokens is not None
    assert second.tokens.cached >= 1000 and second.tokens.computed < second.tokens.cached
    assert model is not None and any(tmp_path.rglob("*.kv"))
    data = report_json(run)
    assert data["source"]["settings"]["model_file"].lower().startswith("smollm2")
    assert 0 <= data["success_rate_without_repair"] <= data["success_rate"] <= 1
