"""Recogniser speed per backend: median and p95 milliseconds per 640x640 image.

Runs the shipped recogniser (``models/recognizer.yaml``) on real validation photos, once per
backend, one image at a time (the live-camera case), on the CPU threads each engine picks by
default.  The timed pass follows a warm-up pass over the same images, as a camera's stream or the
service runs after its first frames: OpenVINO compiles its networks once for each input size they
meet (the detector's square and strip canvases, the crop networks' crop size), which the warm-up
pass pays; that first pass's median and p95 are printed too (``--warmup``: images in it).

    .venv/bin/python benchmarks/recognizer.py [--images datasets/real_val/images] [--n 60]
        [--manifest models/recognizer.yaml] [--backend onnx|openvino|torch]

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
    recognizer: Recognizer,
    images: list,
    warmup: int = 5,
    stages: dict | None = None,
    first: list | None = None,
) -> list[float]:
    """Wall-clock milliseconds of ``recognize`` for each image; ``stages`` (when given) gathers
    each stage's milliseconds per image (``Recognition.timings_ms``: detect, then tiers or
    classify); ``first`` (when given) the warm-up's milliseconds per image."""
    for image in images[:warmup]:
        start = time.perf_counter()
        recognizer.recognize(image)
        if first is not None:
            first.append((time.perf_counter() - start) * 1000)
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


def _installed(backend: str) -> bool:
    import importlib.util

    package = {"openvino": "openvino", "onnx": "onnxruntime", "torch": "ultralytics"}[backend]
    return importlib.util.find_spec(package) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=Path, default=REPO / "datasets" / "real_val" / "images")
    parser.add_argument("--n", type=int, default=60, help="images to time per backend")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument(
        "--backend", choices=BACKENDS, action="append", help="default: every one installed"
    )
    parser.add_argument("--warmup", type=int, help="images in the warm-up pass (default: all)")
    args = parser.parse_args()
    paths = list_images(args.images)[: args.n]
    images = [cv2.resize(cv2.imread(str(p)), (640, 640)) for p in paths]
    spec = RecognizerSpec.load(args.manifest)
    print(f"{spec.architecture} recogniser, {len(images)} images of 640x640 from {args.images}")
    for backend in args.backend or [b for b in BACKENDS if _installed(b)]:
        recognizer = Recognizer(spec, backend)
        stages: dict[str, list[float]] = {}
        first: list[float] = []
        warmup = len(images) if args.warmup is None else args.warmup
        times = sorted(bench(recognizer, images, warmup, stages, first))
        looks = sum(bool(recognizer.recognize(image).second_look) for image in images)
        p95 = quantile(times, 0.95)
        names = {"bf16": "bfloat16", "f32": "float32"}
        precision = names.get(getattr(recognizer.detector, "precision", ""), "float32")
        print(
            f"{backend:>8}: median {statistics.median(times):6.1f} ms, p95 {p95:6.1f} ms per image;"
            f" a second look on {looks} of {len(images)}; {precision}"
        )
        if first:
            first.sort()
            print(
                f"          warm-up pass ({len(first)} images): median"
                f" {statistics.median(first):6.1f} ms, p95 {quantile(first, 0.95):6.1f} ms"
            )
        print(
            "          stages, median ms on the images that ran them: "
            + ", ".join(
                f"{stage} {statistics.median(ms):.1f} ({len(ms)})" for stage, ms in stages.items()
            )
        )


if __name__ == "__main__":
    main()
