"""Match keeping: record rounds, follow the standings, decide the end of the game per variant.

The rounds are the record; scores, who left and who won are replayed from them, so a match saved
as JSON and loaded again gives the same standings.

>>> from okey import Rules
>>> from okey.scoring import ClassicRound
>>> match = Match(Rules.classic(), ["Ayşe", "Bora", "Cem", "Deniz"])
>>> _ = match.record(ClassicRound("Ayşe", okey_discard=True))
>>> match.scores
{'Ayşe': 20, 'Bora': 16, 'Cem': 16, 'Deniz': 16}
>>> Match.from_json(match.to_json()).scores == match.scores
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from okey.errors import OkeyError
from okey.okey101 import Round101, score_round
from okey.rules import Rules
from okey.scoring import (
    COUNTDOWN_SYSTEMS,
    ClassicRound,
    ends_game,
    round_changes,
    side_of,
    sides,
)

RoundSummary = ClassicRound | Round101
Status = Literal["playing", "out", "won", "lost"]


@dataclass(frozen=True, slots=True)
class Standing:
    """One side (a player, or a team in partnership) in the standings."""

    name: str
    score: int
    place: int
    status: Status

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "score": self.score, "place": self.place, "status": self.status}


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The end of a game: ``winners`` and ``losers`` as the variant decides."""

    winners: tuple[str, ...]
    losers: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"winners": list(self.winners), "losers": list(self.losers)}


@dataclass
class _State:
    scores: dict[str, int]
    left: list[str]  # sides that left at zero, in order
    result: MatchResult | None


