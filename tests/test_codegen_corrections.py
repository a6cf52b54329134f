"""Model-free fixes of what a small model gets wrong the same way every time: the line a run stopped
on set right from the document or the trace (``tapir.codegen.corrections``), the search never typed
and the permission prompt left open (``tapir.codegen.postchecks``), and the harness and ``solve``
keeping a correction only when the run gets past its line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tapir.codegen.backend import ScriptedBackend
from tapir.codegen.corrections import corrected
from tapir.codegen.generate import GenConfig, Generator
from tapir.codegen.postchecks import completed, grant_button, post_run_findings
from tapir.codegen.source import script_source
from tapir.docgen.loader import loads_document
from tapir.eval import EvalConfig, load_suite, report_json, run_suite

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SUITE = SAMPLES / "suite"

#: Two dialogs that both list '5 minutes' (the snooze and the reminder), a settings list without
#: it, a contacts list with a search field beside it, and a sort dialog (not named one, as a
#: generated document may have it) with two lists.
SETTINGS = """\
format: 1
app: {package: org.t, name: T, start_screen: contacts}
screens:
  contacts:
    description: the contacts
    signature: {activity: .Main}
    elements:
      contacts__list: {kind: list, description: every contact, options: [Alice, Bob],
                       identifiers: ["//node[@resource-id='l']"]}
      contacts__search_input: {kind: input, description: searches the contacts,
                               identifiers: ["//node[@resource-id='q']"]}
      contacts__settings_list: {kind: list, description: the settings, options: [Theme, Language],
                                identifiers: ["//node[@resource-id='s']"]}
  snooze_dialog:
    description: how long a snooze lasts
    signature: {activity: .Main}
    elements:
      snooze_dialog__minutes: {kind: list, description: the snooze time, options: [5 minutes, 10 minutes],
                               identifiers: ["//node[@resource-id='sn']"]}
  reminder_dialog:
    description: how long the reminder rings
    signature: {activity: .Main}
    elements:
      reminder_dialog__minutes: {kind: list, description: the reminder duration, options: [5 minutes, 1 hour],
                                 identifiers: ["//node[@resource-id='re']"]}
  sorting_screen:
    description: sorting
    signature: {activity: .Sort}
    elements:
      sorting_screen__criteria: {kind: list, description: sort by, options: [Name, Size],
                                 identifiers: ["//node[@resource-id='c']"]}
      sorting_screen__order: {kind: list, description: the order, options: [Ascending, Descending],
                              identifiers: ["//node[@resource-id='o']"]}
      sorting_screen__cancel_button: {kind: button, description: leaves it, identifiers: ["//node[@text='Cancel']"]}
      sorting_screen__ok_button: {kind: button, description: sorts, identifiers: ["//node[@text='OK']"]}
