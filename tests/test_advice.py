"""Discard advice: ranking, improving tiles with unseen counts, okeys kept, waits of 14 tiles."""

from dataclasses import replace

import pytest

from okey import Rules, Tile, advise, distance_to_win, parse_tiles

CLASSIC = Rules.classic()
PLAIN = Tile.parse("Y1")  # okey Y2


def test_the_winning_discard_ranks_first():
    hand = parse_tiles("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13")
    advice = advise(hand, Tile.parse("R5"), CLASSIC)  # okey R6
    assert advice.kind == "discard"
    assert advice.best.discard == Tile.parse("Y13") and advice.best.distance == 0
    assert advice.best.sentence == "Discard Y13: the other 14 tiles win."
    assert [o.distance for o in advice.options] == sorted(o.distance for o in advice.options)


def test_every_distinct_discard_is_ranked_with_its_true_distance():
    hand = parse_tiles("R1 R2 R4 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 K3 K3")
    advice = advise(hand, PLAIN, CLASSIC)
    assert {o.discard for o in advice.options} == set(hand)
    for option in advice.options:
        rest = list(hand)
        rest.remove(option.discard)
        assert option.distance == distance_to_win(rest, PLAIN, CLASSIC, [option.discard])


def test_improving_tiles_and_their_unseen_counts():
    # Discard K3: R1 R2 _ R4 needs R3; B7 B8 B9 may grow; the okey Y2 also fills the gap.
    hand = parse_tiles("R1 R2 R4 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 K3 K1")
    advice = advise(hand, PLAIN, CLASSIC, seen=parse_tiles("R3"))
    k3 = next(o for o in advice.options if o.discard == Tile.parse("K3"))
    assert k3.distance == 1
    improving = dict(k3.improving)
    assert improving[Tile.parse("R3")] == 1  # one R3 seen, one left
    assert improving[Tile.parse("Y2")] == 2  # both okeys unseen
    assert "1 tile from a win" in k3.sentence and "R3" in k3.sentence
    for tile, _ in k3.improving:
        rest = [t for t in hand if t != Tile.parse("K3")] + [tile]
        assert distance_to_win(rest, PLAIN, CLASSIC) == 0


def test_ties_break_on_more_improving_copies():
    hand = parse_tiles("R1 R2 R4 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 K3 K1")
    options = advise(hand, PLAIN, CLASSIC).options
    for a, b in zip(options, options[1:], strict=False):
        if a.advised == b.advised and a.distance == b.distance:
            assert a.improving_copies >= b.improving_copies


def test_never_advises_throwing_an_okey_unless_that_wins():
    # Okey Y2 held; throwing it leaves 1 away, like throwing K1.
    hand = parse_tiles("R1 R2 R4 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 Y2 K1")
    advice = advise(hand, PLAIN, CLASSIC)
    okey_option = next(o for o in advice.options if o.is_okey)
    assert not okey_option.advised
    assert advice.options[-1] == okey_option
    assert okey_option.sentence.startswith("Keep Y2")
    assert advice.best.discard == Tile.parse("K1") and advice.best.distance == 0


def test_throwing_the_okey_when_that_wins_is_advised():
    hand = parse_tiles("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10 Y2")
    advice = advise(hand, PLAIN, CLASSIC)
    assert advice.best.is_okey and advice.best.advised and advice.best.distance == 0
    assert "okey finish counts double" in advice.best.sentence


def test_waits_of_a_14_tile_hand():
    hand = parse_tiles("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 Y13")
    advice = advise(hand, Tile.parse("R5"), CLASSIC, seen=parse_tiles("K13"))
    assert advice.kind == "waits" and advice.distance == 1
    waits = dict(advice.waits)
    assert waits[Tile.parse("K13")] == 1  # one of the two K13s was seen
    assert waits[Tile.parse("R6")] == 2  # the okey
    assert waits[Tile.parse("R5")] == 1  # one R5 is the indicator
    assert Tile.parse("Y12") not in waits
    assert advice.sentence.startswith("1 tile from a win;")


