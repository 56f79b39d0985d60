"""Differential tests of the engine against brute-force references on the inputs a live table
produces: seen discards that take away the tiles a hand needs (runs, sets, pairs, okeys), and the
101 pairs opening under both ``okey_pair_with_okey`` values.

A few hundred hands by default; ``ISTAKA_THOROUGH=1`` runs thousands (docs/engine.md).
"""

import os
import random
from collections import Counter
from dataclasses import replace

from engine_reference import brute_distance, small_hand_rules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from okey_reference import brute_pairs

from okey import FULL_SET, Rules, Tile, advise, distance_to_win, okey_for, parse_tiles
from okey.distance import HandState
from okey.draws import improving_draws
from okey.okey101 import best_pairs_opening

CLASSIC = Rules.classic()
THOROUGH = os.environ.get("ISTAKA_THOROUGH") == "1"
EXAMPLES = 2000 if THOROUGH else 100
RANDOMS = st.integers(min_value=0, max_value=2**32).map(random.Random)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
MELD_SHAPES = [(3, 3, 4, 4), (3, 3, 3, 5), (3, 4, 7), (4, 5, 5), (3, 3, 8), (3, 11)]


def fits(tiles, indicator):
    """No tile more than twice, the indicator's tile at most once besides the indicator."""
    tally = Counter(tiles)
    return all(n <= 2 for n in tally.values()) and tally[indicator] <= 1


def group(rnd, size, wrap):
    if size <= 4 and rnd.random() < 0.5:
        number = rnd.randint(1, 13)
        return [Tile.of(c, number) for c in rnd.sample("RYBK", size)]
    colour = rnd.choice("RYBK")
    start = rnd.randint(1, (14 if wrap else 13) - size + 1)
    return [Tile.of(colour, (n - 1) % 13 + 1) for n in range(start, start + size)]


