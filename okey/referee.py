"""Referee a declared hand: the groups as laid out on the rack, left to right, plus the discard.

The verdict says whether the declaration is valid, and if not, the first bad group and why in plain
words, and whether another arrangement of the same tiles wins.  A valid finish gets its type and the
classic points of docs/rules.md.

>>> from okey import Rules, Tile, parse_tiles
>>> groups = [parse_tiles(g) for g in ("R1 R2 R3", "K12 Y12 K12", "B5 B6 B7 B8", "Y9 Y10 Y11 Y12")]
>>> verdict = referee(groups, Tile.parse("R9"), Rules.classic())
>>> verdict.valid, verdict.reason
(False, 'group 2, K12 Y12 K12: a set may not repeat a colour')
>>> groups = [parse_tiles(g) for g in ("R1 R2 R3", "K5 Y5 B5", "B9 B10 B11 B12", "Y9 Y10 Y11 Y12")]
>>> verdict = referee(groups, Tile.parse("R9"), Rules.classic(), discard=Tile.parse("R10"))
>>> verdict.valid, verdict.finish, verdict.okey_discard, verdict.points
(True, 'normal', True, 4)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from okey.errors import ArgumentError, OkeyError
from okey.groups import GroupReading, explain_group
from okey.hand import check_possible, okey_for
from okey.inputs import read_rules, read_tile, read_tiles
from okey.rules import Rules
from okey.solver import Group, WinResult, check_win
from okey.tiles import Tile, format_tiles, parse_tiles

# Base points of each finish type (docs/rules.md): the ES/RU "others lose" system and the TR text
# agree on 2 and 4; the online penalty table (RO text) charges 20 and 40.
BASE_POINTS = {
    "others_lose": {"normal": 2, "seven_pairs": 4},
    "turkish": {"normal": 2, "seven_pairs": 4},
    "counted": {"normal": 2, "seven_pairs": 4},
    "penalty_table": {"normal": 20, "seven_pairs": 40},
}
COLOUR_FINISHES = ("colour", "colour_ordered")
FINISH_WORDS = {
    "normal": "a normal finish",
    "seven_pairs": "a seven-pairs finish",
    "colour": "a colour finish",
    "colour_ordered": "an ordered colour finish (1 to 13 of one colour)",
}


# A declared group's verdict is the group reading itself: what it can be, its faces, or why not.
GroupVerdict = GroupReading


@dataclass(frozen=True, slots=True)
class RefereeVerdict:
    """The referee's answer.  ``finish``, ``okey_discard`` and ``points`` feed the scoring."""

    valid: bool
    groups: tuple[GroupVerdict, ...]
    reason: str  # why the declaration fails ("" when valid)
    first_bad_group: int | None  # 1-based position of the first bad group, if one is bad
    other_arrangement_wins: bool  # another arrangement of the same tiles wins
    arrangement: WinResult | None  # that arrangement (or the declared one when valid)
    finish: str | None  # "normal", "seven_pairs", "colour", "colour_ordered"; None if invalid
    okey_discard: bool
    double_okey: bool
    points: int
    ends_game: bool = False  # the ordered colour finish of the TR text ends the game
    discard: Tile | None = None
    sentence: str = field(default="")

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "groups": [g.to_dict() for g in self.groups],
            "reason": self.reason,
            "first_bad_group": self.first_bad_group,
            "other_arrangement_wins": self.other_arrangement_wins,
            "arrangement": self.arrangement.to_dict() if self.arrangement else None,
            "finish": self.finish,
            "okey_discard": self.okey_discard,
            "double_okey": self.double_okey,
            "points": self.points,
            "ends_game": self.ends_game,
            "discard": str(self.discard) if self.discard else None,
            "sentence": self.sentence,
        }


def parse_groups(text: str) -> list[list[Tile]]:
    """Groups written ``"R1 R2 R3 | K5 Y5 B5 | ..."``; an empty group is an error."""
    parts = [p.strip() for p in text.split("|")]
    groups = []
    for i, part in enumerate(parts, start=1):
        if not part:
            raise OkeyError(f"group {i} is empty (two '|' in a row, or one at an end)")
        groups.append(parse_tiles(part))
    return groups


