"""Which app document a script is written against, and that document loaded (cached by file time).

    ref = find_document(Path("flows/play.tap"), source, explicit=None, config=config)
    ref.path, ref.origin          # Path('.../music.yaml'), 'comment' | 'option' | 'config'
    loaded = DocumentStore().load(ref.path)
    loaded.symbols, loaded.document, loaded.problems

This is the one place a script's document is looked up: ``--doc`` (``explicit``), else the
script's first line ``# doc: path/app.yaml`` (relative to the script), else the ``[documents]``
globs of the project's ``tapir.toml``. ``DocumentStore.load`` never raises: a document that is
missing or invalid comes back with its problems (``Diagnostic``s in the document's own file),
and is loaded again only when its file changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from tapir.core.diagnostics import Diagnostic
from tapir.core.document import AppDocument
from tapir.core.errors import DocumentError
from tapir.core.nesting import load_json
from tapir.core.positions import Span
from tapir.docgen.loader import MAX_DOCUMENT_BYTES, loads_document, read_document_text
from tapir.docgen.symbols import build_symbols
from tapir.dsl.checker import DOC_COMMENT
from tapir.dsl.symbols import SYMBOLS_FORMAT, SymbolTable
from tapir.service.config import ProjectConfig

__all__ = ["DocumentRef", "DocumentStore", "LoadedDocument", "find_document"]


@dataclass(frozen=True)
class DocumentRef:
    """Where a script's document is, and what named it."""

    path: Path
    #: ``option`` (--doc), ``comment`` (the script's ``# doc:`` first line) or ``config`` (tapir.toml).
    origin: str
    #: Where the script names it (the ``# doc:`` comment's path), for diagnostics about it.
    span: Span | None = None
    #: The ``tapir.toml`` that named it (origin ``config``).
    config: Path | None = None

    def describe(self) -> str:
        return {"option": "--doc", "comment": "the script's `# doc:` line",
                "config": f"{self.config.name if self.config else 'tapir.toml'} [documents]"}[self.origin]


def find_document(script: Path | None, source: str, explicit: str | Path | None = None,
                  config: ProjectConfig | None = None) -> DocumentRef | None:
    """The document ``script`` (whose text is ``source``) is checked and run against, or None."""
    if explicit is not None and str(explicit):
        return DocumentRef(Path(explicit), "option")
    first = source.split("\n", 1)[0]
    bom = 1 if first.startswith("\ufeff") else 0
    m = DOC_COMMENT.match(first[bom:].rstrip("\r"))
    if m is not None:
        named = Path(m.group("path"))
        base = script.parent if script is not None else Path.cwd()
        start, end = m.start("path"), m.end("path")
        span = Span(1, start + 1, 1, end + 1, start, end)
        return DocumentRef(named if named.is_absolute() else base / named, "comment", span)
    if config is not None and script is not None:
        found = config.document_for(script)
        if found is not None:
            return DocumentRef(found[0], "config", None, config.path)
    return None


@dataclass(frozen=True)
class LoadedDocument:
    """An app document as loaded: its symbols (None when it could not be used), the document
    itself (None for a compiled ``.symbols.json``), and its problems, errors and warnings."""

    path: Path
    symbols: SymbolTable | None
    document: AppDocument | None
    problems: tuple[Diagnostic, ...]
    text: str | None = None

    @property
    def ok(self) -> bool:
        return self.symbols is not None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(p for p in self.problems if p.is_error)

    def element_span(self, name: str) -> Span | None:
        """Where element ``name`` is defined in the document's text (its key), if known."""
        sym = self.symbols.element(name) if self.symbols is not None else None
        if sym is None or sym.line is None:
            return None
        return self._key_span(sym.line, name)

    def screen_span(self, name: str) -> Span | None:
        sym = self.symbols.screen(name) if self.symbols is not None else None
        if sym is None or sym.line is None:
            return None
        return self._key_span(sym.line, name)

    def _key_span(self, line: int, key: str) -> Span:
        lines = (self.text or "").splitlines()
        text = lines[line - 1] if 1 <= line <= len(lines) else ""
        col = text.find(key)
        if col < 0:
            return Span(line, 1, line, 1)
        return Span(line, col + 1, line, col + 1 + len(key))


