"""CPython's own parser as an oracle for the Tapir parser (test helper).

Tapir is a subset of Python plus `$element` references. Replacing each reference's `$` with a
letter (and '%' in its name with another) gives a Python program of the same shape and length,
so `ast.parse` of that text must give the same tree, with the same positions, as Tapir's parser.
``tapir_form`` and ``python_form`` render both trees in one notation to compare them as strings.
"""

from __future__ import annotations

import ast
from dataclasses import fields
from typing import Any

from tapir.core.errors import Span
from tapir.dsl import ast as T

DOLLAR = "Ж"  # stands for '$': a letter, so `Жa__b` is a Python name
PERCENT = "Ю"  # stands for '%' inside element names

# Nodes whose positions CPython does not give (or gives differently) are compared without them.
_NO_SPAN = (T.Comprehension, T.Param, T.Module)


def _span(s: Span) -> str:
    return f"@{s.line}:{s.column}-{s.end_line}:{s.end_column}"


def tapir_form(node: Any, spans: bool = True, _in_fstring: bool = False) -> str:
    """A Tapir AST in the comparison notation: ``Type@l:c-l:c(field, ...)``."""
    if isinstance(node, tuple):
        return "[" + ", ".join(tapir_form(n, spans, _in_fstring) for n in node) + "]"
    if not isinstance(node, T.Node):
        return repr(node)
    parts = []
    for f in fields(node):
        if f.name == "span" or f.name.endswith("_span"):  # positions of parts CPython does not give
            continue
        value = getattr(node, f.name)
        if isinstance(node, T.FString):
            parts.append(tapir_form(value, spans, True))
        else:
            parts.append(tapir_form(value, spans))
    name = type(node).__name__
    if isinstance(node, T.ElementRef):
        name, parts = "ElementRef", [repr(node.name)]
    show_span = spans and not isinstance(node, _NO_SPAN) and not _in_fstring
    return f"{name}{_span(node.span) if show_span else ''}({', '.join(parts)})"


def substitute_elements(source: str, module: T.Module) -> str:
    """The script as Python text: every `$name` becomes `Жname` ('%' -> 'Ю'), same length."""
    lines = source.split("\n")
    for ref in T.element_refs(module):
        s = ref.span
        text = lines[s.line - 1]
        original = text[s.column - 1 : s.end_column - 1]
        assert original.startswith("$") and ":" not in original, original
        python_name = DOLLAR + original[1:].replace("%", PERCENT)
        lines[s.line - 1] = text[: s.column - 1] + python_name + text[s.end_column - 1 :]
    return "\n".join(lines)


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}
_UNARY = {ast.Not: "not", ast.USub: "-", ast.UAdd: "+"}
_CMP = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}
_CONVERSIONS = {-1: None, ord("r"): "r", ord("s"): "s", ord("a"): "a"}


def _end(n: Any) -> tuple[int, int]:
    """Where a node ends. CPython ends a block statement at the block's last token, which can be
    a ';' after its last statement; Tapir ends it with the last statement."""
    if isinstance(n, (ast.If, ast.While, ast.For, ast.FunctionDef)):
        return _end((n.orelse or n.body)[-1] if not isinstance(n, ast.FunctionDef) else n.body[-1])
    return n.end_lineno, n.end_col_offset


