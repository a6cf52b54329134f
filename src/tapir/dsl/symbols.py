"""What a script can name: the compact symbol table of an app document.

The checker, the LSP and the script generator only need names, kinds, list membership and the
text shown to people, not XPaths or dependency paths. ``tapir.docgen.symbols`` builds a
``SymbolTable`` from a loaded document (the dsl layer cannot import docgen); ``to_json`` /
``from_json`` give the compact JSON form that ``tapir compile`` writes, so a front end can read
it without loading the document again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tapir.core.document import ElementName
from tapir.core.errors import DocumentError
from tapir.core.kinds import Kind
from tapir.core.nesting import load_json

SYMBOLS_FORMAT = "tapir-symbols/1"


@dataclass(frozen=True)
class ElementSymbol(ElementName):
    """The symbol table's view of one element of the document (``tapir.core.document.Element``,
    named ``screen__element``): what a script may do with it, without identifiers or paths."""

    name: str
    kind: Kind
    screen: str
    description: str = ""
    #: The list element whose items contain this element (a child element), or None.
    item_of: str | None = None
    #: For lists: the kind of one item (decides what an item accepts), and its child elements.
    item_kind: Kind | None = None
    children: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    effect: str | None = None
    #: The screen acting on it leads to, when the document says.
    leads_to: str | None = None
    #: 1-based line of the element in its document, for go-to-definition.
    line: int | None = None
    #: The texts and descriptions its identifiers name (``@text='Settings'``): what a screen-level
    #: call such as ``tap_text('Settings')`` finds it by. Read from a document only (a compiled
    #: table does not keep them, so they take no part in equality).
    texts: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ScreenSymbol:
    name: str
    description: str = ""
    elements: tuple[str, ...] = ()
    line: int | None = None


@dataclass(frozen=True)
class SymbolTable:
    """The names of one app document, in document order, with lookup by name."""

    app: str
    package: str
    start_screen: str
    screens: tuple[ScreenSymbol, ...]
    elements: tuple[ElementSymbol, ...]
    #: The document these symbols came from (a path as given), if any.
    source: str | None = None
    _by_name: dict[str, ElementSymbol] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)
    _screens: dict[str, ScreenSymbol] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {e.name: e for e in self.elements})
        object.__setattr__(self, "_screens", {s.name: s for s in self.screens})

    def element(self, name: str) -> ElementSymbol | None:
        return self._by_name.get(name)

    def screen(self, name: str) -> ScreenSymbol | None:
        return self._screens.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[ElementSymbol]:
        return iter(self.elements)

    def names(self) -> list[str]:
        return [e.name for e in self.elements]

    def children_of(self, list_name: str) -> list[ElementSymbol]:
        return [e for e in self.elements if e.item_of == list_name]

    def suggest(self, name: str, limit: int = 3, cutoff: float = 60.0) -> list[str]:
        """Element names close to ``name`` (for "did you mean"), best first.

        Names on the same screen are preferred: a wrong element name usually keeps its screen.
        """
        from rapidfuzz import fuzz, process

        screen = name.split("__", 1)[0] if "__" in name else ""
        local = name.split("__", 1)[1] if "__" in name else name
        same = [e.name for e in self.elements if e.screen == screen]
        found: list[str] = []
        if same:
            local_hits = process.extract(local, {n: n.split("__", 1)[1] for n in same}, scorer=fuzz.WRatio,
                                         limit=limit, score_cutoff=cutoff)
            found = [str(key) for _, _, key in local_hits]
        if len(found) < limit:
            hits = process.extract(name, self.names(), scorer=fuzz.WRatio, limit=limit, score_cutoff=cutoff)
            found += [n for n, _, _ in hits if n not in found]
        return found[:limit]

    # -- the compact JSON form ------------------------------------------------------------------

    def to_json(self) -> str:
        """Deterministic compact JSON (sorted keys inside objects, document order in lists)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"

    def to_dict(self) -> dict[str, Any]:
        def elem(e: ElementSymbol) -> dict[str, Any]:
            d: dict[str, Any] = {"name": e.name, "kind": e.kind.value, "screen": e.screen}
            if e.description:
                d["description"] = e.description
            if e.item_of:
                d["item_of"] = e.item_of
            if e.item_kind is not None:
                d["item_kind"] = e.item_kind.value
            if e.children:
                d["children"] = list(e.children)
            if e.options:
                d["options"] = list(e.options)
            if e.effect:
                d["effect"] = e.effect
            if e.leads_to:
                d["leads_to"] = e.leads_to
            if e.line is not None:
                d["line"] = e.line
            return d

        def scr(s: ScreenSymbol) -> dict[str, Any]:
            d: dict[str, Any] = {"name": s.name, "elements": list(s.elements)}
            if s.description:
                d["description"] = s.description
            if s.line is not None:
                d["line"] = s.line
            return d

        out: dict[str, Any] = {
            "format": SYMBOLS_FORMAT,
            "app": self.app,
            "package": self.package,
            "start_screen": self.start_screen,
            "screens": [scr(s) for s in self.screens],
            "elements": [elem(e) for e in self.elements],
        }
        if self.source:
            out["source"] = self.source
        return out

    @classmethod
    def from_json(cls, text: str) -> SymbolTable:
        """Read what ``to_json`` wrote; raises ``ValueError`` on anything else."""
        try:
            data = load_json(text)
        except DocumentError as exc:
            raise ValueError(f"not a Tapir symbol table: {exc.problems[0].message}") from None
        if not isinstance(data, dict) or data.get("format") != SYMBOLS_FORMAT:
            raise ValueError(f"not a Tapir symbol table (expected format {SYMBOLS_FORMAT!r})")
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SymbolTable:
        try:
            elements = tuple(
                ElementSymbol(
                    name=e["name"],
                    kind=Kind(e["kind"]),
                    screen=e["screen"],
                    description=e.get("description", ""),
                    item_of=e.get("item_of"),
                    item_kind=Kind(e["item_kind"]) if e.get("item_kind") else None,
                    children=tuple(e.get("children", ())),
                    options=tuple(e.get("options", ())),
                    effect=e.get("effect"),
                    leads_to=e.get("leads_to"),
                    line=e.get("line"),
                )
                for e in data["elements"]
            )
            screens = tuple(
                ScreenSymbol(s["name"], s.get("description", ""), tuple(s.get("elements", ())), s.get("line"))
                for s in data["screens"]
            )
            return cls(data["app"], data["package"], data["start_screen"], screens, elements, data.get("source"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed symbol table: {exc}") from exc

