"""One registry: a method added in one place is run by the interpreter, checked by the checker,
on the page objects, in the prompt text, and completed, hovered and signature-helped by the
language service; the registry's signatures agree with Python's where scripts call Python."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
from typing import Any

import pytest

from tapir.core.diagnostics import Diagnostic
from tapir.docgen.loader import load_document
from tapir.docgen.prompt import render_compressed, render_full
from tapir.docgen.stubs import generate_stubs
from tapir.dsl.checker import check_source
from tapir.dsl.fake_runtime import FakeElement, FakeItem, FakeRuntime
from tapir.dsl.interpreter import run_script
from tapir.dsl.registry import REGISTRY, ApiCall, Entry, Namespace, ParamKind
from tapir.dsl.symbols import SymbolTable
from tapir.dsl.types import LIST_KINDS, Kind
from tapir.service import Workspace

EXAMPLE = Path(__file__).parent / "golden" / "example_app.yaml"


def _tap_each(call: ApiCall) -> int:
    """Tap every item of the list, in order, with the runtime protocol's own calls."""
    assert call.handle is not None
    rt, handle, span = call.runtime, call.handle, call.span
    count = rt.item_count(handle, span)
    for i in range(count):
        rt.tap(rt.item(handle, i, span), call.args["child"], span)
    return count


TAP_EACH = Entry.define(
    "tap_each(child: element = None) -> int", Namespace.ELEMENT,
    "Tap every item of the list (or each item's child element), in order; returns how many.", _tap_each,
    params={"child": "a child element of the items to tap instead"}, kinds=LIST_KINDS,
    acts_on_device=True, needs_device=True,
)


def _fake() -> FakeRuntime:
    return FakeRuntime({
        "songs_screen__song_list": FakeElement(Kind.LIST, items=[FakeItem("A"), FakeItem("B"), FakeItem("C")]),
        "home_screen__songs_button": FakeElement(Kind.BUTTON),
    })


def _codes(found: list[Diagnostic]) -> list[tuple[int, str]]:
    return [(d.span.line, d.code) for d in found if d.span is not None]


def test_a_method_added_in_one_place_is_everywhere(tmp_path: Path) -> None:
    symbols = SymbolTable.from_json((Path(__file__).parent / "golden" / "compiled" / "example_app.symbols.json")
                                    .read_text())
    script = "n = $songs_screen__song_list.tap_each()\n$home_screen__songs_button.tap_each()\n" \
             "$songs_screen__song_list.tap_each(1, 2)\n"
    # before: nobody knows it
    assert (1, "unknown-method") in _codes(check_source(script, symbols))
    with REGISTRY.extended(TAP_EACH):
        # the checker: legal on lists only, with its signature
        assert _codes(check_source(script, symbols)) == [(2, "not-a-list"), (3, "arg-count")]
        # the interpreter: runs it on the runtime protocol, counted as one UI action
        fake = _fake()
        r = run_script("n = $songs_screen__song_list.tap_each()\nprint(n)", fake.factory(), output=None,
                       symbols=fake.symbols())
        assert r.ok and r.printed == ("3",) and r.actions == 1
        assert fake.log() == ["$songs_screen__song_list.item_count()"] + [
            x for i in range(3) for x in (f"$songs_screen__song_list.item({i})",
                                          f"$songs_screen__song_list[{i}].tap()")]
        # the page objects: generated on the list class, calling the same implementation
        doc = load_document(EXAMPLE)
        module = _load(tmp_path, generate_stubs(doc, "example_app.yaml"))
        assert "tap_each" in vars(module.ElementList) and "tap_each" not in vars(module.Button)
        fake = _fake()
        assert module.connect(fake).songs_screen.song_list.tap_each() == 3
        assert [c.method for c in fake.actions] == ["tap", "tap", "tap"]
        # the prompt text
        assert "$list.tap_each(child: element = None) -> int [only on list]: Tap every item" in render_full(doc).prefix
        assert "$list.tap_each(child: element = None) -> int" in render_compressed(doc).prefix
        # completion, hover and signature help
        ws = Workspace()
        path = tmp_path / "s.tap"
        ws.open(path, f"# doc: {EXAMPLE}\n$songs_screen__song_list.tap_each()\n")
        assert "tap_each" in {i.label for i in ws.complete(path, (2, 26))}
        assert "tap_each" not in {i.label for i in ws.complete(path, (2, 1))}  # not a global
        hover = ws.hover(path, (2, 28))
        assert hover is not None and "Tap every item of the list" in hover.contents
        help_ = ws.signature_help(path, (2, 35))
        assert help_ is not None and help_.signatures[0].label == "$list.tap_each(child: element = None) -> int"
    # and it is gone again with the block
    assert REGISTRY.element_method("tap_each") is None
    assert (1, "unknown-method") in _codes(check_source(script, symbols))


