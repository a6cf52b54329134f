"""The inspector's web side: a Starlette application served by uvicorn, live over a websocket.

    server = InspectorServer(live, AccessPolicy.local(port=0))
    server.start()                 # in a background thread; server.url is where the page is
    ...
    server.stop()
    # or, in the foreground until Ctrl-C:  server.run()

Routes (the page is ``static/inspector.html``, its script and style beside it; no CDN):

==========================  =========================================================================
``GET /``                   the page (a valid ``?token=`` also sets the cookie that later requests carry)
``GET /static/...``         its script, style and icon
``GET /api/state``          what a page needs when it loads (``LiveSession.state_json``)
``GET /api/shot/<seq>``     the screenshot of dump ``seq`` (PNG)
``GET /api/view/<seq>/<n>`` view ``n`` of dump ``seq``: attributes, identifiers, claims, a suggestion
``POST /api/act``           ``{action: tap|long_tap|type|scroll|back|enter, seq, node, text, direction}``
``POST /api/element``       add the view as an element: ``{screen, name, kind, description, identifiers, ...}``
``POST /api/identifier``    ``{element, xpath, first}``: one more identifier for an element
``POST /api/sensitive``     ``{element, sensitive}``
``POST /api/record``        ``{action: start|stop, output}``; ``GET`` gives the script so far
``WS /ws``                  messages of ``LiveSession`` (``screen``, ``shot``, ``document``, ``record``...)
==========================  =========================================================================

Errors come back as ``{"error": message, "problems": [...]}`` with status 400 (a bad request, a
refused edit: the document file is then unchanged) or 409 (the screen changed under the request).
Every request passes ``AccessMiddleware`` first (``security.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from importlib import resources
from pathlib import Path
from typing import Any

import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from tapir.core.errors import ActionError, TapirError, UsageError
from tapir.inspector.doc_edit import EditRefused
from tapir.inspector.live import LiveSession
from tapir.inspector.security import COOKIE, AccessMiddleware, AccessPolicy

__all__ = ["Hub", "InspectorServer", "create_app"]

STATIC = Path(str(resources.files("tapir.inspector") / "static"))
#: Messages a slow page may fall behind by before the oldest screens are dropped for it.
_QUEUE = 64


class Hub:
    """The open websockets, and messages from the device thread delivered to each of them."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._queues: set[asyncio.Queue[dict[str, Any]]] = set()
        #: Messages published, by type (tests and the bench read them).
        self.sent: dict[str, int] = {}

    def publish(self, message: dict[str, Any]) -> None:
        """Called from any thread."""
        self.sent[message["type"]] = self.sent.get(message["type"], 0) + 1
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop is shutting down
            loop.call_soon_threadsafe(self._deliver, message)

    def _deliver(self, message: dict[str, Any]) -> None:
        for q in list(self._queues):
            if q.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    q.get_nowait()
            q.put_nowait(message)

    def open(self) -> asyncio.Queue[dict[str, Any]]:
        q: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=_QUEUE)
        self._queues.add(q)
        return q

    def close(self, q: asyncio.Queue[dict[str, Any]]) -> None:
        self._queues.discard(q)

    @property
    def clients(self) -> int:
        return len(self._queues)


def _error(message: str, status: int = 400, problems: list[str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "problems": problems or []}, status_code=status)