"""


def _doc() -> Any:
    doc = loads_document(SETTINGS, "settings.yaml").document
    assert doc is not None
    return doc


def _no_item(name: str, query: str) -> str:
    return f"no item of ${name} matches {query!r} (1 items seen, e.g. 'Theme')"


def test_a_match_on_a_list_without_the_item_is_rewritten_on_the_list_the_task_means() -> None:
    doc = _doc()
    script = '$contacts__list.match("Bob").tap()\n$contacts__settings_list.match("5 minutes").tap()\n'
    msg = _no_item("contacts__settings_list", "5 minutes")
    fix = corrected(doc, script, 2, msg, "set the snooze time to 5 minutes")
    assert fix is not None and (fix.check, fix.line) == ("wrong-list", 2)
    assert fix.script == '$contacts__list.match("Bob").tap()\n$snooze_dialog__minutes.match("5 minutes").tap()\n'
    assert fix.statement == '$snooze_dialog__minutes.match("5 minutes").tap()'
    # a plan that named the list is read as naming the new one (else its element counts as unused)
    assert fix.plan(["$contacts__settings_list", "contacts__list"]) == ("$snooze_dialog__minutes", "contacts__list")
    reminder = corrected(doc, script, 2, msg, "make the reminder ring for 5 minutes")
    assert reminder is not None and "$reminder_dialog__minutes.match" in reminder.script
    # two lists have it and the task names neither: which one is the model's to say
    assert corrected(doc, script, 2, msg, "wait 5 minutes") is None
    # another error, another line, another list than the line's, a line that is not there
    assert corrected(doc, script, 2, "the element is disabled", "set the snooze time to 5 minutes") is None
    assert corrected(doc, script, 1, msg, "set the snooze time to 5 minutes") is None
    assert corrected(doc, script, 3, msg, "set the snooze time to 5 minutes") is None
    assert corrected(doc, script, None, msg, "set the snooze time to 5 minutes") is None
    # an item no list documents
    assert corrected(doc, '$contacts__list.match("Carol").tap()\n', 1, _no_item("contacts__list", "Carol")) is None


def _prompt_record(line: int, texts: list[str], app: str = "com.google.android.permissioncontroller",
                   ok: bool = True) -> dict[str, Any]:
    return {"event": "action", "call": "tap", "element": "$contacts__list", "resolved": "contacts__list",
            "label": "Bob", "line": line, "ok": ok, "screen_after": None, "app_after": app, "texts_after": texts}


def test_a_permission_prompt_in_the_way_is_answered_before_the_line_it_stopped() -> None:
    doc = _doc()
    script = "if True:\n    $contacts__list.match('Bob').tap()\n    $contacts__search_input.set_text('x')\n"
    asks = ["Allow T to access your contacts?", "Allow", "Deny"]
    records = [_prompt_record(2, asks), _prompt_record(3, asks, ok=False)]
    fix = corrected(doc, script, 3, "could not reach screen 'contacts'", "find Bob", records)
    assert fix is not None and (fix.check, fix.line, fix.statement) == ("permission-in-the-way", 4, "tap_text('Allow')")
    assert fix.script.splitlines()[2:] == ["    tap_text('Allow')", "    $contacts__search_input.set_text('x')"]
    # another app in the way is not a permission prompt to answer
    other = [_prompt_record(3, asks, app="com.android.chrome", ok=False)]
    assert corrected(doc, script, 3, "could not reach screen 'contacts'", "find Bob", other) is None


def test_an_option_the_run_passed_by_is_picked_before_the_line_it_stopped() -> None:
    """"set the snooze time to 10 minutes and sort": the run opened the snooze dialog and went on
    without picking; the line after stopped. The pick the task names goes before that line; with
    the pick made, or a task that names no option, nothing is corrected."""
    doc = _doc()
    script = "$contacts__settings_list.match('Theme').tap()\n$sorting_screen__ok_button.tap()\n"
    opened = {**_tap("contacts__settings_list", "Theme", "contacts", "snooze_dialog"), "line": 1}
    stopped = {"event": "action", "call": "tap", "element": "$sorting_screen__ok_button", "line": 2, "ok": False,
               "screen_before": "snooze_dialog", "screen_after": "snooze_dialog"}
    fix = corrected(doc, script, 2, "could not reach screen 'sorting_screen'", "set the snooze time to 10 minutes",
                    [opened, stopped])
    assert fix is not None and (fix.check, fix.line) == ("pick-skipped", 3)
    assert fix.script.splitlines() == ["$contacts__settings_list.match('Theme').tap()",
                                       "$snooze_dialog__minutes.match('10 minutes').tap()",
                                       "$sorting_screen__ok_button.tap()"]
    picked = {**_tap("snooze_dialog__minutes", "10 minutes", "snooze_dialog", "contacts"), "line": 1}
    assert corrected(doc, script, 2, "could not reach", "set the snooze time to 10 minutes",
                     [opened, picked, stopped]) is None
    assert corrected(doc, script, 2, "could not reach", "sort the contacts", [opened, stopped]) is None
    # a run that stopped on its first step passed by nothing; a line on that very list is another error
    assert corrected(doc, script, 2, "could not reach", "set the snooze time to 10 minutes", [stopped]) is None
    on_list = "$contacts__settings_list.match('Theme').tap()\n$snooze_dialog__minutes.match('10 min').tap()\n"
    assert corrected(doc, on_list, 2, "could not reach", "set the snooze time to 10 minutes",
                     [opened, stopped]) is None


def test_a_permission_prompt_left_open_is_a_finding_that_grants_it() -> None:
    doc = _doc()
    script = "$contacts__list.match('Bob').tap()\n"
    newer = _prompt_record(1, ["Allow T to access this device's location?", "While using the app",
                               "Only this time", "Don't allow"])
    (found,) = post_run_findings(doc, script, [newer], task="show Bob")
    assert found.check == "permission-asked" and found.fix == "tap_text('While using the app')"
    assert "Allow T to access this device's location?" in found.message
    assert grant_button(_prompt_record(1, ["Allow T to access your contacts?", "Allow", "Deny"])) == "Allow"
    assert grant_button({**newer, "app_after": "org.t"}) is None
    # it goes first: nothing else can be done before the prompt is answered
    found_too = post_run_findings(doc, script, [newer], task="show Bob, then search 'Carol'")
    assert {f.check for f in found_too} == {"permission-asked", "search-not-typed", "text-not-given"}
    assert completed(script, found_too[::-1]) == (script + "tap_text('While using the app')\n", found)


def _typed(element: str, text: str) -> dict[str, Any]:
    return {"event": "action", "call": "set_text", "element": f"${element}", "resolved": element,
            "args": {"text": text}, "ok": True}


def test_a_search_the_task_asks_for_and_the_run_never_typed_is_typed_before_the_pick() -> None:
    doc = _doc()
    script = '$contacts__settings_list.match("Theme").tap()\n$contacts__list.match("Alice").tap()\n'
    picked = [{"event": "action", "call": "tap", "element": f"${name}", "resolved": name, "label": label, "ok": True}
              for name, label in (("contacts__settings_list", "Theme"), ("contacts__list", "Alice"))]
    (found,) = post_run_findings(doc, script, picked, task="search contact Alice")
    assert found.check == "search-not-typed" and found.replaces == 2
    assert completed(script, [found]) == (
        '$contacts__settings_list.match("Theme").tap()\n$contacts__search_input.set_text(\'Alice\')\n'
        '$contacts__list.match("Alice").tap()\n', found)
    # searched; a task that does not say search
    assert post_run_findings(doc, script, [_typed("contacts__search_input", "Alice"), *picked],
                             task="search contact Alice") == []
    assert post_run_findings(doc, script, picked, task="open contact Alice") == []
    # no pick to type before: the quoted text is typed at the end
    (found,) = [f for f in post_run_findings(doc, "$contacts__settings_list.match('Theme').tap()\n", [],
                                             task="search for 'Carol'") if f.check == "search-not-typed"]
    assert (found.fix, found.replaces) == ("$contacts__search_input.set_text('Carol')", None)


def test_a_list_beside_a_dialog_pick_needs_no_rare_word() -> None:
    """"by name in descending order": 'Name' is a word of every document, but on the sort dialog,
    beside the order the run picked, it is the task's; the list picked from is not looked at again
    ('Ascending' is no choice left when 'Descending' was made)."""
    doc = _doc()
    pick = {"event": "action", "call": "tap", "element": "$sorting_screen__order", "resolved": "sorting_screen__order",
            "label": "Descending", "ok": True, "screen_before": "sorting_screen", "screen_after": "sorting_screen"}
    script = "$sorting_screen__order.match('Descending').tap()\n"
    found = [f for f in post_run_findings(doc, script, [pick], task="sort by name in descending order")
             if f.check == "option-not-picked"]
    assert [f.fix for f in found] == ["$sorting_screen__criteria.match('Name').tap()"]
    assert not [f for f in post_run_findings(doc, script, [pick], task="sort ascending or descending by size")
                if f.fix and "order" in f.fix]


# -- in the harness and in solve ---------------------------------------------------------------------

#: album_art_off with the Settings row picked on the sort dialog's list, which lacks it.
_WRONG_LIST = """\
$songs_screen__more_options_button.tap()
$sort_dialog__sort_options.match("Settings").tap()
if $settings_screen__album_art_switch.get_attributes()["checked"]:
    $settings_screen__album_art_switch.tap()
