"""Cut labelled tile crops out of a YOLO-labelled set into the ultralytics classification layout.

The second stage of the two-stage recogniser reads one tile at a time.  Its training data are
square crops around each labelled box, written as ``OUT/<split>/<NN_NAME>/<file>.jpg`` where the
folder name ``"07_R8"`` starts with the class index, so the folders sort into istaka's class order
(ultralytics numbers classification classes by sorted folder name).

Training crops get random box jitter (each edge moved by up to ``jitter`` of the box size), so the
classifier tolerates the looser or tighter boxes a detector draws; validation crops get none.  The
recogniser cuts its crops with the same :func:`crop_tile`, so training and inference agree.

With ``augment`` the training crops also get what another camera would do to a tile and what
ultralytics' classification training does not do (it has no rotation, blur or noise):
:func:`camera_crop` turns the tile by up to ``AUGMENT.degrees`` around its centre, blurs it,
adds sensor noise, shifts brightness, contrast and white balance a little (never the hue: colour
is the identity) and recompresses it as a JPEG of random quality.

With ``straight`` the sources carry oriented-box labels (``class x1 y1 ... x4 y4``, as written by
``istaka prepare real_obb`` and ``istaka synth --labels obb``) and each tile is cut along
its turned box and stood upright (:func:`straight_crop`): on its long side, as the recogniser
stands an oriented-box detector's tiles (``long``), or as the label's corner order says the tile
stands (``corners``: renders name the tile's top-left corner first).  Jitter then moves the box's
edges in the tile's own frame and :func:`camera_crop`'s turn is added to the straightening one.

Example::

    istaka crops --src datasets/build/real --out datasets/build/crops --copies 3
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.crops import (  # noqa: F401  (the runtime crops, re-exported for training code)
    CROP_PAD,
    CROP_SIZE,
    NOT_A_TILE,
    Rect,
    corner_rect,
    crop_tile,
    level_rect,
    straight_crop,
    upright_rect,
)
from vision.training.data_real import REPO_ROOT
from vision.types import CLASS_NAMES, Box, iou

DEFAULT_OUT = REPO_ROOT / "datasets" / "build" / "crops"


@dataclass(frozen=True)
class CameraAugment:
    """Ranges of :func:`camera_crop`'s random changes (each drawn uniformly per crop)."""

    degrees: float = 15.0  # a tile turned on the rack or a camera held crooked
    # With probability ``wide_p`` the turn is drawn from +-``wide_degrees`` instead: tiles lying
    # on the table at any slant.  Kept below 90 so a 6 and a turned-over 9 never meet.
    wide_degrees: float = 0.0
    wide_p: float = 0.0
    # With probability ``upside_down_p`` the tile is also turned half a turn, label unchanged: a
    # tile standing upside down on the rack is still its own tile (its suit mark or maker's logo,
    # now above the number, tells a turned-over 6 from a 9).  0 draws nothing: older configs' crops
    # stay the same.
    upside_down_p: float = 0.0
    blur_sigma: float = 1.2  # Gaussian blur, px at crop size (out-of-focus, motion)
    blur_p: float = 0.4
    noise_sigma: float = 6.0  # sensor noise, grey levels
    noise_p: float = 0.4
    brightness: float = 0.2  # gain 0.8..1.2
    contrast: float = 0.25
    white_balance: float = 0.04  # per-channel gain 0.96..1.04: warm and cold light, same hue order
    # With probability ``temperature_p`` the light's colour left over by the camera's white
    # balance: blue x (1 + t), red x (1 - t), t drawn from +-``temperature`` (t < 0 warm lamp
    # light, t > 0 cold shade or LED light).  0 draws nothing: older configs' crops stay the same.
    temperature: float = 0.0
    temperature_p: float = 0.0
    # With probability ``motion_p`` a motion-blur streak 3..``motion_blur`` px long (at crop
    # size) in any direction: a hand-held phone or a tile moved while the frame was taken.
    motion_blur: int = 0
    motion_p: float = 0.0
    jpeg_quality: tuple[int, int] = (35, 95)
    jpeg_p: float = 0.5


AUGMENT = CameraAugment()


NOT_A_TILE_FOLDER = f"{NOT_A_TILE:02d}_none"


def class_folder(index: int) -> str:
    """Folder name of a class: ``class_folder(7) == '07_R8'``, ``class_folder(52) == '52_FJ'``,
    ``class_folder(53) == '53_none'`` (not a tile)."""
    if index == NOT_A_TILE:
        return NOT_A_TILE_FOLDER
    return f"{index:02d}_{CLASS_NAMES[index]}"


