"""Readers for the three hierarchy formats found in the wild.

* ``uiautomator dump`` XML (``<hierarchy><node .../></hierarchy>``), what a device gives us;
* a DroidBot state (``{"views": [...], "foreground_activity": ..., "width": ...}``), what
  DroidTask and AutoDroid recordings hold;
* a bare view list (DroidBot ``.vh`` files, LlamaTouch lists whose bounds are strings).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeGuard
from xml.parsers import expat

from tapir.core.errors import HierarchyError
from tapir.hierarchy.model import (
    EMPTY_BOUNDS,
    Bounds,
    RawNode,
    UINode,
    UITree,
    assemble,
    editable_class,
)

_XML_START = re.compile(rb"<\?xml|<hierarchy")


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


_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _utf8(data: bytes) -> bytes:
    """A dump's bytes as UTF-8. A dump saved through a Windows shell (PowerShell's ``>``) is UTF-16
    with a byte-order mark, whatever its XML declaration says; Android itself writes UTF-8."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return _declared_utf8(data.decode(codec, "replace").encode("utf-8"))
    if len(data) > 1 and data[1] == 0 and data[0] != 0:  # UTF-16 LE without a mark: '<\0?\0...'
        return _declared_utf8(data.decode("utf-16-le", "replace").encode("utf-8"))
    return data


def _declared_utf8(data: bytes) -> bytes:
    """Transcoded bytes whose XML declaration may still name their old encoding: it goes (expat
    reads UTF-8 without one)."""
    if data.startswith(b"<?xml"):
        end = data.find(b"?>")
        if end > 0 and not re.search(rb"encoding=['\"]utf-?8['\"]", data[:end], re.IGNORECASE):
            return data[end + 2:].lstrip()
    return data


def parse_uiautomator(xml: str | bytes) -> UITree:
    """Parse ``uiautomator dump`` output.

    Anything before the XML (``UI hierchary dumped to: ...`` when dump and cat share a shell)
    and after ``</hierarchy>`` is ignored. Ids are pre-order indices of ``<node>`` elements,
    which is how DroidBot numbers the same views. Dumps list only views visible to the user
    unless they carry ``visible-to-user="false"``.

    expat hands over each element's attributes as a dict, made in C; a node keeps that dict
    and decodes its fields when they are read (``UINode``), so the parse is expat plus one small
    object per view, about 1.4x ``lxml.etree.fromstring`` on the same bytes, and reading every
    field of every view afterwards costs a tenth of that (an lxml-backed tree parsed faster
    but made grounding pay 2 ms a screen to read attributes back). ``tree.document`` gives the
    dump as lxml reads it, for XPaths, when one is needed.
    """
    # (a lone surrogate cannot come from a device, whose output is decoded with "replace": same here)
    data = xml.encode("utf-8", "replace") if isinstance(xml, str) else _utf8(xml)
    m = _XML_START.search(data)
    if m is None:
        raise HierarchyError("not a uiautomator dump: no <hierarchy> element")
    end = data.rfind(b"</hierarchy>")
    stop = end + len("</hierarchy>") if end > m.start() else len(data)
    # (a dump is a few hundred KB: copying it costs page faults, so only when there is a banner)
    body = data if m.start() == 0 and stop == len(data) else data[m.start():stop]

    nodes: list[UINode] = []
    roots: list[int] = []
    add = nodes.append
    # the open elements: a node, or None for <hierarchy> (and at the bottom of the stack)
    stack: list[UINode | None] = [None]
    push = stack.append
    # children are gathered in lists and frozen into tuples at the end
    kids: dict[int, list[int]] = {}
    new = object.__new__

    def start(name: str, attrs: dict[str, str]) -> None:
        if name != "node":
            if len(stack) == 1 and not nodes and name != "hierarchy":
                raise HierarchyError(f"not a uiautomator dump: root element is <{name}>")
            push(None)
            return
        up = stack[-1]
        nid = len(nodes)
        node = new(UINode)
        node.id = nid
        node._a = attrs
        node._up = up
        node.children = ()
        if up is None:
            node.parent = None
            roots.append(nid)
        else:
            upid = node.parent = up.id
            siblings = kids.get(upid)
            if siblings is None:
                kids[upid] = [nid]
            else:
                siblings.append(nid)
        add(node)
        push(node)

    parser = expat.ParserCreate()
    parser.StartElementHandler = start
    parser.EndElementHandler = lambda name: stack.pop()
    try:
        parser.Parse(body, True)
    except (expat.ExpatError, LookupError) as exc:  # LookupError: an encoding Python does not know
        mangled = b">`n<" in body  # PowerShell writes `n where the dump had a line break
        raise HierarchyError(f"malformed uiautomator dump: {exc}" + (
            " (the file holds PowerShell's `n where its line breaks were: it was rewritten on the way from "
            "the phone; save it with `adb pull` or `adb exec-out uiautomator dump /dev/tty` instead)"
            if mangled else "")) from exc
    for nid, children in kids.items():
        nodes[nid].children = tuple(children)
    width = max((nodes[r].bounds.x2 for r in roots), default=0)
    height = max((nodes[r].bounds.y2 for r in roots), default=0)
    return UITree(nodes=tuple(nodes), roots=tuple(roots), source="uiautomator", width=width, height=height,
                  xml=body)


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
        "editable": _flag(editable, editable_class(class_name)),
        "focusable": _flag(_pick(view, "focusable")),
        "focused": _flag(_pick(view, "focused")),
        "enabled": _flag(_pick(view, "enabled"), True),
        "visible": _flag(_pick(view, "visible", "visible-to-user"), True),
        "password": _flag(_pick(view, "is_password", "password")),
    }


def _is_int(value: object) -> TypeGuard[int]:
    # JSON's true and false are Python bools, which are ints: a view id of `true` named view 1
    # and broke the HTML view's ids
    return isinstance(value, int) and not isinstance(value, bool)


def _raw_views(views: Sequence[object]) -> list[RawNode]:
    raw = []
    for pos, view in enumerate(views):
        if not isinstance(view, Mapping):
            raise HierarchyError(f"view {pos} is not an object")
        vid = view.get("temp_id", pos)
        parent = view.get("parent")
        children = view.get("children") or []
        if not _is_int(vid) or not isinstance(children, list):
            raise HierarchyError(f"view {pos}: bad temp_id or children")
        raw.append(RawNode(
            vid,
            parent if _is_int(parent) and parent >= 0 else None,
            [c for c in children if _is_int(c)],
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
        width=width if _is_int(width) else 0,
        height=height if _is_int(height) else 0,
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
        except RecursionError:  # the decoder's own bound on nesting
            raise HierarchyError("the JSON is nested too deep to be a view hierarchy") from None
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
