"""One dump as the inspector shows it: the hierarchy, the document screen identified on it, and
where each of that screen's elements grounds, with how and with what score.

    state = screen_state(runtime, runtime.screen.observe())
    state.match.name                       # 'songs_screen'
    state.claims[node_id]                  # [Claim('songs_screen__song_list', 'identifier 0', 1.0)]
    state.to_json()                        # what the page receives (the ``screen`` message)

Everything here reads the runtime's groundings of the dump (``ScreenCache.ground``: asked once
per dump), so building a state costs what the REPL's ``:screen`` costs and never acts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tapir.hierarchy.model import UINode, UITree
from tapir.runtime.grounding.result import ScreenMatch
from tapir.runtime.screen_elements import ElementFound, describe_node, ground_screen
from tapir.runtime.session import DeviceRuntime
from tapir.runtime.settle import Observation

__all__ = ["Claim", "ScreenState", "node_at", "node_json", "receiver", "screen_state"]


@dataclass(frozen=True)
class Claim:
    """A document element grounded on a view: ``how`` is ``identifier 0``, ``fuzzy``, ``embedding``
    or, for a list's child element, ``in 3 of 9 items (identifier 0)``; ``item`` marks a list's item."""

    element: str
    how: str
    score: float | None
    item: bool = False


@dataclass
class ScreenState:
    """A dump and what the document makes of it (see the module docstring)."""

    obs: Observation
    match: ScreenMatch
    found: list[ElementFound]
    #: Node id -> the elements grounded on it.
    claims: dict[int, list[Claim]] = field(default_factory=dict)
    #: The screen's size in pixels (the root's bounds; the page scales its boxes by it).
    size: tuple[int, int] = (0, 0)
    #: Set when the screenshot of this dump is ready (the page asks for ``/api/shot/<seq>.png``).
    shot: bytes | None = None

    @property
    def seq(self) -> int:
        return self.obs.seq

    @property
    def tree(self) -> UITree:
        return self.obs.tree

    def to_json(self) -> dict[str, Any]:
        """The page's picture of this dump: views, screen, elements (grounded and not)."""
        elements = []
        absent = []
        for f in self.found:
            el = f.element
            info: dict[str, Any] = {"name": el.name, "kind": el.kind.value, "description": el.description,
                    "sensitive": el.sensitive, "item_of": el.item_of}
            if f.node is None:
                absent.append(info)
                continue
            info.update(how=f.how, score=f.score, node=f.node.id,
                        nodes=[n.id for n in f.nodes] if f.nodes else [f.node.id], items=f.items,
                        method=f.grounding.method if f.grounding is not None else None)
            elements.append(info)
        return {
            "seq": self.seq,
            "at": self.obs.at,
            "package": self.obs.package,
            "size": list(self.size),
            "screen": {"name": self.match.name, "score": round(self.match.score, 3),
                       "confident": self.match.confident,
                       "candidates": [[n, round(s, 3)] for n, s in self.match.candidates[:5]]},
            "nodes": [node_json(n, self.tree) for n in self.tree.nodes],
            "elements": elements,
            "absent": absent,
            "claims": {str(k): [c.element for c in v] for k, v in self.claims.items()},
        }


def node_json(node: UINode, tree: UITree) -> dict[str, Any]:
    """One view for the page: identity, place in the tree, what it shows and what it does."""
    b = node.bounds
    flags = [name for name, on in (("clickable", node.clickable), ("long-clickable", node.long_clickable),
                                   ("checkable", node.checkable), ("checked", node.checked),
                                   ("selected", node.selected), ("scrollable", node.scrollable),
                                   ("editable", node.editable), ("focused", node.focused),
                                   ("password", node.password), ("disabled", not node.enabled)) if on]
    return {"id": node.id, "parent": node.parent, "depth": node.depth, "cls": node.short_class,
            "rid": node.resource_name, "text": node.text, "desc": node.content_desc,
            "bounds": [b.x1, b.y1, b.x2, b.y2], "visible": node.visible, "flags": flags,
            "label": describe_node(node), "children": list(node.children)}


def screen_state(runtime: DeviceRuntime, obs: Observation) -> ScreenState:
    """The state of ``obs``: the screen identified on it and every element of that screen grounded."""
    match = runtime.grounder.identify_screen(obs.tree)
    found = ground_screen(runtime, obs, match.name) if match.name else []
    claims: dict[int, list[Claim]] = {}
    for f in found:
        if f.node is None or f.how is None:
            continue
        if f.element.is_list:
            claims.setdefault(f.node.id, []).append(Claim(f.element.name, f.how, f.score))
            for item in f.nodes:
                claims.setdefault(item.id, []).append(Claim(f.element.name, "item", None, item=True))
            continue
        for node in (f.nodes or (f.node,)):
            claims.setdefault(node.id, []).append(Claim(f.element.name, f.how, f.score))
    tree = obs.tree
    size = (tree.width, tree.height) if tree.width and tree.height else _extent(tree)
    return ScreenState(obs, match, found, claims, size)


def _extent(tree: UITree) -> tuple[int, int]:
    right = max((n.bounds.x2 for n in tree.nodes), default=0)
    bottom = max((n.bounds.y2 for n in tree.nodes), default=0)
    return right, bottom


def node_at(tree: UITree, x: int, y: int) -> UINode | None:
    """The view a touch at (x, y) lands on as a person sees it: the smallest visible view there
    (the deepest among equals)."""
    best: UINode | None = None
    for n in tree.nodes:
        if not n.visible or not n.bounds.area or not n.bounds.contains(x, y):
            continue
        if best is None or n.bounds.area < best.bounds.area or (
                n.bounds.area == best.bounds.area and n.depth > best.depth):
            best = n
    return best


def receiver(tree: UITree, node: UINode) -> UINode:
    """The view that receives a touch on ``node``: itself when it acts on touches (clickable,
    long-clickable, checkable or editable), else its nearest ancestor that does, else itself."""
    for n in (node, *tree.ancestors(node.id)):
        if n.clickable or n.long_clickable or n.checkable or n.editable:
            return n
    return node
