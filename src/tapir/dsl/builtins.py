"""The builtin functions of the language, each a safe re-implementation and a registry entry.

Each builtin is ``fn(host, args, kwargs, span)``, registered with its signature (the registry
checks the argument count and keywords before calling it). ``host`` is the running interpreter
seen through the small ``Host`` interface (calling script functions for ``key=``, iterating
element lists through the device runtime, printing), so builtins never hold interpreter
internals. Results are always script values; every allocation goes through the size budget.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from tapir.core.errors import ScriptError, Span
from tapir.dsl.budget import Meter, budget_exceeded
from tapir.dsl.registry import REGISTRY, Entry, Namespace
from tapir.dsl.safeops import (
    NUMBER_TYPES,
    add,
    check_key,
    has_long_strings,
    order,
    sort_key_safe,
    to_str,
)
from tapir.dsl.values import type_name


class Host(Protocol):
    """What builtins and methods may ask of the interpreter."""

    meter: Meter

    def call(self, fn: Any, args: list[Any], span: Span) -> Any: ...

    def iterate(self, value: Any, span: Span) -> Iterator[Any]: ...

    def length(self, value: Any, span: Span) -> int: ...

    def write(self, text: str, span: Span) -> None: ...

    def getitem(self, value: Any, key: Any, span: Span) -> Any: ...


BuiltinFn = Callable[[Host, list[Any], dict[str, Any], Span], Any]
_MISSING: Any = object()


#: Bytes of one new int object (small values); bigger ones add 4 bytes per 30-bit digit.
INT_BYTES = 32
#: Bytes of one new tuple of n items: header and GC links, plus a pointer per item.
TUPLE_BYTES = 56


def int_bytes(n: int) -> int:
    """About what one int of ``n``'s size takes in memory."""
    return INT_BYTES + 4 * (abs(n).bit_length() // 30)


def item_bytes(value: Any) -> int:
    """What each item of ``list(value)`` costs: a pointer, plus the new object it makes when
    iterating creates one (a range makes a new int per item, a string a new 1-char string)."""
    tv = type(value)
    if tv is range:
        return 8 + int_bytes(max(abs(value.start), abs(value.stop)))
    if tv is str and not value.isascii():
        return 8 + 80
    return 8


def materialize(host: Host, value: Any, span: Span) -> list[Any]:
    """All items of an iterable script value as a list, within the size and memory budgets."""
    if type(value) in (list, tuple, str, dict, range):
        host.meter.check_size(len(value), span, "list", item_bytes(value))
        return list(value)
    out: list[Any] = []
    limit = host.meter.max_size
    for x in host.iterate(value, span):
        if len(out) >= limit:
            host.meter.check_size(len(out) + 1, span, "list")
        out.append(x)
    host.meter.check_size(len(out), span, "list")
    return out


def sort_values(host: Host, items: list[Any], key: Any, reverse: Any, span: Span) -> list[Any]:
    """``sorted(items, key=key, reverse=reverse)`` charged n log n; containers compare through
    ``safeops.order`` so nested values cannot make one comparison unbounded."""
    n = len(items)
    host.meter.charge(n * max(1, n.bit_length()), span)
    keys = items if key is None else [host.call(key, [x], span) for x in items]
    m = host.meter
    # Python's own sort when comparing is cheap; with long strings each comparison reads them,
    # so the comparisons go through safeops.order, charged one by one (the clock is looked at).
    if sort_key_safe(keys) and _orderable(keys) and not has_long_strings(keys):
        try:
            order_ = sorted(range(n), key=keys.__getitem__, reverse=bool(reverse))
        except TypeError:
            order_ = None
        if order_ is not None:
            return [items[i] for i in order_]

    def cmp(i: int, j: int) -> int:
        if order("<", keys[i], keys[j], m, span):
            return -1
        return 1 if order("<", keys[j], keys[i], m, span) else 0

    order_ = sorted(range(n), key=functools.cmp_to_key(cmp), reverse=bool(reverse))
    return [items[i] for i in order_]


def _orderable(keys: list[Any]) -> bool:
    """True when Python's comparison of these keys gives exactly our semantics and messages."""
    kinds = set()
    for k in keys:
        t = type(k)
        if t in NUMBER_TYPES:
            kinds.add("number")
        elif t is str:
            kinds.add("str")
        elif t is tuple:
            kinds.add("tuple")
        else:
            return False
        if len(kinds) > 1:
            return False
    return True


# ---------------------------------------------------------------------------------------------


def _len(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> int:
    return host.length(args[0], span)


def _range(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> range:
    for a in args:
        if type(a) not in (int, bool):
            raise ScriptError(f"'{type_name(a)}' object cannot be interpreted as an integer", span)
    if len(args) == 3 and args[2] == 0:
        raise ScriptError("range() arg 3 must not be zero", span)
    r = range(*args)
    try:
        n = len(r)
    except OverflowError:
        n = host.meter.max_size + 1
    if n > host.meter.max_size:
        raise budget_exceeded("size", host.meter.max_size, f"a range of {n:,} numbers is too long", span)
    return r


def _print(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    sep, end = kwargs.get("sep", " "), kwargs.get("end", "\n")
    for name, v in (("sep", sep), ("end", end)):
        if v is not None and type(v) is not str:
            raise ScriptError(f"{name} must be None or a string, not {type_name(v)}", span)
    sep = " " if sep is None else sep
    end = "\n" if end is None else end
    m = host.meter
    parts = [to_str(a, m, span) for a in args]
    m.check_size(sum(map(len, parts)) + len(sep) * max(len(parts) - 1, 0) + len(end), span, "str")
    host.write(sep.join(parts) + end, span)


def _str(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> str:
    return to_str(args[0], host.meter, span) if args else ""


def _int(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> int:
    if not args:
        return 0
    x = args[0]
    base = args[1] if len(args) > 1 else kwargs.get("base", _MISSING)
    m = host.meter
    try:
        if base is not _MISSING:
            if type(x) is not str:
                raise ScriptError("int() can't convert non-string with explicit base", span)
            if type(base) not in (int, bool):
                raise ScriptError(f"'{type_name(base)}' object cannot be interpreted as an integer", span)
            if 2 <= base <= 36 or base == 0:
                # Python limits the digits of decimal text only (4,300); a power-of-two base
                # reads any length in linear time, into an integer over the size budget.
                m.charge(len(x) // 64, span)
                if len(x) * 6 > m.max_int_bits:
                    m.check_int(int_text_bits(x, int(base)), span)
            return _new_int(int(x, base), m, span)
        if type(x) is str:
            m.charge(len(x) // 64, span)
            return int(x)
        if type(x) in (int, float, bool):
            return int(x)
    except (ValueError, OverflowError) as exc:
        raise ScriptError(str(exc), span) from None
    raise ScriptError(f"int() argument must be a string or a real number, not '{type_name(x)}'", span)


_PREFIX_BASES = {"0b": 2, "0o": 8, "0x": 16}


def int_text_bits(text: str, base: int) -> int:
    """At most how many bits ``int(text, base)`` has (exact to a bit for valid text): the
    significant digits times log2 of the base, after the sign, the prefix (``0b``/``0o``/``0x``,
    which base 0 reads and base 2/8/16 allow), underscores and leading zeros."""
    body = text.strip().lstrip("+-").lower()
    prefix = _PREFIX_BASES.get(body[:2])
    if prefix is not None and base in (0, prefix):
        body, base = body[2:], prefix
    elif base == 0:
        base = 10
    significant = body.lstrip("0_")
    return math.ceil((len(significant) - significant.count("_")) * math.log2(base))


def _new_int(v: Any, m: Meter, span: Span) -> Any:
    """``v``; a big integer (a new one: ``abs``, ``round``, ``int`` of text) charged by size."""
    if type(v) is int and not -m.int_fast < v < m.int_fast:
        return m.big_int(v, span)
    return v


def _float(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> float:
    if not args:
        return 0.0
    x = args[0]
    if type(x) in (str, int, float, bool):
        if type(x) is str:
            host.meter.charge(len(x) // 64, span)
        try:
            return float(x)
        except (ValueError, OverflowError) as exc:
            raise ScriptError(str(exc), span) from None
    raise ScriptError(f"float() argument must be a string or a real number, not '{type_name(x)}'", span)


def _bool(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> bool:
    return bool(args[0]) if args else False


def _extreme(name: str, op: str) -> BuiltinFn:
    def fn(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        key = kwargs.get("key")
        if len(args) == 1:
            items = materialize(host, args[0], span)
        else:
            if "default" in kwargs:
                raise ScriptError(f"Cannot specify a default for {name}() with multiple positional arguments", span)
            items = list(args)
        if not items:
            if "default" in kwargs:
                return kwargs["default"]
            raise ScriptError(f"{name}() arg is an empty sequence", span)
        host.meter.charge(len(items), span)
        best = items[0]
        best_key = best if key is None else host.call(key, [best], span)
        for x in items[1:]:
            k = x if key is None else host.call(key, [x], span)
            if order(op, k, best_key, host.meter, span):
                best, best_key = x, k
        return best

    return fn


def _abs(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    if type(args[0]) not in NUMBER_TYPES:
        raise ScriptError(f"bad operand type for abs(): '{type_name(args[0])}'", span)
    return _new_int(abs(args[0]), host.meter, span)


def _sorted(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    items = materialize(host, args[0], span)
    return sort_values(host, items, kwargs.get("key"), kwargs.get("reverse", False), span)


def _enumerate(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> list[tuple[int, Any]]:
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if type(start) not in (int, bool):
        raise ScriptError(f"'{type_name(start)}' object cannot be interpreted as an integer", span)
    items = materialize(host, args[0], span)
    # a new tuple and (past 256) a new int per item
    host.meter.check_size(len(items), span, "list", 8 + TUPLE_BYTES + 16 + int_bytes(start + len(items)))
    return [(start + i, x) for i, x in enumerate(items)]


def _zip(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> list[tuple[Any, ...]]:
    columns = [materialize(host, a, span) for a in args]
    n = min(map(len, columns), default=0)
    host.meter.check_size(n, span, "list", 8 + TUPLE_BYTES + 8 * len(columns))
    return list(zip(*columns, strict=False))


def _list(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    return materialize(host, args[0], span) if args else []


def dict_from(host: Host, source: Any, out: dict[Any, Any], span: Span) -> None:
    """``out.update(source)`` for a dict or an iterable of pairs, within the size budget."""
    m = host.meter
    if type(source) is dict:
        m.check_size(len(out) + len(source), span, "dict")
        out.update(source)
        return
    if type(source) in (list, tuple, range, str, dict):
        m.charge(len(source), span)
    for i, pair in enumerate(host.iterate(source, span)):
        if type(pair) not in (list, tuple, str) or len(pair) != 2:
            n = len(pair) if type(pair) in (list, tuple, str) else None
            if n is None:
                raise ScriptError(f"cannot convert dictionary update sequence element #{i} to a sequence", span)
            raise ScriptError(f"dictionary update sequence element #{i} has length {n}; 2 is required", span)
        k, v = pair
        k = check_key(k, span)  # before anything hashes it
        if len(out) >= m.max_size and k not in out:
            m.check_size(len(out) + 1, span, "dict")
        out[k] = v


def _dict(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> dict[Any, Any]:
    if len(args) > 1:
        raise ScriptError(f"dict expected at most 1 argument, got {len(args)}", span)
    out: dict[Any, Any] = {}
    if args:
        dict_from(host, args[0], out, span)
    out.update(kwargs)
    return out


def _any(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> bool:
    items = materialize(host, args[0], span)
    host.meter.charge(len(items), span)
    return any(items)


def _all(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> bool:
    items = materialize(host, args[0], span)
    host.meter.charge(len(items), span)
    return all(items)


def _sum(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    total = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if type(total) is str:
        raise ScriptError("sum() can't sum strings [use ''.join(seq) instead]", span)
    items = materialize(host, args[0], span)
    host.meter.charge(len(items), span)
    for x in items:
        total = add(total, x, host.meter, span)
    return total


def _round(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    x = args[0]
    nd = args[1] if len(args) > 1 else kwargs.get("ndigits")
    if type(x) not in NUMBER_TYPES:
        raise ScriptError(f"type {type_name(x)} doesn't define __round__ method", span)
    if nd is not None and type(nd) not in (int, bool):
        raise ScriptError(f"'{type_name(nd)}' object cannot be interpreted as an integer", span)
    if nd is not None and type(x) is not float and nd < 0 and -nd > int(x).bit_length() * 0.302 + 2:
        # 10 ** -ndigits > 2 * |x|, so the result is 0; Python would compute 10 ** -ndigits
        # first (round(1, -10**9): minutes)
        return 0
    try:
        return _new_int(round(x) if nd is None else round(x, nd), host.meter, span)
    except (ValueError, OverflowError) as exc:
        raise ScriptError(str(exc), span) from None


def _define(signature: str, doc: str, impl: BuiltinFn, **params: str) -> None:
    REGISTRY.add(Entry.define(signature, Namespace.BUILTIN, doc, impl, params=params or None))


_define("len(obj: any, /) -> int", "The number of items of a string, list, dict, range or list element.", _len)
_define("range(start_or_stop: int, stop: int = None, step: int = None, /) -> range",
        "The integers from start (default 0) up to but not including stop, by step: range(5), range(1, 10, 2).",
        _range)
_define("print(*values: any, sep: str = ' ', end: str = '\\n') -> None",
        "Write the values, separated by sep, followed by end, to the output.", _print)
_define("str(value: any = '', /) -> str", "The value as text.", _str)
_define("int(value: any = 0, /, base: int = 10) -> int",
        "The value as an integer (a string in the given base, a number truncated).", _int)
_define("float(value: any = 0.0, /) -> float", "The value as a floating-point number.", _float)
_define("bool(value: any = False, /) -> bool", "True or False: whether the value is true.", _bool)
_define("min(items: any, /, *more: any, key: function = None, default: any = None) -> any",
        "The smallest of the values, or of one iterable's items (key: what to compare).", _extreme("min", "<"))
_define("max(items: any, /, *more: any, key: function = None, default: any = None) -> any",
        "The largest of the values, or of one iterable's items (key: what to compare).", _extreme("max", ">"))
_define("abs(number: any, /) -> any", "The absolute value of a number.", _abs)
_define("sorted(items: any, /, *, key: function = None, reverse: bool = False) -> list",
        "A new sorted list of the items (key: what to compare; reverse: largest first).", _sorted)
_define("enumerate(items: any, /, start: int = 0) -> list",
        "(index, item) pairs of the items, counting from start.", _enumerate)
_define("zip(*iterables: any) -> list", "Tuples of the items at the same position in each iterable.", _zip)
_define("list(items: any = None, /) -> list", "A new list of the items (an empty list without).", _list)
_define("dict(pairs: any = None, /, **items: any) -> dict",
        "A new dict from a dict or (key, value) pairs, plus keyword items.", _dict)
_define("any(items: any, /) -> bool", "True when at least one item is true.", _any)
_define("all(items: any, /) -> bool", "True when every item is true (or there are none).", _all)
_define("sum(items: any, /, start: any = 0) -> any", "The total of the items, plus start.", _sum)
_define("round(number: any, /, ndigits: int = None) -> any",
        "The number rounded to ndigits decimals (to an integer without).", _round)
