"""Order statistics shared by the benchmark scripts (run as ``python benchmarks/<name>.py``).

``quantile`` is the nearest-rank quantile: the smallest value with at least ``q`` of the values at
or below it, so p95 is never below the median, whatever the count.

>>> quantile([3.0, 1.0, 2.0], 0.5), quantile([1.0, 2.0], 0.95), quantile(list(range(1, 101)), 0.95)
(2.0, 2.0, 95)
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def quantile(values: Sequence[float], q: float) -> float:
    """Nearest-rank ``q`` quantile (0 < q <= 1) of a non-empty sequence."""
    if not values:
        raise ValueError("quantile of no values")
    if not 0 < q <= 1:
        raise ValueError(f"quantile needs 0 < q <= 1, got {q}")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]
