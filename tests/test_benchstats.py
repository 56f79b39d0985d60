"""The benchmarks' shared order statistics (benchmarks/benchstats.py)."""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "benchstats.py"
_SPEC = importlib.util.spec_from_file_location("benchstats", _PATH)
benchstats = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(benchstats)


def test_doctests() -> None:
    assert doctest.testmod(benchstats).failed == 0


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=60))
def test_p95_is_a_value_never_below_the_median(values: list[float]) -> None:
    p50, p95 = benchstats.quantile(values, 0.5), benchstats.quantile(values, 0.95)
    assert p95 in values and p50 <= p95 <= max(values)
    # nearest rank: at least 95 % of the values are at or below p95, and fewer strictly below
    assert sum(v <= p95 for v in values) >= 0.95 * len(values)
    assert sum(v < p95 for v in values) < 0.95 * len(values)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="no values"):
        benchstats.quantile([], 0.5)
    with pytest.raises(ValueError, match="0 < q <= 1"):
        benchstats.quantile([1.0], 0)
