"""The normalised UI tree: parsers for uiautomator XML, DroidBot states and view lists, tree
navigation, the AutoDroid-V2 HTML rendering rules and XPath evaluation on it."""

from __future__ import annotations

import codecs
import json
import pickle
from pathlib import Path

import pytest

from tapir.core.errors import DocumentError, HierarchyError
from tapir.hierarchy import (
    Bounds,
    UINode,
    html_view,
    load_tree,
    parse_droidbot_state,
    parse_tree,
    parse_uiautomator,
    parse_view_list,
    render_html,
)
from tapir.hierarchy.model import RawNode, assemble

# A small dump in the exact shape `uiautomator dump` writes (attribute order and all).
_ATTRS = ('checkable="false" checked="false" clickable="{click}" enabled="true" focusable="false" '
          'focused="false" scrollable="{scroll}" long-clickable="false" password="false" selected="false"')


def _xml_node(cls: str, bounds: str, children: str = "", *, text: str = "", rid: str = "", desc: str = "",
              click: str = "false", scroll: str = "false", extra: str = "") -> str:
    attrs = _ATTRS.format(click=click, scroll=scroll)
    return (f'<node index="0" text="{text}" resource-id="{rid}" class="{cls}" package="org.example" '
            f'content-desc="{desc}" {attrs} bounds="{bounds}"{extra}>{children}</node>')


SMALL_XML = (
    "UI hierchary dumped to: /data/local/tmp/x.xml\n"
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    + _xml_node("android.widget.FrameLayout", "[0,0][1080,2400]",
                _xml_node("android.widget.EditText", "[0,100][1080,200]", text="Search", rid="org.example:id/q")
                + _xml_node("android.widget.LinearLayout", "[0,200][1080,400]",
                            _xml_node("android.widget.TextView", "[0,200][540,400]", text="Caf\u00e9 &amp; bar")
                            + _xml_node("android.widget.ImageView", "[540,200][1080,400]", desc="Play", click="true"),
                            click="true")
                + _xml_node("android.view.View", "[0,400][10,410]", extra=' visible-to-user="false"'))
    + "</hierarchy>\ntrailing noise"
)


def test_bounds_accepts_every_spelling() -> None:
    expected = Bounds(1, 2, 30, 40)
    for spelling in ("[1,2][30,40]", "1,2,30,40", [[1, 2], [30, 40]], [1, 2, 30, 40], "[[1, 2], [30, 40]]"):
        assert Bounds.parse(spelling) == expected
    assert expected.center == (15, 21)
    assert (expected.width, expected.height, expected.area) == (29, 38, 29 * 38)
    assert expected.contains(1, 2) and not expected.contains(30, 40)
    with pytest.raises(ValueError):
        Bounds.parse("[1,2][3]")


def test_uiautomator_ids_are_preorder_with_links_and_paths() -> None:
    tree = parse_uiautomator(SMALL_XML)
    assert tree.source == "uiautomator"
    assert [n.id for n in tree] == [0, 1, 2, 3, 4, 5]
    assert [n.short_class for n in tree] == ["FrameLayout", "EditText", "LinearLayout", "TextView", "ImageView", "View"]
    root, edit, row, label, image, hidden = tree.nodes
    assert root.parent is None and root.children == (1, 2, 5) and root.path == ()
    assert row.children == (3, 4) and image.parent == 2 and image.path == (1, 1)
    assert label.text == "Caf\u00e9 & bar"
    assert edit.editable and not label.editable  # inferred from the class: dumps have no "editable"
    assert edit.resource_id == "org.example:id/q" and edit.resource_name == "q"
    assert image.content_desc == "Play" and image.clickable and not image.long_clickable
    assert not hidden.visible and root.visible
    assert image.bounds == Bounds(540, 200, 1080, 400) and image.package == "org.example"
    assert (tree.width, tree.height) == (1080, 2400)


def test_uiautomator_explicit_editable_attribute_wins() -> None:
    xml = "<hierarchy>" + _xml_node("android.widget.TextView", "[0,0][1,1]", extra=' editable="true"') + "</hierarchy>"
    assert parse_uiautomator(xml).nodes[0].editable


