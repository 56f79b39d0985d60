"""``istaka serve`` as a user starts it: a real process, options, several workers each with its
own model, and one-line errors for bad options."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from conftest_service import REPO

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def istaka(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "YOLO_OFFLINE": "1", "YOLO_AUTOINSTALL": "false"}
    return subprocess.Popen(
        [sys.executable, "-m", "istaka", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    process = istaka("serve", "--port", str(port), "--log-level", "warning", *request.param)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # start-up (models load in each worker), not a timing
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            try:
                httpx.get(f"{url}/api/v1/health", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "istaka serve did not come up"
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


@pytest.mark.parametrize(
    "served", [("--no-model", "--workers", "2", "--max-upload-mb", "0.1")], indirect=True
)
def test_workers_are_separate_processes_with_the_options(served: str) -> None:
    workers = set()
    for _ in range(200):
        with httpx.Client(base_url=served, timeout=30) as fresh:  # a new connection each time
            body = fresh.get("/api/v1/health").json()
        assert body["recognition"] is False
        workers.add(body["worker"])
        if len(workers) == 2:
            break
    assert len(workers) == 2, workers
    big = httpx.post(f"{served}/api/v1/scan", content=b"\xff\xd8\xff" + bytes(200_000))
    assert big.status_code == 413 and "104857" in big.json()["error"]["message"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--port", "http"), "port must be a number"),
        (("--port", "70000"), "port must be 0-65535"),
        (("--workers", "0"), "--workers must be 1-32"),
        (("--max-fps", "0"), "must be positive"),
        (("--model", "no/such.yaml"), "no such manifest"),
    ],
)
def test_bad_options_are_one_line_errors(args: tuple[str, ...], needle: str) -> None:
    process = istaka("serve", *args)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert needle in err.decode()
