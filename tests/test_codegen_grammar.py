"""The answer grammar: every sentence of it parses and names only document elements with legal methods.

Sentences are drawn at random from the same grammar object that prints the GBNF llama.cpp uses
(``Grammar.sample``), so these tests cover the constraint itself, independently of any model.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tapir.codegen import language as L
from tapir.codegen.gbnf import Grammar, alt, chars, lit, opt, ref, rep, seq
from tapir.codegen.script_grammar import answer_grammar, script_grammar, split_answer

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
APPS = ["music", "clock", "contacts", "notes"]
#: Diagnostics the grammar rules out for every element reference it lets through.
ELEMENT_CODES = {"syntax", "unsupported", "unknown-element", "illegal-action"}


@pytest.fixture(scope="module", params=APPS)
def doc(request: pytest.FixtureRequest) -> L.AppDocument:
    return L.load_document(SAMPLES / request.param / f"{request.param}.yaml")


def test_gbnf_text_of_small_grammar() -> None:
    g = Grammar("root")
    g.rule("root", seq("x = ", ref("num"), opt(seq(".", rep(chars("0-9"), 1, 2))), "\n"))
    g.rule("num", alt("0", seq(chars("1-9"), rep(chars("0-9"), 0, 3))))
    text = g.to_gbnf()
    assert text.splitlines() == [
        'root ::= "x = " num ("." [0-9]{1,2})? "\\n"',
        'num ::= "0" | [1-9] [0-9]{0,3}',
    ]
    rng = random.Random(3)
    for _ in range(50):
        assert re.fullmatch(r"x = (0|[1-9]\d{0,3})(\.\d{1,2})?\n", g.sample(rng))


def test_grammar_refuses_undefined_and_misnamed_rules() -> None:
    g = Grammar("root")
    g.rule("root", ref("missing"))
    with pytest.raises(ValueError, match="undefined grammar rules: missing"):
        g.to_gbnf()
    with pytest.raises(ValueError, match="lowercase"):
        g.rule("Bad_Name", lit("x"))
    with pytest.raises(ValueError, match="defined twice"):
        g.rule("root", lit("y"))


def test_element_literals_are_exactly_the_documents(doc: L.AppDocument) -> None:
    text = answer_grammar(doc).to_gbnf()
    named = set(re.findall(r'"\$([A-Za-z_][\w%]*)', text))
    assert named == {e.name for e in doc.elements}


def test_methods_in_the_grammar_are_legal_for_each_element(doc: L.AppDocument) -> None:
    text = answer_grammar(doc).to_gbnf()
    for e in doc.elements:
        if e.kind not in L.LIST_KINDS and "set_text" not in {m.name for m in L.methods_legal_on(e.kind)}:
            assert f'"${e.name}.set_text' not in text
        for m in re.findall(rf'"\${e.name}\.([a-z_]+)\(', text):
            assert m in {x.name for x in L.methods_legal_on(e.kind)}, (e.name, m)


def test_random_answers_parse_and_name_only_legal_elements(doc: L.AppDocument) -> None:
    g = answer_grammar(doc)
    table = L.symbols(doc)
    rng = random.Random(11)
    for _ in range(25):
        answer = split_answer(g.sample(rng, max_depth=11))
        assert answer.plan and answer.elements and answer.script.strip()
        assert "`" not in answer.script  # a fence inside the script would end it early
        assert L.parses(answer.script) is None, answer.script
        codes = {i.code for i in L.check(answer.script, table)}
        assert not codes & ELEMENT_CODES, (codes, answer.script)
        assert set(answer.elements) <= {e.name for e in doc.elements}


def test_a_list_is_tapped_only_through_one_of_its_items(doc: L.AppDocument) -> None:
    """`$list.tap()` taps whichever item sits in the list's middle; a script picks an item
    (`$list[0].tap()`, `$list.match("DCIM").tap()`), which the grammar still allows."""
    lists = [e.name for e in doc.elements if e.kind in L.LIST_KINDS]
    if not lists:
        pytest.skip("the document has no list")
    g = answer_grammar(doc)
    g.root = "el-call-1"
    rng = random.Random(7)
    calls = [g.sample(rng, max_depth=8) for _ in range(800)]
    names = "|".join(lists)
    assert not [c for c in calls if re.match(rf"\$({names})\.(long_)?tap\(", c)]
    assert any(re.match(rf"\$({names})(\[|\.match\().*\)\.(long_)?tap\(", c) for c in calls)
    assert any(re.match(rf"\$({names})\.scroll\(", c) for c in calls)  # its own methods stay


def test_names_are_never_keywords(doc: L.AppDocument) -> None:
    g = answer_grammar(doc)
    # Draw many names from the name rule alone: a keyword would be a syntax error in a script.
    g.root = "name"
    rng = random.Random(5)
    import keyword

    names = {g.sample(rng, max_depth=6) for _ in range(1500)}
    assert names and not names & set(keyword.kwlist)
    assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", n) for n in names)
    # short ones that start like keywords are there (the trie allows `i`, `fo`, `iff`...)
    assert {"i", "x"} & names


def test_script_grammar_has_no_plan() -> None:
    doc = L.load_document(SAMPLES / "music" / "music.yaml")
    text = script_grammar(doc).to_gbnf()
    assert text.startswith('root ::= "```python\\n" body "```"')


@pytest.mark.parametrize(("text", "plan", "elements", "script"), [
    ("Plan: tap it\nElements: $a__b, $c__d\n```python\n$a__b.tap()\n```", "tap it", ("a__b", "c__d"),
     "$a__b.tap()\n"),
    ("```\nback()\n```", "", (), "back()\n"),
    ("back()", "", (), "back()\n"),
    ("Plan: x\nElements: $a__b\n```python\n$a__b.tap()\n", "x", ("a__b",), "$a__b.tap()\n"),
])
def test_split_answer(text: str, plan: str, elements: tuple[str, ...], script: str) -> None:
    a = split_answer(text)
    assert (a.plan, a.elements, a.script) == (plan, elements, script)
