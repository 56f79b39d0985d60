"""``best_opening``'s short way for a hand given as tile objects answers as the long way does.

A list or tuple of ``Tile`` with a ``Tile`` indicator and rules skips reading the hand and
``check_possible`` where the hand is plainly possible (``okey.okey101._plain_hand``); any other
hand goes the long way, which reads it and says what is wrong.  Both must give the same
opening, and a hand the long way rejects must be rejected with the same error.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from okey import FULL_SET, Rules, Tile
from okey.errors import OkeyError
from okey.hand import okey_for
from okey.okey101 import _plain_hand, _search, best_opening

R101 = Rules.okey101()


def _as_tuple(opening) -> tuple:
    return (
        opening.points,
        opening.threshold,
        [(m.kind, [str(t) for t in m.tiles], [str(t) for t in m.plays_as]) for m in opening.melds],
        [str(t) for t in opening.remaining],
    )


def _error(call) -> tuple[type, str] | None:
    try:
        call()
    except OkeyError as exc:
        return type(exc), str(exc)
    return None


def test_tile_lists_open_as_their_text() -> None:
    rng = random.Random(23)
    for case in range(300):
        pool = list(FULL_SET)
        rng.shuffle(pool)
        indicator = next(t for t in pool if not t.is_false_joker)
        pool.remove(indicator)
        okey = okey_for(indicator)
        hand = pool[: rng.choice((14, 21, 22))]
        if case % 3 == 0:  # an okey or two
            rest = [t for t in hand if t != okey]
            hand = rest[: len(hand) - case % 2 - 1] + [okey] * (case % 2 + 1)
        rules = R101 if case % 4 else replace(R101, max_run_length=5)
        indices = _plain_hand(hand, indicator, rules)
        assert indices is not None
        assert _search(indicator, rules).best_of_possible(indices, indicator.index) is not None
        text = " ".join(str(t) for t in hand)
        expected = _as_tuple(best_opening(text, str(indicator), rules))
        assert _as_tuple(best_opening(hand, indicator, rules)) == expected
        assert _as_tuple(best_opening(tuple(hand), indicator, rules)) == expected
        earlier = [rng.randrange(90, 140)]
        rising = replace(rules, rising_threshold=True)
        assert _as_tuple(
            best_opening(hand, indicator, rising, earlier_openings=earlier)
        ) == _as_tuple(best_opening(text, str(indicator), rising, earlier_openings=earlier))


def test_impossible_tile_lists_fail_as_their_text() -> None:
    r5, fj = Tile.parse("R5"), Tile.parse("FJ")
    k9 = Tile.parse("K9")
    hands = [
        ([k9, k9, k9, r5], Tile.parse("B2")),  # three of a kind
        ([fj, fj, fj, k9], Tile.parse("B2")),  # three false jokers
        ([r5, r5, k9], Tile.parse("R5")),  # the indicator's other copy is on the table
        ([k9, r5], fj),  # a false joker as the indicator
        ([k9] * 2 + [Tile.parse(f"R{n}") for n in range(1, 14)] * 2, Tile.parse("B2")),  # 28
    ]
    for hand, indicator in hands:
        indices = _plain_hand(hand, indicator, R101)
        assert (
            indices is None
            or _search(indicator, R101).best_of_possible(indices, indicator.index) is None
        )
        text = " ".join(str(t) for t in hand)
        expected = _error(lambda t=text, i=indicator: best_opening(t, str(i), R101))
        assert expected is not None
        assert _error(lambda h=hand, i=indicator: best_opening(h, i, R101)) == expected


@pytest.mark.parametrize(
    ("make", "points"),
    [
        (lambda: ["R1", "R2", "R3"], 6),  # strings
        (lambda: [Tile.parse("R1"), "R2", Tile.parse("R3")], 6),  # mixed
        (lambda: (t for t in [Tile.parse("R1"), Tile.parse("R2"), Tile.parse("R3")]), 6),
        (lambda: "R1 R2 R3", 6),
        (lambda: [], 0),
    ],
)
def test_other_hands_go_the_long_way(make, points: int) -> None:
    assert _plain_hand(make(), Tile.parse("B2"), R101) is None
    assert best_opening(make(), Tile.parse("B2"), R101).points == points
    assert best_opening(make(), "B2", R101).points == points


def test_melds_read_from_codes_are_those_of_their_specs() -> None:
    """The opening search codes its choices as ints (``okey.melding._spec_of``); the melds
    rebuilt from a code directly are those of the spec it stands for, under every okey."""
    from itertools import combinations

    from okey.melding import MeldSearch, _spec_of

    codes = []
    for n in range(1, 14):
        for mask in range(1, 16):
            for jk in range(3):
                if 3 <= mask.bit_count() + jk <= 4:
                    codes.append(1 | n << 2 | mask << 6 | jk << 10)
    for colour in range(4):
        for a in range(1, 12):
            for lowest in range(a, min(a + 2, 13) + 1):
                for b in range(max(lowest, a + 2), 14):
                    width = b - lowest
                    for k in range(3 - (lowest - a)):
                        for slots in combinations(range(width), k):
                            okeys = sum(1 << i for i in slots)
                            codes.append(
                                2 | colour << 2 | a << 4 | b << 8 | lowest << 12 | okeys << 16
                            )
    assert len(codes) > 2000
    for indicator in ("R5", "K13", "B1", "Y12"):
        search = MeldSearch(Tile.parse(indicator), wrap=False)
        for code in codes:
            assert search._meld_of_code(code) == search._new_meld(_spec_of(code)), code


@pytest.mark.parametrize(("max_run", "wrap"), [(13, False), (5, False), (3, False), (13, True)])
def test_live_parts_are_the_parts_of_the_live_counts(max_run: int, wrap: bool) -> None:
    """``MeldSearch._live_parts`` (a hand without okeys) reads the presence bits once for both
    ``live`` and ``parts``: the same parts, on random count vectors of 0 to 40 tiles."""
    from okey.melding import MeldSearch

    rng = random.Random(max_run * 2 + wrap)
    search = MeldSearch(Tile.parse("R5"), wrap=wrap, max_run_length=max_run)
    for _ in range(3000):
        x = 0
        for _ in range(rng.randint(0, 40)):
            colour, n0 = divmod(rng.randrange(52), 13)
            shift = 8 * n0 + 2 * colour
            if (x >> shift) & 3 < 2:
                x += 1 << shift
        assert search._live_parts(x) == search.parts(search.live(x, 0)), hex(x)


def test_best_of_possible_accepts_what_check_possible_accepts() -> None:
    """``MeldSearch.best_of_possible`` answers a hand exactly where ``check_possible`` accepts
    it (two of each kind at most, counting the indicator), on hands drawn with replacement from
    few kinds (three and four alike, false jokers and okeys among them)."""
    from okey.errors import ImpossibleHandError
    from okey.hand import check_possible
    from okey.tiles import ALL_KINDS, FALSE_JOKER_INDEX

    rng = random.Random(31)
    accepted = rejected = 0
    for _ in range(4000):
        indicator = ALL_KINDS[rng.randrange(FALSE_JOKER_INDEX)]
        okey = okey_for(indicator)
        kinds = rng.sample(ALL_KINDS[:FALSE_JOKER_INDEX], rng.randint(1, 12))
        kinds += [ALL_KINDS[FALSE_JOKER_INDEX], okey, indicator]
        hand = [rng.choice(kinds) for _ in range(rng.randint(1, 22))]
        try:
            check_possible(hand, indicator, R101)
            possible = True
        except ImpossibleHandError:
            possible = False
        indices = _plain_hand(hand, indicator, R101)
        assert indices is not None
        found = _search(indicator, R101).best_of_possible(indices, indicator.index)
        assert (found is not None) == possible, ([str(t) for t in hand], str(indicator))
        if possible:
            accepted += 1
            text = " ".join(str(t) for t in hand)
            assert found[0] == best_opening(text, str(indicator), R101).points
        else:
            rejected += 1
    assert accepted > 500 and rejected > 500
