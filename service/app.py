"""The app factory: ``create_app(settings)`` builds the FastAPI app of one server process.

>>> app = create_app(Settings(load_pipeline=False))
>>> [path for path in sorted(app.openapi()["paths"]) if path.startswith("/api/v1/r")]
['/api/v1/referee', '/api/v1/rules']
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import anyio
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from okey.startup import load_tables
from service import errors
from service.routers import engine, overlay, pages, profiles, scan, stream, table
from service.runner import PipelineRunner
from service.security import SecurityMiddleware
from service.settings import Settings
from service.slow import BodyGuard, SlowBodyMiddleware
from service.store import make_store, new_secret

STATIC = Path(__file__).parent / "static"
log = logging.getLogger("istaka.service")


def _load_runner(settings: Settings) -> PipelineRunner:
    def runner(pipeline: object, error: str | None = None) -> PipelineRunner:
        return PipelineRunner(
            pipeline, settings.max_pending_scans, error, settings.max_queued_pixels
        )

    if not settings.load_pipeline:
        return runner(None, "started with load_pipeline=False")
    try:
        pipeline = settings.pipeline_factory()
    except (ImportError, FileNotFoundError) as exc:
        # A server without the vision extra or without shipped weights still serves the engine
        # and the overlay; /scan and the stream then say exactly what is missing.
        log.warning("recognition disabled: %s", exc)
        return runner(None, str(exc))
    return runner(pipeline)


def create_app(settings: Settings | None = None) -> FastAPI:
    """A FastAPI app with the REST and WebSocket API under ``/api/v1`` and the two pages.
    Without ``settings``, they come from the environment (``Settings.from_env``)."""
    settings = settings or Settings.from_env()
    if settings.owner_token is None:
        settings = replace(settings, owner_token=new_secret())
        log.warning(
            "no owner token given (ISTAKA_OWNER_TOKEN): made one for this process; the owner's"
            " pages: /?owner=%s",
            settings.owner_token,
        )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # One pipeline per worker process, built before the first request is accepted.
        app.state.runner = _load_runner(settings)
        load_tables()  # the engine's tables loaded, then gc.freeze(): no long full collections
        await app.state.tables.start()
        try:
            yield
        finally:
            app.state.runner.close()
            await app.state.tables.close()

    app = FastAPI(
        title="istaka",
        version="0.1.0",
        summary="Read an Okey rack from a photo, referee hands, advise the discard.",
        lifespan=lifespan,
        # /docs and /redoc come from service.routers.pages, with their assets installed locally.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.engine_limiter = anyio.CapacityLimiter(settings.engine_threads)
    app.state.tables = make_store(
        settings.store_url,
        settings.max_tables,
        settings.table_keep_seconds,
        ephemeral=settings.store_ephemeral,
    )
    errors.install(app)
    app.add_middleware(
        SecurityMiddleware,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        max_body_bytes=settings.max_json_bytes,
    )
    # Outside the security middleware, so its reading of a body is timed too.
    guard = BodyGuard(
        settings.body_start_seconds, settings.min_body_bytes_per_second, settings.body_gap_seconds
    )
    app.add_middleware(SlowBodyMiddleware, guard=guard)
    for module in (engine, scan, stream, table, overlay, profiles):
        app.include_router(module.router, prefix="/api/v1")
    app.include_router(pages.router)
    app.include_router(profiles.pages)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
