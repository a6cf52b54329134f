"""Small hand-made screens and documents for the grounding tests.

``V(...)`` describes a view; ``screen(V(...))`` lays the views out (children stacked top to
bottom inside their parent) and parses the resulting ``uiautomator dump`` XML with the real
parser, so the trees are exactly what a device would give. ``doc(...)`` builds an app document
from ``el(...)`` elements, identifiers in the uiautomator dialect unless given as ``("html", x)``.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from tapir.core.document import AppDocument, AppInfo, Dialect, Element, Identifier, Screen, Signature
from tapir.dsl.api import Kind
from tapir.hierarchy import UINode, UITree, parse_uiautomator

PKG = "org.example.app"
WIDTH, HEIGHT = 1080, 2400


class V:
    """A view to lay out: class (short names get ``android.widget.``), children, attributes."""

    def __init__(self, cls: str = "FrameLayout", *kids: V, rid: str = "", text: str = "", desc: str = "",
                 clickable: bool = False, checkable: bool = False, checked: bool = False,
                 selected: bool = False, scrollable: bool = False, enabled: bool = True,
                 visible: bool = True) -> None:
        self.cls = cls if "." in cls else f"android.widget.{cls}"
        self.kids = kids
        self.rid = f"{PKG}:id/{rid}" if rid and ":" not in rid else rid
        self.text, self.desc = text, desc
        self.clickable, self.checkable, self.checked = clickable, checkable, checked
        self.selected, self.scrollable, self.enabled, self.visible = selected, scrollable, enabled, visible


def _b(v: bool) -> str:
    return "true" if v else "false"


def _xml(v: V, box: tuple[int, int, int, int], index: int, out: list[str], depth: int) -> None:
    x1, y1, x2, y2 = box
    attrs = {
        "index": str(index), "text": v.text, "resource-id": v.rid, "class": v.cls, "package": PKG,
        "content-desc": v.desc, "checkable": _b(v.checkable), "checked": _b(v.checked),
        "clickable": _b(v.clickable), "enabled": _b(v.enabled), "focusable": _b(v.clickable),
        "focused": "false", "scrollable": _b(v.scrollable), "long-clickable": "false", "password": "false",
        "selected": _b(v.selected), "bounds": f"[{x1},{y1}][{x2},{y2}]",
    }
    if not v.visible:
        attrs["visible-to-user"] = "false"
    head = "  " * depth + "<node " + " ".join(f"{k}={quoteattr(val)}" for k, val in attrs.items())
    if not v.kids:
        out.append(head + " />")
        return
    out.append(head + ">")
    step = max((y2 - y1) // len(v.kids), 2)
    for i, k in enumerate(v.kids):
        _xml(k, (x1 + 1, y1 + i * step + 1, x2 - 1, y1 + (i + 1) * step - 1), i, out, depth + 1)
    out.append("  " * depth + "</node>")


def screen(root: V) -> UITree:
    out = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>", '<hierarchy rotation="0">']
    _xml(root, (0, 0, WIDTH, HEIGHT), 0, out, 1)
    out.append("</hierarchy>")
    return parse_uiautomator("\n".join(out))


def find(tree: UITree, *, text: str | None = None, rid: str | None = None, desc: str | None = None,
         nth: int = 0) -> UINode:
    hits = [n for n in tree.nodes
            if (text is None or n.text == text) and (rid is None or n.resource_name == rid)
            and (desc is None or n.content_desc == desc)]
    return hits[nth]


def ident(x: str | tuple[str, str]) -> Identifier:
    if isinstance(x, tuple):
        return Identifier(x[1], Dialect(x[0]))
    return Identifier(x, Dialect.UIAUTOMATOR)


def el(name: str, kind: Kind | str, *identifiers: str | tuple[str, str], item_of: str | None = None,
       options: tuple[str, ...] = ()) -> Element:
    return Element(name, Kind(kind), f"the {name}", tuple(ident(i) for i in identifiers), options=options,
                   item_of=item_of)


def doc(*screens: tuple[str, Signature, tuple[Element, ...]] | tuple[str, tuple[Element, ...]]) -> AppDocument:
    built = []
    for s in screens:
        if len(s) == 3:
            name, sig, elements = s  # type: ignore[misc]
        else:
            name, elements = s  # type: ignore[misc]
            sig = Signature()
        built.append(Screen(name, f"the {name}", sig, tuple(elements)))
    return AppDocument(AppInfo(PKG, "app", built[0].name), tuple(built))


def rid(name: str) -> str:
    """A uiautomator XPath on a resource id."""
    return f"//node[@resource-id='{PKG}:id/{name}']"
