"""The checks on a task's controls: ``control-not-used`` (the task names a control by its id's
words on a screen where the run acted, and the run never used it: the SMS button tapped beside
Call), ``search-left``, and the toggles' (``toggle-only-read``, ``toggle-undone``: a box ticked
for "tick everything" that was ticked already). Unit cases on a small document, then the sample
apps end to end on the simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tapir.codegen.backend import ScriptedBackend
from tapir.codegen.postchecks import completed, plan_after, post_run_findings
from tapir.codegen.source import script_source
from tapir.codegen.toggles import guarded_tap, read_fix, wanted_state
from tapir.docgen.loader import loads_document
from tapir.eval import EvalConfig, load_suite, report_json, run_suite
from tapir.eval.sources import AdaptedSource

SUITE = Path(__file__).resolve().parent.parent / "samples" / "suite"

#: A contact's page (Call beside SMS), its edit form (a number and the number's type, Mobile),
#: settings (a switch beside a theme row) and the app's word "contact" on every screen.
CONTACTS = """\
format: 1
app: {package: org.t, name: T, start_screen: contacts_screen}
screens:
  contacts_screen:
    description: the contacts
    signature: {activity: .Main}
    elements:
      contacts_screen__contact_list: {kind: list, description: every contact, options: [Anna, Bob],
                                      identifiers: ["//node[@resource-id='l']"], leads_to: contact_screen}
      contacts_screen__new_contact_button: {kind: button, description: adds a contact, leads_to: edit_contact_screen,
                                            identifiers: ["//node[@resource-id='n']"]}
  contact_screen:
    description: one contact
    signature: {activity: .Contact}
    elements:
      contact_screen__call_button: {kind: button, description: calls, identifiers: ["//node[@resource-id='c']"]}
      contact_screen__sms_button: {kind: button, description: writes a message,
                                   identifiers: ["//node[@resource-id='s']"]}
      contact_screen__edit_contact_button: {kind: button, description: edits it, leads_to: edit_contact_screen,
                                            identifiers: ["//node[@resource-id='e']"]}
  edit_contact_screen:
    description: a contact's form
    signature: {activity: .Edit}
    elements:
      edit_contact_screen__number_input: {kind: input, description: the number,
                                          identifiers: ["//node[@resource-id='num']"]}
      edit_contact_screen__mobile_button: {kind: button, description: the number's type,
                                           identifiers: ["//node[@resource-id='type']"]}
      edit_contact_screen__save_button: {kind: button, description: keeps it, identifiers: ["//node[@text='Save']"]}
  search_screen:
    description: searches the contacts
    signature: {activity: .Search}
    elements:
      search_screen__search_input: {kind: input, description: the search term,
                                    identifiers: ["//node[@resource-id='q']"]}
      search_screen__result_list: {kind: list, description: the contacts found, options: [Anna, Bob],
                                   identifiers: ["//node[@resource-id='r']"]}
  settings_screen:
    description: the settings
    signature: {activity: .Settings}
    elements:
      settings_screen__theme_row: {kind: button, description: the theme, identifiers: ["//node[@resource-id='t']"]}
      settings_screen__album_art_switch: {kind: switch, description: shows album art,
                                          identifiers: ["//node[@resource-id='a']"]}
      settings_screen__contact_photos_switch: {kind: switch, description: shows photos,
                                               identifiers: ["//node[@resource-id='p']"]}
