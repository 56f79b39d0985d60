"""Small typed values passed between the vision stages (see DESIGN.md's data flow).

The recogniser produces a ``Recognition``; rule-aware decoding, the rack layout and the pipeline
consume it.  Boxes are ``(x1, y1, x2, y2)`` in pixels of the input image.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from okey import Tile

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class TileReading:
    """One tile found in an image."""

    box: Box
    tile: Tile  # the most probable identity
    confidence: float  # probability of ``tile`` times the detection score
    probs: np.ndarray  # shape (53,): probability of each identity (index = Tile.index), sums to 1
    detection_confidence: float = 1.0  # the detector's score that a tile is there
    upside_down: bool = False

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
class Recognition:
    """What the recogniser saw in one image."""

    tiles: list[TileReading]
    image_size: tuple[int, int]  # (width, height)
    timings_ms: dict[str, float] = field(default_factory=dict)