class DocumentStore:
    """Loaded documents by path, each reloaded only when its file's time or size changes (or,
    for a document open in an editor, its unsaved text)."""

    def __init__(self) -> None:
        self._cache: dict[Path, tuple[tuple[int, int] | str, LoadedDocument]] = {}
        #: Documents open in an editor: their text is used instead of the file's.
        self._buffers: dict[Path, str] = {}
        #: How many times a document was actually read (for tests of the cache).
        self.loads = 0

    def open(self, path: Path, text: str) -> None:
        """An editor has ``path`` open with ``text`` (unsaved changes included) until ``close``."""
        self._buffers[path.resolve()] = text

    def close(self, path: Path) -> bool:
        """The editor closed ``path``: its file is read again. False when it was not open."""
        return self._buffers.pop(path.resolve(), None) is not None

    def load(self, path: Path) -> LoadedDocument:
        key_path = path.resolve()
        buffer = self._buffers.get(key_path)
        if buffer is not None:
            hit = self._cache.get(key_path)
            if hit is not None and hit[0] == buffer:  # (a string compare: memcmp, not a parse)
                return hit[1] if hit[1].path == path else replace(hit[1], path=path)
            loaded = self._read(path, buffer)
            self._cache[key_path] = (buffer, loaded)
            return loaded
        try:
            st = key_path.stat()
        except OSError as exc:
            what = "does not exist" if not key_path.exists() else f"cannot be read: {exc.strerror or exc}"
            return LoadedDocument(path, None, None, (Diagnostic("document-missing", "error", None,
                                                                f"the app document {path} {what}"),))
        if key_path.is_dir():
            return LoadedDocument(path, None, None, (Diagnostic("document-missing", "error", None,
                                                                f"the app document {path} is a directory"),))
        stamp = (st.st_mtime_ns, st.st_size)
        hit = self._cache.get(key_path)
        if hit is not None and hit[0] == stamp:
            return hit[1] if hit[1].path == path else replace(hit[1], path=path)
        loaded = self._read(path)
        self._cache[key_path] = (stamp, loaded)
        return loaded

    def forget(self, path: Path) -> None:
        self._cache.pop(path.resolve(), None)

    def _read(self, path: Path, text: str | None = None) -> LoadedDocument:
        self.loads += 1
        if text is None:
            try:  # only regular .yaml/.yml/.json files, size-capped (a `# doc:` line names any path)
                text = read_document_text(path)
            except DocumentError as exc:
                return LoadedDocument(path, None, None, (Diagnostic("document", "error", None, exc.message),))
        elif len(text) > MAX_DOCUMENT_BYTES:  # an editor's buffer: the same cap as a file
            return LoadedDocument(path, None, None, (Diagnostic(
                "document", "error", None,
                f"{path} is too large to be an app document ({len(text):,} characters; at most "
                f"{MAX_DOCUMENT_BYTES:,})"),))
        if path.suffix == ".json":
            compiled = _compiled_symbols(path, text)
            if compiled is not None:
                return compiled
        result = loads_document(text, source=str(path))
        if result.document is None:
            return LoadedDocument(path, None, None, result.problems, text)
        return LoadedDocument(path, build_symbols(result.document), result.document, result.problems, text)


def _compiled_symbols(path: Path, text: str) -> LoadedDocument | None:
    """A symbol table ``tapir compile`` wrote, or None when the JSON is something else."""
    try:
        data = load_json(text, filename=str(path))
    except DocumentError as exc:  # nested past the limit: the same refusal as the YAML loader's
        return LoadedDocument(path, None, None, tuple(exc.problems), text)
    except ValueError:
        return None  # the document loader reports where the JSON is broken
    if not isinstance(data, dict) or data.get("format") != SYMBOLS_FORMAT:
        return None
    try:
        table = SymbolTable.from_dict(data)
    except ValueError as exc:
        return LoadedDocument(path, None, None, (Diagnostic("document", "error", None, str(exc)),), text)
    # the compiled table names its document relative to itself
    if table.source and not Path(table.source).is_absolute():
        table = replace(table, source=os.path.normpath(path.parent / table.source))
    return LoadedDocument(path, table, None, (), text)
