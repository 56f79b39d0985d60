"""The tier stage (``vision.tiers``): a rack read as a rack.

Geometry on hand-made first looks (fast), then the shipped models on committed photos (slow): two
rendered three-tier stands of touching tiles (frontal and oblique, held-out styles; their truth
in ``tests/data/*.json``), an oblique stand in the training styles turned a quarter either way,
and the real example photo turned 90, 180 and 270 degrees.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from vision.layout import tier_layout
from vision.tiers import (
    TILE_ASPECT,
    choose_tiers,
    find_tiers,
    gap_slots,
    hidden_by_front,
    is_rack,
    midway,
    midway_holds,
    on_its_side,
    project,
    strip_for,
    top_lines,
)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
W, H = 26.0, 26.0 / TILE_ASPECT  # a tile's width and height in pixels


def stand(tiers: int = 3, per_tier: int = 9, rise: float = 0.7) -> np.ndarray:
    """First-look boxes (cx, cy, w, h, degrees) of a frontal stand of touching tiles, each tier
    ``rise`` tile heights above the one in front of it; the lower part of a tile behind is
    hidden, so its box is only as high as what shows."""
    boxes = []
    for t in range(tiers):
        top = 100 + t * rise * H
        shown = rise * H if t < tiers - 1 else H
        for k in range(per_tier):
            boxes.append([100 + W / 2 + k * W, top + shown / 2, W, shown, 0.0])
    return np.float32(boxes)


def strip_boxes(strip, tops: dict[int, float], score: float = 0.85) -> np.ndarray:
    """What the strip detector would find: a box a tile wide at each slot ``k`` of ``tops``, its
    top ``tops[k]`` strip pixels below the strip's top line, a tile high."""
    w = strip.tile_width
    return np.float32(
        [
            [strip.left + k * w, strip.top + dy, strip.left + (k + 1) * w - 1, strip.top + dy + 48]
            + [score]
            for k, dy in tops.items()
        ]
    ).reshape(-1, 5)


def test_tiers_are_found_from_tile_tops_when_boxes_reach_into_the_tier_below() -> None:
    boxes = stand()
    # the close-up failure: a third of the boxes half a tile to the right and 1.3 times too tall,
    # taking in the tier below (their tops stay on the tile)
    for i in range(0, len(boxes), 3):
        boxes[i, 0] += W / 2
        boxes[i, 3] *= 1.3
        boxes[i, 1] += boxes[i, 3] * 0.15
    tiers, up = find_tiers(boxes)
    tops = sorted(float(t.quad[0, 1]) for t in tiers)
    assert up[1] < -0.99  # standing up in the photo
    want = [100 + t * 0.7 * H for t in range(3)]
    found = [min(tops, key=lambda v, w=w: abs(v - w)) for w in want]
    assert all(abs(f - w) < 0.1 * H for f, w in zip(found, want, strict=True))


def test_a_tier_of_few_tops_is_drawn_along_the_racks_pencil() -> None:
    """A stand's middle tier of which the first look boxed two tiles, one box reaching a tenth
    of a tile higher: a line through their two tops tilts 2 degrees off the tiers around it
    (and under a wider view, runs from one tier to the next); the rack's tiers are one pencil of
    lines, so it is drawn along them, through its tops' middle."""
    boxes = stand(tiers=3, per_tier=9, rise=0.7)
    middle = [9 + 2, 9 + 6]
    keep = [i for i in range(len(boxes)) if not 9 <= i < 18 or i in middle]
    boxes[middle[1], 1] -= 0.1 * H
    boxes = boxes[keep]
    tiers, _ = find_tiers(boxes)
    tier = next(t for t in tiers if set(t.members) == {9, 10})  # the middle boxes, kept
    (x0, y0), (x1, y1) = tier.quad[0], tier.quad[1]
    assert abs((y1 - y0) / (x1 - x0)) < 0.005  # level, as the stand's other tiers
    tops = boxes[[9, 10], 1] - boxes[[9, 10], 3] / 2
    x = float(boxes[[9, 10], 0].mean())
    assert y0 + (y1 - y0) * (x - x0) / (x1 - x0) == pytest.approx(float(tops.mean()), abs=1.0)


def oblique_rack(
    per_tier: int = 12, far: float = 0.45
) -> tuple[np.ndarray, Callable[[float], float]]:
    """First-look boxes of a two-tier rack seen from its left end: tiles shrink to ``far`` of
    their size at the right end, and the two tiers' tops converge towards the vanishing point
    on the right.  Returns the boxes and a tile's true height as a function of x."""
    length = sum(W * far ** (k / (per_tier - 1)) for k in range(per_tier))
    vanish = length / (1 - far)  # where the tiles would shrink to nothing

    def height(x: float) -> float:
        return H * (vanish - (x - 100)) / vanish

    boxes = []
    for t in range(2):
        x = 100.0
        while x < 100 + length - 1:
            w = W * height(x) / H
            top = 100 + t * 1.2 * (height(x + w / 2))
            boxes.append([x + w / 2, top + height(x + w / 2) / 2, w, height(x + w / 2), 0.0])
            x += w
    return np.float32(boxes), height