def camera_crop(
    image: np.ndarray,
    box: Box,
    rng: np.random.Generator,
    size: int = CROP_SIZE,
    pad: float = CROP_PAD,
    augment: CameraAugment = AUGMENT,
    turn: float = 0.0,
) -> np.ndarray:
    """A :func:`crop_tile` of ``box`` as another camera might have seen it (see ``CameraAugment``).

    The tile turns around the box centre inside the same square, as a detector's upright box
    frames a turned tile; pixels from outside the image are black, as in :func:`crop_tile`.
    ``turn`` (degrees, :func:`straight_crop`'s sense) is added first: with ``box`` a turned
    box's upright frame around its centre, the crop is :func:`straight_crop`'s, then changed.

    >>> rng = np.random.default_rng(0)
    >>> camera_crop(np.full((100, 100, 3), 200, np.uint8), (10, 10, 40, 60), rng, size=32).shape
    (32, 32, 3)
    """
    import cv2

    x1, y1, x2, y2 = box
    if x2 <= x1 or y2 <= y1:
        raise ValueError(f"empty tile box {box}")
    w, h = (x2 - x1) * (1 + 2 * pad), (y2 - y1) * (1 + 2 * pad)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    limit = augment.wide_degrees if rng.random() < augment.wide_p else augment.degrees
    angle = float(rng.uniform(-limit, limit)) - turn  # straight_crop's turn maps image to crop
    if augment.upside_down_p > 0 and rng.random() < augment.upside_down_p:
        angle += 180.0
    # A box larger than the crop is sampled at a whole multiple of the crop size first and then
    # area-averaged down, as crop_tile and straight_crop shrink (warpAffine has no area
    # averaging: sampling at crop size directly would alias fine print).
    fine = size * max(1, math.ceil(max(w, h) / size))
    # Output pixel centre (u + 1/2, v + 1/2) samples the source at centre + R(angle) S (it - fine/2)
    # (pixel centres at integer + 1/2 on both sides, as cv2.resize does), S the box-to-crop scale.
    rot = cv2.getRotationMatrix2D((0.0, 0.0), angle, 1.0)[:, :2]
    scale = np.diag([w / fine, h / fine])
    linear = rot @ scale
    offset = np.array([cx, cy]) - 0.5 + linear @ np.array([0.5 - fine / 2, 0.5 - fine / 2])
    to_source = np.hstack([linear, offset[:, None]])
    crop = cv2.warpAffine(
        image,
        to_source,
        (fine, fine),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(0, 0, 0),
    )
    if fine > size:
        crop = cv2.resize(crop, (size, size), interpolation=cv2.INTER_AREA)
    out = crop.astype(np.float32)
    if rng.random() < augment.blur_p:
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.3, augment.blur_sigma)))
    if augment.motion_p > 0 and rng.random() < augment.motion_p:
        streak = motion_kernel(
            int(rng.integers(3, max(3, augment.motion_blur) + 1)), rng.uniform(0, 180)
        )
        out = cv2.filter2D(out, -1, streak, borderType=cv2.BORDER_REFLECT)
    gain = 1 + rng.uniform(-augment.brightness, augment.brightness)
    contrast = 1 + rng.uniform(-augment.contrast, augment.contrast)
    mean = out.mean()
    out = (out - mean) * contrast + mean * gain
    out *= 1 + rng.uniform(-augment.white_balance, augment.white_balance, 3)
    if augment.temperature_p > 0 and rng.random() < augment.temperature_p:
        t = float(rng.uniform(-augment.temperature, augment.temperature))
        out *= np.float32([1 + t, 1, 1 - t])  # BGR
    if rng.random() < augment.noise_p:
        out += rng.normal(0, rng.uniform(1, augment.noise_sigma), out.shape)
    out = np.clip(out, 0, 255).astype(np.uint8)
    if rng.random() < augment.jpeg_p:
        quality = int(rng.integers(augment.jpeg_quality[0], augment.jpeg_quality[1] + 1))
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def motion_kernel(length: int, degrees: float) -> np.ndarray:
    """A normalised line kernel ``length`` px long at ``degrees`` (0: horizontal): the streak a
    point leaves when the camera moves during the exposure.

    >>> k = motion_kernel(5, 0)
    >>> k.shape, float(k.sum()), float(k[2].sum())
    ((5, 5), 1.0, 1.0)
    """
    import cv2

    if length < 1:
        raise ValueError(f"motion blur length must be >= 1 px, got {length}")
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0
    centre = ((length - 1) / 2, (length - 1) / 2)
    turn = cv2.getRotationMatrix2D(centre, float(degrees), 1.0)
    kernel = cv2.warpAffine(kernel, turn, (length, length), flags=cv2.INTER_LINEAR)
    return kernel / kernel.sum()


