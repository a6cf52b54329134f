"""The interpreter: semantics, the element API on the fake runtime, lazy device connection and
every error category with its span."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from tapir.core.errors import (
    ActionError,
    AssertionFailed,
    BudgetExceeded,
    DeviceError,
    ElementNotFound,
    SandboxViolation,
    ScreenNotReached,
    ScriptError,
    Span,
    TapirError,
    UnknownElement,
)
from tapir.dsl import api
from tapir.dsl.api import Kind
from tapir.dsl.budget import Budgets
from tapir.dsl.fake_runtime import FakeElement, FakeItem, FakeRuntime
from tapir.dsl.interpreter import Interpreter, RunResult, run_script
from tapir.dsl.parser import parse
from tapir.dsl.runtime_api import UIRuntime
from tapir.dsl.values import ElementHandle


def run(src: str, **kw: Any) -> RunResult:
    return run_script(textwrap.dedent(src).lstrip("\n"), output=None, **kw)


def ok(src: str, **kw: Any) -> list[str]:
    r = run(src, **kw)
    assert r.error is None, r.error.render()
    return list(r.printed)


def fails(src: str, category: type[TapirError], **kw: Any) -> TapirError:
    r = run(src, **kw)
    assert r.error is not None, f"expected {category.__name__}, the script finished: {r.printed}"
    assert type(r.error) is category, r.error.render()
    return r.error


def cpython(src: str) -> list[str]:
    """What CPython prints for the same program (the oracle for the semantics table)."""
    out: list[str] = []

    def p(*args: Any, sep: str = " ", end: str = "\n") -> None:
        out.append(sep.join(map(str, args)) + end)

    exec(textwrap.dedent(src), {"print": p})  # noqa: S102 - trusted test programs
    return "".join(out).splitlines()


# ---------------------------------------------------------------------------------------------
# Semantics table: each program, what it prints (and CPython agrees)

SEMANTICS: list[tuple[str, str, list[str]]] = [
    ("arithmetic", "print(7 // 2, -7 // 2, 7 % -3, 2 ** 10, 2 ** -1, 7 / 2, 10 - 3 * 2, -2 ** 2, 1e3)",
     ["3 -4 -2 1024 0.5 3.5 4 -4 1000.0"]),
    ("bool ops return operands", "print(0 or 'x', 1 and 2, None or [] or 0, not [], True + True)", ["x 2 0 True 2"]),
    ("chained comparison", "x = 5\nprint(1 < x < 10, 1 < x > 7, x == 5 != 6, 'a' < 'b' <= 'b')",
     ["True False True True"]),
    ("in / not in / is",
     "print(2 in [1, 2], 'b' in 'abc', 'k' in {'k': 1}, 3 not in (1, 2), None is None, [] is not [])",
     ["True True True True True True"]),
    ("conditional expression", "x = 3\nprint('big' if x > 2 else 'small', 'big' if x > 5 else 'small')",
     ["big small"]),
    ("slices", "print([1, 2, 3, 4][::2], 'abcdef'[1:-1], [1, 2, 3][::-1], (1, 2, 3)[1:], 'abc'[5:])",
     ["[1, 3] bcde [3, 2, 1] (2, 3) "]),
    ("string methods", """
        s = '  Hello, World  '
        print(s.strip().lower(), s.split(','), '-'.join(['a', 'b']), s.replace('l', 'L', 2).strip())
        print('abc'.upper().startswith('AB'), 'x.y.z'.rsplit('.', 1), 'hello'.find('l'), 'aaa'.count('a'))
        print('42'.isdigit(), 'ab'.title(), 'ab'.center(6, '*'), '7'.zfill(3), 'a,b'.partition(','))
     """, ["hello, world ['  Hello', ' World  '] a-b HeLLo, World",
           "True ['x.y', 'z'] 2 3", "True Ab **ab** 007 ('a', ',', 'b')"]),
    ("list methods", """
        xs = [3, 1, 2]
        xs.append(5); xs.extend([7, 0]); xs.insert(1, 9)
        print(xs, xs.pop(), xs.pop(0), xs.index(2), xs.count(1))
        xs.remove(9); xs.sort(); ys = xs.copy(); ys.reverse()
        print(xs, ys, sorted(ys))
     """,
     ["[9, 1, 2, 5, 7] 0 3 2 1", "[1, 2, 5, 7] [7, 5, 2, 1] [1, 2, 5, 7]"]),
    ("dict methods", """
        d = {'a': 1}
        d['b'] = 2
        d.update({'c': 3}, ); d.setdefault('d', 4); d.setdefault('a', 99)
        print(d, d.get('z'), d.get('z', 0), list(d.keys()), list(d.values()), list(d.items()))
        print(d.pop('a'), d.pop('zz', 'none'), len(d), 'b' in d, d.copy() == d)
     """, ["{'a': 1, 'b': 2, 'c': 3, 'd': 4} None 0 ['a', 'b', 'c', 'd'] [1, 2, 3, 4] "
           "[('a', 1), ('b', 2), ('c', 3), ('d', 4)]", "1 none 3 True True"]),
    ("comprehensions", """
        print([x * y for x in range(3) for y in range(3) if x < y])
        print([c.upper() for c in 'abc' if c != 'b'], [[j for j in range(i)] for i in range(3)])
     """, ["[0, 0, 2]", "['A', 'C'] [[], [0], [0, 1]]"]),
    ("comprehension variables do not leak", "x = 'outer'\nys = [x for x in range(3)]\nprint(x, ys)",
     ["outer [0, 1, 2]"]),
    ("functions: defaults, keywords, recursion", """
        def greet(name, greeting='Hello', punct='!'):
            return greeting + ', ' + name + punct
        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)
        print(greet('Ann'), greet('Bob', punct='?'), greet(greeting='Hi', name='Cy'), fact(10))
     """, ["Hello, Ann! Hello, Bob? Hi, Cy! 3628800"]),
    ("globals are read at call time; locals are per call", """
        scale = 2
        def f(x):
            y = x * scale
            return y
        scale = 10
        y = 'global y'
        print(f(3), y)
     """, ["30 global y"]),
    ("nested functions close over the enclosing call", """
        def outer(n):
            def inner(k):
                return n + k
            return inner
        add5 = outer(5)
        print(add5(1), outer(10)(2))
     """, ["6 12"]),
    ("mutual recursion and early return", """
        def even(n):
            if n == 0:
                return True
            return odd(n - 1)
        def odd(n):
            if n == 0:
                return False
            return even(n - 1)
        def first_big(xs):
            for x in xs:
                if x > 10:
                    return x
        print(even(10), odd(7), first_big([1, 20, 30]), first_big([1]))
     """, ["True True 20 None"]),
    ("loops: break, continue, while, tuple targets", """
        out = []
        for i, (a, b) in enumerate([(1, 2), (3, 4), (5, 6)]):
            if i == 1:
                continue
            out.append(a * b)
        n = 0
        while True:
            n += 1
            if n >= 4:
                break
        print(out, n)
     """, ["[2, 30] 4"]),
    ("augmented assignment, list += aliases like Python", """
        a = [1]
        b = a
        a += [2]
        c = 'x'
        c *= 3
        d = {'k': 1}
        d['k'] += 5
        n = 7
        n //= 2
        n **= 3
        print(a, b, c, d, n)
     """, ["[1, 2] [1, 2] xxx {'k': 6} 27"]),
    ("unpacking and swapping", "a, b = 1, 2\na, b = b, a\n[c, d] = 'xy'\nprint(a, b, c, d)", ["2 1 x y"]),
    ("f-strings", """
        x = 3.14159
        name = 'Ann'
        items = [1, 'a']
        print(f'{x:.2f}|{name!r}|{name:>5}|{items}|{42:05d}|{1234567:,}|{x!s}|{0.25:.0%}')
     """, ["3.14|'Ann'|  Ann|[1, 'a']|00042|1,234,567|3.14159|25%"]),
    ("printf and str.format", """
        print('%s has %d items (%.1f%%)' % ('cart', 3, 12.5), '%r' % 'q', '%(a)s-%(b)s' % {'a': 1, 'b': 2})
        print('{} and {}'.format('x', 'y'), '{1}{0}'.format('a', 'b'), '{n:>4}'.format(n=7),
              '{0[k]}'.format({'k': 'v'}))
     """, ["cart has 3 items (12.5%) 'q' 1-2", "x and y ba    7 v"]),
    ("builtins", """
        print(len('abc'), abs(-3), min(3, 1, 2), max([4, 9, 2]), sum([1, 2, 3]), sum([[1], [2]], []))
        print(sorted(['b', 'a', 'c']))
        print(list(zip([1, 2, 3], 'ab')), list(enumerate('ab', 1)), any([0, 1]), all([]), round(2.675, 2), round(7.5))
        print(int('42') + 1, int('ff', 16), float('1.5'), str(12) + '!', bool(''), list('ab'), dict([('a', 1)], b=2))
        print(max(['aa', 'b', 'ccc'], key=len), min([], default='none'), list(range(10, 0, -3)))
     """,
     ["3 3 1 9 6 [1, 2]", "['a', 'b', 'c']",
      "[(1, 'a'), (2, 'b')] [(1, 'a'), (2, 'b')] True True 2.67 8",
      "43 255 1.5 12! False ['a', 'b'] {'a': 1, 'b': 2}", "ccc none [10, 7, 4, 1]"]),
    ("sorted with a script key function", """
        def by_len(s):
            return (len(s), s)
        words = ['pear', 'fig', 'apple', 'kiwi']
        print(sorted(words, key=by_len), sorted(words, key=by_len, reverse=True))
     """, ["['fig', 'kiwi', 'pear', 'apple'] ['apple', 'pear', 'kiwi', 'fig']"]),
    ("nested data and equality", """
        a = {'x': [1, (2, 3)], 'y': {'z': None}}
        b = {'y': {'z': None}, 'x': [1, (2, 3)]}
        print(a == b, a['x'][1][0], [1, [2]] < [1, [3]], (1, 2) < (1, 2, 0), [[]] * 2)
     """, ["True 2 True True [[], []]"]),
    ("print sep/end", "print('a', 'b', sep='-', end='')\nprint('c')\nprint()\nprint(1, 2, sep='')",
     ["a-bc", "", "12"]),
    ("shadowing a builtin affects only the script", "len = 5\nprint(len)", ["5"]),
    ("string multiplication and list repetition", "print('ab' * 3, [0] * 3, 2 * (1,), 'x' * -1)",
     ["ababab [0, 0, 0] (1, 1) "]),
]


@pytest.mark.parametrize("name,src,expected", SEMANTICS, ids=[s[0] for s in SEMANTICS])
def test_semantics_table(name: str, src: str, expected: list[str]) -> None:
    assert ok(src) == expected
    assert cpython(src) == expected, "the table itself disagrees with CPython"


def test_dict_views_are_lists() -> None:
    """keys()/values()/items() return plain lists: views would be host objects."""
    assert ok("d = {'a': 1}\nprint(d.keys(), d.values(), d.items())") == ["['a'] [1] [('a', 1)]"]


def test_run_result_reports_steps_duration_and_variables() -> None:
    r = run("x = [1, 2]\ndef f():\n    return 1\ntotal = 0\nfor i in range(100):\n    total += i\n")
    assert r.ok and r.error is None
    assert r.variables["x"] == "[1, 2]" and r.variables["total"] == "4950" and r.variables["f"] == "<function f>"
    assert r.steps > 200  # 100 iterations of a statement costing several steps
    assert r.duration_s >= 0 and r.actions == 0


def test_output_callback_gets_lines_as_printed() -> None:
    seen: list[str] = []
    r = run_script("print('a')\nprint('b', end='')\nprint('c')\nprint('tail', end='')", output=seen.append)
    assert seen == ["a", "bc", "tail"] == list(r.printed)


def test_incremental_execution_keeps_globals() -> None:
    interp = Interpreter(output=None)
    assert interp.execute(parse("x = 2\ndef double(v):\n    return v * 2")) is None
    assert interp.execute(parse("double(x) + 1")) == 5
    interp.execute(parse("x = double(x)"))
    assert interp.globals["x"] == 4
    assert interp.variables()["double"] == "<function double>"
    with pytest.raises(ScriptError, match="name 'y' is not defined"):
        interp.execute(parse("y + 1"))
    # a failed entry leaves earlier state intact; budgets restart each time
    assert interp.execute(parse("x")) == 4


def test_python_exceptions_never_escape_from_runtime_bugs() -> None:
    class Broken(FakeRuntime):
        def tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
            raise RuntimeError("boom")

        def get_text(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> str:
            return object()  # type: ignore[return-value]  # a host object must not reach the script

    fake = Broken({"a__b": FakeElement()})
    err = fails("$a__b.tap()", ScriptError, runtime_factory=fake.factory())
    assert "internal error" in err.message and "boom" in err.message and err.span.line == 1
    err = fails("x = 1\nt = $a__b.get_text()", ScriptError, runtime_factory=fake.factory())
    assert "internal error" in err.message and err.span.line == 2


# ---------------------------------------------------------------------------------------------
# The element API on the fake runtime


def music() -> FakeRuntime:
    return FakeRuntime({
        "home__search_box": FakeElement(Kind.INPUT),
        "home__search_button": FakeElement(Kind.BUTTON, text="Search"),
        "home__more": FakeElement(Kind.BUTTON, goes_to="settings"),
        "home__songs": FakeElement(Kind.LIST, scroll_pages=2, items=[
            FakeItem("Blue in Green", {"selected": True}, {"home__song_artist": "Miles Davis"}),
            FakeItem("So What", {}, {"home__song_artist": "Miles Davis"}),
            FakeItem("Giant Steps", {}, {"home__song_artist": "John Coltrane"}),
        ]),
        "settings__dark_mode": FakeElement(Kind.SWITCH, attributes={"checked": False}),
        "settings__title": FakeElement(Kind.TEXT, text="Settings"),
    })


def test_element_methods_and_globals_on_the_fake_runtime() -> None:
    fake = music()
    out = ok("""
        $home__search_box.set_text("jazz")
        $home__search_button.tap()
        enter()
        print(len($home__songs), $home__songs[0].get_text(), $home__songs[-1].get_text())
        song = $home__songs.match("so what")
        print(song, song.get_text(), song.get_text($home__song_artist))
        sel = $home__songs.match({"selected": True})
        print(sel.get_text(), sel.get_attributes()["selected"])
        print($home__songs.scroll(), $home__songs.scroll("down"), $home__songs.scroll(direction="down"))
        $home__more.tap()
        print($settings__title.get_text(), $settings__dark_mode.get_attributes()["checked"])
        back()
        """, runtime_factory=fake.factory(), symbols=fake.symbols())
    assert out == [
        "3 Blue in Green Giant Steps",
        "<element $home__songs.match('so what')> So What Miles Davis",
        "Blue in Green True",
        "False False True",
        "Settings False",
    ]
    assert fake.screen == "home" and fake.closed
    assert [str(c) for c in fake.actions] == [
        "$home__search_box.set_text('jazz')", "$home__search_button.tap()", "enter()",
        "$home__songs.scroll('down')", "$home__songs.scroll('down')", "$home__songs.scroll('down')",
        "$home__more.tap()", "back()",
    ]
    assert [c.line for c in fake.actions][:3] == [1, 2, 3]


def test_legacy_global_dialect_dispatches_through_the_registry() -> None:
    fake = music()
    out = ok("""
        set_text($home__search_box, "blue")
        tap($home__search_button)
        print(get_text($home__songs[1]), get_attributes($home__songs[0])["selected"], scroll($home__songs, "up"))
        long_tap($home__songs[2])
        tap($home__songs[0], $home__song_artist)
        """, runtime_factory=fake.factory(), symbols=fake.symbols())
    assert out == ["So What True True"]
    assert [c.method for c in fake.actions] == ["set_text", "tap", "scroll", "long_tap", "tap"]
    assert set(api.legacy_globals()) == {"tap", "long_tap", "set_text", "scroll", "get_text", "get_attributes"}


def test_len_indexing_and_iteration_share_one_notion_of_items() -> None:
    fake = music()
    out = ok("""
        n = len($home__songs)
        by_index = [$home__songs[i].get_text() for i in range(n)]
        by_loop = []
        for song in $home__songs:
            by_loop.append(song.get_text())
        print(n, by_index == by_loop, by_loop, [s.get_text() for s in $home__songs[1:]])
        print(list(enumerate($home__songs))[2][1], $home__songs[-3] == $home__songs[0])
        """, runtime_factory=fake.factory())
    assert out == ["3 True ['Blue in Green', 'So What', 'Giant Steps'] ['So What', 'Giant Steps']",
                   "<element $home__songs[2]> True"]
    # every item the loop produced came from item(), after one item_count
    assert {c.method for c in fake.calls} == {"item_count", "item", "get_text"}


def test_for_over_items_gets_children_relative_to_each_item() -> None:
    fake = music()
    out = ok("""
        for song in $home__songs:
            if song.get_text($home__song_artist) == "John Coltrane":
                song.tap()
                break
        """, runtime_factory=fake.factory())
    assert out == [] and [str(c) for c in fake.actions] == ["$home__songs[2].tap()"]


def test_handles_print_as_elements_and_are_values() -> None:
    fake = music()
    out = ok("""
        x = $home__songs
        d = {$home__more: 1}
        print(x, str(x[1]), [x], d[$home__more], x == $home__songs, f"{x}")
        """, runtime_factory=fake.factory())
    assert out == ["<element $home__songs> <element $home__songs[1]> [<element $home__songs>] 1 True "
                   "<element $home__songs>"]


def test_ui_actions_count_against_the_action_budget() -> None:
    fake = music()
    err = fails("while True:\n    $home__search_button.tap()", BudgetExceeded,
                runtime_factory=fake.factory(), budgets=Budgets(max_actions=5))
    assert err.budget == "actions" and err.limit == 5  # type: ignore[attr-defined]
    assert len(fake.actions) == 5 and err.span.line == 2
    # reads are not actions
    r = run("for i in range(20):\n    t = $home__search_button.get_text()", runtime_factory=music().factory(),
            budgets=Budgets(max_actions=1))
    assert r.ok and r.actions == 0


# ---------------------------------------------------------------------------------------------
# Lazy device connection


def test_a_script_without_ui_calls_never_makes_a_runtime() -> None:
    fake = music()
    r = run("x = $home__songs\nprint(x, len([1, 2]))", runtime_factory=fake.factory())
    assert r.ok and fake.factory_calls == 0 and fake.calls == []


def test_the_runtime_is_made_once_on_the_first_ui_call_and_closed() -> None:
    fake = music()
    r = run("print('before')\n$home__more.tap()\nback()\nx = len($home__songs)", runtime_factory=fake.factory())
    assert r.ok and fake.factory_calls == 1 and fake.closed
    assert fake.calls[0].method == "tap" and fake.calls[0].line == 2


def test_registry_entries_that_need_no_device_do_not_connect() -> None:
    from tapir.dsl.registry import REGISTRY, Entry, Namespace

    answer = Entry.define("answer() -> int", Namespace.GLOBAL, "A global that needs no device.", lambda call: 42)
    fake = music()
    with REGISTRY.extended(answer):
        assert ok("print(answer())", runtime_factory=fake.factory()) == ["42"]
    assert fake.factory_calls == 0
    assert REGISTRY.global_function("answer") is None  # gone with the block


def test_no_runtime_available_is_a_clear_error() -> None:
    err = fails("print(1)\n$home__more.tap()", DeviceError)
    assert "no device runtime is available" in err.message and err.span.line == 2
    assert "--device" in (err.hint or "")
    assert run("print(1)").ok  # the same interpreter setup runs UI-free scripts


def test_the_fake_runtime_satisfies_the_protocol() -> None:
    assert isinstance(music(), UIRuntime)


# ---------------------------------------------------------------------------------------------
# Error categories, each with its span


def _line_col(err: TapirError) -> tuple[int, int]:
    assert err.span is not None
    return err.span.line, err.span.column


def test_unknown_element_from_the_symbol_table_before_any_device_call() -> None:
    fake = music()
    err = fails("print(1)\n$home__serch_button.tap()", UnknownElement, runtime_factory=fake.factory(),
                symbols=fake.symbols())
    assert _line_col(err) == (2, 1) and "home__serch_button" in err.message
    assert "$home__search_button" in (err.hint or "")
    assert fake.factory_calls == 0


def test_unknown_element_from_the_runtime() -> None:
    err = fails("x = 1\n$nowhere__x.tap()", UnknownElement, runtime_factory=music().factory())
    assert err.span.line == 2


def test_element_not_found_and_screen_not_reached() -> None:
    fake = music()
    fake.elements["home__ghost"] = FakeElement(present=False)
    err = fails("$home__more.get_text()\n$home__ghost.tap()", ElementNotFound, runtime_factory=fake.factory())
    assert err.span.line == 2
    fake = FakeRuntime(music().elements, navigate=False)
    err = fails("$home__more.get_text()\n\n$settings__title.get_text()", ScreenNotReached,
                runtime_factory=fake.factory())
    assert _line_col(err) == (3, 1) and "settings" in err.message


@pytest.mark.parametrize("src,line,needle", [
    ("$home__search_button.set_text('x')", 1, "set_text() is not possible on $home__search_button: it is a button"),
    ("x = 1\n$home__songs[7].tap()", 2, "index 7 is out of range"),
    ("x = $home__songs[-4]", 1, "index -4 is out of range"),
    ("$home__songs.match('Bolero').tap()", 1, "no item of $home__songs matches 'Bolero'"),
    ("$home__more.scroll()", 1, "scroll() is not possible on $home__more"),
    ("n = len($home__more)", 1, "len() needs a list element"),
    ("x = $home__songs['Jazz']", 1, "indexed by position"),
])
def test_action_errors(src: str, line: int, needle: str) -> None:
    fake = music()
    err = fails(src, ActionError, runtime_factory=fake.factory(), symbols=fake.symbols())
    assert err.span.line == line and needle in err.message


@pytest.mark.parametrize("src,pos,message", [
    ("x = 1\ny = x + z", (2, 9), "name 'z' is not defined"),
    ("x = 1 + 'a'", (1, 5), "unsupported operand type(s) for +: 'int' and 'str'"),
    ("x = 'a' + 1", (1, 5), 'can only concatenate str (not "int") to str'),
    ("x = 1 / 0", (1, 5), "division by zero"),
    ("x = 5 % 0", (1, 5), "integer division or modulo by zero"),
    ("d = {}\nv = d['k']", (2, 5), "KeyError: 'k'"),
    ("xs = [1]\nv = xs[3]", (2, 5), "list index out of range"),
    ("v = int('x1')", (1, 5), "invalid literal for int() with base 10: 'x1'"),
    ("def f(a, b):\n    return a\nf(1)", (3, 1), "f() missing 1 required positional argument: 'b'"),
    ("def f(a):\n    return a\nf(1, 2)", (3, 1), "f() takes 1 positional argument but 2 were given"),
    ("x = 5\nx()", (2, 1), "'int' object is not callable"),
    ("a, b = [1, 2, 3]", (1, 1), "too many values to unpack (expected 2, got 3)"),
    ("x = [1] < 'a'", (1, 5), "'<' not supported between instances of 'list' and 'str'"),
    ("def f():\n    y = x\n    x = 1\nf()", (2, 9), "cannot access local variable 'x'"),
    ("'abc'.lowr()", (1, 7), "'str' object has no attribute 'lowr'"),
    ("$home__more.click()", (1, 1), "element has no method 'click'"),
    ("$home__more.tap(1, 2)", (1, 1), "tap() takes at most 1 argument (2 given)"),
    ("$home__songs.scroll('sideways')", (1, 1), "must be one of 'up', 'down'"),
    ("$home__search_box.set_text(5)", (1, 1), "set_text() argument 'text' must be str | secret, not int"),
    ("tap('x')", (1, 1), "tap() needs an element as its first argument, got str"),
    ("x = {[1]: 2}", (1, 5), "unhashable type: 'list'"),
])
def test_script_errors_have_python_messages_and_spans(src: str, pos: tuple[int, int], message: str) -> None:
    err = fails(src, ScriptError, runtime_factory=music().factory())
    assert message in err.message
    assert _line_col(err) == pos


def test_sandbox_violation_and_assertion_failed() -> None:
    err = fails("x = 'a'\ny = x.encode()", SandboxViolation)
    assert "'str.encode' is not available" in err.message and err.span.line == 2
    err = fails("x = 1\nassert x == 2, 'x should be 2'", AssertionFailed)
    assert err.message == "assertion failed: x should be 2" and err.span.line == 2
    err = fails("x = 1\nassert x > 3", AssertionFailed)
    assert err.message == "assertion failed: x > 3"


@pytest.mark.parametrize("src,budget,budgets", [
    ("while True:\n    pass", "steps", Budgets(max_steps=1000)),
    ("while True:\n    pass", "time", Budgets(timeout_s=0.05, max_steps=10**12)),
    ("def f(n):\n    return f(n + 1)\nf(0)", "depth", Budgets(max_depth=20)),
    ("s = 'ab' * 600", "size", Budgets(max_size=1000)),
    ("x = 7 ** 100", "size", Budgets(max_int_bits=64)),
    ("while True:\n    print('spam')", "output", Budgets(max_output=100)),
])
def test_each_budget_stops_the_script_with_its_name_and_limit(src: str, budget: str, budgets: Budgets) -> None:
    err = fails(src, BudgetExceeded, budgets=budgets)
    assert err.budget == budget  # type: ignore[attr-defined]
    assert f"{budget} budget exceeded" in err.message and "limit" in err.message
    assert err.span is not None


def test_depth_budget_holds_even_when_set_high() -> None:
    """The call-depth budget, not Python's recursion limit, stops deep recursion."""
    err = fails("def f(n):\n    return f(n + 1)\nf(0)", BudgetExceeded, budgets=Budgets(max_depth=3000))
    assert err.budget == "depth" and err.limit == 3000  # type: ignore[attr-defined]
    assert ok("def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nprint(f(2500))",
              budgets=Budgets(max_depth=3000)) == ["2500"]


