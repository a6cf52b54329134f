"""A stand-in language server for testing editor configurations without ``tapir lsp``.

Real pygls over stdio. It reports every ``$screen__nope...`` reference as an unknown element,
completes two element names, and exits with status 3 on the ``stub.crash`` command (so that an
editor's restart logic can be tested). Run: ``python3 tests/lsp_stub_server.py``.
"""

from __future__ import annotations

import os
import re

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("tapir-stub", "0.1")
UNKNOWN = re.compile(r"\$\w+__nope\w*")
ELEMENTS = ("$songs_screen__song_list", "$songs_screen__song_title")


def _publish(uri: str) -> None:
    text = server.workspace.get_text_document(uri).source
    diagnostics = [
        types.Diagnostic(
            range=types.Range(types.Position(line, m.start()), types.Position(line, m.end())),
            message=f"unknown element {m.group()}",
            severity=types.DiagnosticSeverity.Error,
            code="unknown-element",
            source="tapir-stub",
        )
        for line, content in enumerate(text.split("\n"))
        for m in UNKNOWN.finditer(content)
    ]
    server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(params: types.DidOpenTextDocumentParams) -> None:
    _publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(params: types.DidChangeTextDocumentParams) -> None:
    _publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_COMPLETION)
def completion(params: types.CompletionParams) -> types.CompletionList:
    items = [types.CompletionItem(label=name, kind=types.CompletionItemKind.Variable) for name in ELEMENTS]
    return types.CompletionList(is_incomplete=False, items=items)


@server.command("stub.crash")
def crash(*_args: object) -> None:
    os._exit(3)


if __name__ == "__main__":
    server.start_io()
