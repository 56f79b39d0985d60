"""Speed of the exact 101 opening solver: median and p95 of ``best_opening`` over seeded random
22-tile deals.

    .venv/bin/python benchmarks/okey101.py            # 1,000 deals, seed 0
    .venv/bin/python benchmarks/okey101.py --deals 5000 --seed 7

Each deal shuffles the 106-tile set, turns up the first numbered tile as the indicator and deals
the next 22 tiles.  Times are wall-clock per call (parsing excluded: tiles are passed as ``Tile``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from okey import FULL_SET, Rules
from okey.okey101 import best_opening


def deals(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        deck = list(FULL_SET)
        rng.shuffle(deck)
        indicator = next(t for t in deck if not t.is_false_joker)
        deck.remove(indicator)
        yield deck[:22], indicator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rules = Rules.okey101()
    times: list[float] = []
    points: list[int] = []
    for hand, indicator in deals(args.deals, args.seed):
        start = time.perf_counter()
        opening = best_opening(hand, indicator, rules)
        times.append(time.perf_counter() - start)
        points.append(opening.points)
    times.sort()
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    opens = sum(p >= rules.opening_threshold for p in points)
    print(f"best_opening over {args.deals} seeded 22-tile deals (seed {args.seed})")
    print(f"median {statistics.median(times) * 1e3:.3f} ms")
    print(f"p95    {p95 * 1e3:.3f} ms")
    print(f"max    {times[-1] * 1e3:.3f} ms")
    print(f"mean opening {statistics.mean(points):.1f} points; {opens} deals open at 101")


if __name__ == "__main__":
    main()
