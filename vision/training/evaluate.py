"""Measure a recogniser on labelled images: finding tiles, reading them, whole images right.

Figures (the model card quotes them):

- tile recall and precision: a prediction matches a labelled tile when their boxes overlap with
  IoU >= 0.5 (greedy, highest IoU first, one-to-one);
- identity accuracy: of the matched tiles, the share read as the right identity, with confusions by
  colour (R, Y, B, K, FJ on its own line) and by number;
- image-level exact match: every labelled tile found and read right, nothing extra;
- missed tiles split into those boxed loosely (a prediction overlaps them with IoU 0.3-0.5: found,
  but the box is off) and those no box comes near;
- on rendered sets, whose sidecars say how much of each tile's number the picture shows
  (``number_visible``, docs/synth.md), identity also of the matched tiles whose number is shown
  whole: what a reader can be asked to read (a finger may cover a labelled tile's number);
- per-image time (median and p95 of the recogniser's own timing).

Example::

    istaka eval datasets/real_val --png runs/eval/real_val.png --sheet runs/eval/failures.png
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from okey.tiles import COLOURS, FALSE_JOKER_INDEX, Tile
from vision.training.crops import label_path_for, list_images, read_yolo_boxes
from vision.types import Box, Recognition, iou

IOU_MATCH = 0.5
IOU_LOOSE = 0.3  # a missed tile this close to a prediction was found with a box that is off
NUMBER_WHOLE = 0.95  # a rendered tile's number counts as shown whole from this share of its ink box
COLOUR_LABELS = (*COLOURS, "FJ")
NUMBER_LABELS = (*(str(n) for n in range(1, 14)), "FJ")


@dataclass(frozen=True)
class Sample:
    """One labelled image: its path and the (class, pixel box) of each tile."""

    image: Path
    truth: list[tuple[int, Box]]
    # rendered sets: per labelled tile, the share of its number the picture shows (sidecar)
    number_shown: list[float] | None = None


@dataclass
class EvalReport:
    """The figures of one evaluation run."""

    images: int = 0
    truth_tiles: int = 0
    predicted_tiles: int = 0
    matched: int = 0
    correct: int = 0
    exact_images: int = 0
    shown_matched: int = 0  # matched tiles whose number is shown whole (rendered sets)
    shown_correct: int = 0
    hidden_matched: int = 0  # matched tiles whose number the picture does not show whole
    missed_loose: int = 0  # missed tiles a prediction overlaps with IoU in [IOU_LOOSE, IOU_MATCH)
    times_ms: list[float] = field(default_factory=list)
    confusion: np.ndarray = field(default_factory=lambda: np.zeros((53, 53), dtype=int))
    failures: list[dict] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.matched / self.truth_tiles if self.truth_tiles else 1.0

    @property
    def precision(self) -> float:
        return self.matched / self.predicted_tiles if self.predicted_tiles else 1.0

    @property
    def identity_accuracy(self) -> float:
        return self.correct / self.matched if self.matched else 0.0

    @property
    def shown_identity(self) -> float | None:
        """Identity of matched tiles whose number is shown whole; None without sidecars."""
        return self.shown_correct / self.shown_matched if self.shown_matched else None

    @property
    def exact_match(self) -> float:
        return self.exact_images / self.images if self.images else 0.0

    def colour_confusion(self) -> np.ndarray:
        """5 x 5 counts, rows = truth, columns = read: R, Y, B, K, FJ."""
        groups = np.array([Tile(i).colour_index for i in range(53)])
        return _grouped(self.confusion, groups, 5)

    def number_confusion(self) -> np.ndarray:
        """14 x 14 counts, rows = truth, columns = read: 1..13, FJ."""
        groups = np.array([13 if i == FALSE_JOKER_INDEX else i % 13 for i in range(53)])
        return _grouped(self.confusion, groups, 14)

    def summary(self) -> dict:
        """The headline figures as a JSON-ready dict."""
        times = sorted(self.times_ms)
        return {
            "images": self.images,
            "tiles": self.truth_tiles,
            "recall": round(self.recall, 4),
            "precision": round(self.precision, 4),
            "identity_accuracy": round(self.identity_accuracy, 4),
            "exact_match": round(self.exact_match, 4),
            "exact_images": self.exact_images,
            "identity_number_shown": (
                None if self.shown_identity is None else round(self.shown_identity, 4)
            ),
            "missed_loose": self.missed_loose,
            "median_ms": round(statistics.median(times), 1) if times else None,
            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1) if times else None,
        }


def _grouped(confusion: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n, n), dtype=int)
    np.add.at(out, (groups[:, None].repeat(53, 1), groups[None, :].repeat(53, 0)), confusion)
    return out


def match(truth: Sequence[Box], predicted: Sequence[Box], threshold: float = IOU_MATCH):
    """Greedy one-to-one matching by IoU: list of (truth index, predicted index) pairs."""
    pairs = [
        (iou(t, p), i, j)
        for i, t in enumerate(truth)
        for j, p in enumerate(predicted)
        if iou(t, p) >= threshold
    ]
    pairs.sort(reverse=True)
    used_t: set[int] = set()
    used_p: set[int] = set()
    result = []
    for _, i, j in pairs:
        if i not in used_t and j not in used_p:
            used_t.add(i)
            used_p.add(j)
            result.append((i, j))
    return sorted(result)


def score_image(report: EvalReport, sample: Sample, recognition: Recognition) -> None:
    """Add one image's outcome to ``report``."""
    truth_boxes = [box for _, box in sample.truth]
    pred_boxes = [t.box for t in recognition.tiles]
    pairs = match(truth_boxes, pred_boxes)
    wrong = []
    for i, j in pairs:
        t, p = sample.truth[i][0], recognition.tiles[j].tile.index
        report.confusion[t, p] += 1
        if t == p:
            report.correct += 1
        else:
            wrong.append(f"{Tile(t)}->{Tile(p)}")
        if sample.number_shown is not None:
            if sample.number_shown[i] >= NUMBER_WHOLE:
                report.shown_matched += 1
                report.shown_correct += t == p
            else:
                report.hidden_matched += 1
    report.images += 1
    report.truth_tiles += len(truth_boxes)
    report.predicted_tiles += len(pred_boxes)
    report.matched += len(pairs)
    missed = len(truth_boxes) - len(pairs)
    extra = len(pred_boxes) - len(pairs)
    matched_t, matched_p = {i for i, _ in pairs}, {j for _, j in pairs}
    missed_boxes = [truth_boxes[i] for i in range(len(truth_boxes)) if i not in matched_t]
    report.missed_loose += sum(
        max((iou(t, p) for p in pred_boxes), default=0.0) >= IOU_LOOSE for t in missed_boxes
    )
    if not wrong and not missed and not extra:
        report.exact_images += 1
    else:
        report.failures.append(
            {
                "image": sample.image.name,
                "misread": wrong,
                "missed": missed,
                "extra": extra,
                # where, for write_failure_sheet: pixel boxes (x1, y1, x2, y2)
                "missed_boxes": [_rounded(b) for b in missed_boxes],
                "extra_boxes": [
                    _rounded(pred_boxes[j]) for j in range(len(pred_boxes)) if j not in matched_p
                ],
                "misread_boxes": [
                    _rounded(pred_boxes[j])
                    for i, j in pairs
                    if sample.truth[i][0] != recognition.tiles[j].tile.index
                ],
            }
        )
    if "total" in recognition.timings_ms:
        report.times_ms.append(recognition.timings_ms["total"])


