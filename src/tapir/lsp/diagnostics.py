"""Problems as you type: scripts are checked when opened and, debounced, after each change; a
change to an app document or ``tapir.toml`` (saved, or reported by the client's file watcher)
checks again the open scripts that use it.

    checker = Checker(server); checker.schedule(uri)     # what the handlers below do

A check is the service's analysis of the script's current text (cached, so a completion that
came first has already paid for it). Results carry the document version they were computed for,
and a check whose document has changed since it was scheduled is dropped: a newer one is on its
way. A script whose document cannot be loaded gets one diagnostic on its ``# doc:`` line naming
the problem, with the document's own problems as related information; those problems (and
``tapir.toml``'s) are also published on the document's file, so the editor shows them there.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from pathlib import Path

from lsprotocol import types as T

from tapir.core.positions import LineIndex
from tapir.lsp.convert import to_diagnostic, to_range, uri_of
from tapir.lsp.server import Script, TapirServer, TooLarge
from tapir.service import CONFIG_NAME

__all__ = ["Checker", "register"]

_DOCUMENT_SUFFIXES = {".yaml", ".yml", ".json"}
#: How many of a document's problems a script's diagnostic about it lists as related information.
_RELATED_LIMIT = 5


class Checker:
    """Schedules, runs and publishes the checks of open scripts."""

    def __init__(self, server: TapirServer) -> None:
        self.server = server
        self._timers: dict[str, asyncio.TimerHandle] = {}
        #: For each script, the other files (its document, tapir.toml) it published problems on.
        self._related: dict[str, set[str]] = {}
        #: How many checks ran and were published (tests read them).
        self.published = 0
        server.on_end(self.cancel_all)

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Check ``uri`` after ``delay`` seconds (the debounce by default), replacing a check
        already waiting."""
        pending = self._timers.pop(uri, None)
        if pending is not None:
            pending.cancel()
        wait = self.server.options.debounce if delay is None else delay
        version = self._version(uri)
        loop = asyncio.get_running_loop()
        self._timers[uri] = loop.call_later(wait, self._run, uri, version)

    def cancel(self, uri: str) -> None:
        pending = self._timers.pop(uri, None)
        if pending is not None:
            pending.cancel()

    def cancel_all(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    def _version(self, uri: str) -> int | None:
        doc = self.server.document(uri)
        return doc.version if doc is not None else None

    def _run(self, uri: str, version: int | None) -> None:
        self._timers.pop(uri, None)
        if uri not in self.server.open_scripts or self._version(uri) != version:
            return  # closed, or changed since: a newer check is scheduled
        started = time.process_time()
        try:
            self.publish(uri, version)
        except Exception as exc:  # logged and answered with nothing: the next edit tries again
            why = getattr(exc, "message", None) or str(exc)
            self.server.log_error(f"checking {uri} failed: {type(exc).__name__}: {why}", exc)
        finally:
            self.server.cpu.setdefault("check", deque(maxlen=1000)).append(time.process_time() - started)

    def publish(self, uri: str, version: int | None) -> None:
        server = self.server
        try:
            script = server.script(uri)
        except TooLarge as big:
            message = (f"this script is {big.size / 1e6:.1f} MB; tapir lsp checks scripts up to "
                       f"{big.limit / 1e6:.1f} MB (tapir lsp --max-file-size), so it is not checked")
            diagnostic = T.Diagnostic(range=to_range(LineIndex(""), None), message=message,
                                      severity=T.DiagnosticSeverity.Warning, code="too-large", source="tapir")
            server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri, [diagnostic], version))
            return
        if self._version(uri) != version:
            return
        diagnostics = [to_diagnostic(script.view.index, d, self._document_problems(script) if d.code == "document"
                                     else None) for d in script.view.diagnostics]
        server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri, diagnostics, version))
        self.published += 1
        self._publish_related(uri, script)

    def _document_problems(self, script: Script) -> list[T.DiagnosticRelatedInformation]:
        loaded = script.view.document
        if loaded is None or loaded.text is None:
            return []
        index = LineIndex(loaded.text)
        doc_uri = uri_of(loaded.path)
        return [T.DiagnosticRelatedInformation(T.Location(doc_uri, to_range(index, p.span)), p.message)
                for p in loaded.errors[:_RELATED_LIMIT]]

    def _publish_related(self, uri: str, script: Script) -> None:
        """The problems of the files the script depends on, on those files; a file that no
        script reports on any more is cleared."""
        now: set[str] = set()
        for other in script.view.related:
            other_uri = uri_of(other.path)
            now.add(other_uri)
            index = LineIndex(other.text or "")
            self.server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(
                other_uri, [to_diagnostic(index, d) for d in other.diagnostics]))
        self._forget_related(uri, keep=now)
        if now:
            self._related[uri] = now

    def _forget_related(self, uri: str, keep: set[str] | None = None) -> None:
        before = self._related.pop(uri, set())
        still = set().union(*self._related.values()) if self._related else set()
        for gone in before - (keep or set()) - still:
            self.server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(gone, []))

    def closed(self, uri: str) -> None:
        self.cancel(uri)
        self.server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri, []))
        self._forget_related(uri)

    def file_changed(self, path: Path) -> None:
        """An app document or ``tapir.toml`` changed: check again the open scripts it concerns."""
        server = self.server
        if path.name == CONFIG_NAME:
            affected = list(server.open_scripts)
        elif path.suffix.lower() in _DOCUMENT_SUFFIXES:
            users = {p.resolve() for p in server.service.dependents(path)}
            affected = [u for u, p in server.open_scripts.items() if p.resolve() in users]
        else:
            return
        for uri in affected:
            self.schedule(uri)


def register(server: TapirServer) -> None:
    checker = Checker(server)
    server.checker = checker

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    @server.guard(lambda: None)
    def did_open(params: T.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = server.path_of(uri)
        if path.suffix.lower() in _DOCUMENT_SUFFIXES or path.name == CONFIG_NAME:
            server.service.open_document(path, params.text_document.text)
            checker.file_changed(path)
            return
        server.open_scripts[uri] = path
        server.service.open(path, params.text_document.text)
        checker.schedule(uri, 0)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    @server.guard(lambda: None)
    def did_change(params: T.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = server.path_of(uri)
        text = server.text_of(uri)  # pygls has applied the changes
        if uri not in server.open_scripts:
            if path.suffix.lower() in _DOCUMENT_SUFFIXES or path.name == CONFIG_NAME:
                server.service.open_document(path, text)
                checker.file_changed(path)
            return
        server.service.update(path, text)
        checker.schedule(uri)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    @server.guard(lambda: None)
    def did_close(params: T.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = server.path_of(uri)
        if server.open_scripts.pop(uri, None) is None:
            if server.service.close_document(path):
                checker.file_changed(path)
            return
        server.service.close(path)
        checker.closed(uri)

    @server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @server.guard(lambda: None)
    def did_change_watched_files(params: T.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            checker.file_changed(server.path_of(change.uri))
