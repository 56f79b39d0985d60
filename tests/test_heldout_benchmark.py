"""benchmarks/heldout.py: the classifier read from the true (turned) boxes of a rendered set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


def _module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("heldout", REPO / "benchmarks" / "heldout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_long_side_stands_tells_upright_sideways_and_upside_down() -> None:
    stands = _module().long_side_stands
    tall = np.float32([[0, 0], [30, 0], [30, 40], [0, 40]])  # top-left first, taller than wide
    squashed = np.float32([[0, 0], [40, 0], [40, 30], [0, 30]])  # wider than tall
    assert stands(tall) == "long side: upright"
    assert stands(np.roll(tall, 2, axis=0)) == "long side: upside down"  # bottom-right first
    assert stands(squashed) == "long side: sideways"
    # a tile lying on its side, its top to the right: the long side's quarter turn stands it up
    assert stands(np.roll(squashed, -1, axis=0)) == "long side: upright"


@pytest.mark.slow
def test_heldout_reads_turned_boxes_of_a_rendered_set(tmp_path: Path) -> None:
    from istaka.cli import main

    assert main(["synth", "--n", "2", "--seed", "5", "--out", str(tmp_path), "--quiet"]) == 0
    run = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "heldout.py"), "--data", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "from the true turned boxes" in run.stdout
    rows = {line.split()[0]: line for line in run.stdout.splitlines() if line.strip()}
    assert "all" in rows and "long side: upright" in run.stdout
    n_all = int(rows["all"].split()[1])
    stood = [line for line in run.stdout.splitlines() if line.startswith("long side:")]
    assert sum(int(line.split()[-3]) for line in stood) == n_all  # every tile in one group
