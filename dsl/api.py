"""The language's API: the element methods and API functions, each one registry entry beside its
implementation (on the ``UIRuntime`` protocol).

    $list.match("Rock").tap()       # element methods: ELEMENT entries
    back()                          # API functions: GLOBAL entries
    tap($x)                         # the AutoDroid-V2 spelling of an element method (legacy_global)

Each implementation gets an ``ApiCall`` (``tapir.dsl.registry``): the runtime, the element, the
arguments bound and checked against the signature; it returns only script values (what the
runtime returns is checked). Adding a method is adding an ``Entry`` here (or registering one
elsewhere): the interpreter, checker, page objects, prompt text and the language service all
read the registry.

The names older code imports from here stay: ``Kind`` and the kind sets (``tapir.dsl.types``),
and live views of the registry (``ELEMENT_METHODS``, ``GLOBALS``, ``BUILTINS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tapir.dsl.errors import ScriptError, Span
from tapir.dsl.registry import REGISTRY, ApiCall, Entry, Namespace
from tapir.dsl.types import ALL_KINDS, LIST_KINDS, SCROLL_KINDS, TEXT_KINDS, Kind
from tapir.dsl.values import QUERY_SCALARS, ElementHandle

__all__ = [
    "ALL_KINDS", "BUILTINS", "ELEMENT_METHODS", "GLOBALS", "LIST_KINDS", "SCROLL_DIRECTIONS", "SCROLL_KINDS",
    "TEXT_KINDS", "Kind", "expect_handle", "legacy_globals", "methods_for",
]

SCROLL_DIRECTIONS = ("up", "down", "left", "right", "page_up", "page_down", "page_left", "page_right")


def expect_handle(v: Any, span: Span) -> ElementHandle:
    """What the runtime returned, refused unless it is an element."""
    if type(v) is not ElementHandle:
        raise ScriptError(f"internal error: the device runtime returned {type(v).__name__}, not an element", span)
    return v


def _tap(call: ApiCall) -> None:
    assert call.handle is not None
    call.runtime.tap(call.handle, call.args["child"], call.span)


def _long_tap(call: ApiCall) -> None:
    assert call.handle is not None
    call.runtime.long_tap(call.handle, call.args["child"], call.span)


def _set_text(call: ApiCall) -> None:
    assert call.handle is not None
    call.runtime.set_text(call.handle, call.args["text"], call.span)


def _scroll(call: ApiCall) -> bool:
    assert call.handle is not None
    r = call.runtime.scroll(call.handle, call.args["direction"], call.span)
    if type(r) is not bool:
        raise ScriptError(f"internal error: scroll() returned {type(r).__name__}, not bool", call.span)
    return r


def _get_text(call: ApiCall) -> str:
    assert call.handle is not None
    r = call.runtime.get_text(call.handle, call.args["child"], call.span)
    if r is None:
        return ""
    if type(r) is not str:
        raise ScriptError(f"internal error: get_text() returned {type(r).__name__}, not str", call.span)
    return r


def _get_attributes(call: ApiCall) -> dict[str, Any]:
    assert call.handle is not None
    r = call.runtime.get_attributes(call.handle, call.args["child"], call.span)
    if type(r) is not dict or not all(type(k) is str and type(x) in QUERY_SCALARS for k, x in r.items()):
        raise ScriptError("internal error: get_attributes() must return a dict of str to str/bool", call.span)
    return dict(r)


def _match(call: ApiCall) -> ElementHandle:
    assert call.handle is not None
    return expect_handle(call.runtime.match(call.handle, call.args["query"], call.span), call.span)


def _back(call: ApiCall) -> None:
    call.runtime.back(call.span)


def _enter(call: ApiCall) -> None:
    call.runtime.enter(call.span)


_CHILD = {"child": "a child element of this list item to act on instead"}

for _entry in (
    Entry.define("tap(child: element = None) -> None", Namespace.ELEMENT,
                 "Tap the element (or its child element).", _tap, params=_CHILD, legacy_global=True,
                 needs_device=True, acts_on_device=True),
    Entry.define("long_tap(child: element = None) -> None", Namespace.ELEMENT,
                 "Long-press the element (or its child element).", _long_tap, params=_CHILD, legacy_global=True,
                 needs_device=True, acts_on_device=True),
    Entry.define("set_text(text: str) -> None", Namespace.ELEMENT, "Replace the text of an editable field.",
                 _set_text, params={"text": "the text to enter, replacing what is there"}, kinds=TEXT_KINDS,
                 legacy_global=True, needs_device=True, acts_on_device=True),
    Entry.define("scroll(direction: str = 'down') -> bool", Namespace.ELEMENT,
                 "Scroll the element (default down). Returns True when nothing moved, i.e. the end was reached.",
                 _scroll, params={"direction": "where to scroll"}, choices={"direction": SCROLL_DIRECTIONS},
                 kinds=SCROLL_KINDS, legacy_global=True, needs_device=True, acts_on_device=True),
    Entry.define("get_text(child: element = None) -> str", Namespace.ELEMENT,
                 "The visible text of the element (or its child element); '' if none.", _get_text, params=_CHILD,
                 legacy_global=True, needs_device=True),
    Entry.define("get_attributes(child: element = None) -> dict", Namespace.ELEMENT,
                 "The element's state: keys 'selected', 'checked', 'enabled', 'focused', 'scrollable', "
                 "'editable', 'clickable' (bool) and 'text', 'content_desc', 'resource_id' (str).",
                 _get_attributes, params=_CHILD, legacy_global=True, needs_device=True),
    Entry.define("match(query: str | dict) -> item", Namespace.ELEMENT,
                 "The item of the list that matches the text (exact, then case-insensitive, then fuzzy) "
                 "or whose attributes equal the dict; scrolls to find it.", _match,
                 params={"query": "an item's text, or attributes such as {'selected': True}"}, kinds=LIST_KINDS,
                 needs_device=True),
    Entry.define("back() -> None", Namespace.GLOBAL, "Press the BACK key.", _back,
                 needs_device=True, acts_on_device=True),
    Entry.define("enter() -> None", Namespace.GLOBAL, "Press the ENTER key, e.g. to submit a search.", _enter,
                 needs_device=True, acts_on_device=True),
):
    REGISTRY.add(_entry)

#: Live views of the registry, by name (what older code imports).
ELEMENT_METHODS: Mapping[str, Entry] = REGISTRY.view(Namespace.ELEMENT)
GLOBALS: Mapping[str, Entry] = REGISTRY.view(Namespace.GLOBAL)
BUILTINS: Mapping[str, Entry] = REGISTRY.view(Namespace.BUILTIN)


def legacy_globals() -> dict[str, Entry]:
    """The element methods also callable as ``name($element, ...)``."""
    return {e.name: e for e in REGISTRY.legacy_globals()}


def methods_for(kind: Kind) -> list[Entry]:
    """The element methods legal on ``kind``, in registry order."""
    return REGISTRY.methods_for(kind)
