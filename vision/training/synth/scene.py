"""Scenes: a rack with a hand, the table, the camera and the light, as plain values.

``sample_scene`` draws every random choice of one photo into a ``Scene``;
``vision.training.synth.render.render_scene`` turns it into a BGR image and its sidecar (the
ground truth).
Keeping the two apart lets the video renderer move the camera, the light and a finger over one
fixed scene.  Physical sizes are centimetres: tiles about 2.6 x 3.7 x 0.9 (varied per set), racks
35-62 cm long (14-20 slots a row).

>>> import numpy as np
>>> scene = sample_scene(np.random.default_rng(3))
>>> len([t for t in scene.tiles if t.on_rack]) in (14, 15, 21, 22)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from okey import Tile
from vision.training.synth.face import SetStyle, draw_back, draw_face, sample_set_style
from vision.training.synth.geometry import (
    Camera,
    Cuboid,
    look_at,
)
from vision.training.synth.hand import deal_hand
from vision.training.synth.styles import TABLES, pool
from vision.training.synth.textures import fractal_noise, varied_texture

TILE_W, TILE_H, TILE_D = 2.6, 3.7, 0.9
MIN_VISIBLE = (
    0.4  # a tile with less than 40 % of its face visible (finger, frame edge) is unlabelled
)
# tiered close-ups: a labelled tile counts as readable (what the framing benchmark scores) when
# at least half its face and its number (90 % of the number's ink box) are in the picture
READABLE_VISIBLE = 0.5
READABLE_NUMBER = 0.9
TABLE_PX_PER_CM = 5.0
SCHEMA_VERSION = 1


@dataclass
class FaceSource:
    """A tile face drawn on first use from its own seed, so tiles outside the frame cost nothing
    and the picture does not depend on which tiles happen to be drawn."""

    seed: int
    tile: Tile | None  # None: the plain back of a face-down tile
    style: SetStyle
    upside_down: bool = False
    _image: np.ndarray | None = field(default=None, repr=False)

    def image(self) -> np.ndarray:
        """The face as BGRA (FACE_H x FACE_W x 4)."""
        if self._image is None:
            rng = np.random.default_rng(self.seed)
            if self.tile is None:
                self._image = draw_back(rng, self.style)
            else:
                self._image = draw_face(rng, self.tile, self.style, self.upside_down)
        return self._image


def _face(
    rng: np.random.Generator, tile: Tile | None, style: SetStyle, upside: bool = False
) -> FaceSource:
    return FaceSource(int(rng.integers(2**63 - 1)), tile, style, upside)


@dataclass
class SceneTile:
    tile: Tile
    face: FaceSource
    upside_down: bool
    on_rack: bool
    role: str  # "hand", "indicator", "discard"
    row: int | None = None  # 0 = upper row, 1 = lower row
    slot: int | None = None
    x: float = 0.0  # centre along the rack (rack tiles) or table x
    y: float = 0.0  # table y (table tiles)
    spin: float = 0.0  # rotation in the face plane, degrees
    z0: float = 0.0  # height of the tile's bottom (stacked discards)
    size: tuple[float, float, float] = (TILE_W, TILE_H, TILE_D)  # width, height, thickness (cm)


@dataclass
class Rack:
    length: float
    lean: float  # degrees the board leans back from vertical
    lip_h: float
    lip_d: float
    row_t: tuple[float, float]  # along-board height of the bottom of the upper and lower row
    top_t: float
    texture: np.ndarray
    kind: str
    # tiered racks only: how far (cm) each row stands behind the front row's plane; empty for the
    # flat two-row board, whose rows share one plane
    row_back: tuple[float, ...] = ()


@dataclass
class FarRack:
    """Another player's rack across or beside the table, seen from behind; never labelled."""

    rack: Rack
    tiles: list[SceneTile]  # row and x used; faces point away from the camera
    rotation: np.ndarray  # 3x3, about z: the rack's front faces its own player
    offset: np.ndarray  # world position of the rack's origin


