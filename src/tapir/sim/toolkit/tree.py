"""Laid-out views: rectangles, nodes with real bounds, clipping and hit-testing.

A ``Node`` is what a phone's accessibility tree holds for one view: class, resource id, texts,
flags and on-screen bounds. The uiautomator dump, the wireframe renderer and touch dispatch all
work on the same node tree, so what a script sees is exactly what it can tap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from tapir.sim.toolkit.widgets import Handler, Input, Widget


class Rect(NamedTuple):
    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    @property
    def center(self) -> tuple[int, int]:
        return ((self.left + self.right) // 2, (self.top + self.bottom) // 2)

    @property
    def empty(self) -> bool:
        return self.right <= self.left or self.bottom <= self.top

    def contains(self, x: int, y: int) -> bool:
        # Android hit-tests with the right and bottom edges excluded.
        return self.left <= x < self.right and self.top <= y < self.bottom

    def intersect(self, other: Rect) -> Rect:
        return Rect(max(self.left, other.left), max(self.top, other.top),
                    min(self.right, other.right), min(self.bottom, other.bottom))

    def __str__(self) -> str:
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"


@dataclass(eq=False)
class Node:
    """One view on screen. Behaviour fields (handlers, input, scrolling) never reach the dump."""

    cls: str
    bounds: Rect
    resource_id: str = ""
    text: str = ""
    desc: str = ""
    package: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    children: list[Node] = field(default_factory=list)
    # -- behaviour
    on_tap: Handler | None = None
    on_long_tap: Handler | None = None
    input: Input | None = None
    #: Items of the popup a tap opens (the toolbar's ``More options``).
    popup: tuple[Widget, ...] | None = None
    scroll_key: str | None = None
    scroll_max: int = 0
    #: Render hint: the text style (``title``, ``body``...) or a role (``button``, ``dim``).
    style: str = ""
    #: The ``index`` to dump when it is not the position among the dumped siblings (a recorded tree
    #: whose invisible siblings are left out keeps the original numbering, as the real dumper does).
    index: int | None = None

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def find(self, pred: Callable[[Node], bool]) -> Node | None:
        return next((n for n in self.walk() if pred(n)), None)

    def find_all(self, pred: Callable[[Node], bool]) -> list[Node]:
        return [n for n in self.walk() if pred(n)]


def by_id(root: Node, short_id: str) -> list[Node]:
    """Nodes whose resource id ends with ``:id/<short_id>`` (tests and tools use short ids)."""
    suffix = f":id/{short_id}"
    return root.find_all(lambda n: n.resource_id.endswith(suffix))


def clip(node: Node, rect: Rect) -> Node | None:
    """Cut ``node`` (in place) to ``rect``; views entirely outside are dropped, as the dumper does."""
    visible = node.bounds.intersect(rect)
    if visible.empty:
        return None
    node.bounds = visible
    node.children = [c for c in (clip(child, visible) for child in node.children) if c is not None]
    return node


def translate(node: Node, dy: int) -> Node:
    return replace(
        node,
        bounds=Rect(node.bounds.left, node.bounds.top + dy, node.bounds.right, node.bounds.bottom + dy),
        children=[translate(c, dy) for c in node.children],
    )


def touch_target(root: Node, x: int, y: int, *, long: bool = False) -> Node | None:
    """The view that receives a touch at (x, y): the deepest clickable view under the point.

    Children drawn later lie on top, so they are tried first; a view that is not clickable passes
    the touch to its parent, like Android's dispatch. A disabled clickable view still swallows the
    touch (the caller then does nothing).
    """

    def accepts(n: Node) -> bool:
        return n.long_clickable if long else n.clickable

    def visit(n: Node) -> Node | None:
        if not n.bounds.contains(x, y):
            return None
        for child in reversed(n.children):
            hit = visit(child)
            if hit is not None:
                return hit
        return n if accepts(n) else None

    return visit(root)


def scroll_target(root: Node, x: int, y: int) -> Node | None:
    """The innermost scrollable view under (x, y)."""
    found = None
    for n in root.walk():
        if n.scroll_key is not None and n.bounds.contains(x, y):
            found = n
    return found
