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
>>> sorted(t.members for t in tiers), bool(up[1] < -0.99)
([(0, 1, 2), (3, 4, 5)], True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.adapt import box_corners

# A tile's height in a straightened strip (pixels): the detector's input scale for the strips.
STRIP_TILE = 48
# How far a strip reaches beyond its tier: above and below, a share of a tile's height; at each
# end, this many tile widths (clipped where the homography stretches past ``MAX_STRETCH``).
SIDE_MARGIN = 0.3
END_MARGIN = 3.0
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
MAX_TIER_SLOPE = 30.0
MAX_TIER_GAP = 6.0
PARALLEL_TIERS = 15.0
# Two lines of tops holding this many tiles each say how the tiles shrink along the rack, and
# the pencil of lines the tiers lie on: their spacing shrinks along the rack as the tiles do,
# within this factor.
PERSPECTIVE_TILES = 3
PENCIL_RATIO = 1.5
# Standing tiles on no line of tops, each a candidate tier of its own (at most this many).
MAX_LONE = 3
# Candidate lines closer than this share of a tile's height are one; a tier's tiles are found
# again in its strip, and two tiers' strips share at most this share of their tiles.
SAME_LINE = 0.3
SHARED_TILES = 0.5
# A strip's tile counts towards its tier by its score, less as its top lies away from the strip's
# top line (by this share of a tile's height, none): a line half a tile off a tier still shows
# the detector tiles, cut across two tiers, their tops scattered.
TOP_FIT = 0.25
# A photo is read as a rack when this share of the tiles on its tiers' strips stand along the
# rack's up within this many degrees (else it is a table scene: the whole-photo path reads it).
RACK_SHARE = 0.8
RACK_TURN = 30.0
NEAR_MISSES = 0.1
# A tile the strips' detector boxes this much taller than wide stands upright in its strip.
UPRIGHT = 1.15
# A tile this much wider than the median tile on the tiers lies on its side (a tile is about 1.4
# times as high as wide).
SIDEWAYS = 1.25
# ... and its tiers hold at least this many of the first look's tiles (two or three tiles in a
# line on a table are no evidence of a rack).
MIN_RACK_TILES = 4
# Tiles whose centres spread this many times farther along one line than across it, that line
# nearer up than across the photo, are a rack on its side (read a quarter turn round).
SIDE_SPREAD = 1.5
# Tiers of one rack stand one above the other: each tier's top at most this many tile heights
# below the one above it (a two-row wooden rack: about 1.1-1.4; a stand's tiers: 0.5-0.85).
MAX_TIER_SPACING = 1.7
# A tier of one tile needs the detector this sure of it in the tier's strip; any tier, this share
# of such a tile standing on its line (``tier_score``).
SURE_TILE = 0.6
ON_LINE = 0.5
# Top edges in the photo: it is looked at with a tile this many pixels high, along lines within
# this many degrees of level (the rack's upright frame), and the strongest lines, down to this
# share of the strongest, are candidates (at most this many).
EDGE_TILE = 24.0
MAX_EDGE_SLOPE = 20.0
EDGE_SHARE = 0.25
EDGE_LINES = 5
# A tile belongs to a tier only when its own axis is within this many degrees of the rack's up.
AXIS_TOLERANCE = 25.0
# A detection in a strip belongs to its tier when its centre lies within this share of the strip
# tile's height from the tier's middle line and it is at least this share of a tile high.
BAND = 0.35
MIN_HEIGHT = 0.55
# For the rack to have an up, this share of the photo's boxes (by size) must share one frame
# within this many degrees (a quarter turn apart counts as the same), and be longer along the up
# than across by this much on average (log of the ratio).
MIN_AGREE = 0.5
FRAME_TOLERANCE = 12.0
MIN_ELONGATION = 0.1
# A gap between two of a tier's tiles at least this many tile widths wide is looked at as a slot.
SLOT_GAP = 0.8
# Below the line where a tier in front starts to hide a tier's tiles, this share of a tile more
# of the strip still shows them (the line is drawn along the front tiles' tops).
HIDDEN_MARGIN = 0.04
# A middle tier drawn midway between the tiers above and below it is looked at from this share
# of a tile above its line (the renders' middle tiers lie within 0.09 of a tile of the plain
# midpoint); a midway look holds a tier when this many of its tiles' tops lie that near it.
MIDWAY_MARGIN = 0.1
MIDWAY_TILES = 2


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
    # the strip's y (pixels) from which the tier in front hides this one's tiles, or None
    # (:func:`hidden_by_front`)
    hidden: float | None = None
    # the strip's y above which its detector sees grey (a middle tier drawn midway, whose tiles
    # show between the tier above and the one in front: :func:`midway`), or None
    above: float | None = None

    @property
    def to_photo(self) -> np.ndarray:
        return np.linalg.inv(self.to_strip)

    def warp(self, image: np.ndarray) -> np.ndarray:
        """The strip's pixels, grey (the detector's letterbox) below :attr:`hidden`."""
        import cv2

        out = cv2.warpPerspective(
            image,
            self.to_strip,
            self.size,
            flags=cv2.INTER_AREA if _shrinks(self.to_strip, self.size) else cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(114, 114, 114),
        )
        if self.hidden is not None:
            out[max(int(round(self.hidden)), 0) :] = 114
        if self.above is not None:
            out[: max(int(round(self.above)), 0)] = 114
        return out

    @property
    def shows_to(self) -> float:
        """How far down the strip its tier shows (all of it where none hides it)."""
        return float(self.size[1]) if self.hidden is None else self.hidden


def _shrinks(matrix: np.ndarray, size: tuple[int, int]) -> bool:
    """Whether the warp shrinks the photo at the strip's middle (area averaging then)."""
    inverse = np.linalg.inv(matrix)
    mid = np.float64([[size[0] / 2, size[1] / 2], [size[0] / 2 + 1, size[1] / 2]])
    a, b = project(inverse, mid)
    return float(np.hypot(*(b - a))) > 1.0


def project(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points ``(n, 2)`` through a 3 x 3 homography."""
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    m = np.asarray(matrix, np.float64)
    out = pts @ m[:, :2].T + m[:, 2]
    return out[:, :2] / out[:, 2:3]


def on_its_side(turned: np.ndarray) -> bool:
    """Whether the tiles found (turned boxes) lie along a line nearer the photo's up than its
    across (``SIDE_SPREAD`` times longer than wide), as a rack on its side does.  From the boxes'
    centres alone: the detector boxes tiles standing sideways at scattered angles.

    >>> column = np.float32([[100, 50 + 40 * k, 30, 40, 0] for k in range(8)])
    >>> bool(on_its_side(column)), bool(on_its_side(column[:, [1, 0, 2, 3, 4]]))
    (True, False)
    """
    if len(turned) < MIN_RACK_TILES:
        return False
    centres = turned[:, :2].astype(np.float64)
    spread, axes = np.linalg.eigh(np.cov((centres - centres.mean(axis=0)).T))
    along = axes[:, 1]  # the direction the centres spread along most
    long_enough = spread[1] >= SIDE_SPREAD**2 * max(float(spread[0]), 1e-9)
    return bool(long_enough and abs(along[1]) > abs(along[0]))


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
    """The rack's up as a unit vector in photo pixels (y grows down); of its two senses the one
    nearer the photo's up.  None when the boxes disagree on their turn.

    The boxes' sides give the rack's frame up to a quarter turn (the frame most boxes share
    within ``FRAME_TOLERANCE``, then their angles averaged four times over, so a box's width
    and height sides agree); which of the two axes is up is the one those boxes are longer
    along, each voting by how much (a tile behind another shows
    less than its height, and may look wider than tall, but the rack's front tier stands
    whole)."""
    if len(turned) < 2:
        return None
    rad = np.radians(turned[:, 4].astype(np.float64))
    weights = np.maximum(turned[:, 2], turned[:, 3]).astype(np.float64)
    # the frame most boxes share (a first look's angles scatter on tiles turned near 90 degrees,
    # so the mode, not the mean): each box's angle proposes one, the boxes within FRAME_TOLERANCE
    # of it (a quarter turn apart counts as the same) vote
    quarter = np.mod(np.degrees(rad), 90.0)
    apart = np.abs(quarter[:, None] - quarter[None, :])
    near = np.minimum(apart, 90.0 - apart) <= FRAME_TOLERANCE
    support = near.astype(np.float64) @ weights
    members = near[int(np.argmax(support))]
    if float(weights[members].sum()) < MIN_AGREE * float(weights.sum()):
        return None
    c = float(weights[members] @ np.cos(4 * rad[members]))
    s = float(weights[members] @ np.sin(4 * rad[members]))
    frame = math.atan2(s, c) / 4  # one side of the agreeing boxes, up to a quarter turn
    across = np.array([math.cos(frame), math.sin(frame)])
    along = np.array([-across[1], across[0]])
    turned, rad = turned[members], rad[members]
    w_side = np.stack([np.cos(rad), np.sin(rad)], axis=1)  # each box's w side
    w_along = np.abs(w_side @ along) >= np.abs(w_side @ across)
    extent_along = np.where(w_along, turned[:, 2], turned[:, 3]).astype(np.float64)
    extent_across = np.where(w_along, turned[:, 3], turned[:, 2]).astype(np.float64)
    votes = np.log(np.maximum(extent_along, 1e-6) / np.maximum(extent_across, 1e-6))
    vote = float(votes.mean())
    if abs(vote) < MIN_ELONGATION:  # tiles lying both ways: no rack's up
        return None
    up = along if vote > 0 else across
    return up if up[1] < 0 or (up[1] == 0 and up[0] < 0) else -up


def find_tiers(
    turned: np.ndarray, pixels: np.ndarray | None = None, up: np.ndarray | None = None
) -> tuple[list[Tier], np.ndarray]:
    """Candidate tiers for a photo, and the rack's up vector (:func:`rack_up` by default).

    A tier is a line along the tops of its tiles: on a tiered rack the tier in front hides the
    feet of the tiles behind, and a first look's box may reach down into the tier below, but the
    top of a standing tile shows.  Candidates come from two kinds of evidence, and the strip
    detector later keeps the ones that hold tiles (:func:`choose_tiers`):

    - lines through the first look's box tops (:func:`top_lines`), and a line through the top of
      each standing tile on none (a tier of one tile);
    - the photo's own top edges (:func:`edge_lines`, with ``pixels``): long lines where the
      image turns from dark to bright going down the rack, the tops of touching tiles, which
      hold where the boxes are wrong.

    Every candidate spans the standing tiles' extent along the rack and is a tile high (its
    height from the tiles' widths, ``TILE_ASPECT``, which a first look gets right more often
    than their heights), its sides along the rack's up."""
    up = rack_up(turned) if up is None else np.asarray(up, np.float64)
    if up is None:
        return [], np.array([0.0, -1.0])
    right, down = np.array([-up[1], up[0]]), -up
    axis, height, width = tile_axes(turned, up)
    standing = np.flatnonzero(np.degrees(np.arccos(np.clip(axis @ up, -1, 1))) <= AXIS_TOLERANCE)
    if len(standing) < 1:
        return [], up
    centres = turned[standing, :2].astype(np.float64)
    tops = centres + axis[standing] * height[standing, None] / 2
    u, v = tops @ right, tops @ down
    w = width[standing]
    span = (float((u - w / 2).min()), float((u + w / 2).max()))
    lines: list[tuple[float, float, tuple[int, ...]]] = []  # (v at u = 0, slope, members)
    on_line = np.zeros(len(standing), bool)
    for members in top_lines(np.stack([u, v], axis=1), w):
        slope, v0 = np.polyfit(u[members], v[members], 1)
        order = members[np.argsort(u[members])]
        lines.append((float(v0), float(slope), tuple(int(standing[i]) for i in order)))
        on_line[members] = True
    tile_width = _width_along(u, w, lines)
    middle = (span[0] + span[1]) / 2
    slope = lines[0][1] if lines else 0.0
    for i in np.flatnonzero(~on_line)[:MAX_LONE]:
        lines.append((float(v[i] - slope * u[i]), slope, (int(standing[i]),)))
    if pixels is not None:
        reach = (
            float(v.min()) - tile_width(middle) / TILE_ASPECT,
            float(v.max() + 2 * w.max() / TILE_ASPECT),
        )
        for v0, m in edge_lines(pixels, up, span, reach, tile_width(middle) / TILE_ASPECT):
            lines.append((v0, m, ()))
    pair = _pencil(lines, span, u, w)
    if pair is not None:
        # the tiers of one rack are one pencil of lines (parallel, or meeting at the vanishing
        # point): every other candidate is drawn through its middle along the pencil
        (a0, a1, _), (b0, b1, _) = lines[pair[0]], lines[pair[1]]
        gap = (b0 - a0) + (b1 - a1) * middle
        for k, (v0, m, members) in enumerate(lines):
            if k not in pair:
                t = (v0 + m * middle - a0 - a1 * middle) / gap
                lines[k] = (a0 + t * (b0 - a0), a1 + t * (b1 - a1), members)
    tiers: list[Tier] = []
    kept: list[tuple[float, float]] = []
    for v0, m, members in lines:
        at = v0 + m * middle
        if any(abs(at - other) < SAME_LINE * tile_width(middle) / TILE_ASPECT for other, _ in kept):
            continue
        kept.append((at, m))
        corners = []
        for uu in span:
            top = uu * right + (v0 + m * uu) * down
            corners.append((top, top + down * tile_width(uu) / TILE_ASPECT))
        (tl, bl), (tr, br) = corners
        tiers.append(Tier(np.array([tl, tr, br, bl]), members))
    return tiers, up


def _pencil(
    lines: Sequence[tuple[float, float, tuple]],
    span: tuple[float, float],
    u: np.ndarray,
    w: np.ndarray,
) -> tuple[int, int] | None:
    """The two lines of tops (indices into ``lines``: v at u = 0, slope, members) that show the
    rack's pencil of tiers: each of ``PERSPECTIVE_TILES`` tops or more (the most first), apart
    as two tiers of a rack are (half a tile to ``MAX_TIER_SPACING`` tile heights at the rack's
    middle), on one side of each other all along ``span``, their spacing shrinking along it as
    the tiles' widths ``w`` (at ``u``) do, within ``PENCIL_RATIO`` (a line across two tiers'
    tops, steeper than the tiers, does not).  None when no two lines do."""
    order = sorted(
        (k for k, line in enumerate(lines) if len(line[2]) >= PERSPECTIVE_TILES),
        key=lambda k: -len(lines[k][2]),
    )
    if len(order) < 2:
        return None
    fitted = _width_fit(u, w)
    shrink = math.log(fitted(span[1]) / fitted(span[0]))
    mid = (span[0] + span[1]) / 2
    for i, j in [(i, j) for n, i in enumerate(order) for j in order[n + 1 :]]:
        (a0, a1, _), (b0, b1, _) = lines[i], lines[j]
        gaps = [(b0 - a0) + (b1 - a1) * x for x in (span[0], mid, span[1])]
        if gaps[0] * gaps[2] <= 0:
            continue
        height = fitted(mid) / TILE_ASPECT
        if not 0.5 <= abs(gaps[1]) / height <= MAX_TIER_SPACING:
            continue
        if abs(math.log(gaps[2] / gaps[0]) - shrink) <= math.log(PENCIL_RATIO):
            return i, j
    return None


def _width_along(u: np.ndarray, w: np.ndarray, lines: Sequence[tuple[float, float, tuple]] = ()):
    """A tile's width as a function of its place ``u`` along the rack (``w``: the first look's
    widths; ``lines``: the tiers' lines of tops, v at u = 0, slope, members).

    Where two lines of tops hold ``PERSPECTIVE_TILES`` tiles or more each and lie as two tiers of
    a rack do (half a tile to ``MAX_TIER_SPACING`` tile heights apart), their spacing says it:
    two tiers' tops are a fixed length apart on the rack, so their spacing in the photo shrinks
    with distance as the tiles do (and is zero where the lines meet, at the vanishing point).
    Lines fitted through many tops hold where a box across two tiles or half a tile off swells a
    width.  Else a straight-line fit of the widths where the tiles spread over a few widths, else
    their median.

    >>> lines = [(0.0, 0.0, (0, 1, 2)), (50.0, -0.1, (3, 4, 5))]  # spacing 50 - 0.1 u
    >>> width = _width_along(np.float64([0, 100, 200]), np.float64([30, 30, 30]), lines)
    >>> round(width(100), 1), round(width(0), 1), round(width(300), 1)
    (30.0, 37.5, 15.0)
    """
    median = float(np.median(w))
    tiers = sorted((m for m in lines if len(m[2]) >= PERSPECTIVE_TILES), key=lambda m: -len(m[2]))
    if len(tiers) >= 2:
        (a0, a1, _), (b0, b1, _) = tiers[:2]
        here = float(np.median(u))
        gap = (b0 - a0) + (b1 - a1) * here  # the lines' spacing there, pixels
        # in tile heights: two tiers of one rack, not two rows of melds on a table
        if 0.5 <= abs(gap) / (median / TILE_ASPECT) <= MAX_TIER_SPACING:
            rate = (b1 - a1) / gap  # the spacing's change per pixel along, as a share
            return lambda x: median * float(np.clip(1 + rate * (x - here), 0.5, 2))
    return _width_fit(u, w)


def _width_fit(u: np.ndarray, w: np.ndarray):
    """A tile's width at ``u`` from a straight-line fit of the first look's widths ``w`` where
    the tiles spread over three widths or more (clipped to half to twice their median), else
    their median."""
    median = float(np.median(w))
    if len(u) >= 3 and float(u.max() - u.min()) >= 3 * median:
        b, a = np.polyfit(u, w, 1)
        return lambda x: float(np.clip(a + b * x, 0.5 * median, 2 * median))
    return lambda x: median


def edge_lines(
    pixels: np.ndarray,
    up: np.ndarray,
    span: tuple[float, float],
    reach: tuple[float, float],
    tile_height: float,
) -> list[tuple[float, float]]:
    """Long top edges across the rack (``v = v0 + slope * u`` in the upright frame: ``u`` along
    ``right``, ``v`` along ``-up``, photo pixels), strongest first, at most ``EDGE_LINES``.

    The photo is turned upright and scaled so a tile is ``EDGE_TILE`` pixels high; where it
    turns from dark to bright going down (a tile's top against what stands behind it) is summed
    along lines of every slope within ``MAX_EDGE_SLOPE`` degrees over the rack's extent
    ``span``, between ``reach``; local maxima at least ``EDGE_SHARE`` of the strongest, and
    ``SAME_LINE`` tile heights apart, are the lines."""
    import cv2

    scale = min(1.0, EDGE_TILE / max(tile_height, 1e-6))
    right, down = np.array([-up[1], up[0]]), -up
    margin = tile_height
    u0, v0 = span[0] - margin, reach[0] - margin
    size = (
        max(int((span[1] - span[0] + 2 * margin) * scale), 8),
        max(int((reach[1] - reach[0] + 2 * margin) * scale), 8),
    )
    matrix = np.float64([[right[0], right[1], -u0], [down[0], down[1], -v0]]) * scale
    upright = cv2.warpAffine(
        pixels, matrix, size, flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    grey = cv2.GaussianBlur(
        cv2.cvtColor(upright, cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0), 1.0
    )
    rise = np.maximum(cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3), 0)
    h, w = rise.shape
    cols = np.arange(w)
    slopes = np.tan(np.radians(np.arange(-MAX_EDGE_SLOPE, MAX_EDGE_SLOPE + 0.5, 1.0)))
    shifts = np.round(slopes[:, None] * (cols - w / 2)[None, :]).astype(np.int64)
    pad = int(np.abs(shifts).max())
    # zero rows above and below: a line leaving the image adds nothing there; columns as rows
    # (``padded[c, pad + r]`` is ``rise[r, c]``), so that a line's stretch of each column is one
    # run of a window view
    padded = np.zeros((w, h + 2 * pad), np.float32)
    padded[:, pad : pad + h] = rise.T
    windows = np.lib.stride_tricks.sliding_window_view(padded, h, axis=1)  # (w, 2 pad + 1, h)
    # [slope, row, column]: the pixel each slope's line through each row crosses in each column
    on_line = np.ascontiguousarray(windows[cols[None, :], shifts + pad].transpose(0, 2, 1))
    profiles = (on_line.sum(axis=2) / w).astype(np.float64)
    best = float(profiles.max())
    if best <= 0:
        return []
    apart = max(1, int(SAME_LINE * tile_height * scale))
    found: list[tuple[float, float]] = []
    taken = np.zeros(h, bool)
    for flat in np.argsort(-profiles, axis=None):
        k, row = divmod(int(flat), h)
        if profiles[k, row] < EDGE_SHARE * best or len(found) >= EDGE_LINES:
            break
        if taken[row]:
            continue
        taken[max(0, row - apart) : row + apart + 1] = True
        m = float(slopes[k])
        # row ``row`` at the middle column: back to photo pixels of the upright frame
        v_mid = row / scale + v0
        u_mid = (w / 2) / scale + u0
        found.append((v_mid - m * u_mid, m))
    return found


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
        # The pairs in the order of the plain search (each top with every later one), the
        # winner the first of the greatest keys.  A pair's line holds at most the tops near it
        # (``upper``: ``_on_line``'s test with a margin far over rounding), so the pairs are
        # tried most first and the search stops where no pair left can hold as many tops as
        # the best line has.
        firsts, seconds = np.triu_indices(len(pool), 1)
        d = tops[pool[seconds]] - tops[pool[firsts]]
        length = np.hypot(d[:, 0], d[:, 1])
        length[length == 0] = 1.0
        normal = np.stack([-d[:, 1], d[:, 0]], axis=1) / length[:, None]
        rel = tops[pool][None, :, :] - tops[pool[firsts]][:, None, :]
        off = np.abs(rel[:, :, 0] * normal[:, None, 0] + rel[:, :, 1] * normal[:, None, 1])
        margin = 1e-6 * (1.0 + np.abs(rel).sum(axis=2))
        upper = (off <= TOP_TOLERANCE * heights[pool][None, :] + margin).sum(axis=1)
        best_at = -1
        for p in np.argsort(-upper, kind="stable"):
            if best is not None and upper[p] < best[0][0]:
                break
            i, j = pool[firsts[p]], pool[seconds[p]]
            d = tops[j] - tops[i]
            if abs(d[0]) < 1e-9 or abs(d[1] / d[0]) > slope_limit:
                continue
            direction = d / np.linalg.norm(d)
            if first_direction is not None and abs(float(direction @ first_direction)) < math.cos(
                math.radians(PARALLEL_TIERS)
            ):
                continue
            members = _on_line(tops, heights, pool, tops[i], direction)
            if len(members) < 2:
                continue
            key = (len(members), -_residual(tops, heights, members, tops[i], direction))
            if best is None or key > best[0] or (key == best[0] and p < best_at):
                best, best_at = (key, members), int(p)
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
    breaks = np.flatnonzero(along[1:] - along[:-1] > MAX_TIER_GAP * (widths[1:] + widths[:-1]) / 2)
    if not len(breaks):
        return near
    # the first longest chain
    bounds = np.concatenate(([0], breaks + 1, [len(near)]))
    k = int(np.argmax(bounds[1:] - bounds[:-1]))
    return near[bounds[k] : bounds[k + 1]]


def _residual(
    tops: np.ndarray, heights: np.ndarray, members: np.ndarray, point: np.ndarray, d: np.ndarray
) -> float:
    normal = np.array([-d[1], d[0]])
    return float(np.sum(np.abs((tops[members] - point) @ normal) / heights[members]))


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


def strip_for(index: int, quad: np.ndarray, image_size: tuple[int, int]) -> Strip:
    """The straightening of one tier's quadrilateral (see the module's step 3): a tile high
    (``STRIP_TILE``), as long as the quadrilateral's sides say (its middle keeps its aspect)."""
    import cv2

    src = np.asarray(quad, np.float32)

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

    across = (np.linalg.norm(quad[3] - quad[0]) + np.linalg.norm(quad[2] - quad[1])) / 2
    along = (np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3])) / 2
    length = max(STRIP_TILE * along / max(across, 1e-6), 1.0)
    tile_width = STRIP_TILE * TILE_ASPECT
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
    steps = np.arange(int(END_MARGIN * 4) + 1)  # quarter tiles out from the end; 0: the end
    xs = end + sense * steps * tile_width / 4
    at = project(inverse, np.c_[xs, np.full(len(xs), mid)])
    step = project(inverse, np.c_[xs + 1, np.full(len(xs), mid)])
    scale = np.hypot(*(step - at).T)  # photo pixels per strip pixel along the strip
    w, h = image_size
    fits = (scale >= scale[0] / MAX_STRETCH) & (scale <= scale[0] * MAX_STRETCH)
    fits &= (at[:, 0] >= 0) & (at[:, 0] <= w) & (at[:, 1] >= 0) & (at[:, 1] <= h)
    fits[0] = True
    reach = int(np.argmin(fits)) - 1 if not fits.all() else len(fits) - 1
    return reach * tile_width / 4


