"""The abuse probes of issue 22 against a real uvicorn server, each a row that once made the
service overwrite a table, stall, grow without bound or answer 500: foreign origins and rebinding
host names, oversized bodies and messages, long lists, deeply nested JSON, large images in bulk,
idle camera sockets.  After each probe the server still answers ``/health``.

The servers here run without the recognition model, or with a stand-in pipeline that only waits
(every check happens before recognition), so no model is needed."""

from __future__ import annotations

import json
import struct
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest_service import OWNER_HEADERS, LiveServer, live_server
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from service.errors import ApiError
from service.settings import Settings

pytestmark = pytest.mark.slow

HAND = {"tiles": "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13", "indicator": "R5"}
ROWS = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]


class WaitingPipeline:
    """Stands in for the recognition pipeline: a scan waits, then finds nothing."""

    recognizer = None

    def scan(self, image, **_: object) -> None:  # noqa: ANN001
        time.sleep(0.5)
        raise ApiError(422, "no_tiles", f"a stand-in pipeline read {image.shape}")


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    settings = Settings(
        pipeline_factory=WaitingPipeline,
        max_queued_pixels=3_000_000,
        stream_idle_seconds=1.0,
        max_streams=1,
        allowed_origins=("https://obs.example",),
        allowed_hosts=("club.lan",),
    )
    with live_server(settings) as live:
        yield live


@pytest.fixture(scope="module")
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        yield http


def alive(client: httpx.Client) -> None:
    """``/health`` answers (a generous bound: this checks liveness, the timing is the load
    benchmark's)."""
    response = client.get("/api/v1/health", timeout=10)
    assert response.status_code == 200 and response.json()["status"] == "ok"


def error_code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    return response.json()["error"]["code"]


def png(width: int, height: int) -> bytes:
    """A blank RGB PNG of the given size (small on the wire, large once decoded)."""
    row = b"\x00" + bytes(3 * width)
    data = zlib.compress(row * height, 9)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


# --- who may write: origins, host names, tokens ----------------------------------------------


def test_a_foreign_origin_cannot_write(server: LiveServer, client: httpx.Client) -> None:
    foreign = {"origin": "https://evil.example"}
    put = client.put(
        "/api/v1/tables/finals", json={"rows": ROWS, "indicator": "R5"}, headers=foreign
    )
    assert error_code(put, 403) == "origin_not_allowed"
    assert "evil.example" in put.json()["error"]["message"]
    assert error_code(client.post("/api/v1/hand", json=HAND, headers=foreign), 403)
    assert client.get("/api/v1/tables/finals").json()["version"] == 0  # nothing was written
    # The server's own pages and the allowed origin may; tools without an Origin too.
    own = {"origin": server.url}
    assert client.post("/api/v1/hand", json=HAND, headers=own).status_code == 200
    allowed = {"origin": "https://obs.example"}
    assert client.post("/api/v1/hand", json=HAND, headers=allowed).status_code == 200
    assert client.post("/api/v1/hand", json=HAND).status_code == 200
    assert error_code(client.post("/api/v1/hand", json=HAND, headers={"origin": "null"}), 403)


def test_a_foreign_origin_cannot_open_sockets(server: LiveServer) -> None:
    # Cross-site WebSocket hijacking: a page elsewhere opening the overlay or the camera stream.
    for path in ("/api/v1/overlay/finals", "/api/v1/stream"):
        with pytest.raises(InvalidStatus) as refused:
            connect(f"{server.ws_url}{path}", origin="https://evil.example")
        assert refused.value.response.status_code == 403
    with connect(f"{server.ws_url}/api/v1/overlay/finals", origin=server.url) as ws:
        assert json.loads(ws.recv(timeout=30))["version"] == 0


def test_a_rebinding_host_name_is_refused(client: httpx.Client, server: LiveServer) -> None:
    # DNS rebinding: the attacker's name resolved to this machine; the browser sends that name.
    for path in ("/camera", "/overlay", "/api/v1/health", "/api/v1/tables/finals"):
        response = client.get(path, headers={"host": f"evil.example:{server.port}"})
        assert error_code(response, 421) == "host_not_allowed"
    with pytest.raises(InvalidStatus) as refused:
        connect(
            f"{server.ws_url}/api/v1/overlay/finals",
            additional_headers={"host": "evil.example"},
        )
    assert refused.value.response.status_code == 403
    for host in ("localhost:8000", "192.168.1.20:8000", "[::1]:8000", "club.lan"):
        assert client.get("/api/v1/health", headers={"host": host}).status_code == 200, host