@dataclass
class Finger:
    tip: np.ndarray  # world point the finger tip rests on
    angle: float  # direction from the tip towards the hand, degrees in the image (90 = down)
    width: float  # relative to the tile's width in pixels
    skin: tuple[int, int, int]
    curled: int = 1  # curled fingers drawn beside the pointing one


@dataclass
class Light:
    gains: np.ndarray  # BGR white balance (tungsten .. daylight)
    exposure: float
    gradient: np.ndarray  # (gx, gy, strength): brightness ramp across the frame
    vignette: float
    glare: np.ndarray  # (u, v, radius, strength, elongation, angle, hardness); u, v, r: fractions
    shadow_offset: np.ndarray  # (dx, dy) cm of the rack's shadow on the table
    shadow_strength: float
    row_shadow: float  # darkening of the top of the lower row (the upper row's shadow)
    hand_shadow: np.ndarray | None  # (u, v, rx, ry, angle, strength) or None


@dataclass
class Post:
    noise: float
    blur: float
    motion: float
    motion_angle: float
    jpeg: int
    gamma: float = 1.0
    contrast: float = 0.0  # strength of the S-curve of the camera's tone mapping
    saturation: float = 1.0
    sharpen: float = 0.0  # unsharp-mask amount: phone cameras sharpen, leaving halos at edges


@dataclass
class Scene:
    size: tuple[int, int]
    pool: str
    rules: str
    style: SetStyle
    indicator: Tile
    tiles: list[SceneTile]
    rack: Rack
    table: np.ndarray
    table_origin: tuple[float, float]
    wall: np.ndarray  # small BGR image of the room, stretched over the frame
    camera: Camera
    camera_params: dict
    light: Light
    fingers: list[Finger]
    post: Post
    backs: list[SceneTile] = field(default_factory=list)  # face-down tiles (not labelled)
    far_racks: list[FarRack] = field(default_factory=list)  # the other players' racks


# ---------------------------------------------------------------- board geometry


