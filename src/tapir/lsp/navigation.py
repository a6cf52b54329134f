"""Go to definition (an element to its key in the app document, a name to the binding that
reaches it, a call to its ``def``) and find references (``tapir.service.navigation``).

A location in the document file is converted with that file's own line index, so that its
UTF-16 columns are right too.
"""

from __future__ import annotations

from lsprotocol import types as T

from tapir.core.positions import LineIndex
from tapir.lsp.convert import from_position, to_range, uri_of
from tapir.lsp.server import Script, TapirServer
from tapir.service.navigation import Location, definition, references

__all__ = ["register"]


def _locations(server: TapirServer, script: Script, found: list[Location]) -> list[T.Location]:
    out = []
    indexes: dict[str, LineIndex] = {}
    for loc in found:
        if loc.path is None or loc.path == str(script.view.path):
            out.append(T.Location(script.uri, to_range(script.view.index, loc.span)))
            continue
        index = indexes.get(loc.path)
        if index is None:
            loaded = script.view.document
            text = loaded.text if loaded is not None and str(loaded.path) == loc.path else None
            index = indexes[loc.path] = LineIndex(text if text is not None else server.service.text_of(loc.path))
        out.append(T.Location(uri_of(loc.path), to_range(index, loc.span)))
    return out


def register(server: TapirServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_DEFINITION)
    @server.guard(lambda: [])
    def on_definition(params: T.DefinitionParams) -> list[T.Location]:
        script = server.script(params.text_document.uri)
        at = from_position(script.view.index, params.position)
        return _locations(server, script, definition(script.view, at))

    @server.feature(T.TEXT_DOCUMENT_REFERENCES)
    @server.guard(lambda: [])
    def on_references(params: T.ReferenceParams) -> list[T.Location]:
        script = server.script(params.text_document.uri)
        at = from_position(script.view.index, params.position)
        found = references(script.view, at, params.context.include_declaration)
        return _locations(server, script, found)
