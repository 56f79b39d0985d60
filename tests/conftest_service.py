"""A real uvicorn server on a free loopback port, for the API, WebSocket and browser tests.

Imported by those test modules (``from conftest_service import ...``); the server runs the app in a
background thread of the test process, so each test module can start it with its own settings.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn

from service.app import create_app
from service.settings import Settings

REPO = Path(__file__).resolve().parents[1]
REAL_PHOTOS = REPO.parent / "shared" / "data" / "rummikub-real" / "images"


def require_model() -> None:
    """Skip when the recogniser has not been shipped yet (``models/recognizer.yaml`` and its
    weights); in CI (``CI=true``) a missing model is a failure, never a skip.  ``ISTAKA_MODEL``
    (a manifest path) runs these tests with another recogniser."""
    problem = _model_problem()
    if problem is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"the shipped recogniser is needed for this test: {problem}")
    pytest.skip(f"no shipped recogniser yet: {problem}")


@functools.cache
def _model_problem() -> str | None:
    from service.settings import default_pipeline

    try:
        default_pipeline()
    except FileNotFoundError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class LiveServer:
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}"


@contextmanager
def live_server(
    settings: Settings, port: int = 0, startup_timeout: float = 120.0
) -> Iterator[LiveServer]:
    """Serve ``create_app(settings)`` with uvicorn on 127.0.0.1 until exit, on ``port`` or (0) a
    free one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(settings), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    # Waiting for the server to come up (the model loads at start-up) is set-up, not a timing check.
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the uvicorn server did not start")
        time.sleep(0.05)
    try:
        yield LiveServer("127.0.0.1", port)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextmanager
def engine_client() -> Iterator[httpx.Client]:
    """An HTTP client of a live server that serves the engine only (no recogniser loaded)."""
    with (
        live_server(Settings(load_pipeline=False)) as live,
        httpx.Client(base_url=live.url, timeout=60) as http,
    ):
        yield http