@pytest.mark.parametrize("bad, why", [
    ("ERROR: could not get idle state.", "no <hierarchy>"),
    ("<hierarchy><node bounds='[0,0][1,1]'>", "malformed"),
    ("<?xml version='1.0'?><html><node/></html>", "root element is <html>"),
])
def test_uiautomator_rejects_broken_dumps(bad: str, why: str) -> None:
    with pytest.raises(HierarchyError, match=why):
        parse_uiautomator(bad)


def test_tree_navigation() -> None:
    tree = parse_uiautomator(SMALL_XML)
    assert [n.id for n in tree.ancestors(4)] == [2, 0]
    assert [n.id for n in tree.descendants(0)] == [1, 2, 3, 4, 5]
    assert [n.id for n in tree.leaves(2)] == [3, 4]
    assert [n.id for n in tree.children(0)] == [1, 2, 5]
    assert tree.parent(3) is not None and tree.parent(3).id == 2  # type: ignore[union-attr]
    assert tree.inherits(3, "clickable") and not tree.inherits(1, "clickable")
    assert tree.node_at(600, 300).id == 4  # type: ignore[union-attr]
    assert tree.node_at(5, 405).id == 0  # type: ignore[union-attr]  # the invisible view is skipped
    assert 4 in tree and 99 not in tree and tree.get(99) is None
    assert [n.id for n in tree.find(lambda n: n.clickable)] == [2, 4]


def test_parsed_nodes_equal_nodes_built_from_their_fields() -> None:
    tree = parse_uiautomator(SMALL_XML)
    for node in tree:
        fields = {name: getattr(node, name) for name in UINode.FIELDS}
        rebuilt = UINode(**fields)  # type: ignore[arg-type]
        assert rebuilt == node and hash(rebuilt) == hash(node) and UINode.build(fields) == node
        assert {name: getattr(rebuilt, name) for name in UINode.FIELDS} == fields
        assert pickle.loads(pickle.dumps(node)) == node
    root, edit = tree.nodes[:2]
    assert root != edit and root != "root"
    assert repr(edit) == ("UINode(id=1, class_name='android.widget.EditText', resource_id='org.example:id/q', "
                          "text='Search', bounds=[0,100][1080,200])")


def test_nodes_are_read_only() -> None:
    node = parse_uiautomator(SMALL_XML).nodes[1]
    for name in ("text", "bounds", "clickable", "class_name", "path"):
        with pytest.raises(AttributeError):
            setattr(node, name, None)
    with pytest.raises(AttributeError):
        node.extra = 1  # type: ignore[attr-defined]
    assert node.attribute("resource-id") == "org.example:id/q" and node.attribute("drawing-order") is None


def _view(temp_id: int, parent: int, children: list[int], cls: str = "android.widget.FrameLayout",
          **kw: object) -> dict:
    view: dict[str, object] = {
        "temp_id": temp_id, "parent": parent, "children": children, "class": cls,
        "resource_id": None, "text": None, "content_description": None,
        "bounds": [[0, 0], [1080, 2280]], "visible": True, "clickable": False, "long_clickable": False,
        "checkable": False, "checked": False, "selected": False, "scrollable": False, "editable": False,
        "enabled": True, "focusable": False, "focused": False, "is_password": False, "package": "org.example",
    }
    view.update(kw)
    return view


def test_droidbot_state_keeps_temp_ids_and_foreground_activity() -> None:
    state = {
        "foreground_activity": "org.example/.MainActivity", "width": 1080, "height": 2280,
        "views": [_view(0, -1, [1]), _view(1, 0, [], "android.widget.TextView", text="Hi", bounds=[[0, 0], [10, 10]])],
    }
    tree = parse_droidbot_state(state)
    assert tree.source == "droidbot"
    assert (tree.package, tree.activity) == ("org.example", "org.example.MainActivity")
    assert (tree.width, tree.height) == (1080, 2280)
    assert tree.node(1).text == "Hi" and tree.node(1).bounds == Bounds(0, 0, 10, 10)
    assert tree.node(0).resource_id == "" and tree.node(0).content_desc == ""  # None becomes ""
    with pytest.raises(HierarchyError, match="no 'views' list"):
        parse_droidbot_state({"views": 3})


