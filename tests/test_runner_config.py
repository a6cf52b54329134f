"""tapir.toml's [device], [budgets], [test] and [report] tables, read by `tapir run`, `tapir test` and
`tapir check` alike; and `tapir test` on scripts that need no device (checks, asserts, exit status,
tags, shards, reports written where the project says)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from junitparser import JUnitXml

from tapir.cli import main
from tapir.dsl.budget import Budgets
from tapir.service import ConfigError, load_config

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "tests" / "golden" / "example_app.yaml"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


FULL = """\
[device]
default = ["emulator-5554", "emulator-5556"]
jobs = 3

[budgets]
max_actions = 20
max_steps = 5000
timeout = 90

[test]
paths = ["flows", "smoke/*.tap"]
include = ["smoke"]
exclude = "slow"
retries = 1
reset = true

[report]
junit = "reports/junit.xml"
html = "reports/tapir.html"
artifacts = "out/artifacts"
"""


def test_every_table_is_read_with_paths_relative_to_the_file(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "tapir.toml", FULL))
    assert config.device.default == ("emulator-5554", "emulator-5556") and config.device.first == "emulator-5554"
    assert config.device.jobs == 3
    budgets = config.budgets.apply(Budgets())
    assert (budgets.max_actions, budgets.max_steps, budgets.timeout_s) == (20, 5000, 90.0)
    assert budgets.max_depth == Budgets().max_depth  # what the file does not set keeps its default
    assert config.test.paths == (tmp_path / "flows", tmp_path / "smoke/*.tap")
    assert (config.test.include, config.test.exclude, config.test.retries, config.test.reset) == (
        ("smoke",), ("slow",), 1, True)
    assert config.report.junit == tmp_path / "reports" / "junit.xml" and config.report.json is None
    assert config.report.artifacts == tmp_path / "out" / "artifacts"
    empty = load_config(write(tmp_path / "e", "tapir.toml", ""))
    assert empty.device.default == () and empty.budgets.apply(Budgets()) == Budgets() and empty.test.retries is None


def test_wrong_values_are_problems_with_their_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "tapir.toml", '[device]\ndefault = 3\njobs = 0\n\n[budgets]\ntimeout = "long"\n'
                 'max_steps = 1.5\n\n[test]\nretries = -1\nreset = "yes"\nshards = 2\n\n[report]\nhtml = 1\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    found = [(p.line, p.message.split(" must ")[0].split(" has ")[0]) for p in err.value.problems]
    assert found == [(2, "[device] default"), (3, "[device] jobs"), (6, "[budgets] timeout"),
                     (7, "[budgets] max_steps"), (10, "[test] retries"), (11, "[test] reset"), (12, "[test]"),
                     (15, "[report] html")]
    assert "known: exclude, include, params, paths, reset, retries" in err.value.problems[6].message


def test_tapir_check_reports_a_bad_setting_on_every_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "tapir.toml", "[budgets]\nmax_actions = 0\n")
    script = write(tmp_path, "s.tap", f"# doc: {DOC}\nx = 1\n")
    assert main(["check", str(script)]) == 1
    err = capsys.readouterr().err
    assert "error[config]: the project's tapir.toml is invalid" in err
    assert "max_actions must be a positive whole number, not 0\n    max_actions = 0\n    ^" in err


def test_tapir_run_takes_its_budgets_from_the_project_and_flags_win(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "tapir.toml", "[budgets]\nmax_steps = 200\n")
    script = write(tmp_path, "loop.tap", f"# doc: {DOC}\nn = 0\nwhile n < 1000:\n    n += 1\nprint(n)\n")
    assert main(["run", str(script)]) == 1
    assert "steps budget exceeded" in capsys.readouterr().err
    assert main(["run", str(script), "--max-steps", "100000"]) == 0
    assert capsys.readouterr().out == "1000\n"
    write(tmp_path, "tapir.toml", "[budgets]\nmax_steps = -1\n")
    assert main(["run", str(script)]) == 2  # a configuration error
    err = capsys.readouterr().err
    assert "tapir.toml is invalid" in err and "tapir.toml:2: error[config]: [budgets] max_steps" in err


def test_tapir_run_takes_its_device_from_the_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "tapir.toml", '[device]\ndefault = "sim:nosuchapp"\n')
    script = write(tmp_path, "s.tap", f"# doc: {DOC}\n$home_screen__songs_button.tap()\n")
    assert main(["run", str(script)]) == 2  # the device the project names is checked before running
    assert "nosuchapp" in capsys.readouterr().err


# -- tapir test without a device: scripts that make no UI call ----------------------------------------

PASSING = f"# doc: {DOC}\n# tags: smoke\nassert 1 + 1 == 2\nprint('fine')\n"
FAILING = f"# doc: {DOC}\n# tags: smoke, slow\nx = 2\nassert x == 3, f'x is {{x}}'\n"
REFUSED = f"# doc: {DOC}\n$home_screen__no_such_thing.tap()\n"
SKIPPED = f"# doc: {DOC}\n# skip: waiting for the new sort dialog\nassert False\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")  # never start a stray server on 5037
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "flows/a_pass.tap", PASSING)
    write(tmp_path, "flows/b_fail.tap", FAILING)
    write(tmp_path, "flows/c_refused.tap", REFUSED)
    write(tmp_path, "flows/d_skip.tap", SKIPPED)
    return tmp_path


def test_tapir_test_reports_every_outcome_and_exits_1_when_one_failed(project: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "flows", "--junit", "r/junit.xml", "--json", "r/run.json"]) == 1
    out = capsys.readouterr().out
    # the two that never reach a device are reported first
    assert "[1/4] ERROR flows/c_refused.tap\n" in out and "[2/4] SKIP  flows/d_skip.tap" in out
    assert "flows/c_refused.tap:2:1: error[unknown-element]" in out
    assert "PASS  flows/a_pass.tap" in out and "FAIL  flows/b_fail.tap" in out
    assert "flows/b_fail.tap:4:1: AssertionFailed: assertion failed: x is 2" in out
    assert "1 passed, 1 failed, 1 error, 1 skipped" in out
    xml = JUnitXml.fromfile(str(project / "r" / "junit.xml"))
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (4, 1, 1, 1)
    data = json.loads((project / "r" / "run.json").read_text())
    refused = next(s for s in data["scripts"] if s["script"] == "flows/c_refused.tap")
    [attempt] = refused["attempts"]
    assert (attempt["category"], attempt["kind"], attempt["line"], attempt["device"]) == ("check", "error", 2, None)
    # a failure without a device leaves its error and the script in the artifacts
    kept = project / "tapir-artifacts" / "flows__b_fail"
    assert "x is 2" in (kept / "error.txt").read_text() and (kept / "script.tap").read_text() == FAILING
    assert not (project / "tapir-artifacts" / "flows__a_pass").exists()


def test_tags_select_and_shards_split(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "flows", "--include", "smoke", "--exclude", "slow"]) == 0
    out = capsys.readouterr().out
    assert "PASS  flows/a_pass.tap" in out and "b_fail" not in out and "1 passed, 3 deselected" in out
    assert main(["test", "flows", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "flows/b_fail.tap  [smoke, slow]" in listed and "(skip: waiting for the new sort dialog)" in listed
    shards = []
    for i in range(2):
        assert main(["test", "flows", "--list", "--shard-index", str(i), "--shard-total", "2"]) == 0
        shards.append([line.split()[0] for line in capsys.readouterr().out.splitlines()[:-1]])
    assert sorted(shards[0] + shards[1]) == ["flows/a_pass.tap", "flows/b_fail.tap", "flows/c_refused.tap",
                                             "flows/d_skip.tap"] and len(shards[0]) == 2
    assert main(["test", "flows", "--include", "nothing"]) == 1
    assert "no script selected: 4 deselected by tags" in capsys.readouterr().err


def test_usage_errors_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "flows", "--shard-index", "2", "--shard-total", "2"]) == 2
    assert "--shard-index: must be from 0 to 1" in capsys.readouterr().err
    assert main(["test", "flows", "--shard-index", "0"]) == 2
    assert main(["test", "nope/"]) == 2
    assert main(["test", "flows", "--device", ""]) == 2
    assert main(["test", "flows", "--device", "sim:nosuchapp"]) == 2
    assert main(["test", "flows", "-j", "0"]) == 2
    assert main(["test", "flows", "--retries", "-1"]) == 2
    assert main(["test", "flows", "--html", "flows"]) == 2
    write(project, "tapir.toml", "[test]\nretries = true\n")
    assert main(["test", "flows"]) == 2
    assert "retries must be" in capsys.readouterr().err


def test_the_project_file_gives_paths_tags_and_report_paths(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "tapir.toml", '[test]\npaths = ["flows"]\nexclude = ["slow"]\n\n'
                                 '[report]\njunit = "reports/junit.xml"\nartifacts = "kept"\n')
    assert main(["test"]) == 1  # the refused script still fails the run
    xml = JUnitXml.fromfile(str(project / "reports" / "junit.xml"))
    assert xml.tests == 3 and xml.failures == 0 and xml.errors == 1
    assert f"wrote {project / 'reports' / 'junit.xml'}" in capsys.readouterr().out
    assert (project / "kept" / "flows__c_refused" / "error.txt").is_file() is False  # never ran: nothing to keep
    # a flag wins over the file; what the flags leave unset still comes from it (exclude = slow)
    assert main(["test", "--include", "smoke"]) == 0
    assert "1 passed, 3 deselected" in capsys.readouterr().out


# -- parameters: --param and [test.params] ------------------------------------------------------------

PARAMS = """\
[test.params]
user = "ada"
lang = "en"
retries = 3

