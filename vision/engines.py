"""The engines that run the networks: OpenVINO, ONNX Runtime (both on the exported ``.onnx``
files) and PyTorch (the ``.pt`` checkpoints, with the train extra).  Each loads one network once
and is called with a float32 batch, channels first; it gives the network's first output.

ONNX Runtime is the default.  OpenVINO (the ``openvino`` extra) runs the networks in the
precision it picks for the CPU: bfloat16 where the CPU has bfloat16 units (AMX, AVX-512 BF16),
1.6 times faster here but with the detector's boxes moved enough to lose three committed hard
cases; float32 elsewhere, as the other two always do (``docs/recognition.md``, "Engines").
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy only for the hints: the CLI reads BACKENDS without loading it
    import numpy as np

BACKENDS = ("onnx", "openvino", "torch")


class OnnxNet:
    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        # Idle worker threads must not spin after a run: the pipeline's next stages (layout, the
        # engine) share the same few cores and slowed down several-fold while they spun.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        first = self.session.get_inputs()[0]
        self.input = first.name
        # (height, width) when the network was exported for one input size, else None (any
        # multiple of the stride)
        hw = first.shape[2:]
        self.fixed = tuple(hw) if all(isinstance(v, int) for v in hw) else None

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return self.session.run(None, {self.input: batch})[0]


class OpenVinoNet:
    """An ONNX network run by OpenVINO's CPU plugin, in the precision it picks for the CPU
    (bfloat16 on CPUs with bfloat16 units, float32 elsewhere).  The network is compiled once for
    each input shape it is given (the detector's 448 px square and the strips' canvases, each a
    multiple of the stride high), or with ``batches`` once for each image size, the batch left
    free (the classifier's crops, as many as a photo has): a network compiled for one shape runs
    faster than one left free (the detector's square 10-11 ms, against 14-16 with its image size
    free and about 15 % more with only its batch free).  Compiled networks are kept on
    disk (``cache_dir``), which halves the next process's compile time."""

    def __init__(self, path: Path, batches: bool = False) -> None:
        try:
            import openvino as ov
        except ImportError as err:  # installed without the openvino extra
            raise RuntimeError(
                "the openvino backend needs the openvino package: pip install -e '.[openvino]' "
                "(bash scripts/setup.sh installs it), or --backend onnx"
            ) from err

        self.core = ov.Core()
        cache = cache_dir()
        if cache is not None:
            self.core.set_property({"CACHE_DIR": str(cache)})
        self.model = self.core.read_model(str(path))
        image = list(self.model.inputs[0].get_partial_shape())[2:]
        # (height, width) when the network was exported for one input size, else None
        self.fixed = (
            None if any(d.is_dynamic for d in image) else tuple(d.get_length() for d in image)
        )
        self.config = {"PERFORMANCE_HINT": "LATENCY"}
        self.batches = batches
        self.requests: dict[tuple[int, ...], Any] = {}  # by input shape, or image size
        self.precision = ""  # what the CPU plugin runs it in: "bf16" or "f32"

    def _compile(self, shape: tuple[int, ...]) -> Any:
        model = self.model.clone()
        model.reshape([-1, *shape[1:]] if self.batches else list(shape))
        compiled = self.core.compile_model(model, "CPU", self.config)
        self.precision = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        return compiled.create_infer_request()

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        key = batch.shape[2:] if self.batches else batch.shape
        request = self.requests.get(key)
        if request is None:
            request = self.requests[key] = self._compile(batch.shape)
        # the input is read in place; the output is the request's own memory, copied before the
        # next run reuses it
        batch = batch if batch.flags.c_contiguous else batch.copy(order="C")
        out = request.infer({0: batch}, share_inputs=True, share_outputs=True)
        return out[0].copy()


CACHE_BYTES = 512 * 2**20  # compiled networks kept on disk, at most (oldest dropped first)


def cache_dir(limit: int = CACHE_BYTES) -> Path | None:
    """Where compiled networks are kept between runs (``$ISTAKA_CACHE``, else
    ``$XDG_CACHE_HOME/istaka`` or ``~/.cache/istaka``), or None when it cannot be written.  The
    shipped networks fill 60 MB over the 60 photos of ``benchmarks/recognizer.py`` (7 files, one
    a compiled shape); the oldest files are dropped once the folder holds more than ``limit``."""
    root = os.environ.get("ISTAKA_CACHE")
    if root is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "istaka")
    path = Path(root) / "openvino"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    files = []
    for file in path.iterdir():
        with contextlib.suppress(OSError):  # another process may drop it meanwhile
            stat = file.stat()
            files.append((stat.st_mtime, stat.st_size, file))
    kept = 0
    for _, size, file in sorted(files, reverse=True):
        kept += size
        if kept > limit:
            with contextlib.suppress(OSError):
                file.unlink()
    return path if os.access(path, os.W_OK) else None


class TorchNet:
    def __init__(self, path: Path) -> None:
        import torch
        from ultralytics import YOLO

        self.torch = torch
        self.module = YOLO(str(path)).model.float().fuse(verbose=False).eval()
        self.fixed = None  # any input size, a multiple of the stride

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        with self.torch.inference_mode():
            out = self.module(self.torch.from_numpy(batch))
        if isinstance(out, (list, tuple)):
            out = out[0]
        return out.numpy()


def load_net(weights: Path, backend: str, batches: bool = False) -> Any:
    """``weights`` (suffix replaced: ``.onnx``, or ``.pt`` for torch) loaded by ``backend``;
    ``batches``: the network is given batches of any size (crops), else one image at a time."""
    suffix = ".pt" if backend == "torch" else ".onnx"
    path = weights.with_suffix(suffix)
    if not path.is_file():
        hint = "" if backend == "torch" else " (run: istaka export)"
        raise FileNotFoundError(f"missing {backend} weights {path}{hint}")
    if backend == "openvino":
        return OpenVinoNet(path, batches)
    return OnnxNet(path) if backend == "onnx" else TorchNet(path)


def available_backend(backend: str) -> str:
    """``backend``, or ONNX Runtime in place of OpenVINO where OpenVINO would gain nothing: the
    openvino extra is not installed, or the CPU has no bfloat16 units, where OpenVINO runs
    float32 at ONNX Runtime's speed (here in float32: the detector's square 16.8 against
    18.6 ms, its 96 px strip canvas 5.3 against 4.7, 16 crops 6.9 against 6.0).  Both read the
    same ``.onnx`` files."""
    if backend == "openvino" and not bfloat16_cpu():
        return "onnx"
    return backend


def bfloat16_cpu() -> bool:
    """Whether OpenVINO is installed and runs bfloat16 on this CPU."""
    import importlib.util

    if importlib.util.find_spec("openvino") is None:
        return False
    import openvino as ov

    return "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
