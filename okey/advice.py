"""Discard advice: which tile to throw from 15, or what a 14-tile hand waits for.

Every distinct discard is ranked by the distance to win after it, then by how many unseen tile
copies would lower that distance (unseen = the 106 tiles minus the hand, the indicator and the
``seen`` discards).  An okey is never advised as a discard unless throwing it wins.

>>> from okey import Rules, Tile, parse_tiles
>>> hand = parse_tiles("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13")
>>> advice = advise(hand, Tile.parse("R5"), Rules.classic())  # okey R6
>>> advice.best.discard, advice.best.distance
(Tile.parse('Y13'), 0)
>>> advice.best.sentence
'Discard Y13: the other 14 tiles win.'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from okey.distance import HandState, kept_with_sets, optimal_set_choices, unseen_counts
from okey.draws import (
    RootBound,
    Witnesses,
    hand_layouts,
    improving_draws_from,
    meld_raising_faces,
    sets_kept_without,
)
from okey.hand import check_playing_hand, hand_stage, okey_for
from okey.inputs import read_hand, read_tiles
from okey.rules import Rules
from okey.runs import walk_near
from okey.sets import SetChoice
from okey.solver import NUMBERED_KINDS
from okey.tiles import ALL_KINDS, FALSE_JOKER_INDEX, Tile

if TYPE_CHECKING:
    from okey.okey101 import DiscardFigures


@dataclass(frozen=True, slots=True)
class DiscardOption:
    """One candidate discard: the distance after it and the unseen tiles that would lower it.

    In 101 (``okey.advise_hand``) ``improving`` are the unseen tiles that would let the rest open,
    ``advised`` is false for a discard drawing a penalty, and ``figures`` holds the 101 figures
    (opening points, pairs, leftover, penalty)."""

    discard: Tile
    distance: int
    improving: tuple[tuple[Tile, int], ...]  # (tile, unseen copies), most copies first
    is_okey: bool
    advised: bool
    sentence: str
    figures: DiscardFigures | None = None
    # What the right-hand player's takes and discards say of this discard (``discard_risk``):
    # "high" (it fits what they took), "low" (they threw it or its neighbour), None (unknown).
    risk: str | None = None

    @property
    def improving_copies(self) -> int:
        return sum(n for _, n in self.improving)

    def to_dict(self) -> dict[str, Any]:
        data = {
            "discard": str(self.discard),
            "distance": self.distance,
            "improving": [{"tile": str(t), "unseen": n} for t, n in self.improving],
            "improving_copies": self.improving_copies,
            "is_okey": self.is_okey,
            "advised": self.advised,
            "sentence": self.sentence,
        }
        if self.figures is not None:
            figures = self.figures.to_dict()
            del figures["tile"]
            data.update(figures)
        if self.risk is not None:
            data["risk"] = self.risk
        return data


@dataclass(frozen=True, slots=True)
class Advice:
    """What to do with a hand: ranked discards (15 tiles) or the waits (14 tiles); in 101
    (``adviser`` "okey101", 22 or 21 tiles) the waits are the tiles that would let it open."""

    kind: str  # "discard" or "waits" (``okey.hand.hand_stage``)
    distance: int  # distance to win of the hand as it is (15 tiles: after the best discard)
    options: tuple[DiscardOption, ...] = field(default=())
    waits: tuple[tuple[Tile, int], ...] = field(default=())  # tiles that win, unseen copies
    sentence: str = ""
    adviser: str = "classic"

    @property
    def best(self) -> DiscardOption | None:
        return self.options[0] if self.options else None

    def to_dict(self) -> dict[str, Any]:
        data = {
            "kind": self.kind,
            "distance": self.distance,
            "options": [o.to_dict() for o in self.options],
            "waits": [{"tile": str(t), "unseen": n} for t, n in self.waits],
            "sentence": self.sentence,
        }
        if self.adviser != "classic":
            data["adviser"] = self.adviser
        return data


def advise(
    tiles: Sequence[Tile],
    indicator: Tile,
    rules: Rules | None = None,
    seen: Iterable[Tile] = (),
    *,
    next_takes: Iterable[Tile] = (),
    next_discards: Iterable[Tile] = (),
) -> Advice:
    """Rank the discards of a 15-tile hand, or list the waits of a 14-tile hand (21/22 in 101).

    ``next_takes`` and ``next_discards``: the tiles the right-hand player (who may take your
    discard) took and threw this round.  Among discards leaving the same distance, one that fits
    what they took (same colour within two, or the same number: ``discard_risk``) ranks after
    the others, and the best option's sentence says so where that changed the choice."""
    tiles, indicator, rules, seen = read_hand(tiles, indicator, rules, seen)
    next_takes = read_tiles(next_takes, "next_takes")
    next_discards = read_tiles(next_discards, "next_discards")
    check_playing_hand(tiles, indicator, rules, seen)
    unseen = unseen_counts(tiles, indicator, seen)
    if hand_stage(len(tiles), rules) == "waits":
        return _waits(tiles, indicator, rules, seen, unseen)
    okey = okey_for(indicator)
    whole = HandState.of(tiles, indicator, seen)
    walk_near(whole.line_keys())  # (the lines below differ from its colours' at a number or two)
    try:
        return _discards(whole, tiles, okey, rules, unseen, next_takes, next_discards)
    finally:
        walk_near(())


