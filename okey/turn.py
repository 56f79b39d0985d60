"""The start of a turn: take the tile the left-hand player just discarded, or draw from the pile.

Classic Okey (14 tiles in hand): taking is worth it when the hand with the offered tile, after its
best discard (``advise``), is closer to a win than a draw leaves it **on average**.  The average
is exact: every unseen tile kind (not in the hand, not the indicator, not seen, not the offered
tile) is drawn in turn, the hand of 15 solved (``distance_to_win``: its best discard), and the
distances weighted by the copies left of each kind.  A tie draws (a take shows the table what
you collect).

101 Okey (21 tiles): a taken discard must be used that turn, to open with it when not yet open
(or laid off or melded once open), else it costs 101 (docs/rules.md).  A take is advised only
where it can be used: unopened, where the hand opens with it (melds using it, or pairs holding
it); opened, where it goes onto a table meld or into a new meld with the hand.

>>> hand = "R1 R2 R3 Y5 Y6 K5 K9 K10 K11 K12 B7 B8 B9 R6"  # okey R6
>>> answer = take_or_draw(hand, "Y7", "R5")
>>> answer.take, str(answer.discard)
(True, 'K5')
>>> answer.sentence
'Take Y7, then discard K5: it completes Y5 Y6 Y7 and the other 14 tiles win.'
>>> print(take_or_draw(hand, "K1", "R5").sentence)  # doctest: +NORMALIZE_WHITESPACE
Draw: K1 does not bring you closer (still 1 tile from a win); a draw leaves you 0.76 from a
win on average (22 of 90 unseen tiles bring you closer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from okey.advice import Advice, advise
from okey.advice101 import advise101
from okey.distance import distance_to_win, unseen_counts
from okey.errors import ImpossibleHandError, OkeyError
from okey.hand import check_possible, okey_for
from okey.inputs import read_hand, read_tile
from okey.okey101 import (
    EXTRA_PENALTY,
    LayOff,
    Meld,
    best_opening,
    best_pairs_opening,
    could_lay_off,
    min_leftover,
    opening_threshold,
    read_meld,
    read_table,
)
from okey.rules import Rules
from okey.solver import check_win
from okey.tiles import ALL_KINDS, Tile


@dataclass(frozen=True, slots=True)
class TakeOrDraw:
    """The answer at the start of a turn.

    ``take``: take ``offered`` (then throw ``discard``) rather than draw.  ``take_distance`` is the
    distance to win after the take and that discard; ``draw_distance`` the average distance after
    a draw and the best discard, over ``unseen`` tiles of which ``draw_improving`` lower the
    distance of the hand as it is (``distance``).  ``allowed`` is false for a 101 take the rules
    would punish (never advised); ``advice`` is the whole advice of the hand with the offered
    tile, where a take is worth it (classic) or allowed (101)."""

    take: bool
    offered: Tile
    discard: Tile | None
    # (None for an open 101 hand of fewer than 21 tiles: no distance to a 21-tile win applies.)
    distance: int | None
    take_distance: int | None
    draw_distance: float | None
    draw_improving: int | None
    unseen: int
    allowed: bool
    sentence: str
    advice: Advice | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "take": self.take,
            "offered": str(self.offered),
            "discard": None if self.discard is None else str(self.discard),
            "distance": self.distance,
            "take_distance": self.take_distance,
            "draw_distance": None if self.draw_distance is None else round(self.draw_distance, 4),
            "draw_improving": self.draw_improving,
            "unseen": self.unseen,
            "allowed": self.allowed,
            "sentence": self.sentence,
            "advice": None if self.advice is None else self.advice.to_dict(),
        }


class TurnError(OkeyError):
    """A value of what rates the discards' risk that cannot stand (``read_turn``): ``field``
    names the input the way its caller does."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def read_turn(
    rules: Rules,
    indicator: Tile | None,
    hand: Sequence[Tile] | None,
    offered: Tile | None = None,
    *,
    next_takes: Sequence[Tile] = (),
    next_discards: Sequence[Tile] = (),
    table: Sequence[Sequence[Tile]] = (),
    opened: bool = False,
    names: Mapping[str, str] | None = None,
    indexed: bool = False,
) -> dict[str, Any]:
    """What rates the discards' risk, checked, as ``advise_hand`` and ``take_or_draw`` take it:
    classic, the right-hand player's takes and discards (``next_takes``, ``next_discards``); 101,
    the melds on the table (read as they lie) and whether the player has ``opened``.

    ``TurnError`` naming the input for one of the other game's, a meld that is none, the
    table's melds without an indicator, or a third copy of a tile (with ``hand``, the ``offered``
    tile and the indicator; ``hand`` None where it is not known yet: a camera's settings).
    ``names`` says how the caller calls each input (``{"table": "--table"}``: the messages name
    them so, the other inputs' too), ``indexed`` whether a meld's error names its place
    (``table[1]``).  The hand's own errors come first, as ``check_possible`` raises them.

    >>> from okey.tiles import parse_tiles
    >>> turn = read_turn(Rules.okey101(), Tile.parse("R1"), None, table=[parse_tiles("K4 K5 K6")])
    >>> [str(meld) for meld in turn["table"]], turn["opened"]
    (['K4 K5 K6'], False)
    >>> try:
    ...     read_turn(Rules(), Tile.parse("R1"), None, opened=True, names={"opened": "--opened"})
    ... except TurnError as exc:
    ...     print(exc.field, str(exc)[:50])
    opened --opened: melds on the table and opening are 101's
    """

    def name(field: str) -> str:
        return (names or {}).get(field, field)

    def refuse(field: str, why: str, label: str | None = None) -> TurnError:
        return TurnError(field, f"{label or name(field)}: {why}")

    if rules.game == "okey101":
        for field, given in (("next_takes", next_takes), ("next_discards", next_discards)):
            if given:
                raise refuse(
                    field,
                    "the right-hand player's takes and discards rate classic discards; in 101 a"
                    f" discard is rated against the table ({name('table')}, {name('opened')})",
                )
        if not table:
            return {"table": [], "opened": opened}
        if indicator is None:
            raise refuse(
                "table",
                "give the indicator with the melds (an okey on the table stands for the tile it"
                " replaces)",
            )
        melds = []
        for at, meld in enumerate(table):
            try:
                melds.append(read_meld(meld, indicator, rules))
            except OkeyError as exc:
                label = f"{name('table')}[{at}]" if indexed else None
                raise refuse("table", str(exc), label) from exc
        held = [*(hand or ()), *([offered] if offered is not None else ())]
        try:
            read_table(melds, indicator, rules, held)
        except OkeyError as exc:
            raise refuse("table", str(exc)) from exc
        return {"table": melds, "opened": opened}
    for field, given in (("table", table), ("opened", opened)):
        if given:
            raise refuse(
                field,
                f"melds on the table and opening are 101's ({name('rules')} okey101); a classic"
                " discard is rated by the right-hand player's takes and discards"
                f" ({name('next_takes')}, {name('next_discards')})",
            )
    for field, given in (("next_takes", next_takes), ("next_discards", next_discards)):
        if given and indicator is not None:
            check_possible(list(hand or ()), indicator, rules)  # the hand's own error first
            try:
                check_possible(list(hand or ()), indicator, rules, others=given)
            except OkeyError as exc:
                raise refuse(field, str(exc)) from exc
    return {"next_takes": list(next_takes), "next_discards": list(next_discards)}


