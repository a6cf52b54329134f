"""``match(text)`` takes no item that does not really match: counters, digits and punctuation two
labels share are no likeness, a number the query names must be shown, and an item no nearer the
query than the list's topic alone is not taken, even when it is the only item (the DroidTask
contacts case: ``match("Family (0)")`` on a groups list holding only "Classmates (0)")."""

from __future__ import annotations

from collections.abc import Sequence

from grounding_trees import V, doc, el, rid, screen

from tapir.runtime.grounding import Grounder, GroundingConfig
from tapir.runtime.grounding.items import numbers, word_similarity, words_only

EXACT = GroundingConfig(use_embedding=False)
GROUPS = doc(("groups", (el("groups__groups_list", "list", rid("groups_list")),)))


def _groups(*labels: str) -> V:
    return V("FrameLayout", V("RecyclerView", *(V("LinearLayout", V("TextView", rid="group_name", text=t),
                                                  clickable=True) for t in labels), rid="groups_list"))


def _match(g: Grounder, labels: Sequence[str], query: str) -> str | None:
    tree = screen(_groups(*labels))
    items = g.items("groups__groups_list", tree)
    found = g.match_item("groups__groups_list", items, tree, query)
    return None if found is None else tree.node(found.node.children[0]).text


class Table:
    """Similarity by a table of (query, candidate) pairs with the list's topic; 0.1 otherwise."""

    def __init__(self, sims: dict[tuple[str, str], float]) -> None:
        self.sims = sims
        self.asked: list[tuple[str, ...]] = []

    def similarity(self, queries: Sequence[str], candidates: Sequence[str]) -> list[list[float]]:
        self.asked.append(tuple(candidates))
        return [[self.sims.get((q, c), 0.1) for c in candidates] for q in queries]


def test_the_parts_of_a_label_that_tell_items_apart() -> None:
    assert words_only("Family (0)") == "Family" and words_only("(0)") == ""
    assert words_only("Auto light/dark") == "Auto light/dark"
    assert numbers("07:30 (2)") == {"7", "30", "2"} and numbers("Family") == set()
    # a shared counter does not make two labels alike; a typo in a long label still is one
    assert word_similarity("Work (12)", "Word (12)") < 0.85
    assert word_similarity("Books to raed", "Books to read") >= 0.85
    assert word_similarity("Family (0)", "(0)") == 0.0


def test_a_lone_item_with_another_name_is_not_taken() -> None:
    g = Grounder(GROUPS, config=EXACT)
    assert _match(g, ["Classmates (0)"], "Family (0)") is None
    assert "fuzzy" in g.last_detail
    assert _match(g, ["Work (12)"], "Word (12)") is None


def test_the_numbers_the_query_names_must_be_shown() -> None:
    g = Grounder(GROUPS, config=EXACT)
    assert _match(g, ["Alarm 8:00 AM"], "Alarm 7:00 AM") is None
    assert _match(g, ["Page 2", "Page 3"], "Page 4") is None
    assert _match(g, ["Alarm 07:00 AM", "Alarm 8:00 AM"], "Alarm 7:00") == "Alarm 07:00 AM"


def test_what_legitimately_matches_still_does() -> None:
    g = Grounder(GROUPS, config=EXACT)
    assert _match(g, ["Camera (3)", "DCIM (12)", "Download (0)"], "DCIM") == "DCIM (12)"
    assert _match(g, ["Camera (3)", "DCIM (12)"], "  dcim (12) ") == "DCIM (12)"
    assert _match(g, ["28", "29", "30", "31"], "30") == "30"
    assert _match(g, ["Books to read", "Groceries"], "Books to raed") == "Books to read"
    # two items with the word: no guess between them
    assert _match(g, ["DCIM (12)", "DCIM (3)"], "DCIM") is None


def test_an_embedding_match_must_beat_the_lists_topic_alone() -> None:
    # "groups Family" is nearer the bare topic "groups" than "groups Classmates": no evidence
    table = Table({("groups Family", "groups Classmates"): 0.65, ("groups Family", "groups"): 0.8,
                   ("groups Kin", "groups Family"): 0.7, ("groups Kin", "groups"): 0.6,
                   ("groups Pals", "groups Friends"): 0.64, ("groups Pals", "groups"): 0.62,
                   ("groups Pals", "groups Family"): 0.3})
    g = Grounder(GROUPS, embedder=table)
    assert _match(g, ["Classmates (0)"], "Family (0)") is None
    assert "topic alone" in g.last_detail
    # the counters are left out of what the model compares
    assert "groups Classmates" in table.asked[-1] and "groups" in table.asked[-1]
    assert _match(g, ["Family (2)"], "Kin") == "Family (2)"  # a lone item well above the topic
    # a lone item only just above the topic is refused; among others, its lead over them counts
    assert _match(g, ["Friends"], "Pals") is None
    assert _match(g, ["Friends", "Family"], "Pals") == "Friends"  # it leads "Family" by far
    assert _match(g, ["Family", "Classmates"], "Kin") == "Family"


#: A settings screen as Simple Mobile Tools draws it: each row its own holder with its own id, in
#: one column with section labels and rows of other sections; the document's list is named by its
#: first row's XPath and lists the other rows' texts as its options (the DroidTask file manager).
SETTINGS = doc(("settings", (el("settings__general_options", "list", rid("favorites_holder"),
                                options=("Manage favorites", "Manage shown tabs", "Font size")),)))


def _settings() -> V:
    def row(holder: str, label: str) -> V:
        return V("RelativeLayout", V("TextView", rid=holder.replace("_holder", ""), text=label),
                 rid=holder, clickable=True)
    return V("FrameLayout", V("ScrollView", V("LinearLayout",
        V("TextView", rid="general_label", text="GENERAL"), row("favorites_holder", "Manage favorites"),
        row("tabs_holder", "Manage shown tabs"), row("font_holder", "Font size"),
        V("TextView", rid="visibility_label", text="VISIBILITY"), row("hidden_holder", "Show hidden items"),
        rid="settings_holder"), rid="settings_scroll", scrollable=True))


def test_a_list_named_by_its_first_row_has_the_rows_beside_it_for_items() -> None:
    g = Grounder(SETTINGS, config=EXACT)
    tree = screen(_settings())
    items = g.items("settings__general_options", tree)
    assert [i.resource_name for i in items] == ["favorites_holder", "tabs_holder", "font_holder"]
    found = g.match_item("settings__general_options", items, tree, "Manage shown tabs")
    assert found is not None and found.node.resource_name == "tabs_holder"
    # without the options the document gives, the row is all the list has (nothing says more)
    bare = Grounder(doc(("settings", (el("settings__general_options", "list", rid("favorites_holder")),))),
                    config=EXACT)
    assert [i.text for i in bare.items("settings__general_options", tree)] == ["Manage favorites"]
    # a real list is never a row: a songs list scrolled to one documented song keeps its one row,
    # though a view beside it shows another documented song
    songs = doc(("songs", (el("songs__list", "list", rid("song_list"), options=("Lanterns", "Driftwood")),)))
    beside = screen(V("FrameLayout", V("TextView", rid="now_playing", text="Driftwood"),
                      V("RecyclerView", V("LinearLayout", V("TextView", text="Lanterns"), clickable=True),
                        rid="song_list")))
    assert [i.short_class for i in Grounder(songs, config=EXACT).items("songs__list", beside)] == ["LinearLayout"]
