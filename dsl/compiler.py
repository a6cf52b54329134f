"""Compiling the AST to Python closures: the interpreter's inner loop.

Each node becomes a closure once; running a script is calling closures, several times faster
than walking the tree with a visitor. Expression closures take the current ``Frame`` and return
a value; statement closures return ``None`` or a control signal (``BREAK``/``CONTINUE``/
``RETURN``) instead of raising. Node types are looked up in two dispatch tables (``_STMTS``,
``_EXPRS``): anything not listed is refused (default deny), and node fields are checked as they
are compiled, so a hand-built AST cannot smuggle in a host object.

Every statement closure charges its steps inline (``meter.steps += cost``; the slower checks run
only when a checkpoint is passed) and turns Python exceptions raised beneath it into the
script's errors with the statement's span. Scoping is Python's: a function's locals are the
names it binds, comprehension variables do not leak, nested functions see the enclosing call.
"""

from __future__ import annotations

import copy
import difflib
import operator
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tapir.dsl import api
from tapir.dsl import ast as A
from tapir.dsl.budget import Meter, budget_exceeded
from tapir.dsl.builtins import BUILTINS, materialize
from tapir.dsl.errors import (
    AssertionFailed,
    SandboxViolation,
    ScriptError,
    Span,
    TapirError,
    UnknownElement,
)
from tapir.dsl.methods import lookup as lookup_method
from tapir.dsl.safeops import (
    BINOPS,
    add,
    check_key,
    compare,
    contains,
    equal,
    format_value,
    mul,
    short_repr,
    to_str,
    unary,
)
from tapir.dsl.values import ApiFunction, ElementHandle, ScriptFunction, type_name

if TYPE_CHECKING:
    from tapir.dsl.interpreter import Interpreter

Eval = Callable[["Frame"], Any]
Exec = Callable[["Frame"], Any]

BREAK = "break"
CONTINUE = "continue"
RETURN = "return"
_MISSING: Any = object()

#: Python builtins a script might try; naming one gives a SandboxViolation, not "not defined".
_PY_BUILTINS = frozenset(
    "aiter anext ascii bin breakpoint bytearray bytes callable chr classmethod compile complex "
    "copyright credits delattr dir divmod eval exec exit filter format frozenset getattr globals hasattr "
    "hash help hex id input isinstance issubclass iter license locals map memoryview next object oct open "
    "ord pow property quit repr reversed set setattr slice staticmethod super type vars __import__ "
    "__build_class__ __builtins__ __loader__ __spec__ __name__ __doc__ __package__ __debug__".split()
)

#: The registry's globals as script values: ``back``/``enter`` and the legacy ``tap($x)`` forms.
API_GLOBALS: dict[str, Any] = {
    **{name: ApiFunction(entry, legacy=True) for name, entry in api.LEGACY_GLOBALS.items()},
    **{name: ApiFunction(entry, legacy=False) for name, entry in api.GLOBALS.items()},
}


class Frame:
    """One scope's variables at run time, linked to the enclosing scope's frame."""

    __slots__ = ("vars", "parent", "ret")

    def __init__(self, vars: dict[str, Any], parent: Frame | None) -> None:
        self.vars = vars
        self.parent = parent
        self.ret: Any = None


# ---------------------------------------------------------------------------------------------
# Errors


def convert_exception(exc: BaseException, span: Span | None) -> TapirError:
    """A Python exception raised while running a script, as the error the user sees."""
    if isinstance(exc, TapirError):
        if exc.span is None:
            exc.span = span
        return exc
    if isinstance(exc, RecursionError):
        return budget_exceeded("depth", sys.getrecursionlimit(), "the script nests too deeply", span)
    if isinstance(exc, MemoryError):
        return budget_exceeded("size", 0, "the host ran out of memory", span)
    if isinstance(exc, KeyError):
        return ScriptError(f"KeyError: {short_repr(exc.args[0]) if exc.args else ''}", span)
    if isinstance(exc, ZeroDivisionError | TypeError | ValueError | IndexError | OverflowError | RuntimeError):
        msg = str(exc).replace("ElementHandle", "element").replace("ScriptFunction", "function")
        return ScriptError(msg, span)
    return ScriptError(f"internal error: {type(exc).__name__}: {exc}", span,
                       hint="this is a bug in Tapir; run with --debug for details")


def _not_defined(name: str, span: Span) -> TapirError:
    if name.startswith("__") or name in _PY_BUILTINS:
        return SandboxViolation(
            f"'{name}' is not available in Tapir scripts", span,
            hint="builtins: " + ", ".join(api.BUILTINS),
        )
    close = difflib.get_close_matches(name, [*api.BUILTINS, *API_GLOBALS], n=1)
    return ScriptError(f"name '{name}' is not defined", span, hint=f"did you mean '{close[0]}'?" if close else None)


# ---------------------------------------------------------------------------------------------
# Scopes (static): which names are local to which function or comprehension


class _Scope:
    __slots__ = ("kind", "names", "parent")

    def __init__(self, kind: str, names: set[str], parent: _Scope | None) -> None:
        self.kind = kind  # "module", "function" or "comprehension"
        self.names = names
        self.parent = parent

    def resolve(self, name: str) -> int | None:
        """How many frames up ``name`` lives, or None for a module global."""
        hops = 0
        s: _Scope | None = self
        while s is not None and s.kind != "module":
            if name in s.names:
                return hops
            hops += 1
            s = s.parent
        return None


