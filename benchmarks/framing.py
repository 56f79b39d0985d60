"""How the recogniser holds up wherever a player points a phone: closer or farther, turned, cropped
to a phone's aspect, and close to a tiered rack of standing tiles.

Four axes, one change at a time, each in bins:

- ``zoom``: the real validation photos (``datasets/real_val``) and held-out renders
  (``datasets/synth_eval``) framed again so that their tiles' median width is 3, 5, 8, 12, 18,
  25 or 30 % of the frame's width: a window of the photo around the tiles (around one tile, when
  the window is smaller than the group), drawn into a frame of the photo's size: shrunk with area
  averaging, or enlarged (bilinear) where the tiles become larger than the photo's resolution;
  mid-grey where a window reaches past the photo.
- ``rotation``: the same photos turned 0, 15, 30, 45, 60, 75 and 90 degrees (anticlockwise as
  seen), every other photo in a landscape 640 x 480 frame, the rest in a portrait 480 x 640 one;
  the tiles kept at their size in the photo (shrunk by up to a quarter to fit more of them in).
- ``aspect``: the largest 16:9, 4:3 or 9:16 window of each photo around its tiles, long side 640.
- ``closeup``: renders of tiered racks (``vision.training.synth.tiers``, held-out styles) seen
  from 25-40 cm, a tile 10-20 % of the frame width, neighbours touching: two and three tiers,
  frontal (0-12 degrees off the faces) and oblique (25-50 degrees); the tiers in front hide the
  feet of the tiles behind.

Truth follows the pixels: each tile's outline (the real photos' polygon labels from
``datasets/rummikub-real``, the renders' face quads) goes through the same affine map as the
photo, and its truth box is the moved outline's upright box.  A tile with at least 90 % of its
outline inside the new frame is scored; one cut by the frame edge (some of it inside, under 90 %)
is neither truth nor an error: a box on it is not counted as extra (``ignored``).  In the
close-ups only the tiles the sidecar calls ``readable`` (half the face and the whole number in
the picture) are scored; the others (``hidden``: feet behind a tier, or mostly out of frame) are
reported apart: how many got a box (IoU >= 0.5) and how many of those were read right.

Scored as ``istaka eval`` scores (``vision.training.evaluate.score_image``): recall (labelled
tiles matched at IoU >= 0.5), identity (matched tiles read right), exact photos (every scored tile
found and read right, no extra box).  The targets of issue 18 are checked per axis: every bin's
exact rate at least 90 % of the axis's best bin; the zoom bins from 5 to 25 % at least 85 %
exact.

``--seed`` picks the variant: ``0`` (default) is the **reported** one; any other seed (``--seed
1`` is the **selection** variant) renders other close-ups and moves every window by other
offsets.  Choose a candidate on ``--seed 1``; report it on the default.

    .venv/bin/python benchmarks/framing.py [--manifest models/recognizer.yaml]
        [--axes zoom,rotation,aspect,closeup] [--seed 0] [--limit N] [--json FILE]
        [--sheet FILE.png] [--baseline EARLIER.json]

Close-up renders are cached under ``datasets/build/framing/`` (deterministic: the same seed
renders the same images).
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from vision.recognizer import MANIFEST, Recognizer, RecognizerSpec
from vision.training.data_real import upstream_to_index
from vision.training.evaluate import IOU_MATCH, EvalReport, Sample, score_image
from vision.training.synth.dataset import render_sample
from vision.training.synth.reframe import (
    WHOLE_INSIDE,
    View,
    clipped_box,
    inside_share,
    tile_width,
    turned_extent,
    unturn,
    window,
)
from vision.types import Box, Recognition, iou

REPO = Path(__file__).resolve().parent.parent
REAL_VAL = REPO / "datasets" / "real_val"
REAL_POLYGONS = REPO / "datasets" / "rummikub-real" / "labels"
SYNTH_EVAL = REPO / "datasets" / "synth_eval"
CACHE = REPO / "datasets" / "build" / "framing"

AXES = ("zoom", "rotation", "aspect", "closeup")
ZOOM_SHARES = (0.03, 0.05, 0.08, 0.12, 0.18, 0.25, 0.30)
TURNS = (0, 15, 30, 45, 60, 75, 90)
ASPECTS = {"16:9": 16 / 9, "4:3": 4 / 3, "9:16": 9 / 16}
CLOSEUPS = ("tiers2_frontal", "tiers2_oblique", "tiers3_frontal", "tiers3_oblique")
RENDER_SEED = 18000  # close-ups of variant s are rendered with seed RENDER_SEED + s
RENDERED = 40  # held-out renders used for zoom, rotation and aspect (of 200)
CLOSEUP_N = 25  # close-up renders per bin
LANDSCAPE, PORTRAIT = (640, 480), (480, 640)
IGNORE_OVERLAP = 0.5  # a box with this much of itself on (or this IoU with) an ignored tile
# targets of issue 18, deliverable 4
BIN_SHARE = 0.9  # every bin's exact rate >= this share of its axis's best bin
ZOOM_EXACT = 0.85  # zoom bins from 5 to 25 % >= this exact rate
ZOOM_TARGETED = (0.05, 0.25)

Polygon = np.ndarray  # (N, 2) pixels


@dataclass(frozen=True)
class Photo:
    """One source photo: its tiles' outlines (class, polygon) and the outlines of tiles it shows
    that are not scored (``ignored``)."""

    name: str
    source: str  # "real" or "rendered"
    image: np.ndarray
    tiles: list[tuple[int, Polygon]]
    ignored: list[Polygon] = field(default_factory=list)


@dataclass(frozen=True)
class Framed:
    """A photo as the benchmark shows it: image, scored truth, ignored boxes, hidden tiles."""

    name: str
    source: str
    image: np.ndarray
    truth: list[tuple[int, Box]]
    ignored: list[Box]
    hidden: list[tuple[int, Box]] = field(default_factory=list)


# sources ---------------------------------------------------------------------------------------


def _rect(box: list[float]) -> Polygon:
    x0, y0, x1, y1 = box
    return np.float64([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


def load_real(folder: Path = REAL_VAL, polygons: Path = REAL_POLYGONS) -> list[Photo]:
    """The real validation photos with their tiles' polygon labels (the upstream files)."""
    out = []
    for path in sorted((folder / "images").glob("*.jpg")):
        image = cv2.imread(str(path))
        h, w = image.shape[:2]
        tiles = []
        for line in (polygons / f"{path.stem}.txt").read_text().splitlines():
            parts = line.split()
            if len(parts) < 7:
                continue
            polygon = np.float64(parts[1:]).reshape(-1, 2) * np.float64([w, h])
            tiles.append((upstream_to_index(int(parts[0])), polygon))
        out.append(Photo(path.name, "real", image, tiles))
    return out


