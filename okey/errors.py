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


class ImpossibleHandError(OkeyError):
    """A hand that cannot exist with one 106-tile set (a third copy, 16 tiles, ...)."""
