"""Start-up of a process that runs the engine for long (the service, the CLI).

``load_tables`` loads the precomputed line table (``okey.line_table``, about 30-40 ms) and fills
the engine's search structures with one call of each kind, so no request pays for them; then
``gc.freeze()`` moves every object alive at that moment (the tables, the imported modules, the
engine's caches, each tracked first) into the collector's permanent generation: a full
collection never walks them again, so its pauses stay short in a process that runs for days
(``benchmarks/engine.py --gc-pauses``).

>>> load_tables(freeze=False)
"""

from __future__ import annotations

import gc
import sys

from okey.advice import advise
from okey.distance import distance_to_win
from okey.okey101 import best_opening
from okey.rules import Rules
from okey.tiles import Tile, parse_tiles

_HAND = "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 Y13 K1"
_HAND101 = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"


def load_tables(*, freeze: bool = True) -> None:
    """Load the engine's tables now (the first ``distance_to_win`` loads the line table), and
    with ``freeze`` keep them out of the collector's way."""
    indicator = Tile.parse("R5")
    hand = parse_tiles(_HAND)
    distance_to_win(hand[:14], indicator)
    advise(hand, indicator)
    best_opening(parse_tiles(_HAND101), Tile.parse("B2"), Rules.okey101())
    if freeze:
        gc.collect()
        for cache in _caches():
            _track(cache)
        gc.freeze()


def _caches() -> list[dict]:
    """The engine's per-process caches: the dicts of its modules (one level into lists and
    dicts of them) and the tables of its ``bounded_cache`` functions."""
    found: list[dict] = []
    for name, module in list(sys.modules.items()):
        if name != "okey" and not name.startswith("okey."):
            continue
        for value in vars(module).values():
            table = getattr(getattr(value, "cache_clear", None), "__self__", None)
            if isinstance(table, dict):
                found.append(table)
            elif isinstance(value, dict):
                found.append(value)
                found += [inner for inner in value.values() if isinstance(inner, dict)]
            elif isinstance(value, list):
                found += [inner for inner in value if isinstance(inner, dict)]
    return found


def _track(cache: dict) -> None:
    """Have the collector track ``cache`` (so that ``gc.freeze`` moves it to the permanent
    generation).  A dict holding nothing or only ints is untracked; it is tracked, in the
    youngest generation, once it holds a tuple or any other container, and from then on
    every full collection walks each of its entries: an empty cache at start-up that later
    fills (the run search's, tens of thousands of entries) cost several ms a collection."""
    if not gc.is_tracked(cache):
        key = object()
        cache[key] = []  # (a container: the dict is tracked from here on)
        del cache[key]
