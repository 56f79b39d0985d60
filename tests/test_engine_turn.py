"""Take or draw (issue 34, item 1): the answer, its exact draw average, 101's rule for a taken
discard, and ``istaka hand --offered``."""

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okey import (
    FULL_SET,
    Rules,
    Tile,
    advise,
    distance_to_win,
    explain_group,
    okey_for,
    parse_tiles,
    take_or_draw,
)
from okey.distance import unseen_counts
from okey.errors import ImpossibleHandError
from okey.okey101 import best_opening, best_pairs_opening, could_lay_off, read_meld

CLASSIC = Rules.classic()
R101 = Rules.okey101()
THOROUGH = os.environ.get("ISTAKA_THOROUGH") == "1"
SETTINGS = settings(
    max_examples=300 if THOROUGH else 25, deadline=None, suppress_health_check=list(HealthCheck)
)
RANDOMS = st.integers(min_value=0, max_value=2**32).map(random.Random)
ISTAKA = Path(sys.executable).with_name("istaka")


def deal(rnd, size, seen_count):
    """A random deal: ``size`` tiles in hand, the offered tile, an indicator (no false joker)
    and ``seen_count`` other discards, all from one set."""
    pool = list(FULL_SET)
    rnd.shuffle(pool)
    indicator = next(t for t in pool if not t.is_false_joker)
    pool.remove(indicator)
    return pool[:size], pool[size], indicator, pool[size + 1 : size + 1 + seen_count]


def test_a_tile_that_wins_is_taken_and_names_its_group():
    answer = take_or_draw("R1 R2 R3 Y5 Y6 K5 K9 K10 K11 K12 B7 B8 B9 R6", "Y7", "R5")
    assert answer.take and answer.discard == Tile.parse("K5") and answer.take_distance == 0
    assert answer.sentence == (
        "Take Y7, then discard K5: it completes Y5 Y6 Y7 and the other 14 tiles win."
    )
    assert answer.to_dict()["advice"]["options"][0]["discard"] == "K5"
    assert answer.advice.best.discard == answer.discard


def test_a_tile_that_does_not_help_is_left_for_a_draw():
    answer = take_or_draw("R1 R2 R3 Y5 Y6 K5 K9 K10 K11 K12 B7 B8 B9 R6", "K1", "R5")
    assert not answer.take and answer.discard is None
    assert answer.take_distance == answer.distance == 1
    assert answer.sentence.startswith("Draw: K1 does not bring you closer")
    assert answer.to_dict()["take"] is False


@SETTINGS
@given(RANDOMS, st.integers(min_value=0, max_value=30))
def test_classic_answer_is_the_exact_draw_average_and_a_discard_of_the_hand(rnd, seen_count):
    hand, offered, indicator, seen = deal(rnd, 14, seen_count)
    answer = take_or_draw(hand, offered, indicator, CLASSIC, seen)
    out = [*seen, offered]
    # The draw average, from the advice of each 15-tile hand (a different path than the
    # distance of 15 tiles that take_or_draw reads).
    left = unseen_counts(hand, indicator, out)
    total = sum(left)
    weighted = sum(
        n * advise([*hand, Tile(k)], indicator, CLASSIC, out).distance
        for k, n in enumerate(left)
        if n
    )
    assert answer.unseen == total
    assert answer.draw_distance == pytest.approx(weighted / total)
    assert answer.distance == distance_to_win(hand, indicator, CLASSIC, out)
    take = advise([*hand, offered], indicator, CLASSIC, seen).best
    assert answer.take_distance == take.distance
    assert answer.take == (take.distance < answer.draw_distance and take.discard != offered)
    if answer.take:
        assert answer.discard in Counter([*hand, offered])
        assert answer.discard != offered
        assert answer.discard != okey_for(indicator) or answer.take_distance == 0


def test_101_never_advises_a_take_that_cannot_open():
    hand = "R10 R11 R12 K13 Y13 B13 K9 K10 K1 Y1 Y5 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 Y11"
    answer = take_or_draw(hand, "R13", "B2", R101)
    assert not answer.take and not answer.allowed
    assert (
        "must be used this turn" in answer.sentence and "88 points (needs 101)" in answer.sentence
    )
    opens = take_or_draw(hand, "R9", "B2", R101)
    assert opens.take and opens.allowed and "opens with 102 points" in opens.sentence


def uses_offered(rest, offered, indicator, opened, table):
    """Independently of take_or_draw: the hand after the take and the discard uses the offered
    tile (its melds' tiles read back as groups)."""
    if opened and table and could_lay_off(offered, table, indicator, R101) is not None:
        return True
    opening = best_opening(rest, indicator, R101, must_use=offered)
    in_meld = [m for m in opening.melds if offered in m.tiles]
    for meld in opening.melds:
        assert explain_group(meld.tiles, indicator, R101).valid
    if opened:
        return bool(in_meld)
    if in_meld and opening.points >= R101.opening_threshold:
        return True
    pairs = best_pairs_opening(rest, indicator, R101)
    return pairs.opens and any(offered in pair for pair in pairs.pairs)


