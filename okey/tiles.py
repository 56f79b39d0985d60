"""Tiles: the 53 tile kinds, their notation, and the full 106-tile set.

A tile kind is one of 53 identities: index = colour * 13 + (number - 1) with colours in the order
R, Y, B, K, and 52 = the false joker.  Which tile is the okey is game state (see ``okey_for``), not
a property of the tile.

>>> Tile.parse("R5")
Tile.parse('R5')
>>> str(Tile.parse("kırmızı 5")), str(Tile.parse("false joker"))
('R5', 'FJ')
>>> [str(t) for t in parse_tiles("R1 R2 R3 FJ")]
['R1', 'R2', 'R3', 'FJ']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import total_ordering

from okey.errors import TileParseError

COLOURS = "RYBK"
COLOUR_NAMES = {"R": "red", "Y": "yellow", "B": "blue", "K": "black"}
NUM_KINDS = 53
FALSE_JOKER_INDEX = 52

# Words accepted for each colour, English and Turkish (with and without Turkish letters).  Orange is
# how many sets print yellow; green is how some sets print blue.
_COLOUR_WORDS = {
    "R": ("r", "red", "kırmızı", "kirmizi"),
    "Y": ("y", "yellow", "orange", "sarı", "sari", "turuncu"),
    "B": ("b", "blue", "green", "mavi", "yeşil", "yesil"),
    "K": ("k", "black", "siyah"),
}
_WORD_TO_COLOUR = {w: c for c, words in _COLOUR_WORDS.items() for w in words}
_FALSE_JOKER_WORDS = (
    "fj",
    "false joker",
    "false-joker",
    "fake joker",
    "fake okey",
    "false okey",
    "sahte okey",
    "sahte",
    "sahte-okey",
)
# A colour letter and its number written together (``R5``), or a colour word and its number
# apart or together (``red 5``, ``kırmızı5``), either way round.  ASCII digits only, and no
# other separator: ``R-5``, ``R 5`` and ``R٥`` are refused, not read as R5.
_COMPACT = re.compile(r"^([a-zçğıöşü]+?)([0-9]{1,2})$")
_SPACED = re.compile(r"^([a-zçğıöşü]{2,}) ([0-9]{1,2})$")
_REVERSED = re.compile(r"^([0-9]{1,2})([a-zçğıöşü]+)$")
_REVERSED_SPACED = re.compile(r"^([0-9]{1,2}) ([a-zçğıöşü]{2,})$")


def _colour_and_digits(text: str) -> tuple[str, str] | None:
    """The colour word and the number's digits of a normalised token, or None."""
    match = _COMPACT.match(text) or _SPACED.match(text)
    if match is not None:
        return match.group(1), match.group(2)
    match = _REVERSED.match(text) or _REVERSED_SPACED.match(text)
    return None if match is None else (match.group(2), match.group(1))


def _normalise(text: str) -> str:
    # Turkish dotted capital I lower-cases to "i" + combining dot in Python; fold it back.
    return " ".join(text.replace("İ", "i").lower().split())


