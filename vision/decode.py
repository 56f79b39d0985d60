"""Rule-aware reading: the most probable joint reading of all tiles in a frame that can exist.

A recogniser reads each tile on its own, so a blurred ``K12`` next to two real ``K12`` can come out
as a third copy.  A set holds two of each tile, so the joint reading must respect:

* at most two copies of a tile in the whole frame (rack and table tiles together),
* at most two false jokers,
* at most one copy of the indicator on the rack (the other lies face up on the table),
* rack copies plus copies the player reports as seen (discards) at most two.

Under these capacities the most probable reading is a minimum-cost assignment of tiles to
"copies" with cost ``-log p``: each identity offers two copies, of which only the ones still free
for the rack may take a rack tile.

>>> import numpy as np
>>> probs = np.full((3, 53), 1e-4)
>>> probs[:, 0] = 0.9  # three tiles all read as R1 ...
>>> probs[2, 13] = 0.6  # ... but the third could be Y1
>>> decoded = decode(probs / probs.sum(axis=1, keepdims=True), on_rack=[True, True, True])
>>> [str(t) for t in decoded.tiles]
['R1', 'R1', 'Y1']
>>> decoded.changed
[2]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from okey import ImpossibleHandError, Rules, Tile
from okey.tiles import NUM_KINDS

COPIES = 2
# A forbidden (tile, copy) pair costs this much instead of infinity, so the solver's arithmetic
# stays finite; any real reading costs at most -log(PROB_FLOOR) ~ 14 per tile.
FORBIDDEN = 1e6
PROB_FLOOR = 1e-6
# A reading is flagged when it is below this probability ...
MIN_CONFIDENCE = 0.6
# ... or when the runner-up has at least this fraction of its probability.
CLOSE_RATIO = 0.4


@dataclass(frozen=True)
class Alternative:
    tile: Tile
    probability: float

    def to_dict(self) -> dict[str, object]:
        return {"tile": str(self.tile), "probability": round(float(self.probability), 4)}


@dataclass(frozen=True)
class Decoded:
    """The joint reading of the tiles of one frame, in the order they were given."""

    tiles: list[Tile]
    probabilities: list[float]  # probability of each chosen reading
    alternatives: list[tuple[Alternative, ...]]  # other readings, most probable first
    flagged: list[int]  # positions whose reading is uncertain (low, close second, or changed)
    changed: list[int]  # positions where the rules overruled the most probable single reading
    log_likelihood: float

    def reason(self, position: int) -> str:
        """Why a position is flagged, in words."""
        if position in self.changed:
            return "changed by the rules (a set holds two of each tile)"
        alts = self.alternatives[position]
        p = self.probabilities[position]
        if alts and alts[0].probability >= CLOSE_RATIO * p:
            return "close second reading"
        return "low confidence"


def capacities(
    indicator: Tile | None = None, rules: Rules | None = None, seen: Iterable[Tile] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """Copies of each identity allowed ``(on the rack, in the whole frame)``.

    >>> rack, total = capacities(Tile.parse("R5"), seen=[Tile.parse("K1")])
    >>> int(rack[Tile.parse("R5").index]), int(rack[Tile.parse("K1").index]), int(total[0])
    (1, 1, 2)
    """
    del rules  # every preset plays with one 106-tile set; kept so a future variant can change it
    total = np.full(NUM_KINDS, COPIES, dtype=int)
    rack = total.copy()
    for tile, n in Counter(seen).items():
        rack[tile.index] = max(0, rack[tile.index] - n)
    if indicator is not None:
        rack[indicator.index] = min(rack[indicator.index], 1)
    return rack, total


def decode(
    probs: np.ndarray,
    *,
    on_rack: Sequence[bool],
    indicator: Tile | None = None,
    rules: Rules | None = None,
    seen: Iterable[Tile] = (),
    fixed: Mapping[int, Tile] | None = None,
    rule_aware: bool = True,
) -> Decoded:
    """The most probable reading of every tile that a 106-tile set allows.

    ``probs`` is ``(n, 53)``, one row per tile; ``on_rack[i]`` says whether tile ``i`` is on the
    rack (the indicator and seen limits apply to rack tiles only); ``fixed`` maps positions to the
    tile the player says they are (corrections), which take their copies first.  With
    ``rule_aware=False`` every tile takes its own most probable reading (for comparison).
    Raises ``ImpossibleHandError`` when the corrections alone break the limits.
    """
    probs = np.asarray(probs, dtype=float)
    n = probs.shape[0]
    if probs.ndim != 2 or probs.shape[1] != NUM_KINDS:
        raise ValueError(f"probabilities must have shape (n, {NUM_KINDS}), got {probs.shape}")
    if len(on_rack) != n:
        raise ValueError(f"on_rack has {len(on_rack)} entries for {n} tiles")
    fixed = dict(fixed or {})
    seen = list(seen)
    rack_cap, total_cap = capacities(indicator, rules, seen)
    _check_fixed(fixed, on_rack, rack_cap, total_cap, indicator)
    cost = -np.log(np.clip(probs, PROB_FLOOR, 1.0))
    chosen = [fixed[i].index if i in fixed else int(np.argmax(probs[i])) for i in range(n)]
    # Each tile's own best reading is optimal whenever it is possible (the usual case); only an
    # impossible one needs the joint solution.
    if rule_aware and n and not _within(chosen, on_rack, rack_cap, total_cap):
        chosen = _assign(cost, on_rack, rack_cap, total_cap, fixed)
    tiles = [Tile(k) for k in chosen]
    chosen_p = [float(probs[i, k]) for i, k in enumerate(chosen)]
    alternatives = [_alternatives(probs[i], chosen[i]) for i in range(n)]
    changed = [i for i in range(n) if i not in fixed and chosen[i] != int(np.argmax(probs[i]))]
    flagged = [
        i
        for i in range(n)
        if i not in fixed
        and (
            i in changed
            or chosen_p[i] < MIN_CONFIDENCE
            or (alternatives[i] and alternatives[i][0].probability >= CLOSE_RATIO * chosen_p[i])
        )
    ]
    log_likelihood = float(-sum(cost[i, k] for i, k in enumerate(chosen) if i not in fixed))
    return Decoded(tiles, chosen_p, alternatives, flagged, changed, log_likelihood)


def _check_fixed(
    fixed: Mapping[int, Tile],
    on_rack: Sequence[bool],
    rack_cap: np.ndarray,
    total_cap: np.ndarray,
    indicator: Tile | None,
) -> None:
    rack = Counter(t for i, t in fixed.items() if on_rack[i])
    total = Counter(fixed.values())
    for tile, k in sorted(total.items()):
        if k > total_cap[tile.index]:
            what = "false jokers" if tile.is_false_joker else f"copies of {tile}"
            raise ImpossibleHandError(f"the corrections make {k} {what}: a set has only two")
    for tile, k in sorted(rack.items()):
        if k > rack_cap[tile.index]:
            why = "one is the indicator on the table" if tile == indicator else "seen elsewhere"
            raise ImpossibleHandError(f"the corrections put {k} {tile} on the rack: {why}")


def _within(
    chosen: list[int], on_rack: Sequence[bool], rack_cap: np.ndarray, total_cap: np.ndarray
) -> bool:
    total = np.bincount(chosen, minlength=NUM_KINDS)
    rack = np.bincount([k for k, r in zip(chosen, on_rack, strict=True) if r], minlength=NUM_KINDS)
    return bool(np.all(total <= total_cap) and np.all(rack <= rack_cap))


def _alternatives(row: np.ndarray, chosen: int, k: int = 3) -> tuple[Alternative, ...]:
    order = np.argsort(-row)
    return tuple(Alternative(Tile(int(j)), float(row[j])) for j in order if j != chosen)[:k]


def _assign(
    cost: np.ndarray,
    on_rack: Sequence[bool],
    rack_cap: np.ndarray,
    total_cap: np.ndarray,
    fixed: Mapping[int, Tile],
) -> list[int]:
    """Solve the capacitated reading as an assignment of tiles to copy columns."""
    # Column c is one copy of identity kinds[c]; only the first rack_cap copies may go on the rack.
    kinds = np.repeat(np.arange(NUM_KINDS), total_cap)
    copy_no = np.concatenate([np.arange(k) for k in total_cap])
    rack_ok = copy_no < rack_cap[kinds]
    matrix = cost[:, kinds].copy()
    rack_rows = np.asarray(on_rack, dtype=bool)
    matrix[np.ix_(rack_rows, ~rack_ok)] = FORBIDDEN
    for i, tile in fixed.items():
        wanted = kinds == tile.index
        matrix[i, ~wanted] = FORBIDDEN
        matrix[i, wanted] = 0.0
    if matrix.shape[0] > matrix.shape[1]:
        raise ImpossibleHandError(
            f"{matrix.shape[0]} tiles in one frame: a set has only {matrix.shape[1]}"
        )
    columns = min_cost_assignment(matrix)
    return [int(kinds[c]) for c in columns]


def min_cost_assignment(cost: np.ndarray) -> list[int]:
    """Column for each row minimising the total cost (rows <= columns); Hungarian algorithm.

    O(rows^2 * columns): shortest augmenting paths with potentials, each inner step vectorised.

    >>> min_cost_assignment(np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0]]))
    [1, 0]
    """
    cost = np.asarray(cost, dtype=float)
    n, m = cost.shape
    if n > m:
        raise ValueError(f"{n} rows cannot be assigned to {m} columns")
    u = np.zeros(n + 1)
    v = np.zeros(m + 1)
    owner = np.zeros(m + 1, dtype=int)  # owner[j]: 1-based row holding column j (0 = free)
    way = np.zeros(m + 1, dtype=int)
    for i in range(1, n + 1):
        owner[0] = i
        j0 = 0
        minv = np.full(m + 1, math.inf)
        used = np.zeros(m + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = owner[j0]
            free = ~used
            free[0] = False
            reduced = cost[i0 - 1] - u[i0] - v[1:]
            better = free[1:] & (reduced < minv[1:])
            minv[1:][better] = reduced[better]
            way[1:][better] = j0
            candidates = np.where(free[1:], minv[1:], math.inf)
            j1 = int(np.argmin(candidates)) + 1
            delta = candidates[j1 - 1]
            u[owner[used]] += delta
            v[used] -= delta
            minv[free] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    columns = [0] * n
    for j in range(1, m + 1):
        if owner[j]:
            columns[owner[j] - 1] = j - 1
    return columns
