"""Importing AutoDroid-V2 documents (`tapir doc import`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tapir.cli import main
from tapir.core.document import Dialect
from tapir.core.errors import DocumentError
from tapir.docgen.loader import load_document, loads_document
from tapir.docgen.upstream import default_app_name, import_data, import_file, map_type, xpath_literal
from tapir.dsl.api import Kind

UPSTREAM_DOCS = [
    "droidtask/apps/applauncher/doc.json",
    "droidtask/apps/applauncher/doc_colon_names.json",
    "droidtask/apps/clock/doc.json",
    "llamatouch/clock_doc.json",
    "llamatouch/play_store_doc.json",
]


def _expected_counts(data: dict) -> dict[str, int]:
    """Counts straight from the upstream JSON: every path that names only known elements or
    screens (after `open_app` steps are dropped) counts once per element."""
    names = {n.replace(":", "__") for s in data.values() for n in s["elements"]} | set(data)
    elements = [e for s in data.values() for e in s["elements"].values()]
    paths = 0
    for e in elements:
        unique = set()
        for p in e["paths"]:
            steps = tuple(s.replace(":", "__") for s in p if not s.startswith("open_app("))
            targets = [s.split("(")[0].rsplit(".", 1)[0] for s in steps if "." in s.split("(")[0]]
            if all(t in names for t in targets):
                unique.add(steps)
        paths += len(unique)
    return {
        "screens": len(data),
        "elements": len(elements),
        "identifiers": sum(len(e["xpath"]) for e in elements),
        "paths": paths,
    }


@pytest.mark.upstream
@pytest.mark.parametrize("rel", UPSTREAM_DOCS)
def test_every_upstream_document_imports(upstream: Path, rel: str, tmp_path: Path) -> None:
    source = upstream / rel
    data = json.loads(source.read_text())
    text, report = import_file(source)
    out = tmp_path / "app.yaml"
    out.write_text(text)
    doc = load_document(out)
    assert report.counts == doc.counts() == _expected_counts(data)
    assert doc.app.dialect is Dialect.HTML
    assert doc.app.start_screen == next(iter(data)).replace(":", "__")
    assert all(i.dialect is Dialect.HTML for e in doc.elements for i in e.identifiers)
    # Every screen keeps upstream's skeleton as (part of) its signature.
    assert all(s.signature.skeleton for s in doc.screens)
    # Upstream's element order, options and effects survive.
    first_screen = next(iter(data.values()))
    raw_name, raw = next(iter(first_screen["elements"].items()))
    element = doc.element(raw_name.replace(":", "__"))
    assert element is not None
    assert element.description == raw["description"].strip()
    assert [i.xpath for i in element.identifiers] == raw["xpath"]
    with_options = [(n, e) for s in data.values() for n, e in s["elements"].items() if e.get("options")]
    for name, raw in with_options:
        imported = doc.element(name.replace(":", "__"))
        assert imported is not None and list(imported.options) == [str(o) for o in raw["options"]]
    with_effect = [(n, e) for s in data.values() for n, e in s["elements"].items() if e.get("effect")]
    assert with_effect
    for name, raw in with_effect:
        imported = doc.element(name.replace(":", "__"))
        assert imported is not None and imported.effect == raw["effect"].strip()


@pytest.mark.upstream
def test_colon_and_underscore_names_give_the_same_document(upstream: Path) -> None:
    a, report_a = import_file(upstream / "droidtask/apps/applauncher/doc.json")
    b, report_b = import_file(upstream / "droidtask/apps/applauncher/doc_colon_names.json")
    assert report_a.name_form == "screen__element" and report_b.name_form == "screen:element"
    doc_a, doc_b = loads_document(a).document, loads_document(b).document
    assert doc_a is not None and doc_b is not None
    assert [e.name for e in doc_a.elements] == [e.name for e in doc_b.elements]
    assert report_b.dropped["open_app steps (the runtime launches the app)"] > 0


@pytest.mark.upstream
def test_the_report_says_what_was_not_mapped(upstream: Path) -> None:
    data = json.loads((upstream / "droidtask/apps/applauncher/doc.json").read_text())
    _, report = import_file(upstream / "droidtask/apps/applauncher/doc.json")
    raw_types = [e["type"] for s in data.values() for e in s["elements"].values()]
    unmapped = {t: raw_types.count(t) for t in set(raw_types) if map_type(t) is None}
    assert unmapped and report.unmapped_types == unmapped
    assert report.kinds["other"] == sum(unmapped.values())
    rendered = report.render()
    for t in unmapped:
        assert repr(t) in rendered


@pytest.mark.upstream
def test_unknown_path_targets_and_bad_quotes_are_repaired_or_dropped(upstream: Path) -> None:
    _, clock = import_file(upstream / "llamatouch/clock_doc.json")
    assert any("unknown element" in reason for reason in clock.dropped)
    text, store = import_file(upstream / "llamatouch/play_store_doc.json")
    assert any("re-quoted" in note for note in store.notes)
    assert "//*[@alt='Play trailer for \"Facebook\"']" in text


def test_type_mapping() -> None:
    assert map_type("element_list") is Kind.LIST
    assert map_type("p") is Kind.TEXT
    assert map_type("scrollbar") is Kind.SCROLLER
    assert map_type("android.widget.EditText") is Kind.INPUT
    assert map_type("android.widget.ImageButton") is Kind.BUTTON
    assert map_type("layout") is None and map_type(None) is None


def test_xpath_literals_survive_any_quotes() -> None:
    from lxml import etree

    root = etree.fromstring("<r><a alt=\"it's &quot;x&quot;\"/><a alt='plain'/></r>")
    for value in ("plain", "it's \"x\""):
        hits = etree.XPath(f"//a[@alt={xpath_literal(value)}]")(root)
        assert [h.get("alt") for h in hits] == [value]


def test_import_of_a_small_document_in_memory() -> None:
    data = {
        "main_screen": {
            "skeleton": '<framelayout resource_id="root"><button resource_id="go"></button></framelayout>',
            "elements": {
                "main_screen:go_button": {
                    "type": "button", "options": None, "name": "main_screen:go_button",
                    "description": "Go.", "effect": "tap to navigate to the next_screen, which ...",
                    "xpath": ["//*[@resource_id='go' and text()='Go']", "//*[@resource_id='go']",
                              '//*[@alt="Say "hi""]'],
                    "paths": [[], ["open_app(x)", "next_screen:title.tap()"], ["None.tap()"]],
                },
            },
        },
        "next_screen": {
            "skeleton": '<framelayout resource_id="root"><p resource_id="title"></p></framelayout>',
            "elements": {
                "next_screen:title": {"type": "layout", "options": ["A", "B"], "name": "next_screen:title",
                                      "description": "Title.", "xpath": ["//*[@resource_id='title']"],
                                      "paths": [["main_screen:go_button.tap()"], ["main_screen:go_button.tap()"]]},
            },
        },
    }
    text, report = import_data(data, source="tiny.json", package="org.x", app_name="tiny")
    doc = loads_document(text).document
    assert doc is not None
    go = doc.element("main_screen__go_button")
    title = doc.element("next_screen__title")
    assert go is not None and title is not None
    assert go.leads_to == "next_screen" and title.kind is Kind.OTHER and title.options == ("A", "B")
    assert [str(s) for p in go.paths for s in p] == ["next_screen__title.tap()"]
    assert len(go.paths) == 2 and go.paths[0] == ()  # the empty path: reachable right after launch
    assert len(title.paths) == 1
    assert go.identifiers[2].xpath == "//*[@alt='Say \"hi\"']"
    main = doc.screen("main_screen")
    assert main is not None and [i.xpath for i in main.signature.all_of] == ["//*[@resource_id='go']"]
    assert report.unmapped_types == {"layout": 1}
    assert report.dropped["duplicate paths"] == 1
    assert report.name_form == "screen:element"


def test_default_app_names() -> None:
    assert default_app_name("x/droidtask/apps/applauncher/doc.json") == "applauncher"
    assert default_app_name("x/llamatouch/play_store_doc.json") == "play_store"


@pytest.mark.upstream
def test_cli_import_writes_a_valid_document(upstream: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "applauncher.yaml"
    rc = main(["doc", "import", str(upstream / "droidtask/apps/applauncher/doc.json"), "-o", str(out),
               "--package", "com.simplemobiletools.applauncher", "--json"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    doc = load_document(out)
    assert doc.app.package == "com.simplemobiletools.applauncher"
    assert report["counts"] == doc.counts()
    assert main(["doc", "validate", str(out)]) == 0


def test_cli_import_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doc", "import", str(tmp_path / "missing.json"), "-o", str(tmp_path / "x.yaml")]) == 2
    notdoc = tmp_path / "list.json"
    notdoc.write_text("[1, 2]")
    assert main(["doc", "import", str(notdoc), "-o", str(tmp_path / "x.yaml")]) == 1
    assert "not an AutoDroid-V2 document" in capsys.readouterr().err


def test_cli_import_bad_input_is_reported_not_crashed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\x00\x85\xfe\xff" * 20)
    assert main(["doc", "import", str(binary), "-o", str(tmp_path / "x.yaml")]) == 1
    assert "not UTF-8 text" in capsys.readouterr().err
    no_elements = tmp_path / "noel.json"
    no_elements.write_text('{"main": {"skeleton": "<div></div>"}}')
    assert main(["doc", "import", str(no_elements), "-o", str(tmp_path / "x.yaml")]) == 1
    assert "not an AutoDroid-V2 document" in capsys.readouterr().err


def test_cli_import_unwritable_output_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"main": {"skeleton": "<div></div>", "elements": {
        "main__ok": {"type": "button", "description": "OK", "xpath": ["//button[@text='OK']"]}}}}))
    assert main(["doc", "import", str(doc), "-o", str(tmp_path / "missing" / "x.yaml")]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert main(["doc", "import", str(doc), "-o", str(tmp_path)]) == 2
    assert "cannot write" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"m": {"elements": {"m__x": "str"}}}, "element 'm__x' must be an object"),
        ({"m": {"elements": {"m__x": {"description": 3}}}}, "'description' must be a str"),
        ({"m": {"skeleton": 3, "elements": {}}}, "'skeleton' must be a str"),
        ({"m": {"elements": {"m__x": {"paths": 5}}}}, "'paths' must be a list"),
        ({"m": {"elements": {"m__x": {"options": 3}}}}, "'options' must be a list"),
    ],
)
def test_import_reports_wrongly_typed_fields(data: dict[str, object], said: str) -> None:
    with pytest.raises(DocumentError) as info:
        import_data(data, source="x.json")
    assert said in str(info.value)


def test_import_problems_of_the_converted_document_carry_no_json_lines() -> None:
    with pytest.raises(DocumentError) as info:
        import_data({"m": {"elements": {"m__x": {"type": "button"}}}}, source="x.json")
    codes = {p.code for p in info.value.problems}
    assert "empty-identifiers" in codes
    assert all(p.line is None for p in info.value.problems)
