"""Parsing again after an edit, reusing what the edit did not touch.

    first = parse_tolerant(text, name)
    again = reparse(first, edited_text, name)     # equal to parse_tolerant(edited_text, name)

A script is read as a run of *chunks*, each one top-level statement (with the comments and
blank lines after it) starting at the beginning of a line. At the start of such a line the
parser is always in the same state (no bracket open, no indentation, a statement expected), so a
chunk parses the same alone as in the whole text. After an edit, the chunks before it are kept
as they are, those after it are kept and moved (their spans shifted by the lines and characters
the edit added), and only the chunks the edit touched are parsed again, with their neighbours
when the parser's recovery may have read across the boundary: a chunk whose statement could
not be read (``ErrorStmt``), or a region that ends inside an unfinished statement. A
1,000-line script is parsed in about 130 ms; one edit in it like this in a few.

The result is a ``ParseResult`` like ``parse_tolerant``'s (a test compares the two, offsets
included, over random edits of every sample); its tokens are put together from the chunks'
when first asked for. When reuse is not safe (the edit touches everything, a parse gives up,
the tree nests deeper than Python's stack), the whole text is parsed again.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from tapir.core.diagnostics import Diagnostic, Fix, TextEdit
from tapir.core.positions import Span, normalize_newlines
from tapir.dsl import ast as A
from tapir.dsl.gcpause import paused_gc
from tapir.dsl.parser import MAX_ERRORS, ParseResult, parse_tolerant
from tapir.dsl.tokens import Token

__all__ = ["SplicedParse", "reparse"]

#: How many chunks past the edit a region may grow before the whole text is parsed instead.
_MAX_GROWTH = 4


@dataclass(frozen=True)
class _Chunk:
    """One top-level statement (or none: the comments at the top of a script) and what follows
    it up to the next one, at its place in a text."""

    start: int
    end: int
    #: How many lines the chunk's text spans before the next chunk's first line.
    lines: int
    body: tuple[A.Stmt, ...]
    errors: tuple[Diagnostic, ...]
    #: Where its tokens come from: a parse, the chunk's range in that parse's text, and the
    #: (lines, characters) to move them by.
    source: ParseResult
    source_start: int
    line_shift: int
    offset_shift: int

    def moved(self, lines: int, chars: int) -> _Chunk:
        if lines == 0 and chars == 0:
            return self
        return _Chunk(self.start + chars, self.end + chars, self.lines,
                      tuple(_shift(s, lines, chars) for s in self.body),
                      tuple(_shift_diagnostic(d, lines, chars) for d in self.errors),
                      self.source, self.source_start, self.line_shift + lines, self.offset_shift + chars)

    def tokens(self, offsets: dict[int, list[int]]) -> list[Token]:
        """The chunk's tokens; ``offsets`` caches the token offsets of each source parse."""
        source = self.source.tokens
        starts = offsets.get(id(self.source))
        if starts is None:
            starts = offsets[id(self.source)] = [t.span.offset for t in source]
        lo = bisect_left(starts, self.source_start)
        hi = bisect_left(starts, self.source_start + (self.end - self.start))
        dl, dc = self.line_shift, self.offset_shift
        if dl == 0 and dc == 0:
            return list(source[lo:hi])
        return [Token(t.kind, t.text, _shift_span(t.span, dl, dc)) for t in source[lo:hi]]


@dataclass(frozen=True)
class SplicedParse(ParseResult):
    """A ``ParseResult`` put together from chunks (``reparse``)."""

    chunks: tuple[_Chunk, ...] = field(default=(), repr=False, compare=False)

    @cached_property
    def tokens(self) -> tuple[Token, ...]:
        out: list[Token] = []
        offsets: dict[int, list[int]] = {}
        for chunk in self.chunks:
            out += chunk.tokens(offsets)
        return tuple(out)


# ---------------------------------------------------------------------------------------------
# Moving trees. Nodes and spans are frozen dataclasses; making the copies through __init__
# (object.__setattr__ field by field) costs several times more than filling the new object's
# __dict__, and a 1,000-line script has some 40,000 spans: these copies are made directly.


def _shift_span(s: Span, lines: int, chars: int) -> Span:
    new = object.__new__(Span)
    new.__dict__.update(line=s.line + lines, column=s.column, end_line=s.end_line + lines, end_column=s.end_column,
                        offset=s.offset + chars if s.offset >= 0 else -1,
                        end_offset=s.end_offset + chars if s.end_offset >= 0 else -1)
    return new


def _shift_value(v: Any, lines: int, chars: int) -> Any:
    t = type(v)
    if t is Span:
        return _shift_span(v, lines, chars)
    if t is tuple:
        return tuple([_shift_value(x, lines, chars) for x in v]) if v else v
    if isinstance(v, A.Node):
        return _shift(v, lines, chars)
    return v


