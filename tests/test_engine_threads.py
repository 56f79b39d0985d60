"""The classic engine's per-process caches under the service's threads.

``okey.layout``, ``okey.runs`` and ``okey.draws`` keep bounded caches across calls, several keyed
by the identity of the parts they hold (a knapsack by its parts' ids, a knapsack step by its
table's and choices' ids) and emptied whenever they fill.  The service answers requests on
several threads, so one thread's call may find a cache emptied, or an id's object replaced, by
another's in the middle of its work.  With a tiny limit every few calls empty a cache; one
thread, then each of four, must still answer every hand as one thread with the usual caches
does.  (A cache keyed by ids that did not hold its objects, so that an id came back for another
object, fails here at once: tried on ``Totals.best_with``.)
"""

from __future__ import annotations

import random
import sys
import threading

import pytest

from okey import FULL_SET, Rules, advise, distance_to_win, layout, runs


def _deals(seed: int, size: int, count: int) -> list[tuple[list, object, list]]:
    rng = random.Random(seed)
    deals = []
    for k in range(count):
        pool = list(FULL_SET)
        rng.shuffle(pool)
        indicator = next(t for t in pool if not t.is_false_joker)
        pool.remove(indicator)
        seen = pool[size : size + (0, 6, 20)[k % 3]]
        deals.append((pool[:size], indicator, seen))
    return deals


CACHES = [
    (layout, "_INTERNED_LIMIT"),
    (layout, "_KNAPSACKS_LIMIT"),
    (layout, "_BEST_WITH_LIMIT"),
    (layout, "_SHIFTS_LIMIT"),
    (runs, "_LINE_PROFILES_LIMIT"),
    (runs, "_RUNS_MEMO_LIMIT"),
]
RULES = Rules.classic()
FIFTEEN = _deals(23, 15, 10)
FOURTEEN = _deals(24, 14, 30)


def _answers() -> list:
    return [advise(h, i, RULES, s).to_dict() for h, i, s in FIFTEEN] + [
        distance_to_win(h, i, RULES, s) for h, i, s in FOURTEEN
    ]


@pytest.mark.parametrize(("module", "name"), CACHES, ids=[name for _, name in CACHES])
def test_advise_and_distance_from_several_threads_when_a_cache_fills(
    module, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One cache at a time is made tiny (the others hold what they hold, so the tiny one is
    read often and emptied every few writes)."""
    expected = _answers()
    assert hasattr(module, name), name
    monkeypatch.setattr(module, name, 4)
    assert _answers() == expected  # one thread with the tiny cache
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often, inside the searches
    errors: list[BaseException] = []
    got: dict[int, list] = {}

    def work(k: int) -> None:
        try:
            got[k] = _answers()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors[0]
    assert all(got[k] == expected for k in range(4))