def take_or_draw(
    hand: str | Iterable[Tile | str],
    offered: Tile | str,
    indicator: Tile | str,
    rules: Rules | str | None = None,
    seen: str | Iterable[Tile | str] = (),
    *,
    table: Iterable[Meld | str | Iterable[Tile | str]] = (),
    opened: bool = False,
    next_takes: Iterable[Tile | str] = (),
    next_discards: Iterable[Tile | str] = (),
) -> TakeOrDraw:
    """Take ``offered`` or draw, for a hand waiting for its draw (``rules.hand_size`` tiles; in
    101 once open, any number up to that).

    ``seen`` are the other tiles out of play (discards; not ``offered``, which is counted on its
    own).  101 only: ``table`` holds the melds laid on the table, ``opened`` whether this player
    has opened.  Classic only: ``next_takes`` and ``next_discards``, the right-hand player's, rate
    the discard after a take (``advise``'s risk).
    """
    tiles, indicator, rules, seen = read_hand(hand, indicator, rules, seen)
    offered = read_tile(offered, "offered")
    smaller = rules.game == "okey101" and opened and 0 < len(tiles) < rules.hand_size
    if len(tiles) != rules.hand_size and not smaller:
        raise ImpossibleHandError(
            f"take or draw is decided on a hand of {rules.hand_size} tiles waiting for its draw "
            f"({rules.title}; fewer once open in 101); got {len(tiles)}"
        )
    check_possible([*tiles, offered], indicator, rules, others=seen)
    out = [*seen, offered]
    if smaller:
        unseen = sum(unseen_counts(tiles, indicator, out))
        distance, draw_distance, improving = None, None, None
    else:
        distance = distance_to_win(tiles, indicator, rules, out)
        draw_distance, improving, unseen = _draw_average(tiles, indicator, rules, out, distance)
    if rules.game == "okey101":
        return _take_or_draw_101(
            tiles,
            offered,
            indicator,
            rules,
            seen,
            table,
            opened,
            distance,
            draw_distance,
            improving,
            unseen,
        )
    # The take's distance after its best discard is that of the 15 tiles; the whole advice
    # (which discard, ~6 ms) is asked only where the take is worth it.
    take_distance = distance_to_win([*tiles, offered], indicator, rules, seen)
    advice = None
    discard = offered
    if take_distance < draw_distance:
        advice = advise(
            [*tiles, offered],
            indicator,
            rules,
            seen,
            next_takes=next_takes,
            next_discards=next_discards,
        )
        discard = advice.best.discard
    take = take_distance < draw_distance and discard != offered
    sentence = _sentence(
        take,
        offered,
        discard,
        take_distance,
        distance,
        draw_distance,
        improving,
        unseen,
        _completes(tiles, offered, discard, indicator, rules) if take else "",
    )
    return TakeOrDraw(
        take,
        offered,
        discard if take else None,
        distance,
        take_distance,
        draw_distance,
        improving,
        unseen,
        True,
        sentence,
        advice,
    )


