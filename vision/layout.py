"""Rack layout: rows, left-to-right order, groups split at gaps, and the tiles off the rack.

A row is a straight line of tile centres.  Fitting lines through the centres (instead of cutting
the image at fixed heights) keeps a tilted rack in two rows, and a straight line stays straight
under perspective, so a rack photographed at an angle works too.  Within a row the tiles are
ordered along the line, and a group ends where the gap to the next tile exceeds a fraction of the
local tile width (tiles shrink with distance, so each gap is measured against its own neighbours).
A single tile standing where a second row would be (13 tiles above and one below, or the discard
set apart) is a row of its own; other tiles on no rack row (the indicator lying on the table,
discards) are table tiles.

>>> top = [(0, 0, 10, 14), (10, 0, 20, 14), (30, 0, 40, 14)]
>>> bottom = [(0, 20, 10, 34), (11, 20, 21, 34)]
>>> layout = lay_out(top + bottom + [(60, 80, 70, 94)])
>>> layout.rows
[[[0, 1], [2]], [[3, 4]]]
>>> layout.table
[5]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vision.types import Box

# Split a group where the empty space between two tiles exceeds this fraction of their width.
GAP_FRACTION = 0.5
# A tile belongs to a row line when its centre is within this fraction of its size from the line.
ROW_TOLERANCE = 0.35
# A row never bridges an empty stretch longer than this many tile sizes.
MAX_ROW_GAP = 4.5
# Rows are lines closer to horizontal than this (degrees): a rack is photographed roughly level.
MAX_ROW_ANGLE = 75.0
# A second rack row is parallel to the first within this angle (degrees; perspective bends it a
# little) and no further away than this many tile sizes.
PARALLEL_TOLERANCE = 15.0
MAX_ROW_SPACING = 3.0
# Line search effort: distinct hypotheses refined per line, and lines looked for beyond the rows
# wanted (the rack's rows are the longest lines; the rest is table clutter).
MAX_REFINED = 8
EXTRA_LINES = 4
# Touching tiles are this many box widths (along the row) apart, at least and at most; outside,
# no two tiles of the rack touch (or a detection is doubled) and the box width is used as it is.
MIN_PITCH = 0.3
MAX_PITCH = 1.3
# A lone tile is a rack row of its own when it is the only tile standing where a second row would
# be: its centre this far from the rack row's line (in box extents across the row, measured on the
# row's tiles beside it: rendered racks' rows are 0.58 to 1.63 apart), no further beyond the row's
# ends than a row bridges (``MAX_ROW_GAP``), and its box about as large as the rack tiles' beside
# it (scale: the square root of the area ratio) and of the same shape (aspect: height / width
# against theirs): a tile lying on the table is foreshortened or turned, standing rack tiles keep
# their shape; a farther row is a little smaller, not flatter.
LONE_ROW_SPACING = (0.55, 1.7)
LONE_ROW_SCALE = (0.8, 1.25)
LONE_ROW_ASPECT = (0.85, 1.2)
# ... and only beside a rack row of at least this many tiles, and when no other tile off the rack
# lies within this many tile sizes of it (centre to centre: tiles touching on the table).
LONE_ROW_MIN_TILES = 5
LONE_ROW_ALONE = 1.5
# A row's touching pairs are at most this much wider apart (in box widths) than the rack's typical
# touching pair; wider pairs in a row of lone tiles are gaps.
TOUCHING_SPREAD = 1.35


@dataclass(frozen=True)
class Row:
    """One rack row: tile positions in groups, left to right, and the fitted line."""

    groups: list[list[int]]
    point: tuple[float, float]  # a point on the line (mean centre)
    direction: tuple[float, float]  # unit vector, pointing right

    @property
    def tiles(self) -> list[int]:
        return [i for group in self.groups for i in group]

    @property
    def angle(self) -> float:
        """Tilt in degrees; positive when the row falls to the right (image y grows down)."""
        return math.degrees(math.atan2(self.direction[1], self.direction[0]))


@dataclass(frozen=True)
class RackLayout:
    """Positions (indices into the boxes given to ``lay_out``) arranged as on the rack."""

    row_lines: list[Row]  # top to bottom
    table: list[int]  # tiles on no rack row, ordered left to right

    @property
    def rows(self) -> list[list[list[int]]]:
        """Rows top to bottom, each a list of groups left to right, each a list of positions."""
        return [row.groups for row in self.row_lines]

    @property
    def groups(self) -> list[list[int]]:
        """All groups in reading order (top row first)."""
        return [group for row in self.row_lines for group in row.groups]

    @property
    def rack(self) -> list[int]:
        """All rack positions in reading order."""
        return [i for group in self.groups for i in group]


def lay_out(
    boxes: Sequence[Box],
    *,
    gap_fraction: float = GAP_FRACTION,
    max_rows: int = 2,
) -> RackLayout:
    """Find the rack rows, their order and groups, and the table tiles among ``boxes``."""
    if not boxes:
        return RackLayout([], [])
    arr = np.asarray(boxes, dtype=float).reshape(-1, 4)
    if np.any(arr[:, 2] <= arr[:, 0]) or np.any(arr[:, 3] <= arr[:, 1]):
        raise ValueError("each box must be (x1, y1, x2, y2) with x2 > x1 and y2 > y1")
    centres = np.stack([(arr[:, 0] + arr[:, 2]) / 2, (arr[:, 1] + arr[:, 3]) / 2], axis=1)
    widths = arr[:, 2] - arr[:, 0]
    heights = arr[:, 3] - arr[:, 1]
    sizes = np.sqrt(widths * heights)
    lines = _find_lines(centres, sizes, max_rows + EXTRA_LINES)
    rows = _rack_rows(lines, centres, sizes, max_rows)
    if len(rows) == 1 < max_rows:
        lone = _lone_row_tile(rows[0], arr, centres, sizes)
        if lone is not None:
            rows.append(np.array([lone]))
    rows = _top_to_bottom(rows, centres)
    _, rack_direction = _fit_line(centres[rows[0]]) if rows else (None, None)
    ordered = [_order_row(r, centres, rack_direction) for r in rows]
    touching = _touching_spacings(ordered, widths)
    row_values = [_split_groups(r, t, gap_fraction) for r, t in zip(ordered, touching, strict=True)]
    on_rack = {i for r in rows for i in r}
    table = sorted((i for i in range(len(arr)) if i not in on_rack), key=lambda i: centres[i, 0])
    return RackLayout(row_values, table)


def _fit_line(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Total least squares line: (mean point, unit direction pointing right).

    The principal axis of the 2x2 scatter matrix in closed form (cheaper than an SVD per call).
    """
    mean = points.mean(axis=0)
    if len(points) < 2:
        return mean, np.array([1.0, 0.0])
    d = points - mean
    sxx, syy, sxy = float(d[:, 0] @ d[:, 0]), float(d[:, 1] @ d[:, 1]), float(d[:, 0] @ d[:, 1])
    angle = 0.5 * math.atan2(2 * sxy, sxx - syy)
    direction = np.array([math.cos(angle), math.sin(angle)])
    if direction[0] < 0:
        direction = -direction
    return mean, direction


