"""The editor's cursor context, read from the tolerant parse's tokens (``tapir.service.context``):
what completion and signature help see in half-typed text."""

from __future__ import annotations

import pytest

from tapir.dsl.parser import parse_tolerant
from tapir.service.context import CursorContext, context_of, open_string


def at(marked: str) -> CursorContext:
    """The context at the '|' of ``marked``."""
    offset = marked.index("|")
    text = marked[:offset] + marked[offset + 1 :]
    parsed = parse_tolerant(text)
    return context_of(parsed.tokens, parsed.text, offset)


def test_an_unterminated_string_argument_is_read_from_its_token() -> None:
    ctx = at('$list.match("Ro|')
    assert ctx.string is not None and ctx.string.typed == "Ro" and ctx.string.quote == '"'
    assert ctx.call is not None and ctx.call.name == "match" and ctx.call.arg_index == 0
    assert ctx.call.receiver is not None and ctx.call.receiver.text == "$list"
    assert ctx.element is None and not ctx.after_dot


def test_arguments_keywords_and_nested_brackets_are_counted() -> None:
    ctx = at('scroll($x, direction="u|')
    assert ctx.call is not None and (ctx.call.name, ctx.call.arg_index, ctx.call.keyword) == ("scroll", 1, "direction")
    ctx = at("f(a=1, g(x, [1, 2]), b|")
    assert ctx.call is not None and (ctx.call.name, ctx.call.arg_index, ctx.call.keyword) == ("f", 2, None)
    assert ctx.call.used_keywords == ("a",) and ctx.typed == "b"
    assert at("x = [f(1), |").call is None  # in a list display, not a call
    assert at("f (|").call is None  # a space before '(': not a call as written


def test_the_receiver_before_a_dot_is_a_chain_of_tokens() -> None:
    ctx = at('$a__b[0].match("x").t|')
    assert ctx.after_dot and ctx.typed == "t"
    assert ctx.receiver is not None and ctx.receiver.text == '$a__b[0].match("x")'
    ctx = at("for row in rows:\n    row.|")
    assert ctx.after_dot and ctx.typed == "" and ctx.receiver is not None and ctx.receiver.text == "row"
    assert at("x .|").receiver is None


@pytest.mark.parametrize(("marked", "typed"), [("$res|", "res"), ("x = $|", ""), ("$s:|", "s:"), ("$s:e|", "s:e"),
                                                 ("$resu|lts", "resu")])
def test_elements_being_typed(marked: str, typed: str) -> None:
    assert at(marked).element == typed


def test_comments_docstrings_and_numbers_are_not_code() -> None:
    assert at("x = 1  # a $ab|").in_comment
    ctx = at('"""A doc|string."""\n')
    assert ctx.in_string and ctx.string is None
    assert at("sleep(2|").after_number
    ctx = at('f|"x"')  # in a string's prefix: a name as far as what is typed tells
    assert ctx.typed == "f" and not ctx.in_string


def test_statement_start_and_the_repl_helper() -> None:
    assert at("if x:\n    re|").at_statement_start
    assert not at("x = re|").at_statement_start
    opened = open_string("print('hi", 9)
    assert opened is not None and (opened.start, opened.typed) == (6, "hi")
    assert open_string("print('hi')", 11) is None
