"""Synthetic Okey rack photos with ground truth (issue 4).

Entry points: ``render_sample`` (one labelled image), ``render_dataset`` (a YOLO folder),
``render_video`` (frames of one rack), ``contact_sheet`` (preview), ``layout_truth`` (what a
perfect rack layout gives).  The command is
``istaka synth``; the sidecar schema is in ``docs/synth.md``.
"""

from vision.training.synth.dataset import render_dataset, render_sample, yolo_lines
from vision.training.synth.preview import contact_sheet, draw_truth
from vision.training.synth.truth import LayoutTruth, layout_truth
from vision.training.synth.video import read_y4m, render_video, write_video

__all__ = [
    "LayoutTruth",
    "contact_sheet",
    "draw_truth",
    "layout_truth",
    "read_y4m",
    "render_dataset",
    "render_sample",
    "render_video",
    "write_video",
    "yolo_lines",
]
