"""Who may talk to the server, and how much a request may bring: one ASGI middleware in front of
the whole app.

- **Host**: a request is served only when its ``Host`` is an IP address, ``localhost`` (or a name
  under it) or one of ``Settings.allowed_hosts``.  A web page that rebinds its own name to this
  machine's address (DNS rebinding) still sends its own name, so it is refused with 421
  ``host_not_allowed``.
- **Origin**: a WebSocket, or an HTTP request that writes (POST, PUT, PATCH, DELETE), that comes
  from a web page (it has an ``Origin``) is served only when that page is this server's own or one
  of ``Settings.allowed_origins``; otherwise 403 ``origin_not_allowed``, or for a WebSocket a close
  (code 1008) before it opens.  Tools without a browser send no ``Origin`` and are not affected.
  This stops cross-site WebSocket hijacking and cross-site writes.
- **Body size**: every request body but an uploaded photo (``POST /api/v1/scan``, capped by
  ``max_upload_bytes`` as it streams in) is read up to ``max_json_bytes`` before the app sees it;
  past that, 413 ``body_too_large``.
- **Headers**: every answer says ``nosniff``, ``no-referrer`` (a page's address may hold a table's
  owner token) and may not be framed; the two pages also get a content security policy that
  allows only this server's own scripts and connections.

>>> host_allowed("192.168.1.20:8000", ()), host_allowed("evil.example:8000", ())
(True, False)
>>> host_allowed("club.lan", ("club.lan",)), host_allowed("[::1]:8000", ())
(True, True)
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from service.errors import ApiError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# capped by max_upload_bytes in service.uploads (/calibrate: two photos, service.routers.profiles)
UPLOAD_PATHS = frozenset({"/api/v1/scan", "/api/v1/calibrate"})
PAGES = frozenset({"/", "/camera", "/overlay", "/calibrate"})
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CLOSE_POLICY = 1008  # WebSocket close code: policy violation

BASE_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
PAGE_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; "
        b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"permissions-policy", b"camera=(self), microphone=(), geolocation=()"),
]


def _split_host(host: str) -> str:
    """The name or address of a ``Host`` header value, without the port."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def host_allowed(host: str, allowed: tuple[str, ...]) -> bool:
    name = _split_host(host)
    if not name:
        return False
    if "*" in allowed or name in {h.lower() for h in allowed}:
        return True
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def origin_allowed(origin: str, host: str, allowed: tuple[str, ...]) -> bool:
    """Whether a page at ``origin`` may write to or open sockets on the server at ``host``."""
    if "*" in allowed or origin in allowed:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False  # "null" (a sandboxed frame, a file) and anything odd
    return parts.netloc.lower() == host.strip().lower()


class SecurityMiddleware:
    """The checks above, configured by ``Settings``; wraps the whole app."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: tuple[str, ...],
        allowed_origins: tuple[str, ...],
        max_body_bytes: int,
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = tuple(origin.rstrip("/") for origin in allowed_origins)
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        error = self._refusal(kind, scope, headers, host)
        if error is not None:
            if kind == "websocket":
                await send({"type": "websocket.close", "code": CLOSE_POLICY, "reason": error.code})
            else:
                await _send_error(send, error)
            return
        if kind == "websocket":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send, page=scope["path"] in PAGES)
        if scope["method"] in WRITES and scope["path"] not in UPLOAD_PATHS:
            body = await self._read_capped(receive, headers)
            if body is None:
                await _send_error(send, self._too_large())
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    def _refusal(
        self, kind: str, scope: Scope, headers: dict[str, str], host: str
    ) -> ApiError | None:
        if not host_allowed(host, self.allowed_hosts):
            return ApiError(
                421,
                "host_not_allowed",
                f"this server does not answer to the host name {_split_host(host)!r}"
                " (allow it with istaka serve --allow-host NAME)",
            )
        origin = headers.get("origin")
        writes = kind == "websocket" or scope.get("method") in WRITES
        if (
            origin is not None
            and writes
            and not origin_allowed(origin.rstrip("/"), host, self.allowed_origins)
        ):
            return ApiError(
                403,
                "origin_not_allowed",
                f"pages from {origin!r} may not write here or open sockets"
                " (allow it with istaka serve --allow-origin ORIGIN)",
            )
        return None

    def _too_large(self) -> ApiError:
        return ApiError(
            413,
            "body_too_large",
            f"the request body is over max_json_bytes ({self.max_body_bytes} bytes)",
        )

    async def _read_capped(self, receive: Receive, headers: dict[str, str]) -> bytes | None:
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)  # the client left; the app sees an empty body
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _with_headers(send: Send, *, page: bool) -> Send:
    extra = BASE_HEADERS + (PAGE_HEADERS if page else [])

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            names = {name.lower() for name, _ in message.get("headers", [])}
            message["headers"] = [
                *message.get("headers", []),
                *((n, v) for n, v in extra if n not in names),
            ]
        await send(message)

    return send_with_headers


async def _send_error(send: Send, error: ApiError) -> None:
    body = json.dumps(error.body()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *BASE_HEADERS,
    ]
    if error.status == 413:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
