"""One input contract for the engine's public functions (issue 34, item 6): tiles or notation,
an indicator as a tile or notation, rules as ``Rules``, a preset name or None; anything else a
typed error naming the argument."""

from dataclasses import replace

import pytest

from okey import (
    ArgumentError,
    ImpossibleHandError,
    OkeyError,
    Rules,
    RulesError,
    Tile,
    TileParseError,
    advise,
    advise_hand,
    check_possible,
    check_win,
    distance_to_win,
    explain_group,
    hand_stage,
    okey_for,
    parse_tiles,
    referee,
    take_or_draw,
)
from okey.okey101 import best_opening, best_pairs_opening, lay_offs, min_leftover

HAND = "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6"
FIFTEEN = HAND + " Y13"
SEEN = "K13 R4"
HAND101 = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6"


def forms(text):
    """The same tiles as one string, a list of strings, a list of tiles and a tuple of tiles."""
    tiles = parse_tiles(text)
    return [text, text.split(), tiles, tuple(tiles)]


@pytest.mark.parametrize(
    "call",
    [
        lambda t, i, s: check_win(t, i).to_dict(),
        lambda t, i, s: distance_to_win(t, i, None, s),
        lambda t, i, s: advise(t, i, Rules.classic(), s).to_dict(),
        lambda t, i, s: advise_hand(t, i, "classic", s).to_dict(),
        lambda t, i, s: take_or_draw(t, "Y13", i, None, s).to_dict(),
        lambda t, i, s: explain_group(t[:3] if not isinstance(t, str) else t[:8], i).to_dict(),
    ],
)
def test_every_form_of_the_same_hand_gets_the_same_answer(call):
    answers = [
        call(tiles, indicator, seen)
        for tiles, seen in zip(forms(HAND), forms(SEEN), strict=True)
        for indicator in ("R5", Tile.parse("R5"))
    ]
    assert all(answer == answers[0] for answer in answers)


def test_fifteen_tiles_as_one_string_are_advised_like_tiles():
    assert (
        advise(FIFTEEN, "R5").to_dict() == advise(parse_tiles(FIFTEEN), Tile.parse("R5")).to_dict()
    )
    assert distance_to_win(FIFTEEN, "R5", "classic") == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda t, i: best_opening(t, i).to_dict(),
        lambda t, i: best_pairs_opening(t, i).to_dict(),
        lambda t, i: min_leftover(t, i).to_dict(),
        lambda t, i: advise_hand(t, i, Rules.okey101()).to_dict(),
        lambda t, i: distance_to_win(t, i, "okey101"),
    ],
)
def test_101_functions_take_the_same_forms(call):
    answers = [call(t, i) for t in forms(HAND101) for i in ("B2", Tile.parse("B2"))]
    assert all(answer == answers[0] for answer in answers)


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: distance_to_win(5, "R5"), "tiles"),
        (lambda: distance_to_win(HAND, 5), "indicator"),
        (lambda: distance_to_win(HAND, "R5", 3), "rules"),
        (lambda: distance_to_win(HAND, "R5", None, 7), "seen"),
        (lambda: check_win([1] * 14, "R5"), "tiles"),
        (lambda: check_win(Tile.parse("R1"), "R5"), "tiles"),
        (lambda: check_win(HAND, ["R5"]), "indicator"),
        (lambda: advise(HAND, None), "indicator"),
        (lambda: advise(HAND, "R5", {"name": "classic"}), "rules"),
        (lambda: advise([*parse_tiles(HAND)[:13], 3.0, "K1"], "R5"), "tiles"),
        (lambda: take_or_draw(HAND, 7, "R5"), "offered"),
        (lambda: okey_for(13), "indicator"),
        (lambda: check_possible([None], "R5"), "tiles"),
        (lambda: referee(5, "R5"), "groups"),
        (lambda: referee([["R1", "R2", "R3"], 4], "R5"), "groups[1]"),
        (lambda: best_opening(HAND101, object()), "indicator"),
        (lambda: lay_offs(HAND101, [], 2.5), "indicator"),
        (lambda: explain_group("R1 R2 R3", "R5", "nope"), "rules"),
        (lambda: hand_stage("14", "classic"), "count"),
        (lambda: hand_stage(14, 14), "rules"),
    ],
)
def test_other_inputs_are_refused_naming_the_argument(call, argument):
    with pytest.raises(ArgumentError) as err:
        call()
    assert err.value.argument == argument
    assert str(err.value).startswith(f"{argument}: ")
    assert isinstance(err.value, TypeError) and isinstance(err.value, OkeyError)


def test_a_hand_as_one_string_is_never_read_letter_by_letter():
    with pytest.raises(ImpossibleHandError, match="got 13"):
        advise(" ".join(HAND.split()[:13]), "R5")


@pytest.mark.parametrize("token", ["R-5", "R 5", "R٥", "R_5", "Ｒ5", "٥R", "5 R", "r- 5"])
def test_the_tile_parser_is_strict(token):
    with pytest.raises(TileParseError):
        Tile.parse(token)
    with pytest.raises(TileParseError) as err:
        distance_to_win([token, *HAND.split()[1:]], "K7")
    assert "(in tiles)" in str(err.value)


@pytest.mark.parametrize(
    ("token", "tile"),
    [("R5", "R5"), ("red 5", "R5"), ("5red", "R5"), ("kırmızı 13", "R13"), ("k13", "K13")],
)
def test_the_usual_notation_still_reads(token, tile):
    assert str(Tile.parse(token)) == tile


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"max_run_length": 0}, "max_run_length"),
        ({"max_run_length": 14}, "max_run_length"),
        ({"hand_size": 7}, "hand_size"),
        ({"max_rack_tiles": 20}, "max_rack_tiles"),
        ({"opening_threshold": -5}, "opening_threshold"),
        ({"pairs_opening_min": 0}, "pairs_opening_min"),
        ({"rounds": 0}, "rounds"),
        ({"start_points": -1}, "start_points"),
        ({"game": "poker"}, "game"),
        ({"scoring": "golf"}, "scoring"),
        ({"wrap_13_1": "yes"}, "wrap_13_1"),
        ({"colour_finish_colours": "RG"}, "colour_finish_colours"),
    ],
)
def test_rules_refuse_impossible_values(changes, field):
    with pytest.raises(RulesError) as err:
        replace(Rules.classic(), **changes)
    assert err.value.field == field
    with pytest.raises(ValueError, match=field):
        Rules.from_dict({"name": "classic", **changes})


def test_every_preset_is_valid_and_a_house_rule_still_applies():
    for name in ("classic", "okey101", "penalty_table", "counted"):
        assert Rules.preset(name).name == name
    assert replace(Rules.okey101(), opening_threshold=81, max_run_length=5).max_run_length == 5


def test_a_101_rack_is_named_in_plain_words():
    with pytest.raises(ImpossibleHandError, match="a 101 Okey rack holds at most 22"):
        check_possible(parse_tiles(HAND101 + " " + HAND), Tile.parse("B2"), Rules.okey101())
