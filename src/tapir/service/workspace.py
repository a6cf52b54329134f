"""The ``Workspace``: the language service's one entry point, for the command line, the language
server, the REPL and the code generator.

    ws = Workspace()                                   # or Workspace(root) for an editor's folder
    result = ws.check("flows/play.tap")                # CheckResult: every problem, by position
    ws.open("flows/play.tap", unsaved_text)            # an editor's buffer (update, close)
    ws.complete("flows/play.tap", (4, 12))             # [CompletionItem, ...]
    ws.hover(path, (2, 5)); ws.definition(path, (2, 5)); ws.references(path, (2, 5))
    ws.document_symbols(path); ws.signature_help(path, (3, 20)); ws.semantic_tokens(path)
    ws.code_actions(path, span); ws.format(path); Workspace.input_status("if x:")

Positions are 1-based ``(line, column)`` in code points, or ``Position``s; ``ws.from_lsp(path,
line, character)`` converts an editor's UTF-16 position. The workspace finds each script's
document (``--doc``, the script's ``# doc:`` line, or ``tapir.toml``), loads it once per change of
its file, and keeps each script's analysis until its text, its document or the project
configuration changes; every query is a pure function of that analysis (``ScriptView``) and the
position, in the modules beside this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tapir.core.diagnostics import Diagnostic, TextEdit
from tapir.core.errors import UsageError
from tapir.core.positions import Position, Span, normalize_newlines
from tapir.service.actions import CodeAction, code_actions
from tapir.service.completion import CompletionItem, complete
from tapir.service.config import CONFIG_NAME, ConfigError, ProjectConfig, SafetyConfig, find_config, load_config
from tapir.service.documents import DocumentRef, DocumentStore, LoadedDocument, find_document
from tapir.service.formatting import FormatResult, format_source
from tapir.service.hover import Hover, hover
from tapir.service.navigation import Location, definition, references
from tapir.service.outline import DocumentSymbol, document_symbols
from tapir.service.repl import InputStatus, input_status
from tapir.service.script import CheckResult, FileDiagnostics, ScriptView, build_view, check_result
from tapir.service.semantic import SemanticToken, semantic_tokens
from tapir.service.signatures import SignatureHelp, signature_help

__all__ = ["At", "Workspace"]

#: A position: ``Position``, or ``(line, column)`` 1-based in code points.
At = Position | tuple[int, int]


@dataclass(frozen=True)
class _Cached:
    text: str
    doc: str | None
    ref: DocumentRef | None
    loaded: LoadedDocument | None
    config: object
    view: ScriptView


class Workspace:
    """Scripts, their documents and the project settings, with every query on them."""

    def __init__(self, root: str | Path | None = None) -> None:
        #: The project folder an editor opened (None: each script's own folder decides).
        self.root = Path(root).resolve() if root is not None else None
        self.documents = DocumentStore()
        self._buffers: dict[Path, str] = {}
        self._views: dict[Path, _Cached] = {}
        self._configs: dict[Path, tuple[tuple[int, int] | str, ProjectConfig | ConfigError]] = {}
        #: ``tapir.toml`` files open in an editor, with their unsaved text.
        self._config_buffers: dict[Path, str] = {}

    # -- editor buffers ---------------------------------------------------------------------------------

    def open(self, path: str | Path, text: str) -> None:
        """An editor opened ``path``: its text is ``text`` (not the file's) until ``close``."""
        self._buffers[self._key(path)] = text

    update = open

    def close(self, path: str | Path) -> None:
        key = self._key(path)
        self._buffers.pop(key, None)
        self._views.pop(key, None)

    def open_document(self, path: str | Path, text: str) -> None:
        """An editor opened an app document or ``tapir.toml``: its unsaved ``text`` is what the
        scripts that use it are checked against, until ``close_document``."""
        key = self._key(path)
        if key.name == CONFIG_NAME:
            self._config_buffers[key] = text
        else:
            self.documents.open(key, text)

    def close_document(self, path: str | Path) -> bool:
        """The editor closed it: the file is read again. False when it was not open."""
        key = self._key(path)
        if key.name == CONFIG_NAME:
            return self._config_buffers.pop(key, None) is not None
        return self.documents.close(key)

    def text_of(self, path: str | Path) -> str:
        """The script's text: the open buffer's, else the file's (``UsageError`` if unreadable)."""
        key = self._key(path)
        if key in self._buffers:
            return self._buffers[key]
        p = Path(path)
        if p.is_dir():
            raise UsageError(f"{path} is a directory, not a script file")
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise UsageError(f"no such file: {path}") from None
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise UsageError(f"{path} is not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line}"
                             " (save the script as UTF-8)") from None

    @staticmethod
    def _key(path: str | Path) -> Path:
        return Path(path).resolve()

    # -- the project --------------------------------------------------------------------------------------

    def config_for(self, path: str | Path) -> ProjectConfig | None:
        """The ``tapir.toml`` that governs ``path`` (None: none); ``ConfigError`` if it is invalid."""
        found = self._config(Path(path))
        if isinstance(found, ConfigError):
            raise found
        return found

    def _config(self, path: Path) -> ProjectConfig | ConfigError | None:
        # a buffer with no folder on disk (an editor's untitled file) belongs to the workspace root
        base = path if path.parent.exists() else (self.root or Path.cwd())
        config_path = find_config(base)
        if config_path is None:
            return None
        buffer = self._config_buffers.get(config_path.resolve())
        stamp: tuple[int, int] | str
        if buffer is not None:
            stamp = buffer
        else:
            try:
                st = config_path.stat()
            except OSError:
                return None
            stamp = (st.st_mtime_ns, st.st_size)
        hit = self._configs.get(config_path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        try:
            loaded: ProjectConfig | ConfigError = load_config(config_path, buffer)
        except ConfigError as exc:
            loaded = exc
        self._configs[config_path] = (stamp, loaded)
        return loaded

    def document_for(self, path: str | Path, text: str | None = None, doc: str | Path | None = None
                     ) -> DocumentRef | None:
        """Where the script's document is: ``doc`` (--doc), else its ``# doc:`` line, else
        ``tapir.toml``'s ``[documents]``; None when nothing names one."""
        source = self.text_of(path) if text is None else text
        found = self._config(Path(path))
        return find_document(Path(path), source, doc, found if isinstance(found, ProjectConfig) else None)

    def load_document(self, path: str | Path) -> LoadedDocument:
        """The document at ``path``, loaded (again only when its file changed)."""
        return self.documents.load(Path(path))

    def dependents(self, document: str | Path) -> list[Path]:
        """The scripts seen so far (open or checked) whose document is ``document``: what to
        check again when it changes."""
        target = Path(document).resolve()
        return [p for p, c in self._views.items() if c.ref is not None and c.ref.path.resolve() == target]

    # -- analysis -------------------------------------------------------------------------------------------

    def view(self, path: str | Path, text: str | None = None, doc: str | Path | None = None) -> ScriptView:
        """Everything known of a script (its analysis, cached until something it depends on changes)."""
        key = self._key(path)
        source = text if text is not None else self.text_of(path)
        config = self._config(Path(path))
        ref = find_document(Path(path), source, doc, config if isinstance(config, ProjectConfig) else None)
        loaded = self.documents.load(ref.path) if ref is not None else None
        hit = self._views.get(key)
        doc_key = str(doc) if doc is not None else None
        if hit is not None and hit.text == source and hit.doc == doc_key and hit.ref == ref and hit.loaded is loaded \
                and hit.config is config:
            return hit.view
        extra: tuple[Diagnostic, ...] = ()
        related: tuple[FileDiagnostics, ...] = ()
        if isinstance(config, ConfigError):
            extra = (Diagnostic("config", "error", Span(1, 1, 1, 1, 0, 0),
                                f"the project's {config.path.name} is invalid: {config.problems[0].message}",
                                hint=f"see {config.path}"),)
            related = (FileDiagnostics(str(config.path), tuple(config.problems), config.text),)
        view = build_view(Path(path), source, ref, loaded, extra, related, hit.view.parsed if hit else None)
        self._views[key] = _Cached(source, doc_key, ref, loaded, config, view)
        return view

    def check(self, path: str | Path, text: str | None = None, doc: str | Path | None = None) -> CheckResult:
        """Every problem of the script: syntax, checks against its document, the document and
        project files it depends on (``CheckResult.related``)."""
        source = text if text is not None else self.text_of(path)
        return check_result(self.view(path, source, doc), source)

    def warnings_policy(self, path: str | Path) -> str:
        """What ``tapir run``/``tapir test`` do with warnings: ``warn``, ``error`` or ``ignore``
        (``tapir.toml`` [check] warnings)."""
        found = self._config(Path(path))
        return found.warnings if isinstance(found, ProjectConfig) else "warn"

    def safety_config(self, path: str | Path) -> SafetyConfig | None:
        """The project's ``[safety]`` settings for a script (``tapir.toml``), None without any."""
        found = self._config(Path(path))
        return found.safety if isinstance(found, ProjectConfig) else None

    # -- positions ------------------------------------------------------------------------------------------

    def position(self, path: str | Path, at: At) -> Position:
        """``at`` with its offset in the script."""
        return self._at(path, at)[1]

    def from_lsp(self, path: str | Path, line: int, character: int) -> Position:
        """An editor's position (0-based line, UTF-16 character) in the script's terms."""
        return self.view(path).index.from_lsp(line, character)

    def _at(self, path: str | Path, at: At) -> tuple[ScriptView, Position]:
        view = self.view(path)
        if isinstance(at, Position):
            return view, at if at.offset >= 0 else view.at(at.line, at.column)
        return view, view.at(at[0], at[1])

    # -- queries ----------------------------------------------------------------------------------------------

    def complete(self, path: str | Path, at: At) -> list[CompletionItem]:
        view, pos = self._at(path, at)
        return complete(view, pos)

    def hover(self, path: str | Path, at: At) -> Hover | None:
        view, pos = self._at(path, at)
        return hover(view, pos)

    def definition(self, path: str | Path, at: At) -> list[Location]:
        view, pos = self._at(path, at)
        return definition(view, pos)

    def references(self, path: str | Path, at: At, include_declaration: bool = True) -> list[Location]:
        view, pos = self._at(path, at)
        return references(view, pos, include_declaration)

    def document_symbols(self, path: str | Path) -> list[DocumentSymbol]:
        return document_symbols(self.view(path))

    def signature_help(self, path: str | Path, at: At) -> SignatureHelp | None:
        view, pos = self._at(path, at)
        return signature_help(view, pos)

    def semantic_tokens(self, path: str | Path) -> list[SemanticToken]:
        return semantic_tokens(self.view(path))

    def code_actions(self, path: str | Path, span: Span) -> list[CodeAction]:
        return code_actions(self.view(path), span)

    def format(self, path: str | Path) -> FormatResult:
        """The script formatted (``tapir fmt``); ``text`` is None when it has syntax errors."""
        return format_source(self.text_of(path))

    def formatting(self, path: str | Path) -> list[TextEdit]:
        """The edits that format the script (none when formatted already or unparseable)."""
        source = self.text_of(path)
        result = format_source(source)
        if result.text is None or result.text == source:
            return []
        index = self.view(path).index
        return [TextEdit(index.span(0, len(normalize_newlines(source))), result.text)]

    @staticmethod
    def input_status(text: str) -> InputStatus:
        """Whether typed input is complete (a REPL runs it), incomplete or invalid."""
        return input_status(text)

