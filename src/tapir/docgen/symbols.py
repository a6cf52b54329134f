"""Build the checker's ``SymbolTable`` from an app document, or read one ``tapir compile`` wrote."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

from tapir.core.document import AppDocument, Identifier
from tapir.core.errors import DocumentError
from tapir.core.nesting import load_json
from tapir.docgen.loader import load_document, read_document_text
from tapir.dsl.symbols import SYMBOLS_FORMAT, ElementSymbol, ScreenSymbol, SymbolTable

#: ``@text='Settings'``, ``@content-desc="New note"`` (uiautomator), ``@alt='...'`` (the HTML dialect).
_TEXT_TEST = re.compile(r"@(?:text|content-desc|alt)\s*=\s*(?:'([^']*)'|\"([^\"]*)\")")


def identifier_texts(identifiers: tuple[Identifier, ...]) -> tuple[str, ...]:
    """The texts an element's identifiers test for equality, in order, once each."""
    found = (a or b for i in identifiers for a, b in _TEXT_TEST.findall(i.xpath))
    return tuple(dict.fromkeys(t for t in found if t.strip()))


def build_symbols(doc: AppDocument) -> SymbolTable:
    children: dict[str, list[str]] = {}
    for e in doc.elements:
        if e.item_of is not None:
            children.setdefault(e.item_of, []).append(e.name)
    elements = tuple(
        ElementSymbol(
            name=e.name,
            kind=e.kind,
            screen=e.screen,
            description=e.description,
            item_of=e.item_of,
            item_kind=e.item_kind if e.is_list else None,
            children=tuple(children.get(e.name, ())),
            options=e.options,
            effect=e.effect,
            leads_to=e.leads_to,
            line=e.line,
            texts=identifier_texts(e.identifiers),
        )
        for e in doc.elements
    )
    screens = tuple(
        ScreenSymbol(s.name, s.description, tuple(e.name for e in s.elements), s.line) for s in doc.screens
    )
    return SymbolTable(doc.app.name, doc.app.package, doc.app.start_screen, screens, elements, doc.source)


def load_symbols(path: str | Path) -> SymbolTable:
    """Symbols of the document at ``path``: an app document (YAML/JSON) or a compiled symbol table.

    Raises ``DocumentError`` when the file is neither, or the document is invalid.
    """
    p = Path(path)
    if p.suffix == ".json":
        try:  # (nested too deep: a DocumentError naming the file, as from the YAML loader)
            data = load_json(read_document_text(p), filename=str(p))
        except json.JSONDecodeError:
            data = None  # the document loader reports where the JSON is broken
        if isinstance(data, dict) and data.get("format") == SYMBOLS_FORMAT:
            try:
                table = SymbolTable.from_dict(data)
            except ValueError as exc:
                raise DocumentError(str(exc), filename=str(p)) from exc
            # The compiled table names its document relative to itself.
            if table.source and not Path(table.source).is_absolute():
                table = replace(table, source=os.path.normpath(p.parent / table.source))
            return table
    return build_symbols(load_document(p))
