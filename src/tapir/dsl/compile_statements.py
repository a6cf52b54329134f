"""Compiling statements to closures.

Each function compiles one statement type for a ``Compiler`` (``comp``); the dispatch table in
``compiler`` maps node types to them. Every closure charges its steps first (``Meter.step``: one
helper for the cost of every statement) and turns Python exceptions raised beneath it into the
script's errors with the statement's span.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tapir.core.errors import AssertionFailed, SandboxViolation, ScriptError, Span, TapirError
from tapir.dsl import ast as A
from tapir.dsl.builtins import materialize
from tapir.dsl.closure_runtime import BREAK, CONTINUE, RETURN, Eval, Exec, Frame, convert_exception, refuse
from tapir.dsl.safeops import BINOPS, mul, to_str
from tapir.dsl.scopes import StaticScope, step_cost
from tapir.dsl.values import ScriptFunction

if TYPE_CHECKING:
    from tapir.dsl.compiler import Compiler


def s_expr(comp: Compiler, node: A.ExprStmt, scope: StaticScope, loop: bool, func: bool) -> Exec:
    m, span, cost, debug = comp.m, node.span, 1 + step_cost(node.value), comp.i.debug
    val = comp.expr(node.value, scope)

    def ex(fr: Frame) -> None:
        m.step(cost, span)
        try:
            val(fr)
        except TapirError:
            raise
        except Exception as exc:
            raise convert_exception(exc, span) from (exc if debug else None)

    return ex


def s_assign(comp: Compiler, node: A.Assign, scope: StaticScope, loop: bool, func: bool) -> Exec:
    if type(node.targets) is not tuple or not node.targets:
        raise SandboxViolation("malformed assignment", node.span)
    m, span, debug = comp.m, node.span, comp.i.debug
    cost = 1 + step_cost(node.value) + sum(step_cost(t) for t in node.targets)
    val = comp.expr(node.value, scope)
    stores = [comp.store(t, scope) for t in node.targets]
    if len(stores) == 1 and type(node.targets[0]) is A.Name:
        name = node.targets[0].id
        hops = scope.resolve(name)
        g = comp.g
        if hops is None:
            def ex(fr: Frame) -> None:
                m.step(cost, span)
                try:
                    g[name] = val(fr)
                except TapirError:
                    raise
                except Exception as exc:
                    raise convert_exception(exc, span) from (exc if debug else None)

            return ex
        if hops == 0:
            def ex0(fr: Frame) -> None:
                m.step(cost, span)
                try:
                    fr.vars[name] = val(fr)
                except TapirError:
                    raise
                except Exception as exc:
                    raise convert_exception(exc, span) from (exc if debug else None)

            return ex0
    if len(stores) == 1:
        store = stores[0]
        return comp.guard(span, cost, lambda fr: store(fr, val(fr)))

    def many(fr: Frame) -> None:
        v = val(fr)
        for s in stores:
            s(fr, v)

    return comp.guard(span, cost, many)


def s_augassign(comp: Compiler, node: A.AugAssign, scope: StaticScope, loop: bool, func: bool) -> Exec:
    op = node.op
    if op not in BINOPS:
        raise SandboxViolation(f"unsupported operator {op!r}=", node.span)
    opfn, m, span, i = BINOPS[op], comp.m, node.span, comp.i
    cost = 2 + step_cost(node.value) + step_cost(node.target)
    val = comp.expr(node.value, scope)
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
        return opfn(cur, v, m, span)

    if type(target) is A.Name:
        load = comp.expr(target, scope)
        store = comp.store(target, scope)
        name = target.id
        hops = scope.resolve(name) if not name.startswith("__") else -1
        if hops is None or hops == 0:
            g, debug, is_add = comp.g, comp.i.debug, op == "+"
            hi = m.int_fast  # bigger sums go through combine: charged by size (Meter.big_int)
            lo = -hi
            step = node.value.value if type(node.value) is A.Constant else None
            if is_add and type(step) is int and 0 <= step < hi:
                # `count += 1`, the commonest: the sum only grows, one bound is enough
                def ex_count(fr: Frame) -> None:
                    m.step(cost, span)
                    try:
                        variables = g if hops is None else fr.vars
                        cur = variables[name] if name in variables else load(fr)
                        if type(cur) is int and (r := cur + step) < hi:
                            variables[name] = r
                        else:
                            variables[name] = combine(cur, step)
                    except TapirError:
                        raise
                    except Exception as exc:
                        raise convert_exception(exc, span) from (exc if debug else None)

                return ex_count

            # The common `total += x`: one closure, no load/store calls.
            def ex(fr: Frame) -> None:
                m.step(cost, span)
                try:
                    variables = g if hops is None else fr.vars
                    cur = variables[name] if name in variables else load(fr)
                    v = val(fr)
                    if is_add and type(cur) is int and type(v) is int and lo < (r := cur + v) < hi:
                        variables[name] = r
                    else:
                        variables[name] = combine(cur, v)
                except TapirError:
                    raise
                except Exception as exc:
                    raise convert_exception(exc, span) from (exc if debug else None)

            return ex
        return comp.guard(span, cost, lambda fr: store(fr, combine(load(fr), val(fr))))
    if type(target) is A.Subscript:
        obj = comp.expr(target.value, scope)
        key = comp.index(target.index, scope)

        def sub(fr: Frame) -> None:
            o, k = obj(fr), key(fr)
            i.setitem(o, k, combine(i.getitem(o, k, span), val(fr)), span)

        return comp.guard(span, cost, sub)
    return refuse(ScriptError("illegal expression for augmented assignment", node.span))


def s_if(comp: Compiler, node: A.If, scope: StaticScope, loop: bool, func: bool) -> Exec:
    test = comp.expr(node.test, scope)
    body = comp.block(node.body, scope, loop, func)
    orelse = comp.block(node.orelse, scope, loop, func)
    m, span, cost, debug = comp.m, node.span, 1 + step_cost(node.test), comp.i.debug

    def ex(fr: Frame) -> Any:
        m.step(cost, span)
        try:
            t = test(fr)
        except TapirError:
            raise
        except Exception as exc:
            raise convert_exception(exc, span) from (exc if debug else None)
        return body(fr) if t else orelse(fr)

    if not node.orelse:
        def ex_no_else(fr: Frame) -> Any:
            m.step(cost, span)
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


def s_while(comp: Compiler, node: A.While, scope: StaticScope, loop: bool, func: bool) -> Exec:
    test = comp.expr(node.test, scope)
    body = comp.block(node.body, scope, True, func)
    m, span, cost, debug = comp.m, node.span, 1 + step_cost(node.test), comp.i.debug

    def ex(fr: Frame) -> Any:
        while True:
            m.step(cost, span)
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


def s_for(comp: Compiler, node: A.For, scope: StaticScope, loop: bool, func: bool) -> Exec:
    it = comp.expr(node.iter, scope)
    store = comp.store(node.target, scope)
    body = comp.block(node.body, scope, True, func)
    m, span, i, debug = comp.m, node.span, comp.i, comp.i.debug
    cost = 1 + step_cost(node.iter)
    fast_name = node.target.id if type(node.target) is A.Name else None
    if fast_name is not None and (type(fast_name) is not str or fast_name.startswith("__")):
        fast_name = None
    hops = scope.resolve(fast_name) if fast_name else -1
    g = comp.g

    def ex(fr: Frame) -> Any:
        m.step(cost, span)
        try:
            seq = it(fr)
            tv = type(seq)
            iterator = iter(seq) if (tv is list or tv is range or tv is tuple or tv is str or tv is dict) \
                else i.iterate(seq, span)
            target_vars = g if hops is None else (fr.vars if hops == 0 else None)
            for v in iterator:
                m.step(1, span)
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


def _loop_jump(comp: Compiler, span: Span, loop: bool, signal: str, outside: str) -> Exec:
    """``break`` or ``continue``: count a step and return ``signal`` to the enclosing loop."""
    if not loop:
        return refuse(ScriptError(outside, span))
    m = comp.m

    def ex(fr: Frame) -> str:
        m.step(1, span)
        return signal

    return ex


def s_break(comp: Compiler, node: A.Break, scope: StaticScope, loop: bool, func: bool) -> Exec:
    return _loop_jump(comp, node.span, loop, BREAK, "'break' outside loop")


def s_continue(comp: Compiler, node: A.Continue, scope: StaticScope, loop: bool, func: bool) -> Exec:
    return _loop_jump(comp, node.span, loop, CONTINUE, "'continue' not properly in loop")


def s_pass(comp: Compiler, node: A.Pass, scope: StaticScope, loop: bool, func: bool) -> Exec:
    m, span = comp.m, node.span

    def ex(fr: Frame) -> None:
        m.step(1, span)

    return ex


def s_return(comp: Compiler, node: A.Return, scope: StaticScope, loop: bool, func: bool) -> Exec:
    if not func:
        return refuse(ScriptError("'return' outside function", node.span))
    val = comp.expr(node.value, scope) if node.value is not None else (lambda fr: None)
    cost = 1 + (step_cost(node.value) if node.value is not None else 0)

    def ret(fr: Frame) -> str:
        fr.ret = val(fr)
        return RETURN

    return comp.guard(node.span, cost, ret)


def s_assert(comp: Compiler, node: A.Assert, scope: StaticScope, loop: bool, func: bool) -> Exec:
    test = comp.expr(node.test, scope)
    msg = comp.expr(node.msg, scope) if node.msg is not None else None
    m, span, i = comp.m, node.span, comp.i
    cost = 1 + step_cost(node.test)
    test_span = node.test.span

    def ex(fr: Frame) -> None:
        if not test(fr):
            if msg is not None:
                text = to_str(msg(fr), m, span)
            else:
                shown = _source_text(i.source, test_span)
                text = shown or "the assertion is false"
            raise AssertionFailed(f"assertion failed: {text}", span)

    return comp.guard(span, cost, ex)


def s_def(comp: Compiler, node: A.FunctionDef, scope: StaticScope, loop: bool, func: bool) -> Exec:
    name = comp.check_str(node.name, node, "function name")
    if type(node.params) is not tuple:
        raise SandboxViolation("malformed function parameters", node.span)
    params: list[str] = []
    seen: set[str] = set()  # (a list search would make a def with many parameters quadratic)
    defaults: list[Eval] = []
    for p in node.params:
        comp.check_node(p, (A.Param,), "function parameter")
        pname = comp.check_str(p.name, p, "parameter name")
        if pname in seen:
            return refuse(ScriptError(f"duplicate argument '{pname}' in function definition", p.span))
        if pname.startswith("__"):
            return refuse(SandboxViolation(f"'{pname}' is not a valid name in Tapir scripts", p.span))
        params.append(pname)
        seen.add(pname)
        if p.default is not None:
            defaults.append(comp.expr(p.default, scope))
        elif defaults:
            return refuse(ScriptError("parameter without a default follows parameter with a default", p.span))
    fscope = StaticScope("function", comp.local_names(node), scope)
    body = comp.block(node.body, fscope, loop=False, func=True)
    store = comp.store(A.Name(node.span, name), scope)
    m = comp.m
    ptuple = tuple(params)
    cost = 1 + sum(step_cost(p.default) for p in node.params if p.default is not None)

    def define(fr: Frame) -> None:
        closure = fr
        dvals = tuple([d(fr) for d in defaults])  # (a generator here would re-enter C at each level)

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
        return refuse(SandboxViolation(f"'{name}' is not a valid name in Tapir scripts", node.span))
    return comp.guard(node.span, cost, define)


def _source_text(source: str | None, span: Span) -> str | None:
    if source is None or span.line != span.end_line:
        return None
    lines = source.splitlines()
    if not 1 <= span.line <= len(lines):
        return None
    return lines[span.line - 1][span.column - 1: span.end_column - 1] or None
