"""The pipeline end to end: milliseconds per frame, and what rule-aware reading and the vote add.

Four parts, each printed as a small table:

1. speed on the committed real evaluation photos (``datasets/real_val``): per frame, from the JPEG
   bytes to the result (decode, detect, read, layout, rule-aware decode, engine), median and p95,
   one image at a time on the default backend;
2. speed with the engine at work: rendered racks of 14-15 tiles with their indicator, so every
   frame is refereed or advised (the engine's answer is not cached between frames here; the live
   loop and the service reuse it while the hand is unchanged);
3. reading accuracy with and without the rule-aware decode, on the real photos and on rendered
   racks (held-out style pool, indicator given): per tile (of the tiles found) and per image (every
   labelled tile found and read right);
4. the multi-frame vote on rendered rack videos (camera drift and shake, flicker, a passing
   finger): per-tile accuracy, whole-frame exact match and reading changes per tile track, each
   frame alone against ``HandTracker``'s vote;

plus the layout's exact-match rate (rows, groups and table tiles) on rendered racks from their true
boxes.

    .venv/bin/python benchmarks/pipeline.py [--real 108] [--rendered 40] [--videos 3] [--frames 90]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
from benchstats import quantile

from okey import Tile
from vision.decode import decode
from vision.layout import lay_out
from vision.pipeline import NothingFoundError, Pipeline
from vision.recognizer import MANIFEST, Recognizer, RecognizerSpec
from vision.smoothing import HandTracker
from vision.training.evaluate import load_samples, match
from vision.types import Recognition

REPO = Path(__file__).resolve().parent.parent


def percentiles(values: Sequence[float]) -> str:
    """Median and p95 in ms, or "n=0" for a section with nothing timed (``--rendered 0``)."""
    if not values:
        return "n=0"
    ordered = sorted(values)
    p95 = quantile(ordered, 0.95)
    return f"median {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms"


def time_frames(pipeline: Pipeline, jpegs: list[bytes], indicators: list[Tile | None]) -> dict:
    """Per-stage and total milliseconds of each frame (frames with no rack stop after reading)."""
    stages: dict[str, list[float]] = {"total": []}
    nothing = 0
    for data, indicator in zip(jpegs, indicators, strict=True):
        pipeline.clear_cache()  # every frame a new hand: the engine always runs
        start = time.perf_counter()
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        decoded_at = time.perf_counter()
        recognition = pipeline.recognizer.recognize(image)
        timings = dict(recognition.timings_ms)
        try:
            timings.update(pipeline.read(recognition, indicator=indicator).timings_ms)
        except NothingFoundError:
            nothing += 1
        end = time.perf_counter()
        stages["total"].append((end - start) * 1000)
        stages.setdefault("jpeg decode", []).append((decoded_at - start) * 1000)
        for name in ("detect", "classify", "layout", "decode", "engine"):
            if name in timings:
                stages.setdefault(name, []).append(timings[name])
    stages["no rack (frames)"] = [float(nothing)]
    return stages


def print_speed(title: str, stages: dict) -> None:
    print(f"\n{title}")
    for name, values in stages.items():
        if name.startswith("no rack"):
            print(f"  {int(values[0])} frames showed no rack (no tiles, or no two side by side)")
            continue
        label = "rule-aware decode" if name == "decode" else name
        print(f"  {label:>18}: {percentiles(values)}   ({len(values)} frames)")


def read_tiles(recognition: Recognition, indicator: Tile | None, rule_aware: bool) -> list[int]:
    """Identity index of each recognised tile, after the rule-aware decode or without it."""
    if not recognition.tiles:
        return []
    layout = lay_out([t.box for t in recognition.tiles])
    rack = set(layout.rack)
    probs = np.stack([t.probs for t in recognition.tiles])
    on_rack = [i in rack for i in range(len(recognition.tiles))]
    decoded = decode(probs, on_rack=on_rack, indicator=indicator, rule_aware=rule_aware)
    return [t.index for t in decoded.tiles]


class Score:
    """Per-tile accuracy of matched tiles and whole-image exact match."""

    def __init__(self) -> None:
        self.tiles = self.correct = self.images = self.exact = 0

    def add(self, truth: list[tuple[int, tuple]], boxes: list[tuple], read: list[int]) -> None:
        pairs = match([b for _, b in truth], boxes)
        right = sum(truth[i][0] == read[j] for i, j in pairs)
        self.tiles += len(pairs)
        self.correct += right
        self.images += 1
        self.exact += right == len(truth) == len(boxes)

    def __str__(self) -> str:
        if not self.images:
            return "n=0"
        tile = self.correct / max(self.tiles, 1)
        image = self.exact / max(self.images, 1)
        return (
            f"per tile {tile:6.1%} ({self.correct}/{self.tiles})   "
            f"exact {image:6.1%} ({self.exact}/{self.images})"
        )


def accuracy(
    recognitions: list[Recognition], truths: list[list], indicators: list[Tile | None]
) -> tuple[Score, Score]:
    plain, aware = Score(), Score()
    for rec, truth, indicator in zip(recognitions, truths, indicators, strict=True):
        boxes = [t.box for t in rec.tiles]
        plain.add(truth, boxes, read_tiles(rec, indicator, rule_aware=False))
        aware.add(truth, boxes, read_tiles(rec, indicator, rule_aware=True))
    return plain, aware


def sidecar_truth(truth: dict) -> list[tuple[int, tuple]]:
    return [(t["class"], tuple(t["box"])) for t in truth["tiles"] if t["labelled"]]


def vote_benchmark(pipeline: Pipeline, videos: int, frames: int) -> None:
    from vision.training.synth import render_video

    single, voted = Score(), Score()
    changes = {"single": 0, "voted": 0}
    track_frames = 0
    for seed in range(videos):
        images, truths = render_video(seed=100 + seed, n_frames=frames, pool_name="heldout")
        tracker = HandTracker()
        last: dict[str, dict[int, int]] = {"single": {}, "voted": {}}
        for image, truth in zip(images, truths, strict=True):
            rec = pipeline.recognizer.recognize(image)
            smooth = tracker.update(rec)
            labelled = sidecar_truth(truth)
            boxes = [t.box for t in rec.tiles]
            single.add(labelled, boxes, [t.tile.index for t in rec.tiles])
            voted.add(labelled, boxes, [t.tile.index for t in smooth.tiles])
            # Reading changes per tile track: the same track id read differently than last frame.
            for name, readings in (("single", rec.tiles), ("voted", smooth.tiles)):
                for track, reading in zip(smooth.track_ids, readings, strict=True):
                    before = last[name].get(track)
                    if before is not None and before != reading.tile.index:
                        changes[name] += 1
                    last[name][track] = reading.tile.index
            track_frames += len(smooth.track_ids)
    print(f"\nMulti-frame vote: {videos} rendered videos x {frames} frames (held-out styles)")
    print(f"  {'each frame alone':>18}: {single}")
    print(f"  {'vote (HandTracker)':>18}: {voted}")
    for name in ("single", "voted"):
        rate = 100 * changes[name] / max(track_frames, 1)
        label = "each frame alone" if name == "single" else "vote (HandTracker)"
        print(f"  {label:>18}: {rate:5.2f} reading changes per 100 tile-frames")


def layout_benchmark(n: int) -> None:
    from vision.training.synth import layout_truth, render_sample

    compared = exact = 0
    for index in range(n):
        _, sidecar = render_sample(2024, index, "heldout", (640, 480))
        truth = layout_truth(sidecar)
        if truth is None:
            continue
        layout = lay_out(truth.boxes)
        compared += 1
        exact += truth.compare(layout.rows, layout.table)
    print(f"\nLayout on rendered racks (true boxes, every rack tile visible), {n} rendered:")
    print(f"  rows, groups and table exact: {exact}/{compared} = {exact / max(compared, 1):.1%}")


def layout_speed(samples: list) -> None:
    """Layout and decode alone (no inference just before), on the real photos' labelled boxes."""
    layout_ms, decode_ms = [], []
    for sample in samples:
        boxes = [box for _, box in sample.truth]
        if not boxes:
            continue
        start = time.perf_counter()
        layout = lay_out(boxes)
        layout_ms.append((time.perf_counter() - start) * 1000)
        probs = np.full((len(boxes), 53), 0.1 / 52)
        probs[np.arange(len(boxes)), [k for k, _ in sample.truth]] = 0.9
        rack = set(layout.rack)
        start = time.perf_counter()
        decode(probs, on_rack=[i in rack for i in range(len(boxes))])
        decode_ms.append((time.perf_counter() - start) * 1000)
    print(f"\nLayout and rule-aware decode alone, {len(layout_ms)} real photos' labelled boxes:")
    print(f"  {'layout':>18}: {percentiles(layout_ms)}")
    print(f"  {'rule-aware decode':>18}: {percentiles(decode_ms)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", type=Path, default=REPO / "datasets" / "real_val")
    parser.add_argument("--n-real", type=int, default=108, help="real photos to use")
    parser.add_argument("--rendered", type=int, default=40, help="rendered racks to use")
    parser.add_argument("--videos", type=int, default=3)
    parser.add_argument("--frames", type=int, default=90)
    parser.add_argument("--layout", type=int, default=300, help="rendered racks for the layout")
    parser.add_argument("--backend", choices=["onnx", "openvino", "torch"])
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help="recogniser to use")
    args = parser.parse_args()

    pipeline = Pipeline(Recognizer(RecognizerSpec.load(args.manifest), args.backend))
    backend = pipeline.recognizer.backend
    print(
        f"istaka pipeline benchmark: {pipeline.recognizer.spec.architecture} recogniser, {backend}"
    )

    samples = load_samples(args.real)[: args.n_real]
    jpegs = [s.image.read_bytes() for s in samples]
    for data in jpegs[:5]:  # warm-up
        pipeline.recognizer.recognize(cv2.imdecode(np.frombuffer(data, np.uint8), 1))
    stages = time_frames(pipeline, jpegs, [None] * len(jpegs))
    print_speed(f"Speed: {len(jpegs)} real photos (640x640, no indicator: no engine)", stages)

    from vision.training.synth import render_sample
    from vision.training.synth.dataset import encode_jpeg

    rendered = [render_sample(7, i, "heldout", (640, 480)) for i in range(args.rendered)]
    r_jpegs = [encode_jpeg(image, 90) for image, _ in rendered]
    r_indicators = [Tile.parse(truth["indicator"]) for _, truth in rendered]
    stages = time_frames(pipeline, r_jpegs, r_indicators)
    print_speed(
        f"Speed: {len(r_jpegs)} rendered racks (640x480, indicator given: engine runs)", stages
    )

    recs = [pipeline.recognizer.recognize(cv2.imread(str(s.image))) for s in samples]
    plain, aware = accuracy(recs, [s.truth for s in samples], [None] * len(samples))
    print(f"\nReading accuracy: {len(samples)} real photos (no indicator)")
    print(f"  {'without rules':>18}: {plain}")
    print(f"  {'rule-aware':>18}: {aware}")
    r_recs = [pipeline.recognizer.recognize(image) for image, _ in rendered]
    plain, aware = accuracy(r_recs, [sidecar_truth(t) for _, t in rendered], r_indicators)
    print(f"\nReading accuracy: {len(rendered)} rendered racks (held-out styles, indicator given)")
    print(f"  {'without rules':>18}: {plain}")
    print(f"  {'rule-aware':>18}: {aware}")

    vote_benchmark(pipeline, args.videos, args.frames)
    layout_benchmark(args.layout)
    layout_speed(samples)


if __name__ == "__main__":
    main()