def _shift(node: Any, lines: int, chars: int) -> Any:
    """A copy of ``node`` (and everything under it) ``lines`` lines down and ``chars`` on; columns
    stay (chunks start at the beginning of a line)."""
    new = object.__new__(type(node))
    d = new.__dict__
    for k, v in node.__dict__.items():
        t = type(v)
        if t is Span:
            d[k] = _shift_span(v, lines, chars)
        elif t is str or t is int or v is None or t is bool:
            d[k] = v
        else:
            d[k] = _shift_value(v, lines, chars)
    if type(node) is A.Refused and lines:
        d["message"] = _shift_message(node.message, lines)
    return new


#: Where a parse error's message names a line of the script ("unclosed '(' opened at 3:10",
#: "'else' ... the if on line 4"): moved with the error.
_LINE_IN_MESSAGE = re.compile(r"(?<=opened at )\d+(?=:\d)|(?<= on line )\d+")


def _shift_message(message: str, lines: int) -> str:
    if lines and ("opened at " in message or " on line " in message):
        return _LINE_IN_MESSAGE.sub(lambda m: str(int(m.group()) + lines), message)
    return message


def _shift_diagnostic(d: Diagnostic, lines: int, chars: int) -> Diagnostic:
    message = _shift_message(d.message, lines)
    fixes = tuple(Fix(f.title, tuple(TextEdit(_shift_span(e.span, lines, chars), e.new_text) for e in f.edits))
                  for f in d.fixes)
    return replace(d, span=_shift_span(d.span, lines, chars) if d.span is not None else None, message=message,
                   fixes=fixes)


# ---------------------------------------------------------------------------------------------
# Chunks


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _chunks_of(parsed: ParseResult, base_offset: int = 0, base_line: int = 0) -> list[_Chunk] | None:
    """The chunks of a parse (of the whole text, or of a region of it that starts at a line
    start), in the coordinates of the whole text; None when it cannot be cut (an error without a
    position)."""
    text = parsed.text
    starts = [0]
    owners: list[list[A.Stmt]] = [[]]
    for stmt in parsed.module.body:
        s = stmt.span
        cut = _line_start(text, s.offset)
        if s.offset == cut and s.column == 1 and cut > starts[-1]:
            starts.append(cut)
            owners.append([])
        owners[-1].append(stmt)
    # an error right at a cut may belong to the statement before it (an indented block expected
    # there): such a cut is not made
    at_cut = {d.span.offset for d in parsed.errors if d.span is not None}
    keep = [i for i, cut in enumerate(starts) if i == 0 or cut not in at_cut]
    if len(keep) < len(starts):
        merged: list[list[A.Stmt]] = []
        for i, stmts in enumerate(owners):
            if i in keep:
                merged.append(list(stmts))
            else:
                merged[-1] += stmts
        starts, owners = [starts[i] for i in keep], merged
    ends = [*starts[1:], len(text)]
    errors: list[list[Diagnostic]] = [[] for _ in starts]
    k = 0
    for d in parsed.errors:
        if d.span is None or d.span.offset < 0:
            return None
        while k + 1 < len(starts) and d.span.offset >= starts[k + 1]:
            k += 1
        errors[k].append(d)
    out = []
    for start, end, body, errs in zip(starts, ends, owners, errors, strict=True):
        chunk = _Chunk(start, end, text.count("\n", start, end), tuple(body), tuple(errs), parsed, start, 0, 0)
        out.append(chunk.moved(base_line, base_offset))
    return out


def _risky(chunk: _Chunk) -> bool:
    """Whether the parser's recovery may have read across this chunk's edges."""
    return any(isinstance(s, A.ErrorStmt) for s in chunk.body)


def _full(text: str, filename: str) -> SplicedParse:
    parsed = parse_tolerant(text, filename)
    chunks = _chunks_of(parsed) or []
    return SplicedParse(parsed.module, parsed.errors, parsed.text, chunks=tuple(chunks))


