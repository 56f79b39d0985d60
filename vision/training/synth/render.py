"""Rendering a ``Scene``: painter's-order drawing of the table, racks, tiles and hands, then the
light and the camera (``photo``), and the ground truth (sidecar) read off the drawing.

>>> import numpy as np
>>> from vision.training.synth.scene import sample_scene
>>> image, truth = render_scene(sample_scene(np.random.default_rng(3)), np.random.default_rng(4))
>>> image.shape, truth["width"], truth["height"]
((480, 640, 3), 640, 480)
"""

from __future__ import annotations

import cv2
import numpy as np

from okey import Tile
from vision.training.synth.face import FACE_H, FACE_W, mark_box
from vision.training.synth.geometry import (
    Camera,
    Cuboid,
    fill_quad,
    paste_texture,
    quad_area,
    visible,
)
from vision.training.synth.hands import draw_hand
from vision.training.synth.photo import apply_light, apply_post
from vision.training.synth.scene import (
    MIN_VISIBLE,
    READABLE_NUMBER,
    READABLE_VISIBLE,
    SCHEMA_VERSION,
    TABLE_PX_PER_CM,
    TILE_W,
    FarRack,
    Finger,
    Scene,
    SceneTile,
    board_point,
    moved,
    rack_boxes,
    rack_tile_cuboid,
    table_tile_cuboid,
)


def _draw_far_rack(
    canvas: np.ndarray,
    idmap: np.ndarray,
    cam: Camera,
    far: FarRack,
    body: np.ndarray,
    light_dir: np.ndarray,
) -> None:
    """Painter's order by distance: far tiles, then the board between them and the camera."""
    rack = far.rack
    colour = rack.texture.reshape(-1, 3).mean(0)
    items: list[tuple[Cuboid, np.ndarray, np.ndarray | None]] = [
        (moved(b, far.rotation, far.offset), colour, rack.texture)
        for b in rack_boxes(rack).values()
    ]
    items += [
        (moved(rack_tile_cuboid(rack, t), far.rotation, far.offset), body, None) for t in far.tiles
    ]

    def centre_distance(item: tuple[Cuboid, np.ndarray, np.ndarray | None]) -> float:
        c = item[0]
        return -float(np.linalg.norm(c.origin + (c.a + c.b + c.c) / 2 - cam.C))

    for cub, col, tex in sorted(items, key=centre_distance):
        _draw_box(canvas, idmap, cam, cub, col, tex, light_dir)


