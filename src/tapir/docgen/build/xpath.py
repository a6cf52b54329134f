"""Evaluating document identifiers on recorded hierarchies, in both dialects.

``tapir docgen --update`` checks the identifiers of the document being updated against the new
traces, and the tests check that generated identifiers select what the builder's index says.
This mirrors what the runtime does (``tapir.runtime.grounding.identifiers.evaluate``): uiautomator
XPaths run on the tree written as ``uiautomator dump`` would write it, html XPaths on AutoDroid-V2's
rendering, and only visible nodes count. It is repeated here, in a few lines, because document
building sits below the runtime in the layers and must not import it.

    view = XPathView(tree)
    view.select(Identifier("//node[@resource-id='org.x:id/title']", Dialect.UIAUTOMATOR))  # [node ids]
"""

from __future__ import annotations

import copy
from functools import cached_property

from lxml import etree

from tapir.core.document import Dialect, Identifier
from tapir.hierarchy import HtmlView, UINode, UITree, html_view

_COMPILED: dict[str, etree.XPath | None] = {}


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _attributes(node: UINode) -> dict[str, str]:
    return {
        "index": str(node.path[-1] if node.path else 0), "text": node.text, "resource-id": node.resource_id,
        "class": node.class_name, "package": node.package, "content-desc": node.content_desc,
        "checkable": _flag(node.checkable), "checked": _flag(node.checked), "clickable": _flag(node.clickable),
        "enabled": _flag(node.enabled), "focusable": _flag(node.focusable), "focused": _flag(node.focused),
        "scrollable": _flag(node.scrollable), "long-clickable": _flag(node.long_clickable),
        "password": _flag(node.password), "selected": _flag(node.selected), "bounds": str(node.bounds),
    }


def compiled(expr: str) -> etree.XPath | None:
    if expr not in _COMPILED:
        try:
            _COMPILED[expr] = etree.XPath(expr)
        except etree.XPathSyntaxError:
            _COMPILED[expr] = None
    return _COMPILED[expr]


class XPathView:
    def __init__(self, tree: UITree) -> None:
        self.tree = tree

    @cached_property
    def _uia(self) -> tuple[etree._Element, dict[int, etree._Element], dict[etree._Element, int]]:
        root = etree.Element("hierarchy", rotation="0")
        element: dict[int, etree._Element] = {}
        node_of: dict[etree._Element, int] = {}
        for node in self.tree.nodes:
            parent = element[node.parent] if node.parent is not None else root
            el = etree.SubElement(parent, "node", _attributes(node))
            element[node.id] = el
            node_of[el] = node.id
        return root, element, node_of

    @cached_property
    def _html(self) -> HtmlView:
        return html_view(self.tree)

    def select(self, identifier: Identifier, within: int | None = None) -> list[int]:
        """Ids of the visible nodes the identifier selects (inside ``within``'s subtree, evaluated
        as a document of its own, when given); [] for an XPath that does not compile."""
        xpath = compiled(identifier.xpath)
        if xpath is None:
            return []
        if identifier.dialect is Dialect.HTML:
            html = self._html
            if within is None:
                context = html.root
            else:
                el = html.element(within)
                if el is None:
                    return []
                context = copy.deepcopy(el)

            def node_id(el: etree._Element) -> int | None:
                raw = el.get("id")
                return int(raw) if raw is not None and raw.isdigit() else None
        else:
            root, element, node_of = self._uia
            if within is None:
                context, mapping = root, node_of
            else:
                original = element.get(within)
                if original is None:
                    return []
                context = copy.deepcopy(original)
                mapping = {c: node_of[o] for o, c in zip(original.iter(), context.iter(), strict=True)}

            def node_id(el: etree._Element) -> int | None:
                return mapping.get(el)
        try:
            result = xpath(context)
        except etree.XPathEvalError:
            return []
        out: list[int] = []
        for item in result if isinstance(result, list) else []:
            el = item if isinstance(item, etree._Element) else getattr(item, "getparent", lambda: None)()
            nid = node_id(el) if el is not None else None
            if nid is not None and nid not in out:
                node = self.tree.get(nid)
                if node is not None and node.visible:
                    out.append(nid)
        return out
