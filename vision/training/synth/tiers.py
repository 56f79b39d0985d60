"""Close-ups of tiered racks: two or three tiers of standing tiles, neighbours touching, each tier
set back and raised behind the one in front of it, so the front tiles hide the feet of the tiles
behind them.  The camera is close (a tile 8-30 % of the frame width) and frontal or oblique.

The rack is a staircase in the board's frame (``scene.board_axes``): tier ``k`` (0 = top) stands on
block ``k`` at ``row_t[k]`` up the board and ``row_back[k]`` behind the front tier's plane; each
tier rises less than a tile's height above the one in front, which hides the lower part of its
tiles from a camera in front of the rack.  The renderer's ``idmap`` says how much of each face
the picture shows (sidecar ``visible``, ``number_visible``, ``readable``).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> scene = sample_tier_scene(rng, "heldout", (640, 480), None, "tiers3_frontal")
>>> len(scene.rack.row_t), len(scene.rack.row_back), scene.size
(3, 3, (640, 480))
"""

from __future__ import annotations

import numpy as np

from okey import Tile
from vision.training.synth.face import sample_set_style
from vision.training.synth.geometry import Cuboid
from vision.training.synth.hand import full_pool
from vision.training.synth.scene import (
    TILE_D,
    TILE_H,
    TILE_W,
    FaceSource,
    Rack,
    Scene,
    SceneTile,
    _face,
    _sample_light,
    _sample_post,
    _sample_table,
    _view_direction,
    board_axes,
    board_point,
    make_camera,
)
from vision.training.synth.styles import pool
from vision.training.synth.textures import fractal_noise, varied_texture

TIER_SHARE = (0.10, 0.20)  # benchmark kinds: a tile 10-20 % of the frame width (the photos)
FAR_SHARE = (0.04, 0.10)  # benchmark kinds ending ``_far``: a phone 40-80 cm from the stand
TRAIN_SHARE = (0.08, 0.30)  # training kinds: log-uniform in this range


def tier_spec(rng: np.random.Generator, kind: str) -> tuple[int, str, bool, tuple[float, float]]:
    """(tiers, view, training, tile share of the frame width) of a tier kind; ``tiers`` and
    ``tiers_paste`` draw tiers and view."""
    if kind in ("tiers", "tiers_paste"):
        tiers = 2 if rng.random() < 0.55 else 3
        view = "frontal" if rng.random() < 0.45 else "oblique"
        return tiers, view, True, TRAIN_SHARE
    head, view, *far = kind.split("_")
    return int(head[-1]), view, False, FAR_SHARE if far else TIER_SHARE


def sample_tier_rack(
    rng: np.random.Generator,
    pool_name: str,
    length: float,
    tiers: int,
    tile_size: tuple[float, float, float] = (TILE_W, TILE_H, TILE_D),
) -> Rack:
    """A staircase rack of ``tiers`` tiers: each rises 50-85 % of a tile's height above the tier
    in front and stands a tile's depth plus its ledge behind it."""
    style = pool(pool_name).racks[int(rng.integers(len(pool(pool_name).racks)))]
    colour = style.colours[int(rng.integers(len(style.colours)))]
    _, tile_h, tile_d = tile_size
    lip_h = float(rng.uniform(0.3, 0.8))
    lip_d = float(rng.uniform(0.3, 0.7))
    step = tile_d + lip_d + float(rng.uniform(0.1, 0.5))
    rise = tile_h * float(rng.uniform(0.5, 0.85))
    base = float(rng.uniform(0.3, 1.0))
    row_t = tuple(base + (tiers - 1 - k) * rise for k in range(tiers))
    row_back = tuple((tiers - 1 - k) * step for k in range(tiers))
    return Rack(
        length=length,
        lean=float(rng.uniform(0, 12)),
        lip_h=lip_h,
        lip_d=lip_d,
        row_t=row_t,
        top_t=row_t[0] + tile_h * float(rng.uniform(0.3, 0.7)),
        texture=varied_texture(rng, style.texture, colour, (128, 768)),
        kind=style.texture,
        row_back=row_back,
    )


def tier_boxes(rack: Rack, tile_d: float) -> tuple[Cuboid, list[tuple[Cuboid, Cuboid]]]:
    """The back board and, per tier (top first), the block it stands on and its ledge."""
    ex, et, en = board_axes(rack.lean)
    x0 = -rack.length / 2
    a = ex * rack.length
    back0 = rack.row_back[0]
    board = Cuboid(board_point(rack, x0, 0.0, -back0 - 1.2), a, et * rack.top_t, en * 1.2)
    tiers = []
    for k, (t, back) in enumerate(zip(rack.row_t, rack.row_back, strict=True)):
        front = rack.row_back[k + 1] if k + 1 < len(rack.row_t) else -(tile_d + rack.lip_d + 0.3)
        block = Cuboid(board_point(rack, x0, 0.0, -back), a, et * t, en * (back - front))
        lip = Cuboid(
            board_point(rack, x0, t, -back + tile_d + 0.05), a, et * rack.lip_h, en * rack.lip_d
        )
        tiers.append((block, lip))
    return board, tiers


