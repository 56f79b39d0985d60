"""What the engine says about a rack read from a photo: verdict, advice, one-tile-away hints.

A thin bridge from the pipeline's laid-out groups to ``okey.referee`` and ``okey.advise``, with the
decisions a camera adds (documented in docs/pipeline.md):

* a rack of ``rules.hand_size`` tiles (14 classic) is refereed as laid out: the player shows a
  finished hand, or wants to know whether the arrangement on the rack wins;
* with ``declare`` and one tile more (15), the tile standing alone in its own group is the
  finishing discard, and the other groups are refereed;
* a rack of ``hand_size`` or ``hand_size + 1`` tiles gets the engine's advice (the waits for 14, the
  ranked discards for 15); a 101 rack of 22 tiles is ranked by ``okey.okey101.advise_discard``
  (``okey.advise_hand`` chooses, as the web service's ``/hand`` does);
* when the verdict is "not valid", each likely misreading of an uncertain tile is tried in its
  place; one that makes the hand valid is reported: "K12 may be B12; with B12 this hand wins".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from okey import (
    Advice,
    OkeyError,
    RefereeVerdict,
    Rules,
    Tile,
    advise_hand,
    check_possible,
    hand_stage,
    referee,
    split_discard,
)

Groups = list[list[Tile]]


def verdict(groups: Groups, indicator: Tile, rules: Rules, declare: bool) -> RefereeVerdict | None:
    """The referee's verdict on the groups as laid out, or None when the rack is no full hand."""
    declared, discard = split_discard(groups, rules) if declare else (groups, None)
    if sum(len(g) for g in declared) != rules.hand_size:
        return None
    return referee(declared, indicator, rules, discard=discard)


def advice(
    hand: Sequence[Tile], indicator: Tile, rules: Rules, seen: Sequence[Tile], **turn: Any
) -> Advice | None:
    """The engine's advice (``okey.advise_hand``, with ``turn``: what rates the discards' risk)
    for 14 or 15 tiles (21 or 22 in 101), or None for other sizes."""
    try:
        hand_stage(len(hand), rules)
    except OkeyError:
        return None
    return advise_hand(hand, indicator, rules, seen, **turn)


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
