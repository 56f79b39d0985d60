"""Distance to win: known hands, availability of tiles, both forms, hand sizes."""

from dataclasses import replace

import pytest
from engine_reference import brute_distance, small_hand_rules

from okey import Rules, Tile, distance_to_win, parse_tiles

CLASSIC = Rules.classic()
PLAIN = Tile.parse("Y1")  # okey Y2


def dist(text, indicator=PLAIN, rules=CLASSIC, seen=""):
    return distance_to_win(parse_tiles(text), indicator, rules, parse_tiles(seen))


def test_a_win_is_zero():
    assert dist("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10") == 0
    assert dist("R4 R4 K2 K2 B9 B9 Y5 Y5 R13 R13 K7 K7 B4 B4") == 0


def test_one_stray_tile_is_one_away():
    assert dist("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 Y13") == 1


def test_fifteen_tiles_count_the_best_discard():
    assert dist("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10 Y13") == 0


def test_the_okey_fills_any_gap():
    # Okey Y2 held: R1 R2 _ R4 becomes a run.
    assert dist("R1 R2 R4 Y2 Y5 B5 K5 K9 K10 K11 B7 B8 B9 B10") == 0


def test_both_copies_seen_means_an_okey_must_fill():
    # R1 R2 _ R4 waits for R3 or an okey.  With both R3s seen the okeys still fill it; with the
    # okeys seen too, R1 R2 must become something else (e.g. R1 Y1 B1): two exchanges.
    hand = "R1 R2 R4 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10"
    assert dist(hand) == 1
    assert dist(hand, seen="R3 R3") == 1
    assert dist(hand, seen="R3 R3 Y2 Y2") == 2
    seen = tuple(parse_tiles("R3 R3 Y2 Y2"))
    assert brute_distance(parse_tiles(hand), PLAIN, CLASSIC, seen, limit=1) is None


def test_pairs_form_counts():
    # Six pairs and two singles: one exchange makes seven pairs.
    assert dist("R4 R4 K2 K2 B9 B9 Y5 Y5 R13 R13 K7 K7 B4 B6") == 1
    no_pairs = replace(CLASSIC, seven_pairs=False)
    assert dist("R4 R4 K2 K2 B9 B9 Y5 Y5 R13 R13 K7 K7 B4 B6", rules=no_pairs) > 1


def test_pair_needs_a_copy_that_is_still_unseen():
    hand = "R4 R4 K2 K2 B9 B9 Y5 Y5 R13 R13 K7 K7 B4 B6"
    no_melds_help = dist(hand, seen="B4 B6 Y2 Y2")
    assert no_melds_help >= 2


def test_wrap_switch_changes_the_distance():
    hand = "R12 R13 R1 Y5 B5 K5 K9 K10 K11 B7 B8 B9 B10 B11"
    assert dist(hand) == 0
    assert dist(hand, rules=replace(CLASSIC, wrap_13_1=False)) == 1


def test_false_joker_counts_as_the_okey_face():
    # Okey R5 (indicator R4): FJ is a plain R5.
    assert dist("R4 FJ R6 Y5 B5 K5 K9 K10 K11 B7 B8 B9 B10 B11", Tile.parse("R4")) == 0


def test_wrong_size_is_an_error():
    with pytest.raises(ValueError, match="14 tiles"):
        dist("R1 R2 R3")


def test_impossible_hand_is_an_error():
    with pytest.raises(ValueError, match="3 copies"):
        dist("R1 R1 R1 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10")


@pytest.mark.parametrize(
    "hand",
    [
        "K9 K9 K12 R8 K13 K12 R12",
        "B6 K6 B2 K5 B6 Y7 Y8",
        "R5 R6 B6 R6 B6 B7 R9",
    ],
)
def test_small_hands_match_the_brute_force(hand):
    rules = small_hand_rules(CLASSIC, 7)
    tiles = parse_tiles(hand)
    indicator = Tile.parse("R11")
    fast = distance_to_win(tiles, indicator, rules)
    slow = brute_distance(tiles, indicator, rules, limit=2)
    assert fast == slow if slow is not None else fast > 2


def test_issue_a_a_dead_single_pairs_with_an_okey_still_to_draw():
    """Issue 23, case A: six pairs, B1 and K6 both seen: discard B1, draw the okey B4 for K6."""
    hand = "Y3 Y3 Y8 Y8 Y12 Y12 B1 B8 B8 B9 B9 K6 K13 K13"
    assert dist(hand, Tile.parse("B3"), seen="B1 K6") == 1
    # Both okeys seen as well: nothing can pair K6 or B1 any more.
    assert dist(hand, Tile.parse("B3"), seen="B1 K6 B4 B4") == 2


def test_issue_a_advice_names_the_okey_as_the_wait():
    from okey import advise

    hand = parse_tiles("Y3 Y3 Y8 Y8 Y12 Y12 B1 B8 B8 B9 B9 K6 K13 K13")
    advice = advise(hand, Tile.parse("B3"), CLASSIC, parse_tiles("B1 K6"))
    assert advice.distance == 1
    assert [str(t) for t, _ in advice.waits] == ["B4"]


def test_issue_b_a_set_around_one_face_whose_runs_are_dead():
    """Issue 23, case B: Y3's runs all need a tile with no copy left, so Y3 goes into a set with
    two drawn tiles: R3 Y3 B3 | Y4 B7(=Y5) Y6 | Y6 Y7 Y8 Y9 Y10 | Y8 Y9 Y10."""
    hand = "Y3 Y4 Y6 Y6 Y7 Y8 Y8 Y9 Y9 Y10 Y10 Y11 B7 B12"
    seen = "Y2 Y2 Y4 Y5 Y5 Y7 Y11 Y12 Y12 B7 B10 B10 B12 B13 B13"
    assert dist(hand, Tile.parse("B6"), seen=seen) == 2
    win = parse_tiles("R3 Y3 B3 Y4 B7 Y6 Y6 Y7 Y8 Y9 Y10 Y8 Y9 Y10")
    assert distance_to_win(win, Tile.parse("B6"), CLASSIC) == 0
