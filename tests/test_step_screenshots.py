"""Screenshots after each step (the trace option ``tapir test --html`` turns on), and what a runtime
keeps for a failure report: the last dump's XML."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from runtime_helpers import XPathGrounder, sim_device

from tapir.cli import main
from tapir.core.errors import DeviceError
from tapir.docgen.loader import load_document
from tapir.dsl.interpreter import run_script
from tapir.runtime.screenshots import StepScreenshots
from tapir.runtime.session import DeviceRuntime, SessionConfig
from tapir.runtime.settle import SettleConfig
from tapir.runtime.trace import MemoryTrace, read_trace
from tapir.sim.apps import get_app

REPO = Path(__file__).resolve().parent.parent
MUSIC = REPO / "samples" / "music" / "music.yaml"


def _runtime(tmp_path: Path, source: str, shots: StepScreenshots | None) -> tuple[DeviceRuntime, MemoryTrace]:
    doc = load_document(MUSIC)
    _, device, _ = sim_device(get_app("music"))
    trace = MemoryTrace()
    rt = DeviceRuntime(device, doc, XPathGrounder(doc), config=SessionConfig(settle=SettleConfig.for_simulator()),
                       trace=trace, source=source, sleep=lambda s: None, screenshots=shots)
    return rt, trace


def test_a_screenshot_follows_each_input_and_each_failure_but_no_read(tmp_path: Path) -> None:
    source = ("$songs_screen__song_list.match('Lanterns').tap()\n"
              "t = $now_playing_screen__title_text.get_text()\n"
              "$songs_screen__song_list[99].tap()\n")
    shots = StepScreenshots(tmp_path / "shots")
    rt, trace = _runtime(tmp_path, source, shots)
    result = run_script(source, lambda: rt, output=None)
    assert result.error is not None
    session = trace.records[0]
    assert session["event"] == "session" and session["screenshot"] == "000-start.png"
    by_call = {(a["seq"], a["call"]): a.get("screenshot") for a in trace.events("action")}
    calls = [c for _, c in by_call]
    assert calls == ["match", "tap", "get_text", "item"]
    shot_of = dict(zip(calls, by_call.values(), strict=True))
    assert shot_of["tap"] == "002-tap.png"
    # the read navigated (BACK to the song list is an input): it gets the screen it left
    assert shot_of["get_text"] is not None
    assert shot_of["item"] == "004-item.png"  # failed: always its own screenshot
    files = sorted(p.name for p in (tmp_path / "shots").iterdir())
    assert files == sorted({session["screenshot"], *(s for s in by_call.values() if s)})
    with Image.open(tmp_path / "shots" / "002-tap.png") as image:
        assert image.size == (1080, 2400)
    assert shots.failed == 0 and len(shots.taken) == len(files)


def test_an_unchanged_screen_names_the_last_screenshot_again(tmp_path: Path) -> None:
    # the first scroll moves the list; at the end of it, further scrolls change nothing
    source = "\n".join(["$songs_screen__song_list.scroll('down')"] * 12) + "\n"
    shots = StepScreenshots(tmp_path / "shots")
    rt, trace = _runtime(tmp_path, source, shots)
    assert run_script(source, lambda: rt, output=None).ok
    names = [a["screenshot"] for a in trace.events("action")]
    assert len(names) == 12 and all(names)
    assert names[-1] == names[-2], "the list stopped moving: the same screen, the same file"
    assert len(set(names)) < len(names) and len(shots.taken) == len(set(names)) + 1  # + the start


def test_screenshots_are_off_unless_asked_and_the_last_dump_is_kept(tmp_path: Path) -> None:
    source = "$songs_screen__song_list.match('Lanterns').tap()\n"
    rt, trace = _runtime(tmp_path, source, None)
    assert run_script(source, lambda: rt, output=None).ok
    assert not any("screenshot" in r for r in trace.records)
    assert rt.screen.last_xml is not None and "Lanterns" in rt.screen.last_xml


def test_a_screenshot_that_fails_is_counted_and_never_fails_the_run(tmp_path: Path) -> None:
    class Broken:
        def screenshot_png(self) -> bytes:
            raise DeviceError("screencap failed: secure window")

    shots = StepScreenshots(tmp_path / "s")
    assert shots.take(Broken(), "001-tap") is None
    assert shots.failed == 1 and not (tmp_path / "s").exists()

    class Fine:
        def screenshot_png(self) -> bytes:
            out = io.BytesIO()
            Image.new("RGB", (4, 8)).save(out, "PNG")
            return out.getvalue()

    assert shots.take(Fine(), "002 tap/../x") == "002_tap_.._x.png"  # a name is never a path
    assert (tmp_path / "s" / "002_tap_.._x.png").is_file()


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_tapir_run_saves_screenshots_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray server on 5037
    trace = tmp_path / "run.jsonl"
    code = main(["run", str(REPO / "samples" / "music" / "play_song.tap"), "--device", "sim:music",
                 "--trace", str(trace), "--screenshots", str(tmp_path / "shots")])
    assert code == 0, capsys.readouterr().err
    named = [r["screenshot"] for r in read_trace(trace) if r.get("screenshot")]
    assert named[0] == "000-start.png" and len(named) >= 3
    assert all((tmp_path / "shots" / n).is_file() for n in named)
    assert main(["run", str(REPO / "samples" / "music" / "play_song.tap"), "--screenshots", "x"]) == 2
    assert "--screenshots needs a device run" in capsys.readouterr().err
