"""The Tapir parser: script text -> ``tapir.dsl.ast.Module``, strictly or tolerantly.

    from tapir.dsl.parser import parse, parse_tolerant
    module = parse(source, "x.tap")            # raises TapirSyntaxError (or UnsupportedConstruct)
    result = parse_tolerant(source, "x.tap")    # never raises
    result.module, result.errors, result.tokens # a tree with ErrorStmt/Refused nodes, every problem,
                                                # the tokens with comments

Pipeline: Lark's basic lexer, driven token by token -> ``_TokenStream``, the postlexer (Python's
indentation rules, bracket matching, early refusal of import/class/lambda/...) -> Lark's LALR
parser, fed token by token so that a failure can be explained with the token stream's state at
that point, calling ``AstBuilder`` on each reduction (no parse tree is built). Constructs that are
read but refused become ``Refused`` nodes and are reported after parsing
(``tapir.dsl.syntax_checks``), with 'break' outside a loop and 'return' outside a function.

The strict ``parse`` (what runs scripts) raises the first problem, as a ``TapirSyntaxError``
carrying the span, the file name and the source. ``parse_tolerant`` (what the checker and the
language service read) recovers at statement boundaries: on an error it pops the parser back to
the start of the statement, skips to the end of its logical line (or to the line where an
unclosed bracket evidently ended), feeds the grammar's ``ERROR_TEXT`` terminal in its place
(an ``ErrorStmt``; an indented block after a broken header is parsed as its body) and goes on,
so every independent mistake is reported. The compiled grammar is cached by Lark in the
temporary directory, so a new process loads it in milliseconds. The result's tokens include the
text the lexer could not read (``INVALID``: an unterminated string, a lone ``$``), which is where
an editor's cursor is while typing (``tapir.service.context`` reads them).

Lark's public API has no way to pop a parser back to a statement's start or to move a lexer, so
the recovery uses lark internals (``_build_lexer``, ``LexerState.line_ctr``, ``ParserState``'s
``parse_conf``, ``state_stack``, ``value_stack``): lark is pinned to a minor release and
tests/test_lark_contract.py asserts each of them.
"""

from __future__ import annotations

import keyword
import re
import sys
import threading
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator
from copy import copy
from dataclasses import dataclass, field, replace
from functools import cached_property
from heapq import merge
from typing import Any

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedToken
from lark.indenter import Indenter
from lark.lexer import LexerThread

from tapir.core.diagnostics import Diagnostic
from tapir.core.errors import Span, TapirError, TapirSyntaxError, UnsupportedConstruct
from tapir.core.positions import LineIndex, normalize_newlines
from tapir.dsl.ast import Expr, Module, Name, Refused
from tapir.dsl.ast_builder import AstBuilder, shift_spans
from tapir.dsl.gcpause import paused_gc
from tapir.dsl.syntax_checks import post_parse_problems, refusal_error, statement_context_problems
from tapir.dsl.syntax_messages import (
    UNPACKING_MESSAGE,
    refused_token,
    token_span,
    unexpected_character,
    unexpected_token,
)
from tapir.dsl.tokens import KEYWORDS, from_lark
from tapir.dsl.tokens import Token as ScriptToken
from tapir.grammar import GRAMMAR_DIR

__all__ = ["ParseResult", "parse", "parse_expression_field", "parse_tolerant"]

MAX_BRACKET_DEPTH = 100
MAX_INDENT_DEPTH = 100
#: A tolerant parse gives up after this many errors (the rest of the text is one error statement).
MAX_ERRORS = 200

_OPEN = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_CLOSE = {"RPAR", "RSQB", "RBRACE"}
_PAIR = {"(": ")", "[": "]", "{": "}"}
_CLOSE_TYPE = {")": "RPAR", "]": "RSQB", "}": "RBRACE"}
# After these a '*' or '**' can only be unpacking (*args, **kwargs, [*xs]), never arithmetic.
_UNPACK_CONTEXT = {None, "_NEWLINE", "_INDENT", "_DEDENT", "SEMICOLON", "LPAR", "LSQB", "LBRACE", "COMMA", "EQUAL",
                   "RETURN", "IN", "COLON"}
_BOUNDARY = {"_NEWLINE", "_INDENT", "_DEDENT"}
_STATEMENT_KEYWORDS = {"IF", "WHILE", "FOR", "DEF", "ELSE", "ELIF", "RETURN", "PASS", "BREAK", "CONTINUE", "ASSERT"}
#: The terminal a tolerant postlexer yields in place of a refused token: no rule takes it, so the
#: parser stops there and the recovery reports the refusal instead of a parse error.
INVALID = "INVALID"


