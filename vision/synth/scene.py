"""Scenes: a rack with a hand, the table, the camera and the light; rendering and ground truth.

``sample_scene`` draws every random choice of one photo into a ``Scene`` value; ``render_scene``
turns it into a BGR image and its sidecar (the ground truth).  Keeping the two apart lets the video
renderer move the camera, the light and a finger over one fixed scene.

Physical sizes are centimetres: tiles 2.6 x 3.7 x 0.9, racks 46-62 cm long.

>>> import numpy as np
>>> scene = sample_scene(np.random.default_rng(3))
>>> image, truth = render_scene(scene, np.random.default_rng(4))
>>> image.shape, truth["width"], truth["height"]
((480, 640, 3), 640, 480)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from okey import Tile
from vision.synth.face import FACE_H, FACE_W, SetStyle, draw_back, draw_face, sample_set_style
from vision.synth.geometry import (
    Camera,
    Cuboid,
    fill_quad,
    look_at,
    paste_texture,
    quad_area,
    visible,
)
from vision.synth.hand import deal_hand
from vision.synth.hands import draw_hand
from vision.synth.styles import TABLES, pool
from vision.synth.textures import fractal_noise, varied_texture

TILE_W, TILE_H, TILE_D = 2.6, 3.7, 0.9
MIN_VISIBLE = (
    0.4  # a tile with less than 40 % of its face visible (finger, frame edge) is unlabelled
)
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
class PlacedTile:
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


@dataclass
class FarRack:
    """Another player's rack across or beside the table, seen from behind; never labelled."""

    rack: Rack
    tiles: list[PlacedTile]  # row and x used; faces point away from the camera
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
    tiles: list[PlacedTile]
    rack: Rack
    table: np.ndarray
    table_origin: tuple[float, float]
    wall: np.ndarray  # small BGR image of the room, stretched over the frame
    camera: Camera
    camera_params: dict
    light: Light
    fingers: list[Finger]
    post: Post
    backs: list[PlacedTile] = field(default_factory=list)  # face-down tiles (not labelled)
    far_racks: list[FarRack] = field(default_factory=list)  # the other players' racks
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------- board geometry


