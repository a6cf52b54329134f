"""Document building from traces (``tapir.docgen.build``): the trace format, one hierarchy's
anatomy, grouping into screens, identifier queues, signatures, the transition graph, naming and
the danger policy. Explorations run in-process on the simulated apps (``runtime_helpers``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import pytest
from runtime_helpers import sim_device

from tapir.core.document import Dialect, Identifier
from tapir.core.errors import DocumentError, UsageError
from tapir.docgen.build import BuildOptions, build_document, read_trace
from tapir.docgen.build.anatomy import Anatomy
from tapir.docgen.build.elements import collect
from tapir.docgen.build.graph import Edge, screen_paths
from tapir.docgen.build.grouping import group_states
from tapir.docgen.build.identifiers import LABELLED, Absence, Conjunction, Sighting, TreeIndex, identifier_queue
from tapir.docgen.build.naming import Namer, element_base, slug, with_suffix
from tapir.docgen.build.policy import DangerPolicy
from tapir.docgen.build.trace import Action, Target, TraceWriter
from tapir.docgen.build.xpath import XPathView
from tapir.docgen.loader import loads_document
from tapir.dsl.api import Kind
from tapir.hierarchy import parse_uiautomator
from tapir.runtime.explore import ExploreConfig, Explorer
from tapir.sim.apps import get_app
from tapir.sim.toolkit.explore import crawl

PACKAGES = {"music": "org.tapir.music", "notes": "org.tapir.notes", "clock": "org.tapir.clock",
            "contacts": "org.tapir.contacts"}


def node(cls: str, bounds: tuple[int, int, int, int], *children: str, **attrs: str) -> str:
    values = {"text": "", "resource-id": attrs.pop("rid", ""), "class": cls, "package": "org.x",
              "content-desc": attrs.pop("desc", ""), "clickable": "false", "enabled": "true",
              "selected": "false", "bounds": "[{},{}][{},{}]".format(*bounds)}
    values.update(attrs)
    head = "<node " + " ".join(f"{k}={quoteattr(v)}" for k, v in values.items())
    return f"{head}>{''.join(children)}</node>" if children else f"{head} />"


def hierarchy(*roots: str) -> str:
    head = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
    return f"{head}<hierarchy rotation=\"0\">{''.join(roots)}</hierarchy>"


def explore_trace(tmp: Path, app: str, steps: int = 400) -> Path:
    _, device, _ = sim_device(get_app(app), foreground=False)
    out = tmp / f"{app}-trace"
    writer = TraceWriter.create(out, app=PACKAGES[app], source="explore")
    Explorer(device, ExploreConfig(PACKAGES[app], max_steps=steps, delay=0, screenshots=False), writer).run()
    return out


@pytest.fixture(scope="module")
def music(tmp_path_factory: pytest.TempPathFactory) -> Any:
    trace_dir = explore_trace(tmp_path_factory.mktemp("music"), "music")
    trace = read_trace(trace_dir)
    return trace, build_document([trace])


# -- the trace format ---------------------------------------------------------------------------


def test_trace_round_trip_dedupes_states(tmp_path: Path) -> None:
    xml = get_app("music").dump_xml()
    tree = parse_uiautomator(xml)
    with TraceWriter.create(tmp_path / "t", app="org.tapir.music", source="test") as w:
        s1 = w.add_state(xml, package="org.tapir.music", activity="a.Main", screenshot=b"\x89PNG1")
        assert w.known_state(xml, package="org.tapir.music", activity="a.Main") == s1
        assert w.add_state(xml, package="org.tapir.music", activity="a.Main") == s1
        s2 = w.add_state(xml, package="org.tapir.music", activity="a.Other")
        target = tree.find(lambda n: n.content_desc == "Search")[0]
        w.add_step(s1, Action("tap", Target.of(target)), s2)
        w.add_step(s2, Action("text", Target.of(target), text="hi"), s1, note="typed")
    trace = read_trace(tmp_path / "t")
    assert list(trace.states) == [s1, s2] and trace.meta["complete"] is True
    assert trace.states[s1].screenshot and (tmp_path / "t" / trace.states[s1].screenshot).is_file()
    step = trace.steps[0]
    assert step.action.target == Target.of(target)
    assert trace.tree(step.before).node(step.action.target.node).content_desc == "Search"
    assert trace.steps[1].action.text == "hi" and trace.steps[1].note == "typed"
    assert trace.activity(s2) == "a.Other" and trace.package == "org.tapir.music"


def test_a_cut_last_line_is_skipped_and_a_bad_line_reported(tmp_path: Path) -> None:
    xml = get_app("notes").dump_xml()
    with TraceWriter.create(tmp_path / "t", app="org.tapir.notes", source="test") as w:
        s = w.add_state(xml, package="org.tapir.notes")
        w.add_step(s, Action("back"), s)
        w.add_step(s, Action("back"), s)
    steps = tmp_path / "t" / "steps.jsonl"
    text = steps.read_text()
    steps.write_text(text + '{"step": 3, "bef')  # an interrupted write
    trace = read_trace(tmp_path / "t")
    assert len(trace.steps) == 2 and trace.skipped_lines == 1
    lines = text.splitlines()
    steps.write_text("\n".join([lines[0], "{not json", lines[1]]) + "\n")
    with pytest.raises(DocumentError) as err:
        read_trace(tmp_path / "t")
    assert err.value.problems[0].line == 2 and "steps.jsonl" in (err.value.filename or "")


def test_reading_something_that_is_not_a_trace(tmp_path: Path) -> None:
    (tmp_path / "rec" / "states").mkdir(parents=True)
    (tmp_path / "rec" / "events").mkdir()
    with pytest.raises(UsageError) as err:
        read_trace(tmp_path / "rec")
    assert "--import-droidbot" in (err.value.hint or "")
    with pytest.raises(UsageError):
        read_trace(tmp_path / "missing")
    with pytest.raises(UsageError):
        TraceWriter.create(tmp_path / "rec", app="x", source="test")  # not empty


# -- one hierarchy ------------------------------------------------------------------------------


def _anatomy(app: Any) -> Anatomy:
    return Anatomy.of(parse_uiautomator(app.dump_xml()), activity=app.activity)


def test_lists_windows_and_keys() -> None:
    app = get_app("music")
    songs = _anatomy(app)
    assert songs.window == "full"
    (info,) = songs.lists.values()
    assert songs.tree.node(info.container).resource_name == "songs_list" and len(info.items) >= 8
    title = songs.tree.find(lambda n: n.resource_name == "song_title")
    # every row's title is one child element
    assert len({songs.child_key[n.id] for n in title}) == 1
    app.tap_on(desc="More options")
    menu = _anatomy(app)
    assert menu.window == "menu" and "options:Settings|Sort by" in menu.function_parts
    app.tap_on(text="Settings")
    app.tap_on(id="settings_theme_holder")
    theme = _anatomy(app)
    assert theme.window == "dialog" and theme.dialog_title == "Theme"
    (radio,) = theme.lists.values()
    assert [theme.label(i) for i in radio.items] == ["White", "Dark", "Auto light / dark"]


def test_layout_ignores_content_and_repeated_rows() -> None:
    app = get_app("music")
    before = _anatomy(app)
    app.swipe(540, 1800, 540, 700, 300)  # other songs in view
    after = _anatomy(app)
    first = "Amalfi Blue"
    assert before.tree.find(lambda n: n.text == first) and not after.tree.find(lambda n: n.text == first)
    assert before.layout == after.layout and before.state_key == after.state_key


def test_tabs_sharing_an_id_are_elements_not_a_list() -> None:
    def tab(label: str, x: int, selected: bool) -> str:
        return node("android.widget.LinearLayout", (x, 2000, x + 200, 2100),
                    node("android.widget.TextView", (x, 2000, x + 200, 2100), text=label, rid="org.x:id/tab_label"),
                    rid="org.x:id/tab_item_holder", clickable="true", selected=str(selected).lower())

    xml = hierarchy(node("android.widget.FrameLayout", (0, 0, 1080, 2400),
                         node("android.widget.LinearLayout", (0, 2000, 1080, 2100),
                              tab("Clock", 0, False), tab("Alarm", 200, True), tab("Timer", 400, False),
                              rid="org.x:id/main_tabs_holder")))
    a = Anatomy.of(parse_uiautomator(xml))
    assert not a.lists
    keys = [k for k in a.key_of.values() if k.split(">")[1].startswith("LinearLayout#tab_item_holder")]
    assert sorted(keys) == sorted(f">LinearLayout#tab_item_holder@t={x}".join(["main_tabs_holder", ""])
                                  for x in ("Clock", "Alarm", "Timer"))
    assert a.selected == ("Alarm",)  # tabs sharing one id are told apart by their labels


def test_a_tab_selected_inside_a_selected_row_is_the_selected_tab() -> None:
    # Simple Mobile Tools' tab bar: a row without an id (no tab by its words or its parent's)
    # around each tab holder, selected with it
    def tab(label: str, x: int, selected: bool) -> str:
        state = str(selected).lower()
        return node("android.widget.LinearLayout", (x, 2000, x + 200, 2100),
                    node("android.widget.LinearLayout", (x, 2000, x + 200, 2100),
                         node("android.widget.TextView", (x, 2000, x + 200, 2100), text=label,
                              rid="org.x:id/tab_item_label", selected=state),
                         rid="org.x:id/tab_item_holder", selected=state),
                    clickable="true", selected=state)

    def bar(chosen: str) -> Anatomy:
        tabs = [tab(label, 200 * i, label == chosen) for i, label in enumerate(("Contacts", "Favorites", "Calls"))]
        return Anatomy.of(parse_uiautomator(hierarchy(node(
            "android.widget.FrameLayout", (0, 0, 1080, 2400),
            node("android.widget.HorizontalScrollView", (0, 2000, 1080, 2100),
                 node("android.widget.LinearLayout", (0, 2000, 1080, 2100), *tabs),
                 rid="org.x:id/main_tabs_holder")))))

    assert bar("Favorites").selected == ("Favorites",)
    assert bar("Favorites").function != bar("Calls").function


# -- screens --------------------------------------------------------------------------------------


def test_grouping_by_layout_and_function() -> None:
    views = crawl(get_app("music"))
    anatomies = {f"{k[0]}/{k[1]}": Anatomy.of(parse_uiautomator(v.dump_xml()), activity=v.activity)
                 for k, v in views.items()}
    groups = {frozenset(g.states) for g in group_states(anatomies)}
    # one sort dialog wherever it is opened (two activities), apart from the look-alike theme dialog
    assert frozenset({"songs/sort_songs", "playlists/sort_songs", "settings/sort_songs"}) in groups
    assert frozenset({"settings/theme"}) in groups
    # the main menu is the same on both tabs; the song options menu is another menu
    assert frozenset({"songs/overflow_menu", "playlists/overflow_menu"}) in groups
    assert frozenset({"songs/song_options"}) in groups
    assert frozenset({"songs/None"}) in groups and frozenset({"playlists/None"}) in groups


def test_a_title_that_repeats_the_tapped_row_is_content() -> None:
    def dialog(title: str) -> Anatomy:
        xml = hierarchy(node("android.widget.FrameLayout", (60, 800, 1020, 1600),
                             node("android.widget.TextView", (60, 800, 1020, 900), text=title,
                                  rid="android:id/alertTitle"),
                             node("android.widget.Button", (60, 1500, 500, 1600), text="OK",
                                  rid="android:id/button1", clickable="true")))
        return Anatomy.of(parse_uiautomator(xml))

    anatomies = {"a": dialog("Road trip"), "b": dialog("Favourites")}
    assert len(group_states(anatomies)) == 2
    assert len(group_states(anatomies, {"a": {"Road trip"}, "b": {"Favourites"}})) == 1


def _settings_page(rows: range, title: str = "Settings") -> Anatomy:
    """A settings page (a toolbar, a vertical scroll view of checkbox rows) showing ``rows``."""
    shown = [node("android.widget.RelativeLayout", (0, 300 + i * 200, 1080, 500 + i * 200),
                  node("android.widget.CheckBox", (0, 300 + i * 200, 1080, 500 + i * 200), text=f"Option {n}",
                       rid=f"org.x:id/option_{n}", clickable="true"),
                  rid=f"org.x:id/option_{n}_holder")
             for i, n in enumerate(rows)]
    xml = hierarchy(node("android.widget.FrameLayout", (0, 0, 1080, 2400),
                         node("android.view.ViewGroup", (0, 0, 1080, 250),
                              node("android.widget.TextView", (100, 50, 800, 200), text=title),
                              rid="org.x:id/settings_toolbar"),
                         node("android.widget.ScrollView", (0, 300, 1080, 2400),
                              node("android.widget.LinearLayout", (0, 300, 1080, 2400), *shown,
                                   rid="org.x:id/settings_holder"),
                              rid="org.x:id/settings_scrollview", scrollable="true")))
    return Anatomy.of(parse_uiautomator(xml), activity=".SettingsActivity")


def test_a_page_recorded_at_two_scroll_positions_is_one_screen() -> None:
    # the top and the bottom of a long page share one row and their frame: too little of the
    # layout for the overlap rule, one page by its scroll view
    top, bottom = _settings_page(range(0, 5)), _settings_page(range(4, 9))
    assert top.toolbar_title == "Settings" and top.function_parts == bottom.function_parts
    (group,) = group_states({"top": top, "bottom": bottom})
    assert group.states == ["top", "bottom"]
    # without a row in common nothing says they are one page; under another title they are not
    assert len(group_states({"top": top, "end": _settings_page(range(5, 10))})) == 2
    assert len(group_states({"top": top, "about": _settings_page(range(4, 9), title="About")})) == 2


def test_dialogs_in_one_frame_with_other_contents_are_other_screens() -> None:
    def dialog(*content: str) -> Anatomy:
        # the platform's frame: a content panel and a button bar, the buttons known by their ids
        xml = hierarchy(node("android.widget.FrameLayout", (60, 800, 1020, 1600),
                             node("android.widget.FrameLayout", (60, 800, 1020, 1400), *content,
                                  rid="android:id/custom"),
                             node("android.widget.LinearLayout", (60, 1500, 1020, 1600),
                                  node("android.widget.Button", (60, 1500, 500, 1600), text="OK",
                                       rid="android:id/button1", clickable="true"),
                                  node("android.widget.Button", (500, 1500, 1020, 1600), text="Cancel",
                                       rid="android:id/button2", clickable="true"),
                                  rid="android:id/buttonPanel")))
        return Anatomy.of(parse_uiautomator(xml))

    def message(text: str) -> str:
        return node("android.widget.ScrollView", (60, 800, 1020, 1400),
                    node("android.widget.TextView", (60, 800, 1020, 1400), text=text, rid="org.x:id/message"),
                    rid="org.x:id/message_scrollview")

    picker = node("android.widget.DatePicker", (60, 800, 1020, 1400),
                  node("android.widget.TextView", (60, 800, 1020, 900), text="2023", rid="org.x:id/year"),
                  rid="org.x:id/date_picker")
    deleting, warning, date = dialog(message("Delete it?")), dialog(message("Careful")), dialog(picker)
    assert deleting.function_parts == date.function_parts
    assert len(group_states({"deleting": deleting, "warning": warning})) == 1
    assert len(group_states({"deleting": deleting, "date": date})) == 2


# -- identifiers ----------------------------------------------------------------------------------


def test_identifier_queue_most_precise_first_without_what_changed() -> None:
    def screen(text: str) -> TreeIndex:
        xml = hierarchy(node("android.widget.FrameLayout", (0, 0, 1080, 2400),
                             node("android.widget.TextView", (0, 100, 500, 200), text=text, rid="org.x:id/count"),
                             node("android.widget.Button", (0, 300, 500, 400), desc="Search", rid="org.x:id/search",
                                  clickable="true")))
        return TreeIndex(parse_uiautomator(xml))

    one, two = screen("44 songs"), screen("43 songs")
    search = [Sighting(i, i.tree.find(lambda n: n.resource_name == "search")[0].id) for i in (one, two)]
    queue = identifier_queue(search).identifiers
    assert [c.xpath() for c in queue] == [
        "//node[@resource-id='org.x:id/search' and @content-desc='Search']",
        "//node[@resource-id='org.x:id/search']",
        "//node[@content-desc='Search']",
    ]
    count = [Sighting(i, i.tree.find(lambda n: n.resource_name == "count")[0].id) for i in (one, two)]
    result = identifier_queue(count)
    assert [c.xpath() for c in result.identifiers] == ["//node[@resource-id='org.x:id/count']"]
    assert result.changed == ["text"]
    # where the element is not, its identifiers must find nothing
    gone = TreeIndex(parse_uiautomator(hierarchy(node("android.widget.FrameLayout", (0, 0, 1080, 2400),
                     node("android.widget.ImageButton", (0, 0, 100, 100), desc="Search", clickable="true")))))
    assert [c.xpath() for c in identifier_queue(search, [Absence(gone)]).identifiers] == [
        "//node[@resource-id='org.x:id/search' and @content-desc='Search']",
        "//node[@resource-id='org.x:id/search']",
        "//node[@content-desc='Search' and @class='android.widget.Button']",  # the description alone finds another
    ]


def test_twins_are_told_apart_by_position_never_by_position_alone() -> None:
    def row(holder: str, y: int) -> str:
        return node("android.widget.RelativeLayout", (0, y, 1080, y + 100),
                    node("android.widget.TextView", (0, y, 500, y + 100), text="On", rid="org.x:id/value"),
                    rid=f"org.x:id/{holder}", clickable="true")

    index = TreeIndex(parse_uiautomator(hierarchy(node("android.widget.FrameLayout", (0, 0, 1080, 2400),
                                                       row("wifi_holder", 100), row("bt_holder", 300)))))
    value = index.tree.find(lambda n: n.resource_name == "value")[1].id
    queue = identifier_queue([Sighting(index, value)]).identifiers
    holder = "//node[@resource-id='org.x:id/bt_holder']"
    assert [c.xpath() for c in queue] == [f"{holder}//node[@resource-id='org.x:id/value' and @text='On']",
                                          f"{holder}//node[@resource-id='org.x:id/value']",
                                          f"{holder}//node[@text='On']"]
    assert all(c.props for c in queue)  # a position always comes with a property


def test_a_positioned_queue_ends_with_the_plain_id() -> None:
    """Where a view sits changes first: the list seen under one container is, on another tab,
    the same list under another; the id alone comes last, tried when the positions find nothing."""
    def screen(holder: str) -> TreeIndex:
        return TreeIndex(parse_uiautomator(hierarchy(node(
            "android.widget.FrameLayout", (0, 0, 1080, 2400),
            node("android.widget.FrameLayout", (0, 0, 1080, 2400),
                 node("androidx.recyclerview.widget.RecyclerView", (0, 0, 1080, 2400), rid="org.x:id/list",
                      scrollable="true"), rid=f"org.x:id/{holder}")))))

    seen, elsewhere = screen("fastscroller"), screen("wrapper")
    sighting = Sighting(seen, seen.tree.find(lambda n: n.resource_name == "list")[0].id)
    queue = identifier_queue([sighting], [Absence(elsewhere)]).identifiers
    assert [c.xpath() for c in queue] == [
        "//node[@resource-id='org.x:id/fastscroller']//node[@resource-id='org.x:id/list']",
        "//node[@resource-id='org.x:id/list']",
    ]
    # an id that finds more than the element where it was seen is no fallback
    twice = TreeIndex(parse_uiautomator(hierarchy(node(
        "android.widget.FrameLayout", (0, 0, 1080, 2400),
        node("android.widget.FrameLayout", (0, 0, 1080, 1200),
             node("android.widget.ListView", (0, 0, 1080, 1200), rid="org.x:id/list"), rid="org.x:id/top"),
        node("android.widget.FrameLayout", (0, 1200, 1080, 2400),
             node("android.widget.ListView", (0, 1200, 1080, 2400), rid="org.x:id/list"), rid="org.x:id/bottom")))))
    top = Sighting(twice, twice.tree.find(lambda n: n.resource_name == "list")[0].id)
    assert all(c.anchor for c in identifier_queue([top]).identifiers)


def test_a_list_in_a_pager_fragment_is_told_apart_by_its_fragment() -> None:
    """Two tabs of a pager show the same layout (Contacts and Groups: a ``fragment_list`` in a
    ``fragment_wrapper``, the groups' one a level deeper): the nearest ancestor with an id is in
    both, so only the fragment above it tells the contacts list from the groups list. Without it
    the contacts list had no identifier and left the document (the DroidTask contacts recording:
    'Bob' was in no list of the document the model saw)."""
    def tab(fragment: str, deeper: bool) -> TreeIndex:
        lst = node("androidx.recyclerview.widget.RecyclerView", (0, 300, 1080, 2000), rid="org.x:id/fragment_list",
                   scrollable="true")
        if deeper:
            lst = node("android.widget.FrameLayout", (0, 300, 1080, 2000), lst, rid="org.x:id/fastscroller")
        return TreeIndex(parse_uiautomator(hierarchy(node(
            "android.widget.FrameLayout", (0, 0, 1080, 2400),
            node("android.view.ViewGroup", (0, 300, 1080, 2000),
                 node("android.widget.RelativeLayout", (0, 300, 1080, 2000), lst, rid="org.x:id/fragment_wrapper"),
                 rid=f"org.x:id/{fragment}")))))

    contacts, groups = tab("contacts_fragment", False), tab("groups_fragment", True)
    seen = Sighting(contacts, contacts.tree.find(lambda n: n.resource_name == "fragment_list")[0].id)
    queue = identifier_queue([seen], [Absence(groups)]).identifiers
    assert [c.xpath() for c in queue] == [
        "//node[@resource-id='org.x:id/contacts_fragment']//node[@resource-id='org.x:id/fragment_list']",
        "//node[@resource-id='org.x:id/fragment_list']",  # the plain id last, as for any positioned queue
    ]
    # where the nearest ancestor tells it apart, the farther ones are not tried
    other = Sighting(groups, groups.tree.find(lambda n: n.resource_name == "fragment_list")[0].id)
    assert identifier_queue([other], [Absence(contacts)]).identifiers[0].anchor == "org.x:id/fastscroller"


def test_a_list_seen_empty_is_still_the_list() -> None:
    """A folder with files, then an empty one: the empty RecyclerView has no items, so it is no
    element there, but its identifiers rightly find it. It used to count as a hierarchy without
    the list, which every identifier of the list failed: the file manager's and the calendar's
    folder lists left their documents."""
    def folder(*names: str) -> Anatomy:
        rows = [node("android.widget.LinearLayout", (0, 300 + i * 150, 1080, 450 + i * 150),
                     node("android.widget.TextView", (0, 300 + i * 150, 800, 450 + i * 150), text=name,
                          rid="org.x:id/item_name"), rid="org.x:id/item_holder", clickable="true")
                for i, name in enumerate(names)]
        return Anatomy.of(parse_uiautomator(hierarchy(node(
            "android.widget.FrameLayout", (0, 0, 1080, 2400),
            node("android.widget.TextView", (0, 100, 1080, 200), text="Folders", rid="org.x:id/title"),
            node("android.widget.FrameLayout", (0, 300, 1080, 2400),
                 node("androidx.recyclerview.widget.RecyclerView", (0, 300, 1080, 2400), *rows,
                      rid="org.x:id/items_list", scrollable="true"), rid="org.x:id/items_fastscroller")))),
            activity=".MainActivity")

    anatomies = {"full": folder("Alarms", "DCIM", "Music"), "empty": folder()}
    assert anatomies["empty"].empty_lists == {"L:items_fastscroller>RecyclerView#items_list"}
    (group,) = group_states(anatomies)
    draft = collect(group, {sid: TreeIndex(a.tree) for sid, a in anatomies.items()})
    (lst,) = [d for d in draft.elements if d.role == "list"]
    assert [c.xpath() for c in lst.identifiers][0] == "//node[@resource-id='org.x:id/items_list']"
    assert lst.examples == ["Alarms", "DCIM", "Music"]


def test_rows_are_found_by_the_label_inside_them() -> None:
    def tab(label: str, x: int) -> str:
        return node("android.widget.LinearLayout", (x, 0, x + 100, 100),
                    node("android.widget.TextView", (x, 0, x + 100, 100), text=label), clickable="true")

    index = TreeIndex(parse_uiautomator(hierarchy(node("android.widget.FrameLayout", (0, 0, 1080, 2400),
                                                       tab("Clock", 0), tab("Alarm", 100)))))
    alarm = index.tree.find(lambda n: n.clickable)[1].id
    (first, *_) = identifier_queue([Sighting(index, alarm)]).identifiers
    assert first.xpath() == f"//node[@text='Alarm']/ancestor::node[{LABELLED}][1]"
    assert XPathView(index.tree).select(Identifier(first.xpath(), Dialect.UIAUTOMATOR)) == [alarm]


def _tab_bar(selected: str) -> TreeIndex:
    """Two tabs, the selected one not clickable (the view, its holder and label all selected, as
    Android passes selection down), above a label in a plain container."""
    def tab(label: str, x: int) -> str:
        on = "true" if label == selected else "false"
        return node("android.widget.LinearLayout", (x, 2000, x + 360, 2100),
                    node("android.widget.LinearLayout", (x, 2000, x + 360, 2100),
                         node("android.widget.TextView", (x, 2050, x + 360, 2100), text=label,
                              rid="org.x:id/tab_item_label", selected=on),
                         rid="org.x:id/tab_item_holder", selected=on),
                    clickable="false" if label == selected else "true", selected=on)

    return TreeIndex(parse_uiautomator(hierarchy(node(
        "android.widget.FrameLayout", (0, 0, 1080, 2400),
        node("android.widget.FrameLayout", (0, 0, 1080, 500), node("android.widget.TextView", (0, 0, 500, 100),
                                                                   text="Groups (none)")),
        node("android.widget.HorizontalScrollView", (0, 2000, 1080, 2100),
             node("android.widget.LinearLayout", (0, 2000, 1080, 2100), tab("Contacts", 0), tab("Groups", 360)),
             rid="org.x:id/main_tabs_holder")))))


def test_a_selected_tab_that_is_not_clickable_is_still_the_tab() -> None:
    """The selected tab is not clickable, and tapping it again reloads it (a list that shows only
    then): it is the tab there too, found by the same identifier as where it can be tapped."""
    from tapir.docgen.build.elements import collect
    from tapir.docgen.build.grouping import ScreenGroup

    here, there = _tab_bar("Contacts"), _tab_bar("Groups")
    top = [n.id for n in there.tree.nodes if n.selected and n.class_name.endswith("LinearLayout")][0]
    (clickable,) = [n.id for n in here.tree.nodes if n.clickable]  # Groups: Contacts is selected
    # the label finds the clickable tab, else the top of the selected views around it; lxml agrees
    (first, *_) = identifier_queue([Sighting(here, clickable), Sighting(there, top)]).identifiers
    for index, want in ((here, clickable), (there, top)):
        assert index.hits(first) == {want}
        assert XPathView(index.tree).select(Identifier(first.xpath(), Dialect.UIAUTOMATOR)) == [want]
    # a label in a container neither clickable nor selected still finds nothing
    plain = Conjunction((("label", "Groups (none)"),))
    assert not here.hits(plain) and XPathView(here.tree).select(Identifier(plain.xpath(), Dialect.UIAUTOMATOR)) == []
    # built from both, the Groups tab is seen in both: always there, with an identifier for both
    anatomies = {"a": Anatomy.of(here.tree), "b": Anatomy.of(there.tree)}
    draft = collect(ScreenGroup(0, ["a", "b"], anatomies), {"a": here, "b": there})
    tab = next(d for d in draft.elements if d.label == "Groups")
    assert tab.kind is Kind.TAB and tab.always and {s.state for s in tab.seen} == {"a", "b"}
    assert tab.identifiers and all(there.hits(c) == {top} for c in tab.identifiers)


def test_generated_identifiers_find_their_element_and_only_it(music: Any) -> None:
    """Every identifier of every generated element, evaluated with lxml the way the runtime does,
    finds exactly the element's node in every hierarchy where the element was seen."""
    trace, result = music
    checked = 0
    for screen in result.screens:
        for d in screen.elements:
            for s in d.seen[:4]:
                view = XPathView(screen.group.anatomies[s.state].tree)
                for c in d.identifiers:
                    hits = view.select(Identifier(c.xpath(), Dialect.UIAUTOMATOR), s.item if s.item >= 0 else None)
                    assert hits == [s.node], (d.name, c.xpath())
                    checked += 1
    assert checked > 300


def test_signatures_tell_every_screen_apart(music: Any) -> None:
    trace, result = music
    doc = result.document
    for screen in result.screens:
        sig = doc.screen(screen.name).signature
        for other in result.screens:
            for sid in other.group.states:
                anatomy = other.group.anatomies[sid]
                view = XPathView(anatomy.tree)
                holds = (not sig.activity or anatomy.activity.endswith(sig.activity)) and all(
                    view.select(i) for i in sig.all_of) and not any(view.select(i) for i in sig.none_of)
                assert holds == (other is screen), (screen.name, other.name, sid)


# -- the transition graph ---------------------------------------------------------------------


def test_paths_prefer_no_side_effects_and_stay_bounded() -> None:
    edges = [
        Edge(0, 2, "a__save.tap()", 101),            # short, but it saves something
        Edge(0, 1, "a__menu.tap()", 1),
        Edge(1, 2, "m__options.match('Settings').tap()", 1),
        Edge(1, 3, "m__x.tap()", 1), Edge(3, 4, "x__y.tap()", 1), Edge(4, 5, "y__z.tap()", 1),
    ]
    paths = screen_paths(edges, 0, max_length=2, max_paths=4)
    assert [[e.step for e in p] for p in paths[2]] == [["a__menu.tap()", "m__options.match('Settings').tap()"],
                                                       ["a__save.tap()"]]
    assert 3 in paths and 4 not in paths and 5 not in paths  # three steps away is over the bound
    assert len(screen_paths(edges, 0, max_length=2, max_paths=1)[2]) == 1


def test_the_music_document(music: Any) -> None:
    trace, result = music
    doc = result.document
    names = {s.name for s in doc.screens}
    assert {"songs_screen", "playlists_screen", "settings_screen", "now_playing_screen", "sort_by_dialog",
            "theme_dialog", "new_playlist_dialog"} <= names
    assert doc.app.start_screen == "songs_screen"
    theme = doc.element("theme_dialog__options")
    assert theme is not None and theme.kind is Kind.LIST and theme.item_kind is Kind.CHECKBOX
    assert theme.options == ("White", "Dark", "Auto light / dark")
    # how to get there: a dependency path from the start screen through the settings
    assert any(str(p[-1]) == "settings_screen__theme_button.tap()" for p in theme.paths)
    button = doc.element("songs_screen__search_button")
    assert button is not None and button.leads_to == "search_screen"
    # a song's options include Delete, which exploration never touched
    menu = next(e for e in doc.elements if e.is_list and "Delete" in e.options)
    assert menu.notes and "sensitive options: Delete" in menu.notes
    assert result.report.dropped and "elements: a static text without an id" in " ".join(result.report.dropped)
    # the bar only shows once a song plays: its path ends with playing one
    bar = doc.element("songs_screen__now_playing_bar_button")
    assert bar is not None and bar.paths and "songs_screen__songs_list.match(" in str(bar.paths[-1][-1])
    assert loads_document(result.text).document == doc


def test_sensitive_elements_are_marked(tmp_path: Path) -> None:
    result = build_document([read_trace(explore_trace(tmp_path, "notes"))])
    sensitive = [e.name for e in result.document.elements if e.sensitive]
    assert "note_screen__delete_button" in sensitive
    assert "sensitive: true" in result.text
    assert all(result.document.element(n).kind is not Kind.TEXT for n in sensitive)


def test_build_report_json(music: Any) -> None:
    _, result = music
    data = json.loads(json.dumps(result.report.to_json()))
    assert data["elements"] == sum(1 for _ in result.document.elements)
    assert len(data["screens"]) == len(result.document.screens)
    assert "screens" in result.report.render()


def test_a_trace_of_another_app_builds_nothing(tmp_path: Path, music: Any) -> None:
    trace, _ = music
    with pytest.raises(UsageError, match="no hierarchy of org.example"):
        build_document([trace], BuildOptions(package="org.example"))


# -- names and danger ---------------------------------------------------------------------------


def test_names() -> None:
    assert slug("Delete song?") == "delete_song" and slug("OK") == "ok" and slug("2 columns") == "n2_columns"
    assert slug("settingsThemeHolder") == "settings_theme_holder"
    assert element_base("org.x:id/tab_playlists", "", "Playlists", Kind.TAB) == "playlists"
    assert element_base("org.x:id/songs_count", "", "44 songs", Kind.TEXT) == "songs_count"
    assert element_base("org.x:id/settings_theme_holder", "", "", Kind.BUTTON) == "settings_theme"
    assert with_suffix("search_button", Kind.BUTTON) == "search_button"
    assert with_suffix("theme", Kind.SWITCH) == "theme_switch"
    namer = Namer(["a"])
    assert [namer.unique("a"), namer.unique("a", ["b"]), namer.unique("b")] == ["a_2", "b", "b_2"]


def test_danger_policy() -> None:
    policy = DangerPolicy.default()
    assert policy.reason("Delete playlist") == "delete"
    assert policy.reason("org.x:id/btnSignOut") == "sign out"
    assert policy.reason("org.x:id/delete_button") == "delete"
    assert policy.reason("Undeleted", "Playlists", "") is None
    assert policy.extended(["archive"]).reason("Archive") == "archive"
    assert DangerPolicy.none().reason("Delete") is None
    assert isinstance(Conjunction((("rid", "x"),)).xpath(), str)


def test_a_model_can_name_and_describe(music: Any) -> None:
    """The ``Annotator`` hook: asked about every screen and element, may rename and describe them."""
    from tapir.docgen.build import Annotation

    class Model:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def screen(self, facts: str) -> Annotation | None:
            self.asked.append(facts)
            if "heuristic name: theme_dialog" in facts:
                return Annotation("Appearance picker", "Choose light or dark.")
            return None

        def element(self, screen: str, facts: str) -> Annotation | None:
            if screen == "songs_screen" and "heuristic name: search_button" in facts:
                return Annotation("find button", "Opens the search.")
            return None

    trace, plain = music
    model = Model()
    result = build_document([trace], BuildOptions(annotator=model))
    doc = result.document
    assert len(model.asked) == len(plain.document.screens)
    picker = doc.screen("appearance_picker_screen")
    assert picker is not None and picker.description == "Choose light or dark."
    assert doc.element("appearance_picker_screen__options") is not None
    find = doc.element("songs_screen__find_button")
    assert find is not None and find.description == "Opens the search."
    # references follow the new names
    assert doc.element("settings_screen__theme_button").leads_to == "appearance_picker_screen"


def test_sensitive_elements_are_flagged_in_the_prompt_and_incomplete_traces_in_the_report(tmp_path: Path) -> None:
    from tapir.docgen.prompt import render_full

    _, device, _ = sim_device(get_app("notes"), foreground=False)
    writer = TraceWriter.create(tmp_path / "t", app="org.tapir.notes", source="explore")
    Explorer(device, ExploreConfig("org.tapir.notes", max_steps=400, delay=0, screenshots=False), writer).run()
    meta = json.loads((tmp_path / "t" / "trace.json").read_text())
    meta["complete"] = False
    (tmp_path / "t" / "trace.json").write_text(json.dumps(meta))
    result = build_document([read_trace(tmp_path / "t")])
    prompt = render_full(result.document).prefix
    block = prompt[prompt.index("element: $note_screen__delete_button"):]
    assert "Sensitive: hard to undo" in block.split("element:", 2)[1]
    assert any("incomplete" in w for w in result.report.warnings)
