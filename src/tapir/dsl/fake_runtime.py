"""An in-memory ``UIRuntime``: a few screens of elements, no device, every call recorded.

For tests and dry runs of scripts (``tapir run`` without a phone, checker experiments, the test
runner's own tests). It implements the runtime Protocol with the documented semantics, in
miniature: elements live on screens (the part of the name before ``__``); acting on an element
of another screen navigates there when ``navigate`` is on and the screen is reachable, else it
raises ``ScreenNotReached``; list items have text, attributes and child elements; ``match`` is
exact, then case-insensitive, then substring; ``scroll`` reports the end after
``scroll_pages`` moves.

Time is simulated (``now``, in seconds): ``sleep`` and waits move it on, and an element can
appear or vanish at a given time (``appear_at``, ``vanish_at``). A screen listed in ``popups`` is
an interruption: while it shows, nothing else is found and navigation cannot leave it; tapping
one of its elements closes it. Watchers (``watch``) are checked when an element is not found.

    fake = FakeRuntime({
        "home__search": FakeElement(Kind.INPUT),
        "home__songs": FakeElement(Kind.LIST, items=[FakeItem("Jazz"), FakeItem("Rock")]),
    })
    run_script(source, fake.factory(), symbols=fake.symbols())
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tapir.core.errors import ActionError, ElementNotFound, ScreenNotReached, Span, UnknownElement, WaitTimeout
from tapir.core.watchers import Watcher
from tapir.dsl import api
from tapir.dsl.api import Kind
from tapir.dsl.runtime_api import APP_ACTIONS, RuntimeFactory
from tapir.dsl.symbols import ElementSymbol, ScreenSymbol, SymbolTable
from tapir.dsl.values import Child, ElementHandle, Index, Match

#: How far the fake clock moves between two looks of a wait.
POLL_S = 0.5


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
    #: Simulated seconds (``FakeRuntime.now``) from which it is shown, and from which it is gone.
    appear_at: float | None = None
    vanish_at: float | None = None


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
        popups: frozenset[str] = frozenset(),
    ) -> None:
        self.elements = elements
        #: The current screen; None until the first element is used (then its screen).
        self.screen = screen
        self.navigate = navigate
        self.unreachable = unreachable
        self.popups = popups
        self.history: list[str] = []
        self.calls: list[FakeCall] = []
        self.factory_calls = 0
        self.closed = False
        #: The simulated clock, in seconds since the run started.
        self.now = 0.0
        self.watchers: dict[str, Watcher] = {}
        #: Firings per watcher name.
        self.fired: dict[str, int] = {}
        self.screenshots: list[str] = []

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
        while True:
            try:
                return self._reach(handle, el, span)
            except (ElementNotFound, ScreenNotReached):
                if not self._fire_watcher():
                    raise

    def _reach(self, handle: ElementHandle, el: FakeElement, span: Span) -> FakeElement:
        screen = handle.screen
        if self.screen is None:
            self.screen = screen
        elif screen != self.screen:
            if not self.navigate or screen in self.unreachable or self.screen in self.popups:
                raise ScreenNotReached(f"could not reach screen '{screen}' for {handle} (now on '{self.screen}')",
                                       span)
            self.history.append(self.screen)
            self.screen = screen
        if not self._shown(el):
            raise ElementNotFound(f"{handle} is not on screen '{screen}'", span)
        return el

    def _shown(self, el: FakeElement) -> bool:
        return el.present and (el.appear_at is None or self.now >= el.appear_at) and (
            el.vanish_at is None or self.now < el.vanish_at)

    def _on_screen(self, name: str) -> bool:
        """Whether element ``name`` is on the current screen now (no navigation)."""
        el = self.elements.get(name)
        screen = name.split("__", 1)[0] if "__" in name else ""
        return el is not None and self._shown(el) and (self.screen is None or screen == self.screen)

    def _fire_watcher(self) -> bool:
        """Tap the target of the first watcher whose trigger shows (and that has firings left)."""
        for w in self.watchers.values():
            if self.fired.get(w.name, 0) >= w.limit:
                continue
            trigger, text = w.trigger, w.trigger_text
            shown = self._text_shown(text) if text is not None else trigger is not None and self._on_screen(trigger)
            target = self._text_element(w.tap_text) if w.tap_text is not None else w.tap
            if shown and target is not None and self._on_screen(target):
                self.fired[w.name] = self.fired.get(w.name, 0) + 1
                self.calls.append(FakeCall("watcher", f"${target}", (w.name,), 0))
                self._tapped(self.elements[target], None)
                return True
        return False

    def _text_element(self, text: str) -> str | None:
        wanted = text.strip().casefold()
        return next((name for name, el in self.elements.items()
                     if self._on_screen(name) and el.text.strip().casefold() == wanted), None)

    def _text_shown(self, text: str) -> bool:
        wanted = text.strip().casefold()
        for name, el in self.elements.items():
            if not self._on_screen(name):
                continue
            texts = [el.text, *(it.text for it in el.items)]
            if any(t.strip().casefold() == wanted for t in texts):
                return True
        return False

    def _tapped(self, el: FakeElement, item: FakeItem | None) -> None:
        target = item.goes_to if item is not None else el.goes_to
        if target is not None:
            self.history.append(self.screen or "")
            self.screen = target
        elif self.screen in self.popups:
            self.screen = self.history.pop() if self.history else None

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
        self._tapped(el, item)

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

    def wait_for(self, target: ElementHandle | str, gone: bool, timeout: float, span: Span, *,
                 watchers: bool = True, must: bool = False) -> bool:
        self._record("wait_for", target if isinstance(target, ElementHandle) else None,
                     (target if isinstance(target, str) else "element", "gone" if gone else "shown", timeout), span)
        deadline = self.now + timeout
        while True:
            shown = self._target_shown(target, span)
            if shown != gone:
                return True
            if watchers and self._fire_watcher():
                continue
            if self.now >= deadline:
                break
            self.now = min(deadline, self.now + POLL_S)
        if not must:
            return False
        what = repr(target) if isinstance(target, str) else str(target)
        raise WaitTimeout(f"{what} {'was still there' if gone else 'did not appear'} after {timeout:g} s "
                          f"(now on {self.screen!r})", span)

    def _target_shown(self, target: ElementHandle | str, span: Span) -> bool:
        if isinstance(target, str):
            return self._text_shown(target)
        if target.name not in self.elements:
            raise UnknownElement(f"unknown element ${target.name}", span)
        if not self._on_screen(target.name):
            return False
        el = self.elements[target.name]
        for sel in target.path:
            if type(sel) is not Match:
                raise ActionError(f"{target}: a presence check takes an element or an item chosen by match()", span)
            try:
                self._find(target, el, sel.as_query(), span)
            except ActionError:
                return False
        return True

    def sleep(self, seconds: float, span: Span) -> None:
        self._record("sleep", None, (seconds,), span)
        self.now += seconds

    def simulated_seconds(self) -> float:
        return self.now

    def app(self, action: str, extras: dict[str, Any] | None, span: Span) -> None:
        if action not in APP_ACTIONS:
            raise ActionError(f"unknown app action {action!r}", span)
        self._record(f"{action}_app", None, (extras,) if extras else (), span)
        self.history.clear()
        self.screen = None

    def screenshot(self, name: str | None, span: Span) -> str:
        self._record("screenshot", None, (name,) if name else (), span)
        path = f"{name or f'screenshot-{len(self.screenshots) + 1}'}.png"
        self.screenshots.append(path)
        return path

    def watch(self, watcher: Watcher, span: Span) -> None:
        self._record("watch", None, (watcher.name,), span)
        for name in (watcher.tap, watcher.when):
            if name is not None and name not in self.elements:
                raise UnknownElement(f"unknown element ${name}", span)
        self.watchers[watcher.name] = watcher

    def close(self) -> None:
        self.closed = True
