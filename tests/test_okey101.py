"""101 Okey: exact openings, pairs, leftovers, lay-offs, discard advice (RULES.md 6)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from okey_reference import brute_best, brute_best_using, meld_values

from istaka.cli import main
from okey import FULL_SET, Rules, Tile, parse_tiles
from okey.errors import ImpossibleHandError, OkeyError
from okey.groups import group_kinds
from okey.hand import okey_for
from okey.melding import MeldSearch, best_melds
from okey.okey101 import (
    advise_discard,
    best_opening,
    best_pairs_opening,
    could_lay_off,
    describe_hand,
    format_hand_report,
    hand_value,
    lay_offs,
    min_leftover,
    opening_threshold,
    read_meld,
)

R101 = Rules.okey101()


def strs(items) -> list[str]:
    return [str(x) for x in items]


# --- best opening ---------------------------------------------------------------------------------
def test_opening_sums_runs_and_sets_and_reaches_101():
    hand = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6"
    opening = best_opening(hand, "B2", R101)
    assert opening.points == 121
    assert opening.opens
    assert sum(m.value for m in opening.melds) == 121
    assert sorted(opening.remaining) == sorted(parse_tiles("B5 B7 K2 K4 R1 Y8 B9 K6"))
    data = opening.to_dict()
    assert (data["points"], data["opens"], data["threshold"]) == (121, True, 101)
    assert data["melds"][1] == {
        "kind": "set",
        "tiles": ["R13", "Y13", "B13", "K13"],
        "plays_as": ["R13", "Y13", "B13", "K13"],
        "value": 52,
    }
    search = best_melds(parse_tiles(hand), Tile.parse("B2"), wrap=False).to_dict()
    assert search["value"] == 121
    assert search["remaining"] == data["remaining"]


def test_okey_is_worth_the_tile_it_stands_for_chosen_to_maximise():
    # Indicator Y4 -> okey Y5.  With R12 R13 the okey is best as R11 (a run can't pass 13).
    opening = best_opening("R12 R13 Y5", "Y4", R101)
    assert opening.points == 36
    assert strs(opening.melds) == ["Y5=R11 R12 R13"]


def test_okey_prefers_a_set_slot_when_that_is_worth_more():
    # K13 Y13 + okey: a set of 13s (39) beats any run.
    assert best_opening("K13 Y13 Y5", "Y4", R101).points == 39


def test_false_joker_plays_as_the_okey_face_not_as_a_wild():
    # Indicator R4 -> okey R5; FJ is a plain R5 (one R4 may be held: the other is the indicator).
    assert best_opening("R3 R4 FJ", "R4", R101).points == 12
    assert best_opening("R3 K9 FJ", "R4", R101).points == 0


def test_false_joker_completes_a_run_as_the_okey_face():
    opening = best_opening("R6 R7 FJ", "R4", R101)
    assert opening.points == 18
    assert strs(opening.melds) == ["FJ R6 R7"]
    assert best_opening("R8 R7 FJ", "R4", R101).points == 0  # FJ is R5: gap


def test_no_13_to_1_wrap_in_101_but_classic_allows_12_13_1():
    assert best_opening("K12 K13 K1", "R1", R101).points == 0
    classic = replace(R101, wrap_13_1=True)
    assert best_opening("K12 K13 K1", "R1", classic).points == 26


def test_set_needs_distinct_colours():
    assert best_opening("K7 K7 Y7", "R1", R101).points == 0
    assert best_opening("K7 R7 Y7 B7", "R1", R101).points == 28


def test_two_okeys_in_one_meld():
    # Indicator B8 -> okey B9; K13 + two okeys: best is a set of 13s (39).
    assert best_opening("K13 B9 B9", "B8", R101).points == 39
    # K1 + two okeys: run K1 K2 K3 (6) or set of 1s (3): 6.
    assert best_opening("K1 B9 B9", "B8", R101).points == 6


def test_opening_rejects_an_impossible_hand():
    with pytest.raises(ImpossibleHandError, match="R4"):
        best_opening("R4 R4 R5", "R4", R101)
    too_many = " ".join(f"{c}{n}" for c in "RY" for n in range(1, 13))  # 24 tiles
    with pytest.raises(ImpossibleHandError, match="24 tiles"):
        best_opening(too_many, "B1", R101)


def test_101_rack_holds_21_tiles_and_the_dealer_22():
    assert (R101.hand_size, R101.max_rack_tiles) == (21, 22)
    deck = [f"{c}{n}" for c in "RYBK" for n in range(1, 13)]
    assert best_opening(" ".join(deck[:22]), "K13", R101).points > 0
    with pytest.raises(ImpossibleHandError, match="23 tiles"):
        best_opening(" ".join(deck[:23]), "K13", R101)


def test_threshold_and_rising_threshold():
    hand = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3"  # 121
    assert best_opening(hand, "B2", R101).opens
    rising = replace(R101, rising_threshold=True)
    assert best_opening(hand, "B2", rising, earlier_openings=[110]).opens
    late = best_opening(hand, "B2", rising, earlier_openings=[121])
    assert late.threshold == 122
    assert not late.opens
    assert opening_threshold(R101, [150]) == 101
    assert opening_threshold(replace(R101, opening_threshold=81)) == 81


# --- exactness against a brute force --------------------------------------------------------------
_POOL_KINDS = [Tile.of(c, n) for c in "RYBK" for n in (1, 2, 3, 4, 5, 11, 12, 13)]
_INDICATORS = [Tile.of(c, n) for c in "RYBK" for n in (1, 2, 3, 4, 10, 11, 12, 13)]


@st.composite
def small_hands(draw):
    indicator = draw(st.sampled_from(_INDICATORS))
    pool = [t for t in [*_POOL_KINDS, Tile.false_joker()] for _ in range(2)]
    if indicator in pool:
        pool.remove(indicator)  # the other copy lies face up
    # Okeys are rare in a uniform draw; put 0-2 of them in on purpose.
    okey = okey_for(indicator)
    okeys = draw(st.integers(0, 2))
    for _ in range(okeys):
        pool.remove(okey)
    picks = draw(st.lists(st.sampled_from(range(len(pool))), max_size=8 - okeys, unique=True))
    return [pool[i] for i in picks] + [okey] * okeys, indicator


@given(small_hands(), st.booleans(), st.sampled_from([None, 101, 7]))
def test_meld_search_matches_brute_force(hand_indicator, wrap, okey_weight):
    hand, indicator = hand_indicator
    result = best_melds(hand, indicator, wrap=wrap, okey_weight=okey_weight)
    assert result.value == brute_best(hand, indicator, wrap, okey_weight)
    okey = okey_for(indicator)
    laid = [t for m in result.melds for t in m.tiles]
    assert sorted(laid + list(result.remaining)) == sorted(hand)
    for meld in result.melds:
        assert meld_values(meld.tiles, okey, wrap, okey_weight) >= 0
        # what the tiles play as is itself a run or set of plain tiles (no wild passed in)
        assert meld_values(meld.plays_as, Tile.false_joker(), wrap, None) >= 0


def test_both_copies_of_a_tile_can_go_to_different_melds():
    # R7 Y7 B7 K7 (28) and R7 R8 R9 R10 (34)
    assert best_opening("R7 R7 R8 R9 R10 Y7 B7 K7", "K9", R101).points == 62


@given(st.randoms(use_true_random=False))
def test_fast_opening_search_matches_the_exhaustive_search_on_full_deals(rng):
    deck = list(FULL_SET)
    rng.shuffle(deck)
    indicator = next(t for t in deck if not t.is_false_joker)
    deck.remove(indicator)
    hand = deck[:22]
    fast = MeldSearch(indicator, wrap=False)
    slow = MeldSearch(indicator, wrap=False, exhaustive=True)
    assert fast.value(*fast.pack(hand)[:2]) == slow.value(*slow.pack(hand)[:2])
    opening = best_opening(hand, indicator, R101)
    assert opening.points == sum(m.value for m in opening.melds)
    # Every meld laid is a group the engine's own group reader accepts as that kind.
    for meld in opening.melds:
        assert meld.kind in group_kinds(meld.tiles, indicator, R101), str(meld)


@given(small_hands())
def test_best_opening_value_is_the_sum_of_its_melds(hand_indicator):
    hand, indicator = hand_indicator
    opening = best_opening(hand, indicator, R101)
    assert opening.points == sum(m.value for m in opening.melds)
    assert opening.points == brute_best(hand, indicator, False)


def test_set_heavy_grid_hand():
    # Every tile fits a set and a run; okeys K7 extend two runs to 6 and 7 (60 + 13).
    hand = " ".join(f"{c}{n}" for c in "RYBK" for n in range(1, 6)) + " K7 K7"
    opening = best_opening(hand, "K6", R101)
    assert opening.points == 73
    assert opening.remaining == ()
    slow = MeldSearch(Tile.parse("K6"), wrap=False, exhaustive=True)
    assert slow.value(*slow.pack(parse_tiles(hand))[:2]) == 73
    assert min_leftover(hand, "K6", R101).penalty == 0


# --- opening with a taken discard ---------------------------------------------------------------
def test_taken_discard_must_be_in_the_opening():
    # Best is the set of 9s (27); opening with the taken R7 forces R7 R8 R9 (24).
    assert best_opening("R9 Y9 B9 R7 R8", "B1", R101).points == 27
    forced = best_opening("R9 Y9 B9 R7 R8", "B1", R101, must_use="R7")
    assert forced.points == 24
    assert any(Tile.parse("R7") in m.tiles for m in forced.melds)


def test_taken_discard_that_fits_no_meld_gives_no_opening():
    opening = best_opening("R9 Y9 B9 K2", "B1", R101, must_use="K2")
    assert opening.points == 0
    assert opening.melds == ()
    with pytest.raises(OkeyError, match="not in the hand"):
        best_opening("R9 Y9 B9", "B1", R101, must_use="K2")


def test_taken_okey_must_be_laid():
    # Okey B2; K13 Y13 B13 set (39) without it; with it the best is the four-colour set (52).
    opening = best_opening("K13 Y13 B13 B2", "B1", R101, must_use="B2")
    assert opening.points == 52
    assert Tile.parse("B2") in opening.melds[0].tiles


@given(small_hands(), st.data())
def test_forced_tile_search_matches_brute_force(hand_indicator, data):
    hand, indicator = hand_indicator
    if not hand:
        return
    forced = data.draw(st.integers(0, len(hand) - 1))
    expected = brute_best_using(hand, forced, indicator, False)
    opening = best_opening(hand, indicator, R101, must_use=hand[forced])
    assert opening.points == (expected or 0)
    if expected is not None:
        assert sum(m.value for m in opening.melds) == expected
        laid = [t for m in opening.melds for t in m.tiles]
        assert hand[forced] in laid
        assert sorted(laid + list(opening.remaining)) == sorted(hand)


# --- pairs opening --------------------------------------------------------------------------------
def test_pairs_opening_counts_identical_pairs_and_okeys():
    pairs = best_pairs_opening("R1 R1 K5 K5 Y7 Y7 B2 B2 K9 R6", "R5", R101)  # okey R6
    assert pairs.count == 5
    assert pairs.opens
    assert ("K9", "R6") in [(str(a), str(b)) for a, b in pairs.pairs]
    assert best_pairs_opening("R1 R1 K5 K5 Y7 Y7 B2 B2", "R5", R101).opens is False


def test_false_jokers_pair_and_two_okeys_pair_behind_the_switch():
    assert best_pairs_opening("FJ FJ", "R5", R101).count == 1
    assert best_pairs_opening("R6 R6", "R5", R101).count == 1
    no_okey_pair = replace(R101, okey_pair_with_okey=False)
    assert best_pairs_opening("R6 R6", "R5", no_okey_pair).count == 0
    assert best_pairs_opening("R1 R1 R6 R6", "R5", no_okey_pair).count == 2
    assert best_pairs_opening("FJ R6", "R5", R101).count == 1


def test_issue_c_two_spare_okeys_split_a_real_pair_when_okeys_may_not_pair():
    """Issue 23, case C: with ``okey_pair_with_okey`` off, two okeys left over take one real
    pair apart (R1 with one okey, R1 with the other), as ``check_win`` does."""
    no_okey_pair = replace(R101, okey_pair_with_okey=False)
    hand = "R1 R1 K5 K5 Y7 Y7 B2 B2 R6 R6"  # okey R6
    opening = best_pairs_opening(hand, "R5", no_okey_pair)
    assert opening.count == 5 and opening.opens
    assert opening.remaining == ()
    assert best_pairs_opening(hand, "R5", R101).count == 5


# --- leftover -------------------------------------------------------------------------------------
def test_leftover_counts_an_okey_as_its_number_plus_101():
    # docs/rules.md, "Held okey": a held okey is a tile left in hand (its printed number) and
    # draws the extra 101 on top.
    assert hand_value(parse_tiles("R6"), Tile.parse("R5")) == 6 + 101
    assert min_leftover("R5 Y5 B5 K5 K1", "R12", R101).penalty == 1
    # The okey goes into the set (saving 101) and a real 5 stays: 5.
    leftover = min_leftover("R5 Y5 B5 K5 R13", "R12", R101)
    assert leftover.penalty == 5
    assert min_leftover("R13 K2", "R12", R101).penalty == 13 + 101 + 2


def test_leftover_is_the_hand_value_minus_the_best_melds():
    leftover = min_leftover("K9 K10 K11 B4 FJ", "R5", R101)  # FJ is R6
    assert leftover.penalty == 10
    assert strs(leftover.remaining) == ["B4", "FJ"]


# --- table melds and lay-offs ---------------------------------------------------------------------
def test_read_meld_in_table_order():
    assert str(read_meld("K4 R6 K6", "R5", R101)) == "K4 R6=K5 K6"
    assert read_meld("R6 K5 K6", "R5", R101).plays_as == tuple(parse_tiles("K4 K5 K6"))
    assert str(read_meld("R7 Y7 R6", "R5", R101)) == "R7 Y7 R6=B7"
    assert str(read_meld("K8 K7 R6", "R5", R101)) == "R6=K6 K7 K8"  # laid high to low
    with pytest.raises(OkeyError, match="not a meld"):
        read_meld("K12 K13 K1", "R5", R101)
    with pytest.raises(OkeyError, match="at least 3"):
        read_meld("K1 K2", "R5", R101)


def test_lay_offs_onto_run_ends_and_sets():
    options = lay_offs("K7 K3 B4 Y4 R9", ["K4 K5 K6", "R4 Y4 K4"], "R1", R101)
    assert sorted(strs(options)) == sorted(
        [
            "K7 onto meld 1 (end, as K7)",
            "K3 onto meld 1 (start, as K3)",
            "B4 onto meld 2 (set, as B4)",
        ]
    )


def test_okey_in_hand_lays_off_anywhere_and_full_melds_take_nothing():
    # okey R2; K1..K13 is full, a set of four is full.
    full = ["K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12 K13", "R4 Y4 B4 K4"]
    assert lay_offs("R2 B4", full, "R1", R101) == []
    assert {o.where for o in lay_offs("R2", ["Y4 Y5 Y6"], "R1", R101)} == {"start", "end"}


def test_only_an_opened_player_lays_off():
    assert lay_offs("K7", ["K4 K5 K6"], "R1", R101, opened=False) == []
    assert len(lay_offs("K7", ["K4 K5 K6"], "R1", R101, opened=True)) == 1


def test_no_lay_off_past_13_in_101():
    assert lay_offs("K1", ["K11 K12 K13"], "R1", R101) == []
    classic = Rules.classic()
    assert strs(lay_offs("K1", ["K11 K12 K13"], "R1", classic)) == ["K1 onto meld 1 (end, as K1)"]


def test_swap_real_tile_for_table_okey():
    options = lay_offs("K5 B7", ["K4 R2 K6", "R7 Y7 R2"], "R1", R101)
    swaps = [o for o in options if o.where == "swap"]
    assert [(str(o.tile), o.meld, str(o.takes_back)) for o in swaps] == [
        ("K5", 0, "R2"),
        ("B7", 1, "R2"),
    ]


def test_discard_that_fits_a_table_meld_is_penalised_but_not_swaps_or_okeys():
    assert could_lay_off("Y9", ["Y6 Y7 Y8"], "R1", R101) is not None
    assert could_lay_off("Y11", ["Y6 Y7 Y8"], "R1", R101) is None
    assert could_lay_off("K5", ["K4 R2 K6"], "R1", R101) is None  # only a swap
    assert could_lay_off("R2", ["Y6 Y7 Y8"], "R1", R101) is None  # okey: own penalty


def test_table_melds_and_a_hand_holding_a_third_copy_are_refused():
    """The table's melds, the hand and the indicator share the set's two copies of a tile."""
    with pytest.raises(
        ImpossibleHandError, match=r"K4 is on the table 2 time\(s\) and in the hand"
    ):
        lay_offs("K4", ["K4 K5 K6", "K4 Y4 R4"], "R1", R101)
    with pytest.raises(
        ImpossibleHandError, match=r"K4 is on the table 2 time\(s\) and in the hand"
    ):
        advise_discard(HAND22, "B2", R101, table=["K4 K5 K6", "K4 Y4 B4"])
    with pytest.raises(
        ImpossibleHandError, match=r"B2 is on the table 2 time\(s\) and the indicator"
    ):
        advise_discard(HAND22, "B2", R101, table=["B2 R2 Y2", "B2 B3 B4"])
    with pytest.raises(ImpossibleHandError, match="a false joker is on the table 1 time"):
        lay_offs("FJ FJ R5", ["FJ B4 B5"], "B2", R101)
    with pytest.raises(ImpossibleHandError, match="K8 is on the table 3 time"):
        could_lay_off("Y1", ["K7 K8 K9", "K8 Y8 R8", "K8 K9 K10"], "R1", R101)
    # Two copies in all are fine, wherever they lie.
    assert advise_discard(HAND22, "B2", R101, table=["K4 Y4 R4", "B2 R2 Y2"])
    assert lay_offs("FJ B6", ["FJ B4 B5"], "B2", R101)


# --- discard advice -------------------------------------------------------------------------------
HAND22 = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"


def test_advice_keeps_the_opening_and_sheds_the_highest_loose_tile():
    advice = advise_discard(HAND22, "B2", R101)
    assert str(advice[0].tile) == "B9"
    assert advice[0].opens
    # A tile of the opening is never first: throwing R13 drops the opening.
    ranks = {str(o.tile): i for i, o in enumerate(advice)}
    assert ranks["B9"] < ranks["R10"]
    assert len(advice) == len(set(parse_tiles(HAND22)))


def test_advice_charges_101_for_an_okey_or_a_lay_off_discard():
    hand = HAND22.replace("K12", "B3")  # B3 is the okey (indicator B2)
    advice = {str(o.tile): o for o in advise_discard(hand, "B2", R101)}
    assert advice["B3"].penalty == 101
    table_advice = advise_discard(HAND22, "B2", R101, table=["B8 B7 B6"])
    by_tile = {str(o.tile): o for o in table_advice}
    assert by_tile["B9"].penalty == 101
    assert by_tile["B5"].penalty == 101
    assert str(table_advice[0].tile) not in {"B9", "B5"}


def test_advice_for_21_tiles_and_bad_sizes():
    hand21 = " ".join(HAND22.split()[:21])
    assert len(advise_discard(hand21, "B2", R101)) == 21
    with pytest.raises(OkeyError, match="21 or 22 tiles"):
        advise_discard("R1 R2 R3", "B2", R101)


def test_advice_before_opening_prefers_the_highest_opening():
    hand = "R10 R11 R12 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12 Y12 B1 R3"
    advice = advise_discard(hand, "B2", R101)
    assert not advice[0].opens
    assert advice[0].opening_points == max(o.opening_points for o in advice)


# --- hand report for the CLI ----------------------------------------------------------------------
def test_describe_hand_and_format():
    report = describe_hand(HAND22, "B2", R101)
    assert report["opening"]["points"] == 133  # K12 extends K9 K10 K11
    assert report["pairs"]["count"] == 0
    assert report["advice"][0]["tile"] == "B9"
    text = format_hand_report(report)
    assert "best opening: 133 points (opens)" in text
    assert "B9: opening" in text
    assert "smallest leftover" in text


def test_istaka_hand_with_okey101_rules_prints_the_report(capsys):
    assert main(["hand", HAND22, "--indicator", "B2", "--rules", "okey101"]) == 0
    text = capsys.readouterr().out
    assert "best opening: 133 points (opens)" in text
    assert "pairs opening: 0 pairs (needs 5)" in text
    assert "B9: opening 133 (opens), leftover 33" in text
    assert main(["hand", HAND22, "--indicator", "B2", "--rules", "okey101", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["opening"]["points"] == 133
    assert data["leftover"]["penalty"] == 42
