"""vision: pixels to hand.  Synthetic renderer, dataset tools, training, the recogniser, rule-aware
decoding, rack layout, video smoothing and drawing.  Imports of torch/ultralytics stay inside the
modules that need them."""

from typing import Any


def __getattr__(name: str) -> Any:
    """``vision.Recognizer`` on first use only, so ``import vision`` stays light."""
    if name == "Recognizer":
        from vision.recognizer import Recognizer

        return Recognizer
    raise AttributeError(f"module 'vision' has no attribute {name!r}")