def test_a_tiers_height_along_the_rack_follows_its_tops_not_swollen_boxes() -> None:
    """Seen obliquely, a tier is drawn as high as its tiles stand at each end (its strip then
    shows every tile as wide as the next): the two tiers' lines of tops converge as the tiles
    shrink, which holds where the near end's boxes each take in half the next tile (their widths
    alone made the tier 1.3 times too high at that end, squeezing its tiles in the strip)."""
    boxes, height = oblique_rack()
    near = boxes[:, 0] < boxes[:, 0].min() + 2 * W
    boxes[near, 0] += boxes[near, 2] * 0.25  # a box across a tile and half the next
    boxes[near, 2] *= 1.5
    tiers, _ = find_tiers(boxes)
    tier = max(tiers, key=lambda t: len(t.members))
    left, right = tier.quad[0, 0], tier.quad[1, 0]
    for x, drawn in (
        (left, tier.quad[3, 1] - tier.quad[0, 1]),
        (right, tier.quad[2, 1] - tier.quad[1, 1]),
    ):
        assert drawn == pytest.approx(height(x), rel=0.1)


def test_tiers_turn_with_the_rack() -> None:
    """A stand photographed turned 90 degrees: the tiers run down the photo, and a tier's
    quadrilateral still spans its tiles."""
    boxes = stand(tiers=2)
    turned = boxes.copy()
    turned[:, 0], turned[:, 1] = 600 - boxes[:, 1], boxes[:, 0]  # 90 degrees clockwise
    turned[:, 2], turned[:, 3] = boxes[:, 3], boxes[:, 2]
    tiers, up = find_tiers(turned)
    assert abs(up[0]) > 0.99  # the rack's up runs across the photo
    lines = [t for t in tiers if len(t.members) == 9]
    assert len(lines) == 2
    for tier in lines:
        span = np.ptp(tier.quad[:, 1])
        assert span == pytest.approx(9 * W, rel=0.15)


def test_a_rack_on_its_side_is_told_by_where_its_tiles_lie_not_by_their_boxes() -> None:
    """A stand turned a quarter round, its boxes at the scattered angles the detector gives
    sideways tiles: its tiles' centres run up the photo, so it is on its side; the same stand
    upright, or a pile of tiles no longer one way than the other, is not."""
    rng = np.random.default_rng(3)
    boxes = stand(tiers=2)
    side = boxes.copy()
    side[:, 0], side[:, 1] = 600 - boxes[:, 1], boxes[:, 0]
    side[:, 4] = rng.uniform(0, 90, len(side))
    assert on_its_side(side)
    assert not on_its_side(boxes)
    pile = np.float32([[x, y, W, H, 0] for x in (100, 140, 180) for y in (100, 150, 200)])
    assert not on_its_side(pile)


@pytest.mark.parametrize(
    ("way", "look"), [("ROTATE_90_CLOCKWISE", "quarter"), ("ROTATE_90_COUNTERCLOCKWISE", "quarter"),
                      ("ROTATE_180", "half")],
)  # fmt: skip
def test_a_turned_reading_comes_back_to_the_photos_pixels(way: str, look: str) -> None:
    """What is read in the photo turned a quarter either way or half round (``cv2.rotate``) is
    mapped back to where it lies in the photo: a tile's box and outline, a tier's outline, the
    image size."""
    import cv2

    from okey import Tile
    from vision.recognizer import turned_back
    from vision.types import Recognition, TierView, TileReading

    photo = np.zeros((120, 200), np.uint8)
    photo[30:50, 140:155] = 255  # a "tile": x 140-155, y 30-50 (pixel edges)
    side = cv2.rotate(photo, getattr(cv2, way))
    ys, xs = np.nonzero(side)
    box = (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))
    quad = ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3]))
    reading = TileReading(box=box, tile=Tile(0), confidence=1.0, probs=np.ones(53), quad=quad)
    size = (side.shape[1], side.shape[0])
    side_view = Recognition(tiles=[reading], image_size=size, tiers=(TierView(quad, 20.0),))
    back = turned_back(side_view, getattr(cv2, way), 0.01)
    assert back.image_size == (200, 120)
    assert back.tiles[0].box == (140.0, 30.0, 155.0, 50.0)
    corners = np.float32(back.tiles[0].quad)
    assert corners.min(axis=0).tolist() == [140, 30] and corners.max(axis=0).tolist() == [155, 50]
    assert back.tiers[0].quad == back.tiles[0].quad
    assert look in back.second_look and back.timings_ms["total"] == pytest.approx(10.0)


@pytest.mark.parametrize(
    ("degrees", "way"),
    [(0, None), (25, None), (-40, None), (65, "ROTATE_90_COUNTERCLOCKWISE"),
     (-90, "ROTATE_90_CLOCKWISE"), (140, "ROTATE_180"), (-180, "ROTATE_180")],
)  # fmt: skip
def test_a_rack_is_turned_upright_before_its_tiers_are_searched_when_far_from_it(
    degrees: float, way: str | None
) -> None:
    """The turn taken before the tier stage from the first look's rack up (``degrees`` from the
    photo's up, positive towards its right): none within 30 degrees of upright (from 30 to 45 the
    tiers' own lean decides, after), a quarter towards upright from 30 degrees of level, half
    round within 45 degrees of upside down."""
    import cv2

    from vision.recognizer import _upright_turn

    a = np.radians(degrees)
    got = _upright_turn(np.array([np.sin(a), -np.cos(a)]))
    assert got == (None if way is None else getattr(cv2, way))


