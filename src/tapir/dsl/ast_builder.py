"""Builds the Tapir AST (``tapir.dsl.ast``) from what the LALR parser reduces.

Runs inside the LALR parser, on each reduction, so that no parse tree is built (the fast path:
about three times faster than building a tree with positions and transforming it). Besides
building nodes it marks the constructs the grammar reads only to name them (set literals,
generator expressions, bitwise operators, annotations, 'else' on loops), wrong assignment
targets and argument order with ``Refused`` nodes, and decodes literals, parsing f-string fields
through a callback so that their nodes get spans in the whole script. Nothing raises here: the
parser reports the ``Refused`` nodes after parsing (``tapir.dsl.syntax_checks``), so a tolerant
parse can go on past them.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from typing import Any, cast

from lark import Token

from tapir.core.errors import BudgetExceeded, Span, TapirError
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
    ErrorStmt,
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
    Refused,
    Return,
    Slice,
    Stmt,
    Subscript,
    TupleExpr,
    UnaryOp,
    While,
)
from tapir.dsl.literals import (
    FLiteral,
    LiteralProblem,
    decode_escapes,
    decode_number,
    split_fstring,
    split_string,
)
from tapir.dsl.syntax_messages import token_span
from tapir.dsl.visitor import NodeVisitor

# (text of a replacement field, its 1-based line and column and its offset in the script) -> the
# expression; raises TapirError when the field is not an expression
FieldParser = Callable[[str, int, int, int], Expr]

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


_NEWLINE = re.compile("\n")


class AstBuilder:
    """The parser's callbacks: each grammar rule's children -> an AST node, while parsing.

    Lark calls ``<rule name>(children)`` on every reduction (``transformer=`` with
    ``keep_all_tokens``), so no parse tree is built. Spans come from the first and last child,
    which is why every token, brackets and keywords included, is kept.

    One instance serves every parse. The per-parse state (the outer spans of parenthesised
    expressions, how many ``Refused`` nodes were made, what the parser tells ``error_stmt``) is
    kept per thread and cleared by ``reset``.
    """

    def __init__(self, field_parser: FieldParser) -> None:
        self._field_parser = field_parser
        self._local = threading.local()

    def reset(self) -> None:
        self._local.paren = {}
        self._local.refusals = []
        self._local.pending = {}
        self._local.error_names = {}

    @property
    def _refusals(self) -> list[Refused]:
        try:
            return self._local.refusals  # type: ignore[no-any-return]
        except AttributeError:
            self.reset()
            return self._local.refusals  # type: ignore[no-any-return]

    def first_refusal(self, since: int = 0) -> Refused | None:
        """The first ``Refused`` node this parse made (after ``since``), in the order the parser
        reduced them: what a strict parse raises, as it did when refusals raised on the spot."""
        found = self._refusals
        return found[since] if len(found) > since else None

    def refusal_mark(self) -> int:
        return len(self._refusals)

    def drop_refusals(self, mark: int) -> None:
        """Forget the refusals made after ``mark`` (those of an f-string field, raised as one)."""
        del self._refusals[mark:]

    def set_error_names(self, start_pos: int, names: tuple[str, ...]) -> None:
        """The names the error statement starting at ``start_pos`` appears to bind (the parser
        knows its tokens; ``error_stmt`` only gets its text)."""
        self._local.error_names[start_pos] = names

    def _refuse(self, span: Span, message: str, code: str = "unsupported", hint: str | None = None,
                parts: Sequence[Any] = ()) -> Refused:
        kept = tuple(p for p in _flatten(parts) if isinstance(p, Node))
        node = Refused(span, message, code, hint, kept)
        self._refusals.append(node)
        return node

    @property
    def _pending(self) -> dict[int, tuple[Param, Refused]]:
        # Annotations of parameters: the Param is built normally and the annotation's Refused
        # node waits here (by the Param's identity) until the def collects it.
        return self._local.pending  # type: ignore[no-any-return]

    # -- positions ---------------------------------------------------------------------------

    @property
    def _paren(self) -> dict[int, tuple[Node, Span]]:
        # Outer spans of parenthesised expressions, by node identity (the node is kept alive
        # in the entry so its id cannot be reused). Chained operators span the parentheses of
        # their operands, as Python's do.
        try:
            return self._local.paren  # type: ignore[no-any-return]
        except AttributeError:
            self.reset()
            return self._local.paren  # type: ignore[no-any-return]

    def _outer(self, node: Node) -> Span:
        entry = self._paren.get(id(node))
        return entry[1] if entry is not None and entry[0] is node else node.span

    def _sp(self, item: Any) -> Span:
        if isinstance(item, Token):
            return token_span(item)
        return self._outer(item)

    def _range(self, first: Any, last: Any) -> Span:
        a, b = self._sp(first), self._sp(last)
        return Span(a.line, a.column, b.end_line, b.end_column, a.offset, b.end_offset)

    @staticmethod
    def _join(first: Span, last: Span) -> Span:
        return Span(first.line, first.column, last.end_line, last.end_column, first.offset, last.end_offset)

    def _whole(self, children: Sequence[Any]) -> Span:
        """From the first to the last child that is present (placeholders are None)."""
        items = [c for c in children if c is not None and not isinstance(c, (list, tuple))]
        return self._range(items[0], items[-1])

    def _in_token(self, tok: Token, offset: int) -> tuple[int, int]:
        """Script position of the character at ``offset`` in the token's text."""
        start = self._sp(tok)
        newlines = self._newlines_in(tok)
        before = bisect_left(newlines, offset)  # newlines before ``offset``
        if before == 0:
            return start.line, start.column + offset
        return start.line + before, offset - newlines[before - 1]

    def _newlines_in(self, tok: Token) -> list[int]:
        """Offsets of the newlines in a token's text, found once per token: an f-string with
        many fields asks for each field (counting each time made a long f-string quadratic)."""
        cached = getattr(self._local, "newlines", None)
        if cached is not None and cached[0] is tok:
            return cached[1]  # type: ignore[no-any-return]
        found = [mo.start() for mo in _NEWLINE.finditer(str(tok))]
        self._local.newlines = (tok, found)
        return found

    def _token_range(self, tok: Token, start: int, end: int) -> Span:
        line, col = self._in_token(tok, start)
        end = max(end, start + 1)
        end_line, end_col = self._in_token(tok, end)
        base = tok.start_pos if tok.start_pos is not None else -1
        return Span(line, col, end_line, end_col, base + start if base >= 0 else -1, base + end if base >= 0 else -1)

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

    def error_stmt(self, children: list[Any]) -> ErrorStmt:
        tok = children[0]
        body = self._statements(children[2:])
        span = self._sp(tok)
        names = self._local.error_names.pop(tok.start_pos, ())
        return ErrorStmt(span, str(tok), names, body)

    def fexpr(self, children: list[Any]) -> Expr:
        return children[1]  # type: ignore[no-any-return]

    def simple_stmt(self, children: list[Any]) -> list[Stmt]:
        return [cast(Stmt, c) for c in children if isinstance(c, Node)]

    def suite(self, children: list[Any]) -> tuple[Stmt, ...]:
        return self._statements(children)

    def expr_stmt(self, children: list[Any]) -> ExprStmt:
        return ExprStmt(self._sp(children[0]), children[0])

    def assign(self, children: list[Any]) -> Assign:
        targets = tuple(self._target(t, "cannot assign to {}") for t in children[0:-1:2])
        return Assign(self._range(children[0], children[-1]), targets, children[-1])

    def augassign(self, children: list[Any]) -> AugAssign | Refused:
        target, op, value = children
        span = self._range(target, value)
        if str(op) in _REFUSED_AUGASSIGN:
            return self._refuse(self._sp(op), f"the operator '{op}' is not supported in Tapir scripts",
                                parts=(target, value))
        if not isinstance(target, (Name, Subscript)):
            target = self._refuse(self._outer(target), f"'{op}' cannot update {_describe(target)}", "syntax",
                                  parts=(target,))
        return AugAssign(span, target, str(op)[:-1], value)

    def annassign(self, children: list[Any]) -> Refused:
        # the annotation itself is not analysed: its names are types, not variables
        return self._refuse(
            self._whole(children),
            "annotations ('name: type') are not supported in Tapir scripts",
            hint="to assign a value write 'name = value'",
            parts=(children[0], children[-1]),
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

    def loop_else(self, children: list[Any]) -> Refused:
        return self._refuse(
            self._sp(children[0]),
            "'else' on a 'for' or 'while' loop is not supported in Tapir scripts",
            hint="use a flag variable set before 'break'",
            parts=children[2],
        )

    def while_stmt(self, children: list[Any]) -> While | list[Stmt]:
        body = children[3]
        loop = While(self._join(self._sp(children[0]), body[-1].span), children[1], body)
        # the refused 'else' follows the loop (its body is still read, so its names are analysed)
        return [loop, children[4]] if children[4] is not None else loop

    def for_stmt(self, children: list[Any]) -> For | list[Stmt]:
        target = self._target(children[1], "cannot use {} as a loop variable")
        body = children[5]
        loop = For(self._join(self._sp(children[0]), body[-1].span), target, children[3], body)
        return [loop, children[6]] if children[6] is not None else loop

    def funcdef(self, children: list[Any]) -> FunctionDef | list[Stmt]:
        name, params, returns, body = children[1], children[3], children[5], children[7]
        docstring, body = self._docstring(body)
        span = self._join(self._sp(children[0]), children[7][-1].span)
        refused: list[Stmt] = []
        checked: list[Param] = []
        for p in params or ():
            pending = self._pending.pop(id(p), None)
            if pending is not None and pending[0] is p:
                refused.append(pending[1])
            checked.append(p)
        if returns is not None:
            refused.append(returns)
        fn = FunctionDef(span, str(name), tuple(checked), body, docstring, self._sp(name))
        # refused annotations follow the def, as statements of their own, so each is reported
        return [fn, *refused] if refused else fn

    def parameters(self, children: list[Any]) -> tuple[Param, ...]:
        params = [c for c in children if isinstance(c, Param)]
        seen: set[str] = set()
        has_default = False
        out: list[Param] = []
        for p in params:
            if p.name in seen:
                p = replace(p, default=self._refuse(p.span, f"duplicate parameter '{p.name}'", "syntax",
                                                    parts=(p.default,)))
                self._move_pending(params[len(out)], p)
            seen.add(p.name)
            if p.default is not None:
                has_default = True
            elif has_default:
                new = replace(p, default=self._refuse(
                    p.span, f"parameter '{p.name}' without a default follows a parameter with a default", "syntax"))
                self._move_pending(p, new)
                p = new
            out.append(p)
        return tuple(out)

    def _move_pending(self, old: Param, new: Param) -> None:
        pending = self._pending.pop(id(old), None)
        if pending is not None:
            self._pending[id(new)] = (new, pending[1])

    def param(self, children: list[Any]) -> Param:
        name, annotation, default = children[0], children[1], children[-1]
        param = Param(self._whole(children), str(name), default)
        if annotation is not None:
            self._pending[id(param)] = (param, annotation)
        return param

    def param_annotation(self, children: list[Any]) -> Refused:
        return self._refuse(self._whole(children), "type annotations are not supported in Tapir scripts")

    def return_annotation(self, children: list[Any]) -> Refused:
        return self._refuse(self._whole(children), "return annotations ('-> type') are not supported in Tapir scripts")

    def _target(self, node: Expr, what: str) -> Any:
        if isinstance(node, (Name, Subscript, Refused)):
            return node
        if isinstance(node, (TupleExpr, ListExpr)):
            elts = tuple(self._target(elt, what) for elt in node.elts)
            return node if all(a is b for a, b in zip(elts, node.elts, strict=True)) else replace(node, elts=elts)
        hint = "to compare two values use '=='" if isinstance(node, Compare) else None
        message = what.format(_describe(node))
        return self._refuse(self._outer(node), message, "syntax", hint, parts=(node,))

    # -- expressions -------------------------------------------------------------------------

    def testlist_tuple(self, children: list[Any]) -> TupleExpr:
        return TupleExpr(self._whole(children), tuple(cast(Expr, c) for c in children if isinstance(c, Node)))

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

    def _bitwise(self, children: list[Any]) -> Refused:
        op = children[1]
        return self._refuse(
            self._sp(op),
            f"the bitwise operator '{op}' is not supported in Tapir scripts",
            hint=_BITWISE_HINTS.get(str(op)),
            parts=children[0::2],
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

    def unary(self, children: list[Any]) -> UnaryOp | Refused:
        op, operand = children
        if op.type == "TILDE":
            return self._refuse(self._sp(op), "the bitwise operator '~' is not supported in Tapir scripts",
                                parts=(operand,))
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
                    args.append(self._refuse(arg.span, f"keyword argument '{arg.name}' repeated", "syntax",
                                             parts=(arg.value,)))
                    continue
                keywords.append(arg)
            elif keywords:
                args.append(self._refuse(self._outer(arg), "positional argument follows keyword argument", "syntax",
                                         parts=(arg,)))
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
        items = [cast(Expr, c) for c in children if isinstance(c, Node)]
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

    def _refused(self, children: list[Any], what: str, hint: str) -> Refused:
        first = children[0]
        last = children[-1]
        end = last[-1].span if isinstance(last, list) else self._sp(last)
        return self._refuse(self._join(self._sp(first), end), f"{what} are not supported in Tapir scripts",
                            hint=hint, parts=children)

    def genexp(self, children: list[Any]) -> Refused:
        return self._refused(children, "generator expressions", "use a list comprehension: [x for x in items]")

    def set_display(self, children: list[Any]) -> Refused:
        return self._refused(children, "set literals", "use a list: [a, b]")

    def setcomp(self, children: list[Any]) -> Refused:
        return self._refused(children, "set comprehensions", "use a list comprehension: [x for x in items]")

    def dictcomp(self, children: list[Any]) -> Refused:
        return self._refused(children, "dict comprehensions", "build the dict in a 'for' loop")

    def ellipsis(self, children: list[Any]) -> Refused:
        return self._refuse(self._sp(children[0]), "'...' is not supported in Tapir scripts", hint="use 'pass'")

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

    def number(self, children: list[Token]) -> Constant | Refused:
        tok = children[0]
        if tok.type == "IMAG_NUMBER":
            return self._refuse(self._sp(tok), "complex numbers are not supported in Tapir scripts")
        try:
            return Constant(self._sp(tok), decode_number(str(tok)))
        except LiteralProblem as p:
            return self._refuse(self._sp(tok), p.message, "syntax")

    def const_none(self, children: list[Any]) -> Constant:
        return Constant(self._sp(children[0]), None)

    def const_true(self, children: list[Any]) -> Constant:
        return Constant(self._sp(children[0]), True)

    def const_false(self, children: list[Any]) -> Constant:
        return Constant(self._sp(children[0]), False)

    def strings(self, children: list[Token]) -> Constant | FString | Refused:
        parts: list[Expr] = []
        is_f = False
        for tok in children:
            st = split_string(str(tok))
            if st.is_bytes:
                return self._refuse(self._sp(tok), "bytes literals (b'...') are not supported in Tapir scripts")
            try:
                if st.is_fstring:
                    is_f = True
                    parts.extend(self._fstring_parts(tok, st.body, st.body_start, st.raw))
                else:
                    value = st.body if st.raw else decode_escapes(st.body, st.body_start)
                    parts.append(Constant(self._sp(tok), value))
            except LiteralProblem as p:
                return self._refuse(self._token_range(tok, p.start, p.end), p.message,
                                    "unsupported" if p.unsupported else "syntax")
        span = self._range(children[0], children[-1])
        if not is_f:
            return Constant(span, "".join(str(cast(Constant, p).value) for p in parts))
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
            span = self._token_range(tok, body_start + piece.start, body_start + piece.end)
            field_text = body[piece.expr_start : piece.expr_end]
            field_offset = (tok.start_pos or 0) + body_start + piece.expr_start
            try:
                value = self._field_parser(field_text, line, col, field_offset)
            except BudgetExceeded:  # the run's deadline passed while parsing: stop, not a refusal
                raise
            except TapirError as exc:
                value = self._refuse(exc.span or span, exc.message, exc.code, exc.hint)
            parts.append(FormattedValue(span, value, piece.conversion, piece.format_spec))
        return parts


def _flatten(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)) and not isinstance(item, Node):
            out.extend(_flatten(item))
        else:
            out.append(item)
    return out


class _Shift(NodeVisitor[Any]):
    """A copy of a tree moved ``lines`` lines down and ``offset`` characters on; positions on its
    first line also move ``columns`` right."""

    def __init__(self, lines: int, columns: int, offset: int) -> None:
        self.lines, self.columns, self.offset = lines, columns, offset

    def span(self, span: Span) -> Span:
        def at(line: int, col: int) -> tuple[int, int]:
            return (line + self.lines, col + self.columns) if line == 1 else (line + self.lines, col)

        a, b = at(span.line, span.column), at(span.end_line, span.end_column)
        shift = self.offset
        return Span(a[0], a[1], b[0], b[1], span.offset + shift if span.offset >= 0 else -1,
                    span.end_offset + shift if span.end_offset >= 0 else -1)

    def generic_visit(self, node: Any, context: Any = None) -> Any:
        if isinstance(node, tuple):
            return tuple(self.visit(item) for item in node)
        if not isinstance(node, Node):
            return node
        changes: dict[str, Any] = {}
        for f in fields(node):
            value = getattr(node, f.name)
            if isinstance(value, Span):
                changes[f.name] = self.span(value)
            elif isinstance(value, (Node, tuple)):
                changes[f.name] = self.visit(value)
        return replace(node, **changes)


def shift_spans(node: Any, line_offset: int, column_offset: int, offset: int = 0) -> Any:
    """A copy of ``node`` moved ``line_offset`` lines down and ``offset`` characters on; positions
    on line 1 also move right.

    Used for f-string fields, which are parsed on their own and then placed in the script.
    """
    return _Shift(line_offset, column_offset, offset).visit(node)
