"""Escape attempts: each is stopped with a clear message and the right category, and the host
process (its builtins, the registry, the interpreter's own tables) is left unchanged.

Many attempts are refused by the parser already (``UnsupportedConstruct``); the rest by the
interpreter (``SandboxViolation``, ``BudgetExceeded``, ``ScriptError``). Either way the test
asserts the category and the message.
"""

from __future__ import annotations

import builtins
import sys
import time
from typing import Any

import pytest

from tapir.core.errors import (
    BudgetExceeded,
    SandboxViolation,
    ScriptError,
    TapirError,
    TapirSyntaxError,
    UnsupportedConstruct,
)
from tapir.dsl import interpreter
from tapir.dsl.api import Kind
from tapir.dsl.budget import Budgets
from tapir.dsl.fake_runtime import FakeElement, FakeRuntime
from tapir.dsl.interpreter import run_script
from tapir.dsl.registry import REGISTRY, Namespace

#: Small budgets so the resource attacks stop fast; the deadline is short on purpose.
TEST_BUDGETS = Budgets(max_steps=300_000, timeout_s=2.0, max_size=100_000, max_output=10_000, max_depth=30)
SIZE = "size budget exceeded"

# (id, script, category, a fragment of the message)
CORPUS: list[tuple[str, str, type[TapirError], str]] = [
    # imports and dunder walks
    ("import", "import os", UnsupportedConstruct, "'import' is not allowed"),
    ("from-import", "from os import system", UnsupportedConstruct, "'from ... import' is not allowed"),
    ("__import__", "__import__('os').system('id')", UnsupportedConstruct, "names starting with '__'"),
    ("subclasses walk", "().__class__.__bases__[0].__subclasses__()", UnsupportedConstruct, "names starting with '__'"),
    ("str class", "''.__class__", UnsupportedConstruct, "names starting with '__'"),
    ("function globals", "def f():\n    pass\ng = f.__globals__", UnsupportedConstruct, "names starting with '__'"),
    ("object dict", "x = 1\nd = x.__dict__", UnsupportedConstruct, "names starting with '__'"),
    ("print self", "m = print.__self__", UnsupportedConstruct, "names starting with '__'"),
    ("call dunder", "x = print\nx.__call__('hi')", UnsupportedConstruct, "names starting with '__'"),
    ("builtins name", "b = __builtins__", UnsupportedConstruct, "names starting with '__'"),
    # dangerous builtins are not there, and say so
    ("getattr", "getattr(1, 'real')", SandboxViolation, "'getattr' is not available"),
    ("setattr", "setattr(print, 'x', 1)", SandboxViolation, "'setattr' is not available"),
    ("exec", "exec('import os')", SandboxViolation, "'exec' is not available"),
    ("eval", "eval('1 + 1')", SandboxViolation, "'eval' is not available"),
    ("compile", "compile('1', 'x', 'eval')", SandboxViolation, "'compile' is not available"),
    ("open", "open('/etc/passwd').read()", SandboxViolation, "'open' is not available"),
    ("globals", "g = globals()", SandboxViolation, "'globals' is not available"),
    ("locals", "l = locals()", SandboxViolation, "'locals' is not available"),
    ("vars", "v = vars()", SandboxViolation, "'vars' is not available"),
    ("type", "t = type(1)", SandboxViolation, "'type' is not available"),
    ("object", "o = object()", SandboxViolation, "'object' is not available"),
    ("input", "s = input()", SandboxViolation, "'input' is not available"),
    ("breakpoint", "breakpoint()", SandboxViolation, "'breakpoint' is not available"),
    ("help", "help()", SandboxViolation, "'help' is not available"),
    ("exit", "exit()", SandboxViolation, "'exit' is not available"),
    ("forged handle", "h = ElementHandle('x')", ScriptError, "name 'ElementHandle' is not defined"),
    # other refused syntax
    ("lambda", "f = lambda: 1", UnsupportedConstruct, "'lambda' is not supported"),
    ("class", "class A:\n    pass", UnsupportedConstruct, "'class' is not allowed"),
    ("try", "try:\n    pass\nexcept:\n    pass", UnsupportedConstruct, "'try' is not supported"),
    ("with", "with open('x') as f:\n    pass", UnsupportedConstruct, "'with' is not supported"),
    ("global", "def f():\n    global x", UnsupportedConstruct, "'global' is not supported"),
    ("attribute assignment", "print.x = 1", TapirSyntaxError, "cannot assign to an attribute"),
    # format-string tricks
    ("format attribute", "'{0.__class__}'.format(1)", SandboxViolation, "uses attribute access"),
    ("format plain attribute", "'{0.real}'.format(1)", SandboxViolation, "uses attribute access"),
    ("format index then attribute", "'{0[0].__class__}'.format([1])", SandboxViolation, "uses attribute access"),
    ("format named attribute", "'{x.__init__.__globals__}'.format(x=1)", SandboxViolation, "uses attribute access"),
    ("f-string dunder", "x = 1\ns = f'{x.__class__}'", UnsupportedConstruct, "names starting with '__'"),
    ("f-string huge width", "s = f'{1:>1000000000}'", BudgetExceeded, "format width"),
    ("format huge width", "s = '{:>999999999}'.format(1)", BudgetExceeded, "format width"),
    ("printf huge width", "s = '%1000000000d' % 1", BudgetExceeded, "format width"),
    ("printf star width", "s = '%*d' % (10**9, 1)", BudgetExceeded, "format width"),
    # private attributes and host methods
    ("handle internals", "n = $home__more._name", SandboxViolation, "'_name' is not allowed"),
    ("handle private method", "$home__more._replace()", SandboxViolation, "'_replace' is not allowed"),
    ("handle dunder", "c = $home__more.__class__", UnsupportedConstruct, "names starting with '__'"),
    ("handle python method", "h = $home__more.at(1)", ScriptError, "element has no method 'at'"),
    ("handle field", "p = $home__more.path()", ScriptError, "element has no method 'path'"),
    ("builtin internals", "print.fn(1)", ScriptError, "'builtin_function_or_method' object has no attribute 'fn'"),
    ("function internals", "def f():\n    pass\nf.invoke({}, None)", ScriptError,
     "'function' object has no attribute 'invoke'"),
    ("attribute read", "r = (1).real", SandboxViolation, "attribute access ('.real') is not allowed"),
    ("str.encode", "b = 'x'.encode()", SandboxViolation, "'str.encode' is not available"),
    ("str.maketrans", "t = 'x'.maketrans('a', 'b')", SandboxViolation, "'str.maketrans' is not available"),
    ("int method", "n = (5).bit_length()", SandboxViolation, "'int.bit_length' is not available"),
    ("list private", "x = []\nx._y()", SandboxViolation, "'_y' is not allowed"),
    # mutation of builtins
    ("builtin item assignment", "print[0] = 1", ScriptError, "does not support item assignment"),
    ("builtin call with junk", "len.x()", ScriptError, "has no attribute 'x'"),
    # huge allocations
    ("str times huge", "s = 'a' * 10**10", BudgetExceeded, SIZE),
    ("list times huge", "x = [0] * 10**9", BudgetExceeded, SIZE),
    ("range list", "x = list(range(10**12))", BudgetExceeded, SIZE),
    ("range huge", "r = range(10**20)", BudgetExceeded, SIZE),
    ("power tower", "x = 10**10**10", BudgetExceeded, SIZE),
    ("squaring loop", "x = 2\nwhile True:\n    x = x * x", BudgetExceeded, SIZE),
    ("doubling string", "s = 'ab'\nwhile True:\n    s = s + s", BudgetExceeded, SIZE),
    ("doubling list", "x = [1]\nwhile True:\n    x = x * 2", BudgetExceeded, SIZE),
    ("nested growth by extend", "x = [1]\nwhile True:\n    x.extend(x)", BudgetExceeded, SIZE),
    ("join blow-up", "s = ''.join(['a' * 10000] * 1000)", BudgetExceeded, SIZE),
    ("replace blow-up", "s = ('x' * 1000).replace('', 'y' * 1000)", BudgetExceeded, SIZE),
    ("ljust blow-up", "s = 'x'.ljust(10**9)", BudgetExceeded, SIZE),
    ("comprehension blow-up", "x = [i for i in range(100000) for j in range(100000)]", BudgetExceeded, "budget"),
    ("retained allocations", "keep = []\nwhile True:\n    keep.append('x' * 90000)", BudgetExceeded, "steps budget"),
    ("print repr of shared tree", "a = [0]\nfor i in range(60):\n    a = [a, a]\nprint(a)", BudgetExceeded, SIZE),
    ("deep nesting print", "a = []\nfor i in range(20000):\n    a = [a]\nprint(a)", ScriptError, "nested more than"),
    ("big int to str", "n = int('9' * 5000)", ScriptError, "integer string conversion"),
    ("print flood", "while True:\n    print('x' * 100)", BudgetExceeded, "output budget"),
    # hashing and comparing huge shared structures
    ("shared tree equality", "a = [0]\nb = [0]\nfor i in range(60):\n    a = [a, a]\n    b = [b, b]\nq = a == b",
     BudgetExceeded, "steps budget"),
    ("shared tuple as key", "t = ()\nfor i in range(60):\n    t = (t, t)\nd = {t: 1}", ScriptError,
     "a dict key may hold at most"),
    ("shared tree sort", "a = [0]\nb = [0]\nfor i in range(60):\n    a = [a, a]\n    b = [b, b]\nx = sorted([a, b])",
     BudgetExceeded, "steps budget"),
    ("cyclic equality", "a = []\na.append(a)\nb = []\nb.append(b)\nq = a == b", ScriptError, "nested more than"),
    # time and depth
    ("infinite loop", "while True:\n    pass", BudgetExceeded, "time budget"),
    ("recursion", "def f():\n    f()\nf()", BudgetExceeded, "depth budget"),
    ("recursion through key", "def k(x):\n    return sorted([1, 2], key=k)\nsorted([1], key=k)", BudgetExceeded,
     "depth budget"),
    ("recursion through comprehension", "def f(n):\n    return [f(n) for i in [1]]\nf(1)", BudgetExceeded,
     "depth budget"),
    ("complex from power", "x = (-8) ** 0.5", ScriptError, "fractional power"),
]


