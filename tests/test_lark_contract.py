"""The lark internals ``tapir.dsl.parser`` relies on, asserted one by one (lark is pinned to a
minor release in pyproject.toml; a new release that changes one of these fails here, by name,
before the parser's recovery fails in subtle ways).

Used: ``Lark._build_lexer()`` (one lexer for every parse) and the lexer's ``next_token``;
``LexerThread.from_text(...).state`` and its ``line_ctr`` (``char_pos``, ``line``, ``column``,
``line_start_pos``, ``feed``) and ``last_token`` (skipping unreadable text, reading a line again);
the interactive parser's ``parser_state`` with ``feed_token(tok, is_end)``, ``copy(deepcopy_values=)``,
``position``, ``state_stack``, ``value_stack`` and ``parse_conf`` (``states``, ``callbacks``), also
as ``UnexpectedToken.state`` (recovery pops the stacks back to where a statement starts).
"""

from __future__ import annotations

from copy import copy

import lark
import pytest
from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.lexer import LexerThread

from tapir.dsl.parser import _lark

GRAMMAR = """
start: stmt*
stmt: NAME "=" NAME ";" | ERROR_TEXT ";"
NAME: /[a-z]+/
%ignore " "
%declare ERROR_TEXT
"""


def test_the_pinned_release_is_installed() -> None:
    major, minor = (int(x) for x in lark.__version__.split(".")[:2])
    assert (major, minor) == (1, 3), lark.__version__


def test_one_lexer_reads_token_by_token_and_its_line_counter_can_be_moved() -> None:
    parser = lark.Lark(GRAMMAR, parser="lalr", lexer="basic")
    lexer = parser._build_lexer()
    state = LexerThread.from_text(lexer, "ab = cd;\n?x").state
    assert str(lexer.next_token(state)) == "ab"
    ctr = state.line_ctr
    assert (ctr.char_pos, ctr.line, ctr.column) == (2, 1, 3)
    # reading again from an earlier point (resync) by moving the counter
    ctr.char_pos, ctr.line, ctr.column, ctr.line_start_pos = 0, 1, 1, 0
    state.last_token = None
    assert str(lexer.next_token(state)) == "ab"
    for _ in range(3):
        lexer.next_token(state)
    with pytest.raises(UnexpectedCharacters) as caught:
        lexer.next_token(state)
    assert caught.value.pos_in_stream == 8 and (caught.value.line, caught.value.column) == (1, 9)
    # skipping unreadable text: feed() advances position, line and column
    ctr.char_pos, ctr.line, ctr.column, ctr.line_start_pos = 8, 1, 9, 0
    ctr.feed("\n?")
    assert (ctr.char_pos, ctr.line, ctr.column) == (10, 2, 2)
    assert str(lexer.next_token(state)) == "x"
    with pytest.raises(EOFError):
        lexer.next_token(state)


def test_the_parser_state_feeds_copies_and_pops() -> None:
    parser = lark.Lark(GRAMMAR, parser="lalr", lexer="basic")
    st = parser.parse_interactive(start="start").parser_state
    for t in (Token("NAME", "a"), Token("EQUAL", "=")):
        st.feed_token(t)
    assert len(st.state_stack) == len(st.value_stack) + 1
    states = st.parse_conf.states
    assert "NAME" in states[st.position] and isinstance(st.parse_conf.callbacks, dict)
    # a trial copy without callbacks does not touch the original
    trial = st.copy(deepcopy_values=False)
    conf = copy(st.parse_conf)
    conf.callbacks = {}
    trial.parse_conf = conf
    trial.feed_token(Token("NAME", "b"))
    assert len(st.value_stack) == 2 and len(trial.value_stack) == 3
    # popping both stacks back to where a statement starts, then feeding ERROR_TEXT there
    i = next(i for i in range(len(st.value_stack), -1, -1) if "ERROR_TEXT" in states[st.state_stack[i]])
    del st.state_stack[i + 1 :]
    del st.value_stack[i:]
    st.feed_token(Token("ERROR_TEXT", "a = "))
    st.feed_token(Token("SEMICOLON", ";"))
    tree = st.feed_token(Token("$END", ""), True)
    assert tree.data == "start"
    with pytest.raises(UnexpectedToken) as caught:
        parser.parse_interactive(start="start").feed_token(Token("EQUAL", "="))
    assert caught.value.state.position in caught.value.state.parse_conf.states


def test_tapirs_grammar_compiles_with_the_internals_in_place() -> None:
    lark_, lexer, _ = _lark()
    assert hasattr(lexer, "next_token")
    st = lark_.parse_interactive(start="file_input").parser_state
    assert "ERROR_TEXT" in st.parse_conf.states[st.position]