def board_axes(lean_deg: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit vectors along the rack (x), up the board (t) and out of the board (n)."""
    s, c = np.sin(np.deg2rad(lean_deg)), np.cos(np.deg2rad(lean_deg))
    return np.array([1.0, 0, 0]), np.array([0.0, s, c]), np.array([0.0, -c, s])


def board_point(rack: Rack, x: float, t: float, off: float) -> np.ndarray:
    ex, et, en = board_axes(rack.lean)
    return x * ex + t * et + off * en


def rack_tile_cuboid(rack: Rack, tile: SceneTile) -> Cuboid:
    """The box of a tile standing on its row's ledge, back against the board."""
    ex, et, en = board_axes(rack.lean)
    spin = np.deg2rad(tile.spin)
    w, h, d = tile.size
    a = (np.cos(spin) * ex + np.sin(spin) * et) * w
    b = (-np.sin(spin) * ex + np.cos(spin) * et) * h
    back = -rack.row_back[tile.row] if rack.row_back else 0.0
    base = board_point(rack, tile.x, rack.row_t[tile.row], back) - a / 2
    return Cuboid(origin=base, a=a, b=b, c=en * d)


def table_tile_cuboid(tile: SceneTile) -> Cuboid:
    """A tile lying face up on the table, its top edge pointing away from the player."""
    spin = np.deg2rad(tile.spin)
    w, h, d = tile.size
    a = np.array([np.cos(spin), np.sin(spin), 0.0]) * w
    b = np.array([-np.sin(spin), np.cos(spin), 0.0]) * h
    centre = np.array([tile.x, tile.y, tile.z0])
    return Cuboid(origin=centre - a / 2 - b / 2, a=a, b=b, c=np.array([0.0, 0.0, d]))


def rack_boxes(rack: Rack) -> dict[str, Cuboid]:
    """Board and the two ledges (lips) as boxes."""
    ex, et, en = board_axes(rack.lean)
    x0 = -rack.length / 2
    a = ex * rack.length
    board = Cuboid(origin=board_point(rack, x0, 0.0, -1.2), a=a, b=et * rack.top_t, c=en * 1.2)
    lips = {}
    for name, t in (("upper_lip", rack.row_t[0]), ("lower_lip", rack.row_t[1])):
        lips[name] = Cuboid(
            origin=board_point(rack, x0, t - rack.lip_h, 0.0),
            a=a,
            b=et * rack.lip_h,
            c=en * rack.lip_d,
        )
    return {"board": board, **lips}


# ---------------------------------------------------------------- sampling


def _layout_rows(
    rng: np.random.Generator, groups: list[list[Tile]], slots: int
) -> list[list[tuple[int, Tile]]]:
    """Place groups in two rows of ``slots`` slots, gaps between groups; returns (slot, tile)."""
    total = sum(len(g) for g in groups)
    split_target = total * rng.uniform(0.35, 0.65)
    rows: list[list[list[Tile]]] = [[], []]
    count = 0
    for g in groups:
        row = 0 if count + len(g) / 2 <= split_target else 1
        rows[row].append(g)
        count += len(g)
    placed: list[list[tuple[int, Tile]]] = [[], []]
    for r, row_groups in enumerate(rows):
        gaps = [int(rng.choice([1, 1, 1, 2, 0])) for _ in row_groups]
        need = sum(len(g) for g in row_groups) + sum(gaps[:-1]) if row_groups else 0
        while need > slots and any(gaps):
            k = int(np.argmax(gaps))
            gaps[k] -= 1
            need -= 1
        slot = int(rng.integers(0, max(1, slots - need + 1)))
        for g, gap in zip(row_groups, gaps, strict=True):
            for tile in g:
                placed[r].append((slot, tile))
                slot += 1
            slot += gap
    return placed


def _sample_rack(
    rng: np.random.Generator,
    pool_name: str,
    length: float,
    tile_size: tuple[float, float, float] = (TILE_W, TILE_H, TILE_D),
) -> Rack:
    style = pool(pool_name).racks[int(rng.integers(len(pool(pool_name).racks)))]
    colour = style.colours[int(rng.integers(len(style.colours)))]
    lip_h = rng.uniform(0.5, 1.1)
    _, tile_h, tile_d = tile_size
    lip_d = tile_d * rng.uniform(0.9, 1.4)
    lower = lip_h + rng.uniform(0.0, 0.4)
    upper = lower + tile_h + rng.uniform(0.4, 1.2) + lip_h
    top = upper + tile_h * rng.uniform(0.55, 1.0)
    tex = varied_texture(rng, style.texture, colour, (128, 768))
    return Rack(
        length=length,
        lean=float(rng.uniform(12, 26)),
        lip_h=lip_h,
        lip_d=lip_d,
        row_t=(upper, lower),
        top_t=top,
        texture=tex,
        kind=style.texture,
    )


def _sample_table(rng: np.random.Generator) -> np.ndarray:
    style = TABLES[int(rng.integers(len(TABLES)))]
    colour = style.colours[int(rng.integers(len(style.colours)))]
    return varied_texture(rng, style.texture, colour, (448, 448))


def _sample_camera(
    rng: np.random.Generator, rack: Rack, size: tuple[int, int], xs: list[float]
) -> dict:
    """Camera parameters: tilt from the tile faces' normal 0-60 degrees, tiles 20-120 px wide."""
    w, _ = size
    hfov = float(rng.uniform(50, 72))
    f = (w / 2) / np.tan(np.deg2rad(hfov) / 2)
    lo, hi = min(xs) - TILE_W, max(xs) + TILE_W
    t_mid = (rack.row_t[1] + rack.row_t[0] + TILE_H) / 2
    scale = w / 640.0
    if rng.random() < 0.55:  # the whole hand in view
        span = (hi - lo) + rng.uniform(2, 20)
        tile_px = f * TILE_W / (f * span / (w * rng.uniform(0.6, 0.95)))
        tile_px = max(tile_px, 20 * scale)
        x_target = (lo + hi) / 2 + rng.normal(0, 2)
    else:  # closer: part of the rack
        tile_px = float(np.exp(rng.uniform(np.log(28), np.log(120)))) * scale
        x_target = (
            float(rng.uniform(lo + TILE_W, hi - TILE_W)) if hi - lo > 3 * TILE_W else (lo + hi) / 2
        )
    distance = f * TILE_W / tile_px
    tilt, phi = _sample_view(rng, rack.lean)
    return {
        "hfov": hfov,
        "distance": float(distance),
        "tilt": tilt,
        "phi": phi,
        "target": [float(x_target), float(t_mid + rng.normal(0, 0.6))],
        "roll": float(rng.normal(0, 4) if rng.random() < 0.85 else rng.normal(0, 12)),
        "offset": [float(rng.normal(0, w * 0.05)), float(rng.normal(0, w * 0.04))],
    }


def _view_direction(lean: float, tilt: float, phi: float) -> np.ndarray:
    """Unit vector from the tiles towards the camera: ``tilt`` away from the face normal, towards
    ``phi`` (0 = along the rack to the right, 90 = up the board)."""
    ex, et, en = board_axes(lean)
    t, p = np.deg2rad(tilt), np.deg2rad(phi)
    return np.cos(t) * en + np.sin(t) * (np.cos(p) * ex + np.sin(p) * et)


def _sample_view(rng: np.random.Generator, lean: float) -> tuple[float, float]:
    """Tilt and direction of the view: 0-60 degrees from the faces, from the player's side (the
    yaw along the rack stays within 25 degrees mostly, 45 at most) and above the table."""
    max_yaw = 25.0 if rng.random() < 0.7 else 45.0
    for _ in range(50):
        tilt = float(rng.uniform(0, 60))
        # mostly from above (phones are held over the rack), sometimes from any side
        phi = float(rng.uniform(30, 150) if rng.random() < 0.75 else rng.uniform(-180, 180))
        d = _view_direction(lean, tilt, phi)
        yaw = np.degrees(np.arctan2(d[0], -d[1]))
        if abs(yaw) <= max_yaw and d[2] >= np.sin(np.deg2rad(3)):
            return tilt, phi
    return float(rng.uniform(0, 20)), 90.0


def make_camera(params: dict, rack: Rack, size: tuple[int, int]) -> Camera:
    """The camera of ``params`` (see ``_sample_camera``) around the rack, or over the table
    (``_sample_table_camera``: ``params`` has a ``table_target``)."""
    if "table_target" in params:
        tilt, azimuth = np.deg2rad(params["tilt"]), np.deg2rad(params["azimuth"])
        direction = np.array(
            [np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth), np.cos(tilt)]
        )
        target = np.array([*params["table_target"], TILE_D])
        eye = target + direction * params["distance"]
        return look_at(eye, target, params["hfov"], size, params["roll"], tuple(params["offset"]))
    direction = _view_direction(rack.lean, params["tilt"], params["phi"])
    if direction[2] < np.sin(np.deg2rad(4)):  # keep the camera above the table
        direction[2] = np.sin(np.deg2rad(4))
        direction /= np.linalg.norm(direction)
    tx, tt = params["target"]
    target = board_point(rack, tx, tt, TILE_D)
    eye = target + direction * params["distance"]
    return look_at(eye, target, params["hfov"], size, params["roll"], tuple(params["offset"]))