def _draw_table(canvas: np.ndarray, scene: Scene) -> None:
    """The table plane under the camera, softer with distance, and the room beyond ~3 m."""
    cam = scene.camera
    w, h = scene.size
    ox, oy = scene.table_origin
    s = 1.0 / TABLE_PX_PER_CM
    tex_to_world = np.array([[s, 0, ox], [0, s, oy], [0, 0, 1]])
    H = cam.plane_homography() @ tex_to_world
    flags, border = cv2.INTER_LINEAR, cv2.BORDER_REFLECT_101
    sharp = cv2.warpPerspective(scene.table, H, (w, h), flags=flags, borderMode=border)
    # a quarter-size texture warped the same way stands in for the far, out-of-focus table and
    # keeps fine weaves from turning into moire near the horizon
    small = cv2.resize(scene.table, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    H_small = H @ np.diag([4.0, 4.0, 1.0])
    soft = cv2.warpPerspective(small, H_small, (w, h), flags=flags, borderMode=border)
    # distance from the camera to the table along each pixel's ray, on a coarse grid
    step = 8
    gu, gv = np.meshgrid(
        np.arange(0, w + step, step, dtype=np.float64),
        np.arange(0, h + step, step, dtype=np.float64),
    )
    m = cam.R.T @ np.linalg.inv(cam.K)
    rays = np.stack([gu, gv, np.ones_like(gu)], -1) @ m.T
    dz = rays[..., 2]
    dist = np.where(dz < -1e-9, cam.C[2] / np.maximum(-dz, 1e-9), 1e9) * np.linalg.norm(
        rays, axis=-1
    )
    dist = cv2.resize(dist.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    focus = float(scene.camera_params["distance"])
    soft_w = np.clip((dist - focus * 1.2) / (focus * 1.5), 0, 1)
    table = cv2.blendLinear(soft, sharp, soft_w, 1.0 - soft_w)
    on_table = np.clip((300.0 - dist) / 30.0, 0, 1)
    if on_table.min() < 1:
        wall = cv2.resize(scene.wall, (w, h), interpolation=cv2.INTER_CUBIC)
        table = cv2.blendLinear(table, wall, on_table, 1.0 - on_table)
    canvas[:] = table


def _shadow(canvas: np.ndarray, polys: list[np.ndarray], sigma: float, strength: float) -> None:
    """Darken the image under soft-edged polygons (blurred by ``sigma`` pixels)."""
    if strength <= 0 or not polys:
        return
    h, w = canvas.shape[:2]
    pts = np.vstack(polys)
    pad = int(3 * sigma) + 2
    x0 = max(0, int(pts[:, 0].min()) - pad)
    y0 = max(0, int(pts[:, 1].min()) - pad)
    x1 = min(w, int(pts[:, 0].max()) + pad + 1)
    y1 = min(h, int(pts[:, 1].max()) + pad + 1)
    if x1 <= x0 or y1 <= y0:
        return
    m = np.zeros((y1 - y0, x1 - x0), np.float32)
    for p in polys:
        cv2.fillPoly(m, [np.round(p - [x0, y0]).astype(np.int32)], 1.0, cv2.LINE_AA)
    m = cv2.GaussianBlur(m, (0, 0), max(0.5, sigma))
    region = canvas[y0:y1, x0:x1].astype(np.float32)
    canvas[y0:y1, x0:x1] = (region * (1 - strength * m[..., None])).astype(np.uint8)


def _project_ok(cam: Camera, pts: np.ndarray) -> np.ndarray | None:
    uv, z = cam.project(pts)
    if np.any(z < 1.0):
        return None
    return uv


def _draw_box(
    canvas: np.ndarray,
    idmap: np.ndarray,
    cam: Camera,
    box: Cuboid,
    colour: np.ndarray,
    texture: np.ndarray | None = None,
    light_dir: np.ndarray | None = None,
) -> None:
    """Draw the visible faces of a box (flat shaded sides; textured if a texture is given)."""
    ld = light_dir if light_dir is not None else np.array([0.3, -0.5, 0.8])
    ld = ld / np.linalg.norm(ld)
    for name, corners, normal in box.faces():
        if name == "front" and texture is None and colour is None:
            continue
        if not visible(corners, normal, cam):
            continue
        uv = _project_ok(cam, corners)
        if uv is None:
            continue
        nn = normal / np.linalg.norm(normal)
        shade = 0.55 + 0.5 * max(0.0, float(np.dot(nn, ld)))
        if texture is not None:
            res = paste_texture(canvas, texture, uv[[3, 2, 1, 0]], shade)
        else:
            res = fill_quad(canvas, uv, np.asarray(colour, np.float32) * shade)
        if res is not None:
            (x0, y0, x1, y1), mask = res
            idmap[y0:y1, x0:x1][mask > 0.5] = -1


def _face_quad(cam: Camera, cub: Cuboid) -> np.ndarray | None:
    front, _ = cub.corners()
    return _project_ok(cam, front[[3, 2, 1, 0]])  # TL, TR, BR, BL


_ARC = np.linspace(0.0, np.pi / 2, 5)
CORNER_RADIUS = 0.13  # of the tile's width, as in the face image's rounded corners


def _rounded_sides(cub: Cuboid) -> list[tuple[np.ndarray, np.ndarray]]:
    """The four sides of a tile with rounded vertical edges, as (polygon (N, 3), outward normal).

    Each side runs between the middles of its two corner arcs, so the body never shows sharp
    corners behind the rounded face.
    """
    a_len, b_len = float(np.linalg.norm(cub.a)), float(np.linalg.norm(cub.b))
    ua, vb = cub.a / a_len, cub.b / b_len
    r = CORNER_RADIUS * a_len
    centres = ((r, r), (a_len - r, r), (a_len - r, b_len - r), (r, b_len - r))  # BL, BR, TR, TL
    starts = (np.pi, 1.5 * np.pi, 0.0, 0.5 * np.pi)
    arcs = []
    for (cu, cv), start in zip(centres, starts, strict=True):
        ang = start + _ARC
        arcs.append(np.stack([cu + r * np.cos(ang), cv + r * np.sin(ang)], axis=1))
    normals = (-cub.b, cub.a, cub.b, -cub.a)  # bottom, right, top, left
    sides = []
    for i, normal in enumerate(normals):
        pts2d = np.vstack([arcs[i][2:], arcs[(i + 1) % 4][:3]])
        plane = cub.origin + pts2d[:, :1] * ua + pts2d[:, 1:] * vb
        sides.append((np.vstack([plane + cub.c, plane[::-1]]), normal))
    return sides


def _draw_tile(
    canvas: np.ndarray,
    idmap: np.ndarray,
    cam: Camera,
    cub: Cuboid,
    tile: SceneTile,
    tid: int,
    body: np.ndarray,
    light_dir: np.ndarray,
) -> dict | None:
    """Draw a tile's sides then its face; return the face's box and area, or None if not drawn."""
    front, _ = cub.corners()
    if not visible(front, cub.c, cam):
        return None
    for corners, normal in _rounded_sides(cub):
        if not visible(corners, normal, cam):
            continue
        uv = _project_ok(cam, corners)
        if uv is None:
            continue
        nn = normal / np.linalg.norm(normal)
        shade = 0.72 + 0.3 * max(0.0, float(np.dot(nn, light_dir)))
        res = fill_quad(canvas, uv, body * shade)
        if res is not None:
            (x0, y0, x1, y1), mask = res
            idmap[y0:y1, x0:x1][mask > 0.5] = -1
    quad = _face_quad(cam, cub)
    if quad is None:
        return None
    side = float(max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[3] - quad[0])))
    face = tile.face.image()
    target_w = int(np.clip(side * 1.5, 8, FACE_W))
    if target_w < FACE_W:  # pre-shrink so the warp does not alias the strokes
        face = cv2.resize(
            face, (target_w, max(8, int(target_w * FACE_H / FACE_W))), interpolation=cv2.INTER_AREA
        )
    # the face is lit by how squarely it faces the light (rack tiles and table tiles differ)
    normal = cub.c / np.linalg.norm(cub.c)
    res = paste_texture(canvas, face, quad, 0.8 + 0.28 * max(0.0, float(normal @ light_dir)))
    area = quad_area(quad)
    if res is None:
        return {"box": None, "area": area, "quad": quad}
    (x0, y0, x1, y1), mask = res
    on = mask > 0.5
    idmap[y0:y1, x0:x1][on] = tid
    ys, xs = np.nonzero(on)
    if len(xs) == 0:
        return {"box": None, "area": area, "quad": quad}
    box = [
        float(x0 + xs.min()),
        float(y0 + ys.min()),
        float(x0 + xs.max() + 1),
        float(y0 + ys.max() + 1),
    ]
    return {"box": box, "area": area, "quad": quad, "mark_quad": _mark_quad(tile, quad)}


