"""Making a per-set profile (training side): labelled crops in, a fitted re-reader out, plus the
rendered calibration photos the benchmark and the tests use.

The runtime half (loading a profile, applying it to a ``Recognition``, reading the layout) is
``vision.profiles``; this module fits one (:func:`fit_profile`) from the crops of calibration
photos (``vision.profiles.label_layout``) and kept corrections, checks it against the shipped
reader on its own calibration photos and saves it.  It needs numpy and OpenCV only, so
``istaka calibrate`` runs in a read-only install; the rendering helpers below need the synth
package (Pillow) and are for benchmarks and tests.

Rendering: :func:`render_layout` draws a calibration photo of one set style (the four colours as
four rows of 1-13 and the false jokers on a fifth row, lying on the table, seen from above);
:func:`render_rack` draws an ordinary rack photo of the same style (``sample_scene`` with every
face redrawn in that style).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from okey import Tile
from vision.profiles import (
    COLOUR_OF,
    INK_BINS,
    NUM_CLASSES,
    NUMBER_OF,
    LayoutReading,
    NetReader,
    Profile,
    ProfileError,
    Reader,
    classifier_digest,
    label_layout,
    marginal_logs,
    tile_features,
)
from vision.types import Recognition

# ---------------------------------------------------------------------------- fitting


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_reader(
    features: np.ndarray,
    labels: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    l2: tuple[float, float, float] = (1e-2, 1e-2, 1e-1),
    steps: int = 300,
    lr: float = 0.05,
    columns: np.ndarray | None = None,
    learn_scale: bool = False,
) -> Reader:
    """Fit the factorised correction (``vision.profiles.Reader``) to labelled features by
    full-batch Adam on the cross-entropy plus L2 (``l2``: colour, number, identity terms; the
    identity term, with one or two examples a class, is held hardest; ``columns``: the feature
    columns the terms may use, the others are ignored; ``learn_scale``: also fit the shipped
    logits' scale).  Every term starts at zero and the shipped logits' scale at one: with no
    evidence the profile reads as shipped."""
    x_raw = np.asarray(features, np.float64)
    y = np.asarray(labels, int)
    n, f = x_raw.shape
    w_s = np.ones(n) if weights is None else np.asarray(weights, np.float64)
    w_s = w_s / w_s.sum()
    mean = x_raw.mean(axis=0)
    std = x_raw.std(axis=0) + 1e-3
    x = (x_raw - mean) / std
    if columns is not None:  # features left out: pinned at their mean (weights stay zero)
        keep = np.zeros(f, bool)
        keep[np.asarray(columns)] = True
        x[:, ~keep] = 0.0
        std[~keep] = 1e9
    shipped = x_raw[:, :NUM_CLASSES]
    by_colour, by_number = marginal_logs(shipped)
    by_colour, by_number = by_colour[:, COLOUR_OF], by_number[:, NUMBER_OF]
    onehot = np.eye(NUM_CLASSES)[y]
    params = {
        "scale": np.ones(1),
        "marginals": np.zeros(2),
        "w_colour": np.zeros((f, 5)),
        "b_colour": np.zeros(5),
        "w_number": np.zeros((f, 14)),
        "b_number": np.zeros(14),
        "w_identity": np.zeros((f, NUM_CLASSES)),
        "b_identity": np.zeros(NUM_CLASSES),
    }
    decay = {"w_colour": l2[0], "w_number": l2[1], "w_identity": l2[2], "b_identity": l2[2]}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    colour_sum = np.eye(5)[COLOUR_OF]  # (53, 5): identity -> its colour
    number_sum = np.eye(14)[NUMBER_OF]
    for step in range(1, steps + 1):
        colour = x @ params["w_colour"] + params["b_colour"]
        number = x @ params["w_number"] + params["b_number"]
        ident = x @ params["w_identity"] + params["b_identity"]
        m_c, m_n = params["marginals"]
        z = params["scale"][0] * shipped + m_c * by_colour + m_n * by_number
        z = z + colour[:, COLOUR_OF] + number[:, NUMBER_OF] + ident
        g = (_softmax(z) - onehot) * w_s[:, None]  # d loss / d z
        gc, gn = g @ colour_sum, g @ number_sum
        grads = {
            "scale": np.array([(g * shipped).sum()]) if learn_scale else np.zeros(1),
            "marginals": np.array([(g * by_colour).sum(), (g * by_number).sum()]),
            "w_colour": x.T @ gc,
            "b_colour": gc.sum(axis=0),
            "w_number": x.T @ gn,
            "b_number": gn.sum(axis=0),
            "w_identity": x.T @ g,
            "b_identity": g.sum(axis=0),
        }
        for k, lam in decay.items():
            grads[k] = grads[k] + lam * params[k]
        for k in params:
            m[k] = 0.9 * m[k] + 0.1 * grads[k]
            v2[k] = 0.999 * v2[k] + 0.001 * grads[k] ** 2
            mh, vh = m[k] / (1 - 0.9**step), v2[k] / (1 - 0.999**step)
            params[k] = params[k] - lr * mh / (np.sqrt(vh) + 1e-8)
    return Reader(
        mean=mean.astype(np.float32),
        std=std.astype(np.float32),
        scale=float(params["scale"][0]),
        **{k: params[k].astype(np.float32) for k in params if k != "scale"},
    )


# --------------------------------------------------------------------- rendering (synth)


def restyle(scene, style):  # noqa: ANN001, ANN201 - synth types imported lazily
    """The same scene with every face (rack, table, backs, far racks) drawn in ``style``."""
    from vision.training.synth.scene import FaceSource

    def face(f: FaceSource) -> FaceSource:
        return FaceSource(f.seed, f.tile, style, f.upside_down)

    for t in scene.tiles + scene.backs:
        t.face = face(t.face)
    for far in scene.far_racks:
        for t in far.tiles:
            t.face = face(t.face)
    return replace(scene, style=style)


def heldout_style(index: int, pool_name: str = "heldout"):  # noqa: ANN201
    """Set style number ``index`` of a pool (drawn from its own seed; typeface and false-joker
    mark taken in turn, so a few styles cover them all)."""
    from vision.training.synth.face import sample_set_style
    from vision.training.synth.styles import pool

    rng = np.random.default_rng(np.random.SeedSequence([19, 7, int(index)]))
    style = sample_set_style(rng, pool_name)
    # every typeface and false-joker mark of the pool in turn, the rest drawn
    fonts, marks = pool(pool_name).fonts, pool(pool_name).joker_marks
    return replace(style, font=fonts[index % len(fonts)], joker_mark=marks[index % len(marks)])


def render_rack(style, seed: int, index: int, size: tuple[int, int] = (640, 480)):  # noqa: ANN001, ANN201
    """An ordinary rack photo of a set drawn in ``style``: (BGR image, sidecar)."""
    from vision.training.synth.dataset import sample_rng
    from vision.training.synth.render import render_scene
    from vision.training.synth.scene import sample_scene

    rng = sample_rng(seed, index)
    scene = restyle(sample_scene(rng, style_pool_of(style), size, None, "rack"), style)
    return render_scene(scene, rng)


def style_pool_of(style) -> str:  # noqa: ANN001
    """The pool whose racks and tables a styled photo borrows (held-out pools keep their own)."""
    from vision.training.synth.styles import POOLS

    for name in ("heldout", "train"):
        if style.font in POOLS[name].fonts:
            return name
    return "wide"


def layout_tiles(jokers: int = 2) -> list[list[Tile]]:
    """The calibration layout, row by row: R, Y, B, K each 1-13, then the false jokers."""
    rows = [[Tile(c * 13 + n) for n in range(13)] for c in range(4)]
    if jokers:
        rows.append([Tile(52)] * jokers)
    return rows


def render_layout(
    style,  # noqa: ANN001
    seed: int,
    size: tuple[int, int] = (960, 720),
    rows: list[list[Tile]] | None = None,
    colour_order: str = "RYBK",
):
    """A calibration photo: the layout (``rows``, default :func:`layout_tiles`, colour rows in
    ``colour_order``) lying face up on the table, seen from above at a small tilt, in ``style``.
    Returns (BGR image, sidecar)."""
    from vision.training.synth.render import render_scene
    from vision.training.synth.scene import (
        TILE_W,
        SceneTile,
        _face,
        make_camera,
        sample_scene,
    )

    rng = np.random.default_rng(np.random.SeedSequence([19, 11, int(seed)]))
    scene = sample_scene(rng, style_pool_of(style), size, "classic", "table")
    if rows is None:
        by_colour = {"RYBK"[c]: r for c, r in enumerate(layout_tiles()[:4])}
        rows = [by_colour[c] for c in colour_order] + layout_tiles()[4:]
    tile_w = float(rng.uniform(2.4, 2.8))
    tile_size = (tile_w, tile_w * float(rng.uniform(1.35, 1.5)), float(rng.uniform(0.8, 1.1)))
    pitch_x = tile_w * float(rng.uniform(1.03, 1.15))
    pitch_y = tile_size[1] * float(rng.uniform(1.1, 1.35))
    cols = max(len(r) for r in rows)
    centre = np.array([0.0, -28.0])
    tiles = []
    for r, row in enumerate(rows):
        for k, tile in enumerate(row):
            x = centre[0] + (k - (cols - 1) / 2) * pitch_x + rng.normal(0, 0.12)
            y = centre[1] + ((len(rows) - 1) / 2 - r) * pitch_y + rng.normal(0, 0.12)
            tiles.append(
                SceneTile(
                    size=tile_size,
                    tile=tile,
                    face=_face(rng, tile, style),
                    upside_down=False,
                    on_rack=False,
                    role="table",
                    x=float(x),
                    y=float(y),
                    spin=float(rng.normal(0, 2.0)),
                )
            )
    w, _ = size
    hfov = float(rng.uniform(55, 70))
    f = (w / 2) / np.tan(np.deg2rad(hfov) / 2)
    span = cols * pitch_x + TILE_W
    params = {
        "hfov": hfov,
        "distance": float(f * span / (w * rng.uniform(0.78, 0.92))),
        "tilt": float(rng.uniform(0, 22)),
        "azimuth": float(-90 + rng.normal(0, 8)),
        "table_target": [float(centre[0]), float(centre[1])],
        "roll": float(rng.normal(0, 2)),
        "offset": [0.0, 0.0],
    }
    scene = replace(
        scene,
        tiles=tiles,
        backs=[],
        fingers=[],
        far_racks=[],
        light=replace(scene.light, row_shadow=0.0),
        camera=make_camera(params, scene.rack, size),
        camera_params=params,
    )
    scene = restyle(scene, style)
    return render_scene(scene, rng)


def render_rack_layout(
    style,  # noqa: ANN001
    seed: int,
    colours: str = "RY",
    jokers: int = 2,
    size: tuple[int, int] = (960, 720),
):
    """A calibration photo of the layout on the rack: ``colours`` (two letters) as the upper and
    the lower row, 1-13 left to right, the false jokers lying on the table in front; seen the way
    a rack is photographed in play (the renderer's own rack cameras, the whole layout in view).
    Two such photos (``RY`` and ``BK``) hold the whole layout.  Returns (BGR image, sidecar)."""
    from vision.training.synth.render import render_scene
    from vision.training.synth.scene import SceneTile, _face, make_camera, sample_scene

    rng = np.random.default_rng(np.random.SeedSequence([19, 13, int(seed)]))
    scene = sample_scene(rng, style_pool_of(style), size, "okey101", "rack")
    placed = [t for t in scene.tiles if t.on_rack and t.slot is not None]
    slots = np.array([t.slot for t in placed], float)
    xs = np.array([t.x for t in placed])
    pitch, x0 = np.polyfit(slots, xs, 1)
    tile_size = placed[0].size
    first = 1 if slots.max() >= 14 else 0
    tiles = []
    for row, colour in enumerate(colours):
        for n in range(13):
            tile = Tile("RYBK".index(colour) * 13 + n)
            tiles.append(
                SceneTile(
                    size=tile_size,
                    tile=tile,
                    face=_face(rng, tile, style),
                    upside_down=False,
                    on_rack=True,
                    role="hand",
                    row=row,
                    slot=first + n,
                    x=float(x0 + (first + n) * pitch + rng.normal(0, 0.05)),
                    spin=float(rng.normal(0, 1.0)),
                )
            )
    centre = float(x0 + (first + 6) * pitch)
    for k in range(jokers):
        tiles.append(
            SceneTile(
                size=tile_size,
                tile=Tile(52),
                face=_face(rng, Tile(52), style),
                upside_down=False,
                on_rack=False,
                role="table",
                x=centre + (k - (jokers - 1) / 2) * tile_size[0] * 1.1,
                y=float(rng.uniform(-9, -6)),
                spin=float(rng.normal(0, 3)),
            )
        )
    params = dict(scene.camera_params)
    w = size[0]
    f = (w / 2) / np.tan(np.deg2rad(params["hfov"]) / 2)
    span = 14 * pitch
    params["distance"] = float(f * span / (w * rng.uniform(0.75, 0.9)))
    params["target"] = [centre, float(params["target"][1])]
    params["offset"] = [0.0, 0.0]
    params["roll"] = float(rng.normal(0, 3))
    scene = replace(
        scene,
        tiles=tiles,
        fingers=[],
        camera=make_camera(params, scene.rack, size),
        camera_params=params,
    )
    return render_scene(restyle(scene, style), rng)


# ---------------------------------------------------------------------------- making a profile

# What the colour reader may use and how hard it is held (measured: docs/calibration.md)
# the ink's colour only: a number term over the shipped logits read the held-out styles a little
# better (95.55 against 95.38 %) and the real validation photos a little worse (one exact photo
# lost); the numeral's shape no better (docs/calibration.md)
READER_COLUMNS = np.arange(NUM_CLASSES, NUM_CLASSES + 3 + 3 + 1 + INK_BINS)
READER_L2 = (1e-2, 1e3, 1e3)  # colour, number, identity terms (number and identity: off)

# The fine-tuned reader (chosen on the tuning styles 20-25: docs/calibration.md)
FT_LAYERS = (6, 7, 8, 9, 10)  # the blocks trained; the rest and every BatchNorm frozen
FT_EPOCHS = 3
FT_LR = 1e-4
FT_BATCH = 32
FT_ANCHOR = 1e-2  # L2 of the trained weights towards the shipped ones
FT_EXAMPLES = 3000  # rack-like copies in all (30 a tile for a layout's ~100 tiles)
FT_MAX_COPIES = 30
FT_MIX = 0.5  # weight of the profile's log-probabilities against the shipped reading's
FT_DEADLINE = 240.0  # s: training stops here whatever is left (5 minutes in all is the limit)
CROP = 96  # the classifier's input


@dataclass
class LabelledTile:
    box: tuple[float, float, float, float]
    label: Tile
    read: Tile


@dataclass
class CalibrationPhoto:
    """A calibration photo, what the shipped recogniser found in it and the layout's labels."""

    name: str
    image: np.ndarray
    recognition: Recognition
    layout: LayoutReading

    @classmethod
    def read(cls, recognizer: Any, image: np.ndarray, name: str = "photo") -> CalibrationPhoto:
        """Recognise ``image`` and label it from the layout (``LayoutError`` if it is not it)."""
        recognition = recognizer.recognize(image)
        return cls(name, image, recognition, label_layout(recognition))

    def labelled_tiles(self) -> list[LabelledTile]:
        tiles = self.recognition.tiles
        return [LabelledTile(tiles[t.index].box, t.label, t.read) for t in self.layout.labelled]

    def examples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(features, labels, the shipped reader's probabilities) of the labelled tiles."""
        tiles = self.recognition.tiles
        idx = [t.index for t in self.layout.labelled]
        probs = np.stack([tiles[i].probs for i in idx])
        feats = tile_features(self.image, [tiles[i].box for i in idx], probs)
        labels = np.array([t.label.index for t in self.layout.labelled])
        return feats, labels, probs


@dataclass
class Group:
    """Labelled tiles of one photo to learn from: their boxes, labels and the shipped reading."""

    image: np.ndarray
    boxes: np.ndarray  # (k, 4) xyxy pixels
    labels: np.ndarray  # (k,) identities
    shipped: np.ndarray  # (k, 53) the shipped recogniser's probabilities


def photo_group(photo: CalibrationPhoto) -> Group:
    """The labelled tiles of a calibration photo, read as the recogniser read them."""
    tiles = photo.recognition.tiles
    idx = [t.index for t in photo.layout.labelled]
    return Group(
        photo.image,
        np.float32([tiles[i].box for i in idx]).reshape(-1, 4),
        np.array([t.label.index for t in photo.layout.labelled], int),
        np.stack([tiles[i].probs for i in idx]).astype(np.float32),
    )


def kept_groups(recognizer: Any, kept: list[tuple[np.ndarray, dict]]) -> list[Group]:
    """Tiles kept in the data folder (``DataStore.crops()``), by photo, each read again by the
    shipped classifier from its box."""
    by_photo: dict[int, tuple[np.ndarray, list[dict]]] = {}
    for image, record in kept:
        by_photo.setdefault(id(image), (image, []))[1].append(record)
    groups = []
    for image, records in by_photo.values():
        boxes = np.float32([r["box"] for r in records])
        probs = recognizer.classify(image, boxes)
        probs = probs[:, :NUM_CLASSES] / probs[:, :NUM_CLASSES].sum(axis=1, keepdims=True)
        labels = np.array([Tile.parse(r["label"]).index for r in records], int)
        groups.append(Group(image, boxes, labels, probs.astype(np.float32)))
    return groups


def check_readings(shipped: np.ndarray, mine: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """The shipped reader's and the profile's identity on labelled tiles (probabilities of
    each); ``ProfileError`` when the profile reads them worse (it is refused)."""
    before = float((shipped.argmax(axis=1) == labels).mean())
    after = float((mine.argmax(axis=1) == labels).mean())
    if after < before:
        raise ProfileError(
            f"profile refused: it reads its own calibration photos worse than the shipped model "
            f"({after:.2%} against {before:.2%}); check the layout and take the photos again"
        )
    return {"shipped_identity": before, "profile_identity": after}


def check_profile(reader: Reader, features: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """:func:`check_readings` of a colour reader on its features (shipped logits first)."""
    return check_readings(features[:, :NUM_CLASSES], reader.probs(features), labels)


def torch_available() -> bool:
    """Whether the fine-tuned reader can be made here (torch and ultralytics: the train extra)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "ultralytics"))


def make_profile(
    name: str,
    recognizer: Any,
    photos: list[CalibrationPhoto],
    kept: list[tuple[np.ndarray, dict]] | None = None,
    *,
    method: str = "auto",
    seed: int = 0,
    fit: Any = None,
) -> tuple[Profile, dict[str, Any]]:
    """Fit a profile from calibration photos and kept tiles, check it on them (refused,
    ``ProfileError``, if it reads them worse than the shipped model) and return it (unsaved)
    with a report (tiles, seconds, both identities, the reader made).

    ``method``: ``finetune`` (:func:`finetune_classifier`: a fine-tuned copy of the classifier,
    needs torch), ``colour`` (:func:`fit_reader`: colour terms over the ink, numpy only), or
    ``auto`` (``finetune`` where torch is installed).  ``fit``: another fitting function
    ``(features, labels) -> Reader`` for the colour reader (tests)."""
    t0 = time.perf_counter()
    groups = [photo_group(p) for p in photos]
    n_photo_tiles = sum(len(g.labels) for g in groups)
    kept_part = kept_groups(recognizer, kept) if kept else []
    groups += kept_part
    n_kept = sum(len(g.labels) for g in kept_part)
    if not groups or not n_photo_tiles + n_kept:
        raise ProfileError("nothing to learn from: no calibration photo and no kept tiles")
    if method == "auto":
        method = "finetune" if torch_available() else "colour"
    if method == "finetune" and not torch_available():
        raise ProfileError(
            "the fine-tuned reader needs torch and ultralytics (the train extra); install them "
            "or choose the colour reader"
        )
    labels = np.concatenate([g.labels for g in groups])
    shipped = np.concatenate([g.shipped for g in groups])
    reader: Reader | NetReader
    training: dict[str, Any] = {}
    if method == "finetune":
        reader, training = _net_reader(groups, seed)
        kind = "finetune"
        mine = np.concatenate([reader.probs(g.image, g.boxes, g.shipped) for g in groups])
        check = check_readings(shipped, mine, labels)
    elif method == "colour":
        x = np.concatenate([tile_features(g.image, g.boxes, g.shipped) for g in groups])
        fit = fit or (
            lambda a, b: fit_reader(a, b, l2=READER_L2, columns=READER_COLUMNS, learn_scale=True)
        )
        reader, kind = fit(x, labels), "colour"
        check = check_profile(reader, x, labels)
    else:
        raise ValueError(f"unknown calibration method {method!r}: use auto, finetune or colour")
    seconds = time.perf_counter() - t0
    report = {
        "photos": len(photos),
        "tiles": n_photo_tiles,
        "kept": n_kept,
        "reader": kind,
        **({"training": training} if training else {}),
        "seconds": round(seconds, 2),
        **{k: round(v, 4) for k, v in check.items()},
    }
    manifest = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "classifier": classifier_digest(),
        "reader_kind": READER_KINDS[kind],
        "photos": [p.name for p in photos],
        "tiles": report["tiles"],
        "kept": n_kept,
        "seconds": report["seconds"],
        **({"training": training} if training else {}),
        "check": {k: report[k] for k in ("shipped_identity", "profile_identity")},
    }
    return Profile(name=name, reader=reader, manifest=manifest), report


READER_KINDS = {
    "finetune": "the classifier's last blocks fine-tuned on rack-like copies of the set's tiles, "
    "averaged with the shipped reading",
    "colour": "colour terms over the ink's colour, on the shipped logits and marginals",
}


def _net_reader(groups: list[Group], seed: int) -> tuple[NetReader, dict[str, Any]]:
    """The fine-tuned reader of labelled tiles: each tile's box crop and rack-like copies of it
    (:func:`rack_like`), :func:`finetune_classifier` on them."""
    from vision.crops import CROP_PAD, crop_tile

    rng = np.random.default_rng(seed)
    n = sum(len(g.labels) for g in groups)
    copies = int(np.clip(FT_EXAMPLES // max(n, 1), 1, FT_MAX_COPIES))
    crops, labels = [], []
    for g in groups:
        for box, label in zip(g.boxes, g.labels, strict=True):
            crops.append(crop_tile(g.image, tuple(float(v) for v in box), CROP, CROP_PAD))
            crops += [rack_like(g.image, box, rng) for _ in range(copies)]
            labels += [int(label)] * (copies + 1)
    onnx_bytes, trained_for = finetune_classifier(crops, np.array(labels), seed=seed)
    return NetReader(onnx_bytes, weight=FT_MIX, size=CROP), {"copies": copies, **trained_for}


# ---------------------------------------------------------------------------- the fine-tuned reader


def rack_like(
    image: np.ndarray, box: Any, rng: np.random.Generator, size: int = CROP
) -> np.ndarray:
    """One copy of a tile of a calibration photo as a rack photo might show it: the photo around
    the tile shrunk so the tile is 26-60 px tall, squashed (to 0.6, in 7 of 10) and sheared (a
    rack seen at a slant), turned a little; the box shifted and resized by a few percent; blurred
    (half), darker or brighter, noisier; one side hidden by a finger-, frame- or rack-coloured
    band (3 in 10); JPEG-compressed.  A ``size`` crop cut as ``vision.crops.crop_tile`` cuts."""
    import cv2

    from vision.crops import CROP_PAD, straight_crop

    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy, w, h = (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1
    scale = rng.uniform(26, 60) / h
    squash = rng.uniform(0.6, 1.0) if rng.random() < 0.7 else 1.0
    a = np.array([[1.0, rng.normal(0, 0.12)], [0.0, squash]]) * scale
    turn = np.radians(rng.normal(0, 2))
    a = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]]) @ a
    reach = 1.6 * max(w, h)
    ox, oy = max(cx - reach, 0.0), max(cy - reach, 0.0)
    around = image[int(oy) : int(cy + reach), int(ox) : int(cx + reach)]
    side = int(np.ceil(2 * reach * scale * 1.3)) + 2
    shift = np.array([side / 2, side / 2]) - a @ np.array([cx - ox, cy - oy])
    warped = cv2.warpAffine(
        around, np.hstack([a, shift[:, None]]), (side, side), borderMode=cv2.BORDER_REPLICATE
    )
    corners = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]]) - [ox, oy]
    pts = corners @ a.T + shift
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    (rx, ry), (rw, rh) = (lo + hi) / 2, hi - lo
    j = rng.normal(0, 0.04, 4)
    rect = (rx + j[0] * rw, ry + j[1] * rh, rw * (1 + j[2]), rh * (1 + j[3]), 0.0)
    if rng.random() < 0.5:
        warped = cv2.GaussianBlur(warped, (0, 0), rng.uniform(0.3, 1.0))
    gains = np.exp(rng.normal(0, 0.02, 3)) * rng.uniform(0.75, 1.1)
    noise = rng.normal(0, 3, warped.shape)
    warped = np.clip(warped.astype(np.float32) * gains + noise, 0, 255).astype(np.uint8)
    crop = straight_crop(warped, rect, size, CROP_PAD, "given")
    if rng.random() < 0.3:
        k = int(rng.uniform(0.12, 0.4) * size)
        colour = HIDERS[rng.integers(len(HIDERS))]
        where = [np.s_[:k], np.s_[-k:], np.s_[:, :k], np.s_[:, -k:]][rng.integers(4)]
        crop[where] = colour
    ok, buf = cv2.imencode(".jpg", crop, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(50, 95))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else crop


HIDERS = ((120, 150, 210), (40, 40, 40), (60, 90, 140), (0, 0, 0))  # BGR: skin, dark, rack, frame


def finetune_classifier(
    crops: list[np.ndarray],
    labels: np.ndarray,
    *,
    weights: Any = None,
    seed: int = 0,
    epochs: int = FT_EPOCHS,
    deadline: float = FT_DEADLINE,
    threads: int = 1,
) -> tuple[bytes, dict[str, Any]]:
    """A copy of the shipped classifier (``weights``: its ``.pt``, default the manifest's) with
    blocks ``FT_LAYERS`` trained on ``crops`` (BGR, the classifier's size) and their ``labels``
    by AdamW, the other blocks and every BatchNorm's statistics frozen, the trained weights held
    towards the shipped ones (``FT_ANCHOR``); exported to ONNX.  Returns the ONNX bytes and what
    training did (steps taken of those planned, seconds: ``deadline`` stops it early).  Runs on
    ``threads`` CPU threads (one: on this busy 2-core machine torch's two made ``istaka calibrate``
    three times slower, 263 against 89 s).
    Needs torch and ultralytics (the train extra)."""
    import torch

    from vision.recognizer import MANIFEST, RecognizerSpec, offline_environment

    offline_environment()
    from ultralytics import YOLO

    if weights is None:
        spec = RecognizerSpec.load(MANIFEST)
        weights = (spec.classifier or spec.detector).with_suffix(".pt")
    torch.manual_seed(seed)
    threads_before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _finetune(YOLO(str(weights)).model.float(), crops, labels, seed, epochs, deadline)
    finally:
        torch.set_num_threads(threads_before)


def _finetune(
    model: Any, crops: list[np.ndarray], labels: np.ndarray, seed: int, epochs: int, deadline: float
) -> tuple[bytes, dict[str, Any]]:
    import io
    import warnings

    import torch

    for p in model.parameters():
        p.requires_grad = False
    trained = [p for i in FT_LAYERS for p in model.model[i].parameters()]
    for p in trained:
        p.requires_grad = True
    anchors = [p.detach().clone() for p in trained]
    optimiser = torch.optim.AdamW(trained, lr=FT_LR, weight_decay=0.0)
    x = np.stack([c[:, :, ::-1] for c in crops]).astype(np.float32) / 255.0
    x = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    y = torch.from_numpy(np.asarray(labels, np.int64))
    generator = torch.Generator().manual_seed(seed)
    planned = epochs * -(-len(y) // FT_BATCH)
    steps = 0
    t0 = time.perf_counter()
    model.train()
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.eval()
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=generator)
        for i in range(0, len(y), FT_BATCH):
            batch = order[i : i + FT_BATCH]
            out = model(x[batch])
            out = out[0] if isinstance(out, list | tuple) else out
            loss = torch.nn.functional.cross_entropy(out, y[batch])
            loss = loss + FT_ANCHOR * sum(
                ((p - a) ** 2).sum() for p, a in zip(trained, anchors, strict=True)
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            steps += 1
            if time.perf_counter() - t0 > deadline:
                break
        if time.perf_counter() - t0 > deadline:
            break
    model.eval()
    seconds = round(time.perf_counter() - t0, 1)
    trained_for = {"steps": steps, "planned": planned, "seconds": seconds}
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            torch.zeros(1, 3, CROP, CROP),
            buf,
            input_names=["images"],
            output_names=["output0"],
            dynamic_axes={"images": {0: "batch"}, "output0": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    return buf.getvalue(), trained_for
