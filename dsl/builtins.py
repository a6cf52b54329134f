"""The builtin functions of the language: exactly ``api.BUILTINS``, each a safe re-implementation.

Each builtin is ``fn(host, args, kwargs, span)``. ``host`` is the running interpreter seen
through the small ``Host`` interface (calling script functions for ``key=``, iterating element
lists through the device runtime, printing), so builtins never hold interpreter internals.
Results are always script values; every allocation goes through the size budget.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Any, Protocol

from tapir.dsl import api
from tapir.dsl.budget import Meter, budget_exceeded
from tapir.dsl.errors import ScriptError, Span
from tapir.dsl.safeops import (
    NUMBER_TYPES,
    add,
    check_key,
    order,
    sort_key_safe,
    to_str,
)
from tapir.dsl.values import Builtin, type_name


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


def arity(name: str, args: list[Any], kwargs: dict[str, Any], span: Span, lo: int, hi: int,
          keywords: tuple[str, ...] = ()) -> None:
    """Python-like argument count and keyword checks."""
    for k in kwargs:
        if k not in keywords:
            raise ScriptError(f"{name}() got an unexpected keyword argument '{k}'", span)
    if not lo <= len(args) <= hi:
        if lo == hi:
            want = f"exactly {lo} argument{'s' if lo != 1 else ''}"
        elif len(args) < lo:
            want = f"at least {lo} argument{'s' if lo != 1 else ''}"
        else:
            want = f"at most {hi} argument{'s' if hi != 1 else ''}"
        raise ScriptError(f"{name}() takes {want} ({len(args)} given)", span)


def materialize(host: Host, value: Any, span: Span) -> list[Any]:
    """All items of an iterable script value as a list, within the size budget."""
    if type(value) in (list, tuple, str, dict, range):
        host.meter.check_size(len(value), span, "list")
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
    if sort_key_safe(keys) and _orderable(keys):
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
    arity("len", args, kwargs, span, 1, 1)
    return host.length(args[0], span)


def _range(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> range:
    arity("range", args, kwargs, span, 1, 3)
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
    arity("print", args, kwargs, span, 0, 1 << 30, ("sep", "end"))
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
    arity("str", args, kwargs, span, 0, 1)
    return to_str(args[0], host.meter, span) if args else ""


def _int(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> int:
    arity("int", args, kwargs, span, 0, 2, ("base",))
    if not args:
        return 0
    x = args[0]
    base = args[1] if len(args) > 1 else kwargs.get("base", _MISSING)
    try:
        if base is not _MISSING:
            if type(x) is not str:
                raise ScriptError("int() can't convert non-string with explicit base", span)
            if type(base) not in (int, bool):
                raise ScriptError(f"'{type_name(base)}' object cannot be interpreted as an integer", span)
            return int(x, base)
        if type(x) in (str, int, float, bool):
            return int(x)
    except (ValueError, OverflowError) as exc:
        raise ScriptError(str(exc), span) from None
    raise ScriptError(f"int() argument must be a string or a real number, not '{type_name(x)}'", span)


def _float(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> float:
    arity("float", args, kwargs, span, 0, 1)
    if not args:
        return 0.0
    x = args[0]
    if type(x) in (str, int, float, bool):
        try:
            return float(x)
        except (ValueError, OverflowError) as exc:
            raise ScriptError(str(exc), span) from None
    raise ScriptError(f"float() argument must be a string or a real number, not '{type_name(x)}'", span)


def _bool(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> bool:
    arity("bool", args, kwargs, span, 0, 1)
    return bool(args[0]) if args else False


def _extreme(name: str, op: str) -> BuiltinFn:
    def fn(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        arity(name, args, kwargs, span, 1, 1 << 30, ("key", "default"))
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
        best = items[0]
        best_key = best if key is None else host.call(key, [best], span)
        for x in items[1:]:
            k = x if key is None else host.call(key, [x], span)
            if order(op, k, best_key, host.meter, span):
                best, best_key = x, k
        return best

    return fn


def _abs(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    arity("abs", args, kwargs, span, 1, 1)
    if type(args[0]) not in NUMBER_TYPES:
        raise ScriptError(f"bad operand type for abs(): '{type_name(args[0])}'", span)
    return abs(args[0])


def _sorted(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    arity("sorted", args, kwargs, span, 1, 1, ("key", "reverse"))
    items = materialize(host, args[0], span)
    return sort_values(host, items, kwargs.get("key"), kwargs.get("reverse", False), span)


def _enumerate(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> list[tuple[int, Any]]:
    arity("enumerate", args, kwargs, span, 1, 2, ("start",))
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if type(start) not in (int, bool):
        raise ScriptError(f"'{type_name(start)}' object cannot be interpreted as an integer", span)
    items = materialize(host, args[0], span)
    return [(start + i, x) for i, x in enumerate(items)]


def _zip(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> list[tuple[Any, ...]]:
    arity("zip", args, kwargs, span, 0, 1 << 30)
    columns = [materialize(host, a, span) for a in args]
    return list(zip(*columns, strict=False))


def _list(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    arity("list", args, kwargs, span, 0, 1)
    return materialize(host, args[0], span) if args else []


def dict_from(host: Host, source: Any, out: dict[Any, Any], span: Span) -> None:
    """``out.update(source)`` for a dict or an iterable of pairs, within the size budget."""
    m = host.meter
    if type(source) is dict:
        m.check_size(len(out) + len(source), span, "dict")
        out.update(source)
        return
    for i, pair in enumerate(host.iterate(source, span)):
        if type(pair) not in (list, tuple, str) or len(pair) != 2:
            n = len(pair) if type(pair) in (list, tuple, str) else None
            if n is None:
                raise ScriptError(f"cannot convert dictionary update sequence element #{i} to a sequence", span)
            raise ScriptError(f"dictionary update sequence element #{i} has length {n}; 2 is required", span)
        k, v = pair
        if k not in out and len(out) >= m.max_size:
            m.check_size(len(out) + 1, span, "dict")
        out[check_key(k, span)] = v


def _dict(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> dict[Any, Any]:
    if len(args) > 1:
        raise ScriptError(f"dict expected at most 1 argument, got {len(args)}", span)
    out: dict[Any, Any] = {}
    if args:
        dict_from(host, args[0], out, span)
    out.update(kwargs)
    return out


def _any(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> bool:
    arity("any", args, kwargs, span, 1, 1)
    items = materialize(host, args[0], span)
    host.meter.charge(len(items), span)
    return any(items)


def _all(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> bool:
    arity("all", args, kwargs, span, 1, 1)
    items = materialize(host, args[0], span)
    host.meter.charge(len(items), span)
    return all(items)


def _sum(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    arity("sum", args, kwargs, span, 1, 2, ("start",))
    total = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if type(total) is str:
        raise ScriptError("sum() can't sum strings [use ''.join(seq) instead]", span)
    items = materialize(host, args[0], span)
    host.meter.charge(len(items), span)
    for x in items:
        total = add(total, x, host.meter, span)
    return total


def _round(host: Host, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    arity("round", args, kwargs, span, 1, 2, ("ndigits",))
    x = args[0]
    nd = args[1] if len(args) > 1 else kwargs.get("ndigits")
    if type(x) not in NUMBER_TYPES:
        raise ScriptError(f"type {type_name(x)} doesn't define __round__ method", span)
    if nd is not None and type(nd) not in (int, bool):
        raise ScriptError(f"'{type_name(nd)}' object cannot be interpreted as an integer", span)
    try:
        return round(x) if nd is None else round(x, nd)
    except (ValueError, OverflowError) as exc:
        raise ScriptError(str(exc), span) from None


_IMPLEMENTATIONS: dict[str, BuiltinFn] = {
    "len": _len, "range": _range, "print": _print, "str": _str, "int": _int, "float": _float,
    "bool": _bool, "min": _extreme("min", "<"), "max": _extreme("max", ">"), "abs": _abs,
    "sorted": _sorted, "enumerate": _enumerate, "zip": _zip, "list": _list, "dict": _dict,
    "any": _any, "all": _all, "sum": _sum, "round": _round,
}

if set(_IMPLEMENTATIONS) != set(api.BUILTINS):  # the registry is the one list of builtins
    raise ImportError(f"builtins out of sync with api.BUILTINS: {set(_IMPLEMENTATIONS) ^ set(api.BUILTINS)}")

#: The builtins as script values, read-only: a script that assigns ``len = 5`` shadows ``len``
#: in its own globals; this table cannot change.
BUILTINS: MappingProxyType[str, Builtin] = MappingProxyType(
    {name: Builtin(name, _IMPLEMENTATIONS[name]) for name in api.BUILTINS}
)
