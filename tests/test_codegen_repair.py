"""The repair loop with a scripted model: static check, run on the simulator, categorized failures
with the line and the screen going back to the model, and the round and token budgets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tapir.codegen import language as L
from tapir.codegen.backend import Request, ScriptedBackend
from tapir.codegen.device import DeviceSession
from tapir.codegen.generate import Budget, GenConfig, Generator, SolveResult, categorize
from tapir.core.errors import (
    ActionError,
    BudgetExceeded,
    DeviceError,
    ElementNotFound,
    ScreenNotReached,
    ScriptError,
    SensitiveActionRefused,
    TapirSyntaxError,
    UnknownElement,
)

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _answer(script: str, plan: str = "do it") -> str:
    return f"Plan: {plan}\nElements: $songs_screen__song_list\n```python\n{script}```"


@pytest.fixture(scope="module")
def music() -> L.AppDocument:
    return L.load_document(SAMPLES / "music" / "music.yaml")


def test_a_static_error_goes_back_with_its_category_and_line(music: L.AppDocument) -> None:
    backend = ScriptedBackend([
        _answer('$songs_screen__song_list.match("Lanterns").tap()\n$songs_screen__song_list.set_text("x")\n'),
        _answer('$songs_screen__song_list.match("Lanterns").tap()\n'),
    ])
    result = Generator(music, backend).solve("Play Lanterns")
    assert result.ok and result.stopped == "ok" and len(result.rounds) == 2
    first = result.rounds[0].failure
    assert first is not None and (first.category, first.stage, first.line) == ("illegal-action", "check", 2)
    repair = backend.requests[1].user_rest
    assert "It failed at line 2: illegal action: set_text() is not possible on" in repair
    assert 'The failing line: $songs_screen__song_list.set_text("x")' in repair
    assert backend.requests[0].user_prefix == backend.requests[1].user_prefix  # the cacheable part is unchanged
    assert any(d.startswith("-$songs_screen__song_list.set_text") for d in result.rounds[1].diff)
    assert "changed +0/-1 lines" in result.rounds[1].summary()


@pytest.mark.parametrize("resamples", [2, 0])
def test_a_repair_that_repeats_the_failed_script_is_asked_again_sampled(music: L.AppDocument,
                                                                       resamples: int) -> None:
    """Greedy decoding answers the same question with the same script: the repeat is asked again
    at a temperature, with the next seed, and the calls' tokens add up."""
    from dataclasses import replace

    bad = _answer('$songs_screen__song_list.match("Lanterns").tap()\n$songs_screen__song_list.set_text("x")\n')
    good = _answer('$songs_screen__song_list.match("Lanterns").tap()\n')
    backend = ScriptedBackend([bad, bad, good, good])
    config = replace(GenConfig(), resamples=resamples)
    result = Generator(music, backend, config=config).solve("Play Lanterns", budget=Budget(rounds=2))
    second = result.rounds[1].generation
    if not resamples:  # the repeat is kept, and the round is lost
        assert not result.ok and second.resampled == 0 and len(backend.requests) == 2
        return
    assert result.ok and second.resampled == 1 and second.script == '$songs_screen__song_list.match("Lanterns").tap()\n'
    asked = backend.requests[1:]
    assert [(r.temperature, r.seed) for r in asked] == [(0.0, 0), (0.7, 1)]
    assert asked[0].user_rest == asked[1].user_rest  # the same question, sampled
    one = result.rounds[0].generation.usage
    assert second.usage.generated_tokens == one.generated_tokens + backend.count_tokens(good)


def test_unknown_elements_are_caught_before_running(music: L.AppDocument) -> None:
    gen = Generator(music, ScriptedBackend([]))
    failure = gen.check("$songs_screen__song_lst.tap()\n")
    assert failure is not None and failure.category == "unknown-element" and "did you mean" in failure.message
    assert gen.check("x = \n") is not None and gen.check("x = \n").category == "syntax"  # type: ignore[union-attr]
    assert gen.check("   \n") is not None
    assert gen.check('print("ok")\n') is None


def test_the_round_budget_stops_the_loop(music: L.AppDocument) -> None:
    backend = ScriptedBackend(lambda r: _answer("$songs_screen__song_list.set_text('x')\n"))
    result = Generator(music, backend).solve("Type x", budget=Budget(rounds=3, tokens=10**6))
    assert not result.ok and result.stopped == "rounds" and len(result.rounds) == 3
    assert len(backend.requests) == 1 + 2 * (1 + GenConfig().resamples)  # each repeat asked again


def test_the_token_budget_stops_the_loop(music: L.AppDocument) -> None:
    backend = ScriptedBackend(lambda r: _answer("$songs_screen__song_list.set_text('x')\n"))
    result = Generator(music, backend).solve("Type x", budget=Budget(rounds=10, tokens=1))
    assert result.stopped == "tokens" and len(result.rounds) == 1


