"""Brute-force reference for the distance to win: try every exchange of r tiles, r = 0, 1, 2, ...

Slow on purpose and independent of ``okey.distance``: it removes every multiset of r held tiles,
adds every multiset of r drawable tiles and asks the win check (``okey.solver``) whether the
result wins.  Only practical for small hands (``hand_size`` 5-8) or small r.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from itertools import combinations_with_replacement

from okey.rules import Rules
from okey.solver import check_win
from okey.tiles import ALL_KINDS, Tile


def small_hand_rules(rules: Rules, size: int, **changes: object) -> Rules:
    """``rules`` for hands of ``size`` tiles (5 to 8): no table plays them, so ``Rules`` refuses
    that size, but the brute-force references can only search small hands; the engine itself
    reads the size from the rules, so it is set past the check here."""
    small = replace(rules, **changes)
    object.__setattr__(small, "hand_size", size)
    return small


def wins(tiles: list[Tile], indicator: Tile, rules: Rules) -> bool:
    return check_win(tiles, indicator, rules).winning


def brute_distance(
    tiles: list[Tile], indicator: Tile, rules: Rules, seen: tuple[Tile, ...] = (), limit: int = 2
) -> int | None:
    """The fewest exchanges to a win, or None when more than ``limit`` are needed."""
    size = rules.hand_size
    held = Counter(tiles)
    out = Counter([*seen, indicator])
    drawable = {t: 2 - held[t] - out[t] for t in ALL_KINDS if 2 - held[t] - out[t] > 0}
    kinds = sorted(drawable)
    surplus = len(tiles) - size  # 0, or 1 before a discard
    for r in range(limit + 1):
        for removed in combinations_with_replacement(sorted(held), r + surplus):
            take = Counter(removed)
            if any(take[t] > held[t] for t in take):
                continue
            rest = list((held - take).elements())
            for added in combinations_with_replacement(kinds, r):
                extra = Counter(added)
                if any(extra[t] > drawable[t] for t in extra):
                    continue
                if wins(rest + list(added), indicator, rules):
                    return r
    return None
