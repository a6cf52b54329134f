"""Documents from DroidBot recordings in one call (``document_from_recording``): broken recordings
are imported as far as they can be read, with a warning per file or event left out, and every
recording of ../shared/upstream becomes a document that validates (skipped when it is absent)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tapir.core.document import AppDocument
from tapir.docgen.build import document_from_recording, import_droidbot
from tapir.docgen.loader import loads_document

PACKAGE = "org.example.todo"

# ---------------------------------------------------------------------------------------------
# A small recording written in tmp_path: a main screen and a settings screen


def _view(temp_id: int, parent: int, cls: str, bounds: tuple[int, int, int, int], *, rid: str | None = None,
          text: str | None = None, clickable: bool = False, checkable: bool = False,
          children: list[int] | None = None) -> dict[str, Any]:
    x1, y1, x2, y2 = bounds
    return {"temp_id": temp_id, "parent": parent, "children": children or [], "class": cls,
            "resource_id": f"{PACKAGE}:id/{rid}" if rid else None, "text": text, "content_description": None,
            "bounds": [[x1, y1], [x2, y2]], "clickable": clickable, "checkable": checkable, "checked": False,
            "selected": False, "scrollable": False, "editable": False, "enabled": True, "focused": False,
            "visible": True, "long_clickable": False, "package": PACKAGE}


def _main_views() -> list[dict[str, Any]]:
    return [
        _view(0, -1, "android.widget.FrameLayout", (0, 0, 1080, 2280), children=[1, 2, 3]),
        _view(1, 0, "android.widget.TextView", (0, 0, 800, 150), rid="toolbar_title", text="Tasks"),
        _view(2, 0, "android.widget.ImageButton", (900, 0, 1080, 150), rid="settings", clickable=True),
        _view(3, 0, "android.widget.Button", (40, 2000, 1040, 2200), rid="add_task", text="Add task",
              clickable=True),
    ]


def _settings_views() -> list[dict[str, Any]]:
    return [
        _view(0, -1, "android.widget.FrameLayout", (0, 0, 1080, 2280), children=[1, 2, 3]),
        _view(1, 0, "android.widget.TextView", (0, 0, 800, 150), rid="settings_title", text="Settings"),
        _view(2, 0, "android.widget.CheckBox", (40, 300, 1040, 450), rid="dark_theme", text="Dark theme",
              clickable=True, checkable=True),
        _view(3, 0, "android.widget.Button", (40, 500, 1040, 650), rid="about", text="About", clickable=True),
    ]


def _state(tag: str, state_str: str, activity: str, views: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tag": tag, "state_str": state_str, "foreground_activity": f"{PACKAGE}/{activity}",
            "width": 1080, "height": 2280, "views": views}


def _event(tag: str, start: str, stop: str, event: dict[str, Any]) -> dict[str, Any]:
    return {"tag": tag, "event": event, "start_state": start, "stop_state": stop}


def _write(folder: Path, name: str, data: dict[str, Any] | str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def _recording(root: Path) -> Path:
    """A sound recording: start, open settings, back, open settings again, back."""
    states, events = root / "states", root / "events"
    main = _main_views()
    settings = _settings_views()
    _write(states, "state_2024-01-01_100000.json", _state("2024-01-01_100000", "MAIN", ".MainActivity", main))
    _write(states, "state_2024-01-01_100010.json",
           _state("2024-01-01_100010", "SETTINGS", ".SettingsActivity", settings))
    _write(states, "state_2024-01-01_100020.json", _state("2024-01-01_100020", "MAIN", ".MainActivity", main))
    _write(states, "state_2024-01-01_100030.json",
           _state("2024-01-01_100030", "SETTINGS", ".SettingsActivity", settings))
    _write(states, "state_2024-01-01_100040.json", _state("2024-01-01_100040", "MAIN", ".MainActivity", main))
    _write(events, "event_2024-01-01_095959.json", _event(
        "2024-01-01_095959", "MAIN", "MAIN",
        {"event_type": "intent", "intent": f"am start {PACKAGE}/.MainActivity"}))
    for tag, start, stop, ev in [
        ("2024-01-01_100005", "MAIN", "SETTINGS", {"event_type": "click", "view": main[2]}),
        ("2024-01-01_100015", "SETTINGS", "MAIN", {"event_type": "key", "name": "BACK"}),
        ("2024-01-01_100025", "MAIN", "SETTINGS", {"event_type": "click", "view": main[2]}),
        ("2024-01-01_100035", "SETTINGS", "MAIN", {"event_type": "key", "name": "BACK"}),
    ]:
        _write(events, f"event_{tag}.json", _event(tag, start, stop, ev))
    return root


def _break(root: Path) -> None:
    """What real recordings hold: empty and cut-off files, a state that is not a hierarchy, and
    events that point at states that were never recorded."""
    _write(root / "states", "state_2024-01-01_100050.json", "")
    _write(root / "states", "state_2024-01-01_100060.json", '{"tag": "2024-01-01_100060", "views": [')
    _write(root / "states", "state_2024-01-01_100070.json", {"tag": "2024-01-01_100070", "state_str": "ODD"})
    _write(root / "events", "event_2024-01-01_100045.json", "")
    _write(root / "events", "event_2024-01-01_100046.json", "[1, 2]")
    _write(root / "events", "event_2024-01-01_100047.json", _event(
        "2024-01-01_100047", "MAIN", "GONE", {"event_type": "click", "view": _main_views()[3]}))
    _write(root / "events", "event_2024-01-01_100048.json", _event(
        "2024-01-01_100048", "NEVER", "MAIN", {"event_type": "key", "name": "BACK"}))


def test_a_sound_recording_becomes_a_document(tmp_path: Path) -> None:
    text, report = document_from_recording(_recording(tmp_path / "rec"))
    doc = loads_document(text).document
    assert doc is not None and doc.app.package == PACKAGE
    assert report.screens == 2 and report.elements > 0
    assert report.recording.warnings == [] and report.recording.steps == 5


def test_a_broken_recording_is_read_as_far_as_it_goes(tmp_path: Path) -> None:
    rec = _recording(tmp_path / "rec")
    _break(rec)
    text, report = document_from_recording(rec)
    assert loads_document(text).document is not None
    assert report.screens == 2 and report.elements > 0 and report.recording.steps == 5
    skipped = report.recording.skipped
    assert skipped["state files that cannot be read"] == 3
    assert skipped["event files that cannot be read"] == 2
    assert skipped["events whose start or stop state was not recorded"] == 2
    # one line each, naming the file
    warnings = report.recording.warnings
    assert len(warnings) == 7 and all(w in report.warnings for w in warnings)
    for name in ("state_2024-01-01_100050.json", "state_2024-01-01_100060.json", "state_2024-01-01_100070.json",
                 "event_2024-01-01_100045.json", "event_2024-01-01_100046.json"):
        assert sum(name in w and "cannot be read" in w for w in warnings) == 1
    assert any("event_2024-01-01_100047.json: its stop state GONE was not recorded" in w for w in warnings)
    assert any("event_2024-01-01_100048.json: its start state NEVER was not recorded" in w for w in warnings)
    assert "warning: state file state_2024-01-01_100050.json cannot be read" in report.render()


def test_documents_from_recordings_are_deterministic(tmp_path: Path) -> None:
    rec = _recording(tmp_path / "rec")
    _break(rec)
    first, report = document_from_recording(rec)
    second, _ = document_from_recording(rec, package=PACKAGE)
    # named after the recording, not the temporary trace it went through
    assert first == second and str(rec) in first and "tapir-droidbot-" not in first
    assert report.to_json()["recording"]["left_out"]["event files that cannot be read"] == 2


def test_a_recording_with_no_readable_state_is_refused(tmp_path: Path) -> None:
    from tapir.core.errors import UsageError

    _write(tmp_path / "rec" / "states", "state_1.json", "")
    (tmp_path / "rec" / "events").mkdir()
    with pytest.raises(UsageError, match="no readable state"):
        import_droidbot(tmp_path / "rec", tmp_path / "trace")


def test_the_replayed_app_skips_what_it_cannot_read(tmp_path: Path) -> None:
    from tapir.sim.replay import ReplayApp

    rec = _recording(tmp_path / "rec")
    _break(rec)
    app = ReplayApp(rec)
    assert app.package == PACKAGE and len(app.states) == 2
    assert sum("cannot be read" in w for w in app.warnings) == 3 and len(app.warnings) == 5


def test_explore_imports_a_broken_recording_and_says_what_it_left_out(tmp_path: Path) -> None:
    rec = _recording(tmp_path / "rec")
    _break(rec)
    env = dict(os.environ, ADBUTILS_ADB_PATH="/bin/false")
    run = subprocess.run([sys.executable, "-m", "tapir.cli", "explore", "--import-droidbot", str(rec),
                          "-o", str(tmp_path / "trace")], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert "left out: 2 event files that cannot be read" in run.stdout
    assert "warning: event file event_2024-01-01_100045.json cannot be read" in run.stdout


# ---------------------------------------------------------------------------------------------
# Every real recording (../shared/upstream)

_UPSTREAM = Path(os.environ.get("TAPIR_UPSTREAM") or Path(__file__).resolve().parents[2] / "shared" / "upstream")
_APPS_DIR = _UPSTREAM / "droidtask" / "apps"
#: The app folders holding a recording; one placeholder when the data is absent (then skipped).
_APPS = sorted(p.name for p in _APPS_DIR.iterdir() if (p / "states").is_dir()) if _APPS_DIR.is_dir() else ["-"]


@pytest.mark.upstream
@pytest.mark.parametrize("app", _APPS)
def test_every_upstream_recording_becomes_a_document(app: str, upstream: Path) -> None:
    began = time.perf_counter()
    text, report = document_from_recording(upstream / "droidtask" / "apps" / app)
    seconds = time.perf_counter() - began
    doc = loads_document(text).document
    assert doc is not None
    assert report.screens > 0 and report.elements > 0
    assert len(doc.screens) == report.screens
    assert report.recording.package in (doc.app.package, "unknown") and report.recording.steps > 0
    # the largest recording (328 states) takes a few seconds on a slow shared machine
    assert seconds < 30, f"{app} took {seconds:.1f} s"
    # an effect says what the description does not ("tap to toggle it" is a switch's description)
    assert not [e.name for e in doc.elements if e.effect and e.effect in e.description]


def _built(upstream: Path, app: str) -> AppDocument:
    """The document Tapir builds from ``app``'s DroidTask recording (skipped when it is not here)."""
    app_dir = upstream / "droidtask" / "apps" / app
    if not (app_dir / "states").is_dir():
        pytest.skip(f"the {app} recording is not here")
    doc = loads_document(document_from_recording(app_dir)[0]).document
    assert doc is not None
    return doc


