"""Which node an element of a given kind acts on, starting from a node that matched.

A label that matched a button's text is usually a ``TextView`` inside the clickable row; the
button is the row. An input's label may sit next to the ``EditText``; a switch's text is beside
the ``Switch``. ``target`` maps the matched node to the node to act on, or, with
``strict=True`` (fuzzy and embedding candidates), refuses a node that cannot be that kind of
element at all, so a similar-looking static text is never taken for a button, nor a button for
a checkbox or a checkbox for a button (``eligible`` says the same for every candidate).
"""

from __future__ import annotations

from tapir.dsl.api import Kind
from tapir.hierarchy import UINode
from tapir.runtime.grounding.items import ADAPTER_VIEWS, SCROLL_VIEWS
from tapir.runtime.grounding.screen_view import ScreenView

_TAPPABLE = frozenset({Kind.BUTTON, Kind.TAB, Kind.CHECKBOX, Kind.SWITCH})
_TOGGLES = frozenset({Kind.CHECKBOX, Kind.SWITCH})


def target(view: ScreenView, node: UINode, kind: Kind, *, strict: bool) -> UINode | None:
    tree = view.tree
    if kind in _TAPPABLE:
        if kind in _TOGGLES:
            if node.checkable:
                return node
            # a settings row found for its switch: the switch is the element (its state is the
            # element's state; a tap on it reaches the row when the row takes the taps)
            inner = [d for d in tree.descendants(node.id) if d.checkable and d.visible]
            if len(inner) == 1:
                return inner[0]
        owner = view.clickable_owner(node.id)
        if owner is None:
            return None if strict else node
        if strict and not _role_fits(view, tree.node(owner), kind):
            return None
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
        if list_like(node) or (node.children and not strict):
            return node
        if strict and _button_like(view, node):
            return None  # a tab or a button that shows the list's name is not the list
        if node.children:
            return node
        owner = view.scrollable_owner(node.id)
        if owner is not None:
            return tree.node(owner)
        return None if strict else node
    return node


def _button_like(view: ScreenView, node: UINode) -> bool:
    """Clickable, with at most one child, a leaf (its label): a button or a tab, not a row or a
    container of rows."""
    if not (node.clickable or node.long_clickable) or len(node.children) > 1:
        return False
    return not node.children or not view.tree.node(node.children[0]).children


#: Classes whose children are a list's rows, or that scroll content (``items.item_nodes``).
LIST_CLASSES = ADAPTER_VIEWS + SCROLL_VIEWS


def list_like(node: UINode) -> bool:
    """A view that holds a list: it scrolls, or its class is a list's or a scroll view's."""
    return node.scrollable or node.short_class.endswith(LIST_CLASSES)


def _reachable(view: ScreenView, owner: UINode, node: UINode) -> UINode:
    """``owner`` if a tap on its centre reaches it, else the matched node (whose tap bubbles up).

    A clickable container can hold other clickable views; tapping its centre would hit one of
    them, so then the matched node is the safer place to tap.
    """
    if owner.bounds.area == 0:
        return owner
    x, y = owner.center
    return owner if _receiver(view, x, y) == owner.id else node


def _receiver(view: ScreenView, x: int, y: int) -> int | None:
    """The clickable view a touch at (x, y) reaches, as Android dispatches it: from the root
    down through the views that contain the point, children drawn later first, to the deepest
    clickable one (only the views on the way are looked at, not the whole screen)."""
    tree = view.tree
    by = tree.node

    def visit(nid: int) -> int | None:
        n = by(nid)
        if not n.visible or not n.bounds.contains(x, y):
            return None
        for c in reversed(n.children):
            hit = visit(c)
            if hit is not None:
                return hit
        return nid if (n.clickable or n.long_clickable) else None

    for root in reversed(tree.roots):
        found = visit(root)
        if found is not None:
            return found
    return None


def _role_fits(view: ScreenView, owner: UINode, kind: Kind) -> bool:
    """Whether tapping ``owner`` does what an element of ``kind`` does: a checkbox or a switch
    toggles (the view is checkable, or a row holding one); a button or a tab is not a toggle.
    Similarity guesses are held to this: a look-alike of another role (an item's "Delete" button
    for its checkbox) is never taken."""
    if kind in _TOGGLES:
        return owner.checkable or view.holds_checkable(owner.id)
    if kind in (Kind.BUTTON, Kind.TAB):
        return not owner.checkable
    return True


def eligible(view: ScreenView, node: UINode, kind: Kind) -> bool:
    """Whether ``node`` can stand for an element of ``kind`` (``target(strict=True)`` is not None),
    without the tap-reachability check, so it is cheap enough for every candidate."""
    if kind in _TAPPABLE:
        if kind in _TOGGLES and node.checkable:
            return True
        owner = view.clickable_owner(node.id)
        return owner is not None and _role_fits(view, view.tree.node(owner), kind)
    if kind == Kind.INPUT:
        return node.editable or view.editable_below(node.id) is not None
    if kind == Kind.SCROLLER:
        return view.scrollable_owner(node.id) is not None
    if kind == Kind.LIST:
        if list_like(node):
            return True
        if _button_like(view, node):
            return False
        return bool(node.children) or view.scrollable_owner(node.id) is not None
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
