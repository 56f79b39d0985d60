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

``--adversarial`` times ``advise``'s first call on hands the line table does not serve (one
colour, two colours, many pairs, both okeys; 0 to 40 seen tiles), each hand new to the process
after ``load_tables()`` and a warm-up on random deals.  ``--take-or-draw`` times
``okey.take_or_draw`` on random deals (14 tiles, an offered tile, 0 to 30 seen).
``--gc-pauses CALLS`` runs ``distance_to_win`` on
random deals with seen tiles for CALLS calls in two fresh processes that import the service
first (as a worker does), without and with ``okey.load_tables()``'s ``gc.freeze()``, and prints
each call's p50 / p99 / p99.9 / max (wall-clock and CPU), the full collections' pauses and how
many of the slowest 0.1 % of calls one of them ran in:

    .venv/bin/python benchmarks/engine.py --adversarial --seed 1
    .venv/bin/python benchmarks/engine.py --take-or-draw --hands 300
    .venv/bin/python benchmarks/engine.py --gc-pauses 200000
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import multiprocessing
import os
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from okey import (
    FULL_SET,
    Rules,
    Tile,
    advise,
    check_win,
    distance_to_win,
    load_tables,
    okey_for,
    take_or_draw,
)
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
    parser.add_argument(
        "--adversarial", action="store_true", help="advise's first call on adversarial hands"
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="--adversarial: each hand's least CPU over this many fresh processes",
    )
    parser.add_argument("--per-hand", type=Path, help=argparse.SUPPRESS)  # (--runs' children)
    parser.add_argument("--take-or-draw", action="store_true", help="time okey.take_or_draw")
    parser.add_argument("--gc-pauses", type=int, default=0, help="calls of a long run, twice")
    args = parser.parse_args()
    if args.adversarial and args.runs > 1:
        adversarial_least(args.seed, args.runs)
        return
    if args.adversarial:
        adversarial(args.seed, args.per_hand)
        return
    if args.take_or_draw:
        time_take_or_draw(args.seed, args.hands)
        return
    if args.gc_pauses:
        gc_pauses(args.gc_pauses, args.seed)
        return
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


def _percentiles(times: list[float]) -> str:
    ordered = sorted(times)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3

    return (
        f"n={len(ordered):6d}  median {statistics.median(ordered) * 1e3:7.2f} ms  "
        f"p99 {at(0.99):7.2f} ms  p99.9 {at(0.999):7.2f} ms  max {ordered[-1] * 1e3:7.2f} ms"
    )


# ``--adversarial``: hands per family and seen count.
FAMILY_HANDS = 40


def _family_hand(rng: random.Random, family: str) -> tuple[list[Tile], Tile]:
    """A 15-tile hand of one adversarial family, and an indicator that fits it."""
    while True:
        indicator = Tile(rng.randrange(52))
        okey = okey_for(indicator)
        if family == "one colour":
            colour = rng.randrange(4)
            pool = [Tile(colour * 13 + n) for n in range(13)] * 2
        elif family == "two colours":
            colours = rng.sample(range(4), 2)
            pool = [Tile(c * 13 + n) for c in colours for n in range(13)] * 2
        elif family == "many pairs":
            faces = rng.sample(range(52), 7)
            pool = [Tile(f) for f in faces] * 2 + [Tile(rng.randrange(52))]
        else:  # both okeys, the rest from two colours
            colours = rng.sample(range(4), 2)
            pool = [Tile(c * 13 + n) for c in colours for n in range(13)] * 2
            pool = [okey, okey, *rng.sample(pool, 13)]
        rng.shuffle(pool)
        hand = pool[:15] if family != "both okeys" else sorted(pool[:15], key=lambda t: t != okey)
        held = hand.count(indicator)
        if held <= 1 and all(hand.count(t) <= 2 for t in hand):
            return hand, indicator


