"""Rack geometry: a rack's tiers as quadrilaterals, each straightened into an upright strip.

chesscog's order applied to a rack: solve the geometry first, then read.  A first look (the
whole-photo detector) says roughly where tiles stand and how they are turned; that is enough to
find the tiers, though not to cut good crops from (a box half a tile off, or spanning two tiers):

1. **The rack's up** is the tiles' dominant axis (``vision.adapt.photo_angle``; which end is up is
   decided later by reading both ways).  In the frame it stands upright, the tiers are lines of
   tile centres across it (``vision.layout.lay_out``'s line finder, up to ``MAX_TIERS``), made of
   tiles that stand along that axis; tiles on no such line lie on the table.
2. **A tier's quadrilateral**: lines fitted through its tiles' top and bottom edge midpoints,
   closed by its first and last tiles' side edges.  Under perspective the tiles' sides converge
   and the quadrilateral follows them.
3. **The strip**: the homography that maps the quadrilateral to an upright rectangle
   ``STRIP_TILE`` pixels high, its width set so the tiles keep their own width to height
   (:func:`strip_for`), extended ``END_MARGIN`` tile widths beyond both ends (far tiles that the
   first look missed lie there: in the strip they are as large as the near ones) and
   ``SIDE_MARGIN`` of a tile above and below (a first look's boxes may be off by that much).
4. In the strip the detector looks again (:func:`mosaic` packs every strip's pieces into the
   detector's square), and its boxes, mapped back by the homography, are the tiles; a gap of a
   tile's width or more between two of them is an empty slot, or a tile the detector missed
   (:func:`gap_slots`: the classifier's "not a tile" decides).

The tiers' tiles then become the rack's rows (``tier_layout``): a rack photographed turned 90 or
180 degrees gives the same rows, and a third tier is a third row.

>>> # two tiers of three touching tiles (20 x 28 px) and a tile lying apart, turned 30 degrees
>>> tiles = [(30 + 20 * k, 40 + 40 * r) for r in range(2) for k in range(3)] + [(150, 160)]
>>> turned = np.float32([[x, y, 20, 28, 0] for x, y in tiles])
>>> turned[-1, 4] = 30
>>> tiers, up = find_tiers(turned)
>>> [t.members for t in tiers], bool(up[1] < -0.99)
([(0, 1, 2), (3, 4, 5)], True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vision.adapt import photo_angle

# A tile's height in a straightened strip (pixels): the detector's input scale for the strips.
STRIP_TILE = 64
# How far a strip reaches beyond its tier: above and below, a share of a tile's height; at each
# end, this many tile widths (clipped where the homography stretches past ``MAX_STRETCH``).
SIDE_MARGIN = 0.3
END_MARGIN = 4.0
MAX_STRETCH = 2.5
# A tile's width to its height (Okey and Rummikub tiles alike, 0.70-0.75): a tier's height comes
# from its tiles' widths, which a first look gets right more often than their heights.
TILE_ASPECT = 0.72
# At most this many tiers (a three-tier Rummikub stand); an Okey rack has two.
MAX_TIERS = 3
# A tier's line through its tiles' tops: a top lies on it within this share of the tile's height,
# the line is less steep than this across the tiles' axis (degrees: an oblique rack's tiers slope
# as they recede), bridges at most this many tile widths of empty rack, and the tiers of one
# rack are parallel within this many degrees.
TOP_TOLERANCE = 0.12
MAX_TIER_SLOPE = 40.0
MAX_TIER_GAP = 6.0
PARALLEL_TIERS = 15.0
# A lone standing tile is a tier of its own when its top is this many tile heights from the
# longest tier's line and its width this share of that tier's tiles'.
LONE_TIER = (0.45, 1.7)
LONE_SCALE = (0.8, 1.25)
# A tile belongs to a tier only when its own axis is within this many degrees of the rack's up.
AXIS_TOLERANCE = 25.0
# A detection in a strip belongs to its tier when its centre lies within this share of the strip
# tile's height from the tier's middle line and it is at least this share of a tile high.
BAND = 0.35
MIN_HEIGHT = 0.55
# The photo's tiles must agree on their axis at least this much for the rack to have an up.
MIN_AGREE = 0.6
# A gap between two of a tier's tiles at least this many tile widths wide is looked at as a slot.
SLOT_GAP = 0.8


@dataclass(frozen=True)
class Tier:
    """One tier of a rack: its quadrilateral in the photo and the first look's tiles on it."""

    quad: np.ndarray  # (4, 2) float64: top-left, top-right, bottom-right, bottom-left, photo px
    members: tuple[int, ...]  # indices into the first look's boxes, in order along the tier


