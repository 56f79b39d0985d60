"""The indicator floor: how sure the reading of the lone tile off the rack must be before the
pipeline uses it as the indicator (``vision.pipeline.INDICATOR_FLOOR``).

Scans every photo of a rendered set (default ``datasets/synth_eval``, whose sidecars name the
indicator and its box) and of the real validation set (``datasets/real_val``: Rummikub photos,
which have no indicator at all) with no indicator typed and no floor, and keeps each photo's
candidate: the lone tile off the rack, its reading and its confidence (reading x detection).

A candidate is *right* when it is the rendered indicator (box IoU >= 0.5 with the sidecar's
indicator tile) read as the sidecar's indicator; every other candidate is *wrong*: another tile
taken for the indicator (a discard, a tile of another rack, any tile of a real photo), or the
indicator misread.  For each floor the script prints how many right candidates would be used and
how many wrong ones; the floor chosen is the lowest one that uses no wrong candidate on either set.

    .venv/bin/python benchmarks/indicator_floor.py [--synth DIR] [--real DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from okey import Tile
from vision.pipeline import NothingFoundError, Pipeline, load_image

REPO = Path(__file__).resolve().parent.parent
FLOORS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def iou(a: list[float] | tuple[float, ...], b: list[float] | tuple[float, ...]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def candidate(pipeline: Pipeline, image: np.ndarray) -> tuple[str, float, tuple] | None:
    """The lone tile off the rack read as the indicator: (reading, confidence, box), if any."""
    try:
        result = pipeline.scan(image)
    except NothingFoundError:
        return None
    read = result.indicator_read
    if read is None:
        return None
    box = next(p.box for p in result.table if p.id == read.id)
    return str(read.tile), read.confidence, box


def rendered(pipeline: Pipeline, folder: Path) -> list[tuple[float, bool, bool]]:
    """(confidence, right, whether the candidate is the indicator's tile at all)."""
    out = []
    for sidecar in sorted((folder / "sidecars").glob("*.json")):
        truth = json.loads(sidecar.read_text())
        found = candidate(pipeline, load_image(folder / "images" / truth["image"]))
        if found is None:
            continue
        tile, confidence, box = found
        indicator = [t for t in truth["tiles"] if t.get("role") == "indicator" and t["box"]]
        on_it = bool(indicator) and iou(box, indicator[0]["box"]) >= 0.5
        out.append((confidence, on_it and tile == truth["indicator"], on_it))
    return out


def real(pipeline: Pipeline, folder: Path) -> list[tuple[float, bool, bool]]:
    """(confidence, False, whether the tile's identity was read right): a Rummikub photo has no
    indicator, so its candidate is always wrong; the identity tells a misread from a layout slip."""
    out = []
    for path in sorted((folder / "images").glob("*.jpg")):
        image = load_image(path)
        found = candidate(pipeline, image)
        if found is None:
            continue
        tile, confidence, box = found
        h, w = image.shape[:2]
        labels = []
        for line in (folder / "labels" / f"{path.stem}.txt").read_text().splitlines():
            cls, cx, cy, bw, bh = (float(v) for v in line.split()[:5])
            labels.append(
                (
                    int(cls),
                    ((cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h),
                )
            )
        best = max(labels, key=lambda lab: iou(box, lab[1]), default=None)
        read_right = best is not None and iou(box, best[1]) >= 0.5 and str(Tile(best[0])) == tile
        out.append((confidence, False, read_right))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synth", type=Path, default=REPO / "datasets" / "synth_eval")
    parser.add_argument("--real", type=Path, default=REPO / "datasets" / "real_val")
    args = parser.parse_args()
    pipeline = Pipeline.default()
    pipeline.indicator_floor = 0.0  # keep every candidate; the floors are applied below
    synth = rendered(pipeline, args.synth)
    photos = real(pipeline, args.real)
    n_synth = len(list((args.synth / "images").glob("*.jpg")))
    n_real = len(list((args.real / "images").glob("*.jpg")))
    right = [c for c, ok, _ in synth if ok]
    wrong_synth = [c for c, ok, _ in synth if not ok]
    misread = [c for c, ok, on_it in synth if on_it and not ok]
    wrong_real = [c for c, _, _ in photos]
    print(
        f"rendered: {n_synth} photos, {len(synth)} with a lone tile off the rack: "
        f"{len(right)} the indicator read right, {len(wrong_synth)} wrong ({len(misread)} the "
        f"indicator misread, {len(wrong_synth) - len(misread)} another tile: a discard, a tile of"
        " another rack)"
    )
    print(
        "confidence of the indicator read right: "
        + (f"median {np.median(right):.3f}, max {max(right):.3f}" if right else "none")
    )
    print(
        f"real:     {n_real} photos, {len(photos)} with a lone tile off the rack (none is an "
        f"indicator; {sum(r for *_, r in photos)} of them read right as tiles)"
    )
    print(
        f"wrong candidates' confidence: rendered max {max(wrong_synth, default=0):.3f}, "
        f"real max {max(wrong_real, default=0):.3f}"
    )
    print("floor  right used       wrong used (rendered, real)")
    for floor in FLOORS:
        used = sum(c >= floor for c in right)
        print(
            f"{floor:5.2f}  {used:3d}/{len(right):3d} ({used / max(1, len(right)):4.0%})  "
            f"{sum(c >= floor for c in wrong_synth):3d}, {sum(c >= floor for c in wrong_real):3d}"
        )
    wrong = wrong_synth + wrong_real
    lowest = max(wrong, default=0.0)
    print(
        f"lowest floor with no wrong candidate used: above {lowest:.3f}; right candidates kept "
        f"there: {sum(c > lowest for c in right)}/{len(right)}"
    )


if __name__ == "__main__":
    main()