def read_yolo_boxes(label_path: Path, width: int, height: int) -> list[tuple[int, Box]]:
    """(class, pixel box) pairs of a YOLO label file (an oriented box gives its upright hull)."""
    return [(cls, box) for cls, box, _ in read_yolo_labels(label_path, width, height)]


def read_yolo_labels(
    label_path: Path, width: int, height: int
) -> list[tuple[int, Box, np.ndarray | None]]:
    """(class, pixel box, corners) of each line of a YOLO label file.

    A detection line (``class xc yc w h``) has no corners (``None``).  An oriented-box line
    (``class x1 y1 x2 y2 x3 y3 x4 y4``) has its four corners in pixels ``(4, 2)``, in the line's
    order, and, as box, their upright hull.  :func:`label_rect` turns corners into a turned box.
    """
    out: list[tuple[int, Box, np.ndarray | None]] = []
    for line_no, line in enumerate(label_path.read_text().splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) not in (5, 9):
            raise ValueError(
                f"{label_path}:{line_no}: expected 'class xc yc w h' or 'class x1 y1 ... x4 y4', "
                f"got {line!r}"
            )
        cls = int(parts[0])
        if not 0 <= cls < len(CLASS_NAMES):
            raise ValueError(f"{label_path}:{line_no}: class {cls} is not 0..52")
        if len(parts) == 5:
            xc, yc, w, h = (float(v) for v in parts[1:])
            box = (
                (xc - w / 2) * width,
                (yc - h / 2) * height,
                (xc + w / 2) * width,
                (yc + h / 2) * height,
            )
            out.append((cls, box, None))
            continue
        points = np.float32(parts[1:]).reshape(4, 2) * np.float32([width, height])
        low, high = points.min(axis=0), points.max(axis=0)
        hull = (float(low[0]), float(low[1]), float(high[0]), float(high[1]))
        out.append((cls, hull, points))
    return out


STRAIGHT_MODES = ("long", "corners")


def label_rect(corners: np.ndarray, mode: str = "long") -> Rect:
    """The turned box of an oriented-box label's corners, stood as ``mode`` says.

    ``long``: the corners' smallest rotated rectangle stood on its long side, as the recogniser
    stands an oriented-box detector's box (:func:`upright_rect`).  ``corners``: the corners are
    named after the tile (top-left first, as ``istaka synth --labels obb`` writes them), so the
    box stands the tile as it stands (:func:`corner_rect`), squashed or lying on its side.
    """
    import cv2

    if mode == "corners":
        return corner_rect(corners)
    if mode != "long":
        raise ValueError(f"unknown straight mode {mode!r}: use one of {STRAIGHT_MODES}")
    (cx, cy), (w, h), angle = cv2.minAreaRect(np.asarray(corners, np.float32))
    return upright_rect((cx, cy, w, h, angle))


def jitter_rect(rect: Rect, amount: float, rng: np.random.Generator) -> Rect:
    """:func:`jitter_box` in a turned box's own frame: each edge moves by up to ``amount`` of
    the box's width or height along the box's axes (the description, angle included, kept)."""
    import cv2

    cx, cy, w, h, angle = (float(v) for v in rect)
    x1, y1, x2, y2 = jitter_box((-w / 2, -h / 2, w / 2, h / 2), amount, rng)
    # the crop-frame shift of the centre, taken back into the image (straight_crop's turn undone)
    back = cv2.getRotationMatrix2D((0.0, 0.0), -angle, 1.0)[:, :2]
    dx, dy = back @ np.array([(x1 + x2) / 2, (y1 + y2) / 2])
    return cx + float(dx), cy + float(dy), x2 - x1, y2 - y1, angle


def jitter_box(box: Box, amount: float, rng: np.random.Generator) -> Box:
    """Move each edge by up to ``amount`` of the box's width or height."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    dx = rng.uniform(-amount, amount, 2) * w
    dy = rng.uniform(-amount, amount, 2) * h
    return (x1 + dx[0], y1 + dy[0], x2 + dx[1], y2 + dy[1])


def _covered(tile: Box, box: Box) -> float:
    """The fraction of ``tile``'s area inside ``box``."""
    ix = max(0.0, min(tile[2], box[2]) - max(tile[0], box[0]))
    iy = max(0.0, min(tile[3], box[3]) - max(tile[1], box[1]))
    return ix * iy / max((tile[2] - tile[0]) * (tile[3] - tile[1]), 1e-9)


