"""Script features on the simulated device through the real adb path: app control as real
Android commands, presence checks that never act, waits on the simulator's clock and the time
budget, watchers from the document and from the script (counted, traced, capped), screenshots
in the run's artifacts, and `tapir run --param --artifacts` on a device given by serial.

Each test starts a simulator behind the session's private adb server (``Connection`` with
``device="sim:APP"``, as ``tapir run --device sim:APP`` does); the runtime is the real
``DeviceRuntime`` over ``AdbDevice``.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tapir.core.document import AppDocument
from tapir.core.errors import BudgetExceeded, ScreenNotReached, WaitTimeout
from tapir.docgen.loader import load_document
from tapir.docgen.symbols import build_symbols
from tapir.dsl.budget import Budgets
from tapir.dsl.interpreter import RunResult, run_script
from tapir.runtime.clock import DeviceShellClock
from tapir.runtime.connect import Connection, connect
from tapir.runtime.session import DeviceRuntime

pytestmark = [pytest.mark.adb, pytest.mark.timeout(180)]

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def document(app: str) -> AppDocument:
    return load_document(SAMPLES / app / f"{app}.yaml")


class Session:
    """One script run on a fresh simulator; what it left behind."""

    def __init__(self, app: str, adb_port: int, tmp: Path, doc: AppDocument | None = None) -> None:
        self.doc = doc or document(app)
        self.trace = tmp / "trace.jsonl"
        self.artifacts = tmp / "artifacts"
        self.conn = Connection(device=f"sim:{app}", document=self.doc, trace_path=str(self.trace),
                               adb_port=adb_port, artifacts=str(self.artifacts))
        self.runtime: DeviceRuntime | None = None

    def run(self, source: str, **kw: Any) -> RunResult:
        def factory() -> DeviceRuntime:
            self.runtime = connect(self.conn)
            return self.runtime

        return run_script(source, factory, output=None, symbols=build_symbols(self.doc), filename="s.tap",
                          **kw)

    @property
    def rt(self) -> DeviceRuntime:
        assert self.runtime is not None
        return self.runtime

    @property
    def app(self) -> Any:
        return self.rt.simulator.device.app(self.doc.app.package)

    @property
    def shell_log(self) -> list[str]:
        return list(self.rt.simulator.device.log)

    def records(self, event: str = "action") -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in self.trace.read_text().splitlines()]
        return [r for r in lines if r["event"] == event]


def ok(session: Session, source: str, **kw: Any) -> RunResult:
    result = session.run(source, **kw)
    assert result.error is None, result.error.render()
    return result


# -- the app ------------------------------------------------------------------------------------------


def test_app_control_sends_real_android_commands_and_resets_the_app(adb_port: int, tmp_path: Path) -> None:
    s = Session("notes", adb_port, tmp_path)
    result = ok(s, """
$notes_screen__new_note_button.tap()
$edit_note_screen__title_input.set_text("Kept until cleared")
$edit_note_screen__save_button.tap()
back()
before = len($notes_screen__note_list)
stop_app()
print(before, $notes_screen__note_list.exists())
clear_app()
launch_app(args={"rate_prompt_after": 5, "dark": True, "who": "ada lovelace"})
print(len($notes_screen__note_list))
""")
    # stopped: the launcher shows; cleared: the 12 notes of a new install
    assert result.printed == ("13 False", "12")
    log = s.shell_log
    assert "am force-stop org.tapir.notes" in log and "pm clear org.tapir.notes" in log
    resolve = [c for c in log if c.startswith("cmd package resolve-activity")]
    assert resolve == ["cmd package resolve-activity --brief -a android.intent.action.MAIN "
                       "-c android.intent.category.LAUNCHER org.tapir.notes"]
    start = [c for c in log if c.startswith("am start")]
    assert start == ["am start -n org.tapir.notes/.activities.MainActivity -a android.intent.action.MAIN "
                     "-c android.intent.category.LAUNCHER --ei rate_prompt_after 5 --ez dark true "
                     "--es who 'ada lovelace'"]
    assert s.app.state.rate_prompt_after == 5 and "Kept until cleared" not in [n.title for n in s.app.state.notes]
    calls = {r["call"]: r for r in s.records()}
    assert calls["stop_app"]["foreground"] == "com.android.launcher3"
    assert calls["launch_app"]["args"] == {"args": {"rate_prompt_after": 5, "dark": True, "who": "ada lovelace"}}
    assert calls["launch_app"]["screen_after"] == "notes_screen"
    assert result.actions == 7  # tap, set_text, tap, back(), and the three app controls
    assert s.rt.stats.script_actions == result.actions


def test_a_stopped_app_is_launched_again_by_the_next_element(adb_port: int, tmp_path: Path) -> None:
    s = Session("notes", adb_port, tmp_path)
    ok(s, "stop_app()\n$notes_screen__note_list.match('Garden ideas').tap()\n"
          "assert $note_screen__body_text.get_text().startswith('Move the rosemary')")
    assert any(r["step"].startswith("launch ") for r in s.records("navigation"))


# -- presence and waits ----------------------------------------------------------------------------------


def test_exists_never_acts_even_with_an_interruption_showing(adb_port: int, tmp_path: Path) -> None:
    s = Session("notes", adb_port, tmp_path)  # its document has a watcher for the prompt
    result = ok(s, """