[test.params."flows/admin/*.tap"]
user = "root"
"""


def test_params_are_read_for_every_script_and_per_glob_first_match_winning(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "tapir.toml", PARAMS + '\n[test.params."flows/**"]\nuser = "x"\n'
                                                                'lang = "fr"\n'))
    params = config.test.params
    assert params.for_script(tmp_path / "flows" / "a.tap") == {"user": "x", "lang": "fr", "retries": "3"}
    assert params.for_script(tmp_path / "flows" / "admin" / "b.tap") == {"user": "root", "lang": "fr",
                                                                         "retries": "3"}
    assert params.for_script(tmp_path / "elsewhere.tap") == {"user": "ada", "lang": "en", "retries": "3"}
    assert params.for_script(Path("/not/in/the/project.tap")) == {"user": "ada", "lang": "en", "retries": "3"}


def test_wrong_params_are_problems_with_their_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "tapir.toml", '[test]\nparams = 3\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert [(p.line, p.message) for p in err.value.problems] == [
        (2, '[test] params must be a table of NAME = "value" (and of "script glob" tables)')]
    path = write(tmp_path, "tapir.toml", '[test.params]\nok = "1"\nflag = true\n"2bad" = "x"\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert [(p.line, p.message.split(" must ")[0].split(" is not ")[0]) for p in err.value.problems] == [
        (3, "[test.params] flag"), (4, "[test.params] '2bad'")]


PARAM_SCRIPT = f"# doc: {DOC}\nprint(param('user') + ' ' + param('lang', default='?'))\n"


def test_tapir_test_passes_params_from_the_flags_over_the_project(project: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "tapir.toml", PARAMS)
    write(project, "p/who.tap", PARAM_SCRIPT + "assert param('user') == 'ada'\n")
    write(project, "flows/admin/who.tap", PARAM_SCRIPT + "assert param('user') == 'root'\n")
    assert main(["test", "p", "flows/admin", "-v"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "| ada en" in out and "| root en" in out
    # --param wins over the file, for every script
    assert main(["test", "p", "flows/admin", "-v", "--param", "user=eve", "--param", "lang=de"]) == 1
    out = capsys.readouterr().out
    assert "| eve de" in out and "assertion failed" in out and "0 passed, 2 failed" in out
    # without the file a parameter the script needs is a failure that says how to pass it
    (project / "tapir.toml").unlink()
    assert main(["test", "p"]) == 1
    assert "needs the parameter 'user', which was not given" in capsys.readouterr().out
    # a malformed --param is a usage error
    assert main(["test", "p", "--param", "user"]) == 2
    assert "--param: 'user': expected NAME=VALUE" in capsys.readouterr().err