"""


def _doc() -> Any:
    doc = loads_document(CONTACTS, "contacts.yaml").document
    assert doc is not None
    return doc


def _act(element: str, call: str = "tap", before: str | None = None, **more: Any) -> dict[str, Any]:
    screen = element.split("__", 1)[0]
    return {"event": "action", "call": call, "element": f"${element}", "resolved": element, "ok": True,
            "screen_before": before or screen, "screen_after": screen, **more}


def _controls(task: str, records: list[dict[str, Any]]) -> list[Any]:
    return [f for f in post_run_findings(_doc(), "", records, task=task) if f.check == "control-not-used"]


def test_the_button_the_task_names_beside_the_one_the_run_tapped_is_a_finding_that_taps_it() -> None:
    sms = [_act("contacts_screen__contact_list", "match"), _act("contact_screen__sms_button", before="contacts_screen")]
    (found,) = _controls("Call Anna.", sms)
    assert found.fix == "$contact_screen__call_button.tap()"
    assert "$contact_screen__call_button ('call')" in found.message
    # tapped: done; asked, not told: nothing to do
    assert _controls("Call Anna.", [*sms, _act("contact_screen__call_button")]) == []
    assert _controls("What number does Anna call from?", sms) == []
    # a screen the run only passed: its controls are not what the run was doing
    assert _controls("Call Anna.", [_act("contacts_screen__contact_list", "match")]) == []


def test_a_switch_the_task_names_is_a_finding_the_model_fixes() -> None:
    theme = [_act("settings_screen__theme_row")]
    (found,) = _controls("Stop showing album art.", theme)
    assert found.fix is None and "$settings_screen__album_art_switch ('album art')" in found.message
    # every word of the id must be the task's: 'art' alone is not album art
    assert _controls("Stop showing art.", theme) == []


def test_the_apps_vocabulary_a_quoted_text_and_a_word_that_qualifies_are_no_control() -> None:
    typed = [_act("edit_contact_screen__number_input", "set_text"), _act("edit_contact_screen__save_button")]
    # "mobile" says which number the run typed; "contact" is on every screen
    assert _controls("Create a contact Bob, mobile number 123", typed) == []
    assert _controls("Create a contact Bob and make it mobile", typed) != []
    edit = [_act("contact_screen__sms_button")]
    assert _controls("edit the contact Bob", edit) == []
    # the quoted text is data: a note called 'Call' is no call button
    assert _controls("Send Anna the note 'Call'", edit) == []


def _answer(script: str) -> str:
    return f"Plan: do it\nElements: \n```python\n{script}```\n"


def _run(task_id: str, adb_port: int, first: str, then: str = "") -> tuple[dict[str, Any], ScriptedBackend]:
    """One sample task through ``tapir eval``'s loop (one repair allowed), with a model that
    writes ``first`` and then, asked again, ``then``."""
    suite = load_suite(SUITE).select(ids=[task_id])
    backend = ScriptedBackend(lambda request: _answer(then if then and len(backend.requests) > 1 else first))
    source = script_source("scripted", backend=backend, examples=False, resamples=0)
    data = report_json(run_suite(suite, AdaptedSource(source), EvalConfig(repairs=1, adb_port=adb_port)))
    (t,) = data["tasks"]
    return t, backend


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_the_sample_contacts_call_is_completed_without_the_model(adb_port: int) -> None:
    """The model's script of a real run: the contact opened, SMS tapped. The check appends the
    Call tap; the run passes with one model call."""
    script = '$contacts_screen__contact_list.match("Anna Schmidt").tap()\n$contact_details_screen__sms_button.tap()\n'
    t, backend = _run("contacts/call_anna", adb_port, script)
    assert t["verdict"] == "pass" and t["first_attempt_ok"] is False
    assert t["events"] == ["completed:control-not-used"] and len(backend.requests) == 1
    assert t["script"].rstrip().endswith("$contact_details_screen__call_button.tap()")


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_the_sample_music_switch_goes_back_to_the_model(adb_port: int) -> None:
    """The theme set on the screen of the album art switch: a repair round names the switch; the
    model's second script taps it and the task passes."""
    wrong = ('$songs_screen__more_options_button.tap()\n$main_menu__options.match("Settings").tap()\n'
             '$settings_screen__theme_row.tap()\n$theme_dialog__theme_options.match("Dark").tap()\n')
    t, backend = _run("music/album_art_off", adb_port, wrong, "$settings_screen__album_art_switch.tap()\n")
    assert t["verdict"] == "pass" and t["attempts"] == 2 and t["events"] == ["postcheck:control-not-used"]
    assert "album_art_switch" in backend.requests[1].user_rest


