"""Property tests of the engine (hypothesis): built wins win, order never matters, distance 0
exactly when winning, and the fast distance agrees with a brute-force reference on small hands."""

import os
import random
import re
from collections import Counter

import pytest
from engine_reference import brute_distance, small_hand_rules
from hypothesis import given, settings
from hypothesis import strategies as st

from okey import (
    FULL_SET,
    Rules,
    Tile,
    check_win,
    distance_to_win,
    group_kinds,
    okey_for,
    parse_tiles,
)
from okey.distance import HandState
from okey.draws import improving_draws
from okey.hand import check_playing_hand

CLASSIC = Rules.classic()
# Seeded generators: hypothesis picks the seed (a whole shuffled deck per example is too much data
# for its shrinker).
RANDOMS = st.integers(min_value=0, max_value=2**32).map(random.Random)
# The brute-force comparisons are slow; raise this for a longer run (docs/engine.md).
DIFF_EXAMPLES = int(os.environ.get("ISTAKA_DIFF_EXAMPLES", "40"))
SIZES = [(3, 3, 4, 4), (3, 3, 3, 5), (3, 4, 7), (4, 5, 5), (3, 3, 8), (3, 11), (4, 4, 6), (14,)]


def random_group(rnd, size, rules):
    """A random valid run (any size 3..13) or set (size 3..4) as tile faces."""
    if size <= 4 and rnd.random() < 0.4:
        number = rnd.randint(1, 13)
        return [Tile.of(c, number) for c in rnd.sample("RYBK", size)]
    colour = rnd.choice("RYBK")
    top = 14 if rules.wrap_13_1 else 13
    start = rnd.randint(1, top - size + 1)
    return [Tile.of(colour, (n - 1) % 13 + 1) for n in range(start, start + size)]


def possible(tiles, indicator):
    tally = Counter(tiles)
    return all(n <= 2 for n in tally.values()) and tally[indicator] <= 1


def winning_hand(rnd, rules=CLASSIC):
    """14 tiles laid out as random valid groups; some tiles become okeys or false jokers."""
    while True:
        indicator = Tile(rnd.randrange(52))
        okey = okey_for(indicator)
        tiles = [t for size in rnd.choice(SIZES) for t in random_group(rnd, size, rules)]
        # The okey's face can only be played by a false joker (the real one is wild).
        tiles = [Tile.false_joker() if t == okey else t for t in tiles]
        for i in rnd.sample(range(14), rnd.choice([0, 0, 1, 2])):
            tiles[i] = okey
        if possible(tiles, indicator):
            rnd.shuffle(tiles)
            return tiles, indicator


def random_hand(rnd, size=14):
    pool = list(FULL_SET)
    rnd.shuffle(pool)
    indicator = next(t for t in pool if not t.is_false_joker)
    pool.remove(indicator)
    return pool[:size], indicator


@settings(max_examples=150)
@given(RANDOMS)
def test_a_hand_built_from_valid_groups_wins(rnd):
    tiles, indicator = winning_hand(rnd)
    result = check_win(tiles, indicator, CLASSIC)
    assert result.winning
    assert sorted(t for g in result.groups for t in g.tiles) == sorted(tiles)
    for g in result.groups:
        assert g.kind in group_kinds(g.tiles, indicator, CLASSIC)
    assert distance_to_win(tiles, indicator, CLASSIC) == 0


@settings(max_examples=60)
@given(RANDOMS)
def test_tile_order_never_matters(rnd):
    tiles, indicator = random_hand(rnd) if rnd.random() < 0.5 else winning_hand(rnd)
    shuffled = list(tiles)
    rnd.shuffle(shuffled)
    assert (
        check_win(tiles, indicator, CLASSIC).winning
        == check_win(shuffled, indicator, CLASSIC).winning
    )
    assert distance_to_win(tiles, indicator, CLASSIC) == distance_to_win(
        shuffled, indicator, CLASSIC
    )


