"""Every sample script runs on a fresh simulated device through the real adb path.

Each ``samples/<app>/*.tap`` is run the way ``tapir run SCRIPT --device sim:<app>`` runs it: a
simulator behind a real adb server (one private server for the module), the real
``AdbDevice``, the grounding core and the sample document. The test asserts that the script
finished and, from the simulated app's own state, that it did what it says.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tapir.docgen.loader import load_document
from tapir.docgen.symbols import build_symbols
from tapir.dsl.interpreter import RunResult, run_script
from tapir.runtime.connect import Connection, connect
from tapir.runtime.session import DeviceRuntime

pytestmark = [pytest.mark.adb, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
#: (samples/suite holds the references of `tapir eval`'s suite: tests/test_eval_suite.py runs them)
# a flow (``_login.tap``) runs from the samples that call it, with their arguments
SCRIPTS = sorted(p for p in SAMPLES.rglob("*.tap")
                 if "generated" not in p.parts and "suite" not in p.parts and not p.name.startswith("_"))
#: Hierarchy dumps per device input, on average over the samples (issue 5's target).
DUMPS_PER_ACTION_TARGET = 1.5


# -- what each sample must leave behind, read from the app's state ---------------------------------

def _music_play_song(app: Any, run: RunResult) -> None:
    assert app.state.song(app.state.now_playing).title == "Lanterns" and app.state.playing


def _music_add_artist(app: Any, run: RunResult) -> None:
    playlist = next(p for p in app.state.playlists if p.name == "Harbor Lane")
    by_artist = {s.id for s in app.state.songs if s.artist == "Harbor Lane"}
    assert set(playlist.songs) == by_artist and len(playlist.songs) == len(by_artist) == 6


def _music_dark_theme(app: Any, run: RunResult) -> None:
    assert (app.state.theme, app.state.sort) == ("Dark", "Artist")


def _music_longest_song(app: Any, run: RunResult) -> None:
    longest = max(app.state.songs, key=lambda s: s.duration)
    assert app.state.now_playing == longest.id
    assert run.printed == (f"longest of {len(app.state.songs)} songs: {longest.title} ({longest.duration} s)",)


def _music_rename_playlist(app: Any, run: RunResult) -> None:
    assert [p.name for p in app.state.playlists] == ["Morning run", "Road trip"]


def _music_shuffle_playlist(app: Any, run: RunResult) -> None:
    road = next(p for p in app.state.playlists if p.name == "Road trip")
    assert app.state.shuffle and app.state.playing and app.state.now_playing == road.songs[0]


def _clock_add_alarm(app: Any, run: RunResult) -> None:
    assert any((a.hour, a.minute, a.enabled) == (7, 30, True) for a in app.state.alarms)


def _clock_enable_all(app: Any, run: RunResult) -> None:
    assert app.state.alarms and all(a.enabled for a in app.state.alarms)


def _contacts_add(app: Any, run: RunResult) -> None:
    grace = [c for c in app.state.contacts if c.name == "Grace Hopper"]
    assert len(grace) == 1 and grace[0].phone == "+1 555 0199"


def _contacts_favourite(app: Any, run: RunResult) -> None:
    assert next(c for c in app.state.contacts if c.name == "Ben Okafor").favourite


def _notes_tick(app: Any, run: RunResult) -> None:
    items = {i.text: i.checked for i in next(n for n in app.state.notes if n.title == "Shopping list").items}
    assert items["Bread"] is True and "Butter" in items


def _notes_write(app: Any, run: RunResult) -> None:
    note = next(n for n in app.state.notes if n.title == "Call the plumber")
    assert note.body == "Kitchen tap drips; ask about Tuesday."


def _notes_rate_prompt(app: Any, run: RunResult) -> None:
    titles = [n.title for n in app.state.notes]
    assert len(titles) == 15 and {"Milk and eggs", "Call Ana back", "Fix the bike"} <= set(titles)
    # the prompt was on, asked after each save and was answered "Not now" each time
    assert (app.state.rate_prompt_after, app.state.saves, app.state.rated) == (1, 3, False)
    assert app.current_dialog is None


def _clock_run_timer(app: Any, run: RunResult) -> None:
    assert app.state.timer_state == "idle" and app.now - app.start_time >= 40


def _weather_refresh(app: Any, run: RunResult) -> None:
    assert app.state.updating_until is None and app.state.updated_at is not None
    assert run.printed == (run.printed[0],) and run.printed[0].startswith("Updated at ")


STATE_CHECKS: dict[str, Callable[[Any, RunResult], None]] = {
    "music/play_song.tap": _music_play_song,
    "music/add_artist_to_playlist.tap": _music_add_artist,
    "music/dark_theme.tap": _music_dark_theme,
    "music/longest_song.tap": _music_longest_song,
    "music/rename_playlist.tap": _music_rename_playlist,
    "music/shuffle_playlist.tap": _music_shuffle_playlist,
    "clock/add_alarm.tap": _clock_add_alarm,
    "clock/enable_all_alarms.tap": _clock_enable_all,
    "contacts/add_contact.tap": _contacts_add,
    "contacts/favourite_contact.tap": _contacts_favourite,
    "notes/tick_shopping_item.tap": _notes_tick,
    "notes/write_note.tap": _notes_write,
    "notes/rate_prompt.tap": _notes_rate_prompt,
    "clock/run_timer.tap": _clock_run_timer,
    "weather/refresh_forecast.tap": _weather_refresh,
}

#: (dumps, device inputs) of each sample run, for the average checked at the end.
_COUNTS: dict[str, tuple[int, int]] = {}


def test_there_are_samples_for_the_required_cases() -> None:
    names = {p.relative_to(SAMPLES).as_posix() for p in SCRIPTS}
    assert {"music/longest_song.tap", "music/rename_playlist.tap", "music/play_song.tap"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.relative_to(SAMPLES).as_posix() for p in SCRIPTS])
def test_sample_runs_on_its_simulated_app(script: Path, adb_port: int, tmp_path: Path) -> None:
    name = script.relative_to(SAMPLES).as_posix()
    source = script.read_text(encoding="utf-8")
    app_name = script.parent.name
    conn = Connection(device=f"sim:{app_name}", document=load_document(SAMPLES / app_name / f"{app_name}.yaml"),
                      source=source, script=str(script), adb_port=adb_port, artifacts=str(tmp_path / "artifacts"))
    made: list[DeviceRuntime] = []

    def factory() -> DeviceRuntime:
        rt = connect(conn)
        made.append(rt)
        return rt

    result = run_script(source, factory, output=None, symbols=build_symbols(conn.document), filename=str(script))
    assert result.error is None, result.error.render()
    [rt] = made
    assert rt.simulator is not None and rt.simulator.state() is None  # stopped and disconnected
    app = rt.simulator.device.app(conn.document.app.package)
    check = STATE_CHECKS.get(name)
    if check is not None:
        check(app, result)
    assert rt.stats.device_actions > 0
    # a wait's dumps measure how long the app took, not the runtime (SessionStats.wait_dumps)
    _COUNTS[name] = (rt.stats.dumps - rt.stats.wait_dumps, rt.stats.device_actions)


def test_dumps_per_action_over_the_samples() -> None:
    if len(_COUNTS) < len(SCRIPTS):
        pytest.skip("needs every sample run in this session")
    dumps = sum(d for d, _ in _COUNTS.values())
    actions = sum(a for _, a in _COUNTS.values())
    assert dumps / actions <= DUMPS_PER_ACTION_TARGET, _COUNTS


# -- the command line: `tapir run --device SERIAL` and `tapir test` --------------------------------


def test_tapir_run_on_an_adb_serial(adb_port: int, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A device given by serial takes the real-device path (resolve_serial, AdbDevice); here the
    device is a simulator attached to the test's adb server."""
    from tapir.cli import main
    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    app = get_app("music")
    with start_sim([app], adb_port=adb_port, foreground="org.tapir.music") as sim:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_port))
        code = main(["run", str(SAMPLES / "music" / "play_song.tap"), "--device", sim.serial])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "now playing: Lanterns by Harbor Lane" in out
        assert app.state.song(app.state.now_playing).title == "Lanterns"