@dataclass(frozen=True)
class Strip:
    """A tier straightened: ``to_strip`` (3 x 3) maps photo pixels to strip pixels.

    The tier's quadrilateral maps to ``x`` in ``[left, left + length]`` and ``y`` in
    ``[top, top + STRIP_TILE]``; the strip image is ``size`` = (width, height) pixels."""

    tier: int
    to_strip: np.ndarray
    size: tuple[int, int]
    left: float
    length: float
    top: float
    tile_width: float  # a tile's width in the strip (pixels)

    @property
    def to_photo(self) -> np.ndarray:
        return np.linalg.inv(self.to_strip)

    def warp(self, image: np.ndarray) -> np.ndarray:
        import cv2

        return cv2.warpPerspective(
            image,
            self.to_strip,
            self.size,
            flags=cv2.INTER_AREA if _shrinks(self.to_strip, self.size) else cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(114, 114, 114),
        )


def _shrinks(matrix: np.ndarray, size: tuple[int, int]) -> bool:
    """Whether the warp shrinks the photo at the strip's middle (area averaging then)."""
    inverse = np.linalg.inv(matrix)
    mid = np.float64([[size[0] / 2, size[1] / 2], [size[0] / 2 + 1, size[1] / 2]])
    a, b = project(inverse, mid)
    return float(np.hypot(*(b - a))) > 1.0


