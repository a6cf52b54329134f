"""Recorded apps behave like apps: text typed into a replayed field shows there, and an input
whose outcome the recording did not save says so, on a small synthetic DroidBot recording
(no third-party data needed) and through the device runtime.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import make_runtime

from tapir.core.document import AppDocument
from tapir.core.errors import ScreenNotReached
from tapir.docgen.loader import loads_document
from tapir.dsl.interpreter import run_script
from tapir.hierarchy import parse_uiautomator
from tapir.runtime.grounding import Grounder, GroundingConfig
from tapir.sim.replay import UNRECORDED, ReplayApp

PKG = "org.example.notes"


def view(temp_id: int, parent: int, cls: str, bounds: tuple[int, int, int, int], *, children: tuple[int, ...] = (),
         **kw: Any) -> dict[str, Any]:
    x1, y1, x2, y2 = bounds
    return {"temp_id": temp_id, "parent": parent, "children": list(children), "class": cls, "package": PKG,
            "bounds": [[x1, y1], [x2, y2]], "visible": True, "enabled": True, "resource_id": kw.pop("rid", None),
            "text": kw.pop("text", None), "content_description": kw.pop("desc", None), **kw}


def state(tag: str, name: str, views: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tag": tag, "state_str": name, "foreground_activity": f"{PKG}/.MainActivity", "width": 1080,
            "height": 2400, "views": views}


MAIN = [
    view(0, -1, "android.widget.FrameLayout", (0, 0, 1080, 2400), children=(1, 2, 3)),
    view(1, 0, "android.widget.EditText", (40, 100, 1040, 220), rid=f"{PKG}:id/search", text="Search",
         editable=True, clickable=True, focusable=True),
    view(2, 0, "android.widget.Button", (40, 300, 520, 420), rid=f"{PKG}:id/open", text="Open", clickable=True),
    view(3, 0, "android.widget.Button", (560, 300, 1040, 420), rid=f"{PKG}:id/help", text="Help", clickable=True),
]
HELP = [
    view(0, -1, "android.widget.FrameLayout", (0, 0, 1080, 2400), children=(1,)),
    view(1, 0, "android.widget.TextView", (40, 100, 1040, 220), rid=f"{PKG}:id/help_text", text="How to"),
]


def event(tag: str, kind: str, start: str, stop: str, **ev: Any) -> dict[str, Any]:
    return {"tag": tag, "start_state": start, "stop_state": stop, "event": {"event_type": kind, **ev}}


@pytest.fixture()
def recording(tmp_path: Path) -> Path:
    (tmp_path / "states").mkdir()
    (tmp_path / "events").mkdir()
    for tag, name, views in (("t0", "main", MAIN), ("t2", "help", HELP)):
        (tmp_path / "states" / f"state_{tag}.json").write_text(json.dumps(state(tag, name, views)))
    events = [
        event("e0", "intent", "home", "main", intent=f"am start {PKG}/.MainActivity"),
        # "Open" was recorded, but the state it led to was not saved
        event("e1", "click", "main", "lost", view={"bounds": [[40, 300], [520, 420]]}),
        event("e2", "click", "main", "help", view={"bounds": [[560, 300], [1040, 420]]}),
        event("e3", "set_text", "main", "main", view={"bounds": [[40, 100], [1040, 220]]}, text="recorded"),
    ]
    for e in events:
        (tmp_path / "events" / f"event_{e['tag']}.json").write_text(json.dumps(e))
    return tmp_path


DOC = f"""\
format: 1
app: {{package: {PKG}, name: Notes, start_screen: main}}
screens:
  main:
    description: the start
    signature: {{all: ["//node[@resource-id='{PKG}:id/open']"]}}
    elements:
      main__search_box: {{kind: input, description: search, identifiers: ["//node[@resource-id='{PKG}:id/search']"]}}
      main__open_button:
        kind: button
        description: opens a note
        identifiers: ["//node[@resource-id='{PKG}:id/open']"]
        leads_to: note
  note:
    description: a note
    signature: {{all: ["//node[@resource-id='{PKG}:id/note_title']"]}}
    elements:
      note__title:
        kind: text
        description: the title
        identifiers: ["//node[@resource-id='{PKG}:id/note_title']"]
        paths: [[main__open_button.tap()]]
"""


@pytest.fixture()
def doc() -> AppDocument:
    result = loads_document(DOC, "notes.yaml")
    assert result.document is not None, result.problems
    return result.document


def field_text(app: ReplayApp) -> str:
    tree = parse_uiautomator(app.dump_xml())
    return next(n.text for n in tree.nodes if n.resource_name == "search")


def test_typed_text_shows_in_the_focused_field(recording: Path) -> None:
    app = ReplayApp(recording)
    assert field_text(app) == "Search"
    app.tap(540, 160)                      # focus the field: not an unmatched input
    for _ in "Search":
        assert app.key("KEYCODE_DEL") is True
    app.input_text("Cal")
    app.input_text("c")                   # `input text` appends
    assert field_text(app) == "Calc" and app.current_state == "main" and app.unmatched == []
    app.tap(800, 360)                      # another state: what was typed is gone with it
    app.key("KEYCODE_BACK")
    assert app.current_state == "help" or field_text(app) == "Search"


def test_recorded_text_is_still_followed(recording: Path) -> None:
    app = ReplayApp(recording)
    app.tap(540, 160)
    for _ in "Search":
        app.key("KEYCODE_DEL")
    app.input_text("recorded")
    assert app.followed[-1].tag == "e3" and app.typed == {}


def test_an_input_whose_outcome_was_not_saved_leads_to_a_screen_that_says_so(recording: Path) -> None:
    app = ReplayApp(recording)
    app.tap(280, 360)
    assert app.current_state == UNRECORDED
    text = field_text_or_message(app)
    assert text.startswith("Not in the recording: the tap at 280,360 on state main (event e1) led to state lost")
    assert app.activity == f"{PKG}.MainActivity"
    assert app.key("KEYCODE_BACK") is True and app.current_state == "main"


def field_text_or_message(app: ReplayApp) -> str:
    tree = parse_uiautomator(app.dump_xml())
    return next(n.text for n in tree.nodes if n.text)


def test_set_text_on_a_replayed_field_passes_its_read_back(recording: Path, doc: AppDocument) -> None:
    app = ReplayApp(recording)
    rt, _, trace = make_runtime(app, doc, grounder=Grounder(doc, config=GroundingConfig(use_embedding=False)))
    result = run_script("$main__search_box.set_text('Calc')\nt = $main__search_box.get_text()", lambda: rt,
                        output=None)
    assert result.ok, result.error
    assert result.variables["t"] == "'Calc'"
    assert [r["verified"] for r in trace.events("action") if r["call"] == "set_text"] == [True]


def test_a_run_on_a_recording_without_the_next_state_says_so(recording: Path, doc: AppDocument) -> None:
    app = ReplayApp(recording)
    rt, _, _ = make_runtime(app, doc, grounder=Grounder(doc, config=GroundingConfig(use_embedding=False)))
    result = run_script("$main__open_button.tap()\nt = $note__title.get_text()", lambda: rt, output=None)
    assert isinstance(result.error, ScreenNotReached)
    assert "showing 'Not in the recording: the tap at" in result.error.message
    assert "which was not saved" in result.error.message
