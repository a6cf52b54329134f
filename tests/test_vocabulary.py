"""Appium's and Maestro's words get a hint naming the Tapir call, in the checker and at run time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tapir.core.errors import ScriptError
from tapir.docgen.symbols import load_symbols
from tapir.dsl.checker import check_source
from tapir.dsl.fake_runtime import FakeElement, FakeRuntime
from tapir.dsl.interpreter import run_script
from tapir.dsl.registry import REGISTRY, Namespace
from tapir.dsl.symbols import SymbolTable
from tapir.dsl.types import Kind
from tapir.dsl.vocabulary import _ELEMENT_WORDS, _GLOBAL_WORDS, foreign

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def symbols() -> SymbolTable:
    return load_symbols(GOLDEN / "example_app.yaml")


@pytest.mark.parametrize(("word", "meant"), [
    ("click", "tap"), ("sendKeys", "set_text"), ("send_keys", "set_text"), ("type", "set_text"),
    ("longPress", "long_tap"), ("long_click", "long_tap"), ("swipe", "scroll"), ("getText", "get_text"),
    ("text", "get_text"), ("isDisplayed", "exists"), ("assertNotVisible", "wait_gone"),
])
def test_an_element_method_of_appium_or_maestro_is_named_in_tapir(symbols: SymbolTable, word: str,
                                                                  meant: str) -> None:
    source = f"$home_screen__songs_button.{word}()\n"
    [d] = check_source(source, symbols)
    assert d.code == "unknown-method"
    assert d.message == f"elements have no method '{word}'; did you mean '{meant}'?"
    assert d.suggestions == (meant,)
    assert d.hint is not None and f"$element.{meant}(" in d.hint
    # the caret is under the method name, as for a typo
    assert (d.span.line, d.span.column) == (1, len("$home_screen__songs_button.") + 1)
    assert d.span.end_column - d.span.column == len(word)


def test_a_global_word_is_named_in_tapir(symbols: SymbolTable) -> None:
    [d] = check_source("pressBack()\n", symbols)
    assert (d.code, d.message) == ("unknown-function", "unknown function 'pressBack'; did you mean 'back'?")
    assert d.hint == "'pressBack' is a word of Maestro; in Tapir: back()"


def test_a_typo_still_gets_the_spelling_hint(symbols: SymbolTable) -> None:
    [d] = check_source("$home_screen__songs_button.long_tpa()\n", symbols)
    assert d.message == "elements have no method 'long_tpa'; did you mean long_tap()?"


def test_every_word_offers_only_what_the_registry_has() -> None:
    for table, namespace in ((_ELEMENT_WORDS, Namespace.ELEMENT), (_GLOBAL_WORDS, Namespace.GLOBAL)):
        for word in table:
            found = foreign(word, namespace)
            if found is not None:
                assert REGISTRY.get(namespace, found.name) is not None or REGISTRY.builtin(found.name) is not None
                assert found.call.startswith(found.name + "(")
    # every element word is offered: its candidates are the element API of today
    assert all(foreign(w, Namespace.ELEMENT) is not None for w in _ELEMENT_WORDS)
    assert foreign("tap", Namespace.ELEMENT) is None and foreign("nonsense", Namespace.GLOBAL) is None


def test_the_run_time_error_has_the_hint_too() -> None:
    fake = FakeRuntime({"home__go": FakeElement(Kind.BUTTON)})
    # without a document nothing is checked first: the interpreter itself meets 'click'
    result = run_script("$home__go.click()\n", output=None, runtime_factory=fake.factory())
    assert isinstance(result.error, ScriptError)
    assert result.error.message == "element has no method 'click'; did you mean 'tap'?"
    assert result.error.hint == "'click' is a word of Appium and Maestro; in Tapir: $element.tap()"
    assert result.error.span is not None and result.error.span.line == 1