def _load(tmp_path: Path, source: str) -> Any:
    path = tmp_path / "pages_with_tap_each.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("pages_with_tap_each", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_registry_flags_can_express_what_later_features_need() -> None:
    """Presence checks, waits, sleep, app control, screenshots, parameters and secrets are one
    entry each: the flags say whether a call acts on the device, needs it, or may navigate."""
    exists = Entry.define("exists() -> bool", Namespace.ELEMENT, "Whether the element is on the screen now.",
                          lambda call: True, needs_device=True, navigates=False)
    sleep = Entry.define("sleep(seconds: float) -> None", Namespace.GLOBAL, "Wait.", lambda call: None)
    token = Entry.define("token(name: str) -> str", Namespace.GLOBAL, "A token of the run.",
                         lambda call: call.host is not None and "s3cret", page_object=False)
    assert not exists.navigates and exists.needs_device and not exists.acts_on_device
    assert not sleep.needs_device and sleep.signature() == "sleep(seconds: float) -> None"
    with REGISTRY.extended(exists, sleep, token):
        r = run_script("print(token('pin'))\nsleep(0.0)\nprint($a__b.exists())", _fake().factory(), output=None)
        assert r.ok and r.printed == ("s3cret", "True")
        # a replaced entry keeps its place, a new one comes last
        names = [e.name for e in REGISTRY.entries(Namespace.GLOBAL)]
        assert names[-1] == "token" and REGISTRY.get(Namespace.GLOBAL, "sleep") is sleep
    # the language's own entries carry the same flags
    real = {name: REGISTRY.element_method(name) or REGISTRY.get(Namespace.GLOBAL, name)
            for name in ("exists", "wait", "wait_gone", "wait_text", "sleep", "launch_app", "screenshot", "param",
                         "secret", "allow")}
    assert all(e is not None and not e.navigates for e in real.values())
    assert not real["exists"].acts_on_device and real["exists"].needs_device  # type: ignore[union-attr]
    assert not real["sleep"].needs_device and real["launch_app"].acts_on_device  # type: ignore[union-attr]
    assert not real["param"].page_object  # type: ignore[union-attr]
    # secret() and allow() are the run's, not a page object's; allow() is left out of models' prompts
    assert not real["secret"].page_object and real["secret"].in_prompts  # type: ignore[union-attr]
    assert not real["allow"].page_object and not real["allow"].in_prompts  # type: ignore[union-attr]


def test_signatures_are_checked_when_entries_are_made() -> None:
    with pytest.raises(ValueError, match="unknown type"):
        Entry.define("f(x: text) -> None", Namespace.GLOBAL, "", lambda call: None)
    with pytest.raises(ValueError, match="no parameter"):
        Entry.define("f(x: str) -> None", Namespace.GLOBAL, "", lambda call: None, params={"y": "?"})
    with pytest.raises(ValueError, match="already registered"):
        REGISTRY.add(REGISTRY.element_method("tap"))  # type: ignore[arg-type]


@pytest.mark.parametrize("namespace,py_type", [(Namespace.STR, str), (Namespace.LIST, list),
                                               (Namespace.TUPLE, tuple), (Namespace.DICT, dict)])
def test_value_method_signatures_agree_with_python(namespace: Namespace, py_type: type) -> None:
    """Where Python publishes a method's signature, the registry takes the same positional
    arguments and no keyword Python does not (``replace(count=)`` as Python 3.13 has it)."""
    P = inspect.Parameter
    compared = 0
    for entry in REGISTRY.entries(namespace):
        assert hasattr(py_type, entry.name), entry.name
        try:
            params = list(inspect.signature(getattr(py_type, entry.name)).parameters.values())[1:]
        except ValueError:
            continue  # a C method without a published signature
        lo = sum(1 for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD) and p.default is P.empty)
        hi = None if any(p.kind == P.VAR_POSITIONAL for p in params) else sum(
            1 for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD))
        keywords = {p.name for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)}
        assert (entry.min_args, entry.max_args) == (lo, hi), entry.name
        assert set(entry.keywords) <= keywords | ({"count"} if entry.name == "replace" else set()), entry.name
        compared += 1
    assert compared >= {Namespace.STR: 20, Namespace.LIST: 8, Namespace.TUPLE: 2, Namespace.DICT: 2}[namespace]


def test_builtins_check_their_arguments_from_the_registry() -> None:
    assert REGISTRY.builtin("len") is not None and REGISTRY.builtin("len").signature() == "len(obj: any, /) -> int"  # type: ignore[union-attr]
    for source, message in [("len()", "len() takes exactly 1 argument (0 given)"),
                            ("sorted([1], foo=1)", "sorted() got an unexpected keyword argument 'foo'"),
                            ("'a'.upper(1)", "upper() takes exactly 0 arguments (1 given)"),
                            ("[].append()", "append() takes exactly 1 argument (0 given)"),
                            ("min()", "min() takes at least 1 argument (0 given)")]:
        r = run_script(source, output=None)
        assert r.error is not None and r.error.message == message, source
    assert run_script("print(dict(a=1), max(1, 2, key=None), 'a b'.split(maxsplit=1))", output=None).printed == (
        "{'a': 1} 2 ['a', 'b']",)
    # and the checker reads the same signatures
    assert _codes(check_source("len()\nsorted([1], foo=1)\n'a'.upper(1)\nprint(dict(a=1))\n", None)) == [
        (1, "arg-count"), (2, "arg-count"), (3, "arg-count")]


def test_param_kinds_render_like_python() -> None:
    sorted_ = REGISTRY.builtin("sorted")
    assert sorted_ is not None
    assert sorted_.signature() == "sorted(items: any, /, *, key: function = None, reverse: bool = False) -> list"
    assert [p.kind for p in sorted_.params] == [ParamKind.POSITIONAL, ParamKind.KEYWORD, ParamKind.KEYWORD]