def _inliers(
    point: np.ndarray,
    direction: np.ndarray,
    centres: np.ndarray,
    sizes: np.ndarray,
    pool: np.ndarray,
) -> np.ndarray:
    offset = centres[pool] - point
    distance = np.abs(offset[:, 0] * direction[1] - offset[:, 1] * direction[0])
    return pool[distance <= ROW_TOLERANCE * sizes[pool]]


def _longest_chain(
    members: np.ndarray, direction: np.ndarray, centres: np.ndarray, sizes: np.ndarray
) -> np.ndarray:
    """The largest run of members along the line with no gap over ``MAX_ROW_GAP`` tile sizes."""
    order = members[np.argsort(centres[members] @ direction)]
    along = centres[order] @ direction
    chains: list[list[int]] = [[int(order[0])]]
    for k in range(1, len(order)):
        local = (sizes[order[k]] + sizes[order[k - 1]]) / 2
        if along[k] - along[k - 1] > MAX_ROW_GAP * local:
            chains.append([])
        chains[-1].append(int(order[k]))
    return np.array(max(chains, key=len))


def _is_row_direction(direction: np.ndarray) -> bool:
    return abs(math.degrees(math.atan2(direction[1], direction[0]))) <= MAX_ROW_ANGLE


def _find_lines(centres: np.ndarray, sizes: np.ndarray, most: int) -> list[np.ndarray]:
    """Greedily take the line through the most tile centres, remove its tiles, repeat."""
    remaining = np.arange(len(centres))
    lines: list[np.ndarray] = []
    while len(remaining) >= 2 and len(lines) < most:
        best = _best_line(centres, sizes, remaining)
        if best is None or len(best) < 2:
            break
        lines.append(best)
        remaining = np.setdiff1d(remaining, best)
    return lines