def _tier_strips(rise: float) -> list:
    """The strips of a frontal stand's three tiers, each ``rise`` tile heights above the next."""
    quads = []
    for t in range(3):
        top = 100 + t * rise * H
        quads.append(
            np.float64([[100, top], [100 + 9 * W, top], [100 + 9 * W, top + H], [100, top + H]])
        )
    return [strip_for(k, q, (600, 600)) for k, q in enumerate(quads)]


def test_a_tier_is_hidden_below_where_the_tier_in_front_stands() -> None:
    """On a stand whose tiers rise 0.7 of a tile, the two back tiers show only their tiles'
    tops: each is hidden from where the next tier's tops stand (0.7 of a tile down its strip,
    a little lower) and greyed there when warped; the front tier, and tiers spaced a whole tile
    apart (an Okey rack's shelf), hide nothing."""
    from vision.tiers import HIDDEN_MARGIN, STRIP_TILE

    strips = hidden_by_front(_tier_strips(0.7))
    for strip in strips[:2]:
        assert strip.hidden is not None
        want = strip.top + (0.7 + HIDDEN_MARGIN) * STRIP_TILE
        assert strip.hidden == pytest.approx(want, abs=0.5)
    assert strips[2].hidden is None
    assert all(s.hidden is None for s in hidden_by_front(_tier_strips(1.1)))
    photo = np.full((600, 600, 3), 255, np.uint8)
    warped = strips[0].warp(photo)
    cut = int(np.ceil(strips[0].hidden))
    assert (warped[int(strips[0].top) + 2 : cut - 1] == 255).all()
    assert (warped[cut + 1 :] == 114).all()
    assert strips[0].shows_to == strips[0].hidden
    assert strips[2].shows_to == strips[2].size[1]


def test_a_candidate_the_chosen_tiers_would_hide_is_looked_at_greyed() -> None:
    """With the back and front tiers of a three-tier stand chosen, the middle candidate (its
    tiles' feet behind the front tier, so the detector boxed none of them) comes back to be
    looked at again, greyed from the front tier's top; the chosen ones do not, nor anything on
    a rack whose tiers stand a whole tile apart."""
    from vision.tiers import HIDDEN_MARGIN, STRIP_TILE, behind_chosen

    strips = _tier_strips(0.7)
    again = behind_chosen(strips, [0, 2])
    assert [s.tier for s in again] == [1]
    want = strips[1].top + (0.7 + HIDDEN_MARGIN) * STRIP_TILE
    assert again[0].hidden == pytest.approx(want, abs=0.5)
    assert behind_chosen(strips, [0, 1, 2]) == []
    assert behind_chosen(_tier_strips(1.1), [0, 2]) == []


def _stand_first_look(rise: float) -> tuple[list, np.ndarray]:
    """A frontal three-tier stand whose tiers rise ``rise`` tile heights: the candidates (one
    per tier, with the first look's nine tiles on each line) and the first look's turned boxes,
    each the part of its tile that shows over the tier in front."""
    from vision.tiers import Tier

    strips = _tier_strips(rise)
    boxes, candidates = [], []
    for t, strip in enumerate(strips):
        quad = project(
            strip.to_photo, [(strip.left, strip.top), (strip.left + strip.length, strip.top)]
        )
        top = float(quad[0][1])
        shows = rise * H if t < 2 else H
        for k in range(9):
            boxes.append([100 + (k + 0.5) * W, top + shows / 2, W, shows, 0.0])
        corners = np.float64(
            [[100, top], [100 + 9 * W, top], [100 + 9 * W, top + H], [100, top + H]]
        )
        candidates.append(Tier(corners, tuple(range(9 * t, 9 * t + 9))))
    return candidates, np.float32(boxes)


def test_a_tier_showing_only_its_tops_is_read_from_the_first_looks_boxes() -> None:
    """A stand of three tiers seen straight on from afar shows each back tier's top 40 % only:
    no strip detector boxes the back tier (greyed, its tiles are too short to be a tier's), yet
    nine first-look tops stand on its own line.  With the middle and front tiers chosen it is
    added, top first, its tiles the first look's boxes mapped into its strip down to where the
    middle tier hides them.  Not when a chosen tier holds one of its tops, when it shows enough
    to be looked at greyed (``behind_chosen``), or when two tops only stand on its line."""
    from vision.tiers import HIDDEN_MARGIN, STRIP_TILE, tops_only_tiers

    up = np.float64([0.0, -1.0])
    candidates, turned = _stand_first_look(0.4)
    conf = np.full(len(turned), 0.8, np.float32)
    strips = _tier_strips(0.4)
    found = [np.zeros((0, 5), np.float32), strip_boxes(strips[1], dict.fromkeys(range(9), 0.0))]
    found.append(strip_boxes(strips[2], dict.fromkeys(range(9), 0.0)))
    chosen = tops_only_tiers(candidates, strips, found, [1, 2], turned, conf, up)
    assert chosen == [0, 1, 2]
    line = strips[0].top + (0.4 + HIDDEN_MARGIN) * STRIP_TILE
    assert strips[0].hidden == pytest.approx(line, abs=0.5)
    assert len(found[0]) == 9
    lefts = strips[0].left + np.arange(9) * strips[0].tile_width
    assert np.allclose(found[0][:, 0], lefts, atol=1.0)
    assert np.allclose(found[0][:, 1], strips[0].top) and np.allclose(found[0][:, 3], line)
    assert np.allclose(found[0][:, 4], 0.8)

    def again(members: dict[int, tuple[int, ...]], rise: float = 0.4) -> list[int]:
        cands, boxes = _stand_first_look(rise)
        for k, m in members.items():
            cands[k] = type(cands[k])(cands[k].quad, m)
        fresh = _tier_strips(rise)
        empty = [np.zeros((0, 5), np.float32)] * 3
        return tops_only_tiers(cands, fresh, list(empty), [1, 2], boxes, conf, up)

    assert again({0: (0, 1, 2, 9)}) == [1, 2]  # a top of the middle tier's line
    assert again({0: (0, 1)}) == [1, 2]
    assert again({}, rise=0.7) == [1, 2]