"""


def _answer(script: str) -> str:
    return f"Plan: do it\nElements: \n```python\n{script}```\n"


@pytest.mark.adb
@pytest.mark.timeout(300)
@pytest.mark.parametrize("correction", [True, False])
def test_a_match_on_the_wrong_list_is_corrected_before_any_repair(adb_port: int, correction: bool) -> None:
    """The run stops on the sort dialog's list, which has no Settings; the document lists Settings
    on the main menu's: the harness runs the script with that list, and the task passes with one
    model call. Without correction the model is asked to repair."""
    suite = load_suite(SUITE).select(ids=["music/album_art_off"])
    backend = ScriptedBackend(lambda request: _answer(_WRONG_LIST))
    source = script_source("scripted", backend=backend, examples=False, correction=correction, resamples=0)
    from tapir.eval.sources import AdaptedSource

    data = report_json(run_suite(suite, AdaptedSource(source), EvalConfig(repairs=1, adb_port=adb_port)))
    (t,) = data["tasks"]
    if correction:
        assert t["verdict"] == "pass" and t["attempts"] == 1 and t["first_attempt_ok"] is False
        assert t["events"] == ["corrected:wrong-list"] and len(backend.requests) == 1
        assert '$main_menu__options.match("Settings").tap()' in t["script"]
        assert data["corrections"] == {"wrong-list": {"tasks": 1, "fixed": 1, "broke": 0}}
        assert data["source"]["settings"]["corrections"] == 2
    else:
        assert t["verdict"] == "error" and len(backend.requests) == 2 and data["corrections"] == {}


#: A real run's script (notes/clear_done_items): ``$list.match(item)`` for the loop's own item.
_BY_ITEM = """\
$notes_screen__note_list.match("Shopping list").tap()
for item in $note_screen__item_list:
    if $note_screen__item_list.match(item).get_attributes($note_screen__item_checkbox)["checked"]:
        $note_screen__item_list.match(item).tap($note_screen__item_delete_button)
