"""Who may use the inspector's page: this machine only, unless asked, and then with a token.

    policy = AccessPolicy.local(port)                       # 127.0.0.1: no token needed
    policy = AccessPolicy.remote("0.0.0.0", port, token)    # --allow-remote: the token on every request
    app = AccessMiddleware(app, policy)

The page drives a device (it taps, types, edits the app document), so a page that anyone on the
network, or any web site open in the same browser, could reach would be a remote control. The
middleware checks every HTTP request and every websocket before the application sees it:

* **Binding.** By default the server listens on 127.0.0.1 only. Listening elsewhere needs
  ``--allow-remote`` and always a token (given, or a random one printed with the URL).
* **Token.** With a token, a request carries it as ``?token=``, the ``X-Tapir-Token`` header or
  the ``tapir_inspect`` cookie (which the page's first load sets, HttpOnly, SameSite=Strict);
  compared in constant time. Without it: 401.
* **DNS rebinding.** On a local binding the ``Host`` header must name this machine (localhost,
  127.0.0.1, [::1]) on the server's port: a foreign site whose name resolves to 127.0.0.1
  cannot talk to the page.
* **Cross-site requests.** Requests that change something (POST) must be JSON and carry the
  ``X-Tapir`` header, which a cross-site form or ``fetch`` cannot send without a CORS preflight
  that this server never grants; a websocket's ``Origin`` must be the page's own.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["COOKIE", "AccessMiddleware", "AccessPolicy", "is_loopback", "new_token"]

COOKIE = "tapir_inspect"
HEADER = "x-tapir-token"
CSRF_HEADER = "x-tapir"
_LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def new_token() -> str:
    return secrets.token_urlsafe(18)


def is_loopback(host: str) -> bool:
    """True for an address that only this machine can reach (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class AccessPolicy:
    """What the middleware checks (see the module docstring)."""

    host: str
    port: int
    token: str | None = None

    @classmethod
    def local(cls, port: int, token: str | None = None, host: str = "127.0.0.1") -> AccessPolicy:
        return cls(host, port, token)

    @classmethod
    def remote(cls, host: str, port: int, token: str) -> AccessPolicy:
        if not token:
            raise ValueError("remote access needs a token")
        return cls(host, port, token)

    @property
    def local_only(self) -> bool:
        return is_loopback(self.host)

    def host_allowed(self, host_header: str) -> bool:
        if not self.local_only:
            return True  # reachable by name from elsewhere: the token guards it
        name, _, port = host_header.rpartition(":") if not host_header.endswith("]") else (host_header, "", "")
        if not name:
            name, port = host_header, ""
        return name.lower() in _LOCAL_NAMES and (not port or port == str(self.port))

    def token_ok(self, scope: Scope) -> bool:
        if not self.token:
            return True
        given = [v for v in (_query(scope).get("token", [None])[0], _header(scope, HEADER),
                             _cookie(scope, COOKIE)) if v]
        return any(hmac.compare_digest(v.encode(), self.token.encode()) for v in given)


def _header(scope: Scope, name: str) -> str | None:
    for k, v in scope.get("headers", []):
        if k.decode("latin-1").lower() == name:
            return str(v.decode("latin-1"))
    return None


def _query(scope: Scope) -> dict[str, list[str]]:
    return parse_qs(scope.get("query_string", b"").decode("latin-1"))


def _cookie(scope: Scope, name: str) -> str | None:
    raw = _header(scope, "cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # noqa: BLE001 - a malformed cookie header is no token
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


class AccessMiddleware:
    """An ASGI middleware enforcing an ``AccessPolicy`` on HTTP and websocket alike."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        problem = self._problem(scope)
        if problem is None:
            await self.app(scope, receive, send)
            return
        status, text = problem
        if kind == "websocket":
            # refuse the handshake: an HTTP 403 before it is accepted
            await send({"type": "websocket.close", "code": 1008, "reason": text[:120]})
            return
        body = text.encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        host = _header(scope, "host") or ""
        if not self.policy.host_allowed(host):
            return 403, f"the inspector answers requests for this machine only (Host: {host or 'none'})"
        if not self.policy.token_ok(scope):
            return 401, "this inspector needs its token: open the URL `tapir inspect` printed (it ends in ?token=...)"
        if scope["type"] == "websocket":
            origin = _header(scope, "origin")
            if origin is not None and urlsplit(origin).netloc.lower() != host.lower():
                return 403, "a page of another site may not connect to the inspector"
            return None
        if scope.get("method") not in ("GET", "HEAD"):
            content = (_header(scope, "content-type") or "").split(";")[0].strip().lower()
            if _header(scope, CSRF_HEADER) is None or content != "application/json":
                return 403, "changes come from the inspector's own page only (JSON with the X-Tapir header)"
        return None
