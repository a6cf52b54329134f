"""``run_flow``: one script runs another with arguments, checked against the caller's document,
under the caller's budgets and sandbox, its path kept inside the script's folder, its errors
naming both files; ``tapir run``, ``check``, ``test``, the REPL and the language service."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tapir.core.errors import AssertionFailed, BudgetExceeded, ScriptError
from tapir.docgen.symbols import load_symbols
from tapir.dsl.budget import Budgets
from tapir.dsl.checker import check_source
from tapir.dsl.interpreter import run_script
from tapir.dsl.isolation import isolation_available, run_script_isolated
from tapir.dsl.symbols import SymbolTable
from tapir.runner.collect import collect

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
GOLDEN = Path(__file__).parent / "golden"
MUSIC = SAMPLES / "music" / "music.yaml"


@pytest.fixture(scope="module")
def symbols() -> SymbolTable:
    return load_symbols(GOLDEN / "example_app.yaml")


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _shown(path: Path) -> str:
    """How messages name a flow given by its absolute path: from the working folder when inside it."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def _check(root: Path, name: str, symbols: SymbolTable | None) -> list[tuple[int, str, str]]:
    path = root / name
    return [(d.span.line, d.code, d.message) for d in check_source(path.read_text(), symbols, str(path))]


# -- the checker -------------------------------------------------------------------------------------------


def test_the_checker_checks_the_arguments_against_the_params_the_flow_reads(tmp_path: Path,
                                                                            symbols: SymbolTable) -> None:
    _tree(tmp_path, {
        "_flows/open.tap": "title = param('title')\nsort = param('sort', default='Title')\n"
                           "$home_screen__songs_button.tap()\n",
        "ok.tap": "run_flow('_flows/open.tap', title='Lanterns')\nrun_flow('_flows/open.tap', title=3, sort='x')\n",
        "bad.tap": "run_flow('_flows/open.tap', titel='Lanterns')\nrun_flow('_flows/open.tap', title=[1])\n",
    })
    assert _check(tmp_path, "ok.tap", symbols) == []
    shown = _shown(tmp_path / "_flows" / "open.tap")
    assert _check(tmp_path, "bad.tap", symbols) == [
        (1, "arg-count", f"the flow {shown} reads no parameter 'titel'; did you mean 'title'? (it reads: sort, title)"),
        (1, "arg-count", f"the flow {shown} needs the argument 'title' (it reads param('title') without a default)"),
        (2, "arg-type", "run_flow(): argument 'title' must be text or a number (the flow reads it with param()), "
                        "not a list"),
    ]


def test_the_flow_is_checked_against_the_callers_document(tmp_path: Path, symbols: SymbolTable) -> None:
    _tree(tmp_path, {
        "flows/broken.tap": "# a flow with two mistakes\n$home_screen__song_button.tap()\nx = 1 + 'a'\n",
        "main.tap": "print('start')\nrun_flow('flows/broken.tap')\n",
    })
    shown = _shown(tmp_path / "flows" / "broken.tap")
    found = check_source((tmp_path / "main.tap").read_text(), symbols, str(tmp_path / "main.tap"))
    assert [(d.span.line, d.span.column, d.code) for d in found] == [(2, 1, "flow-error"), (2, 1, "flow-error")]
    assert found[0].message.startswith(f"in the flow {shown}:2:1: $home_screen__song_button is not an element")
    assert found[1].message == f"in the flow {shown}:3:5: unsupported operand types for +: an int and a str " \
                               "[operand-type]"


def test_flow_paths_stay_in_the_scripts_folder(tmp_path: Path) -> None:
    outside = tmp_path / "secret.tap"
    outside.write_text("print('outside')\n")
    root = _tree(tmp_path / "project", {
        "main.tap": "\n".join(["run_flow('../secret.tap')", "run_flow('/etc/passwd')", "run_flow('notes.txt')",
                               "run_flow('missing.tap')", "run_flow('link.tap')", "run_flow('sub/../ok.tap')"]) + "\n",
        "ok.tap": "pass\n",
    })
    (root / "link.tap").symlink_to(outside)
    codes = _check(root, "main.tap", None)
    assert [(line, code) for line, code, _ in codes] == [(1, "flow-path"), (2, "flow-path"), (3, "flow-path"),
                                                         (4, "flow-path"), (5, "flow-path")]
    assert "is outside the script's folder" in codes[0][2] and "is outside" in codes[4][2]
    assert "absolute path" in codes[1][2] and "not a .tap script" in codes[2][2] and "no such flow" in codes[3][2]


