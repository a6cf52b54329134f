"""`tapir doc import` repairs upstream documents' defects (or leaves the part out) and says so;
`strict=True` / `--strict` refuses them instead, with the same messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tapir.cli import main
from tapir.core.document import AppDocument
from tapir.core.errors import DocumentError
from tapir.docgen.loader import loads_document
from tapir.docgen.upstream import ImportReport, import_data, import_file

DROIDTASK_APPS = ["applauncher", "camera", "clock", "filemanager", "firefox", "gallery", "notes"]
LLAMATOUCH_DOCS = ["clock_doc.json", "play_store_doc.json"]


def _el(xpath: list[str] | None = None, paths: list[list[str]] | None = None, **extra: Any) -> dict[str, Any]:
    """One upstream element; ``xpath`` defaults to one XPath of its own."""
    return {"type": "button", "description": "An element.", "options": None,
            "xpath": ["//*[@resource_id='x']"] if xpath is None else xpath, "paths": paths or [], **extra}


def _screen(elements: dict[str, dict[str, Any]], rid: str) -> dict[str, Any]:
    return {"skeleton": f'<div resource_id="{rid}"></div>', "elements": elements}


def _import(data: dict[str, Any]) -> tuple[AppDocument, ImportReport]:
    text, report = import_data(data, source="tiny.json", package="org.x", app_name="tiny")
    doc = loads_document(text).document
    assert doc is not None
    return doc, report


def _refused(data: dict[str, Any]) -> list[str]:
    """The messages ``strict=True`` refuses ``data`` with."""
    with pytest.raises(DocumentError) as info:
        import_data(data, source="tiny.json", package="org.x", strict=True)
    assert all(p.is_error for p in info.value.problems)
    return [p.message for p in info.value.problems]


def _names(doc: AppDocument, screen: str) -> list[str]:
    s = doc.screen(screen)
    assert s is not None
    return [e.name for e in s.elements]


def _ident_xpaths(doc: AppDocument, element: str) -> list[str]:
    e = doc.element(element)
    assert e is not None
    return [i.xpath for i in e.identifiers]


def _paths(doc: AppDocument, element: str) -> list[list[str]]:
    e = doc.element(element)
    assert e is not None
    return [[str(s) for s in p] for p in e.paths]


def test_an_element_named_for_a_screen_that_has_it_is_renamed_under_its_listing_screen() -> None:
    # filemanager's defect: main's stray 'menu__options' is not menu's own 'menu__options'.
    data = {
        "main": _screen({"main__go": _el(["//*[@resource_id='go']"]),
                         "menu__options": _el(["//*[@resource_id='toolbar']"])}, "m"),
        "menu": _screen({"menu__options": _el(["//ListView"], paths=[["main__go.tap()"]]),
                         "menu__ok": _el(paths=[["main__go.tap()", "menu__options.tap()"]])}, "n"),
    }
    doc, report = _import(data)
    assert _names(doc, "main") == ["main__go", "main__options"]
    assert _ident_xpaths(doc, "main__options") == ["//*[@resource_id='toolbar']"]
    assert _ident_xpaths(doc, "menu__options") == ["//ListView"]
    # The old name still belongs to menu's own element: paths naming it keep meaning that one.
    assert _paths(doc, "menu__ok") == [["main__go.tap()", "menu__options.tap()"]]
    message = ("element 'menu__options' listed under screen 'main' is named for screen 'menu', which has an "
               "element of that name already: renamed to 'main__options'")
    assert report.repairs == (message,)
    assert "repaired 1 defect of the upstream document:" in report.render()
    assert f"  {message}" in report.render()
    assert _refused(data) == [message]


def test_an_element_named_for_a_screen_without_it_moves_there() -> None:
    # gallery's defect: 'settings__holder' listed under a look-alike screen.
    data = {
        "settings": _screen({"settings__title": _el()}, "s"),
        "settings_scrolled": _screen({"settings_scrolled__back": _el(),
                                      "settings__holder": _el(["//*[@resource_id='holder']"])}, "t"),
        "home": _screen({"home__open": _el(paths=[["settings__holder.tap()"]])}, "h"),
    }
    doc, report = _import(data)
    settings = doc.screen("settings")
    scrolled = doc.screen("settings_scrolled")
    assert settings is not None and scrolled is not None
    assert [e.name for e in settings.elements] == ["settings__title", "settings__holder"]
    assert [e.name for e in scrolled.elements] == ["settings_scrolled__back"]
    assert _paths(doc, "home__open") == [["settings__holder.tap()"]]
    assert report.repairs == ("element 'settings__holder' listed under screen 'settings_scrolled' is named for "
                              "screen 'settings', which has no element of that name: moved there",)


def test_an_element_named_for_no_screen_is_renamed_and_paths_follow() -> None:
    data = {
        "main": _screen({"ghost__button": _el(), "plain": _el(["//*[@resource_id='plain']"])}, "m"),
        "next": _screen({"next__x": _el(paths=[["ghost__button.tap()"], ["plain.tap()"]])}, "n"),
    }
    doc, report = _import(data)
    assert doc.element("main__button") is not None and doc.element("main__plain") is not None
    # Nothing keeps the old names and one element took each: the paths follow the rename.
    assert _paths(doc, "next__x") == [["main__button.tap()"], ["main__plain.tap()"]]
    assert report.repairs == (
        "element 'ghost__button' listed under screen 'main' is named for 'ghost', which is not a screen of the "
        "document: renamed to 'main__button'",
        "element 'plain' listed under screen 'main' has no screen prefix (names are screen__element): "
        "renamed to 'main__plain'",
    )


def test_a_rename_two_ways_is_not_guessed_in_paths() -> None:
    data = {
        "a": _screen({"ghost__x": _el(["//a"])}, "a"),
        "b": _screen({"ghost__x": _el(["//b"]), "b__y": _el(paths=[["ghost__x.tap()"], []])}, "b"),
    }
    doc, report = _import(data)
    assert doc.element("a__x") is not None and doc.element("b__x") is not None
    assert _paths(doc, "b__y") == [[]]
    assert report.dropped["paths naming an element renamed two ways"] == 1
    assert report.repairs[-1] == ("dropped 1 dependency path of element 'b__y': it names 'ghost__x', renamed to "
                                  "both 'a__x' and 'b__x'")


def test_duplicate_names_keep_the_first() -> None:
    # 'main:go' and 'main__go' are one name once the colon form is normalised.
    data = {
        "main": _screen({
            "main__go": _el(["//*[@resource_id='go']"]),
            "main:go": _el(["//*[@resource_id='go']"]),
            "main__end": _el(paths=[["main__go.tap()"]]),
            "main:end": _el(["//*[@resource_id='end']"]),
        }, "m"),
    }
    doc, report = _import(data)
    assert _names(doc, "main") == ["main__go", "main__end", "main__end_2"]
    assert _paths(doc, "main__end") == [["main__go.tap()"]]
    assert report.repairs == (
        "duplicate element name 'main__go' on screen 'main': kept the first, dropped this one (the same XPaths)",
        "duplicate element name 'main__end' on screen 'main': kept the first, renamed this one to 'main__end_2'",
    )
    assert _refused(data) == list(report.repairs)


def test_duplicate_after_a_rename_is_renamed() -> None:
    data = {
        "main": _screen({"main__options": _el(["//a"]), "menu__options": _el(["//b"])}, "m"),
        "menu": _screen({"menu__options": _el(["//c"])}, "n"),
    }
    doc, report = _import(data)
    assert _names(doc, "main") == ["main__options", "main__options_2"]
    assert report.repairs[-1] == ("duplicate element name 'main__options' on screen 'main': kept the first, "
                                  "renamed this one to 'main__options_2'")


def test_an_element_with_no_identifiers_is_left_out_with_the_paths_through_it() -> None:
    # firefox's defect: an empty XPath list. An element whose XPaths all fail to parse is the same.
    data = {
        "main": _screen({
            "main__content": _el([]),
            "main__broken": _el(["//*[@text='a' and"]),
            "main__go": _el(paths=[["main__content.tap()"], ["main__broken.tap()", "main__go.tap()"], []]),
        }, "m"),
    }
    doc, report = _import(data)
    assert _names(doc, "main") == ["main__go"]
    assert _paths(doc, "main__go") == [[]]
    assert report.repairs == (
        "element 'main__content' on screen 'main': its identifier (XPath) list is empty, so nothing can find it: "
        "left out",
        "element 'main__broken' on screen 'main': dropped the XPath \"//*[@text='a' and\", which does not parse",
        "element 'main__broken' on screen 'main': none of its 1 XPaths parses, so nothing can find it: left out",
        "dropped 1 dependency path of element 'main__go': it steps through 'main__content', which was left out",
        "dropped 1 dependency path of element 'main__go': it steps through 'main__broken', which was left out",
    )
    assert report.dropped["paths stepping through an element left out (no identifiers)"] == 2
    assert report.dropped["malformed XPaths"] == 1
    assert _refused(data) == list(report.repairs)


def test_dangling_steps_and_malformed_xpaths_are_dropped_with_a_warning() -> None:
    data = {
        "main": _screen({
            "main__go": _el(["//*[@resource_id='go']", "//*[@text='x' and"],
                            paths=[["None.tap()"], ["main__go.tap("], ["main__go.tap()"]]),
            "main__end": _el(paths=[["None.tap()"]]),
        }, "m"),
    }
    doc, report = _import(data)
    go = doc.element("main__go")
    assert go is not None and [i.xpath for i in go.identifiers] == ["//*[@resource_id='go']"]
    assert _paths(doc, "main__go") == [["main__go.tap()"]]
    assert _paths(doc, "main__end") == []
    assert report.dropped["paths naming an unknown element (e.g. upstream's 'None.tap()')"] == 2
    assert report.dropped["malformed XPaths"] == 1
    assert report.repairs == (
        "element 'main__go' on screen 'main': dropped the XPath \"//*[@text='x' and\", which does not parse",
        "dropped 2 dependency paths of 2 elements ('main__end', 'main__go'): they name 'None', which is no "
        "element or screen of the document",
        "dropped 1 dependency path of element 'main__go': a step does not parse",
    )
    assert _refused(data) == list(report.repairs)


def test_a_screen_name_with_double_underscores_is_renamed_with_its_elements() -> None:
    data = {
        "main__screen": _screen({"main__screen__go": _el(paths=[["main__screen.back()"]])}, "m"),
        "next": _screen({"next__x": _el(paths=[["main__screen__go.tap()"]])}, "n"),
    }
    doc, report = _import(data)
    assert doc.app.start_screen == "main_screen"
    assert _paths(doc, "main_screen__go") == [["main_screen.back()"]]
    assert _paths(doc, "next__x") == [["main_screen__go.tap()"]]
    assert report.repairs == ("screen 'main__screen': renamed to 'main_screen' (a screen name cannot hold '__'); "
                              "its elements follow",)


def test_a_positional_xpath_shared_by_views_described_otherwise_is_tightened() -> None:
    """The unselected tab is a `button` on both screens, Video on one and Photo on the other: the
    bare position finds whichever is there, so each element's gets its own description."""
    tabs = "//FrameLayout/LinearLayout/button"
    data = {
        "photo": _screen({"photo__video_tab": _el(["//*[@alt='Video' and text()='Video']", tabs],
                                                  element='<button alt="Video" id="21"></button>'),
                          "photo__bar": _el(["//FrameLayout/LinearLayout"], element="<div id='3'></div>")}, "p"),
        "video": _screen({"video__photo_tab": _el(["//*[@alt='Photo' and text()='Photo']", tabs],
                                                  element='<button alt="Photo" id="23"></button>'),
                          "video__bar": _el(["//FrameLayout/LinearLayout"], element="<div id='3'></div>")}, "v"),
    }
    doc, report = _import(data)
    assert _ident_xpaths(doc, "photo__video_tab")[1] == f"{tabs}[@alt='Video']"
    assert _ident_xpaths(doc, "video__photo_tab")[1] == f"{tabs}[@alt='Photo']"
    # a position shared by views described alike (or not at all) stays as it is
    assert _ident_xpaths(doc, "photo__bar") == _ident_xpaths(doc, "video__bar") == ["//FrameLayout/LinearLayout"]
    assert report.repairs == (
        f"element 'photo__video_tab' on screen 'photo': its positional XPath also finds element 'video__photo_tab', "
        f"described otherwise: tightened to \"{tabs}[@alt='Video']\"",
        f"element 'video__photo_tab' on screen 'video': its positional XPath also finds element 'photo__video_tab', "
        f"described otherwise: tightened to \"{tabs}[@alt='Photo']\"",
    )
    assert _refused(data) == list(report.repairs)


