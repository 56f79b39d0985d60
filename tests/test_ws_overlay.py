"""``WS /api/v1/overlay/{table}`` against a real uvicorn server: the full state on every
(re)connect, every new state pushed, only the newest kept for a slow page."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from conftest_service import LiveServer, live_server
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from service.settings import Settings

pytestmark = pytest.mark.slow

WINNING_ROWS = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server(Settings(load_pipeline=False)) as live:
        yield live


def receive(ws, timeout: float = 30) -> dict:  # noqa: ANN001 - websockets' sync client
    return json.loads(ws.recv(timeout=timeout))


def push(server: LiveServer, table: str, **body) -> dict:  # noqa: ANN003
    body = {"rows": WINNING_ROWS, "indicator": "R5", **body}
    response = httpx.put(f"{server.url}/api/v1/tables/{table}", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def test_first_message_is_the_empty_state(server: LiveServer) -> None:
    with connect(f"{server.ws_url}/api/v1/overlay/fresh") as ws:
        first = receive(ws)
    assert first == {
        "type": "state",
        "table": "fresh",
        "version": 0,
        "updated_at": None,
        "state": None,
    }


def test_pushed_state_reaches_every_page_and_reconnects_get_it(server: LiveServer) -> None:
    with (
        connect(f"{server.ws_url}/api/v1/overlay/home") as one,
        connect(f"{server.ws_url}/api/v1/overlay/home") as two,
    ):
        assert receive(one)["version"] == receive(two)["version"] == 0
        answer = push(server, "home")
        assert answer["version"] == 1
        for ws in (one, two):
            message = receive(ws)
            assert message["version"] == 1
            rows = message["state"]["rows"]
            assert [[[t["tile"] for t in g] for g in row] for row in rows][0][0] == [
                "R1",
                "R2",
                "R3",
            ]
            assert message["state"]["okey"] == "R6"
            assert message["state"]["advice"] is not None
    # A page that (re)connects gets the full latest state at once.
    with connect(f"{server.ws_url}/api/v1/overlay/home") as again:
        message = receive(again)
    assert message["version"] == 1 and message["state"]["rows"] == answer["state"]["rows"]


def test_declared_push_carries_the_verdict(server: LiveServer) -> None:
    rows = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12", "B7 B8 B9 R6"]]
    answer = push(server, "declared", rows=rows, declare=True, discard="Y13")
    verdict = answer["state"]["verdict"]
    assert verdict is not None
    with connect(f"{server.ws_url}/api/v1/overlay/declared") as ws:
        assert receive(ws)["state"]["verdict"] == verdict


def test_a_slow_page_skips_to_the_newest_state(server: LiveServer) -> None:
    with connect(f"{server.ws_url}/api/v1/overlay/busy") as ws:
        assert receive(ws)["version"] == 0
        hands = ["Y13", "K13", "B13", "R13", "Y12"]
        for last in hands:
            push(
                server,
                "busy",
                rows=[["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", last]],
            )
        versions = []
        while not versions or versions[-1] < len(hands):
            message = receive(ws)
            versions.append(message["version"])
        assert versions == sorted(versions)  # never an older state after a newer one
        assert message["state"]["rows"][1][1][0]["tile"] == "Y12"


def test_other_tables_are_not_disturbed(server: LiveServer) -> None:
    with connect(f"{server.ws_url}/api/v1/overlay/quiet") as ws:
        assert receive(ws)["version"] == 0
        push(server, "noisy")
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.5)


def test_bad_table_name_is_refused(server: LiveServer) -> None:
    # Closed before the handshake completes: the client sees the HTTP 403 of a refused upgrade.
    with pytest.raises(InvalidStatus) as refused:
        connect(f"{server.ws_url}/api/v1/overlay/bad%20name")
    assert refused.value.response.status_code == 403


def test_bad_push_is_422_and_changes_nothing(server: LiveServer) -> None:
    push(server, "strict")
    bad = httpx.put(
        f"{server.url}/api/v1/tables/strict",
        json={"rows": [["R1 R1 R1 R1"]], "indicator": "R5"},
        timeout=30,
    )
    assert bad.status_code == 422 and bad.json()["error"]["message"]
    assert httpx.get(f"{server.url}/api/v1/tables/strict").json()["version"] == 1
