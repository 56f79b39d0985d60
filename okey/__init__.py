"""okey: the game engine of istaka.  Pure Python; no camera or ML imports.

>>> from okey import Tile, okey_for
>>> str(okey_for(Tile.parse("R4")))
'R5'
"""

from okey.errors import ImpossibleHandError, OkeyError, TileParseError
from okey.hand import check_possible, counts, okey_for
from okey.match import Match
from okey.okey101 import PlayerRound101, Round101
from okey.rules import Rules
from okey.scoring import ClassicRound
from okey.tiles import ALL_KINDS, COLOURS, FULL_SET, Tile, format_tiles, parse_tiles

__all__ = [
    "ALL_KINDS",
    "COLOURS",
    "ClassicRound",
    "FULL_SET",
    "ImpossibleHandError",
    "Match",
    "OkeyError",
    "PlayerRound101",
    "Round101",
    "Rules",
    "Tile",
    "TileParseError",
    "check_possible",
    "counts",
    "format_tiles",
    "okey_for",
    "parse_tiles",
]
