"""The REPL session without a device: one environment across inputs, values echoed, errors shown
as the command line shows them, checks in the context of the session, meta commands, :save and
:load, interrupts, completion, highlighting, the line-by-line loop and the history file.

Device behaviour (tapping through an app, :screen, Ctrl-C between device commands) is in
tests/test_repl_device.py; the REPL in a real terminal in tests/test_repl_tmux.py.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tapir.core.errors import Interrupted
from tapir.dsl.budget import Budgets
from tapir.repl import ReplSession, run_lines
from tapir.repl.context import preamble
from tapir.repl.highlight import fragments
from tapir.repl.history import history_path, open_history
from tapir.repl.interrupts import GuardedDevice, Interrupts
from tapir.repl.transcript import Transcript
from tapir.service import CompletionKind, Workspace

REPO = Path(__file__).resolve().parent.parent
MUSIC_DOC = REPO / "samples" / "music" / "music.yaml"


class Repl:
    """A session with its stdout and stderr captured, one input at a time."""

    def __init__(self, tmp_path: Path, **kwargs: object) -> None:
        self.out, self.err = io.StringIO(), io.StringIO()
        self.session = ReplSession(out=self.out, err=self.err, cwd=tmp_path, **kwargs)  # type: ignore[arg-type]

    def __call__(self, text: str) -> tuple[bool, str, str]:
        """Run ``text``; (ok, what it printed to stdout, to stderr)."""
        o, e = len(self.out.getvalue()), len(self.err.getvalue())
        ok = self.session.handle(text)
        return ok, self.out.getvalue()[o:], self.err.getvalue()[e:]


@pytest.fixture
def repl(tmp_path: Path) -> Repl:
    r = Repl(tmp_path)
    yield r
    r.session.close()


@pytest.fixture
def music_repl(tmp_path: Path) -> Repl:
    """A session with the music document but no device."""
    r = Repl(tmp_path, document=MUSIC_DOC)
    yield r
    r.session.close()


# -- values, one environment, errors ----------------------------------------------------------------------


def test_expression_values_are_echoed_and_none_is_not(repl: Repl) -> None:
    assert repl("1 + 2") == (True, "3\n", "")
    assert repl("'tap' * 2") == (True, "'taptap'\n", "")
    assert repl("[1, 'a', None]") == (True, "[1, 'a', None]\n", "")
    assert repl("print('hi')") == (True, "hi\n", "")  # print's own line, and its None is not echoed
    assert repl("x = 5") == (True, "", "")
    assert repl("'a docstring-like string'") == (True, "'a docstring-like string'\n", "")


def test_each_expression_statement_of_an_input_is_echoed(repl: Repl) -> None:
    assert repl("1; 2; x = 3; x") == (True, "1\n2\n3\n", "")


def test_one_environment_lasts_the_session(repl: Repl) -> None:
    assert repl("def double(n):\n    return n * 2\n")[0]
    assert repl("items = [1, 2, 3]")[0]
    assert repl("items.append(double(len(items)))")[0]
    assert repl("items") == (True, "[1, 2, 3, 6]\n", "")
    shown = [line.split(None, 2) for line in repl(":vars")[1].splitlines()]
    assert shown[0][:2] == ["double", "="] and shown[1] == ["items", "=", "[1, 2, 3, 6]"]


def test_a_runtime_error_is_shown_like_the_command_line_and_the_session_goes_on(repl: Repl) -> None:
    assert repl("total = 10")[0]
    ok, out, err = repl("a = 1; b = total / 0; c = 3")
    assert not ok and out == ""
    assert err == ("<repl>:1:12: ScriptError: division by zero\n"
                   "    a = 1; b = total / 0; c = 3\n"
                   "               ^^^^^^^^^\n")
    # the statement before the error ran, the one after it did not
    assert repl("a")[1] == "1\n"
    ok, _, err = repl("c")
    assert not ok and "unknown name 'c'" in err
    assert repl("total + a") == (True, "11\n", "")
    assert repl.session.failures == 2


def test_errors_in_a_multi_line_input_point_at_its_own_line(repl: Repl) -> None:
    ok, _, err = repl("for i in range(3):\n    print(i)\n    assert i < 1, 'too far'\n")
    assert not ok
    assert err.startswith("<repl>:3:5: AssertionFailed: assertion failed: too far\n        assert i < 1, 'too far'\n")


def test_input_with_check_errors_runs_nothing(repl: Repl) -> None:
    ok, out, err = repl("print('first')\nnope(1)\nimport os")
    assert not ok and out == ""
    assert "<repl>:2:1: error[unknown-function]: unknown function 'nope'" in err
    assert "<repl>:3:1: error[unsupported]: 'import' is not allowed in Tapir scripts" in err
    assert "    ^^^^^^" in err


def test_a_syntax_error_is_shown_with_a_caret(repl: Repl) -> None:
    ok, _, err = repl("x = = 2")
    assert not ok
    assert err.splitlines()[:3] == ["<repl>:1:5: error[syntax]: expected an expression, found '='",
                                    "    x = = 2", "        ^"]


def test_warnings_are_shown_and_the_input_runs(repl: Repl) -> None:
    ok, out, err = repl("len = 3\nlen")
    assert ok and out == "3\n"
    assert "warning[shadows-builtin]" in err


def test_names_a_stopped_statement_bound_may_be_used_later(repl: Repl) -> None:
    ok, _, err = repl("for i in range(5):\n    last = i\n    assert i < 2\n")
    assert not ok and "AssertionFailed" in err
    # 'last' is not in any statement that finished, but the environment has it
    assert repl("last") == (True, "2\n", "")


def test_budgets_apply_to_each_statement(tmp_path: Path) -> None:
    r = Repl(tmp_path, budgets=Budgets(max_steps=20_000))
    try:
        assert r("n = 0\nwhile n < 1000:\n    n += 1\n")[0]  # within one statement's budget
        ok, _, err = r("while True:\n    n += 1\n")
        assert not ok and "BudgetExceeded: steps budget exceeded: the script ran more than 20,000 steps" in err
        assert r("stop = n + 1000")[0]
        assert r("while n < stop:\n    n += 1\n")[0]  # a fresh budget for each input
    finally:
        r.session.close()


def test_a_ui_call_without_a_device_says_what_to_do(music_repl: Repl) -> None:
    ok, _, err = music_repl("$songs_screen__song_count.get_text()")
    assert not ok
    assert "DeviceError: this session has no device" in err
    assert "--device" in err


def test_an_element_without_a_document_is_refused_with_the_repl_hint(repl: Repl) -> None:
    ok, _, err = repl("$songs_screen__song_list.tap()")
    assert not ok and "error[no-document]" in err
    assert "hint: load one with :document APP.yaml" in err


def test_unknown_elements_are_refused_before_running_with_did_you_mean(music_repl: Repl) -> None:
    ok, out, err = music_repl("print('x')\n$songs_screen__song_lst.tap()")
    assert not ok and out == ""
    assert "<repl>:2:1: error[unknown-element]" in err and "did you mean $songs_screen__song_list?" in err


# -- interrupts ----------------------------------------------------------------------------------------------


def test_an_interrupt_stops_a_loop_at_its_line_and_the_session_goes_on(tmp_path: Path) -> None:
    r = Repl(tmp_path, budgets=Budgets(max_steps=10**9, timeout_s=60))
    try:
        timer = threading.Timer(0.3, r.session.interrupts.request)
        timer.start()
        started = time.monotonic()
        ok, _, err = r("n = 0\nwhile True:\n    n += 1\n")
        assert time.monotonic() - started < 10
        assert not ok
        # stopped at the loop's next step: its test or its body
        assert re.match(r"<repl>:(2:1: Interrupted: stopped by Ctrl-C\n    while True:\n"
                        r"|3:5: Interrupted: stopped by Ctrl-C\n        n \+= 1\n)", err), err
        assert r("n > 0") == (True, "True\n", "")
        assert [s.text for s in r.session.transcript.statements] == ["n = 0", "n > 0"]
    finally:
        r.session.close()


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix", reason="needs POSIX signals")
def test_a_real_sigint_is_caught_while_a_statement_runs_and_restored_after(tmp_path: Path) -> None:
    r = Repl(tmp_path, budgets=Budgets(max_steps=10**9, timeout_s=60))
    before = signal.getsignal(signal.SIGINT)
    try:
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        ok, _, err = r("k = 0\nwhile True:\n    k += 1\n")
        assert not ok and "Interrupted: stopped by Ctrl-C" in err
        assert signal.getsignal(signal.SIGINT) is before
        assert r("k > 0")[1] == "True\n"
    finally:
        r.session.close()


class _SlowDevice:
    """A device whose tap takes a while, during which Ctrl-C is pressed."""

    serial = "fake-1"

    def __init__(self, interrupts: Interrupts) -> None:
        self.interrupts = interrupts
        self.done: list[str] = []

    def tap(self, x: int, y: int) -> None:
        self.interrupts.request()  # pressed while the command is under way
        time.sleep(0.05)
        self.done.append(f"tap {x} {y}")

    def dump_hierarchy(self) -> str:
        self.done.append("dump")
        return "<hierarchy/>"


def test_the_guarded_device_finishes_the_command_under_way_and_sends_no_other() -> None:
    interrupts = Interrupts()
    slow = _SlowDevice(interrupts)
    device = GuardedDevice(slow, interrupts.check)
    assert device.serial == "fake-1"
    with interrupts.armed():
        device.tap(10, 20)  # Ctrl-C came during the tap: the tap still completes
        with pytest.raises(Interrupted, match="stopped by Ctrl-C"):
            device.dump_hierarchy()  # ...and the next command is not sent
    assert slow.done == ["tap 10 20"]
    device.dump_hierarchy()  # not armed any more: commands go through
    assert slow.done == ["tap 10 20", "dump"]


# -- :save and :load -------------------------------------------------------------------------------------


def test_save_writes_the_statements_that_ran_and_the_script_runs(repl: Repl, tmp_path: Path) -> None:
    repl("def square(n):\n    return n * n\n")
    repl("values = [square(i) for i in range(4)]")
    repl("values.append(nope)")  # refused by the check: not saved
    repl("broken = values[10]")  # failed at run time: not saved
    repl("for v in values:\n    print(v)\n")
    ok, out, err = repl(":save flow.tap")
    assert ok, err
    assert out == "saved 3 statements to flow.tap (tapir check: clean)\n"
    text = (tmp_path / "flow.tap").read_text()
    assert "nope" not in text and "broken" not in text
    assert text.splitlines()[0].startswith("# Saved from a tapir repl session")
    assert Workspace().check(tmp_path / "flow.tap").errors == ()
    run = subprocess.run([sys.executable, "-m", "tapir.cli", "run", str(tmp_path / "flow.tap")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["0", "1", "4", "9"]


def test_save_names_the_document_relative_to_the_script(music_repl: Repl, tmp_path: Path) -> None:
    music_repl("x = 1")
    (tmp_path / "flows").mkdir()
    assert music_repl(":save flows/x.tap")[0]
    first = (tmp_path / "flows" / "x.tap").read_text().splitlines()[0]
    assert first == f"# doc: {Path(os.path.relpath(MUSIC_DOC, tmp_path / 'flows')).as_posix()}"
    assert Workspace().check(tmp_path / "flows" / "x.tap").document.path.resolve() == MUSIC_DOC.resolve()


def test_save_does_not_replace_a_file_unless_asked(repl: Repl, tmp_path: Path) -> None:
    (tmp_path / "keep.tap").write_text("print('mine')\n")
    repl("x = 1")
    ok, _, err = repl(":save keep.tap")
    assert not ok and "keep.tap exists; :save! keep.tap replaces it" in err
    assert (tmp_path / "keep.tap").read_text() == "print('mine')\n"
    assert repl(":save! keep.tap")[0]
    assert "x = 1" in (tmp_path / "keep.tap").read_text()


def test_save_with_nothing_run_says_so(repl: Repl) -> None:
    ok, _, err = repl(":save a.tap")
    assert not ok and "nothing to save" in err


def test_load_runs_a_script_into_the_session(repl: Repl, tmp_path: Path) -> None:
    (tmp_path / "lib.tap").write_text('"""Helpers."""\n\ndef greet(name):\n    return "hello " + name\n\n'
                                      'print(greet("lib"))\nloaded = True\n')
    ok, out, err = repl(":load lib.tap")
    assert ok, err
    assert out == "hello lib\nlib.tap: 2 statements ran\n".replace("2 statements", "3 statements")
    assert repl("greet('repl')") == (True, "'hello repl'\n", "")
    assert [s.origin for s in repl.session.transcript.statements] == ["lib.tap"] * 3 + ["<repl>"]


def test_load_shows_errors_with_the_file_name_and_line(repl: Repl, tmp_path: Path) -> None:
    (tmp_path / "bad.tap").write_text("a = 1\nb = a / 0\nc = 2\n")
    ok, out, err = repl(":load bad.tap")
    assert not ok
    assert err.startswith("bad.tap:2:5: ScriptError: division by zero\n    b = a / 0\n")
    assert "bad.tap: 1 statement ran, then it failed" in out
    assert repl("a")[1] == "1\n"


def test_load_takes_the_scripts_document_when_the_session_has_none(repl: Repl, tmp_path: Path) -> None:
    script = tmp_path / "s.tap"
    script.write_text(f"# doc: {MUSIC_DOC}\nx = 1\n")
    ok, out, _ = repl(":load s.tap")
    assert ok and "document:" in out
    assert repl.session.document_path == MUSIC_DOC.resolve()


def test_load_refuses_a_script_written_for_another_document(music_repl: Repl, tmp_path: Path) -> None:
    other = REPO / "samples" / "notes" / "notes.yaml"
    (tmp_path / "n.tap").write_text(f"# doc: {other}\nx = 1\n")
    ok, _, err = music_repl(":load n.tap")
    assert not ok and "is written against" in err and ":document FILE switches" in err


def test_transcript_keeps_statements_as_typed_and_the_last_def_of_each_name() -> None:
    t = Transcript()
    t.add("x = 1", "<repl>")
    t.add("for i in range(2):\n    print(i)", "<repl>")
    t.add("def f(a):\n    return a", "<repl>")
    t.add("def f(a, b):\n    return b", "lib.tap")
    assert t.script("# doc: a.yaml", "saved", t.statements[:2]) == \
        "# doc: a.yaml\n# saved\nx = 1\nfor i in range(2):\n    print(i)\n"
    assert t.lines(None, None)[1] == [(1, 1), (2, 3), (4, 5), (6, 7)]
    assert t.defs == {"f": "def f(a, b):\n    return b"}


def test_the_preamble_writes_each_name_once_with_its_type() -> None:
    from tapir.dsl.values import ElementHandle, Index, Match, ScriptFunction

    def fn(name: str, params: tuple[str, ...], defaults: tuple[object, ...] = ()) -> ScriptFunction:
        return ScriptFunction(name, params, defaults, lambda args, span: None)

    env = {
        "song": ElementHandle("songs_screen__song_list", (Match("Lanterns"),)),
        "third": ElementHandle("songs_screen__song_list", (Index(2),)),
        "n": 3, "ratio": 0.5, "name": "x" * 1000, "flag": True, "nothing": None,
        "titles": ["a", "b"], "pairs": {"k": [1]}, "point": (1, "a"), "empty": [],
        "helper": fn("helper", ("a", "b"), (1,)), "shout": fn("shout", ("s",)),
    }
    text = preamble(env, {"shout": "def shout(s):\n    \"\"\"Loud.\"\"\"\n    return s.upper()"})
    assert text.splitlines() == [
        "song = $songs_screen__song_list.match('Lanterns')",
        "third = $songs_screen__song_list[2]",
        "n = 0", "ratio = 0.0", 'name = ""', "flag = True", "nothing = None",
        'titles = [""]', 'pairs = {"": [0]}', 'point = (0, "")', "empty = []",
        "def helper(a, b=None):", "    pass",
        "def shout(s):", '    """Loud."""', "    return s.upper()",
    ]
    assert Workspace().check(Path("x.tap"), "# doc: " + str(MUSIC_DOC) + "\n" + text).errors == ()


# -- meta commands ---------------------------------------------------------------------------------------


def test_help_lists_every_command(repl: Repl) -> None:
    from tapir.repl.meta import COMMANDS

    ok, out, _ = repl(":help")
    assert ok
    for name in ("screen", "tree", "find", "doc", "trace", "save", "load", "help"):
        assert f":{name}" in out
    assert set(COMMANDS) >= {"screen", "tree", "find", "doc", "trace", "save", "load", "help"}
    assert repl(":help find")[1].startswith(":find XPATH\n")


def test_an_unknown_command_suggests_one(repl: Repl) -> None:
    ok, _, err = repl(":scren")
    assert not ok and "unknown command :scren; did you mean :screen?" in err


def test_doc_shows_an_elements_hover_text_and_a_methods_docs(music_repl: Repl) -> None:
    ok, out, _ = music_repl(":doc $sort_dialog__sort_options")
    assert ok
    assert "$sort_dialog__sort_options" in out and "Title, Artist, Duration" in out
    ok, out, _ = music_repl(":doc tap")
    assert ok and "Tap the element" in out
    ok, _, err = music_repl(":doc $nothing__here")
    assert not ok and "the document has no element $nothing__here" in err
    ok, _, err = music_repl(":doc $sort_dialog__sort_option")
    assert not ok and "did you mean $sort_dialog__sort_options?" in err


def test_screen_without_a_device_says_so(music_repl: Repl) -> None:
    ok, _, err = music_repl(":screen")
    assert not ok and "this session has no device" in err


def test_trace_before_any_call(repl: Repl) -> None:
    assert repl(":trace") == (True, "no device calls yet\n", "")


def test_document_shows_and_switches(repl: Repl) -> None:
    assert repl(":document")[1].startswith("no document")
    ok, out, _ = repl(f":document {MUSIC_DOC}")
    assert ok and "org.tapir.music" in out and "screens" in out
    assert repl.session.symbols is not None and repl.session.symbols.element("songs_screen__song_list")


def test_quit_ends_the_line_loop(repl: Repl) -> None:
    code = run_lines(repl.session, io.StringIO("x = 1\n:quit\nprint('never')\n"))
    assert code == 0 and "never" not in repl.out.getvalue()


# -- completion and highlighting ------------------------------------------------------------------------


def test_completion_offers_elements_methods_and_options(music_repl: Repl) -> None:
    s = music_repl.session
    labels = [i.label for i in s.complete("$sort_dialog__so", 16)]
    assert labels == ["$sort_dialog__sort_options"]
    items = s.complete('$sort_dialog__sort_options.match("D', 35)
    assert [i.label for i in items] == ["Duration"]
    assert items[0].replace is not None and items[0].replace.offset == 34  # replaces the 'D' typed
    assert "tap" in [i.label for i in s.complete("$songs_screen__search_button.", 29)]


def test_completion_knows_the_variables_of_the_session_and_their_types(music_repl: Repl) -> None:
    music_repl("greeting = 'hello'")
    music_repl("def shout(s):\n    return s.upper()\n")
    names = {i.label: i for i in music_repl.session.complete("sh", 2)}
    assert names["shout"].kind == CompletionKind.FUNCTION
    assert "upper" in [i.label for i in music_repl.session.complete("greeting.up", 11)]
    # a name only a stopped statement bound is still offered
    music_repl("for j in range(3):\n    partial = j\n    assert j < 1\n")
    assert "partial" in [i.label for i in music_repl.session.complete("par", 3)]


def test_highlighting_colours_tokens_and_marks_unknown_elements(music_repl: Repl) -> None:
    symbols = music_repl.session.symbols
    [line] = fragments('x = $songs_screen__song_lst.tap("a")  # c', symbols)
    styles = {text: style for style, text in line}
    assert styles["$songs_screen__song_lst"] == "class:element.unknown"
    assert styles['"a"'] == "class:string" and styles["# c"] == "class:comment"
    [line] = fragments("$songs_screen__song_list.tap()", symbols)
    assert line[0] == ("class:element", "$songs_screen__song_list")
    lines = fragments('for i in range(3):\n    print("unfinished', None)
    assert lines[0][0] == ("class:keyword", "for") and ("class:builtin", "range") in lines[0]
    assert lines[1][-1] == ("class:string", '"unfinished')
    assert fragments(":screen now", None) == [[("class:meta", ":screen"), ("", " now")]]


# -- the line-by-line loop (no terminal) --------------------------------------------------------------------


def test_lines_run_blocks_without_blank_lines_and_go_on_after_errors(repl: Repl) -> None:
    script = ("total = 0\n"
              "for i in range(4):\n"
              "    total += i\n"
              "print(total)\n"
              "if total > 100:\n"
              "    print('big')\n"
              "else:\n"
              "    print('small')\n"
              "oops = 1 / 0\n"
              "print('still here')\n")
    code = run_lines(repl.session, io.StringIO(script))
    assert code == 1  # an input failed
    assert repl.out.getvalue() == "6\nsmall\nstill here\n"
    assert "<repl>:1:8: ScriptError: division by zero" in repl.err.getvalue()


def test_lines_exit_zero_when_everything_ran(repl: Repl) -> None:
    assert run_lines(repl.session, io.StringIO("x = [1,\n     2]\nx\n\n\n")) == 0
    assert repl.out.getvalue() == "[1, 2]\n"


def test_repl_command_reads_piped_input(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"))
    run = subprocess.run([sys.executable, "-m", "tapir.cli", "repl"], input="x = 2\nx * 21\nprint(y)\n",
                         capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert run.returncode == 1
    assert run.stdout == "42\n"
    assert run.stderr.startswith("<repl>:1:7: error[unknown-name]: unknown name 'y'")
    assert not (tmp_path / "state").exists()  # piped input keeps no history


def test_repl_command_refuses_bad_flags(tmp_path: Path) -> None:
    from tapir.cli import main

    assert main(["repl", "--doc", str(tmp_path / "missing.yaml")]) == 2
    assert main(["repl", "--max-actions", "0"]) == 2
    assert main(["repl", "--device", "sim:nosuchapp"]) == 2


# -- history --------------------------------------------------------------------------------------------------


def test_history_path_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TAPIR_HISTORY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert history_path() == tmp_path / "state" / "tapir" / "history"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert history_path() == tmp_path / ".local" / "state" / "tapir" / "history"
    monkeypatch.setenv("TAPIR_HISTORY", str(tmp_path / "h"))
    assert history_path() == tmp_path / "h"


def test_an_unwritable_history_falls_back_to_memory_and_says_why(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    history, problem = open_history(blocker / "sub" / "history")
    assert problem is not None and "history is not kept" in problem
    assert list(history.load_history_strings()) == []


def test_save_leaves_out_what_needs_a_name_only_a_stopped_statement_bound(repl: Repl, tmp_path: Path) -> None:
    repl("base = 10")
    repl("for i in range(5):\n    last = i\n    assert i < 2\n")  # stopped: 'last' is set, the loop not saved
    assert repl("twice = last * 2")[0]  # runs in the session...
    assert repl("total = twice + base")[0]  # ... and so does what builds on it
    assert repl("print(base)")[0]
    ok, out, err = repl(":save s.tap")
    assert ok, err
    assert out.splitlines() == [
        "saved 2 statements to s.tap (tapir check: clean)",
        "  left out: twice = last * 2  (unknown name 'last')",
        "  left out: total = twice + base  (unknown name 'twice')",
    ]
    assert Workspace().check(tmp_path / "s.tap").errors == ()


def test_an_interrupt_stops_a_loaded_script_at_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "spin.tap").write_text("n = 0\nwhile True:\n    n += 1\n")
    r = Repl(tmp_path, budgets=Budgets(max_steps=10**9, timeout_s=60))
    try:
        threading.Timer(0.3, r.session.interrupts.request).start()
        ok, out, err = r(":load spin.tap")
        assert not ok
        assert re.match(r"spin\.tap:(2:1|3:5): Interrupted: stopped by Ctrl-C", err), err
        assert "spin.tap: 1 statement ran, then it failed" in out
        assert r("n > 0") == (True, "True\n", "")
    finally:
        r.session.close()
