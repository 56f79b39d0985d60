"""``istaka serve`` as a user starts it: a real process, options, several workers each with its
own model sharing their tables through Redis, and one-line errors for bad options."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest
from conftest_service import OWNER, OWNER_HEADERS, REPO, redis_server
from websockets.sync.client import connect

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def istaka(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "YOLO_OFFLINE": "1", "YOLO_AUTOINSTALL": "false"}
    env["ISTAKA_OWNER_TOKEN"] = OWNER
    return subprocess.Popen(
        [sys.executable, "-m", "istaka", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    args = [arg.format(redis=request.getfixturevalue("redis_url")) for arg in request.param]
    process = istaka("serve", "--port", str(port), "--log-level", "warning", *args)
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


SHARED = ("--no-model", "--workers", "2", "--store", "{redis}")


@pytest.mark.parametrize("served", [(*SHARED, "--max-upload-mb", "0.1")], indirect=True)
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


@pytest.mark.parametrize("served", [SHARED], indirect=True)
def test_every_overlay_sees_every_update_across_workers(served: str) -> None:
    # With two workers each had its own version counter and a page saw a part of the updates.
    rows = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]
    made = httpx.post(
        f"{served}/api/v1/tables", json={"table": "tournament"}, headers=OWNER_HEADERS, timeout=30
    )
    token = made.json()["token"]
    ws_url = served.replace("http://", "ws://") + "/api/v1/overlay/tournament"
    with ExitStack() as stack:
        # New connections, spread over the workers.
        pages = [stack.enter_context(connect(ws_url)) for _ in range(4)]
        for page in pages:
            assert json.loads(page.recv(timeout=30))["version"] == 0
        writers = set()
        for n in range(1, 21):
            with httpx.Client(base_url=served, timeout=30) as fresh:
                answer = fresh.put(
                    "/api/v1/tables/tournament",
                    json={"rows": rows, "indicator": "R5"},
                    headers={"authorization": f"Bearer {token}"},
                )
                writers.add(fresh.get("/api/v1/health").json()["worker"])
            assert answer.json()["version"] == n
        for page in pages:
            versions = [json.loads(page.recv(timeout=30))["version"] for _ in range(20)]
            assert versions == list(range(1, 21))
    assert len(writers) == 2  # both workers took writes


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--workers", "2"), "needs a shared table store"),
        (("--store", "mysql://x"), "--store takes memory or redis://"),
        (("--store", "redis://127.0.0.1:1/0"), "Redis does not answer"),
        (("--port", "http"), "port must be a number"),
        (("--port", "70000"), "port must be 0-65535"),
        (("--workers", "0"), "--workers must be 1-32"),
        (("--max-fps", "0"), "must be positive"),
        (("--model", "no/such.yaml"), "no such manifest"),
        (("--limit", "max_nothing=1"), "expected NAME=VALUE"),
        (("--limit", "max_kept_files=many"), "is not a number"),
    ],
)
def test_bad_options_are_one_line_errors(args: tuple[str, ...], needle: str) -> None:
    process = istaka("serve", *args)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert needle in err.decode()


def test_the_load_benchmark_runs_from_the_repository_alone() -> None:
    # It read its photos from outside the repository and stopped with ZeroDivisionError.
    run = subprocess.run(
        [sys.executable, "benchmarks/load.py", "--no-model", "--setups", "memory"]
        + ["--seconds", "2", "--clients", "2", "--tables", "1", "--mix", "scan,hand,put,health"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "photos" in run.stdout and "acknowledged versions the store lost: 0" in run.stdout
    assert "scan " in run.stdout  # the photos were sent (503 no_model here: no model served)


def test_a_network_bind_says_what_it_exposes() -> None:
    from istaka.serve import exposure
    from service.settings import Settings

    text = exposure("0.0.0.0", 8000, Settings(allowed_origins=("https://obs.example",)))
    assert "0.0.0.0:8000" in text and "owner's" in text and "quotas" in text
    assert "https://obs.example" in text and "viewer key" in text


def test_a_redis_that_keeps_nothing_is_refused_at_start() -> None:
    # A Redis restarted without appendonly lost every table and owner token.
    with redis_server(persistent=False) as url:
        process = istaka("serve", "--no-model", "--store", url, "--port", str(free_port()))
        _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert "keeps nothing through a restart" in err.decode() and "--store-ephemeral" in err.decode()


class RedisProxy:
    """A TCP relay to Redis that, once a command holding ``trigger`` has passed and Redis has
    answered it, drops that answer and sets ``applied``: the write is in Redis, its worker never
    hears so."""

    def __init__(self, redis_port: int, trigger: bytes) -> None:
        self.redis_port = redis_port
        self.trigger = trigger
        self.applied = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.redis_port))
            held = threading.Event()
            threading.Thread(target=self._up, args=(client, upstream, held), daemon=True).start()
            threading.Thread(target=self._down, args=(upstream, client, held), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket, held: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if self.trigger in data and not self.applied.is_set():
                    held.set()
                upstream.sendall(data)
        upstream.close()

    def _down(self, upstream: socket.socket, client: socket.socket, held: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := upstream.recv(65536):
                if held.is_set() and not self.applied.is_set() and data.startswith(b"*2"):
                    self.applied.set()  # Redis ran the script: {0, version}
                    continue
                if not self.applied.is_set() or not held.is_set():
                    client.sendall(data)
        client.close()

    def close(self) -> None:
        self.listener.close()


def wait_up(process: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + 120  # start-up, not a timing
    while True:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        try:
            if httpx.get(f"{url}/api/v1/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "istaka serve did not come up"
        time.sleep(0.2)


def test_a_write_whose_worker_died_before_answering_is_retried_safely() -> None:
    # A worker killed after Redis applied a write but before it answered left the client unable
    # to tell; with an idempotency key (or If-Match) the retry writes nothing twice.
    body = {"rows": [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]}
    body["indicator"] = "R5"
    with redis_server() as redis_url:
        proxy = RedisProxy(int(redis_url.rsplit(":", 1)[1].split("/")[0]), b"retry-me-1")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        args = ["serve", "--no-model", "--port", str(port), "--log-level", "warning"]
        args += ["--store", f"redis://127.0.0.1:{proxy.port}/0"]
        first = istaka(*args)
        second = None
        try:
            wait_up(first, url)
            table = f"{url}/api/v1/tables/kill"
            made = httpx.put(table, json=body, headers=OWNER_HEADERS, timeout=30)
            assert made.json()["version"] == 1  # and the write script is loaded in Redis
            auth = {"authorization": f"Bearer {made.json()['token']}"}
            keyed = {**auth, "idempotency-key": "retry-me-1"}
            lost: list[BaseException] = []

            def write() -> None:
                try:
                    httpx.put(table, json=body, headers=keyed, timeout=60)
                except httpx.TransportError as exc:
                    lost.append(exc)

            writer = threading.Thread(target=write)
            writer.start()
            assert proxy.applied.wait(timeout=60)
            first.kill()  # SIGKILL, mid-write: applied in Redis, never answered
            first.wait(timeout=30)
            writer.join(timeout=60)
            assert lost, "the client got an answer: the worker was not killed mid-write"

            second = istaka(*args)
            wait_up(second, url)
            assert httpx.get(table, timeout=30).json()["version"] == 2  # the lost write applied
            retry = httpx.put(table, json=body, headers=keyed, timeout=30)
            assert retry.status_code == 200 and retry.json()["version"] == 2
            assert retry.headers["idempotent-replayed"] == "true"
            stale = httpx.put(table, json=body, headers={**auth, "if-match": "1"}, timeout=30)
            assert stale.status_code == 412 and stale.json()["error"]["version"] == 2
            assert httpx.get(table, timeout=30).json()["version"] == 2  # applied once
            fresh = httpx.put(table, json=body, headers={**auth, "if-match": "2"}, timeout=30)
            assert fresh.json()["version"] == 3
        finally:
            for process in (first, second):
                if process is not None and process.poll() is None:
                    process.terminate()
                    process.wait(timeout=60)
            proxy.close()