def create_app(live: LiveSession, hub: Hub, policy: AccessPolicy) -> AccessMiddleware:
    """The application (wrapped in the access checks)."""

    async def run(fn: Callable[[], Any]) -> Response:
        try:
            result = await anyio.to_thread.run_sync(live.call, fn)
        except EditRefused as exc:
            return _error(exc.message, 400, exc.problems)
        except ActionError as exc:
            return _error(exc.message, 409)
        except TapirError as exc:
            return _error(exc.message if isinstance(exc, UsageError) else exc.render(), 400)
        except OSError as exc:  # a write the checks let through failed (disk full, permissions): no traceback
            return _error(f"cannot write {exc.filename or 'the file'}: {exc.strerror or exc}", 409)
        return JSONResponse(result)

    async def body(request: Request) -> dict[str, Any]:
        try:
            data = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UsageError("the request body is not JSON") from None
        if not isinstance(data, dict):
            raise UsageError("the request body is not a JSON object")
        return data

    async def page(request: Request) -> Response:
        response = FileResponse(STATIC / "inspector.html", headers={"cache-control": "no-store"})
        token = request.query_params.get("token")
        if policy.token and token:
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    async def state(request: Request) -> Response:
        return await run(live.state_json)

    async def shot(request: Request) -> Response:
        seq = request.path_params["seq"]
        found = live.states.get(seq)
        if found is None or not found.shot:
            return Response(status_code=404)
        return Response(found.shot, media_type="image/png", headers={"cache-control": "max-age=3600"})

    async def view(request: Request) -> Response:
        seq, node = request.path_params["seq"], request.path_params["node"]
        return await run(lambda: live.view(seq, node))

    async def act(request: Request) -> Response:
        try:
            data = await body(request)
            action = str(data.get("action", ""))
            seq = data.get("seq")
            node = data.get("node")
            text = str(data.get("text", ""))
            direction = str(data.get("direction", "down"))
            for name, value in (("seq", seq), ("node", node)):
                if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                    raise UsageError(f"{name} must be a whole number")
        except UsageError as exc:
            return _error(exc.message)
        return await run(lambda: live.act(action, seq, node, text=text, direction=direction))

    async def element(request: Request) -> Response:
        try:
            data = await body(request)
            identifiers = [str(x) for x in data.get("identifiers") or []]
        except UsageError as exc:
            return _error(exc.message)
        return await run(lambda: live.edit(lambda ed: ed.add_element(
            str(data.get("screen", "")), str(data.get("name", "")), kind=str(data.get("kind", "")),
            description=str(data.get("description", "")), identifiers=identifiers,
            item_of=str(data["item_of"]) if data.get("item_of") else None, sensitive=bool(data.get("sensitive")))))

    async def identifier(request: Request) -> Response:
        try:
            data = await body(request)
        except UsageError as exc:
            return _error(exc.message)
        return await run(lambda: live.edit(lambda ed: ed.add_identifier(
            str(data.get("element", "")), str(data.get("xpath", "")), first=bool(data.get("first")))))

    async def sensitive(request: Request) -> Response:
        try:
            data = await body(request)
        except UsageError as exc:
            return _error(exc.message)
        return await run(lambda: live.edit(lambda ed: ed.set_sensitive(
            str(data.get("element", "")), bool(data.get("sensitive", True)))))

    async def record(request: Request) -> Response:
        if request.method == "GET":
            return await run(live.record_json)
        try:
            data = await body(request)
        except UsageError as exc:
            return _error(exc.message)
        action = data.get("action")
        if action == "start":
            output = data.get("output")
            if output is not None and not isinstance(output, str):
                return _error("output must be a file name (text)")

            def start() -> dict[str, Any]:
                live.start_recording(live.recording_output(output))
                return live.record_json()

            return await run(start)
        if action == "stop":
            return await run(lambda: {"script": live.stop_recording()})
        return _error(f"unknown record action {action!r}: start or stop")

    async def ws(websocket: WebSocket) -> None:
        async def incoming() -> None:  # what the page sends is not used: text and bytes alike are dropped
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(message.get("code", 1000))

        await websocket.accept()
        q = hub.open()
        try:
            hello = await anyio.to_thread.run_sync(live.call, live.state_json)
            await websocket.send_json(hello)
            receiver = asyncio.ensure_future(incoming())
            while True:
                getter = asyncio.ensure_future(q.get())
                done, _ = await asyncio.wait({getter, receiver}, return_when=asyncio.FIRST_COMPLETED)
                if receiver in done:
                    getter.cancel()
                    receiver.result()  # raises WebSocketDisconnect when the page went away
                    receiver = asyncio.ensure_future(incoming())
                    continue
                message = getter.result()
                message = dict(message, delivered=time.monotonic())
                await websocket.send_json(message)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            hub.close(q)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.loop = asyncio.get_running_loop()
        yield
        hub.loop = None

    app = Starlette(
        routes=[
            Route("/", page), Route("/api/state", state), Route("/api/shot/{seq:int}", shot),
            Route("/api/view/{seq:int}/{node:int}", view), Route("/api/act", act, methods=["POST"]),
            Route("/api/element", element, methods=["POST"]), Route("/api/identifier", identifier, methods=["POST"]),
            Route("/api/sensitive", sensitive, methods=["POST"]),
            Route("/api/record", record, methods=["GET", "POST"]),
            WebSocketRoute("/ws", ws),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        lifespan=lifespan,
    )
    return AccessMiddleware(app, policy)


class InspectorServer:
    """uvicorn serving the inspector on a socket bound here (so port 0 picks a free port and the
    URL is known before serving starts)."""

    def __init__(self, live: LiveSession, policy: AccessPolicy, hub: Hub | None = None) -> None:
        self.hub = hub or Hub()
        self.live = live
        self.sock = _bind(policy.host, policy.port)
        self.port = self.sock.getsockname()[1]
        self.policy = AccessPolicy(policy.host, self.port, policy.token)
        app = create_app(live, self.hub, self.policy)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", ws="websockets-sansio",
                                ws_per_message_deflate=True, timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = self.policy.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else (f"[{host}]" if ":" in host else host)
        query = f"?token={self.policy.token}" if self.policy.token else ""
        return f"http://{shown}:{self.port}/{query}"

    def run(self) -> None:
        """Serve until Ctrl-C (uvicorn handles the signal and shuts down gracefully)."""
        self.server.run(sockets=[self.sock])

    def start(self) -> None:
        """Serve in a background thread; returns once the server accepts connections."""
        self._thread = threading.Thread(target=self.run, name="tapir-inspect-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise UsageError("the inspector's web server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        with contextlib.suppress(OSError):
            self.sock.close()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = " (try --port 0 for a free one)" if exc.errno in (98, 48) else ""
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock
