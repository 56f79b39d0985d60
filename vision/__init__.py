"""vision: pixels to hand.  Synthetic renderer, dataset tools, training, the recogniser, rule-aware
decoding, rack layout, video smoothing and drawing.  Imports of torch/ultralytics stay inside the
modules that need them."""
