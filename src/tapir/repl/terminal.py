"""The REPL in a terminal: prompt-toolkit input with the language service behind it.

    run_terminal(session)                                      # until Ctrl-D or :quit; returns 0
    run_terminal(session, input=pipe, output=DummyOutput())    # tests drive it with pipe input

* **Enter** runs the input when the language service says it is complete
  (``Workspace.input_status``); otherwise it opens the next line, indented as the service says
  (a block after ``:``, the indentation of the line before inside brackets). A block ends with
  an empty line, as in Python's REPL. Alt-Enter (Esc Enter) always opens a new line.
* **Tab** indents at the start of a line and completes elsewhere; the menu also opens as you
  type a name, ``$``, ``.`` or a quote (``tapir.repl.completer``). Backspace in the indentation
  removes one level.
* **Colours** come from the parser's tokens (``tapir.repl.highlight``); an ``$element`` the
  document does not have is underlined in red.
* **History** is kept across sessions (``tapir.repl.history``); up and down walk it, and a
  block comes back whole.
* **Ctrl-C** at the prompt clears the input; while a statement runs it stops it between two
  device commands. **Ctrl-D** on an empty line leaves.

The bottom line shows the device, the document, the screen last seen and what the last input
cost (statements, UI actions, time), without sending anything to the device.
"""

from __future__ import annotations

from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.shortcuts import CompleteStyle

from tapir.repl.completer import SessionCompleter
from tapir.repl.highlight import STYLE, TapirLexer
from tapir.repl.session import ReplSession

__all__ = ["CONTINUATION", "PROMPT", "ask_in_terminal", "key_bindings", "make_prompt", "run_terminal"]

PROMPT = "tapir> "
CONTINUATION = "  ...> "
_INDENT = 4


def key_bindings(session: ReplSession) -> KeyBindings:
    """Enter, Tab and Backspace as the module docstring describes."""
    kb = KeyBindings()

    @kb.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        buf = event.current_buffer
        state = buf.complete_state
        if state is not None and state.current_completion is not None:
            buf.complete_state = None  # Enter takes the completion chosen in the menu
            return
        text = buf.text
        lines = text.split("\n")
        if len(lines) > 1 and not lines[-1].strip():
            # an empty line ends a block: run it unless a bracket is still open
            body = "\n".join(lines[:-1]).rstrip(" \t")
            status = session.input_status(body + "\n\n")
            if status.state != "incomplete":
                buf.text = body
                buf.validate_and_handle()
                return
            buf.insert_text("\n" + status.indent)
            return
        status = session.input_status(text)
        if status.state == "incomplete":
            buf.insert_text("\n" + status.indent)
        else:
            buf.validate_and_handle()

    @kb.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("tab")
    def _tab(event: KeyPressEvent) -> None:
        buf = event.current_buffer
        before = buf.document.current_line_before_cursor
        if not before.strip():
            buf.insert_text(" " * (_INDENT - len(before) % _INDENT))
        elif buf.complete_state is not None:
            buf.complete_next()
        else:
            buf.start_completion(select_first=False)

    @kb.add("backspace")
    def _backspace(event: KeyPressEvent) -> None:
        buf = event.current_buffer
        before = buf.document.current_line_before_cursor
        if before and not before.strip() and buf.selection_state is None:
            buf.delete_before_cursor(len(before) % _INDENT or _INDENT)
        else:
            buf.delete_before_cursor(1)

    return kb


def _toolbar(session: ReplSession) -> AnyFormattedText:
    parts = [session.device or "no device"]
    if session.link.serial and session.link.serial != session.device:
        parts[0] += f" ({session.link.serial})"
    parts.append(session.document_path.name if session.document_path is not None else "no document")
    screen = session.current_screen()
    if screen:
        parts.append(screen)
    if session.last_run is not None:
        n, actions, seconds = session.last_run
        parts.append(f"last: {actions} UI action{'s' if actions != 1 else ''}, {seconds:.1f} s")
    return " " + " · ".join(parts) + " "


def make_prompt(session: ReplSession, *, history: History | None = None, input: Any = None, output: Any = None,
                complete_in_thread: bool = True, toolbar: bool = True) -> PromptSession[str]:
    """The prompt-toolkit session of a REPL session (``input``/``output``: tests' pipe and dummy)."""

    def continuation(width: int, line_number: int, wrap_count: int) -> str:
        return CONTINUATION.rjust(width)

    return PromptSession(
        PROMPT,
        multiline=True,
        prompt_continuation=continuation,
        lexer=TapirLexer(lambda: session.symbols),
        completer=SessionCompleter(session),
        complete_while_typing=True,
        complete_in_thread=complete_in_thread,
        complete_style=CompleteStyle.COLUMN,
        auto_suggest=AutoSuggestFromHistory(),
        history=history if history is not None else InMemoryHistory(),
        key_bindings=key_bindings(session),
        style=STYLE,
        include_default_pygments_style=False,
        bottom_toolbar=(lambda: _toolbar(session)) if toolbar else None,
        input=input,
        output=output,
    )


def run_terminal(session: ReplSession, prompt: PromptSession[str] | None = None) -> int:
    """Read and run inputs until Ctrl-D or ``:quit``; 0."""
    prompt = prompt or make_prompt(session)
    while not session.quit_requested:
        try:
            text = prompt.prompt()
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt: the input is dropped, the session goes on
        except EOFError:
            break
        try:
            session.handle(text)
        except KeyboardInterrupt:
            # Ctrl-C while the input was being checked (nothing had run yet)
            session.error("KeyboardInterrupt")
    return 0


def ask_in_terminal(question: str) -> bool:
    """The session's ``Confirm`` in a terminal: asks ``question (y/n)``; Ctrl-C and Ctrl-D mean no."""
    from prompt_toolkit.shortcuts import confirm

    try:
        return bool(confirm(question))
    except (KeyboardInterrupt, EOFError):
        return False
