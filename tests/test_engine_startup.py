"""``okey.load_tables``: what the engine's caches leave to the garbage collector.

Each check runs in a fresh interpreter (``gc.freeze`` is for the whole process): the caches
that fill after start-up must not make full collections walk them (docs/engine.md, "No slow
hands, no long pauses")."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Deals that search lines the table lacks (one colour), so that the run search's caches fill.
SCRIPT = textwrap.dedent(
    """
    import gc, random
    from okey import Rules, advise, distance_to_win, load_tables
    from okey import layout, runs, sets

    load_tables(freeze={freeze})
    rng = random.Random(7)
    classic = Rules.classic()
    faces = [f"R{{n}}" for n in range(1, 14)] * 2
    for _ in range(6):
        rng.shuffle(faces)
        advise(faces[:15], "K3", classic)
        distance_to_win(faces[:14], "K3", classic)
    # (A tuple is untracked when a collection finds its items untracked: nested tuples one
    # level a collection; the choices of sets are two deep, so the young collections untrack
    # them before they are old.)
    gc.collect(0)
    gc.collect(1)
    walked = {{id(o) for o in gc.get_objects()}}
    caches = [runs._USEFUL, runs._SHAPES_MEMO, runs._PACKED_MEMO, runs.LINE_PROFILES,
              sets.CHOICES, layout._KNAPSACKS, layout._BEST_WITH]
    assert all(len(cache) for cache in caches), [len(cache) for cache in caches]
    print(sum(id(cache) in walked for cache in caches))
    # (Entries made by load_tables itself are frozen: the others must be left untracked.)
    entries = [v for v in sets.CHOICES.values()]
    print(sum(gc.is_tracked(v) and id(v) in walked for v in entries), len(entries))
    """
)


def _run(freeze: bool) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(freeze=freeze)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    return done.stdout.split("\n")


def test_caches_filled_after_load_tables_are_never_walked_by_a_full_collection():
    walked, _ = _run(True)[:2]
    assert walked == "0"


def test_without_the_freeze_the_caches_are_walked():
    """(The check above can fail: without ``gc.freeze`` the same caches are in the
    collector's generations.)"""
    walked, _ = _run(False)[:2]
    assert int(walked) > 0


def test_the_choices_of_sets_cached_are_left_untracked():
    _, counts = _run(True)[:2]
    tracked, entries = map(int, counts.split())
    assert entries > 0
    assert tracked == 0
