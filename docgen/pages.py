"""Typed page objects: the base classes of the modules ``tapir compile`` generates.

A generated module exposes an app document as classes (one per screen, one per list item type)
whose properties return these element classes, e.g.
``app.songs_screen.song_list.match("Emil").song_artist.get_text()``. Each kind of element has
its own class with exactly the methods the API registry (``tapir.dsl.api``) allows on that kind,
so a type checker rejects ``set_text`` on a button; ``tests/test_docgen_pages.py`` holds the
classes to the registry.

Page objects hold no state of the screen: each call builds the same ``ElementHandle`` a script
would and hands it to the runtime the interpreter uses, so Python tests and scripts share
element location, dependency navigation and error reporting.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Generic, Literal, TypeVar

from tapir.dsl.api import Kind
from tapir.dsl.errors import ActionError, Span
from tapir.dsl.runtime_api import UIRuntime
from tapir.dsl.values import Child, ElementHandle

Direction = Literal["up", "down", "left", "right", "page_up", "page_down", "page_left", "page_right"]

#: The runtime page objects call: the interpreter's.
PageRuntime = UIRuntime


def _caller_span() -> Span:
    """The line of the Python code using the page object, for the runtime's traces and errors."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return Span.point(frame.f_lineno, 1)


class Element:
    """An element of any kind: tap it, read it."""

    kind: ClassVar[Kind] = Kind.OTHER

    def __init__(self, runtime: PageRuntime, handle: ElementHandle) -> None:
        self._runtime = runtime
        self._handle = handle

    @property
    def handle(self) -> ElementHandle:
        """The element as a script names it (``$screen__element`` plus selectors)."""
        return self._handle

    def _target(self, child: Element | None) -> tuple[ElementHandle, ElementHandle | None]:
        """(element, child) as the runtime takes them: an item's child element is passed as the
        item plus the child's document name, as in ``$list[0].tap($child)``."""
        if child is not None:
            return self._handle, ElementHandle(child._document_name())
        path = self._handle.path
        if path and isinstance(path[-1], Child):
            return ElementHandle(self._handle.name, path[:-1]), ElementHandle(path[-1].name)
        return self._handle, None

    def _document_name(self) -> str:
        """The document element this object stands for (a child element's own name, not its list's)."""
        path = self._handle.path
        return path[-1].name if path and isinstance(path[-1], Child) else self._handle.name

    def tap(self, child: Element | None = None) -> None:
        """Tap the element (or its child element)."""
        self._runtime.tap(*self._target(child), _caller_span())

    def long_tap(self, child: Element | None = None) -> None:
        """Long-press the element (or its child element)."""
        self._runtime.long_tap(*self._target(child), _caller_span())

    def get_text(self, child: Element | None = None) -> str:
        """The visible text of the element (or its child element); '' if none."""
        return self._runtime.get_text(*self._target(child), _caller_span())

    def get_attributes(self, child: Element | None = None) -> dict[str, Any]:
        """The element's state: 'selected', 'checked', 'enabled', ... (see the language reference)."""
        return self._runtime.get_attributes(*self._target(child), _caller_span())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._handle}>"


class Button(Element):
    kind = Kind.BUTTON


class Checkbox(Element):
    kind = Kind.CHECKBOX


class Switch(Element):
    kind = Kind.SWITCH


class Text(Element):
    kind = Kind.TEXT


class Image(Element):
    kind = Kind.IMAGE


class Tab(Element):
    kind = Kind.TAB


class Input(Element):
    kind = Kind.INPUT

    def set_text(self, text: str) -> None:
        """Replace the text of an editable field."""
        self._runtime.set_text(self._handle, text, _caller_span())


class Scroller(Element):
    kind = Kind.SCROLLER

    def scroll(self, direction: Direction = "down") -> bool:
        """Scroll (default down); True when nothing moved, i.e. the end was reached."""
        return self._runtime.scroll(self._handle, direction, _caller_span())


ItemT = TypeVar("ItemT", bound=Element)


class ElementList(Element, Generic[ItemT]):
    """A list element: index it, iterate it, ``match`` an item, scroll it."""

    kind = Kind.LIST

    def __init__(self, runtime: PageRuntime, handle: ElementHandle, item: type[ItemT]) -> None:
        super().__init__(runtime, handle)
        self._item = item

    def scroll(self, direction: Direction = "down") -> bool:
        """Scroll the list (default down); True when the end was reached."""
        return self._runtime.scroll(self._handle, direction, _caller_span())

    def match(self, query: str | Mapping[str, Any]) -> ItemT:
        """The item whose text matches ``query``, or whose attributes equal the mapping."""
        q: str | dict[str, Any] = query if isinstance(query, str) else dict(query)
        return self._item(self._runtime, self._runtime.match(self._handle, q, _caller_span()))

    def __getitem__(self, index: int) -> ItemT:
        span = _caller_span()
        if index < 0:
            count = self._runtime.item_count(self._handle, span)
            if index + count < 0:
                raise ActionError(f"index {index} is out of range for {self._handle} ({count} items)", span)
            index += count
        return self._item(self._runtime, self._runtime.item(self._handle, index, span))

    def __len__(self) -> int:
        return self._runtime.item_count(self._handle, _caller_span())

    def __iter__(self) -> Iterator[ItemT]:
        span = _caller_span()
        for position in range(self._runtime.item_count(self._handle, span)):
            yield self._item(self._runtime, self._runtime.item(self._handle, position, span))


#: The page-object class of each kind (lists are ``ElementList[Item]``).
KIND_CLASSES: dict[Kind, type[Element]] = {
    Kind.BUTTON: Button,
    Kind.INPUT: Input,
    Kind.CHECKBOX: Checkbox,
    Kind.SWITCH: Switch,
    Kind.TEXT: Text,
    Kind.IMAGE: Image,
    Kind.LIST: ElementList,
    Kind.SCROLLER: Scroller,
    Kind.TAB: Tab,
    Kind.OTHER: Element,
}


class Screen:
    """A screen of the app; generated subclasses add one property per element."""

    name: ClassVar[str] = ""

    def __init__(self, runtime: PageRuntime) -> None:
        self._runtime = runtime


class App:
    """The app; generated subclasses add one property per screen."""

    package: ClassVar[str] = ""

    def __init__(self, runtime: PageRuntime) -> None:
        self._runtime = runtime

    def back(self) -> None:
        """Press the BACK key."""
        self._runtime.back(_caller_span())

    def enter(self) -> None:
        """Press the ENTER key, e.g. to submit a search."""
        self._runtime.enter(_caller_span())

