"""The UI toolkit of the simulated apps: layout, dump format, touch, scrolling, text, back stack, drift."""

from __future__ import annotations

import io
import re
from functools import partial

import pytest
from lxml import etree
from PIL import Image as PILImage

from tapir.sim.app import SimApp
from tapir.sim.apps import APP_NAMES, get_app
from tapir.sim.errors import SimUsageError
from tapir.sim.toolkit import (
    Button,
    Column,
    Dialog,
    Drift,
    ImageButton,
    Input,
    ListItem,
    ListView,
    Menu,
    MenuItem,
    Node,
    Rect,
    Screen,
    Text,
    Toolbar,
    ToolkitApp,
    dialog,
    key_name,
    menu,
    screen,
)
from tapir.sim.toolkit.explore import crawl
from tapir.sim.toolkit.layout import CONTENT

ATTRS = ["index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
         "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds"]
BOUNDS = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")


class DemoApp(ToolkitApp):
    """A small app exercising each toolkit feature the sample apps rely on."""

    package = "org.tapir.demo"
    label = "Demo"
    launch_screen = "home"

    def initial_state(self) -> dict:
        return {"taps": [], "saved": None}

    def record(self, what: str) -> None:
        self.state["taps"].append(what)

    @screen(".MainActivity")
    def home(self) -> Screen:
        return Screen(
            toolbar=Toolbar(title="Demo", menu=[MenuItem("Form", on_tap=partial(self.open, "form"))]),
            body=[
                Button("Disabled", id="disabled_button", enabled=False, on_tap=partial(self.record, "disabled")),
                ListView(id="rows", items=[
                    ListItem(id="row", on_tap=partial(self.record, f"row {i}"), children=[
                        Text(f"Row {i}", id="row_title"),
                        ImageButton(id="row_more", desc="More options", on_tap=partial(self.open, "row_menu", row=i)),
                    ])
                    for i in range(30)
                ]),
            ],
        )

    @screen(".FormActivity")
    def form(self) -> Screen:
        return Screen(
            toolbar=Toolbar(title="Form", nav=self.back),
            body=[Column(pad_x=42, children=[
                Input(name="first", id="first_input", hint="First"),
                Input(name="second", id="second_input", hint="Second", value="prefilled"),
                Input(name="number", id="number_input", hint="Number", value="42", select_on_focus=True),
                Button("Save", id="save", on_tap=self.save),
                Button("Ask", id="ask", on_tap=partial(self.open, "sticky")),
            ])],
        )

    def save(self) -> None:
        self.state["saved"] = (self.field("first"), self.field("second"), self.field("number"))

    @menu
    def row_menu(self, row: int) -> Menu:
        return Menu(items=[MenuItem("Pick", on_tap=lambda: (self.record(f"pick {row}"), self.close()))])

    @dialog
    def sticky(self) -> Dialog:
        return Dialog(title="Sure?", message="A dialog that only its buttons close.", cancelable=False,
                      positive=Button("Yes", on_tap=self.close))


def parse(xml: str) -> etree._Element:
    assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">")
    return etree.fromstring(xml.encode())


def titles(app: ToolkitApp, ident: str) -> list[str]:
    return [n.text for n in app.find_all(id=ident)]


def check_window(root: Node, screen: Rect) -> None:
    """Bounds are sane: inside the screen and the parent; linear siblings do not overlap."""
    for node in root.walk():
        b = node.bounds
        assert not b.empty, node
        assert screen.left <= b.left and b.right <= screen.right and screen.top <= b.top and b.bottom <= screen.bottom
        for child in node.children:
            c = child.bounds
            assert b.left <= c.left and c.right <= b.right and b.top <= c.top and c.bottom <= b.bottom, (node, child)
        if node.cls.endswith(("LinearLayout", "RadioGroup", "RecyclerView", "ListView")):
            kids = [c.bounds for c in node.children]
            for i, a in enumerate(kids):
                for other in kids[i + 1:]:
                    assert a.intersect(other).empty, (node.resource_id, a, other)


