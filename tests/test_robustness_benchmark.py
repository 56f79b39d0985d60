"""benchmarks/robustness.py: the recogniser on real photos under camera and light changes."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vision.training.evaluate import Sample

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "robustness.py"
GEOMETRIC = ("low resolution", "turned 180", "squashed", "tilted 10")


def _module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("robustness", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


rb = _module()


def _sample(*boxes, name: str = "a.jpg", shown: list[float] | None = None) -> Sample:
    return Sample(Path(name), [(k % 53, box) for k, box in enumerate(boxes)], shown)


def _boxes(sample: Sample) -> list[float]:
    """Every truth box's coordinates in one flat list."""
    return [float(v) for _, box in sample.truth for v in box]


def _photo(h: int = 480, w: int = 640, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_registry_starts_with_the_photos_as_they_are_and_names_every_perturbation() -> None:
    names = list(rb.PERTURBATIONS)
    assert names[0] == "none"
    expected = {"warm light", "cool light", "dim", "bright", "low contrast", "defocus blur"}
    expected |= {"motion blur", "jpeg 25", *GEOMETRIC}
    assert set(names[1:]) == expected
    assert all(rb.PERTURBATIONS[n].geometry is not None for n in GEOMETRIC)
    assert all(p.geometry is None for n, p in rb.PERTURBATIONS.items() if n not in GEOMETRIC)
    with pytest.raises(ValueError, match="repeat"):
        rb._registry(rb.PERTURBATIONS["none"], rb.PERTURBATIONS["none"])


def test_turned_180_maps_a_box_to_the_opposite_corner() -> None:
    image = _photo(640, 640)
    out, moved = rb.perturb(rb.PERTURBATIONS["turned 180"], image, _sample((10, 20, 30, 60)))
    assert moved.truth == [(0, (610.0, 580.0, 630.0, 620.0))]
    assert np.array_equal(out, image[::-1, ::-1])


def test_squashed_scales_heights_only_and_low_resolution_halves_everything() -> None:
    image = _photo(640, 640)
    sample = _sample((10, 20, 30, 60), (100, 300, 140, 350), shown=[1.0, 0.5])
    out, moved = rb.perturb(rb.PERTURBATIONS["squashed"], image, sample)
    assert out.shape == (384, 640, 3)
    assert _boxes(moved) == pytest.approx([10, 12, 30, 36, 100, 180, 140, 210])
    assert [c for c, _ in moved.truth] == [0, 1] and moved.number_shown == [1.0, 0.5]
    out, moved = rb.perturb(rb.PERTURBATIONS["low resolution"], image, sample)
    assert out.shape == (320, 320, 3)
    assert _boxes(moved) == pytest.approx([5, 10, 15, 30, 50, 150, 70, 175])


def test_tilted_truth_is_the_upright_hull_of_the_turned_corners() -> None:
    w, h = 640, 480
    box = (200.0, 150.0, 260.0, 230.0)
    _, moved = rb.perturb(rb.PERTURBATIONS["tilted 10"], _photo(h, w), _sample(box))
    x1, y1, x2, y2 = moved.truth[0][1]
    # turned 10 degrees anticlockwise as seen (y down) about the frame's centre, worked by hand
    a, cx, cy = math.radians(10), w / 2, h / 2
    corners = [(box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])]
    turned = [
        (cx + (x - cx) * math.cos(a) + (y - cy) * math.sin(a),
         cy - (x - cx) * math.sin(a) + (y - cy) * math.cos(a))
        for x, y in corners
    ]  # fmt: skip
    for x, y in turned:
        assert x1 - 1e-6 <= x <= x2 + 1e-6 and y1 - 1e-6 <= y <= y2 + 1e-6
    # the hull is tight: each side touches a turned corner
    xs, ys = [x for x, _ in turned], [y for _, y in turned]
    assert (x1, y1, x2, y2) == pytest.approx((min(xs), min(ys), max(xs), max(ys)))
    assert x2 - x1 > box[2] - box[0] and y2 - y1 > box[3] - box[1]  # looser than the label


def test_a_tilt_of_zero_degrees_changes_nothing() -> None:
    image = _photo()
    image_fn, geometry = rb.tilt(0.0)
    zero = rb.Perturbation("tilted 0", "identity", image_fn, geometry)
    sample = _sample((10.5, 20, 30, 60), (600, 400, 640, 480))
    out, moved = rb.perturb(zero, image, sample)
    assert np.array_equal(out, image)
    assert _boxes(moved) == pytest.approx(_boxes(sample))


