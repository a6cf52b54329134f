"""Fixes for text that went into the wrong field or into none, and for a fix in the middle of a
script: the rename dialog opened and left without typing (``text-not-given`` types the task's
text there and confirms), the number before a field's unit ("a 10-minute timer": ``minutes_input``),
a name typed whole into the first-name field and its last word again into the last-name field
(``text-typed-twice``), and a state the task says with a participle ("both switched on"). The
sample apps end to end through ``tapir eval``'s loop with a scripted model, and ``tapir gen``'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tapir.codegen import language as L
from tapir.codegen.backend import ScriptedBackend
from tapir.codegen.device import DeviceSession
from tapir.codegen.generate import Budget, Generator
from tapir.codegen.postchecks import Finding, completed, post_run_findings
from tapir.codegen.source import script_source
from tapir.eval import EvalConfig, load_suite, report_json, run_suite
from tapir.eval.sources import AdaptedSource

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "samples" / "suite"


def _answer(script: str) -> str:
    return f"Plan: do it\nElements: \n```python\n{script}```\n"


def _run(task_id: str, adb_port: int, first: str) -> tuple[dict[str, Any], ScriptedBackend]:
    """One sample task through ``tapir eval``'s loop (one repair allowed); the model writes ``first``."""
    suite = load_suite(SUITE).select(ids=[task_id])
    backend = ScriptedBackend(lambda request: _answer(first))
    source = script_source("scripted", backend=backend, examples=False, resamples=0)
    data = report_json(run_suite(suite, AdaptedSource(source), EvalConfig(repairs=1, adb_port=adb_port)))
    (t,) = data["tasks"]
    return t, backend


#: A real run's script: the rename dialog opened, then left by "Navigate up" and wandering on;
#: after the fix, its line 8 looks for the playlist under its old name and stops.
RENAME = ('$playlists_screen__playlist_list.match("Road trip").tap()\n$playlist_screen__more_options_button.tap()\n'
          '$playlist_menu__options.match("Rename").tap()\n$playlist_screen__navigate_up_button.tap()\n'
          "$playlist_screen__more_options_button.tap()\n$playlist_screen__navigate_up_button.tap()\n"
          "$playlist_screen__more_options_button.tap()\n$playlist_screen__navigate_up_button.tap()\n")


