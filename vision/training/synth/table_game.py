"""Rendered table games: a camera on a stand above the table films a game of Okey turn by turn,
with the true ``seen`` tiles at every frame (issue 35; ``benchmarks/table.py``, the table tests).

The table: the face-down stacks in the middle with the indicator face up on one of them, and a
discard pile at each of the four sides (``near``, ``right``, ``far``, ``left`` as the picture
shows them).  Each turn one seat plays: now and then it first takes the top tile of the pile on
its left (the previous seat's), then it puts a new tile face up on its own pile, and now and
then it lays a meld of three tiles side by side in front of it.  A hand comes in over the pile
while the seat plays (the tiles change under it), and in some turns another hand passes over the
table without changing anything.  The light drifts (exposure and white balance), the camera
shakes a little.

Per frame the truth is a dict: ``frame``, ``turn``, ``settled`` (the turn's last frame),
``seen`` (every tile that has lain face up, the indicator's included, as sorted notation),
``indicator``, ``taken`` (each take so far: ``turn``, ``tile``, ``pile``), ``hands`` (hands in
the picture), ``passing`` (a hand passing over the table, changing nothing) and the
renderer's own ``tiles`` (sidecar entries: boxes, roles).

>>> frames, truth = render_table_game(seed=1, turns=2, frames_per_turn=2, size=(320, 240))
>>> len(frames), frames[0].shape, truth[-1]["turn"], truth[-1]["settled"]
(4, (240, 320, 3), 1, True)
>>> len(truth[-1]["seen"]) >= 3
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from okey import Tile
from vision.training.synth.render import render_scene
from vision.training.synth.scene import (
    SKINS,
    TILE_W,
    Finger,
    Scene,
    SceneTile,
    _face,
    board_point,
    make_camera,
    sample_scene,
)

_GAME_STREAM = 2**31 - 3  # the seed sequence's second entry, apart from images and rack videos
SIDES = ("near", "right", "far", "left")


@dataclass
class _Table:
    """The table's tiles as the game leaves them."""

    piles: list[list[SceneTile]] = field(default_factory=lambda: [[], [], [], []])
    melds: list[SceneTile] = field(default_factory=list)
    indicator: SceneTile | None = None
    backs: list[SceneTile] = field(default_factory=list)
    seen: list[Tile] = field(default_factory=list)
    taken: list[dict] = field(default_factory=list)

    def tiles(self) -> list[SceneTile]:
        out = [t for pile in self.piles for t in pile] + list(self.melds)
        return out + ([self.indicator] if self.indicator is not None else [])


@dataclass(frozen=True)
class _Geometry:
    """Where things lie: image offsets from the table's centre turned into table centimetres."""

    centre: np.ndarray  # world (x, y) the camera looks at
    to_world: np.ndarray  # 2x2: image pixel offset -> world cm offset
    image_right_deg: float  # world angle of the picture's x axis
    tile_px: float  # a tile's width in pixels

    def at(self, du: float, dv: float) -> np.ndarray:
        return self.centre + self.to_world @ np.array([du, dv])


def _geometry(scene: Scene, tile_w: float) -> _Geometry:
    cam = scene.camera
    c = np.array(scene.camera_params["table_target"], float)
    pts = np.array([[c[0], c[1], 0.0], [c[0] + 1, c[1], 0.0], [c[0], c[1] + 1, 0.0]])
    uv, _ = cam.project(pts)
    jac = np.column_stack([uv[1] - uv[0], uv[2] - uv[0]])  # d(u, v) / d(x, y), pixels per cm
    to_world = np.linalg.inv(jac)
    right = to_world @ np.array([1.0, 0.0])
    return _Geometry(
        centre=c,
        to_world=to_world,
        image_right_deg=float(np.degrees(np.arctan2(right[1], right[0]))),
        tile_px=float(np.linalg.norm(jac @ np.array([tile_w, 0.0]))),
    )


