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
from typing import Any

from lxml import etree
from tapir.dsl.errors import HierarchyError

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


#: what ``uiautomator dump`` calls each field: a node reads its fields from the dump's element
_KEYS: Mapping[str, str] = MappingProxyType({
    "class_name": "class", "resource_id": "resource-id", "text": "text", "content_desc": "content-desc",
    "package": "package", "clickable": "clickable", "long_clickable": "long-clickable",
    "checkable": "checkable", "checked": "checked", "selected": "selected", "scrollable": "scrollable",
    "editable": "editable", "focusable": "focusable", "focused": "focused", "enabled": "enabled",
    "visible": "visible-to-user", "password": "password",
})

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

    Read-only, like the frozen dataclass it replaces (same fields, constructor, equality and
    hash). A node stands on its view's element in the dump, as lxml parsed it (``element``),
    and reads a field from it when asked (bounds are decoded once): a parse is lxml's parse
    plus one small object per view (``bench/step_speed.py``). ``UINode(...)`` makes the
    element from typed values, in the dump's spelling (``resource-id``, ``"true"``).
    """

    __slots__ = ("id", "parent", "children", "_e", "_s", "_f", "_b", "_path")

    #: the fields, in the order of the constructor's parameters
    FIELDS = ("id", "parent", "children", "path", "class_name", "resource_id", "text", "content_desc",
              "bounds", "package", "clickable", "long_clickable", "checkable", "checked", "selected",
              "scrollable", "editable", "focusable", "focused", "enabled", "visible", "password")

    id: int
    parent: int | None
    #: child ids in drawing order
    children: tuple[int, ...]
    #: the view's element, or for a node built from values a dict of the same attributes
    _e: etree._Element | dict[str, str]
    # the fields grounding reads most, fetched from the element together on first use (an
    # lxml attribute read makes a new string each time): None until then
    _s: tuple[str, str, str, str] | None  # class, resource-id, text, content-desc
    _f: tuple[bool, bool, bool, bool, bool, bool, bool] | None  # see _flags
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
        # No element yet (an lxml element of 18 attributes costs more than the rest of the node):
        # the fields wait in a dict of the dump's spelling, which reads like one (``get``), and
        # ``element`` makes the element the first time it is asked for.
        _init(self, id, parent, tuple(children), {
            "text": text, "resource-id": resource_id, "class": class_name, "package": package,
            "content-desc": content_desc, "checkable": _TF[checkable], "checked": _TF[checked],
            "clickable": _TF[clickable], "enabled": _TF[enabled], "focusable": _TF[focusable],
            "focused": _TF[focused], "scrollable": _TF[scrollable], "long-clickable": _TF[long_clickable],
            "password": _TF[password], "selected": _TF[selected], "bounds": str(bounds), "editable": _TF[editable],
            "visible-to-user": _TF[visible],
        })
        _set_strings(self, (class_name, resource_id, text, content_desc))
        _set_flags(self, (clickable, checkable, scrollable, visible, checked, selected, enabled))
        _set_bounds(self, bounds)
        _set_path(self, tuple(path))

    @classmethod
    def build(cls, values: Mapping[str, object]) -> UINode:
        """``UINode(**values)``: a node from a dict holding every field."""
        return cls(**values)  # type: ignore[arg-type]

    @property
    def element(self) -> etree._Element:
        """The view's ``<node>`` element: the dump's own for a parsed node (XPath works on its
        tree, ``element.getroottree()``), a detached one for a node built from values.
        Treat it as read-only: the node reads its fields from it."""
        found = self._e
        if isinstance(found, dict):
            found = etree.Element("node", {key: _xml_text(value) for key, value in found.items()})
            _set_element(self, found)
        return found

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"UINode is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"UINode is read-only: cannot delete {name!r}")

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

    # -- fields read from the dump's element --------------------------------------------------

    def _strings(self) -> tuple[str, str, str, str]:
        get = self._e.get
        found = (get("class", ""), get("resource-id", ""), get("text", ""), get("content-desc", ""))
        _set_strings(self, found)
        return found

    def _flags(self) -> tuple[bool, bool, bool, bool, bool, bool, bool]:
        get = self._e.get
        found = (get("clickable") == "true", get("checkable") == "true", get("scrollable") == "true",
                 get("visible-to-user") != "false", get("checked") == "true", get("selected") == "true",
                 get("enabled") != "false")
        _set_flags(self, found)
        return found

    @property
    def class_name(self) -> str:
        f = self._s
        return (f if f is not None else self._strings())[0]

    @property
    def resource_id(self) -> str:
        f = self._s
        return (f if f is not None else self._strings())[1]

    @property
    def text(self) -> str:
        f = self._s
        return (f if f is not None else self._strings())[2]

    @property
    def content_desc(self) -> str:
        f = self._s
        return (f if f is not None else self._strings())[3]

    @property
    def package(self) -> str:
        return self._e.get("package", "")

    @property
    def bounds(self) -> Bounds:
        try:
            return self._b
        except AttributeError:
            pass
        value = self._e.get("bounds")
        try:
            bounds = _xml_bounds(value) if value else EMPTY_BOUNDS
        except (ValueError, TypeError) as exc:
            # (read when asked, like every field: a dump whose one odd view is never looked
            # at still runs, and the error names the view when it is)
            raise HierarchyError(f"node {self.id}: unreadable bounds {value!r}") from exc
        _set_bounds(self, bounds)
        return bounds

    @property
    def clickable(self) -> bool:
        f = self._f
        return (f if f is not None else self._flags())[0]

    @property
    def long_clickable(self) -> bool:
        return self._e.get("long-clickable") == "true"

    @property
    def checkable(self) -> bool:
        f = self._f
        return (f if f is not None else self._flags())[1]

    @property
    def checked(self) -> bool:
        f = self._f
        return (f if f is not None else self._flags())[4]

    @property
    def selected(self) -> bool:
        f = self._f
        return (f if f is not None else self._flags())[5]

    @property
    def scrollable(self) -> bool:
        f = self._f
        return (f if f is not None else self._flags())[2]

    @property
    def editable(self) -> bool:
        value = self._e.get("editable")
        return editable_class(self.class_name) if value is None else value == "true"

    @property
    def focusable(self) -> bool:
        return self._e.get("focusable") == "true"

    @property
    def focused(self) -> bool:
        return self._e.get("focused") == "true"

    @property
    def enabled(self) -> bool:
        f = self._f
        return (f if f is not None else self._flags())[6]

    @property
    def visible(self) -> bool:
        """Dumps list only views visible to the user unless they say ``visible-to-user="false"``."""
        f = self._f
        return (f if f is not None else self._flags())[3]

    @property
    def password(self) -> bool:
        return self._e.get("password") == "true"

    # -- derived ----------------------------------------------------------------------------

    @property
    def path(self) -> tuple[int, ...]:
        """Positions of the node among its siblings, from the root down (the root is ``()``)."""
        try:
            return self._path
        except AttributeError:
            pass
        # a parsed node: its place in the dump (nodes built from values are given their path)
        steps = []
        el = self.element
        up = el.getparent()
        while up is not None and up.tag == "node":
            steps.append(up.index(el))
            el, up = up, up.getparent()
        path = tuple(reversed(steps))
        _set_path(self, path)
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


_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: object) -> str:
    """A string an XML attribute can hold: the characters XML forbids (which no dump can
    contain, but a recorded DroidBot state can) are dropped."""
    text = str(value)
    return _XML_INVALID.sub("", text) if _XML_INVALID.search(text) else text


# Writing a node's slots past the read-only ``__setattr__``: the slot descriptors themselves.
def _slot_setter(name: str) -> Callable[[UINode, Any], None]:
    setter: Callable[[UINode, Any], None] = vars(UINode)[name].__set__
    return setter


_set_id = _slot_setter("id")
_set_parent = _slot_setter("parent")
_set_children = _slot_setter("children")
_set_element = _slot_setter("_e")
_set_strings = _slot_setter("_s")
_set_flags = _slot_setter("_f")
_set_bounds = _slot_setter("_b")
_set_path = _slot_setter("_path")


_TF = {True: "true", False: "false"}


def _init(node: UINode, nid: int, parent: int | None, children: tuple[int, ...],
          element: etree._Element | dict[str, str]) -> None:
    _set_id(node, nid)
    _set_parent(node, parent)
    _set_children(node, children)
    _set_element(node, element)
    _set_strings(node, None)
    _set_flags(node, None)


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
    # (filled in __post_init__; a default_factory makes __init__ set it before ``document``,
    # so that it is freed first, see there)
    _by_id: Mapping[int, UINode] = field(init=False, repr=False, compare=False, default_factory=dict)
    #: the parsed dump's root element (``<hierarchy>``) when the nodes stand on an lxml tree.
    #: Holding it until the nodes are gone is what keeps freeing a tree linear: lxml frees an
    #: element's proxy by walking up its ancestors, which stops at the first that still has a
    #: proxy (here, at once); with the root's proxy gone first, a 10,000-view tree took 4x
    #: longer to free per view than a 200-view one. The instance dict is freed in field order.
    document: etree._Element | None = field(default=None, repr=False, compare=False)

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