def _draw_average(
    tiles: list[Tile], indicator: Tile, rules: Rules, out: list[Tile], distance: int
) -> tuple[float, int, int]:
    """The average distance after a draw and its best discard, weighted by the copies left of
    each unseen kind; the copies whose draw lowers ``distance``; the copies in all."""
    left = unseen_counts(tiles, indicator, out)
    total = weighted = improving = 0
    for kind, copies in enumerate(left):
        if copies:
            drawn = distance_to_win([*tiles, ALL_KINDS[kind]], indicator, rules, out)
            total += copies
            weighted += copies * drawn
            improving += copies if drawn < distance else 0
    if total == 0:
        return float(distance), 0, 0
    return weighted / total, improving, total


def _completes(
    tiles: list[Tile], offered: Tile, discard: Tile, indicator: Tile, rules: Rules
) -> str:
    """The group the offered tile completes in a winning hand, or ""."""
    rest = [*tiles, offered]
    rest.remove(discard)
    win = check_win(rest, indicator, rules)
    for group in win.groups:
        if offered in group.tiles:
            return group.text
    return ""


def _sentence(
    take: bool,
    offered: Tile,
    discard: Tile,
    take_distance: int,
    distance: int,
    draw_distance: float,
    improving: int,
    unseen: int,
    group: str,
) -> str:
    average = f"{draw_distance:.2f}"
    if take:
        if take_distance == 0:
            what = f"it completes {group} and " if group else ""
            return f"Take {offered}, then discard {discard}: {what}the other 14 tiles win."
        away = _away(take_distance)
        return (
            f"Take {offered}, then discard {discard}: it leaves you {away} from a win; "
            f"a draw leaves you {average} from a win on average "
            f"({improving} of {unseen} unseen tiles bring you closer)."
        )
    if take_distance >= distance:
        why = f"{offered} does not bring you closer (still {_away(distance)} from a win)"
    else:
        why = f"taking {offered} leaves you {_away(take_distance)} from a win"
    return (
        f"Draw: {why}; a draw leaves you {average} from a win on average "
        f"({improving} of {unseen} unseen tiles bring you closer)."
    )


