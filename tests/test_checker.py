"""The static checker: clean scripts stay clean, wrong scripts get exactly the expected diagnostics.

Each `tests/golden/checker/bad_*.tap` marks the lines that must be reported with a trailing
``# expect: code[, code]``; no other diagnostic may appear. ``ok_*.tap`` must check clean.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tapir.docgen.symbols import load_symbols
from tapir.dsl.checker import Diagnostic, check, check_source, doc_comment
from tapir.dsl.parser import parse
from tapir.dsl.symbols import SymbolTable

GOLDEN = Path(__file__).parent / "golden"
CASES = GOLDEN / "checker"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>[\w\-, ]+)$")


@pytest.fixture(scope="module")
def symbols() -> SymbolTable:
    return load_symbols(GOLDEN / "example_app.yaml")


def _expected(source: str) -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(source.splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(number, code.strip()) for code in m.group("codes").split(",")}
    return out


@pytest.mark.parametrize("path", sorted(CASES.glob("ok_*.tap")), ids=lambda p: p.name)
def test_clean_scripts_have_no_diagnostics(path: Path, symbols: SymbolTable) -> None:
    source = path.read_text()
    assert check_source(source, symbols, str(path)) == []


@pytest.mark.parametrize("path", sorted(CASES.glob("bad_*.tap")), ids=lambda p: p.name)
def test_wrong_scripts_get_exactly_the_expected_diagnostics(path: Path, symbols: SymbolTable) -> None:
    source = path.read_text()
    expected = _expected(source)
    assert expected, "a bad_ case must expect something"
    found = {(d.span.line, d.code) for d in check_source(source, symbols, str(path))}
    assert found == expected


def test_a_diagnostic_has_span_severity_code_and_suggestions(symbols: SymbolTable) -> None:
    source = "x = 1\n$songs_screen__song_lst.scroll()\n"
    [d] = check_source(source, symbols)
    assert isinstance(d, Diagnostic)
    assert (d.span.line, d.span.column, d.span.end_column) == (2, 1, len("$songs_screen__song_lst") + 1)
    assert d.severity == "error" and d.code == "unknown-element"
    assert d.suggestions[0] == "$songs_screen__song_list"
    rendered = d.render(source, "s.tap")
    assert rendered.splitlines()[0].startswith("s.tap:2:1: error[unknown-element]:")
    assert rendered.splitlines()[-1] == "    " + "^" * len("$songs_screen__song_lst")


def test_syntax_errors_become_diagnostics(symbols: SymbolTable) -> None:
    [d] = check_source("if True\n    pass\n", symbols)
    assert d.code == "syntax" and d.span.line == 1 and d.severity == "error"
    [d] = check_source("import os\n", symbols)
    assert d.code == "unsupported"


def test_without_a_document_only_document_free_checks_run() -> None:
    module = parse("$anything__at_all.set_text('x')\nfor a in $b__c:\n    a.tap()\nprint(nothing)\n")
    assert [(d.span.line, d.code) for d in check(module, None)] == [(4, "unknown-name")]


def test_one_unknown_element_does_not_cascade(symbols: SymbolTable) -> None:
    source = "x = $home_screen__nope\nx.set_text('a')\nfor y in x:\n    y.match('z')\n"
    assert [d.code for d in check_source(source, symbols)] == ["unknown-element"]


def test_loops_see_assignments_from_earlier_rounds(symbols: SymbolTable) -> None:
    source = "n = 0\nwhile n < 3:\n    if n > 0:\n        print(prev)\n    prev = n\n    n += 1\n"
    assert check_source(source, symbols) == []


def test_types_flow_through_variables_and_merge_at_branches(symbols: SymbolTable) -> None:
    source = (
        "songs = $songs_screen__song_list\n"
        "first = songs.match('Emil')\n"
        "first.tap($songs_screen__song_menu_button)\n"
        "b = $home_screen__songs_button\n"
        "b.set_text('x')\n"
        "c = b if len(songs) else $home_screen__search_input\n"
        "c.set_text('fine: c may be the input')\n"
    )
    assert [(d.span.line, d.code) for d in check_source(source, symbols)] == [(5, "illegal-action")]


def test_doc_comment() -> None:
    assert doc_comment("# doc: samples/music/music.yaml\nx = 1\n") == "samples/music/music.yaml"
    assert doc_comment("#doc:app.yaml") == "app.yaml"
    assert doc_comment("x = 1\n# doc: app.yaml\n") is None
    # a byte-order mark some editors write, and CRLF line ends, do not hide the comment
    assert doc_comment("\ufeff# doc: app.yaml\r\nx = 1\r\n") == "app.yaml"


def test_a_long_flat_sum_is_checked_as_deep_as_it_runs() -> None:
    # each `+` nests one level deeper in the AST: 3,000 terms run at the default budgets
    assert check_source("x = " + "+".join(["1"] * 3000) + "\nprint(x)\n", None) == []


def test_nesting_beyond_the_stack_is_a_diagnostic_not_a_crash() -> None:
    limit = sys.getrecursionlimit()
    found = check_source("y = 1\n\nx = " + "+".join(["1"] * 20_000) + "\n", None)
    assert [(d.code, d.span.line, d.span.column) for d in found] == [("too-deep", 3, 1)]
    assert sys.getrecursionlimit() == limit


def test_the_workspace_finds_the_document_from_the_first_line(tmp_path: Path) -> None:
    from tapir.service import Workspace

    ws = Workspace()
    result = ws.check(CASES / "bad_elements.tap")
    assert result.document is not None and result.document.path == CASES / "../example_app.yaml"
    assert {(d.span.line, d.code) for d in result.diagnostics} == _expected(result.source)
    # An explicit document wins; a compiled symbol table serves as well as the YAML.
    from tapir.docgen.compile import compile_document

    compiled = compile_document(GOLDEN / "example_app.yaml", ("symbols",), out_dir=tmp_path)
    table = tmp_path / "example_app.symbols.json"
    table.write_text(compiled.files["example_app.symbols.json"])
    script = tmp_path / "s.tap"
    script.write_text("$home_screen__songs_button.set_text('x')\n")
    assert [d.code for d in ws.check(script, doc=table).diagnostics] == ["illegal-action"]
    # no document: element checks cannot run, and the script cannot be run either
    no_doc = ws.check(script)
    assert no_doc.symbols is None and [d.code for d in no_doc.diagnostics] == ["no-document"]
    script.write_text("# doc: nowhere.yaml\nback()\n")
    [missing] = ws.check(script).diagnostics
    assert missing.code == "document-missing" and (missing.span.line, missing.span.column) == (1, 8)


def test_cli_check_exit_status_and_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tapir.cli import main

    assert main(["check", str(CASES / "ok_everything.tap")]) == 0
    assert "ok (against" in capsys.readouterr().out
    bad = CASES / "bad_elements.tap"
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2:1: error[unknown-element]:" in err and "did you mean $home_screen__songs_button" in err
    assert main(["check", str(bad), "--json"]) == 1
    reported = {(d["line"], d["code"]) for d in json.loads(capsys.readouterr().out)}
    assert reported == _expected(bad.read_text())
    # --doc for a script without the first-line comment; a usage error for a missing file.
    script = tmp_path / "s.tap"
    script.write_text("$home_screen__search_input.set_text('Emil')\n$home_screen__songs_button.scroll()\n")
    assert main(["check", str(script)]) == 1  # no document: the script could not run either
    assert "error[no-document]" in capsys.readouterr().err
    assert main(["check", str(script), "--doc", str(GOLDEN / "example_app.yaml")]) == 1
    assert "scroll() is not possible" in capsys.readouterr().err
    assert main(["check", str(script), "--doc", str(tmp_path / "missing.yaml")]) == 2
    assert main(["check", str(tmp_path / "missing.tap")]) == 2
    script.write_text("if x\n")
    assert main(["check", str(script)]) == 1
    script.write_text("# doc: broken.yaml\nback()\n")
    (tmp_path / "broken.yaml").write_text((GOLDEN / "docs" / "broken.yaml").read_text())
    assert main(["check", str(script)]) == 1
    assert "unknown kind 'slider'" in capsys.readouterr().err