# ---------------------------------------------------------------------------------------------- format


def test_dump_has_real_uiautomator_format() -> None:
    app = DemoApp()
    tree = parse(app.dump_xml())
    nodes = tree.findall(".//node")
    assert len(nodes) > 20
    for node in nodes:
        assert list(node.attrib) == ATTRS
        assert BOUNDS.match(node.get("bounds"))
        assert all(node.get(flag) in ("true", "false") for flag in ATTRS[6:16])
    assert [n.get("resource-id") for n in tree.iter("node")][:3] == ["", "", "android:id/content"]
    assert tree.find("node").get("bounds") == "[0,0][1080,2400]"
    bars = {n.get("resource-id"): n.get("bounds") for n in nodes if "BarBackground" in n.get("resource-id")}
    assert bars == {"android:id/statusBarBackground": "[0,0][1080,80]",
                    "android:id/navigationBarBackground": "[0,2337][1080,2400]"}
    assert "/>" in app.dump_xml() and "</node></hierarchy>" in app.dump_xml()
    for parent in nodes:
        assert [int(c.get("index")) for c in parent.findall("node")] == list(range(len(parent.findall("node"))))


def test_dump_escapes_like_xmlserializer() -> None:
    from tapir.sim.toolkit.dump import dump_xml

    node = Node(cls="android.widget.TextView", bounds=Rect(0, 0, 10, 10), text='a & <b> "c"\nd 😀')
    xml = dump_xml([node])
    assert 'text="a &amp; &lt;b&gt; &quot;c&quot;&#10;d &#128512;"' in xml
    assert parse(xml).find("node").get("text") == 'a & <b> "c"\nd 😀'


@pytest.mark.parametrize("name", APP_NAMES)
def test_every_reachable_view_lays_out_sanely(name: str) -> None:
    app = get_app(name)
    assert isinstance(app, ToolkitApp) and isinstance(app, SimApp)
    views = crawl(app)
    screens = {screen for screen, dialog in views if dialog is None}
    assert len(screens) >= 3 and len(views) >= 6, sorted(views, key=str)
    for there in views.values():
        check_window(there.window(), Rect(0, 0, *there.screen_size))
        parse(there.dump_xml())


def test_dialog_and_menu_windows_are_dumped_alone() -> None:
    app = DemoApp()
    app.tap_on(id="row_more")
    tree = parse(app.dump_xml())
    assert tree.find("node").get("class") == "android.widget.FrameLayout"
    assert [n.get("text") for n in tree.iter("node") if n.get("text")] == ["Pick"]
    assert tree.find(".//node[@text='Pick']").get("resource-id") == "org.tapir.demo:id/title"
    app.close()
    app.open("form")
    app.tap_on(id="ask")
    ids = {n.get("resource-id") for n in parse(app.dump_xml()).iter("node")}
    assert {"android:id/alertTitle", "android:id/message", "android:id/button1"} <= ids
    check_window(app.window(), Rect(0, 0, 1080, 2400))


# ---------------------------------------------------------------------------------------------- touch


def test_tap_reaches_the_deepest_clickable_view() -> None:
    app = DemoApp()
    title = app.find(text="Row 3")
    assert title is not None and not title.clickable
    app.tap(*title.bounds.center)  # the row takes the touch its title does not handle
    assert app.state["taps"] == ["row 3"]
    more = app.find_all(id="row_more")[3]
    app.tap(*more.bounds.center)  # the button inside the row takes it first
    assert app.current_dialog == "row_menu" and app.state["taps"] == ["row 3"]
    app.tap_on(text="Pick")
    assert app.state["taps"] == ["row 3", "pick 3"] and app.current_dialog is None


def test_disabled_widget_ignores_taps() -> None:
    app = DemoApp()
    node = app.tap_on(id="disabled_button")
    assert not node.enabled and node.clickable
    assert app.state["taps"] == [] and app.unhandled == []


