"""The elements of the screen showing, grounded, and views described in a few words: what the
REPL's ``:screen`` and the inspector show.

    found = ground_screen(runtime, runtime.screen.observe(), "songs_screen")
    [(f.element.name, f.how, f.score) for f in found]     # ('songs_screen__song_list', 'identifier 0', 1.0)
    describe_node(node)                                    # 'Button #search "Search"'

Groundings are the runtime's (``ScreenCache.ground``: asked once per dump), so looking costs
what a read costs and never acts. A list's child elements are grounded in every item in view.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.core.document import AppDocument, Element
from tapir.core.errors import TapirError
from tapir.hierarchy.model import UINode
from tapir.runtime.grounding.result import Grounding
from tapir.runtime.session import DeviceRuntime
from tapir.runtime.session_model import how_grounded
from tapir.runtime.settle import Observation

__all__ = ["ElementFound", "describe_node", "ground_screen"]

_LABEL_WIDTH = 40


def describe_node(node: UINode) -> str:
    """One view in a few words: ``Button #search "Search"``, ``ImageView desc='More options'``."""
    parts = [node.short_class or "View"]
    if node.resource_name:
        parts.append(f"#{node.resource_name}")
    if node.text:
        parts.append(_quoted(node.text))
    if node.content_desc and node.content_desc != node.text:
        parts.append(f"desc={_quoted(node.content_desc)}")
    flags = [name for name, on in (("clickable", node.clickable), ("scrollable", node.scrollable),
                                   ("editable", node.editable), ("checked", node.checked),
                                   ("selected", node.selected), ("disabled", not node.enabled)) if on]
    if flags:
        parts.append("[" + ",".join(flags) + "]")
    return " ".join(parts)


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _LABEL_WIDTH:
        text = text[: _LABEL_WIDTH - 3] + "..."
    return repr(text)


@dataclass(frozen=True)
class ElementFound:
    """How one element of the screen showed on the dump."""

    element: Element
    #: ``identifier 0``, ``fuzzy``...; ``in 3 of 9 items`` for a list's child element; None: absent.
    how: str | None
    node: UINode | None = None
    #: For a list: the items in view.
    items: int | None = None
    #: The grounder's answer (for a list's child element: in the first item where it shows).
    grounding: Grounding | None = None
    #: A list's items in view; a child element's node in each item where it shows.
    nodes: tuple[UINode, ...] = ()

    @property
    def score(self) -> float | None:
        return self.grounding.score if self.grounding is not None else None


def ground_screen(runtime: DeviceRuntime, obs: Observation, screen: str) -> list[ElementFound]:
    """Every element of ``screen`` grounded on ``obs`` (the runtime's groundings, cached per dump)."""
    document: AppDocument = runtime.document
    found: list[ElementFound] = []
    scr = document.screen(screen)
    if scr is None:
        return found
    lists: dict[str, list[UINode]] = {}
    for el in scr.elements:
        if el.item_of:
            found.append(_child_found(runtime, obs, el, lists))
            continue
        g: Grounding | None = runtime.screen.ground(el.name, obs)
        if g is None:
            found.append(ElementFound(el, None))
            continue
        items = None
        if el.is_list:
            try:
                lists[el.name] = runtime.grounder.items(el.name, obs.tree)
            except TapirError:
                lists[el.name] = []
            items = len(lists[el.name])
        found.append(ElementFound(el, how_grounded(g), g.node, items, g, tuple(lists.get(el.name, ()))))
    return found


def _child_found(runtime: DeviceRuntime, obs: Observation, el: Element, lists: dict[str, list[UINode]]
                 ) -> ElementFound:
    assert el.item_of is not None
    items = lists.get(el.item_of)
    if items is None:
        try:
            items = runtime.grounder.items(el.item_of, obs.tree)
        except TapirError:
            items = []
        lists[el.item_of] = items
    hits = [g for item in items if (g := runtime.grounder.child(el.item_of, el.name, item, obs.tree)) is not None]
    if not hits:
        return ElementFound(el, None)
    return ElementFound(el, f"in {len(hits)} of {len(items)} items ({how_grounded(hits[0])})", hits[0].node,
                        grounding=hits[0], nodes=tuple(g.node for g in hits))


