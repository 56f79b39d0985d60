"""Overlay tables: ``PUT /tables/{table}`` sets a table's hand, ``GET /tables/{table}`` reads the
latest state, ``WS /overlay/{table}`` pushes every new state to overlay pages.

A camera stream whose settings name a table publishes its readings there too.  A page that
(re)connects gets the full latest state at once, then each newer one; a slow page skips states
rather than queueing them.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ConfigDict, Field

import okey
from okey import Rules, Tile
from service.deps import get_tables
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
from service.tables import TableHub

router = APIRouter(tags=["overlay"])

TABLE_PATTERN = r"^[\w.-]{1,64}$"
TableName = Annotated[str, Path(pattern=TABLE_PATTERN, description="table name: letters, digits")]


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

    rows: list[list[TileList]] = Field(
        description='rows top to bottom, each a list of groups: [["R1 R2 R3", "K5 Y5 B5"], ["J"]]',
        max_length=4,
    )
    indicator: str = Field(max_length=20)
    rules: RulesSpec = "classic"
    seen: TileList = Field(default="", max_length=800)
    declare: bool = Field(default=False, description="referee the groups as a declared win")
    discard: str | None = Field(default=None, max_length=20, description="the finishing discard")


class TableOut(BaseModel):
    table: str
    version: int = Field(description="0 before any state was set; +1 with every new state")
    updated_at: float | None = Field(description="Unix time of the latest state")
    state: dict[str, Any] | None = Field(description="rows, verdict, advice (as a scan gives)")


def _group_texts(group: TileList) -> list[str]:
    return group.split() if isinstance(group, str) else list(group)


def split_discard(
    groups: list[list[Tile]], discard: Tile | None, rules: Rules
) -> tuple[list[list[Tile]], Tile | None]:
    """The declared groups and the finishing discard: with one tile over the hand size and no
    discard named, the one tile standing alone is the discard (as the camera pipeline does)."""
    total = sum(len(g) for g in groups)
    lone = [k for k, g in enumerate(groups) if len(g) == 1]
    if discard is not None or total != rules.hand_size + 1 or len(lone) != 1:
        return groups, discard
    k = lone[0]
    return groups[:k] + groups[k + 1 :], groups[k][0]


def state_of_push(push: TablePush) -> dict[str, Any]:
    """The overlay state of a pushed hand: its rows plus the engine's advice and verdict."""
    rules = rules_of(push.rules)
    indicator = tile_of(push.indicator, "indicator")
    rows = [
        [tiles_of(_group_texts(group), f"rows.{r}.{g}") for g, group in enumerate(row)]
        for r, row in enumerate(push.rows)
    ]
    tiles = [tile for row in rows for group in row for tile in group]
    seen = tiles_of(_group_texts(push.seen), "seen")
    discard = tile_of(push.discard, "discard") if push.discard else None
    analysis = analyse_hand(tiles, indicator, rules, seen)
    verdict = None
    if push.declare:
        groups = [group for row in rows for group in row if group]
        groups, discard = split_discard(groups, discard, rules)
        with engine_errors():
            verdict = okey.referee(groups, indicator, rules, discard=discard).to_dict()
    best = analysis["advice"]["options"][0] if analysis["advice"]["options"] else None
    return {
        "source": "push",
        "rows": [[[{"tile": str(t)} for t in group] for group in row] for row in rows],
        "indicator": str(indicator),
        "okey": str(okey.okey_for(indicator)),
        "rules": rules.name,
        "advice": analysis["advice"],
        "distance_to_win": analysis["distance_to_win"],
        "verdict": verdict,
        "discard": {"tile": best["discard"]} if best and best["advised"] else None,
    }


@router.put(
    "/tables/{table}",
    response_model=TableOut,
    summary="Set a table's hand; overlay pages update",
    responses={422: ERRORS[422]},
)
async def put_table(
    table: TableName,
    push: TablePush,
    conn: Request,
    tables: Annotated[TableHub, Depends(get_tables)],
) -> TableOut:
    state = await run_engine(conn, partial(state_of_push, push))
    # Published on the event loop's thread: the hub's wake-ups are asyncio events.
    return TableOut(**tables.publish(table, state))


@router.get("/tables/{table}", response_model=TableOut, summary="A table's latest state")
async def get_table(table: TableName, tables: Annotated[TableHub, Depends(get_tables)]) -> TableOut:
    return TableOut(**tables.snapshot(table))


@router.websocket("/overlay/{table}")
async def overlay(
    websocket: WebSocket, table: str, tables: Annotated[TableHub, Depends(get_tables)]
) -> None:
    import re

    if not re.match(TABLE_PATTERN, table):
        await websocket.close(code=1008, reason="table names are letters, digits, . _ -")
        return
    await websocket.accept()
    tables.watch(table)
    closed = asyncio.create_task(_until_closed(websocket))
    try:
        snapshot = tables.snapshot(table)
        await websocket.send_json({"type": "state", **snapshot})
        while not closed.done():
            newer = asyncio.create_task(tables.wait_newer(table, snapshot["version"]))
            await asyncio.wait({newer, closed}, return_when=asyncio.FIRST_COMPLETED)
            if not newer.done():
                newer.cancel()
                break
            snapshot = newer.result()
            await websocket.send_json({"type": "state", **snapshot})
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        closed.cancel()
        tables.unwatch(table)


async def _until_closed(websocket: WebSocket) -> None:
    # Overlay pages send nothing; reading still notices when one goes away.
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
    except (WebSocketDisconnect, RuntimeError):
        return
