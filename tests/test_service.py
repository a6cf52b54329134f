"""The language service's Workspace: document lookup (# doc:, tapir.toml, --doc), the document
cache, one check for `tapir check`, `run` and `test`, and every editor query."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parser_properties import TAPIR_PIECES

from tapir.cli import main
from tapir.core.positions import LineIndex, Position, Span
from tapir.dsl.registry import REGISTRY
from tapir.service import CompletionKind, ConfigError, Workspace, load_config

GOLDEN = Path(__file__).parent / "golden"

DOC = """\
app: {package: org.example.shop, name: Shop, start_screen: home}
screens:
  home:
    description: The shop's front page.
    signature: {activity: .Home}
    elements:
      home__search:
        kind: input
        description: The search field.
        identifiers: ["//node[@resource-id='search']"]
      home__go:
        kind: button
        description: Starts the search.
        identifiers: ["//node[@text='Go']"]
        effect: tap to show the results
        leads_to: results
  results:
    description: What the search found.
    signature: {activity: .Results}
    elements:
      results__items:
        kind: list
        item_kind: button
        description: One row per product.
        identifiers: ["//node[@resource-id='items']"]
        options: [Red shoes, Blue hat, Green scarf]
        paths:
          - [home__go.tap()]
      results__price:
        kind: text
        description: The price of a product.
        identifiers: ["//node[@resource-id='price']"]
        item_of: results__items
      results__sort:
        kind: button
        description: Sorts the results.
        identifiers: ["//node[@text='Sort']"]
