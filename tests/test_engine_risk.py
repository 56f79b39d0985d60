"""The discard against the table (issue 34, item 2): the right-hand player's takes and discards
rate each classic discard's risk; in 101 a discard that fits a table meld is never advised."""

import random
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from okey import FULL_SET, Rules, Tile, advise, advise_hand, parse_tiles
from okey.advice import discard_risk
from okey.okey101 import could_lay_off, read_meld

HAND = "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 Y13 K1"  # indicator R5: Y13 and K1 tie


def test_a_discard_the_next_player_collects_ranks_after_an_equal_one():
    plain = advise(HAND, "R5")
    assert plain.best.discard == Tile.parse("Y13") and plain.best.risk is None
    wary = advise(HAND, "R5", next_takes=["Y12"])
    assert wary.best.discard == Tile.parse("K1")
    assert wary.best.sentence.endswith(
        "Not Y13: the next player took Y12 and may be collecting it."
    )
    y13 = next(o for o in wary.options if o.discard == Tile.parse("Y13"))
    assert y13.risk == "high" and y13.to_dict()["risk"] == "high"
    assert y13.distance == wary.best.distance  # the risk only reorders equal distances


def test_what_the_next_player_threw_marks_a_discard_low():
    advice = advise(HAND, "R5", next_takes=["K2"], next_discards=["Y12"])
    assert advice.best.discard == Tile.parse("Y13") and advice.best.risk == "low"
    assert "Not" not in advice.best.sentence


def test_risk_reads_sets_runs_and_the_wrap():
    okey = Tile.parse("R6")
    k1 = Tile.parse("K1")
    assert discard_risk(k1, [Tile.parse("K13")], [], okey, True)[0] == "high"
    assert discard_risk(k1, [Tile.parse("K13")], [], okey, False)[0] is None
    assert discard_risk(k1, [Tile.parse("Y1")], [], okey, True)[0] == "high"
    assert discard_risk(k1, [Tile.parse("K1")], [], okey, True)[0] == "high"  # a pair
    assert discard_risk(k1, [Tile.parse("B7")], [], okey, True)[0] is None


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 4))
def test_risk_never_costs_distance(seed, takes):
    rnd = random.Random(seed)
    pool = list(FULL_SET)
    rnd.shuffle(pool)
    indicator = next(t for t in pool if not t.is_false_joker)
    pool.remove(indicator)
    hand, next_takes = pool[:15], pool[15 : 15 + takes]
    plain = advise(hand, indicator)
    wary = advise(hand, indicator, next_takes=next_takes)
    assert wary.best.distance == plain.best.distance
    assert sorted(o.discard for o in wary.options) == sorted(o.discard for o in plain.options)


def test_101_never_advises_a_discard_that_fits_a_table_meld():
    hand = parse_tiles(
        "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"
    )
    rules = Rules.okey101()
    blind = advise_hand(hand, "B2", rules)
    assert blind.best.discard == Tile.parse("B9")
    table = [read_meld("B10 B11 B12", "B2", rules)]  # B9 goes onto it
    wary = advise_hand(hand, "B2", rules, table=table)
    assert wary.best.discard != Tile.parse("B9") and wary.best.advised
    assert could_lay_off(wary.best.discard, table, "B2", rules) is None
    b9 = next(o for o in wary.options if o.discard == Tile.parse("B9"))
    assert not b9.advised and "101 penalty" in b9.sentence
    assert all(o.advised for o in wary.options[: wary.options.index(b9)])


def test_the_cli_ranks_a_discard_the_next_player_collects_later():
    istaka = Path(sys.executable).with_name("istaka")
    run = subprocess.run(
        [str(istaka), "hand", HAND, "--indicator", "R5", "--next-takes", "Y12"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "best discard: Discard K1:" in run.stdout
    assert "Not Y13: the next player took Y12" in run.stdout
