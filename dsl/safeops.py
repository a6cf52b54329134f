"""Operators, comparison, printing and formatting on script values, with every cost bounded.

Python's own operators are used where their cost is bounded by the operands (numbers, flat
strings); everything whose cost grows with the *shape* of a value is re-implemented here so it
can be charged to the step budget and stopped: equality and ordering of nested containers (a
list built as ``x = [x, x]`` thirty times compares in 2**30 steps in C, uninterruptibly), repr
and str of containers, ``str % args``, ``str.format`` and f-string format specs (width ``10**9``
allocates a gigabyte), dict keys that are nested tuples (hashing walks the whole tree).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any

from tapir.dsl.budget import Meter, budget_exceeded
from tapir.dsl.errors import SandboxViolation, ScriptError, Span
from tapir.dsl.values import ElementHandle, type_name

NUMBER_TYPES = frozenset({int, float, bool})
SCALAR_TYPES = frozenset({int, float, bool, str, type(None)})
CONTAINER_TYPES = frozenset({list, tuple, dict})
HASHABLE_SCALARS = frozenset({int, float, bool, str, type(None), ElementHandle, range})
#: Deepest nesting that comparison and printing follow (Python stops near its recursion limit).
MAX_NEST = 500
#: Largest tuple (counted as a tree) usable as a dict key; hashing it walks every node.
MAX_KEY_NODES = 10_000
_CHARGE_CHUNK = 1024


# ---------------------------------------------------------------------------------------------
# Arithmetic


def _unsupported(op: str, a: Any, b: Any, span: Span) -> ScriptError:
    return ScriptError(f"unsupported operand type(s) for {op}: '{type_name(a)}' and '{type_name(b)}'", span)


def _concat_error(a: Any, b: Any, span: Span) -> ScriptError:
    ta = type_name(a)
    return ScriptError(f'can only concatenate {ta} (not "{type_name(b)}") to {ta}', span)


def _int_result(r: Any, m: Meter, span: Span) -> Any:
    if type(r) is int and r.bit_length() > m.max_int_bits:
        m.check_int(r.bit_length(), span)
    return r


def add(a: Any, b: Any, m: Meter, span: Span) -> Any:
    ta, tb = type(a), type(b)
    if ta in NUMBER_TYPES and tb in NUMBER_TYPES:
        return _int_result(a + b, m, span)
    if ta is tb and ta in (str, list, tuple):
        m.check_size(len(a) + len(b), span, ta.__name__)
        return a + b
    if ta in (str, list, tuple):
        raise _concat_error(a, b, span)
    raise _unsupported("+", a, b, span)


def sub(a: Any, b: Any, m: Meter, span: Span) -> Any:
    if type(a) in NUMBER_TYPES and type(b) in NUMBER_TYPES:
        return _int_result(a - b, m, span)
    raise _unsupported("-", a, b, span)


def _repeat(seq: Any, n: Any, m: Meter, span: Span) -> Any:
    count = max(int(n), 0)
    m.check_size(len(seq) * count, span, type(seq).__name__)
    return seq * count


def mul(a: Any, b: Any, m: Meter, span: Span) -> Any:
    ta, tb = type(a), type(b)
    if ta in NUMBER_TYPES and tb in NUMBER_TYPES:
        if ta is not float and tb is not float:
            m.check_int(int(a).bit_length() + int(b).bit_length() - 1, span)
        return a * b
    if ta in (str, list, tuple) and tb in (int, bool):
        return _repeat(a, b, m, span)
    if tb in (str, list, tuple) and ta in (int, bool):
        return _repeat(b, a, m, span)
    if ta in (str, list, tuple) or tb in (str, list, tuple):
        seq = a if ta in (str, list, tuple) else b
        other = b if seq is a else a
        raise ScriptError(f"can't multiply sequence by non-int of type '{type_name(other)}'", span)
    raise _unsupported("*", a, b, span)


def truediv(a: Any, b: Any, m: Meter, span: Span) -> Any:
    if type(a) in NUMBER_TYPES and type(b) in NUMBER_TYPES:
        if b == 0:
            raise ScriptError("division by zero", span)
        try:
            return a / b
        except OverflowError:
            raise ScriptError("integer division result too large for a float", span) from None
    raise _unsupported("/", a, b, span)


def floordiv(a: Any, b: Any, m: Meter, span: Span) -> Any:
    if type(a) in NUMBER_TYPES and type(b) in NUMBER_TYPES:
        if b == 0:
            raise ScriptError("integer division or modulo by zero", span)
        return a // b
    raise _unsupported("//", a, b, span)


def mod(a: Any, b: Any, m: Meter, span: Span) -> Any:
    if type(a) is str:
        return percent_format(a, b, m, span)
    if type(a) in NUMBER_TYPES and type(b) in NUMBER_TYPES:
        if b == 0:
            raise ScriptError("integer division or modulo by zero", span)
        return a % b
    raise _unsupported("%", a, b, span)


def power(a: Any, b: Any, m: Meter, span: Span) -> Any:
    ta, tb = type(a), type(b)
    if ta not in NUMBER_TYPES or tb not in NUMBER_TYPES:
        raise _unsupported("** or pow()", a, b, span)
    if ta is not float and tb is not float:
        if b >= 0 and a not in (0, 1, -1):
            # The exact size is bit_length(a) * b give or take b bits; refuse before computing.
            m.check_int((abs(int(a)).bit_length() - 1) * int(b) + 1, span)
    if a == 0 and b < 0:
        raise ScriptError("0.0 cannot be raised to a negative power", span)
    try:
        r = a**b
    except OverflowError:
        raise ScriptError("numerical result out of range", span) from None
    if type(r) is complex:
        raise ScriptError("a negative number cannot be raised to a fractional power", span)
    return r


BINOPS: dict[str, Callable[[Any, Any, Meter, Span], Any]] = {
    "+": add, "-": sub, "*": mul, "/": truediv, "//": floordiv, "%": mod, "**": power,
}


def unary(op: str, v: Any, span: Span) -> Any:
    if op == "not":
        return not v
    if type(v) not in NUMBER_TYPES:
        raise ScriptError(f"bad operand type for unary {op}: '{type_name(v)}'", span)
    return -v if op == "-" else +v


# ---------------------------------------------------------------------------------------------
# Comparison


def _pairs(x: Any, y: Any) -> list[tuple[Any, Any]] | None:
    """Child pairs to compare for two containers of the same type, or None when they differ."""
    if len(x) != len(y):
        return None
    if type(x) is dict:
        missing = _Missing()
        return [(v, y.get(k, missing)) for k, v in x.items()]
    return list(zip(x, y, strict=True))


class _Missing:
    """Never equal to anything (a key absent from the other dict)."""

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def equal(a: Any, b: Any, m: Meter, span: Span) -> bool:
    """``a == b`` with Python's result, charged per compared item, without recursion."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta not in CONTAINER_TYPES and tb not in CONTAINER_TYPES:
        return bool(a == b)
    if ta is not tb:
        return False
    top = _pairs(a, b)
    if top is None:
        return False
    stack = [iter(top)]
    charged = len(top)
    while stack:
        for x, y in stack[-1]:
            if x is y:
                continue
            tx, ty = type(x), type(y)
            if tx in CONTAINER_TYPES or ty in CONTAINER_TYPES:
                if tx is not ty:
                    return False
                pairs = _pairs(x, y)
                if pairs is None:
                    return False
                if len(stack) >= MAX_NEST:
                    raise ScriptError(f"values nested more than {MAX_NEST} levels deep cannot be compared", span)
                charged += len(pairs)
                if charged > _CHARGE_CHUNK:
                    m.charge(charged, span)
                    charged = 0
                stack.append(iter(pairs))
                break
            if x != y:
                return False
        else:
            stack.pop()
    m.charge(charged, span)
    return True