@pytest.mark.parametrize("name", GEOMETRIC + ("narrowed", "far away", "keystone"))
def test_geometric_boxes_follow_the_pixels(name: str) -> None:
    """A white rectangle drawn where the label is: after the change, its pixels' bounding box
    is the moved truth box (to a pixel or so of resampling)."""
    h, w = 480, 640  # not square: a width and height swapped would show
    box = (400, 100, 460, 190)
    image = np.zeros((h, w, 3), np.uint8)
    image[box[1] : box[3], box[0] : box[2]] = 255
    perturbation = rb.PERTURBATIONS.get(name) or rb.SECOND_SET[name]
    out, moved = rb.perturb(perturbation, image, _sample(box))
    ys, xs = np.nonzero(out[:, :, 0] > 160)
    seen = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    assert moved.truth[0][1] == pytest.approx(seen, abs=1.5)


def test_a_box_turned_mostly_out_of_the_frame_is_dropped_and_one_partly_out_clipped() -> None:
    shift = np.float64([[1, 0, -15], [0, 1, -15]])  # everything 15 px up and left
    assert rb.map_box((0, 0, 20, 20), shift, (640, 480)) is None  # 6 % left in the frame
    assert rb.map_box((0, 0, 100, 100), shift, (640, 480)) == pytest.approx((0, 0, 85, 85))
    assert rb.map_box((300, 200, 340, 250), shift, (640, 480)) == pytest.approx(
        (285, 185, 325, 235)
    )


@pytest.mark.parametrize("name", [n for n in rb.PERTURBATIONS if n not in GEOMETRIC])
def test_photometric_changes_keep_shape_and_boxes_and_repeat_exactly(name: str) -> None:
    image = _photo()
    before = image.copy()
    sample = _sample((10, 20, 30, 60))
    first, moved = rb.perturb(rb.PERTURBATIONS[name], image, sample)
    second, _ = rb.perturb(rb.PERTURBATIONS[name], image, sample)
    assert first.shape == image.shape and first.dtype == np.uint8
    assert np.array_equal(first, second)
    assert np.array_equal(image, before)  # the photo itself is left alone
    assert moved.truth == sample.truth
    assert np.array_equal(first, image) == (name == "none")


def test_light_and_exposure_figures() -> None:
    flat = np.full((4, 4, 3), 200, np.uint8)
    sample = _sample()
    at = {n: rb.perturb(p, flat, sample)[0][0, 0].tolist() for n, p in rb.PERTURBATIONS.items()}
    assert at["warm light"] == [140, 184, 200]  # B x0.70, G x0.92, R x1.0
    assert at["cool light"] == [200, 186, 150]  # B x1.0, G x0.93, R x0.75
    assert at["bright"] == [255, 255, 255]  # 300 clipped
    assert at["low contrast"] == [164, 164, 164]  # half way to 128
    dim = rb.perturb(rb.PERTURBATIONS["dim"], flat, sample)[0].astype(float)
    assert abs(dim.mean() - 90) < 3 and dim.std() > 2  # 200 x 0.45, plus noise


def test_dim_noise_is_seeded_by_the_image_name() -> None:
    dim, image = rb.PERTURBATIONS["dim"], _photo()
    a = rb.perturb(dim, image, _sample(name="a.jpg"))[0]
    b = rb.perturb(dim, image, _sample(name="b.jpg"))[0]
    again = rb.perturb(dim, image, _sample(name="dir/a.jpg"))[0]
    assert not np.array_equal(a, b)
    assert np.array_equal(a, again)


def test_blur_jpeg_and_table_row() -> None:
    edge = np.zeros((20, 40, 3), np.uint8)
    edge[:, 20:] = 255
    motion = rb.PERTURBATIONS["motion blur"].image(edge, None)
    assert np.array_equal(motion[0], motion[-1])  # horizontal only: rows stay alike
    assert 0 < motion[10, 17, 0] < 255 and motion[10, 24, 0] == 255  # 9 px: 4 either side
    vertical = edge.transpose(1, 0, 2).copy()
    assert np.array_equal(rb.PERTURBATIONS["motion blur"].image(vertical, None), vertical)
    report = rb.EvalReport(images=108, truth_tiles=795, predicted_tiles=805, matched=791)
    report.correct, report.exact_images = 789, 101
    row = rb.table_row("none", report)
    assert row.split()[0] == "none"
    for figure in ("99.50% (791/795)", "98.26% (791/805)", "99.75% (789/791)", "93.52% (101/108)"):
        assert figure in row


def test_unknown_perturbation_exits_2_and_names_those_that_exist() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "none", "fog"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "'fog'" in run.stderr and "'turned 180'" in run.stderr and "'tilted 10'" in run.stderr
    assert run.stdout == ""