def test_view_list_with_string_bounds_and_alternative_keys() -> None:
    views = [
        {"temp_id": 0, "parent": -1, "children": [1, 2], "class": "android.widget.FrameLayout",
         "bounds": "[0,0][100,200]"},
        {"temp_id": 1, "parent": 0, "class_name": "android.widget.Button", "bound_box": "0,0,50,50",
         "resource-id": "a:id/ok", "content-desc": "OK", "clickable": "true"},
        {"temp_id": 2, "parent": 0, "class": "android.widget.EditText", "bounds": [[0, 50], [100, 100]]},
    ]
    tree = parse_view_list(views)
    ok, edit = tree.node(1), tree.node(2)
    assert ok.bounds == Bounds(0, 0, 50, 50) and ok.resource_name == "ok" and ok.content_desc == "OK" and ok.clickable
    assert edit.editable and tree.node(0).bounds == Bounds(0, 0, 100, 200)


def test_view_list_without_links_is_a_forest() -> None:
    tree = parse_view_list([{"class": "A", "bounds": "0,0,1,1"}, {"class": "B", "bounds": "0,0,2,2"}])
    assert tree.roots == (0, 1) and all(n.parent is None for n in tree)
    assert render_html(tree).startswith("<hierarchy>\n  <A id='0'></A>\n  <B id='1'></B>\n</hierarchy>")


def test_assemble_repairs_truncated_child_lists_and_cycles() -> None:
    def raw(i: int, parent: int | None, children: list[int]) -> RawNode:
        return RawNode(i, parent, children, {name: getattr(UINode(0, None, (), ()), name)
                                             for name in UINode.FIELDS
                                             if name not in ("id", "parent", "children", "path")})

    # node 3 names parent 0, which does not list it; 4 and 5 point at each other only
    tree = assemble([raw(0, None, [1, 2]), raw(1, 0, []), raw(2, 0, []), raw(3, 0, []),
                     raw(4, 5, [5]), raw(5, 4, [4])], source="views")
    assert tree.node(0).children == (1, 2, 3) and tree.node(3).path == (2,)
    assert tree.roots == (0, 4) and tree.node(5).parent == 4 and tree.node(4).children == (5,)
    assert len(tree) == 6


def test_html_rendering_rules() -> None:
    long_text = "x" * 60
    views = [
        _view(0, -1, [1, 2, 3, 4, 5, 6, 12, 14]),
        _view(1, 0, [], "android.widget.EditText", resource_id="org.example:id/q", text="Find it", editable=True),
        _view(2, 0, [7, 8], "android.widget.LinearLayout", clickable=True),   # row: children inherit click
        _view(3, 0, [9], "android.widget.LinearLayout", checkable=True),
        _view(4, 0, [], "android.widget.TextView", text=long_text, long_clickable=True),
        _view(5, 0, [10], "androidx.recyclerview.widget.RecyclerView", scrollable=True),
        _view(6, 0, [11], "android.widget.FrameLayout"),                       # no described leaf: emptied
        _view(7, 2, [], "android.widget.TextView", text="it's <b> & \"q\""),
        _view(8, 2, [], "android.widget.ImageView"),                          # plain leaf: kept as is
        _view(9, 3, [], "android.widget.TextView", text="Wi-Fi\nOn", checked=True),
        _view(10, 5, [], "android.widget.TextView", content_description="Album", selected=True),
        _view(11, 6, [], "android.widget.ImageView"),
        _view(12, 0, [13], "android.widget.FrameLayout", visible=False),       # invisible: subtree gone
        _view(13, 12, [], "android.widget.TextView", text="hidden"),
        _view(14, 0, [], "android.view.View", resource_id="android:id/navigationBarBackground", text="nav"),
    ]
    html = render_html(parse_view_list(views))
    assert html == (
        "<FrameLayout id='0'>\n"
        "  <input id='1' resource_id='q'>Find it</input>\n"
        "  <LinearLayout id='2'>\n"
        "    <button id='7'>it&apos;s &lt;b&gt; &amp; &quot;q&quot;</button>\n"
        "    <ImageView id='8'></ImageView>\n"
        "  </LinearLayout>\n"
        "  <LinearLayout id='3'>\n"
        "    <checkbox id='9' status='selected'>Wi-Fi\nOn</checkbox>\n"
        "  </LinearLayout>\n"
        f"  <p id='4'>{'x' * 50}</p>\n"
        "  <scrollbar id='5'>\n"
        "    <p id='10' alt='Album' status='selected'></p>\n"
        "  </scrollbar>\n"
        "  <FrameLayout id='6'></FrameLayout>\n"
        "</FrameLayout>\n"
    )


