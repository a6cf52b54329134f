"""What `tapir test`, `tapir eval` and `tapir synth` need of `tapir.run.Runner`: a `finish` that
finds the runtime still open, `on_connect`, and the trace records in memory (as the file holds
them), those of a child process that was killed included."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tapir.docgen.loader import load_document
from tapir.dsl.isolation import isolation_available
from tapir.run import Runner, RunOptions

pytestmark = pytest.mark.adb

REPO = Path(__file__).resolve().parent.parent
MUSIC = REPO / "samples" / "music" / "music.yaml"
TAP = '$songs_screen__song_list.match("Lanterns").tap()\n'


@pytest.fixture(autouse=True)
def _no_stray_adb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_finish_sees_the_open_runtime_and_the_records_are_the_files(tmp_path: Path, isolation: Any) -> None:
    trace = tmp_path / "trace.jsonl"
    connected: list[int] = []
    seen: list[dict[str, Any]] = []

    def finish(runtime: Any, result: Any) -> dict[str, Any]:
        return {"png": len(runtime.device.screenshot_png()) > 0, "reserved": [p.name for p in runtime.artifacts.saved]}

    runner = Runner(load_document(MUSIC), "sim:music", RunOptions(
        isolation=isolation, trace=trace, on_record=seen.append, output=None, artifacts=tmp_path,
        on_connect=lambda runtime: (connected.append(os.getpid()), runtime.artifacts.saved.append(tmp_path / "x.png"))))
    run = runner.run(TAP + "assert False, 'stop'\n", "t.tap", finish=finish)
    assert run.error is not None and "stop" in run.error.message
    assert run.finished == {"png": True, "reserved": ["x.png"]}  # on_connect ran before, finish while open
    if isolation == "inline":
        assert connected == [os.getpid()]
    events = [r["event"] for r in run.records]
    assert events[0] == "session" and "action" in events and events[-1] == "end"
    assert list(run.records) == [json.loads(line) for line in trace.read_text().splitlines()] == seen
    assert run.stats.dumps > 0 and run.stats.device_actions > 0


@pytest.mark.timeout(120)
@pytest.mark.skipif(not isolation_available(), reason="scripts run in a child process on Linux only")
def test_a_killed_child_leaves_the_records_it_wrote(tmp_path: Path) -> None:
    def die(runtime: Any, result: Any) -> None:
        os.kill(os.getpid(), signal.SIGSEGV)  # as a bug in C would

    runner = Runner(load_document(MUSIC), "sim:music", RunOptions(trace=tmp_path / "t.jsonl", output=None))
    run = runner.run(TAP, "t.tap", finish=die)
    assert run.error is not None and "killed by SIGSEGV" in run.error.message
    events = [r["event"] for r in run.records]
    assert events[0] == "session" and "action" in events and "end" not in events  # killed before the release
    assert run.finished is None and run.stats.dumps == 0
