"""The table camera in the service (issue 35): ``POST /scan?scene=table`` and the table camera's
WebSocket, on a real server with the shipped recogniser."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import cv2
import httpx
import pytest
from conftest_service import OWNER_HEADERS, LiveServer, live_server, require_model
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from service.settings import Settings
from tests.test_table import REPO, TABLE_PHOTO, _labels
from vision.training.synth.table_game import render_table_game

TURNS, PER_TURN = 3, 10


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    require_model()
    with live_server(Settings(max_stream_fps=30, max_text_messages_per_second=5)) as live:
        yield live


@pytest.fixture(scope="module")
def game() -> tuple[list[bytes], list[dict]]:
    frames, truth = render_table_game(41, TURNS, PER_TURN)
    return [
        cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes() for f in frames
    ], truth


def new_table(server: LiveServer, name: str) -> str:
    made = httpx.post(
        f"{server.url}/api/v1/tables", json={"table": name}, headers=OWNER_HEADERS, timeout=30
    )
    assert made.status_code == 201, made.text
    return made.json()["token"]


def test_scan_scene_table_gives_the_seen_tiles(server: LiveServer) -> None:
    answer = httpx.post(
        f"{server.url}/api/v1/scan",
        params={"scene": "table", "indicator": "K13"},
        content=TABLE_PHOTO.read_bytes(),
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    data = answer.json()
    truth = _labels(cv2.imread(str(TABLE_PHOTO)))
    assert data["scene"] == "table" and data["indicator_source"] == "typed"
    assert Counter(data["seen_tiles"]) == Counter(t for t, _ in truth)
    assert [t["role"] for t in data["seen"]].count("meld") == 18 and len(data["melds"]) == 6


def test_scan_scene_table_refuses_rack_only_options(server: LiveServer) -> None:
    for params in ({"seen": "R5"}, {"declare": "true"}, {"scene": "tables"}):
        answer = httpx.post(
            f"{server.url}/api/v1/scan",
            params={"scene": "table", **params},
            content=TABLE_PHOTO.read_bytes(),
            timeout=60,
        )
        assert answer.status_code == 422, answer.text


def test_the_table_camera_keeps_the_games_seen_tiles(
    server: LiveServer, game: tuple[list[bytes], list[dict]]
) -> None:
    frames, truth = game
    token = new_table(server, "filmed-game")
    with connect(f"{server.ws_url}/api/v1/tables/filmed-game/camera") as ws:
        assert json.loads(ws.recv(timeout=30))["type"] == "ready"
        ws.send(
            json.dumps({"type": "settings", "token": token, "indicator": truth[0]["indicator"]})
        )
        states = []
        for frame in frames:  # one at a time: every frame is read, none dropped
            ws.send(frame)
            state = json.loads(ws.recv(timeout=60))
            assert state["type"] == "table_state", state
            states.append(state)
        for state, want in zip(states, truth, strict=True):
            if want["settled"]:
                assert Counter(state["seen"]) == Counter(want["seen"]), want["turn"]
        last = states[-1]
        assert last["indicator"] == truth[0]["indicator"]
        assert Counter(last["seen_for_advice"]) == Counter(want["seen"]) - Counter(
            [truth[0]["indicator"]]
        )
        assert all(c["frame"] < len(frames) for c in last["changes"])
        # the table's state carries the record for the rack's stream and the overlay
        stored = httpx.get(f"{server.url}/api/v1/tables/filmed-game", timeout=30).json()
        assert Counter(stored["state"]["table_camera"]["seen"]) == Counter(want["seen"])
        # a person corrects a change: the record and the table follow
        added = next(c for c in last["changes"] if c["kind"] == "added")
        other = "FJ" if added["tile"] != "FJ" else "R1"
        ws.send(json.dumps({"type": "correct", "change": added["id"], "tile": other}))
        fixed = json.loads(ws.recv(timeout=30))
        assert (
            fixed["changes"][-1]["kind"] == "corrected"
            and fixed["changes"][-1]["of"] == added["id"]
        )
        assert Counter(fixed["seen"]) == Counter(want["seen"]) - Counter([added["tile"]]) + Counter(
            [other]
        )
        stored = httpx.get(f"{server.url}/api/v1/tables/filmed-game", timeout=30).json()
        assert other in stored["state"]["table_camera"]["seen"]
        ws.send(json.dumps({"type": "correct", "change": 999, "tile": None}))
        assert json.loads(ws.recv(timeout=30))["code"] == "unknown_change"


def test_the_rack_stream_of_the_table_keeps_the_table_cameras_record(
    server: LiveServer, game: tuple[list[bytes], list[dict]]
) -> None:
    frames, truth = game
    token = new_table(server, "both-cameras")
    with connect(f"{server.ws_url}/api/v1/tables/both-cameras/camera") as ws:
        json.loads(ws.recv(timeout=30))
        ws.send(json.dumps({"type": "settings", "token": token}))
        for frame in frames[:PER_TURN]:
            ws.send(frame)
            json.loads(ws.recv(timeout=60))
    rack = (REPO / "examples" / "rack_full.jpg").read_bytes()
    with connect(f"{server.ws_url}/api/v1/stream") as ws:
        json.loads(ws.recv(timeout=30))
        ws.send(json.dumps({"type": "settings", "table": "both-cameras", "token": token}))
        ws.send(rack)
        assert json.loads(ws.recv(timeout=60))["type"] == "state"
    stored = httpx.get(f"{server.url}/api/v1/tables/both-cameras", timeout=30).json()["state"]
    assert stored["source"] == "camera" and stored["hand"]
    assert Counter(stored["table_camera"]["seen"]) == Counter(truth[PER_TURN - 1]["seen"])


def test_a_flood_of_text_messages_closes_the_table_camera(server: LiveServer) -> None:
    new_table(server, "flooded")
    with connect(f"{server.ws_url}/api/v1/tables/flooded/camera") as ws:
        json.loads(ws.recv(timeout=30))
        codes = []
        # the server may close while the flood is still being sent: the close frame says why
        with pytest.raises(ConnectionClosed) as closed:
            for _ in range(40):
                ws.send(json.dumps({"type": "settings", "token": "not-a-token"}))
            while True:
                codes.append(json.loads(ws.recv(timeout=30))["code"])
    assert set(codes) <= {"wrong_token", "too_many_messages"}
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "too_many_messages")
