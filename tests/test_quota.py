"""Kept data has quotas: a scan with ``keep=true`` writes the photo and its corrected tiles only
within the credential's share (429 ``quota_exceeded`` past it) and the server's whole
(507 ``storage_full``); the usage shows in ``GET /api/v1/data`` and ``istaka data list``.  A
correction naming a tile the scan did not read is a 422, not silently dropped.  Real photos
through the shipped recogniser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest_service import (
    EXAMPLE_PHOTO,
    OWNER_HEADERS,
    REAL_PHOTOS,
    REPO,
    LiveServer,
    live_server,
    require_model,
)

from service.settings import Settings

pytestmark = pytest.mark.slow


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
    require_model()
    # A keep writes a photo and its label file (the first also records.jsonl): three files.
    settings = Settings(max_kept_files_per_token=4, max_kept_files=6)
    with live_server(settings) as live:
        yield live


def first_tile_id(server: LiveServer, photo: Path) -> int:
    answer = httpx.post(f"{server.url}/api/v1/scan", content=photo.read_bytes(), timeout=120)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    return [t for row in body["rows"] for group in row for t in group][0]["id"]


def keep(
    server: LiveServer, photo: Path, tile_id: int, headers: dict, **params: str
) -> httpx.Response:
    query = {"keep": "true", "corrections": json.dumps({str(tile_id): "R5"}), **params}
    return httpx.post(
        f"{server.url}/api/v1/scan",
        params=query,
        content=photo.read_bytes(),
        headers=headers,
        timeout=120,
    )


def test_kept_data_stops_at_the_quotas(server: LiveServer, home: Path) -> None:
    photos = [EXAMPLE_PHOTO, *sorted(REAL_PHOTOS.glob("*.jpg"))[:2]]
    ids = [first_tile_id(server, photo) for photo in photos]
    first = keep(server, photos[0], ids[0], OWNER_HEADERS)
    assert first.status_code == 200, first.text
    kept = sorted(p.name for p in (home / "data" / "images").iterdir())
    assert len(kept) == 1
    # The owner's share (4 files) is spent: 429, and nothing more is written.
    over = keep(server, photos[1], ids[1], OWNER_HEADERS)
    assert over.status_code == 429 and over.json()["error"]["code"] == "quota_exceeded"
    assert "max_kept_files_per_token" in over.json()["error"]["message"]
    # A table's token has a share of its own; the server's whole (6 files) is what stops it.
    made = httpx.post(
        f"{server.url}/api/v1/tables", json={"table": "keeper"}, headers=OWNER_HEADERS
    ).json()
    table_auth = {"authorization": f"Bearer {made['token']}"}
    second = keep(server, photos[1], ids[1], table_auth, table="keeper")
    assert second.status_code == 200, second.text
    full = keep(server, photos[2], ids[2], table_auth, table="keeper")
    assert full.status_code == 507 and full.json()["error"]["code"] == "storage_full"
    assert len(list((home / "data" / "images").iterdir())) == 2
    usage = httpx.get(f"{server.url}/api/v1/data").json()["usage"]
    assert usage["files"] >= 5 and usage["max_files"] == 6 and len(usage["by_credential"]) == 2
    # The same usage on the command line.
    listing = subprocess.run(
        [sys.executable, "-m", "istaka", "data", "list", "--json"],
        cwd=REPO,
        env={**os.environ, "ISTAKA_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listing.returncode == 0, listing.stderr
    assert json.loads(listing.stdout)["usage"]["by_credential"] == usage["by_credential"]


def test_a_correction_of_a_tile_not_read_is_422(server: LiveServer) -> None:
    # It was dropped without a word.
    answer = httpx.post(
        f"{server.url}/api/v1/scan",
        params={"corrections": json.dumps({"999": "R5"})},
        content=EXAMPLE_PHOTO.read_bytes(),
        timeout=120,
    )
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "unknown_tile"
    assert "999" in answer.json()["error"]["message"]
