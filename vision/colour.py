"""White balance from the tiles themselves: their faces are one known colour.

Every Okey tile's face is the same off-white, so the found tiles are a colour chart in every photo.
``face_colour`` estimates the faces' colour from the found boxes (the brighter half of each box's
middle, where the face shows around the ink), ``cast_gains`` turns it into per-channel gains
that bring it to a reference face colour (the median face of the real training photos, stored in
the recogniser's manifest), and ``balance`` applies them.  Only the colour is corrected, never
the exposure: the gains' geometric mean is 1.

A colour cast moves the inks with the faces: under a magenta cast (green channel low) blue ink
drifts toward purple and yellow toward red, and the detector, which learnt tiles under the warm to
cool light of real rooms, loses many faces.  With manifest ``white_balance`` the recogniser
(``vision.recognizer.Recognizer``) finds the tiles again in the photo balanced to the faces when
the cast is strong (``rebalance_above``), and with ``read_balanced`` reads them from it too.  The
shipped manifest leaves it off: measured in the model card, it cost readings of real photos.
"""

from __future__ import annotations

import numpy as np

# luminance weights of B, G, R (ITU-R BT.601)
LUMA = np.float32([0.114, 0.587, 0.299])
MIDDLE = 0.2  # each box's middle: a fifth of its width and height in from every side
MIN_TILES = 3  # fewer found tiles than this say too little about the light


def face_colour(image_bgr: np.ndarray, boxes: np.ndarray) -> np.ndarray | None:
    """The median BGR colour of the tiles' faces in ``boxes`` (xyxy, pixels), or None with
    fewer than ``MIN_TILES`` usable boxes.

    Each box's middle holds face and ink; the face is the brighter half of it (the ink of a
    number covers well under half a face).  The per-box medians are pooled by a median, so a
    few boxes on something else (a hand, the table) do not move it."""
    h, w = image_bgr.shape[:2]
    faces = []
    for x1, y1, x2, y2 in np.asarray(boxes, np.float64).reshape(-1, 4):
        dx, dy = (x2 - x1) * MIDDLE, (y2 - y1) * MIDDLE
        c1, c2 = int(max(0, np.floor(x1 + dx))), int(min(w, np.ceil(x2 - dx)))
        r1, r2 = int(max(0, np.floor(y1 + dy))), int(min(h, np.ceil(y2 - dy)))
        if c2 - c1 < 2 or r2 - r1 < 2:
            continue
        pixels = image_bgr[r1:r2, c1:c2].reshape(-1, 3).astype(np.float32)
        luma = pixels @ LUMA
        faces.append(np.median(pixels[luma >= np.median(luma)], axis=0))
    if len(faces) < MIN_TILES:
        return None
    return np.median(np.stack(faces), axis=0)


def cast_gains(face: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per-channel (B, G, R) gains taking ``face`` to ``reference``'s colour, their geometric
    mean 1 (the colour changes, the exposure does not).

    >>> [round(float(g), 3) for g in cast_gains(np.float32([100, 200, 200]), np.float32([200] * 3))]
    [1.587, 0.794, 0.794]
    """
    ratio = np.asarray(reference, np.float64) / np.maximum(np.asarray(face, np.float64), 1.0)
    return (ratio / np.exp(np.log(ratio).mean())).astype(np.float32)


def cast_strength(gains: np.ndarray) -> float:
    """How far the gains move a colour: the largest channel's |log gain|."""
    return float(np.abs(np.log(np.asarray(gains, np.float64))).max())


def balance(image_bgr: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """The image with each channel multiplied by its gain, rounded and clipped to uint8."""
    out = image_bgr.astype(np.float32) * np.asarray(gains, np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)