def test_taps_on_nothing_are_logged() -> None:
    app = DemoApp()
    app.tap(540, 150)  # the toolbar title
    assert app.unhandled and app.state["taps"] == []


def test_tapping_outside_a_popup_dismisses_it_but_not_a_sticky_dialog() -> None:
    app = DemoApp()
    app.tap_on(desc="More options")  # the toolbar overflow
    assert app.current_dialog == "overflow_menu"
    app.tap(100, 1500)
    assert app.current_dialog is None and app.state["taps"] == []
    app.open("form")
    app.tap_on(id="ask")
    app.tap(10, 2200)
    assert app.key("KEYCODE_BACK") is True
    assert app.current_dialog == "sticky"
    app.tap_on(text="Yes")
    assert app.current_dialog is None and app.current_screen == "form"


def test_zero_length_swipe_is_a_tap_or_long_press() -> None:
    app = DemoApp()
    x, y = app.find(text="Row 1").bounds.center
    app.swipe(x, y, x, y, 50)
    assert app.state["taps"] == ["row 1"]


# ---------------------------------------------------------------------------------------------- scrolling


def test_swipe_scrolls_by_its_distance_and_reveals_hidden_items() -> None:
    app = DemoApp()
    first = titles(app, "row_title")
    assert first[0] == "Row 0" and "Row 29" not in first
    assert app.find(id="rows").scrollable
    before = app.find(text="Row 8").bounds
    app.swipe(540, 1800, 540, 1300, 300)  # the finger moves up by 500 px, and so does the content
    after = app.find(text="Row 8").bounds
    assert (after.top, after.bottom) == (before.top - 500, before.bottom - 500)
    now = titles(app, "row_title")
    assert now[0] != "Row 0" and set(now) - set(first)


def test_partly_visible_items_are_clipped_to_the_list() -> None:
    app = DemoApp()
    listview = app.find(id="rows").bounds
    rows = app.find_all(id="row")
    assert all(listview.top <= r.bounds.top and r.bounds.bottom <= listview.bottom for r in rows)
    full = rows[0].bounds.height
    assert rows[-1].bounds.height < full  # the last row is cut at the list's edge
    app.swipe(540, 1500, 540, 1450, 200)
    assert app.find_all(id="row")[0].bounds.height < full  # and now the first one is


def test_scrolling_stops_at_the_end() -> None:
    app = DemoApp()
    for _ in range(20):
        app.swipe(540, 2000, 540, 600, 200)
    end = app.dump_xml()
    assert titles(app, "row_title")[-1] == "Row 29"
    last = app.find(text="Row 29").bounds
    assert app.find(id="rows").bounds.bottom == app.find_all(id="row")[-1].bounds.bottom
    app.swipe(540, 2000, 540, 600, 200)
    assert app.dump_xml() == end and app.find(text="Row 29").bounds == last
    for _ in range(20):
        app.swipe(540, 600, 540, 2000, 200)
    assert titles(app, "row_title")[0] == "Row 0"
    assert app.find_all(id="row")[0].bounds.top == app.find(id="rows").bounds.top


def test_swipe_outside_a_list_does_nothing() -> None:
    app = DemoApp()
    before = app.dump_xml()
    app.swipe(540, 150, 540, 100, 200)
    assert app.dump_xml() == before and app.unhandled


# ---------------------------------------------------------------------------------------------- text


def test_text_goes_into_the_focused_input() -> None:
    app = DemoApp()
    app.open("form")
    app.input_text("lost")
    assert app.unhandled == ["text 'lost': no focused input"]
    assert app.find(id="first_input").text == "First"  # an empty field shows its hint, as on Android
    app.tap_on(id="first_input")
    assert app.find(id="first_input").focused
    app.input_text("Ada")
    app.tap_on(id="second_input")
    app.input_text("!")
    assert not app.find(id="first_input").focused and app.find(id="second_input").focused
    assert app.find(id="first_input").text == "Ada"
    assert app.find(id="second_input").text == "prefilled!"
    app.key("KEYCODE_DEL")
    app.key("67")
    assert app.find(id="second_input").text == "prefille"
    app.tap_on(id="number_input")  # select-on-focus: the typed text replaces the value
    app.input_text("7")
    app.tap_on(id="save")
    assert app.state["saved"] == ("Ada", "prefille", "7")


