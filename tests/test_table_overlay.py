"""The table camera feeds the advice and the overlay (issue 35): a rendered table camera's first
turn (the indicator Y9 and a discard R10 face up) goes through the table's camera socket, then the
player's hand is pushed; the advice counts R10 as seen and the overlay page (real headless
Chromium) shows the seen tiles and the copies left of the waits."""

from __future__ import annotations

import json
from collections.abc import Iterator

import cv2
import httpx
import pytest
from cdp_browser import chromium, require_chromium
from conftest_service import OWNER_HEADERS, LiveServer, live_server, require_model
from websockets.sync.client import connect

from service.settings import Settings
from vision.training.synth.table_game import render_table_game

# waits for R10 (R8 R9 _ R11) or the okey Y10; K1 is the discard
ROWS = [["R1 R2 R3", "Y5 B5 K5"], ["K9 K10 K11 K12", "R8 R9 R11", "K1"]]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    require_model()
    with live_server(Settings(max_stream_fps=30)) as live:
        yield live


@pytest.fixture(scope="module")
def filmed(server: LiveServer) -> str:
    """A table whose camera has seen the game's first turn; the table's token."""
    frames, truth = render_table_game(41, 1, 10)
    assert truth[-1]["seen"] == ["R10", "Y9"] and truth[-1]["indicator"] == "Y9"
    made = httpx.post(
        f"{server.url}/api/v1/tables", json={"table": "seen-here"}, headers=OWNER_HEADERS
    )
    token = made.json()["token"]
    with connect(f"{server.ws_url}/api/v1/tables/seen-here/camera") as ws:
        json.loads(ws.recv(timeout=30))
        ws.send(json.dumps({"type": "settings", "token": token, "indicator": "Y9"}))
        for frame in frames:
            ws.send(cv2.imencode(".jpg", frame)[1].tobytes())
            state = json.loads(ws.recv(timeout=60))
    assert sorted(state["seen"]) == ["R10", "Y9"] and state["seen_for_advice"] == ["R10"]
    return token


def push(server: LiveServer, token: str) -> dict:
    answer = httpx.put(
        f"{server.url}/api/v1/tables/seen-here",
        json={"rows": ROWS, "indicator": "Y9"},
        headers={"authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["state"]


def test_the_hand_is_advised_with_the_tables_seen_tiles(server: LiveServer, filmed: str) -> None:
    state = push(server, filmed)
    waits = {w["tile"]: w["unseen"] for w in state["advice"]["waits"]}
    assert waits == {"R10": 1, "Y10": 2}  # one R10 lies on the table
    assert sorted(state["table_camera"]["seen"]) == ["R10", "Y9"]


def test_the_overlay_shows_the_seen_tiles_and_the_copies_left(
    server: LiveServer, filmed: str
) -> None:
    require_chromium()
    push(server, filmed)
    with chromium(width=1280, height=720) as (page, _):
        page.navigate(f"{server.url}/overlay?table=seen-here")
        page.wait_for("document.getElementById('seen').textContent.length > 0")
        seen = page.evaluate("document.getElementById('seen').textContent")
        waits = page.evaluate("document.getElementById('waits').textContent")
        assert seen in ("Seen on the table (2): Y9 R10", "Seen on the table (2): R10 Y9")
        assert "R10 ×1" in waits and "Y10 ×2" in waits
        page.navigate(f"{server.url}/overlay?table=seen-here&parts=rack,advice")
        page.wait_for("document.body && document.body.dataset.version !== undefined")
        hidden = "getComputedStyle(document.getElementById('seen')).display"
        assert page.evaluate(hidden) == "none"