def _target_names(t: A.Node, out: set[str]) -> None:
    if type(t) is A.Name:
        out.add(t.id)
    elif type(t) in (A.TupleExpr, A.ListExpr):
        for e in t.elts:  # type: ignore[attr-defined]
            _target_names(e, out)


def _assigned(stmts: tuple[A.Stmt, ...], out: set[str]) -> set[str]:
    """Names a function body binds (not descending into nested defs or comprehensions)."""
    for s in stmts:
        t = type(s)
        if t is A.Assign:
            for tg in s.targets:  # type: ignore[union-attr]
                _target_names(tg, out)
        elif t is A.AugAssign:
            _target_names(s.target, out)  # type: ignore[union-attr]
        elif t is A.For:
            _target_names(s.target, out)  # type: ignore[union-attr]
            _assigned(s.body, out)  # type: ignore[union-attr]
        elif t is A.While:
            _assigned(s.body, out)  # type: ignore[union-attr]
        elif t is A.If:
            _assigned(s.body, out)  # type: ignore[union-attr]
            _assigned(s.orelse, out)  # type: ignore[union-attr]
        elif t is A.FunctionDef:
            out.add(s.name)  # type: ignore[union-attr]
    return out


def _cost(node: A.Node) -> int:
    """Steps charged for evaluating ``node`` once: one per expression node, not counting the
    parts of a comprehension that run per item (those are charged per item)."""
    total, todo = 0, [node]
    while todo:  # iterative: a deep hand-built AST must not recurse through C (sum of a generator)
        n = todo.pop()
        total += 1
        if type(n) is A.ListComp:
            todo.append(n.generators[0].iter)
        else:
            todo.extend(n.children())
    return total


# ---------------------------------------------------------------------------------------------
# The compiler: AST -> closures


def _refuse(exc: TapirError) -> Eval:
    """A closure that raises (a fresh copy of) ``exc`` when run: refusals happen when the
    construct is reached, like every other runtime error, so code that never runs cannot fail."""

    def ev(fr: Frame) -> Any:
        raise copy.copy(exc)

    return ev


