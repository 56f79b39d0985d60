"""Training configs, data YAML resolution, and one tiny offline training step."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from vision.training.train import (
    REPO_ROOT,
    TrainConfig,
    kept_weights,
    prepare_generated,
    resolve_data_yaml,
    squash_set,
    train,
)


def _write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def _chain(config_path: Path) -> list[str]:
    """The names of the configs that rebuild ``config_path``'s weights, first stage first."""
    from vision.training.train import config_for_output

    names = []
    path: Path | None = config_path
    while path is not None:
        config = TrainConfig.load(path)
        names.append(config.name)
        assert config.model.endswith(".yaml")  # from an architecture, never a download
        assert config.train["hsv_h"] == 0.0 and config.train["fliplr"] == 0.0
        if config.weights is None:
            break
        path = config_for_output(config.weights)
        assert path is not None, f"{config.name} starts from {config.weights}: no config makes it"
        assert len(names) < 20, "a cycle of configs"
    return names[::-1]


def test_the_shipped_models_rebuild_from_committed_configs() -> None:
    """Every stage of the shipped pair has its config: a clean clone can retrain both."""
    import yaml

    manifest = yaml.safe_load((REPO_ROOT / "models" / "recognizer.yaml").read_text())
    detector = _chain(REPO_ROOT / "models" / f"{manifest['detector']}.yaml")
    classifier = _chain(REPO_ROOT / "models" / f"{manifest['classifier']}.yaml")
    assert detector[0] == "tile_detector_real" and detector[-1] == "tile_detector"
    assert classifier[0] == "tile_classifier64" and classifier[-1] == "tile_classifier"
    for name in detector[:-1] + classifier[:-1]:  # intermediate weights are built, never committed
        config = TrainConfig.load(REPO_ROOT / "models" / "stages" / f"{name}.yaml")
        assert config.output.is_relative_to(REPO_ROOT / "build")


