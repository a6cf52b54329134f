"""The sample app documents: they load cleanly, every sample script checks clean against its
document, and the documents describe the simulated apps truly (each screen's signature matches
that screen and no other, and the elements' identifiers find nodes there)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from tapir.core.document import AppDocument, Dialect
from tapir.docgen.loader import load_document, load_document_report
from tapir.dsl.parser import parse
from tapir.dsl.screen_calls import first_document_use

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
DOCUMENTS = sorted(p for p in SAMPLES.glob("*/*.yaml") if p.parent.name != "suite")  # suite/: tapir eval's tasks
SCRIPTS = sorted(SAMPLES.glob("*/*.tap"))


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_sample_documents_load_without_problems(path: Path) -> None:
    result = load_document_report(path)
    assert result.problems == (), [str(p) for p in result.problems]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sample_scripts_check_clean(path: Path) -> None:
    from tapir.service import Workspace

    result = Workspace().check(path)
    if result.document is None:  # a Maestro-style flow of screen-level actions needs none (docs/maestro.md)
        assert first_document_use(parse(result.source)) is None, "sample scripts name their document on the first line"
    assert [d.render(result.source, str(path)) for d in result.diagnostics] == []
    assert result.related == ()  # and the document has no problem either


def _matches(root: Any, xpath: str) -> bool:
    return bool(etree.XPath(xpath)(root))


# How to bring the simulated Music app to each screen of samples/music/music.yaml (toolkit calls),
# and the elements that legitimately are absent there in that state.
MUSIC_SCREENS: dict[str, tuple[Callable[[Any], None], set[str]]] = {
    "songs_screen": (lambda a: None, {"now_playing_bar", "now_playing_title", "play_pause_button"}),
    "main_menu": (lambda a: a.tap(*_center(a, "More options")), set()),
    "song_options_menu": (lambda a: a.open("song_options", song=1), set()),
    "add_to_playlist_dialog": (lambda a: a.open("add_to_playlist", song=1), set()),
    "new_playlist_dialog": (lambda a: a.open("new_playlist"), {"error_text"}),
    "song_properties_dialog": (lambda a: a.open("song_properties", song=1), set()),
    "delete_song_dialog": (lambda a: a.open("delete_song", song=1), set()),
    "sort_dialog": (lambda a: a.open("sort_songs"), set()),
    "playlists_screen": (lambda a: a.switch("playlists"),
                         {"now_playing_bar", "now_playing_title", "play_pause_button"}),
    "playlist_screen": (lambda a: a.open("playlist", playlist=1), {"empty_text", "now_playing_bar", "now_playing_title",
                                                                   "play_pause_button"}),
    "playlist_menu": (lambda a: (a.open("playlist", playlist=1), a.tap(*_center(a, "More options"))), set()),
    "playlist_song_menu": (lambda a: a.open("playlist_song_options", song=1, playlist=1), set()),
    "rename_playlist_dialog": (lambda a: a.open("rename_playlist", playlist=1), set()),
    "delete_playlist_dialog": (lambda a: a.open("delete_playlist", playlist=1), set()),
    "search_screen": (lambda a: a.open("search"), {"result_count", "result_list", "result_title", "result_artist",
                                                   "result_more_button"}),
    "now_playing_screen": (lambda a: (a.play(1), a.open("now_playing")), {"empty_text"}),
    "settings_screen": (lambda a: a.open("settings"), set()),
    "theme_dialog": (lambda a: (a.open("settings"), a.open("theme")), set()),
}


def _center(app: Any, desc: str) -> tuple[int, int]:
    root = etree.fromstring(app.dump_xml().encode())
    node = root.xpath(f"//node[@content-desc='{desc}']")[0]
    x1, y1, x2, y2 = (int(v) for v in node.get("bounds").replace("][", ",").strip("[]").split(","))
    return (x1 + x2) // 2, (y1 + y2) // 2


def _dumps(app_name: str, plan: dict[str, tuple[Callable[[Any], None], set[str]]]) -> dict[str, tuple[str, str]]:
    """Each planned screen's dump and activity, from a fresh app brought there."""
    from tapir.sim.apps import get_app

    dumps = {}
    for name, (bring, _) in plan.items():
        app: Any = get_app(app_name)
        app.reset()
        bring(app)
        dumps[name] = (app.dump_xml(), app.activity)
    return dumps


