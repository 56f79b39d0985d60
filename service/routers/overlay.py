"""Overlay tables: ``POST /tables`` creates a table and gives its token, ``PUT /tables/{table}``
sets a table's hand, ``GET /tables/{table}`` reads the latest state, ``WS /overlay/{table}``
pushes every new state to overlay pages.

Creating a table (``POST``, a ``PUT`` or a camera stream's settings naming a free name) needs the
server owner's token (``service.auth``); the answer carries the table's token, which writes that
table (``Authorization: Bearer TOKEN``); the owner's token writes any table.  A ``PUT`` may carry
``Idempotency-Key`` (a retry is answered with the first write's version and writes nothing) or
``If-Match: VERSION`` (compare-and-set).  Reading needs only the name, or also ``?key=`` for a
table created with a viewer key.  A page that (re)connects gets the full latest state at once, then
each newer one (``{"type": "gone"}`` when the store lost the table); a page that falls behind skips
the oldest states rather than queueing them.  Overlay sockets are closed after
``overlay_idle_seconds`` without an update or ``ws_silent_seconds`` without a message from the
page (code 4408; the page pings, and reconnects), and each worker holds at most ``max_overlays``
of them (code 1013).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from functools import partial
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import (
    APIRouter,
    Depends,
    Header,
    Path,
    Query,
    Request,
    Response,
    WebSocket,
    WebSocketDisconnect,
)
from pydantic import BaseModel, ConfigDict, Field

import okey
from service.auth import bearer, credential, is_owner, owner_required
from service.deps import get_settings, get_tables
from service.errors import ApiError
from service.limits import MAX_ROW_GROUPS, MAX_ROWS, GroupTiles, SeenTiles
from service.models import ERRORS, TileList
from service.routers.engine import (
    analyse_hand,
    engine_errors,
    rules_of,
    run_engine,
    tile_of,
    tiles_of,
)
from service.rules_model import RulesSpec
from service.settings import Settings
from service.store import Created, TableStore, Write

router = APIRouter(tags=["overlay"])

TABLE_PATTERN = r"^[\w.-]{1,64}$"
TableName = Annotated[str, Path(pattern=TABLE_PATTERN, description="table name: letters, digits")]
ViewerKey = Annotated[
    str | None, Query(max_length=100, description="the viewer key, for a table created with one")
]
# WebSocket close codes (4000-4999 are the application's own; 4408 as HTTP's 408 timeout).
CLOSE_IDLE = 4408
CLOSE_BUSY = 1013
CLOSE_POLICY = 1008


class TablePush(BaseModel):
    """A hand set by hand (or by a tool), laid out as on the rack."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "rows": [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]],
                    "indicator": "R5",
                    "rules": "classic",
                }
            ]
        },
    )

    rows: list[Annotated[list[GroupTiles], Field(max_length=MAX_ROW_GROUPS)]] = Field(
        description='rows top to bottom, each a list of groups: [["R1 R2 R3", "K5 Y5 B5"], ["J"]]',
        max_length=MAX_ROWS,
    )
    indicator: str = Field(max_length=20)
    rules: RulesSpec = "classic"
    seen: SeenTiles = Field(default="")
    declare: bool = Field(default=False, description="referee the groups as a declared win")
    discard: str | None = Field(default=None, max_length=20, description="the finishing discard")


class TableOut(BaseModel):
    table: str
    version: int = Field(description="0 before any state was set; +1 with every new state")
    updated_at: float | None = Field(description="Unix time of the latest state")
    state: dict[str, Any] | None = Field(description="rows, verdict, advice (as a scan gives)")
    token: str | None = Field(
        default=None, description="the owner token, only in the answer that created the table"
    )


class TableCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    table: str | None = Field(
        default=None, pattern=TABLE_PATTERN, description="the name; a random one if left out"
    )
    viewer_key: bool = Field(
        default=False, description="make the table private: reading it needs a viewer key"
    )


class TableCreated(BaseModel):
    table: str
    token: str = Field(description="the owner token: writes need it; keep it secret")
    viewer_key: str | None = Field(description="the key reading needs, if asked for")
    camera_url: str = Field(description="the camera page feeding this table (holds the token)")
    overlay_url: str = Field(description="the overlay page of this table")


