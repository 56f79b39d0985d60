"""Synthetic Okey rack photos with ground truth (issue 4).

Entry points: ``render_sample`` (one labelled image), ``render_dataset`` (a YOLO folder),
``render_video`` (frames of one rack), ``contact_sheet`` (preview), ``layout_truth`` (what a
perfect rack layout gives).  The command is
``istaka synth``; the sidecar schema is in ``docs/synth.md``.
"""

from vision.synth.dataset import CLASS_NAMES, render_dataset, render_sample, yolo_lines
from vision.synth.preview import contact_sheet, draw_truth
from vision.synth.truth import LayoutTruth, layout_truth
from vision.synth.video import read_y4m, render_video, write_video

__all__ = [
    "CLASS_NAMES",
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
