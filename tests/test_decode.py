"""Rule-aware reading: the most probable joint reading that a 106-tile set allows."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okey import ImpossibleHandError, Tile, parse_tiles
from vision.decode import decode, min_cost_assignment


def confident(tiles: str, p: float = 0.9) -> np.ndarray:
    """Probabilities that read each tile as given with probability ``p``."""
    parsed = parse_tiles(tiles)
    probs = np.full((len(parsed), 53), (1 - p) / 52)
    for i, tile in enumerate(parsed):
        probs[i, tile.index] = p
    return probs


def t(text: str) -> Tile:
    return Tile.parse(text)


def test_planted_third_copy_is_corrected() -> None:
    probs = confident("K12 K12 K12 R1 R2 R3")
    # The third K12 is blurred: the recogniser still prefers K12, B12 a close second.
    probs[2] = 1e-4
    probs[2, t("K12").index] = 0.55
    probs[2, t("B12").index] = 0.40
    probs[2] /= probs[2].sum()
    decoded = decode(probs, on_rack=[True] * 6)
    assert [str(x) for x in decoded.tiles] == ["K12", "K12", "B12", "R1", "R2", "R3"]
    assert decoded.changed == [2]
    assert decoded.flagged == [2]
    assert "two of each" in decoded.reason(2)


def test_without_rules_the_third_copy_stays() -> None:
    probs = confident("K12 K12 K12")
    decoded = decode(probs, on_rack=[True] * 3, rule_aware=False)
    assert [str(x) for x in decoded.tiles] == ["K12"] * 3


def test_the_least_sure_copy_gives_way() -> None:
    probs = confident("R7 R7 R7")
    probs[0, t("R7").index], probs[0, t("Y7").index] = 0.7, 0.25
    probs[1, t("R7").index], probs[1, t("K7").index] = 0.8, 0.15
    decoded = decode(probs, on_rack=[True] * 3)
    assert [str(x) for x in decoded.tiles] == ["Y7", "R7", "R7"]


def test_only_one_copy_of_the_indicator_on_the_rack() -> None:
    probs = confident("R5 R5 R6")
    probs[1, t("R4").index] = 0.05
    decoded = decode(probs, on_rack=[True] * 3, indicator=t("R5"))
    assert Counter(str(x) for x in decoded.tiles)["R5"] == 1
    assert str(decoded.tiles[1]) == "R4"


def test_table_tiles_count_against_the_two_copies() -> None:
    # Two B3 on the rack and one on the table: one of the three is misread, the least sure one.
    probs = confident("B3 B3 B3")
    probs[2, t("B8").index] = 0.08  # the table tile is the blurriest
    probs[2, t("B3").index] = 0.5
    decoded = decode(probs, on_rack=[True, True, False])
    assert [str(x) for x in decoded.tiles] == ["B3", "B3", "B8"]


def test_indicator_on_the_table_is_not_limited_by_the_rack_rule() -> None:
    decoded = decode(confident("R5 R5"), on_rack=[True, False], indicator=t("R5"))
    assert [str(x) for x in decoded.tiles] == ["R5", "R5"]


def test_seen_tiles_leave_fewer_copies_for_the_rack() -> None:
    probs = confident("Y9 Y9")
    probs[1, t("Y6").index] = 0.06
    decoded = decode(probs, on_rack=[True, True], seen=[t("Y9")])
    assert [str(x) for x in decoded.tiles] == ["Y9", "Y6"]


def test_at_most_two_false_jokers() -> None:
    probs = confident("FJ FJ FJ")
    probs[0, t("K1").index] = 0.06
    decoded = decode(probs, on_rack=[True] * 3)
    assert Counter(decoded.tiles)[Tile.false_joker()] == 2


def test_corrections_win_and_take_their_copies() -> None:
    probs = confident("R1 R1 R2")
    decoded = decode(probs, on_rack=[True] * 3, fixed={2: t("R1")})
    assert [str(x) for x in decoded.tiles][2] == "R1"
    assert Counter(decoded.tiles)[t("R1")] == 2
    assert 2 not in decoded.flagged


def test_impossible_corrections_are_named() -> None:
    with pytest.raises(ImpossibleHandError, match="3 copies of R1"):
        decode(
            confident("R1 R1 R2"), on_rack=[True] * 3, fixed={0: t("R1"), 1: t("R1"), 2: t("R1")}
        )
    with pytest.raises(ImpossibleHandError, match="indicator"):
        decode(
            confident("R1 R1"),
            on_rack=[True] * 2,
            indicator=t("R1"),
            fixed={0: t("R1"), 1: t("R1")},
        )


def test_low_and_close_readings_are_flagged() -> None:
    probs = confident("R1 R2 R3")
    probs[1] = 0.2 / 51
    probs[1, t("R2").index], probs[1, t("R8").index] = 0.5, 0.3
    decoded = decode(probs, on_rack=[True] * 3)
    assert decoded.flagged == [1]
    assert decoded.alternatives[1][0].tile == t("R8")
    assert decoded.changed == []


def test_bad_shapes_are_named() -> None:
    with pytest.raises(ValueError, match="shape"):
        decode(np.ones((2, 52)), on_rack=[True, True])
    with pytest.raises(ValueError, match="on_rack"):
        decode(np.ones((2, 53)) / 53, on_rack=[True])


@settings(max_examples=40)
@given(st.integers(0, 10_000), st.integers(1, 6))
def test_joint_reading_is_the_best_possible_one(seed: int, n: int) -> None:
    """Against brute force over a few identities: the reading is possible and the most probable."""
    rng = np.random.default_rng(seed)
    kinds = [0, 1, 52]  # R1, R2, FJ: few identities so that the caps bind often
    probs = np.full((n, 53), 1e-9)
    probs[:, kinds] = rng.dirichlet(np.ones(3), size=n)
    on_rack = list(rng.random(n) < 0.7)
    indicator = t("R1") if seed % 2 else None
    decoded = decode(probs, on_rack=on_rack, indicator=indicator)
    best = -np.inf
    for reading in itertools.product(kinds, repeat=n):
        total = Counter(reading)
        rack = Counter(k for k, r in zip(reading, on_rack, strict=True) if r)
        if any(v > 2 for v in total.values()) or (indicator and rack[0] > 1):
            continue
        best = max(best, float(sum(np.log(probs[i, k]) for i, k in enumerate(reading))))
    chosen = [x.index for x in decoded.tiles]
    assert max(Counter(chosen).values()) <= 2
    got = float(sum(np.log(probs[i, k]) for i, k in enumerate(chosen)))
    assert got == pytest.approx(best, abs=1e-6)


def test_assignment_matches_brute_force() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 5))
        m = int(rng.integers(n, 7))
        cost = rng.random((n, m)) * 10
        best = min(
            sum(cost[i, p[i]] for i in range(n)) for p in itertools.permutations(range(m), n)
        )
        columns = min_cost_assignment(cost)
        assert len(set(columns)) == n
        assert sum(cost[i, columns[i]] for i in range(n)) == pytest.approx(best)