def read_groups(groups: object) -> list[list[Tile]]:
    """Groups as lists of tiles: one string split at ``|`` (``parse_groups``), or a list of
    groups, each tiles or notation (``okey.inputs``)."""
    if isinstance(groups, str):
        return parse_groups(groups)
    if not isinstance(groups, Iterable):
        raise ArgumentError("groups", f"expected a list of groups, got {type(groups).__name__}")
    return [read_tiles(g, f"groups[{i}]") for i, g in enumerate(groups)]


def split_discard(
    groups: Sequence[Sequence[Tile]], rules: Rules, discard: Tile | None = None
) -> tuple[list[list[Tile]], Tile | None]:
    """The groups a finishing player declares and the discard: with one tile over the hand size
    and no discard named, the one tile standing alone in its own group is the finishing discard.

    >>> groups = parse_groups("R1 R2 R3 | Y5 B5 K5 | K9 K10 K11 K12 | B7 B8 B9 R6 | Y13")
    >>> declared, discard = split_discard(groups, Rules.classic())
    >>> len(declared), discard
    (4, Tile.parse('Y13'))
    """
    groups = read_groups(groups)
    if discard is not None:
        discard = read_tile(discard, "discard")
    lone = [k for k, g in enumerate(groups) if len(g) == 1]
    total = sum(len(g) for g in groups)
    if discard is not None or total != rules.hand_size + 1 or len(lone) != 1:
        return groups, discard
    k = lone[0]
    return groups[:k] + groups[k + 1 :], groups[k][0]


def referee(
    groups: Sequence[Sequence[Tile | str]],
    indicator: Tile | str,
    rules: Rules | None = None,
    discard: Tile | str | None = None,
    *,
    second_okey: bool = False,
) -> RefereeVerdict:
    """Referee a declared hand: ``groups`` as laid out, left to right, and the finishing discard.

    ``second_okey`` marks a finish by discarding the second okey after a "tur" (double okey, only
    counted where ``rules.double_okey``).
    """
    rules = read_rules(rules, Rules.classic())
    indicator = read_tile(indicator, "indicator")
    groups = read_groups(groups)
    if discard is not None:
        discard = read_tile(discard, "discard")
    tiles = [t for g in groups for t in g]
    check_possible(tiles + ([discard] if discard else []), indicator, rules)
    verdicts = tuple(_group_verdict(g, indicator, rules) for g in groups)
    okey = okey_for(indicator)
    okey_discard = discard == okey
    reason, bad = _declaration_fault(verdicts, len(tiles), rules)
    other = check_win(tiles, indicator, rules) if len(tiles) == rules.hand_size else None
    if reason:
        return RefereeVerdict(
            valid=False,
            groups=verdicts,
            reason=reason,
            first_bad_group=bad,
            other_arrangement_wins=bool(other and other.winning),
            arrangement=other if other and other.winning else None,
            finish=None,
            okey_discard=okey_discard,
            double_okey=False,
            points=0,
            discard=discard,
            sentence=_invalid_sentence(reason, other),
        )
    pairs = all(g.kinds == frozenset({"pair"}) for g in verdicts)
    finish = "seven_pairs" if pairs else "normal"
    colour = _colour_finish(verdicts, rules)
    if colour:
        finish = colour
    double = okey_discard and second_okey and rules.double_okey
    points, ends_game = _points(finish, okey_discard, double, rules)
    declared = WinResult(
        True, "pairs" if pairs else "melds", tuple(_as_group(g, pairs) for g in verdicts)
    )
    return RefereeVerdict(
        valid=True,
        groups=verdicts,
        reason="",
        first_bad_group=None,
        other_arrangement_wins=True,
        arrangement=declared,
        finish=finish,
        okey_discard=okey_discard,
        double_okey=double,
        points=points,
        ends_game=ends_game,
        discard=discard,
        sentence=_valid_sentence(finish, okey_discard, double, points, ends_game, rules),
    )


def _group_verdict(group: list[Tile], indicator: Tile, rules: Rules) -> GroupVerdict:
    return explain_group(group, indicator, rules)


