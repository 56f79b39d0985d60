"""101 hands through a real uvicorn server: a 22-tile hand is ranked by ``okey.okey101`` (its
opening-then-leftover order and figures) in the advice shape the pages read, on ``/hand``, pushed
tables, ``/scan`` and the camera stream; 21 tiles keep the waits; classic hands are untouched."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from conftest_service import OWNER_HEADERS, LiveServer, engine_client, live_server, require_model

import okey
from okey import Rules, Tile, advise_hand, parse_tiles
from okey.okey101 import advise_discard
from service.settings import Settings

pytestmark = pytest.mark.slow

HAND_22 = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"
# The okey for indicator B2 is B3: this hand holds one, and does not open (points short of 101).
WITH_OKEY = "R1 R2 R3 Y5 B5 K5 K9 K10 K11 B3 B7 B8 R6 Y13 K1 Y2 R8 Y9 K3 B12 R11 Y6"
OPTION_FIELDS = {"discard", "distance", "improving", "improving_copies", "is_okey", "advised"}


@pytest.fixture(scope="module")
def engine() -> Iterator[httpx.Client]:
    with engine_client() as http:
        yield http


def _hand(engine: httpx.Client, tiles: str, indicator: str = "B2") -> dict:
    response = engine.post(
        "/api/v1/hand", json={"tiles": tiles, "indicator": indicator, "rules": "okey101"}
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_hand_of_22_is_ranked_by_the_101_adviser(engine: httpx.Client) -> None:
    body = _hand(engine, HAND_22)
    advice = body["advice"]
    assert advice["kind"] == "discard"
    assert advice["adviser"] == "okey101"
    ranked = advise_discard(HAND_22, "B2", Rules.okey101())
    assert [o["discard"] for o in advice["options"]] == [str(o.tile) for o in ranked]
    assert advice["options"][0]["discard"] == "B9"  # the doctest's answer in okey/okey101.py
    hand, indicator = parse_tiles(HAND_22), Tile.parse("B2")
    for got, want in zip(advice["options"], ranked, strict=True):
        assert set(got) >= OPTION_FIELDS
        figures = want.to_dict()
        del figures["tile"]
        assert {k: got[k] for k in figures} == figures
        rest = list(hand)
        rest.remove(want.tile)
        assert got["distance"] == okey.distance_to_win(rest, indicator, Rules.okey101())
        assert got["sentence"].startswith(f"Discard {want.tile}: ")
    assert advice["distance"] == advice["options"][0]["distance"]
    assert advice["sentence"] == advice["options"][0]["sentence"]
    assert advice["waits"] == []
    assert body["distance_to_win"] == okey.distance_to_win(hand, indicator, Rules.okey101())


def test_the_okey_is_never_the_advised_101_discard(engine: httpx.Client) -> None:
    advice = _hand(engine, WITH_OKEY)["advice"]
    (okey_option,) = [o for o in advice["options"] if o["discard"] == "B3"]
    assert okey_option["is_okey"] is True
    assert okey_option["penalty"] == 101
    assert okey_option["advised"] is False
    assert "penalty" in okey_option["sentence"]
    best = advice["options"][0]
    assert best["discard"] != "B3"
    assert best["advised"] is True
    assert best["opens"] is False
    assert "best opening" in best["sentence"]


def test_hand_of_21_gets_the_101_waits(engine: httpx.Client) -> None:
    """21 tiles in 101 (a draw is due): the 101 adviser's waits, the engine's own answer."""
    tiles = HAND_22.split()[:-1]
    advice = _hand(engine, " ".join(tiles))["advice"]
    assert advice["kind"] == "waits"
    assert advice["adviser"] == "okey101"
    expected = okey.advise_hand(parse_tiles(tiles), Tile.parse("B2"), Rules.okey101()).to_dict()
    assert advice == expected


def test_classic_hand_keeps_the_classic_adviser(engine: httpx.Client) -> None:
    fifteen = "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13"
    body = engine.post("/api/v1/hand", json={"tiles": fifteen, "indicator": "R5"}).json()
    expected = okey.advise(parse_tiles(fifteen), Tile.parse("R5"), Rules.classic()).to_dict()
    assert body["advice"] == expected


def test_pushed_101_table_shows_the_101_discard(engine: httpx.Client) -> None:
    rows = [
        ["R10 R11 R12 R13", "K13 Y13 B13", "K9 K10 K11"],
        ["Y1 Y2 Y3", "B5 B7 K2 K4 R1 Y8 B9 K6 K12"],
    ]
    assert sum(len(g.split()) for row in rows for g in row) == 22
    response = engine.put(
        "/api/v1/tables/t101",
        json={"rows": rows, "indicator": "B2", "rules": "okey101"},
        headers=OWNER_HEADERS,
    )
    assert response.status_code == 200, response.text
    state = response.json()["state"]
    assert state["rules"] == "okey101"
    assert state["advice"]["adviser"] == "okey101"
    assert state["discard"] == {"tile": "B9"}


# A rendered 101 rack of 22 tiles (vision.training.synth) that the shipped model reads in full.
RACK_101 = (5, 3)


@pytest.fixture(scope="module")
def scanner() -> Iterator[LiveServer]:
    require_model()
    with live_server(Settings(max_stream_fps=20)) as live:
        yield live


@pytest.fixture(scope="module")
def rack_101() -> tuple[bytes, str]:
    import cv2

    from vision.training.synth import render_sample

    image, truth = render_sample(*RACK_101, rules="okey101")
    ok, png = cv2.imencode(".png", image)
    assert ok
    return png.tobytes(), truth["indicator"]


def assert_101_advice(state: dict, indicator: str) -> None:
    """The scan's advice is the 101 adviser's, as ``/hand`` gives it for the hand read."""
    assert len(state["hand"]) == 22, state["hand"]
    rules = Rules.okey101()
    expected = advise_hand(parse_tiles(state["hand"]), Tile.parse(indicator), rules).to_dict()
    assert state["advice"]["adviser"] == "okey101"
    assert state["advice"] == expected
    assert state["discard"]["tile"] == expected["options"][0]["discard"]


def test_scan_of_a_101_rack_is_ranked_by_the_101_adviser(
    scanner: LiveServer, rack_101: tuple[bytes, str]
) -> None:
    data, indicator = rack_101
    response = httpx.post(
        f"{scanner.url}/api/v1/scan",
        params={"rules": "okey101", "indicator": indicator},
        content=data,
        timeout=120,
    )
    assert response.status_code == 200, response.text
    assert_101_advice(response.json(), indicator)


def test_stream_of_a_101_rack_is_ranked_by_the_101_adviser(
    scanner: LiveServer, rack_101: tuple[bytes, str]
) -> None:
    from websockets.sync.client import connect

    data, indicator = rack_101
    settings = {"type": "settings", "rules": "okey101", "indicator": indicator}
    with connect(f"{scanner.ws_url}/api/v1/stream", max_size=2**24) as ws:
        ws.send(json.dumps(settings))
        for _ in range(20):  # the tracker confirms tiles over a few frames of the same rack
            ws.send(data)
            while (message := json.loads(ws.recv(timeout=120)))["type"] != "state":
                assert message["type"] != "error", message
            if message["advice"] is not None and len(message["hand"]) == 22:
                break
    assert_101_advice(message, indicator)
