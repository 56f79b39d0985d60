"""A table scene read as a table: every tile lying face up (the indicator, the discard piles, 101's
opened melds) becomes a ``seen`` tile, with its box and its turned outline.

Tiles on a table lie at any angle, so a table photo is never read tier by tier: the whole-photo
path of the recogniser reads it (its oriented-box detector finds the turned tiles; each is
stood up and read from its own crop).  The recogniser is used here as a copy with the tier
stage and the levelled second reading off (``whole_photo_reader``), sharing its networks.

Melds are rows of tiles lying side by side: two tiles belong to one row when they lie the same
way (within ``MELD_ANGLE`` degrees), their centres are about a tile's width apart across their
long sides (``MELD_STEP``) and hardly offset along them (``MELD_OFFSET``); a row of three tiles
or more is a meld.

>>> import numpy as np
>>> rects = np.float32([[100, 100, 40, 56, 0], [141, 101, 40, 56, 2], [182, 100, 40, 56, -1],
...                     [300, 300, 40, 56, 45]])
>>> touching_rows(rects)
[[0, 1, 2]]
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from okey import Rules, Tile
from vision.adapt import hulls
from vision.crops import upright_rect
from vision.decode import decode
from vision.errors import NothingFoundError
from vision.types import Box, Recognition, TileReading

MELD_ANGLE = 20.0  # degrees two tiles of one row may differ in their turn
MELD_STEP = (
    0.7,
    1.45,
)  # centre to centre across the long sides, in tile widths (touching .. a gap)
MELD_OFFSET = 0.35  # centre offset along the long sides, in tile heights
MELD_MIN = 3  # tiles in a row that make a meld
MIN_CONFIDENCE = 0.3  # a reading below this (a tile mostly covered, a hand) is not seen
# a box whose long side is this many times a whole tile's there (fitted down the picture from
# the photo's boxes) may hold two tiles (a meld's end tile laid partly under the indicator's
# stack, boxed together with it): it is looked at again, zoomed (``look_again_long``)
LONG = 1.35
LONG_MARGIN = 0.5  # the zoomed look's crop: the box's hull and this share of it on each side
# a tile the zoomed look finds beside the one the long box holds lies this share of a tile from
# it or more, is this share of a whole tile long or more and lies along the long box, within
# this many degrees (a sliver of a pile's lower tile, short and across the pile's box, is none)
LONG_APART = 0.4
LONG_PART = 0.7
LONG_TURN = 20.0


class NoTableTilesError(NothingFoundError):
    """A table photo with no tile lying face up that could be read."""


@dataclass(frozen=True)
class Way:
    """A tile read one way up: where its top points in the picture, how likely the way-up model
    makes that way the tile's upright, and the classifier's probabilities read that way."""

    up: float  # degrees in the picture (x right, y down) from the tile's centre to its top
    upright: float  # the way-up model's probability that the tile's top is there
    probs: np.ndarray = field(compare=False, repr=False)


@dataclass(frozen=True)
class TableTile:
    """A tile lying face up on the table."""

    id: int  # position in the photo's reading (a video: the tracker's place)
    tile: Tile
    box: Box
    confidence: float
    quad: tuple[tuple[float, float], ...] | None = None  # turned outline, when known
    role: str = "table"  # "indicator", "meld" or "table"
    meld: int | None = None  # index into ``TableScan.melds``
    # the classifier's probability of each identity (53, index = ``Tile.index``), when known:
    # a video's tracker sums them over the frames that read one spot
    probs: np.ndarray | None = field(default=None, compare=False, repr=False)
    # the tile read each way up its box allows (turned over; a nearly square box also on its
    # sides): a video's tracker reads a pile's tiles all the same way (``read_ways``)
    ways: tuple[Way, ...] = field(default=(), compare=False, repr=False)
    # found by a zoomed look beside another tile in one over-long box (``look_again_long``): a
    # tile of its own, though it lies within the other's reach
    beside: bool = field(default=False, compare=False, repr=False)

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)

    @property
    def size(self) -> float:
        """The tile's long side in pixels (its turned box's, else its box's diagonal share)."""
        if self.quad is not None:
            q = np.asarray(self.quad)
            return float(max(np.hypot(*(q[1] - q[0])), np.hypot(*(q[3] - q[0]))))
        return float(max(self.box[2] - self.box[0], self.box[3] - self.box[1]))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "tile": str(self.tile),
            "box": [round(float(v), 1) for v in self.box],
            "confidence": round(self.confidence, 3),
            "role": self.role,
        }
        if self.quad is not None:
            out["quad"] = [[round(float(x), 1), round(float(y), 1)] for x, y in self.quad]
        if self.meld is not None:
            out["meld"] = self.meld
        return out


