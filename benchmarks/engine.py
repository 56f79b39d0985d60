"""Speed of the Okey engine on seeded random hands: median and p95 per call.

    .venv/bin/python benchmarks/engine.py                      # 10,000 hands, 100 for advise
    .venv/bin/python benchmarks/engine.py --advise-hands 1000  # more 15-tile hands for advise
    .venv/bin/python benchmarks/engine.py --hands 2000 --advise-hands 20 --seed 7

Hands are dealt from a shuffled 106-tile set: an indicator (never a false joker) and the next 14
tiles (15 for ``advise``).  Each call is timed twice over: wall-clock, and the process's CPU time
(which leaves out waiting for a core on a shared machine).  The engine's caches warm up over the
run as they would in a long-lived process.  Prints one line per function and clock.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable

from okey import FULL_SET, Rules, Tile, advise, check_win, distance_to_win


def deal(rng: random.Random, size: int) -> tuple[list[Tile], Tile]:
    pool = list(FULL_SET)
    rng.shuffle(pool)
    indicator = next(t for t in pool if not t.is_false_joker)
    pool.remove(indicator)
    return pool[:size], indicator


def timed(call: Callable[[], object]) -> tuple[float, float]:
    """(wall-clock seconds, CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def summary(name: str, times: list[tuple[float, float]], clock: int) -> str:
    ordered = sorted(t[clock] for t in times)
    median = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    label = ("wall", "cpu")[clock]
    return (
        f"{name:16s} {label:4s} n={len(ordered):6d}  median {median * 1e6:10.1f} us  "
        f"p95 {p95 * 1e6:10.1f} us  max {ordered[-1] * 1e6:10.1f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000, help="hands for check_win/distance")
    parser.add_argument("--advise-hands", type=int, default=100, help="15-tile hands for advise")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rules", default="classic", choices=["classic", "okey101"])
    args = parser.parse_args()
    rules = Rules.preset(args.rules)
    rng = random.Random(args.seed)
    size = rules.hand_size

    load_before = os.getloadavg()[0]
    started = time.perf_counter(), time.process_time()
    hands = [deal(rng, size) for _ in range(args.hands)]
    win_times = [timed(lambda h=h, i=i: check_win(h, i, rules)) for h, i in hands]
    dist_times = [timed(lambda h=h, i=i: distance_to_win(h, i, rules)) for h, i in hands]
    distances = [distance_to_win(h, i, rules) for h, i in hands[:1000]]
    advise_hands = [deal(rng, size + 1) for _ in range(args.advise_hands)]
    advise_times = [timed(lambda h=h, i=i: advise(h, i, rules)) for h, i in advise_hands]

    wall, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
    print(f"rules {rules.name}, seed {args.seed}, hand size {size}")
    # On a shared machine the wall-clock lines include waiting for a core; the load says how much.
    print(
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
        f"({os.cpu_count()} cores); whole run {wall:.1f} s wall, {cpu:.1f} s CPU"
    )
    for clock in (0, 1):
        print(summary("check_win", win_times, clock))
        print(summary("distance_to_win", dist_times, clock))
        print(summary(f"advise ({size + 1})", advise_times, clock))
    spread = {d: distances.count(d) for d in sorted(set(distances))}
    print(f"distance of the first {len(distances)} hands: {spread}")


if __name__ == "__main__":
    main()
