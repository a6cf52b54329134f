"""Is this input complete? What a REPL asks before running what was typed.

    input_status("if x:")          # InputStatus('incomplete', indent='    ')
    input_status("x = (1,\\n 2)")   # InputStatus('complete')
    input_status("x = = 1")        # InputStatus('invalid', errors=(Diagnostic(...),))

As Python's interactive prompt does: input is incomplete while a bracket or a triple-quoted string
is open, a line ends with a backslash, or a block was started (a compound statement is complete
only after an empty line); it is invalid when it has an error that more lines cannot fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.core.diagnostics import Diagnostic
from tapir.core.positions import normalize_newlines
from tapir.dsl import ast as A
from tapir.dsl.parser import parse_tolerant

__all__ = ["InputStatus", "input_status"]

_OPEN_AT_END = ("unclosed '", "unterminated triple-quoted string", "expected an indented block")


@dataclass(frozen=True)
class InputStatus:
    #: ``complete`` (run it), ``incomplete`` (read another line) or ``invalid`` (show the errors).
    state: str
    errors: tuple[Diagnostic, ...] = ()
    #: The indentation to offer for the next line when incomplete.
    indent: str = ""

    @property
    def complete(self) -> bool:
        return self.state == "complete"


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def input_status(text: str) -> InputStatus:
    """Whether ``text`` (what was typed so far, lines joined by newlines) can be run."""
    text = normalize_newlines(text)
    lines = text.split("\n")
    last = next((ln for ln in reversed(lines) if ln.strip()), "")
    if not last:
        return InputStatus("complete")
    if text.rstrip("\n").endswith("\\"):
        return InputStatus("incomplete", indent=_indent_of(last))
    parsed = parse_tolerant(text)
    if parsed.errors:
        end_line = len(text.rstrip("\n").split("\n"))
        if all(e.message.startswith(_OPEN_AT_END) and (e.span is None or e.span.line >= 1) for e in parsed.errors) \
                and any(e.span is None or e.span.end_line >= end_line or e.message.startswith("unclosed")
                        for e in parsed.errors):
            more = "    " if last.rstrip().endswith(":") else ""
            return InputStatus("incomplete", indent=_indent_of(last) + more)
        return InputStatus("invalid", parsed.errors)
    body = parsed.module.body
    has_block = any(isinstance(s, A.If | A.While | A.For | A.FunctionDef) for s in body)
    if has_block and not text.endswith("\n\n"):
        return InputStatus("incomplete", indent=_indent_of(last))
    return InputStatus("complete")
