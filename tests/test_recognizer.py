"""The shipped recogniser: loads offline, reads a committed real rack photo exactly."""

from __future__ import annotations

import socket
from pathlib import Path

import cv2
import numpy as np
import pytest

from okey import parse_tiles
from vision.crops import NOT_A_TILE
from vision.recognizer import (
    MANIFEST,
    Recognizer,
    RecognizerSpec,
    decode_detections,
    decode_obb_detections,
    letterbox,
    to_tensor,
)

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "rack_real.jpg"
# The tiles of examples/rack_real.jpg (a real-validation photo), read by eye, in reading order.
EXAMPLE_TILES = (REPO / "examples" / "rack_real.txt").read_text().split("#")[0]


def test_letterbox_keeps_aspect_and_centres() -> None:
    image = np.full((100, 200, 3), 7, np.uint8)
    padded, scale, (left, top) = letterbox(image, 64)
    assert padded.shape == (64, 64, 3) and scale == pytest.approx(0.32)
    assert (left, top) == (0, 16)
    assert padded[0, 0, 0] == 114 and padded[32, 32, 0] == 7


def test_to_tensor_is_rgb_nchw_unit_range() -> None:
    image = np.zeros((4, 4, 3), np.uint8)
    image[..., 0] = 255  # blue in BGR
    batch = to_tensor([image])
    assert batch.shape == (1, 3, 4, 4) and batch.dtype == np.float32
    assert batch[0, 2].max() == 1.0 and batch[0, 0].max() == 0.0


def test_decode_detections_thresholds_and_suppresses_overlaps() -> None:
    # Three candidates (cx, cy, w, h, score): two overlapping, one weak.
    raw = np.array(
        [[50, 52, 150], [50, 50, 50], [20, 20, 20], [20, 20, 20], [0.9, 0.8, 0.1]], np.float32
    )
    boxes, scores = decode_detections(raw, conf=0.25, iou=0.5)
    assert boxes.tolist() == [[40.0, 40.0, 60.0, 60.0]]
    assert scores.tolist() == [[pytest.approx(0.9)]]


def test_decode_obb_keeps_touching_turned_tiles_and_returns_upright_hulls() -> None:
    """Two thin 6x30 tiles turned 45 degrees, touching along their long edges: their upright
    hulls overlap (IoU 0.53) but the turned boxes do not, so both stay; a near copy of the first
    goes; a weak box is dropped.  Rows: cx, cy, w, h, score, angle (radians)."""
    step = 6 / np.sqrt(2)  # one tile width across, along the turned width axis (cos, sin)
    quarter = np.pi / 4
    raw = np.array(
        [
            [50, 50 + step, 51, 80],
            [50, 50 + step, 50, 80],
            [6, 6, 6, 6],
            [30, 30, 30, 30],
            [0.9, 0.8, 0.7, 0.1],
            [quarter, quarter, quarter, 0.0],
        ],
        np.float32,
    )
    boxes, scores, turned = decode_obb_detections(raw, conf=0.25, iou=0.5)
    assert scores[:, 0].tolist() == [pytest.approx(0.9), pytest.approx(0.8)]
    assert turned[0] == pytest.approx([50, 50, 6, 30, 45], abs=1e-4)  # cx cy w h degrees
    half = (6 + 30) / 2 / np.sqrt(2)  # half the side of a 6x30 box's hull at 45 degrees
    assert boxes[0] == pytest.approx([50 - half, 50 - half, 50 + half, 50 + half], abs=1e-3)
    assert boxes[1] == pytest.approx(boxes[0] + step, abs=1e-3)
    assert _iou(boxes[0], boxes[1]) > 0.5  # upright NMS on the hulls would drop one


def test_straight_crop_stands_a_turned_tile_upright() -> None:
    """A tall white 20x40 tile turned 30 degrees (either way of describing its box) comes out
    upright: white inside the crop, black (the table) only outside the tile's padding."""
    from vision.crops import straight_crop

    image = np.zeros((200, 200, 3), np.uint8)
    rect = ((100.0, 100.0), (20.0, 40.0), 30.0)
    cv2.fillPoly(image, [np.int32(np.round(cv2.boxPoints(rect)))], (255, 255, 255))
    for described in ((100, 100, 20, 40, 30), (100, 100, 40, 20, -60), (100, 100, 40, 20, 120)):
        crop = straight_crop(image, described, size=96, pad=0.06)
        assert crop[12:84, 12:84].min() > 200  # the tile fills the inside, upright
        assert crop[:2, :2].max() < 60  # the padding corner shows the table
    with pytest.raises(ValueError, match="empty tile box"):
        straight_crop(image, (10, 10, 0, 5, 0))


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def test_an_oriented_detector_needs_a_classifier() -> None:
    from dataclasses import replace

    spec = replace(RecognizerSpec.load(MANIFEST), architecture="single", detector_task="obb")
    with pytest.raises(ValueError, match="oriented-box detector needs a two_stage classifier"):
        Recognizer(spec)
    with pytest.raises(ValueError, match="unknown detector_task 'seg'"):
        Recognizer(replace(RecognizerSpec.load(MANIFEST), detector_task="seg"))


