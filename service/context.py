"""What surrounds the cursor in text that may be half typed: the call it is in, the string it is
in, the expression before a '.'. Read from the text, not the tree: ``$list.match("Ro`` does not
parse, yet completion must know it is the first argument of ``match`` on ``$list``.

    call_site(text, offset)      # CallSite(name='match', receiver='$list', arg_index=0, ...)
    open_string(text, offset)    # OpenString(start=12, quote='"', typed='Ro')
    expression_before(text, end) # (start, '$list[0]'): the primary expression ending at ``end``
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CallSite", "OpenString", "call_site", "expression_before", "open_string"]

_NAME_CHAR = re.compile(r"[\w$%:]")
_CLOSE = {")": "(", "]": "[", "}": "{"}


@dataclass(frozen=True)
class OpenString:
    """A string literal the cursor is inside: where its quote is, which quote, what is typed."""

    start: int
    quote: str
    typed: str


@dataclass(frozen=True)
class CallSite:
    """The innermost call whose parentheses hold the cursor."""

    #: The callee as written: ``scroll``, ``$list.match``, ``song.get_text``.
    callee: str
    #: The function or method name.
    name: str
    #: The receiver of a method call as written (``$list``), None for a plain call.
    receiver: str | None
    receiver_start: int
    #: The offset of the '('.
    open_paren: int
    #: The index of the argument the cursor is in (positional arguments before it counted).
    arg_index: int
    #: The keyword of the argument the cursor is in (``direction`` in ``direction="up``), if any.
    keyword: str | None
    #: Keywords already given before the cursor.
    used_keywords: tuple[str, ...] = ()


def open_string(text: str, offset: int) -> OpenString | None:
    """The single-line string literal the cursor is inside, if any."""
    line_start = text.rfind("\n", 0, offset) + 1
    quote: str | None = None
    start = 0
    i = line_start
    while i < offset:
        c = text[i]
        if quote is None:
            if c == "#":
                return None
            if c in "'\"":
                if text.startswith(c * 3, i):
                    return None  # triple-quoted strings are not completed in
                quote, start = c, i
        elif c == "\\":
            i += 1
        elif c == quote:
            quote = None
        i += 1
    if quote is None:
        return None
    return OpenString(start, quote, text[start + 1 : offset])


def _skip_string_back(text: str, i: int) -> int:
    """From the closing quote at ``i``, the offset of its opening quote (on the same line)."""
    quote = text[i]
    j = i - 1
    while j >= 0 and text[j] != "\n":
        if text[j] == quote and (j == 0 or text[j - 1] != "\\"):
            return j
        j -= 1
    return i


def expression_before(text: str, end: int) -> tuple[int, str]:
    """The primary expression (names, ``$elements``, calls, subscripts, attribute chains) that
    ends at ``end``: (its start, its text)."""
    i = end
    while i > 0:
        c = text[i - 1]
        if _NAME_CHAR.match(c) or c == ".":
            i -= 1
            continue
        if c in _CLOSE:
            depth = 0
            j = i - 1
            while j >= 0:
                ch = text[j]
                if ch in "'\"":
                    j = _skip_string_back(text, j)
                elif ch in _CLOSE:
                    depth += 1
                elif ch in "([{":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            if j < 0:
                break
            i = j
            continue
        if c in "'\"":  # a string literal as the receiver: "a".upper()
            j = _skip_string_back(text, i - 1)
            if j == i - 1:
                break
            i = j
            continue
        break
    start = i
    while start < end and text[start] == ".":
        start += 1
    return start, text[start:end]


def call_site(text: str, offset: int) -> CallSite | None:
    """The call around ``offset``: scanning back over balanced brackets and strings to the '('
    that is still open, collecting its arguments on the way."""
    opened = open_string(text, offset)
    i = (opened.start if opened is not None else offset) - 1
    depth = 0
    segments: list[str] = []  # the arguments before the cursor, the cursor's own first
    segment_end = opened.start if opened is not None else offset
    while i >= 0:
        c = text[i]
        if c in "'\"":
            i = _skip_string_back(text, i) - 1
            continue
        if c in _CLOSE:
            depth += 1
        elif c in "([{":
            if depth == 0:
                if c != "(":
                    return None  # inside a list or dict display, not a call
                break
            depth -= 1
        elif depth == 0 and c == ",":
            segments.append(text[i + 1 : segment_end])
            segment_end = i
        i -= 1
    if i < 0:
        return None
    segments.append(text[i + 1 : segment_end])
    start, callee = expression_before(text, i)
    if not callee or not (callee[-1].isalnum() or callee[-1] == "_"):
        return None
    tail = callee.rsplit(")", 1)[-1].rsplit("]", 1)[-1]
    if "." in tail:
        dot = callee.rfind(".")
        receiver: str | None = callee[:dot]
        name = callee[dot + 1 :]
    else:
        receiver, name = None, callee
    used = tuple(k for k in (_keyword_of(s) for s in segments[1:]) if k)
    return CallSite(callee, name, receiver, start, i, len(segments) - 1, _keyword_of(segments[0]), used)


def _keyword_of(segment: str) -> str | None:
    m = re.match(r"\s*([A-Za-z_]\w*)\s*=(?!=)", segment)
    return m.group(1) if m else None