launch_app(args={"rate_prompt_after": 1})
$notes_screen__new_note_button.tap()
$edit_note_screen__title_input.set_text("x")
$edit_note_screen__save_button.tap()
print($rate_dialog__title.exists(), $note_screen__body_text.exists(), $notes_screen__new_note_button.exists(1))
""")
    assert result.printed == ("True False False",)
    checks = [r for r in s.records() if r["call"] == "exists"]
    assert len(checks) == 3 and all(r["device_actions"] == 0 and "navigation" not in r for r in checks)
    assert s.rt.stats.watchers == {} and s.app.current_dialog == "rate_app"  # nothing answered it


def test_waits_pass_the_simulator_s_time(adb_port: int, tmp_path: Path) -> None:
    s = Session("weather", adb_port, tmp_path)
    started = time.monotonic()
    result = ok(s, (SAMPLES / "weather" / "refresh_forecast.tap").read_text())
    wall = time.monotonic() - started
    [gone] = [r for r in s.records() if r["call"] == "wait_gone"]
    # the refresh takes 4 simulated seconds: looked at after 0, 1, 2, 3 and 4 of them, whatever the host
    assert gone["ok"] and (gone["looks"], gone["waited_s"]) == (5, 4.0)
    assert s.rt.simulated_seconds() >= 4 and wall < 60
    assert s.rt.stats.wait_dumps == gone["looks"] - 1  # each look after the first dumped
    assert result.printed[0].startswith("Updated at ")
    assert s.app.state.updated_at is not None


def test_the_time_a_wait_passes_counts_against_the_budget(adb_port: int, tmp_path: Path) -> None:
    s = Session("weather", adb_port, tmp_path)
    result = s.run("$forecast_screen__more_options_button.tap()\n$main_menu__options.match('Refresh').tap()\n"
                   "$forecast_screen__updating_text.wait_gone(timeout=15)", budgets=Budgets(timeout_s=3))
    assert isinstance(result.error, BudgetExceeded) and result.error.span is not None
    assert result.error.span.line == 3 and "ran out" in result.error.message
    assert s.app.state.updating_until is not None  # the update had not finished within the 3 s


def test_a_wait_that_times_out_says_what_the_device_shows(adb_port: int, tmp_path: Path) -> None:
    s = Session("weather", adb_port, tmp_path)
    result = s.run("x = 1\n$forecast_screen__updated_text.wait(timeout=2)")
    err = result.error
    assert isinstance(err, WaitTimeout), err and err.render()
    assert err.message == ("$forecast_screen__updated_text did not appear within 2 s: the device shows "
                           "'forecast_screen'")
    assert err.render().splitlines()[:3] == [
        "s.tap:2:1: WaitTimeout: " + err.message,
        "    $forecast_screen__updated_text.wait(timeout=2)",
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    ]
    [wait] = s.records()
    assert wait["call"] == "wait" and wait["timed_out"] and not wait["ok"]
    assert wait["error"]["category"] == "WaitTimeout" and s.rt.stats.device_actions == 0


def test_sleep_moves_the_app_s_time(adb_port: int, tmp_path: Path) -> None:
    s = Session("clock", adb_port, tmp_path)
    result = ok(s, (SAMPLES / "clock" / "run_timer.tap").read_text())
    [sleep] = [r for r in s.records() if r["call"] == "sleep"]
    assert sleep["args"] == {"seconds": 20} and sleep["ok"]
    assert s.app.now - s.app.start_time >= 40 and result.ok


# -- watchers ---------------------------------------------------------------------------------------------


def test_the_document_s_watcher_answers_the_prompt_each_time_counted_and_traced(adb_port: int,
                                                                                 tmp_path: Path) -> None:
    s = Session("notes", adb_port, tmp_path)
    ok(s, (SAMPLES / "notes" / "rate_prompt.tap").read_text())
    assert s.rt.stats.watchers == {"rate_prompt": 3}
    fired = s.records("watcher")
    assert [r["count"] for r in fired] == [1, 2, 3]
    assert {(r["name"], r["element"], r["label"], r["screen_before"], r["screen_after"]) for r in fired} == {
        ("rate_prompt", "$rate_dialog__not_now_button", "Not now", "rate_dialog", "note_screen")}
    assert fired[0]["rule"] == "when $rate_dialog__title appears, tap $rate_dialog__not_now_button"
    # the reads that found the prompt in their way name the watcher in their own line
    reads = [r for r in s.records() if r.get("watchers")]
    assert len(reads) == 3 and all(r["call"] == "get_text" for r in reads)
    assert s.records("end")[0]["stats"]["watchers"] == {"rate_prompt": 3}


def test_without_a_watcher_the_prompt_stops_the_script_where_it_shows(adb_port: int, tmp_path: Path) -> None:
    doc = replace(document("notes"), watchers=())
    s = Session("notes", adb_port, tmp_path, doc)
    result = s.run(_SAVES.format(saves=1, watch=""))
    assert isinstance(result.error, ScreenNotReached), result.error and result.error.render()
    assert result.error.span is not None and result.error.span.line == 7
    assert "the device shows 'rate_dialog'" in result.error.message  # BACK does not close this prompt


#: Notes saved with the rating prompt on; each save is followed by a read of the list (line 7).
_SAVES = """{watch}
launch_app(args={{"rate_prompt_after": 1}})
for i in range({saves}):
    $notes_screen__new_note_button.tap()
    $edit_note_screen__title_input.set_text(f"note {{i}}")
    $edit_note_screen__save_button.tap()
    assert $notes_screen__note_list.match(f"note {{i}}").exists()
