"""End to end: rendered synthetic images train an ultralytics detector offline for one epoch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vision.training.synth.dataset import render_dataset


@pytest.mark.slow
def test_one_epoch_of_yolo_on_synthetic_images(tmp_path: Path) -> None:
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "false"
    from ultralytics import YOLO

    data = tmp_path / "data"
    render_dataset(data, 4, seed=3, progress=False)
    assert len(list((data / "labels").glob("*.txt"))) == 4
    model = YOLO("yolo11n.yaml")  # from the architecture file: nothing is downloaded
    model.train(
        data=str(data / "data.yaml"),
        epochs=1,
        imgsz=160,
        batch=4,
        workers=0,
        plots=False,
        device="cpu",
        amp=False,
        project=str(tmp_path / "runs"),
        name="e2e",
        exist_ok=True,
        verbose=False,
    )
    weights = tmp_path / "runs" / "e2e" / "weights"
    assert (weights / "last.pt").stat().st_size > 1_000_000
    assert len(model.names) == 53 and model.names[52] == "FJ"
