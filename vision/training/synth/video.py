"""Synthetic rack videos: one rack and hand, a drifting and shaking camera, flickering light and
a finger passing over the tiles now and then.  Used by the multi-frame vote benchmark and as the
browser's fake camera (``.y4m``, 4:2:0).

>>> frames, truths = render_video(seed=1, n_frames=3, size=(320, 240))
>>> len(frames), frames[0].shape, len(truths)
(3, (240, 320, 3), 3)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.training.synth.render import render_scene
from vision.training.synth.scene import (
    SKINS,
    Finger,
    Scene,
    rack_tile_cuboid,
    sample_scene,
    with_camera,
)

_VIDEO_STREAM = 2**31 - 1  # second entry of the seed sequence, apart from image indices


def _finger_windows(rng: np.random.Generator, n_frames: int) -> list[tuple[int, int]]:
    """Frame ranges during which a finger passes (about one pass per 60 frames)."""
    windows = []
    k = int(rng.integers(5, 30))
    while k < n_frames:
        length = int(rng.integers(10, 25))
        windows.append((k, min(n_frames, k + length)))
        k += length + int(rng.integers(25, 70))
    return windows


def render_video(
    seed: int,
    n_frames: int,
    size: tuple[int, int] = (640, 480),
    pool_name: str = "train",
) -> tuple[list[np.ndarray], list[dict]]:
    """Frames (BGR) of one rack seen by a hand-held camera, and each frame's sidecar dict.

    The hand and rack stay fixed; the camera drifts (slow sines) and shakes (small noise), the
    exposure flickers, and a finger slides over a tile and away during a few short windows.
    """
    if n_frames < 1:
        raise ValueError(f"n_frames must be at least 1, got {n_frames}")
    if size[0] % 2 or size[1] % 2:
        raise ValueError(f"video size must be even for 4:2:0, got {size[0]}x{size[1]}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), _VIDEO_STREAM]))
    scene = sample_scene(rng, pool_name, size)
    # keep the base view moderate so that drift does not leave the 0-60 degree range
    base = dict(scene.camera_params)
    base["tilt"] = min(base["tilt"], 50.0)
    scene = replace(scene, fingers=[])
    phases = rng.uniform(0, 2 * np.pi, 6)
    periods = rng.uniform(40, 120, 6)
    windows = _finger_windows(rng, n_frames)
    rack_tiles = [t for t in scene.tiles if t.on_rack]
    passes = []
    for _ in windows:
        t = rack_tiles[int(rng.integers(len(rack_tiles)))]
        front = rack_tile_cuboid(scene.rack, t).corners()[0]
        passes.append(
            (
                front,
                float(rng.uniform(60, 120)),
                float(rng.uniform(0.6, 0.9)),
                SKINS[int(rng.integers(len(SKINS)))],
            )
        )
    base_exposure = scene.light.exposure
    frames, truths = [], []
    for k in range(n_frames):
        frame_rng = np.random.default_rng(np.random.SeedSequence([int(seed), _VIDEO_STREAM, k]))
        wave = np.sin(2 * np.pi * k / periods + phases)
        params = dict(base)
        params["tilt"] = float(
            np.clip(base["tilt"] + 3.0 * wave[0] + frame_rng.normal(0, 0.2), 0, 60)
        )
        params["phi"] = base["phi"] + 4.0 * wave[1]
        params["distance"] = base["distance"] * (1 + 0.04 * wave[2])
        params["roll"] = base["roll"] + 1.5 * wave[3] + frame_rng.normal(0, 0.25)
        tx, tt = base["target"]
        params["target"] = [tx + 0.8 * wave[4] + frame_rng.normal(0, 0.04), tt + 0.3 * wave[5]]
        params["offset"] = list(base["offset"])
        frame_scene: Scene = with_camera(scene, params)
        flicker = 1 + 0.04 * np.sin(2 * np.pi * k / 7.3) + frame_rng.normal(0, 0.015)
        frame_scene = replace(
            frame_scene, light=replace(scene.light, exposure=base_exposure * flicker)
        )
        fingers = []
        for (start, stop), (front, angle, width, skin) in zip(windows, passes, strict=True):
            if start <= k < stop:
                # the tip slides in from below, rests on the tile, and slides out again
                phase = (k - start) / max(1, stop - start - 1)
                reach = 1 - abs(2 * phase - 1)
                v = -0.6 + 1.1 * reach
                tip = front[0] + 0.5 * (front[1] - front[0]) + v * (front[3] - front[0])
                fingers.append(Finger(tip=tip, angle=angle, width=width, skin=skin))
        frame_scene = replace(frame_scene, fingers=fingers)
        image, truth = render_scene(frame_scene, frame_rng)
        truth = {"frame": k, "seed": int(seed), **truth}
        frames.append(image)
        truths.append(truth)
    return frames, truths


def write_y4m(path: Path, frames: list[np.ndarray], fps: int) -> None:
    """Write YUV4MPEG2 (4:2:0, the format Chromium's fake camera reads)."""
    h, w = frames[0].shape[:2]
    with open(path, "wb") as fh:
        fh.write(f"YUV4MPEG2 W{w} H{h} F{fps}:1 Ip A1:1 C420jpeg\n".encode("ascii"))
        for frame in frames:
            fh.write(b"FRAME\n")
            fh.write(cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes())


def read_y4m(path: Path) -> list[np.ndarray]:
    """Read a 4:2:0 YUV4MPEG2 file written by ``write_y4m`` back into BGR frames."""
    data = Path(path).read_bytes()
    header_end = data.index(b"\n")
    fields = data[:header_end].split()
    if fields[0] != b"YUV4MPEG2":
        raise ValueError(f"{path} is not a YUV4MPEG2 file")
    w = int(next(f[1:] for f in fields if f.startswith(b"W")))
    h = int(next(f[1:] for f in fields if f.startswith(b"H")))
    frame_bytes = w * h * 3 // 2
    frames, pos = [], header_end + 1
    while pos < len(data):
        nl = data.index(b"\n", pos)
        pos = nl + 1
        yuv = np.frombuffer(data[pos : pos + frame_bytes], np.uint8).reshape(h * 3 // 2, w)
        frames.append(cv2.cvtColor(yuv, cv2.COLOR_YUV2BGR_I420))
        pos += frame_bytes
    return frames


def write_video(path: Path, frames: list[np.ndarray], fps: int = 15) -> None:
    """Write ``.y4m`` (raw 4:2:0) or ``.mp4`` (MPEG-4 part 2 through OpenCV)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".y4m":
        write_y4m(path, frames, fps)
        return
    if path.suffix.lower() != ".mp4":
        raise ValueError(f"video must be .mp4 or .y4m, got {path}")
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    if not writer.isOpened():
        raise RuntimeError(f"OpenCV cannot write MP4 here; use .y4m ({path})")
    for frame in frames:
        writer.write(frame)
    writer.release()
