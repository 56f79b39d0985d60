"""Cut one tile out of a photo as the recogniser's classifier reads it.

The two-stage recogniser finds tiles with a detector and reads each one from a small square crop:
:func:`crop_tile` for an upright box, :func:`straight_crop` for a turned (oriented) box, stood on
its long side.  Training cuts its crops with these same functions (``vision.training.crops``), so
training and inference agree.
"""

from __future__ import annotations

import math

import numpy as np

from vision.types import CLASS_NAMES, Box

CROP_SIZE = 64  # px; the number is ~25 px tall at this size, enough to read it
CROP_PAD = 0.06  # fraction of the box added on each side: the tile's edge stays in view

# A classifier may learn one class beyond the 53 identities: "not a tile" (table, rack, half a
# tile, two tiles' seam).  Its folder sorts after 52_FJ, so it is class 53; the recogniser drops a
# box the classifier reads as not a tile.
NOT_A_TILE = len(CLASS_NAMES)


def crop_tile(
    image: np.ndarray, box: Box, size: int = CROP_SIZE, pad: float = CROP_PAD
) -> np.ndarray:
    """The ``size`` x ``size`` crop of one tile box ``(x1, y1, x2, y2)`` in pixels.

    The box grows by ``pad`` of its size on each side, is cut (edges outside the image are filled
    black, as in the letterboxed photos) and resized to a square.

    >>> crop_tile(np.zeros((100, 100, 3), np.uint8), (10, 10, 40, 60), size=32).shape
    (32, 32, 3)
    """
    import cv2

    x1, y1, x2, y2 = box
    if x2 <= x1 or y2 <= y1:
        raise ValueError(f"empty tile box {box}")
    w, h = x2 - x1, y2 - y1
    x1, x2 = x1 - pad * w, x2 + pad * w
    y1, y2 = y1 - pad * h, y2 + pad * h
    ix1, iy1, ix2, iy2 = (int(round(v)) for v in (x1, y1, x2, y2))
    ih, iw = image.shape[:2]
    out = np.zeros((max(iy2 - iy1, 1), max(ix2 - ix1, 1), 3), dtype=image.dtype)
    sx1, sy1, sx2, sy2 = max(ix1, 0), max(iy1, 0), min(ix2, iw), min(iy2, ih)
    if sx2 > sx1 and sy2 > sy1:
        out[sy1 - iy1 : sy2 - iy1, sx1 - ix1 : sx2 - ix1] = image[sy1:sy2, sx1:sx2]
    interp = cv2.INTER_AREA if out.shape[0] > size else cv2.INTER_LINEAR
    return cv2.resize(out, (size, size), interpolation=interp)


Rect = tuple[float, float, float, float, float]  # cx, cy, w, h, angle in degrees (RotatedRect)


def upright_rect(rect: Rect) -> Rect:
    """The same turned box described with its long side as height and the smallest turn that
    stands it upright: ``-90 < angle <= 90``.

    >>> upright_rect((5, 5, 40, 20, 30))
    (5.0, 5.0, 20.0, 40.0, -60.0)
    """
    cx, cy, w, h, angle = (float(v) for v in rect)
    if w > h:  # the same box, described from its long side
        w, h, angle = h, w, angle + 90.0
    angle -= 180.0 * math.ceil((angle - 90.0) / 180.0)
    return cx, cy, w, h, angle


def level_rect(rect: Rect) -> Rect:
    """The same turned box described with the smallest turn that levels it, ``-45 < angle <=
    45``, whichever side comes out longer.

    A box that is wider than tall once levelled is ambiguous: a tile lying on its side, or a
    standing tile seen from above, squashed in height (a rack shot from high up).

    >>> level_rect((5, 5, 40, 20, 30))
    (5.0, 5.0, 40.0, 20.0, 30.0)
    >>> level_rect((5, 5, 20, 40, 80))
    (5.0, 5.0, 40.0, 20.0, -10.0)
    """
    cx, cy, w, h, angle = (float(v) for v in rect)
    quarters = math.ceil((angle - 45.0) / 90.0)
    if quarters % 2:
        w, h = h, w
    return cx, cy, w, h, angle - 90.0 * quarters


def corner_rect(corners: np.ndarray) -> Rect:
    """The turned box of four corners named after the tile (top-left, top-right, bottom-right,
    bottom-left), described so that turning by its angle stands the tile as it stands
    (``straight_crop(..., turn="given")``): ``w`` along the top edge, ``h`` down the left one.

    >>> corner_rect(np.float32([[10, 0], [10, 4], [0, 4], [0, 0]]))  # lying, top edge down
    (5.0, 2.0, 4.0, 10.0, 90.0)
    """
    c = np.asarray(corners, np.float64).reshape(4, 2)
    top, left = c[1] - c[0], c[3] - c[0]
    angle = math.degrees(math.atan2(top[1], top[0]))
    cx, cy = c.mean(axis=0)
    return float(cx), float(cy), float(np.hypot(*top)), float(np.hypot(*left)), angle


def _stood(rect: Rect, turn: str) -> Rect:
    if turn == "long":
        return upright_rect(rect)
    if turn == "level":
        return level_rect(rect)
    if turn == "given":
        return tuple(float(v) for v in rect)  # type: ignore[return-value]
    raise ValueError(f"unknown turn {turn!r}: use long, level or given")


def straight_crop(
    image: np.ndarray,
    rect: Rect,
    size: int = CROP_SIZE,
    pad: float = CROP_PAD,
    turn: str = "long",
) -> np.ndarray:
    """The ``size`` x ``size`` crop of a turned tile box, stood upright.

    ``rect`` is (cx, cy, w, h, angle in degrees), OpenCV's ``RotatedRect`` (an oriented-box
    detector's box).  ``turn`` says how to stand it:

    - ``long``: by the smallest angle that makes its long side vertical, so a tile lying at 30
      degrees is read upright (one turned past 90 degrees comes out upside down, as it would on
      a rack);
    - ``level``: by the smallest angle that levels it (:func:`level_rect`), for a tile whose
      picture is squashed wider than tall;
    - ``given``: by ``angle`` itself, ``w`` across and ``h`` down the crop (a box that knows
      which way its tile stands: :func:`corner_rect`).

    Grown by ``pad`` on each side; outside the image is black.

    >>> image = np.zeros((100, 100, 3), np.uint8)
    >>> straight_crop(image, (50, 50, 40, 20, 30), size=32).shape
    (32, 32, 3)
    """
    import cv2

    if rect[2] <= 0 or rect[3] <= 0:
        raise ValueError(f"empty tile box {rect}")
    cx, cy, w, h, angle = _stood(rect, turn)
    pw, ph = w * (1 + 2 * pad), h * (1 + 2 * pad)
    matrix = cv2.getRotationMatrix2D((cx, cy), angle, 1.0)
    matrix[:, 2] += (pw / 2 - cx, ph / 2 - cy)
    out = cv2.warpAffine(
        image,
        matrix,
        (max(int(round(pw)), 1), max(int(round(ph)), 1)),
        flags=cv2.INTER_LINEAR,
        borderValue=(0, 0, 0),
    )
    interp = cv2.INTER_AREA if out.shape[0] > size else cv2.INTER_LINEAR
    return cv2.resize(out, (size, size), interpolation=interp)
