"""The pipeline: a photo or a video frame in, a laid-out, rule-checked, refereed hand out.

This is the one API that ``istaka scan``, ``istaka live`` and the web service call::

    import cv2
    from okey import Rules, Tile
    from vision.pipeline import Pipeline

    pipeline = Pipeline.default()          # loads the shipped recogniser once
    result = pipeline.scan(cv2.imread("examples/rack.jpg"), indicator=Tile.parse("R5"))
    print(result.to_dict()["rows"])

Stages (each a plain function over small values; see DESIGN.md): recognise the tiles
(``vision.recognizer``), lay out the rack (``vision.layout``), read all tiles jointly under the
set's limits (``vision.decode``), then ask the engine (``okey``) for the verdict on the declared
groups and the discard advice.  ``read`` starts from an already recognised frame (a smoothed video
frame from ``vision.smoothing.HandTracker``, or a test's hand-made recognition).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from okey import (
    Advice,
    ImpossibleHandError,
    OkeyError,
    RefereeVerdict,
    Rules,
    Tile,
    okey_for,
)
from vision.decode import Decoded, decode
from vision.errors import NoRackError, NotAnImageError, NothingFoundError, NoTilesError  # noqa: F401  (re-exported)
from vision.heif import decode_heif, is_heif
from vision.layout import RackLayout, lay_out, tier_layout
from vision.types import Recognition, TileReading

# Verdicts and advice are cached per hand, so a live stream asks the engine again only when the
# hand changes.
ENGINE_CACHE_SIZE = 64
# Only the first few alternatives of the most uncertain tiles are tried for "one tile away" hints.
HINT_TILES = 3
HINT_ALTERNATIVES = 2
HINT_MIN_PROBABILITY = 0.05
# A tile off the rack read with less confidence than this (reading x detection) is only offered as
# a suggestion for the indicator, never used.  ``benchmarks/indicator_floor.py`` measured it on the
# rendered and the real evaluation photos: above every candidate that was not the indicator read
# right (the highest, 0.925, a real photo's lone tile), so none of those is ever used; the
# confidence cannot tell a discard from the indicator, so in practice the player confirms the
# indicator with one tap (docs/pipeline.md, "The indicator").
INDICATOR_FLOOR = 0.93


def load_image(path: str | Path) -> np.ndarray:
    """Read a photo (JPEG, PNG, ... as OpenCV reads them; HEIC/HEIF through
    :mod:`vision.heif`) as a BGR array; ``FileNotFoundError`` or ``NotAnImageError`` naming the
    path."""
    import cv2

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    data = np.fromfile(str(path), dtype=np.uint8)
    if is_heif(data[:4096].tobytes()):  # a phone's HEIC photo
        try:
            return decode_heif(data.tobytes())
        except NotAnImageError as exc:
            raise NotAnImageError(f"{path}: {exc}") from exc
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise NotAnImageError(f"{path} is not an image (OpenCV cannot decode it)")
    return image


def as_bgr(image: Any) -> np.ndarray:
    """Check an image array and bring it to 3-channel BGR uint8 (grey and BGRA are converted)."""
    import cv2

    if not isinstance(image, np.ndarray):
        raise NotAnImageError(f"expected an image array, got {type(image).__name__}")
    if image.size == 0 or image.ndim not in (2, 3):
        raise NotAnImageError(f"expected an image of shape (h, w) or (h, w, 3), got {image.shape}")
    if image.dtype != np.uint8:
        raise NotAnImageError(f"expected 8-bit pixels (uint8), got {image.dtype}")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    if image.shape[2] != 3:
        raise NotAnImageError(f"expected 3 colour channels, got {image.shape[2]}")
    return image


@dataclass(frozen=True)
class PlacedTile:
    """One tile of the result: where it is, what it reads as, and how sure that is."""

    id: int  # track id in a video, else the position in the recognition
    tile: Tile
    box: tuple[float, float, float, float]
    confidence: float
    flagged: bool = False
    corrected: bool = False
    role: str | None = None  # table tiles: "indicator" (the indicator's tile) or "table"
    # its outline in the photo (top-left, top-right, bottom-right, bottom-left) when the tier
    # path read it
    quad: tuple[tuple[float, float], ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "tile": str(self.tile),
            "box": [round(float(v), 1) for v in self.box],
            "confidence": round(float(self.confidence), 3),
        }
        if self.flagged:
            out["flagged"] = True
        if self.corrected:
            out["corrected"] = True
        if self.role:
            out["role"] = self.role
        if self.quad is not None:  # the tier stage's outline, as far as the tile shows
            out["quad"] = [[round(float(x), 1), round(float(y), 1)] for x, y in self.quad]
        return out


@dataclass(frozen=True)
class Unreadable:
    """A tile seen but not read, with why: ``"cut"`` (the frame's edge cuts it)."""

    box: tuple[float, float, float, float]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"box": [round(float(v), 1) for v in self.box], "reason": self.reason}


