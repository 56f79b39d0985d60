"""The real-photo converter: class mapping, polygon boxes, the split by source photo."""

from __future__ import annotations

from pathlib import Path

import pytest

from okey import Tile
from vision.training import data_real
from vision.training.data_real import (
    UPSTREAM_NAMES,
    polygon_to_box,
    polygon_to_obb,
    read_upstream_labels,
    read_val_list,
    source_of,
    split_sources,
    upstream_to_index,
)

REAL = data_real.DEFAULT_SRC
needs_real = pytest.mark.skipif(not (REAL / "images").is_dir(), reason="real photos not present")


def test_upstream_names_follow_the_alphabetical_upstream_order() -> None:
    assert len(UPSTREAM_NAMES) == 53
    assert UPSTREAM_NAMES[:3] == ("black_1", "black_10", "black_11")
    assert UPSTREAM_NAMES[26] == "joker"
    assert UPSTREAM_NAMES[27] == "orange_1"
    assert UPSTREAM_NAMES[52] == "red_9"


@pytest.mark.parametrize(
    ("upstream", "expected"),
    [("black_1", "K1"), ("blue_13", "B13"), ("orange_10", "Y10"), ("red_9", "R9"), ("joker", "FJ")],
)
def test_class_mapping(upstream: str, expected: str) -> None:
    assert Tile(upstream_to_index(UPSTREAM_NAMES.index(upstream))) == Tile.parse(expected)


def test_mapping_is_a_bijection() -> None:
    assert sorted(upstream_to_index(i) for i in range(53)) == list(range(53))


def test_bad_class_id_is_named() -> None:
    with pytest.raises(ValueError, match="53"):
        upstream_to_index(53)


def test_polygon_box_encloses_and_clips() -> None:
    xc, yc, w, h = polygon_to_box([-0.1, 0.2, 0.4, 0.1, 0.3, 0.5])
    assert (xc - w / 2, xc + w / 2) == pytest.approx((0.0, 0.4))
    assert (yc - h / 2, yc + h / 2) == pytest.approx((0.1, 0.5))


def test_short_polygon_is_rejected() -> None:
    with pytest.raises(ValueError, match="3 x,y pairs"):
        polygon_to_box([0.1, 0.2, 0.3, 0.4])


def test_label_file_without_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("26 0.1 0.1 0.2 0.1 0.2 0.3\n13 0.5 0.5 0.6 0.5 0.6 0.7 0.5 0.7")
    labels = read_upstream_labels(path)
    assert [str(Tile(label.index)) for label in labels] == ["FJ", "B1"]
    assert labels[1].box == pytest.approx((0.55, 0.6, 0.1, 0.2))


def test_bad_label_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("0 0.1 0.1 0.2 0.1 0.2 0.3\n0 0.1 zz 0.2\n")
    with pytest.raises(ValueError, match=r"bad\.txt:2"):
        read_upstream_labels(path)


def test_split_keeps_copies_of_a_source_together() -> None:
    names = [
        f"rummy{s}-{i}_jpeg.rf.{h}.jpg" for s in ("", "2", "3") for i in range(20) for h in "abc"
    ]
    train, val = split_sources(names, 0.2, seed=1)
    assert sorted(train + val) == sorted(names)
    assert {source_of(n) for n in train}.isdisjoint({source_of(n) for n in val})
    # Stratified: each series gives 4 of its 20 sources (12 images) to validation.
    for series in ("rummy-", "rummy2-", "rummy3-"):
        assert sum(n.startswith(series) for n in val) == 12
    assert split_sources(names, 0.2, seed=1) == (train, val)
    assert split_sources(names, 0.2, seed=2) != (train, val)


@needs_real
def test_committed_val_list_is_the_seeded_split() -> None:
    names = sorted(p.name for p in (REAL / "images").iterdir())
    _, val = split_sources(names, data_real.DEFAULT_VAL_FRACTION, data_real.DEFAULT_SEED)
    assert read_val_list() == val


@needs_real
def test_convert_writes_boxes_in_istaka_classes(tmp_path: Path) -> None:
    val = read_val_list()
    counts = data_real.convert(REAL, tmp_path, val_names=val)
    assert counts == {"train": 537 - len(val), "val": len(val)}
    for split in ("train", "val"):
        images = {p.stem for p in (tmp_path / "images" / split).iterdir()}
        labels = {p.stem for p in (tmp_path / "labels" / split).iterdir()}
        assert images == labels
    lines = [
        line.split()
        for path in (tmp_path / "labels" / "val").glob("*.txt")
        for line in path.read_text().splitlines()
    ]
    assert lines and all(len(parts) == 5 for parts in lines)
    assert all(0 <= int(parts[0]) <= 52 for parts in lines)
    assert all(0 <= float(v) <= 1 for parts in lines for v in parts[1:])
    assert (tmp_path / "data.yaml").exists()


def test_polygon_obb_is_the_turned_rectangle_in_pixels() -> None:
    """A 40x20 px rectangle turned 30 degrees (with a midpoint on one edge, as upstream polygons
    have) gives back its own four corners; computed in pixels, so a non-square image is right."""
    import math

    width, height = 200, 100
    angle = math.radians(30)
    u, v = (math.cos(angle), math.sin(angle)), (-math.sin(angle), math.cos(angle))
    corners = [
        (100 + sx * 20 * u[0] + sy * 10 * v[0], 50 + sx * 20 * u[1] + sy * 10 * v[1])
        for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
    ]
    mid = ((corners[0][0] + corners[1][0]) / 2, (corners[0][1] + corners[1][1]) / 2)
    polygon = [corners[0], mid, *corners[1:]]
    coords = [c for x, y in polygon for c in (x / width, y / height)]
    obb = polygon_to_obb(coords, width, height)
    got = sorted((round(obb[i] * width, 2), round(obb[i + 1] * height, 2)) for i in (0, 2, 4, 6))
    assert got == sorted((round(x, 2), round(y, 2)) for x, y in corners)
    with pytest.raises(ValueError, match="at least 3 x,y pairs"):
        polygon_to_obb([0.1, 0.2, 0.3, 0.4], width, height)


@needs_real
def test_convert_writes_oriented_boxes_when_asked(tmp_path: Path) -> None:
    """``--obb``: a class and four corners a line, whose upright hull holds the box line's box."""
    val = read_val_list()
    data_real.convert(REAL, tmp_path / "obb", val_names=val, obb=True)
    data_real.convert(REAL, tmp_path / "box", val_names=val)
    name = sorted((tmp_path / "box" / "labels" / "val").iterdir())[0].name
    boxes = (tmp_path / "box" / "labels" / "val" / name).read_text().splitlines()
    turned = (tmp_path / "obb" / "labels" / "val" / name).read_text().splitlines()
    assert len(boxes) == len(turned) > 0
    for box, obb in zip(boxes, turned, strict=True):
        cls, *b = box.split()
        cls_o, *c = obb.split()
        assert cls == cls_o and len(c) == 8
        xs, ys = [float(v) for v in c[0::2]], [float(v) for v in c[1::2]]
        # the rectangle's hull holds the polygon's box (equal for square-cornered tiles)
        xc, yc, w, h = (float(v) for v in b)
        assert min(xs) <= xc - w / 2 + 1e-3 and max(xs) >= xc + w / 2 - 1e-3
        assert min(ys) <= yc - h / 2 + 1e-3 and max(ys) >= yc + h / 2 - 1e-3
