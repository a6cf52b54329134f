"""Parsing again after an edit (tapir.service.reparse) gives exactly what a parse of the whole
text gives (tree, spans with offsets, errors, tokens), while reusing the statements the edit
did not touch."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tapir.dsl import ast as A
from tapir.dsl.parser import ParseResult, parse_tolerant
from tapir.service import Workspace
from tapir.service.reparse import SplicedParse, reparse

REPO = Path(__file__).resolve().parent.parent
SAMPLES = sorted((REPO / "samples").glob("**/*.tap"))
#: What random edits insert: pieces that open and close blocks, brackets, strings, comments.
PIECES = ["\n", "x", "(", ")", ":", "  ", "\t", "if x:\n", "else:\n", "    y = 1\n", "'", '"""', "'''", "#c", "$a__b.",
          "def f(", "\\\n", "for i in x:\n", "]", ",", "elif y:\n", "return 1\n", "break\n", "import os\n", "{", "f'{",
          '"', "\n\n", "pass\n"]


def positions(node: A.Node) -> list[tuple[str, int, int, int, int, int, int]]:
    return [(type(n).__name__, n.span.line, n.span.column, n.span.end_line, n.span.end_column, n.span.offset,
             n.span.end_offset) for n in node.walk()]


def assert_same(got: ParseResult, want: ParseResult) -> None:
    assert got.text == want.text
    assert got.module == want.module
    assert positions(got.module) == positions(want.module)  # (spans compare without their offsets)
    assert got.errors == want.errors
    assert [(d.span.offset, d.span.end_offset) if d.span else None for d in got.errors] == \
        [(d.span.offset, d.span.end_offset) if d.span else None for d in want.errors]
    assert got.tokens == want.tokens
    assert [(t.span.offset, t.span.end_offset) for t in got.tokens] == \
        [(t.span.offset, t.span.end_offset) for t in want.tokens]


@pytest.mark.parametrize("seed", range(2))
def test_random_edits_of_every_sample_parse_as_the_whole_text_does(seed: int) -> None:
    rng = random.Random(seed)
    for path in SAMPLES:
        text = path.read_text(encoding="utf-8")
        previous: ParseResult = parse_tolerant(text)
        for _ in range(12):
            i = rng.randrange(len(text) + 1)
            j = min(len(text), i + rng.choice([0, 0, 1, 2, 5, 20]))
            text = text[:i] + (rng.choice(PIECES) if rng.random() < 0.8 else "") + text[j:]
            again = reparse(previous, text)
            assert_same(again, parse_tolerant(text))
            previous = again


def test_typing_a_script_character_by_character_parses_as_the_whole_text_does() -> None:
    target = (REPO / "samples" / "music" / "longest_song.tap").read_text(encoding="utf-8")
    previous: ParseResult = parse_tolerant("")
    for end in range(0, len(target) + 1, 7):
        text = target[:end]
        previous = reparse(previous, text)
        assert_same(previous, parse_tolerant(text))


def test_an_edit_reuses_the_statements_before_it_and_moves_those_after_it() -> None:
    lines = [f"x{i} = {i}" for i in range(200)]
    first = reparse(None, "\n".join(lines) + "\n")
    old, lines[100] = lines[100], "changed = (1 +\n    2)"
    again = reparse(first, "\n".join(lines) + "\n")
    assert isinstance(again, SplicedParse)
    # statement 99 ends where the edit starts, so it is read again too
    assert all(a is b for a, b in zip(again.module.body[:99], first.module.body[:99], strict=True))
    moved = again.module.body[101]
    grown = len(lines[100]) - len(old)
    assert (moved.span.line, moved.span.offset) == (103, first.module.body[101].span.offset + grown)
    assert_same(again, parse_tolerant("\n".join(lines) + "\n"))


def test_a_triple_quoted_string_opened_by_an_edit_is_read_to_where_it_closes() -> None:
    text = 'a = 1\nb = "x"\nc = 2\nd = """\n"""\n'
    edited = text.replace('b = "x"', 'b = """x"')
    assert_same(reparse(parse_tolerant(text), edited), parse_tolerant(edited))


def test_the_workspace_parses_only_what_an_edit_touched(tmp_path: Path) -> None:
    path = tmp_path / "big.tap"
    lines = [f"v{i} = {i}" for i in range(300)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ws = Workspace()
    before = ws.view(path)
    lines[150] = "v150 = undefined_name"
    ws.open(path, "\n".join(lines) + "\n")
    after = ws.view(path)
    assert after.module.body[0] is before.module.body[0]
    assert [d.code for d in after.diagnostics] == ["unknown-name"]
    assert after.diagnostics[0].span is not None and after.diagnostics[0].span.line == 151
