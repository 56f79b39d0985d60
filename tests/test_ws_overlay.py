"""``WS /api/v1/overlay/{table}`` and the table endpoints against a real uvicorn server: the full
state on every (re)connect, every new state pushed, a slow page skips to the newest, tables have
owners, idle overlay sockets are closed and their number is capped."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from conftest_service import OWNER_HEADERS, LiveServer, live_server
from websockets.exceptions import ConnectionClosed, InvalidStatus
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


TOKENS: dict[tuple[int, str], str] = {}  # (port, table) -> owner token, from the creating PUT


def push(server: LiveServer, table: str, **body) -> dict:  # noqa: ANN003
    """PUT a hand as the table's owner: the first PUT (with the server owner's token) creates the
    table and keeps the table's token."""
    body = {"rows": WINNING_ROWS, "indicator": "R5", **body}
    token = TOKENS.get((server.port, table))
    headers = {"authorization": f"Bearer {token}"} if token else OWNER_HEADERS
    response = httpx.put(
        f"{server.url}/api/v1/tables/{table}", json=body, headers=headers, timeout=30
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    if token is None:
        assert answer["token"], answer
        TOKENS[(server.port, table)] = answer["token"]
    else:
        assert answer["token"] is None  # the token is given once, when the table is created
    return answer


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


def test_a_table_name_with_a_trailing_newline_is_refused_everywhere(server: LiveServer) -> None:
    # The socket took "finals\n" (re.match's "$" allows a final newline) while REST refused it.
    assert httpx.get(f"{server.url}/api/v1/tables/finals%0A").status_code == 422
    with pytest.raises(InvalidStatus) as refused:
        connect(f"{server.ws_url}/api/v1/overlay/finals%0A")
    assert refused.value.response.status_code == 403


def test_silent_overlay_sockets_are_closed_and_pinging_ones_kept() -> None:
    # A socket that sends nothing was held until overlay_idle_seconds (an hour) passed.
    with (
        live_server(Settings(load_pipeline=False, ws_silent_seconds=1.0)) as small,
        connect(f"{small.ws_url}/api/v1/overlay/quiet") as silent,
        connect(f"{small.ws_url}/api/v1/overlay/quiet") as pinging,
    ):
        assert receive(silent)["version"] == receive(pinging)["version"] == 0
        closed = None
        while closed is None:
            pinging.send('{"type": "ping"}')  # as the overlay page does every 20 s
            try:
                silent.recv(timeout=0.3)
            except TimeoutError:
                continue
            except ConnectionClosed as exc:
                closed = exc
        assert closed.rcvd is not None
        assert (closed.rcvd.code, closed.rcvd.reason) == (4408, "silent_timeout")
        pinging.send('{"type": "ping"}')
        assert push(small, "quiet")["version"] == 1
        assert receive(pinging)["version"] == 1


def test_bad_push_is_422_and_changes_nothing(server: LiveServer) -> None:
    push(server, "strict")
    bad = httpx.put(
        f"{server.url}/api/v1/tables/strict",
        json={"rows": [["R1 R1 R1 R1"]], "indicator": "R5"},
        headers={"authorization": f"Bearer {TOKENS[(server.port, 'strict')]}"},
        timeout=30,
    )
    assert bad.status_code == 422 and bad.json()["error"]["message"]
    assert httpx.get(f"{server.url}/api/v1/tables/strict").json()["version"] == 1


def test_writes_need_the_owner_token(server: LiveServer) -> None:
    # Before, anyone could overwrite any table.
    push(server, "finals")
    url = f"{server.url}/api/v1/tables/finals"
    body = {"rows": [["K1 K2 K3"]], "indicator": "R5"}
    missing = httpx.put(url, json=body, timeout=30)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "token_required"
    free = httpx.put(f"{server.url}/api/v1/tables/unclaimed", json=body, timeout=30)
    assert free.status_code == 401  # a stranger cannot claim a free name either
    assert httpx.get(f"{server.url}/api/v1/tables/unclaimed").json()["version"] == 0
    wrong = httpx.put(url, json=body, headers={"authorization": "Bearer nope"}, timeout=30)
    assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "wrong_token"
    assert httpx.get(url).json()["version"] == 1  # unchanged
    # Reading needs only the name.
    assert httpx.get(url).json()["state"]["okey"] == "R6"


def test_post_creates_a_table_with_its_links(server: LiveServer) -> None:
    url = f"{server.url}/api/v1/tables"
    refused = httpx.post(url, json={"table": "club-7"}, timeout=30)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "owner_token_required"
    made = httpx.post(url, json={"table": "club-7"}, headers=OWNER_HEADERS, timeout=30)
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["table"] == "club-7" and body["token"]
    assert body["camera_url"] == f"/camera?table=club-7&token={body['token']}"
    assert body["overlay_url"] == "/overlay?table=club-7"
    again = httpx.post(url, json={"table": "club-7"}, headers=OWNER_HEADERS, timeout=30)
    assert again.status_code == 409 and again.json()["error"]["code"] == "table_exists"
    TOKENS[(server.port, "club-7")] = body["token"]
    assert push(server, "club-7")["version"] == 1
    anonymous = httpx.post(url, json={}, headers=OWNER_HEADERS, timeout=30).json()
    assert anonymous["table"].startswith("table-")


def test_a_private_table_needs_its_viewer_key(server: LiveServer) -> None:
    made = httpx.post(
        f"{server.url}/api/v1/tables",
        json={"table": "secret", "viewer_key": True},
        headers=OWNER_HEADERS,
        timeout=30,
    ).json()
    key = made["viewer_key"]
    assert made["overlay_url"] == f"/overlay?table=secret&key={key}"
    refused = httpx.get(f"{server.url}/api/v1/tables/secret")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "viewer_key_required"
    assert httpx.get(f"{server.url}/api/v1/tables/secret", params={"key": key}).status_code == 200
    with connect(f"{server.ws_url}/api/v1/overlay/secret") as ws:
        assert receive(ws)["code"] == "viewer_key_required"
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=30)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    with connect(f"{server.ws_url}/api/v1/overlay/secret?key={key}") as ws:
        assert receive(ws)["version"] == 0


def test_idle_overlay_sockets_are_closed_and_capped() -> None:
    # Idle sockets were kept for ever, and their number had no bound.
    settings = Settings(load_pipeline=False, overlay_idle_seconds=0.5, max_overlays=2)
    with live_server(settings) as small:
        with (
            connect(f"{small.ws_url}/api/v1/overlay/a") as one,
            connect(f"{small.ws_url}/api/v1/overlay/b") as two,
        ):
            assert receive(one)["version"] == receive(two)["version"] == 0
            with connect(f"{small.ws_url}/api/v1/overlay/c") as third:
                error = receive(third)
                assert error["code"] == "busy" and "max_overlays" in error["message"]
                with pytest.raises(ConnectionClosed) as refused:
                    third.recv(timeout=30)
            assert refused.value.rcvd is not None and refused.value.rcvd.code == 1013
            with pytest.raises(ConnectionClosed) as idle:
                one.recv(timeout=30)
            assert idle.value.rcvd is not None
            assert (idle.value.rcvd.code, idle.value.rcvd.reason) == (4408, "idle_timeout")
        assert httpx.get(f"{small.url}/api/v1/health").json()["status"] == "ok"