def background_boxes(
    tiles: Sequence[Box],
    width: int,
    height: int,
    count: int,
    rng: np.random.Generator,
    max_iou: float = 0.3,
) -> list[Box]:
    """Up to ``count`` tile-sized boxes that hold no whole tile: IoU < ``max_iou`` with each tile
    and less than half of any tile inside.

    Half are a tile's box slid off it by half a tile or more (part tile, part table or neighbour:
    what a detector's stray box looks like), half anywhere in the image at a tile's size.
    """
    if not tiles:
        return []
    out: list[Box] = []
    for _ in range(count * 10):
        if len(out) == count:
            break
        x1, y1, x2, y2 = tiles[int(rng.integers(len(tiles)))]
        w, h = (x2 - x1) * rng.uniform(0.7, 1.4), (y2 - y1) * rng.uniform(0.7, 1.4)
        if rng.random() < 0.5:
            sx, sy = rng.choice([-1, 1], 2) * rng.uniform(0.5, 1.0, 2) * rng.integers(0, 2, 2)
            if sx == 0 and sy == 0:
                sx = float(rng.choice([-1, 1]) * rng.uniform(0.5, 1.0))
            cx, cy = (x1 + x2) / 2 + sx * (x2 - x1), (y1 + y2) / 2 + sy * (y2 - y1)
        else:
            cx, cy = rng.uniform(w / 2, width - w / 2), rng.uniform(h / 2, height - h / 2)
        box = (
            max(0.0, cx - w / 2),
            max(0.0, cy - h / 2),
            min(float(width), cx + w / 2),
            min(float(height), cy + h / 2),
        )
        if box[2] - box[0] < 0.5 * w or box[3] - box[1] < 0.5 * h:
            continue
        if all(iou(box, t) < max_iou and _covered(t, box) < 0.5 for t in tiles):
            out.append(box)
    return out


def label_path_for(image_path: Path) -> Path:
    """The YOLO label of an image: ``.../images/<split>/x.jpg`` -> ``.../labels/<split>/x.txt``."""
    parts = list(image_path.parts)
    index = len(parts) - 1 - parts[::-1].index("images")
    parts[index] = "labels"
    return Path(*parts).with_suffix(".txt")