def load_rendered(folder: Path = SYNTH_EVAL, n: int = RENDERED) -> list[Photo]:
    """Held-out renders: each labelled tile's face quad (its visible box where a finger or the
    frame hides part of it); unlabelled tiles in the picture are ignored."""
    out = []
    for path in sorted((folder / "sidecars").glob("*.json"))[:n]:
        truth = json.loads(path.read_text())
        image = cv2.imread(str(folder / "images" / truth["image"]))
        tiles, ignored = [], []
        for t in truth["tiles"]:
            if t["box"] is None:
                continue
            whole = t["visible"] >= 0.999 and t.get("quad")
            outline = np.float64(t["quad"]) if whole else _rect(t["box"])
            if t["labelled"]:
                tiles.append((t["class"], outline))
            else:
                ignored.append(outline)
        out.append(Photo(truth["image"], "rendered", image, tiles, ignored))
    return out


def closeup(kind: str, index: int, seed: int) -> Framed:
    """Close-up ``index`` of ``kind`` for variant ``seed`` (rendered once, then read from the
    cache): the readable tiles are scored, the others ignored and reported as hidden."""
    folder = CACHE / f"closeup_s{RENDER_SEED + seed}"
    stem = f"{kind}_{index:03d}"
    image_path, truth_path = folder / f"{stem}.png", folder / f"{stem}.json"
    if image_path.is_file() and truth_path.is_file():
        image = cv2.imread(str(image_path))
        truth = json.loads(truth_path.read_text())
    else:
        # each kind its own stream of images: the seed and the kind's place in CLOSEUPS
        image, truth = render_sample(
            RENDER_SEED + seed, CLOSEUPS.index(kind) * 1000 + index, "heldout", scene_kind=kind
        )
        folder.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(image_path), image)
        truth_path.write_text(json.dumps(truth, separators=(",", ":")))
    scored, ignored, hidden = [], [], []
    for t in truth["tiles"]:
        if t["box"] is None:
            continue
        box = tuple(t["box"])
        if t.get("readable"):
            scored.append((t["class"], box))
        else:
            ignored.append(box)
            if t["labelled"]:
                hidden.append((t["class"], box))
    return Framed(f"{kind}_{index:03d}", "rendered", image, scored, ignored, hidden)