def reparse(previous: ParseResult | None, source: str, filename: str = "<script>") -> ParseResult:
    """``parse_tolerant(source, filename)``, reusing the statements of ``previous`` (a parse of
    an earlier version of the text) that the edit left alone."""
    text = normalize_newlines(source)
    if previous is None:
        return _full(text, filename)
    if previous.text == text:
        return previous
    old = previous.text
    chunks = list(previous.chunks) if isinstance(previous, SplicedParse) and previous.chunks else _chunks_of(previous)
    if not chunks or len(previous.errors) >= MAX_ERRORS // 2:
        return _full(text, filename)
    # the changed stretch: [prefix, len(old) - suffix) of the old text
    prefix = _common_prefix(old, text)
    suffix = _common_suffix(old, text, min(len(old), len(text)) - prefix)
    old_end = len(old) - suffix
    delta = len(text) - len(old)
    first = next(i for i, c in enumerate(chunks) if c.end >= prefix or i == len(chunks) - 1)
    last = max(first, max(i for i, c in enumerate(chunks) if c.start <= old_end))
    while first > 0 and (_risky(chunks[first]) or _risky(chunks[first - 1])):
        first -= 1
    while last + 1 < len(chunks) and _risky(chunks[last + 1]):
        last += 1
    try:
        with paused_gc():
            for _ in range(_MAX_GROWTH):
                region = _region(chunks, first, last, text, delta, filename)
                if isinstance(region, SplicedParse):
                    return region
                if region == "earlier" and first > 0:
                    first -= 1
                elif region == "later" and last + 1 < len(chunks):
                    last += 1
                else:
                    break
    except RecursionError:
        pass  # a statement nested deeper than the copies can follow
    return _full(text, filename)


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start (halving with slice compares,
    which run in C, instead of a character at a time)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    """How many characters (at most ``limit``) ``a`` and ``b`` share at their end."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _region(chunks: list[_Chunk], first: int, last: int, text: str, delta: int, filename: str
            ) -> SplicedParse | str:
    """Parse chunks ``first..last`` of the new text alone and splice them in. When the region
    cannot stand alone, says which way to grow it: ``later`` when its end is not a safe place to
    stop (its last statement could not be read, or the text after it would be read with it),
    ``earlier`` when it starts with a string (the docstring of a parse of its own, a statement
    here), ``whole`` when only a parse of everything will do."""
    start = chunks[first].start
    end = chunks[last].end + delta
    if end < start:
        return "whole"
    region_text = text[start:end]
    at_end = last == len(chunks) - 1
    if not at_end and not region_text.endswith("\n"):
        return "later"
    parsed = parse_tolerant(region_text, filename)
    body = parsed.module.body
    if not at_end and (not body or _ends_in_error(body[-1]) or region_text.endswith("\\\n")
                       or any(_open_at_end(d, len(region_text)) for d in parsed.errors)):
        return "later"
    if _triple_quote_left_open(parsed):
        return "later"
    if first > 0 and parsed.module.docstring is not None:
        return "earlier"
    base_line = text.count("\n", 0, start)
    middle = _chunks_of(parsed, start, base_line)
    if middle is None:
        return "whole"
    moved_lines = sum(c.lines for c in middle) - sum(c.lines for c in chunks[first : last + 1])
    after = [c.moved(moved_lines, delta) for c in chunks[last + 1 :]]
    new_chunks = [*chunks[:first], *middle, *after]
    statements = tuple(s for c in new_chunks for s in c.body)
    unique = {(d.span.line, d.span.column, d.message) if d.span else (0, 0, d.message): d
              for c in new_chunks for d in c.errors}
    errors = sorted(unique.values(), key=lambda d: (d.span or Span(0, 0, 0, 0), d.code))
    if len(errors) >= MAX_ERRORS:
        return "whole"
    lines = text.split("\n")
    span = Span(1, 1, len(lines), len(lines[-1]) + 1, 0, len(text))
    # the docstring is the first chunk's (a leading string is never a statement of the body)
    docstring = parsed.module.docstring if first == 0 else chunks[0].source.module.docstring
    module = A.Module(span, statements, docstring)
    return SplicedParse(module, tuple(errors), text, chunks=tuple(new_chunks))



def _ends_in_error(stmt: A.Stmt) -> bool:
    """Whether the last statement read (descending into blocks) could not be read."""
    while True:
        if isinstance(stmt, A.ErrorStmt):
            return True
        inner = getattr(stmt, "orelse", None) or getattr(stmt, "body", None)
        if not isinstance(inner, tuple) or not inner:
            return False
        stmt = inner[-1]


def _open_at_end(d: Diagnostic, length: int) -> bool:
    """Whether a problem says the region ended with something still open, which the text after
    it might have closed: a bracket, a triple-quoted string, a string continued with a
    backslash; or lies at the region's very end."""
    if d.span is not None and d.span.offset >= length - 1:
        return True
    m = d.message
    return m.startswith("unclosed") or m.startswith("unterminated triple") or (
        m.startswith("unterminated") and d.span is not None and d.span.end_offset >= length - 1)


_TRIPLE = re.compile(r"\"\"\"|'''")


def _triple_quote_left_open(parsed: ParseResult) -> bool:
    """Whether the region has a triple quote that is not part of a whole triple-quoted string
    (or a string or comment) of its own: in the whole text, a closing quote further on could
    make everything up to it one string."""
    text = parsed.text
    if '"""' not in text and "'''" not in text:
        return False
    covered = [(t.span.offset, t.span.end_offset) for t in parsed.tokens
               if t.kind in ("LONG_STRING", "STRING", "COMMENT")]
    for m in _TRIPLE.finditer(text):
        p = m.start()
        if not any(a <= p and p + 3 <= b for a, b in covered):
            return True
    return False