def held_by(place: tuple[int, float, float], held: Sequence[tuple[int, float, float]]) -> bool:
    """Whether a tile at ``place`` (tier, x1, x2 along its strip) stands where one of the tier
    tiles ``held`` (the same) does: its middle within one's extent.  A first look's box half a
    tile off, between two of a tier's tiles, is no tile of its own.

    >>> held_by((0, 40, 70), [(0, 0, 50), (0, 50, 100)]), held_by((0, 110, 140), [(0, 0, 100)])
    (True, False)
    """
    k, x1, x2 = place
    return any(j == k and a <= (x1 + x2) / 2 <= b for j, a, b in held)


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


def shelf_pack(
    sizes: Sequence[tuple[int, int]], width: int, max_height: int, gap: int
) -> list[list[tuple[int, int, int]]]:
    """Pieces of ``sizes`` (width, height; none wider than ``width``) packed in order into
    canvases ``width`` wide and at most ``max_height`` high: left to right along shelves as high
    as the tallest piece, ``gap`` pixels apart.  One list per canvas of (piece, x, y).

    >>> shelf_pack([(200, 77), (200, 77), (300, 77)], 448, 448, 8)
    [[(0, 0, 0), (1, 208, 0), (2, 0, 85)]]
    >>> [len(c) for c in shelf_pack([(448, 77)] * 7, 448, 448, 8)]
    [5, 2]
    """
    shelf = max((h for _, h in sizes), default=0) + gap
    canvases: list[list[tuple[int, int, int]]] = []
    x = y = 0
    for k, (w, _) in enumerate(sizes):
        if w > width:
            raise ValueError(f"piece {k} is {w} px wide, wider than the canvas ({width})")
        if canvases and x + w > width:
            x, y = 0, y + shelf
        if not canvases or y + shelf - gap > max_height:
            canvases.append([])
            x = y = 0
        canvases[-1].append((k, x, y))
        x += w + gap
    return canvases


