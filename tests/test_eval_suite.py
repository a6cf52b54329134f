"""``tapir eval`` end to end on simulated devices behind a real adb server: the sample suite with
its reference scripts, a script that does nothing, model-like sources (tokens, repairs, no
script), setup statements, UI drift and a task run on a device given by serial."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tapir.eval import CallableSource, EvalConfig, Generation, OracleSource, Tokens, load_suite, run_suite
from tapir.eval.sources import GenerationRequest

pytestmark = [pytest.mark.adb, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "samples" / "suite"


@pytest.mark.slow
def test_the_sample_suite_passes_every_task_with_its_references(tmp_path: Path, adb_port: int,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    report, markdown = tmp_path / "oracle.json", tmp_path / "oracle.md"
    code = main(["eval", str(SUITE), "--oracle", "--device", "sim", "-j", "2", "--json", str(report),
                 "--markdown", str(markdown)])
    out = capsys.readouterr().out
    data = json.loads(report.read_text(encoding="utf-8"))
    failures = [(t["id"], t["verdict"], t["error"], t["failed_checks"]) for t in data["tasks"] if not t["success"]]
    assert code == 0 and not failures, failures
    assert data["success_rate"] == 1.0 and data["total"] == len(data["tasks"]) >= 60
    assert set(data["by_difficulty"]) == {"easy", "medium", "hard"}
    assert set(data["by_app"]) == {"music", "clock", "contacts", "notes"}
    assert all(s["success_rate"] == 1.0 for s in [*data["by_difficulty"].values(), *data["by_app"].values()])
    for t in data["tasks"]:
        assert t["finished"], (t["id"], t["error"])
        assert t["tokens"] is None and t["model_latency_s"] is None
        if t["steps"]:  # the references are close to what a person does
            assert t["actions"] >= 1 and t["rrr"] >= 0.3, t["id"]
    # every tap of the run was audited, and each reached the view meant
    assert data["wrong_taps"] == 0 and data["audited_taps"] >= 200
    assert all(t["unknown_taps"] == 0 and t["audited_taps"] >= 1 for t in data["tasks"] if t["steps"]), \
        [t["id"] for t in data["tasks"] if t["steps"] and not t["audited_taps"]]
    assert {t["device"] for t in data["tasks"]} == {"sim#1", "sim#2"}
    assert data["settings"]["jobs"] == 2 and data["source"]["name"] == "oracle" and data["suite"]["digest"]
    assert "success rate 100.0%" in out and "music/add_artist_to_playlist" in out
    assert "| all | " in markdown.read_text(encoding="utf-8")


def test_a_script_that_does_nothing_fails_every_sample_task(adb_port: int) -> None:
    """Each checker looks at what its task changes: nothing done, nothing passes."""
    suite = load_suite(SUITE)
    run = run_suite(suite, CallableSource("noop", lambda r: "pass\n"), EvalConfig(jobs=2, adb_port=adb_port))
    assert [r.id for r in run.results] == [t.id for t in suite.tasks]
    passing = [r.id for r in run.results if r.verdict != "fail" or not r.failed_checks]
    assert not passing



def test_model_sources_report_tokens_latency_and_repairs(adb_port: int) -> None:
    suite = load_suite(SUITE).select(ids=["music/play_song", "music/sort_by_duration", "clock/add_alarm"])

    def generate(request: GenerationRequest) -> Generation:
        if request.task.id == "clock/add_alarm":
            return Generation(None, Tokens(50, 5, 0), 0.1, error="the reply had no script")
        if request.task.id == "music/sort_by_duration":
            return Generation("$songs_screen__song_list.match('Lanterns').tap()\n", Tokens(100, 10, 9), 0.2)
        return Generation("$songs_screen__song_list.match('Lanterns').tap($songs_screen__no_such_button)\n",
                          Tokens(100, 10, 5), 0.5)

    def repair(request: GenerationRequest, previous: Generation, error: str) -> Generation:
        assert "no_such_button" in error and previous.tokens == Tokens(100, 10, 5)
        return Generation(request.task.reference, Tokens(100, 20, 6), 0.25)

    source = CallableSource("fake-model", generate, repair=repair, settings={"temperature": 0})
    without = {r.id: r for r in run_suite(suite, source, EvalConfig(adb_port=adb_port)).results}
    assert without["music/play_song"].verdict == "error" and without["music/play_song"].attempts == 1
    assert "UnknownElement" in (without["music/play_song"].category or "")
    assert without["music/sort_by_duration"].verdict == "fail" and without["music/sort_by_duration"].finished
    assert without["music/sort_by_duration"].failed_checks == (
        "state.sort == \"Duration\" is false: state.sort is 'Title'",)
    assert without["clock/add_alarm"].verdict == "no_script" and without["clock/add_alarm"].error == \
        "the reply had no script"

    repaired = {r.id: r for r in run_suite(suite, source, EvalConfig(repairs=1, adb_port=adb_port)).results}
    fixed = repaired["music/play_song"]
    assert fixed.verdict == "pass" and fixed.attempts == 2
    assert fixed.tokens == Tokens(200, 30, 11) and fixed.model_latency_s == 0.75
    assert repaired["music/sort_by_duration"].attempts == 1  # it finished: nothing to repair


def test_setup_statements_run_first_and_their_actions_are_not_counted(adb_port: int, tmp_path: Path) -> None:
    suite = load_suite(SUITE).select(ids=["clock/earliest_alarm_off"])
    config = EvalConfig(adb_port=adb_port, trace_dir=tmp_path)
    [result] = run_suite(suite, OracleSource(), config).results
    assert result.verdict == "pass" and result.actions == result.steps == 2
    assert result.trace and Path(result.trace).is_file()
    broken = dataclasses.replace(suite.tasks[0], setup="$clock_screen__alarm_tab.tap()\n$alarm_screen__nope.tap()\n")
    [result] = run_suite(dataclasses.replace(suite, tasks=(broken,)), OracleSource(), config).results
    assert result.verdict == "setup_error" and "clock/earliest_alarm_off (setup):2:1" in (result.error or "")


def test_drift_runs_the_suite_on_a_next_version_of_the_app(adb_port: int, tmp_path: Path) -> None:
    doc = REPO / "samples" / "music" / "music.yaml"
    (tmp_path / "suite.yaml").write_text(
        f"apps:\n  music:\n    document: {doc}\ntasks:\n"
        "  - id: drifted\n    app: music\n    task: Play Lanterns.\n    difficulty: easy\n    steps: 1\n"
        "    reference: play.tap\n    check:\n      - app.drift is not None and app.drift.kind == 'text'\n"
        "      - app.drift.seed == 7\n      - state.song(state.now_playing).title == 'Lanterns'\n", encoding="utf-8")
    (tmp_path / "play.tap").write_text("$songs_screen__song_list.match('Lanterns').tap()\n", encoding="utf-8")
    suite = load_suite(tmp_path)
    [result] = run_suite(suite, OracleSource(), EvalConfig(drift="text", seed=7, adb_port=adb_port)).results
    assert result.verdict == "pass", (result.failed_checks, result.error)
    [plain] = run_suite(suite, OracleSource(), EvalConfig(adb_port=adb_port)).results
    assert plain.verdict == "fail" and "app.drift is not None" in plain.failed_checks[0]


#: Tasks that went wrong on the drifted apps (issue 9's findings): checkboxes taken for "Delete
#: item" buttons, screens not recognised once their ids were renamed or dropped, a one-row list
#: read as the row's parts, a reworded menu item taken for its neighbour.
DRIFTED = {
    ("ids", 1): ["notes/tick_milk", "notes/tick_all_packing", "notes/clear_done_items", "music/play_song",
                 "clock/enable_gym", "clock/delete_disabled_alarms", "contacts/search_call"],
    ("text", 1): ["music/play_next"],
    ("ids", 2): ["contacts/edit_phone", "clock/use_12h", "music/sort_by_duration"],
    ("ids", 3): ["contacts/rename_contact", "notes/write_note", "notes/add_item"],
}


@pytest.mark.parametrize(("kind", "seed"), sorted(DRIFTED))
def test_drifted_apps_are_driven_without_a_wrong_tap(kind: str, seed: int, adb_port: int) -> None:
    suite = load_suite(SUITE).select(ids=DRIFTED[(kind, seed)])
    run = run_suite(suite, OracleSource(), EvalConfig(jobs=2, drift=kind, seed=seed, adb_port=adb_port))
    failures = [(r.id, r.verdict, r.error, r.failed_checks) for r in run.results if not r.success]
    wrong = [(r.id, w) for r in run.results for w in r.wrong_taps]
    assert not wrong and not failures, (wrong, failures)
    assert all(r.audited_taps >= 1 and r.unknown_taps == 0 for r in run.results)


def test_a_device_given_by_serial_runs_tasks_judged_by_their_actions(adb_port: int, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The DroidTask rule needs no app state, so such tasks run on a phone; here the phone is a
    simulator attached to the test's adb server and reached by its serial."""
    from tapir.sim.apps import get_app
    from tapir.sim.launch import start_sim

    doc = REPO / "samples" / "music" / "music.yaml"
    (tmp_path / "suite.yaml").write_text(
        f"apps:\n  music:\n    document: {doc}\ntasks:\n"
        "  - id: search\n    app: music\n    task: Open the search.\n    difficulty: easy\n    steps: 1\n"
        "    reference: search.tap\n    actions: ['tap: search']\n", encoding="utf-8")
    (tmp_path / "search.tap").write_text("$songs_screen__search_button.tap()\n", encoding="utf-8")
    app = get_app("music")
    with start_sim([app], adb_port=adb_port, foreground="org.tapir.music") as sim:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_port))
        run = run_suite(load_suite(tmp_path), OracleSource(), EvalConfig(devices=(sim.serial,)))
        [result] = run.results
        assert result.verdict == "pass" and result.device == sim.serial, result.error
        assert result.action_log == ("tap: search",) and result.rrr == 1.0
        assert app.current_screen == "search"  # the phone's own app did it


