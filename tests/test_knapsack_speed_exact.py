"""The knapsack's and the fixed sets' shortcuts give the answers of the plain computation.

- ``layout._knapsack_of``: a knapsack table cached by its parts' serials (``Component.serial``),
  in any order, is the table of those parts added up afresh;
- ``sets.take_set_keys``: the copies left at a set's number read from the hand's columns (and
  ``set_component`` from a row per held colours) take the same faces and draw the same tiles as
  the sets taken one by one from the hand's faces and copies left;
- ``distance.kept_with_sets``: the faces the sets hold checked against the hand's columns in
  one step (``_needs``) reject the same choices as a count per face.

A few hundred hands by default; ``ISTAKA_THOROUGH=1`` runs thousands (docs/engine.md).
"""

import os
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from okey import FULL_SET, Rules
from okey.distance import HandState, kept_with_sets
from okey.layout import (
    _layout_masks,
    kept_of_table,
    layout_kept,
    parts_table,
    totals_of,
)
from okey.runs import line_key, line_profile
from okey.sets import set_component, take_set_keys

THOROUGH = os.environ.get("ISTAKA_THOROUGH") == "1"
CLASSIC = Rules.classic()
SETTINGS = settings(max_examples=2000 if THOROUGH else 150, deadline=None)


def hand_of(seed: int, size: int, seen_count: int) -> HandState:
    """A shuffled full set's first ``size`` tiles (the next tile that is no false joker the
    indicator, the ``seen_count`` after it seen), one tile less or one face drawn by seed."""
    rnd = random.Random(seed)
    pool = list(FULL_SET)
    rnd.shuffle(pool)
    indicator = next(t for t in pool[size:] if not t.is_false_joker)
    pool.remove(indicator)
    hand = HandState.checked(pool[:size], indicator, CLASSIC, pool[size : size + seen_count])
    held = [face for face in range(52) if hand.faces[face]]
    left = [face for face in range(52) if hand.avail[face]]
    if rnd.random() < 0.3 and held:
        hand = hand.less(rnd.choice(held))
    elif rnd.random() < 0.5 and left:
        hand = hand.with_face(rnd.choice(left))
    return hand


def random_sets(rnd: random.Random, hand: HandState) -> tuple:
    """One to four sets, mostly at numbers the hand holds two or more colours of, now and then
    one holding a colour twice or a face the hand lacks (two sets at one number at times)."""
    sets = []
    numbers = [n for n in range(13) if sum(hand.faces[c * 13 + n] > 0 for c in range(4)) > 1]
    for _ in range(rnd.choice([1, 1, 2, 2, 3, 4])):
        number = rnd.choice(numbers) if numbers and rnd.random() < 0.9 else rnd.randrange(13)
        held = [c for c in range(4) if hand.faces[c * 13 + number]]
        if len(held) < 2 or rnd.random() < 0.1:
            held = rnd.sample(range(4), rnd.randint(1, 4))
        colours = sorted(rnd.sample(held, rnd.randint(min(2, len(held)), len(held))))
        if rnd.random() < 0.05:
            colours.append(colours[0])  # a colour twice
        sets.append((tuple(colours), number))
    if rnd.random() < 0.2:
        sets.append(sets[0])  # the same set twice: each face held twice, or lacking
    return tuple(sets)


def plain_take(hand: HandState, sets: tuple) -> tuple[list, list[int], dict[int, int]]:
    """``take_set_keys`` one set at a time, from the hand's faces and copies left."""
    keys = [line_key(hand.faces, hand.avail, lo) for lo in (0, 13, 26, 39)]
    avail = list(hand.avail)
    changed = {}
    items = []
    for colours, number in sets:
        for c in colours:
            keys[c] -= 1 << (3 * number)
        here = tuple(avail[c * 13 + number] for c in range(4))
        component, drawn = set_component(colours, here)
        for c in drawn:
            avail[c * 13 + number] -= 1
            changed[c * 13 + number] = avail[c * 13 + number]
            if avail[c * 13 + number] <= 0:
                keys[c] -= 4 << (3 * number)
        items.append(component)
    return items, keys, changed


def plain_kept(hand: HandState, sets: tuple, rnd: random.Random) -> int:
    """``kept_with_sets`` from a count per face, its knapsack added up afresh (parts in a
    random order)."""
    need = Counter()
    for colours, number in sets:
        if len(set(colours)) != len(colours):
            return -1
        for c in colours:
            need[c * 13 + number] += 1
    if any(n > hand.faces[face] for face, n in need.items()):
        return -1
    items, keys, _ = plain_take(hand, sets)
    parts = items + [line_profile(key, True, 14) for key in keys]
    rnd.shuffle(parts)
    budget = hand.okeys + hand.wild_avail
    return kept_of_table(parts_table(parts, 14, _layout_masks(14, budget)[0]), 14, budget)


@SETTINGS
@given(st.integers(0, 2**32), st.sampled_from([0, 0, 8, 30]), st.sampled_from([14, 15]))
def test_fixed_sets_take_and_keep_what_they_take_one_by_one(seed, seen_count, size):
    hand = hand_of(seed, size, seen_count)
    rnd = random.Random(seed)
    for _ in range(20):
        sets = random_sets(rnd, hand)
        assert kept_with_sets(hand, CLASSIC, sets) == plain_kept(hand, sets, rnd), sets
        if all(len(set(colours)) == len(colours) for colours, _ in sets):
            assert take_set_keys(hand, sets) == plain_take(hand, sets), sets


@SETTINGS
@given(st.integers(0, 2**32), st.sampled_from([0, 0, 8, 30]))
def test_a_cached_knapsack_is_its_parts_added_up_in_any_order(seed, seen_count):
    hand = hand_of(seed, 15, seen_count)
    rnd = random.Random(seed)
    budget = hand.okeys + hand.wild_avail
    valid = _layout_masks(14, budget)[0]
    for _ in range(10):
        items, keys, _ = plain_take(hand, random_sets(rnd, hand))
        parts = items + [line_profile(key, True, 14) for key in keys]
        parts = parts + parts[: rnd.randint(0, 2)]  # a part twice at times
        table = parts_table(parts, 14, valid)
        totals = totals_of(parts, 14, budget)
        rnd.shuffle(parts)
        assert totals_of(parts, 14, budget) is totals
        assert totals[0] == table == parts_table(parts, 14, valid)
        assert layout_kept(parts, 14, budget) == kept_of_table(table, 14, budget)