def test_errors_render_with_file_line_column_and_caret() -> None:
    r = run_script("x = 1\ny = x + undefined_name\n", output=None, filename="demo.tap")
    text = r.error.render()
    assert text.splitlines() == [
        "demo.tap:2:9: ScriptError: name 'undefined_name' is not defined",
        "    y = x + undefined_name",
        "            ^^^^^^^^^^^^^^",
    ]
    r = run_script("x = (\n", output=None, filename="bad.tap")
    assert r.error.render().startswith("bad.tap:") and "SyntaxError" in r.error.category


def test_every_registry_entry_has_an_implementation_and_only_those_names_dispatch() -> None:
    assert all(callable(e.impl) for e in [*api.ELEMENT_METHODS.values(), *api.GLOBALS.values()])
    fake = music()
    for name, entry in api.ELEMENT_METHODS.items():
        # every element method reaches the runtime under its own name
        args = {"set_text": "('x')", "match": "('So What')", "scroll": "()"}.get(name, "()")
        target = {"set_text": "$home__search_box", "match": "$home__songs", "scroll": "$home__songs"}.get(
            name, "$home__search_button")
        r = run(f"r = {target}.{name}{args}", runtime_factory=fake.factory())
        assert r.ok or name == "wait_gone", r.error.render()  # the button stays: the wait times out
        # presence checks and waits are one runtime call, `wait_for`
        method = "wait_for" if name in ("exists", "wait", "wait_gone") else name
        assert fake.calls[-1].method == method and fake.calls[-1].is_action == entry.is_action


