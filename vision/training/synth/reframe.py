"""Framing a photo again: the view a phone held closer, turned or cropped to another aspect would
have taken of the same scene, as one affine map from the photo to a new frame.

A ``View`` maps the photo's continuous pixel coordinates (pixel ``(i, j)`` covers ``[i, i + 1) x
[j, j + 1)``) into a frame of ``size``; ``View.apply`` draws it (area-averaged when it shrinks,
bilinear when it enlarges, mid-grey where the photo does not reach) and ``View.polygon`` moves a
tile's outline with the pixels.  ``window`` builds the view of a turned rectangle of the photo:
its centre, width (photo pixels), the turn (degrees anticlockwise as seen) and the frame size.
The framing benchmark (``benchmarks/framing.py``) and the training data (``real.py``) share it.

>>> view = window((50.0, 50.0), 100.0, 0.0, (200, 100))
>>> view.polygon(np.float64([[0, 25], [100, 75]])).tolist()
[[0.0, 0.0], [200.0, 100.0]]
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

GREY = 128
# a tile with at least this share of its outline's area inside a new frame is whole enough to be
# read; with less, but some, it is cut by the frame edge
WHOLE_INSIDE = 0.9


@dataclass(frozen=True)
class View:
    """An affine map (2 x 3) from a photo's pixels to a frame of ``size`` (width, height)."""

    matrix: np.ndarray
    size: tuple[int, int]

    @property
    def scale(self) -> float:
        """How many frame pixels one photo pixel becomes (the map's linear size)."""
        return float(np.sqrt(abs(np.linalg.det(self.matrix[:, :2]))))

    def apply(self, image: np.ndarray) -> np.ndarray:
        """The photo seen through this view."""
        matrix = np.asarray(self.matrix, np.float64)
        scale = self.scale
        if scale < 0.8:  # shrink with area averaging first: a bilinear warp would alias
            h, w = image.shape[:2]
            small = cv2.resize(
                image,
                (max(1, round(w * scale)), max(1, round(h * scale))),
                interpolation=cv2.INTER_AREA,
            )
            sx, sy = small.shape[1] / w, small.shape[0] / h
            matrix = matrix @ np.diag([1 / sx, 1 / sy, 1.0])
            image = small
        # warpAffine maps pixel centres: shift by half a pixel on both sides of the map
        half = np.float64([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
        full = np.vstack([matrix, [0, 0, 1]])
        on_centres = (np.linalg.inv(half) @ full @ half)[:2]
        return cv2.warpAffine(
            image,
            on_centres,
            self.size,
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(GREY, GREY, GREY),
        )

    def polygon(self, points: np.ndarray) -> np.ndarray:
        """Points ``(N, 2)`` of the photo moved into the frame."""
        points = np.asarray(points, np.float64).reshape(-1, 2)
        return points @ self.matrix[:, :2].T + self.matrix[:, 2]


def window(
    centre: tuple[float, float], width: float, degrees: float, size: tuple[int, int]
) -> View:
    """The view of a rectangle of the photo ``width`` photo pixels wide (its height follows the
    frame's aspect) centred on ``centre``, turned ``degrees`` anticlockwise as seen (the photo
    turns, the frame stays upright), drawn into a frame of ``size``."""
    w, h = size
    scale = w / width
    rotation = cv2.getRotationMatrix2D((0.0, 0.0), degrees, scale)  # about the origin
    shift = np.float64([w / 2, h / 2]) - rotation[:, :2] @ np.float64(centre)
    return View(np.column_stack([rotation[:, :2], shift]), (int(w), int(h)))


def inside_share(polygon: np.ndarray, size: tuple[int, int]) -> float:
    """The share of a convex outline's area inside a frame of ``size``."""
    hull = cv2.convexHull(np.asarray(polygon, np.float32).reshape(-1, 1, 2)).reshape(-1, 2)
    area = float(cv2.contourArea(hull))
    if area <= 0:
        return 0.0
    w, h = size
    frame = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    if cv2.contourArea(hull, oriented=True) < 0:
        hull = hull[::-1]
    inter, _ = cv2.intersectConvexConvex(np.ascontiguousarray(hull), frame)
    return float(min(1.0, max(0.0, inter) / area))


def clipped_box(polygon: np.ndarray, size: tuple[int, int]) -> tuple[float, float, float, float]:
    """The upright box of an outline, clipped to a frame of ``size``."""
    points = np.asarray(polygon, np.float64).reshape(-1, 2)
    w, h = size
    x0, y0 = points.min(axis=0)
    x1, y1 = points.max(axis=0)
    return (
        float(np.clip(x0, 0, w)),
        float(np.clip(y0, 0, h)),
        float(np.clip(x1, 0, w)),
        float(np.clip(y1, 0, h)),
    )


def tile_width(polygon: np.ndarray) -> float:
    """A tile's width in pixels: the short side of the smallest turned rectangle around it."""
    _, (a, b), _ = cv2.minAreaRect(np.asarray(polygon, np.float32).reshape(-1, 2))
    return float(min(a, b))


def turned_extent(polygons: list[np.ndarray], degrees: float) -> tuple[np.ndarray, np.ndarray]:
    """The (low, high) corners of the upright box around ``polygons`` after turning them by
    ``degrees`` about the origin (anticlockwise as seen)."""
    rotation = cv2.getRotationMatrix2D((0.0, 0.0), degrees, 1.0)[:, :2]
    points = np.vstack([np.asarray(p, np.float64).reshape(-1, 2) for p in polygons]) @ rotation.T
    return points.min(axis=0), points.max(axis=0)


def unturn(point: np.ndarray, degrees: float) -> np.ndarray:
    """A point given in the turned coordinates of :func:`turned_extent`, back in the photo's."""
    rotation = cv2.getRotationMatrix2D((0.0, 0.0), degrees, 1.0)[:, :2]
    return np.linalg.solve(rotation, np.asarray(point, np.float64))