# framings ----------------------------------------------------------------------------------------


def photo_rng(seed: int, axis: str, value: str, name: str) -> np.random.Generator:
    """The generator of one framing of one photo: the same window whatever else is run."""
    key = f"{axis}:{value}:{name}".encode()
    return np.random.default_rng([seed, zlib.crc32(key)])


def _outlines(photo: Photo) -> list[Polygon]:
    """The tiles' outlines, or the whole photo's when it shows no tile."""
    if photo.tiles:
        return [p for _, p in photo.tiles]
    h, w = photo.image.shape[:2]
    return [_rect([0.0, 0.0, float(w), float(h)])]


def zoom_view(photo: Photo, share: float, rng: np.random.Generator) -> View:
    """The window of ``photo`` whose tiles' median width is ``share`` of the frame's width: around
    all the tiles when it holds them, else around one tile, at a seeded offset."""
    h, w = photo.image.shape[:2]
    if not photo.tiles:  # a photo without tiles (the table alone): framed as it is
        return window((w / 2, h / 2), float(w), 0.0, (w, h))
    polygons = [p for _, p in photo.tiles]
    crop_w = float(np.median([tile_width(p) for p in polygons])) / share
    crop = np.float64([crop_w, crop_w * h / w])
    points = np.vstack(polygons)
    lo, hi = points.min(axis=0), points.max(axis=0)
    slack = crop - (hi - lo)
    if np.all(slack >= 0.05 * crop):
        centre = (lo + hi) / 2 + rng.uniform(-0.3, 0.3, 2) * slack
    else:
        anchor = polygons[int(rng.integers(len(polygons)))].mean(axis=0)
        centre = anchor + rng.uniform(-0.15, 0.15, 2) * crop
    return window((float(centre[0]), float(centre[1])), crop_w, 0.0, (w, h))


def turn_view(
    photo: Photo, degrees: float, frame: tuple[int, int], rng: np.random.Generator
) -> View:
    """``photo`` turned ``degrees`` into ``frame``, its tiles at their size in the photo (shrunk
    by up to a quarter so that more of them fit), the window at a seeded offset."""
    h, w = photo.image.shape[:2]
    natural = max(frame) / max(w, h)
    lo, hi = turned_extent(_outlines(photo), degrees)
    extent = np.maximum(hi - lo, 1.0)
    fit = 0.92 * min(frame[0] / extent[0], frame[1] / extent[1])
    scale = min(natural, max(fit, 0.75 * natural))
    crop = np.float64(frame) / scale
    slack = crop - extent
    jitter = np.where(
        slack > 0, rng.uniform(-0.4, 0.4, 2) * slack, rng.uniform(-0.1, 0.1, 2) * crop
    )
    centre = unturn((lo + hi) / 2 + jitter, degrees)
    return window((float(centre[0]), float(centre[1])), float(crop[0]), degrees, frame)


