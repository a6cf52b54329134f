"""ReplayApp: recorded DroidBot sessions (../shared/upstream) served as simulated apps."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from lxml import etree
from PIL import Image

from tapir.sim.app import SimApp
from tapir.sim.apps import get_app
from tapir.sim.errors import SimUsageError
from tapir.sim.launch import replay_app
from tapir.sim.replay import UNRECORDED, ReplayApp

pytestmark = pytest.mark.upstream


@pytest.fixture(scope="module")
def launcher_dir(upstream: Path) -> Path:
    return upstream / "droidtask" / "apps" / "applauncher"


@pytest.fixture(scope="module")
def recording(launcher_dir: Path) -> ReplayApp:
    return ReplayApp(launcher_dir)


@pytest.fixture()
def app(recording: ReplayApp) -> ReplayApp:
    recording.reset()
    return recording


def test_starts_where_the_recorded_launches_led(app: ReplayApp, launcher_dir: Path) -> None:
    assert isinstance(app, SimApp)
    assert app.package == "com.simplemobiletools.applauncher"
    assert app.screen_size == (1080, 2280)
    events = [json.loads(p.read_text()) for p in sorted((launcher_dir / "events").glob("*.json"))]
    reached = Counter(e["stop_state"] for e in events if e["event"]["event_type"] == "intent")
    assert app.start_state == app.current_state == reached.most_common(1)[0][0]
    assert app.activity == "com.simplemobiletools.applauncher.activities.MainActivity"
    assert app.current_screen == "MainActivity"


def test_a_one_time_dialog_of_the_first_launch_is_not_the_start(upstream: Path) -> None:
    """File Manager's first recorded launch shows a one-time warning whose OK was never recorded;
    every later launch opens the main screen, where the tasks begin."""
    folder = upstream / "droidtask" / "apps" / "filemanager"
    events = [json.loads(p.read_text()) for p in sorted((folder / "events").glob("*.json"))]
    launches = [e["stop_state"] for e in events if e["event"]["event_type"] == "intent"]
    app = ReplayApp(folder)
    assert app.start_state != launches[0] and app.start_state == Counter(launches).most_common(1)[0][0]
    first = yaml.safe_load((folder / "traces" / "task2.yaml").read_text(encoding="utf-8"))["records"][0]
    state = json.loads((folder / "states" / f"state_{first['tag']}.json").read_text(encoding="utf-8"))
    assert app.start_state == state["state_str"]


def test_dump_is_the_recorded_tree_without_invisible_views(app: ReplayApp) -> None:
    xml = app.dump_xml()
    assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">")
    tree = etree.fromstring(xml.encode())
    state = app.states[app.current_state]
    visible = [v for v in state["views"] if v["visible"]]
    nodes = list(tree.iter("node"))
    assert len(nodes) == len(visible)
    labels = {v["text"] for v in visible if v["text"]}
    assert labels == {n.get("text") for n in nodes if n.get("text")}
    clock = next(n for n in nodes if n.get("text") == "Clock")
    view = next(v for v in visible if v["text"] == "Clock")
    (x1, y1), (x2, y2) = view["bounds"]
    assert clock.get("bounds") == f"[{x1},{y1}][{x2},{y2}]"
    assert clock.get("resource-id") == view["resource_id"] and clock.get("class") == view["class"]
    png = Image.open(io.BytesIO(app.screenshot_png()))
    assert png.size == (1080, 2280)


def test_every_recorded_click_is_replayed(app: ReplayApp) -> None:
    clicks = [e for e in app.events if e.kind == "click" and e.start in app.states and e.stop in app.states]
    assert len(clicks) >= 80
    for event in clicks:
        app.go_to(event.start)
        assert event.bounds is not None
        app.tap(*event.bounds.center)
        assert app.current_state == event.stop, event.tag
    assert app.unmatched == []


def test_recorded_text_and_keys_are_replayed(app: ReplayApp) -> None:
    others = [e for e in app.events if e.kind in ("set_text", "key") and e.start in app.states and e.stop in app.states]
    assert Counter(e.kind for e in others) == {"key": 13, "set_text": 2}
    for event in others:
        app.go_to(event.start)
        if event.kind == "set_text":
            app.input_text(event.text or "")
        else:
            assert app.key(f"KEYCODE_{event.key}") is True
        assert app.current_state == event.stop, event.tag


def test_unrecorded_input_is_logged_and_changes_nothing(app: ReplayApp) -> None:
    before = app.dump_xml()
    app.tap(3, 3)
    app.swipe(540, 1800, 540, 600, 300)
    assert app.key("KEYCODE_VOLUME_UP") is False
    assert app.dump_xml() == before and app.current_state == app.start_state
    assert [u.action for u in app.unmatched] == ["tap", "swipe", "key"]
    assert app.key("KEYCODE_BACK") is False  # on the start screen BACK leaves the app
    app.tap(*next(e for e in app.events_from(app.start_state, "click")).bounds.center)
    assert app.current_state != app.start_state
    app.reset()
    assert app.current_state == app.start_state and app.unmatched == []


def test_text_the_recording_lacks_shows_in_the_search_field(app: ReplayApp) -> None:
    search = next(n for n in etree.fromstring(app.dump_xml().encode()).iter("node")
                  if n.get("resource-id", "").endswith("top_toolbar_search"))
    assert search.get("text") == "Search"
    app.input_text("never typed")  # the recorded focused field takes it, as a phone would
    shown = {n.get("resource-id"): n.get("text") for n in etree.fromstring(app.dump_xml().encode()).iter("node")}
    assert shown[search.get("resource-id")] == "Searchnever typed" and app.unmatched == []


def test_a_click_whose_outcome_was_not_recorded_says_so(app: ReplayApp) -> None:
    lost = [e for e in app.events if e.kind == "click" and e.start in app.states and e.stop not in app.states]
    assert lost
    app.go_to(lost[0].start)
    app.tap(*lost[0].bounds.center)
    assert app.current_state == UNRECORDED
    texts = [n.get("text") for n in etree.fromstring(app.dump_xml().encode()).iter("node") if n.get("text")]
    assert len(texts) == 1 and texts[0].startswith("Not in the recording: the tap at ")
    assert texts[0].endswith(f"(event {lost[0].tag}) led to state {lost[0].stop[:12]}, which was not saved")
    assert "not recorded" in app.unmatched[-1].detail
    assert app.key("KEYCODE_BACK") is True and app.current_state == lost[0].start


def test_nondeterministic_recordings_follow_the_most_frequent_outcome(upstream: Path) -> None:
    clock = ReplayApp(upstream / "droidtask" / "apps" / "clock")
    assert clock.package == "com.simplemobiletools.clock"
    for event in clock.events:
        if event.kind != "click" or event.start not in clock.states or event.stop not in clock.states:
            continue
        clock.go_to(event.start)
        clock.tap(*event.bounds.center)
        same = [e.stop for e in clock.events_from(event.start, "click") if e.bounds == event.bounds]
        votes = Counter(same)
        assert votes[clock.current_state] == max(votes.values()), event.tag


def test_get_app_opens_recordings_and_rejects_other_folders(launcher_dir: Path, tmp_path: Path) -> None:
    replay = get_app(f"replay:{launcher_dir}")
    assert isinstance(replay, ReplayApp) and replay.package == "com.simplemobiletools.applauncher"
    with pytest.raises(SimUsageError, match="not a DroidBot recording"):
        ReplayApp(tmp_path)


def test_a_swipe_the_recording_saved_no_event_for_shows_the_state_scrolled_further(upstream: Path) -> None:
    """DroidBot saved no scroll events for these apps, only the states a scroll led to: a swipe goes
    to the state of the same activity whose scroll view shows the same contents moved the swipe's
    way (about the finger's distance; a state a few pixels off is a re-layout, not a scroll)."""
    notes = ReplayApp(upstream / "droidtask" / "apps" / "notes")
    assert not [e for e in notes.events if e.kind == "scroll"]
    settings = next(s for s in notes.states if s.startswith("39b01c27"))
    further = next(s for s in notes.states if s.startswith("8b1898f6"))
    notes.go_to(settings)
    notes.swipe(540, 1800, 540, 600, 300)
    assert notes.current_state == further and not notes.unmatched
    assert "Autosave notes" in notes.dump_xml()
    notes.swipe(540, 1800, 540, 600, 300)  # the end of the settings is showing: nothing moves
    assert notes.current_state == further and [u.action for u in notes.unmatched] == ["swipe"]
    notes.swipe(540, 600, 540, 1800, 300)
    assert notes.current_state == settings
    firefox = ReplayApp(upstream / "droidtask" / "apps" / "firefox")
    firefox.go_to(next(s for s in firefox.states if s.startswith("411d8b61")))
    seen = []
    for _ in range(3):
        firefox.swipe(540, 1800, 540, 600, 300)
        seen.append(firefox.current_state[:8])
    # c56aa2bb is the first page 55 pixels lower (a re-layout); 6380e12c ends the list with About Firefox
    assert "c56aa2bb" not in seen and seen[-1] == "6380e12c" and "About Firefox" in firefox.dump_xml()


def _recording(folder: Path, states: dict[str, tuple[int, list[tuple[str, list[int]]]]],
               events: list[tuple[str, str, str, list[int] | None]]) -> Path:
    """A small DroidBot recording: ``states`` maps tag -> (width, [(button text, [x1, y1, x2, y2])]),
    each state's hash being its tag; ``events`` are (tag, start tag, stop tag, clicked bounds)."""
    (folder / "states").mkdir(parents=True)
    (folder / "events").mkdir()
    for tag, (width, buttons) in states.items():
        views = [{"temp_id": 0, "parent": -1, "class": "android.widget.FrameLayout", "package": "org.example",
                  "bounds": [[0, 0], [width, width * 2]], "visible": True,
                  "children": list(range(1, len(buttons) + 1))}]
        views += [{"temp_id": i, "parent": 0, "class": "android.widget.Button", "package": "org.example", "text": text,
                   "bounds": [[b[0], b[1]], [b[2], b[3]]], "visible": True, "clickable": True, "children": []}
                  for i, (text, b) in enumerate(buttons, 1)]
        record = {"tag": tag, "state_str": f"s{tag}", "width": width, "height": width * 2, "views": views,
                  "foreground_activity": "org.example/.Main"}
        (folder / "states" / f"state_{tag}.json").write_text(json.dumps(record), encoding="utf-8")
    for tag, start, stop, bounds in events:
        event = ({"event_type": "intent", "intent": "am start org.example/.Main"} if bounds is None else
                 {"event_type": "click", "view": {"bounds": [[bounds[0], bounds[1]], [bounds[2], bounds[3]]]}})
        record = {"tag": tag, "event": event, "start_state": f"s{start}", "stop_state": f"s{stop}"}
        (folder / "events" / f"event_{tag}.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


def test_a_tap_recorded_with_two_outcomes_takes_the_one_a_task_trace_went_through(tmp_path: Path) -> None:
    """The menu row was tapped twice: first it led to a permission prompt, later (permission granted)
    past it. Votes tie; a task trace beside the recording acted on the state saved after the second
    tap, so that outcome wins; without traces the earliest does."""
    row = [0, 100, 500, 200]
    states = {"2023-01-01_100000": (1080, [("Add birthdays", row)]),
              "2023-01-01_100005": (1080, [("Allow", [0, 300, 500, 400])]),
              "2023-01-01_110005": (1080, [("Done", [0, 500, 500, 600])])}
    # each tap's outcome is the state saved right after it (100005, then 110005)
    events = [("2023-01-01_095959", "2023-01-01_100000", "2023-01-01_100000", None),
              ("2023-01-01_100003", "2023-01-01_100000", "2023-01-01_100005", row),
              ("2023-01-01_110003", "2023-01-01_100000", "2023-01-01_110005", row)]
    folder = _recording(tmp_path / "rec", states, events)
    plain = ReplayApp(folder)
    plain.tap(250, 150)
    assert plain.current_state == "s2023-01-01_100005"  # a tie: the earliest outcome
    (folder / "traces").mkdir()
    (folder / "traces" / "task1.yaml").write_text(
        "records:\n- Action: touch\n  tag: 2023-01-01_100000\n- Action: touch\n  tag: 2023-01-01_110005\n",
        encoding="utf-8")
    traced = ReplayApp(folder)
    assert traced.traced == {"2023-01-01_100000", "2023-01-01_110005"}
    traced.tap(250, 150)
    assert traced.current_state == "s2023-01-01_110005" and traced.followed[-1].tag == "2023-01-01_110003"


def test_back_the_recording_lacks_closes_a_dialog_and_finishes_an_activity_as_android_does(tmp_path: Path) -> None:
    """No BACK was recorded from the dialog or the settings: BACK closes the dialog (a window that
    does not fill the screen) back to the screen it was opened on, and finishes the settings
    activity back to the one that started it. A recorded BACK that left the dialog as it was (it hid
    the keyboard) is followed, and a second BACK closes the dialog."""
    main, dialog, settings = "2023-01-01_100000", "2023-01-01_100010", "2023-01-01_100020"
    states = {main: (1080, [("Add", [0, 0, 200, 100]), ("Settings", [0, 200, 200, 300])]),
              dialog: (1080, [("Name", [100, 500, 900, 600])]),
              settings: (1080, [("Theme", [0, 400, 500, 500])])}
    events = [("2023-01-01_095959", main, main, None), ("2023-01-01_100005", main, dialog, [0, 0, 200, 100]),
              ("2023-01-01_100015", main, settings, [0, 200, 200, 300])]
    folder = _recording(tmp_path / "rec", states, events)
    for tag, patch in ((dialog, {"bounds": [[28, 400], [1052, 900]]}), (settings, {})):
        path = folder / "states" / f"state_{tag}.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        record["views"][0].update(patch)
        if tag == settings:
            record["foreground_activity"] = "org.example/.Settings"
        path.write_text(json.dumps(record), encoding="utf-8")
    app = ReplayApp(folder)
    assert app.floating(f"s{dialog}") and not app.floating(f"s{main}") and not app.floating(f"s{settings}")
    app.tap(100, 50)
    assert app.current_state == f"s{dialog}"
    assert app.key("KEYCODE_BACK") is True and app.current_state == f"s{main}"
    app.tap(100, 250)
    assert app.current_state == f"s{settings}"
    assert app.key("KEYCODE_BACK") is True and app.current_state == f"s{main}"
    assert app.key("KEYCODE_BACK") is False  # the start screen: BACK leaves the app
    hid = {"tag": "2023-01-01_100012", "event": {"event_type": "key", "name": "BACK"},
           "start_state": f"s{dialog}", "stop_state": f"s{dialog}"}
    (folder / "events" / "event_2023-01-01_100012.json").write_text(json.dumps(hid), encoding="utf-8")
    app = ReplayApp(folder)
    app.tap(100, 50)
    assert app.key("KEYCODE_BACK") is True and app.current_state == f"s{dialog}"  # the keyboard hidden
    assert app.key("KEYCODE_BACK") is True and app.current_state == f"s{main}"


def test_a_state_recorded_on_a_wider_phone_is_shown_and_tapped_at_the_replays_width(tmp_path: Path) -> None:
    """A recording can mix sessions on phones of different widths: a state is shown scaled to the
    start state's width (Save at the 1440-pixel editor's right edge stays on screen) and a tap on
    what is shown follows the event recorded at the state's own coordinates."""
    save = [1200, 100, 1440, 300]
    states = {"2023-01-01_100000": (1080, [("Edit", [0, 100, 500, 200])]),
              "2023-01-01_100010": (1440, [("Save", save)]),
              "2023-01-01_100020": (1080, [("Saved", [0, 100, 500, 200])])}
    events = [("2023-01-01_095959", "2023-01-01_100000", "2023-01-01_100000", None),
              ("2023-01-01_100005", "2023-01-01_100000", "2023-01-01_100010", [0, 100, 500, 200]),
              ("2023-01-01_100015", "2023-01-01_100010", "2023-01-01_100020", save)]
    app = ReplayApp(_recording(tmp_path / "rec", states, events))
    assert app.screen_size == (1080, 2160)
    app.tap(250, 150)
    node = next(n for n in etree.fromstring(app.dump_xml().encode()).iter("node") if n.get("text") == "Save")
    assert node.get("bounds") == "[900,75][1080,225]"  # 0.75 of the recorded bounds
    assert Image.open(io.BytesIO(app.screenshot_png())).size == (1080, 2160)
    app.tap(990, 150)
    assert app.current_state == "s2023-01-01_100020" and not app.unmatched


def test_the_replay_reaches_the_permission_prompt_a_task_was_recorded_with(upstream: Path) -> None:
    """Calendar's 'Add contact anniversaries' was recorded leading past the contacts prompt (granted
    earlier that session) and, later, to it; task9's trace went through the prompt."""
    calendar = ReplayApp(upstream / "droidtask" / "apps" / "calendar")
    calendar.go_to(next(s for s in calendar.states if s.startswith("29e004eb")))
    calendar.tap(700, 510)
    assert calendar.current_state.startswith("0a326c72") and "Allow" in calendar.dump_xml()
    dialer = ReplayApp(upstream / "droidtask" / "apps" / "dialer")
    wide = [s for s, r in dialer.states.items() if r.get("width") == 1440]
    assert wide and dialer.screen_size == (1080, 2280)
    for state in wide:
        dialer.go_to(state)
        right = max(int(b) for b in re.findall(r"\]\[(\d+),", dialer.dump_xml()))
        assert right <= 1080, state


def test_a_tap_on_an_item_recorded_at_another_scroll_position_follows_that_tap(upstream: Path) -> None:
    """Firefox's settings scrolled down once are two states a row apart (the hash covers the scroll
    position); 'Set as default browser' was tapped only in the other one. The tap on the item
    follows that recorded tap: same activity, same scroll view, same item."""
    firefox = ReplayApp(upstream / "droidtask" / "apps" / "firefox")
    firefox.go_to(next(s for s in firefox.states if s.startswith("411d8b61")))
    firefox.swipe(540, 1800, 540, 600, 300)
    here = firefox.current_state
    assert here.startswith("2d5902cc") and not any(e.view and e.view[2] == "Set as default browser"
                                                   for e in firefox.events_from(here))
    item = next(n for n in etree.fromstring(firefox.dump_xml().encode()).iter("node")
                if n.get("text") == "Set as default browser")
    x1, y1, x2, y2 = (int(c) for c in re.findall(r"\d+", item.get("bounds", "")))
    firefox.tap((x1 + x2) // 2, (y1 + y2) // 2)
    assert firefox.current_state.startswith("2defaf32") and "Set as default" in firefox.dump_xml()
    # a tap on a place no recorded state of the screen has an event for still changes nothing
    firefox.go_to(here)
    firefox.tap(540, 140)
    assert firefox.current_state == here and firefox.unmatched


def test_a_tab_tapped_in_another_state_of_its_screen_shows_its_page(upstream: Path) -> None:
    """The file manager's Storage tab was tapped from one Recents page only; another Recents page
    (a hash apart: its list changed) has no event for it. A tab shows its page whatever the page
    before it showed, so the tap follows the recorded one; the selected tab leads nowhere new."""
    files = ReplayApp(upstream / "droidtask" / "apps" / "filemanager")

    def selected() -> list[str]:
        return [n.get("text", "") for n in etree.fromstring(files.dump_xml().encode()).iter("node")
                if n.get("resource-id", "").endswith("tab_item_label") and n.get("selected") == "true"]

    def tap(text: str) -> None:
        node = next(n for n in etree.fromstring(files.dump_xml().encode()).iter("node") if n.get("text") == text)
        x1, y1, x2, y2 = (int(c) for c in re.findall(r"\d+", node.get("bounds", "")))
        files.tap((x1 + x2) // 2, (y1 + y2) // 2)

    files.go_to(next(s for s in files.states if s.startswith("0965788225")))
    here = files.current_state
    assert selected() == ["Recents"] and not any(e.view and e.view[2] == "Storage" for e in files.events_from(here))
    tap("Recents")
    assert files.current_state == here
    tap("Storage")
    assert selected() == ["Storage"]


def test_a_replay_for_a_task_starts_where_its_trace_starts(tmp_path: Path) -> None:
    """``ReplayApp(folder, task)`` (device ``sim:FOLDER#task``) serves one task of the recording's
    traces: it starts on its trace's first state and prefers only that trace's outcomes."""
    row = [0, 100, 500, 200]
    states = {"2023-01-01_100000": (1080, [("Add birthdays", row)]),
              "2023-01-01_100005": (1080, [("Allow", [0, 300, 500, 400])]),
              "2023-01-01_110005": (1080, [("Done", [0, 500, 500, 600])])}
    events = [("2023-01-01_095959", "2023-01-01_100000", "2023-01-01_100000", None),
              ("2023-01-01_100003", "2023-01-01_100000", "2023-01-01_100005", row),
              ("2023-01-01_110003", "2023-01-01_100000", "2023-01-01_110005", row)]
    folder = _recording(tmp_path / "rec", states, events)
    (folder / "traces").mkdir()
    (folder / "traces" / "task1.yaml").write_text("records:\n- tag: 2023-01-01_100000\n- tag: 2023-01-01_110005\n",
                                                  encoding="utf-8")
    (folder / "traces" / "task2.yaml").write_text("records:\n- tag: 2023-01-01_100005\n", encoding="utf-8")
    whole = ReplayApp(folder)
    assert whole.start_state == "s2023-01-01_100000" and len(whole.traced) == 3
    whole.tap(250, 150)  # both outcomes are traced: the earliest
    assert whole.current_state == "s2023-01-01_100005"
    second = ReplayApp(folder, "task2")
    assert second.start_state == second.current_state == "s2023-01-01_100005"
    assert second.traced == {"2023-01-01_100005"}
    second.tap(250, 350)
    second.launch()
    assert second.current_state == "s2023-01-01_100005"
    first = replay_app(f"{folder}#task1")
    assert isinstance(first, ReplayApp) and first.task == "task1" and first.start_state == "s2023-01-01_100000"
    first.tap(250, 150)  # the outcome task1's trace went through
    assert first.current_state == "s2023-01-01_110005"
    with pytest.raises(SimUsageError, match="no trace traces/task9.yaml"):
        ReplayApp(folder, "task9")


def test_a_state_its_events_name_but_no_file_holds_is_the_file_saved_between_them(tmp_path: Path,
                                                                                  upstream: Path) -> None:
    """Notes' 'Save to PDF' led to a state no file holds, and the files app's Save was tapped in
    it; the one file saved between the two taps shows that screen under a hash no event names."""
    notes = ReplayApp(upstream / "droidtask" / "apps" / "notes")
    notes.go_to(next(s for s in notes.states if s.startswith("7fa3771b")))
    notes.tap(970, 486)
    assert notes.current_state.startswith("654286db") and 'text="SAVE"' in notes.dump_xml()
    notes.tap(920, 2082)
    assert notes.current_state.startswith("7dd599d9") and not notes.unmatched
    # the same on a small recording; a file whose hash an event names is a state of its own
    states = {"2023-01-01_100000": (1080, [("Save", [0, 100, 500, 200])]),
              "2023-01-01_100010": (1080, [("SAVE", [0, 300, 500, 400])])}
    events = [("2023-01-01_095959", "2023-01-01_100000", "2023-01-01_100000", None),
              ("2023-01-01_100005", "2023-01-01_100000", "lost", [0, 100, 500, 200]),
              ("2023-01-01_100015", "lost", "2023-01-01_100000", [0, 300, 500, 400])]
    app = ReplayApp(_recording(tmp_path / "rec", states, events))
    app.tap(250, 150)
    assert app.current_state == "s2023-01-01_100010"
    app.tap(250, 350)
    assert app.current_state == "s2023-01-01_100000"
    events.append(("2023-01-01_100020", "2023-01-01_100010", "2023-01-01_100000", [0, 300, 500, 400]))
    app = ReplayApp(_recording(tmp_path / "named", states, events))
    app.tap(250, 150)
    assert app.current_state == UNRECORDED


def _enabled(app: ReplayApp, resource_id: str) -> bool:
    node = next(n for n in etree.fromstring(app.dump_xml().encode()).iter("node")
                if n.get("resource-id") == resource_id)
    return node.get("enabled") == "true"


def test_a_choice_in_a_dialog_enables_the_button_a_recorded_tap_went_on_with(upstream: Path) -> None:
    """File Manager's 'Open with' dialog was saved with Always disabled; the person picked Gallery
    (the state stayed the same) and tapped Always, recorded enabled, which opened the gallery."""
    files = ReplayApp(upstream / "droidtask" / "apps" / "filemanager")
    dialog = next(s for s in files.states if s.startswith("fe16e00c"))
    files.go_to(dialog)
    assert not _enabled(files, "android:id/button_always")  # until a choice is made
    files.tap(241, 1583)
    assert files.current_state == dialog and _enabled(files, "android:id/button_always")
    assert not _enabled(files, "android:id/button_once")  # no recorded tap went on with it
    files.tap(936, 2060)
    assert files.current_state.startswith("77e9a326")


def test_text_the_recording_lacks_goes_on_as_other_text_typed_into_the_field_did(upstream: Path) -> None:
    """Messenger's thread was recorded with 'I-love-you' typed, which enabled Send and changed
    nothing else (the twin state), and Send was tapped there. With 'Morning' typed the thread keeps
    its own recorded inputs, shows Send enabled, and Send goes on to the SMS confirmation as the
    twin's did. A search, whose results depend on the text, has no twin."""
    messenger = ReplayApp(upstream / "droidtask" / "apps" / "messenger")
    thread = next(s for s in messenger.states if s.startswith("aeda9619"))
    messenger.go_to(thread)
    send = "com.simplemobiletools.smsmessenger:id/thread_send_message"
    assert not _enabled(messenger, send)
    messenger.tap(1003, 2082)
    assert messenger.current_state == thread  # an empty thread's Send does nothing
    messenger.tap(540, 2082)
    messenger.input_text("Morning")
    assert messenger.current_state == thread and _enabled(messenger, send)
    assert "Morning" in messenger.dump_xml() and "I-love-you" not in messenger.dump_xml()
    assert not messenger.followed  # the recording did not type it
    messenger.tap(1003, 2082)
    assert messenger.current_state.startswith("4633ee21") and 'text="Send"' in messenger.dump_xml()
    assert messenger.followed[-1].start.startswith("76273358")
    messenger.go_to(thread)
    messenger.tap(540, 2082)
    messenger.input_text("M")
    for _ in "Type a message…M":  # the field's recorded text (its hint) and the typed text
        messenger.key("KEYCODE_DEL")
    assert not _enabled(messenger, send)  # emptied: Send is disabled again
    messenger.tap(1003, 2082)
    assert messenger.current_state == thread
    messenger.reset()
    messenger.input_text("Bob")  # the recorded search for 'Alice' shows Alice's results
    assert messenger.current_state == messenger.start_state and "Bob" in messenger.dump_xml()


def test_typed_text_keeps_the_recorded_inputs_of_the_screen_it_was_typed_on(upstream: Path) -> None:
    """Calendar's New Event screen was recorded with several titles typed ('hello' first), each the
    same screen but for the title, and their Save taps; from the untitled screen the recording
    tapped the start date. With 'VisitParents' typed the start date still opens the date picker
    (the 'hello' screen has no such tap), and Save, which only the titled screens have, goes on."""
    calendar = ReplayApp(upstream / "droidtask" / "apps" / "calendar")
    new_event = next(s for s in calendar.states if s.startswith("f1c1ea25"))
    calendar.go_to(new_event)
    calendar.tap(1014, 248)  # Save, untitled: not recorded
    assert calendar.current_state == new_event and calendar.unmatched
    for then, reached in (((294, 1099), "52a929fa"), ((1014, 248), calendar.start_state[:8])):
        calendar.go_to(new_event)
        calendar.tap(540, 429)
        calendar.input_text("VisitParents")
        assert calendar.current_state == new_event and "VisitParents" in calendar.dump_xml()
        calendar.tap(*then)
        assert calendar.current_state.startswith(reached)
