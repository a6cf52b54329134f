"""App documents: loading YAML and JSON, validation with file:line, frozen results."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from tapir.core.document import Dialect, Step
from tapir.core.errors import DocumentError
from tapir.docgen.loader import load_document, load_document_report, loads_document, parse_step
from tapir.docgen.writer import document_to_dict, to_yaml
from tapir.dsl.api import Kind

GOLDEN = Path(__file__).parent / "golden"
EXAMPLE = GOLDEN / "example_app.yaml"
BROKEN = GOLDEN / "docs" / "broken.yaml"


def _line_of(path: Path, text: str, start: int = 1) -> int:
    """The 1-based line of the first occurrence of ``text`` at or after line ``start``."""
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if i >= start and text in line:
            return i
    raise AssertionError(f"{text!r} not in {path}")


def test_example_loads_with_everything_in_place() -> None:
    doc = load_document(EXAMPLE)
    assert doc.app.package == "org.example.music"
    assert doc.app.start_screen == "home_screen"
    assert [s.name for s in doc.screens][:2] == ["home_screen", "songs_screen"]
    songs = doc.element("songs_screen__song_list")
    assert songs is not None and songs.kind is Kind.LIST and songs.item_kind is Kind.BUTTON
    assert [c.local_name for c in doc.children_of("songs_screen__song_list")] == [
        "song_title", "song_artist", "song_menu_button"]
    button = doc.element("home_screen__songs_button")
    assert button is not None
    assert [i.dialect for i in button.identifiers] == [Dialect.UIAUTOMATOR, Dialect.UIAUTOMATOR, Dialect.HTML]
    assert button.identifiers[0].xpath == "//node[@resource-id='org.example.music:id/songs_tab']"
    assert button.leads_to == "songs_screen"
    assert button.line == _line_of(EXAMPLE, "home_screen__songs_button:")
    assert songs.paths[1] == (Step("song_options_popup", "back"), Step("home_screen__songs_button", "tap"))
    sort = doc.element("songs_screen__sort_button")
    assert sort is not None and sort.options == ("Title", "Artist", "Date added")
    home = doc.screen("home_screen")
    assert home is not None and home.signature.activity == ".MainActivity"
    assert doc.notes is not None and "playlist" in doc.notes


def test_loaded_documents_are_frozen() -> None:
    doc = load_document(EXAMPLE)
    element = next(doc.elements)
    with pytest.raises(dataclasses.FrozenInstanceError):
        element.kind = Kind.INPUT  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.app.start_screen = "x"  # type: ignore[misc]
    assert isinstance(doc.screens, tuple) and isinstance(element.identifiers, tuple)


def test_counts_add_up() -> None:
    doc = load_document(EXAMPLE)
    data = yaml.safe_load(EXAMPLE.read_text())
    elements = [e for s in data["screens"].values() for e in s["elements"].values()]
    assert doc.counts() == {
        "screens": len(data["screens"]),
        "elements": len(elements),
        "identifiers": sum(len(e["identifiers"]) for e in elements),
        "paths": sum(len(e.get("paths", [])) for e in elements),
    }


def test_every_problem_is_reported_at_once_with_its_line() -> None:
    with pytest.raises(DocumentError) as info:
        load_document(BROKEN)
    found = {(p.line, p.code) for p in info.value.problems}
    expected = {
        (_line_of(BROKEN, "home__ok_button:", 14), "duplicate-name"),
        (_line_of(BROKEN, "kind: slider"), "unknown-kind"),
        (_line_of(BROKEN, "home__orphan_title:"), "orphan-child"),
        (_line_of(BROKEN, "home__lost_child:"), "orphan-child"),
        (_line_of(BROKEN, "home__empty:"), "empty-identifiers"),
        (_line_of(BROKEN, "'unclosed'"), "bad-xpath"),
        (_line_of(BROKEN, "home__missing_button.tap()"), "unknown-name"),
    }
    assert found == expected
    rendered = info.value.render()
    line = _line_of(BROKEN, "kind: slider")
    assert f"{BROKEN}:{line}:15: error[unknown-kind]: unknown kind 'slider'" in rendered
    # the caret sits under the value, quoted from the document
    assert "        kind: slider\n                  ^^^^^^\n" in rendered


def test_json_documents_report_lines_too(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    good = tmp_path / "music.json"
    good.write_text(json.dumps(data, indent=2))
    assert load_document(good) == load_document(EXAMPLE)

    data["screens"]["home_screen"]["elements"]["home_screen__search_input"]["kind"] = "textfield"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data, indent=2))
    with pytest.raises(DocumentError) as info:
        load_document(bad)
    [problem] = info.value.problems
    assert problem.code == "unknown-kind"
    assert problem.line == _line_of(bad, '"kind": "textfield"')


def test_duplicate_keys_in_json_are_found(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    data = yaml.safe_load(text)
    body = json.dumps(data, indent=1)
    # JSON parsers keep the last of two equal keys silently; the loader must not.
    body = body.replace('"settings_screen": {', '"settings_screen": {"description": "twice",', 1)
    path = tmp_path / "dup.json"
    path.write_text(body)
    result = load_document_report(path)
    assert result.document is None
    assert [p.code for p in result.errors] == ["duplicate-name"]


def test_round_trip_through_the_writer(tmp_path: Path) -> None:
    doc = load_document(EXAMPLE)
    again = tmp_path / "again.yaml"
    again.write_text(to_yaml(document_to_dict(doc)))
    assert load_document(again) == doc


def test_structural_problems(tmp_path: Path) -> None:
    text = """\
