"""Small typed values passed between the vision stages (see DESIGN.md's data flow).

The recogniser produces a ``Recognition``; rule-aware decoding, the rack layout and the pipeline
consume it.  Boxes are ``(x1, y1, x2, y2)`` in pixels of the input image.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from okey import Tile

# The 53 identities a tile can have, in class order: index = colour * 13 + (number - 1), colours
# R, Y, B, K, then 52 = the false joker (DESIGN: which tile is the okey is game state, not a class).
CLASS_NAMES: tuple[str, ...] = tuple(str(Tile(i)) for i in range(53))

Box = tuple[float, float, float, float]


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two xyxy boxes.

    >>> iou((0, 0, 10, 10), (5, 0, 15, 10))
    0.3333333333333333
    """
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


@dataclass(frozen=True)
class TileReading:
    """One tile found in an image."""

    box: Box
    tile: Tile  # the most probable identity
    confidence: float  # probability of ``tile`` times the detection score
    probs: np.ndarray  # shape (53,): probability of each identity (index = Tile.index), sums to 1
    detection_confidence: float = 1.0  # the detector's score that a tile is there
    upside_down: bool = False
    # why the tile cannot be read, when it cannot: "cut" (by the frame's edge);
    # its ``tile`` and ``probs`` are then only a guess, which the pipeline and decoding skip
    unreadable: str | None = None
    # a rack tile read by the tier stage (``vision.tiers``): its tier (0 = top) and where it
    # stands along that tier's straightened strip, (x1, x2) in strip pixels, as the rack is read
    # (left to right); None for a tile off the tiers (the table) or read by the whole-photo path
    place: tuple[int, float, float] | None = None
    # its outline in the photo (top-left, top-right, bottom-right, bottom-left), when known; a
    # hidden tier's tile's as far down as it shows (its box is the whole tile's)
    quad: tuple[tuple[float, float], ...] | None = None

    @property
    def width(self) -> float:
        return self.box[2] - self.box[0]

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)


@dataclass(frozen=True)
class TierView:
    """One tier of a rack as the tier stage found it: its outline in the photo (top-left,
    top-right, bottom-right, bottom-left as the rack is read; down to where the tier in front
    hides it) and a tile's width in its strip."""

    quad: tuple[tuple[float, float], ...]
    tile_width: float


@dataclass(frozen=True)
class Recognition:
    """What the recogniser saw in one image."""

    tiles: list[TileReading]
    image_size: tuple[int, int]  # (width, height)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # the second looks the recogniser took (``vision.adapt``: "small", "turned" per view of the
    # detector; "quarter" when a rack on its side was read turned a quarter round; "long" when a
    # table's over-long box was looked at zoomed; "up" when the tiles were read both ways up),
    # empty when the first pass read the photo as it was
    second_look: tuple[str, ...] = ()
    # the rack's tiers when the tier stage read the photo (rows = tiers), else empty: the
    # whole-photo path read it (a table scene, or no tier found)
    tiers: tuple[TierView, ...] = ()

    @property
    def path(self) -> str:
        """Which reading path decided this photo: "tiers" or "photo"."""
        return "tiers" if self.tiers else "photo"
