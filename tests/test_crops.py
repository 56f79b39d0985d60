"""The tile-crop exporter: crops land in sorted class folders, cut where the labels say."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.training.crops import (
    NOT_A_TILE,
    CameraAugment,
    background_boxes,
    camera_crop,
    class_folder,
    corner_rect,
    crop_tile,
    export_crops,
    export_split_set,
    jitter_box,
    jitter_rect,
    label_path_for,
    label_rect,
    motion_kernel,
    read_yolo_boxes,
    read_yolo_labels,
    straight_crop,
    upright_rect,
)
from vision.types import iou


def _labelled_set(root: Path, split: str = "train") -> Path:
    """One 200x100 image: a red patch at class R5 (index 4), a blue patch at FJ (52)."""
    (root / "images" / split).mkdir(parents=True)
    (root / "labels" / split).mkdir(parents=True)
    image = np.zeros((100, 200, 3), np.uint8)
    image[20:60, 10:40] = (0, 0, 255)
    image[30:90, 120:160] = (255, 0, 0)
    path = root / "images" / split / "a.png"
    cv2.imwrite(str(path), image)
    (root / "labels" / split / "a.txt").write_text("4 0.125 0.4 0.15 0.4\n52 0.7 0.6 0.2 0.6\n")
    return path


def test_class_folders_sort_in_class_order() -> None:
    names = [class_folder(i) for i in range(53)]
    assert names == sorted(names)
    assert names[0] == "00_R1" and names[13] == "13_Y1" and names[52] == "52_FJ"


def test_crop_is_square_and_takes_the_boxed_pixels() -> None:
    image = np.zeros((100, 100, 3), np.uint8)
    image[10:50, 20:40] = 255
    crop = crop_tile(image, (20, 10, 40, 50), size=32, pad=0.0)
    assert crop.shape == (32, 32, 3)
    assert crop.mean() == pytest.approx(255, abs=1)


def test_crop_beyond_the_edge_is_filled_black() -> None:
    image = np.full((50, 50, 3), 200, np.uint8)
    crop = crop_tile(image, (-50, 0, 50, 50), size=20, pad=0.0)
    assert crop[:, :8].max() == 0 and crop[:, 12:].min() == 200


def test_empty_box_is_rejected() -> None:
    with pytest.raises(ValueError, match="empty tile box"):
        crop_tile(np.zeros((10, 10, 3), np.uint8), (5, 5, 5, 8))


def test_yolo_boxes_in_pixels(tmp_path: Path) -> None:
    image = _labelled_set(tmp_path)
    boxes = read_yolo_boxes(label_path_for(image), 200, 100)
    assert [c for c, _ in boxes] == [4, 52]
    assert boxes[0][1] == pytest.approx((10, 20, 40, 60))


def test_bad_label_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("60 0.5 0.5 0.1 0.1\n")
    with pytest.raises(ValueError, match=r"x\.txt:1: class 60"):
        read_yolo_boxes(path, 10, 10)


def test_jitter_stays_within_its_bound() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        b = jitter_box((100, 100, 200, 300), 0.1, rng)
        assert abs(b[0] - 100) <= 10 and abs(b[2] - 200) <= 10
        assert abs(b[1] - 100) <= 20 and abs(b[3] - 300) <= 20


def test_export_writes_each_tile_in_its_class_folder(tmp_path: Path) -> None:
    image = _labelled_set(tmp_path / "set")
    counts = export_crops([image], tmp_path / "out", copies=2, jitter=0.05, size=24)
    assert counts == {4: 2, 52: 2}
    red = [cv2.imread(str(p)) for p in (tmp_path / "out" / "04_R5").iterdir()]
    blue = [cv2.imread(str(p)) for p in (tmp_path / "out" / "52_FJ").iterdir()]
    assert len(red) == 2 and len(blue) == 2
    # The crop shows the labelled patch: red dominates the R5 crop, blue the FJ crop (BGR).
    assert all(c[..., 2].mean() > 150 > c[..., 0].mean() for c in red)
    assert all(c[..., 0].mean() > 150 > c[..., 2].mean() for c in blue)


def test_split_set_jitters_train_only_and_is_seeded(tmp_path: Path) -> None:
    _labelled_set(tmp_path / "set", "train")
    _labelled_set(tmp_path / "set", "val")
    result = export_split_set([tmp_path / "set"], tmp_path / "a", copies=3, seed=7, size=24)
    assert result == {"train": {4: 3, 52: 3}, "val": {4: 1, 52: 1}}
    export_split_set([tmp_path / "set"], tmp_path / "b", copies=3, seed=7, size=24)
    for p in (tmp_path / "a" / "train" / "04_R5").iterdir():
        other = tmp_path / "b" / "train" / "04_R5" / p.name
        assert np.array_equal(cv2.imread(str(p)), cv2.imread(str(other)))


def test_flat_rendered_set_goes_to_train(tmp_path: Path) -> None:
    image = _labelled_set(tmp_path / "synth", "train")
    flat = tmp_path / "synth"
    (flat / "images" / "train" / "a.png").rename(flat / "images" / "a.png")
    (flat / "labels" / "train" / "a.txt").rename(flat / "labels" / "a.txt")
    assert not image.exists()
    (flat / "images" / "train").rmdir()
    result = export_split_set([flat], tmp_path / "out", copies=1, size=24)
    assert result == {"train": {4: 1, 52: 1}, "val": {}}
    assert (tmp_path / "out" / "train" / "52_FJ" / "synth_a_001_0.jpg").exists()


STILL = CameraAugment(
    degrees=0.0,
    blur_p=0.0,
    noise_p=0.0,
    brightness=0.0,
    contrast=0.0,
    white_balance=0.0,
    jpeg_p=0.0,
)


def _tile_image() -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """A cream tile with a dark vertical bar (a '1'), on a brown table."""
    image = np.full((200, 200, 3), (40, 70, 110), np.uint8)
    image[50:150, 70:130] = (200, 230, 240)
    image[70:130, 95:105] = (20, 20, 20)
    return image, (70.0, 50.0, 130.0, 150.0)


def test_camera_crop_without_changes_is_the_plain_crop() -> None:
    image, box = _tile_image()
    plain = crop_tile(image, box, 48).astype(int)
    still = camera_crop(image, box, np.random.default_rng(0), 48, augment=STILL).astype(int)
    assert np.abs(plain - still).mean() < 3  # only resampling differs


def test_camera_crop_turns_the_tile_and_keeps_its_colours() -> None:
    image, box = _tile_image()
    turned = CameraAugment(**{**STILL.__dict__, "degrees": 30.0})
    rng = np.random.default_rng(3)
    crops = [camera_crop(image, box, rng, 48, augment=turned) for _ in range(6)]
    plain = crop_tile(image, box, 48)
    # The dark bar leans: its pixels are no longer in one vertical band in every crop.
    assert any(np.abs(c.astype(int) - plain.astype(int)).mean() > 5 for c in crops)
    # Full camera changes: the tile stays cream (red and green above blue), never recoloured.
    rng = np.random.default_rng(4)
    for crop in (camera_crop(image, box, rng, 48) for _ in range(20)):
        centre = crop[8:40, 8:16].reshape(-1, 3).mean(axis=0)  # left of the bar, on the tile
        assert centre[2] > centre[0] and centre[1] > centre[0]


def test_augmented_export_keeps_the_first_copy_plain_and_is_seeded(tmp_path: Path) -> None:
    _labelled_set(tmp_path / "set", "train")
    _labelled_set(tmp_path / "set", "val")
    export_split_set([tmp_path / "set"], tmp_path / "a", copies=3, seed=5, size=24, augment=True)
    export_split_set([tmp_path / "set"], tmp_path / "b", copies=3, seed=5, size=24, augment=True)
    plain = export_split_set([tmp_path / "set"], tmp_path / "c", copies=3, seed=5, size=24)
    assert plain["train"] == {4: 3, 52: 3}
    folder = tmp_path / "a" / "train" / "04_R5"
    for p in folder.iterdir():
        same = cv2.imread(str(tmp_path / "b" / "train" / "04_R5" / p.name))
        assert np.array_equal(cv2.imread(str(p)), same)
    # Copy 0 is the plain jittered crop; later copies are the camera's.
    first = cv2.imread(str(folder / "set_a_000_0.jpg")).astype(int)
    plain0 = cv2.imread(str(tmp_path / "c" / "train" / "04_R5" / "set_a_000_0.jpg")).astype(int)
    assert np.abs(first - plain0).max() <= 2
    # Validation crops never get camera changes.
    val_a = cv2.imread(str(tmp_path / "a" / "val" / "04_R5" / "set_a_000_0.jpg"))
    val_c = cv2.imread(str(tmp_path / "c" / "val" / "04_R5" / "set_a_000_0.jpg"))
    assert np.array_equal(val_a, val_c)


def test_wide_turns_lean_the_tile_further_than_the_usual_range() -> None:
    """``wide_p`` draws some turns from +-``wide_degrees``: measured on the crop, the tile's bar
    leans beyond the usual 15 degrees in some crops, and never with ``wide_p`` 0."""
    image, _ = _tile_image()
    box = (50.0, 50.0, 150.0, 150.0)  # square: turns in the crop are turns in the photo

    def lean(crop: np.ndarray) -> float:
        dark = (crop.astype(int).sum(axis=2) < 200).astype(np.uint8)
        m = cv2.moments(dark, binaryImage=True)
        # orientation of the dark bar from vertical, degrees
        angle = 0.5 * np.degrees(np.arctan2(2 * m["mu11"], m["mu20"] - m["mu02"]))
        return 90 - abs(angle)

    usual = CameraAugment(**{**STILL.__dict__, "degrees": 15.0})
    wide = CameraAugment(**{**usual.__dict__, "wide_degrees": 50.0, "wide_p": 0.5})
    rng = np.random.default_rng(8)
    usual_leans = [lean(camera_crop(image, box, rng, 96, augment=usual)) for _ in range(40)]
    wide_leans = [lean(camera_crop(image, box, rng, 96, augment=wide)) for _ in range(40)]
    assert max(usual_leans) < 18
    assert max(wide_leans) > 25


def test_upside_down_turns_the_tile_half_a_turn() -> None:
    """``upside_down_p`` 1 gives the plain crop turned 180 degrees (label unchanged)."""
    image = np.full((200, 200, 3), (40, 70, 110), np.uint8)
    image[50:150, 70:130] = (200, 230, 240)
    image[60:90, 90:110] = (20, 20, 20)  # a mark in the upper half: the turn moves it down
    box = (70.0, 50.0, 130.0, 150.0)
    plain = camera_crop(image, box, np.random.default_rng(0), 48, augment=STILL).astype(int)
    flip = CameraAugment(**{**STILL.__dict__, "upside_down_p": 1.0})
    turned = camera_crop(image, box, np.random.default_rng(0), 48, augment=flip).astype(int)
    assert np.abs(turned - np.rot90(plain, 2)).mean() < 3
    assert np.abs(turned - plain).mean() > 10


def test_background_boxes_hold_no_whole_tile() -> None:
    tiles = [(10.0, 10.0, 40.0, 50.0), (42.0, 10.0, 72.0, 50.0), (100.0, 60.0, 130.0, 100.0)]
    rng = np.random.default_rng(2)
    boxes = background_boxes(tiles, 200, 120, 40, rng)
    assert len(boxes) == 40
    overlapping = 0
    for b in boxes:
        assert 0 <= b[0] < b[2] <= 200 and 0 <= b[1] < b[3] <= 120
        ious = [iou(b, t) for t in tiles]
        assert max(ious) < 0.3
        for t in tiles:  # never half a tile or more inside
            ix = max(0.0, min(t[2], b[2]) - max(t[0], b[0]))
            iy = max(0.0, min(t[3], b[3]) - max(t[1], b[1]))
            assert ix * iy < 0.5 * (t[2] - t[0]) * (t[3] - t[1])
        overlapping += max(ious) > 0.05  # part of a tile in view: a stray box's look
        assert 10 <= b[2] - b[0] <= 43 and 14 <= b[3] - b[1] <= 57  # tile-sized, maybe clipped
    assert overlapping >= 10
    assert background_boxes([], 200, 120, 5, rng) == []
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == 1 / 3


def test_export_with_background_adds_a_not_a_tile_class(tmp_path: Path) -> None:
    _labelled_set(tmp_path / "set", "train")
    _labelled_set(tmp_path / "set", "val")
    plain = export_split_set([tmp_path / "set"], tmp_path / "p", copies=2, seed=5, size=24)
    with_bg = export_split_set(
        [tmp_path / "set"], tmp_path / "b", copies=2, seed=5, size=24, background=3
    )
    assert class_folder(NOT_A_TILE) == "53_none" and class_folder(52) < "53_none"
    for split in ("train", "val"):
        assert with_bg[split][NOT_A_TILE] == 3
        assert len(list((tmp_path / "b" / split / "53_none").iterdir())) == 3
        assert {k: v for k, v in with_bg[split].items() if k != NOT_A_TILE} == plain[split]
    # the tile crops are the same with or without background crops (their own random stream)
    for p in (tmp_path / "p" / "train" / "04_R5").iterdir():
        other = cv2.imread(str(tmp_path / "b" / "train" / "04_R5" / p.name))
        assert np.array_equal(cv2.imread(str(p)), other)


def _turned_tile(angle: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A cream 80 x 120 tile with a mark in its upper half, upright in a 240x240 photo, the same
    photo turned ``angle`` degrees counter-clockwise about the centre, and the tile's corners
    in the turned photo (pixels)."""
    upright = np.full((240, 240, 3), (40, 70, 110), np.uint8)
    upright[60:180, 80:160] = (200, 230, 240)
    upright[75:115, 110:130] = (20, 20, 20)
    turn = cv2.getRotationMatrix2D((120.0, 120.0), angle, 1.0)
    photo = cv2.warpAffine(upright, turn, (240, 240), borderValue=(40, 70, 110))
    corners = np.float32([[80, 60], [160, 60], [160, 180], [80, 180]])
    return upright, photo, cv2.transform(corners[None], turn)[0]