def links(created: Created) -> dict[str, str]:
    """The camera page's and the overlay page's addresses for a new table (relative)."""
    camera = {"table": created.table, "token": created.token}
    overlay = {"table": created.table}
    if created.viewer_key:
        overlay["key"] = created.viewer_key
    return {
        "camera_url": f"/camera?{urlencode(camera)}",
        "overlay_url": f"/overlay?{urlencode(overlay)}",
    }


def _group_texts(group: TileList) -> list[str]:
    return group.split() if isinstance(group, str) else list(group)


def state_of_push(push: TablePush, camera_part: dict[str, Any] | None = None) -> dict[str, Any]:
    """The overlay state of a pushed hand: its rows plus the engine's advice and verdict; with a
    table camera's record (``service.routers.table``), its seen tiles counted and the record
    kept in the state."""
    from service.routers.table import fit_seen, seen_of

    rules = rules_of(push.rules)
    indicator = tile_of(push.indicator, "indicator")
    rows = [
        [tiles_of(_group_texts(group), f"rows.{r}.{g}") for g, group in enumerate(row)]
        for r, row in enumerate(push.rows)
    ]
    tiles = [tile for row in rows for group in row for tile in group]
    seen = tiles_of(_group_texts(push.seen), "seen")
    seen += fit_seen(seen_of(camera_part), tiles, seen)
    discard = tile_of(push.discard, "discard") if push.discard else None
    analysis = analyse_hand(tiles, indicator, rules, seen)
    verdict = None
    if push.declare:
        groups = [group for row in rows for group in row if group]
        groups, discard = okey.split_discard(groups, rules, discard)
        with engine_errors():
            verdict = okey.referee(groups, indicator, rules, discard=discard).to_dict()
    best = analysis["advice"]["options"][0] if analysis["advice"]["options"] else None
    return {
        "source": "push",
        "rows": [[[{"tile": str(t)} for t in group] for group in row] for row in rows],
        "indicator": str(indicator),
        "indicator_source": "typed",
        "indicator_confirmed": True,
        "okey": str(okey.okey_for(indicator)),
        "rules": rules.name,
        "advice": analysis["advice"],
        "distance_to_win": analysis["distance_to_win"],
        "verdict": verdict,
        "discard": {"tile": best["discard"]} if best and best["advised"] else None,
        **({} if camera_part is None else {"table_camera": camera_part}),
    }