# ---------------------------------------------------------------------------------------------
# tapir run


def _cli(tmp_path: Any, capsys: Any, source: str, *extra: str) -> tuple[int, str, str]:
    from tapir.cli import main

    script = tmp_path / "s.tap"
    script.write_text(source, encoding="utf-8")
    code = main(["run", str(script), *extra])
    out, err = capsys.readouterr()
    return code, out, err.replace(str(script), "s.tap")


def test_cli_run_prints_and_exits_zero(tmp_path: Any, capsys: Any) -> None:
    code, out, err = _cli(tmp_path, capsys, "for i in range(3):\n    print('line', i)\n", "--stats")
    assert code == 0 and out == "line 0\nline 1\nline 2\n"
    assert "s.tap: ok:" in err and "0 UI actions" in err


def test_cli_run_renders_errors_with_caret_and_exits_one(tmp_path: Any, capsys: Any) -> None:
    code, out, err = _cli(tmp_path, capsys, "print('start')\nx = 1 +\n")
    assert code == 1 and out == "" and err.startswith("s.tap:2:") and "^" in err
    code, out, err = _cli(tmp_path, capsys, "print('start')\nx = [1][5]\n")
    assert code == 1 and out == "start\n"
    assert err.splitlines() == ["s.tap:2:5: ScriptError: list index out of range", "    x = [1][5]", "        ^^^^^^"]


