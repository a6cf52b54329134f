"""`tapir test` runs each script in a child process (tapir.dsl.isolation): the device is opened
there, the live steps, the device statistics and the failure files come back, and a child that
dies costs its script an error while the run goes on. `in_process` runs them in the runner."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tapir.dsl.isolation import isolation_available
from tapir.runner.collect import collect
from tapir.runner.suite import Listener, RunOptions, run_tests

pytestmark = [pytest.mark.adb,
              pytest.mark.skipif(not isolation_available(), reason="scripts run in a child process on Linux only")]

REPO = Path(__file__).resolve().parent.parent
MUSIC = REPO / "samples" / "music" / "music.yaml"
PLAY = (REPO / "samples" / "music" / "play_song.tap").read_text().replace("# doc: music.yaml", f"# doc: {MUSIC}")
FAILING = f"""\
# doc: {MUSIC}
$songs_screen__song_list.match("Lanterns").tap()
assert False, "stop here"
"""


class _Steps(Listener):
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    def step(self, script: str, record: dict[str, Any]) -> None:
        self.seen.append((Path(script).name, str(record.get("event")), os.getpid()))


def _spy_on_connect(monkeypatch: pytest.MonkeyPatch, log: Path, crash: str) -> None:
    """``connect`` notes the process it runs in; for the script named ``crash`` it then kills
    that process as a bug in C would."""
    import tapir.runtime.connect as connect_module

    real = connect_module.connect

    def spying(conn: Any) -> Any:
        runtime = real(conn)
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{Path(conn.script).name} {os.getpid()}\n")
        if str(conn.script).endswith(crash):
            os.kill(os.getpid(), signal.SIGSEGV)
        return runtime

    monkeypatch.setattr(connect_module, "connect", spying)


def _pids(log: Path) -> dict[str, int]:
    return {name: int(pid) for name, pid in (line.split() for line in log.read_text().splitlines())}


@pytest.mark.timeout(300)
def test_each_script_runs_in_a_child_and_one_that_dies_costs_only_its_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray server on 5037
    flows = tmp_path / "flows"
    flows.mkdir()
    (flows / "a_play.tap").write_text(PLAY)
    (flows / "b_crash.tap").write_text(PLAY)
    (flows / "c_fail.tap").write_text(FAILING)
    log = tmp_path / "pids"
    _spy_on_connect(monkeypatch, log, "b_crash.tap")
    listener = _Steps()
    run = run_tests(collect([flows]), RunOptions(devices=("sim:music",), artifacts=tmp_path / "artifacts"),
                    listener=listener)
    by_name = {Path(r.script).name: r for r in run.results}
    # (an internal error is a failed script, as it is when the script runs in the runner)
    assert [by_name[n].status for n in ("a_play.tap", "b_crash.tap", "c_fail.tap")] == ["passed", "failed", "failed"]
    # every script in a process of its own, none in the runner's
    pids = _pids(log)
    assert len(set(pids.values()) | {os.getpid()}) == 4, pids
    # the child that died: an internal error naming the signal; the runner went on
    crashed = by_name["b_crash.tap"].attempts[-1]
    assert crashed.error is not None and "internal error: the script's process was killed by SIGSEGV" in crashed.error
    # the live steps reached the listener here, in the runner's process, as they happened
    actions = [(name, pid) for name, event, pid in listener.seen if event == "action"]
    assert {name for name, _ in actions} == {"a_play.tap", "c_fail.tap"}
    assert {pid for _, pid in actions} == {os.getpid()}
    # the device statistics and the report's steps came back from the child
    played = by_name["a_play.tap"].attempts[-1]
    assert played.dumps > 0 and played.device_actions > 0 and played.steps
    # the failure's screenshot and dump were saved by the child, before it released the device
    failed = by_name["c_fail.tap"].attempts[-1]
    assert failed.screenshot == "screenshot.png" and failed.hierarchy == "hierarchy.xml"
    errors = sorted(p.read_text() for p in (tmp_path / "artifacts").rglob("error.txt"))
    assert len(errors) == 2 and "killed by SIGSEGV" in errors[0] and "stop here" in errors[1], errors
    assert len(list((tmp_path / "artifacts").rglob("screenshot.png"))) == 1

@pytest.mark.timeout(300)
def test_in_process_runs_the_script_in_the_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    (tmp_path / "play.tap").write_text(PLAY)
    log = tmp_path / "pids"
    _spy_on_connect(monkeypatch, log, "never.tap")
    run = run_tests([tmp_path / "play.tap"], RunOptions(devices=("sim:music",), in_process=True))
    assert run.ok and _pids(log) == {"play.tap": os.getpid()}
    attempt = run.results[0].attempts[-1]
    assert attempt.dumps > 0 and attempt.device_actions > 0 and attempt.steps


def test_a_result_written_just_before_the_child_ended_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded machine the child can write its result and end between the parent's select
    (nothing yet) and its wait: the result is still in the pipe and is read, not lost as "the
    script's process ended with status 0" (seen under `tapir eval -j 2` beside a model run)."""
    import select
    import time
    from types import SimpleNamespace

    from tapir.dsl import isolation

    first = [True]

    def late(r: Any, w: Any, x: Any, timeout: float | None = None) -> Any:
        if first[0]:
            first[0] = False
            time.sleep(1.0)  # the child writes its result and ends meanwhile
            return [], [], []
        return select.select(r, w, x, timeout)

    monkeypatch.setattr(isolation, "select", SimpleNamespace(select=late))
    result = isolation.run_script_isolated("x = 1 + 1\nprint(x)\n", output=None)
    assert result.error is None and result.printed == ("2",)
