"""The one input contract of the engine's public functions.

A hand (and ``seen``, ``offered``, a group) is tiles or notation: a list or tuple of ``Tile`` or
tile strings, or one string of notation (``"R1 R2 R3"``, read as a hand, never letter by
letter).  An indicator (or a discard) is a ``Tile`` or one tile's notation.  ``rules`` is a
``Rules``, a preset's name or None (the default).  Anything else raises ``ArgumentError``
naming the argument; a string that is no tile raises ``TileParseError`` naming it.

>>> [str(t) for t in read_tiles("R1 R2 FJ")]
['R1', 'R2', 'FJ']
>>> read_tiles(5, "seen")
Traceback (most recent call last):
...
okey.errors.ArgumentError: seen: expected tiles or notation such as 'R1 R2 R3', got int
"""

from __future__ import annotations

from collections.abc import Iterable

from okey.errors import ArgumentError, TileParseError
from okey.rules import PRESETS, Rules
from okey.tiles import Tile, parse_tiles


def read_tiles(value: object, argument: str = "tiles") -> list[Tile]:
    """A list of tiles from tiles or notation (see the module docstring)."""
    if isinstance(value, str):
        try:
            return parse_tiles(value)
        except TileParseError as exc:
            raise TileParseError(exc.token, f"{exc.reason} (in {argument})") from None
    if isinstance(value, Tile) or not isinstance(value, Iterable):
        raise ArgumentError(
            argument,
            f"expected tiles or notation such as 'R1 R2 R3', got {type(value).__name__}",
        )
    tiles = []
    for position, item in enumerate(value, start=1):
        if type(item) is Tile:
            tiles.append(item)
        elif isinstance(item, str):
            try:
                tiles.append(Tile.parse(item))
            except TileParseError as exc:
                raise TileParseError(exc.token, f"{exc.reason} (in {argument})") from None
        else:
            raise ArgumentError(
                argument,
                f"item {position} is {item!r} ({type(item).__name__}); "
                "expected a Tile or notation such as 'R5'",
            )
    return tiles


def read_tile(value: object, argument: str = "indicator") -> Tile:
    """One tile from a ``Tile`` or its notation."""
    if type(value) is Tile:
        return value
    if isinstance(value, str):
        try:
            return Tile.parse(value)
        except TileParseError as exc:
            raise TileParseError(exc.token, f"{exc.reason} (in {argument})") from None
    raise ArgumentError(
        argument, f"expected a Tile or notation such as 'R5', got {type(value).__name__}"
    )


def read_rules(value: object, default: Rules) -> Rules:
    """``value`` as a ``Rules``: itself, a preset by name, or ``default`` for None."""
    if value is None:
        return default
    if type(value) is Rules:
        return value
    if isinstance(value, str):
        if value not in PRESETS:
            raise ArgumentError("rules", f"unknown preset {value!r}: choose one of {list(PRESETS)}")
        return Rules.preset(value)
    raise ArgumentError(
        "rules", f"expected a Rules (or a preset's name), got {type(value).__name__}"
    )


def read_hand(
    tiles: object, indicator: object, rules: object, seen: object = (), default: Rules | None = None
) -> tuple[list[Tile], Tile, Rules, list[Tile]]:
    """The usual arguments of a public function, read (``default``: the classic rules)."""
    return (
        read_tiles(tiles, "tiles"),
        read_tile(indicator, "indicator"),
        read_rules(rules, default or Rules.classic()),
        read_tiles(seen, "seen"),
    )
