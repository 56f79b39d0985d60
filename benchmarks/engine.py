"""Speed of the Okey engine on seeded random hands: median and p95 per call.

    .venv/bin/python benchmarks/engine.py                      # 10,000 hands, 100 for advise
    .venv/bin/python benchmarks/engine.py --advise-hands 1000  # more 15-tile hands for advise
    .venv/bin/python benchmarks/engine.py --hands 2000 --advise-hands 20 --seed 7
    .venv/bin/python benchmarks/engine.py --random-deals        # the targets of docs/engine.md

Hands are dealt from a shuffled 106-tile set: an indicator (never a false joker) and the next 14
tiles (15 for ``advise``).  Each call is timed twice over: wall-clock, and the process's CPU time
(which leaves out waiting for a core on a shared machine).  The engine's caches warm up over the
run as they would in a long-lived process.  Prints one line per function and clock.

``--random-deals`` times the calls the public peers are compared on, each against its target:
``check_win`` and ``distance_to_win`` on 14-tile deals, ``best_opening`` (101 rules) on 22-tile
deals (and again by the okeys held), ``advise`` on 15-tile deals (CPU time).  ``--profile CALL``
says where one of them spends its time instead (cProfile shares, after a warm-up of the caches;
docs/engine.md):

    .venv/bin/python benchmarks/engine.py --profile distance_to_win   # 1,000 deals after 500
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import time
from collections.abc import Callable

from okey import FULL_SET, Rules, Tile, advise, check_win, distance_to_win, okey_for
from okey.okey101 import best_opening

# (median, p95) targets in microseconds of ``--random-deals`` (None: no target).
TARGETS = {
    "check_win": (30, None),
    "distance_to_win": (100, 500),
    "best_opening (22)": (100, 300),
    "advise (15)": (10_000, None),
}


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
    parser.add_argument(
        "--random-deals", action="store_true", help="the peers' comparison, against the targets"
    )
    parser.add_argument(
        "--profile", choices=sorted(PROFILED), help="where one call's time goes (cProfile)"
    )
    args = parser.parse_args()
    if args.profile:
        profile(args.profile, args.seed)
        return
    if args.random_deals:
        random_deals(args)
        return
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


def host_reference(rounds: int = 7) -> float:
    """CPU milliseconds of a fixed pure-Python workload (dict look-ups, int arithmetic, small
    tuples: the engine's kind of step), the fastest of ``rounds``.  The engine's code does not
    change it, so it tells the host's speed at the time: a shared host runs the same code at
    different speeds from one minute to the next, and its figures are read against this."""
    table = {i: i * 7 % 101 for i in range(101)}
    best = float("inf")
    for _ in range(rounds):
        cpu = time.process_time()
        acc = 0
        for i in range(60_000):
            key = (i % 101, i & 3)
            acc += table[key[0]] ^ key[1]
        best = min(best, time.process_time() - cpu)
    return best * 1e3


def random_deals(args: argparse.Namespace) -> None:
    reference_before = host_reference()
    classic, okey101 = Rules.classic(), Rules.okey101()
    rng = random.Random(args.seed)
    hands = [deal(rng, 14) for _ in range(args.hands)]
    deals22 = [deal(rng, 22) for _ in range(min(args.hands, 2000))]
    fifteen = [deal(rng, 15) for _ in range(args.advise_hands)]
    runs = {
        "check_win": [timed(lambda h=h, i=i: check_win(h, i, classic)) for h, i in hands],
        "distance_to_win": [
            timed(lambda h=h, i=i: distance_to_win(h, i, classic)) for h, i in hands
        ],
        "best_opening (22)": [
            timed(lambda h=h, i=i: best_opening(h, i, okey101)) for h, i in deals22
        ],
        "advise (15)": [timed(lambda h=h, i=i: advise(h, i, classic)) for h, i in fifteen],
    }
    reference = (reference_before + host_reference()) / 2
    print(
        f"random deals, seed {args.seed}, load average {os.getloadavg()[0]:.1f}, "
        f"host reference {reference:.1f} ms (a fixed pure-Python loop: the host's speed)"
    )
    for name, times in runs.items():
        ordered = sorted(t[1] for t in times)
        median = statistics.median(ordered) * 1e6
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1e6
        target_median, target_p95 = TARGETS[name]
        verdict = "met" if median <= target_median else f"missed x{median / target_median:.1f}"
        line = (
            f"{name:18s} cpu n={len(ordered):6d}  median {median:9.1f} us (target "
            f"{target_median}: {verdict})  p95 {p95:9.1f} us"
        )
        if target_p95 is not None:
            state = "met" if p95 <= target_p95 else f"missed x{p95 / target_p95:.1f}"
            line += f" (target {target_p95}: {state})"
        print(line)
    # The 101 openings by the okeys held (they drive its tail).
    by_okeys: dict[int, list[float]] = {}
    for (hand, indicator), (_, cpu) in zip(deals22, runs["best_opening (22)"], strict=True):
        by_okeys.setdefault(hand.count(okey_for(indicator)), []).append(cpu)
    print(
        "best_opening by okeys held: "
        + ", ".join(
            f"{okeys}: n={len(times)} median {statistics.median(times) * 1e6:.1f} us "
            f"p90 {sorted(times)[int(0.9 * len(times))] * 1e6:.1f} us"
            for okeys, times in sorted(by_okeys.items())
        )
    )


# ``--profile``: per call, the deal size, the deals to warm the caches with and to profile.
PROFILED = {
    "distance_to_win": (14, 500, 1000),
    "best_opening": (22, 500, 1000),
    "advise": (15, 10, 30),
}


def profile(name: str, seed: int, rows: int = 25) -> None:
    """Print the functions taking the most of one call's time on random deals: their share of
    it with what they call (cumulative) and alone (own), and their calls per deal."""
    classic, okey101 = Rules.classic(), Rules.okey101()
    call = {
        "distance_to_win": lambda h, i: distance_to_win(h, i, classic),
        "best_opening": lambda h, i: best_opening(h, i, okey101),
        "advise": lambda h, i: advise(h, i, classic),
    }[name]
    size, warm, count = PROFILED[name]
    rng = random.Random(seed)
    for hand, indicator in [deal(rng, size) for _ in range(warm)]:
        call(hand, indicator)
    deals = [deal(rng, size) for _ in range(count)]
    profiler = cProfile.Profile()
    profiler.enable()
    for hand, indicator in deals:
        call(hand, indicator)
    profiler.disable()
    stats = pstats.Stats(profiler)
    print(f"{name}: {count} random deals of {size} tiles after {warm}, {stats.total_tt:.2f} s")
    found = sorted(
        (
            (cum, own, calls, f"{file.rsplit('/', 1)[-1]}:{line}({function})")
            for (file, line, function), (_, calls, own, cum, _) in stats.stats.items()
        ),
        reverse=True,
    )
    for cum, own, calls, where in found[:rows]:
        print(
            f"{where:48s} cum {100 * cum / stats.total_tt:5.1f}%  own "
            f"{100 * own / stats.total_tt:5.1f}%  {calls / count:9.1f} calls per deal"
        )


if __name__ == "__main__":
    main()