def test_a_clean_document_has_no_repairs_and_strict_accepts_it() -> None:
    data = {"main": _screen({"main__go": _el(paths=[["main__go.tap()"]])}, "m")}
    _, report = _import(data)
    assert report.repairs == ()
    assert "repaired" not in report.render()
    text, _ = import_data(data, source="tiny.json", strict=True)
    assert loads_document(text).document is not None


def test_a_document_that_still_does_not_validate_lists_the_repairs_first() -> None:
    with pytest.raises(DocumentError) as info:
        import_data({"m": {"elements": {"m__x": {"type": "button"}}}}, source="x.json")
    first = info.value.problems[0]
    assert first.severity == "warning" and first.code == "empty-identifiers"
    assert any(p.is_error for p in info.value.problems)


def test_cli_strict_refuses_and_plain_import_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "doc.json"
    source.write_text(json.dumps({"main": _screen({"main__go": _el(), "main__gone": _el([])}, "m")}))
    out = tmp_path / "app.yaml"
    assert main(["doc", "import", str(source), "-o", str(out), "--strict"]) == 1
    err = capsys.readouterr().err
    assert "error[empty-identifiers]: element 'main__gone' on screen 'main'" in err
    assert not out.exists()
    assert main(["doc", "import", str(source), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "warning[repaired]: element 'main__gone' on screen 'main'" in captured.err
    assert "repaired 1 defect of the upstream document" in captured.out
    assert main(["doc", "import", str(source), "-o", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning[repaired]" in captured.err
    assert len(json.loads(captured.out)["repairs"]) == 1


@pytest.mark.upstream
@pytest.mark.parametrize("rel", [f"droidtask/apps/{a}/doc.json" for a in DROIDTASK_APPS]
                         + [f"llamatouch/{d}" for d in LLAMATOUCH_DOCS])
def test_every_shared_upstream_document_imports(upstream: Path, rel: str) -> None:
    source = upstream / rel
    if not source.is_file():
        pytest.skip(f"{rel} is not present")
    text, report = import_file(source)
    assert loads_document(text).document is not None
    assert len(report.repairs) == len(set(report.repairs))


@pytest.mark.upstream
def test_the_shared_documents_defects_are_repaired(upstream: Path) -> None:
    apps = upstream / "droidtask" / "apps"
    if not (apps / "filemanager" / "doc.json").is_file():
        pytest.skip("droidtask documents are not present")
    _, filemanager = import_file(apps / "filemanager" / "doc.json")
    assert any("'more_options_popup__options_list' listed under screen 'main_menu_screen'" in r
               and "renamed to 'main_menu_screen__options_list'" in r for r in filemanager.repairs)
    _, firefox = import_file(apps / "firefox" / "doc.json")
    assert any("'personalized_homepage_intro_screen__content'" in r and "left out" in r for r in firefox.repairs)
    _, gallery = import_file(apps / "gallery" / "doc.json")
    assert sum("moved there" in r for r in gallery.repairs) == 4
    with pytest.raises(DocumentError):
        import_file(apps / "filemanager" / "doc.json", strict=True)


@pytest.mark.upstream
def test_cli_prints_the_filemanager_repairs(upstream: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    source = upstream / "droidtask" / "apps" / "filemanager" / "doc.json"
    if not source.is_file():
        pytest.skip("the filemanager document is not present")
    assert main(["doc", "import", str(source), "-o", str(tmp_path / "fm.yaml")]) == 0
    captured = capsys.readouterr()
    assert "warning[repaired]: element 'more_options_popup__options_list' listed under screen " \
           "'main_menu_screen'" in captured.err
    assert "repaired 1 defect of the upstream document" in captured.out
    assert main(["doc", "validate", str(tmp_path / "fm.yaml")]) == 0
