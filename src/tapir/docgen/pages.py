"""Typed page objects: the run-time base of the modules ``tapir compile`` generates.

A generated module exposes an app document as classes (one per screen, one per list item type)
whose properties return element objects, e.g.
``app.songs_screen.song_list.match("Emil").song_artist.get_text()``. The element classes of the
module (``Button``, ``Input``, ``ElementList``...) are generated from the registry
(``tapir.dsl.registry``) with exactly the methods it allows on each kind, typed from the
signatures, so a type checker rejects ``set_text`` on a button; each generated method calls
``Element._call``, which runs the registry entry's own implementation: a method added to the
registry is on the page objects of every module compiled after.

Page objects hold no state of the screen: each call builds the same ``ElementHandle`` a script
would and hands it to the runtime the interpreter uses, so Python tests and scripts share
element location, dependency navigation and error reporting.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, ClassVar, Generic, TypeVar

from tapir.core.errors import ActionError, Span
from tapir.dsl.registry import REGISTRY, ApiCall, Entry, Namespace, bind_arguments
from tapir.dsl.runtime_api import UIRuntime
from tapir.dsl.types import Kind
from tapir.dsl.values import Child, ElementHandle

__all__ = ["App", "Element", "ElementList", "PageRuntime", "Screen"]

#: The runtime page objects call: the interpreter's.
PageRuntime = UIRuntime


def _caller_span() -> Span:
    """The line of the Python code using the page object, for the runtime's traces and errors."""
    frame = sys._getframe(1)
    while frame.f_back is not None and (frame.f_globals.get("__name__") == __name__
                                        or frame.f_globals.get("_TAPIR_PAGES")):
        frame = frame.f_back
    return Span.point(frame.f_lineno, 1)


def _run(runtime: PageRuntime, entry: Entry, handle: ElementHandle | None, args: dict[str, Any]) -> Any:
    span = _caller_span()
    values = bind_arguments(entry, [], {k: v for k, v in args.items() if v is not None}, span)
    return entry.impl(ApiCall(entry, handle, values, span, lambda: runtime))


class Element:
    """An element of any kind; generated subclasses add the methods the registry allows on theirs."""

    kind: ClassVar[Kind] = Kind.OTHER

    def __init__(self, runtime: PageRuntime, handle: ElementHandle) -> None:
        self._runtime = runtime
        self._handle = handle

    @property
    def handle(self) -> ElementHandle:
        """The element as a script names it (``$screen__element`` plus selectors)."""
        return self._handle

    def _call(self, name: str, /, **args: Any) -> Any:
        """Run the registry's element method ``name`` on this element (what generated methods do).

        Element arguments are passed as their handles; a method with a ``child`` parameter acts
        on a list item's child element as a script does: ``item.tap(child)`` is
        ``$list[i].tap($child)``, and ``item.child.tap()`` the same.
        """
        entry = REGISTRY.element_method(name)
        if entry is None:
            raise AttributeError(f"elements have no method {name!r}")
        handle = self._handle
        if entry.param("child") is not None:
            handle, args["child"] = self._target(args.get("child"))
        for key, value in args.items():
            if isinstance(value, Element):
                args[key] = ElementHandle(value._document_name())
        return _run(self._runtime, entry, handle, args)

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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._handle}>"


ItemT = TypeVar("ItemT", bound=Element)


class ElementList(Element, Generic[ItemT]):
    """A list element: index it, iterate it; generated subclasses add ``match``, ``scroll``..."""

    kind = Kind.LIST

    def __init__(self, runtime: PageRuntime, handle: ElementHandle, item: type[ItemT]) -> None:
        super().__init__(runtime, handle)
        self._item_class = item

    def _item(self, handle: Any) -> ItemT:
        """An item (a handle the runtime returned) as an object of the list's item class."""
        return self._item_class(self._runtime, handle)

    def __getitem__(self, index: int) -> ItemT:
        span = _caller_span()
        if index < 0:
            count = self._runtime.item_count(self._handle, span)
            if index + count < 0:
                raise ActionError(f"index {index} is out of range for {self._handle} ({count} items)", span)
            index += count
        return self._item(self._runtime.item(self._handle, index, span))

    def __len__(self) -> int:
        return self._runtime.item_count(self._handle, _caller_span())

    def __iter__(self) -> Iterator[ItemT]:
        span = _caller_span()
        for position in range(self._runtime.item_count(self._handle, span)):
            yield self._item(self._runtime.item(self._handle, position, span))


class Screen:
    """A screen of the app; generated subclasses add one property per element."""

    name: ClassVar[str] = ""

    def __init__(self, runtime: PageRuntime) -> None:
        self._runtime = runtime


class App:
    """The app; generated subclasses add one property per screen and the registry's functions."""

    package: ClassVar[str] = ""

    def __init__(self, runtime: PageRuntime) -> None:
        self._runtime = runtime

    def _call(self, name: str, /, **args: Any) -> Any:
        """Run the registry's API function ``name`` (``back``, ``enter``...); positional only, so
        that a parameter may be called ``name`` too (``screenshot(name=...)``)."""
        entry = REGISTRY.get(Namespace.GLOBAL, name)
        if entry is None:
            raise AttributeError(f"the app has no function {name!r}")
        # elements are passed as the handles a script would pass (``app.watch(app.rate.later)``)
        args = {k: v.handle if isinstance(v, Element) else v for k, v in args.items()}
        return _run(self._runtime, entry, None, args)
