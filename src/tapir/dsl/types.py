"""The type vocabulary of the language, written once: element kinds and script value types.

Signatures in the registry (``set_text(text: str) -> None``), the checker's inferred types, the
interpreter's argument checks, the page objects' Python annotations and the language service's
hovers all use these names:

    ============  ==========================================  =============================
    name          what a script holds                         Python annotation (page objects)
    ============  ==========================================  =============================
    str           text                                        str
    int, float    numbers (a bool is an int, an int a float)  int, float
    bool          True or False                               bool
    None          nothing                                     None
    list, tuple   sequences                                   list[Any], tuple[Any, ...]
    dict          a mapping                                   Mapping[str, Any]
    range         range(...)                                  range
    element       an element of the app document ($x)         Element
    item          an item of the list it was taken from       ItemT (the list's item class)
    function      something callable                          Callable[..., Any]
    secret        a secret: prints as *****, only typed           Secret
    any           anything                                    Any
    ============  ==========================================  =============================

A type in a signature may be a union (``str | dict``). ``Kind`` is what an element is; it decides
which element methods are legal.

    parse_type("str | dict")          # ('str', 'dict')
    accepts("int | None", "bool")      # True: a bool is an int
    annotation("element | None")       # 'Element | None'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tapir.core.kinds import ALL_KINDS, LIST_KINDS, SCROLL_KINDS, TEXT_KINDS, Kind

__all__ = [
    "ALL_KINDS", "ANY", "BOOL", "DICT", "ELEMENT", "FLOAT", "FUNCTION", "INT", "ITEM", "LIST", "LIST_KINDS", "NONE",
    "RANGE", "SCROLL_KINDS", "SECRET", "STR", "TEXT_KINDS", "TUPLE", "TYPES", "Kind", "ScriptType", "accepts",
    "annotation", "describe", "parse_type", "runtime_types", "type_of_constant",
]



STR = "str"
INT = "int"
FLOAT = "float"
BOOL = "bool"
NONE = "None"
LIST = "list"
TUPLE = "tuple"
DICT = "dict"
RANGE = "range"
ELEMENT = "element"
ITEM = "item"
FUNCTION = "function"
SECRET = "secret"
ANY = "any"


@dataclass(frozen=True)
class ScriptType:
    """One name of the vocabulary: what it accepts and how it is written in Python."""

    name: str
    #: The annotation page objects use.
    annotation: str
    #: Other names whose values are acceptable where this one is wanted.
    includes: tuple[str, ...] = ()


def _python_types() -> dict[str, tuple[type, ...]]:
    """The Python types of script values of each type (empty: anything)."""
    from tapir.core.secrets import Secret
    from tapir.dsl.values import ElementHandle

    return {
        STR: (str,), INT: (int, bool), FLOAT: (float, int, bool), BOOL: (bool,), NONE: (type(None),),
        LIST: (list,), TUPLE: (tuple,), DICT: (dict,), RANGE: (range,), ELEMENT: (ElementHandle,),
        ITEM: (ElementHandle,), FUNCTION: (), SECRET: (Secret,), ANY: (),
    }


#: The vocabulary, by name.
TYPES: dict[str, ScriptType] = {
    t.name: t
    for t in (
        ScriptType(STR, "str"),
        ScriptType(INT, "int", (BOOL,)),
        ScriptType(FLOAT, "float", (INT, BOOL)),
        ScriptType(BOOL, "bool"),
        ScriptType(NONE, "None"),
        ScriptType(LIST, "list[Any]"),
        ScriptType(TUPLE, "tuple[Any, ...]"),
        ScriptType(DICT, "Mapping[str, Any]"),
        ScriptType(RANGE, "range"),
        ScriptType(ELEMENT, "Element", (ITEM,)),
        ScriptType(ITEM, "ItemT", (ELEMENT,)),
        ScriptType(FUNCTION, "Callable[..., Any]"),
        ScriptType(SECRET, "Secret"),
        ScriptType(ANY, "Any"),
    )
}


def parse_type(spec: str) -> tuple[str, ...]:
    """The names of a type written in a signature (``"str | None"`` -> ``('str', 'None')``);
    raises ``ValueError`` for a name not in the vocabulary."""
    names = tuple(part.strip() for part in spec.split("|"))
    unknown = [n for n in names if n not in TYPES]
    if unknown or not names:
        raise ValueError(f"unknown type {', '.join(unknown) or spec!r} (known: {', '.join(TYPES)})")
    return names


_RUNTIME: dict[str, tuple[type, ...]] = {}


def runtime_types(spec: str) -> tuple[type, ...]:
    """The Python types a value of ``spec`` may have at run time; empty when any will do."""
    if not _RUNTIME:
        _RUNTIME.update(_python_types())
    names = parse_type(spec)
    if ANY in names or FUNCTION in names:
        return ()
    return tuple(t for n in names for t in _RUNTIME[n])


def accepts(spec: str, tag: str) -> bool:
    """Whether a value the checker knows to be of type ``tag`` fits ``spec`` (``unknown`` and
    ``any`` always do)."""
    if tag in ("unknown", ANY):
        return True
    for name in parse_type(spec):
        if name == ANY or name == tag or tag in TYPES[name].includes:
            return True
    return False


def annotation(spec: str, result: bool = False) -> str:
    """The Python annotation of a type, for generated page objects; a ``result`` is concrete (a
    dict is ``dict[str, Any]`` where a parameter takes any ``Mapping[str, Any]``)."""
    text = " | ".join(TYPES[n].annotation for n in parse_type(spec))
    return text.replace("Mapping[str, Any]", "dict[str, Any]") if result else text


def describe(tag: str) -> str:
    """A type as a message names it: 'a str', 'an element', 'None'."""
    if tag == NONE:
        return "None"
    return ("an " if tag[:1] in "aeiou" else "a ") + tag


_CONSTANTS: dict[type, str] = {str: STR, int: INT, float: FLOAT, bool: BOOL, type(None): NONE}


def type_of_constant(value: Any) -> str:
    """The type of a literal's value."""
    return _CONSTANTS.get(type(value), ANY)
