"""The REPL without a terminal: input read line by line (a pipe, a here-document, a file).

    printf 'x = $songs_screen__song_count.get_text()\\nprint(x)\\n' | tapir repl --device sim:music

Lines are gathered into inputs as the terminal front end does (the language service says when
an input is complete), and a block also ends where a line starts at column 0 again, so a script
can be piped in as it is written, without the empty line after each block that an interactive
prompt needs. Nothing is prompted; results go to stdout, errors to stderr, and the session goes
on after an error. The exit status is 0 when every input ran, 1 when one failed.
"""

from __future__ import annotations

from typing import TextIO

from tapir.repl.session import ReplSession

__all__ = ["run_lines"]

_CONTINUES_BLOCK = ("elif ", "elif(", "else:", "else :")


def run_lines(session: ReplSession, stream: TextIO) -> int:
    """Run every input of ``stream`` (see the module docstring); 0 or 1."""
    pending: list[str] = []
    while not session.quit_requested:
        raw = stream.readline()
        if not raw:
            break
        line = raw.rstrip("\n").rstrip("\r")
        if pending:
            body = "\n".join(pending)
            block_done = session.input_status(body + "\n\n").state != "incomplete"
            if not line.strip() and block_done:
                _run(session, pending)
                continue
            if line[:1] not in ("", " ", "\t", "#") and not line.startswith(_CONTINUES_BLOCK) and block_done:
                _run(session, pending)
        pending.append(line)
        text = "\n".join(pending)
        if not text.strip():
            pending.clear()
            continue
        status = session.input_status(text)
        if status.state != "incomplete":
            _run(session, pending)
    if pending and not session.quit_requested:
        _run(session, pending)
    return 1 if session.failures else 0


def _run(session: ReplSession, pending: list[str]) -> None:
    text = "\n".join(pending)
    pending.clear()
    session.handle(text)