def adversarial_least(seed: int, runs: int) -> None:
    """``--adversarial --runs N``: the benchmark run N times, each in a fresh process (every
    call a first call), and each hand's least CPU of the runs: the figure a busy host's
    run-to-run noise (one hand 16-27 ms from run to run on 2 shared cores) does not move."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        per_run = []
        for k in range(runs):
            out = Path(folder) / f"{k}.json"
            command = [sys.executable, __file__, "--adversarial", "--seed", str(seed)]
            subprocess.run([*command, "--per-hand", str(out)], check=True, capture_output=True)
            per_run.append(json.loads(out.read_text()))
    print(f"adversarial hands, seed {seed}, each hand's least CPU of {runs} fresh processes")
    everything = []
    for family in per_run[0]:
        least = [min(times) for times in zip(*(run[family] for run in per_run), strict=True)]
        everything += least
        print(f"{family:12s} advise first call, cpu {_percentiles(least)}")
    print(f"{'all':12s} advise first call, cpu {_percentiles(everything)}")


def adversarial(seed: int, per_hand: Path | None = None) -> None:
    """``advise``'s first call on each hand of the adversarial families (the tables loaded and
    frozen as the service and the CLI do at start-up, ``load_tables``; warm caches from 200
    random deals first, as a running service has)."""
    load_tables()
    rng = random.Random(seed)
    classic = Rules.classic()
    for hand, indicator in [deal(rng, 15) for _ in range(200)]:
        advise(hand, indicator, classic)
    print(f"adversarial hands, seed {seed}, host reference {host_reference():.1f} ms")
    everything = []
    by_family: dict[str, list[float]] = {}
    for family in ("one colour", "two colours", "many pairs", "both okeys"):
        times = []
        for seen_count in (0, 10, 20, 40):
            for _ in range(FAMILY_HANDS // 4):
                hand, indicator = _family_hand(rng, family)
                pool = list(FULL_SET)
                for tile in [*hand, indicator]:
                    pool.remove(tile)
                seen = rng.sample(pool, seen_count)
                _, cpu = timed(lambda h=hand, i=indicator, s=seen: advise(h, i, classic, s))
                times.append(cpu)
        everything += times
        by_family[family] = times
        print(f"{family:12s} advise first call, cpu {_percentiles(times)}")
    print(f"{'all':12s} advise first call, cpu {_percentiles(everything)}")
    if per_hand is not None:
        import json

        per_hand.write_text(json.dumps(by_family))


def time_take_or_draw(seed: int, count: int) -> None:
    """``take_or_draw`` on random deals: 14 tiles, the next tile offered, 0-30 seen."""
    rng = random.Random(seed)
    classic = Rules.classic()
    times, takes = [], 0
    for _ in range(count):
        hand, indicator = deal(rng, 30 + 15)
        seen = hand[15 : 15 + rng.randrange(31)]
        _, cpu = timed(
            lambda h=hand, i=indicator, s=seen: take_or_draw(h[:14], h[14], i, classic, s)
        )
        takes += take_or_draw(hand[:14], hand[14], indicator, classic, seen).take
        times.append(cpu)
    print(f"take_or_draw, seed {seed}, host reference {host_reference():.1f} ms")
    print(f"take_or_draw cpu {_percentiles(times)}; {takes} of {count} take")


def gc_pauses(calls: int, seed: int) -> None:
    """The same long run in two fresh processes: without and with ``gc.freeze()``."""
    spawn = multiprocessing.get_context("spawn")
    for freeze in (False, True):
        with spawn.Pool(1) as pool:
            line = pool.apply(_long_run, (calls, seed, freeze))
        print(line)


def _long_run(calls: int, seed: int, freeze: bool) -> str:
    import service.app  # noqa: F401  (a worker's objects: FastAPI, pydantic, the pages)

    load_tables(freeze=freeze)
    pauses: list[tuple[float, float]] = []  # (wall, CPU) seconds of each full collection
    started: list[tuple[float, float]] = []

    def watch(phase: str, info: dict) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started.append((time.perf_counter(), time.process_time()))
            else:
                wall, cpu = started.pop()
                pauses.append((time.perf_counter() - wall, time.process_time() - cpu))

    gc.callbacks.append(watch)
    rng = random.Random(seed)
    classic = Rules.classic()
    times, cpus, collected = [], [], []  # per call: wall, CPU, whether a full collection ran
    for _ in range(calls):
        hand, indicator = deal(rng, 14 + 20)
        seen = hand[14 : 14 + rng.randrange(21)]
        before = len(pauses)
        wall, cpu = time.perf_counter(), time.process_time()
        distance_to_win(hand[:14], indicator, classic, seen)
        times.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        collected.append(len(pauses) > before)
    gc.callbacks.remove(watch)
    walls, pause_cpus = [w * 1e3 for w, _ in pauses], [c * 1e3 for _, c in pauses]
    worst = f"{max(walls):.1f} ms wall, {max(pause_cpus):.1f} ms CPU" if pauses else "-"
    # The slowest 0.1 % of calls by CPU: how many of them a full collection ran in.
    slowest = sorted(range(calls), key=cpus.__getitem__)[-max(1, calls // 1000) :]
    hit = sum(collected[i] for i in slowest)
    return (
        f"gc.freeze() {'after load_tables' if freeze else 'never'}, load "
        f"{os.getloadavg()[0]:.1f}:\n  distance_to_win wall {_percentiles(times)}\n"
        f"  distance_to_win cpu  {_percentiles(cpus)}\n  {len(pauses)} full collections "
        f"(longest {worst}), in {hit} of the {len(slowest)} slowest calls; "
        f"{len(gc.get_objects())} objects tracked at the end"
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
