"""Rule sets: one frozen value that travels through the engine, the pipeline and the API.

Every *switch* of ``docs/rules.md`` is a field here, so a table's house rules are data:

>>> from dataclasses import replace
>>> house = replace(Rules.classic(), wrap_13_1=False)
>>> house.wrap_13_1, Rules.okey101().opening_threshold
(False, 101)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal, get_args

from okey.errors import RulesError

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

    def __post_init__(self) -> None:
        for item in fields(self):
            _check_field(item.name, getattr(self, item.name), item.type)
        size = HAND_SIZES[self.game]
        if self.hand_size != size:
            raise RulesError(
                "hand_size", f"a {self.game} hand holds {size} tiles, not {self.hand_size}"
            )
        if self.max_rack_tiles != size + 1:
            raise RulesError(
                "max_rack_tiles",
                f"a {self.game} rack holds {size + 1} tiles at most (the hand and one drawn), "
                f"not {self.max_rack_tiles}",
            )
        if not 3 <= self.max_run_length <= 13:
            raise RulesError(
                "max_run_length", f"a run holds 3 to 13 tiles, not {self.max_run_length}"
            )
        if self.opening_threshold < 1:
            raise RulesError(
                "opening_threshold", f"must be 1 or more, not {self.opening_threshold}"
            )
        if not 1 <= self.pairs_opening_min <= (size + 1) // 2:
            raise RulesError(
                "pairs_opening_min",
                f"must be 1 to {(size + 1) // 2} pairs, not {self.pairs_opening_min}",
            )
        if self.rounds < 1:
            raise RulesError("rounds", f"must be 1 or more, not {self.rounds}")
        if self.start_points < 0:
            raise RulesError("start_points", f"must be 0 or more, not {self.start_points}")
        colours = self.colour_finish_colours
        if not colours or set(colours) - set("RYBK") or len(set(colours)) != len(colours):
            raise RulesError(
                "colour_finish_colours", f"must be distinct letters of RYBK, not {colours!r}"
            )

    @classmethod
    def classic(cls) -> Rules:
        """Classic Okey, the digest's defaults: 12-13-1 allowed, 20-point others-lose scoring."""
        # One shared value (it is frozen): every call that defaults to the classic rules reads it
        # instead of building and validating a new one.
        rules = _SHARED.get("classic")
        if rules is None:
            rules = _SHARED.setdefault("classic", cls())
        return rules

    @classmethod
    def okey101(cls) -> Rules:
        """101 Okey: no 13-1 wrap, 21/22 tiles, opening at 101 or five pairs (one shared value)."""
        rules = _SHARED.get("okey101")
        if rules is not None:
            return rules
        made = cls(
            name="okey101",
            game="okey101",
            wrap_13_1=False,
            seven_pairs=False,
            hand_size=21,
            max_rack_tiles=22,
        )
        return _SHARED.setdefault("okey101", made)

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

    @property
    def title(self) -> str:
        """The game's name in a sentence: "classic" or "101 Okey" ("a 101 Okey rack")."""
        return GAME_TITLES[self.game]

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


# The classic and 101 presets, made once (``Rules.classic``, ``Rules.okey101``).
_SHARED: dict[str, Rules] = {}

# Tiles a hand holds between turns, per game (docs/rules.md): the one size each game is played
# with, so another is refused.
HAND_SIZES = {"classic": 14, "okey101": 21}
GAME_TITLES = {"classic": "classic", "okey101": "101 Okey"}

# The values a text field of ``Rules`` may take (its ``Literal``); the others are free text.
_CHOICES = {"Game": Game, "Scoring": Scoring, "Countdown": Countdown, "ColourFinish": ColourFinish}


def _check_field(name: str, value: object, annotation: str) -> None:
    """Raise ``RulesError`` for a field value of the wrong type, or outside its ``Literal``."""
    if annotation == "bool":
        ok = type(value) is bool
    elif annotation == "int":
        ok = type(value) is int
    else:
        ok = isinstance(value, str) and value != ""
        if ok and annotation in _CHOICES:
            allowed = get_args(_CHOICES[annotation])
            if value not in allowed:
                raise RulesError(name, f"must be one of {', '.join(allowed)}, not {value!r}")
    if not ok:
        raise RulesError(name, f"must be {annotation}, not {value!r}")


PRESETS = {
    "classic": Rules.classic,
    "okey101": Rules.okey101,
    "penalty_table": Rules.penalty_table,
    "counted": Rules.counted,
}