def _best_line(centres: np.ndarray, sizes: np.ndarray, pool: np.ndarray) -> np.ndarray | None:
    """The line through the most tiles of ``pool`` (None if no two tiles make a row).

    Hypotheses are lines through a tile and one of its four nearest neighbours (a row's tiles are
    each other's neighbours).  All are scored at once by their raw inliers; only distinct inlier
    sets among the best-scoring ones are refined.
    """
    sub = centres[pool]
    dist = np.linalg.norm(sub[:, None, :] - sub[None, :, :], axis=2)
    np.fill_diagonal(dist, math.inf)
    k = min(4, len(pool) - 1)
    near = np.argsort(dist, axis=1)[:, :k]
    a = np.repeat(np.arange(len(pool)), k)
    b = near.reshape(-1)
    a, b = np.minimum(a, b), np.maximum(a, b)
    pairs = np.unique(np.stack([a, b], axis=1), axis=0)
    i, j = pool[pairs[:, 0]], pool[pairs[:, 1]]
    vec = centres[j] - centres[i]
    norm = np.linalg.norm(vec, axis=1)
    keep = (norm > 0) & (norm <= MAX_ROW_GAP * (sizes[i] + sizes[j]) / 2)
    keep &= np.abs(vec[:, 1]) <= np.abs(vec[:, 0]) * math.tan(math.radians(MAX_ROW_ANGLE))
    if not keep.any():
        return None
    i, vec, norm = i[keep], vec[keep], norm[keep]
    dirs = vec / norm[:, None]
    offsets = sub[None, :, :] - centres[i][:, None, :]
    perp = np.abs(offsets[:, :, 0] * dirs[:, 1:2] - offsets[:, :, 1] * dirs[:, 0:1])
    inliers = perp <= ROW_TOLERANCE * sizes[pool][None, :]
    counts = inliers.sum(axis=1)
    best: np.ndarray | None = None
    best_key: tuple[int, float, float] = (0, 0.0, 0.0)
    tried: set[bytes] = set()
    for h in np.argsort(-counts, kind="stable"):
        if best is not None and counts[h] + 2 < len(best):
            break  # refining adds a tile or two at most
        signature = inliers[h].tobytes()
        if signature in tried:
            continue
        if len(tried) >= MAX_REFINED:
            break
        tried.add(signature)
        members = _refine(centres[i[h]], dirs[h], centres, sizes, pool)
        if members is None:
            continue
        key = _line_key(members, centres, sizes)
        if key > best_key:
            best, best_key = members, key
    return best


def _line_key(members: np.ndarray, centres: np.ndarray, sizes: np.ndarray) -> tuple:
    """Most tiles first; then the straighter line; then the tighter one (two lone tiles side by
    side are a row, two diagonal ones are not)."""
    mean, d = _fit_line(centres[members])
    offset = centres[members] - mean
    scale = float(np.mean(sizes[members]))
    residual = float(np.mean(np.abs(offset[:, 0] * d[1] - offset[:, 1] * d[0]))) / scale
    spacing = float(np.ptp(centres[members] @ d)) / (len(members) - 1) / scale
    return (len(members), -round(residual, 2), -spacing)


def _refine(
    point: np.ndarray,
    direction: np.ndarray,
    centres: np.ndarray,
    sizes: np.ndarray,
    pool: np.ndarray,
) -> np.ndarray | None:
    """Inliers of a hypothesis, refitted twice so the line runs through its own tiles."""
    members = _inliers(point, direction, centres, sizes, pool)
    for _ in range(2):
        if len(members) < 2:
            return None
        members = _longest_chain(members, direction, centres, sizes)
        if len(members) < 2:
            return None
        point, fitted = _fit_line(centres[members])
        if not _is_row_direction(fitted):
            return None
        direction = fitted
        members = _inliers(point, direction, centres, sizes, pool)
    members = _longest_chain(members, direction, centres, sizes)
    return members if len(members) >= 2 else None


def _rack_rows(
    lines: list[np.ndarray], centres: np.ndarray, sizes: np.ndarray, max_rows: int
) -> list[np.ndarray]:
    """The rack: the longest line, plus lines parallel and close to it (up to ``max_rows``)."""
    if not lines:
        return []
    lines = sorted(lines, key=lambda m: (-len(m), float(centres[m, 1].mean())))
    rows = [lines[0]]
    point, direction = _fit_line(centres[lines[0]])
    scale = float(np.median(sizes[lines[0]]))
    for line in lines[1:]:
        if len(rows) >= max_rows:
            break
        p, d = _fit_line(centres[line])
        angle = math.degrees(math.acos(min(1.0, abs(float(d @ direction)))))
        offset = p - point
        spacing = abs(offset[0] * direction[1] - offset[1] * direction[0])
        if angle <= PARALLEL_TOLERANCE and spacing <= MAX_ROW_SPACING * scale:
            rows.append(line)
    return rows