def _visit(doc: AppDocument, app_name: str, plan: dict[str, tuple[Callable[[Any], None], set[str]]]) -> dict[str, Any]:
    dumps = _dumps(app_name, plan)
    return {name: (etree.fromstring(xml.encode()), activity) for name, (xml, activity) in dumps.items()}


NOTES_SCREENS: dict[str, tuple[Callable[[Any], None], set[str]]] = {
    "notes_screen": (lambda a: None, {"empty_text"}),
    "main_menu": (lambda a: a.tap(*_center(a, "More options")), set()),
    "note_options_menu": (lambda a: a.open("note_options", note=1), set()),
    "sort_dialog": (lambda a: a.open("sort_notes"), set()),
    # Note 1 is a checklist: the text-note elements are absent there.
    "note_screen": (lambda a: a.open("note", note=1), {"body_text", "modified_text"}),
    "delete_note_dialog": (lambda a: a.open("delete_note", note=1), set()),
    "edit_note_screen": (lambda a: a.open("edit_note"), set()),
    "discard_changes_dialog": (lambda a: a.open("discard_changes"), set()),
    "rate_dialog": (lambda a: a.open("rate_app"), set()),
    # signed out: the error and Sign out are absent
    "account_screen": (lambda a: a.open("account"), {"error_text", "sign_out_button"}),
}

CONTACTS_SCREENS: dict[str, tuple[Callable[[Any], None], set[str]]] = {
    "contacts_screen": (lambda a: None, set()),
    "favourites_screen": (lambda a: a.switch("favourites"), {"empty_text"}),
    "main_menu": (lambda a: a.tap(*_center(a, "More options")), set()),
    "sort_dialog": (lambda a: a.open("sort_contacts"), set()),
    "search_screen": (lambda a: a.open("search"), {"result_list", "result_name", "result_number"}),
    "contact_details_screen": (lambda a: a.open("contact_details", contact=1), set()),
    "contact_menu": (lambda a: (a.open("contact_details", contact=1), a.tap(*_center(a, "More options"))), set()),
    "delete_contact_dialog": (lambda a: a.open("delete_contact", contact=1), set()),
    "edit_contact_screen": (lambda a: a.open("edit_contact"), {"email_error"}),
    "discard_changes_dialog": (lambda a: a.open("discard_changes"), set()),
}

CLOCK_SCREENS: dict[str, tuple[Callable[[Any], None], set[str]]] = {
    "clock_screen": (lambda a: None, set()),
    "main_menu": (lambda a: a.tap(*_center(a, "More options")), set()),
    "alarm_screen": (lambda a: a.switch("alarm"), {"empty_text"}),
    "alarm_options_menu": (lambda a: a.open("alarm_options", alarm=1), set()),
    "time_picker_dialog": (lambda a: a.open("time_picker"), {"error_text"}),
    "alarm_label_dialog": (lambda a: a.open("alarm_label", alarm=1), set()),
    "stopwatch_screen": (lambda a: a.switch("stopwatch"), {"lap_list", "lap_number", "lap_time"}),
    # Idle timer: the running and finished elements are absent.
    "timer_screen": (lambda a: a.switch("timer"), {"remaining_text", "pause_button", "reset_button",
                                                   "finished_text", "stop_button"}),
    "settings_screen": (lambda a: a.open("settings"), set()),
    "snooze_dialog": (lambda a: (a.open("settings"), a.open("snooze_length")), set()),
}

