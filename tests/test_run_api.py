"""`tapir.run.Runner`, the one way to run a script, as a caller sees it: a script without UI calls
needs no device; without a document its first UI call says what is missing; a session runs
several scripts on one device, each with its own records and device figures; a device spec that
cannot work is refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tapir.core.errors import DeviceError, UsageError
from tapir.docgen.loader import load_document
from tapir.run import Runner, RunOptions

REPO = Path(__file__).resolve().parent.parent
MUSIC = REPO / "samples" / "music" / "music.yaml"
INLINE = RunOptions(isolation="inline", output=None)


def test_a_script_without_ui_calls_runs_without_a_device() -> None:
    run = Runner(None, None, INLINE).run("print(6 * 7)\n", "s.tap")
    assert run.ok and run.result.printed == ("42",) and run.records == () and run.stats.dumps == 0


def test_without_a_document_the_first_ui_call_says_what_is_missing() -> None:
    missing = DeviceError("a device run needs the app document", hint="pass --doc APP.yaml")
    run = Runner(None, None, INLINE, missing=missing).run('print("a")\n$x__y.tap()\n', "s.tap")
    assert not run.ok and run.error is not None and "needs the app document" in run.error.message
    assert run.result.printed == ("a",)


def test_a_device_spec_that_cannot_work_is_refused_at_once() -> None:
    with pytest.raises(UsageError):
        Runner(load_document(MUSIC), "sim:nope", INLINE)


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_a_session_runs_scripts_on_one_device_each_with_its_own_records() -> None:
    runner = Runner(load_document(MUSIC), "sim:music", INLINE)
    with runner.session() as session:
        first = session.run('$songs_screen__song_list.match("Lanterns").tap()\n', "one.tap")
        runtime = session.runtime
        second = session.run("print($songs_screen__now_playing_title.get_text())\n", "two.tap")
        assert session.runtime is runtime  # the same device: the second script finds the song playing
        assert session.simulator is not None and session.simulator.app_state("org.tapir.music") is not None
    assert first.ok and second.ok, (first.error, second.error)
    assert second.result.printed == ("Lanterns",)
    taps = [r for r in first.records if r.get("event") == "action"]
    reads = [r for r in second.records if r.get("event") == "action"]
    assert [r["call"] for r in taps][-1] == "tap" and [r["call"] for r in reads] == ["get_text"]
    assert first.stats.device_actions >= 1 and second.stats.device_actions == 0
