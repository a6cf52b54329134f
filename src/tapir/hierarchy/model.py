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
from functools import cached_property
from types import MappingProxyType

from lxml import etree

from tapir.core.errors import HierarchyError

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


def make_bounds(x1: int, y1: int, x2: int, y2: int) -> Bounds:
    """``Bounds(x1, y1, x2, y2)`` without the frozen dataclass ``__init__`` (four
    ``object.__setattr__`` calls); equal to it in every way."""
    b = object.__new__(Bounds)
    object.__setattr__(b, "__dict__", {"x1": x1, "y1": y1, "x2": x2, "y2": y2})
    return b


def _xml_bounds(value: str) -> Bounds:
    """``[x1,y1][x2,y2]`` (any other spelling ``Bounds.parse`` reads); ``ValueError`` otherwise."""
    parts = value[1:-1].split("][") if value[:1] == "[" and value[-1:] == "]" else ()
    if len(parts) == 2:
        a, _, b = parts[0].partition(",")
        c, _, d = parts[1].partition(",")
        try:
            return make_bounds(int(a), int(b), int(c), int(d))
        except ValueError:
            pass
    return Bounds.parse(value)


# uiautomator dumps have no "editable" attribute; accessibility reports every EditText subclass
# as android.widget.EditText, and these are the framework's other text-entry classes.
_EDITABLE_CLASSES = frozenset({
    "android.widget.AutoCompleteTextView",
    "android.widget.MultiAutoCompleteTextView",
    "android.widget.SearchView$SearchAutoComplete",
})


def editable_class(class_name: str) -> bool:
    """Whether a view of this class takes typed text (when the dump does not say)."""
    return class_name.endswith("EditText") or class_name in _EDITABLE_CLASSES