UNREADABLE_ADVICE = {"cut": "cut by the edge of the photo: move the camera back to read it"}


@dataclass(frozen=True)
class Flag:
    """A tile whose reading is uncertain, with the readings it could be instead."""

    id: int
    tile: Tile
    probability: float
    reason: str
    alternatives: tuple[tuple[Tile, float], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tile": str(self.tile),
            "probability": round(self.probability, 3),
            "reason": self.reason,
            "alternatives": [
                {"tile": str(t), "probability": round(p, 3)} for t, p in self.alternatives
            ],
        }

    @property
    def text(self) -> str:
        others = ", ".join(f"{t} {p:.0%}" for t, p in self.alternatives[:2])
        return f"{self.tile} ({self.probability:.0%}; {self.reason}; or {others})"


@dataclass(frozen=True)
class IndicatorReading:
    """The lone tile off the rack read as the indicator: its reading, how sure, and its id."""

    tile: Tile
    confidence: float  # the reading's probability x the detector's confidence
    id: int

    def to_dict(self) -> dict[str, Any]:
        return {"tile": str(self.tile), "confidence": round(self.confidence, 3), "id": self.id}


@dataclass
class ScanResult:
    """Everything read from one frame.  ``to_dict()`` is the ``--json`` and API object."""

    rows: list[list[list[PlacedTile]]]  # top to bottom, groups left to right
    table: list[PlacedTile]
    flagged: list[Flag]
    rules: Rules
    indicator: Tile | None  # the indicator in use
    # "typed" (the player gave it), "photo" (the lone tile off the rack, read at or above the
    # floor) or None (no indicator in use).
    indicator_source: str | None
    verdict: RefereeVerdict | None = None  # the referee on the groups as laid out
    # Ranked discards (15 tiles) or the waits (14); a 22-tile 101 rack: ``okey.okey101``'s ranking.
    advice: Advice | None = None
    hints: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The tile off the rack read as the indicator: the one in use ("photo"), or a suggestion read
    # below the floor (then ``indicator`` is None).
    indicator_read: IndicatorReading | None = None
    image_size: tuple[int, int] = (0, 0)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # Tiles the recogniser found but would not read (``TileReading.unreadable``: "cut" by the
    # frame's edge): left out of the hand, reported with their boxes instead of guessed.
    unreadable: list[Unreadable] = field(default_factory=list)
    # Which path read the photo: "tiers" (the rack's tiers found, each straightened and read;
    # rows are tiers) or "photo" (the whole-photo path: no tier found, or a table scene).
    reading: str = "photo"
    # The tiers' outlines in the photo, top to bottom (top-left, top-right, bottom-right,
    # bottom-left as the rack is read), when the tier path read it.
    tiers: list[tuple[tuple[float, float], ...]] = field(default_factory=list)

    @property
    def groups(self) -> list[list[PlacedTile]]:
        return [group for row in self.rows for group in row]

    @property
    def hand(self) -> list[Tile]:
        """The rack's tiles in reading order (top row first, left to right)."""
        return [p.tile for group in self.groups for p in group]

    @property
    def indicator_confidence(self) -> float | None:
        """How sure the reading of an indicator from the photo is (None when typed or none)."""
        if self.indicator_source == "photo" and self.indicator_read is not None:
            return self.indicator_read.confidence
        return None

    @property
    def indicator_suggestion(self) -> IndicatorReading | None:
        """A tile off the rack read too unsurely to be used as the indicator."""
        return self.indicator_read if self.indicator_source != "photo" else None

    @property
    def indicator_text(self) -> str:
        """Which indicator is in use and where it came from, as one line."""
        if self.indicator is None:
            suggestion = self.indicator_suggestion
            if suggestion is None:
                return "Indicator: none (type it for a verdict and advice)"
            return (
                f"Indicator: none; the tile off the rack may be {suggestion.tile} "
                f"({suggestion.confidence:.0%}, below the {INDICATOR_FLOOR:.0%} floor): "
                "type it to use it"
            )
        okey = f"okey {self.okey}"
        if self.indicator_source == "typed":
            return f"Indicator {self.indicator} (typed), {okey}"
        return (
            f"Indicator {self.indicator} (read from the photo, {self.indicator_confidence:.0%}, "
            f"not confirmed), {okey}"
        )

    @property
    def okey(self) -> Tile | None:
        return okey_for(self.indicator) if self.indicator is not None else None

    @property
    def discard(self) -> PlacedTile | None:
        """The rack tile the advice says to discard (the rightmost copy), if any."""
        tile = _advised_discard(self.advice)
        if tile is None:
            return None
        copies = [p for group in self.groups for p in group if p.tile == tile]
        return copies[-1] if copies else None

    def to_dict(self) -> dict[str, Any]:
        discard = self.discard
        return {
            "rules": self.rules.name,
            "indicator": str(self.indicator) if self.indicator else None,
            "indicator_source": self.indicator_source,
            "indicator_confidence": (
                None if self.indicator_confidence is None else round(self.indicator_confidence, 3)
            ),
            "indicator_confirmed": self.indicator_source == "typed",
            "indicator_suggestion": (
                self.indicator_suggestion.to_dict() if self.indicator_suggestion else None
            ),
            "okey": str(self.okey) if self.okey else None,
            "rows": [[[p.to_dict() for p in group] for group in row] for row in self.rows],
            "hand": [str(t) for t in self.hand],
            "table": [p.to_dict() for p in self.table],
            "flagged": [f.to_dict() for f in self.flagged],
            "verdict": self.verdict.to_dict() if self.verdict else None,
            "advice": self.advice.to_dict() if self.advice else None,
            "discard": discard.to_dict() if discard else None,
            "hints": list(self.hints),
            "unreadable": [u.to_dict() for u in self.unreadable],
            "warnings": list(self.warnings),
            "image_size": list(self.image_size),
            "reading": self.reading,
            "tiers": [[[round(x, 1), round(y, 1)] for x, y in quad] for quad in self.tiers],
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }


