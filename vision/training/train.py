"""Train a recognition model from a config under ``models/`` with ultralytics, offline.

A config names the ultralytics model YAML (never a downloadable checkpoint), the data, the training
arguments and where the shipped weights go::

    name: tile_detector            # run folder runs/<name>, and the default output stem
    task: detect                   # detect, classify or obb (oriented boxes)
    model: yolo11n.yaml            # architecture only: trained from scratch
    data: datasets/real.yaml       # detection data YAML, or a classification folder
    prepare: [real]                # build steps run first when their output is missing
    output: models/tile_detector.pt
    weights: models/other.pt       # optional: start from a local checkpoint (same architecture)
    keep: last                     # optional: ship the last epoch (default best: ultralytics' pick)
    train: {epochs: 60, imgsz: 320, hsv_h: 0.0, fliplr: 0.0, ...}

A config may also say how its generated data are built, when missing::

    synth: {out: datasets/build/synth2k, n: 2000, seed: 1}     # istaka synth (training styles)
    crops:                                                     # istaka crops
      out: datasets/build/crops96
      size: 96
      augment: true                                            # vision.crops.camera_crop
      sources: {datasets/build/real: 4, datasets/build/synth2k: 1}   # copies per tile

``crops`` may add ``background: {datasets/build/real: 3}``: not-a-tile crops per image, a 54th
class (``vision.crops.NOT_A_TILE``) the recogniser uses to drop stray boxes.
``straight: true`` cuts each tile along its oriented-box label, stood upright (sources with
``labels: obb``; the classifier of an oriented-box detector), on its long side; per source,
``straight: {SET: long, SET2: corners}``, ``corners`` standing each tile as its label's corner
order says (renders, whose labels name the tile's top-left corner first); ``plain_first:
false`` sends every copy, the first too, through ``camera_crop``.
``squash`` (a list) adds squashed copies of a YOLO set's images, as a camera higher above the
rack (or lower beside the table) sees them: ``{src: datasets/build/real_obb, split: train, out:
datasets/build/real_obb_squash, copies: 1, seed: 0, factor: [0.5, 0.85], across_p: 0.25}``; each
copy shrinks the height (or, with probability ``across_p``, the width) to a factor drawn from
``factor``.  Labels in YOLO's normalised coordinates stay as they are (``squash_set``).
``synth`` may also be a list of such sets (each may add ``scene: table`` for tiles laid out on
the table, see ``vision.training.synth.scene``, ``pool: wide`` for another style pool than
``train``, see ``vision.training.synth.styles``, and ``labels: obb`` for oriented-box labels), and
``augment`` a mapping of ``vision.training.crops.CameraAugment`` ranges
(``{degrees: 15, wide_degrees: 50, wide_p: 0.3}``).

Example::

    istaka train models/tile_detector.yaml            # fresh run (seeded)
    istaka train models/tile_detector.yaml --resume   # continue runs/<name>/weights/last.pt
"""

from __future__ import annotations

import multiprocessing as mp
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vision.recognizer import offline_environment

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNS_DIR = REPO_ROOT / "runs"
TASKS = ("detect", "classify", "obb")  # obb: oriented boxes (a tile's box turns with it)

# Colour is the main cue on a tile: no hue jitter, no mirror images (a mirrored 6 is no tile), and
# only small rotations so a 6 does not turn into a 9.  Plots need font downloads: off.
SAFE_DEFAULTS: dict[str, Any] = {
    "pretrained": False,
    "plots": False,
    "amp": False,
    "hsv_h": 0.0,
    "fliplr": 0.0,
    "flipud": 0.0,
    "degrees": 5.0,
    "seed": 0,
    "deterministic": True,
    "device": "cpu",
    "workers": 2,
    "verbose": False,
}


def _repo_path(path: str | Path) -> Path:
    """A config's path: absolute as given, else relative to the repository."""
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path


