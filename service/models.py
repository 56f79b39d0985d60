"""Request and response bodies of the API (pydantic), shared by the routers and the OpenAPI doc.

Tiles are written in the project's notation: ``R5``, ``K13``, ``FJ`` (colours R, Y, B, K).

>>> HandRequest(tiles="R1 R2 R3", indicator="K7").tile_list()
['R1', 'R2', 'R3']
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.limits import MAX_GROUPS, GroupTiles, HandTiles, SeenTiles
from service.rules_model import RulesSpec

TileText = str
TileList = str | list[TileText]  # the shape; request fields use the bounded service.limits types
_TILES_DOC = 'tiles as one string ("R1 R2 R3 FJ") or a list (["R1", "R2"])'


def _split(tiles: TileList) -> list[str]:
    return tiles.split() if isinstance(tiles, str) else list(tiles)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


_OFFERED_DOC = "the left-hand player's discard: take it or draw? (a hand waiting for its draw)"


class HandRequest(Strict):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "tiles": "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13",
                    "indicator": "R5",
                    "rules": "classic",
                    "seen": "Y13",
                },
                {"tiles": "R1 R1 Y2 Y2 B3 B3 K4 K4 R9 R9 Y11 Y11 K13 FJ", "indicator": "K12"},
                {
                    "tiles": "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13",
                    "indicator": "R5",
                    "next_takes": "Y12",
                    "next_discards": "R8",
                },
                {
                    "tiles": "R10 R11 R12 R13 K13 Y13 B13 K9 K10 K11 Y1 Y2 Y3 B5 B7 K2 K4 R1"
                    " Y8 B9 K6 K12",
                    "indicator": "B2",
                    "rules": "okey101",
                    "table": ["B8 B7 B6"],
                    "opened": True,
                },
            ]
        },
    )

    tiles: HandTiles = Field(description=_TILES_DOC)
    indicator: TileText = Field(description="the face-up indicator tile", max_length=20)
    rules: RulesSpec = Field(default="classic", description="a preset name or overrides")
    seen: SeenTiles = Field(default="", description="tiles seen elsewhere")
    offered: TileText | None = Field(default=None, max_length=20, description=_OFFERED_DOC)
    next_takes: SeenTiles = Field(
        default="",
        description="classic: the tiles the right-hand player (who may take your discard) took"
        " this round; a discard that fits them rates risk high, and ranks after its equals",
    )
    next_discards: SeenTiles = Field(
        default="",
        description="classic: the tiles the right-hand player threw this round (risk low)",
    )
    table: list[GroupTiles] = Field(
        default_factory=list,
        max_length=MAX_GROUPS,
        description='101: the melds on the table, each as it lies ["K4 K5 K6", "R7 Y7 B7"]; a'
        " discard that fits one draws the penalty and is never advised",
    )
    opened: bool = Field(default=False, description="101: whether you have opened")

    def tile_list(self) -> list[str]:
        return _split(self.tiles)

    def seen_list(self) -> list[str]:
        return _split(self.seen)

    def takes_list(self) -> list[str]:
        return _split(self.next_takes)

    def discards_list(self) -> list[str]:
        return _split(self.next_discards)

    def table_lists(self) -> list[list[str]]:
        return [_split(meld) for meld in self.table]


class RefereeRequest(Strict):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "groups": ["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12", "B7 B8 B9 R6"],
                    "indicator": "R5",
                    "discard": "Y13",
                    "rules": "classic",
                },
                {"groups": ["K12 Y12 K12", "R1 R2 R3"], "indicator": "B4"},
            ]
        },
    )

    groups: list[GroupTiles] = Field(
        description='the declared groups, left to right: ["R1 R2 R3", "K5 Y5 B5", ...]',
        max_length=MAX_GROUPS,
    )
    indicator: TileText = Field(max_length=20)
    discard: TileText | None = Field(default=None, max_length=20, description="finishing discard")
    rules: RulesSpec = Field(default="classic")

    def group_lists(self) -> list[list[str]]:
        return [_split(group) for group in self.groups]


class PresetOut(BaseModel):
    name: str
    rules: dict[str, Any] = Field(description="every field of okey.Rules with its value")


class RulesOut(BaseModel):
    presets: list[PresetOut]


class HealthOut(BaseModel):
    status: Literal["ok", "unavailable"] = Field(description="unavailable (503): no table store")
    store: Literal["ok", "unavailable"] = Field(description="whether the table store answers")
    recognition: bool = Field(description="whether this worker has a recognition model")
    recognition_error: str | None = None
    pending_scans: int
    streams: int = Field(description="camera streams open")
    worker: int = Field(description="process id of the worker that answered")


class EngineOut(BaseModel):
    # Engine results pass any field the engine adds later straight through.
    model_config = ConfigDict(extra="allow")


class WinGroupOut(EngineOut):
    kind: str = Field(description='"run", "set" or "pair"')
    tiles: list[str]
    stands_for: list[str] = Field(description="the tile each one plays as (okeys filled in)")


class WinOut(EngineOut):
    """``okey.check_win(...).to_dict()``."""

    winning: bool
    kind: str | None = Field(description='"melds" or "pairs" when winning')
    groups: list[WinGroupOut]


class TileCountOut(EngineOut):
    tile: str
    unseen: int = Field(description="copies not in the hand, not the indicator, not seen")


class DiscardOptionOut(EngineOut):
    discard: str
    distance: int = Field(description="distance to win after this discard")
    improving: list[TileCountOut] = Field(description="unseen tiles that would lower it")
    improving_copies: int
    is_okey: bool
    advised: bool = Field(
        description="false for an okey that does not win (101: a discard drawing a penalty)"
    )
    sentence: str


class AdviceOut(EngineOut):
    """``okey.advise(...).to_dict()``: ranked discards (15 tiles) or the waits (14); a 101 hand of
    22 tiles is ranked by ``okey.okey101.advise_discard`` in this shape (``okey.advise_hand``)."""

    kind: str = Field(description='"discard" or "waits"')
    distance: int
    options: list[DiscardOptionOut] = Field(description="every discard, best first")
    waits: list[TileCountOut] = Field(description="tiles that would win a 14-tile hand")
    sentence: str


class GroupVerdictOut(EngineOut):
    tiles: list[str]
    valid: bool
    kinds: list[str]
    stands_for: list[str]
    reason: str


class VerdictOut(EngineOut):
    """``okey.referee(...).to_dict()``."""

    valid: bool
    groups: list[GroupVerdictOut]
    reason: str = Field(description="why the declaration fails; empty when valid")
    first_bad_group: int | None = Field(description="1-based")
    other_arrangement_wins: bool
    arrangement: WinOut | None
    finish: str | None = Field(description='"normal", "seven_pairs", "colour", ...')
    okey_discard: bool
    double_okey: bool
    points: int
    ends_game: bool
    discard: str | None
    sentence: str


class HandOut(BaseModel):
    tiles: list[str] = Field(description="the hand, sorted")
    indicator: str
    okey: str = Field(description="the wild tile for this indicator")
    rules: str
    distance_to_win: int = Field(description="fewest tiles to exchange to reach a winning hand")
    arrangement: WinOut | None = Field(default=None, description="win check of a 14-tile hand")
    advice: AdviceOut
    take_or_draw: dict[str, Any] | None = Field(default=None, description="okey.take_or_draw")


class RefereeOut(BaseModel):
    verdict: VerdictOut


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": text}
    for status, text in {
        400: "the image is damaged",
        401: "a write without a credential: send the table's or the server owner's token"
        " (Authorization: Bearer TOKEN)",
        403: "a wrong token or viewer key, or a page from another origin",
        404: "no such table (or profile)",
        408: "the body stopped arriving (slow client)",
        409: "the table exists already",
        412: "the table is not at the version If-Match expects: nothing written",
        413: "the body or upload is too large (bytes or pixels)",
        415: "the upload is not a JPEG, PNG or HEIC image",
        422: "a field is missing or wrong; the message names it",
        429: "this credential's share of kept data is full",
        503: "busy, or recognition or the table store is unavailable",
        507: "the server's kept data is full",
    }.items()
}


class TileOut(BaseModel):
    """One tile read from the image."""

    model_config = ConfigDict(extra="allow")

    id: int = Field(description="position in the recognition (a scan) or track id (a stream)")
    tile: str
    box: list[float] = Field(description="[x1, y1, x2, y2] in image pixels")
    confidence: float
    flagged: bool = Field(default=False, description="the reading may be wrong")
    corrected: bool = Field(default=False, description="the player corrected this reading")
    quad: list[list[float]] | None = Field(
        default=None,
        description="[[x, y] x 4] the tile's outline in image pixels (top-left, top-right, "
        "bottom-right, bottom-left along its tier) when the tier stage read it: a back tier's "
        "tile as far down as it shows over the tier in front",
    )


class AlternativeOut(BaseModel):
    tile: str
    probability: float


class FlagOut(BaseModel):
    id: int
    tile: str
    probability: float
    reason: str
    alternatives: list[AlternativeOut]


class IndicatorSuggestionOut(BaseModel):
    tile: str
    confidence: float = Field(description="the reading's probability x the detector's confidence")
    id: int = Field(description="the tile's id among the table tiles")


Row = list[list[TileOut]]  # groups, left to right


class UnreadableOut(BaseModel):
    box: tuple[float, float, float, float] = Field(description="x1, y1, x2, y2 in pixels")
    reason: str = Field(description='"cut": the edge of the photo cuts the tile')


class ScanOut(BaseModel):
    """A rack read from an image (``vision.pipeline.ScanResult.to_dict()``)."""

    model_config = ConfigDict(extra="allow")

    rules: str
    indicator: str | None = Field(
        description="the indicator in use: typed, or read from the lone tile off the rack"
    )
    indicator_source: Literal["typed", "photo"] | None = Field(
        description='"typed" (given with the request), "photo" (the lone tile off the rack, read'
        " at or above the floor; not confirmed) or null (no indicator in use)"
    )
    indicator_confidence: float | None = Field(
        default=None, description="how sure the reading of a photo indicator is (0-1)"
    )
    indicator_confirmed: bool = Field(
        default=False,
        description="true only for a typed indicator; a win read with another holds only if the"
        " photo's indicator is right",
    )
    indicator_suggestion: IndicatorSuggestionOut | None = Field(
        default=None,
        description="the tile off the rack read too unsurely to be used: confirm it by sending it"
        " as the indicator",
    )
    okey: str | None
    rows: list[Row] = Field(description="rows top to bottom; each row its groups left to right")
    hand: list[str] = Field(description="the rack's tiles in reading order")
    table: list[TileOut] = Field(description="tiles lying off the rack")
    flagged: list[FlagOut] = Field(description="readings that may be wrong")
    verdict: VerdictOut | None = Field(description="the referee on the groups as laid out")
    advice: AdviceOut | None = Field(description="the engine's advice for 14 or 15 tiles")
    discard: TileOut | None = Field(description="the rack tile the advice says to discard")
    hints: list[str] = Field(description='"K12 may be B12; with B12 this hand wins"')
    warnings: list[str]
    unreadable: list[UnreadableOut] = Field(
        default_factory=list, description="tiles seen but not read (not guessed), with why"
    )
    image_size: tuple[int, int] = Field(description="(width, height) of the image read")
    reading: Literal["tiers", "photo"] = Field(
        default="photo",
        description='which path read the photo: "tiers" (the rack\'s tiers found, straightened '
        'and read; rows are tiers) or "photo" (the whole-photo path: a table scene, or no rack)',
    )
    tiers: list[list[list[float]]] = Field(
        default_factory=list,
        description="each tier's outline in the image, top to bottom: [[x, y] x 4], top-left, "
        "top-right, bottom-right, bottom-left as the rack is read",
    )
    timings_ms: dict[str, float]
    annotated_jpeg: str | None = Field(default=None, description="annotated photo, base64 JPEG")

    @classmethod
    def from_result(cls, result: dict[str, Any], **extra: Any) -> ScanOut:
        return cls.model_validate({**result, **extra})
