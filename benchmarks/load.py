"""Load and fault run of ``istaka serve`` on loopback, from a clean clone: photos from the
repository (``datasets/real_val/images/`` and ``examples/rack_real.jpg``), Redis started here.

For each setup (``memory``: 1 worker, tables in memory; ``redis``: ``--workers`` workers sharing a
``redis-server`` this script starts with ``appendfsync always``), it starts ``istaka serve`` on a
free 127.0.0.1 port, creates tables, opens overlay pages on them (WebSocket clients that reconnect
by themselves), and runs N clients for T seconds, each cycling through ``POST /scan`` with a real
photo, ``POST /hand``, ``PUT /tables/{table}`` as the table's owner and ``GET /health``.  It prints
scans/s, latency percentiles per endpoint, the overlay update latency from sending the PUT to the
page receiving that version, and every answer that was not a 2xx.

Each PUT is one update with an ``Idempotency-Key`` of its own: a client that gets no answer or a
503 sends the same update again (with the same key) until it is acknowledged, so an update is
applied once however often it is retried.  The report counts updates sent, acknowledged and seen
by the pages, the versions applied twice (the final version over the updates applied), and the
acknowledged versions the store lost.

``--fault`` adds, on the Redis setup, Redis killed (SIGKILL) and started again at a third of the
run and a worker killed (SIGKILL; uvicorn starts another) at two thirds.

    .venv/bin/python benchmarks/load.py                       # both setups, 8 clients, 20 s
    .venv/bin/python benchmarks/load.py --setups redis --fault --seconds 30
    .venv/bin/python benchmarks/load.py --no-model --mix hand,put,health --seconds 5
    .venv/bin/python benchmarks/load.py --probes              # /health during each abuse probe

Only loopback is ever targeted: this is a load generator.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
from websockets.asyncio.client import connect

REPO = Path(__file__).resolve().parents[1]
PHOTOS = [
    *sorted((REPO / "datasets" / "real_val" / "images").glob("*.jpg")),
    REPO / "examples" / "rack_real.jpg",
]
HAND = {"tiles": "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13", "indicator": "R5"}
ROWS = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]
KINDS = ("scan", "hand", "put", "health")
OWNER = secrets.token_urlsafe(24)  # the served server's owner token: it creates the tables
RETRY_FOR = 60.0  # seconds a client goes on sending one update before it gives up


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def photos() -> list[bytes]:
    """The repository's real rack photos (never files outside it)."""
    found = [path.read_bytes() for path in PHOTOS if path.is_file()]
    if not found:
        raise SystemExit(f"no photos found under {REPO}: is this a complete clone?")
    return found


# --- the processes under test ---------------------------------------------------------------


@dataclass
class Redis:
    port: int
    folder: tempfile.TemporaryDirectory
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server") or shutil.which("valkey-server")
        if binary is None:
            raise SystemExit("redis-server is not installed (bash scripts/setup.sh installs it)")
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "yes", "--appendfsync", "always", "--dir", self.folder.name]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not self.ping():
            if time.monotonic() > deadline:
                raise SystemExit("redis-server did not start")
            time.sleep(0.05)

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """SIGTERM: Redis writes its append-only file and exits; SIGKILL: it has no say."""
        if self.process is not None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)
            self.process = None


@contextlib.contextmanager
def serving(workers: int, store: str, no_model: bool) -> Iterator[tuple[str, subprocess.Popen]]:
    port = free_port()
    command = [sys.executable, "-m", "istaka", "serve", "--port", str(port), "--log-level"]
    command += ["warning", "--workers", str(workers), "--store", store]
    if no_model:
        command.append("--no-model")
    env = {**os.environ, "YOLO_OFFLINE": "1", "YOLO_AUTOINSTALL": "false"}
    env["ISTAKA_OWNER_TOKEN"] = OWNER
    with tempfile.TemporaryFile() as log:  # the server's messages, shown if it does not start
        process = subprocess.Popen(command, cwd=REPO, env=env, stderr=log)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_ready(url, workers, process, log)
            yield url, process
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()


