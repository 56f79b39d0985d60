"""Renderer throughput: images per second at 640x480 with 2 workers (target >= 10/s).

Prints the single-process time per image (wall and CPU, with warm caches; CPU time tells what two
free cores would do), then renders ``--n`` images into a temporary folder with ``--workers``
processes several times and prints the median and slowest per-run throughput (cold worker caches
included).  Wall figures depend on what else the machine is doing; load average is printed too.

    .venv/bin/python benchmarks/synth.py --n 80 --runs 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import cv2
from benchstats import quantile

from vision.training.synth.dataset import encode_jpeg, render_dataset, render_sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=80, help="images per run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pool", default="train")
    args = parser.parse_args()

    cv2.setNumThreads(1)  # as in the workers
    for i in range(60):  # warm the font, noise and texture caches, as a long run does
        render_sample(0, 10_000 + i, args.pool)
    walls, cpus = [], []
    for i in range(40):
        t0, c0 = time.perf_counter(), time.process_time()
        image, _ = render_sample(1, i, args.pool)
        encode_jpeg(image, 90)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    walls.sort()
    cpus.sort()
    cpu = statistics.median(cpus)
    wall_p95 = quantile(walls, 0.95)
    cpu_p95 = quantile(cpus, 0.95)
    print(
        f"one process, warm caches: wall median {1000 * statistics.median(walls):.0f} ms/image "
        f"(p95 {1000 * wall_p95:.0f}); CPU median {1000 * cpu:.0f} ms/image "
        f"(p95 {1000 * cpu_p95:.0f}) -> {2 / cpu:.1f} images/s on two free cores"
    )

    rates = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            render_dataset(
                Path(tmp),
                args.n,
                seed=run,
                workers=args.workers,
                pool_name=args.pool,
                progress=False,
            )
            rates.append(args.n / (time.perf_counter() - t0))
    rates.sort()
    p95_slow = rates[0] if len(rates) < 20 else rates[int(0.05 * len(rates))]
    print(
        f"{args.workers} workers, {args.n} images x {args.runs} runs at 640x480 (JPEG written): "
        f"median {statistics.median(rates):.1f} img/s, p95 (slowest runs) {p95_slow:.1f} img/s"
    )

    print("load average (1, 5, 15 min):", " ".join(f"{v:.1f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