@dataclass
class TrainConfig:
    """A parsed training config (see the module docstring)."""

    name: str
    task: str
    model: str
    data: str
    output: Path
    train: dict[str, Any] = field(default_factory=dict)
    prepare: list[str] = field(default_factory=list)
    weights: Path | None = None  # local checkpoint whose matching layers initialise the model
    synth: list[dict[str, Any]] = field(default_factory=list)  # rendered sets to build if missing
    crops: dict[str, Any] = field(default_factory=dict)  # crop set to export when missing
    squash: list[dict[str, Any]] = field(default_factory=list)  # squashed copies to build
    # which epoch goes to ``output``: "best" (ultralytics' pick, by the validation split's fitness)
    # or "last" (a rule fixed before training that must not lean on the validation split)
    keep: str = "best"

    @classmethod
    def load(cls, path: Path | str) -> TrainConfig:
        """Read and check a config YAML."""
        import yaml

        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no training config at {path}")
        raw = yaml.safe_load(path.read_text()) or {}
        missing = [k for k in ("task", "model", "data") if k not in raw]
        if missing:
            raise ValueError(f"{path}: missing keys {missing}")
        if raw["task"] not in TASKS:
            raise ValueError(f"{path}: task must be one of {TASKS}, got {raw['task']!r}")
        if str(raw["model"]).endswith(".pt"):
            raise ValueError(f"{path}: model must be an architecture YAML (no downloads here)")
        name = str(raw.get("name", path.stem))
        output = Path(raw.get("output", f"models/{name}.pt"))
        keep = str(raw.get("keep", "best"))
        if keep not in ("best", "last"):
            raise ValueError(f"{path}: keep must be best or last, got {keep!r}")
        return cls(
            name=name,
            task=raw["task"],
            model=str(raw["model"]),
            data=str(raw["data"]),
            output=_repo_path(output),
            train=dict(raw.get("train") or {}),
            prepare=list(raw.get("prepare") or []),
            weights=REPO_ROOT / raw["weights"] if raw.get("weights") else None,
            synth=_synth_sets(raw.get("synth"), path),
            crops=dict(raw.get("crops") or {}),
            squash=_squash_sets(raw.get("squash"), path),
            keep=keep,
        )

    def data_path(self) -> Path:
        return _repo_path(self.data)


def _synth_sets(raw: Any, path: Path) -> list[dict[str, Any]]:
    """The ``synth`` key as a list of rendered sets (one mapping or a list of them)."""
    if not raw:
        return []
    sets = [raw] if isinstance(raw, dict) else list(raw)
    for s in sets:
        if not isinstance(s, dict) or "out" not in s or "n" not in s:
            raise ValueError(f"{path}: each synth set needs 'out' and 'n', got {s!r}")
    return [dict(s) for s in sets]


SQUASH_FACTOR = (0.5, 0.85)  # a squashed copy keeps 50-85 % of its height (or width)


def _squash_sets(raw: Any, path: Path) -> list[dict[str, Any]]:
    """The ``squash`` key as a list of mappings, each with ``src`` and ``out``."""
    if not raw:
        return []
    sets = [raw] if isinstance(raw, dict) else list(raw)
    for s in sets:
        if not isinstance(s, dict) or "src" not in s or "out" not in s:
            raise ValueError(f"{path}: each squash set needs 'src' and 'out', got {s!r}")
        unknown = set(s) - {"src", "out", "split", "copies", "seed", "factor", "across_p"}
        if unknown:
            raise ValueError(f"{path}: unknown squash keys {sorted(unknown)}")
        lo, hi = s.get("factor", SQUASH_FACTOR)
        if not 0 < lo <= hi <= 1:
            raise ValueError(f"{path}: squash factor must satisfy 0 < low <= high <= 1, got {s}")
    return [dict(s) for s in sets]


def squash_set(
    src: Path,
    out: Path,
    split: str | None = None,
    copies: int = 1,
    seed: int = 0,
    factor: tuple[float, float] = SQUASH_FACTOR,
    across_p: float = 0.25,
) -> int:
    """Write squashed copies of a YOLO set's images (``src/images[/split]``) with their labels to
    ``out/images`` and ``out/labels``; return how many images were written.

    Each copy's height, or with probability ``across_p`` its width, shrinks to a factor drawn
    from ``factor`` (INTER_AREA): the foreshortening of a camera higher above a rack, or lower
    beside a table.  YOLO labels (boxes or oriented corners) are normalised to the image's width
    and height, so they stay the same text.  Seeded per image name: the same files every run."""
    import zlib

    import cv2
    import numpy as np

    from vision.training.crops import list_images

    images_dir = src / "images" / split if split else src / "images"
    labels_dir = src / "labels" / split if split else src / "labels"
    if not images_dir.is_dir():
        raise FileNotFoundError(f"no images to squash in {images_dir}")
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(parents=True, exist_ok=True)
    written = 0
    for image_path in list_images(images_dir):
        label = labels_dir / f"{image_path.stem}.txt"
        image = cv2.imread(str(image_path))
        if image is None:
            raise ValueError(f"{image_path}: not an image")
        rng = np.random.default_rng([seed, zlib.crc32(image_path.name.encode())])
        h, w = image.shape[:2]
        for k in range(copies):
            f = float(rng.uniform(*factor))
            across = rng.random() < across_p
            size = (max(1, round(w * f)), h) if across else (w, max(1, round(h * f)))
            squashed = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
            stem = f"{image_path.stem}_sq{k}"
            cv2.imwrite(
                str(out / "images" / f"{stem}.jpg"), squashed, [cv2.IMWRITE_JPEG_QUALITY, 95]
            )
            text = label.read_text() if label.is_file() else ""
            (out / "labels" / f"{stem}.txt").write_text(text)
            written += 1
    return written


