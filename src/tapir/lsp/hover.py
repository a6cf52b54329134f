"""Hover: what the element, method, builtin or name under the cursor is, in Markdown
(``tapir.service.hover``): an element's kind, description, effect, options, identifiers and
how it is reached; a callable's signature and doc; a variable's type and where it is bound."""

from __future__ import annotations

from lsprotocol import types as T

from tapir.lsp.convert import from_position, to_range
from tapir.lsp.server import TapirServer
from tapir.service.hover import hover

__all__ = ["register"]


def register(server: TapirServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_HOVER)
    @server.guard(lambda: None)
    def on_hover(params: T.HoverParams) -> T.Hover | None:
        script = server.script(params.text_document.uri)
        index = script.view.index
        found = hover(script.view, from_position(index, params.position))
        if found is None:
            return None
        return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, found.contents), to_range(index, found.span))
