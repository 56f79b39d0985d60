"""Readings that hold still on video: track tiles across frames and vote over recent frames.

A single frame can misread a tile (motion blur, a reflection); the next frames usually read it
right.  ``HandTracker`` follows each tile by box overlap (IoU) from frame to frame, gives it a track
id that stays the same while the tile stays in view (the service keys a player's corrections by
it), and replaces each frame's probabilities by their mean over the tile's last ``window`` frames,
so a one-frame misreading is outvoted.

>>> import numpy as np
>>> from okey import Tile
>>> from vision.types import Recognition, TileReading
>>> def frame(index):
...     probs = np.full(53, 0.1 / 52); probs[index] = 0.9
...     return Recognition([TileReading((0, 0, 10, 14), Tile(index), 0.9, probs)], (100, 100))
>>> tracker = HandTracker(window=5)
>>> _ = tracker.update(frame(0)); _ = tracker.update(frame(0)); out = tracker.update(frame(13))
>>> str(out.tiles[0].tile), out.track_ids
('R1', [1])
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace

import numpy as np

from okey import Tile
from vision.types import Box, Recognition, TileReading, iou

# Boxes of one tile in consecutive frames overlap at least this much.
MIN_IOU = 0.3
WINDOW = 8
# A track survives this many frames without a detection (a hand passing over the rack).
MAX_MISSED = 5


@dataclass(frozen=True)
class TrackedRecognition(Recognition):
    """A ``Recognition`` whose readings are smoothed, with one stable track id per tile."""

    track_ids: list[int] = field(default_factory=list)


@dataclass
class _Track:
    track_id: int
    box: Box
    history: deque[np.ndarray]
    missed: int = 0


class HandTracker:
    """Follows the tiles of one rack across video frames; one tracker per stream."""

    def __init__(
        self, *, window: int = WINDOW, min_iou: float = MIN_IOU, max_missed: int = MAX_MISSED
    ) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1 frame, got {window}")
        self.window = window
        self.min_iou = min_iou
        self.max_missed = max_missed
        self._tracks: list[_Track] = []
        self._next_id = 1

    def reset(self) -> None:
        self._tracks.clear()

    def update(self, recognition: Recognition) -> TrackedRecognition:
        """Match this frame's tiles to the tracks, vote, and return the smoothed frame."""
        matches = self._match(recognition.tiles)
        ids: list[int] = []
        readings: list[TileReading] = []
        matched_tracks: set[int] = set()
        for i, reading in enumerate(recognition.tiles):
            track = matches.get(i)
            if track is None:
                track = _Track(self._next_id, reading.box, deque(maxlen=self.window))
                self._next_id += 1
                self._tracks.append(track)
            track.box = reading.box
            track.missed = 0
            track.history.append(np.asarray(reading.probs, dtype=float))
            matched_tracks.add(track.track_id)
            ids.append(track.track_id)
            readings.append(_voted(reading, track.history))
        for track in self._tracks:
            if track.track_id not in matched_tracks:
                track.missed += 1
        self._tracks = [t for t in self._tracks if t.missed <= self.max_missed]
        return TrackedRecognition(
            readings,
            recognition.image_size,
            dict(recognition.timings_ms),
            second_look=recognition.second_look,
            tiers=recognition.tiers,
            track_ids=ids,
        )

    def _match(self, readings: list[TileReading]) -> dict[int, _Track]:
        """Greedy matching by IoU, best overlaps first (tiles on a rack rarely swap places)."""
        pairs = [
            (iou(r.box, t.box), i, k)
            for i, r in enumerate(readings)
            for k, t in enumerate(self._tracks)
        ]
        pairs = sorted((p for p in pairs if p[0] >= self.min_iou), reverse=True)
        taken_readings: set[int] = set()
        taken_tracks: set[int] = set()
        matches: dict[int, _Track] = {}
        for _, i, k in pairs:
            if i in taken_readings or k in taken_tracks:
                continue
            matches[i] = self._tracks[k]
            taken_readings.add(i)
            taken_tracks.add(k)
        return matches


def _voted(reading: TileReading, history: deque[np.ndarray]) -> TileReading:
    probs = np.mean(np.stack(list(history)), axis=0)
    probs = probs / probs.sum()
    best = int(np.argmax(probs))
    return replace(
        reading,
        tile=Tile(best),
        confidence=float(probs[best]) * reading.detection_confidence,
        probs=probs,
    )