def _table_scene(rng: np.random.Generator, pool_name: str, size: tuple[int, int]) -> Scene:
    """The table, light, set and camera output of a table scene, the camera on a stand over the
    middle of the table (5-25 degrees from straight down, a tile 40-56 px wide at 640 px)."""
    base = sample_scene(rng, pool_name, size, kind="table")
    w, _ = size
    hfov = float(rng.uniform(55, 70))
    f = (w / 2) / np.tan(np.deg2rad(hfov) / 2)
    tile_px = float(rng.uniform(40, 56)) * w / 640
    params = {
        "hfov": hfov,
        "distance": float(f * TILE_W / tile_px),
        "tilt": float(rng.uniform(5, 25)),
        "azimuth": float(rng.uniform(-180, 180)),
        "table_target": [float(rng.normal(0, 2)), float(rng.uniform(-30, -24))],
        "roll": float(rng.normal(0, 8)),
        "offset": [0.0, 0.0],
    }
    camera = make_camera(params, base.rack, size)
    # the player's own rack stays (behind the near side, mostly out of the picture)
    return replace(
        base,
        tiles=[t for t in base.tiles if t.on_rack],
        backs=[],
        far_racks=[],
        fingers=[],
        camera=camera,
        camera_params=params,
    )


def _full_set(rng: np.random.Generator) -> list[Tile]:
    tiles = [Tile(i) for i in range(53) for _ in range(2)]
    return [tiles[int(i)] for i in rng.permutation(len(tiles))]


def _laid(
    rng: np.random.Generator,
    scene: Scene,
    tile: Tile,
    at: np.ndarray,
    spin: float,
    size: tuple[float, float, float],
    z0: float = 0.0,
    role: str = "table",
) -> SceneTile:
    return SceneTile(
        tile=tile,
        face=_face(rng, tile, scene.style),
        upside_down=False,
        on_rack=False,
        role=role,
        x=float(at[0]),
        y=float(at[1]),
        spin=float(spin),
        z0=z0,
        size=size,
    )


