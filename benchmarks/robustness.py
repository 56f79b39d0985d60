"""How the recogniser holds up on the real validation photos under camera and light changes.

Each photo of a labelled set (default ``datasets/real_val``) is changed by one perturbation at a
time (``PERTURBATIONS``: light colour, exposure, contrast, blur, JPEG, resolution, and turned,
squashed or tilted views), read by the recogniser, and scored as ``istaka eval`` scores it
(``vision.training.evaluate.score_image``: tile recall and precision at IoU >= 0.5, identity
accuracy of the matched tiles, image-level exact match).  The first row, ``none``, is the photos
as they are: its figures are those of ``istaka eval datasets/real_val``.

Photometric perturbations keep the labelled boxes.  Geometric ones move them with the picture: a
box's four corners go through the same affine map as the pixels and the new truth box is their
upright hull, clipped to the new frame (a labelled tile with under half of that hull left in
the frame is dropped; the tile counts in the table say how many remain).  For ``tilted 10`` the
hull of a turned tile is a slightly looser truth box than a label drawn on the tilted photo
would be.  Every perturbation is deterministic: the one with noise (``dim``) seeds it from the
image's file name.

    .venv/bin/python benchmarks/robustness.py [--manifest models/recognizer.yaml]
        [--data datasets/real_val] [--set first|second] [--only NAME ...] [--limit N]
        [--json FILE]

``--set second`` runs ``SECOND_SET``: twelve other changes (colour casts, sensor noise,
vignetting, tone curves, a shadow, over-sharpening, a phone's whole pipeline, narrowed, far and
keystoned views), fixed after the first set had been measured and before any model was run on
them.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from vision.recognizer import MANIFEST, Recognizer, RecognizerSpec
from vision.training.crops import motion_kernel
from vision.training.evaluate import EvalReport, Sample, load_samples, score_image
from vision.types import Box

REPO = Path(__file__).resolve().parent.parent
SEED = 20240
MIN_INSIDE = 0.5  # a moved truth box with less of its hull in the new frame is dropped
GREY = 128

ImageFn = Callable[[np.ndarray, np.random.Generator], np.ndarray]
# (width, height) of the photo -> 2 x 3 affine map of continuous pixel coordinates (a pixel
# (i, j) covers [i, i + 1) x [j, j + 1)), or None where the boxes stay as they are
GeometryFn = Callable[[int, int], np.ndarray]


@dataclass(frozen=True)
class Perturbation:
    """One change to a photo: ``image`` makes it, ``geometry`` (geometric ones) moves boxes."""

    name: str
    about: str
    image: ImageFn
    geometry: GeometryFn | None = None


def _to_uint8(values: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


# photometric ---------------------------------------------------------------------------------


def as_is(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return image


def gains(b: float, g: float, r: float) -> ImageFn:
    """White balance: each BGR channel multiplied by its gain, then clipped."""
    factors = np.float32([b, g, r])
    return lambda image, rng: np.clip(np.rint(image * factors), 0, 255).astype(np.uint8)


def exposure(factor: float, noise_sigma: float = 0.0) -> ImageFn:
    """Every channel times ``factor`` (clipped), plus seeded Gaussian sensor noise."""

    def apply(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = image.astype(np.float32) * factor
        if noise_sigma:
            out += rng.normal(0.0, noise_sigma, image.shape).astype(np.float32)
        return _to_uint8(out)

    return apply


def toward_grey(share: float) -> ImageFn:
    """Contrast lowered: each pixel moved ``share`` of the way to mid-grey."""
    return lambda image, rng: _to_uint8(image.astype(np.float32) * (1 - share) + GREY * share)


def gaussian_blur(sigma: float) -> ImageFn:
    return lambda image, rng: cv2.GaussianBlur(image, (0, 0), sigmaX=sigma, sigmaY=sigma)


def motion_blur(length: int) -> ImageFn:
    """A horizontal line kernel ``length`` pixels long (the camera moved sideways)."""
    kernel = motion_kernel(length, 0.0)
    return lambda image, rng: cv2.filter2D(image, -1, kernel, borderType=cv2.BORDER_REFLECT)


def jpeg(quality: int) -> ImageFn:
    def apply(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        return cv2.imdecode(data, cv2.IMREAD_COLOR)

    return apply


def gamma(power: float) -> ImageFn:
    """Tone curve: each channel's value v (0-1) becomes v ** ``power`` (under 1 lifts shadows)."""
    table = _to_uint8(255.0 * (np.arange(256) / 255.0) ** power)
    return lambda image, rng: cv2.LUT(image, table)


