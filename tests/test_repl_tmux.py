"""The REPL used as a person uses it: the real ``tapir repl --device sim:music`` in a terminal
(tmux), keys sent with ``send-keys`` and the screen read with ``capture-pane``.

One session loads a document, taps through the Music app, sees the completion menu open as it
types, recovers from two errors, stops a long loop with Ctrl-C, saves what it did and leaves with
Ctrl-D; the saved script then passes ``tapir run`` on a fresh simulator, and a second session
finds the first one's input in its history. Skipped without tmux (`.ci/run` installs Debian's).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.adb, pytest.mark.slow, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parent.parent
MUSIC_DOC = REPO / "samples" / "music" / "music.yaml"


class Terminal:
    """A tmux server of its own with one window running ``command``."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str], width: int = 120, height: int = 40) -> None:
        self.socket = f"tapir-repl-{uuid.uuid4().hex[:10]}"
        line = " ".join(_quote(a) for a in ["env", *(f"{k}={v}" for k, v in env.items()), *command])
        self._tmux("-f", "/dev/null", "new-session", "-d", "-s", "repl", "-x", str(width), "-y", str(height),
                   "-c", str(cwd), line)

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30,
                              check=check)

    def type(self, text: str) -> None:
        """Type ``text`` literally (no key names)."""
        self._tmux("send-keys", "-t", "repl", "-l", text)

    def press(self, *keys: str) -> None:
        """Press keys by tmux name: ``Enter``, ``C-c``, ``C-d``, ``Up``, ``Tab``."""
        self._tmux("send-keys", "-t", "repl", *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-t", "repl").stdout

    def wait_for(self, pattern: str, timeout: float = 60) -> str:
        """The screen once ``pattern`` (a regular expression) shows on it."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen() if self.alive() else ""
            if re.search(pattern, shown, re.MULTILINE):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} did not show within {timeout} s; the screen:\n{shown}")
            time.sleep(0.1)

    def wait_for_prompt(self, count: int, timeout: float = 60) -> str:
        """The screen once ``count`` prompts have shown (each input ends with a fresh one)."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if len(re.findall(r"^tapir>", shown, re.MULTILINE)) >= count:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"prompt {count} did not show; the screen:\n{shown}")
            time.sleep(0.1)

    def alive(self) -> bool:
        return self._tmux("has-session", "-t", "repl", check=False).returncode == 0

    def wait_closed(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while self.alive():
            assert time.monotonic() < deadline, "the REPL did not leave"
            time.sleep(0.1)

    def close(self) -> None:
        self._tmux("kill-server", check=False)


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    from tapir.core.errors import DeviceError
    from tapir.sim.launch import find_adb

    try:
        find_adb()
    except DeviceError as exc:
        pytest.skip(str(exc))
    made: list[Terminal] = []
    yield made
    for t in made:
        t.close()


def _env(tmp_path: Path) -> dict[str, str]:
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "TERM": "xterm-256color"}
    for name in ("PYTHONPATH", "PATH", "HOME", "ADB_LIBUSB"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def test_a_person_at_the_terminal(tmp_path: Path, terminals: list[Terminal]) -> None:
    repl = Terminal([sys.executable, "-m", "tapir.cli", "repl", "--device", "sim:music"], tmp_path, _env(tmp_path))
    terminals.append(repl)
    shown = repl.wait_for(r"^tapir>")
    assert "tapir repl · sim:music (127.0.0.1:" in shown  # the simulator is up before the first prompt
    prompts = 1

    def enter(text: str) -> str:
        """Type a line, press Enter, and wait until the input has run (a new prompt shows)."""
        nonlocal prompts
        repl.type(text)
        repl.press("Enter")
        prompts += 1
        return repl.wait_for_prompt(prompts)

    # load a document
    shown = enter(f":document {MUSIC_DOC}")
    assert re.search(r"document .*music\.yaml: Music \(org\.tapir\.music\), \d+ screens, \d+ elements", shown)

    # the completion menu opens as the element is typed
    repl.type("$songs_scr")
    menu = repl.wait_for(r"\$songs_screen__song_list +list of button")
    assert re.search(r"\$songs_screen__song_count +text · songs_screen", menu)
    # tap through the app; a value is echoed
    enter('een__song_list.match("Lanterns").tap()')
    enter("$songs_screen__now_playing_bar.tap()")
    enter("title = $now_playing_screen__title_text.get_text()")
    assert re.search(r"^tapir> title\n'Lanterns'\ntapir>", enter("title"), re.MULTILINE)

    # two errors, shown as the command line shows them; the session goes on
    shown = enter("$now_playing_screen__title_txt.get_text()")
    assert re.search(r"<repl>:1:1: error\[unknown-element\].*did you mean \$now_playing_screen__title_text\?", shown)
    assert "<repl>:1:9: ScriptError: division by zero" in enter("count = len(title) / 0")
    assert re.search(r"^tapir> len\(title\)\n8\ntapir>", enter("len(title)"), re.MULTILINE)

    # a loop that would run for minutes, stopped with Ctrl-C
    repl.type("while True:")
    repl.press("Enter")
    repl.type("playing = $now_playing_screen__title_text.get_text()")
    repl.press("Enter", "Enter")
    time.sleep(1.5)
    repl.press("C-c")
    prompts += 1
    shown = repl.wait_for_prompt(prompts)
    # where it stops depends on the moment: the loop's next round (1:1), the assignment (2:1) or
    # the UI call (2:15); each is a step boundary, so any is right
    assert re.search(r"<repl>:(1:1|2:1|2:15): Interrupted: stopped by Ctrl-C", shown), shown
    assert re.search(r"^tapir> playing\n'Lanterns'\ntapir>", enter("playing"), re.MULTILINE)

    # save what ran (less what needs the stopped loop), and leave
    shown = enter(":save play.tap")
    assert "saved 5 statements to play.tap (tapir check: clean)" in shown
    assert re.search(r"left out: playing +\(unknown name 'playing'\)", shown)
    repl.press("C-d")
    repl.wait_closed()

    script = (tmp_path / "play.tap").read_text()
    assert script.startswith("# doc: ")
    assert "title_txt" not in script and "/ 0" not in script and "while True" not in script
    run = subprocess.run([sys.executable, "-m", "tapir.cli", "run", str(tmp_path / "play.tap"), "--device",
                          "sim:music"], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr

    # a new session finds the last one's input in its history
    again = Terminal([sys.executable, "-m", "tapir.cli", "repl"], tmp_path, _env(tmp_path))
    terminals.append(again)
    again.wait_for(r"^tapir>")
    again.press("Up")
    again.wait_for(r"^tapir> :save play\.tap")
    again.press("Up")
    again.wait_for(r"^tapir> playing *$")
    again.press("C-c")  # Ctrl-C drops the recalled line; Ctrl-D on the empty line leaves
    again.wait_for_prompt(2)
    again.press("C-d")
    again.wait_closed()