def _declaration_fault(
    verdicts: tuple[GroupVerdict, ...], count: int, rules: Rules
) -> tuple[str, int | None]:
    """The first reason the declaration fails, and the 1-based bad group (None if not one group)."""
    for i, g in enumerate(verdicts, start=1):
        if not g.valid:
            return f"group {i}, {g.reason}", i
    if count != rules.hand_size:
        return (
            f"{count} tiles declared: a winning {rules.title} hand lays out {rules.hand_size}",
            None,
        )
    only_pair = [i for i, g in enumerate(verdicts, start=1) if g.kinds == frozenset({"pair"})]
    if only_pair and len(only_pair) != len(verdicts):
        i = only_pair[0]
        return (
            f"group {i}, {format_tiles(verdicts[i - 1].tiles)}: a pair counts only in a hand of "
            "pairs; the other groups are runs and sets",
            i,
        )
    if only_pair and not rules.seven_pairs:
        return f"a hand of pairs does not win under the {rules.name} rules", None
    return "", None


def _colour_finish(verdicts: tuple[GroupVerdict, ...], rules: Rules) -> str | None:
    """``colour`` or ``colour_ordered`` when every tile plays as one colour the rules reward."""
    if rules.colour_finish == "off":
        return None
    faces = [t for g in verdicts for t in g.stands_for]
    colours = {t.colour for t in faces}
    if len(colours) != 1 or colours.pop() not in rules.colour_finish_colours:
        return None
    if any(g.kinds == frozenset({"set"}) for g in verdicts):
        return None
    ordered = {t.number for t in faces} == set(range(1, 14))
    return "colour_ordered" if ordered and rules.colour_finish == "turkish_003" else "colour"


def _points(finish: str, okey_discard: bool, double: bool, rules: Rules) -> tuple[int, bool]:
    """Classic points (docs/rules.md) and whether the finish ends the game.

    Seed 002's penalty table lists no colour finish (``okey.scoring`` refuses one), so there a
    colour finish is reported but scores no points and does not end the game.

    >>> from dataclasses import replace
    >>> _points("colour", True, False, replace(Rules.classic(), colour_finish="variant_000"))
    (8, False)
    >>> _points("colour", True, False, replace(Rules.penalty_table(), colour_finish="variant_000"))
    (0, False)
    """
    base_table = BASE_POINTS.get(rules.scoring, BASE_POINTS["others_lose"])
    if finish in COLOUR_FINISHES and not _colour_scored(rules):
        return 0, False
    if finish == "colour_ordered":
        # Seed 003: everyone else drops to zero and the game is over.
        return rules.start_points, True
    if finish == "colour":
        base = 8 if rules.colour_finish == "turkish_003" else 4
    else:
        base = base_table[finish]
    if double:
        return base * 4, False
    return (base * 2 if okey_discard else base), False


def _colour_scored(rules: Rules) -> bool:
    """Whether the rules' scoring system has a value for a colour finish (the RO table has none)."""
    return rules.scoring != "penalty_table"


def _as_group(g: GroupVerdict, pairs: bool) -> Group:
    kind = "pair" if pairs else next(k for k in ("run", "set") if k in g.kinds)
    return Group(kind, g.tiles, g.stands_for)


def _invalid_sentence(reason: str, other: WinResult | None) -> str:
    if other is not None and other.winning:
        layout = " | ".join(g.text for g in other.groups)
        return f"Not valid as laid out ({reason}); the same tiles win as {layout}."
    return f"Not a win: {reason}."


def _valid_sentence(
    finish: str, okey_discard: bool, double: bool, points: int, ends_game: bool, rules: Rules
) -> str:
    scored = finish not in COLOUR_FINISHES or _colour_scored(rules)
    scoring = rules.scoring.replace("_", " ")
    words = FINISH_WORDS[finish]
    if double:
        words += " with the second okey discarded (double okey)"
    elif okey_discard:
        words += " with an okey discarded"
    if ends_game:
        return f"Valid: {words}; everyone else drops to zero and the game ends."
    if not scored:
        return (
            f"Valid: {words}; the {scoring} scoring lists no colour finish, "
            "so it scores no points here (settle it at the table)."
        )
    return f"Valid: {words}, worth {points} points."