def test_a_flow_that_runs_itself_is_checked_once(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.tap": "run_flow('b.tap')\n", "b.tap": "run_flow('a.tap')\nprint(nope)\n"})
    found = _check(tmp_path, "a.tap", None)
    assert [(line, code) for line, code, _ in found] == [(1, "flow-error")]
    assert "b.tap:2:7: unknown name 'nope'" in found[0][2]


# -- running -----------------------------------------------------------------------------------------------


def _run(root: Path, name: str, **kw: object) -> tuple[list[str], object]:
    path = root / name
    result = run_script(path.read_text(), output=None, filename=str(path), **kw)  # type: ignore[arg-type]
    return list(result.printed), result.error


def test_a_flow_runs_with_its_arguments_in_globals_of_its_own(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "_greet.tap": "who = param('who')\nprint('hello', who, param('times', default='1'))\nprint(secret_of_caller)\n",
        "main.tap": "secret_of_caller = 1\nrun_flow('_greet.tap', who='ada', times=2)\n",
        "ok.tap": "run_flow('_plain.tap', who=True)\nprint('after')\n",
        "_plain.tap": "print(param('who'))\n",
    })
    printed, error = _run(tmp_path, "main.tap")
    assert printed == ["hello ada 2"]
    # the caller's variables are not the flow's
    assert isinstance(error, ScriptError) and "secret_of_caller" in error.message
    assert _run(tmp_path, "ok.tap") == (["True", "after"], None)


def test_an_error_in_a_flow_names_the_flow_line_and_the_call_site(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "flows/check.tap": "t = param('title')\nassert t == 'Lanterns', f'got {t}'\n",
        "main.tap": "print('before')\n\nrun_flow('flows/check.tap', title='Other')\n",
    })
    _, error = _run(tmp_path, "main.tap")
    assert isinstance(error, AssertionFailed)
    lines = error.render().splitlines()
    flow, main = tmp_path / "flows" / "check.tap", tmp_path / "main.tap"
    assert lines[0] == f"{flow}:2:1: AssertionFailed: assertion failed: got Other"
    assert lines[1].strip() == "assert t == 'Lanterns', f'got {t}'"
    assert lines[-1] == (f"  hint: in the flow {flow}, run from {main}:3:1: "
                         "run_flow('flows/check.tap', title='Other')")


def test_flows_share_the_callers_budgets(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "_count.tap": "i = 0\nwhile i < 120:\n    i += 1\n",
        "main.tap": "i = 0\nwhile i < 120:\n    i += 1\nrun_flow('_count.tap')\n",
    })
    # each loop alone fits in the budget; together they do not: the flow's steps are the caller's
    alone = run_script((tmp_path / "_count.tap").read_text(), output=None, budgets=Budgets(max_steps=1500))
    assert alone.error is None
    _, error = _run(tmp_path, "main.tap", budgets=Budgets(max_steps=1500))
    assert isinstance(error, BudgetExceeded) and error.filename == str(tmp_path / "_count.tap")


def test_recursion_is_bounded_and_computed_paths_are_confined(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "_again.tap": "n = int(param('n'))\nrun_flow('_again.tap', n=n + 1)\n",
        "main.tap": "run_flow('_again.tap', n=0)\n",
        "escape.tap": "up = '..'\nrun_flow(up + '/x.tap')\n",
    })
    _, error = _run(tmp_path, "main.tap")
    assert isinstance(error, ScriptError) and "flows run flows more than 10 deep" in error.message
    assert error.hint is not None and "(x9)" in error.hint
    _, error = _run(tmp_path, "escape.tap")
    assert isinstance(error, ScriptError) and "outside the script's folder" in error.message
    assert error.span is not None and error.span.line == 2


