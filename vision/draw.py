"""Draw a scan result so a player checks it at a glance.

A photo (``istaka scan --annotate``) gets thin outlines only: each tier of the rack, each tile in
its colour's ink (uncertain ones in cyan, the advised discard in magenta), the table's tiles in
grey with their reading; below it a panel redraws the rack as read, tier by tier, tiles as chips
in their ink, groups apart as on the rack, the discard and the okeys marked, and the indicator,
verdict and advice as lines of text.  Nothing is written over a tile's face, so the photo and the
panel can be compared side by side.  A video frame (``band=True``: ``istaka live``) keeps one
size: boxes with their readings on the frame, and the header in a band above it
(``header_band``).

>>> import numpy as np
>>> from okey import Rules, Tile
>>> from vision.pipeline import PlacedTile, ScanResult
>>> tile = PlacedTile(0, Tile.parse("R5"), (10, 10, 50, 66), 0.97)
>>> result = ScanResult([[[tile]]], [], [], Rules.classic(), None, None)
>>> drawn = annotate(np.zeros((120, 200, 3), np.uint8), result)  # the photo, the panel below
>>> drawn.shape[1], drawn.shape[0] > 120
(200, True)
>>> annotate(np.zeros((120, 200, 3), np.uint8), result, band=True).shape[1]  # a video frame
200
"""

from __future__ import annotations

import cv2
import numpy as np

from okey import RefereeVerdict
from vision.pipeline import PlacedTile, ScanResult

# BGR ink per tile colour; black tiles get a light label so the text stays readable on dark racks.
INK = {
    "R": (40, 40, 220),
    "Y": (0, 170, 255),
    "B": (220, 120, 20),
    "K": (60, 60, 60),
    None: (60, 170, 60),  # false joker
}
FLAG = (255, 255, 0)  # cyan: apart from every tile colour
CORRECTED = (200, 80, 200)
DISCARD = (255, 0, 255)
TABLE = (160, 160, 160)
BRACKET = (80, 220, 80)
FONT = cv2.FONT_HERSHEY_SIMPLEX
BAND_LINES = 4  # lines of the header band above a video frame (a fixed height for the writer)
BAND = (24, 24, 24)


def annotate(
    image_bgr: np.ndarray, result: ScanResult, *, fps: float | None = None, band: bool = False
) -> np.ndarray:
    """A copy of the image with the scan drawn on it (text scaled to the tile size).  With
    ``band`` the header goes in a band above the picture (``header_band``), else over it."""
    if not band:
        return _board(image_bgr, result)
    out = image_bgr.copy()
    tiles = [p for g in result.groups for p in g] + list(result.table)
    scale = _text_scale(tiles, out.shape)
    discard = result.discard
    for group in result.groups:
        _bracket(out, group, scale)
    for placed in result.table:
        _tile(out, placed, scale, TABLE, note=placed.role or "table")
    for placed in (p for g in result.groups for p in g):
        colour = INK[placed.tile.colour]
        if placed.flagged:
            colour = FLAG
        if placed.corrected:
            colour = CORRECTED
        _tile(out, placed, scale, colour, discard=discard is not None and placed.id == discard.id)
    return header_band(out, _summary(result, fps))


def header_band(image_bgr: np.ndarray, lines: list[str]) -> np.ndarray:
    """The image with a dark band of ``BAND_LINES`` text lines on top, so nothing of the picture is
    hidden; the band's height depends only on the image's width (a video keeps one frame size)."""
    width = image_bgr.shape[1]
    scale = float(np.clip(width / 1000.0, 0.45, 1.0))
    thickness = max(1, round(scale * 2))
    (_, h), base = cv2.getTextSize("Ag", FONT, scale, thickness)
    step = h + base + 8
    band = np.full((step * BAND_LINES + 6, width, 3), BAND, np.uint8)
    for k, line in enumerate(lines[:BAND_LINES]):
        (w, _), _ = cv2.getTextSize(line, FONT, scale, thickness)
        fitted = scale * min(1.0, (width - 16) / max(w, 1))
        y = 4 + step * k + h + 2
        cv2.putText(band, line, (8, y), FONT, fitted, (235, 235, 235), thickness, cv2.LINE_AA)
    return np.vstack([band, image_bgr])


def _text_scale(tiles: list[PlacedTile], shape: tuple[int, ...]) -> float:
    if tiles:
        width = float(np.median([p.box[2] - p.box[0] for p in tiles]))
        return float(np.clip(width / 80.0, 0.35, 1.2))
    return float(np.clip(shape[1] / 1280.0, 0.4, 1.0))


