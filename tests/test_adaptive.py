"""Reading that adapts to the photo (``vision.adapt``, issue 18): each step on a committed real
photo changed the way it targets, read by the shipped recogniser with the step and without it
(the reading without it is the failure the step answers), and the pieces on their own."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from okey import Tile, parse_tiles
from vision.adapt import (
    colour_marginals,
    colour_model,
    cut_share,
    duplicates,
    map_back,
    photo_angle,
    plan_views,
    row_angle,
    unify_angles,
)
from vision.recognizer import MANIFEST, Recognizer, RecognizerSpec
from vision.types import Recognition, TileReading

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "rack_real.jpg"
EXAMPLE_TILES = sorted(parse_tiles((REPO / "examples" / "rack_real.txt").read_text().split("#")[0]))
REAL_VAL = REPO / "datasets" / "real_val" / "images"


# the pieces -------------------------------------------------------------------------------------


def test_photo_angle_agrees_across_the_upright_wrap() -> None:
    # tiles stood at 88 and -88 degrees are both nearly lying: they agree, about 90
    angle, agree = photo_angle(np.float32([[0, 0, 10, 20, 88], [0, 0, 10, 20, -88]]))
    assert abs(abs(angle) - 90) < 1e-3 and agree > 0.99
    _, scattered = photo_angle(np.float32([[0, 0, 10, 20, 0], [0, 0, 10, 20, 90]]))
    assert scattered < 0.01


def test_unify_angles_stands_every_tile_the_same_way() -> None:
    boxes = np.float32([[0, 0, 10, 20, 89], [0, 0, 10, 20, -89], [0, 0, 20, 10, 0]])
    assert unify_angles(boxes, 90.0)[:, 4].tolist() == pytest.approx([89, 91, 90])
    assert unify_angles(boxes, -90.0)[:, 4].tolist() == pytest.approx([-91, -89, -90])


def test_map_back_undoes_the_view() -> None:
    matrix = cv2.getRotationMatrix2D((100.0, 50.0), 30.0, 2.5)
    box = np.float32([[120, 80, 10, 24, 30]])
    corners = cv2.boxPoints(((120, 80), (10, 24), 30)) @ matrix[:, :2].T + matrix[:, 2]
    (cx, cy), (w, h), a = cv2.minAreaRect(corners.astype(np.float32))
    back = map_back(np.float32([[cx, cy, w, h, a]]), matrix)
    assert back[0, :2].tolist() == pytest.approx(box[0, :2].tolist(), abs=0.05)
    assert sorted(back[0, 2:4].tolist()) == pytest.approx([10, 24], abs=0.05)


def test_plan_views_only_for_small_or_turned_tiles() -> None:
    rows = [[100 + 60 * k, 200, 40, 56, 0] for k in range(5)]
    tiles = np.float32(rows)
    kw = {"det_scale": 0.7, "small_below": 32, "turned_from": 20, "turned_to": 70}
    assert plan_views(tiles, (640, 640), 448, **kw) == []  # 39 px in the detector: as it is
    small = tiles.copy()
    small[:, :4] *= 0.25
    (view,) = plan_views(small, (640, 640), 448, **kw)
    # scaled up (at most to the target, 100 px a tile) as far as one square holds the tiles
    assert view.reason == "small" and 0.7 * 4 < view.matrix[0, 0] <= 100 / 14
    # a row turned 40 degrees (its tiles with it): the view stands it upright
    step = np.float32([np.cos(np.radians(40)), np.sin(np.radians(40))]) * 60
    turned = np.float32([[100 + k * step[0], 200 + k * step[1], 40, 56, 40] for k in range(5)])
    (view,) = plan_views(turned, (640, 640), 448, **kw)
    # the view turns them upright: a turned tile's long side comes out vertical
    corners = cv2.boxPoints(((100, 200), (40, 56), 40)) @ view.matrix[:, :2].T
    (_, _), (w, h), a = cv2.minAreaRect(corners.astype(np.float32))
    assert min(abs(a % 90), 90 - abs(a % 90)) < 1e-3
    # more tiles than one square holds at the target size: one view, scaled down to hold them
    spread = np.float32([[x, y, 10, 14, 0] for x in range(20, 620, 60) for y in range(20, 620, 60)])
    (view,) = plan_views(spread, (640, 640), 448, **kw)
    inside = spread[:, :2].astype(np.float64) @ view.matrix[:, :2].T + view.matrix[:, 2]
    assert np.all((inside >= 0) & (inside <= 448))


def test_plan_views_turns_a_rack_by_its_rows_when_its_boxes_disagree() -> None:
    """A row running at 75 degrees whose boxes' own angles scatter (tiles lying sideways seen
    from above): the rows ask for a turn, and the view runs the row across."""
    step = np.float32([np.cos(np.radians(75)), np.sin(np.radians(75))]) * 45
    row = np.float32([[200 + k * step[0], 100 + k * step[1], 40, 56, a]
                      for k, a in enumerate([75, -10, 70, 20, 80, -30])])  # fmt: skip
    kw = {"det_scale": 0.7, "turned_from": 60, "turned_to": 90}
    (view,) = plan_views(row, (640, 640), 448, **kw)
    assert view.reason == "turned"
    across = (row[:, :2] @ view.matrix[:, :2].T)[[0, -1]]
    assert abs(across[1, 1] - across[0, 1]) < 1e-3 * abs(across[1, 0] - across[0, 0])


def test_colour_model_splits_a_pair_by_ink_within_the_photo() -> None:
    def row(colour: int, number: int, p: float, other: int) -> np.ndarray:
        r = np.full(53, 1e-4)
        r[colour * 13 + number - 1] = p
        r[other * 13 + number - 1] = 1 - p
        return r / r.sum()

    blue, black, red = 2, 3, 0
    navy, ink = np.float32([0.45, -0.1, -1.0]), np.float32([0.0, 0.02, -1.2])
    # navy tiles the classifier calls black (0.7-0.95), and sure black ones: the photo's inks
    # fall in two groups, and the group the classifier finds bluer is blue
    probs = np.stack([row(black, 3, 0.7, blue), row(black, 4, 0.9, blue), row(black, 5, 0.95, blue),
                      row(black, 6, 1.0, blue), row(black, 7, 1.0, blue), row(black, 8, 1.0, blue),
                      row(red, 9, 1.0, blue)])  # fmt: skip
    features = [navy + 0.01, navy - 0.02, navy, ink, ink + 0.03, ink - 0.02, None]
    out, changed = colour_model(probs, features)
    assert changed == [0, 1, 2]
    assert [int(np.argmax(r)) for r in out[:3]] == [blue * 13 + 2, blue * 13 + 3, blue * 13 + 4]
    assert [int(np.argmax(r)) for r in out[3:]] == [int(np.argmax(r)) for r in probs[3:]]
    m_in, m_out = colour_marginals(probs), colour_marginals(out)
    # the pair keeps its total, the other colours and the joker do not move
    assert np.allclose(m_out[:, blue] + m_out[:, black], m_in[:, blue] + m_in[:, black], atol=1e-5)
    assert np.allclose(out[:, 52], probs[:, 52] / probs.sum(axis=1), atol=1e-6)
    # one colour of the pair in the photo (all inks alike): nothing moves
    alike = [ink + 0.01 * k for k in range(6)] + [None]
    same, none = colour_model(probs, alike)
    assert none == [] and np.allclose(same, probs, atol=1e-6)


def test_duplicates_merges_two_boxes_on_one_tile_but_keeps_touching_tiles() -> None:
    boxes = np.float32([[50, 50, 20, 30, 0], [52, 53, 22, 28, 5], [71, 50, 20, 30, 0]])
    drop = duplicates(boxes, np.float32([0.9, 0.6, 0.8]), 0.6)
    assert drop.tolist() == [False, True, False]


def test_cut_share() -> None:
    assert cut_share((10, 50, 20, 40, 0), (100, 100)) == pytest.approx(0.0)
    assert cut_share((0, 50, 20, 40, 0), (100, 100)) == pytest.approx(0.5)


def test_manifest_ranges_must_be_pairs(tmp_path: Path) -> None:
    text = MANIFEST.read_text() + "\nsecond_look_turned: 30\n"
    path = tmp_path / "recognizer.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match="two numbers"):
        RecognizerSpec.load(path)


def test_the_pipeline_skips_unreadable_tiles() -> None:
    from vision.pipeline import Pipeline

    def reading(x: float, tile: str, unreadable: str | None = None) -> TileReading:
        probs = np.full(53, 1e-6)
        probs[Tile.parse(tile).index] = 1.0
        box = (x, 100.0, x + 40.0, 160.0)
        return TileReading(box, Tile.parse(tile), 1.0, probs / probs.sum(), unreadable=unreadable)

    tiles = [reading(40.0 * k, t) for k, t in enumerate(["R1", "R2", "R3", "K9"])]
    tiles.append(reading(200.0, "R9", "cut"))
    result = Pipeline(recognizer=None).read(  # type: ignore[arg-type]
        Recognition(tiles=tiles, image_size=(640, 640)), indicator="B5"
    )
    read = [str(p.tile) for g in result.groups for p in g]
    assert "R9" not in read and sorted(read) == ["K9", "R1", "R2", "R3"]


# the shipped recogniser on changed real photos ----------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> Recognizer:
    return Recognizer.default()


def _without(recognizer: Recognizer, **off: object) -> Recognizer:
    return Recognizer(replace(recognizer.spec, **off), recognizer.backend)


def _read(recognizer: Recognizer, image: np.ndarray) -> list[Tile]:
    return sorted(t.tile for t in recognizer.recognize(image).tiles if t.unreadable is None)


def zoom_out(image: np.ndarray, share: float) -> np.ndarray:
    """The photo shrunk to ``share`` of its size in the middle of a same-size frame of the
    colour of its border (a camera further away)."""
    h, w = image.shape[:2]
    small = cv2.resize(image, (round(w * share), round(h * share)), interpolation=cv2.INTER_AREA)
    border = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]])
    out = np.empty_like(image)
    out[:] = np.median(border, axis=0).astype(np.uint8)
    y, x = (h - small.shape[0]) // 2, (w - small.shape[1]) // 2
    out[y : y + small.shape[0], x : x + small.shape[1]] = small
    return out


def turn(image: np.ndarray, degrees: float) -> np.ndarray:
    """The photo turned ``degrees`` anticlockwise about its centre, shrunk to stay whole in a
    same-size frame (grey outside)."""
    h, w = image.shape[:2]
    r = np.radians(degrees)
    scale = 1 / (abs(np.cos(r)) + abs(np.sin(r)))
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), degrees, scale)
    return cv2.warpAffine(image, matrix, (w, h), borderValue=(128, 128, 128))


def test_second_look_reads_a_rack_seen_from_further_away(shipped: Recognizer) -> None:
    """The rack photo shrunk to a quarter of its width in the frame (tiles 4 % of the frame
    wide, 18 px in the detector): the first pass misses or misreads tiles; the second look at a
    view around them, scaled up, reads the rack."""
    far = zoom_out(cv2.imread(str(EXAMPLE)), 0.25)
    assert _read(_without(shipped, second_look_small=0.0), far) != EXAMPLE_TILES
    recognition = shipped.recognize(far)
    assert recognition.second_look == ("small",)
    assert sorted(t.tile for t in recognition.tiles) == EXAMPLE_TILES
    # the photo as it is gets no second look
    assert shipped.recognize(cv2.imread(str(EXAMPLE))).second_look == ()


def navy_under_warm_light(image: np.ndarray) -> np.ndarray:
    """Blue ink darkened to a navy (another set's printing), then a tungsten cast (B x0.7,
    G x0.9)."""
    f = image.astype(np.float32)
    blue = np.clip((f[..., 0] - np.maximum(f[..., 1], f[..., 2])) / 40.0, 0, 1)[..., None]
    luma = f.mean(axis=2, keepdims=True) * 0.5
    navy = np.concatenate([luma * 1.6, luma, luma], axis=2)
    out = (f * (1 - blue) + navy * blue) * np.float32([0.7, 0.9, 1.0])
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def test_colour_within_the_photo_tells_navy_from_black(shipped: Recognizer) -> None:
    """A real photo of blue and black tiles, its blue re-inked navy under warm light: the
    classifier alone calls several navy tiles black; compared with the photo's own inks (black
    ink is grey against the face, navy is not) they come out blue."""
    name = "rummy-32_jpeg.rf.28c235234afa5"
    (path,) = [p for p in REAL_VAL.iterdir() if p.name.startswith(name)]
    label = path.parent.parent / "labels" / (path.stem + ".txt")
    truth = sorted(Tile(int(line.split()[0])) for line in label.read_text().splitlines())
    navy = navy_under_warm_light(cv2.imread(str(path)))
    alone = _read(_without(shipped, colour_model=False), navy)
    assert sum(t.colour == "K" for t in alone) >= sum(t.colour == "K" for t in truth) + 3
    assert _read(shipped, navy) == truth


def test_a_tile_cut_by_the_frame_is_flagged_not_guessed(shipped: Recognizer) -> None:
    """The rack photo cut 200 px from the left: half of R10 is left at the frame's edge.  Read
    alone it is guessed (R9); flagged, it keeps its box and the pipeline leaves it out."""
    cut = np.ascontiguousarray(cv2.imread(str(EXAMPLE))[:, 200:])
    guessed = _without(shipped, unreadable_cut=1.0).recognize(cut).tiles
    assert all(t.unreadable is None for t in guessed)
    tiles = shipped.recognize(cut).tiles
    flagged = [t for t in tiles if t.unreadable]
    assert [t.unreadable for t in flagged] == ["cut"]
    assert flagged[0].box[0] == pytest.approx(0.0, abs=2.0)
    whole = [t.tile for t in tiles if t.unreadable is None]
    assert sorted(whole) == sorted(parse_tiles("R12 K1 K5 K6 R6 R8 Y7 Y11"))


def test_two_boxes_on_one_tile_are_merged(shipped: Recognizer) -> None:
    """A real photo of tiles lying flat at a slant, read as it is: without merging, two tiles
    are each boxed twice (a box and a shifted box of like size, under NMS's overlap); merged,
    every tile has one box and the photo reads exactly."""
    name = "rummy-1_jpeg.rf.df422e44afd85164a193b115bbf6e09e"
    image = cv2.imread(str(REAL_VAL / f"{name}.jpg"))
    label = REAL_VAL.parent / "labels" / f"{name}.txt"
    truth = sorted(Tile(int(line.split()[0])) for line in label.read_text().splitlines())
    # its rows lean 83 degrees, so the shipped reader also looks again at a view turned by them,
    # whose boxes are single: the first pass alone shows the merge at work
    first_pass = _without(shipped, second_look_turned=None, tiers=False)  # the whole-photo path
    twice = _without(first_pass, merge_duplicates=1.0).recognize(image).tiles
    assert len(twice) > len(truth)
    assert sorted(t.tile for t in first_pass.recognize(image).tiles) == truth
    assert sorted(t.tile for t in shipped.recognize(image).tiles) == truth


def test_tiles_lying_across_are_stood_up_one_way_for_the_whole_photo(shipped: Recognizer) -> None:
    """The rack photo turned a quarter clockwise: its tiles lie across the frame, and each box
    alone may be stood up either way (R3, R6, R12 come out upside down as R8, R9, R13).  Read
    both ways up for the whole photo, the surer way stands them right (one tile, whose box the
    detector turned 40 degrees off, stays misread); each tile turned as the way-up model is sure
    it stands, without the vote, misreads fewer than none turned."""
    across = turn(cv2.imread(str(EXAMPLE)), -90)
    # the first pass's boxes (the shipped reader also looks again at a view turned by the rows,
    # whose boxes agree on their turn, and reads all ten right with or without the vote)
    first_pass = _without(shipped, second_look_turned=None, tiers=False)  # the whole-photo path
    alone = _read(_without(first_pass, up_vote_from=None, up_each_flip=None), across)
    # each tile the way-up model is sure of stood its way (``up_each_flip``), without the vote
    each = _read(_without(first_pass, up_vote_from=None), across)
    recognition = first_pass.recognize(across)
    voted = sorted(t.tile for t in recognition.tiles)
    assert "up" in recognition.second_look
    assert sorted(t.tile for t in shipped.recognize(across).tiles) == EXAMPLE_TILES

    def wrong(read: list[Tile]) -> int:
        return len(EXAMPLE_TILES) - sum(
            min(read.count(t), EXAMPLE_TILES.count(t)) for t in set(EXAMPLE_TILES)
        )

    assert wrong(alone) >= 3 and wrong(voted) <= 1 and wrong(each) < wrong(alone)
    # the upright photo is read one way, as before
    assert "up" not in shipped.recognize(cv2.imread(str(EXAMPLE))).second_look


def test_a_lone_tile_on_its_side_is_read_every_way_it_may_stand(shipped: Recognizer) -> None:
    """A real photo of one tile (K12) turned a quarter either way: the detector boxes it nearly
    square, so the box's long side does not say which way the tile stands, and with one tile
    there is no photo to vote.  Read only as its box stands it, the tile is misread both ways;
    read four ways (``up_each_square``), the surest reading is K12 both ways."""
    name = "rummy4-69_jpeg.rf.7af6581cbd209e051c31d29b250cdfb8"
    image = cv2.imread(str(REAL_VAL / f"{name}.jpg"))
    alone = _without(shipped, up_each_from=None)
    for degrees in (90, -90):
        lying = turn(image, degrees)
        assert _read(alone, lying) != [Tile.parse("K12")]
        assert _read(shipped, lying) == [Tile.parse("K12")]
    assert _read(shipped, image) == [Tile.parse("K12")]


def test_which_tiles_are_read_more_ways(shipped: Recognizer) -> None:
    boxes = np.float32(
        [
            [50, 50, 30, 42, 0],  # standing: read as it stands
            [50, 50, 30, 42, 80],  # on its side: also turned over
            [50, 50, 40, 38, 10],  # nearly square: all four ways
            [50, 50, 30, 42, 40],  # leaning 40 degrees: as it stands
        ]
    )
    assert shipped._turns_each(boxes) == [(1, (2,)), (2, (1, 2, 3))]
    # without the square test, the square box counts by its turn (its long side named across)
    assert _without(shipped, up_each_square=1.0)._turns_each(boxes) == [(1, (2,)), (2, (2,))]


def test_a_rack_turned_across_the_frame_is_read_in_a_view_turned_by_its_rows(
    shipped: Recognizer,
) -> None:
    """A real photo turned a quarter (its rows run up the frame): the boxes' own angles scatter
    on tiles lying sideways, so the whole-photo path's first pass alone misses or misreads two
    tiles; the rows (steps between tile centres) still say which way the tiles run, and the
    detector's second look at a view turned by them reads them exactly.  The shipped recogniser
    (tier stage on) finds the rack standing sideways and reads it again from the photo turned a
    quarter, upright: exactly too."""
    name = "rummy-21_jpeg.rf.0518161cce02c4bf7d9733b46f072758"
    image = cv2.imread(str(REAL_VAL / f"{name}.jpg"))
    label = REAL_VAL.parent / "labels" / f"{name}.txt"
    truth = sorted(Tile(int(line.split()[0])) for line in label.read_text().splitlines())
    across = turn(image, 90)
    _, _, first = shipped._detect(across)
    assert photo_angle(first)[1] < 0.8 < row_angle(first)[1]
    # the whole-photo path's first pass alone, each box read as it stands (reading the tiles on
    # their side more ways, ``up_each_from``, rights one of the two; the tier stage, whose strips
    # stand the rows up, reads them all)
    off = {"second_look_turned": None, "up_each_from": None}
    alone = _read(_without(shipped, tiers=False, **off), across)
    assert sum(min(alone.count(t), truth.count(t)) for t in set(truth)) <= len(truth) - 2
    assert _read(_without(shipped, **off), across) == truth
    recognition = _without(shipped, tiers=False).recognize(across)
    assert "turned" in recognition.second_look
    assert sorted(t.tile for t in recognition.tiles) == truth
    recognition = shipped.recognize(across)
    assert "quarter" in recognition.second_look
    assert sorted(t.tile for t in recognition.tiles) == truth
    # the photo as taken (its rows lean 23 degrees) is read in one pass
    assert "turned" not in shipped.recognize(image).second_look


@pytest.mark.slow
def test_scan_reports_the_cut_tile_instead_of_guessing_it(tmp_path) -> None:
    """Through the command line: the cut tile is in ``unreadable`` with its box, a warning says
    what to do, and the hand holds only the tiles read whole."""
    import json
    import subprocess
    import sys

    cut = tmp_path / "cut.jpg"
    cv2.imwrite(str(cut), np.ascontiguousarray(cv2.imread(str(EXAMPLE))[:, 200:]))
    run = subprocess.run(
        [sys.executable, "-m", "istaka", "scan", str(cut), "--indicator", "K7", "--json"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert [u["reason"] for u in data["unreadable"]] == ["cut"]
    assert data["unreadable"][0]["box"][0] == pytest.approx(0.0, abs=2.0)
    assert any("cut by the edge of the photo" in w for w in data["warnings"])
    assert sorted(data["hand"]) == sorted(str(t) for t in parse_tiles("R12 K1 K5 K6 R6 R8 Y7 Y11"))