def _rounded(box: Box) -> list[int]:
    return [round(float(v)) for v in box]


def load_samples(data: Path) -> list[Sample]:
    """Labelled images of a folder or a data YAML (its ``val`` split).

    A folder may hold ``images/`` and ``labels/`` (optionally with a ``val`` level), or images
    with their ``.txt`` labels side by side.
    """
    import cv2

    data = Path(data)
    if not data.exists():
        raise FileNotFoundError(f"no evaluation data at {data}")
    images = _image_files(data)
    if not images:
        raise ValueError(f"no images found in {data}")
    samples = []
    for image in images:
        label = _label_for(image)
        if label is None:
            raise ValueError(f"no YOLO label for {image} (looked in labels/ and beside it)")
        h, w = cv2.imread(str(image)).shape[:2]
        truth = read_yolo_boxes(label, w, h)
        samples.append(Sample(image, truth, _number_shown(image, len(truth))))
    return samples


def _number_shown(image: Path, n_labels: int) -> list[float] | None:
    """Per labelled tile, the sidecar's ``number_visible`` of a rendered image
    (``images/x.jpg`` -> ``sidecars/x.json``); None where there is none to read."""
    sidecar = image.parent.parent / "sidecars" / f"{image.stem}.json"
    if not sidecar.is_file():
        return None
    tiles = [t for t in json.loads(sidecar.read_text())["tiles"] if t["labelled"]]
    if len(tiles) != n_labels or any("number_visible" not in t for t in tiles):
        return None  # not this label file's sidecar, or rendered before the key existed
    return [float(t["number_visible"]) for t in tiles]


