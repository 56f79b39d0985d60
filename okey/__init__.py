"""okey: the game engine of istaka.  Pure Python; no camera or ML imports.

>>> from okey import Tile, okey_for
>>> str(okey_for(Tile.parse("R4")))
'R5'
"""

from okey.advice import Advice, DiscardOption, advise
from okey.advice101 import advise101, advise_hand
from okey.distance import distance_to_win
from okey.errors import ArgumentError, ImpossibleHandError, OkeyError, RulesError, TileParseError
from okey.groups import GroupReading, explain_group, group_kinds
from okey.hand import check_playing_hand, check_possible, counts, hand_stage, okey_for
from okey.match import Match
from okey.okey101 import PlayerRound101, Round101
from okey.referee import GroupVerdict, RefereeVerdict, parse_groups, referee, split_discard
from okey.rules import Rules
from okey.scoring import ClassicRound
from okey.solver import Group, WinResult, check_win
from okey.startup import load_tables
from okey.tiles import ALL_KINDS, COLOURS, FULL_SET, Tile, format_tiles, parse_tiles
from okey.turn import TakeOrDraw, take_or_draw

__all__ = [
    "ALL_KINDS",
    "Advice",
    "ArgumentError",
    "COLOURS",
    "ClassicRound",
    "DiscardOption",
    "FULL_SET",
    "Group",
    "GroupReading",
    "GroupVerdict",
    "ImpossibleHandError",
    "Match",
    "OkeyError",
    "PlayerRound101",
    "RefereeVerdict",
    "Round101",
    "Rules",
    "RulesError",
    "TakeOrDraw",
    "Tile",
    "TileParseError",
    "WinResult",
    "advise",
    "advise101",
    "advise_hand",
    "check_playing_hand",
    "check_possible",
    "check_win",
    "counts",
    "distance_to_win",
    "explain_group",
    "format_tiles",
    "group_kinds",
    "hand_stage",
    "load_tables",
    "okey_for",
    "parse_groups",
    "parse_tiles",
    "referee",
    "split_discard",
    "take_or_draw",
]