def _sample_light(rng: np.random.Generator) -> Light:
    kelvin = rng.uniform(0, 1)  # 0 tungsten .. 1 daylight / cool LED
    gains = np.array([0.72 + 0.4 * kelvin, 0.92 + 0.06 * kelvin, 1.12 - 0.2 * kelvin])
    gains *= rng.uniform(0.97, 1.03, 3)
    hand_shadow = None
    if rng.random() < 0.3:
        hand_shadow = np.array(
            [
                rng.uniform(0, 1),
                rng.uniform(0.3, 1.2),
                rng.uniform(0.15, 0.4),
                rng.uniform(0.1, 0.3),
                rng.uniform(0, 180),
                rng.uniform(0.2, 0.5),
            ]
        )
    return Light(
        gains=gains,
        exposure=float(rng.uniform(0.7, 1.2)),
        gradient=np.array([rng.normal(), rng.normal(), rng.uniform(0, 0.45)]),
        vignette=float(rng.uniform(0, 0.5)),
        glare=np.array(
            [
                rng.uniform(0, 1),
                rng.uniform(0, 1),
                rng.uniform(0.05, 0.5),
                rng.uniform(0, 0.8),
                rng.uniform(1, 4),  # elongation: lamps and windows reflect as streaks
                rng.uniform(0, np.pi),
                rng.uniform(0.4, 0.8) if rng.random() < 0.35 else 0.0,  # hard-edged highlight
            ]
        ),
        shadow_offset=np.array([rng.uniform(-4, 4), rng.uniform(-8, 5)]),
        shadow_strength=float(rng.uniform(0.2, 0.6)),
        row_shadow=float(rng.uniform(0, 0.4) if rng.random() < 0.4 else 0.0),
        hand_shadow=hand_shadow,
    )