def export_crops(
    images: Sequence[Path],
    out_dir: Path,
    copies: int = 1,
    jitter: float = 0.0,
    seed: int = 0,
    size: int = CROP_SIZE,
    prefix: str = "",
    augment: bool | CameraAugment = False,
    background: int = 0,
    straight: bool | str = False,
    plain_first: bool = True,
) -> dict[int, int]:
    """Write crops of every labelled tile of ``images`` into ``out_dir/<NN_NAME>/``.

    Returns the number of crops per class.  ``copies`` crops per tile, each with its own jitter
    (and, with ``augment``, its own :func:`camera_crop` changes; the first copy stays plain unless
    ``plain_first`` is false).  ``augment`` is ``True`` for the default ranges (``AUGMENT``) or
    a :class:`CameraAugment`.  ``straight``: cut each tile along its oriented-box label, stood
    upright (:func:`straight_crop`) as :func:`label_rect` says (``True`` is ``"long"``; or
    ``"corners"``); every label must then be an oriented box.
    ``background``: that many crops per image of places holding no whole tile, class
    ``NOT_A_TILE`` (see :func:`background_boxes`; upright boxes either way).
    """
    import cv2

    ranges = augment if isinstance(augment, CameraAugment) else AUGMENT
    mode = "long" if straight is True else str(straight)
    if straight and mode not in STRAIGHT_MODES:
        raise ValueError(f"unknown straight mode {mode!r}: use one of {STRAIGHT_MODES}")
    rng = np.random.default_rng(seed)
    bg_rng = np.random.default_rng([seed, 53])  # its own stream: tile crops stay as without it
    counts: dict[int, int] = {}
    for image_path in images:
        label_path = label_path_for(Path(image_path))
        if not label_path.exists():
            continue
        image = cv2.imread(str(image_path))
        if image is None:
            raise ValueError(f"cannot read image {image_path}")
        height, width = image.shape[:2]
        labelled = read_yolo_labels(label_path, width, height)
        if straight and any(corners is None for _, _, corners in labelled):
            raise ValueError(f"{label_path}: straight crops need oriented-box labels (9 numbers)")
        if background:
            tiles = [box for _, box, _ in labelled]
            folder = out_dir / NOT_A_TILE_FOLDER
            folder.mkdir(parents=True, exist_ok=True)
            for k, b in enumerate(background_boxes(tiles, width, height, background, bg_rng)):
                name = f"{prefix}{Path(image_path).stem}_bg{k:02d}.jpg"
                if augment:
                    crop = camera_crop(image, b, bg_rng, size, augment=ranges)
                else:
                    crop = crop_tile(image, b, size)
                cv2.imwrite(str(folder / name), crop, [cv2.IMWRITE_JPEG_QUALITY, 95])
                counts[NOT_A_TILE] = counts.get(NOT_A_TILE, 0) + 1
        for k, (cls, box, corners) in enumerate(labelled):
            rect = label_rect(corners, mode) if straight else None
            folder = out_dir / class_folder(cls)
            folder.mkdir(parents=True, exist_ok=True)
            for j in range(copies):
                changed = augment and (j > 0 or not plain_first)
                if straight:
                    r = jitter_rect(rect, jitter, rng) if jitter > 0 else rect
                    if changed:
                        cx, cy, w, h, turn = r
                        frame = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
                        crop = camera_crop(image, frame, rng, size, augment=ranges, turn=turn)
                    else:
                        crop = straight_crop(image, r, size, turn="given")
                else:
                    b = jitter_box(box, jitter, rng) if jitter > 0 else box
                    if changed:
                        crop = camera_crop(image, b, rng, size, augment=ranges)
                    else:
                        crop = crop_tile(image, b, size)
                name = f"{prefix}{Path(image_path).stem}_{k:03d}_{j}.jpg"
                cv2.imwrite(str(folder / name), crop, [cv2.IMWRITE_JPEG_QUALITY, 95])
                counts[cls] = counts.get(cls, 0) + 1
    return counts


def list_images(folder: Path) -> list[Path]:
    """Sorted image files of a folder."""
    return sorted(
        p for p in Path(folder).iterdir() if p.suffix.lower() in {".jpg", ".jpeg", ".png"}
    )


def export_split_set(
    sources: Sequence[Path],
    out: Path,
    copies: int = 3,
    jitter: float = 0.08,
    seed: int = 0,
    size: int = CROP_SIZE,
    augment: bool | CameraAugment = False,
    background: int = 0,
    straight: bool | str = False,
    plain_first: bool = True,
) -> dict[str, dict[int, int]]:
    """Export ``train`` (jittered copies) and ``val`` (exact boxes) of each YOLO set in ``sources``.

    Each source holds ``images/train`` and ``images/val``, or only a flat ``images/`` (a rendered
    synthetic set), which all goes to ``train``.  The source's folder name prefixes the crop
    files so sets never overwrite each other.
    """
    result: dict[str, dict[int, int]] = {"train": {}, "val": {}}
    for i, src in enumerate(sources):
        for split in ("train", "val"):
            folder = Path(src) / "images" / split
            if split == "train" and not folder.is_dir():
                folder = Path(src) / "images"
            if not folder.is_dir():
                continue
            counts = export_crops(
                list_images(folder),
                Path(out) / split,
                copies=copies if split == "train" else 1,
                jitter=jitter if split == "train" else 0.0,
                seed=seed + i,
                size=size,
                prefix=f"{Path(src).name}_",
                augment=augment if split == "train" else False,
                background=background,
                straight=straight,
                plain_first=plain_first,
            )
            for cls, n in counts.items():
                result[split][cls] = result[split].get(cls, 0) + n
    return result


def export_default() -> dict[str, dict[int, int]]:
    """The crops of ``models/tile_classifier.yaml``: real photos x3 (jittered), synthetic x1.

    The same as ``istaka crops --src datasets/build/real --copies 3`` followed by
    ``istaka crops --src datasets/build/synth --copies 1 --seed 1``.
    """
    result = export_split_set([REPO_ROOT / "datasets" / "build" / "real"], DEFAULT_OUT, copies=3)
    synth = REPO_ROOT / "datasets" / "build" / "synth"
    if (synth / "images").is_dir():
        extra = export_split_set([synth], DEFAULT_OUT, copies=1, seed=1)
        for cls, n in extra["train"].items():
            result["train"][cls] = result["train"].get(cls, 0) + n
    return result
