"""The language's API, defined once.

The interpreter dispatches element calls through ``ELEMENT_METHODS`` and ``GLOBALS``; the checker
validates calls against the same entries; the LSP shows their signatures and docs; the stub
compiler and the prompt renderer print them. Adding a method here is the only way to add one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """What an abstract element is; decides which actions are legal on it."""

    BUTTON = "button"
    INPUT = "input"
    CHECKBOX = "checkbox"
    SWITCH = "switch"
    TEXT = "text"
    IMAGE = "image"
    LIST = "list"
    SCROLLER = "scroller"
    TAB = "tab"
    OTHER = "other"


#: Kinds whose element is a collection of items (``len``, indexing, iteration, ``match``).
LIST_KINDS = frozenset({Kind.LIST})
#: Kinds that can be scrolled.
SCROLL_KINDS = frozenset({Kind.LIST, Kind.SCROLLER})
#: Kinds that accept text.
TEXT_KINDS = frozenset({Kind.INPUT})
ALL_KINDS = frozenset(Kind)

SCROLL_DIRECTIONS = ("up", "down", "left", "right", "page_up", "page_down", "page_left", "page_right")


@dataclass(frozen=True)
class Param:
    name: str
    #: A type in the language's own vocabulary: ``str``, ``int``, ``bool``, ``element``, ``str | dict``.
    type: str
    doc: str = ""
    optional: bool = False
    #: For string parameters with a closed set of values (e.g. scroll directions).
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class ApiEntry:
    """One element method or global function of the language."""

    name: str
    params: tuple[Param, ...]
    returns: str
    doc: str
    #: Element kinds on which the method is legal (methods only).
    kinds: frozenset[Kind] = ALL_KINDS
    #: True when the call acts on the device and counts against the UI-action budget.
    is_action: bool = False
    #: True when the call needs the device at all (reads included).
    needs_device: bool = True

    def signature(self, receiver: str | None = "$element") -> str:
        """``$element.set_text(text: str) -> None``: the form shown in prompts, hovers and stubs."""
        params = ", ".join(f"{p.name}: {p.type}" + (" = None" if p.optional else "") for p in self.params)
        head = f"{receiver}.{self.name}" if receiver else self.name
        return f"{head}({params}) -> {self.returns}"

    @property
    def min_args(self) -> int:
        return sum(1 for p in self.params if not p.optional)

    @property
    def max_args(self) -> int:
        return len(self.params)


_CHILD = Param("child", "element", "a child element of this list item to act on instead", optional=True)

ELEMENT_METHODS: dict[str, ApiEntry] = {
    e.name: e
    for e in (
        ApiEntry("tap", (_CHILD,), "None", "Tap the element (or its child element).", is_action=True),
        ApiEntry("long_tap", (_CHILD,), "None", "Long-press the element (or its child element).", is_action=True),
        ApiEntry(
            "set_text",
            (Param("text", "str", "the text to enter, replacing what is there"),),
            "None",
            "Replace the text of an editable field.",
            kinds=TEXT_KINDS,
            is_action=True,
        ),
        ApiEntry(
            "scroll",
            (Param("direction", "str", "where to scroll", optional=True, choices=SCROLL_DIRECTIONS),),
            "bool",
            "Scroll the element (default down). Returns True when nothing moved, i.e. the end was reached.",
            kinds=SCROLL_KINDS,
            is_action=True,
        ),
        ApiEntry("get_text", (_CHILD,), "str", "The visible text of the element (or its child element); '' if none."),
        ApiEntry(
            "get_attributes",
            (_CHILD,),
            "dict",
            "The element's state: keys 'selected', 'checked', 'enabled', 'focused', 'scrollable', "
            "'editable', 'clickable' (bool) and 'text', 'content_desc', 'resource_id' (str).",
        ),
        ApiEntry(
            "match",
            (Param("query", "str | dict", "an item's text, or attributes such as {'selected': True}"),),
            "element",
            "The item of the list that matches the text (exact, then case-insensitive, then fuzzy) "
            "or whose attributes equal the dict; scrolls to find it.",
            kinds=LIST_KINDS,
        ),
    )
}

#: Global functions of the language beyond the plain builtins. The older AutoDroid-V2 dialect
#: writes element methods as globals (``tap($x)``); those are the method entries with the
#: element as first argument, resolved through ``LEGACY_GLOBALS``.
GLOBALS: dict[str, ApiEntry] = {
    e.name: e
    for e in (
        ApiEntry("back", (), "None", "Press the BACK key.", is_action=True),
        ApiEntry("enter", (), "None", "Press the ENTER key, e.g. to submit a search.", is_action=True),
    )
}

LEGACY_GLOBALS: dict[str, ApiEntry] = {
    name: ELEMENT_METHODS[name] for name in ("tap", "long_tap", "set_text", "scroll", "get_text", "get_attributes")
}

#: Plain builtins a script may call; everything else is refused.
BUILTINS: tuple[str, ...] = (
    "len", "range", "print", "str", "int", "float", "bool", "min", "max", "abs", "sorted",
    "enumerate", "zip", "list", "dict", "any", "all", "sum", "round",
)


def methods_for(kind: Kind) -> list[ApiEntry]:
    """The element methods legal on ``kind``, in registry order."""
    return [e for e in ELEMENT_METHODS.values() if kind in e.kinds]