def _mark_quad(tile: SceneTile, quad: np.ndarray) -> np.ndarray | None:
    """The image quad of the tile's number (or false-joker mark), through the face's warp."""
    if tile.face.tile is None:
        return None
    mx0, my0, mx1, my1 = mark_box(tile.face.tile, tile.face.style, tile.face.upside_down)
    src = np.array([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]], np.float32)
    H = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    corners = np.array([[[mx0, my0], [mx1, my0], [mx1, my1], [mx0, my1]]], np.float32)
    return cv2.perspectiveTransform(corners, H)[0]


def _shown(idmap: np.ndarray, tid: int, quad: np.ndarray | None) -> float:
    """The fraction of an image quad where the picture shows tile ``tid``'s face (the parts
    outside the frame count as hidden)."""
    if quad is None:
        return 0.0
    area = quad_area(quad)
    h, w = idmap.shape
    x0, y0 = np.floor(quad.min(axis=0)).astype(int).clip(0, [w, h])
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int).clip(0, [w, h])
    if area < 1.0 or x1 <= x0 or y1 <= y0:
        return 0.0
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(inside, [np.round(quad - [x0, y0]).astype(np.int32)], 1)
    shown = np.count_nonzero(inside.astype(bool) & (idmap[y0:y1, x0:x1] == tid))
    return float(min(1.0, shown / area))


def _draw_finger(
    canvas: np.ndarray, idmap: np.ndarray, cam: Camera, finger: Finger, tile_px: float
) -> None:
    uv, z = cam.project(finger.tip[None, :])
    if z[0] < 1:
        return
    radius = max(2.5, finger.width * tile_px * 0.5)
    cover = draw_hand(canvas, uv[0], finger.angle, radius, finger.skin, finger.curled)
    idmap[cover > 0.5] = -1


def _groups(row_tiles: list[tuple[int, int]]) -> list[list[int]]:
    """Split (slot, id) pairs of one row into groups of touching slots."""
    groups: list[list[int]] = []
    last = None
    for slot, tid in sorted(row_tiles):
        if last is None or slot != last + 1:
            groups.append([])
        groups[-1].append(tid)
        last = slot
    return groups


