"""One record for every problem Tapir reports, and one renderer for all of them.

A ``Diagnostic`` is what ``tapir check``, ``tapir run``, the language server and the document
loader report: a code, a severity, a span, a message, an optional hint and the fixes an editor
can apply. ``TapirError`` (what stops a run) renders through the same ``render_block``:

    d = Diagnostic("unknown-element", ERROR, span, "$home__serch is not an element ...",
                   fixes=(Fix.replace(span, "$home__search"),))
    print(d.render(source, "x.tap"))
    # x.tap:2:1: error[unknown-element]: $home__serch is not an element ...
    #     $home__serch.tap()
    #     ^^^^^^^^^^^^
    print(render_diagnostics(found, source, "x.tap"))   # every block, then "2 errors, 0 warnings"
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tapir.core.positions import Span
from tapir.core.terminal import terminal_safe

__all__ = [
    "ERROR", "HINT", "INFO", "SEVERITIES", "WARNING", "Diagnostic", "Fix", "TextEdit", "count_summary",
    "render_block", "render_diagnostics",
]

ERROR: Final = "error"
WARNING: Final = "warning"
INFO: Final = "info"
HINT: Final = "hint"
#: Most severe first.
SEVERITIES: Final = (ERROR, WARNING, INFO, HINT)

#: How much of a long source line is quoted on either side of the span.
_QUOTE_CONTEXT = 60
#: Columns a tab advances when a line is quoted (the caret line is expanded the same way).
_TAB = 4


@dataclass(frozen=True)
class TextEdit:
    """Replace the text of ``span`` with ``new_text``."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A change that resolves a diagnostic, as an editor's quick fix offers it."""

    title: str
    edits: tuple[TextEdit, ...]

    @classmethod
    def replace(cls, span: Span, text: str, title: str | None = None) -> Fix:
        return cls(title or f"Replace with {text}", (TextEdit(span, text),))


@dataclass(frozen=True)
class Diagnostic:
    """One problem: where (``span``; None for a whole file), what and how bad.

    ``severity`` is one of ``SEVERITIES``. ``code`` names the kind of problem
    (``unknown-element``, ``syntax``...); docs/language-service.md lists them.
    """

    code: str
    severity: str
    span: Span | None
    message: str
    hint: str | None = None
    fixes: tuple[Fix, ...] = ()

    @classmethod
    def at_line(cls, message: str, line: int | None, column: int | None = None, *, severity: str = ERROR,
                code: str = "error", hint: str | None = None) -> Diagnostic:
        """A problem known by its line (and perhaps its column), as document problems are."""
        if line is None:
            return cls(code, severity, None, message, hint)
        if column is None:
            return cls(code, severity, Span.whole_line(line), message, hint)
        return cls(code, severity, Span(line, column, line, 0), message, hint)

    @property
    def line(self) -> int | None:
        return self.span.line if self.span is not None else None

    @property
    def column(self) -> int | None:
        return self.span.column if self.span is not None and self.span.column > 0 else None

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    @property
    def suggestions(self) -> tuple[str, ...]:
        """The replacement texts of the single-edit fixes, best first ("did you mean")."""
        return tuple(f.edits[0].new_text for f in self.fixes if len(f.edits) == 1)

    @property
    def label(self) -> str:
        return f"{self.severity}[{self.code}]"

    def to_dict(self) -> dict[str, object]:
        """The JSON form (``tapir check --json``): positions 1-based, absent when not known."""
        out: dict[str, object] = {"code": self.code, "severity": self.severity, "message": self.message}
        if self.span is not None:
            out["line"] = self.span.line
            if self.span.column > 0:
                out["column"] = self.span.column
            if self.span.end_column > 0:
                out["end_line"], out["end_column"] = self.span.end_line, self.span.end_column
        if self.hint:
            out["hint"] = self.hint
        if self.fixes:
            out["suggestions"] = list(self.suggestions)
        return out

    def render(self, source: str | None = None, filename: str | None = None) -> str:
        """``file:line:col: severity[code]: message``, the source line, a caret and the hint."""
        return render_block(self.label, self.message, self.span, source, filename or "<script>", self.hint)


