"""Compiling expressions to closures: names, literals, operators, subscripts.

Each function compiles one expression type for a ``Compiler`` (``comp``); the dispatch table in
``compiler`` maps node types to them. Calls and comprehensions are in ``compile_calls``.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, cast

from tapir.core.errors import SandboxViolation, ScriptError, Span, TapirError, UnknownElement
from tapir.dsl import ast as A
from tapir.dsl.budget import budget_exceeded
from tapir.dsl.closure_runtime import Eval, Frame, refuse
from tapir.dsl.fast_ops import CONST_CMP, INT_CONST_OPS, compare1, const_compare, int_const_binop, local_const_compare
from tapir.dsl.registry import REGISTRY, Namespace
from tapir.dsl.safeops import BINOPS, add, check_key, compare, format_value, mul, to_str, unary
from tapir.dsl.scopes import StaticScope
from tapir.dsl.values import ElementHandle
from tapir.dsl.vocabulary import foreign

if TYPE_CHECKING:
    from tapir.dsl.compiler import Compiler


_MISSING: Any = object()

#: Python builtins a script might try; naming one gives a SandboxViolation, not "not defined".
_PY_BUILTINS = frozenset(
    "aiter anext ascii bin breakpoint bytearray bytes callable chr classmethod compile complex "
    "copyright credits delattr dir divmod eval exec exit filter format frozenset getattr globals hasattr "
    "hash help hex id input isinstance issubclass iter license locals map memoryview next object oct open "
    "ord pow property quit repr reversed set setattr slice staticmethod super type vars __import__ "
    "__build_class__ __builtins__ __loader__ __spec__ __name__ __doc__ __package__ __debug__".split()
)

def not_defined(name: str, span: Span) -> TapirError:
    if name.startswith("__") or name in _PY_BUILTINS:
        return SandboxViolation(
            f"'{name}' is not available in Tapir scripts", span,
            hint="builtins: " + ", ".join(REGISTRY.names(Namespace.BUILTIN)),
        )
    word = foreign(name, Namespace.GLOBAL)
    if word is not None:  # Appium's or Maestro's word (tapir.dsl.vocabulary)
        return ScriptError(f"name '{name}' is not defined; did you mean '{word.name}'?", span,
                           hint=f"'{name}' is a word of {word.origin}; in Tapir: {word.call}")
    close = difflib.get_close_matches(name, REGISTRY.global_names(), n=1)
    return ScriptError(f"name '{name}' is not defined", span, hint=f"did you mean '{close[0]}'?" if close else None)


def _const(v: Any) -> Eval:
    return lambda fr: v


def e_constant(comp: Compiler, node: A.Constant, scope: StaticScope) -> Eval:
    v = node.value
    if type(v) not in (str, int, float, bool, type(None)):
        raise SandboxViolation(f"a constant of type {type(v).__name__} is not a script value", node.span)
    if type(v) is str and len(v) > comp.m.max_size:
        return refuse(budget_exceeded("size", comp.m.max_size, "a string literal is too long", node.span))
    if type(v) is int and v.bit_length() > comp.m.max_int_bits:
        return refuse(budget_exceeded("size", comp.m.max_int_bits, "an integer literal is too large", node.span))
    return lambda fr: v


def e_name(comp: Compiler, node: A.Name, scope: StaticScope) -> Eval:
    name = comp.check_str(node.id, node, "name")
    span = node.span
    if name.startswith("__"):
        return refuse(not_defined(name, span))
    hops = scope.resolve(name)
    if hops is None:
        g = comp.g
        # the registry's builtins and API functions, read when the script is compiled
        found = REGISTRY.script_value(name)
        default = _MISSING if found is None else found

        def load_global(fr: Frame) -> Any:
            v = g.get(name, default)
            if v is _MISSING:
                raise not_defined(name, span)
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


def e_element(comp: Compiler, node: A.ElementRef, scope: StaticScope) -> Eval:
    name = comp.check_str(node.name, node, "element name")
    handle = ElementHandle(name)
    symbols = comp.i.symbols
    if symbols is not None and name not in symbols:
        suggestions = symbols.suggest(name)
        hint = ("did you mean " + " or ".join(f"${s}" for s in suggestions) + "?") if suggestions else None
        return refuse(UnknownElement(f"unknown element ${name}: it is not in the app document",
                                      node.span, hint=hint))
    return lambda fr: handle


def e_fstring(comp: Compiler, node: A.FString, scope: StaticScope) -> Eval:
    parts: list[Eval] = []
    for p in node.parts:
        if type(p) is A.Constant and type(p.value) is str:
            parts.append(_const(p.value))
        else:
            parts.append(comp.expr(p, scope))
    m, span = comp.m, node.span

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


def e_formatted(comp: Compiler, node: A.FormattedValue, scope: StaticScope) -> Eval:
    val = comp.expr(node.value, scope)
    conv, spec = node.conversion, node.format_spec
    if conv not in (None, "r", "s", "a"):
        raise SandboxViolation(f"unknown conversion {conv!r}", node.span)
    if spec is not None and type(spec) is not str:
        raise SandboxViolation("a format spec must be a str", node.span)
    m, span, spec_s = comp.m, node.span, spec or ""
    return lambda fr: format_value(val(fr), spec_s, conv, m, span)


def e_list(comp: Compiler, node: A.ListExpr, scope: StaticScope) -> Eval:
    elts = [comp.expr(e, scope) for e in node.elts]
    return lambda fr: [e(fr) for e in elts]


def e_tuple(comp: Compiler, node: A.TupleExpr, scope: StaticScope) -> Eval:
    elts = [comp.expr(e, scope) for e in node.elts]
    return lambda fr: tuple([e(fr) for e in elts])


def e_dict(comp: Compiler, node: A.DictExpr, scope: StaticScope) -> Eval:
    if len(node.keys) != len(node.values):
        raise SandboxViolation("malformed dict literal", node.span)
    pairs = [(comp.expr(k, scope), comp.expr(v, scope)) for k, v in zip(node.keys, node.values, strict=True)]
    span = node.span

    def ev(fr: Frame) -> dict[Any, Any]:
        d: dict[Any, Any] = {}
        for k, v in pairs:
            d[check_key(k(fr), span)] = v(fr)
        return d

    return ev


def e_binop(comp: Compiler, node: A.BinOp, scope: StaticScope) -> Eval:
    op = node.op
    if op not in BINOPS:
        raise SandboxViolation(f"unsupported operator {op!r}", node.span)
    left, right = comp.expr(node.left, scope), comp.expr(node.right, scope)
    fn, m, span = BINOPS[op], comp.m, node.span
    c = node.right.value if type(node.right) is A.Constant else None
    if type(c) is int and op in INT_CONST_OPS and (op not in ("//", "%") or c != 0) \
            and (op != "*" or -0x80000000 < c < 0x80000000):
        return int_const_binop(op, left, c, fn, m, span, comp.local_name(node.left, scope))
    # One closure per operator, each with the operator written inline: the near-identical bodies
    # are deliberate (a shared body would pay an operator-function call on every evaluation).
    # Int results outside (lo, hi) are big: ``big_int`` charges them by size (or refuses them).
    hi = m.int_fast
    lo = -hi
    if op == "+":
        def ev_add(fr: Frame) -> Any:
            a = left(fr)
            b = right(fr)
            if type(a) is int and type(b) is int:
                r = a + b
                if lo < r < hi:
                    return r
                return m.big_int(r, span)
            return add(a, b, m, span)

        return ev_add
    if op == "-":
        def ev_sub(fr: Frame) -> Any:
            a = left(fr)
            b = right(fr)
            if type(a) is int and type(b) is int:
                r = a - b
                if lo < r < hi:
                    return r
                return m.big_int(r, span)
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
                r = a // b
                return r if lo < r < hi else m.big_int(r, span)
            return fn(a, b, m, span)

        return ev_floordiv
    if op == "%":
        def ev_mod(fr: Frame) -> Any:
            a = left(fr)
            b = right(fr)
            if type(a) is int and type(b) is int and b:
                r = a % b
                return r if lo < r < hi else m.big_int(r, span)
            return fn(a, b, m, span)

        return ev_mod
    return lambda fr: fn(left(fr), right(fr), m, span)


def e_unary(comp: Compiler, node: A.UnaryOp, scope: StaticScope) -> Eval:
    op = node.op
    if op not in ("not", "-", "+"):
        raise SandboxViolation(f"unsupported unary operator {op!r}", node.span)
    operand, span, m = comp.expr(node.operand, scope), node.span, comp.m
    if op == "not":
        return lambda fr: not operand(fr)
    hi = m.int_fast
    lo = -hi

    def ev(fr: Frame) -> Any:
        v = operand(fr)
        if type(v) is int:
            if op == "+":
                return v
            r = -v  # a new integer as big as v: charged by size when big
            return r if lo < r < hi else m.big_int(r, span)
        return unary(op, v, span)

    return ev


def e_boolop(comp: Compiler, node: A.BoolOp, scope: StaticScope) -> Eval:
    if node.op not in ("and", "or") or len(node.values) < 2:
        raise SandboxViolation(f"malformed boolean operation {node.op!r}", node.span)
    vals = [comp.expr(v, scope) for v in node.values]
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


def e_compare(comp: Compiler, node: A.Compare, scope: StaticScope) -> Eval:
    if not node.ops or len(node.ops) != len(node.comparators) or any(o not in _CMP_OPS for o in node.ops):
        raise SandboxViolation("malformed comparison", node.span)
    left = comp.expr(node.left, scope)
    rights = [comp.expr(c, scope) for c in node.comparators]
    ops = list(node.ops)
    m, span = comp.m, node.span
    if len(ops) == 1:
        op, right = ops[0], rights[0]
        c = node.comparators[0]
        if type(c) is A.Constant and type(c.value) in (int, str) and op in CONST_CMP:
            local = comp.local_name(node.left, scope)
            if local is not None:
                return local_const_compare(op, local, left, cast(int | str, c.value), m, span)
            return const_compare(op, left, c.value, m, span)
        return compare1(op, left, right, m, span)

    def chain(fr: Frame) -> bool:
        a = left(fr)
        for op, r in zip(ops, rights, strict=True):
            b = r(fr)
            if not compare(op, a, b, m, span):
                return False
            a = b
        return True

    return chain


def e_ifexp(comp: Compiler, node: A.IfExp, scope: StaticScope) -> Eval:
    test, body, orelse = comp.expr(node.test, scope), comp.expr(node.body, scope), comp.expr(node.orelse, scope)
    return lambda fr: body(fr) if test(fr) else orelse(fr)


def e_slice(comp: Compiler, node: A.Slice, scope: StaticScope) -> Eval:
    return refuse(ScriptError("a slice can only appear inside brackets, as in x[1:3]", node.span))


def e_subscript(comp: Compiler, node: A.Subscript, scope: StaticScope) -> Eval:
    obj, key, i, span = comp.expr(node.value, scope), comp.index(node.index, scope), comp.i, node.span

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


def e_attribute(comp: Compiler, node: A.Attribute, scope: StaticScope) -> Eval:
    attr = comp.check_str(node.attr, node, "attribute name")
    span = node.attr_span or node.span
    if attr.startswith("_"):
        return refuse(SandboxViolation(f"access to '{attr}' is not allowed: names starting with '_' are private",
                                        span))
    return refuse(SandboxViolation(
        f"attribute access ('.{attr}') is not allowed in Tapir scripts, only method calls", span,
        hint=f"call a method, e.g. x.{attr}(...), if the value has one"))
