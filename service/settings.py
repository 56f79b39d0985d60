"""Settings of one server process: limits, and how the recognition pipeline is built.

>>> Settings().max_upload_bytes
10485760
>>> Settings(max_stream_fps=5).min_frame_interval
0.2
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MB = 1024 * 1024
MODEL_ENV = "ISTAKA_MODEL"  # a recogniser manifest to serve instead of models/recognizer.yaml


def default_pipeline() -> Any:
    """The shipped pipeline (``vision.pipeline.Pipeline.default()``), or the recogniser whose
    manifest ``ISTAKA_MODEL`` names (``istaka serve --model``).  Imported here, not at module
    level, so the engine endpoints work without the vision extra."""
    from vision.pipeline import Pipeline

    manifest = os.environ.get(MODEL_ENV)
    if not manifest:
        return Pipeline.default()
    from vision.recognizer import Recognizer, RecognizerSpec

    return Pipeline(Recognizer(RecognizerSpec.load(Path(manifest))))


@dataclass(frozen=True)
class Settings:
    """What a server process may accept and how it builds its pipeline.

    ``pipeline_factory`` runs once per worker at start-up (models are not thread-safe, so every
    call into the pipeline then goes through that worker's single inference thread).
    ``load_pipeline=False`` starts the server without a model: the engine endpoints and the overlay
    work, ``/scan`` and the camera stream answer 503.
    """

    max_upload_bytes: int = 10 * MB
    max_pixels: int = 40_000_000  # a 12 MP phone photo is 12e6; this stops decompression bombs
    max_stream_fps: float = 8.0  # frames per second one camera stream may have read
    max_frame_bytes: int = 2 * MB  # one JPEG frame on the camera stream
    max_pending_scans: int = 32  # scans waiting for the inference thread before 503
    max_streams: int = 8  # camera streams open at once (each has at most one frame in flight)
    max_tables: int = 1000  # overlay tables kept in memory
    engine_threads: int = 2  # engine calls (hand, referee, table pushes) running at once
    load_pipeline: bool = True
    pipeline_factory: Callable[[], Any] = default_pipeline

    def __post_init__(self) -> None:
        positive = ("max_upload_bytes", "max_pixels", "max_frame_bytes", "max_pending_scans")
        for name in (*positive, "engine_threads", "max_streams"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.max_stream_fps <= 0:
            raise ValueError(f"max_stream_fps must be positive, got {self.max_stream_fps}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``ISTAKA_MAX_UPLOAD_MB``, ``ISTAKA_MAX_FPS`` and ``ISTAKA_NO_MODEL=1``
        (how ``istaka serve --workers N`` hands its options to every worker process).

        >>> Settings.from_env({"ISTAKA_MAX_UPLOAD_MB": "2"}).max_upload_bytes
        2097152
        """
        env = os.environ if environ is None else environ
        kwargs: dict[str, Any] = {}
        try:
            if "ISTAKA_MAX_UPLOAD_MB" in env:
                kwargs["max_upload_bytes"] = int(float(env["ISTAKA_MAX_UPLOAD_MB"]) * MB)
            if "ISTAKA_MAX_FPS" in env:
                kwargs["max_stream_fps"] = float(env["ISTAKA_MAX_FPS"])
        except ValueError as exc:
            raise ValueError(f"bad ISTAKA_MAX_UPLOAD_MB or ISTAKA_MAX_FPS: {exc}") from None
        kwargs["load_pipeline"] = env.get("ISTAKA_NO_MODEL", "") != "1"
        return cls(**kwargs)

    @property
    def min_frame_interval(self) -> float:
        """Seconds between two frames read on one stream."""
        return 1.0 / self.max_stream_fps