@pytest.mark.skipif(not isolation_available(), reason="no child processes here")
def test_the_flows_file_survives_the_isolated_run(tmp_path: Path) -> None:
    _tree(tmp_path, {"_fail.tap": "x = 1\nprint(undefined_name)\n", "main.tap": "run_flow('_fail.tap')\n"})
    main = tmp_path / "main.tap"
    result = run_script_isolated(main.read_text(), filename=str(main), output=None)
    assert result.error is not None and result.error.filename == str(tmp_path / "_fail.tap")
    assert result.error.render().splitlines()[1].strip() == "print(undefined_name)"


# -- the front ends ----------------------------------------------------------------------------------------


def test_tapir_test_does_not_collect_flows(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.tap": "pass\n", "_login.tap": "pass\n", "_flows/x.tap": "pass\n", "sub/b.tap": "pass\n"})
    assert [p.relative_to(tmp_path).as_posix() for p in collect([tmp_path])] == ["a.tap", "sub/b.tap"]
    assert collect([tmp_path / "_login.tap"]) == [tmp_path / "_login.tap"]  # named alone, it runs


def test_the_language_service_reports_the_flows_problems(tmp_path: Path) -> None:
    from tapir.service import Workspace

    _tree(tmp_path, {"_f.tap": "print(param('a'))\n", "main.tap": "run_flow('_f.tap', b='1')\n"})
    result = Workspace().check(str(tmp_path / "main.tap"))
    assert [d.code for d in result.errors] == ["arg-count", "arg-count"]


def test_tapir_run_and_test_with_a_shared_flow_on_the_simulator(tmp_path: Path, adb_port: int,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from xml.etree import ElementTree

    from tapir.cli import main

    _tree(tmp_path, {
        "_flows/play.tap": f"# doc: {MUSIC}\ntitle = param('title')\n$songs_screen__song_list.match(title).tap()\n"
                           "assert $songs_screen__now_playing_title.get_text() == title\n",
        "two.tap": f"# doc: {MUSIC}\nrun_flow('_flows/play.tap', title='Lanterns')\n"
                   "run_flow('_flows/play.tap', title='Prism')\nprint('played two')\n",
        "wrong.tap": f"# doc: {MUSIC}\nrun_flow('_flows/play.tap', titel='Prism')\n",
    })
    assert main(["check", str(tmp_path / "two.tap")]) == 0
    assert main(["run", str(tmp_path / "two.tap"), "--device", "sim:music"]) == 0
    assert capsys.readouterr().out.strip().endswith("played two")
    assert main(["run", str(tmp_path / "wrong.tap"), "--device", "sim:music"]) == 1
    assert "reads no parameter 'titel'; did you mean 'title'?" in capsys.readouterr().err
    junit = tmp_path / "r.xml"
    assert main(["test", str(tmp_path), "--device", "sim:music", "--junit", str(junit)]) == 1
    report = ElementTree.parse(junit).getroot()
    assert (report.get("tests"), report.get("failures"), report.get("errors")) == ("2", "0", "1")


def test_the_repl_loads_scripts_with_flows_from_two_folders(tmp_path: Path) -> None:
    """`:load a/main.tap` then `:load b/main.tap`: each finds its flows beside it (checked and run),
    and the first one's folder does not confine the second's."""
    import io

    from tapir.repl import ReplSession

    _tree(tmp_path, {"a/main.tap": "run_flow('_hi.tap', who='a')\n", "a/_hi.tap": "print('hi ' + param('who'))\n",
                     "b/main.tap": "run_flow('_hi.tap', who='b')\n", "b/_hi.tap": "print('hello ' + param('who'))\n"})
    out, err = io.StringIO(), io.StringIO()
    session = ReplSession(out=out, err=err, cwd=tmp_path)
    try:
        for name in ("a/main.tap", "b/main.tap"):
            assert session.handle(f":load {tmp_path / name}"), err.getvalue()
    finally:
        session.close()
    assert [line for line in out.getvalue().splitlines() if line.startswith("h")] == ["hi a", "hello b"]
