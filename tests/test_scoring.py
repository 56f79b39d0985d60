"""Classic scoring, RULES.md section 5: every event, multiplier and system."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from okey_reference import brute_best

from okey import Rules, Tile, parse_tiles
from okey.errors import OkeyError
from okey.hand import okey_for
from okey.scoring import (
    ClassicRound,
    counted_penalty,
    ends_game,
    finish_value,
    prize_split,
    round_changes,
    round_from_verdict,
    ungrouped_sum,
)

P4 = ["A", "B", "C", "D"]
CLASSIC = Rules.classic()
TURKISH = replace(CLASSIC, name="turkish", scoring="turkish", colour_finish="turkish_003")


def changes(summary: ClassicRound, rules: Rules = CLASSIC, players=P4) -> dict[str, int]:
    return round_changes(summary, players, rules)


# --- others lose (000/001) ------------------------------------------------------------------------
def test_normal_win_costs_each_other_player_2():
    assert changes(ClassicRound("A")) == {"A": 0, "B": -2, "C": -2, "D": -2}


def test_okey_discard_win_costs_4():
    assert changes(ClassicRound("B", okey_discard=True)) == {"A": -4, "B": 0, "C": -4, "D": -4}


def test_seven_pairs_win_costs_4():
    assert changes(ClassicRound("C", "pairs")) == {"A": -4, "B": -4, "C": 0, "D": -4}


def test_gosterge_costs_each_other_player_1():
    assert changes(ClassicRound(None, gosterge=("D",))) == {"A": -1, "B": -1, "C": -1, "D": 0}


def test_draw_scores_nothing():
    assert changes(ClassicRound(None)) == dict.fromkeys(P4, 0)


def test_colour_finish_variant_000_is_4_or_8_with_okey_discard():
    rules = replace(CLASSIC, colour_finish="variant_000")
    assert changes(ClassicRound("A", "colour", colour="Y"), rules)["B"] == -4
    assert changes(ClassicRound("A", "colour", okey_discard=True), rules)["B"] == -8


def test_colour_finish_only_red_or_black_at_some_tables():
    rules = replace(CLASSIC, colour_finish="variant_000", colour_finish_colours="RK")
    assert changes(ClassicRound("A", "colour", colour="K"), rules)["C"] == -4
    with pytest.raises(OkeyError, match="colour finish in Y"):
        changes(ClassicRound("A", "colour", colour="Y"), rules)


def test_colour_finish_needs_its_switch():
    with pytest.raises(OkeyError, match="colour_finish"):
        changes(ClassicRound("A", "colour"))


# --- Turkish (003) --------------------------------------------------------------------------------
def test_turkish_finish_values_2_4_and_x2_for_okey_discard():
    assert finish_value(ClassicRound("A"), TURKISH) == 2
    assert finish_value(ClassicRound("A", okey_discard=True), TURKISH) == 4
    assert finish_value(ClassicRound("A", "pairs"), TURKISH) == 4
    assert finish_value(ClassicRound("A", "pairs", okey_discard=True), TURKISH) == 8


def test_turkish_unordered_colour_finish_is_8():
    assert finish_value(ClassicRound("A", "colour"), TURKISH) == 8
    assert changes(ClassicRound("A", "colour"), TURKISH)["D"] == -8


def test_double_okey_quadruples_behind_its_switch():
    with pytest.raises(OkeyError, match="double_okey"):
        finish_value(ClassicRound("A", double_okey=True), TURKISH)
    rules = replace(TURKISH, double_okey=True)
    assert finish_value(ClassicRound("A", double_okey=True), rules) == 8
    assert finish_value(ClassicRound("A", "pairs", double_okey=True), rules) == 16


def test_unknown_names_and_finishes_are_rejected():
    with pytest.raises(OkeyError, match="'Z' is not a player"):
        changes(ClassicRound("Z"))
    with pytest.raises(OkeyError, match="unknown finish"):
        ClassicRound("A", "straight")  # type: ignore[arg-type]
    with pytest.raises(OkeyError, match="drawn round"):
        ClassicRound(None, okey_discard=True)


# --- countdown variants and partnership ----------------------------------------------------------
def test_finisher_down_counts_the_finishers_own_score():
    rules = replace(TURKISH, countdown="finisher_down")
    assert changes(ClassicRound("A", okey_discard=True), rules) == {
        "A": -4,
        "B": 0,
        "C": 0,
        "D": 0,
    }
    assert changes(ClassicRound(None, gosterge=("C",)), rules)["C"] == -1


def test_partnership_charges_the_other_team():
    rules = replace(CLASSIC, partnership=True)
    assert changes(ClassicRound("A"), rules) == {"A+C": 0, "B+D": -2}
    assert changes(ClassicRound("D", okey_discard=True), rules) == {"A+C": -4, "B+D": 0}
    assert changes(ClassicRound(None, gosterge=("C",)), rules) == {"A+C": 0, "B+D": -1}
    with pytest.raises(OkeyError, match="4 players"):
        round_changes(ClassicRound("A"), ["A", "B", "C"], rules)


def test_players_who_left_are_not_charged():
    got = round_changes(ClassicRound("A"), P4, CLASSIC, active=["A", "B", "C"])
    assert got == {"A": 0, "B": -2, "C": -2, "D": 0}


# --- penalty table (002) --------------------------------------------------------------------------
TABLE = Rules.preset("penalty_table")


def test_penalty_table_preset_starts_at_zero():
    assert TABLE.scoring == "penalty_table"
    assert TABLE.start_points == 0


def test_penalty_table_values_20_10_40_40_10():
    assert changes(ClassicRound("A"), TABLE) == {"A": 0, "B": 20, "C": 20, "D": 20}
    assert changes(ClassicRound(None), TABLE) == dict.fromkeys(P4, 10)
    assert changes(ClassicRound("A", "pairs"), TABLE)["B"] == 40
    assert changes(ClassicRound("A", okey_discard=True), TABLE)["B"] == 40
    assert changes(ClassicRound("A", "pairs", okey_discard=True), TABLE)["B"] == 80
    with pytest.raises(OkeyError, match="penalty table scores"):
        changes(ClassicRound("A", "colour"), TABLE)
    # B held the indicator's twin: every opponent of B pays 10 more.
    assert changes(ClassicRound("A", gosterge=("B",)), TABLE) == {
        "A": 10,
        "B": 20,
        "C": 30,
        "D": 30,
    }


def test_quick_game_prize_split():
    one = prize_split({"A": 0, "B": 20, "C": 40, "D": 60}, 100, rounds=1)
    assert one == {"A": 75.0, "B": 25.0, "C": 0.0, "D": 0.0}
    three = prize_split({"A": 20, "B": 60, "C": 70, "D": 90}, 100, rounds=3)
    assert three == {"A": 75.0, "B": 12.5, "C": 12.5, "D": 0.0}
    assert prize_split({"A": 0, "B": 50}, 10, rounds=1) == {"A": 10.0, "B": 0.0}
    with pytest.raises(OkeyError, match="1 or 3 rounds"):
        prize_split({"A": 0}, 10, rounds=2)


# --- counted tiles (003 renkli / sayılı) ----------------------------------------------------------
COUNTED = Rules.preset("counted")


def test_counted_sums_the_ungrouped_tiles_of_the_best_grouping():
    rack = parse_tiles("R1 R2 R3 K5 Y5 B5 K9 Y11 B12 B12 R7 R8 K1 Y2")
    # R1-R3, K5 Y5 B5 grouped; 9 + 11 + 12 + 12 + 7 + 8 + 1 + 2 = 62 left (indicator B1: okey B2)
    assert ungrouped_sum(rack, Tile.parse("B1"), COUNTED) == 62


def test_counted_engine_finds_the_minimum_not_a_greedy_grouping():
    # A greedy four-colour set of 3s would strand R2 and R4; the minimum is R2 R3 R4 + Y3 B3 K3.
    rack = parse_tiles("R2 R3 R4 Y3 B3 K3 K1")
    assert ungrouped_sum(rack, Tile.parse("B10"), COUNTED) == 1


def test_counted_doublings_pairs_and_red_or_black_indicator():
    rack = tuple(parse_tiles("K9 Y11"))
    blue = ClassicRound("A", indicator=Tile.parse("B1"), racks={"B": rack})
    assert counted_penalty(rack, blue, COUNTED) == 20
    pairs = replace(blue, finish="pairs")
    assert counted_penalty(rack, pairs, COUNTED) == 40
    red = replace(blue, indicator=Tile.parse("R1"))
    assert counted_penalty(rack, red, COUNTED) == 40
    assert counted_penalty(rack, replace(pairs, indicator=Tile.parse("K4")), COUNTED) == 80


def test_counted_round_charges_each_loser_their_rack():
    racks = {"B": parse_tiles("K9"), "C": parse_tiles("R1 R2 R3"), "D": parse_tiles("Y7 Y8")}
    summary = ClassicRound("A", indicator=Tile.parse("Y1"), racks=racks)
    assert changes(summary, COUNTED) == {"A": 0, "B": 9, "C": 0, "D": 15}
    assert changes(replace(summary, finisher=None, racks={}), COUNTED) == dict.fromkeys(P4, 0)
    with pytest.raises(OkeyError, match="needs D's rack"):
        changes(replace(summary, racks={"B": racks["B"], "C": racks["C"]}), COUNTED)
    with pytest.raises(OkeyError, match="indicator"):
        changes(replace(summary, indicator=None), COUNTED)


_KINDS = [Tile.of(c, n) for c in "RYBK" for n in (1, 2, 3, 4, 11, 12, 13)]


@given(
    st.lists(st.sampled_from(range(2 * len(_KINDS) + 2)), max_size=8, unique=True),
    st.sampled_from([Tile.of(c, n) for c in "RYBK" for n in (5, 12)]),
)
def test_counted_minimum_matches_brute_force(picks, indicator):
    pool = [t for t in [*_KINDS, Tile.false_joker()] for _ in range(2)]
    rack = [pool[i] for i in picks]
    okey = okey_for(indicator)
    total = sum(okey.number if t.is_false_joker or t == okey else t.number for t in rack)
    best = brute_best(rack, indicator, wrap=True, okey_weight=okey.number)
    assert ungrouped_sum(rack, indicator, COUNTED) == total - best


# --- agreement with the referee's points ---------------------------------------------------------
NORMAL = ("R1 R2 R3", "K5 Y5 B5", "B9 B10 B11 B12", "Y9 Y10 Y11 Y12")
PAIRS = ("R1 R1", "K5 K5", "B9 B9", "Y2 Y2", "R7 R7", "K8 K8", "B3 B3")
COLOUR = ("K1 K2 K3 K4", "K3 K4 K5", "K5 K6 K7 K8", "K11 K12 K13")  # one colour, no 9 or 10
ORDERED = ("K1 K2 K3 K4", "K4 K5 K6", "K7 K8 K9", "K10 K11 K12 K13")  # 1..13 of one colour
VARIANTS = [
    CLASSIC,
    replace(TURKISH, double_okey=True),
    replace(CLASSIC, colour_finish="variant_000"),
    Rules.preset("penalty_table"),
]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.scoring}-{r.colour_finish}")
@pytest.mark.parametrize("hand", [NORMAL, PAIRS, COLOUR], ids=["normal", "pairs", "colour"])
@pytest.mark.parametrize("discard", ["plain", "okey", "second_okey"])
def test_round_scores_agree_with_the_referee(rules, hand, discard):
    from okey.referee import referee

    indicator = Tile.parse("R9")  # okey R10
    thrown = Tile.parse("R10") if discard != "plain" else Tile.parse("Y13")
    groups = [parse_tiles(g) for g in hand]
    verdict = referee(groups, indicator, rules, thrown, second_okey=discard == "second_okey")
    assert verdict.valid, verdict.reason
    summary = round_from_verdict(verdict, "A")
    if hand is COLOUR:
        assert summary.finish == ("normal" if rules.colour_finish == "off" else "colour")
    if rules.scoring == "penalty_table":
        if summary.finish in ("colour", "colour_ordered"):
            return  # not in seed 002's table: scoring refuses it (see the docs)
        assert changes(summary, rules)["B"] == verdict.points
    else:
        assert finish_value(summary, rules) == verdict.points


def test_ordered_colour_finish_from_the_referee_ends_the_game():
    from okey.referee import referee

    rules = replace(TURKISH, double_okey=True)
    groups = [parse_tiles(g) for g in ORDERED]
    verdict = referee(groups, Tile.parse("R9"), rules, Tile.parse("Y13"))
    summary = round_from_verdict(verdict, "A")
    assert summary.finish == "colour_ordered"
    assert ends_game(summary, rules)
    with pytest.raises(OkeyError, match="not a valid finish"):
        round_from_verdict(referee([parse_tiles("R1 R2 R4")], Tile.parse("R9"), rules), "A")
