"""Syntax highlighting for the REPL's input, from the parser's own tokens (no Pygments).

    TapirLexer(lambda: symbols)      # a prompt_toolkit Lexer; ``symbols`` marks unknown $elements
    fragments("x = $a__b.tap()")     # [[('class:name', 'x'), ('', ' '), ...]] one list per line

Tokens come from the tolerant parse (``tapir.dsl.parser.parse_tolerant``), so half-typed input
is coloured as far as it reads; what follows an unterminated string is coloured as that string.
Meta commands (``:screen``) get their own colour.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.styles import Style

from tapir.dsl.parser import parse_tolerant
from tapir.dsl.registry import REGISTRY
from tapir.dsl.symbols import SymbolTable

__all__ = ["STYLE", "TapirLexer", "fragments"]

#: The colours (ANSI names, so the terminal's palette decides).
STYLE = Style.from_dict({
    "keyword": "ansiblue bold",
    "builtin": "ansicyan",
    "function": "ansiyellow",
    "element": "ansimagenta bold",
    "element.unknown": "ansired underline",
    "string": "ansigreen",
    "number": "ansiyellow",
    "comment": "ansibrightblack italic",
    "meta": "ansicyan bold",
    "bottom-toolbar": "noreverse bg:ansibrightblack fg:ansiwhite",
})

_CATEGORY_STYLE = {"keyword": "class:keyword", "string": "class:string", "number": "class:number",
                   "comment": "class:comment", "element": "class:element"}


def fragments(text: str, symbols: SymbolTable | None = None) -> list[StyleAndTextTuples]:
    """``text`` split into lines of (style, text) fragments."""
    if text.lstrip().startswith(":"):
        head, sep, rest = text.partition(" ")
        return _lines([("class:meta", head), ("", sep + rest)])
    return _lines(list(_styled(text, symbols)))


@lru_cache(maxsize=64)
def _tokens(text: str) -> tuple[tuple[int, int, str, str], ...]:
    return tuple((t.span.offset, t.span.end_offset, t.category, t.text) for t in parse_tolerant(text).tokens)


@lru_cache(maxsize=1)
def _builtins() -> frozenset[str]:
    return frozenset(REGISTRY.global_names())


def _styled(text: str, symbols: SymbolTable | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    previous = ""
    builtins = _builtins()
    for start, end, category, tok in _tokens(text):
        if start < pos or start < 0:
            continue
        if start > pos:
            out.append(("", text[pos:start]))
        style = _CATEGORY_STYLE.get(category, "")
        if category == "name":
            if previous == "def":
                style = "class:function"
            elif tok in builtins and previous != ".":
                style = "class:builtin"
        elif category == "element" and symbols is not None and symbols.element(tok[1:]) is None \
                and symbols.screen(tok[1:].rstrip("_")) is None:
            style = "class:element.unknown"
        out.append((style, text[start:end]))
        pos = end
        previous = tok
    rest = text[pos:]
    if rest:
        # an unterminated string ends the tokens: colour it as the string it is
        quote = min((i for i in (rest.find('"'), rest.find("'")) if i >= 0), default=-1)
        if quote >= 0 and not rest[:quote].strip().startswith("#"):
            out += [("", rest[:quote]), ("class:string", rest[quote:])]
        else:
            out.append(("", rest))
    return out


def _lines(frags: list[tuple[str, str]]) -> list[StyleAndTextTuples]:
    lines: list[StyleAndTextTuples] = [[]]
    for style, text in frags:
        parts = text.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append([])
            if part:
                lines[-1].append((style, part))
    return lines


class TapirLexer(Lexer):
    """prompt_toolkit's lexer for Tapir input; ``symbols`` is asked each time (the session's
    document may change)."""

    def __init__(self, symbols: Callable[[], SymbolTable | None] | None = None) -> None:
        self._symbols = symbols

    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        lines = fragments(document.text, self._symbols() if self._symbols is not None else None)

        def line(i: int) -> StyleAndTextTuples:
            return lines[i] if i < len(lines) else []

        return line
