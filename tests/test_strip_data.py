"""The strip detector's training labels (``vision.training.strips``): what the tier stage keeps."""

from __future__ import annotations

import numpy as np

from vision.tiers import STRIP_TILE, TILE_ASPECT, hidden_by_front, strip_for
from vision.training.strips import pieces_of, strip_labels

W, H = 26.0, 26.0 / TILE_ASPECT


def _stand(rise: float):
    """Three tiers of four touching tiles, each ``rise`` tile heights above the next: the tiers'
    strips (the back ones hidden below the tier in front) and each tile's visible outline."""
    quads, outlines = [], []
    for t in range(3):
        top = 100 + t * rise * H
        quads.append(np.float64([[100, top], [100 + 4 * W, top], [100 + 4 * W, top + H],
                                 [100, top + H]]))  # fmt: skip
        shown = rise * H if t < 2 else H
        for k in range(4):
            x = 100 + k * W
            outlines.append(np.float64([[x, top], [x + W, top], [x + W, top + shown],
                                        [x, top + shown]]))  # fmt: skip
    strips = hidden_by_front([strip_for(k, q, (600, 600)) for k, q in enumerate(quads)])
    return strips, outlines


def test_a_strip_is_labelled_with_its_own_tiers_tiles_only() -> None:
    """Each strip of a three-tier stand gets its own tier's four tiles, none of the tier in front
    showing at its foot nor of the tier behind at its head; a back tier's boxes stop where the
    tier in front hides it."""
    strips, outlines = _stand(0.7)
    for k, strip in enumerate(strips):
        boxes = strip_labels(strip, outlines)
        assert len(boxes) == 4, k
        assert all(abs(y1 - strip.top) < 2 for _, y1, _, _ in boxes)
        if strip.hidden is not None:
            assert all(y2 <= strip.hidden + 1e-6 for *_, y2 in boxes)
        else:
            assert all(abs(y2 - (strip.top + STRIP_TILE)) < 2 for *_, y2 in boxes)


def test_a_tile_cut_by_a_pieces_edge_goes_to_the_piece_that_shows_it() -> None:
    """A strip longer than a canvas is cut into overlapping pieces; a tile is labelled in a piece
    only where most of it shows there."""
    image = np.zeros((77, 600, 3), np.uint8)

    class Long:
        tile_width = 34.56

    boxes = [(430.0, 14.0, 465.0, 62.0)]  # across the first piece's edge (448)
    pieces = list(pieces_of(Long(), image, boxes))
    assert len(pieces) == 2
    (first, in_first), (_, in_second) = pieces
    assert first.shape[1] == 448 and in_first == []
    assert len(in_second) == 1
