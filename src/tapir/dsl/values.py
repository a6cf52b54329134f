"""What a script can hold.

A script value is one of: ``str``, ``int``, ``float``, ``bool``, ``None``, ``list``, ``dict``,
``tuple``, ``range``, an ``ElementHandle``, a ``ScriptFunction`` (a ``def`` of the script), a
``Builtin`` / ``ApiFunction`` (the language's own callables) or a ``Secret`` (``secret()``, which
no operation but typing can use: ``tapir.core.secrets``). Nothing else ever reaches a script:
the interpreter checks what the device runtime returns and refuses host objects in hand-built
ASTs. Attributes of these objects are unreachable from scripts (attribute access is only a method
call through a per-type allow-list), so their Python internals are not part of the sandbox surface.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tapir.core.secrets import Secret

if TYPE_CHECKING:
    from tapir.core.errors import Span
    from tapir.dsl.registry import Entry

#: Scalars a match query dict may hold (dict queries are frozen into the handle).
QUERY_SCALARS = (str, int, float, bool, type(None))


# ---------------------------------------------------------------------------------------------
# Element handles


@dataclass(frozen=True)
class Index:
    """The item at ``position`` (0-based) of a list element: ``$list[2]``, or the third
    item of ``for item in $list``; indexing and iteration share this one notion of items."""

    position: int

    def __str__(self) -> str:
        return f"[{self.position}]"


@dataclass(frozen=True)
class Match:
    """The item of a list element that matches ``query``: ``$list.match("Jazz")``.

    A dict query is stored as sorted ``(key, value)`` pairs so the handle stays hashable;
    ``as_query()`` gives the str or dict back.
    """

    query: str | tuple[tuple[str, Any], ...]

    def as_query(self) -> str | dict[str, Any]:
        return self.query if isinstance(self.query, str) else dict(self.query)

    def __str__(self) -> str:
        q = self.as_query()
        shown = repr(q) if isinstance(q, str) else "{" + ", ".join(f"{k!r}: {v!r}" for k, v in q.items()) + "}"
        return f".match({shown})"


@dataclass(frozen=True)
class Child:
    """A child element of a list item, named in the document: ``$list[2]`` then ``$title``."""

    name: str

    def __str__(self) -> str:
        return f"/${self.name}"


Selector = Index | Match | Child


def freeze_query(query: str | dict[str, Any]) -> str | tuple[tuple[str, Any], ...]:
    """The hashable form of a match query. Dict values must be scalars (checked by the caller)."""
    if isinstance(query, str):
        return query
    return tuple(sorted(query.items()))


@dataclass(frozen=True)
class ElementHandle:
    """An element as a script sees it: the document name plus a selector path.

    ``$music__song_list`` is ``ElementHandle("music__song_list")``; ``$music__song_list[2]`` is
    the same with ``path=(Index(2),)``. Handles are plain immutable data; finding the element on
    the screen is the runtime's job, each time the handle is used.
    """

    name: str
    path: tuple[Selector, ...] = ()

    def at(self, position: int) -> ElementHandle:
        """The item at ``position`` (0-based, already normalised to be non-negative)."""
        return ElementHandle(self.name, (*self.path, Index(position)))

    def matching(self, query: str | dict[str, Any]) -> ElementHandle:
        return ElementHandle(self.name, (*self.path, Match(freeze_query(query))))

    def child(self, name: str) -> ElementHandle:
        return ElementHandle(self.name, (*self.path, Child(name)))

    @property
    def root(self) -> ElementHandle:
        """The document element this handle starts from (no selectors)."""
        return ElementHandle(self.name) if self.path else self

    @property
    def is_item(self) -> bool:
        """True when the handle selects one item of a list (last selector an index or match)."""
        return bool(self.path) and isinstance(self.path[-1], Index | Match)

    @property
    def screen(self) -> str:
        return self.name.split("__", 1)[0] if "__" in self.name else ""

    def __str__(self) -> str:
        return "$" + self.name + "".join(str(s) for s in self.path)

    def __repr__(self) -> str:
        return f"<element {self}>"


# ---------------------------------------------------------------------------------------------
# Callables


class ScriptFunction:
    """A ``def`` of the script. ``invoke(arguments, call_span)`` runs the compiled body with the
    bound arguments (a dict of parameter name to value) and returns the result."""

    __slots__ = ("name", "params", "defaults", "invoke", "__weakref__")

    def __init__(self, name: str, params: tuple[str, ...], defaults: tuple[Any, ...],
                 invoke: Callable[[dict[str, Any], Span], Any]) -> None:
        self.name = name
        self.params = params
        #: Values of the last ``len(defaults)`` parameters, evaluated when the ``def`` ran.
        self.defaults = defaults
        self.invoke = invoke

    def __repr__(self) -> str:
        return f"<function {self.name}>"


class Builtin:
    """A builtin function of the language (``len``, ``print`` ...), a safe re-implementation."""

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self.name = name
        self.fn = fn

    def __repr__(self) -> str:
        return f"<built-in function {self.name}>"


class ApiFunction:
    """A global of the API registry: ``back()``/``enter()``, or a legacy global such as
    ``tap($x)`` (``legacy``: the element is the first argument)."""

    __slots__ = ("entry", "legacy")

    def __init__(self, entry: Entry, legacy: bool) -> None:
        self.entry = entry
        self.legacy = legacy

    @property
    def name(self) -> str:
        return self.entry.name

    def __repr__(self) -> str:
        return f"<built-in function {self.entry.name}>"


#: Script-facing type names (used in every error message; host class names never show).
_TYPE_NAMES: dict[type, str] = {
    str: "str", int: "int", float: "float", bool: "bool", type(None): "NoneType", list: "list",
    dict: "dict", tuple: "tuple", range: "range", ElementHandle: "element", ScriptFunction: "function",
    Builtin: "builtin_function_or_method", ApiFunction: "builtin_function_or_method", Secret: "secret",
}

SCRIPT_TYPES = frozenset(_TYPE_NAMES)


def type_name(value: object) -> str:
    return _TYPE_NAMES.get(type(value), "object")


#: Stand-ins named as scripts know the host classes: a script value of one of these classes is
#: replaced by its stand-in before it is handed to a Python method that would only reject it, so
#: Python's message names the script's type ("not builtin_function_or_method", not "not Builtin").
_STAND_INS: dict[type, type] = {
    cls: type(name, (), {"__slots__": (), "__repr__": lambda self, n=name: f"<{n}>"})
    for cls, name in ((ElementHandle, "element"), (ScriptFunction, "function"), (Builtin, "builtin_function_or_method"),
                      (ApiFunction, "builtin_function_or_method"), (Secret, "secret"))
}


def for_python(value: Any) -> Any:
    """``value`` as an argument of a Python method: host objects (and those in a tuple) replaced
    by stand-ins of their script type's name."""
    tv = type(value)
    if tv in _STAND_INS:
        return _STAND_INS[tv]()
    if tv is tuple and any(type(x) in _STAND_INS for x in value):
        return tuple(for_python(x) for x in value)
    return value


_HOST_NAMES = re.compile(r"\b(ElementHandle|ScriptFunction|Builtin|ApiFunction|Secret)\b")


def script_message(message: str) -> str:
    """A message Python wrote about script values, with host class names replaced by the script's
    type names (the last line of defence; ``for_python`` keeps most of them out)."""
    return _HOST_NAMES.sub(lambda mo: _TYPE_NAMES[globals()[mo.group(1)]], message)


CALLABLE_TYPES = (ScriptFunction, Builtin, ApiFunction)
