"""``istaka serve [--host 127.0.0.1] [--port 8000]``: the web app (API, camera page, overlay).

With ``--workers N`` (N > 1) the workers share their tables through ``--store redis://...``."""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from istaka.cli import InputError

OWNER_ENV = "ISTAKA_OWNER_TOKEN"  # the server owner's token (service.auth), shared by the workers
OWNER_QUERY = "owner"  # the pages' query parameter carrying it

if TYPE_CHECKING:
    from service.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the REST/WebSocket API, the camera page and the OBS overlay",
        description="Serve the API under /api/v1 (docs at /docs), the camera page at /camera and"
        " the overlay at /overlay?table=NAME.",
    )
    parser.add_argument(
        "--host",
        help="address to listen on (default 127.0.0.1; with --https 0.0.0.0: every network)",
    )
    parser.add_argument("--port", type=_port, default=8000, help="TCP port (default 8000)")
    parser.add_argument(
        "--max-upload-mb", type=float, default=10.0, help="largest accepted upload in MB"
    )
    parser.add_argument(
        "--max-fps", type=float, default=8.0, help="frames per second read per camera stream"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes, each with its own recognition model (default 1)",
    )
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="uvicorn log level (warning hides the access log)",
    )
    parser.add_argument(
        "--model",
        type=Path,
        help="recogniser manifest to serve (default: models/recognizer.yaml)",
    )
    parser.add_argument(
        "--no-model",
        action="store_true",
        help="start without the recognition model (engine endpoints and overlay only)",
    )
    parser.add_argument(
        "--store",
        default="memory",
        metavar="URL",
        help="where tables live: memory (default, one worker) or redis://HOST:6379/0 (Redis or"
        " Valkey, shared by every worker and machine)",
    )
    parser.add_argument(
        "--store-ephemeral",
        action="store_true",
        help="accept a Redis that keeps nothing through a restart (no appendonly, no save): every"
        " table and its token are lost with it",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the server answers to besides localhost and IP addresses (repeatable;"
        " e.g. the name of a reverse proxy or tunnel)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web page origin (https://obs.example) that may write and open sockets besides"
        " the server's own pages (repeatable)",
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set one limit of service.settings.Settings (repeatable), e.g. max_kept_bytes=1e9,"
        " body_gap_seconds=5; docs/service.md lists them with their defaults",
    )
    parser.add_argument(
        "--https",
        action="store_true",
        help="serve HTTPS with a local certificate authority made once (phones give the camera"
        " only to secure pages); prints the phone's address, a QR code and how to trust it",
    )
    parser.add_argument(
        "--tls-dir",
        type=Path,
        help="where the authority and the certificate live (default ~/.local/share/istaka/tls)",
    )
    parser.set_defaults(func=serve)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"port must be a number, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535, got {port}")
    return port


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.app import create_app
    from service.settings import MODEL_ENV, Settings

    if args.max_upload_mb <= 0 or args.max_fps <= 0:
        raise InputError("--max-upload-mb and --max-fps must be positive")
    if args.model is not None:
        if not args.model.is_file():
            raise FileNotFoundError(f"--model: no such manifest {args.model}")
        os.environ[MODEL_ENV] = str(args.model.resolve())
    if not 1 <= args.workers <= 32:
        raise InputError(f"--workers must be 1-32, got {args.workers}")
    _set_limits(args.limit)
    store = _check_store(args.store, args.workers, args.store_ephemeral)
    # The options travel as environment variables, so every worker process builds the same app.
    os.environ["ISTAKA_MAX_UPLOAD_MB"] = str(args.max_upload_mb)
    os.environ["ISTAKA_MAX_FPS"] = str(args.max_fps)
    os.environ["ISTAKA_NO_MODEL"] = "1" if args.no_model else "0"
    os.environ["ISTAKA_STORE"] = store or ""
    os.environ["ISTAKA_STORE_EPHEMERAL"] = "1" if args.store_ephemeral else "0"
    # One owner token for every worker: made here unless the environment gives one.
    os.environ[OWNER_ENV] = os.environ.get(OWNER_ENV) or secrets.token_urlsafe(24)
    os.environ["ISTAKA_ALLOWED_HOSTS"] = ",".join(args.allow_host)
    os.environ["ISTAKA_ALLOWED_ORIGINS"] = ",".join(args.allow_origin)
    host = args.host or ("0.0.0.0" if args.https else "127.0.0.1")
    tls = _tls(args, host) if args.https else {}
    settings = Settings.from_env()
    owner = os.environ[OWNER_ENV]
    scheme = "https" if args.https else "http"
    local = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(
        f"Owner's page (it may create tables, keep data, calibrate; keep it to yourself):\n"
        f"  {scheme}://{_url_host(local)}:{args.port}/?owner={owner}",
        file=sys.stderr,
    )
    if not _loopback(host):
        print(exposure(host, args.port, settings), file=sys.stderr)
        print(_phone_banner(host, args.port, args.https, owner), file=sys.stderr)
    common = {
        "host": host,
        "port": args.port,
        "log_level": args.log_level,
        "ws_max_size": settings.ws_max_size,
        # Past this many connections and requests a worker answers 503 at once, so stalled
        # clients cannot take every file descriptor (service.slow closes them meanwhile).
        "limit_concurrency": _connection_limit(settings.max_connections),
        **tls,
    }
    if args.workers == 1:
        uvicorn.run(create_app(settings), **common)
    else:
        uvicorn.run("service.app:create_app", factory=True, workers=args.workers, **common)
    return 0