def _turned_tile_set(root: Path, angle: float) -> np.ndarray:
    """:func:`_turned_tile`'s photo as a one-image set labelled B9 (index 34) with its oriented
    box; returns the upright photo (the reference)."""
    upright, photo, corners = _turned_tile(angle)
    (root / "images" / "train").mkdir(parents=True)
    (root / "labels" / "train").mkdir(parents=True)
    cv2.imwrite(str(root / "images" / "train" / "t.png"), photo)
    line = "34 " + " ".join(f"{v:.6f}" for v in (corners / 240.0).reshape(-1))
    (root / "labels" / "train" / "t.txt").write_text(line + "\n")
    return upright


def test_oriented_labels_read_as_hull_and_turned_box(tmp_path: Path) -> None:
    _turned_tile_set(tmp_path, 30.0)
    path = tmp_path / "labels" / "train" / "t.txt"
    path.write_text(path.read_text() + "4 0.5 0.5 0.1 0.2\n")  # a detection line may sit beside
    (cls, hull, corners), (cls2, box2, corners2) = read_yolo_labels(path, 240, 240)
    assert (cls, cls2, corners2) == (34, 4, None)
    assert box2 == pytest.approx((108, 96, 132, 144))
    assert corners == pytest.approx(_turned_tile(30.0)[2], abs=0.01)  # in the line's order
    cx, cy, w, h, angle = label_rect(corners)
    assert (cx, cy, w, h) == pytest.approx((120, 120, 80, 120), abs=0.5)
    # minAreaRect measures turns clockwise: straight_crop turns the photo back by it
    assert angle == pytest.approx(-30.0, abs=0.5)
    half = 40 * np.cos(np.radians(30)) + 60 * np.sin(np.radians(30))  # the hull's half width
    assert hull[0] == pytest.approx(120 - half, abs=0.5) and hull[2] == pytest.approx(
        120 + half, abs=0.5
    )
    assert read_yolo_boxes(path, 240, 240)[0] == (34, hull)
    path.write_text("34 0.1 0.2 0.3\n")
    with pytest.raises(ValueError, match=r"t\.txt:1: expected 'class xc yc w h' or"):
        read_yolo_labels(path, 240, 240)


