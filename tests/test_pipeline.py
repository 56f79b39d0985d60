"""The pipeline API on recognised frames: layout + rule-aware reading + result object."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from okey import Rules, Tile, parse_tiles
from vision.draw import annotate
from vision.pipeline import (
    NoRackError,
    NotAnImageError,
    NoTilesError,
    Pipeline,
    as_bgr,
)
from vision.types import Recognition, TileReading

W, H = 40.0, 56.0


def reading(tile: Tile, box: tuple[float, float, float, float], p: float = 0.95) -> TileReading:
    probs = np.full(53, (1 - p) / 52)
    probs[tile.index] = p
    return TileReading(box, tile, p, probs)


def rack(rows: list[str], table: str = "") -> Recognition:
    """A recognised rack: each row a string with groups split by '|', tiles read at 95%."""
    tiles = []
    for r, row in enumerate(rows):
        x = 100.0
        for group in row.split("|"):
            for tile in parse_tiles(group):
                tiles.append(reading(tile, (x, 100 + r * 1.4 * H, x + W, 100 + r * 1.4 * H + H)))
                x += W + 2
            x += W
    for k, tile in enumerate(parse_tiles(table)):
        tiles.append(reading(tile, (150 + 200 * k, 400, 150 + 200 * k + W, 400 + H)))
    return Recognition(tiles, (1000, 600))


def with_probs(recognition: Recognition, position: int, probs: dict[str, float]) -> Recognition:
    row = np.full(53, 1e-4)
    for tile, p in probs.items():
        row[Tile.parse(tile).index] = p
    row /= row.sum()
    tiles = list(recognition.tiles)
    old = tiles[position]
    best = int(np.argmax(row))
    tiles[position] = TileReading(old.box, Tile(best), float(row[best]), row)
    return Recognition(tiles, recognition.image_size)


@pytest.fixture
def pipeline() -> Pipeline:
    # ``read`` never calls the recogniser; scanning photos is tested with the shipped one in
    # test_scan_cli.py.
    return Pipeline(recognizer=None)


def test_rows_groups_and_table_in_the_json(pipeline: Pipeline) -> None:
    rec = rack(["R1 R2 R3 | K7 Y7 B7", "B9 B10 B11 | FJ"], table="Y4")
    result = pipeline.read(rec, indicator=Tile.parse("R9"))
    out = result.to_dict()
    assert [[[t["tile"] for t in g] for g in row] for row in out["rows"]] == [
        [["R1", "R2", "R3"], ["K7", "Y7", "B7"]],
        [["B9", "B10", "B11"], ["FJ"]],
    ]
    assert out["hand"] == ["R1", "R2", "R3", "K7", "Y7", "B7", "B9", "B10", "B11", "FJ"]
    assert [(t["tile"], t["role"]) for t in out["table"]] == [("Y4", "table")]
    first = out["rows"][0][0][0]
    assert first["box"] == [100.0, 100.0, 140.0, 156.0]
    assert first["confidence"] == pytest.approx(0.95, abs=1e-3)
    assert out["indicator"] == "R9" and out["okey"] == "R10"
    json.dumps(out)  # plain JSON types throughout


def test_a_planted_third_copy_is_read_as_its_runner_up(pipeline: Pipeline) -> None:
    rec = rack(["K12 K12 R1 R2 R3", "K12 Y5 Y6"])
    rec = with_probs(rec, 5, {"K12": 0.5, "B12": 0.4})
    result = pipeline.read(rec, indicator=Tile.parse("R9"))
    assert result.hand.count(Tile.parse("K12")) == 2
    assert result.rows[1][0][0].tile == Tile.parse("B12")
    (flag,) = result.flagged
    assert flag.tile == Tile.parse("B12") and "two of each" in flag.reason
    assert result.rows[1][0][0].flagged
    without = pipeline.read(rec, indicator=Tile.parse("R9"), rule_aware=False)
    assert without.hand.count(Tile.parse("K12")) == 3


def test_corrections_override_readings_by_id(pipeline: Pipeline) -> None:
    rec = rack(["R1 R2 R3 R4"])
    result = pipeline.read(rec, corrections={"2": "K3", 99: "R9"})  # 99: not in view, ignored
    placed = result.rows[0][0][2]
    assert placed.tile == Tile.parse("K3") and placed.corrected
    assert result.to_dict()["rows"][0][0][2]["corrected"] is True
    assert not result.rows[0][0][0].corrected
    with pytest.raises(ValueError, match="not a tile id"):
        pipeline.read(rec, corrections={"left": "R1"})


def test_a_lone_table_tile_is_taken_as_the_indicator(pipeline: Pipeline) -> None:
    result = pipeline.read(rack(["R1 R2 R3"], table="K7"))
    assert result.indicator == Tile.parse("K7")
    assert result.indicator_source == "photo"
    assert result.okey == Tile.parse("K8")
    assert result.to_dict()["table"][0]["role"] == "indicator"


def test_without_an_indicator_there_is_no_verdict_but_a_note(pipeline: Pipeline) -> None:
    result = pipeline.read(rack(["R1 R2 R3", "K1 K2"]))
    assert result.indicator is None and result.verdict is None and result.advice is None
    assert any("indicator" in w for w in result.warnings)


def test_too_many_rack_tiles_are_reported(pipeline: Pipeline) -> None:
    rows = ["R1 R2 R3 R4 R5 R6 R7 R8", "K1 K2 K3 K4 K5 K6 K7 K8"]
    result = pipeline.read(rack(rows), indicator=Tile.parse("Y1"))
    assert any("16 tiles" in w for w in result.warnings)
    assert result.verdict is None
    result101 = pipeline.read(rack(rows), indicator=Tile.parse("Y1"), rules=Rules.okey101())
    assert not any("16 tiles on the rack: a okey101 rack holds" in w for w in result101.warnings)


def test_nothing_found(pipeline: Pipeline) -> None:
    with pytest.raises(NoTilesError):
        pipeline.read(Recognition([], (640, 480)))
    lonely = Recognition(
        [
            reading(Tile.parse("R1"), (0, 0, 40, 56)),
            reading(Tile.parse("R2"), (300, 300, 340, 356)),
        ],
        (640, 480),
    )
    with pytest.raises(NoRackError, match="2 tile"):
        pipeline.read(lonely)


def test_image_checks() -> None:
    with pytest.raises(NotAnImageError, match="image array"):
        as_bgr([[1, 2], [3, 4]])
    with pytest.raises(NotAnImageError, match="uint8"):
        as_bgr(np.zeros((10, 10, 3), np.float32))
    with pytest.raises(NotAnImageError, match="channels"):
        as_bgr(np.zeros((10, 10, 2), np.uint8))
    assert as_bgr(np.zeros((10, 12), np.uint8)).shape == (10, 12, 3)
    with pytest.raises(NotAnImageError):
        Pipeline(recognizer=None).scan("photo.jpg")


def test_annotate_outlines_the_photo_and_redraws_the_rack_below(pipeline: Pipeline) -> None:
    import cv2

    from vision.draw import CHIP_FACE

    result = pipeline.read(rack(["R1 R2 R3 | K7 Y7 B7", "B9 B10 B11"], table="Y4"))
    image = np.full((600, 1000, 3), 255, np.uint8)
    drawn = annotate(image, result)
    photo, panel = drawn[:600], drawn[600:]
    assert drawn.shape[1] == 1000 and panel.shape[0] > 0
    # Each tile's outline is drawn on the photo: the left edge of the first tile is no longer
    # white, and its face is left as it was (no label over it).
    assert (photo[110:150, 99:102] != 255).any()
    assert (photo[120:140, 115:135] == 255).all()
    # The panel holds one cream chip per rack tile, in two rows.
    chips = np.all(panel == CHIP_FACE, axis=2).astype(np.uint8)
    outlines, _ = cv2.findContours(chips, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    tops = sorted({cv2.boundingRect(c)[1] for c in outlines})
    assert len(outlines) == 9 and len(tops) == 2
    # The input image is untouched.
    assert (image == 255).all()


WINNING = ["R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12", "Y9 Y10 Y11 Y12"]  # indicator R9, okey R10


def test_fourteen_tiles_are_refereed_as_laid_out(pipeline: Pipeline) -> None:
    result = pipeline.read(rack(WINNING), indicator="R9")
    assert result.verdict is not None and result.verdict.valid
    out = result.to_dict()
    assert out["verdict"]["valid"] is True
    assert out["advice"]["kind"] == "waits"
    # The same tiles in other groups on the rack: the layout is judged, not the tiles.
    moved = pipeline.read(
        rack(["R1 R2 | R3 K5 Y5 B5 | B9 B10 B11 B12", "Y9 Y10 Y11 Y12"]), indicator="R9"
    )
    assert not moved.verdict.valid
    assert moved.verdict.other_arrangement_wins


def test_one_uncertain_tile_away_from_a_win_is_said(pipeline: Pipeline) -> None:
    rec = rack(WINNING)
    rec = with_probs(rec, 5, {"K5": 0.5, "B5": 0.42})  # the set's B5 might be a K5
    result = pipeline.read(rec, indicator="R9")
    assert str(result.rows[0][1][2].tile) == "K5"
    assert not result.verdict.valid
    assert result.hints == ["K5 may be B5; with B5 this hand wins"]


def test_fifteen_tiles_get_the_discard_advice(pipeline: Pipeline) -> None:
    rows = ["R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12", "Y9 Y10 Y11 Y12 | K13"]
    result = pipeline.read(rack(rows), indicator="R9")
    assert result.verdict is None
    assert result.advice.best.discard == Tile.parse("K13")
    assert result.discard is not None and result.discard.tile == Tile.parse("K13")
    assert result.to_dict()["discard"]["tile"] == "K13"
    declared = pipeline.read(rack(rows), indicator="R9", declare=True)
    assert declared.verdict.valid and declared.verdict.discard == Tile.parse("K13")


def test_engine_answers_are_reused_while_the_hand_is_unchanged(pipeline: Pipeline) -> None:
    first = pipeline.read(rack(WINNING), indicator="R9")
    again = pipeline.read(rack(WINNING), indicator="R9")
    assert again.verdict is first.verdict
    other = pipeline.read(rack(WINNING), indicator="K1")
    assert other.verdict is not first.verdict


def test_background_engine_answers_a_later_frame_of_the_same_hand() -> None:
    pipeline = Pipeline(recognizer=None, background_engine=True)
    busy = threading.Event()
    pipeline._executor.submit(busy.wait)  # the engine thread is still on an earlier hand
    rec = rack(WINNING)
    first = pipeline.read(rec, indicator="R9")
    assert first.verdict is None
    assert any("working out" in w for w in first.warnings)
    busy.set()
    for _ in range(200):
        later = pipeline.read(rec, indicator="R9")
        if later.verdict is not None:
            break
        time.sleep(0.05)
    assert later.verdict is not None and later.verdict.valid


def test_a_false_joker_indicator_is_refused(pipeline: Pipeline) -> None:
    with pytest.raises(ValueError, match="false joker"):
        pipeline.read(rack(["R1 R2 R3"]), indicator="FJ")


HAND_101 = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"


def test_a_22_tile_101_rack_is_ranked_by_the_101_adviser(pipeline: Pipeline) -> None:
    from okey import advise_hand
    from okey.okey101 import advise_discard

    rows = ["R10 R11 R12 R13 | K13 Y13 B13 | K9 K10 K11", "Y1 Y2 Y3 | B5 B7 K2 K4 R1 Y8 B9 K6 K12"]
    rules = Rules.okey101()
    result = pipeline.read(rack(rows), indicator="B2", rules=rules)
    assert [str(t) for t in result.hand] == HAND_101.split()
    ranked = advise_discard(HAND_101, "B2", rules)
    assert [o.discard for o in result.advice.options] == [o.tile for o in ranked]
    assert result.discard is not None and result.discard.tile == Tile.parse("B9")
    out = result.to_dict()
    assert out["discard"]["tile"] == "B9"
    assert out["advice"]["adviser"] == "okey101"
    assert out["advice"]["options"][0]["leftover"] == 33
    assert out["advice"]["sentence"].startswith("Discard B9: opens with 133 points")
    # The same advice, in the same shape, as the service's /hand gives for this hand.
    assert out["advice"] == advise_hand(result.hand, Tile.parse("B2"), rules).to_dict()
    json.dumps(out)


def test_the_okey_on_a_101_rack_is_not_the_advised_discard(pipeline: Pipeline) -> None:
    # B3 is the okey for indicator B2; discarding it costs 101, so it is never the advice.
    rows = ["R1 R2 R3 | Y5 B5 K5 | K9 K10 K11 | B3", "B7 B8 R6 Y13 K1 Y2 R8 Y9 K3 B12 R11 Y6"]
    result = pipeline.read(rack(rows), indicator="B2", rules=Rules.okey101())
    (okey_option,) = [o for o in result.advice.to_dict()["options"] if o["discard"] == "B3"]
    assert okey_option["is_okey"] and okey_option["penalty"] == 101
    assert not okey_option["advised"]
    assert result.discard is not None and result.discard.tile != Tile.parse("B3")
