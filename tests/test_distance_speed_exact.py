"""The distance search's shortcuts give the answers of the plain computation they replace.

- ``runs.relevant_key``: a line with a copy left set at every number no run can reach has the
  same run profile (so the table is read, and profiles are cached, under that key);
- ``runs.mirror_key``: with a 1 played high, a line read backwards (numbers 2 to 13 as 15 - n)
  has the same run profile (so the table holds one of the two, ``okey.line_table``);
- ``runs.walk_near`` (``advise``): a line near the hand's is searched as its mirror where that
  shares more states, with the same profile and bound terms;
- ``runs.line_bound``: a plain line's bound terms from the search without the excess
  (``runs._searched_bound``, ``runs._bound_terms`` cached by the most kept per slot count) are
  those of the line's profile;
- ``runs.line_or_plain``: a line's plain line stands in for it (the same bound terms, and no
  knapsack keeps more with the line): the set search, ``kept_with_sets`` and ``advise`` give
  the same answers as with every line searched;
- ``HandState.columns`` as ``HandState.checked``, ``less`` and ``with_face`` keep it is the hand
  counted again from its faces and copies left.

A few hundred cases by default; ``ISTAKA_THOROUGH=1`` runs thousands (docs/engine.md).
"""

import os
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okey import FULL_SET, Rules
from okey.distance import HandState
from okey.runs import (
    _profile_of_key,
    _searched_bound,
    _walk_mirrored,
    line_bound,
    line_profile,
    mirror_key,
    plain_key,
    relevant_key,
    walk_near,
)

