"""Renderer throughput: images per second at 640x480 with 2 workers (target >= 10/s).

Renders ``--n`` images into a temporary folder several times and prints the median and p95 of the
per-run throughput, plus the single-process time per image.  Figures depend on what else the
machine is doing; the docs quote the command with its output.

    .venv/bin/python benchmarks/synth.py --n 80 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from vision.synth.dataset import render_dataset, render_sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=80, help="images per run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pool", default="train")
    args = parser.parse_args()

    singles = []
    render_sample(0, 10_000, args.pool)  # warm the font and noise caches
    for i in range(20):
        t0 = time.perf_counter()
        render_sample(1, i, args.pool)
        singles.append(time.perf_counter() - t0)
    singles.sort()
    print(
        f"one process: median {1000 * statistics.median(singles):.0f} ms/image, "
        f"p95 {1000 * singles[int(0.95 * (len(singles) - 1))]:.0f} ms/image"
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


if __name__ == "__main__":
    main()