def _lone_row_tile(
    row: np.ndarray, boxes: np.ndarray, centres: np.ndarray, sizes: np.ndarray
) -> int | None:
    """The one tile off the rack that stands where a second rack row would be, if there is one.

    A row takes two tiles to have a direction, so a row holding a single tile is never found as a
    line; it is recognised by where it stands relative to the rack row (parallel to it, at a row's
    distance, not far beyond its ends), by its box (as wide and as high as the rack tiles beside
    it) and by standing alone (no other tile off the rack touches it: tiles side by side on the
    table are a group lying there).  Only a long row establishes the rack well enough for that,
    and when two tiles or more qualify, none is taken: which one is the rack's is a guess.
    """
    if len(row) < LONE_ROW_MIN_TILES:
        return None
    point, direction = _fit_line(centres[row])
    normal = np.array([-direction[1], direction[0]])
    along = centres[row] @ direction
    widths = boxes[:, 2] - boxes[:, 0]
    heights = boxes[:, 3] - boxes[:, 1]
    off_row = np.setdiff1d(np.arange(len(boxes)), row)
    found: list[int] = []
    for i in off_row:
        others = off_row[off_row != i]
        gaps = np.linalg.norm(centres[others] - centres[i], axis=1)
        if np.any(gaps < LONE_ROW_ALONE * (sizes[others] + sizes[i]) / 2):
            continue
        position = float(centres[i] @ direction)
        beside = row[np.argsort(np.abs(along - position), kind="stable")[:3]]
        width = float(np.median(widths[beside]))
        height = float(np.median(heights[beside]))
        extent = abs(direction[1]) * width + abs(direction[0]) * height  # box across the row
        distance = abs(float((centres[i] - point) @ normal)) / extent
        reach = MAX_ROW_GAP * float(np.median(sizes[beside]))
        scale = math.sqrt(widths[i] * heights[i] / (width * height))
        aspect = (heights[i] / widths[i]) / (height / width)
        if (
            LONE_ROW_SPACING[0] <= distance <= LONE_ROW_SPACING[1]
            and along.min() - reach <= position <= along.max() + reach
            and LONE_ROW_SCALE[0] <= scale <= LONE_ROW_SCALE[1]
            and LONE_ROW_ASPECT[0] <= aspect <= LONE_ROW_ASPECT[1]
        ):
            found.append(int(i))
    return found[0] if len(found) == 1 else None


def _top_to_bottom(rows: list[np.ndarray], centres: np.ndarray) -> list[np.ndarray]:
    if not rows:
        return rows
    _, direction = _fit_line(centres[rows[0]])  # the longest row sets the rack's direction
    normal = np.array([-direction[1], direction[0]])
    if normal[1] < 0:
        normal = -normal
    return sorted(rows, key=lambda r: float((centres[r] @ normal).mean()))


def _order_row(
    members: np.ndarray, centres: np.ndarray, rack_direction: np.ndarray | None = None
) -> _OrderedRow:
    point, direction = _fit_line(centres[members])
    if len(members) == 1 and rack_direction is not None:
        direction = rack_direction  # a lone tile's row runs along the rack
    order = members[np.argsort(centres[members] @ direction)]
    return _OrderedRow(order, point, direction, centres[order] @ direction)


@dataclass(frozen=True)
class _OrderedRow:
    order: np.ndarray  # positions left to right
    point: np.ndarray
    direction: np.ndarray
    along: np.ndarray  # each tile's coordinate along the line

    @property
    def tilt(self) -> float:
        return abs(math.atan2(self.direction[1], self.direction[0]))


def _split_groups(row: _OrderedRow, touching: np.ndarray, gap_fraction: float) -> Row:
    """Split where the spacing exceeds the touching spacing by more than ``gap_fraction``."""
    order, along = row.order, row.along
    groups: list[list[int]] = [[int(order[0])]]
    for k in range(1, len(order)):
        if along[k] - along[k - 1] > (1 + gap_fraction) * touching[k - 1]:
            groups.append([])
        groups[-1].append(int(order[k]))
    point = (float(row.point[0]), float(row.point[1]))
    return Row(groups, point, (float(row.direction[0]), float(row.direction[1])))


