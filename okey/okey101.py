"""101 Okey analysis: openings, leftovers, lay-offs, discard advice and round scoring.

docs/rules.md.  An opening lays runs (3+ of one colour, no 13->1) and sets (3-4 distinct
colours) worth at least 101 (``rules.opening_threshold``), or at least five pairs.  The solver
is exact: it finds the largest total face value of disjoint melds, an okey worth the tile it
stands for.

>>> from okey import Rules, parse_tiles, Tile
>>> hand = parse_tiles("R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6")
>>> opening = best_opening(hand, Tile.parse("B2"), Rules.okey101())
>>> opening.points, opening.opens
(121, True)
>>> [str(m) for m in opening.melds]
['R10 R11 R12', 'R13 Y13 B13 K13', 'Y1 Y2 Y3', 'K9 K10 K11']
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from okey.errors import ImpossibleHandError, OkeyError
from okey.hand import check_possible, okey_for
from okey.inputs import read_hand, read_tile
from okey.melding import Meld, MeldSearch
from okey.rules import Rules
from okey.tiles import FALSE_JOKER_INDEX, Tile, parse_tiles

# An okey left in hand at the end of a round costs its printed number, like any tile left, plus
# this extra penalty (docs/rules.md, "Held okey").
OKEY_IN_HAND_PENALTY = 101
NEVER_OPENED_PENALTY = 202
FINISH_SCORE = -101
EXTRA_PENALTY = 101
# Extra 101 penalties of docs/rules.md, by the name a round summary uses for them.
EXTRA_PENALTIES = {
    "okey_discard": "discarded an okey",
    "failed_opening": "laid an opening under the threshold and took it back",
    "lay_off_discard": "discarded a tile that could be added to a meld on the table",
    "took_back": "laid several tiles and took them back",
}

__all__ = [
    "EXTRA_PENALTIES",
    "DiscardFigures",
    "LayOff",
    "Leftover",
    "Meld",
    "Opening",
    "PairsOpening",
    "PlayerRound101",
    "Round101",
    "advise_discard",
    "best_opening",
    "best_pairs_opening",
    "could_lay_off",
    "describe_hand",
    "format_hand_report",
    "hand_value",
    "lay_offs",
    "match_totals",
    "min_leftover",
    "okey_in_hand_cost",
    "opening_threshold",
    "read_meld",
    "score_round",
]


# --- openings -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Opening:
    """The best meld opening of a hand: ``points`` (exact maximum), ``melds``, ``remaining`` and
    whether it reaches ``threshold``."""

    points: int
    melds: tuple[Meld, ...]
    remaining: tuple[Tile, ...]
    threshold: int

    @property
    def opens(self) -> bool:
        return self.points >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": self.points,
            "threshold": self.threshold,
            "opens": self.opens,
            "melds": [m.to_dict() for m in self.melds],
            "remaining": [str(t) for t in self.remaining],
        }


@dataclass(frozen=True, slots=True)
class PairsOpening:
    """The most pairs of identical tiles a hand can lay (an okey pairs with anything)."""

    pairs: tuple[tuple[Tile, Tile], ...]
    remaining: tuple[Tile, ...]
    minimum: int

    @property
    def count(self) -> int:
        return len(self.pairs)

    @property
    def opens(self) -> bool:
        return self.count >= self.minimum

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "minimum": self.minimum,
            "opens": self.opens,
            "pairs": [[str(a), str(b)] for a, b in self.pairs],
            "remaining": [str(t) for t in self.remaining],
        }


@dataclass(frozen=True, slots=True)
class Leftover:
    """The smallest penalty a hand can be left with after laying every meld it can: face values of
    the tiles left, an okey left in hand costing 101."""

    penalty: int
    melds: tuple[Meld, ...]
    remaining: tuple[Tile, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "penalty": self.penalty,
            "melds": [m.to_dict() for m in self.melds],
            "remaining": [str(t) for t in self.remaining],
        }


def _prepare(
    tiles: str | Iterable[Tile | str], indicator: Tile | str, rules: Rules | None
) -> tuple[list[Tile], Tile, Rules]:
    hand, indicator, rules, _ = read_hand(tiles, indicator, rules, (), Rules.okey101())
    check_possible(hand, indicator, rules)
    return hand, indicator, rules


def _plain_hand(tiles: object, indicator: object, rules: Rules) -> list[int] | None:
    """The tile indices of a hand given as a list or tuple of tiles, with a tile as the
    indicator (no false joker), at most ``rules.max_rack_tiles`` of them, else None (``_prepare``
    then reads it and says what is wrong).  ``MeldSearch.best_of_possible`` checks the rest of
    what ``check_possible`` asks (two of each kind at most, with the indicator)."""
    if type(indicator) is not Tile or type(tiles) not in (list, tuple):
        return None
    if len(tiles) > rules.max_rack_tiles or set(map(type, tiles)) != {Tile}:
        return None
    if indicator.index == FALSE_JOKER_INDEX:
        return None
    return [t.index for t in tiles]


def opening_threshold(rules: Rules, earlier_openings: Iterable[int] = ()) -> int:
    """Points an opening needs: ``rules.opening_threshold``, or with ``rising_threshold`` one more
    than the highest earlier opening of the round when that is higher.

    >>> from dataclasses import replace
    >>> opening_threshold(Rules.okey101(), [120])
    101
    >>> opening_threshold(replace(Rules.okey101(), rising_threshold=True), [120, 105])
    121
    """
    threshold = rules.opening_threshold
    if rules.rising_threshold:
        threshold = max([threshold, *(p + 1 for p in earlier_openings)])
    return threshold


# One search per indicator, run rules and objective, kept across hands (``_search``), per
# thread: a kept search may take a new memo before a hand (``MeldSearch._renew_memo``), which must
# not happen under another thread's search of the same object (the service's engine threads).
_KEPT = threading.local()


def _search(indicator: Tile, rules: Rules, okey_weight: int | None = None) -> MeldSearch:
    searches: dict[tuple, MeldSearch] = _KEPT.__dict__.setdefault("searches", {})
    key = (indicator.index, rules.wrap_13_1, rules.max_run_length, okey_weight)
    search = searches.get(key)
    if search is None:
        search = searches[key] = MeldSearch(
            indicator,
            wrap=rules.wrap_13_1,
            max_run_length=rules.max_run_length,
            okey_weight=okey_weight,
        )
    return search


def best_opening(
    tiles: str | Iterable[Tile | str],
    indicator: Tile | str,
    rules: Rules | None = None,
    *,
    earlier_openings: Iterable[int] = (),
    must_use: Tile | str | None = None,
) -> Opening:
    """The exact best meld opening (maximum total value of melds laid at once).

    ``must_use``: a tile of the hand that has to lie in a meld (a player who takes the previous
    discard before opening must open with it); no meld for it gives 0 points.

    >>> best_opening("R11 R12 R13 K12 Y12 B12 FJ", "Y4", Rules.okey101()).points
    72
    >>> best_opening("R9 Y9 B9 R7 R8", "B1", Rules.okey101(), must_use="R7").points
    24
    """
    if must_use is None and rules is not None:
        indices = _plain_hand(tiles, indicator, rules)
        if indices is not None:
            # (None where some kind is held too often: the long way says which.)
            found = _search(indicator, rules).best_of_possible(indices, indicator.index)
            if found is not None:
                return Opening(*found, opening_threshold(rules, earlier_openings))
    hand, indicator, rules = _prepare(tiles, indicator, rules)
    threshold = opening_threshold(rules, earlier_openings)
    search = _search(indicator, rules)
    if must_use is None:
        result = search.best(hand)
    else:
        forced = read_tile(must_use, "must_use")
        if forced not in hand:
            raise OkeyError(f"must_use tile {forced} is not in the hand")
        result = search.best_using(hand, forced)
        if result is None:
            return Opening(0, (), tuple(sorted(hand)), threshold)
    return Opening(result.value, result.melds, result.remaining, threshold)


def best_pairs_opening(
    tiles: str | Iterable[Tile | str], indicator: Tile | str, rules: Rules | None = None
) -> PairsOpening:
    """The most pairs: identical tiles pair up, a false joker pairs with the okey's face, an okey
    pairs with any single, and two okeys pair when ``rules.okey_pair_with_okey``.

    >>> best_pairs_opening("R1 R1 K5 K5 Y7 Y7 B2 B2 K9 R6", "R5", Rules.okey101()).count
    5
    """
    hand, indicator, rules = _prepare(tiles, indicator, rules)
    okey = okey_for(indicator)
    okeys = [t for t in hand if t == okey]
    by_face: dict[Tile, list[Tile]] = {}
    for tile in sorted(t for t in hand if t != okey):
        by_face.setdefault(okey if tile.is_false_joker else tile, []).append(tile)
    pairs: list[tuple[Tile, Tile]] = []
    singles: list[Tile] = []
    for group in by_face.values():
        while len(group) >= 2:
            pairs.append((group.pop(0), group.pop(0)))
        singles.extend(group)
    # An okey is best spent on the highest single (pairs carry no points, but a lower leftover).
    singles.sort(key=lambda t: okey.number if t.is_false_joker else t.number, reverse=True)
    while okeys and singles:
        pairs.append((singles.pop(0), okeys.pop()))
    if len(okeys) == 2:
        if rules.okey_pair_with_okey:
            pairs.append((okeys.pop(), okeys.pop()))
        elif pairs:
            # Two okeys may not pair each other: a real pair split in two, each half with an
            # okey, is one pair more (as ``check_win`` splits one).
            a, b = pairs.pop()
            pairs += [(a, okeys.pop()), (b, okeys.pop())]
    return PairsOpening(tuple(pairs), tuple(sorted(singles + okeys)), rules.pairs_opening_min)


def okey_in_hand_cost(indicator: Tile) -> int:
    """What an okey left in hand costs at the end of a round: its printed number plus 101.

    >>> okey_in_hand_cost(Tile.parse("R5"))  # okey R6
    107
    """
    return (okey_for(indicator).number or 0) + OKEY_IN_HAND_PENALTY


def hand_value(tiles: Iterable[Tile], indicator: Tile) -> int:
    """Face values of tiles left in hand: a false joker counts as the okey's face; an okey counts
    its printed number plus ``OKEY_IN_HAND_PENALTY`` (101).

    >>> hand_value(parse_tiles("R3 K12 FJ R6"), Tile.parse("R5"))
    128
    """
    okey = okey_for(indicator)
    total = 0
    for tile in tiles:
        if tile == okey:
            total += okey_in_hand_cost(indicator)
        elif tile.is_false_joker:
            total += okey.number or 0
        else:
            total += tile.number or 0
    return total


def min_leftover(
    tiles: str | Iterable[Tile | str], indicator: Tile | str, rules: Rules | None = None
) -> Leftover:
    """The smallest leftover penalty after laying melds (an okey left in hand costs its number
    plus 101).

    >>> min_leftover("R5 Y5 B5 K5 K1", "R12", Rules.okey101()).penalty  # R13 is the okey
    1
    >>> min_leftover("R5 Y5 B5 K5 R13", "R12", Rules.okey101()).penalty  # okey replaces a 5
    5
    """
    hand, indicator, rules = _prepare(tiles, indicator, rules)
    result = _search(indicator, rules, okey_in_hand_cost(indicator)).best(hand)
    return Leftover(hand_value(result.remaining, indicator), result.melds, result.remaining)


# --- table melds and lay-offs -------------------------------------------------------------------
def read_meld(
    tiles: str | Iterable[Tile | str], indicator: Tile | str, rules: Rules | None = None
) -> Meld:
    """Read a meld on the table in the order it lies; an okey stands for the slot it fills.

    A run is read first (one colour, consecutive in order, either way round), then a set (one
    number, distinct colours); anything else raises ``OkeyError`` naming the tiles.

    >>> str(read_meld("K4 R6 K6", "R5", Rules.okey101()))
    'K4 R6=K5 K6'
    >>> str(read_meld("R7 Y7 R6", "R5", Rules.okey101()))
    'R7 Y7 R6=B7'
    """
    held, indicator, rules, _ = read_hand(tiles, indicator, rules, (), Rules.okey101())
    okey = okey_for(indicator)
    reals = [(i, okey if t.is_false_joker else t) for i, t in enumerate(held) if t != okey]
    text = " ".join(str(t) for t in held)
    if len(held) < 3:
        raise OkeyError(f"{text!r} is not a meld: a run or set has at least 3 tiles")
    if not reals:
        raise OkeyError(f"{text!r} is not a meld: it holds no tile besides okeys")
    run = _read_run(held, reals, rules)
    if run is None:
        # Runs laid high to low read the same way round.
        flipped = held[::-1]
        run = _read_run(flipped, [(len(held) - 1 - i, t) for i, t in reversed(reals)], rules)
    if run is not None:
        return run
    numbers = {t.number for _, t in reals}
    colours = [t.colour for _, t in reals]
    if len(numbers) == 1 and len(set(colours)) == len(colours) and len(held) <= 4:
        n = numbers.pop()
        missing = iter(Tile.of(c, n) for c in "RYBK" if c not in colours)
        real_at = dict(reals)
        plays = tuple(real_at[i] if i in real_at else next(missing) for i in range(len(held)))
        return Meld("set", tuple(held), plays)
    raise OkeyError(
        f"{text!r} is not a meld: not a run of one colour in order, nor a set of one number "
        "in distinct colours"
    )


def _read_run(held: list[Tile], reals: list[tuple[int, Tile]], rules: Rules) -> Meld | None:
    colour = reals[0][1].colour
    if any(t.colour != colour for _, t in reals):
        return None
    i0, t0 = reals[0]
    start = t0.number - i0
    top = 14 if rules.wrap_13_1 else 13
    end = start + len(held) - 1
    if start < 1 or end > top or len(held) > rules.max_run_length:
        return None
    for i, tile in reals:
        slot = start + i
        if (1 if slot == 14 else slot) != tile.number:
            return None
    plays = tuple(Tile.of(colour, 1 if s == 14 else s) for s in range(start, end + 1))
    return Meld("run", tuple(held), plays)


@dataclass(frozen=True, slots=True)
class LayOff:
    """A hand tile that can go onto table meld number ``meld`` (0-based): at the ``start`` or
    ``end`` of a run, into a ``set``, or as a ``swap`` that gives the real tile and takes back the
    okey standing for it."""

    tile: Tile
    meld: int
    where: Literal["start", "end", "set", "swap"]
    plays_as: Tile
    takes_back: Tile | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tile": str(self.tile),
            "meld": self.meld,
            "where": self.where,
            "plays_as": str(self.plays_as),
            "takes_back": None if self.takes_back is None else str(self.takes_back),
        }

    def __str__(self) -> str:
        if self.where == "swap":
            return f"{self.tile} onto meld {self.meld + 1}, taking back the okey {self.takes_back}"
        return f"{self.tile} onto meld {self.meld + 1} ({self.where}, as {self.plays_as})"


def _slots_open(meld: Meld, rules: Rules) -> list[tuple[Literal["start", "end", "set"], Tile]]:
    """The tiles a meld accepts: run ends, or the colours a 3-set lacks."""
    if meld.kind == "set":
        if len(meld.plays_as) >= 4:
            return []
        n = meld.plays_as[0].number
        have = {t.colour for t in meld.plays_as}
        return [("set", Tile.of(c, n)) for c in "RYBK" if c not in have]
    if len(meld.plays_as) >= rules.max_run_length:
        return []
    colour = meld.plays_as[0].colour
    first = meld.plays_as[0].number
    last_slot = first + len(meld.plays_as) - 1
    out: list[tuple[Literal["start", "end", "set"], Tile]] = []
    if first > 1:
        out.append(("start", Tile.of(colour, first - 1)))
    top = 14 if rules.wrap_13_1 and first > 1 else 13
    if last_slot < top:
        nxt = last_slot + 1
        out.append(("end", Tile.of(colour, 1 if nxt == 14 else nxt)))
    return out


def read_table(
    table: Iterable[Meld | str | Iterable[Tile | str]],
    indicator: Tile,
    rules: Rules,
    hand: Sequence[Tile] = (),
) -> list[Meld]:
    """The melds on the table, each read as it lies (``read_meld``); ``ImpossibleHandError``
    where they, ``hand`` and the indicator hold more copies of a tile than a set has (two, and
    two false jokers).

    >>> [str(m) for m in read_table(["K4 K5 K6", "R7 Y7 B7"], Tile.parse("R1"), Rules.okey101())]
    ['K4 K5 K6', 'R7 Y7 B7']
    >>> try:
    ...     read_table(["K4 K5 K6"], Tile.parse("R1"), Rules.okey101(), parse_tiles("K4 K4"))
    ... except ImpossibleHandError as exc:
    ...     print(exc)
    K4 is on the table 1 time(s) and in the hand 2 time(s): a set has only two
    """
    melds = [m if isinstance(m, Meld) else read_meld(m, indicator, rules) for m in table]
    on_table = Counter(t for meld in melds for t in meld.tiles)
    if on_table:
        held = Counter(hand)
        for tile, n in sorted(on_table.items()):
            out = held[tile] + (tile == indicator)
            if n + out > 2:
                what = "a false joker" if tile.is_false_joker else str(tile)
                where = [f"on the table {n} time(s)"]
                if held[tile]:
                    where.append(f"in the hand {held[tile]} time(s)")
                if tile == indicator:
                    where.append("the indicator")
                raise ImpossibleHandError(f"{what} is {' and '.join(where)}: a set has only two")
    return melds


def lay_offs(
    tiles: str | Iterable[Tile | str],
    table: Iterable[Meld | str | Iterable[Tile | str]],
    indicator: Tile | str,
    rules: Rules | None = None,
    *,
    opened: bool = True,
) -> list[LayOff]:
    """Every way one hand tile can go onto a table meld, including swaps for a table okey.

    Only a player who has opened may add to the table: ``opened=False`` gives no options (a pairs
    opener has opened and may add to others' melds).

    >>> [str(x) for x in lay_offs("K7 K3 B4", ["K4 K5 K6", "R4 Y4 B4"], "R1", Rules.okey101())]
    ['K7 onto meld 1 (end, as K7)', 'K3 onto meld 1 (start, as K3)']
    >>> [str(x) for x in lay_offs("K5", ["K4 R2 K6"], "R1", Rules.okey101())]
    ['K5 onto meld 1, taking back the okey R2']
    """
    hand, indicator, rules, _ = read_hand(tiles, indicator, rules, (), Rules.okey101())
    okey = okey_for(indicator)
    melds = read_table(table, indicator, rules, hand)
    options: list[LayOff] = []
    if not opened:
        return options
    seen: set[Tile] = set()
    for tile in hand:
        if tile in seen:
            continue
        seen.add(tile)
        plays = okey if tile.is_false_joker else tile
        for index, meld in enumerate(melds):
            for where, wanted in _slots_open(meld, rules):
                if tile == okey or plays == wanted:
                    options.append(LayOff(tile, index, where, wanted))
            if tile == okey:
                continue
            for held, stands in zip(meld.tiles, meld.plays_as, strict=True):
                if held == okey and stands == plays:
                    options.append(LayOff(tile, index, "swap", stands, takes_back=held))
                    break
    return options


def could_lay_off(
    discard: Tile | str,
    table: Iterable[Meld | str | Iterable[Tile | str]],
    indicator: Tile | str,
    rules: Rules | None = None,
) -> LayOff | None:
    """Whether a discard could have been added to a table meld (the 101 penalty), and where.

    Swaps do not count (they exchange a tile, they do not add one) and an okey discard is not
    judged here: it has its own 101 penalty.

    >>> str(could_lay_off("Y9", ["Y6 Y7 Y8"], "R1", Rules.okey101()))
    'Y9 onto meld 1 (end, as Y9)'
    >>> could_lay_off("Y11", ["Y6 Y7 Y8"], "R1", Rules.okey101()) is None
    True
    """
    discard = read_tile(discard, "discard")
    indicator = read_tile(indicator, "indicator")
    if discard == okey_for(indicator):
        return None
    for option in lay_offs([discard], table, indicator, rules):
        if option.where != "swap":
            return option
    return None


# --- discard advice -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DiscardFigures:
    """The 101 figures of one discard (``okey.DiscardOption.figures``): what a hand keeps after
    throwing ``tile``: its best opening, its smallest leftover, and the
    extra 101 penalties the discard itself draws (an okey, or a tile that fits a table meld)."""

    tile: Tile
    opening_points: int
    opens: bool
    pairs: int
    leftover: int
    penalty: int

    @property
    def cost(self) -> int:
        """Points this discard leaves at risk: leftover plus extra penalties."""
        return self.leftover + self.penalty

    def to_dict(self) -> dict[str, Any]:
        return {
            "tile": str(self.tile),
            "opening_points": self.opening_points,
            "opens": self.opens,
            "pairs": self.pairs,
            "leftover": self.leftover,
            "penalty": self.penalty,
        }


def advise_discard(
    tiles: str | Iterable[Tile | str],
    indicator: Tile | str,
    rules: Rules | None = None,
    *,
    table: Iterable[Meld | str | Iterable[Tile | str]] = (),
    opened: bool = False,
    earlier_openings: Iterable[int] = (),
) -> list[DiscardFigures]:
    """Rank the discards of a 21- or 22-tile hand, best first.

    A player who has not opened wants first to reach the threshold, then the smallest leftover;
    short of the threshold, the highest opening.  An opened player only wants the smallest
    leftover.  Extra penalties (discarding an okey, or a tile that fits a table meld) are added to
    the leftover.  With 21 tiles the ranking says which tile to let go after a draw that does not
    change the melds.

    >>> hand = "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6 K12"
    >>> [str(o.tile) for o in advise_discard(hand, "B2", Rules.okey101())[:2]]
    ['B9', 'Y8']
    """
    hand, indicator, rules = _prepare(tiles, indicator, rules)
    if len(hand) not in (rules.hand_size, rules.max_rack_tiles):
        raise OkeyError(
            f"discard advice needs {rules.hand_size} or {rules.max_rack_tiles} tiles, "
            f"got {len(hand)}"
        )
    melds = read_table(table, indicator, rules, hand)
    okey = okey_for(indicator)
    threshold = opening_threshold(rules, earlier_openings)
    value_search = _search(indicator, rules)
    leftover_search = _search(indicator, rules, okey_in_hand_cost(indicator))
    options = []
    for tile in sorted(set(hand)):
        rest = list(hand)
        rest.remove(tile)
        points = value_search.value(*value_search.pack(rest)[:2])
        left = leftover_search.best(rest)
        # Extra 101: discarding an okey, or a tile that fits a meld on the table.
        fits = bool(melds) and could_lay_off(tile, melds, indicator, rules) is not None
        penalty = EXTRA_PENALTY if tile == okey or fits else 0
        pairs = best_pairs_opening(rest, indicator, rules).count
        options.append(
            DiscardFigures(
                tile,
                points,
                points >= threshold or pairs >= rules.pairs_opening_min,
                pairs,
                hand_value(left.remaining, indicator),
                penalty,
            )
        )

    def rank(o: DiscardFigures) -> tuple:
        if opened or o.opens:
            return (0, o.cost, -o.opening_points, o.tile.index)
        return (1, -o.opening_points, o.cost, o.tile.index)

    return sorted(options, key=rank)


# --- round scoring ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PlayerRound101:
    """One player's end of a 101 round.

    ``remaining``: the tiles left in hand (give them, or ``hand_sum`` plus ``okeys_held`` when the
    tiles are not known: ``hand_sum`` adds up every tile left, a held okey at its printed number);
    ``pairs``: opened with pairs; ``penalties``: extra 101 events by name
    (``EXTRA_PENALTIES``), repeated when they happened more than once.
    """

    name: str
    opened: bool = False
    pairs: bool = False
    remaining: tuple[Tile, ...] | None = None
    hand_sum: int | None = None
    okeys_held: int = 0
    penalties: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for event in self.penalties:
            if event not in EXTRA_PENALTIES:
                raise OkeyError(
                    f"unknown 101 penalty {event!r} for {self.name}: "
                    f"choose from {', '.join(EXTRA_PENALTIES)}"
                )
        if self.pairs and not self.opened:
            raise OkeyError(f"{self.name} opened with pairs but is marked as not opened")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "opened": self.opened, "pairs": self.pairs}
        if self.remaining is not None:
            data["remaining"] = [str(t) for t in self.remaining]
        if self.hand_sum is not None:
            data["hand_sum"] = self.hand_sum
            data["okeys_held"] = self.okeys_held
        if self.penalties:
            data["penalties"] = list(self.penalties)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlayerRound101:
        _known_keys(data, _PLAYER_KEYS, "101 player")
        remaining = data.get("remaining")
        return cls(
            name=str(data["name"]),
            opened=bool(data.get("opened", False)),
            pairs=bool(data.get("pairs", False)),
            remaining=None if remaining is None else tuple(parse_tiles(remaining)),
            hand_sum=data.get("hand_sum"),
            okeys_held=int(data.get("okeys_held", 0)),
            penalties=tuple(data.get("penalties", ())),
        )


@dataclass(frozen=True, slots=True)
class Round101:
    """A 101 round summary.  ``finisher`` None: the bank ran out and nobody finished.
    ``okey_finish``: the last discard was an okey; ``one_turn``: the finisher laid the whole hand in
    one turn while nobody else had opened."""

    players: tuple[PlayerRound101, ...]
    finisher: str | None = None
    indicator: Tile | None = None
    okey_finish: bool = False
    one_turn: bool = False

    @property
    def void(self) -> bool:
        """All four players opened with pairs: the round is void and replayed."""
        return len(self.players) == 4 and all(p.pairs for p in self.players)

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": "okey101",
            "finisher": self.finisher,
            "indicator": None if self.indicator is None else str(self.indicator),
            "okey_finish": self.okey_finish,
            "one_turn": self.one_turn,
            "players": [p.to_dict() for p in self.players],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Round101:
        _known_keys(data, _ROUND_KEYS, "101 round")
        indicator = data.get("indicator")
        return cls(
            players=tuple(PlayerRound101.from_dict(p) for p in data["players"]),
            finisher=data.get("finisher"),
            indicator=None if indicator is None else Tile.parse(indicator),
            okey_finish=bool(data.get("okey_finish", False)),
            one_turn=bool(data.get("one_turn", False)),
        )


_PLAYER_KEYS = {"name", "opened", "pairs", "remaining", "hand_sum", "okeys_held", "penalties"}
_ROUND_KEYS = {"game", "finisher", "indicator", "okey_finish", "one_turn", "players"}


def _known_keys(data: dict[str, Any], known: set[str], what: str) -> None:
    unknown = set(data) - known
    if unknown:
        raise OkeyError(f"unknown {what} fields: {', '.join(sorted(unknown))}")
    if what == "101 round" and "players" not in data:
        raise OkeyError("a 101 round needs 'players'")
    if what == "101 player" and "name" not in data:
        raise OkeyError("a 101 player needs a 'name'")


def _player_hand(player: PlayerRound101, indicator: Tile | None) -> tuple[int, int]:
    """(face sum without okeys, okeys held)."""
    if player.remaining is not None:
        if indicator is None:
            raise OkeyError(f"{player.name}'s remaining tiles need the round's indicator")
        okey = okey_for(indicator)
        held = sum(1 for t in player.remaining if t == okey)
        return hand_value(player.remaining, indicator) - OKEY_IN_HAND_PENALTY * held, held
    if player.hand_sum is None:
        raise OkeyError(f"{player.name} needs remaining tiles or a hand_sum")
    return player.hand_sum, player.okeys_held


def score_round(summary: Round101, rules: Rules | None = None) -> dict[str, int]:
    """Points of each player for one 101 round (lower is better).

    Finisher -101; an opened player adds the face values left in hand (a held okey at its printed
    number), a player who never opened 202.  An okey finish doubles everything; a finish of the
    whole hand in one turn doubles again (-404 / 808 with both); a pairs opener's own remainder is
    doubled, and so are the penalties a finishing pairs opener causes.  Then 101 for each okey
    still held by an opened player and for each extra penalty event (not doubled).  A void round
    (all four opened with pairs) scores 0.

    >>> players = (PlayerRound101("A", opened=True), PlayerRound101("B", opened=True, hand_sum=30),
    ...            PlayerRound101("C", hand_sum=50), PlayerRound101("D", opened=True, pairs=True,
    ...            hand_sum=12, okeys_held=1))
    >>> score_round(Round101(players, finisher="A"))
    {'A': -101, 'B': 30, 'C': 202, 'D': 125}
    """
    names = [p.name for p in summary.players]
    if len(set(names)) != len(names):
        raise OkeyError(f"player names repeat in the round: {names}")
    if summary.void:
        return dict.fromkeys(names, 0)
    by_name = {p.name: p for p in summary.players}
    finisher = by_name.get(summary.finisher) if summary.finisher is not None else None
    if summary.finisher is not None and finisher is None:
        raise OkeyError(f"the finisher {summary.finisher!r} is not a player of the round")
    if summary.finisher is None and (summary.okey_finish or summary.one_turn):
        raise OkeyError("an okey finish or one-turn finish needs a finisher")
    if summary.one_turn:
        early = [p.name for p in summary.players if p.opened and p is not finisher]
        if early:
            raise OkeyError(
                f"a one-turn finish doubles only while nobody else has opened; opened: {early}"
            )
    factor = (2 if summary.okey_finish else 1) * (2 if summary.one_turn else 1)
    caused = 2 if finisher is not None and finisher.pairs else 1
    scores: dict[str, int] = {}
    for player in summary.players:
        extras = EXTRA_PENALTY * len(player.penalties)
        if player is finisher:
            scores[player.name] = FINISH_SCORE * factor + extras
            continue
        if not player.opened:
            scores[player.name] = NEVER_OPENED_PENALTY * factor * caused + extras
            continue
        face, okeys = _player_hand(player, summary.indicator)
        own = 2 if player.pairs else 1
        scores[player.name] = face * factor * caused * own + OKEY_IN_HAND_PENALTY * okeys + extras
    return scores


def match_totals(rounds: Sequence[Round101], rules: Rules | None = None) -> dict[str, int]:
    """Sum of the round scores over a match (lowest total wins).

    >>> r = Round101((PlayerRound101("A", opened=True), PlayerRound101("B", hand_sum=9)), "A")
    >>> match_totals([r, r])
    {'A': -202, 'B': 404}
    """
    rules = rules or Rules.okey101()
    played = sum(1 for r in rounds if not r.void)
    if played > rules.rounds:
        raise OkeyError(f"{played} rounds recorded but the match has {rules.rounds}")
    totals: Counter[str] = Counter()
    for summary in rounds:
        for name, points in score_round(summary, rules).items():
            totals[name] += points
    return dict(totals)


# --- hand report (istaka hand --rules okey101) --------------------------------------------------
def describe_hand(
    tiles: str | Iterable[Tile | str],
    indicator: Tile | str,
    rules: Rules | None = None,
    *,
    table: Iterable[Meld | str | Iterable[Tile | str]] = (),
    opened: bool = False,
) -> dict[str, Any]:
    """Everything ``istaka hand --rules okey101`` prints: best opening, pairs opening, leftover and
    (for 21 or 22 tiles) the ranked discards, as JSON-ready data.  ``table`` (the melds on the
    table) and ``opened`` rank the discards as ``okey.advise_hand`` does: one that draws an extra
    penalty (it fits a table meld, or is the okey) ranks after every other.

    >>> report = describe_hand("R1 R2 R3 K7 Y7 B7", "B13", Rules.okey101())
    >>> report["opening"]["points"], report["advice"]
    (27, [])
    """
    hand, indicator, rules = _prepare(tiles, indicator, rules)
    report: dict[str, Any] = {
        "rules": rules.name,
        "hand": [str(t) for t in hand],
        "indicator": str(indicator),
        "okey": str(okey_for(indicator)),
        "opening": best_opening(hand, indicator, rules).to_dict(),
        "pairs": best_pairs_opening(hand, indicator, rules).to_dict(),
        "leftover": min_leftover(hand, indicator, rules).to_dict(),
        "advice": [],
    }
    if len(hand) in (rules.hand_size, rules.max_rack_tiles):
        ranked = advise_discard(hand, indicator, rules, table=table, opened=opened)
        ranked.sort(key=lambda figures: figures.penalty > 0)  # (stable: the ranking otherwise)
        report["advice"] = [o.to_dict() for o in ranked]
    return report


def format_hand_report(report: dict[str, Any], *, advice_lines: int = 5) -> str:
    """Plain-text form of ``describe_hand``'s report.

    >>> print(format_hand_report(describe_hand("R1 R2 R3 K7 Y7 B7 K1", "B13", Rules.okey101())))
    ... # doctest: +NORMALIZE_WHITESPACE
    indicator B13, okey B1
    best opening: 27 points (needs 101): R1 R2 R3 | Y7 B7 K7
      left in hand: K1
    pairs opening: 0 pairs (needs 5)
    smallest leftover: 1 (R1 R2 R3 | Y7 B7 K7; left K1)
    """
    opening = report["opening"]
    pairs = report["pairs"]
    leftover = report["leftover"]

    def melds(items: list[dict[str, Any]]) -> str:
        return " | ".join(_meld_text(m) for m in items) or "none"

    verdict = "opens" if opening["opens"] else f"needs {opening['threshold']}"
    lines = [
        f"indicator {report['indicator']}, okey {report['okey']}",
        f"best opening: {opening['points']} points ({verdict}): {melds(opening['melds'])}",
        f"  left in hand: {' '.join(opening['remaining']) or 'nothing'}",
    ]
    pair_text = " ".join(f"{a}+{b}" for a, b in pairs["pairs"])
    pair_verdict = "opens" if pairs["opens"] else f"needs {pairs['minimum']}"
    lines.append(
        f"pairs opening: {pairs['count']} pairs ({pair_verdict})"
        + (f": {pair_text}" if pair_text else "")
    )
    lines.append(
        f"smallest leftover: {leftover['penalty']} ({melds(leftover['melds'])}; "
        f"left {' '.join(leftover['remaining']) or 'nothing'})"
    )
    if report["advice"]:
        lines.append("discard advice (best first):")
        for option in report["advice"][:advice_lines]:
            state = "opens" if option["opens"] else "does not open"
            extra = f", +{option['penalty']} penalty" if option["penalty"] else ""
            lines.append(
                f"  {option['tile']}: opening {option['opening_points']} ({state}), "
                f"leftover {option['leftover']}{extra}"
            )
    return "\n".join(lines)


def _meld_text(meld: dict[str, Any]) -> str:
    return " ".join(
        t if t == p or t == "FJ" else f"{t}={p}"
        for t, p in zip(meld["tiles"], meld["plays_as"], strict=True)
    )
