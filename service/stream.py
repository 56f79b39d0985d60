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


@dataclass
class StreamSession:
    """One camera connection: its settings, its tracker and the player's corrections by tile id."""

    settings: StreamSettings = field(default_factory=StreamSettings)
    tracker: Any = None  # vision.smoothing.HandTracker, created on the inference thread
    corrections: dict[int, Tile] = field(default_factory=dict)
    frames_read: int = 0
