"""The stream's latest-frame slot and its messages, on their own (no server); the table store's
contract is in ``tests/test_store.py``."""

from __future__ import annotations

import asyncio

import pytest

from okey import parse_tiles
from service.errors import ApiError
from service.routers.stream import apply_message
from service.stream import FrameSlot, StreamSession


def test_slot_keeps_only_the_newest_frame() -> None:
    async def run() -> tuple[bytes, bytes]:
        slot = FrameSlot()
        for i in range(100):
            slot.put(bytes([i]))
        first = await slot.take()
        slot.put(b"late")
        return first, await slot.take()

    first, second = asyncio.run(run())
    assert first == bytes([99])
    assert second == b"late"


def test_slot_counts_received_and_dropped() -> None:
    slot = FrameSlot()
    for _ in range(5):
        slot.put(b"x")
    assert (slot.received, slot.dropped) == (5, 4)


def test_slot_take_waits_for_a_frame() -> None:
    async def run() -> bytes:
        slot = FrameSlot()
        taker = asyncio.create_task(slot.take())
        await asyncio.sleep(0)
        assert not taker.done()
        slot.put(b"frame")
        return await taker

    assert asyncio.run(run()) == b"frame"


def test_stream_messages_update_the_session() -> None:
    session = StreamSession()
    apply_message(
        session, '{"type": "settings", "indicator": "R4", "rules": "okey101", "table": "t1"}'
    )
    assert str(session.settings.indicator) == "R4"
    assert session.settings.rules.name == "okey101"
    assert session.settings.table == "t1"
    apply_message(session, '{"type": "correct", "id": 3, "tile": "B12"}')
    assert {k: str(v) for k, v in session.corrections.items()} == {3: "B12"}
    apply_message(session, '{"type": "correct", "id": 3, "tile": null}')
    assert session.corrections == {}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("not json", "not JSON"),
        ('{"type": "dance"}', "type must be"),
        ('{"type": "settings", "indicator": "Q2"}', "Q2"),
        ('{"type": "settings", "rules": "chess"}', "chess"),
        ('{"type": "settings", "table": "a b"}', "table"),
        ('{"type": "correct", "id": -1, "tile": "R1"}', "id"),
        ('{"type": "correct", "id": 1, "tile": "R14"}', "R14"),
        ('{"type": "settings", "seen": [' + '"R1", ' * 107 + '"R1"]}', "seen"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_bad_stream_messages_name_the_problem(text: str, needle: str) -> None:
    with pytest.raises(ApiError) as caught:
        apply_message(StreamSession(), text)
    assert caught.value.status == 422
    assert needle in caught.value.message


def test_a_stream_keeps_a_bounded_number_of_corrections() -> None:
    # 200,000 corrections on one stream were all kept; now the 65th new one is refused.
    session = StreamSession()
    for track in range(64):
        apply_message(session, f'{{"type": "correct", "id": {track}, "tile": "R1"}}', 64)
    with pytest.raises(ApiError) as caught:
        apply_message(session, '{"type": "correct", "id": 999, "tile": "R1"}', 64)
    assert caught.value.code == "too_many_corrections"
    assert "max_corrections" in caught.value.message
    # Changing or undoing a kept correction still works.
    apply_message(session, '{"type": "correct", "id": 3, "tile": "K9"}', 64)
    apply_message(session, '{"type": "correct", "id": 4, "tile": null}', 64)
    assert len(session.corrections) == 63


def test_stream_settings_take_what_rates_the_discards() -> None:
    session = StreamSession()
    apply_message(session, '{"type": "settings", "indicator": "R4", "next_takes": "Y12 K3"}')
    assert session.settings.turn == {
        "next_takes": parse_tiles("Y12 K3"),
        "next_discards": [],
    }
    text = (
        '{"type": "settings", "indicator": "B2", "rules": "okey101",'
        ' "table_melds": ["K4 K5 K6", "R7 Y7 B3"], "opened": true}'
    )
    apply_message(session, text)
    turn = session.settings.turn
    assert [str(m) for m in turn["table"]] == ["K4 K5 K6", "R7 Y7 B3=B7"] and turn["opened"]
    with pytest.raises(ApiError, match="table_melds: give the indicator"):
        apply_message(
            session, '{"type": "settings", "rules": "okey101", "table_melds": ["K4 K5 K6"]}'
        )
    assert session.settings.turn is turn  # a refused message leaves the settings as they were
