"""Per-set profiles and the kept tiles over HTTP, and the calibration page.

- ``POST /calibrate?profile=NAME&learn=false``: one or two photos of the calibration layout
  (multipart fields ``image`` and ``image2``) read and labelled from the layout: what was
  understood comes back and nothing is learned.  The same request with ``learn=true`` makes the
  profile (refused with 422 ``profile_refused`` when it reads its own photos worse than the
  shipped model), with ``keep=true`` (consent) also keeping the labelled tiles;
- ``GET /profiles``, ``DELETE /profiles/{name}`` (the owner's token);
- ``GET /data``: what the local data folder holds (tiles kept with consent; nothing leaves the
  machine) and its usage against the quotas (``service.quota``).

Learning, keeping and deleting are writes: they need the server owner's token
(``service.auth``), and what they add counts against the quotas.

``POST /scan?profile=NAME`` reads through a profile; with ``keep=true`` the tiles its
``corrections`` set right are kept (``service.routers.scan``).  The page is ``/calibrate``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import FileResponse
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from service.auth import credential, owner_required
from service.deps import get_runner, get_settings
from service.errors import ApiError
from service.images import check_image, decode_image
from service.models import ERRORS
from service.quota import Quota, report
from service.runner import PipelineRunner
from service.settings import Settings
from service.uploads import MULTIPART_SLACK, _capped

router = APIRouter(tags=["profiles"])
pages = APIRouter(include_in_schema=False)
STATIC = Path(__file__).resolve().parent.parent / "static"
NAME = Query(min_length=1, max_length=48, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

_loaded: dict[str, tuple[float, Any]] = {}  # name -> (profile.yaml mtime, Profile)


@pages.get("/calibrate")
async def calibrate_page() -> FileResponse:
    return FileResponse(STATIC / "calibrate.html")


def load_profile(name: str) -> Any:
    """The named profile, loaded once per change of its files (422 ``no_profile``)."""
    from vision.profiles import PROFILE_FILE, ProfileError, check_name, profiles_dir

    try:
        path = profiles_dir() / check_name(name) / PROFILE_FILE
        mtime = path.stat().st_mtime if path.is_file() else -1.0
        cached = _loaded.get(name)
        if cached and cached[0] == mtime:
            return cached[1]
        from vision.profiles import Profile

        profile = Profile.load(name)
    except ProfileError as exc:
        raise ApiError(422, "no_profile", str(exc)) from exc
    _loaded[name] = (mtime, profile)
    return profile


def scan_with_profile(pipeline: Any, image: Any, options: dict[str, Any], profile: Any) -> Any:
    """``pipeline.scan`` reading through ``profile`` (None: as shipped)."""
    if profile is None:
        return pipeline.scan(image, **options)
    t0 = time.perf_counter()
    recognition = profile.apply(image, pipeline.recognizer.recognize(image))
    recognise_ms = (time.perf_counter() - t0) * 1000
    result = pipeline.read(recognition, **options)
    result.timings_ms = {"recognise": recognise_ms, **result.timings_ms}
    result.timings_ms["total"] = (time.perf_counter() - t0) * 1000
    return result


def keep_corrected(image: Any, result: Any, profile: str | None) -> int:
    """Keep (the user consented) the tiles a scan's corrections set right."""
    from vision.profiles import DataStore

    placed = list(result.table) + [t for group in result.groups for t in group]
    tiles = [(p.box, p.tile, None) for p in placed if p.corrected]
    return DataStore().keep(image, tiles, source="correction", consent=True, profile=profile)


async def _read_photos(request: Request, max_bytes: int) -> list[bytes]:
    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("multipart/form-data"):
        raise ApiError(400, "missing_image", "send the photos as multipart fields image, image2")
    limit = 2 * max_bytes + MULTIPART_SLACK
    parser = MultiPartParser(request.headers, _capped(request, limit), max_files=2, max_fields=5)
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        raise ApiError(400, "bad_multipart", f"the multipart body is malformed: {exc}") from exc
    try:
        photos = []
        for key in ("image", "image2"):
            field = form.get(key)
            if isinstance(field, UploadFile):
                data = await field.read()
                if len(data) > max_bytes:
                    raise ApiError(413, "too_large", f"{key} is over {max_bytes} bytes")
                if data:
                    photos.append(data)
        if not photos:
            raise ApiError(400, "missing_image", "no photo in the multipart field 'image'")
        return photos
    finally:
        await form.close()


