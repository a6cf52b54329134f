"""The tolerant parse: every independent mistake reported, error nodes kept, tokens and comments
kept, refusals reported after parsing; and the one conversion to editors' UTF-16 positions."""

from __future__ import annotations

import pytest
from cpython_oracle import tapir_form

from tapir.core.errors import TapirSyntaxError
from tapir.core.positions import LineIndex, Span, normalize_newlines
from tapir.dsl import ast as A
from tapir.dsl.parser import parse, parse_tolerant
from tapir.dsl.syntax_checks import post_parse_problems
from tapir.dsl.visitor import NodeVisitor


def problems(source: str) -> list[tuple[int, str, str]]:
    return [(d.span.line, d.code, d.message) for d in parse_tolerant(source).errors if d.span is not None]


def test_every_independent_mistake_is_reported_and_the_rest_is_read() -> None:
    source = ("x = 1\n"
              "if x\n"                      # a syntax error in a block header
              "    print(x)\n"              # the block is still read
              "y = {1, 2}\n"                # a refused construct, reported after parsing
              "foo(1 2)\n"                  # a syntax error inside a call
              "import os\n"                 # a refused keyword
              "z = 'open\n"                 # an unterminated string
              "def f(a b):\n"               # a broken def header: its body is still read
              "    return a\n"
              "w = 3\n")
    result = parse_tolerant(source)
    assert [(line, code) for line, code, _ in problems(source)] == [
        (2, "syntax"), (4, "unsupported"), (5, "syntax"), (6, "unsupported"), (7, "syntax"), (8, "syntax")]
    body = result.module.body
    kinds = [type(s).__name__ for s in body]
    assert kinds == ["Assign", "ErrorStmt", "Assign", "ErrorStmt", "ErrorStmt", "ErrorStmt", "ErrorStmt", "Assign"]
    header = body[1]
    assert isinstance(header, A.ErrorStmt) and header.text == "if x"
    assert isinstance(header.body[0], A.ExprStmt)  # print(x), parsed
    assert isinstance(body[2], A.Assign) and isinstance(body[2].value, A.Refused)
    assert body[2].value.parts and all(isinstance(p, A.Constant) for p in body[2].value.parts)
    broken_def = body[6]
    assert isinstance(broken_def, A.ErrorStmt) and broken_def.names == ("f", "a", "b")
    assert isinstance(broken_def.body[0], A.Return)
    with pytest.raises(TapirSyntaxError) as first:
        parse(source)
    assert first.value.span is not None and first.value.span.line == 2


def test_unclosed_brackets_end_where_the_next_statement_starts() -> None:
    source = "tap($a,\nx = 1\nif x:\n    print(x\nprint(2)\n"
    found = problems(source)
    assert [(line, msg.split(" opened")[0]) for line, _, msg in found] == [(1, "unclosed '('"), (4, "unclosed '('")]
    body = parse_tolerant(source).module.body
    # `x = 1` reads as a keyword argument of the open call; the `if` line cannot, and starts anew
    assert [type(s).__name__ for s in body] == ["ErrorStmt", "If", "ExprStmt"]
    assert isinstance(body[0], A.ErrorStmt) and body[0].text == "tap($a,\nx = 1"


def test_indentation_problems_do_not_hide_the_rest() -> None:
    source = "x = 1\n    y = 2\nz = y\nif z:\n  a = 1\n b = 2\nprint(a, b)\n"
    found = problems(source)
    assert [(line, msg) for line, _, msg in found] == [
        (2, "unexpected indent"), (6, "unindent does not match any outer indentation level")]
    names = {n.id for n in parse_tolerant(source).module.walk() if isinstance(n, A.Name)}
    assert {"x", "y", "z", "a", "b"} <= names


def test_statements_out_of_place_are_reported_by_the_pass_after_parsing() -> None:
    source = "break\ndef f():\n    for i in []:\n        continue\n    return 1\nreturn 2\n"
    assert [(line, msg) for line, _, msg in problems(source)] == [
        (1, "'break' outside a loop"), (6, "'return' outside a function")]
    module = parse_tolerant("x = [y for y in (z for z in w)]\nq = a | b\n").module
    found = post_parse_problems(module)
    assert [e.message.split(" are")[0].split(" is")[0] for e in found] == [
        "generator expressions", "the bitwise operator '|'"]


