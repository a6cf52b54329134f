"""Build the checker's ``SymbolTable`` from an app document, or read one ``tapir compile`` wrote."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from tapir.core.document import AppDocument
from tapir.core.errors import DocumentError
from tapir.docgen.loader import load_document
from tapir.dsl.symbols import SYMBOLS_FORMAT, ElementSymbol, ScreenSymbol, SymbolTable


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
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise DocumentError(f"cannot read the document: {exc.strerror or exc}", filename=str(p)) from exc
        except ValueError:
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