def test_a_hidden_tier_keeps_first_boxes_that_end_above_the_tier_in_front() -> None:
    """A hidden tier's boxes: the greyed run's, and the whole strip's where they end above the
    tier in front (a box reaching down into it spans two tiers) and overlap none of them."""
    from vision.recognizer import _with_shown
    from vision.tiers import STRIP_TILE

    strip = hidden_by_front(_tier_strips(0.7))[0]
    line = strip.hidden
    masked = np.float32([[0, strip.top, 18, line, 0.9]])
    first = np.float32(
        [
            [1, strip.top, 19, line, 0.8],  # the same tile as a greyed box: not twice
            [20, strip.top, 38, line + 2, 0.8],  # ends at the line: kept
            [40, strip.top, 58, strip.top + 1.2 * STRIP_TILE, 0.9],  # reaches the front tier
        ]
    )
    kept = _with_shown(masked, first, strip, 0.5)
    assert sorted(kept[:, 0].tolist()) == [0.0, 20.0]


def test_top_lines_keep_tiers_apart_that_one_long_line_would_join() -> None:
    # a short middle tier on the left and a long top tier to its right, lower by a tier's rise
    # at the left: a line through all of them fits within a tile's height, not within a top's
    top = [(x, 0.0 + 0.02 * x) for x in np.arange(0, 300, 26.0)]
    middle = [(x, 40.0 + 0.02 * x) for x in np.arange(0, 80, 26.0)]
    tops = np.float64(top + middle)
    lines = top_lines(tops, np.full(len(tops), 26.0))
    assert sorted(len(line) for line in lines) == [len(middle), len(top)]


def test_gap_slots_cover_an_empty_stretch_tile_by_tile() -> None:
    assert gap_slots([(0, 10), (10, 20), (50, 60)], 10, 0, 60) == [
        (20.0, 30.0),
        (30.0, 40.0),
        (40.0, 50.0),
    ]
    assert gap_slots([(0, 10), (14, 24)], 10, 0, 30) == []  # less than a tile apart: no slot


def test_a_tile_below_the_rack_is_no_tier_of_it() -> None:
    """Two tiers and a lone tile lying on the table two tile heights below: each line holds
    tiles, but the lone one does not stand on the rack."""
    boxes = stand(tiers=2, rise=1.2)
    lone = np.float32([[200, 100 + 1.2 * H + 2.2 * H + H / 2, W, H, 0]])
    everything = np.concatenate([boxes, lone])
    tiers, up = find_tiers(everything)
    strips = [strip_for(k, t.quad, (800, 800)) for k, t in enumerate(tiers)]
    # what the strip detector would find: the first look's tiles on each strip, at full score
    found = []
    for strip in strips:
        at = project(strip.to_strip, everything[:, :2])
        inside = (
            (at[:, 0] >= 0) & (at[:, 0] <= strip.size[0]) & (np.abs(at[:, 1] - strip.top - 24) < 12)
        )
        half = strip.tile_width / 2
        found.append(
            np.float32(
                [[x - half, strip.top, x + half, strip.top + 48, 0.9] for x, _ in at[inside]]
            ).reshape(-1, 5)
        )
    chosen = choose_tiers(strips, found, up)
    assert len(chosen) == 2
    held = {int(i) for k in chosen for i in tiers[k].members}
    assert len(everything) - 1 not in held


def test_a_line_between_two_tiers_loses_to_the_tiers_whose_tops_it_runs_along() -> None:
    """A candidate a quarter tile below a tier's tops still shows the detector five tiles (cut
    across two tiers, their tops scattered about its line), a little surer in sum than the
    tier's four: the tier whose tiles' tops lie on its line is chosen, and the rack stays one."""
    boxes = stand(tiers=2, rise=1.0, per_tier=5)
    tiers, up = find_tiers(boxes)
    assert len(tiers) == 2
    quads = [t.quad for t in tiers]
    between = quads[0] + np.float64([0, 0.25 * H])  # a line a quarter tile below the top tier
    strips = [strip_for(k, q, (800, 800)) for k, q in enumerate([*quads, between])]

    found = [
        strip_boxes(strips[0], dict(enumerate([0, -1, 1, 0]))),
        strip_boxes(strips[1], dict(enumerate([0, 1, -1, 0]))),
        strip_boxes(strips[2], dict(enumerate([-5, -11, 3, -9, -20]))),
    ]
    assert float(found[2][:, 4].sum()) > float(found[0][:, 4].sum())
    assert choose_tiers(strips, found, up) == [0, 1]


