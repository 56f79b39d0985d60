"""The table store behind a real uvicorn server: ``/health`` says whether the store answers (503
when it does not), and when Redis comes back without its data the overlay pages are told the
table is gone, and no stranger can take its name."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import httpx
import pytest
from conftest_service import (
    OWNER_HEADERS,
    live_server,
    redis_command,
    redis_server,
    restart_redis,
)
from websockets.sync.client import connect

from service.settings import Settings

pytestmark = pytest.mark.slow

BODY = {"rows": [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]}
BODY["indicator"] = "R5"


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


@pytest.fixture
def restarted() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        process.terminate()
        process.wait(timeout=30)


def test_health_reports_the_store_and_is_503_without_it() -> None:
    # /health said ok while the store was down.
    with redis_server() as url, live_server(Settings(load_pipeline=False, store_url=url)) as live:
        health = httpx.get(f"{live.url}/api/v1/health", timeout=30)
        assert health.status_code == 200 and health.json()["store"] == "ok"
        redis_command(port_of(url), b"SHUTDOWN\r\n")
        health = httpx.get(f"{live.url}/api/v1/health", timeout=30)
        assert health.status_code == 503
        assert health.json()["status"] == health.json()["store"] == "unavailable"
        put = httpx.put(
            f"{live.url}/api/v1/tables/away", json=BODY, headers=OWNER_HEADERS, timeout=60
        )
        assert put.status_code == 503 and put.json()["error"]["code"] == "store_unavailable"
    with live_server(Settings(load_pipeline=False)) as memory:
        assert httpx.get(f"{memory.url}/api/v1/health", timeout=30).json()["store"] == "ok"


def test_overlays_say_gone_when_redis_lost_the_table(
    restarted: list[subprocess.Popen[bytes]],
) -> None:
    # Pages kept showing a table an empty Redis no longer had, and any stranger could claim it.
    with (
        redis_server(persistent=False) as url,
        live_server(Settings(load_pipeline=False, store_url=url, store_ephemeral=True)) as live,
    ):
        table = f"{live.url}/api/v1/tables/club"
        made = httpx.put(table, json=BODY, headers=OWNER_HEADERS, timeout=30)
        assert made.json()["version"] == 1
        with connect(f"{live.ws_url}/api/v1/overlay/club") as page:
            assert json.loads(page.recv(timeout=30))["version"] == 1
            restarted.append(restart_redis(port_of(url), persistent=False))
            gone = json.loads(page.recv(timeout=60))
            assert gone["type"] == "gone" and gone["state"] is None and gone["message"]
            # The name is not open to a stranger: creating needs the server owner's token.
            stranger = httpx.put(table, json=BODY, timeout=60)
            assert stranger.status_code == 401
            old_token = {"authorization": f"Bearer {made.json()['token']}"}
            assert httpx.put(table, json=BODY, headers=old_token, timeout=60).status_code == 403
            again = httpx.put(table, json=BODY, headers=OWNER_HEADERS, timeout=60)
            assert again.status_code == 200 and again.json()["version"] == 1
            fresh = json.loads(page.recv(timeout=30))
            assert (fresh["type"], fresh["version"]) == ("state", 1)
