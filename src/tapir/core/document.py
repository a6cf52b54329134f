"""A loaded app document: frozen dataclasses, in document order.

The format is described in ``docs/app-document.md``. ``tapir.docgen.loader`` builds these from
YAML or JSON and validates them; everything downstream (symbols, stubs, prompts, the runtime's
locator and navigator) reads only these classes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from tapir.core.kinds import LIST_KINDS, Kind
from tapir.core.watchers import Watcher

__all__ = ["AppDocument", "AppInfo", "Dialect", "Element", "ElementName", "Identifier", "Screen", "Signature", "Step",
           "Watcher"]


class ElementName:
    """What an element's name (``screen__element``) and kind say. The one concept of an element,
    shared by the document's ``Element`` (identifiers, paths: what the runtime needs) and the
    symbol table's ``ElementSymbol`` (``tapir.dsl.symbols``: its view for the checker, the
    language server and the prompts, which a compiled ``.symbols.json`` gives without the
    document)."""

    name: str
    kind: Kind

    @property
    def local_name(self) -> str:
        return self.name.split("__", 1)[1] if "__" in self.name else self.name

    @property
    def is_list(self) -> bool:
        return self.kind in LIST_KINDS


class Dialect(StrEnum):
    """The view-tree form an XPath is written against."""

    #: ``uiautomator dump`` XML: ``//node[@resource-id='org.x:id/y' and @content-desc='...']``.
    UIAUTOMATOR = "uiautomator"
    #: AutoDroid-V2's HTML-ised tree: ``//button[@resource_id='y' and @alt='...']``.
    HTML = "html"


@dataclass(frozen=True)
class Identifier:
    """One XPath of an element's priority queue."""

    xpath: str
    dialect: Dialect
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Step:
    """One action of a dependency path, e.g. ``main_screen__sort_button.tap()``.

    ``target`` is an element name, a screen name (``settings_screen.back()``: BACK while on that
    screen) or None for a global action (``back()``, ``enter()``). ``match`` selects an item of a
    list target first: ``menu__options.match('Settings').tap()``.
    """

    target: str | None
    action: str
    args: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)
    match: str | None = None

    def __str__(self) -> str:
        args = ", ".join(repr(a) for a in self.args)
        if self.target is None:
            return f"{self.action}({args})"
        item = f".match({self.match!r})" if self.match is not None else ""
        return f"{self.target}{item}.{self.action}({args})"


@dataclass(frozen=True)
class Signature:
    """How the runtime recognises a screen: every condition given must hold."""

    #: The foreground activity (full ``pkg/.Activity`` or the part after ``/``).
    activity: str | None = None
    #: XPaths that must each match the current tree.
    all_of: tuple[Identifier, ...] = ()
    #: XPaths that must not match (to tell apart screens that share their layout).
    none_of: tuple[Identifier, ...] = ()
    #: AutoDroid-V2's layout skeleton (HTML dialect), kept from imported documents.
    skeleton: str | None = None

    @property
    def is_empty(self) -> bool:
        return not (self.activity or self.all_of or self.skeleton)


@dataclass(frozen=True)
class Element(ElementName):
    """An abstract element (paper, Table 1)."""

    name: str
    kind: Kind
    description: str
    identifiers: tuple[Identifier, ...]
    options: tuple[str, ...] = ()
    effect: str | None = None
    #: The screen that acting on the element leads to, when known.
    leads_to: str | None = None
    #: For child elements: the list whose items contain the element.
    item_of: str | None = None
    #: For lists: what one item is (decides which actions an item accepts).
    item_kind: Kind = Kind.OTHER
    #: Backward dependency: action sequences (in execution order) that reach the element.
    paths: tuple[tuple[Step, ...], ...] = ()
    notes: str | None = None
    line: int | None = field(default=None, compare=False)
    #: Acting on it is hard to undo (delete, send, pay, sign out): ask before doing it.
    sensitive: bool = False

    @property
    def screen(self) -> str:
        return self.name.split("__", 1)[0]


@dataclass(frozen=True)
class Screen:
    name: str
    description: str
    signature: Signature
    elements: tuple[Element, ...]
    notes: str | None = None
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class AppInfo:
    package: str
    name: str
    start_screen: str
    version: str | None = None
    #: The dialect of identifiers written as plain strings.
    dialect: Dialect = Dialect.UIAUTOMATOR
    line: int | None = field(default=None, compare=False)
    #: Other apps a run of this app may be in (a sign-in provider, the permission prompt);
    #: any other app in front is left (``docs/safety.md``, app confinement).
    allow_apps: tuple[str, ...] = ()


@dataclass(frozen=True)
class AppDocument:
    app: AppInfo
    screens: tuple[Screen, ...]
    #: Free text for the model and for people (usage notes).
    notes: str | None = None
    #: Where it was loaded from, as given (not part of equality: the same document is the same anywhere).
    source: str | None = field(default=None, compare=False)
    #: Interruptions the runtime dismisses by itself: "when this appears, tap that".
    watchers: tuple[Watcher, ...] = ()
    _elements: dict[str, Element] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)
    _screens: dict[str, Screen] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_screens", {s.name: s for s in self.screens})
        object.__setattr__(self, "_elements", {e.name: e for s in self.screens for e in s.elements})

    @property
    def elements(self) -> Iterator[Element]:
        for s in self.screens:
            yield from s.elements

    def element(self, name: str) -> Element | None:
        return self._elements.get(name)

    def screen(self, name: str) -> Screen | None:
        return self._screens.get(name)

    def children_of(self, list_name: str) -> list[Element]:
        return [e for e in self.elements if e.item_of == list_name]

    def counts(self) -> dict[str, int]:
        """Screens, elements, identifiers and dependency paths (the import report's numbers)."""
        elements = list(self.elements)
        return {
            "screens": len(self.screens),
            "elements": len(elements),
            "identifiers": sum(len(e.identifiers) for e in elements),
            "paths": sum(len(e.paths) for e in elements),
        }
