"""What the device runtime may do on its own, on the simulated Music and Weather apps.

* Reads never act: a read of an element whose dialog is not open, or whose screen only an
  unnamed list item leads to, fails without a single device input; a read whose screen is
  reachable by side-effect-free steps navigates there.
* Navigation takes no unnamed list item, destructive or sensitive step unless the target's own
  document path names it.
* Element first: an element grounded on the current dump is acted on whatever screen the
  identification named; look-alike dialogs are told apart by their texts.
* Polling reads see the screen change, and the trace stays small.
* Lists are not assumed to be at their top, and iteration reaches items one at a time.

Inputs are counted on the simulated device's shell log (every ``input`` command it received).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import make_runtime

from tapir.core.document import AppDocument
from tapir.core.errors import ElementNotFound, ScreenNotReached, Span
from tapir.core.safety import Safety
from tapir.docgen.loader import load_document
from tapir.dsl.interpreter import RunResult, run_script
from tapir.dsl.values import ElementHandle
from tapir.runtime.grounding import Grounder, GroundingConfig
from tapir.runtime.session import DeviceRuntime, SessionConfig
from tapir.runtime.settle import SettleConfig
from tapir.runtime.trace import MemoryTrace
from tapir.sim.apps import get_app
from tapir.sim.device import SimDevice

REPO = Path(__file__).resolve().parent.parent
SPAN = Span(1, 1, 1, 2)


@pytest.fixture(scope="module")
def music_doc() -> AppDocument:
    return load_document(REPO / "samples" / "music" / "music.yaml")


@pytest.fixture(scope="module")
def weather_doc() -> AppDocument:
    return load_document(REPO / "samples" / "weather" / "weather.yaml")


def run(rt: DeviceRuntime, source: str) -> RunResult:
    return run_script(source, lambda: rt, output=None)


def inputs(sim: SimDevice) -> list[str]:
    """The input commands (taps, swipes, keys, text) the device received."""
    return [c for c in sim.log if c.startswith(("input", "am start", "monkey"))]


def real(app: Any, doc: AppDocument, **kw: Any) -> tuple[DeviceRuntime, SimDevice, MemoryTrace]:
    """A runtime with the real grounder (look-alike decisions are the grounder's)."""
    return make_runtime(app, doc, grounder=Grounder(doc, config=GroundingConfig(use_embedding=False)), **kw)


# ---------------------------------------------------------------------------------------------
# Reads never act


def test_reading_an_element_of_a_dialog_that_is_not_open_sends_no_input(music_doc: AppDocument) -> None:
    app: Any = get_app("music")
    rt, sim, trace = make_runtime(app, music_doc)
    result = run(rt, "print($new_playlist_dialog__error_text.get_text())")
    assert isinstance(result.error, ScreenNotReached)
    message = result.error.message
    assert "'new_playlist_dialog', which is not open: the device shows 'songs_screen'" in message
    assert "playlists_screen__new_playlist_button.tap()" in (result.error.hint or "")
    assert inputs(sim) == [] and rt.stats.device_actions == 0
    assert trace.events("navigation") == []


def test_reading_through_an_unnamed_list_item_sends_no_input(music_doc: AppDocument) -> None:
    rt, sim, _ = make_runtime(get_app("music"), music_doc)
    result = run(rt, "s = $playlist_screen__summary_text.get_text()")
    assert isinstance(result.error, ScreenNotReached)
    assert "taps an item of $playlists_screen__playlist_list without saying which" in result.error.message
    assert "the device shows 'songs_screen'" in result.error.message
    assert inputs(sim) == []


def test_a_read_navigates_by_steps_without_side_effects(weather_doc: AppDocument) -> None:
    rt, sim, trace = real(get_app("weather"), weather_doc)
    result = run(rt, "u = $settings_screen__units_value.get_text()")
    assert result.ok, result.error
    assert result.variables["u"] == "'Celsius'"
    steps = [r["step"] for r in trace.events("navigation")]
    assert steps == ["forecast_screen__more_options_button.tap()", "main_menu__options.match('Settings').tap()"]
    assert len([c for c in inputs(sim) if c.startswith("input tap")]) == 2


def test_a_match_on_a_closed_dialog_is_looked_up_when_the_item_is_used(music_doc: AppDocument) -> None:
    app: Any = get_app("music")
    rt, sim, trace = make_runtime(app, music_doc)
    # match() is a read and may not open the dialog; the tap that uses the item may
    assert run(rt, "$sort_dialog__sort_options.match('Artist').tap()").ok
    assert app.state.sort == "Artist"
    assert "which is not open" in trace.events("action")[0]["deferred"]
    sent = len(inputs(sim))
    result = run(rt, "t = $theme_dialog__theme_options.match('Dark').get_text()")
    assert isinstance(result.error, ScreenNotReached) and "which is not open" in result.error.message
    assert len(inputs(sim)) == sent


def test_reading_a_weather_confirmation_that_is_not_open_sends_no_input(weather_doc: AppDocument) -> None:
    rt, sim, _ = real(get_app("weather"), weather_doc)
    result = run(rt, "m = $clear_history_dialog__message.get_text()")
    assert isinstance(result.error, ScreenNotReached) and "which is not open" in result.error.message
    assert inputs(sim) == []


# ---------------------------------------------------------------------------------------------
# What navigation may do for actions


def test_a_borrowed_path_through_an_unnamed_item_is_not_taken(music_doc: AppDocument) -> None:
    app: Any = get_app("music")
    rt, sim, _ = make_runtime(app, music_doc)
    result = run(rt, "$song_properties_dialog__ok_button.tap()")
    assert isinstance(result.error, ScreenNotReached)
    assert "songs_screen__song_more_button.tap() acts on an item of $songs_screen__song_list" in result.error.message
    assert "the path belongs to another element" in result.error.message
    assert inputs(sim) == [] and app.current_dialog is None


def test_a_destructive_step_only_along_the_targets_own_path(weather_doc: AppDocument) -> None:
    app: Any = get_app("weather")
    # the run allows clearing (the script's tap answers a warning dialog: tests/test_guards_sensitive.py)
    rt, sim, _ = real(app, weather_doc, safety=Safety.from_options(allow=["clear"]))
    # Cancel borrows the Clear button's path, whose step "Clear search history" is destructive
    result = run(rt, "$clear_history_dialog__cancel_button.tap()")
    assert isinstance(result.error, ScreenNotReached) and "is destructive ('clear')" in result.error.message
    assert inputs(sim) == [] and app.state.history
    # the Clear button's own path names that step: it is taken
    result = run(rt, "$clear_history_dialog__clear_button.tap()")
    assert result.ok, result.error
    assert app.state.history == []


def test_a_route_never_passes_a_destructive_element(weather_doc: AppDocument) -> None:
    from tapir.runtime.navigation import Navigator

    rt, _, _ = real(get_app("weather"), weather_doc)
    navigator: Navigator = rt.navigator
    assert navigator._route("settings_screen", "units_dialog") is not None
    assert navigator._route("settings_screen", "clear_history_dialog") is None


# ---------------------------------------------------------------------------------------------
# Element first, and look-alike dialogs


def test_an_element_on_screen_is_acted_on_whatever_the_identification_says(weather_doc: AppDocument) -> None:
    app: Any = get_app("weather")
    # the helper grounder names the first screen whose signature matches: on any settings dialog
    # that is theme_dialog, a look-alike
    rt, _, trace = make_runtime(app, weather_doc)
    app.open("settings")
    app.open("units")
    assert run(rt, "$units_dialog__options.match('Fahrenheit').tap()").ok
    assert app.state.units == "Fahrenheit"
    assert trace.events("navigation") == []
    assert [r["screen_before"] for r in trace.events("action")] == ["theme_dialog", "theme_dialog"]


def test_the_same_cancel_button_on_a_look_alike_is_not_tapped(weather_doc: AppDocument) -> None:
    app: Any = get_app("weather")
    rt, _, trace = real(app, weather_doc)
    app.open("settings")
    app.open("units")
    assert rt.screen.observe().screen == "units_dialog"
    # the theme dialog's Cancel is android:id/button2, like the units dialog's: not this one
    assert run(rt, "$theme_dialog__cancel_button.tap()").ok
    steps = [r["step"] for r in trace.events("navigation")]
    assert steps[0] == "back()" and steps[-1] == "settings_screen__theme_row.tap()"
    assert app.current_screen == "settings" and app.current_dialog is None
    assert (app.state.units, app.state.theme) == ("Celsius", "System default")


# ---------------------------------------------------------------------------------------------
# Polling


class Clock:
    """A clock that moves on by ``step`` each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class AddsASongLater:
    """A device whose app gains a song at its ``after``-th dump (the screen changes by itself)."""

    def __init__(self, device: Any, app: Any, after: int) -> None:
        self._device, self._app, self.after, self.dumps = device, app, after, 0

    def dump_hierarchy(self) -> str:
        self.dumps += 1
        if self.dumps == self.after:
            song = self._app.state.songs[0]
            self._app.state.songs.append(type(song)(999, "Late Arrival", song.artist, song.album, 200))
        return str(self._device.dump_hierarchy())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._device, name)


def test_a_polling_read_sees_the_screen_change_and_the_trace_stays_small(music_doc: AppDocument) -> None:
    app: Any = get_app("music")
    from runtime_helpers import XPathGrounder, sim_device

    _, device, _ = sim_device(app)
    trace = MemoryTrace()
    clock = Clock(0.001)
    rt = DeviceRuntime(AddsASongLater(device, app, after=3), music_doc, XPathGrounder(music_doc),  # type: ignore[arg-type]
                       config=SessionConfig(settle=SettleConfig.for_simulator()), trace=trace,
                       clock=clock, sleep=lambda s: None, source="n = 0\nwhile $songs_screen__song_count.get_text() "
                       "!= '45 songs':\n    n += 1\n")
    result = run(rt, "n = 0\nwhile $songs_screen__song_count.get_text() != '45 songs':\n    n += 1\n")
    assert result.ok, result.error
    # each read reads the clock a few times: a dump is reused for fresh_s, then taken again
    assert 10 < int(result.variables["n"]) < 10_000
    assert rt.stats.dumps == 3 and rt.stats.refresh_dumps == 2
    reads = trace.events("action")
    repeats = trace.events("repeat")
    assert len(reads) == 2  # "44 songs" once (then counted), "45 songs" once
    assert repeats and repeats[-1]["count"] == int(result.variables["n"]) - 1
    assert len(trace.records) < 30


def test_identical_reads_are_one_line_and_a_count(music_doc: AppDocument) -> None:
    rt, _, trace = make_runtime(get_app("music"), music_doc)
    assert run(rt, "for i in range(1000):\n    t = $songs_screen__song_count.get_text()\n"
                   "u = $songs_screen__song_count.get_text()\n").ok
    rt.close()
    assert len(trace.events("action")) == 2  # the first read, and the one on another line
    counts = [r["count"] for r in trace.events("repeat")]
    assert counts[-1] == 999 and len(counts) <= 11  # 1, 2, 4 ... 512, then the final count


# ---------------------------------------------------------------------------------------------
# Lists


def test_a_list_first_seen_scrolled_is_counted_from_its_real_top(music_doc: AppDocument) -> None:
    app: Any = get_app("music")
    rt, _, trace = make_runtime(app, music_doc)
    app.swipe(540, 1800, 540, 900, 300)  # the user left the list scrolled down
    first_visible = rt.screen.observe().tree.find(lambda n: n.resource_name == "song_title")[0].text
    result = run(rt, "t = $songs_screen__song_list[0].get_text($songs_screen__song_title)")
    assert result.ok, result.error
    first = app.sorted_songs()[0].title
    assert first != first_visible and result.variables["t"] == repr(first)
    assert [r["direction"] for r in trace.events("scroll")][:2] == ["page_up", "page_up"]


def test_iteration_reaches_items_one_at_a_time(music_doc: AppDocument) -> None:
    app: Any = get_app("music")
    rt, _, trace = make_runtime(app, music_doc)
    handle = ElementHandle("songs_screen__song_list")
    items = rt.iter_items(handle, SPAN)
    first = next(items)
    assert first == handle.at(0)
    assert rt.get_text(first, ElementHandle("songs_screen__song_title"), SPAN) == app.sorted_songs()[0].title
    # one swipe up proves the list is at its top; nothing below is scrolled to
    assert [r["direction"] for r in trace.events("scroll")] == ["page_up"]
    rest = list(items)
    assert len(rest) == len(app.state.songs) - 1 and rest[-1] == handle.at(43)


def test_a_script_loop_that_breaks_reads_one_item_without_scrolling_the_list(music_doc: AppDocument) -> None:
    app: Any = get_app("music")
    rt, _, trace = make_runtime(app, music_doc)
    result = run(rt, "for song in $songs_screen__song_list:\n"
                     "    first = song.get_text($songs_screen__song_title)\n"
                     "    break\n")
    assert result.ok, result.error
    assert result.variables["first"] == repr(app.sorted_songs()[0].title)
    # only the swipe that proves the list is at its top: the 44 songs below are not scrolled to
    assert [r["direction"] for r in trace.events("scroll")] == ["page_up"]
    assert [r["args"] for r in trace.events("action") if r["call"] == "item"] == [{"index": 0}]


def test_a_loop_whose_body_removes_its_item_visits_the_item_that_moved_up() -> None:
    """Deleting Eggs (ticked) moves Bread up into its place: the loop visits that place again
    instead of going on to Coffee beans and leaving Bread unseen."""
    app: Any = get_app("notes")
    doc = load_document(REPO / "samples" / "notes" / "notes.yaml")
    rt, _, _ = make_runtime(app, doc, safety=Safety.from_options(allow=["delete"]))
    result = run(rt, '$notes_screen__note_list.match("Shopping list").tap()\nseen = []\n'
                     "for item in $note_screen__item_list:\n"
                     "    seen.append(item.get_text())\n"
                     '    if item.get_text() in ("Eggs", "Bread"):\n'
                     "        item.tap($note_screen__item_delete_button)\n")
    assert result.ok, result.error
    assert result.variables["seen"] == repr(["Milk", "Eggs", "Bread", "Coffee beans", "Tomatoes"])
    assert [i.text for i in app.state.note(1).items] == ["Milk", "Coffee beans", "Tomatoes"]


def test_a_path_through_an_items_menu_takes_the_item_the_script_matched(music_doc: AppDocument) -> None:
    """The delete dialog is reached through a song's own menu: which song's is the script's
    choice, and it made one (Cinder). Before, navigation refused the step ("acts on an item of
    $songs_screen__song_list without saying which")."""
    app: Any = get_app("music")
    rt, _, trace = make_runtime(app, music_doc, safety=Safety.from_options(allow=["delete"]))
    before = [s.title for s in app.state.songs]
    result = run(rt, '$songs_screen__song_list.match("Cinder").tap()\n$delete_song_dialog__delete_button.tap()\n')
    assert result.ok, result.error
    assert [s.title for s in app.state.songs] == [t for t in before if t != "Cinder"]
    steps = [r["step"] for r in trace.events("navigation")]
    assert steps[0] == "songs_screen__song_more_button.match('Cinder').tap()"


def test_a_read_inside_a_loop_reaches_the_page_of_the_loops_item() -> None:
    """``for item in $favourites:`` then a read on the contact's page: the page is reached by
    tapping the item the loop is at (a route through the list's ``leads_to``), one favourite each."""
    app: Any = get_app("contacts")
    doc = load_document(REPO / "samples" / "contacts" / "contacts.yaml")
    rt, _, trace = real(app, doc)
    result = run(rt, "names = []\nfor item in $favourites_screen__favourite_list:\n"
                     "    names.append($contact_details_screen__name_text.get_text())\n")
    assert result.ok, result.error
    assert result.variables["names"] == repr(sorted(c.name for c in app.state.contacts if c.favourite))
    taps = [r["step"] for r in trace.events("navigation") if ".match(" in r["step"]]
    assert taps == [f"favourites_screen__favourite_list.match({n!r}).tap()" for n in ("Anna Schmidt", "Maya Patel",
                                                                                      "Tom Becker")]


def test_a_read_takes_no_route_through_a_forms_save() -> None:
    """Reading a contact's page without saying which contact: before, the read's route went
    through "add contact" and the new contact form's Save (nine steps, a contact made on a phone).
    Now it fails at once, sending nothing, and says why."""
    app: Any = get_app("contacts")
    doc = load_document(REPO / "samples" / "contacts" / "contacts.yaml")
    rt, sim, trace = real(app, doc)
    result = run(rt, "print($contact_details_screen__name_text.get_text())")
    assert isinstance(result.error, ScreenNotReached)
    assert "taps an item of $contacts_screen__contact_list without saying which" in result.error.message
    assert trace.events("navigation") == [] and not [c for c in inputs(sim) if c.startswith("input tap")]


def test_a_search_down_to_one_result_opens_that_result() -> None:
    """The script typed "0133" into the search and named the call button of a contact's page: the
    results show one contact, so the route through the results list takes it (the script chose it
    by what it typed). Before, the step was refused ("without saying which") and the call failed."""
    app: Any = get_app("contacts")
    doc = load_document(REPO / "samples" / "contacts" / "contacts.yaml")
    rt, _, trace = real(app, doc, safety=Safety.from_options(allow=["call"]))
    result = run(rt, '$contacts_screen__search_button.tap()\n$search_screen__search_input.set_text("0133")\n'
                     "$contact_details_screen__call_button.tap()\n")
    assert result.ok, result.error
    assert app.state.calls == ["+1 555-0133"]
    assert [r["step"] for r in trace.events("navigation")] == [
        "search_screen__result_list.match('Tom Becker').tap()"]


def test_a_search_with_several_results_leaves_the_choice_to_the_script() -> None:
    """Several results: which contact to call is the script's to say. Nor does an action's route
    go through the new-contact form's Save (before, navigation tapped "add contact", then Save)."""
    app: Any = get_app("contacts")
    doc = load_document(REPO / "samples" / "contacts" / "contacts.yaml")
    rt, _, trace = real(app, doc, safety=Safety.from_options(allow=["call"]))
    before = len(app.state.contacts)
    result = run(rt, '$contacts_screen__search_button.tap()\n$search_screen__search_input.set_text("+49")\n'
                     "$contact_details_screen__call_button.tap()\n")
    assert isinstance(result.error, ScreenNotReached) and app.state.calls == []
    assert "save" not in result.error.message and len(app.state.contacts) == before
    assert not [r for r in trace.events("navigation") if "save" in r["step"] or "add_contact" in r["step"]]


def test_an_actions_route_keeps_what_the_script_typed_on_its_form() -> None:
    """A note typed, its Save left out, then the note's page named: the route's Save keeps the
    script's own text (no Save of a form the script never typed into, as above)."""
    app: Any = get_app("notes")
    doc = load_document(REPO / "samples" / "notes" / "notes.yaml")
    rt, _, trace = real(app, doc)
    result = run(rt, '$notes_screen__new_note_button.tap()\n$edit_note_screen__title_input.set_text("Call Bob")\n'
                     "print($note_screen__modified_text.get_text())\n")
    assert isinstance(result.error, ScreenNotReached)  # a read keeps nothing: it does not save
    assert "Call Bob" not in [n.title for n in app.state.notes]
    app = get_app("notes")
    rt, _, trace = real(app, doc)
    result = run(rt, '$notes_screen__new_note_button.tap()\n$edit_note_screen__title_input.set_text("Call Bob")\n'
                     "$note_screen__edit_button.tap()\n")
    assert result.ok, result.error
    assert [r["step"] for r in trace.events("navigation")] == ["edit_note_screen__save_button.tap()"]
    assert "Call Bob" in [n.title for n in app.state.notes]


def test_an_element_absent_from_the_screen_reached_names_that_screen(music_doc: AppDocument) -> None:
    app: Any = get_app("music")
    rt, _, trace = make_runtime(app, music_doc)
    # an action may open the dialog; the error text is not on it (nothing went wrong yet)
    result = run(rt, "$new_playlist_dialog__error_text.tap()")
    assert isinstance(result.error, ElementNotFound)
    assert "the device shows 'new_playlist_dialog' (reached after 2 navigation step(s))" in result.error.message
    assert app.current_dialog == "new_playlist"
    assert len(trace.events("navigation")) == 2  # and no wandering once there


def test_the_now_playing_bar_of_the_screen_showing_it_leads_to_the_player(music_doc: AppDocument) -> None:
    """The bar shows on the songs, playlists and playlist screens, and the document says so: from
    a playlist, the player is one tap away (not back to the songs first)."""
    rt, sim, trace = real(get_app("music"), music_doc)
    result = run(rt, '$songs_screen__playlists_tab.tap()\n$playlists_screen__playlist_list.match("Road trip").tap()\n'
                     "$playlist_screen__play_all_button.tap()\n$now_playing_screen__shuffle_button.tap()\n")
    assert result.ok, result.error
    assert [e["step"] for e in trace.events("navigation")] == ["playlist_screen__now_playing_bar.tap()"]
    assert rt.stats.device_actions == 5


def test_a_list_with_one_row_left_has_one_item() -> None:
    """The alarms with one alarm left: len() is 1 and the row's switch is the item's switch (the
    row was read as a list of its parts, three items, and a loop tapped the wrong view)."""
    doc = load_document(REPO / "samples" / "clock" / "clock.yaml")
    app: Any = get_app("clock")
    rt, _, _ = real(app, doc)
    del app.state.alarms[1:]
    enabled = app.state.alarms[0].enabled
    result = run(rt, "$clock_screen__alarm_tab.tap()\nn = len($alarm_screen__alarm_list)\n"
                     "for a in $alarm_screen__alarm_list:\n    a.tap($alarm_screen__alarm_switch)\n")
    assert result.ok, result.error
    assert result.variables["n"] == "1" and app.state.alarms[0].enabled is not enabled
