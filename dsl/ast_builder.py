"""Builds the Tapir AST (``tapir.dsl.ast``) from what the LALR parser reduces.

Runs inside the LALR parser, on each reduction, so that no parse tree is built (the fast path:
about three times faster than building a tree with positions and transforming it). Besides
building nodes it refuses the constructs the grammar reads only to name them
(set literals, generator expressions, bitwise operators, annotations, 'else' on loops), checks
assignment targets and argument order, and decodes literals, parsing f-string fields through a
callback so that their nodes get spans in the whole script.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from typing import Any

from lark import Token
from tapir.dsl.ast import (
    Assert,
    Assign,
    Attribute,
    AugAssign,
    BinOp,
    BoolOp,
    Break,
    Call,
    Compare,
    Comprehension,
    Constant,
    Continue,
    DictExpr,
    ElementRef,
    Expr,
    ExprStmt,
    For,
    FormattedValue,
    FString,
    FunctionDef,
    If,
    IfExp,
    Keyword,
    ListComp,
    ListExpr,
    Module,
    Name,
    Node,
    Param,
    Pass,
    Return,
    Slice,
    Stmt,
    Subscript,
    TupleExpr,
    UnaryOp,
    While,
)
from tapir.dsl.errors import Span, TapirSyntaxError, UnsupportedConstruct
from tapir.dsl.literals import (
    FLiteral,
    LiteralProblem,
    decode_escapes,
    decode_number,
    split_fstring,
    split_string,
)

# (text of a replacement field, its 1-based line and column in the script) -> the expression
FieldParser = Callable[[str, int, int], Expr]

_BITWISE_HINTS = {"|": "to combine conditions use 'or'", "&": "to combine conditions use 'and'"}
_REFUSED_AUGASSIGN = {"&=", "|=", "^=", "<<=", ">>=", "@="}


def _describe(node: Node) -> str:
    """An expression as a person names it, for "cannot assign to ..." messages."""
    if isinstance(node, Attribute):
        return f"an attribute ('.{node.attr}')"
    if isinstance(node, ElementRef):
        return f"the element ${node.name}"
    if isinstance(node, Call):
        return "a function call"
    if isinstance(node, Constant):
        return repr(node.value) if isinstance(node.value, bool) or node.value is None else "a literal"
    if isinstance(node, (FString, FormattedValue)):
        return "an f-string"
    if isinstance(node, Compare):
        return "a comparison"
    if isinstance(node, (BinOp, UnaryOp, BoolOp)):
        return "an expression"
    if isinstance(node, IfExp):
        return "a conditional expression"
    if isinstance(node, DictExpr):
        return "a dict"
    if isinstance(node, ListComp):
        return "a list comprehension"
    return "this expression"


class AstBuilder:
    """The parser's callbacks: each grammar rule's children -> an AST node, while parsing.

    Lark calls ``<rule name>(children)`` on every reduction (``transformer=`` with
    ``keep_all_tokens``), so no parse tree is built. Spans come from the first and last child,
    which is why every token, brackets and keywords included, is kept.

    One instance serves every parse. The only per-parse state, the outer spans of parenthesised
    expressions, is kept per thread and cleared by ``reset``.
    """

    def __init__(self, field_parser: FieldParser) -> None:
        self._field_parser = field_parser
        self._local = threading.local()

    def reset(self) -> None:
        self._local.paren = {}

    # -- positions ---------------------------------------------------------------------------

    @property
    def _paren(self) -> dict[int, tuple[Node, Span]]:
        # Outer spans of parenthesised expressions, by node identity (the node is kept alive
        # in the entry so its id cannot be reused). Chained operators span the parentheses of
        # their operands, as Python's do.
        try:
            return self._local.paren  # type: ignore[no-any-return]
        except AttributeError:
            self._local.paren = {}
            return self._local.paren  # type: ignore[no-any-return]

    def _outer(self, node: Node) -> Span:
        entry = self._paren.get(id(node))
        return entry[1] if entry is not None and entry[0] is node else node.span

    def _sp(self, item: Any) -> Span:
        if isinstance(item, Token):
            # (Lark types token positions as optional; its lexer always sets them)
            return Span(item.line or 1, item.column or 1, item.end_line or 1, item.end_column or 1)
        return self._outer(item)

    def _range(self, first: Any, last: Any) -> Span:
        a, b = self._sp(first), self._sp(last)
        return Span(a.line, a.column, b.end_line, b.end_column)

    @staticmethod
    def _join(first: Span, last: Span) -> Span:
        return Span(first.line, first.column, last.end_line, last.end_column)

    def _whole(self, children: Sequence[Any]) -> Span:
        """From the first to the last child that is present (placeholders are None)."""
        items = [c for c in children if c is not None and not isinstance(c, (list, tuple))]
        return self._range(items[0], items[-1])

    def _in_token(self, tok: Token, offset: int) -> tuple[int, int]:
        """Script position of the character at ``offset`` in the token's text."""
        text = str(tok)
        start = self._sp(tok)
        newlines = text.count("\n", 0, offset)
        if newlines == 0:
            return start.line, start.column + offset
        return start.line + newlines, offset - text.rfind("\n", 0, offset)

    def _token_range(self, tok: Token, start: int, end: int) -> Span:
        line, col = self._in_token(tok, start)
        end_line, end_col = self._in_token(tok, max(end, start + 1))
        return Span(line, col, end_line, end_col)

    # -- module and statements ----------------------------------------------------------------

    @staticmethod
    def _statements(items: Sequence[Any]) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        for item in items:
            if item is None or isinstance(item, Token):
                continue
            if isinstance(item, (list, tuple)):
                out.extend(item)
            else:
                out.append(item)
        return tuple(out)

    @staticmethod
    def _docstring(body: tuple[Stmt, ...]) -> tuple[str | None, tuple[Stmt, ...]]:
        if body and isinstance(body[0], ExprStmt):
            value = body[0].value
            if isinstance(value, Constant) and isinstance(value.value, str):
                return value.value, body[1:]
        return None, body

    def file_input(self, children: list[Any]) -> Module:
        docstring, body = self._docstring(self._statements(children))
        # the parser replaces the span with the whole text's
        return Module(Span(1, 1, 1, 1), body, docstring)

    def fexpr(self, children: list[Any]) -> Expr:
        return children[1]  # type: ignore[no-any-return]

    def simple_stmt(self, children: list[Any]) -> list[Stmt]:
        return [c for c in children if isinstance(c, Node)]

    def suite(self, children: list[Any]) -> tuple[Stmt, ...]:
        return self._statements(children)

    def expr_stmt(self, children: list[Any]) -> ExprStmt:
        return ExprStmt(self._sp(children[0]), children[0])

    def assign(self, children: list[Any]) -> Assign:
        targets = tuple(self._target(t, "cannot assign to {}") for t in children[0:-1:2])
        return Assign(self._range(children[0], children[-1]), targets, children[-1])

    def augassign(self, children: list[Any]) -> AugAssign:
        target, op, value = children
        if str(op) in _REFUSED_AUGASSIGN:
            raise UnsupportedConstruct(f"the operator '{op}' is not supported in Tapir scripts", self._sp(op))
        if not isinstance(target, (Name, Subscript)):
            raise TapirSyntaxError(f"'{op}' cannot update {_describe(target)}", self._sp(target))
        return AugAssign(self._range(target, value), target, str(op)[:-1], value)

    def annassign(self, children: list[Any]) -> Any:
        raise UnsupportedConstruct(
            "annotations ('name: type') are not supported in Tapir scripts",
            self._whole(children),
            hint="to assign a value write 'name = value'",
        )

    def pass_stmt(self, children: list[Any]) -> Pass:
        return Pass(self._sp(children[0]))

    def break_stmt(self, children: list[Any]) -> Break:
        return Break(self._sp(children[0]))

    def continue_stmt(self, children: list[Any]) -> Continue:
        return Continue(self._sp(children[0]))

    def return_stmt(self, children: list[Any]) -> Return:
        return Return(self._whole(children), children[1])

    def assert_stmt(self, children: list[Any]) -> Assert:
        return Assert(self._whole(children), children[1], children[3])

    def if_stmt(self, children: list[Any]) -> If:
        keyword, test, _colon, body, *rest = children
        orelse: tuple[Stmt, ...] = rest[-1] or ()
        for elif_kw, elif_test, elif_body in reversed(rest[:-1]):
            last = orelse[-1].span if orelse else elif_body[-1].span
            orelse = (If(self._join(self._sp(elif_kw), last), elif_test, elif_body, orelse),)
        last = orelse[-1].span if orelse else body[-1].span
        return If(self._join(self._sp(keyword), last), test, body, orelse)

    def elif_clause(self, children: list[Any]) -> tuple[Token, Expr, tuple[Stmt, ...]]:
        return children[0], children[1], children[3]

    def else_clause(self, children: list[Any]) -> tuple[Stmt, ...]:
        return children[2]  # type: ignore[no-any-return]

    def loop_else(self, children: list[Any]) -> Any:
        raise UnsupportedConstruct(
            "'else' on a 'for' or 'while' loop is not supported in Tapir scripts",
            self._sp(children[0]),
            hint="use a flag variable set before 'break'",
        )

    def while_stmt(self, children: list[Any]) -> While:
        body = children[3]
        return While(self._join(self._sp(children[0]), body[-1].span), children[1], body)

    def for_stmt(self, children: list[Any]) -> For:
        target = self._target(children[1], "cannot use {} as a loop variable")
        body = children[5]
        return For(self._join(self._sp(children[0]), body[-1].span), target, children[3], body)

    def funcdef(self, children: list[Any]) -> FunctionDef:
        name, params, body = children[1], children[3], children[7]
        docstring, body = self._docstring(body)
        span = self._join(self._sp(children[0]), children[7][-1].span)
        return FunctionDef(span, str(name), tuple(params or ()), body, docstring)

    def parameters(self, children: list[Any]) -> tuple[Param, ...]:
        params = [c for c in children if isinstance(c, Param)]
        seen: set[str] = set()
        has_default = False
        for p in params:
            if p.name in seen:
                raise TapirSyntaxError(f"duplicate parameter '{p.name}'", p.span)
            seen.add(p.name)
            if p.default is not None:
                has_default = True
            elif has_default:
                raise TapirSyntaxError(
                    f"parameter '{p.name}' without a default follows a parameter with a default", p.span
                )
        return tuple(params)

    def param(self, children: list[Any]) -> Param:
        name, default = children[0], children[-1]
        return Param(self._whole(children), str(name), default)

    def param_annotation(self, children: list[Any]) -> Any:
        raise UnsupportedConstruct("type annotations are not supported in Tapir scripts", self._whole(children))

    def return_annotation(self, children: list[Any]) -> Any:
        raise UnsupportedConstruct(
            "return annotations ('-> type') are not supported in Tapir scripts", self._whole(children)
        )

    def _target(self, node: Expr, what: str) -> Any:
        if isinstance(node, (Name, Subscript)):
            return node
        if isinstance(node, (TupleExpr, ListExpr)):
            for elt in node.elts:
                self._target(elt, what)
            return node
        hint = "to compare two values use '=='" if isinstance(node, Compare) else None
        message = what.format(_describe(node))
        raise TapirSyntaxError(message, self._outer(node), hint=hint)

    # -- expressions -------------------------------------------------------------------------

    def testlist_tuple(self, children: list[Any]) -> TupleExpr:
        return TupleExpr(self._whole(children), tuple(c for c in children if isinstance(c, Node)))

    exprlist_tuple = testlist_tuple

    def ternary(self, children: list[Any]) -> IfExp:
        body, _if, test, _else, orelse = children
        return IfExp(self._range(body, orelse), test, body, orelse)

    def or_test(self, children: list[Any]) -> BoolOp:
        return BoolOp(self._range(children[0], children[-1]), "or", tuple(children[::2]))

    def and_test(self, children: list[Any]) -> BoolOp:
        return BoolOp(self._range(children[0], children[-1]), "and", tuple(children[::2]))

    def not_op(self, children: list[Any]) -> UnaryOp:
        return UnaryOp(self._range(children[0], children[1]), "not", children[1])

    def comparison(self, children: list[Any]) -> Compare:
        return Compare(
            self._range(children[0], children[-1]), children[0], tuple(children[1::2]), tuple(children[2::2])
        )

    def comp_op(self, children: list[Token]) -> str:
        return " ".join(str(t) for t in children)

    def _bitwise(self, children: list[Any]) -> Any:
        op = children[1]
        raise UnsupportedConstruct(
            f"the bitwise operator '{op}' is not supported in Tapir scripts",
            self._sp(op),
            hint=_BITWISE_HINTS.get(str(op)),
        )

    expr = xor_expr = and_expr = shift_expr = _bitwise

    def _chain(self, children: list[Any]) -> BinOp:
        left = children[0]
        start = self._outer(left)
        for i in range(1, len(children), 2):
            right = children[i + 1]
            left = BinOp(self._join(start, self._outer(right)), str(children[i]), left, right)
        return left  # type: ignore[no-any-return]

    arith_expr = term = _chain

    def unary(self, children: list[Any]) -> UnaryOp:
        op, operand = children
        if op.type == "TILDE":
            raise UnsupportedConstruct("the bitwise operator '~' is not supported in Tapir scripts", self._sp(op))
        return UnaryOp(self._range(op, operand), str(op), operand)

    def power(self, children: list[Any]) -> BinOp:
        return BinOp(self._range(children[0], children[2]), "**", children[0], children[2])

    def call(self, children: list[Any]) -> Call:
        func, _lpar, arguments, rpar = children
        args: list[Expr] = []
        keywords: list[Keyword] = []
        for arg in arguments or ():
            if isinstance(arg, Keyword):
                if any(k.name == arg.name for k in keywords):
                    raise TapirSyntaxError(f"keyword argument '{arg.name}' repeated", arg.span)
                keywords.append(arg)
            elif keywords:
                raise TapirSyntaxError("positional argument follows keyword argument", self._outer(arg))
            else:
                args.append(arg)
        return Call(self._range(func, rpar), func, tuple(args), tuple(keywords))

    def arguments(self, children: list[Any]) -> list[Any]:
        return [c for c in children if isinstance(c, Node)]

    def keyword(self, children: list[Any]) -> Keyword:
        return Keyword(self._range(children[0], children[2]), str(children[0]), children[2])

    def subscript(self, children: list[Any]) -> Subscript:
        return Subscript(self._range(children[0], children[3]), children[0], children[2])

    def subscripts(self, children: list[Any]) -> Expr:
        items = [c for c in children if isinstance(c, Node)]
        if len(items) == 1 and len(children) == 2 and children[1] is None:
            return items[0]
        return TupleExpr(self._whole(children), tuple(items))

    def slice_item(self, children: list[Any]) -> Slice:
        lower, _colon, upper = children[0], children[1], children[2]
        step = children[4] if len(children) > 4 else None
        return Slice(self._whole(children), lower, upper, step)

    def attribute(self, children: list[Any]) -> Attribute:
        value, _dot, name = children
        return Attribute(self._range(value, name), value, str(name), self._sp(name))

    def empty_tuple(self, children: list[Any]) -> TupleExpr:
        return TupleExpr(self._range(children[0], children[1]), ())

    def paren(self, children: list[Any]) -> Expr:
        lpar, inner, rpar = children
        outer = self._range(lpar, rpar)
        if isinstance(inner, TupleExpr) and inner.elts:
            first = self._outer(inner.elts[0])
            if (inner.span.line, inner.span.column) == (first.line, first.column):
                # a bare tuple takes its parentheses into its span, as in Python
                return replace(inner, span=outer)
        self._paren[id(inner)] = (inner, outer)
        return inner  # type: ignore[no-any-return]

    def list_display(self, children: list[Any]) -> ListExpr:
        return ListExpr(self._range(children[0], children[2]), tuple(children[1] or ()))

    def list_items(self, children: list[Any]) -> list[Any]:
        return [c for c in children if isinstance(c, Node)]

    def listcomp(self, children: list[Any]) -> ListComp:
        return ListComp(self._range(children[0], children[3]), children[1], tuple(children[2]))

    def dict_display(self, children: list[Any]) -> DictExpr:
        items = children[1] or ()
        span = self._range(children[0], children[2])
        return DictExpr(span, tuple(k for k, _ in items), tuple(v for _, v in items))

    def dict_items(self, children: list[Any]) -> list[Any]:
        return [c for c in children if isinstance(c, tuple)]

    def dict_item(self, children: list[Any]) -> tuple[Expr, Expr]:
        return children[0], children[2]

    def _refused(self, children: list[Any], what: str, hint: str) -> UnsupportedConstruct:
        first = children[0]
        last = children[-1]
        end = last[-1].span if isinstance(last, list) else self._sp(last)
        return UnsupportedConstruct(
            f"{what} are not supported in Tapir scripts", self._join(self._sp(first), end), hint=hint
        )

    def genexp(self, children: list[Any]) -> Any:
        raise self._refused(children, "generator expressions", "use a list comprehension: [x for x in items]")

    def set_display(self, children: list[Any]) -> Any:
        raise self._refused(children, "set literals", "use a list: [a, b]")

    def setcomp(self, children: list[Any]) -> Any:
        raise self._refused(children, "set comprehensions", "use a list comprehension: [x for x in items]")

    def dictcomp(self, children: list[Any]) -> Any:
        raise self._refused(children, "dict comprehensions", "build the dict in a 'for' loop")

    def ellipsis(self, children: list[Any]) -> Any:
        raise UnsupportedConstruct("'...' is not supported in Tapir scripts", self._sp(children[0]), hint="use 'pass'")

    def comp_clauses(self, children: list[Any]) -> list[Comprehension]:
        gens: list[Comprehension] = []
        for clause in children:
            if clause[0] == "for":
                _, span, target, iterable = clause
                gens.append(Comprehension(span, target, iterable, ()))
            else:
                _, span, cond = clause
                last = gens[-1]
                gens[-1] = Comprehension(self._join(last.span, span), last.target, last.iter, last.conds + (cond,))
        return gens

    def comp_for(self, children: list[Any]) -> tuple[str, Span, Any, Expr]:
        target = self._target(children[1], "cannot use {} as a loop variable")
        return "for", self._range(children[0], children[3]), target, children[3]

    def comp_if(self, children: list[Any]) -> tuple[str, Span, Expr]:
        return "if", self._range(children[0], children[1]), children[1]

    # -- atoms -------------------------------------------------------------------------------

    def name(self, children: list[Token]) -> Name:
        return Name(self._sp(children[0]), str(children[0]))

    def element(self, children: list[Token]) -> ElementRef:
        # `$screen:element` (the upstream spelling) names the same element as `$screen__element`.
        return ElementRef(self._sp(children[0]), str(children[0])[1:].replace(":", "__", 1))

    def number(self, children: list[Token]) -> Constant:
        tok = children[0]
        if tok.type == "IMAG_NUMBER":
            raise UnsupportedConstruct("complex numbers are not supported in Tapir scripts", self._sp(tok))
        try:
            return Constant(self._sp(tok), decode_number(str(tok)))
        except LiteralProblem as p:
            raise TapirSyntaxError(p.message, self._sp(tok)) from None

    def const_none(self, children: list[Any]) -> Constant:
        return Constant(self._sp(children[0]), None)

    def const_true(self, children: list[Any]) -> Constant:
        return Constant(self._sp(children[0]), True)

    def const_false(self, children: list[Any]) -> Constant:
        return Constant(self._sp(children[0]), False)

    def strings(self, children: list[Token]) -> Constant | FString:
        parts: list[Expr] = []
        is_f = False
        for tok in children:
            st = split_string(str(tok))
            if st.is_bytes:
                raise UnsupportedConstruct("bytes literals (b'...') are not supported in Tapir scripts", self._sp(tok))
            try:
                if st.is_fstring:
                    is_f = True
                    parts.extend(self._fstring_parts(tok, st.body, st.body_start, st.raw))
                else:
                    value = st.body if st.raw else decode_escapes(st.body, st.body_start)
                    parts.append(Constant(self._sp(tok), value))
            except LiteralProblem as p:
                err = UnsupportedConstruct if p.unsupported else TapirSyntaxError
                raise err(p.message, self._token_range(tok, p.start, p.end)) from None
        span = self._range(children[0], children[-1])
        if not is_f:
            return Constant(span, "".join(p.value for p in parts))  # type: ignore[union-attr]
        merged: list[Expr] = []
        for part in parts:
            prev = merged[-1] if merged else None
            if isinstance(part, Constant) and isinstance(prev, Constant):
                merged[-1] = Constant(self._join(prev.span, part.span), str(prev.value) + str(part.value))
            elif not (isinstance(part, Constant) and part.value == ""):
                merged.append(part)
        return FString(span, tuple(merged))

    def _fstring_parts(self, tok: Token, body: str, body_start: int, raw: bool) -> list[Expr]:
        parts: list[Expr] = []
        try:
            pieces = split_fstring(body)
        except LiteralProblem as p:
            start, end = p.start + body_start, p.end + body_start
            raise LiteralProblem(p.message, start, end, unsupported=p.unsupported) from None
        for piece in pieces:
            if isinstance(piece, FLiteral):
                start = body_start + piece.start
                text = piece.text if raw else decode_escapes(piece.text, start)
                parts.append(Constant(self._token_range(tok, start, body_start + piece.end), text))
                continue
            line, col = self._in_token(tok, body_start + piece.expr_start)
            value = self._field_parser(body[piece.expr_start : piece.expr_end], line, col)
            span = self._token_range(tok, body_start + piece.start, body_start + piece.end)
            parts.append(FormattedValue(span, value, piece.conversion, piece.format_spec))
        return parts


