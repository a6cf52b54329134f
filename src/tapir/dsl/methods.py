"""Methods a script may call on its values, by type: an explicit allow-list of registry entries.

Each method is ``fn(host, receiver, args, kwargs, span)``, registered in the ``STR``, ``LIST``,
``TUPLE`` or ``DICT`` namespace with its signature (the registry checks the argument count and
keywords before calling it). A name that is not registered is refused: a method that exists on
the Python type becomes a ``SandboxViolation`` (``"".encode``; ``[].__class__`` never gets this
far: underscore names are refused earlier), anything else a ``ScriptError`` like Python's
``AttributeError``. Methods whose result can grow check the size budget *before* allocating
(``str.replace`` with an empty pattern, ``ljust(10**9)``...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.core.errors import SandboxViolation, ScriptError, Span
from tapir.dsl.builtins import Host, dict_from, materialize, sort_values
from tapir.dsl.registry import REGISTRY, VALUE_NAMESPACES, Entry, Namespace
from tapir.dsl.safeops import (
    CONTAINER_TYPES,
    check_key,
    equal,
    scan,
    short_repr,
    str_format,
)
from tapir.dsl.values import for_python, script_message, type_name

MethodFn = Callable[[Host, Any, list[Any], dict[str, Any], Span], Any]


def _call_py(name: str, s: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    """Call Python's own method ``name`` of the receiver's type (name from our allow-list)."""
    try:
        return getattr(type(s), name)(s, *[for_python(a) for a in args],
                                       **{k: for_python(v) for k, v in kwargs.items()})
    except (TypeError, ValueError, OverflowError, IndexError) as exc:
        raise ScriptError(script_message(str(exc)), span) from None


# ---------------------------------------------------------------------------------------------
# str


def _str_plain(name: str) -> MethodFn:
    """A method whose result is at most a small multiple of the receiver (case mapping can
    turn one character into three), so checking the result is enough."""

    def fn(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        host.meter.charge(len(s) // 64, span)
        if args:
            a = args[0]
            if type(a) is str and name in _CHAR_SET_METHODS:
                # Python looks each character up in the characters given (len(s) * len(a));
                # a set of many characters is stripped here, in one pass
                host.meter.charge(len(a) // 64, span)
                distinct = "".join(sorted(set(a)))
                if len(distinct) > _MAX_STRIP_CHARS:
                    host.meter.charge(len(s) // 16, span)
                    return _strip_set(name, s, set(distinct))
                args = [distinct, *args[1:]]
            elif type(a) is str:
                host.meter.charge(len(a) // 64, span)
            elif type(a) is tuple:  # startswith/endswith try each affix
                host.meter.charge(len(a) + sum(len(x) for x in a if type(x) is str) // 64, span)
        out = _call_py(name, s, args, kwargs, span)
        if type(out) is str:
            host.meter.check_size(len(out), span, "str")
        elif type(out) is list:
            host.meter.check_size(len(out), span, "list")
        return out

    return fn


_CHAR_SET_METHODS = frozenset(("strip", "lstrip", "rstrip"))
#: More distinct characters to strip than this are stripped by ``_strip_set``.
_MAX_STRIP_CHARS = 64


def _strip_set(name: str, s: str, chars: set[str]) -> str:
    """``s.strip(chars)`` (or lstrip/rstrip) with the characters in a set: one look-up each."""
    i, j = 0, len(s)
    if name != "rstrip":
        while i < j and s[i] in chars:
            i += 1
    if name != "lstrip":
        while j > i and s[j - 1] in chars:
            j -= 1
    return s[i:j]


def _str_padded(name: str) -> MethodFn:
    def fn(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        if args and type(args[0]) in (int, bool):
            host.meter.check_size(max(int(args[0]), len(s)), span, "str")
        return _call_py(name, s, args, kwargs, span)

    return fn


def _str_replace(host: Host, s: str, args: list[Any], kwargs: dict[str, Any], span: Span) -> str:
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
        host.meter.check_size(len(out), span, "list", 8 + _STR_BYTES)  # a new string per item
        return out

    return fn


#: Bytes of a new short string (header and a few characters).
_STR_BYTES = 56


def _define(namespace: Namespace, signature: str, doc: str, impl: MethodFn) -> None:
    REGISTRY.add(Entry.define(signature, namespace, doc, impl))


_CASE = {
    "lower": "lower case", "upper": "upper case", "title": "title case (each word capitalised)",
    "capitalize": "its first character capitalised", "casefold": "case-folded, for caseless comparison",
    "swapcase": "the case of each letter swapped",
}
for _name, _what in _CASE.items():
    _define(Namespace.STR, f"{_name}() -> str", f"The string in {_what}." if _name in ("lower", "upper", "title")
            else f"The string with {_what}.", _str_plain(_name))
for _name, _side in (("strip", "both ends"), ("lstrip", "the start"), ("rstrip", "the end")):
    _define(Namespace.STR, f"{_name}(chars: str | None = None, /) -> str",
            f"The string without blanks (or the given characters) at {_side}.", _str_plain(_name))
for _name, _where in (("startswith", "starts"), ("endswith", "ends")):
    _define(Namespace.STR, f"{_name}(affix: str | tuple, start: int | None = None, end: int | None = None, /) -> bool",
            f"True when the string {_where} with the text (or one of a tuple of texts).", _str_plain(_name))
for _name, _doc in (("find", "The lowest index of the text in the string, or -1."),
                    ("rfind", "The highest index of the text in the string, or -1."),
                    ("index", "The lowest index of the text in the string (an error if absent)."),
                    ("rindex", "The highest index of the text in the string (an error if absent)."),
                    ("count", "How many times the text occurs in the string, without overlaps.")):
    _define(Namespace.STR, f"{_name}(sub: str, start: int | None = None, end: int | None = None, /) -> int", _doc,
            _str_plain(_name))
for _name, _what in (("isdigit", "digits"), ("isalpha", "letters"), ("isalnum", "letters or digits"),
                     ("isspace", "blanks"), ("isnumeric", "numeric characters"), ("isdecimal", "decimal digits")):
    _define(Namespace.STR, f"{_name}() -> bool", f"True when the string is not empty and all {_what}.",
            _str_plain(_name))
for _name, _doc in (("islower", "True when every cased character is lower case (and there is one)."),
                    ("isupper", "True when every cased character is upper case (and there is one)."),
                    ("istitle", "True when the string is title case.")):
    _define(Namespace.STR, f"{_name}() -> bool", _doc, _str_plain(_name))
for _name, _where in (("partition", "first"), ("rpartition", "last")):
    _define(Namespace.STR, f"{_name}(sep: str, /) -> tuple",
            f"(before, sep, after) around the {_where} occurrence of sep.", _str_plain(_name))
for _name, _where in (("removeprefix", "prefix"), ("removesuffix", "suffix")):
    _define(Namespace.STR, f"{_name}({_where}: str, /) -> str", f"The string without the {_where}, if it has it.",
            _str_plain(_name))
for _name, _doc in (("split", "The words of the string, split at sep (at blanks without), at most maxsplit times."),
                    ("rsplit", "Like split, counting maxsplit from the end.")):
    _define(Namespace.STR, f"{_name}(sep: str | None = None, maxsplit: int = -1) -> list", _doc, _str_split(_name))
_define(Namespace.STR, "splitlines(keepends: bool = False) -> list", "The lines of the string.",
        _str_split("splitlines"))
for _name, _doc in (("ljust", "The string padded on the right to width."),
                    ("rjust", "The string padded on the left to width."),
                    ("center", "The string centred in width.")):
    _define(Namespace.STR, f"{_name}(width: int, fillchar: str = ' ', /) -> str", _doc, _str_padded(_name))
_define(Namespace.STR, "zfill(width: int, /) -> str", "The string padded with zeros on the left to width.",
        _str_padded("zfill"))
_define(Namespace.STR, "replace(old: str, new: str, /, count: int = -1) -> str",
        "The string with old replaced by new (at most count times).", _str_replace)
_define(Namespace.STR, "join(items: any, /) -> str", "The items (strings) joined with this string between them.",
        _str_join)
_define(Namespace.STR, "format(*args: any, **kwargs: any) -> str",
        "The string with its {} fields replaced by the arguments.", _str_format)


# ---------------------------------------------------------------------------------------------
# list and tuple


def _index_of(host: Host, seq: Any, x: Any, span: Span, start: int = 0, end: int | None = None) -> int:
    n = len(seq)
    lo, hi, _ = slice(start, end).indices(n)
    m = host.meter
    if type(x) in CONTAINER_TYPES:
        m.charge(max(hi - lo, 0), span)
        for i in range(lo, hi):
            if equal(x, seq[i], m, span):
                return i
        return -1
    # A flat needle: Python's own index (containers never equal it), piece by piece.
    found, offset = scan(seq[lo:hi], x, m, span, _position, lambda i: i >= 0)
    return lo + offset + found if found >= 0 else -1


def _position(piece: Any, x: Any) -> int:
    try:
        return int(piece.index(x))
    except ValueError:
        return -1


def _seq_index(host: Host, seq: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> int:
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
    x = args[0]
    m = host.meter
    if type(x) in CONTAINER_TYPES:
        m.charge(len(seq), span)
        return sum(1 for y in seq if equal(x, y, m, span))
    # A flat needle never equals a container: Python's own count, piece by piece.
    total = 0

    def count(piece: Any, needle: Any) -> int:
        nonlocal total
        total += piece.count(needle)
        return total

    scan(seq, x, m, span, count, lambda _: False)
    return total


def _grow(host: Host, lst: list[Any], extra: int, span: Span) -> None:
    if len(lst) + extra > host.meter.max_size:
        host.meter.check_size(len(lst) + extra, span, "list")


def _append(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    _grow(host, lst, 1, span)
    lst.append(args[0])


def _extend(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    items = materialize(host, args[0], span)
    _grow(host, lst, len(items), span)
    host.meter.check_size(len(items), span, "list")
    lst.extend(items)


def _insert(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    if type(args[0]) not in (int, bool):
        raise ScriptError(f"'{type_name(args[0])}' object cannot be interpreted as an integer", span)
    _grow(host, lst, 1, span)
    host.meter.charge(len(lst) // 64, span)
    lst.insert(args[0], args[1])


def _pop(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    if args and type(args[0]) not in (int, bool):
        raise ScriptError(f"'{type_name(args[0])}' object cannot be interpreted as an integer", span)
    if not lst:
        raise ScriptError("pop from empty list", span)
    if args:  # the items after the index move down
        host.meter.charge(len(lst) // 64, span)
    try:
        return lst.pop(*args)
    except IndexError:
        raise ScriptError("pop index out of range", span) from None


def _remove(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    i = _index_of(host, lst, args[0], span)
    if i < 0:
        raise ScriptError("list.remove(x): x not in list", span)
    del lst[i]


def _reverse(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    host.meter.charge(len(lst) // 64, span)
    lst.reverse()


def _sort(host: Host, lst: list[Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    lst[:] = sort_values(host, list(lst), kwargs.get("key"), kwargs.get("reverse", False), span)


def _copy(host: Host, c: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    host.meter.check_size(len(c), span, type_name(c))
    return c.copy()


def _clear(host: Host, c: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    host.meter.charge(len(c) // 64, span)
    c.clear()


for _ns in (Namespace.LIST, Namespace.TUPLE):
    _define(_ns, "index(item: any, start: int = 0, end: int | None = None, /) -> int",
            "The position of the first item equal to item (an error if none).", _seq_index)
    _define(_ns, "count(item: any, /) -> int", "How many items equal item.", _seq_count)
_define(Namespace.LIST, "append(item: any, /) -> None", "Add the item at the end.", _append)
_define(Namespace.LIST, "extend(items: any, /) -> None", "Add the items at the end.", _extend)
_define(Namespace.LIST, "insert(index: int, item: any, /) -> None", "Insert the item before position index.",
        _insert)
_define(Namespace.LIST, "pop(index: int = -1, /) -> any", "Remove and return the item at index (the last).", _pop)
_define(Namespace.LIST, "remove(item: any, /) -> None", "Remove the first item equal to item.", _remove)
_define(Namespace.LIST, "reverse() -> None", "Reverse the list in place.", _reverse)
_define(Namespace.LIST, "sort(*, key: function = None, reverse: bool = False) -> None",
        "Sort the list in place (key: what to compare; reverse: largest first).", _sort)
_define(Namespace.LIST, "copy() -> list", "A shallow copy of the list.", _copy)
_define(Namespace.LIST, "clear() -> None", "Remove every item.", _clear)


# ---------------------------------------------------------------------------------------------
# dict


def _get(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    return d.get(check_key(args[0], span), args[1] if len(args) > 1 else None)


def _keys(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    host.meter.check_size(len(d), span, "list")
    return list(d)


def _values(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    host.meter.check_size(len(d), span, "list")
    return list(d.values())


def _items(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> list[Any]:
    host.meter.check_size(len(d), span, "list", 8 + 72)  # a new (key, value) tuple per item
    return list(d.items())


def _dict_pop(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    k = check_key(args[0], span)
    if k in d:
        return d.pop(k)
    if len(args) > 1:
        return args[1]
    raise ScriptError(f"KeyError: {short_repr(k)}", span)


def _update(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
    if len(args) > 1:
        raise ScriptError(f"update expected at most 1 argument, got {len(args)}", span)
    if args:
        dict_from(host, args[0], d, span)
    host.meter.check_size(len(d) + len(kwargs), span, "dict")
    d.update(kwargs)


def _setdefault(host: Host, d: dict[Any, Any], args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    k = check_key(args[0], span)
    if k not in d and len(d) >= host.meter.max_size:
        host.meter.check_size(len(d) + 1, span, "dict")
    return d.setdefault(k, args[1] if len(args) > 1 else None)


_define(Namespace.DICT, "get(key: any, default: any = None, /) -> any",
        "The value for key, or default when the key is absent.", _get)
_define(Namespace.DICT, "keys() -> list", "The keys, in insertion order.", _keys)
_define(Namespace.DICT, "values() -> list", "The values, in insertion order.", _values)
_define(Namespace.DICT, "items() -> list", "(key, value) pairs, in insertion order.", _items)
_define(Namespace.DICT, "pop(key: any, default: any = None, /) -> any",
        "Remove the key and return its value (default, or an error, when absent).", _dict_pop)
_define(Namespace.DICT, "update(other: any = None, /, **items: any) -> None",
        "Add the items of a dict or of (key, value) pairs, and keyword items.", _update)
_define(Namespace.DICT, "setdefault(key: any, default: any = None, /) -> any",
        "The value for key; when absent, set it to default first.", _setdefault)
_define(Namespace.DICT, "copy() -> dict", "A shallow copy of the dict.", _copy)
_define(Namespace.DICT, "clear() -> None", "Remove every item.", _clear)


def lookup(receiver: Any, name: str, span: Span) -> MethodFn:
    """The method ``name`` of a (non-element) script value (with its argument checks), or the
    error saying why not."""
    py_type = type(receiver)
    namespace = VALUE_NAMESPACES.get(py_type)
    fn = REGISTRY.checked(namespace, name) if namespace is not None else None
    if fn is not None:
        return fn
    tn = type_name(receiver)
    if namespace is not None or py_type in (int, float, bool, type(None), range):
        if hasattr(py_type, name):
            table = REGISTRY.names(namespace) if namespace is not None else []
            allowed = ", ".join(sorted(table)) if table else "none"
            raise SandboxViolation(
                f"'{tn}.{name}' is not available in Tapir scripts", span,
                hint=f"{tn} methods scripts may use: {allowed}",
            )
    raise ScriptError(f"'{tn}' object has no attribute '{name}'", span)
