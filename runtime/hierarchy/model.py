"""The normalised UI hierarchy: one tree model for every dump format.

Parsers (uiautomator XML, DroidBot states, flat view lists) all produce a ``UITree`` of frozen
``UINode`` values. Node ids are stable within one dump: the DroidBot ``temp_id`` where the
source has one, otherwise the pre-order index (which is how DroidBot numbers views), so the
ids in upstream AutoDroid-V2 HTML and ours agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

_INTS = re.compile(r"-?\d+")


@dataclass(frozen=True, order=True)
class Bounds:
    """A screen rectangle in pixels; ``x2``/``y2`` are exclusive, as Android reports them."""

    x1: int
    y1: int
    x2: int
    y2: int

    @property
    def width(self) -> int:
        return max(self.x2 - self.x1, 0)

    @property
    def height(self) -> int:
        return max(self.y2 - self.y1, 0)

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def center(self) -> tuple[int, int]:
        return (self.x1 + self.x2) // 2, (self.y1 + self.y2) // 2

    def contains(self, x: int, y: int) -> bool:
        return self.x1 <= x < self.x2 and self.y1 <= y < self.y2

    def __str__(self) -> str:
        return f"[{self.x1},{self.y1}][{self.x2},{self.y2}]"

    @classmethod
    def parse(cls, value: object) -> Bounds:
        """Read any of the spellings found in dumps.

        ``"[0,0][1080,2400]"`` (uiautomator), ``[[0, 0], [1080, 2400]]`` (DroidBot),
        ``"0,0,1080,2400"`` (DroidBot ``bound_box``, LlamaTouch lists) or four numbers.
        """
        if isinstance(value, Bounds):
            return value
        if isinstance(value, str):
            numbers = [int(n) for n in _INTS.findall(value)]
        elif isinstance(value, Sequence):
            numbers = []
            for item in value:
                if isinstance(item, Sequence) and not isinstance(item, str):
                    numbers.extend(int(v) for v in item)
                else:
                    numbers.append(int(item))  # type: ignore[call-overload]
        else:
            numbers = []
        if len(numbers) != 4:
            raise ValueError(f"bounds must have four numbers, got {value!r}")
        return cls(*numbers)


EMPTY_BOUNDS = Bounds(0, 0, 0, 0)


@dataclass(frozen=True)
class UINode:
    """One view. Strings are never None ("" when absent); ``resource_id`` is the full id."""

    id: int
    parent: int | None
    children: tuple[int, ...]
    #: positions of the node among its siblings, from the root down (the root is ``()``)
    path: tuple[int, ...]
    class_name: str = ""
    resource_id: str = ""
    text: str = ""
    content_desc: str = ""
    bounds: Bounds = EMPTY_BOUNDS
    package: str = ""
    clickable: bool = False
    long_clickable: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    scrollable: bool = False
    editable: bool = False
    focusable: bool = False
    focused: bool = False
    enabled: bool = True
    visible: bool = True
    password: bool = False

    @classmethod
    def build(cls, values: dict[str, object]) -> UINode:
        """Make a node from a dict holding every field, skipping the generated ``__init__``.

        A frozen dataclass ``__init__`` sets each of the 22 fields through
        ``object.__setattr__`` (about 9 us a node); parsers build a thousand nodes per dump on
        every step, so they fill ``__dict__`` in one go instead. Equality and hashing are
        unaffected. ``values`` must hold exactly the dataclass fields.
        """
        node = object.__new__(cls)
        object.__setattr__(node, "__dict__", values)
        return node

    @property
    def short_class(self) -> str:
        """``android.widget.TextView`` -> ``TextView``."""
        return self.class_name.rsplit(".", 1)[-1]

    @property
    def resource_name(self) -> str:
        """The part of the resource id after ``/`` (what upstream documents call ``resource_id``)."""
        return self.resource_id.rsplit("/", 1)[-1]

    @property
    def center(self) -> tuple[int, int]:
        return self.bounds.center

    @property
    def depth(self) -> int:
        return len(self.path)


@dataclass(frozen=True)
class UITree:
    """A whole screen: nodes in pre-order, looked up by id."""

    nodes: tuple[UINode, ...]
    roots: tuple[int, ...]
    #: where it came from: ``uiautomator``, ``droidbot`` or ``views``
    source: str
    width: int = 0
    height: int = 0
    #: foreground package and activity when the dump records them (DroidBot states do)
    package: str = ""
    activity: str = ""
    _by_id: Mapping[int, UINode] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", MappingProxyType({n.id: n for n in self.nodes}))

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[UINode]:
        return iter(self.nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._by_id

    def node(self, node_id: int) -> UINode:
        """The node with this id; ``KeyError`` if the screen has none."""
        return self._by_id[node_id]

    def get(self, node_id: int) -> UINode | None:
        return self._by_id.get(node_id)

    @property
    def root(self) -> UINode | None:
        return self._by_id[self.roots[0]] if self.roots else None

    def children(self, node_id: int) -> list[UINode]:
        return [self._by_id[c] for c in self._by_id[node_id].children]

    def parent(self, node_id: int) -> UINode | None:
        p = self._by_id[node_id].parent
        return None if p is None else self._by_id[p]

    def ancestors(self, node_id: int) -> list[UINode]:
        """Parent first, root last."""
        out = []
        p = self._by_id[node_id].parent
        while p is not None:
            node = self._by_id[p]
            out.append(node)
            p = node.parent
        return out

    def descendants(self, node_id: int) -> list[UINode]:
        """The subtree below the node in pre-order, the node itself excluded."""
        out: list[UINode] = []
        stack = list(reversed(self._by_id[node_id].children))
        while stack:
            node = self._by_id[stack.pop()]
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    def leaves(self, node_id: int) -> list[UINode]:
        return [n for n in self.descendants(node_id) if not n.children]

    def find(self, predicate: Callable[[UINode], bool]) -> list[UINode]:
        return [n for n in self.nodes if predicate(n)]

    def inherits(self, node_id: int, flag: str) -> bool:
        """True if the node or any ancestor has ``flag`` set (clickable, checkable, ...).

        DroidBot and AutoDroid treat a label inside a clickable row as clickable itself.
        """
        node: UINode | None = self._by_id[node_id]
        while node is not None:
            if getattr(node, flag):
                return True
            node = None if node.parent is None else self._by_id[node.parent]
        return False

    def node_at(self, x: int, y: int) -> UINode | None:
        """The deepest visible node whose bounds contain the point (the last drawn wins)."""
        best: UINode | None = None
        for node in self.nodes:
            if node.visible and node.bounds.contains(x, y):
                if best is None or node.depth >= best.depth:
                    best = node
        return best


@dataclass
class RawNode:
    """What a parser knows about a node before the tree is assembled.

    ``attrs`` holds every ``UINode`` field except id, parent, children and path.
    """

    id: int
    parent: int | None
    children: list[int]
    attrs: dict[str, object]


def assemble(
    raw: Sequence[RawNode],
    *,
    source: str,
    width: int = 0,
    height: int = 0,
    package: str = "",
    activity: str = "",
) -> UITree:
    """Link raw nodes into a ``UITree``.

    Children come from each node's own child list, in order; a node that names a parent which
    does not list it (DroidBot child lists are sometimes truncated) is added to that parent's
    children in id order. A node listed by two parents stays with the first. Nodes without a
    parent are roots; a cycle is broken at its smallest id, which becomes a root.
    """
    by_id = {r.id: r for r in raw}
    owner: dict[int, int] = {}
    kids: dict[int, list[int]] = {r.id: [] for r in raw}
    for r in raw:
        for c in r.children:
            if c in by_id and c not in owner and c != r.id:
                owner[c] = r.id
                kids[r.id].append(c)
    for r in raw:
        if r.id not in owner and r.parent is not None and r.parent in by_id and r.parent != r.id:
            owner[r.id] = r.parent
            kids[r.parent].append(r.id)
            kids[r.parent].sort()

    nodes: list[UINode] = []
    seen: set[int] = set()
    roots: list[int] = []

    def walk(root: int) -> None:
        roots.append(root)
        # iterative pre-order walk; each entry is (id, parent, path)
        stack: list[tuple[int, int | None, tuple[int, ...]]] = [(root, None, ())]
        while stack:
            nid, parent, path = stack.pop()
            seen.add(nid)
            children = tuple(c for c in kids[nid] if c not in seen)
            nodes.append(UINode.build(
                {"id": nid, "parent": parent, "children": children, "path": path, **by_id[nid].attrs}
            ))
            for pos in range(len(children) - 1, -1, -1):
                stack.append((children[pos], nid, (*path, pos)))

    for r in raw:
        if r.id not in owner:
            walk(r.id)
    for r in sorted(raw, key=lambda r: r.id):
        if r.id not in seen:
            walk(r.id)
    if not width and nodes:
        root_bounds = nodes[0].bounds
        width, height = root_bounds.x2, root_bounds.y2
    return UITree(
        nodes=tuple(nodes), roots=tuple(roots), source=source,
        width=width, height=height, package=package, activity=activity,
    )