def _sample_post(rng: np.random.Generator) -> Post:
    return Post(
        noise=float(rng.uniform(1, 9)),
        blur=float(rng.uniform(0, 1.3) if rng.random() < 0.6 else 0.0),
        motion=float(rng.uniform(2, 7) if rng.random() < 0.15 else 0.0),
        motion_angle=float(rng.uniform(0, 180)),
        jpeg=int(rng.integers(45, 96)),
        gamma=float(rng.uniform(0.8, 1.2)),
        contrast=float(rng.uniform(0.0, 0.35)),
        saturation=float(rng.uniform(0.75, 1.3)),
        sharpen=float(rng.uniform(0.3, 1.2) if rng.random() < 0.5 else 0.0),
    )


def _widest_tile(camera: Camera, rack: Rack, tiles: list[SceneTile]) -> float:
    """The largest projected face width (pixels) among rack tiles in front of the camera."""
    widest = 0.0
    for t in tiles:
        front, _ = rack_tile_cuboid(rack, t).corners()
        uv, z = camera.project(front)
        if np.all(z > 1):
            widest = max(widest, float(np.linalg.norm(uv[1] - uv[0])))
    return widest


def _sample_far_racks(
    rng: np.random.Generator, pool_name: str, style: SetStyle, length: float
) -> list[FarRack]:
    """The other players' racks: across the table and at the sides, fronts turned away."""
    out = []
    seats = (
        (180.0, (rng.uniform(-15, 15), rng.uniform(60, 95))),
        (-90.0, (-length / 2 - rng.uniform(15, 35), rng.uniform(20, 50))),
        (90.0, (length / 2 + rng.uniform(15, 35), rng.uniform(20, 50))),
    )
    back = _face(rng, None, style)
    for angle, (x, y) in seats:
        if rng.random() > 0.3:
            continue
        far_length = float(rng.uniform(46, 60))
        rack = _sample_rack(rng, pool_name, far_length)
        tiles = []
        for row in (0, 1):
            for k in range(int(far_length // (TILE_W * 1.02))):
                if rng.random() < 0.55:
                    tiles.append(
                        SceneTile(
                            tile=Tile(0),
                            face=back,
                            upside_down=False,
                            on_rack=True,
                            role="far",
                            row=row,
                            x=float(-far_length / 2 + (k + 0.6) * TILE_W * 1.02),
                        )
                    )
        a = np.deg2rad(angle + rng.normal(0, 6))
        rotation = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1.0]])
        out.append(FarRack(rack, tiles, rotation, np.array([x, y, 0.0])))
    return out


def moved(cub: Cuboid, rotation: np.ndarray, offset: np.ndarray) -> Cuboid:
    return Cuboid(
        origin=rotation @ cub.origin + offset,
        a=rotation @ cub.a,
        b=rotation @ cub.b,
        c=rotation @ cub.c,
    )


