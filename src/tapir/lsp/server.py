"""The Tapir language server: a pygls ``LanguageServer`` holding one ``tapir.service.Workspace``.

    server = create_server(ServerOptions(debounce=0.05))
    server.start_io()                       # what `tapir lsp` does; serve_tcp(...) for --tcp

Each feature is a module of this package with a ``register(server)`` that adds its handlers;
a handler converts the request (``tapir.lsp.convert``), asks the language service for the
script's ``ScriptView`` (``server.script(uri)``) and calls the service's pure query on it. Every
handler is wrapped by ``server.guard``: an exception in it is logged (stderr or ``--log-file``,
and the client's log) and answered with an empty result, never a crash.

Positions are UTF-16 whatever a client offers (``TapirProtocol``), since that is what the
service's ``LineIndex`` converts to. The server exits when the client closes its end of stdio,
when it says ``exit``, or when the process the client named in ``initialize`` has died.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import unquote

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.workspace import TextDocument

from tapir import __version__
from tapir.lsp.convert import path_of
from tapir.service import ScriptView, Workspace

if TYPE_CHECKING:
    from tapir.lsp.diagnostics import Checker

__all__ = ["Script", "ServerOptions", "TapirProtocol", "TapirServer", "create_server"]

logger = logging.getLogger("tapir.lsp")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ServerOptions:
    #: Seconds to wait after an edit before checking the script again (edits in between restart it).
    debounce: float = 0.05
    #: Scripts larger than this (bytes) are not analysed: one diagnostic says so.
    max_file_size: int = 1 << 20
    #: How often (seconds) to look whether the client's process is still there.
    parent_check_interval: float = 2.0
    #: False for a TCP connection: ``exit`` ends the connection, not the process.
    exit_process: bool = True


@dataclass(frozen=True)
class Script:
    """An open (or on-disk) script as the handlers see it."""

    uri: str
    path: Path
    view: ScriptView


class TooLarge(Exception):
    """The script is larger than ``ServerOptions.max_file_size``."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes")
        self.size, self.limit = size, limit