def aspect_view(photo: Photo, aspect: float, rng: np.random.Generator) -> View:
    """The largest window of ``photo`` with ``aspect`` (width / height), around its tiles at a
    seeded offset, kept inside the photo; long side 640."""
    h, w = photo.image.shape[:2]
    crop_w, crop_h = (h * aspect, float(h)) if w / h > aspect else (float(w), w / aspect)
    points = np.vstack(_outlines(photo))
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    centre = centre + rng.uniform(-0.1, 0.1, 2) * np.float64([crop_w, crop_h])
    centre = np.clip(centre, [crop_w / 2, crop_h / 2], [w - crop_w / 2, h - crop_h / 2])
    frame = (640, round(640 / aspect)) if aspect >= 1 else (round(640 * aspect), 640)
    return window((float(centre[0]), float(centre[1])), crop_w, 0.0, frame)


def frame_photo(photo: Photo, view: View) -> Framed:
    """``photo`` seen through ``view``: tiles at least ``WHOLE_INSIDE`` inside the frame are
    truth, tiles cut by its edge are ignored, tiles outside it are gone."""
    truth, ignored = [], []
    for cls, polygon in photo.tiles:
        moved = view.polygon(polygon)
        inside = inside_share(moved, view.size)
        if inside >= WHOLE_INSIDE:
            truth.append((cls, clipped_box(moved, view.size)))
        elif inside > 0:
            ignored.append(clipped_box(moved, view.size))
    for polygon in photo.ignored:
        moved = view.polygon(polygon)
        if inside_share(moved, view.size) > 0:
            ignored.append(clipped_box(moved, view.size))
    return Framed(photo.name, photo.source, view.apply(photo.image), truth, ignored)


@dataclass(frozen=True)
class Bin:
    axis: str
    name: str
    about: str
    frames: Callable[[], Iterator[Framed]]
    value: float = 0.0  # the zoom bins' tile share


def build_bins(axes: list[str], photos: list[Photo], seed: int, closeups: int) -> list[Bin]:
    """The bins of the chosen axes, in the table's order; each makes its photos when run."""
    bins: list[Bin] = []

    def framed(axis: str, value: str, make: Callable[[Photo, int, np.random.Generator], View]):
        def frames() -> Iterator[Framed]:
            for k, photo in enumerate(photos):
                yield frame_photo(photo, make(photo, k, photo_rng(seed, axis, value, photo.name)))

        return frames

    if "zoom" in axes:
        for share in ZOOM_SHARES:
            bins.append(
                Bin(
                    "zoom",
                    f"{share:.0%}",
                    f"median tile width {share:.0%} of the frame width",
                    framed("zoom", str(share), lambda p, k, r, s=share: zoom_view(p, s, r)),
                    share,
                )
            )
    if "rotation" in axes:
        for degrees in TURNS:

            def turn(p: Photo, k: int, r: np.random.Generator, d: float = degrees) -> View:
                # landscape and portrait frames alternate, the variant's seed deciding which first
                return turn_view(p, d, LANDSCAPE if (k + seed) % 2 == 0 else PORTRAIT, r)

            bins.append(
                Bin(
                    "rotation",
                    f"{degrees} deg",
                    f"turned {degrees} degrees, landscape and portrait frames",
                    framed("rotation", str(degrees), turn),
                )
            )
    if "aspect" in axes:
        for label, ratio in ASPECTS.items():
            bins.append(
                Bin(
                    "aspect",
                    label,
                    f"largest {label} window around the tiles, long side 640",
                    framed("aspect", label, lambda p, k, r, a=ratio: aspect_view(p, a, r)),
                )
            )
    if "closeup" in axes:
        for kind in CLOSEUPS:
            tiers, view = kind.split("_")
            bins.append(
                Bin(
                    "closeup",
                    f"{tiers[-1]} tiers {view}",
                    f"tiered rack close-up ({kind}), tile 10-20 % of the frame width",
                    lambda k=kind: (closeup(k, i, seed) for i in range(closeups)),
                )
            )
    return bins


