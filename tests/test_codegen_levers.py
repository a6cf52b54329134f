"""The code generator's levers (issue 21): loop stop, post-run checks, examples from synthesis with
held-out tasks, and the focused prompt's cached prefix.

The plumbing is tested with a scripted backend (and the simulator, for the post-run checks), and
with SmolLM2 where a real model matters (the loop stop while decoding, the cached prefix).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tapir.codegen import language as L
from tapir.codegen.backend import Request, ScriptedBackend
from tapir.codegen.examples import Example, ExampleStore, load_examples, near_duplicate
from tapir.codegen.generate import GenConfig, Generator
from tapir.codegen.loops import RepeatGuard, stop_repeats
from tapir.codegen.models import find_model
from tapir.codegen.postchecks import Finding, completed, post_run_findings
from tapir.codegen.source import script_source
from tapir.docgen.loader import loads_document
from tapir.eval import EvalConfig, load_suite, report_json, run_suite

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SUITE = SAMPLES / "suite"
NOTES = SAMPLES / "notes" / "notes.yaml"


def _answer(script: str, elements: str = "") -> str:
    return f"Plan: do it\nElements: {elements}\n```python\n{script}```"


# -- no loops ----------------------------------------------------------------------------------------


def test_a_repeated_statement_is_stopped_and_cut_back_to_its_first_copy() -> None:
    guard = RepeatGuard()
    stream = ["Plan: x\nEle", "ments: $a\n```python\n", "$a.tap()\n", "$b.tap()\n"] + ["$c.set_text(\"x\")\n"] * 20
    stopped_at = next(i for i, piece in enumerate(stream) if guard.feed(piece))
    assert stopped_at == 6  # the third copy in a row, not the twentieth
    assert guard.cut().endswith('$b.tap()\n$c.set_text("x")\n') and guard.cut().count("set_text") == 1


def test_a_repeated_block_of_lines_is_stopped() -> None:
    block = "$a.tap()\nback()\n"
    text, looped = stop_repeats("```python\n" + block * 5)
    assert looped and text == "```python\n" + block


def test_a_statement_written_twice_or_a_loop_body_is_not_a_loop() -> None:
    script = ("```python\n$a.tap()\n$back.tap()\n$back.tap()\nfor item in $list:\n    item.tap($child)\n"
              "    print(item.get_text($child))\n```\n")
    text, looped = stop_repeats(script)
    assert not looped and text == script
    # the same statement four times in all (not in a row) is a loop too
    _, looped = stop_repeats("$a.tap()\n$b.tap()\n$a.tap()\n$c.tap()\n$a.tap()\n$d.tap()\n$a.tap()\n")
    assert looped


def test_the_generator_gets_the_cut_answer_and_the_finish_says_loop() -> None:
    doc = L.load_document(NOTES)
    looping = _answer("$notes_screen__new_note_button.tap()\n" * 12)
    gen = Generator(doc, ScriptedBackend([looping, looping]), config=GenConfig(constrained=False))
    done = gen.generate("Start a note")
    assert done.completion.finish == "loop" and done.script == "$notes_screen__new_note_button.tap()\n"
    off = Generator(doc, ScriptedBackend([looping]), config=GenConfig(constrained=False, stop_loops=False))
    assert off.generate("Start a note").script.count("\n") == 12


# -- examples from synthesis, held-out tasks ------------------------------------------------------------


def _synth_record(task: str, script: str, app: str = "notes") -> dict[str, Any]:
    return {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                         {"role": "assistant", "content": f"Plan: {task} (plan)\nElements: x\n```python\n{script}```"}],
            "meta": {"id": "1", "app": app, "task": task, "script": script}}


def test_synth_output_is_read_as_examples(tmp_path: Path) -> None:
    f = tmp_path / "synth.jsonl"
    f.write_text(json.dumps(_synth_record("Save an empty note", "$edit_note_screen__save_button.tap()\n")) + "\n")
    (ex,) = load_examples(f)
    assert (ex.task, ex.script, ex.plan) == ("Save an empty note", "$edit_note_screen__save_button.tap()\n",
                                             "Save an empty note (plan)")


def test_near_copies_of_a_task_are_recognised() -> None:
    assert near_duplicate('Add Butter to the shopping list.', "add butter to the shopping list")
    assert near_duplicate('Delete the note "Passwords hint".', "Delete the note Password hint")
    assert near_duplicate("Sort my notes by title.", "By title, sort my notes")  # same words
    assert not near_duplicate("Add Butter to the shopping list.", "Open my meeting notes.")


@pytest.mark.parametrize("embedder", [None, "minilm"])
def test_retrieval_never_returns_a_held_out_task_nor_a_near_copy(embedder: str | None) -> None:
    if embedder:
        from tapir.runtime.grounding import default_embedder

        embedder = default_embedder()  # type: ignore[assignment]
        if embedder is None:
            pytest.skip("MiniLM is not installed")
    pool = [Example("Add Butter to the shopping list.", "$a.tap()\n"),
            Example("add butter to the shopping list", "$b.tap()\n"),
            Example("Add Milk to the shopping list", "$c.tap()\n"),
            Example("Open my meeting notes", "$d.tap()\n")]
    store = ExampleStore(pool, embedder=embedder)
    task = "Add Butter to the shopping list."
    assert store.retrieve(task, 1)[0].task.lower().startswith("add butter")  # it would be found...
    got = store.without([task]).retrieve(task, 4)
    assert [e.task for e in got] == ["Add Milk to the shopping list", "Open my meeting notes"]  # ...but is held out
    assert [e.task for e in store.retrieve(task, 4, exclude=task)] == [e.task for e in got]


def test_an_evaluated_task_is_never_an_example_in_any_prompt(tmp_path: Path) -> None:
    """The suite's tasks are held out of every example pool, standing and retrieved, even when
    the examples file holds them (and near-copies of them)."""
    suite = load_suite(SUITE).select(ids=["notes/add_item", "notes/sort_by_title"])
    f = tmp_path / "synth.jsonl"
    records = [_synth_record(t.text, t.reference or "") for t in suite.tasks]
    records += [_synth_record(t.text.upper().rstrip("."), t.reference or "") for t in suite.tasks]
    records += [_synth_record(f"Open the note number {i}", "$notes_screen__note_list[0].tap()\n") for i in range(12)]
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    backend = ScriptedBackend(lambda r: _answer("print(1)\n"))
    source = script_source("scripted", backend=backend, example_files=[f], retrieval="tf-idf")
    source.hold_out([t.text for t in suite.tasks])
    for task in suite.tasks:
        req = type("Req", (), {"task": task, "document": suite.apps["notes"].document,
                               "document_path": suite.apps["notes"].document_path})()
        source.generate(req)
    assert len(backend.requests) == 2
    for r in backend.requests:
        prompt = (r.user_prefix + r.user_rest).lower()
        assert "open the note number" in prompt  # the synth pairs are there...
        for t in suite.tasks:
            assert prompt.count(t.text.lower().rstrip(".")) == (1 if t.text in r.user_rest else 0)  # ...not the tasks
    off = script_source("scripted", backend=ScriptedBackend(["x"]), example_files=[f], examples=False)
    assert off.examples_for(suite.apps["notes"].document, suite.apps["notes"].document_path) is None


# -- no silent failures ------------------------------------------------------------------------------


def _action(call: str, element: str) -> dict[str, Any]:
    return {"event": "action", "call": call, "element": f"${element}", "resolved": element, "ok": True}


def test_post_run_checks_on_a_trace() -> None:
    doc = L.load_document(NOTES)
    script = ('$notes_screen__new_note_button.tap()\n$edit_note_screen__title_input.set_text("Plumber")\n')
    records = [_action("tap", "notes_screen__new_note_button"), _action("set_text", "edit_note_screen__title_input")]
    found = post_run_findings(doc, script, records, plan_elements=["edit_note_screen__save_button"])
    assert [f.check for f in found] == ["unused-element", "unconfirmed-input"]
    assert "$edit_note_screen__save_button" in found[0].message and "$edit_note_screen__save_button" in found[1].message
    saved = [*records, _action("tap", "edit_note_screen__save_button")]
    assert post_run_findings(doc, script + "$edit_note_screen__save_button.tap()\n", saved,
                             plan_elements=["edit_note_screen__save_button"]) == []


#: A sort dialog as upstream documents describe one (two lists of options), and a camera's mode tab
#: whose option 'Photo' is the app's own vocabulary; a delete that asks first (named buttons), one
#: that asks in a generated document (buttons named after Android's ids), an information dialog
#: (a plain OK) and a menu.
SORTING = """\
format: 1
app: {package: org.t, name: T, start_screen: home}
screens:
  home:
    description: the photos
    signature: {activity: .Home}
    elements:
      home__photo_grid: {kind: list, description: every photo taken, identifiers: ["//node[@resource-id='g']"]}
      home__photo_count: {kind: text, description: how many photos, identifiers: ["//node[@resource-id='c']"]}
      home__last_photo: {kind: image, description: the last photo taken, identifiers: ["//node[@resource-id='l']"]}
      home__mode_tab: {kind: list, description: photo or video mode, options: [Photo, Video],
                       identifiers: ["//node[@resource-id='m']"]}
      home__time_input: {kind: list, description: the hours, options: ["00", "01", "05"],
                         identifiers: ["//node[@resource-id='h']"]}
      home__delete_all_button: {kind: button, description: deletes them all, leads_to: delete_dialog,
                                identifiers: ["//node[@resource-id='d']"]}
      home__clear_button: {kind: button, description: clears the list, leads_to: clear_dialog,
                           identifiers: ["//node[@resource-id='x']"]}
      home__info_button: {kind: button, description: the properties, leads_to: info_dialog,
                          identifiers: ["//node[@resource-id='i']"]}
      home__more_button: {kind: button, description: more options, leads_to: more_menu,
                          identifiers: ["//node[@resource-id='mo']"]}
      home__add_timer_button: {kind: button, description: a new timer, leads_to: new_timer,
                               identifiers: ["//node[@resource-id='at']"]}
      home__viewer_button: {kind: button, description: opens the photo, leads_to: viewer,
                            identifiers: ["//node[@resource-id='v']"]}
  delete_dialog:
    description: asks before deleting
    signature: {activity: .Home}
    elements:
      delete_dialog__yes_button: {kind: button, description: deletes them, identifiers: ["//node[@text='Yes']"]}
      delete_dialog__no_button: {kind: button, description: keeps them, identifiers: ["//node[@text='No']"]}
  clear_dialog:
    description: A dialog; buttons 'button2', 'button1'.
    signature: {activity: .Home}
    elements:
      clear_dialog__button_1_button: {kind: button, description: Button 'button1'.,
                                      identifiers: ["//node[@resource-id='android:id/button1']"]}
      clear_dialog__button_2_button: {kind: button, description: Button 'button2'.,
                                      identifiers: ["//node[@resource-id='android:id/button2']"]}
  info_dialog:
    description: the properties
    signature: {activity: .Home}
    elements:
      info_dialog__ok_button: {kind: button, description: confirms and closes it, identifiers: ["//node[@text='OK']"]}
  more_menu:
    description: a menu
    signature: {activity: .Home}
    elements:
      more_menu__options: {kind: list, description: the options, options: [Settings, About, Arrange],
                           identifiers: ["//node[@resource-id='mo2']"]}
  sort_dialog:
    description: sorting
    signature: {activity: .Sort}
    elements:
      sort_dialog__criteria: {kind: list, description: sort by, options: [Title, Date taken],
                              identifiers: ["//node[@resource-id='s']"]}
      sort_dialog__order: {kind: list, description: the order, options: [Ascending, Descending],
                           identifiers: ["//node[@resource-id='o']"],
                           paths: [[home__more_button.tap(), "more_menu__options.match('Arrange').tap()"]]}
  viewer:
    description: one photo
    signature: {activity: .Viewer}
    elements:
      viewer__title_input: {kind: input, description: the photo's title, identifiers: ["//node[@resource-id='t']"]}
  new_timer:
    description: a new timer, a form
    signature: {activity: .Timer}
    elements:
      new_timer__order: {kind: list, description: how it counts, options: [Upwards, Downwards],
                         identifiers: ["//node[@resource-id='tw']"]}
      new_timer__cancel_button: {kind: button, description: leaves it, identifiers: ["//node[@text='Cancel']"]}
      new_timer__ok_button: {kind: button, description: keeps the timer, identifiers: ["//node[@text='OK']"]}
"""


def _tapped(label: str, element: str = "sort_dialog__criteria") -> dict[str, Any]:
    return {"event": "action", "call": "tap", "element": f"${element}", "resolved": element, "label": label, "ok": True}


def test_an_option_the_task_names_and_the_run_never_picked_is_a_finding() -> None:
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None
    task = "Sort the photos by title in descending order"
    script = '$sort_dialog__criteria.match("Title").tap()\n'
    (found,) = post_run_findings(doc, script, [_tapped("Title")], task=task)
    assert found.check == "option-not-picked"
    assert ("'Descending' is an option of $sort_dialog__order: $sort_dialog__order.match('Descending').tap()"
            in found.message)
    assert "Title" not in found.message  # picked
    # picked by the script, or by navigation on its way: done
    assert post_run_findings(doc, script, [_tapped("Title"), _tapped("Descending")], task=task) == []
    nav = {"event": "navigation", "action": "tap", "label": "Descending", "ok": True}
    assert post_run_findings(doc, script, [_tapped("Title"), nav], task=task) == []


def test_an_option_of_a_screen_the_run_never_came_near_is_no_finding() -> None:
    """'Descending' is a sort order; a run that only retitled a photo in the viewer was not one step
    short of sorting (the task's words name another feature), but a run that opened the menu was."""
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None
    task = "Set the title of the photo to Descending order"
    typed = {**_action("set_text", "viewer__title_input"), "screen_before": "viewer", "screen_after": "viewer"}
    assert post_run_findings(doc, "$viewer__title_input.set_text('x')\n", [typed], task=task) == []
    menu = {**_action("tap", "home__more_button"), "screen_before": "home", "screen_after": "more_menu"}
    (found,) = post_run_findings(doc, "$home__more_button.tap()\n", [menu], task=task)
    assert found.check == "option-not-picked" and "$sort_dialog__order" in found.message


def test_a_text_the_task_quotes_and_the_run_never_gave_is_a_finding() -> None:
    """A small model opens the right form and types nothing, or the old name: the quoted text was
    never typed, tapped nor matched. A path counts by its last folder, a file name without its
    extension, and "Bob's" quotes nothing."""
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None
    typed = {**_action("set_text", "viewer__title_input"), "args": {"text": "Road trip"}}
    script = "$viewer__title_input.set_text('Road trip')\n"
    task = "Rename the photo 'Road trip' to \"Summer drive\""
    (found,) = post_run_findings(doc, script, [typed], task=task)
    assert found.check == "text-not-given"
    assert found.message == ("the script finished, but never typed nor picked 'Summer drive', which the task gives: "
                             "type it with set_text into the field it belongs to (and confirm), or pick it with "
                             ".match('Summer drive')")
    summer = {**typed, "args": {"text": "Summer drive"}}
    assert post_run_findings(doc, script, [typed, summer], task=task) == []
    # picked by matching its item (the tap then lands on the item's menu, labelled otherwise)
    match = {**_action("match", "sort_dialog__criteria"), "args": {"query": "Summer drive"}}
    assert post_run_findings(doc, script, [typed, match], task=task) == []
    assert post_run_findings(doc, script, [{**typed, "args": {"text": "classmate"}}],
                             task="Export them to the file 'classmate.vcf'") == []
    assert post_run_findings(doc, "$sort_dialog__criteria.match('DCIM').tap()\n", [_tapped("DCIM")],
                             task="Open 'Internal/DCIM/'") == []
    assert post_run_findings(doc, script, [typed], task="Open Bob's photo and Alice's") == []


def test_a_quoted_text_typed_with_other_characters_is_a_finding() -> None:
    """The words are there, the final full stop is not: a quoted text is meant as written. A pick
    by ``.match()`` is fuzzy by design and does not count; typing the text exactly as well does."""
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None
    task = 'Change the title to "Booked for the 28th, 10:00."'
    script = "$viewer__title_input.set_text('Booked for the 28th, 10:00')\n"
    typed = {**_action("set_text", "viewer__title_input"), "args": {"text": "Booked for the 28th, 10:00"}}
    (found,) = post_run_findings(doc, script, [typed], task=task)
    assert found.check == "text-not-given"
    assert found.message == ("the script typed 'Booked for the 28th, 10:00', but the task gives "
                             "'Booked for the 28th, 10:00.': type it exactly as quoted")
    exact = {**typed, "args": {"text": "Booked  for the 28th, 10:00."}}  # spacing aside
    assert post_run_findings(doc, script, [typed, exact], task=task) == []
    picked = {**_action("match", "sort_dialog__criteria"), "args": {"query": "booked for the 28th 10:00"}}
    assert all(f.check != "text-not-given" for f in post_run_findings(doc, script, [picked], task=task))


#: A settings screen as a generated document describes one: each setting labelled in its
#: identifier; "favorite" is the app's vocabulary (five elements say it), "reminder" and "duration"
#: too, while "delivery" is said once.
SETTINGS = """\
format: 1
app: {package: org.s, name: S, start_screen: home}
screens:
  home:
    description: the conversations
    signature: {activity: .Home}
    elements:
      home__favorites_tab: {kind: tab, description: the favorites, identifiers: ["//node[@text='Favorites']"]}
      home__add_favorites_button: {kind: button, description: adds favorites, leads_to: pick_favorite,
                                   identifiers: ["//node[@text='Add favorites']"]}
      home__settings_button: {kind: button, description: the settings, leads_to: settings,
                              identifiers: ["//node[@content-desc='Settings']"]}
  pick_favorite:
    description: favorite picker
    signature: {activity: .Pick}
    elements:
      pick_favorite__favorite_contacts: {kind: list, description: a favorite each, options: [Alice, Bob],
                                         identifiers: ["//node[@resource-id='f']"]}
      pick_favorite__done_button: {kind: button, description: keeps the favorites picked,
                                   identifiers: ["//node[@text='Done']"]}
      pick_favorite__favorite_count: {kind: text, description: how many favorites,
                                      identifiers: ["//node[@resource-id='n']"]}
  settings:
    description: the settings
    signature: {activity: .Settings}
    elements:
      settings__delivery_reports_checkbox:
        kind: checkbox
        description: Checkbox 'Enable delivery reports'.
        identifiers: ["//node[@resource-id='d' and @text='Enable delivery reports']"]
      settings__send_on_enter_checkbox:
        kind: checkbox
        description: a setting
        identifiers: ["//*[@resource_id='e' and text()='Send message on pressing Enter']"]
      settings__alarm_reminder_button: {kind: button, description: the alarm's reminder duration,
                                        identifiers: ["//node[@text='Max reminder duration']"]}
      settings__timer_reminder_button: {kind: button, description: the timer's reminder duration,
                                        identifiers: ["//node[@text='Max reminder duration']"]}
      settings__reminder_value_text: {kind: text, description: the reminder duration now,
                                      identifiers: ["//node[@text='5 minutes']"]}
      settings__export_name_text: {kind: text, description: the file, identifiers: ["//node[@text='Diary.pdf']"]}
      settings__last_sent_text: {kind: text, description: "Text, e.g. 'Sent to Bob today'.",
                                 identifiers: ["//node[@text='Sent to Bob today']"]}
  duration_dialog:
    description: the reminder durations
    signature: {activity: .Settings}
    elements:
      duration_dialog__durations: {kind: list, description: the durations, options: [1 minute, 5 minutes],
                                   identifiers: ["//node[@resource-id='r']"]}
      duration_dialog__ok_button: {kind: button, description: applies it, identifiers: ["//node[@text='OK']"]}
      duration_dialog__cancel_button: {kind: button, description: keeps it, identifiers: ["//node[@text='Cancel']"]}
  order_dialog:
    description: "A dialog; buttons 'button2', 'button1'."
    signature: {activity: .Settings}
    elements:
      order_dialog__orders: {kind: list, description: the orders, options: [Ascending, Descending],
                             identifiers: ["//node[@resource-id='ord']"]}
      order_dialog__button_1_button: {kind: button, description: Button 'button1'.,
                                      identifiers: ["//node[@resource-id='android:id/button1']"]}
  colors:
    description: customize colors
    signature: {activity: .Colors}
    elements:
      colors__theme_button: {kind: button, description: opens the themes, leads_to: theme_dialog,
                             identifiers: ["//node[@resource-id='t']"]}
      colors__save_button: {kind: button, description: keeps the colors, identifiers: ["//node[@content-desc='Save']"]}
  theme_dialog:
    description: the themes
    signature: {activity: .Colors}
    elements:
      theme_dialog__themes: {kind: list, description: the themes, options: [Light, Dark],
                             identifiers: ["//node[@resource-id='th']"]}
"""


def test_an_element_the_task_names_by_its_label_and_the_run_never_used_is_a_finding() -> None:
    """The settings screen opened, a neighbouring setting toggled: the one the task names by its
    label ("sending ... by pressing", the label's "send ... on pressing") was never acted on."""
    doc = loads_document(SETTINGS, "settings.yaml").document
    assert doc is not None
    task = "Enable sending message by pressing Enter"
    script = "$settings__delivery_reports_checkbox.tap()\n"
    records = [_tapped("Enable delivery reports", "settings__delivery_reports_checkbox")]
    (found,) = post_run_findings(doc, script, records, task=task)
    assert found.check == "element-not-used"
    assert found.message == ("the script finished, but never acted on what the task names: "
                             "$settings__send_on_enter_checkbox ('Send message on pressing Enter'); act on it "
                             "(the runtime goes to its screen)")
    # acted on, by the script or by anything labelled so (a navigation's tap): done
    done = _tapped("Send message on pressing Enter", "settings__send_on_enter_checkbox")
    assert post_run_findings(doc, script, [*records, done], task=task) == []
    nav = {"event": "navigation", "action": "tap", "label": "Send message on pressing Enter", "ok": True}
    assert post_run_findings(doc, script, [*records, nav], task=task) == []
    # one rare word is enough with two ("delivery"); three of the app's words are enough too, and
    # every element so labelled is named
    opened = [_tapped("Settings", "home__settings_button")]
    (found,) = post_run_findings(doc, "$home__settings_button.tap()\n", opened,
                                 task="change the alarm's max reminder duration to 1 minute")
    assert ("$settings__alarm_reminder_button ('Max reminder duration'); $settings__timer_reminder_button"
            in found.message)
    assert found.fix is None  # two elements so labelled: which one is the model's to say
    (found,) = post_run_findings(doc, "", [], task="enable delivery reports")
    assert "$settings__delivery_reports_checkbox" in found.message
    assert found.fix == "$settings__delivery_reports_checkbox.tap()"


def test_a_choice_made_in_a_dialog_left_open_is_a_finding() -> None:
    """An item picked in a dialog that stayed open, its OK never tapped: the choice is not applied.
    A dialog that closed on the pick, and an OK tapped after it, are no finding."""
    doc = loads_document(SETTINGS, "settings.yaml").document
    assert doc is not None
    pick = {**_tapped("5 minutes", "duration_dialog__durations"), "screen_before": "duration_dialog",
            "screen_after": "duration_dialog"}
    script = "$duration_dialog__durations.match('5 minutes').tap()\n"
    (found,) = post_run_findings(doc, script, [pick])
    assert found.check == "dialog-left-open"
    assert found.message == ("the script made its choice in duration_dialog and finished with it open: confirm the "
                             "choice with $duration_dialog__ok_button")
    assert found.fix == "$duration_dialog__ok_button.tap()"
    assert post_run_findings(doc, script, [{**pick, "screen_after": "settings"}]) == []
    ok = {**_tapped("OK", "duration_dialog__ok_button"), "screen_before": "duration_dialog", "screen_after": "settings"}
    assert post_run_findings(doc, script + "$duration_dialog__ok_button.tap()\n", [pick, ok]) == []
    # a generated document names the confirming button after Android's id (button1)
    order = {**_tapped("Descending", "order_dialog__orders"), "screen_before": "order_dialog",
             "screen_after": "order_dialog"}
    (found,) = post_run_findings(doc, "$order_dialog__orders.match('Descending').tap()\n", [order])
    assert found.check == "dialog-left-open" and found.message.endswith("$order_dialog__button_1_button")


def test_a_unit_the_task_shortens_still_names_the_option() -> None:
    """ "30 min" in a task is the option '30 minutes' (DroidTask calendar/task8's snooze time)."""
    doc = loads_document(SETTINGS, "settings.yaml").document
    assert doc is not None
    opened = {**_tapped("Max reminder duration", "settings__alarm_reminder_button"), "screen_before": "settings",
              "screen_after": "duration_dialog"}
    found = post_run_findings(doc, "$settings__alarm_reminder_button.tap()\n", [opened],
                              task="set the alarm's max reminder duration to 5 min")
    # the dialog (OK beside Cancel) was left open too; the option is what completion appends first
    assert [f.check for f in found] == ["dialog-left-open", "option-not-picked"]
    assert "'5 minutes' is an option of $duration_dialog__durations" in found[1].message
    assert completed("$settings__alarm_reminder_button.tap()\n", found) == (
        "$settings__alarm_reminder_button.tap()\n$duration_dialog__durations.match('5 minutes').tap()\n", found[1])


def test_a_choice_whose_dialog_closed_onto_a_screen_with_save_is_unconfirmed_input() -> None:
    """Light picked, the theme dialog closed onto the colors screen, whose Save keeps the change:
    never tapped. Saved afterwards, or a pick that left no such screen, is no finding."""
    doc = loads_document(SETTINGS, "settings.yaml").document
    assert doc is not None
    pick = {**_tapped("Light", "theme_dialog__themes"), "screen_before": "theme_dialog", "screen_after": "colors"}
    script = "$theme_dialog__themes.match('Light').tap()\n"
    (found,) = post_run_findings(doc, script, [pick])
    assert found.check == "unconfirmed-input"
    assert found.message == ("the script made its choice in theme_dialog, which closed onto colors, and then did "
                             "nothing more: colors has $colors__save_button; tap it to keep the change")
    assert found.fix == "$colors__save_button.tap()"
    save = {**_tapped("Save", "colors__save_button"), "screen_before": "colors", "screen_after": "settings"}
    assert post_run_findings(doc, script + "$colors__save_button.tap()\n", [pick, save]) == []
    assert post_run_findings(doc, script, [{**pick, "screen_after": "settings"}]) == []


@pytest.mark.parametrize("task", [
    "Add Bob to my favorites",                  # 'Add favorites': two words the app says everywhere
    "Set the reminder to 5 minutes",            # '5 minutes' is a value: one word besides the number
    "Print the diary as diary.pdf",             # 'Diary.pdf' is a file a field holds now
    "Show what was sent to Bob today",          # a text the document gives only as an example
    "Turn on settings",                         # one word
])
def test_labels_that_name_no_element_of_the_task_are_no_finding(task: str) -> None:
    doc = loads_document(SETTINGS, "settings.yaml").document
    assert doc is not None
    assert all(f.check != "element-not-used" for f in post_run_findings(doc, "", [], task=task))


@pytest.mark.parametrize("task", [
    "Delete the last photo",      # 'Photo' is the app's vocabulary (used by most elements), not a choice
    "Start a timer of 5:00",      # '00' and '05' are a picker's values
    "Sort them",                  # no option named
])
def test_words_that_name_no_choice_are_no_finding(task: str) -> None:
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None
    assert post_run_findings(doc, "$home__last_photo.tap()\n", [_tapped("x", "home__last_photo")], task=task) == []


def test_a_run_that_ends_on_the_dialog_its_last_tap_opened_is_a_finding() -> None:
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None

    def opened(button: str, dialog: str) -> dict[str, Any]:
        return {**_action("tap", f"home__{button}"), "screen_after": dialog}

    tap = opened("delete_all_button", "delete_dialog")
    (found,) = post_run_findings(doc, "$home__delete_all_button.tap()\n", [tap])
    assert found.check == "dialog-left-open" and "$delete_dialog__yes_button" in found.message
    assert found.fix == "$delete_dialog__yes_button.tap()"
    # a generated document's question: Android's positive button beside its negative one
    (found,) = post_run_findings(doc, "$home__clear_button.tap()\n", [opened("clear_button", "clear_dialog")])
    assert found.check == "dialog-left-open" and found.message.endswith(
        "confirm it with $clear_dialog__button_1_button if the task needs it done")
    # answered; an information dialog's plain OK; a menu (nothing to confirm): no finding
    yes = {**_action("tap", "delete_dialog__yes_button"), "screen_after": "home"}
    assert post_run_findings(doc, "$home__delete_all_button.tap()\n$delete_dialog__yes_button.tap()\n",
                             [tap, yes]) == []
    assert post_run_findings(doc, "$home__info_button.tap()\n", [opened("info_button", "info_dialog")]) == []
    assert post_run_findings(doc, "$home__more_button.tap()\n", [opened("more_button", "more_menu")]) == []


def test_a_form_the_last_tap_opened_and_never_kept_is_a_finding() -> None:
    """A new timer's form opened by the last tap, its OK never tapped: the timer was never added.
    A screen without an OK beside a Cancel (a photo viewer) is no form; a choice made on the form
    and left there is a choice left open."""
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None
    opened = {**_action("tap", "home__add_timer_button"), "screen_after": "new_timer"}
    (found,) = post_run_findings(doc, "$home__add_timer_button.tap()\n", [opened], task="add a timer")
    assert found.check == "form-left-open" and found.fix == "$new_timer__ok_button.tap()"
    assert "finished on new_timer, which its last tap opened" in found.message
    viewer = {**_action("tap", "home__viewer_button"), "screen_after": "viewer"}
    assert post_run_findings(doc, "$home__viewer_button.tap()\n", [viewer]) == []
    pick = {**_tapped("Downwards", "new_timer__order"), "screen_before": "new_timer", "screen_after": "new_timer"}
    (found,) = post_run_findings(doc, "$new_timer__order.match('Downwards').tap()\n", [opened, pick])
    assert found.check == "dialog-left-open" and found.fix == "$new_timer__ok_button.tap()"


def test_a_decision_dialog_dismissed_by_the_last_tap_is_a_finding_whose_fix_takes_its_line() -> None:
    """"Delete them all", and the script's last tap is the dialog's No: its fix is the Yes, in the
    No's place. A task that says to cancel, and a No tapped inside a block, give no fix."""
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None
    script = "$home__delete_all_button.tap()\n$delete_dialog__no_button.tap()\n"
    records = [{**_action("tap", "home__delete_all_button"), "screen_after": "delete_dialog", "line": 1},
               {**_action("tap", "delete_dialog__no_button"), "screen_before": "delete_dialog",
                "screen_after": "home", "line": 2}]
    (found,) = post_run_findings(doc, script, records, task="delete all photos")
    assert found.check == "dialog-cancelled" and (found.fix, found.replaces) == ("$delete_dialog__yes_button.tap()", 2)
    assert completed(script, [found]) == ("$home__delete_all_button.tap()\n$delete_dialog__yes_button.tap()\n", found)
    assert post_run_findings(doc, script, records, task="open delete all, then cancel") == []
    nested = "if True:\n    $home__delete_all_button.tap()\n    $delete_dialog__no_button.tap()\n"
    (found,) = post_run_findings(doc, nested, [records[0], {**records[1], "line": 3}], task="delete all photos")
    assert found.check == "dialog-cancelled" and found.fix is None
    # Android's negative button of a generated document is a dismissal too
    cleared = [{**_action("tap", "home__clear_button"), "screen_after": "clear_dialog", "line": 1},
               {**_action("tap", "clear_dialog__button_2_button"), "screen_after": "home", "line": 2}]
    (found,) = post_run_findings(doc, "$home__clear_button.tap()\n$clear_dialog__button_2_button.tap()\n",
                                 cleared, task="clear the list")
    assert found.fix == "$clear_dialog__button_1_button.tap()"


def test_a_quoted_text_never_typed_is_typed_into_the_one_field_where_the_run_stopped() -> None:
    doc = loads_document(SORTING, "sorting.yaml").document
    assert doc is not None
    viewer = {**_action("tap", "home__viewer_button"), "screen_after": "viewer"}
    (found,) = post_run_findings(doc, "$home__viewer_button.tap()\n", [viewer], task="name the photo 'Beach'")
    assert found.check == "text-not-given" and found.fix == "$viewer__title_input.set_text('Beach')"
    # stopped where no field is: which field is the model's to say
    timer = {**_action("tap", "home__add_timer_button"), "screen_after": "new_timer"}
    found = post_run_findings(doc, "$home__add_timer_button.tap()\n", [timer], task="add a timer 'Tea'")
    assert [(f.check, f.fix) for f in found if f.check == "text-not-given"] == [("text-not-given", None)]


def test_completion_does_what_the_task_names_before_the_tap_that_closes_its_screen() -> None:
    ok = Finding("dialog-left-open", "...", "$d__ok_button.tap()")
    pick = Finding("option-not-picked", "...", "$d__order.match('Descending').tap()")
    assert completed("$a.tap()\n", [ok, pick]) == ("$a.tap()\n$d__order.match('Descending').tap()\n", pick)
    assert completed("$a.tap()\n", [Finding("unused-element", "...")]) is None
    assert completed("$a.tap()\n", [Finding("dialog-cancelled", "...", "$d__yes.tap()", 7)]) is None  # no line 7


@pytest.mark.adb
@pytest.mark.timeout(300)
@pytest.mark.parametrize("postchecks", [True, False])
def test_a_silent_failure_becomes_a_repair_round(adb_port: int, postchecks: bool) -> None:
    """A script that types the note and never saves it finishes without an error: the post-run
    check sends it back, the repair saves it, the task passes; counted in the report."""
    suite = load_suite(SUITE).select(ids=["notes/write_note"])
    (task,) = suite.tasks
    unsaved = "\n".join(line for line in (task.reference or "").splitlines() if "save" not in line) + "\n"

    def answer(request: Request) -> str:
        if "Your previous script" in request.user_rest:
            return _answer(task.reference or "")
        return _answer(unsaved)

    backend = ScriptedBackend(answer)
    # the model's repair is what is tested: the Save the finding names is not appended for it
    source = script_source("scripted", backend=backend, postchecks=postchecks, examples=False, completion=False)
    from tapir.eval.sources import AdaptedSource

    run = run_suite(suite, AdaptedSource(source), EvalConfig(repairs=2, adb_port=adb_port))
    data = report_json(run)
    (t,) = data["tasks"]
    if postchecks:
        assert t["verdict"] == "pass" and t["attempts"] == 2 and t["first_attempt_ok"] is False
        assert "finished without doing the task" in backend.requests[1].user_rest
        assert t["events"] == ["postcheck:unconfirmed-input"]
        assert data["postchecks"] == {"unconfirmed-input": {"caught": 1, "fixed": 1, "caught_passing": 0}}
    else:
        assert t["verdict"] == "fail" and t["attempts"] == 1 and data["postchecks"] == {}


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_repair_that_breaks_a_finished_run_does_not_replace_it(adb_port: int) -> None:
    """A finding is a suspicion: when the repair it asked for stops on an error, the run that
    finished is the task's result (its script, its verdict), and the report says so."""
    suite = load_suite(SUITE).select(ids=["notes/write_note"])
    (task,) = suite.tasks
    unsaved = "\n".join(line for line in (task.reference or "").splitlines() if "save" not in line) + "\n"

    def answer(request: Request) -> str:
        if "Your previous script" in request.user_rest:
            return _answer(unsaved + "$note_screen__delete_button.tap()\n")  # refused: sensitive
        return _answer(unsaved)

    source = script_source("scripted", backend=ScriptedBackend(answer), examples=False, completion=False)
    from tapir.eval.sources import AdaptedSource

    run = run_suite(suite, AdaptedSource(source), EvalConfig(repairs=2, adb_port=adb_port))
    (t,) = report_json(run)["tasks"]
    assert t["events"][0] == "postcheck:unconfirmed-input" and t["events"][-1] == "kept-finished"
    assert t["verdict"] == "fail" and t["error"] is None and t["script"] == unsaved
    assert t["attempts"] == 2  # the repaired script was run, and stopped on the refused delete


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_model_that_stands_by_a_finished_run_keeps_it_without_asking_again(adb_port: int) -> None:
    """Given a finding, the model writes the same script again: that is its answer to a suspicion
    (not a failed repair to sample again, nor a script to run again), and the finished run is the
    result after one repair call."""
    suite = load_suite(SUITE).select(ids=["notes/write_note"])
    (task,) = suite.tasks
    unsaved = "\n".join(line for line in (task.reference or "").splitlines() if "save" not in line) + "\n"
    backend = ScriptedBackend(lambda request: _answer(unsaved))
    source = script_source("scripted", backend=backend, examples=False, completion=False)
    from tapir.eval.sources import AdaptedSource

    run = run_suite(suite, AdaptedSource(source), EvalConfig(repairs=2, adb_port=adb_port))
    (t,) = report_json(run)["tasks"]
    assert t["events"] == ["postcheck:unconfirmed-input", "stood-by"] and len(backend.requests) == 2
    assert t["verdict"] == "fail" and t["error"] is None and t["script"] == unsaved
    assert backend.requests[1].temperature == 0.0  # not sampled again


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_run_one_tap_short_is_completed_before_any_repair(adb_port: int) -> None:
    """The note typed, its Save never tapped: the finding names the one Save, the harness runs the
    script with it appended, and the task passes with one model call and no repair spent; the
    first attempt (the model's script as written) still counts as failed, and the report counts
    the completion."""
    suite = load_suite(SUITE).select(ids=["notes/write_note"])
    (task,) = suite.tasks
    unsaved = "\n".join(line for line in (task.reference or "").splitlines() if "save" not in line) + "\n"
    backend = ScriptedBackend(lambda request: _answer(unsaved))
    source = script_source("scripted", backend=backend, examples=False)
    from tapir.eval.sources import AdaptedSource

    run = run_suite(suite, AdaptedSource(source), EvalConfig(repairs=2, adb_port=adb_port))
    data = report_json(run)
    (t,) = data["tasks"]
    assert t["verdict"] == "pass" and t["attempts"] == 1 and t["first_attempt_ok"] is False
    assert t["events"] == ["completed:unconfirmed-input"] and len(backend.requests) == 1
    assert t["script"] == unsaved + "$edit_note_screen__save_button.tap()\n"
    assert data["completions"] == {"unconfirmed-input": {"tasks": 1, "fixed": 1, "broke": 0}}
    assert data["source"]["settings"]["completions"] == 3


class _Completing:
    """A source whose finished runs are completed by a given statement (the harness's side of
    ``complete``), with no model behind it."""

    name = "completing"

    def __init__(self, script: str, step: str) -> None:
        self.script, self.step = script, step

    def settings(self) -> dict[str, Any]:
        return {}

    def generate(self, request: Any) -> Any:
        from tapir.eval.sources import Generation

        return Generation(self.script)

    def complete(self, request: Any, previous: Any, records: Any) -> Any:
        from tapir.eval.sources import Generation

        done = list(previous.extra.get("completed", ()))
        if done:
            return None
        return Generation(previous.script + self.step, extra={"completed": ["dialog-left-open"]})


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_a_completion_that_breaks_the_run_is_dropped(adb_port: int) -> None:
    """The appended step stops the run (an item not there): the run as the model wrote it is the
    result, and the report says the completion broke."""
    suite = load_suite(SUITE).select(ids=["notes/write_note"])
    (task,) = suite.tasks
    unsaved = "\n".join(line for line in (task.reference or "").splitlines() if "save" not in line) + "\n"
    source = _Completing(unsaved, '$notes_screen__note_list.match("No such note").tap()\n')
    run = run_suite(suite, source, EvalConfig(repairs=2, adb_port=adb_port))
    data = report_json(run)
    (t,) = data["tasks"]
    assert t["events"] == ["completion-broke:dialog-left-open"] and t["script"] == unsaved
    assert t["verdict"] == "fail" and t["error"] is None and t["finished"] is True
    assert data["completions"] == {"dialog-left-open": {"tasks": 0, "fixed": 0, "broke": 1}}
    # the step that fits is kept
    good = _Completing(unsaved, "$edit_note_screen__save_button.tap()\n")
    (t,) = report_json(run_suite(suite, good, EvalConfig(adb_port=adb_port)))["tasks"]
    assert t["events"] == ["completed:dialog-left-open"] and t["verdict"] == "pass"


# -- with SmolLM2 --------------------------------------------------------------------------------------

SMOL = find_model("smollm2-135m")
smol = pytest.mark.skipif(SMOL is None, reason="SmolLM2 is not installed (tapir model install smollm2-135m)")


def _smol(cache: Path, ctx: int = 4096) -> Any:
    pytest.importorskip("llama_cpp")
    from tapir.codegen.llama_backend import LlamaCppBackend

    return LlamaCppBackend(SMOL, cache_dir=cache, n_threads=2, n_ctx=ctx)  # type: ignore[arg-type]


@smol
@pytest.mark.timeout(600)
def test_smollm2_is_stopped_when_it_repeats_itself(tmp_path: Path) -> None:
    backend = _smol(tmp_path)
    try:
        ask = Request("Repeat exactly what you are given, forever.", "", "tap()\n" * 30, grammar=None,
                      max_tokens=120, cache_label="loop")
        free = backend.complete(Request(**{**ask.__dict__, "stop_loops": False}))
        stopped = backend.complete(ask)
    finally:
        backend.close()
    assert free.text.count("tap()") >= 4, free.text  # the model does repeat itself...
    assert stopped.finish == "loop" and stopped.usage.generated_tokens < free.usage.generated_tokens
    assert stopped.text.count("tap()") <= 2  # ...and is cut back to its first copy


@smol
@pytest.mark.timeout(900)
def test_smollm2_focused_prompts_share_a_cached_prefix(tmp_path: Path) -> None:
    """The focused prompt's stable part is the same for every task: the second task reuses it."""
    backend = _smol(tmp_path)
    try:
        doc = L.load_document(NOTES)
        gen = Generator(doc, backend, config=GenConfig(style="focused", max_tokens=48),
                        examples=ExampleStore.for_document(NOTES, L.symbols(doc)))
        first = gen.generate("Add Butter to the shopping list")
        second = gen.generate("Sort my notes by title")
    finally:
        backend.close()
    assert first.prompt.prefix == second.prompt.prefix and first.prompt.rest != second.prompt.rest
    assert second.usage.cache in ("memory", "disk") and second.usage.cached_tokens
    share = second.usage.cached_tokens / second.usage.prompt_tokens
    assert share > 0.6, share


@smol
@pytest.mark.timeout(300)
def test_a_prompt_is_counted_without_loading_the_weights(tmp_path: Path) -> None:
    """``ModelSource.prompt`` is the first round's prompt, its task held out of the examples, and
    the backend counts it with the vocabulary alone (``bench/prompt_budget.py`` measures a whole
    suite's prompts this way in minutes)."""
    from tapir.codegen.backend import Request as BackendRequest
    from tapir.codegen.source import ModelSource
    from tapir.eval.sources import GenerationRequest

    suite = load_suite(SUITE).select(ids=["notes/write_note"])
    (task,) = suite.tasks
    app = suite.apps[task.app]
    backend = _smol(tmp_path)
    try:
        source = ModelSource(backend)
        source.hold_out([task.text])
        prompt = source.prompt(GenerationRequest(task, app.document, document_path=app.document_path))
        tokens, n_prefix = backend.prompt_tokens(BackendRequest(prompt.system, prompt.prefix, prompt.rest))
        assert backend.load_s == 0.0  # the weights were never loaded
    finally:
        backend.close()
    assert task.text in prompt.rest and f"Task: {task.text}" not in prompt.prefix + prompt.rest
    assert 0 < n_prefix < len(tokens)


class _FirstAnswer:
    """SmolLM2 behind the generator, its first answer replaced by a given one (a silent failure a
    1.5B model writes; SmolLM2's own would be anything): the harness's path from there is real."""

    def __init__(self, inner: Any, first: str) -> None:
        self.inner, self.first = inner, first
        self.requests: list[Request] = []
        self.usages: list[Any] = []
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, request: Request) -> Any:
        import dataclasses

        self.requests.append(request)
        done = self.inner.complete(request)
        self.usages.append(done.usage)
        return dataclasses.replace(done, text=self.first) if len(self.requests) == 1 else done


@smol
@pytest.mark.adb
@pytest.mark.timeout(900)
def test_smollm2_in_the_harness_retrieves_no_held_out_task_repairs_a_silent_failure_and_hits_the_cache(
        tmp_path: Path, adb_port: int) -> None:
    """`tapir eval --model` with SmolLM2 on one sample task, a pool holding the task itself, a
    near-copy of it and another note task: the prompts show examples, never the task or its
    near-copy; the first script types the note and never saves it, and the
    post-run check makes that a repair round, whose prompt reuses the cached prefix."""
    suite = load_suite(SUITE).select(ids=["notes/write_note"])
    (task,) = suite.tasks
    unsaved = "\n".join(line for line in (task.reference or "").splitlines() if "save" not in line) + "\n"
    pool = tmp_path / "pool.jsonl"
    near = task.text.replace("Tuesday.", "Tuesday!")
    other = "Sort the notes by their title"
    sort = (SUITE / "notes" / "sort_by_title.tap").read_text(encoding="utf-8")
    records = [json.dumps(_synth_record(t, s)) for t, s in ((task.text, task.reference or ""),
                                                             (near, task.reference or ""), (other, sort))]
    pool.write_text("\n".join(records) + "\n", encoding="utf-8")
    # a context the document's prompt fits whole, with its examples (a small one drops them)
    backend = _FirstAnswer(_smol(tmp_path / "cache", ctx=8192), _answer(unsaved))
    try:
        source = script_source("smollm2-135m", backend=backend, example_files=[pool],  # type: ignore[arg-type]
                               completion=False, resamples=0, retrieval="tf-idf",
                               config=GenConfig(max_tokens=48, constrained=False))  # the grammar is not tested here
        from tapir.eval.sources import AdaptedSource

        data = report_json(run_suite(suite, AdaptedSource(source), EvalConfig(repairs=1, adb_port=adb_port)))
    finally:
        backend.inner.close()
    (t,) = data["tasks"]
    first, repair = backend.requests
    import re

    shown = re.findall(r"^Task: (.*)$", "".join(r.user_prefix + r.user_rest for r in (first, repair)), re.M)
    assert shown and task.text not in shown and near not in shown  # examples, but never these two
    assert t["events"][0].startswith("postcheck:") and t["attempts"] == 2
    assert "finished without doing the task" in repair.user_rest and unsaved.strip() in repair.user_rest
    # the repair's prompt starts as the first one did: its prefix (at least) came from the cache
    assert backend.usages[1].cached_tokens >= backend.usages[0].prompt_tokens // 2
    assert t["tokens"]["cached"] >= backend.usages[1].cached_tokens
