"""Positions in script text: ``Span`` (what every node and diagnostic carries) and ``LineIndex``
(offsets <-> line/column, and the one conversion to the UTF-16 positions editors speak).

    index = LineIndex(text)
    index.position(17)                     # Position(line=2, column=5, offset=17)
    index.offset(2, 5)                     # 17
    index.lsp_position(2, 5)               # (1, 4): 0-based line, UTF-16 code units
    index.from_lsp(1, 4)                   # Position(line=2, column=5, offset=17)

Lines and columns are 1-based and count code points, as Python strings do; offsets are 0-based
code-point indexes into the text as the parser read it (``\\r\\n`` read as ``\\n``, a leading
byte-order mark dropped: ``normalize_newlines``). The Language Server Protocol counts columns
in UTF-16 code units, so a character outside the Basic Multilingual Plane (most emoji) is one
column to Python and two to an editor; ``LineIndex.lsp_position`` and ``LineIndex.from_lsp``
are the only places that difference is dealt with.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

__all__ = ["LineIndex", "Position", "Span", "normalize_newlines"]


@dataclass(frozen=True, order=True)
class Span:
    """A region of source text. Lines and columns are 1-based; the end is exclusive.

    ``offset``/``end_offset`` are 0-based code-point offsets into the text, -1 when not known (a
    span built by hand, or one of a Python caller's line). They take no part in equality, so a
    span written as ``Span(1, 1, 1, 5)`` in a test equals the parser's. Column 0 means the
    column is not known: the whole line is meant; end column 0 means the end is not known: the
    word at the start is meant (document problems that know only their line, or their start).
    """

    line: int
    column: int
    end_line: int
    end_column: int
    offset: int = field(default=-1, compare=False)
    end_offset: int = field(default=-1, compare=False)

    @classmethod
    def point(cls, line: int, column: int) -> Span:
        return cls(line, column, line, column + 1)

    @classmethod
    def whole_line(cls, line: int) -> Span:
        """The span of a problem known only by its line."""
        return cls(line, 0, line, 0)

    @property
    def start(self) -> Position:
        return Position(self.line, self.column, self.offset)

    @property
    def end(self) -> Position:
        return Position(self.end_line, self.end_column, self.end_offset)

    def to(self, other: Span) -> Span:
        """From the start of this span to the end of ``other``."""
        return Span(self.line, self.column, other.end_line, other.end_column, self.offset, other.end_offset)

    def contains(self, pos: Position) -> bool:
        """True when ``pos`` lies inside the span or right at its end (where a cursor stands
        after typing a name)."""
        return (self.line, self.column) <= (pos.line, pos.column) <= (self.end_line, self.end_column)

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


@dataclass(frozen=True, order=True)
class Position:
    """A point in the text: 1-based line and column (code points), 0-based offset (-1: unknown)."""

    line: int
    column: int
    offset: int = field(default=-1, compare=False)

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


def normalize_newlines(text: str) -> str:
    """The text as the parser reads it: ``\\r\\n`` and ``\\r`` become ``\\n``, a leading byte-order
    mark (invisible, so not a column) is dropped. Offsets and columns refer to this text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text[1:] if text.startswith("\ufeff") else text


class LineIndex:
    """Line starts of one text, for conversions between offsets, lines/columns and LSP positions."""

    __slots__ = ("text", "_starts")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._starts = starts

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_text(self, line: int) -> str:
        """The text of 1-based ``line`` without its newline ('' past the end)."""
        if not 1 <= line <= len(self._starts):
            return ""
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.text)
        return self.text[start:end]

    def offset(self, line: int, column: int) -> int:
        """The offset of ``line:column``, clamped to the line (and the text)."""
        if line < 1:
            return 0
        if line > len(self._starts):
            return len(self.text)
        start = self._starts[line - 1]
        return start + min(max(column - 1, 0), len(self.line_text(line)))

    def position(self, offset: int) -> Position:
        """The line and column of ``offset`` (clamped to the text)."""
        offset = min(max(offset, 0), len(self.text))
        i = bisect_right(self._starts, offset) - 1
        return Position(i + 1, offset - self._starts[i] + 1, offset)

    def at(self, line: int, column: int) -> Position:
        """``line:column`` with its offset filled in."""
        return self.position(self.offset(line, column))

    def span(self, start: int, end: int) -> Span:
        """The span between two offsets."""
        a, b = self.position(start), self.position(end)
        return Span(a.line, a.column, b.line, b.column, a.offset, b.offset)

    def fill(self, span: Span) -> Span:
        """``span`` with its offsets computed from its lines and columns."""
        return Span(span.line, span.column, span.end_line, span.end_column,
                    self.offset(span.line, span.column), self.offset(span.end_line, span.end_column))

    # -- the Language Server Protocol's positions ---------------------------------------------------

    def lsp_position(self, line: int, column: int) -> tuple[int, int]:
        """``line:column`` (1-based, code points) as an LSP position: 0-based line, 0-based
        character in UTF-16 code units. A character beyond U+FFFF before the column counts 2."""
        text = self.line_text(line)[: max(column - 1, 0)]
        wide = sum(1 for ch in text if ord(ch) > 0xFFFF)
        return max(line - 1, 0), len(text) + wide

    def lsp_range(self, span: Span) -> tuple[tuple[int, int], tuple[int, int]]:
        """A span as an LSP range ((line, character), (line, character))."""
        return self.lsp_position(span.line, span.column), self.lsp_position(span.end_line, span.end_column)

    def from_lsp(self, line: int, character: int) -> Position:
        """An LSP position (0-based line, UTF-16 character) as a ``Position``; a character in the
        middle of a surrogate pair, or past the end of the line, is clamped."""
        text = self.line_text(line + 1)
        units = 0
        column = 1
        for ch in text:
            width = 2 if ord(ch) > 0xFFFF else 1
            if units + width > character:
                break
            units += width
            column += 1
        return self.at(line + 1, column)
