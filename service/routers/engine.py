"""Engine endpoints: ``POST /hand``, ``POST /referee``, ``GET /rules``, ``GET /health``.

They call the game engine (``okey``) directly and never touch the recognition model, so they stay
fast while scans are running.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Annotated, Any, TypeVar

import anyio
from fastapi import APIRouter, Depends, Request, Response
from starlette.requests import HTTPConnection

import okey
import okey.turn
from okey import Rules, Tile
from okey.rules import PRESETS
from service.deps import get_runner, get_tables
from service.errors import ApiError
from service.models import (
    ERRORS,
    HandOut,
    HandRequest,
    HealthOut,
    PresetOut,
    RefereeOut,
    RefereeRequest,
    RulesOut,
)
from service.rules_model import to_rules
from service.runner import PipelineRunner
from service.store import TableStore

router = APIRouter(tags=["engine"], responses={422: ERRORS[422]})
T = TypeVar("T")


def rules_of(spec: Any) -> Rules:
    """The request's rules, or a 422 naming the field."""
    try:
        return to_rules(spec)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", f"rules: {exc}") from exc


# The API's tile notation, ASCII only: the engine's parser also reads "R-5", "R 5", "R٥" (an
# Arabic-Indic digit) and words ("red 5"), which a request must not smuggle in as R5.
TILE_TEXT = re.compile(r"[RYBKrybk](?:1[0-3]|[1-9])|[Ff][Jj]")


def tile_of(text: str, field: str) -> Tile:
    if not TILE_TEXT.fullmatch(text):
        raise ApiError(
            422,
            "invalid_request",
            f"{field}: cannot read tile {text!r}: write a colour R, Y, B or K and a number 1-13"
            " (R5, K13), or FJ",
        )
    try:
        return Tile.parse(text)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", f"{field}: {exc}") from exc


def tiles_of(texts: list[str], field: str) -> list[Tile]:
    return [tile_of(text, field) for text in texts]


def analyse_hand(
    tiles: list[Tile], indicator: Tile, rules: Rules, seen: list[Tile], **turn: Any
) -> dict[str, Any]:
    """Distance to win, the win check (14 tiles) and the advice (``okey.advise_hand``: a 22-tile
    101 hand is ranked by ``okey.okey101``), as plain JSON values; ``turn``: what rates the
    discards' risk (``turn_of``)."""
    try:
        stage = okey.hand_stage(len(tiles), rules)
    except okey.OkeyError as exc:
        raise ApiError(422, "invalid_hand", f"tiles: {exc}") from exc
    with engine_errors():
        okey.check_possible(tiles, indicator, rules, others=seen)
        result: dict[str, Any] = {
            "distance_to_win": okey.distance_to_win(tiles, indicator, rules),
            "advice": okey.advise_hand(tiles, indicator, rules, seen, **turn).to_dict(),
            "arrangement": None,
        }
        if stage == "waits":
            result["arrangement"] = okey.check_win(tiles, indicator, rules).to_dict()
    return result