@settings(max_examples=80)
@given(RANDOMS, st.booleans())
def test_distance_is_zero_exactly_when_winning(rnd, near):
    if near:
        # A win with one tile swapped for a random one: often still 0 or 1 away.
        tiles, indicator = winning_hand(rnd)
        tiles[rnd.randrange(14)] = Tile(rnd.randrange(53))
        if not possible(tiles, indicator):
            return
    else:
        tiles, indicator = random_hand(rnd)
    winning = check_win(tiles, indicator, CLASSIC).winning
    assert (distance_to_win(tiles, indicator, CLASSIC) == 0) == winning


def narrow_hand(rnd, size):
    """A small hand from two colours and a window of numbers, so groups are likely."""
    colours = rnd.sample("RYBK", 2)
    low = rnd.randint(1, 9)
    numbers = list(range(low, low + 5)) + ([1, 12, 13] if rnd.random() < 0.3 else [])
    pool = [Tile.of(c, n) for c in colours for n in numbers] * 2 + [Tile.false_joker()] * 2
    indicator = Tile.of(rnd.choice("RYBK"), rnd.choice(numbers))
    pool.append(okey_for(indicator))
    rnd.shuffle(pool)
    hand = []
    for tile in pool:
        if len(hand) == size:
            break
        if possible([*hand, tile], indicator):
            hand.append(tile)
    seen = [t for t in pool if t not in hand and rnd.random() < 0.2]
    if not possible([*hand, *seen, indicator], indicator) or len(hand) < size:
        seen = []
    return hand, indicator, seen


@settings(max_examples=DIFF_EXAMPLES)
@given(RANDOMS, st.sampled_from([5, 6, 7]), st.booleans())
def test_distance_agrees_with_brute_force_on_small_hands(rnd, size, wrap):
    rules = small_hand_rules(CLASSIC, size, wrap_13_1=wrap)
    tiles, indicator, seen = narrow_hand(rnd, size)
    if len(tiles) < size:
        return
    fast = distance_to_win(tiles, indicator, rules, seen)
    slow = brute_distance(tiles, indicator, rules, tuple(seen), limit=2)
    assert fast == slow if slow is not None else fast > 2


