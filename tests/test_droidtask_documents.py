"""Documents built from DroidTask recordings are cached by recording *and* by the builder's code,
so that a change to the builder shows in the next evaluation without deleting the cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tapir
from tapir.eval import droidtask
from tapir.eval.droidtask import builder_fingerprint, document_for

REPO = Path(__file__).resolve().parent.parent


def test_the_fingerprint_follows_the_builder_code_only(tmp_path: Path) -> None:
    src = Path(tapir.__file__).parent
    root = tmp_path / "tapir"
    for package in ("docgen", "hierarchy", "eval"):
        shutil.copytree(src / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    before = builder_fingerprint(root)
    assert before == builder_fingerprint.__wrapped__(root)
    (root / "eval" / "droidtask.py").write_text("# not the builder\n", encoding="utf-8")
    assert builder_fingerprint.__wrapped__(root) == before
    naming = root / "docgen" / "build" / "naming.py"
    naming.write_text(naming.read_text(encoding="utf-8") + "\n# a change to the builder\n", encoding="utf-8")
    assert builder_fingerprint.__wrapped__(root) != before


def test_a_built_document_is_rebuilt_when_the_builder_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tapir.docgen.build as build

    app_dir = tmp_path / "clock"
    for sub in ("states", "events"):
        (app_dir / sub).mkdir(parents=True)
        (app_dir / sub / f"{sub}_1.json").write_text("{}", encoding="utf-8")
    built: list[Path] = []

    def fake_build(folder: Path, package: str) -> tuple[str, object]:
        built.append(folder)
        return (REPO / "samples" / "clock" / "clock.yaml").read_text(encoding="utf-8"), None

    monkeypatch.setenv("TAPIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "document_from_recording", fake_build)
    monkeypatch.setattr(droidtask, "builder_fingerprint", lambda: "builder-1")
    _, first, was_built = document_for(app_dir, "org.example.clock")
    _, again, _ = document_for(app_dir, "org.example.clock")
    assert was_built and first == again and len(built) == 1  # one build per recording and builder
    monkeypatch.setattr(droidtask, "builder_fingerprint", lambda: "builder-2")
    _, rebuilt, _ = document_for(app_dir, "org.example.clock")
    assert rebuilt != first and rebuilt.is_file() and len(built) == 2


# -- the reference writer: a recorded click on a row whose checkbox is the element (or the reverse)

_DOC = """format: 1
app: {package: org.x.sms, name: Sms, start_screen: settings_screen, dialect: uiautomator}
screens:
  settings_screen:
    description: Settings.
    signature: {all: ["//node[@resource-id='org.x.sms:id/settings_holder']"]}
    elements:
      settings_screen__accents_checkbox:
        kind: checkbox
        description: Remove accents.
        identifiers: ["//node[@resource-id='org.x.sms:id/settings_accents']"]
      settings_screen__enter_row:
        kind: button
        description: The row of 'Send on Enter'.
        identifiers: ["//node[@resource-id='org.x.sms:id/settings_enter_holder']"]
      settings_screen__holder:
        kind: other
        description: All the settings.
        identifiers: ["//node[@resource-id='org.x.sms:id/settings_holder']"]
"""

_HTML = """<FrameLayout id='0'>
  <LinearLayout id='1' resource_id='settings_holder'>
    <RelativeLayout id='2' resource_id='settings_accents_holder'>
      <checkbox id='3' resource_id='settings_accents'>Remove accents</checkbox>
    </RelativeLayout>
    <RelativeLayout id='4' resource_id='settings_enter_holder'>
      <checkbox id='5' resource_id='settings_enter'>Send on Enter</checkbox>
    </RelativeLayout>
    <button id='6' resource_id='settings_font'>Font size</button>
  </LinearLayout>
</FrameLayout>"""


def _writer(tmp_path: Path) -> droidtask.ScriptWriter:
    from tapir.docgen.loader import loads_document

    document = loads_document(_DOC).document
    assert document is not None
    return droidtask.ScriptWriter(document, tmp_path)  # no states/: every step is read from its HTML


def _views() -> list[dict[str, object]]:
    def view(vid: int, parent: int | None, children: list[int], rid: str, y: tuple[int, int], **flags: object
             ) -> dict[str, object]:
        return {"temp_id": vid, "parent": parent, "children": children, "resource_id": f"org.x.sms:id/{rid}",
                "class": "android.widget.CheckBox" if flags.get("checkable") else "android.widget.RelativeLayout",
                "bounds": [[0, y[0]], [1080, y[1]]], **flags}

    return [view(0, None, [1], "settings_holder", (0, 600)),
            view(1, 0, [2, 4], "settings_list", (0, 600)),
            view(2, 1, [3], "settings_accents_holder", (0, 200), clickable=True),
            view(3, 2, [], "settings_accents", (50, 150), checkable=True, text="Remove accents"),
            view(4, 1, [5], "settings_enter_holder", (200, 400), clickable=True),
            view(5, 4, [], "settings_enter", (250, 350), checkable=True, text="Send on Enter")]


@pytest.mark.parametrize(("choice", "second_control", "element"), [
    (2, False, "settings_screen__accents_checkbox"),  # the row clicked, its checkbox is the element
    (5, False, "settings_screen__enter_row"),         # the checkbox clicked, its row is the element
    (1, False, "settings_screen__holder"),            # the list is all its holder holds
    (2, True, None),  # a row with a second control is not its checkbox, nor is the holder of all rows
])
def test_a_click_maps_to_the_element_nested_in_or_around_the_clicked_view(
        tmp_path: Path, choice: int, second_control: bool, element: str | None) -> None:
    from tapir.hierarchy.parse import parse_view_list

    views = _views()
    if second_control:
        views[2]["children"] = [3, 6]
        views.append({"temp_id": 6, "parent": 2, "children": [], "resource_id": "org.x.sms:id/help",
                      "class": "android.widget.ImageButton", "bounds": [[900, 50], [1000, 150]], "clickable": True})
    writer = _writer(tmp_path)
    step = droidtask.GroundTruthStep("click", choice, "t", "label")
    found = writer._element_for(parse_view_list(views), choice, "settings_screen", step)
    assert (found.name if found else None) == element


def test_a_state_kept_as_html_only_is_read_back_into_views_for_a_built_document(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    steps = [droidtask.GroundTruthStep("click", 3, "gone", "Remove accents", html=_HTML),
             droidtask.GroundTruthStep("click", 5, "gone", "Send on Enter", html=_HTML),
             droidtask.GroundTruthStep("click", 6, "gone", "Font size", html=_HTML)]
    script = writer.write("task1.yaml", "settings", steps)
    # the document's identifiers are written for dumps; the HTML's short resource ids are completed
    # a view no element finds is tapped by its text, a screen-level action
    assert script.lines == ["$settings_screen__accents_checkbox.tap()", "$settings_screen__enter_row.tap()",
                            'tap_text("Font size")']
    assert not script.unmapped and len(script.on_screen) == 1 and "view 6" in script.on_screen[0]


def test_labels_are_compared_with_white_space_runs_as_one_space() -> None:
    assert droidtask.render_action("click", "Only export\n(changing  the") == "tap: only export (changing the"
