"""The run search lays out runs of at most ``runs.LONGEST_SEARCHED`` tiles, and that changes no
answer.

A run of 6 or more tiles is two or more runs of 3 to 5 side by side with the same slots, kept
faces and excess, so searching the short ones must find every useful choice of a colour's line
(``runs.useful_bits``) that the search with runs up to 13 long finds, and the same bound terms.
Checked here on random lines against that longer search, and end to end: the distance to win of
one-colour hands (where the long runs are) against the brute-force reference.
"""

from __future__ import annotations

import random

from engine_reference import brute_distance, small_hand_rules
from hypothesis import given, settings
from hypothesis import strategies as st

from okey import Rules, Tile, distance_to_win, okey_for, runs

CLASSIC = Rules.classic()
RANDOMS = st.integers(min_value=0, max_value=2**32).map(random.Random)


# The run search's memos, and its bit fields per size (a layer has room for the longest run
# searched, ``runs._layer_fields``), per longest run searched: the two searches share none.
_PER_LONGEST = (
    "_BITS_MEMO",
    "_SLOT_MEMO",
    "_PADS",
    "_RUN_FIELDS",
    "_WALKS",
    "_LAYER_BITS",
    "_DOMINATION",
    "_USEFUL_MASKS",
    "_LANES_VALID",
    "_SLOTS_WITHIN",
)
_MEMOS: dict[int, dict[str, dict]] = {}


def run_search(longest, line, avail, length, size):
    """The useful choices of one line and its most kept per slot count where more slots keep
    more (excess left out: the bound terms), by the search with runs up to ``longest`` long."""
    saved_longest = runs.LONGEST_SEARCHED
    saved = {name: getattr(runs, name) for name in _PER_LONGEST}
    runs.LONGEST_SEARCHED = longest
    for name, memo in _MEMOS.setdefault(longest, {n: {} for n in _PER_LONGEST}).items():
        setattr(runs, name, memo)
    try:
        valid = runs._run_fields(size)[2]
        useful = runs.useful_bits(runs._runs_bits(line, avail, length, size) & valid, size)
        kept_bits = runs.kept_field_width(size)
        most = runs._most_kept(runs._slot_bits(line, length, size), kept_bits, size)
    finally:
        runs.LONGEST_SEARCHED = saved_longest
        for name, memo in saved.items():
            setattr(runs, name, memo)
    rising = [(s, kept) for s, kept in enumerate(most) if kept > max(most[:s], default=-1)]
    return useful, rising


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.integers(0, 2), min_size=9, max_size=14),
    st.integers(0, 2**14 - 1),
    st.sampled_from([6, 8, 14, 15, 21, 22]),
)
def test_short_runs_find_every_useful_choice(counts, left, size):
    length = len(counts)
    line = sum(count << (2 * p) for p, count in enumerate(counts))
    avail = left & ((1 << length) - 1)
    short = run_search(runs.LONGEST_SEARCHED, line, avail, length, size)
    assert short == run_search(runs.LONGEST_RUN, line, avail, length, size)


def test_short_runs_find_every_useful_choice_of_dense_lines():
    """Seeded lines with most numbers held once or twice (the one-colour hands' lines)."""
    rnd = random.Random(34)
    for _ in range(300):
        length = rnd.choice([13, 14])
        counts = [rnd.choice([1, 1, 2, 2, 0]) for _ in range(length)]
        line = sum(count << (2 * p) for p, count in enumerate(counts))
        avail = rnd.getrandbits(length) if rnd.random() < 0.5 else (1 << length) - 1
        size = rnd.choice([14, 15, 21, 22])
        short = run_search(runs.LONGEST_SEARCHED, line, avail, length, size)
        assert short == run_search(runs.LONGEST_RUN, line, avail, length, size), (line, avail)


def one_colour_win(rnd: random.Random, indicator: Tile) -> list[Tile] | None:
    """14 tiles of one colour laid out as runs (two copies of a face at most), or None."""
    colour = rnd.randrange(4)
    sizes = rnd.choice([(3, 11), (5, 9), (6, 8), (7, 7), (4, 4, 6), (3, 5, 6), (14,)])
    tiles = []
    for size in sizes:
        start = rnd.randint(1, 14 - size + 1)
        tiles += [Tile(colour * 13 + (n - 1) % 13) for n in range(start, start + size)]
    okey = okey_for(indicator)
    if any(tiles.count(t) > 2 for t in tiles) or tiles.count(indicator) > 1 or okey in tiles:
        return None
    return tiles