def test_an_interrupted_run_keeps_the_tasks_that_finished(adb_port: int) -> None:
    suite = load_suite(SUITE).select(ids=["clock/*"])
    stop_at = suite.tasks[2].id

    def generate(request: GenerationRequest) -> Generation:
        if request.task.id == stop_at:
            raise KeyboardInterrupt  # as Ctrl-C would, in the middle of the run
        return Generation("pass\n")

    run = run_suite(suite, CallableSource("noop", generate), EvalConfig(adb_port=adb_port))
    done = [r.id for r in run.results]
    # the tasks before it finished; the worker may have started more before the main thread saw it
    assert done[:2] == [t.id for t in suite.tasks[:2]] and stop_at not in done
    assert stop_at in run.not_run and sorted([*done, *run.not_run]) == sorted(t.id for t in suite.tasks)
    from tapir.eval import report_json

    data = report_json(run)
    assert data["interrupted"] and data["total"] == len(done) and data["not_run"] == list(run.not_run)


def test_runs_are_reproducible_whatever_the_number_of_simulators(adb_port: int) -> None:
    suite = load_suite(SUITE).select(levels=["hard"], apps=["music", "notes"])

    def figures(jobs: int) -> list[tuple[str, str, int, tuple[str, ...], tuple[str, ...]]]:
        run = run_suite(suite, OracleSource(), EvalConfig(jobs=jobs, adb_port=adb_port))
        return [(r.id, r.verdict, r.actions, r.action_log, r.printed) for r in run.results]

    assert figures(1) == figures(3)


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell script starts a background job


