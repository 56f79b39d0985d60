"""The 101 opening search returns exactly the melds of the plain lowest-kind-first search.

``okey.melding.MeldSearch`` bounds and reorders its options, lays the sets of a number with no
run start from a table and searches one and two okeys apart (docs/engine.md, "Speed"); none of
that may change an answer.  ``ReferenceSearch`` below is the search as first written (every
option tried in order, the first of the highest totals kept): ``best_opening`` must return its
points, melds (in order, with the okeys' and false jokers' places) and remaining tiles on random
hands of 21 and 22 tiles with none, one and two okeys, under several run lengths.

A few hundred hands by default; ``ISTAKA_THOROUGH=1`` runs thousands.
"""

from __future__ import annotations

import os
import random
from dataclasses import replace

import pytest

from okey import FULL_SET, Rules, Tile
from okey.hand import okey_for
from okey.melding import _OPENING_SETS, MeldSearch
from okey.okey101 import best_opening
from okey.tiles import ALL_KINDS, FALSE_JOKER_INDEX

THOROUGH = os.environ.get("ISTAKA_THOROUGH") == "1"
HANDS = 3000 if THOROUGH else 300


class ReferenceSearch:
    """The opening search without its bounds, tables or split okey counts: at the lowest kind
    left, leave it (every copy), or lay it in a set (okeys only in the set of every real tile
    of its number left), or in a run up from it (an okey in a gap, or below it where the run
    reaches 13), keeping the first option of the highest total."""

    def __init__(self, indicator: Tile, max_run: int) -> None:
        self.search = MeldSearch(indicator, wrap=False, max_run_length=max_run)
        self.max_run = max_run
        self.memo: dict[int, tuple[int, tuple | None]] = {}

    def solve(self, x: int, j: int) -> int:
        key = x * 3 + j
        hit = self.memo.get(key)
        if hit is not None:
            return hit[0]
        if x == 0:
            self.memo[key] = (0, None)
            return 0
        low = (x & -x).bit_length() - 1
        n0 = low >> 3
        colour = (low >> 1) & 3
        n = n0 + 1
        best = self.solve(x - (1 << low), j)
        choice: tuple = (x - (1 << low), j, None)
        x1 = x - (1 << (2 * (low >> 1)))
        # (With no okey the sets of fewer than three real tiles get no okey count: as
        # ``_PLAIN_SETS``.)
        for taken, colours, full in _OPENING_SETS[(x >> (8 * n0)) & 0xFF][colour]:
            nx = x1 - (taken << (8 * n0))
            real = len(colours)
            okeys = range(max(0, 3 - real), min(j, 4 - real) + 1) if full else range(1)
            for jk in okeys:
                total = n * (real + jk) + self.solve(nx, j - jk)
                if total > best:
                    best, choice = total, (nx, j - jk, ("set", n, colours, jk))
        base = colour * 13 - 1
        for before in range(min(j, n - 1) + 1):
            a = n - before
            value = (a + n - 1) * before // 2 + n
            left = j - before
            cx = x1
            slots: list[bool] = []
            p = n
            while True:
                length = p - a + 1
                if length >= 3 and (before == 0 or p == 13):
                    total = value + self.solve(cx, left)
                    if total > best:
                        best, choice = total, (cx, left, ("run", base, a, p, tuple(slots)))
                q = p + 1
                if q > 13 or length >= self.max_run:
                    break
                shift = 8 * p + 2 * colour
                if (cx >> shift) & 3:
                    cx -= 1 << shift
                    slots.append(False)
                elif left:
                    left -= 1
                    slots.append(True)
                else:
                    break
                value += q
                p = q
        self.memo[key] = (best, choice)
        return best

    def melds(self, x: int, j: int) -> list:
        found = []
        while x:
            self.solve(x, j)
            x, j, spec = self.memo[x * 3 + j][1]
            if spec is not None:
                found.append(self.search._new_meld_any(spec))
        return found

    def best(self, hand: list[Tile]) -> tuple[int, list[str], list[str]]:
        okey = self.search.okey
        x = okeys = 0
        for tile in hand:
            if tile == okey:
                okeys += 1
                continue
            index = okey.index if tile.is_false_joker else tile.index
            x += 1 << (8 * (index % 13) + 2 * (index // 13))
        x = self.search.live(x, okeys)
        parts = [x]  # the whole hand: the fast path's own split (``parts``) is checked too
        value, melds = 0, []
        for part in parts:
            value += self.solve(part, okeys)
            melds += self.melds(part, okeys)
        melds.sort(key=lambda m: (m.plays_as[0].index, m.kind))
        left = list(hand)
        for meld in melds:
            for tile in meld.tiles:
                left.remove(tile)
        return value, [str(m) for m in melds], [str(t) for t in sorted(left)]


def _deal(rng: random.Random, size: int, okeys: int | None) -> tuple[list[Tile], Tile]:
    pool = list(FULL_SET)
    rng.shuffle(pool)
    indicator = next(t for t in pool if not t.is_false_joker)
    pool.remove(indicator)
    if okeys is None:
        return pool[:size], indicator
    okey = okey_for(indicator)
    rest = [t for t in pool if t != okey]
    return rest[: size - okeys] + [okey] * okeys, indicator


@pytest.mark.parametrize("max_run", [13, 5, 3])
def test_best_opening_is_the_plain_search_on_random_hands(max_run: int) -> None:
    rng = random.Random(2026 + max_run)
    rules = replace(Rules.okey101(), max_run_length=max_run)
    for case in range(HANDS):
        size = (21, 22)[case % 2]
        hand, indicator = _deal(rng, size, (None, 0, 1, 2, 2)[case % 5])
        opening = best_opening(hand, indicator, rules)
        points, melds, left = ReferenceSearch(indicator, max_run).best(hand)
        got = (opening.points, [str(m) for m in opening.melds], [str(t) for t in opening.remaining])
        assert got == (points, melds, left), (case, [str(t) for t in hand], str(indicator))


def test_best_opening_is_the_plain_search_on_crowded_hands() -> None:
    """Hands of few colours and numbers (many ties between sets and runs), false jokers and
    okeys in them."""
    rng = random.Random(7)
    rules = Rules.okey101()
    for case in range(HANDS):
        indicator = ALL_KINDS[rng.randrange(FALSE_JOKER_INDEX)]
        okey = okey_for(indicator)
        numbers = rng.sample(range(1, 14), rng.randint(3, 6))
        colours = rng.sample("RYBK", rng.randint(2, 4))
        kinds = [Tile.of(c, n) for c in colours for n in numbers]
        pool = [t for t in kinds for _ in range(2) if t != okey and t != indicator]
        pool += [t for t in kinds if t == indicator]  # (one copy is on the table)
        pool += [ALL_KINDS[FALSE_JOKER_INDEX]] * 2 + [okey] * 2
        rng.shuffle(pool)
        hand = pool[: rng.randint(12, 22)]
        opening = best_opening(hand, indicator, rules)
        points, melds, left = ReferenceSearch(indicator, 13).best(hand)
        got = (opening.points, [str(m) for m in opening.melds], [str(t) for t in opening.remaining])
        assert got == (points, melds, left), (case, [str(t) for t in hand], str(indicator))


def test_best_opening_from_several_threads_when_memos_fill(monkeypatch: pytest.MonkeyPatch) -> None:
    """The service runs the engine on several threads, and ``okey.okey101`` keeps its searches
    across hands: a search that takes a new memo (a full one is replaced before a hand) must not
    pull it from under another thread's search.  With a tiny memo limit every hand renews it;
    each thread must still answer every hand as one thread alone does."""
    import sys
    import threading

    from okey import melding

    rng = random.Random(11)
    rules = Rules.okey101()
    indicator = Tile.parse("R5")  # one indicator: the threads share its kept search
    okey = okey_for(indicator)
    pool = [t for t in FULL_SET if t not in (indicator, okey)]
    # none, one and two okeys: the okey searches hold the memo longest
    deals = [(rng.sample(pool, 22 - k % 3) + [okey] * (k % 3), indicator) for k in range(60)]
    expected = [best_opening(h, i, rules).points for h, i in deals]
    monkeypatch.setattr(melding, "_MEMO_LIMIT", 200)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often, inside searches
    errors: list[BaseException] = []
    answers: dict[int, list[int]] = {}

    def work(k: int) -> None:
        try:
            answers[k] = [best_opening(h, i, rules).points for h, i in deals * 3]
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors
    assert all(answers[k] == expected * 3 for k in range(6))