def test_only_the_shipped_weights_are_in_models() -> None:
    folder = REPO_ROOT / "models"
    weights = sorted(p.name for p in folder.iterdir() if p.suffix in (".pt", ".onnx"))
    expected = [f"tile_{m}.{e}" for m in ("classifier", "detector") for e in ("onnx", "pt")]
    assert weights == [*expected, "tile_up.onnx"]  # the way-up model: trained in torch, ONNX only


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"task": "detect", "model": "yolo11n.pt", "data": "x"}, "architecture YAML"),
        ({"task": "segment", "model": "yolo11n.yaml", "data": "x"}, "task must be one of"),
        ({"task": "detect", "model": "yolo11n.yaml"}, r"missing keys \['data'\]"),
        ({"task": "detect", "model": "yolo11n.yaml", "data": "x", "keep": "first"}, "best or last"),
    ],
)
def test_bad_configs_are_named(tmp_path: Path, data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrainConfig.load(_write(tmp_path / "c.yaml", data))


def test_missing_config_file() -> None:
    with pytest.raises(FileNotFoundError, match="no training config"):
        TrainConfig.load("models/nope.yaml")


def test_keep_names_the_epoch_that_is_shipped(tmp_path: Path) -> None:
    base = {"task": "classify", "model": "yolo11n-cls.yaml", "data": "x"}
    assert TrainConfig.load(_write(tmp_path / "a.yaml", base)).keep == "best"
    assert TrainConfig.load(_write(tmp_path / "b.yaml", {**base, "keep": "last"})).keep == "last"
    weights = tmp_path / "run" / "weights"
    weights.mkdir(parents=True)
    (weights / "last.pt").write_bytes(b"last")
    assert kept_weights(tmp_path / "run", "best").name == "last.pt"  # no best.pt: the last
    (weights / "best.pt").write_bytes(b"best")
    assert kept_weights(tmp_path / "run", "best").name == "best.pt"
    assert kept_weights(tmp_path / "run", "last").name == "last.pt"
    with pytest.raises(FileNotFoundError, match="no last.pt"):
        kept_weights(tmp_path / "nothing", "last")


def test_data_yaml_path_is_resolved_against_the_yaml(tmp_path: Path) -> None:
    (tmp_path / "sets").mkdir()
    src = _write(tmp_path / "sets" / "d.yaml", {"path": "build/real", "train": "a", "val": "b"})
    out = resolve_data_yaml(src, tmp_path / "out")
    assert yaml.safe_load(out.read_text())["path"] == str(tmp_path / "sets" / "build/real")


@pytest.mark.slow
def _tiny_crops(root: Path) -> Path:
    """Two colours, a few crops each, in ``root/crops/{train,val}``."""
    rng = np.random.default_rng(0)
    for split in ("train", "val"):
        for folder, colour in (("00_R1", (0, 0, 220)), ("26_B1", (220, 0, 0))):
            (root / "crops" / split / folder).mkdir(parents=True)
            for k in range(6):
                image = np.full((32, 32, 3), colour, np.uint8)
                image += rng.integers(0, 30, image.shape, dtype=np.uint8)
                cv2.imwrite(str(root / "crops" / split / folder / f"{k}.png"), image)
    return root / "crops"


def test_a_tiny_classifier_trains_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One epoch: the whole path runs without a network."""
    config = TrainConfig(
        name="tiny",
        task="classify",
        model="yolo11n-cls.yaml",
        data=str(_tiny_crops(tmp_path)),
        output=tmp_path / "tiny.pt",
        train={"epochs": 1, "imgsz": 32, "batch": 4, "workers": 0},
    )
    monkeypatch.setattr("vision.training.train.RUNS_DIR", tmp_path / "runs")
    out = train(config)
    assert out.exists() and out.stat().st_size > 100_000


def test_train_command_passes_device_workers_and_epochs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``istaka train --device --workers --epochs`` override the config (as the run records)."""
    from istaka.cli import main

    config = _write(
        tmp_path / "tiny.yaml",
        {
            "name": "tiny_cli",
            "task": "classify",
            "model": "yolo11n-cls.yaml",
            "data": str(_tiny_crops(tmp_path)),
            "output": str(tmp_path / "tiny.pt"),
            "train": {"epochs": 3, "imgsz": 32, "batch": 4},
        },
    )
    monkeypatch.setattr("vision.training.train.RUNS_DIR", tmp_path / "runs")
    argv = ["train", str(config), "--device", "cpu", "--workers", "0", "--epochs", "1"]
    assert main(argv) == 0
    args = yaml.safe_load((tmp_path / "runs" / "tiny_cli" / "args.yaml").read_text())
    assert (args["device"], args["workers"], args["epochs"]) == ("cpu", 0, 1)
    assert (tmp_path / "tiny.pt").is_file()


def test_a_config_builds_its_crop_set_when_missing(tmp_path: Path) -> None:
    """``crops:`` in a config exports the crop set (train augmented, val plain) once."""
    src = tmp_path / "set"
    for split in ("train", "val"):
        (src / "images" / split).mkdir(parents=True)
        (src / "labels" / split).mkdir(parents=True)
        image = np.full((100, 200, 3), 90, np.uint8)
        image[20:60, 10:40] = (0, 0, 255)
        cv2.imwrite(str(src / "images" / split / "a.png"), image)
        (src / "labels" / split / "a.txt").write_text("4 0.125 0.4 0.15 0.4\n")
    out = tmp_path / "crops"
    config_path = _write(
        tmp_path / "c.yaml",
        {
            "task": "classify",
            "model": "yolo11n-cls.yaml",
            "data": str(out),
            "crops": {"out": str(out), "size": 32, "augment": True, "sources": {str(src): 3}},
        },
    )
    config = TrainConfig.load(config_path)
    assert config.crops["size"] == 32 and not config.synth
    prepare_generated(config)
    train_crops = sorted((out / "train" / "04_R5").iterdir())
    assert len(train_crops) == 3 and len(list((out / "val" / "04_R5").iterdir())) == 1
    assert cv2.imread(str(train_crops[0])).shape == (32, 32, 3)
    stamp = train_crops[0].stat().st_mtime_ns
    prepare_generated(config)  # already there: nothing rewritten
    assert train_crops[0].stat().st_mtime_ns == stamp


def _crop_bytes(folder: Path) -> dict[str, bytes]:
    return {str(f.relative_to(folder)): f.read_bytes() for f in folder.rglob("*.jpg")}


def test_crop_export_in_processes_writes_the_same_files(tmp_path: Path) -> None:
    """``workers`` > 1 exports each source in its own process: same crops, byte for byte."""
    sources = {}
    for name, colour in (("one", (0, 0, 255)), ("two", (255, 0, 0))):
        src = tmp_path / name
        (src / "images").mkdir(parents=True)
        (src / "labels").mkdir(parents=True)
        image = np.full((100, 200, 3), 90, np.uint8)
        image[20:60, 10:40] = colour
        cv2.imwrite(str(src / "images" / "a.png"), image)
        (src / "labels" / "a.txt").write_text("4 0.125 0.4 0.15 0.4\n")
        sources[str(src)] = 2
    exported = []
    for workers in (1, 2):
        out = tmp_path / f"crops{workers}"
        crops = {"out": str(out), "size": 32, "augment": True, "sources": sources}
        config = _write(
            tmp_path / "c.yaml",
            {"task": "classify", "model": "yolo11n-cls.yaml", "data": str(out), "crops": crops},
        )
        prepare_generated(TrainConfig.load(config), workers=workers)
        exported.append(_crop_bytes(out))
    assert len(exported[0]) == 4 and exported[0] == exported[1]


def _detect_config(tmp_path: Path, synth: list[dict]) -> Path:
    """A detector config in ``tmp_path`` whose only extra is its ``synth`` sets."""
    return _write(
        tmp_path / "c.yaml",
        {"task": "detect", "model": "yolo11n.yaml", "data": "x.yaml", "synth": synth},
    )


def test_synth_list_and_augment_ranges_in_a_config(tmp_path: Path) -> None:
    """``synth`` may list several rendered sets (with a scene kind); ``augment`` may give ranges."""
    from vision.training.crops import CameraAugment
    from vision.training.train import _augment

    config_path = _detect_config(
        tmp_path,
        [
            {"out": "datasets/build/a", "n": 5, "seed": 1},
            {"out": "datasets/build/b", "n": 3, "seed": 2, "scene": "table"},
        ],
    )
    config = TrainConfig.load(config_path)
    assert [s["n"] for s in config.synth] == [5, 3] and config.synth[1]["scene"] == "table"
    single = _write(
        tmp_path / "d.yaml",
        {"task": "detect", "model": "m.yaml", "data": "x", "synth": {"out": "o", "n": 2}},
    )
    assert TrainConfig.load(single).synth == [{"out": "o", "n": 2}]
    bad = _write(
        tmp_path / "e.yaml", {"task": "detect", "model": "m.yaml", "data": "x", "synth": [{"n": 2}]}
    )
    with pytest.raises(ValueError, match="needs 'out' and 'n'"):
        TrainConfig.load(bad)
    ranges = _augment({"degrees": 10, "wide_degrees": 40, "wide_p": 0.2})
    assert ranges == CameraAugment(degrees=10, wide_degrees=40, wide_p=0.2)
    assert _augment(True) is True and _augment(False) is False


def test_a_config_renders_its_set_from_the_named_style_pool(tmp_path: Path) -> None:
    """``pool:`` in a ``synth`` set picks the style pool (default ``train``)."""
    import json

    out_wide, out_default = tmp_path / "wide", tmp_path / "default"
    config_path = _detect_config(
        tmp_path,
        [
            {"out": str(out_wide), "n": 2, "seed": 6, "pool": "wide"},
            {"out": str(out_default), "n": 1, "seed": 6},
        ],
    )
    prepare_generated(TrainConfig.load(config_path), workers=1)
    pools = {
        json.loads(p.read_text())["style_pool"] for p in (out_wide / "sidecars").glob("*.json")
    }
    assert pools == {"wide"}
    (default,) = (out_default / "sidecars").glob("*.json")
    assert json.loads(default.read_text())["style_pool"] == "train"


def test_a_config_renders_oriented_labels_when_asked(tmp_path: Path) -> None:
    """``labels: obb`` in a ``synth`` set writes oriented-box labels (class and four corners)."""
    out = tmp_path / "obb"
    config = _detect_config(tmp_path, [{"out": str(out), "n": 1, "seed": 6, "labels": "obb"}])
    prepare_generated(TrainConfig.load(config), workers=1)
    lines = next((out / "labels").glob("*.txt")).read_text().splitlines()
    assert lines and all(len(line.split()) == 9 for line in lines)


def test_a_config_cuts_straightened_crops_from_an_oriented_render(tmp_path: Path) -> None:
    """``crops: {straight: true}`` over a ``labels: obb`` render: one crop per labelled tile, each
    cut along its turned box (so not the upright hull's crop of the same label)."""
    from vision.training.crops import crop_tile, label_rect, read_yolo_labels, straight_crop

    render, out = tmp_path / "obb", tmp_path / "crops"
    crops = {
        "out": str(out),
        "size": 32,
        "straight": True,
        "plain_first": False,
        "augment": {
            "degrees": 0.0,
            "blur_p": 0.0,
            "noise_p": 0.0,
            "brightness": 0.0,
            "contrast": 0.0,
            "white_balance": 0.0,
            "jpeg_p": 0.0,
        },
        "jitter": 0.0,
        "sources": {str(render): 1},
    }
    config_path = _write(
        tmp_path / "c.yaml",
        {
            "task": "classify",
            "model": "yolo11n-cls.yaml",
            "data": str(out),
            "synth": [{"out": str(render), "n": 1, "seed": 6, "labels": "obb"}],
            "crops": crops,
        },
    )
    prepare_generated(TrainConfig.load(config_path), workers=1)
    (image_path,) = (render / "images").glob("*.jpg")
    image = cv2.imread(str(image_path))
    labelled = read_yolo_labels(next((render / "labels").glob("*.txt")), *image.shape[1::-1])
    written = sorted((out / "train").rglob("*.jpg"))
    assert len(written) == len(labelled) > 5
    closer = 0
    for k, (cls, hull, corners) in enumerate(labelled):
        (crop_path,) = (out / "train").glob(f"*/{render.name}_{image_path.stem}_{k:03d}_0.jpg")
        assert crop_path.parent.name.startswith(f"{cls:02d}_")
        crop = cv2.imread(str(crop_path)).astype(int)
        straight = straight_crop(image, label_rect(corners), 32).astype(int)
        upright = crop_tile(image, hull, 32).astype(int)
        assert np.abs(crop - straight).mean() < 8  # resampling and JPEG differ, not the framing
        closer += np.abs(crop - straight).mean() < np.abs(crop - upright).mean()
    assert closer >= len(labelled) - 1


def test_straight_may_name_a_mode_per_source(tmp_path: Path) -> None:
    """``straight: {SET: long, SET2: corners}`` gives each source its own way of standing tiles;
    ``straight: true`` stands every source's tiles on their long side."""
    from vision.training.train import _crop_jobs

    spec = {"sources": {"a": 2, "b": 1}, "straight": {"a": "long", "b": "corners"}}
    assert [j["straight"] for j in _crop_jobs(spec, tmp_path)] == ["long", "corners"]
    assert [j["straight"] for j in _crop_jobs({**spec, "straight": True}, tmp_path)] == [True] * 2
    assert [j["straight"] for j in _crop_jobs({"sources": {"a": 1}}, tmp_path)] == [False]
    assert [j["plain_first"] for j in _crop_jobs({"sources": {"a": 1}}, tmp_path)] == [True]
    assert TrainConfig.load(REPO_ROOT / "models" / "tile_classifier.yaml").crops["straight"]


def _yolo_set(root: Path, split: str, n: int = 3) -> None:
    (root / "images" / split).mkdir(parents=True)
    (root / "labels" / split).mkdir(parents=True)
    for i in range(n):
        image = np.full((120, 160, 3), 90, np.uint8)
        cv2.rectangle(image, (40, 30), (70, 80), (230, 230, 230), -1)
        cv2.imwrite(str(root / "images" / split / f"im{i}.jpg"), image)
        line = "3 0.25 0.25 0.4375 0.25 0.4375 0.6667 0.25 0.6667\n"
        (root / "labels" / split / f"im{i}.txt").write_text(line)


def test_squash_set_shrinks_one_side_and_keeps_the_labels(tmp_path: Path) -> None:
    _yolo_set(tmp_path / "src", "train")
    out = tmp_path / "out"
    assert squash_set(tmp_path / "src", out, split="train", copies=4, seed=1, across_p=0.5) == 12
    shapes = []
    for image in sorted((out / "images").glob("*.jpg")):
        h, w = cv2.imread(str(image)).shape[:2]
        shapes.append((w, h))
        assert (w == 160) != (h == 120)  # exactly one side shrank
        shrunk = w / 160 if h == 120 else h / 120
        assert 0.49 <= shrunk <= 0.86
        label = (out / "labels" / f"{image.stem}.txt").read_text()
        assert label == (tmp_path / "src" / "labels" / "train" / "im0.txt").read_text()
    assert any(w < 160 for w, _ in shapes) and any(h < 120 for _, h in shapes)
    # seeded by image name: a second build writes the same pictures
    again = tmp_path / "again"
    squash_set(tmp_path / "src", again, split="train", copies=4, seed=1, across_p=0.5)
    for image in (out / "images").glob("*.jpg"):
        assert cv2.imread(str(image)).shape == cv2.imread(str(again / "images" / image.name)).shape
    with pytest.raises(FileNotFoundError, match="no images to squash"):
        squash_set(tmp_path / "nowhere", out)


def test_a_config_builds_its_squashed_set_and_checks_the_factor(tmp_path: Path) -> None:
    _yolo_set(tmp_path / "src", "train", n=2)
    out = tmp_path / "squashed"
    config = _write(
        tmp_path / "c.yaml",
        {
            "task": "obb",
            "model": "yolo11n-obb.yaml",
            "data": "x.yaml",
            "squash": [{"src": str(tmp_path / "src"), "split": "train", "out": str(out)}],
        },
    )
    prepare_generated(TrainConfig.load(config))
    assert len(list((out / "labels").glob("*.txt"))) == 2
    bad = {"task": "obb", "model": "yolo11n-obb.yaml", "data": "x.yaml"}
    bad["squash"] = [{"src": "a", "out": "b", "factor": [0.9, 1.4]}]
    with pytest.raises(ValueError, match="squash factor"):
        TrainConfig.load(_write(tmp_path / "bad.yaml", bad))
    bad["squash"] = [{"src": "a", "out": "b", "factr": [0.5, 0.8]}]
    with pytest.raises(ValueError, match=r"unknown squash keys \['factr'\]"):
        TrainConfig.load(_write(tmp_path / "typo.yaml", bad))