def shift_spans(node: Any, line_offset: int, column_offset: int) -> Any:
    """A copy of ``node`` moved ``line_offset`` lines down; positions on line 1 also move right.

    Used for f-string fields, which are parsed on their own and then placed in the script.
    """
    def move(span: Span) -> Span:
        def at(line: int, col: int) -> tuple[int, int]:
            return (line + line_offset, col + column_offset) if line == 1 else (line + line_offset, col)

        a, b = at(span.line, span.column), at(span.end_line, span.end_column)
        return Span(a[0], a[1], b[0], b[1])

    if isinstance(node, tuple):
        return tuple(shift_spans(item, line_offset, column_offset) for item in node)
    if not isinstance(node, Node):
        return node
    changes: dict[str, Any] = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, Span):
            changes[f.name] = move(value)
        elif isinstance(value, (Node, tuple)):
            changes[f.name] = shift_spans(value, line_offset, column_offset)
    return replace(node, **changes)


def check_statement_context(body: Sequence[Stmt], in_loop: bool = False, in_function: bool = False) -> None:
    """Refuse 'break'/'continue' outside a loop and 'return' outside a function, as Python does."""
    for stmt in body:
        if isinstance(stmt, (Break, Continue)) and not in_loop:
            word = "break" if isinstance(stmt, Break) else "continue"
            raise TapirSyntaxError(f"'{word}' outside a loop", stmt.span)
        if isinstance(stmt, Return) and not in_function:
            raise TapirSyntaxError("'return' outside a function", stmt.span)
        if isinstance(stmt, If):
            check_statement_context(stmt.body, in_loop, in_function)
            check_statement_context(stmt.orelse, in_loop, in_function)
        elif isinstance(stmt, (While, For)):
            check_statement_context(stmt.body, True, in_function)
        elif isinstance(stmt, FunctionDef):
            check_statement_context(stmt.body, False, True)
