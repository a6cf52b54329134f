"""The statements of a session that ran to the end, in order: what ``:save`` writes as a script,
and the ``def``s the language service is shown (``tapir.repl.context``).

    t = Transcript()
    t.add('x = $songs_screen__song_list.match("Rock")', "<repl>")
    t.defs                              # {function name: its def}, for the service's context
    t.script(doc_line="# doc: music.yaml")   # a script that replays the session

Only whole top-level statements that finished are kept: one that failed or was stopped is left
out (its effects on the device may be partial, and replaying it would fail the same way).
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.repl.context import DEF_NAME

__all__ = ["Statement", "Transcript"]


@dataclass(frozen=True)
class Statement:
    #: The statement's source text, as typed (a compound statement with its block).
    text: str
    #: Where it came from: ``<repl>``, or the script a ``:load`` ran.
    origin: str


class Transcript:
    def __init__(self) -> None:
        self.statements: list[Statement] = []
        #: Function name -> the text of the last top-level ``def`` that defined it.
        self.defs: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.statements)

    def add(self, text: str, origin: str) -> None:
        self.statements.append(Statement(text, origin))
        m = DEF_NAME.match(text)
        if m is not None:
            self.defs[m.group(1)] = text

    def script(self, doc_line: str | None = None, header: str | None = None,
               statements: list[Statement] | None = None) -> str:
        """The session as a script: the ``# doc:`` line, ``header`` as comment lines, then every
        statement (or those given) on its own lines (the caller lays it out with ``tapir fmt``)."""
        return self.lines(doc_line, header, statements)[0]

    def lines(self, doc_line: str | None = None, header: str | None = None,
              statements: list[Statement] | None = None) -> tuple[str, list[tuple[int, int]]]:
        """``script``'s text, and the first and last line of each statement in it."""
        out: list[str] = []
        if doc_line:
            out.append(doc_line)
        if header:
            out += [f"# {line}" if line else "#" for line in header.splitlines()]
        ranges = []
        for st in self.statements if statements is None else statements:
            first = len(out) + 1
            out += st.text.split("\n")
            ranges.append((first, len(out)))
        return "\n".join(out) + "\n", ranges
