"""Reading that adapts to the photo: what the recogniser's first pass tells it to do next.

The recogniser (``vision.recognizer.Recognizer``) runs its detector once on the whole photo.
That first pass says how large the tiles are and which way they stand, and the functions here
turn that into the next steps, each switched on by its own option in ``models/recognizer.yaml``
(``docs/recognition.md`` gives the rule that switched each on):

- **a second look** (:func:`plan_views`): when the tiles are far smaller than the detector reads
  best, or turned far from upright, the detector looks again at a *view*: the photo cut around
  the tiles, scaled so that a tile comes out at the size it reads best and turned so that the
  tiles stand upright.  A view is one similarity map (scale, turn, shift) into a detector-sized
  square, the scale coming down until the tiles fit it.  The boxes found in the view go back to
  the photo through the inverse map (:func:`map_back`).  (A rack's tiers are straightened
  by ``vision.tiers`` instead; these views serve the whole-photo path.)
- **the tiles' up direction decided per photo** (:func:`unify_angles`): tiles lying across the
  photo (turned near 90 degrees) can be stood up either way; all the tiles of one rack share it, so
  the photo's tiles are read both ways and the surer way is kept for all.
- **colour decided within the photo** (:func:`ink_features`, :func:`colour_model`): a tile the
  classifier is unsure of between two colours is compared with the photo's own sure tiles of
  those colours (its ink's colour relative to its face), and only its colour share moves.
- **one box per tile** (:func:`duplicates`) and **cut tiles flagged** (:func:`cut_share`): a
  tile cut by the frame's edge is reported with its box and ``TileReading.unreadable`` set
  instead of a guess.

Everything here is numpy and OpenCV on the first pass's outputs; nothing here runs a network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.crops import upright_rect

# the four colours' class blocks: index = colour * 13 + (number - 1), colours R, Y, B, K
COLOURS = 4
PER_COLOUR = 13


@dataclass(frozen=True)
class View:
    """One second look: ``matrix`` (2 x 3) maps photo pixels into a ``size`` x ``size`` square."""

    matrix: np.ndarray
    size: int
    reason: str  # "small" or "turned"


def tile_length(turned: np.ndarray) -> float:
    """The median long side of turned boxes ``(cx, cy, w, h, degrees)``, in their pixels."""
    if not len(turned):
        return 0.0
    return float(np.median(np.maximum(turned[:, 2], turned[:, 3])))


def photo_angle(turned: np.ndarray) -> tuple[float, float]:
    """The tiles' dominant turn from upright, ``-90 < angle <= 90`` degrees (the turn that
    stands their long sides up, ``vision.crops.upright_rect``), and how consistent the tiles are
    about it (0 scattered .. 1 all alike): the mean of the doubled angles, so that a tile stood
    at 89 and one at -89 agree.

    >>> angle, agree = photo_angle(np.float32([[0, 0, 10, 20, 40], [0, 0, 10, 20, 44]]))
    >>> round(angle), round(agree, 2)
    (42, 1.0)
    """
    if not len(turned):
        return 0.0, 0.0
    angles = np.radians([upright_rect(tuple(r))[4] for r in turned])
    return _axial_mean(angles, np.maximum(turned[:, 2], turned[:, 3]).astype(np.float64))


def _axial_mean(radians: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """The weighted mean of directions that have no sign (a turn of 180 degrees is the same),
    in degrees, ``-90 < angle <= 90``, and how much they agree (0..1): the mean of the doubled
    angles, halved."""
    doubled = 2 * radians
    c, s = float(np.sum(weights * np.cos(doubled))), float(np.sum(weights * np.sin(doubled)))
    agree = math.hypot(c, s) / max(float(weights.sum()), 1e-9)
    angle = math.degrees(math.atan2(s, c)) / 2
    if angle <= -90:
        angle += 180
    return angle, agree


def row_angle(turned: np.ndarray) -> tuple[float, float]:
    """The turn of the rows the tiles stand in, in :func:`photo_angle`'s terms (the turn that
    stands the tiles up when their rows run across), and how consistent it is (0..1).

    Tiles on a rack touch their row neighbours side by side, so each tile's nearest neighbour
    lies along its row: the doubled angles of the nearest-neighbour steps agree.  Unlike the
    boxes' own angles, which scatter on tiles lying sideways (a tile box is nearly as wide as
    tall from above), the steps between centres keep their direction at any turn.

    >>> row = np.float32([[10 + 30 * k, 50 + 30 * k, 20, 28, 45] for k in range(5)])
    >>> angle, agree = row_angle(row)
    >>> round(angle), round(agree, 2)
    (45, 1.0)
    """
    if len(turned) < 2:
        return 0.0, 0.0
    centres = turned[:, :2].astype(np.float64)
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    np.fill_diagonal(gaps, np.inf)
    step = centres[gaps.argmin(axis=1)] - centres
    return _axial_mean(np.arctan2(step[:, 1], step[:, 0]), np.ones(len(step)))


def box_corners(turned: np.ndarray) -> np.ndarray:
    """The corners of turned boxes ``(n, 5)`` = cx, cy, w, h, degrees: ``(4 n, 2)``, four a box."""
    import cv2

    return np.stack(
        [cv2.boxPoints(((r[0], r[1]), (r[2], r[3]), r[4])) for r in turned.astype(np.float64)]
    ).reshape(-1, 2)


def plan_views(
    turned: np.ndarray,
    image_size: tuple[int, int],
    det_size: int,
    *,
    det_scale: float,
    small_below: float = 0.0,
    target: float = 100.0,
    turned_from: float = 90.0,
    turned_to: float = 90.0,
    min_tiles: int = 2,
) -> list[View]:
    """The views of a second look, or none when the first pass's tiles read as they are.

    ``turned`` are the first pass's boxes in photo pixels, ``det_scale`` the first pass's scale
    from photo to detector pixels.  A second look is due when the median tile's long side in the
    detector was under ``small_below`` pixels (scaled to ``target`` in the view: a photo taken
    too far), or when the turn of the rows the tiles stand in (:func:`row_angle`, agreeing at
    least 0.7) is at least ``turned_from`` and at most ``turned_to`` degrees from upright
    (turned back upright in the view).  The region is the tiles' hull plus one tile on every
    side, in one square (the scale comes down until it fits).
    """
    if len(turned) < min_tiles:
        return []
    length = tile_length(turned)
    angle, agree = row_angle(turned)
    small = small_below > 0 and length * det_scale < small_below
    turn = agree >= 0.7 and turned_from <= abs(angle) <= turned_to
    if not small and not turn:
        return []
    import cv2

    scale = (target / length) if small else det_scale  # photo px -> view px
    phi = angle if turn else 0.0  # turning the photo by -phi stands the tiles up
    # the region, in coordinates turned upright (about the origin), grown by one tile per side
    rot = cv2.getRotationMatrix2D((0.0, 0.0), phi, 1.0)
    pts = box_corners(turned) @ rot[:, :2].T
    lo, hi = pts.min(axis=0) - length, pts.max(axis=0) + length
    while float(max(hi - lo)) * scale > det_size:  # the region fits one square
        scale *= 0.9
    reason = "small" if small else "turned"
    # the square's centre in upright coordinates; photo -> upright (rot), -> scaled about it
    ox, oy = (lo + hi) / 2
    m = np.vstack([rot, [0, 0, 1]])
    s = np.float64(
        [
            [scale, 0, det_size / 2 - scale * ox],
            [0, scale, det_size / 2 - scale * oy],
            [0, 0, 1],
        ]
    )
    return [View((s @ m)[:2], det_size, reason)]


def map_back(turned: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Turned boxes found in a view, in photo pixels (``matrix`` maps photo to view)."""
    import cv2

    if not len(turned):
        return np.zeros((0, 5), np.float32)
    inverse = cv2.invertAffineTransform(np.asarray(matrix, np.float64))
    out = []
    for r in turned.astype(np.float64):
        pts = cv2.boxPoints(((r[0], r[1]), (r[2], r[3]), r[4])) @ inverse[:, :2].T + inverse[:, 2]
        (cx, cy), (w, h), a = cv2.minAreaRect(pts.astype(np.float32))
        out.append((cx, cy, w, h, a))
    return np.float32(out).reshape(-1, 5)


