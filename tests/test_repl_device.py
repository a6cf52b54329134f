"""The REPL session on the simulated Music app, through the real adb server and ``AdbDevice``:
tapping through the app statement by statement, the screen commands, the trace, Ctrl-C between
two device commands, switching documents, ``:load`` and a ``:save``d script that ``tapir run``
then passes on a fresh device.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tapir.dsl.budget import Budgets
from tapir.repl import ReplSession

pytestmark = [pytest.mark.adb, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parent.parent
MUSIC_DOC = REPO / "samples" / "music" / "music.yaml"
PACKAGE = "org.tapir.music"


class Repl:
    def __init__(self, session: ReplSession) -> None:
        self.session = session

    def __call__(self, text: str) -> tuple[bool, str, str]:
        out, err = self.session.out, self.session.err
        assert isinstance(out, io.StringIO) and isinstance(err, io.StringIO)
        o, e = len(out.getvalue()), len(err.getvalue())
        ok = self.session.handle(text)
        return ok, out.getvalue()[o:], err.getvalue()[e:]

    def app(self) -> Any:
        return self.session.link.runtime().simulator.device.app(PACKAGE)

    def sim_log(self) -> list[str]:
        return list(self.session.link.runtime().simulator.device.log)


@pytest.fixture
def repl(tmp_path: Path, adb_port: int) -> Iterator[Repl]:
    session = ReplSession(device="sim:music", document=MUSIC_DOC, out=io.StringIO(), err=io.StringIO(),
                          cwd=tmp_path, adb_port=adb_port, budgets=Budgets(max_actions=100, timeout_s=120))
    yield Repl(session)
    session.close()


def test_tap_through_the_app_one_statement_at_a_time(repl: Repl) -> None:
    assert repl("$songs_screen__song_count.get_text()") == (True, "'44 songs'\n", "")
    assert repl('song = $songs_screen__song_list.match("Lanterns")')[0]
    assert repl("song.tap()") == (True, "", "")
    assert repl.app().state.song(repl.app().state.now_playing).title == "Lanterns"
    assert repl("$songs_screen__now_playing_bar.tap()")[0]
    assert repl("title = $now_playing_screen__title_text.get_text()")[0]
    assert repl("title, $now_playing_screen__artist_text.get_text()") == (True, "('Lanterns', 'Harbor Lane')\n", "")
    assert repl.session.current_screen() == "now_playing_screen"


def test_completion_knows_what_a_variable_holds(repl: Repl) -> None:
    assert repl("first = $songs_screen__song_list[0]")[0]  # an item of a list of buttons
    labels = [i.label for i in repl.session.complete("first.", 6)]
    assert {"tap", "get_text"} <= set(labels) and "set_text" not in labels
    [item] = [i for i in repl.session.complete("fir", 3) if i.label == "first"]
    assert "songs_screen__song_list" in item.detail


def test_a_failing_ui_call_is_shown_and_the_session_goes_on(repl: Repl) -> None:
    ok, _, err = repl('$songs_screen__song_list.match("No Such Song").tap()')
    assert not ok
    assert err.startswith("<repl>:1:1: ActionError:") and "No Such Song" in err
    assert "    ^" in err
    assert repl("$songs_screen__song_count.get_text()")[1] == "'44 songs'\n"


def test_screen_tree_find_and_trace(repl: Repl) -> None:
    repl('$songs_screen__song_list.match("Lanterns").tap()')
    ok, out, _ = repl(":screen")
    assert ok
    assert out.startswith("screen songs_screen (confidence ")
    assert "+ $songs_screen__search_button" in out and "identifier 0" in out
    assert "+ $songs_screen__now_playing_bar" in out  # a song plays: the bar is there
    assert "elements of songs_screen ground on this screen" in out
    ok, out, _ = repl(":tree")
    assert ok and "Button #search desc='Search' [clickable]  <- $songs_screen__search_button" in out
    ok, out, _ = repl(":find //node[@resource-id='org.tapir.music:id/now_playing_title']")
    assert ok and out.startswith("1 view match (uiautomator XPath) on songs_screen")
    assert "'Lanterns'" in out and "<- $songs_screen__now_playing_title" in out
    ok, out, _ = repl(":find //p[@resource_id='songs_count']")  # AutoDroid-V2's HTML form
    assert ok and out.startswith("1 view match (html XPath)") and "<- $songs_screen__song_count" in out
    ok, _, err = repl(":find //node[@text=")
    assert not ok and "invalid XPath" in err
    ok, out, _ = repl(":trace 3")
    assert ok
    tap = out.splitlines()[-1]
    assert tap.startswith("[1] <repl>:1  tap $songs_screen__song_list.match('Lanterns')")
    assert "'Lanterns'" in tap and "ok" in tap


def test_ctrl_c_lets_the_device_command_under_way_finish_and_sends_no_other(repl: Repl) -> None:
    assert repl('song = $songs_screen__song_list.match("Lanterns")')[0]
    sim = repl.session.link.runtime().simulator.device
    sim.faults.latency["input"] = 1.0  # the tap's `input tap` takes a second, as on a slow phone
    sent = len(repl.sim_log())
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    started = time.monotonic()
    ok, _, err = repl("song.tap()")
    took = time.monotonic() - started
    sim.faults.latency.clear()
    assert not ok
    assert err.startswith("<repl>:1:1: Interrupted: stopped by Ctrl-C\n    song.tap()\n")
    # the tap was pressed during the command: the command completed (the song plays)...
    assert took >= 1.0
    assert repl.app().state.song(repl.app().state.now_playing).title == "Lanterns"
    # ... and nothing was sent after it (not even the dump that would have followed)
    after = repl.sim_log()[sent:]
    taps = [i for i, command in enumerate(after) if command.startswith("input tap")]
    assert len(taps) == 1 and taps[0] == len(after) - 1, after
    # the session goes on, looking at the screen afresh
    assert repl("$songs_screen__now_playing_title.get_text()") == (True, "'Lanterns'\n", "")
    assert "song.tap()" not in [s.text for s in repl.session.transcript.statements]


def test_ctrl_c_stops_a_long_polling_loop(repl: Repl) -> None:
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    ok, _, err = repl("reads = 0\nwhile True:\n    n = $songs_screen__song_count.get_text()\n    reads += 1\n")
    assert not ok and "Interrupted: stopped by Ctrl-C" in err
    assert repl("reads > 0 and n == '44 songs'") == (True, "True\n", "")


def test_switching_documents_keeps_the_device(repl: Repl) -> None:
    assert repl("$songs_screen__song_count.get_text()")[0]
    serial = repl.session.link.serial
    ok, out, _ = repl(f":document {MUSIC_DOC}")
    assert ok and "org.tapir.music" in out
    assert repl.session.link.serial == serial
    assert repl("$songs_screen__song_count.get_text()") == (True, "'44 songs'\n", "")


def test_load_runs_a_sample_script_on_the_device(repl: Repl) -> None:
    ok, out, err = repl(f":load {REPO / 'samples' / 'music' / 'play_song.tap'}")
    assert ok, err
    assert "now playing: Lanterns by Harbor Lane" in out
    assert repl("title")[1] == "'Lanterns'\n"


def test_a_saved_session_passes_tapir_check_and_tapir_run(repl: Repl, tmp_path: Path) -> None:
    assert repl('$songs_screen__song_list.match("Lanterns").tap()')[0]
    assert repl("$songs_screen__now_playing_bar.tap()")[0]
    repl("$now_playing_screen__nope.tap()")  # refused: not saved
    assert repl("title = $now_playing_screen__title_text.get_text()")[0]
    assert repl("assert title == 'Lanterns', title")[0]
    ok, out, err = repl(":save play.tap")
    assert ok, err
    assert "(tapir check: clean)" in out
    script = tmp_path / "play.tap"
    check = subprocess.run([sys.executable, "-m", "tapir.cli", "check", str(script)], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    run = subprocess.run([sys.executable, "-m", "tapir.cli", "run", str(script), "--device", "sim:music"],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr


def test_the_repl_takes_its_device_budgets_and_document_from_tapir_toml(tmp_path: Path, adb_port: int) -> None:
    """`tapir repl` with no flags in a project: [device] default, [budgets] (per statement) and the
    [documents] glob of a script in the working folder, as `tapir run` takes them; flags win."""
    (tmp_path / "tapir.toml").write_text(f'[device]\ndefault = "sim:music"\n\n[budgets]\nmax_actions = 1\n\n'
                                         f'[documents]\n"*.tap" = "{MUSIC_DOC}"\n')
    loop = "for i in range(2):\n    $songs_screen__search_button.tap()\n    back()\n\nprint('looped')\n"
    env = {k: v for k, v in os.environ.items() if k != "ANDROID_SERIAL"}

    def repl(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tapir.cli", "repl", "--adb-port", str(adb_port), *flags],
                              input="$songs_screen__song_count.get_text()\n" + loop, capture_output=True,
                              text=True, timeout=180, cwd=tmp_path, env=env)

    limited = repl()
    assert "'44 songs'" in limited.stdout, limited.stderr  # the device and document of the project
    assert "BudgetExceeded: actions budget exceeded: back() would be UI action number 2 (limit 1)" in limited.stderr
    assert limited.returncode == 1
    free = repl("--max-actions", "10")
    assert free.returncode == 0, free.stderr
    assert free.stdout.endswith("looped\n")