WEATHER_SCREENS: dict[str, tuple[Callable[[Any], None], set[str]]] = {
    # no refresh status before a refresh (tests/test_script_features_e2e.py shows both)
    "forecast_screen": (lambda a: None, {"updating_text", "updated_text"}),
    "day_dialog": (lambda a: a.open("day_details", day=2), set()),
    "main_menu": (lambda a: a.tap(*_center(a, "More options")), set()),
    "settings_screen": (lambda a: a.open("settings"), set()),
    # the look-alikes: each dialog's own texts show only on it
    "theme_dialog": (lambda a: (a.open("settings"), a.open("theme")), set()),
    "units_dialog": (lambda a: (a.open("settings"), a.open("units")), set()),
    "wind_dialog": (lambda a: (a.open("settings"), a.open("wind")), set()),
    "refresh_dialog": (lambda a: (a.open("settings"), a.open("refresh")), set()),
    "clear_history_dialog": (lambda a: (a.open("settings"), a.open("clear_history_confirm")), set()),
    "locations_screen": (lambda a: a.open("locations"), set()),
    "location_menu": (lambda a: (a.open("locations"), a.open("location_options", city=2)), set()),
    "remove_location_dialog": (lambda a: (a.open("locations"), a.open("remove_location", city=2)), set()),
}

SIM_DOCUMENTS = {"music": MUSIC_SCREENS, "notes": NOTES_SCREENS, "contacts": CONTACTS_SCREENS, "clock": CLOCK_SCREENS,
                 "weather": WEATHER_SCREENS}


@pytest.mark.parametrize("app_name", sorted(SIM_DOCUMENTS))
def test_document_describes_the_simulated_app(app_name: str) -> None:
    pytest.importorskip("tapir.sim.apps")
    plan = SIM_DOCUMENTS[app_name]
    doc = load_document(SAMPLES / app_name / f"{app_name}.yaml")
    assert set(plan) == {s.name for s in doc.screens}
    trees = _visit(doc, app_name, plan)
    problems = []
    for screen in doc.screens:
        root, activity = trees[screen.name]
        sig = screen.signature
        if sig.activity and not activity.endswith(sig.activity):
            problems.append(f"{screen.name}: activity {activity} is not {sig.activity}")
        for ident in sig.all_of:
            assert ident.dialect is Dialect.UIAUTOMATOR
            if not _matches(root, ident.xpath):
                problems.append(f"{screen.name}: signature {ident.xpath} does not match its screen")
        # The signature must tell the screen apart from every other visited screen (documents
        # written like an explorer's share signatures between look-alikes: the screens must then
        # be told apart by identification, checked below).
        for other in doc.screens:
            if other.name == screen.name or app_name in LOOKALIKE_DOCUMENTS:
                continue
            o_root, o_activity = trees[other.name]
            if (not sig.activity or o_activity.endswith(sig.activity)) and all(
                    _matches(o_root, i.xpath) for i in sig.all_of):
                problems.append(f"{screen.name}: signature also matches {other.name}")
        absent = plan[screen.name][1]
        for e in screen.elements:
            if e.local_name in absent:
                continue
            if not any(_matches(root, i.xpath) for i in e.identifiers):
                problems.append(f"{e.name}: no identifier matches on {screen.name}")
    if app_name in LOOKALIKE_DOCUMENTS:
        from tapir.hierarchy import parse_uiautomator
        from tapir.runtime.grounding import Grounder, GroundingConfig

        grounder = Grounder(doc, config=GroundingConfig(use_embedding=False))
        for name, (xml, _) in _dumps(app_name, plan).items():
            match = grounder.identify_screen(parse_uiautomator(xml))
            if match.name != name or not match.confident:
                problems.append(f"{name} identified as {match.name} ({match.detail})")
    assert problems == []


#: Documents whose look-alike screens share one signature, as an explorer writes them.
LOOKALIKE_DOCUMENTS = {"weather"}


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_generated_outputs_of_the_samples_are_up_to_date(path: Path) -> None:
    from tapir.docgen.compile import compile_document

    out_dir = path.parent / "generated"
    compiled = compile_document(path, out_dir=out_dir)
    for name, text in compiled.files.items():
        assert (out_dir / name).read_text(encoding="utf-8") == text, (
            f"{out_dir / name} is stale: run `tapir compile {path.relative_to(SAMPLES.parent)}`")
