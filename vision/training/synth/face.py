"""Tile faces: cream bodies with bevel and wear, a bold number, a small suit symbol in a circle.

A face is drawn flat (front view) as a BGRA image of ``FACE_W x FACE_H`` pixels; the scene warps
it into place.  The number fills the upper ~60 % of the face; the suit sits in a small circle under
it.  False jokers carry a mark (clover, star, flower, ...: the style pool says which) and no number.

>>> import numpy as np
>>> from okey import Tile
>>> style = sample_set_style(np.random.default_rng(0), "train")
>>> face = draw_face(np.random.default_rng(1), Tile.parse("R7"), style)
>>> face.shape
(180, 128, 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from okey import Tile
from vision.training.synth.styles import FONT_DIR, InkRange, pool
from vision.training.synth.textures import fractal_noise

FACE_W, FACE_H = 128, 180
Colour = tuple[int, int, int]  # BGR


@dataclass(frozen=True)
class SetStyle:
    """Everything that is shared by the tiles of one physical set."""

    font: str
    inks: dict[str, Colour]  # colour letter -> BGR ink
    joker_ink: Colour
    body: Colour  # cream / ivory, BGR
    suit: str  # heart, spade, club, dot, none
    joker_mark: str
    number_scale: float  # height of the number as a fraction of the face height
    number_y: float  # centre of the number, fraction of the face height
    circle: bool  # draw the circle around the suit symbol
    fade: float  # 0 = fresh ink, 1 = badly worn
    gloss: float  # 0 = matte, 1 = glossy (glare strength)
    engraved: float = 0.0  # depth of the engraving shadow along the strokes (0 = printed flat)


def _ink_from_range(rng: np.random.Generator, r: InkRange) -> Colour:
    hsv = np.array(
        [[[rng.uniform(*r.hue) % 180, rng.uniform(*r.sat), rng.uniform(*r.val)]]], np.float32
    )
    bgr = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)[0, 0]
    return int(bgr[0]), int(bgr[1]), int(bgr[2])


def sample_set_style(rng: np.random.Generator, pool_name: str) -> SetStyle:
    """Draw the look of one tile set from a style pool."""
    p = pool(pool_name)
    inks = {
        c: _ink_from_range(rng, ranges[int(rng.integers(len(ranges)))])
        for c, ranges in p.inks.items()
    }
    red = rng.uniform(232, 253)  # cream to ivory: green a little under red, blue well under
    cream = (int(red - rng.uniform(18, 50)), int(red - rng.uniform(3, 16)), int(red))
    joker_ink = inks["RK"[int(rng.integers(2))]] if rng.random() < 0.7 else inks["B"]
    style = SetStyle(
        font=p.fonts[int(rng.integers(len(p.fonts)))],
        inks=inks,
        joker_ink=joker_ink,
        body=cream,
        suit=p.suits[int(rng.integers(len(p.suits)))],
        joker_mark=p.joker_marks[int(rng.integers(len(p.joker_marks)))],
        number_scale=float(rng.uniform(*p.number_scale)),
        number_y=float(rng.uniform(0.32, 0.38)),
        circle=bool(rng.random() < 0.75),
        fade=float(rng.beta(1.2, 4.0)),
        gloss=float(rng.uniform(0.2, 1.0)),
        engraved=float(rng.uniform(0.15, 0.4) if rng.random() < 0.6 else 0.0),
    )
    # drawn last, and only for pools that use them: every other pool's styles stay as they were
    if p.random_marks and rng.random() < p.random_marks:
        style = replace(style, joker_mark=f"{RANDOM_MARK}{int(rng.integers(2**31))}")
    return style


@lru_cache(maxsize=64)
def _font(name: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_DIR / name), size)


@lru_cache(maxsize=512)
def _number_mask(font: str, number: int, scale: float, y_frac: float) -> np.ndarray:
    """Float mask of the number: glyphs ``scale * FACE_H`` tall, centred at ``y_frac``."""
    target_h = scale * FACE_H
    size = int(target_h * 1.35)
    f = _font(font, size)
    text = str(number)
    x0, y0, x1, y1 = f.getbbox(text)
    # rescale so that the glyphs' ink is exactly target_h tall
    size = max(8, int(size * target_h / max(1, y1 - y0)))
    f = _font(font, size)
    x0, y0, x1, y1 = f.getbbox(text)
    w, h = x1 - x0, y1 - y0
    canvas = Image.new("L", (w + 8, h + 8), 0)
    ImageDraw.Draw(canvas).text((4 - x0, 4 - y0), text, font=f, fill=255)
    glyph = np.asarray(canvas, np.float32) / 255.0
    max_w = FACE_W * 0.86
    if glyph.shape[1] > max_w:  # two-digit numbers in wide faces: squeeze, as printed sets do
        glyph = cv2.resize(glyph, (int(max_w), glyph.shape[0]), interpolation=cv2.INTER_AREA)
    mask = np.zeros((FACE_H, FACE_W), np.float32)
    gh, gw = glyph.shape
    top = int(round(y_frac * FACE_H - gh / 2))
    left = int(round((FACE_W - gw) / 2))
    top = max(0, min(FACE_H - gh, top))
    left = max(0, min(FACE_W - gw, left))
    mask[top : top + gh, left : left + gw] = glyph
    return mask


def _heart(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    d.ellipse([cx - r, cy - r * 0.75, cx, cy + r * 0.2], fill=255)
    d.ellipse([cx, cy - r * 0.75, cx + r, cy + r * 0.2], fill=255)
    d.polygon(
        [(cx - r * 0.97, cy - 0.15 * r), (cx + r * 0.97, cy - 0.15 * r), (cx, cy + r)], fill=255
    )


def _spade(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    d.ellipse([cx - r, cy - r * 0.2, cx, cy + r * 0.6], fill=255)
    d.ellipse([cx, cy - r * 0.2, cx + r, cy + r * 0.6], fill=255)
    d.polygon(
        [(cx - r * 0.97, cy + 0.3 * r), (cx + r * 0.97, cy + 0.3 * r), (cx, cy - r)], fill=255
    )
    d.polygon([(cx, cy + 0.3 * r), (cx - 0.35 * r, cy + r), (cx + 0.35 * r, cy + r)], fill=255)


def _club(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    s = r * 0.46
    for dx, dy in ((0, -0.45), (-0.5, 0.15), (0.5, 0.15)):
        d.ellipse([cx + dx * r - s, cy + dy * r - s, cx + dx * r + s, cy + dy * r + s], fill=255)
    d.polygon([(cx, cy), (cx - 0.3 * r, cy + r), (cx + 0.3 * r, cy + r)], fill=255)


def _dot(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    s = r * 0.55
    d.ellipse([cx - s, cy - s, cx + s, cy + s], fill=255)


def _star(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    pts = []
    for k in range(10):
        rad = r if k % 2 == 0 else r * 0.42
        a = -math.pi / 2 + k * math.pi / 5
        pts.append((cx + rad * math.cos(a), cy + rad * math.sin(a)))
    d.polygon(pts, fill=255)


def _clover(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    s = r * 0.42
    for dx, dy in ((0, -0.45), (-0.45, 0), (0.45, 0), (0, 0.45)):
        d.ellipse([cx + dx * r - s, cy + dy * r - s, cx + dx * r + s, cy + dy * r + s], fill=255)
    d.line([(cx, cy), (cx + 0.35 * r, cy + r)], fill=255, width=max(2, int(r * 0.14)))


def _flower(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    s = r * 0.36
    for k in range(6):
        a = k * math.pi / 3
        px, py = cx + 0.55 * r * math.cos(a), cy + 0.55 * r * math.sin(a)
        d.ellipse([px - s, py - s, px + s, py + s], fill=255)
    d.ellipse([cx - s, cy - s, cx + s, cy + s], fill=0)


def _diamond(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    d.polygon([(cx, cy - r), (cx + 0.7 * r, cy), (cx, cy + r), (cx - 0.7 * r, cy)], fill=255)


def _ring(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    s = r * 0.8
    d.ellipse([cx - s, cy - s, cx + s, cy + s], outline=255, width=max(2, int(r * 0.28)))


def _crescent(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    d.ellipse([cx - r * 0.85, cy - r * 0.85, cx + r * 0.85, cy + r * 0.85], fill=255)
    d.ellipse([cx - r * 0.45, cy - r * 0.95, cx + r * 1.05, cy + r * 0.55], fill=0)


def _cross(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    w = r * 0.3
    d.rectangle([cx - w, cy - r * 0.9, cx + w, cy + r * 0.9], fill=255)
    d.rectangle([cx - r * 0.9, cy - w, cx + r * 0.9, cy + w], fill=255)


def _triangle(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    d.polygon(
        [(cx, cy - r), (cx + 0.95 * r, cy + 0.7 * r), (cx - 0.95 * r, cy + 0.7 * r)], fill=255
    )


def _hexagon(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    pts = [
        (cx + 0.85 * r * math.cos(k * math.pi / 3), cy + 0.85 * r * math.sin(k * math.pi / 3))
        for k in range(6)
    ]
    d.polygon(pts, fill=255)


def _smiley(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    s = r * 0.85
    d.ellipse([cx - s, cy - s, cx + s, cy + s], fill=255)
    e = r * 0.13
    for dx in (-0.32, 0.32):
        d.ellipse([cx + dx * r - e, cy - 0.3 * r - e, cx + dx * r + e, cy - 0.3 * r + e], fill=0)
    d.arc(
        [cx - 0.5 * r, cy - 0.35 * r, cx + 0.5 * r, cy + 0.5 * r],
        20,
        160,
        fill=0,
        width=max(2, int(r * 0.12)),
    )


SYMBOLS = {
    "heart": _heart,
    "spade": _spade,
    "club": _club,
    "dot": _dot,
    "star": _star,
    "clover": _clover,
    "flower": _flower,
    # plain shapes for the wide training pool's false jokers (none of them petals round a centre)
    "diamond": _diamond,
    "ring": _ring,
    "crescent": _crescent,
    "cross": _cross,
    "triangle": _triangle,
    "hexagon": _hexagon,
    "smiley": _smiley,
}


RANDOM_MARK = "random:"  # a joker mark "random:<seed>" is drawn by random_mark from that seed


def random_mark(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, seed: int) -> None:
    """A shape no real set is known to use, the same for the same seed: an irregular polygon
    (4-9 corners spread round the centre at 45-100 % of ``r``), or two or three overlapping
    ellipses and triangles: solid blobs, no strokes (two boxes make an L, which reads like a 7).
    Never petals round a centre (the held-out flower).
    """
    rng = np.random.default_rng(seed)
    if rng.random() < 0.5:
        n = int(rng.integers(4, 10))  # corners spread round the centre: a blob, never a sliver
        angles = (np.arange(n) + rng.uniform(-0.3, 0.3, n)) * 2 * math.pi / n + rng.uniform(0, 6.3)
        radii = rng.uniform(0.45, 1.0, n) * r
        corners = zip(radii, angles, strict=True)
        d.polygon([(cx + q * math.cos(a), cy + q * math.sin(a)) for q, a in corners], fill=255)
        return
    for _ in range(int(rng.integers(2, 4))):
        px, py = cx + rng.uniform(-0.35, 0.35) * r, cy + rng.uniform(-0.35, 0.35) * r
        w, h = rng.uniform(0.4, 0.75) * r, rng.uniform(0.4, 0.75) * r
        if rng.random() < 0.5:
            d.ellipse([px - w, py - h, px + w, py + h], fill=255)
        else:
            turn = rng.uniform(0, 2 * math.pi)  # corners 2.094 rad (~120 degrees) apart
            d.polygon(
                [
                    (px + w * math.cos(turn + j * 2.094), py + h * math.sin(turn + j * 2.094))
                    for j in range(3)
                ],
                fill=255,
            )


@lru_cache(maxsize=64)
def _symbol_mask(kind: str, cx: float, cy: float, r: float, circle: bool) -> np.ndarray:
    img = Image.new("L", (FACE_W * 2, FACE_H * 2), 0)
    d = ImageDraw.Draw(img)
    if kind.startswith(RANDOM_MARK):
        random_mark(d, cx * 2, cy * 2, r * 2, int(kind[len(RANDOM_MARK) :]))
    elif kind != "none":
        SYMBOLS[kind](d, cx * 2, cy * 2, r * 2 * (0.62 if circle else 1.0))
    if circle:
        rr = r * 2
        d.ellipse(
            [cx * 2 - rr, cy * 2 - rr, cx * 2 + rr, cy * 2 + rr],
            outline=255,
            width=max(3, int(rr * 0.14)),
        )
    small = img.resize((FACE_W, FACE_H), Image.Resampling.BOX)
    return np.asarray(small, np.float32) / 255.0


@lru_cache(maxsize=4)
def _face_geometry() -> tuple[np.ndarray, np.ndarray]:
    """Alpha of the rounded face and a bevel field (0 inside, rising to 1 at the rim)."""
    img = Image.new("L", (FACE_W * 2, FACE_H * 2), 0)
    radius = int(FACE_W * 2 * 0.13)
    ImageDraw.Draw(img).rounded_rectangle([0, 0, FACE_W * 2 - 1, FACE_H * 2 - 1], radius, fill=255)
    alpha = np.asarray(img.resize((FACE_W, FACE_H), Image.Resampling.BOX), np.float32) / 255.0
    dist = cv2.distanceTransform((alpha > 0.5).astype(np.uint8), cv2.DIST_L2, 3)
    bevel = np.exp(-dist / (FACE_W * 0.05)).astype(np.float32)
    return alpha, bevel


@lru_cache(maxsize=1)
def _noise_bank() -> tuple[np.ndarray, np.ndarray]:
    """Fixed banks of mottle and wear fields (a constant seed keeps renders deterministic); each
    tile picks one and flips it, which is far cheaper than fresh noise per tile."""
    rng = np.random.default_rng(20261130)
    mottles, wears = [], []
    for _ in range(24):
        m = fractal_noise(rng, (FACE_H // 4, FACE_W // 4), 2, 2)
        mottles.append(cv2.resize(m, (FACE_W, FACE_H), interpolation=cv2.INTER_LINEAR))
        wr = fractal_noise(rng, (FACE_H // 3, FACE_W // 3), 3, 2)
        wears.append(cv2.resize(wr, (FACE_W, FACE_H), interpolation=cv2.INTER_LINEAR))
    return np.stack(mottles), np.stack(wears)


@lru_cache(maxsize=32)
def _body_base(body: Colour) -> np.ndarray:
    """The cream face without ink: vertical light falloff, bevel darkening, bright top rim."""
    _, bevel = _face_geometry()
    ys = np.linspace(0, 1, FACE_H, dtype=np.float32)[:, None]
    shade = 1.0 - 0.05 * ys - 0.22 * bevel
    face = np.asarray(body, np.float32)[None, None, :] * shade[..., None]
    # a thin bright rim on the top bevel, where the light catches the rounded edge
    face += (bevel * (1.0 - ys) * 0.15 * 255 * 0.5)[..., None]
    return face


_SHIFT = np.float32([[1, 0, 1.5], [0, 1, 1.5]])


@lru_cache(maxsize=1)
def _alpha_u8() -> np.ndarray:
    return (_face_geometry()[0] * 255).astype(np.uint8)


def _pick(rng: np.random.Generator, bank: np.ndarray) -> np.ndarray:
    field = bank[int(rng.integers(len(bank)))]
    flip = int(rng.integers(4))
    return field[:: 1 if flip & 1 else -1, :: 1 if flip & 2 else -1]


def _mark_mask(tile: Tile, style: SetStyle) -> np.ndarray:
    """Float mask of a face's number, or of a false joker's mark (upright, no suit)."""
    if tile.is_false_joker:
        return _symbol_mask(style.joker_mark, FACE_W / 2, FACE_H * 0.45, FACE_W * 0.34, False)
    return _number_mask(style.font, tile.number, style.number_scale, style.number_y)


def draw_face(
    rng: np.random.Generator, tile: Tile, style: SetStyle, upside_down: bool = False
) -> np.ndarray:
    """One tile face as BGRA ``uint8`` (FACE_H x FACE_W x 4), front view, upright unless asked."""
    mottles, wears = _noise_bank()
    # cream body with soft mottling (OpenCV element-wise ops: this runs ~25 times per image)
    shade = _pick(rng, mottles) * np.float32(-0.04) + np.float32(1.02)
    face = cv2.multiply(_body_base(style.body), cv2.merge([shade, shade, shade]))

    mask = _mark_mask(tile, style)
    if tile.is_false_joker:
        ink = np.asarray(style.joker_ink, np.float32)
    else:
        ink = np.asarray(style.inks[tile.colour], np.float32)
        cy = min(
            FACE_H * 0.8, style.number_y * FACE_H + style.number_scale * FACE_H * 0.5 + FACE_W * 0.2
        )
        suit = _symbol_mask(
            style.suit, FACE_W / 2, cy, FACE_W * 0.15, style.circle and style.suit != "none"
        )
        mask = cv2.max(mask, suit)
    # per-tile wear: ink fades unevenly; worn blue drifts towards black, others towards the body
    fade = float(np.clip(style.fade + rng.normal(0, 0.08), 0, 0.9))
    keep = _pick(rng, wears) * np.float32(-0.6 * fade) + np.float32(1.0 - 0.4 * fade)
    opacity = cv2.multiply(mask, np.maximum(keep, 0.15))
    if tile.colour == "B" and fade > 0.3:
        ink = ink * (1.3 - fade) + np.array([40, 30, 30], np.float32) * (fade - 0.3)
    ink_layer = np.empty_like(face)
    ink_layer[:] = ink
    face = cv2.blendLinear(ink_layer, face, opacity, 1.0 - opacity)
    if style.engraved > 0:
        # engraved numbers: the cut's upper-left wall throws a thin shadow inside the stroke edge
        shifted = cv2.warpAffine(mask, _SHIFT, (FACE_W, FACE_H))
        groove = np.clip(mask - shifted, 0, 1) * np.float32(style.engraved)
        face = cv2.multiply(face, cv2.merge([1 - groove] * 3))
    # dirt specks
    n_specks = int(rng.poisson(8))
    ys = rng.integers(0, FACE_H, n_specks)
    xs = rng.integers(0, FACE_W, n_specks)
    face[ys, xs] *= rng.uniform(0.55, 0.85)
    out = cv2.merge([*cv2.split(cv2.convertScaleAbs(face)), _alpha_u8()])
    if upside_down:
        out = np.ascontiguousarray(out[::-1, ::-1])
    return out


def mark_box(tile: Tile, style: SetStyle, upside_down: bool = False) -> tuple[int, int, int, int]:
    """Face pixels ``(x0, y0, x1, y1)`` of what tells the tile apart: the number's ink, or a false
    joker's mark, as :func:`draw_face` places it (turned with the face when upside down).

    The renderer projects this box to say how much of a tile's number a picture shows: a tile
    half hidden by a finger may still show its number whole, or not at all.
    """
    ys, xs = np.nonzero(_mark_mask(tile, style) > 0.25)
    x0, y0, x1, y1 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
    if upside_down:
        x0, y0, x1, y1 = FACE_W - x1, FACE_H - y1, FACE_W - x0, FACE_H - y0
    return x0, y0, x1, y1


def draw_back(rng: np.random.Generator, style: SetStyle) -> np.ndarray:
    """The plain back of a tile (face-down tiles on the table), BGRA like ``draw_face``."""
    alpha, _ = _face_geometry()
    mottles, _ = _noise_bank()
    body = np.asarray(style.body, np.float32)
    face = _body_base(style.body) - (0.05 * (_pick(rng, mottles) - 0.5))[..., None] * body
    out = np.empty((FACE_H, FACE_W, 4), np.uint8)
    out[..., :3] = np.clip(face, 0, 255)
    out[..., 3] = (alpha * 255).astype(np.uint8)
    return out