def _label(
    image: np.ndarray,
    text: str,
    origin: tuple[int, int],
    scale: float,
    colour: tuple[int, ...],
    max_width: float | None = None,
) -> None:
    """Text on a filled box whose bottom-left is ``origin``, shrunk to ``max_width``, kept inside
    the image."""
    if max_width is not None:
        (w1, _), _ = cv2.getTextSize(text, FONT, 1.0, 2)
        scale = min(scale, max(0.3, max_width / max(w1, 1)))
    thickness = max(1, round(scale * 2))
    (w, h), base = cv2.getTextSize(text, FONT, scale, thickness)
    x = int(np.clip(origin[0], 0, max(0, image.shape[1] - w - 4)))
    y = int(np.clip(origin[1], h + base + 4, image.shape[0] - 2))
    cv2.rectangle(image, (x, y - h - base - 4), (x + w + 4, y), colour, cv2.FILLED)
    light = sum(colour) / 3 < 140
    ink = (255, 255, 255) if light else (0, 0, 0)
    cv2.putText(image, text, (x + 2, y - base - 2), FONT, scale, ink, thickness, cv2.LINE_AA)


def _tile(
    image: np.ndarray,
    placed: PlacedTile,
    scale: float,
    colour: tuple[int, ...],
    *,
    discard: bool = False,
    note: str = "",
) -> None:
    """The box, the reading above it (fitted to the tile's width, so neighbours do not overlap)
    and the confidence inside it."""
    x1, y1, x2, y2 = (round(v) for v in placed.box)
    thickness = max(2, round(scale * 3))
    cv2.rectangle(image, (x1, y1), (x2, y2), colour, thickness)
    mark = "?" if placed.flagged else ("*" if placed.corrected else "")
    name = f"{note} {placed.tile}{mark}" if note else f"{placed.tile}{mark}"
    if discard:
        pad = thickness * 2
        cv2.rectangle(image, (x1 - pad, y1 - pad), (x2 + pad, y2 + pad), DISCARD, thickness * 2)
        _label(image, f"discard {name}", (x1 - pad, y1 - pad - 1), scale, DISCARD)
    else:
        _label(image, name, (x1, y1 - 1), scale, colour, max_width=x2 - x1)
    # The confidence sits inside the box's top edge: a lower row's readings cover the bottom edge.
    conf_scale = min(scale * 0.55, 0.45 * (y2 - y1) / 30)
    (_, h), base = cv2.getTextSize("0%", FONT, conf_scale, 1)
    inside = (x1 + thickness, y1 + thickness + h + base + 4)
    _label(image, f"{placed.confidence:.0%}", inside, conf_scale, colour, (x2 - x1) * 0.6)


def _bracket(image: np.ndarray, group: list[PlacedTile], scale: float) -> None:
    """A bracket under the group: a line below its tiles with ticks at both ends."""
    if not group:
        return
    thickness = max(2, round(scale * 3))
    gap = max(4, round(8 * scale))
    left, right = group[0].box, group[-1].box
    start = (round(left[0]), round(left[3]) + gap)
    end = (round(right[2]), round(right[3]) + gap)
    tick = max(5, round(12 * scale))
    cv2.line(image, start, end, BRACKET, thickness, cv2.LINE_AA)
    cv2.line(image, start, (start[0], start[1] - tick), BRACKET, thickness, cv2.LINE_AA)
    cv2.line(image, end, (end[0], end[1] - tick), BRACKET, thickness, cv2.LINE_AA)


def _summary(result: ScanResult, fps: float | None) -> list[str]:
    lines = []
    hand = " ".join(str(t) for t in result.hand)
    head = f"{len(result.hand)} tiles  {_indicator_words(result)}"
    if fps is not None:
        head += f"  {fps:.1f} fps"
    lines.append(head)
    if hand:
        lines.append(hand)
    return lines + _judgement(result)


def _judgement(result: ScanResult) -> list[str]:
    """The verdict, the advice and up to two hints, a line each (those there are)."""
    lines = [_verdict_line(result.verdict)]
    if result.advice is not None:
        lines.append(result.advice.sentence)
    return [line for line in lines if line] + list(result.hints[:2])


def _indicator_words(result: ScanResult) -> str:
    """The indicator and its source, short: "indicator R5 (typed) okey R6"."""
    if result.indicator is None:
        suggestion = result.indicator_suggestion
        if suggestion is None:
            return "no indicator"
        return f"no indicator (maybe {suggestion.tile}, {suggestion.confidence:.0%}: type it)"
    if result.indicator_source == "typed":
        source = "typed"
    else:
        source = f"from photo {result.indicator_confidence:.0%}, not confirmed"
    return f"indicator {result.indicator} ({source})  okey {result.okey}"


def _verdict_line(verdict: RefereeVerdict | None) -> str:
    if verdict is None:
        return ""
    return verdict.sentence or ("valid" if verdict.valid else f"not a win: {verdict.reason}")


# The annotated photo is at most this wide (a 12 MP photo is shrunk); the panel's chips at most
# this wide, their height to width that of a tile.
BOARD_WIDTH = 1600
CHIP_WIDTH = 56
CHIP_ASPECT = 1.35
CHIP_FACE = (215, 240, 250)  # cream, BGR
OKEY_MARK = (0, 200, 255)
PANEL = (32, 32, 32)
TIER = (80, 220, 80)


