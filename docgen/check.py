"""Check a script file against its app document: find the document, load its symbols, check.

The document comes from ``--doc`` or, failing that, the script's first-line comment
``# doc: path/app.yaml`` (relative to the script). Symbols are cached per document file and
modification time, so an editor re-checking on every keystroke does not reload the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tapir.docgen.symbols import load_symbols
from tapir.dsl.checker import Diagnostic, check_source, doc_comment
from tapir.dsl.errors import DocumentError
from tapir.dsl.symbols import SymbolTable

_CACHE: dict[Path, tuple[int, SymbolTable]] = {}


@dataclass(frozen=True)
class ScriptCheck:
    source: str
    document: Path | None
    symbols: SymbolTable | None
    diagnostics: list[Diagnostic]


def document_for(script: Path, source: str, explicit: str | Path | None = None) -> Path | None:
    """The document a script is checked against: ``explicit``, else its ``# doc:`` comment."""
    if explicit is not None:
        return Path(explicit)
    named = doc_comment(source)
    if named is None:
        return None
    path = Path(named)
    return path if path.is_absolute() else script.parent / path


def symbols_for(document: Path) -> SymbolTable:
    """Symbols of ``document`` (raises ``DocumentError``), cached by path and modification time."""
    key = document.resolve()
    try:
        mtime = key.stat().st_mtime_ns
    except OSError as exc:
        raise DocumentError(f"cannot read the app document: {exc.strerror or exc}", filename=str(document)) from exc
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    table = load_symbols(document)
    _CACHE[key] = (mtime, table)
    return table


def check_file(script: str | Path, doc: str | Path | None = None, source: str | None = None) -> ScriptCheck:
    """Diagnostics of the script at ``script`` (its text may be given, e.g. an unsaved buffer)."""
    path = Path(script)
    text = path.read_text(encoding="utf-8") if source is None else source
    document = document_for(path, text, doc)
    symbols = symbols_for(document) if document is not None else None
    return ScriptCheck(text, document, symbols, check_source(text, symbols, str(script)))
