"""Where a recogniser's classifier misreads the held-out rendered set, and why.

Reads every labelled tile of a rendered set (default ``datasets/synth_eval``) from its *true* box,
so the detector is out of the picture: for an oriented-box manifest (``detector_task: obb``) the
tile's true turned box (from the sidecar's face quad), stood up and read as the recogniser does
(``read_both_ways`` included); else its upright box.  Prints identity accuracy split by how much
of the tile is visible (sidecar ``visible``: fingers, frame edge, other tiles) and how much of
its number (``number_visible``: a finger over the number, or only over the tile's foot), by typeface
(re-drawn from the image's seed), upside-down tiles, false jokers, how standing the turned box on
its long side stands the tile (upright, sideways: a tile squashed wider than tall, or upside
down), and the commonest confusions.
``--sheet`` writes a contact sheet of the misread crops (an oriented manifest's tiles stood on
their long side, as the classifier reads them first; with ``read_both_ways`` the levelled reading
may be the one kept; ``--visible-only``: only tiles with nothing in front of them).

    .venv/bin/python benchmarks/heldout.py [--manifest models/recognizer.yaml] [--data DIR]
        [--sheet docs/img/heldout_misreads.jpg --visible-only]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from okey import Tile
from vision.recognizer import CROP_PAD, MANIFEST, NUM_CLASSES, Recognizer, RecognizerSpec
from vision.training.crops import corner_rect, crop_tile, label_rect, straight_crop
from vision.training.evaluate import NUMBER_WHOLE
from vision.training.synth.dataset import oriented_corners, sample_rng
from vision.training.synth.scene import sample_scene

REPO = Path(__file__).resolve().parent.parent


def visibility_bin(visible: float) -> str:
    if visible >= 0.999:
        return "whole face visible"
    if visible >= 0.9:
        return "90-99 % visible"
    if visible >= 0.7:
        return "70-89 % visible"
    return "40-69 % visible"


def number_bin(shown: float | None) -> str | None:
    """The sidecar's ``number_visible`` (sets rendered before it was recorded have none)."""
    if shown is None:
        return None
    if shown >= NUMBER_WHOLE:
        return "number shown whole"
    if shown >= 0.5:
        return "number 50-94 % shown"
    return "number under half shown"


def long_side_stands(corners: np.ndarray) -> str:
    """How standing a tile's turned box on its long side (the recogniser's way) stands the tile
    whose corners are named after it: upright, sideways or upside down."""
    off = (label_rect(corners, "long")[4] - corner_rect(corners)[4]) % 360
    quarter = round(off / 90) % 4
    return ("long side: upright", "long side: sideways", "long side: upside down")[
        min(quarter, 4 - quarter)
    ]


def name(k: int) -> str:
    return str(Tile(k)) if k < NUM_CLASSES else "not a tile"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--data", type=Path, default=REPO / "datasets" / "synth_eval")
    parser.add_argument("--sheet", type=Path, help="write the misread crops here")
    parser.add_argument("--visible-only", action="store_true", help="sheet: whole faces only")
    parser.add_argument("--max-crops", type=int, default=120)
    parser.add_argument(
        "--scene", default="rack", help="the set's scene kind (sidecars do not say; for typefaces)"
    )
    args = parser.parse_args()

    recognizer = Recognizer(RecognizerSpec.load(args.manifest))
    turned_boxes = recognizer.spec.detector_task == "obb"
    seen: Counter[str] = Counter()
    right: Counter[str] = Counter()
    confusions: Counter[tuple[str, str]] = Counter()
    cells: list[np.ndarray] = []
    sidecars = sorted((args.data / "sidecars").glob("*.json"))
    if not sidecars:
        raise SystemExit(f"no sidecars in {args.data / 'sidecars'}: a rendered set is needed")
    for path in sidecars:
        truth = json.loads(path.read_text())
        tiles = [t for t in truth["tiles"] if t["labelled"]]
        named = oriented_corners(truth) if turned_boxes else []
        if named:
            if len(named) != len(tiles):
                raise SystemExit(f"{path}: {len(tiles)} labelled tiles, {len(named)} with a quad")
        elif turned_boxes and tiles:
            raise SystemExit(f"{path}: no face quads (re-render the set to read turned boxes)")
        if not tiles:
            continue
        rng = sample_rng(truth["seed"], truth["index"])
        size = (truth["width"], truth["height"])
        scene = sample_scene(rng, truth["style_pool"], size, truth.get("rules"), args.scene)
        image = cv2.imread(str(args.data / "images" / truth["image"]))
        boxes = np.array([t["box"] for t in tiles], np.float32)
        turned = None
        if named:
            turned = np.float32([label_rect(c, "long") for _, c in named])
        probs = recognizer.classify(image, boxes, turned)
        stands = [long_side_stands(c) for _, c in named] or [None] * len(tiles)
        rects = list(turned) if turned is not None else [None] * len(tiles)
        for t, p, box, stood, rect in zip(tiles, probs, boxes, stands, rects, strict=True):
            read = int(p.argmax())
            ok = read == t["class"]
            keys = ["all", visibility_bin(t["visible"]), f"typeface {scene.style.font}"]
            keys.append("false joker" if t["tile"] == "FJ" else "numbered tile")
            shown = number_bin(t.get("number_visible"))
            if shown:
                keys.append(shown)
            if t["upside_down"]:
                keys.append("upside down")
            if stood:
                keys.append(stood)
            for key in keys:
                seen[key] += 1
                right[key] += ok
            if ok:
                continue
            confusions[(t["tile"], name(read))] += 1
            whole = t["visible"] >= 0.999
            if args.sheet and len(cells) < args.max_crops and (whole or not args.visible_only):
                # what the classifier read: the tile stood on its long side, or its upright box
                if rect is None:
                    cell = crop_tile(image, tuple(box), 96, CROP_PAD)
                else:
                    cell = straight_crop(image, tuple(rect), 96, CROP_PAD)
                cell = cv2.resize(cell, (96, 96))
                cell = cv2.copyMakeBorder(cell, 0, 16, 0, 0, cv2.BORDER_CONSTANT, value=(255,) * 3)
                label = f"{t['tile']}>{name(read) if read < NUM_CLASSES else 'none'}"
                cv2.putText(cell, label, (2, 108), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1)
                cells.append(cell)

    how = "turned boxes" if turned_boxes else "boxes"
    print(f"{args.data} read by {args.manifest.name}'s classifier from the true {how}")
    print(f"{'tiles':34s} {'n':>6s} {'right':>6s} {'identity':>9s}")
    order = ["all"] + sorted(k for k in seen if k != "all")
    for key in order:
        print(f"{key:34s} {seen[key]:6d} {right[key]:6d} {100 * right[key] / seen[key]:8.2f}%")
    print("commonest misreads (truth -> read):")
    for (a, b), n in confusions.most_common(15):
        print(f"  {a:>3s} -> {b:<10s} {n}")
    if args.sheet:
        if not cells:
            print("no misread crops to draw")
            return
        while len(cells) % 12:
            cells.append(np.full_like(cells[0], 255))
        sheet = np.vstack([np.hstack(cells[i : i + 12]) for i in range(0, len(cells), 12)])
        args.sheet.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(args.sheet), sheet, [cv2.IMWRITE_JPEG_QUALITY, 85])
        print(f"wrote {args.sheet} ({len(cells)} cells)")


if __name__ == "__main__":
    main()
