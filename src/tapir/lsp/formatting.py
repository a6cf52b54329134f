"""Formatting: ``tapir fmt`` on the editor's text (``tapir.service.formatting``), as one edit
of the whole document; a script with syntax errors is left alone (and its errors are shown
by the diagnostics)."""

from __future__ import annotations

from lsprotocol import types as T

from tapir.lsp.convert import to_range
from tapir.lsp.server import TapirServer
from tapir.service.formatting import format_source

__all__ = ["register"]


def register(server: TapirServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_FORMATTING)
    @server.guard(lambda: [])
    def on_formatting(params: T.DocumentFormattingParams) -> list[T.TextEdit]:
        script = server.script(params.text_document.uri)
        source = server.text_of(script.uri)
        result = format_source(source)
        if result.text is None or result.text == script.view.text:
            return []
        index = script.view.index
        return [T.TextEdit(to_range(index, index.span(0, len(index.text))), result.text)]
