"""Slow clients against a real uvicorn server: uploads that stall after their first bytes are
answered 408 ``body_timeout`` and their connections closed, while ``/health`` keeps answering; a
body that arrives steadily, if slowly, is read.  (Silent overlay sockets: ``test_ws_overlay.py``;
idle camera streams: ``test_security.py``.)"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest_service import LiveServer, live_server

from service.settings import Settings

pytestmark = pytest.mark.slow

STALLED = 200


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    settings = Settings(
        load_pipeline=False,
        body_start_seconds=1.0,
        body_gap_seconds=1.0,
        min_body_bytes_per_second=20_000.0,
    )
    with live_server(settings) as live:
        yield live


def stalled_upload(
    server: LiveServer,
    path: str = "/api/v1/scan",
    declared: int = 9_000_000,
    sent: int = 60_000,
    kind: str = "image/jpeg",
) -> socket.socket:
    """A connection that declares ``declared`` bytes of body, sends ``sent`` and stops."""
    sock = socket.create_connection((server.host, server.port), timeout=60)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
        f"Content-Type: {kind}\r\nContent-Length: {declared}\r\n\r\n"
    )
    sock.sendall(head.encode() + b"\xff" * sent)
    return sock


def answer_then_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout raises)."""
    chunks = []
    with sock:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_stalled_uploads_are_answered_408_and_closed(server: LiveServer) -> None:
    # 900 uploads that sent 60 kB of a declared 9 MB were all still held after 60 s.
    sockets = [stalled_upload(server) for _ in range(STALLED)]
    health = httpx.get(f"{server.url}/api/v1/health", timeout=30)
    assert health.status_code == 200 and health.json()["status"] == "ok"  # served meanwhile
    with ThreadPoolExecutor(32) as pool:
        answers = list(pool.map(answer_then_closed, sockets))
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers), {a[:40] for a in answers}
    assert all(b"body_timeout" in a and b"connection: close" in a for a in answers)
    assert httpx.get(f"{server.url}/api/v1/health", timeout=30).status_code == 200


def test_a_stalled_json_body_is_answered_408(server: LiveServer) -> None:
    sock = stalled_upload(server, "/api/v1/hand", declared=2000, sent=100, kind="application/json")
    answer = answer_then_closed(sock)
    assert answer.startswith(b"HTTP/1.1 408") and b"body_timeout" in answer


def test_a_slow_but_steady_body_is_read(server: LiveServer) -> None:
    # 60 kB at about 50 kB/s (above the 20 kB/s floor here), in pieces 0.1 s apart.
    tiles = b"R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13"
    body = b'{"tiles": "' + tiles + b'", "indicator": "R5"' + b" " * 59_000 + b"}"

    def pieces() -> Iterator[bytes]:
        for start in range(0, len(body), 5000):
            time.sleep(0.1)
            yield body[start : start + 5000]

    answer = httpx.post(
        f"{server.url}/api/v1/hand",
        content=pieces(),
        headers={"content-type": "application/json", "content-length": str(len(body))},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
