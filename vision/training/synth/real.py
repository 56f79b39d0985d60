"""Real tiles in the framings the real photos lack: the training photos of
``datasets/rummikub-real`` (never a source of ``datasets/real_val.txt``) framed again, and their
tiles cut out along their polygon labels to stand in rendered racks (copy-paste).

- ``reframe_sample``: a training photo seen closer or farther (a tile 3-30 % of the frame width),
  turned up to 90 degrees either way, in a landscape, portrait or square frame; labels follow the
  pixels (``reframe.View``), a tile under 60 % inside the frame goes unlabelled.
- ``real_faces``: tile faces cut along their polygons and stood upright (long side vertical) as
  the renderer's faces, so ``tiers_paste`` racks show real faces standing, touching, in tiers,
  partly hidden.

The detector these train is one-class: a face cut from a photo of tiles lying any way round may
be pasted upside down, which changes no label.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from okey import Tile
from vision.training.data_real import (
    DEFAULT_SRC,
    read_val_list,
    source_of,
    upstream_to_index,
)
from vision.training.synth.face import FACE_H, FACE_W, SetStyle, _alpha_u8
from vision.training.synth.reframe import inside_share, tile_width, window
from vision.training.synth.scene import FaceSource

LABELLED_INSIDE = 0.6  # a reframed tile with less of its outline in the frame goes unlabelled
FRAMES = ((640, 480), (480, 640), (640, 360), (360, 640), (640, 640))
SHARE = (0.03, 0.30)  # a tile's width over the frame's, log-uniform

Polygon = np.ndarray  # (N, 2) pixels


@lru_cache(maxsize=1)
def train_photos(
    src: Path = DEFAULT_SRC,
) -> tuple[tuple[Path, tuple[tuple[int, Polygon], ...]], ...]:
    """The real training photos and their labelled tiles (class, polygon in pixels); every copy
    of a validation source photo is left out."""
    val_sources = {source_of(name) for name in read_val_list()}
    out = []
    for image in sorted((src / "images").glob("*.jpg")):
        if source_of(image.name) in val_sources:
            continue
        label = src / "labels" / f"{image.stem}.txt"
        if not label.is_file():
            continue
        h, w = _photo(image).shape[:2]
        size = np.float64([w, h])
        tiles = []
        for line in label.read_text().splitlines():
            parts = line.split()
            if len(parts) < 7:
                continue
            polygon = np.float64(parts[1:]).reshape(-1, 2) * size
            tiles.append((upstream_to_index(int(parts[0])), polygon))
        if tiles:
            out.append((image, tuple(tiles)))
    if not out:
        raise FileNotFoundError(f"no labelled real training photos in {src}")
    return tuple(out)


@lru_cache(maxsize=16)
def _photo(path: Path) -> np.ndarray:
    image = cv2.imread(str(path))
    if image is None:
        raise ValueError(f"{path}: not an image")
    return image


def _upright_corners(polygon: Polygon, flip: bool) -> np.ndarray:
    """The polygon's smallest turned rectangle as top-left, top-right, bottom-right, bottom-left
    of a tile standing on its short side (``flip``: the other way up)."""
    corners = cv2.boxPoints(cv2.minAreaRect(np.float32(polygon))).astype(np.float64)
    x, y = corners[:, 0], corners[:, 1]
    if np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) < 0:
        corners = corners[::-1]  # clockwise on screen (y down), as TL, TR, BR, BL run
    sides = np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)
    start = 0 if sides[0] <= sides[1] else 1  # the first side is a short one: the top
    start += 2 if flip else 0
    return np.roll(corners, -start, axis=0)


def cut_face(image: np.ndarray, polygon: Polygon, flip: bool = False) -> np.ndarray:
    """A real tile cut along its polygon and stood upright as a BGRA face (FACE_H x FACE_W)."""
    src = np.float32(_upright_corners(polygon, flip))
    dst = np.float32([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]])
    matrix = cv2.getPerspectiveTransform(src, dst)
    face = cv2.warpPerspective(
        image, matrix, (FACE_W, FACE_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return cv2.merge([*cv2.split(face), _alpha_u8()])


def real_faces(rng: np.random.Generator, n: int, style: SetStyle) -> list[tuple[Tile, FaceSource]]:
    """``n`` real tile faces, each from a random tile of a random training photo."""
    photos = train_photos()
    out = []
    for _ in range(n):
        path, tiles = photos[int(rng.integers(len(photos)))]
        index, polygon = tiles[int(rng.integers(len(tiles)))]
        face = cut_face(_photo(path), polygon, bool(rng.random() < 0.5))
        tile = Tile(index)
        out.append((tile, FaceSource(0, tile, style, False, face)))
    return out


def reframe_sample(rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """A real training photo framed again (closer or farther, turned, another frame) and its
    sidecar (``docs/synth.md``; ``quad``: each tile's turned rectangle, ``visible``: the share of
    its outline inside the frame)."""
    photos = train_photos()
    path, tiles = photos[int(rng.integers(len(photos)))]
    image = _photo(path)
    frame = FRAMES[int(rng.integers(len(FRAMES)))]
    share = float(np.exp(rng.uniform(np.log(SHARE[0]), np.log(SHARE[1]))))
    degrees = float(rng.uniform(-90, 90)) if rng.random() < 0.7 else 0.0
    polygons = [p for _, p in tiles]
    # closer or farther, but never so far that the photo is a small island in a grey frame
    longest = float(max(image.shape[:2]))
    crop_w = min(float(np.median([tile_width(p) for p in polygons])) / share, 1.25 * longest)
    points = np.vstack(polygons)
    if rng.random() < 0.5:
        centre = (points.min(axis=0) + points.max(axis=0)) / 2
    else:
        centre = polygons[int(rng.integers(len(polygons)))].mean(axis=0)
    centre = centre + rng.uniform(-0.2, 0.2, 2) * crop_w
    view = window((float(centre[0]), float(centre[1])), crop_w, degrees, frame)
    out = view.apply(image)
    records = []
    for k, (index, polygon) in enumerate(tiles):
        moved = view.polygon(polygon)
        inside = inside_share(moved, frame)
        quad = cv2.boxPoints(cv2.minAreaRect(np.float32(moved)))
        x0, y0 = np.clip(moved.min(axis=0), 0, frame)
        x1, y1 = np.clip(moved.max(axis=0), 0, frame)
        box = [float(x0), float(y0), float(x1), float(y1)] if inside > 0 else None
        records.append(
            {
                "id": k,
                "tile": str(Tile(index)),
                "class": index,
                "box": None if box is None else [round(v, 2) for v in box],
                "upside_down": False,
                "on_rack": False,
                "role": "real",
                "row": None,
                "slot": None,
                "visible": round(inside, 3),
                "number_visible": round(inside, 3),
                "quad": [[round(float(x), 2), round(float(y), 2)] for x, y in quad],
                "labelled": bool(
                    box is not None and inside >= LABELLED_INSIDE and x1 - x0 >= 2 and y1 - y0 >= 2
                ),
            }
        )
    truth = {
        "schema": 1,
        "width": frame[0],
        "height": frame[1],
        "style_pool": "real",
        "rules": None,
        "source": path.name,
        "view": {"degrees": round(degrees, 2), "tile_share": round(share, 4)},
        "tiles": records,
        "rows": [],
        "groups": [],
        "table": [r["id"] for r in records],
    }
    return out, truth