def test_tapir_test_reports_each_script_and_fails_when_one_does(tmp_path: Path, adb_port: int,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from xml.etree import ElementTree

    from tapir.cli import main

    doc = SAMPLES / "music" / "music.yaml"
    (tmp_path / "good.tap").write_text(f"# doc: {doc}\n$songs_screen__song_list.match('Prism').tap()\n"
                                       "assert $songs_screen__now_playing_title.get_text() == 'Prism'\n")
    (tmp_path / "bad.tap").write_text(f"# doc: {doc}\nn = len($songs_screen__song_list)\n"
                                      "assert n == 3, f'{n} songs'\n")
    junit = tmp_path / "report.xml"
    code = main(["test", str(tmp_path), "--device", "sim:music", "--junit", str(junit),
                 "--artifacts", str(tmp_path / "artifacts")])
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"[1/2] FAIL  {tmp_path / 'bad.tap'}")
    assert f"{tmp_path / 'bad.tap'}:3:1: AssertionFailed: assertion failed: 44 songs" in out
    assert any(line.startswith(f"[2/2] PASS  {tmp_path / 'good.tap'}") for line in lines)
    assert "1 passed, 1 failed in " in out
    report = ElementTree.parse(junit).getroot()
    assert (report.get("tests"), report.get("failures")) == ("2", "1")
    failed = [c for c in report.iter("testcase") if c.find("failure") is not None]
    assert [c.get("file") for c in failed] == [str(tmp_path / "bad.tap")]


