"""Bounded load run against ``istaka serve`` on loopback: N concurrent clients for T seconds.

Starts a server on a free 127.0.0.1 port (or uses ``--url`` pointing at loopback), then each
client loops over a mix of requests: ``POST /scan`` with a real photo, ``POST /hand`` with a 15-tile
hand, ``GET /health``.  Prints, per endpoint, the request count, errors by status and latency
percentiles.  Only loopback addresses are accepted: this is a load generator.

    .venv/bin/python benchmarks/load.py                     # 20 clients, 30 s
    .venv/bin/python benchmarks/load.py --clients 5 --seconds 10 --mix hand
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlparse

import httpx

REPO = Path(__file__).resolve().parents[1]
PHOTOS = REPO.parent / "shared" / "data" / "rummikub-real" / "images"
HAND = {
    "tiles": "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13",
    "indicator": "R5",
    "rules": "classic",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def loopback_only(url: str) -> str:
    host = urlparse(url).hostname or ""
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise SystemExit(f"refusing {url}: the load run only targets loopback addresses")
    return url.rstrip("/")


def start_server(port: int, no_model: bool) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "istaka",
        "serve",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    if no_model:
        command.append("--no-model")
    env = {**os.environ, "YOLO_OFFLINE": "1", "YOLO_AUTOINSTALL": "false"}
    return subprocess.Popen(command, cwd=REPO, env=env, stderr=subprocess.DEVNULL)


def wait_ready(url: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return httpx.get(f"{url}/api/v1/health", timeout=5).json()
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit(f"no server answered at {url} within {timeout} s")


async def client(
    http: httpx.AsyncClient,
    mix: list[str],
    photos: list[bytes],
    stop: float,
    latencies: dict[str, list[float]],
    statuses: dict[str, Counter[str]],
    index: int,
) -> None:
    n = index
    while time.monotonic() < stop:
        kind = mix[n % len(mix)]
        n += 1
        started = time.perf_counter()
        try:
            if kind == "scan":
                photo = photos[n % len(photos)]
                response = await http.post("/api/v1/scan", content=photo)
            elif kind == "hand":
                response = await http.post("/api/v1/hand", json=HAND)
            else:
                response = await http.get("/api/v1/health")
            status = str(response.status_code)
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        latencies[kind].append((time.perf_counter() - started) * 1000)
        statuses[kind][status] += 1


def percentile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def run(url: str, clients: int, seconds: float, mix: list[str]) -> None:
    photos = [p.read_bytes() for p in sorted(PHOTOS.glob("*.jpg"))[:20]]
    latencies: dict[str, list[float]] = defaultdict(list)
    statuses: dict[str, Counter[str]] = defaultdict(Counter)
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        stop = time.monotonic() + seconds
        started = time.monotonic()
        await asyncio.gather(
            *(client(http, mix, photos, stop, latencies, statuses, i) for i in range(clients))
        )
        elapsed = time.monotonic() - started
    print(f"{clients} clients, {elapsed:.1f} s, mix {'/'.join(mix)}, server {url}")
    header = f"{'endpoint':<8} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8}"
    print(header + f" {'p99 ms':>8} {'max ms':>8}  statuses")
    for kind in sorted(latencies):
        values = latencies[kind]
        codes = ", ".join(f"{code}: {count}" for code, count in sorted(statuses[kind].items()))
        print(
            f"{kind:<8} {len(values):>8} {len(values) / elapsed:>7.1f}"
            f" {percentile(values, 50):>8.1f} {percentile(values, 95):>8.1f}"
            f" {percentile(values, 99):>8.1f} {max(values):>8.1f}  {codes}"
        )
    errors = sum(
        count
        for counter in statuses.values()
        for code, count in counter.items()
        if not code.startswith("2")
    )
    print(f"non-2xx answers and transport errors: {errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (max 100)")
    parser.add_argument("--seconds", type=float, default=30, help="duration (max 300)")
    parser.add_argument(
        "--mix",
        default="scan,hand,health",
        help="comma-separated request kinds each client cycles through: scan, hand, health",
    )
    parser.add_argument("--url", help="an already running server on loopback")
    parser.add_argument("--no-model", action="store_true", help="start the server without a model")
    args = parser.parse_args()
    if not (1 <= args.clients <= 100 and 0 < args.seconds <= 300):
        raise SystemExit("--clients must be 1-100 and --seconds 0-300: this run is bounded")
    mix = [kind.strip() for kind in args.mix.split(",") if kind.strip()]
    if not mix or set(mix) - {"scan", "hand", "health"}:
        raise SystemExit("--mix takes scan, hand and health")
    server = None
    if args.url:
        url = loopback_only(args.url)
    else:
        url = f"http://127.0.0.1:{free_port()}"
        server = start_server(int(url.rsplit(":", 1)[1]), args.no_model)
    try:
        health = wait_ready(url)
        print(f"recognition: {health['recognition']} {health.get('recognition_error') or ''}")
        asyncio.run(run(url, args.clients, args.seconds, mix))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
