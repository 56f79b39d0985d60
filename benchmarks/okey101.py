"""Speed of the exact 101 opening solver: median and p95 of ``best_opening`` over seeded random
22-tile deals.

    .venv/bin/python benchmarks/okey101.py            # 1,000 deals, seed 0
    .venv/bin/python benchmarks/okey101.py --deals 5000 --seed 7
    .venv/bin/python benchmarks/okey101.py --advice 200   # also time discard advice (22 tiles)
    .venv/bin/python benchmarks/okey101.py --deals 0 --grid   # a hand-built set-heavy worst case

Each deal shuffles the 106-tile set, turns up the first numbered tile as the indicator and deals
the next 22 tiles.  Times are wall-clock per call (parsing excluded: tiles are passed as ``Tile``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from benchstats import quantile

from okey import FULL_SET, Rules, Tile, parse_tiles
from okey.okey101 import advise_discard, best_opening, min_leftover

# 20 tiles forming a 4-colour grid of 1..5 plus both okeys (indicator K6): every tile fits a set
# and a run, the hardest shape for the search.
GRID_HAND = " ".join(f"{c}{n}" for c in "RYBK" for n in range(1, 6)) + " K7 K7"
GRID_INDICATOR = "K6"


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
    parser.add_argument("--advice", type=int, default=0, help="deals to time advise_discard on")
    parser.add_argument("--grid", action="store_true", help="time the set-heavy grid hand")
    args = parser.parse_args()
    rules = Rules.okey101()
    if args.grid:
        time_grid(rules)
    if not args.deals:
        return
    times: list[float] = []
    points: list[int] = []
    for hand, indicator in deals(args.deals, args.seed):
        start = time.perf_counter()
        opening = best_opening(hand, indicator, rules)
        times.append(time.perf_counter() - start)
        points.append(opening.points)
    times.sort()
    p95 = quantile(times, 0.95)
    opens = sum(p >= rules.opening_threshold for p in points)
    print(f"best_opening over {args.deals} seeded 22-tile deals (seed {args.seed})")
    print(f"median {statistics.median(times) * 1e3:.3f} ms")
    print(f"p95    {p95 * 1e3:.3f} ms")
    print(f"max    {times[-1] * 1e3:.3f} ms")
    print(f"mean opening {statistics.mean(points):.1f} points; {opens} deals open at 101")
    if args.advice:
        advice_times = []
        for hand, indicator in deals(args.advice, args.seed + 1):
            start = time.perf_counter()
            advise_discard(hand, indicator, rules)
            advice_times.append(time.perf_counter() - start)
        advice_times.sort()
        p95 = quantile(advice_times, 0.95)
        print(f"advise_discard over {args.advice} deals (seed {args.seed + 1}): ", end="")
        print(f"median {statistics.median(advice_times) * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms")


def time_grid(rules: Rules) -> None:
    hand, indicator = parse_tiles(GRID_HAND), Tile.parse(GRID_INDICATOR)
    for name, call in (
        ("best_opening", best_opening),
        ("min_leftover", min_leftover),
        ("advise_discard", advise_discard),
    ):
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            call(hand, indicator, rules)
            runs.append(time.perf_counter() - start)
        print(f"grid hand {name}: median of 5 runs {statistics.median(runs) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