def _tls(args: argparse.Namespace, host: str) -> dict[str, str]:
    """Make (once) the local authority and this machine's certificate; uvicorn's TLS options."""
    from service.https import (
        ensure_certificates,
        fingerprint,
        lan_addresses,
        machine_names,
        tls_folder,
    )
    from service.routers.pages import CA_ENV

    listening = [] if _loopback(host) or host in ("0.0.0.0", "::") else [host]
    addresses = [a for a in [*listening, *lan_addresses()] if ":" not in a]
    folder = args.tls_dir or tls_folder()
    files = ensure_certificates(folder, [*machine_names(), *args.allow_host], addresses)
    os.environ[CA_ENV] = str(files.ca)
    if files.new_authority:
        print(
            f"istaka serve: made a local certificate authority {files.ca} (SHA-256"
            f" {fingerprint(files.ca)}); trust it once on each phone (steps below)",
            file=sys.stderr,
        )
    elif files.made:
        print(f"istaka serve: made a certificate for {', '.join(addresses)}", file=sys.stderr)
    return {"ssl_certfile": str(files.cert), "ssl_keyfile": str(files.key)}


def _set_limits(pairs: list[str]) -> None:
    """``--limit NAME=VALUE`` as ``ISTAKA_NAME`` for every worker; ``InputError`` naming a bad
    one."""
    from service.settings import limit_names, limits_from_env

    names = limit_names()
    env = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        name = name.strip()
        if name not in names or not value.strip():
            raise InputError(f"--limit {pair!r}: expected NAME=VALUE, NAME one of {sorted(names)}")
        # 1e9 for an int limit: read as a float, kept whole
        if names[name] is int:
            try:
                value = str(int(float(value)))
            except ValueError:
                raise InputError(f"--limit {pair!r}: {value!r} is not a number") from None
        env[f"ISTAKA_{name.upper()}"] = value.strip()
    try:
        limits_from_env(env)
    except ValueError as exc:
        raise InputError(f"--limit: {exc}") from None
    os.environ.update(env)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _connection_limit(wanted: int) -> int:
    """``wanted``, within the process's file descriptors: the soft limit is raised to the hard
    one, and a worker keeps 64 descriptors for its own files, Redis and the model."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass  # the soft limit stays; the cap below follows it
    return max(16, min(wanted, soft - 64))


def _phone_banner(host: str, port: int, https: bool, owner: str) -> str:
    """The phone's address as text and a QR code (carrying the owner's token, so the phone's
    camera page may feed tables); how to trust the authority (HTTPS)."""
    from service.https import lan_addresses, phone_url, qr_terminal, trust_steps
    from service.routers.pages import PHONE_ENV

    addresses = lan_addresses() if host in ("0.0.0.0", "::") else [host]
    if not addresses:
        return "No network address found: a phone cannot reach this machine."
    scheme = "https" if https else "http"
    url = phone_url(scheme, addresses[0], port)
    os.environ[PHONE_ENV] = url
    start = phone_url(scheme, addresses[0], port, "/")
    owned = f"{url}?{OWNER_QUERY}={owner}"
    lines = [
        f"On a phone on the same network, open {url}  (start page: {start})",
        "The owner's phone: scan this code (the camera page with the owner's token)",
        qr_terminal(owned),
    ]
    others = [phone_url(scheme, a, port) for a in addresses[1:]]
    if others:
        lines.append("Other addresses of this machine: " + "  ".join(others))
    if https:
        lines.append(trust_steps())
    else:
        lines.append(
            "Plain HTTP: a phone's browser gives the live camera only to HTTPS pages; the camera"
            " page takes photos instead.  istaka serve --https gives the live camera."
        )
    return "\n".join(lines)


def _check_store(url: str, workers: int, ephemeral: bool = False) -> str | None:
    """The store URL (None: in memory), once Redis answers and is found to persist (unless
    ``ephemeral``); ``InputError`` saying what is wrong."""
    if url == "memory":
        if workers > 1:
            raise InputError(
                f"--workers {workers} needs a shared table store: add --store redis://HOST:6379/0"
                " (in memory, each worker would keep its own tables and versions)"
            )
        return None
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise InputError(f"--store takes memory or redis://HOST:PORT/DB, got {url!r}")
    import redis

    from service.store_redis import not_persistent, persistence_of

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3, decode_responses=True)
        client.ping()
        try:
            config = client.config_get("appendonly", "appendfsync", "save")
        except redis.ResponseError:  # CONFIG renamed away: what INFO says
            aof = client.info("persistence").get("aof_enabled")
            config = {"appendonly": "yes" if aof else "no", "save": ""}
    except (redis.RedisError, ValueError) as exc:
        raise InputError(f"--store {url}: Redis does not answer: {exc}") from None
    persistence = persistence_of(config)
    if persistence is None and not ephemeral:
        raise InputError(not_persistent(url))
    print(f"istaka serve: table store {url}: {persistence or 'ephemeral'}", file=sys.stderr)
    return url


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure(host: str, port: int, settings: Settings) -> str:
    """What a server bound to a network address lets the network do (printed at start-up)."""
    hosts = ", ".join(settings.allowed_hosts) or "none"
    origins = ", ".join(settings.allowed_origins) or "none"
    return (
        f"istaka serves on {host}:{port}: anyone on this network can\n"
        "  - use the engine and /scan (answers only; bounded by the limits in docs/service.md)\n"
        "  - read any table's state and overlay by its name\n"
        "    (tables created with a viewer key need the key)\n"
        "  - open the camera page (the camera itself needs HTTPS or localhost on a phone)\n"
        "Creating tables, keeping photos, calibrating and deleting profiles need the owner's\n"
        "token (the owner's page above); writing to a table needs its token or the owner's.\n"
        "Kept data has quotas (istaka data list).  Pages from other sites may not write or open\n"
        f"sockets (allowed origins: {origins}); host names answered besides IP addresses and\n"
        f"localhost: {hosts}."
    )
