"""The synthetic renderer: labels match the drawn tiles, determinism, hands, video, preview."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from istaka.cli import main
from okey import Tile
from vision.training.synth import render_sample, render_video, yolo_lines
from vision.training.synth.dataset import encode_jpeg
from vision.training.synth.hand import copies_ok, deal_hand
from vision.training.synth.video import read_y4m, write_video


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth")
    assert (
        main(["synth", "--n", "6", "--seed", "5", "--out", str(out), "--workers", "2", "--quiet"])
        == 0
    )
    return out


def _read_labels(path: Path) -> list[tuple[int, float, float, float, float]]:
    rows = []
    for line in path.read_text().splitlines():
        c, *vals = line.split()
        rows.append((int(c), *map(float, vals)))
    return rows


def test_folder_layout_and_labels_agree_with_sidecars(rendered: Path) -> None:
    images = sorted((rendered / "images").glob("*.jpg"))
    assert len(images) == 6
    assert (rendered / "data.yaml").exists()
    labelled_total = 0
    for img_path in images:
        stem = img_path.stem
        image = cv2.imread(str(img_path))
        assert image.shape == (480, 640, 3)
        truth = json.loads((rendered / "sidecars" / f"{stem}.json").read_text())
        labels = _read_labels(rendered / "labels" / f"{stem}.txt")
        labelled = [t for t in truth["tiles"] if t["labelled"]]
        assert len(labels) == len(labelled)
        labelled_total += len(labelled)
        for (cls, cx, cy, w, h), t in zip(labels, labelled, strict=True):
            assert 0 <= cls <= 52 and cls == t["class"] == Tile.parse(t["tile"]).index
            x0, y0, x1, y1 = t["box"]
            assert 0 <= x0 < x1 <= 640 and 0 <= y0 < y1 <= 480
            assert cx == pytest.approx((x0 + x1) / 2 / 640, abs=1e-5)
            assert cy == pytest.approx((y0 + y1) / 2 / 480, abs=1e-5)
            assert w == pytest.approx((x1 - x0) / 640, abs=1e-5)
            assert h == pytest.approx((y1 - y0) / 480, abs=1e-5)
            assert t["visible"] >= 0.4
        # rows and groups cover exactly the rack tiles, and groups concatenate to the rows
        rack_ids = {t["id"] for t in truth["tiles"] if t["on_rack"]}
        assert sorted(i for row in truth["rows"] for i in row) == sorted(rack_ids)
        for row, groups in zip(truth["rows"], truth["groups"], strict=True):
            assert [i for g in groups for i in g] == row
        assert set(truth["table"]) == {t["id"] for t in truth["tiles"] if not t["on_rack"]}
    assert labelled_total > 20


def test_boxes_are_where_the_tiles_are_drawn() -> None:
    """Removing one tile from a scene changes the pixels inside its box, and little outside."""
    from dataclasses import replace

    from vision.training.synth.render import render_scene
    from vision.training.synth.scene import sample_scene

    checked = 0
    for seed in (11, 12, 13):
        scene = sample_scene(np.random.default_rng(seed))
        image, truth = render_scene(scene, np.random.default_rng(0))
        for t in truth["tiles"]:
            if not t["labelled"] or t["visible"] < 0.9 or t["box"][2] - t["box"][0] < 15:
                continue
            others = [p for i, p in enumerate(scene.tiles) if i != t["id"]]
            without, _ = render_scene(replace(scene, tiles=others), np.random.default_rng(0))
            changed = np.abs(image.astype(int) - without.astype(int)).max(axis=2) > 30
            x0, y0, x1, y1 = (int(round(v)) for v in t["box"])
            inside = changed[y0:y1, x0:x1].mean()
            outside = changed.sum() - changed[y0:y1, x0:x1].sum()
            assert inside > 0.3, (seed, t)
            # the tile's sides and shadow lie just outside the face box; nothing far away changes
            assert outside < 0.6 * (x1 - x0) * (y1 - y0), (seed, t)
            checked += 1
            break
    assert checked == 3


def test_same_seed_same_bytes_different_seed_differs() -> None:
    a_img, a_truth = render_sample(3, 2)
    b_img, b_truth = render_sample(3, 2)
    c_img, _ = render_sample(4, 2)
    assert encode_jpeg(a_img, 90) == encode_jpeg(b_img, 90)
    assert yolo_lines(a_truth) == yolo_lines(b_truth)
    assert json.dumps(a_truth) == json.dumps(b_truth)
    assert not np.array_equal(a_img, c_img)


def test_workers_do_not_change_output(tmp_path: Path, rendered: Path) -> None:
    out = tmp_path / "one"
    assert main(["synth", "--n", "2", "--seed", "5", "--out", str(out), "--quiet"]) == 0
    for name in ("s5_000000", "s5_000001"):
        assert (out / "images" / f"{name}.jpg").read_bytes() == (
            rendered / "images" / f"{name}.jpg"
        ).read_bytes()
        assert (out / "labels" / f"{name}.txt").read_text() == (
            rendered / "labels" / f"{name}.txt"
        ).read_text()


@pytest.mark.parametrize("seed", range(40))
def test_hands_respect_copies(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = [14, 15, 21, 22][seed % 4]
    deal = deal_hand(rng, size)
    tiles = [t for g in deal.groups for t in g]
    assert len(tiles) == size
    assert copies_ok(tiles, deal.indicator)
    assert not deal.indicator.is_false_joker
    assert Counter(tiles)[Tile.false_joker()] <= 2


def test_rendered_hand_sizes_and_copies() -> None:
    for i in range(4):
        _, truth = render_sample(21, i)
        hand = [Tile.parse(t["tile"]) for t in truth["tiles"] if t["on_rack"]]
        expected = {"classic": (14, 15), "okey101": (21, 22)}[truth["rules"]]
        assert len(hand) in expected
        everything = [Tile.parse(t["tile"]) for t in truth["tiles"] if t["role"] != "indicator"]
        assert copies_ok(everything, Tile.parse(truth["indicator"]))


def test_heldout_pool_differs_in_fonts() -> None:
    from vision.training.synth.styles import POOLS

    train, held = POOLS["train"], POOLS["heldout"]
    assert not set(train.fonts) & set(held.fonts)
    _, truth = render_sample(1, 0, "heldout")
    assert truth["style_pool"] == "heldout"


# the held-out typefaces and their clones (same glyph designs under other names)
_HELDOUT_RELATIVES = {
    "URWGothic-Demi.otf",
    "NimbusSansNarrow-Bold.otf",
    "C059-Bold.otf",
    "P052-Bold.otf",
    "texgyreadventor-bold.otf",
    "texgyreheroscn-bold.otf",
    "texgyreschola-bold.otf",
    "texgyrepagella-bold.otf",
    "LiberationSansNarrow-Bold.ttf",
}


def test_wide_pool_keeps_the_heldout_styles_out() -> None:
    from vision.training.synth.styles import POOLS

    wide, held, train = POOLS["wide"], POOLS["heldout"], POOLS["train"]
    assert set(train.fonts) < set(wide.fonts) and len(wide.fonts) >= 30
    assert not set(wide.fonts) & (set(held.fonts) | _HELDOUT_RELATIVES)
    assert "flower" not in wide.joker_marks and set(train.joker_marks) < set(wide.joker_marks)
    _, truth = render_sample(6, 0, "wide")
    assert truth["style_pool"] == "wide"


def test_every_typeface_renders_every_number_and_has_a_licence() -> None:
    from vision.training.synth.face import FACE_H, _number_mask
    from vision.training.synth.styles import FONT_DIR, POOLS

    listed = (FONT_DIR / "README.md").read_text()
    fonts = sorted({f for p in POOLS.values() for f in p.fonts})
    assert fonts == sorted(p.name for p in FONT_DIR.iterdir() if p.suffix in (".ttf", ".otf"))
    for font in fonts:
        row = next(line for line in listed.splitlines() if line.startswith(f"| {font} |"))
        package = row.split("|")[2].strip()
        assert (FONT_DIR / f"LICENSE.{package}.txt").is_file(), font
        for number in (1, 4, 6, 9, 11, 13):
            mask = _number_mask(font, number, 0.45, 0.35)
            rows = np.flatnonzero(mask.max(axis=1) > 0.5)
            # the glyphs' ink is drawn 45 % of the face tall (a missing glyph would be a box or
            # nothing)
            assert abs((rows[-1] - rows[0] + 1) / FACE_H - 0.45) < 0.03, (font, number)


def test_false_joker_marks_are_distinct_shapes() -> None:
    from vision.training.synth.face import FACE_H, FACE_W, SYMBOLS, _symbol_mask
    from vision.training.synth.styles import POOLS

    masks = {
        k: _symbol_mask(k, FACE_W / 2, FACE_H * 0.45, FACE_W * 0.34, False) > 0.5 for k in SYMBOLS
    }
    wide, train = POOLS["wide"].joker_marks, POOLS["train"].joker_marks

    def iou(a: str, b: str) -> float:
        return float((masks[a] & masks[b]).sum() / (masks[a] | masks[b]).sum())

    for a in wide:
        assert masks[a].sum() > 0.04 * FACE_W * FACE_H, a  # a mark big enough to see
    for a in set(wide) - set(train):  # each added mark draws a shape of its own
        # (centred blobs of one size overlap 0.6-0.8 whatever their outline; a copy would be 1.0)
        assert all(iou(a, b) < 0.9 for b in SYMBOLS if b != a), a


def test_random_marks_are_seeded_solid_shapes_unlike_the_heldout_flower() -> None:
    from vision.training.synth.face import FACE_H, FACE_W, RANDOM_MARK, _symbol_mask
    from vision.training.synth.styles import POOLS

    def mask(kind: str) -> np.ndarray:
        return _symbol_mask(kind, FACE_W / 2, FACE_H * 0.45, FACE_W * 0.34, False) > 0.5

    flower = mask("flower")
    shapes = [mask(f"{RANDOM_MARK}{seed}") for seed in range(60)]
    assert np.array_equal(shapes[7], mask(f"{RANDOM_MARK}7"))  # the same seed, the same shape
    for m in shapes:
        assert m.sum() > 0.03 * FACE_W * FACE_H  # big enough to see
        ys, xs = np.nonzero(m)
        assert ys.min() > 0 and xs.min() > 0 and ys.max() < FACE_H - 1 and xs.max() < FACE_W - 1
        # solid: no hole inside (the flower's centre is a hole; digits have counters)
        filled = m.copy().astype(np.uint8)
        holes = cv2.floodFill(filled, None, (0, 0), 1)[1] == 0
        assert not holes.any()
        assert (m & flower).sum() / (m | flower).sum() < 0.9
    assert len({m.tobytes() for m in shapes}) == 60
    wide, wide2 = POOLS["wide"], POOLS["wide2"]
    assert wide.random_marks == 0 and 0 < wide2.random_marks < 1
    assert (wide2.fonts, wide2.inks, wide2.joker_marks) == (wide.fonts, wide.inks, wide.joker_marks)


def test_only_pools_with_random_marks_draw_them() -> None:
    from vision.training.synth.face import RANDOM_MARK, sample_set_style

    for name in ("train", "wide", "heldout"):
        rng = np.random.default_rng(3)
        marks = [sample_set_style(rng, name).joker_mark for _ in range(200)]
        assert not any(m.startswith(RANDOM_MARK) for m in marks), name
    rng = np.random.default_rng(3)
    marks = [sample_set_style(rng, "wide2").joker_mark for _ in range(400)]
    share = sum(m.startswith(RANDOM_MARK) for m in marks) / len(marks)
    assert 0.4 < share < 0.6
    # wide2's first draws are wide's: only the mark may differ
    a = sample_set_style(np.random.default_rng(11), "wide")
    b = sample_set_style(np.random.default_rng(11), "wide2")
    assert (a.font, a.inks, a.body, a.number_scale) == (b.font, b.inks, b.body, b.number_scale)
    _, truth = render_sample(4, 0, "wide2")
    assert truth["style_pool"] == "wide2"


def test_video_frames_and_sidecars(tmp_path: Path) -> None:
    frames, truths = render_video(seed=2, n_frames=4, size=(320, 240))
    assert len(frames) == len(truths) == 4
    assert all(f.shape == (240, 320, 3) for f in frames)
    hands = [[t["tile"] for t in tr["tiles"] if t["on_rack"]] for tr in truths]
    assert all(h == hands[0] for h in hands)  # one rack and hand through the clip
    assert not np.array_equal(frames[0], frames[1])  # the camera moves
    path = tmp_path / "clip.y4m"
    write_video(path, frames, 15)
    assert path.read_bytes().startswith(b"YUV4MPEG2 W320 H240 F15:1")
    back = read_y4m(path)
    assert len(back) == 4
    assert np.abs(back[0].astype(int) - frames[0].astype(int)).mean() < 6


def test_cli_video_and_preview(tmp_path: Path) -> None:
    video = tmp_path / "v.y4m"
    assert main(["synth", "--video", str(video), "--frames", "3", "--size", "160x120"]) == 0
    meta = json.loads(video.with_suffix(".json").read_text())
    assert len(meta["frames"]) == 3
    png = tmp_path / "sheet.png"
    assert main(["synth", "--preview", str(png), "--count", "2", "--size", "320x240"]) == 0
    sheet = cv2.imread(str(png))
    assert sheet is not None and sheet.shape[2] == 3


def test_bad_input_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth", "--n", "0", "--out", str(tmp_path / "x")]) == 2
    assert "--n" in capsys.readouterr().err
    assert main(["synth", "--preview", str(tmp_path / "x.jpg")]) == 2
    assert "PNG" in capsys.readouterr().err
    assert main(["synth", "--out", str(tmp_path / "x"), "--seed", "-3"]) == 2
    assert "--seed" in capsys.readouterr().err
    assert main(["synth", "--video", str(tmp_path / "v.avi")]) == 2
    assert ".y4m" in capsys.readouterr().err
    assert main(["synth", "--video", str(tmp_path / "v.y4m"), "--size", "321x240"]) == 2
    assert "even" in capsys.readouterr().err


def test_camera_keeps_tiles_20_to_120_px_wide_and_tilt_in_range() -> None:
    from vision.training.synth.scene import rack_tile_cuboid, sample_scene

    widths = []
    for seed in range(60):
        scene = sample_scene(np.random.default_rng(seed))
        assert 0 <= scene.camera_params["tilt"] <= 60
        for t in scene.tiles:
            if t.on_rack:
                front, _ = rack_tile_cuboid(scene.rack, t).corners()
                uv, z = scene.camera.project(front)
                if np.all(z > 0):
                    widths.append(float(np.linalg.norm(uv[1] - uv[0])))
    widths_arr = np.array(widths)
    assert widths_arr.max() <= 120.5
    assert np.percentile(widths_arr, 5) >= 15  # a few far tiles of a long 101 rack dip below 20
    assert (widths_arr < 35).any() and (widths_arr > 80).any()  # both wide views and close-ups


def test_committed_heldout_eval_set_is_consistent() -> None:
    import yaml

    root = Path(__file__).resolve().parents[1] / "datasets" / "synth_eval"
    data = yaml.safe_load((root / "data.yaml").read_text())
    assert "path" not in data  # resolved next to the YAML wherever the checkout lives
    assert len(data["names"]) == 53 and data["names"][52] == "FJ"
    images = sorted((root / "images").glob("*.jpg"))
    assert len(images) == 200
    for img in images[::20]:
        truth = json.loads((root / "sidecars" / f"{img.stem}.json").read_text())
        assert truth["style_pool"] == "heldout" and truth["image"] == img.name
        labels = _read_labels(root / "labels" / f"{img.stem}.txt")
        assert [c for c, *_ in labels] == [t["class"] for t in truth["tiles"] if t["labelled"]]


def test_every_sidecar_key_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "synth.md").read_text()
    keys: set[str] = set()
    for kind in ("rack", "tiers2_frontal", "real_reframe"):
        _, truth = render_sample(2, 0, scene_kind=kind)
        keys |= set(truth) | {k for t in truth["tiles"] for k in t}
    missing = sorted(k for k in keys if f'"{k}"' not in doc)
    assert not missing, f"undocumented sidecar keys: {missing}"


def test_framing_pool_keeps_the_heldout_styles_out() -> None:
    """The pool for the framing training adds navy and teal blues, mustard yellows and rings
    under the number, and still shares no typeface or false-joker mark with ``heldout``."""
    from vision.training.synth.styles import POOLS

    framing, held = POOLS["framing"], POOLS["heldout"]
    assert not set(framing.fonts) & (set(held.fonts) | _HELDOUT_RELATIVES)
    assert "flower" not in framing.joker_marks and framing.random_marks > 0
    assert "ring" in framing.suits
    blues = [r.hue for r in framing.inks["B"]]
    assert any(lo >= 105 for lo, _ in blues) and any(hi <= 100 and lo >= 80 for lo, hi in blues)
    _, truth = render_sample(6, 0, "framing", scene_kind="tiers")
    assert truth["style_pool"] == "framing"


def test_table_scenes_lay_groups_on_the_table_at_any_angle() -> None:
    """``scene_kind="table"``: labelled tiles lying on the table, in rows and columns of touching
    tiles turned every way, each box tight around the drawn tile (rotation widens boxes)."""
    from vision.training.synth.scene import sample_scene

    spins, labelled, aspect = [], 0, []
    for index in range(6):
        scene = sample_scene(np.random.default_rng(100 + index), kind="table")
        table = [t for t in scene.tiles if t.role == "table"]
        assert table and all(not t.on_rack for t in table)
        spins += [t.spin % 180 for t in table]
        # no tile appears more often than a set holds it (two of each, the rack included)
        counts = Counter(str(t.tile) for t in scene.tiles)
        assert max(counts.values()) <= 2
        _, truth = render_sample(7, index, scene_kind="table")
        for t in truth["tiles"]:
            if t["labelled"] and t["role"] == "table":
                labelled += 1
                x0, y0, x1, y1 = t["box"]
                assert 0 <= x0 < x1 <= 640 and 0 <= y0 < y1 <= 480
                aspect.append((x1 - x0) / (y1 - y0))
        assert set(truth["table"]) == {t["id"] for t in truth["tiles"] if not t["on_rack"]}
    assert labelled >= 20
    # both near-upright and sideways or slanted tiles
    assert min(spins) < 20 and any(40 < s < 140 for s in spins)
    assert min(aspect) < 0.9 and max(aspect) > 1.1  # upright tiles and tiles lying sideways


def test_unknown_scene_kind_is_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    from vision.training.synth.scene import sample_scene

    with pytest.raises(ValueError, match="scene kind 'floor'"):
        sample_scene(np.random.default_rng(0), kind="floor")
    assert main(["synth", "--out", "/tmp/never-written", "--scene", "floor"]) == 2
    err = capsys.readouterr().err
    assert "--scene must be one of rack, table, tiers" in err and "real_reframe" in err
    assert not Path("/tmp/never-written").exists()


def test_shown_counts_the_quad_pixels_of_the_tile() -> None:
    from vision.training.synth.render import _shown

    idmap = np.full((40, 60), -1, np.int32)
    idmap[10:30, 10:50] = 3
    idmap[10:30, 30:50] = 4  # the right half of the quad shows another tile (or a finger: -1)
    quad = np.array([[10, 10], [50, 10], [50, 30], [10, 30]], np.float32)
    assert _shown(idmap, 3, quad) == pytest.approx(0.5, abs=0.03)
    assert _shown(idmap, 4, quad) == pytest.approx(0.5, abs=0.03)
    assert _shown(idmap, 5, quad) == 0.0
    # the part of a quad outside the frame counts as hidden
    off = quad + [30, 0]
    assert _shown(np.full((40, 60), 7, np.int32), 7, off) == pytest.approx(0.5, abs=0.03)
    assert _shown(idmap, 3, None) == 0.0


def test_mark_box_holds_the_number_and_turns_with_the_face() -> None:
    from vision.training.synth.face import FACE_H, FACE_W, _number_mask, mark_box, sample_set_style

    style = sample_set_style(np.random.default_rng(4), "train")
    tile = Tile.parse("R12")
    x0, y0, x1, y1 = mark_box(tile, style)
    mask = _number_mask(style.font, 12, style.number_scale, style.number_y)
    assert mask[y0:y1, x0:x1].sum() > 0.99 * mask.sum()
    assert 0 < x1 - x0 < FACE_W and 0 < y1 - y0 < FACE_H / 2
    turned = (FACE_W - x1, FACE_H - y1, FACE_W - x0, FACE_H - y0)
    assert mark_box(tile, style, upside_down=True) == turned


def test_number_visible_is_whole_on_whole_faces_and_can_be_less_than_the_face() -> None:
    from vision.training.synth.render import render_scene
    from vision.training.synth.scene import sample_scene

    whole = under = 0
    for seed in range(40):
        scene = sample_scene(np.random.default_rng(seed))
        if not scene.fingers and whole >= 20:
            continue
        _, truth = render_scene(scene, np.random.default_rng(0))
        for t in truth["tiles"]:
            assert 0.0 <= t["number_visible"] <= 1.0
            if t["labelled"] and t["visible"] >= 0.999:
                assert t["number_visible"] >= 0.98, (seed, t)
                whole += 1
            if t["labelled"] and t["number_visible"] < t["visible"] - 0.2:
                under += 1  # a finger over the number rather than the face's foot
        if under and whole >= 20:
            break
    assert whole >= 20 and under >= 1


def test_oriented_labels_hug_the_face_quads(tmp_path: Path) -> None:
    """``--labels obb``: one oriented box per labelled tile, holding the tile's visible box; the
    images and sidecars are the same as with upright labels."""
    from vision.training.synth.dataset import obb_lines

    for kind in ("box", "obb"):
        argv = ["synth", "--n", "2", "--seed", "12", "--scene", "table", "--quiet"]
        assert main([*argv, "--out", str(tmp_path / kind), "--labels", kind]) == 0
    for name in ("s12_000000", "s12_000001"):
        for sub, suffix in (("images", ".jpg"), ("sidecars", ".json")):
            a = (tmp_path / "box" / sub / f"{name}{suffix}").read_bytes()
            assert a == (tmp_path / "obb" / sub / f"{name}{suffix}").read_bytes()
        truth = json.loads((tmp_path / "obb" / "sidecars" / f"{name}.json").read_text())
        boxes = (tmp_path / "box" / "labels" / f"{name}.txt").read_text().splitlines()
        turned = (tmp_path / "obb" / "labels" / f"{name}.txt").read_text().splitlines()
        assert turned == obb_lines(truth) and len(turned) == len(boxes) > 0
        w, h = truth["width"], truth["height"]
        for box, obb in zip(boxes, turned, strict=True):
            cls, cx, cy, bw, bh = box.split()
            corners = np.float32(obb.split()[1:]).reshape(4, 2) * [w, h]
            assert obb.split()[0] == cls
            x1, y1 = (float(cx) - float(bw) / 2) * w, (float(cy) - float(bh) / 2) * h
            x2, y2 = (float(cx) + float(bw) / 2) * w, (float(cy) + float(bh) / 2) * h
            lo, hi = corners.min(axis=0), corners.max(axis=0)
            assert lo[0] <= x1 + 2 and lo[1] <= y1 + 2  # the turned box holds the face (to the
            # pixel: a box counts whole pixels)
            assert hi[0] >= x2 - 2 and hi[1] >= y2 - 2
        # the corners are named after the tile: each one near its namesake of the face quad
        # (the quad runs top-left, top-right, bottom-right, bottom-left of the tile)
        quads = [np.float32(t["quad"]) for t in truth["tiles"] if t["labelled"]]
        for obb, quad in zip(turned, quads, strict=True):
            corners = np.float32(obb.split()[1:]).reshape(4, 2) * [w, h]
            inside = (quad >= 0).all(axis=1) & (quad <= [w, h]).all(axis=1)
            near = np.linalg.norm(corners - quad, axis=1)
            side = np.linalg.norm(quad[1] - quad[0])
            assert (near[inside] < 0.25 * side).all()
    with pytest.raises(ValueError, match="labels must be one of"):
        from vision.training.synth.dataset import render_dataset

        render_dataset(tmp_path / "x", 1, 1, labels="polygon")