def test_html_tag_names_that_xml_forbids_are_sanitised() -> None:
    views = [_view(0, -1, [1], "com.example.Outer$Inner"), _view(1, 0, [], "x.9Patch", text="\x01o\ud800k\ufffe",
                                                                 content_description="a\x0bb")]
    view = html_view(parse_view_list(views))
    assert view.tag(0) == "Outer_Inner" and view.tag(1) == "p"
    assert view.xpath("//*[text()='ok']")[0].id == 1 and view.xpath("//*[@alt='ab']")[0].id == 1


def _launcher_view():  # type: ignore[no-untyped-def]
    views = [
        _view(0, -1, [1, 4]),
        _view(1, 0, [2, 3], "android.widget.RelativeLayout", resource_id="app:id/holder", clickable=True),
        _view(2, 1, [], "android.widget.ImageView", resource_id="app:id/icon"),
        _view(3, 1, [], "android.widget.TextView", resource_id="app:id/label", text="Clock"),
        _view(4, 0, [5], "android.widget.RelativeLayout", resource_id="app:id/holder", clickable=True),
        _view(5, 4, [], "android.widget.TextView", resource_id="app:id/label", text="Camera",
              content_description="Camera app"),
    ]
    return html_view(parse_view_list(views))


def test_xpath_maps_hits_back_to_nodes() -> None:
    view = _launcher_view()
    assert [n.id for n in view.xpath("//*[@resource_id='label']")] == [3, 5]
    assert view.first("//*[@resource_id='label' and text()='Camera']").id == 5  # type: ignore[union-attr]
    assert view.first("//*[@alt='Camera app']").id == 5  # type: ignore[union-attr]
    assert [n.id for n in view.xpath("//FrameLayout/RelativeLayout[2]/button")] == [5]
    # attribute and text results select the element that holds them
    assert [n.id for n in view.xpath("//@resource_id[.='icon']")] == [2]
    assert [n.id for n in view.xpath("//button/text()")] == [3, 5]
    assert view.first("//*[@resource_id='nothing']") is None
    # upstream's broken second XPath form (a child element named alt) parses and finds nothing
    assert view.xpath("//*[@resource_id=\"label\" and alt=\"Camera\"]") == []


def test_xpath_within_a_subtree() -> None:
    view = _launcher_view()
    assert [n.id for n in view.xpath("//*[@resource_id='label']", within=4)] == [5]
    assert [n.id for n in view.xpath("//*[@resource_id='holder']", within=4)] == [4]
    assert view.xpath("//*", within=99) == []


@pytest.mark.parametrize("expr", ["//*[", "count(//*)", "//*[@id='1'] +"])
def test_bad_xpaths_are_document_errors(expr: str) -> None:
    with pytest.raises(DocumentError, match="XPath"):
        _launcher_view().xpath(expr)


def test_parse_tree_and_load_tree_sniff_the_format(tmp_path: Path) -> None:
    state = {"views": [_view(0, -1, [])], "foreground_activity": "a.b/.C"}
    assert parse_tree(SMALL_XML).source == "uiautomator"
    assert parse_tree(json.dumps(state)).source == "droidbot"
    assert parse_tree(json.dumps(state["views"]).encode()).source == "views"
    (tmp_path / "screen.txt").write_text(SMALL_XML)
    assert load_tree(tmp_path / "screen.txt").source == "uiautomator"
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(HierarchyError) as err:
        load_tree(tmp_path / "bad.json")
    assert err.value.filename == str(tmp_path / "bad.json") and "bad.json" in err.value.render()
    with pytest.raises(HierarchyError, match="cannot read"):
        load_tree(tmp_path / "missing.xml")


# -- real dumps -------------------------------------------------------------------------------

