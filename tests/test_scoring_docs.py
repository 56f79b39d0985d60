"""The scoring docs stay true: their examples run, and the rules-coverage table names real tests."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

import okey.match
import okey.melding
import okey.okey101
import okey.scoring

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "scoring.md"


@pytest.mark.parametrize("module", [okey.scoring, okey.match, okey.okey101, okey.melding])
def test_module_examples_run(module):
    failures, tried = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried > 0
    assert failures == 0


def test_doc_session_runs():
    failures, tried = doctest.testfile(str(DOC), module_relative=False)
    assert tried > 0
    assert failures == 0


def test_every_coverage_row_names_existing_tests():
    table = DOC.read_text(encoding="utf-8").split("## Rules coverage", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    defined: dict[str, set[str]] = {}
    for path in ROOT.glob("tests/test_*.py"):
        defined[path.name] = set(re.findall(r"^def (test_\w+)", path.read_text(), re.M))
    assert len(rows) > 40
    for row in rows[1:]:
        cells = row.split("|")
        named = re.findall(r"`(?:(test_\w+\.py)::)?(test_\w+)`", cells[2])
        assert named, f"row without a test: {row}"
        current = None
        for file, name in named:
            current = file or current
            assert current is not None, row
            assert name in defined[current], f"{current}::{name} does not exist"