def _discards(
    whole: HandState,
    tiles: list[Tile],
    okey: Tile,
    rules: Rules,
    unseen: list[int],
    next_takes: list[Tile],
    next_discards: list[Tile],
) -> Advice:
    """``advise`` of a hand to discard from (``whole``: its count)."""
    whole_solved = optimal_set_choices(whole, rules)
    most, whole_optimal = whole_solved
    whole_layouts = hand_layouts(whole, rules, whole_solved)
    witnesses = Witnesses(whole_layouts, most, whole)
    after: dict[Tile, tuple[HandState, tuple[int, list[SetChoice]]]] = {}
    for discard in set(tiles):
        # (``HandState.of`` the hand less the discard, with the discard seen.)
        if discard == okey:
            state = whole.less(None)
        else:
            state = whole.less(okey.index if discard.is_false_joker else discard.index)
        # The whole hand T keeps at least as many faces as T less d in any layout (the
        # discarded copy is seen: the same copies left to draw, and an okey discarded leaves
        # fewer okeys), so where some of T's optimal set choices keep as many without d, those
        # are exactly the optimal set choices of T less d.
        if discard == okey:
            kept_as_many = [
                sets for sets in whole_optimal if kept_with_sets(state, rules, sets, most) == most
            ]
        else:
            face = okey.index if discard.is_false_joker else discard.index
            kept_as_many = sets_kept_without(whole_layouts, face, most)
        if kept_as_many:
            after[discard] = state, (most, kept_as_many)
        else:
            # Usually one fewer (a drawn copy of d takes its place): searched from there.
            after[discard] = state, optimal_set_choices(state, rules, max(0, most - 1))
    # The whole hand T keeps at least as many faces as T less any tile d (d seen: the same copies
    # left to draw), so a face f that does not let T keep one more cannot let a discard keeping
    # as many as T keep one more either (T less d plus f holds less than T plus f).  Asked of T
    # once, for the discards that keep as many as T does (an okey discard aside).
    # The bound of each discard plus a face mostly changes by what the whole hand's does.
    whole_root = RootBound(whole, rules)
    whole_choices = set(whole_optimal)
    raising: dict[int, SetChoice] | None = None
    not_raising: set[int] = set()
    listing = _listing(unseen, okey)
    options = []
    for discard in sorted(after, key=lambda d: (after[d][1][0], d.index)):
        state, solved = after[discard]
        never: set[int] = set()  # (improving_draws_from only reads it: shared below)
        hints: dict[int, SetChoice] | None = None
        face = okey.index if discard.is_false_joker else discard.index  # FJ: the okey's face
        # Throwing an okey changes the okeys held: the shortcut holds neither way for it.
        if discard != okey:
            if solved[0] == whole_solved[0]:
                if raising is None:
                    raising = meld_raising_faces(
                        whole, rules, whole_solved, whole_root, whole_layouts
                    )
                    not_raising = set(range(len(whole.avail))) - raising.keys()
                    witnesses.raising = raising
                never = not_raising
                # Such a face lets the discard keep one more where a layout that lets T keep
                # one more does without the discard: that layout's sets are tried first, unless
                # they are an optimal choice of T that keeps fewer without the discard (its
                # optimal choices are T's that keep as many, above): a drawn face adds at most
                # one to a layout of fixed sets.
                mine = set(solved[1])
                hints = {
                    drawn: sets
                    for drawn, sets in raising.items()
                    if sets in mine or sets not in whole_choices
                }
            elif solved[0] < whole_solved[0]:
                if raising is None:
                    raising = meld_raising_faces(
                        whole, rules, whole_solved, whole_root, whole_layouts
                    )
                    not_raising = set(range(len(whole.avail))) - raising.keys()
                    witnesses.raising = raising
                # Such a face usually lets a discard keeping one fewer than T keep one more:
                # the layout that lets T keep one more, less the discard, mostly still keeps as
                # many as T (a drawn copy takes the discard's place; not where that layout
                # draws the discard's last copy elsewhere too, with no okey to spare), so its
                # sets are tried first.  With no copy of the discard left, it does where that
                # layout keeps one more with an okey to spare (standing in for the discard)
                # and has no set at the discard's number (``Witnesses.spares``): known.
                hints = raising if whole.avail[face] > 0 else witnesses.spares(face, rules)
        shared = whole_root, (None if discard == okey else face)
        options.append(
            _option(discard, state, solved, never, rules, listing, okey, shared, hints, witnesses)
        )
    # A winning okey discard scores double, so it beats any other winning discard.
    options.sort(key=_rank)
    if next_takes or next_discards:
        options = _with_risks(options, next_takes, next_discards, okey, rules.wrap_13_1)
    best = options[0]
    return Advice("discard", best.distance, tuple(options), sentence=best.sentence)