def test_cli_run_budgets_and_missing_device(tmp_path: Any, capsys: Any) -> None:
    code, _, err = _cli(tmp_path, capsys, "while True:\n    pass\n", "--timeout", "0.2", "--max-steps", "10000000000")
    assert code == 1 and "time budget exceeded" in err
    code, _, err = _cli(tmp_path, capsys, "n = 0\nwhile True:\n    n += 1\n", "--max-steps", "500")
    assert code == 1 and "steps budget exceeded" in err and "limit 500" in err
    # a script that names an element but no document is refused before it starts, as check says
    code, out, err = _cli(tmp_path, capsys, "print('ok')\n$main__x.tap()\n")
    assert code == 1 and out == "" and "error[no-document]" in err and "not run" in err
    # screen-level calls need no document: it runs, and its first UI call asks for a device
    code, out, err = _cli(tmp_path, capsys, "print('ok')\nback()\n")
    assert code == 1 and out == "ok\n" and "s.tap:2:1: DeviceError: this run has no device" in err
    assert "--device" in err
    code, _, err = _cli(tmp_path, capsys, "x = 1\n", "--max-actions", "0")
    assert code == 2 and "--max-actions must be positive" in err


def test_cli_run_with_a_document_checks_names_before_any_device(repo: Any, tmp_path: Any, capsys: Any) -> None:
    doc = repo / "samples" / "music" / "music.yaml"
    if not doc.is_file():
        pytest.skip("the music sample document is not present")
    code, _, err = _cli(tmp_path, capsys, "print(1)\n$songs_screen__song_lst.tap()\n", "--doc", str(doc))
    assert code == 1 and "s.tap:2:1: error[unknown-element]" in err and "$songs_screen__song_list" in err
    assert "not run" in err


