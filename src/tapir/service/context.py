"""What surrounds the cursor in a script that may be half typed, read from the tolerant parse's
tokens: the token being typed, the ``$element`` or name typed so far, the receiver before a '.',
the call whose parentheses hold the cursor, the string the cursor is in. ``$list.match("Ro`` does
not parse, yet its tokens (``$list`` ``.`` ``match`` ``(`` and the unterminated ``"Ro``) say that
the cursor is in the first argument of ``match`` on ``$list``.

    ctx = cursor_context(view, view.at(4, 12))
    ctx.string                    # OpenString(start=12, quote='"', typed='Ro')
    ctx.call                      # CallSite(name='match', receiver=Chain('$list'), arg_index=0, ...)
    ctx.element, ctx.typed        # '$songs_' typed: 'songs_'; a name typed: its start
    ctx.receiver                  # after '.': the expression before it (``Chain``), else None
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tapir.dsl.tokens import Token

if TYPE_CHECKING:
    from tapir.service.script import ScriptView

__all__ = ["CallSite", "Chain", "CursorContext", "OpenString", "cursor_context", "open_string", "string_at",
           "string_prefix"]

_OPENERS = {"RPAR": "LPAR", "RSQB": "LSQB", "RBRACE": "LBRACE"}
_OPEN = frozenset(_OPENERS.values())
#: Token categories a primary expression is written with (``$list[0].match("a")``): what may
#: stand next to a '.', a '(' or a '[' with nothing between.
_CHAIN_CATEGORIES = frozenset({"name", "element", "string", "number", "keyword"})
_QUOTES = ("'", '"')


@dataclass(frozen=True)
class OpenString:
    """A single-line string literal the cursor is inside: where its quote is, which quote, what is
    typed before the cursor."""

    start: int
    quote: str
    typed: str


@dataclass(frozen=True)
class Chain:
    """A primary expression as written, by its tokens: names, ``$elements``, literals, and the
    attributes, calls and subscripts after them (``$list[0].match("a")``), with no space between."""

    tokens: tuple[Token, ...]
    text: str

    @property
    def start(self) -> int:
        return self.tokens[0].span.offset

    @property
    def end(self) -> int:
        return self.tokens[-1].span.end_offset


@dataclass(frozen=True)
class CallSite:
    """The innermost call whose parentheses hold the cursor."""

    #: The callee as written: ``scroll``, ``$list.match``, ``song.get_text``.
    callee: str
    #: The function or method name.
    name: str
    #: The receiver of a method call (``$list``), None for a plain call.
    receiver: Chain | None
    #: The offset of the '('.
    open_paren: int
    #: The index of the argument the cursor is in (positional arguments before it counted).
    arg_index: int
    #: The keyword of the argument the cursor is in (``direction`` in ``direction="up``), if any.
    keyword: str | None
    #: Keywords already given before the cursor.
    used_keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class CursorContext:
    """Everything completion and signature help read at a cursor (``cursor_context``)."""

    offset: int
    #: The token the cursor is in or right after (None in blank space).
    token: Token | None
    in_comment: bool
    #: Inside a string literal (``string`` says which, for the one-line strings completed in).
    in_string: bool
    #: The one-line string literal the cursor is in, if any (then nothing below is set but ``call``).
    string: OpenString | None
    #: After ``$``: what is typed of the element's name (``songs_``, ``songs:``), else None.
    element: str | None
    #: The name (or keyword) typed before the cursor, and where it starts.
    typed: str
    typed_start: int
    #: After a '.': the expression before it (None when there is none, or no '.').
    receiver: Chain | None
    after_dot: bool
    #: Nothing but blanks between the start of the line and what is typed.
    at_statement_start: bool
    call: CallSite | None

    @property
    def after_number(self) -> bool:
        return self.token is not None and self.token.category == "number"


def cursor_context(view: ScriptView, offset: int) -> CursorContext:
    """The cursor context at ``offset`` of the view's text, from its tokens."""
    return context_of(view.tokens, view.text, offset)