class Compiler:
    """Compiles one module for one ``Interpreter``: closures capture its meter and globals."""

    def __init__(self, interp: Interpreter) -> None:
        self.i = interp
        self.m = interp.meter
        self.g = interp.globals

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _check_node(node: Any, types: tuple[type, ...], what: str) -> None:
        if type(node) not in types:
            raise SandboxViolation(f"{what}: node type {type(node).__name__} is not allowed here", span_of(node))

    @staticmethod
    def _check_str(value: Any, node: A.Node, what: str) -> str:
        if type(value) is not str:
            raise SandboxViolation(f"{what} must be a str, not {type(value).__name__}", node.span)
        return value

    def module(self, node: A.Module) -> tuple[Exec, list[Any]]:
        if type(node.body) is not tuple:
            raise SandboxViolation("malformed module", node.span)
        scope = _Scope("module", set(), None)
        last: list[Any] = []
        stmts = list(node.body)
        fns = [self.stmt(s, scope, loop=False, func=False) for s in stmts[:-1]]
        if stmts and type(stmts[-1]) is A.ExprStmt:
            fns.append(self._expr_stmt(stmts[-1], scope, sink=last))  # type: ignore[arg-type]
        elif stmts:
            fns.append(self.stmt(stmts[-1], scope, loop=False, func=False))
        return self._seq(fns), last

    def block(self, stmts: tuple[A.Stmt, ...], scope: _Scope, loop: bool, func: bool) -> Exec:
        if type(stmts) is not tuple:
            raise SandboxViolation("malformed block: expected a tuple of statements")
        return self._seq([self.stmt(s, scope, loop, func) for s in stmts])

    @staticmethod
    def _seq(fns: list[Exec]) -> Exec:
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

    def stmt(self, node: A.Stmt, scope: _Scope, loop: bool, func: bool) -> Exec:
        compile_ = _STMTS.get(type(node))
        if compile_ is None:
            raise SandboxViolation(
                f"unsupported statement type {type(node).__name__}",
                span_of(node),
            )
        return compile_(self, node, scope, loop, func)

    def _guard(self, span: Span, cost: int, body: Callable[[Frame], Any]) -> Exec:
        """Charge ``cost`` steps, run ``body``, turn Python exceptions into script errors."""
        m = self.m
        debug = self.i.debug

        def ex(fr: Frame) -> Any:
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            try:
                return body(fr)
            except TapirError:
                raise
            except Exception as exc:
                raise convert_exception(exc, span) from (exc if debug else None)

        return ex

    def _expr_stmt(self, node: A.ExprStmt, scope: _Scope, sink: list[Any] | None = None) -> Exec:
        val = self.expr(node.value, scope)
        if sink is None:
            return self._guard(node.span, 1 + _cost(node.value), lambda fr: val(fr) and None)

        def keep(fr: Frame) -> None:
            sink[:] = [val(fr)]

        return self._guard(node.span, 1 + _cost(node.value), keep)

    def _s_expr(self, node: A.ExprStmt, scope: _Scope, loop: bool, func: bool) -> Exec:
        m, span, cost, debug = self.m, node.span, 1 + _cost(node.value), self.i.debug
        val = self.expr(node.value, scope)

        def ex(fr: Frame) -> None:
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            try:
                val(fr)
            except TapirError:
                raise
            except Exception as exc:
                raise convert_exception(exc, span) from (exc if debug else None)

        return ex

    def _s_assign(self, node: A.Assign, scope: _Scope, loop: bool, func: bool) -> Exec:
        if type(node.targets) is not tuple or not node.targets:
            raise SandboxViolation("malformed assignment", node.span)
        m, span, debug = self.m, node.span, self.i.debug
        cost = 1 + _cost(node.value) + sum(_cost(t) for t in node.targets)
        val = self.expr(node.value, scope)
        stores = [self.store(t, scope) for t in node.targets]
        if len(stores) == 1 and type(node.targets[0]) is A.Name:
            name = node.targets[0].id
            hops = scope.resolve(name)
            g = self.g
            if hops is None:
                def ex(fr: Frame) -> None:
                    m.steps += cost
                    if m.steps > m.checkpoint:
                        m.tick(span)
                    try:
                        g[name] = val(fr)
                    except TapirError:
                        raise
                    except Exception as exc:
                        raise convert_exception(exc, span) from (exc if debug else None)

                return ex
            if hops == 0:
                def ex0(fr: Frame) -> None:
                    m.steps += cost
                    if m.steps > m.checkpoint:
                        m.tick(span)
                    try:
                        fr.vars[name] = val(fr)
                    except TapirError:
                        raise
                    except Exception as exc:
                        raise convert_exception(exc, span) from (exc if debug else None)

                return ex0
        if len(stores) == 1:
            store = stores[0]
            return self._guard(span, cost, lambda fr: store(fr, val(fr)))

        def many(fr: Frame) -> None:
            v = val(fr)
            for s in stores:
                s(fr, v)

        return self._guard(span, cost, many)

    def _s_augassign(self, node: A.AugAssign, scope: _Scope, loop: bool, func: bool) -> Exec:
        op = node.op
        if op not in BINOPS:
            raise SandboxViolation(f"unsupported operator {op!r}=", node.span)
        opfn, m, span, i = BINOPS[op], self.m, node.span, self.i
        cost = 2 + _cost(node.value) + _cost(node.target)
        val = self.expr(node.value, scope)
        target = node.target

        def combine(cur: Any, v: Any) -> Any:
            # Python's in-place list operators mutate the list (other references see it).
            if type(cur) is list and op == "+":
                items = materialize(i, v, span)
                m.check_size(len(cur) + len(items), span, "list")
                cur.extend(items)
                return cur
            if type(cur) is list and op == "*":
                new = mul(cur, v, m, span)
                cur[:] = new
                return cur
            if type(cur) is int and type(v) is int and op == "+":
                return cur + v
            return opfn(cur, v, m, span)

        if type(target) is A.Name:
            load = self.expr(target, scope)
            store = self.store(target, scope)
            name = target.id
            hops = scope.resolve(name) if not name.startswith("__") else -1
            if hops is None or hops == 0:
                g, debug, is_add = self.g, self.i.debug, op == "+"

                # The common `total += x`: one closure, no load/store calls.
                def ex(fr: Frame) -> None:
                    m.steps += cost
                    if m.steps > m.checkpoint:
                        m.tick(span)
                    try:
                        variables = g if hops is None else fr.vars
                        cur = variables[name] if name in variables else load(fr)
                        v = val(fr)
                        if is_add and type(cur) is int and type(v) is int:
                            variables[name] = cur + v
                        else:
                            variables[name] = combine(cur, v)
                    except TapirError:
                        raise
                    except Exception as exc:
                        raise convert_exception(exc, span) from (exc if debug else None)

                return ex
            return self._guard(span, cost, lambda fr: store(fr, combine(load(fr), val(fr))))
        if type(target) is A.Subscript:
            obj = self.expr(target.value, scope)
            key = self._index(target.index, scope)

            def sub(fr: Frame) -> None:
                o, k = obj(fr), key(fr)
                i.setitem(o, k, combine(i.getitem(o, k, span), val(fr)), span)

            return self._guard(span, cost, sub)
        return _refuse(ScriptError("illegal expression for augmented assignment", node.span))

    def _s_if(self, node: A.If, scope: _Scope, loop: bool, func: bool) -> Exec:
        test = self.expr(node.test, scope)
        body = self.block(node.body, scope, loop, func)
        orelse = self.block(node.orelse, scope, loop, func)
        m, span, cost, debug = self.m, node.span, 1 + _cost(node.test), self.i.debug

        def ex(fr: Frame) -> Any:
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            try:
                t = test(fr)
            except TapirError:
                raise
            except Exception as exc:
                raise convert_exception(exc, span) from (exc if debug else None)
            return body(fr) if t else orelse(fr)

        if not node.orelse:
            def ex_no_else(fr: Frame) -> Any:
                m.steps += cost
                if m.steps > m.checkpoint:
                    m.tick(span)
                try:
                    t = test(fr)
                except TapirError:
                    raise
                except Exception as exc:
                    raise convert_exception(exc, span) from (exc if debug else None)
                if t:
                    return body(fr)
                return None

            return ex_no_else
        return ex

    def _s_while(self, node: A.While, scope: _Scope, loop: bool, func: bool) -> Exec:
        test = self.expr(node.test, scope)
        body = self.block(node.body, scope, True, func)
        m, span, cost, debug = self.m, node.span, 1 + _cost(node.test), self.i.debug

        def ex(fr: Frame) -> Any:
            while True:
                m.steps += cost
                if m.steps > m.checkpoint:
                    m.tick(span)
                try:
                    t = test(fr)
                except TapirError:
                    raise
                except Exception as exc:
                    raise convert_exception(exc, span) from (exc if debug else None)
                if not t:
                    return None
                r = body(fr)
                if r is not None:
                    if r is BREAK:
                        return None
                    if r is not CONTINUE:
                        return r

        return ex

    def _s_for(self, node: A.For, scope: _Scope, loop: bool, func: bool) -> Exec:
        it = self.expr(node.iter, scope)
        store = self.store(node.target, scope)
        body = self.block(node.body, scope, True, func)
        m, span, i, debug = self.m, node.span, self.i, self.i.debug
        cost = 1 + _cost(node.iter)
        fast_name = node.target.id if type(node.target) is A.Name else None
        if fast_name is not None and (type(fast_name) is not str or fast_name.startswith("__")):
            fast_name = None
        hops = scope.resolve(fast_name) if fast_name else -1
        g = self.g

        def ex(fr: Frame) -> Any:
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            try:
                seq = it(fr)
                tv = type(seq)
                iterator = iter(seq) if (tv is list or tv is range or tv is tuple or tv is str or tv is dict) \
                    else i.iterate(seq, span)
                target_vars = g if hops is None else (fr.vars if hops == 0 else None)
                for v in iterator:
                    m.steps += 1
                    if m.steps > m.checkpoint:
                        m.tick(span)
                    if target_vars is not None:
                        target_vars[fast_name] = v  # type: ignore[index]  # set whenever target_vars is
                    else:
                        store(fr, v)
                    r = body(fr)
                    if r is not None:
                        if r is BREAK:
                            return None
                        if r is not CONTINUE:
                            return r
            except TapirError:
                raise
            except Exception as exc:
                raise convert_exception(exc, span) from (exc if debug else None)
            return None

        return ex

    def _s_break(self, node: A.Break, scope: _Scope, loop: bool, func: bool) -> Exec:
        if not loop:
            return _refuse(ScriptError("'break' outside loop", node.span))
        m, span = self.m, node.span

        def ex(fr: Frame) -> str:
            m.steps += 1
            if m.steps > m.checkpoint:
                m.tick(span)
            return BREAK

        return ex

    def _s_continue(self, node: A.Continue, scope: _Scope, loop: bool, func: bool) -> Exec:
        if not loop:
            return _refuse(ScriptError("'continue' not properly in loop", node.span))
        m, span = self.m, node.span

        def ex(fr: Frame) -> str:
            m.steps += 1
            if m.steps > m.checkpoint:
                m.tick(span)
            return CONTINUE

        return ex

    def _s_pass(self, node: A.Pass, scope: _Scope, loop: bool, func: bool) -> Exec:
        m, span = self.m, node.span

        def ex(fr: Frame) -> None:
            m.steps += 1
            if m.steps > m.checkpoint:
                m.tick(span)

        return ex

    def _s_return(self, node: A.Return, scope: _Scope, loop: bool, func: bool) -> Exec:
        if not func:
            return _refuse(ScriptError("'return' outside function", node.span))
        val = self.expr(node.value, scope) if node.value is not None else (lambda fr: None)
        cost = 1 + (_cost(node.value) if node.value is not None else 0)

        def ret(fr: Frame) -> str:
            fr.ret = val(fr)
            return RETURN

        return self._guard(node.span, cost, ret)

    def _s_assert(self, node: A.Assert, scope: _Scope, loop: bool, func: bool) -> Exec:
        test = self.expr(node.test, scope)
        msg = self.expr(node.msg, scope) if node.msg is not None else None
        m, span, i = self.m, node.span, self.i
        cost = 1 + _cost(node.test)
        test_span = node.test.span

        def ex(fr: Frame) -> None:
            if not test(fr):
                if msg is not None:
                    text = to_str(msg(fr), m, span)
                else:
                    shown = _source_text(i.source, test_span)
                    text = shown or "the assertion is false"
                raise AssertionFailed(f"assertion failed: {text}", span)

        return self._guard(span, cost, ex)

    def _s_def(self, node: A.FunctionDef, scope: _Scope, loop: bool, func: bool) -> Exec:
        name = self._check_str(node.name, node, "function name")
        if type(node.params) is not tuple:
            raise SandboxViolation("malformed function parameters", node.span)
        params: list[str] = []
        defaults: list[Eval] = []
        for p in node.params:
            self._check_node(p, (A.Param,), "function parameter")
            pname = self._check_str(p.name, p, "parameter name")
            if pname in params:
                return _refuse(ScriptError(f"duplicate argument '{pname}' in function definition", p.span))
            if pname.startswith("__"):
                return _refuse(SandboxViolation(f"'{pname}' is not a valid name in Tapir scripts", p.span))
            params.append(pname)
            if p.default is not None:
                defaults.append(self.expr(p.default, scope))
            elif defaults:
                return _refuse(ScriptError("parameter without a default follows parameter with a default", p.span))
        fscope = _Scope("function", set(params) | _assigned(node.body, set()), scope)
        body = self.block(node.body, fscope, loop=False, func=True)
        store = self.store(A.Name(node.span, name), scope)
        m = self.m
        ptuple = tuple(params)
        cost = 1 + sum(_cost(p.default) for p in node.params if p.default is not None)

        def define(fr: Frame) -> None:
            closure = fr
            dvals = tuple(d(fr) for d in defaults)

            def invoke(bound: dict[str, Any], call_span: Span) -> Any:
                if m.depth >= m.budgets.max_depth:
                    raise m.depth_exceeded(call_span)
                m.depth += 1
                frame = Frame(bound, closure)
                try:
                    r = body(frame)
                finally:
                    m.depth -= 1
                return frame.ret if r is RETURN else None

            store(fr, ScriptFunction(name, ptuple, dvals, invoke))

        if name.startswith("__"):
            return _refuse(SandboxViolation(f"'{name}' is not a valid name in Tapir scripts", node.span))
        return self._guard(node.span, cost, define)

    # -- assignment targets ----------------------------------------------------------------------

    def store(self, target: A.Node, scope: _Scope) -> Callable[[Frame, Any], None]:
        t = type(target)
        if t is A.Name:
            name = self._check_str(target.id, target, "name")  # type: ignore[attr-defined]
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
            key = self._index(target.index, scope)  # type: ignore[attr-defined]
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

    def expr(self, node: A.Node, scope: _Scope) -> Eval:
        compile_ = _EXPRS.get(type(node))
        if compile_ is None:
            raise SandboxViolation(
                f"unsupported expression type {type(node).__name__}",
                span_of(node),
            )
        return compile_(self, node, scope)

    @staticmethod
    def _local_name(node: A.Node, scope: _Scope) -> str | None:
        """The name, when ``node`` reads a variable of the current function's own frame."""
        if type(node) is A.Name and type(node.id) is str and not node.id.startswith("__") \
                and scope.resolve(node.id) == 0:
            return node.id
        return None

    def _e_constant(self, node: A.Constant, scope: _Scope) -> Eval:
        v = node.value
        if type(v) not in (str, int, float, bool, type(None)):
            raise SandboxViolation(f"a constant of type {type(v).__name__} is not a script value", node.span)
        if type(v) is str and len(v) > self.m.max_size:
            return _refuse(budget_exceeded("size", self.m.max_size, "a string literal is too long", node.span))
        if type(v) is int and v.bit_length() > self.m.max_int_bits:
            return _refuse(budget_exceeded("size", self.m.max_int_bits, "an integer literal is too large", node.span))
        return lambda fr: v

    def _e_name(self, node: A.Name, scope: _Scope) -> Eval:
        name = self._check_str(node.id, node, "name")
        span = node.span
        if name.startswith("__"):
            return _refuse(_not_defined(name, span))
        hops = scope.resolve(name)
        if hops is None:
            g = self.g
            default = BUILTINS.get(name, API_GLOBALS.get(name, _MISSING))

            def load_global(fr: Frame) -> Any:
                v = g.get(name, default)
                if v is _MISSING:
                    raise _not_defined(name, span)
                return v

            return load_global

        def unbound() -> ScriptError:
            return ScriptError(f"cannot access local variable '{name}' where it is not associated with a value",
                               span)

        if hops == 0:
            def load_local(fr: Frame) -> Any:
                try:
                    return fr.vars[name]
                except KeyError:
                    raise unbound() from None

            return load_local

        def load_outer(fr: Frame) -> Any:
            f = fr
            for _ in range(hops):
                f = f.parent  # type: ignore[assignment]
            try:
                return f.vars[name]
            except KeyError:
                raise unbound() from None

        return load_outer

    def _e_element(self, node: A.ElementRef, scope: _Scope) -> Eval:
        name = self._check_str(node.name, node, "element name")
        handle = ElementHandle(name)
        symbols = self.i.symbols
        if symbols is not None and name not in symbols:
            suggestions = symbols.suggest(name)
            hint = ("did you mean " + " or ".join(f"${s}" for s in suggestions) + "?") if suggestions else None
            return _refuse(UnknownElement(f"unknown element ${name}: it is not in the app document",
                                          node.span, hint=hint))
        return lambda fr: handle

    def _e_fstring(self, node: A.FString, scope: _Scope) -> Eval:
        parts: list[Eval] = []
        for p in node.parts:
            if type(p) is A.Constant and type(p.value) is str:
                parts.append(_const(p.value))
            else:
                parts.append(self.expr(p, scope))
        m, span = self.m, node.span

        def ev(fr: Frame) -> str:
            pieces = []
            total = 0
            for p in parts:
                s = p(fr)
                if type(s) is not str:
                    s = to_str(s, m, span)
                total += len(s)
                pieces.append(s)
            m.check_size(total, span, "str")
            return "".join(pieces)

        return ev

    def _e_formatted(self, node: A.FormattedValue, scope: _Scope) -> Eval:
        val = self.expr(node.value, scope)
        conv, spec = node.conversion, node.format_spec
        if conv not in (None, "r", "s", "a"):
            raise SandboxViolation(f"unknown conversion {conv!r}", node.span)
        if spec is not None and type(spec) is not str:
            raise SandboxViolation("a format spec must be a str", node.span)
        m, span, spec_s = self.m, node.span, spec or ""
        return lambda fr: format_value(val(fr), spec_s, conv, m, span)

    def _e_list(self, node: A.ListExpr, scope: _Scope) -> Eval:
        elts = [self.expr(e, scope) for e in node.elts]
        return lambda fr: [e(fr) for e in elts]

    def _e_tuple(self, node: A.TupleExpr, scope: _Scope) -> Eval:
        elts = [self.expr(e, scope) for e in node.elts]
        return lambda fr: tuple([e(fr) for e in elts])

    def _e_dict(self, node: A.DictExpr, scope: _Scope) -> Eval:
        if len(node.keys) != len(node.values):
            raise SandboxViolation("malformed dict literal", node.span)
        pairs = [(self.expr(k, scope), self.expr(v, scope)) for k, v in zip(node.keys, node.values, strict=True)]
        span = node.span

        def ev(fr: Frame) -> dict[Any, Any]:
            d: dict[Any, Any] = {}
            for k, v in pairs:
                d[check_key(k(fr), span)] = v(fr)
            return d

        return ev

    def _e_binop(self, node: A.BinOp, scope: _Scope) -> Eval:
        op = node.op
        if op not in BINOPS:
            raise SandboxViolation(f"unsupported operator {op!r}", node.span)
        left, right = self.expr(node.left, scope), self.expr(node.right, scope)
        fn, m, span = BINOPS[op], self.m, node.span
        c = node.right.value if type(node.right) is A.Constant else None
        if type(c) is int and op in _INT_CONST_OPS and (op not in ("//", "%") or c != 0) \
                and (op != "*" or -0x80000000 < c < 0x80000000):
            return _int_const_binop(op, left, c, fn, m, span, self._local_name(node.left, scope))
        if op == "+":
            def ev_add(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int:
                    return a + b
                return add(a, b, m, span)

            return ev_add
        if op == "-":
            def ev_sub(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int:
                    return a - b
                return fn(a, b, m, span)

            return ev_sub
        if op == "*":
            def ev_mul(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int and -0x80000000 < a < 0x80000000 and -0x80000000 < b < 0x80000000:
                    return a * b
                return mul(a, b, m, span)

            return ev_mul
        if op == "//":
            def ev_floordiv(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int and b:
                    return a // b
                return fn(a, b, m, span)

            return ev_floordiv
        if op == "%":
            def ev_mod(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int and b:
                    return a % b
                return fn(a, b, m, span)

            return ev_mod
        return lambda fr: fn(left(fr), right(fr), m, span)

    def _e_unary(self, node: A.UnaryOp, scope: _Scope) -> Eval:
        op = node.op
        if op not in ("not", "-", "+"):
            raise SandboxViolation(f"unsupported unary operator {op!r}", node.span)
        operand, span = self.expr(node.operand, scope), node.span
        if op == "not":
            return lambda fr: not operand(fr)

        def ev(fr: Frame) -> Any:
            v = operand(fr)
            if type(v) is int:
                return -v if op == "-" else v
            return unary(op, v, span)

        return ev

    def _e_boolop(self, node: A.BoolOp, scope: _Scope) -> Eval:
        if node.op not in ("and", "or") or len(node.values) < 2:
            raise SandboxViolation(f"malformed boolean operation {node.op!r}", node.span)
        vals = [self.expr(v, scope) for v in node.values]
        if node.op == "and":
            def ev_and(fr: Frame) -> Any:
                v = None
                for f in vals:
                    v = f(fr)
                    if not v:
                        return v
                return v

            return ev_and

        def ev_or(fr: Frame) -> Any:
            v = None
            for f in vals:
                v = f(fr)
                if v:
                    return v
            return v

        return ev_or

    _CMP_OPS = frozenset(("==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"))

    def _e_compare(self, node: A.Compare, scope: _Scope) -> Eval:
        if not node.ops or len(node.ops) != len(node.comparators) or any(o not in self._CMP_OPS for o in node.ops):
            raise SandboxViolation("malformed comparison", node.span)
        left = self.expr(node.left, scope)
        rights = [self.expr(c, scope) for c in node.comparators]
        ops = list(node.ops)
        m, span = self.m, node.span
        if len(ops) == 1:
            op, right = ops[0], rights[0]
            c = node.comparators[0]
            if type(c) is A.Constant and type(c.value) in (int, str) and op in _CONST_CMP:
                local = self._local_name(node.left, scope)
                if local is not None:
                    return _local_const_compare(op, local, left, c.value, m, span)
                return _const_compare(op, left, c.value, m, span)
            return self._compare1(op, left, right, m, span)

        def chain(fr: Frame) -> bool:
            a = left(fr)
            for op, r in zip(ops, rights, strict=True):
                b = r(fr)
                if not compare(op, a, b, m, span):
                    return False
                a = b
            return True

        return chain

    @staticmethod
    def _compare1(op: str, left: Eval, right: Eval, m: Meter, span: Span) -> Eval:
        if op == "<":
            def lt(fr: Frame) -> bool:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int:
                    return a < b
                return compare("<", a, b, m, span)

            return lt
        if op == "==":
            def eq(fr: Frame) -> bool:
                a = left(fr)
                b = right(fr)
                ta = type(a)
                if (ta is int or ta is str) and type(b) is ta:
                    return a == b
                return equal(a, b, m, span)

            return eq
        if op == "!=":
            def ne(fr: Frame) -> bool:
                a = left(fr)
                b = right(fr)
                ta = type(a)
                if (ta is int or ta is str) and type(b) is ta:
                    return a != b
                return not equal(a, b, m, span)

            return ne
        if op == "is":
            return lambda fr: left(fr) is right(fr)
        if op == "is not":
            return lambda fr: left(fr) is not right(fr)
        # Python evaluates the left operand first, so an error or output there comes first too.
        if op == "in":
            def is_in(fr: Frame) -> bool:
                a = left(fr)
                return contains(right(fr), a, m, span)

            return is_in
        if op == "not in":
            def not_in(fr: Frame) -> bool:
                a = left(fr)
                return not contains(right(fr), a, m, span)

            return not_in

        def other(fr: Frame) -> bool:
            a = left(fr)
            b = right(fr)
            if type(a) is int and type(b) is int:
                return a > b if op == ">" else a <= b if op == "<=" else a >= b
            return compare(op, a, b, m, span)

        return other

    def _e_ifexp(self, node: A.IfExp, scope: _Scope) -> Eval:
        test, body, orelse = self.expr(node.test, scope), self.expr(node.body, scope), self.expr(node.orelse, scope)
        return lambda fr: body(fr) if test(fr) else orelse(fr)

    def _e_slice(self, node: A.Slice, scope: _Scope) -> Eval:
        return _refuse(ScriptError("a slice can only appear inside brackets, as in x[1:3]", node.span))

    def _index(self, node: A.Node, scope: _Scope) -> Eval:
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

    def _e_subscript(self, node: A.Subscript, scope: _Scope) -> Eval:
        obj, key, i, span = self.expr(node.value, scope), self._index(node.index, scope), self.i, node.span

        def ev(fr: Frame) -> Any:
            o = obj(fr)
            k = key(fr)
            if type(o) is list and type(k) is int:
                try:
                    return o[k]
                except IndexError:
                    raise ScriptError("list index out of range", span) from None
            return i.getitem(o, k, span)

        return ev

    def _e_attribute(self, node: A.Attribute, scope: _Scope) -> Eval:
        attr = self._check_str(node.attr, node, "attribute name")
        span = node.attr_span or node.span
        if attr.startswith("_"):
            return _refuse(SandboxViolation(f"access to '{attr}' is not allowed: names starting with '_' are private",
                                            span))
        return _refuse(SandboxViolation(
            f"attribute access ('.{attr}') is not allowed in Tapir scripts, only method calls", span,
            hint=f"call a method, e.g. x.{attr}(...), if the value has one"))

    def _e_call(self, node: A.Call, scope: _Scope) -> Eval:
        if type(node.args) is not tuple or type(node.keywords) is not tuple:
            raise SandboxViolation("malformed call", node.span)
        args = [self.expr(a, scope) for a in node.args]
        kw: list[tuple[str, Eval]] = []
        for k in node.keywords:
            self._check_node(k, (A.Keyword,), "keyword argument")
            kname = self._check_str(k.name, k, "keyword name")
            if any(kname == n for n, _ in kw):
                return _refuse(ScriptError(f"keyword argument repeated: {kname}", k.span))
            kw.append((kname, self.expr(k.value, scope)))
        i, span = self.i, node.span
        func = node.func

        def kwargs_of(fr: Frame) -> dict[str, Any]:
            return {n: f(fr) for n, f in kw}

        if type(func) is A.Attribute:
            attr = self._check_str(func.attr, func, "method name")
            aspan = func.attr_span or func.span
            if attr.startswith("_"):
                return _refuse(SandboxViolation(
                    f"access to '{attr}' is not allowed: names starting with '_' are private", aspan))
            recv = self.expr(func.value, scope)
            cache: dict[type, Any] = {}

            def method(fr: Frame) -> Any:
                r = recv(fr)
                a = [f(fr) for f in args]
                k = kwargs_of(fr) if kw else {}
                if type(r) is ElementHandle:
                    return i.element_method(r, attr, a, k, span)
                fn = cache.get(type(r))
                if fn is None:
                    fn = lookup_method(r, attr, aspan)
                    cache[type(r)] = fn
                return fn(i, r, a, k, span)

            return method

        callee = self.expr(func, scope)
        if not kw:
            if len(args) == 1:
                a0 = args[0]

                def call1(fr: Frame) -> Any:
                    f = callee(fr)
                    if type(f) is ScriptFunction and len(f.params) == 1:
                        return f.invoke({f.params[0]: a0(fr)}, span)
                    return i.call(f, [a0(fr)], span)

                return call1

            def call_pos(fr: Frame) -> Any:
                f = callee(fr)
                a = [g(fr) for g in args]
                if type(f) is ScriptFunction and len(f.params) == len(a):
                    return f.invoke(dict(zip(f.params, a, strict=True)), span)
                return i.call(f, a, span)

            return call_pos

        def call_kw(fr: Frame) -> Any:
            f = callee(fr)
            return i.call(f, [g(fr) for g in args], span, kwargs_of(fr))

        return call_kw

    def _e_listcomp(self, node: A.ListComp, scope: _Scope) -> Eval:
        gens = node.generators
        if type(gens) is not tuple or not gens:
            raise SandboxViolation("malformed list comprehension", node.span)
        for g in gens:
            self._check_node(g, (A.Comprehension,), "comprehension")
        names: set[str] = set()
        for g in gens:
            _target_names(g.target, names)
        cscope = _Scope("comprehension", names, scope)
        first_iter = self.expr(gens[0].iter, scope)
        levels = []
        for n, g in enumerate(gens):
            levels.append((
                self.store(g.target, cscope),
                self.expr(g.iter, cscope) if n else None,
                [self.expr(c, cscope) for c in g.conds],
                1 + sum(_cost(c) for c in g.conds) + (_cost(g.iter) if n else 0),
            ))
        elt = self.expr(node.elt, cscope)
        elt_cost = _cost(node.elt)
        m, i, span = self.m, self.i, node.span
        depth = len(levels)

        def run(level: int, iterable: Any, cfr: Frame, out: list[Any]) -> None:
            store, _, conds, cost = levels[level]
            last = level + 1 == depth
            for v in i.iterate(iterable, span):
                m.steps += cost
                if m.steps > m.checkpoint:
                    m.tick(span)
                store(cfr, v)
                if conds and not all(c(cfr) for c in conds):
                    continue
                if last:
                    m.steps += elt_cost
                    if len(out) >= m.max_size:
                        m.check_size(len(out) + 1, span, "list")
                    out.append(elt(cfr))
                else:
                    nxt = levels[level + 1][1]
                    run(level + 1, nxt(cfr), cfr, out)  # type: ignore[misc]

        def ev(fr: Frame) -> list[Any]:
            out: list[Any] = []
            run(0, first_iter(fr), Frame({}, fr), out)
            m.check_size(len(out), span, "list")
            return out

        return ev


_INT_CONST_OPS = frozenset(("+", "-", "*", "//", "%"))
_CONST_CMP = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


_PY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}


def _const(v: Any) -> Eval:
    return lambda fr: v


def _int_const_binop(op: str, left: Eval, c: int, fn: Callable[..., Any], m: Meter, span: Span,
                     local: str | None) -> Eval:
    """``expr OP int-literal``, the most common arithmetic in loops: one closure, no call for
    the constant, the int case inline (and the variable read inline when it is a local)."""
    if local is not None:
        pyop = _PY_OPS[op]
        small = op == "*"

        def local_c(fr: Frame) -> Any:
            try:
                a = fr.vars[local]
            except KeyError:
                a = left(fr)  # raises the unbound-variable error
            if type(a) is int and (not small or -0x80000000 < a < 0x80000000):
                return pyop(a, c)
            return fn(a, c, m, span)

        return local_c
    if op == "+":
        def add_c(fr: Frame) -> Any:
            a = left(fr)
            return a + c if type(a) is int else fn(a, c, m, span)

        return add_c
    if op == "-":
        def sub_c(fr: Frame) -> Any:
            a = left(fr)
            return a - c if type(a) is int else fn(a, c, m, span)

        return sub_c
    if op == "*":
        def mul_c(fr: Frame) -> Any:
            a = left(fr)
            return a * c if type(a) is int and -0x80000000 < a < 0x80000000 else fn(a, c, m, span)

        return mul_c
    if op == "//":
        def floordiv_c(fr: Frame) -> Any:
            a = left(fr)
            return a // c if type(a) is int else fn(a, c, m, span)

        return floordiv_c

    def mod_c(fr: Frame) -> Any:
        a = left(fr)
        return a % c if type(a) is int else fn(a, c, m, span)

    return mod_c


def _const_compare(op: str, left: Eval, c: Any, m: Meter, span: Span) -> Eval:
    """``expr OP literal`` for an int or str literal: same-type comparisons inline."""
    tc = type(c)
    if op == "==":
        def eq_c(fr: Frame) -> bool:
            a = left(fr)
            return a == c if type(a) is tc else equal(a, c, m, span)

        return eq_c
    if op == "!=":
        def ne_c(fr: Frame) -> bool:
            a = left(fr)
            return a != c if type(a) is tc else not equal(a, c, m, span)

        return ne_c
    if op == "<":
        def lt_c(fr: Frame) -> bool:
            a = left(fr)
            return a < c if type(a) is tc else compare("<", a, c, m, span)

        return lt_c
    if op == ">":
        def gt_c(fr: Frame) -> bool:
            a = left(fr)
            return a > c if type(a) is tc else compare(">", a, c, m, span)

        return gt_c
    py = _CONST_CMP[op]

    def cmp_c(fr: Frame) -> bool:
        a = left(fr)
        return py(a, c) if type(a) is tc else compare(op, a, c, m, span)

    return cmp_c


def _local_const_compare(op: str, local: str, left: Eval, c: int | str, m: Meter, span: Span) -> Eval:
    """``local_variable OP literal``: the loop test of most loops."""
    tc, pyop = type(c), _PY_OPS[op]

    def cmp_local(fr: Frame) -> bool:
        try:
            a = fr.vars[local]
        except KeyError:
            a = left(fr)
        return pyop(a, c) if type(a) is tc else compare(op, a, c, m, span)

    return cmp_local


def span_of(node: Any) -> Span | None:
    span = getattr(node, "span", None)
    return span if type(span) is Span else None


def _source_text(source: str | None, span: Span) -> str | None:
    if source is None or span.line != span.end_line:
        return None
    lines = source.splitlines()
    if not 1 <= span.line <= len(lines):
        return None
    return lines[span.line - 1][span.column - 1: span.end_column - 1] or None


_STMTS: dict[type, Callable[..., Exec]] = {
    A.ExprStmt: Compiler._s_expr,
    A.Assign: Compiler._s_assign,
    A.AugAssign: Compiler._s_augassign,
    A.If: Compiler._s_if,
    A.While: Compiler._s_while,
    A.For: Compiler._s_for,
    A.Break: Compiler._s_break,
    A.Continue: Compiler._s_continue,
    A.Pass: Compiler._s_pass,
    A.FunctionDef: Compiler._s_def,
    A.Return: Compiler._s_return,
    A.Assert: Compiler._s_assert,
}

_EXPRS: dict[type, Callable[..., Eval]] = {
    A.Constant: Compiler._e_constant,
    A.Name: Compiler._e_name,
    A.ElementRef: Compiler._e_element,
    A.FString: Compiler._e_fstring,
    A.FormattedValue: Compiler._e_formatted,
    A.ListExpr: Compiler._e_list,
    A.TupleExpr: Compiler._e_tuple,
    A.DictExpr: Compiler._e_dict,
    A.BinOp: Compiler._e_binop,
    A.UnaryOp: Compiler._e_unary,
    A.BoolOp: Compiler._e_boolop,
    A.Compare: Compiler._e_compare,
    A.IfExp: Compiler._e_ifexp,
    A.Slice: Compiler._e_slice,
    A.Subscript: Compiler._e_subscript,
    A.Attribute: Compiler._e_attribute,
    A.Call: Compiler._e_call,
    A.ListComp: Compiler._e_listcomp,
}
