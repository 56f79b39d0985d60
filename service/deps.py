"""Dependencies shared by the routers: the settings, the worker's pipeline runner, the tables."""

from __future__ import annotations

from starlette.requests import HTTPConnection

from service.runner import PipelineRunner
from service.settings import Settings
from service.store import TableStore


# HTTPConnection, so the same dependencies serve HTTP routes and WebSocket routes.
def get_settings(conn: HTTPConnection) -> Settings:
    return conn.app.state.settings


def get_runner(conn: HTTPConnection) -> PipelineRunner:
    return conn.app.state.runner


def get_tables(conn: HTTPConnection) -> TableStore:
    return conn.app.state.tables