def hidden_by_front(strips: list[Strip]) -> list[Strip]:
    """The tiers (top to bottom) with :attr:`Strip.hidden` set where the next tier down stands
    in front of the tiles' feet (:func:`front_line`)."""
    out = list(strips)
    for k in range(len(strips) - 1):
        at = front_line(strips[k], strips[k + 1])
        if at is not None:
            out[k] = replace(strips[k], hidden=at)
    return out


def front_line(strip: Strip, front: Strip) -> float | None:
    """Where in ``strip`` the tier ``front`` hides its tiles' feet: the front tier's top line,
    mapped into the strip, when it crosses the strip's tier between ``TOP_FIT`` and the whole
    of a tile (on a stand of three tiers the back ones show only their tiles' tops, a quarter to
    two thirds of them on a close stand; the detector, shown the tier in front below them,
    boxes two tiers as one tile, or none).  The line goes ``HIDDEN_MARGIN`` of a tile lower, so
    a tile keeps its own edge.  None when the front tier hides none of it."""
    at = _front_top(strip, front)
    if at is not None and TOP_FIT * STRIP_TILE <= at - strip.top < STRIP_TILE:
        return at
    return None


def _front_top(strip: Strip, front: Strip) -> float | None:
    """The tier ``front``'s top line in ``strip`` (``HIDDEN_MARGIN`` of a tile lower), at the
    strip's middle; None when it runs across the strip."""
    ends = np.float64([[front.left, front.top], [front.left + front.length, front.top]])
    (x0, y0), (x1, y1) = project(strip.to_strip, project(front.to_photo, ends))
    if abs(x1 - x0) < 1e-6:
        return None
    # tiers stand parallel: straightened, the front tier's top runs level across the strip
    # (where it slants, one of the two lines is off): its height at the tier's middle
    mid = strip.left + strip.length / 2
    return float(y0 + (y1 - y0) * (mid - x0) / (x1 - x0) + HIDDEN_MARGIN * STRIP_TILE)


