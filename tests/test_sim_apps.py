"""The sample apps' main flows, driven in-process through the SimApp methods (tap, type, keys, swipes)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from tapir.sim.app import SimApp
from tapir.sim.apps import APP_NAMES, get_app
from tapir.sim.errors import SimUsageError
from tapir.sim.toolkit import Node, ToolkitApp
from tapir.sim.toolkit.explore import crawl


def scroll_to(app: ToolkitApp, text: str, list_x: int = 540) -> Node:
    """Swipe down the list until ``text`` is fully on screen (the way a script would look for it)."""
    for _ in range(40):
        node = app.find(text=text)
        if node is not None and node.bounds.height >= 50:
            return node
        app.swipe(list_x, 1900, list_x, 1400, 150)
    raise AssertionError(f"{text!r} never appeared")


def in_row(app: ToolkitApp, node: Node, ident: str) -> Node:
    """The element ``ident`` in the same list row (the smallest container holding both)."""
    x, y = node.bounds.center
    suffix = f":id/{ident}"
    holders = [n for n in app.window().walk()
               if n.bounds.contains(x, y) and any(d.resource_id.endswith(suffix) for d in n.walk())]
    row = min(holders, key=lambda n: n.bounds.width * n.bounds.height)
    return next(d for d in row.walk() if d.resource_id.endswith(suffix))


def texts(app: ToolkitApp, ident: str) -> list[str]:
    return [n.text for n in app.find_all(id=ident)]


def type_into(app: ToolkitApp, ident: str, text: str) -> None:
    app.tap_on(id=ident)
    app.input_text(text)


# ---------------------------------------------------------------------------------------------- registry


def test_registry_knows_the_apps() -> None:
    assert set(APP_NAMES) == {"music", "notes", "clock", "contacts", "weather"}
    for name in APP_NAMES:
        app = get_app(name)
        assert isinstance(app, SimApp)
        assert app.package == f"org.tapir.{name}" and app.screen_size == (1080, 2400)
        assert app.activity.startswith(app.package + ".activities.")


def test_unknown_app_names_the_known_ones() -> None:
    with pytest.raises(SimUsageError) as err:
        get_app("calendar")
    assert "calendar" in err.value.message and "music" in (err.value.hint or "")


@pytest.mark.parametrize("name", APP_NAMES)
def test_apps_are_deterministic_and_resettable(name: str) -> None:
    one, two = get_app(name), get_app(name)
    assert one.dump_xml() == two.dump_xml()
    fresh = one.dump_xml()
    for app in (one, two):
        node = next(n for n in app.window().walk() if n.clickable and n.resource_id.endswith(("_item", "tab_alarm")))
        app.tap(*node.bounds.center)
        app.swipe(540, 1900, 540, 1000, 100)
    assert one.dump_xml() == two.dump_xml()
    one.reset()
    assert one.dump_xml() == fresh and one.key("KEYCODE_BACK") is False


@pytest.mark.parametrize("name", APP_NAMES)
def test_elements_md_names_only_ids_the_app_has(name: str, repo: Path) -> None:
    """samples/<app>/ELEMENTS.md is the contract for app documents: its ids must exist in the app."""
    doc = (repo / "samples" / name / "ELEMENTS.md").read_text(encoding="utf-8")
    # the generated "Names for scripts" section names screens and elements of the document, not ids
    doc = doc.split("<!-- script names:")[0]
    named = {t for t in re.findall(r"`([a-z][a-z0-9_]*)`", doc) if "_" in t}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and len(cells) > 1:
            named |= set(re.findall(r"`([a-z][a-z0-9_]*)`", cells[1]))
    app = get_app(name)
    source = inspect.getsource(type(app))
    known = set(re.findall(r'id="([a-z0-9_]+)"', source)) | set(app._views) | {"selected", "checked"}
    for view in crawl(app).values():
        known |= {n.resource_id.split(":id/")[-1] for n in view.window().walk() if n.resource_id}
    assert named - known == set()
    assert len(named) > 15


# ---------------------------------------------------------------------------------------------- music


def test_music_library_scrolls_to_its_last_song() -> None:
    app = get_app("music")
    assert app.find(id="songs_count").text == "44 songs"
    first = texts(app, "song_title")
    assert first[0] == "Amalfi Blue" and "Wild Thyme" not in first
    node = scroll_to(app, "Wild Thyme")
    assert in_row(app, node, "song_artist").text == "The Quiet Foxes"
    assert in_row(app, node, "song_duration").text == "3:29"


def test_music_add_song_to_existing_playlist() -> None:
    app = get_app("music")
    title = scroll_to(app, "Midnight Drive")
    app.tap(*in_row(app, title, "song_more").bounds.center)
    assert app.current_dialog == "song_options"
    assert [n.text for n in app.find_all(id="title")] == ["Play", "Play next", "Add to playlist", "Share",
                                                           "Properties", "Delete"]
    app.tap_on(text="Add to playlist")
    assert app.find(id="android:id/alertTitle").text == "Add to playlist"
    app.tap_on(text="Road trip")
    road_trip = next(p for p in app.state.playlists if p.name == "Road trip")
    assert app.state.song(road_trip.songs[-1]).title == "Midnight Drive"
    assert app.current_dialog is None and app.toasts[-1] == "Added to Road trip"
    app.tap_on(id="tab_playlists")
    row = app.find(text="Road trip")
    assert in_row(app, row, "playlist_song_count").text == "5 songs"
    app.tap(*row.bounds.center)
    assert app.current_screen == "playlist"
    assert "Midnight Drive" in texts(app, "song_title")
    assert app.key("KEYCODE_BACK") and app.current_screen == "playlists"


def test_music_add_song_to_a_new_playlist() -> None:
    app = get_app("music")
    app.tap(*in_row(app, app.find(text="Blue Hour Rave"), "song_more").bounds.center)
    app.tap_on(text="Add to playlist")
    app.tap_on(text="New playlist")
    assert app.current_dialog == "new_playlist"
    create = app.find(text="Create")
    assert not create.enabled and app.find(id="playlist_name_input").focused
    app.tap(*create.bounds.center)
    assert app.current_dialog == "new_playlist"  # disabled: nothing happens
    app.input_text("Road trip")
    assert app.find(id="playlist_name_error").text == "A playlist with this name already exists"
    assert not app.find(text="Create").enabled
    for _ in "Road trip":
        app.key("KEYCODE_DEL")
    app.input_text("Night drive")
    app.tap_on(text="Create")
    night = next(p for p in app.state.playlists if p.name == "Night drive")
    assert [app.state.song(s).title for s in night.songs] == ["Blue Hour Rave"]
    assert app.current_dialog is None and app.current_screen == "songs"


def test_music_playing_shows_in_the_now_playing_bar() -> None:
    app = get_app("music")
    assert app.find(id="now_playing_bar") is None
    app.tap_on(text="Canyon Echo")
    assert app.find(id="now_playing_title").text == "Canyon Echo"
    assert app.find(id="now_playing_play_pause").desc == "Pause"
    row = next(n for n in app.find_all(id="song_item") if n.selected)
    assert in_row(app, row, "song_title").text == "Canyon Echo"
    app.tap_on(id="now_playing_play_pause")
    assert app.find(id="now_playing_play_pause").desc == "Play" and not app.state.playing
    app.tap_on(id="now_playing_bar")
    assert app.current_screen == "now_playing" and app.find(id="player_title").text == "Canyon Echo"
    app.tap_on(desc="Play")  # paused since the start, the song stood at 0:01; the tap lets a second pass
    app.advance(61)
    assert app.find(id="player_position").text == "1:03"
    app.tap_on(desc="Next")
    assert app.find(id="player_title").text == "Cinder"


def test_music_theme_is_a_radio_choice_in_settings() -> None:
    app = get_app("music")
    app.tap_on(desc="More options")
    app.tap_on(text="Settings")
    assert app.current_screen == "settings" and app.activity == "org.tapir.music.activities.SettingsActivity"
    assert app.find(id="settings_theme").text == "White"
    app.tap_on(id="settings_theme_holder")
    radios = app.find(id="dialog_radio_group").children
    assert [(r.text, r.checked) for r in radios] == [("White", True), ("Dark", False), ("Auto light / dark", False)]
    assert all(r.cls == "android.widget.RadioButton" and r.resource_id == "" for r in radios)
    app.tap_on(text="Dark")
    assert app.state.theme == "Dark" and app.current_dialog is None
    assert app.find(id="settings_theme").text == "Dark"
    switch = app.find(id="settings_show_album_art")
    assert switch.checked and not switch.clickable
    app.tap_on(id="settings_show_album_art_holder")
    assert not app.find(id="settings_show_album_art").checked
    app.key("KEYCODE_BACK")
    assert app.find(id="song_art") is None  # album art hidden in the list


def test_music_search_filters_as_you_type() -> None:
    app = get_app("music")
    app.tap_on(desc="Search")
    assert app.current_screen == "search" and app.find(id="search_input").focused
    app.input_text("kestrel")
    assert app.find(id="results_count").text == "6 results"
    assert set(texts(app, "song_artist")) == {"Kestrel"}
    for _ in range(7):
        app.key("KEYCODE_DEL")
    app.input_text("zzz")
    assert app.find(id="search_empty").text == "No results"
    assert app.key("KEYCODE_BACK") and app.current_screen == "songs"


def test_music_delete_song_asks_first() -> None:
    app = get_app("music")
    app.long_tap(*app.find(text="Amalfi Blue").bounds.center)
    app.tap_on(text="Delete")
    assert app.find(id="android:id/message").text.startswith("“Amalfi Blue” will be removed")
    app.tap_on(text="Cancel")
    assert app.find(id="songs_count").text == "44 songs"
    app.long_tap(*app.find(text="Amalfi Blue").bounds.center)
    app.tap_on(text="Delete")
    app.tap_on(id="android:id/button1")
    assert app.find(id="songs_count").text == "43 songs" and app.find(text="Amalfi Blue") is None
    assert "Amalfi Blue" not in [s.title for s in app.state.songs]


# ---------------------------------------------------------------------------------------------- notes


def test_notes_create_edit_delete() -> None:
    app = get_app("notes")
    app.tap_on(desc="New note")
    assert app.current_screen == "edit_note" and app.find(id="note_title_input").focused
    app.input_text("Holiday plan")
    type_into(app, "note_body_input", "Book the ferry")
    app.tap_on(desc="Save")
    assert app.current_screen == "note" and app.find(id="note_body").text == "Book the ferry"
    app.key("KEYCODE_BACK")
    top = app.find_all(id="note_item")[0]
    assert in_row(app, top, "note_title").text == "Holiday plan"  # newest first
    assert in_row(app, top, "note_modified").text.startswith("Edited today, 10:08")
    app.tap(*top.bounds.center)
    app.tap_on(desc="Edit")
    assert app.find(id="note_body_input").text == "Book the ferry"
    type_into(app, "note_body_input", " and the hotel")
    app.tap_on(desc="Save")
    assert app.find(id="note_body").text == "Book the ferry and the hotel"
    app.tap_on(desc="Delete")
    assert app.find(id="android:id/alertTitle").text == "Delete note?"
    app.tap_on(text="Cancel")
    assert app.current_screen == "note"
    app.tap_on(desc="Delete")
    app.tap_on(text="Delete")
    assert app.current_screen == "notes" and app.find(text="Holiday plan") is None
    assert all(n.title != "Holiday plan" for n in app.state.notes)


def test_notes_unsaved_changes_ask_before_leaving() -> None:
    app = get_app("notes")
    app.tap_on(desc="New note")
    app.input_text("Draft")
    assert app.key("KEYCODE_BACK") and app.current_dialog == "discard_changes"
    app.tap_on(text="Keep editing")
    assert app.current_screen == "edit_note" and app.find(id="note_title_input").text == "Draft"
    app.tap_on(desc="Navigate up")
    app.tap_on(text="Discard")
    assert app.current_screen == "notes" and len(app.state.notes) == 12


def test_notes_checklist_items_toggle_and_grow() -> None:
    app = get_app("notes")
    app.tap_on(text="Shopping list")
    assert app.find(id="checklist_progress").text == "1 of 5 done"
    milk = app.find(text="Milk")
    assert milk.cls == "android.widget.CheckBox" and not milk.checked
    app.tap(*milk.bounds.center)
    assert app.find(text="Milk").checked and app.find(id="checklist_progress").text == "2 of 5 done"
    type_into(app, "new_item_input", "Oat milk")
    app.key("KEYCODE_ENTER")
    assert texts(app, "checklist_item_checkbox")[-1] == "Oat milk"
    assert app.find(id="new_item_input").text == "Add item"  # emptied, shows its hint again
    app.tap(*in_row(app, app.find(text="Bread"), "checklist_item_delete").bounds.center)
    assert "Bread" not in texts(app, "checklist_item_checkbox")
    app.key("KEYCODE_BACK")
    assert in_row(app, app.find(text="Shopping list"), "note_preview").text == "2 of 5 done"


def test_notes_new_checklist() -> None:
    app = get_app("notes")
    app.tap_on(desc="New checklist")
    app.input_text("Camping")
    app.tap_on(desc="Save")
    assert app.current_screen == "note" and app.find(id="checklist_empty") is not None
    type_into(app, "new_item_input", "Tent")
    app.tap_on(desc="Add item")
    assert texts(app, "checklist_item_checkbox") == ["Tent"]


def test_notes_list_scrolls() -> None:
    app = get_app("notes")
    assert app.find(text="Passwords hint") is None
    scroll_to(app, "Passwords hint")


# ---------------------------------------------------------------------------------------------- clock


def add_alarm(app: ToolkitApp, hour: str, minute: str) -> None:
    app.tap_on(desc="Add alarm")
    type_into(app, "picker_hour", hour)
    type_into(app, "picker_minute", minute)
    app.tap_on(text="OK")


def test_clock_add_toggle_and_delete_alarm() -> None:
    app = get_app("clock")
    assert app.find(id="clock_time").text == "10:08"
    app.tap_on(id="tab_alarm")
    assert texts(app, "alarm_time") == ["06:45", "08:00"]
    add_alarm(app, "7", "30")
    assert texts(app, "alarm_time") == ["06:45", "07:30", "08:00"]
    assert app.toasts[-1] == "Alarm set for 21 hours and 22 minutes from now"
    switch = in_row(app, app.find(text="07:30"), "alarm_switch")
    assert switch.checked and switch.cls == "android.widget.Switch"
    app.tap(*switch.bounds.center)
    assert not in_row(app, app.find(text="07:30"), "alarm_switch").checked
    assert [a.enabled for a in app.state.alarms if (a.hour, a.minute) == (7, 30)] == [False]
    app.tap(*in_row(app, app.find(text="07:30"), "alarm_more").bounds.center)
    app.tap_on(text="Delete")
    assert texts(app, "alarm_time") == ["06:45", "08:00"]


def test_clock_time_picker_buttons_and_validation() -> None:
    app = get_app("clock")
    app.tap_on(id="tab_alarm")
    app.tap_on(desc="Add alarm")
    assert app.find(id="picker_hour").text == "10" and app.find(id="picker_minute").text == "08"
    app.tap_on(desc="Increase hour")
    app.tap_on(desc="Decrease minute")
    app.tap_on(desc="Decrease minute")
    assert (app.find(id="picker_hour").text, app.find(id="picker_minute").text) == ("11", "06")
    type_into(app, "picker_hour", "25")
    assert not app.find(text="OK").enabled and app.find(id="picker_error") is not None
    type_into(app, "picker_hour", "23")
    app.tap_on(text="OK")
    assert "23:06" in texts(app, "alarm_time")


def test_clock_12_hour_format_changes_every_time() -> None:
    app = get_app("clock")
    app.tap_on(desc="More options")
    app.tap_on(text="Settings")
    app.tap_on(id="settings_use_24h_holder")
    app.key("KEYCODE_BACK")
    assert app.find(id="clock_time").text == "10:08 AM"
    app.tap_on(id="tab_alarm")
    assert texts(app, "alarm_time") == ["6:45 AM", "8:00 AM"]


def test_clock_timer_counts_down_in_simulated_time() -> None:
    app = get_app("clock")
    app.tap_on(id="tab_timer")
    type_into(app, "timer_minutes", "1")
    type_into(app, "timer_seconds", "30")
    app.tap_on(text="Start")
    assert app.find(id="timer_time").text == "01:29"  # the tap itself took a simulated second
    app.advance(29)
    assert app.find(id="timer_time").text == "01:00"
    app.tap_on(text="Pause")  # paused before the tap's second passes
    app.advance(100)
    assert app.find(id="timer_time").text == "01:00"
    app.tap_on(text="Resume")
    app.advance(100)
    assert app.find(id="timer_finished").text == "Time's up"
    app.tap_on(text="Stop")
    assert (app.find(id="timer_minutes").text, app.find(id="timer_seconds").text) == ("01", "30")


def test_clock_stopwatch_laps() -> None:
    app = get_app("clock")
    app.tap_on(id="tab_stopwatch")
    assert not app.find(id="stopwatch_lap").enabled
    app.tap_on(text="Start")
    app.advance(9)
    app.tap_on(text="Lap")
    app.advance(4)
    assert app.find(id="stopwatch_time").text == "00:15"
    app.tap_on(text="Pause")
    assert texts(app, "lap_time") == ["00:10"]
    app.tap_on(text="Reset")
    assert app.find(id="stopwatch_time").text == "00:00" and texts(app, "lap_time") == []


# ---------------------------------------------------------------------------------------------- contacts


def test_contacts_list_scrolls_and_search_finds() -> None:
    app = get_app("contacts")
    assert app.find(id="contacts_count").text == "34 contacts"
    assert app.find(text="Yuki Sato") is None
    scroll_to(app, "Yuki Sato")
    app.launch()
    app.tap_on(desc="Search")
    app.input_text("pri")
    assert texts(app, "contact_name") == ["Priya Sharma"]
    assert texts(app, "contact_number") == ["+91 22 5550 0129"]
    for _ in range(3):
        app.key("DEL")
    app.input_text("0133")
    assert texts(app, "contact_name") == ["Tom Becker"]
    app.tap_on(text="Tom Becker")
    assert app.current_screen == "contact_details" and app.find(id="contact_email").text == "tom.becker@example.com"


def test_contacts_add_contact() -> None:
    app = get_app("contacts")
    app.tap_on(desc="Create new contact")
    assert not app.find(desc="Save").enabled
    app.input_text("Zoe")
    type_into(app, "last_name_input", "Adler")
    type_into(app, "phone_input", "+1 555-0199")
    type_into(app, "email_input", "zoe at example")
    assert app.find(id="email_error").text == "Enter a valid email address" and not app.find(desc="Save").enabled
    for _ in " at example":
        app.key("KEYCODE_DEL")
    app.input_text("@example.com")
    app.tap_on(desc="Save")
    assert app.current_screen == "contact_details"
    assert app.find(id="contact_name").text == "Zoe Adler" and app.find(id="contact_phone").text == "+1 555-0199"
    app.key("KEYCODE_BACK")
    assert app.find(id="contacts_count").text == "35 contacts"
    scroll_to(app, "Zoe Adler")


def test_contacts_delete_asks_for_confirmation() -> None:
    app = get_app("contacts")
    app.tap_on(text="Ben Okafor")
    app.tap_on(desc="More options")
    app.tap_on(text="Delete")
    assert app.find(id="android:id/message").text == "Ben Okafor will be removed from your contacts."
    app.tap_on(text="Cancel")
    assert app.current_screen == "contact_details" and len(app.state.contacts) == 34
    app.tap_on(desc="More options")
    app.tap_on(text="Delete")
    app.tap_on(text="Delete")
    assert app.current_screen == "contacts" and app.find(text="Ben Okafor") is None
    assert app.find(id="contacts_count").text == "33 contacts"


def test_contacts_edit_and_favourite() -> None:
    app = get_app("contacts")
    app.tap_on(text="Anna Schmidt")
    assert app.find(id="favourite").desc == "Remove from favourites" and app.find(id="favourite").selected
    app.tap_on(id="favourite")
    app.tap_on(desc="Edit")
    assert app.find(id="first_name_input").text == "Anna"
    type_into(app, "phone_input", "9")
    app.tap_on(desc="Save")
    assert app.find(id="contact_phone").text == "+49 30 55501039"
    app.tap_on(desc="Call")
    assert app.state.calls == ["+49 30 55501039"]
    app.key("BACK")
    app.tap_on(id="tab_favourites")
    assert texts(app, "contact_name") == ["Maya Patel", "Tom Becker"]