def _touching_spacings(rows: list[_OrderedRow], widths: np.ndarray) -> list[np.ndarray]:
    """For each pair of neighbours in each row: how far apart they would be if they touched.

    A row slopes in the image because the rack recedes (perspective; the tiles stay upright) or
    because the camera is rolled (the tiles turn with the row).  Upright tiles touching along a row
    of slope t are W / cos t apart, W being the box width; turned or slanted tiles are closer than
    that, by a factor that drifts slowly along the row.  So each pair's spacing is measured in
    units of W / cos t, and the factor is learnt from the pairs that touch: a pair touches when its
    spacing is close to the smallest among its neighbours (three pairs each side) and not far
    above the rack's typical touching spacing; between touching pairs the factor is interpolated.
    Without evidence (the factor outside ``MIN_PITCH``..``MAX_PITCH``) it is 1.
    """
    units = []
    ratios = []
    for r in rows:
        base = widths[r.order] / math.cos(r.tilt)
        unit = (base[1:] + base[:-1]) / 2
        units.append(unit)
        ratios.append(np.diff(r.along) / unit)
    touching = [_locally_smallest(q) for q in ratios]
    pooled = np.concatenate([q[t] for q, t in zip(ratios, touching, strict=True)] or [np.ones(0)])
    typical = float(np.median(pooled)) if len(pooled) else 1.0
    result = []
    for q, t, unit in zip(ratios, touching, units, strict=True):
        t = t & (q <= TOUCHING_SPREAD * typical)
        if len(q) == 0:
            result.append(unit)
            continue
        if t.any():
            factor = np.interp(np.arange(len(q)), np.flatnonzero(t), q[t])
        else:
            factor = np.full(len(q), min(typical, float(np.min(q))))
        factor = np.where((factor >= MIN_PITCH) & (factor <= MAX_PITCH), factor, 1.0)
        result.append(factor * unit)
    return result


def _locally_smallest(ratios: np.ndarray, reach: int = 3, slack: float = 1.2) -> np.ndarray:
    """Pairs whose spacing is near the smallest around them; overlapping boxes (a duplicate
    detection, a tile half hidden behind its neighbour) say nothing about touching and are skipped.
    """
    usable = np.where(ratios >= MIN_PITCH, ratios, np.inf)
    return np.array(
        [
            bool(np.isfinite(usable[k]))
            and usable[k] <= slack * float(np.min(usable[max(0, k - reach) : k + reach + 1]))
            for k in range(len(ratios))
        ],
        dtype=bool,
    )


def tier_layout(
    places: Sequence[tuple[int, float, float] | None],
    centres: Sequence[tuple[float, float]],
    tile_widths: Sequence[float],
    *,
    gap_fraction: float = GAP_FRACTION,
) -> RackLayout:
    """The layout of a rack read by the tier stage (``vision.tiers``): each tile's place is its
    tier and its extent along the tier's straightened strip, so rows are tiers (top to bottom,
    any number), tiles are ordered along the strip and groups split where the empty space
    between neighbours exceeds ``gap_fraction`` of a tile's width in that strip (its tiles'
    median width, else ``tile_widths``; the same all along the strip: perspective is undone).
    Tiles with no place are the table, left to
    right.

    >>> places = [(1, 0, 10), (0, 26, 36), (0, 0, 10), (0, 10, 20), None]
    >>> layout = tier_layout(places, [(0, 0)] * 4 + [(50, 50)], [10.0, 10.0])
    >>> layout.rows, layout.table
    ([[[2, 3], [1]], [[0]]], [4])
    """
    rows: list[Row] = []
    for tier, width in enumerate(tile_widths):
        on = sorted((p[1], i) for i, p in enumerate(places) if p is not None and p[0] == tier)
        if not on:
            continue
        # a tile's width in this strip: the tiles' own median where two or more show it
        widths = [places[i][2] - places[i][1] for _, i in on]
        width = float(np.median(widths)) if len(widths) >= 2 else width
        groups: list[list[int]] = []
        for x1, i in on:
            previous = groups[-1][-1] if groups else None
            if previous is None or x1 - places[previous][2] > gap_fraction * width:
                groups.append([i])
            else:
                groups[-1].append(i)
        members = np.float64([centres[i] for _, i in on])
        point, direction = _fit_line(members) if len(members) > 1 else (members[0], np.ones(2))
        direction = direction / np.linalg.norm(direction)
        rows.append(Row(groups, (float(point[0]), float(point[1])), tuple(map(float, direction))))
    table = sorted((i for i, p in enumerate(places) if p is None), key=lambda i: centres[i][0])
    return RackLayout(rows, table)