def _board(image_bgr: np.ndarray, result: ScanResult) -> np.ndarray:
    """The photo with outlines, above the panel that redraws the rack as read."""
    factor = min(1.0, BOARD_WIDTH / image_bgr.shape[1])
    photo = (
        image_bgr
        if factor == 1.0
        else cv2.resize(image_bgr, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
    )
    photo = photo.copy()
    width = photo.shape[1]
    line = max(1, round(width / 600))
    for quad in result.tiers:
        cv2.polylines(photo, [_points(quad, factor)], True, TIER, line, cv2.LINE_AA)
    discard = result.discard
    for placed in (p for g in result.groups for p in g):
        colour = FLAG if placed.flagged else INK[placed.tile.colour]
        if placed.corrected:
            colour = CORRECTED
        chosen = discard is not None and placed.id == discard.id
        cv2.polylines(
            photo,
            [_outline(placed, factor)],
            True,
            DISCARD if chosen else colour,
            line * (3 if chosen else 1),
            cv2.LINE_AA,
        )
    scale = float(np.clip(width / 1400, 0.4, 0.9))
    for placed in result.table:
        x1, y1 = (round(v * factor) for v in placed.box[:2])
        cv2.polylines(photo, [_outline(placed, factor)], True, TABLE, line, cv2.LINE_AA)
        _label(photo, f"{placed.role or 'table'} {placed.tile}", (x1, y1 - 2), scale, TABLE)
    return np.vstack([photo, _panel(result, width)])


def _points(quad: tuple[tuple[float, float], ...], factor: float) -> np.ndarray:
    return np.int32([[round(x * factor), round(y * factor)] for x, y in quad])


def _outline(placed: PlacedTile, factor: float) -> np.ndarray:
    if placed.quad is not None:
        return _points(placed.quad, factor)
    x1, y1, x2, y2 = placed.box
    return _points(((x1, y1), (x2, y1), (x2, y2), (x1, y2)), factor)


def _panel(result: ScanResult, width: int) -> np.ndarray:
    """The rack as read: one line of chips per row (tier), groups apart, then the text lines."""
    rows = result.rows
    longest = max((sum(len(g) for g in row) + 0.5 * (len(row) - 1) for row in rows), default=1)
    chip = int(min(CHIP_WIDTH, (width - 24) / max(longest, 1)))
    chip_h = int(chip * CHIP_ASPECT)
    scale = float(np.clip(width / 1400, 0.45, 0.9))
    thickness = max(1, round(scale * 2))
    (_, text_h), base = cv2.getTextSize("Ag", FONT, scale, thickness)
    step = text_h + base + 8
    lines = _board_lines(result)
    height = 12 + len(rows) * (chip_h + 10) + len(lines) * step + 8
    panel = np.full((height, width, 3), PANEL, np.uint8)
    discard = result.discard
    y = 12
    for row in rows:
        x = 12.0
        for group in row:
            for placed in group:
                chosen = discard is not None and placed.id == discard.id
                _chip(panel, placed, (int(x), y), chip, chip_h, chosen, placed.tile == result.okey)
                x += chip
            x += chip * 0.5
        y += chip_h + 10
    for text in lines:
        (w, _), _ = cv2.getTextSize(text, FONT, scale, thickness)
        fitted = scale * min(1.0, (width - 24) / max(w, 1))
        y += step
        cv2.putText(
            panel, text, (12, y - base - 4), FONT, fitted, (235, 235, 235), thickness, cv2.LINE_AA
        )
    return panel


def _chip(
    panel: np.ndarray,
    placed: PlacedTile,
    corner: tuple[int, int],
    width: int,
    height: int,
    discard: bool,
    okey: bool,
) -> None:
    """One tile of the panel: a cream chip with its number in its colour's ink (FJ for a false
    joker), a magenta frame for the discard, a gold one for an okey, cyan and "?" when unsure."""
    x, y = corner
    pad = max(1, width // 14)
    cv2.rectangle(panel, (x + pad, y), (x + width - pad, y + height), CHIP_FACE, cv2.FILLED)
    frame = DISCARD if discard else FLAG if placed.flagged else OKEY_MARK if okey else None
    if frame is not None:
        cv2.rectangle(panel, (x + pad, y), (x + width - pad, y + height), frame, max(2, pad + 1))
    tile = placed.tile
    text = "FJ" if tile.is_false_joker else str(tile.number)
    text += "?" if placed.flagged else ""
    inner = width - 4 * pad
    (w, h), _ = cv2.getTextSize(text, FONT, 1.0, 2)
    scale = min(inner / max(w, 1), height * 0.45 / max(h, 1))
    thick = max(1, round(scale * 2.2))
    (w, h), _ = cv2.getTextSize(text, FONT, scale, thick)
    origin = (x + (width - w) // 2, y + (height + h) // 2)
    cv2.putText(panel, text, origin, FONT, scale, INK[tile.colour], thick, cv2.LINE_AA)


def _board_lines(result: ScanResult) -> list[str]:
    how = (
        f"read tier by tier ({len(result.rows)} tiers)"
        if result.reading == "tiers"
        else "read from the whole photo"
    )
    head = f"{len(result.hand)} tiles, {how}; {_indicator_words(result)}"
    return [head, *_judgement(result), *result.warnings[:2]]