def project(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points ``(n, 2)`` through a 3 x 3 homography."""
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    out = np.c_[pts, np.ones(len(pts))] @ np.asarray(matrix, np.float64).T
    return out[:, :2] / out[:, 2:3]


def tile_axes(turned: np.ndarray, up: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each turned box's (cx, cy, w, h, degrees) axis nearest ``up`` (unit vectors pointing up),
    its height along that axis and its width across it."""
    rad = np.radians(turned[:, 4].astype(np.float64))
    along_w = np.stack([np.cos(rad), np.sin(rad)], axis=1)  # the box's w side
    along_h = np.stack([-np.sin(rad), np.cos(rad)], axis=1)  # its h side
    use_h = np.abs(along_h @ up) >= np.abs(along_w @ up)
    axis = np.where(use_h[:, None], along_h, along_w)
    axis *= np.sign(axis @ up)[:, None] + (axis @ up == 0)[:, None]
    height = np.where(use_h, turned[:, 3], turned[:, 2]).astype(np.float64)
    width = np.where(use_h, turned[:, 2], turned[:, 3]).astype(np.float64)
    return axis, height, width


def rack_up(turned: np.ndarray) -> np.ndarray | None:
    """The rack's up as a unit vector in photo pixels (y grows down), from the tiles' long axes;
    of its two senses the one nearer the photo's up.  None when the tiles disagree."""
    angle, agree = photo_angle(turned)
    if len(turned) < 2 or agree < MIN_AGREE:
        return None
    # photo_angle is the turn that stands the tiles up; their up axis is the photo's up turned back
    rad = math.radians(angle)
    up = np.array([math.sin(rad), -math.cos(rad)])
    return up if up[1] < 0 or (up[1] == 0 and up[0] < 0) else -up


def find_tiers(turned: np.ndarray, up: np.ndarray | None = None) -> tuple[list[Tier], np.ndarray]:
    """The tiers among the first look's turned boxes, top to bottom, and the rack's up vector.

    A tier is a line through its tiles' **top edges** (:func:`top_lines`): on a tiered rack the
    tier in front hides the feet of the tiles behind, and a first look's box may reach down into
    the tier below, but the top of a standing tile shows, and its box's top stays on it.  ``up``
    defaults to :func:`rack_up`; with no agreed up there are no tiers."""
    up = rack_up(turned) if up is None else np.asarray(up, np.float64)
    if up is None:
        return [], np.array([0.0, -1.0])
    right = np.array([-up[1], up[0]])
    axis, height, width = tile_axes(turned, up)
    standing = np.degrees(np.arccos(np.clip(axis @ up, -1, 1))) <= AXIS_TOLERANCE
    idx = np.flatnonzero(standing)
    if len(idx) < 2:
        return [], up
    tops = turned[idx, :2].astype(np.float64) + axis[idx] * height[idx, None] / 2
    upright = np.stack([tops @ right, tops @ -up], axis=1)
    lines = top_lines(upright, width[idx])
    lone = _lone_tier(upright, width[idx], lines)
    if lone is not None:
        lines.append(np.array([lone]))
    lines.sort(key=lambda m: float(np.median(upright[m, 1])))
    tiers = []
    for line in lines:
        order = line[np.argsort(upright[line, 0], kind="stable")]
        members = tuple(int(idx[i]) for i in order)
        tiers.append(Tier(tier_quad(turned[list(members)], up), members))
    return tiers, up


def top_lines(tops: np.ndarray, widths: np.ndarray) -> list[np.ndarray]:
    """Lines through tile tops ``(n, 2)`` (the rack's upright frame: x right, y down), longest
    first, at most ``MAX_TIERS``, each of two tiles or more and nearly parallel to the first.

    Every pair of tops proposes a line (less steep than ``MAX_TIER_SLOPE``); a top is on it
    within ``TOP_TOLERANCE`` of its tile's height, and a line never bridges more than
    ``MAX_TIER_GAP`` tile widths of empty rack.  The line with the most tops (then the smallest
    residuals) is refitted, its tops taken, and the search repeats on the rest.

    >>> tops = np.float64([[0, 0], [10, 0.5], [20, 0], [5, 20], [15, 20.5]])
    >>> [m.tolist() for m in top_lines(tops, np.full(5, 10.0))]
    [[0, 1, 2], [3, 4]]
    """
    heights = widths / TILE_ASPECT
    free = np.ones(len(tops), bool)
    found: list[np.ndarray] = []
    slope_limit = math.tan(math.radians(MAX_TIER_SLOPE))
    first_direction: np.ndarray | None = None
    while free.sum() >= 2 and len(found) < MAX_TIERS:
        pool = np.flatnonzero(free)
        best: tuple[tuple[int, float], np.ndarray] | None = None
        for a_pos, i in enumerate(pool):
            for j in pool[a_pos + 1 :]:
                d = tops[j] - tops[i]
                if abs(d[0]) < 1e-9 or abs(d[1] / d[0]) > slope_limit:
                    continue
                direction = d / np.linalg.norm(d)
                if first_direction is not None and abs(
                    float(direction @ first_direction)
                ) < math.cos(math.radians(PARALLEL_TIERS)):
                    continue
                members = _on_line(tops, heights, pool, tops[i], direction)
                if len(members) < 2:
                    continue
                key = (len(members), -_residual(tops, heights, members, tops[i], direction))
                if best is None or key > best[0]:
                    best = (key, members)
        if best is None:
            break
        members = best[1]
        point, direction = _fit(tops[members])
        refit = _on_line(tops, heights, pool, point, direction)
        if len(refit) >= len(members):
            members = refit
        if first_direction is None:
            first_direction = direction if direction[0] >= 0 else -direction
        found.append(members)
        free[members] = False
    return found


def _on_line(
    tops: np.ndarray,
    heights: np.ndarray,
    pool: np.ndarray,
    point: np.ndarray,
    direction: np.ndarray,
) -> np.ndarray:
    """The tops of ``pool`` on a line, as one chain: the longest run along it with no gap wider
    than ``MAX_TIER_GAP`` tile widths."""
    normal = np.array([-direction[1], direction[0]])
    off = np.abs((tops[pool] - point) @ normal)
    near = pool[off <= TOP_TOLERANCE * heights[pool]]
    if len(near) < 2:
        return near
    along = (tops[near] - point) @ direction
    order = np.argsort(along)
    near, along = near[order], along[order]
    widths = heights[near] * TILE_ASPECT
    breaks = np.flatnonzero(np.diff(along) > MAX_TIER_GAP * (widths[1:] + widths[:-1]) / 2)
    chains = np.split(near, breaks + 1)
    return max(chains, key=len)


def _residual(
    tops: np.ndarray, heights: np.ndarray, members: np.ndarray, point: np.ndarray, d: np.ndarray
) -> float:
    normal = np.array([-d[1], d[0]])
    return float(np.sum(np.abs((tops[members] - point) @ normal) / heights[members]))


def _lone_tier(tops: np.ndarray, widths: np.ndarray, lines: list[np.ndarray]) -> int | None:
    """The one standing tile on no line that stands where another tier would be: beside the
    longest tier (within its ends and ``MAX_TIER_GAP`` tile widths), its top ``LONE_TIER``
    tile heights above or below that tier's line, as large as its tiles (``LONE_SCALE``), and
    the only such tile (two candidates: which is the rack's is a guess)."""
    if not lines or len(lines) >= MAX_TIERS:
        return None
    main = max(lines, key=len)
    point, direction = _fit(tops[main])
    normal = np.array([-direction[1], direction[0]])
    width = float(np.median(widths[main]))
    along = (tops[main] - point) @ direction
    taken = np.concatenate(lines)
    found = []
    for i in np.setdiff1d(np.arange(len(tops)), taken):
        offset = abs(float((tops[i] - point) @ normal)) / (width / TILE_ASPECT)
        position = float((tops[i] - point) @ direction)
        reach = MAX_TIER_GAP * width
        if (
            LONE_TIER[0] <= offset <= LONE_TIER[1]
            and along.min() - reach <= position <= along.max() + reach
            and LONE_SCALE[0] <= widths[i] / width <= LONE_SCALE[1]
        ):
            found.append(int(i))
    return found[0] if len(found) == 1 else None


def tier_quad(turned: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The quadrilateral of one tier's tiles (turned boxes in order along the tier): the line
    through their tops, a tile's height (from its width: ``TILE_ASPECT``) below it, closed by
    the first and last tiles' sides along the tiles' mean axis near each end."""
    axis, height, width = tile_axes(turned, up)
    centres = turned[:, :2].astype(np.float64)
    tops = centres + axis * height[:, None] / 2
    n = len(turned)
    ends = []
    for end, sense in ((0, -1.0), (n - 1, 1.0)):
        near = slice(0, min(n, 3)) if end == 0 else slice(max(0, n - 3), n)
        a = axis[near].mean(axis=0)
        a /= max(float(np.linalg.norm(a)), 1e-9)
        side = np.array([-a[1], a[0]])
        ends.append((tops[end] + sense * side * width[end] / 2, a, width[end] / TILE_ASPECT))
    top_line = (tops[0], np.array([-axis[0, 1], axis[0, 0]])) if n == 1 else _fit(tops)
    (pl, al, hl), (pr, ar, hr) = ends
    top_left, top_right = _meet(top_line, (pl, al)), _meet(top_line, (pr, ar))
    return np.array([top_left, top_right, top_right - ar * hr, top_left - al * hl])


def _fit(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The total-least-squares line through points: (a point on it, its unit direction)."""
    mean = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - mean)
    return mean, vt[0]


def _meet(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Where two lines (point, direction) cross; a's point when they are parallel."""
    (p, d), (q, e) = a, b
    det = d[0] * -e[1] + e[0] * d[1]
    if abs(det) < 1e-9:
        return p
    t = ((q - p)[0] * -e[1] + e[0] * (q - p)[1]) / det
    return p + t * d


def strip_for(
    index: int,
    tier: Tier,
    turned: np.ndarray,
    up: np.ndarray,
    image_size: tuple[int, int],
) -> Strip:
    """The straightening of one tier (see the module's step 3)."""
    import cv2

    quad = tier.quad
    members = turned[list(tier.members)]
    _, height, width = tile_axes(members, up)
    aspect = float(np.median(width / np.maximum(height, 1e-6)))
    src = quad.astype(np.float32)

    def homography(length: float, left: float, top: float) -> np.ndarray:
        dst = np.float32(
            [
                [left, top],
                [left + length, top],
                [left + length, top + STRIP_TILE],
                [left, top + STRIP_TILE],
            ]
        )
        return cv2.getPerspectiveTransform(src, dst).astype(np.float64)

    # first guess the length from the quad's sides, then set it so the tiles keep their aspect
    across = (np.linalg.norm(quad[3] - quad[0]) + np.linalg.norm(quad[2] - quad[1])) / 2
    along = (np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3])) / 2
    length = max(STRIP_TILE * along / max(across, 1e-6), 1.0)
    h0 = homography(length, 0.0, 0.0)
    centres = members[:, :2].astype(np.float64)
    right = np.array([-up[1], up[0]])
    ends = np.concatenate(
        [centres - right * width[:, None] / 2, centres + right * width[:, None] / 2]
    )
    mapped = project(h0, ends)
    n = len(members)
    widths = np.abs(mapped[n:, 0] - mapped[:n, 0])
    tile_width = STRIP_TILE * aspect
    measured = float(np.median(widths))
    if measured > 1e-6:
        length *= tile_width / measured
    side = SIDE_MARGIN * STRIP_TILE
    left = _end_margin(homography(length, 0.0, 0.0), length, tile_width, image_size, -1)
    extra = _end_margin(homography(length, 0.0, 0.0), length, tile_width, image_size, 1)
    matrix = homography(length, left, side)
    size = (int(math.ceil(left + length + extra)), int(math.ceil(STRIP_TILE + 2 * side)))
    return Strip(index, matrix, size, left, length, side, tile_width)


