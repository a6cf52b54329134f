"""Upstream AutoDroid-V2's identifiers and element lookup, reproduced for comparison.

``upstream_identifiers`` builds an element's XPath queue from a node the way upstream's
``build_xpath_for_one_elementv2`` does (research notes 2.6), on the HTML rendering, including its
bug (the second XPath of the four-entry form tests a child ``alt`` with the text, so it never
matches) and its 50-character text cut. ``upstream_locate`` is upstream's lookup: XPaths shared
with another element of the screen are dropped, then the first XPath with any hit wins, and its
first hit is tapped, however many views it selects. ``bench/drift.py`` measures Tapir's cascade
against both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lxml import etree

from tapir.core.document import Dialect, Element, Identifier
from tapir.core.errors import DocumentError
from tapir.docgen.upstream import xpath_literal
from tapir.hierarchy import UINode
from tapir.runtime.grounding.identifiers import evaluate
from tapir.runtime.grounding.screen_view import ScreenView


def path_from_root(view: ScreenView, node_id: int) -> str | None:
    """``//FrameLayout/LinearLayout/.../button[3]``: lxml's path of the node's HTML element."""
    el = view.html.element(node_id)
    if el is None:
        return None
    return "/" + etree.ElementTree(view.html.root).getpath(el)


def upstream_identifiers(view: ScreenView, node_id: int) -> tuple[Identifier, ...]:
    """The XPath queue upstream would write for the node (empty if it is not in the HTML)."""
    el = view.html.element(node_id)
    if el is None:
        return ()
    rid = el.get("resource_id") or ""
    alt = el.get("alt") or ""
    # upstream reads the text with BeautifulSoup's get_text(strip=True): the element's and its
    # descendants' texts run together ("Max reminder duration5 minutes"), so on a container the
    # text() XPath it writes never matches
    text = "".join(t.strip() for t in el.itertext() if t.strip())
    path = path_from_root(view, node_id)
    r, a, t = (xpath_literal(v) for v in (rid, alt, text))
    if rid and alt and text:
        xpaths = [f"//*[@resource_id={r} and text()={t} and @alt={a}]",
                  f"//*[@resource_id={r} and alt={t}]",
                  f"//*[@resource_id={r} and text()={t}]",
                  f"//*[@resource_id={r}]"]
    elif rid and alt:
        xpaths = [f"//*[@resource_id={r} and @alt={a}]", f"//*[@resource_id={r}]"]
    elif rid and text:
        xpaths = [f"//*[@resource_id={r} and text()={t}]", f"//*[@resource_id={r}]"]
    elif rid:
        xpaths = [f"//*[@resource_id={r}]"]
    elif alt and text:
        xpaths = [f"//*[@alt={a} and text()={t}]", path or ""]
    elif alt:
        xpaths = [f"//*[@alt={a}]", path or ""]
    elif text:
        xpaths = [f"//*[text()={t}]", path or ""]
    else:
        xpaths = [path or ""]
    return tuple(Identifier(x, Dialect.HTML) for x in xpaths if x)


def unique_on_screen(element: Element, screen_elements: Iterable[Element]) -> list[Identifier]:
    """Upstream's ``get_unique_xpath_on_screen``: the element's XPaths no other element has."""
    others = {i.xpath for e in screen_elements if e.name != element.name for i in e.identifiers}
    return [i for i in element.identifiers if i.xpath not in others]


def first_hit(identifiers: Sequence[Identifier], view: ScreenView) -> tuple[UINode, int] | None:
    """The first hit of the first XPath that has one, with that XPath's position."""
    for index, identifier in enumerate(identifiers):
        try:
            hits = evaluate(identifier, view)
        except DocumentError:
            continue
        if hits:
            return hits[0], index
    return None


def upstream_locate(element: Element, view: ScreenView, screen_elements: Iterable[Element] = ()) -> UINode | None:
    """What upstream would tap for ``element`` on ``view`` (None: ``XPathError``)."""
    found = first_hit(unique_on_screen(element, screen_elements), view)
    return found[0] if found else None