@pytest.mark.upstream
def test_a_page_recorded_scrolled_is_one_screen_and_dialogs_sharing_a_frame_are_not(upstream: Path) -> None:
    doc = _built(upstream, "contacts")
    locals_of = {s.name: {e.name.split("__", 1)[1] for e in s.elements} for s in doc.screens}
    # the Settings page was recorded at its top (Customize colors) and at its bottom (the dialpad
    # switch): one screen, not two with one's name made up from another screen's
    (settings,) = [s for s, names in locals_of.items()
                   if "customize_colors_button" in names and any("dialpad" in n for n in names)]
    assert settings == "settings_screen"
    # the tabs' checkboxes, the groups' checkboxes and the date picker are each a dialog of its own
    # in the platform's one frame
    holding = [s for s, names in locals_of.items()
               if names & {"favorites_checkbox", "groupname_checkbox", "previous_month_button"}]
    assert len(holding) == 3, holding


@pytest.mark.upstream
def test_a_dialog_with_no_title_and_no_opener_is_named_by_its_own_ids(upstream: Path) -> None:
    doc = _built(upstream, "calendar")
    # the alarm sound picker (dialog_select_alarm_system_radio): no title, no recorded way in
    assert doc.screen("select_alarm_system_dialog") is not None and doc.screen("dialog") is None
