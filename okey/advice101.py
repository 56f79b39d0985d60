"""Discard advice in either game, one entry point: ``advise_hand``.

A classic hand goes to ``okey.advise``.  A 101 hand is answered the 101 way, in the same
``okey.Advice`` shape (``adviser`` "okey101"):

* 22 tiles (a discard is due): every discard ranked by ``okey.okey101.advise_discard`` (reach the
  opening threshold, then the smallest leftover; an okey discard costs 101).  Each option keeps
  what a classic option says (``distance`` to win after it, ``is_okey``, ``advised``: false for a
  discard drawing a penalty, ``sentence``); its ``improving`` tiles are the unseen tiles whose draw
  would let the rest open when it does not yet (for the ``IMPROVING_RANKS`` best discards), and
  ``figures`` holds the 101 figures (``opening_points``, ``opens``, ``pairs``, ``leftover``,
  ``penalty``, flattened into ``to_dict()``).
* 21 tiles (a draw is due): kind "waits"; the waits are the unseen tiles whose draw lets the hand
  open, when it does not yet; the sentence gives the best opening and the points left in hand.

``seen`` tiles (discards on the table) are not unseen: they are never counted as draws, and the
distance to win knows they cannot come.

>>> from okey import Rules, Tile, parse_tiles
>>> hand = parse_tiles("R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6")
>>> hand.append(Tile.parse("K12"))
>>> advice = advise_hand(hand, Tile.parse("B2"), Rules.okey101()).to_dict()
>>> advice["adviser"], advice["options"][0]["discard"], advice["options"][0]["leftover"]
('okey101', 'B9', 33)
>>> advice["sentence"]
'Discard B9: opens with 133 points (needs 101); 33 points left in hand.'
>>> advise_hand(hand[:21], Tile.parse("B2"), Rules.okey101()).sentence
'Opens with 121 points (needs 101); 42 points left in hand before the draw.'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from okey.advice import Advice, DiscardOption, advise, tile_list
from okey.distance import distance_to_win, unseen_counts
from okey.hand import check_playing_hand, okey_for
from okey.inputs import read_hand, read_rules
from okey.melding import MeldSearch
from okey.okey101 import (
    DiscardFigures,
    Meld,
    advise_discard,
    best_opening,
    best_pairs_opening,
    min_leftover,
    opening_threshold,
)
from okey.rules import Rules
from okey.tiles import ALL_KINDS, Tile

# Discards (best first) whose tiles that would open are listed: each costs tens of opening
# searches, and the player weighs the first few.
IMPROVING_RANKS = 3


def advise_hand(
    hand: Sequence[Tile],
    indicator: Tile,
    rules: Rules,
    seen: Sequence[Tile] = (),
    *,
    table: Iterable[Meld | str | Iterable[Tile | str]] = (),
    opened: bool = False,
    next_takes: Iterable[Tile | str] = (),
    next_discards: Iterable[Tile | str] = (),
) -> Advice:
    """The advice for a hand in play of either game (see the module docstring): ``table`` and
    ``opened`` for 101, ``next_takes`` and ``next_discards`` (the right-hand player's) classic."""
    rules = read_rules(rules, Rules.classic())
    if rules.game == "okey101":
        return advise101(hand, indicator, rules, seen, table=table, opened=opened)
    return advise(hand, indicator, rules, seen, next_takes=next_takes, next_discards=next_discards)


def advise101(
    hand: Sequence[Tile],
    indicator: Tile,
    rules: Rules | None = None,
    seen: Sequence[Tile] = (),
    *,
    table: Iterable[Meld | str | Iterable[Tile | str]] = (),
    opened: bool = False,
) -> Advice:
    """A 101 hand of 21 tiles (its waits) or 22 (its discards ranked), in ``Advice``'s shape.

    ``table``: the melds on the table; a discard that could be laid off on one draws the 101
    penalty, so it is not advised and ranks after every discard that draws none."""
    tiles, indicator, rules, seen = read_hand(hand, indicator, rules, seen, Rules.okey101())
    stage = check_playing_hand(tiles, indicator, rules, seen)
    unseen = unseen_counts(tiles, indicator, seen)
    threshold = opening_threshold(rules)
    if stage == "waits":
        return _waits(tiles, indicator, rules, seen, unseen, threshold)
    okey = okey_for(indicator)
    options = []
    ranked = advise_discard(tiles, indicator, rules, table=table, opened=opened)
    ranked.sort(key=lambda figures: figures.penalty > 0)  # (stable: the ranking otherwise)
    for rank, figures in enumerate(ranked):
        rest = list(tiles)
        rest.remove(figures.tile)
        left = list(unseen)  # the discard lies on the table now
        left[figures.tile.index] = max(0, left[figures.tile.index] - 1)
        improving = (
            _opening_draws(rest, indicator, rules, left)
            if rank < IMPROVING_RANKS and not figures.opens
            else ()
        )
        options.append(
            DiscardOption(
                discard=figures.tile,
                distance=distance_to_win(rest, indicator, rules, [*seen, figures.tile]),
                improving=improving,
                is_okey=figures.tile == okey,
                advised=figures.penalty == 0,
                sentence=_sentence(figures, improving, threshold, rules),
                figures=figures,
            )
        )
    best = options[0]
    return Advice(
        "discard", best.distance, tuple(options), sentence=best.sentence, adviser="okey101"
    )


def _waits(
    tiles: list[Tile],
    indicator: Tile,
    rules: Rules,
    seen: list[Tile],
    unseen: list[int],
    threshold: int,
) -> Advice:
    opening = best_opening(tiles, indicator, rules)
    pairs = best_pairs_opening(tiles, indicator, rules)
    distance = distance_to_win(tiles, indicator, rules, seen)
    if opening.opens or pairs.opens:
        leftover = min_leftover(tiles, indicator, rules).penalty
        how = (
            f"{opening.points} points (needs {threshold})"
            if opening.opens
            else f"{pairs.count} pairs (needs {rules.pairs_opening_min})"
        )
        sentence = f"Opens with {how}; {leftover} points left in hand before the draw."
        return Advice("waits", distance, sentence=sentence, adviser="okey101")
    waits = _opening_draws(tiles, indicator, rules, unseen)
    sentence = f"Best opening {opening.points} points (needs {threshold})"
    if waits:
        copies = sum(n for _, n in waits)
        sentence += f"; {copies} unseen tiles would open it: {tile_list(waits)}."
    else:
        sentence += "; no single draw opens it."
    return Advice("waits", distance, waits=waits, sentence=sentence, adviser="okey101")


def _opening_draws(
    tiles: list[Tile], indicator: Tile, rules: Rules, unseen: list[int]
) -> tuple[tuple[Tile, int], ...]:
    """The unseen tiles whose draw lets ``tiles`` open (melds or pairs), most copies first.

    Only a tile that can share a meld or a pair with the hand can raise either: one of the same
    number, of the same colour within two, the okey or a false joker; with two okeys in hand any
    tile can (it makes a run with them)."""
    okey = okey_for(indicator)
    held = {okey if t.is_false_joker else t for t in tiles if t != okey}
    okeys = sum(1 for t in tiles if t == okey)
    threshold = opening_threshold(rules)
    search = MeldSearch(indicator, wrap=rules.wrap_13_1, max_run_length=rules.max_run_length)
    found = []
    for tile in ALL_KINDS:
        if unseen[tile.index] <= 0:
            continue
        face = okey if tile.is_false_joker else tile
        if tile != okey and okeys < 2 and not _near(face, held):
            continue
        drawn = [*tiles, tile]
        if (
            _pairs_count(drawn, okey, rules) >= rules.pairs_opening_min
            or search.value(*search.pack(drawn)[:2]) >= threshold
        ):
            found.append((tile, unseen[tile.index]))
    found.sort(key=lambda tc: (-tc[1], tc[0]))
    return tuple(found)


def _pairs_count(tiles: list[Tile], okey: Tile, rules: Rules) -> int:
    """``best_pairs_opening(tiles, ...).count`` from counts alone."""
    faces = Counter(okey if t.is_false_joker else t for t in tiles if t != okey)
    okeys = len(tiles) - sum(faces.values())
    full = sum(n // 2 for n in faces.values())
    with_okey = min(okeys, sum(n % 2 for n in faces.values()))
    spare = okeys - with_okey
    both = spare == 2 and (rules.okey_pair_with_okey or full > 0)
    return full + with_okey + both


def _near(face: Tile, held: set[Tile]) -> bool:
    """Whether ``face`` shares a number, or a colour within two numbers, with a held face."""
    for other in held:
        if other.number == face.number:
            return True
        if other.colour == face.colour:
            gap = abs((other.number or 0) - (face.number or 0))
            if gap <= 2:
                return True
    return False


def _sentence(
    figures: DiscardFigures,
    improving: tuple[tuple[Tile, int], ...],
    threshold: int,
    rules: Rules,
) -> str:
    if figures.opening_points >= threshold:
        opening = f"opens with {figures.opening_points} points (needs {threshold})"
    elif figures.opens:
        opening = f"opens with {figures.pairs} pairs (needs {rules.pairs_opening_min})"
    else:
        opening = f"best opening {figures.opening_points} points (needs {threshold})"
    text = f"Discard {figures.tile}: {opening}; {figures.leftover} points left in hand"
    if figures.penalty:
        text += f"; this discard costs a {figures.penalty} penalty"
    if improving:
        copies = sum(n for _, n in improving)
        text += f"; {copies} unseen tiles would open it: {tile_list(improving)}"
    return text + "."