def wait_ready(
    url: str, workers: int, process: subprocess.Popen, log: IO[bytes], timeout: float = 300
) -> None:
    """Until ``workers`` different workers have answered (each loads its model at start-up)."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    while len(seen) < workers:
        if process.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            tail = log.read().decode(errors="replace")[-3000:]
            raise SystemExit(f"only {len(seen)} of {workers} workers answered at {url}:\n{tail}")
        try:
            with httpx.Client(base_url=url, timeout=5) as fresh:
                seen.add(fresh.get("/api/v1/health").json()["worker"])
        except httpx.HTTPError:
            time.sleep(0.3)


# --- the load ---------------------------------------------------------------------------------


@dataclass
class Record:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    put_sent: dict[tuple[str, int], float] = field(default_factory=dict)  # (table, version)
    acknowledged: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    page_seen: dict[tuple[int, str, int], float] = field(default_factory=dict)
    page_last: dict[int, int] = field(default_factory=dict)
    page_table: dict[int, str] = field(default_factory=dict)
    reconnects: int = 0
    updates_sent: int = 0  # distinct updates (idempotency keys)
    updates_acknowledged: int = 0
    retries: int = 0  # sends of an update after its first
    applied: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # acknowledged


async def client(
    url: str,
    index: int,
    mix: list[str],
    pictures: list[bytes],
    tokens: dict[str, str],
    stop: float,
    record: Record,
) -> None:
    names = sorted(tokens)
    n = index
    limits = httpx.Limits(max_connections=1)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        while time.monotonic() < stop:
            kind = mix[n % len(mix)]
            n += 1
            started = time.perf_counter()
            try:
                if kind == "scan":
                    response = await http.post("/api/v1/scan", content=pictures[n % len(pictures)])
                elif kind == "hand":
                    response = await http.post("/api/v1/hand", json=HAND)
                elif kind == "put":
                    response = await update(http, names[n % len(names)], tokens, record)
                else:
                    response = await http.get("/api/v1/health")
                status = str(response.status_code)
            except httpx.HTTPError as exc:
                status = type(exc).__name__
                await asyncio.sleep(0.1)  # a worker or the store went away: back off, go on
            record.latencies[kind].append((time.perf_counter() - started) * 1000)
            record.statuses[kind][status] += 1


async def update(
    http: httpx.AsyncClient, table: str, tokens: dict[str, str], record: Record
) -> httpx.Response:
    """One update of ``table``, sent again with its idempotency key until it is acknowledged (a
    transport error or a 503: the worker or the store went away meanwhile)."""
    key = secrets.token_hex(8)
    headers = {"authorization": f"Bearer {tokens[table]}", "idempotency-key": key}
    record.updates_sent += 1
    sent = time.monotonic()
    give_up = sent + RETRY_FOR
    while True:
        try:
            response = await http.put(
                f"/api/v1/tables/{table}", json={"rows": ROWS, "indicator": "R5"}, headers=headers
            )
            if response.status_code != 503 or time.monotonic() > give_up:
                break
        except httpx.TransportError:
            if time.monotonic() > give_up:
                raise
        record.retries += 1
        await asyncio.sleep(0.2)
    if response.status_code == 200:
        version = response.json()["version"]
        record.put_sent[(table, version)] = sent
        record.acknowledged[table] = max(record.acknowledged[table], version)
        record.updates_acknowledged += 1
        record.applied[table] += 1
    return response


async def page(ws_url: str, table: str, index: int, stop: asyncio.Event, record: Record) -> None:
    """An overlay page: records when each version arrives; reconnects by itself as the real
    page does."""
    record.page_table[index] = table
    record.page_last[index] = 0
    first = True
    while not stop.is_set():
        try:
            async with connect(f"{ws_url}/api/v1/overlay/{table}", max_size=2**22) as ws:
                if not first:
                    record.reconnects += 1
                first = False
                pinged = time.monotonic()
                while not stop.is_set():
                    if time.monotonic() - pinged > 20:  # as the page does: silent sockets close
                        await ws.send('{"type": "ping"}')
                        pinged = time.monotonic()
                    with contextlib.suppress(TimeoutError):
                        message = json.loads(await asyncio.wait_for(ws.recv(), timeout=0.5))
                        if message.get("type") != "state":
                            continue
                        version = message["version"]
                        record.page_seen.setdefault((index, table, version), time.monotonic())
                        record.page_last[index] = max(record.page_last[index], version)
        except Exception:  # any drop (a worker killed, the server restarting): reconnect
            await asyncio.sleep(0.2)


async def faults(redis: Redis, url: str, seconds: float, log: list[str]) -> None:
    await asyncio.sleep(seconds / 3)
    log.append(f"{time.strftime('%H:%M:%S')} Redis killed (SIGKILL) and started again")
    await asyncio.to_thread(redis.stop, signal.SIGKILL)
    await asyncio.to_thread(redis.start)
    await asyncio.sleep(seconds / 3)
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        pid = (await http.get("/api/v1/health")).json()["worker"]
    os.kill(pid, signal.SIGKILL)
    log.append(f"{time.strftime('%H:%M:%S')} worker {pid} killed (SIGKILL)")


async def run_load(
    url: str,
    clients: int,
    seconds: float,
    mix: list[str],
    tables: int,
    pages_per_table: int,
    redis: Redis | None,
) -> tuple[Record, float, list[str], dict[str, int]]:
    record = Record()
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        tokens = {}
        for _ in range(tables):
            made = await http.post(
                "/api/v1/tables", json={}, headers={"authorization": f"Bearer {OWNER}"}
            )
            made.raise_for_status()
            tokens[made.json()["table"]] = made.json()["token"]
    pictures = photos()
    ws_url = url.replace("http://", "ws://")
    stop_pages = asyncio.Event()
    pages = [
        asyncio.create_task(page(ws_url, table, i * pages_per_table + k, stop_pages, record))
        for i, table in enumerate(sorted(tokens))
        for k in range(pages_per_table)
    ]
    await asyncio.sleep(1.0)  # the pages connect and get version 0
    log: list[str] = []
    fault = asyncio.create_task(faults(redis, url, seconds, log)) if redis else None
    started = time.monotonic()
    stop = started + seconds
    await asyncio.gather(
        *(client(url, i, mix, pictures, tokens, stop, record) for i in range(clients))
    )
    elapsed = time.monotonic() - started
    if fault is not None:
        await fault
    await asyncio.sleep(3.0)  # late updates and reconnecting pages settle
    stop_pages.set()
    await asyncio.gather(*pages)
    final = {}
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for table in tokens:
            final[table] = (await http.get(f"/api/v1/tables/{table}")).json()["version"]
    return record, elapsed, log, final


# --- the abuse probes -------------------------------------------------------------------------


def blank_png(width: int, height: int) -> bytes:
    """A blank PNG: small on the wire, ``3 * width * height`` bytes once decoded."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    compressor = zlib.compressobj(9)
    row = b"\x00" + bytes(3 * width)
    data = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