def _rank(o: DiscardOption) -> tuple:
    return (
        not o.advised,
        o.distance,
        not (o.distance == 0 and o.is_okey),
        o.risk == "high",
        -o.improving_copies,
        o.discard.index,
    )


def discard_risk(
    discard: Tile, takes: Sequence[Tile], discards: Sequence[Tile], okey: Tile, wrap: bool
) -> tuple[str | None, str]:
    """What the right-hand player's takes and discards say of ``discard`` (a false joker read as
    the okey's face): "high" where it shares a run (same colour, numbers at most two apart) or a
    set (same number) with a tile they took, "low" where they threw its face or a run neighbour,
    else None; and the reason in words."""
    face = okey if discard.is_false_joker else discard
    if face == okey:
        return None, ""
    for took in takes:
        other = okey if took.is_false_joker else took
        if other == okey:
            continue
        gap = abs(other.number - face.number)
        if wrap:
            gap = min(gap, 13 - gap)
        if (other.colour == face.colour and gap <= 2) or (
            other.number == face.number and other.colour != face.colour
        ):
            return "high", f"the next player took {took} and may be collecting it"
    for threw in discards:
        other = okey if threw.is_false_joker else threw
        if other.colour == face.colour and abs((other.number or 0) - face.number) <= 1:
            return "low", f"the next player threw {threw}"
    return None, ""


def _with_risks(
    options: list[DiscardOption],
    takes: list[Tile],
    discards: list[Tile],
    okey: Tile,
    wrap: bool,
) -> list[DiscardOption]:
    """The options with their risks, ranked again; where the risk changed the best discard, its
    sentence says which discard it passed over and why."""
    was = options[0]
    rated = []
    reasons = {}
    for option in options:
        risk, reason = discard_risk(option.discard, takes, discards, okey, wrap)
        reasons[option.discard] = reason
        rated.append(replace(option, risk=risk))
    rated.sort(key=_rank)
    best = rated[0]
    if best.discard != was.discard:
        note = f" Not {was.discard}: {reasons[was.discard]}."
        rated[0] = replace(best, sentence=best.sentence + note)
    return rated


def _option(
    discard: Tile,
    state: HandState,
    solved: tuple[int, list[SetChoice]],
    never: set[int],
    rules: Rules,
    listing: tuple[list, list[int]],
    okey: Tile,
    shared: tuple[RootBound, int | None] | None = None,
    hints: dict[int, SetChoice] | None = None,
    witnesses: Witnesses | None = None,
) -> DiscardOption:
    """One discard's option (``state`` is the hand after it; ``shared``: the whole hand's
    ``RootBound`` and the discard's face; ``hints``: sets to try first per face, checked with
    the whole hand's ``witnesses``).

    ``listing`` (``_listing``) is of the whole hand's unseen copies, which are also the hand's
    after the discard: the discarded copy was in the hand and is seen now, so the copies not
    held and not seen are the same (a discard's other copy, when unseen, is drawable like any
    tile and listed when it helps)."""
    distance, faces = improving_draws_from(state, rules, solved, never, shared, hints, witnesses)
    improving = _improving_tiles(distance, faces, listing)
    is_okey = discard == okey
    advised = not is_okey or distance == 0
    return DiscardOption(
        discard,
        distance,
        improving,
        is_okey,
        advised,
        _sentence(discard, distance, improving, is_okey, advised, rules.hand_size),
    )


