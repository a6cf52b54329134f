"""Builds the Tapir AST (``tapir.dsl.ast``) from the Lark parse tree.

Runs after parsing (Lark gives rule positions, ``meta``, only to transformers applied to a built
tree). Besides building nodes it refuses the constructs the grammar reads only to name them
(set literals, generator expressions, bitwise operators, annotations, 'else' on loops), checks
assignment targets and argument order, and decodes literals, parsing f-string fields through a
callback so that their nodes get spans in the whole script.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from lark import Token, Transformer, v_args

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


@v_args(meta=True)
class AstBuilder(Transformer):  # type: ignore[type-arg]
    """Lark tree -> AST. One instance per parse (it keeps per-parse state).

    ``line_offset``/``column_offset`` place a sub-parse (an f-string field) in the script: every
    position is moved down ``line_offset`` lines, and positions on the sub-text's first line
    right by ``column_offset`` columns.
    """

    def __init__(
        self,
        field_parser: FieldParser,
        end: tuple[int, int] = (1, 1),
        line_offset: int = 0,
        column_offset: int = 0,
    ) -> None:
        super().__init__(visit_tokens=False)
        self._field_parser = field_parser
        self._end = end
        self._ld = line_offset
        self._cd = column_offset
        # Outer spans of parenthesised expressions, by node identity (the node is kept alive
        # here so its id cannot be reused). Chained operators span their operands' parentheses.
        self._paren: dict[int, tuple[Node, Span]] = {}

    # -- positions ---------------------------------------------------------------------------

    def _at(self, line: int, column: int) -> tuple[int, int]:
        if line == 1:
            return line + self._ld, column + self._cd
        return line + self._ld, column

    def _span(self, meta: Any) -> Span:
        line, col = self._at(meta.line, meta.column)
        end_line, end_col = self._at(meta.end_line, meta.end_column)
        return Span(line, col, end_line, end_col)

    def _tok(self, tok: Token) -> Span:
        line, col = self._at(tok.line, tok.column)
        end_line, end_col = self._at(tok.end_line, tok.end_column)
        return Span(line, col, end_line, end_col)

    def _in_token(self, tok: Token, offset: int) -> tuple[int, int]:
        """Script position of the character at ``offset`` in the token's text."""
        text = str(tok)
        newlines = text.count("\n", 0, offset)
        if newlines == 0:
            return self._at(tok.line, tok.column + offset)
        return self._at(tok.line + newlines, offset - text.rfind("\n", 0, offset))

    def _token_range(self, tok: Token, start: int, end: int) -> Span:
        line, col = self._in_token(tok, start)
        end_line, end_col = self._in_token(tok, max(end, start + 1))
        return Span(line, col, end_line, end_col)

    def _outer(self, node: Node) -> Span:
        entry = self._paren.get(id(node))
        return entry[1] if entry is not None and entry[0] is node else node.span

    @staticmethod
    def _join(first: Span, last: Span) -> Span:
        return Span(first.line, first.column, last.end_line, last.end_column)

    def __default__(self, data: Any, children: Any, meta: Any) -> Any:
        raise AssertionError(f"no AST rule for grammar rule {data!r}")

    # -- module and statements ----------------------------------------------------------------

    @staticmethod
    def _flatten(items: Sequence[Any]) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        for item in items:
            if item is None or isinstance(item, Token):
                continue
            if isinstance(item, list):
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

    def file_input(self, meta: Any, children: list[Any]) -> Module:
        docstring, body = self._docstring(self._flatten(children))
        return Module(Span(1, 1, self._end[0], self._end[1]), body, docstring)

    def fexpr(self, meta: Any, children: list[Any]) -> Expr:
        return children[0]  # type: ignore[no-any-return]

    def simple_stmt(self, meta: Any, children: list[Any]) -> list[Stmt]:
        return [c for c in children if c is not None and not isinstance(c, Token)]

    def suite(self, meta: Any, children: list[Any]) -> tuple[Stmt, ...]:
        return self._flatten(children)

    def expr_stmt(self, meta: Any, children: list[Any]) -> ExprStmt:
        return ExprStmt(self._span(meta), children[0])

    def assign(self, meta: Any, children: list[Any]) -> Assign:
        targets = tuple(self._target(t, "assign to") for t in children[:-1])
        return Assign(self._span(meta), targets, children[-1])

    def augassign(self, meta: Any, children: list[Any]) -> AugAssign:
        target, op, value = children
        if str(op) in _REFUSED_AUGASSIGN:
            raise UnsupportedConstruct(f"the operator '{op}' is not supported in Tapir scripts", self._tok(op))
        if not isinstance(target, (Name, Subscript)):
            raise TapirSyntaxError(f"'{op}' cannot update {_describe(target)}", target.span)
        return AugAssign(self._span(meta), target, str(op)[:-1], value)

    def annassign(self, meta: Any, children: list[Any]) -> Any:
        raise UnsupportedConstruct(
            "annotations ('name: type') are not supported in Tapir scripts",
            self._span(meta),
            hint="to assign a value write 'name = value'",
        )

    def pass_stmt(self, meta: Any, children: list[Any]) -> Pass:
        return Pass(self._span(meta))

    def break_stmt(self, meta: Any, children: list[Any]) -> Break:
        return Break(self._span(meta))

    def continue_stmt(self, meta: Any, children: list[Any]) -> Continue:
        return Continue(self._span(meta))

    def return_stmt(self, meta: Any, children: list[Any]) -> Return:
        return Return(self._span(meta), children[0])

    def assert_stmt(self, meta: Any, children: list[Any]) -> Assert:
        return Assert(self._span(meta), children[0], children[1])

    def if_stmt(self, meta: Any, children: list[Any]) -> If:
        test, body, *rest = children
        orelse: tuple[Stmt, ...] = rest[-1] or ()
        for span, elif_test, elif_body in reversed(rest[:-1]):
            last = orelse[-1].span if orelse else elif_body[-1].span
            orelse = (If(self._join(span, last), elif_test, elif_body, orelse),)
        return If(self._span(meta), test, body, orelse)

    def elif_clause(self, meta: Any, children: list[Any]) -> tuple[Span, Expr, tuple[Stmt, ...]]:
        return self._span(meta), children[0], children[1]

    def else_clause(self, meta: Any, children: list[Any]) -> tuple[Stmt, ...]:
        return children[0]  # type: ignore[no-any-return]

    def loop_else(self, meta: Any, children: list[Any]) -> Any:
        start = self._span(meta)
        raise UnsupportedConstruct(
            "'else' on a 'for' or 'while' loop is not supported in Tapir scripts",
            Span(start.line, start.column, start.line, start.column + 4),
            hint="use a flag variable set before 'break'",
        )

    def while_stmt(self, meta: Any, children: list[Any]) -> While:
        return While(self._span(meta), children[0], children[1])

    def for_stmt(self, meta: Any, children: list[Any]) -> For:
        target = self._target(children[0], "use as a loop variable")
        return For(self._span(meta), target, children[1], children[2])

    def funcdef(self, meta: Any, children: list[Any]) -> FunctionDef:
        name, params, _annotation, body = children
        docstring, body = self._docstring(body)
        return FunctionDef(self._span(meta), str(name), tuple(params or ()), body, docstring)

    def parameters(self, meta: Any, children: list[Param]) -> tuple[Param, ...]:
        seen: set[str] = set()
        has_default = False
        for p in children:
            if p.name in seen:
                raise TapirSyntaxError(f"duplicate parameter '{p.name}'", p.span)
            seen.add(p.name)
            if p.default is not None:
                has_default = True
            elif has_default:
                raise TapirSyntaxError(
                    f"parameter '{p.name}' without a default follows a parameter with a default", p.span
                )
        return tuple(children)

    def param(self, meta: Any, children: list[Any]) -> Param:
        name, _annotation, default = children
        return Param(self._span(meta), str(name), default)

    def param_annotation(self, meta: Any, children: list[Any]) -> Any:
        raise UnsupportedConstruct("type annotations are not supported in Tapir scripts", self._span(meta))

    def return_annotation(self, meta: Any, children: list[Any]) -> Any:
        raise UnsupportedConstruct("return annotations ('-> type') are not supported in Tapir scripts", self._span(meta))

    def _target(self, node: Expr, what: str) -> Any:
        if isinstance(node, (Name, Subscript)):
            return node
        if isinstance(node, (TupleExpr, ListExpr)):
            for elt in node.elts:
                self._target(elt, what)
            return node
        hint = "to compare two values use '=='" if isinstance(node, Compare) else None
        raise TapirSyntaxError(f"cannot {what} {_describe(node)}", self._outer(node), hint=hint)

    # -- expressions -------------------------------------------------------------------------

    def testlist_tuple(self, meta: Any, children: list[Any]) -> TupleExpr:
        return TupleExpr(self._span(meta), tuple(children))

    exprlist_tuple = testlist_tuple

    def ternary(self, meta: Any, children: list[Any]) -> IfExp:
        body, test, orelse = children
        return IfExp(self._span(meta), test, body, orelse)

    def or_test(self, meta: Any, children: list[Any]) -> BoolOp:
        return BoolOp(self._span(meta), "or", tuple(children))

    def and_test(self, meta: Any, children: list[Any]) -> BoolOp:
        return BoolOp(self._span(meta), "and", tuple(children))

    def not_op(self, meta: Any, children: list[Any]) -> UnaryOp:
        return UnaryOp(self._span(meta), "not", children[0])

    def comparison(self, meta: Any, children: list[Any]) -> Compare:
        return Compare(self._span(meta), children[0], tuple(children[1::2]), tuple(children[2::2]))

    def comp_op(self, meta: Any, children: list[Token]) -> str:
        return " ".join(str(t) for t in children)

    def _bitwise(self, meta: Any, children: list[Any]) -> Any:
        op = children[1]
        raise UnsupportedConstruct(
            f"the bitwise operator '{op}' is not supported in Tapir scripts",
            self._tok(op),
            hint=_BITWISE_HINTS.get(str(op)),
        )

    expr = xor_expr = and_expr = shift_expr = _bitwise

    def _chain(self, meta: Any, children: list[Any]) -> BinOp:
        left = children[0]
        start = self._outer(left)
        for i in range(1, len(children), 2):
            right = children[i + 1]
            left = BinOp(self._join(start, self._outer(right)), str(children[i]), left, right)
        return left  # type: ignore[no-any-return]

    arith_expr = term = _chain

    def unary(self, meta: Any, children: list[Any]) -> UnaryOp:
        op, operand = children
        if op.type == "TILDE":
            raise UnsupportedConstruct("the bitwise operator '~' is not supported in Tapir scripts", self._tok(op))
        return UnaryOp(self._span(meta), str(op), operand)

    def power(self, meta: Any, children: list[Any]) -> BinOp:
        return BinOp(self._span(meta), "**", children[0], children[2])

    def call(self, meta: Any, children: list[Any]) -> Call:
        func, arguments = children
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
        return Call(self._span(meta), func, tuple(args), tuple(keywords))

    def arguments(self, meta: Any, children: list[Any]) -> list[Any]:
        return children

    def keyword(self, meta: Any, children: list[Any]) -> Keyword:
        return Keyword(self._span(meta), str(children[0]), children[1])

    def subscript(self, meta: Any, children: list[Any]) -> Subscript:
        return Subscript(self._span(meta), children[0], children[1])

    def subscripts(self, meta: Any, children: list[Any]) -> Expr:
        if len(children) == 1:
            return children[0]  # type: ignore[no-any-return]
        return TupleExpr(self._span(meta), tuple(children))

    def slice(self, meta: Any, children: list[Any]) -> Slice:
        lower, upper, step = (list(children) + [None, None, None])[:3]
        return Slice(self._span(meta), lower, upper, step)

    def attribute(self, meta: Any, children: list[Any]) -> Attribute:
        value, name = children
        return Attribute(self._span(meta), value, str(name), self._tok(name))

    def empty_tuple(self, meta: Any, children: list[Any]) -> TupleExpr:
        return TupleExpr(self._span(meta), ())

    def paren(self, meta: Any, children: list[Any]) -> Expr:
        inner = children[0]
        outer = self._span(meta)
        if isinstance(inner, TupleExpr) and inner.elts and inner.span == self._outer(inner):
            return replace(inner, span=outer)  # Python's spans: a tuple includes its parentheses
        self._paren[id(inner)] = (inner, outer)
        return inner  # type: ignore[no-any-return]

    def list(self, meta: Any, children: list[Any]) -> ListExpr:
        return ListExpr(self._span(meta), tuple(children[0] or ()))

    def list_items(self, meta: Any, children: list[Any]) -> list[Any]:
        return children

    def listcomp(self, meta: Any, children: list[Any]) -> ListComp:
        return ListComp(self._span(meta), children[0], tuple(children[1]))

    def dict(self, meta: Any, children: list[Any]) -> DictExpr:
        items = children[0] or ()
        return DictExpr(self._span(meta), tuple(k for k, _ in items), tuple(v for _, v in items))

    def dict_items(self, meta: Any, children: list[Any]) -> list[Any]:
        return children

    def dict_item(self, meta: Any, children: list[Any]) -> tuple[Expr, Expr]:
        return children[0], children[1]

    def _refuse(self, what: str, hint: str | None = None) -> Callable[..., Any]:
        def refuse(meta: Any, children: list[Any]) -> Any:
            raise UnsupportedConstruct(f"{what} are not supported in Tapir scripts", self._span(meta), hint=hint)

        return refuse

    def genexp(self, meta: Any, children: list[Any]) -> Any:
        return self._refuse("generator expressions", "use a list comprehension: [x for x in items]")(meta, children)

    def set(self, meta: Any, children: list[Any]) -> Any:
        return self._refuse("set literals", "use a list: [a, b]")(meta, children)

    def setcomp(self, meta: Any, children: list[Any]) -> Any:
        return self._refuse("set comprehensions", "use a list comprehension: [x for x in items]")(meta, children)

    def dictcomp(self, meta: Any, children: list[Any]) -> Any:
        return self._refuse("dict comprehensions", "build the dict in a 'for' loop")(meta, children)

    def ellipsis(self, meta: Any, children: list[Any]) -> Any:
        raise UnsupportedConstruct("'...' is not supported in Tapir scripts", self._span(meta), hint="use 'pass'")

    def comp_clauses(self, meta: Any, children: list[Any]) -> list[Comprehension]:
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

    def comp_for(self, meta: Any, children: list[Any]) -> tuple[str, Span, Any, Expr]:
        target = self._target(children[0], "use as a loop variable")
        return "for", self._span(meta), target, children[1]

    def comp_if(self, meta: Any, children: list[Any]) -> tuple[str, Span, Expr]:
        return "if", self._span(meta), children[0]

    # -- atoms -------------------------------------------------------------------------------

    def name(self, meta: Any, children: list[Token]) -> Name:
        return Name(self._tok(children[0]), str(children[0]))

    def element(self, meta: Any, children: list[Token]) -> ElementRef:
        # `$screen:element` (the upstream spelling) names the same element as `$screen__element`.
        return ElementRef(self._tok(children[0]), str(children[0])[1:].replace(":", "__", 1))

    def number(self, meta: Any, children: list[Token]) -> Constant:
        tok = children[0]
        if tok.type == "IMAG_NUMBER":
            raise UnsupportedConstruct("complex numbers are not supported in Tapir scripts", self._tok(tok))
        try:
            return Constant(self._tok(tok), decode_number(str(tok)))
        except LiteralProblem as p:
            raise TapirSyntaxError(p.message, self._tok(tok)) from None

    def const_none(self, meta: Any, children: list[Any]) -> Constant:
        return Constant(self._span(meta), None)

    def const_true(self, meta: Any, children: list[Any]) -> Constant:
        return Constant(self._span(meta), True)

    def const_false(self, meta: Any, children: list[Any]) -> Constant:
        return Constant(self._span(meta), False)

    def strings(self, meta: Any, children: list[Token]) -> Constant | FString:
        parts: list[Expr] = []
        is_f = False
        for tok in children:
            st = split_string(str(tok))
            if st.is_bytes:
                raise UnsupportedConstruct("bytes literals (b'...') are not supported in Tapir scripts", self._tok(tok))
            try:
                if st.is_fstring:
                    is_f = True
                    parts.extend(self._fstring_parts(tok, st.body, st.body_start, st.raw))
                else:
                    value = st.body if st.raw else decode_escapes(st.body, st.body_start)
                    parts.append(Constant(self._tok(tok), value))
            except LiteralProblem as p:
                err = UnsupportedConstruct if p.unsupported else TapirSyntaxError
                raise err(p.message, self._token_range(tok, p.start, p.end)) from None
        if not is_f:
            return Constant(self._span(meta), "".join(p.value for p in parts))  # type: ignore[union-attr]
        merged: list[Expr] = []
        for part in parts:
            prev = merged[-1] if merged else None
            if isinstance(part, Constant) and isinstance(prev, Constant):
                merged[-1] = Constant(self._join(prev.span, part.span), str(prev.value) + str(part.value))
            elif not (isinstance(part, Constant) and part.value == ""):
                merged.append(part)
        return FString(self._span(meta), tuple(merged))

    def _fstring_parts(self, tok: Token, body: str, body_start: int, raw: bool) -> list[Expr]:
        parts: list[Expr] = []
        try:
            pieces = split_fstring(body)
        except LiteralProblem as p:
            raise LiteralProblem(p.message, p.start + body_start, p.end + body_start, unsupported=p.unsupported) from None
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