class _Py:
    def __init__(self, source: str, spans: bool) -> None:
        self.lines = source.split("\n")
        self.spans = spans

    def col(self, line: int, byte_offset: int) -> int:
        # CPython columns are UTF-8 byte offsets; Tapir's are characters.
        return len(self.lines[line - 1].encode("utf-8")[:byte_offset].decode("utf-8", "replace")) + 1

    def node(self, name: str, n: Any, *parts: str, span: bool = True) -> str:
        where = ""
        if self.spans and span:
            end_line, end_col = _end(n)
            where = (f"@{n.lineno}:{self.col(n.lineno, n.col_offset)}"
                     f"-{end_line}:{self.col(end_line, end_col)}")
        return f"{name}{where}({', '.join(parts)})"

    def many(self, items: Any) -> str:
        return "[" + ", ".join(self.conv(i) for i in items) + "]"

    def body(self, stmts: list[ast.stmt]) -> tuple[str | None, list[ast.stmt]]:
        first = stmts[0] if stmts else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            return first.value.value, stmts[1:]
        return None, stmts

    def module(self, m: ast.Module) -> str:
        doc, body = self.body(m.body)
        return f"Module({self.many(body)}, {doc!r})"

    def opt(self, n: Any) -> str:
        return "None" if n is None else self.conv(n)

    def conv(self, n: Any, in_fstring: bool = False) -> str:  # noqa: C901 - one case per node type
        c, node = self.conv, self.node
        if isinstance(n, ast.Expr):
            return node("ExprStmt", n, c(n.value))
        if isinstance(n, ast.Assign):
            return node("Assign", n, self.many(n.targets), c(n.value))
        if isinstance(n, ast.AugAssign):
            return node("AugAssign", n, c(n.target), repr(_BINOPS[type(n.op)]), c(n.value))
        if isinstance(n, ast.If):
            return node("If", n, c(n.test), self.many(n.body), self.many(n.orelse))
        if isinstance(n, ast.While):
            return node("While", n, c(n.test), self.many(n.body))
        if isinstance(n, ast.For):
            return node("For", n, c(n.target), c(n.iter), self.many(n.body))
        if isinstance(n, (ast.Break, ast.Continue, ast.Pass)):
            return node(type(n).__name__, n)
        if isinstance(n, ast.FunctionDef):
            args = n.args
            defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults)
            params = "[" + ", ".join(
                f"Param({a.arg!r}, {self.opt(d)})" for a, d in zip(args.args, defaults, strict=True)
            ) + "]"
            doc, body = self.body(n.body)
            return node("FunctionDef", n, repr(n.name), params, self.many(body), repr(doc))
        if isinstance(n, ast.Return):
            return node("Return", n, self.opt(n.value))
        if isinstance(n, ast.Assert):
            return node("Assert", n, c(n.test), self.opt(n.msg))
        if isinstance(n, ast.Constant):
            return node("Constant", n, repr(n.value), span=not in_fstring)
        if isinstance(n, ast.JoinedStr):
            parts = "[" + ", ".join(self.conv(v, in_fstring=True) for v in n.values) + "]"
            return node("FString", n, parts)
        if isinstance(n, ast.FormattedValue):
            spec = None
            if n.format_spec is not None:
                assert isinstance(n.format_spec, ast.JoinedStr)
                spec = "".join(str(v.value) for v in n.format_spec.values if isinstance(v, ast.Constant))
            return node("FormattedValue", n, c(n.value), repr(_CONVERSIONS[n.conversion]), repr(spec), span=False)
        if isinstance(n, ast.Name):
            if n.id.startswith(DOLLAR):
                return node("ElementRef", n, repr(n.id[1:].replace(PERCENT, "%")))
            return node("Name", n, repr(n.id))
        if isinstance(n, ast.List):
            return node("ListExpr", n, self.many(n.elts))
        if isinstance(n, ast.Tuple):
            return node("TupleExpr", n, self.many(n.elts))
        if isinstance(n, ast.Dict):
            return node("DictExpr", n, self.many(n.keys), self.many(n.values))
        if isinstance(n, ast.BinOp):
            return node("BinOp", n, repr(_BINOPS[type(n.op)]), c(n.left), c(n.right))
        if isinstance(n, ast.UnaryOp):
            return node("UnaryOp", n, repr(_UNARY[type(n.op)]), c(n.operand))
        if isinstance(n, ast.BoolOp):
            return node("BoolOp", n, repr("and" if isinstance(n.op, ast.And) else "or"), self.many(n.values))
        if isinstance(n, ast.Compare):
            ops = "[" + ", ".join(repr(_CMP[type(o)]) for o in n.ops) + "]"
            return node("Compare", n, c(n.left), ops, self.many(n.comparators))
        if isinstance(n, ast.IfExp):
            return node("IfExp", n, c(n.test), c(n.body), c(n.orelse))
        if isinstance(n, ast.Slice):
            return node("Slice", n, self.opt(n.lower), self.opt(n.upper), self.opt(n.step))
        if isinstance(n, ast.Subscript):
            return node("Subscript", n, c(n.value), c(n.slice))
        if isinstance(n, ast.Attribute):
            return node("Attribute", n, c(n.value), repr(n.attr))
        if isinstance(n, ast.keyword):
            return node("Keyword", n, repr(n.arg), c(n.value))
        if isinstance(n, ast.Call):
            return node("Call", n, c(n.func), self.many(n.args), self.many(n.keywords))
        if isinstance(n, ast.comprehension):
            return node("Comprehension", n, c(n.target), c(n.iter), self.many(n.ifs), span=False)
        if isinstance(n, ast.ListComp):
            return node("ListComp", n, c(n.elt), self.many(n.generators))
        raise AssertionError(f"no Tapir counterpart for {type(n).__name__}")


def python_form(source: str, spans: bool = True) -> str:
    """The Python text's CPython AST in the notation of ``tapir_form``."""
    return _Py(source, spans).module(ast.parse(source))
