"""What an abstract element is: the kinds every layer names (documents, the language, the runtime).

    Kind("list") in LIST_KINDS       # True: a list has items
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ALL_KINDS", "LIST_KINDS", "SCROLL_KINDS", "TEXT_KINDS", "Kind"]


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