@pytest.mark.parametrize("angle", [30.0, -50.0, 80.0])
def test_straight_export_stands_a_turned_tile_upright(tmp_path: Path, angle: float) -> None:
    """The exported crop is the upright tile (mark on top), whatever the tile's turn; the upright
    hull's crop of the same label is not."""
    upright = _turned_tile_set(tmp_path / "set", angle)
    reference = crop_tile(upright, (80, 60, 160, 180), 48).astype(int)
    export_split_set(
        [tmp_path / "set"], tmp_path / "s", copies=1, jitter=0.0, size=48, straight=True
    )
    export_split_set([tmp_path / "set"], tmp_path / "u", copies=1, jitter=0.0, size=48)
    straight = cv2.imread(str(tmp_path / "s" / "train" / "34_B9" / "set_t_000_0.jpg"))
    hull = cv2.imread(str(tmp_path / "u" / "train" / "34_B9" / "set_t_000_0.jpg"))
    assert np.abs(straight.astype(int) - reference).mean() < 6
    assert np.abs(hull.astype(int) - reference).mean() > 20


@pytest.mark.parametrize("angle", [120.0, -150.0, 180.0, 10.0])
def test_corner_order_stands_the_tile_as_it_stands(tmp_path: Path, angle: float) -> None:
    """Labels whose corners name the tile's top-left first (``straight: corners``) give the
    upright tile even turned past a quarter turn, where standing the long side up turns it
    upside down."""
    upright = _turned_tile_set(tmp_path / "set", angle)
    reference = crop_tile(upright, (80, 60, 160, 180), 48).astype(int)
    for mode in ("corners", "long"):
        export_split_set(
            [tmp_path / "set"], tmp_path / mode, copies=1, jitter=0.0, size=48, straight=mode
        )
    corners, long = (
        cv2.imread(str(tmp_path / mode / "train" / "34_B9" / "set_t_000_0.jpg")).astype(int)
        for mode in ("corners", "long")
    )
    assert np.abs(corners - reference).mean() < 6
    if abs(angle) > 90:
        flipped = np.rot90(reference, 2)  # upside down
        assert np.abs(long - flipped).mean() < np.abs(long - reference).mean() / 2
    with pytest.raises(ValueError, match="unknown straight mode 'sideways'"):
        export_split_set([tmp_path / "set"], tmp_path / "x", straight="sideways")