@dataclass(frozen=True)
class ParseResult:
    """What a tolerant parse read: a module (with ``ErrorStmt``/``Refused`` nodes where it could not
    read or does not allow something), every problem (sorted by position) and every token."""

    module: Module
    errors: tuple[Diagnostic, ...]
    #: The text as parsed (newlines normalised, a byte-order mark dropped): offsets refer to it.
    text: str
    _lexed: tuple[Token, ...] = field(default=(), repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return not self.errors

    @cached_property
    def tokens(self) -> tuple[ScriptToken, ...]:
        """Every token, comments included, in order (made when first asked for)."""
        return from_lark(self._lexed, self.text, LineIndex(self.text))


class TapirIndenter(Indenter):
    """Lark postlexer settings (the grammar's indentation terminals); ``_TokenStream`` does the work."""

    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8
    # Terminals the grammar never uses but the lexer must still produce, to be refused by name.
    always_accept = ("_NEWLINE", "WALRUS", "AT")

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:  # pragma: no cover - the parser
        raise NotImplementedError("tapir.dsl.parser drives its own _TokenStream")


class _TokenStream:
    """The parser's tokens: the lexer's, with indentation tokens, bracket matching and refusals,
    and the state an error message needs.

    Strict, every problem raises. Tolerant, a problem is recorded and the stream goes on: a
    refused or unreadable token becomes an ``INVALID`` token (``pending`` holds its error) that
    stops the parser there, a stray closing bracket is dropped, a wrong one replaced by the right
    one, an indentation problem read as the nearest level. ``resync`` starts a new logical line
    at a token (after an unclosed bracket), and ``push`` puts tokens back.
    """

    def __init__(self, lexer: Any, text: str, *, tolerant: bool = False) -> None:
        self._lexer = lexer
        self._lex_state = LexerThread.from_text(lexer, text).state
        self.text = text
        self.tolerant = tolerant
        #: Problems found and passed over (tolerant).
        self.errors: list[TapirError] = []
        #: The error of the INVALID token just yielded (tolerant).
        self.pending: TapirError | None = None
        #: Every token the lexer produced, in order (tolerant: for the tokens of the result).
        self.kept: list[Token] = []
        #: The text the lexer could not read, as INVALID tokens (tolerant): an unterminated string
        #: or a lone '$' is what an editor's cursor is in while typing, so the result keeps them.
        self.unread: list[Token] = []
        # Each level: (column with tabs to multiples of 8, column with tabs as 1) like CPython,
        # so that a tab/space mix which depends on the tab width is refused.
        self.indents: list[tuple[int, int]] = [(0, 0)]
        self.brackets: list[Token] = []
        # The open brackets before the most recent token (a closing bracket has popped one).
        self.enclosing: tuple[Token, ...] = ()
        # The first token of the most recent token's line.
        self.line_first: Token | None = None
        # The last element read in the `$screen:element` spelling (it can swallow a ':').
        self.colon_element: Token | None = None
        self.prev_type: str | None = None
        self.last: Token | None = None
        self._queue: deque[Token] = deque()
        self._gen = self._tokens()

    def __iter__(self) -> _TokenStream:
        return self

    def __next__(self) -> Token:
        if self._queue:
            return self._queue.popleft()
        return next(self._gen)

    def push(self, *tokens: Token) -> None:
        """Put tokens back: they come next, in this order."""
        self._queue.extendleft(reversed(tokens))

    def _problem(self, exc: TapirError) -> None:
        """A problem the stream can pass over by itself: raised (strict) or recorded."""
        if not self.tolerant:
            raise exc
        self.errors.append(exc)

    def _invalid(self, exc: TapirError, tok: Token) -> Token:
        """A problem that ends the statement: raised (strict), or an INVALID token to yield."""
        if not self.tolerant:
            raise exc
        self.pending = exc
        return Token.new_borrow_pos(INVALID, str(tok), tok)

    def _raw(self) -> Iterator[Token]:
        """The lexer's tokens; tolerant, unreadable text becomes an INVALID token and lexing goes
        on after it (an unterminated string: at the end of its line)."""
        lexer, state = self._lexer, self._lex_state
        assert state is not None
        while True:
            try:
                tok = lexer.next_token(state)
            except EOFError:
                return
            except UnexpectedCharacters as exc:
                pos = exc.pos_in_stream or 0
                err = unexpected_character(self.text, exc.line, exc.column, pos)
                if not self.tolerant:
                    raise err from None
                ctr = state.line_ctr
                line_end = self.text.find("\n", pos)
                line_end = len(self.text) if line_end < 0 else line_end
                if err.message.startswith("unterminated triple-quoted"):
                    # the rest of the text is the string, as in Python (the text always ends in '\n')
                    skip_to = len(self.text) - 1
                elif err.message.startswith("unterminated string"):
                    skip_to = line_end
                else:
                    skip_to = pos + 1
                skipped = self.text[pos : max(min(skip_to, len(self.text)), pos + 1)]
                bad = Token(INVALID, skipped, pos, ctr.line, ctr.column)
                ctr.feed(skipped)
                bad.end_line, bad.end_column, bad.end_pos = ctr.line, ctr.column, ctr.char_pos
                self.unread.append(bad)
                self.pending = err
                yield bad
                continue
            if self.tolerant:
                self.kept.append(tok)
            yield tok

    def _tokens(self) -> Iterator[Token]:
        brackets = self.brackets
        for tok in self._raw():
            t = tok.type
            if t == INVALID:  # unreadable text (tolerant): its error is already pending
                self.prev_type, self.last = t, tok
                yield tok
                continue
            if t == "_NEWLINE":
                if brackets:
                    continue  # implicit line joining
                yield tok
                self.prev_type = t
                yield from self._indentation(tok)
                continue
            at = token_span(tok)
            if self.prev_type is None and self.last is None and at.column > 1:
                self._problem(TapirSyntaxError(
                    "unexpected indent", Span(at.line, 1, at.line, at.column, 0, tok.start_pos or 0),
                    hint="the first line of a script is not indented",
                ))
            self.enclosing = tuple(brackets) if brackets or t in _OPEN else ()
            last = self.last
            if last is None or self.prev_type == "_NEWLINE" or at.line > token_span(last).end_line:
                self.line_first = tok
            if t in _OPEN:
                if len(brackets) >= MAX_BRACKET_DEPTH:
                    # no recovery: nesting this deep is beyond what the later passes can walk
                    raise TapirSyntaxError(f"too many nested brackets (at most {MAX_BRACKET_DEPTH})", at)
                brackets.append(tok)
            elif t in _CLOSE:
                if not brackets:
                    self._problem(TapirSyntaxError(f"unmatched '{tok}'", at))
                    continue  # tolerant: a stray closing bracket is dropped
                opener = brackets.pop()
                if _PAIR[str(opener)] != str(tok):
                    opened = token_span(opener)
                    self._problem(TapirSyntaxError(
                        f"'{tok}' does not match '{opener}' opened at {opened.line}:{opened.column}", at
                    ))
                    closer = _PAIR[str(opener)]
                    tok = Token.new_borrow_pos(_CLOSE_TYPE[closer], closer, tok)
            elif t == "NAME" or t == "WALRUS" or t == "AT":
                refused = refused_token(tok)
                if refused is not None:
                    tok = self._invalid(refused, tok)
            elif t == "ELEMENT":
                if ":" in tok:
                    self.colon_element = tok
            elif (t == "STAR" or t == "DSTAR") and self.prev_type in _UNPACK_CONTEXT:
                tok = self._invalid(UnsupportedConstruct(UNPACKING_MESSAGE, at), tok)
            yield tok
            self.prev_type = t
            self.last = tok
        last = self.last
        if brackets:
            b = brackets[-1]
            opened = token_span(b)
            err = TapirSyntaxError(f"unclosed '{b}' opened at {opened.line}:{opened.column}", opened)
            yield self._invalid(err, last if last is not None else b)
            brackets.clear()
        if last is not None and self.prev_type != "_NEWLINE":
            # the text ended without a newline token (a backslash continuation): end the statement
            yield Token.new_borrow_pos("_NEWLINE", "\n", last)
        while len(self.indents) > 1:
            self.indents.pop()
            end = token_span(last) if last is not None else Span(1, 1, 1, 1, 0, 0)
            yield Token("_DEDENT", "", end.end_offset, end.end_line, end.end_column, end.end_line, end.end_column,
                        end.end_offset)

    def _indentation(self, nl: Token) -> Iterator[Token]:
        """_INDENT/_DEDENT for the line after the newline token ``nl``."""
        text = str(nl)
        ws = text[text.rfind("\n") + 1 :]
        col = alt = 0
        for ch in ws:
            if ch == " ":
                col += 1
                alt += 1
            elif ch == "\t":
                col = (col // 8 + 1) * 8
                alt += 1
        here = token_span(nl)
        line, column = here.end_line, here.end_column
        pos = nl.end_pos or 0
        indents = self.indents
        top_col, top_alt = indents[-1]
        if col == top_col:
            if alt != top_alt:
                self._problem(self._tab_error(line, column, pos))
            return
        if col > top_col:
            if alt <= top_alt:
                self._problem(self._tab_error(line, column, pos))
            if len(indents) > MAX_INDENT_DEPTH:
                raise TapirSyntaxError(f"too many levels of indentation (at most {MAX_INDENT_DEPTH})",
                                       Span(line, 1, line, max(column, 2), pos - len(ws), pos))
            indents.append((col, alt))
            yield Token("_INDENT", ws, pos, line, column, line, column, pos)
            return
        while col < indents[-1][0]:
            indents.pop()
            yield Token("_DEDENT", "", pos, line, column, line, column, pos)
        if col != indents[-1][0]:
            # tolerant: the line is read at the enclosing level it falls short of
            self._problem(TapirSyntaxError(
                "unindent does not match any outer indentation level",
                Span(line, 1, line, max(column, 2), pos - len(ws), pos),
            ))
        elif alt != indents[-1][1]:
            self._problem(self._tab_error(line, column, pos))

    @staticmethod
    def _tab_error(line: int, column: int, pos: int) -> TapirSyntaxError:
        return TapirSyntaxError(
            "inconsistent use of tabs and spaces in indentation",
            Span(line, 1, line, max(column, 2), pos - column + 1, pos),
            hint="indent with spaces only (or tabs only)",
        )

    def resync(self, tok: Token) -> Token:
        """Start a new logical line at ``tok``, read again from there (its brackets are taken as
        closed): returns the newline token that ends the line before; the indentation tokens of
        ``tok``'s line come next from the stream, then ``tok`` and what follows it, lexed anew."""
        self.brackets.clear()
        self._queue.clear()
        start = tok.start_pos or 0
        assert self._lex_state is not None
        ctr = self._lex_state.line_ctr
        ctr.char_pos, ctr.line, ctr.column = start, tok.line or 1, tok.column or 1
        ctr.line_start_pos = start - (ctr.column - 1)
        self._lex_state.last_token = None
        for read in (self.kept, self.unread):
            while read and (read[-1].start_pos or 0) >= start:
                read.pop()
        line_start = self.text.rfind("\n", 0, start) + 1
        ws = self.text[line_start:start]
        nl = Token("_NEWLINE", "\n" + ws, max(line_start - 1, 0), max((tok.line or 1) - 1, 1), 1,
                   tok.line, len(ws) + 1, start)
        self.prev_type = "_NEWLINE"
        self.last = None
        self.line_first = None
        self.push(*self._indentation(nl))
        return nl


# ---------------------------------------------------------------------------------------------
# The grammar, compiled once


_lock = threading.Lock()
_lark_instance: Lark | None = None
_lexer_instance: Any = None
_builder: AstBuilder | None = None


def _lark() -> tuple[Lark, Any, AstBuilder]:
    """The grammar compiled once per process, its lexer, and the AST callbacks wired into it."""
    global _lark_instance, _lexer_instance, _builder
    if _lark_instance is None:
        with _lock:
            if _lark_instance is None:
                builder = AstBuilder(parse_expression_field)
                lark = Lark(
                    (GRAMMAR_DIR / "tapir.lark").read_text(encoding="utf-8"),
                    parser="lalr",
                    lexer="basic",
                    start=["file_input", "fexpr"],
                    postlex=TapirIndenter(),
                    transformer=builder,
                    keep_all_tokens=True,
                    maybe_placeholders=True,
                    cache=True,
                )
                # Lark.lex() would build a new lexer on every call; build it once.
                _lexer_instance = lark._build_lexer()
                _builder = builder
                _lark_instance = lark
    assert _builder is not None
    return _lark_instance, _lexer_instance, _builder


def _accepted(state: Any, candidates: set[str]) -> set[str]:
    """The terminals the parser can really take next.

    LALR tables merge look-aheads, so the terminals listed for a failing state may include some
    that a reduction would reject; trying each one on a copy of the parser gives the exact set.
    """
    conf = copy(state.parse_conf)
    conf.callbacks = {}  # no AST building while trying
    out = set()
    for t in candidates:
        trial = state.copy(deepcopy_values=False)
        trial.parse_conf = conf
        try:
            trial.feed_token(Token(t, ""), t == "$END")
        except (UnexpectedToken, AssertionError, IndexError):
            continue
        out.add(t)
    return out


def _first_position(values: list[Any], builder: AstBuilder) -> Span | None:
    """Where the first of some parser stack values starts (tokens, nodes, lists of them)."""
    for v in values:
        if isinstance(v, Token) and v.start_pos is not None:
            return token_span(v)
        if isinstance(v, (list, tuple)) and not isinstance(v, Token):
            found = _first_position(list(v), builder)
            if found is not None:
                return found
        elif hasattr(v, "span"):
            return builder._sp(v)
    return None


def _last_position(values: list[Any], builder: AstBuilder) -> Span | None:
    """Where the last of some parser stack values ends (newline and indentation tokens aside)."""
    for v in reversed(values):
        if isinstance(v, Token):
            if v.type not in _BOUNDARY and v.start_pos is not None:
                return token_span(v)
        elif isinstance(v, (list, tuple)):
            found = _last_position(list(v), builder)
            if found is not None:
                return found
        elif hasattr(v, "span"):
            return builder._sp(v)
    return None


def _bound_names(tokens: list[Token]) -> tuple[str, ...]:
    """The names a statement that could not be parsed appears to bind: those before a top-level
    '=' (or an augmented assignment), a loop's targets, a def's name and parameters."""
    if not tokens:
        return ()
    first = tokens[0].type
    if first == "DEF":
        return tuple(dict.fromkeys(str(t) for t in tokens if t.type == "NAME"))
    if first == "FOR":
        names = []
        for t in tokens[1:]:
            if t.type == "IN":
                break
            if t.type == "NAME":
                names.append(str(t))
        return tuple(dict.fromkeys(names))
    depth = 0
    for i, t in enumerate(tokens):
        if t.type in _OPEN:
            depth += 1
        elif t.type in _CLOSE:
            depth -= 1
        elif depth == 0 and t.type in ("EQUAL", "AUGASSIGN"):
            return tuple(dict.fromkeys(str(x) for x in tokens[:i] if x.type == "NAME"))
    return ()


class _Run:
    """One parse of one text: drives the token stream into the LALR parser."""

    def __init__(self, text: str, start: str, *, tolerant: bool) -> None:
        lark, lexer, builder = _lark()
        self.text = text
        self.tolerant = tolerant
        self.builder = builder
        self.stream = _TokenStream(lexer, text, tolerant=tolerant)
        self.state = lark.parse_interactive(start=start).parser_state
        self.errors: list[TapirError] = []
        self.prev: Token | None = None

    # -- strict ---------------------------------------------------------------------------------

    def strict(self) -> Any:
        """Parse; raise the first problem (a refusal read before the failing token comes first)."""
        stream, state = self.stream, self.state
        tok: Token | None = None
        prev: Token | None = None
        clock = getattr(_CLOCK, "fn", None)
        try:
            for tok in stream:
                if clock is not None:
                    _CLOCK.tokens += 1
                    if _CLOCK.tokens % _CLOCK_EVERY == 0:
                        clock()
                state.feed_token(tok)
                prev = tok
            end = Token.new_borrow_pos("$END", "", prev) if prev is not None else Token("$END", "", 0, 1, 1, 1, 1, 0)
            tok = end
            return state.feed_token(end, True)
        except UnexpectedToken as exc:
            assert tok is not None
            self._raise_refusal_first()
            raise self._describe(tok, exc.state, prev) from None
        except TapirError:
            self._raise_refusal_first()
            raise

    def _raise_refusal_first(self) -> None:
        first = self.builder.first_refusal()
        if first is not None:
            raise refusal_error(first) from None

    def _describe(self, tok: Token, state: Any, prev: Token | None) -> TapirSyntaxError:
        stream = self.stream
        # `enclosing` is the bracket state before the failing token; for $END it is the end state.
        brackets = stream.enclosing if tok.type != "$END" else tuple(stream.brackets)
        expected = {t for t in state.parse_conf.states[state.position] if t.isupper()} - {"ERROR_TEXT"}
        expected = (_accepted(state, expected) or expected) - {"ERROR_TEXT"}
        return unexpected_token(tok, expected, state.value_stack, prev, brackets, stream.line_first, self.text,
                                stream.colon_element)

    # -- tolerant -------------------------------------------------------------------------------

    def tolerant_parse(self) -> Any:
        """Parse, recovering from every error at the statement it is in; returns the module."""
        stream = self.stream
        for tok in stream:
            self._feed(tok)
        last = self.prev
        end = Token.new_borrow_pos("$END", "", last) if last is not None else Token("$END", "", 0, 1, 1, 1, 1, 0)
        for _ in range(4):
            try:
                return self.state.feed_token(end, True)
            except UnexpectedToken:
                self._recover(end)
                for tok in stream:  # what the recovery put back
                    self._feed(tok)
        raise TapirSyntaxError("cannot read the end of the script", Span.point(end.line or 1, end.column or 1))

    def _feed(self, tok: Token) -> None:
        try:
            self.state.feed_token(tok)
            self.prev = tok
        except UnexpectedToken:
            self._recover(tok)

    def _error_token(self, start: Span, end: Span) -> Token:
        a, b = max(start.offset, 0), max(end.end_offset, start.offset, 0)
        return Token("ERROR_TEXT", self.text[a:b], a, start.line, start.column, end.end_line, end.end_column, b)

    def _truncate(self) -> list[Any]:
        """Pop the parser back to the innermost point where a statement can start; returns the
        values popped (the part of the broken statement read so far)."""
        st = self.state
        states = st.parse_conf.states
        conf = copy(st.parse_conf)
        conf.callbacks = {}
        probe = Token("ERROR_TEXT", "")
        for i in range(len(st.value_stack), -1, -1):
            if "ERROR_TEXT" not in states[st.state_stack[i]]:
                continue
            trial = st.copy(deepcopy_values=False)
            trial.parse_conf = conf
            del trial.state_stack[i + 1 :]
            del trial.value_stack[i:]
            try:
                trial.feed_token(probe)
            except (UnexpectedToken, AssertionError, IndexError):
                continue
            popped = st.value_stack[i:]
            del st.state_stack[i + 1 :]
            del st.value_stack[i:]
            return popped
        return []

    def _take_pending(self) -> TapirError | None:
        """The error of the INVALID token just read (None when it was reported already: the
        recovery put the token back)."""
        err = self.stream.pending
        self.stream.pending = None
        return err

    def _recover(self, tok: Token) -> None:
        stream = self.stream
        err = self._take_pending() if tok.type == INVALID else self._describe(tok, self.state, self.prev)
        if err is not None:
            self.errors.append(err)
        if len(self.errors) + len(stream.errors) > MAX_ERRORS:
            self._give_up(tok)
            return
        popped = self._truncate()
        begin = _first_position(popped, self.builder)
        read = _last_position(popped, self.builder)  # the end of what was read of the statement
        prev = self.prev
        here = token_span(tok)
        if tok.type in _BOUNDARY or tok.type == "$END":  # these cover no text of the statement
            here = Span(here.line, here.column, here.line, here.column, here.offset, here.offset)
        if tok.type == "$END" or (begin is not None and prev is not None and prev.type in _BOUNDARY
                                  and tok.type not in _BOUNDARY):
            # what was read ended its line (a block header without a block): the error is that
            # line; the failing token starts the next statement
            self._error_statement(begin or here, read or here, prev)
            if tok.type != "$END":
                stream.push(tok)
            return
        if tok.type in ("_INDENT", "_DEDENT"):
            # an unexpected indent starts the block of an empty error statement; an empty block
            # gets one
            self._error_statement(begin or here, read or here, prev)
            stream.push(tok)
            return
        if tok.type == "_NEWLINE":
            self._error_statement(begin or here, read or here, tok)
            return
        # skip the rest of the logical line (or up to where an unclosed bracket evidently ends)
        last = tok
        first = stream.line_first
        if err is not None and err.message.startswith("unclosed") and stream.brackets and first is not None \
                and (first.line or 0) > (stream.brackets[-1].line or 0):
            # the statement ran into the line that starts at `first`: read that line again
            before = self._last_before(first)
            nl = stream.resync(first)
            self._error_statement(begin or here, before or read or here, nl)
            return
        for t in stream:
            if t.type == "_NEWLINE":
                self._error_statement(begin or here, token_span(last), t)
                return
            if t.type == INVALID:
                pending = self._take_pending()
                if pending is not None:
                    self.errors.append(pending)
            elif self._bracket_ran_out(t):
                nl = stream.resync(t)
                self._error_statement(begin or here, token_span(last), nl)
                return
            last = t
        self._error_statement(begin or here, token_span(last), None)

    def _last_before(self, tok: Token) -> Span | None:
        """The span of the last token read before ``tok`` (newlines aside)."""
        start = tok.start_pos or 0
        for k in reversed(self.stream.kept):
            if (k.start_pos or 0) < start and k.type != "_NEWLINE":
                return token_span(k)
        return None

    def _bracket_ran_out(self, t: Token) -> bool:
        """While skipping: ``t`` starts a line that cannot continue the open bracket's statement
        (a statement keyword, or no further right than the line that opened the bracket)."""
        stream = self.stream
        if not stream.brackets or stream.line_first is not t:
            return False
        opened = token_span(stream.brackets[-1])
        if opened.line >= (t.line or 0):
            return False
        line_start = self.text.rfind("\n", 0, opened.offset) + 1
        line = self.text[line_start : self.text.find("\n", line_start) if "\n" in self.text[line_start:] else None]
        indent = len(line) - len(line.lstrip(" \t")) + 1
        return t.type in _STATEMENT_KEYWORDS or (t.column or 1) <= indent

    def _error_statement(self, start: Span, end: Span, newline: Token | None) -> None:
        """Feed ERROR_TEXT for ``start..end`` and the newline ending it."""
        err_tok = self._error_token(start, end)
        kept = self.stream.kept
        lo = bisect_left([k.start_pos or 0 for k in kept], err_tok.start_pos or 0) if kept else 0
        region = [k for k in kept[lo:] if (k.start_pos or 0) < (err_tok.end_pos or 0)]
        self.builder.set_error_names(err_tok.start_pos or 0, _bound_names(region))
        nl = newline if newline is not None and newline.type == "_NEWLINE" else Token.new_borrow_pos(
            "_NEWLINE", "\n", err_tok)
        try:
            self.state.feed_token(err_tok)
            self.state.feed_token(nl)
        except UnexpectedToken:  # pragma: no cover - _truncate found a state that takes both
            raise TapirSyntaxError("the parser could not recover here", start) from None
        self.prev = nl

    def _give_up(self, tok: Token) -> None:
        """Too many errors: the rest of the text is one error statement."""
        for _ in self.stream:
            pass
        popped = self._truncate()
        begin = _first_position(popped, self.builder) or token_span(tok)
        end = len(self.text)
        err_tok = Token("ERROR_TEXT", self.text[max(begin.offset, 0):], max(begin.offset, 0), begin.line,
                        begin.column, begin.line, begin.column, end)
        self.state.feed_token(err_tok)
        nl = Token.new_borrow_pos("_NEWLINE", "\n", err_tok)
        self.state.feed_token(nl)
        self.prev = nl
        # dedent whatever blocks are open
        for _ in range(len(self.stream.indents) - 1):
            self.state.feed_token(Token.new_borrow_pos("_DEDENT", "", nl))
        self.stream.indents[1:] = []


def _with_offsets(exc: TapirError, index: LineIndex) -> TapirError:
    """Fill in the offsets of an error's span (messages built from lines and columns lack them)."""
    if exc.span is not None and exc.span.offset < 0:
        exc.span = index.fill(exc.span)
    return exc


_OPENED_AT = re.compile(r"'(.)' opened at (\d+):(\d+)")


def _shift_error(exc: TapirError, text: str, line: int, column: int, offset: int) -> TapirError:
    """Move an error found in an f-string field (parsed as ``text``, '(' + field + ')') to the
    script: its span, and the bracket position its message names (the added '(' is the field's
    '{', one column before it)."""
    _with_offsets(exc, LineIndex(text))
    s = exc.span
    if s is not None:
        exc.span = shift_spans(Refused(s, ""), line - 1, column - 2, offset - 1).span

    def moved(m: re.Match[str]) -> str:
        at_line, at_column = int(m.group(2)), int(m.group(3))
        if (at_line, at_column) == (1, 1):
            return f"'{{' opened at {line}:{column - 1}"
        return f"'{m.group(1)}' opened at {at_line + line - 1}:{at_column + (column - 2 if at_line == 1 else 0)}"

    exc.message = _OPENED_AT.sub(moved, exc.message)
    exc.args = (exc.message,)
    return exc


#: A field that is one plain name (the commonest) is read without running the parser.
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_PLAIN = frozenset(keyword.kwlist) | KEYWORDS


def parse_expression_field(text: str, line: int, column: int, offset: int = 0) -> Expr:
    """Parse the expression of an f-string field that starts at ``line:column`` (``offset``) of the
    script. Raises the field's first problem (the builder makes it a ``Refused`` node)."""
    clock = getattr(_CLOCK, "fn", None)
    if _PLAIN_NAME.fullmatch(text) and text not in _NOT_PLAIN and not text.startswith("__"):
        if clock is not None:
            _CLOCK.tokens += 1
            if _CLOCK.tokens % _CLOCK_EVERY == 0:
                clock()
        return Name(Span(line, column, line, column + len(text), offset, offset + len(text)), text)
    _, _, builder = _lark()
    mark = builder.refusal_mark()
    field = "(" + text + ")"
    try:
        expr = _Run(field, "fexpr", tolerant=False).strict()
        first = builder.first_refusal(since=mark)
        if first is not None:
            raise refusal_error(first)
    except TapirError as exc:
        raise _shift_error(exc, field, line, column, offset) from None
    finally:
        builder.drop_refusals(mark)
    # the field was parsed at 1:2 of its own text (after the added '(')
    return shift_spans(expr, line - 1, column - 2, offset - 1)  # type: ignore[no-any-return]


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def _module_span(text: str) -> Span:
    end_line, end_column = _end_position(text)
    return Span(1, 1, end_line, end_column, 0, len(text))


#: The clock of the strict parse in progress on this thread (``parse(clock=...)``): called every
#: ``_CLOCK_EVERY`` tokens, f-string fields included, so a deadline can stop a long parse.
_CLOCK = threading.local()
_CLOCK_EVERY = 512


def parse(source: str, filename: str = "<script>", *, clock: Callable[[], None] | None = None) -> Module:
    """Parse a Tapir script. Raises ``TapirSyntaxError`` (or ``UnsupportedConstruct``).

    ``clock``, when given, is called every few hundred tokens and may raise (the interpreter
    passes its deadline check, so parsing counts against a run's time budget)."""
    text = normalize_newlines(source)
    _, _, builder = _lark()
    builder.reset()
    outer_clock = getattr(_CLOCK, "fn", None)
    _CLOCK.fn, _CLOCK.tokens = clock, 0
    try:
        with paused_gc():
            module: Module = _Run(text if text.endswith("\n") else text + "\n", "file_input",
                                  tolerant=False).strict()
        first = builder.first_refusal()
        if first is not None:
            raise refusal_error(first)
        context = statement_context_problems(module)
        if context:
            raise context[0]
        return replace(module, span=_module_span(text))
    except TapirError as exc:
        raise _with_offsets(exc, LineIndex(text)).with_source(source, filename) from None
    except RecursionError:
        raise TapirSyntaxError("the script is nested too deeply to be read", Span(1, 1, 1, 2, 0, 1)).with_source(
            source, filename
        ) from None
    except LarkError as exc:  # a case the translations above do not cover: still a syntax error
        raise TapirSyntaxError(f"cannot read the script: {exc}", Span(1, 1, 1, 2, 0, 1)).with_source(
            source, filename
        ) from None
    finally:
        builder.reset()
        _CLOCK.fn = outer_clock


def parse_tolerant(source: str, filename: str = "<script>") -> ParseResult:
    """Parse a script as far as it can be read; never raises.

    Every problem is in ``errors`` (syntax errors, refused constructs, 'break' outside a loop...),
    sorted by position; the module holds an ``ErrorStmt`` for each statement that could not be
    read and a ``Refused`` node for each construct that is not allowed. The strict ``parse``
    accepts the text exactly when ``errors`` is empty.
    """
    text = normalize_newlines(source)
    padded = text if text.endswith("\n") else text + "\n"
    _, _, builder = _lark()
    builder.reset()
    run = _Run(padded, "file_input", tolerant=True)
    problems: list[TapirError] = []
    try:
        with paused_gc():
            module: Module = run.tolerant_parse()
        module = replace(module, span=_module_span(text))
        refused = builder.first_refusal() is not None
        problems = run.stream.errors + run.errors + post_parse_problems(module, refused)
    except (TapirError, RecursionError, LarkError) as exc:
        # nesting deeper than the parser's limits: nothing can be read
        if isinstance(exc, TapirError):
            err = exc
        else:
            err = TapirSyntaxError("the script is nested too deeply to be read", Span(1, 1, 1, 2, 0, 1))
        module = Module(_module_span(text), (), None)
        problems = run.stream.errors + run.errors + [err]
    finally:
        builder.reset()
    index = LineIndex(text)
    diagnostics = sorted({_key(e): _with_offsets(e, index).diagnostic() for e in problems}.values(),
                         key=lambda d: (d.span or Span(0, 0, 0, 0), d.code))
    lexed = merge(run.stream.kept, run.stream.unread, key=lambda t: t.start_pos or 0)
    return ParseResult(module, tuple(diagnostics), text, tuple(lexed))


def _key(e: TapirError) -> tuple[Any, ...]:
    s = e.span
    return (s.line, s.column, e.message) if s is not None else (0, 0, e.message)


if __name__ == "__main__":  # pragma: no cover - a quick manual check: python -m tapir.dsl.parser FILE
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            result = parse_tolerant(f.read(), path)
        print(result.module)
        for d in result.errors:
            print(d.render(result.text, path))
