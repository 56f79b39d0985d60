"""``istaka hand`` and ``istaka referee`` through the installed command (subprocess)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import okey
from okey import Rules, Tile, parse_tiles

ISTAKA = Path(sys.executable).with_name("istaka")


def istaka(*args):
    return subprocess.run(
        [str(ISTAKA), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_hand_prints_the_winning_arrangement():
    run = istaka("hand", "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6", "--indicator", "R5")
    assert run.returncode == 0, run.stderr
    assert "wins (runs and sets)" in run.stdout
    assert "K9 K10 K11 K12 R6" in run.stdout
    assert "okey plays as: R6=K13" in run.stdout


def test_hand_of_15_ranks_discards_as_json():
    run = istaka(
        "hand",
        "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13",
        "--indicator",
        "R5",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["distance_to_win"] == 0
    assert data["advice"]["options"][0]["discard"] == "Y13"


def test_hand_of_14_lists_the_waits_with_seen_tiles():
    run = istaka(
        "hand",
        "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 Y13",
        "--indicator",
        "R5",
        "--seen",
        "K13",
    )
    assert run.returncode == 0, run.stderr
    assert "1 tile from a win" in run.stdout
    assert "K13" in run.stdout


def test_referee_names_the_first_bad_group():
    run = istaka(
        "referee", "R1 R2 R3 | K12 Y12 K12 | B5 B6 B7 B8 | Y9 Y10 Y11 Y12", "--indicator", "R9"
    )
    assert run.returncode == 0, run.stderr
    assert "K12 Y12 K12: a set may not repeat a colour" in run.stdout


def test_referee_scores_an_okey_discard_as_json():
    run = istaka(
        "referee",
        "R1 R2 R3 | K5 Y5 B5 | B9 B10 B11 B12 | Y9 Y10 Y11 Y12",
        "--indicator",
        "R9",
        "--discard",
        "R10",
        "--json",
    )
    data = json.loads(run.stdout)
    assert (data["valid"], data["finish"], data["okey_discard"], data["points"]) == (
        True,
        "normal",
        True,
        4,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hand", "R1 R2 X9", "--indicator", "K7"], "cannot read tile"),
        (["hand", "R1 R2 R3", "--indicator", "K77"], "--indicator"),
        (["hand", "R1 R2 R3", "--indicator", "K7"], "got 3"),
        (["hand", "R1 R1 R1 R2", "--indicator", "K7"], "3 copies of R1"),
        (["referee", "R1 R2 R3 || K5", "--indicator", "K7"], "group 2 is empty"),
        (["referee", "R1 R2 R3", "--indicator", "K7", "--discard", "Q1"], "--discard"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    run = istaka(*args)
    assert run.returncode == 2
    assert message in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


HAND_101 = "R1 R2 R3 K7 Y7 B7 K1 K2 K3 B9 B10 B11 Y4 Y5 Y6 R10 R11 R12 K12 B12 Y12 R13"


def test_okey101_hands_use_the_101_report():
    run = istaka("hand", HAND_101, "--indicator", "B13", "--rules", "okey101")
    assert run.returncode == 0, run.stderr
    assert "best opening" in run.stdout


def test_okey101_hand_size_is_checked_like_the_classic_one():
    run = istaka("hand", "R1 R2 R3 K7 Y7 B7 K1", "--indicator", "B13", "--rules", "okey101")
    assert run.returncode == 2
    assert "has 21 tiles, or 22 before a discard; got 7" in run.stderr
    assert run.stdout == "" and "Traceback" not in run.stderr


# What rates a discard's risk counts, or is refused by name: never ignored.  Indicator R10: Y11
# is RISKY's discard, unless the next player took Y12 (then B1, same distance).
RISKY = "Y13 K6 Y6 B1 K7 K8 Y11 R13 K10 K13 R2 Y4 Y2 R4 K3"
HAND_22 = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"


def test_the_101_table_ranks_the_discards_without_an_offered_tile():
    args = ["hand", HAND_22, "--indicator", "B2", "--rules", "okey101", "--json"]
    plain = json.loads(istaka(*args).stdout)
    assert plain["advice"][0]["tile"] == "B9"
    run = istaka(*args, "--table", "B8 B7 B6", "--opened")
    assert run.returncode == 0, run.stderr
    advice = json.loads(run.stdout)["advice"]
    expected = okey.advise_hand(
        parse_tiles(HAND_22), Tile.parse("B2"), Rules.okey101(), table=["B8 B7 B6"], opened=True
    )
    assert [o["tile"] for o in advice] == [str(o.discard) for o in expected.options]
    by_tile = {o["tile"]: o for o in advice}
    assert by_tile["B9"]["penalty"] == 101 and advice[0]["tile"] not in {"B9", "B5"}
    text = istaka(*args[:-1], "--table", "B8 B7 B6", "--opened").stdout
    assert "discard advice (best first):\n  Y8:" in text


def test_the_next_players_takes_rate_the_discard_after_a_take():
    hand = RISKY.replace("Y4 ", "")  # the take of Y4 makes RISKY
    args = ["hand", hand, "--indicator", "R10", "--offered", "Y4", "--json"]
    assert json.loads(istaka(*args).stdout)["discard"] == "Y11"
    run = istaka(*args, "--next-takes", "Y12", "--next-discards", "K9")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["discard"] == "B1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--table", "K4 K5 K6"], "--table: melds on the table and opening are 101's"),
        (["--opened"], "--opened: melds on the table and opening are 101's"),
        (["--offered", "Y9", "--table", "K4 K5 K6"], "--table: melds on the table"),
        (["--next-takes", "R10 R10"], "--next-takes: R10 is in the hand 0 time(s)"),
        (["--next-discards", "K-9"], "--next-discards: cannot read tile 'K-9'"),
        (["--rules", "okey101", "--next-takes", "Y12"], "--next-takes: the right-hand player's"),
        (["--rules", "okey101", "--next-discards", "Y12"], "--next-discards: the right-hand"),
        (["--rules", "okey101", "--table", "K4 K5 K6 | K12 K13 K1"], "--table: 'K12 K13 K1' is"),
        (["--rules", "okey101", "--table", "K4 K5 K6 | K4 Y4 B4"], "--table: K4 is on the table"),
    ],
)
def test_the_other_games_risk_options_are_refused_by_name(args, message):
    tiles = HAND_22 if "okey101" in args else RISKY
    indicator = "B2" if "okey101" in args else "R10"
    if "--offered" in args:
        tiles = RISKY.replace("Y4 ", "")
    run = istaka("hand", tiles, "--indicator", indicator, *args)
    assert run.returncode == 2, run.stdout
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1