def behind_chosen(strips: list[Strip], chosen: list[int]) -> list[Strip]:
    """The candidate strips not ``chosen`` that a chosen tier would hide (:func:`front_line`),
    each with :attr:`Strip.hidden` set: a tier that shows only its tiles' tops over the tier in
    front holds no whole tile for the detector until what hides it is greyed."""
    out = []
    for k, strip in enumerate(strips):
        if k in chosen:
            continue
        lines = [at for j in chosen if (at := front_line(strip, strips[j])) is not None]
        if lines:
            out.append(replace(strip, hidden=min(lines)))
    return out


def midway(
    strip: Strip,
    strips: list[Strip],
    found: list[np.ndarray],
    chosen: list[int],
    up: np.ndarray,
    image_size: tuple[int, int],
) -> Strip | None:
    """A candidate ``strip`` that lies between two chosen tiers (``chosen`` top to bottom along
    the rack's ``up``, their tiles ``found``) drawn again midway between their lines, seen only
    from its line down to where the lower tier hides it (:func:`front_line`).  A stand's tiers
    stand at equal steps, so a middle tier's top lies midway between the tops above and below
    it: in the photo, the two lines weighed by how far away each stands, as the spacing of their
    tiles says (:func:`_pitch`).  With the tiles' true heights, the renders' middle tops lie
    0.013 of a tile from that point on the median (0.034 at most) on close frontal stands,
    0.057 (0.088) from the plain mean; on oblique ones 0.065 against 0.045 on the median.  Its
    own tiles' tops (weak edges between two white faces) and a first look's boxes (reaching down
    over the tier in front) place it less surely, and seen with the tier above, the detector
    boxes the two tiers' faces as one tile.  None when ``strip`` lies between no two chosen
    tiers, or the lower tier would not hide the midway one."""
    down = -np.asarray(up, np.float64)
    at = _height(strip, down)
    heights = [_height(strips[k], down) for k in chosen]
    for n in range(len(chosen) - 1):
        a, b = chosen[n], chosen[n + 1]
        if not heights[n] < at < heights[n + 1]:
            continue
        near = [1.0 / _pitch(strips[k], found[k]) for k in (a, b)]
        ends = [
            tile_quad(strips[k], strips[k].left, strips[k].left + strips[k].length) for k in (a, b)
        ]
        quad = (near[0] * ends[0] + near[1] * ends[1]) / sum(near)
        mid = strip_for(strip.tier, quad, image_size)
        line = front_line(mid, strips[b])
        if line is None:
            return None
        return replace(mid, hidden=line, above=mid.top - MIDWAY_MARGIN * STRIP_TILE)
    return None


