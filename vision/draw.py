"""Draw a scan result on its photo: boxes, readings, confidence, group brackets, the discard, and
a header (the indicator and where it came from, the hand, the verdict, the advice) drawn over the
photo's top-left corner or, for a video, in a band above the picture (``header_band``).

>>> import numpy as np
>>> from okey import Rules, Tile
>>> from vision.pipeline import PlacedTile, ScanResult
>>> tile = PlacedTile(0, Tile.parse("R5"), (10, 10, 50, 66), 0.97)
>>> result = ScanResult([[[tile]]], [], [], Rules.classic(), None, None)
>>> annotate(np.zeros((120, 200, 3), np.uint8), result).shape
(120, 200, 3)
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
    if band:
        return header_band(out, _summary(result, fps))
    _header(out, _summary(result, fps), scale)
    return out


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
    verdict = _verdict_line(result.verdict)
    if verdict:
        lines.append(verdict)
    if result.advice is not None and result.advice.sentence:
        lines.append(result.advice.sentence)
    lines.extend(result.hints[:2])
    return lines


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


def _header(image: np.ndarray, lines: list[str], scale: float) -> None:
    y = 4
    text_scale = max(0.45, scale * 0.7)
    for line in lines:
        (_, h), base = cv2.getTextSize(line, FONT, text_scale, 1)
        y += h + base + 6
        _label(image, line, (4, y), text_scale, (30, 30, 30), max_width=image.shape[1] - 12)
