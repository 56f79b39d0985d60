"""The table camera (issue 35): the tiles lying face up on a table read as the game's seen tiles.

- ``POST /scan?scene=table``: one table photo in, ``vision.table.TableScan.to_dict()`` out
  (``TableScanOut``: every face-up tile with its box, the melds, the indicator).
- ``WS /tables/{table}/camera``: a table camera's frames in, the game's seen tiles out, kept by a
  ``vision.table_tracker.TableTracker`` per connection.  The connection writes the table, so
  nothing is read before the table's token (or the server owner's) was sent:
  ``{"type": "settings", "token": "...", "indicator": "R5", "rules": "classic"}``.  Then binary
  messages are frames (JPEG or PNG; only the newest is read, at most ``max_stream_fps`` a
  second), and ``{"type": "correct", "change": 7, "tile": "R5"}`` corrects a change
  (``"tile": null``: there was no tile).  Every frame read is answered
  ``{"type": "table_state", ...}`` (``TableTracker.to_dict`` plus the frame's tiles) and, when it
  changed the record, published into the table's state as its ``"table_camera"`` part, which
  the rack's camera stream of the same table adds to its ``seen`` tiles (``table_seen``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from okey import Tile
from service.auth import is_owner
from service.deps import get_runner, get_settings, get_tables
from service.errors import ApiError
from service.images import decode_image
from service.routers.engine import rules_of, tile_of
from service.routers.overlay import CLOSE_IDLE, CLOSE_POLICY, TABLE_PATTERN
from service.rules_model import RulesSpec
from service.runner import PipelineRunner
from service.settings import Settings
from service.store import TableStore, Write
from service.stream import FrameSlot, TextRation, next_message, paced

router = APIRouter(tags=["table camera"])
_GONE = (WebSocketDisconnect, ConnectionError)


class TableTileOut(BaseModel):
    id: int
    tile: str
    box: tuple[float, float, float, float]
    confidence: float
    role: Literal["indicator", "meld", "table"]
    quad: list[tuple[float, float]] | None = None
    meld: int | None = None


class TableScanOut(BaseModel):
    """A table photo read as a table (``vision.table.TableScan.to_dict()``)."""

    model_config = ConfigDict(extra="allow")

    scene: Literal["table"]
    rules: str
    seen: list[TableTileOut] = Field(description="every tile lying face up, with its box")
    seen_tiles: list[str] = Field(description="the seen tiles in notation, sorted")
    melds: list[list[str]] = Field(description="rows of touching tiles (three or more)")
    indicator: str | None
    indicator_source: Literal["typed", "pile"] | None
    warnings: list[str]
    image_size: tuple[int, int]
    timings_ms: dict[str, float]


def scan_table(
    image: Any, indicator: Tile | None, rules: Any, profile: Any, pipeline: Any
) -> dict[str, Any]:
    """One table photo on the inference thread (422 ``no_tiles`` when nothing lies face up)."""
    from vision.errors import NothingFoundError
    from vision.profiles import with_profile
    from vision.table import TableReader

    reader = TableReader(with_profile(pipeline.recognizer, profile))
    try:
        return reader.read(image, indicator=indicator, rules=rules).to_dict()
    except NothingFoundError as exc:
        raise ApiError(422, "no_tiles", str(exc)) from exc


class CameraSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["settings"]
    token: str | None = Field(default=None, max_length=100)
    indicator: str | None = Field(default=None, max_length=20)
    rules: RulesSpec = "classic"


class CameraCorrection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["correct"]
    change: int = Field(ge=0, description="the change's id in the states")
    tile: str | None = Field(default=None, max_length=20)


class _Camera:
    """One table camera connection."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.token: str | None = None
        self.owner = False
        self.indicator: Tile | None = None
        self.rules = rules_of("classic")
        self.tracker: Any = None  # vision.table_tracker.TableTracker, made on the first frame
        self.frames = 0
        self.published = -1  # the number of changes last published


