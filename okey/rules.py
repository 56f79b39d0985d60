"""Rule sets: one frozen value that travels through the engine, the pipeline and the API.

Every *switch* of ``docs/rules.md`` is a field here, so a table's house rules are data:

>>> from dataclasses import replace
>>> house = replace(Rules.classic(), wrap_13_1=False)
>>> house.wrap_13_1, Rules.okey101().opening_threshold
(False, 101)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

Game = Literal["classic", "okey101"]
# Classic scoring systems of docs/rules.md.
Scoring = Literal["others_lose", "turkish", "penalty_table", "counted"]
# How a classic game ends (docs/rules.md): the two highest win when someone reaches 0; a player at 0
# leaves and the rest play on; or ("düşmeli") the finisher counts down and the first to 0 wins.
Countdown = Literal["others_lose", "leave_at_zero", "finisher_down"]
# Colour finish scoring: ES variant (-4, or -8 with an okey discard) or the TR text (ordered
# 1..13 ends the game, any other one-colour hand scores 8).
ColourFinish = Literal["off", "variant_000", "turkish_003"]


@dataclass(frozen=True, slots=True)
class Rules:
    """A table's rules.  Use a preset and ``dataclasses.replace`` to switch house rules."""

    name: str = "classic"
    game: Game = "classic"

    # Groups (docs/rules.md)
    wrap_13_1: bool = True  # 12-13-1 is a valid run (13-1-2 never is)
    okey_pair_with_okey: bool = True  # two okeys form a pair
    max_run_length: int = 13
    seven_pairs: bool = True  # 14 tiles as seven pairs is a win

    # Finishes (docs/rules.md)
    double_okey: bool = False  # çift okey: discarding the second okey quadruples
    colour_finish: ColourFinish = "off"
    colour_finish_colours: str = "RYBK"  # some tables: all-red or all-black only ("RK")

    # Hand sizes
    hand_size: int = 14  # tiles a player holds between turns (21 in 101)
    max_rack_tiles: int = 15  # most tiles on a rack at once (22 in 101)

    # Classic scoring (docs/rules.md)
    scoring: Scoring = "others_lose"
    start_points: int = 20
    countdown: Countdown = "others_lose"
    partnership: bool = False
    indicator_last_draw: bool = False  # variant: the indicator becomes the last drawable tile

    # 101 Okey (docs/rules.md)
    opening_threshold: int = 101
    rising_threshold: bool = False  # an opening must beat the highest earlier opening
    pairs_opening_min: int = 5
    rounds: int = 5

    @classmethod
    def classic(cls) -> Rules:
        """Classic Okey, the digest's defaults: 12-13-1 allowed, 20-point others-lose scoring."""
        return cls()

    @classmethod
    def okey101(cls) -> Rules:
        """101 Okey: no 13-1 wrap, 21/22 tiles, opening at 101 or five pairs."""
        return cls(
            name="okey101",
            game="okey101",
            wrap_13_1=False,
            seven_pairs=False,
            hand_size=21,
            max_rack_tiles=22,
        )

    @classmethod
    def penalty_table(cls) -> Rules:
        """The online penalty table (RO text): start at 0, collect 20/10/40/40/10, quick games of
        1 or 3 rounds (3 here), lowest total wins."""
        return cls(name="penalty_table", scoring="penalty_table", start_points=0, rounds=3)

    @classmethod
    def counted(cls) -> Rules:
        """Renkli / sayılı okey (TR text): losers pay the numbers of their ungrouped tiles."""
        return cls(name="counted", scoring="counted", start_points=0)

    @classmethod
    def preset(cls, name: str) -> Rules:
        """A preset by name (``classic``, ``okey101``, ...); else a ``ValueError`` naming them."""
        presets = PRESETS
        if name not in presets:
            raise ValueError(f"unknown rules {name!r}: choose one of {', '.join(presets)}")
        return presets[name]()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Build from a preset name under ``"name"`` plus overrides; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown rule fields: {', '.join(sorted(unknown))}")
        base = cls.preset(data["name"]) if data.get("name") in PRESETS else cls()
        return replace(base, **data)


PRESETS = {
    "classic": Rules.classic,
    "okey101": Rules.okey101,
    "penalty_table": Rules.penalty_table,
    "counted": Rules.counted,
}
