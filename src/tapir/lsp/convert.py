"""Our spans, diagnostics and edits as the Language Server Protocol's ranges, and back.

    rng = to_range(index, span)                  # lsprotocol Range, UTF-16 characters
    pos = from_position(index, params.position)  # our Position (1-based, code points, offset)
    to_diagnostic(index, d, uri)                 # lsprotocol Diagnostic (hint, fixes, tags)
    uri_of(path), path_of(uri)

Every conversion between the service's positions (1-based lines and columns in code points,
with offsets) and an editor's (0-based lines, UTF-16 code units) goes through
``tapir.core.positions.LineIndex`` (``lsp_position``, ``from_lsp``); this module only chooses
which index to use and fills in the LSP record. Spans known by their line only (document
problems: column 0 is the whole line, end column 0 the word at the start) become ranges that
cover what they mean.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as T
from pygls.uris import from_fs_path

from tapir.core.diagnostics import Diagnostic, TextEdit
from tapir.core.positions import LineIndex, Position, Span

__all__ = [
    "SEVERITY", "from_position", "from_range", "path_of", "to_diagnostic", "to_position", "to_range", "to_text_edit",
    "uri_of",
]

#: Our severities as LSP's.
SEVERITY = {
    "error": T.DiagnosticSeverity.Error,
    "warning": T.DiagnosticSeverity.Warning,
    "info": T.DiagnosticSeverity.Information,
    "hint": T.DiagnosticSeverity.Hint,
}
#: Diagnostics an editor shows faded (code that never runs).
_UNNECESSARY = {"unreachable"}
_WORD = re.compile(r"\S+")


def uri_of(path: str | Path) -> str:
    """The ``file:`` URI of a path."""
    uri = from_fs_path(str(path))
    return uri if uri is not None else Path(path).resolve().as_uri()


def path_of(uri: str, root: Path | None = None) -> Path:
    """The path a URI names. A URI that names no file (``untitled:Untitled-1``) becomes a path
    that does not exist in the workspace folder, so that the script is still checked against the
    project's ``tapir.toml``."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path)).resolve()
    name = re.sub(r"[^\w.-]+", "_", unquote(parsed.path or parsed.netloc or "untitled")).strip("_") or "untitled"
    return (root or Path.cwd()) / f"{name}"


def to_position(index: LineIndex, line: int, column: int) -> T.Position:
    lsp_line, character = index.lsp_position(line, column)
    return T.Position(line=lsp_line, character=character)


def to_range(index: LineIndex, span: Span | None) -> T.Range:
    """A span as a range; None (a problem of the whole file) is the start of the first line."""
    if span is None:
        return T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0))
    line = index.line_text(span.line)
    if span.column <= 0:  # known by its line only: the whole line, indentation aside
        start = len(line) - len(line.lstrip()) + 1
        return T.Range(start=to_position(index, span.line, start), end=to_position(index, span.line, len(line) + 1))
    if span.end_column <= 0:  # known by its start: the word there
        m = _WORD.match(line, span.column - 1)
        end = m.end() + 1 if m is not None else span.column
        return T.Range(start=to_position(index, span.line, span.column), end=to_position(index, span.line, end))
    return T.Range(start=to_position(index, span.line, span.column),
                   end=to_position(index, span.end_line, span.end_column))


def from_position(index: LineIndex, position: T.Position) -> Position:
    """An editor's position as ours (clamped to the text)."""
    return index.from_lsp(max(position.line, 0), max(position.character, 0))


def from_range(index: LineIndex, rng: T.Range) -> Span:
    a, b = from_position(index, rng.start), from_position(index, rng.end)
    if (b.line, b.column) < (a.line, a.column):
        a, b = b, a
    return Span(a.line, a.column, b.line, b.column, a.offset, b.offset)


def to_text_edit(index: LineIndex, edit: TextEdit) -> T.TextEdit:
    return T.TextEdit(range=to_range(index, edit.span), new_text=edit.new_text)


def to_diagnostic(index: LineIndex, d: Diagnostic, related: list[T.DiagnosticRelatedInformation] | None = None
                  ) -> T.Diagnostic:
    """One of our diagnostics as LSP's: the hint on a line of its own under the message."""
    message = d.message if not d.hint else f"{d.message}\nhint: {d.hint}"
    return T.Diagnostic(
        range=to_range(index, d.span),
        message=message,
        severity=SEVERITY.get(d.severity, T.DiagnosticSeverity.Error),
        code=d.code,
        source="tapir",
        tags=[T.DiagnosticTag.Unnecessary] if d.code in _UNNECESSARY else None,
        related_information=related or None,
    )