def _take_open_101(
    tiles: list[Tile],
    offered: Tile,
    indicator: Tile,
    rules: Rules,
    melds: list[Meld],
    use: str,
    lay: LayOff | None,
    distance: int | None,
    draw_distance: float | None,
    improving: int | None,
    unseen: int,
) -> TakeOrDraw:
    """An open 101 player's take: the discard after it that leaves the fewest points in hand
    (the offered tile laid off where it fits a table meld, else kept in a meld with the hand; a
    discard that fits a table meld or is an okey counted 101 more, as ``advise_discard`` does),
    taken only where that is fewer than the points held now."""
    now = min_leftover(tiles, indicator, rules).penalty
    okey = okey_for(indicator)
    found: tuple[int, int, Tile, bool] | None = None
    for discard in sorted(set(tiles)):
        rest = [*tiles, offered]
        rest.remove(discard)
        if lay is not None:
            rest.remove(offered)  # onto the table
        elif not best_opening(rest, indicator, rules, must_use=offered).points:
            continue  # the offered tile would be left out of every meld
        # (A finish's last discard draws no penalty: an okey there doubles the finish.)
        cost = 0
        if rest:
            fits = bool(melds) and could_lay_off(discard, melds, indicator, rules) is not None
            cost = min_leftover(rest, indicator, rules).penalty
            cost += EXTRA_PENALTY if discard == okey or fits else 0
        if found is None or (cost, discard.index) < found[:2]:
            found = (cost, discard.index, discard, not rest)
    if found is None:
        sentence = f"Draw: after taking {offered}, no discard would keep it in use."
        return TakeOrDraw(
            False, offered, None, distance, None, draw_distance, improving, unseen, False, sentence
        )
    after, _, discard, finishes = found
    if after >= now:
        sentence = f"Draw: taking {offered} leaves {after} points in hand, against {now} now."
        return TakeOrDraw(
            False, offered, None, distance, None, draw_distance, improving, unseen, True, sentence
        )
    result = "and you finish" if finishes else f"and leaves {after} points in hand instead of {now}"
    sentence = f"Take {offered}, then discard {discard}: {use}, {result}."
    return TakeOrDraw(
        True, offered, discard, distance, None, draw_distance, improving, unseen, True, sentence
    )


def _opens(tiles: list[Tile], indicator: Tile, rules: Rules) -> bool:
    return (
        best_opening(tiles, indicator, rules).opens
        or best_pairs_opening(tiles, indicator, rules).opens
    )


def _still_used(
    drawn: list[Tile],
    discard: Tile,
    offered: Tile,
    indicator: Tile,
    rules: Rules,
) -> bool:
    """Whether the hand with the offered tile, less ``discard``, still opens with the offered
    tile, as the 101 rule asks of a player not yet open."""
    if discard == offered:
        return False
    rest = list(drawn)
    rest.remove(discard)
    if best_opening(rest, indicator, rules, must_use=offered).points >= opening_threshold(rules):
        return True
    pairs = best_pairs_opening(rest, indicator, rules)
    return pairs.opens and any(offered in pair for pair in pairs.pairs)