def test_requests_carry_the_grammar_and_the_settings(music: L.AppDocument) -> None:
    backend = ScriptedBackend([_answer("back()\n")])
    Generator(music, backend).generate("Go back")
    req: Request = backend.requests[0]
    assert req.grammar is not None and req.grammar.startswith("root ::= ")
    assert req.temperature == 0.0 and req.cache_label.startswith("music-p")


@pytest.mark.parametrize(("error", "category"), [
    (TapirSyntaxError("x"), "syntax"), (UnknownElement("x"), "unknown-element"),
    (ElementNotFound("x"), "element-not-on-screen"), (ScreenNotReached("x"), "screen-not-reached"),
    (ActionError("set_text() is not possible on a button"), "illegal-action"),
    (ActionError("no item of $a matches 'x'"), "match-index"), (ActionError("index 7 out of range"), "match-index"),
    (ScriptError("name 'x' is not defined"), "script-logic"), (BudgetExceeded("x"), "budget"),
    (DeviceError("x"), "device"), (SensitiveActionRefused("x"), "refused"),
])
def test_runtime_errors_are_categorized(error: L.TapirError, category: str) -> None:
    assert categorize(error) == category


# -- on the simulator -------------------------------------------------------------------------------



@pytest.mark.adb
def test_a_run_failure_goes_back_with_the_screen_and_the_fix_runs(music: L.AppDocument, adb_port: int) -> None:
    backend = ScriptedBackend([
        _answer('$songs_screen__song_list.match("No such song at all").tap()\n'),
        _answer('$songs_screen__song_list.match("Midnight Drive").tap()\n'),
    ])
    device = DeviceSession(SAMPLES / "music" / "music.yaml", "sim:music", adb_port=adb_port)
    result = Generator(music, backend).solve("Play Midnight Drive", device=device)
    assert result.ok and len(result.rounds) == 2 and all(r.ran for r in result.rounds)
    failure = result.rounds[0].failure
    assert failure is not None and failure.stage == "run" and failure.category == "match-index"
    assert failure.screen is not None and failure.screen.name == "songs_screen"
    assert "songs_screen__song_list" in failure.screen.elements
    # the first prompt showed the start screen; the repair showed the failure and that screen
    assert "The current screen: songs_screen, showing" in backend.requests[0].user_rest
    assert "match or index failure" in backend.requests[1].user_rest
    assert "The screen when it failed: songs_screen" in backend.requests[1].user_rest
    app = device.last_app()
    assert app is not None and app.state.now_playing is not None
    assert app.state.song(app.state.now_playing).title == "Midnight Drive" and app.state.playing


@pytest.mark.adb
def test_a_guard_refusal_stops_the_loop_for_the_user_to_allow(adb_port: int) -> None:
    """"Call Anna": the guard refuses the call, which the task asked for. Asked to repair, a model
    writes around the guard (seen with Qwen: the next script left the call out); the refusal is the
    person's to lift with --allow, so the loop stops there and keeps the script."""
    contacts = L.load_document(SAMPLES / "contacts" / "contacts.yaml")
    script = '$contacts_screen__contact_list.match("Anna Schmidt").tap()\n$contact_details_screen__call_button.tap()\n'
    backend = ScriptedBackend([_answer(script)] * 3)
    device = DeviceSession(SAMPLES / "contacts" / "contacts.yaml", "sim:contacts", adb_port=adb_port)
    result = Generator(contacts, backend).solve("Call Anna Schmidt", device=device)
    assert result.stopped == "refused" and len(result.rounds) == 1 and len(backend.requests) == 1
    failure = result.rounds[0].failure
    assert failure is not None and failure.category == "refused" and failure.line == 2
    assert "--allow call" in failure.message and result.script == script


@pytest.mark.adb
def test_isolated_runs_bring_the_failure_screen_back_from_the_child(music: L.AppDocument, adb_port: int) -> None:
    """`tapir gen --run`: generated code runs in a child process; the repair still sees the screen."""
    from tapir.dsl.isolation import isolation_available

    if not isolation_available():
        pytest.skip("scripts run in a child process on Linux only")
    backend = ScriptedBackend([
        _answer('$songs_screen__song_list.match("No such song at all").tap()\n'),
        _answer('$songs_screen__song_list.match("Midnight Drive").tap()\nprint("played")\n'),
    ])
    device = DeviceSession(SAMPLES / "music" / "music.yaml", "sim:music", adb_port=adb_port, isolated=True)
    printed: list[str] = []
    try:
        result = Generator(music, backend).solve("Play Midnight Drive", device=device, output=printed.append)
    finally:
        device.close()
    assert result.ok and len(result.rounds) == 2 and all(r.ran for r in result.rounds)
    failure = result.rounds[0].failure
    assert failure is not None and failure.stage == "run" and failure.category == "match-index"
    assert failure.screen is not None and failure.screen.name == "songs_screen"
    assert "songs_screen__song_list" in failure.screen.elements
    assert "The screen when it failed: songs_screen" in backend.requests[1].user_rest
    assert printed == ["played"]
    assert device.last_app() is None  # the simulated app lived in the child