def _image_files(data: Path) -> list[Path]:
    if data.suffix in (".yaml", ".yml"):
        import yaml

        spec = yaml.safe_load(data.read_text())
        root = Path(spec.get("path") or ".")
        root = root if root.is_absolute() else data.parent / root
        vals = spec["val"] if isinstance(spec["val"], list) else [spec["val"]]
        return [p for v in vals for p in _image_files(root / v)]
    for candidate in (data / "images" / "val", data / "images", data):
        if candidate.is_dir():
            found = list_images(candidate)
            if found:
                return found
    return []


def _label_for(image: Path) -> Path | None:
    beside = image.with_suffix(".txt")
    if beside.exists():
        return beside
    if "images" in image.parts:
        path = label_path_for(image)
        if path.exists():
            return path
    return None


def evaluate(
    recognize: Callable[[np.ndarray], Recognition],
    samples: Iterable[Sample],
    progress: bool = False,
) -> EvalReport:
    """Run ``recognize`` over ``samples`` and collect the figures."""
    import cv2

    report = EvalReport()
    samples = list(samples)
    for k, sample in enumerate(samples, start=1):
        recognition = recognize(cv2.imread(str(sample.image)))
        score_image(report, sample, recognition)
        if progress and k % 20 == 0:
            print(f"  {k}/{len(samples)} images", flush=True)
    return report


def format_report(report: EvalReport) -> str:
    """The printed evaluation: headline figures, colour and number confusions, failures."""
    s = report.summary()
    lines = [
        f"images {s['images']}, labelled tiles {s['tiles']}, predicted {report.predicted_tiles}",
        f"tile recall (IoU>=0.5)      {s['recall']:.2%}",
        f"tile precision (IoU>=0.5)   {s['precision']:.2%}",
        *_missed_line(report),
        f"identity accuracy (matched) {s['identity_accuracy']:.2%}"
        f"  ({report.correct}/{report.matched})",
        f"image-level exact match     {s['exact_match']:.2%}"
        f"  ({report.exact_images}/{report.images})",
        *_shown_line(report),
        f"time per image              median {s['median_ms']} ms, p95 {s['p95_ms']} ms",
        "",
        "confusion by colour (rows truth, columns read):",
        _table(report.colour_confusion(), COLOUR_LABELS),
        "",
        "confusion by number (rows truth, columns read):",
        _table(report.number_confusion(), NUMBER_LABELS),
    ]
    if report.failures:
        lines += ["", f"images not read exactly ({len(report.failures)}):"]
        for f in report.failures[:15]:
            lines.append(
                f"  {f['image']}: misread {', '.join(f['misread']) or '-'}; "
                f"missed {f['missed']}, extra {f['extra']}"
            )
    return "\n".join(lines)


def _missed_line(report: EvalReport) -> list[str]:
    """How the missed tiles were missed: boxed loosely, or no box near them."""
    missed = report.truth_tiles - report.matched
    if not missed:
        return []
    return [
        f"missed tiles                {missed}: {report.missed_loose} boxed loosely (IoU"
        f" {IOU_LOOSE}-{IOU_MATCH} with a prediction), {missed - report.missed_loose} without a box"
    ]


def _shown_line(report: EvalReport) -> list[str]:
    """The identity of tiles whose number is shown whole, for rendered sets only."""
    if report.shown_identity is None:
        return []
    return [
        f"identity, number shown      {report.shown_identity:.2%}"
        f"  ({report.shown_correct}/{report.shown_matched}; {report.hidden_matched}"
        f" matched tiles show under {NUMBER_WHOLE:.0%} of their number)"
    ]


