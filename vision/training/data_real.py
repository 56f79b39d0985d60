"""Convert the real Rummikub photos (``datasets/rummikub-real``) into istaka's 53 classes.

Upstream labels are YOLO *segmentation* polygons over 53 alphabetically ordered Rummikub classes;
istaka wants YOLO *boxes* over its own identities (index = colour * 13 + number - 1, colours R, Y,
B, K; 52 = false joker).  Colours map black -> K, blue -> B, orange -> Y, red -> R.

**The Rummikub joker is trained as the false joker (FJ, class 52).**  Why: both are the one
numberless "picture" tile of their set (a smiley face there, a clover or star here), so what
transfers from the photos is "a cream tile with a symbol and no number is the joker-like tile",
which is exactly the cue the recogniser needs for FJ.  Dropping them would leave holes in the
ground truth (a found joker would count as a false positive), and a detector-only "tile" class
would leave FJ without any real pixels at all.

The train/validation split is by *source photo*: Roboflow exported each photo three times with
rotation augmentation, and the copies share the file-name prefix before ``_jpeg.rf.``; all copies
of one photo land on the same side, so validation never sees a rotated twin of a training image.
The split is seeded and stratified by series (``rummy``, ``rummy2``, ``rummy3``, ``rummy4``,
``rummyBackground``); the committed list ``datasets/real_val.txt`` is its output for seed 0.

Example::

    istaka prepare real
    istaka prepare real_obb     # oriented boxes
"""

from __future__ import annotations

import random
import shutil
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from okey.tiles import COLOURS, FALSE_JOKER_INDEX
from vision.types import CLASS_NAMES

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SRC = REPO_ROOT / "datasets" / "rummikub-real"
DEFAULT_OUT = REPO_ROOT / "datasets" / "build" / "real"
DEFAULT_OUT_OBB = REPO_ROOT / "datasets" / "build" / "real_obb"
VAL_LIST = REPO_ROOT / "datasets" / "real_val.txt"
DEFAULT_SEED = 0
DEFAULT_VAL_FRACTION = 0.2

_UPSTREAM_COLOURS = {"red": "R", "orange": "Y", "blue": "B", "black": "K"}
# Upstream order is alphabetical over "black_1", "black_10", ... "red_9" with "joker" in between.
UPSTREAM_NAMES: tuple[str, ...] = tuple(
    sorted([f"{c}_{n}" for c in _UPSTREAM_COLOURS for n in range(1, 14)] + ["joker"])
)

# The 53 class names as istaka writes them ("R1" .. "K13", "FJ"), in index order.

YoloBox = tuple[float, float, float, float]  # normalised (x_centre, y_centre, width, height)


@dataclass(frozen=True)
class Label:
    """One tile label in istaka's classes."""

    index: int
    box: YoloBox
    # the tile's oriented box: four normalised corners x1 y1 .. x4 y4 (see polygon_to_obb)
    corners: tuple[float, ...] | None = None

    def line(self) -> str:
        """The YOLO detection line, e.g. ``'52 0.500000 0.500000 0.100000 0.120000'``."""
        return f"{self.index} " + " ".join(f"{v:.6f}" for v in self.box)

    def obb_line(self) -> str:
        """The YOLO oriented-box line: ``'52 x1 y1 x2 y2 x3 y3 x4 y4'`` (normalised corners)."""
        if self.corners is None:
            raise ValueError("this label has no oriented box")
        return obb_line(self.index, self.corners)


def obb_line(index: int, corners: Sequence[float]) -> str:
    """An oriented-box label line: ``'52 x1 y1 x2 y2 x3 y3 x4 y4'`` (normalised corners)."""
    return f"{index} " + " ".join(f"{v:.6f}" for v in corners)


