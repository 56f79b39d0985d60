"""``POST /scan``: a photo of a rack in, the hand as laid out, the verdict and the advice out."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, replace
from functools import partial
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Depends, Query, Request
from pydantic import ValidationError

from service.auth import credential, is_owner, owner_required
from service.deps import get_runner, get_settings, get_tables
from service.errors import ApiError
from service.images import check_image, decode_image, encode_jpeg, image_size
from service.models import ERRORS, ScanOut
from service.quota import Quota
from service.routers import profiles
from service.routers.engine import rules_of, tile_of, tiles_of
from service.routers.overlay import TABLE_PATTERN
from service.routers.table import TableScanOut, scan_table
from service.rules_model import RulesOverrides
from service.runner import PipelineRunner
from service.settings import Settings
from service.store import TableStore
from service.uploads import read_image_bytes

router = APIRouter(tags=["scan"])

_IMAGE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["image"],
                    "properties": {"image": {"type": "string", "format": "binary"}},
                }
            },
            "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
            "image/png": {"schema": {"type": "string", "format": "binary"}},
            "image/heic": {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


def parse_rules_query(text: str) -> Any:
    """``rules=okey101`` or ``rules={"name": "classic", "wrap_13_1": false}``."""
    if not text.lstrip().startswith("{"):
        return rules_of(text)
    try:
        return rules_of(RulesOverrides.model_validate(json.loads(text)))
    except RecursionError as exc:
        raise ApiError(422, "invalid_request", "rules: the JSON is nested too deeply") from exc
    except (json.JSONDecodeError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise ApiError(422, "invalid_request", f"rules: not a valid rules object: {first}") from exc


def parse_corrections(text: str | None) -> dict[int, Any]:
    """``corrections={"3": "R5"}``: the tile with ``"id": 3`` in the answer is really R5."""
    if not text:
        return {}
    try:
        raw = json.loads(text)
    except RecursionError as exc:
        raise ApiError(422, "invalid_request", "corrections: nested too deeply") from exc
    except json.JSONDecodeError as exc:
        raise ApiError(422, "invalid_request", f"corrections: not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise ApiError(422, "invalid_request", 'corrections: expected an object like {"3": "R5"}')
    result = {}
    for key, value in raw.items():
        if not (
            isinstance(key, str) and key.isascii() and key.isdigit() and isinstance(value, str)
        ):
            raise ApiError(
                422, "invalid_request", f"corrections: {key!r}: {value!r} is not index: tile"
            )
        result[int(key)] = tile_of(value, f"corrections.{key}")
    return result


@dataclass(frozen=True)
class Keeping:
    """A scan's consent to keep its corrected tiles, with the credential that may write them."""

    token: str
    quota: Quota
    profile: str | None
    incoming: int  # the photo's bytes: about what keeping it adds


async def keep_credential(
    request: Request, settings: Settings, tables: TableStore, table: str | None
) -> str:
    """The credential a ``keep=true`` scan writes with: the owner's token, or a table's token
    with ``table``; 401/403 without one (before the body is read: nothing is written)."""
    token = credential(request)
    if token and table and not is_owner(settings, token):
        await tables.authorize(table, token)
        return token
    owner_required(settings, token, "keep=true (keeping the photo)")
    assert token is not None
    return token


