"""Slow clients: a request body must keep arriving, or the request is answered 408 and its
connection closed.  uvicorn and Starlette wait for a body for ever (uvicorn's only timer is the
keep-alive between two requests), so an upload that stalls after its first bytes would hold its
socket, and with hundreds of them the process's file descriptors.

A body has ``start_seconds`` for its first bytes; from then on it must average
``min_bytes_per_second`` (counted from the request's start, less ``start_seconds``), and no wait
for its next bytes may pass ``gap_seconds``.  Defaults (``Settings``): 10 s, 32 kB/s, 10 s: a 10 MB
photo may take 10 s + 320 s, a phone on a weak Wi-Fi sends several hundred kB/s.

>>> guard = BodyGuard(start_seconds=10.0, min_bytes_per_second=1000.0, gap_seconds=5.0)
>>> guard.wait_allowed(received=0, elapsed=0.0), guard.wait_allowed(received=0, elapsed=12.0)
(5.0, 0.0)
>>> guard.wait_allowed(received=20_000, elapsed=12.0)
5.0
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass

from service.security import ASGIApp, Message, Receive, Scope, Send


@dataclass(frozen=True)
class BodyGuard:
    """The limits on how slowly a body may arrive."""

    start_seconds: float
    min_bytes_per_second: float
    gap_seconds: float

    def wait_allowed(self, *, received: int, elapsed: float) -> float:
        """How long the next bytes may take, ``received`` bytes and ``elapsed`` seconds into the
        request (0: the body is already too slow)."""
        behind = self.start_seconds + received / self.min_bytes_per_second - elapsed
        return max(0.0, min(self.gap_seconds, behind))


class BodyTimeout(Exception):
    """Raised to the app when its request's body came too slowly (the 408 is sent already)."""


class SlowBodyMiddleware:
    """Times every HTTP request body by ``BodyGuard``; a body too slow is answered 408
    ``body_timeout`` with ``connection: close`` (uvicorn then closes the socket), and whatever the
    app does after that is dropped."""

    def __init__(self, app: ASGIApp, *, guard: BodyGuard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        received = 0
        body_done = False
        response_started = False
        timed_out = False

        async def timed_receive() -> Message:
            nonlocal received, body_done, timed_out
            if body_done or timed_out:
                return await receive()
            allowed = self.guard.wait_allowed(received=received, elapsed=time.monotonic() - started)
            try:
                message = await asyncio.wait_for(receive(), timeout=allowed)
            except TimeoutError:
                timed_out = True
                if not response_started:
                    await _send_timeout(send, received, self.guard)
                raise BodyTimeout from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal response_started
            if timed_out:
                return  # the 408 went out; the app's late answer has nowhere to go
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        try:
            await self.app(scope, timed_receive, guarded_send)
        except Exception:
            if not timed_out:
                raise


async def _send_timeout(send: Send, received: int, guard: BodyGuard) -> None:
    body = json.dumps(
        {
            "error": {
                "code": "body_timeout",
                "message": f"the request body stopped arriving after {received} bytes: a body must"
                f" start within {guard.start_seconds:g} s, then average"
                f" {guard.min_bytes_per_second:g} bytes/s with no gap over"
                f" {guard.gap_seconds:g} s",
            }
        }
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 408, "headers": headers})
    await send({"type": "http.response.body", "body": body})