def test_keys_have_several_spellings() -> None:
    assert key_name("KEYCODE_BACK") == key_name("back") == key_name("4") == "BACK"
    assert key_name("KEYCODE_ENTER") == key_name("66") == "ENTER"
    assert DemoApp().key("KEYCODE_HOME") is False


# ---------------------------------------------------------------------------------------------- back stack


def test_back_closes_menus_then_screens_then_leaves() -> None:
    app = DemoApp()
    app.tap_on(desc="More options")
    app.tap_on(text="Form")
    assert app.current_screen == "form" and app.activity == "org.tapir.demo.FormActivity"
    app.tap_on(id="first_input")
    app.input_text("x")
    assert app.key("KEYCODE_BACK") is True and app.current_screen == "home"
    assert app.activity == "org.tapir.demo.MainActivity"
    app.tap_on(id="row_more")
    assert app.key("KEYCODE_BACK") is True and app.current_dialog is None
    assert app.key("KEYCODE_BACK") is False and app.current_screen == "home"


def test_reset_and_launch() -> None:
    app = DemoApp()
    fresh = app.dump_xml()
    app.swipe(540, 2000, 540, 600, 200)
    app.tap_on(text="Row 12")
    app.open("form")
    app.launch()
    assert app.current_screen == "home" and app.state["taps"] == ["row 12"]
    assert app.dump_xml() == fresh  # a launched screen starts scrolled to the top
    app.reset()
    assert app.state["taps"] == [] and app.dump_xml() == fresh and app.now == app.start_time


def test_unknown_view_is_a_usage_error() -> None:
    with pytest.raises(SimUsageError, match="no view 'nowhere'"):
        DemoApp().open("nowhere")


# ---------------------------------------------------------------------------------------------- drift


def test_drift_is_deterministic_and_changes_the_dump() -> None:
    base = get_app("music").dump_xml()
    dumps = {}
    for kind in ("text", "ids", "insert", "reorder"):
        app = get_app("music")
        app.set_drift(kind, seed=3, rate=1.0)
        dumps[kind] = app.dump_xml()
        again = get_app("music")
        again.set_drift(Drift(kind, 3, 1.0))
        assert again.dump_xml() == dumps[kind]
        assert dumps[kind] != base, kind
        parse(dumps[kind])
    other = get_app("music")
    other.set_drift("all", seed=4)
    assert other.dump_xml() != base
    off = get_app("music")
    off.set_drift("all", seed=4)
    off.set_drift(None)
    assert off.dump_xml() == base


def test_text_drift_rewords_labels_everywhere() -> None:
    app = get_app("music")
    app.set_drift("text", seed=0, rate=1.0)
    app.find_all(id="song_more")
    app.tap(*app.find_all(id="song_more")[0].bounds.center)
    labels = [n.text for n in app.window().walk() if n.text]
    assert "Add to playlist" not in labels
    assert {"Add to a playlist", "Add to list"} & set(labels)
    assert "Share" not in labels and "Play" not in labels


def test_id_drift_renames_or_drops_ids_but_keeps_behaviour() -> None:
    app = get_app("music")
    app.set_drift("ids", seed=1, rate=1.0)
    assert app.find_all(id="song_title") == []
    assert app.find(id="songs_list") is None
    tree = parse(app.dump_xml())
    ids = {n.get("resource-id") for n in tree.iter("node")}
    assert any(i.startswith("org.tapir.music:id/") for i in ids)
    first_row = next(n for n in app.window().walk() if n.cls.endswith("RelativeLayout") and n.clickable)
    app.tap(*first_row.bounds.center)
    assert app.state.now_playing is not None  # tapping a drifted row still plays the song


