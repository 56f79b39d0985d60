"""The recogniser: an image in, the tiles it shows out (boxes, identities, probabilities).

Two architectures share this class, chosen by the shipped manifest ``models/recognizer.yaml``:

- ``two_stage``: a one-class tile detector finds the tiles, a crop classifier reads each one;
- ``single``: one detector whose 53 classes are the identities.

The two-stage detector may be an oriented-box one (manifest ``detector_task: obb``): its boxes
turn with the tiles, NMS compares them turned, the classifier reads each tile cut along its turned
box and stood upright, and the recogniser reports the turned boxes' upright hulls as the boxes.

The backends run the same networks with the same pre- and post-processing written here (letterbox,
box decoding, non-maximum suppression, crops), so they differ only in the engine
(``vision.engines``): ONNX Runtime (the default) or OpenVINO on the exported ``.onnx`` files, or
PyTorch on the ``.pt`` checkpoints.  Models load once, in the constructor; one ``Recognizer`` per
worker (the PyTorch modules are not thread-safe).

Example::

    import cv2
    from vision.recognizer import Recognizer

    recognizer = Recognizer.default()
    recognition = recognizer.recognize(cv2.imread("examples/rack_real.jpg"))
    print(" ".join(str(t.tile) for t in recognition.tiles))
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from okey import Tile
from vision.adapt import (
    View,
    colour_model,
    cut_share,
    cut_short,
    duplicates,
    hulls,
    ink_features,
    inside,
    map_back,
    nms_turned,
    photo_angle,
    plan_views,
    unify_angles,
)
from vision.crops import CROP_PAD, crop_tile, level_rect, straight_crop, upright_rect
from vision.engines import BACKENDS, available_backend, load_net
from vision.tiers import (
    BAND,
    MIN_RACK_TILES,
    STRIP_TILE,
    Strip,
    behind_chosen,
    choose_tiers,
    find_tiers,
    gap_slots,
    held_by,
    hidden_by_front,
    in_band,
    is_rack,
    midway,
    midway_holds,
    on_its_side,
    project,
    rack_up,
    shelf_pack,
    standing_tiles,
    strip_for,
    tier_score,
    tile_quad,
    tops_only_tiers,
    up_angle,
)
from vision.types import Recognition, TierView, TileReading
from vision.types import iou as box_iou
from vision.up import WayUp

# A rack whose up lies within this sine of level (about 30 degrees) is on its side: no sense of it
# is nearer the photo's up than the other.
SIDE_UP = 0.5
# A rack whose up turns more than this many degrees from the photo's up (either way) is read
# again from the photo turned a quarter so that it stands upright.
SIDEWAYS_READ = 45.0
# A rack whose up points down the photo this far (the up vector's y; cos 45 degrees) is read
# from the photo turned half round.
UPSIDE_DOWN = math.cos(math.radians(45.0))
# A rack whose first look's up lies this near level (the up vector's x; cos 30 degrees) is read
# from the photo turned a quarter before its tiers are searched; between this and 45 degrees from
# the photo's up, after, by its tiers' lean (``SIDEWAYS_READ``: the first look's up is looser).
ON_ITS_SIDE = math.cos(math.radians(30.0))
# A place between two tiles of a tier that the detector left empty is a tile when the classifier
# reads a tile there at least this surely (else an empty slot).
SLOT_TILE = 0.6
# A tile the tier stage finds keeps the first look's box when their centres lie within this share
# of a tile's width; from this share to the next they are one tile seen two ways (a box half a
# tile off, or across two tiers: the surer reading keeps its box); farther, two tiles.
AGREE = 0.25
REPLACED = 0.6
# A tile of a tier at the frame's edge and narrower than this share of its tier's tiles is cut by
# the frame (flagged, not read).
CUT_SHORT = 0.8
# Pixels between the strip pieces packed into one detector canvas (grey, as the letterbox), and
# the stride a canvas's sides are a multiple of.
MOSAIC_GAP = 8
STRIDE = 32

REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = REPO_ROOT / "models"
MANIFEST = MODELS_DIR / "recognizer.yaml"
# what the tier stage reads a rack from (``Recognizer._rack_view``): the photo no larger than
# needed, the first look's turned boxes scaled to it, that scale, the rack's up (a unit vector)
RackView = tuple[np.ndarray, np.ndarray, float, np.ndarray]
NUM_CLASSES = 53


@dataclass(frozen=True)
class RecognizerSpec:
    """What to load and how to run it (the fields of ``models/recognizer.yaml``)."""

    architecture: str  # "two_stage" or "single"
    detector: Path  # weights without suffix: ".pt" and ".onnx" sit side by side
    classifier: Path | None = None
    detector_imgsz: int = 320
    classifier_imgsz: int = 64
    conf: float = 0.25
    iou: float = 0.5
    default_backend: str = "onnx"
    detector_task: str = "detect"  # "obb": an oriented-box detector (its boxes' upright hulls)
    # obb only: a turned box wider than tall once levelled is read both ways (stood on its long
    # side, and levelled) and the surer reading kept; see Recognizer.classify
    read_both_ways: bool = False
    # obb only: drop a box when at least this share of its turned box lies under boxes the
    # detector is surer of (a box across two found tiles); 1.0 keeps every box
    max_covered: float = 1.0
    # Reading that adapts to the photo (``vision.adapt``; obb only; every one off by default).
    # a second look when the first pass's median tile is shorter than this (its long side, in
    # detector pixels; 0: never), at a view that brings it to ``second_look_target`` pixels
    second_look_small: float = 0.0
    second_look_target: float = 100.0
    # a second look when the tiles' dominant turn from upright lies in [from, to] degrees (the
    # view turns them upright); None: never
    second_look_turned: tuple[float, float] | None = None
    # the tiles' up direction decided for the whole photo when their dominant turn is at least
    # this many degrees (they are read both ways, the surer way kept for all); None: per tile
    up_vote_from: float | None = None
    # ... when the tiles agree on their turn at least this much (``vision.adapt.photo_angle``)
    up_vote_agree: float = 0.8
    # when the photo's up vote does not turn it: a tile whose stand-up turn is at least this
    # many degrees (on its side: the smaller turn is a coin toss) is also read turned over, the
    # surer reading kept; None: off
    up_each_from: float | None = None
    # ... and a tile whose box is nearly square (short side at least this share of the long: its
    # long side no longer tells which way the tile stands) read four ways; 1.0: off
    up_each_square: float = 1.0
    # ... and a tile the way-up model is sure stands upright or upside down once stood by its
    # smaller turn (that turn's log odds above any other turn's by this much; a nearly square box
    # left to the four ways) read that way only (a tile lying on a table faces the seat that put
    # it down; ``Recognizer._sure_turns``); None: off
    up_each_flip: float | None = None
    # colour decided within the photo (``vision.adapt.colour_model``)
    colour_model: bool = False
    # a box sharing this share of the smaller box's area with a surer box of like size is a
    # second box on one tile and dropped; 1.0: off
    merge_duplicates: float = 1.0
    # a tile with at least this share of its box outside the frame is flagged unreadable
    # ("cut"); 1.0: off
    unreadable_cut: float = 1.0
    # obb only: read a rack as a rack (``vision.tiers``): find its tiers, straighten each into a
    # strip, find the tiles again there and read them; tiles off the tiers and photos with no
    # tier are read by the whole-photo path
    tiers: bool = False
    # the way-up model (``vision.up``, an ONNX file without suffix): which way up a rack stands,
    # and a photo whose tiles are read one way for all (``up_vote_from``); None: as they are
    # found (a rack by the sense of its up nearer the photo's, tiles by their smaller turn)
    way_up: Path | None = None

    @classmethod
    def load(cls, path: Path = MANIFEST) -> RecognizerSpec:
        import yaml

        if not Path(path).is_file():
            raise FileNotFoundError(f"no recogniser manifest at {path}")
        raw = yaml.safe_load(Path(path).read_text())
        base = Path(path).parent
        classifier = raw.get("classifier")
        return cls(
            architecture=raw["architecture"],
            detector=base / raw["detector"],
            classifier=base / classifier if classifier else None,
            detector_imgsz=int(raw.get("detector_imgsz", 320)),
            classifier_imgsz=int(raw.get("classifier_imgsz", 64)),
            conf=float(raw.get("conf", 0.25)),
            iou=float(raw.get("iou", 0.5)),
            default_backend=str(raw.get("default_backend", "onnx")),
            detector_task=str(raw.get("detector_task", "detect")),
            read_both_ways=bool(raw.get("read_both_ways", False)),
            max_covered=float(raw.get("max_covered", 1.0)),
            second_look_small=float(raw.get("second_look_small", 0.0)),
            second_look_target=float(raw.get("second_look_target", 100.0)),
            second_look_turned=_pair(raw.get("second_look_turned")),
            up_vote_from=_optional(raw.get("up_vote_from")),
            up_vote_agree=float(raw.get("up_vote_agree", 0.8)),
            up_each_from=_optional(raw.get("up_each_from")),
            up_each_square=float(raw.get("up_each_square", 1.0)),
            up_each_flip=_optional(raw.get("up_each_flip")),
            colour_model=bool(raw.get("colour_model", False)),
            merge_duplicates=float(raw.get("merge_duplicates", 1.0)),
            unreadable_cut=float(raw.get("unreadable_cut", 1.0)),
            tiers=bool(raw.get("tiers", False)),
            way_up=base / raw["way_up"] if raw.get("way_up") else None,
        )


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def _pair(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError(f"a range needs two numbers [from, to], got {value!r}")
    return float(value[0]), float(value[1])


def wide(rect: np.ndarray | tuple[float, ...]) -> bool:
    """Whether a turned box ``(cx, cy, w, h, degrees)`` is wider than tall once levelled."""
    _, _, w, h, _ = level_rect(tuple(float(v) for v in rect))
    return w > h


def covered_boxes(turned: np.ndarray, scores: np.ndarray, max_covered: float) -> np.ndarray:
    """Which turned boxes ``(cx, cy, w, h, degrees)`` to drop: those with at least
    ``max_covered`` of their area under the boxes kept before them, taken surest first (a box
    spanning two tiles that are each found on their own).  Overlaps with several kept boxes add
    up.  Returns a boolean mask, True = drop.

    >>> boxes = np.float32([[10, 10, 10, 10, 0], [20, 10, 10, 10, 0], [15, 10, 10, 10, 0]])
    >>> covered_boxes(boxes, np.float32([0.9, 0.8, 0.7]), 0.8).tolist()
    [False, False, True]
    """
    import cv2

    drop = np.zeros(len(turned), bool)
    if max_covered >= 1.0 or len(turned) < 2:
        return drop
    rects = [((float(r[0]), float(r[1])), (float(r[2]), float(r[3])), float(r[4])) for r in turned]
    reach = np.hypot(turned[:, 2], turned[:, 3]) / 2  # a circle around each box
    kept: list[int] = []
    for i in np.argsort(-scores, kind="stable"):
        area = float(turned[i, 2] * turned[i, 3])
        under = 0.0
        for j in kept:
            if np.hypot(*(turned[i, :2] - turned[j, :2])) >= reach[i] + reach[j]:
                continue
            found, points = cv2.rotatedRectangleIntersection(rects[i], rects[j])
            if found != cv2.INTERSECT_NONE and points is not None and len(points) > 2:
                under += float(cv2.contourArea(cv2.convexHull(points)))
        if area > 0 and under >= max_covered * area:
            drop[i] = True
        else:
            kept.append(int(i))
    return drop


def letterbox(image: np.ndarray, size: int) -> tuple[np.ndarray, float, tuple[float, float]]:
    """Resize keeping the aspect ratio and pad to ``size`` x ``size`` (grey 114, as in training).

    Returns the padded image, the scale and the (x, y) padding, to map boxes back.
    """
    import cv2

    h, w = image.shape[:2]
    scale = min(size / h, size / w)
    nw, nh = round(w * scale), round(h * scale)
    resized = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_LINEAR)
    out = np.full((size, size, 3), 114, dtype=np.uint8)
    px, py = (size - nw) / 2, (size - nh) / 2
    top, left = int(round(py - 0.1)), int(round(px - 0.1))
    out[top : top + nh, left : left + nw] = resized
    return out, scale, (left, top)


def _stride_up(pixels: int) -> int:
    """``pixels`` rounded up to the detector's stride."""
    return -(-int(pixels) // STRIDE) * STRIDE


def to_tensor(images_bgr: list[np.ndarray]) -> np.ndarray:
    """BGR uint8 images of one size -> float32 NCHW RGB in 0..1 (the ultralytics input
    convention), in one OpenCV pass (a third of numpy's stack, flip, scale and transpose)."""
    import cv2

    return cv2.dnn.blobFromImages(list(images_bgr), 1 / 255.0, swapRB=True, crop=False)


def decode_detections(
    raw: np.ndarray, conf: float, iou: float, max_det: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """YOLO head output ``(4 + nc, N)`` -> (boxes ``(k, 4)`` xyxy, class scores ``(k, nc)``).

    Class-agnostic NMS: two tiles never share a place, whatever their classes.
    """
    import cv2

    pred = raw.T
    scores = pred[:, 4:]
    best = scores.max(axis=1)
    keep = best >= conf
    pred, scores, best = pred[keep], scores[keep], best[keep]
    if not len(pred):
        return np.zeros((0, 4), np.float32), np.zeros((0, scores.shape[1]), np.float32)
    cx, cy, w, h = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    xywh = np.stack([cx - w / 2, cy - h / 2, w, h], axis=1)
    idx = cv2.dnn.NMSBoxes(xywh.tolist(), best.tolist(), conf, iou, top_k=max_det)
    idx = np.asarray(idx, dtype=int).reshape(-1)
    return boxes[idx], scores[idx]


def decode_obb_detections(
    raw: np.ndarray, conf: float, iou: float, max_det: int = 100
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Oriented-box head output ``(4 + nc + 1, N)`` (centre, size, class scores, angle in
    radians) -> (upright hulls ``(k, 4)`` xyxy, class scores ``(k, nc)``, the turned boxes
    ``(k, 5)``: cx, cy, w, h, angle in degrees as OpenCV's ``RotatedRect``).

    NMS compares the turned boxes themselves, so tiles touching in a slanted column, whose upright
    boxes overlap, do not suppress each other.
    """
    import cv2

    pred = raw.T
    scores = pred[:, 4:-1]
    best = scores.max(axis=1)
    keep = best >= conf
    pred, scores, best = pred[keep], scores[keep], best[keep]
    if not len(pred):
        empty = np.zeros((0, 4), np.float32), np.zeros((0, scores.shape[1]), np.float32)
        return *empty, np.zeros((0, 5), np.float32)
    # one numpy call per column, not per box: np.degrees of the float32 angles as a column is
    # the float32 of each, as per box
    degrees = np.degrees(pred[:, -1]).tolist()
    rects = [
        ((cx, cy), (w, h), a)
        for (cx, cy, w, h), a in zip(pred[:, :4].tolist(), degrees, strict=True)
    ]
    idx = cv2.dnn.NMSBoxesRotated(rects, best.tolist(), conf, iou, top_k=max_det)
    idx = np.asarray(idx, dtype=int).reshape(-1)
    corners = np.stack([cv2.boxPoints(rects[i]) for i in idx]) if len(idx) else np.zeros((0, 4, 2))
    boxes = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1).astype(np.float32)
    turned = np.float32([[*rects[i][0], *rects[i][1], rects[i][2]] for i in idx]).reshape(-1, 5)
    return boxes, scores[idx], turned


def offline_environment() -> None:
    """Keep ultralytics (the PyTorch backend, training) from downloading weights, fonts or
    packages: nothing can be fetched at run time."""
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "false"


class Recognizer:
    """Finds and reads the tiles of an image; see the module docstring."""

    def __init__(self, spec: RecognizerSpec, backend: str | None = None) -> None:
        offline_environment()
        backend = backend or available_backend(spec.default_backend)
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")
        if spec.architecture not in ("two_stage", "single"):
            raise ValueError(f"unknown architecture {spec.architecture!r}")
        if spec.architecture == "two_stage" and spec.classifier is None:
            raise ValueError("a two_stage recogniser needs a classifier")
        if spec.detector_task not in ("detect", "obb"):
            raise ValueError(f"unknown detector_task {spec.detector_task!r}: use detect or obb")
        if spec.detector_task == "obb" and spec.architecture != "two_stage":
            raise ValueError("an oriented-box detector needs a two_stage classifier")
        self.spec = spec
        self.backend = backend
        self.detector = load_net(spec.detector, backend)
        self.classifier = (
            load_net(spec.classifier, backend, batches=True)
            if spec.architecture == "two_stage"
            else None
        )
        self.way_up = WayUp(spec.way_up.with_suffix(".onnx"), backend) if spec.way_up else None

    @classmethod
    def default(cls, backend: str | None = None) -> Recognizer:
        """The shipped recogniser (``models/recognizer.yaml``), on its default backend."""
        return cls(RecognizerSpec.load(MANIFEST), backend)

    def detect(self, image_bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tile boxes (xyxy, input pixels) and the detector's class scores."""
        boxes, scores, _ = self._detect(image_bgr)
        return boxes, scores

    def _detect(self, image_bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``detect`` plus, for an oriented-box detector, the turned boxes in input pixels."""
        size = self.spec.detector_imgsz
        padded, scale, (left, top) = letterbox(image_bgr, size)
        boxes, scores, turned = self._run_detector(padded)
        if turned is not None:
            turned[:, :2] = (turned[:, :2] - np.float32([left, top])) / scale
            turned[:, 2:4] /= scale
        boxes = (boxes - np.array([left, top, left, top], np.float32)) / scale
        h, w = image_bgr.shape[:2]
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, w)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, h)
        return boxes, scores, turned

    def _run_detector(self, padded: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The detector on an image already of an input size it takes: boxes, class scores and
        (oriented-box detector) turned boxes, in that image's pixels."""
        raw = self.detector(to_tensor([padded]))[0]
        if self.spec.detector_task == "obb":
            return decode_obb_detections(raw, self.spec.conf, self.spec.iou)
        return (*decode_detections(raw, self.spec.conf, self.spec.iou), None)

    def classify(
        self, image_bgr: np.ndarray, boxes: np.ndarray, turned: np.ndarray | None = None
    ) -> np.ndarray:
        """Class probabilities of the crops in ``boxes``: ``(k, 53)`` identities, or ``(k, 54)``
        when the classifier also knows "not a tile" (column 53, ``vision.crops.NOT_A_TILE``).

        With ``turned`` boxes (an oriented-box detector's), each tile is cut along its turned
        box and stood upright first (``vision.crops.straight_crop``).  With the manifest's
        ``read_both_ways``, a box wider than tall once levelled (a tile on its side, or a
        standing tile squashed by a camera high above the rack: its box alone cannot tell) is
        also read levelled, and the reading whose most probable identity is surer is kept; with
        ``up_each_from``, a tile on its side or boxed nearly square is also read turned
        (:meth:`_turns_each`), the surest reading kept the same way; with ``up_each_flip``, a
        tile the way-up model is sure of is stood its way and read that way only
        (:meth:`_sure_turns`)."""
        return self._read(image_bgr, boxes, turned)[0]

    def _read(
        self,
        image_bgr: np.ndarray,
        boxes: np.ndarray,
        turned: np.ndarray | None = None,
        up: float | None = None,
        each_way: bool = True,
        stand: float | None = None,
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``classify`` and the crops it read.  With ``up`` (a photo's dominant turn, manifest
        ``up_vote_from``) every tile is stood the same way, turned over for all when the way-up
        model reads them upside down.  With ``stand`` (a rack's turn, known) every tile is stood
        within a quarter turn of it and read that way only."""
        if not len(boxes):
            return np.zeros((0, NUM_CLASSES), np.float32), []
        size = self.spec.classifier_imgsz
        if turned is not None and stand is not None:
            crops = [
                straight_crop(image_bgr, tuple(r), size, CROP_PAD, "given")
                for r in unify_angles(turned, stand)
            ]
            probs = self.classifier(to_tensor(crops))
            return probs / probs.sum(axis=1, keepdims=True), crops
        if turned is None:
            crops = [crop_tile(image_bgr, tuple(b), size, CROP_PAD) for b in boxes]
            both: list[int] = []
        elif up is not None:
            # the photo's tiles all stood one way; the way-up model's summed odds say which
            crops = [
                straight_crop(image_bgr, tuple(r), size, CROP_PAD, "given")
                for r in unify_angles(turned, up)
            ]
            if self.way_up is not None and self.way_up.upside_down(crops) > 0:
                crops = [np.ascontiguousarray(c[::-1, ::-1]) for c in crops]
            both = []
        else:
            crops = [straight_crop(image_bgr, tuple(r), size, CROP_PAD) for r in turned]
            each = dict(self._turns_each(turned)) if each_way else {}
            if self.spec.up_each_flip is not None and each_way and self.way_up is not None:
                # the way-up model's turn where it is sure (a tile on a table faces the seat
                # that laid it): the crop stood that way and read that way only
                for i, k in self._sure_turns(crops, each):
                    crops[i] = np.ascontiguousarray(np.rot90(crops[i], -k))
                    each.pop(i, None)
            both = [i for i, r in enumerate(turned) if self.spec.read_both_ways and wide(r)]
            crops += [
                straight_crop(image_bgr, tuple(turned[i]), size, CROP_PAD, "level") for i in both
            ]
            for i, turns in each.items():
                both += [i] * len(turns)
                crops += [np.ascontiguousarray(np.rot90(crops[i], k)) for k in turns]
        probs = self.classifier(to_tensor(crops))
        probs = probs / probs.sum(axis=1, keepdims=True)
        main, others = probs[: len(boxes)], probs[len(boxes) :]
        shown = crops[: len(boxes)]
        for i, other, crop in zip(both, others, crops[len(boxes) :], strict=True):
            if other.max() > main[i].max():
                main[i] = other
                shown[i] = crop
        return main, shown

    def _turns_each(self, turned: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
        """Per tile that the manifest's ``up_each_from`` reads more ways than stood up: its
        index and the quarter turns (``np.rot90``'s k) of its crop to read too.  A box nearly
        square (``up_each_square``) is read all four ways; one turned at least ``up_each_from``
        degrees from standing (on its side, where the smaller turn up is a coin toss) also
        turned over."""
        out: list[tuple[int, tuple[int, ...]]] = []
        if self.spec.up_each_from is None:
            return out
        for i, r in enumerate(turned):
            _, _, w, h, angle = upright_rect(tuple(float(v) for v in r))
            if w >= self.spec.up_each_square * h:
                out.append((i, (1, 2, 3)))
            elif abs(angle) >= self.spec.up_each_from:
                out.append((i, (2,)))
        return out

    def _sure_turns(
        self, crops: list[np.ndarray], each: dict[int, tuple[int, ...]]
    ) -> list[tuple[int, int]]:
        """The crops the way-up model is sure stand upright or upside down (the likelier of the
        two ``up_each_flip`` log odds above any other turn), as (index, ``np.rot90``'s k: 0 or
        2).  A box nearly square (``each`` reads it four ways) is left to the surest reading:
        its crop need not lie along the tile's sides, which the model learnt from."""
        p = self.way_up.turns(crops)
        out = []
        for i, row in enumerate(p):
            k = int(row.argmax())
            if k in (1, 3) or len(each.get(i, ())) > 1:
                continue
            if (
                np.log(row[k] + 1e-6) - np.log(np.delete(row, k).max() + 1e-6)
                > self.spec.up_each_flip
            ):
                out.append((i, k))
        return out

    def _second_look(
        self, image_bgr: np.ndarray, scores: np.ndarray, turned: np.ndarray, det_scale: float
    ) -> tuple[np.ndarray, np.ndarray, list[View]]:
        """The first pass's boxes with those a second look covers replaced by what it finds
        (``vision.adapt.plan_views``); unchanged when no second look is due."""
        import cv2

        spec = self.spec
        lo, hi = spec.second_look_turned or (90.0, 90.0)
        h, w = image_bgr.shape[:2]
        views = plan_views(
            turned,
            (w, h),
            spec.detector_imgsz,
            det_scale=det_scale,
            small_below=spec.second_look_small,
            target=spec.second_look_target,
            turned_from=lo if spec.second_look_turned else 91.0,
            turned_to=hi,
        )
        if not views:
            return scores, turned, []
        found_scores, found_turned = [], []
        for view in views:
            pixels = cv2.warpAffine(
                image_bgr,
                view.matrix,
                (view.size, view.size),
                flags=cv2.INTER_LINEAR
                if view.matrix[0, 0] ** 2 + view.matrix[0, 1] ** 2 >= 1
                else cv2.INTER_AREA,
                borderMode=cv2.BORDER_CONSTANT,
                borderValue=(114, 114, 114),
            )
            _, sc, tu = self._detect(pixels)
            if tu is None or not len(tu):
                continue
            # a box cut by the view's edge is left to the neighbouring view or the first pass
            margin = 2.0
            hull = hulls(tu, (10**6, 10**6))
            whole = np.all((hull[:, :2] > margin) & (hull[:, 2:] < view.size - margin), axis=1)
            whole |= len(views) == 1
            found_scores.append(sc[whole])
            found_turned.append(map_back(tu[whole], view.matrix))
        keep = ~inside(turned, views)
        all_scores = np.concatenate([scores[keep], *found_scores])
        all_turned = np.concatenate([turned[keep], *found_turned]).astype(np.float32)
        best = all_scores.max(axis=1) if len(all_scores) else np.zeros(0, np.float32)
        idx = nms_turned(all_turned, best, spec.iou)
        return all_scores[idx], all_turned[idx], views

    def recognize(self, image_bgr: np.ndarray) -> Recognition:
        """Every tile found in a BGR image, left to right, top to bottom by box centre."""
        if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
            shape = getattr(image_bgr, "shape", None)
            raise ValueError(f"recognize needs a BGR image of shape (h, w, 3), got {shape}")
        recognition = self._recognize(image_bgr, quarter=True)
        assert recognition is not None
        return recognition

    def _recognize(self, image_bgr: np.ndarray, quarter: bool) -> Recognition | None:
        """:meth:`recognize`; ``quarter``: a rack standing sideways or upside down may be read
        in the photo turned (``vision.tiers.on_its_side``, ``_upright_turn``).  Without
        ``quarter`` (a turned look for a rack) None where no rack stands: the whole-photo path
        reads the photo as it is, not turned."""
        import cv2

        photo = image_bgr
        t0 = time.perf_counter()
        boxes, scores, turned = self._detect(image_bgr)
        h, w = image_bgr.shape[:2]
        views: list[View] = []
        spec = self.spec
        if turned is not None and (spec.second_look_small > 0 or spec.second_look_turned):
            det_scale = min(self.spec.detector_imgsz / h, self.spec.detector_imgsz / w)
            scores, turned, views = self._second_look(image_bgr, scores, turned, det_scale)
            if views:
                boxes = hulls(turned, (w, h))
        t1 = time.perf_counter()
        det_conf = scores.max(axis=1) if len(scores) else np.zeros(0, np.float32)
        if spec.tiers and turned is not None and self.classifier is not None:
            view = self._rack_view(image_bgr, turned)
            way = _upright_turn(view[3]) if quarter and view is not None else None
            tried = {way}  # the turned looks taken (one that found no rack is not taken again)
            if way is not None:
                # a rack lying on its side or upside down (its first look's up within 30
                # degrees of level, or 45 of the photo's down): found and read in the photo
                # turned to stand it upright, as the networks learnt tiles (upside down, a
                # first look boxes the tiers' tops worse and reads a 9 framed low in its crop
                # as a 6 either way up); with no rack there, the photo is read as it is
                side = self._recognize(cv2.rotate(photo, way), quarter=False)
                if side is not None:
                    return turned_back(side, way, time.perf_counter() - t0)
            read = None
            if view is not None:
                read = self._read_tiers(image_bgr, boxes, scores, turned, det_conf, view)
            lost = len(turned) >= MIN_RACK_TILES and view is None  # no rack up agreed
            again = quarter and cv2.ROTATE_90_CLOCKWISE not in tried
            if read is None and again and (on_its_side(turned) or lost):
                # a rack on its side: the detector, which learnt tiles standing or lying about
                # upright, boxes sideways tiles at scattered angles and no rack frame agrees;
                # the photo turned a quarter round stands them up (which way up: the tier stage)
                side = self._recognize(cv2.rotate(photo, cv2.ROTATE_90_CLOCKWISE), quarter=False)
                if side is not None:
                    return turned_back(side, cv2.ROTATE_90_CLOCKWISE, time.perf_counter() - t0)
            lean = _lean(read[1]) if read is not None and quarter else 0.0
            way = cv2.ROTATE_90_CLOCKWISE if lean < 0 else cv2.ROTATE_90_COUNTERCLOCKWISE
            if SIDEWAYS_READ < abs(lean) < 180.0 - SIDEWAYS_READ and way not in tried:
                # a rack standing sideways in the photo (its up within 45 degrees of level):
                # its tiles are found and read again with the photo turned so that it stands
                # upright, as the networks learnt tiles
                side = self._recognize(cv2.rotate(photo, way), quarter=False)
                if side is not None:
                    return turned_back(side, way, time.perf_counter() - t0)
            if read is not None:
                tiles, tier_views = read
                t2 = time.perf_counter()
                timings = {"detect": (t1 - t0) * 1000, "tiers": (t2 - t1) * 1000}
                timings["total"] = (t2 - t0) * 1000
                return Recognition(
                    tiles=tiles,
                    image_size=(w, h),
                    timings_ms=timings,
                    second_look=tuple(v.reason for v in views),
                    tiers=tier_views,
                )
        if not quarter:  # a turned look for a rack: none there
            return None
        tiles, up, _ = self._read_photo(image_bgr, boxes, scores, turned, det_conf)
        t2 = time.perf_counter()
        tiles.sort(key=lambda t: (round(t.centre[1] / max(t.height, 1.0)), t.centre[0]))
        timings = {"detect": (t1 - t0) * 1000, "classify": (t2 - t1) * 1000}
        timings["total"] = (t2 - t0) * 1000
        looks = tuple(v.reason for v in views) + (("up",) if up is not None else ())
        return Recognition(tiles=tiles, image_size=(w, h), timings_ms=timings, second_look=looks)

    def _read_photo(
        self,
        image_bgr: np.ndarray,
        boxes: np.ndarray,
        scores: np.ndarray,
        turned: np.ndarray | None,
        det_conf: np.ndarray,
        each_way: bool = True,
        stand: float | None = None,
    ) -> tuple[list[TileReading], float | None, np.ndarray]:
        """The whole-photo path's reading of the first look's boxes: each tile read from its
        own box (stood up by its turned box), boxes the classifier calls no tile dropped, and
        the photo's turn when its tiles were read both ways up for all (manifest
        ``up_vote_from``), and which of the boxes the tiles are.  ``each_way`` False leaves out
        the manifest's ``up_each_*`` readings; ``stand`` stands every tile within a quarter turn
        of that turn (a rack's, in degrees: ``vision.tiers.up_angle``) instead."""
        h, w = image_bgr.shape[:2]
        index = np.arange(len(boxes))
        flags: list[str | None] = [None] * len(boxes)
        up = None
        if self.classifier is not None:
            voting = stand is None and self.spec.up_vote_from is not None
            if turned is not None and voting and len(turned) >= 2:
                angle, agree = photo_angle(turned)
                if agree >= self.spec.up_vote_agree and abs(angle) >= self.spec.up_vote_from:
                    up = angle
            probs, crops = self._read(image_bgr, boxes, turned, up, each_way, stand)
            flags = self._unreadable(turned, (w, h)) or [None] * len(boxes)
            if probs.shape[1] > NUM_CLASSES:  # the classifier's "not a tile": drop those boxes
                tile = probs.argmax(axis=1) < NUM_CLASSES
                boxes, det_conf, probs = boxes[tile], det_conf[tile], probs[tile, :NUM_CLASSES]
                index = index[tile]
                probs = probs / probs.sum(axis=1, keepdims=True)
                turned = turned[tile] if turned is not None else None
                crops = [c for c, t in zip(crops, tile, strict=True) if t]
                flags = [f for f, t in zip(flags, tile, strict=True) if t]
            if turned is not None and (
                self.spec.max_covered < 1.0 or self.spec.merge_duplicates < 1.0
            ):
                keep = ~covered_boxes(turned, det_conf, self.spec.max_covered)
                keep &= ~duplicates(turned, det_conf, self.spec.merge_duplicates)
                boxes, det_conf, probs = boxes[keep], det_conf[keep], probs[keep]
                index = index[keep]
                turned = turned[keep]
                crops = [c for c, k in zip(crops, keep, strict=True) if k]
                flags = [f for f, k in zip(flags, keep, strict=True) if k]
            if self.spec.colour_model and len(crops):
                probs, _ = colour_model(probs, [ink_features(c) for c in crops])
        else:  # the detector's own class scores, normalised into a distribution
            probs = scores / np.maximum(scores.sum(axis=1, keepdims=True), 1e-9)
        tiles = []
        for box, dc, p, flag in zip(boxes, det_conf, probs, flags, strict=True):
            best = int(p.argmax())
            tiles.append(
                TileReading(
                    box=tuple(float(v) for v in box),
                    tile=Tile(best),
                    confidence=float(p[best] * dc),
                    probs=p.astype(np.float32),
                    detection_confidence=float(dc),
                    unreadable=flag,
                )
            )
        return tiles, up, index

    def _rack_view(self, image_bgr: np.ndarray, turned: np.ndarray) -> RackView | None:
        """What the tier stage reads a rack from: the photo no larger than needed (a tile about
        twice the crop's size), the first look's turned boxes scaled to it, that scale, and
        which way up the rack stands (:func:`vision.tiers.rack_up`'s axis, its sense read by the
        way-up model, ``vision.up``, from the first look's standing tiles stood along it).
        None when the boxes agree on no rack's up, or are too few for a rack (``is_rack`` wants
        ``MIN_RACK_TILES`` of them on its tiers)."""
        import cv2

        up = rack_up(turned) if len(turned) >= MIN_RACK_TILES else None
        if up is None:
            return None
        tile_px = float(np.median(np.maximum(turned[:, 2], turned[:, 3])))
        shrink = min(1.0, 2.0 * self.spec.classifier_imgsz / max(tile_px, 1.0))
        pixels = image_bgr
        if shrink < 0.9:
            pixels = cv2.resize(image_bgr, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA)
            turned = turned.copy()
            turned[:, :4] *= shrink
        else:  # read at the photo's own size: nothing to scale back
            shrink = 1.0
        # upside down, the rack's up is the other sense, and its tiers are found from their
        # true tops
        standing = np.flatnonzero(standing_tiles(turned, up))
        if self.way_up is not None and len(standing):
            size = self.spec.classifier_imgsz
            stood = [
                straight_crop(pixels, tuple(r), size, CROP_PAD, "given")
                for r in unify_angles(turned[standing], up_angle(up))
            ]
            if self.way_up.upside_down(stood) > 0:
                up = -up
        return pixels, turned, shrink, up

    def _read_tiers(
        self,
        image_bgr: np.ndarray,
        boxes: np.ndarray,
        scores: np.ndarray,
        turned: np.ndarray,
        det_conf: np.ndarray,
        view: RackView,
    ) -> tuple[list[TileReading], tuple[TierView, ...]] | None:
        """The tier stage (``vision.tiers``): the tiles of the rack's tiers, found again in their
        straightened strips and read from crops cut along them, merged with the first look's
        tiles, which the whole-photo path reads (those off the tiers are the table).  None when
        the photo shows no rack.  ``view``: :meth:`_rack_view` of the first look ``turned``."""
        import cv2

        first = turned
        pixels, turned, shrink, up = view  # the first look's boxes scaled to ``pixels``
        standing = np.flatnonzero(standing_tiles(turned, up))
        found = self._tier_crops(pixels, turned, up, det_conf)
        if found is None and len(standing) >= MIN_RACK_TILES and abs(up[1]) < SIDE_UP:
            # a rack on its side (its up within SIDE_UP of level): its tiers may run along the
            # other sense's tops
            found = self._tier_crops(pixels, turned, -up, det_conf)
        if found is None:
            return None
        up, strips, places, from_gap, crops, probs = found
        tiles = self._strip_tiles(
            strips, places, from_gap, crops, probs, 1.0 / shrink, image_bgr.shape
        )
        # the first look's own reading of every box: kept where a strip's tile agrees with its
        # box (the whole-photo path reads tiles lying on a table best), and for the table
        # (``up_each_*`` is left to table scenes: on racks it read tiles turned the wrong way;
        # on a rack whose up points down the photo its tiles are stood its way up, not by their
        # smallest turn, which stands them upside down)
        stand = up_angle(up) if up[1] > 0 else None
        first_tiles, _, index = self._read_photo(
            image_bgr, boxes, scores, first, det_conf, each_way=False, stand=stand
        )
        standing = standing_tiles(first[index], up)
        sizes = first[index, 2:4].min(axis=1).astype(np.float64)
        tiles, used, source = _agree(tiles, first_tiles, sizes, standing)
        corners = [cv2.boxPoints(((r[0], r[1]), (r[2], r[3]), r[4])) * shrink for r in first[index]]
        for n, j in enumerate(source):
            if j >= 0:  # where the tile stands along its tier: from the first look's box
                tiles[n] = replace(tiles[n], place=_place(corners[j], strips, tiles[n].place[0]))
        held = [t.place for t in tiles if t.place is not None]
        for j, reading in enumerate(first_tiles):
            if j in used:
                continue
            # a first look's tile that no tile of the tiers took: standing on a tier's strip it
            # is one of its tiles (the strip's detector missed it) unless a tier's tile stands
            # where it does (a box between two tiles), else it lies on the table
            place = _place(corners[j], strips) if standing[j] else None
            if place is not None and held_by(place, held):
                continue
            tiles.append(replace(reading, place=place))
        tiles.sort(key=lambda t: (t.place is None, t.place or (0, t.centre[0], 0)))
        return tiles, tuple(_tier_view(strip, 1.0 / shrink) for strip in strips)

    def _strip_tiles(
        self,
        strips: list[Strip],
        places: list[tuple],
        from_gap: list[bool],
        crops: list[np.ndarray],
        probs: np.ndarray,
        back: float,
        shape: tuple[int, ...],
    ) -> list[TileReading]:
        """The tiers' tiles read from their crops (the classifier's ``probs``): a place the
        classifier calls no tile is dropped, a gap's place kept only when read surely
        (``SLOT_TILE``); colours compared within the rack; a tile cut by the frame flagged.
        ``back`` scales the strips' photo (shrunk) to the photo's ``shape``."""
        h, w = shape[:2]
        probs = probs / probs.sum(axis=1, keepdims=True)
        keep = []
        for i, p in enumerate(probs):
            best = int(p.argmax())
            if best >= NUM_CLASSES or (from_gap[i] and p[best] < SLOT_TILE):
                continue
            keep.append(i)
            if from_gap[i]:  # no detector score: how surely it is a tile at all
                places[i] = (*places[i][:5], float(p[:NUM_CLASSES].sum()))
        read = probs[keep][:, :NUM_CLASSES]
        read = read / read.sum(axis=1, keepdims=True)
        if self.spec.colour_model and keep:
            read, _ = colour_model(read, [ink_features(crops[i]) for i in keep])
        quads = {}
        to_photo = {k: strips[k].to_photo for k in {places[i][0] for i in keep}}
        for i in keep:
            k, x1, y1, x2, y2, _ = places[i]
            corners = [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]
            quads[i] = project(to_photo[k], corners) * back
        across = {i: float(np.linalg.norm(q[1] - q[0])) for i, q in quads.items()}
        typical = {
            k: float(np.median([across[j] for j in keep if places[j][0] == k])) for k in to_photo
        }
        cut = self.spec.unreadable_cut
        tiles = []
        for slot, i in enumerate(keep):
            k, x1, _, x2, _, score = places[i]
            quad = quads[i]
            # cut by the frame: partly outside it, or at its edge and narrower than its tier's
            # tiles (the detector boxes only the part in the frame)
            at_edge = bool(np.any(quad < 2) or np.any(quad > (w - 2, h - 2)))
            short = at_edge and across[i] < CUT_SHORT * typical[k]
            outside = 1.0 - inside_share(quad, (w, h))
            p = read[slot]
            best = int(p.argmax())
            tiles.append(
                TileReading(
                    box=_hull(quad, (w, h)),
                    tile=Tile(best),
                    confidence=float(p[best] * score),
                    probs=p.astype(np.float32),
                    detection_confidence=score,
                    unreadable="cut" if outside >= cut or short else None,
                    place=(k, x1, x2),
                    quad=_shown_quad(strips[k], places[i][1:5], back),
                )
            )
        return tiles

    def _tier_crops(
        self, pixels: np.ndarray, turned: np.ndarray, up: np.ndarray, conf: np.ndarray
    ) -> (
        tuple[np.ndarray, list[Strip], list[tuple], list[bool], list[np.ndarray], np.ndarray] | None
    ):
        """The tiers of a rack standing ``up`` (``vision.tiers``: candidates, strips, the strip
        detector, the tiers chosen, a rack or not), the places of their tiles (strip, box in the
        strip, score; gaps looked at too), each place's crop cut along its strip and the
        classifier's reading of it.  None when no rack stands there."""
        ph, pw = pixels.shape[:2]
        candidates, up = find_tiers(turned, pixels, up)
        if not candidates:
            return None
        strips = [strip_for(k, t.quad, (pw, ph)) for k, t in enumerate(candidates)]
        detected = self._detect_strips(pixels, strips)
        chosen = choose_tiers(strips, detected, up)
        # a candidate that a chosen tier would hide may be a tier showing only its tiles' tops
        # (the detector boxes none of them, or boxes reaching into the tier in front): looked at
        # again with what hides it greyed, and the tiers chosen again (from the front back)
        looked: set[int] = set()
        while chosen:
            behind = [s for s in behind_chosen(strips, chosen) if s.tier not in looked]
            if not behind:
                break
            # a candidate between two chosen tiers is looked at where a stand's middle tier
            # stands: midway between them (``vision.tiers.midway``)
            looks = [midway(s, strips, detected, chosen, up, (pw, ph)) or s for s in behind]
            for strip, boxes in zip(looks, self._detect_strips(pixels, looks), strict=True):
                k = strip.tier
                looked.add(k)
                if strip.above is not None and not midway_holds(strip, boxes):
                    continue
                if tier_score(strip, boxes) > tier_score(strips[k], detected[k]):
                    strips[k], detected[k] = strip, boxes
            again = choose_tiers(strips, detected, up)
            if again == chosen:
                break
            chosen = again
        if not chosen:
            return None
        # a tier showing only its tiles' tops over the tier in front: its first-look boxes
        chosen = tops_only_tiers(candidates, strips, detected, chosen, turned, conf, up)
        shown = [strips[k].hidden for k in chosen]  # the strips already looked at greyed
        strips = [replace(strips[k], tier=n) for n, k in enumerate(chosen)]
        detected = [detected[k] for k in chosen]
        if not is_rack(turned, up, strips, detected):
            return None
        # a tier whose tiles' feet the tier in front hides is looked at again with only what
        # shows of it (the detector may box its tiles together with the front tier's); a box
        # of the first run that stays above the tier in front stands too
        strips = hidden_by_front(strips)
        again = [
            k
            for k, strip in enumerate(strips)
            if strip.hidden is not None and (shown[k] is None or abs(strip.hidden - shown[k]) > 1)
        ]
        if again:
            redone = self._detect_strips(pixels, [strips[k] for k in again])
            for k, boxes in zip(again, redone, strict=True):
                detected[k] = _with_shown(boxes, detected[k], strips[k], self.spec.iou)
        places: list[tuple[int, float, float, float, float, float]] = []  # strip, box, score
        from_gap: list[bool] = []
        for k, (strip, in_strip) in enumerate(zip(strips, detected, strict=True)):
            found = in_strip[np.argsort(in_strip[:, 0])].tolist()
            places += [(k, *b) for b in found]
            from_gap += [False] * len(found)
            top, bottom = strip.top, min(strip.top + STRIP_TILE, strip.shows_to)
            # the gaps between its tiles, and between the tier's ends and its first and last
            first, last = strip.left, strip.left + strip.length
            spans = [(first, first), *((b[0], b[2]) for b in found), (last, last)]
            for x1, x2 in gap_slots(spans, strip.tile_width, 0, strip.size[0]):
                places.append((k, x1, top, x2, bottom, 0.0))
                from_gap.append(True)
        if not places:
            return None
        size = self.spec.classifier_imgsz
        crops = [
            _greyed(
                quad_crop(
                    pixels, strips[k].to_photo, _cut(strips[k], x1, y1, x2, y2), size, CROP_PAD
                ),
                strips[k],
            )
            for k, x1, y1, x2, y2, _ in places
        ]
        return up, strips, places, from_gap, crops, self.classifier(to_tensor(crops))

    def _detect_strips(self, pixels: np.ndarray, strips: list[Strip]) -> list[np.ndarray]:
        """The detector's boxes in each strip, ``(m, 5)`` = x1, y1, x2, y2 (strip pixels) and
        score, kept when they are the strip's own tier's tiles (``vision.tiers.in_band``).

        Strips longer than a canvas are cut into pieces overlapping by more than a tile, and the
        pieces are packed along shelves into as few canvases as hold them
        (``vision.tiers.shelf_pack``), so that one run reads several tiers at the scale it reads
        best: the detector's square, cut to the shelves it holds when the detector takes any
        input size (``istaka export`` exports it so), else whole."""
        import cv2

        fixed = getattr(self.detector, "fixed", None)
        images = [strip.warp(pixels) for strip in strips]
        height, width = fixed or (self.spec.detector_imgsz, self.spec.detector_imgsz)
        pieces: list[tuple[int, int, np.ndarray]] = []  # strip, x in the strip, pixels
        for k, (strip, warped) in enumerate(zip(strips, images, strict=True)):
            overlap = int(1.5 * strip.tile_width) + 4
            x0 = 0
            while True:
                pieces.append((k, x0, warped[:height, x0 : x0 + width]))
                if x0 + width >= warped.shape[1]:
                    break
                x0 += max(width - overlap, 1)
        sizes = [(p.shape[1], p.shape[0]) for _, _, p in pieces]
        found: list[list[list[float]]] = [[] for _ in strips]
        for packed in shelf_pack(sizes, width, height, MOSAIC_GAP):
            if fixed is None:  # cut to the shelves used
                used = max(y + pieces[j][2].shape[0] for j, _, y in packed)
                height_now = min(_stride_up(used), height)
            else:
                height_now = height
            canvas = np.full((height_now, width, 3), 114, np.uint8)
            for j, x, y in packed:
                piece = pieces[j][2]
                canvas[y : y + piece.shape[0], x : x + piece.shape[1]] = piece
            boxes, scores, _ = self._run_detector(canvas)
            for box, score in zip(boxes, scores.max(axis=1) if len(scores) else [], strict=True):
                cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
                for j, x, y in packed:
                    k, x0, piece = pieces[j]
                    ph, pw = piece.shape[:2]
                    if not (y <= cy < y + ph and x <= cx < x + pw):
                        continue
                    more = x0 + pw < strips[k].size[0]  # the strip goes on past the piece
                    if (box[0] - x < 3 and x0 > 0) or (box[2] - x > pw - 3 and more):
                        break  # cut by the piece's edge: the overlapping piece sees it whole
                    dx, dy = x0 - x, -y
                    found[k].append([box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy, score])
                    break
        out = []
        for k, strip in enumerate(strips):
            arr = np.float32([b for b in found[k] if in_band(b[:4], strip)]).reshape(-1, 5)
            if len(arr) > 1:
                xywh = np.c_[arr[:, :2], arr[:, 2:4] - arr[:, :2]]
                idx = cv2.dnn.NMSBoxes(xywh.tolist(), arr[:, 4].tolist(), 0.0, self.spec.iou)
                arr = arr[np.asarray(idx, int).reshape(-1)]
            out.append(arr)
        return out

    def _unreadable(
        self, turned: np.ndarray | None, image_size: tuple[int, int]
    ) -> list[str | None]:
        """Per box: "cut" (at least ``unreadable_cut`` of its turned box outside the frame, or
        touching the frame's edge and that much smaller than the photo's typical tile: the
        detector may box only the part in the frame) or None."""
        if turned is None:
            return []
        flags: list[str | None] = [None] * len(turned)
        if self.spec.unreadable_cut >= 1.0:
            return flags
        short = cut_short(turned, image_size, self.spec.unreadable_cut)
        for i in range(len(turned)):
            if short[i] or cut_share(turned[i], image_size) >= self.spec.unreadable_cut:
                flags[i] = "cut"
        return flags


def _with_shown(masked: np.ndarray, first: np.ndarray, strip: Strip, iou: float) -> np.ndarray:
    """A hidden tier's boxes: those found with the hidden part greyed, and those of the first
    run (the whole strip) that end above where the tier in front hides it (``BAND`` of a tile
    below it at most) and overlap none of them by more than ``iou``."""
    line = strip.shows_to
    shown = [
        b
        for b in first
        if b[3] <= line + BAND * STRIP_TILE and all(box_iou(b[:4], m[:4]) <= iou for m in masked)
    ]
    return np.concatenate([masked, np.float32(shown).reshape(-1, 5)]).astype(np.float32)


def _greyed(crop: np.ndarray, strip: Strip) -> np.ndarray:
    """A hidden tier's crop (cut a whole tile high, :func:`_cut`) grey below where the tier in
    front hides it, as its strip is when searched: a close stand's back tier, showing the top
    half of its tiles, read the front tier's numerals below them (a Y2 read K7, the 7 in front)."""
    if strip.hidden is None:
        return crop
    size = crop.shape[0]
    pad = CROP_PAD * STRIP_TILE
    row = int(round((strip.hidden - (strip.top - pad)) / (STRIP_TILE + 2 * pad) * size))
    if 0 <= row < size:
        crop = crop.copy()
        crop[row:] = 114
    return crop


def _cut(strip: Strip, x1: float, y1: float, x2: float, y2: float) -> tuple[float, ...]:
    """Where a tile found at ``(x1, y1, x2, y2)`` in a strip is cut to be read: as found, but a
    whole tile high on a hidden tier (the classifier learnt tiered tiles with the tier in front
    showing below their tops; the part that shows, stretched to a square, reads another
    number: a far frontal stand's back tier read B9, R11, Y3 for B13, B2, R12)."""
    if strip.hidden is None:
        return (x1, y1, x2, y2)
    return (x1, strip.top, x2, strip.top + STRIP_TILE)


def quad_crop(
    image: np.ndarray,
    to_photo: np.ndarray,
    box: tuple[float, float, float, float],
    size: int,
    pad: float,
) -> np.ndarray:
    """The ``size`` x ``size`` crop of a box in a strip, cut from the photo along the strip's
    homography ``to_photo`` (strip -> photo), grown by ``pad`` of its size on each side."""
    import cv2

    x1, y1, x2, y2 = box
    dx, dy = pad * (x2 - x1), pad * (y2 - y1)
    corners = project(
        to_photo, [(x1 - dx, y1 - dy), (x2 + dx, y1 - dy), (x2 + dx, y2 + dy), (x1 - dx, y2 + dy)]
    ).astype(np.float32)
    square = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
    matrix = cv2.getPerspectiveTransform(corners, square)
    return cv2.warpPerspective(
        image, matrix, (size, size), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0)
    )


def inside_share(quad: np.ndarray, image_size: tuple[int, int]) -> float:
    """The share of a quadrilateral's area that lies inside the photo."""
    import cv2

    w, h = image_size
    frame = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    poly = np.asarray(quad, np.float32)
    area = abs(float(cv2.contourArea(poly)))
    if area <= 0:
        return 0.0
    inter, _ = cv2.intersectConvexConvex(poly, frame)
    return float(inter) / area


def _hull(quad: np.ndarray, image_size: tuple[int, int]) -> tuple[float, float, float, float]:
    """A quadrilateral's upright bounding box, clipped to the photo."""
    w, h = image_size
    x1, y1 = quad.min(axis=0)
    x2, y2 = quad.max(axis=0)
    return (
        float(np.clip(x1, 0, w)),
        float(np.clip(y1, 0, h)),
        float(np.clip(x2, 0, w)),
        float(np.clip(y2, 0, h)),
    )


def _agree(
    rack: list[TileReading],
    first: list[TileReading],
    sizes: np.ndarray,
    standing: np.ndarray,
) -> tuple[list[TileReading], set[int], list[int]]:
    """The tier stage's tiles merged with the first look's (``sizes``: their short sides).
    Tiles are compared by their centres, in tile widths (upright boxes of turned tiles overlap
    their neighbours'). Where the two agree (centres within ``AGREE`` of a width) the first
    look's box is kept; where they are apart but still on one
    tile (within ``REPLACED``: a box half a tile off, or across two tiers) the surer reading
    keeps its own box; a tile of the tier stage on a first look's tile that does not stand along
    the rack (a tile lying on the table across a strip) is dropped.  An agreed tile is read the
    surer of the two ways.  Returns the tiles, the first look's tiles taken, and per tile the
    first look's tile whose box it keeps (else -1)."""
    out: list[TileReading] = []
    used: set[int] = set()
    source: list[int] = []  # per tile out: the first look's tile whose box it keeps, or -1
    centres = np.float64([f.centre for f in first]).reshape(-1, 2)
    widths = [
        float(np.linalg.norm(np.subtract(t.quad[1], t.quad[0]))) if t.quad else None for t in rack
    ]
    known = [v for v in widths if v is not None]
    usual = float(np.median(known)) if known else 1.0
    for tile, own in zip(rack, widths, strict=True):
        # a tile's width, no wider than the tiers' usual tile (a box a tile and a half wide at a
        # tier's end is one tile, not a reach over its neighbours)
        width = 1.0 if own is None else min(own, usual)
        if any(np.hypot(*np.subtract(tile.centre, o.centre)) < REPLACED * width for o in out):
            continue  # two tiers' strips saw the same tile: the first (surer) keeps it
        gaps = (
            np.hypot(*(centres - np.float64(tile.centre)).T) / np.maximum(sizes, width)
            if len(first)
            else np.zeros(0)
        )
        free = [j for j in np.argsort(gaps) if j not in used]
        j = free[0] if free else -1
        if j < 0 or gaps[j] >= REPLACED:
            on_lying = any(not standing[k] and gaps[k] < REPLACED for k in range(len(first)))
            if not on_lying:
                out.append(tile)
                source.append(-1)
            continue
        used.add(int(j))
        seen = first[j]
        if gaps[j] >= AGREE:
            keep = seen if seen.confidence >= tile.confidence else tile
            # the outline stays the tier's tile's (what shows of it, along its tier)
            out.append(replace(keep, place=tile.place, quad=tile.quad))
            source.append(int(j) if keep is seen else -1)
            continue
        reading = tile if tile.probs.max() >= seen.probs.max() else seen
        out.append(
            replace(
                seen,
                tile=reading.tile,
                probs=reading.probs,
                confidence=float(reading.probs.max() * seen.detection_confidence),
                place=tile.place,
                quad=tile.quad,
            )
        )
        source.append(int(j))
    return out, used, source


def _place(
    corners: np.ndarray, strips: list[Strip], tier: int | None = None
) -> tuple[int, float, float] | None:
    """Where a first look's tile (its turned box's corners, shrunk photo pixels) stands on the
    tiers: ``tier`` and its extent along that tier's strip; with
    no tier given, the strip whose tier band holds its centre, else None (the table)."""
    order = range(len(strips)) if tier is None else [tier]
    for k in order:
        strip = strips[k]
        at = project(strip.to_strip, corners)
        x, y = at.mean(axis=0)
        if tier is None and not (
            0 <= x <= strip.size[0] and strip.top <= y <= strip.top + STRIP_TILE
        ):
            continue
        return (k, float(at[:, 0].min()), float(at[:, 0].max()))
    return None


def _lean(tiers: tuple[TierView, ...]) -> float:
    """How far a rack's up (its first tier's left side, bottom to top) turns from the photo's
    up, in degrees: positive towards the photo's right."""
    (x0, y0), _, _, (x3, y3) = tiers[0].quad[:4]
    return math.degrees(math.atan2(x0 - x3, y3 - y0))


def _upright_turn(up: np.ndarray) -> int | None:
    """The ``cv2.rotate`` code that stands a rack whose up is ``up`` (photo pixels, y down)
    within 45 degrees of upright, or None when it stands so already."""
    import cv2

    if up[1] >= UPSIDE_DOWN:
        return cv2.ROTATE_180
    if abs(up[0]) < ON_ITS_SIDE:
        return None
    return cv2.ROTATE_90_COUNTERCLOCKWISE if up[0] > 0 else cv2.ROTATE_90_CLOCKWISE


def turned_back(side: Recognition, way: int, seconds: float) -> Recognition:
    """A recognition of the photo turned by ``way`` (``cv2.ROTATE_90_CLOCKWISE``,
    ``cv2.ROTATE_90_COUNTERCLOCKWISE`` or ``cv2.ROTATE_180``) in the photo's own pixels.  With
    (w, h) the turned photo's size, a point (x', y') of it is (y', w - x') of the photo
    (clockwise), (h - y', x') (counter-clockwise) or (w - x', h - y') (half a turn).
    ``seconds``: the whole time taken."""
    import cv2

    w, h = side.image_size

    def point(p: tuple[float, float]) -> tuple[float, float]:
        x, y = float(p[0]), float(p[1])
        if way == cv2.ROTATE_90_CLOCKWISE:
            return (y, w - x)
        if way == cv2.ROTATE_90_COUNTERCLOCKWISE:
            return (h - y, x)
        return (w - x, h - y)

    def quad(q):
        return None if q is None else tuple(point(p) for p in q)

    def box(b: tuple[float, ...]) -> tuple[float, ...]:
        (xa, ya), (xb, yb) = point(b[:2]), point(b[2:4])
        return (min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb))

    tiles = [replace(t, box=box(t.box), quad=quad(t.quad)) for t in side.tiles]
    tiers = tuple(replace(v, quad=quad(v.quad)) for v in side.tiers)
    timings = {**side.timings_ms, "total": seconds * 1000}
    return replace(
        side,
        tiles=tiles,
        image_size=(w, h) if way == cv2.ROTATE_180 else (h, w),
        timings_ms=timings,
        second_look=(*side.second_look, "half" if way == cv2.ROTATE_180 else "quarter"),
        tiers=tiers,
    )


def _shown_quad(
    strip: Strip, box: tuple[float, ...], back: float
) -> tuple[tuple[float, float], ...]:
    """A tier's tile's outline in the photo (``box``: x1, y1, x2, y2 in its strip, scaled
    ``back``) as far down as it shows: a hidden tier's tile stops where the tier in front hides
    it (its box, the tile's whole extent, reaches on over the tiles in front)."""
    x1, y1, x2, y2 = box
    quad = tile_quad(strip, x1, x2, y1, min(y2, max(strip.shows_to, y1 + 1.0))) * back
    return tuple((float(x), float(y)) for x, y in quad)


def _tier_view(strip: Strip, back: float) -> TierView:
    """A tier's outline in the photo (its strip's tier band as far down as the tier shows,
    scaled ``back`` to the photo)."""
    bottom = min(strip.top + STRIP_TILE, strip.shows_to)
    quad = tile_quad(strip, strip.left, strip.left + strip.length, bottom=bottom) * back
    return TierView(tuple((float(x), float(y)) for x, y in quad), strip.tile_width)