def add_take_or_draw(
    state: dict[str, Any],
    offered: Tile | None,
    rules: Rules,
    seen: list[Tile],
    turn: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A read state with ``take_or_draw`` where a tile is offered and the hand waits for its
    draw (else as it was; a tile the hand cannot take is a warning); ``turn`` as ``turn_of``'s."""
    hand, indicator = state.get("hand") or [], state.get("indicator")
    if offered is not None and indicator and len(hand) == rules.hand_size:
        try:
            answer = okey.take_or_draw(hand, offered, indicator, rules, seen, **(turn or {}))
        except okey.OkeyError as exc:
            state.setdefault("warnings", []).append(f"offered: {exc}")
        else:
            state["take_or_draw"] = answer.to_dict()
    return state


@contextmanager
def engine_errors() -> Iterator[None]:
    """The engine raises ``ValueError`` for input it cannot take (its documented contract for bad
    input): that is the request's fault, so a 422 naming the problem."""
    try:
        yield
    except ValueError as exc:
        raise ApiError(422, "invalid_hand", str(exc)) from exc


async def run_engine(conn: HTTPConnection, fn: Callable[[], T]) -> T:
    """``fn()`` on a worker thread, at most ``engine_threads`` at once: the engine is pure Python
    and holds the GIL, so a crowd of engine threads would starve the event loop (and with it
    every other request, ``/health`` included)."""
    return await anyio.to_thread.run_sync(fn, limiter=conn.app.state.engine_limiter)


@router.post("/hand", response_model=HandOut, summary="Arrangement or discard advice for a hand")
async def hand(request: HandRequest, conn: Request) -> HandOut:
    """A 14-tile hand (21 in 101): the win check, the distance to win and the waits.
    A 15-tile hand (22 in 101): every discard ranked, best first."""
    return await run_engine(conn, partial(_hand, request))


def _hand(request: HandRequest) -> HandOut:
    rules = rules_of(request.rules)
    indicator = tile_of(request.indicator, "indicator")
    tiles = tiles_of(request.tile_list(), "tiles")
    seen = tiles_of(request.seen_list(), "seen")
    offered = tile_of(request.offered, "offered") if request.offered else None
    turn = turn_of(request, rules, tiles, indicator, offered)
    analysis = analyse_hand(tiles, indicator, rules, seen, **turn)
    if offered is not None:
        with engine_errors():
            answer = okey.take_or_draw(tiles, offered, indicator, rules, seen, **turn)
        analysis["take_or_draw"] = answer.to_dict()
    return HandOut(
        tiles=[str(t) for t in sorted(tiles)],
        indicator=str(indicator),
        okey=str(okey.okey_for(indicator)),
        rules=rules.name,
        **analysis,
    )


def turn_of(
    request: HandRequest, rules: Rules, tiles: list[Tile], indicator: Tile, offered: Tile | None
) -> dict[str, Any]:
    """What rates the discards' risk (``okey.advise_hand``'s keywords): classic, the right-hand
    player's takes and discards; 101, the melds on the table and whether the player has opened.
    A 422 naming the field for one of the other game, a tile that cannot be read, a meld that is
    none, or a third copy of a tile (with the hand, the offered tile and the indicator)."""
    return read_turn(
        rules,
        indicator,
        tiles,
        offered,
        next_takes=request.takes_list(),
        next_discards=request.discards_list(),
        table=request.table_lists(),
        opened=request.opened,
    )


def read_turn(
    rules: Rules,
    indicator: Tile | None,
    tiles: list[Tile] | None,
    offered: Tile | None,
    *,
    next_takes: list[str],
    next_discards: list[str],
    table: list[list[str]],
    opened: bool,
    table_field: str = "table",
) -> dict[str, Any]:
    """``turn_of`` for any caller (``okey.turn.read_turn`` on the message's tiles): ``tiles``
    None where the hand is not known yet (a camera stream's settings: the values are checked
    against each other and the indicator, the hand when a frame is read), ``table_field`` the
    melds' field name in the caller's message."""
    melds = [tiles_of(meld, f"{table_field}[{at}]") for at, meld in enumerate(table)]
    with engine_errors():  # the hand's own errors (turn errors name their field: below)
        try:
            return okey.turn.read_turn(
                rules,
                indicator,
                tiles,
                offered,
                next_takes=tiles_of(next_takes, "next_takes"),
                next_discards=tiles_of(next_discards, "next_discards"),
                table=melds,
                opened=opened,
                names={"table": table_field, "rules": "rules"},
                indexed=True,
            )
        except okey.turn.TurnError as exc:
            raise ApiError(422, "invalid_request", str(exc)) from exc


@router.post("/referee", response_model=RefereeOut, summary="Referee a declared hand")
async def referee(request: RefereeRequest, conn: Request) -> RefereeOut:
    """Groups as laid out on the rack plus the finishing discard: valid or not, why, and points."""
    return await run_engine(conn, partial(_referee, request))


def _referee(request: RefereeRequest) -> RefereeOut:
    rules = rules_of(request.rules)
    indicator = tile_of(request.indicator, "indicator")
    groups = [tiles_of(group, f"groups.{i}") for i, group in enumerate(request.group_lists())]
    if not groups:
        raise ApiError(422, "invalid_request", "groups: declare at least one group")
    discard = tile_of(request.discard, "discard") if request.discard else None
    with engine_errors():
        verdict = okey.referee(groups, indicator, rules, discard=discard)
    return RefereeOut(verdict=verdict.to_dict())


@router.get("/rules", response_model=RulesOut, summary="The rule presets")
async def rules() -> RulesOut:
    return RulesOut(
        presets=[PresetOut(name=name, rules=make().to_dict()) for name, make in PRESETS.items()]
    )


@router.get(
    "/health",
    response_model=HealthOut,
    summary="Liveness, the table store, whether recognition is up",
    responses={503: {"model": HealthOut, "description": "the table store cannot be reached"}},
)
async def health(
    runner: Annotated[PipelineRunner, Depends(get_runner)],
    tables: Annotated[TableStore, Depends(get_tables)],
    response: Response,
) -> HealthOut:
    store_ok = await tables.available()
    if not store_ok:
        response.status_code = 503  # tables cannot be served: a balancer should look elsewhere
    return HealthOut(
        status="ok" if store_ok else "unavailable",
        store="ok" if store_ok else "unavailable",
        recognition=runner.pipeline is not None,
        recognition_error=runner.error if runner.pipeline is None else None,
        pending_scans=runner.pending,
        streams=runner.streams,
        worker=os.getpid(),
    )