def resolve_data_yaml(path: Path, out_dir: Path) -> Path:
    """Copy a detection data YAML to ``out_dir`` with its ``path`` made absolute.

    Ultralytics reads a relative ``path`` from the working directory; ours are relative to the
    YAML itself, so a command works from any directory.
    """
    import yaml

    data = yaml.safe_load(Path(path).read_text())
    root = Path(data.get("path") or ".")
    data["path"] = str(root if root.is_absolute() else (Path(path).parent / root).resolve())
    out_dir.mkdir(parents=True, exist_ok=True)
    resolved = out_dir / f"{Path(path).stem}.resolved.yaml"
    resolved.write_text(yaml.safe_dump(data, sort_keys=False))
    return resolved


def prepare(steps: list[str]) -> None:
    """Build the generated data a config needs, when it is not there yet."""
    from vision.training import data_real

    for step in steps:
        if step == "real":
            if not (data_real.DEFAULT_OUT / "labels" / "val").is_dir():
                data_real.convert()
        elif step == "real_obb":
            if not (data_real.DEFAULT_OUT_OBB / "labels" / "val").is_dir():
                data_real.convert(out=data_real.DEFAULT_OUT_OBB, obb=True)
        elif step == "crops":
            from vision.training import crops

            if not (crops.DEFAULT_OUT / "val").is_dir():
                crops.export_default()
        elif step == "synth":
            out = REPO_ROOT / "datasets" / "build" / "synth"
            if not (out / "data.yaml").is_file():
                from vision.training.synth.dataset import render_dataset

                render_dataset(out, 350, 1, workers=2)
        else:
            raise ValueError(f"unknown prepare step {step!r} (use real, real_obb, crops or synth)")


def prepare_generated(config: TrainConfig, workers: int = 2) -> None:
    """Render the config's ``synth`` sets and export its ``crops`` set, each only when missing."""
    for spec in config.synth:
        from vision.training.synth.dataset import render_dataset

        out = _repo_path(spec["out"])
        n = int(spec["n"])
        have = len(list((out / "images").glob("*"))) if (out / "images").is_dir() else 0
        if have < n:
            render_dataset(
                out,
                n,
                int(spec.get("seed", 1)),
                workers=workers,
                progress=False,
                **({"scene": spec["scene"]} if "scene" in spec else {}),
                **({"pool_name": spec["pool"]} if "pool" in spec else {}),
                **({"labels": spec["labels"]} if "labels" in spec else {}),
            )
    for spec in config.squash:
        out = _repo_path(spec["out"])
        if not (out / "labels").is_dir():
            options = {k: v for k, v in spec.items() if k not in ("src", "out")}
            squash_set(_repo_path(spec["src"]), out, **options)
    if config.crops:
        out = _repo_path(config.crops["out"])
        if not (out / "val").is_dir():
            jobs = _crop_jobs(config.crops, out)
            if workers > 1 and len(jobs) > 1:
                # one process per source: each source has its own seed and file prefix, so the
                # crops are the same files whatever the number of workers
                ctx = mp.get_context("spawn")
                with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx) as pool:
                    list(pool.map(_export_source, jobs))
            else:
                for job in jobs:
                    _export_source(job)


