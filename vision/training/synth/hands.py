"""A player's hand over the rack: a pointing finger (tapered, creased, with a nail), the next
fingers curled beside it, and the back of the hand running out of the frame, with a soft shadow.

Drawn in image space over everything else; returns the coverage so the caller can mark hidden
tile pixels.

>>> import numpy as np
>>> canvas = np.full((120, 160, 3), 200, np.uint8)
>>> cover = draw_hand(canvas, np.array([80.0, 40.0]), 90.0, 6.0, (120, 150, 210), 1)
>>> bool(cover[40:60, 75:85].mean() > 0.9), bool(cover[5, 5] == 0)
(True, True)
"""

from __future__ import annotations

import cv2
import numpy as np

Colour = tuple[int, int, int]


def _capsule(
    along: np.ndarray, across: np.ndarray, start: float, length: float, radius: float
) -> tuple[np.ndarray, np.ndarray]:
    """Coverage of a finger from ``start`` to ``start + length`` along the axis, tapering at the
    tip, and the normalised distance from its axis (for the cylinder shading)."""
    a = along - start
    a_c = np.clip(a, 0, length)
    rad = radius * (0.8 + 0.2 * np.clip(a_c / (2 * radius), 0, 1))
    dist = np.sqrt((a - a_c) ** 2 + across**2)
    cover = np.clip(rad - dist + 0.5, 0, 1)
    return cover, np.clip(np.abs(across) / rad, 0, 1)


def draw_hand(
    canvas: np.ndarray,
    tip: np.ndarray,
    angle_deg: float,
    radius: float,
    skin: Colour,
    curled: int = 1,
    shadow: float = 0.4,
) -> np.ndarray:
    """Draw a hand whose index finger ends at ``tip`` (pixels), the hand lying towards
    ``angle_deg`` (image degrees, 90 = down).  Returns the coverage mask (full frame, 0..1)."""
    h, w = canvas.shape[:2]
    ang = np.deg2rad(angle_deg)
    d = np.array([np.cos(ang), np.sin(ang)])
    perp = np.array([-d[1], d[0]])
    finger_len = radius * 7.5
    palm_c = tip + d * (finger_len + radius * 3.5)
    # region of interest: the finger and palm, clipped to the frame
    reach = max(finger_len + radius * 9, float(h + w))
    pts = np.array([tip, tip + d * reach])
    corners = np.vstack([pts + perp * radius * 6, pts - perp * radius * 6, pts])
    x0 = int(max(0, np.floor(corners[:, 0].min() - radius * 2)))
    y0 = int(max(0, np.floor(corners[:, 1].min() - radius * 2)))
    x1 = int(min(w, np.ceil(corners[:, 0].max() + radius * 3)))
    y1 = int(min(h, np.ceil(corners[:, 1].max() + radius * 3)))
    cover_full = np.zeros((h, w), np.float32)
    if x1 <= x0 or y1 <= y0:
        return cover_full
    # big hands are computed on a half-resolution grid: skin has no fine detail
    step = 2 if (x1 - x0) * (y1 - y0) > 20000 else 1
    off = (step - 1) / 2
    us, vs = np.meshgrid(
        np.arange(x0, x1, step, dtype=np.float32) + off,
        np.arange(y0, y1, step, dtype=np.float32) + off,
    )
    rel_u, rel_v = us - tip[0], vs - tip[1]
    along = rel_u * d[0] + rel_v * d[1]
    across = rel_u * perp[0] + rel_v * perp[1]

    skin_c = np.asarray(skin, np.float32)
    col = np.zeros(us.shape + (3,), np.float32)
    cover = np.zeros(us.shape, np.float32)

    def lay(layer_cover: np.ndarray, shade: np.ndarray) -> None:
        nonlocal col, cover
        layer = skin_c[None, None, :] * shade[..., None]
        col += layer_cover[..., None] * (layer - col)
        cover = np.maximum(cover, layer_cover)

    # the back of the hand: a big soft ellipse, slightly darker than the finger
    q = np.sqrt(
        ((along - (palm_c - tip) @ d) / (radius * 5.0)) ** 2 + (across / (radius * 3.6)) ** 2
    )
    palm = np.clip((1 - q) * radius * 2 + 0.5, 0, 1)
    lay(palm, 0.72 + 0.2 * np.clip(1 - q**2, 0, 1))
    # the wrist and forearm carry the hand out of the frame
    arm, rel = _capsule(along, across, float((palm_c - tip) @ d), reach * 4, radius * 3.2)
    lay(arm, 0.62 + 0.28 * np.sqrt(1 - rel**2))
    # curled fingers beside the pointing one: shorter capsules, knuckles up
    for k in range(curled):
        side = 1 if k % 2 == 0 else -1
        off = across - side * radius * 2.0 * (1 + k // 2)
        c, rel = _capsule(along, off, finger_len * 0.55, finger_len * 0.6, radius * 1.05)
        lay(c, 0.58 + 0.42 * np.sqrt(1 - rel**2))
    # the pointing finger: cylinder shading, two creases, a nail near the tip, a redder tip
    c, rel = _capsule(along, across, 0.0, finger_len, radius)
    shade = 0.6 + 0.45 * np.sqrt(1 - rel**2)
    for k in (2.6, 4.9):
        shade = shade * (1 - 0.22 * np.exp(-(((along - k * radius) / (0.14 * radius)) ** 2)))
    lay(c, shade)
    tipness = np.clip(1 - along / (3 * radius), 0, 1)[..., None] * c[..., None]
    col = col * (1 - 0.08 * tipness) + np.array([0, 0, 25], np.float32) * tipness
    nail = ((along - radius * 0.95) / (radius * 0.8)) ** 2 + (across / (radius * 0.6)) ** 2
    nail_c = np.clip((1 - nail) * radius * 0.8, 0, 1) * c
    col += nail_c[..., None] * (np.array([205, 210, 240], np.float32) * 0.9 - col) * 0.45

    if step > 1:
        size = (x1 - x0, y1 - y0)
        cover = cv2.resize(cover, size, interpolation=cv2.INTER_LINEAR)
        col = cv2.resize(col, size, interpolation=cv2.INTER_LINEAR)
    # shadow on the scene: the cover, offset and blurred (on a quarter-size copy: it is soft)
    if shadow > 0:
        m = np.zeros((h, w), np.float32)
        m[y0:y1, x0:x1] = cover
        small = cv2.resize(m, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
        shift = np.float32([[1, 0, radius * 0.9 / 4], [0, 1, radius * 0.7 / 4]])
        small = cv2.warpAffine(small, shift, small.shape[::-1])
        small = cv2.GaussianBlur(small, (0, 0), max(0.5, radius * 0.2))
        m = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
        canvas[:] = (canvas * (1 - shadow * m[..., None])).astype(np.uint8)
    region = canvas[y0:y1, x0:x1].astype(np.float32)
    region += cover[..., None] * (col - region)
    canvas[y0:y1, x0:x1] = np.clip(region, 0, 255).astype(np.uint8)
    cover_full[y0:y1, x0:x1] = cover
    return cover_full