def test_a_back_tier_whose_boxes_reach_over_the_tier_in_front_is_still_a_tier() -> None:
    """On a close stand the back tiers show under half their tiles over the tier in front, and
    the strip detector boxes a back tier's tiles down over the front tier's tops: the middles of
    those boxes fall on the tiles in front, their tops do not.  A tier is the tops it runs
    along, so the three are all tiers (by the boxes' middles the middle one shared its tiles
    with the top one and was dropped)."""
    up = np.float64([0.0, -1.0])
    quads = [
        np.float64([[100, y], [100 + 6 * W, y], [100 + 6 * W, y + H], [100, y + H]])
        for y in (100 + 0.45 * H * t for t in range(3))
    ]
    strips = [strip_for(k, q, (800, 800)) for k, q in enumerate(quads)]
    top, middle, bottom = range(3)
    found = [strip_boxes(strip, dict.fromkeys(range(6), 0)) for strip in strips]
    found[top][:, 3] = strips[top].top + 1.2 * 48  # down over the middle tier's tops
    found[middle][:, 3] = strips[middle].top + 0.45 * 48  # what shows over the bottom tier
    assert choose_tiers(strips, found, up) == [top, middle, bottom]


def _tier_quad(y: float, scale: float = 1.0) -> np.ndarray:
    """A tier of six tiles ``scale`` times the usual size, its top line at ``y``."""
    w, h = 6 * W * scale, H * scale
    return np.float64([[100, y], [100 + w, y], [100 + w, y + h], [100, y + h]])


@pytest.mark.parametrize("upside_down", [False, True])
def test_a_candidate_between_two_tiers_is_looked_at_midway_between_them(upside_down) -> None:
    """A stand's middle tier stands halfway between the tiers above and below it; its candidate,
    drawn from one first-look top a fifth of a tile too high, is looked at on the midway line
    (weighed by how far away each tier stands: the front one's tiles are 1.25 times as large,
    so the midway line lies nearer the top one's), seen from just above that line down to where
    the front tier hides it.  A photo turned upside down gives the same line."""
    top_y, front_y = 100.0, 100.0 + 1.1 * H
    # the far (top) tier's tiles 1.0, the near (front) one's 1.25 as large: the 3-D midpoint
    want = (top_y / 1.0 + front_y / 1.25) / (1 / 1.0 + 1 / 1.25)
    quads = [_tier_quad(top_y), _tier_quad(front_y, 1.25), _tier_quad(want - 0.2 * H)]
    up = np.float64([0.0, -1.0])
    if upside_down:  # the photo turned 180 degrees: each corner stays the rack's same corner
        quads = [800 - q for q in quads]
        up = -up
    strips = [strip_for(k, q, (800, 800)) for k, q in enumerate(quads)]
    found = [strip_boxes(s, dict.fromkeys(range(6), 0)) for s in strips]
    mid = midway(strips[2], strips, found, [0, 1], up, (800, 800))
    assert mid is not None and mid.tier == 2
    line = project(mid.to_photo, [(mid.left + mid.length / 2, mid.top)])[0]
    assert line[1] == pytest.approx(800 - want if upside_down else want, abs=0.02 * H)
    assert mid.above == pytest.approx(mid.top - 0.1 * 48)
    assert mid.hidden is not None and mid.top < mid.hidden < mid.top + 48
    # the top tier's candidate lies between no two chosen tiers: no midway look
    assert midway(strips[0], strips, found, [2, 1], up, (800, 800)) is None


def test_a_midway_look_holds_a_tier_only_where_tiles_top_its_line() -> None:
    """Midway between the two tiers of a rack with no middle tier, the detector boxes the upper
    tier's tiles where the grey above the line cuts them: their tops on the grey's edge, not on
    the line; a middle tier's tiles top the line."""
    strip = strip_for(0, _tier_quad(100.0), (800, 800))
    assert midway_holds(strip, strip_boxes(strip, {0: 1, 1: -2, 2: 3, 4: 0}))
    assert not midway_holds(strip, strip_boxes(strip, {0: -8, 1: -9, 2: -7, 3: 2}))


def test_a_strip_whose_boxes_stand_off_its_line_is_no_tier() -> None:
    """A candidate along the rack's lip shows the detector the feet of two front tiles, their
    tops half a tile above its line: two boxes, but no tile standing on it."""
    boxes = stand(tiers=2, rise=1.2, per_tier=8)
    tiers, up = find_tiers(boxes)
    quads = [t.quad for t in tiers[:2]]
    lip = max(quads, key=lambda q: q[0, 1]) + np.float64([0, 1.1 * H])
    strips = [strip_for(k, q, (800, 800)) for k, q in enumerate([*quads, lip])]

    found = [
        strip_boxes(strips[0], dict.fromkeys(range(8), 0)),
        strip_boxes(strips[1], dict.fromkeys(range(4), 0)),
        strip_boxes(strips[2], {5: -24, 6: -24}),
    ]
    assert choose_tiers(strips, found, up) == [0, 1]


def test_groups_lying_at_angles_on_a_table_are_no_rack() -> None:
    boxes = stand(tiers=2, rise=1.2)
    tiers, up = find_tiers(boxes)
    strips = [strip_for(k, t.quad, (800, 800)) for k, t in enumerate(tiers)]
    assert is_rack(boxes, up, strips)
    # the same photo with four tiles of the first tier turned 45 degrees: a table's groups
    table = boxes.copy()
    table[:4, 4] = 45.0
    assert not is_rack(table, up, strips)