async def send_head(url: str, path: str, length: int) -> str:
    """POST ``length`` bytes of JSON the way a client streams it, and return the status the
    server answers once it has the headers and the first 64 kB (the rest is never sent: a server
    that waited for it would not answer)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = (
        f"POST {path} HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
        f"content-length: {length}\r\n\r\n"
    )
    writer.write(head.encode() + b'{"groups": ["' + b"R1 " * 20_000)
    try:
        await writer.drain()
        status = (await asyncio.wait_for(reader.readline(), timeout=60)).split()[1].decode()
    except (OSError, IndexError, TimeoutError) as exc:
        status = type(exc).__name__
    writer.close()
    return status


async def probe_statuses(url: str, name: str) -> Counter[str]:
    """One abuse probe of issue 22; the statuses (or close codes) it got."""
    statuses: Counter[str] = Counter()
    ws_url = url.replace("http://", "ws://")
    timeout = httpx.Timeout(120, connect=10)
    async with httpx.AsyncClient(base_url=url, timeout=timeout) as http:

        async def call(method: str, path: str, **kwargs: object) -> None:
            try:
                response = await http.request(method, path, **kwargs)
                statuses[str(response.status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1

        if name == "foreign origin":
            body = {"rows": ROWS, "indicator": "R5"}
            await call(
                "PUT", "/api/v1/tables/finals", json=body, headers={"origin": "https://evil"}
            )
            await call("GET", "/api/v1/health", headers={"host": "evil.example"})
        elif name == "1,000 junk tables":
            for _ in range(100):  # ten at a time, as a script would
                await asyncio.gather(*(call("POST", "/api/v1/tables", json={}) for _ in range(10)))
        elif name == "10 MB /referee bodies":
            for answer in await asyncio.gather(
                *(send_head(url, "/api/v1/referee", 10_000_000) for _ in range(2))
            ):
                statuses[answer] += 1
        elif name == "90 MB JSON body":
            statuses[await send_head(url, "/api/v1/hand", 90_000_000)] += 1
        elif name == "20 x 40 MP PNGs":
            photo = blank_png(6400, 6200)
            await asyncio.gather(*(call("POST", "/api/v1/scan", content=photo) for _ in range(20)))
        elif name == "nested JSON in /scan":
            nested = "[" * 1000 + "]" * 1000
            await call("POST", "/api/v1/scan", params={"rules": nested}, content=photos()[0])
        elif name in ("15 MB seen on the stream", "200,000 corrections"):
            try:
                async with connect(f"{ws_url}/api/v1/stream", max_size=2**24) as ws:
                    await ws.recv()
                    if name.startswith("15 MB"):
                        await ws.send(json.dumps({"type": "settings", "seen": "K3 " * 5_000_000}))
                    else:
                        for track in range(200_000):
                            await ws.send(f'{{"type": "correct", "id": {track}, "tile": "R1"}}')
                    while True:
                        message = json.loads(await asyncio.wait_for(ws.recv(), timeout=5))
                        statuses[message.get("code") or message["type"]] += 1
            except TimeoutError:
                pass
            except Exception as exc:  # the socket closed: the close code says why
                statuses[
                    f"closed {getattr(getattr(exc, 'rcvd', None), 'code', type(exc).__name__)}"
                ] += 1
    return statuses


PROBES = (
    "foreign origin",
    "1,000 junk tables",
    "10 MB /referee bodies",
    "90 MB JSON body",
    "20 x 40 MP PNGs",
    "nested JSON in /scan",
    "15 MB seen on the stream",
    "200,000 corrections",
)


def poll_health(url: str, ready: Any, done: Any, results: Any) -> None:
    """``GET /health`` every 50 ms, in a process of its own, so a probe that keeps this one busy
    (sending 15 MB, or 200,000 messages) does not delay the measurement; sends the latencies."""
    latencies = []
    with httpx.Client(base_url=url, timeout=60) as http:
        while not done.is_set():
            started = time.perf_counter()
            with contextlib.suppress(httpx.HTTPError):  # a failure counts as its waiting time
                http.get("/api/v1/health")
            latencies.append((time.perf_counter() - started) * 1000)
            ready.set()
            time.sleep(0.05)
    results.send(latencies)


async def run_probes(url: str) -> None:
    print(f"{'probe':<26} {'health n':>8} {'p95 ms':>7} {'max ms':>7}  answers")
    spawn = multiprocessing.get_context("spawn")
    for name in PROBES:
        ready, done = spawn.Event(), spawn.Event()
        receiving, sending = spawn.Pipe(duplex=False)
        poller = spawn.Process(target=poll_health, args=(url, ready, done, sending))
        poller.start()
        await asyncio.to_thread(ready.wait, 120)  # the poller is measuring
        statuses = await probe_statuses(url, name)
        done.set()
        latencies = receiving.recv()
        poller.join()
        answers = ", ".join(f"{code}: {count}" for code, count in sorted(statuses.items()))
        print(
            f"{name:<26} {len(latencies):>8} {percentile(latencies, 95):>7.1f}"
            f" {max(latencies):>7.1f}  {answers}"
        )


# --- the report -------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def report(
    title: str, record: Record, elapsed: float, log: list[str], final: dict[str, int]
) -> None:
    print(f"\n== {title}: {elapsed:.1f} s")
    columns = ("requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "max ms")
    print(f"{'endpoint':<8} " + " ".join(f"{c:>8}" for c in columns) + "  statuses")
    for kind in KINDS:
        values = record.latencies.get(kind)
        if not values:
            continue
        codes = ", ".join(f"{c}: {k}" for c, k in sorted(record.statuses[kind].items()))
        figures = (
            f"{len(values):>8} {len(values) / elapsed:>8.1f} {percentile(values, 50):>8.1f}"
            f" {percentile(values, 95):>8.1f} {percentile(values, 99):>8.1f} {max(values):>8.1f}"
        )
        print(f"{kind:<8} {figures}  {codes}")
    delays = [
        (seen - record.put_sent[(table, version)]) * 1000
        for (_, table, version), seen in record.page_seen.items()
        if (table, version) in record.put_sent
    ]
    if delays:
        print(
            f"overlay update, PUT sent -> page received: {len(delays)} deliveries,"
            f" p50 {percentile(delays, 50):.1f} ms, p95 {percentile(delays, 95):.1f} ms,"
            f" p99 {percentile(delays, 99):.1f} ms, max {max(delays):.1f} ms"
        )
    errors = sum(
        count
        for counter in record.statuses.values()
        for code, count in counter.items()
        if not code.startswith("2")
    )
    print(f"non-2xx answers and transport errors: {errors}")
    for line in log:
        print(f"fault: {line}")
    acknowledged = sum(record.acknowledged.values())
    lost = {t: (v, final.get(t, 0)) for t, v in record.acknowledged.items() if final.get(t, 0) < v}
    behind = [
        i for i, last in record.page_last.items() if last < final.get(record.page_table[i], 0)
    ]
    expected = {
        (i, table, v)
        for i, table in record.page_table.items()
        for v in range(1, final.get(table, 0) + 1)
    }
    missed = len(expected - set(record.page_seen))
    seen = len({(table, v) for (_, table, v) in record.page_seen if (table, v) in record.put_sent})
    twice = sum(max(0, final.get(t, 0) - n) for t, n in record.applied.items())
    print(
        f"updates sent: {record.updates_sent}, acknowledged: {record.updates_acknowledged}"
        f" (after {record.retries} retries with their idempotency key), seen by a page:"
        f" {seen}; versions applied twice: {twice}"
    )
    print(
        f"tables: {len(final)}, PUTs acknowledged: {sum(1 for _ in record.put_sent)}"
        f" (last versions {acknowledged} in all); acknowledged versions the store lost:"
        f" {sum(v - f for v, f in lost.values())}; pages not on their table's last version at the"
        f" end: {len(behind)} of {len(record.page_last)}; page reconnects: {record.reconnects};"
        f" versions a page never received (skipped while it reconnected): {missed}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (max 100)")
    parser.add_argument("--seconds", type=float, default=20, help="duration per setup (max 300)")
    parser.add_argument("--setups", default="memory,redis", help="memory, redis, or both")
    parser.add_argument("--workers", type=int, default=4, help="workers of the redis setup")
    parser.add_argument("--tables", type=int, default=4, help="tables written to")
    parser.add_argument("--pages", type=int, default=2, help="overlay pages per table")
    parser.add_argument(
        "--mix", default="scan,hand,put,health", help="request kinds each client cycles through"
    )
    parser.add_argument("--fault", action="store_true", help="restart Redis, kill a worker")
    parser.add_argument("--no-model", action="store_true", help="serve without the model")
    parser.add_argument(
        "--probes",
        action="store_true",
        help="instead of the load: issue 22's abuse probes on 1 worker, /health timed during each",
    )
    args = parser.parse_args()
    if not (1 <= args.clients <= 100 and 0 < args.seconds <= 300 and 1 <= args.workers <= 8):
        raise SystemExit("--clients 1-100, --seconds up to 300, --workers 1-8: the run is bounded")
    mix = [kind.strip() for kind in args.mix.split(",") if kind.strip()]
    if not mix or set(mix) - set(KINDS):
        raise SystemExit(f"--mix takes {', '.join(KINDS)}")
    setups = [s.strip() for s in args.setups.split(",") if s.strip()]
    if not setups or set(setups) - {"memory", "redis"}:
        raise SystemExit("--setups takes memory and redis")
    if args.probes:
        print(f"abuse probes, 1 worker, load average {os.getloadavg()[0]:.1f} before")
        with serving(1, "memory", args.no_model) as (url, _):
            asyncio.run(run_probes(url))
        print(f"load average {os.getloadavg()[0]:.1f} after")
        return
    print(
        f"{args.clients} clients, mix {'/'.join(mix)}, {args.tables} tables x {args.pages} pages,"
        f" {len(photos())} photos, load average {os.getloadavg()[0]:.1f} before"
    )
    for setup in setups:
        redis = None
        if setup == "redis":
            redis = Redis(free_port(), tempfile.TemporaryDirectory(prefix="istaka-load-"))
            redis.start()
        workers = args.workers if redis else 1
        store = redis.url if redis else "memory"
        try:
            with serving(workers, store, args.no_model) as (url, _):
                record, elapsed, log, final = asyncio.run(
                    run_load(
                        url,
                        args.clients,
                        args.seconds,
                        mix,
                        args.tables,
                        args.pages,
                        redis if args.fault else None,
                    )
                )
        finally:
            if redis is not None:
                redis.stop()
                redis.folder.cleanup()
        title = f"{workers} worker{'s' if workers > 1 else ''}, store {setup}"
        report(
            title + (", with faults" if redis and args.fault else ""), record, elapsed, log, final
        )
        print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