def test_element_handle_api() -> None:
    from tapir.dsl.values import Child, Index, Match

    h = ElementHandle("music__songs")
    item = h.at(2)
    matched = h.matching({"selected": True, "text": "x"})
    assert item.path == (Index(2),) and item.root == h and item.is_item and not h.is_item
    assert matched.path == (Match((("selected", True), ("text", "x"))),)
    assert matched.path[0].as_query() == {"selected": True, "text": "x"}  # type: ignore[union-attr]
    assert str(item.child("music__title")) == "$music__songs[2]/$music__title"
    assert item.child("music__title").path[-1] == Child("music__title")
    assert repr(item) == "<element $music__songs[2]>" and h.screen == "music"
    assert len({h.at(1), h.at(1), matched}) == 2  # hashable, equal by value


def test_budgets_are_validated_and_the_deepest_allowed_recursion_is_safe() -> None:
    from tapir.dsl.budget import MAX_DEPTH_CEILING

    for bad in ({"max_depth": MAX_DEPTH_CEILING + 1}, {"max_actions": 0}, {"timeout_s": -1.0}):
        with pytest.raises(ValueError):
            Budgets(**bad)  # type: ignore[arg-type]
    assert Budgets().replace(max_actions=3, timeout_s=None).max_actions == 3
    # recursion that re-enters C at every level (a comprehension condition, a sort key) at the
    # ceiling stops with the depth budget instead of overflowing the C stack
    for src in ("def f(n):\n    return [1 for i in [1] if f(n + 1)]\nf(0)",
                "def f(n):\n    return sorted([1], key=f)\nf(0)"):
        err = fails(src, BudgetExceeded, budgets=Budgets(max_depth=MAX_DEPTH_CEILING, max_steps=10**9))
        assert err.budget == "depth"  # type: ignore[attr-defined]


def test_membership_evaluates_its_left_operand_first() -> None:
    """Found by the CPython-equivalence property: `in` must not run the container side first."""
    r = run_script("x = (0 + 'a') in print('side effect')\n", output=None)
    assert not r.ok and list(r.printed) == []