def test_tier_layout_orders_rows_by_tier_and_splits_groups_at_gaps() -> None:
    places = [(1, 50, 60), (0, 0, 10), (0, 10, 20), (0, 30, 40), None, (1, 60, 70)]
    centres = [(0.0, 0.0)] * 4 + [(500.0, 500.0), (0.0, 0.0)]
    layout = tier_layout(places, centres, [10.0, 10.0])
    assert layout.rows == [[[1, 2], [3]], [[0, 5]]]
    assert layout.table == [4]


# ---------------------------------------------------------------------------------- the models


def _rows(result) -> list[list[str]]:
    return [[str(p.tile) for group in row for p in group] for row in result.rows]


def _matched(got: list[list[str]], want: list[list[str]]) -> int:
    """Tiles read right row by row, in order (longest common subsequence per row)."""
    total = 0
    for a, b in zip(got, want, strict=False):
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                table[i + 1][j + 1] = (
                    table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
                )
        total += table[len(a)][len(b)]
    return total


@pytest.fixture(scope="module")
def pipeline():
    from vision.pipeline import Pipeline

    return Pipeline.default()


@pytest.mark.slow
def test_a_rendered_frontal_three_tier_stand_reads_as_three_rows(pipeline) -> None:
    """Touching tiles in three tiers, a tile 7 % of the frame: the whole-photo path reads one
    tier as a row (the layout knows two, boxes reach into the tier below); the tier stage finds
    all three and reads every tile in its row, the back tiers' found with what hides them
    greyed and read from crops a whole tile high."""
    import cv2

    truth = json.loads((DATA / "stand3_frontal.json").read_text())["rows"]
    result = pipeline.scan(cv2.imread(str(DATA / "stand3_frontal.jpg")))
    assert result.reading == "tiers" and len(result.tiers) == 3
    got = _rows(result)
    assert len(got) == 3
    # the back tiers show their tiles' tops over the tier in front: looked at with it greyed
    # (``hidden_by_front``) they read 31 of 37 in their rows; read from crops cut only as high
    # as the tiles show, 34; cut a whole tile high (``_cut``), all 37 (and one extra: a strip
    # box between K9 and R3, reaching over both, read B11)
    assert _matched(got, truth) == sum(len(r) for r in truth)


@pytest.mark.slow
@pytest.mark.parametrize("size", [0.75, 1.0, 1.85, 2.5])
def test_a_close_stand_whose_back_tiers_show_their_tops_reads_each_tier_in_its_row(
    pipeline, size: float
) -> None:
    """A close three-tier stand, shown at four sizes: the back tiers show a third to a half of
    their tiles over the tier in front.  The top tier's first-look boxes reach down over the
    middle tier's tiles, so the two share box middles but not tops: both are tiers.  The middle
    tier's candidate, drawn from one first-look top, lies a fifth of a tile off its tops; it is
    looked at midway between the tiers above and below it (``vision.tiers.midway``), from just
    above that line down to where the front tier hides it.  Each back tier is read with what
    hides it greyed, so its tiles read their own numerals; no row holds another tier's tiles.
    Before the midway look: three tiers at its own size only (16 of 17 tiles in their rows),
    two at the other three (the top and middle tiers read as one row)."""
    import cv2

    truth = json.loads((DATA / "stand3_close.json").read_text())["rows"]
    image = cv2.imread(str(DATA / "stand3_close.jpg"))
    shrink = cv2.INTER_AREA if size < 1 else cv2.INTER_CUBIC
    result = pipeline.scan(cv2.resize(image, None, fx=size, fy=size, interpolation=shrink))
    assert result.reading == "tiers" and len(result.tiers) == 3
    got = _rows(result)
    assert len(got) == 3
    for row, want in zip(got, truth, strict=True):  # no row holds another tier's tile
        others = {t for other in truth if other is not want for t in other} - set(want)
        assert not others & set(row), (row, want)
    # 14 to 16 of 17: the top tier's half-hidden K12 read K13 enlarged, the middle tier's 7 or
    # 3 lost at some sizes; shrunk, the top tier's R4 at the frame's left edge lost (its
    # first-look box, reaching over the middle tier's tile cut by the frame, taken by that
    # tile)
    assert _matched(got, truth) >= sum(len(r) for r in truth) - 3


@pytest.mark.slow
def test_a_hidden_tier_and_its_tiles_are_outlined_as_far_down_as_they_show(pipeline) -> None:
    """On a close stand each back tier shows a third to a half of its tiles over the tier in
    front: its outline, and its tiles' (drawn by ``--annotate``), stop where the tier in front
    starts, so no outline lies over another tier's tiles (before: a whole tile high, each back
    tile's outline reached over the tile in front; a tile whose first-look box was kept had that
    box, across two tiers, for its outline).  The tiles' boxes stay as found."""
    import cv2

    result = pipeline.scan(cv2.imread(str(DATA / "stand3_close.jpg")))
    assert len(result.tiers) == 3
    tops = [(q[0][1] + q[1][1]) / 2 for q in result.tiers]  # a level stand: y at the top line
    bottoms = [(q[2][1] + q[3][1]) / 2 for q in result.tiers]
    height = bottoms[2] - tops[2]  # the front tier's whole tile
    for k in range(2):
        assert bottoms[k] == pytest.approx(tops[k + 1], abs=0.1 * height)
        for placed in (p for group in result.rows[k] for p in group):
            assert placed.quad is not None
            assert max(y for _, y in placed.quad) <= tops[k + 1] + 0.15 * height


