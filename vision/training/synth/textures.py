"""Procedural textures: wood, marble, cloth, felt, checks, plastic (no downloaded images).

Every texture is a function of a numpy ``Generator`` and returns a ``uint8`` BGR image, so a seed
fully decides it.  Noise is made at low resolution and resized up (bicubic), which is fast enough
for ten images a second on two cores and looks like the soft variation of real surfaces.

>>> import numpy as np
>>> wood(np.random.default_rng(0), (64, 96), (60, 110, 170)).shape
(64, 96, 3)
"""

from __future__ import annotations

import zlib
from functools import lru_cache

import cv2
import numpy as np

Colour = tuple[int, int, int]  # BGR


def smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: int) -> np.ndarray:
    """Value noise in [0, 1]: ``cells`` random values across the short side, resized up."""
    h, w = shape
    ch = max(2, int(round(cells * h / min(h, w))))
    cw = max(2, int(round(cells * w / min(h, w))))
    small = rng.random((ch, cw)).astype(np.float32)
    big = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return np.clip(big, 0.0, 1.0)


def fractal_noise(
    rng: np.random.Generator, shape: tuple[int, int], base_cells: int = 4, octaves: int = 4
) -> np.ndarray:
    """Sum of value-noise octaves, normalised to [0, 1]."""
    total = np.zeros(shape, np.float32)
    amp, norm = 1.0, 0.0
    for octave in range(octaves):
        total += amp * smooth_noise(rng, shape, base_cells * 2**octave)
        norm += amp
        amp *= 0.5
    total /= norm
    lo, hi = float(total.min()), float(total.max())
    return (total - lo) / max(hi - lo, 1e-6)


def _tint(gray: np.ndarray, dark: Colour, light: Colour) -> np.ndarray:
    """Map a [0, 1] field onto a two-colour ramp (BGR)."""
    d = np.asarray(dark, np.float32)
    l_ = np.asarray(light, np.float32)
    out = d + gray[..., None] * (l_ - d)
    return np.clip(out, 0, 255).astype(np.uint8)


def _shade(colour: Colour, factor: float) -> Colour:
    return tuple(int(np.clip(c * factor, 0, 255)) for c in colour)  # type: ignore[return-value]


