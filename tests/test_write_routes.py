"""Every route that writes needs a credential: the test walks the app's route table, and each route
that may write (POST, PUT, PATCH, DELETE, WebSocket) must have a probe here that tries it without a
credential and with a wrong one, and checks the answer is 401/403 and that nothing was written
(the data folder, the profiles, the tables).  A new write route without a probe fails the test.

The server runs with a stand-in pipeline that reads nothing (every check comes before
recognition), and its data and profiles folders in a temporary ``ISTAKA_HOME``."""

from __future__ import annotations

import json
import os
import struct
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from conftest_service import OWNER_HEADERS, LiveServer, live_server
from fastapi.routing import APIWebSocketRoute
from websockets.sync.client import connect

from service.app import create_app
from service.errors import ApiError
from service.settings import Settings

pytestmark = pytest.mark.slow

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
ROWS = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]
HAND = {"tiles": "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13", "indicator": "R5"}
NO_CREDENTIAL: list[dict[str, str]] = [{}, {"authorization": "Bearer not-a-token"}]


class BlindPipeline:
    """Stands in for the recognition pipeline: it finds nothing."""

    recognizer = None

    def scan(self, image, **_: object) -> None:  # noqa: ANN001
        raise ApiError(422, "no_tiles", "a stand-in pipeline reads nothing")


def write_routes(routes: list, prefix: str = "") -> Iterator[tuple[str, str]]:  # noqa: ANN001
    """(method, path) of every route that may write, included routers walked through."""
    for route in routes:
        if hasattr(route, "original_router"):  # FastAPI's included router
            yield from write_routes(
                route.original_router.routes, prefix + route.include_context.prefix
            )
        elif isinstance(route, APIWebSocketRoute):
            yield ("WS", prefix + route.path)
        else:
            for method in getattr(route, "methods", None) or ():
                if method in WRITES:
                    yield (method, prefix + route.path)


def png(width: int = 8, height: int = 8) -> bytes:
    row = b"\x00" + bytes(3 * width)

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def home() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="istaka-home-") as folder:
        old = os.environ.get("ISTAKA_HOME")
        os.environ["ISTAKA_HOME"] = folder
        try:
            yield Path(folder)
        finally:
            if old is None:
                del os.environ["ISTAKA_HOME"]
            else:
                os.environ["ISTAKA_HOME"] = old


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[LiveServer]:
    with live_server(Settings(pipeline_factory=BlindPipeline)) as live:
        yield live


def files_under(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())


def refused(response: httpx.Response) -> None:
    assert response.status_code in (401, 403), (response.status_code, response.text)
    assert response.json()["error"]["code"] in (
        "token_required",
        "owner_token_required",
        "wrong_token",
    )


def version(server: LiveServer, table: str) -> int:
    return httpx.get(f"{server.url}/api/v1/tables/{table}", timeout=30).json()["version"]


def owned_table(server: LiveServer, name: str) -> str:
    """A table made by the owner; its token."""
    made = httpx.post(
        f"{server.url}/api/v1/tables", json={"table": name}, headers=OWNER_HEADERS, timeout=30
    )
    assert made.status_code in (201, 409), made.text
    return made.json().get("token", "")


# --- the probes: one per write route ------------------------------------------------------------


def probe_scan(server: LiveServer, home: Path) -> None:
    owned_table(server, "keepers")
    for headers in NO_CREDENTIAL:
        for params in (
            {"keep": "true", "corrections": '{"0": "R5"}'},
            {"keep": "true", "corrections": '{"0": "R5"}', "table": "keepers"},
        ):
            answer = httpx.post(
                f"{server.url}/api/v1/scan",
                params=params,
                content=png(),
                headers=headers,
                timeout=30,
            )
            refused(answer)
    # Without keep, a scan only reads: answered (here: the stand-in reads nothing) with none.
    assert httpx.post(f"{server.url}/api/v1/scan", content=png(), timeout=30).status_code == 422


def probe_calibrate(server: LiveServer, home: Path) -> None:
    for headers in NO_CREDENTIAL:
        for params in ({"profile": "mine", "learn": "true"}, {"profile": "mine", "keep": "true"}):
            answer = httpx.post(
                f"{server.url}/api/v1/calibrate",
                params=params,
                files={"image": png()},
                headers=headers,
                timeout=30,
            )
            refused(answer)


def probe_delete_profile(server: LiveServer, home: Path) -> None:
    folder = home / "profiles" / "grandma"
    folder.mkdir(parents=True)
    (folder / "profile.yaml").write_text("name: grandma\n")
    for headers in NO_CREDENTIAL:
        refused(httpx.delete(f"{server.url}/api/v1/profiles/grandma", headers=headers))
        assert folder.is_dir()
    deleted = httpx.delete(f"{server.url}/api/v1/profiles/grandma", headers=OWNER_HEADERS)
    assert deleted.json() == {"deleted": "grandma"} and not folder.exists()


def probe_create_table(server: LiveServer, home: Path) -> None:
    for headers in NO_CREDENTIAL:
        refused(httpx.post(f"{server.url}/api/v1/tables", json={"table": "mine"}, headers=headers))
        refused(httpx.post(f"{server.url}/api/v1/tables", json={}, headers=headers))
    assert version(server, "mine") == 0
    assert httpx.get(f"{server.url}/api/v1/tables/mine").json()["state"] is None


