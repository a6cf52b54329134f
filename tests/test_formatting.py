"""``tapir fmt``: one layout, comments kept, meaning unchanged, formatting twice changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from cpython_oracle import tapir_form
from hypothesis import HealthCheck, given, settings
from test_parser_properties import PROGRAMS

from tapir.cli import main
from tapir.dsl.parser import parse
from tapir.service import format_source

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*REPO.glob("samples/*/*.tap"), *REPO.glob("tests/golden/checker/*.tap")])

MESSY = '''\
# doc: app.yaml
"""Add a song."""
import_count=0 #counts
def add(song,playlist = "Emil" ) :
  #   the menu first
  song.tap( $songs__menu )
  $popup__add.tap()
  return  [ x*2 for x in range( 3 ) if x>-1 ]



for s in $songs__list :
        if s.get_text( $songs__title )==  "Rock" : add(s)
        # comment at the block's level
result = add(1,
             2)
d = {'a' :1,
     'b':[1 ,2][0 : 1]}
x = - 1 ; y = not x
'''

FORMATTED = '''\
# doc: app.yaml
"""Add a song."""
import_count = 0  # counts


def add(song, playlist="Emil"):
    #   the menu first
    song.tap($songs__menu)
    $popup__add.tap()
    return [x * 2 for x in range(3) if x > -1]


for s in $songs__list:
    if s.get_text($songs__title) == "Rock": add(s)
    # comment at the block's level
result = add(1,
             2)
d = {'a': 1,
     'b': [1, 2][0:1]}
x = -1; y = not x
'''


def test_a_messy_script_gets_the_one_layout_and_keeps_its_comments() -> None:
    result = format_source(MESSY)
    assert result.text == FORMATTED
    assert format_source(FORMATTED).text == FORMATTED and not format_source(FORMATTED).changed


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_formatting_keeps_the_meaning_and_is_stable(path: Path) -> None:
    source = path.read_text()
    result = format_source(source)
    assert result.text is not None
    assert tapir_form(parse(result.text), spans=False) == tapir_form(parse(source), spans=False)
    assert format_source(result.text).text == result.text
    comments = [line.split("#", 1)[1].strip() for line in source.splitlines() if line.lstrip().startswith("#")]
    assert all(c in result.text for c in comments)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_formatting_generated_programs_keeps_their_meaning(source: str) -> None:
    result = format_source(source)
    assert result.text is not None
    assert tapir_form(parse(result.text), spans=False) == tapir_form(parse(source), spans=False)
    assert format_source(result.text).text == result.text


@pytest.mark.parametrize("source,expected", [
    ('launch_app(args = {"n": 1})\n', 'launch_app(args={"n": 1})\n'),
    ("f(a=[1], b = (2,))\n", "f(a=[1], b=(2,))\n"),
    ("def g(a = [1]):\n    return a\n", "def g(a=[1]):\n    return a\n"),
    ("x=[1]\n", "x = [1]\n"),
])
def test_a_keyword_s_value_in_brackets_sticks_to_its_equal_sign(source: str, expected: str) -> None:
    assert format_source(source).text == expected


def test_a_script_with_syntax_errors_is_left_alone() -> None:
    result = format_source("x = = 1\n")
    assert result.text is None and result.errors[0].code == "syntax" and not result.changed


def test_tapir_fmt_check_diff_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messy = tmp_path / "a.tap"
    messy.write_text(MESSY)
    clean = tmp_path / "sub" / "b.tap"
    clean.parent.mkdir()
    clean.write_text(FORMATTED)
    assert main(["fmt", "--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"would reformat {messy}" in err and "1 script would be reformatted, 1 unchanged" in err
    assert messy.read_text() == MESSY  # --check writes nothing
    assert main(["fmt", "--diff", str(messy)]) == 0
    out = capsys.readouterr().out
    assert "-import_count=0 #counts" in out and "+import_count = 0  # counts" in out
    assert main(["fmt", str(tmp_path)]) == 0
    assert messy.read_text() == FORMATTED and f"reformatted {messy}" in capsys.readouterr().err
    assert main(["fmt", "--check", str(tmp_path)]) == 0
    broken = tmp_path / "c.tap"
    broken.write_text("if x\n")
    assert main(["fmt", str(broken)]) == 1
    assert "c.tap:1:5: error[syntax]" in capsys.readouterr().err and broken.read_text() == "if x\n"
    assert main(["fmt", str(tmp_path / "nope.tap")]) == 2


def test_the_samples_are_formatted() -> None:
    # every sample, the suite's task scripts too (generated/ is written by docgen, which formats it)
    scripts = [p for p in REPO.glob("samples/**/*.tap") if "generated" not in p.parts]
    assert len(scripts) > 84
    assert [str(p) for p in scripts if format_source(p.read_text()).changed] == []