def near_win(rnd, rules, size=14, changes=1):
    """A win of ``size`` tiles (groups, or pairs when the rules allow them) with ``changes``
    tiles replaced by random ones: its distance is at most ``changes``."""
    while True:
        indicator = Tile(rnd.randrange(52))
        okey = okey_for(indicator)
        if rules.seven_pairs and size % 2 == 0 and rnd.random() < 0.35:
            faces = [Tile(rnd.randrange(52)) for _ in range(size // 2)]
            tiles = [t for f in faces for t in (f, f)]
        else:
            shape = rnd.choice([s for s in MELD_SHAPES if sum(s) == size] or [(size,)])
            tiles = [t for n in shape for t in group(rnd, n, rules.wrap_13_1)]
        tiles = [Tile.false_joker() if t == okey else t for t in tiles]
        for i in rnd.sample(range(size), rnd.choice([0, 0, 1])):
            tiles[i] = okey
        for i in rnd.sample(range(size), changes):
            tiles[i] = Tile(rnd.randrange(53))
        if fits([*tiles, indicator], indicator):
            rnd.shuffle(tiles)
            return tiles, indicator


def killing_seen(rnd, tiles, indicator):
    """Seen discards aimed at what the hand needs: run neighbours and set partners of its tiles,
    the copies of its tiles (the pairs' partners), the okeys, plus a few random tiles."""
    wanted = set()
    for tile in tiles:
        if tile.is_false_joker:
            continue
        for delta in (-2, -1, 1, 2):
            number = (tile.number - 1 + delta) % 13 + 1
            wanted.add(Tile.of(tile.colour, number))
        wanted.update(Tile.of(c, tile.number) for c in "RYBK")
    wanted.add(okey_for(indicator))
    candidates = sorted(wanted) * 2 + rnd.sample(list(FULL_SET), 10)
    rnd.shuffle(candidates)
    seen = []
    for tile in candidates[: rnd.choice([3, 8, 15, 25])]:
        if fits([*tiles, *seen, tile, indicator], indicator):
            seen.append(tile)
    if rnd.random() < 0.3:  # both okeys out of reach: no wild tile can be drawn
        okey = okey_for(indicator)
        while fits([*tiles, *seen, okey, indicator], indicator):
            seen.append(okey)
    return seen


@SETTINGS
@given(RANDOMS, st.booleans())
def test_distance_with_killing_seen_sets_agrees_with_brute_force_near_a_win(rnd, fifteen):
    """14-tile hands (15 before the discard), one or two tiles off a win, seen discards that kill
    the tiles they need: the engine agrees with trying every exchange of one tile."""
    tiles, indicator = near_win(rnd, CLASSIC, changes=rnd.choice([1, 2]))
    if fifteen:
        tiles.append(Tile(rnd.randrange(53)))
        if not fits([*tiles, indicator], indicator):
            tiles.pop()
    seen = killing_seen(rnd, tiles, indicator)
    fast = distance_to_win(tiles, indicator, CLASSIC, seen)
    slow = brute_distance(tiles, indicator, CLASSIC, tuple(seen), limit=1)
    assert fast == slow if slow is not None else fast > 1, (tiles, indicator, seen)


@settings(max_examples=max(10, EXAMPLES // 3), deadline=None)
@given(RANDOMS, st.sampled_from([6, 7, 8]), st.booleans())
def test_distance_with_killing_seen_sets_agrees_with_brute_force_on_small_hands(rnd, size, wrap):
    """Hands of 6-8 tiles two or three off a win (two groups, or pairs), killing seen sets:
    every exchange of up to two tiles."""
    rules = small_hand_rules(CLASSIC, size, wrap_13_1=wrap)
    tiles, indicator = near_win(rnd, rules, size, changes=rnd.choice([1, 2, 3]))
    seen = killing_seen(rnd, tiles, indicator)
    fast = distance_to_win(tiles, indicator, rules, seen)
    slow = brute_distance(tiles, indicator, rules, tuple(seen), limit=2)
    assert fast == slow if slow is not None else fast > 2, (tiles, indicator, seen)


@settings(max_examples=max(10, EXAMPLES // 5), deadline=None)
@given(RANDOMS)
def test_improving_draws_with_killing_seen_sets_match_solving_each_draw(rnd):
    tiles, indicator = near_win(rnd, CLASSIC, changes=rnd.choice([1, 2, 3]))
    seen = killing_seen(rnd, tiles, indicator)
    hand = HandState.of(tiles, indicator, seen)
    distance, faces = improving_draws(hand, CLASSIC)
    assert distance == hand.distance(CLASSIC)
    direct = {
        f
        for f in range(52)
        if hand.avail[f] and distance and hand.with_face(f).distance(CLASSIC) < distance
    }
    assert {f for f in faces if hand.avail[f]} == direct


@settings(max_examples=max(10, EXAMPLES // 10), deadline=None)
@given(RANDOMS, st.booleans())
def test_advise_options_match_solving_each_discard_and_draw(rnd, random_deal):
    """15-tile hands (one to three tiles off a win plus one, or dealt at random), killing seen
    sets: every discard's distance is what solving the hand less that tile (seen then) gives,
    and its improving tiles, with their unseen counts, are exactly the drawable tiles whose draw
    lowers it (solving that hand with each drawn), as advise reads them from the whole hand's
    layouts, raising faces and bounds instead; with or without an okey left, the discard's own
    face included."""
    if random_deal:
        pool = list(FULL_SET)
        rnd.shuffle(pool)
        indicator = next(t for t in pool if not t.is_false_joker)
        pool.remove(indicator)
        tiles = pool[:15]
    else:
        while True:
            tiles, indicator = near_win(rnd, CLASSIC, changes=rnd.choice([1, 2, 3]))
            tiles.append(Tile(rnd.randrange(53)))
            if fits([*tiles, indicator], indicator):
                break
    seen = killing_seen(rnd, tiles, indicator) if rnd.random() < 0.7 else []
    for option in advise(tiles, indicator, CLASSIC, seen).options:
        assert_option_is_solving_each_draw(tiles, indicator, seen, option)


@settings(max_examples=max(6, EXAMPLES // 15), deadline=None)
@given(RANDOMS, st.sampled_from([1, 2]))
def test_advise_options_on_one_or_two_colour_hands_match_solving_each_discard_and_draw(
    rnd, colours
):
    """As above on hands of one or two colours (``benchmarks/engine.py --adversarial``), where
    most discards keep one fewer than the whole hand and the whole hand's raising faces are
    taken for them without a search (``draws.Witnesses.lets_keep``'s lower bound)."""
    while True:
        indicator = Tile(rnd.randrange(52))
        chosen = rnd.sample(range(4), colours)
        pool = [Tile(c * 13 + n) for c in chosen for n in range(13)] * 2
        rnd.shuffle(pool)
        tiles = pool[:15]
        if fits([*tiles, indicator], indicator):
            break
    rest = [t for t in FULL_SET if t not in tiles and t != indicator]
    seen = rnd.sample(rest, rnd.choice([0, 10, 20]))
    if not fits([*tiles, *seen, indicator], indicator):
        seen = []
    for option in advise(tiles, indicator, CLASSIC, seen).options:
        assert_option_is_solving_each_draw(tiles, indicator, seen, option)


def test_a_discard_keeping_one_fewer_keeps_as_many_as_the_whole_hand_with_a_raising_face():
    """The lower bound ``lets_keep`` reads for a discard d that keeps one fewer than the whole
    hand T (K - 1, a copy of d left) and a face f that lets T keep K + 1 with sets S having no
    set at d's number: T less d plus f keeps K with S (solved with those sets)."""
    from okey.distance import kept_with_sets, optimal_set_choices
    from okey.draws import _shape_of, hand_layouts, meld_raising_faces

    rnd = random.Random(34)
    checked = 0
    for _ in range(30 if not THOROUGH else 300):
        colours = rnd.sample(range(4), rnd.choice([1, 2, 4]))
        pool = [Tile(c * 13 + n) for c in colours for n in range(13)] * 2
        rnd.shuffle(pool)
        tiles, indicator = pool[:15], Tile(rnd.randrange(52))
        if not fits([*tiles, indicator], indicator):
            continue
        okey = okey_for(indicator)
        whole = HandState.of(tiles, indicator, [])
        solved = optimal_set_choices(whole, CLASSIC)
        kept = solved[0]
        raising = meld_raising_faces(
            whole, CLASSIC, solved, None, hand_layouts(whole, CLASSIC, solved)
        )
        for discard in set(tiles):
            if discard == okey or discard.is_false_joker:
                continue
            d = discard.index
            state = whole.less(d)
            if not whole.avail[d] or optimal_set_choices(state, CLASSIC)[0] != kept - 1:
                continue
            for f, sets in raising.items():
                if f == d or _shape_of(sets)[13] >> (d % 13) & 1 or not state.avail[f]:
                    continue
                assert kept_with_sets(state.with_face(f), CLASSIC, sets, kept) >= kept, (
                    tiles,
                    indicator,
                    discard,
                    f,
                    sets,
                )
                checked += 1
    assert checked > 100


def assert_option_is_solving_each_draw(tiles, indicator, seen, option):
    """A discard's distance and improving tiles (with their unseen copies) are solving the hand
    less that tile (seen then) and that hand with each drawable tile drawn."""
    okey = okey_for(indicator)
    rest = list(tiles)
    rest.remove(option.discard)
    gone = [*seen, option.discard]
    hand = HandState.of(rest, indicator, gone)
    distance = hand.distance(CLASSIC)
    assert option.distance == distance, (tiles, indicator, seen, option.discard)
    unseen = Counter(FULL_SET) - Counter([*rest, indicator, *gone])
    direct = {}
    if distance:
        for face in range(52):
            if hand.avail[face] and hand.with_face(face).distance(CLASSIC) < distance:
                # (A false joker plays as the okey's face.)
                tile = Tile.false_joker() if face == okey.index else Tile(face)
                direct[tile] = unseen[tile]
        if unseen[okey]:
            direct[okey] = unseen[okey]  # an okey fills any missing tile
    assert dict(option.improving) == direct, (tiles, indicator, seen, option.discard)


def test_advise_lists_a_discards_other_copy_when_drawing_it_lowers_the_distance():
    """Throwing K3 leaves the other K3 unseen (the thrown copy is seen, the hand held it): drawing
    it back lowers the distance (2 to 1: the hand before the discard, which throws another tile),
    so it is listed, with its one unseen copy."""
    tiles = parse_tiles("K9 B9 K5 B10 R3 Y3 B11 Y12 Y9 K3 R5 Y11 Y10 B12 R4")
    indicator = Tile.parse("K10")
    k3 = Tile.parse("K3")
    option = next(o for o in advise(tiles, indicator, CLASSIC).options if o.discard == k3)
    assert option.distance == 2
    assert (k3, 1) in option.improving
    rest = list(tiles)
    rest.remove(k3)
    assert brute_distance([*rest, k3], indicator, CLASSIC, (k3,), limit=1) == 1
    assert_option_is_solving_each_draw(tiles, indicator, [], option)


def test_advise_lists_every_improving_tile_with_no_okey_left():
    """Both okeys (R4) seen, none held: a false joker (playing as R4) lowers the distance after
    throwing K3, B9 or B10.  advise once skipped it there, having found it no help to a discard
    keeping fewer faces (a rule that assumed a drawn copy can always stand in for a discard)."""
    tiles = parse_tiles("Y9 K5 B3 Y4 K4 K6 B4 K3 B5 B10 Y11 K7 B9 B2 Y12")
    indicator = Tile.parse("R3")
    seen = parse_tiles("B8 B1 B1 Y2 B9 B6 Y2 B10 R4 R4")
    options = {o.discard: o for o in advise(tiles, indicator, CLASSIC, seen).options}
    for name in ("K3", "B9", "B10"):
        option = options[Tile.parse(name)]
        assert option.distance == 2
        assert (Tile.false_joker(), 2) in option.improving, name
    rest = list(tiles)
    rest.remove(Tile.parse("K3"))
    gone = (*seen, Tile.parse("K3"))
    assert brute_distance(rest, indicator, CLASSIC, gone, limit=1) is None
    assert brute_distance([*rest, Tile.false_joker()], indicator, CLASSIC, gone, limit=1) == 1
    for option in options.values():
        assert_option_is_solving_each_draw(tiles, indicator, seen, option)


def test_waits_include_a_last_copy_that_a_set_of_a_layout_not_optimal_drew():
    """No okey left (both Y8 seen); K11's last copy wins (K10 K11 K12, with the set R11 Y11 B11
    kept), but the set R11 Y11 B11 draws K11 as its missing tile, so the layout with it keeps
    one face fewer than the optimal one and the draw raises it by two: the waits list it."""
    tiles = parse_tiles("K8 B4 Y11 R11 R8 K10 FJ B3 B8 K12 B11 B1 Y12 B2")
    indicator = Tile.parse("Y7")
    seen = parse_tiles(
        "R6 R8 B10 R9 B8 Y12 K1 Y9 K11 B6 Y10 B13 Y2 B10 K9 B1 K6 K8 Y8 R4 K7 Y11 B9 Y4 Y8"
    )
    advice = advise(tiles, indicator, CLASSIC, seen)
    assert advice.distance == 1
    k11 = Tile.parse("K11")
    assert (k11, 1) in advice.waits
    assert brute_distance([*tiles, k11], indicator, CLASSIC, tuple(seen), limit=0) == 0


def test_advise_lists_a_last_copy_that_raises_the_melds_past_the_pairs():
    """Throwing B1 leaves pairs one closer than melds (5 against 6), no okey left; Y8's last copy
    raises the melds by two (the set R8 B8 drew it from Y6 Y7 Y9), past the pairs."""
    tiles = parse_tiles("Y7 Y9 R3 Y6 B13 B8 K5 R3 R1 R12 B1 K5 Y13 R8 Y1")
    indicator = Tile.parse("R10")
    seen = parse_tiles("R5 Y12 R8 R4 B2 Y5 B6 Y7 K12 Y3 R6 B7 B8 B10 R12 R11 K9 K9 Y8 R11")
    b1 = Tile.parse("B1")
    option = next(o for o in advise(tiles, indicator, CLASSIC, seen).options if o.discard == b1)
    assert option.distance == 5
    assert (Tile.parse("Y8"), 1) in option.improving
    assert_option_is_solving_each_draw(tiles, indicator, seen, option)


@SETTINGS
@given(RANDOMS, st.booleans(), st.integers(min_value=2, max_value=12))
def test_pairs_opening_agrees_with_brute_force_under_both_okey_pair_rules(rnd, okey_pairs, size):
    rules = replace(Rules.okey101(), okey_pair_with_okey=okey_pairs)
    indicator = Tile(rnd.randrange(52))
    okey = okey_for(indicator)
    # Few kinds, so pairs, okeys and false jokers meet often.
    kinds = [okey, Tile.false_joker(), *rnd.sample([t for t in FULL_SET if t != okey], 4)]
    tiles = []
    while len(tiles) < size:
        tile = rnd.choice(kinds)
        if fits([*tiles, tile, indicator], indicator):
            tiles.append(tile)
        elif all(not fits([*tiles, k, indicator], indicator) for k in kinds):
            break
    opening = best_pairs_opening(tiles, indicator, rules)
    assert opening.count == brute_pairs(tiles, okey, okey_pairs), (tiles, indicator)
    laid = [t for pair in opening.pairs for t in pair]
    assert Counter(laid) + Counter(opening.remaining) == Counter(tiles)
