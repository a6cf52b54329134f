"""The REPL's prompt-toolkit front end driven through prompt-toolkit's pipe input: Enter runs
complete input and indents incomplete input, Tab indents or completes, the completion menu
opens as you type, Ctrl-C clears the line, Ctrl-D leaves, history survives the session, and the
confirmation hook asks in the terminal.

Keys are sent one chunk at a time and each next chunk waits for what the previous one must have
done (a menu shown, a completion chosen), so the tests do not depend on timing.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.base import PipeInput
from prompt_toolkit.output import DummyOutput

from tapir.repl import ReplSession, make_prompt, run_terminal
from tapir.repl.terminal import ask_in_terminal

REPO = Path(__file__).resolve().parent.parent
MUSIC_DOC = REPO / "samples" / "music" / "music.yaml"
ENTER, TAB, CTRL_C, CTRL_D, BACKSPACE, UP = "\r", "\t", "\x03", "\x04", "\x7f", "\x1b[A"

Step = tuple[str, Callable[[Buffer], bool] | None]


@pytest.fixture
def session(tmp_path: Path) -> Iterator[ReplSession]:
    s = ReplSession(document=MUSIC_DOC, out=io.StringIO(), err=io.StringIO(), cwd=tmp_path)
    yield s
    s.close()


@pytest.fixture
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as inp:
        yield inp


def typed(session: ReplSession, pipe: PipeInput, steps: list[Step], history: FileHistory | None = None) -> str:
    """What one prompt returns after the keys of ``steps``, each sent once the one before it
    has had its effect (its condition on the input buffer holds)."""
    prompt = make_prompt(session, input=pipe, output=DummyOutput(), complete_in_thread=False, toolbar=False,
                         history=history)

    async def drive() -> str:
        task = asyncio.ensure_future(prompt.prompt_async())
        for keys, until in steps:
            pipe.send_text(keys)
            if until is not None:
                deadline = time.monotonic() + 20
                while not until(prompt.default_buffer):
                    assert time.monotonic() < deadline, f"after {keys!r}: buffer {prompt.default_buffer.text!r}"
                    await asyncio.sleep(0.01)
        return await asyncio.wait_for(task, 20)

    return asyncio.run(drive())


def menu_shows(*labels: str) -> Callable[[Buffer], bool]:
    def check(buf: Buffer) -> bool:
        state = buf.complete_state
        return state is not None and [c.text for c in state.completions][:len(labels)] == list(labels)
    return check


def text_is(expected: str) -> Callable[[Buffer], bool]:
    return lambda buf: buf.text == expected


def test_enter_indents_a_block_and_an_empty_line_runs_it(session: ReplSession, pipe: PipeInput) -> None:
    text = typed(session, pipe, [
        ("for i in range(2):" + ENTER, text_is("for i in range(2):\n    ")),
        ("if i:" + ENTER, text_is("for i in range(2):\n    if i:\n        ")),
        ("print(i)" + ENTER, None),
        (BACKSPACE, text_is("for i in range(2):\n    if i:\n        print(i)\n    ")),
        ("print('x')" + ENTER + ENTER, None),
    ])
    assert text == "for i in range(2):\n    if i:\n        print(i)\n    print('x')"


def test_enter_inside_brackets_continues_and_a_complete_line_runs(session: ReplSession, pipe: PipeInput) -> None:
    assert typed(session, pipe, [("x = [1," + ENTER, text_is("x = [1,\n")), ("2]" + ENTER, None)]) == "x = [1,\n2]"
    assert typed(session, pipe, [(":screen" + ENTER, None)]) == ":screen"


def test_tab_indents_at_the_start_of_a_line(session: ReplSession, pipe: PipeInput) -> None:
    assert typed(session, pipe, [(TAB + "x" + ENTER, None)]) == "    x"


def test_the_menu_opens_as_you_type_and_tab_takes_the_element(session: ReplSession, pipe: PipeInput) -> None:
    text = typed(session, pipe, [
        ("$sort_dialog__so", menu_shows("$sort_dialog__sort_options")),
        (TAB, text_is("$sort_dialog__sort_options")),
        (ENTER, lambda buf: buf.complete_state is None),  # Enter takes the completion, runs nothing
        ('.match("D', menu_shows("Duration")),
        (TAB, text_is('$sort_dialog__sort_options.match("Duration')),
        (ENTER, lambda buf: buf.complete_state is None),
        ('")' + ENTER, None),
    ])
    assert text == '$sort_dialog__sort_options.match("Duration")'


def test_methods_are_offered_after_a_dot(session: ReplSession, pipe: PipeInput) -> None:
    text = typed(session, pipe, [
        ("$songs_screen__search_button.ta", menu_shows("tap")),
        (TAB, text_is("$songs_screen__search_button.tap")),
        (ENTER, lambda buf: buf.complete_state is None),
        ("()" + ENTER, None),
    ])
    assert text == "$songs_screen__search_button.tap()"


def test_no_menu_pops_up_after_a_space(session: ReplSession, pipe: PipeInput) -> None:
    seen: list[bool] = []

    def after_space(buf: Buffer) -> bool:
        seen.append(buf.complete_state is not None)
        return buf.text == "x = "

    typed(session, pipe, [("x = ", after_space), ("1" + ENTER, None)])
    assert seen[-1] is False


def test_a_whole_session_through_the_loop(session: ReplSession, pipe: PipeInput) -> None:
    prompt = make_prompt(session, input=pipe, output=DummyOutput(), complete_in_thread=False, toolbar=False)
    pipe.send_text("n = 20" + ENTER + "half-typed" + CTRL_C + "n * 2 + 2" + ENTER + "nope()" + ENTER
                   + "print('after the error')" + ENTER + CTRL_D)
    assert run_terminal(session, prompt) == 0
    assert isinstance(session.out, io.StringIO) and isinstance(session.err, io.StringIO)
    assert session.out.getvalue() == "42\nafter the error\n"
    assert "unknown function 'nope'" in session.err.getvalue()
    assert "half-typed" not in session.err.getvalue()  # Ctrl-C dropped it unrun
    assert [s.text for s in session.transcript.statements] == ["n = 20", "n * 2 + 2", "print('after the error')"]


def test_quit_leaves_the_loop(session: ReplSession, pipe: PipeInput) -> None:
    prompt = make_prompt(session, input=pipe, output=DummyOutput(), complete_in_thread=False, toolbar=False)
    pipe.send_text(":quit" + ENTER + "print('never')" + ENTER)
    assert run_terminal(session, prompt) == 0
    assert isinstance(session.out, io.StringIO) and "never" not in session.out.getvalue()


def test_history_is_kept_across_sessions(tmp_path: Path) -> None:
    path = tmp_path / "history"
    first = ReplSession(out=io.StringIO(), err=io.StringIO(), cwd=tmp_path)
    with create_pipe_input() as inp:
        assert typed(first, inp, [("for i in range(3):" + ENTER, None), ("print(i)" + ENTER + ENTER, None)],
                     history=FileHistory(str(path))) == "for i in range(3):\n    print(i)"
    first.close()
    second = ReplSession(out=io.StringIO(), err=io.StringIO(), cwd=tmp_path)
    with create_pipe_input() as inp:
        text = typed(second, inp, [(UP, text_is("for i in range(3):\n    print(i)")),
                                   (ENTER, text_is("for i in range(3):\n    print(i)\n    ")), (ENTER, None)],
                     history=FileHistory(str(path)))
    second.close()
    assert text == "for i in range(3):\n    print(i)"  # the whole block came back with one Up


@pytest.mark.parametrize(("answer", "expected"), [("y", True), ("n", False), (CTRL_C, False)])
def test_the_confirmation_hook_asks_in_the_terminal(answer: str, expected: bool) -> None:
    with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
        inp.send_text(answer)
        assert ask_in_terminal("Delete the playlist 'Road trip'?") is expected


def test_the_session_asks_through_its_hook_and_answers_no_without_one(tmp_path: Path) -> None:
    asked: list[str] = []
    with_person = ReplSession(out=io.StringIO(), err=io.StringIO(), cwd=tmp_path,
                              confirm=lambda q: asked.append(q) or True)
    assert with_person.link.ask("Send the message?") is True and asked == ["Send the message?"]
    nobody = ReplSession(out=io.StringIO(), err=io.StringIO(), cwd=tmp_path)
    assert nobody.link.ask("Send the message?") is False
    with_person.close()
    nobody.close()
