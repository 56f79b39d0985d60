"""``WS /stream``: camera frames in, hand states out.

Client messages: binary = one JPEG (or PNG) frame; text = JSON, either
``{"type": "settings", "indicator": "R4", "rules": "classic", "seen": "K3 K3", "declare": false,
"table": "home", "token": "..."}`` (also ``offered``, and what rates the discards' risk as
``POST /hand`` takes it: ``next_takes``, ``next_discards``; 101 ``table_melds``, ``opened``)
or ``{"type": "correct", "id": 7, "tile": "B12"}`` (``"tile": null`` undoes it; ``id`` is the
tile's track id from the states).

Server messages: ``{"type": "ready", ...}`` once, then ``{"type": "state", ...}`` for every frame
read (rows of groups of tiles with boxes, track ``id`` and ``corrected``; flagged; verdict; advice;
counts of frames received and dropped), ``{"type": "table", "table", "token", "camera_url",
"overlay_url"}`` when the settings created the table they name (their ``token`` was the server
owner's), and ``{"type": "error", "code", "message"}`` for a message it could not use (the
connection stays open).  A stream feeds a table only with the table's token or the owner's.

At most ``max_stream_fps`` frames per second are read per stream, only the newest frame is ever
read, and frames that arrive meanwhile are dropped, never queued.  A stream that sends no frame for
``stream_idle_seconds`` is closed with code 4408, so idle sockets cannot hold every camera slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from okey import okey_for
from okey.errors import OkeyError
from service.auth import is_owner, owner_required
from service.deps import get_runner, get_settings, get_tables
from service.errors import ApiError
from service.images import decode_image
from service.limits import MAX_GROUPS, GroupTiles, SeenTiles
from service.routers.engine import add_take_or_draw, read_turn, rules_of, tile_of, tiles_of
from service.routers.overlay import CLOSE_IDLE, CLOSE_POLICY, TABLE_PATTERN, links
from service.routers.profiles import load_profile
from service.routers.table import fit_seen, seen_of, table_camera_part
from service.rules_model import RulesSpec
from service.runner import PipelineRunner
from service.settings import Settings
from service.store import TableStore, Write
from service.stream import (
    FrameSlot,
    StreamSession,
    StreamSettings,
    TextRation,
    next_message,
    paced,
)

router = APIRouter(tags=["stream"])
log = logging.getLogger("istaka.service.stream")
# What a vanished client raises when the server sends or reads: not an error of the server.
_GONE = (WebSocketDisconnect, ConnectionError)


class SettingsMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: str = "settings"
    indicator: str | None = Field(default=None, max_length=20)
    rules: RulesSpec = "classic"
    seen: SeenTiles = ""
    declare: bool = False
    table: str | None = Field(default=None, pattern=TABLE_PATTERN)
    token: str | None = Field(default=None, max_length=100, description="the table's owner token")
    profile: str | None = Field(default=None, max_length=48, description="a calibrated set")
    offered: str | None = Field(default=None, max_length=20, description="take it or draw?")
    # what rates the discards' risk, as POST /hand takes it (``table`` names the overlay table
    # here, so 101's melds on the table are ``table_melds``)
    next_takes: SeenTiles = ""
    next_discards: SeenTiles = ""
    table_melds: list[GroupTiles] = Field(default_factory=list, max_length=MAX_GROUPS)
    opened: bool = False

    @field_validator("table", mode="before")
    @classmethod
    def _table_is_a_name(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, str):
            raise ValueError(
                "table names the overlay table this stream feeds; give 101's melds on the table"
                ' as table_melds (["K4 K5 K6", ...])'
            )
        return value


def _split(tiles: str | list[str]) -> list[str]:
    return tiles.split() if isinstance(tiles, str) else list(tiles)


class CorrectMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: str = "correct"
    id: int = Field(ge=0, description="the tile's id in the states (its track id)")
    tile: str | None = Field(default=None, max_length=20)


def apply_message(session: StreamSession, text: str, max_corrections: int = 64) -> None:
    """Update a session from one JSON text message; ``ApiError`` 422 saying what was wrong."""
    try:
        data = json.loads(text)
    except RecursionError as exc:
        raise ApiError(422, "invalid_message", "the JSON is nested too deeply") from exc
    except json.JSONDecodeError as exc:
        raise ApiError(422, "invalid_message", f"not JSON: {exc}") from exc
    kind = data.get("type") if isinstance(data, dict) else None
    try:
        if kind == "settings":
            message = SettingsMessage.model_validate(data)
            indicator = tile_of(message.indicator, "indicator") if message.indicator else None
            rules = rules_of(message.rules)
            offered = tile_of(message.offered, "offered") if message.offered else None
            turn = read_turn(
                rules,
                indicator,
                None,
                offered,
                next_takes=_split(message.next_takes),
                next_discards=_split(message.next_discards),
                table=[_split(meld) for meld in message.table_melds],
                opened=message.opened,
                table_field="table_melds",
            )
            session.settings = StreamSettings(
                indicator=indicator,
                rules=rules,
                seen=tiles_of(_split(message.seen), "seen"),
                declare=message.declare,
                table=message.table,
                token=message.token,
                # a calibrated set: loaded here, so a wrong name is this message's 422
                profile=message.profile and load_profile(message.profile).name,
                offered=offered,
                turn=turn,
            )
        elif kind == "correct":
            fix = CorrectMessage.model_validate(data)
            if fix.tile is None:
                session.corrections.pop(fix.id, None)
            elif fix.id not in session.corrections and len(session.corrections) >= max_corrections:
                raise ApiError(
                    422,
                    "too_many_corrections",
                    f"a stream keeps at most {max_corrections} corrections (max_corrections);"
                    " undo one first",
                )
            else:
                session.corrections[fix.id] = tile_of(fix.tile, "tile")
        else:
            raise ApiError(422, "invalid_message", 'type must be "settings" or "correct"')
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ApiError(422, "invalid_message", f"{where}: {first['msg']}") from exc


def read_frame(
    pipeline: Any,
    *,
    session: StreamSession,
    frame: bytes,
    max_pixels: int,
    table_seen: list[Any] | None = None,
) -> dict[str, Any]:
    """One frame (JPEG/PNG bytes) through the pipeline with this stream's tracker and corrections.
    Runs on the worker's inference thread, decoding included, so the event loop never decodes.
    ``table_seen``: the tiles the table's camera saw face up, added to the settings' ``seen``."""
    from vision.pipeline import NothingFoundError
    from vision.smoothing import HandTracker

    if session.tracker is None:
        session.tracker = HandTracker()
    settings = session.settings
    image = decode_image(frame, max_pixels=max_pixels)
    height, width = image.shape[:2]
    recognition = pipeline.recognizer.recognize(image)
    if settings.profile:  # the player's calibrated set: the same tiles, re-read
        recognition = load_profile(settings.profile).apply(image, recognition)
    smoothed = session.tracker.update(recognition)
    try:
        result = pipeline.read(
            smoothed,
            indicator=settings.indicator,
            rules=settings.rules,
            seen=settings.seen,
            declare=settings.declare,
            corrections=dict(session.corrections) or None,
            turn=settings.turn,
        )
        extra = fit_seen(list(table_seen or ()), result.hand, settings.seen)
        if extra:  # advised again with the table's seen tiles the rack leaves room for
            result = pipeline.read(
                smoothed,
                indicator=settings.indicator,
                rules=settings.rules,
                seen=[*settings.seen, *extra],
                declare=settings.declare,
                corrections=dict(session.corrections) or None,
                turn=settings.turn,
            )
    except NothingFoundError as exc:
        # An empty frame (the camera turned away, a hand over the rack) is a state, not an error.
        return {**empty_state(settings, str(exc)), "image_size": [width, height]}
    state = result.to_dict()
    return add_take_or_draw(state, settings.offered, settings.rules, settings.seen, settings.turn)


def empty_state(settings: StreamSettings, warning: str) -> dict[str, Any]:
    """The state of a frame without a rack."""
    indicator = settings.indicator
    return {
        "rules": settings.rules.name,
        "indicator": str(indicator) if indicator else None,
        "indicator_source": "typed" if indicator else None,
        "indicator_confirmed": indicator is not None,
        "okey": str(okey_for(indicator)) if indicator else None,
        "rows": [],
        "hand": [],
        "table": [],
        "flagged": [],
        "verdict": None,
        "advice": None,
        "discard": None,
        "hints": [],
        "warnings": [warning],
    }


async def _send_error(websocket: WebSocket, error: ApiError) -> None:
    await websocket.send_json({"type": "error", "code": error.code, "message": error.message})


async def _receive(
    websocket: WebSocket,
    slot: FrameSlot,
    session: StreamSession,
    settings: Settings,
    tables: TableStore,
) -> None:
    last_frame = time.monotonic()
    ration = TextRation(settings.max_text_messages_per_second)
    while True:
        deadline = last_frame + settings.stream_idle_seconds
        message = await next_message(websocket, deadline, CLOSE_IDLE)
        if message is None:
            return
        if message.get("bytes") is not None:
            frame = message["bytes"]
            if len(frame) > settings.max_frame_bytes:
                limit = f"a frame may be {settings.max_frame_bytes} bytes (max_frame_bytes)"
                await _send_error(websocket, ApiError(413, "too_large", limit))
                continue
            last_frame = time.monotonic()
            slot.put(frame)
        elif message.get("text") is not None:
            if not ration.take():
                limit = f"more than {ration.rate:g} text messages a second"
                await _send_error(
                    websocket,
                    ApiError(429, "too_many_messages", f"{limit} (max_text_messages_per_second)"),
                )
                await websocket.close(code=CLOSE_POLICY, reason="too_many_messages")
                return
            text = message["text"]
            try:
                if len(text) > settings.max_text_message_bytes:
                    raise ApiError(
                        413,
                        "too_large",
                        f"a text message may be {settings.max_text_message_bytes} bytes"
                        " (max_text_message_bytes)",
                    )
                before = (session.settings.table, session.settings.token)
                apply_message(session, text, settings.max_corrections)
                if session.settings.table and before != (
                    session.settings.table,
                    session.settings.token,
                ):
                    await _join_table(websocket, session, tables, settings)
            except ApiError as exc:
                await _send_error(websocket, exc)
        # A socket's messages may all be buffered already, and then neither reading nor
        # answering would give way: let the other connections (and /health) run between two.
        await asyncio.sleep(0)


async def _join_table(
    websocket: WebSocket, session: StreamSession, tables: TableStore, server: Settings
) -> None:
    """Check the settings' table and token: the table's token feeds it; the server owner's token
    feeds any table, creating a free one for this stream (its token is sent back).  Without a
    token nothing is written.  On a refusal the stream goes on without feeding a table."""
    settings = session.settings
    assert settings.table is not None
    try:
        if not is_owner(server, settings.token):
            if not await tables.exists(settings.table):
                owner_required(
                    server, settings.token, f"there is no table {settings.table!r}: creating it"
                )
            await tables.authorize(settings.table, settings.token)
            return
        created = await tables.create(settings.table)
        if created is None:
            return  # it exists: the owner writes it with the owner's token
    except ApiError:
        settings.table = settings.token = None
        raise
    settings.token = created.token
    await websocket.send_json(
        {"type": "table", "table": created.table, "token": created.token, **links(created)}
    )


async def _process(
    websocket: WebSocket,
    slot: FrameSlot,
    session: StreamSession,
    settings: Settings,
    runner: PipelineRunner,
    tables: TableStore,
) -> None:
    async for frame in paced(slot, settings.min_frame_interval):
        # a table camera's record of the same table: its seen tiles count in the advice, and
        # the states published here carry it on
        camera_part = await table_camera_part(tables, session.settings.table)
        try:
            pixels = min(settings.max_pixels, settings.max_frame_pixels)
            read = partial(
                read_frame,
                session=session,
                frame=frame,
                max_pixels=pixels,
                table_seen=seen_of(camera_part),
            )
            result = await runner.call(read, shed=False)
        except ApiError as exc:  # a frame that is no JPEG/PNG, or too many pixels
            await _send_error(websocket, exc)
            continue
        except OkeyError as exc:
            # Only the player's corrections can make a reading impossible (a third R5): undo the
            # newest one and say why, rather than ending the stream.
            if session.corrections:
                tile_id = next(reversed(session.corrections))
                undone = session.corrections.pop(tile_id)
                message = f"correction of tile {tile_id} to {undone} undone: {exc}"
            else:
                message = str(exc)
            await _send_error(websocket, ApiError(422, "invalid_correction", message))
            continue
        session.frames_read += 1
        state = {
            **result,
            "frame": session.frames_read,
            "received": slot.received,
            "dropped": slot.dropped,
            "corrections": {str(k): str(v) for k, v in session.corrections.items()},
        }
        await websocket.send_json({"type": "state", **state})
        table, token = session.settings.table, session.settings.token
        if table:
            write = Write(as_server_owner=is_owner(settings, token))
            try:
                carried = {} if camera_part is None else {"table_camera": camera_part}
                await tables.publish(table, {"source": "camera", **state, **carried}, token, write)
            except ApiError as exc:  # the store is away, or the table was evicted
                await _send_error(websocket, exc)


@router.websocket("/stream")
async def stream(
    websocket: WebSocket,
    settings: Annotated[Settings, Depends(get_settings)],
    runner: Annotated[PipelineRunner, Depends(get_runner)],
    tables: Annotated[TableStore, Depends(get_tables)],
) -> None:
    await websocket.accept()
    try:
        runner.require()
        if runner.streams >= settings.max_streams:
            raise ApiError(
                503,
                "busy",
                f"{runner.streams} camera streams are open; the limit is {settings.max_streams}",
            )
    except ApiError as exc:
        await _send_error(websocket, exc)
        # 1013: try again later (busy); 1011: this server cannot serve streams at all.
        await websocket.close(code=1013 if exc.code == "busy" else 1011, reason=exc.code)
        return
    runner.streams += 1
    slot, session = FrameSlot(), StreamSession()
    tasks: list[asyncio.Task[None]] = []
    try:
        limits = {"max_fps": settings.max_stream_fps, "max_frame_bytes": settings.max_frame_bytes}
        await websocket.send_json({"type": "ready", **limits})
        tasks = [
            asyncio.create_task(_process(websocket, slot, session, settings, runner, tables)),
            asyncio.create_task(_receive(websocket, slot, session, settings, tables)),
        ]
        # Whichever ends first (the client leaves, or sending fails) ends the other: a closed
        # connection leaves no task and no frame behind.
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            error = task.exception()
            if error is not None and not isinstance(error, _GONE):
                # A failure inside the pipeline: log it, tell the client, end this stream only.
                log.error("camera stream failed", exc_info=error)
                with contextlib.suppress(*_GONE, RuntimeError):
                    await websocket.close(code=1011, reason="internal error")
    except _GONE:
        pass
    finally:
        runner.streams -= 1
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