def _end_margin(
    matrix: np.ndarray, length: float, tile_width: float, image_size: tuple[int, int], sense: int
) -> float:
    """How far (strip pixels) a strip may reach beyond one end of its tier: up to
    ``END_MARGIN`` tile widths, less where the photo ends or the homography stretches a tile
    past ``MAX_STRETCH`` of its size at the tier's end."""
    inverse = np.linalg.inv(matrix)
    end = length if sense > 0 else 0.0
    mid = STRIP_TILE / 2

    def scale(x: float) -> float:
        a, b = project(inverse, np.float64([[x, mid], [x + 1, mid]]))
        return float(np.hypot(*(b - a)))

    base = scale(end)
    w, h = image_size
    reach = 0.0
    steps = int(END_MARGIN * 4)
    for k in range(1, steps + 1):
        x = end + sense * k * tile_width / 4
        s = scale(x)
        if not (base / MAX_STRETCH <= s <= base * MAX_STRETCH):
            break
        px, py = project(inverse, np.float64([[x, mid]]))[0]
        if not (0 <= px <= w and 0 <= py <= h):
            break
        reach = k * tile_width / 4
    return reach


def gap_slots(xs: Sequence[tuple[float, float]], tile_width: float, lo: float, hi: float):
    """Places (x1, x2) along a strip worth a look between tiles found at ``xs`` (sorted
    (x1, x2) pairs): every whole tile width of a gap at least ``SLOT_GAP`` wide, inside
    ``[lo, hi]``.

    >>> gap_slots([(0, 10), (30, 40)], 10, 0, 40)
    [(10.0, 20.0), (20.0, 30.0)]
    """
    out: list[tuple[float, float]] = []
    for (_, a), (b, _) in zip(xs, xs[1:], strict=False):
        gap = b - a
        if gap < SLOT_GAP * tile_width:
            continue
        k = max(1, int(round(gap / tile_width)))
        step = gap / k
        out += [(a + j * step, a + (j + 1) * step) for j in range(k) if lo <= a + j * step < hi]
    return [(float(x1), float(x2)) for x1, x2 in out]


def in_band(box: Sequence[float], strip: Strip) -> bool:
    """Whether a box found in a strip is one of its tier's tiles (centre on the tier's middle
    line, tall enough), not a neighbouring tier's tile showing at the strip's edge."""
    x1, y1, x2, y2 = box
    middle = strip.top + STRIP_TILE / 2
    return abs((y1 + y2) / 2 - middle) <= BAND * STRIP_TILE and (y2 - y1) >= MIN_HEIGHT * STRIP_TILE


def tile_quad(strip: Strip, x1: float, x2: float) -> np.ndarray:
    """The photo quadrilateral (top-left, top-right, bottom-right, bottom-left) of a tile at
    ``[x1, x2]`` along a strip, as tall as the tier."""
    top, bottom = strip.top, strip.top + STRIP_TILE
    return project(strip.to_photo, np.float64([[x1, top], [x2, top], [x2, bottom], [x1, bottom]]))
