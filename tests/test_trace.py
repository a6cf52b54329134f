"""The run trace: one JSON line per UI call, on disk as soon as it happens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runtime_helpers import make_runtime

from tapir.cli import main
from tapir.docgen.loader import load_document
from tapir.dsl.interpreter import run_script
from tapir.runtime.trace import JsonLinesTrace, read_trace
from tapir.sim.apps import get_app

REPO = Path(__file__).resolve().parent.parent


def test_each_record_is_on_disk_before_the_next_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    trace = JsonLinesTrace(path)
    trace.write({"event": "action", "n": 1, "where": ("a", 2)})
    # another reader sees the line while the trace is still open (a crash now loses nothing)
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"event": "action", "n": 1, "where": ["a", 2]}]
    trace.write({"event": "action", "n": 2, "obj": object})
    assert len(path.read_text().splitlines()) == 2
    trace.close()
    trace.write({"event": "late"})  # after close: ignored, not an exception
    assert [r["n"] for r in read_trace(path)] == [1, 2]


def test_a_line_torn_by_a_crash_is_skipped_only_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"event": "session"}\n{"event": "action", "seq": 1}\n{"event": "act')
    assert [r["event"] for r in read_trace(path)] == ["session", "action"]
    path.write_text('{"event": "session"}\n{"event": "act\n{"event": "end"}\n')
    with pytest.raises(json.JSONDecodeError):
        read_trace(path)


def test_a_failing_run_is_traced_up_to_and_including_the_error() -> None:
    doc = load_document(REPO / "samples" / "music" / "music.yaml")
    source = ("$songs_screen__song_list.match('Lanterns').tap()\n"
              "t = $now_playing_screen__title_text.get_text()\n"
              "$songs_screen__song_list[99].tap()\n")
    rt, _, trace = make_runtime(get_app("music"), doc, source=source)
    result = run_script(source, lambda: rt, output=None)
    assert result.error is not None
    events = [r["event"] for r in trace.records]
    assert events[0] == "session" and events[-1] == "end"
    actions = trace.events("action")
    assert [a["call"] for a in actions] == ["match", "tap", "get_text", "item"]
    tap = actions[1]
    assert tap["line"] == 1 and tap["statement"] == source.splitlines()[0]
    assert tap["element"] == "$songs_screen__song_list.match('Lanterns')" and tap["grounded"].startswith("item ")
    assert tap["text"] == "Lanterns" and len(tap["bounds"]) == 4 and len(tap["point"]) == 2
    assert tap["screen_before"] == "songs_screen" and tap["dumps"] >= 1
    assert set(tap["ms"]) == {"ground", "act", "settle", "total"}
    read = actions[2]
    assert read["grounded"].startswith("navigation+identifier")  # reached through the now-playing bar
    assert read["screen_after"] == "now_playing_screen" and read["result"] == "Lanterns"
    failed = actions[3]
    assert failed["ok"] is False and failed["line"] == 3
    assert failed["error"]["category"] == "ActionError" and "99" in failed["error"]["message"]
    assert trace.records[-1]["stats"]["dumps"] == rt.stats.dumps


def test_a_tap_on_a_toggle_records_its_state_before_the_tap() -> None:
    """A tap on a box says whether it was ticked before: the tap on Passport's (ticked) unticked
    it, which the state after cannot tell apart from a tap that ticked an unticked one."""
    doc = load_document(REPO / "samples" / "notes" / "notes.yaml")
    source = ("$notes_screen__note_list.match('Packing for Lisbon').tap()\n"
              "for item in $note_screen__item_list:\n    item.tap($note_screen__item_checkbox)\n")
    rt, _, trace = make_runtime(get_app("notes"), doc, source=source)
    assert run_script(source, lambda: rt, output=None).error is None
    taps = [a for a in trace.events("action") if a["call"] == "tap"]
    assert "checked" not in taps[0]  # the note's row holds no box
    assert [(a["text"], a["checked"]) for a in taps[1:]] == [
        ("Passport", True), ("Charger", False), ("Sunscreen", False), ("Rain jacket", False)]


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_tapir_run_writes_the_trace_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray server on 5037
    out = tmp_path / "run.jsonl"
    code = main(["run", str(REPO / "samples" / "music" / "play_song.tap"), "--device", "sim:music",
                 "--trace", str(out)])
    assert code == 0, capsys.readouterr().err
    records = read_trace(out)
    assert records[0]["event"] == "session" and records[0]["app"] == "org.tapir.music"
    assert records[-1]["event"] == "end"
    taps = [r for r in records if r.get("call") == "tap"]
    assert taps and all(r["ok"] for r in taps)
    assert "now playing: Lanterns" in capsys.readouterr().out