@settings(max_examples=max(10, DIFF_EXAMPLES // 2))
@given(RANDOMS)
def test_distance_agrees_with_brute_force_near_a_win(rnd):
    tiles, indicator = winning_hand(rnd)
    for i in rnd.sample(range(14), 2):
        tiles[i] = Tile(rnd.randrange(53))
    if not possible(tiles, indicator):
        return
    fast = distance_to_win(tiles, indicator, CLASSIC)
    slow = brute_distance(tiles, indicator, CLASSIC, limit=1)
    assert fast == slow if slow is not None else fast > 1


@settings(max_examples=12)
@given(RANDOMS, st.sampled_from([0, 10, 30]))
def test_improving_draws_match_solving_each_draw(rnd, seen_count):
    tiles, indicator = random_hand(rnd, 14)
    pool = [t for t in FULL_SET if t not in tiles and t != indicator]
    seen = [t for t in rnd.sample(pool, seen_count) if possible([*tiles, t, indicator], indicator)]
    if not possible([*tiles, *seen, indicator], indicator):
        seen = []
    hand = HandState.of(tiles, indicator, seen)
    distance, faces = improving_draws(hand, CLASSIC)
    assert distance == hand.distance(CLASSIC)
    direct = {
        f
        for f in range(52)
        if hand.avail[f] and distance and hand.with_face(f).distance(CLASSIC) < distance
    }
    assert {f for f in faces if hand.avail[f]} == direct


@settings(max_examples=80)
@given(RANDOMS, st.sampled_from([0, 0, 5, 40]), st.sampled_from([14, 15]))
def test_the_quick_hand_check_builds_the_same_state(rnd, seen_count, size):
    """``HandState.checked`` counts a usual hand itself instead of calling check_playing_hand."""
    tiles, indicator = random_hand(rnd, size)
    pool = [t for t in FULL_SET if t not in tiles and t != indicator]
    seen = [t for t in rnd.sample(pool, seen_count) if possible([*tiles, t, indicator], indicator)]
    if not possible([*tiles, *seen, indicator], indicator):
        seen = []
    quick = HandState.checked(tiles, indicator, CLASSIC, seen)
    plain = HandState.of(tiles, indicator, seen)
    assert (quick.faces, quick.okeys, quick.avail, quick.wild_avail) == (
        plain.faces,
        plain.okeys,
        plain.avail,
        plain.wild_avail,
    )
    assert quick.line_keys() == plain.line_keys()


@pytest.mark.parametrize(
    ("hand", "indicator", "seen"),
    [
        ("R1 R1 R1 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10", "K7", ""),  # a third copy
        ("K7 K7 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10 R1", "K7", ""),  # the indicator twice
        ("FJ FJ FJ Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10", "K7", ""),  # three false jokers
        ("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10", "K7", "R1 R1"),  # seen too often
        ("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10", "FJ", ""),  # a false joker indicator
        ("R1 R2 R3", "K7", ""),  # too few tiles
        ("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10 B11 B12", "K7", ""),  # too many
    ],
)
def test_the_quick_hand_check_raises_the_same_errors(hand, indicator, seen):
    tiles, seen_tiles = parse_tiles(hand), parse_tiles(seen)
    with pytest.raises(ValueError) as expected:
        check_playing_hand(tiles, Tile.parse(indicator), CLASSIC, seen_tiles)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        HandState.checked(tiles, Tile.parse(indicator), CLASSIC, seen_tiles)


def test_precomputed_line_profiles_are_the_run_search():
    """Every stored profile of ``okey.line_table`` is what the run search finds for its line
    (a sample; every line with ``ISTAKA_THOROUGH=1``), and the table holds the lines that
    ``table_keys`` names."""
    from okey import line_table
    from okey.runs import _PLAIN_RULES, _profile_of_key, line_profile

    assert line_table.TAIL >> 39 == _PLAIN_RULES  # the rules line_profile reads the table for
    stored, index, profiles = line_table.load()
    keys = line_table.table_keys()
    assert list(stored) == [key | line_table.TAIL for key in keys]
    profile_of = dict(zip(keys, index, strict=True))
    if os.environ.get("ISTAKA_THOROUGH") != "1":
        keys = random.Random(23).sample(keys, 3000)
    for key in keys:
        found = profiles[profile_of[key]]
        assert found == _profile_of_key(key, line_table.WRAP, line_table.SIZE), key
    # The lines a hand asks about, in the table or not (a colour held eight times).
    for key in [*keys[:50], *keys[-50:], sum(2 << (3 * p) for p in range(4))]:
        for wrap, size in ((True, 14), (False, 14), (True, 21)):
            assert line_profile(key, wrap, size) == _profile_of_key(key, wrap, size), key


@given(
    st.lists(st.integers(0, 2), min_size=13, max_size=13),
    st.lists(st.booleans(), min_size=13, max_size=13),
    st.booleans(),
    st.sampled_from([14, 15, 21, 22]),
)
@settings(max_examples=300 if os.environ.get("ISTAKA_THOROUGH") != "1" else 5000, deadline=None)
def test_a_lines_bound_is_its_plain_lines(counts, left, wrap, size):
    """``runs.line_bound`` reads a line's bound terms from its plain key (a copy left wherever
    fewer than two are held: ``runs.plain_key``); the run search must find the same bound for
    the line as it is, whatever is left to draw."""
    from okey.runs import _profile_of_key, line_bound, plain_key

    fields = [c | (4 if c < 2 and a else 0) for c, a in zip(counts, left, strict=True)]
    key = sum(f << (3 * p) for p, f in enumerate(fields))
    bound = _profile_of_key(key, wrap, size).packed_bound
    assert _profile_of_key(plain_key(key), wrap, size).packed_bound == bound
    assert line_bound(key, wrap, size) == bound