def _advised_discard(advice: Advice | None) -> Tile | None:
    """The discard the engine advises (15 tiles; 22 in 101), if any."""
    if advice is None or advice.best is None or not advice.best.advised:
        return None
    return advice.best.discard


class Pipeline:
    """Recogniser + layout + rule-aware reading + engine; load once, call per frame."""

    def __init__(
        self,
        recognizer: Any,
        *,
        max_rows: int = 2,
        gap_fraction: float | None = None,
        background_engine: bool = False,
        indicator_floor: float = INDICATOR_FLOOR,
    ) -> None:
        self.recognizer = recognizer
        self.indicator_floor = indicator_floor
        self.max_rows = max_rows
        self.gap_fraction = gap_fraction
        self._engine_cache: OrderedDict[tuple, tuple[Any, ...]] = OrderedDict()
        # The live loop keeps drawing frames while the engine thinks about a new hand.
        self._executor = ThreadPoolExecutor(max_workers=1) if background_engine else None
        self._pending: dict[tuple, Future] = {}

    def clear_cache(self) -> None:
        """Forget the cached verdicts and advice (they are reused while a hand is unchanged)."""
        self._engine_cache.clear()

    @classmethod
    def default(
        cls, backend: str | None = None, *, background_engine: bool = False, profile: Any = None
    ) -> Pipeline:
        """The pipeline with the shipped recogniser (``models/recognizer.yaml``), reading
        through a per-set ``profile`` (a name, a folder or a ``vision.profiles.Profile``) if
        one is given."""
        from vision.profiles import with_profile
        from vision.recognizer import Recognizer

        recognizer = with_profile(Recognizer.default(backend), profile)
        return cls(recognizer, background_engine=background_engine)

    def scan(
        self,
        image_bgr: Any,
        *,
        indicator: Tile | str | None = None,
        rules: Rules | None = None,
        seen: Iterable[Tile | str] = (),
        declare: bool = False,
        corrections: Mapping[int | str, Tile | str] | None = None,
        rule_aware: bool = True,
        turn: Mapping[str, Any] | None = None,
    ) -> ScanResult:
        """Read one photo (BGR array).

        Raises ``NotAnImageError``, ``NoTilesError`` or ``NoRackError``.
        """
        image = as_bgr(image_bgr)
        t0 = time.perf_counter()
        recognition = self.recognizer.recognize(image)
        recognise_ms = (time.perf_counter() - t0) * 1000
        result = self.read(
            recognition,
            indicator=indicator,
            rules=rules,
            seen=seen,
            declare=declare,
            corrections=corrections,
            rule_aware=rule_aware,
            turn=turn,
        )
        result.timings_ms = {"recognise": recognise_ms, **result.timings_ms}
        result.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        return result

    def read(
        self,
        recognition: Recognition,
        *,
        indicator: Tile | str | None = None,
        rules: Rules | None = None,
        seen: Iterable[Tile | str] = (),
        declare: bool = False,
        corrections: Mapping[int | str, Tile | str] | None = None,
        rule_aware: bool = True,
        turn: Mapping[str, Any] | None = None,
    ) -> ScanResult:
        """Lay out, decode and referee an already recognised frame.  ``turn``: what rates the
        discards' risk, ``okey.advise_hand``'s keywords (classic ``next_takes``,
        ``next_discards``; 101 ``table``, ``opened``)."""
        rules = rules or Rules.classic()
        given = Tile.parse(indicator) if isinstance(indicator, str) else indicator
        if given is not None and given.is_false_joker:
            raise ImpossibleHandError("the indicator can never be a false joker")
        seen_tiles = [Tile.parse(t) if isinstance(t, str) else t for t in seen]
        # a tile the recogniser flags unreadable (cut by the frame) is not read
        legible = [k for k, r in enumerate(recognition.tiles) if r.unreadable is None]
        readings = [recognition.tiles[k] for k in legible]
        if not readings:
            raise NoTilesError("no tiles found in the image")
        every_id = list(getattr(recognition, "track_ids", None) or range(len(recognition.tiles)))
        ids = [every_id[k] for k in legible]
        fixed = _corrections_by_position(corrections, ids)
        timings = dict(recognition.timings_ms)

        t0 = time.perf_counter()
        kwargs = {} if self.gap_fraction is None else {"gap_fraction": self.gap_fraction}
        if recognition.tiers:  # rows are the tiers the tier stage found
            layout = tier_layout(
                [r.place for r in readings],
                [r.centre for r in readings],
                [t.tile_width for t in recognition.tiers],
                **kwargs,
            )
        else:
            layout = lay_out([r.box for r in readings], max_rows=self.max_rows, **kwargs)
        if not layout.rack:
            raise NoRackError(
                f"found {len(readings)} tile(s) but no rack row (two or more tiles side by side)"
            )
        t1 = time.perf_counter()
        decoded, read, used = _decode_frame(
            readings, layout, given, rules, seen_tiles, fixed, rule_aware, ids, self.indicator_floor
        )
        t2 = time.perf_counter()
        indicator_tile = given if given is not None else (read.tile if used and read else None)
        source = "typed" if given is not None else ("photo" if indicator_tile else None)
        result = _assemble(readings, ids, layout, decoded, fixed, rules, indicator_tile, source)
        result.indicator_read = read if given is None else None
        result.image_size = recognition.image_size
        result.reading = recognition.path
        result.tiers = [tier.quad for tier in recognition.tiers]
        result.unreadable = [
            Unreadable(tuple(r.box), r.unreadable)
            for r in recognition.tiles
            if r.unreadable is not None
        ]
        for reason in sorted({u.reason for u in result.unreadable}):
            n = sum(u.reason == reason for u in result.unreadable)
            what = UNREADABLE_ADVICE.get(reason, reason)
            result.warnings.append(f"{n} tile{'s' if n > 1 else ''} not read, {what}")
        too_many = _check_rack_size(result)
        if result.indicator is None:
            result.warnings.append(_no_indicator_note(result.indicator_suggestion))
        elif not too_many:
            verdict, advice, notes = self._engine(
                result, declare, seen_tiles, decoded, layout, _frozen_turn(turn)
            )
            result.verdict, result.advice = verdict, advice
            if verdict is None and advice is None:
                result.warnings.extend(notes)
            else:
                result.hints.extend(notes)
            if result.indicator_source == "photo" and _wins(verdict, advice):
                result.warnings.append(
                    f"the win counts on the indicator {result.indicator} read from the photo "
                    f"({result.indicator_confidence:.0%}), not confirmed: type it to confirm"
                )
        t3 = time.perf_counter()
        timings.update(
            {"layout": (t1 - t0) * 1000, "decode": (t2 - t1) * 1000, "engine": (t3 - t2) * 1000}
        )
        result.timings_ms = timings
        return result

    def _engine(
        self,
        result: ScanResult,
        declare: bool,
        seen: list[Tile],
        decoded: Decoded,
        layout: RackLayout,
        turn: tuple[tuple[str, Any], ...] = (),
    ) -> tuple[RefereeVerdict | None, Advice | None, list[str]]:
        """Verdict, advice and one-tile-away hints, cached by hand.

        With ``background_engine`` the engine works on its own thread and a frame whose hand has
        no answer yet gets none (and a note); a later frame of the same hand picks the answer up.
        """
        groups = tuple(tuple(p.tile for p in g) for g in result.groups)
        uncertain = _uncertain_alternatives(result, decoded, layout)
        key = (
            groups,
            result.indicator,
            result.rules,
            tuple(sorted(seen)),
            declare,
            uncertain,
            turn,
        )
        if key in self._engine_cache:
            self._engine_cache.move_to_end(key)
            return self._engine_cache[key]
        job = (groups, result.indicator, result.rules, seen, declare, uncertain, turn)
        if self._executor is None:
            return self._remember(key, _judge(*job))
        future = self._pending.get(key)
        if future is None:
            for other in self._pending.values():
                other.cancel()  # a hand the camera no longer shows
            self._pending = {key: self._executor.submit(_judge, *job)}
            future = self._pending[key]
        if not future.done():
            return None, None, ["working out the verdict and advice for this hand"]
        del self._pending[key]
        return self._remember(key, future.result())

    def _remember(self, key: tuple, value: tuple) -> tuple:
        self._engine_cache[key] = value
        if len(self._engine_cache) > ENGINE_CACHE_SIZE:
            self._engine_cache.popitem(last=False)
        return value