@pytest.mark.adb
def test_a_script_without_ui_calls_leaves_the_screen_it_was_shown_to_the_next(adb_port: int) -> None:
    """In-process runs share ``screen()``'s connection (a ``Runner`` session) until a script uses it."""
    device = DeviceSession(SAMPLES / "music" / "music.yaml", "sim:music", adb_port=adb_port)
    printed: list[str] = []
    try:
        shown = device.screen()
        assert shown is not None and shown.name == "songs_screen"
        outcome = device.run('print("no device")\n', output=printed.append)
        assert outcome.ok and outcome.actions == 0 and outcome.collected is None
        assert printed == ["no device"] and device.failure_screen is None and device.last_app() is None
        outcome = device.run('$songs_screen__song_list.match("Midnight Drive").tap()\n', output=printed.append)
        assert outcome.ok and outcome.actions == 1 and printed == ["no device"]
        assert device.failure_screen is not None and outcome.collected[0] == device.failure_screen.name
        app = device.last_app()
        assert app is not None and app.state.song(app.state.now_playing).title == "Midnight Drive"
    finally:
        device.close()


# -- no silent failures: the post-run checks in the repair loop (``tapir gen --run``) ---------------------

NOTES = SAMPLES / "notes" / "notes.yaml"
_WRITE = ('$notes_screen__new_note_button.tap()\n$edit_note_screen__title_input.set_text("Call the plumber")\n'
          '$edit_note_screen__body_input.set_text("Kitchen tap drips")\n')
_SAVE = "$edit_note_screen__save_button.tap()\n"


def _note_answer(script: str) -> str:
    return f"Plan: write it and save it\nElements: $edit_note_screen__save_button\n```python\n{script}```"


@pytest.mark.adb
@pytest.mark.parametrize("postchecks", [True, False])
def test_a_run_that_finishes_without_doing_its_plan_is_repaired(adb_port: int, postchecks: bool) -> None:
    """The note is typed and never saved: the run finishes without an error; the post-run checks
    (the ones ``tapir eval --model`` runs) send it back, and the repair saves it."""
    from dataclasses import replace

    backend = ScriptedBackend([_note_answer(_WRITE), _note_answer(_WRITE + _SAVE)])
    notes = L.load_document(NOTES)
    # the model's repair is what is tested: the save a finding names is not appended for it
    gen = Generator(notes, backend, config=replace(GenConfig(), postchecks=postchecks, completions=0))
    device = DeviceSession(NOTES, "sim:notes", adb_port=adb_port)
    try:
        result = gen.solve("Write a note titled Call the plumber", device=device)
    finally:
        device.close()
    app = device.last_app()
    assert app is not None
    titles = [n.title for n in app.state.notes]
    if not postchecks:  # one round, "ok", and nothing saved: the silent failure the checks are for
        assert result.ok and len(result.rounds) == 1 and result.rounds[0].findings == ()
        assert "Call the plumber" not in titles
        return
    assert result.ok and len(result.rounds) == 2 and all(r.ran for r in result.rounds)
    first = result.rounds[0]
    assert first.failure is not None and first.failure.stage == "postcheck"
    assert first.failure.category == "post-run-check" and first.failure.check == "unused-element"
    assert [f.check for f in first.findings] == ["unused-element", "unconfirmed-input"]
    assert "postcheck failed: finished without doing the task" in first.summary()
    repair = backend.requests[1].user_rest
    assert "finished without doing the task" in repair and "never acted on $edit_note_screen__save_button" in repair
    assert result.rounds[1].failure is None and result.rounds[1].findings == ()
    assert "Call the plumber" in titles


@pytest.mark.adb
def test_a_run_one_tap_short_is_completed_without_asking_the_model(adb_port: int) -> None:
    """The note typed and never saved: the finding names the one Save, which is appended and run;
    the note is saved in one round and one model call. With ``completions=0`` the run stands as
    the model wrote it, its finding the round's failure."""
    backend = ScriptedBackend([_note_answer(_WRITE)])
    device = DeviceSession(NOTES, "sim:notes", adb_port=adb_port)
    try:
        result = Generator(L.load_document(NOTES), backend).solve("Write a note titled Call the plumber",
                                                                  device=device, budget=Budget(rounds=1))
    finally:
        device.close()
    app = device.last_app()
    assert app is not None and "Call the plumber" in [n.title for n in app.state.notes]
    assert result.ok and len(result.rounds) == 1 and len(backend.requests) == 1
    (done,) = result.rounds[0].completed
    assert done.check == "unconfirmed-input" and done.fix == _SAVE.strip()
    assert result.script == _WRITE + _SAVE and result.rounds[0].findings == ()
    assert f"completed with {_SAVE.strip()} (unconfirmed-input)" in result.rounds[0].summary()