def render_table_game(
    seed: int,
    turns: int = 12,
    frames_per_turn: int = 10,
    size: tuple[int, int] = (640, 480),
    pool_name: str = "train",
) -> tuple[list[np.ndarray], list[dict]]:
    """Frames (BGR) of a game filmed from above and each frame's truth (module docstring)."""
    if turns < 1 or frames_per_turn < 1:
        raise ValueError(
            f"turns and frames_per_turn must be at least 1, got {turns}, {frames_per_turn}"
        )
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), _GAME_STREAM]))
    scene = _table_scene(rng, pool_name, size)
    tile_w = float(rng.uniform(2.4, 2.8))
    tile_size = (tile_w, tile_w * float(rng.uniform(1.35, 1.5)), float(rng.uniform(0.8, 1.1)))
    geo = _geometry(scene, tile_w)
    w, h = size
    deck = _full_set(rng)
    table = _Table()
    # the middle: face-down stacks, the indicator face up on the first
    back_face = _face(rng, None, scene.style)
    spin0 = geo.image_right_deg + float(rng.normal(0, 10))
    for s in range(3):
        at = geo.at((s - 1) * geo.tile_px * 1.15, 0.0)
        for k in range(int(rng.integers(2, 5))):
            table.backs.append(
                SceneTile(
                    Tile(0),
                    back_face,
                    False,
                    False,
                    "back",
                    x=float(at[0]),
                    y=float(at[1]),
                    spin=spin0,
                    z0=k * tile_size[2],
                    size=tile_size,
                )
            )
    first = [b for b in table.backs if abs(b.x - table.backs[0].x) < 1e-6]
    indicator = next(t for t in deck if not t.is_false_joker)
    deck.remove(indicator)
    table.indicator = _laid(
        rng,
        scene,
        indicator,
        np.array([first[0].x, first[0].y]),
        spin0 + float(rng.normal(0, 4)),
        tile_size,
        z0=len(first) * tile_size[2],
        role="indicator",
    )
    table.seen.append(indicator)
    # the four piles' places (image offsets), each seat's tiles turned towards it
    reach_u, reach_v = 0.36 * w, 0.33 * h
    pile_at = [
        (float(rng.normal(0, 0.03 * w)), reach_v),
        (reach_u, float(rng.normal(0, 0.03 * h))),
        (float(rng.normal(0, 0.03 * w)), -reach_v),
        (-reach_u, float(rng.normal(0, 0.03 * h))),
    ]
    meld_spots = [
        (-0.22 * w, 0.17 * h),
        (0.22 * w, 0.17 * h),
        (0.22 * w, -0.17 * h),
        (-0.22 * w, -0.17 * h),
    ]
    rng.shuffle(meld_spots)
    turn_plans = _plan_turns(rng, turns, frames_per_turn)
    base_exposure = scene.light.exposure
    base_gains = np.asarray(scene.light.gains, float)
    drift_period = float(rng.uniform(40, 90))
    rack_tiles = list(scene.tiles)
    frames, truths = [], []
    k = 0
    for turn, plan in enumerate(turn_plans):
        seat = turn % 4
        for j in range(frames_per_turn):
            if j == plan["act"]:
                _act(rng, scene, geo, table, deck, seat, turn, plan, pile_at, meld_spots, tile_size)
            fingers = _hands(scene, geo, table, seat, j, plan, pile_at)
            frame_rng = np.random.default_rng(np.random.SeedSequence([int(seed), _GAME_STREAM, k]))
            wave = np.sin(2 * np.pi * k / drift_period)
            light = replace(
                scene.light,
                exposure=base_exposure * (1 + 0.18 * wave + frame_rng.normal(0, 0.01)),
                gains=base_gains * (1 + 0.05 * np.array([wave, 0.0, -wave])),
            )
            params = dict(scene.camera_params)
            params["tilt"] = params["tilt"] + float(frame_rng.normal(0, 0.05))
            params["roll"] = params["roll"] + float(frame_rng.normal(0, 0.05))
            frame_scene = replace(
                scene,
                tiles=rack_tiles + table.tiles(),
                backs=table.backs,
                fingers=fingers,
                light=light,
                camera=make_camera(params, scene.rack, size),
            )
            image, sidecar = render_scene(frame_scene, frame_rng)
            frames.append(image)
            truths.append(
                {
                    "frame": k,
                    "turn": turn,
                    "settled": j == frames_per_turn - 1,
                    "seen": sorted(str(t) for t in table.seen),
                    "indicator": str(indicator),
                    "taken": list(table.taken),
                    "hands": len(fingers),
                    "passing": plan["passing"] is not None
                    and plan["passing"][0] <= j <= plan["passing"][1],
                    "tiles": sidecar["tiles"],
                }
            )
            k += 1
    return frames, truths


def _plan_turns(rng: np.random.Generator, turns: int, per_turn: int) -> list[dict]:
    """Per turn: the frame the play happens on, whether the seat takes the previous pile's top
    and lays a meld, and a passing hand's frames (or none)."""
    plans = []
    for _ in range(turns):
        act = min(per_turn - 1, int(rng.integers(1, 3)))
        passing = None
        if per_turn >= 6 and rng.random() < 0.35:
            start = int(rng.integers(0, per_turn - 2))
            passing = (start, start + int(rng.integers(1, 3)), float(rng.uniform(0, 360)))
        plans.append(
            {
                "act": act,
                "take": bool(rng.random() < 0.3),
                "meld": bool(rng.random() < 0.12),
                "hand_until": min(per_turn - 1, act + 1 + int(rng.integers(0, 2))),
                "passing": passing,
                "skin": SKINS[int(rng.integers(len(SKINS)))],
                "passer_skin": SKINS[int(rng.integers(len(SKINS)))],
            }
        )
    return plans