def _judge(
    groups: tuple[tuple[Tile, ...], ...],
    indicator: Tile,
    rules: Rules,
    seen: list[Tile],
    declare: bool,
    uncertain: tuple[tuple[int, int, Tile], ...],
    turn: tuple[tuple[str, Any], ...] = (),
) -> tuple[RefereeVerdict | None, Advice | None, list[str]]:
    from vision import judge

    lists = [list(g) for g in groups]
    hand = [t for g in groups for t in g]
    try:
        verdict = judge.verdict(lists, indicator, rules, declare)
        advice = judge.advice(hand, indicator, rules, seen, **dict(turn))
    except OkeyError as exc:  # e.g. the seen tiles and the rack together break the set
        return None, None, [f"no verdict: {exc}"]
    return verdict, advice, judge.hints(lists, indicator, rules, declare, verdict, uncertain)


def _frozen_turn(turn: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    """``turn`` as a key of the engine's cache: its values' lists as tuples, empty ones left out."""
    items = (
        (name, tuple(v) if isinstance(v, list | tuple) else v) for name, v in (turn or {}).items()
    )
    return tuple(sorted((name, v) for name, v in items if v))


def _wins(verdict: RefereeVerdict | None, advice: Advice | None) -> bool:
    """Whether the answer says the hand wins (a valid declaration, or a discard that wins)."""
    if verdict is not None and verdict.valid:
        return True
    return advice is not None and advice.distance == 0


def _no_indicator_note(suggestion: IndicatorReading | None) -> str:
    if suggestion is None:
        return "no indicator: give one (--indicator) for a verdict and advice"
    return (
        f"no indicator in use: the tile off the rack reads {suggestion.tile} at "
        f"{suggestion.confidence:.0%}, below the {INDICATOR_FLOOR:.0%} needed to use it; "
        "type the indicator (--indicator) for a verdict and advice"
    )


def _corrections_by_position(
    corrections: Mapping[int | str, Tile | str] | None, ids: list[int]
) -> dict[int, Tile]:
    """Map the player's corrections (keyed by tile id) to positions in this frame."""
    fixed: dict[int, Tile] = {}
    position = {tile_id: k for k, tile_id in enumerate(ids)}
    for key, value in (corrections or {}).items():
        try:
            tile_id = int(key)
        except (TypeError, ValueError):
            raise ValueError(f"correction key {key!r} is not a tile id") from None
        if tile_id not in position:
            continue  # a tile that left the view; its correction waits for it to come back
        fixed[position[tile_id]] = Tile.parse(value) if isinstance(value, str) else value
    return fixed


def _decode_frame(
    readings: list[TileReading],
    layout: RackLayout,
    given: Tile | None,
    rules: Rules,
    seen: list[Tile],
    fixed: dict[int, Tile],
    rule_aware: bool,
    ids: list[int],
    floor: float,
) -> tuple[Decoded, IndicatorReading | None, bool]:
    """Decode all tiles; with no indicator given, a lone table tile is read as the indicator:
    used (True) when read at ``floor`` or above, else only returned as a suggestion."""
    probs = np.stack([np.asarray(r.probs, dtype=float) for r in readings])
    rack = set(layout.rack)
    on_rack = [i in rack for i in range(len(readings))]
    decoded = decode(
        probs,
        on_rack=on_rack,
        indicator=given,
        rules=rules,
        seen=seen,
        fixed=fixed,
        rule_aware=rule_aware,
    )
    if given is not None:
        return decoded, None, False
    if len(layout.table) == 1 and not decoded.tiles[layout.table[0]].is_false_joker:
        position = layout.table[0]
        indicator = decoded.tiles[position]
        sure = 1.0 if position in fixed else decoded.probabilities[position]
        read = IndicatorReading(
            indicator, float(sure * readings[position].detection_confidence), int(ids[position])
        )
        if read.confidence < floor:
            return decoded, read, False
        try:
            decoded = decode(
                probs,
                on_rack=on_rack,
                indicator=indicator,
                rules=rules,
                seen=seen,
                fixed={**fixed, position: indicator} if position not in fixed else fixed,
                rule_aware=rule_aware,
            )
        except ImpossibleHandError:
            return decoded, None, False
        return decoded, read, True
    return decoded, None, False


def _assemble(
    readings: list[TileReading],
    ids: list[int],
    layout: RackLayout,
    decoded: Decoded,
    fixed: dict[int, Tile],
    rules: Rules,
    indicator: Tile | None,
    source: str | None,
) -> ScanResult:
    flagged_set = set(decoded.flagged)

    def placed(i: int) -> PlacedTile:
        prob = 1.0 if i in fixed else decoded.probabilities[i]
        return PlacedTile(
            id=int(ids[i]),
            tile=decoded.tiles[i],
            box=tuple(float(v) for v in readings[i].box),
            confidence=prob * readings[i].detection_confidence,
            flagged=i in flagged_set,
            corrected=i in fixed,
            quad=readings[i].quad,
        )

    rows = [[[placed(i) for i in group] for group in row] for row in layout.rows]
    table = [placed(i) for i in layout.table]
    roles = ["indicator" if p.tile == indicator else "table" for p in table]
    if roles.count("indicator") > 1:  # the indicator's twin can lie among the discards
        first = roles.index("indicator")
        roles = ["table" if k != first and r == "indicator" else r for k, r in enumerate(roles)]
    table = [replace(p, role=r) for p, r in zip(table, roles, strict=True)]
    flags = [
        Flag(
            id=int(ids[i]),
            tile=decoded.tiles[i],
            probability=decoded.probabilities[i],
            reason=decoded.reason(i),
            alternatives=tuple((a.tile, a.probability) for a in decoded.alternatives[i]),
        )
        for i in decoded.flagged
    ]
    return ScanResult(rows, table, flags, rules, indicator, source)


def _check_rack_size(result: ScanResult) -> bool:
    """Note a rack that holds no hand; True when it holds more tiles than a rack can."""
    n = len(result.hand)
    rules = result.rules
    if n > rules.max_rack_tiles:
        result.warnings.append(
            f"{n} tiles on the rack: a {rules.name} rack holds at most {rules.max_rack_tiles}"
        )
        return True
    if n < rules.hand_size:
        result.warnings.append(
            f"{n} tiles on the rack: a {rules.name} hand has {rules.hand_size} or "
            f"{rules.max_rack_tiles} (a tile hidden or off the rack?)"
        )
    return False


def _uncertain_alternatives(
    result: ScanResult, decoded: Decoded, layout: RackLayout
) -> tuple[tuple[int, int, Tile], ...]:
    """(group number, place in group, alternative) for the least sure rack tiles' runner-ups."""
    place = {}
    for g, group in enumerate(layout.groups):
        for k, i in enumerate(group):
            place[i] = (g, k)
    corrected = {i for i in place if result.groups[place[i][0]][place[i][1]].corrected}
    candidates = sorted(
        (i for i in decoded.flagged if i in place and i not in corrected),
        key=lambda i: decoded.probabilities[i],
    )[:HINT_TILES]
    return tuple(
        (*place[i], a.tile)
        for i in candidates
        for a in decoded.alternatives[i][:HINT_ALTERNATIVES]
        if a.probability >= HINT_MIN_PROBABILITY
    )
