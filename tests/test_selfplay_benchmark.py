"""benchmarks/selfplay.py: the games follow the rules, each player sees only what it could, the
figures are reproducible and the intervals are Wilson's."""

from __future__ import annotations

import importlib.util
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okey import FULL_SET, Tile, check_possible, check_win

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "selfplay.py"
_SPEC = importlib.util.spec_from_file_location("selfplay", _PATH)
selfplay = importlib.util.module_from_spec(_SPEC)
sys.modules["selfplay"] = selfplay  # (its dataclasses look their module up there)
_SPEC.loader.exec_module(selfplay)


class Watching(selfplay.GreedyPolicy):
    """A greedy player that records every view it is given."""

    views: list = []

    @staticmethod
    def record(view):
        # (A copy: the game goes on changing the hand it showed.)
        Watching.views.append(
            selfplay.View(
                list(view.hand), view.indicator, view.offered, list(view.seen), view.rules
            )
        )

    def take(self, view):
        Watching.record(view)
        return self.rng.random() < 0.3 and view.rules.game == "classic"

    def discard(self, view):
        Watching.record(view)
        return super().discard(view)


def test_a_player_sees_its_hand_the_discards_and_nothing_hidden(monkeypatch):
    monkeypatch.setitem(selfplay.CLASSES, "greedy", Watching)
    Watching.views = []
    for game in range(3):
        selfplay.play_classic(game, selfplay.rotated(["greedy"] * 4, game))
    assert Watching.views
    for view in Watching.views:
        # Hand, seen tiles, offered tile and indicator are distinct physical tiles of one set.
        out = [*view.seen, *([view.offered] if view.offered else [])]
        check_possible(view.hand, view.indicator, view.rules, max_tiles=15, others=out)
        assert len(view.hand) in (14, 15)
        assert len(view.seen) + len(view.hand) + 1 <= len(FULL_SET)


def test_a_won_game_ends_on_a_winning_hand_and_games_repeat_with_the_seed(monkeypatch):
    hands = []

    def recording(hand, indicator, rules=None):
        result = check_win(hand, indicator, rules)
        if result.winning:
            hands.append(list(hand))
        return result

    monkeypatch.setattr(selfplay, "check_win", recording)
    results = [
        selfplay.play_classic(seed, ["istaka", "greedy", "greedy", "random"]) for seed in (3, 4)
    ]
    again = [
        selfplay.play_classic(seed, ["istaka", "greedy", "greedy", "random"]) for seed in (3, 4)
    ]
    assert results == again
    assert len(hands) == 2 * sum(r.winner is not None for r in results)
    assert all(len(h) == 14 for h in hands)


def test_101_rounds_score_every_seat_and_the_finisher_minus_101():
    result = selfplay.play_101(7, ["istaka", "greedy", "greedy", "greedy"])
    assert len(result.points) == 4 and len(result.penalties) == 4
    if result.winner is not None:
        assert min(result.points) <= -101


def test_seats_rotate_one_a_game():
    lineup = ["istaka", "greedy", "random", "greedy"]
    seats = [selfplay.rotated(lineup, game) for game in range(4)]
    assert [s.index("istaka") for s in seats] == [0, 1, 2, 3]
    assert all(Counter(s) == Counter(lineup) for s in seats)


@given(st.integers(0, 400), st.integers(1, 400))
def test_wilson_interval_holds_the_share_and_stays_in_0_1(successes, trials):
    successes = min(successes, trials)
    low, high = selfplay.wilson(successes, trials)
    assert 0 <= low <= successes / trials <= high <= 1


def test_wilson_interval_matches_the_textbook_value():
    # 30 of 100: the Wilson 95 % interval is 21.9 % to 39.6 %.
    low, high = selfplay.wilson(30, 100)
    assert (round(low, 3), round(high, 3)) == (0.219, 0.396)


def test_deal_gives_15_and_three_14_from_one_set():
    indicator, hands, centre = selfplay.deal(11, 15, 14)
    tiles = [indicator, *centre, *(t for h in hands for t in h)]
    assert Counter(tiles) == Counter(FULL_SET)
    assert [len(h) for h in hands] == [15, 14, 14, 14] and not indicator.is_false_joker
    assert isinstance(random.Random(1).choice(hands[0]), Tile)


@pytest.mark.parametrize("lineup", ["istaka,greedy,greedy", "istaka,greedy,greedy,poker"])
def test_the_command_refuses_a_wrong_lineup(lineup, monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["selfplay.py", "--games", "1", "--lineup", lineup])
    with pytest.raises(SystemExit):
        selfplay.main()
    assert "--lineup" in capsys.readouterr().err
