"""Which way up a tile's crop stands: a small learned model (``models/tile_up.onnx``).

The tile classifier reads a tile alike whichever way up it is cut, so it cannot tell a rack that
stands upside down in the photo, or which way a tile lying on a table faces; read the wrong way up,
a rack's rows and tiles come out reversed.  This model, trained on renders whose truth knows each
tile's top (``vision.training.up``), gives the probabilities of the four quarter turns a crop was
given (``np.rot90``'s k: 0 upright, 2 upside down), from the numeral's and the mark's shapes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SIZE = 48  # pixels a side the model reads
DEFAULT_WEIGHTS = Path(__file__).resolve().parent.parent / "models" / "tile_up.onnx"


def prepare(crop: np.ndarray) -> np.ndarray:
    """A tile crop (any square size, BGR) shrunk to the model's input size."""
    import cv2

    if crop.shape[0] == SIZE and crop.shape[1] == SIZE:
        return np.ascontiguousarray(crop)
    return cv2.resize(crop, (SIZE, SIZE), interpolation=cv2.INTER_AREA)


def to_input(crops: list[np.ndarray] | np.ndarray) -> np.ndarray:
    """BGR crops as the model's input: RGB, channels first, 0-1 floats."""
    batch = np.stack([prepare(c) for c in crops])
    return np.ascontiguousarray(batch[..., ::-1].transpose(0, 3, 1, 2), np.float32) / 255.0


class WayUp:
    """The way-up model, loaded once, run by ``backend`` (``vision.engines``: openvino or onnx;
    the model ships as ONNX only)."""

    def __init__(self, weights: Path = DEFAULT_WEIGHTS, backend: str = "onnx") -> None:
        from vision.engines import load_net

        if not Path(weights).is_file():
            raise FileNotFoundError(f"missing way-up model {weights}")
        backend = "openvino" if backend == "openvino" else "onnx"
        self.net = load_net(Path(weights), backend, batches=True)

    def turns(self, crops: list[np.ndarray]) -> np.ndarray:
        """``(n, 4)`` probabilities that each crop was turned by k quarter turns
        counter-clockwise from upright (``np.rot90(upright, k)``)."""
        if not len(crops):
            return np.zeros((0, 4), np.float32)
        logits = self.net(to_input(crops))
        logits = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)

    def upside_down(self, crops: list[np.ndarray]) -> float:
        """How much surer the crops are of standing upside down than upright: the summed log
        odds of a half turn against none (positive: upside down)."""
        p = self.turns(crops)
        if not len(p):
            return 0.0
        return float(np.log((p[:, 2] + 1e-6) / (p[:, 0] + 1e-6)).sum())