def _act(
    rng: np.random.Generator,
    scene: Scene,
    geo: _Geometry,
    table: _Table,
    deck: list[Tile],
    seat: int,
    turn: int,
    plan: dict,
    pile_at: list[tuple[float, float]],
    meld_spots: list[tuple[float, float]],
    tile_size: tuple[float, float, float],
) -> None:
    """One seat's play: a take from the left pile, a discard on its own pile, maybe a meld."""
    left = (seat - 1) % 4
    if plan["take"] and table.piles[left]:
        top = table.piles[left].pop()
        table.taken.append({"turn": turn, "tile": str(top.tile), "pile": _side(scene, top)})
    if not deck:
        return
    tile = deck.pop()
    pile = table.piles[seat]
    du, dv = pile_at[seat]
    jitter = rng.normal(0, 0.06 * geo.tile_px, 2)
    spin = geo.image_right_deg + 90.0 * seat + float(rng.normal(0, 12))
    pile.append(
        _laid(
            rng,
            scene,
            tile,
            geo.at(du + jitter[0], dv + jitter[1]),
            spin,
            tile_size,
            z0=len(pile) * tile_size[2],
            role="discard",
        )
    )
    table.seen.append(tile)
    if plan["meld"] and meld_spots and len(deck) >= 3:
        mu, mv = meld_spots.pop()
        spin = geo.image_right_deg + float(rng.normal(0, 8))
        axis = np.array([np.cos(np.radians(spin)), np.sin(np.radians(spin))])  # the tiles' width
        for m in range(3):
            tile = deck.pop()
            at = geo.at(mu, mv) + (m - 1) * (tile_size[0] + float(rng.uniform(0, 0.15))) * axis
            table.melds.append(_laid(rng, scene, tile, at, spin, tile_size))
            table.seen.append(tile)


def _side(scene: Scene, tile: SceneTile) -> str:
    """The side of the picture a tile lies towards (as ``vision.table_tracker`` names it)."""
    uv, _ = scene.camera.project(np.array([[tile.x, tile.y, 0.0]]))
    u, v = (float(c) for c in uv[0])
    w, h = scene.size
    dx, dy = (u - w / 2) / w, (v - h / 2) / h
    if abs(dy) >= abs(dx):
        return "near" if dy > 0 else "far"
    return "right" if dx > 0 else "left"


def _hands(
    scene: Scene,
    geo: _Geometry,
    table: _Table,
    seat: int,
    j: int,
    plan: dict,
    pile_at: list[tuple[float, float]],
) -> list[Finger]:
    """The playing seat's hand over its pile while it plays, and a passing hand."""
    cam = scene.camera
    rack_px = float(
        cam.K[0, 0]
        * TILE_W
        / np.linalg.norm(cam.C - board_point(scene.rack, 0, scene.rack.row_t[1], 0))
    )
    width = 0.8 * geo.tile_px / max(rack_px, 1e-6)
    out = []
    du, dv = pile_at[seat]
    outward = float(np.degrees(np.arctan2(dv, du)))  # the hand reaches in from the seat's side
    if j <= plan["hand_until"]:
        # the finger rests beside the pile first, on it while playing, then leaves
        reach = 0.5 if j < plan["act"] else 0.15 if j == plan["act"] else 0.35
        tip = geo.at(du * (1 - reach * 0.6), dv * (1 - reach * 0.6))
        out.append(
            Finger(
                tip=np.array([tip[0], tip[1], 1.0]),
                angle=outward,
                width=width,
                skin=plan["skin"],
                curled=2,
            )
        )
    passing = plan["passing"]
    if passing is not None and passing[0] <= j <= passing[1]:
        a = np.radians(passing[2])
        phase = (j - passing[0] + 0.5) / (passing[1] - passing[0] + 1)
        du2, dv2 = (phase - 0.5) * 0.6 * scene.size[0] * np.array([np.cos(a), np.sin(a)])
        tip = geo.at(du2, dv2)
        out.append(
            Finger(
                tip=np.array([tip[0], tip[1], 3.0]),
                angle=float(passing[2]) + 90,
                width=width * 1.1,
                skin=plan["passer_skin"],
                curled=3,
            )
        )
    return out
