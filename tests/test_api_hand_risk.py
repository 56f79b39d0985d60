"""What rates a discard's risk, through ``POST /hand`` on a real server: the right-hand player's
takes and discards (classic), the melds on the table and whether the player has opened (101);
the same advice as ``okey.advise_hand`` with them, and a 422 naming the field for a value that
cannot be."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from conftest_service import engine_client

import okey
from okey import Rules, Tile, parse_tiles

pytestmark = pytest.mark.slow

# Indicator R10: Y11 is the discard, unless the next player took Y12 (then B1, same distance).
RISKY = "Y13 K6 Y6 B1 K7 K8 Y11 R13 K10 K13 R2 Y4 Y2 R4 K3"
HAND_22 = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"


@pytest.fixture(scope="module")
def engine() -> Iterator[httpx.Client]:
    with engine_client() as http:
        yield http


def test_the_next_players_takes_and_discards_rate_a_classic_discard(engine) -> None:
    plain = engine.post("/api/v1/hand", json={"tiles": RISKY, "indicator": "R10"})
    assert plain.status_code == 200, plain.text
    assert plain.json()["advice"]["options"][0]["discard"] == "Y11"
    body = {"tiles": RISKY, "indicator": "R10", "next_takes": "Y12", "next_discards": ["K9"]}
    rated = engine.post("/api/v1/hand", json=body)
    assert rated.status_code == 200, rated.text
    advice = rated.json()["advice"]
    expected = okey.advise_hand(
        parse_tiles(RISKY),
        Tile.parse("R10"),
        Rules.classic(),
        next_takes=parse_tiles("Y12"),
        next_discards=parse_tiles("K9"),
    )
    assert advice == expected.to_dict()
    assert advice["options"][0]["discard"] == "B1"
    assert "Not Y11: the next player took Y12" in advice["sentence"]
    risks = {o["discard"]: o.get("risk") for o in advice["options"]}
    assert risks["Y11"] == "high" and risks["K8"] == "low"


def test_the_table_rates_a_101_discard(engine) -> None:
    body = {
        "tiles": HAND_22,
        "indicator": "B2",
        "rules": "okey101",
        "table": ["B8 B7 B6"],
        "opened": True,
    }
    response = engine.post("/api/v1/hand", json=body)
    assert response.status_code == 200, response.text
    advice = response.json()["advice"]
    expected = okey.advise_hand(
        parse_tiles(HAND_22), Tile.parse("B2"), Rules.okey101(), table=["B8 B7 B6"], opened=True
    )
    assert advice == expected.to_dict()
    by_discard = {o["discard"]: o for o in advice["options"]}
    assert by_discard["B9"]["penalty"] == 101 and not by_discard["B9"]["advised"]
    assert advice["options"][0]["discard"] not in {"B9", "B5"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"next_takes": "Y-12"}, "next_takes: cannot read tile 'Y-12'"),
        ({"next_discards": ["K9", "Q1"]}, "next_discards: cannot read tile 'Q1'"),
        ({"next_takes": "R10 R10"}, "next_takes: R10 is in the hand 0 time(s) and seen 3 time(s)"),
        ({"next_discards": "K6 K6"}, "next_discards: K6 is in the hand 1 time(s)"),
        ({"table": ["K4 K5 K6"]}, "table: melds on the table and opening are 101's"),
        ({"opened": True}, "opened: melds on the table and opening are 101's"),
    ],
)
def test_bad_classic_values_are_refused_by_name(engine, extra, message) -> None:
    response = engine.post("/api/v1/hand", json={"tiles": RISKY, "indicator": "R10", **extra})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["message"].startswith(message)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"next_takes": "Y12"}, "next_takes: the right-hand player's takes and discards rate"),
        ({"next_discards": "Y12"}, "next_discards: the right-hand player's takes"),
        ({"table": ["K4 K5 K6", "K12 K13 K1"]}, "table[1]: 'K12 K13 K1' is not a meld"),
        ({"table": ["K4 K5 K6", "K1 K-2 K3"]}, "table[1]: cannot read tile 'K-2'"),
        (
            {"table": ["K4 K5 K6", "K4 Y4 B4"]},
            "table: K4 is on the table 2 time(s) and in the hand 1 time(s)",
        ),
        (
            {"table": ["B2 R2 Y2", "B1 B2 B3"]},
            "table: B2 is on the table 2 time(s) and the indicator",
        ),
        ({"table": ["K4 K5 K6"] * 31}, "table"),
    ],
)
def test_bad_101_values_are_refused_by_name(engine, extra, message) -> None:
    body = {"tiles": HAND_22, "indicator": "B2", "rules": "okey101", **extra}
    response = engine.post("/api/v1/hand", json=body)
    assert response.status_code == 422, response.text
    assert message in response.json()["error"]["message"]


def test_the_next_players_takes_rate_the_discard_after_a_take(engine) -> None:
    hand = RISKY.replace("Y4 ", "")  # the take of Y4 makes RISKY
    body = {"tiles": hand, "indicator": "R10", "offered": "Y4"}
    plain = engine.post("/api/v1/hand", json=body)
    assert plain.status_code == 200, plain.text
    assert plain.json()["take_or_draw"]["discard"] == "Y11"
    rated = engine.post("/api/v1/hand", json={**body, "next_takes": "Y12", "next_discards": "K9"})
    assert rated.status_code == 200, rated.text
    answer = rated.json()["take_or_draw"]
    expected = okey.take_or_draw(hand, "Y4", "R10", next_takes=["Y12"], next_discards=["K9"])
    assert answer == expected.to_dict() and answer["discard"] == "B1"