_ORDER = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def order(op: str, a: Any, b: Any, m: Meter, span: Span, depth: int = 0) -> bool:
    """``a < b`` and friends: numbers with numbers, str with str, lists and tuples element-wise."""
    ta, tb = type(a), type(b)
    if (ta in NUMBER_TYPES and tb in NUMBER_TYPES) or (ta is str and tb is str):
        return bool(_ORDER[op](a, b))
    if ta is tb and ta in (list, tuple):
        if depth >= MAX_NEST:
            raise ScriptError(f"values nested more than {MAX_NEST} levels deep cannot be compared", span)
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if not equal(x, y, m, span):
                m.charge(i, span)
                return order(op, x, y, m, span, depth + 1)
        m.charge(min(len(a), len(b)), span)
        return bool(_ORDER[op](len(a), len(b)))
    raise ScriptError(f"'{op}' not supported between instances of '{type_name(a)}' and '{type_name(b)}'", span)


def check_key(k: Any, span: Span) -> Any:
    """Refuse dict keys Python could not hash, or whose hash would walk a huge tuple tree."""
    tk = type(k)
    if tk in HASHABLE_SCALARS:
        return k
    if tk is tuple:
        todo, nodes = [k], 0
        while todo:
            for item in todo.pop():
                nodes += 1
                ti = type(item)
                if ti is tuple:
                    todo.append(item)
                elif ti not in HASHABLE_SCALARS:
                    raise ScriptError(f"unhashable type: '{type_name(item)}'", span)
            if nodes > MAX_KEY_NODES:
                raise ScriptError(f"a dict key may hold at most {MAX_KEY_NODES:,} values", span)
        return k
    raise ScriptError(f"unhashable type: '{type_name(k)}'", span)


