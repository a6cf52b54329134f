"""Grounding on an app version the document was not written for: refuse rather than guess wrong.

* A part of a list item grounds to a view of its role or not at all: a checkbox whose id was
  dropped is the item's one checkable view, never its "Delete item" button.
* Resource ids renamed by a naming convention (``songs_list`` -> ``songsList``, ``tv_title``,
  ``title_view``) are read renamed, for screens and elements, but never as another id the
  document names; a renamed precise identifier beats a fallback one as written.
* Screens whose signature ids were dropped are recognised by what else they show (texts, the
  options of their lists), only when nothing is recognised otherwise.
* Lists are found by the views that hold their item children or their documented options; a
  tab that shows the list's name is not the list.
* ``match()`` never takes an item that shows only part of the query ("Play" for "Play next"),
  and pairs the documented options with reworded items as a whole.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from grounding_trees import PKG, V, doc, el, rid, screen

from tapir.core.document import Identifier, Signature
from tapir.runtime.grounding import Grounder, GroundingConfig
from tapir.runtime.grounding.fuzzy import rid_similarity, same_id, shown_similarity
from tapir.runtime.grounding.screen_view import ScreenView

EXACT = GroundingConfig(use_embedding=False)

# -- a checklist item and its parts --------------------------------------------------------------


def item(text: str, *, box_id: str = "item_checkbox", delete_id: str = "item_delete", extra: V | None = None) -> V:
    kids = [V("CheckBox", rid=box_id, text=text, checkable=True, clickable=True),
            V("ImageButton", rid=delete_id, desc="Delete item", clickable=True)]
    if extra is not None:
        kids.append(extra)
    return V("RelativeLayout", *kids, rid="item_row")


CHECKLIST = doc(("note", (
    el("note__items", "list", rid("checklist")),
    el("note__item_checkbox", "checkbox", rid("item_checkbox"), item_of="note__items"),
    el("note__item_delete_button", "button", rid("item_delete"), item_of="note__items"),
)))


def checklist(*rows: V) -> V:
    return V("FrameLayout", V("RecyclerView", *rows, rid="checklist", scrollable=True))


@pytest.mark.parametrize("box_id", ["", "itemCheckbox", "cb_item"])
def test_an_items_checkbox_that_lost_its_id_is_its_checkable_view_never_its_delete_button(box_id: str) -> None:
    tree = screen(checklist(*(item(t, box_id=box_id) for t in ("Milk", "Eggs", "Bread"))))
    g = Grounder(CHECKLIST, config=EXACT)
    for row in g.items("note__items", tree):
        found = g.child("note__items", "note__item_checkbox", row, tree)
        assert found is not None and found.node.checkable, g.last_detail
        delete = g.child("note__items", "note__item_delete_button", row, tree)
        assert delete is not None and delete.node.content_desc == "Delete item"


def test_an_item_with_another_view_of_the_role_than_the_document_knows_is_refused() -> None:
    # a second checkable view in the item (a "done" star the document does not list): which one
    # is the checkbox cannot be told, so none is taken
    star = V("CheckBox", rid="star", checkable=True, clickable=True)
    tree = screen(checklist(item("Milk", box_id="", extra=star)))
    g = Grounder(CHECKLIST, config=EXACT)
    [row] = g.items("note__items", tree)
    assert g.child("note__items", "note__item_checkbox", row, tree) is None
    assert "2 toggle(s) for 1 documented" in g.last_detail


def test_similar_ids_of_sibling_views_do_not_make_one_the_other() -> None:
    # the words both ids share say nothing: "checkbox" is not "delete"
    assert rid_similarity("checklist_item_checkbox", "checklist_item_delete") < 0.5
    assert rid_similarity("songs_list", "song_list") > 0.85
    assert same_id("songs_list", "songsList") and same_id("title", "tv_title")
    assert same_id("tab_songs", "tab_songs_view")
    assert not same_id("title", "title_icon") and not same_id("item_checkbox", "item_delete")


# -- renamed ids -----------------------------------------------------------------------------------


def test_a_renamed_id_is_read_renamed_unless_the_document_names_it_or_it_is_ambiguous() -> None:
    tree = screen(V("FrameLayout", V("TextView", rid="tv_title", text="A"), V("Button", rid="saveButton", text="OK"),
                    V("TextView", rid="subtitle_view", text="B"), V("TextView", rid="tv_subtitle", text="C")))
    view = ScreenView(tree, reserved=frozenset({"title", "save_button", "tv_title"}))
    assert view.renamed(f"{PKG}:id/save_button") == f"{PKG}:id/saveButton"
    assert view.renamed("save_button") == "saveButton"  # the HTML dialect's short ids
    assert view.renamed(f"{PKG}:id/title") is None  # tv_title is an id the document names itself
    assert view.renamed(f"{PKG}:id/subtitle") is None  # two candidates: subtitle_view, tv_subtitle


def test_a_renamed_precise_identifier_beats_a_fallback_one_as_written() -> None:
    # the switch's own id was renamed; its row's id was not: the switch is the element, and its
    # state is what a read sees
    row = V("RelativeLayout", V("Switch", rid="settingsUse24H", text="Use 24-hour format", checkable=True,
                                checked=True), rid="settings_use_24h_holder", clickable=True)
    d = doc(("settings", (el("settings__use_24h", "switch", rid("settings_use_24h"), rid("settings_use_24h_holder")),)))
    found = Grounder(d, config=EXACT).ground("settings__use_24h", screen(V("FrameLayout", row)))
    assert found is not None and found.node.resource_name == "settingsUse24H" and found.node.checked
    assert "renamed" in found.detail


def test_a_toggle_found_by_its_row_is_the_rows_switch() -> None:
    row = V("RelativeLayout", V("TextView", text="Vibrate"), V("Switch", checkable=True, checked=True),
            rid="vibrate_holder", clickable=True)
    d = doc(("settings", (el("settings__vibrate", "switch", rid("vibrate_holder")),)))
    found = Grounder(d, config=EXACT).ground("settings__vibrate", screen(V("FrameLayout", row)))
    assert found is not None and found.node.checkable and found.node.checked


# -- screens whose ids drifted --------------------------------------------------------------------


def _sig(*xpaths: str) -> Signature:
    return Signature(all_of=tuple(Identifier(x, el("x__y", "text", x).identifiers[0].dialect) for x in xpaths))


LISTS = doc(
    ("songs", _sig(f"//node[@resource-id='{PKG}:id/tab_songs' and @selected='true']"),
     (el("songs__search", "button", rid("search"), "//node[@content-desc='Search']"),
      el("songs__more", "button", "//node[@content-desc='More options']"))),
    ("playlists", _sig(f"//node[@resource-id='{PKG}:id/tab_playlists' and @selected='true']"),
     (el("playlists__new", "button", rid("fab_new"), "//node[@content-desc='New playlist']"),)),
)


def _main(songs_tab: str) -> V:
    return V("FrameLayout", V("Button", rid="search", desc="Search", clickable=True),
             V("ImageView", desc="More options", clickable=True),
             V("LinearLayout", rid=songs_tab, desc="Songs", selected=True, clickable=True),
             V("LinearLayout", rid="tab_playlists", desc="Playlists", clickable=True))


@pytest.mark.parametrize("songs_tab", ["tabSongs", "tab_songs_view", ""])
def test_a_screen_is_recognised_when_its_signature_id_was_renamed_or_dropped(songs_tab: str) -> None:
    match = Grounder(LISTS, config=EXACT).identify_screen(screen(_main(songs_tab)))
    assert match.name == "songs" and match.confident, match.detail
    if not songs_tab:
        assert "counting signature tests that find nothing as unknown" in match.detail


def test_a_missing_signature_id_does_not_make_an_unknown_screen_look_known() -> None:
    # neither screen's ids nor texts: nothing is named, as before
    match = Grounder(LISTS, config=EXACT).identify_screen(screen(V("FrameLayout", V("TextView", text="Hello"))))
    assert match.name is None


def test_a_dialog_is_recognised_by_the_options_its_list_shows() -> None:
    d = doc(
        ("sort_dialog", _sig(f"//node[@resource-id='{PKG}:id/sort_group']"),
         (el("sort_dialog__options", "list", rid("sort_group"), options=("Title", "Artist", "Duration")),
          el("sort_dialog__cancel", "button", "//node[@resource-id='android:id/button2']"))),
        ("theme_dialog", _sig(f"//node[@resource-id='{PKG}:id/theme_group']"),
         (el("theme_dialog__options", "list", rid("theme_group"), options=("White", "Dark")),
          el("theme_dialog__cancel", "button", "//node[@resource-id='android:id/button2']"))),
    )
    dialog = V("FrameLayout", V("TextView", rid="android:id/alertTitle", text="Sort by"),
               V("RadioGroup", *(V("RadioButton", text=t, checkable=True, clickable=True)
                                 for t in ("Title", "Artist", "Duration"))),
               V("Button", rid="android:id/button2", text="Cancel", clickable=True))
    g = Grounder(d, config=EXACT)
    tree = screen(dialog)
    assert g.identify_screen(tree).name == "sort_dialog"
    found = g.ground("sort_dialog__options", tree)
    assert found is not None and found.node.short_class == "RadioGroup" and found.method == "structure"


def test_a_list_that_lost_its_id_is_the_list_view_holding_its_item_children_not_a_tab_with_its_name() -> None:
    d = doc(("alarms", (el("alarms__alarm_list", "list", rid("alarms_list")),
                        el("alarms__days", "text", rid("alarm_days"), item_of="alarms__alarm_list"))))
    rows = [V("RelativeLayout", V("TextView", text=t), V("TextView", rid="alarm_days", text="Mon"), clickable=True)
            for t in ("06:45", "08:00")]
    tree = screen(V("FrameLayout", V("RecyclerView", *rows),
                    V("HorizontalScrollView", V("LinearLayout", V("LinearLayout", V("TextView", text="Alarm"),
                                                                  desc="Alarm", clickable=True)))))
    found = Grounder(d).ground("alarms__alarm_list", tree)  # with the embedding stage, if installed
    assert found is not None and found.node.short_class == "RecyclerView", found


def test_fields_that_lost_their_ids_are_found_in_the_documents_order() -> None:
    d = doc(("edit", (el("edit__first", "input", rid("first_input")), el("edit__last", "input", rid("last_input")),
                      el("edit__phone", "input", rid("phone_input")), el("edit__email", "input", rid("email_input")))))
    form = V("LinearLayout", *(V("EditText", rid=r, text=t, clickable=True)
                               for r, t in (("", "Aaliyah"), ("last_input", "Brooks"), ("", "+1 555-0101"),
                                            ("emailInput", "a@b.c"))))
    g = Grounder(d, config=EXACT)
    tree = screen(V("FrameLayout", form))
    assert g.ground("edit__first", tree).node.text == "Aaliyah"  # type: ignore[union-attr]
    assert g.ground("edit__phone", tree).node.text == "+1 555-0101"  # type: ignore[union-attr]
    # one more field than the document lists: no guess
    extra = V("LinearLayout", *form.kids, V("EditText", text="note", clickable=True))
    assert g.ground("edit__phone", screen(V("FrameLayout", extra))) is None


def test_an_id_that_names_what_a_view_shows_finds_it_when_the_view_lost_the_id() -> None:
    d = doc(("note", (el("note__add_item_button", "button", rid("add_item")),
                      el("note__edit_button", "button", rid("edit_note")))))
    tree = screen(V("FrameLayout", V("ImageButton", desc="Add item", clickable=True),
                    V("Button", desc="Edit", clickable=True), V("Button", desc="Delete", clickable=True)))
    g = Grounder(d, config=EXACT)
    assert g.ground("note__add_item_button", tree).node.content_desc == "Add item"  # type: ignore[union-attr]
    assert g.ground("note__edit_button", tree).node.content_desc == "Edit"  # type: ignore[union-attr]


# -- match() ------------------------------------------------------------------------------------------


MENU = doc(("song_options_menu", (el("song_options_menu__options", "list", "//node[@class='android.widget.ListView']",
                                     options=("Play", "Play next", "Add to playlist", "Delete")),)))


def _menu(*labels: str) -> V:
    return V("FrameLayout", V("ListView", *(V("LinearLayout", V("TextView", rid="title", text=t), clickable=True)
                                           for t in labels)))


def _match(g: Grounder, tree, query: str) -> str | None:  # type: ignore[no-untyped-def]
    items = g.items("song_options_menu__options", tree)
    found = g.match_item("song_options_menu__options", items, tree, query)
    return None if found is None else tree.node(found.node.children[0]).text


def test_an_item_showing_part_of_the_query_is_not_taken_for_it() -> None:
    assert shown_similarity("Play next", "Play") < 0.7
    assert shown_similarity("Gym", "Gym · Mon, Wed, Fri") >= 0.85  # the item shows more: fine
    g = Grounder(MENU, config=EXACT)
    assert _match(g, screen(_menu("Play", "Play after current song", "Add to playlist", "Delete")), "Play next") \
        is None
    assert _match(g, screen(_menu("Play", "Play next", "Add to playlist", "Delete")), "Play next") == "Play next"


class Table:
    """An embedder that knows which reworded labels mean which option."""

    def __init__(self, pairs: dict[str, str]) -> None:
        self.pairs = pairs

    def similarity(self, queries: Sequence[str], candidates: Sequence[str]) -> list[list[float]]:
        def sim(q: str, c: str) -> float:
            q, c = q.split(" ", 1)[-1], c.split(" ", 1)[-1]  # without the list's topic
            if self.pairs.get(c) == q or q == c:
                return 0.9
            return 0.8 if q.split()[0] == c.split()[0] else 0.2  # "Play next" is near "Play now" alone
        return [[sim(q, c) for c in candidates] for q in queries]


def test_documented_options_pair_up_with_reworded_items_as_a_whole() -> None:
    g = Grounder(MENU, embedder=Table({"Play now": "Play", "Play after current song": "Play next"}))
    tree = screen(_menu("Play now", "Play after current song", "Add to playlist", "Remove"))
    assert _match(g, tree, "Play next") == "Play after current song"
    assert _match(g, tree, "Play") == "Play now"
    assert "pairing the documented options" in g.last_detail



PLAYER = doc(
    ("player", _sig("//node[@text='Now playing']"),
     (el("player__title", "text", rid("player_title")), el("player__artist", "text", rid("player_artist")),
      el("player__next", "button", rid("player_next")))),
    ("playlist", _sig(f"//node[@resource-id='{PKG}:id/playlist_summary']"),
     (el("playlist__up", "button", "//node[@content-desc='Navigate up']"),)),
)


def test_a_screen_whose_title_was_reworded_is_recognised_by_its_elements_not_by_a_shared_toolbar_button() -> None:
    up = V("ImageButton", desc="Navigate up", clickable=True)
    player = screen(V("FrameLayout", up, V("TextView", text="Playing now"), V("TextView", rid="player_title", text="A"),
                      V("TextView", rid="tv_player_artist", text="B"), V("ImageButton", rid="player_next",
                                                                         clickable=True)))
    g = Grounder(PLAYER, config=EXACT)
    match = g.identify_screen(player)
    assert match.name == "player" and "counting signature tests that find nothing as unknown" in match.detail
    # a screen the document does not describe, with the toolbar button every screen has: no name
    other = screen(V("FrameLayout", V("ImageButton", desc="Navigate up", clickable=True), V("TextView", text="Help")))
    assert g.identify_screen(other).name is None
