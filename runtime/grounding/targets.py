"""Which node an element of a given kind acts on, starting from a node that matched.

A label that matched a button's text is usually a ``TextView`` inside the clickable row; the
button is the row. An input's label may sit next to the ``EditText``; a switch's text is beside
the ``Switch``. ``target`` maps the matched node to the node to act on, or, with
``strict=True`` (fuzzy and embedding candidates), refuses a node that cannot be that kind of
element at all, so a similar-looking static text is never taken for a button.
"""

from __future__ import annotations

from tapir.dsl.api import Kind
from tapir.runtime.grounding.screen_view import ScreenView
from tapir.runtime.hierarchy import UINode

_TAPPABLE = frozenset({Kind.BUTTON, Kind.TAB, Kind.CHECKBOX, Kind.SWITCH})


def target(view: ScreenView, node: UINode, kind: Kind, *, strict: bool) -> UINode | None:
    tree = view.tree
    if kind in _TAPPABLE:
        if kind in (Kind.CHECKBOX, Kind.SWITCH) and node.checkable:
            return node
        owner = view.clickable_owner(node.id)
        if owner is None:
            return None if strict else node
        if owner == node.id:
            return node
        return _reachable(view, tree.node(owner), node)
    if kind == Kind.INPUT:
        if node.editable:
            return node
        below = view.editable_below(node.id)
        if below is not None:
            return tree.node(below)
        return None if strict else node
    if kind == Kind.SCROLLER:
        owner = view.scrollable_owner(node.id)
        if owner is not None:
            return tree.node(owner)
        return None if strict else node
    if kind == Kind.LIST:
        if node.scrollable or node.children:
            return node
        owner = view.scrollable_owner(node.id)
        if owner is not None:
            return tree.node(owner)
        return None if strict else node
    return node


def _reachable(view: ScreenView, owner: UINode, node: UINode) -> UINode:
    """``owner`` if a tap on its centre reaches it, else the matched node (whose tap bubbles up).

    A clickable container can hold other clickable views; tapping its centre would hit one of
    them, so then the matched node is the safer place to tap.
    """
    if owner.bounds.area == 0:
        return owner
    hit = view.tree.node_at(*owner.center)
    if hit is None:
        return node
    return owner if view.clickable_owner(hit.id) == owner.id else node


def eligible(view: ScreenView, node: UINode, kind: Kind) -> bool:
    """Whether ``node`` can stand for an element of ``kind`` (``target(strict=True)`` is not None),
    without the tap-reachability check, so it is cheap enough for every candidate."""
    if kind in _TAPPABLE:
        return (kind in (Kind.CHECKBOX, Kind.SWITCH) and node.checkable) or view.clickable_owner(node.id) is not None
    if kind == Kind.INPUT:
        return node.editable or view.editable_below(node.id) is not None
    if kind == Kind.SCROLLER:
        return view.scrollable_owner(node.id) is not None
    if kind == Kind.LIST:
        return node.scrollable or bool(node.children) or view.scrollable_owner(node.id) is not None
    return True


def target_key(view: ScreenView, node: UINode, kind: Kind) -> int:
    """A cheap identity of the thing a tap on ``node`` acts on, for counting distinct hits."""
    if kind in _TAPPABLE:
        owner = view.clickable_owner(node.id)
        return owner if owner is not None else node.id
    if kind == Kind.SCROLLER:
        owner = view.scrollable_owner(node.id)
        return owner if owner is not None else node.id
    if kind == Kind.INPUT and not node.editable:
        below = view.editable_below(node.id)
        return below if below is not None else node.id
    return node.id
