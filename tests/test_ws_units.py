"""The stream's latest-frame slot and the overlay's table hub, on their own (no server)."""

from __future__ import annotations

import asyncio

import pytest

from service.errors import ApiError
from service.routers.stream import apply_message
from service.stream import FrameSlot, StreamSession
from service.tables import TableHub


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


def test_hub_wakes_watchers_with_the_latest_state_only() -> None:
    async def run() -> dict:
        hub = TableHub(max_tables=4)
        hub.watch("t")
        waiter = asyncio.create_task(hub.wait_newer("t", 0))
        await asyncio.sleep(0)
        for n in range(3):
            hub.publish("t", {"n": n})
        return await waiter

    snapshot = asyncio.run(run())
    # The watcher woke after the first publish but reads the table's newest state.
    assert snapshot["version"] == 3 and snapshot["state"] == {"n": 2}


def test_hub_evicts_unwatched_tables_first() -> None:
    hub = TableHub(max_tables=2)
    hub.watch("kept")
    hub.publish("kept", {"a": 1})
    for name in ("b", "c", "d"):
        hub.publish(name, {"name": name})
    assert hub.snapshot("kept")["version"] == 1
    assert hub.snapshot("b")["version"] == 0  # evicted
    assert hub.snapshot("d")["state"] == {"name": "d"}


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
    ],
)
def test_bad_stream_messages_name_the_problem(text: str, needle: str) -> None:
    with pytest.raises(ApiError) as caught:
        apply_message(StreamSession(), text)
    assert caught.value.status == 422
    assert needle in caught.value.message