@pytest.mark.upstream
def test_real_uiautomator_dialog(upstream: Path) -> None:
    tree = load_tree(upstream / "uiautomator" / "maps_dialog.xml")
    assert len(tree) == 23 and tree.root is not None and tree.root.package == "com.google.android.apps.maps"
    view = html_view(tree)
    done = view.first("//*[@resource_id='dialog_positive_button']")
    assert done is not None and done.short_class == "Button" and done.content_desc == "Done"
    assert view.tag(done.id) == "button"
    assert view.first("//*[text()='Go to Web & App Activity']").id == 22  # type: ignore[union-attr]


@pytest.mark.upstream
def test_real_droidbot_state(upstream: Path) -> None:
    path = upstream / "droidtask" / "apps" / "applauncher" / "states" / "state_2023-07-15_164218.json"
    raw = json.loads(path.read_text())
    tree = load_tree(path)
    assert len(tree) == len(raw["views"])
    assert [n.id for n in tree] == sorted(v["temp_id"] for v in raw["views"])
    assert tree.activity == "com.simplemobiletools.applauncher.activities.MainActivity"
    sort = html_view(tree).first("//*[@resource_id='sort']")
    assert sort is not None and sort.content_desc == "Sort by" and sort.center == (716, 259)


@pytest.mark.upstream
def test_real_view_list_matches_its_uiautomator_twin(upstream: Path) -> None:
    """chrome_search_results.{xml,views.json} are one screen dumped two ways."""
    views = load_tree(upstream / "uiautomator" / "chrome_search_results.views.json")
    xml = load_tree(upstream / "uiautomator" / "chrome_search_results.xml")
    raw = json.loads((upstream / "uiautomator" / "chrome_search_results.views.json").read_text())
    # DroidBot's child lists there are truncated (child_count 7, six listed); the parent links
    # put every view back in the tree
    assert len(views) == len(raw) and views.roots == (0,)
    assert views.node(29).parent == 21 and 29 in views.node(21).children
    # the app frame is the same in both until the web content starts
    head = [(n.class_name, n.resource_id) for n in views.nodes[:10]]
    assert head == [(n.class_name, n.resource_id) for n in xml.nodes[:10]]


def _reference_nodes(data: bytes) -> list[dict[str, object]]:
    """Every field of every view, read straight from the XML with lxml (an independent
    reading of what ``parse_uiautomator`` must produce)."""
    from lxml import etree

    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # saved as UTF-16 (with its mark) on the way from the phone
        data = data.decode("utf-16").encode("utf-8")
    start = min(i for i in (data.find(b"<?xml"), data.find(b"<hierarchy")) if i >= 0)
    root = etree.fromstring(data[start:data.rfind(b"</hierarchy>") + len(b"</hierarchy>")])
    elements = list(root.iter("node"))
    index = {el: i for i, el in enumerate(elements)}
    out = []
    for el in elements:
        up = el.getparent()
        path: list[int] = []
        node, parent = el, up
        while parent is not None and parent.tag == "node":
            path.insert(0, list(parent).index(node))
            node, parent = parent, parent.getparent()
        cls = el.get("class", "")
        def flag(name: str, el: etree._Element = el) -> bool:
            return el.get(name) == "true"

        out.append({
            "id": index[el], "parent": index.get(up), "children": tuple(index[c] for c in el if c.tag == "node"),
            "path": tuple(path), "class_name": cls, "resource_id": el.get("resource-id", ""),
            "text": el.get("text", ""), "content_desc": el.get("content-desc", ""),
            "bounds": Bounds.parse(el.get("bounds")) if el.get("bounds") else Bounds(0, 0, 0, 0),
            "package": el.get("package", ""), "clickable": flag("clickable"),
            "long_clickable": flag("long-clickable"), "checkable": flag("checkable"), "checked": flag("checked"),
            "selected": flag("selected"), "scrollable": flag("scrollable"),
            "editable": flag("editable") if el.get("editable") else (cls.endswith("EditText") or cls in (
                "android.widget.AutoCompleteTextView", "android.widget.MultiAutoCompleteTextView",
                "android.widget.SearchView$SearchAutoComplete")),
            "focusable": flag("focusable"), "focused": flag("focused"), "enabled": el.get("enabled") != "false",
            "visible": el.get("visible-to-user") != "false", "password": flag("password"),
        })
    return out


