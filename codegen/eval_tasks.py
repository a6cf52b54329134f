"""Tasks on the sample apps, each with a check of the simulated app's final state.

For evaluating script generation end to end (``bench/codegen.py``, the evaluation work): a task is
a sentence a user would say, the app it is for, a **check** (a predicate on the app's state after
the run, e.g. ``app.state.theme == "Dark"``) and a **reference** script that passes the check (the
tests run every reference on the simulator, so the checks are known to be satisfiable and the
tasks solvable with the document). None of them is among the in-context examples.

    from tapir.codegen.eval_tasks import SAMPLE_TASKS, run_on_sim
    task = SAMPLE_TASKS[0]
    ok, detail = run_on_sim(task, task.reference)     # (True, '') when the check holds
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SAMPLE_TASKS", "SampleTask", "check_app", "document_path", "run_on_sim", "tasks_for"]

_SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@dataclass(frozen=True)
class SampleTask:
    id: str
    #: The sample app (``music``, ``clock``, ``contacts``, ``notes``): ``--device sim:<app>``.
    app: str
    task: str
    check: Callable[[Any], bool]
    reference: str


def document_path(app: str) -> Path:
    return _SAMPLES / app / f"{app}.yaml"


def _song(s: Any, title: str) -> Any:
    return next(x for x in s.songs if x.title == title)


def _playlist(s: Any, name: str) -> Any:
    return next((p for p in s.playlists if p.name == name), None)


def _alarm(s: Any, label: str) -> Any:
    return next((a for a in s.alarms if a.label == label), None)


def _contact(s: Any, first: str, last: str) -> Any:
    return next((c for c in s.contacts if (c.first, c.last) == (first, last)), None)


def _note(s: Any, title: str) -> Any:
    return next((n for n in s.notes if n.title == title), None)


def _item(s: Any, note: str, text: str) -> Any:
    n = _note(s, note)
    return next((i for i in (n.items or []) if i.text == text), None) if n else None


SAMPLE_TASKS: tuple[SampleTask, ...] = (
    # -- music ------------------------------------------------------------------------------
    SampleTask("music-play", "music", "Play the song Midnight Drive",
               lambda a: a.state.now_playing == _song(a.state, "Midnight Drive").id and a.state.playing,
               '$songs_screen__song_list.match("Midnight Drive").tap()\n'),
    SampleTask("music-sort", "music", "Sort the songs by duration",
               lambda a: a.state.sort == "Duration",
               '$songs_screen__more_options_button.tap()\n$main_menu__options.match("Sort by").tap()\n'
               '$sort_dialog__sort_options.match("Duration").tap()\n'),
    SampleTask("music-new-playlist", "music", 'Create a new playlist called "Evening"',
               lambda a: _playlist(a.state, "Evening") is not None,
               "$playlists_screen__new_playlist_button.tap()\n"
               '$new_playlist_dialog__name_input.set_text("Evening")\n$new_playlist_dialog__create_button.tap()\n'),
    SampleTask("music-add-to-playlist", "music", "Add the song Low Tide to the Road trip playlist",
               lambda a: _song(a.state, "Low Tide").id in _playlist(a.state, "Road trip").songs,
               '$songs_screen__song_list.match("Low Tide").tap($songs_screen__song_more_button)\n'
               '$song_options_menu__options.match("Add to playlist").tap()\n'
               '$add_to_playlist_dialog__playlist_list.match("Road trip").tap()\n'),
    SampleTask("music-album-art", "music", "Turn off album art in the settings",
               lambda a: a.state.show_album_art is False,
               '$songs_screen__more_options_button.tap()\n$main_menu__options.match("Settings").tap()\n'
               "$settings_screen__album_art_switch.tap()\n"),
    SampleTask("music-theme-auto", "music", "Set the theme to Auto light / dark",
               lambda a: a.state.theme == "Auto light / dark",
               '$songs_screen__more_options_button.tap()\n$main_menu__options.match("Settings").tap()\n'
               '$settings_screen__theme_row.tap()\n$theme_dialog__theme_options.match("Auto light / dark").tap()\n'),
    SampleTask("music-delete-playlist", "music", "Delete the playlist Favourites",
               lambda a: _playlist(a.state, "Favourites") is None,
               '$playlists_screen__playlist_list.match("Favourites").tap()\n$playlist_screen__more_options_button.tap()\n'
               '$playlist_menu__options.match("Delete playlist").tap()\n'
               "$delete_playlist_dialog__delete_button.tap()\n"),
    SampleTask("music-play-playlist", "music", "Play all songs of the Favourites playlist",
               lambda a: a.state.playing and a.state.now_playing in _playlist(a.state, "Favourites").songs,
               '$playlists_screen__playlist_list.match("Favourites").tap()\n$playlist_screen__play_all_button.tap()\n'),
    # -- clock ------------------------------------------------------------------------------
    SampleTask("clock-add-alarm", "clock", "Add an alarm at 06:15",
               lambda a: any((x.hour, x.minute, x.enabled) == (6, 15, True) for x in a.state.alarms),
               '$clock_screen__alarm_tab.tap()\n$alarm_screen__add_alarm_button.tap()\n'
               '$time_picker_dialog__hour_input.set_text("06")\n$time_picker_dialog__minute_input.set_text("15")\n'
               "$time_picker_dialog__ok_button.tap()\n"),
    SampleTask("clock-work-off", "clock", "Turn off the 08:00 alarm",
               lambda a: _alarm(a.state, "Work").enabled is False,
               '$clock_screen__alarm_tab.tap()\n'
               '$alarm_screen__alarm_list.match("08:00").tap($alarm_screen__alarm_switch)\n'),
    SampleTask("clock-snooze", "clock", "Set the snooze length to 15 minutes",
               lambda a: a.state.snooze_minutes == 15,
               '$clock_screen__more_options_button.tap()\n$main_menu__options.match("Settings").tap()\n'
               '$settings_screen__snooze_row.tap()\n$snooze_dialog__snooze_options.match("15 minutes").tap()\n'),
    SampleTask("clock-timer", "clock", "Start a timer for 2 minutes",
               lambda a: a.state.timer_duration == 120 and a.state.timer_state in ("running", "finished"),
               '$clock_screen__timer_tab.tap()\n$timer_screen__minutes_input.set_text("2")\n'
               '$timer_screen__seconds_input.set_text("0")\n$timer_screen__start_button.tap()\n'),
    SampleTask("clock-vibrate", "clock", "Turn off vibration for alarms",
               lambda a: a.state.vibrate is False,
               '$clock_screen__more_options_button.tap()\n$main_menu__options.match("Settings").tap()\n'
               "$settings_screen__vibrate_switch.tap()\n"),
    SampleTask("clock-delete-gym", "clock", "Delete the Gym alarm",
               lambda a: _alarm(a.state, "Gym") is None,
               '$clock_screen__alarm_tab.tap()\n'
               '$alarm_screen__alarm_list.match("Gym").tap($alarm_screen__alarm_more_button)\n'
               '$alarm_options_menu__options.match("Delete").tap()\n'),
    SampleTask("clock-stopwatch", "clock", "Start the stopwatch",
               lambda a: a.state.stopwatch_running is True,
               "$clock_screen__stopwatch_tab.tap()\n$stopwatch_screen__start_button.tap()\n"),
    SampleTask("clock-12h", "clock", "Switch the clock to the 12-hour format",
               lambda a: a.state.use_24h is False,
               '$clock_screen__more_options_button.tap()\n$main_menu__options.match("Settings").tap()\n'
               "$settings_screen__use_24h_switch.tap()\n"),
    # -- contacts ---------------------------------------------------------------------------
    SampleTask("contacts-unfavourite", "contacts", "Remove Anna Schmidt from the favourites",
               lambda a: _contact(a.state, "Anna", "Schmidt").favourite is False,
               '$contacts_screen__contact_list.match("Anna Schmidt").tap()\n'
               "$contact_details_screen__favourite_button.tap()\n"),
    SampleTask("contacts-add", "contacts", "Add a contact Ada Lovelace with the phone number +44 20 5550 1815",
               lambda a: (c := _contact(a.state, "Ada", "Lovelace")) is not None and c.phone == "+44 20 5550 1815",
               '$contacts_screen__add_contact_button.tap()\n$edit_contact_screen__first_name_input.set_text("Ada")\n'
               '$edit_contact_screen__last_name_input.set_text("Lovelace")\n'
               '$edit_contact_screen__phone_input.set_text("+44 20 5550 1815")\n'
               "$edit_contact_screen__save_button.tap()\n"),
    SampleTask("contacts-sort", "contacts", "Sort the contacts by last name",
               lambda a: a.state.sort == "Last name",
               '$contacts_screen__more_options_button.tap()\n$main_menu__options.match("Sort by").tap()\n'
               '$sort_dialog__sort_options.match("Last name").tap()\n'),
    SampleTask("contacts-call", "contacts", "Call Carlos Mendoza",
               lambda a: _contact(a.state, "Carlos", "Mendoza").phone in a.state.calls,
               '$contacts_screen__contact_list.match("Carlos Mendoza").tap()\n'
               "$contact_details_screen__call_button.tap()\n"),
    SampleTask("contacts-delete", "contacts", "Delete the contact Felix Braun",
               lambda a: _contact(a.state, "Felix", "Braun") is None,
               '$contacts_screen__contact_list.match("Felix Braun").tap()\n'
               '$contact_details_screen__more_options_button.tap()\n$contact_menu__options.match("Delete").tap()\n'
               "$delete_contact_dialog__delete_button.tap()\n"),
    SampleTask("contacts-edit-phone", "contacts", "Change the phone number of Grace Kim to +1 555 0177",
               lambda a: _contact(a.state, "Grace", "Kim").phone == "+1 555 0177",
               '$contacts_screen__contact_list.match("Grace Kim").tap()\n$contact_details_screen__edit_button.tap()\n'
               '$edit_contact_screen__phone_input.set_text("+1 555 0177")\n$edit_contact_screen__save_button.tap()\n'),
    SampleTask("contacts-favourite", "contacts", "Mark Chen Wei as a favourite",
               lambda a: _contact(a.state, "Chen", "Wei").favourite is True,
               '$contacts_screen__contact_list.match("Chen Wei").tap()\n'
               "$contact_details_screen__favourite_button.tap()\n"),
    # -- notes ------------------------------------------------------------------------------
    SampleTask("notes-tick-milk", "notes", "Tick Milk on the shopping list",
               lambda a: _item(a.state, "Shopping list", "Milk").checked is True,
               '$notes_screen__note_list.match("Shopping list").tap()\n'
               '$note_screen__item_list.match("Milk").tap($note_screen__item_checkbox)\n'),
    SampleTask("notes-new", "notes", 'Create a note titled "Dentist" with the text "Tuesday at 10"',
               lambda a: (n := _note(a.state, "Dentist")) is not None and n.body == "Tuesday at 10",
               '$notes_screen__new_note_button.tap()\n$edit_note_screen__title_input.set_text("Dentist")\n'
               '$edit_note_screen__body_input.set_text("Tuesday at 10")\n$edit_note_screen__save_button.tap()\n'),
    SampleTask("notes-add-item", "notes", "Add Sunglasses to the Packing for Lisbon list",
               lambda a: _item(a.state, "Packing for Lisbon", "Sunglasses") is not None,
               '$notes_screen__note_list.match("Packing for Lisbon").tap()\n'
               '$note_screen__new_item_input.set_text("Sunglasses")\n$note_screen__add_item_button.tap()\n'),
    SampleTask("notes-delete", "notes", "Delete the note Car service",
               lambda a: _note(a.state, "Car service") is None,
               '$notes_screen__note_list.match("Car service").tap()\n$note_screen__delete_button.tap()\n'
               "$delete_note_dialog__delete_button.tap()\n"),
    SampleTask("notes-sort", "notes", "Sort the notes by title",
               lambda a: a.state.sort == "Title",
               '$notes_screen__more_options_button.tap()\n$main_menu__options.match("Sort by").tap()\n'
               '$sort_dialog__sort_options.match("Title").tap()\n'),
    SampleTask("notes-untick-eggs", "notes", "Untick Eggs on the shopping list",
               lambda a: _item(a.state, "Shopping list", "Eggs").checked is False,
               '$notes_screen__note_list.match("Shopping list").tap()\n'
               '$note_screen__item_list.match("Eggs").tap($note_screen__item_checkbox)\n'),
)


def tasks_for(app: str) -> list[SampleTask]:
    return [t for t in SAMPLE_TASKS if t.app == app]


def check_app(task: SampleTask, app: Any) -> bool:
    """The task's check on a simulated app; a check that raises (state not there) is False."""
    try:
        return bool(task.check(app))
    except (AttributeError, StopIteration, TypeError, KeyError, IndexError):
        return False


def run_on_sim(task: SampleTask, script: str, *, adb_port: int | None = None) -> tuple[bool, str]:
    """Run ``script`` on a fresh simulator of the task's app; (check held, the error text if any)."""
    from tapir.codegen.device import DeviceSession

    session = DeviceSession(document_path(task.app), f"sim:{task.app}", adb_port=adb_port)
    outcome = session.run(script)
    app = session.last_app()
    if app is None:
        return False, outcome.error.render() if outcome.error else "no device was used"
    ok = check_app(task, app)
    return ok, outcome.error.render() if outcome.error else ("" if ok else "the app's state does not satisfy the task")