def test_corner_rect_describes_a_squashed_tile_as_it_stands() -> None:
    """A standing tile seen from high above is wider than tall in the picture: its corners still
    say which side is up (standing the long side up would turn it sideways)."""
    squashed = np.float32([[0, 0], [40, 0], [40, 25], [0, 25]])  # top-left, ..., bottom-left
    assert corner_rect(squashed) == pytest.approx((20, 12.5, 40, 25, 0))
    assert label_rect(squashed, "long")[2:] == pytest.approx((25, 40, 90))  # a quarter turn
    assert label_rect(squashed, "corners") == corner_rect(squashed)
    assert straight_crop(
        np.zeros((50, 50, 3), np.uint8), corner_rect(squashed), 16, 0, "given"
    ).shape == (16, 16, 3)
    with pytest.raises(ValueError, match="unknown turn 'up'"):
        straight_crop(np.zeros((50, 50, 3), np.uint8), corner_rect(squashed), 16, 0, "up")


def test_straight_export_needs_oriented_labels(tmp_path: Path) -> None:
    _labelled_set(tmp_path / "set", "train")
    with pytest.raises(ValueError, match="straight crops need oriented-box labels"):
        export_split_set([tmp_path / "set"], tmp_path / "s", copies=1, straight=True)


def test_camera_crop_with_the_straightening_turn_is_the_straight_crop() -> None:
    """``turn`` makes camera_crop sample the turned box as straight_crop does (so changed and
    plain training copies, and the recogniser's crops, frame a tile alike)."""
    _, photo, _ = _turned_tile(35.0)
    rect = upright_rect((120.0, 120.0, 80.0, 120.0, -35.0))
    cx, cy, w, h, turn = rect
    frame = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    still = camera_crop(photo, frame, np.random.default_rng(0), 48, augment=STILL, turn=turn)
    plain = straight_crop(photo, rect, 48)
    assert np.abs(still.astype(int) - plain.astype(int)).mean() < 3
    wrong = camera_crop(photo, frame, np.random.default_rng(0), 48, augment=STILL, turn=-turn)
    assert np.abs(wrong.astype(int) - plain.astype(int)).mean() > 10


