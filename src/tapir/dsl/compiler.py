"""Compiling the AST to Python closures: the interpreter's inner loop.

Each node becomes a closure once; running a script is calling closures, several times faster
than walking the tree at run time. Expression closures take the current ``Frame`` and return
a value; statement closures return ``None`` or a control signal (``BREAK``/``CONTINUE``/
``RETURN``) instead of raising. The ``Compiler`` is a ``NodeVisitor``: each node class it
compiles has a ``visit_<Class>`` (the functions of the modules below), looked up by exact class;
anything else is refused (default deny), and node fields are checked as they are compiled, so a
hand-built AST cannot smuggle in a host object. Which names are local to a function or a
comprehension comes from the analysis' ``Binder`` (``tapir.dsl.bindings.scope_table``).

Every statement closure charges its steps first (``meter.step(cost, span)``; the slower checks
run only when a checkpoint is passed) and turns Python exceptions raised beneath it into the
script's errors with the statement's span. Scoping is Python's: a function's locals are the
names it binds, comprehension variables do not leak, nested functions see the enclosing call.

This module holds the ``Compiler`` (dispatch, blocks, assignment targets) and the tables; the
per-node compile functions are in ``compile_statements``, ``compile_expressions`` and
``compile_calls``, the specialised arithmetic/comparison closures in ``fast_ops``, static scopes
in ``scopes`` and the run-time frame and error conversion in ``closure_runtime``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tapir.core.errors import SandboxViolation, ScriptError, Span, TapirError
from tapir.dsl import ast as A
from tapir.dsl import compile_calls as C
from tapir.dsl import compile_expressions as E
from tapir.dsl import compile_statements as S
from tapir.dsl.bindings import local_scope, scope_table
from tapir.dsl.builtins import materialize
from tapir.dsl.closure_runtime import BREAK, CONTINUE, RETURN, Eval, Exec, Frame, convert_exception, span_of
from tapir.dsl.scopes import StaticScope, step_cost
from tapir.dsl.values import ElementHandle, type_name
from tapir.dsl.visitor import NodeVisitor

if TYPE_CHECKING:
    from tapir.dsl.interpreter import Interpreter

# Names other modules import from here (the interpreter, tests); they live in the modules above.
__all__ = [
    "BREAK", "CONTINUE", "RETURN", "Compiler", "Eval", "Exec", "Frame", "convert_exception", "span_of",
]


class Compiler(NodeVisitor[Any]):
    """Compiles one module for one ``Interpreter``: closures capture its meter and globals."""

    def __init__(self, interp: Interpreter) -> None:
        self.i = interp
        self.m = interp.meter
        self.g = interp.globals
        #: The scope each function and comprehension opens (by id), from the analysis' Binder.
        self.scopes: dict[int, Any] = {}
        #: Nodes compiled: every ``_CLOCK_EVERY`` the run's deadline is checked (compiling is
        #: linear, but a script at the size limit takes a while).
        self.compiled = 0

    def local_names(self, node: A.FunctionDef | A.ListComp) -> set[str]:
        """The names local to a function (parameters included) or a comprehension."""
        found = self.scopes.get(id(node))
        if found is None:  # a node the module's binding pass did not see (a hand-built tree)
            found = local_scope(node)
        return set(found.names)

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def check_node(node: Any, types: tuple[type, ...], what: str) -> None:
        if type(node) not in types:
            raise SandboxViolation(f"{what}: node type {type(node).__name__} is not allowed here", span_of(node))

    @staticmethod
    def check_str(value: Any, node: A.Node, what: str) -> str:
        if type(value) is not str:
            raise SandboxViolation(f"{what} must be a str, not {type(value).__name__}", node.span)
        return value

    def module(self, node: A.Module) -> tuple[Exec, list[Any]]:
        if type(node.body) is not tuple:
            raise SandboxViolation("malformed module", node.span)
        self.scopes = scope_table(node)
        scope = StaticScope("module", set(), None)
        last: list[Any] = []
        stmts = list(node.body)
        fns = [self.stmt(s, scope, loop=False, func=False) for s in stmts[:-1]]
        if stmts and type(stmts[-1]) is A.ExprStmt:
            fns.append(self.expr_stmt(stmts[-1], scope, sink=last))  # type: ignore[arg-type]
        elif stmts:
            fns.append(self.stmt(stmts[-1], scope, loop=False, func=False))
        return self.seq(fns), last

    def block(self, stmts: tuple[A.Stmt, ...], scope: StaticScope, loop: bool, func: bool) -> Exec:
        if type(stmts) is not tuple:
            raise SandboxViolation("malformed block: expected a tuple of statements")
        return self.seq([self.stmt(s, scope, loop, func) for s in stmts])

    @staticmethod
    def seq(fns: list[Exec]) -> Exec:
        if not fns:
            return lambda fr: None
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            f1, f2 = fns

            def two(fr: Frame) -> Any:
                r = f1(fr)
                if r is not None:
                    return r
                return f2(fr)

            return two
        seq = tuple(fns)

        def many(fr: Frame) -> Any:
            for f in seq:
                r = f(fr)
                if r is not None:
                    return r
            return None

        return many

    # -- statements ----------------------------------------------------------------------------

    def tick(self, node: A.Node) -> None:
        self.compiled += 1
        if self.compiled % _CLOCK_EVERY == 0:
            self.m.check_time(span_of(node))

    def stmt(self, node: A.Stmt, scope: StaticScope, loop: bool, func: bool) -> Exec:
        self.tick(node)
        compile_ = self.method_for(type(node)) if type(node) in _STATEMENTS else None
        if compile_ is None:
            raise SandboxViolation(
                f"unsupported statement type {type(node).__name__}",
                span_of(node),
            )
        return compile_(self, node, scope, loop, func)

    def guard(self, span: Span, cost: int, body: Callable[[Frame], Any]) -> Exec:
        """Charge ``cost`` steps, run ``body``, turn Python exceptions into script errors."""
        m = self.m
        debug = self.i.debug

        def ex(fr: Frame) -> Any:
            m.step(cost, span)
            try:
                return body(fr)
            except TapirError:
                raise
            except Exception as exc:
                raise convert_exception(exc, span) from (exc if debug else None)

        return ex

    def expr_stmt(self, node: A.ExprStmt, scope: StaticScope, sink: list[Any] | None = None) -> Exec:
        val = self.expr(node.value, scope)
        if sink is None:
            return self.guard(node.span, 1 + step_cost(node.value), lambda fr: val(fr) and None)

        def keep(fr: Frame) -> None:
            sink[:] = [val(fr)]

        return self.guard(node.span, 1 + step_cost(node.value), keep)

    # -- assignment targets ----------------------------------------------------------------------

    def store(self, target: A.Node, scope: StaticScope) -> Callable[[Frame, Any], None]:
        t = type(target)
        if t is A.Name:
            name = self.check_str(target.id, target, "name")  # type: ignore[attr-defined]
            if name.startswith("__"):
                err = SandboxViolation(f"'{name}' is not a valid name in Tapir scripts", target.span)

                def refuse(fr: Frame, v: Any) -> None:
                    raise copy.copy(err)

                return refuse
            hops = scope.resolve(name)
            if hops is None:
                g = self.g

                def store_global(fr: Frame, v: Any) -> None:
                    g[name] = v

                return store_global

            def store_local(fr: Frame, v: Any) -> None:
                fr.vars[name] = v

            return store_local
        if t is A.Subscript:
            obj = self.expr(target.value, scope)  # type: ignore[attr-defined]
            key = self.index(target.index, scope)  # type: ignore[attr-defined]
            i, span = self.i, target.span

            def store_item(fr: Frame, v: Any) -> None:
                i.setitem(obj(fr), key(fr), v, span)

            return store_item
        if t is A.TupleExpr or t is A.ListExpr:
            subs = [self.store(e, scope) for e in target.elts]  # type: ignore[attr-defined]
            n, i, span = len(subs), self.i, target.span

            def unpack(fr: Frame, v: Any) -> None:
                if type(v) not in (list, tuple, str, dict, range, ElementHandle):
                    raise ScriptError(f"cannot unpack non-iterable {type_name(v)} object", span)
                items = materialize(i, v, span)
                if len(items) != n:
                    if len(items) > n:
                        raise ScriptError(f"too many values to unpack (expected {n}, got {len(items)})", span)
                    raise ScriptError(f"not enough values to unpack (expected {n}, got {len(items)})", span)
                for s, x in zip(subs, items, strict=True):
                    s(fr, x)

            return unpack
        err = SandboxViolation(f"cannot assign to {type(target).__name__}", span_of(target))
        if t is A.Attribute:
            err = SandboxViolation("assigning to attributes is not allowed in Tapir scripts", target.span)

        def refuse_target(fr: Frame, v: Any) -> None:
            raise copy.copy(err)

        return refuse_target

    # -- expressions -------------------------------------------------------------------------------

    def expr(self, node: A.Node, scope: StaticScope) -> Eval:
        self.tick(node)
        compile_ = self.method_for(type(node)) if type(node) in _EXPRESSIONS else None
        if compile_ is None:
            raise SandboxViolation(
                f"unsupported expression type {type(node).__name__}",
                span_of(node),
            )
        return compile_(self, node, scope)

    @staticmethod
    def local_name(node: A.Node, scope: StaticScope) -> str | None:
        """The name, when ``node`` reads a variable of the current function's own frame."""
        if type(node) is A.Name and type(node.id) is str and not node.id.startswith("__") \
                and scope.resolve(node.id) == 0:
            return node.id
        return None

    def index(self, node: A.Node, scope: StaticScope) -> Eval:
        """The index of a subscript: an expression, or a slice made of checked bounds."""
        if type(node) is not A.Slice:
            return self.expr(node, scope)
        parts = [self.expr(p, scope) if p is not None else None for p in (node.lower, node.upper, node.step)]
        span = node.span

        def bound(f: Eval | None, fr: Frame) -> Any:
            if f is None:
                return None
            v = f(fr)
            if v is not None and type(v) not in (int, bool):
                raise ScriptError("slice indices must be integers or None", span)
            return v

        def ev(fr: Frame) -> slice:
            lo, hi, step = (bound(p, fr) for p in parts)
            if step == 0:
                raise ScriptError("slice step cannot be zero", span)
            return slice(lo, hi, step)

        return ev


    # -- what compiles, and how: one visit_ function per node class ----------------------------------

    visit_ExprStmt = S.s_expr
    visit_Assign = S.s_assign
    visit_AugAssign = S.s_augassign
    visit_If = S.s_if
    visit_While = S.s_while
    visit_For = S.s_for
    visit_Break = S.s_break
    visit_Continue = S.s_continue
    visit_Pass = S.s_pass
    visit_FunctionDef = S.s_def
    visit_Return = S.s_return
    visit_Assert = S.s_assert

    visit_Constant = E.e_constant
    visit_Name = E.e_name
    visit_ElementRef = E.e_element
    visit_FString = E.e_fstring
    visit_FormattedValue = E.e_formatted
    visit_ListExpr = E.e_list
    visit_TupleExpr = E.e_tuple
    visit_DictExpr = E.e_dict
    visit_BinOp = E.e_binop
    visit_UnaryOp = E.e_unary
    visit_BoolOp = E.e_boolop
    visit_Compare = E.e_compare
    visit_IfExp = E.e_ifexp
    visit_Slice = E.e_slice
    visit_Subscript = E.e_subscript
    visit_Attribute = E.e_attribute
    visit_Call = C.e_call
    visit_ListComp = C.e_listcomp


_CLOCK_EVERY = 512

#: The node classes that compile as statements and as expressions (everything else is refused).
_STATEMENTS = frozenset({A.ExprStmt, A.Assign, A.AugAssign, A.If, A.While, A.For, A.Break, A.Continue, A.Pass,
                         A.FunctionDef, A.Return, A.Assert})
_EXPRESSIONS = frozenset({A.Constant, A.Name, A.ElementRef, A.FString, A.FormattedValue, A.ListExpr, A.TupleExpr,
                          A.DictExpr, A.BinOp, A.UnaryOp, A.BoolOp, A.Compare, A.IfExp, A.Slice, A.Subscript,
                          A.Attribute, A.Call, A.ListComp})