def context_of(tokens: Sequence[Token], text: str, offset: int) -> CursorContext:
    """The cursor context at ``offset`` of ``text`` (whose tokens are ``tokens``, in order).

    >>> from tapir.dsl.parser import parse_tolerant
    >>> ctx = context_of(parse_tolerant("$a.tap(").tokens, "$a.tap(", 7)
    >>> (ctx.call.name, ctx.call.receiver.text, ctx.call.arg_index)
    ('tap', '$a', 0)
    """
    before = _tokens_before(tokens, offset)
    tok = before[-1] if before and before[-1].span.end_offset >= offset else None
    in_comment = tok is not None and tok.kind == "COMMENT"
    string = _open_string(tok, text, offset)
    in_string = string is not None or _inside_string(tok, offset)
    call = None if in_comment else _call_site(before[:-1] if string is not None else before, text, offset)
    element = None if in_string or in_comment else _element_typed(before, tok, offset)
    typed, typed_start = _name_typed(tok, offset)
    code = [t for t in before[: len(before) - (1 if typed else 0)] if t.kind != "COMMENT"]
    dot = code[-1] if code and code[-1].kind == "DOT" and code[-1].span.end_offset == typed_start else None
    receiver = _chain_before(code[:-1], text, dot.span.offset) if dot is not None else None
    start_line = _line_of(text, typed_start)
    at_start = not code or _line_of(text, code[-1].span.end_offset) < start_line or code[-1].kind == "NEWLINE"
    return CursorContext(offset, tok, in_comment, in_string, string, element, typed, typed_start, receiver,
                         dot is not None, at_start, call)


def string_at(tokens: Sequence[Token], text: str, offset: int) -> OpenString | None:
    """The single-line string literal around ``offset`` (closed or not), if any."""
    before = _tokens_before(tokens, offset)
    tok = before[-1] if before and before[-1].span.end_offset >= offset else None
    return _open_string(tok, text, offset)


def open_string(text: str, offset: int) -> OpenString | None:
    """The single-line string literal the cursor is inside in ``text``, if any (for callers that
    hold a text and no parse: the REPL's input line)."""
    from tapir.dsl.parser import parse_tolerant  # (the service imports it anyway; not at import time)

    parsed = parse_tolerant(text)
    return string_at(parsed.tokens, parsed.text, offset)


# ---------------------------------------------------------------------------------------------
# Reading the tokens


# The token offsets of the last token tuple asked about: queries at one view share them.
_starts_cache: tuple[Sequence[Token], list[int]] | None = None


def _tokens_before(tokens: Sequence[Token], offset: int) -> Sequence[Token]:
    """The tokens that start before ``offset``."""
    global _starts_cache
    cached = _starts_cache
    if cached is None or cached[0] is not tokens:
        cached = _starts_cache = (tokens, [t.span.offset for t in tokens])
    return tokens[: bisect_left(cached[1], offset)]


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def _open_string(tok: Token | None, text: str, offset: int) -> OpenString | None:
    """The string ``tok`` is, when the cursor is after its opening quote and not after its closing
    one: a one-line string, closed (``STRING``) or not (an ``INVALID`` token from the quote to the
    end of the line). Triple-quoted strings are not completed in."""
    if tok is None or tok.kind not in ("STRING", "INVALID") or "\n" in tok.text:
        return None
    quote_at = len(string_prefix(tok.text))
    quote = tok.text[quote_at : quote_at + 1]
    if quote not in _QUOTES:
        return None
    if tok.text.startswith(quote * 3, quote_at):
        return None
    start = tok.span.offset + quote_at
    closed = tok.kind == "STRING"
    if not start < offset <= tok.span.end_offset - (1 if closed else 0):
        return None
    return OpenString(start, quote, text[start + 1 : offset])


def _inside_string(tok: Token | None, offset: int) -> bool:
    """Whether the cursor is inside a string token, after its opening quote: before the end of a
    closed one, up to the end of an unterminated one (an ``INVALID`` token that starts so)."""
    if tok is None or tok.kind not in ("STRING", "LONG_STRING", "INVALID"):
        return False
    prefix = string_prefix(tok.text)
    if tok.text[len(prefix) : len(prefix) + 1] not in _QUOTES or offset <= tok.span.offset + len(prefix):
        return False
    return offset <= tok.span.end_offset if tok.kind == "INVALID" else offset < tok.span.end_offset


def string_prefix(text: str) -> str:
    """The prefix of a string literal's text: ``string_prefix('rb"x"') == 'rb'``."""
    return text[: len(text) - len(text.lstrip("rRbBfFuU"))]


