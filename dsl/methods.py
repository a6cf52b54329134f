"""Methods a script may call on its values, by type: an explicit allow-list.

``METHODS[type][name]`` is ``fn(host, receiver, args, kwargs, span)``. A name that is not listed
is refused: a method that exists on the Python type becomes a ``SandboxViolation`` (``"".encode``,
``[].__class__`` never gets this far: underscore names are refused earlier), anything else a
``ScriptError`` like Python's ``AttributeError``. Methods whose result can grow check the size
budget *before* allocating (``str.replace`` with an empty pattern, ``ljust(10**9)``...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.dsl.builtins import Host, arity, dict_from, materialize, sort_values
from tapir.dsl.errors import SandboxViolation, ScriptError, Span
from tapir.dsl.safeops import CONTAINER_TYPES, check_key, equal, short_repr, str_format
from tapir.dsl.values import type_name

MethodFn = Callable[[Host, Any, list[Any], dict[str, Any], Span], Any]


def _call_py(name: str, s: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    """Call Python's own method ``name`` of the receiver's type (name from our allow-list)."""
    try:
        return getattr(type(s), name)(s, *args, **kwargs)
    except (TypeError, ValueError, OverflowError, IndexError) as exc:
        raise ScriptError(_clean(str(exc)), span) from None


def _clean(msg: str) -> str:
    return msg.replace("ElementHandle", "element").replace("ScriptFunction", "function")


# ---------------------------------------------------------------------------------------------
# str


def _str_plain(name: str) -> MethodFn:
    """A method whose result is at most a small multiple of the receiver (case mapping can
    turn one character into three), so checking the result is enough."""

    def fn(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        host.meter.charge(len(s) // 64, span)
        out = _call_py(name, s, args, kwargs, span)
        if type(out) is str:
            host.meter.check_size(len(out), span, "str")
        elif type(out) is list:
            host.meter.check_size(len(out), span, "list")
        return out

    return fn


def _str_padded(name: str) -> MethodFn:
    def fn(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        if args and type(args[0]) in (int, bool):
            host.meter.check_size(max(int(args[0]), len(s)), span, "str")
        return _call_py(name, s, args, kwargs, span)

    return fn


def _str_replace(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> str:
    arity("replace", args, kwargs, span, 2, 3, ("count",))
    old, new = args[0], args[1]
    if type(old) is not str or type(new) is not str:
        raise ScriptError(f"replace() arguments must be str, not {type_name(old if type(old) is not str else new)}",
                          span)
    count = args[2] if len(args) > 2 else kwargs.get("count", -1)
    if type(count) not in (int, bool):
        raise ScriptError(f"'{type_name(count)}' object cannot be interpreted as an integer", span)
    hits = len(s) + 1 if old == "" else s.count(old)
    if count >= 0:
        hits = min(hits, count)
    host.meter.check_size(len(s) + hits * (len(new) - len(old)), span, "str")
    return s.replace(old, new, count)


def _str_join(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> str:
    arity("join", args, kwargs, span, 1, 1)
    items = materialize(host, args[0], span)
    for i, x in enumerate(items):
        if type(x) is not str:
            raise ScriptError(f"sequence item {i}: expected str instance, {type_name(x)} found", span)
    host.meter.check_size(sum(map(len, items)) + len(s) * max(len(items) - 1, 0), span, "str")
    return s.join(items)


def _str_format(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> str:
    return str_format(s, args, kwargs, host.meter, span, lambda v, k: host.getitem(v, k, span))


def _str_split(name: str) -> MethodFn:
    def fn(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        host.meter.charge(len(s) // 16, span)
        out = _call_py(name, s, args, kwargs, span)
        host.meter.check_size(len(out), span, "list")
        return out

    return fn


_STR_PLAIN = (
    "lower", "upper", "strip", "lstrip", "rstrip", "title", "capitalize", "casefold", "swapcase",
    "startswith", "endswith", "find", "rfind", "index", "rindex", "count",
    "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric", "isdecimal", "istitle",
    "partition", "rpartition", "removeprefix", "removesuffix",
)

STR_METHODS: dict[str, MethodFn] = {
    **{n: _str_plain(n) for n in _STR_PLAIN},
    **{n: _str_split(n) for n in ("split", "rsplit", "splitlines")},
    **{n: _str_padded(n) for n in ("ljust", "rjust", "center", "zfill")},
    "replace": _str_replace,
    "join": _str_join,
    "format": _str_format,
}


# ---------------------------------------------------------------------------------------------
# list and tuple


def _index_of(host: Host, seq: Any, x: Any, span: Span, start: int = 0, end: int | None = None) -> int:
    n = len(seq)
    lo, hi, _ = slice(start, end).indices(n)
    deep = type(x) in CONTAINER_TYPES
    host.meter.charge(max(hi - lo, 0), span)
    for i in range(lo, hi):
        if (equal(x, seq[i], host.meter, span) if deep or type(seq[i]) in CONTAINER_TYPES else x == seq[i]):
            return i
    return -1


def _seq_index(host: Host, seq: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> int:
    arity("index", args, kwargs, span, 1, 3)
    for a in args[1:]:
        if type(a) not in (int, bool):
            raise ScriptError("slice indices must be integers", span)
    start = args[1] if len(args) > 1 else 0
    end = args[2] if len(args) > 2 else None
    i = _index_of(host, seq, args[0], span, start, end)
    if i < 0:
        raise ScriptError(f"{short_repr(args[0])} is not in {type_name(seq)}", span)
    return i


def _seq_count(host: Host, seq: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> int:
    arity("count", args, kwargs, span, 1, 1)
    x = args[0]
    host.meter.charge(len(seq), span)
    if type(x) in CONTAINER_TYPES or any(type(y) in CONTAINER_TYPES for y in seq):
        return sum(1 for y in seq if equal(x, y, host.meter, span))
    return seq.count(x)


def _grow(host: Host, lst: list[Any], extra: int, span: Span) -> None:
    if len(lst) + extra > host.meter.max_size:
        host.meter.check_size(len(lst) + extra, span, "list")


def _append(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    arity("append", args, kwargs, span, 1, 1)
    _grow(host, lst, 1, span)
    lst.append(args[0])


def _extend(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    arity("extend", args, kwargs, span, 1, 1)
    items = materialize(host, args[0], span)
    _grow(host, lst, len(items), span)
    host.meter.check_size(len(items), span, "list")
    lst.extend(items)


def _insert(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    arity("insert", args, kwargs, span, 2, 2)
    if type(args[0]) not in (int, bool):
        raise ScriptError(f"'{type_name(args[0])}' object cannot be interpreted as an integer", span)
    _grow(host, lst, 1, span)
    host.meter.charge(len(lst) // 64, span)
    lst.insert(args[0], args[1])


def _pop(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    arity("pop", args, kwargs, span, 0, 1)
    if args and type(args[0]) not in (int, bool):
        raise ScriptError(f"'{type_name(args[0])}' object cannot be interpreted as an integer", span)
    if not lst:
        raise ScriptError("pop from empty list", span)
    try:
        return lst.pop(*args)
    except IndexError:
        raise ScriptError("pop index out of range", span) from None


def _remove(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    arity("remove", args, kwargs, span, 1, 1)
    i = _index_of(host, lst, args[0], span)
    if i < 0:
        raise ScriptError("list.remove(x): x not in list", span)
    del lst[i]


def _reverse(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    arity("reverse", args, kwargs, span, 0, 0)
    host.meter.charge(len(lst) // 64, span)
    lst.reverse()


def _sort(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    arity("sort", args, kwargs, span, 0, 0, ("key", "reverse"))
    lst[:] = sort_values(host, list(lst), kwargs.get("key"), kwargs.get("reverse", False), span)


def _copy(host: Host, c: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    arity("copy", args, kwargs, span, 0, 0)
    host.meter.check_size(len(c), span, type_name(c))
    return c.copy()


def _clear(host: Host, c: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    arity("clear", args, kwargs, span, 0, 0)
    c.clear()


LIST_METHODS: dict[str, MethodFn] = {
    "append": _append, "extend": _extend, "insert": _insert, "pop": _pop, "remove": _remove,
    "index": _seq_index, "count": _seq_count, "reverse": _reverse, "sort": _sort, "copy": _copy,
    "clear": _clear,
}

TUPLE_METHODS: dict[str, MethodFn] = {"index": _seq_index, "count": _seq_count}


# ---------------------------------------------------------------------------------------------
# dict


def _get(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    arity("get", args, kwargs, span, 1, 2)
    return d.get(check_key(args[0], span), args[1] if len(args) > 1 else None)


def _keys(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    arity("keys", args, kwargs, span, 0, 0)
    host.meter.check_size(len(d), span, "list")
    return list(d)


def _values(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    arity("values", args, kwargs, span, 0, 0)
    host.meter.check_size(len(d), span, "list")
    return list(d.values())


def _items(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    arity("items", args, kwargs, span, 0, 0)
    host.meter.check_size(len(d), span, "list")
    return list(d.items())


def _dict_pop(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    arity("pop", args, kwargs, span, 1, 2)
    k = check_key(args[0], span)
    if k in d:
        return d.pop(k)
    if len(args) > 1:
        return args[1]
    raise ScriptError(f"KeyError: {k!r}", span)


def _update(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    if len(args) > 1:
        raise ScriptError(f"update expected at most 1 argument, got {len(args)}", span)
    if args:
        dict_from(host, args[0], d, span)
    host.meter.check_size(len(d) + len(kwargs), span, "dict")
    d.update(kwargs)


def _setdefault(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    arity("setdefault", args, kwargs, span, 1, 2)
    k = check_key(args[0], span)
    if k not in d and len(d) >= host.meter.max_size:
        host.meter.check_size(len(d) + 1, span, "dict")
    return d.setdefault(k, args[1] if len(args) > 1 else None)


DICT_METHODS: dict[str, MethodFn] = {
    "get": _get, "keys": _keys, "values": _values, "items": _items, "pop": _dict_pop, "update": _update,
    "setdefault": _setdefault, "copy": _copy, "clear": _clear,
}

METHODS: dict[type, dict[str, MethodFn]] = {
    str: STR_METHODS, list: LIST_METHODS, tuple: TUPLE_METHODS, dict: DICT_METHODS,
}


def lookup(receiver: Any, name: str, span: Span) -> MethodFn:
    """The method ``name`` of a (non-element) script value, or the error saying why not."""
    table = METHODS.get(type(receiver))
    fn = table.get(name) if table is not None else None
    if fn is not None:
        return fn
    tn = type_name(receiver)
    py_type = type(receiver)
    if py_type in METHODS or py_type in (int, float, bool, type(None), range):
        if hasattr(py_type, name):
            allowed = ", ".join(sorted(table)) if table else "none"
            raise SandboxViolation(
                f"'{tn}.{name}' is not available in Tapir scripts", span,
                hint=f"{tn} methods scripts may use: {allowed}",
            )
    raise ScriptError(f"'{tn}' object has no attribute '{name}'", span)
