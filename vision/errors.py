"""Errors of the reading pipeline that are the user's input, not a bug."""

from __future__ import annotations


class VisionInputError(ValueError):
    """Base class of bad input to the reading pipeline (a file, a manifest, an option)."""


class NotAnImageError(VisionInputError):
    """The input is not an image (wrong type, shape, or a file OpenCV cannot decode)."""


class NothingFoundError(Exception):
    """The image was read but shows no hand: ``istaka scan`` exits with 3."""


class NoTilesError(NothingFoundError):
    """No tile at all in the image."""


class NoRackError(NothingFoundError):
    """Tiles, but none standing side by side in a rack row."""