def test_an_unknown_simulated_app_is_a_usage_error_before_the_script_starts(
        capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    code = main(["run", str(SAMPLES / "music" / "play_song.tap"), "--device", "sim:musik"])
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown simulated app 'musik'" in err and "music" in err
    assert "^" not in err  # not reported against a line of the script


PLAY_SONG = SAMPLES / "music" / "play_song.tap"


@pytest.mark.parametrize("argv", [["run", str(PLAY_SONG), "--device", ""],
                                  ["run", str(PLAY_SONG), "--device", " "],
                                  ["test", str(PLAY_SONG), "--device", ""]])
def test_an_empty_device_flag_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    code = main(argv)
    assert code == 2
    assert "--device: is empty" in capsys.readouterr().err


def test_run_an_unreachable_serial_fails_quickly_with_a_device_error(
        adb_port: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import time

    from tapir.cli import main

    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_port))
    start = time.monotonic()
    code = main(["run", str(PLAY_SONG), "--device", "1.2.3.4:5555"])
    err = capsys.readouterr().err
    assert code == 1
    assert time.monotonic() - start < 20
    assert "DeviceError: --device names device '1.2.3.4:5555', which is not connected" in err
    # The hint names the adb server the run used, so the command works as printed.
    assert f"adb -P {adb_port} connect 1.2.3.4:5555" in err


def test_the_run_document_is_found_as_tapir_check_finds_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    from tapir.cli import main
    from tapir.service import Workspace

    (tmp_path / "app.yaml").write_text("app: {}\n")
    script = tmp_path / "s.tap"
    source = "# doc: app.yaml\nx = 1\n"
    script.write_text(source)
    found = Workspace().document_for(script, source)
    assert found is not None and found.path == tmp_path / "app.yaml"
    assert main(["run", str(script), "--device", "sim:music", "--doc", str(tmp_path)]) == 2
    assert "--doc: " in capsys.readouterr().err
    assert main(["run", str(script), "--device", "sim:music", "--doc", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml does not exist" in capsys.readouterr().err
    script.write_text("# doc: gone.yaml\nx = 1\n")
    assert main(["run", str(script), "--device", "sim:music"]) == 1
    assert "gone.yaml" in capsys.readouterr().err


def test_tapir_test_refuses_a_file_that_is_not_a_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    assert main(["test", str(notes)]) == 2
    assert f"not a test script (*.tap): {notes}" in capsys.readouterr().err


def test_tapir_test_trace_dir_onto_a_file_is_a_usage_error(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    taken = tmp_path / "taken"
    taken.write_text("")
    assert main(["test", str(PLAY_SONG), "--trace-dir", str(taken)]) == 2
    err = capsys.readouterr().err
    assert f"--trace-dir: cannot make the folder {taken}" in err and "internal error" not in err


@pytest.mark.parametrize("trace", ["missing-folder/run.jsonl", "."])
def test_a_bad_trace_path_is_refused_before_the_device_starts(trace: str, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tapir.cli import main

    monkeypatch.chdir(tmp_path)
    started = []
    monkeypatch.setattr("tapir.sim.launch.start_sim", lambda *a, **k: started.append(1))
    code = main(["run", str(SAMPLES / "music" / "play_song.tap"), "--device", "sim:music", "--trace", trace])
    assert code == 2 and "--trace" in capsys.readouterr().err
    assert not started
