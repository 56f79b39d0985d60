"""One group of tiles: can it be a run, a set or a pair, and if not, why not.

Okeys (both copies of the indicator + 1) are wild; a false joker plays as the okey's face.

>>> from okey import Rules, Tile, parse_tiles
>>> sorted(group_kinds(parse_tiles("R12 R13 R1"), Tile.parse("K7"), Rules.classic()))
['run']
>>> sorted(group_kinds(parse_tiles("R13 R1 R2"), Tile.parse("K7"), Rules.classic()))
[]
>>> explain_group(parse_tiles("K12 Y12 K12"), Tile.parse("R3"), Rules.classic()).reason
'K12 Y12 K12: a set may not repeat a colour'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from okey.hand import okey_for
from okey.inputs import read_rules, read_tile, read_tiles
from okey.rules import Rules
from okey.tiles import COLOURS, Tile, format_tiles

KINDS = ("run", "set", "pair")


@dataclass(frozen=True, slots=True)
class GroupReading:
    """What a group of tiles can be.

    ``kinds`` is the set of ``"run"``, ``"set"``, ``"pair"`` the tiles can form; ``stands_for``
    gives, for the first kind that fits (run, then set, then pair), the tile each position plays
    as (an okey's chosen face, a false joker's okey face); ``reason`` says in plain words why the
    tiles form no group (empty when they do).
    """

    tiles: tuple[Tile, ...]
    kinds: frozenset[str]
    stands_for: tuple[Tile, ...]
    reason: str

    @property
    def valid(self) -> bool:
        return bool(self.kinds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tiles": [str(t) for t in self.tiles],
            "valid": self.valid,
            "kinds": sorted(self.kinds),
            "stands_for": [str(t) for t in self.stands_for],
            "reason": self.reason,
        }


def plays_as(tiles: Sequence[Tile], indicator: Tile) -> tuple[list[Tile | None], int]:
    """Each tile's face in play (``None`` for a wild okey) and the number of okeys."""
    okey = okey_for(indicator)
    faces: list[Tile | None] = []
    for tile in tiles:
        if tile == okey:
            faces.append(None)
        elif tile.is_false_joker:
            faces.append(okey)
        else:
            faces.append(tile)
    return faces, sum(1 for f in faces if f is None)


def group_kinds(
    tiles: Sequence[Tile], indicator: Tile, rules: Rules | None = None
) -> frozenset[str]:
    """The kinds (``"run"``, ``"set"``, ``"pair"``) the tiles can form as one group, or none."""
    return explain_group(tiles, indicator, rules).kinds


def explain_group(
    tiles: Sequence[Tile], indicator: Tile, rules: Rules | None = None
) -> GroupReading:
    """Read one group: its possible kinds, the faces the okeys take, or why it is no group."""
    tiles = tuple(read_tiles(tiles, "tiles"))
    indicator = read_tile(indicator, "indicator")
    rules = read_rules(rules, Rules.classic())
    faces, _ = plays_as(tiles, indicator)
    run = _run_faces(faces, rules)
    meld_set = _set_faces(faces)
    pair = _pair_faces(faces, rules)
    kinds = frozenset(
        kind for kind, fit in (("run", run), ("set", meld_set), ("pair", pair)) if fit is not None
    )
    stands_for = run or meld_set or pair or ()
    reason = "" if kinds else f"{format_tiles(tiles)}: {_why_not(faces, rules)}"
    return GroupReading(tiles, kinds, tuple(stands_for), reason)


def _run_faces(faces: list[Tile | None], rules: Rules) -> list[Tile] | None:
    """The faces of a run the tiles form, in the order given, or None.

    A run is 3..13 tiles of one colour in consecutive numbers; 1 is low (1-2-3) or, with
    ``wrap_13_1``, high (12-13-1); 13-1-2 never.  Okeys fill any position.
    """
    size = len(faces)
    if not 3 <= size <= min(13, rules.max_run_length):
        return None
    real = [f for f in faces if f is not None]
    colours = {f.colour for f in real}
    if len(colours) > 1:
        return None
    colour = colours.pop() if colours else "R"
    # Position of each number on the line 1..13, and 14 for a high 1 when wrapping.
    for high_one in (False, True) if rules.wrap_13_1 else (False,):
        positions = [14 if (high_one and f.number == 1) else f.number for f in real]
        if len(set(positions)) != len(positions):
            continue
        low, high = (2, 14) if high_one else (1, 13)
        first = max(low, max(positions, default=low) - size + 1)
        if first > min(positions, default=first) or first + size - 1 > high:
            continue
        return _fill_run(faces, colour, first, size)
    return None


def _fill_run(faces: list[Tile | None], colour: str, first: int, size: int) -> list[Tile]:
    # Okeys take the numbers the real tiles leave free, lowest first; the result keeps input order.
    line = list(range(first, first + size))
    taken = {14 if (f.number == 1 and 14 in line) else f.number for f in faces if f is not None}
    free = iter(p for p in line if p not in taken)
    return [f if f is not None else Tile.of(colour, (next(free) - 1) % 13 + 1) for f in faces]


def _set_faces(faces: list[Tile | None]) -> list[Tile] | None:
    """Faces of a set (3 or 4 tiles, one number, distinct colours), or None."""
    if not 3 <= len(faces) <= 4:
        return None
    real = [f for f in faces if f is not None]
    numbers = {f.number for f in real}
    colours = [f.colour for f in real]
    if len(numbers) > 1 or len(set(colours)) != len(colours):
        return None
    number = numbers.pop() if numbers else 1
    free = iter(c for c in COLOURS if c not in colours)
    return [f if f is not None else Tile.of(next(free), number) for f in faces]


def _pair_faces(faces: list[Tile | None], rules: Rules) -> list[Tile] | None:
    """Faces of a pair (two identical tiles; an okey pairs with anything), or None."""
    if len(faces) != 2:
        return None
    a, b = faces
    if a is not None and b is not None:
        return [a, b] if a == b else None
    if a is None and b is None:
        if not rules.okey_pair_with_okey:
            return None
        return [Tile.of("R", 1), Tile.of("R", 1)]
    face = a if a is not None else b
    return [face, face]


def _why_not(faces: list[Tile | None], rules: Rules) -> str:
    """The plain-words reason why tiles form no group (called only when none fits)."""
    size = len(faces)
    real = [f for f in faces if f is not None]
    if size == 2:
        if all(f is None for f in faces):
            return "two okeys do not form a pair under these rules"
        return "a pair needs two identical tiles (same colour and number)"
    if size < 2:
        return "a group needs at least 3 tiles (or 2 for a pair)"
    numbers = {f.number for f in real}
    colours = [f.colour for f in real]
    if len(numbers) == 1:
        if size > 4:
            return "a set has at most 4 tiles, one of each colour"
        return "a set may not repeat a colour"
    if len(set(colours)) > 1:
        if len(set(colours)) == len(colours) and len(numbers) <= 1:
            return "a set needs one number in different colours"
        return "a run must be all one colour, and a set all one number"
    if size > 13:
        return "a run has at most 13 tiles"
    ordered = sorted(f.number for f in real)
    if len(set(ordered)) != len(ordered):
        return "a run may not repeat a number"
    if 13 in ordered and 1 in ordered:
        if not rules.wrap_13_1:
            return "a run may not pass from 13 to 1 under these rules"
        if 2 in ordered:
            return "1 is either low (1-2-3) or high (12-13-1), never both: 13-1-2 is not a run"
    return "the numbers are not consecutive (okeys can fill only as many gaps as there are okeys)"
