"""Hands as players lay them out: runs, sets, pairs and loose tiles in groups with gaps between.

A hand is drawn from the 106-tile set after the indicator is turned, so no tile kind appears more
than twice, the indicator's kind at most once in the hand, and false jokers at most twice.

>>> import numpy as np
>>> deal = deal_hand(np.random.default_rng(1), hand_size=14)
>>> sum(len(g) for g in deal.groups)
14
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from okey import Tile
from okey.tiles import FALSE_JOKER_INDEX


@dataclass(frozen=True)
class Deal:
    """The indicator, the hand as groups in the player's order, and the pool left for the table."""

    indicator: Tile
    groups: list[list[Tile]]  # each group is laid out touching; groups are split by gaps
    remaining: list[Tile]  # tiles still in the set (for discards)


def full_pool() -> list[Tile]:
    """All 106 tiles: two of each numbered kind and two false jokers."""
    return [Tile(i) for i in range(53) for _ in range(2)]


def _take(pool: Counter, tile: Tile) -> bool:
    if pool[tile] > 0:
        pool[tile] -= 1
        return True
    return False


def _try_run(rng: np.random.Generator, pool: Counter, max_len: int) -> list[Tile] | None:
    colour = "RYBK"[rng.integers(4)]
    length = int(min(max_len, rng.choice([3, 3, 3, 4, 4, 5, 6])))
    if length < 3:
        return None
    start = int(rng.integers(1, 15 - length))
    tiles = [Tile.of(colour, n) for n in range(start, start + length)]
    if all(pool[t] > 0 for t in tiles):
        for t in tiles:
            _take(pool, t)
        return tiles
    return None


def _try_set(rng: np.random.Generator, pool: Counter, max_len: int) -> list[Tile] | None:
    number = int(rng.integers(1, 14))
    size = int(min(max_len, rng.choice([3, 3, 4])))
    if size < 3:
        return None
    colours = list(rng.permutation(list("RYBK"))[:size])
    tiles = [Tile.of(c, number) for c in colours]
    if all(pool[t] > 0 for t in tiles):
        for t in tiles:
            _take(pool, t)
        return tiles
    return None


def _try_pair(rng: np.random.Generator, pool: Counter) -> list[Tile] | None:
    tile = Tile(int(rng.integers(52)))
    if pool[tile] >= 2:
        pool[tile] -= 2
        return [tile, tile]
    return None


def _random_tile(rng: np.random.Generator, pool: Counter) -> Tile:
    kinds = [t for t, n in pool.items() for _ in range(n)]
    tile = kinds[int(rng.integers(len(kinds)))]
    pool[tile] -= 1
    return tile


def deal_hand(rng: np.random.Generator, hand_size: int) -> Deal:
    """Deal ``hand_size`` tiles in groups: runs, sets, pairs, partial runs, loose tiles."""
    pool = Counter(full_pool())
    indicator = Tile(int(rng.integers(52)))  # never a false joker
    pool[indicator] -= 1
    groups: list[list[Tile]] = []
    left = hand_size
    # about a quarter of real hands hold a false joker (2 of 105 tiles, 14 drawn); players keep it
    # alone or slot it into a group where it plays as the okey's face
    n_false = int(rng.choice([0, 1, 2], p=[0.74, 0.23, 0.03]))
    false_jokers = [Tile(FALSE_JOKER_INDEX)] * n_false
    pool[Tile(FALSE_JOKER_INDEX)] -= n_false
    left -= n_false
    pairs_mode = rng.random() < 0.08  # someone going for seven pairs
    attempts = 0
    while left > 0 and attempts < 60:
        attempts += 1
        roll = rng.random()
        group: list[Tile] | None
        if pairs_mode or roll < 0.15:
            group = _try_pair(rng, pool) if left >= 2 else None
        elif roll < 0.5:
            group = _try_run(rng, pool, left)
        elif roll < 0.75:
            group = _try_set(rng, pool, left)
        elif roll < 0.87 and left >= 2:
            # a partial run: two neighbours waiting for a third
            first = _try_run(rng, pool, 3)
            group = None
            if first is not None:
                pool[first[2]] += 1
                group = first[:2]
        else:
            group = [_random_tile(rng, pool)]
        if group:
            groups.append(group)
            left -= len(group)
    while left > 0:
        groups.append([_random_tile(rng, pool)])
        left -= 1
    for fj in false_jokers:
        if groups and rng.random() < 0.5:
            groups[int(rng.integers(len(groups)))].append(fj)
        else:
            groups.append([fj])
    order = rng.permutation(len(groups))
    groups = [groups[i] for i in order]
    remaining = [t for t, n in pool.items() for _ in range(n)]
    return Deal(indicator=indicator, groups=groups, remaining=remaining)


def copies_ok(tiles: list[Tile], indicator: Tile | None = None) -> bool:
    """True when no kind appears more than twice (once if it is the indicator's kind)."""
    counts = Counter(tiles)
    if indicator is not None:
        counts[indicator] += 1
    return all(n <= 2 for n in counts.values()) and counts[Tile(FALSE_JOKER_INDEX)] <= 2
