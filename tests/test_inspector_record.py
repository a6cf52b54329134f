"""``tapir record`` on the simulator: two sample tasks recorded, then replayed green by ``tapir run``.

The Music task is done by a person's hands on the phone (``SimDevice.hands``: the touches reach the
recorder through real adb as ``getevent -lt`` output, as a phone's do); the Notes task is done
from the inspector's side (``LiveSession.act``, what the page's buttons send). Each recording is
checked against the statements it must contain, then run by ``tapir run`` on a fresh simulator.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tapir.hierarchy.model import UINode
from tapir.inspector.live import LiveSession
from tapir.inspector.session import InspectorOptions, InspectorSession

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.adb, pytest.mark.slow, pytest.mark.timeout(300)]


def _until(what: str, ok: Callable[[], bool], timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _node(live: LiveSession, *, text: str = "", rid: str = "") -> UINode:
    assert live.state is not None
    for n in live.state.tree.nodes:
        if n.visible and (not text or n.text == text) and (not rid or n.resource_name == rid):
            return n
    raise AssertionError(f"no view {text or rid} on {live.state.match.name}")


def _replay(script: Path, device: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tapir.cli", "run", str(script), "--device", device],
                          capture_output=True, text=True, timeout=240, cwd=script.parent)


def test_a_person_s_taps_on_the_phone_are_recorded_and_replay_green(tmp_path: Path) -> None:
    out = tmp_path / "play.tap"
    options = InspectorOptions(device="sim:music", document=ROOT / "samples/music/music.yaml", port=0,
                               interval=0.2, screenshots=False, record=out, page=False)
    with InspectorSession(options) as session:
        assert session.input is not None, session.input_note
        live = session.live
        assert live is not None and live.recorder is not None and session.runtime is not None
        sim = session.runtime.simulator.device  # type: ignore[attr-defined]
        hands = sim.hands
        recorder = live.recorder
        # getevent reports only what happens once it runs (as on a phone): touch after it started
        _until("getevent to start", lambda: sim.input_events.readers > 0)

        song = live.call(lambda: _node(live, text="Cinder"))
        hands.tap(*song.bounds.center)
        _until("the song's tap", lambda: len(recorder.steps) >= 1)
        _until("the now playing bar", lambda: live.state is not None and any(
            n.resource_name == "now_playing_bar" for n in live.state.tree.nodes if n.visible))
        bar = live.call(lambda: _node(live, rid="now_playing_bar"))
        hands.tap(*bar.bounds.center)
        _until("the bar's tap", lambda: len(recorder.steps) >= 2)
        _until("the now playing screen",
               lambda: live.state is not None and live.state.match.name == "now_playing_screen")
        hands.key("BACK")
        _until("BACK", lambda: len(recorder.steps) >= 3)
    script = out.read_text(encoding="utf-8")
    statements = [line for line in script.splitlines() if line and not line.startswith("#")]
    assert statements == ['$songs_screen__song_list.match("Cinder").tap()', "$songs_screen__now_playing_bar.tap()",
                          "back()"], script
    assert script.startswith("# doc: ")
    run = _replay(out, "sim:music")
    assert run.returncode == 0, run.stdout + run.stderr


def test_actions_from_the_page_are_recorded_and_replay_green(tmp_path: Path) -> None:
    out = tmp_path / "note.tap"
    options = InspectorOptions(device="sim:notes", document=ROOT / "samples/notes/notes.yaml", port=0,
                               screenshots=False, device_input=False)
    with InspectorSession(options) as session:
        live = session.live
        assert live is not None
        live.call(lambda: live.start_recording(out))

        def act(action: str, text: str = "", **find: str) -> None:
            def go() -> None:
                assert live.state is not None
                live.act(action, live.state.seq, _node(live, **find).id, text=text)
            live.call(go)

        act("tap", rid="fab_new_note")
        assert live.state is not None and live.state.match.name == "edit_note_screen"
        act("type", "Call the plumber", rid="note_title_input")
        act("type", "Kitchen tap drips", rid="note_body_input")
        act("tap", rid="save_note")
        assert live.state is not None and live.state.match.name == "note_screen"
        text = live.call(live.stop_recording)
    statements = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert statements == ["$notes_screen__new_note_button.tap()",
                          '$edit_note_screen__title_input.set_text("Call the plumber")',
                          '$edit_note_screen__body_input.set_text("Kitchen tap drips")',
                          "$edit_note_screen__save_button.tap()"], text
    assert out.read_text(encoding="utf-8") == text
    run = _replay(out, "sim:notes")
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_action_no_element_claims_is_written_as_comments_with_identifiers(tmp_path: Path) -> None:
    out = tmp_path / "unclaimed.tap"
    options = InspectorOptions(device="sim:music", document=ROOT / "samples/music/music.yaml", port=0,
                               screenshots=False, device_input=False, record=out, page=False)
    with InspectorSession(options) as session:
        live = session.live
        assert live is not None

        def tap_title() -> None:
            assert live.state is not None
            live.act("tap", live.state.seq, _node(live, text="Music").id)

        live.call(tap_title)
    script = out.read_text(encoding="utf-8")
    body = [line for line in script.splitlines()[2:] if line.strip()]
    assert body and all(line.startswith("#") for line in body), script
    assert any("//node[@text='Music']" in line for line in body), script
    from tapir.service import Workspace

    assert not Workspace().check(str(out)).errors