def test_insert_drift_adds_siblings_and_reorder_keeps_the_items() -> None:
    app = get_app("contacts")
    base_names = titles(app, "contact_name")
    app.set_drift("insert", seed=2, rate=1.0)
    assert len(list(app.window().walk())) > len(list(get_app("contacts").window().walk()))
    check_window(app.window(), Rect(0, 0, 1080, 2400))
    shuffled = get_app("contacts")
    shuffled.set_drift("reorder", seed=2, rate=1.0)
    names: list[str] = []
    for _ in range(12):
        names += [n for n in titles(shuffled, "contact_name") if n not in names]
        shuffled.swipe(540, 2000, 540, 1000, 100)
    assert sorted(names) == sorted(c.name for c in shuffled.state.contacts)
    assert names[: len(base_names)] != base_names


def test_bad_drift_kind_is_a_usage_error() -> None:
    with pytest.raises(SimUsageError, match="unknown drift kind"):
        Drift("colour")


# ---------------------------------------------------------------------------------------------- screenshot


def test_screenshot_is_a_wireframe_png_of_the_screen() -> None:
    app = DemoApp()
    png = app.screenshot_png()
    image = PILImage.open(io.BytesIO(png))
    assert image.format == "PNG" and image.size == (1080, 2400)
    assert image.convert("L").getextrema()[0] < 128  # something is drawn
    app.tap_on(id="row_more")
    assert app.screenshot_png() != png
    content = image.crop((0, CONTENT.top, 1080, CONTENT.bottom)).convert("L")
    assert content.getextrema() != (255, 255)


def test_a_frame_drawn_before_comes_from_the_cache_and_a_changed_view_is_drawn_anew() -> None:
    from tapir.sim.toolkit import render

    app = get_app("music")
    app.launch()
    first = app.screenshot_png()
    before = dict(render.stats)
    assert app.screenshot_png() is first  # nothing changed: the frame is not drawn again
    assert render.stats["cached"] == before["cached"] + 1 and render.stats["drawn"] == before["drawn"]
    app.open("sort_songs")  # a dialog over the same screen
    assert app.screenshot_png() != first and render.stats["drawn"] == before["drawn"] + 1


def test_a_dialog_dims_what_lies_below_it_and_not_itself() -> None:
    app = get_app("music")
    app.launch()
    app.open("sort_songs")
    image = PILImage.open(io.BytesIO(app.screenshot_png())).convert("RGB")
    root = etree.fromstring(app.dump_xml().encode())
    [title] = root.xpath("//node[@text='Sort by']")
    left, top, _right, _bottom = map(int, re.findall(r"\d+", title.get("bounds")))
    shade = round(255 * 0.65)
    assert image.getpixel((1075, CONTENT.top + 5)) == (shade, shade, shade)  # the screen below, dimmed
    assert image.getpixel((left + 2, top - 10)) == (255, 255, 255)  # the dialog itself, white


def test_choice_dialog_checks_the_current_choice_and_reports_the_new_one() -> None:
    app = get_app("music")
    app.launch()
    app.open("sort_songs")
    root = etree.fromstring(app.dump_xml().encode())
    radios = root.xpath("//node[@class='android.widget.RadioButton']")
    assert [(r.get("text"), r.get("resource-id").rsplit("/", 1)[-1], r.get("checked")) for r in radios] == [
        ("Title", "sort_title", "true"), ("Artist", "sort_artist", "false"), ("Duration", "sort_duration", "false")]
    assert root.xpath("//node[@resource-id='org.tapir.music:id/sort_radio_group']")
    app.tap_on(text="Duration")
    assert app.state.sort == "Duration" and app.current_dialog is None
    app.open("sort_songs")
    app.tap_on(text="Cancel")
    assert app.state.sort == "Duration" and app.current_dialog is None