def midway_holds(strip: Strip, boxes: np.ndarray) -> bool:
    """Whether a :func:`midway` look found a tier: ``MIDWAY_TILES`` of its tiles' tops on its
    line (within ``MIDWAY_MARGIN`` of a tile, as a stand's middle tier stands).  Midway between
    the two tiers of a rack that has no middle tier, the detector boxes the upper tier's tiles
    where the grey above cuts them, their tops on its edge."""
    on = np.abs(boxes[:, 1] - strip.top) <= MIDWAY_MARGIN * STRIP_TILE
    return int(on.sum()) >= MIDWAY_TILES


def _pitch(strip: Strip, boxes: np.ndarray) -> float:
    """How far apart (photo pixels) a strip's touching tiles stand: the median distance between
    neighbours' centres a tile apart (within ``1.3`` of the boxes' median width), or the strip's
    tile width where no two touch.  Tiers further away stand closer together."""
    y = strip.top + STRIP_TILE / 2
    width = project(strip.to_photo, [(strip.left, y), (strip.left + strip.tile_width, y)])
    fallback = float(np.linalg.norm(width[1] - width[0]))
    if len(boxes) < 2:
        return fallback
    boxes = boxes[np.argsort(boxes[:, 0] + boxes[:, 2])]
    xs = (boxes[:, 0] + boxes[:, 2]) / 2
    touching = np.diff(xs) <= 1.3 * float(np.median(boxes[:, 2] - boxes[:, 0]))
    if not touching.any():
        return fallback
    at = project(strip.to_photo, np.c_[xs, np.full(len(xs), y)])
    gaps = np.linalg.norm(np.diff(at, axis=0), axis=1)[touching]
    return float(np.median(gaps))