def test_bad_backend_and_image_are_named() -> None:
    spec = RecognizerSpec.load(MANIFEST)
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        Recognizer(spec, "tpu")
    recognizer = Recognizer.default()
    with pytest.raises(ValueError, match=r"shape \(h, w, 3\)"):
        recognizer.recognize(np.zeros((10, 10), np.uint8))


@pytest.fixture(scope="module", params=["onnx", "openvino", "torch"])
def recognizer(request: pytest.FixtureRequest) -> Recognizer:
    return Recognizer.default(request.param)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network access during a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["onnx", "openvino", "torch"])
def test_shipped_model_loads_without_network(no_network: None, backend: str) -> None:
    recognizer = Recognizer.default(backend)
    recognition = recognizer.recognize(np.full((480, 640, 3), 90, np.uint8))
    assert recognition.image_size == (640, 480)


@pytest.mark.slow
def test_reads_the_committed_real_rack_photo_exactly(recognizer: Recognizer) -> None:
    recognition = recognizer.recognize(cv2.imread(str(EXAMPLE)))
    expected = parse_tiles(EXAMPLE_TILES)
    assert sorted(t.tile for t in recognition.tiles) == sorted(expected)
    for reading in recognition.tiles:
        assert reading.probs.shape == (53,)
        assert reading.probs.sum() == pytest.approx(1.0, abs=1e-4)
        assert reading.tile.index == int(reading.probs.argmax())
        assert 0 < reading.confidence <= 1
        x1, y1, x2, y2 = reading.box
        assert 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 640


@pytest.mark.slow
def test_backends_agree() -> None:
    image = cv2.imread(str(EXAMPLE))
    a = Recognizer.default("onnx").recognize(image)
    b = Recognizer.default("torch").recognize(image)
    assert [t.tile for t in a.tiles] == [t.tile for t in b.tiles]
    for x, y in zip(a.tiles, b.tiles, strict=True):
        assert np.allclose(x.box, y.box, atol=1.0)
        assert np.allclose(x.probs, y.probs, atol=1e-3)