THOROUGH = os.environ.get("ISTAKA_THOROUGH") == "1"
CLASSIC = Rules.classic()
SETTINGS = settings(
    max_examples=5000 if THOROUGH else 300,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def key_of(counts, left):
    fields = [c | (4 if a else 0) for c, a in zip(counts, left, strict=True)]
    return sum(f << (3 * p) for p, f in enumerate(fields))


# Sparse lines (most numbers not held), so that many numbers are out of every run's reach.
COUNTS = st.lists(st.sampled_from([0, 0, 0, 0, 1, 1, 2]), min_size=13, max_size=13)
LEFT = st.lists(st.booleans(), min_size=13, max_size=13)


@SETTINGS
@given(COUNTS, LEFT, st.booleans(), st.sampled_from([14, 15, 21]))
def test_a_lines_relevant_key_has_its_profile(counts, left, wrap, size):
    key = key_of(counts, left)
    relevant = relevant_key(key, wrap)
    # Only copies left are added, and only at numbers not held.
    assert relevant & key == key
    assert all(counts[p] == 0 for p in range(13) if (relevant ^ key) >> (3 * p) & 7)
    profile = _profile_of_key(key, wrap, size)
    assert _profile_of_key(relevant, wrap, size) == profile
    assert line_profile(key, wrap, size) == profile


def test_relevant_keys_on_seeded_random_lines():
    """Every density of line, both wrap rules, the table's rules and others."""
    rnd = random.Random(2026)
    for _ in range(20_000 if THOROUGH else 1500):
        held = rnd.random()
        counts = [rnd.choice([1, 1, 2]) if rnd.random() < held / 2 else 0 for _ in range(13)]
        left = [rnd.random() < 0.7 for _ in range(13)]
        key = key_of(counts, left)
        wrap = rnd.random() < 0.7
        size = rnd.choice([14, 14, 21])
        profile = _profile_of_key(key, wrap, size)
        assert _profile_of_key(relevant_key(key, wrap), wrap, size) == profile, (key, wrap)
        assert line_profile(key, wrap, size) == profile, (key, wrap, size)


@SETTINGS
@given(COUNTS, LEFT, st.sampled_from([14, 15, 21]))
def test_a_mirrored_line_has_its_profile(counts, left, size):
    key = key_of(counts, left)
    mirrored = mirror_key(key)
    # The 1 stays, numbers 2 to 13 swap as n and 15 - n.
    assert mirrored & 7 == key & 7
    assert all((mirrored >> (3 * p) & 7) == (key >> (3 * (13 - p)) & 7) for p in range(1, 13))
    assert mirror_key(mirrored) == key
    profile = _profile_of_key(key, True, size)
    assert _profile_of_key(mirrored, True, size) == profile
    assert line_profile(mirrored, True, size) == profile


def test_lines_near_a_hands_are_the_same_walked_either_way():
    """Dense lines (one colour of 12-16 tiles, as ``advise`` searches for a one-colour hand)
    one or two numbers off a hand's line, read with ``walk_near`` set to it: the profile and
    the bound terms of the line as searched directly, whichever way ``_walk_mirrored`` walks
    it (both ways taken often)."""
    rnd = random.Random(34)
    mirrored = 0
    cases = 3000 if THOROUGH else 200
    for _ in range(cases):
        counts = [0] * 13
        for _ in range(rnd.randint(12, 16)):
            n = rnd.choice([p for p in range(13) if counts[p] < 2])
            counts[n] += 1
        left = [rnd.random() < 0.8 for _ in range(13)]
        hand_line = key_of(counts, left)
        for p in rnd.sample(range(13), rnd.choice([1, 2])):
            counts[p] = (counts[p] + rnd.choice([1, 2])) % 3
            left[p] = rnd.random() < 0.8
        key = key_of(counts, left)
        walk_near([hand_line])
        try:
            mirrored += _walk_mirrored(key)
            bound = line_bound(key, True, 14)  # (searched before the profile is made)
            profile = line_profile(key, True, 14)
        finally:
            walk_near(())
        assert profile == _profile_of_key(key, True, 14), (hand_line, key)
        assert bound == _searched_bound(plain_key(key), True, 14) == profile.packed_bound
    assert cases // 5 < mirrored < cases - cases // 5


def test_the_table_serves_a_line_and_its_mirror():
    """Lines of the table's rules read through the table (and searched where it lacks them),
    in both orientations, denser lines too."""
    rnd = random.Random(23)
    for _ in range(20_000 if THOROUGH else 1500):
        held = rnd.random()
        counts = [rnd.choice([1, 1, 2]) if rnd.random() < held else 0 for _ in range(13)]
        left = [c < 2 and rnd.random() < 0.9 for c in counts]
        key = key_of(counts, left)
        profile = _profile_of_key(key, True, 14)
        assert line_profile(key, True, 14) == profile, key
        assert line_profile(mirror_key(key), True, 14) == profile, key


def columns_of(hand):
    columns = 0
    for face in range(52):
        number, colour = face % 13, face // 13
        columns |= hand.faces[face] << (16 * number + 2 * colour)
        columns |= hand.avail[face] << (16 * number + 8 + 2 * colour)
    return columns


def random_deal(seed: int, size: int, seen_count: int) -> tuple[list, object, list]:
    """A shuffled full set's first ``size`` tiles, its first tile that is no false joker as the
    indicator, and the next ``seen_count`` tiles as seen."""
    rnd = random.Random(seed)
    pool = list(FULL_SET)
    rnd.shuffle(pool)
    indicator = next(t for t in pool if not t.is_false_joker)
    pool.remove(indicator)
    return pool[:size], indicator, pool[size : size + seen_count]


@settings(max_examples=2000 if THOROUGH else 200, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([0, 0, 5, 30]), st.sampled_from([14, 15]))
def test_a_hands_columns_are_its_counts(seed, seen_count, size):
    tiles, indicator, seen = random_deal(seed, size, seen_count)
    quick = HandState.checked(tiles, indicator, CLASSIC, seen)
    plain = HandState.of(tiles, indicator, seen)
    assert quick.columns() == plain.columns() == columns_of(plain)
    assert quick.line_keys() == plain.line_keys()
    for face in range(52):
        if quick.faces[face]:
            less = quick.less(face)
            assert less.columns() == columns_of(less)
        if quick.avail[face]:
            drawn = quick.with_face(face)
            assert drawn.columns() == columns_of(drawn)
    if quick.okeys:
        assert quick.less(None).columns() == columns_of(quick)


@SETTINGS
@given(st.lists(st.integers(0, 7), min_size=13, max_size=13), st.booleans())
def test_lone_faces_are_the_faces_every_run_of_three_needs_a_dead_tile_for(fields, wrap):
    """``runs._lone_faces`` (bit operations on the key's fields) against its definition: a held
    face whose every run of three has another tile with no copy left."""
    from okey.runs import _RUN_NEIGHBOURS, _lone_faces

    key = sum(f << (3 * p) for p, f in enumerate(fields))
    left = [f & 4 for f in fields]
    expected = 0
    for n, field in enumerate(fields):
        runs = _RUN_NEIGHBOURS[wrap][n]
        if field & 3 and not any(left[a] and left[b] for a, b in runs):
            expected |= 1 << n
    assert _lone_faces(key, wrap) == expected


@settings(max_examples=2000 if THOROUGH else 200, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([0, 0, 5, 30]), st.sampled_from([14, 15]))
def test_pair_counts_read_from_the_line_keys_are_the_counts(seed, seen_count, size):
    from okey.distance import pair_counts, pair_counts_of_keys

    tiles, indicator, seen = random_deal(seed, size, seen_count)
    hand = HandState.of(tiles, indicator, seen)
    assert pair_counts_of_keys(hand.line_keys()) == pair_counts(hand.faces, hand.avail)


# Dense lines (10 to 16 faces are what the table lacks), a third copy now and then (a face
# drawn onto a number held twice).
DENSE = st.lists(st.sampled_from([0, 1, 1, 2, 2, 2, 3]), min_size=13, max_size=13)


@SETTINGS
@given(st.one_of(COUNTS, DENSE), LEFT, st.booleans(), st.sampled_from([14, 15, 21]))
def test_a_lines_bound_without_the_excess_is_its_profiles(counts, left, wrap, size):
    key = key_of(counts, left)
    expected = _profile_of_key(plain_key(key), wrap, size).packed_bound
    assert _searched_bound(plain_key(key), wrap, size) == expected
    assert line_bound(key, wrap, size) == expected


def test_bounds_without_the_excess_on_seeded_random_lines():
    """Lines of 0 to 16 faces, two copies of a number at most (the one-colour hands)."""
    rnd = random.Random(34)
    for _ in range(10_000 if THOROUGH else 600):
        counts = [0] * 13
        for _ in range(rnd.randrange(17)):
            spare = [p for p in range(13) if counts[p] < 2]
            counts[rnd.choice(spare)] += 1
        key = plain_key(key_of(counts, [False] * 13))
        wrap, size = rnd.random() < 0.8, rnd.choice([14, 21])
        assert _searched_bound(key, wrap, size) == _profile_of_key(key, wrap, size).packed_bound


def test_cached_bound_terms_are_the_bound_terms():
    from okey.runs import _bound_terms, _bound_terms_of

    rnd = random.Random(7)
    for _ in range(3000):
        size = rnd.choice([14, 21])
        best = sorted(rnd.randrange(-1, size + 1) for _ in range(size + 1))
        best = [kept if kept <= slots else -1 for slots, kept in enumerate(best)]
        assert _bound_terms(best) == _bound_terms(list(best)) == _bound_terms_of(best)


def test_a_plain_line_keeps_at_least_as_many_as_its_line():
    """``runs.plain_profile``: the line with a copy left wherever fewer than two are held has
    the line's bound terms and, added to any knapsack (other lines' runs and sets, any excess
    budget), keeps at least as many faces."""
    from okey.layout import best_with, totals_of
    from okey.runs import plain_profile
    from okey.sets import set_component

    rnd = random.Random(11)
    for _ in range(3000 if THOROUGH else 300):
        counts = [0] * 13
        for _ in range(rnd.randrange(3, 17)):
            counts[rnd.choice([p for p in range(13) if counts[p] < 2])] += 1
        left = [c < 2 and rnd.random() < 0.6 for c in counts]
        key = key_of(counts, left)
        line = line_profile(key, True, 14)
        plain = line_profile(plain_key(key), True, 14)
        at_hand = plain_profile(key, True, 14)
        assert at_hand is None or at_hand == plain
        assert plain.packed_bound == line.packed_bound
        other = [rnd.choice([0, 0, 1, 2]) for _ in range(13)]
        parts = [line_profile(key_of(other, [c < 2 for c in other]), True, 14)]
        for _ in range(rnd.randrange(3)):
            colours = tuple(sorted(rnd.sample(range(4), rnd.choice([2, 3]))))
            parts.append(set_component(colours, (rnd.randrange(3),) * 4)[0])
        for budget in range(3):
            totals = totals_of(parts, 14, budget)
            assert best_with(totals, plain.packed, plain.serial) >= best_with(
                totals, line.packed, line.serial
            )


def _families(seed: int, count: int):
    """Hands of ``benchmarks/engine.py --adversarial``'s families, 0 to 40 seen tiles."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        from engine import _family_hand
    finally:
        sys.path.pop(0)
    rnd = random.Random(seed)
    families = ("one colour", "two colours", "many pairs", "both okeys")
    for k in range(count):
        hand, indicator = _family_hand(rnd, families[k % 4])
        pool = list(FULL_SET)
        for tile in [*hand, indicator]:
            pool.remove(tile)
        yield hand, indicator, rnd.sample(pool, rnd.choice([0, 10, 20, 40]))


def test_plain_stand_ins_change_no_answer(monkeypatch):
    """The set search (every optimal choice, in order), ``kept_with_sets`` with a floor and
    ``advise`` on adversarial hands, against the same with every line searched where it is
    first read (``runs.line_or_plain`` never standing a plain line in)."""
    import okey.distance
    import okey.draws
    from okey import advise
    from okey.distance import kept_with_sets, optimal_set_choices

    def searched(key, wrap, size):
        return line_profile(key, wrap, size), True

    def answers(hand, indicator, seen):
        state = HandState.of(hand, indicator, seen)
        kept, optimal = optimal_set_choices(state, CLASSIC)
        floors = [kept_with_sets(state, CLASSIC, sets, kept) for sets in optimal]
        after = []
        for face in range(52):
            if state.faces[face]:
                less = state.less(face)
                after.append(optimal_set_choices(less, CLASSIC, max(0, kept - 1)))
        return kept, optimal, floors, after, advise(hand, indicator, CLASSIC, seen).to_dict()

    for hand, indicator, seen in _families(34, 200 if THOROUGH else 24):
        stood = answers(hand, indicator, seen)
        with monkeypatch.context() as patch:
            patch.setattr(okey.distance, "line_or_plain", searched)
            patch.setattr(okey.draws, "line_or_plain", searched)
            assert answers(hand, indicator, seen) == stood, (hand, indicator, seen)