def _height(strip: Strip, down: np.ndarray) -> float:
    """How far ``down`` the rack (photo pixels) a strip's top line lies at its middle."""
    return float(project(strip.to_photo, [(strip.left + strip.length / 2, strip.top)])[0] @ down)


def tops_only_tiers(
    candidates: Sequence[Tier],
    strips: list[Strip],
    found: list[np.ndarray],
    chosen: list[int],
    turned: np.ndarray,
    conf: np.ndarray,
    up: np.ndarray,
) -> list[int]:
    """``chosen`` (top to bottom) with the tiers that show only their tiles' tops added: a
    candidate whose line holds ``PERSPECTIVE_TILES`` first-look tops or more, none of them a
    chosen tier's, and that a chosen tier hides below ``MIN_HEIGHT`` of a tile (a stand of three
    tiers seen straight on from afar shows each tier's top third or so; the strip's detector,
    greyed or not, boxes such a tier with the one in front, or not at all).  Its tiles are the
    first look's boxes on its line (``conf``: their scores), mapped into its strip down to where
    the tier in front hides them; ``strips`` and ``found`` are changed in place."""
    taken = {i for k in chosen for i in candidates[k].members}
    down = -np.asarray(up, np.float64)
    out = list(chosen)
    for k, tier in enumerate(candidates):
        members = list(tier.members)
        if k in out or len(members) < PERSPECTIVE_TILES or taken & set(members):
            continue
        strip = strips[k]
        hides = [_hides(strip, strips[j]) for j in out]
        lines = [at for at in hides if at is not None]
        if not lines:
            continue
        line = min(lines)
        boxes = []
        xs = project(strip.to_strip, box_corners(turned[members]))[:, 0].reshape(-1, 4)
        for i, x in zip(members, xs, strict=True):
            boxes.append([float(x.min()), strip.top, float(x.max()), line, float(conf[i])])
        strips[k] = replace(strip, hidden=line)
        found[k] = np.float32(boxes).reshape(-1, 5)
        out.append(k)
        taken |= set(members)
    if len(out) == len(chosen):
        return chosen
    return sorted(out, key=lambda k: _height(strips[k], down))


