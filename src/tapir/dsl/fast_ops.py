"""Specialised closures for the commonest arithmetic and comparisons: the int and str cases run
inline, everything else falls back to the checked operations of ``safeops``."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from tapir.core.errors import Span
from tapir.dsl.budget import Meter
from tapir.dsl.closure_runtime import Eval, Frame
from tapir.dsl.safeops import compare, contains, equal

INT_CONST_OPS = frozenset(("+", "-", "*", "//", "%"))
CONST_CMP = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


_PY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}


def int_const_binop(op: str, left: Eval, c: int, fn: Callable[..., Any], m: Meter, span: Span,
                    local: str | None) -> Eval:
    """``expr OP int-literal``, the most common arithmetic in loops: one closure, no call for
    the constant, the int case inline (and the variable read inline when it is a local)."""
    # + and - may cross the integer size budget by a bit, and a big result must be charged by
    # its size: their int results are compared with the bound of small integers (two
    # comparisons; a bit_length() call would cost more), bigger ones go through ``big_int``
    # (adding a constant moves a number one way only: one bound is enough)
    hi = m.int_fast
    lo = -hi
    d = c if op == "+" else -c if op == "-" else 0
    if local is not None and op in ("+", "-") and d >= 0:
        def local_up_c(fr: Frame) -> Any:
            try:
                a = fr.vars[local]
            except KeyError:
                a = left(fr)  # raises the unbound-variable error
            if type(a) is int:
                r = a + d
                if r < hi:
                    return r
                return m.big_int(r, span)
            return fn(a, c, m, span)

        return local_up_c
    if local is not None and op in ("+", "-"):
        def local_down_c(fr: Frame) -> Any:
            try:
                a = fr.vars[local]
            except KeyError:
                a = left(fr)  # raises the unbound-variable error
            if type(a) is int:
                r = a + d
                if r > lo:
                    return r
                return m.big_int(r, span)
            return fn(a, c, m, span)

        return local_down_c
    if local is not None:
        pyop = _PY_OPS[op]
        small = op == "*"

        def local_c(fr: Frame) -> Any:
            try:
                a = fr.vars[local]
            except KeyError:
                a = left(fr)  # raises the unbound-variable error
            if type(a) is int and (not small or -0x80000000 < a < 0x80000000):
                r = pyop(a, c)
                return r if lo < r < hi else m.big_int(r, span)  # (a big quotient is a new big value)
            return fn(a, c, m, span)

        return local_c
    if op in ("+", "-") and d >= 0:
        def up_c(fr: Frame) -> Any:
            a = left(fr)
            if type(a) is int:
                r = a + d
                if r < hi:
                    return r
                return m.big_int(r, span)
            return fn(a, c, m, span)

        return up_c
    if op in ("+", "-"):
        def down_c(fr: Frame) -> Any:
            a = left(fr)
            if type(a) is int:
                r = a + d
                if r > lo:
                    return r
                return m.big_int(r, span)
            return fn(a, c, m, span)

        return down_c
    if op == "*":
        def mul_c(fr: Frame) -> Any:
            a = left(fr)
            return a * c if type(a) is int and -0x80000000 < a < 0x80000000 else fn(a, c, m, span)

        return mul_c
    if op == "//":
        def floordiv_c(fr: Frame) -> Any:
            a = left(fr)
            if type(a) is int:
                r = a // c
                return r if lo < r < hi else m.big_int(r, span)
            return fn(a, c, m, span)

        return floordiv_c

    def mod_c(fr: Frame) -> Any:
        a = left(fr)
        if type(a) is int:
            r = a % c
            return r if lo < r < hi else m.big_int(r, span)
        return fn(a, c, m, span)

    return mod_c


def const_compare(op: str, left: Eval, c: Any, m: Meter, span: Span) -> Eval:
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
    py = CONST_CMP[op]

    def cmp_c(fr: Frame) -> bool:
        a = left(fr)
        return py(a, c) if type(a) is tc else compare(op, a, c, m, span)

    return cmp_c


def local_const_compare(op: str, local: str, left: Eval, c: int | str, m: Meter, span: Span) -> Eval:
    """``local_variable OP literal``: the loop test of most loops."""
    tc, pyop = type(c), _PY_OPS[op]

    def cmp_local(fr: Frame) -> bool:
        try:
            a = fr.vars[local]
        except KeyError:
            a = left(fr)
        return pyop(a, c) if type(a) is tc else compare(op, a, c, m, span)

    return cmp_local


def compare1(op: str, left: Eval, right: Eval, m: Meter, span: Span) -> Eval:
    # The look-alike closures below are deliberate: each writes its operator inline, which a
    # shared body taking the operator as a function would not (bench/interpreter.py).
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