def test_waits_of_a_winning_hand():
    hand = parse_tiles("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10")
    advice = advise(hand, PLAIN, CLASSIC)
    assert advice.distance == 0 and "already wins" in advice.sentence


def test_wrong_size_is_an_error():
    with pytest.raises(ValueError, match="14 tiles"):
        advise(parse_tiles("R1 R2 R3"), PLAIN, CLASSIC)


def test_seen_tiles_count_against_the_two_copies():
    with pytest.raises(ValueError, match="R1"):
        advise(
            parse_tiles("R1 R1 R2 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 B10"),
            PLAIN,
            CLASSIC,
            seen=parse_tiles("R1"),
        )


def test_to_dict_lists_tiles_and_counts():
    hand = parse_tiles("R1 R2 R4 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 K3 K1")
    data = advise(hand, PLAIN, replace(CLASSIC)).to_dict()
    assert data["kind"] == "discard"
    first = data["options"][0]
    assert {"discard", "distance", "improving", "improving_copies", "sentence"} <= set(first)


def test_advise_hand_examples() -> None:
    """``okey.advise_hand``'s docstring examples (a 22-tile 101 hand ranked the 101 way)."""
    import doctest

    import okey.advice101

    result = doctest.testmod(okey.advice101)
    assert result.failed == 0 and result.attempted > 0


def test_advise_hand_sends_each_game_to_its_adviser() -> None:
    from okey import advise_hand

    classic = parse_tiles("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13")
    assert (
        advise_hand(classic, Tile.parse("K7"), Rules.classic()).to_dict()
        == advise(classic, Tile.parse("K7"), Rules.classic()).to_dict()
    )
    hand = parse_tiles(
        "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"
    )
    ranked = advise_hand(hand, Tile.parse("B2"), Rules.okey101())
    assert ranked.adviser == "okey101" and str(ranked.best.discard) == "B9"
    waits = advise_hand(hand[:21], Tile.parse("B2"), Rules.okey101())
    assert waits.adviser == "okey101" and waits.kind == "waits"


def test_101_adviser_answers_21_and_22_tiles_the_101_way_and_uses_seen() -> None:
    """Issue 23: a 21-tile 101 rack (a draw is due) gets the tiles that would let it open; a
    22-tile rack its discards ranked the 101 way; seen tiles are never offered as draws."""
    from okey import advise_hand

    rules, indicator = Rules.okey101(), Tile.parse("B2")
    hand = parse_tiles("R10 R11 R12 K13 Y13 B13 K9 K10 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 R4 Y6")
    waits = advise_hand(hand, indicator, rules)
    assert waits.kind == "waits" and waits.adviser == "okey101"
    assert ("R9", 2) in [(str(t), n) for t, n in waits.waits]
    assert waits.sentence.startswith("Best opening 78 points (needs 101); 12 unseen tiles")
    seen = parse_tiles("R9")
    narrowed = advise_hand(hand, indicator, rules, seen)
    assert ("R9", 1) in [(str(t), n) for t, n in narrowed.waits]
    gone = advise_hand(hand, indicator, rules, parse_tiles("R9 R9"))
    assert "R9" not in [str(t) for t, _ in gone.waits]

    ranked = advise_hand([*hand, Tile.parse("K5")], indicator, rules, seen)
    data = ranked.to_dict()
    assert data["kind"] == "discard" and data["adviser"] == "okey101"
    best = data["options"][0]
    assert {"discard", "distance", "improving", "is_okey", "advised", "sentence"} <= set(best)
    assert {"opening_points", "opens", "pairs", "leftover", "penalty"} <= set(best)
    assert best["improving"]
    assert all(i["tile"] != "R9" or i["unseen"] == 1 for i in best["improving"])
    assert data["sentence"] == best["sentence"]