def _table(matrix: np.ndarray, labels: Sequence[str]) -> str:
    width = max(4, len(str(matrix.max())) + 1)
    head = "     " + "".join(f"{lab:>{width}}" for lab in labels)
    rows = [
        f"{lab:>4} " + "".join(f"{v:>{width}}" for v in row)
        for lab, row in zip(labels, matrix, strict=True)
    ]
    return "\n".join([head, *rows])


def write_confusion_png(report: EvalReport, path: Path) -> Path:
    """Save the 53 x 53 identity confusion matrix (log colour scale) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [str(Tile(i)) for i in range(53)]
    fig, ax = plt.subplots(figsize=(12, 11), dpi=90)
    ax.imshow(np.log1p(report.confusion), cmap="Blues")
    ax.set_xticks(range(53), names, rotation=90, fontsize=6)
    ax.set_yticks(range(53), names, fontsize=6)
    ax.set_xlabel("read as")
    ax.set_ylabel("truth")
    s = report.summary()
    ax.set_title(
        f"identity accuracy {s['identity_accuracy']:.2%} over {report.matched} matched tiles, "
        f"exact images {s['exact_match']:.2%}"
    )
    for i, j in zip(*np.nonzero(report.confusion), strict=True):
        if i != j:
            ax.text(j, i, str(report.confusion[i, j]), ha="center", va="center", fontsize=5)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


SHEET_COLOURS = {  # BGR
    "missed_boxes": (0, 0, 255),  # red: a labelled tile not found
    "extra_boxes": (0, 140, 255),  # orange: a box on no labelled tile
    "misread_boxes": (0, 230, 255),  # yellow: found, read wrong (the reading is written)
}


def write_failure_sheet(
    report: EvalReport, samples: Sequence[Sample], path: Path, cell: int = 360, limit: int = 24
) -> Path:
    """A contact sheet of the images not read exactly: missed tiles in red, extra boxes in
    orange, misread tiles in yellow with their reading (up to ``limit`` images)."""
    import cv2

    by_name = {s.image.name: s.image for s in samples}
    cells = []
    for failure in report.failures[:limit]:
        image = cv2.imread(str(by_name[failure["image"]]))
        scale = cell / max(image.shape[:2])
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        canvas = np.full((cell + 22, cell, 3), 255, np.uint8)
        canvas[22 : 22 + image.shape[0], : image.shape[1]] = image
        for key, colour in SHEET_COLOURS.items():
            for k, box in enumerate(failure[key]):
                x1, y1, x2, y2 = (round(v * scale) for v in box)
                cv2.rectangle(canvas, (x1, y1 + 22), (x2, y2 + 22), colour, 2)
                if key == "misread_boxes":
                    origin = (x1, max(y1 + 18, 34))
                    _sheet_text(canvas, failure["misread"][k], origin, colour, outline=True)
        _sheet_text(canvas, failure["image"][:44], (4, 16), (0, 0, 0))
        cells.append(canvas)
    if not cells:
        cells.append(np.full((cell + 22, cell, 3), 255, np.uint8))
    columns = min(4, len(cells))
    cells += [np.full_like(cells[0], 255)] * (-len(cells) % columns)
    rows = [np.hstack(cells[i : i + columns]) for i in range(0, len(cells), columns)]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.vstack(rows))
    return path


def _sheet_text(
    canvas: np.ndarray, text: str, origin: tuple[int, int], colour: tuple, outline: bool = False
) -> None:
    """Small text on a sheet cell; ``outline`` draws it over a black edge, readable on photos."""
    import cv2

    for ink, thickness in (((0, 0, 0), 3), (colour, 1)) if outline else ((colour, 1),):
        cv2.putText(
            canvas, text, origin, cv2.FONT_HERSHEY_SIMPLEX, 0.45, ink, thickness, cv2.LINE_AA
        )


def report_json(report: EvalReport) -> str:
    """Summary, confusions and failures as JSON."""
    data = {
        **report.summary(),
        "colour_confusion": report.colour_confusion().tolist(),
        "number_confusion": report.number_confusion().tolist(),
        "failures": report.failures,
    }
    return json.dumps(data, indent=2)


__all__ = [
    "EvalReport",
    "Sample",
    "evaluate",
    "format_report",
    "iou",
    "load_samples",
    "match",
    "report_json",
    "score_image",
    "write_confusion_png",
    "write_failure_sheet",
]