def inside(turned: np.ndarray, views: list[View]) -> np.ndarray:
    """Which boxes' centres some view's square covers (their second look replaces them)."""
    hit = np.zeros(len(turned), bool)
    for view in views:
        centres = turned[:, :2].astype(np.float64) @ view.matrix[:, :2].T + view.matrix[:, 2]
        hit |= np.all((centres >= 0) & (centres <= view.size), axis=1)
    return hit


def hulls(turned: np.ndarray, image_size: tuple[int, int]) -> np.ndarray:
    """The upright hulls (x1, y1, x2, y2) of turned boxes, clipped to the photo (w, h)."""
    if not len(turned):
        return np.zeros((0, 4), np.float32)
    corners = box_corners(turned).reshape(-1, 4, 2)
    boxes = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
    w, h = image_size
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, w)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, h)
    return boxes.astype(np.float32)


def nms_turned(turned: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """Indices kept by rotated NMS (OpenCV), surest first."""
    import cv2

    if not len(turned):
        return np.zeros(0, int)
    rects = [((float(r[0]), float(r[1])), (float(r[2]), float(r[3])), float(r[4])) for r in turned]
    idx = cv2.dnn.NMSBoxesRotated(rects, [float(s) for s in scores], 0.0, iou)
    return np.asarray(idx, dtype=int).reshape(-1)


# the up direction ------------------------------------------------------------------------------


def unify_angles(turned: np.ndarray, angle: float) -> np.ndarray:
    """The boxes described so that turning by their angle stands each the way the photo's
    dominant turn ``angle`` stands it (``straight_crop(..., turn="given")``): the long side
    down the crop, the turn within 90 degrees of ``angle``.

    >>> unify_angles(np.float32([[0, 0, 10, 20, -88]]), 89.0)[0, 4].item()
    92.0
    """
    out = []
    for r in turned:
        cx, cy, w, h, a = upright_rect(tuple(r))
        a += 180.0 * round((angle - a) / 180.0)
        out.append((cx, cy, w, h, a))
    return np.float32(out).reshape(-1, 5)


# colour within the photo ------------------------------------------------------------------------

# the middle of a crop where the number stands (rows, columns as shares of the crop)
INK_ROWS = (0.12, 0.72)
INK_COLS = (0.15, 0.85)
LUMA = np.float32([0.114, 0.587, 0.299])


def _upper_threshold(luma: np.ndarray) -> np.float32:
    """``np.percentile(luma, 60)`` to the bit (linear interpolation between the two order
    statistics around it, in ``luma``'s float32, as numpy computes it), without its overhead."""
    n = len(luma)
    virtual = (n - 1) * 0.6
    below = math.floor(virtual)
    if virtual >= n - 1:
        return luma.max()
    gamma = virtual - below
    part = np.partition(luma, (below, below + 1))
    a, b = part[below], part[below + 1]
    diff = b - a
    if gamma >= 0.5:
        return b - diff * (1 - gamma)
    return a + diff * gamma


def _median_plus_one(values: np.ndarray) -> np.float32:
    """``np.median(values.astype(np.float32) + 1)`` of uint8 values, to the bit (whole numbers
    and their halves are exact in float32)."""
    m = len(values)
    k1, k2 = (m - 1) // 2, m // 2
    part = np.partition(values, (k1, k2))
    return (np.float32(part[k1]) + np.float32(part[k2]) + np.float32(2.0)) / np.float32(2.0)


def _against_face(crop: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The middle of an upright crop, each pixel divided by the face's colour (the median of its
    brightest 40 %), with each pixel's brightness against the face's and how far its hue is from
    the face's: dividing by the face cancels the light's colour.  Returns ``rel`` as channel
    planes ``(3, n)`` (B, G, R), ``darkness`` and ``chroma`` ``(n,)``.

    Per pixel, every number is the float32 arithmetic of the row-per-pixel form (``px / face``
    and so on); only the layout (channel planes, contiguous for numpy's vector loops) and the
    order statistics (partitions instead of ``np.percentile`` / ``np.median``) are for speed."""
    h, w = crop.shape[:2]
    mid = crop[
        int(h * INK_ROWS[0]) : int(h * INK_ROWS[1]), int(w * INK_COLS[0]) : int(w * INK_COLS[1])
    ]
    u8 = mid.reshape(-1, 3)
    px = u8.astype(np.float32)
    px += 1.0
    luma = px @ LUMA
    upper = luma >= _upper_threshold(luma)
    planes = np.ascontiguousarray(u8.T)
    face = np.float32([_median_plus_one(p[upper]) for p in planes])
    rel = planes.astype(np.float32)
    rel += 1.0
    rel /= face[:, None]
    ratio = rel[0] / rel[1]
    chroma = np.abs(np.log(ratio))
    np.divide(rel[2], rel[1], out=ratio)
    chroma += np.abs(np.log(ratio))
    return rel, luma / float(face @ LUMA), chroma


def ink_features(crop: np.ndarray) -> np.ndarray | None:
    """The colour of a tile's ink relative to its face, from an upright crop: ``(log B/G,
    log R/G, log darkness)`` of the ink's mean over the face's, or None when the crop shows
    too little ink."""
    rel, darkness, chroma = _against_face(crop)
    # ink: darker than the face, or of a clearly other hue than the face
    ink = (darkness < 0.7) | (chroma > 0.35)
    count = int(np.count_nonzero(ink))
    if count < max(8, 0.02 * len(darkness)):
        return None
    # the ink's mean, summed pixel by pixel in order as ``rel[ink].mean(axis=0)`` of pixel rows
    # sums (a running float32 sum), then divided by the count as numpy's mean divides
    mean = np.add.accumulate(rel[:, ink], axis=1)[:, -1].copy()
    np.true_divide(mean, np.intp(count), out=mean, casting="unsafe")
    return np.float32(
        [np.log(mean[0] / mean[1]), np.log(mean[2] / mean[1]), np.log(float(mean @ LUMA))]
    )


def colour_marginals(probs: np.ndarray) -> np.ndarray:
    """Each row's probability of each colour R, Y, B, K (the false joker left out)."""
    return probs[:, : COLOURS * PER_COLOUR].reshape(-1, COLOURS, PER_COLOUR).sum(axis=2)


# the two pairs of colours a set's printing confuses: red / yellow (orange), blue / black
PAIRS = ((0, 1), (2, 3))


def colour_model(
    probs: np.ndarray,
    features: list[np.ndarray | None],
    *,
    pair_mass: float = 0.9,
    min_gap: float = 0.3,
    min_separation: float = 3.0,
    floor: float = 0.05,
) -> tuple[np.ndarray, list[int]]:
    """The probabilities with the colours of a confusable pair decided within the photo.

    For each pair (red / yellow, blue / black), the photo's tiles read as that pair (at least
    ``pair_mass`` of their probability on its two colours) are split in two along one number of
    their ink (:func:`ink_features`, relative to the face, so the light's colour cancels): how
    coloured it is for blue / black, its hue for red / yellow (:func:`_pair_axis`).  Only when
    the two groups stand clearly apart (means at least ``min_gap`` apart and ``min_separation``
    times their spread, at least ``floor``) does the photo hold both colours.  The groups are
    named (blue / black: the more coloured group is blue, black ink being grey; red / yellow: as
    the classifier agrees best, its probabilities summed in log), each group's mean is that
    colour's ink in this photo, and every tile of the pair has its share of the two colours
    reweighed by how well its ink matches each (Student's t likelihoods, :func:`_t_loglik`):
    within a colour the numbers keep their proportions, and the pair keeps its total.  A photo
    showing one colour of a pair, or under 3 tiles of it, is left alone.
    Returns the new probabilities and the rows changed."""
    out = np.array(probs, np.float64, copy=True)
    marg = colour_marginals(out)
    changed: list[int] = []
    for a, b in PAIRS:
        rows = [
            i
            for i in range(len(out))
            if features[i] is not None and marg[i, a] + marg[i, b] >= pair_mass
        ]
        if len(rows) < 3:
            continue
        x = np.float64([_pair_axis(features[i], (a, b)) for i in rows])[:, None]
        groups = _two_means(x)
        if groups is None:
            continue
        centres = [x[groups == g].mean(axis=0) for g in (0, 1)]
        spread = np.maximum(
            np.sqrt(np.mean([((x[groups == g] - centres[g]) ** 2).mean() for g in (0, 1)])),
            floor,
        )
        gap = float(abs(centres[0][0] - centres[1][0]))
        if gap < min_gap or gap < min_separation * float(spread):
            continue
        if (a, b) == (2, 3):  # black ink is grey against the face: the more coloured group is blue
            blue_first = centres[0][0] > centres[1][0]
            chart = {a: centres[0], b: centres[1]} if blue_first else {a: centres[1], b: centres[0]}
        else:  # named so that the classifier agrees best
            logp = np.log(np.maximum(marg[rows][:, [a, b]], 1e-9))
            keep = logp[groups == 0, 0].sum() + logp[groups == 1, 1].sum()
            swap = logp[groups == 0, 1].sum() + logp[groups == 1, 0].sum()
            chart = (
                {a: centres[0], b: centres[1]} if keep >= swap else {a: centres[1], b: centres[0]}
            )
        for k, i in enumerate(rows):
            loglik = {c: _t_loglik(float((x[k] - chart[c])[0] / spread)) for c in (a, b)}
            total = marg[i, a] + marg[i, b]
            la = math.log(max(marg[i, a], 1e-9)) + loglik[a]
            lb = math.log(max(marg[i, b], 1e-9)) + loglik[b]
            pa = total / (1.0 + math.exp(min(lb - la, 700.0)))
            for c, new in ((a, pa), (b, total - pa)):
                block = slice(c * PER_COLOUR, (c + 1) * PER_COLOUR)
                if marg[i, c] > 0:
                    out[i, block] *= new / marg[i, c]
                else:  # no share to scale: spread it as the other colour's numbers
                    other = slice((a + b - c) * PER_COLOUR, (a + b - c + 1) * PER_COLOUR)
                    out[i, block] = new * out[i, other] / max(out[i, other].sum(), 1e-12)
            if np.argmax(out[i]) != np.argmax(probs[i]):
                changed.append(int(i))
    out /= out.sum(axis=1, keepdims=True)
    return out.astype(np.float32), sorted(changed)


def _t_loglik(z: float, dof: float = 3.0) -> float:
    """Log likelihood (up to a constant) of a standardised distance under Student's t: heavy
    tails, so that a group's spread guessed from a few tiles cannot overrule the classifier on
    its own."""
    return -(dof + 1) / 2 * math.log1p(z * z / dof)


def _pair_axis(feature: np.ndarray, pair: tuple[int, int]) -> float:
    """The one number that tells a pair's colours apart in ink relative to the face: for blue /
    black, how coloured the ink is (black is grey); for red / yellow (orange), its hue angle
    (orange lies toward green)."""
    bg, rg = float(feature[0]), float(feature[1])
    if pair == (2, 3):
        return math.hypot(bg, rg)
    return math.atan2(bg, rg)


def _two_means(x: np.ndarray, rounds: int = 10) -> np.ndarray | None:
    """Two groups of the rows of ``x`` (k-means, k = 2, started from the two rows furthest
    apart along the main axis); None when one group comes out empty."""
    centred = x - x.mean(axis=0)
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    along = centred @ axis
    centres = np.stack([x[int(np.argmin(along))], x[int(np.argmax(along))]])
    groups = np.zeros(len(x), int)
    before = None
    for _ in range(rounds):
        groups = np.argmin(((x[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        if groups.min() == groups.max():
            return None
        if before is not None and np.array_equal(groups, before):
            break  # settled: the same groups give the same centres, round after round
        centres = np.stack([x[groups == g].mean(axis=0) for g in (0, 1)])
        before = groups
    return groups


# one box per tile, and tiles that cannot be read ---------------------------------------------


def duplicates(turned: np.ndarray, scores: np.ndarray, overlap: float) -> np.ndarray:
    """Which boxes to drop as a second box on one tile: a box of which ``overlap`` of the
    smaller box's area is shared with a surer box of similar size (within a factor 1.6), so
    that two boxes on one tile merge, while tiles touching in a row keep theirs.  True = drop."""
    import cv2

    drop = np.zeros(len(turned), bool)
    if overlap >= 1.0 or len(turned) < 2:
        return drop
    rects = [((float(r[0]), float(r[1])), (float(r[2]), float(r[3])), float(r[4])) for r in turned]
    area = turned[:, 2] * turned[:, 3]
    kept: list[int] = []
    for i in np.argsort(-scores, kind="stable"):
        for j in kept:
            ratio = area[i] / max(area[j], 1e-9)
            if not 1 / 1.6 <= ratio <= 1.6:
                continue
            found, pts = cv2.rotatedRectangleIntersection(rects[i], rects[j])
            if found == cv2.INTERSECT_NONE or pts is None or len(pts) < 3:
                continue
            shared = float(cv2.contourArea(cv2.convexHull(pts)))
            if shared >= overlap * min(area[i], area[j]):
                drop[i] = True
                break
        if not drop[i]:
            kept.append(int(i))
    return drop


def cut_share(rect: np.ndarray | tuple[float, ...], image_size: tuple[int, int]) -> float:
    """The share of a turned box's area outside the photo (w, h): a tile cut by the frame."""
    import cv2

    cx, cy, w, h, a = (float(v) for v in rect)
    area = w * h
    if area <= 0:
        return 0.0
    W, H = image_size
    frame = ((W / 2, H / 2), (float(W), float(H)), 0.0)
    found, pts = cv2.rotatedRectangleIntersection(((cx, cy), (w, h), a), frame)
    if found == cv2.INTERSECT_NONE or pts is None or len(pts) < 3:
        return 1.0
    return max(0.0, 1.0 - float(cv2.contourArea(cv2.convexHull(pts))) / area)


def cut_short(turned: np.ndarray, image_size: tuple[int, int], share: float) -> np.ndarray:
    """Which boxes are tiles cut by the frame: touching its edge (within 2 px) and at least
    ``share`` smaller in area than the photo's typical tile (the median box that touches no
    edge, or of all boxes when under two do).  The detector boxes only the part of a tile
    inside the frame, so a cut tile's box is short, not outside.

    >>> cut_short(np.float32([[50, 50, 20, 30, 0], [100, 50, 20, 30, 0], [5, 50, 10, 30, 0]]),
    ...           (200, 100), 0.3).tolist()
    [False, False, True]
    """
    if share >= 1.0 or not len(turned):
        return np.zeros(len(turned), bool)
    w, h = image_size
    hull = hulls(turned, image_size)
    edge = 2.0
    touching = (hull[:, 0] <= edge) | (hull[:, 1] <= edge)
    touching |= (hull[:, 2] >= w - edge) | (hull[:, 3] >= h - edge)
    area = turned[:, 2] * turned[:, 3]
    whole = area[~touching] if (~touching).sum() >= 2 else area
    typical = float(np.median(whole))
    return touching & (area < (1.0 - share) * typical)
