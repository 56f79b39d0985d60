"""Match keeping: standings, end of the game per variant, JSON, and ``istaka match``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from istaka.cli import main
from okey import ClassicRound, Match, PlayerRound101, Round101, Rules, Tile, parse_tiles
from okey.errors import OkeyError

P4 = ["A", "B", "C", "D"]
CLASSIC = Rules.classic()
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "match.json"


def play(match: Match, *rounds: ClassicRound | Round101) -> Match:
    for summary in rounds:
        match.record(summary)
    return match


def test_start_points_default_20_and_configurable():
    assert Match(CLASSIC, P4).scores == dict.fromkeys(P4, 20)
    assert Match(replace(CLASSIC, start_points=11), P4).scores == dict.fromkeys(P4, 11)


def test_others_lose_game_ends_at_zero_two_highest_win():
    match = Match(replace(CLASSIC, start_points=6), P4)
    play(match, ClassicRound("A", okey_discard=True), ClassicRound("B"))
    assert match.scores == {"A": 4, "B": 2, "C": 0, "D": 0}
    assert match.over
    assert match.result.winners == ("A", "B")
    assert match.result.losers == ("C", "D")
    with pytest.raises(OkeyError, match="game is over"):
        match.record(ClassicRound("A"))


def test_history_and_standings_after_each_round():
    match = Match(CLASSIC, P4)
    standings = match.record(ClassicRound("C", "pairs"))
    assert [s.name for s in standings][0] == "C"
    match.record(ClassicRound(None, gosterge=("A",)))
    assert match.history == [
        {"A": 16, "B": 16, "C": 20, "D": 16},
        {"A": 16, "B": 15, "C": 19, "D": 15},
    ]
    places = {s.name: (s.place, s.status) for s in match.standings()}
    assert places == {
        "C": (1, "playing"),
        "A": (2, "playing"),
        "B": (3, "playing"),
        "D": (3, "playing"),
    }


def test_leave_at_zero_players_leave_and_the_rest_play_on():
    rules = replace(CLASSIC, countdown="leave_at_zero", start_points=3)
    match = Match(rules, ["A", "B", "C"])
    match.record(ClassicRound("A", gosterge=("B",)))  # B 3-2 = 1; C 3-2-1 = 0 -> leaves
    assert match.left == ("C",)
    assert not match.over
    with pytest.raises(OkeyError, match="C has left"):
        match.record(ClassicRound("C"))
    match.record(ClassicRound("A"))  # B: 1 - 2 < 0
    assert match.over
    assert match.result.winners == ("A",)
    assert match.result.losers == ("B", "C")
    assert match.scores["C"] == 0  # not charged after leaving


def test_finisher_down_first_to_zero_wins():
    rules = replace(CLASSIC, countdown="finisher_down", start_points=5)
    match = Match(rules, P4)
    play(match, ClassicRound("B", okey_discard=True), ClassicRound("A"))
    assert match.scores == {"A": 3, "B": 1, "C": 5, "D": 5}
    assert [s.name for s in match.standings()][:2] == ["B", "A"]
    match.record(ClassicRound("B", "pairs"))
    assert match.over
    assert match.result.winners == ("B",)


def test_ordered_colour_finish_drops_everyone_else_to_zero_and_ends_the_game():
    rules = replace(CLASSIC, colour_finish="turkish_003")
    match = play(Match(rules, P4), ClassicRound("A"), ClassicRound("D", "colour_ordered"))
    assert match.scores == {"A": 0, "B": 0, "C": 0, "D": 18}
    assert match.result.winners == ("D",)


def test_partnership_match_keeps_team_scores():
    rules = replace(CLASSIC, partnership=True, start_points=4)
    match = play(Match(rules, P4), ClassicRound("A"), ClassicRound("C", okey_discard=True))
    assert match.scores == {"A+C": 4, "B+D": -2}
    assert match.result.winners == ("A+C",)


def test_penalty_table_match_lowest_total_after_the_rounds():
    match = Match(Rules.preset("penalty_table"), P4)  # 3 rounds
    play(match, ClassicRound("A"), ClassicRound(None), ClassicRound("B", "pairs"))
    assert match.scores == {"A": 50, "B": 30, "C": 70, "D": 70}
    assert match.result.winners == ("B",)


def test_101_match_totals_and_end_after_agreed_rounds():
    rules = replace(Rules.okey101(), rounds=3)
    match = Match(rules, ["A", "B", "C"])

    def r(finisher: str, sums: dict[str, int]) -> Round101:
        players = tuple(
            PlayerRound101(n, opened=n == finisher or n in sums, hand_sum=sums.get(n))
            for n in ["A", "B", "C"]
        )
        return Round101(players, finisher)

    play(match, r("A", {"B": 20}), r("B", {"A": 30, "C": 5}))
    assert match.scores == {"A": -71, "B": -81, "C": 207}
    assert not match.over
    match.record(r("C", {"A": 3, "B": 40}))
    assert match.over
    assert match.scores == {"A": -68, "B": -41, "C": 106}
    assert match.result.winners == ("A",)
    assert [s.name for s in match.standings()] == ["A", "B", "C"]


def test_json_round_trip_keeps_rules_players_and_standings():
    rules = replace(CLASSIC, countdown="leave_at_zero", start_points=3)
    match = play(Match(rules, ["A", "B", "C"]), ClassicRound("A", gosterge=("B",)))
    again = Match.from_json(match.to_json())
    assert again.rules == rules
    assert again.history == match.history
    assert again.left == match.left
    assert [s.to_dict() for s in again.standings()] == [s.to_dict() for s in match.standings()]


def test_json_round_trip_101_with_tiles():
    players = (
        PlayerRound101("A", opened=True),
        PlayerRound101("B", opened=True, remaining=tuple(parse_tiles("R6 K3"))),
    )
    summary = Round101(players, "A", Tile.parse("R5"))
    match = play(Match(Rules.okey101(), ["A", "B"]), summary)
    assert match.scores == {"A": -101, "B": 6 + 3 + 101}  # the okey R6 held: 6, then 101
    assert Match.from_json(match.to_json()).scores == match.scores


def test_bad_match_files_say_what_is_wrong():
    with pytest.raises(OkeyError, match="not valid JSON"):
        Match.from_json("{")
    with pytest.raises(OkeyError, match="'players'"):
        Match.from_json(json.dumps({"rules": "classic"}))
    bad_round = {"rules": "classic", "players": P4, "rounds": [{"finisher": "Z"}]}
    with pytest.raises(OkeyError, match="round 1: 'Z' is not a player"):
        Match.from_dict(bad_round)
    with pytest.raises(OkeyError, match="unknown round fields: winner"):
        Match.from_dict({"rules": "classic", "players": P4, "rounds": [{"winner": "A"}]})
    bad_101 = {"rules": "okey101", "players": ["A", "B"], "rounds": [{"finisher": "A"}]}
    with pytest.raises(OkeyError, match="round 1: a 101 round needs 'players'"):
        Match.from_dict(bad_101)
    bad_101["rounds"] = [{"finisher": "A", "players": [{"name": "A", "score": 3}]}]
    with pytest.raises(OkeyError, match="unknown 101 player fields: score"):
        Match.from_dict(bad_101)


# --- CLI ------------------------------------------------------------------------------------------
def test_cli_prints_the_example_standings(capsys):
    assert main(["match", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    expected = Match.load(EXAMPLE)
    for standing in expected.standings():
        assert standing.name in out
    assert out.startswith("rules: ")
    assert "game over" in out if expected.over else "game over" not in out


def test_cli_json_output(capsys, tmp_path):
    path = tmp_path / "m.json"
    play(Match(CLASSIC, P4), ClassicRound("B")).save(path)
    assert main(["match", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["standings"][0] == {"name": "B", "score": 20, "place": 1, "status": "playing"}
    assert data["result"] is None


def test_cli_bad_input_exit_2(capsys, tmp_path):
    assert main(["match", str(tmp_path / "missing.json")]) == 2
    assert "no match file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"rules": "classic", "players": ["A", "B"], "rounds": [{"finisher": "Q"}]}')
    assert main(["match", str(bad)]) == 2
    assert "round 1" in capsys.readouterr().err


def test_counted_match_keeps_racks_and_indicator_through_json():
    rules = replace(Rules.preset("counted"), rounds=2)
    racks = {"B": tuple(parse_tiles("K9 Y11")), "C": tuple(parse_tiles("R1 R2 R3"))}
    summary = ClassicRound("A", indicator=Tile.parse("R4"), racks=racks)  # red: x2
    match = play(Match(rules, ["A", "B", "C"]), summary)
    assert match.scores == {"A": 0, "B": 40, "C": 0}
    again = Match.from_json(match.to_json())
    assert again.rounds == match.rounds
    again.record(replace(summary, finish="pairs"))  # x2 x2
    assert again.scores == {"A": 0, "B": 120, "C": 0}
    assert again.result.winners == ("A", "C")
