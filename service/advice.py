"""The advice of ``/hand`` and of pushed tables, by game: which engine ranks the discards.

A classic hand, and any hand of ``rules.hand_size`` tiles (14; 21 in 101: the waits), gets
``okey.advise``.  A 101 hand of 22 tiles gets ``okey.okey101.advise_discard``: it ranks the
discards the way 101 is played (reach the opening threshold, then the smallest leftover; an okey
discard costs 101) and takes tens of milliseconds where ``okey.advise`` takes up to a second or
more.  Its ranking is put in the shape every client reads (``AdviceOut``): each option keeps
``discard``, ``distance`` (the distance to win after that discard), ``is_okey``, ``advised`` and
``sentence``, and adds the 101 figures ``opening_points``, ``opens``, ``pairs``, ``leftover`` and
``penalty``; ``improving`` is left empty (101 ranks by points, not by the tiles still to draw).

>>> from okey import Rules, Tile, parse_tiles
>>> hand = parse_tiles("R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6")
>>> hand.append(Tile.parse("K12"))
>>> advice = hand_advice(hand, Tile.parse("B2"), Rules.okey101(), [])
>>> advice["adviser"], advice["options"][0]["discard"], advice["options"][0]["leftover"]
('okey101', 'B9', 33)
>>> advice["sentence"]
'Discard B9: opens with 133 points (needs 101); 33 points left in hand.'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import okey
from okey import Rules, Tile
from okey.okey101 import DiscardOption, advise_discard, opening_threshold


def hand_advice(
    tiles: Sequence[Tile], indicator: Tile, rules: Rules, seen: Sequence[Tile]
) -> dict[str, Any]:
    """The advice for a checked hand of ``rules.hand_size`` or one more tiles, as JSON values."""
    if uses_okey101_adviser(len(tiles), rules):
        return okey101_advice(tiles, indicator, rules)
    return okey.advise(list(tiles), indicator, rules, seen=list(seen)).to_dict()


def uses_okey101_adviser(count: int, rules: Rules) -> bool:
    """A 101 hand holding one tile to discard (22) goes to ``okey.okey101``."""
    return rules.game == "okey101" and count == rules.hand_size + 1 <= rules.max_rack_tiles


def okey101_advice(tiles: Sequence[Tile], indicator: Tile, rules: Rules) -> dict[str, Any]:
    """``advise_discard``'s ranking in the shape of ``okey.advise(...).to_dict()``."""
    okey_tile = okey.okey_for(indicator)
    threshold = opening_threshold(rules)
    options = []
    for option in advise_discard(list(tiles), indicator, rules):
        rest = list(tiles)
        rest.remove(option.tile)
        options.append(
            {
                "discard": str(option.tile),
                "distance": okey.distance_to_win(rest, indicator, rules),
                "improving": [],
                "improving_copies": 0,
                "is_okey": option.tile == okey_tile,
                "advised": option.penalty == 0,
                "sentence": _sentence(option, threshold, rules),
                **{k: v for k, v in option.to_dict().items() if k != "tile"},
            }
        )
    best = options[0]
    return {
        "kind": "discard",
        "distance": best["distance"],
        "options": options,
        "waits": [],
        "sentence": best["sentence"],
        "adviser": "okey101",
    }


def _sentence(option: DiscardOption, threshold: int, rules: Rules) -> str:
    if option.opening_points >= threshold:
        opening = f"opens with {option.opening_points} points (needs {threshold})"
    elif option.opens:
        opening = f"opens with {option.pairs} pairs (needs {rules.pairs_opening_min})"
    else:
        opening = f"best opening {option.opening_points} points (needs {threshold})"
    text = f"Discard {option.tile}: {opening}; {option.leftover} points left in hand"
    if option.penalty:
        text += f"; this discard costs a {option.penalty} penalty"
    return text + "."
