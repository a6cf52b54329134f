"""The parser against 3,437 machine-written upstream scripts (AutoDroid-V2 synthetic solutions).

Every script is either parsed or refused with a Tapir error; what is parsed must agree with
CPython's parser node for node and position for position; what is refused is refused for a
reason a person would give (the tally below was read by eye, see bench/parse_corpus.py).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from cpython_oracle import python_form, substitute_elements, tapir_form

from tapir.core.errors import TapirSyntaxError, UnsupportedConstruct
from tapir.dsl.ast import Module
from tapir.dsl.parser import parse

pytestmark = pytest.mark.upstream

# Measured: 3,378 of 3,437 parse. The 59 others use what Tapir refuses (try, raise, import,
# generator expressions, annotations, else on loops) or are malformed (stray indentation,
# `; if`, text after `)`, unterminated strings, placeholders such as `<idx>`).
MIN_PARSED = 3378
EXPECTED_REASONS = {
    "'try' is not supported": 14,
    "unexpected indent": 13,
    "generator expressions are not supported": 6,
    "'if' cannot follow ';'": 6,
    "'else' on a 'for' or 'while' loop": 4,
    "found '{'": 4,  # `$font_size_{}%`: a template placeholder left in an element name
    "'else' must start a new line": 2,
    "'raise' is not supported": 2,
    "'from ... import' is not allowed": 1,
    "'return' outside a function": 1,
    "found name 'tap'": 1,  # `tap($a)tap($b)` on one line
    "unexpected character after '\\'": 1,  # a literal `\n` between two statements
    "found '<'": 2,  # `tap(<element_selector_for_center_alignment>)`
    "unterminated string": 1,  # a newline inside '...'
    "annotations ('name: type')": 1,
}


Outcome = tuple[str, str, "Module | TapirSyntaxError"]


@pytest.fixture(scope="module")
def corpus(upstream: Path) -> list[Outcome]:
    """(name, script, the module or the syntax error) for every script; parsed once."""
    scripts = []
    for path in sorted((upstream / "synthetic").glob("*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                scripts.append((f"{path.name}:{i}", json.loads(line)["solution"]))
    if not scripts:
        pytest.skip("no synthetic scripts in the upstream folder")
    outcomes: list[Outcome] = []
    for name, source in scripts:
        try:
            outcomes.append((name, source, parse(source, name)))
        except TapirSyntaxError as exc:  # any other exception fails every test here
            outcomes.append((name, source, exc))
    return outcomes


def test_every_script_parses_or_is_refused_in_words(corpus: list[Outcome]) -> None:
    parsed = 0
    reasons: Counter[str] = Counter()
    for name, _source, exc in corpus:
        if isinstance(exc, TapirSyntaxError):
            assert exc.span is not None and exc.filename == name
            head, quoted, caret = exc.render().splitlines()[:3]
            assert head.startswith(f"{name}:{exc.span.line}:{exc.span.column}: ")
            assert quoted.strip() and "^" in caret
            assert "Token(" not in exc.message and "$END" not in exc.message
            matched = [r for r in EXPECTED_REASONS if r in exc.message]
            assert matched, f"unexpected kind of rejection: {exc.render()}"
            reasons[matched[0]] += 1
        else:
            parsed += 1
    assert parsed >= MIN_PARSED
    assert dict(reasons) == EXPECTED_REASONS


def test_parsed_scripts_agree_with_cpython(corpus: list[Outcome]) -> None:
    """Same tree, same spans as CPython's `ast` for the Python text with `$x` spelled `Жx`."""
    compared = 0
    for name, source, module in corpus:
        if not isinstance(module, Module):
            continue
        text = source.replace("\r\n", "\n")
        assert tapir_form(module) == python_form(substitute_elements(text, module)), name
        compared += 1
    assert compared >= MIN_PARSED


def test_refusals_of_python_features_are_unsupported_construct(corpus: list[Outcome]) -> None:
    kinds: Counter[str] = Counter()
    for _name, _source, exc in corpus:
        if isinstance(exc, UnsupportedConstruct):
            kinds[exc.message.split(" is")[0].split(" are")[0]] += 1
    assert kinds["'try'"] == 14 and kinds["generator expressions"] == 6 and kinds["'raise'"] == 2
