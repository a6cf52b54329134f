"""Document symbols: the script's outline (functions with what they define, module variables)
from ``tapir.service.outline``, for the editor's outline view and "go to symbol"."""

from __future__ import annotations

from lsprotocol import types as T

from tapir.core.positions import LineIndex
from tapir.lsp.convert import to_range
from tapir.lsp.server import TapirServer
from tapir.service.outline import DocumentSymbol, document_symbols

__all__ = ["register"]

KIND = {"function": T.SymbolKind.Function, "variable": T.SymbolKind.Variable, "parameter": T.SymbolKind.Variable}


def _symbol(index: LineIndex, s: DocumentSymbol) -> T.DocumentSymbol:
    return T.DocumentSymbol(
        name=s.name, kind=KIND.get(s.kind, T.SymbolKind.Variable), range=to_range(index, s.span),
        selection_range=to_range(index, s.selection), detail=s.detail or None,
        children=[_symbol(index, c) for c in s.children] or None,
    )


def register(server: TapirServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @server.guard(lambda: [])
    def on_document_symbol(params: T.DocumentSymbolParams) -> list[T.DocumentSymbol]:
        script = server.script(params.text_document.uri)
        return [_symbol(script.view.index, s) for s in document_symbols(script.view)]