# scoring ---------------------------------------------------------------------------------------


def _overlap(a: Box, b: Box) -> float:
    """The larger of IoU and the share of ``a`` covered by ``b``."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area = max((a[2] - a[0]) * (a[3] - a[1]), 1e-9)
    return max(iou(a, b), ix * iy / area)


def scored_reading(framed: Framed, recognition: Recognition) -> Recognition:
    """The recognition without the boxes that lie on an ignored tile and on no scored one."""
    keep = []
    for reading in recognition.tiles:
        on_truth = max((iou(reading.box, b) for _, b in framed.truth), default=0.0)
        on_ignored = max((_overlap(reading.box, b) for b in framed.ignored), default=0.0)
        if on_truth >= IOU_MATCH or on_ignored < IGNORE_OVERLAP:
            keep.append(reading)
    return replace(recognition, tiles=keep)


@dataclass
class BinResult:
    report: EvalReport = field(default_factory=EvalReport)
    by_source: dict[str, EvalReport] = field(default_factory=dict)
    hidden: int = 0
    hidden_boxed: int = 0
    hidden_right: int = 0


def score(result: BinResult, framed: Framed, recognition: Recognition) -> None:
    """Add one framed photo's outcome to ``result``."""
    sample = Sample(Path(framed.name), framed.truth)
    reading = scored_reading(framed, recognition)
    score_image(result.report, sample, reading)
    score_image(result.by_source.setdefault(framed.source, EvalReport()), sample, reading)
    for cls, box in framed.hidden:
        result.hidden += 1
        best = max(recognition.tiles, key=lambda r: iou(r.box, box), default=None)
        if best is not None and iou(best.box, box) >= IOU_MATCH:
            result.hidden_boxed += 1
            result.hidden_right += best.tile.index == cls


def run_bin(recognizer: Recognizer, bin_: Bin, cells: list[np.ndarray] | None = None) -> BinResult:
    """Score every photo of a bin; with ``cells``, add its first photo drawn (``draw``)."""
    result = BinResult()
    for k, framed in enumerate(bin_.frames()):
        recognition = recognizer.recognize(framed.image)
        score(result, framed, recognition)
        if cells is not None and k == 0:
            cells.append(draw(framed, recognition, f"{bin_.axis} {bin_.name}"))
    return result


def draw(framed: Framed, recognition: Recognition, title: str, height: int = 320) -> np.ndarray:
    """A framed photo with its truth (green), ignored tiles (orange) and the boxes read (thin
    red), scaled to ``height``."""
    image = framed.image.copy()
    for box in framed.ignored:
        cv2.rectangle(image, _pt(box[:2]), _pt(box[2:]), (0, 160, 255), 2)
    for _, box in framed.truth:
        cv2.rectangle(image, _pt(box[:2]), _pt(box[2:]), (0, 220, 0), 2)
    for reading in recognition.tiles:
        box = reading.box
        cv2.rectangle(image, _pt(box[:2]), _pt(box[2:]), (0, 0, 255), 1)
    scale = height / image.shape[0]
    image = cv2.resize(image, (round(image.shape[1] * scale), height), interpolation=cv2.INTER_AREA)
    cv2.putText(image, title, (4, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 2)
    return image


def _pt(xy: tuple[float, ...]) -> tuple[int, int]:
    return round(xy[0]), round(xy[1])


def write_sheet(path: Path, cells: list[np.ndarray], width: int = 1600) -> None:
    """The cells in rows of at most ``width`` pixels."""
    rows, current = [], []
    for cell in cells:
        if current and sum(c.shape[1] for c in current) + cell.shape[1] > width:
            rows.append(current)
            current = []
        current.append(cell)
    rows.append(current)
    lines = [
        cv2.copyMakeBorder(
            np.hstack(r),
            0,
            0,
            0,
            width - sum(c.shape[1] for c in r),
            cv2.BORDER_CONSTANT,
            value=(255, 255, 255),
        )
        for r in rows
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.vstack(lines))


# report ----------------------------------------------------------------------------------------


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:6.1%}" if whole else "     -"


