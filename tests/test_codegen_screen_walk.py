"""A script that walks through a screen's elements instead of doing the task (``tapir.codegen.screen_walk``):
found, said to the model before a run (``tapir gen``), after a failed run (``tapir eval`` repairs) and
after a finished one (a post-run check); scripts that do a task are left alone."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tapir.codegen import language as L
from tapir.codegen.backend import ScriptedBackend
from tapir.codegen.generate import GenConfig, Generator
from tapir.codegen.postchecks import POSTCHECKS, post_run_findings
from tapir.codegen.screen_walk import MIN_WALK, screen_walk
from tapir.codegen.source import script_source
from tapir.eval import load_suite

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NOTES = SAMPLES / "notes" / "notes.yaml"

#: The degenerate answer: note_screen's elements in the document's order, a tap each.
WALK = ("$note_screen__navigate_up_button.tap()\n$note_screen__edit_button.tap()\n"
        "$note_screen__body_text.tap()\n$note_screen__modified_text.tap()\n")


def _doc(app: str = "notes") -> L.AppDocument:
    return L.load_document(SAMPLES / app / f"{app}.yaml")


def test_a_walk_through_one_screen_is_found_with_its_lines() -> None:
    walk = screen_walk(_doc(), "# open the note\n$notes_screen__new_note_button.tap()\n" + WALK)
    assert walk is not None
    assert (walk.first_line, walk.last_line, walk.screen) == (3, 6, "note_screen")
    assert walk.elements[0] == "note_screen__navigate_up_button"
    assert "lines 3-6 go through the elements of note_screen" in walk.message() and "set_text" in walk.message()


def test_a_walk_is_read_from_the_parsed_script_not_its_lines() -> None:
    # comments and blank lines between the calls, a call split over two lines, and a line after
    # the walk that does not parse: still the walk, with the lines its statements start on
    script = ("$notes_screen__new_note_button.tap()\n\n"
              + WALK.replace("\n$note_screen__body_text", "\n# next\n\n$note_screen__body_text")
                    .replace("$note_screen__modified_text.tap()", "$note_screen__modified_text.tap(\n)")
              + "if (:\n")
    walk = screen_walk(_doc(), script)
    assert walk is not None and (walk.first_line, walk.last_line) == (3, 8)
    # the same calls in a loop's body are the loop's logic, not a copied list
    looped = "for i in range(1):\n" + "".join(f"    {line}\n" for line in WALK.splitlines())
    assert screen_walk(_doc(), looped) is None


def test_a_walk_along_one_lists_items_is_found() -> None:
    script = "".join(f"$sort_dialog__sort_options[{i}].tap()\n" for i in range(2, 2 + MIN_WALK))
    walk = screen_walk(_doc(), script)
    assert walk is not None and walk.elements[-1] == f"sort_dialog__sort_options[{1 + MIN_WALK}]"


@pytest.mark.parametrize("script", [
    WALK.replace("$note_screen__body_text.tap()\n", ""),                       # too short
    "".join(reversed(WALK.splitlines(keepends=True))),                         # not the document's order
    WALK.replace("$note_screen__body_text.tap()", 'print("x")'),               # broken by another statement
    WALK.replace("$note_screen__body_text.tap()", '$note_screen__item_list.match("Milk").tap()'),  # an item picked
    '$edit_note_screen__title_input.set_text("a")\n$edit_note_screen__body_input.set_text("b")\n'
    "$edit_note_screen__save_button.tap()\n$edit_note_screen__navigate_up_button.tap()\n",  # typing is a task
    "".join(f"$sort_dialog__sort_options[{i}].tap()\n" for i in (0, 2, 4, 6)),  # not consecutive items
])
def test_scripts_that_do_something_are_no_walk(script: str) -> None:
    assert screen_walk(_doc(), script) is None


def test_toggling_switches_in_order_is_a_task() -> None:
    doc = _doc("music")
    switches = [e.name for e in doc.elements if e.kind in (L.Kind.SWITCH, L.Kind.CHECKBOX)]
    by_screen = {doc.element(n).screen for n in switches}  # type: ignore[union-attr]
    screen = next(s for s in by_screen if sum(doc.element(n).screen == s for n in switches) >= 2)  # type: ignore[union-attr]
    mine = [n for n in switches if doc.element(n).screen == screen]  # type: ignore[union-attr]
    script = "".join(f"${n}.tap()\n" for n in (mine * MIN_WALK)[:MIN_WALK])
    assert screen_walk(doc, script) is None


def test_no_reference_script_of_the_sample_suite_is_a_walk() -> None:
    suite = load_suite(SAMPLES / "suite")
    checked = 0
    for task in suite.tasks:
        if task.reference:
            checked += 1
            assert screen_walk(suite.apps[task.app].document, task.reference) is None, task.id
    assert checked > 10


def test_no_reference_script_of_droidtask_is_a_walk() -> None:
    # the scripts written from the 140 recorded traces of real apps (docs/codegen.md says none is a walk)
    folder = SAMPLES.parent.parent / "shared" / "upstream" / "droidtask"
    if not (folder / "tasks.json").is_file():
        pytest.skip("../shared/upstream/droidtask is not here")
    suite = load_suite(folder)
    walks = [t.id for t in suite.tasks if t.reference and screen_walk(suite.apps[t.app].document, t.reference)]
    assert sum(1 for t in suite.tasks if t.reference) >= 140 and walks == []


def test_a_finished_walk_is_the_first_post_run_finding() -> None:
    assert POSTCHECKS[0] == "screen-walk"
    records = [{"event": "action", "call": "tap", "element": f"${n}", "resolved": n, "ok": True}
               for n in ("note_screen__navigate_up_button", "note_screen__edit_button", "note_screen__body_text",
                         "note_screen__modified_text")]
    found = post_run_findings(_doc(), WALK, records)
    assert [f.check for f in found] == ["screen-walk"]
    assert found[0].render().startswith("PostRunCheck: the script finished, but lines 1-4 go through")


def test_tapir_gen_sends_a_walk_back_before_running_it() -> None:
    walk = f"Plan: x\nElements: $note_screen__edit_button\n```python\n{WALK}```"
    fixed = 'Plan: x\nElements: $note_screen__edit_button\n```python\n$note_screen__edit_button.tap()\n```'
    backend = ScriptedBackend([walk, fixed])
    result = Generator(_doc(), backend, config=GenConfig(constrained=False)).solve("Edit the note")
    first = result.rounds[0].failure
    assert first is not None and first.stage == "check" and first.line == 1
    assert "go through the elements of note_screen" in first.message
    assert result.ok and len(backend.requests) == 2
    assert "go through the elements of note_screen" in backend.requests[1].user_rest


def test_an_eval_repair_of_a_walk_says_so_beside_the_runs_error() -> None:
    backend = ScriptedBackend(["Plan: x\nElements: $note_screen__edit_button\n```python\nback()\n```"])
    source = script_source("scripted", backend=backend, examples=False)
    request = SimpleNamespace(task=SimpleNamespace(text="Edit the note", id="notes/t1"), document=_doc(),
                              document_path=str(NOTES), seed=0)
    previous = SimpleNamespace(script=WALK)
    error = "t.tap:2:1: ScreenNotReached: could not reach screen 'note_screen'"
    assert source.repair(request, previous, error) is not None
    rest = backend.requests[0].user_rest
    assert "could not reach screen 'note_screen'; and lines 1-4 go through the elements of note_screen" in rest