@total_ordering
@dataclass(frozen=True, slots=True)
class Tile:
    """One tile kind.  Immutable, hashable, ordered by index (R1..R13, Y1.., B1.., K1..K13, FJ)."""

    index: int

    def __post_init__(self) -> None:
        if not (isinstance(self.index, int) and 0 <= self.index < NUM_KINDS):
            raise ValueError(f"tile index must be 0..52, got {self.index!r}")

    @classmethod
    def of(cls, colour: str, number: int) -> Tile:
        """The tile of a colour letter (R, Y, B, K) and a number 1..13."""
        if colour not in COLOURS or len(colour) != 1:
            raise TileParseError(f"{colour}{number}", f"unknown colour {colour!r}")
        if not 1 <= number <= 13:
            raise TileParseError(f"{colour}{number}", "numbers run from 1 to 13")
        return cls(COLOURS.index(colour) * 13 + number - 1)

    @classmethod
    def false_joker(cls) -> Tile:
        return cls(FALSE_JOKER_INDEX)

    @classmethod
    def parse(cls, token: str) -> Tile:
        """Parse ``R5``, ``K13``, ``FJ``, ``red 5``, ``kırmızı 5``, ``false joker``, ``sahte okey``.

        An unreadable token raises ``TileParseError`` naming it and why.
        """
        if not isinstance(token, str):
            raise TileParseError(repr(token), "a tile is written as a string such as 'R5'")
        text = _normalise(token)
        if not text:
            raise TileParseError(token, "empty tile")
        if text in _FALSE_JOKER_WORDS:
            return cls(FALSE_JOKER_INDEX)
        found = _colour_and_digits(text)
        if found is None:
            raise TileParseError(
                token,
                "expected a colour (R, Y, B, K) and a number 1-13 written together (R5), or FJ",
            )
        word, digits = found
        colour = _WORD_TO_COLOUR.get(word)
        if colour is None:
            raise TileParseError(token, f"unknown colour {word!r} (use R, Y, B or K)")
        number = int(digits)
        if not 1 <= number <= 13:
            raise TileParseError(token, f"number {number} is out of range 1-13")
        return cls(COLOURS.index(colour) * 13 + number - 1)

    @property
    def is_false_joker(self) -> bool:
        return self.index == FALSE_JOKER_INDEX

    @property
    def colour(self) -> str | None:
        """Colour letter, or None for the false joker."""
        return None if self.is_false_joker else COLOURS[self.index // 13]

    @property
    def number(self) -> int | None:
        """Face number 1..13, or None for the false joker."""
        return None if self.is_false_joker else self.index % 13 + 1

    @property
    def colour_index(self) -> int:
        """0..3 for R, Y, B, K; 4 for the false joker."""
        return self.index // 13

    @property
    def name(self) -> str:
        """Plain words: 'red 5', 'false joker'."""
        if self.is_false_joker:
            return "false joker"
        return f"{COLOUR_NAMES[self.colour]} {self.number}"

    def next(self) -> Tile:
        """The tile one higher in the same colour, 13 wrapping to 1 (used for the okey)."""
        if self.is_false_joker:
            raise ValueError("a false joker has no number")
        return Tile(self.index - 12 if self.number == 13 else self.index + 1)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Tile):
            return NotImplemented
        return self.index < other.index

    def __str__(self) -> str:
        return _SHORT_NAMES[self.index]

    def __repr__(self) -> str:
        return f"Tile.parse('{self}')"


# ``str`` of each tile kind by index: R1..K13, FJ.
_SHORT_NAMES = [f"{colour}{number}" for colour in COLOURS for number in range(1, 14)] + ["FJ"]


_WORD_PAIRS = {"false", "fake", "sahte"}
_ASCII_NUMBER = re.compile(r"^[0-9]{1,2}$")


def _tokens(text: str) -> list[str]:
    """Split a hand string into tile tokens, keeping 'red 5' and 'false joker' together."""
    words = [w for w in re.split(r"[\s,;]+", _normalise(text)) if w]
    tokens: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else None
        if nxt is not None and (
            (word in _WORD_TO_COLOUR and len(word) > 1 and _ASCII_NUMBER.match(nxt))
            or (word in _WORD_PAIRS and nxt in {"joker", "okey"})
        ):
            tokens.append(f"{word} {nxt}")
            i += 2
        else:
            tokens.append(word)
            i += 1
    return tokens


def parse_tiles(text: str | Iterable[str | Tile]) -> list[Tile]:
    """Parse a hand: ``"R1 R2 R3 FJ"``, ``"red 1, red 2"`` or an iterable of tokens or tiles."""
    if isinstance(text, str):
        tiles = []
        for token in _tokens(text):
            try:
                tiles.append(Tile.parse(token))
            except TileParseError as exc:
                # Tokens are lower-cased to read them; the message quotes what the user wrote.
                raise TileParseError(_as_written(text, token), exc.reason) from None
        return tiles
    return [t if isinstance(t, Tile) else Tile.parse(t) for t in text]


def _as_written(text: str, token: str) -> str:
    match = re.search(re.escape(token).replace(r"\ ", r"\s+"), text, re.IGNORECASE)
    return match.group(0) if match else token


def format_tiles(tiles: Iterable[Tile]) -> str:
    return " ".join(str(t) for t in tiles)


ALL_KINDS: tuple[Tile, ...] = tuple(Tile(i) for i in range(NUM_KINDS))
FULL_SET: tuple[Tile, ...] = tuple(t for t in ALL_KINDS for _ in range(2))
"""The 106 tiles: two of each numbered tile and two false jokers."""