def row(bin_: Bin, result: BinResult) -> str:
    r = result.report
    sources = "  ".join(
        f"{name} {_pct(rep.exact_images, rep.images)}"
        for name, rep in sorted(result.by_source.items())
    )
    return (
        f"{bin_.axis:9s} {bin_.name:18s} {r.images:6d} {r.truth_tiles:6d}"
        f" {_pct(r.matched, r.truth_tiles)} {_pct(r.matched, r.predicted_tiles)}"
        f" {_pct(r.correct, r.matched)} {_pct(r.exact_images, r.images)}   {sources}"
    )


HEAD = (
    f"{'axis':9s} {'bin':18s} {'photos':>6s} {'tiles':>6s} {'recall':>6s} {'prec.':>6s}"
    f" {'ident.':>6s} {'exact':>6s}   exact by source"
)


def targets(results: dict[str, list[tuple[Bin, BinResult]]]) -> list[str]:
    """Issue 18's targets per axis: worst bin against the best, zoom 5-25 % against 85 %."""
    lines = []
    for axis, rows in results.items():
        rates = [(b, r.report.exact_match) for b, r in rows if r.report.images]
        if not rates:
            continue
        best = max(rates, key=lambda x: x[1])
        worst = min(rates, key=lambda x: x[1])
        floor = BIN_SHARE * best[1]
        ok = worst[1] >= floor
        lines.append(
            f"{axis:9s} worst bin {worst[0].name} {worst[1]:.1%}, best {best[0].name}"
            f" {best[1]:.1%}: every bin >= {floor:.1%} (90 % of best) {'met' if ok else 'MISSED'}"
            + ("" if ok else f" by {floor - worst[1]:.1%}")
        )
        if axis == "zoom":
            lo, hi = ZOOM_TARGETED
            short = [
                (b.name, rate)
                for b, rate in rates
                if lo - 1e-9 <= b.value <= hi + 1e-9 and rate < ZOOM_EXACT
            ]
            lines.append(
                f"{'':9s} zoom bins {lo:.0%}-{hi:.0%} >= {ZOOM_EXACT:.0%} exact: "
                + ("met" if not short else "MISSED: " + ", ".join(f"{n} {v:.1%}" for n, v in short))
            )
    return lines


def mean_exact(results: dict[str, list[tuple[Bin, BinResult]]]) -> float:
    """The exact-photo rate averaged over every bin run (each bin weighs the same)."""
    rates = [r.report.exact_match for rows in results.values() for _, r in rows]
    return sum(rates) / len(rates) if rates else 0.0


def compare(results: dict[str, list[tuple[Bin, BinResult]]], baseline: dict) -> list[str]:
    """Each bin's exact rate against the same bin of an earlier ``--json`` run (``baseline``)."""
    lines, ours, theirs = [], [], []
    for axis, rows in results.items():
        for bin_, result in rows:
            before = baseline.get("axes", {}).get(axis, {}).get(bin_.name)
            if before is None:
                continue
            now = result.report.exact_match
            ours.append(now)
            theirs.append(before["exact_match"])
            lines.append(
                f"{axis:9s} {bin_.name:18s} {before['exact_match']:7.1%} -> {now:7.1%}"
                f" ({now - before['exact_match']:+.1%})"
            )
    if ours:
        a, b = sum(theirs) / len(theirs), sum(ours) / len(ours)
        worst = min(o - t for o, t in zip(ours, theirs, strict=True))
        lines.append(
            f"mean exact over {len(ours)} bins {a:.1%} -> {b:.1%} ({b - a:+.1%}); "
            f"largest fall {worst:+.1%}"
        )
    return lines


def summary(bin_: Bin, result: BinResult) -> dict:
    out = {
        "about": bin_.about,
        **result.report.summary(),
        "by_source": {k: v.summary() for k, v in result.by_source.items()},
    }
    if bin_.axis == "closeup":
        out["hidden"] = {
            "tiles": result.hidden,
            "boxed": result.hidden_boxed,
            "read_right": result.hidden_right,
        }
    return out