def test_pages_carry_security_headers(client: httpx.Client) -> None:
    for path in ("/camera", "/overlay"):
        headers = client.get(path).headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"  # the camera link holds a token
        assert headers["x-frame-options"] == "DENY"
    assert client.get("/api/v1/health").headers["x-content-type-options"] == "nosniff"


def test_a_camera_stream_needs_the_owner_token(client: httpx.Client, server: LiveServer) -> None:
    owner = client.put(
        "/api/v1/tables/stage", json={"rows": ROWS, "indicator": "R5"}, headers=OWNER_HEADERS
    ).json()
    with connect(f"{server.ws_url}/api/v1/stream") as ws:
        assert json.loads(ws.recv(timeout=30))["type"] == "ready"
        ws.send(json.dumps({"type": "settings", "table": "stage"}))
        assert json.loads(ws.recv(timeout=30))["code"] == "token_required"
        ws.send(json.dumps({"type": "settings", "table": "stage", "token": "guess"}))
        assert json.loads(ws.recv(timeout=30))["code"] == "wrong_token"
        ws.send(json.dumps({"type": "settings", "table": "stage", "token": owner["token"]}))
        ws.send(json.dumps({"type": "settings", "table": "fresh-table"}))
        assert json.loads(ws.recv(timeout=30))["code"] == "owner_token_required"
        token = OWNER_HEADERS["authorization"].split()[1]
        ws.send(json.dumps({"type": "settings", "table": "fresh-table", "token": token}))
        created = json.loads(ws.recv(timeout=30))
        assert created["type"] == "table" and created["token"]
        assert created["camera_url"].endswith(f"token={created['token']}")
    assert client.get("/api/v1/tables/stage").json()["version"] == 1


# --- bounded sizes ---------------------------------------------------------------------------


def test_large_json_bodies_are_refused_before_parsing(client: httpx.Client) -> None:
    # Two 10 MB /referee bodies held both engine threads for 18 s; a 90 MB body peaked at 4 GB.
    big = json.dumps({"groups": ["R1 R2 R3"] * 200_000, "indicator": "R5"}).encode()
    response = client.post(
        "/api/v1/referee", content=big, headers={"content-type": "application/json"}
    )
    assert error_code(response, 413) == "body_too_large"
    assert "max_json_bytes" in response.json()["error"]["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"tiles": "'
        for _ in range(100):
            yield b"R1 " * 1000
        yield b'", "indicator": "R5"}'

    response = client.post(
        "/api/v1/hand", content=chunks(), headers={"content-type": "application/json"}
    )
    assert error_code(response, 413) == "body_too_large"
    alive(client)


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/v1/referee", {"groups": ["R1 R2 R3"] * 31, "indicator": "R5"}, "groups"),
        ("/api/v1/referee", {"groups": [["R1"] * 31], "indicator": "R5"}, "groups"),
        ("/api/v1/hand", {**HAND, "seen": ["K3"] * 107}, "seen"),
        ("/api/v1/hand", {**HAND, "tiles": ["R1"] * 41}, "tiles"),
        ("/api/v1/hand", {**HAND, "seen": "K3 " * 200}, "seen"),
    ],
)
def test_long_lists_are_422_naming_the_field(
    client: httpx.Client, path: str, body: dict, field: str
) -> None:
    response = client.post(path, json=body)
    assert error_code(response, 422) == "invalid_request"
    assert field in response.json()["error"]["message"]


def test_deeply_nested_json_is_422_not_500(client: httpx.Client) -> None:
    # RecursionError in /scan's query parameters made a 500.
    nested = "[" * 1000 + "]" * 1000
    photo = png(8, 8)
    for params in ({"rules": "{" + '"a":' + nested + "}"}, {"rules": nested}):
        response = client.post("/api/v1/scan", params=params, content=photo)
        assert response.status_code == 422, response.text
    response = client.post("/api/v1/scan", params={"corrections": nested}, content=photo)
    assert response.status_code == 422, response.text
    body = client.post(
        "/api/v1/hand", content=b"[" * 30_000, headers={"content-type": "application/json"}
    )
    assert error_code(body, 422) == "invalid_request", body.text  # was 400 http_error
    alive(client)