class TapirProtocol(LanguageServerProtocol):
    """pygls' protocol, with positions always in UTF-16, malformed requests answered with an
    error (pygls drops them, leaving the client waiting), and ``exit`` on a TCP connection
    closing that connection only."""

    _server: TapirServer

    @lsp_method(T.INITIALIZE)
    def lsp_initialize(self, params: T.InitializeParams) -> Generator[Any, Any, T.InitializeResult]:
        general = params.capabilities.general
        if general is not None:
            general.position_encodings = None  # UTF-16, the LSP default: LineIndex speaks it
        result = yield from super().lsp_initialize(params)
        return result

    @lsp_method(T.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        if self._server.options.exit_process:
            yield from super().lsp_exit(*args)
            return
        self._server.end_connection()

    def handle_message(self, message: Any) -> None:
        IdleCollector.last_activity = time.monotonic()
        super().handle_message(message)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data and isinstance(data["id"], int | str):
                self._send_response(data["id"], None, exc.to_response_error())
            raise


class TapirServer(LanguageServer):
    """The server: pygls' ``LanguageServer`` with Tapir's ``Workspace`` and options."""

    def __init__(self, options: ServerOptions | None = None) -> None:
        super().__init__("tapir", __version__, protocol_cls=TapirProtocol,
                         text_document_sync_kind=T.TextDocumentSyncKind.Incremental)
        self.options = options or ServerOptions()
        self.service = Workspace()
        self.root: Path | None = None
        #: The scripts the client has open (uri -> path).
        self.open_scripts: dict[str, Path] = {}
        #: CPU seconds each handler took, its last calls (``tapir/stats`` reports them).
        self.cpu: dict[str, deque[float]] = {}
        #: Schedules and publishes the checks (tapir.lsp.diagnostics registers it).
        self.checker: Checker | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._on_end: list[Callable[[], None]] = []

    # -- the scripts ------------------------------------------------------------------------------

    def path_of(self, uri: str) -> Path:
        return path_of(uri, self.root)

    def document(self, uri: str) -> TextDocument | None:
        """The client's copy of ``uri`` when it has it open."""
        found: TextDocument | None = self.workspace.text_documents.get(unquote(uri))
        return found

    def text_of(self, uri: str) -> str:
        """The text of an open document (the client's), else of the file."""
        doc = self.document(uri)
        if doc is not None:
            return doc.source
        return self.service.text_of(self.path_of(uri))

    def script(self, uri: str) -> Script:
        """The script's current analysis (cached by the service until its text or document
        changes). Raises ``TooLarge`` for a script past the size limit."""
        path = self.path_of(uri)
        text = self.text_of(uri)
        if len(text) > self.options.max_file_size:
            raise TooLarge(len(text.encode("utf-8", "replace")), self.options.max_file_size)
        return Script(uri, path, self.service.view(path, text))

    # -- handlers that never crash the server -----------------------------------------------------

    def guard(self, default: Callable[[], object]) -> Callable[[F], F]:
        """Wrap a handler: an exception is logged (with its traceback) and answered with
        ``default()``; a script too large to analyse gets ``default()`` quietly."""

        def decorate(handler: F) -> F:
            timings = self.cpu.setdefault(handler.__name__, deque(maxlen=1000))

            @functools.wraps(handler)
            def guarded(*args: Any) -> Any:
                started = time.process_time()
                try:
                    return handler(*args)
                except TooLarge:
                    return default()
                except Exception as exc:  # a bug: logged and answered, the server goes on
                    why = getattr(exc, "message", None) or str(exc)
                    self.log_error(f"{handler.__name__} failed: {type(exc).__name__}: {why}", exc)
                    return default()
                finally:
                    timings.append(time.process_time() - started)

            return cast(F, guarded)

        return decorate

    def log_error(self, message: str, exc: BaseException | None = None) -> None:
        logger.error("%s", message, exc_info=exc)
        try:
            self.window_log_message(T.LogMessageParams(type=T.MessageType.Error, message=f"tapir: {message}"))
        except Exception:  # the client is gone: the log file has it
            logger.debug("could not send a log message", exc_info=True)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would show every protocol error as a pop-up; the log is the place for them
        logger.error("protocol error (%s): %s", getattr(source, "__name__", source), error)

    # -- the client's process -------------------------------------------------------------------------

    def watch_parent(self, pid: int | None) -> None:
        """Exit (or, over TCP, drop the connection) when process ``pid`` is gone: an editor that
        crashed leaves no server behind."""
        if pid is None or pid <= 0 or self._watcher is not None or self.options.parent_check_interval <= 0:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._watcher = loop.create_task(self._watch(pid))

    async def _watch(self, pid: int) -> None:
        while True:
            await asyncio.sleep(self.options.parent_check_interval)
            if not _alive(pid):
                logger.warning("the client's process %d is gone: exiting", pid)
                if self.options.exit_process:
                    logging.shutdown()
                    os._exit(0)  # stdin's reader thread cannot be interrupted; nothing is left to save
                self.end_connection()
                return

    # -- the end ----------------------------------------------------------------------------------------

    def on_end(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the connection ends (timers to cancel)."""
        self._on_end.append(callback)

    def end_connection(self) -> None:
        """Stop serving this client (a TCP connection's ``exit``, or its process gone)."""
        self.cleanup()
        if self._stop_event is not None:
            self._stop_event.set()
        writer = self.protocol.writer
        if writer is not None:
            try:
                writer.close()
            except Exception:
                logger.debug("closing the connection failed", exc_info=True)

    def cleanup(self) -> None:
        for callback in self._on_end:
            callback()
        self._on_end.clear()
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None


class IdleCollector:
    """Python's cyclic garbage collector, run while the editor is quiet instead of in the middle
    of a request.

    A server holds large analyses; a collection that the allocations of a check happen to
    trigger scans all of them (0.2 s for a 1,000-line script on a loaded machine), which is a
    completion arriving late. So automatic collection is off while serving; the collector runs
    once the client has been quiet for ``quiet`` seconds, and at once when more than ``limit``
    objects were allocated since the last run (someone typing for minutes without a pause).
    Reference counting frees everything else as usual.
    """

    #: When a client last said something (``time.monotonic``), any client of the process.
    last_activity = 0.0
    #: The process's collector, once a server has started it.
    running: IdleCollector | None = None

    def __init__(self, quiet: float = 0.5, every: float = 0.25, limit: int = 2_000_000) -> None:
        self.quiet, self.every, self.limit = quiet, every, limit
        self.collections = 0
        self._task: asyncio.Task[None] | None = None
        self._was_enabled = gc.isenabled()

    @classmethod
    def ensure(cls) -> None:
        """Start the process's collector (once; within the running event loop)."""
        if cls.running is None:
            cls.running = cls()
            cls.running.start()

    def start(self) -> None:
        gc.collect()
        gc.freeze()  # what the server loaded at start (modules, the registry) is never garbage
        gc.disable()
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._was_enabled:
            gc.enable()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            allocated = gc.get_count()[0]
            quiet = time.monotonic() - IdleCollector.last_activity >= self.quiet
            if (quiet and allocated > 10_000) or allocated > self.limit:
                gc.collect()
                self.collections += 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    return True


def create_server(options: ServerOptions | None = None) -> TapirServer:
    """A server with every feature registered."""
    from tapir.lsp import (
        actions,
        completion,
        diagnostics,
        formatting,
        hover,
        lifecycle,
        navigation,
        semantic,
        signatures,
        symbols,
    )

    server = TapirServer(options)
    for feature in (lifecycle, diagnostics, completion, hover, navigation, symbols, signatures, semantic, actions,
                    formatting):
        feature.register(server)
    return server


def serve_stdio(options: ServerOptions) -> None:
    """Serve one client on stdin/stdout until it closes them, says ``exit`` or dies."""
    create_server(options).start_io()


async def _serve_tcp(host: str, port: int, options: ServerOptions, ready: Callable[[int], None]) -> None:
    from pygls.io_ import run_async

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        logger.info("client connected from %s", peer)
        server = create_server(replace(options, exit_process=False))
        server.protocol.set_writer(writer)  # type: ignore[arg-type]
        server._stop_event = threading.Event()
        try:
            await run_async(stop_event=server._stop_event, reader=reader, protocol=server.protocol, logger=logger,
                            error_handler=server.report_server_error)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            logger.info("client %s went away: %s", peer, exc)
        finally:
            server.cleanup()
            writer.close()
            logger.info("client %s disconnected", peer)

    listener = await asyncio.start_server(connection, host, port)
    ready(int(listener.sockets[0].getsockname()[1]))
    async with listener:
        await listener.serve_forever()


def serve_tcp(host: str, port: int, options: ServerOptions, ready: Callable[[int], None]) -> None:
    """Listen on ``host:port`` and serve every client that connects, each with its own
    workspace, one after another or at once, until interrupted. ``ready(port)`` is called once
    listening (the port chosen when ``port`` is 0)."""
    asyncio.run(_serve_tcp(host, port, options, ready))
