"""Readers for the three hierarchy formats found in the wild.

* ``uiautomator dump`` XML (``<hierarchy><node .../></hierarchy>``), what a device gives us;
* a DroidBot state (``{"views": [...], "foreground_activity": ..., "width": ...}``), what
  DroidTask and AutoDroid recordings hold;
* a bare view list (DroidBot ``.vh`` files, LlamaTouch lists whose bounds are strings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.parsers import expat

from tapir.dsl.errors import HierarchyError
from tapir.runtime.hierarchy.model import EMPTY_BOUNDS, Bounds, RawNode, UINode, UITree, assemble

_XML_START = re.compile(rb"<\?xml|<hierarchy")

# uiautomator dumps have no "editable" attribute; accessibility reports every EditText subclass
# as android.widget.EditText, and these are the framework's other text-entry classes.
_EDITABLE_CLASSES = frozenset({
    "android.widget.AutoCompleteTextView",
    "android.widget.MultiAutoCompleteTextView",
    "android.widget.SearchView$SearchAutoComplete",
})


def _editable_class(class_name: str) -> bool:
    return class_name.endswith("EditText") or class_name in _EDITABLE_CLASSES


def _flag(value: object, default: bool = False) -> bool:
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


def _str(value: object) -> str:
    return "" if value is None else str(value)


def _bounds(value: object, where: str) -> Bounds:
    if value is None or value == "":
        return EMPTY_BOUNDS
    try:
        return Bounds.parse(value)
    except (ValueError, TypeError) as exc:
        raise HierarchyError(f"{where}: unreadable bounds {value!r}") from exc


_XML_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _xml_bounds(value: str | None, nid: int) -> Bounds:
    m = _XML_BOUNDS.fullmatch(value) if value else None
    if m is None:
        return _bounds(value, f"node {nid}")
    return Bounds(int(m[1]), int(m[2]), int(m[3]), int(m[4]))


def _xml_node(nid: int, parent: int | None, path: tuple[int, ...], a: dict[str, str],
              children: tuple[int, ...]) -> UINode:
    class_name = a.get("class", "")
    editable = a.get("editable")
    return UINode.build({
        "id": nid, "parent": parent, "children": children, "path": path,
        "class_name": class_name,
        "resource_id": a.get("resource-id", ""),
        "text": a.get("text", ""),
        "content_desc": a.get("content-desc", ""),
        "bounds": _xml_bounds(a.get("bounds"), nid),
        "package": a.get("package", ""),
        "clickable": a.get("clickable") == "true",
        "long_clickable": a.get("long-clickable") == "true",
        "checkable": a.get("checkable") == "true",
        "checked": a.get("checked") == "true",
        "selected": a.get("selected") == "true",
        "scrollable": a.get("scrollable") == "true",
        "editable": _editable_class(class_name) if editable is None else editable == "true",
        "focusable": a.get("focusable") == "true",
        "focused": a.get("focused") == "true",
        "enabled": a.get("enabled") != "false",
        "visible": a.get("visible-to-user") != "false",
        "password": a.get("password") == "true",
    })


def parse_uiautomator(xml: str | bytes) -> UITree:
    """Parse ``uiautomator dump`` output.

    Anything before the XML (``UI hierchary dumped to: ...`` when dump and cat share a shell)
    and after ``</hierarchy>`` is ignored. Ids are pre-order indices of ``<node>`` elements,
    which is how DroidBot numbers the same views. Dumps list only views visible to the user
    unless they carry ``visible-to-user="false"``. The file is read with expat rather than
    lxml: a dump is parsed on every step and expat hands over attribute dicts directly,
    about three times faster.
    """
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    m = _XML_START.search(data)
    if m is None:
        raise HierarchyError("not a uiautomator dump: no <hierarchy> element")
    end = data.rfind(b"</hierarchy>")
    body = data[m.start(): end + len("</hierarchy>")] if end > m.start() else data[m.start():]

    nodes: list[UINode | None] = []
    roots: list[int] = []
    # open elements: (id, parent id, path, attributes, child ids); None marks <hierarchy>
    open_: list[tuple[int, int | None, tuple[int, ...], dict[str, str], list[int]] | None] = []
    seen_root = False

    def start(name: str, attrs: dict[str, str]) -> None:
        nonlocal seen_root
        if name != "node":
            if not seen_root and name != "hierarchy":
                raise HierarchyError(f"not a uiautomator dump: root element is <{name}>")
            seen_root = True
            open_.append(None)
            return
        parent = open_[-1] if open_ else None
        nid = len(nodes)
        nodes.append(None)
        if parent is None:
            path: tuple[int, ...] = ()
            roots.append(nid)
            open_.append((nid, None, path, attrs, []))
        else:
            siblings = parent[4]
            path = (*parent[2], len(siblings))
            siblings.append(nid)
            open_.append((nid, parent[0], path, attrs, []))

    def end_(name: str) -> None:
        item = open_.pop()
        if item is not None:
            nid, parent, path, attrs, kids = item
            nodes[nid] = _xml_node(nid, parent, path, attrs, tuple(kids))

    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler = start
    parser.EndElementHandler = end_
    try:
        parser.Parse(body, True)
    except expat.ExpatError as exc:
        raise HierarchyError(f"malformed uiautomator dump: {exc}") from exc
    done = tuple(n for n in nodes if n is not None)
    width = max((n.bounds.x2 for n in done if n.parent is None), default=0)
    height = max((n.bounds.y2 for n in done if n.parent is None), default=0)
    return UITree(nodes=done, roots=tuple(roots), source="uiautomator", width=width, height=height)


def _pick(view: Mapping[str, object], *keys: str) -> object:
    for key in keys:
        if key in view:
            return view[key]
    return None


def _view_attrs(view: Mapping[str, object], where: str) -> dict[str, object]:
    class_name = _str(_pick(view, "class", "class_name", "className"))
    bounds = _pick(view, "bounds", "bound_box", "bbox")
    editable = _pick(view, "editable", "is_editable")
    return {
        "class_name": class_name,
        "resource_id": _str(_pick(view, "resource_id", "resource-id", "resourceId")),
        "text": _str(_pick(view, "text")),
        "content_desc": _str(_pick(view, "content_description", "content-desc", "content_desc", "desc")),
        "bounds": _bounds(bounds, where),
        "package": _str(_pick(view, "package", "package_name")),
        "clickable": _flag(_pick(view, "clickable")),
        "long_clickable": _flag(_pick(view, "long_clickable", "long-clickable")),
        "checkable": _flag(_pick(view, "checkable")),
        "checked": _flag(_pick(view, "checked")),
        "selected": _flag(_pick(view, "selected")),
        "scrollable": _flag(_pick(view, "scrollable")),
        "editable": _flag(editable, _editable_class(class_name)),
        "focusable": _flag(_pick(view, "focusable")),
        "focused": _flag(_pick(view, "focused")),
        "enabled": _flag(_pick(view, "enabled"), True),
        "visible": _flag(_pick(view, "visible", "visible-to-user"), True),
        "password": _flag(_pick(view, "is_password", "password")),
    }


def _raw_views(views: Sequence[object]) -> list[RawNode]:
    raw = []
    for pos, view in enumerate(views):
        if not isinstance(view, Mapping):
            raise HierarchyError(f"view {pos} is not an object")
        vid = view.get("temp_id", pos)
        parent = view.get("parent")
        children = view.get("children") or []
        if not isinstance(vid, int) or not isinstance(children, list):
            raise HierarchyError(f"view {pos}: bad temp_id or children")
        raw.append(RawNode(
            vid,
            parent if isinstance(parent, int) and parent >= 0 else None,
            [c for c in children if isinstance(c, int)],
            _view_attrs(view, f"view {vid}"),
        ))
    return raw


def parse_view_list(views: Sequence[object]) -> UITree:
    """Parse a list of view dicts linked by ``temp_id``/``parent``/``children``.

    Lists without links (plain element lists) become a forest of roots. Both DroidBot and
    uiautomator-style key spellings are accepted.
    """
    return assemble(_raw_views(views), source="views")


def parse_droidbot_state(state: Mapping[str, object]) -> UITree:
    """Parse a DroidBot state file (``state_<tag>.json``)."""
    views = state.get("views")
    if not isinstance(views, list):
        raise HierarchyError("not a DroidBot state: no 'views' list")
    package, _, activity = _str(state.get("foreground_activity")).partition("/")
    if activity.startswith("."):
        activity = package + activity
    width = state.get("width")
    height = state.get("height")
    return assemble(
        _raw_views(views), source="droidbot",
        width=width if isinstance(width, int) else 0,
        height=height if isinstance(height, int) else 0,
        package=package, activity=activity,
    )


def parse_tree(data: str | bytes | Mapping[str, object] | Sequence[object]) -> UITree:
    """Parse any supported format, in memory: XML text, JSON text, or decoded JSON."""
    if isinstance(data, (str, bytes)):
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        stripped = text.lstrip()
        if not stripped.startswith(("{", "[")):
            return parse_uiautomator(data)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise HierarchyError(f"neither XML nor valid JSON: {exc}") from exc
    if isinstance(data, Mapping):
        return parse_droidbot_state(data)
    if isinstance(data, Sequence):
        return parse_view_list(data)
    raise HierarchyError(f"unsupported hierarchy value of type {type(data).__name__}")


def load_tree(path: str | Path) -> UITree:
    """Read a hierarchy file, sniffing its format from the content (not the extension)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise HierarchyError(f"cannot read {p}: {exc.strerror or exc}") from exc
    try:
        return parse_tree(data)
    except HierarchyError as exc:
        exc.filename = str(p)
        raise
