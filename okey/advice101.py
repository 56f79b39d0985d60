"""One entry point for discard advice in either game, in the shape of ``okey.Advice``.

``advise_hand`` sends a 101 hand of 22 tiles (one to discard) to ``okey.okey101.advise_discard``,
which ranks the discards the way 101 is played (reach the opening threshold, then the smallest
leftover; an okey discard costs 101) and takes tens of milliseconds where ``okey.advise`` takes up
to a second.  Every other hand of ``rules.hand_size`` or one more tiles (14 / 15 classic; 21 in
101: the waits) gets ``okey.advise``.  The 101 ranking comes back as an ``Okey101Advice``, which
reads like ``okey.Advice`` (``best.discard``, ``best.advised``, ``sentence``, ``to_dict()``): each
option keeps ``discard``, ``distance`` (to win, after that discard), ``is_okey``, ``advised``
(false for a discard drawing a penalty) and ``sentence``, and adds the 101 figures
``opening_points``, ``opens``, ``pairs``, ``leftover`` and ``penalty``; ``improving`` is empty
(101 ranks by points, not by the tiles still to draw).  The camera pipeline (``vision.judge``) and
the web service (``/hand``, pushed tables) both call ``advise_hand``.

>>> from okey import Rules, Tile, parse_tiles
>>> hand = parse_tiles("R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1 Y8 B9 K6")
>>> hand.append(Tile.parse("K12"))
>>> advice = advise_hand(hand, Tile.parse("B2"), Rules.okey101()).to_dict()
>>> advice["adviser"], advice["options"][0]["discard"], advice["options"][0]["leftover"]
('okey101', 'B9', 33)
>>> advice["sentence"]
'Discard B9: opens with 133 points (needs 101); 33 points left in hand.'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from okey.advice import Advice, advise
from okey.distance import distance_to_win
from okey.hand import okey_for
from okey.okey101 import DiscardOption, advise_discard, opening_threshold
from okey.rules import Rules
from okey.tiles import Tile


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


def advise_hand(
    hand: Sequence[Tile], indicator: Tile, rules: Rules, seen: Sequence[Tile] = ()
) -> Advice | Okey101Advice:
    """The advice for ``rules.hand_size`` or one more tiles, by game (see the module docstring).
    ``seen`` narrows ``okey.advise``'s unseen counts; the 101 ranking does not use it."""
    if rules.game == "okey101" and len(hand) == rules.hand_size + 1 <= rules.max_rack_tiles:
        return _okey101_advice(hand, indicator, rules)
    return advise(list(hand), indicator, rules, seen=tuple(seen))


def _okey101_advice(hand: Sequence[Tile], indicator: Tile, rules: Rules) -> Okey101Advice:
    """``advise_discard``'s ranking of a 22-tile 101 hand, best first."""
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
                sentence=_sentence(option, threshold, rules),
            )
        )
    return Okey101Advice(tuple(options))


def _sentence(option: DiscardOption, threshold: int, rules: Rules) -> str:
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