@router.post(
    "/calibrate",
    summary="Read calibration photos; with learn=true make a profile (as the server owner)",
    responses={code: ERRORS[code] for code in (400, 401, 403, 408, 413, 422, 429, 503, 507)},
)
async def calibrate(
    request: Request,
    settings: Annotated[Settings, Depends(get_settings)],
    runner: Annotated[PipelineRunner, Depends(get_runner)],
    profile: Annotated[str, NAME],
    learn: Annotated[bool, Query(description="fit and save the profile (owner's token)")] = False,
    keep: Annotated[bool, Query(description="consent: keep the labelled tiles locally")] = False,
) -> dict[str, Any]:
    quota = None
    token = credential(request)
    if learn or keep:  # writes: a profile, kept tiles
        owner_required(settings, token, "learn=true or keep=true (calibrating)")
        assert token is not None
        if not learn:
            raise ApiError(422, "invalid_request", "keep=true keeps what learn=true labels: add it")
        quota = Quota(settings)
        quota.check(token, 0, files=1)
    data = await _read_photos(request, settings.max_upload_bytes)
    images = []
    for blob in data:
        check_image(blob, max_pixels=settings.max_pixels)
        images.append(
            await anyio.to_thread.run_sync(
                partial(decode_image, blob, max_pixels=settings.max_pixels)
            )
        )
    runner.require()
    async with runner.admit():
        recognizer, photos = await runner.run(partial(_read_layouts, images))
    out: dict[str, Any] = {
        "profile": profile,
        "photos": [_understood(p) for p in photos],
        "learned": False,
    }
    if not learn:
        return out
    # Learning (a fine-tune of about a minute and a half with torch) runs beside the pipeline's
    # thread, not in it, so scans and live frames go on being read meanwhile; one at a time.
    assert quota is not None and token is not None
    writing = partial(quota.writing, token, sum(map(len, data)), len(data) + 3)
    learned = await anyio.to_thread.run_sync(
        partial(_learn, recognizer, photos, profile, keep, writing)
    )
    out.update(learned=True, report=learned)
    return out


# one calibration learns at a time (each takes the CPU for up to a few minutes)
_LEARNING = threading.Lock()


def _read_layouts(images: list[Any], pipeline: Any) -> tuple[Any, list[Any]]:
    """The calibration photos read by the shipped recogniser (unprofiled), and that recogniser."""
    from vision.profiles import LayoutError
    from vision.training.calibrate import CalibrationPhoto

    recognizer = pipeline.recognizer
    recognizer = getattr(recognizer, "recognizer", recognizer)  # the shipped one, unprofiled
    photos = []
    for k, image in enumerate(images, start=1):
        try:
            photos.append(CalibrationPhoto.read(recognizer, image, name=f"photo {k}"))
        except LayoutError as exc:
            raise ApiError(422, "not_the_layout", f"photo {k}: {exc}") from exc
    return recognizer, photos


def _learn(
    recognizer: Any,
    photos: list[Any],
    name: str,
    keep: bool,
    writing: Callable[[], AbstractContextManager[None]],
) -> dict[str, Any]:
    """Make, check and save the profile; keep the photos' labelled tiles with consent; the
    writes within the quotas (``writing``)."""
    from vision.profiles import DataStore, ProfileError
    from vision.training.calibrate import make_profile

    with _LEARNING:
        try:
            profile, report = make_profile(name, recognizer, photos, kept=DataStore().crops())
        except ProfileError as exc:
            raise ApiError(422, "profile_refused", str(exc)) from exc
        with writing():
            profile.save()
            _loaded.pop(name, None)
            if keep:
                for photo in photos:
                    DataStore().keep(
                        photo.image,
                        [(t.box, t.label, t.read) for t in photo.labelled_tiles()],
                        source="calibration",
                        consent=True,
                        profile=name,
                    )
    return report


def _understood(photo: Any) -> dict[str, Any]:
    layout = photo.layout
    tiles = photo.recognition.tiles
    return {
        "name": photo.name,
        "found": len(tiles),
        "labelled": len(layout.labelled),
        "rows": layout.rows,
        "problems": layout.problems,
        "summary": layout.summary(),
        "tiles": [
            {
                "row": t.row,
                "column": t.column,
                "label": str(t.label) if t.label else None,
                "read": str(t.read),
                "box": [round(float(v), 1) for v in tiles[t.index].box],
            }
            for t in layout.tiles
        ],
    }


@router.get("/profiles", summary="The saved per-set profiles")
async def profiles() -> list[dict[str, Any]]:
    from vision.profiles import list_profiles

    return [
        {k: v for k, v in p.items() if k in ("name", "created", "tiles", "kept", "check")}
        for p in list_profiles()
    ]


@router.delete(
    "/profiles/{name}",
    summary="Delete a saved profile (as the server owner)",
    responses={code: ERRORS[code] for code in (401, 403, 404, 422)},
)
async def delete_profile(
    name: str, request: Request, settings: Annotated[Settings, Depends(get_settings)]
) -> dict[str, Any]:
    import shutil

    from vision.profiles import ProfileError, check_name, profiles_dir

    owner_required(settings, credential(request), "deleting a profile")

    try:
        path = profiles_dir() / check_name(name)
    except ProfileError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    if not path.is_dir():
        raise ApiError(404, "no_profile", f"no profile named {name!r}")
    shutil.rmtree(path)
    _loaded.pop(name, None)
    return {"deleted": name}


@router.get("/data", summary="What the local data folder keeps (with consent), and its quotas")
async def kept_data(settings: Annotated[Settings, Depends(get_settings)]) -> dict[str, Any]:
    from vision.profiles import DataStore

    store = DataStore()
    records = store.records()
    by_source: dict[str, int] = {}
    for r in records:
        by_source[r["source"]] = by_source.get(r["source"], 0) + 1
    return {
        "tiles": len(records),
        "photos": len({r["photo"] for r in records}),
        "by_source": by_source,
        "usage": await anyio.to_thread.run_sync(report, settings),
    }