def _sample_backs(
    rng: np.random.Generator, style: SetStyle, length: float, tile_size: tuple[float, float, float]
) -> list[SceneTile]:
    """Face-down tiles on the table: the centre stacks (up to 5 high) or a few strays."""
    if rng.random() < 0.55:
        return []
    back = _face(rng, None, style)
    out = []
    n_stacks = int(rng.integers(1, 8))
    x = float(rng.uniform(-0.6, 0.2) * length)
    y = float(rng.uniform(-40, -14))
    spin = float(rng.normal(0, 8))
    for _ in range(n_stacks):
        height = int(rng.integers(1, 6))
        for k in range(height):
            out.append(
                SceneTile(
                    tile=Tile(0),  # identity unseen
                    face=back,
                    upside_down=False,
                    on_rack=False,
                    role="back",
                    x=x + float(rng.normal(0, 0.08)),
                    y=y + float(rng.normal(0, 0.08)),
                    spin=spin + float(rng.normal(0, 1.5)),
                    z0=k * tile_size[2],
                    size=tile_size,
                )
            )
        x += tile_size[0] * rng.uniform(1.02, 1.3)
    return out


# close-ups of tiered racks (``vision.training.synth.tiers``): ``tiers`` draws the number of
# tiers, the view, the roll (up to 90 degrees) and portrait frames at random (training);
# ``tiers_paste`` is ``tiers`` with real tile faces cut from the training photos; the other four
# fix tiers and view, upright landscape frames (the framing benchmark's close-up bins; "_far": a
# tile 4-10 % of the frame width, benchmarks/tiers.py)
TIER_KINDS = (
    "tiers",
    "tiers_paste",
    "tiers2_frontal",
    "tiers2_oblique",
    "tiers3_frontal",
    "tiers3_oblique",
    "tiers2_frontal_far",
    "tiers2_oblique_far",
    "tiers3_frontal_far",
    "tiers3_oblique_far",
)
SCENE_KINDS = ("rack", "table", *TIER_KINDS)


def _sample_table_groups(
    rng: np.random.Generator,
    remaining: list[Tile],
    style: SetStyle,
    tile_size: tuple[float, float, float],
    length: float,
) -> list[SceneTile]:
    """Groups lying face up on the table: rows of tiles side by side, columns of tiles end to end
    (touching or nearly), and strays, each group at its own angle (any, or near a right angle).
    Tiles come from the deal's remaining tiles, so no tile appears more often than a set has it."""
    w, h, _ = tile_size
    order = [int(i) for i in rng.permutation(len(remaining))]
    out: list[SceneTile] = []
    placed: list[tuple[float, float, float]] = []  # centre x, y and radius of each group
    for _ in range(int(rng.integers(2, 9))):
        n = min(len(order), int(rng.choice([1, 2, 3, 3, 4, 4, 5, 6])))
        if n == 0:
            break
        along_row = rng.random() < 0.5  # side by side (a meld as laid out) or end to end
        if rng.random() < 0.5:
            angle = float(rng.uniform(-180, 180))
        else:
            angle = float(90 * rng.integers(4) + rng.normal(0, 6))
        gap = float(rng.uniform(0, 0.3) if rng.random() < 0.7 else rng.uniform(0.3, 1.5))
        step = (w if along_row else h) + gap
        radius = n * step / 2 + max(w, h) / 2
        for _attempt in range(20):
            cx = float(rng.uniform(-0.45, 0.45) * length)
            cy = float(rng.uniform(-42, -8))
            if all(np.hypot(cx - x, cy - y) > radius + r + 0.5 for x, y, r in placed):
                break
        else:
            continue
        placed.append((cx, cy, radius))
        a = np.deg2rad(angle)
        axis = np.array([np.cos(a), np.sin(a)]) if along_row else np.array([-np.sin(a), np.cos(a)])
        for j in range(n):
            tile = remaining[order.pop()]
            pos = np.array([cx, cy]) + (j - (n - 1) / 2) * step * axis + rng.normal(0, 0.08, 2)
            out.append(
                SceneTile(
                    size=tile_size,
                    tile=tile,
                    face=_face(rng, tile, style),
                    upside_down=False,
                    on_rack=False,
                    role="table",
                    x=float(pos[0]),
                    y=float(pos[1]),
                    spin=angle + float(rng.normal(0, 2.5)),
                )
            )
    return out


