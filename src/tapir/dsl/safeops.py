"""Operators, comparison, printing and formatting on script values, with every cost bounded.

Python's own operators are used where their cost is bounded by the operands (numbers, flat
strings); everything whose cost grows with the *shape* of a value is re-implemented here so it
can be charged to the step budget and stopped: equality and ordering of nested containers (a
list built as ``x = [x, x]`` thirty times compares in 2**30 steps in C, uninterruptibly), repr
and str of containers, ``str % args``, ``str.format`` and f-string format specs (width ``10**9``
allocates a gigabyte), dict keys that are nested tuples (hashing walks the whole tree).

Nothing here hands a deeply nested value to Python's own hash, comparison or repr, which recurse
in C: nesting is checked (``MAX_NEST``) before a value is hashed, compared or printed. Work that
grows with the size of the operands (long strings compared, big integers multiplied or divided,
text formatted) is charged to the step budget in proportion, so the clock is looked at in time.
"""

from __future__ import annotations

import math
import re
import string
import sys
from collections.abc import Callable
from typing import Any

from tapir.core.errors import SandboxViolation, ScriptError, Span
from tapir.dsl.budget import Meter, budget_exceeded
from tapir.dsl.values import ElementHandle, type_name

NUMBER_TYPES = frozenset({int, float, bool})
SCALAR_TYPES = frozenset({int, float, bool, str, type(None)})
CONTAINER_TYPES = frozenset({list, tuple, dict})
HASHABLE_SCALARS = frozenset({int, float, bool, str, type(None), ElementHandle, range})
#: Deepest nesting that comparison and printing follow (Python stops near its recursion limit).
MAX_NEST = 500
#: Largest tuple (counted as a tree) usable as a dict key; hashing it walks every node.
MAX_KEY_NODES = 10_000
#: Python hashes an integer modulo this prime, so integers at least this large can be chosen to
#: collide (``i * (2**61 - 1)`` all hash to 0) and make each dict insertion a linear search;
#: they cannot be dict keys. Smaller integers hash to themselves.
HASH_MODULUS = sys.hash_info.modulus
_CHARGE_CHUNK = 1024
#: Comparing two equal strings reads both; one step is charged per this many characters.
STR_CHARS_PER_STEP = 256
#: Big-integer arithmetic is charged one step per this many pairs of 30-bit digits.
DIGIT_PAIRS_PER_STEP = 256


# ---------------------------------------------------------------------------------------------
# Arithmetic


def _unsupported(op: str, a: Any, b: Any, span: Span) -> ScriptError:
    return ScriptError(f"unsupported operand type(s) for {op}: '{type_name(a)}' and '{type_name(b)}'", span)


def _concat_error(a: Any, b: Any, span: Span) -> ScriptError:
    ta = type_name(a)
    return ScriptError(f'can only concatenate {ta} (not "{type_name(b)}") to {ta}', span)


def _int_result(r: Any, m: Meter, span: Span) -> Any:
    """``r``; a big integer is charged by its size, or refused over the size budget."""
    if type(r) is int and not -m.int_fast < r < m.int_fast:
        return m.big_int(r, span)
    return r


