"""The Tapir parser: script text -> ``tapir.dsl.ast.Module``.

    from tapir.dsl.parser import parse
    module = parse(source, "x.tap")

Pipeline: Lark's basic lexer -> ``_TokenStream``, the postlexer (Python's indentation rules,
bracket matching, early refusal of import/class/lambda/...) -> Lark's LALR parser, fed token by
token so that a failure can be explained with the token stream's state at that point, calling
``AstBuilder`` on each reduction (no parse tree is built). Every failure is a
``TapirSyntaxError`` (or its subclass ``UnsupportedConstruct``) carrying the span, the file name
and the source. The compiled grammar is cached by Lark in the temporary directory, so a new
process loads it in milliseconds.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from copy import copy
from dataclasses import replace
from typing import Any

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedToken
from lark.indenter import Indenter
from lark.lexer import LexerThread
from tapir.dsl.ast import Expr, Module
from tapir.dsl.ast_builder import AstBuilder, check_statement_context, shift_spans
from tapir.dsl.errors import Span, TapirError, TapirSyntaxError, UnsupportedConstruct
from tapir.dsl.syntax_messages import (
    UNPACKING_MESSAGE,
    refused_token,
    token_span,
    unexpected_character,
    unexpected_token,
)
from tapir.grammar import GRAMMAR_DIR

__all__ = ["parse", "parse_expression_field"]

MAX_BRACKET_DEPTH = 100
MAX_INDENT_DEPTH = 100

_OPEN = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_CLOSE = {"RPAR", "RSQB", "RBRACE"}
_PAIR = {"(": ")", "[": "]", "{": "}"}
# After these a '*' or '**' can only be unpacking (*args, **kwargs, [*xs]), never arithmetic.
_UNPACK_CONTEXT = {None, "_NEWLINE", "_INDENT", "_DEDENT", "SEMICOLON", "LPAR", "LSQB", "LBRACE", "COMMA", "EQUAL",
                   "RETURN", "IN", "COLON"}


class TapirIndenter(Indenter):
    """Lark postlexer: Python-style _INDENT/_DEDENT, bracket matching and early refusals.

    ``process`` returns a fresh ``_TokenStream`` per parse, so one instance serves every thread.
    """

    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8
    # Terminals the grammar never uses but the lexer must still produce, to be refused by name.
    always_accept = ("_NEWLINE", "WALRUS", "AT")

    def process(self, stream: Iterator[Token]) -> _TokenStream:  # type: ignore[override]
        return _TokenStream(stream)


class _TokenStream:
    """Iterator over the parser's tokens, with the state an error message needs."""

    def __init__(self, raw: Iterator[Token]) -> None:
        self._raw = raw
        self._gen = self._tokens()
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

    def __iter__(self) -> _TokenStream:
        return self

    def __next__(self) -> Token:
        return next(self._gen)

    def _tokens(self) -> Iterator[Token]:
        brackets = self.brackets
        prev_type: str | None = None
        last: Token | None = None
        for tok in self._raw:
            t = tok.type
            if t == "_NEWLINE":
                if brackets:
                    continue  # implicit line joining
                yield tok
                prev_type = t
                yield from self._indentation(tok)
                continue
            at = token_span(tok)
            if prev_type is None and at.column > 1:
                raise TapirSyntaxError(
                    "unexpected indent", Span(at.line, 1, at.line, at.column),
                    hint="the first line of a script is not indented",
                )
            self.enclosing = tuple(brackets) if brackets or t in _OPEN else ()
            if last is None or prev_type == "_NEWLINE" or at.line > token_span(last).end_line:
                self.line_first = tok
            if t in _OPEN:
                if len(brackets) >= MAX_BRACKET_DEPTH:
                    raise TapirSyntaxError(f"too many nested brackets (at most {MAX_BRACKET_DEPTH})", token_span(tok))
                brackets.append(tok)
            elif t in _CLOSE:
                if not brackets:
                    raise TapirSyntaxError(f"unmatched '{tok}'", token_span(tok))
                opener = brackets.pop()
                if _PAIR[str(opener)] != str(tok):
                    opened = token_span(opener)
                    raise TapirSyntaxError(
                        f"'{tok}' does not match '{opener}' opened at {opened.line}:{opened.column}", at
                    )
            elif t == "NAME" or t == "WALRUS" or t == "AT":
                refused = refused_token(tok)
                if refused is not None:
                    raise refused
            elif t == "ELEMENT":
                if ":" in tok:
                    self.colon_element = tok
            elif (t == "STAR" or t == "DSTAR") and prev_type in _UNPACK_CONTEXT:
                raise UnsupportedConstruct(UNPACKING_MESSAGE, token_span(tok))
            yield tok
            prev_type = t
            last = tok
        if brackets:
            b = brackets[-1]
            opened = token_span(b)
            raise TapirSyntaxError(f"unclosed '{b}' opened at {opened.line}:{opened.column}", opened)
        if last is not None and prev_type != "_NEWLINE":
            # the text ended without a newline token (a backslash continuation): end the statement
            yield Token.new_borrow_pos("_NEWLINE", "\n", last)
        while len(self.indents) > 1:
            self.indents.pop()
            end = token_span(last) if last is not None else Span(1, 1, 1, 1)
            yield Token("_DEDENT", "", 0, end.end_line, end.end_column, end.end_line, end.end_column, 0)

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
        indents = self.indents
        top_col, top_alt = indents[-1]
        if col == top_col:
            if alt != top_alt:
                raise self._tab_error(line, column)
            return
        if col > top_col:
            if alt <= top_alt:
                raise self._tab_error(line, column)
            if len(indents) > MAX_INDENT_DEPTH:
                raise TapirSyntaxError(f"too many levels of indentation (at most {MAX_INDENT_DEPTH})",
                                       Span(line, 1, line, max(column, 2)))
            indents.append((col, alt))
            yield Token("_INDENT", ws, nl.end_pos, line, column, line, column, nl.end_pos)
            return
        while col < indents[-1][0]:
            indents.pop()
            yield Token("_DEDENT", "", nl.end_pos, line, column, line, column, nl.end_pos)
        if col != indents[-1][0]:
            raise TapirSyntaxError(
                "unindent does not match any outer indentation level",
                Span(line, 1, line, max(column, 2)),
            )
        if alt != indents[-1][1]:
            raise self._tab_error(line, column)

    @staticmethod
    def _tab_error(line: int, column: int) -> TapirSyntaxError:
        return TapirSyntaxError(
            "inconsistent use of tabs and spaces in indentation",
            Span(line, 1, line, max(column, 2)),
            hint="indent with spaces only (or tabs only)",
        )


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