@pytest.mark.slow
@pytest.mark.parametrize("name", ["stand3_frontal", "stand3_close", "stand3_side"])
def test_a_stand_photographed_upside_down_reads_as_upright(pipeline, name: str) -> None:
    """A stand photographed upside down (a phone held the other way round): the first look's
    standing tiles say the rack's up points down the photo, so the rack is found and read in
    the photo turned half round, as the networks learnt tiles, and mapped back: the same rows,
    tile for tile, as the upright photo, and the tiers' outlines where the tiers lie in the
    photo.  Read upside down, the frontal stand's top row lost K11 and Y13 and read a Y1 more,
    and the close and side-on stands were read as tables (no tier)."""
    import cv2

    image = cv2.imread(str(DATA / f"{name}.jpg"))
    h, w = image.shape[:2]
    upright = pipeline.scan(image)
    recognition = pipeline.recognizer.recognize(np.ascontiguousarray(image[::-1, ::-1]))
    assert "half" in recognition.second_look and recognition.image_size == (w, h)
    turned = pipeline.read(recognition)
    assert turned.reading == "tiers" and _rows(turned) == _rows(upright)
    for mine, theirs in zip(turned.tiers, upright.tiers, strict=True):  # the same tier, turned
        back = [(w - x, h - y) for x, y in mine]
        assert np.allclose(np.float32(back), np.float32(theirs), atol=1.0)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["stand3_frontal", "stand3_oblique"])
def test_a_stand_photographed_sideways_reads_as_upright(pipeline, name: str) -> None:
    """A stand photographed a quarter turn round either way (a phone held sideways, no EXIF
    turn): its tiers are found sideways, and the rack is then found and read again with the
    photo turned so that it stands upright, as the networks learnt tiles: the same rows, tile
    for tile, as the upright photo (read sideways, the frontal stand kept 30 and 33 of its 38
    tiles in their rows, the oblique one 34 of 35 turned 90 degrees)."""
    import cv2

    image = cv2.imread(str(DATA / f"{name}.jpg"))
    upright = _rows(pipeline.scan(image))
    for quarter in (1, 3):
        turned = np.ascontiguousarray(np.rot90(image, quarter))
        recognition = pipeline.recognizer.recognize(turned)
        assert "quarter" in recognition.second_look, f"turned {90 * quarter}"
        assert _rows(pipeline.read(recognition)) == upright, f"turned {90 * quarter}"


@pytest.mark.slow
def test_a_rendered_oblique_stand_reads_as_a_rack_at_any_turn(pipeline) -> None:
    """Seen 40 degrees from the side, the far tiles half as wide as the near ones: the three
    rows exactly as they stand, and turned 90, 180 and 270 degrees the same rows, a tile missed
    at most (the first look finds fewer tiles on a rack on its side; turned 270 degrees its
    boxes lean too far apart for the rack's frame, and the rack is read a quarter turn round)."""
    import cv2

    truth = json.loads((DATA / "stand3_oblique.json").read_text())["rows"]
    image = cv2.imread(str(DATA / "stand3_oblique.jpg"))
    assert _rows(pipeline.scan(image)) == truth
    total = sum(len(r) for r in truth)
    for quarter in (1, 2, 3):
        result = pipeline.scan(np.ascontiguousarray(np.rot90(image, quarter)))
        assert result.reading == "tiers"
        got = _rows(result)
        assert len(got) == 3 and _matched(got, truth) >= total - 1, f"turned {90 * quarter}"


@pytest.mark.slow
def test_a_stand_on_its_side_whose_boxes_agree_on_no_turn_is_read_a_quarter_round(
    pipeline,
) -> None:
    """An oblique three-tier stand turned exactly a quarter either way (a phone held sideways):
    the first look boxes its sideways tiles at angles scattered over 0-90 degrees, so no rack
    frame agrees (``rack_up`` is None) and the tiles' centres do not say the rack lies on its
    side; read a quarter turn round, its three tiers come out tile for tile."""
    import cv2

    truth = json.loads((DATA / "stand3_side.json").read_text())["rows"]
    image = cv2.imread(str(DATA / "stand3_side.jpg"))
    total = sum(len(r) for r in truth)
    for quarter in (1, 3):
        result = pipeline.scan(np.ascontiguousarray(np.rot90(image, quarter)))
        assert result.reading == "tiers", f"turned {90 * quarter}"
        assert _matched(_rows(result), truth) == total


@pytest.mark.slow
def test_the_strips_split_touching_tiles_one_by_one(pipeline) -> None:
    """Every tier of the oblique stand comes out tile by tile: each true tile of a tier has
    exactly one tile of that row on it (a box spanning two, or two on one, would fail)."""
    import cv2

    truth = json.loads((DATA / "stand3_oblique.json").read_text())
    result = pipeline.scan(cv2.imread(str(DATA / "stand3_oblique.jpg")))
    for row, quads in zip(result.rows, truth["quads"], strict=True):
        centres = [
            ((p.box[0] + p.box[2]) / 2, (p.box[1] + p.box[3]) / 2) for group in row for p in group
        ]
        for quad in quads:
            outline = np.float32(quad)
            on = [c for c in centres if cv2.pointPolygonTest(outline, c, False) >= 0]
            assert len(on) == 1


