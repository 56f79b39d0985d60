"""Indicator, okey and the checks that a hand can exist.

>>> str(okey_for(Tile.parse("K13")))
'K1'
>>> from okey.tiles import parse_tiles
>>> counts(parse_tiles("R1 R1 FJ"))[0], counts(parse_tiles("R1 R1 FJ"))[52]
(2, 1)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

from okey.errors import ArgumentError, ImpossibleHandError, OkeyError
from okey.inputs import read_rules, read_tile, read_tiles
from okey.rules import Rules
from okey.tiles import FALSE_JOKER_INDEX, NUM_KINDS, Tile


def okey_for(indicator: Tile | str) -> Tile:
    """The okey (wild tile) for an indicator: same colour, one higher, 13 wraps to 1."""
    if type(indicator) is not Tile:
        indicator = read_tile(indicator, "indicator")
    if indicator.is_false_joker:
        raise OkeyError("the indicator can never be a false joker (the dealer redraws)")
    return indicator.next()


def counts(tiles: Iterable[Tile]) -> list[int]:
    """The 53-slot count vector of a list of tiles."""
    vector = [0] * NUM_KINDS
    for tile in tiles:
        vector[tile.index] += 1
    return vector


def check_possible(
    tiles: Sequence[Tile],
    indicator: Tile | None = None,
    rules: Rules | None = None,
    *,
    max_tiles: int | None = None,
    others: Iterable[Tile] = (),
) -> None:
    """Raise ``ImpossibleHandError`` saying what is impossible about a hand, or return None.

    A set holds two of each tile; the indicator lies face up, so a hand holds at most one copy of
    it; a rack holds at most ``rules.max_rack_tiles`` (15 classic, 22 in 101).  ``others`` are tiles
    known to be elsewhere (seen discards) and count against the two copies too.
    """
    rules = read_rules(rules, Rules.classic())
    limit = rules.max_rack_tiles if max_tiles is None else max_tiles
    if not isinstance(others, (list, tuple)):
        others = read_tiles(others, "seen")  # read twice below
    if _plainly_possible(tiles, indicator, limit, others):
        return
    tiles = read_tiles(tiles, "tiles")
    others = read_tiles(others, "seen")
    if indicator is not None:
        indicator = read_tile(indicator, "indicator")
    if len(tiles) > limit:
        raise ImpossibleHandError(f"{len(tiles)} tiles: a {rules.title} rack holds at most {limit}")
    if indicator is not None and indicator.is_false_joker:
        raise ImpossibleHandError("the indicator can never be a false joker")
    tally = Counter(tiles)
    for tile, n in sorted(tally.items()):
        if n > 2:
            what = "false jokers" if tile.is_false_joker else f"copies of {tile}"
            raise ImpossibleHandError(f"{n} {what}: a set has only two")
    if indicator is not None and tally[indicator] > 1:
        raise ImpossibleHandError(
            f"two copies of {indicator}: one {indicator} is the indicator on the table"
        )
    seen = Counter(others)
    if indicator is not None:
        seen[indicator] += 1
    for tile, n in sorted(seen.items()):
        if tally[tile] + n > 2:
            raise ImpossibleHandError(
                f"{tile} is in the hand {tally[tile]} time(s) and seen {n} time(s): "
                "a set has only two"
            )


def _plainly_possible(
    tiles: Sequence[Tile], indicator: Tile | None, limit: int, others: Iterable[Tile]
) -> bool:
    """True for a hand ``check_possible`` accepts, counted quickly; False where it may not (the
    full checks then say why)."""
    if len(tiles) > limit:
        return False
    held = [0] * NUM_KINDS
    try:
        for tile in tiles:
            held[tile.index] += 1
        for tile in others:
            held[tile.index] += 1
        if indicator is not None:
            if type(indicator) is not Tile or indicator.index == FALSE_JOKER_INDEX:
                return False
            held[indicator.index] += 1
    except (AttributeError, TypeError, IndexError):
        return False
    return max(held) <= 2


HandStage = Literal["waits", "discard"]


def hand_stage(count: int, rules: Rules) -> HandStage:
    """What a hand of ``count`` tiles in play is waiting for: ``"waits"`` with ``rules.hand_size``
    tiles (a draw is due: 14 classic, 21 in 101), ``"discard"`` with one more (15, or 22); any
    other count raises ``ImpossibleHandError``.

    >>> hand_stage(15, Rules.classic()), hand_stage(21, Rules.okey101())
    ('discard', 'waits')
    """
    if type(rules) is not Rules:
        rules = read_rules(rules, Rules.classic())
    if type(count) is not int:
        raise ArgumentError("count", f"expected a number of tiles, got {type(count).__name__}")
    size = rules.hand_size
    if count == size:
        return "waits"
    if count == size + 1 and count <= rules.max_rack_tiles:
        return "discard"
    raise ImpossibleHandError(
        f"a {rules.title} hand has {size} tiles, or {size + 1} before a discard; got {count}"
    )


def check_playing_hand(
    tiles: Sequence[Tile], indicator: Tile, rules: Rules, seen: Iterable[Tile] = ()
) -> HandStage:
    """Raise unless ``tiles`` is a hand in play that can exist (``hand_stage``: 14 or 15 tiles
    classic, 21 or 22 in 101); return its stage."""
    tiles = read_tiles(tiles, "tiles")
    rules = read_rules(rules, Rules.classic())
    stage = hand_stage(len(tiles), rules)
    check_possible(tiles, indicator, rules, others=seen)
    return stage


def is_okey(tile: Tile, indicator: Tile) -> bool:
    return tile == okey_for(indicator)


def effective_index(tile: Tile, indicator: Tile) -> int:
    """The index a tile plays as: a false joker plays as the okey's face; -1 marks a wild okey."""
    okey = okey_for(indicator)
    if tile == okey:
        return -1
    if tile.index == FALSE_JOKER_INDEX:
        return okey.index
    return tile.index