def _crop_jobs(spec: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    """One ``vision.crops.export_split_set`` call per source of a config's ``crops`` key."""
    from vision.training.crops import CROP_SIZE

    sources = spec.get("sources") or {}
    background = spec.get("background") or {}
    straight = spec.get("straight", False)  # true, or per source: long / corners
    return [
        {
            "sources": [_repo_path(src)],
            "out": out,
            "copies": int(copies),
            "jitter": float(spec.get("jitter", 0.08)),
            "seed": int(spec.get("seed", 0)) + i,
            "size": int(spec.get("size", CROP_SIZE)),
            "augment": spec.get("augment", False),
            "background": int(background.get(src, 0)),
            "straight": straight.get(src, False) if isinstance(straight, dict) else straight,
            "plain_first": bool(spec.get("plain_first", True)),
        }
        for i, (src, copies) in enumerate(sources.items())
    ]


def _export_source(job: dict[str, Any]) -> None:
    from vision.training import crops

    crops.export_split_set(**{**job, "augment": _augment(job["augment"])})


def _augment(raw: Any) -> Any:
    """A crops ``augment`` value: true/false, or a mapping of ``CameraAugment`` fields."""
    from vision.training.crops import CameraAugment

    if isinstance(raw, dict):
        return CameraAugment(**raw)
    return bool(raw)


CONFIG_DIRS = (REPO_ROOT / "models", REPO_ROOT / "models" / "stages")


def config_for_output(weights: Path) -> Path | None:
    """The config in ``models/`` or ``models/stages/`` whose ``output`` is ``weights``."""
    import yaml

    for folder in CONFIG_DIRS:
        for path in sorted(folder.glob("*.yaml")):
            raw = yaml.safe_load(path.read_text()) or {}
            if "output" in raw and _repo_path(raw["output"]) == Path(weights):
                return path
    return None


def train(config: TrainConfig, resume: bool = False, **overrides: Any) -> Path:
    """Train (or resume) the config's model; copy its best (or, with ``keep: last``, its last)
    epoch to ``config.output`` and return it.

    A config that starts from weights no file holds yet trains the config that makes them first
    (``models/stages/``), so ``istaka train models/tile_detector.yaml`` in a clean clone rebuilds
    the shipped detector's whole chain, from scratch, with nothing but the committed data.
    """
    offline_environment()
    from ultralytics import YOLO

    if config.weights is not None and not config.weights.is_file() and not resume:
        upstream = config_for_output(config.weights)
        if upstream is None:
            raise FileNotFoundError(
                f"{config.name}: no initial weights at {config.weights}, and no config in "
                "models/ or models/stages/ makes them"
            )
        print(f"{config.name}: first training {upstream.name}, which makes {config.weights.name}")
        train(TrainConfig.load(upstream), **overrides)

    prepare(config.prepare)
    # rendering and crop export use as many processes as the data loader is given
    prepare_generated(config, workers=max(1, int(overrides.get("workers", 2))))
    run_dir = RUNS_DIR / config.name
    last = run_dir / "weights" / "last.pt"
    started = time.time()
    if resume:
        if not last.exists():
            raise FileNotFoundError(f"nothing to resume: {last} does not exist")
        YOLO(str(last)).train(resume=True)
    else:
        args = {**SAFE_DEFAULTS, **config.train, **overrides}
        data = config.data_path()
        if data.suffix in (".yaml", ".yml"):
            data = resolve_data_yaml(data, RUNS_DIR / "data")
        if config.weights is None:
            model = YOLO(config.model, task=config.task)
        elif config.task == "obb":
            # an upright-box detector seeds an oriented-box one: build the YAML's model and copy
            # every layer whose shape matches (backbone and neck; the OBB head starts fresh)
            if not config.weights.is_file():
                raise FileNotFoundError(f"{config.name}: no initial weights at {config.weights}")
            model = YOLO(config.model, task=config.task)
            args["pretrained"] = str(config.weights)
        else:
            # Start from a local checkpoint of the same architecture: ultralytics rebuilds the
            # model for this data and copies every layer whose shape matches (a new head for
            # other classes starts fresh).  Never a download.
            if not config.weights.is_file():
                raise FileNotFoundError(f"{config.name}: no initial weights at {config.weights}")
            model = YOLO(str(config.weights), task=config.task)
            # pretrained=False would make the classify trainer reset every layer it copied.
            args["pretrained"] = str(config.weights)
        model.train(
            data=str(data),
            project=str(RUNS_DIR),
            name=config.name,
            exist_ok=True,
            **args,
        )
    config.output.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(kept_weights(run_dir, config.keep), config.output)
    ship(config.output)
    print(f"trained {config.name} in {time.time() - started:.0f} s -> {config.output}")
    return config.output


def kept_weights(run_dir: Path, keep: str = "best") -> Path:
    """The checkpoint of a finished run that ``keep`` names (``best`` falls back to ``last``)."""
    weights = run_dir / "weights"
    chosen = weights / f"{keep}.pt"
    if keep == "best" and not chosen.exists():
        chosen = weights / "last.pt"
    if not chosen.exists():
        raise FileNotFoundError(f"no {chosen.name} in {weights}")
    return chosen


def ship(weights: Path) -> Path:
    """Drop the optimizer state and keep fp16 weights (26 MB -> ~5 MB), as ultralytics does."""
    from ultralytics.utils.torch_utils import strip_optimizer

    strip_optimizer(str(weights))
    return weights


def export_onnx(weights: Path, imgsz: int, dynamic: bool) -> Path:
    """Export ``weights`` (.pt) to ONNX beside it; ``dynamic``: any batch and input size.

    ``simplify=False``: onnxslim is not installed and must not be fetched at run time.
    """
    offline_environment()
    from ultralytics import YOLO

    weights = Path(weights)
    if not weights.is_file():
        raise FileNotFoundError(f"no weights to export at {weights}")
    out = YOLO(str(weights)).export(
        format="onnx", imgsz=imgsz, dynamic=dynamic, simplify=False, device="cpu"
    )
    return Path(out)