def _away(distance: int) -> str:
    return "1 tile" if distance == 1 else f"{distance} tiles"


def _take_or_draw_101(
    tiles: list[Tile],
    offered: Tile,
    indicator: Tile,
    rules: Rules,
    seen: list[Tile],
    table: Iterable[Meld | str | Iterable[Tile | str]],
    opened: bool,
    distance: int | None,
    draw_distance: float | None,
    improving: int | None,
    unseen: int,
) -> TakeOrDraw:
    """101: a take only where the offered tile can be used this turn (module docstring)."""
    drawn = [*tiles, offered]
    melds = read_table(table, indicator, rules, drawn)
    threshold = opening_threshold(rules)
    use = why = ""
    lay = None
    if not opened:
        opening = best_opening(drawn, indicator, rules, must_use=offered)
        pairs = best_pairs_opening(drawn, indicator, rules)
        in_pair = any(offered in pair for pair in pairs.pairs)
        if opening.points >= threshold:
            use = f"it opens with {opening.points} points (needs {threshold})"
        elif pairs.opens and in_pair:
            use = f"it opens with {pairs.count} pairs (needs {rules.pairs_opening_min})"
        else:
            why = (
                f"the best opening with it is {opening.points} points (needs {threshold})"
                if opening.points
                else "no opening uses it"
            )
    else:
        lay = could_lay_off(offered, melds, indicator, rules) if melds else None
        meld = best_opening(drawn, indicator, rules, must_use=offered)
        if lay is not None:
            use = f"it goes {str(lay).removeprefix(f'{offered} ')}"
        elif meld.points:
            use = "it makes a new meld with your tiles"
        else:
            why = "it fits no meld on the table and none with your tiles"
    if not use:
        rule = "open with it" if not opened else "use it"
        sentence = (
            f"Draw: a taken {offered} must be used this turn (you would have to {rule}), and {why}."
        )
        return TakeOrDraw(
            False, offered, None, distance, None, draw_distance, improving, unseen, False, sentence
        )
    if opened:
        return _take_open_101(
            tiles,
            offered,
            indicator,
            rules,
            melds,
            use,
            lay,
            distance,
            draw_distance,
            improving,
            unseen,
        )
    advice = advise101(drawn, indicator, rules, seen, table=melds, opened=opened)
    best = next(
        (
            option
            for option in advice.options
            if option.advised
            and (not melds or could_lay_off(option.discard, melds, indicator, rules) is None)
            and _still_used(drawn, option.discard, offered, indicator, rules)
        ),
        None,
    )
    if best is None:
        sentence = f"Draw: no discard after taking {offered} keeps it in use without a penalty."
        return TakeOrDraw(
            False, offered, None, distance, None, draw_distance, improving, unseen, False, sentence
        )
    # Where the hand opens (or is open) without it, a take must also leave fewer points in hand.
    opens_now = _opens(tiles, indicator, rules)
    now = min_leftover(tiles, indicator, rules).penalty
    after = best.figures.leftover if best.figures is not None else now
    if opens_now and after >= now:
        sentence = (
            f"Draw: taking {offered} leaves {after} points in hand after the best discard, "
            f"no fewer than the {now} you hold now."
        )
        return TakeOrDraw(
            False,
            offered,
            None,
            distance,
            best.distance,
            draw_distance,
            improving,
            unseen,
            True,
            sentence,
            advice,
        )
    if opens_now:
        use += f", and leaves {after} points in hand instead of {now}"
    sentence = f"Take {offered}, then discard {best.discard}: {use}."
    return TakeOrDraw(
        True,
        offered,
        best.discard,
        distance,
        best.distance,
        draw_distance,
        improving,
        unseen,
        True,
        sentence,
        advice,
    )
