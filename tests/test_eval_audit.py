"""The wrong-target audit (``tapir.eval.audit``): touches recorded by a drifted simulated app, paired
with trace records, judged on the undrifted twin of the touched window by the document's exact
identifiers. A wrong tap must be caught (and called destructive when it deletes), a right one
must not be, and what cannot be told is counted apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tapir.core.document import AppDocument
from tapir.docgen.loader import load_document
from tapir.eval.audit import Meant, audit_touches, meant_of
from tapir.sim.apps import get_app
from tapir.sim.toolkit.app import TouchAudit

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def notes_doc() -> AppDocument:
    return load_document(REPO / "samples" / "notes" / "notes.yaml")


def _bounds(node: Any) -> list[int]:
    b = node.bounds
    return [b.left, b.top, b.right, b.bottom]


def _drifted_note(kind: str = "ids", seed: int = 1) -> Any:
    app: Any = get_app("notes")
    app.reset()
    app.set_drift(kind, seed=seed)
    app.open("note", note=1)  # the shopping list: Milk, Eggs, Bread...
    app.audit = []
    return app


def test_a_tap_on_the_items_delete_button_meant_for_its_checkbox_is_wrong_and_destructive(
        notes_doc: AppDocument) -> None:
    app = _drifted_note()
    delete = app.find_all(desc="Delete item")[0]  # the first row's (Milk)
    app.tap(*delete.bounds.center)
    record = {"event": "action", "call": "tap", "line": 5, "statement": "milk.tap($note_screen__item_checkbox)",
              "element": "$note_screen__item_list.match('Milk')", "child": "$note_screen__item_checkbox",
              "bounds": _bounds(delete)}
    audit = audit_touches(notes_doc, [record], app.audit)
    [verdict] = audit.verdicts
    assert verdict.outcome == "wrong" and verdict.destructive
    assert "Delete item" in verdict.touched and "checkbox" in verdict.why
    assert audit.wrong == [verdict] and audit.right == 0


def test_the_same_tap_meant_for_the_delete_button_is_right(notes_doc: AppDocument) -> None:
    app = _drifted_note()
    delete = app.find_all(desc="Delete item")[0]
    app.tap(*delete.bounds.center)
    record = {"event": "action", "call": "tap", "element": "$note_screen__item_list.match('Milk')",
              "child": "$note_screen__item_delete_button", "bounds": _bounds(delete)}
    audit = audit_touches(notes_doc, [record], app.audit)
    assert [v.outcome for v in audit.verdicts] == ["right"]


def test_an_item_tap_must_reach_the_item_the_query_names(notes_doc: AppDocument) -> None:
    app: Any = get_app("notes")
    app.reset()
    app.audit = []
    rows = app.find_all(id="note_item")
    app.tap(*rows[1].bounds.center)
    records = [{"event": "navigation", "step": "notes_screen__note_list.match('Groceries').tap()", "action": "tap",
                "grounded": "item 0", "bounds": _bounds(rows[1])}]
    [verdict] = audit_touches(notes_doc, records, app.audit).verdicts
    shown = [n.text for n in rows[1].walk() if n.text]
    assert verdict.outcome == ("right" if "Groceries" in shown else "wrong"), (shown, verdict)


def test_touches_no_record_accounts_for_are_counted_and_records_without_touches_skipped(
        notes_doc: AppDocument) -> None:
    app = _drifted_note()
    box = next(n for n in app.window().walk() if n.cls.endswith("CheckBox"))
    app.tap(5, 5)  # the status bar: no record
    app.tap(*box.bounds.center)
    records = [{"event": "action", "call": "get_text", "element": "$note_screen__progress_text"},
               {"event": "action", "call": "tap", "element": "$note_screen__item_list[0]",
                "child": "$note_screen__item_checkbox", "bounds": _bounds(box)}]
    audit = audit_touches(notes_doc, records, app.audit)
    assert audit.unattributed == 1 and [v.outcome for v in audit.verdicts] == ["right"]


def test_a_window_whose_views_changed_is_unknown_not_judged(notes_doc: AppDocument) -> None:
    touch = TouchAudit(10, 10, False, "note", 3, None)
    record = {"event": "action", "call": "tap", "element": "$note_screen__edit_button", "bounds": [0, 0, 100, 100]}
    [verdict] = audit_touches(notes_doc, [record], [touch]).verdicts
    assert verdict.outcome == "unknown"


@pytest.mark.parametrize(("record", "meant"), [
    ({"event": "action", "call": "tap", "element": "$a__list.match('Road trip')"},
     Meant("a__list", "match", "Road trip")),
    ({"event": "action", "call": "long_tap", "element": "$a__list[3]", "child": "$a__more"},
     Meant("a__list", "index", None, "a__more")),
    ({"event": "action", "call": "set_text", "element": "$a__box"}, Meant("a__box")),
    ({"event": "action", "call": "tap", "element": "$a__list.match({'checked': True})"},
     Meant("a__list", "match", {"checked": True})),
    ({"event": "navigation", "step": "main_menu__options.match('Sort by').tap()", "action": "tap"},
     Meant("main_menu__options", "match", "Sort by")),
    ({"event": "navigation", "step": "songs__more_button.tap()", "action": "tap", "grounded": "first item"},
     Meant("songs__more_button", "first")),
    ({"event": "action", "call": "get_text", "element": "$a__title"}, None),
    ({"event": "navigation", "step": "back()"}, None),
])
def test_what_a_record_meant(record: dict[str, Any], meant: Meant | None) -> None:
    assert meant_of(record) == meant


def test_the_twin_of_a_scrolled_list_whose_id_was_renamed_shows_the_same_rows() -> None:
    """Ids renamed (the list's too, under which it keeps its scroll offset) and widgets
    inserted: view i of the twin is view i of the touched window, showing the same row."""
    from tapir.hierarchy import parse_uiautomator

    app: Any = get_app("music")
    app.reset()
    app.set_drift("all", seed=1)
    app.audit = []
    app.swipe(540, 1800, 540, 600, 300)  # the songs scrolled down
    row = [n for n in app.window().walk() if n.cls.endswith("TextView") and n.text][-3]
    app.tap(*row.bounds.center)
    [touch] = app.audit
    assert touch.plain_xml is not None and touch.target is not None
    twin = parse_uiautomator(touch.plain_xml)
    shown = [n.text for n in (twin.node(touch.target), *twin.descendants(touch.target))]
    assert row.text in shown
