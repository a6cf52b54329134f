"""``str % args`` is re-implemented (so widths and container values stay bounded); it must give
CPython's result or CPython's message for every format and argument shape, including the odd
ones: a list or dict argument with no conversion (a mapping: nothing is "not converted"),
``%(key)s`` after a positional one, ``*`` widths, ``%`` conversions with flags."""

from __future__ import annotations

from typing import Any

import pytest

from tapir.dsl.interpreter import run_script

FORMATS = [
    "x", "%s", "%s %s", "%d", "%5d|%-5d|%05d|%+d|% d", "%x %X %o %#x %#o", "%e %E %f %F %g %G", "%.2f %.0e %10.3f",
    "%c", "%r %a", "%%", "%5%", "% %", "%(a)s", "%(a)s %(b)r", "%(a)s %s", "%s %(a)s", "%(a(b))s", "%(a", "%",
    "%*d", "%-*d", "%.*f", "%*.*f", "%ld %hi %Lf", "%z", "%(a)%", "%s%%%s", "%i %u",
]
ARGS = [
    "()", "5", "'s'", "(1,)", "(1, 2)", "(1, 2, 3)", "[1, 'a']", "[]", "{}", "{'a': 1, 'b': 'q', 'a(b)': 2}",
    "(3, 1.5)", "(-4, 7)", "(2, 3, 1.23456)", "(65,)", "('é',)", "(None,)", "((1, 2),)", "([1],)", "(True,)",
    "range(3)", "1.5", "(10**20,)", "('ab',)",
]


def _python(fmt: str, args: str) -> tuple[str, str]:
    try:
        return "ok", fmt % eval(args)  # noqa: S307 - literals written above
    except KeyError as exc:  # the interpreter names a missing key as "KeyError: 'k'"
        return "error", f"KeyError: {exc}"
    except Exception as exc:
        return "error", str(exc)


def _tapir(fmt: str, args: str) -> tuple[str, str]:
    r = run_script(f"print({fmt!r} % {args}, end='')", output=None)
    if r.error is not None:
        return "error", r.error.message
    return "ok", "".join(r.printed)


@pytest.mark.parametrize("fmt", FORMATS)
def test_percent_formatting_is_pythons(fmt: str) -> None:
    for args in ARGS:
        expected = _python(fmt, args)
        if expected[1].startswith("Python int too large to convert to C"):  # a '*' width of 10**20:
            assert "size budget exceeded: a format width" in _tapir(fmt, args)[1]  # refused as too wide
            continue
        assert _tapir(fmt, args) == expected, (fmt, args)


def test_a_list_with_no_conversion_is_not_an_error() -> None:
    """What hypothesis found (xs = [1, 'a']; ... % xs): Python reads a list as a mapping."""
    assert run_script("xs = [1, 'a']\nprint('total' % xs)", output=None).printed == ("total",)
    r: Any = run_script("print('total' % 5)", output=None)
    assert r.error.message == "not all arguments converted during string formatting"


def test_widths_stay_within_the_size_budget() -> None:
    r = run_script("s = '%*s' % (10**9, 'x')", output=None)
    assert r.error is not None and "format width" in r.error.message
