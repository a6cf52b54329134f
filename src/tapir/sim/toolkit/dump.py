"""Serialise a node tree the way ``uiautomator dump`` writes it.

Attribute order, the ``[l,t][r,b]`` bounds, ``index`` as the position among the parent's children,
self-closing leaves with `` />``, no whitespace between elements, and XmlSerializer's escaping
(newlines as ``&#10;``, characters beyond the BMP as numeric references) all follow the AOSP
``AccessibilityNodeInfoDumper``.
"""

from __future__ import annotations

import re

from tapir.sim.toolkit.tree import Node

HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


_SPECIAL = re.compile("[&<>\"\x00-\x1f\U00010000-\U0010ffff]")
_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def _replace(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    if ch in "\n\r\t" or ord(ch) > 0xFFFF:
        return f"&#{ord(ch)};"
    return ""  # other control characters are not allowed in XML 1.0; the real dumper drops them too


def _escape(value: str) -> str:
    return _SPECIAL.sub(_replace, value) if _SPECIAL.search(value) else value


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