def _fake() -> FakeRuntime:
    return FakeRuntime({"home__more": FakeElement(Kind.BUTTON)})


def _budgets_for(case_id: str) -> Budgets:
    if case_id == "infinite loop":  # the deadline, not the step budget, must stop this one
        return Budgets(max_steps=10**12, timeout_s=0.3, max_depth=30)
    return TEST_BUDGETS


def _host_state() -> dict[str, Any]:
    return {
        "builtins": {k: id(v) for k, v in vars(builtins).items()},
        # the registry (every entry, and the script values of its global names) stays as it was
        "registry": {ns: [(e, id(e.impl)) for e in REGISTRY.entries(ns)] for ns in Namespace},
        "registry version": REGISTRY.version,
        "script values": {n: id(REGISTRY.script_value(n)) for n in REGISTRY.global_names()},
        "recursion limit": sys.getrecursionlimit(),
        "modules": set(sys.modules),
    }


def test_the_corpus_is_big_enough() -> None:
    assert len(CORPUS) >= 40 and len({c[0] for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case_id,src,category,fragment", CORPUS, ids=[c[0] for c in CORPUS])
def test_escape_attempt_is_stopped(case_id: str, src: str, category: type[TapirError], fragment: str) -> None:
    started = time.monotonic()
    r = run_script(src, runtime_factory=_fake().factory(), budgets=_budgets_for(case_id), output=None)
    assert r.error is not None, f"{case_id}: the script ran to the end"
    assert type(r.error) is category, r.error.render()
    assert fragment in r.error.message, r.error.render()
    assert r.error.span is not None and r.error.span.line >= 1
    assert time.monotonic() - started < 10


def test_infinite_loop_stops_within_the_deadline() -> None:
    started = time.monotonic()
    r = run_script("while True:\n    pass", budgets=Budgets(max_steps=10**12, timeout_s=0.2), output=None)
    elapsed = time.monotonic() - started
    assert isinstance(r.error, BudgetExceeded) and r.error.budget == "time"  # type: ignore[attr-defined]
    assert 0.2 <= elapsed < 0.7


def test_host_state_is_unchanged_after_the_corpus() -> None:
    before = _host_state()
    for case_id, src, _, _ in CORPUS:
        run_script(src, runtime_factory=_fake().factory(), budgets=_budgets_for(case_id), output=None)
    # shadowing builtins is legal and stays inside the script's own globals
    r = run_script("len = print\nprint = 5\nrange = None\nx = 1", output=None)
    assert r.ok and r.variables["print"] == "5"
    after = _host_state()
    assert after == before
    assert run_script("print(len([1, 2]), range(3))", output=None).printed == ("2 range(0, 3)",)


def test_no_host_object_reaches_a_script() -> None:
    """Every value a script can name or compute is one of the script value types."""
    from tapir.dsl.values import SCRIPT_TYPES

    interp = interpreter.Interpreter(output=None)
    from tapir.dsl.parser import parse

    interp.execute(parse(
        "a = [len, print, range(3), {'k': (1, 2.0, None)}, 'x'.split(), {}.items(), sorted]\n"
        "def f():\n    return f\n"
        "b = [f(), enumerate('ab'), zip([1], [2]), dict(x=1).keys(), tap, back]\n"
    ))

    def walk(v: Any) -> None:
        assert type(v) in SCRIPT_TYPES, type(v)
        if type(v) in (list, tuple):
            for x in v:
                walk(x)
        elif type(v) is dict:
            for k, x in v.items():
                walk(k)
                walk(x)

    for v in interp.globals.values():
        walk(v)


def test_a_hand_built_ast_cannot_smuggle_host_objects() -> None:
    from tapir.core.errors import Span
    from tapir.dsl import ast as A

    s = Span(1, 1, 1, 5)
    for bad in (
        A.Module(s, (A.ExprStmt(s, A.Constant(s, sys)),)),  # type: ignore[arg-type]
        A.Module(s, (A.ExprStmt(s, A.Name(s, 42)),)),  # type: ignore[arg-type]
        A.Module(s, (A.ExprStmt(s, A.BinOp(s, "@", A.Constant(s, 1), A.Constant(s, 2))),)),
        A.Module(s, ("print(1)",)),  # type: ignore[arg-type]
    ):
        r = run_script(bad, output=None)
        assert isinstance(r.error, SandboxViolation), r.error