def _hides(strip: Strip, front: Strip) -> float | None:
    """Where in ``strip`` the tier ``front`` hides its tiles when it shows less than
    ``MIN_HEIGHT`` of them but some (:func:`front_line`'s line, where a tier is taken from its
    first-look tops: :func:`tops_only_tiers`), else None."""
    at = _front_top(strip, front)
    if at is not None and TOP_FIT * STRIP_TILE <= at - strip.top < MIN_HEIGHT * STRIP_TILE:
        return at
    return None


def in_band(box: Sequence[float], strip: Strip) -> bool:
    """Whether a box found in a strip is one of its tier's tiles (centre on the tier's middle
    line, tall enough), not a neighbouring tier's tile showing at the strip's edge."""
    x1, y1, x2, y2 = box
    middle = strip.top + STRIP_TILE / 2
    return abs((y1 + y2) / 2 - middle) <= BAND * STRIP_TILE and (y2 - y1) >= MIN_HEIGHT * STRIP_TILE


def tile_quad(
    strip: Strip, x1: float, x2: float, top: float | None = None, bottom: float | None = None
) -> np.ndarray:
    """The photo quadrilateral (top-left, top-right, bottom-right, bottom-left) of ``[x1, x2]``
    along a strip, from ``top`` to ``bottom`` (strip pixels; by default the tier's band, a tile
    high)."""
    top = strip.top if top is None else top
    bottom = strip.top + STRIP_TILE if bottom is None else bottom
    return project(strip.to_photo, np.float64([[x1, top], [x2, top], [x2, bottom], [x1, bottom]]))


def tier_score(strip: Strip, boxes: np.ndarray) -> float:
    """How surely a strip is a tier: its tiles' scores (``boxes``, ``(m, 5)`` strip pixels and
    score), each less as its top lies off the strip's top line (``TOP_FIT``)."""
    return float(boxes[:, 4] @ _top_fit(strip, boxes))


def _top_fit(strip: Strip, boxes: np.ndarray) -> np.ndarray:
    """How well each box's top lies on the strip's top line: 1 on it, 0 from ``TOP_FIT`` of a
    tile off (a box whose top lies further down is a tile of a tier in front showing there)."""
    return np.clip(1 - np.abs(boxes[:, 1] - strip.top) / (TOP_FIT * STRIP_TILE), 0, 1)


def choose_tiers(strips: list[Strip], found: list[np.ndarray], up: np.ndarray) -> list[int]:
    """Which candidate strips are the rack's tiers, top to bottom: the ones whose strips hold
    the most found tiles standing on their top line (the detector's scores added up, each less
    as its top lies off the line: ``TOP_FIT``), each holding two tiles or one sure one, none
    sharing more than ``SHARED_TILES`` of the tiles on its line with a surer tier (a line
    between two tiers sees the same tiles: their tops meet), at most ``MAX_TIERS``."""
    scores = [tier_score(s, f) for s, f in zip(strips, found, strict=True)]
    tops, reach = [], []  # the middles of its tiles' tops (photo), and half their widths
    for strip, boxes in zip(strips, found, strict=True):
        # a tier behind whose tiles' boxes reach down over the tier in front shares their
        # middles with the front tier's tiles, not their tops
        boxes = boxes[_top_fit(strip, boxes) > 0]
        left = project(strip.to_photo, np.c_[boxes[:, 0], boxes[:, 1]])
        right = project(strip.to_photo, np.c_[boxes[:, 2], boxes[:, 1]])
        tops.append((left + right) / 2)
        reach.append(np.linalg.norm(right - left, axis=1) / 2)
    kept: list[int] = []
    for k in np.argsort([-v for v in scores], kind="stable"):
        boxes = found[k]
        if len(boxes) < 2 and not (len(boxes) == 1 and boxes[0, 4] >= SURE_TILE):
            continue
        if scores[k] < ON_LINE * SURE_TILE:  # no tile stands on its line
            continue
        shared = 0
        for j in kept if strips[k].above is None else ():  # a midway look sees no other tier
            gaps = np.linalg.norm(tops[k][:, None] - tops[j][None], axis=2)
            shared += int(np.sum(gaps.min(axis=1) < reach[k]))
        if shared >= SHARED_TILES * len(tops[k]):
            continue
        kept.append(int(k))
        if len(kept) == MAX_TIERS:
            break
    down = -np.asarray(up, np.float64)
    kept.sort(key=lambda k: float(tops[k].mean(axis=0) @ down))
    return _stacked(kept, strips, scores, down)


def _stacked(
    kept: list[int], strips: list[Strip], scores: list[float], down: np.ndarray
) -> list[int]:
    """The tiers (top to bottom) that stand one above the other with the surest: from it, up and
    down, while the next tier's line lies within ``MAX_TIER_SPACING`` tile heights (a tile lying
    on the table below the rack is no tier of it)."""
    if len(kept) < 2:
        return kept
    lines = []
    for k in kept:
        strip = strips[k]
        mid = strip.left + strip.length / 2
        top, bottom = project(strip.to_photo, [(mid, strip.top), (mid, strip.top + STRIP_TILE)])
        lines.append((float(top @ down), float(np.linalg.norm(bottom - top))))
    best = max(range(len(kept)), key=lambda i: scores[kept[i]])
    lo = hi = best
    while lo > 0 and lines[lo][0] - lines[lo - 1][0] <= MAX_TIER_SPACING * lines[lo][1]:
        lo -= 1
    while hi < len(kept) - 1 and lines[hi + 1][0] - lines[hi][0] <= MAX_TIER_SPACING * lines[hi][1]:
        hi += 1
    return kept[lo : hi + 1]


