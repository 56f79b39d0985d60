"""The caps on list lengths in request bodies and stream messages, part of the API's schema (a
request over one is a 422 naming the field).  The byte, pixel, socket and time limits are fields
of ``service.settings.Settings``.

>>> from pydantic import TypeAdapter, ValidationError
>>> TypeAdapter(bounded_tiles(2)).validate_python(["R1", "R2"])
['R1', 'R2']
>>> try:
...     TypeAdapter(bounded_tiles(2)).validate_python(["R1", "R2", "R3"])
... except ValidationError as exc:
...     print(exc.errors()[-1]["type"])
too_long
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

MAX_TILE_TEXT = 20  # one tile as text ("R5", "FJ"), with room for spaces and a message
MAX_HAND_TILES = 40  # a hand: 101 Okey deals 22 tiles; more is a typo, never a hand
MAX_SEEN_TILES = 106  # tiles seen elsewhere: at most the whole set
MAX_GROUP_TILES = 30  # tiles in one declared group
MAX_GROUPS = 30  # declared groups in one hand
MAX_ROWS = 4  # rack rows of a pushed table state
MAX_ROW_GROUPS = 30  # groups in one rack row
_CHARS_PER_TILE = 4  # "K13 " in a space-separated string


def bounded_tiles(max_tiles: int) -> Any:
    """Tiles as one string (``"R1 R2 R3"``) or a list (``["R1", "R2"]``), at most ``max_tiles``
    of them (the string form by length)."""
    text = Annotated[str, StringConstraints(max_length=max_tiles * _CHARS_PER_TILE)]
    item = Annotated[str, StringConstraints(max_length=MAX_TILE_TEXT)]
    return text | Annotated[list[item], Field(max_length=max_tiles)]


HandTiles = bounded_tiles(MAX_HAND_TILES)
SeenTiles = bounded_tiles(MAX_SEEN_TILES)
GroupTiles = bounded_tiles(MAX_GROUP_TILES)