def _parse_tree(text: str, start: str) -> Any:
    """Lex and parse ``text`` (which ends with a newline for ``file_input``); returns the AST."""
    lark, lexer, _ = _lark()
    stream = _TokenStream(LexerThread.from_text(lexer, text).lex(None))
    state = lark.parse_interactive(start=start).parser_state
    prev: Token | None = None
    tok: Token | None = None
    try:
        for tok in stream:
            state.feed_token(tok)
            prev = tok
        end = Token.new_borrow_pos("$END", "", prev) if prev is not None else Token("$END", "", 0, 1, 1, 1, 1, 0)
        tok = end
        return state.feed_token(end, True)
    except UnexpectedToken as exc:
        assert tok is not None
        # `enclosing` is the bracket state before the failing token; for $END it is the end state.
        brackets = stream.enclosing if tok.type != "$END" else tuple(stream.brackets)
        expected = _accepted(exc.state, set(exc.expected)) or set(exc.expected)
        raise unexpected_token(
            tok, expected, exc.state.value_stack, prev, brackets, stream.line_first, text, stream.colon_element
        ) from None
    except UnexpectedCharacters as exc:
        raise unexpected_character(text, exc.line, exc.column, exc.pos_in_stream) from None


def _shift_error(exc: TapirError, line: int, column: int) -> TapirError:
    """Move the span of an error found in an f-string field (parsed as '(' + text + ')')."""
    s = exc.span
    if s is not None:
        def at(ln: int, col: int) -> tuple[int, int]:
            return (line, max(col + column - 2, 1)) if ln == 1 else (ln + line - 1, col)

        a, b = at(s.line, s.column), at(s.end_line, s.end_column)
        exc.span = Span(a[0], a[1], b[0], b[1])
    return exc


def parse_expression_field(text: str, line: int, column: int) -> Expr:
    """Parse the expression of an f-string field that starts at ``line:column`` of the script."""
    try:
        expr = _parse_tree("(" + text + ")", "fexpr")
    except TapirError as exc:
        raise _shift_error(exc, line, column) from None
    # the field was parsed at 1:2 of its own text (after the added '(')
    return shift_spans(expr, line - 1, column - 2)  # type: ignore[no-any-return]


def _end_position(source: str) -> tuple[int, int]:
    lines = source.split("\n")
    return len(lines), len(lines[-1]) + 1


def parse(source: str, filename: str = "<script>") -> Module:
    """Parse a Tapir script. Raises ``TapirSyntaxError`` (or ``UnsupportedConstruct``)."""
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):  # a byte-order mark some editors write; invisible, so not a column
        text = text[1:]
    _, _, builder = _lark()
    builder.reset()
    try:
        module: Module = _parse_tree(text if text.endswith("\n") else text + "\n", "file_input")
        check_statement_context(module.body)
        end_line, end_column = _end_position(text)
        return replace(module, span=Span(1, 1, end_line, end_column))
    except TapirError as exc:
        raise exc.with_source(source, filename) from None
    except RecursionError:
        raise TapirSyntaxError("the script is nested too deeply to be read", Span(1, 1, 1, 2)).with_source(
            source, filename
        ) from None
    except LarkError as exc:  # a case the translations above do not cover: still a syntax error
        raise TapirSyntaxError(f"cannot read the script: {exc}", Span(1, 1, 1, 2)).with_source(
            source, filename
        ) from None
    finally:
        builder.reset()


if __name__ == "__main__":  # pragma: no cover - a quick manual check: python -m tapir.dsl.parser FILE
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            print(parse(f.read(), path))