@SETTINGS
@given(RANDOMS, st.booleans())
def test_101_takes_are_always_used_that_turn(rnd, opened):
    hand, offered, indicator, seen = deal(rnd, 21, 6)
    table = [read_meld("K4 K5 K6", indicator, R101)] if opened else []
    if (
        opened
        and Counter([*hand, offered, *seen, indicator, *table[0].tiles]).most_common(1)[0][1] > 2
    ):
        table = []
    answer = take_or_draw(hand, offered, indicator, R101, seen, table=table, opened=opened)
    if answer.take:
        rest = [*hand, offered]
        rest.remove(answer.discard)
        assert uses_offered(rest, offered, indicator, opened, table)
        assert answer.discard != offered
        assert not table or could_lay_off(answer.discard, table, indicator, R101) is None


def test_the_cli_answers_take_or_draw_as_text_and_json():
    hand = "R1 R2 R3 Y5 Y6 K5 K9 K10 K11 K12 B7 B8 B9 R6"
    run = subprocess.run(
        [str(ISTAKA), "hand", hand, "--indicator", "R5", "--offered", "Y7"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Take Y7, then discard K5")
    run = subprocess.run(
        [str(ISTAKA), "hand", hand, "--indicator", "R5", "--offered", "K1", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    data = json.loads(run.stdout)
    assert data["take"] is False and data["offered"] == "K1" and data["unseen"] == 90
    bad = subprocess.run(
        [str(ISTAKA), "hand", hand, "--indicator", "R5", "--offered", "R 7"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2 and "--offered: cannot read tile 'R 7'" in bad.stderr


def test_the_cli_answers_an_open_101_hand_against_the_table():
    run = subprocess.run(
        [str(ISTAKA), "hand", "R1 R9 Y12", "--indicator", "B2", "--rules", "okey101"]
        + ["--offered", "K7", "--table", "K4 K5 K6 | R7 Y7 B7", "--opened"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Take K7, then discard Y12: it goes onto meld 1 (end, as K7)")


def test_take_or_draw_takes_only_a_hand_waiting_for_its_draw():
    with pytest.raises(ValueError, match="hand of 14 tiles"):
        take_or_draw(parse_tiles("R1 R2 R3"), "Y7", "R5")


def test_an_open_101_hand_of_any_size_takes_a_tile_it_lays_off():
    table = [read_meld("K4 K5 K6", "B2", R101), read_meld("R7 Y7 B7", "B2", R101)]
    answer = take_or_draw("R1 R9 Y12", "K7", "B2", R101, table=table, opened=True)
    assert answer.take and answer.discard == Tile.parse("Y12") and answer.distance is None
    assert answer.sentence == (
        "Take K7, then discard Y12: it goes onto meld 1 (end, as K7), and leaves 10 points in "
        "hand instead of 22."
    )
    finish = take_or_draw("R1", "K7", "B2", R101, table=table, opened=True)
    assert finish.take and finish.sentence.endswith("and you finish.")
    stuck = take_or_draw("Y1 Y2", "Y3", "B2", R101, table=table, opened=True)
    assert not stuck.take and not stuck.allowed  # the meld would leave nothing to discard
    with pytest.raises(ValueError, match="fewer once open"):
        take_or_draw("R1 R9 Y12", "K7", "B2", R101, table=table)


@SETTINGS
@given(RANDOMS, st.integers(min_value=1, max_value=20))
def test_an_open_101_take_is_always_used_and_its_discard_draws_no_penalty(rnd, size):
    hand, offered, indicator, seen = deal(rnd, size, 6)
    table = []
    for _ in range(2):  # runs of three on the table, where the set still has the copies
        colour, start = rnd.choice("RYBK"), rnd.randint(1, 11)
        run = [Tile.of(colour, n) for n in range(start, start + 3)]
        laid = [*hand, offered, *seen, indicator, *(t for m in table for t in m.tiles), *run]
        if max(Counter(laid).values()) <= 2 and Counter(laid)[indicator] <= 1:
            table.append(read_meld(run, indicator, R101))
    answer = take_or_draw(hand, offered, indicator, R101, seen, table=table, opened=True)
    if answer.take:
        rest = [*hand, offered]
        rest.remove(answer.discard)
        laid_off = bool(table) and could_lay_off(offered, table, indicator, R101) is not None
        melded = best_opening(rest, indicator, R101, must_use=offered).melds
        assert laid_off or any(offered in m.tiles for m in melded)
        assert answer.discard in hand
        if len(rest) > laid_off:  # (a finish's last discard draws no penalty)
            assert not table or could_lay_off(answer.discard, table, indicator, R101) is None
            assert answer.discard != okey_for(indicator)


def test_101_table_melds_holding_the_offered_tiles_other_copies_are_refused():
    table = ["K7 K8 K9", "K5 K6 K7"]
    with pytest.raises(
        ImpossibleHandError, match=r"K7 is on the table 2 time\(s\) and in the hand"
    ):
        take_or_draw("R1 R9 Y12", "K7", "B2", R101, table=table, opened=True)