def render_scene(scene: Scene, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """Render a scene: the BGR image and its sidecar (see docs/synth.md for the schema).

    Painter's order, far to near: table, the rack's shadow, other players' racks, face-down and
    face-up table tiles, the board, each row with its ledge, shadows over the lower row, hands.
    ``idmap`` holds, per pixel, the id of the tile face seen there (-1 for anything else), so a
    tile's visible fraction is read off the finished drawing.
    """
    w, h = scene.size
    cam = scene.camera
    canvas = np.zeros((h, w, 3), np.uint8)
    idmap = np.full((h, w), -1, np.int32)
    rack = scene.rack
    # the light comes from the side opposite the rack's shadow on the table
    light_dir = np.array([*(-0.15 * scene.light.shadow_offset), 1.0])
    light_dir /= np.linalg.norm(light_dir)
    tile_px = float(
        cam.K[0, 0] * TILE_W / np.linalg.norm(cam.C - board_point(rack, 0, rack.row_t[1], 0))
    )
    body = np.asarray(scene.style.body, np.float32) * 0.93
    records: dict[int, dict] = {}

    _draw_table(canvas, scene)
    _shadow(canvas, _rack_shadow(scene), tile_px * 0.3, scene.light.shadow_strength)
    for far in sorted(scene.far_racks, key=lambda f: -float(np.linalg.norm(f.offset - cam.C))):
        _draw_far_rack(canvas, idmap, cam, far, body, light_dir)
    for t in sorted(scene.backs, key=lambda b: b.z0):
        _draw_tile(canvas, idmap, cam, table_tile_cuboid(t), t, -1, body, light_dir)

    def table_order(item: tuple[int, SceneTile]) -> tuple[float, float]:
        # piles bottom first; on one level far to near, so a near tile's side hides a far one
        t = item[1]
        return t.z0, -float(np.hypot(t.x - cam.C[0], t.y - cam.C[1]))

    for tid, t in sorted(enumerate(scene.tiles), key=table_order):
        if not t.on_rack:
            cub = table_tile_cuboid(t)
            contact = _project_ok(cam, cub.corners()[1] + [0.3, -0.2, 0])
            _shadow(canvas, [] if contact is None else [contact], tile_px * 0.08, 0.35)
            rec = _draw_tile(canvas, idmap, cam, cub, t, tid, body, light_dir)
            if rec:
                records[tid] = rec
    records.update(_draw_rack(canvas, idmap, scene, body, light_dir, tile_px))
    for finger in scene.fingers:
        _draw_finger(canvas, idmap, cam, finger, tile_px)
    face_mask = (idmap >= 0).astype(np.float32)
    image = apply_light(canvas, scene, face_mask)
    image = apply_post(image, scene.post, rng)
    return image, _sidecar(scene, records, idmap)


def _rack_shadow(scene: Scene) -> list[np.ndarray]:
    """The rack's shadow on the table: its footprint swept along the light's offset."""
    rack, cam = scene.rack, scene.camera
    dx, dy = scene.light.shadow_offset
    x0, x1 = -rack.length / 2, rack.length / 2
    depth = rack.top_t * np.sin(np.deg2rad(rack.lean)) + 1.2
    foot = np.array(
        [[x0, -rack.lip_d, 0], [x1, -rack.lip_d, 0], [x1, depth, 0], [x0, depth, 0]], float
    )
    polys = [
        uv for uv in (_project_ok(cam, p) for p in (foot, foot + [dx, dy, 0])) if uv is not None
    ]
    if len(polys) == 2:
        polys = [cv2.convexHull(np.vstack(polys).astype(np.float32)).reshape(-1, 2)]
    return polys


def _draw_rack(
    canvas: np.ndarray,
    idmap: np.ndarray,
    scene: Scene,
    body: np.ndarray,
    light_dir: np.ndarray,
    tile_px: float,
) -> dict[int, dict]:
    """The board, the tiles' contact shadows, each row with its ledge, the upper row's shadow."""
    rack, cam = scene.rack, scene.camera
    if rack.row_back:
        return _draw_tier_rack(canvas, idmap, scene, body, light_dir, tile_px)
    records: dict[int, dict] = {}
    boxes = rack_boxes(rack)
    rack_colour = rack.texture.reshape(-1, 3).mean(0)
    _draw_box(canvas, idmap, cam, boxes["board"], rack_colour, rack.texture, light_dir)
    # soft contact shadows of the tiles on the board
    shadow_polys = []
    for t in scene.tiles:
        if t.on_rack:
            back = rack_tile_cuboid(rack, t).corners()[1]
            uv = _project_ok(cam, back + board_point(rack, 0.25, -0.25, 0.0))
            if uv is not None:
                shadow_polys.append(uv)
    _shadow(canvas, shadow_polys, tile_px * 0.06, 0.45)
    for row, lip in ((0, "upper_lip"), (1, "lower_lip")):
        # seen from above, a ledge's top lies partly under its tiles: draw it first; seen from
        # below, its front edge hides the tiles' feet: draw it last
        ledge = boxes[lip]
        top_face = next(c for name, c, _ in ledge.faces() if name == "top")
        from_above = visible(top_face, ledge.b, cam)
        if from_above:
            _draw_box(canvas, idmap, cam, ledge, rack_colour, rack.texture, light_dir)
        in_row = [(tid, t) for tid, t in enumerate(scene.tiles) if t.on_rack and t.row == row]
        cubs = {tid: rack_tile_cuboid(rack, t) for tid, t in in_row}
        # far tiles first, so that a near tile's side hides its neighbour's edge correctly
        in_row.sort(key=lambda it: -float(np.linalg.norm(cubs[it[0]].origin - cam.C)))
        for tid, t in in_row:
            rec = _draw_tile(canvas, idmap, cam, cubs[tid], t, tid, body, light_dir)
            if rec:
                records[tid] = rec
        if not from_above:
            _draw_box(canvas, idmap, cam, ledge, rack_colour, rack.texture, light_dir)
    if scene.light.row_shadow > 0:
        _, tile_h, tile_d = next(t.size for t in scene.tiles if t.on_rack)
        t_top = rack.row_t[1] + tile_h
        x0, x1 = -rack.length / 2, rack.length / 2
        corners = ((x0, t_top), (x1, t_top), (x1, t_top - 1.4), (x0, t_top - 1.4))
        uv = _project_ok(cam, np.array([board_point(rack, x, t, tile_d) for x, t in corners]))
        if uv is not None:
            _shadow(canvas, [uv], tile_px * 0.12, scene.light.row_shadow)
    return records


def _draw_tier_rack(
    canvas: np.ndarray,
    idmap: np.ndarray,
    scene: Scene,
    body: np.ndarray,
    light_dir: np.ndarray,
    tile_px: float,
) -> dict[int, dict]:
    """A staircase rack (``tiers.tier_boxes``), back to front: the board, then per tier (top
    first) the block it stands on, its ledge and its tiles, so a tier in front hides the feet of
    the tier behind it."""
    from vision.training.synth.tiers import tier_boxes

    rack, cam = scene.rack, scene.camera
    records: dict[int, dict] = {}
    rack_colour = rack.texture.reshape(-1, 3).mean(0)
    tile_d = next(t.size[2] for t in scene.tiles if t.on_rack) if scene.tiles else 1.0
    board, tiers = tier_boxes(rack, tile_d)
    _draw_box(canvas, idmap, cam, board, rack_colour, rack.texture, light_dir)
    for row, (block, ledge) in enumerate(tiers):
        _draw_box(canvas, idmap, cam, block, rack_colour, rack.texture, light_dir)
        top_face = next(c for name, c, _ in ledge.faces() if name == "top")
        from_above = visible(top_face, ledge.b, cam)
        if from_above:
            _draw_box(canvas, idmap, cam, ledge, rack_colour, rack.texture, light_dir)
        in_row = [(tid, t) for tid, t in enumerate(scene.tiles) if t.on_rack and t.row == row]
        cubs = {tid: rack_tile_cuboid(rack, t) for tid, t in in_row}
        shadows = []
        for tid, _ in in_row:
            back = cubs[tid].corners()[1]
            uv = _project_ok(cam, back + board_point(rack, 0.25, -0.25, 0.0))
            if uv is not None:
                shadows.append(uv)
        _shadow(canvas, shadows, tile_px * 0.06, 0.45)
        in_row.sort(key=lambda it: -float(np.linalg.norm(cubs[it[0]].origin - cam.C)))
        for tid, t in in_row:
            rec = _draw_tile(canvas, idmap, cam, cubs[tid], t, tid, body, light_dir)
            if rec:
                records[tid] = rec
        if not from_above:
            _draw_box(canvas, idmap, cam, ledge, rack_colour, rack.texture, light_dir)
    return records


def _visible_part(
    idmap: np.ndarray, tid: int, box: list[float] | None
) -> tuple[list[float], np.ndarray] | None:
    """The box and the smallest turned rectangle of the part of tile ``tid``'s face the picture
    shows, without the slivers a tile in front leaves visible (its rounded corners uncover the
    corners of the face behind it): the face's pixels opened by a twelfth of the box's width."""
    if box is None:
        return None
    x0, y0, x1, y1 = (int(v) for v in box)
    mask = (idmap[y0:y1, x0:x1] == tid).astype(np.uint8)
    size = max(3, int(round(min(x1 - x0, y1 - y0) / 12)) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((size, size), np.uint8))
    ys, xs = np.nonzero(mask)
    if len(xs) < 3:
        return None
    points = np.stack([xs + x0, ys + y0], axis=1).astype(np.float32)
    # pixel (i, j) covers [i, i + 1): the rectangle around the pixel centres grows by half a pixel
    (cx, cy), (w, h), angle = cv2.minAreaRect(points + 0.5)
    shown = [float(xs.min() + x0), float(ys.min() + y0), float(xs.max() + x0 + 1)]
    shown.append(float(ys.max() + y0 + 1))
    return shown, cv2.boxPoints(((cx, cy), (w + 1, h + 1), angle))


def _sidecar(scene: Scene, records: dict[int, dict], idmap: np.ndarray) -> dict:
    w, h = scene.size
    tiered = bool(scene.rack.row_back)
    counts = np.bincount(idmap[idmap >= 0].ravel(), minlength=len(scene.tiles))
    tiles = []
    for tid, t in enumerate(scene.tiles):
        rec = records.get(tid)
        visible_frac = 0.0
        box = None
        if rec is not None and rec["box"] is not None:
            visible_frac = float(min(1.0, counts[tid] / max(rec["area"], 1.0)))
            x0, y0, x1, y1 = rec["box"]
            box = [max(0.0, x0), max(0.0, y0), min(float(w), x1), min(float(h), y1)]
        labelled = (
            box is not None
            and visible_frac >= MIN_VISIBLE
            and box[2] - box[0] >= 2
            and box[3] - box[1] >= 2
        )
        number_shown = round(_shown(idmap, tid, (rec or {}).get("mark_quad")), 3)
        extra = {}
        if tiered:
            # a tier in front hides the feet of the tiles behind: their labels box only what the
            # picture shows, and ``readable`` says which tiles a reader can be asked to read
            part = _visible_part(idmap, tid, box)
            if part is not None:
                box = part[0]
            extra = {
                "visible_quad": _quad_list(None if part is None else part[1]),
                "readable": bool(
                    labelled
                    and visible_frac >= READABLE_VISIBLE
                    and number_shown >= READABLE_NUMBER
                ),
            }
        tiles.append(
            {
                "id": tid,
                "tile": str(t.tile),
                "class": t.tile.index,
                "box": [round(v, 2) for v in box] if box else None,
                "upside_down": t.upside_down,
                "on_rack": t.on_rack,
                "role": t.role,
                "row": t.row,
                "slot": t.slot,
                "visible": round(visible_frac, 3),
                "number_visible": number_shown,
                "quad": _quad_list((rec or {}).get("quad")),
                "labelled": bool(labelled),
                **extra,
            }
        )
    rows = []
    groups = []
    for r in range(len(scene.rack.row_t)):
        in_row = [(t.slot, tid) for tid, t in enumerate(scene.tiles) if t.on_rack and t.row == r]
        rows.append([tid for _, tid in sorted(in_row)])
        groups.append(_groups(in_row))
    return {
        "schema": SCHEMA_VERSION,
        "width": w,
        "height": h,
        "style_pool": scene.pool,
        "rules": scene.rules,
        "indicator": str(scene.indicator),
        "okey": str(_okey(scene.indicator)),
        "tiles": tiles,
        "rows": rows,
        "groups": groups,
        "table": [tid for tid, t in enumerate(scene.tiles) if not t.on_rack],
        "camera": _rounded(scene.camera_params),
        "fingers": len(scene.fingers),
    }


def _quad_list(quad: np.ndarray | None) -> list[list[float]] | None:
    """The face's four image corners (pixels, unclipped), or None when it was not projected."""
    return None if quad is None else [[round(float(x), 2), round(float(y), 2)] for x, y in quad]


def _rounded(value: object) -> object:
    """Floats rounded to 4 places, recursively (keeps sidecars short)."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def _okey(indicator: Tile) -> Tile:
    from okey.hand import okey_for

    return okey_for(indicator)