"""

_NOT_A_TEXT = "match() argument 'query' must be str | dict, not element"


def test_a_match_given_the_loops_item_is_the_item_throughout_the_loop() -> None:
    fixed = corrected(_doc(), _BY_ITEM, 3, _NOT_A_TEXT)
    assert fixed is not None and fixed.check == "match-by-item" and fixed.line == 3
    assert fixed.script.splitlines()[2:] == ['    if item.get_attributes($note_screen__item_checkbox)["checked"]:',
                                             "        item.tap($note_screen__item_delete_button)"]
    # another list's match(item), another error, a name no loop binds: not this correction's
    other = "for item in $a_list:\n    $b_list.match(item).tap()\n"
    assert corrected(_doc(), other, 2, _NOT_A_TEXT) is None
    assert corrected(_doc(), _BY_ITEM, 3, "no item of $note_screen__item_list matches 'x'") is None
    assert corrected(_doc(), "x = 1\n$a_list.match(x).tap()\n", 2, _NOT_A_TEXT) is None


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_the_sample_ticked_items_removed_through_match_of_the_item_pass_without_a_repair(adb_port: int) -> None:
    suite = load_suite(SUITE).select(ids=["notes/clear_done_items"])
    backend = ScriptedBackend(lambda request: _answer(_BY_ITEM))
    source = script_source("scripted", backend=backend, examples=False, resamples=0)
    from tapir.eval.sources import AdaptedSource

    data = report_json(run_suite(suite, AdaptedSource(source), EvalConfig(repairs=1, adb_port=adb_port)))
    (t,) = data["tasks"]
    assert t["verdict"] == "pass" and t["events"] == ["corrected:match-by-item"] and len(backend.requests) == 1


class _Correcting:
    """A source whose failed runs get a given script as their correction (the harness's side of
    ``correct``), with no model behind it."""

    name = "correcting"

    def __init__(self, script: str, fixed: str, line: int) -> None:
        self.script, self.fixed, self.line = script, fixed, line

    def settings(self) -> dict[str, Any]:
        return {}

    def generate(self, request: Any) -> Any:
        from tapir.eval.sources import Generation

        return Generation(self.script)

    def correct(self, request: Any, previous: Any, error: str, records: Any = ()) -> Any:
        from tapir.eval.sources import Generation

        if previous.extra.get("corrected"):
            return None
        return Generation(self.fixed, extra={"corrected": ["wrong-list"], "corrected_line": self.line})


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_correction_whose_run_stops_on_its_line_again_is_dropped(adb_port: int) -> None:
    suite = load_suite(SUITE).select(ids=["music/album_art_off"])
    same = _WRONG_LIST.replace("sort_dialog__sort_options", "songs_screen__song_list")
    data = report_json(run_suite(suite, _Correcting(_WRONG_LIST, same, 2), EvalConfig(adb_port=adb_port)))
    (t,) = data["tasks"]
    assert t["events"] == ["correction-broke:wrong-list"] and t["script"] == _WRONG_LIST
    assert t["verdict"] == "error" and "sort_dialog__sort_options" in t["error"]
    assert data["corrections"] == {"wrong-list": {"tasks": 0, "fixed": 0, "broke": 1}}


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_solve_corrects_the_line_and_says_so_in_the_round(adb_port: int) -> None:
    from tapir.codegen import language as L
    from tapir.codegen.device import DeviceSession

    doc_path = SAMPLES / "music" / "music.yaml"
    doc = L.load_document(doc_path)
    backend = ScriptedBackend(lambda request: _answer(_WRONG_LIST))
    gen = Generator(doc, backend, config=GenConfig())
    device = DeviceSession(doc_path, "sim:music", adb_port=adb_port)
    result = gen.solve("Stop showing album art in the song lists.", device=device)
    (rnd,) = result.rounds
    assert result.ok and len(backend.requests) == 1
    assert [(c.check, c.line) for c in rnd.corrected] == [("wrong-list", 2)]
    assert "corrected line 2 to $main_menu__options.match(\"Settings\").tap() (wrong-list)" in rnd.summary()
    off = Generator(doc, ScriptedBackend(lambda request: _answer(_WRONG_LIST)), config=GenConfig(corrections=0))
    device = DeviceSession(doc_path, "sim:music", adb_port=adb_port)
    (first, *_) = off.solve("Stop showing album art in the song lists.", device=device).rounds
    assert first.corrected == () and first.failure is not None and first.failure.stage == "run"



#: A settings screen of toggles, the two dialogs that list '5 minutes', and an export dialog (a file
#: name, OK beside Cancel) that the last tap opened.
TOGGLES = """\
format: 1
app: {package: org.t, name: T, start_screen: settings}
screens:
  settings:
    description: the settings
    signature: {activity: .Settings}
    elements:
      settings__private_checkbox: {kind: checkbox, description: shows private contacts,
                                   identifiers: ["//node[@text='Show private contacts']"]}
      settings__phone_numbers_checkbox: {kind: checkbox, description: shows the numbers in the list,
                                         identifiers: ["//node[@text='Show phone numbers']"]}
      settings__phone_button: {kind: button, description: the phone numbers' format,
                               identifiers: ["//node[@text='Number format']"]}
      settings__dial_button: {kind: button, description: dials phone numbers, identifiers: ["//node[@text='Dial']"]}
      settings__copy_button: {kind: button, description: copies phone numbers, identifiers: ["//node[@text='Copy']"]}
      settings__reminder_button: {kind: button, description: the max reminder duration, leads_to: reminder_dialog,
                                  identifiers: ["//node[@text='Max reminder duration']"]}
      settings__snooze_button: {kind: button, description: the snooze time, leads_to: snooze_dialog,
                                identifiers: ["//node[@text='Snooze time']"]}
      settings__export_button: {kind: button, description: exports the contacts, leads_to: export_dialog,
                                identifiers: ["//node[@text='Export']"]}
  snooze_dialog:
    description: how long a snooze lasts
    signature: {activity: .Settings}
    elements:
      snooze_dialog__minutes: {kind: list, description: the snooze time, options: [5 minutes, 10 minutes],
                               identifiers: ["//node[@resource-id='sn']"]}
  reminder_dialog:
    description: the max reminder duration
    signature: {activity: .Settings}
    elements:
      reminder_dialog__minutes: {kind: list, description: how long the reminder rings, options: [5 minutes, 1 hour],
                                 identifiers: ["//node[@resource-id='re']"]}
  export_dialog:
    description: exports to a file
    signature: {activity: .Settings}
    elements:
      export_dialog__file_name_input: {kind: input, description: the file's name,
                                       identifiers: ["//node[@resource-id='f']"]}
      export_dialog__cancel_button: {kind: button, description: leaves it, identifiers: ["//node[@text='Cancel']"]}
      export_dialog__ok_button: {kind: button, description: exports, identifiers: ["//node[@text='OK']"]}
