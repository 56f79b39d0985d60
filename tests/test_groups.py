"""Groups: the valid and invalid examples of the source texts (seeds 000, 001, 003), by name."""

from dataclasses import replace

import pytest

from okey import Rules, Tile, explain_group, group_kinds, parse_tiles

CLASSIC = Rules.classic()
# Seed 001's okey examples assume "a round with red 5 as the okey": indicator R4.
RED5_OKEY = Tile.parse("R4")
PLAIN = Tile.parse("Y1")  # okey Y2: no tile in these examples is wild


def kinds(text, indicator=PLAIN, rules=CLASSIC):
    return group_kinds(parse_tiles(text), indicator, rules)


def test_seed001_run_9_10_11():
    assert kinds("K9 K10 K11") == {"run"}


def test_seed001_set_7_7_7():
    assert kinds("R7 B7 K7") == {"set"}


def test_seed003_set_5_5_5_and_8_8_8_8():
    assert kinds("R5 Y5 K5") == {"set"}
    assert kinds("R8 Y8 B8 K8") == {"set"}


def test_seed003_runs_1_2_3_and_6_7_8_9():
    assert kinds("B1 B2 B3") == {"run"}
    assert kinds("Y6 Y7 Y8 Y9") == {"run"}


def test_seed003_run_11_12_13_1():
    assert kinds("R11 R12 R13 R1") == {"run"}


def test_seed001_invalid_gap_1_2_4():
    assert kinds("K1 K2 K4") == set()
    assert "not consecutive" in explain_group(parse_tiles("K1 K2 K4"), PLAIN, CLASSIC).reason


def test_seed001_invalid_mixed_colour_run_1_2_3():
    assert kinds("R1 K2 R3") == set()
    assert "one colour" in explain_group(parse_tiles("R1 K2 R3"), PLAIN, CLASSIC).reason


def test_seed001_invalid_set_with_repeated_colour_1_1_1():
    assert kinds("R1 R1 K1") == set()
    reading = explain_group(parse_tiles("K12 Y12 K12"), PLAIN, CLASSIC)
    assert reading.reason == "K12 Y12 K12: a set may not repeat a colour"


def test_seed000_invalid_set_blue10_red10_blue10():
    assert kinds("B10 R10 B10") == set()


def test_seed001_black_1_2_3_and_12_13_1_valid_but_13_1_2_not():
    assert kinds("K1 K2 K3") == {"run"}
    assert kinds("K12 K13 K1") == {"run"}
    assert kinds("K13 K1 K2") == set()
    reason = explain_group(parse_tiles("K13 K1 K2"), PLAIN, CLASSIC).reason
    assert "13-1-2" in reason


def test_seed000_101_runs_may_not_pass_13_to_1():
    okey101 = Rules.okey101()
    assert kinds("K12 K13 K1", rules=okey101) == set()
    assert kinds("K13 K1 K2", rules=okey101) == set()
    assert "13 to 1" in explain_group(parse_tiles("K12 K13 K1"), PLAIN, okey101).reason


def test_wrap_switch_turns_12_13_1_off():
    house = replace(CLASSIC, wrap_13_1=False)
    assert kinds("R12 R13 R1", rules=house) == set()
    assert kinds("R1 R2 R3", rules=house) == {"run"}


def test_seed001_one_okey_completes_a_set_8_8_5():
    reading = explain_group(parse_tiles("Y8 K8 R5"), RED5_OKEY, CLASSIC)
    assert reading.kinds == {"set"}
    assert [str(t) for t in reading.stands_for] == ["Y8", "K8", "R8"]


def test_seed001_two_okeys_complete_a_run_6_5_5_9():
    reading = explain_group(parse_tiles("B6 R5 R5 B9"), RED5_OKEY, CLASSIC)
    assert reading.kinds == {"run"}
    assert [str(t) for t in reading.stands_for] == ["B6", "B7", "B8", "B9"]


def test_seed001_false_joker_plays_as_red5_in_a_run():
    # {red 4, false joker, red 6} is a run when red 5 is the okey.
    reading = explain_group(parse_tiles("R4 FJ R6"), RED5_OKEY, CLASSIC)
    assert reading.kinds == {"run"}
    assert [str(t) for t in reading.stands_for] == ["R4", "R5", "R6"]


def test_seed001_false_joker_plays_as_red5_in_a_set():
    # {black 5, green (blue) 5, yellow 5, false joker} is a set.
    assert kinds("K5 B5 Y5 FJ", RED5_OKEY) == {"set"}


def test_false_joker_is_not_wild():
    # With red 5 the okey, a false joker is a plain R5: it cannot stand for K8.
    assert kinds("K7 FJ K9", RED5_OKEY) == set()
    assert kinds("R5 FJ", RED5_OKEY) == {"pair"}


def test_okey_is_wild_anywhere():
    assert kinds("K7 R5 K9", RED5_OKEY) == {"run"}
    assert kinds("K7 R5 Y7", RED5_OKEY) == {"set"}
    assert kinds("K7 K8 R5", RED5_OKEY) == {"run"}
    assert kinds("R5 R5 K1", RED5_OKEY) == {"run", "set"}


def test_run_lengths_3_to_13():
    assert kinds("R1 R2") == set()
    assert kinds(" ".join(f"R{n}" for n in range(1, 14))) == {"run"}
    assert kinds(" ".join(f"R{n}" for n in range(2, 14)) + " R1") == {"run"}


def test_set_of_five_is_invalid():
    assert kinds("R3 Y3 B3 K3 Y2", RED5_OKEY) == set()


@pytest.mark.parametrize(
    ("text", "switch", "expected"),
    [
        ("Y2 Y2", True, {"pair"}),
        ("Y2 Y2", False, set()),
        ("Y2 R9", True, {"pair"}),
        ("FJ FJ", True, {"pair"}),
        ("FJ Y2", True, {"pair"}),
        ("R9 B9", True, set()),
    ],
)
def test_pairs_and_the_okey_pair_switch(text, switch, expected):
    rules = replace(CLASSIC, okey_pair_with_okey=switch)
    assert kinds(text, PLAIN, rules) == expected