def _improving(
    tiles: list[Tile],
    indicator: Tile,
    rules: Rules,
    seen: list[Tile],
    unseen: list[int],
    okey: Tile,
) -> tuple[int, tuple[tuple[Tile, int], ...]]:
    """The distance of a hand and the unseen tiles whose draw lowers it, most copies first."""
    state = HandState.of(tiles, indicator, seen)
    distance, faces = improving_draws_from(state, rules, optimal_set_choices(state, rules))
    return distance, _improving_tiles(distance, faces, _listing(unseen, okey))


def _improving_tiles(
    distance: int, faces: set[int], listing: tuple[list, list[int]]
) -> tuple[tuple[Tile, int], ...]:
    """The unseen tiles whose draw lowers the distance (``faces``: the faces that do), most
    copies first, then by index (``listing``: ``_listing`` of the unseen copies)."""
    if distance == 0:
        return ()
    entries, places = listing
    found = [face for face in faces if entries[face] is not None]
    if entries[NUMBERED_KINDS] is not None:
        found.append(NUMBERED_KINDS)  # an okey fills any missing tile
    found.sort(key=places.__getitem__)
    return tuple([entries[face] for face in found])


def _listing(unseen: list[int], okey: Tile) -> tuple[list, list[int]]:
    """Per face (and the okey itself after them): its unseen tile and copies, None where no
    copy is unseen, and its place in ``_improving_tiles``'s order (the same for every discard
    of a hand: its unseen copies are the whole hand's)."""
    entries: list[tuple[Tile, int] | None] = []
    places = []
    for face in range(NUMBERED_KINDS + 1):
        if face == NUMBERED_KINDS:
            tile = okey
        else:
            # A false joker plays as the okey's face.
            tile = ALL_KINDS[FALSE_JOKER_INDEX if face == okey.index else face]
        copies = unseen[tile.index]
        entries.append((tile, copies) if copies > 0 else None)
        places.append(tile.index - 64 * copies)  # (indices are under 64: copies count first)
    return entries, places


def _waits(
    tiles: list[Tile], indicator: Tile, rules: Rules, seen: list[Tile], unseen: list[int]
) -> Advice:
    distance, improving = _improving(tiles, indicator, rules, seen, unseen, okey_for(indicator))
    waits = improving if distance == 1 else ()
    if distance == 0:
        sentence = "This hand already wins: draw, then discard a tile you do not need."
    elif waits:
        copies = sum(n for _, n in waits)
        sentence = f"1 tile from a win; {copies} unseen tiles complete it: {tile_list(waits)}."
    else:
        sentence = f"{distance} tiles from a win."
    return Advice("waits", distance, waits=tuple(waits), sentence=sentence)


def tile_list(tiles: Sequence[tuple[Tile, int]], limit: int = 8) -> str:
    names = _NAMES
    shown = ", ".join(
        [f"{names[t.index]} x{n}" if n > 1 else names[t.index] for t, n in tiles[:limit]]
    )
    more = len(tiles) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def _sentence(
    discard: Tile,
    distance: int,
    improving: tuple[tuple[Tile, int], ...],
    is_okey: bool,
    advised: bool,
    size: int,
) -> str:
    if not advised:
        return f"Keep {discard}: it is the okey, and throwing it does not win."
    if distance == 0:
        if is_okey:
            return (
                f"Discard {discard}, the okey: the other {size} tiles win, "
                "and an okey finish counts double."
            )
        return f"Discard {discard}: the other {size} tiles win."
    away = "1 tile" if distance == 1 else f"{distance} tiles"
    if not improving:
        return f"Discard {discard}: {away} from a win; no unseen tile brings it closer."
    verb = "complete it" if distance == 1 else "bring it closer"
    copies = sum(n for _, n in improving)
    return (
        f"Discard {discard}: {away} from a win; {copies} unseen tiles {verb}: "
        f"{tile_list(improving)}."
    )


# ``str`` of each tile kind by index (``tile_list``).
_NAMES = [str(tile) for tile in ALL_KINDS]
