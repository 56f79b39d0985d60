"""Referee of declared hands: first bad group and why, other arrangements, finishes and points."""

from dataclasses import replace

import pytest

from okey import Rules, Tile, parse_groups, referee

CLASSIC = Rules.classic()
INDICATOR = Tile.parse("R9")  # okey R10


def judge(text, discard=None, rules=CLASSIC, indicator=INDICATOR, **kw):
    return referee(parse_groups(text), indicator, rules, discard=discard, **kw)


def test_first_bad_group_with_plain_reason():
    verdict = judge("R1 R2 R3 | K12 Y12 K12 | B5 B6 B7 B8 | Y9 Y10 Y11 Y12")
    assert not verdict.valid
    assert verdict.first_bad_group == 2
    assert verdict.reason == "group 2, K12 Y12 K12: a set may not repeat a colour"
    assert verdict.points == 0 and verdict.finish is None


def test_bad_layout_of_tiles_that_win_another_way():
    # Y4 B4 K9 is no group, but R1 R2 R3 | R4 Y4 B4 | K9 K10 K11 K12 | ... wins.
    verdict = judge("R1 R2 R3 R4 | Y4 B4 K9 | K10 K11 K12 | B9 B10 B11 B12")
    assert not verdict.valid and verdict.first_bad_group == 2
    assert verdict.other_arrangement_wins
    assert verdict.arrangement is not None and verdict.arrangement.winning


def test_bad_layout_that_no_arrangement_saves():
    verdict = judge("R1 R2 R4 | K5 Y5 B5 | B9 B10 B11 B12 | Y1 Y2 Y3 Y4")
    assert not verdict.valid and not verdict.other_arrangement_wins
    assert "Not a win" in verdict.sentence


def test_normal_finish_scores_2():
    verdict = judge("R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y10 Y11 Y12", discard="K1")
    assert (verdict.valid, verdict.finish, verdict.okey_discard, verdict.points) == (
        True,
        "normal",
        False,
        2,
    )


def test_okey_discard_doubles():
    verdict = judge("R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y10 Y11 Y12", discard="R10")
    assert verdict.okey_discard and verdict.points == 4


def test_seven_pairs_scores_4_and_8_with_an_okey_discard():
    pairs = "R4 R4 | K2 K2 | B9 B9 | Y5 Y5 | R13 R13 | K7 K7 | B4 B4"
    assert judge(pairs, discard="K1").finish == "seven_pairs"
    assert judge(pairs, discard="K1").points == 4
    assert judge(pairs, discard="R10").points == 8


def test_pairs_with_an_okey_in_a_pair():
    verdict = judge("R4 R4 | K2 K2 | B9 B9 | Y5 Y5 | R13 R13 | K7 K7 | B4 R10")
    assert verdict.valid and verdict.finish == "seven_pairs"


def test_pairs_mixed_with_melds_is_not_a_win():
    verdict = judge("R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y9 | Y11 Y11")
    assert not verdict.valid and verdict.first_bad_group == 4
    assert "pair counts only in a hand of pairs" in verdict.reason


def test_wrong_tile_count():
    verdict = judge("R1 R2 R3 | K5 Y5 B5")
    assert not verdict.valid and "6 tiles declared" in verdict.reason


def test_colour_finish_only_where_the_rules_have_it():
    text = "R1 R2 R3 R4 | R4 R5 R6 R7 | R8 R9 R10 | R11 R12 R13"
    indicator = Tile.parse("K9")  # okey K10, no okey here
    assert judge(text, indicator=indicator).finish == "normal"
    variant = replace(CLASSIC, colour_finish="variant_000")
    assert judge(text, rules=variant, indicator=indicator).points == 4
    turkish = replace(CLASSIC, colour_finish="turkish_003")
    verdict = judge(text, rules=turkish, indicator=indicator)
    assert verdict.finish == "colour_ordered" and verdict.ends_game
    unordered = "R1 R2 R3 | R3 R4 R5 | R6 R7 R8 | R8 R9 R10 | R12 R12"
    assert not judge(unordered, rules=turkish, indicator=indicator).valid


