"""The advice of ``/hand`` and of pushed tables, by game: which engine ranks the discards.

A classic hand, and any hand of ``rules.hand_size`` tiles (14; 21 in 101: the waits), gets
``okey.advise``.  A 101 hand of 22 tiles gets ``okey.okey101.advise_discard``: it ranks the
discards the way 101 is played (reach the opening threshold, then the smallest leftover; an okey
discard costs 101) and takes tens of milliseconds where ``okey.advise`` takes up to a second or
more.  Its ranking is put in the shape every client reads (``AdviceOut``): each option keeps
``discard``, ``distance`` (the distance to win after that discard), ``is_okey``, ``advised`` and
``sentence``, and adds the 101 figures ``opening_points``, ``opens``, ``pairs``, ``leftover`` and
``penalty``; ``improving`` is left empty (101 ranks by points, not by the tiles still to draw).
The conversion is ``vision.judge.okey101_advice``, shared with ``/scan`` and the camera stream.

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
from vision.judge import okey101_advice, uses_okey101_adviser


def hand_advice(
    tiles: Sequence[Tile], indicator: Tile, rules: Rules, seen: Sequence[Tile]
) -> dict[str, Any]:
    """The advice for a checked hand of ``rules.hand_size`` or one more tiles, as JSON values."""
    if uses_okey101_adviser(len(tiles), rules):
        return okey101_advice(tiles, indicator, rules).to_dict()
    return okey.advise(list(tiles), indicator, rules, seen=list(seen)).to_dict()
