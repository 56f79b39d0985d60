"""What a perfect rack layout gives for a rendered image, read from its sidecar.

>>> from vision.training.synth import render_sample
>>> _, sidecar = render_sample(11, 0, "train", (640, 480))
>>> truth = layout_truth(sidecar)
>>> truth is None or len(truth.boxes) == len(truth.ids)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vision.types import Box


@dataclass(frozen=True)
class LayoutTruth:
    """The labelled (visible) tiles of a rendered image and their true layout, by sidecar id."""

    boxes: list[Box]  # one per labelled tile, the detector's view of the image
    ids: list[int]  # the sidecar id of each box
    groups: list[list[list[int]]]  # rows top to bottom, groups left to right, tile ids
    table: list[int]  # labelled tiles off the rack, sorted

    def compare(self, rows: Sequence[Sequence[Sequence[int]]], table: Sequence[int]) -> bool:
        """Whether a layout over ``boxes`` (indices into them) found exactly these rows, table."""
        got = [[[self.ids[k] for k in group] for group in row] for row in rows]
        return got == self.groups and sorted(self.ids[k] for k in table) == self.table


def layout_truth(sidecar: dict[str, Any]) -> LayoutTruth | None:
    """The layout truth of a rendered image, or None when a rack tile is not labelled.

    A hidden tile in the middle of a group really looks like a gap, so such racks say nothing
    about the layout and are left out of comparisons.
    """
    tiles = sidecar["tiles"]
    if not all(tiles[i]["labelled"] for row in sidecar["rows"] for i in row):
        return None
    visible = [t for t in tiles if t["labelled"]]
    return LayoutTruth(
        boxes=[tuple(t["box"]) for t in visible],
        ids=[t["id"] for t in visible],
        groups=[row for row in sidecar["groups"] if row],
        table=sorted(i for i in sidecar["table"] if tiles[i]["labelled"]),
    )