class UINode:
    """One view. Strings are never None ("" when absent); ``resource_id`` is the full id.

    It replaces a frozen dataclass and keeps its interface (fields, constructor, equality, hash,
    pickling). A node keeps its view's attributes as the dump spells them (``resource-id``,
    ``"true"``) in the dict the XML parser made, and decodes a field when it is read (bounds
    once): a parse makes one small object per view on top of the parser's dicts
    (``bench/step_speed.py``). ``UINode(...)`` writes that dict from typed values.

    Read-only: the decoded fields are properties (assigning one raises) and a node takes no new
    attributes; ``id``, ``parent`` and ``children`` are plain slots that must not be assigned
    (trees are shared between the screen cache and the grounder's views). They are not guarded
    by a ``__setattr__``, because the parser then could not fill them at the cost of a plain
    store: guarded, a parse cost 1.56x lxml's instead of 1.46x.
    """

    __slots__ = ("id", "parent", "children", "_a", "_up", "_b", "_path")

    #: the fields, in the order of the constructor's parameters
    FIELDS = ("id", "parent", "children", "path", "class_name", "resource_id", "text", "content_desc",
              "bounds", "package", "clickable", "long_clickable", "checkable", "checked", "selected",
              "scrollable", "editable", "focusable", "focused", "enabled", "visible", "password")

    id: int
    parent: int | None
    #: child ids in drawing order
    children: tuple[int, ...]
    #: the view's attributes, as ``uiautomator dump`` names and spells them
    _a: dict[str, str]
    #: the parent node (a parsed node's path is worked out from it when asked)
    _up: UINode | None
    #: the bounds once decoded (unset until then)
    _b: Bounds
    _path: tuple[int, ...]

    def __init__(
        self, id: int, parent: int | None, children: tuple[int, ...], path: tuple[int, ...], *,
        class_name: str = "", resource_id: str = "", text: str = "", content_desc: str = "",
        bounds: Bounds = EMPTY_BOUNDS, package: str = "", clickable: bool = False, long_clickable: bool = False,
        checkable: bool = False, checked: bool = False, selected: bool = False, scrollable: bool = False,
        editable: bool = False, focusable: bool = False, focused: bool = False, enabled: bool = True,
        visible: bool = True, password: bool = False,
    ) -> None:
        _init(self, id, parent, tuple(children), {
            "text": text, "resource-id": resource_id, "class": class_name, "package": package,
            "content-desc": content_desc, "checkable": _TF[checkable], "checked": _TF[checked],
            "clickable": _TF[clickable], "enabled": _TF[enabled], "focusable": _TF[focusable],
            "focused": _TF[focused], "scrollable": _TF[scrollable], "long-clickable": _TF[long_clickable],
            "password": _TF[password], "selected": _TF[selected], "bounds": str(bounds), "editable": _TF[editable],
            "visible-to-user": _TF[visible],
        }, None)
        self._b = bounds
        self._path = tuple(path)

    @classmethod
    def build(cls, values: Mapping[str, object]) -> UINode:
        """``UINode(**values)``: a node from a dict holding every field."""
        return cls(**values)  # type: ignore[arg-type]

    def attribute(self, name: str) -> str | None:
        """An attribute as the dump spells it (``"resource-id"``, ``"visible-to-user"``,
        ``"drawing-order"``...), None when the view does not have it."""
        return self._a.get(name)

    def _key(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, UINode):
            return NotImplemented
        return self.id == other.id and self.children == other.children and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = [f"id={self.id}", f"class_name={self.class_name!r}"]
        for name in ("resource_id", "text", "content_desc"):
            value = getattr(self, name)
            if value:
                shown.append(f"{name}={value!r}")
        shown.append(f"bounds={self.bounds}")
        return f"UINode({', '.join(shown)})"

    def __reduce__(self) -> tuple[object, ...]:
        fields = {name: getattr(self, name) for name in self.FIELDS[4:]}
        return _rebuild, (self.id, self.parent, self.children, self.path, fields)

    # -- fields decoded from the attributes ---------------------------------------------------

    @property
    def class_name(self) -> str:
        return self._a.get("class", "")

    @property
    def resource_id(self) -> str:
        return self._a.get("resource-id", "")

    @property
    def text(self) -> str:
        return self._a.get("text", "")

    @property
    def content_desc(self) -> str:
        return self._a.get("content-desc", "")

    @property
    def package(self) -> str:
        return self._a.get("package", "")

    @property
    def bounds(self) -> Bounds:
        try:
            return self._b
        except AttributeError:
            pass
        value = self._a.get("bounds")
        try:
            bounds = _xml_bounds(value) if value else EMPTY_BOUNDS
        except (ValueError, TypeError) as exc:
            # (read when asked, like every field: a dump whose one odd view is never looked
            # at still runs, and the error names the view when it is)
            raise HierarchyError(f"node {self.id}: unreadable bounds {value!r}") from exc
        self._b = bounds
        return bounds

    @property
    def clickable(self) -> bool:
        return self._a.get("clickable") == "true"

    @property
    def long_clickable(self) -> bool:
        return self._a.get("long-clickable") == "true"

    @property
    def checkable(self) -> bool:
        return self._a.get("checkable") == "true"

    @property
    def checked(self) -> bool:
        return self._a.get("checked") == "true"

    @property
    def selected(self) -> bool:
        return self._a.get("selected") == "true"

    @property
    def scrollable(self) -> bool:
        return self._a.get("scrollable") == "true"

    @property
    def editable(self) -> bool:
        value = self._a.get("editable")
        return editable_class(self._a.get("class", "")) if value is None else value == "true"

    @property
    def focusable(self) -> bool:
        return self._a.get("focusable") == "true"

    @property
    def focused(self) -> bool:
        return self._a.get("focused") == "true"

    @property
    def enabled(self) -> bool:
        return self._a.get("enabled") != "false"

    @property
    def visible(self) -> bool:
        """Dumps list only views visible to the user unless they say ``visible-to-user="false"``."""
        return self._a.get("visible-to-user") != "false"

    @property
    def password(self) -> bool:
        return self._a.get("password") == "true"

    # -- derived ----------------------------------------------------------------------------

    @property
    def path(self) -> tuple[int, ...]:
        """Positions of the node among its siblings, from the root down (the root is ``()``)."""
        try:
            return self._path
        except AttributeError:
            pass
        # a parsed node (nodes built from values are given their path)
        up = self._up
        path = () if up is None else (*up.path, up.children.index(self.id))
        self._path = path
        return path

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


