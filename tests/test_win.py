"""Win check: meld hands, seven pairs (the source texts' examples), okeys, false jokers, rules."""

from dataclasses import replace

import pytest

from okey import Rules, Tile, check_win, group_kinds, parse_tiles

CLASSIC = Rules.classic()
RED5_OKEY = Tile.parse("R4")
PLAIN = Tile.parse("Y1")  # okey Y2, absent from these hands


def win(text, indicator=PLAIN, rules=CLASSIC):
    return check_win(parse_tiles(text), indicator, rules)


def assert_arrangement_is_the_hand(result, text, indicator=PLAIN, rules=CLASSIC):
    laid = sorted(t for g in result.groups for t in g.tiles)
    assert laid == sorted(parse_tiles(text))
    for g in result.groups:
        assert g.kind in group_kinds(g.tiles, indicator, rules)


def test_seed001_seven_pairs_4_4_2_2_9_9_5_5_13_13_7_7_4_4():
    text = "R4 R4 K2 K2 B9 B9 Y5 Y5 R13 R13 K7 K7 B4 B4"
    result = win(text)
    assert (result.winning, result.kind) == (True, "pairs")
    assert_arrangement_is_the_hand(result, text)


def test_seed001_seven_pairs_with_one_okey_4_4_2_2_9_9_5_5_13_13_7_7_4_5():
    # Red 5 is the okey: the last "5" pairs with the lone 4.
    text = "Y4 Y4 K2 K2 B9 B9 Y5 Y5 K13 K13 K7 K7 B4 R5"
    result = win(text, RED5_OKEY)
    assert (result.winning, result.kind) == (True, "pairs")
    okey_pair = next(g for g in result.groups if Tile.parse("R5") in g.tiles)
    assert [str(t) for t in okey_pair.stands_for] == ["B4", "B4"]


def test_seed003_pairs_hand_22_55_1313_44_11_33_1111():
    text = "R2 R2 Y5 Y5 B13 B13 K4 K4 R1 R1 Y3 Y3 B1 B1"
    assert win(text).kind == "pairs"


def test_seven_pairs_switch_and_okey101_preset():
    text = "R2 R2 Y5 Y5 B13 B13 K4 K4 R1 R1 Y3 Y3 B1 B1"
    assert not win(text, rules=replace(CLASSIC, seven_pairs=False)).winning
    assert not Rules.okey101().seven_pairs


def test_a_meld_hand_with_12_13_1_and_a_4_set():
    text = "R12 R13 R1 Y5 B5 K5 R5 K9 K10 K11 B7 B8 B9 B10"
    result = win(text)
    assert (result.winning, result.kind) == (True, "melds")
    assert_arrangement_is_the_hand(result, text)


def test_13_1_2_does_not_win_where_12_13_1_would():
    assert win("R12 R13 R1 Y5 B5 K5 K9 K10 K11 B7 B8 B9 B10 B11").winning
    assert not win("R13 R1 R2 Y5 B5 K5 K9 K10 K11 B7 B8 B9 B10 B11").winning


def test_okey101_wrap_off_rejects_12_13_1():
    rules = replace(CLASSIC, wrap_13_1=False)
    assert not win("R12 R13 R1 Y5 B5 K5 K9 K10 K11 B7 B8 B9 B10 B11", rules=rules).winning


def test_okey_stands_for_the_missing_tile():
    text = "R1 R2 R5 Y5 B5 K5 K9 K10 K11 B7 B8 B9 B10 B11"  # R5 okey fills R3
    result = win(text, RED5_OKEY)
    assert result.winning
    run = next(g for g in result.groups if Tile.parse("R1") in g.tiles)
    assert [str(t) for t in run.stands_for] == ["R1", "R2", "R3"]


def test_false_joker_plays_as_the_okey_face_in_a_meld_hand():
    # Red 5 is the okey, so the false joker is a plain R5 in R4 R5 R6.
    text = "R4 FJ R6 Y5 B5 K5 K9 K10 K11 B7 B8 B9 B10 B11"
    assert win(text, RED5_OKEY).winning
    assert not win(text.replace("R6", "R7"), RED5_OKEY).winning


def test_two_okeys_and_the_pair_switch():
    # Okey Y2 held twice; the other 12 tiles are six pairs.
    text = "Y2 Y2 R4 R4 K2 K2 B9 B9 Y5 Y5 R13 R13 K7 K7"
    assert win(text).kind == "pairs"
    # Without okey + okey pairs, a real pair splits into two okey pairs instead.
    off = replace(CLASSIC, okey_pair_with_okey=False)
    assert win(text, rules=off).kind == "pairs"


def test_spare_okeys_join_groups():
    text = "Y2 Y2 R1 R2 R3 K5 Y5 B5 K9 K10 K11 B7 B8 B9"
    result = win(text)
    assert result.winning and result.kind == "melds"
    assert_arrangement_is_the_hand(result, text)


def test_scattered_hand_is_not_a_win():
    assert not win("R1 R5 R9 Y2 Y6 Y10 B3 B7 B11 K4 K8 K12 K13 B13").winning


def test_win_check_wants_the_hand_size():
    with pytest.raises(ValueError, match="14 tiles"):
        win("R1 R2 R3")


def test_to_dict_is_json_ready():
    data = win("R4 R4 K2 K2 B9 B9 Y5 Y5 R13 R13 K7 K7 B4 B4").to_dict()
    assert data["winning"] is True and data["kind"] == "pairs"
    assert data["groups"][0]["tiles"] == data["groups"][0]["stands_for"]


@pytest.mark.parametrize("wrap", [True, False])
def test_quick_filters_never_reject_a_hand_the_full_search_splits(wrap):
    """``check_win`` skips the meld search when a face has no possible group partner and too few
    okeys; on hands crowded into a few colours and numbers (many wins) it agrees with the full
    search of melds and pairs."""
    import random

    from okey import solver

    rules = replace(CLASSIC, wrap_13_1=wrap)
    rng = random.Random(23 + wrap)
    wins = 0
    for _ in range(1500):
        indicator = Tile(rng.randrange(52))
        okey = indicator.next()
        colours = rng.sample(range(4), rng.randint(1, 3))
        low = rng.randint(0, 9)
        kinds = [c * 13 + n for c in colours for n in range(low, min(13, low + rng.randint(3, 8)))]
        pool = [*kinds, *kinds, 0, 12, 52, 52, okey.index, okey.index]
        rng.shuffle(pool)
        held: list[int] = []
        for k in pool:
            if held.count(k) < (1 if k == indicator.index else 2):
                held.append(k)
        if len(held) < 14:
            continue
        hand = [Tile(k) for k in held[:14]]
        faces, okeys = solver.faces_and_okeys(hand, okey)
        expected = (
            solver.find_melds(faces, okeys, rules) is not None
            or solver.find_pairs(faces, okeys, rules) is not None
        )
        assert check_win(hand, indicator, rules).winning == expected, [str(t) for t in hand]
        wins += expected
    assert wins > 50