def test_a_toggle_read_and_never_tapped_is_a_finding_unless_the_task_asks() -> None:
    doc = _doc()
    read = _act("settings_screen__album_art_switch", "get_attributes")
    (found,) = [f for f in post_run_findings(doc, "", [read], task="Turn album art off")
                if f.check == "toggle-only-read"]
    assert found.fix is None and "'checked' is True while it is ticked or on" in found.message
    # a tap after the read: the run changed something
    assert not [f for f in post_run_findings(doc, "", [read, _act("settings_screen__album_art_switch")],
                                             task="Turn album art off") if f.check == "toggle-only-read"]
    assert not [f for f in post_run_findings(doc, "", [read], task="Is album art shown?")
                if f.check == "toggle-only-read"]


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_the_sample_notes_untick_read_the_wrong_way_is_turned_round(adb_port: int) -> None:
    """The model's script of a real run: Eggs is ticked, ``if not checked`` skipped the tap, and the
    run ended silently. The task says untick: the condition is turned round, and the run passes."""
    pick = '$note_screen__item_list.match("Eggs")'
    wrong = (f'$notes_screen__note_list.match("Shopping list").tap()\n'
             f'if not {pick}.get_attributes($note_screen__item_checkbox)["checked"]:\n'
             f'    {pick}.tap($note_screen__item_checkbox)\n')
    t, backend = _run("notes/untick_eggs", adb_port, wrong, wrong.replace("if not ", "if "))
    # "untick": the condition is turned round without the model
    assert t["verdict"] == "pass" and t["events"] == ["completed:toggle-only-read"] and len(backend.requests) == 1
    assert t["script"].splitlines()[1].startswith(f"if {pick}.get_attributes(")


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_pick_after_a_search_from_another_screens_list_is_set_on_the_results(adb_port: int) -> None:
    """The model's script of a real run: Kestrel typed into the search, then the song picked from
    the songs screen's list (the runtime went back there; the task says from the results). The
    pick is set on the search screen's list, without the model."""
    script = ('$search_screen__search_input.set_text("Kestrel")\n$search_screen__result_list.wait()\n'
              '$songs_screen__song_list.match("Signal Lost").tap()\n')
    t, backend = _run("music/search_and_play", adb_port, script)
    assert t["verdict"] == "pass" and t["events"] == ["completed:search-left"] and len(backend.requests) == 1
    assert t["script"].splitlines()[2] == '$search_screen__result_list.match("Signal Lost").tap()'


def test_search_left_names_the_results_and_sets_the_pick_on_them() -> None:
    script = '$search_screen__search_input.set_text("Anna")\n$contacts_screen__contact_list.match("Anna").tap()\n'
    typed = _act("search_screen__search_input", "set_text", line=1)
    picked = _act("contacts_screen__contact_list", "match", line=2)
    (found,) = [f for f in post_run_findings(_doc(), script, [typed, picked], task="Search Anna and open her")
                if f.check == "search-left"]
    assert found.fix == '$search_screen__result_list.match("Anna").tap()' and found.replaces == 2
    # picked from the results, or the task never said search: nothing to say
    results = _act("search_screen__result_list", "match", line=2)
    assert not [f for f in post_run_findings(_doc(), script, [typed, results], task="Search Anna and open her")
                if f.check == "search-left"]
    assert not [f for f in post_run_findings(_doc(), script, [typed, picked], task="Open Anna")
                if f.check == "search-left"]


# -- toggles: the state before a tap, and which way the task wants it (tapir.codegen.toggles) ------


