"""Training data for the strip detector: tier strips as the tier stage builds them, with the
renderer's truth mapped into them.

The tier stage (``vision.recognizer.Recognizer._detect_strips``) straightens each candidate tier
into a strip a tile (48 px) high and runs a detector on strips packed into 448 px canvases. The
shipped photo detector learnt whole photos; a strip shows tiles at one scale, upright, the
back tiers' feet greyed where the tier in front hides them. This module renders tiered racks in
the training styles (never the check's held-out styles, nor ``benchmarks/tiers.py --decide``'s
seeds), runs the shipped recogniser on each photo, keeps every strip the tier stage looks at
(candidates, greyed looks), cuts and packs them as the tier stage does, and labels each tile of
the truth whose visible part, mapped into the strip, is one the tier stage keeps
(``vision.tiers.in_band``).  Labels are oriented boxes (upright), in YOLO's normalised corners.

    python -m vision.training.strips --out datasets/build/strips --n 30 --seed 5000
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.tiers import in_band, project, shelf_pack

CANVAS = 448  # the detector's square (models/recognizer.yaml detector_imgsz)
MOSAIC_GAP = 4
SIZE = (1600, 1200)
TURNS = (0, 0, 0, 15, 30, 90, 180, 270)  # a rack photographed mostly upright
MIN_INSIDE = 0.6  # a tile cut by a strip's or piece's edge is labelled when this share shows
TIER_KINDS = (
    "tiers2_frontal",
    "tiers2_oblique",
    "tiers3_frontal",
    "tiers3_oblique",
    "tiers2_frontal_far",
    "tiers2_oblique_far",
    "tiers3_frontal_far",
    "tiers3_oblique_far",
)


def turn(image: np.ndarray, degrees: int) -> tuple[np.ndarray, np.ndarray]:
    """The photo turned counter-clockwise on a canvas that holds all of it, and its 2 x 3 map."""
    import cv2

    h, w = image.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    cos, sin = abs(matrix[0, 0]), abs(matrix[0, 1])
    nw, nh = int(round(h * sin + w * cos)), int(round(h * cos + w * sin))
    matrix[:, 2] += (nw / 2 - w / 2, nh / 2 - h / 2)
    return cv2.warpAffine(image, matrix, (nw, nh), borderValue=(114, 114, 114)), matrix


def strip_labels(strip, outlines: list[np.ndarray]) -> list[tuple[float, float, float, float]]:
    """The boxes (x1, y1, x2, y2, strip pixels) of the tiles whose outline (``outlines``: the
    visible part of each tile, in the strips' photo's pixels) the tier stage would keep in
    ``strip``: inside the strip's image and above its hidden line, mostly, and on its tier's
    band (``in_band``)."""
    width, height = strip.size
    bottom = min(float(height), strip.shows_to)
    out = []
    for outline in outlines:
        at = project(strip.to_strip, outline)
        x1, y1 = at.min(axis=0)
        x2, y2 = at.max(axis=0)
        if x2 <= 0 or x1 >= width or y2 <= 0 or y1 >= bottom:
            continue
        cx1, cy1, cx2, cy2 = max(x1, 0.0), max(y1, 0.0), min(x2, float(width)), min(y2, bottom)
        shown = (cx2 - cx1) * (cy2 - cy1) / max((x2 - x1) * (y2 - y1), 1e-6)
        if shown < MIN_INSIDE or not in_band((cx1, cy1, cx2, cy2), strip):
            continue
        out.append((float(cx1), float(cy1), float(cx2), float(cy2)))
    return out


def pieces_of(strip, image: np.ndarray, boxes: list[tuple[float, ...]]):
    """The strip cut as the tier stage cuts it (pieces a canvas wide, overlapping by a tile and a
    half), each with the boxes that lie mostly inside it, in its pixels."""
    overlap = int(1.5 * strip.tile_width) + 4
    x0 = 0
    while True:
        piece = image[:CANVAS, x0 : x0 + CANVAS]
        pw = piece.shape[1]
        inside = []
        for x1, y1, x2, y2 in boxes:
            a, b = max(x1 - x0, 0.0), min(x2 - x0, float(pw))
            if b - a >= MIN_INSIDE * (x2 - x1):
                inside.append((a, y1, b, y2))
        yield piece, inside
        if x0 + CANVAS >= image.shape[1]:
            break
        x0 += max(CANVAS - overlap, 1)


def build_strips(out: Path, n: int, seed: int, val_every: int = 10) -> dict[str, int]:
    """Render ``n`` racks of each tier kind (training styles, seeds ``seed`` + kind), read each
    with the shipped recogniser and write the strips it looks at, packed into canvases, with
    their labels, to ``out`` (``images/{train,val}``, ``labels/{train,val}``, ``data.yaml``).
    Every ``val_every``-th rack goes to the validation split.  Returns counts."""
    import cv2

    from vision.recognizer import Recognizer
    from vision.training.synth.dataset import render_sample

    recognizer = Recognizer.default()
    seen: list[tuple[np.ndarray, list]] = []
    detect = recognizer._detect_strips

    def capture(pixels, strips):
        seen.append((pixels, list(strips)))
        return detect(pixels, strips)

    recognizer._detect_strips = capture  # type: ignore[method-assign]
    rng = np.random.default_rng(seed)
    counts = {"racks": 0, "strips": 0, "canvases": 0, "boxes": 0}
    for split in ("train", "val"):
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
    for k, kind in enumerate(TIER_KINDS):
        for index in range(n):
            image, truth = render_sample(seed + k, index, "train", SIZE, scene_kind=kind)
            photo, matrix = turn(image, int(rng.choice(TURNS)))
            seen.clear()
            try:
                recognizer.recognize(photo)
            except Exception:  # noqa: BLE001 - a render the recogniser cannot read gives no strips
                continue
            counts["racks"] += 1
            split = "val" if index % val_every == val_every - 1 else "train"
            pieces = []
            for pixels, strips in seen:
                scale = pixels.shape[1] / photo.shape[1]
                outlines = []
                for tile in truth["tiles"]:
                    poly = tile.get("visible_quad") or tile.get("quad")
                    if poly is None or tile.get("visible", 1) <= 0:
                        continue
                    pts = np.c_[np.float64(poly), np.ones(len(poly))] @ matrix.T
                    outlines.append(pts * scale)
                for strip in strips:
                    warped = strip.warp(pixels)
                    boxes = strip_labels(strip, outlines)
                    pieces += list(pieces_of(strip, warped, boxes))
                    counts["strips"] += 1
            sizes = [(p.shape[1], p.shape[0]) for p, _ in pieces]
            for c, packed in enumerate(shelf_pack(sizes, CANVAS, CANVAS, MOSAIC_GAP)):
                canvas = np.full((CANVAS, CANVAS, 3), 114, np.uint8)
                lines = []
                for j, x, y in packed:
                    piece, boxes = pieces[j]
                    canvas[y : y + piece.shape[0], x : x + piece.shape[1]] = piece
                    for x1, y1, x2, y2 in boxes:
                        corners = [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]
                        norm = " ".join(
                            f"{(px + x) / CANVAS:.6f} {(py + y) / CANVAS:.6f}" for px, py in corners
                        )
                        lines.append(f"0 {norm}")
                stem = f"{kind}-{seed + k}-{index:04d}-{c}"
                cv2.imwrite(str(out / "images" / split / f"{stem}.jpg"), canvas)
                (out / "labels" / split / f"{stem}.txt").write_text("\n".join(lines) + "\n")
                counts["canvases"] += 1
                counts["boxes"] += len(lines)
    write_data_yaml(out)
    return counts


def write_data_yaml(out: Path) -> Path:
    """``out/data.yaml`` for ultralytics, naming the photo detector's 53 classes (its head is
    kept whole when the strip detector starts from it; ``single_cls`` trains them as one)."""
    import yaml

    from okey import Tile

    data = {
        "path": str(out.resolve()),
        "train": "images/train",
        "val": "images/val",
        "names": {i: str(Tile(i)) for i in range(53)},
    }
    path = out / "data.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("datasets/build/strips"))
    parser.add_argument("--n", type=int, default=30, help="racks per tier kind")
    parser.add_argument("--seed", type=int, default=5000)
    args = parser.parse_args(argv)
    print(json.dumps(build_strips(args.out, args.n, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
