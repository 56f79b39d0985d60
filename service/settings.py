"""Settings of one server process: limits, and how the recognition pipeline is built.

>>> Settings().max_upload_bytes
10485760
>>> Settings(max_stream_fps=5).min_frame_interval
0.2
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
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
    """What a server process may accept and how it builds its pipeline: every limit of the
    service is a field here (the list caps of the request bodies, fixed by the API's schema, are in
    ``service.limits``).

    ``pipeline_factory`` runs once per worker at start-up (models are not thread-safe, so every
    call into the pipeline then goes through that worker's single inference thread).
    ``load_pipeline=False`` starts the server without a model: the engine endpoints and the overlay
    work, ``/scan`` and the camera stream answer 503.
    """

    # Bodies and messages: refused with 413 (HTTP) or an error / close code (WebSocket).
    max_upload_bytes: int = 10 * MB  # a /scan photo; refused while it streams in
    max_json_bytes: int = 64 * 1024  # any other request body (a 101 hand with boxes is ~2 KB)
    max_pixels: int = 40_000_000  # a 12 MP phone photo is 12e6; this stops decompression bombs
    max_frame_bytes: int = 2 * MB  # one JPEG frame on the camera stream
    max_frame_pixels: int = 8_000_000  # one frame (a 1080p video frame is 2e6)
    max_text_message_bytes: int = 16 * 1024  # one JSON message on a WebSocket
    max_text_messages_per_second: float = 20.0  # per camera stream (a burst of twice that)
    # Work waiting: past these, 503 busy at once instead of a queue.
    max_pending_scans: int = 32  # scans waiting for the inference thread before 503
    max_queued_pixels: int = 120_000_000  # pixels of the scans admitted and not yet done
    engine_threads: int = 2  # engine calls (hand, referee, table pushes) running at once
    # Sockets and what one may hold.
    max_stream_fps: float = 8.0  # frames per second one camera stream may have read
    max_streams: int = 8  # camera streams open at once per worker
    max_overlays: int = 256  # overlay sockets open at once per worker
    max_corrections: int = 64  # corrections one camera stream keeps
    stream_idle_seconds: float = 30.0  # a camera stream without a frame this long is closed
    overlay_idle_seconds: float = 3600.0  # an overlay socket without any update this long
    ws_silent_seconds: float = 60.0  # an overlay socket whose page sent nothing this long
    # Slow clients (service.slow): a body must keep arriving, or 408 and the connection closed.
    body_start_seconds: float = 10.0  # the body's first bytes, and the first gap allowed
    min_body_bytes_per_second: float = 32 * 1024  # over the whole body, after body_start_seconds
    body_gap_seconds: float = 10.0  # the longest wait for the next bytes of a body
    max_connections: int = 800  # connections and requests at once per worker; past it, 503
    # Kept data (photos and tiles kept with consent, profiles): 507 when the server's is full, 429
    # when one credential's is.
    max_kept_bytes: int = 2048 * MB  # the data folder and the profiles together
    max_kept_files: int = 20_000
    max_kept_bytes_per_token: int = 256 * MB  # what one credential (owner, one table) kept
    max_kept_files_per_token: int = 2_000
    # Tables.
    max_tables: int = 1000  # tables kept by the store
    table_keep_seconds: float = 600.0  # a table written this recently is never evicted
    store_url: str | None = None  # None: in memory; redis://HOST:PORT/DB: shared
    store_ephemeral: bool = False  # accept a Redis that does not persist (tables die with it)
    # The server owner's token (service.auth): writes that are not a table's own need it.  None:
    # create_app makes one and logs it.
    owner_token: str | None = None
    # Who may talk to the server (see service.security).
    allowed_hosts: tuple[str, ...] = ()  # Host names besides localhost and IP addresses
    allowed_origins: tuple[str, ...] = ()  # page origins besides the server's own
    load_pipeline: bool = True
    pipeline_factory: Callable[[], Any] = default_pipeline

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")

    @property
    def ws_max_size(self) -> int:
        """The largest WebSocket message the server reads at all (uvicorn closes the connection
        with 1009 past it); between ``max_frame_bytes`` and this, a frame is answered with an
        error and the stream goes on."""
        return 2 * max(self.max_frame_bytes, self.max_text_message_bytes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``ISTAKA_MAX_UPLOAD_MB``, ``ISTAKA_MAX_FPS``, ``ISTAKA_NO_MODEL=1``,
        ``ISTAKA_STORE`` (a ``redis://`` URL), ``ISTAKA_STORE_EPHEMERAL=1``,
        ``ISTAKA_OWNER_TOKEN`` and the comma-separated ``ISTAKA_ALLOWED_HOSTS`` and
        ``ISTAKA_ALLOWED_ORIGINS`` (how ``istaka serve --workers N`` hands its options to every
        worker process).

        >>> Settings.from_env({"ISTAKA_MAX_UPLOAD_MB": "2"}).max_upload_bytes
        2097152
        >>> Settings.from_env({"ISTAKA_ALLOWED_HOSTS": "club.lan, obs.lan"}).allowed_hosts
        ('club.lan', 'obs.lan')

        Any numeric limit is set by ``ISTAKA_`` and its name (``istaka serve --limit NAME=VALUE``):

        >>> Settings.from_env({"ISTAKA_BODY_GAP_SECONDS": "5"}).body_gap_seconds
        5.0
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
        kwargs.update(limits_from_env(env))
        kwargs["load_pipeline"] = env.get("ISTAKA_NO_MODEL", "") != "1"
        kwargs["store_url"] = env.get("ISTAKA_STORE") or None
        kwargs["store_ephemeral"] = env.get("ISTAKA_STORE_EPHEMERAL", "") == "1"
        kwargs["owner_token"] = env.get("ISTAKA_OWNER_TOKEN") or None
        for name in ("allowed_hosts", "allowed_origins"):
            text = env.get(f"ISTAKA_{name.upper()}", "")
            kwargs[name] = tuple(part.strip() for part in text.split(",") if part.strip())
        return cls(**kwargs)

    @property
    def min_frame_interval(self) -> float:
        """Seconds between two frames read on one stream."""
        return 1.0 / self.max_stream_fps


def limit_names() -> dict[str, type]:
    """The numeric limits of ``Settings``, by name, with their type (int or float)."""
    return {
        f.name: int if f.type in ("int", int) else float
        for f in fields(Settings)
        if f.type in ("int", "float", int, float)
    }


def limits_from_env(env: Mapping[str, str]) -> dict[str, Any]:
    """The limits that ``ISTAKA_<NAME>`` variables set; ``ValueError`` naming a bad value."""
    out: dict[str, Any] = {}
    for name, kind in limit_names().items():
        text = env.get(f"ISTAKA_{name.upper()}")
        if text is None:
            continue
        try:
            out[name] = kind(text)
        except ValueError:
            raise ValueError(f"ISTAKA_{name.upper()}: {text!r} is not a {kind.__name__}") from None
    return out
