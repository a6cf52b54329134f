"""Starting up: the workspace folder, the client's process, watching the files a script depends on.

On ``initialize`` the service gets the client's folder as its root (an untitled script belongs
to it) and the client's process is watched (``TapirServer.watch_parent``). On ``initialized``,
a client that lets servers register file watchers (Neovim 0.9+, most clients) is asked for
changes to app documents and ``tapir.toml``. (VS Code's client also sends them unasked,
``synchronize.fileEvents``; an event that comes twice is one re-check, the checks being
debounced.)
"""

from __future__ import annotations

import time
from typing import Any

from lsprotocol import types as T

from tapir.lsp.server import IdleCollector, TapirServer
from tapir.service import Workspace

__all__ = ["STATS", "WATCHED", "register"]

#: A request of ours: what the server has done so far (for benchmarks and bug reports).
STATS = "tapir/stats"

#: The files whose changes re-check scripts: app documents and project settings.
WATCHED = "**/{*.yaml,*.yml,*.json,tapir.toml}"


def register(server: TapirServer) -> None:
    @server.feature(T.INITIALIZE)
    @server.guard(lambda: None)
    def on_initialize(params: T.InitializeParams) -> None:
        folders = params.workspace_folders or []
        root = server.path_of(folders[0].uri) if folders else (
            server.path_of(params.root_uri) if params.root_uri else None)
        server.root = root
        server.service = Workspace(root)
        server.watch_parent(params.process_id)
        IdleCollector.ensure()

    @server.feature(STATS)
    @server.guard(dict)
    def on_stats(params: Any) -> dict[str, object]:  # (Any: pygls would pass the server for `object`)
        """The server's CPU time so far (seconds), the CPU seconds of each handler's last calls
        (and of each check), checks published, idle garbage collections, documents read: what
        a request cost the server itself, apart from the waiting of a loaded machine."""
        collector = IdleCollector.running
        return {"cpu_seconds": time.process_time(),
                "handler_cpu_seconds": {name: list(times) for name, times in server.cpu.items()},
                "checks_published": server.checker.published if server.checker is not None else 0,
                "idle_collections": collector.collections if collector is not None else 0,
                "documents_read": server.service.documents.loads}

    @server.feature(T.INITIALIZED)
    @server.guard(lambda: None)
    def on_initialized(params: T.InitializedParams) -> None:
        caps = server.client_capabilities.workspace
        watch = caps.did_change_watched_files if caps is not None else None
        if watch is None or not watch.dynamic_registration:
            return
        options = T.DidChangeWatchedFilesRegistrationOptions(watchers=[T.FileSystemWatcher(glob_pattern=WATCHED)])
        server.client_register_capability(T.RegistrationParams(registrations=[
            T.Registration(id="tapir-documents", method=T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                           register_options=options)]))

