"""Classic Okey scoring (docs/rules.md): every system a table may play, from a round summary.

Systems (``rules.scoring``):

* ``others_lose`` / ``turkish``: everyone starts at ``rules.start_points`` (20) and counts down.
  Both use one table of finish values: normal 2, seven pairs 4, colour finish (``colour_finish``
  switch: 4 in the ES variant, 8 for an unordered one colour in the TR text), times 2 with an
  okey discard and times 4 with a double okey (``double_okey`` switch); a gösterge is worth 1.  An
  ordered 1..13 colour finish (TR text) ends the game.  Who loses the points is the
  ``countdown`` variant: the others (default), the others with a player at 0 leaving, or the
  finisher ("düşmeli", first to 0 wins).  ``partnership`` scores teams of partners sitting opposite.
* ``penalty_table`` (the RO text, online): everyone starts at 0 and collects penalties: 20 to each
  opponent of a finisher, 40 for seven pairs or an okey discard, 10 to everyone on a draw, 10 to
  every opponent of a player holding the indicator's twin.  ``prize_split`` shares a quick game's
  prize.
* ``counted`` (the TR text, renkli / sayılı): each loser's penalty is the sum of the numbers of the
  tiles outside valid groups under that rack's best grouping, doubled when the finisher went
  pairs, doubled again when the indicator is red or black.

>>> from okey import Rules
>>> round_changes(ClassicRound("A", okey_discard=True), ["A", "B", "C", "D"], Rules.classic())
{'A': 0, 'B': -4, 'C': -4, 'D': -4}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from okey.errors import OkeyError
from okey.hand import check_possible, okey_for
from okey.melding import MeldSearch
from okey.rules import Rules
from okey.tiles import Tile, parse_tiles

Finish = Literal["normal", "pairs", "colour", "colour_ordered"]
FINISHES: tuple[str, ...] = ("normal", "pairs", "colour", "colour_ordered")
COUNTDOWN_SYSTEMS = ("others_lose", "turkish")
GOSTERGE_POINTS = 1

# Seed 002's penalty table.
PENALTY_FINISH = 20
PENALTY_DRAW = 10
PENALTY_PAIRS = 40
PENALTY_OKEY_DISCARD = 40
PENALTY_GOSTERGE = 10
# Quick games: the rest of the prize goes to players under this many penalty points.
PRIZE_LIMITS = {1: 40, 3: 80}
WINNER_SHARE = 0.75


@dataclass(frozen=True, slots=True)
class ClassicRound:
    """What happened in one classic round.

    ``finisher`` None means a draw (the centre ran out).  ``finish``: normal, pairs (seven pairs),
    colour (one colour, unordered) or colour_ordered (1..13 of one colour).  ``gosterge``: players
    who showed the indicator's twin (in the penalty table: who held it at the settlement).
    ``indicator`` and ``racks`` (each loser's tiles) are needed by the counted-tiles variant.
    """

    finisher: str | None = None
    finish: Finish = "normal"
    okey_discard: bool = False
    double_okey: bool = False
    gosterge: tuple[str, ...] = ()
    colour: str | None = None
    indicator: Tile | None = None
    # Not hashed (a mapping); rounds compare equal field by field.
    racks: Mapping[str, tuple[Tile, ...]] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.finish not in FINISHES:
            raise OkeyError(f"unknown finish {self.finish!r}: choose one of {', '.join(FINISHES)}")
        if self.finisher is None and (
            self.finish != "normal" or self.okey_discard or self.double_okey
        ):
            raise OkeyError("a drawn round (no finisher) has no finish type or okey discard")
        if self.colour is not None and self.colour not in "RYBK":
            raise OkeyError(f"unknown colour {self.colour!r}: use R, Y, B or K")

    @property
    def is_draw(self) -> bool:
        return self.finisher is None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"finisher": self.finisher}
        if self.finisher is not None:
            data["finish"] = self.finish
        if self.okey_discard:
            data["okey_discard"] = True
        if self.double_okey:
            data["double_okey"] = True
        if self.gosterge:
            data["gosterge"] = list(self.gosterge)
        if self.colour is not None:
            data["colour"] = self.colour
        if self.indicator is not None:
            data["indicator"] = str(self.indicator)
        if self.racks:
            data["racks"] = {name: [str(t) for t in rack] for name, rack in self.racks.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClassicRound:
        known = {
            "finisher",
            "finish",
            "okey_discard",
            "double_okey",
            "gosterge",
            "colour",
            "indicator",
            "racks",
        }
        unknown = set(data) - known
        if unknown:
            raise OkeyError(f"unknown round fields: {', '.join(sorted(unknown))}")
        indicator = data.get("indicator")
        return cls(
            finisher=data.get("finisher"),
            finish=data.get("finish", "normal"),
            okey_discard=bool(data.get("okey_discard", False)),
            double_okey=bool(data.get("double_okey", False)),
            gosterge=tuple(data.get("gosterge", ())),
            colour=data.get("colour"),
            indicator=None if indicator is None else Tile.parse(indicator),
            racks={name: tuple(parse_tiles(rack)) for name, rack in data.get("racks", {}).items()},
        )


def round_from_verdict(
    verdict: Any,
    finisher: str,
    *,
    gosterge: Iterable[str] = (),
    colour: str | None = None,
) -> ClassicRound:
    """The round a valid referee verdict (``okey.referee.referee``) describes, ready to score.

    >>> from okey import Tile, parse_tiles
    >>> from okey.referee import referee
    >>> groups = [parse_tiles(g) for g in ("R1 R1", "K5 K5", "B9 B9", "Y2 Y2", "R7 R7", "K8 K8",
    ...                                    "B3 B3")]
    >>> round_from_verdict(referee(groups, Tile.parse("Y11"), discard=Tile.parse("K1")), "A")
    ClassicRound(finisher='A', finish='pairs', okey_discard=False, double_okey=False, \
gosterge=(), colour=None, indicator=None, racks={})
    """
    if not verdict.valid or verdict.finish is None:
        raise OkeyError(f"the declared hand is not a valid finish: {verdict.reason}")
    finish = "pairs" if verdict.finish == "seven_pairs" else verdict.finish
    return ClassicRound(
        finisher,
        finish,
        okey_discard=verdict.okey_discard,
        double_okey=verdict.double_okey,
        gosterge=tuple(gosterge),
        colour=colour,
    )


# --- countdown systems (ES, RU, TR) --------------------------------------------------------------
def finish_value(summary: ClassicRound, rules: Rules) -> int:
    """Points a finish is worth in the countdown systems.

    >>> finish_value(ClassicRound("A", "pairs", okey_discard=True), Rules.classic())
    8
    """
    if summary.finisher is None:
        return 0
    if summary.finish in ("colour", "colour_ordered"):
        base = _colour_base(summary, rules)
    else:
        base = 4 if summary.finish == "pairs" else 2
    if summary.double_okey:
        if not rules.double_okey:
            raise OkeyError("a double okey finish needs the double_okey rule switched on")
        return base * 4
    return base * 2 if summary.okey_discard else base


def _colour_base(summary: ClassicRound, rules: Rules) -> int:
    if rules.colour_finish == "off":
        raise OkeyError("a colour finish needs the colour_finish rule (variant_000 or turkish_003)")
    if summary.colour is not None and summary.colour not in rules.colour_finish_colours:
        raise OkeyError(
            f"a colour finish in {summary.colour} does not count at this table "
            f"(only {rules.colour_finish_colours})"
        )
    return 4 if rules.colour_finish == "variant_000" else 8


def ends_game(summary: ClassicRound, rules: Rules) -> bool:
    """An ordered 1..13 colour finish under the TR text's rule: everyone else drops to zero."""
    return summary.finish == "colour_ordered" and rules.colour_finish == "turkish_003"


def teams_of(players: Sequence[str]) -> list[tuple[str, str]]:
    """Partners sit opposite: seats 1+3 and 2+4.

    >>> teams_of(["A", "B", "C", "D"])
    [('A', 'C'), ('B', 'D')]
    """
    if len(players) != 4:
        raise OkeyError(f"partnership needs 4 players, got {len(players)}")
    return [(players[0], players[2]), (players[1], players[3])]


def team_name(team: tuple[str, str]) -> str:
    return f"{team[0]}+{team[1]}"


def sides(players: Sequence[str], rules: Rules) -> list[str]:
    """Who keeps a score: each player, or each team with ``rules.partnership``."""
    if rules.partnership:
        return [team_name(t) for t in teams_of(players)]
    return list(players)


def side_of(player: str, players: Sequence[str], rules: Rules) -> str:
    if player not in players:
        raise OkeyError(f"{player!r} is not a player of this game ({', '.join(players)})")
    if not rules.partnership:
        return player
    return next(team_name(t) for t in teams_of(players) if player in t)


def round_changes(
    summary: ClassicRound,
    players: Sequence[str],
    rules: Rules,
    *,
    active: Iterable[str] | None = None,
) -> dict[str, int]:
    """The signed change to each side's score (player, or team with ``partnership``).

    Countdown systems give negative changes (scores count down); the penalty table and the counted
    variant give positive penalties.  ``active``: the sides still in the game (``leave_at_zero``);
    sides that left are not charged.  An ordered colour finish is not a change: see ``ends_game``.

    >>> round_changes(ClassicRound("A", gosterge=("B",)), ["A", "B", "C"], Rules.classic())
    {'A': -1, 'B': -2, 'C': -3}
    """
    _check_players(summary, players)
    everyone = sides(players, rules)
    live = list(everyone if active is None else active)
    changes = dict.fromkeys(everyone, 0)
    if rules.scoring in COUNTDOWN_SYSTEMS:
        _countdown(summary, players, rules, live, changes)
    elif rules.scoring == "penalty_table":
        _penalty_table(summary, players, rules, changes)
    elif rules.scoring == "counted":
        _counted(summary, players, rules, changes)
    else:
        raise OkeyError(f"unknown scoring system {rules.scoring!r}")
    return changes


def _check_players(summary: ClassicRound, players: Sequence[str]) -> None:
    if len(set(players)) != len(players):
        raise OkeyError(f"player names repeat: {list(players)}")
    named = [summary.finisher] if summary.finisher is not None else []
    for name in [*named, *summary.gosterge, *summary.racks]:
        if name not in players:
            raise OkeyError(f"{name!r} is not a player of this game ({', '.join(players)})")


def _countdown(summary, players, rules, live, changes) -> None:
    losers_of = _losers_fn(players, rules, live)
    for shower in summary.gosterge:
        _charge(side_of(shower, players, rules), GOSTERGE_POINTS, losers_of, rules, changes)
    if summary.finisher is not None and not ends_game(summary, rules):
        side = side_of(summary.finisher, players, rules)
        _charge(side, finish_value(summary, rules), losers_of, rules, changes)


def _losers_fn(players, rules, live):
    def losers(side: str) -> list[str]:
        return [s for s in sides(players, rules) if s != side and s in live]

    return losers


def _charge(side: str, points: int, losers_of, rules: Rules, changes: dict[str, int]) -> None:
    # "düşmeli": the scorer's own count goes down; otherwise every other live side pays.
    if rules.countdown == "finisher_down":
        changes[side] -= points
        return
    for loser in losers_of(side):
        changes[loser] -= points


# --- penalty table (002) --------------------------------------------------------------------------
def _penalty_table(summary, players, rules, changes) -> None:
    if rules.partnership:
        raise OkeyError("the penalty table is scored per player, not in partnership")
    if summary.finisher is None:
        for name in players:
            changes[name] += PENALTY_DRAW
    else:
        if summary.finish not in ("normal", "pairs") or summary.double_okey:
            raise OkeyError(
                "the penalty table scores normal, seven-pairs and okey-discard finishes only"
            )
        penalty = PENALTY_PAIRS if summary.finish == "pairs" else PENALTY_FINISH
        if summary.okey_discard:
            # 40 = 2 x 20: the okey discard doubles, as in every other system, so seven pairs
            # with an okey discard costs 80 (the table names no combination; the referee agrees).
            penalty *= PENALTY_OKEY_DISCARD // PENALTY_FINISH
        for name in players:
            if name != summary.finisher:
                changes[name] += penalty
    for holder in summary.gosterge:
        for name in players:
            if name != holder:
                changes[name] += PENALTY_GOSTERGE


def prize_split(
    penalties: Mapping[str, int],
    prize: float,
    rounds: int,
    *,
    limit: int | None = None,
    winner_share: float = WINNER_SHARE,
) -> dict[str, float]:
    """Share a quick game's prize (RO text): the lowest penalty takes ``winner_share`` (75%); the
    rest is shared equally by the other players under 40 (1-round game) or 80 (3-round game)
    penalty points; with nobody under the limit the winner takes everything.  Tied winners share.

    >>> prize_split({"A": 0, "B": 20, "C": 40, "D": 60}, 100, rounds=1)
    {'A': 75.0, 'B': 25.0, 'C': 0.0, 'D': 0.0}
    """
    if not penalties:
        raise OkeyError("no players to share the prize among")
    if limit is None:
        if rounds not in PRIZE_LIMITS:
            raise OkeyError(
                f"quick games have 1 or 3 rounds (got {rounds}); pass limit= for other lengths"
            )
        limit = PRIZE_LIMITS[rounds]
    best = min(penalties.values())
    winners = [n for n, p in penalties.items() if p == best]
    others = [n for n, p in penalties.items() if p != best and p < limit]
    share = dict.fromkeys(penalties, 0.0)
    top = prize if not others else prize * winner_share
    for name in winners:
        share[name] = top / len(winners)
    for name in others:
        share[name] = (prize - top) / len(others)
    return share


# --- counted tiles (003 renkli / sayılı) ----------------------------------------------------------
def ungrouped_sum(tiles: Sequence[Tile], indicator: Tile, rules: Rules) -> int:
    """The smallest sum of numbers of tiles left outside runs and sets (a false joker counts as the
    okey's face; an okey left over counts its own face).

    >>> ungrouped_sum(parse_tiles("R1 R2 R3 K5 Y5 B5 K9 Y11"), Tile.parse("B1"), Rules.classic())
    20
    """
    okey = okey_for(indicator)
    search = MeldSearch(
        indicator,
        wrap=rules.wrap_13_1,
        max_run_length=rules.max_run_length,
        okey_weight=okey.number,
    )
    x, okeys, _ = search.pack(tiles)
    total = sum(okey.number if t.is_false_joker else t.number for t in tiles if t != okey)
    total += okey.number * okeys
    return total - search.value(x, okeys)


def counted_penalty(rack: Sequence[Tile], summary: ClassicRound, rules: Rules) -> int:
    """One loser's penalty: ungrouped sum, x2 after a pairs finish, x2 for a red or black
    indicator."""
    if summary.indicator is None:
        raise OkeyError("the counted-tiles variant needs the round's indicator")
    check_possible(rack, summary.indicator, rules)
    points = ungrouped_sum(rack, summary.indicator, rules)
    if summary.finish == "pairs":
        points *= 2
    if summary.indicator.colour in ("R", "K"):
        points *= 2
    return points


def _counted(summary, players, rules, changes) -> None:
    if rules.partnership:
        raise OkeyError("the counted-tiles variant is scored per player, not in partnership")
    if summary.finisher is None:
        return  # a draw scores nothing
    for name in players:
        if name == summary.finisher:
            continue
        if name not in summary.racks:
            raise OkeyError(f"the counted-tiles variant needs {name}'s rack")
        changes[name] += counted_penalty(summary.racks[name], summary, rules)
