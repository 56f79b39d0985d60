"""``istaka hand`` and ``istaka referee`` through the installed command (subprocess)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
