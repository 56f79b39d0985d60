"""What the engine says about a rack read from a photo: verdict, advice, one-tile-away hints.

A thin bridge from the pipeline's laid-out groups to ``okey.referee`` and ``okey.advise``, with the
decisions a camera adds (documented in docs/pipeline.md):

* a rack of ``rules.hand_size`` tiles (14 classic) is refereed as laid out: the player shows a
  finished hand, or wants to know whether the arrangement on the rack wins;
* with ``declare`` and one tile more (15), the tile standing alone in its own group is the
  finishing discard, and the other groups are refereed;
* a rack of ``hand_size`` or ``hand_size + 1`` tiles gets the engine's advice (the waits for 14, the
  ranked discards for 15); a 101 rack of 22 tiles is ranked by ``okey.okey101.advise_discard``
  instead (reach the opening threshold, then the smallest leftover; an okey discard costs 101),
  put in the shape of ``okey.Advice`` with the 101 figures added (``Okey101Advice``: the web
  service's ``/hand`` answers in the same shape);
* when the verdict is "not valid", each likely misreading of an uncertain tile is tried in its
  place; one that makes the hand valid is reported: "K12 may be B12; with B12 this hand wins".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from okey import (
    Advice,
    OkeyError,
    RefereeVerdict,
    Rules,
    Tile,
    advise,
    check_possible,
    distance_to_win,
    okey_for,
    referee,
)
from okey.okey101 import DiscardOption, advise_discard, opening_threshold

Groups = list[list[Tile]]


def split_discard(groups: Groups, rules: Rules, declare: bool) -> tuple[Groups, Tile | None]:
    """The groups to referee and the finishing discard (a lone tile, with ``declare`` and 15)."""
    n = sum(len(g) for g in groups)
    if not declare or n != rules.hand_size + 1:
        return groups, None
    lone = [k for k, g in enumerate(groups) if len(g) == 1]
    if len(lone) != 1:
        return groups, None
    k = lone[0]
    return groups[:k] + groups[k + 1 :], groups[k][0]


def verdict(groups: Groups, indicator: Tile, rules: Rules, declare: bool) -> RefereeVerdict | None:
    """The referee's verdict on the groups as laid out, or None when the rack is no full hand."""
    declared, discard = split_discard(groups, rules, declare)
    if sum(len(g) for g in declared) != rules.hand_size:
        return None
    return referee(declared, indicator, rules, discard=discard)


@dataclass(frozen=True, slots=True)
class Okey101Option:
    """One discard ranked by ``advise_discard``, with what every advice option says: the distance
    to win after it, whether it is the okey, whether it is advised (no penalty) and a sentence."""

    figures: DiscardOption  # opening_points, opens, pairs, leftover, penalty
    distance: int
    is_okey: bool
    sentence: str

    @property
    def discard(self) -> Tile:
        return self.figures.tile

    @property
    def advised(self) -> bool:
        return self.figures.penalty == 0

    def to_dict(self) -> dict[str, Any]:
        """``okey.DiscardOption.to_dict()``'s keys (no improving tiles) plus the 101 figures."""
        figures = self.figures.to_dict()
        del figures["tile"]
        return {
            "discard": str(self.discard),
            "distance": self.distance,
            "improving": [],
            "improving_copies": 0,
            "is_okey": self.is_okey,
            "advised": self.advised,
            "sentence": self.sentence,
            **figures,
        }


@dataclass(frozen=True, slots=True)
class Okey101Advice:
    """``advise_discard``'s ranking in the shape of ``okey.Advice`` (kind "discard", no waits);
    ``to_dict()`` adds ``"adviser": "okey101"``."""

    options: tuple[Okey101Option, ...]
    kind = "discard"

    @property
    def best(self) -> Okey101Option | None:
        return self.options[0] if self.options else None

    @property
    def distance(self) -> int:
        return self.best.distance if self.best else 0

    @property
    def sentence(self) -> str:
        return self.best.sentence if self.best else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "distance": self.distance,
            "options": [o.to_dict() for o in self.options],
            "waits": [],
            "sentence": self.sentence,
            "adviser": "okey101",
        }


def uses_okey101_adviser(count: int, rules: Rules) -> bool:
    """A 101 hand holding one tile to discard (22) goes to ``okey.okey101``."""
    return rules.game == "okey101" and count == rules.hand_size + 1 <= rules.max_rack_tiles


def advice(
    hand: Sequence[Tile], indicator: Tile, rules: Rules, seen: Sequence[Tile]
) -> Advice | Okey101Advice | None:
    """The engine's advice for 14 or 15 tiles (21 or 22 in 101; 22 by ``okey101_advice``), or
    None for other sizes."""
    if len(hand) not in (rules.hand_size, rules.hand_size + 1):
        return None
    if uses_okey101_adviser(len(hand), rules):
        return okey101_advice(hand, indicator, rules)
    return advise(list(hand), indicator, rules, seen=tuple(seen))


def okey101_advice(hand: Sequence[Tile], indicator: Tile, rules: Rules) -> Okey101Advice:
    """``advise_discard``'s ranking of a 22-tile 101 hand, best first, as an ``Okey101Advice``."""
    okey_tile = okey_for(indicator)
    threshold = opening_threshold(rules)
    options = []
    for option in advise_discard(list(hand), indicator, rules):
        rest = list(hand)
        rest.remove(option.tile)
        options.append(
            Okey101Option(
                figures=option,
                distance=distance_to_win(rest, indicator, rules),
                is_okey=option.tile == okey_tile,
                sentence=_okey101_sentence(option, threshold, rules),
            )
        )
    return Okey101Advice(tuple(options))


def _okey101_sentence(option: DiscardOption, threshold: int, rules: Rules) -> str:
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


def hints(
    groups: Groups,
    indicator: Tile,
    rules: Rules,
    declare: bool,
    current: RefereeVerdict | None,
    uncertain: Sequence[tuple[int, int, Tile]],
) -> list[str]:
    """ "K12 may be B12; with B12 this hand wins" for each single re-reading that makes it valid.

    ``uncertain`` holds (group number, place in group, alternative reading) candidates.
    """
    if current is None or current.valid:
        return []
    found: list[str] = []
    for g, k, alternative in uncertain:
        trial = [list(group) for group in groups]
        was = trial[g][k]
        trial[g][k] = alternative
        try:
            check_possible([t for group in trial for t in group], indicator, rules)
            result = verdict(trial, indicator, rules, declare)
        except OkeyError:
            continue
        if result is not None and result.valid:
            found.append(f"{was} may be {alternative}; with {alternative} this hand wins")
    return found