format: 1
app: {package: p, name: n, start_screen: nowhere, colour: blue}
screens:
  home:
    description: x
    elements:
      other__b:
        kind: button
        description: b
        identifiers: [{html: "//button[@resource-id='b']"}, {css: "#b"}]
        paths: [["other__b.tap('a', 'b')", "dance()", "other__b.fly()", "home.tap()", "not a step"]]
"""
    result = loads_document(text, "mem.yaml")
    codes = sorted(p.code for p in result.problems)
    assert codes == sorted([
        "unknown-field",      # colour
        "unknown-dialect",    # css
        "bad-step",           # not a step (malformed)
        "unknown-screen",     # start_screen
        "no-signature",       # home has none
        "bad-name",           # other__b under home
        "dialect-mismatch",   # html XPath with @resource-id (a warning)
        "bad-step",           # tap('a', 'b'): too many arguments
        "bad-step",           # dance(): no such global
        "bad-step",           # fly: not an action
        "bad-step",           # home.tap(): only back() on a screen
    ])
    assert [p.severity for p in result.problems if p.code == "dialect-mismatch"] == ["warning"]
    assert all(p.line is not None for p in result.problems if p.code != "unknown-screen")


def test_an_upstream_document_is_pointed_at_the_importer(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"main_screen": {"skeleton": "<a/>", "elements": {}}}))
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert "tapir doc import" in info.value.problems[0].message


def test_yaml_syntax_errors_have_a_line() -> None:
    result = loads_document("app: [unclosed\nscreens: {}\n")
    assert result.document is None
    assert result.problems[0].code == "syntax" and result.problems[0].line is not None


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("main_screen__sort_button.tap()", Step("main_screen__sort_button", "tap")),
        ("settings_screen.back()", Step("settings_screen", "back")),
        ("back()", Step(None, "back")),
        ("s__search.set_text('new york')", Step("s__search", "set_text", ("new york",))),
        ('s__list.scroll("down")', Step("s__list", "scroll", ("down",))),
        ("menu__options.match('Sort by').tap()", Step("menu__options", "tap", match="Sort by")),
        ('s__list.match("a").long_tap()', Step("s__list", "long_tap", match="a")),
        ("s__x.tap(", None),
        ("s__x.set_text(42)", None),
        ("tap me", None),
    ],
)
def test_parse_step(text: str, step: Step | None) -> None:
    assert parse_step(text) == step


def test_steps_print_back_in_their_own_syntax() -> None:
    assert str(Step("s__search", "set_text", ("it's",))) == 's__search.set_text("it\'s")'
    assert parse_step(str(Step("s__search", "set_text", ("it's",)))) == Step("s__search", "set_text", ("it's",))


def test_the_documented_example_is_the_tested_one() -> None:
    docs = (Path(__file__).parent.parent / "docs" / "app-document.md").read_text()
    block = docs.split("## A full example", 1)[1].split("```yaml\n", 1)[1].split("```\n", 1)[0]
    assert block == EXAMPLE.read_text()


def test_a_bad_kind_is_reported_once_not_again_by_every_path_naming_the_element() -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace("kind: button", "kind: 3")
    result = loads_document(text, source="kind3.yaml")
    assert result.document is None
    codes = [p.code for p in result.errors]
    assert codes.count("unknown-kind") == text.count("kind: 3")
    assert "unknown-name" not in codes