@router.post(
    "/tables",
    response_model=TableCreated,
    status_code=201,
    summary="Create a table (as the server owner); its token comes back once",
    responses={code: ERRORS[code] for code in (401, 403, 409, 422, 503)},
)
async def create_table(
    body: TableCreate,
    conn: Request,
    tables: Annotated[TableStore, Depends(get_tables)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> TableCreated:
    owner_required(settings, credential(conn), "creating a table")
    name = body.table or f"table-{new_name()}"
    created = await tables.create(name, viewer_key=body.viewer_key)
    if created is None:
        raise ApiError(409, "table_exists", f"table {name!r} exists already; pick another name")
    return TableCreated(
        table=name, token=created.token, viewer_key=created.viewer_key, **links(created)
    )


def new_name() -> str:
    return secrets.token_hex(4)


@router.put(
    "/tables/{table}",
    response_model=TableOut,
    summary="Set a table's hand (with its token or the server owner's); overlay pages update",
    responses={code: ERRORS[code] for code in (401, 403, 404, 412, 422, 503)},
)
async def put_table(
    table: TableName,
    push: TablePush,
    conn: Request,
    response: Response,
    tables: Annotated[TableStore, Depends(get_tables)],
    settings: Annotated[Settings, Depends(get_settings)],
    authorization: Annotated[
        str | None,
        Header(max_length=200, description="Bearer TOKEN: the table's token or the owner's"),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        Header(
            pattern=r"^[\x21-\x7e]{1,100}$",
            description="a key of the client's choosing: a retry with the same key is answered"
            " with the first write's version and writes nothing again",
        ),
    ] = None,
    if_match: Annotated[
        str | None,
        Header(
            pattern=r'^"?\d{1,18}"?$',
            description="the version the write expects the table to be at (compare-and-set);"
            " another version: 412 version_mismatch and nothing written",
        ),
    ] = None,
) -> TableOut:
    """The server owner's token creates a free table by its first ``PUT`` (the answer holds the
    table's token) and writes any table; a table's own token writes that table."""
    token = bearer(authorization)
    owner = is_owner(settings, token)
    if not owner:
        if not await tables.exists(table):
            owner_required(settings, token, f"there is no table {table!r}: creating it")
        await tables.authorize(table, token)  # before the engine's work, and again on publishing
    # a table camera's record of this table: its seen tiles count in the advice, and it stays
    from service.routers.table import table_camera_part

    camera_part = await table_camera_part(tables, table)
    state = await run_engine(conn, partial(state_of_push, push, camera_part))
    created = await tables.create(table) if owner and not await tables.exists(table) else None
    write = Write(
        expected_version=int(if_match.strip('"')) if if_match else None,
        idempotency_key=idempotency_key,
        as_server_owner=owner,
    )
    snapshot = await tables.publish(table, state, token, write)
    if snapshot.get("replayed"):
        # The first write's version; its state was this same push's.
        response.headers["idempotent-replayed"] = "true"
        snapshot = {**snapshot, "state": state}
    return TableOut(**snapshot, token=created.token if created else None)


@router.get(
    "/tables/{table}",
    response_model=TableOut,
    summary="A table's latest state",
    responses={403: ERRORS[403], 503: ERRORS[503]},
)
async def get_table(
    table: TableName, tables: Annotated[TableStore, Depends(get_tables)], key: ViewerKey = None
) -> TableOut:
    return TableOut(**await tables.snapshot(table, key))


@router.websocket("/overlay/{table}")
async def overlay(
    websocket: WebSocket,
    table: str,
    tables: Annotated[TableStore, Depends(get_tables)],
    settings: Annotated[Settings, Depends(get_settings)],
    key: str | None = None,
) -> None:
    # fullmatch: re.match with "$" would let a trailing newline through, which REST refuses.
    if not re.fullmatch(TABLE_PATTERN.strip("^$"), table):
        await websocket.close(code=CLOSE_POLICY, reason="table names are letters, digits, . _ -")
        return
    await websocket.accept()
    if tables.fanout.count >= settings.max_overlays:
        await _refuse(
            websocket,
            ApiError(503, "busy", f"{settings.max_overlays} overlays are open (max_overlays)"),
        )
        return
    closed = asyncio.create_task(_until_silent(websocket, settings.ws_silent_seconds))
    try:
        async with tables.watch(table, key) as watch:
            while True:
                newer = asyncio.create_task(watch.next())
                done, _ = await asyncio.wait(
                    {newer, closed},
                    timeout=settings.overlay_idle_seconds,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if newer not in done:
                    newer.cancel()
                    if not closed.done():
                        await websocket.close(code=CLOSE_IDLE, reason="idle_timeout")
                    break
                snapshot = newer.result()
                if snapshot.get("gone"):
                    await websocket.send_json({"type": "gone", **snapshot})
                else:
                    await websocket.send_json({"type": "state", **snapshot})
    except ApiError as exc:
        await _refuse(websocket, exc)
    except (WebSocketDisconnect, RuntimeError, ConnectionError):
        pass
    finally:
        closed.cancel()


async def _refuse(websocket: WebSocket, error: ApiError) -> None:
    """Say why on an open socket and close it: 1013 (try again later) when busy or when the store
    cannot be reached, 1008 (policy) otherwise."""
    code = CLOSE_BUSY if error.status == 503 else CLOSE_POLICY
    with contextlib.suppress(WebSocketDisconnect, RuntimeError, ConnectionError):
        await websocket.send_json({"type": "error", "code": error.code, "message": error.message})
        await websocket.close(code=code, reason=error.code)


async def _until_silent(websocket: WebSocket, silent_seconds: float) -> None:
    """Returns when the page goes away, or has sent nothing for ``silent_seconds`` (then the
    socket is closed with 4408): the overlay page sends a ping every 20 s, so a socket held open by
    anything else is let go."""
    try:
        while True:
            try:
                message = await asyncio.wait_for(websocket.receive(), timeout=silent_seconds)
            except TimeoutError:
                with contextlib.suppress(WebSocketDisconnect, RuntimeError, ConnectionError):
                    await websocket.close(code=CLOSE_IDLE, reason="silent_timeout")
                return
            if message["type"] == "websocket.disconnect":
                return
            await asyncio.sleep(0)  # a page that floods the socket does not hold the loop
    except (WebSocketDisconnect, RuntimeError, ConnectionError):
        return