def wood(rng: np.random.Generator, shape: tuple[int, int], colour: Colour) -> np.ndarray:
    """Wood grain along x: stretched noise for fibres, noise-warped sine rings for the figure."""
    h, w = shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    # the figure: growth rings as sines across the grain, bent by noise stretched along it
    stretched = fractal_noise(rng, (h, max(8, w // 6)), 3, 3)
    warp = cv2.resize(stretched, (w, h), interpolation=cv2.INTER_CUBIC) * rng.uniform(15, 45)
    freq = rng.uniform(0.05, 0.14)
    rings = 0.5 + 0.5 * np.sin((ys + warp + 0.02 * xs * rng.uniform(-1, 1)) * freq)
    rings = rings ** rng.uniform(1.5, 4.0)
    small = rng.random((max(2, h // 2), max(2, w // 40))).astype(np.float32)
    fibres = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    field = 0.55 * rings + 0.3 * fibres + 0.15 * fractal_noise(rng, shape, 2, 2)
    if rng.random() < 0.5:  # a plank table: boards along the grain, dark seams, a shade each
        width = rng.uniform(0.15, 0.35) * h
        board = (ys // width).astype(np.int32)
        field = field * (1 + 0.12 * (rng.random(int(board.max()) + 1)[board] - 0.5))
        seam = np.abs(ys - (board + 0.5) * width) > width / 2 - rng.uniform(0.8, 2.0)
        field = np.where(seam, field * 0.35, field)
    contrast = rng.uniform(0.55, 0.85)
    return _tint(field, _shade(colour, contrast), _shade(colour, 1.0 / contrast**0.3))


def marble(rng: np.random.Generator, shape: tuple[int, int], colour: Colour) -> np.ndarray:
    """Pale stone with thin dark veins (turbulence through a sharpened sine)."""
    turb = fractal_noise(rng, shape, 3, 5)
    h, w = shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(0, np.pi)
    coord = xs * np.cos(angle) + ys * np.sin(angle)
    veins = np.abs(np.sin(coord * rng.uniform(0.004, 0.012) + turb * rng.uniform(6, 12)))
    veins = veins ** rng.uniform(0.15, 0.35)
    cloud = fractal_noise(rng, shape, 2, 3)
    field = 0.8 * veins + 0.2 * cloud
    return _tint(field, _shade(colour, 0.45), colour)


def cloth(rng: np.random.Generator, shape: tuple[int, int], colour: Colour) -> np.ndarray:
    """Woven cloth: crossing thread pattern with noise, so the weave shows under perspective."""
    h, w = shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(3.0, 7.0)
    warp_threads = 0.5 + 0.5 * np.sin(xs * 2 * np.pi / period)
    weft_threads = 0.5 + 0.5 * np.sin(ys * 2 * np.pi / period)
    checker = ((xs // period + ys // period) % 2).astype(np.float32)
    weave = checker * warp_threads + (1 - checker) * weft_threads
    field = 0.45 * weave + 0.35 * fractal_noise(rng, shape, 6, 3) + 0.2 * rng.random(shape)
    return _tint(field.astype(np.float32), _shade(colour, 0.6), _shade(colour, 1.15))


def felt(rng: np.random.Generator, shape: tuple[int, int], colour: Colour) -> np.ndarray:
    """Felt or baize: fine fuzz over soft blotches."""
    field = 0.6 * fractal_noise(rng, shape, 4, 3) + 0.4 * rng.random(shape).astype(np.float32)
    field = cv2.GaussianBlur(field, (0, 0), 0.8)
    return _tint(field, _shade(colour, 0.75), _shade(colour, 1.12))


def checks(rng: np.random.Generator, shape: tuple[int, int], colour: Colour) -> np.ndarray:
    """Gingham / tablecloth checks: two crossing bands of a colour over white, with a weave."""
    h, w = shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(18, 60)
    band_x = ((xs // period) % 2).astype(np.float32)
    band_y = ((ys // period) % 2).astype(np.float32)
    density = (band_x + band_y) / 2.0  # 0 white, 0.5 mixed, 1 full colour
    base = np.asarray(rng.uniform(225, 250, 3), np.float32)
    col = np.asarray(colour, np.float32)
    out = base + density[..., None] * (col - base)
    grain = (rng.random(shape).astype(np.float32) - 0.5) * 18
    out += grain[..., None]
    return np.clip(out, 0, 255).astype(np.uint8)


def plastic(rng: np.random.Generator, shape: tuple[int, int], colour: Colour) -> np.ndarray:
    """Moulded plastic: nearly flat with a fine stipple (the rack of many cheap sets)."""
    field = 0.7 + 0.3 * fractal_noise(rng, shape, 3, 2)
    stipple = (rng.random(shape).astype(np.float32) - 0.5) * 0.12
    field = np.clip(field + stipple, 0, 1)
    return _tint(field, _shade(colour, 0.7), _shade(colour, 1.05))


def painted(rng: np.random.Generator, shape: tuple[int, int], colour: Colour) -> np.ndarray:
    """Painted wood: flat paint with a faint grain showing through and a few worn spots."""
    grain = wood(rng, shape, (128, 128, 128)).astype(np.float32)[..., 0] / 255.0
    field = 0.85 + 0.15 * grain
    worn = fractal_noise(rng, shape, 8, 2) > rng.uniform(0.93, 0.99)
    out = np.asarray(colour, np.float32)[None, None, :] * field[..., None]
    out[worn] = out[worn] * 0.6 + 70
    return np.clip(out, 0, 255).astype(np.uint8)


TEXTURES = {
    "wood": wood,
    "marble": marble,
    "cloth": cloth,
    "felt": felt,
    "checks": checks,
    "plastic": plastic,
    "painted": painted,
}


def make_texture(
    kind: str, rng: np.random.Generator, shape: tuple[int, int], colour: Colour
) -> np.ndarray:
    """A texture by name (one of ``TEXTURES``)."""
    try:
        fn = TEXTURES[kind]
    except KeyError:
        raise ValueError(f"unknown texture {kind!r}; known: {', '.join(TEXTURES)}") from None
    return fn(rng, shape, colour)


TEXTURE_VARIANTS = 6  # cached patterns per (kind, colour); each image recolours and flips one


@lru_cache(maxsize=192)
def cached_texture(kind: str, colour: Colour, variant: int, shape: tuple[int, int]) -> np.ndarray:
    """One of ``TEXTURE_VARIANTS`` fixed textures of a kind and colour, made once per process.

    Its seed comes from the key alone, so every worker process makes the same texture and renders
    stay deterministic.
    """
    seed = zlib.crc32(repr((kind, tuple(colour), variant, shape)).encode())
    texture = make_texture(kind, np.random.default_rng(seed), shape, colour)
    texture.setflags(write=False)
    return texture


def varied_texture(
    rng: np.random.Generator, kind: str, colour: Colour, shape: tuple[int, int]
) -> np.ndarray:
    """A cached texture, flipped and recoloured (per-channel gain) for this image."""
    base = cached_texture(kind, colour, int(rng.integers(TEXTURE_VARIANTS)), shape)
    flip = int(rng.integers(4))
    view = base[:: 1 if flip & 1 else -1, :: 1 if flip & 2 else -1]
    gains = np.diag(rng.uniform(0.85, 1.15, 3)).astype(np.float32)
    return cv2.transform(np.ascontiguousarray(view), gains)
