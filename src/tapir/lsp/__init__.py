"""The Tapir language server (``tapir lsp``): the language service (``tapir.service``) spoken
over the Language Server Protocol with pygls, for any editor.

    from tapir.lsp import ServerOptions, create_server
    create_server(ServerOptions()).start_io()      # what `tapir lsp` runs (stdio)
    serve_tcp("127.0.0.1", 2087, ServerOptions(), ready=print)   # `tapir lsp --tcp 2087`

``server.py`` holds the server (one ``Workspace``, handlers that cannot crash it, the client's
process watched); one module per feature registers its handlers, each a thin conversion around
the service's query: ``diagnostics`` (on open and change, debounced; documents and
``tapir.toml`` watched), ``completion``, ``hover``, ``navigation`` (definition, references),
``symbols``, ``signatures``, ``semantic`` (tokens), ``actions`` (quick fixes), ``formatting``
(``tapir fmt``); ``lifecycle`` (initialize, file watchers); ``convert`` turns spans into LSP
ranges and back. docs/editors.md describes the server for users.
"""

from tapir.lsp.server import ServerOptions, TapirServer, create_server, serve_stdio, serve_tcp

__all__ = ["ServerOptions", "TapirServer", "create_server", "serve_stdio", "serve_tcp"]
