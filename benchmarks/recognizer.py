"""Recogniser speed per backend: median and p95 milliseconds per 640x640 image.

Runs the shipped recogniser (``models/recognizer.yaml``) on real validation photos, after a short
warm-up, once per backend, one image at a time (the live-camera case), on the CPU threads torch and
ONNX Runtime pick by default.

    .venv/bin/python benchmarks/recognizer.py [--images datasets/real_val/images] [--n 60]
        [--manifest models/recognizer.yaml] [--backend onnx|torch]

It also counts the photos on which the recogniser took a second look (``vision.adapt``), and
prints each stage's median (``Recognition.timings_ms``: the detector's first look and second
looks, then the tier stage or the whole-photo reading) over the images that ran it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import cv2
from benchstats import quantile

from vision.recognizer import BACKENDS, MANIFEST, Recognizer, RecognizerSpec
from vision.training.crops import list_images

REPO = Path(__file__).resolve().parent.parent


def bench(
    recognizer: Recognizer, images: list, warmup: int = 5, stages: dict | None = None
) -> list[float]:
    """Wall-clock milliseconds of ``recognize`` for each image; ``stages`` (when given) gathers
    each stage's milliseconds per image (``Recognition.timings_ms``: detect, then tiers or
    classify)."""
    for image in images[:warmup]:
        recognizer.recognize(image)
    times = []
    for image in images:
        start = time.perf_counter()
        recognition = recognizer.recognize(image)
        times.append((time.perf_counter() - start) * 1000)
        if stages is not None:
            for stage, ms in recognition.timings_ms.items():
                if stage != "total":
                    stages.setdefault(stage, []).append(ms)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=Path, default=REPO / "datasets" / "real_val" / "images")
    parser.add_argument("--n", type=int, default=60, help="images to time per backend")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--backend", choices=BACKENDS, action="append", help="default: both")
    args = parser.parse_args()
    paths = list_images(args.images)[: args.n]
    images = [cv2.resize(cv2.imread(str(p)), (640, 640)) for p in paths]
    spec = RecognizerSpec.load(args.manifest)
    print(f"{spec.architecture} recogniser, {len(images)} images of 640x640 from {args.images}")
    for backend in args.backend or BACKENDS:
        recognizer = Recognizer(spec, backend)
        stages: dict[str, list[float]] = {}
        times = sorted(bench(recognizer, images, stages=stages))
        looks = sum(bool(recognizer.recognize(image).second_look) for image in images)
        p95 = quantile(times, 0.95)
        print(
            f"{backend:>6}: median {statistics.median(times):6.1f} ms, p95 {p95:6.1f} ms per image;"
            f" a second look on {looks} of {len(images)}"
        )
        print(
            "        stages, median ms on the images that ran them: "
            + ", ".join(
                f"{stage} {statistics.median(ms):.1f} ({len(ms)})" for stage, ms in stages.items()
            )
        )


if __name__ == "__main__":
    main()
