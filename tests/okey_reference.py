"""Brute-force references for the meld search: try every partition of a small hand into melds.

Slow on purpose and written independently of ``okey.melding`` (it never packs counts or prunes), so
the property tests can compare the fast search against it.
"""

from __future__ import annotations

from itertools import combinations

from okey.hand import okey_for
from okey.tiles import Tile


def meld_values(tiles: tuple[Tile, ...], okey: Tile, wrap: bool, okey_weight: int | None) -> int:
    """Best value of ``tiles`` read as one run or set, or -1 when they form none."""
    okeys = sum(1 for t in tiles if t == okey)
    reals = [okey if t.is_false_joker else t for t in tiles if t != okey]
    size = len(tiles)
    best = -1
    if size < 3 or not reals:
        return best

    def worth(plays: list[int]) -> int:
        # plays: the numbers the okeys stand for
        real_sum = sum(t.number for t in reals)
        if okey_weight is not None:
            return real_sum + okey_weight * okeys
        return real_sum + sum(plays)

    numbers = {t.number for t in reals}
    colours = [t.colour for t in reals]
    if len(numbers) == 1 and len(set(colours)) == len(colours) and size <= 4:
        n = next(iter(numbers))
        best = max(best, worth([n] * okeys))
    if len(set(colours)) == 1 and len(numbers) == len(reals) and size <= 13:
        top = 14 if wrap else 13
        for a in range(1, top - size + 2):
            slots = list(range(a, a + size))
            if 14 in slots and 1 in slots:
                continue
            faces = [1 if m == 14 else m for m in slots]
            if not numbers <= set(faces):
                continue
            free = [f for f in faces if f not in numbers]
            best = max(best, worth(free))
    return best


def brute_best(
    tiles: list[Tile], indicator: Tile, wrap: bool, okey_weight: int | None = None
) -> int:
    okey = okey_for(indicator)

    def solve(rest: tuple[Tile, ...]) -> int:
        if not rest:
            return 0
        first, others = rest[0], rest[1:]
        best = solve(others)
        for size in range(2, min(12, len(others)) + 1):
            for chosen in combinations(range(len(others)), size):
                meld = (first, *(others[i] for i in chosen))
                value = meld_values(meld, okey, wrap, okey_weight)
                if value < 0:
                    continue
                left = tuple(t for i, t in enumerate(others) if i not in chosen)
                best = max(best, value + solve(left))
        return best

    return solve(tuple(sorted(tiles)))


def brute_best_using(
    tiles: list[Tile], forced: int, indicator: Tile, wrap: bool, okey_weight: int | None = None
) -> int | None:
    """Best value when ``tiles[forced]`` must lie in a meld, or None when no meld holds it."""
    okey = okey_for(indicator)
    first = tiles[forced]
    others = [t for i, t in enumerate(tiles) if i != forced]
    best: int | None = None
    for size in range(2, min(12, len(others)) + 1):
        for chosen in combinations(range(len(others)), size):
            meld = (first, *(others[i] for i in chosen))
            value = meld_values(meld, okey, wrap, okey_weight)
            if value < 0:
                continue
            left = [t for i, t in enumerate(others) if i not in chosen]
            total = value + brute_best(left, indicator, wrap, okey_weight)
            best = total if best is None else max(best, total)
    return best


def brute_pairs(tiles: list[Tile], okey: Tile, okey_pairs: bool) -> int:
    """The most disjoint pairs: two identical tiles (a false joker is the okey's face), an okey
    with any tile, two okeys only when ``okey_pairs``.  Tries every partner of the first tile."""

    def face(tile: Tile) -> Tile:
        return okey if tile.is_false_joker else tile

    def pairable(a: Tile, b: Tile) -> bool:
        if a == okey and b == okey:
            return okey_pairs
        return a == okey or b == okey or face(a) == face(b)

    def best(rest: tuple[Tile, ...]) -> int:
        if len(rest) < 2:
            return 0
        first, others = rest[0], rest[1:]
        found = best(others)  # the first tile stays single
        for i, other in enumerate(others):
            if pairable(first, other):
                found = max(found, 1 + best(others[:i] + others[i + 1 :]))
        return found

    return best(tuple(tiles))