def _shown(path: Path) -> str:
    resolved = path.resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument(
        "--axes", default=",".join(AXES), help=f"comma-separated, of: {', '.join(AXES)}"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="0: the reported variant; 1: the selection variant"
    )
    parser.add_argument(
        "--limit", type=int, help="at most N photos per source and N close-ups per bin (smoke)"
    )
    parser.add_argument("--rendered", type=int, default=RENDERED, help="held-out renders used")
    parser.add_argument("--closeups", type=int, default=CLOSEUP_N, help="close-ups per bin")
    parser.add_argument("--json", type=Path, help="write the per-bin summaries here")
    parser.add_argument(
        "--sheet", type=Path, help="draw each bin's first photo (truth, ignored, read) in a PNG"
    )
    parser.add_argument(
        "--baseline", type=Path, help="an earlier --json run (same seed): exact rates compared"
    )
    args = parser.parse_args(argv)

    axes = [a.strip() for a in args.axes.split(",") if a.strip()]
    unknown = sorted(set(axes) - set(AXES))
    if unknown:
        parser.error(f"unknown axis {', '.join(unknown)}; known: {', '.join(AXES)}")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit needs a positive number")
    photos: list[Photo] = []
    if set(axes) - {"closeup"}:
        photos = load_real()[: args.limit] + load_rendered(
            n=min(args.rendered, args.limit or args.rendered)
        )
    closeups = min(args.closeups, args.limit or args.closeups)
    recognizer = Recognizer(RecognizerSpec.load(args.manifest))
    variant = "reported" if args.seed == 0 else "selection" if args.seed == 1 else "other"
    real = sum(p.source == "real" for p in photos)
    print(f"manifest {_shown(args.manifest)}; seed {args.seed} ({variant} variant)")
    print(
        f"photos: {real} real validation, {len(photos) - real} held-out renders; "
        f"{closeups} close-ups per bin (held-out styles)"
    )
    print("scored as istaka eval: tiles matched at IoU >= 0.5; cut and hidden tiles not scored")
    print()
    print(HEAD)
    results: dict[str, list[tuple[Bin, BinResult]]] = {}
    cells: list[np.ndarray] | None = [] if args.sheet else None
    for bin_ in build_bins(axes, photos, args.seed, closeups):
        result = run_bin(recognizer, bin_, cells)
        results.setdefault(bin_.axis, []).append((bin_, result))
        print(row(bin_, result), flush=True)
    if "closeup" in results:
        print()
        print("close-ups, tiles not scored (feet behind a tier, or out of frame):")
        for bin_, result in results["closeup"]:
            print(
                f"  {bin_.name:18s} hidden {result.hidden:4d},"
                f" boxed {_pct(result.hidden_boxed, result.hidden)},"
                f" read right {_pct(result.hidden_right, result.hidden_boxed)} of boxed"
            )
    print()
    print("targets (issue 18):")
    lines = targets(results)
    for line in lines:
        print("  " + line)
    print(f"  mean exact over the bins: {mean_exact(results):.1%}")
    if args.baseline:
        baseline = json.loads(args.baseline.read_text())
        if baseline.get("seed") != args.seed:
            print(f"  (baseline is seed {baseline.get('seed')}, this run seed {args.seed})")
        print()
        print(f"against {_shown(args.baseline)} ({baseline.get('manifest')}):")
        for line in compare(results, baseline):
            print("  " + line)
    if args.sheet and cells:
        write_sheet(args.sheet, cells)
        print(f"wrote {args.sheet}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "manifest": _shown(args.manifest),
            "seed": args.seed,
            "variant": variant,
            "photos": {"real": real, "rendered": len(photos) - real, "closeups_per_bin": closeups},
            "axes": {
                axis: {b.name: summary(b, r) for b, r in rows} for axis, rows in results.items()
            },
            "targets": lines,
            "mean_exact": round(mean_exact(results), 4),
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