class Match:
    """A game between ``players`` under ``rules``: ``record`` each round, read ``standings``.

    Classic countdown systems start everyone (or each team) at ``rules.start_points`` and end when
    a score reaches 0; the penalty table, the counted variant and 101 Okey start at 0 and end after
    ``rules.rounds`` rounds with the lowest total winning.
    """

    def __init__(self, rules: Rules, players: Sequence[str]) -> None:
        players = [str(p) for p in players]
        if len(players) < 2:
            raise OkeyError(f"a match needs at least 2 players, got {len(players)}")
        if len(set(players)) != len(players):
            raise OkeyError(f"player names repeat: {players}")
        self.rules = rules
        self.players: tuple[str, ...] = tuple(players)
        self.sides: tuple[str, ...] = tuple(
            players if rules.game == "okey101" else sides(players, rules)
        )
        self.rounds: list[RoundSummary] = []
        self.history: list[dict[str, int]] = []
        self._state = _State(dict.fromkeys(self.sides, self.start_points), [], None)

    @property
    def start_points(self) -> int:
        """Where every score starts: the countdown start, or 0 for penalty totals."""
        countdown = self.rules.game == "classic" and self.rules.scoring in COUNTDOWN_SYSTEMS
        return self.rules.start_points if countdown else 0

    # --- recording ------------------------------------------------------------------------------
    def record(self, summary: RoundSummary | Mapping[str, Any]) -> list[Standing]:
        """Add a round (a summary or its dict form) and return the standings after it."""
        if isinstance(summary, Mapping):
            summary = self._round_from_dict(summary)
        if self.over:
            raise OkeyError("the game is over: no more rounds can be recorded")
        self._apply(summary)
        self.rounds.append(summary)
        self.history.append(dict(self._state.scores))
        return self.standings()

    def _apply(self, summary: RoundSummary) -> None:
        if self.rules.game == "okey101":
            if not isinstance(summary, Round101):
                raise OkeyError("a 101 match records 101 rounds (Round101)")
            self._apply_101(summary)
        else:
            if not isinstance(summary, ClassicRound):
                raise OkeyError("a classic match records classic rounds (ClassicRound)")
            self._apply_classic(summary)

    def _apply_101(self, summary: Round101) -> None:
        names = sorted(p.name for p in summary.players)
        if names != sorted(self.players):
            raise OkeyError(f"the round's players {names} are not the match's {list(self.players)}")
        for name, points in score_round(summary, self.rules).items():
            self._state.scores[name] += points
        # A void round (all four opened with pairs) is replayed: it does not count.
        played = sum(1 for r in [*self.rounds, summary] if isinstance(r, Round101) and not r.void)
        if played >= self.rules.rounds:
            self._state.result = _lowest_wins(self._state.scores)

    def _apply_classic(self, summary: ClassicRound) -> None:
        rules, state = self.rules, self._state
        live = [s for s in self.sides if s not in state.left]
        for name in ([summary.finisher] if summary.finisher else []) + list(summary.gosterge):
            if side_of(name, self.players, rules) in state.left:
                raise OkeyError(f"{name} has left the game (reached 0) and cannot score")
        changes = round_changes(summary, self.players, rules, active=live)
        for side, change in changes.items():
            state.scores[side] += change
        if rules.scoring not in COUNTDOWN_SYSTEMS:
            if len(self.rounds) + 1 >= rules.rounds:
                state.result = _lowest_wins(state.scores)
            return
        if ends_game(summary, rules):
            self._colour_ordered(side_of(summary.finisher, self.players, rules))
            return
        self._countdown_end(live)

    def _colour_ordered(self, finisher: str) -> None:
        # Seed 003: an ordered 1..13 colour finish drops everyone else to zero and ends the game.
        state = self._state
        if self.rules.countdown == "finisher_down":
            state.scores[finisher] = 0
        else:
            for side in self.sides:
                if side != finisher:
                    state.scores[side] = 0
        others = tuple(s for s in self.sides if s != finisher)
        state.result = MatchResult((finisher,), others)

    def _countdown_end(self, live: list[str]) -> None:
        state, rules = self._state, self.rules
        at_zero = [s for s in live if state.scores[s] <= 0]
        if not at_zero:
            return
        if rules.countdown == "finisher_down":
            low = min(state.scores[s] for s in at_zero)
            winners = tuple(s for s in at_zero if state.scores[s] == low)
            state.result = MatchResult(winners, tuple(s for s in self.sides if s not in winners))
        elif rules.countdown == "leave_at_zero":
            state.left.extend(sorted(at_zero, key=lambda s: state.scores[s]))
            remaining = [s for s in self.sides if s not in state.left]
            if len(remaining) <= 1:
                state.result = MatchResult(tuple(remaining), tuple(reversed(state.left)))
        else:
            ranked = sorted(self.sides, key=lambda s: -state.scores[s])
            half = max(1, len(ranked) // 2)
            state.result = MatchResult(tuple(ranked[:half]), tuple(ranked[half:]))

    # --- reading --------------------------------------------------------------------------------
    @property
    def scores(self) -> dict[str, int]:
        return dict(self._state.scores)

    @property
    def over(self) -> bool:
        return self._state.result is not None

    @property
    def result(self) -> MatchResult | None:
        """Winners and losers once the game is over, else None."""
        return self._state.result

    @property
    def left(self) -> tuple[str, ...]:
        """Sides that reached 0 and left (``leave_at_zero``), in order."""
        return tuple(self._state.left)

    def standings(self) -> list[Standing]:
        """Sides best first: highest score in countdown systems, lowest total otherwise."""
        scores = self._state.scores
        countdown_high = self.start_points > 0 and self.rules.countdown != "finisher_down"
        ranked = sorted(self.sides, key=lambda s: -scores[s] if countdown_high else scores[s])
        out = []
        for side in ranked:
            better = sum(
                1
                for other in self.sides
                if (
                    scores[other] > scores[side] if countdown_high else scores[other] < scores[side]
                )
            )
            out.append(Standing(side, scores[side], better + 1, self._status(side)))
        return out

    def _status(self, side: str) -> Status:
        result = self._state.result
        if result is not None:
            return "won" if side in result.winners else "lost"
        return "out" if side in self._state.left else "playing"

    # --- JSON -----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "players": list(self.players),
            "rounds": [r.to_dict() for r in self.rounds],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Match:
        """Rebuild a match; ``rules`` may be a preset name or a dict of a preset plus overrides."""
        for key in ("rules", "players"):
            if key not in data:
                raise OkeyError(f"a match needs {key!r}")
        rules_data = data["rules"]
        rules = (
            Rules.preset(rules_data)
            if isinstance(rules_data, str)
            else Rules.from_dict(dict(rules_data))
        )
        match = cls(rules, data["players"])
        for index, summary in enumerate(data.get("rounds", ()), start=1):
            try:
                match.record(summary)
            except (OkeyError, ValueError, KeyError, TypeError) as exc:
                raise OkeyError(f"round {index}: {exc}") from exc
        return match

    @classmethod
    def from_json(cls, text: str) -> Match:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise OkeyError(f"not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise OkeyError("a match file holds a JSON object with rules, players and rounds")
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Match:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def _round_from_dict(self, data: Mapping[str, Any]) -> RoundSummary:
        if self.rules.game == "okey101":
            return Round101.from_dict(dict(data))
        return ClassicRound.from_dict(data)

    # --- text -----------------------------------------------------------------------------------
    def format_table(self) -> str:
        """The standings table: each side's score after every round, the place and the status."""
        return format_standings(self)


def _lowest_wins(scores: Mapping[str, int]) -> MatchResult:
    low = min(scores.values())
    winners = tuple(s for s, v in scores.items() if v == low)
    return MatchResult(winners, tuple(s for s in scores if s not in winners))


def format_standings(match: Match) -> str:
    """Plain-text standings: one row per side, one column per round.

    >>> from okey.scoring import ClassicRound
    >>> m = Match(Rules.classic(), ["A", "B"])
    >>> _ = m.record(ClassicRound("A"))
    >>> print(m.format_table())
    rules: classic (others_lose, countdown others_lose, start 20)
    place  side  start  r1  score  status
    1      A     20     20  20     playing
    2      B     20     18  18     playing
    """
    rules = match.rules
    if rules.game == "okey101":
        title = f"rules: {rules.name} (101 Okey, {rules.rounds} rounds)"
    elif rules.scoring in COUNTDOWN_SYSTEMS:
        title = (
            f"rules: {rules.name} ({rules.scoring}, countdown {rules.countdown}, "
            f"start {rules.start_points}{', partnership' if rules.partnership else ''})"
        )
    else:
        title = f"rules: {rules.name} ({rules.scoring}, {rules.rounds} rounds)"
    header = ["place", "side", "start", *(f"r{i}" for i in range(1, len(match.history) + 1))]
    header += ["score", "status"]
    rows = [header]
    for standing in match.standings():
        after = [str(h[standing.name]) for h in match.history]
        rows.append(
            [
                str(standing.place),
                standing.name,
                str(match.start_points),
                *after,
                str(standing.score),
                standing.status,
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [title]
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    result = match.result
    if result is not None:
        lines.append(f"game over: won {', '.join(result.winners) or 'nobody'}")
    return "\n".join(lines)


def replay(rules: Rules, players: Sequence[str], rounds: Iterable[RoundSummary]) -> Match:
    """A match built from a sequence of rounds."""
    match = Match(rules, players)
    for summary in rounds:
        match.record(summary)
    return match