@pytest.mark.slow
def test_boxes_the_classifier_reads_as_not_a_tile_are_dropped(
    recognizer: Recognizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped classifier has a "not a tile" class (54 outputs); a detector box it reads so is
    left out of the recognition, the tiles' boxes stay, each with its 53 identity probabilities."""
    image = cv2.imread(str(EXAMPLE))
    tiles = recognizer.recognize(image).tiles
    tile_boxes = np.array([t.box for t in tiles[:3]], np.float32)
    # two tile-sized boxes on the empty marble above the rack
    w, h = tile_boxes[0, 2] - tile_boxes[0, 0], tile_boxes[0, 3] - tile_boxes[0, 1]
    empty = np.array([[40, 100, 40 + w, 100 + h], [500, 110, 500 + w, 110 + h]], np.float32)
    probs = recognizer.classify(image, np.concatenate([tile_boxes, empty]))
    assert probs.shape == (5, NOT_A_TILE + 1)
    assert list(probs.argmax(axis=1)) == [t.tile.index for t in tiles[:3]] + [NOT_A_TILE] * 2

    boxes = np.concatenate([tile_boxes, empty])
    scores = np.full((len(boxes), 1), 0.9, np.float32)
    # the detector's output replaced by these boxes (upright: no turned boxes to read along)
    monkeypatch.setattr(recognizer, "_detect", lambda _image: (boxes, scores, None))
    kept = recognizer.recognize(image).tiles
    assert sorted(t.box for t in kept) == sorted(tuple(map(float, b)) for b in tile_boxes)
    assert all(t.probs.shape == (53,) for t in kept)


@pytest.mark.slow
def test_reading_both_ways_reads_a_rack_squashed_from_above() -> None:
    """A rack seen from high up: the photo squashed to 60 % of its height makes several tiles
    wider than tall, so standing the long side up turns them sideways.  With ``read_both_ways`` the
    recogniser also reads each such box levelled and keeps the surer reading: the rack's tiles
    come out as in the unsquashed photo (the shipped pair without it reads R3 as R13 here).
    Squashed to half height the shipped pair misreads Y7 as Y1 even so (the seventh generation's
    classifier with ``read_both_ways`` read that one right; model card, weaknesses)."""
    from dataclasses import replace

    from vision.recognizer import wide

    image = cv2.imread(str(EXAMPLE))
    squashed = cv2.resize(image, (640, 384), interpolation=cv2.INTER_AREA)
    spec = replace(RecognizerSpec.load(MANIFEST), read_both_ways=True)
    both = Recognizer(spec)
    _, _, turned = both._detect(squashed)
    assert sum(wide(r) for r in turned) >= 3  # the levelled reading is asked for (3 of 10 here)
    tiles = both.recognize(squashed).tiles
    assert sorted(t.tile for t in tiles) == sorted(parse_tiles(EXAMPLE_TILES))
    # a box taller than wide is read one way only, so the upright photo reads as before
    assert [t.tile for t in both.recognize(image).tiles] == [
        t.tile for t in Recognizer(replace(spec, read_both_ways=False)).recognize(image).tiles
    ]


def test_level_rect_and_wide() -> None:
    from vision.crops import level_rect
    from vision.recognizer import wide

    # one 20 x 40 box, three ways of describing it
    for described in ((0, 0, 20, 40, 30), (0, 0, 40, 20, -60), (0, 0, 40, 20, 120)):
        assert level_rect(described)[2:] == pytest.approx((20, 40, 30))
        assert not wide(described)
    # a 40 x 20 box (wider than tall) at 80 degrees: levelled by -10, still wider than tall
    assert level_rect((0, 0, 20, 40, 80))[2:] == pytest.approx((40, 20, -10))
    assert wide((0, 0, 20, 40, 80)) and wide(np.float32([5, 5, 40, 20, 0]))


def test_covered_boxes_drops_a_box_lying_under_surer_ones() -> None:
    from vision.recognizer import covered_boxes

    # two touching tiles turned 30 degrees, and a box of the same size straddling them
    angle = np.radians(30)
    step = np.float32([np.cos(angle), np.sin(angle)]) * 20  # one tile width along the row
    a, b = np.float32([100, 100]), np.float32([100, 100]) + step
    turned = np.float32([[*a, 20, 30, 30], [*b, 20, 30, 30], [*((a + b) / 2), 20, 30, 30]])
    assert covered_boxes(turned, np.float32([0.9, 0.8, 0.5]), 0.8).tolist() == [0, 0, 1]
    # the straddling box is the surest: it is kept, and each tile is only half under it
    assert not covered_boxes(turned, np.float32([0.6, 0.5, 0.9]), 0.8).any()
    assert not covered_boxes(turned, np.float32([0.9, 0.8, 0.5]), 1.0).any()  # off
    # a lone box and boxes far apart are never dropped
    apart = np.float32([[0, 0, 20, 30, 0], [200, 0, 20, 30, 0]])
    assert not covered_boxes(apart, np.float32([0.9, 0.8]), 0.5).any()


@pytest.mark.slow
def test_max_covered_drops_a_box_across_two_found_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector box spanning the right half of one rack tile and the left half of the next,
    less sure than the tiles' own boxes, is left out with the manifest's ``max_covered``."""
    from dataclasses import replace

    spec = RecognizerSpec.load(MANIFEST)
    image = cv2.imread(str(EXAMPLE))
    plain = Recognizer(replace(spec, max_covered=1.0))
    boxes, scores, turned = plain._detect(image)
    order = np.argsort(turned[:, 0])  # the two leftmost tiles of the top row sit side by side
    top = [i for i in order if turned[i, 1] < np.median(turned[:, 1])][:2]
    across = turned[top].mean(axis=0)
    x1, y1 = boxes[top].min(axis=0)[:2]
    x2, y2 = boxes[top].max(axis=0)[2:]
    mid = (x1 + x2) / 2
    half = (boxes[top[0], 2] - boxes[top[0], 0]) / 2
    extra_box = np.float32([[mid - half, y1, mid + half, y2]])
    more = (
        np.concatenate([boxes, extra_box]),
        np.concatenate([scores, np.full((1, scores.shape[1]), 0.3, np.float32)]),
        np.concatenate([turned, across[None]]),
    )
    covered = Recognizer(replace(spec, max_covered=0.8))
    for recognizer in (plain, covered):
        monkeypatch.setattr(recognizer, "_detect", lambda _image: more)
    # without the option the classifier reads the box across two tiles as a tile: kept
    assert len(plain.recognize(image).tiles) == len(boxes) + 1
    kept = covered.recognize(image).tiles
    assert len(kept) == len(boxes)  # with it: every tile, not the box across two of them
    assert sorted(t.box for t in kept) == sorted(tuple(map(float, b)) for b in boxes)
