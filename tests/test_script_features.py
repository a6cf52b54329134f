"""Script features on the in-memory runtime: presence checks and waits, sleep and the time
budget, app control, screenshots, watchers and run parameters; the checker catching their misuse;
and the registry carrying them to completion, hover, prompts and page objects.

The same features on the simulator through real adb are in tests/test_script_features_e2e.py.
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tapir.core.errors import (
    ActionError,
    BudgetExceeded,
    ElementNotFound,
    ScreenNotReached,
    ScriptError,
    TapirError,
    UnknownElement,
    UsageError,
    WaitTimeout,
)
from tapir.core.watchers import Watcher
from tapir.dsl.api import Kind
from tapir.dsl.budget import Budgets
from tapir.dsl.checker import check_source
from tapir.dsl.fake_runtime import FakeElement, FakeItem, FakeRuntime
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.interpreter import RunResult, run_script
from tapir.dsl.registry import REGISTRY, Namespace


def notes(**kw: Any) -> FakeRuntime:
    """A small notes app: saving opens the note, and (by default) a rating prompt over it."""
    return FakeRuntime({
        "list__new": FakeElement(goes_to="edit"),
        "list__notes": FakeElement(Kind.LIST, items=[FakeItem("Milk"), FakeItem("Bike")]),
        "list__spinner": FakeElement(Kind.OTHER, vanish_at=3.0),
        "list__banner": FakeElement(Kind.TEXT, text="Synced", appear_at=4.0),
        "edit__save": FakeElement(goes_to="rate"),
        "note__body": FakeElement(Kind.TEXT, text="hello"),
        "rate__title": FakeElement(Kind.TEXT, text="Enjoying Notes?"),
        "rate__later": FakeElement(Kind.BUTTON, text="Not now"),
    }, screen="list", popups=frozenset({"rate"}), **kw)


def run(fake: FakeRuntime, src: str, **kw: Any) -> RunResult:
    return run_script(textwrap.dedent(src).lstrip("\n"), fake.factory(), output=None, symbols=fake.symbols(), **kw)


def ok(fake: FakeRuntime, src: str, **kw: Any) -> list[str]:
    r = run(fake, src, **kw)
    assert r.error is None, r.error.render()
    return list(r.printed)


def fails(fake: FakeRuntime, src: str, category: type[TapirError], **kw: Any) -> TapirError:
    r = run(fake, src, **kw)
    assert r.error is not None, f"expected {category.__name__}, the script finished: {r.printed}"
    assert type(r.error) is category, r.error.render()
    return r.error


# -- presence checks and waits ----------------------------------------------------------------------


def test_exists_answers_about_the_screen_as_it_is_and_never_navigates_or_acts() -> None:
    fake = notes()
    assert ok(fake, """
        print($list__notes.exists(), $note__body.exists(), $list__banner.exists())
        print($list__notes.match("bike").exists())
    """) == ["True False False", "True"]
    assert fake.screen == "list" and fake.actions == [] and fake.now == 0  # no navigation, no input, no time


def test_exists_with_a_timeout_waits_for_the_element_and_time_passes() -> None:
    fake = notes()
    assert ok(fake, "print($list__banner.exists(timeout=2))\nprint($list__banner.exists(timeout=5))") == [
        "False", "True"]
    assert fake.now == 4.0  # 2 s of the first check, then until the banner showed


def test_wait_and_wait_gone_return_when_the_screen_changes_and_fail_after_the_timeout() -> None:
    fake = notes()
    ok(fake, "$list__spinner.wait_gone(timeout=10)\n$list__banner.wait(timeout=10)")
    assert fake.now == 4.0
    err = fails(notes(), "$list__spinner.wait_gone(timeout=1)", WaitTimeout)
    assert "$list__spinner was still there after 1 s" in err.message and err.span is not None
    assert err.render().splitlines()[0].startswith("<script>:1:1: WaitTimeout:")
    err = fails(notes(), "$note__body.wait(timeout=0.5)", WaitTimeout)
    assert "did not appear" in err.message


def test_wait_text_waits_for_a_whole_text_ignoring_case() -> None:
    fake = notes()
    ok(fake, "wait_text('synced', timeout=5)")
    assert fake.now == 4.0
    fails(notes(), "wait_text('Sync', timeout=1)", WaitTimeout)  # a whole text, not a part of one
    assert "needs a text" in fails(notes(), "wait_text('  ')", ScriptError).message


def test_a_presence_check_takes_an_element_or_an_item_by_match() -> None:
    err = fails(notes(), "$list__notes[0].exists()", ActionError)
    assert "match()" in err.message


@pytest.mark.parametrize("src", ["$list__banner.wait(timeout=-1)", "sleep(-2)", "$list__banner.exists(1e999)"])
def test_negative_or_endless_times_are_refused(src: str) -> None:
    err = fails(notes(), src, ScriptError)
    assert "number of seconds >= 0" in err.message


# -- time: sleep and the budget ---------------------------------------------------------------------


def test_sleep_passes_the_runtime_s_time_and_counts_against_the_time_budget() -> None:
    fake = notes()
    r = run(fake, "$list__new.tap()\nsleep(30)\nsleep(20)", budgets=Budgets(timeout_s=60))
    assert r.ok and fake.now == 50
    # 50 simulated seconds are spent: a wait of 20 more would end after the 60 s budget
    err = fails(notes(), "$list__new.tap()\nsleep(50)\nsleep(20)", BudgetExceeded, budgets=Budgets(timeout_s=60))
    assert err.span is not None and err.span.line == 3 and "sleep(20) would wait past the end" in err.message


def test_a_wait_longer_than_the_budget_left_fails_as_the_budget_when_it_runs_out() -> None:
    fake = notes()
    err = fails(fake, "$note__body.wait(timeout=100)", BudgetExceeded, budgets=Budgets(timeout_s=5))
    assert err.budget == "time" and "was still waiting when the script's 5 s ran out" in err.message  # type: ignore
    assert fake.now <= 5.0
    # the same wait within the budget is an ordinary timeout
    fails(notes(), "$note__body.wait(timeout=2)", WaitTimeout, budgets=Budgets(timeout_s=5))


def test_sleep_without_a_device_sleeps_here_and_makes_no_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    monkeypatch.setattr("tapir.dsl.api.time.sleep", sleep)
    monkeypatch.setattr("tapir.dsl.api.time.monotonic", lambda: now[0])
    r = run_script("sleep(0.25)\nprint('done')", None, output=None)
    assert r.ok and sum(slept) == pytest.approx(0.25) and max(slept) <= 0.05 + 1e-9  # in pieces
    fake = notes()
    before = len(slept)
    ok(fake, "sleep(1)")  # with a device (a factory) the device's clock passes it
    assert fake.factory_calls == 1 and fake.now == 1 and len(slept) == before


def test_an_interrupt_cuts_a_sleep_without_a_device_short() -> None:
    import threading

    from tapir.core.errors import Interrupted
    from tapir.dsl.interpreter import Interpreter
    from tapir.dsl.parser import parse

    interp = Interpreter(None)
    timer = threading.Timer(0.2, interp.interrupt, args=("stopped by the user",))
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(Interrupted):
        interp.execute(parse("sleep(30)", "<test>"), "sleep(30)")
    assert time.monotonic() - t0 < 5


def test_the_checker_does_not_ask_for_a_document_for_sleep_and_param(tmp_path: Path) -> None:
    from tapir.service import Workspace

    ws = Workspace()
    (tmp_path / "a.tap").write_text("sleep(1)\nprint(param('who', default='x'))\n")
    (tmp_path / "b.tap").write_text("screenshot('x')\n")
    (tmp_path / "c.tap").write_text("screenshot('x')\n$main__ok.tap()\n")
    assert ws.check(tmp_path / "a.tap").diagnostics == ()
    # screen-level calls need a device, not a document; the first $element asks for one
    assert ws.check(tmp_path / "b.tap").diagnostics == ()
    assert [(d.code, d.span.line) for d in ws.check(tmp_path / "c.tap").diagnostics] == [("no-document", 2)]


# -- the app, screenshots --------------------------------------------------------------------------


def test_app_control_and_screenshots_reach_the_runtime() -> None:
    fake = notes()
    out = ok(fake, """
        clear_app()
        launch_app(args={"rate_prompt_after": 2, "debug": True})
        stop_app()
        print(screenshot("after stop"), screenshot())
    """)
    assert out == ["after stop.png screenshot-2.png"]
    assert fake.log() == ["clear_app()", "launch_app({'rate_prompt_after': 2, 'debug': True})", "stop_app()",
                          "screenshot('after stop')", "screenshot()"]
    assert [c.method for c in fake.actions] == ["clear_app", "launch_app", "stop_app"]  # inputs: the action budget


def test_launch_extras_must_be_simple_values() -> None:
    err = fails(notes(), "launch_app(args={'a': [1]})", ScriptError)
    assert "values str, bool or numbers" in err.message


# -- watchers ----------------------------------------------------------------------------------------


def test_a_watcher_dismisses_the_interruption_that_hides_an_element() -> None:
    fake = notes()
    out = ok(fake, """
        watch($rate__later, when=$rate__title)
        for i in range(3):
            $list__new.tap()
            $edit__save.tap()
            print($note__body.get_text())
    """)
    assert out == ["hello"] * 3
    assert fake.fired == {"watch($rate__later, when=$rate__title)": 3}
    fired = [c for c in fake.log() if "watcher" in c]
    assert fired == ["$rate__later.watcher('watch($rate__later, when=$rate__title)')"] * 3


def test_a_watcher_can_look_for_and_tap_texts() -> None:
    fake = notes()
    ok(fake, "watch('not now', when='Enjoying Notes?')\n$edit__save.tap()\n$list__notes.match('Milk').tap()")
    assert list(fake.fired.values()) == [1]


def test_without_a_watcher_the_interruption_stops_the_script() -> None:
    err = fails(notes(), "$edit__save.tap()\n$note__body.get_text()", ScreenNotReached)
    assert "now on 'rate'" in err.message


def test_a_watcher_fires_at_most_its_limit() -> None:
    fake = notes()
    err = fails(fake, """
        watch($rate__later, limit=2)
        for i in range(3):
            $edit__save.tap()
            $note__body.get_text()
    """, ScreenNotReached)
    assert err.span is not None and err.span.line == 4 and fake.fired == {"watch($rate__later)": 2}


def test_waits_let_watchers_act_and_exists_does_not() -> None:
    fake = notes()
    # the prompt covers the editor it was opened over
    ok(fake, "watch($rate__later)\n$edit__save.tap()\nprint($edit__save.exists())\n$edit__save.wait(timeout=1)")
    assert fake.fired == {"watch($rate__later)": 1}
    assert [c for c in fake.log() if "watcher" in c][0].startswith("$rate__later")


@pytest.mark.parametrize("src,category,message", [
    ("watch($list__notes.match('Milk'))", ScriptError, "not an item or child"),
    ("watch($rate__later, limit=0)", ScriptError, "at least 1"),
    ("watch('')", ScriptError, "not an empty one"),
    ("watch($nope__x)", UnknownElement, "unknown element $nope__x"),
])
def test_watch_misuse_is_an_error_at_its_line(src: str, category: type[TapirError], message: str) -> None:
    fake = notes()
    r = run_script(src, fake.factory(), output=None)  # no symbols: the runtime itself refuses
    assert type(r.error) is category and message in r.error.message, r.error and r.error.render()
    assert r.error.span is not None and r.error.span.line == 1


def test_a_watcher_needs_something_to_tap() -> None:
    with pytest.raises(ValueError, match="one of them"):
        Watcher("w")
    with pytest.raises(ValueError, match="not both"):
        Watcher("w", tap="a__b", when="a__c", when_text="x")
    w = Watcher("w", tap_text="Allow")
    assert (w.trigger, w.trigger_text, w.describe()) == (None, "Allow", "tap 'Allow' when it shows")
    w = Watcher("w", tap="rate__later", when_text="Rate us")
    assert (w.trigger, w.trigger_text, w.describe()) == (None, "Rate us", "when 'Rate us' shows, tap $rate__later")


# -- parameters ---------------------------------------------------------------------------------------


def test_param_reads_the_run_s_parameters_as_text() -> None:
    inputs = ScriptInputs.from_options(["user=ada", "n=3", "empty=", "note=a=b"])
    r = run_script("print(param('user'), int(param('n')) + 1, param('empty') == '', param('note'))\n"
                   "print(param('missing', default='fallback'))", None, output=None, inputs=inputs)
    assert r.ok and r.printed == ("ada 4 True a=b", "fallback")


def test_a_missing_parameter_is_an_error_naming_it_and_how_to_pass_it() -> None:
    r = run_script("x = 1\nuser = param('user')", None, output=None, filename="s.tap",
                   inputs=ScriptInputs.from_options(["n=1"]))
    assert r.error is not None
    lines = r.error.render().splitlines()
    assert lines[0] == "s.tap:2:8: ScriptError: the script needs the parameter 'user', which was not given (given: n)"
    assert "--param user=VALUE" in lines[-1]


@pytest.mark.parametrize("items,message", [
    (["user"], "expected NAME=VALUE"),
    (["=x"], "is not a parameter name"),
    (["9lives=1"], "is not a parameter name"),
    (["a=1", "a=2"], "given twice"),
])
def test_malformed_parameters_are_usage_errors(items: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ScriptInputs.from_options(items)


# -- the checker ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("src,code,message", [
    ("$list__notes.exists(1, 2)", "arg-count", "exists() takes at most 1 argument, 2 given"),
    ("$list__notes.exists(timeout='3')", "arg-type", "'timeout' must be float, not a str"),
    ("sleep('x')", "arg-type", "sleep(): 'seconds' must be float, not a str"),
    ("sleep()", "arg-count", "sleep() takes 1 argument, 0 given"),
    ("$list__banner.wait_gone(5, 6)", "arg-count", "wait_gone() takes at most 1 argument"),
    ("wait_text(5)", "arg-type", "'text' must be str, not an int"),
    ("watch(3)", "arg-type", "'tap' must be element | str, not an int"),
    ("watch($rate__later, when=[1])", "arg-type", "'when' must be element | str, not a list"),
    ("launch_app(args='x')", "arg-type", "'args' must be dict, not a str"),
    ("param()", "arg-count", "param() takes 1 to 2 arguments, 0 given"),
    ("param('a', defualt='b')", "arg-count", "has no parameter 'defualt'"),
    ("screenshot(name=1)", "arg-type", "'name' must be str, not an int"),
    ("x = $list__notes.exist()", "unknown-method", "did you mean exists()?"),
])
def test_the_checker_catches_misuse(src: str, code: str, message: str) -> None:
    problems = check_source(src + "\n", notes().symbols())
    assert [(d.code, message in d.message) for d in problems] == [(code, True)], [d.message for d in problems]


def test_the_language_service_knows_what_the_new_calls_return(tmp_path: Path) -> None:
    from tapir.service import Workspace

    ws = Workspace()
    path = tmp_path / "t.tap"
    doc = Path("samples/notes/notes.yaml").resolve()
    ws.open(path, f"# doc: {doc}\nn = screenshot()\nok = $rate_dialog__title.exists()\nv = param('x')\nn\nok\nv\n")
    shown = [ws.hover(path, (line, 1)) for line in (5, 6, 7)]
    assert [h.contents.splitlines()[1] if h else None for h in shown] == [
        "(variable) n: a str", "(variable) ok: a bool", "(variable) v: a str"]


def test_correct_use_checks_clean() -> None:
    src = textwrap.dedent("""
        watch($rate__later, when=$rate__title)
        watch("Allow", limit=2)
        clear_app()
        launch_app(args={"tab": "notes", "n": 3})
        if not $list__notes.exists(timeout=2):
            $list__spinner.wait_gone()
        $list__banner.wait(timeout=5)
        wait_text("Synced")
        sleep(0.5)
        path = screenshot(param("shot", default="done"))
        stop_app()
    """)
    assert check_source(src, notes().symbols()) == []


# -- the registry carries them everywhere -----------------------------------------------------------------


def test_completion_hover_and_prompts_show_the_new_calls(tmp_path: Any) -> None:
    from tapir.docgen.loader import load_document
    from tapir.docgen.prompt import render_compressed, render_full
    from tapir.service import Workspace

    doc = load_document("samples/notes/notes.yaml")
    full, short = render_full(doc).prefix, render_compressed(doc).prefix
    for text in (full, short):
        assert "$element.exists(timeout: float = 0) -> bool" in text
        assert "wait_text(text: str, timeout: float = 10) -> None" in text
    assert "param(name: str, default: str = None) -> str" in full
    ws = Workspace()
    path = tmp_path / "t.tap"
    ws.open(path, f"# doc: {Path('samples/notes/notes.yaml').resolve()}\n$rate_dialog__title.\nwa\n")
    labels = {i.label for i in ws.complete(path, (2, 21))}
    assert {"exists", "wait", "wait_gone"} <= labels
    labels = {i.label for i in ws.complete(path, (3, 3))}
    assert {"wait_text", "watch"} <= labels
    ws.update(path, f"# doc: {Path('samples/notes/notes.yaml').resolve()}\nwait_text('Saved')\n")
    hover = ws.hover(path, (2, 3))
    assert hover is not None and "wait_text(text: str, timeout: float = 10) -> None" in hover.contents
    assert REGISTRY.get(Namespace.GLOBAL, "watch") is not None


def test_elements_of_other_screens_are_absent_not_navigated_to() -> None:
    fake = notes()
    assert ok(fake, "print($rate__later.exists(), $edit__save.exists())") == ["False False"]
    fails(notes(navigate=False), "$edit__save.tap()", ScreenNotReached)
    fake = notes()
    fake.elements["list__notes"].present = False
    fails(fake, "$list__notes.match('Milk').tap()", ElementNotFound)