def test_the_strict_parse_reports_what_it_reported_before() -> None:
    """Refusals are no longer raised inside the parser's reductions, yet the strict parse raises
    the same first problem: the first refusal read, before any later syntax error."""
    for source, message in [
        ("x = {1} + (", "set literals are not supported in Tapir scripts"),
        ("def f(a: int):\n    return {x for x in a}\n", "type annotations are not supported in Tapir scripts"),
        ("for x in y:\n    pass\nelse:\n    pass\n", "'else' on a 'for' or 'while' loop is not supported"),
        ("f(a=1, a=2)", "keyword argument 'a' repeated"),
        ("1 = x", "cannot assign to a literal"),
        ("f'{1 +}'", "expected an expression"),
    ]:
        with pytest.raises(TapirSyntaxError) as info:
            parse(source)
        assert info.value.message.startswith(message), (source, info.value.message)
        assert parse_tolerant(source).errors, source


def test_tokens_and_comments_are_kept_with_their_positions() -> None:
    source = "# doc: app.yaml\nx = $a__b  # the list\nif x:  # a block\n    s = '#not a comment'\n"
    result = parse_tolerant(source)
    comments = [(t.text, t.span.line, t.span.column) for t in result.tokens if t.kind == "COMMENT"]
    assert comments == [("# doc: app.yaml", 1, 1), ("# the list", 2, 12), ("# a block", 3, 8)]
    cats = [t.category for t in result.tokens if t.span.line == 2]
    assert cats == ["name", "operator", "element", "comment", "newline"]
    assert [t.category for t in result.tokens if t.span.line == 4][:3] == ["name", "operator", "string"]
    for tok in result.tokens:
        assert result.text[tok.span.offset : tok.span.end_offset] == tok.text


def test_spans_carry_offsets_into_the_text_as_read() -> None:
    source = "\ufeffx = 1\r\nif x:\r\n    print(f'{x!r} é {x + 1}')\r\n"
    text = normalize_newlines(source)
    module = parse(source)
    index = LineIndex(text)
    for node in module.walk():
        s = node.span
        assert index.offset(s.line, s.column) == s.offset and index.offset(s.end_line, s.end_column) == s.end_offset
    fields = [n for n in module.walk() if isinstance(n, A.BinOp)]
    assert text[fields[0].span.offset : fields[0].span.end_offset] == "x + 1"


def test_lsp_positions_count_utf16_code_units() -> None:
    text = "a = '🎵x'\nb = 'é'\n"
    index = LineIndex(text)
    # 'x' is column 7 (code points) but character 7 in UTF-16: the emoji counts two
    assert index.lsp_position(1, 7) == (0, 7)
    assert index.lsp_position(1, 6) == (0, 5)
    assert index.lsp_position(2, 6) == (1, 5)  # 'é' is one unit
    assert index.from_lsp(0, 7).column == 7
    assert index.from_lsp(0, 6).column == 6  # inside the surrogate pair: clamped to the emoji
    assert index.lsp_range(Span(1, 6, 1, 8)) == ((0, 5), (0, 8))
    for line in (1, 2):
        for column in range(1, len(index.line_text(line)) + 2):
            assert index.from_lsp(*index.lsp_position(line, column)).column == column
    assert index.from_lsp(5, 0).line == 3  # past the end: the last line


def test_the_visitor_dispatches_on_the_exact_class() -> None:
    class Impostor(A.Name):  # shares the name's class name's shape, not its class
        pass

    Impostor.__name__ = "Name"

    class Names(NodeVisitor[None]):
        def __init__(self) -> None:
            self.found: list[str] = []

        def visit_Name(self, node: A.Name) -> None:
            self.found.append(node.id)

    v = Names()
    v.visit(A.ListExpr(Span(1, 1, 1, 2), (A.Name(Span(1, 1, 1, 2), "x"), Impostor(Span(1, 1, 1, 2), "y"))))
    assert v.found == ["x"]


def test_a_tolerant_parse_of_valid_text_is_the_strict_one() -> None:
    source = "def f(a, b=2):\n    '''Doc.'''\n    return [x * b for x in a if x]\n\nprint(f([1, 2]))\n"
    result = parse_tolerant(source)
    assert result.ok and tapir_form(result.module) == tapir_form(parse(source))