def _sample_table_camera(
    rng: np.random.Generator, size: tuple[int, int], melds: list[SceneTile]
) -> dict:
    """A camera over the table groups: 3-50 degrees from straight down, from any side, tiles
    22-100 px wide (at 640 px)."""
    w, _ = size
    hfov = float(rng.uniform(50, 72))
    f = (w / 2) / np.tan(np.deg2rad(hfov) / 2)
    if melds:
        pick = melds[int(rng.integers(len(melds)))]
        xs = np.array([t.x for t in melds])
        ys = np.array([t.y for t in melds])
        centre = (
            np.array([xs.mean(), ys.mean()]) if rng.random() < 0.6 else np.array([pick.x, pick.y])
        )
    else:
        centre = np.array([0.0, -20.0])
    tile_px = float(np.exp(rng.uniform(np.log(22), np.log(100)))) * w / 640
    return {
        "hfov": hfov,
        "distance": float(f * TILE_W / tile_px),
        "tilt": float(rng.uniform(3, 50) if rng.random() < 0.6 else rng.uniform(3, 20)),
        "azimuth": float(rng.uniform(-180, 180)),
        "table_target": [float(centre[0] + rng.normal(0, 3)), float(centre[1] + rng.normal(0, 3))],
        "roll": float(rng.normal(0, 20)),
        "offset": [float(rng.normal(0, w * 0.05)), float(rng.normal(0, w * 0.04))],
    }


SKINS = ((120, 150, 210), (100, 135, 190), (140, 170, 225), (70, 100, 150), (50, 75, 120))