def probe_put_table(server: LiveServer, home: Path) -> None:
    owned_table(server, "final")
    body = {"rows": ROWS, "indicator": "R5"}
    for headers in NO_CREDENTIAL:
        for table in ("final", "unclaimed"):
            refused(httpx.put(f"{server.url}/api/v1/tables/{table}", json=body, headers=headers))
    assert version(server, "final") == version(server, "unclaimed") == 0
    url = f"{server.url}/api/v1/tables/unclaimed"
    made = httpx.put(url, json=body, headers=OWNER_HEADERS, timeout=30)
    assert made.status_code == 200 and made.json()["token"], made.text


def probe_stream(server: LiveServer, home: Path) -> None:
    owned_table(server, "streamed")
    with connect(f"{server.ws_url}/api/v1/stream") as ws:
        assert json.loads(ws.recv(timeout=30))["type"] == "ready"
        for table in ("streamed", "free-name"):
            for token in (None, "not-a-token"):
                ws.send(json.dumps({"type": "settings", "table": table, "token": token}))
                error = json.loads(ws.recv(timeout=30))
                assert error["code"] in ("token_required", "owner_token_required", "wrong_token")
    assert version(server, "streamed") == 0
    assert not httpx.get(f"{server.url}/api/v1/tables/free-name").json()["state"]


def probe_table_camera(server: LiveServer, home: Path) -> None:
    owned_table(server, "filmed")
    for table in ("filmed", "unmade"):
        with connect(f"{server.ws_url}/api/v1/tables/{table}/camera") as ws:
            assert json.loads(ws.recv(timeout=30))["type"] == "ready"
            ws.send(png())  # a frame before any token is refused
            assert json.loads(ws.recv(timeout=30))["code"] == "token_required"
            for token in (None, "not-a-token"):
                ws.send(json.dumps({"type": "settings", "token": token}))
                error = json.loads(ws.recv(timeout=30))
                assert error["code"] in ("token_required", "wrong_token", "no_such_table")
            ws.send(json.dumps({"type": "correct", "change": 0, "tile": "R5"}))
            assert json.loads(ws.recv(timeout=30))["code"] == "token_required"
    assert version(server, "filmed") == version(server, "unmade") == 0


def probe_overlay(server: LiveServer, home: Path) -> None:
    # Reads only: whatever a page sends is not written anywhere.
    owned_table(server, "watched")
    with connect(f"{server.ws_url}/api/v1/overlay/watched") as ws:
        assert json.loads(ws.recv(timeout=30))["version"] == 0
        ws.send(json.dumps({"type": "state", "version": 9, "state": {"rows": []}}))
        ws.send(json.dumps({"type": "settings", "table": "watched", "rows": ROWS}))
    assert version(server, "watched") == 0


def probe_compute_only(path: str, body: dict) -> Callable[[LiveServer, Path], None]:
    def probe(server: LiveServer, home: Path) -> None:
        # Computes and answers; writes nothing (checked by the caller for every probe).
        assert httpx.post(f"{server.url}{path}", json=body, timeout=30).status_code == 200

    return probe


PROBES: dict[tuple[str, str], Callable[[LiveServer, Path], None]] = {
    ("POST", "/api/v1/scan"): probe_scan,
    ("POST", "/api/v1/calibrate"): probe_calibrate,
    ("DELETE", "/api/v1/profiles/{name}"): probe_delete_profile,
    ("POST", "/api/v1/tables"): probe_create_table,
    ("PUT", "/api/v1/tables/{table}"): probe_put_table,
    ("WS", "/api/v1/stream"): probe_stream,
    ("WS", "/api/v1/tables/{table}/camera"): probe_table_camera,
    ("WS", "/api/v1/overlay/{table}"): probe_overlay,
    ("POST", "/api/v1/hand"): probe_compute_only("/api/v1/hand", HAND),
    ("POST", "/api/v1/referee"): probe_compute_only(
        "/api/v1/referee", {"groups": ["R1 R2 R3"], "indicator": "R5"}
    ),
}


def test_every_write_route_has_a_probe() -> None:
    app = create_app(Settings(load_pipeline=False, owner_token="x"))
    found = set(write_routes(app.routes))
    missing = found - set(PROBES)
    assert not missing, f"write routes without a credential probe here: {sorted(missing)}"
    assert set(PROBES) <= found, f"probes of routes that are gone: {sorted(set(PROBES) - found)}"


@pytest.mark.parametrize("route", list(PROBES), ids=lambda r: f"{r[0]} {r[1]}")
def test_a_write_route_refuses_without_a_credential(
    route: tuple[str, str], server: LiveServer, home: Path
) -> None:
    data = home / "data"
    before = files_under(data) if data.exists() else []
    PROBES[route](server, home)
    assert (files_under(data) if data.exists() else []) == before  # nothing kept
    assert httpx.get(f"{server.url}/api/v1/health", timeout=10).json()["status"] == "ok"
