"""The indicator is never silently guessed: every answer names the indicator in use and where it
came from (typed, read from the photo with its confidence, or none); a tile off the rack read
below ``INDICATOR_FLOOR`` is a suggestion, not used; a win counted on an indicator the player did
not confirm says so, in the JSON, the CLI text and the annotated picture."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from istaka.scan import format_result
from okey import Tile, parse_tiles
from vision.draw import _summary
from vision.pipeline import INDICATOR_FLOOR, Pipeline
from vision.types import Recognition, TileReading

REPO = Path(__file__).resolve().parent.parent
W, H = 40.0, 56.0
# With R5 the indicator (okey R6), discarding Y13 wins; with K7 it is one tile from a win.
WINNING_ROWS = ["R1 R2 R3|Y5 B5 K5|K9 K10 K11 K12", "B7 B8 B9 R6|Y13"]


def reading(tile: Tile, box: tuple[float, ...], p: float, detection: float = 1.0) -> TileReading:
    probs = np.full(53, (1 - p) / 52)
    probs[tile.index] = p
    return TileReading(box, tile, p * detection, probs, detection)


def rack(rows: list[str], table: str, table_p: float, table_detection: float) -> Recognition:
    tiles = []
    for r, row in enumerate(rows):
        x = 100.0
        for group in row.split("|"):
            for tile in parse_tiles(group):
                y = 100 + r * 1.4 * H
                tiles.append(reading(tile, (x, y, x + W, y + H), 0.99))
                x += W + 2
            x += W
    (lone,) = parse_tiles(table)
    tiles.append(reading(lone, (300, 420, 300 + W, 420 + H), table_p, table_detection))
    return Recognition(tiles, (1000, 600))


@pytest.fixture
def pipeline() -> Pipeline:
    return Pipeline(recognizer=None)


def test_a_tile_read_below_the_floor_is_a_suggestion_not_the_indicator(
    pipeline: Pipeline,
) -> None:
    # The case: a tile boxed with 20-33 % confidence would have made this hand "win".
    result = pipeline.read(rack(WINNING_ROWS, "R5", 0.9, 0.3))
    assert result.indicator is None and result.indicator_source is None
    assert result.verdict is None and result.advice is None
    out = result.to_dict()
    assert out["indicator"] is None and out["indicator_confirmed"] is False
    assert out["indicator_suggestion"]["tile"] == "R5"
    assert out["indicator_suggestion"]["confidence"] < INDICATOR_FLOOR
    assert out["indicator_confidence"] is None
    assert any("R5" in w and "below" in w for w in out["warnings"])
    text = format_result(result)
    assert "Indicator: none; the tile off the rack may be R5" in text
    assert "win" not in text.split("Indicator")[1].split("Note")[0]
    assert "no indicator (maybe R5" in _summary(result, None)[0]


def test_a_sure_reading_is_used_but_a_win_with_it_says_it_is_not_confirmed(
    pipeline: Pipeline,
) -> None:
    result = pipeline.read(rack(WINNING_ROWS, "R5", 0.99, 0.99))
    assert result.indicator == Tile.parse("R5") and result.indicator_source == "photo"
    assert result.indicator_confidence >= INDICATOR_FLOOR
    assert result.advice.distance == 0  # "Discard Y13: the other 14 tiles win."
    out = result.to_dict()
    assert out["indicator_confirmed"] is False and out["indicator_suggestion"] is None
    assert any("not confirmed" in w and "R5" in w for w in out["warnings"])
    text = format_result(result)
    assert re.search(r"Indicator R5 \(read from the photo, \d+%, not confirmed\), okey R6", text)
    header = _summary(result, None)[0]
    assert "from photo" in header and "not confirmed" in header


def test_a_typed_indicator_is_confirmed(pipeline: Pipeline) -> None:
    result = pipeline.read(rack(WINNING_ROWS, "K7", 0.9, 0.3), indicator="R5")
    out = result.to_dict()
    assert (out["indicator"], out["indicator_source"], out["indicator_confirmed"]) == (
        "R5",
        "typed",
        True,
    )
    assert out["indicator_suggestion"] is None and out["indicator_confidence"] is None
    assert not any("not confirmed" in w for w in out["warnings"])
    assert "Indicator R5 (typed), okey R6" in format_result(result)


def test_a_declared_win_on_an_unconfirmed_indicator_says_so(pipeline: Pipeline) -> None:
    result = pipeline.read(rack(WINNING_ROWS, "R5", 0.99, 0.99), declare=True)
    assert result.verdict is not None and result.verdict.valid
    verdict_line = next(x for x in format_result(result).splitlines() if x.startswith("Verdict"))
    assert verdict_line.endswith("(if the indicator is R5: not confirmed)")


def test_the_documented_floor_is_the_one_in_use() -> None:
    text = (REPO / "docs" / "pipeline.md").read_text()
    assert f"`INDICATOR_FLOOR = {INDICATOR_FLOOR}`" in text
    assert "benchmarks/indicator_floor.py" in text
