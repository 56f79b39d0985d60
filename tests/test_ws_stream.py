"""``WS /api/v1/stream`` against a real uvicorn server with the shipped model, fed with a rendered
rack video (``vision.training.synth.render_video``): states come back with tracked tiles, a burst
of frames is read newest-first with the rest dropped, corrections stick to their track, bad
messages get an error without ending the stream, and a vanished client leaves the server idle."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import cv2
import httpx
import numpy as np
import pytest
from conftest_service import OWNER, LiveServer, live_server, require_model
from websockets.sync.client import connect

from service.settings import Settings

pytestmark = pytest.mark.slow

SEED, FRAMES = 7, 12


@pytest.fixture(scope="module")
def video() -> tuple[list[bytes], list[dict]]:
    from vision.training.synth.video import render_video

    frames, truths = render_video(SEED, FRAMES)
    encoded = []
    for frame in frames:
        ok, buffer = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        encoded.append(buffer.tobytes())
    return encoded, truths


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    require_model()
    with live_server(Settings(max_stream_fps=20)) as live:
        health = httpx.get(f"{live.url}/api/v1/health").json()
        assert health["recognition"], health
        yield live


def receive(ws, kind: str = "state", timeout: float = 60) -> dict:  # noqa: ANN001
    """The next message of ``kind`` (errors are returned too, so tests can check them)."""
    while True:
        message = json.loads(ws.recv(timeout=timeout))
        if message["type"] in (kind, "error"):
            return message


def all_tiles(state: dict) -> list[dict]:
    return [tile for row in state["rows"] for group in row for tile in group]


def test_frames_in_states_out(server: LiveServer, video: tuple[list[bytes], list[dict]]) -> None:
    frames, truths = video
    with connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws:
        ready = receive(ws, "ready")
        assert ready["max_fps"] == 20
        ws.send(json.dumps({"type": "settings", "indicator": truths[0]["indicator"]}))
        states = []
        for frame in frames:
            ws.send(frame)
            states.append(receive(ws))
    assert all(s["type"] == "state" for s in states), states[-1]
    assert [s["frame"] for s in states] == list(range(1, len(frames) + 1))
    read = [tile for state in states for tile in all_tiles(state)]
    assert read, "no tile read in the whole rendered video"
    assert all(isinstance(t["id"], int) and len(t["box"]) == 4 for t in read)
    # The states are the pipeline's smoothed readings: replaying the frames in-process through
    # the same recogniser, a fresh tracker and the pipeline gives the same hands and ids.  (How
    # well the model reads them is the model card's business, not this test's.)
    for state, expected in zip(states, replay(frames, truths[0]["indicator"]), strict=True):
        assert state["rows"] == expected["rows"]
        assert state["hand"] == expected["hand"]


def replay(frames: list[bytes], indicator: str) -> list[dict]:
    from okey import Tile
    from service.settings import default_pipeline
    from vision.pipeline import NothingFoundError
    from vision.smoothing import HandTracker

    pipeline, tracker, answers = default_pipeline(), HandTracker(), []
    for frame in frames:
        image = cv2.imdecode(np.frombuffer(frame, np.uint8), cv2.IMREAD_COLOR)
        smoothed = tracker.update(pipeline.recognizer.recognize(image))
        try:
            answers.append(pipeline.read(smoothed, indicator=Tile.parse(indicator)).to_dict())
        except NothingFoundError:  # the stream answers such a frame with an empty hand
            answers.append({"rows": [], "hand": []})
    return answers


def test_a_burst_is_read_newest_first(
    server: LiveServer, video: tuple[list[bytes], list[dict]]
) -> None:
    frames, _ = video
    burst = [frames[i % len(frames)] for i in range(40)]
    with connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws:
        receive(ws, "ready")
        for frame in burst:
            ws.send(frame)
        ws.send(json.dumps({"type": "settings"}))  # a marker: sent after every frame
        states = [receive(ws)]
        while states[-1]["received"] < len(burst) or states[-1]["dropped"] == 0:
            states.append(receive(ws))
    last = states[-1]
    assert last["received"] == len(burst)
    # Far fewer frames were read than sent: the rest were dropped, never queued.
    assert last["frame"] < len(burst)
    assert last["dropped"] > 0


def test_correction_sticks_to_its_track(
    server: LiveServer, video: tuple[list[bytes], list[dict]]
) -> None:
    frames, _ = video
    with connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws:
        receive(ws, "ready")
        ws.send(frames[0])
        state = receive(ws)
        target = all_tiles(state)[0]
        new = "FJ" if target["tile"] != "FJ" else "R1"
        ws.send(json.dumps({"type": "correct", "id": target["id"], "tile": new}))
        # The same frame again: the tracker keeps every id, so this checks the correction, not
        # the tracking.
        for _ in range(3):
            ws.send(frames[0])
            state = receive(ws)
        fixed = [t for t in all_tiles(state) if t["id"] == target["id"]]
        assert fixed and fixed[0]["tile"] == new and fixed[0].get("corrected") is True
        assert state["corrections"] == {str(target["id"]): new}
        others = [t for t in all_tiles(state) if t["id"] != target["id"]]
        assert not any(t.get("corrected") for t in others)
        ws.send(json.dumps({"type": "correct", "id": target["id"], "tile": None}))
        ws.send(frames[0])
        state = receive(ws)
        assert state["corrections"] == {}
        assert not any(t.get("corrected") for t in all_tiles(state))


def test_bad_messages_get_errors_and_the_stream_goes_on(
    server: LiveServer, video: tuple[list[bytes], list[dict]]
) -> None:
    frames, _ = video
    with connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws:
        receive(ws, "ready")
        ws.send("{oops")
        assert receive(ws)["code"] == "invalid_message"
        ws.send(json.dumps({"type": "settings", "indicator": "X9"}))
        error = receive(ws)
        assert error["type"] == "error" and "X9" in error["message"]
        ws.send(b"GIF89a not a frame")
        assert receive(ws)["code"] == "unsupported_media_type"
        ws.send(b"\xff\xd8\xff" + bytes(Settings().max_frame_bytes))
        assert receive(ws)["code"] == "too_large"
        ws.send(frames[0])
        assert receive(ws)["type"] == "state"


def test_a_vanished_client_leaves_the_server_idle(
    server: LiveServer, video: tuple[list[bytes], list[dict]]
) -> None:
    frames, _ = video
    for _ in range(3):
        with connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws:
            receive(ws, "ready")
            for frame in frames:
                ws.send(frame)
        # ... and gone without reading a single state
    deadline = time.monotonic() + 60
    while httpx.get(f"{server.url}/api/v1/health").json()["pending_scans"]:
        assert time.monotonic() < deadline, "inference still pending long after the clients left"
        time.sleep(0.1)
    # And the next client is served as usual.
    with connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws:
        receive(ws, "ready")
        ws.send(frames[0])
        assert receive(ws)["type"] == "state"


def test_stream_without_model_says_why() -> None:
    with (
        live_server(Settings(load_pipeline=False)) as bare,
        connect(f"{bare.ws_url}/api/v1/stream") as ws,
    ):
        error = json.loads(ws.recv(timeout=30))
        assert error["type"] == "error" and error["code"] == "no_model"


def test_stream_feeds_the_overlay(
    server: LiveServer, video: tuple[list[bytes], list[dict]]
) -> None:
    frames, _ = video
    with (
        connect(f"{server.ws_url}/api/v1/overlay/cam") as overlay,
        connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws,
    ):
        assert json.loads(overlay.recv(timeout=30))["version"] == 0
        receive(ws, "ready")
        ws.send(json.dumps({"type": "settings", "table": "cam", "token": OWNER}))
        ws.send(frames[0])
        state = receive(ws)
        pushed = json.loads(overlay.recv(timeout=60))
    assert pushed["version"] >= 1
    assert pushed["state"]["source"] == "camera"
    assert pushed["state"]["rows"] == state["rows"]


def test_streams_over_the_limit_are_told_to_come_back(
    video: tuple[list[bytes], list[dict]],
) -> None:
    require_model()
    with (
        live_server(Settings(max_streams=1)) as one,
        connect(f"{one.ws_url}/api/v1/stream") as first,
    ):
        assert receive(first, "ready")["type"] == "ready"
        with connect(f"{one.ws_url}/api/v1/stream") as second:
            error = json.loads(second.recv(timeout=30))
            assert error["code"] == "busy" and "limit is 1" in error["message"]
        assert httpx.get(f"{one.url}/api/v1/health").json()["streams"] == 1


def test_the_stream_rates_the_discards_as_post_hand_does(
    server: LiveServer, video: tuple[list[bytes], list[dict]]
) -> None:
    """``next_takes``/``next_discards`` (101: ``table_melds``, ``opened``) in the settings rate
    the advice as ``POST /hand`` does; a bad value is an error naming it, the stream goes on with
    the settings it had."""
    from okey import Rules, Tile, advise_hand, parse_tiles

    frames, truths = video
    indicator = truths[0]["indicator"]
    with connect(f"{server.ws_url}/api/v1/stream", max_size=2**24) as ws:
        receive(ws, "ready")
        settings = {"type": "settings", "indicator": indicator, "next_takes": "K8"}
        ws.send(json.dumps({**settings, "next_discards": ["K12"]}))
        ws.send(frames[0])
        state = receive(ws)
        assert state["type"] == "state", state
        hand = parse_tiles(state["hand"])
        rated = advise_hand(
            hand, Tile.parse(indicator), Rules.classic(), next_takes=["K8"], next_discards=["K12"]
        )
        plain = advise_hand(hand, Tile.parse(indicator), Rules.classic())
        assert state["advice"] == rated.to_dict()
        assert rated.best.discard != plain.best.discard  # (the rendered rack: K10 -> R7)
        for bad, needle in [
            ({"next_takes": "K-8"}, "next_takes: cannot read tile 'K-8'"),
            ({"next_discards": "K8 K8 K8"}, "next_discards: K8 is in the hand 0 time(s)"),
            ({"table_melds": ["K4 K5 K6"]}, "table_melds: melds on the table and opening"),
            ({"opened": True}, "opened: melds on the table and opening are 101's"),
            ({"table": ["K4 K5 K6"]}, "give 101's melds on the table as table_melds"),
            ({"rules": "okey101"}, "next_takes: the right-hand player's takes and discards"),
            (
                {"rules": "okey101", "next_takes": "", "table_melds": ["K4 K5 K6", "K12 K13 K1"]},
                "table_melds[1]: 'K12 K13 K1' is not a meld",
            ),
            (
                {
                    "rules": "okey101",
                    "next_takes": "",
                    "table_melds": ["Y13 R13 B13", "Y11 Y12 Y13"],
                },
                "table_melds: Y13 is on the table 2 time(s) and the indicator",
            ),
        ]:
            ws.send(json.dumps({**settings, **bad}))
            error = receive(ws)
            assert error["type"] == "error", error
            assert needle in error["message"], (needle, error["message"])
        ws.send(frames[0])
        again = receive(ws)
        assert again["type"] == "state" and again["advice"] == state["advice"]
        opened = {"rules": "okey101", "next_takes": "", "table_melds": ["K4 K5 K6"]}
        ws.send(json.dumps({**settings, **opened, "opened": True}))
        ws.send(frames[0])
        assert receive(ws)["type"] == "state"