def test_rect_jitter_moves_edges_along_the_tile_axes() -> None:
    rect = (150.0, 150.0, 40.0, 60.0, 30.0)
    rng = np.random.default_rng(0)
    along = cv2.getRotationMatrix2D((0.0, 0.0), 30.0, 1.0)[:, :2]  # image -> tile frame
    shifts, sizes = [], []
    for _ in range(2000):
        cx, cy, w, h, angle = jitter_rect(rect, 0.1, rng)
        assert angle == 30.0
        shifts.append(along @ np.array([cx - 150.0, cy - 150.0]))
        sizes.append((w, h))
    shifts, sizes = np.abs(np.array(shifts)), np.array(sizes)
    # the centre moves by at most half of two edges' moves: 0.1 of the width across the tile,
    # 0.1 of its height along it
    assert shifts[:, 0].max() <= 4.0 + 1e-6 and shifts[:, 1].max() <= 6.0 + 1e-6
    assert (
        shifts[:, 0].max() > 3.5 and shifts[:, 1].max() > 5.0
    )  # (a turn mix-up would break these)
    assert np.abs(sizes - (40, 60)).max(axis=0) == pytest.approx((8, 12), abs=0.5)


def test_plain_first_false_changes_every_copy(tmp_path: Path) -> None:
    _turned_tile_set(tmp_path / "set", 20.0)
    kwargs = {"copies": 1, "seed": 3, "size": 48, "augment": True, "straight": True}
    export_split_set([tmp_path / "set"], tmp_path / "a", **kwargs)
    export_split_set([tmp_path / "set"], tmp_path / "b", **kwargs, plain_first=False)
    export_split_set([tmp_path / "set"], tmp_path / "c", **kwargs, plain_first=False)
    a, b, c = (cv2.imread(str(tmp_path / d / "train" / "34_B9" / "set_t_000_0.jpg")) for d in "abc")
    assert np.array_equal(b, c)  # seeded
    assert not np.array_equal(a, b)


