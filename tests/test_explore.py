"""Exploration (``tapir.runtime.explore``): strategies, budgets, leaving the app, danger, Ctrl-C.

Most tests drive the simulated apps in-process through the real ``AdbDevice`` (its shell answered
by the simulator directly, ``runtime_helpers.sim_device``); the CLI tests go through a real adb
server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import sim_device

from tapir.core.errors import UsageError
from tapir.docgen.build.anatomy import Anatomy
from tapir.docgen.build.policy import DangerPolicy
from tapir.docgen.build.trace import TraceWriter, read_trace
from tapir.hierarchy import parse_uiautomator
from tapir.runtime.explore import ExploreConfig, Explorer, candidates, make_strategy, plausible_text
from tapir.sim.apps import get_app

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {"music": "org.tapir.music", "notes": "org.tapir.notes", "clock": "org.tapir.clock",
            "contacts": "org.tapir.contacts"}


def explore_inproc(tmp_path: Path, app: str = "music", *, device: Any = None, **config: Any) -> tuple[Any, Path]:
    if device is None:
        _, device, _ = sim_device(get_app(app), foreground=False)
    out = tmp_path / f"{app}-trace"
    writer = TraceWriter.create(out, app=PACKAGES[app], source="explore")
    config.setdefault("delay", 0.0)
    config.setdefault("screenshots", False)
    result = Explorer(device, ExploreConfig(PACKAGES[app], **config), writer).run()
    return result, out


# -- what can be done on a screen -------------------------------------------------------------


def test_candidates_leave_out_dangerous_controls_and_sample_content_lists() -> None:
    app = get_app("music")
    app.tap_on(id="song_more")  # the song options menu: Play ... Delete
    menu = Anatomy.of(parse_uiautomator(app.dump_xml()))
    found = candidates(menu, DangerPolicy.default())
    labels = [k.split(":item:")[1].rsplit(":", 1)[0] for k in (c.key for c in found.actions) if ":item:" in k]
    assert labels == ["Play", "Play next", "Add to playlist", "Share", "Properties"]
    assert list(found.dangerous.values()) == ["delete"]
    assert found.actions[-1].kind == "back"
    # nothing is dangerous when the policy says so
    assert "Delete" in str([c.key for c in candidates(menu, DangerPolicy.none()).actions])

    songs = Anatomy.of(parse_uiautomator(get_app("music").dump_xml()))
    keys = [c.key for c in candidates(songs, DangerPolicy.default()).actions]
    # rows are alike: the first one and its controls, not all 44 songs
    assert sum(1 for k in keys if ":item" in k and k.endswith(":tap")) == 1
    assert any(":child:" in k for k in keys)


def test_plausible_text_fits_the_field() -> None:
    assert plausible_text("org.x:id/email_input") == "alex.morgan@example.com"
    assert plausible_text("", "Phone number") == "5550123"
    assert plausible_text("org.x:id/search_src_text") == "a"
    assert plausible_text("org.x:id/playlistName") == "Morning run"
    assert plausible_text("org.x:id/zzz") == "Hello Tapir"


# -- strategies and budgets -------------------------------------------------------------------


def test_depth_first_explores_every_sample_app_until_nothing_is_left(tmp_path: Path) -> None:
    for app in ("notes", "music"):
        result, out = explore_inproc(tmp_path, app, max_steps=400)
        assert result.exhausted and result.steps < 400, app
        trace = read_trace(out)
        assert trace.meta["complete"] and trace.meta["exhausted"]
        assert len(trace.steps) == result.steps
        assert trace.steps[0].action.kind == "start"
        assert result.screens >= {"notes": 9, "music": 18}[app]


def test_the_step_budget_is_kept(tmp_path: Path) -> None:
    result, out = explore_inproc(tmp_path, "music", max_steps=25)
    assert result.steps == 25 and not result.exhausted
    assert len(read_trace(out).steps) == 25


def test_the_time_budget_is_kept(tmp_path: Path) -> None:
    _, device, _ = sim_device(get_app("music"), foreground=False)
    ticks = iter(range(10_000))
    writer = TraceWriter.create(tmp_path / "t", app="org.tapir.music", source="explore")
    result = Explorer(device, ExploreConfig("org.tapir.music", max_steps=1000, max_seconds=30, delay=0,
                                            screenshots=False), writer, clock=lambda: float(next(ticks))).run()
    # the clock advances one second per reading, about one reading per step
    assert 15 <= result.steps <= 30 and not result.exhausted and result.elapsed <= 32


def test_random_walks_are_reproducible_by_seed(tmp_path: Path) -> None:
    def actions(seed: int, where: str) -> list[str]:
        _, out = explore_inproc(tmp_path / where, "music", strategy="random", seed=seed, max_steps=40)
        return [s.action.describe() for s in read_trace(out).steps]

    assert actions(1, "a") == actions(1, "b")
    assert actions(1, "c") != actions(2, "d")
    with pytest.raises(UsageError):
        make_strategy("bfs")


def test_dangerous_controls_are_never_touched(tmp_path: Path) -> None:
    result, out = explore_inproc(tmp_path, "music", max_steps=400)
    touched = [s.action.target for s in read_trace(out).steps if s.action.target is not None]
    policy = DangerPolicy.default()
    assert not [t for t in touched if policy.reason(t.text, t.content_desc, t.resource_id)]
    assert "Delete" in result.avoided and "Delete playlist" in result.avoided
    app_state = get_app("music").state
    assert len(app_state.songs) == 44  # (a fresh app: the explored one is another instance)


def test_leaving_the_app_is_recorded_and_the_app_restarted(tmp_path: Path) -> None:
    result, out = explore_inproc(tmp_path, "notes", max_steps=200)
    trace = read_trace(out)
    assert result.left_app >= 1
    outside = [i for i, s in enumerate(trace.steps) if trace.states[s.after].package != "org.tapir.notes"]
    assert outside
    for i in outside:
        if i + 1 < len(trace.steps):
            nxt = trace.steps[i + 1]
            assert nxt.action.kind in ("start", "back") and nxt.note
    assert any(s.action.kind == "start" and s.note and "outside" in s.note for s in trace.steps)


class _Interrupting:
    """A device that behaves until its ``n``-th tap, which raises KeyboardInterrupt (Ctrl-C)."""

    def __init__(self, device: Any, n: int) -> None:
        self.device = device
        self.n = n

    def tap(self, x: int, y: int) -> None:
        self.n -= 1
        if self.n == 0:
            raise KeyboardInterrupt
        self.device.tap(x, y)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.device, name)


def test_ctrl_c_keeps_what_was_recorded(tmp_path: Path) -> None:
    _, device, _ = sim_device(get_app("music"), foreground=False)
    result, out = explore_inproc(tmp_path, "music", device=_Interrupting(device, 10), max_steps=100)
    assert result.interrupted and result.steps >= 9
    trace = read_trace(out)
    assert trace.meta["complete"] is False and trace.meta["interrupted"] is True
    assert len(trace.steps) == result.steps
    assert all(s.before in trace.states and s.after in trace.states for s in trace.steps)


class _Signalling(_Interrupting):
    """A device whose ``n``-th tap gets a real SIGINT (``presses`` of them) in the middle of it."""

    def __init__(self, device: Any, n: int, presses: int = 1) -> None:
        super().__init__(device, n)
        self.presses = presses
        self.taps_done = 0

    def tap(self, x: int, y: int) -> None:
        self.n -= 1
        if self.n == 0:
            for _ in range(self.presses):
                os.kill(os.getpid(), signal.SIGINT)
        self.device.tap(x, y)
        self.taps_done += 1


def test_ctrl_c_in_the_middle_of_a_step_finishes_that_step_and_a_second_stops_at_once(tmp_path: Path) -> None:
    """The interrupt of a recording session lands anywhere, in the device connection too (where a
    broken-off call could leave its lock held and the teardown waiting): the step under way is
    finished and recorded, then the exploration stops; a second Ctrl-C stops at once."""
    before = signal.getsignal(signal.SIGINT)
    _, device, _ = sim_device(get_app("music"), foreground=False)
    once = _Signalling(device, 6)
    result, out = explore_inproc(tmp_path, "music", device=once, max_steps=100)
    assert result.interrupted and once.taps_done == 6
    trace = read_trace(tmp_path / "music-trace")
    assert trace.meta["interrupted"] is True and len(trace.steps) == result.steps
    assert trace.steps[-1].action.kind == "tap"  # the interrupted tap, recorded, and nothing after it
    assert signal.getsignal(signal.SIGINT) is before  # Ctrl-C is Python's again afterwards

    _, device, _ = sim_device(get_app("music"), foreground=False)
    twice = _Signalling(device, 6, presses=2)
    result, _ = explore_inproc(tmp_path / "2", "music", device=twice, max_steps=100)
    assert result.interrupted and twice.taps_done == 5  # the sixth tap was broken off


def test_screenshots_are_taken_once_per_state(tmp_path: Path) -> None:
    _, device, transport = sim_device(get_app("notes"), foreground=False)
    _, out = explore_inproc(tmp_path, "notes", device=device, screenshots=True, max_steps=30)
    trace = read_trace(out)
    shots = [s.screenshot for s in trace.states.values()]
    assert all(shots) and len(set(shots)) == len(shots)
    assert all((out / s).read_bytes().startswith(b"\x89PNG") for s in shots if s)
    assert sum(1 for c in transport.commands if c.startswith("screencap")) == len(trace.states)


# -- the command ------------------------------------------------------------------------------


def tapir(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ADBUTILS_ADB_PATH="/bin/false")
    return subprocess.run([sys.executable, "-m", "tapir.cli", *args], capture_output=True, text=True,
                          timeout=300, env=env, **kw)


def test_explore_usage_errors(tmp_path: Path) -> None:
    r = tapir("explore", "--device", "emulator-5554", "-o", str(tmp_path / "t"))
    assert r.returncode == 2 and "--app PACKAGE is required" in r.stderr
    r = tapir("explore", "--device", "sim:music", "--time", "soon", "-o", str(tmp_path / "t"))
    assert r.returncode == 2 and "not a duration" in r.stderr
    r = tapir("explore", "--device", "sim:nope", "-o", str(tmp_path / "t"))
    assert r.returncode == 2 and "unknown simulated app 'nope'" in r.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    r = tapir("explore", "--device", "sim:music", "-o", str(tmp_path / "full"))
    assert r.returncode == 2 and "is not empty" in r.stderr
    r = tapir("explore", "--import-droidbot", str(tmp_path / "full"), "-o", str(tmp_path / "t2"))
    assert r.returncode == 2 and "not a DroidBot recording" in r.stderr


@pytest.mark.adb
def test_explore_command_on_the_simulator(tmp_path: Path) -> None:
    r = tapir("explore", "--device", "sim:notes", "--steps", "20", "-o", str(tmp_path / "t"), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["steps"] == 20 and summary["screens"] >= 3
    trace = read_trace(tmp_path / "t")
    assert trace.package == "org.tapir.notes" and len(trace.steps) == 20
    assert all(s.screenshot for s in trace.states.values())


@pytest.mark.adb
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_explore_command_stops_on_a_signal_and_keeps_the_trace(tmp_path: Path, signum: int) -> None:
    env = dict(os.environ, ADBUTILS_ADB_PATH="/bin/false")
    out = tmp_path / "t"
    proc = subprocess.Popen([sys.executable, "-m", "tapir.cli", "explore", "--device", "sim:music",
                             "--strategy", "random", "--steps", "100000", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            steps = out / "steps.jsonl"
            if steps.is_file() and steps.read_text().count("\n") >= 5:
                break
            time.sleep(0.2)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, stderr
    assert "interrupted" in stdout
    trace = read_trace(out)
    assert trace.meta["complete"] is False and len(trace.steps) >= 5


def test_durations_and_the_progress_lines(capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli.explore import _ExploreProgressBar, parse_duration
    from tapir.runtime.explore import ExploreProgress

    assert [parse_duration(x) for x in ("90", "90s", "5m", "1.5h", " 2 min ")] == [90, 90, 300, 5400, 120]
    with pytest.raises(UsageError):
        parse_duration("5 parsecs")
    with _ExploreProgressBar(40) as progress:  # stderr is not a terminal here: a line every tenth
        for step in range(1, 41):
            progress.update(ExploreProgress(step, 40, step // 4, step * 0.5, (40 - step) * 0.5, "tap"))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "step 10/40: 2 screens, 0:15 left" and lines[-1] == "step 40/40: 10 screens, 0:00 left"
    assert len(lines) == 4
