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
    INK_DIM,
    NUM_CLASSES,
    NUMBER_OF,
    LayoutReading,
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

# What the per-set reader may use and how hard it is held (measured: docs/calibration.md)
# the ink's colour only: a number term over the shipped logits read the held-out styles a little
# better (95.55 against 95.38 %) and the real validation photos a little worse (one exact photo
# lost); the numeral's shape no better (docs/calibration.md)
READER_COLUMNS = np.arange(NUM_CLASSES, NUM_CLASSES + 3 + 3 + 1 + INK_BINS)
READER_L2 = (1e-2, 1e3, 1e3)  # colour, number, identity terms (number and identity: off)
AUGMENT_COPIES = 0  # augmented copies of each calibration photo (0: the photos as taken)


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


def kept_examples(
    recognizer: Any, kept: list[tuple[np.ndarray, dict]]
) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of tiles kept in the data folder (``DataStore.crops()``): each read
    again by the shipped classifier from its box."""
    feats = [np.zeros((0, NUM_CLASSES + INK_DIM), np.float32)]
    labels: list[int] = []
    by_photo: dict[int, tuple[np.ndarray, list[dict]]] = {}
    for image, record in kept:
        by_photo.setdefault(id(image), (image, []))[1].append(record)
    for image, records in by_photo.values():
        boxes = np.float32([r["box"] for r in records])
        probs = recognizer.classify(image, boxes)
        probs = probs[:, :NUM_CLASSES] / probs[:, :NUM_CLASSES].sum(axis=1, keepdims=True)
        feats.append(tile_features(image, boxes, probs))
        labels += [Tile.parse(r["label"]).index for r in records]
    return np.concatenate(feats), np.array(labels, int)


def check_profile(reader: Reader, features: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """The shipped reader's and the profile's identity on labelled tiles; ``ProfileError`` when
    the profile reads them worse (it is refused)."""
    shipped = float((features[:, :NUM_CLASSES].argmax(axis=1) == labels).mean())
    mine = float((reader.probs(features).argmax(axis=1) == labels).mean())
    if mine < shipped:
        raise ProfileError(
            f"profile refused: it reads its own calibration photos worse than the shipped model "
            f"({mine:.2%} against {shipped:.2%}); check the layout and take the photos again"
        )
    return {"shipped_identity": shipped, "profile_identity": mine}


def make_profile(
    name: str,
    recognizer: Any,
    photos: list[CalibrationPhoto],
    kept: list[tuple[np.ndarray, dict]] | None = None,
    *,
    copies: int = AUGMENT_COPIES,
    seed: int = 0,
    fit: Any = None,
) -> tuple[Profile, dict[str, Any]]:
    """Fit a profile from calibration photos and kept tiles, check it on them (refused,
    ``ProfileError``, if it reads them worse than the shipped model) and return it (unsaved)
    with a report (tiles, seconds, both identities).  ``fit``: another fitting function
    ``(features, labels) -> Reader`` (tests)."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    feats, labels = [], []
    for photo in photos:
        f, y, _ = photo.examples()
        feats.append(f)
        labels.append(y)
        if copies:
            tiles = photo.labelled_tiles()
            boxes = np.float32([t.box for t in tiles])
            fa, ya = augmented_examples(recognizer, photo.image, boxes, y, copies, rng)
            feats.append(fa)
            labels.append(ya)
    plain = slice(None, None, 2 if copies else 1)  # the photos as taken, not their copies
    check_x, check_y = feats[plain], labels[plain]
    n_kept = 0
    if kept:
        fk, yk = kept_examples(recognizer, kept)
        feats.append(fk)
        labels.append(yk)
        check_x, check_y = [*check_x, fk], [*check_y, yk]
        n_kept = len(yk)
    if not feats:
        raise ProfileError("nothing to learn from: no calibration photo and no kept tiles")
    x, y = np.concatenate(feats), np.concatenate(labels)
    check_x, check_y = np.concatenate(check_x), np.concatenate(check_y)
    fit = fit or (
        lambda a, b: fit_reader(a, b, l2=READER_L2, columns=READER_COLUMNS, learn_scale=True)
    )
    reader = fit(x, y)
    check = check_profile(reader, check_x, check_y)
    seconds = time.perf_counter() - t0
    report = {
        "photos": len(photos),
        "tiles": int(len(check_y) - n_kept),
        "kept": n_kept,
        "seconds": round(seconds, 2),
        **{k: round(v, 4) for k, v in check.items()},
    }
    manifest = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "classifier": classifier_digest(),
        "reader_kind": "colour terms over the ink's colour, on the shipped logits and marginals",
        "photos": [p.name for p in photos],
        "tiles": report["tiles"],
        "kept": n_kept,
        "seconds": report["seconds"],
        "check": {k: report[k] for k in ("shipped_identity", "profile_identity")},
    }
    return Profile(name=name, reader=reader, manifest=manifest), report


