"""Errors the engine raises.  Each is a ``ValueError``: callers catch bad input in one place."""

from __future__ import annotations


class OkeyError(ValueError):
    """Base class of every error about bad game input."""


class TileParseError(OkeyError):
    """A token that is not a tile.  ``.token`` is the offending text."""

    def __init__(self, token: str, reason: str) -> None:
        self.token = token
        self.reason = reason
        super().__init__(f"cannot read tile {token!r}: {reason}")


class ArgumentError(OkeyError, TypeError):
    """An argument of a public function that is neither tiles nor notation (or no ``Rules``).

    ``.argument`` names the parameter.  It is a ``TypeError`` as well as an ``OkeyError``, so a
    caller catching either gets it."""

    def __init__(self, argument: str, message: str) -> None:
        self.argument = argument
        super().__init__(f"{argument}: {message}")


class RulesError(OkeyError):
    """A ``Rules`` value no table can play with.  ``.field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"rules.{field}: {message}")


class ImpossibleHandError(OkeyError):
    """A hand that cannot exist with one 106-tile set (a third copy, 16 tiles, ...)."""