def read_table_frame(camera: _Camera, frame: bytes, max_pixels: int, pipeline: Any) -> dict:
    """One frame through the table reader and the connection's tracker (inference thread)."""
    from vision.table import TableReader
    from vision.table_tracker import TableTracker

    image = decode_image(frame, max_pixels=max_pixels)
    h, w = image.shape[:2]
    if camera.tracker is None:
        camera.tracker = TableTracker(image_size=(w, h), indicator=camera.indicator)
    scan = TableReader(pipeline.recognizer).read(
        image, indicator=camera.indicator, rules=camera.rules, require_tiles=False
    )
    camera.tracker.update(camera.frames, scan.tiles)
    camera.frames += 1
    return state_of(camera, [t.to_dict() for t in scan.tiles])


def state_of(camera: _Camera, tiles: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    tracker = camera.tracker
    record = tracker.to_dict()
    record["seen_for_advice"] = [str(t) for t in tracker.seen_for_advice()]
    return {**record, "tiles": tiles or []}


async def _publish(camera: _Camera, tables: TableStore, state: dict[str, Any]) -> None:
    """The table's state with its ``table_camera`` part replaced (the rack's part kept; a
    private table's rack part is not readable without its viewer key and starts afresh)."""
    try:
        current = (await tables.snapshot(camera.table)).get("state") or {}
    except ApiError:
        current = {}
    part = {k: state[k] for k in ("seen", "seen_for_advice", "indicator", "taken", "changes")}
    await tables.publish(
        camera.table,
        {**current, "table_camera": part},
        camera.token,
        Write(as_server_owner=camera.owner),
    )


async def _settings(
    camera: _Camera, data: dict[str, Any], tables: TableStore, server: Settings
) -> None:
    message = CameraSettings.model_validate(data)
    if not is_owner(server, message.token):
        if not message.token:
            raise ApiError(401, "token_required", f"send the token of table {camera.table!r}")
        await tables.authorize(camera.table, message.token)
    elif not await tables.exists(camera.table):
        raise ApiError(404, "no_such_table", f"there is no table {camera.table!r}")
    camera.token, camera.owner = message.token, is_owner(server, message.token)
    camera.indicator = tile_of(message.indicator, "indicator") if message.indicator else None
    camera.rules = rules_of(message.rules)
    if camera.tracker is not None:
        camera.tracker.indicator = camera.indicator


async def _correct(camera: _Camera, data: dict[str, Any], tables: TableStore) -> None:
    fix = CameraCorrection.model_validate(data)
    if camera.tracker is None:
        raise ApiError(422, "unknown_change", "no frame read yet: nothing to correct")
    tile = tile_of(fix.tile, "tile") if fix.tile else None
    try:
        camera.tracker.correct(fix.change, tile)
    except (KeyError, ValueError) as exc:
        raise ApiError(422, "unknown_change", str(exc).strip("'")) from exc


async def _send_error(websocket: WebSocket, error: ApiError) -> None:
    await websocket.send_json({"type": "error", "code": error.code, "message": error.message})


async def _receive(
    websocket: WebSocket, camera: _Camera, slot: FrameSlot, tables: TableStore, server: Settings
) -> None:
    last = time.monotonic()
    ration = TextRation(server.max_text_messages_per_second)
    while True:
        message = await next_message(websocket, last + server.stream_idle_seconds, CLOSE_IDLE)
        if message is None:
            return
        try:
            if message.get("bytes") is not None:
                if camera.token is None and not camera.owner:
                    raise ApiError(401, "token_required", "send the table's token first")
                if len(message["bytes"]) > server.max_frame_bytes:
                    raise ApiError(
                        413, "too_large", f"a frame may be {server.max_frame_bytes} bytes"
                    )
                last = time.monotonic()
                slot.put(message["bytes"])
            elif message.get("text") is not None:
                if not ration.take():
                    limit = f"more than {ration.rate:g} a second"
                    await _send_error(websocket, ApiError(429, "too_many_messages", limit))
                    await websocket.close(code=CLOSE_POLICY, reason="too_many_messages")
                    return
                await _text(websocket, camera, message["text"], tables, server)
        except ApiError as exc:
            await _send_error(websocket, exc)
        await asyncio.sleep(0)


async def _text(
    websocket: WebSocket, camera: _Camera, text: str, tables: TableStore, server: Settings
) -> None:
    if len(text) > server.max_text_message_bytes:
        raise ApiError(413, "too_large", "the text message is too long")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ApiError(422, "invalid_message", "not JSON") from exc
    kind = data.get("type") if isinstance(data, dict) else None
    try:
        if kind == "settings":
            await _settings(camera, data, tables, server)
        elif kind == "correct":
            if camera.token is None and not camera.owner:
                raise ApiError(401, "token_required", "send the table's token first")
            await _correct(camera, data, tables)
            state = state_of(camera)
            await _publish(camera, tables, state)
            await websocket.send_json({"type": "table_state", **state})
        else:
            raise ApiError(422, "invalid_message", 'type must be "settings" or "correct"')
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ApiError(422, "invalid_message", f"{where}: {first['msg']}") from exc


async def _process(
    websocket: WebSocket,
    camera: _Camera,
    slot: FrameSlot,
    runner: PipelineRunner,
    tables: TableStore,
    server: Settings,
) -> None:
    async for frame in paced(slot, server.min_frame_interval):
        pixels = min(server.max_pixels, server.max_frame_pixels)
        try:
            state = await runner.call(partial(read_table_frame, camera, frame, pixels), shed=False)
        except ApiError as exc:
            await _send_error(websocket, exc)
            continue
        await websocket.send_json({"type": "table_state", **state})
        if len(camera.tracker.changes) != camera.published:
            try:
                await _publish(camera, tables, state)
                camera.published = len(camera.tracker.changes)
            except ApiError as exc:
                await _send_error(websocket, exc)


@router.websocket("/tables/{table}/camera")
async def table_camera(
    websocket: WebSocket,
    table: Annotated[str, Path(pattern=TABLE_PATTERN)],
    settings: Annotated[Settings, Depends(get_settings)],
    runner: Annotated[PipelineRunner, Depends(get_runner)],
    tables: Annotated[TableStore, Depends(get_tables)],
) -> None:
    await websocket.accept()
    try:
        runner.require()
        if runner.streams >= settings.max_streams:
            raise ApiError(503, "busy", f"the limit of {settings.max_streams} streams is reached")
    except ApiError as exc:
        await _send_error(websocket, exc)
        await websocket.close(code=1013 if exc.code == "busy" else 1011, reason=exc.code)
        return
    runner.streams += 1
    camera, slot = _Camera(table), FrameSlot()
    tasks: list[asyncio.Task[None]] = []
    try:
        await websocket.send_json({"type": "ready", "table": table})
        tasks = [
            asyncio.create_task(_process(websocket, camera, slot, runner, tables, settings)),
            asyncio.create_task(_receive(websocket, camera, slot, tables, settings)),
        ]
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            error = task.exception()
            if error is not None and not isinstance(error, _GONE):
                with contextlib.suppress(*_GONE, RuntimeError):
                    await websocket.close(code=1011, reason="internal error")
    except _GONE:
        pass
    finally:
        runner.streams -= 1
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def table_camera_part(tables: TableStore, table: str | None) -> dict[str, Any] | None:
    """What a table's camera has recorded (``seen``, ``seen_for_advice``, ``taken``,
    ``changes``), or None for a table without one: the rack's camera stream of the same table
    advises with it and carries it into the states it publishes."""
    if not table:
        return None
    with contextlib.suppress(ApiError):
        state = (await tables.snapshot(table)).get("state") or {}
        return state.get("table_camera")
    return None


def seen_of(part: dict[str, Any] | None) -> list[Tile]:
    """The tiles a table camera's record gives the adviser (the indicator's copy left out)."""
    return [Tile.parse(t) for t in (part or {}).get("seen_for_advice", [])]


def fit_seen(seen: list[Tile], hand: list[Tile], also: list[Tile] = ()) -> list[Tile]:
    """``seen`` less the copies that the hand and ``also`` (the seen tiles typed) leave no room
    for (a set has two of each tile): the rack as read wins over the table's record, which a
    person may still have to correct.

    >>> r5 = Tile.parse("R5")
    >>> [str(t) for t in fit_seen([r5, r5, Tile.parse("K1")], [r5])]
    ['R5', 'K1']
    """
    room = Counter({Tile(i): 2 for i in range(53)})
    room.subtract(hand)
    room.subtract(also)
    out = []
    for tile in seen:
        if room[tile] > 0:
            room[tile] -= 1
            out.append(tile)
    return out