def test_sigterm_stops_a_run_with_its_report_and_an_ignored_ctrl_c_stays_ignored(tmp_path: Path,
                                                                                 adb_port: int) -> None:
    """A CI job cancelled, or ``kill PID`` on a run started with ``&`` from a script (which ignores
    SIGINT): the tasks that ran are in the report, marked interrupted, exit status 143."""
    import signal
    import subprocess
    import sys
    import time

    report = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "tapir.cli", "eval", str(SUITE), "--oracle", "-j", "1",
                             "--adb-port", str(adb_port), "--json", str(report)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ignore_sigint)
    assert proc.stderr is not None
    lines: list[str] = []

    def until_task(n: int) -> None:  # one line per finished task on a pipe
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(line.startswith(f"[{n}/") for line in lines):
            line = proc.stderr.readline()  # type: ignore[union-attr]
            if not line:
                break
            lines.append(line)
        assert any(line.startswith(f"[{n}/") for line in lines), (proc.poll(), lines)

    until_task(1)
    proc.send_signal(signal.SIGINT)  # ignored: the run goes on to the next task
    until_task(3)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    stderr = "".join(lines) + stderr
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr and "interrupted (SIGTERM): " in stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    total = len(load_suite(SUITE).tasks)
    assert data["interrupted"] and 3 <= data["total"] < total
    assert data["total"] + len(data["not_run"]) == total
