"""Error messages name script types, never the host's classes: every method and builtin of the
registry, and every operator, called with every kind of value a script can hold (secrets,
elements, the language's callables included). A message naming ``Secret`` or ``ElementHandle``
would tell a script (or its reader) about the interpreter rather than the script."""

from __future__ import annotations

import re

import pytest

from tapir.dsl.api import Kind
from tapir.dsl.fake_runtime import FakeElement, FakeRuntime
from tapir.dsl.interpreter import run_script
from tapir.dsl.registry import REGISTRY, Namespace

#: A script value of every kind, by name (the prelude below defines the named ones).
VALUES = {
    "secret": "pw", "element": "$home__more", "builtin": "len", "api": "back", "function": "f",
    "none": "None", "int": "1", "float": "1.5", "bool": "True", "str": "'a'", "list": "[1]",
    "tuple": "(1,)", "dict": "{1: 1}", "range": "range(2)", "big int": "2**100",
}
RECEIVERS = {Namespace.STR: "'a'", Namespace.LIST: "[1, 2]", Namespace.TUPLE: "(1, 2)", Namespace.DICT: "{1: 1}"}
PRELUDE = 'pw = secret("PW")\ndef f():\n    pass\n'
#: Names of host classes and modules; none may appear in a message.
HOST = re.compile(r"\b(Secret|ElementHandle|ElementRef|ScriptFunction|Builtin|ApiFunction|FakeElement|"
                  r"Namespace|Entry|Span|tapir\.\w+|_[A-Z]\w+|object at 0x)\b")


def _calls() -> list[str]:
    calls = []
    for ns, receiver in RECEIVERS.items():
        for name in REGISTRY.names(ns):
            for v in VALUES.values():
                calls += [f"{receiver}.{name}({v})", f"{receiver}.{name}({v}, {v})", f"{receiver}.{name}(1, {v})"]
    for name in REGISTRY.names(Namespace.BUILTIN):
        if name == "print":
            continue
        for v in VALUES.values():
            calls += [f"{name}({v})", f"{name}({v}, {v})", f"{name}(1, {v})", f"{name}([{v}, {v}])"]
    for name in REGISTRY.names(Namespace.ELEMENT):
        for v in VALUES.values():
            calls.append(f"$home__more.{name}({v})")
    for v in VALUES.values():
        for w in ("1", "'a'", "pw", "len"):
            calls += [f"{v} + {w}", f"{w} - {v}", f"{v} * {w}", f"{v} < {w}", f"{v} // {w}", f"{v} % {w}",
                      f"{v} ** {w}", f"{w} in {v}"]
        calls += [f"-{v}", f"{v}[0]", f"{v}(1)", f"{v}.x", f"[x for x in {v}]", f"'%d' % {v}", f"'%s %s' % {v}",
                  f"'{{:d}}'.format({v})", f"f'{{{v}:d}}'", f"{{{v}: 1}}", f"sorted([{v}, 1])"]
    return calls


def test_no_message_names_a_host_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPIR_SECRET_PW", "hunter2")
    fake = FakeRuntime({"home__more": FakeElement(Kind.BUTTON)})
    leaks: list[str] = []
    calls = _calls()
    for call in calls:
        r = run_script(PRELUDE + f"q = {call}\n", fake.factory(), output=None)
        message = r.error.message if r.error is not None else ""
        if HOST.search(message) or "hunter2" in message:
            leaks.append(f"{call}: {message}")
    assert len(calls) > 3000
    assert not leaks, "\n".join(leaks[:40])
