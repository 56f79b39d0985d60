"""101 Okey round scoring (RULES.md 6): -101, hand sums, 202, every doubling, every extra 101."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from istaka.cli import main
from okey import Match, PlayerRound101, Round101, Rules, Tile, parse_tiles
from okey.errors import OkeyError
from okey.okey101 import match_totals, score_round

EXAMPLE_101 = Path(__file__).resolve().parents[1] / "examples" / "match101.json"


def opened(name: str, hand_sum: int = 0, **kw) -> PlayerRound101:
    return PlayerRound101(name, opened=True, hand_sum=hand_sum, **kw)


def closed(name: str, **kw) -> PlayerRound101:
    return PlayerRound101(name, **kw)


def test_finisher_minus_101_openers_hand_sum_non_openers_202():
    summary = Round101((opened("A"), opened("B", 37), closed("C"), opened("D", 4)), "A")
    assert score_round(summary) == {"A": -101, "B": 37, "C": 202, "D": 4}


def test_hand_sum_from_tiles_false_joker_counts_as_okey_face():
    # Indicator B9 -> okey B10; FJ counts 10; the held B10 okey counts 10 plus the 101 extra.
    b = PlayerRound101("B", opened=True, remaining=tuple(parse_tiles("R3 FJ K13")))
    c = PlayerRound101("C", opened=True, remaining=tuple(parse_tiles("R3 B10")))
    summary = Round101((opened("A"), b, c), "A", indicator=Tile.parse("B9"))
    assert score_round(summary) == {"A": -101, "B": 26, "C": 3 + 10 + 101}


def test_okey_finish_doubles_everything():
    summary = Round101((opened("A"), opened("B", 10), closed("C")), "A", okey_finish=True)
    assert score_round(summary) == {"A": -202, "B": 20, "C": 404}


def test_pairs_opener_doubles_own_remainder():
    summary = Round101((opened("A"), opened("B", 10, pairs=True), opened("C", 10)), "A")
    assert score_round(summary) == {"A": -101, "B": 20, "C": 10}


def test_pairs_opener_finishing_doubles_the_penalties_they_cause():
    summary = Round101((opened("A", pairs=True), opened("B", 10), closed("C")), "A")
    assert score_round(summary) == {"A": -101, "B": 20, "C": 404}


def test_whole_hand_in_one_turn_doubles_and_with_okey_gives_404_and_808():
    players = (opened("A"), closed("B"), closed("C"), closed("D"))
    assert score_round(Round101(players, "A", one_turn=True)) == {
        "A": -202,
        "B": 404,
        "C": 404,
        "D": 404,
    }
    assert score_round(Round101(players, "A", one_turn=True, okey_finish=True)) == {
        "A": -404,
        "B": 808,
        "C": 808,
        "D": 808,
    }


def test_one_turn_needs_nobody_else_opened():
    with pytest.raises(OkeyError, match="nobody else has opened"):
        score_round(Round101((opened("A"), opened("B", 3)), "A", one_turn=True))


def test_okey_held_costs_101_but_a_non_opener_pays_only_202():
    summary = Round101((opened("A"), opened("B", 5, okeys_held=1), closed("C", okeys_held=2)), "A")
    assert score_round(summary) == {"A": -101, "B": 106, "C": 202}


def test_held_okey_counts_its_number_and_then_101():
    """docs/rules.md, "Held okey": the okey is a tile left in hand (its printed number, doubled
    like the others) and draws the extra 101 on top (not doubled); a non-opener pays only 202."""
    indicator = Tile.parse("R5")  # okey R6
    players = (
        opened("A"),
        PlayerRound101("B", opened=True, remaining=tuple(parse_tiles("R6 K2"))),
        PlayerRound101("C", remaining=tuple(parse_tiles("R6 K2"))),
    )
    assert score_round(Round101(players, "A", indicator=indicator)) == {
        "A": -101,
        "B": 6 + 2 + 101,
        "C": 202,
    }
    doubled = score_round(Round101(players, "A", indicator=indicator, okey_finish=True))
    assert doubled["B"] == 2 * (6 + 2) + 101


def test_each_extra_penalty_adds_101_undoubled():
    summary = Round101(
        (
            opened("A", penalties=("okey_discard",)),
            opened("B", 5, penalties=("failed_opening", "lay_off_discard")),
            closed("C", penalties=("took_back",)),
        ),
        "A",
        okey_finish=True,
    )
    assert score_round(summary) == {"A": -202 + 101, "B": 10 + 202, "C": 404 + 101}
    with pytest.raises(OkeyError, match="unknown 101 penalty 'cheating'"):
        closed("C", penalties=("cheating",))


def test_bank_exhausted_round_without_finisher():
    summary = Round101((opened("A", 12), closed("B")), None)
    assert score_round(summary) == {"A": 12, "B": 202}
    with pytest.raises(OkeyError, match="needs a finisher"):
        score_round(Round101((opened("A", 12), closed("B")), None, okey_finish=True))


def test_round_input_errors_name_the_problem():
    with pytest.raises(OkeyError, match="'Z' is not a player"):
        score_round(Round101((opened("A"), closed("B")), "Z"))
    with pytest.raises(OkeyError, match="B needs remaining tiles or a hand_sum"):
        score_round(Round101((opened("A"), PlayerRound101("B", opened=True)), "A"))
    with pytest.raises(OkeyError, match="indicator"):
        score_round(Round101((opened("A"), PlayerRound101("B", True, remaining=(Tile(0),))), "A"))
    with pytest.raises(OkeyError, match="pairs but is marked as not opened"):
        PlayerRound101("B", pairs=True)


def test_all_four_pairs_openers_void_the_round_and_it_is_replayed():
    pairs = tuple(opened(n, 10, pairs=True) for n in "ABCD")
    void = Round101(pairs, "A", okey_finish=True)
    assert void.void
    assert score_round(void) == dict.fromkeys("ABCD", 0)
    three = Round101((*pairs[:3], opened("D", 10)), "A")
    assert not three.void
    match = Match(replace(Rules.okey101(), rounds=1), list("ABCD"))
    match.record(void)
    assert not match.over  # replayed, not counted
    match.record(three)
    assert match.over


def test_match_totals_over_the_agreed_rounds():
    r1 = Round101((opened("A"), opened("B", 30)), "A")
    r2 = Round101((opened("A", 7), opened("B")), "B")
    assert match_totals([r1, r2]) == {"A": -94, "B": -71}
    with pytest.raises(OkeyError, match="3 rounds recorded but the match has 2"):
        match_totals([r1, r2, r1], replace(Rules.okey101(), rounds=2))


def test_example_101_match_file(capsys):
    match = Match.load(EXAMPLE_101)
    assert match.over
    assert match.scores == {"Ayşe": -34, "Bora": 808, "Cem": 404, "Deniz": 650}
    assert main(["match", str(EXAMPLE_101)]) == 0
    assert "game over: won Ayşe" in capsys.readouterr().out
