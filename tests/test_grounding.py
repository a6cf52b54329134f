"""The grounding cascade on small hand-made screens: identifiers, fuzzy, embedding, screens, lists."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from grounding_trees import PKG, V, doc, el, find, rid, screen

from tapir.core.document import AppDocument, Dialect, Element, Identifier, Signature
from tapir.core.errors import ActionError, ElementNotFound, UnknownElement
from tapir.dsl.api import ELEMENT_METHODS
from tapir.hierarchy import UITree, parse_view_list
from tapir.runtime.grounding import Grounder, GroundingConfig, node_attributes
from tapir.runtime.grounding import embedding as embedding_module
from tapir.runtime.grounding.fuzzy import label_similarity, rid_similarity, topic

EXACT = GroundingConfig(use_embedding=False)
NO_GUESS = GroundingConfig(use_fuzzy=False, use_embedding=False)


def toolbar(*buttons: V) -> V:
    return V("LinearLayout", *buttons, rid="toolbar")


def notes_screen(**changes: str) -> V:
    """A toolbar with two icon buttons and a title, and a list of three notes with a header."""
    return V(
        "FrameLayout",
        toolbar(
            V("ImageButton", rid=changes.get("search_rid", "search"), desc=changes.get("search", "Search"),
              clickable=True),
            V("ImageButton", rid=changes.get("settings_rid", "settings"), desc=changes.get("settings", "Settings"),
              clickable=True),
            V("TextView", rid="title", text="Notes"),
        ),
        V("androidx.recyclerview.widget.RecyclerView",
          V("TextView", rid="header", text="Pinned"),
          *(V("LinearLayout", V("TextView", rid="note_title", text=t),
              V("ImageButton", rid="note_menu", desc="More", clickable=True), rid="note_row", clickable=True)
            for t in ("Groceries", "Holiday plans", "Books to read")),
          rid="note_list", scrollable=True),
        V("EditText", rid="new_note", text="Write a note"),
    )


NOTES = doc(("main_screen", (
    el("main_screen__search_button", "button", f"//node[@resource-id='{PKG}:id/search' and @content-desc='Search']",
       rid("search")),
    el("main_screen__settings_button", "button",
       f"//node[@resource-id='{PKG}:id/settings' and @content-desc='Settings']", rid("settings")),
    el("main_screen__title", "text", "//node[@text='Notes']", rid("title")),
    el("main_screen__note_list", "list", rid("note_list")),
    el("main_screen__note_title", "text", rid("note_title"), item_of="main_screen__note_list"),
    el("main_screen__note_menu_button", "button", rid("note_menu"), item_of="main_screen__note_list"),
    el("main_screen__new_note_input", "input", rid("new_note")),
)))


# -- identifiers --------------------------------------------------------------------------------


def test_the_first_precise_identifier_grounds_the_element() -> None:
    tree = screen(notes_screen())
    g = Grounder(NOTES, config=EXACT).ground("main_screen__settings_button", tree)
    assert g is not None and g.method == "identifier" and g.identifier_index == 0
    assert g.node == find(tree, rid="settings") and g.score == 1.0


def test_the_queue_falls_back_when_the_precise_identifier_no_longer_matches() -> None:
    tree = screen(notes_screen(settings="Preferences"))
    g = Grounder(NOTES, config=EXACT).ground("main_screen__settings_button", tree)
    assert g is not None and g.identifier_index == 1 and g.node == find(tree, rid="settings")


def test_an_identifier_matching_several_views_is_skipped() -> None:
    tree = screen(V("LinearLayout",
                    V("Button", rid="action", text="Share", clickable=True),
                    V("Button", rid="action", text="Delete", clickable=True)))
    d = doc(("s", (el("s__delete", "button", rid("action"), "//node[@text='Delete']"),)))
    g = Grounder(d, config=NO_GUESS)
    found = g.ground("s__delete", tree)
    assert found is not None and found.identifier_index == 1 and found.node.text == "Delete"
    assert "#0 matches 2 views" in found.detail
    only_ambiguous = doc(("s", (el("s__delete", "button", rid("action")),)))
    g2 = Grounder(only_ambiguous, config=NO_GUESS)
    assert g2.ground("s__delete", tree) is None
    assert "matches 2 views" in g2.last_detail


def test_hits_inside_one_clickable_row_count_as_one_target() -> None:
    tree = screen(V("LinearLayout",
                    V("LinearLayout", V("ImageView", rid="icon"), V("TextView", rid="label", text="Wi-Fi"),
                      rid="row", clickable=True)))
    d = doc(("s", (el("s__wifi", "button", "//node[@resource-id='org.example.app:id/row']//node"),)))
    found = Grounder(d, config=NO_GUESS).ground("s__wifi", tree)
    assert found is not None and found.node == find(tree, rid="row")


def test_a_label_inside_a_clickable_row_grounds_to_the_row() -> None:
    tree = screen(notes_screen())
    d = doc(("s", (el("s__holiday", "button", "//node[@text='Holiday plans']"),)))
    found = Grounder(d, config=NO_GUESS).ground("s__holiday", tree)
    row = tree.node(find(tree, text="Holiday plans").parent)  # type: ignore[arg-type]
    assert found is not None and found.node == row and row.clickable


def test_html_dialect_identifiers_run_on_the_autodroid_rendering() -> None:
    tree = screen(notes_screen())
    d = doc(("s", (el("s__settings", "button", ("html", "//button[@resource_id='settings' and @alt='Settings']")),
                   el("s__rows", "list", ("html", "//scrollbar[@resource_id='note_list']")))))
    g = Grounder(d, config=NO_GUESS)
    found = g.ground("s__settings", tree)
    assert found is not None and found.node == find(tree, rid="settings")
    rows = g.ground("s__rows", tree)
    assert rows is not None and rows.node == find(tree, rid="note_list")


def test_an_invalid_xpath_is_skipped_and_reported_once() -> None:
    tree = screen(notes_screen())
    d = doc(("s", (el("s__settings", "button", "//node[@resource-id=", rid("settings")),)))
    g = Grounder(d, config=NO_GUESS)
    for _ in range(2):
        found = g.ground("s__settings", tree)
        assert found is not None and found.identifier_index == 1
    assert len([n for n in g.notes if "invalid XPath" in n]) == 1


def test_an_input_grounds_to_the_editable_view_inside_its_container() -> None:
    tree = screen(V("LinearLayout", V("com.google.android.material.textfield.TextInputLayout",
                                      V("EditText", rid="field", text=""), rid="name_layout")))
    d = doc(("s", (el("s__name", "input", rid("name_layout")),)))
    found = Grounder(d, config=NO_GUESS).ground("s__name", tree)
    assert found is not None and found.node.editable and found.node == find(tree, rid="field")


def test_a_fallback_hit_owned_by_another_element_is_skipped() -> None:
    # "Settings" lost its resource id; its fallback XPath on the id now finds only the search
    # button, which its own first identifier claims
    tree = screen(notes_screen(settings_rid="", search_rid="settings"))
    d = doc(("main_screen", (
        el("main_screen__search_button", "button", "//node[@content-desc='Search']"),
        el("main_screen__settings_button", "button",
           f"//node[@resource-id='{PKG}:id/settings' and @content-desc='Settings']", rid("settings")),
    )))
    g = Grounder(d, config=NO_GUESS)
    assert g.ground("main_screen__settings_button", tree) is None
    assert "finds the view of main_screen__search_button" in g.last_detail
    found = Grounder(d, config=EXACT).ground("main_screen__settings_button", tree)
    assert found is not None and found.method == "fuzzy" and found.node.content_desc == "Settings"


def test_a_fallback_hit_showing_another_label_yields_to_the_labelled_view() -> None:
    # the element's own view lost its id; the id-only XPath now finds the one other "title"
    tree = screen(V("LinearLayout", V("TextView", rid="title", text="Dialer"),
                    V("LinearLayout", V("TextView", text="Settings", clickable=True), V("TextView", text="About",
                                                                                         clickable=True))))
    d = doc(("s", (el("s__settings", "button", "//node[@resource-id='org.example.app:id/title' and @text='Settings']",
                      rid("title")),)))
    found = Grounder(d, config=EXACT).ground("s__settings", tree)
    assert found is not None and found.method == "fuzzy" and found.node.text == "Settings"
    assert "instead of identifier #1" in found.detail


def test_a_positional_fallback_on_a_differently_labelled_view_is_refused() -> None:
    tree = screen(V("LinearLayout", V("Button", text="Sponsored", clickable=True),
                    V("Button", text="Share", clickable=True)))
    d = doc(("s", (el("s__delete", "button", "//node[@text='Delete']", "/hierarchy/node/node[1]"),)))
    g = Grounder(d, config=EXACT)
    assert g.ground("s__delete", tree) is None
    assert "(a position) finds a view showing 'Sponsored'" in g.last_detail


# -- fuzzy ---------------------------------------------------------------------------------------


def test_a_view_that_lost_its_resource_id_is_found_by_its_label() -> None:
    tree = screen(notes_screen(settings_rid=""))
    g = Grounder(NOTES, config=EXACT)
    found = g.ground("main_screen__settings_button", tree)
    assert found is not None and found.method == "fuzzy" and found.node.content_desc == "Settings"
    assert found.score >= EXACT.fuzzy_threshold
    assert found.runner_up_score is not None and found.score - found.runner_up_score >= EXACT.fuzzy_margin
    assert Grounder(NOTES, config=NO_GUESS).ground("main_screen__settings_button", tree) is None


def test_fuzzy_scores_a_reworded_label_and_a_renamed_id() -> None:
    assert label_similarity("Save", "Save changes") >= 0.8 > label_similarity("Save", "Share")
    assert label_similarity("Settings", "SETTINGS") == 1.0
    assert rid_similarity("save_button", "saveButton") == 1.0
    assert rid_similarity("save", "btn_save") >= 0.9
    assert rid_similarity("timer_label", "alarm_label") < 0.8


def test_fuzzy_refuses_two_near_identical_candidates() -> None:
    # the id is gone and two views show nearly the label: a coin flip, so no answer
    d = doc(("s", (el("s__delete", "button", "//node[@resource-id='org.example.app:id/delete' and @text='Delete']"),)))
    g = Grounder(d, config=EXACT)
    tree = screen(V("LinearLayout", V("Button", text="Delete", clickable=True),
                    V("Button", text="DELETE", clickable=True)))
    assert g.ground("s__delete", tree) is None
    assert "too close" in g.last_detail
    # with one of them reworded the other is clearly the best
    tree2 = screen(V("LinearLayout", V("Button", text="Delete", clickable=True),
                     V("Button", text="Delete all", clickable=True)))
    found = g.ground("s__delete", tree2)
    assert found is not None and found.node.text == "Delete"


def test_fuzzy_keeps_to_views_of_the_elements_kind() -> None:
    # the heading shows the very label of the button but cannot be tapped: only the button counts
    tree = screen(V("LinearLayout", V("TextView", text="Export"), V("Button", text="Export", clickable=True)))
    d = doc(("s", (el("s__export", "button", "//node[@resource-id='org.example.app:id/export' and @text='Export']"),)))
    found = Grounder(d, config=EXACT).ground("s__export", tree)
    assert found is not None and found.node.clickable and found.node.text == "Export"
    # for a text element both are candidates, and they tie
    text_el = doc(("s", (el("s__export", "text", "//node[@resource-id='org.example.app:id/export' and "
                                                  "@text='Export']"),)))
    assert Grounder(text_el, config=EXACT).ground("s__export", tree) is None


def test_views_other_elements_find_are_not_fuzzy_candidates() -> None:
    # the timer section's "Max reminder duration" is scrolled away; the alarm section's label of
    # the same text, and its row, belong to alarm elements (as in the real clock app's document)
    tree = screen(V("LinearLayout", V("RelativeLayout", V("TextView", rid="alarm_max_label",
                                                          text="Max reminder duration"),
                                      rid="alarm_holder", clickable=True)))
    d = doc(("settings", (
        el("settings__alarm_options", "list", rid("alarm_holder")),
        el("settings__alarm_max", "button", "//node[@resource-id='org.example.app:id/alarm_max_label' and "
                                            "@text='Max reminder duration']", rid("alarm_max_label")),
        el("settings__timer_max", "button", "//node[@resource-id='org.example.app:id/timer_max_label' and "
                                            "@text='Max reminder duration']", rid("timer_max_label")),
    )))
    g = Grounder(d, config=EXACT)
    assert g.ground("settings__alarm_max", tree) is not None
    assert g.ground("settings__timer_max", tree) is None


# -- embedding -----------------------------------------------------------------------------------


class TableEmbedder:
    """A stand-in embedder: words of one group are similar (0.9), others not (0.1)."""

    def __init__(self, *groups: Sequence[str]) -> None:
        self.group = {w.lower(): i for i, g in enumerate(groups) for w in g}
        self.calls = 0

    def similarity(self, queries: Sequence[str], candidates: Sequence[str]) -> list[list[float]]:
        self.calls += 1

        def sim(a: str, b: str) -> float:
            ga, gb = self.group.get(a.lower()), self.group.get(b.lower())
            return 1.0 if a.lower() == b.lower() else 0.9 if ga is not None and ga == gb else 0.1
        return [[sim(q, c) for c in candidates] for q in queries]


def test_the_embedding_stage_finds_a_paraphrased_label() -> None:
    tree = screen(notes_screen(settings_rid="", settings="Preferences"))
    embedder = TableEmbedder(("Settings", "Preferences"))
    g = Grounder(NOTES, embedder=embedder)
    found = g.ground("main_screen__settings_button", tree)
    assert found is not None and found.method == "embedding" and found.node.content_desc == "Preferences"
    assert Grounder(NOTES, config=EXACT).ground("main_screen__settings_button", tree) is None


def test_the_embedding_stage_is_only_asked_when_the_earlier_stages_fail() -> None:
    embedder = TableEmbedder(("Settings", "Preferences"))
    g = Grounder(NOTES, embedder=embedder)
    assert g.ground("main_screen__settings_button", screen(notes_screen(settings_rid=""))) is not None
    assert embedder.calls == 0


def test_without_sentence_transformers_the_stage_is_skipped_and_said_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_module, "_status", None)
    monkeypatch.setattr(embedding_module, "_default", None)
    monkeypatch.setattr(embedding_module.importlib.util, "find_spec", lambda name: None)
    g = Grounder(NOTES)
    tree = screen(notes_screen(settings_rid="", settings="Preferences"))
    assert g.ground("main_screen__settings_button", tree) is None
    assert g.ground("main_screen__settings_button", tree) is None
    off = [n for n in g.notes if "embedding stage off" in n]
    assert len(off) == 1 and "not installed" in off[0]
    assert "embedding: off" in g.last_detail


# -- screens -------------------------------------------------------------------------------------


def settings_screen() -> V:
    return V("FrameLayout", V("LinearLayout", V("ImageButton", rid="back", desc="Navigate up", clickable=True),
                              V("TextView", rid="title", text="Settings"), rid="toolbar"),
             V("ScrollView", V("Switch", rid="dark_mode", text="Dark mode", checkable=True, clickable=True),
               rid="settings_list", scrollable=True))


def about_screen() -> V:
    return V("FrameLayout", V("LinearLayout", V("ImageButton", rid="back", desc="Navigate up", clickable=True),
                              V("TextView", rid="title", text="About"), rid="toolbar"),
             V("TextView", rid="version", text="Version 1.0"))


def sig(*ids: str, none: Sequence[str] = (), activity: str | None = None) -> Signature:
    return Signature(activity, tuple(Identifier(rid(i), Dialect.UIAUTOMATOR) for i in ids),
                     tuple(Identifier(rid(i), Dialect.UIAUTOMATOR) for i in none))


APP = doc(
    ("main_screen", sig("note_list"), NOTES.screens[0].elements),
    ("settings_screen", sig("settings_list"), (
        el("settings_screen__back_button", "button", rid("back")),
        el("settings_screen__title", "text", "//node[@text='Settings']", rid("title")),
        el("settings_screen__dark_mode_switch", "switch", rid("dark_mode")),
    )),
    ("about_screen", sig("version"), (
        el("about_screen__back_button", "button", rid("back")),
        el("about_screen__version", "text", rid("version")),
    )),
)


def test_screens_are_identified_by_their_signatures() -> None:
    g = Grounder(APP, config=EXACT)
    for tree, name in ((screen(notes_screen()), "main_screen"), (screen(settings_screen()), "settings_screen"),
                       (screen(about_screen()), "about_screen")):
        match = g.identify_screen(tree)
        assert match.name == name and match.confident and match.score >= EXACT.screen_threshold
        assert match.candidates[0][0] == name


def test_an_unknown_screen_is_not_named() -> None:
    match = Grounder(APP, config=EXACT).identify_screen(screen(V("FrameLayout", V("TextView", text="Hello"))))
    assert match.name is None and "threshold" in match.detail


def test_activity_and_none_of_rule_screens_out() -> None:
    tree = screen(settings_screen())
    object.__setattr__(tree, "activity", f"{PKG}.SettingsActivity")
    d = doc(("a", sig("toolbar", activity=".MainActivity"), ()),
            ("b", sig("toolbar", none=["dark_mode"]), ()),
            ("c", sig("toolbar", activity=".SettingsActivity"), ()))
    match = Grounder(d, config=EXACT).identify_screen(tree)
    assert match.name == "c" and [n for n, _ in match.candidates] == ["c"]


def test_a_tie_between_screens_lowers_the_confidence() -> None:
    d = doc(("first", sig("toolbar"), ()), ("second", sig("toolbar"), ()))
    match = Grounder(d, config=EXACT).identify_screen(screen(settings_screen()))
    assert match.name == "first" and not match.confident
    assert match.score < match.candidates[0][1] and "tie" in match.detail


def test_without_signatures_the_screen_whose_elements_are_found_wins() -> None:
    d = doc(("settings", (el("settings__dark", "switch", rid("dark_mode")), el("settings__back", "button",
                                                                               rid("back")))),
            ("about", (el("about__version", "text", rid("version")), el("about__back", "button", rid("back")))))
    g = Grounder(d, config=EXACT)
    assert g.identify_screen(screen(settings_screen())).name == "settings"
    assert g.identify_screen(screen(about_screen())).name == "about"


def test_the_skeleton_of_an_imported_document_identifies_its_screen() -> None:
    skeleton = ("<framelayout><linearlayout resource_id=\"toolbar\"><button resource_id=\"back\"></button>"
                "<p resource_id=\"title\"></p></linearlayout><scrollbar resource_id=\"settings_list\">"
                "</scrollbar></framelayout>")
    d = doc(("settings", Signature(skeleton=skeleton), ()), ("other", Signature(skeleton="<framelayout><p></p>"
                                                                                         "</framelayout>"), ()))
    match = Grounder(d, config=EXACT).identify_screen(screen(settings_screen()))
    assert match.name == "settings" and match.confident


def test_an_element_of_another_screen_sharing_its_identifiers_is_refused() -> None:
    g = Grounder(APP, config=EXACT)
    tree = screen(settings_screen())
    assert g.ground("settings_screen__back_button", tree) is not None
    assert g.ground("about_screen__back_button", tree) is None
    assert "settings_screen is showing" in g.last_detail


def test_the_same_widget_on_another_screen_still_grounds() -> None:
    # both tabs of a main screen define the same settings button (as upstream documents do);
    # two "more options" buttons that open different menus are look-alikes
    def tab(name: str, leads_to: str) -> tuple[str, Signature, tuple[Element, ...]]:
        return (name, sig(f"{name}_list"), (
            replace(el(f"{name}__settings_button", "button", rid("settings")), leads_to="settings_screen"),
            replace(el(f"{name}__more_button", "button", rid("more")), leads_to=leads_to)))

    d = doc(tab("clock_tab", "clock_menu"), tab("timer_tab", "timer_menu"))
    tree = screen(V("FrameLayout", toolbar(V("ImageButton", rid="settings", desc="Settings", clickable=True),
                                           V("ImageButton", rid="more", desc="More options", clickable=True)),
                    V("RecyclerView", V("TextView", text="05:00"), rid="timer_tab_list")))
    g = Grounder(d, config=EXACT)
    assert g.identify_screen(tree).name == "timer_tab"
    found = g.ground("clock_tab__settings_button", tree)
    assert found is not None and found.node.content_desc == "Settings"
    assert g.ground("clock_tab__more_button", tree) is None
    assert g.ground("timer_tab__more_button", tree) is not None


def test_a_tab_buttons_copy_on_another_tabs_screen_is_the_same_widget() -> None:
    # upstream documents give each tab its own copy of the tab bar and toolbar, under other names;
    # the copies are one widget when every copy said to lead somewhere leads to the same screen
    def tab(name: str, timer_button: str, add_to: str) -> tuple[str, Signature, tuple[Element, ...]]:
        timer = f"//node[@resource-id='{PKG}:id/tab_label' and @text='Timer']"
        return (name, sig(f"{name}_list"), (
            el(f"{name}__{timer_button}", "button", timer, rid("tab_label")),
            replace(el(f"{name}__add_button", "button", rid("add")), leads_to=add_to)))

    d = doc(tab("alarm_tab", "timer_tab_button", "new_alarm_screen"),
            tab("timer_tab", "timer_tab_label", "new_timer_screen"))
    # the document says the alarm tab's Timer button leads to the timer tab; the timer tab's copy
    # (named a label) says nothing
    d = replace(d, screens=tuple(
        replace(s, elements=tuple(replace(e, leads_to="timer_tab") if e.name == "alarm_tab__timer_tab_button"
                                  else e for e in s.elements)) for s in d.screens))
    tree = screen(V("FrameLayout", toolbar(V("ImageButton", rid="add", desc="New", clickable=True)),
                    V("LinearLayout", V("TextView", rid="tab_label", text="Alarm", clickable=True),
                      V("TextView", rid="tab_label", text="Timer", clickable=True)),
                    V("RecyclerView", V("TextView", text="05:00"), rid="timer_tab_list")))
    g = Grounder(d, config=EXACT)
    assert g.identify_screen(tree).name == "timer_tab"
    found = g.ground("alarm_tab__timer_tab_button", tree)
    assert found is not None and found.node.text == "Timer"
    # the "New" buttons open different screens: look-alikes, not one widget
    assert g.ground("alarm_tab__add_button", tree) is None


def test_copies_on_dialogs_are_never_one_widget() -> None:
    # two dialogs' OK buttons that both go back to the list answer different questions
    def dialog(name: str, button: str) -> tuple[str, Signature, tuple[Element, ...]]:
        ok = "//node[@resource-id='android:id/button1' and @text='OK']"
        return (name, sig(f"{name}_choices"), (replace(el(f"{name}__{button}", "button", ok), leads_to="list"),))

    d = doc(("list", sig("list_items"), ()), dialog("sort_dialog", "ok_button"),
            dialog("filter_dialog", "confirm_button"))
    tree = screen(V("FrameLayout", V("ListView", V("TextView", text="Name"), rid="filter_dialog_choices"),
                    V("Button", rid="android:id/button1", text="OK", clickable=True)))
    g = Grounder(d, config=EXACT)
    assert g.identify_screen(tree).name == "filter_dialog"
    assert g.ground("sort_dialog__ok_button", tree) is None


def test_no_similarity_search_for_an_element_of_another_screen() -> None:
    # "Settings" (the title of the settings screen) looks like the settings button of the main
    # screen, but the main screen is showing
    g = Grounder(APP, config=EXACT)
    assert g.ground("settings_screen__title", screen(notes_screen())) is None
    assert "main_screen is showing" in g.last_detail


# -- lists ---------------------------------------------------------------------------------------


def test_items_are_the_repeated_children_without_the_header() -> None:
    g = Grounder(NOTES, config=EXACT)
    tree = screen(notes_screen())
    items = g.items("main_screen__note_list", tree)
    assert [g.child("main_screen__note_list", "main_screen__note_title", i, tree).node.text  # type: ignore[union-attr]
            for i in items] == ["Groceries", "Holiday plans", "Books to read"]


def test_items_see_through_a_wrapper_and_skip_invisible_children() -> None:
    tree = screen(V("ScrollView", V("LinearLayout", V("TextView", text="a"), V("TextView", text="b"),
                                    V("TextView", text="c", visible=False)), rid="scroll", scrollable=True))
    d = doc(("s", (el("s__list", "list", rid("scroll")),)))
    assert [n.text for n in Grounder(d, config=EXACT).items("s__list", tree)] == ["a", "b"]


def _alarm_row(time: str, label: str, *, clickable: bool = True) -> V:
    return V("RelativeLayout", V("LinearLayout", V("TextView", rid="alarm_time", text=time),
                                 V("TextView", rid="alarm_days", text=label)),
             V("Switch", rid="alarm_switch", checkable=True, clickable=True),
             V("ImageButton", rid="alarm_more", desc="More options", clickable=True), rid="alarm_item",
             clickable=clickable)


ALARMS = doc(("alarms", (el("alarms__list", "list", rid("alarms_list")),
                         el("alarms__time", "text", rid("alarm_time"), item_of="alarms__list"),
                         el("alarms__switch", "switch", rid("alarm_switch"), item_of="alarms__list"))))


@pytest.mark.parametrize("host", ["RecyclerView", "LinearLayout"])
@pytest.mark.parametrize("rows", [1, 2, 3])
def test_a_list_of_one_row_is_one_item_not_the_rows_parts(host: str, rows: int) -> None:
    # the clock's alarms list with one alarm left: one item, whose parts are its children
    tree = screen(V(host, *(_alarm_row(f"0{i}:00", "Gym") for i in range(rows)), rid="alarms_list",
                    scrollable=host == "RecyclerView"))
    g = Grounder(ALARMS, config=EXACT)
    items = g.items("alarms__list", tree)
    assert [n.resource_name for n in items] == ["alarm_item"] * rows
    assert g.child("alarms__list", "alarms__switch", items[0], tree) is not None


def test_a_lone_plain_row_is_an_item_when_it_holds_the_parts_of_one() -> None:
    # neither clickable nor in an adapter view: the document's item children decide
    tree = screen(V("LinearLayout", _alarm_row("06:45", "Gym", clickable=False), rid="alarms_list"))
    assert [n.resource_name for n in Grounder(ALARMS, config=EXACT).items("alarms__list", tree)] == ["alarm_item"]
    # a scroll view's one child is a wrapper whatever it holds
    wrapped = screen(V("ScrollView", V("LinearLayout", _alarm_row("06:45", "Gym")), rid="alarms_list",
                       scrollable=True))
    assert [n.resource_name for n in Grounder(ALARMS, config=EXACT).items("alarms__list", wrapped)] == ["alarm_item"]


def test_items_of_a_missing_list_or_a_non_list() -> None:
    g = Grounder(NOTES, config=EXACT)
    with pytest.raises(ElementNotFound):
        g.items("main_screen__note_list", screen(settings_screen()))
    with pytest.raises(ActionError):
        g.items("main_screen__settings_button", screen(notes_screen()))


def theme_dialog(checked: str = "Auto", labels: Sequence[str] = ("White", "Dark", "Auto")) -> V:
    return V("FrameLayout", V("TextView", rid="dialog_title", text="Theme"),
             V("RadioGroup", *(V("LinearLayout", V("RadioButton", rid="option", text=t, checkable=True,
                                                     checked=t == checked), clickable=True) for t in labels),
               rid="theme_options"))


THEME = doc(("theme_dialog", (el("theme_dialog__theme_options", "list", rid("theme_options"),
                                 options=("White", "Dark", "Auto")),)))


def _match(g: Grounder, tree, query):  # type: ignore[no-untyped-def]
    items = g.items("theme_dialog__theme_options", tree)
    found = g.match_item("theme_dialog__theme_options", items, tree, query)
    return None if found is None else (items.index(found.node), found.method)


def test_match_exact_then_case_insensitive_then_fuzzy() -> None:
    g = Grounder(THEME, config=EXACT)
    tree = screen(theme_dialog(labels=("White", "Dark", "Auto light/dark")))
    assert _match(g, tree, "Dark") == (1, "exact")
    assert _match(g, tree, "  dARK ") == (1, "exact")
    assert _match(g, tree, "Auto") == (2, "fuzzy")
    assert _match(g, tree, "black") is None  # no string evidence, and no embedding here
    assert "fuzzy" in g.last_detail


def test_match_refuses_an_ambiguous_fuzzy_query() -> None:
    g = Grounder(THEME, config=EXACT)
    tree = screen(theme_dialog(labels=("Dark blue", "Dark green", "White")))
    assert _match(g, tree, "dark") is None
    assert "too close" in g.last_detail


def test_match_by_attributes_uses_the_state_of_views_inside_the_item() -> None:
    g = Grounder(THEME, config=EXACT)
    tree = screen(theme_dialog(checked="Dark"))
    assert _match(g, tree, {"selected": True}) == (1, "attributes")
    assert _match(g, tree, {"checked": True, "text": "dark"}) == (1, "attributes")
    assert _match(g, tree, {"checked": True, "text": "White"}) is None
    notes = Grounder(NOTES, config=EXACT)
    rows_tree = screen(notes_screen())
    rows = notes.items("main_screen__note_list", rows_tree)
    first = notes.match_item("main_screen__note_list", rows, rows_tree, {"resource_id": "note_row", "enabled": True})
    assert first is not None and first.node == rows[0] and "first of 3" in first.detail
    with pytest.raises(ActionError, match="colour"):
        _match(g, tree, {"colour": "red"})


def test_match_with_a_context_embedder_uses_the_lists_topic() -> None:
    seen: list[tuple[list[str], list[str]]] = []

    class Recorder(TableEmbedder):
        def similarity(self, queries: Sequence[str], candidates: Sequence[str]) -> list[list[float]]:
            seen.append((list(queries), list(candidates)))
            return [[0.9 if c.endswith("Dark") else 0.2 for c in candidates] for _ in queries]

    g = Grounder(THEME, embedder=Recorder())
    assert _match(g, screen(theme_dialog()), "black") == (1, "embedding")
    assert seen[0][0] == ["theme black"] and "theme Dark" in seen[0][1]
    assert topic("theme_options") == "theme"


def test_node_attributes_have_the_registry_keys() -> None:
    tree = screen(theme_dialog(checked="Dark"))
    attrs = node_attributes(tree, find(tree, text="Dark"))
    doc_keys = ELEMENT_METHODS["get_attributes"].doc
    for key in attrs:
        assert f"'{key}'" in doc_keys
    assert attrs["checked"] is True and attrs["selected"] is True and attrs["clickable"] is True
    assert attrs["text"] == "Dark"


def test_child_is_grounded_inside_the_item() -> None:
    g = Grounder(NOTES, config=EXACT)
    tree = screen(notes_screen())
    items = g.items("main_screen__note_list", tree)
    menu = g.child("main_screen__note_list", "main_screen__note_menu_button", items[1], tree)
    assert menu is not None and menu.node.parent == items[1].id and menu.node.clickable
    # on the whole screen the same identifier finds one menu per row: ambiguous
    assert g.ground("main_screen__note_menu_button", tree) is None


def test_child_identifiers_in_the_html_dialect_run_inside_the_item() -> None:
    d = doc(("s", (el("s__notes", "list", ("html", "//scrollbar[@resource_id='note_list']")),
                   el("s__note_title", "text", ("html", "//*[@resource_id='note_title']"), item_of="s__notes"))))
    g = Grounder(d, config=EXACT)
    tree = screen(notes_screen())
    items = g.items("s__notes", tree)
    titles = [g.child("s__notes", "s__note_title", item, tree) for item in items]
    assert [t.node.text for t in titles if t is not None] == ["Groceries", "Holiday plans", "Books to read"]
    assert all(t is not None and t.method == "identifier" for t in titles)


def test_one_notion_of_items_for_len_index_iteration_and_match() -> None:
    g = Grounder(NOTES, config=EXACT)
    tree = screen(notes_screen())
    items = g.items("main_screen__note_list", tree)
    assert len(items) == 3
    found = g.match_item("main_screen__note_list", items, tree, "Books to read")
    assert found is not None and found.node == items[2] and found.method == "exact"
    assert g.match_item("main_screen__note_list", items, tree, "Pinned") is None  # the header is no item


# -- names ---------------------------------------------------------------------------------------


def test_an_unknown_element_name_suggests_the_closest() -> None:
    g = Grounder(NOTES, config=EXACT)
    with pytest.raises(UnknownElement) as info:
        g.ground("main_screen__setings_button", screen(notes_screen()))
    assert "main_screen__settings_button" in (info.value.hint or "")
    assert g.element("main_screen:settings_button").name == "main_screen__settings_button"


def test_a_row_whose_label_another_element_names_is_that_elements() -> None:
    """The claim check looks through a row to its label: "Import messages" is the import element's
    row, so a fuzzy or embedding score for "Export" on that row cannot take it; a row whose label
    no element names stays free."""
    from tapir.core.kinds import Kind
    from tapir.hierarchy.parse import parse_uiautomator
    from tapir.runtime.grounding.grounder import _claim_on
    from tapir.runtime.grounding.screen_view import ScreenView

    def row(n: int, label: str) -> str:
        y = 300 + 200 * n
        return (f'<node class="android.widget.LinearLayout" package="{PKG}" clickable="true" '
                f'bounds="[0,{y}][1080,{y + 150}]"><node class="android.widget.TextView" package="{PKG}" '
                f'text="{label}" bounds="[40,{y + 20}][900,{y + 120}]" /></node>')

    tree = parse_uiautomator(f'<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="{PKG}" '
                             f'bounds="[0,0][1080,2400]">{row(0, "Import messages")}{row(1, "Export all")}'
                             '</node></hierarchy>')
    view = ScreenView(tree)
    import_row, import_label, export_row, export_label = tree.nodes[1:5]
    claims = {import_label.id: "screen__import_messages"}

    def claimed(node: object) -> str | None:
        return claims.get(node.id)  # type: ignore[attr-defined]

    assert _claim_on(view, import_row, Kind.BUTTON, claimed) == "screen__import_messages"
    assert _claim_on(view, export_row, Kind.BUTTON, claimed) is None
    assert _claim_on(view, export_label, Kind.BUTTON, claimed) is None


# -- similarity stages: views that are no label ------------------------------------------------


def _explicit(*views: tuple[int, int | None, str, str, str, tuple[int, int, int, int]]) -> UITree:
    """A tree with real bounds: (id, parent, class, resource id, text, (x1, y1, x2, y2))."""
    out = [{"temp_id": i, "parent": p, "children": [c[0] for c in views if c[1] == i], "class": f"android.widget.{k}",
            "resource_id": f"{PKG}:id/{r}" if r else "", "text": t, "bounds": [[b[0], b[1]], [b[2], b[3]]]}
           for i, p, k, r, t, b in views]
    return parse_view_list(out)


@pytest.mark.parametrize(("bottom", "found"), [(2280, False), (400, True)])
def test_a_text_filling_the_page_is_no_label_for_the_similarity_stages(bottom: int, found: bool) -> None:
    # the title is translated; the empty-state text below it names the element's label in passing
    tree = _explicit((0, None, "FrameLayout", "", "", (0, 0, 1080, 2280)),
                     (1, 0, "TextView", "", "Verlauf", (0, 0, 1080, 150)),
                     (2, 0, "TextView", "history_empty_view", "No history here", (0, 300, 1080, bottom)))
    d = doc(("s", (el("s__history", "text", "//node[@text='History']"),)))
    got = Grounder(d, config=EXACT).ground("s__history", tree)
    # a placeholder filling the page is passed over; the same words in a line of text still count
    assert (got is not None and got.node.text == "No history here") is found


def test_a_container_known_by_its_resource_id_alone_is_no_label_for_the_embedding_stage() -> None:
    tree = _explicit((0, None, "FrameLayout", "", "", (0, 0, 1080, 2280)),
                     (1, 0, "LinearLayout", "groups_fragment", "", (0, 0, 1080, 2000)),
                     (2, 1, "TextView", "", "Classmates", (0, 0, 1080, 150)),
                     (3, 0, "TextView", "", "Gruppen", (0, 2000, 1080, 2280)))
    d = doc(("s", (el("s__groups", "text", f"//node[@resource-id='{PKG}:id/tab_item_label' and @text='Groups']"),)))
    # the fragment's id says "groups" as well as the translated label does: only the label shows it
    embedder = TableEmbedder(("Groups", "groups fragment", "Gruppen"))
    got = Grounder(d, embedder=embedder).ground("s__groups", tree)
    assert got is not None and got.method == "embedding" and got.node.text == "Gruppen"


# -- what an identifier says about its element; what a matched item's tap acts on --------------


def test_a_container_an_identifier_looks_in_is_not_the_elements_label() -> None:
    """``//node[@resource-id='holder']//node[@resource-id='list']`` names where the list is: a view
    with the holder's id is no candidate for the list (a tab's empty holder was taken for its
    list); a label inside the element (``/ancestor::``) still is its label."""
    from tapir.runtime.grounding.identifiers import labels

    scoped_xpath = (f"//node[@resource-id='{PKG}:id/fragment_fastscroller']"
                    f"//node[@resource-id='{PKG}:id/fragment_list']")
    scoped = Identifier(scoped_xpath, Dialect.UIAUTOMATOR)
    tab = Identifier("//node[@text='Groups']/ancestor::node[@clickable='true'][1]", Dialect.UIAUTOMATOR)
    assert labels([scoped]).rids == ("fragment_fastscroller", "fragment_list")  # every literal, as before
    assert labels([scoped], own=True).rids == ("fragment_list",)
    assert labels([tab], own=True).texts == ("Groups",)
    g = Grounder(doc(("groups", (el("groups__fragment_list", "list", scoped_xpath),))),
                 config=GroundingConfig(use_embedding=False))  # the fuzzy stage is the one at stake
    holder = _explicit((0, None, "FrameLayout", "", "", (0, 0, 1080, 2280)),
                       (1, 0, "RelativeLayout", "fragment_fastscroller", "", (0, 300, 1080, 1900)),
                       (2, 1, "LinearLayout", "trackView", "", (1000, 300, 1080, 1900)))
    assert g.ground("groups__fragment_list", holder) is None


def test_a_matched_items_tap_goes_to_the_view_inside_it_that_shows_the_query() -> None:
    """A month page holds a day per clickable view: ``match("30")`` taps day 30, not the page's
    centre; a row whose label only the row receives is tapped as the row."""
    from tapir.runtime.action_checks import ActionChecks

    days = [(10 + d, 1, "TextView", "", str(d), (100 * (d % 7), 400 + 100 * (d // 7), 100 * (d % 7) + 90,
                                                 490 + 100 * (d // 7))) for d in range(1, 31)]
    tree = _explicit((0, None, "FrameLayout", "", "", (0, 0, 1080, 2280)),
                     (1, 0, "View", "", "", (0, 400, 1080, 1400)), *days)
    clickable = parse_view_list([{**v, "clickable": v["temp_id"] >= 10} for v in _views(tree)])
    page = clickable.node(1)
    day = ActionChecks.shown_target(clickable, page, "30")
    assert day is not None and day.text == "30"
    assert ActionChecks.shown_target(clickable, page, "31") is None  # nothing shows it: the item
    row = parse_view_list([{**v, "clickable": v["temp_id"] == 1} for v in _views(tree)])
    assert ActionChecks.shown_target(row, row.node(1), "30") is None  # the touch goes to the row


def _views(tree: UITree) -> list[dict[str, object]]:
    return [{"temp_id": n.id, "parent": n.parent if n.parent is not None else -1, "children": list(n.children),
             "class": n.class_name, "resource_id": n.resource_id, "text": n.text,
             "bounds": [[n.bounds.x1, n.bounds.y1], [n.bounds.x2, n.bounds.y2]]} for n in tree.nodes]


def _camera(timer: bool, selected: str) -> V:
    """A camera's one activity in photo mode (a timer button beside the settings button, Photo
    selected) or video mode: the same views with the same identifiers otherwise."""
    icons = [V("ImageButton", rid="toggle_timer", desc="Timer", clickable=True)] if timer else []
    return V("FrameLayout",
             V("LinearLayout", *icons, V("ImageButton", rid="settings", desc="Settings", clickable=True),
               rid="default_icons"),
             V("LinearLayout", V("TextView", text="Video", selected=selected == "Video", clickable=True),
               V("TextView", text="Photo", selected=selected == "Photo", clickable=True), rid="mode_tab"),
             V("ImageButton", rid="toggle_camera", desc="Toggle camera", clickable=True),
             V("ImageButton", rid="shutter", desc="Shutter", clickable=True))


def _mode_screens() -> AppDocument:
    # as upstream documents split the modes: each with its own copy of the buttons, and evidence
    # samples that differ (the photo screen's document lists fewer buttons than the video one's)
    from tapir.hierarchy import render_html

    def button(screen_name: str, name: str, rid_: str, desc: str) -> Element:
        return el(f"{screen_name}__{name}", "button",
                  f"//node[@resource-id='{PKG}:id/{rid_}' and @content-desc='{desc}']", rid(rid_))

    photo = (button("photo_mode", "timer_button", "toggle_timer", "Timer"),
             button("photo_mode", "shutter_button", "shutter", "Shutter"))
    video = (button("video_mode", "settings_button", "settings", "Settings"),
             button("video_mode", "toggle_camera_button", "toggle_camera", "Toggle camera"),
             button("video_mode", "shutter_button", "shutter", "Shutter"))
    return doc(("photo_mode", Signature(skeleton=render_html(screen(_camera(True, "Photo")))), photo),
               ("video_mode", Signature(skeleton=render_html(screen(_camera(False, "Video")))), video))


def test_a_mode_screen_is_told_by_the_views_its_look_alikes_layout_lacks() -> None:
    # the video screen's document finds more of its buttons by their descriptions, but they are
    # the photo screen's buttons too; the timer button, beside the settings button the video
    # layout shows without it, is what tells photo mode
    d = _mode_screens()
    g = Grounder(d, config=EXACT)
    photo = screen(_camera(True, "Photo"))
    match = g.identify_screen(photo)
    assert match.name == "photo_mode" and match.confident and "video_mode" in match.beaten
    assert "layout lacks" in match.detail
    assert g.ground("photo_mode__shutter_button", photo) is not None
    assert g.ground("video_mode__shutter_button", photo) is None  # a copy on the look-alike: refused
    video = screen(_camera(False, "Video"))
    assert g.identify_screen(video).name == "video_mode"
    assert g.ground("video_mode__shutter_button", video) is not None
    assert g.ground("photo_mode__timer_button", video) is None  # only photo mode has it
