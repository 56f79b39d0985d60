"""Contact sheet: a grid of rendered images with their labelled boxes and class names drawn.

>>> sheet = contact_sheet(seed=0, count=2, columns=2, cell=(160, 120))
>>> sheet.shape
(120, 320, 3)
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.training.synth.dataset import render_sample

_COLOURS = {
    "R": (40, 40, 230),
    "Y": (0, 190, 250),
    "B": (230, 120, 20),
    "K": (40, 40, 40),
    "F": (200, 0, 200),
}


def draw_truth(image: np.ndarray, truth: dict, scale: float = 1.0) -> np.ndarray:
    """Draw the labelled boxes (solid) and unlabelled hidden tiles (thin grey) on a copy."""
    out = image.copy()
    for t in truth["tiles"]:
        if t["box"] is None:
            continue
        x0, y0, x1, y1 = (int(round(v * scale)) for v in t["box"])
        if not t["labelled"]:
            cv2.rectangle(out, (x0, y0), (x1, y1), (160, 160, 160), 1)
            continue
        colour = _COLOURS[t["tile"][0]]
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, 1)
        label = t["tile"] + ("^" if t["upside_down"] else "") + ("" if t["on_rack"] else "*")
        cv2.putText(
            out,
            label,
            (x0, max(8, y0 - 2)),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.33,
            (255, 255, 255),
            2,
            cv2.LINE_AA,
        )
        cv2.putText(
            out, label, (x0, max(8, y0 - 2)), cv2.FONT_HERSHEY_SIMPLEX, 0.33, colour, 1, cv2.LINE_AA
        )
    return out


def contact_sheet(
    seed: int = 0,
    count: int = 12,
    columns: int = 4,
    cell: tuple[int, int] = (400, 300),
    pool_name: str = "train",
    size: tuple[int, int] = (640, 480),
    scene: str = "rack",
) -> np.ndarray:
    """Render ``count`` images of seed ``seed`` and tile them with their boxes drawn."""
    cw, ch = cell
    rows = (count + columns - 1) // columns
    sheet = np.full((rows * ch, columns * cw, 3), 255, np.uint8)
    for i in range(count):
        image, truth = render_sample(seed, i, pool_name, size, scene_kind=scene)
        scale = cw / image.shape[1]
        small = cv2.resize(
            image, (cw, int(round(image.shape[0] * scale))), interpolation=cv2.INTER_AREA
        )
        small = draw_truth(small, truth, scale)[:ch]
        r, c = divmod(i, columns)
        sheet[r * ch : r * ch + small.shape[0], c * cw : (c + 1) * cw] = small
    return sheet
