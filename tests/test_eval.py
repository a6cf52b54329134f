"""The evaluation harness without a device: check expressions, the suite format and its errors,
reports, comparison and the command line's refusals."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tapir.core.errors import UsageError
from tapir.eval import LEVELS, SuiteError, compare_reports, load_suite, report_markdown, summarize
from tapir.eval.checks import CheckSyntaxError, compile_check
from tapir.eval.compare import load_report
from tapir.eval.report import wrong_text
from tapir.eval.sources import CallableSource, Generation, GenerationRequest, OracleSource, Tokens, can_repair

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "samples" / "suite"


# -- check expressions ----------------------------------------------------------------------------


def test_a_check_shows_the_values_it_compared() -> None:
    check = compile_check("state.theme == 'Dark'")
    assert check.evaluate({"state": SimpleNamespace(theme="Dark")}).ok
    outcome = check.evaluate({"state": SimpleNamespace(theme="White")})
    assert not outcome.ok
    assert outcome.message == "state.theme == 'Dark' is false: state.theme is 'White'"


def test_a_check_that_raises_fails_with_the_reason() -> None:
    check = compile_check("state.song(state.now_playing).title == 'Lanterns'")
    state = SimpleNamespace(now_playing=None, song=lambda i: next(s for s in [] if s))
    outcome = check.evaluate({"state": state})
    assert not outcome.ok and "raised StopIteration" in outcome.message


def test_checks_see_the_output_and_comprehension_names() -> None:
    check = compile_check("'6' in output.split() and all(n > 0 for n in [1, 2])")
    assert not check.evaluate({"output": "16 songs"}).ok
    assert check.evaluate({"output": "6 songs"}).ok


@pytest.mark.parametrize(("text", "message", "column"), [
    ("stat.theme == 'Dark'", "unknown name 'stat' (did you mean 'state'?)", 1),
    ("state.__class__", "private attribute '__class__' is not allowed in a check", 1),
    ("(lambda: 1)()", "Lambda is not allowed in a check", 2),
    ("state.theme ==", "not a Python expression", None),
    ("open('/etc/passwd')", "unknown name 'open'", 1),
])
def test_checks_that_cannot_be_used_are_refused(text: str, message: str, column: int | None) -> None:
    with pytest.raises(CheckSyntaxError) as info:
        compile_check(text)
    assert info.value.message.startswith(message)
    if column is not None:
        assert info.value.column == column


# -- the suite format -----------------------------------------------------------------------------


def _write_suite(tmp_path: Path, tasks: str, *, reference: str | None = "$songs_screen__search_button.tap()\n") -> Path:
    doc = REPO / "samples" / "music" / "music.yaml"
    (tmp_path / "suite.yaml").write_text(
        f"format: 1\nname: tiny\napps:\n  music:\n    document: {doc}\ntasks:\n  - tasks.yaml\n", encoding="utf-8")
    (tmp_path / "tasks.yaml").write_text("app: music\ntasks:\n" + tasks, encoding="utf-8")
    if reference is not None:
        (tmp_path / "search.tap").write_text(reference, encoding="utf-8")
    return tmp_path


def test_a_suite_folder_loads_with_its_reference_next_to_the_task_file(tmp_path: Path) -> None:
    _write_suite(tmp_path, "  - id: search\n    task: Open   the search.\n    difficulty: easy\n    steps: 1\n"
                           "    check: app.current_screen == 'search'\n")
    suite = load_suite(tmp_path)
    [task] = suite.tasks
    assert (task.id, task.app, task.text, task.difficulty, task.steps) == ("music/search", "music", "Open the search.",
                                                                         "easy", 1)
    assert task.reference == "$songs_screen__search_button.tap()\n"
    assert task.reference_file == str(tmp_path / "search.tap")
    assert task.where.line == 3 and task.needs_state
    assert suite.apps["music"].device == "sim:music" and suite.kind == "tapir" and len(suite.digest) == 16


def test_every_problem_of_a_suite_is_reported_at_its_line(tmp_path: Path) -> None:
    _write_suite(tmp_path, (
        "  - id: search\n    task: Open the search.\n    difficulty: easy\n    chek: x\n"
        "  - id: search\n    task: Again.\n    difficulty: trivial\n    check: state.theme ==\n"
        "  - id: other\n    app: musik\n    task: Elsewhere.\n    difficulty: hard\n    check: stat.x\n"
        "    reference: missing.tap\n"
    ))
    with pytest.raises(SuiteError) as info:
        load_suite(tmp_path)
    text = info.value.render()
    tasks = str(tmp_path / "tasks.yaml")
    assert f"{tasks}:6:5: error[unknown-field]: unknown field 'chek' in a task (did you mean 'check'?)" in text
    assert f"{tasks}:3:5: error[missing-field]: the task has no success check" in text
    assert f"{tasks}:9:17: error[bad-level]: unknown difficulty 'trivial' (levels: easy, medium, hard)" in text
    assert f"{tasks}:10:12: error[check]: check: not a Python expression" in text
    assert f"{tasks}:12:10: error[unknown-app]: unknown app 'musik' (did you mean 'music'?)" in text
    assert f"{tasks}:15:12: error[check]: check: unknown name 'stat' (did you mean 'state'?)" in text
    assert "no reference script missing.tap" in text
    # the line and a caret under the offending key
    assert "        chek: x\n        ^^^^\n" in text


def test_duplicate_task_ids_are_refused(tmp_path: Path) -> None:
    task = "  - id: search\n    task: Open the search.\n    difficulty: easy\n    check: app is not None\n"
    _write_suite(tmp_path, task + task)
    with pytest.raises(SuiteError, match="cannot load the suite") as info:
        load_suite(tmp_path)
    assert "duplicate task id 'music/search' (first at" in info.value.render()


def test_what_is_not_a_suite_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such suite"):
        load_suite(tmp_path / "nowhere")
    with pytest.raises(UsageError, match="has neither suite.yaml nor a DroidTask tasks.json"):
        load_suite(tmp_path)
    (tmp_path / "tasks.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(UsageError, match="is not a DroidTask tasks.json"):
        load_suite(tmp_path)


def test_a_suite_selects_tasks_by_pattern_app_and_level() -> None:
    suite = load_suite(SUITE)
    assert {t.app for t in suite.select(ids=["music/*"]).tasks} == {"music"}
    hard_notes = suite.select(apps=["notes"], levels=["hard"]).tasks
    assert hard_notes and all(t.app == "notes" and t.difficulty == "hard" for t in hard_notes)
    assert [t.id for t in suite.select(ids=["clock/add_alarm"]).tasks] == ["clock/add_alarm"]
    with pytest.raises(UsageError, match="has no app 'radio'"):
        suite.select(apps=["radio"])
    with pytest.raises(UsageError, match="unknown difficulty 'extreme'"):
        suite.select(levels=["extreme"])
    with pytest.raises(UsageError, match="no task of the suite matches"):
        suite.select(ids=["nothing/*"])


def test_the_sample_suite_covers_every_app_and_level_with_references_and_checks() -> None:
    suite = load_suite(SUITE)
    assert len(suite.tasks) >= 60
    assert set(suite.apps) == {"music", "clock", "contacts", "notes"}
    for app in suite.apps:
        levels = {t.difficulty for t in suite.tasks if t.app == app}
        assert levels == set(LEVELS), app
    for task in suite.tasks:
        assert task.reference and task.checks, task.id
        # a task that acts says how many actions a person needs (query tasks only print)
        assert task.steps or "Print" in task.text, task.id


def test_every_reference_of_the_sample_suite_checks_clean(capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    references = sorted(str(p) for p in SUITE.rglob("*.tap"))
    assert main(["check", *references]) == 0, capsys.readouterr().out


# -- sources --------------------------------------------------------------------------------------


def test_sources_give_scripts_and_their_cost() -> None:
    suite = load_suite(SUITE)
    task = suite.tasks[0]
    request = GenerationRequest(task, suite.apps[task.app].document)
    assert OracleSource().generate(request).script == task.reference
    plain = CallableSource("plain", lambda r: "back()\n")
    assert plain.generate(request) == Generation("back()\n") and not can_repair(plain)
    costly = CallableSource("m", lambda r: Generation("x", Tokens(10, 5, 3), 0.5),
                            repair=lambda r, g, e: None, settings={"temperature": 0})
    assert can_repair(costly) and costly.settings() == {"source": "m", "temperature": 0}
    assert Tokens(1, 2, 3) + Tokens(10, 20, 30) == Tokens(11, 22, 33)


# -- reports and comparison ------------------------------------------------------------------------


def _task(ident: str, verdict: str, level: str = "easy", **extra: Any) -> dict[str, Any]:
    task = {"id": ident, "app": ident.split("/")[0], "difficulty": level, "verdict": verdict,
            "success": verdict == "pass", "finished": verdict in ("pass", "fail"),
            "rrr": 1.0 if verdict == "pass" else None, "actions": 2,
            "tokens": None, "model_latency_s": None, "wall_s": 1.0, "error": None, "failed_checks": [],
            "missing_actions": []}
    task.update(extra)
    return task


def _report(tasks: list[dict[str, Any]], digest: str = "d1") -> dict[str, Any]:
    overall = summarize(tasks)
    return {"format": "tapir-eval/1", "suite": {"name": "s", "kind": "tapir", "digest": digest, "notes": []},
            "source": {"name": "m", "settings": {}}, "settings": {"devices": ["sim"], "jobs": 1, "seed": 0},
            **overall, "wall_s": 3.0, "by_difficulty": {lv: summarize(t for t in tasks if t["difficulty"] == lv)
                                                        for lv in LEVELS if any(t["difficulty"] == lv for t in tasks)},
            "by_app": {}, "tasks": tasks}


def test_summaries_count_rrr_over_passed_tasks_and_tokens_only_when_reported() -> None:
    tasks = [_task("a/1", "pass", rrr=1.0, tokens={"cached": 100, "computed": 20, "generated": 30},
                   model_latency_s=2.0),
             _task("a/2", "pass", rrr=0.5, tokens={"cached": 100, "computed": 10, "generated": 10},
                   model_latency_s=1.0),
             _task("a/3", "fail", rrr=None), _task("a/4", "error")]
    s = summarize(tasks)
    assert (s["total"], s["passed"], s["success_rate"], s["rrr"]) == (4, 2, 0.5, 0.75)
    assert s["tokens"] == {"cached": 200, "computed": 30, "generated": 40}
    assert s["model_latency_s"] == 1.5 and s["verdicts"] == {"pass": 2, "fail": 1, "error": 1}
    assert summarize([_task("a/1", "pass")])["tokens"] is None


def test_markdown_has_the_groups_and_a_row_per_task() -> None:
    tasks = [_task("music/x", "pass"), _task("music/y", "fail", "hard", failed_checks=["state.x is false"])]
    text = report_markdown(_report(tasks))
    assert "| all | 2 | 1 | 50.0% | 50.0% (1) |" in text and "| hard | 1 | 0 | 0.0% | 0.0% (0) |" in text
    assert "| music/y | hard | fail | 0 | – | 2 | – | – | – | 1.00 s | check: state.x is false |" in text


WRONG = {"action": "line 5: milk.tap($note_screen__item_checkbox)", "meant": "$note_screen__item_list.match('Milk')",
         "outcome": "wrong", "touched": "checklist_item_delete 'Delete item'",
         "why": "meant checklist_item_checkbox 'Milk'", "destructive": True, "view": "note"}


def test_wrong_taps_are_counted_per_group_and_listed() -> None:
    tasks = [_task("notes/x", "fail", audited_taps=3, unknown_taps=0, wrong_taps=[WRONG]),
             _task("notes/y", "pass", audited_taps=2, unknown_taps=0, wrong_taps=[]), _task("music/z", "pass")]
    data = _report(tasks)
    assert (data["audited_taps"], data["wrong_taps"], data["destructive_taps"]) == (5, 1, 1)
    assert wrong_text(data) == "1 (1 destructive)" and wrong_text(tasks[1]) == "0" and wrong_text(tasks[2]) == "–"
    text = report_markdown(data)
    assert "| notes/x | easy | fail | 0 | – | 2 | 1 (1 destructive) |" in text
    assert "## Wrong taps" in text and "checklist_item_delete 'Delete item' (destructive)" in text


def test_the_console_keeps_brackets_in_reasons_and_lists_wrong_taps(capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli.eval import _print_report

    error = ("s.tap:2:1: ScreenNotReached: could not reach screen 'songs_screen' for $songs_screen__song_list "
             "after 7 navigation step(s): tried [back()]; [songs_screen__playlists_tab.tap()]")
    tasks = [_task("music/a", "error", error=error), _task("notes/x", "fail", audited_taps=3, wrong_taps=[WRONG])]
    _print_report(_report(tasks), quiet=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "tried [back()]; [songs_screen__playlists_tab.tap()]" in out
    assert "wrong taps 1 of 3 audited, 1 destructive" in out
    assert "wrong tap in notes/x: line 5: milk.tap($note_screen__item_checkbox): touched checklist_item_delete" in out


def test_comparison_lists_what_changed_per_task() -> None:
    a = _report([_task("m/1", "pass"), _task("m/2", "fail"), _task("m/3", "pass"), _task("m/4", "pass")])
    b = _report([_task("m/1", "error", error="m/1.tap:2:1: ElementNotFound: gone"), _task("m/2", "pass"),
                 _task("m/3", "pass", rrr=0.8), _task("m/5", "pass")], digest="d2")
    diff = compare_reports(a, b)
    kinds = {c.id: c.kind for c in diff.changes}
    assert kinds == {"m/1": "regressed", "m/2": "fixed", "m/3": "changed", "m/4": "removed", "m/5": "added"}
    assert [c.id for c in diff.regressions] == ["m/1"]
    text = diff.render()
    assert "warning: the reports come from different suites" in text
    assert "m/1                              pass -> error" in text and "ElementNotFound: gone" in text
    assert "RRR 100.0% -> 80.0%" in text and "only in A: pass" in text
    assert "all                       75.0%      75.0%     +0.0p    100.0%   93.3%" in text
    assert "m/3                              pass   RRR 100.0% -> 80.0%" in text


def test_reports_that_are_not_reports_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("{\"tasks\": []}", encoding="utf-8")
    with pytest.raises(UsageError, match="is not a report of `tapir eval --json`"):
        load_report(bad)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(UsageError, match="is not JSON"):
        load_report(bad)


# -- the command line -----------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (["eval"], "give a suite"),
    (["eval", str(SUITE)], "choose where scripts come from"),
    (["eval", str(SUITE), "--model", "qwen"], "--model: qwen is neither a GGUF file nor a model name"),
    (["eval", str(SUITE), "--oracle", "-j", "0"], "--jobs must be positive"),
    (["eval", str(SUITE), "--oracle", "--device", "sim:music"], "a suite names each task's app"),
    (["eval", str(SUITE), "--oracle", "--device", "emulator-5554"], "which only a simulated app exposes"),
    (["eval", str(SUITE), "--oracle", "--drift", "colour"], "unknown drift 'colour'"),
    (["eval", str(SUITE), "--oracle", "--level", "extreme"], "unknown difficulty 'extreme'"),
    (["eval", str(SUITE), "--oracle", "--json", "/nonexistent/dir/r.json"], "--json: cannot write"),
    (["eval", str(SUITE), "--oracle", "--fail-under", "95"], "--fail-under is a success rate between 0 and 1"),
    (["eval", "--compare", "/nonexistent/a.json", "/nonexistent/b.json"], "no such report"),
    (["eval", str(SUITE), "--compare", "a.json", "b.json"], "--compare takes two reports, not a suite"),
    (["eval", str(SUITE), "--scripts-from", "/nonexistent/r.json"], "no such report: /nonexistent/r.json"),
])
def test_the_command_refuses_bad_use_with_status_2(argv: list[str], message: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_an_invalid_suite_is_reported_with_status_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    _write_suite(tmp_path, "  - id: search\n    task: Open.\n    difficulty: easy\n    check: stat.x\n")
    assert main(["eval", str(tmp_path), "--oracle"]) == 1
    err = capsys.readouterr().err
    assert "cannot load the suite" in err and "unknown name 'stat'" in err and "^" in err


def test_compare_exits_1_on_a_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_report([_task("m/1", "pass")])), encoding="utf-8")
    b.write_text(json.dumps(_report([_task("m/1", "fail")])), encoding="utf-8")
    assert main(["eval", "--compare", str(a), str(a)]) == 0
    assert "no task changed" in capsys.readouterr().out
    assert main(["eval", "--compare", str(a), str(b)]) == 1
    assert "1 task(s) changed: 1 regressed" in capsys.readouterr().out


def test_executed_actions_count_what_a_person_would_do() -> None:
    from tapir.eval.runner import executed_actions

    records = [
        {"event": "session"},
        {"event": "navigation", "step": "launch org.tapir.music"},           # the app was opened: not an action
        {"event": "action", "call": "tap", "ok": True},
        {"event": "action", "call": "tap", "ok": False},                      # nothing happened
        {"event": "action", "call": "get_text", "ok": True},                  # a read
        {"event": "action", "call": "scroll", "ok": True},                    # scrolls are not counted
        {"event": "navigation", "step": "songs_screen__playlists_tab.tap()", "action": "tap"},
        {"event": "navigation", "step": "back()"},
        {"event": "navigation", "step": "settings_screen.back()"},
        {"event": "action", "call": "set_text", "ok": True},
        {"event": "action", "call": "back", "ok": True},
        {"event": "end"},
    ]
    assert executed_actions(records) == 6


def test_a_device_that_fails_is_a_task_error_and_a_bug_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    import tapir.runtime.connect as connect_module
    from tapir.core.errors import DeviceError
    from tapir.eval import EvalConfig, run_suite

    suite = load_suite(SUITE).select(ids=["music/play_song", "music/delete_song"])

    def no_device(conn: object) -> object:
        raise DeviceError("the simulator did not start")

    monkeypatch.setattr(connect_module, "connect", no_device)
    run = run_suite(suite, OracleSource(), EvalConfig(adb_port=1))  # a port given: no adb server is started
    assert [(r.verdict, r.category) for r in run.results] == [("error", "DeviceError")] * 2
    assert run.results[0].failed_checks[0].startswith("not checked: the app's state could not be read")

    def bug(conn: object) -> object:
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(connect_module, "connect", bug)
    [first, second] = run_suite(suite, OracleSource(), EvalConfig(adb_port=1)).results
    assert first.category == "InternalError" and "ZeroDivisionError: oops" in (first.error or "")
    assert second.verdict == "error"  # the run went on


@pytest.mark.adb
def test_parts_of_a_run_merge_into_the_report_of_the_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run too long for one sitting runs in parts (--task, --app); --merge makes one report whose
    figures are those of a run of every task at once."""
    from tapir.cli import main

    picks = [["--task", "music/play_song"], ["--task", "clock/*"], ["--task", "music/play_song", "--task", "clock/*"]]
    paths = [tmp_path / f"{name}.json" for name in ("music", "clock", "whole")]
    for pick, path in zip(picks, paths, strict=True):
        assert main(["eval", str(SUITE), "--oracle", "-q", "--json", str(path), *pick]) == 0
    merged = tmp_path / "merged.json"
    assert main(["eval", "--merge", str(paths[0]), str(paths[1]), "--json", str(merged), "-q"]) == 0
    got, whole = json.loads(merged.read_text()), json.loads(paths[2].read_text())
    figures = ("total", "passed", "success_rate", "success_rate_without_repair", "rrr", "actions", "verdicts")
    assert {k: got[k] for k in figures} == {k: whole[k] for k in figures}
    assert got["by_app"].keys() == whole["by_app"].keys()
    assert {t["id"] for t in got["tasks"]} == {t["id"] for t in whole["tasks"]}
    assert [m["part"] for m in got["merged_from"]] == [str(paths[0]), str(paths[1])]
    assert load_report(merged)["format"] == whole["format"]
    capsys.readouterr()
    # the same task twice, or parts of another suite, are refused
    assert main(["eval", "--merge", str(paths[0]), str(paths[2])]) == 2
    assert "task music/play_song is in" in capsys.readouterr().err
    other = json.loads(paths[1].read_text())
    other["suite"]["digest"] = "0" * 16
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert main(["eval", "--merge", str(paths[0]), str(tmp_path / "other.json")]) == 2
    assert "not a part of the same run" in capsys.readouterr().err
    broken = json.loads(paths[1].read_text())
    del broken["tasks"][0]["difficulty"]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    assert main(["eval", "--merge", str(paths[0]), str(tmp_path / "broken.json")]) == 2
    assert "task 1 is not a task of a report (no difficulty)" in capsys.readouterr().err