@dataclass
class TableScan:
    """What a table photo shows face up."""

    tiles: list[TableTile]
    melds: list[list[int]]  # tile ids of each row of touching tiles, along the row
    rules: Rules
    indicator: Tile | None
    indicator_source: str | None  # "typed", "pile" (the tile on the face-down stacks) or None
    image_size: tuple[int, int]
    unreadable: list[dict[str, Any]] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def seen(self) -> list[Tile]:
        """Every face-up tile, the indicator's included."""
        return [t.tile for t in self.tiles]

    def seen_for_advice(self) -> list[Tile]:
        """The ``seen`` tiles the adviser counts: the indicator is counted by the adviser
        itself, so its one copy is left out."""
        return without_indicator(self.seen, self.indicator)

    def to_dict(self) -> dict[str, Any]:
        by_id = {t.id: t for t in self.tiles}
        return {
            "scene": "table",
            "rules": self.rules.name,
            "seen": [t.to_dict() for t in self.tiles],
            "seen_tiles": [str(t) for t in sorted(self.seen)],
            "melds": [[str(by_id[i].tile) for i in meld] for meld in self.melds],
            "indicator": None if self.indicator is None else str(self.indicator),
            "indicator_source": self.indicator_source,
            "unreadable": self.unreadable,
            "warnings": self.warnings,
            "image_size": list(self.image_size),
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
        }


def without_indicator(seen: list[Tile], indicator: Tile | None) -> list[Tile]:
    """``seen`` less one copy of the indicator.

    >>> [str(t) for t in without_indicator([Tile.parse("R5"), Tile.parse("R5")], Tile.parse("R5"))]
    ['R5']
    """
    out = list(seen)
    if indicator is not None and indicator in out:
        out.remove(indicator)
    return out


def whole_photo_reader(recognizer: Any) -> Any:
    """``recognizer`` as a table is read (the same networks, a spec with the tier stage off,
    ``tiers=False``, and no levelled second reading of wide boxes, ``read_both_ways=False``:
    a tile lying flat under a table camera is not squashed, and the levelled reading of a tile
    lying across kept the wrong identity for whole turns on the rendered games); a profiled
    recogniser keeps its profile around the copy."""
    inner = getattr(recognizer, "recognizer", None)
    if inner is not None and hasattr(recognizer, "profile"):
        wrapped = copy.copy(recognizer)
        wrapped.recognizer = whole_photo_reader(inner)
        return wrapped
    spec = recognizer.spec
    if not getattr(spec, "tiers", False) and not getattr(spec, "read_both_ways", False):
        return recognizer
    plain = copy.copy(recognizer)
    plain.spec = dataclasses.replace(spec, tiers=False, read_both_ways=False)
    return plain