def test_ordered_colour_finish_means_every_number_from_1_to_13():
    """docs/rules.md, "Ordered colour finish": one colour with all of 1..13 (one number twice),
    an okey counted as the tile it stands for; a one-colour win missing a number is unordered."""
    turkish = replace(CLASSIC, colour_finish="turkish_003")
    ordered = judge(
        "R1 R2 R3 R4 | R4 R5 R6 R7 | R8 R9 R10 | R11 R12 R13",
        rules=turkish,
        indicator=Tile.parse("K9"),
    )
    assert ordered.finish == "colour_ordered" and ordered.ends_game
    # K10 is the okey and plays as R5: still every number from 1 to 13.
    with_okey = judge(
        "R1 R2 R3 R4 | R4 K10 R6 R7 | R8 R9 R10 | R11 R12 R13",
        rules=turkish,
        indicator=Tile.parse("K9"),
    )
    assert with_okey.finish == "colour_ordered"
    # No 10: one colour, but not in order from 1 to 13.
    missing = judge(
        "R1 R2 R3 R4 | R4 R5 R6 | R7 R8 R9 | R11 R12 R13 R1",
        rules=turkish,
        indicator=Tile.parse("K9"),
    )
    assert missing.finish == "colour" and not missing.ends_game


def test_unordered_colour_finish_scores_8_in_seed003():
    text = "R1 R2 R3 R4 | R4 R5 R6 | R7 R8 R9 | R11 R12 R13 R1"
    turkish = replace(CLASSIC, colour_finish="turkish_003")
    verdict = judge(text, rules=turkish, indicator=Tile.parse("K9"))
    assert verdict.finish == "colour" and verdict.points == 8


def test_double_okey_quadruples_only_with_the_switch():
    text = "R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y10 Y11 Y12"
    assert judge(text, discard="R10", second_okey=True).points == 4
    rules = replace(CLASSIC, double_okey=True)
    verdict = judge(text, discard="R10", rules=rules, second_okey=True)
    assert verdict.double_okey and verdict.points == 8


def test_penalty_table_scoring():
    rules = replace(CLASSIC, scoring="penalty_table")
    assert judge("R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y10 Y11 Y12", rules=rules).points == 20


def test_impossible_declaration_raises():
    with pytest.raises(ValueError, match="3 copies of R1"):
        judge("R1 R1 R1 | K5 Y5 B5")


def test_empty_group_raises():
    with pytest.raises(ValueError, match="group 2 is empty"):
        parse_groups("R1 R2 R3 || K5")


def test_to_dict_exposes_what_scoring_reuses():
    data = judge("R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y10 Y11 Y12", discard="R10").to_dict()
    assert {"valid", "finish", "points", "okey_discard", "reason", "groups"} <= set(data)
    assert data["discard"] == "R10"


def test_13_1_2_reason_names_the_rule():
    verdict = judge("K13 K1 K2 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y10 Y11 Y12")
    assert verdict.first_bad_group == 1
    assert "13-1-2 is not a run" in verdict.reason


ORDERED = "R1 R2 R3 R4 R5 R6 R7 | R7 R8 R9 R10 R11 R12 R13"  # 1..13 of one colour (okey R10)


@pytest.mark.parametrize("discard, points", [("Y13", 4), ("R10", 8)])
def test_ordered_colour_finish_is_an_ordinary_colour_finish_in_variant_000(discard, points):
    # Only seed 003 (turkish_003) has the ordered-1..13-ends-the-game rule (RULES.md 5).
    rules = replace(CLASSIC, colour_finish="variant_000")
    verdict = judge(ORDERED, discard, rules)
    assert verdict.valid and verdict.finish == "colour"
    assert verdict.points == points and not verdict.ends_game
    assert "game ends" not in verdict.sentence


def test_ordered_colour_finish_ends_the_game_only_in_turkish_003():
    rules = replace(CLASSIC, colour_finish="turkish_003")
    verdict = judge(ORDERED, "Y13", rules)
    assert verdict.finish == "colour_ordered" and verdict.ends_game
    assert verdict.points == rules.start_points
    off = judge(ORDERED, "Y13", CLASSIC)
    assert off.finish == "normal" and off.points == 2 and not off.ends_game


@pytest.mark.parametrize("colour_finish", ["variant_000", "turkish_003"])
@pytest.mark.parametrize("hand", [ORDERED, "R1 R2 R3 R4 | R3 R4 R5 | R5 R6 R7 R8 | R11 R12 R13"])
def test_penalty_table_reports_a_colour_finish_without_points(colour_finish, hand):
    # Seed 002's table lists no colour finish and okey.scoring refuses one: no 4 or 8 here.
    rules = replace(Rules.penalty_table(), colour_finish=colour_finish)
    verdict = judge(hand, "R10", rules)
    assert verdict.valid and verdict.finish in ("colour", "colour_ordered")
    assert verdict.points == 0 and not verdict.ends_game
    assert "lists no colour finish" in verdict.sentence
    # A normal finish at the same table keeps its 20 / 40.
    normal = judge("R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y10 Y11 Y12", "R10", rules)
    assert normal.finish == "normal" and normal.points == 40