@pytest.mark.adb
def test_the_scripts_of_a_report_are_judged_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--scripts-from runs the scripts an earlier report holds, without their source: only the
    report's tasks, each with its own script (here one made wrong by hand), never trusted."""
    from tapir.cli import main

    earlier = tmp_path / "earlier.json"
    assert main(["eval", str(SUITE), "--oracle", "-q", "--json", str(earlier), "--task", "music/play_song",
                 "--task", "clock/add_alarm"]) == 0
    data = json.loads(earlier.read_text())
    [song] = [t for t in data["tasks"] if t["id"] == "music/play_song"]
    song["script"] = song["script"].replace("Lanterns", "Low Tide")  # another song: the checks fail
    earlier.write_text(json.dumps(data))
    again = tmp_path / "again.json"
    assert main(["eval", str(SUITE), "--scripts-from", str(earlier), "-q", "--json", str(again)]) == 0
    report = json.loads(again.read_text())
    verdicts = {t["id"]: t["verdict"] for t in report["tasks"]}
    assert verdicts == {"music/play_song": "fail", "clock/add_alarm": "pass"}
    assert report["source"]["settings"] == {"source": "scripts-from", "report": str(earlier), "report_source": "oracle"}
    assert report["source"]["name"] == "oracle (scripts of earlier.json)"  # not "oracle": not trusted
    capsys.readouterr()
    # a report none of whose tasks is selected is a usage error
    assert main(["eval", str(SUITE), "--scripts-from", str(earlier), "--app", "notes"]) == 2
    assert "holds no script of a selected task" in capsys.readouterr().err
