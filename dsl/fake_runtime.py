"""An in-memory ``UIRuntime``: a few screens of elements, no device, every call recorded.

For tests and dry runs of scripts (``tapir run`` without a phone, checker experiments, the test
runner's own tests). It implements the runtime Protocol with the documented semantics, in
miniature: elements live on screens (the part of the name before ``__``); acting on an element
of another screen navigates there when ``navigate`` is on and the screen is reachable, else it
raises ``ScreenNotReached``; list items have text, attributes and child elements; ``match`` is
exact, then case-insensitive, then substring; ``scroll`` reports the end after
``scroll_pages`` moves.

    fake = FakeRuntime({
        "home__search": FakeElement(Kind.INPUT),
        "home__songs": FakeElement(Kind.LIST, items=[FakeItem("Jazz"), FakeItem("Rock")]),
    })
    run_script(source, fake.factory(), symbols=fake.symbols())
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tapir.dsl import api
from tapir.dsl.api import Kind
from tapir.dsl.errors import ActionError, ElementNotFound, ScreenNotReached, Span, UnknownElement
from tapir.dsl.runtime_api import RuntimeFactory
from tapir.dsl.symbols import ElementSymbol, ScreenSymbol, SymbolTable
from tapir.dsl.values import Child, ElementHandle, Index, Match


@dataclass
class FakeItem:
    """One item of a list element."""

    text: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    #: Child elements of the item by document name, with their text.
    children: dict[str, str] = field(default_factory=dict)
    #: The screen shown after tapping the item.
    goes_to: str | None = None


@dataclass
class FakeElement:
    kind: Kind = Kind.BUTTON
    text: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    items: list[FakeItem] = field(default_factory=list)
    #: The kind of one item (lists), for the symbol table.
    item_kind: Kind | None = Kind.BUTTON
    #: False: the element's screen is shown but the element cannot be found on it.
    present: bool = True
    #: The screen shown after tapping the element.
    goes_to: str | None = None
    #: How many scrolls down move before the end is reached.
    scroll_pages: int = 0
    scrolled: int = 0


@dataclass(frozen=True)
class FakeCall:
    """One call the interpreter made: ``tap``, ``get_text``, ``item_count``, ``back``..."""

    method: str
    target: str | None
    args: tuple[Any, ...]
    line: int

    @property
    def is_action(self) -> bool:
        """Whether the registry counts this call as a UI action."""
        from tapir.dsl.registry import REGISTRY

        entry = REGISTRY.global_function(self.method) or REGISTRY.element_method(self.method)
        return entry is not None and entry.acts_on_device

    def __str__(self) -> str:
        args = ", ".join(repr(a) if not isinstance(a, ElementHandle) else str(a) for a in self.args)
        head = f"{self.target}.{self.method}" if self.target else self.method
        return f"{head}({args})"


class FakeRuntime:
    """Implements ``tapir.dsl.runtime_api.UIRuntime`` over ``FakeElement``s."""

    def __init__(
        self,
        elements: dict[str, FakeElement],
        *,
        screen: str | None = None,
        navigate: bool = True,
        unreachable: frozenset[str] = frozenset(),
    ) -> None:
        self.elements = elements
        #: The current screen; None until the first element is used (then its screen).
        self.screen = screen
        self.navigate = navigate
        self.unreachable = unreachable
        self.history: list[str] = []
        self.calls: list[FakeCall] = []
        self.factory_calls = 0
        self.closed = False

    # -- for tests -------------------------------------------------------------------------------

    def factory(self) -> RuntimeFactory:
        """A runtime factory that counts how often it was called (lazy-connection tests)."""

        def make() -> FakeRuntime:
            self.factory_calls += 1
            return self

        return make

    @property
    def actions(self) -> list[FakeCall]:
        return [c for c in self.calls if c.is_action]

    def log(self) -> list[str]:
        return [str(c) for c in self.calls]

    def symbols(self, app: str = "fake") -> SymbolTable:
        """The symbol table of these elements (kinds, list items, children), for kind checks."""
        syms: dict[str, ElementSymbol] = {}
        screens: dict[str, list[str]] = {}
        for name, el in self.elements.items():
            children = sorted({c for it in el.items for c in it.children})
            screen = name.split("__", 1)[0] if "__" in name else ""
            syms[name] = ElementSymbol(name, el.kind, screen, item_kind=el.item_kind if el.kind in api.LIST_KINDS
                                       else None, children=tuple(children))
            screens.setdefault(screen, []).append(name)
            for c in children:
                if c not in self.elements:
                    syms[c] = ElementSymbol(c, Kind.TEXT, screen, item_of=name)
                    screens[screen].append(c)
        return SymbolTable(app, f"org.tapir.{app}", next(iter(screens), ""),
                           tuple(ScreenSymbol(s, elements=tuple(n)) for s, n in screens.items()),
                           tuple(syms.values()))

    # -- resolution ------------------------------------------------------------------------------

    def _record(self, method: str, handle: ElementHandle | None, args: tuple[Any, ...], span: Span) -> None:
        self.calls.append(FakeCall(method, str(handle) if handle is not None else None, args, span.line))

    def _element(self, handle: ElementHandle, span: Span) -> FakeElement:
        el = self.elements.get(handle.name)
        if el is None:
            raise UnknownElement(f"unknown element ${handle.name}", span)
        screen = handle.screen
        if self.screen is None:
            self.screen = screen
        elif screen != self.screen:
            if not self.navigate or screen in self.unreachable:
                raise ScreenNotReached(f"could not reach screen '{screen}' for {handle} (now on '{self.screen}')",
                                       span)
            self.history.append(self.screen)
            self.screen = screen
        if not el.present:
            raise ElementNotFound(f"{handle} is not on screen '{screen}'", span)
        return el

    def _resolve(self, handle: ElementHandle, span: Span) -> tuple[FakeElement, FakeItem | None, str | None]:
        el = self._element(handle, span)
        item: FakeItem | None = None
        child: str | None = None
        for sel in handle.path:
            if type(sel) is Index:
                item = self._item_at(handle, el, sel.position, span)
            elif type(sel) is Match:
                item = el.items[self._find(handle, el, sel.as_query(), span)]
            elif type(sel) is Child:
                child = sel.name
        return el, item, child

    def _item_at(self, handle: ElementHandle, el: FakeElement, i: int, span: Span) -> FakeItem:
        if el.kind not in api.LIST_KINDS:
            raise ActionError(f"{handle.root} is a {el.kind.value}, not a list", span)
        if not 0 <= i < len(el.items):
            raise ActionError(f"index {i} is out of range: {handle.root} has {len(el.items)} items", span)
        return el.items[i]

    @staticmethod
    def _item_attrs(item: FakeItem) -> dict[str, Any]:
        return {"text": item.text, "selected": False, "checked": False, **item.attributes}

    def _find(self, handle: ElementHandle, el: FakeElement, query: str | dict[str, Any], span: Span) -> int:
        if isinstance(query, dict):
            for i, it in enumerate(el.items):
                attrs = self._item_attrs(it)
                if all(attrs.get(k) == v for k, v in query.items()):
                    return i
        else:
            for test in (lambda t: t == query, lambda t: t.casefold() == query.casefold(),
                         lambda t: query.casefold() in t.casefold()):
                for i, it in enumerate(el.items):
                    if test(it.text):
                        return i
        raise ActionError(f"no item of {handle.root} matches {query!r}", span)

    def _text_of(self, el: FakeElement, item: FakeItem | None, child: ElementHandle | str | None,
                 handle: ElementHandle, span: Span) -> str:
        cname = child.name if isinstance(child, ElementHandle) else child
        if cname is not None:
            if item is None:
                other = self.elements.get(cname)
                if other is None:
                    raise ElementNotFound(f"${cname} is not inside {handle}", span)
                return other.text
            if cname not in item.children:
                raise ElementNotFound(f"${cname} is not inside {handle}", span)
            return item.children[cname]
        return item.text if item is not None else el.text

    # -- the UIRuntime Protocol --------------------------------------------------------------------

    def tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
        self._record("tap", handle, (child,) if child else (), span)
        el, item, _ = self._resolve(handle, span)
        if child is not None:
            self._text_of(el, item, child, handle, span)
        target = item.goes_to if item is not None else el.goes_to
        if target is not None:
            self.history.append(self.screen or "")
            self.screen = target

    def long_tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None:
        self._record("long_tap", handle, (child,) if child else (), span)
        el, item, _ = self._resolve(handle, span)
        if child is not None:
            self._text_of(el, item, child, handle, span)

    def set_text(self, handle: ElementHandle, text: str, span: Span) -> None:
        self._record("set_text", handle, (text,), span)
        el, item, _ = self._resolve(handle, span)
        if item is not None or el.kind not in api.TEXT_KINDS:
            raise ActionError(f"{handle} does not accept text", span)
        el.text = text

    def scroll(self, handle: ElementHandle, direction: str, span: Span) -> bool:
        self._record("scroll", handle, (direction,), span)
        el, _, _ = self._resolve(handle, span)
        if direction in ("down", "page_down", "right", "page_right"):
            if el.scrolled >= el.scroll_pages:
                return True
            el.scrolled += 1
            return False
        if el.scrolled == 0:
            return True
        el.scrolled -= 1
        return False

    def get_text(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> str:
        self._record("get_text", handle, (child,) if child else (), span)
        el, item, sel_child = self._resolve(handle, span)
        return self._text_of(el, item, child or sel_child, handle, span)

    def get_attributes(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> dict[str, Any]:
        self._record("get_attributes", handle, (child,) if child else (), span)
        el, item, sel_child = self._resolve(handle, span)
        text = self._text_of(el, item, child or sel_child, handle, span)
        attrs: dict[str, Any] = {
            "selected": False, "checked": False, "enabled": True, "focused": False,
            "scrollable": el.kind in api.SCROLL_KINDS and item is None, "editable": el.kind in api.TEXT_KINDS,
            "clickable": True, "text": text, "content_desc": "", "resource_id": handle.name.split("__")[-1],
        }
        attrs.update(el.attributes if item is None else item.attributes)
        return attrs

    def item_count(self, handle: ElementHandle, span: Span) -> int:
        self._record("item_count", handle, (), span)
        el, item, _ = self._resolve(handle, span)
        if item is not None or el.kind not in api.LIST_KINDS:
            raise ActionError(f"{handle} is not a list", span)
        return len(el.items)

    def item(self, handle: ElementHandle, index: int, span: Span) -> ElementHandle:
        self._record("item", handle, (index,), span)
        el, _, _ = self._resolve(handle, span)
        self._item_at(handle, el, index, span)
        return handle.at(index)

    def match(self, handle: ElementHandle, query: str | dict[str, Any], span: Span) -> ElementHandle:
        self._record("match", handle, (query,), span)
        el, _, _ = self._resolve(handle, span)
        if el.kind not in api.LIST_KINDS:
            raise ActionError(f"{handle} is a {el.kind.value}, not a list", span)
        self._find(handle, el, query, span)
        return handle.matching(query)

    def back(self, span: Span) -> None:
        self._record("back", None, (), span)
        if self.history:
            self.screen = self.history.pop()

    def enter(self, span: Span) -> None:
        self._record("enter", None, (), span)

    def close(self) -> None:
        self.closed = True