def test_a_fix_in_the_middle_says_where_it_ends() -> None:
    middle = Finding("text-not-given", "m", "$a__x.tap()\n$b__in.set_text('t')\n$b__ok.tap()", 3)
    assert middle.ends == 5
    assert Finding("toggle-undone", "m", "", 2).ends == 1  # the line dropped: the one before its place
    assert Finding("unconfirmed-input", "m", "$a__save.tap()").ends is None  # appended
    script, _ = completed("l1\nl2\n$a__x.tap()\nl4\n", [middle]) or ("", None)
    assert script.splitlines()[2:6] == ["$a__x.tap()", "$b__in.set_text('t')", "$b__ok.tap()", "l4"]


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_the_rename_dialog_left_without_typing_gets_the_text_and_its_confirm(adb_port: int) -> None:
    """The fix goes right after the line that opened the dialog; the fixed run gets past it and
    stops on the model's line 8, and stands (before, any error dropped the fix): the playlist is
    renamed, with one model call."""
    t, backend = _run("music/rename_playlist", adb_port, RENAME)
    assert t["verdict"] == "pass" and t["events"][0] == "completed:text-not-given"
    assert t["script"].splitlines()[3:5] == ["$rename_playlist_dialog__name_input.set_text('Summer drive')",
                                             "$rename_playlist_dialog__rename_button.tap()"]
    assert "(script 1):8:1: ScreenNotReached" in (t["error"] or "")


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_the_number_before_a_fields_unit_is_typed_there_before_the_start(adb_port: int) -> None:
    t, backend = _run("clock/timer_10min", adb_port, "$timer_screen__start_button.tap()\n")
    assert t["verdict"] == "pass" and t["events"] == ["completed:control-not-used"] and len(backend.requests) == 1
    assert t["script"] == "$timer_screen__minutes_input.set_text('10')\n$timer_screen__start_button.tap()\n"


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_name_typed_whole_and_its_last_word_again_keeps_the_first_field_to_the_rest(adb_port: int) -> None:
    script = ('$edit_contact_screen__first_name_input.set_text("Grace Hopper")\n'
              '$edit_contact_screen__last_name_input.set_text("Hopper")\n'
              '$edit_contact_screen__phone_input.set_text("+1 555 0199")\n$edit_contact_screen__save_button.tap()\n')
    t, backend = _run("contacts/add_contact", adb_port, script)
    assert t["verdict"] == "pass" and t["events"] == ["completed:text-typed-twice"] and len(backend.requests) == 1
    assert t["script"].splitlines()[0] == "$edit_contact_screen__first_name_input.set_text('Grace')"


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_both_switched_on_and_the_new_alarms_switch_tapped_off_is_dropped(adb_port: int) -> None:
    """A new alarm is on; the model tapped its switch anyway (off), then 06:45's (on)."""
    script = ("$clock_screen__alarm_tab.tap()\n$alarm_screen__add_alarm_button.tap()\n"
              '$time_picker_dialog__hour_input.set_text("09")\n$time_picker_dialog__minute_input.set_text("30")\n'
              "$time_picker_dialog__ok_button.tap()\n"
              '$alarm_screen__alarm_list.match("09:30").tap($alarm_screen__alarm_switch)\n'
              '$alarm_screen__alarm_list.match("06:45").tap($alarm_screen__alarm_switch)\n')
    t, backend = _run("clock/ensure_alarms", adb_port, script)
    assert t["verdict"] == "pass" and t["events"] == ["completed:toggle-undone"] and len(backend.requests) == 1
    assert "09:30" not in t["script"].split("ok_button.tap()")[1].split("\n")[1]


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_solve_keeps_a_fix_the_run_got_past_and_hands_the_later_error_to_the_model(adb_port: int) -> None:
    """``tapir gen --run``: the rename fixed without the model, the run's later error is the
    round's failure (a repair round is asked), not the finding of the run before the fix."""
    doc_path = REPO / "samples" / "music" / "music.yaml"
    backend = ScriptedBackend(lambda request: _answer(RENAME))
    device = DeviceSession(doc_path, "sim:music", adb_port=adb_port)
    try:
        result = Generator(L.load_document(doc_path), backend).solve(
            'Rename the playlist "Road trip" to "Summer drive".', device=device, budget=Budget(rounds=1))
    finally:
        device.close()
    app = device.last_app()
    assert app is not None and [p.name for p in app.state.playlists] == ["Favourites", "Summer drive"]
    (rnd,) = result.rounds
    assert [f.check for f in rnd.completed] == ["text-not-given"]
    assert rnd.failure is not None and rnd.failure.stage == "run" and rnd.failure.line == 8


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_form_saved_with_nothing_typed_gets_the_text_in_the_field_the_task_names(adb_port: int) -> None:
    """A real run's script: the note opened, its text read and tapped, the editor's Save tapped
    (the runtime opened the editor for it). The quoted text goes into the body, the field of the
    task's words ("the text of the note"), before the Save; not into the title."""
    script = ('$notes_screen__note_list.match("Car service").tap()\n$note_screen__body_text.get_text()\n'
              "$note_screen__body_text.tap()\n$edit_note_screen__save_button.tap()\n")
    t, backend = _run("notes/edit_body", adb_port, script)
    assert t["verdict"] == "pass" and t["events"] == ["completed:text-not-given"] and len(backend.requests) == 1
    assert t["script"].splitlines()[3:5] == ["$edit_note_screen__body_input.set_text('Booked for the 28th, 10:00.')",
                                             "$edit_note_screen__save_button.tap()"]


def test_a_text_the_task_quotes_whole_is_not_typed_twice() -> None:
    """A title and a text that starts with it, both as the task gives them: no finding. The same
    run for a task that quotes neither: the longer one is cut."""
    doc = L.load_document(REPO / "samples" / "notes" / "notes.yaml")
    script = ('$edit_note_screen__title_input.set_text("Shopping")\n'
              '$edit_note_screen__body_input.set_text("Shopping list: milk")\n')
    records = [{"event": "action", "call": "set_text", "line": n, "ok": True, "args": {"text": text},
                "element": f"$edit_note_screen__{field}_input", "resolved": f"edit_note_screen__{field}_input",
                "screen_before": "edit_note_screen", "screen_after": "edit_note_screen"}
               for n, field, text in ((1, "title", "Shopping"), (2, "body", "Shopping list: milk"))]
    quoted = "Write a note titled 'Shopping' with the text 'Shopping list: milk'"
    assert [f for f in post_run_findings(doc, script, records, task=quoted) if f.check == "text-typed-twice"] == []
    (found,) = [f for f in post_run_findings(doc, script, records, task="Write a shopping note")
                if f.check == "text-typed-twice"]
    assert found.replaces == 2 and found.fix == "$edit_note_screen__body_input.set_text('list: milk')"
