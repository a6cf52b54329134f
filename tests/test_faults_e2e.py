"""Fault injection: scripts on the simulator, through the real adb server, while the device
misbehaves (``tapir.sim.faults``).

Each scenario must end in the right error category with a message that says what happened, or
in a recovery, within a hard time limit (never a hang), and the trace must be whole: every line
valid JSON, from the ``session`` line to the ``end`` line. See docs/reliability.md.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from fault_runs import SAMPLES, run_with_faults

from tapir.codegen.corrections import corrected
from tapir.core.errors import ActionError, AssertionFailed, BudgetExceeded, DeviceError, OutsideApp, ScreenNotReached
from tapir.docgen.loader import load_document
from tapir.dsl.budget import Budgets
from tapir.dsl.interpreter import run_script
from tapir.runtime.connect import Connection
from tapir.runtime.session import SessionConfig
from tapir.runtime.settle import SettleConfig
from tapir.runtime.trace import read_trace
from tapir.sim.apps import get_app
from tapir.sim.device import SimDevice
from tapir.sim.errors import SimDeviceError
from tapir.sim.faults import FaultEvent
from tapir.sim.launch import (
    RunningSim,
    find_adb,
    free_port,
    kill_adb_server,
    server_running,
    start_adb_server,
    start_sim,
)

pytestmark = [pytest.mark.adb, pytest.mark.timeout(90)]

try:
    find_adb()
except SimDeviceError as exc:  # pragma: no cover - adbutils ships adb
    pytest.skip(str(exc), allow_module_level=True)

PLAY = '''$songs_screen__song_list.match("Lanterns").tap()
$songs_screen__now_playing_bar.tap()
title = $now_playing_screen__title_text.get_text()
assert title == "Lanterns", f"playing {title} instead"
print(title)
'''
PERMISSION = "Allow Music to send you notifications?"


def dumps(sim: RunningSim) -> int:
    return sum("uiautomator dump" in line for line in sim.device.log)


def when(condition: Callable[[SimDevice], bool], action: Callable[[SimDevice], None],
         command: str = "uiautomator") -> FaultEvent:
    """An event that acts after the first ``command`` that leaves the device in ``condition``
    (it arms itself again until then)."""
    def fire(device: SimDevice) -> None:
        if condition(device):
            action(device)
        else:
            device.faults.arm(when(condition, action, command))

    return FaultEvent(fire, after=1, command=command)


# -- hierarchy dumps that fail ----------------------------------------------------------------

def test_transient_dump_errors_are_retried(tmp_path: Path) -> None:
    out = run_with_faults(tmp_path, PLAY, lambda sim: setattr(sim.device.faults, "dump_errors", 3))
    assert out.result.ok, out.error_text
    assert out.result.printed == ("Lanterns",)
    assert out.sim is not None and out.sim.device.faults.dump_errors == 0  # all three were met
    assert out.trace_complete()


def test_persistent_dump_errors_stop_the_run_as_a_device_error(tmp_path: Path) -> None:
    out = run_with_faults(tmp_path, PLAY, lambda sim: setattr(sim.device.faults, "dump_errors", 10**6))
    error = out.result.error
    assert isinstance(error, DeviceError) and error.code == "device"
    assert "`uiautomator dump` failed after 4 attempts: ERROR: could not get idle state." in error.message
    assert error.hint is not None and "animation" in error.hint
    assert error.span is not None and error.span.line == 1
    assert out.seconds < 20
    records = out.records
    assert out.trace_complete()
    failed = [r for r in records if r["event"] == "action" and not r["ok"]]
    assert failed and failed[-1]["error"]["category"] == "DeviceError"


# -- a slow device ----------------------------------------------------------------------------

def test_commands_slower_than_the_settle_interval(tmp_path: Path) -> None:
    # every dump and input takes longer than a dump stays fresh (0.25 s on the simulator)
    def slow(sim: RunningSim) -> None:
        sim.device.faults.latency.update({"uiautomator": 0.3, "input": 0.3})

    out = run_with_faults(tmp_path, PLAY, slow)
    assert out.result.ok, out.error_text
    assert out.trace_complete()


def test_a_slow_device_runs_into_the_time_budget_not_a_hang(tmp_path: Path) -> None:
    def slow(sim: RunningSim) -> None:
        sim.device.faults.latency["uiautomator"] = 0.5

    out = run_with_faults(tmp_path, PLAY, slow, budgets=Budgets().replace(timeout_s=1.0))
    error = out.result.error
    assert isinstance(error, BudgetExceeded) and error.code == "budget", out.error_text
    assert out.seconds < 8  # the budget is checked between device commands
    assert out.trace_complete()


def test_an_app_that_redraws_late_is_waited_for(tmp_path: Path) -> None:
    # The app shows an input's effect 0.25 s after it, later than the first look (0.1 s): a
    # list that has not redrawn yet must not be taken for the end of the list.
    config = SessionConfig(settle=SettleConfig(first_delay_s=0.1, poll_delay_s=0.3, max_dumps=3, fresh_s=0.3))
    out = run_with_faults(tmp_path, "print(len($songs_screen__song_list))\n",
                          lambda sim: setattr(sim.device.faults, "input_lag", 0.25), config=config)
    assert out.result.ok, out.error_text
    assert out.result.printed == ("44",)
    assert out.trace_complete()


# -- the connection -----------------------------------------------------------------------------

@pytest.mark.parametrize("after", [0, 3, 5])
def test_a_connection_dropped_before_a_command_is_sent_again(tmp_path: Path, after: int) -> None:
    out = run_with_faults(tmp_path, PLAY, lambda sim: setattr(sim.device.faults, "drop_after", after))
    assert out.result.ok, out.error_text
    assert out.sim is not None and out.sim.device.faults.drop_after is None  # it fired
    taps = [line for line in out.sim.device.log if line.startswith("input tap")]
    assert len(taps) == 2  # the song and the now-playing bar, each once
    assert out.trace_complete()


@pytest.mark.parametrize("after", [0, 1, 2, 5])
def test_a_connection_dropped_after_a_command_ran_is_not_run_twice(tmp_path: Path, after: int) -> None:
    def arm(sim: RunningSim) -> None:
        sim.device.faults.drop_at = "reply"
        sim.device.faults.drop_after = after

    out = run_with_faults(tmp_path, PLAY, arm)
    assert out.result.ok, out.error_text
    assert out.sim is not None and out.sim.device.faults.drop_after is None
    assert len([line for line in out.sim.device.log if line.startswith("input tap")]) == 2
    assert out.trace_complete()


def test_a_device_gone_for_good_is_a_device_error(tmp_path: Path) -> None:
    holder: dict[str, RunningSim] = {}

    def pull_the_cable(device: SimDevice) -> None:
        threading.Thread(target=holder["sim"].server.stop, daemon=True).start()

    def arm(sim: RunningSim) -> None:
        holder["sim"] = sim
        sim.device.faults.arm(FaultEvent(pull_the_cable, after=1, command="input"))

    out = run_with_faults(tmp_path, PLAY, arm)
    error = out.result.error
    assert isinstance(error, DeviceError) and error.code == "device", out.error_text
    assert out.sim is not None and out.sim.serial in error.message
    assert "attaching the device again failed" in error.message
    assert out.seconds < 45
    assert out.trace_complete()


# -- the screen changes between grounding and tap ---------------------------------------------

def test_an_element_gone_before_its_tap(tmp_path: Path) -> None:
    # The theme dialog closes by itself right after the dump "Dark" was found on: the tap lands
    # on the settings screen below. Coordinates cannot be made atomic with a dump; the run must
    # still end cleanly, its trace saying what the tap was grounded on.
    script = ('$settings_screen__theme_row.tap()\n'
              '$theme_dialog__theme_options.match("Dark").tap()\n'
              'assert $settings_screen__theme_value.get_text() == "Dark", "the theme did not change"\n')

    def arm(sim: RunningSim) -> None:
        music = sim.device.app("org.tapir.music")
        sim.device.faults.arm(when(lambda d: getattr(music, "current_dialog", None) == "theme",
                                   lambda d: d.press_key("KEYCODE_BACK")))

    out = run_with_faults(tmp_path, script, arm)
    error = out.result.error
    assert isinstance(error, AssertionFailed) and "the theme did not change" in error.message
    assert error.span is not None and error.span.line == 3
    taps = [r for r in out.events("action") if r["call"] == "tap" and r["line"] == 2]
    assert taps and taps[0]["screen_before"] == "theme_dialog" and taps[0]["screen_after"] == "settings_screen"
    assert out.trace_complete()


def test_a_list_item_gone_before_its_tap_is_not_a_crash(tmp_path: Path) -> None:
    # the song list reorders (sorted by artist) right after the dump that found "Lanterns"
    def resort(device: SimDevice) -> None:
        device.app("org.tapir.music").state.sort = "Artist"

    def arm(sim: RunningSim) -> None:
        sim.device.faults.arm(FaultEvent(resort, after=3, command="uiautomator"))

    out = run_with_faults(tmp_path, PLAY, arm)
    assert out.result.ok or isinstance(out.result.error, AssertionFailed | ActionError | ScreenNotReached)
    assert out.trace_complete()


# -- an interruption ----------------------------------------------------------------------------

WATCHER = '''
watchers:
  notification_permission:
    description: Android asks whether the app may post notifications; say no and go on.
    when_text: Allow Music to send you notifications?
    tap_text: "Don\u2019t allow"
'''


@pytest.fixture
def watched_doc(tmp_path: Path) -> Path:
    doc = tmp_path / "doc" / "music.yaml"
    doc.parent.mkdir()
    doc.write_text((SAMPLES / "music" / "music.yaml").read_text(encoding="utf-8") + WATCHER, encoding="utf-8")
    return doc


@pytest.mark.parametrize("after, command", [(1, "input"), (3, "input"), (1, "uiautomator")])
def test_a_system_dialog_is_answered_by_the_documents_watcher(tmp_path: Path, watched_doc: Path,
                                                               after: int, command: str) -> None:
    out = run_with_faults(tmp_path, PLAY, lambda sim: sim.device.faults.arm(FaultEvent("dialog", after, command)),
                          doc=watched_doc)
    assert out.result.ok, out.error_text
    assert out.sim is not None and out.sim.device.dialog_answers == ["Don\u2019t allow"]
    fired = out.events("watcher")
    assert [w["name"] for w in fired] == ["notification_permission"]
    assert fired[0]["label"] == "Don\u2019t allow"
    assert out.trace_complete()


@pytest.mark.parametrize("after", [1, 3])
def test_a_system_dialog_without_a_watcher_is_a_clear_error(tmp_path: Path, after: int) -> None:
    out = run_with_faults(tmp_path, PLAY, lambda sim: sim.device.faults.arm(FaultEvent("dialog", after)))
    error = out.result.error
    # the guard's BACK and relaunch leave the dialog in front: the run stops outside its app,
    # naming the dialog (the confinement guard, docs/safety.md)
    assert isinstance(error, ActionError | ScreenNotReached | OutsideApp), out.error_text
    assert "com.android.permissioncontroller" in error.message and PERMISSION in error.message
    assert out.sim is not None and out.sim.device.dialog is not None  # nothing tapped it away
    assert out.trace_complete()
    # the trace says what stood in the way (no document names it): the prompt's app and texts,
    # from which the code generator's correction answers it before the line that stopped
    failed = [r for r in out.events("action") if r.get("ok") is False]
    assert failed and failed[-1]["app_after"] == "com.android.permissioncontroller"
    assert failed[-1]["texts_after"][:2] == [PERMISSION, "Allow"]
    fix = corrected(load_document(SAMPLES / "music" / "music.yaml"), PLAY, error.span.line if error.span else None,
                    error.message, "play Lanterns", out.records)
    assert fix is not None and fix.check == "permission-in-the-way" and fix.statement == "tap_text('Allow')"


# -- the app crashes ------------------------------------------------------------------------------

def test_an_app_crash_between_calls_is_recovered_by_relaunching(tmp_path: Path) -> None:
    # the app dies right after the tap that starts the song: the next call finds the launcher
    out = run_with_faults(tmp_path, PLAY, lambda sim: sim.device.faults.arm(FaultEvent("crash", after=3)))
    assert out.result.ok, out.error_text
    assert out.sim is not None and out.sim.device.faults.fired
    # the launcher in front before the next call: the confinement guard relaunches the app (a
    # navigation that meets the launcher launches it, when the guard has not)
    steps = [r["step"] for r in out.events("navigation")]
    returned = [g for g in out.events("guard") if g.get("decision") == "returned"]
    assert "launch org.tapir.music" in steps or any("relaunched org.tapir.music" in g["done"] for g in returned)
    assert out.trace_complete()


def test_an_app_crash_in_the_middle_of_a_call_is_reported(tmp_path: Path) -> None:
    # the app dies during the first swipe of the song list that match() scrolls
    out = run_with_faults(tmp_path, PLAY, lambda sim: sim.device.faults.arm(FaultEvent("crash", after=1)))
    error = out.result.error
    assert isinstance(error, ActionError), out.error_text
    assert "left its screen" in error.message and "com.android.launcher3" in error.message
    assert out.trace_complete()


# -- the adb server restarts ------------------------------------------------------------------

def _kill_server_soon(port: int) -> Callable[[SimDevice], None]:
    def kill(device: SimDevice) -> None:
        threading.Thread(target=kill_adb_server, args=(port,), daemon=True).start()

    return kill


def test_a_restarted_adb_server_gets_the_simulator_back(tmp_path: Path) -> None:
    ports: list[int] = []

    def arm(sim: RunningSim) -> None:
        ports.append(sim.adb_port)
        sim.device.faults.arm(FaultEvent(_kill_server_soon(sim.adb_port), after=1, command="input"))

    out = run_with_faults(tmp_path, PLAY, arm)
    assert out.result.ok, out.error_text
    assert out.runtime is not None and getattr(out.runtime.device, "reattached", 0) >= 1
    assert out.trace_complete()
    assert not server_running(ports[0])  # the run's private server was stopped with it


def test_a_killed_adb_server_under_a_device_by_serial_is_reported(tmp_path: Path) -> None:
    # a device the run did not start (a phone, or a `tapir sim` elsewhere): Tapir never starts
    # an adb server for it, so the run stops and says how to get the server back
    port = free_port()
    try:
        start_adb_server(port)
        sim = start_sim([get_app("music")], adb_port=port, foreground="org.tapir.music")
    except SimDeviceError as exc:  # pragma: no cover - no adb, or a port taken meanwhile
        pytest.skip(exc.message)
    try:
        sim.device.faults.arm(FaultEvent(_kill_server_soon(port), after=1, command="input"))
        trace = tmp_path / "trace.jsonl"
        conn = Connection(device=sim.serial, document=load_document(SAMPLES / "music" / "music.yaml"),
                          trace_path=str(trace), source=PLAY, adb_port=port)
        result = run_script(PLAY, conn.factory(), None, output=None)
    finally:
        sim.stop()
        kill_adb_server(port)
    error = result.error
    assert isinstance(error, DeviceError), result
    assert f"cannot connect to the adb server at 127.0.0.1:{port}" in error.message
    assert error.hint is not None and "start-server" in error.hint
    records = read_trace(trace)
    assert records[0]["event"] == "session" and records[-1]["event"] == "end"


# -- what `tapir test` reports ----------------------------------------------------------------

def test_a_fault_leaves_the_test_reports_and_artifacts_whole(tmp_path: Path) -> None:
    # `tapir test` on a phone given by serial that a system dialog covers mid-script: the script
    # fails with the dialog named, and the JUnit and JSON reports and the artifacts say so
    import json
    import xml.etree.ElementTree as ET

    from tapir.runner import RunOptions, junit_xml, report_json, run_tests

    port = free_port()
    try:
        start_adb_server(port)
        sim = start_sim([get_app("music")], adb_port=port, foreground="org.tapir.music")
    except SimDeviceError as exc:  # pragma: no cover - no adb, or a port taken meanwhile
        pytest.skip(exc.message)
    try:
        sim.device.faults.arm(FaultEvent("dialog", 1))
        run = run_tests([SAMPLES / "music" / "play_song.tap"],
                        RunOptions(devices=(sim.serial,), adb_port=port, artifacts=tmp_path / "artifacts"))
    finally:
        sim.stop()
        kill_adb_server(port)
    [result] = run.results
    assert result.status == "failed", result
    assert result.error is not None and PERMISSION in result.error
    failures = ET.fromstring(junit_xml(run)).findall(".//testcase/failure")
    assert len(failures) == 1 and PERMISSION in (failures[0].text or "") + failures[0].get("message", "")
    report = json.loads(json.dumps(report_json(run)))
    assert report["totals"]["failed"] == 1 and not report["ok"], report["totals"]
    assert PERMISSION in report["scripts"][0]["attempts"][-1]["error"]
    assert result.artifacts is not None
    records = read_trace(result.artifacts / "trace.jsonl")
    assert records[0]["event"] == "session" and records[-1]["event"] == "end"
    assert any(p.suffix == ".xml" for p in result.artifacts.iterdir())  # the last dump the run read