def _where(filename: str | None, span: Span | None) -> str | None:
    if span is None:
        return filename
    where = filename or "<script>"
    if span.column <= 0:
        return f"{where}:{span.line}"
    return f"{where}:{span.line}:{span.column}"


def _quote(raw: str, span: Span) -> list[str]:
    """The source line and a caret line under ``span``; long lines are cut around the span.

    Columns count characters of the raw line; the caret is placed under the line as it is shown,
    with tabs expanded and control characters escaped, so that it sits right on tab-indented
    lines and after a string that holds an escape sequence too.
    """
    def shown(part: str) -> str:  # as the terminal shows it: control characters escaped, tabs expanded
        return terminal_safe(part).expandtabs(_TAB)

    text = shown(raw)
    if span.column <= 0:  # only the line is known: underline its text
        stripped = raw.lstrip()
        start_col = len(raw) - len(stripped) + 1
        end_col = len(raw.rstrip()) + 1
    else:
        start_col = span.column
        if span.end_line != span.line:
            end_col = len(raw) + 1
        elif span.end_column <= 0:  # the end is not known: the word at the start
            end_col = _token_end(raw, start_col)
        else:
            end_col = span.end_column
    start = len(shown(raw[: max(start_col - 1, 0)]))
    end = max(len(shown(raw[: max(end_col - 1, 0)])), start + 1)
    lo = max(start - _QUOTE_CONTEXT, 0)
    hi = min(end + _QUOTE_CONTEXT, len(text))
    prefix = "..." if lo > 0 else ""
    suffix = "..." if hi < len(text) else ""
    caret = " " * (len(prefix) + start - lo) + "^" * max(min(end, hi) - start, 1)
    return [f"    {prefix}{text[lo:hi]}{suffix}", f"    {caret}"]


def _token_end(raw: str, column: int) -> int:
    """For a span that is only a point (a document key or scalar): the end of the word there, up
    to a ': ' or the end of the line."""
    rest = raw[column - 1 :].rstrip()
    colon = rest.find(": ")
    if rest.endswith(":"):
        colon = len(rest) - 1 if colon < 0 else colon
    width = colon if colon > 0 else len(rest)
    return column + max(width, 1)


def render_block(label: str, message: str, span: Span | None, source: str | None, filename: str | None,
                 hint: str | None = None) -> str:
    """THE renderer: ``where: label: message``, the quoted line with a caret, ``  hint: ...``.

    ``label`` is ``severity[code]`` for a diagnostic and the error's category for a
    ``TapirError``; ``where`` is ``file:line:col`` (``file:line`` when the column is unknown,
    nothing when neither file nor span is known).
    """
    where = _where(filename, span)
    lines = [f"{where}: {label}: {message}" if where else f"{label}: {message}"]
    if span is not None and source is not None:
        src_lines = source.splitlines()
        if 1 <= span.line <= len(src_lines):
            lines += _quote(src_lines[span.line - 1], span)
    if hint:
        lines.append(f"  hint: {hint}")
    # what reaches a terminal: script data quoted in the message cannot move the cursor
    return terminal_safe("\n".join(lines))


def count_summary(diagnostics: Sequence[Diagnostic]) -> str:
    """``2 errors, 1 warning``."""
    errors = sum(1 for d in diagnostics if d.severity == ERROR)
    warnings = sum(1 for d in diagnostics if d.severity == WARNING)
    return f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"


def render_diagnostics(diagnostics: Sequence[Diagnostic], source: str | None, filename: str,
                       summary: bool = True) -> str:
    """Every diagnostic rendered (in order), then the count of errors and warnings."""
    out = [d.render(source, filename) for d in diagnostics]
    if summary:
        out.append(count_summary(diagnostics))
    return "\n".join(out)
