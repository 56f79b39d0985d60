"""Rendering many labelled images: one seed per image, YOLO labels, JSON sidecars, a data.yaml.

Image ``i`` of a run with seed ``S`` is drawn from ``SeedSequence([S, i])`` alone, so it is the same
bytes whatever the number of workers or the order the workers finish in.

Layout of an output folder::

    DIR/images/s{S}_{i:06d}.jpg     the photo
    DIR/labels/s{S}_{i:06d}.txt     YOLO boxes of the labelled tiles: class cx cy w h (normalised);
                                    with labels="obb", oriented boxes: class x1 y1 .. x4 y4
    DIR/sidecars/s{S}_{i:06d}.json  the ground truth (docs/synth.md)
    DIR/data.yaml                   ultralytics dataset file (53 classes)

>>> image, truth = render_sample(7, 0)
>>> image.shape, truth["seed"], truth["index"]
((480, 640, 3), 7, 0)
"""

from __future__ import annotations

import json
import multiprocessing as mp
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from vision.training.data_real import obb_line, polygon_to_obb
from vision.training.synth.render import render_scene
from vision.training.synth.scene import SCENE_KINDS, sample_scene
from vision.types import CLASS_NAMES


def sample_rng(seed: int, index: int) -> np.random.Generator:
    """The generator of image ``index`` of a run seeded ``seed``."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(index)]))


# Every kind of picture render_sample makes: the renderer's scenes and real photos framed again.
SCENES = (*SCENE_KINDS, "real_reframe")


def render_sample(
    seed: int,
    index: int,
    pool_name: str = "train",
    size: tuple[int, int] = (640, 480),
    rules: str | None = None,
    scene_kind: str = "rack",
) -> tuple[np.ndarray, dict]:
    """Render image ``index`` of a run: BGR image and sidecar dict (``scene_kind``: see
    ``vision.training.synth.scene.sample_scene``; ``real_reframe``: a real training photo framed
    again, ``vision.training.synth.real.reframe_sample``)."""
    rng = sample_rng(seed, index)
    if scene_kind == "real_reframe":
        from vision.training.synth.real import reframe_sample

        image, truth = reframe_sample(rng)
    else:
        scene = sample_scene(rng, pool_name, size, rules, scene_kind)
        image, truth = render_scene(scene, rng)
    truth = {"image": stem(seed, index) + ".jpg", "seed": int(seed), "index": int(index), **truth}
    return image, truth


def stem(seed: int, index: int) -> str:
    return f"s{seed}_{index:06d}"


def yolo_lines(truth: dict) -> list[str]:
    """YOLO label lines (class cx cy w h, normalised) of the labelled tiles, in sidecar order."""
    w, h = truth["width"], truth["height"]
    lines = []
    for t in truth["tiles"]:
        if not t["labelled"]:
            continue
        x0, y0, x1, y1 = t["box"]
        lines.append(
            f"{t['class']} {(x0 + x1) / 2 / w:.6f} {(y0 + y1) / 2 / h:.6f} "
            f"{(x1 - x0) / w:.6f} {(y1 - y0) / h:.6f}"
        )
    return lines


def follow_quad(corners: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """A rectangle's four corners ``(4, 2)`` renamed to follow a face ``quad`` (top-left,
    top-right, bottom-right, bottom-left of the tile): the same way round, and starting at the
    corner that puts each one nearest its namesake.

    >>> square = np.float32([[0, 10], [0, 0], [10, 0], [10, 10]])
    >>> follow_quad(square, np.float32([[1, 1], [9, 1], [9, 9], [1, 9]])).tolist()
    [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]]
    """
    corners, quad = np.asarray(corners, np.float32), np.asarray(quad, np.float32)
    if (cv2.contourArea(corners, oriented=True) < 0) != (cv2.contourArea(quad, oriented=True) < 0):
        corners = corners[::-1]
    starts = [np.roll(corners, -k, axis=0) for k in range(4)]
    return min(starts, key=lambda c: float(np.linalg.norm(c - quad, axis=1).sum()))


def oriented_corners(truth: dict) -> list[tuple[dict, np.ndarray]]:
    """(tile, corners) of each labelled tile with a face quad: the smallest rotated rectangle
    around the part of the face inside the image, in pixels ``(4, 2)``, its corners named after
    the tile (:func:`follow_quad`: top-left, top-right, bottom-right, bottom-left of the tile as
    it stands; an upside-down face is drawn on an upright tile)."""
    w, h = truth["width"], truth["height"]
    frame = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    out = []
    for t in truth["tiles"]:
        if not t["labelled"] or t.get("quad") is None:
            continue
        # tiered close-ups: the part of the face the picture shows (a tier in front hides the rest)
        quad = np.float32(t.get("visible_quad") or t["quad"])
        if cv2.contourArea(quad, oriented=True) < 0:
            quad = quad[::-1]  # intersectConvexConvex wants both polygons the same way round
        area, inside = cv2.intersectConvexConvex(quad, frame)
        if area <= 0 or inside is None:
            continue
        polygon = (inside.reshape(-1, 2) / np.float32([w, h])).reshape(-1)
        corners = np.float32(polygon_to_obb(polygon, w, h)).reshape(4, 2) * np.float32([w, h])
        out.append((t, follow_quad(corners, np.float32(t["quad"]))))
    return out


def obb_lines(truth: dict) -> list[str]:
    """Oriented-box label lines (class x1 y1 .. x4 y4, normalised) of the labelled tiles
    (:func:`oriented_corners`): the corners start at the tile's top-left, so the label also says
    which way the tile stands (``vision.crops`` ``straight: corners``)."""
    size = np.float32([truth["width"], truth["height"]])
    return [
        obb_line(t["class"], (corners / size).reshape(-1)) for t, corners in oriented_corners(truth)
    ]


LABELLERS = {"box": yolo_lines, "obb": obb_lines}


def encode_jpeg(image: np.ndarray, quality: int) -> bytes:
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()


def write_data_yaml(out: Path) -> Path:
    """An ultralytics data file for a rendered folder (the same images serve train and val).

    It has no ``path:`` key, so ultralytics resolves ``images`` next to the YAML file wherever
    the folder is moved or committed.
    """
    names = "\n".join(f"  {i}: {n}" for i, n in enumerate(CLASS_NAMES))
    text = (
        "# written by istaka synth; paths are relative to this file\n"
        f"train: images\nval: images\nnames:\n{names}\n"
    )
    path = out / "data.yaml"
    path.write_text(text)
    return path


_JOB: dict = {}


def _init_worker(job: dict) -> None:
    cv2.setNumThreads(1)  # one image per process; threads inside OpenCV would fight over 2 cores
    _JOB.update(job)


def _render_one(index: int) -> str:
    job = _JOB
    image, truth = render_sample(
        job["seed"], index, job["pool"], job["size"], job["rules"], job["scene"]
    )
    out = Path(job["out"])
    name = stem(job["seed"], index)
    (out / "images" / f"{name}.jpg").write_bytes(encode_jpeg(image, job["quality"]))
    lines = LABELLERS[job.get("labels", "box")](truth)
    (out / "labels" / f"{name}.txt").write_text("".join(line + "\n" for line in lines))
    (out / "sidecars" / f"{name}.json").write_text(json.dumps(truth, separators=(",", ":")))
    return name


def render_dataset(
    out: Path,
    n: int,
    seed: int,
    workers: int = 1,
    pool_name: str = "train",
    size: tuple[int, int] = (640, 480),
    quality: int = 90,
    rules: str | None = None,
    start: int = 0,
    progress: bool = True,
    scene: str = "rack",
    labels: str = "box",
) -> list[str]:
    """Render images ``start .. start+n-1`` of seed ``seed`` into ``out``; returns the stems.

    ``labels``: ``box`` (upright YOLO boxes) or ``obb`` (oriented boxes, for an OBB detector).
    """
    if labels not in LABELLERS:
        raise ValueError(f"labels must be one of {sorted(LABELLERS)}, got {labels!r}")
    if n < 1:
        raise ValueError(f"--n must be at least 1, got {n}")
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    for sub in ("images", "labels", "sidecars"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    job = {
        "seed": seed,
        "pool": pool_name,
        "size": size,
        "rules": rules,
        "out": str(out),
        "quality": quality,
        "scene": scene,
        "labels": labels,
    }
    indices = range(start, start + n)
    names: list[str] = []
    if workers == 1:
        threads = cv2.getNumThreads()
        _init_worker(job)
        try:
            names = list(_progress(map(_render_one, indices), n, progress))
        finally:
            cv2.setNumThreads(threads)  # leave the caller's OpenCV as it was
    else:
        # spawn, not fork: a fork after OpenCV has run its thread pool can hang the children
        ctx = mp.get_context("spawn")
        with ctx.Pool(workers, initializer=_init_worker, initargs=(job,)) as pool:
            it = pool.imap(_render_one, indices, chunksize=4)
            names = list(_progress(it, n, progress))
    write_data_yaml(out)
    return names


def _progress(it: Iterator[str], total: int, enabled: bool) -> Iterator[str]:
    if not enabled:
        return it
    from tqdm import tqdm

    return iter(tqdm(it, total=total, unit="img", desc="synth"))
