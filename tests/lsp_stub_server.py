"""A stand-in language server for testing editor configurations without ``tapir lsp``.

Real pygls. It reports every ``$screen__nope...`` reference as an unknown element, completes two
element names, and exits with status 3 on the ``stub.crash`` command (so that an editor's restart
logic can be tested). Its command line is the real server's: ``lsp_stub_server.py [lsp] [--tcp
PORT] [ARGS...]``, stdio by default; with $TAPIR_STUB_LOG set, each start appends a JSON line
(pid, arguments, working directory, $TAPIR_STUB_MARK) to that file.
"""

from __future__ import annotations

import json
import os
import re
import sys

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


def main(argv: list[str]) -> None:
    if os.environ.get("TAPIR_STUB_LOG"):
        with open(os.environ["TAPIR_STUB_LOG"], "a", encoding="utf-8") as log:
            record = {"pid": os.getpid(), "argv": argv, "cwd": os.getcwd(), "mark": os.environ.get("TAPIR_STUB_MARK")}
            log.write(json.dumps(record) + "\n")
    if "--tcp" in argv:
        server.start_tcp("127.0.0.1", int(argv[argv.index("--tcp") + 1]))
    else:
        server.start_io()


if __name__ == "__main__":
    main(sys.argv[1:])