def _board_axes(lean_deg: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit vectors along the rack (x), up the board (t) and out of the board (n)."""
    s, c = np.sin(np.deg2rad(lean_deg)), np.cos(np.deg2rad(lean_deg))
    return np.array([1.0, 0, 0]), np.array([0.0, s, c]), np.array([0.0, -c, s])


def _board_point(rack: Rack, x: float, t: float, off: float) -> np.ndarray:
    ex, et, en = _board_axes(rack.lean)
    return x * ex + t * et + off * en


def rack_tile_cuboid(rack: Rack, tile: PlacedTile) -> Cuboid:
    """The box of a tile standing on its row's ledge, back against the board."""
    ex, et, en = _board_axes(rack.lean)
    spin = np.deg2rad(tile.spin)
    a = (np.cos(spin) * ex + np.sin(spin) * et) * TILE_W
    b = (-np.sin(spin) * ex + np.cos(spin) * et) * TILE_H
    base = _board_point(rack, tile.x, rack.row_t[tile.row], 0.0) - a / 2
    return Cuboid(origin=base, a=a, b=b, c=en * TILE_D)


def table_tile_cuboid(tile: PlacedTile) -> Cuboid:
    """A tile lying face up on the table, its top edge pointing away from the player."""
    spin = np.deg2rad(tile.spin)
    a = np.array([np.cos(spin), np.sin(spin), 0.0]) * TILE_W
    b = np.array([-np.sin(spin), np.cos(spin), 0.0]) * TILE_H
    centre = np.array([tile.x, tile.y, tile.z0])
    return Cuboid(origin=centre - a / 2 - b / 2, a=a, b=b, c=np.array([0.0, 0.0, TILE_D]))


def rack_boxes(rack: Rack) -> dict[str, Cuboid]:
    """Board and the two ledges (lips) as boxes."""
    ex, et, en = _board_axes(rack.lean)
    x0 = -rack.length / 2
    a = ex * rack.length
    board = Cuboid(origin=_board_point(rack, x0, 0.0, -1.2), a=a, b=et * rack.top_t, c=en * 1.2)
    lips = {}
    for name, t in (("upper_lip", rack.row_t[0]), ("lower_lip", rack.row_t[1])):
        lips[name] = Cuboid(
            origin=_board_point(rack, x0, t - rack.lip_h, 0.0),
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


def _sample_rack(rng: np.random.Generator, pool_name: str, length: float) -> Rack:
    style = pool(pool_name).racks[int(rng.integers(len(pool(pool_name).racks)))]
    colour = style.colours[int(rng.integers(len(style.colours)))]
    lip_h = rng.uniform(0.5, 1.1)
    lip_d = TILE_D * rng.uniform(0.9, 1.4)
    lower = lip_h + rng.uniform(0.0, 0.4)
    upper = lower + TILE_H + rng.uniform(0.4, 1.2) + lip_h
    top = upper + TILE_H * rng.uniform(0.55, 1.0)
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
    ex, et, en = _board_axes(lean)
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
    """The camera of ``params`` (see ``_sample_camera``) around the rack."""
    direction = _view_direction(rack.lean, params["tilt"], params["phi"])
    if direction[2] < np.sin(np.deg2rad(4)):  # keep the camera above the table
        direction[2] = np.sin(np.deg2rad(4))
        direction /= np.linalg.norm(direction)
    tx, tt = params["target"]
    target = _board_point(rack, tx, tt, TILE_D)
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


def _widest_tile(camera: Camera, rack: Rack, tiles: list[PlacedTile]) -> float:
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
                        PlacedTile(
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


def _moved(cub: Cuboid, rotation: np.ndarray, offset: np.ndarray) -> Cuboid:
    return Cuboid(
        origin=rotation @ cub.origin + offset,
        a=rotation @ cub.a,
        b=rotation @ cub.b,
        c=rotation @ cub.c,
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
        (_moved(b, far.rotation, far.offset), colour, rack.texture)
        for b in rack_boxes(rack).values()
    ]
    items += [
        (_moved(rack_tile_cuboid(rack, t), far.rotation, far.offset), body, None) for t in far.tiles
    ]

    def centre_distance(item: tuple[Cuboid, np.ndarray, np.ndarray | None]) -> float:
        c = item[0]
        return -float(np.linalg.norm(c.origin + (c.a + c.b + c.c) / 2 - cam.C))

    for cub, col, tex in sorted(items, key=centre_distance):
        _draw_box(canvas, idmap, cam, cub, col, tex, light_dir)


def _sample_backs(rng: np.random.Generator, style: SetStyle, length: float) -> list[PlacedTile]:
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
                PlacedTile(
                    tile=Tile(0),  # identity unseen
                    face=back,
                    upside_down=False,
                    on_rack=False,
                    role="back",
                    x=x + float(rng.normal(0, 0.08)),
                    y=y + float(rng.normal(0, 0.08)),
                    spin=spin + float(rng.normal(0, 1.5)),
                    z0=k * TILE_D,
                )
            )
        x += TILE_W * rng.uniform(1.02, 1.3)
    return out


SKINS = ((120, 150, 210), (100, 135, 190), (140, 170, 225), (70, 100, 150), (50, 75, 120))


def sample_scene(
    rng: np.random.Generator,
    pool_name: str = "train",
    size: tuple[int, int] = (640, 480),
    rules: str | None = None,
) -> Scene:
    """Draw every random choice of one photo."""
    pool(pool_name)  # validates the name
    rules = rules or ("okey101" if rng.random() < 0.25 else "classic")
    hand_size = int(rng.choice([21, 22])) if rules == "okey101" else int(rng.choice([14, 15]))
    deal = deal_hand(rng, hand_size)
    style = sample_set_style(rng, pool_name)
    upside_rate = 0.0 if rng.random() < 0.6 else rng.uniform(0.03, 0.15)

    slots_needed = max(hand_size // 2 + 4, 12)
    slots = int(rng.integers(slots_needed, slots_needed + 6))
    pitch = TILE_W * rng.uniform(1.005, 1.04)
    length = slots * pitch + rng.uniform(1.5, 4.0)
    rack = _sample_rack(rng, pool_name, length)
    rows = _layout_rows(rng, deal.groups, slots)
    tiles: list[PlacedTile] = []
    for r, row in enumerate(rows):
        for slot, tile in row:
            upside = bool(rng.random() < upside_rate)
            tiles.append(
                PlacedTile(
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
            PlacedTile(
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
                PlacedTile(
                    tile=tile,
                    face=_face(rng, tile, style),
                    upside_down=False,
                    on_rack=False,
                    role="discard",
                    x=px + rng.normal(0, 0.5),
                    y=py + rng.normal(0, 0.6),
                    spin=float(rng.normal(0, 10)),
                    z0=k * TILE_D,
                )
            )

    backs = _sample_backs(rng, style, length)
    far_racks = _sample_far_racks(rng, pool_name, style, length)
    xs = [t.x for t in tiles if t.on_rack]
    cam_params = _sample_camera(rng, rack, size, xs)
    camera = make_camera(cam_params, rack, size)
    # perspective makes the nearest tiles wider than aimed for: keep every tile <= 120 px (at 640)
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


# ---------------------------------------------------------------- rendering


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


def _draw_tile(
    canvas: np.ndarray,
    idmap: np.ndarray,
    cam: Camera,
    cub: Cuboid,
    tile: PlacedTile,
    tid: int,
    body: np.ndarray,
    light_dir: np.ndarray,
) -> dict | None:
    """Draw a tile's sides then its face; return the face's box and area, or None if not drawn."""
    front, _ = cub.corners()
    if not visible(front, cub.c, cam):
        return None
    for name, corners, normal in cub.faces():
        if name in ("front", "back") or not visible(corners, normal, cam):
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
    return {"box": box, "area": area, "quad": quad}


def _draw_finger(
    canvas: np.ndarray, idmap: np.ndarray, cam: Camera, finger: Finger, tile_px: float
) -> None:
    uv, z = cam.project(finger.tip[None, :])
    if z[0] < 1:
        return
    radius = max(2.5, finger.width * tile_px * 0.5)
    cover = draw_hand(canvas, uv[0], finger.angle, radius, finger.skin, finger.curled)
    idmap[cover > 0.5] = -1


def _apply_light(img: np.ndarray, scene: Scene, face_mask: np.ndarray) -> np.ndarray:
    """White balance, exposure, a brightness ramp, vignetting, a hand's shadow, glare on faces.

    The smooth maps are computed on a coarse grid and resized: they have no fine detail.
    """
    w, h = scene.size
    light = scene.light
    gw, gh = max(8, w // 8), max(8, h // 8)
    us = np.linspace(-1, 1, gw, dtype=np.float32)[None, :]
    vs = np.linspace(-1, 1, gh, dtype=np.float32)[:, None]
    gx, gy, gs = light.gradient
    norm = np.hypot(gx, gy) + 1e-6
    gain = (1 + gs * (us * gx + vs * gy) / norm / 2) * (1 - light.vignette * (us**2 + vs**2) / 2)
    gain = gain * light.exposure
    if light.hand_shadow is not None:
        cu, cv_, rx, ry, ang, strength = light.hand_shadow
        m = np.zeros((gh, gw), np.float32)
        axes = (max(1, int(rx * gw)), max(1, int(ry * gh)))
        cv2.ellipse(m, (int(cu * gw), int(cv_ * gh)), axes, ang, 0, 360, 1.0, -1)
        m = cv2.GaussianBlur(m, (0, 0), gw * 0.04 + 0.5)
        gain = gain * (1 - strength * m)
    gain = cv2.resize(gain.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    f = img.astype(np.float32) * (gain[..., None] * light.gains.astype(np.float32)[None, None, :])
    gu, gv, gr, gstr, elong, angle, hard = light.glare
    strength = gstr * scene.style.gloss
    if strength > 0.02:
        # an elongated highlight (a lamp or window mirrored by the glossy faces), soft or hard
        gx_, gy_ = np.meshgrid(
            np.linspace(0, w / h, max(8, w // 4), dtype=np.float32),
            np.linspace(0, 1, max(8, h // 4), dtype=np.float32),
        )
        dx, dy = gx_ - gu * w / h, gy_ - gv
        along = dx * np.cos(angle) + dy * np.sin(angle)
        across = -dx * np.sin(angle) + dy * np.cos(angle)
        d2 = (along / elong) ** 2 + across**2
        glare = np.exp(-d2 / (gr**2 * 0.25))
        if hard > 0:
            glare = np.clip((glare - hard) / (1 - hard) * 3, 0, 1)
        glare = (strength * glare).astype(np.float32)
        glare = cv2.resize(glare, (w, h), interpolation=cv2.INTER_LINEAR) * face_mask
        f += (255 - f) * glare[..., None]
    return np.clip(f, 0, 255).astype(np.uint8)


def _tone(img: np.ndarray, post: Post) -> np.ndarray:
    """The camera's tone mapping: gamma, an S-curve and saturation."""
    x = np.linspace(0, 1, 256, dtype=np.float32)
    y = x**post.gamma
    y = y + post.contrast * (y - 0.5) * (1 - np.abs(2 * y - 1))  # S-curve, fixed ends
    lut = np.clip(y * 255, 0, 255).astype(np.uint8)
    img = cv2.LUT(img, lut)
    if abs(post.saturation - 1) > 0.02:
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)[..., None]
        img = np.clip(grey + post.saturation * (img.astype(np.float32) - grey), 0, 255)
        img = img.astype(np.uint8)
    return img


def _apply_post(img: np.ndarray, post: Post, rng: np.random.Generator) -> np.ndarray:
    """Lens blur, motion blur, sensor noise (fine luma, coarser chroma), JPEG round trip."""
    if post.blur > 0.2:
        img = cv2.GaussianBlur(img, (0, 0), post.blur)
    if post.motion > 1:
        k = int(post.motion) | 1
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), post.motion_angle, 1.0)
        kernel = cv2.warpAffine(kernel, rot, (k, k))
        kernel /= max(kernel.sum(), 1e-6)
        img = cv2.filter2D(img, -1, kernel)
    if post.sharpen > 0:
        soft = cv2.GaussianBlur(img, (0, 0), 1.2)
        img = cv2.addWeighted(img, 1 + post.sharpen, soft, -post.sharpen, 0)
    img = _tone(img, post)
    h, w = img.shape[:2]
    luma = rng.standard_normal((h, w), dtype=np.float32) * post.noise
    chroma = rng.standard_normal((h // 2, w // 2, 3), dtype=np.float32) * (post.noise * 0.5)
    chroma = cv2.resize(chroma, (w, h), interpolation=cv2.INTER_LINEAR)
    noisy = img.astype(np.float32) + luma[..., None] + chroma
    img = np.clip(noisy, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, post.jpeg])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


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
    """Render a scene: the BGR image and its sidecar (see docs/synth.md for the schema)."""
    w, h = scene.size
    cam = scene.camera
    canvas = np.zeros((h, w, 3), np.uint8)
    idmap = np.full((h, w), -1, np.int32)
    _draw_table(canvas, scene)
    rack = scene.rack
    # the light comes from the side opposite the rack's shadow on the table
    light_dir = np.array([*(-0.15 * scene.light.shadow_offset), 1.0])
    light_dir /= np.linalg.norm(light_dir)
    tile_px = float(
        cam.K[0, 0] * TILE_W / np.linalg.norm(cam.C - _board_point(rack, 0, rack.row_t[1], 0))
    )

    # rack's shadow on the table
    dx, dy = scene.light.shadow_offset
    x0, x1 = -rack.length / 2, rack.length / 2
    depth = rack.top_t * np.sin(np.deg2rad(rack.lean)) + 1.2
    foot = np.array(
        [[x0, -rack.lip_d, 0], [x1, -rack.lip_d, 0], [x1, depth, 0], [x0, depth, 0]], float
    )
    moved = foot + [dx, dy, 0]
    polys = []
    for poly in (foot, moved):
        uv = _project_ok(cam, poly)
        if uv is not None:
            polys.append(uv)
    if len(polys) == 2:
        polys = [cv2.convexHull(np.vstack(polys).astype(np.float32)).reshape(-1, 2)]
    _shadow(canvas, polys, tile_px * 0.3, scene.light.shadow_strength)

    body = np.asarray(scene.style.body, np.float32) * 0.93
    records: dict[int, dict] = {}
    for far in sorted(scene.far_racks, key=lambda f: -float(np.linalg.norm(f.offset - cam.C))):
        _draw_far_rack(canvas, idmap, cam, far, body, light_dir)
    # face-down tiles, then table tiles (under everything on the rack side), piles bottom first
    for t in sorted(scene.backs, key=lambda b: b.z0):
        _draw_tile(canvas, idmap, cam, table_tile_cuboid(t), t, -1, body, light_dir)
    for tid, t in sorted(enumerate(scene.tiles), key=lambda it: (it[1].on_rack, it[1].z0)):
        if t.on_rack:
            continue
        _shadow(
            canvas,
            [
                q
                for q in [_project_ok(cam, table_tile_cuboid(t).corners()[1] + [0.3, -0.2, 0])]
                if q is not None
            ],
            tile_px * 0.08,
            0.35,
        )
        rec = _draw_tile(canvas, idmap, cam, table_tile_cuboid(t), t, tid, body, light_dir)
        if rec:
            records[tid] = rec
    boxes = rack_boxes(rack)
    rack_colour = rack.texture.reshape(-1, 3).mean(0)
    _draw_box(canvas, idmap, cam, boxes["board"], rack_colour, rack.texture, light_dir)
    # soft contact shadows of the tiles on the board
    shadow_polys = []
    for t in scene.tiles:
        if t.on_rack:
            back = rack_tile_cuboid(rack, t).corners()[1]
            uv = _project_ok(cam, back + _board_point(rack, 0.25, -0.25, 0.0))
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
        ex, et, en = _board_axes(rack.lean)
        t_top = rack.row_t[1] + TILE_H
        band = np.array(
            [
                _board_point(rack, x, t, TILE_D)
                for x, t in ((x0, t_top), (x1, t_top), (x1, t_top - 1.4), (x0, t_top - 1.4))
            ]
        )
        uv = _project_ok(cam, band)
        if uv is not None:
            _shadow(canvas, [uv], tile_px * 0.12, scene.light.row_shadow)
    for finger in scene.fingers:
        _draw_finger(canvas, idmap, cam, finger, tile_px)
    face_mask = (idmap >= 0).astype(np.float32)
    image = _apply_light(canvas, scene, face_mask)
    image = _apply_post(image, scene.post, rng)
    return image, _sidecar(scene, records, idmap)


def _sidecar(scene: Scene, records: dict[int, dict], idmap: np.ndarray) -> dict:
    w, h = scene.size
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
                "labelled": bool(labelled),
            }
        )
    rows = []
    groups = []
    for r in (0, 1):
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


def with_camera(scene: Scene, params: dict) -> Scene:
    """The same scene seen from another camera."""
    return replace(scene, camera=make_camera(params, scene.rack, scene.size), camera_params=params)


__all__ = [
    "Scene",
    "sample_scene",
    "render_scene",
    "with_camera",
    "make_camera",
]