def sample_scene(
    rng: np.random.Generator,
    pool_name: str = "train",
    size: tuple[int, int] = (640, 480),
    rules: str | None = None,
    kind: str = "rack",
) -> Scene:
    """Draw every random choice of one photo.

    ``kind`` ``"rack"``: the camera looks at the player's rack.  ``"table"``: it looks down at
    groups laid face up on the table in front of the rack (opened melds, a declared hand): rows
    and columns of touching tiles and strays at any angle, which a rack never shows.
    """
    pool(pool_name)  # validates the name
    if kind not in SCENE_KINDS:
        raise ValueError(f"unknown scene kind {kind!r}; use one of: {', '.join(SCENE_KINDS)}")
    if kind in TIER_KINDS:
        from vision.training.synth.tiers import sample_tier_scene

        return sample_tier_scene(rng, pool_name, size, rules, kind)
    rules = rules or ("okey101" if rng.random() < 0.25 else "classic")
    hand_size = int(rng.choice([21, 22])) if rules == "okey101" else int(rng.choice([14, 15]))
    deal = deal_hand(rng, hand_size)
    style = sample_set_style(rng, pool_name)
    upside_rate = 0.0 if rng.random() < 0.6 else rng.uniform(0.03, 0.15)
    # sets differ a little in size and proportions
    tile_w = float(rng.uniform(2.4, 2.8))
    tile_size = (tile_w, tile_w * float(rng.uniform(1.35, 1.5)), float(rng.uniform(0.8, 1.1)))

    slots_needed = max(hand_size // 2 + 4, 14)
    slots = int(rng.integers(slots_needed, slots_needed + 6))
    pitch = tile_w * rng.uniform(1.005, 1.04)
    length = slots * pitch + rng.uniform(1.5, 4.0)
    rack = _sample_rack(rng, pool_name, length, tile_size)
    rows = _layout_rows(rng, deal.groups, slots)
    tiles: list[SceneTile] = []
    for r, row in enumerate(rows):
        for slot, tile in row:
            upside = bool(rng.random() < upside_rate)
            tiles.append(
                SceneTile(
                    size=tile_size,
                    tile=tile,
                    face=_face(rng, tile, style, upside),
                    upside_down=upside,
                    on_rack=True,
                    role="hand",
                    row=r,
                    slot=slot,
                    x=float(
                        -length / 2
                        + (length - slots * pitch) / 2
                        + (slot + 0.5) * pitch
                        + rng.normal(0, 0.06)
                    ),
                    spin=float(rng.normal(0, 1.2 if rng.random() < 0.9 else 4.0)),
                )
            )
    # the indicator and the discard piles lie on the table in front of the rack
    if rng.random() < 0.6:
        side = rng.choice([-1, 1])
        x = float(side * rng.uniform(0.1, 0.55) * length)
        tiles.append(
            SceneTile(
                size=tile_size,
                tile=deal.indicator,
                face=_face(rng, deal.indicator, style),
                upside_down=False,
                on_rack=False,
                role="indicator",
                x=x,
                y=float(rng.uniform(-12, -5)),
                spin=float(rng.normal(0, 12)),
            )
        )
    if rng.random() < 0.5:
        pile = [
            deal.remaining[int(i)]
            for i in rng.choice(len(deal.remaining), int(rng.integers(1, 4)), replace=False)
        ]
        px, py = float(rng.uniform(-0.5, 0.5) * length), float(rng.uniform(-16, -6))
        for k, tile in enumerate(pile):
            tiles.append(
                SceneTile(
                    size=tile_size,
                    tile=tile,
                    face=_face(rng, tile, style),
                    upside_down=False,
                    on_rack=False,
                    role="discard",
                    x=px + rng.normal(0, 0.5),
                    y=py + rng.normal(0, 0.6),
                    spin=float(rng.normal(0, 10)),
                    z0=k * tile_size[2],
                )
            )

    backs = _sample_backs(rng, style, length, tile_size)
    far_racks = _sample_far_racks(rng, pool_name, style, length)
    if kind == "table":
        melds = _sample_table_groups(rng, deal.remaining, style, tile_size, length)
        tiles.extend(melds)
        cam_params = _sample_table_camera(rng, size, melds)
        camera = make_camera(cam_params, rack, size)
    else:
        xs = [t.x for t in tiles if t.on_rack]
        cam_params = _sample_camera(rng, rack, size, xs)
        camera = make_camera(cam_params, rack, size)
        # perspective makes the nearest tiles wider than aimed for: keep every tile <= 120 px
        widest = _widest_tile(camera, rack, [t for t in tiles if t.on_rack])
        if widest > 120 * size[0] / 640:
            cam_params["distance"] *= widest / (120 * size[0] / 640)
            camera = make_camera(cam_params, rack, size)
    fingers: list[Finger] = []
    n_fingers = int(rng.choice([0, 0, 0, 1, 1, 2]))
    rack_tiles = [t for t in tiles if t.on_rack]
    for _ in range(n_fingers):
        t = rack_tiles[int(rng.integers(len(rack_tiles)))]
        cub = rack_tile_cuboid(rack, t)
        front, _ = cub.corners()
        u, v = rng.uniform(0.1, 0.9), rng.uniform(-0.1, 0.9)
        tip = front[0] + u * (front[1] - front[0]) + v * (front[3] - front[0])
        fingers.append(
            Finger(
                tip=tip,
                angle=float(
                    rng.uniform(55, 125)
                    if rng.random() < 0.8
                    else rng.uniform(-40, 40) + 180 * rng.integers(2)
                ),
                width=float(rng.uniform(0.6, 0.9)),
                skin=SKINS[int(rng.integers(len(SKINS)))],
                curled=int(rng.integers(0, 4)),
            )
        )
    table = _sample_table(rng)
    # the room beyond the table: blurred blotches of a dull colour (walls, furniture, windows)
    wall_colour = rng.uniform(30, 200) * rng.uniform(0.8, 1.1, 3)
    blotches = fractal_noise(rng, (24, 32), 2, 3)
    wall = np.clip(wall_colour[None, None, :] * (0.6 + 0.8 * blotches[..., None]), 0, 255)
    wall = wall.astype(np.uint8)
    return Scene(
        size=size,
        pool=pool_name,
        rules=rules,
        style=style,
        indicator=deal.indicator,
        tiles=tiles,
        rack=rack,
        table=table,
        table_origin=(float(rng.uniform(-200, 0)), float(rng.uniform(-200, 0))),
        wall=wall,
        camera=camera,
        camera_params=cam_params,
        light=_sample_light(rng),
        fingers=fingers,
        post=_sample_post(rng),
        backs=backs,
        far_racks=far_racks,
    )


def with_camera(scene: Scene, params: dict) -> Scene:
    """The same scene seen from another camera."""
    return replace(scene, camera=make_camera(params, scene.rack, scene.size), camera_params=params)
