"""Tiles, notation, the indicator rule and impossible hands (RULES.md 1-2)."""

import pytest

from okey import (
    ALL_KINDS,
    FULL_SET,
    ImpossibleHandError,
    Rules,
    Tile,
    TileParseError,
    check_possible,
    okey_for,
    parse_tiles,
)


@pytest.mark.parametrize("text", ["R1", "Y7", "B13", "K10", "FJ"])
def test_notation_round_trips(text):
    assert str(Tile.parse(text)) == text


def test_every_kind_round_trips_and_orders_by_index():
    assert [Tile.parse(str(t)) for t in ALL_KINDS] == list(ALL_KINDS)
    assert sorted(reversed(ALL_KINDS)) == list(ALL_KINDS)
    assert len({t: 1 for t in FULL_SET}) == 53


@pytest.mark.parametrize(
    ("words", "tile"),
    [
        ("red 5", "R5"),
        ("kırmızı 5", "R5"),
        ("siyah 13", "K13"),
        ("mavi 1", "B1"),
        ("sarı 9", "Y9"),
        ("false joker", "FJ"),
        ("sahte okey", "FJ"),
    ],
)
def test_english_and_turkish_words(words, tile):
    assert str(Tile.parse(words)) == tile


def test_parse_tiles_reads_a_hand_with_words():
    assert [str(t) for t in parse_tiles("red 1, R2 kırmızı 3 sahte okey")] == [
        "R1",
        "R2",
        "R3",
        "FJ",
    ]


@pytest.mark.parametrize("token", ["X9", "R14", "R0", "", "okey"])
def test_bad_token_names_the_token(token):
    with pytest.raises(TileParseError) as err:
        Tile.parse(token)
    assert isinstance(err.value, ValueError)
    assert repr(token) in str(err.value)


def test_full_set_has_106_tiles_two_of_each():
    assert len(FULL_SET) == 106
    assert FULL_SET.count(Tile.parse("FJ")) == 2
    assert FULL_SET.count(Tile.parse("K13")) == 2


@pytest.mark.parametrize(
    ("indicator", "okey"),
    [("R10", "R11"), ("R4", "R5"), ("K13", "K1"), ("B5", "B6"), ("Y1", "Y2")],
)
def test_okey_is_indicator_plus_one_with_13_wrapping(indicator, okey):
    # Seed 001: red 10 -> red 11; 13 -> 1 of the same colour.  Seed 000 (101): blue 5 -> blue 6.
    assert str(okey_for(Tile.parse(indicator))) == okey


def test_indicator_may_not_be_a_false_joker():
    with pytest.raises(ValueError, match="false joker"):
        okey_for(Tile.parse("FJ"))


@pytest.mark.parametrize(
    ("hand", "message"),
    [
        ("R1 R1 R1", "3 copies of R1"),
        ("FJ FJ FJ", "3 false jokers"),
        ("K7 K7", "two copies of K7"),
        (" ".join(["R1", "R2", "R3", "R4"] * 4), "16 tiles"),
    ],
)
def test_impossible_hands_say_what_is_impossible(hand, message):
    with pytest.raises(ImpossibleHandError, match=message):
        check_possible(parse_tiles(hand), Tile.parse("K7"), Rules.classic())


def test_hand_errors_quote_the_token_as_written():
    with pytest.raises(TileParseError, match="'X9'"):
        parse_tiles("R1 X9 K3")