"""


def _toggles() -> Any:
    doc = loads_document(TOGGLES, "toggles.yaml").document
    assert doc is not None
    return doc


def _tap(element: str, label: str, before: str = "settings", after: str = "settings") -> dict[str, Any]:
    return {"event": "action", "call": "tap", "element": f"${element}", "resolved": element, "label": label,
            "ok": True, "screen_before": before, "screen_after": after}


def test_the_toggle_beside_the_one_the_run_ticked_is_named_by_two_plain_words() -> None:
    """"show phone numbers" names the checkbox beside the one the run ticked, though "phone" and
    "number" are words of the whole document; without a toggle ticked, they name nothing."""
    doc = _toggles()
    script = "$settings__private_checkbox.tap()\n"
    (found,) = post_run_findings(doc, script, [_tap("settings__private_checkbox", "Show private contacts")],
                                 task="show phone numbers in the list")
    assert found.check == "element-not-used" and found.fix == "$settings__phone_numbers_checkbox.tap()"
    snooze = _tap("settings__snooze_button", "Snooze time", after="snooze_dialog")
    assert not [f for f in post_run_findings(doc, "$settings__snooze_button.tap()\n", [snooze],
                                             task="show phone numbers in the list") if f.check == "element-not-used"]


def test_an_option_two_lists_have_is_picked_on_the_one_the_task_names() -> None:
    doc = _toggles()
    opened = _tap("settings__reminder_button", "Max reminder duration", after="reminder_dialog")
    found = [f for f in post_run_findings(doc, "$settings__reminder_button.tap()\n", [opened],
                                          task="change the max reminder duration to 5 minutes")
             if f.check == "option-not-picked"]
    assert [f.fix for f in found] == ["$reminder_dialog__minutes.match('5 minutes').tap()"]
    both = [f for f in post_run_findings(doc, "$settings__reminder_button.tap()\n", [opened], task="wait 5 minutes")
            if f.check == "option-not-picked"]
    assert both and both[0].fix is None  # which one is the model's to say


def test_a_dialog_form_the_last_tap_opened_is_confirmed_with_its_ok() -> None:
    doc = _toggles()
    opened = _tap("settings__export_button", "Export", after="export_dialog")
    found = [f for f in post_run_findings(doc, "$settings__export_button.tap()\n", [opened], task="export my contacts")
             if f.check == "dialog-left-open"]
    assert [f.fix for f in found] == ["$export_dialog__ok_button.tap()"]


def test_a_switch_tapped_twice_in_a_row_is_a_finding_whose_fix_removes_the_second_tap() -> None:
    """"Turn on the Gym alarm", its switch tapped on line 2 and again on line 3: off again. The fix
    removes line 3; a task that says to toggle twice, or a tap between the two, gives no finding."""
    doc = _toggles()
    script = "$settings__snooze_button.tap()\n$settings__private_checkbox.tap()\n$settings__private_checkbox.tap()\n"
    tick = {**_tap("settings__private_checkbox", "Show private contacts"), "line": 2}
    records = [{**_tap("settings__snooze_button", "Snooze time"), "line": 1}, tick, {**tick, "line": 3}]
    (found,) = [f for f in post_run_findings(doc, script, records, task="show private contacts")
                if f.check == "toggled-back"]
    assert (found.fix, found.replaces) == ("", 3) and "on line 2 and again on line 3" in found.message
    assert completed(script, [found]) == ("$settings__snooze_button.tap()\n$settings__private_checkbox.tap()\n", found)
    assert not [f for f in post_run_findings(doc, script, records, task="toggle private contacts twice")
                if f.check == "toggled-back"]
    between = [records[1], {**records[0], "line": 3}, {**tick, "line": 4}]
    assert not [f for f in post_run_findings(doc, script + "$settings__private_checkbox.tap()\n", between,
                                             task="show private contacts") if f.check == "toggled-back"]