def upstream_to_index(upstream_class: int) -> int:
    """Map an upstream class id to istaka's tile index.

    >>> from okey import Tile
    >>> str(Tile(upstream_to_index(UPSTREAM_NAMES.index("orange_7"))))
    'Y7'
    >>> upstream_to_index(UPSTREAM_NAMES.index("joker"))
    52
    """
    if not 0 <= upstream_class < len(UPSTREAM_NAMES):
        raise ValueError(f"upstream class id must be 0..52, got {upstream_class}")
    name = UPSTREAM_NAMES[upstream_class]
    if name == "joker":
        return FALSE_JOKER_INDEX
    colour, number = name.split("_")
    return COLOURS.index(_UPSTREAM_COLOURS[colour]) * 13 + int(number) - 1


def polygon_to_box(coords: Sequence[float]) -> YoloBox:
    """The enclosing box of a normalised polygon ``x1 y1 x2 y2 ...``, clipped to the image.

    >>> polygon_to_box([0.1, 0.2, 0.3, 0.2, 0.3, 0.6, 0.1, 0.6])
    (0.2, 0.4, 0.19999999999999998, 0.39999999999999997)
    """
    if len(coords) < 6 or len(coords) % 2:
        raise ValueError(f"a polygon needs at least 3 x,y pairs, got {len(coords)} numbers")
    xs = [min(max(v, 0.0), 1.0) for v in coords[0::2]]
    ys = [min(max(v, 0.0), 1.0) for v in coords[1::2]]
    x1, x2, y1, y2 = min(xs), max(xs), min(ys), max(ys)
    return ((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1)


def polygon_to_obb(coords: Sequence[float], width: int, height: int) -> tuple[float, ...]:
    """The smallest rotated rectangle around a normalised polygon, as four normalised corners.

    Computed in pixels (``width`` x ``height``), so angles are true on non-square images;
    corners are clipped to the image.

    >>> [round(v, 3) for v in polygon_to_obb([0.1, 0.2, 0.3, 0.2, 0.3, 0.6, 0.1, 0.6], 100, 100)]
    [0.3, 0.6, 0.1, 0.6, 0.1, 0.2, 0.3, 0.2]
    """
    import cv2

    if len(coords) < 6 or len(coords) % 2:
        raise ValueError(f"a polygon needs at least 3 x,y pairs, got {len(coords)} numbers")
    points = np.asarray(coords, np.float32).reshape(-1, 2) * np.float32([width, height])
    corners = cv2.boxPoints(cv2.minAreaRect(points)) / np.float32([width, height])
    return tuple(float(v) for v in np.clip(corners, 0.0, 1.0).reshape(-1))


def read_upstream_labels(path: Path, size: tuple[int, int] | None = None) -> list[Label]:
    """Parse one upstream segmentation label file into istaka box labels.

    With the image's ``size`` (width, height) each label also carries its oriented box.
    """
    labels = []
    for line_no, line in enumerate(path.read_text().splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        try:
            upstream = int(parts[0])
            coords = [float(v) for v in parts[1:]]
            box = polygon_to_box(coords)
            index = upstream_to_index(upstream)
            corners = polygon_to_obb(coords, *size) if size else None
        except ValueError as exc:
            raise ValueError(f"{path}:{line_no}: {exc}") from exc
        if box[2] > 0 and box[3] > 0:
            labels.append(Label(index, box, corners))
    return labels


def source_of(image_name: str) -> str:
    """The source photo a Roboflow export came from: the name before ``_jpeg.rf.``.

    >>> source_of("rummy3-12_jpeg.rf.0a1b.jpg")
    'rummy3-12'
    """
    stem = Path(image_name).name
    return stem.split("_jpeg.rf.")[0] if "_jpeg.rf." in stem else Path(stem).stem


def series_of(source: str) -> str:
    """The photo series of a source name: ``'rummy3-12'`` -> ``'rummy3'``."""
    return source.rsplit("-", 1)[0]


def split_sources(
    image_names: Iterable[str],
    val_fraction: float = DEFAULT_VAL_FRACTION,
    seed: int = DEFAULT_SEED,
) -> tuple[list[str], list[str]]:
    """Split image names into (train, val) by source photo, stratified by series.

    Every copy of one source photo ends on the same side; each series gives about
    ``val_fraction`` of its source photos (at least one) to validation.
    """
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction must be between 0 and 1, got {val_fraction}")
    by_source: dict[str, list[str]] = defaultdict(list)
    for name in image_names:
        by_source[source_of(name)].append(name)
    by_series: dict[str, list[str]] = defaultdict(list)
    for source in by_source:
        by_series[series_of(source)].append(source)
    rng = random.Random(seed)
    val_sources: set[str] = set()
    for series in sorted(by_series):
        sources = sorted(by_series[series])
        rng.shuffle(sources)
        n_val = max(1, round(len(sources) * val_fraction))
        val_sources.update(sources[:n_val])
    train = sorted(n for s, names in by_source.items() if s not in val_sources for n in names)
    val = sorted(n for s, names in by_source.items() if s in val_sources for n in names)
    return train, val


def read_val_list(path: Path = VAL_LIST) -> list[str]:
    """The committed list of real validation image names (one per line, ``#`` comments)."""
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def convert(
    src: Path = DEFAULT_SRC,
    out: Path = DEFAULT_OUT,
    val_names: Sequence[str] | None = None,
    seed: int = DEFAULT_SEED,
    val_fraction: float = DEFAULT_VAL_FRACTION,
    obb: bool = False,
) -> dict[str, int]:
    """Write ``out/{images,labels}/{train,val}`` and ``out/data.yaml``; return image counts.

    ``val_names`` fixes the validation side (the committed list by default when it exists);
    otherwise the seeded split decides.  ``obb``: oriented-box labels (the tile's smallest rotated
    rectangle) instead of upright boxes, for an ultralytics OBB detector.
    """
    images_dir, labels_dir = Path(src) / "images", Path(src) / "labels"
    if not images_dir.is_dir() or not labels_dir.is_dir():
        raise FileNotFoundError(f"{src} must hold images/ and labels/ (the rummikub-real layout)")
    names = sorted(p.name for p in images_dir.iterdir() if p.suffix.lower() in {".jpg", ".png"})
    if not names:
        raise FileNotFoundError(f"no images in {images_dir}")
    if val_names is None and VAL_LIST.exists():
        val_names = read_val_list(VAL_LIST)
    if val_names is None:
        _, val_names = split_sources(names, val_fraction, seed)
    val_set = set(val_names)
    unknown = val_set - set(names)
    if unknown:
        raise ValueError(f"validation list names images not in {images_dir}: {sorted(unknown)[:3]}")
    out = Path(out)
    counts = {"train": 0, "val": 0}
    for split in counts:
        for kind in ("images", "labels"):
            target = out / kind / split
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
    for name in names:
        split = "val" if name in val_set else "train"
        label_path = labels_dir / (Path(name).stem + ".txt")
        size = _image_size(images_dir / name) if obb else None
        labels = read_upstream_labels(label_path, size) if label_path.exists() else []
        shutil.copy2(images_dir / name, out / "images" / split / name)
        text = "".join((label.obb_line() if obb else label.line()) + "\n" for label in labels)
        (out / "labels" / split / (Path(name).stem + ".txt")).write_text(text)
        counts[split] += 1
    write_data_yaml(out / "data.yaml", out, "images/train", "images/val")
    return counts


def _image_size(path: Path) -> tuple[int, int]:
    """(width, height) from the image header."""
    from PIL import Image

    with Image.open(path) as image:
        return image.size


def write_data_yaml(path: Path, root: Path, train: str | list[str], val: str | list[str]) -> None:
    """Write an ultralytics detection data YAML over istaka's 53 classes."""
    import yaml

    data = {
        "path": str(Path(root).resolve()),
        "train": train,
        "val": val,
        "names": dict(enumerate(CLASS_NAMES)),
    }
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False))