@settings(max_examples=60, deadline=None)
@given(RANDOMS)
def test_one_colour_hands_near_a_win_agree_with_brute_force(rnd):
    indicator = Tile(rnd.randrange(52))
    tiles = one_colour_win(rnd, indicator)
    if tiles is None:
        return
    assert distance_to_win(tiles, indicator, CLASSIC) == 0
    at = rnd.randrange(14)
    tiles[at] = Tile(tiles[at].index // 13 * 13 + rnd.randrange(13))
    if tiles.count(tiles[at]) > 2 or tiles.count(indicator) > 1:
        return
    slow = brute_distance(tiles, indicator, CLASSIC, limit=1)
    fast = distance_to_win(tiles, indicator, CLASSIC)
    assert fast == slow if slow is not None else fast > 1


@settings(max_examples=40, deadline=None)
@given(RANDOMS, st.sampled_from([7, 8]), st.booleans())
def test_small_one_colour_hands_agree_with_brute_force(rnd, size, wrap):
    rules = small_hand_rules(CLASSIC, size, wrap_13_1=wrap)
    colour = rnd.randrange(4)
    pool = [Tile(colour * 13 + n) for n in range(13)] * 2
    rnd.shuffle(pool)
    indicator = Tile(rnd.randrange(52))
    tiles = [t for t in pool if t != okey_for(indicator)][:size]
    if tiles.count(indicator) > 1:
        return
    fast = distance_to_win(tiles, indicator, rules)
    slow = brute_distance(tiles, indicator, rules, limit=2)
    assert fast == slow if slow is not None else fast > 2


def test_lanes_walk_each_split_of_the_ones_as_if_alone():
    """``runs._runs_bits`` and ``runs._slot_bits`` with lanes (a line of 14 positions, its last
    one, the 1 played high, held 0 to ``lanes - 1`` times at once): each lane is the line with
    that count there, searched alone (the same useful choices, the same slot bits)."""
    rnd = random.Random(35)
    for _ in range(300):
        counts = [rnd.choice([0, 1, 1, 2, 2]) for _ in range(13)]
        if rnd.random() < 0.3:
            counts = [rnd.choice([0, 0, 0, 1, 2]) for _ in range(13)]
        line = sum(count << (2 * p) for p, count in enumerate(counts))
        avail = rnd.getrandbits(13) if rnd.random() < 0.6 else (1 << 13) - 1
        avail |= (avail & 1) << 13  # (the 1 played high reads the 1's copy left)
        size = rnd.choice([14, 15, 21, 22])
        lanes = rnd.choice([2, 3])
        valid = runs._run_fields(size)[2]
        together = runs._runs_bits(line, avail, 14, size, lanes)
        slots_together = runs._slot_bits(line, 14, size, lanes)
        within = (1 << ((size + 1) << runs.kept_field_width(size))) - 1
        for high in range(lanes):
            alone = runs._runs_bits(line | high << 26, avail, 14, size) & valid
            lane = runs._lane_of(together, high, lanes, size)
            assert runs.useful_bits(lane, size) == runs.useful_bits(alone, size), (line, high)
            slots_alone = runs._slot_bits(line | high << 26, 14, size)
            lane_slots = slots_together >> (high * runs._slot_lane(size)) & within
            assert lane_slots == slots_alone, (line, avail, high)


def useful_by_definition(bits: int, size: int) -> dict[int, int]:
    """``runs.useful_bits`` as its docstring says, choice by choice: per (slots, excess) the
    most kept, kept where it beats every choice with less excess at its slot count and every
    choice with no more excess in 3 or more fewer slots."""
    kept_bits, width, _, _ = runs._run_fields(size)
    most: dict[tuple[int, int], int] = {}
    for at in range(bits.bit_length()):
        if bits >> at & 1:
            excess, within = divmod(at, width)
            slots, kept = within >> kept_bits, within & ((1 << kept_bits) - 1)
            most[slots, excess] = max(most.get((slots, excess), -1), kept)
    found = {}
    for (slots, excess), kept in sorted(most.items(), key=lambda item: (item[0][1], item[0][0])):
        if all(
            k < kept
            for (s, e), k in most.items()
            if (s == slots and e < excess) or (s <= slots - 3 and e <= excess)
        ):
            found[slots + (excess << runs.SHIFT)] = kept
    return found


def test_useful_choices_are_those_no_other_beats():
    """``runs.useful_bits`` (all fields at once) against its definition, in the same order, on
    the run search's sets and on random sets of choices within the slots and excess."""
    rnd = random.Random(36)
    for _ in range(400):
        size = rnd.choice([6, 8, 14, 15, 21, 22])
        valid = runs._run_fields(size)[2]
        length = rnd.randrange(5, 15)
        line = sum(rnd.choice([0, 1, 1, 2]) << (2 * p) for p in range(length))
        bits = runs._runs_bits(line, rnd.getrandbits(length), length, size) & valid
        for case in (bits, rnd.getrandbits(max(1, bits.bit_length())) & valid):
            got = runs.useful_bits(case, size)
            expected = useful_by_definition(case, size)
            assert list(got.items()) == list(expected.items()), (case, size)