@pytest.mark.parametrize(("task", "wanted"), [
    ("Tick everything on my Lisbon packing list.", True),
    ("Switch on every alarm that is off.", True),
    ("Turn the Gym alarm on", True),
    ("Eggs are not bought yet; untick them on the shopping list.", False),
    ("Disable delivery reports", False),
    ("Turn album art off", False),
    ("Remove the ticked items from the shopping list.", None),  # says which items, not which way
    ("Tick Bread and untick Eggs", None),  # both ways: no direction to guess
    ("Is the Gym alarm on?", None),
    ("Stop alarms from vibrating.", None),
    # the state a task leaves behind, said with a participle
    ("Make sure there is an alarm at 06:45 and one at 09:30, both switched on; add what is missing.", True),
    ("Keep the Gym alarm enabled", True),
    ("Make sure the reminder is turned off", False),
    ("Delete the disabled alarms", None),  # which alarms, not which way
    ("Disable the reminder that is enabled", False),  # a relative clause picks, it does not ask
])
def test_the_way_a_task_wants_its_toggles(task: str, wanted: bool | None) -> None:
    assert wanted_state(task) is wanted


def _box(item: int, checked: bool, line: int = 3) -> dict[str, Any]:
    return {"event": "action", "call": "tap", "element": f"$settings_screen__album_art_switch[{item}]",
            "resolved": "settings_screen__album_art_switch", "ok": True, "line": line, "checked": checked,
            "text": f"row {item}", "screen_before": "settings_screen", "screen_after": "settings_screen"}


LOOP = "for item in $contacts_screen__contact_list:\n    item.tap($settings_screen__album_art_switch)\n"


def _undone(task: str, records: list[dict[str, Any]], script: str = LOOP) -> list[Any]:
    return [f for f in post_run_findings(_doc(), script, records, task=task) if f.check == "toggle-undone"]


def test_a_tap_on_a_toggle_already_as_the_task_wants_it_is_a_finding_whose_fix_guards_the_loop() -> None:
    (found,) = _undone("Turn everything on", [_box(0, False, 2), _box(1, True, 2)])
    assert "('row 1') on line 2, which was already ticked or on" in found.message and found.replaces == 2
    assert found.fix == ('    if not item.get_attributes($settings_screen__album_art_switch)["checked"]:\n'
                         '        item.tap($settings_screen__album_art_switch)')
    assert found.change() == ('line 2 set to if not item.get_attributes($settings_screen__album_art_switch)'
                              '["checked"]: item.tap($settings_screen__album_art_switch)')
    # turning off: the loop taps only what is on
    (off,) = _undone("Turn everything off", [_box(0, False, 2)])
    assert off.fix is not None and 'if item.get_attributes(' in off.fix
    # every tap changed what the task wants changed, or the task says no way: nothing to say
    assert _undone("Turn everything on", [_box(0, False, 2), _box(1, False, 2)]) == []
    assert _undone("Flip the switches", [_box(1, True, 2)]) == []
    # a record without the state (an older trace, a view that is no toggle) tells nothing
    assert _undone("Turn everything on", [{**_box(1, True, 2), "checked": None}]) == []


def test_a_lone_tap_on_a_toggle_already_on_goes_and_other_lines_are_the_models() -> None:
    (found,) = _undone("Turn album art on", [_box(0, True, 1)], "$settings_screen__album_art_switch.tap()\n")
    assert found.fix == "" and found.replaces == 1 and found.change() == "line 1 dropped"
    assert completed("$settings_screen__album_art_switch.tap()\nback()\n", [found]) == ("back()\n", found)
    # the plan loses what the fix took out, not what the model named and never wrote
    assert plan_after(("$a__x", "$a__y", "$a__z"), "$a__x.tap()\n$a__y.tap()\n", "$a__x.tap()\n") == ("$a__x", "$a__z")
    # a tap inside an if: the model's to say
    script = "if x:\n    $settings_screen__album_art_switch.tap()\n"
    assert guarded_tap(script, 2, True) is None