def contains(container: Any, item: Any, m: Meter, span: Span) -> bool:
    """``item in container``."""
    tc = type(container)
    if tc is str:
        if type(item) is not str:
            raise ScriptError(f"'in <string>' requires string as left operand, not {type_name(item)}", span)
        m.charge(len(container) // 64, span)
        return item in container
    if tc is dict:
        return check_key(item, span) in container
    if tc in (list, tuple):
        if type(item) in CONTAINER_TYPES:
            return any(equal(item, x, m, span) for x in container)
        # A flat needle compares against each element in O(1): containers never equal it.
        m.charge(len(container), span)
        return item in container
    if tc is range:
        if type(item) is not int:
            m.charge(len(container), span)
        return item in container
    raise ScriptError(f"argument of type '{type_name(container)}' is not iterable", span)


def compare(op: str, a: Any, b: Any, m: Meter, span: Span) -> bool:
    if op == "==":
        return equal(a, b, m, span)
    if op == "!=":
        return not equal(a, b, m, span)
    if op == "in":
        return contains(b, a, m, span)
    if op == "not in":
        return not contains(b, a, m, span)
    if op == "is":
        return a is b
    if op == "is not":
        return a is not b
    return order(op, a, b, m, span)


def sort_key_safe(items: list[Any]) -> bool:
    """True when Python may sort ``items`` directly: flat values, or tuples of flat values."""
    for x in items:
        tx = type(x)
        if tx is tuple:
            if any(type(y) in CONTAINER_TYPES for y in x):
                return False
        elif tx in CONTAINER_TYPES:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# repr and str


class _Overflow(Exception):
    pass


class _Writer:
    __slots__ = ("parts", "length", "limit")

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.limit = limit

    def add(self, s: str) -> None:
        self.length += len(s)
        if self.length > self.limit:
            self.parts.append(s[: max(0, len(s) - (self.length - self.limit))])
            raise _Overflow
        self.parts.append(s)


def _scalar_repr(v: Any, span: Span | None) -> str:
    try:
        return repr(v)
    except ValueError as exc:  # int too large for decimal conversion
        raise ScriptError(str(exc), span) from None


def _write(w: _Writer, v: Any, path: list[int], span: Span | None) -> None:
    tv = type(v)
    if tv is list or tv is tuple or tv is dict:
        if id(v) in path:
            w.add("[...]" if tv is list else "{...}" if tv is dict else "(...)")
            return
        if len(path) >= MAX_NEST:
            raise ScriptError(f"a value nested more than {MAX_NEST} levels deep cannot be printed", span)
        path.append(id(v))
        if tv is dict:
            w.add("{")
            for i, (k, x) in enumerate(v.items()):
                if i:
                    w.add(", ")
                _write(w, k, path, span)
                w.add(": ")
                _write(w, x, path, span)
            w.add("}")
        else:
            w.add("[" if tv is list else "(")
            for i, x in enumerate(v):
                if i:
                    w.add(", ")
                _write(w, x, path, span)
            if tv is tuple and len(v) == 1:
                w.add(",")
            w.add("]" if tv is list else ")")
        path.pop()
    else:
        w.add(_scalar_repr(v, span))


def to_repr(v: Any, m: Meter | None, span: Span | None, *, limit: int | None = None) -> str:
    """``repr(v)`` for script values; raises BudgetExceeded past the size budget."""
    tv = type(v)
    if tv in SCALAR_TYPES:
        s = _scalar_repr(v, span)
        if m is not None and len(s) >= 64:
            m.check_size(len(s), span, "str")
        return s
    cap = limit if limit is not None else (m.max_size if m is not None else 1_000_000)
    w = _Writer(cap)
    try:
        _write(w, v, [], span)
    except _Overflow:
        if m is None:
            return "".join(w.parts)
        raise budget_exceeded("size", cap, "the text of this value would be too long", span) from None
    if m is not None:
        m.check_size(w.length, span, "str")
    return "".join(w.parts)


def to_str(v: Any, m: Meter | None, span: Span | None) -> str:
    """``str(v)``: strings as they are, everything else as its repr."""
    if type(v) is str:
        return v
    if type(v) in (int, float, bool, type(None)):
        return _scalar_repr(v, span)
    return to_repr(v, m, span)


def short_repr(v: Any, width: int = 80) -> str:
    """A repr cut to ``width`` characters (for variable summaries; never raises for size)."""
    try:
        text = to_repr(v, None, None, limit=width + 1)
    except ScriptError as exc:
        return f"<{exc.message}>"
    return text if len(text) <= width else text[: width - 3] + "..."


# ---------------------------------------------------------------------------------------------
# Formatting: format specs, f-strings, str.format, str % args

_SPEC = re.compile(
    r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?#?0?(?P<width>\d+)?[,_]?"
    r"(?:\.(?P<precision>\d+))?(?P<type>[bcdeEfFgGnosxX%])?",
    re.DOTALL,
)


def _check_width(n: str | None, m: Meter, span: Span) -> None:
    if n is not None and (len(n) > 9 or int(n) > m.max_size):
        raise budget_exceeded("size", m.max_size, f"a format width or precision of {n} is too large", span)


def format_value(v: Any, spec: str, conversion: str | None, m: Meter, span: Span) -> str:
    """``f"{v!conversion:spec}"`` / ``format(v, spec)`` on script values."""
    if conversion == "r":
        v = to_repr(v, m, span)
    elif conversion == "s":
        v = to_str(v, m, span)
    elif conversion == "a":
        v = to_repr(v, m, span).encode("ascii", "backslashreplace").decode("ascii")
    elif conversion is not None:
        raise ScriptError(f"unknown conversion specifier {conversion}", span)
    if not spec:
        return to_str(v, m, span)
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise ScriptError(f"invalid format specifier '{spec}' for object of type '{type_name(v)}'", span)
    _check_width(match.group("width"), m, span)
    _check_width(match.group("precision"), m, span)
    if type(v) not in (int, float, bool, str):
        raise ScriptError(f"unsupported format string passed to {type_name(v)}.__format__", span)
    try:
        out = format(v, spec)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ScriptError(str(exc), span) from None
    m.check_size(len(out), span, "str")
    return out


_FORMATTER = string.Formatter()
_FIELD = re.compile(r"(?P<head>[^.\[]*)(?P<rest>.*)", re.DOTALL)
_INDEX = re.compile(r"\[(?P<key>[^\]]*)\]")


def str_format(
    fmt: str, args: list[Any], kwargs: dict[str, Any], m: Meter, span: Span,
    getitem: Callable[[Any, Any], Any], depth: int = 0,
) -> str:
    """``fmt.format(*args, **kwargs)`` without attribute access: ``{0}``, ``{name}``, ``{}``,
    ``{0[key]}``, conversions and format specs (one nested level, like Python)."""
    if depth > 1:
        raise ScriptError("Max string recursion exceeded", span)
    try:
        parsed = list(_FORMATTER.parse(fmt))
    except ValueError as exc:
        raise ScriptError(str(exc), span) from None
    out: list[str] = []
    auto = 0
    manual = False
    for literal, field, spec, conversion in parsed:
        out.append(literal)
        if field is None:
            continue
        head, rest = _FIELD.fullmatch(field).group("head", "rest")  # type: ignore[union-attr]
        if "." in rest or "." in head:
            raise SandboxViolation(
                f"format field '{{{field}}}' uses attribute access, which scripts may not use", span,
                hint="name an argument ('{0}', '{name}') or index it ('{0[key]}')",
            )
        if head == "":
            if manual:
                raise ScriptError("cannot switch from manual field specification to automatic field numbering", span)
            value = _format_arg(auto, args, kwargs, span)
            auto += 1
        elif head.isdigit():
            if auto:
                raise ScriptError("cannot switch from automatic field numbering to manual field specification", span)
            manual = True
            value = _format_arg(int(head), args, kwargs, span)
        else:
            value = _format_arg(head, args, kwargs, span)
        pos = 0
        while pos < len(rest):
            idx = _INDEX.match(rest, pos)
            if idx is None:
                raise ScriptError(f"invalid format field '{{{field}}}'", span)
            key = idx.group("key")
            value = getitem(value, int(key) if key.isdigit() else key)
            pos = idx.end()
        spec = spec or ""
        if "{" in spec:
            spec = str_format(spec, args, kwargs, m, span, getitem, depth + 1)
        out.append(format_value(value, spec, conversion, m, span))
        m.check_size(sum(len(s) for s in out), span, "str")
    return "".join(out)


def _format_arg(key: int | str, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    if isinstance(key, int):
        if key >= len(args):
            raise ScriptError(f"Replacement index {key} out of range for positional args tuple", span)
        return args[key]
    if key not in kwargs:
        raise ScriptError(f"KeyError: {key!r}", span)
    return kwargs[key]


_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?[hlL]?(?P<conv>.?)",
    re.DOTALL,
)
_NUMERIC_CONVERSIONS = frozenset("diouxXeEfFgG")


def percent_format(fmt: str, args: Any, m: Meter, span: Span) -> str:
    """``fmt % args`` (printf-style), re-implemented so widths and container values stay bounded."""
    mapping = args if type(args) is dict else None
    values = list(args) if type(args) is tuple else [args]
    pos = 0
    out: list[str] = []
    i = 0
    while True:
        j = fmt.find("%", i)
        if j < 0:
            out.append(fmt[i:])
            break
        out.append(fmt[i:j])
        spec = _PERCENT.match(fmt, j)
        assert spec is not None  # the pattern matches any '%'
        conv = spec.group("conv")
        if conv == "":
            raise ScriptError("incomplete format", span)
        i = spec.end()
        if conv == "%" and spec.end() - j == 2:
            out.append("%")
            continue

        def take() -> Any:
            nonlocal pos
            if pos >= len(values):
                raise ScriptError("not enough arguments for format string", span)
            pos += 1
            return values[pos - 1]

        width, prec = spec.group("width"), spec.group("prec")
        if width == "*":
            width = str(_int_arg(take(), span))
        if prec == "*":
            prec = str(max(_int_arg(take(), span), 0))
        if width is not None and width.startswith("-"):
            width = width[1:]
            flags = spec.group("flags") + "-"
        else:
            flags = spec.group("flags")
        _check_width(width, m, span)
        _check_width(prec, m, span)
        if spec.group("key") is not None:
            if mapping is None:
                raise ScriptError("format requires a mapping", span)
            key = spec.group("key")
            if key not in mapping:
                raise ScriptError(f"KeyError: {key!r}", span)
            value = mapping[key]
        else:
            value = take()
        directive = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
        if conv in "sra":
            text = (
                to_str(value, m, span) if conv == "s"
                else to_repr(value, m, span) if conv == "r"
                else to_repr(value, m, span).encode("ascii", "backslashreplace").decode("ascii")
            )
            piece = (directive + "s") % (text,)
        elif conv in _NUMERIC_CONVERSIONS or conv == "c":
            if conv == "c" and not (type(value) is str and len(value) == 1) and type(value) not in (int, bool):
                raise ScriptError("%c requires int or char", span)
            if conv != "c" and type(value) not in NUMBER_TYPES:
                raise ScriptError(f"%{conv} format: a real number is required, not {type_name(value)}", span)
            try:
                piece = (directive + conv) % (value,)
            except (ValueError, TypeError, OverflowError) as exc:
                raise ScriptError(str(exc), span) from None
        else:
            raise ScriptError(f"unsupported format character '{conv}' (0x{ord(conv):x}) at index {j}", span)
        out.append(piece)
        m.check_size(sum(len(s) for s in out), span, "str")
    if mapping is None and pos < len(values):
        raise ScriptError("not all arguments converted during string formatting", span)
    return "".join(out)


def _int_arg(v: Any, span: Span) -> int:
    if type(v) not in (int, bool):
        raise ScriptError("* wants int", span)
    return int(v)