_TF = {True: "true", False: "false"}


def _init(node: UINode, nid: int, parent: int | None, children: tuple[int, ...], attrs: dict[str, str],
          up: UINode | None) -> None:
    node.id = nid
    node.parent = parent
    node.children = children
    node._a = attrs
    node._up = up


def _rebuild(nid: int, parent: int | None, children: tuple[int, ...], path: tuple[int, ...],
             fields: dict[str, object]) -> UINode:
    return UINode(nid, parent, children, path, **fields)  # type: ignore[arg-type]


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
    #: the dump's XML (``<hierarchy>`` to ``</hierarchy>``) for a tree parsed from one: what
    #: ``document`` parses when asked
    xml: bytes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", MappingProxyType({n.id: n for n in self.nodes}))

    @property
    def document(self) -> etree._Element | None:
        """The dump as lxml reads it, for running ``uiautomator`` XPaths on the dump itself
        (parsed on first use, about what the dump's parse costs); None for a tree that was
        not parsed from uiautomator XML. ``node_of`` maps its ``<node>`` elements back."""
        return self._lxml[0]

    @cached_property
    def _lxml(self) -> tuple[etree._Element | None, dict[etree._Element, int]]:
        if self.xml is None:
            return None, {}
        root = etree.fromstring(self.xml, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True))
        # pre-order: the n-th <node> element is node n, as the parser numbered them. (A tuple
        # frees its items last to first, so the elements go before the root: lxml frees an
        # element by walking up to the first ancestor still held, at once while the root is;
        # the other way round a 10,000-view tree took 4x longer per view to free.)
        return root, {el: i for i, el in enumerate(root.iter("node"))}

    def node_of(self, element: etree._Element) -> UINode | None:
        """The node of a ``<node>`` element of ``document`` (an XPath hit), None for another element."""
        nid = self._lxml[1].get(element)
        return None if nid is None else self.nodes[nid]

    @property
    def document_ids(self) -> Mapping[etree._Element, int]:
        """``document``'s ``<node>`` elements -> the ids of their nodes (empty without a document)."""
        return self._lxml[1]

    def element_of(self, node_id: int) -> etree._Element | None:
        """The ``<node>`` element of ``document`` for a node id (None without a document)."""
        elements = self._elements
        return elements[node_id] if 0 <= node_id < len(elements) else None

    @cached_property
    def _elements(self) -> list[etree._Element]:
        return list(self._lxml[1])

    def xpath(self, expr: str) -> list[UINode]:
        """The nodes an XPath selects on the dump (``//node[@resource-id='...']``), in document
        order; attribute and text results select the element that holds them. Empty for a tree
        not parsed from uiautomator XML."""
        root = self.document
        if root is None:
            return []
        out: list[UINode] = []
        seen: set[int] = set()
        for item in root.xpath(expr):
            el = item if isinstance(item, etree._Element) else getattr(item, "getparent", lambda: None)()
            node = self.node_of(el) if el is not None else None
            if node is not None and node.id not in seen:
                seen.add(node.id)
                out.append(node)
        return out

    def values_index(self, *names: str) -> tuple[dict[str, list[int]], ...]:
        """For each attribute as the dump names it (``"resource-id"``, ``"text"``, ...): its
        non-empty values -> ids of the views that have them, in document order; all made in one
        pass over the views' attribute dicts (what indexing a screen costs: most views have no
        text, description or id, and are skipped)."""
        outs: tuple[dict[str, list[int]], ...] = tuple({} for _ in names)
        pairs = tuple(zip(names, outs, strict=True))
        for node in self.nodes:
            a = node._a
            for name, out in pairs:
                value = a.get(name)
                if value:
                    found = out.get(value)
                    if found is None:
                        out[value] = [node.id]
                    else:
                        found.append(node.id)
        return outs

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
