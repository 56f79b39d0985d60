"""Limits and bad input against a real uvicorn server (started without a model: every check here
happens before recognition, so the answers must be the same with or without one)."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator

import cv2
import httpx
import numpy as np
import pytest
from conftest_service import REAL_PHOTOS, LiveServer, live_server

from service.settings import Settings

pytestmark = pytest.mark.slow

CAP = 200_000  # a small byte cap so the tests need no large files


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    settings = Settings(load_pipeline=False, max_upload_bytes=CAP, max_pixels=2_000_000)
    with live_server(settings) as live:
        yield live


@pytest.fixture(scope="module")
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http


def real_photo_bytes() -> bytes:
    return sorted(REAL_PHOTOS.glob("*.jpg"))[0].read_bytes()


def png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` (a decompression-bomb shape)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )


def assert_error(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return body


def test_health_says_recognition_is_off(client: httpx.Client) -> None:
    body = client.get("/api/v1/health").json()
    assert body["status"] == "ok"
    assert body["recognition"] is False
    assert "load_pipeline=False" in body["recognition_error"]


def test_rules_lists_presets(client: httpx.Client) -> None:
    presets = {p["name"]: p["rules"] for p in client.get("/api/v1/rules").json()["presets"]}
    assert presets["classic"]["wrap_13_1"] is True
    assert presets["okey101"]["hand_size"] == 21


def test_upload_over_the_byte_cap_is_413(client: httpx.Client) -> None:
    body = b"\xff\xd8\xff" + bytes(CAP)
    assert_error(client.post("/api/v1/scan", content=body), 413, "too_large")
    files = {"image": ("rack.jpg", body, "image/jpeg")}
    assert_error(client.post("/api/v1/scan", files=files), 413, "too_large")


def test_upload_over_the_cap_without_content_length_is_413(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b"\xff\xd8\xff"
        for _ in range(10):
            yield bytes(CAP // 5)

    response = client.post("/api/v1/scan", content=chunks())
    assert_error(response, 413, "too_large")


def test_pixel_cap_is_checked_from_the_header(client: httpx.Client) -> None:
    body = assert_error(
        client.post("/api/v1/scan", content=png_header(30_000, 30_000)), 413, "too_many_pixels"
    )
    assert "30000x30000" in body["error"]["message"]


def test_content_is_sniffed_not_taken_from_the_name(client: httpx.Client) -> None:
    files = {"image": ("rack.jpg", b"GIF89a" + bytes(100), "image/jpeg")}
    assert_error(client.post("/api/v1/scan", files=files), 415, "unsupported_media_type")
    text = {"image": ("rack.jpg", b"hello, not an image", "image/jpeg")}
    assert_error(client.post("/api/v1/scan", files=text), 415, "unsupported_media_type")


def test_a_heic_photo_passes_the_checks_and_a_broken_one_is_a_400(client: httpx.Client) -> None:
    pillow_heif = pytest.importorskip("pillow_heif")
    photo = cv2.imdecode(np.frombuffer(real_photo_bytes(), np.uint8), cv2.IMREAD_COLOR)
    heic = pillow_heif.from_bytes(
        mode="RGB", size=photo.shape[1::-1], data=cv2.cvtColor(photo, cv2.COLOR_BGR2RGB).tobytes()
    )
    out = io.BytesIO()
    heic.save(out, quality=80)
    data = out.getvalue()
    # every check passed: this server has no model, so the answer is the 503 for that
    assert_error(client.post("/api/v1/scan", content=data), 503, "no_model")
    body = assert_error(client.post("/api/v1/scan", content=data[:300]), 400, "bad_image")
    assert "HEIF" in body["error"]["message"]


def test_a_real_photo_named_txt_is_accepted_as_jpeg(client: httpx.Client) -> None:
    # The photo passes every check; this server has no model, so the answer is the 503 for that.
    files = {"image": ("notes.txt", real_photo_bytes(), "text/plain")}
    body = assert_error(client.post("/api/v1/scan", files=files), 503, "no_model")
    assert "recognition is unavailable" in body["error"]["message"]


def test_truncated_jpeg_is_400(client: httpx.Client) -> None:
    data = real_photo_bytes()
    assert_error(client.post("/api/v1/scan", content=data[:20]), 400, "bad_image")
    ok, png = cv2.imencode(".png", np.zeros((8, 8, 3), np.uint8))
    assert ok
    broken = png.tobytes()[:40] + bytes(200)
    assert_error(client.post("/api/v1/scan", content=broken), 400, "bad_image")


def test_missing_image_field_and_empty_body(client: httpx.Client) -> None:
    assert_error(client.post("/api/v1/scan", content=b""), 400, "missing_image")
    form = client.post("/api/v1/scan", files={"photo": ("a.jpg", real_photo_bytes())})
    assert_error(form, 400, "missing_image")


def test_bad_scan_options_name_the_option(client: httpx.Client) -> None:
    data = real_photo_bytes()
    body = assert_error(
        client.post("/api/v1/scan", params={"indicator": "Z9"}, content=data),
        422,
        "invalid_request",
    )
    assert "indicator" in body["error"]["message"] and "Z9" in body["error"]["message"]
    body = assert_error(
        client.post("/api/v1/scan", params={"rules": "chess"}, content=data),
        422,
        "invalid_request",
    )
    assert "chess" in body["error"]["message"]
    body = assert_error(
        client.post("/api/v1/scan", params={"rules": '{"hand_size": 0}'}, content=data),
        422,
        "invalid_request",
    )
    assert "rules" in body["error"]["message"]


def test_malformed_json_bodies_are_422(client: httpx.Client) -> None:
    not_json = client.post(
        "/api/v1/hand", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_error(not_json, 422, "invalid_request")
    missing = client.post("/api/v1/hand", json={"tiles": "R1 R2"})
    body = assert_error(missing, 422, "invalid_request")
    assert "indicator" in body["error"]["message"]
    extra = client.post("/api/v1/referee", json={"groups": [], "indicator": "R1", "colour": 1})
    assert_error(extra, 422, "invalid_request")


def test_unknown_routes_and_methods_are_json(client: httpx.Client) -> None:
    assert_error(client.get("/api/v1/nothing"), 404, "not_found")
    assert_error(client.get("/api/v1/scan"), 405, "method_not_allowed")


def test_server_keeps_serving_after_bad_requests(client: httpx.Client) -> None:
    for body in (b"", b"\xff\xd8\xff", png_header(1, 1), b"\x00" * 1000):
        client.post("/api/v1/scan", content=body)
    assert client.get("/api/v1/health").json()["status"] == "ok"


def test_pages_are_served(client: httpx.Client) -> None:
    camera = client.get("/camera")
    assert camera.status_code == 200 and "/static/camera.js" in camera.text
    overlay = client.get("/overlay", params={"table": "home"})
    assert overlay.status_code == 200 and "/static/overlay.js" in overlay.text
    assert client.get("/docs").status_code == 200
    assert "/api/v1/scan" in client.get("/openapi.json").json()["paths"]