def test_missing_data_folder_exits_2(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        rb.main(["--data", str(tmp_path / "nowhere"), "--only", "none"])
    assert exit_.value.code == 2
    assert "no data folder" in capsys.readouterr().err


@pytest.mark.slow
def test_benchmark_prints_a_row_per_chosen_perturbation(tmp_path: Path) -> None:
    out = tmp_path / "robust.json"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--limit", "3", "--only", "none", "turned 180"]
        + ["--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "recognizer.yaml" in run.stdout and "3 images" in run.stdout
    rows = [line for line in run.stdout.splitlines() if line.startswith(("none ", "turned 180 "))]
    assert [r[:10] for r in rows] == ["none      ", "turned 180"]
    for row in rows:
        figures = row[16:].split()
        assert len(figures) == 8  # four "xx.xx% (a/b)" figures
        assert all(f.endswith("%") for f in figures[0::2])
        assert all(f.startswith("(") and f.endswith(")") for f in figures[1::2])
    assert "low contrast" not in run.stdout.split("\n\n")[1]  # only the chosen rows
    # the changed rows' exact photos added up (here the one changed row: 3 photos)
    total = next(line for line in run.stdout.splitlines() if line.startswith("changed rows"))
    assert total.split()[-1].endswith("/3)")
    data = json.loads(out.read_text())
    assert list(data["perturbations"]) == ["none", "turned 180"]
    for summary in data["perturbations"].values():
        assert summary["images"] == 3 and summary["tiles"] > 0
        assert 0 <= summary["recall"] <= 1 and summary["matched"] <= summary["tiles"]


SECOND_GEOMETRIC = ("narrowed", "far away", "keystone")


def test_second_set_starts_with_the_photos_as_they_are_and_shares_no_other_name() -> None:
    names = list(rb.SECOND_SET)
    assert names[0] == "none" and len(names) == 13
    assert not (set(names[1:]) & set(rb.PERTURBATIONS))
    assert all(rb.SECOND_SET[n].geometry is not None for n in SECOND_GEOMETRIC)
    assert all(p.geometry is None for n, p in rb.SECOND_SET.items() if n not in SECOND_GEOMETRIC)
    assert set(rb.SETS) == {"first", "second"}


def test_keystone_narrows_the_top_and_keeps_the_bottom() -> None:
    _, geometry = rb.keystone(0.8)
    matrix = geometry(640, 480)
    assert matrix.shape == (3, 3)
    # the frame's corners: the top ones move in by 10 % of the width, the bottom ones stay
    corners = np.float64([[0, 0, 1], [640, 0, 1], [640, 480, 1], [0, 480, 1]]) @ matrix.T
    assert corners[:, :2] / corners[:, 2:] == pytest.approx(
        np.float64([[64, 0], [576, 0], [640, 480], [0, 480]]), abs=1e-6
    )
    # a small box near the top left is moved with them
    assert rb.map_box((0, 0, 10, 1), matrix, (640, 480))[0] == pytest.approx(64, abs=0.2)


def test_second_set_light_figures() -> None:
    flat = np.full((4, 4, 3), 200, np.uint8)
    sample = _sample()
    at = {n: rb.perturb(p, flat, sample)[0] for n, p in rb.SECOND_SET.items()}
    assert at["fluorescent"][0, 0].tolist() == [170, 200, 160]
    assert at["magenta cast"][0, 0].tolist() == [200, 160, 200]
    assert at["lifted shadows"][0, 0, 0] == round(255 * (200 / 255) ** 0.6)
    assert at["deep shadows"][0, 0, 0] == round(255 * (200 / 255) ** 1.8)
    assert np.array_equal(at["oversharpened"], flat)  # nothing to sharpen on a flat image
    wide = np.full((8, 200, 3), 200, np.uint8)
    shadowed = rb.SECOND_SET["hand shadow"].image(wide, None)
    assert shadowed[0, 0, 0] == 90 and shadowed[0, -1, 0] == 200  # x0.45 left, as it was right
    vignetted = rb.SECOND_SET["vignette"].image(np.full((101, 101, 3), 200, np.uint8), None)
    assert vignetted[50, 50, 0] == 200 and vignetted[0, 0, 0] < 90  # x0.4 towards the corners


def test_set_second_runs_the_second_set(capsys) -> None:
    parser = rb.argparse.ArgumentParser()
    assert [p.name for p in rb._resolve(None, "second", parser)] == list(rb.SECOND_SET)
    assert [p.name for p in rb._resolve(["keystone", "dim"], "first", parser)] == [
        "dim",
        "keystone",
    ]