def read_turned(
    recognizer: Any, image_bgr: np.ndarray, ways: bool = False
) -> tuple[Recognition, np.ndarray | None, list[tuple[Way, ...]], list[bool]]:
    """The whole-photo path's reading of a photo, each tile's turned box ``(cx, cy, w, h,
    degrees)`` (None for an upright-box detector), with ``ways`` each tile read every way up
    (``read_ways``; none through a profile, whose reading is its own), and which tiles a
    zoomed look found beside another in one over-long box (``look_again_long``).

    The steps are the recogniser's own (its first look, its second looks, ``_read_photo``);
    they are called here so that the turned boxes, which ``Recognition`` does not carry on this
    path, stay with the tiles."""
    inner = getattr(recognizer, "recognizer", None)
    if inner is not None and hasattr(recognizer, "profile"):
        recognition, turned, _, beside = read_turned(inner, image_bgr)
        none: list[tuple[Way, ...]] = [() for _ in recognition.tiles]
        return recognizer.profile.apply(image_bgr, recognition), turned, none, beside
    spec = recognizer.spec
    if spec.detector_task != "obb" or recognizer.classifier is None:
        recognition = whole_photo_reader(recognizer).recognize(image_bgr)
        return recognition, None, [() for _ in recognition.tiles], [False] * len(recognition.tiles)
    t0 = time.perf_counter()
    boxes, scores, turned = recognizer._detect(image_bgr)
    h, w = image_bgr.shape[:2]
    looks: tuple[str, ...] = ()
    if spec.second_look_small > 0 or spec.second_look_turned:
        det_scale = min(spec.detector_imgsz / h, spec.detector_imgsz / w)
        scores, turned, views = recognizer._second_look(image_bgr, scores, turned, det_scale)
        looks = tuple(v.reason for v in views)
        if views:
            boxes = hulls(turned, (w, h))
    beside = np.zeros(len(scores), bool)
    if turned is not None:
        scores, turned, beside = look_again_long(recognizer, image_bgr, scores, turned)
        if beside.any():
            boxes = hulls(turned, (w, h))
            looks += ("long",)
    t1 = time.perf_counter()
    det_conf = scores.max(axis=1) if len(scores) else np.zeros(0, np.float32)
    tiles, up, index = recognizer._read_photo(image_bgr, boxes, scores, turned, det_conf)
    t2 = time.perf_counter()
    timings = {"detect": (t1 - t0) * 1000, "classify": (t2 - t1) * 1000, "total": (t2 - t0) * 1000}
    found: list[tuple[Way, ...]] = [() for _ in tiles]
    if ways:
        t3 = time.perf_counter()
        read = [k for k, t in enumerate(tiles) if t.unreadable is None]
        each = read_ways(recognizer, image_bgr, turned[index[read]], [tiles[k].probs for k in read])
        for k, w_ in zip(read, each, strict=True):
            found[k] = w_
        timings["ways"] = (time.perf_counter() - t3) * 1000
        timings["total"] += timings["ways"]
    recognition = Recognition(
        tiles=tiles,
        image_size=(w, h),
        timings_ms=timings,
        second_look=looks + (("up",) if up is not None else ()),
    )
    return recognition, turned[index], found, [bool(v) for v in beside[index]]