def test_corrections_are_ascii_ids_and_tiles(client: httpx.Client) -> None:
    # {"\u0665": "R5"} (an Arabic-Indic five) was read as a correction of tile 5.
    photo = png(8, 8)
    for corrections in ('{"\u0665": "R5"}', '{"5": "R-5"}', '{"5": "R\u0665"}'):
        response = client.post("/api/v1/scan", params={"corrections": corrections}, content=photo)
        assert error_code(response, 422) == "invalid_request", corrections


def test_many_large_images_are_refused_before_decoding(client: httpx.Client) -> None:
    # Twenty concurrent 40-megapixel blank PNGs added 3.2 GB before the queue limit applied:
    # now each scan is admitted with its pixel count (max_queued_pixels) before it is decoded.
    photo = png(1000, 1000)  # 1 MP, a few kB on the wire
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: client.post("/api/v1/scan", content=photo), range(8)))
    codes = sorted(a.json()["error"]["code"] for a in answers)
    assert all(a.status_code < 500 or a.status_code == 503 for a in answers)
    busy = [a for a in answers if a.status_code == 503]
    assert busy and all("max_queued_pixels" in a.json()["error"]["message"] for a in busy), codes
    assert "no_tiles" in codes  # the admitted ones reached the (stand-in) pipeline
    alive(client)


# --- sockets ---------------------------------------------------------------------------------


def test_idle_camera_sockets_free_their_slot(server: LiveServer, client: httpx.Client) -> None:
    # Eight idle camera sockets took every camera slot for ever (this server has one slot).
    with connect(f"{server.ws_url}/api/v1/stream") as idle:
        assert json.loads(idle.recv(timeout=30))["type"] == "ready"
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                idle.recv(timeout=30)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4408, "idle_timeout")
    deadline = time.monotonic() + 30
    while client.get("/api/v1/health").json()["streams"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with connect(f"{server.ws_url}/api/v1/stream") as next_one:
        assert json.loads(next_one.recv(timeout=30))["type"] == "ready"


def test_stream_messages_are_bounded(server: LiveServer, client: httpx.Client) -> None:
    # A 15 MB `seen` list blocked the event loop for 11 s; nested JSON closed the stream with 1011.
    with connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws:
        assert json.loads(ws.recv(timeout=30))["type"] == "ready"
        ws.send(json.dumps({"type": "settings", "seen": "K3 " * 10_000}))
        error = json.loads(ws.recv(timeout=30))
        assert error["code"] == "too_large" and "max_text_message_bytes" in error["message"]
        ws.send(json.dumps({"type": "settings", "seen": ["K3"] * 107}))
        assert "seen" in json.loads(ws.recv(timeout=30))["message"]
        ws.send("[" * 5000 + "]" * 5000)
        assert json.loads(ws.recv(timeout=30))["code"] == "invalid_message"
        ws.send(json.dumps({"type": "settings"}))  # still open and answering
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.3)
    alive(client)


def test_a_15_mb_message_closes_only_its_socket() -> None:
    # The socket's own size cap (Settings.ws_max_size) refuses it before it is read whole.
    with live_server(Settings(pipeline_factory=WaitingPipeline)) as fresh:
        with connect(f"{fresh.ws_url}/api/v1/stream", max_size=2**24) as ws:
            assert json.loads(ws.recv(timeout=30))["type"] == "ready"
            with pytest.raises(ConnectionClosed) as closed:
                ws.send(json.dumps({"type": "settings", "seen": "K3 " * 5_000_000}))
                ws.recv(timeout=30)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009  # too big
        health = httpx.get(f"{fresh.url}/api/v1/health", timeout=10)
        assert health.status_code == 200 and health.json()["streams"] in (0, 1)


def test_a_message_flood_closes_only_its_socket(server: LiveServer, client: httpx.Client) -> None:
    # 200,000 corrections on one stream were all kept, and read one after another.
    with connect(f"{server.ws_url}/api/v1/stream") as ws:
        assert json.loads(ws.recv(timeout=30))["type"] == "ready"
        with pytest.raises(ConnectionClosed) as closed:
            for track in range(1000):
                ws.send(json.dumps({"type": "correct", "id": track, "tile": "R1"}))
            while True:
                message = json.loads(ws.recv(timeout=30))
                assert message["code"] in ("too_many_corrections", "too_many_messages")
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "too_many_messages")
    alive(client)