@router.post(
    "/scan",
    response_model=ScanOut | TableScanOut,
    summary="Read a rack (or, with scene=table, the tiles face up on a table) from a photo",
    openapi_extra=_IMAGE_BODY,
    responses={code: ERRORS[code] for code in (400, 401, 403, 408, 413, 415, 422, 429, 503, 507)},
)
async def scan(
    request: Request,
    settings: Annotated[Settings, Depends(get_settings)],
    runner: Annotated[PipelineRunner, Depends(get_runner)],
    tables: Annotated[TableStore, Depends(get_tables)],
    indicator: Annotated[
        str | None, Query(max_length=20, description="the indicator, if not in the photo")
    ] = None,
    rules: Annotated[str, Query(max_length=2000, description="preset or JSON overrides")] = (
        "classic"
    ),
    seen: Annotated[str, Query(max_length=800, description="tiles seen elsewhere")] = "",
    declare: Annotated[bool, Query(description="referee the rack's groups as declared")] = False,
    annotate: Annotated[bool, Query(description="add the annotated photo (JPEG, base64)")] = False,
    corrections: Annotated[
        str | None, Query(max_length=2000, description='{"3": "R5"}: tile id 3 is really R5')
    ] = None,
    profile: Annotated[
        str | None, Query(max_length=48, description="read with a calibrated per-set profile")
    ] = None,
    keep: Annotated[
        bool,
        Query(
            description="consent: keep the corrected tiles in the local data folder (a write:"
            " needs the owner's token, or a table's token with table=)"
        ),
    ] = False,
    table: Annotated[
        str | None,
        Query(pattern=TABLE_PATTERN, description="keep=true with this table's token"),
    ] = None,
    scene: Annotated[
        Literal["rack", "table"],
        Query(
            description="rack: a player's rack; table: the tiles lying face up on the table"
            " (indicator, discard piles, melds) as the game's seen tiles (TableScanOut)"
        ),
    ] = "rack",
) -> ScanOut | TableScanOut:
    """Send the photo as the multipart field ``image`` or as the raw body (JPEG, PNG or HEIC).  The
    format is read from the bytes, not from the file name or the content type."""
    game_rules = parse_rules_query(rules)
    indicator_tile = tile_of(indicator, "indicator") if indicator else None
    seen_tiles = tiles_of(seen.split(), "seen")
    fixes = parse_corrections(corrections)
    if scene == "table":
        if keep or fixes or declare or seen_tiles:
            raise ApiError(
                422,
                "invalid_request",
                "scene=table: keep, corrections, declare and seen are for a rack (a table's"
                " camera corrects its own record)",
            )
        return await _scan_table(request, settings, runner, indicator_tile, game_rules, profile)
    keeping = None
    if keep:
        token = await keep_credential(request, settings, tables, table)
        declared = request.headers.get("content-length", "")
        incoming = int(declared) if declared.isdigit() else settings.max_upload_bytes
        quota = Quota(settings)
        quota.check(token, min(incoming, settings.max_upload_bytes))  # full: refused at once
        keeping = Keeping(token, quota, profile, incoming)
    data = await read_image_bytes(request, settings.max_upload_bytes)
    check_image(data, max_pixels=settings.max_pixels)  # the header: a 413/415 before any decoding
    _, (width, height) = image_size(data)
    scan_options = {
        "indicator": indicator_tile,
        "rules": game_rules,
        "seen": seen_tiles,
        "declare": declare,
        "corrections": fixes or None,
    }
    reader = profiles.load_profile(profile) if profile else None
    async with runner.admit(width * height):  # counted against the queue before it is decoded
        # Decoded off the event loop, and before asking for the model: bad input is a 4xx either
        # way.
        image = await anyio.to_thread.run_sync(
            partial(decode_image, data, max_pixels=settings.max_pixels)
        )
        runner.require()  # after the request's checks: bad input is a 4xx with or without model
        if keeping is not None:
            keeping = replace(keeping, incoming=len(data))
        job = partial(_scan, image, scan_options, annotate, reader, keeping if fixes else None)
        result, drawn = await runner.run(job)
    return ScanOut.from_result(
        result,
        annotated_jpeg=base64.b64encode(drawn).decode() if drawn else None,
    )


async def _scan_table(
    request: Request,
    settings: Settings,
    runner: PipelineRunner,
    indicator: Any,
    rules: Any,
    profile: str | None,
) -> TableScanOut:
    data = await read_image_bytes(request, settings.max_upload_bytes)
    check_image(data, max_pixels=settings.max_pixels)
    _, (width, height) = image_size(data)
    reader = profiles.load_profile(profile) if profile else None
    async with runner.admit(width * height):
        image = await anyio.to_thread.run_sync(
            partial(decode_image, data, max_pixels=settings.max_pixels)
        )
        runner.require()
        answer = await runner.run(partial(scan_table, image, indicator, rules, reader))
    return TableScanOut.model_validate(answer)


def _scan(
    image: Any,
    options: dict[str, Any],
    annotate: bool,
    reader: Any,
    keeping: Keeping | None,
    pipeline: Any,
) -> tuple[dict[str, Any], bytes | None]:
    """One scan on the inference thread (through a profile ``reader`` if any; ``keeping``: the
    user's consent to keep the corrected tiles): the result as JSON values and the annotated
    JPEG."""
    from vision.pipeline import NoRackError, NothingFoundError

    try:
        result = profiles.scan_with_profile(pipeline, image, options, reader)
    except NothingFoundError as exc:
        code = "no_rack" if isinstance(exc, NoRackError) else "no_tiles"
        raise ApiError(422, code, str(exc)) from exc
    answer = result.to_dict()
    check_corrections(options["corrections"] or {}, answer)
    if keeping is not None:
        with keeping.quota.writing(keeping.token, keeping.incoming):
            profiles.keep_corrected(image, result, keeping.profile)
    drawn = None
    if annotate:
        from vision.draw import annotate as draw

        drawn = encode_jpeg(draw(image, result))
    return answer, drawn


def check_corrections(fixes: dict[int, Any], answer: dict[str, Any]) -> None:
    """422 ``unknown_tile`` for a correction naming a tile id the scan did not read (it would
    otherwise be dropped without a word)."""
    placed = [t for row in answer["rows"] for group in row for t in group] + answer["table"]
    ids = {t["id"] for t in placed}
    unknown = sorted(set(fixes) - ids)
    if unknown:
        raise ApiError(
            422,
            "unknown_tile",
            f"corrections: no tile with id {unknown[0]} in this photo (its tiles have ids"
            f" {', '.join(map(str, sorted(ids))) or 'none'})",
        )