def _tier_tiles(
    rng: np.random.Generator,
    tiers: int,
    slots: int,
    pitch: float,
    length: float,
    tile_size: tuple[float, float, float],
    faces: list[tuple[Tile, FaceSource]],
) -> list[SceneTile]:
    """Tiles standing in every tier, in runs of touching neighbours (a slot empty now and then)."""
    out: list[SceneTile] = []
    start = -length / 2 + (length - slots * pitch) / 2
    for row in range(tiers):
        for slot in range(slots):
            if rng.random() < 0.1 or not faces:
                continue
            tile, face = faces.pop()
            out.append(
                SceneTile(
                    size=tile_size,
                    tile=tile,
                    face=face,
                    upside_down=face.upside_down,
                    on_rack=True,
                    role="hand",
                    row=row,
                    slot=slot,
                    x=float(start + (slot + 0.5) * pitch + rng.normal(0, 0.03)),
                    spin=float(rng.normal(0, 0.8)),
                )
            )
    return out


def _tier_camera(
    rng: np.random.Generator,
    rack: Rack,
    tiles: list[SceneTile],
    size: tuple[int, int],
    view: str,
    training: bool,
    shares: tuple[float, float],
) -> dict:
    """A close camera: a tile ``shares`` of the frame width (log-uniform), frontal (0-12
    degrees off the faces) or oblique (25-50 degrees, from above or the side)."""
    w, _ = size
    hfov = float(rng.uniform(55, 72))
    f = (w / 2) / np.tan(np.deg2rad(hfov) / 2)
    lo, hi = shares
    share = float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    tile_w = tiles[0].size[0] if tiles else TILE_W
    tile_h = tiles[0].size[1] if tiles else TILE_H
    pick = tiles[int(rng.integers(len(tiles)))] if tiles else None
    x_target = pick.x if pick is not None else 0.0
    t_mid = (rack.row_t[-1] + rack.row_t[0] + tile_h) / 2
    for _ in range(50):
        if view == "frontal":
            tilt, phi = float(rng.uniform(0, 12)), float(rng.uniform(30, 150))
        else:
            tilt = float(rng.uniform(25, 50))
            phi = float(rng.uniform(20, 160) if rng.random() < 0.7 else rng.uniform(-25, 25))
            phi = phi if rng.random() < 0.5 or phi > 30 else 180 - phi
        d = _view_direction(rack.lean, tilt, phi)
        if d[2] >= np.sin(np.deg2rad(3)):
            break
    if training and rng.random() < 0.5:
        roll = float(rng.uniform(-90, 90))
    else:
        roll = float(rng.normal(0, 4))
    return {
        "hfov": hfov,
        "distance": float(f * tile_w / (share * w)),
        "tilt": tilt,
        "phi": phi,
        "target": [float(x_target + rng.normal(0, tile_w)), float(t_mid + rng.normal(0, 0.5))],
        "roll": roll,
        "offset": [float(rng.normal(0, w * 0.04)), float(rng.normal(0, w * 0.03))],
        "tile_share": share,
    }


def sample_tier_scene(
    rng: np.random.Generator,
    pool_name: str,
    size: tuple[int, int],
    rules: str | None,
    kind: str,
) -> Scene:
    """Draw a close-up of a tiered rack (``kind``: see ``scene.TIER_KINDS``).  Training kinds
    frame 40 % of their photos in portrait (the size's sides swapped)."""
    tiers, view, training, share = tier_spec(rng, kind)
    if training and rng.random() < 0.4:
        size = (size[1], size[0])
    style = sample_set_style(rng, pool_name)
    tile_w = float(rng.uniform(2.4, 2.8))
    tile_size = (tile_w, tile_w * float(rng.uniform(1.35, 1.5)), float(rng.uniform(0.8, 1.1)))
    slots = int(rng.integers(12, 18))
    pitch = tile_w * float(rng.uniform(1.0, 1.012))  # neighbours touching
    length = slots * pitch + float(rng.uniform(1.0, 3.0))
    rack = sample_tier_rack(rng, pool_name, length, tiers, tile_size)
    n = tiers * slots
    if kind == "tiers_paste":
        from vision.training.synth.real import real_faces

        faces = real_faces(rng, n, style)
    else:
        every = full_pool()
        chosen = rng.choice(len(every), size=min(n, len(every)), replace=False)
        upside_rate = 0.0 if rng.random() < 0.7 else 0.08
        faces = []
        for i in chosen:
            tile = every[int(i)]
            faces.append((tile, _face(rng, tile, style, bool(rng.random() < upside_rate))))
    tiles = _tier_tiles(rng, tiers, slots, pitch, length, tile_size, faces)
    params = _tier_camera(rng, rack, tiles, size, view, training, share)
    camera = make_camera(params, rack, size)
    wall_colour = rng.uniform(30, 200) * rng.uniform(0.8, 1.1, 3)
    blotches = fractal_noise(rng, (24, 32), 2, 3)
    wall = np.clip(wall_colour[None, None, :] * (0.6 + 0.8 * blotches[..., None]), 0, 255)
    return Scene(
        size=size,
        pool=pool_name,
        rules=rules or "classic",
        style=style,
        indicator=next((t.tile for t in tiles if not t.tile.is_false_joker), Tile(0)),
        tiles=tiles,
        rack=rack,
        table=_sample_table(rng),
        table_origin=(float(rng.uniform(-200, 0)), float(rng.uniform(-200, 0))),
        wall=wall.astype(np.uint8),
        camera=camera,
        camera_params=params,
        light=_sample_light(rng),
        fingers=[],
        post=_sample_post(rng),
    )