def test_camera_crop_of_a_large_box_averages_like_the_plain_crop() -> None:
    """Fine print in a box many times the crop's size: camera_crop shrinks by area averaging, as
    crop_tile does, instead of sampling every n-th pixel (which would alias stripes)."""
    image = np.zeros((400, 400, 3), np.uint8)
    image[:, ::2] = 255  # one-pixel stripes
    box = (40.0, 40.0, 360.0, 360.0)
    plain = crop_tile(image, box, 32).astype(int)
    still = camera_crop(image, box, np.random.default_rng(0), 32, augment=STILL).astype(int)
    assert abs(plain.mean() - 127.5) < 3 and plain.std() < 10
    assert np.abs(still - plain).mean() < 5


def test_light_colour_moves_blue_against_red_and_off_draws_nothing() -> None:
    image, box = _tile_image()
    plain = camera_crop(image, box, np.random.default_rng(0), 48, augment=STILL)
    # off (the default): no draw at all, so older configs' crops stay the same files
    off = CameraAugment(**{**STILL.__dict__, "temperature": 0.3, "temperature_p": 0.0})
    off = CameraAugment(**{**off.__dict__, "motion_blur": 9, "motion_p": 0.0})
    rng_off, rng_still = np.random.default_rng(0), np.random.default_rng(0)
    assert np.array_equal(camera_crop(image, box, rng_off, 48, augment=off), plain)
    camera_crop(image, box, rng_still, 48, augment=STILL)
    assert rng_off.random() == rng_still.random()  # the same draws: the next crop is the same too
    on = CameraAugment(**{**STILL.__dict__, "temperature": 0.3, "temperature_p": 1.0})
    rng = np.random.default_rng(5)
    ratios = []
    for _ in range(30):
        crop = camera_crop(image, box, rng, 48, augment=on).astype(float)
        tile = crop[8:40, 8:16].reshape(-1, 3).mean(axis=0)  # on the cream face: B, G, R
        ratios.append(tile[0] / tile[2])
        assert abs(tile[1] - plain[8:40, 8:16, 1].mean()) < 2  # green stays
    base = plain[8:40, 8:16, 0].mean() / plain[8:40, 8:16, 2].mean()
    assert min(ratios) < 0.85 * base and max(ratios) > 1.15 * base  # warm and cold light both


def test_motion_kernel_is_a_normalised_streak_in_its_direction() -> None:
    flat = motion_kernel(7, 0)
    assert flat.sum() == pytest.approx(1.0) and np.count_nonzero(flat.sum(axis=1)) == 1
    upright = motion_kernel(7, 90)
    assert upright.sum() == pytest.approx(1.0)
    assert np.count_nonzero(upright.sum(axis=0) > 1e-3) <= 2  # one column (bilinear: two)
    with pytest.raises(ValueError, match="length"):
        motion_kernel(0, 0)


def test_motion_blur_smears_the_bar_along_the_streak() -> None:
    image, box = _tile_image()
    streaky = CameraAugment(**{**STILL.__dict__, "motion_blur": 15, "motion_p": 1.0})
    rng = np.random.default_rng(1)
    plain = camera_crop(image, box, np.random.default_rng(0), 48, augment=STILL).astype(int)
    crops = [camera_crop(image, box, rng, 48, augment=streaky).astype(int) for _ in range(8)]
    assert all(np.abs(c - plain).mean() > 1 for c in crops)
    # the mean colour is kept: a streak moves light around, it does not add or remove it
    assert all(abs(c.mean() - plain.mean()) < 3 for c in crops)
