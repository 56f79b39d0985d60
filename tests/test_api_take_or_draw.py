"""Take or draw through the service: ``POST /hand`` with ``offered`` against a real server, the
camera stream's ``offered`` setting, and the state the pages read it from."""

from __future__ import annotations

import pytest
from conftest_service import engine_client

from okey import Rules, Tile
from service.errors import ApiError
from service.routers.engine import add_take_or_draw
from service.routers.stream import apply_message
from service.stream import StreamSession

HAND = "R1 R2 R3 Y5 Y6 K5 K9 K10 K11 K12 B7 B8 B9 R6"  # indicator R5: Y7 wins


@pytest.mark.slow
def test_hand_with_an_offered_tile_answers_take_or_draw() -> None:
    with engine_client() as http:
        take = http.post("/api/v1/hand", json={"tiles": HAND, "indicator": "R5", "offered": "Y7"})
        assert take.status_code == 200, take.text
        answer = take.json()["take_or_draw"]
        assert answer["take"] is True and answer["discard"] == "K5"
        assert answer["sentence"].startswith("Take Y7, then discard K5")
        plain = http.post("/api/v1/hand", json={"tiles": HAND, "indicator": "R5"}).json()
        assert plain["take_or_draw"] is None
        bad = http.post("/api/v1/hand", json={"tiles": HAND, "indicator": "R5", "offered": "Y-7"})
        assert bad.status_code == 422 and "offered" in bad.json()["error"]["message"]
        full = http.post(
            "/api/v1/hand", json={"tiles": HAND + " K1", "indicator": "R5", "offered": "Y7"}
        )
        assert full.status_code == 422 and "14 tiles" in full.json()["error"]["message"]


def test_the_stream_keeps_the_offered_tile_and_refuses_a_bad_one() -> None:
    session = StreamSession()
    apply_message(session, '{"type": "settings", "indicator": "R5", "offered": "Y7"}')
    assert session.settings.offered == Tile.parse("Y7")
    with pytest.raises(ApiError, match="offered"):
        apply_message(session, '{"type": "settings", "indicator": "R5", "offered": "R 7"}')


def test_a_read_state_gets_take_or_draw_when_the_hand_waits_for_its_draw() -> None:
    state = {"hand": HAND.split(), "indicator": "R5", "warnings": []}
    added = add_take_or_draw(state, Tile.parse("Y7"), Rules.classic(), [])
    assert added["take_or_draw"]["take"] is True
    fifteen = {"hand": [*HAND.split(), "K1"], "indicator": "R5", "warnings": []}
    assert "take_or_draw" not in add_take_or_draw(fifteen, Tile.parse("Y7"), Rules.classic(), [])
    clash = {"hand": HAND.split(), "indicator": "R5", "warnings": []}
    add_take_or_draw(clash, Tile.parse("R5"), Rules.classic(), [Tile.parse("R5")])
    assert "take_or_draw" not in clash and clash["warnings"][0].startswith("offered: ")
    assert "take_or_draw" not in add_take_or_draw(
        {"hand": HAND.split(), "indicator": None}, Tile.parse("Y7"), Rules.classic(), []
    )