@pytest.mark.slow
@pytest.mark.parametrize("quarter", [1, 2, 3])
def test_a_real_rack_turned_gives_the_same_hand_as_upright(pipeline, quarter: int) -> None:
    """The example photo (a real Rummikub rack) turned a quarter, a half and three quarters:
    the same rows, tile for tile, in the same order (before the tier stage, turned 90 degrees
    its tiles went to the table, turned 180 its rows came out reversed)."""
    import cv2

    image = cv2.imread(str(REPO / "examples" / "rack_real.jpg"))
    upright = pipeline.scan(image)
    turned = pipeline.scan(np.ascontiguousarray(np.rot90(image, quarter)))
    assert upright.reading == turned.reading == "tiers"
    assert _rows(turned) == _rows(upright)


@pytest.mark.slow
def test_a_rack_read_at_its_own_size_is_placed_where_it_stands(pipeline) -> None:
    """A close photo whose tiles are a little over twice the crop's size is read at its own size
    (not shrunk first): its tiers' top lines lie on the tiles' tops.  They were put up to a tenth
    further from the photo's corner (mapped back by a shrink that was never applied): here 21 px
    low on the mean, 31 at worst, where the tiles are 115 px high."""
    import cv2

    image = cv2.imread(str(DATA / "stand3_frontal.jpg"))
    scale = 1.85  # its tiles ~210 px long: 2 to 2.2 times the classifier's 96 px crop
    reading = pipeline.recognizer.recognize(cv2.resize(image, None, fx=scale, fy=scale))
    quads = json.loads((DATA / "stand3_frontal.json").read_text())["quads"]
    assert len(reading.tiers) == len(quads) == 3
    off = []
    for tier, row in zip(reading.tiers, quads, strict=True):
        (x0, y0), (x1, y1) = np.float64(tier.quad[:2]) / scale
        for quad in np.float64(row):
            (ax, ay), (bx, by) = quad[0], quad[1]
            x, y = (ax + bx) / 2, (ay + by) / 2  # the middle of the tile's top edge
            off.append(y0 + (y1 - y0) * (x - x0) / (x1 - x0) - y)
    assert np.mean(np.abs(off)) < 10.0 and np.max(np.abs(off)) < 20.0


@pytest.mark.slow
def test_the_shipped_detector_reads_canvases_cut_to_the_strips_they_hold() -> None:
    """The shipped ONNX detector takes any input size (``istaka export`` exports it so): the
    strips' last canvas is cut to the shelves it holds, and the boxes found in it are those of
    the same strips in the whole square."""
    import cv2

    from vision.recognizer import Recognizer

    recognizer = Recognizer.default("onnx")
    assert recognizer.detector.fixed is None

    truth = json.loads((DATA / "stand3_frontal.json").read_text())["quads"]
    image = cv2.imread(str(DATA / "stand3_frontal.jpg"))
    tiers = recognizer.recognize(image).tiers
    strips = [strip_for(k, np.float32(t.quad), image.shape[1::-1]) for k, t in enumerate(tiers)]
    cut = recognizer._detect_strips(image, strips)
    recognizer.detector.fixed = (448, 448)  # as a detector exported for one size is run
    whole = recognizer._detect_strips(image, strips)
    assert [len(b) for b in cut] == [len(b) for b in whole]
    for a, b in zip(cut, whole, strict=True):
        a, b = a[np.argsort(a[:, 0])], b[np.argsort(b[:, 0])]
        assert np.abs(a[:, :4] - b[:, :4]).max() < 6.0  # strip pixels: a tile is 34 wide
    assert sum(map(len, cut)) >= 0.5 * sum(map(len, truth))


def test_a_tier_end_tile_boxed_wide_is_no_second_sight_of_its_neighbour() -> None:
    """Merging two tiers' strips' tiles, a tile near one already kept is the same tile seen by two
    strips; near means within a share of a tile's width, the tiers' usual one: a tier's end tile
    boxed a tile and a half wide (its strip stretched past the tier) is still a tile of its own."""
    from okey import Tile
    from vision.recognizer import _agree
    from vision.types import TileReading

    def tile(x: float, width: float, name: str) -> TileReading:
        quad = (
            (x - width / 2, 0.0),
            (x + width / 2, 0.0),
            (x + width / 2, 40.0),
            (x - width / 2, 40.0),
        )
        probs = np.zeros(53, np.float32)
        probs[Tile.parse(name).index] = 1.0
        box = (x - width / 2, 0.0, x + width / 2, 40.0)
        return TileReading(box, Tile.parse(name), 0.9, probs, 0.9, place=(0, x, x), quad=quad)

    rack = [tile(15, 30, "R1"), tile(45, 30, "R2"), tile(75, 30, "R3"), tile(112, 70, "R4")]
    out, used, source = _agree(rack, [], np.zeros(0), np.zeros(0, bool))
    assert [str(t.tile) for t in out] == ["R1", "R2", "R3", "R4"]
