"""The camera stream's moving parts, kept apart from the WebSocket plumbing so they can be tested
alone: the latest-frame slot and the per-connection session (settings, tracker, corrections).

>>> import asyncio
>>> slot = FrameSlot()
>>> slot.put(b"one"); slot.put(b"two")
>>> asyncio.run(slot.take()), slot.received, slot.dropped
(b'two', 2, 1)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from okey import Rules, Tile


class FrameSlot:
    """Holds only the newest frame: a frame that arrives before the previous one was taken
    replaces it (counted in ``dropped``), so a client sending faster than the server reads never
    builds a queue."""

    def __init__(self) -> None:
        self._frame: bytes | None = None
        self._ready = asyncio.Event()
        self.received = 0
        self.dropped = 0

    def put(self, frame: bytes) -> None:
        if self._frame is not None:
            self.dropped += 1
        self._frame = frame
        self.received += 1
        self._ready.set()

    async def wait(self) -> None:
        """Until a frame is waiting."""
        await self._ready.wait()

    async def take(self) -> bytes:
        """The newest frame, waiting for one if there is none."""
        await self._ready.wait()
        frame, self._frame = self._frame, None
        self._ready.clear()
        assert frame is not None
        return frame


@dataclass
class StreamSettings:
    """What the player set on the camera page."""

    indicator: Tile | None = None
    rules: Rules = field(default_factory=Rules.classic)
    seen: list[Tile] = field(default_factory=list)
    declare: bool = False
    table: str | None = None  # overlay table this stream feeds, if any
    token: str | None = None  # that table's owner token
    profile: str | None = None  # the player's calibrated set (vision.profiles), if any
    offered: Tile | None = None  # the left-hand player's discard: take it or draw?
    # what rates the discards' risk (okey.advise_hand's keywords, read by read_turn)
    turn: dict[str, Any] = field(default_factory=dict)


@dataclass
class StreamSession:
    """One camera connection: its settings, its tracker and the player's corrections by tile id."""

    settings: StreamSettings = field(default_factory=StreamSettings)
    tracker: Any = None  # vision.smoothing.HandTracker, created on the inference thread
    corrections: dict[int, Tile] = field(default_factory=dict)
    frames_read: int = 0


class TextRation:
    """A socket's text messages rationed (a token bucket): ``rate`` a second, bursts of twice
    that.  A player sends a few a second at most; a flood would cost the worker's CPU however
    small each message is.

    >>> ration = TextRation(1.0, now=0.0)
    >>> [ration.take(now=0.0) for _ in range(3)]
    [True, True, False]
    >>> ration.take(now=1.0)
    True
    """

    def __init__(self, rate: float, now: float | None = None) -> None:
        self.rate = rate
        self._allowance = 2 * rate
        self._stamp = time.monotonic() if now is None else now

    def take(self, now: float | None = None) -> bool:
        """Whether one more message may be read now (and count it)."""
        now = time.monotonic() if now is None else now
        self._allowance = min(2 * self.rate, self._allowance + (now - self._stamp) * self.rate)
        self._stamp = now
        if self._allowance < 1:
            return False
        self._allowance -= 1
        return True


async def next_message(websocket: Any, deadline: float, idle_code: int) -> dict | None:
    """A socket's next message, or None when it closed, or stayed silent until ``deadline``
    (``time.monotonic()``; then it is closed with ``idle_code``, reason "idle_timeout")."""
    try:
        message = await asyncio.wait_for(
            websocket.receive(), timeout=max(deadline - time.monotonic(), 0)
        )
    except TimeoutError:
        await websocket.close(code=idle_code, reason="idle_timeout")
        return None
    return None if message["type"] == "websocket.disconnect" else message


async def paced(slot: FrameSlot, interval: float) -> AsyncIterator[bytes]:
    """The slot's frames, at most one every ``interval`` seconds: the frame-rate cap waits out
    the interval, then takes whatever frame is newest by then."""
    last = 0.0
    while True:
        await slot.wait()
        delay = last + interval - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        frame = await slot.take()
        last = time.monotonic()
        yield frame