"""


@pytest.fixture()
def shop(tmp_path: Path) -> Path:
    (tmp_path / "shop.yaml").write_text(DOC)
    return tmp_path


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def cursor(text: str) -> tuple[str, tuple[int, int]]:
    """The text without its '|' and the (line, column) where it was."""
    offset = text.index("|")
    clean = text[:offset] + text[offset + 1 :]
    pos = LineIndex(clean).position(offset)
    return clean, (pos.line, pos.column)


# ---------------------------------------------------------------------------------------------
# Documents and the project


def test_tapir_toml_maps_scripts_to_documents_and_the_comment_wins(shop: Path) -> None:
    write(shop, "tapir.toml", '[documents]\n"flows/**/*.tap" = "shop.yaml"\n"other/*.tap" = "missing.yaml"\n')
    deep = write(shop, "flows/a/b/find.tap", "$home__search.set_text('x')\n")
    ws = Workspace()
    ref = ws.document_for(deep)
    assert ref is not None and ref.origin == "config" and ref.path == shop / "shop.yaml"
    assert ws.check(deep).ok
    # the first-line comment wins over tapir.toml, --doc over both
    named = write(shop, "flows/named.tap", "# doc: ../nowhere.yaml\nback()\n")
    assert ws.document_for(named).origin == "comment"  # type: ignore[union-attr]
    assert ws.document_for(named, doc=shop / "shop.yaml").origin == "option"  # type: ignore[union-attr]
    # a glob's '*' stays within its folder
    assert ws.document_for(write(shop, "other/x/deeper.tap", "x = 1\n")) is None
    [missing] = ws.check(write(shop, "other/y.tap", "back()\n")).diagnostics
    assert missing.code == "document-missing" and "missing.yaml" in missing.message


def test_an_invalid_tapir_toml_is_a_problem_with_its_line(shop: Path) -> None:
    write(shop, "tapir.toml", '[documents]\n"*.tap" = "shop.yaml"\n\n[check]\nwarnings = "loud"\ncolor = 1\n')
    with pytest.raises(ConfigError) as info:
        load_config(shop / "tapir.toml")
    assert [(p.line, p.code) for p in info.value.problems] == [(5, "config"), (6, "config")]
    result = Workspace().check(write(shop, "s.tap", "x = 1\n"))
    assert [d.code for d in result.diagnostics] == ["config"]
    assert result.related[0].path.endswith("tapir.toml") and len(result.related[0].diagnostics) == 2
    write(shop, "tapir.toml", "[documents\n")
    with pytest.raises(ConfigError) as broken:
        load_config(shop / "tapir.toml")
    assert broken.value.problems[0].line == 1 and "not valid TOML" in broken.value.problems[0].message


def test_documents_are_loaded_once_per_change_of_their_file(shop: Path) -> None:
    script = write(shop, "s.tap", "# doc: shop.yaml\n$home__go.tap()\n")
    ws = Workspace()
    ws.check(script)
    ws.check(script)
    ws.complete(script, (2, 3))
    assert ws.documents.loads == 1
    doc = shop / "shop.yaml"
    doc.write_text(DOC.replace("home__go:", "home__start:").replace("home__go.tap", "home__start.tap"))
    stamp = time.time() + 5
    os.utime(doc, (stamp, stamp))
    [d] = ws.check(script).diagnostics
    assert ws.documents.loads == 2 and d.code == "unknown-element" and "$home__start" in d.suggestions
    assert ws.dependents(doc) == [script.resolve()]


def test_a_broken_document_is_a_diagnostic_on_the_line_naming_it(shop: Path) -> None:
    (shop / "broken.yaml").write_text((GOLDEN / "docs" / "broken.yaml").read_text())
    script = write(shop, "s.tap", "# doc: broken.yaml\nback()\n")
    result = Workspace().check(script)
    [d] = result.diagnostics
    assert d.code == "document" and d.span is not None and (d.span.line, d.span.column) == (1, 8)
    assert "7 errors" in d.message
    assert [r.path for r in result.related] == [str(shop / "broken.yaml")]
    assert any("unknown kind 'slider'" in p.message for p in result.related[0].diagnostics)


# ---------------------------------------------------------------------------------------------
# One check for check, run and test


def test_check_reports_three_independent_mistakes_including_a_syntax_error(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    script = write(tmp_path, "three.tap", "# doc: ../golden/example_app.yaml\n"
                   "$home_screen__song_button.tap()\nif x\n    print(1)\nlen($home_screen__songs_button)\n")
    script = write(tmp_path, "three.tap", script.read_text().replace("../golden/example_app.yaml",
                                                                     str(GOLDEN / "example_app.yaml")))
    assert main(["check", str(script)]) == 1
    err = capsys.readouterr().err
    assert "three.tap:2:1: error[unknown-element]" in err
    assert "three.tap:3:5: error[syntax]: expected ':' after the if condition" in err
    assert "three.tap:5:5: error[not-a-list]" in err
    assert "3 errors, 0 warnings in 1 script" in err


def test_run_refuses_what_check_reports_before_touching_a_device(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    script = write(tmp_path, "s.tap", f"# doc: {GOLDEN / 'example_app.yaml'}\nprint('started')\n"
                   "$songs_screen__song_list[0].tap($home_screen__songs_button)\n")
    assert main(["check", str(script)]) == 1
    checked = capsys.readouterr().err
    # a device that cannot exist: the run must stop before it would be looked for
    assert main(["run", str(script), "--device", "emulator-9999"]) == 1
    out = capsys.readouterr()
    assert "started" not in out.out and "wrong-child" in out.err and "not run" in out.err
    assert checked.splitlines()[0] in out.err
    # without a document, check and run agree too
    bare = write(tmp_path, "bare.tap", "print('started')\n$home__x.tap()\n")
    assert main(["check", str(bare)]) == 1
    assert "error[no-document]" in capsys.readouterr().err
    assert main(["run", str(bare)]) == 1
    out = capsys.readouterr()
    assert "started" not in out.out and "error[no-document]" in out.err


def test_warnings_are_shown_and_do_not_stop_a_run_unless_the_project_says(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    script = write(tmp_path, "w.tap", "len = 3\nprint(len)\n")
    assert main(["check", str(script)]) == 0
    assert "warning[shadows-builtin]" in capsys.readouterr().err
    assert main(["run", str(script)]) == 0
    out = capsys.readouterr()
    assert out.out == "3\n" and "warning[shadows-builtin]" in out.err
    write(tmp_path, "tapir.toml", '[check]\nwarnings = "error"\n')
    assert main(["run", str(script)]) == 1
    assert "not run" in capsys.readouterr().err
    assert main(["check", str(script)]) == 1


def test_tapir_test_fails_a_script_check_refuses_without_starting_a_device(tmp_path: Path) -> None:
    from tapir.runner.suite import RunOptions, run_tests

    doc = GOLDEN / "example_app.yaml"
    bad = write(tmp_path, "bad_test.tap",
                f"# doc: {doc}\n$songs_screen__song_list[0].tap($home_screen__songs_button)\n")
    run = run_tests([bad], RunOptions(devices=("emulator-9999",)))
    [result] = run.results
    [attempt] = result.attempts
    assert result.status == "error" and attempt.category == "check" and "wrong-child" in (result.error or "")
    assert attempt.device is None and run.wall_s < 5


def test_check_json_lists_every_problem_with_positions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write(tmp_path, "s.tap", "x = = 1\nprint(y)\n")
    assert main(["check", str(script), "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [(d["line"], d["code"]) for d in found] == [(1, "syntax"), (2, "unknown-name")]
    assert found[0]["file"] == str(script) and found[0]["column"] == 5


# ---------------------------------------------------------------------------------------------
# Editor queries


def test_completion_of_elements_narrowed_by_the_screen_typed(shop: Path) -> None:
    text, at = cursor("# doc: shop.yaml\n$res|\n")
    script = write(shop, "s.tap", text)
    ws = Workspace()
    items = ws.complete(script, at)
    assert [(i.label, i.kind) for i in items][:1] == [("$results__", CompletionKind.SCREEN)]
    assert {i.label for i in items if i.kind == CompletionKind.ELEMENT} == {
        "$results__items", "$results__price", "$results__sort"}
    assert items[0].replace == Span(2, 1, 2, 5)
    text, at = cursor("# doc: shop.yaml\nx = $results__s|\n")
    ws.open(script, text)
    [item] = ws.complete(script, at)
    assert item.label == "$results__sort" and item.detail == "button · results"
    assert "Sorts the results." in item.documentation


def test_completion_of_methods_legal_for_the_kind(shop: Path) -> None:
    ws = Workspace()
    script = shop / "s.tap"
    for source, wanted, unwanted in [
        ("$home__search.|", {"set_text", "tap", "get_text"}, {"scroll", "match"}),
        ("$results__items.|", {"match", "scroll", "tap"}, {"set_text"}),
        ("for row in $results__items:\n    row.|", {"tap", "get_text"}, {"match", "set_text"}),
        ("name = 'x'\nname.up|", {"upper"}, {"tap", "lower"}),
        ("$results__items.match('Red').|", {"tap"}, {"match"}),
    ]:
        text, at = cursor("# doc: shop.yaml\n" + source + "\n")
        ws.open(script, text)
        names = {i.label for i in ws.complete(script, at)}
        assert wanted <= names and not (unwanted & names), (source, names)


def test_completion_of_options_and_choices_inside_strings(shop: Path) -> None:
    ws = Workspace()
    script = shop / "s.tap"
    text, at = cursor('# doc: shop.yaml\n$results__items.match("|\n')
    ws.open(script, text)
    items = ws.complete(script, at)
    assert [i.label for i in items] == ["Red shoes", "Blue hat", "Green scarf"]
    assert all(i.kind == CompletionKind.VALUE for i in items)
    text, at = cursor('# doc: shop.yaml\nscroll($results__items, "page_|")\n')
    ws.open(script, text)
    assert [i.label for i in ws.complete(script, at)] == ["page_up", "page_down", "page_left", "page_right"]


def test_completion_of_names_in_scope_builtins_keywords_and_keyword_arguments(shop: Path) -> None:
    ws = Workspace()
    script = shop / "s.tap"
    text, at = cursor("# doc: shop.yaml\ntotal = 0\ndef count_rows(rows):\n    t|\nprint(to)\n")
    ws.open(script, text)
    items = {i.label: i for i in ws.complete(script, at)}
    assert items["total"].kind == CompletionKind.VARIABLE and items["total"].detail == "an int"
    assert "tap" in items and items["tap"].kind == CompletionKind.BUILTIN
    text, at = cursor("# doc: shop.yaml\ndef count_rows(rows):\n    return r|\n")
    ws.open(script, text)
    items = {i.label: i for i in ws.complete(script, at)}
    assert items["rows"].kind == CompletionKind.PARAMETER and "range" in items
    assert "return" not in items  # statement keywords only where a statement starts
    assert "count_rows" in {i.label for i in ws.complete(script, (3, 5))}
    text, at = cursor("# doc: shop.yaml\n$results__items.scroll(dir|)\n")
    ws.open(script, text)
    assert "direction=" in {i.label for i in ws.complete(script, at)}


def test_hover_shows_elements_from_the_document_and_calls_from_the_registry(shop: Path) -> None:
    text = "# doc: shop.yaml\nrow = $results__items.match('Red shoes')\nrow.tap($results__price)\nprint(len('x'))\n"
    script = write(shop, "s.tap", text)
    ws = Workspace()
    h = ws.hover(script, (2, 10))
    assert h is not None and h.span == Span(2, 7, 2, 22)
    for fact in ("**$results__items** — list of button · results", "One row per product.", "`Red shoes`",
                 "**Item children:** `$results__price`", "`//node[@resource-id='items']`",
                 "**Reached by:** `home__go.tap()`", "What the search found."):
        assert fact in h.contents
    h = ws.hover(script, (2, 25))
    assert h is not None and "$list.match(query: str | dict) -> item" in h.contents
    h = ws.hover(script, (3, 2))
    assert h is not None and "(variable) row: an item of $results__items" in h.contents
    h = ws.hover(script, (4, 8))
    assert h is not None and "len(obj: any, /) -> int" in h.contents


def test_definition_of_elements_and_names_and_references(shop: Path) -> None:
    text = ("# doc: shop.yaml\ndef pick(name):\n    return $results__items.match(name)\n"
            "row = pick('Red shoes')\nrow.tap()\nrow = pick('Blue hat')\nrow.tap()\n$results__items.scroll()\n")
    script = write(shop, "s.tap", text)
    ws = Workspace()
    [loc] = ws.definition(script, (3, 16))
    doc_lines = DOC.splitlines()
    assert loc.path == str(shop / "shop.yaml")
    assert doc_lines[loc.span.line - 1][loc.span.column - 1 : loc.span.end_column - 1] == "results__items"
    [loc] = ws.definition(script, (3, 35))  # the parameter
    assert loc.span == Span(2, 10, 2, 14)
    [loc] = ws.definition(script, (4, 8))  # the function
    assert loc.span == Span(2, 5, 2, 9)
    [loc] = ws.definition(script, (7, 2))  # the nearest assignment before the use
    assert loc.span.line == 6
    refs = ws.references(script, (5, 1))
    assert [r.span.line for r in refs] == [4, 5, 6, 7]
    assert [r.span.line for r in ws.references(script, (8, 3))] == [3, 8]


def test_document_symbols_signature_help_semantic_tokens_and_quick_fixes(shop: Path) -> None:
    text = ("# doc: shop.yaml\ntotal = 0\ndef pick(name, exact=False):\n    found = name\n    return found\n"
            "$results__items.scroll('down')\n$results__itemz.tap()\n")
    script = write(shop, "s.tap", text)
    ws = Workspace()
    symbols = ws.document_symbols(script)
    assert [(s.name, s.kind) for s in symbols] == [("total", "variable"), ("pick", "function")]
    assert [c.name for c in symbols[1].children] == ["name", "exact", "found"]
    help_ = ws.signature_help(script, (6, 25))
    assert help_ is not None and help_.active_parameter == 0
    assert help_.signatures[0].label == "$element.scroll(direction: str = 'down') -> bool"
    text2, at = cursor("# doc: shop.yaml\ndef pick(name, exact=False):\n    pass\npick('a', |\n")
    ws.open(shop / "t.tap", text2)
    help_ = ws.signature_help(shop / "t.tap", at)
    assert help_ is not None and help_.signatures[0].label == "def pick(name, exact=False)"
    assert help_.active_parameter == 1
    tokens = {(t.span.line, t.span.column): (t.type, t.modifiers) for t in ws.semantic_tokens(script)}
    assert tokens[(1, 1)] == ("comment", ())
    assert tokens[(3, 1)] == ("keyword", ())
    assert tokens[(3, 5)] == ("function", ("declaration",))
    assert tokens[(3, 10)] == ("parameter", ("declaration",))
    assert tokens[(6, 1)] == ("element", ())
    assert tokens[(6, 17)] == ("method", ())
    assert tokens[(6, 24)] == ("string", ())
    assert tokens[(7, 1)] == ("element", ("unknown",))
    [fix, *_] = ws.code_actions(script, Span(7, 3, 7, 3))
    assert fix.title == "Replace with $results__items" and fix.preferred
    assert fix.edits[0].span == Span(7, 1, 7, 16)


def test_positions_from_an_editor_count_utf16_units(shop: Path) -> None:
    text = "# doc: shop.yaml\nnote = '🎵'; $home__go.tap()\n"
    script = write(shop, "s.tap", text)
    ws = Workspace()
    # the emoji is one column to Python and two UTF-16 units to an editor
    at = ws.from_lsp(script, 1, 13)
    assert (at.line, at.column) == (2, 13)
    h = ws.hover(script, at)
    assert h is not None and "home__go" in h.contents and h.span.column == 13
    assert ws.view(script).index.lsp_position(h.span.line, h.span.column) == (1, 13)
    assert ws.view(script).index.lsp_position(2, 12) == (1, 12)  # before the '$': the emoji counted twice


def test_the_registry_is_the_one_source_of_completion_hover_and_signature_help(shop: Path) -> None:
    from tapir.dsl.registry import Entry, Namespace

    wiggle = Entry.define("wiggle(times: int = 2) -> None", Namespace.ELEMENT, "Wiggle the element.",
                          lambda call: None, params={"times": "how often"})
    ws = Workspace()
    script = shop / "s.tap"
    with REGISTRY.extended(wiggle):
        text, at = cursor("# doc: shop.yaml\n$home__go.wi|\n")
        ws.open(script, text)
        assert [i.label for i in ws.complete(script, at)] == ["wiggle"]
    assert [i.label for i in ws.complete(script, at)] == []


def test_formatting_edits_and_the_repl_input_status(tmp_path: Path) -> None:
    script = write(tmp_path, "s.tap", "x=1 # one\nif x :\n  print( x )\n")
    ws = Workspace()
    [edit] = ws.formatting(script)
    assert edit.new_text == "x = 1  # one\nif x:\n    print(x)\n"
    assert ws.format(script).changed
    assert ws.formatting(write(tmp_path, "t.tap", edit.new_text)) == []
    assert ws.formatting(write(tmp_path, "u.tap", "x = = 1\n")) == []
    assert Workspace.input_status("if x:").state == "incomplete"
    assert Workspace.input_status("if x:\n    y = 1\n\n").state == "complete"
    assert Workspace.input_status("x = (1,\n 2)").state == "complete"
    assert Workspace.input_status("x = = 1").state == "invalid"
    assert Workspace.input_status("x = = 1").errors[0].code == "syntax"


def test_queries_survive_any_text(tmp_path: Path) -> None:
    """Half-typed scripts never crash a query (every query at every position of broken text)."""
    ws = Workspace()
    script = tmp_path / "s.tap"
    for text in ["$", "x = $a.", "def f(:\n  $", "for x in :\n    x.", "s = '''\n", "$a__b.match(\"", "(((", "\t\tx"]:
        ws.open(script, text)
        view = ws.view(script)
        for offset in range(len(view.text) + 1):
            at = view.index.position(offset)
            ws.complete(script, at)
            ws.hover(script, at)
            ws.definition(script, at)
            ws.references(script, at)
            ws.signature_help(script, at)
        ws.document_symbols(script)
        ws.semantic_tokens(script)
        ws.code_actions(script, Span(1, 1, 1, 1))
    assert isinstance(ws.view(script).at(1, 1), Position)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(TAPIR_PIECES), max_size=40).map("".join), st.integers(0, 10_000))
def test_queries_survive_random_text(tmp_path: Path, text: str, where: int) -> None:
    ws = Workspace()
    script = tmp_path / "s.tap"
    ws.open(script, f"# doc: {GOLDEN / 'example_app.yaml'}\n" + text)
    view = ws.view(script)
    at = view.index.position(where % (len(view.text) + 1))
    ws.complete(script, at)
    ws.hover(script, at)
    ws.definition(script, at)
    ws.references(script, at)
    ws.signature_help(script, at)
    ws.semantic_tokens(script)
    ws.document_symbols(script)
    ws.code_actions(script, Span(at.line, at.column, at.line, at.column))
    ws.formatting(script)
    Workspace.input_status(text)
