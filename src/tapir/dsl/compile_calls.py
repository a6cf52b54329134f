"""Compiling calls (functions, API globals, methods) and list comprehensions to closures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tapir.core.errors import SandboxViolation, ScriptError
from tapir.dsl import ast as A
from tapir.dsl.closure_runtime import Eval, Frame, refuse
from tapir.dsl.methods import lookup as lookup_method
from tapir.dsl.scopes import StaticScope, step_cost
from tapir.dsl.values import ElementHandle, ScriptFunction

if TYPE_CHECKING:
    from tapir.dsl.compiler import Compiler


def e_call(comp: Compiler, node: A.Call, scope: StaticScope) -> Eval:
    if type(node.args) is not tuple or type(node.keywords) is not tuple:
        raise SandboxViolation("malformed call", node.span)
    args = [comp.expr(a, scope) for a in node.args]
    kw: list[tuple[str, Eval]] = []
    for k in node.keywords:
        comp.check_node(k, (A.Keyword,), "keyword argument")
        kname = comp.check_str(k.name, k, "keyword name")
        if any(kname == n for n, _ in kw):
            return refuse(ScriptError(f"keyword argument repeated: {kname}", k.span))
        kw.append((kname, comp.expr(k.value, scope)))
    i, span = comp.i, node.span
    func = node.func

    def kwargs_of(fr: Frame) -> dict[str, Any]:
        return {n: f(fr) for n, f in kw}

    if type(func) is A.Attribute:
        attr = comp.check_str(func.attr, func, "method name")
        aspan = func.attr_span or func.span
        if attr.startswith("_"):
            return refuse(SandboxViolation(
                f"access to '{attr}' is not allowed: names starting with '_' are private", aspan))
        recv = comp.expr(func.value, scope)
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

    callee = comp.expr(func, scope)
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


def e_listcomp(comp: Compiler, node: A.ListComp, scope: StaticScope) -> Eval:
    gens = node.generators
    if type(gens) is not tuple or not gens:
        raise SandboxViolation("malformed list comprehension", node.span)
    for g in gens:
        comp.check_node(g, (A.Comprehension,), "comprehension")
    cscope = StaticScope("comprehension", comp.local_names(node), scope)
    first_iter = comp.expr(gens[0].iter, scope)
    levels = []
    for n, g in enumerate(gens):
        levels.append((
            comp.store(g.target, cscope),
            comp.expr(g.iter, cscope) if n else None,
            [comp.expr(c, cscope) for c in g.conds],
            1 + sum(step_cost(c) for c in g.conds) + (step_cost(g.iter) if n else 0),
        ))
    elt = comp.expr(node.elt, cscope)
    elt_cost = step_cost(node.elt)
    m, i, span = comp.m, comp.i, node.span
    depth = len(levels)

    def run(level: int, iterable: Any, cfr: Frame, out: list[Any]) -> None:
        store, _, conds, cost = levels[level]
        last = level + 1 == depth
        for v in i.iterate(iterable, span):
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            store(cfr, v)
            # a plain loop, not all(<generator>): a condition may call a script function, and
            # each level through a C builtin would take C stack (a crash at max_depth)
            passed = True
            for c in conds:
                if not c(cfr):
                    passed = False
                    break
            if not passed:
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