"""


def test_a_script_watcher_by_texts(adb_port: int, tmp_path: Path) -> None:
    s = Session("notes", adb_port, tmp_path, replace(document("notes"), watchers=()))
    ok(s, _SAVES.format(saves=2, watch="watch('Not now', when='Enjoying Notes?')"))
    assert s.rt.stats.watchers == {"watch('Not now', when='Enjoying Notes?')": 2}
    [watch] = [r for r in s.records() if r["call"] == "watch"]
    assert watch["args"]["rule"] == "when 'Enjoying Notes?' shows, tap 'Not now'"
    assert [r["element"] for r in s.records("watcher")] == [None, None]
    assert len(s.app.state.notes) == 14


def test_a_watcher_stops_at_its_limit_and_the_error_says_so(adb_port: int, tmp_path: Path) -> None:
    s = Session("notes", adb_port, tmp_path, replace(document("notes"), watchers=()))
    result = s.run(_SAVES.format(saves=3, watch="watch($rate_dialog__not_now_button, when=$rate_dialog__title, "
                                                 "limit=2)"))
    assert isinstance(result.error, ScreenNotReached), result.error and result.error.render()
    assert result.error.span is not None and result.error.span.line == 7
    assert "reached its limit" in (result.error.hint or "")
    assert s.rt.stats.watchers == {"watch($rate_dialog__not_now_button, when=$rate_dialog__title)": 2}
    exhausted = [r for r in s.records("watcher") if r.get("exhausted")]
    assert len(exhausted) == 1 and exhausted[0]["limit"] == 2


def test_one_call_lets_watchers_fire_three_times_at_most(adb_port: int, tmp_path: Path) -> None:
    """A watcher whose tap does not dismiss anything (the prompt's title) cannot hold a call."""
    s = Session("notes", adb_port, tmp_path, replace(document("notes"), watchers=()))
    result = s.run(_SAVES.format(saves=1, watch="watch($rate_dialog__title, limit=10)"))
    assert isinstance(result.error, ScreenNotReached) and result.error.span is not None
    assert result.error.span.line == 7 and s.rt.stats.watchers == {"watch($rate_dialog__title)": 3}


def test_watch_refuses_elements_that_are_not_in_the_document_or_show_many_times(adb_port: int,
                                                                                  tmp_path: Path) -> None:
    s = Session("notes", adb_port, tmp_path)
    result = s.run("watch($notes_screen__note_title)")
    assert result.error is not None and "inside a list's items" in result.error.message
    assert result.error.span is not None and result.error.span.line == 1


# -- screenshots -------------------------------------------------------------------------------------------


def test_screenshots_go_to_the_artifacts_and_the_trace(adb_port: int, tmp_path: Path) -> None:
    s = Session("weather", adb_port, tmp_path)
    result = ok(s, "a = screenshot('the forecast')\nb = screenshot('the forecast')\nc = screenshot()\n"
                   "print(a)\nprint(b)\nprint(c)")
    paths = [Path(p) for p in result.printed]
    assert [p.name for p in paths] == ["the_forecast.png", "the_forecast-2.png", "screenshot-003.png"]
    assert all(p.parent == s.artifacts and p.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") for p in paths)
    shots = [r for r in s.records() if r["call"] == "screenshot"]
    assert [r["file"] for r in shots] == [str(p) for p in paths] and shots[0]["bytes"] > 1000


# -- the command line, on a device given by serial ----------------------------------------------------------


def test_tapir_run_with_params_and_artifacts_on_a_device_by_serial(adb_port: int, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A device by serial may be a `tapir sim` another process serves: waits sleep on the device
    (`adb shell sleep`), which the simulator answers by letting its time pass."""
    from tapir.cli import main
    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    script = tmp_path / "refresh.tap"
    script.write_text(f"# doc: {SAMPLES / 'weather' / 'weather.yaml'}\n"
                      "$main_menu__options.match(param('item')).tap()\n"
                      "$forecast_screen__updating_text.wait_gone(timeout=int(param('timeout', default='20')))\n"
                      "print(screenshot(param('shot')))\n")
    app = get_app("weather")
    with start_sim([app], adb_port=adb_port, foreground="org.tapir.weather") as sim:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_port))
        code = main(["run", str(script), "--device", sim.serial, "--param", "item=Refresh", "--param", "shot=done",
                     "--artifacts", str(tmp_path / "out")])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert out.strip() == str(tmp_path / "out" / "done.png") and (tmp_path / "out" / "done.png").is_file()
        assert app.state.updated_at is not None
        assert any(c.startswith("sleep ") for c in sim.device.log)
        code = main(["run", str(script), "--device", sim.serial])
        err = capsys.readouterr().err
        assert code == 1 and "the script needs the parameter 'item'" in err and ":2:" in err


def test_the_device_shell_clock_counts_what_the_host_did_not_wait() -> None:
    sent: list[str] = []
    now = [100.0]

    def phone(command: str) -> None:  # a phone sleeps for real
        sent.append(command)
        now[0] += float(command.split()[1])

    clock = DeviceShellClock(phone, now=lambda: now[0])
    clock.sleep(12)
    assert sent == ["sleep 5.000", "sleep 5.000", "sleep 2.000"] and clock.simulated == 0
    simulator = DeviceShellClock(lambda command: None, now=lambda: 0.0)
    simulator.sleep(3.5)
    assert simulator.simulated == 3.5 and simulator.now() == 3.5


def test_a_wait_on_a_simulator_by_serial_lets_its_time_pass_however_slow_the_host() -> None:
    # found by bench/soak.py with 8 simulators at once: each look at the screen took the host
    # seconds, which counted against a 30 s wait while the simulator's time moved only by the
    # 1 s pauses, and a 40 s timer did not finish in time
    host = [100.0]
    device_time = [0.0]

    def simulator(command: str) -> None:
        device_time[0] += float(command.split()[1])

    clock = DeviceShellClock(simulator, now=lambda: host[0])
    deadline = clock.now() + 30
    while True:
        host[0] += 2.5  # a dump on a loaded host
        if clock.now() >= deadline:
            break
        before = clock.now()
        clock.sleep(1.0)
        assert clock.now() >= before  # never back in time
    # all of the 30 s but the host's time before the first pause (the first look, 2.5 s) passed
    # on the device; before, a third of it did (one 1 s pause per 2.5 s look)
    assert device_time[0] == clock.simulated == 28
