"""The tokens of a script, comments included, as a tolerant parse returns them.

    result = parse_tolerant(source)
    for tok in result.tokens:
        tok.kind, tok.text, tok.span, tok.category   # 'NAME', 'songs', Span(...), 'name'

``kind`` is the grammar's terminal name (``NAME``, ``ELEMENT``, ``STRING``, ``IF``, ``LPAR``...), plus
``COMMENT``, ``NEWLINE`` (the end of a logical line) and ``INVALID`` (text the lexer could not read:
an unterminated string, whose category is string, or a lone ``$``). ``category`` groups them the
way an editor colours them: keyword, name, element, string, number, operator, punctuation,
comment, newline, invalid. The formatter (``tapir fmt``), semantic tokens and the editor's cursor
context are built on these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tapir.core.positions import Span

__all__ = ["KEYWORDS", "Token", "category_of", "comments_in"]

#: The language's keywords (what the lexer reads as their own terminals).
KEYWORDS = frozenset({
    "if", "elif", "else", "while", "for", "in", "not", "and", "or", "is", "def", "return", "pass", "break",
    "continue", "assert", "True", "False", "None",
})

_PUNCTUATION = frozenset({"LPAR", "RPAR", "LSQB", "RSQB", "LBRACE", "RBRACE", "COMMA", "COLON", "SEMICOLON", "DOT"})
_NUMBERS = frozenset({"DEC_NUMBER", "HEX_NUMBER", "OCT_NUMBER", "BIN_NUMBER", "FLOAT_NUMBER", "IMAG_NUMBER"})
_COMMENT = re.compile(r"#[^\n]*")


def category_of(kind: str, text: str) -> str:
    """What kind of token this is to a reader (see the module docstring)."""
    if kind == "NAME":
        return "name"
    if kind == "ELEMENT":
        return "element"
    if kind in ("STRING", "LONG_STRING"):
        return "string"
    if kind in _NUMBERS:
        return "number"
    if kind == "COMMENT":
        return "comment"
    if kind == "NEWLINE":
        return "newline"
    if kind == "INVALID":
        # an unterminated string is read by an editor as the string it starts
        return "string" if text.lstrip("rRbBfFuU")[:1] in ("'", '"') else "invalid"
    if kind in _PUNCTUATION:
        return "punctuation"
    if text in KEYWORDS:
        return "keyword"
    return "operator"


@dataclass(frozen=True)
class Token:
    """One token: its terminal name, its text and where it is."""

    kind: str
    text: str
    span: Span

    @property
    def category(self) -> str:
        return category_of(self.kind, self.text)


def comments_in(text: str, start: int, end: int, index: Any) -> Iterator[Token]:
    """The comments between two tokens: ``text[start:end]`` holds only blanks, newlines, line
    continuations and comments (strings are tokens), so every '#' there starts one.
    ``index`` is the text's ``LineIndex``."""
    for m in _COMMENT.finditer(text, start, end):
        yield Token("COMMENT", m.group(), index.span(m.start(), m.end()))


def from_lark(tokens: Iterable[Any], text: str, index: Any) -> tuple[Token, ...]:
    """Our tokens from the lexer's (positions included), with the comments between them and a
    ``NEWLINE`` where each logical line ends."""
    out: list[Token] = []
    pos = 0
    for tok in tokens:
        start, end = tok.start_pos, tok.end_pos
        if start is None or end is None:
            continue
        if start > pos and "#" in text[pos:start]:
            out.extend(comments_in(text, pos, start, index))
        if tok.type == "_NEWLINE":
            # a newline token folds the comment lines after it; the line ends at its first '\n'
            nl = text.find("\n", start, end)
            if nl >= 0:
                out.append(Token("NEWLINE", "\n", index.span(nl, nl + 1)))
            if "#" in str(tok):
                out.extend(comments_in(text, start, end, index))
        else:
            # (the lexer's own positions: no search in the line index per token)
            out.append(Token(tok.type, str(tok), Span(tok.line, tok.column, tok.end_line, tok.end_column, start, end)))
        pos = max(pos, end)
    out.extend(comments_in(text, pos, len(text), index))
    out.sort(key=lambda t: t.span.offset)
    return tuple(out)