@pytest.mark.adb
def test_a_completion_the_person_declines_leaves_the_run_that_finished(adb_port: int) -> None:
    """``tapir gen --run`` asks before each run: a yes to the model's script and a no to the step
    appended to it keep the finished run and its finding, nothing lost."""
    asked: list[str] = []
    backend = ScriptedBackend([_note_answer(_WRITE)])
    device = DeviceSession(NOTES, "sim:notes", adb_port=adb_port,
                           confirm=lambda script: bool(asked.append(script)) or len(asked) == 1)
    try:
        result = Generator(L.load_document(NOTES), backend).solve("Write a note", device=device,
                                                                  budget=Budget(rounds=1))
    finally:
        device.close()
    assert asked == [_WRITE, _WRITE + _SAVE]
    (only,) = result.rounds
    assert only.ran and only.completed == () and result.script == _WRITE
    assert only.failure is not None and only.failure.check == "unused-element"


@pytest.mark.adb
def test_a_finding_in_the_last_round_fails_the_solve(adb_port: int) -> None:
    backend = ScriptedBackend([_note_answer(_WRITE)])
    device = DeviceSession(NOTES, "sim:notes", adb_port=adb_port)
    try:
        result = Generator(L.load_document(NOTES), backend, config=GenConfig(completions=0)).solve(
            "Write a note", device=device, budget=Budget(rounds=1))
    finally:
        device.close()
    assert not result.ok and result.stopped == "rounds" and result.rounds[0].failure is not None
    assert result.rounds[0].failure.check == "unused-element"


@pytest.mark.adb
def test_a_repair_that_breaks_a_finished_run_does_not_replace_its_script(adb_port: int) -> None:
    """Round 1 runs to its end (a post-run check's suspicion), round 2 stops on an error and round
    3 does not pass the checker: the result is round 1's script, as ``tapir eval`` keeps it."""
    broken = "$notes_screen__note_list.match(\"No such note\").tap()\n" + _WRITE
    backend = ScriptedBackend([_note_answer(_WRITE), _note_answer(broken), _note_answer("$nothing_here.tap()\n")])
    device = DeviceSession(NOTES, "sim:notes", adb_port=adb_port)
    try:
        result = Generator(L.load_document(NOTES), backend, config=GenConfig(completions=0)).solve(
            "Write a note", device=device)
    finally:
        device.close()
    stages = [r.failure.stage if r.failure else None for r in result.rounds]
    assert stages == ["postcheck", "run", "check"] and not result.ok
    assert result.best is result.rounds[0] and result.script == _WRITE
    # the run error's hint went back with it: what to write instead of matching an item not there
    assert "an item to be added is typed into the app's input (set_text)" in backend.requests[2].user_rest
    # of two finished runs the later one is kept
    later = SolveResult("t", [result.rounds[0], result.rounds[0], result.rounds[1]])
    assert later.best is later.rounds[1]


def test_the_post_run_checks_are_one_implementation_for_gen_and_eval(music: L.AppDocument,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``tapir eval --model`` (``ModelSource.postcheck``) asks ``Generator.postcheck``, the checks
    ``solve`` runs, and both obey ``GenConfig.postchecks``."""
    from dataclasses import replace
    from types import SimpleNamespace

    from tapir.codegen.source import ModelSource, SourceAnswer

    records = [{"event": "action", "call": "back", "ok": True}]
    script = 'back()\n$songs_screen__song_list.match("x").tap()\n'
    request = SimpleNamespace(document=music, document_path=None, task=SimpleNamespace(text="t"))
    answer = SourceAnswer(script, extra={"elements": ["songs_screen__song_list"]})
    for on in (True, False):
        config = replace(GenConfig(), postchecks=on)
        found = Generator(music, ScriptedBackend([]), config=config).postcheck(
            script, records, plan_elements=("songs_screen__song_list",))
        assert [f.check for f in found] == (["unused-element"] if on else [])
        finding = ModelSource(ScriptedBackend([]), config=config, use_examples=False).postcheck(request, answer,
                                                                                                records)
        assert (finding.check if finding else None) == ("unused-element" if on else None)
    asked: list[str] = []
    monkeypatch.setattr(Generator, "postcheck", lambda self, script, records, **kw: asked.append(script) or ())
    assert ModelSource(ScriptedBackend([]), use_examples=False).postcheck(request, answer, records) is None
    assert asked == [script]
