"""Tracking tiles across frames and voting over recent frames."""

from __future__ import annotations

import numpy as np
import pytest

from okey import Tile
from vision.smoothing import HandTracker, iou
from vision.types import Recognition, TileReading


def reading(tile: str, x: float, p: float = 0.9) -> TileReading:
    t = Tile.parse(tile)
    probs = np.full(53, (1 - p) / 52)
    probs[t.index] = p
    return TileReading((x, 100.0, x + 40.0, 156.0), t, p, probs)


def frame(*tiles: tuple[str, float]) -> Recognition:
    return Recognition([reading(t, x) for t, x in tiles], (640, 480))


def test_ids_are_stable_while_the_rack_moves_a_little() -> None:
    tracker = HandTracker()
    first = tracker.update(frame(("R1", 0), ("R2", 42), ("R3", 84)))
    moved = tracker.update(frame(("R3", 90), ("R1", 6), ("R2", 48)))  # another detection order
    assert first.track_ids == [1, 2, 3]
    assert moved.track_ids == [3, 1, 2]
    assert [str(t.tile) for t in moved.tiles] == ["R3", "R1", "R2"]


def test_a_one_frame_misreading_is_outvoted() -> None:
    tracker = HandTracker(window=5)
    for _ in range(4):
        tracker.update(frame(("K12", 0)))
    glitch = tracker.update(frame(("B12", 0)))
    assert str(glitch.tiles[0].tile) == "K12"
    assert glitch.tiles[0].confidence < 0.9  # the vote is less sure than a steady reading


def test_a_real_change_wins_once_it_fills_the_window() -> None:
    tracker = HandTracker(window=3)
    tracker.update(frame(("K12", 0)))
    readings = [str(tracker.update(frame(("B12", 0))).tiles[0].tile) for _ in range(3)]
    assert readings[-1] == "B12"


def test_new_tiles_get_new_ids_and_lost_tracks_expire() -> None:
    tracker = HandTracker(max_missed=2)
    tracker.update(frame(("R1", 0)))
    out = tracker.update(frame(("R1", 0), ("Y5", 300)))
    assert out.track_ids == [1, 2]
    for _ in range(3):
        tracker.update(frame(("Y5", 300)))
    back = tracker.update(frame(("R1", 0), ("Y5", 300)))
    assert back.track_ids == [3, 2]  # R1 was gone too long: a new track


def test_probabilities_stay_a_distribution() -> None:
    tracker = HandTracker()
    for tile in ("R1", "Y1", "R1"):
        out = tracker.update(frame((tile, 0)))
    assert out.tiles[0].probs.sum() == pytest.approx(1.0)
    assert out.image_size == (640, 480)


def test_iou_and_bad_window() -> None:
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == pytest.approx(1.0)
    assert iou((0, 0, 10, 10), (20, 0, 30, 10)) == 0.0
    with pytest.raises(ValueError, match="window"):
        HandTracker(window=0)