def _element_typed(before: Sequence[Token], tok: Token | None, offset: int) -> str | None:
    """What is typed of an ``$element`` ending at the cursor: ``$songs_`` (an ``ELEMENT``), a lone
    ``$`` (which the lexer cannot read), or ``$songs:`` (the upstream spelling half typed)."""
    if tok is None:
        return None
    if tok.kind == "ELEMENT":
        return tok.text[1 : offset - tok.span.offset]
    if tok.kind == "INVALID" and tok.text == "$" and offset == tok.span.end_offset:
        return ""
    if tok.kind == "COLON" and offset == tok.span.end_offset and len(before) > 1:
        prev = before[-2]
        if prev.kind == "ELEMENT" and ":" not in prev.text and prev.span.end_offset == tok.span.offset:
            return prev.text[1:] + ":"
    return None


def _name_typed(tok: Token | None, offset: int) -> tuple[str, int]:
    """The name (or keyword) typed before the cursor and its start; ``("", offset)`` for none.
    The cursor in a string's prefix (``f|"...``) is in a name as far as what is typed tells."""
    if tok is not None and tok.category == "string" and offset - tok.span.offset <= len(string_prefix(tok.text)):
        return tok.text[: offset - tok.span.offset], tok.span.offset
    if tok is None or tok.category not in ("name", "keyword") or not tok.text[:1].isidentifier():
        return "", offset
    return tok.text[: offset - tok.span.offset], tok.span.offset


def _chain_before(tokens: Sequence[Token], text: str, end: int) -> Chain | None:
    """The primary expression whose last token ends at ``end`` (the end of ``tokens``): walking back
    over adjacent names, literals, '.' and whole bracket groups."""
    i = len(tokens) - 1
    first = len(tokens)
    while i >= 0:
        t = tokens[i]
        if t.span.end_offset != end:
            break  # something (a space) between: the expression ended
        if t.kind in _OPENERS:
            i = _opener_of(tokens, i)
            if i < 0:
                break
        elif t.category not in _CHAIN_CATEGORIES and t.kind != "DOT":
            break
        first = i
        end = tokens[i].span.offset
        i -= 1
    while first < len(tokens) and tokens[first].kind == "DOT":
        first += 1  # (a chain starts with its atom)
    if first >= len(tokens):
        return None
    chain = tuple(t for t in tokens[first:] if t.kind not in ("NEWLINE", "COMMENT"))
    return Chain(chain, text[chain[0].span.offset : chain[-1].span.end_offset])


def _opener_of(tokens: Sequence[Token], close: int) -> int:
    """The index of the bracket that the closing bracket at ``close`` closes (-1: none)."""
    depth = 0
    for j in range(close, -1, -1):
        kind = tokens[j].kind
        if kind in _OPENERS:
            depth += 1
        elif kind in _OPEN:
            depth -= 1
            if depth == 0:
                return j
    return -1


def _call_site(before: Sequence[Token], text: str, offset: int) -> CallSite | None:
    """The call whose '(' is still open before the cursor: walking back over balanced brackets,
    counting the arguments on the way."""
    depth = 0
    commas: list[int] = []  # the indices of the top-level commas, the cursor's own argument's first
    i = len(before) - 1
    while i >= 0:
        kind = before[i].kind
        if kind in _OPENERS:
            depth += 1
        elif kind in _OPEN:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and kind == "COMMA":
            commas.append(i)
        i -= 1
    if i < 0 or before[i].kind != "LPAR":
        return None  # not in brackets, or inside a list or dict display
    paren = before[i]
    callee = _chain_before(before[:i], text, paren.span.offset)
    if callee is None or not (callee.text[-1].isalnum() or callee.text[-1] == "_"):
        return None
    last = callee.tokens
    receiver = None
    if len(last) >= 3 and last[-2].kind == "DOT":
        receiver = Chain(last[:-2], text[callee.start : last[-2].span.offset])
    bounds = [i, *reversed(commas), len(before)]
    segments = [before[a + 1 : b] for a, b in zip(bounds, bounds[1:], strict=False)]
    used = tuple(k for k in (_keyword_of(s) for s in segments[:-1]) if k)
    return CallSite(callee.text, last[-1].text, receiver, paren.span.offset, len(commas), _keyword_of(segments[-1]),
                    used)


def _keyword_of(segment: Sequence[Token]) -> str | None:
    """The keyword of an argument written as ``name=...``."""
    code = [t for t in segment if t.kind not in ("NEWLINE", "COMMENT")]
    if len(code) >= 2 and code[0].kind == "NAME" and code[1].kind == "EQUAL":
        return code[0].text
    return None
