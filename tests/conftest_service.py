"""A real uvicorn server on a free loopback port, for the API, WebSocket and browser tests.

Imported by those test modules (``from conftest_service import ...``); the server runs the app in a
background thread of the test process, so each test module can start it with its own settings.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest
import uvicorn

from service.app import create_app
from service.settings import Settings

REPO = Path(__file__).resolve().parents[1]
# Photos inside the repository, so a clean clone runs every test (the validation split's photos).
REAL_PHOTOS = REPO / "datasets" / "real_val" / "images"
EXAMPLE_PHOTO = REPO / "examples" / "rack_real.jpg"


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


# The server owner's token of every live server here (service.auth); tests that write send it.
OWNER = "test-owner-token"
OWNER_HEADERS = {"authorization": f"Bearer {OWNER}"}


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
    free one; the owner's token is ``OWNER`` unless ``settings`` name another."""
    if settings.owner_token is None:
        settings = replace(settings, owner_token=OWNER)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(settings),
        log_level="warning",
        lifespan="on",
        ws_max_size=settings.ws_max_size,
        limit_concurrency=settings.max_connections,
    )
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def redis_server(*extra: str, persistent: bool = True) -> Iterator[str]:
    """A throwaway ``redis-server`` on a free loopback port, persisting as ``istaka serve``
    requires (an append-only file, ``appendfsync always``) unless not ``persistent``; yields its
    URL.  Skips when the binary is missing (``scripts/setup.sh`` installs
    it); in CI a missing binary is a failure."""
    binary = shutil.which("redis-server") or shutil.which("valkey-server")
    if binary is None:
        reason = "redis-server is not installed (scripts/setup.sh installs it as root)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    port = free_port()
    folder = tempfile.TemporaryDirectory(prefix="istaka-redis-")
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    if persistent:
        command += ["--appendonly", "yes", "--appendfsync", "always"]
    command += ["--dir", folder.name, *extra]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 30  # start-up, not a timing check
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        folder.cleanup()


def restart_redis(port: int, *, persistent: bool = True) -> subprocess.Popen[bytes]:
    """SHUTDOWN a ``redis_server`` (a persistent one writes its append-only file) and start it
    again on the same port from the same directory (not ``persistent``: empty).  The caller ends
    the new process."""
    reply = redis_command(port, b"CONFIG GET dir\r\n")
    directory = reply.split(b"\r\n")[4].decode()
    redis_command(port, b"SHUTDOWN\r\n" if persistent else b"SHUTDOWN NOSAVE\r\n")
    aof = ["--appendonly", "yes", "--appendfsync", "always"] if persistent else []
    binary = shutil.which("redis-server") or shutil.which("valkey-server") or "redis-server"
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", *aof]
    process = subprocess.Popen(
        [*command, "--dir", directory], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30  # start-up, not a timing check
    while time.monotonic() < deadline:
        try:
            if redis_command(port, b"PING\r\n").startswith(b"+PONG"):
                return process
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not come back")


def redis_command(port: int, command: bytes) -> bytes:
    """One raw command to the Redis on ``port``, and the start of its answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(command)
        try:
            return sock.recv(4096)
        except OSError:
            return b""
