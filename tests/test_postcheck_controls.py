"""``control-not-used``: the task names a control by its id's words on a screen where the run
acted, and the run never used it (the SMS button tapped beside Call, the theme set beside the album
art switch). Unit cases on a small document, then the sample apps end to end on the simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tapir.codegen.backend import ScriptedBackend
from tapir.codegen.postchecks import post_run_findings
from tapir.codegen.source import script_source
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
def test_the_sample_notes_untick_read_the_wrong_way_goes_back_to_the_model(adb_port: int) -> None:
    """The model's script of a real run: Eggs is ticked, ``if not checked`` skipped the tap, and the
    run ended silently. The repair round says what 'checked' means; the second script unticks."""
    pick = '$note_screen__item_list.match("Eggs")'
    wrong = (f'$notes_screen__note_list.match("Shopping list").tap()\n'
             f'if not {pick}.get_attributes($note_screen__item_checkbox)["checked"]:\n'
             f'    {pick}.tap($note_screen__item_checkbox)\n')
    t, backend = _run("notes/untick_eggs", adb_port, wrong, wrong.replace("if not ", "if "))
    assert t["verdict"] == "pass" and t["attempts"] == 2 and t["events"] == ["postcheck:toggle-only-read"]
    assert "'checked' is True while it is ticked or on" in backend.requests[1].user_rest


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