# ---------------------------------------------------------------------------- augmentation


def augment_photo(
    image: np.ndarray, boxes: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One changed copy of a calibration photo, as rack photos differ from it: seen at a slant
    (squashed up to half height, sheared), turned a little, smaller, blurred, lit warmer or
    cooler, recompressed.  Returns the image and the tiles' boxes (the hulls of their moved
    corners)."""
    import cv2

    h, w = image.shape[:2]
    squash = float(rng.uniform(0.55, 1.0))
    shear = float(rng.normal(0, 0.12))
    angle = float(rng.normal(0, 4))
    scale = float(np.exp(rng.uniform(np.log(0.45), 0.0)))
    a = np.array([[1.0, shear, 0.0], [0.0, squash, 0.0]])
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), angle, scale)
    m = rot @ np.vstack([a, [0, 0, 1]])
    corners = np.float64([[0, 0], [w, 0], [w, h], [0, h]])
    moved = corners @ m[:, :2].T + m[:, 2]
    lo = moved.min(axis=0)
    m[:, 2] -= lo
    size = np.ceil(moved.max(axis=0) - lo).astype(int)
    out = cv2.warpAffine(
        image,
        m,
        (int(size[0]), int(size[1])),
        flags=cv2.INTER_AREA,
        borderMode=cv2.BORDER_REPLICATE,
    )
    pts = np.stack(
        [boxes[:, [0, 1]], boxes[:, [2, 1]], boxes[:, [2, 3]], boxes[:, [0, 3]]], axis=1
    ).astype(np.float64)
    pts = pts @ m[:, :2].T + m[:, 2]
    new_boxes = np.concatenate([pts.min(axis=1), pts.max(axis=1)], axis=1)
    jitter = rng.normal(0, 0.04, new_boxes.shape) * np.repeat(
        new_boxes[:, 2:] - new_boxes[:, :2], 2, axis=1
    )
    new_boxes = new_boxes + jitter
    if rng.random() < 0.6:
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.3, 1.4)))
    gains = np.exp(rng.normal(0, 0.08, 3)) * float(rng.uniform(0.7, 1.2))
    out = np.clip(out.astype(np.float32) * gains, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 95))])
    if ok:
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out, new_boxes.astype(np.float32)


def augmented_examples(
    recognizer: Any,
    image: np.ndarray,
    boxes: np.ndarray,
    labels: np.ndarray,
    copies: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of ``copies`` augmented copies of one photo's labelled tiles, read
    by the shipped classifier (``recognizer.classify``) as it would read them."""
    feats = [np.zeros((0, NUM_CLASSES + INK_DIM), np.float32)]
    labs = [np.zeros(0, int)]
    for _ in range(copies):
        aug, aug_boxes = augment_photo(image, boxes, rng)
        probs = recognizer.classify(aug, aug_boxes)
        probs = probs[:, :NUM_CLASSES] / probs[:, :NUM_CLASSES].sum(axis=1, keepdims=True)
        feats.append(tile_features(aug, aug_boxes, probs))
        labs.append(labels)
    return np.concatenate(feats), np.concatenate(labs)