def look_again_long(
    recognizer: Any, image_bgr: np.ndarray, scores: np.ndarray, turned: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The detector's turned boxes and, for each over-long one (its long side ``LONG`` times a
    whole tile's there or more), the tiles a second look finds beside the one it boxes: the
    detector run on a zoomed crop round it (its hull and ``LONG_MARGIN`` of it each side).  A
    meld's end tile laid partly under the indicator's stack is boxed together with the
    indicator at the photo's scale, apart when zoomed.  The zoomed look's box nearest the long
    box's centre is the tile it boxes (the long box is kept: a video's tracker follows it); the
    others in the long box (centres inside it, ``LONG_APART`` of a tile or more from that one,
    ``LONG_PART`` of a tile long or more, lying along it within ``LONG_TURN``) are added,
    marked in the mask returned (a video's tracker counts them as tiles of their own, though
    they lie within the long box's reach).  About one frame in twenty of the rendered games
    has an over-long box: a detector run more for each.  A whole tile's
    size at each box is fitted down the picture from the photo's boxes
    (``vision.table_tracker.usual_sizes``: a slanted camera sees far tiles smaller)."""
    from vision.table_tracker import usual_sizes

    beside = np.zeros(len(turned), bool)
    if len(turned) < 3:
        return scores, turned, beside
    h = image_bgr.shape[0]
    longs = np.maximum(turned[:, 2], turned[:, 3]).astype(float)
    usual = usual_sizes(
        [((float(r[0]), float(r[1])), float(n)) for r, n in zip(turned, longs, strict=True)], h
    )
    add_s, add_t = [], []
    for i, rect in enumerate(turned):
        if longs[i] >= LONG * usual[i]:
            found = _beside(recognizer, image_bgr, rect, float(usual[i]))
            if found is not None:
                add_s.append(found[0])
                add_t.append(found[1])
    if not add_t:
        return scores, turned, beside
    more_t = np.concatenate(add_t).astype(turned.dtype)
    out_t = np.concatenate([turned, more_t])
    out_s = np.concatenate([scores, np.concatenate(add_s).astype(scores.dtype)])
    return out_s, out_t, np.concatenate([beside, np.ones(len(more_t), bool)])


def _beside(
    recognizer: Any, image_bgr: np.ndarray, rect: np.ndarray, usual: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """The tiles a zoomed look finds in one over-long box ``rect`` beside the one it boxes
    (scores, turned boxes in the photo's pixels; ``look_again_long``), or None."""
    h, w = image_bgr.shape[:2]
    corners = np.asarray(quad_of(rect))
    (x1, y1), (x2, y2) = corners.min(axis=0), corners.max(axis=0)
    mx, my = LONG_MARGIN * (x2 - x1), LONG_MARGIN * (y2 - y1)
    left, top = int(max(0, x1 - mx)), int(max(0, y1 - my))
    right, bottom = int(min(w, x2 + mx)), int(min(h, y2 + my))
    if right - left < 8 or bottom - top < 8:
        return None
    _, scores, found = recognizer._detect(np.ascontiguousarray(image_bgr[top:bottom, left:right]))
    if found is None or len(found) < 2:
        return None
    found = found.copy()
    found[:, 0] += left
    found[:, 1] += top
    cx, cy, bw, bh, angle = upright_rect(tuple(float(v) for v in rect))
    a = math.radians(angle)
    across = np.array([math.cos(a), math.sin(a)])  # along the short side
    along = np.array([-math.sin(a), math.cos(a)])  # along the long side
    inside = []
    for j, f in enumerate(found):
        d = np.array([f[0] - cx, f[1] - cy])
        if abs(float(d @ along)) <= bh / 2 and abs(float(d @ across)) <= bw / 2:
            inside.append(j)
    if len(inside) < 2:
        return None
    # the tile the long box boxes: the zoomed look's box nearest its centre
    own = min(inside, key=lambda j: math.hypot(found[j, 0] - cx, found[j, 1] - cy))
    more = [
        j
        for j in inside
        if j != own
        and math.dist(found[j, :2], found[own, :2]) >= LONG_APART * usual
        and max(found[j, 2], found[j, 3]) >= LONG_PART * usual
        and _lies_along(found[j], angle)
    ]
    if not more:
        return None
    return scores[more], found[more]


def _lies_along(rect: np.ndarray, angle: float) -> bool:
    """Whether a turned box's long side lies within ``LONG_TURN`` degrees of a stood box's
    (``upright_rect``'s ``angle``)."""
    turn = abs(upright_rect(tuple(float(v) for v in rect))[4] - angle) % 180.0
    return min(turn, 180.0 - turn) <= LONG_TURN


def read_ways(
    recognizer: Any, image_bgr: np.ndarray, turned: np.ndarray, probs: Sequence[np.ndarray]
) -> list[tuple[Way, ...]]:
    """Each tile (turned box ``turned[i]``, read ``probs[i]``) read every way up its box allows:
    stood by its smaller turn and turned over, and a box nearly square (the manifest's
    ``up_each_square``: its long side no longer tells which way the tile stands) also on its two
    sides.  Each way carries where the tile's top points in the picture, the way-up model's
    probability of that way (from the stood crop) and the classifier's probabilities read that
    way, with the colours of ``probs`` (a tile's colour is read from its ink, ``colour_model``;
    the way up changes the number it shows, not its colour).  Empty without a way-up model."""
    way_up = getattr(recognizer, "way_up", None)
    if way_up is None or recognizer.classifier is None or not len(turned):
        return [() for _ in range(len(turned))]
    from vision.crops import CROP_PAD, straight_crop
    from vision.recognizer import NUM_CLASSES, to_tensor

    spec = recognizer.spec
    stood = [straight_crop(image_bgr, tuple(r), spec.classifier_imgsz, CROP_PAD) for r in turned]
    up = way_up.turns(stood)
    # the way the tile was read already (``Recognizer._read``): the way-up model's where it is
    # sure (``up_each_flip``), else stood, unless the tile was read more ways (the surest kept:
    # which, is not known here)
    each = dict(recognizer._turns_each(turned))
    known = {i: 0 for i in range(len(turned)) if i not in each}
    if spec.up_each_flip is not None:
        known.update({i: (-k) % 4 for i, k in recognizer._sure_turns(stood, each)})
    crops, rows = [], []
    for i, r in enumerate(turned):
        _, _, w, h, _ = upright_rect(tuple(float(v) for v in r))
        for k in (0, 1, 2, 3) if w >= spec.up_each_square * h else (0, 2):
            if known.get(i) != k:
                crops.append(np.ascontiguousarray(np.rot90(stood[i], k)))
            rows.append((i, k))
    read = iter(())
    if crops:
        raw = recognizer.classifier(to_tensor(crops))[:, :NUM_CLASSES].astype(np.float64)
        read = iter(raw / np.maximum(raw.sum(axis=1, keepdims=True), 1e-12))
    out: list[list[Way]] = [[] for _ in range(len(turned))]
    for i, k in rows:
        reading = np.asarray(probs[i], np.float64)
        p = reading if known.get(i) == k else with_colours(next(read), reading)
        out[i].append(
            Way(
                up=top_direction(turned[i], k),
                upright=float(up[i, (-k) % 4]),  # crop k is upright when the stood one is -k
                probs=np.asarray(p, np.float32),
            )
        )
    return [tuple(w) for w in out]


def top_direction(rect: np.ndarray | Sequence[float], k: int = 0) -> float:
    """Where a tile's top points in the picture (degrees, x right, y down) when its turned box
    ``(cx, cy, w, h, degrees)`` is stood by its smaller turn (``straight_crop``) and the crop then
    turned ``k`` quarter turns counter-clockwise (``np.rot90``).

    >>> round(top_direction((50, 50, 20, 40, 0)))  # standing: its top up the picture
    -90
    >>> round(top_direction((50, 50, 20, 40, 0), 2))  # turned over: down
    90
    """
    _, _, _, _, angle = upright_rect(tuple(float(v) for v in rect))
    # the crop's top, turned back k quarter turns clockwise (x right, y down), then back from
    # the stood crop into the picture (the stand-up turn's transpose)
    x, y = 0.0, -1.0
    for _ in range(k % 4):
        x, y = -y, x
    a = math.radians(angle)
    c, s = math.cos(a), math.sin(a)
    return math.degrees(math.atan2(s * x + c * y, c * x - s * y))


def with_colours(probs: np.ndarray, reading: np.ndarray) -> np.ndarray:
    """``probs`` with each colour's share of the tiles other than the false jokers made
    ``reading``'s (the numbers' proportions within a colour, and the false jokers', kept).

    >>> red = np.r_[np.eye(4)[0].repeat(13) / 13, 0]
    >>> p = with_colours(np.r_[np.full(52, 1 / 52) * 0.9, 0.1], red)
    >>> round(float(p[:13].sum()), 3), round(float(p[13:52].sum()), 3), round(float(p[52]), 3)
    (0.9, 0.0, 0.1)
    """
    n = 4 * 13
    out = np.array(probs, np.float64, copy=True)
    blocks = out[:n].reshape(4, 13)
    have = blocks.sum(axis=1)
    want = np.asarray(reading, np.float64)[:n].reshape(4, 13).sum(axis=1)
    if want.sum() <= 1e-9 or have.sum() <= 1e-9:
        return out
    want = want / want.sum() * have.sum()
    for c in range(4):
        if have[c] > 1e-12:
            blocks[c] *= want[c] / have[c]
        else:  # nothing read in this colour this way: its numbers as the way reads the others
            blocks[c] = want[c] * blocks.sum(axis=0) / max(blocks.sum(), 1e-12)
    out[:n] = blocks.reshape(-1)
    return out


def quad_of(rect: np.ndarray | tuple[float, ...]) -> tuple[tuple[float, float], ...]:
    """The four corners of a turned box, in OpenCV's order."""
    import cv2

    cx, cy, w, h, angle = (float(v) for v in rect)
    return tuple((float(x), float(y)) for x, y in cv2.boxPoints(((cx, cy), (w, h), angle)))


def touching_rows(rects: np.ndarray, minimum: int = MELD_MIN) -> list[list[int]]:
    """Rows of tiles lying side by side (turned boxes ``(cx, cy, w, h, degrees)``), each along
    the row, of ``minimum`` tiles or more; the longest first."""
    n = len(rects)
    if n < minimum:
        return []
    stood = [upright_rect(tuple(float(v) for v in r)) for r in rects]
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if _side_by_side(stood[i], stood[j]):
                parent[root(i)] = root(j)
    rows: dict[int, list[int]] = {}
    for i in range(n):
        rows.setdefault(root(i), []).append(i)
    out = []
    for members in rows.values():
        if len(members) < minimum:
            continue
        angle = math.radians(float(np.mean([stood[i][4] for i in members])))
        across = np.array([math.cos(angle), math.sin(angle)])
        out.append(sorted(members, key=lambda i: float(np.dot(stood[i][:2], across))))
    return sorted(out, key=lambda m: (-len(m), m[0]))


def _side_by_side(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    turn = abs(a[4] - b[4]) % 180.0
    if min(turn, 180.0 - turn) > MELD_ANGLE:
        return False
    width, height = (a[2] + b[2]) / 2, (a[3] + b[3]) / 2
    angle = math.radians(a[4])
    across = np.array([math.cos(angle), math.sin(angle)])  # along the short side
    along = np.array([-math.sin(angle), math.cos(angle)])  # along the long side
    step = np.array([b[0] - a[0], b[1] - a[1]])
    gap = abs(float(step @ across)) / max(width, 1e-6)
    offset = abs(float(step @ along)) / max(height, 1e-6)
    return MELD_STEP[0] <= gap <= MELD_STEP[1] and offset <= MELD_OFFSET


class TableReader:
    """Reads table photos with a recogniser (loaded once; the tier stage left off)."""

    def __init__(self, recognizer: Any, ways: bool = True) -> None:
        self.recognizer = whole_photo_reader(recognizer)
        # each tile also read every way up (``read_ways``): a video's tracker reads a pile's
        # tiles all one way
        self.ways = ways

    @classmethod
    def default(
        cls, backend: str | None = None, profile: Any = None, ways: bool = True
    ) -> TableReader:
        from vision.profiles import with_profile
        from vision.recognizer import Recognizer

        return cls(with_profile(Recognizer.default(backend), profile), ways=ways)

    def read(
        self,
        image_bgr: np.ndarray,
        *,
        indicator: Tile | None = None,
        rules: Rules | None = None,
        require_tiles: bool = True,
    ) -> TableScan:
        """The face-up tiles of a table photo (``NoTableTilesError`` when there are none and
        ``require_tiles``; a video frame may show none)."""
        from vision.pipeline import as_bgr

        image_bgr = as_bgr(image_bgr)
        rules = rules or Rules.classic()
        t0 = time.perf_counter()
        recognition, turned, ways, beside = read_turned(self.recognizer, image_bgr, self.ways)
        t1 = time.perf_counter()
        scan = assemble(
            recognition, turned, indicator=indicator, rules=rules, ways=ways, beside=beside
        )
        scan.timings_ms = {**recognition.timings_ms, "table": (time.perf_counter() - t1) * 1000}
        scan.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        if require_tiles and not scan.tiles:
            raise NoTableTilesError("no tile lying face up found in the image")
        return scan


def assemble(
    recognition: Recognition,
    turned: np.ndarray | None,
    *,
    indicator: Tile | None,
    rules: Rules,
    ways: Sequence[tuple[Way, ...]] | None = None,
    beside: Sequence[bool] | None = None,
) -> TableScan:
    """A table scan from the recogniser's tiles: unreadable ones set apart, the rest read
    jointly (at most two copies of a tile, two false jokers), rows of touching tiles as melds,
    and the indicator's tile named."""
    readings: list[tuple[int, TileReading]] = []
    unreadable: list[dict[str, Any]] = []
    for i, t in enumerate(recognition.tiles):
        if t.unreadable is not None:
            unreadable.append({"box": [round(v, 1) for v in t.box], "reason": t.unreadable})
        elif t.confidence >= MIN_CONFIDENCE:
            readings.append((i, t))
    read: list[Tile] = []
    if readings:
        probs = np.stack([t.probs for _, t in readings])
        read = decode(probs, on_rack=[False] * len(readings), rules=rules).tiles
    tiles = [
        TableTile(
            id=k,
            tile=tile,
            box=t.box,
            confidence=float(t.probs[tile.index] * t.detection_confidence),
            quad=None if turned is None else quad_of(turned[i]),
            probs=np.asarray(t.probs, np.float32),
            ways=() if ways is None else ways[i],
            beside=False if beside is None else bool(beside[i]),
        )
        for k, ((i, t), tile) in enumerate(zip(readings, read, strict=True))
    ]
    melds: list[list[int]] = []
    if turned is not None and tiles:
        melds = touching_rows(np.stack([turned[i] for i, _ in readings]))
    for m, meld in enumerate(melds):
        for k in meld:
            tiles[k] = dataclasses.replace(tiles[k], role="meld", meld=m)
    source = None
    warnings = []
    if indicator is not None:
        source = "typed"
        mine = [t for t in tiles if t.tile == indicator and t.meld is None]
        if mine:
            best = max(mine, key=lambda t: t.confidence)
            tiles[best.id] = dataclasses.replace(best, role="indicator")
    else:
        found = _on_the_stacks(tiles, recognition)
        if found is not None:
            tiles[found.id] = dataclasses.replace(found, role="indicator")
            indicator, source = found.tile, "pile"
        else:
            warnings.append("no indicator: type it (--indicator) to name its tile")
    counts = Counter(t.tile for t in tiles)
    extra = sorted(str(t) for t, n in counts.items() if n > 2)
    if extra:
        warnings.append("more than two copies read of " + ", ".join(extra))
    return TableScan(
        tiles=tiles,
        melds=melds,
        rules=rules,
        indicator=indicator,
        indicator_source=source,
        image_size=recognition.image_size,
        unreadable=unreadable,
        warnings=warnings,
    )


def _on_the_stacks(tiles: list[TableTile], recognition: Recognition) -> TableTile | None:
    """The one face-up tile lying on or beside the face-down stacks (tiles the recogniser marks
    ``unreadable == "face down"``), not in a meld; None when the photo shows no such tile."""
    backs = [t for t in recognition.tiles if t.unreadable == "face down"]
    if not backs:
        return None
    near = []
    for t in tiles:
        if t.meld is not None:
            continue
        reach = 1.6 * t.size
        if any(math.dist(t.centre, b.centre) <= reach for b in backs):
            near.append(t)
    return near[0] if len(near) == 1 else None


def draw_table(image_bgr: np.ndarray, scan: TableScan, lines: Sequence[str] = ()) -> np.ndarray:
    """The photo with each seen tile outlined and named (melds in one colour each, the
    indicator in magenta), and ``lines`` (a header: the seen tiles, the waits' copies left) in a
    dark band above it, so nothing on the table is hidden."""
    import cv2

    out = image_bgr.copy()
    palette = [(60, 200, 60), (255, 160, 40), (40, 200, 255), (200, 80, 255), (80, 255, 200)]
    for t in scan.tiles:
        if t.role == "indicator":
            colour = (255, 0, 255)
        elif t.meld is not None:
            colour = palette[t.meld % len(palette)]
        else:
            colour = (230, 230, 230)
        if t.quad is not None:
            pts = np.int32(np.round(np.asarray(t.quad)))
            cv2.polylines(out, [pts], True, colour, 2, cv2.LINE_AA)
        else:
            x1, y1, x2, y2 = (int(round(v)) for v in t.box)
            cv2.rectangle(out, (x1, y1), (x2, y2), colour, 2)
        x, y = int(t.box[0]), max(12, int(t.box[1]) - 4)
        cv2.putText(out, str(t.tile), (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3)
        cv2.putText(out, str(t.tile), (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1)
    if not lines:
        return out
    band = np.full((20 * len(lines) + 8, out.shape[1], 3), 24, np.uint8)
    for i, text in enumerate(lines):
        cv2.putText(band, text, (8, 20 * i + 19), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (240, 240, 240), 1)
    return np.vstack([band, out])