def charge_digits(a: int, b: int, m: Meter, span: Span, division: bool = False) -> None:
    """Charge multiplying (or dividing) two big integers: Python's long multiplication and
    division take time in proportion to the product of the operands' sizes in 30-bit digits."""
    da, db = abs(a).bit_length() // 30 + 1, abs(b).bit_length() // 30 + 1
    work = max(da - db + 1, 1) * db if division else da * db
    if work >= DIGIT_PAIRS_PER_STEP:
        m.charge(work // DIGIT_PAIRS_PER_STEP, span)


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
            charge_digits(a, b, m, span)
            return _int_result(a * b, m, span)
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
        if type(a) is int and type(b) is int:
            charge_digits(a, b, m, span, division=True)
        try:
            return a / b
        except OverflowError:
            raise ScriptError("integer division result too large for a float", span) from None
    raise _unsupported("/", a, b, span)


def floordiv(a: Any, b: Any, m: Meter, span: Span) -> Any:
    if type(a) in NUMBER_TYPES and type(b) in NUMBER_TYPES:
        if b == 0:
            raise ScriptError("integer division or modulo by zero", span)
        if type(a) is int and type(b) is int:
            charge_digits(a, b, m, span, division=True)
        try:
            return _int_result(a // b, m, span)
        except OverflowError as exc:  # a float quotient of a huge integer
            raise ScriptError(str(exc), span) from None
    raise _unsupported("//", a, b, span)


def mod(a: Any, b: Any, m: Meter, span: Span) -> Any:
    if type(a) is str:
        return percent_format(a, b, m, span)
    if type(a) in NUMBER_TYPES and type(b) in NUMBER_TYPES:
        if b == 0:
            raise ScriptError("integer division or modulo by zero", span)
        if type(a) is int and type(b) is int:
            charge_digits(a, b, m, span, division=True)
        try:
            return _int_result(a % b, m, span)
        except OverflowError as exc:
            raise ScriptError(str(exc), span) from None
    raise _unsupported("%", a, b, span)


def power(a: Any, b: Any, m: Meter, span: Span) -> Any:
    ta, tb = type(a), type(b)
    if ta not in NUMBER_TYPES or tb not in NUMBER_TYPES:
        raise _unsupported("** or pow()", a, b, span)
    if ta is not float and tb is not float:
        if b >= 0 and a not in (0, 1, -1):
            # |a| ** b has about b * log2(|a|) bits: refuse before computing.
            n = int(b)
            bits = n * 64 if n.bit_length() > 60 else math.floor(n * math.log2(abs(int(a)))) + 1
            m.check_int(bits, span)
            digits = bits // 30 + 1
            if digits * digits >= DIGIT_PAIRS_PER_STEP:
                m.charge(digits * digits // DIGIT_PAIRS_PER_STEP, span)
    if a == 0 and b < 0:
        raise ScriptError("0.0 cannot be raised to a negative power", span)
    try:
        r = a**b
    except OverflowError:
        raise ScriptError("numerical result out of range", span) from None
    if type(r) is complex:
        raise ScriptError("a negative number cannot be raised to a fractional power", span)
    return _int_result(r, m, span)  # the estimate above may be one bit short


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
            if tx is str and len(x) >= STR_CHARS_PER_STEP:  # two equal long strings were read
                charged += len(x) // STR_CHARS_PER_STEP
                if charged > _CHARGE_CHUNK:
                    m.charge(charged, span)
                    charged = 0
        else:
            stack.pop()
    m.charge(charged, span)
    return True


_ORDER = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def order(op: str, a: Any, b: Any, m: Meter, span: Span, depth: int = 0) -> bool:
    """``a < b`` and friends: numbers with numbers, str with str, lists and tuples element-wise."""
    ta, tb = type(a), type(b)
    if ta is str and tb is str:
        if len(a) >= STR_CHARS_PER_STEP and len(b) >= STR_CHARS_PER_STEP:  # a long common prefix is read
            m.charge(min(len(a), len(b)) // STR_CHARS_PER_STEP, span)
        return bool(_ORDER[op](a, b))
    if ta in NUMBER_TYPES and tb in NUMBER_TYPES:
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
    """Refuse dict keys Python could not hash, whose hash would walk a huge or deep tuple tree
    (Python hashes a tuple recursively, in C), or that could be made to collide (huge integers).
    Everything that hashes a script value goes through here first."""
    tk = type(k)
    if tk in HASHABLE_SCALARS:
        if tk is int and not -HASH_MODULUS < k < HASH_MODULUS:
            raise _colliding_key(span)
        return k
    if tk is tuple:
        todo, nodes = [(k, 1)], 0
        while todo:
            t, depth = todo.pop()
            if depth > MAX_NEST:
                raise ScriptError(f"a dict key may be nested at most {MAX_NEST} levels deep", span)
            for item in t:
                nodes += 1
                ti = type(item)
                if ti is tuple:
                    todo.append((item, depth + 1))
                elif ti is int:
                    if not -HASH_MODULUS < item < HASH_MODULUS:
                        raise _colliding_key(span)
                elif ti not in HASHABLE_SCALARS:
                    raise ScriptError(f"unhashable type: '{type_name(item)}'", span)
            if nodes > MAX_KEY_NODES:
                raise ScriptError(f"a dict key may hold at most {MAX_KEY_NODES:,} values", span)
        return k
    raise ScriptError(f"unhashable type: '{type_name(k)}'", span)


def _colliding_key(span: Span) -> ScriptError:
    return ScriptError("an integer of 2**61 or more cannot be a dict key: such keys can be chosen to collide",
                       span, hint="use its text as the key: d[str(n)]")


def same_length_strings(items: Any, needle: str) -> int:
    """How many items are strings as long as ``needle`` (those Python compares character by
    character when looking for it); only counted for long needles."""
    n = len(needle)
    if n < STR_CHARS_PER_STEP:
        return 0
    return sum(1 for x in items if type(x) is str and len(x) == n)


#: Items one piece of a scan hands to Python at most (``in``, ``count``, ``index`` of a list).
_SCAN_CHUNK = 4096


def scan(seq: list[Any] | tuple[Any, ...], needle: Any, m: Meter, span: Span,
         op: Callable[[Any, Any], Any], stop: Callable[[Any], bool] = bool) -> Any:
    """Apply Python's scan ``op(piece, needle)`` (``in``, ``count``...) to a list or tuple piece by
    piece, charging each piece before it is scanned: one step an item, plus the characters of a
    long string needle for each item of its length (those are compared character by character).
    A piece holds about a million characters' worth of comparisons at most, so the clock is
    looked at in time however long the strings. Returns the first result ``stop`` accepts (with
    the offset of its piece), else the last: ``(result, offset)``."""
    n = len(seq)
    long_str = type(needle) is str and len(needle) >= STR_CHARS_PER_STEP
    if n <= _SCAN_CHUNK and not long_str:
        m.charge(n, span)
        return op(seq, needle), 0
    chunk = max(1, min(_SCAN_CHUNK, _SCAN_CHUNK * STR_CHARS_PER_STEP // len(needle))) if long_str else _SCAN_CHUNK
    result: Any = None
    for lo in range(0, n, chunk):
        piece = seq[lo: lo + chunk]
        cost = len(piece)
        if long_str:
            cost += same_length_strings(piece, needle) * (len(needle) // STR_CHARS_PER_STEP)
        m.charge(cost, span)
        result = op(piece, needle)
        if stop(result):
            return result, lo
    return result, 0


def _in(piece: Any, needle: Any) -> bool:
    return needle in piece


def has_long_strings(items: list[Any]) -> bool:
    """True when some item (or an item of a tuple item) is a string long enough that comparing
    it costs more than a step."""
    for x in items:
        if type(x) is str:
            if len(x) >= STR_CHARS_PER_STEP:
                return True
        elif type(x) is tuple and any(type(y) is str and len(y) >= STR_CHARS_PER_STEP for y in x):
            return True
    return False


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
            m.charge(len(container), span)
            for x in container:
                if equal(item, x, m, span):
                    return True
            return False
        # A flat needle compares against each element quickly (containers never equal it),
        # except a long string against strings of its length, which are read: scanned in pieces.
        found, _ = scan(container, item, m, span, _in)
        return bool(found)
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


#: Python prints integers of at most 4,300 digits (sys.get_int_max_str_digits), about this many bits.
_PRINTABLE_INT_BITS = 14_000


class _Overflow(Exception):
    pass


class _Writer:
    """Collects the pieces of a repr up to ``limit`` characters; with a meter, every
    ``_WRITER_CHUNK`` pieces charge steps, so printing a huge container looks at the clock."""

    __slots__ = ("parts", "length", "limit", "meter", "span", "until_charge")

    def __init__(self, limit: int, meter: Meter | None = None, span: Span | None = None) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.limit = limit
        self.meter = meter
        self.span = span
        self.until_charge = _WRITER_CHUNK

    def add(self, s: str) -> None:
        self.length += len(s)
        if self.length > self.limit:
            self.parts.append(s[: max(0, len(s) - (self.length - self.limit))])
            raise _Overflow
        self.parts.append(s)
        self.until_charge -= 1
        if self.until_charge == 0:
            self.until_charge = _WRITER_CHUNK
            if self.meter is not None:
                self.meter.charge(_WRITER_CHUNK // 4, self.span)


_WRITER_CHUNK = 1024


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
    w = _Writer(cap, m, span)
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
    """A repr cut to ``width`` characters (for variable summaries; never raises for size). Its
    cost does not grow with the value: only the first ``width`` characters are made."""
    if type(v) is str and len(v) > width:
        return repr(v[:width])[: width - 3] + "..."
    if type(v) is int and v.bit_length() > _PRINTABLE_INT_BITS:
        return f"<an integer of {v.bit_length():,} bits>"
    try:
        text = to_repr(v, None, None, limit=width + 1)
    except ScriptError as exc:
        text = f"<{exc.message}>"
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
    getitem: Callable[[Any, Any], Any], depth: int = 0, numbering: list[int] | None = None,
) -> str:
    """``fmt.format(*args, **kwargs)`` without attribute access: ``{0}``, ``{name}``, ``{}``,
    ``{0[key]}``, conversions and format specs (one nested level, like Python). ``numbering``
    (the next automatic field number, and 1 once a field was numbered by hand) is shared with the
    fields nested in a spec, as in Python: ``"{:{}{}}".format("a", ">", "9")`` is ``'        a'``."""
    if depth > 1:
        raise ScriptError("Max string recursion exceeded", span)
    try:
        parsed = list(_FORMATTER.parse(fmt))
    except ValueError as exc:
        raise ScriptError(str(exc), span) from None
    out: list[str] = []
    total = 0
    state = numbering if numbering is not None else [0, 0]
    m.charge(len(parsed) * _STEPS_PER_FIELD, span)
    for literal, field, spec, conversion in parsed:
        out.append(literal)
        total += len(literal)
        if field is None:
            continue
        head, rest = _FIELD.fullmatch(field).group("head", "rest")  # type: ignore[union-attr]
        if "." in rest or "." in head:
            raise SandboxViolation(
                f"format field '{{{field}}}' uses attribute access, which scripts may not use", span,
                hint="name an argument ('{0}', '{name}') or index it ('{0[key]}')",
            )
        if head == "":
            if state[1]:
                raise ScriptError("cannot switch from manual field specification to automatic field numbering", span)
            value = _format_arg(state[0], args, kwargs, span)
            state[0] += 1
        elif head.isdigit():
            if state[0]:
                raise ScriptError("cannot switch from automatic field numbering to manual field specification", span)
            state[1] = 1
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
            spec = str_format(spec, args, kwargs, m, span, getitem, depth + 1, state)
        piece = format_value(value, spec, conversion, m, span)
        out.append(piece)
        total += len(piece)
        if total > m.max_size:
            m.check_size(total, span, "str")
    m.check_size(total, span, "str")
    return "".join(out)


#: What one replacement field of ``str.format`` or ``%`` costs beyond the text it makes.
_STEPS_PER_FIELD = 16


def _format_arg(key: int | str, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
    if isinstance(key, int):
        if key >= len(args):
            raise ScriptError(f"Replacement index {key} out of range for positional args tuple", span)
        return args[key]
    if key not in kwargs:
        raise ScriptError(f"KeyError: {key!r}", span)
    return kwargs[key]


_NUMERIC_CONVERSIONS = frozenset("diouxXeEfFgG")
#: Python's messages for a value of the wrong type, by conversion (reproduced for values that
#: are not Python scalars, so the message names the script's type, not a host class).
_WRONG_TYPE = {
    **{c: "%{c} format: a real number is required, not {t}" for c in "diu"},
    **{c: "%{c} format: an integer is required, not {t}" for c in "oxX"},
    **{c: "must be real number, not {t}" for c in "eEfFgG"},
    "c": "%c requires int or char",
}
_PY_SCALARS = (int, float, bool, str, type(None))


class _PercentArgs:
    """The argument cursor of ``fmt % args``, as CPython keeps it: a tuple gives its items in
    turn; anything else is one argument. A mapping (dict, list, range: anything Python can
    subscript, except str and tuple) also serves ``%(key)s``, after which that value is the
    one argument, and it is never "not all converted"."""

    def __init__(self, args: Any, span: Span) -> None:
        self.span = span
        self.mapping = args if type(args) in (dict, list, range) else None
        self.set(list(args) if type(args) is tuple else args, type(args) is tuple)

    def set(self, args: Any, is_tuple: bool) -> None:
        self.args = args
        self.count = len(args) if is_tuple else -1
        self.index = 0 if is_tuple else -2

    def next(self) -> Any:
        if self.count < 0:
            if self.index == -2:
                self.index = -1
                return self.args
        elif self.index < self.count:
            self.index += 1
            return self.args[self.index - 1]
        raise ScriptError("not enough arguments for format string", self.span)

    def all_used(self) -> bool:
        return self.mapping is not None or not self.index < self.count


def percent_format(fmt: str, args: Any, m: Meter, span: Span) -> str:
    """``fmt % args`` (printf-style), re-implemented so widths and container values stay bounded;
    it follows CPython's parser step by step, so results and messages are Python's."""
    cur = _PercentArgs(args, span)
    out: list[str] = []
    total = 0
    n = len(fmt)
    pos = 0
    while True:
        j = fmt.find("%", pos)
        literal = fmt[pos:] if j < 0 else fmt[pos:j]
        out.append(literal)
        total += len(literal)
        if j < 0:
            break
        m.charge(_STEPS_PER_FIELD, span)
        i = j + 1
        if i < n and fmt[i] == "%":
            out.append("%")
            total += 1
            pos = i + 1
            continue
        if i < n and fmt[i] == "(":
            if cur.mapping is None:
                raise ScriptError("format requires a mapping", span)
            i += 1
            start, depth = i, 1
            while depth > 0 and i < n:
                depth += {")": -1, "(": 1}.get(fmt[i], 0)
                i += 1
            if depth > 0:
                raise ScriptError("incomplete format key", span)
            key = fmt[start: i - 1]
            if type(cur.mapping) is dict:
                if key not in cur.mapping:
                    raise ScriptError(f"KeyError: {short_repr(key)}", span)
                value = cur.mapping[key]
            else:
                what = "list" if type(cur.mapping) is list else "range"
                raise ScriptError(f"{what} indices must be integers or slices, not str", span)
            cur.set(value, False)
        flags_start = i
        while i < n and fmt[i] in "-+ #0":
            i += 1
        flags = fmt[flags_start:i]
        width: str | None = None
        if i < n and fmt[i] == "*":
            w = _int_arg(cur.next(), span)
            if w < 0:
                flags, w = flags + "-", -w
            width = str(w)
            i += 1
        else:
            w_start = i
            while i < n and fmt[i].isdigit() and fmt[i].isascii():
                i += 1
            width = fmt[w_start:i] or None
        _check_width(width, m, span)
        prec: str | None = None
        if i < n and fmt[i] == ".":
            i += 1
            if i < n and fmt[i] == "*":
                prec = str(max(_int_arg(cur.next(), span), 0))
                i += 1
            else:
                p_start = i
                while i < n and fmt[i].isdigit() and fmt[i].isascii():
                    i += 1
                prec = fmt[p_start:i] or "0"
        _check_width(prec, m, span)
        if i < n and fmt[i] in "hlL":
            i += 1
        if i >= n:
            raise ScriptError("incomplete format", span)
        conv = fmt[i]
        pos = i + 1
        value = cur.next()
        directive = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
        if conv in "sra":
            text = (
                to_str(value, m, span) if conv == "s"
                else to_repr(value, m, span) if conv == "r"
                else to_repr(value, m, span).encode("ascii", "backslashreplace").decode("ascii")
            )
            piece = (directive + "s") % (text,)
        elif conv in _NUMERIC_CONVERSIONS or conv == "c":
            if type(value) not in _PY_SCALARS:
                raise ScriptError(_WRONG_TYPE[conv].format(c=conv, t=type_name(value)), span)
            try:
                piece = (directive + conv) % (value,)
            except (ValueError, TypeError, OverflowError) as exc:
                raise ScriptError(str(exc), span) from None
        else:
            raise ScriptError(f"unsupported format character '{conv}' (0x{ord(conv):x}) at index {i}", span)
        out.append(piece)
        total += len(piece)
        if total > m.max_size:
            m.check_size(total, span, "str")
    if not cur.all_used():
        raise ScriptError("not all arguments converted during string formatting", span)
    m.check_size(total, span, "str")
    return "".join(out)


def _int_arg(v: Any, span: Span) -> int:
    if type(v) not in (int, bool):
        raise ScriptError("* wants int", span)
    return int(v)
