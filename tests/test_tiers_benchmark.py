"""benchmarks/tiers.py: a photo moved a pixel or two (``--shift``) is the same scene, and its
truth follows the pixels."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "tiers.py"


def _module():
    spec = importlib.util.spec_from_file_location("tiers_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("pixels", [1, 2])
def test_a_shifted_photo_moves_its_pixels_and_its_truth_alike(pixels: int) -> None:
    bench = _module()
    rng = np.random.default_rng(0)
    photo = rng.integers(0, 255, (40, 60, 3), dtype=np.uint8)
    turned, matrix = bench.turn(photo, 30)
    moved, moved_matrix = bench.shift(turned, matrix, pixels)
    assert moved.shape == turned.shape
    # the scene moved right and down: a pixel's value lands ``pixels`` further on each axis
    assert np.array_equal(moved[pixels:, pixels:], turned[:-pixels, :-pixels])
    # the first rows and columns repeat the photo's edge (no grey band for the tiers to see)
    assert np.array_equal(moved[:pixels, pixels:], np.repeat(turned[:1, :-pixels], pixels, 0))
    # a point of the render maps to where its pixel now lies
    point = np.float64([12.0, 7.0, 1.0])
    assert np.allclose(moved_matrix @ point, matrix @ point + pixels)


def test_no_shift_leaves_the_photo_as_it_is() -> None:
    bench = _module()
    photo = np.zeros((10, 10, 3), np.uint8)
    matrix = np.float64([[1, 0, 0], [0, 1, 0]])
    moved, same = bench.shift(photo, matrix, 0)
    assert moved is photo and same is matrix


def test_a_half_hidden_tile_whose_numeral_shows_is_scored_apart() -> None:
    """A back tier's tile under half in view, its numeral whole, is no "readable" tile of the
    score, but is counted on its own line: read right when one rack tile lies on what shows and
    reads as the truth."""
    from types import SimpleNamespace

    bench = _module()

    def quad(x: float, height: float) -> list[list[float]]:
        return [[x, 0.0], [x + 10, 0.0], [x + 10, height], [x, height]]

    tiles = [  # a whole tile, a half-hidden one whose numeral shows, one whose numeral does not
        {"id": 0, "tile": "R5", "labelled": True, "readable": True, "number_visible": 1.0},
        {"id": 1, "tile": "K7", "labelled": True, "readable": False, "number_visible": 0.85},
        {"id": 2, "tile": "B2", "labelled": True, "readable": False, "number_visible": 0.3},
    ]
    for k, tile in enumerate(tiles):
        tile.update(visible=0.4, visible_quad=quad(20 * k, 5), quad=quad(20 * k, 14))
    truth = {"tiles": tiles, "rows": [[0, 2], [1]]}
    identity = np.float64([[1, 0, 0], [0, 1, 0]])

    def scan(*names: str):
        placed = [
            SimpleNamespace(id=k, tile=name, box=(20 * k + 1, 1, 20 * k + 9, 4))
            for k, name in enumerate(names)
        ]
        return SimpleNamespace(rows=[[[p] for p in placed]])

    read = bench.score_photo(scan("R5", "K7", "B2"), truth, identity)
    assert (read.tiles, read.right, read.shown, read.shown_right) == (1, 1, 1, 1)
    misread = bench.score_photo(scan("R5", "K1", "B2"), truth, identity)
    assert (misread.shown, misread.shown_right) == (1, 0)
    assert bench.score_photo(None, truth, identity).shown == 1
