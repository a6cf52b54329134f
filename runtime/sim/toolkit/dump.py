"""Serialise a node tree the way ``uiautomator dump`` writes it.

Attribute order, the ``[l,t][r,b]`` bounds, ``index`` as the position among the parent's children,
self-closing leaves with `` />``, no whitespace between elements, and XmlSerializer's escaping
(newlines as ``&#10;``, characters beyond the BMP as numeric references) all follow the AOSP
``AccessibilityNodeInfoDumper``.
"""

from __future__ import annotations

from tapir.runtime.sim.toolkit.tree import Node

HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


def _escape(value: str) -> str:
    out = []
    for ch in value:
        code = ord(ch)
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == '"':
            out.append("&quot;")
        elif ch == "\n" or ch == "\r" or ch == "\t" or code > 0xFFFF:
            out.append(f"&#{code};")
        elif code < 0x20:
            continue  # not allowed in XML 1.0; the real dumper drops them too
        else:
            out.append(ch)
    return "".join(out)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _node(node: Node, index: int, out: list[str]) -> None:
    out.append(
        f'<node index="{index}" text="{_escape(node.text)}" resource-id="{_escape(node.resource_id)}" '
        f'class="{_escape(node.cls)}" package="{_escape(node.package)}" content-desc="{_escape(node.desc)}" '
        f'checkable="{_flag(node.checkable)}" checked="{_flag(node.checked)}" '
        f'clickable="{_flag(node.clickable)}" enabled="{_flag(node.enabled)}" '
        f'focusable="{_flag(node.focusable)}" focused="{_flag(node.focused)}" '
        f'scrollable="{_flag(node.scrollable)}" long-clickable="{_flag(node.long_clickable)}" '
        f'password="{_flag(node.password)}" selected="{_flag(node.selected)}" bounds="{node.bounds}"'
    )
    if not node.children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(node.children):
        _node(child, i if child.index is None else child.index, out)
    out.append("</node>")


def dump_xml(roots: list[Node], rotation: int = 0) -> str:
    """The XML document for the given window roots (normally one: the active window)."""
    out = [HEADER, f'<hierarchy rotation="{rotation}">']
    for i, root in enumerate(roots):
        _node(root, i, out)
    out.append("</hierarchy>")
    return "".join(out)
