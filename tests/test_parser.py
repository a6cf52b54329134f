"""The Tapir parser: constructs -> AST, spans, refused constructs and syntax errors in words."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from cpython_oracle import python_form, substitute_elements, tapir_form

from tapir.cli import main
from tapir.core.errors import Span, TapirSyntaxError, UnsupportedConstruct
from tapir.dsl import ast as T
from tapir.dsl.ast_builder import AstBuilder
from tapir.dsl.parser import _lark, parse


def body(source: str) -> str:
    """The statements of a script in the comparison notation, without spans."""
    return tapir_form(parse(source).body, spans=False)


def expr(source: str) -> T.Expr:
    stmt = parse(source).body[0]
    assert isinstance(stmt, T.ExprStmt)
    return stmt.value


def span_text(source: str, span: Span) -> str:
    """The source text a span covers."""
    lines = source.split("\n")
    if span.line == span.end_line:
        return lines[span.line - 1][span.column - 1 : span.end_column - 1]
    parts = [lines[span.line - 1][span.column - 1 :]]
    parts += lines[span.line : span.end_line - 1]
    parts.append(lines[span.end_line - 1][: span.end_column - 1])
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Constructs -> AST

E = "ElementRef"
CONSTRUCTS = [
    # element references and the two API styles
    ("$a__b.tap()", f"[ExprStmt(Call(Attribute({E}('a__b'), 'tap'), [], []))]"),
    ("$x.tap($child)", f"[ExprStmt(Call(Attribute({E}('x'), 'tap'), [{E}('child')], []))]"),
    ("$settings__font_size_150%.tap()", f"[ExprStmt(Call(Attribute({E}('settings__font_size_150%'), 'tap'), [], []))]"),
    ("$main:sort_button.tap()", f"[ExprStmt(Call(Attribute({E}('main__sort_button'), 'tap'), [], []))]"),
    ("tap($x)", f"[ExprStmt(Call(Name('tap'), [{E}('x')], []))]"),
    ('set_text($x, "t")', f"[ExprStmt(Call(Name('set_text'), [{E}('x'), Constant('t')], []))]"),
    ('get_attributes($x)["selected"]',
     f"[ExprStmt(Subscript(Call(Name('get_attributes'), [{E}('x')], []), Constant('selected')))]"),
    ("$list[0].tap()", f"[ExprStmt(Call(Attribute(Subscript({E}('list'), Constant(0)), 'tap'), [], []))]"),
    ('$l.match({"selected": True})',
     f"[ExprStmt(Call(Attribute({E}('l'), 'match'), [DictExpr([Constant('selected')], [Constant(True)])], []))]"),
    ("n = len($list)", f"[Assign([Name('n')], Call(Name('len'), [{E}('list')], []))]"),
    ("back(); enter()", "[ExprStmt(Call(Name('back'), [], [])), ExprStmt(Call(Name('enter'), [], []))]"),
    # assignments
    ("a = b = 1", "[Assign([Name('a'), Name('b')], Constant(1))]"),
    ("a, b = b, a", "[Assign([TupleExpr([Name('a'), Name('b')])], TupleExpr([Name('b'), Name('a')]))]"),
    ("[a, b] = x", "[Assign([ListExpr([Name('a'), Name('b')])], Name('x'))]"),
    ("x[0] = 1", "[Assign([Subscript(Name('x'), Constant(0))], Constant(1))]"),
    ("n += 1", "[AugAssign(Name('n'), '+', Constant(1))]"),
    ("n //= 2", "[AugAssign(Name('n'), '//', Constant(2))]"),
    ("t = 1,", "[Assign([Name('t')], TupleExpr([Constant(1)]))]"),
    # control flow
    ("if a:\n    pass\nelif b:\n    x = 1\nelse:\n    break_ = 2",
     "[If(Name('a'), [Pass()], [If(Name('b'), [Assign([Name('x')], Constant(1))], "
     "[Assign([Name('break_')], Constant(2))])])]"),
    ("if a: b(); c()", "[If(Name('a'), [ExprStmt(Call(Name('b'), [], [])), ExprStmt(Call(Name('c'), [], []))], [])]"),
    ("while n < 3:\n    n += 1\n    continue",
     "[While(Compare(Name('n'), ['<'], [Constant(3)]), [AugAssign(Name('n'), '+', Constant(1)), Continue()])]"),
    ("for item in $list:\n    item.get_text($child)\n    break",
     f"[For(Name('item'), {E}('list'), [ExprStmt(Call(Attribute(Name('item'), 'get_text'), [{E}('child')], [])), "
     "Break()])]"),
    ("for i, x in enumerate(xs):\n    pass",
     "[For(TupleExpr([Name('i'), Name('x')]), Call(Name('enumerate'), [Name('xs')], []), [Pass()])]"),
    ("def f(a, b=2):\n    return a\n", "[FunctionDef('f', [Param('a', None), Param('b', Constant(2))], "
     "[Return(Name('a'))], None)]"),
    ("def f():\n    '''Doc.'''\n    return\n", "[FunctionDef('f', [], [Return(None)], 'Doc.')]"),
    ("assert x", "[Assert(Name('x'), None)]"),
    ("assert x, 'why'", "[Assert(Name('x'), Constant('why'))]"),
    ("# only a comment\n\n", "[]"),
    ("", "[]"),
    # literals
    ("x = 1_000", "[Assign([Name('x')], Constant(1000))]"),
    ("x = 0x1F", "[Assign([Name('x')], Constant(31))]"),
    ("x = 2.5e-1", "[Assign([Name('x')], Constant(0.25))]"),
    ("x = None", "[Assign([Name('x')], Constant(None))]"),
    ("x = 'a\\tb\\x41\\u00e9\\N{BULLET}\\q'", "[Assign([Name('x')], Constant('a\\tbAé•\\\\q'))]"),
    ("x = r'a\\n'", "[Assign([Name('x')], Constant('a\\\\n'))]"),
    ("x = 'a' \"b\"", "[Assign([Name('x')], Constant('ab'))]"),
    ('x = """two\nlines"""', "[Assign([Name('x')], Constant('two\\nlines'))]"),
    ("x = 'it\\'s'", "[Assign([Name('x')], Constant(\"it's\"))]"),
    ("x = []", "[Assign([Name('x')], ListExpr([]))]"),
    ("x = {}", "[Assign([Name('x')], DictExpr([], []))]"),
    ("x = ()", "[Assign([Name('x')], TupleExpr([]))]"),
    ("x = (1,)", "[Assign([Name('x')], TupleExpr([Constant(1)]))]"),
    ("x = [1, 2,]", "[Assign([Name('x')], ListExpr([Constant(1), Constant(2)]))]"),
    # f-strings
    ("x = f'a{b}c'", "[Assign([Name('x')], FString([Constant('a'), FormattedValue(Name('b'), None, None), "
     "Constant('c')]))]"),
    ("x = f'{b!r:>10}'", "[Assign([Name('x')], FString([FormattedValue(Name('b'), 'r', '>10')]))]"),
    ("x = f'{{{n + 1}}}'", "[Assign([Name('x')], FString([Constant('{'), FormattedValue(BinOp('+', Name('n'), "
     "Constant(1)), None, None), Constant('}')]))]"),
    ("x = 'a' f'{b}'", "[Assign([Name('x')], FString([Constant('a'), FormattedValue(Name('b'), None, None)]))]"),
    ("x = f'{$e.get_text()!s}'", f"[Assign([Name('x')], FString([FormattedValue(Call(Attribute({E}('e'), "
     "'get_text'), [], []), 's', None)]))]"),
    # operators
    ("x = 1 + 2 * 3 ** -4", "[Assign([Name('x')], BinOp('+', Constant(1), BinOp('*', Constant(2), BinOp('**', "
     "Constant(3), UnaryOp('-', Constant(4))))))]"),
    ("x = a - b - c", "[Assign([Name('x')], BinOp('-', BinOp('-', Name('a'), Name('b')), Name('c')))]"),
    ("x = a // b % c / d", "[Assign([Name('x')], BinOp('/', BinOp('%', BinOp('//', Name('a'), Name('b')), "
     "Name('c')), Name('d')))]"),
    ("x = (a + b) * c", "[Assign([Name('x')], BinOp('*', BinOp('+', Name('a'), Name('b')), Name('c')))]"),
    ("x = not a and b or c", "[Assign([Name('x')], BoolOp('or', [BoolOp('and', [UnaryOp('not', Name('a')), "
     "Name('b')]), Name('c')]))]"),
    ("x = a and b and c", "[Assign([Name('x')], BoolOp('and', [Name('a'), Name('b'), Name('c')]))]"),
    ("x = 0 < a <= 10", "[Assign([Name('x')], Compare(Constant(0), ['<', '<='], [Name('a'), Constant(10)]))]"),
    ("x = a not in b", "[Assign([Name('x')], Compare(Name('a'), ['not in'], [Name('b')]))]"),
    ("x = a is not None", "[Assign([Name('x')], Compare(Name('a'), ['is not'], [Constant(None)]))]"),
    ("x = a if c else b", "[Assign([Name('x')], IfExp(Name('c'), Name('a'), Name('b')))]"),
    ("x = s[1:-1:2]", "[Assign([Name('x')], Subscript(Name('s'), Slice(Constant(1), UnaryOp('-', Constant(1)), "
     "Constant(2))))]"),
    ("x = s[:]", "[Assign([Name('x')], Subscript(Name('s'), Slice(None, None, None)))]"),
    ("x = f(a, k=1)", "[Assign([Name('x')], Call(Name('f'), [Name('a')], [Keyword('k', Constant(1))]))]"),
    ("x = [i * 2 for i in xs if i if i > 1 for j in i]",
     "[Assign([Name('x')], ListComp(BinOp('*', Name('i'), Constant(2)), [Comprehension(Name('i'), Name('xs'), "
     "[Name('i'), Compare(Name('i'), ['>'], [Constant(1)])]), Comprehension(Name('j'), Name('i'), [])]))]"),
    # line joining and indentation
    ("x = f(1,\n      2)", "[Assign([Name('x')], Call(Name('f'), [Constant(1), Constant(2)], []))]"),
    ("x = 1 + \\\n    2", "[Assign([Name('x')], BinOp('+', Constant(1), Constant(2)))]"),
    ("if a:\n\tb = 1\n\tc = 2",
     "[If(Name('a'), [Assign([Name('b')], Constant(1)), Assign([Name('c')], Constant(2))], [])]"),
    ("if a:\n    b = 1\n\n    # comment\n        # deeper comment\n    c = 2\n",
     "[If(Name('a'), [Assign([Name('b')], Constant(1)), Assign([Name('c')], Constant(2))], [])]"),
    ("x = 1\r\ny = 2\r\n", "[Assign([Name('x')], Constant(1)), Assign([Name('y')], Constant(2))]"),
    ("x = 1  # no newline at the end", "[Assign([Name('x')], Constant(1))]"),
    # names that are Python soft keywords or builtins are just names
    ("match = $l.match('x')", f"[Assign([Name('match')], Call(Attribute({E}('l'), 'match'), [Constant('x')], []))]"),
    ("print(x)", "[ExprStmt(Call(Name('print'), [Name('x')], []))]"),
]


@pytest.mark.parametrize(("source", "expected"), CONSTRUCTS, ids=[c[0][:40] for c in CONSTRUCTS])
def test_construct(source: str, expected: str) -> None:
    assert body(source) == expected


def test_module_docstring_is_taken_out_of_the_body() -> None:
    m = parse('"""Open the settings."""\n$settings.tap()\n')
    assert m.docstring == "Open the settings."
    assert len(m.body) == 1
    assert parse("x = 1\n'not a docstring'\n").docstring is None


def test_element_ref_screen() -> None:
    refs = list(T.element_refs(parse("$main__sort__button.tap($plain)")))
    assert [(r.name, r.screen) for r in refs] == [("main__sort__button", "main"), ("plain", "")]


# ---------------------------------------------------------------------------------------------
# Spans

SPAN_CASES = [
    # (source, node type, index among that type in walk order, the exact text it covers)
    ("x = $a__b.tap()", T.ElementRef, 0, "$a__b"),
    ("x = $a__b.tap()", T.Call, 0, "$a__b.tap()"),
    ("x = $a__b.tap()", T.Attribute, 0, "$a__b.tap"),
    ("x = $a__b.tap()", T.Assign, 0, "x = $a__b.tap()"),
    ("tap($settings__font_size_150%)", T.ElementRef, 0, "$settings__font_size_150%"),
    ("x = (a + b) * c", T.BinOp, 0, "(a + b) * c"),
    ("x = (a + b) * c", T.BinOp, 1, "a + b"),
    ("x = (a, b)", T.TupleExpr, 0, "(a, b)"),
    ("x = a, b", T.TupleExpr, 0, "a, b"),
    ("x = [\n  1,\n  2]", T.ListExpr, 0, "[\n  1,\n  2]"),
    ("if a:\n    b()\nelif c:\n    d()\n", T.If, 0, "if a:\n    b()\nelif c:\n    d()"),
    ("if a:\n    b()\nelif c:\n    d()\n", T.If, 1, "elif c:\n    d()"),
    ("for x in y:\n    f(x)\n\n\n", T.For, 0, "for x in y:\n    f(x)"),
    ("def f(a, b=2):\n    pass", T.Param, 1, "b=2"),
    ("f(k=1)", T.Keyword, 0, "k=1"),
    ("x = s[1:2]", T.Slice, 0, "1:2"),
    ("x = 'a' 'b'", T.Constant, 0, "'a' 'b'"),
    ("x = f'v={$e.get_text()!r:>3}!'", T.FormattedValue, 0, "{$e.get_text()!r:>3}"),
    ("x = f'v={$e.get_text()!r:>3}!'", T.ElementRef, 0, "$e"),
    ("x = f'v={a}!'", T.Constant, 0, "v="),
    ("x = f'''\n{a +\n  b}'''", T.BinOp, 0, "a +\n  b"),
    ("x = [i for i in y if i]", T.Comprehension, 0, "for i in y if i"),
    ("x = -1", T.UnaryOp, 0, "-1"),
    ("pass;", T.Pass, 0, "pass"),
]


@pytest.mark.parametrize(("source", "kind", "index", "text"), SPAN_CASES, ids=[f"{c[1].__name__}:{c[3][:20]}"
                                                                                for c in SPAN_CASES])
def test_span_covers_exactly(source: str, kind: type, index: int, text: str) -> None:
    nodes = [n for n in parse(source).walk() if isinstance(n, kind)]
    assert span_text(source, nodes[index].span) == text


def test_attribute_name_span() -> None:
    call = expr("$list.match('x')")
    assert isinstance(call, T.Call) and isinstance(call.func, T.Attribute)
    assert call.func.attr_span == Span(1, 7, 1, 12)


def test_module_span_covers_the_whole_text() -> None:
    assert parse("a = 1\nb = 22").span == Span(1, 1, 2, 7)


def test_every_span_agrees_with_cpython() -> None:
    source = (
        "'''Doc.'''\n"
        "n = 0\n"
        "for item in $screen__list:\n"
        "    if item.get_text() in ('a', 'b') and not done:\n"
        "        item.tap($screen__child); n += 1\n"
        "    elif n > 2:\n"
        "        break\n"
        "def pick(xs, k=None):\n"
        "    return [x[1:] for x in xs if x is not k][-1]\n"
        "values = {'selected': True, 'n': -n ** 2 // 3}\n"
        "label = f'{n!r} items' if n else \"none\"\n"
        "assert len($screen__list) >= 0, 'never'\n"
    )
    module = parse(source)
    assert tapir_form(module) == python_form(substitute_elements(source, module))


def test_every_grammar_rule_has_an_ast_callback() -> None:
    # a rule without a callback would silently hand Lark trees to the AST builder
    lark = _lark()[0]
    names = set()
    for rule in lark.rules:
        name = str(rule.alias or rule.origin.name)
        inlined = rule.options.expand1 and len(rule.expansion) == 1 and rule.alias is None
        if not name.startswith("_") and not inlined:
            names.add(name)
    assert {"call", "name", "element", "strings", "if_stmt", "file_input", "fexpr"} <= names
    assert sorted(n for n in names if not callable(getattr(AstBuilder, n, None))) == []


def test_parsing_is_thread_safe() -> None:
    sources = [f"x{i} = (a + {i}) * $e{i}.get_text()\nif x{i}:\n    tap($e{i})\n" for i in range(40)]
    expected = [tapir_form(parse(s)) for s in sources]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda s: tapir_form(parse(s)), sources * 3))
    assert got == expected * 3


# ---------------------------------------------------------------------------------------------
# Refused constructs

REFUSED = [
    # (source, message fragment, line, column, text under the caret)
    ("import os", "'import' is not allowed in Tapir scripts", 1, 1, "import"),
    ("from os import path", "'from ... import' is not allowed", 1, 1, "from"),
    ("class A:\n    pass", "'class' is not allowed", 1, 1, "class"),
    ("f = lambda x: x", "'lambda' is not supported", 1, 5, "lambda"),
    ("with open(p) as f:\n    pass", "'with' is not supported", 1, 1, "with"),
    ("def f():\n    global x", "'global' is not supported", 2, 5, "global"),
    ("def f():\n    nonlocal x", "'nonlocal' is not supported", 2, 5, "nonlocal"),
    ("try:\n    tap($a)\nexcept:\n    pass", "'try' is not supported", 1, 1, "try"),
    ("raise ValueError('x')", "'raise' is not supported", 1, 1, "raise"),
    ("def g():\n    yield 1", "'yield' is not supported", 2, 5, "yield"),
    ("async def f():\n    pass", "'async' is not supported", 1, 1, "async"),
    ("x = await f()", "'await' is not supported", 1, 5, "await"),
    ("del x", "'del' is not supported", 1, 1, "del"),
    ("@decorator\ndef f():\n    pass", "'@'", 1, 1, "@"),
    ("if (n := 3):\n    pass", "':=' operator is not supported", 1, 7, ":="),
    ("f(*args)", "unpacking", 1, 3, "*"),
    ("f(a, **kw)", "unpacking", 1, 6, "**"),
    ("def f(*args):\n    pass", "unpacking", 1, 7, "*"),
    ("x = [*a, 1]", "unpacking", 1, 6, "*"),
    ("x = {1, 2}", "set literals are not supported in Tapir scripts", 1, 5, "{1, 2}"),
    ("x = {i for i in y}", "set comprehensions are not supported", 1, 5, "{i for i in y}"),
    ("x = {k: 1 for k in y}", "dict comprehensions are not supported", 1, 5, "{k: 1 for k in y}"),
    ("x = (i for i in y)", "generator expressions are not supported", 1, 5, "(i for i in y)"),
    ("any(i for i in y)", "generator expressions are not supported", 1, 5, "i for i in y"),
    ("x.__class__", "names starting with '__' are not allowed", 1, 3, "__class__"),
    ("__import__('os')", "names starting with '__' are not allowed", 1, 1, "__import__"),
    ("x = a | b", "the bitwise operator '|' is not supported", 1, 7, "|"),
    ("x = a & b", "the bitwise operator '&'", 1, 7, "&"),
    ("x = a << 1", "the bitwise operator '<<'", 1, 7, "<<"),
    ("x = ~a", "the bitwise operator '~'", 1, 5, "~"),
    ("x |= 1", "the operator '|='", 1, 3, "|="),
    ("x: int = 3", "annotations ('name: type') are not supported", 1, 1, "x: int = 3"),
    ("def f(a: int):\n    pass", "type annotations are not supported", 1, 8, ": int"),
    ("def f() -> int:\n    pass", "return annotations", 1, 9, "-> int"),
    ("for x in y:\n    pass\nelse:\n    pass", "'else' on a 'for' or 'while' loop", 3, 1, "else"),
    ("while x:\n    pass\nelse:\n    pass", "'else' on a 'for' or 'while' loop", 3, 1, "else"),
    ("x = 2j", "complex numbers", 1, 5, "2j"),
    ("x = b'raw'", "bytes literals", 1, 5, "b'raw'"),
    ("x = ...", "'...' is not supported", 1, 5, "..."),
    ("x = f'{a=}'", "'=' specifier in f-strings", 1, 9, "="),
    ("x = f'{a:{w}}'", "nested '{...}' in an f-string format spec", 1, 10, "{"),
    ("match x:\n    case 1:\n        pass", "'match' statements are not supported", 1, 1, "match"),
]


@pytest.mark.parametrize(("source", "message", "line", "column", "caret"), REFUSED, ids=[c[0][:30] for c in REFUSED])
def test_refused_construct(source: str, message: str, line: int, column: int, caret: str) -> None:
    with pytest.raises(UnsupportedConstruct) as info:
        parse(source, "x.tap")
    err = info.value
    assert message in err.message
    assert "not supported" in err.message or "not allowed" in err.message
    assert err.span is not None and (err.span.line, err.span.column) == (line, column)
    assert span_text(source, err.span) == caret
    rendered = err.render()
    assert rendered.startswith(f"x.tap:{line}:{column}: UnsupportedConstruct: ")
    assert "Traceback" not in rendered


def test_import_renders_like_the_issue_says() -> None:
    with pytest.raises(UnsupportedConstruct) as info:
        parse("import os\n", "x.tap")
    assert info.value.render().splitlines()[:3] == [
        "x.tap:1:1: UnsupportedConstruct: 'import' is not allowed in Tapir scripts",
        "    import os",
        "    ^^^^^^",
    ]


# ---------------------------------------------------------------------------------------------
# Syntax errors in words

SYNTAX_ERRORS = [
    # (source, message, line, column)
    ("if x\n    pass", "expected ':' after the if condition, found the end of the line", 1, 5),
    ("if x y:\n    pass", "expected ':' after the if condition, found name 'y'", 1, 6),
    ("if x = 1:\n    pass", "expected ':' after the if condition, found '='", 1, 6),
    ("while True\n    pass", "expected ':' after the while condition", 1, 11),
    ("for x in y\n    pass", "expected ':' after the for loop header", 1, 11),
    ("for x y in z:\n    pass", "expected 'in' after the loop variable, found name 'y'", 1, 7),
    ("def f()\n    pass", "expected ':' after the function signature", 1, 8),
    ("else:\n    pass", "'else' does not follow an 'if' block at the same indentation", 1, 1),
    ("tap($a)else:\n    pass", "'else' must start a new line", 1, 8),
    ("if x:\npass", "expected an indented block after the 'if' statement on line 1", 2, 1),
    ("def f():\n", "expected an indented block after the function definition on line 1", 1, 9),
    ("x = (1,\ny = 2", "unclosed '(' opened at 1:5", 1, 5),
    ("tap($a\ntap($b)", "unclosed '(' opened at 1:4", 1, 4),
    ("x = [1, 2", "unclosed '[' opened at 1:5", 1, 5),
    ("x = [1, 2)", "')' does not match '[' opened at 1:5", 1, 10),
    ("x = 1)", "unmatched ')'", 1, 6),
    ("    x = 1", "unexpected indent", 1, 1),
    ("x = 1\n    y = 2", "unexpected indent", 2, 1),
    ("if x:\n    a = 1\n  b = 2", "unindent does not match any outer indentation level", 3, 1),
    ("if x:\n\ta = 1\n        b = 2", "inconsistent use of tabs and spaces in indentation", 3, 1),
    ("x = 'abc", "unterminated string", 1, 5),
    ("x = '''abc\n", "unterminated triple-quoted string", 1, 5),
    ("x = $", "expected an element name after '$'", 1, 5),
    ("x = 1 +", "expected an expression, found the end of the line", 1, 8),
    ("x = = 1", "expected an expression, found '='", 1, 5),
    ("tap($a) tap($b)", "expected an operator or the end of the statement, found name 'tap'", 1, 9),
    ("f(a b)", "expected ',' or ')', found name 'b'", 1, 5),
    ("f(,)", "expected an expression or ')', found ','", 1, 3),
    ("x = {'a' 1}", "expected ':', ',' or '}', found number 1", 1, 10),
    ("x = a.", "expected a name, found the end of the line", 1, 7),
    ("x = 1 if y", "expected 'else' in the conditional expression", 1, 11),
    ("tap($a); if x: tap($b)", "'if' cannot follow ';'", 1, 10),
    ("tap($a)\\ntap($b)", "unexpected character after '\\'", 1, 8),
    ("x = a ? b", "unexpected character '?'", 1, 7),
    ("f(a=1, b)", "positional argument follows keyword argument", 1, 8),
    ("f(a=1, a=2)", "keyword argument 'a' repeated", 1, 8),
    ("def f(a=1, b):\n    pass", "parameter 'b' without a default follows a parameter with a default", 1, 12),
    ("def f(a, a):\n    pass", "duplicate parameter 'a'", 1, 10),
    ("break", "'break' outside a loop", 1, 1),
    ("def f():\n    pass\ncontinue", "'continue' outside a loop", 3, 1),
    ("return 1", "'return' outside a function", 1, 1),
    ("x + 1 = 2", "cannot assign to an expression", 1, 1),
    ("f() = 3", "cannot assign to a function call", 1, 1),
    ("$a__b = 1", "cannot assign to the element $a__b", 1, 1),
    ("x.y = 1", "cannot assign to an attribute ('.y')", 1, 1),
    ("for $x in y:\n    pass", "cannot use the element $x as a loop variable", 1, 5),
    ("x = 007", "leading zeros in a decimal number", 1, 5),
    ("x = '\\x4'", "truncated \\x escape", 1, 6),
    ("print(f'{')", "unclosed '{' in f-string", 1, 9),
    ("print(f'}')", "single '}' is not allowed in an f-string", 1, 9),
    ("print(f'{}')", "empty expression in f-string", 1, 9),
    ("print(f'{a b}')", "expected ',' or ')', found name 'b'", 1, 12),
    ("x = f'{a!x}'", "f-string conversion must be '!r' or '!s'", 1, 9),
]


@pytest.mark.parametrize(("source", "message", "line", "column"), SYNTAX_ERRORS, ids=[c[0][:30] for c in SYNTAX_ERRORS])
def test_syntax_error_in_words(source: str, message: str, line: int, column: int) -> None:
    with pytest.raises(TapirSyntaxError) as info:
        parse(source, "s.tap")
    err = info.value
    assert message in err.message
    assert err.span is not None and (err.span.line, err.span.column) == (line, column)
    assert err.filename == "s.tap" and err.source == source
    rendered = err.render().splitlines()
    assert rendered[0].startswith(f"s.tap:{line}:{column}: ")
    assert "^" in rendered[2]
    # no parser internals leak into what a person reads
    for internal in ("Token(", "RPAR", "LPAR", "_NEWLINE", "__ANON", "$END", "Lark"):
        assert internal not in err.message


def test_hints() -> None:
    cases = {
        "if x = 1:\n    pass": "'=='",
        "x = 'abc": "'''",
        "for x in $l:tap(x)\n": "read as the element $l__tap",
        "tap($font_{}%)": "element name ends before '{'",
    }
    for source, hint in cases.items():
        with pytest.raises(TapirSyntaxError) as info:
            parse(source)
        assert info.value.hint is not None and hint in info.value.hint, source


def test_deep_nesting_is_a_syntax_error() -> None:
    with pytest.raises(TapirSyntaxError, match="nested brackets"):
        parse("x = " + "(" * 500 + "1" + ")" * 500)
    with pytest.raises(TapirSyntaxError, match="levels of indentation"):
        parse("".join(" " * i + "if x:\n" for i in range(150)) + " " * 150 + "pass\n")


# ---------------------------------------------------------------------------------------------
# tapir check


def test_check_ok(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "open.tap"
    f.write_text("print('open')\n", encoding="utf-8")
    assert main(["check", str(f)]) == 0
    assert capsys.readouterr().out.strip() == f"{f}: ok"


def test_check_reports_the_error_and_goes_on(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "x.tap"
    bad.write_text("import os\n", encoding="utf-8")
    good = tmp_path / "y.tap"
    good.write_text("print(1)\n", encoding="utf-8")
    assert main(["check", str(bad), str(good)]) == 1
    out = capsys.readouterr()
    assert out.err.splitlines()[:3] == [
        f"{bad}:1:1: error[unsupported]: 'import' is not allowed in Tapir scripts",
        "    import os",
        "    ^^^^^^",
    ]
    assert out.out.strip() == f"{good}: ok"


def test_check_missing_file_is_a_usage_error(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["check", str(tmp_path / "absent.tap")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["check", "run"])
def test_unreadable_scripts_are_usage_errors_in_words(command, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    latin = tmp_path / "latin.tap"
    latin.write_bytes(b'x = 1\nprint("caf\xe9")\n')
    assert main([command, str(latin)]) == 2
    err = capsys.readouterr().err
    assert err == f"tapir: {latin} is not UTF-8 text: byte 0xe9 on line 2 (save the script as UTF-8)\n"
    assert main([command, str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"tapir: {tmp_path} is a directory, not a script file\n"


@pytest.mark.parametrize("command", ["check", "run"])
def test_bom_and_crlf_scripts_read_like_plain_ones(command, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "s.tap"
    script.write_bytes(b"\xef\xbb\xbf# doc: absent.yaml\r\nif True:\r\n    print(1)\r\n")
    # the `# doc:` line is found behind the byte-order mark, so the missing document is reported
    assert main([command, str(script)]) == 1
    err = capsys.readouterr().err
    assert "error[document-missing]" in err and "absent.yaml" in err
    script.write_bytes(b"\xef\xbb\xbfif True:\r\n    print(1)\r\n")
    assert main([command, str(script)]) == 0


def test_check_through_a_subprocess(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "bad.tap"
    f.write_text("if x\n    tap($a)\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "tapir.cli", "check", str(f)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1
    assert f"{f}:1:5: error[syntax]: expected ':' after the if condition" in run.stderr
    assert "Traceback" not in run.stderr