@pytest.mark.upstream
def test_every_real_dump_parses_to_what_its_xml_says(upstream: Path) -> None:
    """87 dumps from real phones: each parses to exactly the fields its XML holds (two were saved as
    UTF-16 with a byte-order mark, one with adb's message after the XML), or is refused for a
    reason a person can act on (079 went through PowerShell, which wrote `n for its line breaks)."""
    files = sorted((upstream / "uiautomator" / "real").glob("*.xml"))
    assert len(files) == 87
    refused = {}
    for path in files:
        data = path.read_bytes()
        try:
            tree = parse_uiautomator(data)
        except HierarchyError as exc:
            refused[path.name] = exc.message
            continue
        expected = _reference_nodes(data)
        assert [{name: getattr(n, name) for name in UINode.FIELDS} for n in tree.nodes] == expected, path.name
        assert tree.roots == tuple(n["id"] for n in expected if n["parent"] is None)
        assert (tree.width, tree.height) == (max(n["bounds"].x2 for n in expected if n["parent"] is None),  # type: ignore[attr-defined]
                                             max(n["bounds"].y2 for n in expected if n["parent"] is None))  # type: ignore[attr-defined]
    assert refused.keys() == {"079.xml"}
    assert refused["079.xml"].startswith("malformed uiautomator dump") and "PowerShell" in refused["079.xml"]


def test_odd_bounds_fail_when_read_naming_the_view() -> None:
    tree = parse_uiautomator("<hierarchy>" + _xml_node("android.view.View", "[0,0][1,1]",
                                                        _xml_node("android.view.View", "[0,0]")) + "</hierarchy>")
    assert tree.nodes[1].text == ""  # the rest of the view reads fine
    with pytest.raises(HierarchyError, match=r"node 1: unreadable bounds '\[0,0\]'"):
        tree.nodes[1].bounds  # noqa: B018


def test_uiautomator_xpaths_run_on_the_dump_itself() -> None:
    tree = parse_uiautomator(SMALL_XML)
    assert tree.xml is not None and tree.xml.startswith(b"<?xml") and tree.xml.endswith(b"</hierarchy>")
    assert tree.document is not None and tree.document.tag == "hierarchy"
    assert [n.id for n in tree.xpath("//node[@content-desc='Play']")] == [4]
    assert [n.id for n in tree.xpath("//node[@clickable='true']/@bounds")] == [2, 4]  # attribute hits: their element
    hit = tree.document.xpath("//node[@text='Search']")[0]
    assert tree.node_of(hit) is tree.nodes[1] and tree.node_of(tree.document) is None
    views = parse_view_list([{"temp_id": 0, "class": "android.view.View"}])
    assert views.document is None and views.xpath("//node") == []


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig", "utf-32"])
def test_dumps_saved_in_another_unicode_encoding_parse(codec: str) -> None:
    """A dump saved through a Windows shell is UTF-16 with a byte-order mark (its declaration may
    still say UTF-8, or name the new encoding); it parses to the same tree as the UTF-8 original."""
    xml = ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
           "<node index=\"0\" text=\"Café 日本\" class=\"android.widget.TextView\" package=\"a.b\" "
           "bounds=\"[0,0][10,10]\" /></hierarchy>")
    original = parse_uiautomator(xml.encode("utf-8"))
    for text in (xml, xml.replace("encoding='UTF-8'", f"encoding='{codec.upper()}'")):
        data = text.encode(codec)
        if codec == "utf-16-be":
            data = codecs.BOM_UTF16_BE + data
        tree = parse_uiautomator(data)
        assert [n.text for n in tree.nodes] == [n.text for n in original.nodes] == ["Café 日本"]


def test_a_dump_mangled_by_powershell_is_refused_saying_so() -> None:
    mangled = b"<?xml version='1.0' encoding='UTF-8' ?>`n<hierarchy rotation=\"0\">`n<node text=\"x\" /></hierarchy>"
    with pytest.raises(HierarchyError, match="PowerShell"):
        parse_uiautomator(mangled)