def test_the_read_fix_turns_the_condition_round_or_gives_the_body_its_tap() -> None:
    read = 'for item in $l:\n    if not item.get_attributes($s__box)["checked"]:\n        item.get_text()\n'
    assert read_fix(read, "s__box", True) == (
        '    if not item.get_attributes($s__box)["checked"]:\n        item.tap($s__box)', 2)
    assert read_fix(read, "s__box", False) == (
        '    if item.get_attributes($s__box)["checked"]:\n        item.tap($s__box)', 2)
    tapped = 'if $l.match("Eggs").get_attributes($s__box)["checked"]:\n    $l.match("Eggs").tap($s__box)\n'
    assert read_fix(tapped, "s__box", False) is None  # already right: nothing to change
    assert read_fix(tapped, "s__box", None) is None  # no way said and a tap there: the model's
    assert read_fix(tapped, "s__other", True) is None


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_the_sample_packing_list_ticked_in_a_loop_is_guarded_without_the_model(adb_port: int) -> None:
    """The model's script of a real run: every item's box tapped, Passport's already ticked (the
    trace's ``checked`` says so), so it came out unticked. The loop's tap is guarded by the state."""
    script = ('$notes_screen__note_list.match("Packing for Lisbon").tap()\nfor item in $note_screen__item_list:\n'
              '    item.tap($note_screen__item_checkbox)\n$note_screen__navigate_up_button.tap()\n')
    t, backend = _run("notes/tick_all_packing", adb_port, script)
    assert t["verdict"] == "pass" and t["events"] == ["completed:toggle-undone"] and len(backend.requests) == 1
    assert t["script"].splitlines()[2].strip() == 'if not item.get_attributes($note_screen__item_checkbox)["checked"]:'


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_the_sample_alarms_read_and_never_switched_get_the_tap_without_the_model(adb_port: int) -> None:
    """The model's script of a real run: the state of each alarm's switch read twice, nothing
    tapped. The ``if`` gets the tap as its body's first statement."""
    script = ('$clock_screen__alarm_tab.tap()\nfor item in $alarm_screen__alarm_list:\n'
              '    if not item.get_attributes($alarm_screen__alarm_switch)["checked"]:\n'
              '        item.get_attributes($alarm_screen__alarm_switch)\n')
    t, backend = _run("clock/enable_all_alarms", adb_port, script)
    assert t["verdict"] == "pass" and t["events"] == ["completed:toggle-only-read"] and len(backend.requests) == 1


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_toggle_tapped_again_after_its_row_is_dropped_and_not_sent_back_as_unused(upstream: Path,
                                                                                    adb_port: int) -> None:
    """DroidTask's clock, "disable 'start week on sunday'": the row's tap unticks the box, the
    box's own tap would tick it again on a phone. The second line goes, and the plan's mention of
    the box is no reason for a repair (the box was taken out by the fix, not forgotten)."""
    script = ('$settings_screen__general_settings_options.match("Start week on Sunday").tap()\n'
              "$settings_screen__start_week_on_sunday_checkbox.tap()\n")
    answer = ("Plan: untick it\nElements: $settings_screen__general_settings_options, "
              f"$settings_screen__start_week_on_sunday_checkbox\n```python\n{script}```\n")
    suite = load_suite(upstream / "droidtask").select(ids=["clock/task10"])
    backend = ScriptedBackend(lambda request: answer)
    source = script_source("scripted", backend=backend, examples=False, resamples=0)
    data = report_json(run_suite(suite, AdaptedSource(source), EvalConfig(repairs=1, adb_port=adb_port)))
    (t,) = data["tasks"]
    assert t["verdict"] == "pass" and t["events"] == ["completed:toggle-undone"] and len(backend.requests) == 1
    assert "start_week_on_sunday_checkbox" not in t["script"]
