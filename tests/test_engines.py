"""The engines that run the networks (``vision.engines``): OpenVINO against ONNX Runtime on the
shipped networks and a real photo, the detector compiled once per input size, the classifier's
batch left free, and an environment without the openvino package."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vision.engines import OnnxNet, OpenVinoNet, available_backend, load_net
from vision.recognizer import MANIFEST, Recognizer, RecognizerSpec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "rack_real.jpg"


def _photo_batch(height: int, width: int) -> np.ndarray:
    """The real example photo stretched to ``height`` x ``width``, as a network input."""
    import cv2

    image = cv2.resize(cv2.imread(str(EXAMPLE)), (width, height))
    return np.ascontiguousarray(image[..., ::-1].transpose(2, 0, 1)[None], np.float32) / 255.0


@pytest.mark.slow
def test_detector_compiled_once_per_size_and_agrees_with_onnx_runtime() -> None:
    """The detector (any image size) is compiled for each size it is given, once; on a real photo
    its tile scores agree with ONNX Runtime's (bfloat16 on a CPU that has it: to about 0.02)."""
    spec = RecognizerSpec.load(MANIFEST)
    weights = spec.detector.with_suffix(".onnx")
    openvino, onnx = OpenVinoNet(weights), OnnxNet(weights)
    assert openvino.fixed is None and openvino.requests == {}
    for height in (448, 96, 448):
        batch = _photo_batch(height, 448)
        ours, theirs = openvino(batch), onnx(batch)
        assert ours.shape == theirs.shape
        # rows: 4 box values, the tile score, the angle; the score row told apart from noise
        scores, reference = ours[0, 4], theirs[0, 4]
        assert np.abs(scores - reference).max() < 0.05
        if height == 448:  # the photo's ten tiles, found by both
            assert (reference > 0.5).sum() >= 10
            assert ((scores > 0.5) == (reference > 0.5)).mean() > 0.999
    assert sorted(openvino.requests) == [(1, 3, 96, 448), (1, 3, 448, 448)]
    assert openvino.precision in ("f32", "bf16")


@pytest.mark.slow
def test_classifier_batch_stays_free_and_reads_as_onnx_runtime() -> None:
    """The classifier (96 px crops) is compiled once, whatever the batch; the real
    rack's crops read the same tiles, with probabilities within 0.05 of ONNX Runtime's."""
    import cv2

    from vision.crops import crop_tile
    from vision.recognizer import to_tensor

    recognizer = Recognizer.default("onnx")
    image = cv2.imread(str(EXAMPLE))
    boxes, _ = recognizer.detect(image)
    crops = [crop_tile(image, tuple(b), recognizer.spec.classifier_imgsz) for b in boxes]
    weights = recognizer.spec.classifier.with_suffix(".onnx")
    openvino = OpenVinoNet(weights, batches=True)
    assert openvino.fixed is None  # exported for any size, as the detector
    for batch in (crops[:1], crops):
        ours = openvino(to_tensor(batch))
        theirs = recognizer.classifier(to_tensor(batch))
        assert ours.shape == theirs.shape == (len(batch), 54)
        assert (ours.argmax(axis=1) == theirs.argmax(axis=1)).all()
        assert np.abs(ours - theirs).max() < 0.05
    assert list(openvino.requests) == [(96, 96)]


def test_without_openvino_the_default_reads_with_onnx_runtime(monkeypatch) -> None:
    """Without the openvino extra, a manifest's openvino becomes ONNX Runtime (the same .onnx
    files); asked for by name, it says what to install."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "openvino" else real(name, *a)
    )
    assert available_backend("openvino") == "onnx"
    assert available_backend("torch") == "torch"
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino raises ImportError
    spec = RecognizerSpec.load(MANIFEST)
    with pytest.raises(RuntimeError, match="needs the openvino package"):
        load_net(spec.classifier, "openvino")
    assert Recognizer(replace(spec, default_backend="openvino")).backend == "onnx"


def test_on_a_cpu_without_bfloat16_the_default_reads_with_onnx_runtime(monkeypatch) -> None:
    """OpenVINO in float32 is no faster than ONNX Runtime: a manifest's openvino runs only where
    the CPU has bfloat16 units (asked for by name, it runs anywhere)."""
    import openvino as ov

    class Float32Core(ov.Core):
        def get_property(self, device: str, name: str) -> object:
            if name == "OPTIMIZATION_CAPABILITIES":
                return ["FP32", "INT8"]
            return super().get_property(device, name)

    monkeypatch.setattr(ov, "Core", Float32Core)
    assert available_backend("openvino") == "onnx"
    spec = replace(RecognizerSpec.load(MANIFEST), default_backend="openvino")
    assert Recognizer(spec).backend == "onnx"
    assert Recognizer(spec, "openvino").backend == "openvino"


def test_missing_weights_are_named(tmp_path: Path) -> None:
    for backend, suffix in (("openvino", ".onnx"), ("onnx", ".onnx"), ("torch", ".pt")):
        with pytest.raises(FileNotFoundError, match=f"missing {backend} weights .*none{suffix}"):
            load_net(tmp_path / "none", backend)


def test_compiled_networks_kept_on_disk_within_a_limit(tmp_path: Path, monkeypatch) -> None:
    """The cache folder: where ``$ISTAKA_CACHE`` says, its oldest files dropped once it holds
    more than the limit, None when it cannot be made."""
    import os

    from vision.engines import cache_dir

    monkeypatch.setenv("ISTAKA_CACHE", str(tmp_path / "cache"))
    folder = cache_dir()
    assert folder == tmp_path / "cache" / "openvino" and folder.is_dir()
    for age, name in enumerate(("new", "middle", "old")):
        (folder / name).write_bytes(b"x" * 100)
        os.utime(folder / name, (1000 - age, 1000 - age))
    assert cache_dir(limit=250) == folder
    assert sorted(f.name for f in folder.iterdir()) == ["middle", "new"]
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("ISTAKA_CACHE", str(tmp_path / "file"))  # a file where a folder should be
    assert cache_dir() is None