def vignette(corner: float) -> ImageFn:
    """Brightness falling off from the centre as cos^4 would, to ``corner`` in the corners."""

    def apply(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h, w = image.shape[:2]
        y, x = np.ogrid[:h, :w]
        r2 = ((x + 0.5 - w / 2) / (w / 2)) ** 2 + ((y + 0.5 - h / 2) / (h / 2)) ** 2
        gain = 1.0 - (1.0 - corner) * r2 / 2.0  # 1 in the centre, ``corner`` where r2 = 2
        return _to_uint8(image.astype(np.float32) * gain[..., None].astype(np.float32))

    return apply


def shadow(share: float, factor: float) -> ImageFn:
    """The left ``share`` of the photo darkened to ``factor`` (a person's shadow), its edge soft
    over a twentieth of the width."""

    def apply(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        w = image.shape[1]
        x = (np.arange(w) + 0.5) / w
        ramp = np.clip((x - share) / 0.05 + 0.5, 0.0, 1.0)  # 0 inside the shadow, 1 outside
        gain = (factor + (1.0 - factor) * ramp).astype(np.float32)
        return _to_uint8(image.astype(np.float32) * gain[None, :, None])

    return apply


def sharpen(amount: float, sigma: float) -> ImageFn:
    """Unsharp mask, as phone cameras over-apply it: image + amount * (image - blurred)."""

    def apply(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        blurred = cv2.GaussianBlur(image, (0, 0), sigmaX=sigma, sigmaY=sigma).astype(np.float32)
        return _to_uint8(image.astype(np.float32) * (1 + amount) - blurred * amount)

    return apply


def chain(*steps: ImageFn) -> ImageFn:
    """Several photometric changes one after the other (a phone's whole pipeline)."""

    def apply(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        for step in steps:
            image = step(image, rng)
        return image

    return apply


# geometric -----------------------------------------------------------------------------------


def _scaled_size(w: int, h: int, fx: float, fy: float) -> tuple[int, int]:
    return max(1, round(w * fx)), max(1, round(h * fy))


def resize(fx: float, fy: float) -> tuple[ImageFn, GeometryFn]:
    """The photo resized (INTER_AREA) to ``fx`` of its width and ``fy`` of its height."""

    def image_fn(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h, w = image.shape[:2]
        return cv2.resize(image, _scaled_size(w, h, fx, fy), interpolation=cv2.INTER_AREA)

    def geometry(w: int, h: int) -> np.ndarray:
        nw, nh = _scaled_size(w, h, fx, fy)
        return np.float64([[nw / w, 0, 0], [0, nh / h, 0]])

    return image_fn, geometry


def turn_180() -> tuple[ImageFn, GeometryFn]:
    """The photo upside down (``cv2.rotate``): x -> w - x, y -> h - y."""

    def image_fn(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return cv2.rotate(image, cv2.ROTATE_180)

    def geometry(w: int, h: int) -> np.ndarray:
        return np.float64([[-1, 0, w], [0, -1, h]])

    return image_fn, geometry


def _warp(warp: Callable[..., np.ndarray], image: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``cv2.warpAffine`` or ``cv2.warpPerspective`` into a frame of the same size, bilinear,
    mid-grey where the photo does not reach."""
    h, w = image.shape[:2]
    return warp(
        image,
        matrix,
        (w, h),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(GREY, GREY, GREY),
    )


def tilt(degrees: float) -> tuple[ImageFn, GeometryFn]:
    """The photo turned ``degrees`` anticlockwise (as seen) about its centre, same frame size,
    the corners it uncovers filled with mid-grey."""

    def geometry(w: int, h: int) -> np.ndarray:
        return cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)

    def image_fn(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h, w = image.shape[:2]
        # warpAffine works on pixel indices, whose centres sit half a pixel in from the
        # continuous coordinates the boxes use: turning about (w - 1) / 2 is the same turn
        matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), degrees, 1.0)
        return _warp(cv2.warpAffine, image, matrix)

    return image_fn, geometry


def keystone(top: float) -> tuple[ImageFn, GeometryFn]:
    """Perspective of a camera looking along the table: the top edge narrowed to ``top`` of the
    width about the centre, the bottom edge kept, the frame the same size (mid-grey outside)."""

    def geometry(w: int, h: int) -> np.ndarray:
        inset = (1.0 - top) * w / 2
        source = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        target = np.float32([[inset, 0], [w - inset, 0], [w, h], [0, h]])
        return cv2.getPerspectiveTransform(source, target).astype(np.float64)

    def image_fn(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h, w = image.shape[:2]
        # the same map on pixel indices, whose centres sit half a pixel in: shift, map, shift back
        half = np.float64([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
        matrix = np.linalg.inv(half) @ geometry(w, h) @ half
        return _warp(cv2.warpPerspective, image, matrix)

    return image_fn, geometry


def map_box(box: Box, matrix: np.ndarray, size: tuple[int, int]) -> Box | None:
    """The upright hull of ``box``'s four corners under ``matrix`` (2 x 3 affine or 3 x 3
    perspective), clipped to ``size`` (w, h); None when under ``MIN_INSIDE`` of the hull is left
    in the frame."""
    x1, y1, x2, y2 = box
    corners = np.float64([[x1, y1, 1], [x2, y1, 1], [x2, y2, 1], [x1, y2, 1]]) @ matrix.T
    if matrix.shape[0] == 3:  # a perspective map: divide by the third coordinate
        corners = corners[:, :2] / corners[:, 2:]
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    limit = np.float64(size)
    clo, chi = np.clip(lo, 0, limit), np.clip(hi, 0, limit)
    area = float(np.prod(hi - lo))
    inside = float(np.prod(np.clip(chi - clo, 0, None)))
    if area <= 0 or inside < MIN_INSIDE * area:
        return None
    return (float(clo[0]), float(clo[1]), float(chi[0]), float(chi[1]))


# the registry: one line each, in the table's order ------------------------------------------


def _registry(*perturbations: Perturbation) -> dict[str, Perturbation]:
    names = [p.name for p in perturbations]
    if len(set(names)) != len(names):
        raise ValueError(f"perturbation names repeat: {names}")
    return {p.name: p for p in perturbations}


PERTURBATIONS: dict[str, Perturbation] = _registry(
    Perturbation("none", "the photos as they are", as_is),
    Perturbation("warm light", "tungsten ~3000 K: B x0.70, G x0.92", gains(0.70, 0.92, 1.0)),
    Perturbation("cool light", "shade, blue daylight: G x0.93, R x0.75", gains(1.0, 0.93, 0.75)),
    Perturbation("dim", "exposure x0.45, sensor noise sigma 6", exposure(0.45, noise_sigma=6.0)),
    Perturbation("bright", "exposure x1.5, highlights clipped", exposure(1.5)),
    Perturbation("low contrast", "50 % toward grey 128 (haze, glare)", toward_grey(0.5)),
    Perturbation("defocus blur", "Gaussian blur sigma 2.0 px", gaussian_blur(2.0)),
    Perturbation("motion blur", "horizontal line kernel 9 px", motion_blur(9)),
    Perturbation("jpeg 25", "re-encoded as JPEG quality 25", jpeg(25)),
    Perturbation("low resolution", "50 % size (INTER_AREA), boxes too", *resize(0.5, 0.5)),
    Perturbation("turned 180", "rack photographed upside down", *turn_180()),
    Perturbation("squashed", "height to 60 % (camera higher up)", *resize(1.0, 0.6)),
    Perturbation("tilted 10", "turned 10 deg, truth: hull of turned box", *tilt(10.0)),
)

# The second set, fixed on 2026-11-30 before any model was run on it: other cameras and light than
# the first set's, to check on fresh conditions what the first set measured (the card's decision
# between two classifiers).  Its first row is again the photos as they are.
SECOND_SET: dict[str, Perturbation] = _registry(
    PERTURBATIONS["none"],
    Perturbation("fluorescent", "green cast: B x0.85, R x0.80", gains(0.85, 1.0, 0.80)),
    Perturbation("magenta cast", "G x0.80 (a phone's white balance off)", gains(1.0, 0.80, 1.0)),
    Perturbation("sensor noise", "Gaussian noise sigma 12, exposure kept", exposure(1.0, 12.0)),
    Perturbation("vignette", "corners darkened to x0.4 (cos^4-like)", vignette(0.4)),
    Perturbation("lifted shadows", "tone curve v ** 0.6 (phone HDR)", gamma(0.6)),
    Perturbation("deep shadows", "tone curve v ** 1.8 (hard contrast)", gamma(1.8)),
    Perturbation("hand shadow", "left half x0.45, soft edge", shadow(0.5, 0.45)),
    Perturbation("oversharpened", "unsharp mask amount 2, sigma 1.5 px", sharpen(2.0, 1.5)),
    Perturbation(
        "phone pipeline",
        "B x0.90, G x0.97; noise sigma 4; blur sigma 1; JPEG 50",
        chain(gains(0.90, 0.97, 1.0), exposure(1.0, 4.0), gaussian_blur(1.0), jpeg(50)),
    ),
    Perturbation("narrowed", "width to 70 % (camera off to one side)", *resize(0.7, 1.0)),
    Perturbation("far away", "35 % size (INTER_AREA), boxes too", *resize(0.35, 0.35)),
    Perturbation("keystone", "top edge 80 % wide (looking along)", *keystone(0.8)),
)
SETS = {"first": PERTURBATIONS, "second": SECOND_SET}


def image_rng(sample: Sample) -> np.random.Generator:
    """The seeded generator of one photo: the same noise whatever else is run."""
    return np.random.default_rng([SEED, zlib.crc32(sample.image.name.encode())])


def perturb(
    perturbation: Perturbation, image: np.ndarray, sample: Sample
) -> tuple[np.ndarray, Sample]:
    """The perturbed photo and its sample with the truth boxes moved along."""
    out = perturbation.image(image, image_rng(sample))
    if perturbation.geometry is None:
        return out, sample
    h, w = image.shape[:2]
    matrix = perturbation.geometry(w, h)
    size = (out.shape[1], out.shape[0])
    truth, shown = [], []
    for k, (cls, box) in enumerate(sample.truth):
        moved = map_box(box, matrix, size)
        if moved is not None:
            truth.append((cls, moved))
            if sample.number_shown is not None:
                shown.append(sample.number_shown[k])
    return out, replace(
        sample, truth=truth, number_shown=shown if sample.number_shown is not None else None
    )


def run(
    recognizer: Recognizer,
    perturbation: Perturbation,
    samples: list[Sample],
    images: list[np.ndarray],
) -> EvalReport:
    """Score the recogniser on every photo changed by ``perturbation``."""
    report = EvalReport()
    for sample, image in zip(samples, images, strict=True):
        changed, moved = perturb(perturbation, image, sample)
        score_image(report, moved, recognizer.recognize(changed))
    return report


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.2%} ({part}/{whole})" if whole else f"- ({part}/{whole})"


HEAD = ("perturbation", "recall", "precision", "identity", "exact")


def table_row(name: str, report: EvalReport) -> str:
    return (
        f"{name:16s} {_share(report.matched, report.truth_tiles):>18s}"
        f" {_share(report.matched, report.predicted_tiles):>18s}"
        f" {_share(report.correct, report.matched):>18s}"
        f" {_share(report.exact_images, report.images):>18s}"
    )


def _shown(path: Path) -> str:
    """A path as the command line would give it: relative to the repository where inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(path)


def _resolve(
    names: list[str] | None, chosen_set: str, parser: argparse.ArgumentParser
) -> list[Perturbation]:
    """The perturbations to run: a whole set, or those named (from either set)."""
    if not names:
        return list(SETS[chosen_set].values())
    known = {**PERTURBATIONS, **SECOND_SET}
    wanted = {n.strip().replace("_", " ") for n in names}
    unknown = sorted(wanted - known.keys())
    if unknown:
        parser.error(
            f"unknown perturbation {', '.join(repr(n) for n in unknown)}; "
            f"known: {', '.join(repr(n) for n in known)}"
        )
    return [p for name, p in known.items() if name in wanted]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--data", type=Path, default=REPO / "datasets" / "real_val")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="run only these perturbations (quote names)"
    )
    parser.add_argument(
        "--set",
        choices=sorted(SETS),
        default="first",
        help="which set of perturbations to run when --only is not given (default: first)",
    )
    parser.add_argument("--limit", type=int, help="use only the first N images")
    parser.add_argument("--json", type=Path, help="write the per-perturbation summaries here")
    args = parser.parse_args(argv)

    chosen = _resolve(args.only, args.set, parser)
    if not args.data.is_dir():
        parser.error(f"no data folder at {args.data}")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit needs a positive number of images")
    samples = load_samples(args.data)[: args.limit]
    images = [cv2.imread(str(s.image)) for s in samples]
    recognizer = Recognizer(RecognizerSpec.load(args.manifest))

    tiles = sum(len(s.truth) for s in samples)
    print(f"manifest {_shown(args.manifest)}")
    print(f"data     {_shown(args.data)}: {len(samples)} images, {tiles} labelled tiles")
    print("scored as istaka eval: tiles matched at IoU >= 0.5; identity of matched tiles")
    print()
    print(f"{HEAD[0]:16s} {HEAD[1]:>18s} {HEAD[2]:>18s} {HEAD[3]:>18s} {HEAD[4]:>18s}")
    results = {}
    for perturbation in chosen:
        report = run(recognizer, perturbation, samples, images)
        print(table_row(perturbation.name, report), flush=True)
        results[perturbation.name] = {
            "about": perturbation.about,
            **report.summary(),
            "predicted": report.predicted_tiles,
            "matched": report.matched,
            "correct": report.correct,
        }
    changed = [r for name, r in results.items() if name != "none"]
    if changed:
        exact = sum(r["exact_images"] for r in changed)
        photos = sum(r["images"] for r in changed)
        print(f"{'changed rows':16s} {'':>18s} {'':>18s} {'':>18s} {_share(exact, photos):>18s}")
    print()
    for perturbation in chosen:
        print(f"  {perturbation.name}: {perturbation.about}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "manifest": _shown(args.manifest),
            "data": _shown(args.data),
            "images": len(samples),
            "perturbations": results,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