def is_rack(
    turned: np.ndarray, up: np.ndarray, strips: list[Strip], found: list[np.ndarray] | None = None
) -> bool:
    """Whether the chosen tiers are a rack's, not groups lying on a table:

    - the tiers run parallel (within ``PARALLEL_TIERS`` degrees: one rack), or as a pencil of
      lines meeting beyond the rack (an oblique stand's tiers, :func:`_meet_on`);
    - at least ``MIN_RACK_TILES`` of the first look's tiles lie on the tiers' strips, and at
      least ``RACK_SHARE`` of them stand along the rack's up (within ``RACK_TURN``, and not
      ``SIDEWAYS``), or have a tile of ``found`` (the strips' detector) standing upright on them
      (taller than wide by ``UPRIGHT``: a first look's angles scatter on a rack turned 90
      degrees, the straightened strip's do not): groups lying at several angles put tiles
      turned across the strips;
    - at most ``NEAR_MISSES`` of the standing tiles lie just beside a tier (within a tile's
      height above or below its band, along its extent) without lying on any tier: a line
      drawn across separate groups on a table passes beside some of them, while a rack's
      tiers hold its tiles and the table's tiles lie away from the rack."""
    if not strips:
        return False
    directions = []
    for strip in strips:
        a, b = project(
            strip.to_photo, [(strip.left, strip.top), (strip.left + strip.length, strip.top)]
        )
        directions.append((b - a) / max(float(np.linalg.norm(b - a)), 1e-9))
    for k in range(1, len(strips)):
        angle = math.degrees(math.acos(min(1.0, abs(float(directions[k] @ directions[0])))))
        # an oblique stand's tiers converge more: they meet beyond the rack, not on it
        if angle > PARALLEL_TIERS and _meet_on(strips[0], strips[k]):
            return False
    standing = standing_tiles(turned, up)
    on = np.zeros(len(turned), bool)
    beside = np.zeros(len(turned), bool)
    for strip in strips:
        at = project(strip.to_strip, turned[:, :2])
        along = (at[:, 0] >= strip.left) & (at[:, 0] <= strip.left + strip.length)
        rel = (at[:, 1] - strip.top) / STRIP_TILE
        on |= (at[:, 0] >= 0) & (at[:, 0] <= strip.size[0]) & (rel >= 0) & (rel <= 1)
        beside |= along & (((rel >= -1) & (rel < 0)) | ((rel > 1) & (rel <= 2)))
    if on.sum() < MIN_RACK_TILES:
        return False
    # a tile lying on its side is as wide as a tile is high: wider than the rack's tiles by far
    # (a tile behind another shows less of its height, never more of its width)
    _, _, width = tile_axes(turned, up)
    sideways = width > SIDEWAYS * float(np.median(width[on]))
    fits = (standing & ~sideways) | _seen_upright(turned, strips, found or [])
    if float(fits[on].mean()) < RACK_SHARE:
        return False
    misses = beside & ~on & standing
    return int(misses.sum()) <= NEAR_MISSES * max(int(standing.sum()), 1)


def _meet_on(strip: Strip, other: Strip) -> bool:
    """Whether two tiers' top lines cross along the other's tier (within its extent and a tile
    beyond): lines of one rack meet at its vanishing point, beyond the rack's far end."""
    xs = strip.left + strip.length * np.float64([0.0, 1.0])
    at = project(other.to_strip, project(strip.to_photo, np.c_[xs, np.full(2, strip.top)]))
    (x0, y0), (x1, y1) = at
    if abs(x1 - x0) < 1e-9:
        return True
    if (y0 - other.top) * (y1 - other.top) <= 0:  # the lines cross between the tier's ends
        return True
    # where the two lines meet, along the other's strip
    meet = x0 + (x1 - x0) * (other.top - y0) / (y1 - y0) if y1 != y0 else math.inf
    lo, hi = other.left - other.tile_width, other.left + other.length + other.tile_width
    return bool(lo <= meet <= hi)


def _seen_upright(turned: np.ndarray, strips: list[Strip], found: list[np.ndarray]) -> np.ndarray:
    """Which first-look boxes have a strip's tile on them (centre within half the box's short
    side) boxed upright in its strip: taller than wide by ``UPRIGHT``."""
    seen = np.zeros(len(turned), bool)
    reach = turned[:, 2:4].min(axis=1) / 2
    for strip, boxes in zip(strips, found, strict=False):
        upright = boxes[(boxes[:, 3] - boxes[:, 1]) >= UPRIGHT * (boxes[:, 2] - boxes[:, 0])]
        if not len(upright):
            continue
        centres = project(strip.to_photo, np.c_[(upright[:, 0] + upright[:, 2]) / 2,
                                                (upright[:, 1] + upright[:, 3]) / 2])  # fmt: skip
        gaps = np.linalg.norm(turned[:, None, :2] - centres[None], axis=2)
        seen |= gaps.min(axis=1) < reach
    return seen


def up_angle(up: np.ndarray) -> float:
    """The turn, in degrees, that stands a tile whose up is ``up`` (photo pixels, y down) as
    ``vision.crops.straight_crop(..., turn="given")`` takes it: 0 upright, 180 upside down.

    >>> up_angle(np.float64([0, -1])), up_angle(np.float64([1, 0])), up_angle(np.float64([0, 1]))
    (0.0, 90.0, 180.0)
    """
    return float(np.degrees(np.arctan2(up[0], -up[1])))


def standing_tiles(turned: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Which turned boxes stand along the rack's up (an axis within ``RACK_TURN`` degrees)."""
    if not len(turned):
        return np.zeros(0, bool)
    axis, _, _ = tile_axes(turned, up)
    return np.degrees(np.arccos(np.clip(axis @ up, -1, 1))) <= RACK_TURN
