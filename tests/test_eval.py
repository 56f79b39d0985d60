"""Evaluation figures: matching, identity accuracy, confusions, exact images; the card's figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from okey import Tile
from vision.training.evaluate import (
    EvalReport,
    Sample,
    evaluate,
    format_report,
    iou,
    load_samples,
    match,
    score_image,
    write_confusion_png,
)
from vision.types import Recognition, TileReading

REPO = Path(__file__).resolve().parent.parent


def _reading(tile: str, box: tuple[float, float, float, float]) -> TileReading:
    t = Tile.parse(tile)
    probs = np.zeros(53, np.float32)
    probs[t.index] = 1.0
    return TileReading(box=box, tile=t, confidence=1.0, probs=probs)


def _recognition(*readings: TileReading) -> Recognition:
    return Recognition(tiles=list(readings), image_size=(100, 100), timings_ms={"total": 5.0})


def test_iou() -> None:
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(1 / 3)


def test_match_is_one_to_one_and_prefers_the_best_overlap() -> None:
    truth = [(0, 0, 10, 10), (10, 0, 20, 10)]
    predicted = [(1, 0, 11, 10), (0, 0, 10, 10), (50, 50, 60, 60)]
    # Prediction 0 overlaps truth 0 well (IoU 0.82) but prediction 1 is exact: it wins, and
    # prediction 0 may not take truth 1 (IoU 0.05).
    assert match(truth, predicted) == [(0, 1)]
    assert match([(0, 0, 10, 10)], [(6, 0, 16, 10)]) == []  # IoU 0.25 < 0.5


def test_scores_recall_precision_identity_and_exact() -> None:
    report = EvalReport()
    truth = [(Tile.parse("R5").index, (0, 0, 10, 10)), (52, (20, 0, 30, 10))]
    sample = Sample(Path("a.jpg"), truth)
    # Image 1: both found, both right.
    score_image(
        report,
        sample,
        _recognition(_reading("R5", (0, 0, 10, 10)), _reading("FJ", (20, 0, 30, 10))),
    )
    # Image 2: FJ read as K5, one extra box, R5 right.
    score_image(
        report,
        Sample(Path("b.jpg"), truth),
        _recognition(
            _reading("R5", (0, 0, 10, 10)),
            _reading("K5", (20, 0, 30, 10)),
            _reading("B1", (60, 60, 70, 70)),
        ),
    )
    # Image 3: FJ missed.
    score_image(report, Sample(Path("c.jpg"), truth), _recognition(_reading("R5", (0, 0, 10, 10))))
    assert (report.truth_tiles, report.predicted_tiles, report.matched) == (6, 6, 5)
    assert report.recall == pytest.approx(5 / 6)
    assert report.precision == pytest.approx(5 / 6)
    assert report.identity_accuracy == pytest.approx(4 / 5)
    assert report.exact_match == pytest.approx(1 / 3)
    colour = report.colour_confusion()
    assert colour[4, 3] == 1 and colour[0, 0] == 3 and colour.sum() == 5
    number = report.number_confusion()
    assert number[13, 4] == 1 and number[4, 4] == 3
    assert report.failures[0] == {
        "image": "b.jpg",
        "misread": ["FJ->K5"],
        "missed": 0,
        "extra": 1,
        "missed_boxes": [],
        "extra_boxes": [[60, 60, 70, 70]],
        "misread_boxes": [[20, 0, 30, 10]],
    }
    assert report.failures[1]["missed_boxes"] == [[20, 0, 30, 10]]
    text = format_report(report)
    assert "identity accuracy (matched) 80.00%" in text
    assert "image-level exact match     33.33%  (1/3)" in text


def test_missed_tiles_split_into_loosely_boxed_and_unboxed() -> None:
    """A missed tile a prediction overlaps with IoU 0.3-0.5 was found with a box that is off."""
    report = EvalReport()
    truth = [(0, (0, 0, 10, 10)), (1, (20, 0, 30, 10)), (2, (40, 0, 50, 10))]
    # truth 0 exact; truth 1 overlapped by a box shifted 4 px (IoU 6/14 = 0.43); truth 2 alone
    readings = _recognition(_reading("R1", (0, 0, 10, 10)), _reading("R2", (24, 0, 34, 10)))
    score_image(report, Sample(Path("a.jpg"), truth), readings)
    assert (report.matched, report.missed_loose) == (1, 1)
    assert report.summary()["missed_loose"] == 1
    text = format_report(report)
    assert "missed tiles                2: 1 boxed loosely (IoU 0.3-0.5" in text
    assert "1 without a box" in text
    whole = EvalReport()
    score_image(whole, Sample(Path("b.jpg"), truth[:1]), readings)
    assert "missed tiles" not in format_report(whole)


def test_failure_sheet_marks_missed_extra_and_misread(tmp_path: Path) -> None:
    """``--sheet``: the images not read exactly, missed tiles red, extra boxes orange."""
    from vision.training.evaluate import SHEET_COLOURS, write_failure_sheet

    image_path = tmp_path / "a.png"
    cv2.imwrite(str(image_path), np.full((200, 200, 3), 128, np.uint8))
    truth = [(0, (20, 20, 60, 80)), (1, (100, 20, 140, 80))]
    sample = Sample(image_path, truth)
    report = EvalReport()
    score_image(
        report,
        sample,
        _recognition(_reading("R1", (20, 20, 60, 80)), _reading("K9", (150, 120, 190, 180))),
    )
    sheet = cv2.imread(str(write_failure_sheet(report, [sample], tmp_path / "s.png", cell=200)))
    assert sheet.shape == (222, 200, 3)  # one image, a 22 px title band
    red, orange = SHEET_COLOURS["missed_boxes"], SHEET_COLOURS["extra_boxes"]
    assert tuple(sheet[22 + 50, 100]) == red  # left edge of the missed R2 (x 100, y 20-80)
    assert tuple(sheet[22 + 150, 150]) == orange  # left edge of the extra box
    assert tuple(sheet[22 + 50, 20]) == (128, 128, 128)  # the tile read right: not drawn


def test_identity_of_tiles_whose_number_is_shown() -> None:
    """Rendered sets: identity also over the matched tiles whose number the picture shows."""
    report = EvalReport()
    truth = [(Tile.parse("R5").index, (0, 0, 10, 10)), (Tile.parse("B7").index, (20, 0, 30, 10))]
    readings = _recognition(_reading("R5", (0, 0, 10, 10)), _reading("B1", (20, 0, 30, 10)))
    score_image(report, Sample(Path("a.jpg"), truth, [1.0, 0.3]), readings)  # B7 under a finger
    assert report.identity_accuracy == pytest.approx(1 / 2)
    assert (report.shown_matched, report.shown_correct, report.hidden_matched) == (1, 1, 1)
    assert report.shown_identity == 1.0
    score_image(report, Sample(Path("b.jpg"), truth, [1.0, 1.0]), readings)  # B7 in full view
    assert report.shown_identity == pytest.approx(2 / 3)
    assert "identity, number shown      66.67%  (2/3; 1 matched tiles" in format_report(report)
    assert report.summary()["identity_number_shown"] == pytest.approx(0.6667)
    plain = EvalReport()  # real photos: no sidecars, no such line
    score_image(plain, Sample(Path("c.jpg"), truth), readings)
    assert plain.shown_identity is None and "number shown" not in format_report(plain)


def test_load_samples_reads_number_visibility_from_sidecars(tmp_path: Path) -> None:
    from istaka.cli import main

    assert main(["synth", "--n", "3", "--seed", "5", "--out", str(tmp_path), "--quiet"]) == 0
    samples = load_samples(tmp_path)
    assert len(samples) == 3
    for sample in samples:
        assert sample.number_shown is not None and len(sample.number_shown) == len(sample.truth)
        assert all(0.0 <= v <= 1.0 for v in sample.number_shown)
    # a sidecar that does not describe the label file is ignored, not trusted
    stem = samples[0].image.stem
    (tmp_path / "labels" / f"{stem}.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    assert load_samples(tmp_path)[0].number_shown is None


def test_confusion_png(tmp_path: Path) -> None:
    report = EvalReport()
    report.confusion[3, 3] = 5
    report.confusion[3, 4] = 1
    report.matched, report.correct = 6, 5
    path = write_confusion_png(report, tmp_path / "cm.png")
    assert cv2.imread(str(path)) is not None


def test_load_samples_layouts_and_errors(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "x.jpg"), np.zeros((50, 100, 3), np.uint8))
    (tmp_path / "labels" / "x.txt").write_text("52 0.5 0.5 0.2 0.4\n")
    (sample,) = load_samples(tmp_path)
    assert sample.truth == [(52, pytest.approx((40, 15, 60, 35)))]
    (tmp_path / "labels" / "x.txt").unlink()
    with pytest.raises(ValueError, match="no YOLO label for"):
        load_samples(tmp_path)
    with pytest.raises(FileNotFoundError, match="no evaluation data"):
        load_samples(tmp_path / "nowhere")


def test_evaluate_runs_a_recogniser_over_samples(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "x.png"), np.zeros((100, 100, 3), np.uint8))
    sample = Sample(tmp_path / "x.png", [(0, (0.0, 0.0, 10.0, 10.0))])
    report = evaluate(lambda image: _recognition(_reading("R1", (0, 0, 10, 10))), [sample])
    assert report.exact_match == 1.0 and report.times_ms == [5.0]


CARD = REPO / "models" / "MODEL_CARD.md"
REAL_VAL = REPO / "datasets" / "real_val"


def _card_figures() -> dict[str, float]:
    """The real-val row of the card's shipped-model table (marked ``<!-- eval:real_val -->``)."""
    row = next(line for line in CARD.read_text().splitlines() if "<!-- eval:real_val -->" in line)
    values = [float(v) for v in re.findall(r"(\d+\.\d+)%", row)]
    keys = ("recall", "precision", "identity_accuracy", "exact_match")
    return dict(zip(keys, (v / 100 for v in values[:4]), strict=True))


@pytest.mark.slow
def test_istaka_eval_reproduces_the_model_card(tmp_path: Path) -> None:
    from istaka.cli import main

    out, sheet = tmp_path / "eval.json", tmp_path / "failures.png"
    argv = ["eval", str(REAL_VAL), "--png", str(tmp_path / "cm.png"), "--json", str(out)]
    assert main([*argv, "--sheet", str(sheet)]) == 0
    got = json.loads(out.read_text())
    for key, value in _card_figures().items():
        assert got[key] == pytest.approx(value, abs=0.00051), key
    assert (tmp_path / "cm.png").exists()
    rows = -(-min(len(got["failures"]), 24) // 4)  # four 360 px cells a row, 22 px title bands
    assert cv2.imread(str(sheet)).shape == (rows * 382, 4 * 360, 3)
