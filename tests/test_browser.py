"""Real headless Chromium against a real server: ``/camera`` with Chromium's fake camera playing a
rendered rack video, and ``/overlay`` following pushed states and reconnecting by itself.  The
screenshots in ``docs/img/`` come from here."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from cdp_browser import chromium, correct_first_tile, require_chromium, shot
from conftest_service import (
    OWNER,
    OWNER_HEADERS,
    REPO,
    LiveServer,
    live_server,
    redis_server,
    require_model,
    restart_redis,
)

from service.settings import Settings

pytestmark = pytest.mark.slow

DOCS_IMG = REPO / "docs" / "img"
ROWS = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]
# Dark felt behind the transparent overlay in the screenshot, as a stream scene would be.
FELT = {"r": 24, "g": 64, "b": 44, "a": 1}

EXAMPLE_PHOTO = REPO / "examples" / "rack_real.jpg"
EXAMPLE_TRUTH = REPO / "examples" / "rack_real.txt"
VIDEO_SEED, VIDEO_FRAMES = 7, 30  # frames of the still video
HAND_TILES = "[...document.querySelectorAll('#hand .tile')].map(e => e.dataset.tile)"


@pytest.fixture(scope="module", autouse=True)
def browser_present() -> None:
    require_chromium()


def push(server: LiveServer, table: str, rows: list[list[str]] = ROWS) -> dict:
    """A hand set on the table as the server owner (which creates it if need be)."""
    response = httpx.put(
        f"{server.url}/api/v1/tables/{table}",
        json={"rows": rows, "indicator": "R5", "rules": "classic", "declare": True},
        headers=OWNER_HEADERS,
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()


def tiles_of(rows: list[list[str]]) -> list[str]:
    return [tile for row in rows for group in row for tile in group.split()]


def test_overlay_updates_when_a_state_is_pushed(tmp_path: Path) -> None:
    with (
        live_server(Settings(load_pipeline=False)) as first,
        chromium(width=900, height=440) as (
            page,
            _,
        ),
    ):
        page.navigate(f"{first.url}/overlay")  # no table named: it says so, not "default"
        page.wait_for("document.getElementById('waiting').textContent.includes('?table=NAME')")
        assert page.evaluate("document.getElementById('status').textContent") == "no table"
        page.navigate(f"{first.url}/overlay?table=stage")
        page.wait_for("document.body.dataset.version === '0'")
        assert page.evaluate(HAND_TILES) == []
        push(first, "stage")
        page.wait_for("document.body.dataset.version === '1'")
        assert page.evaluate(HAND_TILES) == tiles_of(ROWS)
        assert page.evaluate("document.querySelector('#hand .tile.okey').dataset.tile") == "R6"
        assert page.evaluate("document.getElementById('advice').textContent") == (
            "Discard Y13: the other 14 tiles win."
        )
        assert page.evaluate("document.querySelector('#hand .tile.discard').dataset.tile") == "Y13"
        verdict = page.evaluate("document.getElementById('verdict').textContent")
        assert verdict.startswith("Valid"), verdict
        page.send("Emulation.setDefaultBackgroundColorOverride", {"color": FELT})
        page.screenshot(shot("overlay.png", tmp_path))
        assert shot("overlay.png", tmp_path).stat().st_size > 1000


def test_overlay_page_reconnects_to_a_restarted_server() -> None:
    with chromium(width=900, height=440) as (page, _):
        with live_server(Settings(load_pipeline=False)) as first:
            port = first.port
            page.navigate(f"{first.url}/overlay?table=again")
            page.wait_for("document.body.dataset.version === '0'")
        page.wait_for("document.getElementById('status').textContent.includes('reconnecting')")
        with live_server(Settings(load_pipeline=False), port=port) as second:
            rows = [["K1 K2 K3", "R7 Y7 B7"], ["Y1 Y2 Y3 Y4", "B10 B11 B12", "FJ"]]
            push(second, "again", rows)
            expected = json.dumps(tiles_of(rows), separators=(",", ":"))
            page.wait_for(f"JSON.stringify({HAND_TILES}) === '{expected}'")
            assert page.evaluate("document.getElementById('status').textContent") == "live"


def test_overlay_page_says_the_table_is_gone_when_the_store_lost_it() -> None:
    # Pages kept showing the hand of a table an empty, restarted Redis no longer had.
    with (
        redis_server(persistent=False) as url,
        live_server(Settings(load_pipeline=False, store_url=url, store_ephemeral=True)) as live,
        chromium(width=900, height=440) as (page, _),
    ):
        push(live, "lost")
        page.navigate(f"{live.url}/overlay?table=lost")
        page.wait_for("document.body.dataset.version === '1'")
        restarted = restart_redis(int(url.rsplit(":", 1)[1].split("/")[0]), persistent=False)
        try:
            page.wait_for("document.body.dataset.gone === 'true'", 60)
            assert page.evaluate(HAND_TILES) == []
            waiting = page.evaluate("document.getElementById('waiting').textContent")
            assert waiting.startswith("Table “lost” is gone"), waiting
            push(live, "lost")  # the owner makes it again: the page shows it
            page.wait_for("document.body.dataset.version === '1' && !document.body.dataset.gone")
            assert page.evaluate(HAND_TILES) == tiles_of(ROWS)
        finally:
            restarted.terminate()
            restarted.wait(timeout=30)


@pytest.fixture(scope="module")
def rack_video(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A rendered rack as a .y4m video for Chromium's fake camera: one 1280x720 frame held for
    two seconds (a phone on a stand), so the tile ids stay put for the correction step.  The
    moving, shaking video is what the WebSocket tests use."""
    from vision.training.synth.video import render_video, write_y4m

    frames, truths = render_video(VIDEO_SEED, 1, size=(1280, 720))
    path = tmp_path_factory.mktemp("video") / "rack.y4m"
    write_y4m(path, frames * VIDEO_FRAMES, 15)
    return path, truths[0]


def test_camera_shows_the_recognised_tiles_and_takes_a_correction(
    rack_video: tuple[Path, dict],
) -> None:
    require_model()
    video, truth = rack_video
    with (
        live_server(Settings()) as server,
        chromium(video=video, width=1000, height=900) as (page, _),
    ):
        assert httpx.get(f"{server.url}/api/v1/health").json()["recognition"]
        page.navigate(f"{server.url}/camera?indicator={truth['indicator']}")
        # The fake camera starts, frames stream, and the page shows the tiles the server read.
        page.wait_for("document.querySelectorAll('#hand .tile[data-id]').length >= 2", 120)
        # One evaluation, so no newer state lands between reading the tiles and the hand.
        seen = page.evaluate(
            f"({{shown: {HAND_TILES}, hand: document.body.dataset.hand, "
            "frames: Number(document.body.dataset.frames)})"
        )
        # The page draws the hand the server read, tile for tile, in reading order ...
        assert " ".join(seen["shown"]) == seen["hand"]
        # ... and a box per tile over the video (the overlay canvas is not blank).
        painted = page.evaluate(
            "(() => { const c = document.getElementById('boxes');"
            " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()"
        )
        assert painted > 1000
        # Tap a tile, pick another reading: the page shows that tile as corrected.
        correct_first_tile(page, timeout=60)


def _settings_sent(page) -> dict:
    """The last settings message the page sent on its stream (DevTools' Network events)."""
    frames = [
        json.loads(e["params"]["response"]["payloadData"])
        for e in page.events
        if e.get("method") == "Network.webSocketFrameSent"
        and e["params"]["response"].get("opcode") == 1
    ]
    settings = [f for f in frames if f.get("type") == "settings"]
    assert settings, frames
    return settings[-1]


def _type(page, field: str, value: str | bool) -> None:
    """Fill a field of the camera page as a player would (the change event sends the settings)."""
    prop = "checked" if isinstance(value, bool) else "value"
    page.evaluate(
        f"(() => {{ const e = document.getElementById({json.dumps(field)});"
        f" e.{prop} = {json.dumps(value)}; e.dispatchEvent(new Event('change')); }})()"
    )


def test_camera_sends_the_turn_against_the_table_and_shows_its_errors(
    rack_video: tuple[Path, dict], tmp_path: Path
) -> None:
    """The fields of #turn go in the stream's settings message (next_takes, next_discards;
    101's table_melds, opened), only the game's own; a value the server refuses is shown, its
    field marked, until the settings are sent again."""
    require_model()
    video, truth = rack_video
    visible = "(id) => document.getElementById(id).offsetParent !== null"
    with (
        live_server(Settings()) as server,
        chromium(video=video, width=1000, height=1000) as (page, _),
    ):
        page.send("Network.enable")
        page.navigate(
            f"{server.url}/camera?indicator={truth['indicator']}&offered=Y7&next_takes=B3+B4"
        )
        page.wait_for("Number(document.body.dataset.frames) >= 2", 120)
        sent = _settings_sent(page)
        assert sent["offered"] == "Y7", sent
        assert (sent["next_takes"], sent["next_discards"]) == ("B3 B4", ""), sent
        assert "table_melds" not in sent and "opened" not in sent, sent
        assert page.evaluate(f"({visible})('next-takes') && !({visible})('table-melds')")
        assert page.evaluate("document.getElementById('settings-error').hidden")

        # Typed with a comma: sent as tiles; a token that is no tile: the server's error, shown.
        _type(page, "next-discards", "K1, Q9")
        error = page.wait_for("document.body.dataset.settingsError", 60)
        assert error.startswith("next_discards"), error
        assert _settings_sent(page)["next_discards"] == "K1 Q9"
        assert page.evaluate(
            "document.getElementById('next-discards').getAttribute('aria-invalid') === 'true'"
            " && !document.getElementById('settings-error').hidden"
            " && document.getElementById('settings-error').textContent.startsWith('next_discards')"
        )
        page.screenshot(tmp_path / "camera_turn_error.png")  # (looked at; not in the docs)
        _type(page, "next-discards", "K1 R9")
        page.wait_for("document.getElementById('settings-error').hidden", 10)
        frames = page.evaluate("Number(document.body.dataset.frames)")
        page.wait_for(f"Number(document.body.dataset.frames) >= {frames + 2}", 120)
        assert page.evaluate("!document.body.dataset.settingsError")  # accepted
        assert _settings_sent(page)["next_discards"] == "K1 R9"

        # 101: the table's melds (separated by |) and the opening instead of the right-hand
        # player's tiles; a meld that is none is the server's error, naming it.
        _type(page, "rules", "okey101")
        assert page.evaluate(f"({visible})('table-melds') && !({visible})('next-takes')")
        _type(page, "table-melds", "K4 K5 | R7 Y7 B7")
        error = page.wait_for("document.body.dataset.settingsError", 60)
        assert error.startswith("table_melds[0]"), error
        sent = _settings_sent(page)
        assert sent["table_melds"] == ["K4 K5", "R7 Y7 B7"] and sent["opened"] is False, sent
        assert "next_takes" not in sent and "next_discards" not in sent, sent
        page.screenshot(tmp_path / "camera_turn_101_error.png")
        _type(page, "table-melds", "K4 K5 K6 | R7 Y7 B7")
        _type(page, "opened", True)
        page.wait_for("document.getElementById('settings-error').hidden", 10)
        frames = page.evaluate("Number(document.body.dataset.frames)")
        page.wait_for(f"Number(document.body.dataset.frames) >= {frames + 2}", 120)
        assert page.evaluate("!document.body.dataset.settingsError")
        sent = _settings_sent(page)
        assert sent["table_melds"] == ["K4 K5 K6", "R7 Y7 B7"] and sent["opened"] is True, sent


@pytest.fixture(scope="module")
def real_rack_video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's real rack photo held still in front of Chromium's fake camera."""
    import cv2

    from vision.training.synth.video import write_y4m

    photo = cv2.imread(str(EXAMPLE_PHOTO))
    path = tmp_path_factory.mktemp("video") / "real_rack.y4m"
    write_y4m(path, [photo] * VIDEO_FRAMES, 15)
    return path


def test_camera_reads_a_real_rack(real_rack_video: Path, tmp_path: Path) -> None:
    require_model()
    rows = [line.split() for line in EXAMPLE_TRUTH.read_text().splitlines() if line[:1] != "#"]
    truth = [tile for row in rows for tile in row]
    with (
        live_server(Settings()) as server,
        chromium(video=real_rack_video, width=1000, height=1300) as (page, _),
    ):
        # Opened from the owner's link: the page may create the table its stream feeds.
        page.navigate(f"{server.url}/camera?indicator=K4&table=home&owner={OWNER}")
        page.wait_for(f"document.querySelectorAll('#hand .tile').length >= {len(truth)}", 120)
        page.wait_for("Number(document.body.dataset.frames) >= 5", 120)
        seen = page.evaluate(f"({{shown: {HAND_TILES}, hand: document.body.dataset.hand}})")
        # The photo's tiles, top row then bottom row, as the README's example lists them: the
        # camera page shows exactly the hand on the real rack.
        assert seen["shown"] == truth, seen
        assert " ".join(seen["shown"]) == seen["hand"]
        page.screenshot(shot("camera.png", tmp_path))
        # The stream made table "home" and the page kept its owner token in the address: others
        # cannot write the table without it, and the page reloaded goes on writing it.
        page.wait_for("new URLSearchParams(location.search).has('token')", 60)
        token = page.evaluate("new URLSearchParams(location.search).get('token')")
        foreign = {"rows": ROWS, "indicator": "R5"}
        put = httpx.put(f"{server.url}/api/v1/tables/home", json=foreign, timeout=30)
        assert put.status_code in (401, 403), put.text
        page.navigate(page.evaluate("location.href"))
        page.wait_for("Number(document.body.dataset.frames) >= 3", 120)
        state = httpx.get(f"{server.url}/api/v1/tables/home", timeout=30).json()
        assert state["state"]["source"] == "camera", state
        assert token == page.evaluate("new URLSearchParams(location.search).get('token')")


def test_api_docs_render_with_the_network_off() -> None:
    """/docs and /redoc load their scripts and styles from this server (installed with the
    fastapi-offline package), so they render with every other host unreachable."""
    offline = ("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",)
    with (
        live_server(Settings(load_pipeline=False)) as server,
        chromium(width=1000, height=900, args=offline) as (page, _),
    ):
        page.send("Network.enable")
        page.navigate(f"{server.url}/docs")
        page.wait_for("document.querySelectorAll('.swagger-ui .opblock').length > 5", 60)
        page.navigate(f"{server.url}/redoc")
        page.wait_for("document.body.innerText.includes('Read a rack (or, with scene=table')", 60)
        asked = {
            urlsplit(event["params"]["request"]["url"]).hostname
            for event in page.events
            if event["method"] == "Network.requestWillBeSent"
        }
        assert asked <= {"127.0.0.1", None}, asked  # None: data: and blob: addresses


def test_start_page_links_the_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The start page as ``istaka serve --https`` leaves it: the phone's address and QR code, and
    how to trust the local authority."""
    from service.https import ensure_certificates
    from service.routers.pages import CA_ENV, PHONE_ENV

    monkeypatch.setenv(PHONE_ENV, "https://192.168.1.20:8000/camera")
    monkeypatch.setenv(CA_ENV, str(ensure_certificates(tmp_path / "tls").ca))
    with (
        live_server(Settings(load_pipeline=False)) as server,
        chromium(width=412, height=900, mobile=True) as (page, _),
    ):
        page.navigate(f"{server.url}/")
        page.wait_for("document.querySelectorAll('nav a').length === 5")
        links = page.evaluate("[...document.querySelectorAll('nav a')].map(a => a.textContent)")
        assert links == ["Camera", "Calibrate", "Overlay", "API docs", "API reference"]
        assert OWNER not in page.evaluate("document.body.innerHTML")
        assert page.evaluate("document.querySelectorAll('.qr svg').length") == 1
        assert page.evaluate("document.getElementById('phone-url').href") == (
            "https://192.168.1.20:8000/camera"
        )
        page.screenshot(shot("start_page.png", tmp_path))
        # The owner's own start page (the link istaka serve prints): its links and QR code carry
        # the owner's token; a wrong token gets the ordinary page.
        page.navigate(f"{server.url}/?owner={OWNER}")
        page.wait_for("document.querySelectorAll('nav a').length === 5")
        assert page.evaluate("document.getElementById('phone-url').href") == (
            f"https://192.168.1.20:8000/camera?owner={OWNER}"
        )
        camera = page.evaluate("document.querySelector('nav a').href")
        assert camera.endswith(f"/camera?owner={OWNER}")
        page.navigate(f"{server.url}/?owner=guess")
        page.wait_for("document.querySelectorAll('nav a').length === 5")
        assert "guess" not in page.evaluate("document.querySelector('nav a').href")


def _outline(tile: dict) -> list[list[float]]:
    """A tile's outline as the camera page draws it: its quad, else its box."""
    if tile.get("quad"):
        return tile["quad"]
    x1, y1, x2, y2 = tile["box"]
    return [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]


def _holds(outline: list[list[float]], x: float, y: float) -> bool:
    import cv2
    import numpy as np

    return cv2.pointPolygonTest(np.float32(outline), (float(x), float(y)), False) > 0


def test_a_tap_on_a_front_tile_picks_it_not_the_back_tile_reaching_over_it(
    tmp_path: Path,
) -> None:
    """On a close stand a back tier's tiles show a third to a half of themselves over the tier in
    front, and their boxes (as found) reach down over the tiles in front.  The answer gives each
    tier tile's outline as far as it shows (``quad``); the camera page draws those and a tap
    picks the tile whose outline holds it: a tap on a front tile's face inside a back tile's box
    corrects the front tile (before: the page hit-tested boxes, back tiers first, and opened
    the back tile)."""
    require_model()
    photo = REPO / "tests" / "data" / "stand3_close.jpg"
    with live_server(Settings()) as server, chromium(None, 900, 1100) as (page, _):
        answer = httpx.post(
            f"{server.url}/api/v1/scan",
            content=photo.read_bytes(),
            headers={"content-type": "image/jpeg"},
            timeout=120,
        ).json()
        assert answer["reading"] == "tiers"
        rows = [[t for group in row for t in group] for row in answer["rows"]]
        everyone = [t for row in rows for t in row]
        # a point on a front tile's face that a back tile's box covers, no other outline
        target = None
        for back, front in zip(rows, rows[1:], strict=False):
            for b in back:
                for f in front:
                    x = (max(b["box"][0], f["box"][0]) + min(b["box"][2], f["box"][2])) / 2
                    y = (max(p[1] for p in _outline(b)) + b["box"][3]) / 2
                    inside_box = b["box"][0] < x < b["box"][2] and b["box"][1] < y < b["box"][3]
                    others = [t for t in everyone if t is not f and _holds(_outline(t), x, y)]
                    if inside_box and _holds(_outline(f), x, y) and not others:
                        target = (f, x, y)
        assert target is not None, "no front tile under a back tile's box"
        front_tile, x, y = target
        page.navigate(f"{server.url}/camera")
        page.wait_for("document.body && document.body.dataset.mode", 60)
        document = page.send("DOM.getDocument")["root"]["nodeId"]
        node = page.send("DOM.querySelector", {"nodeId": document, "selector": "#photo"})["nodeId"]
        page.send("DOM.setFileInputFiles", {"nodeId": node, "files": [str(photo)]})
        page.wait_for(f"document.querySelectorAll('#hand .tile').length === {len(everyone)}", 120)
        width, height = answer["image_size"]
        page.evaluate(
            "(() => { const c = document.getElementById('boxes');"
            " const r = c.getBoundingClientRect();"
            f" const x = r.left + {x} * r.width / {width}, y = r.top + {y} * r.height / {height};"
            " c.dispatchEvent(new MouseEvent('click', {clientX: x, clientY: y, bubbles: true}));"
            " })()"
        )
        page.screenshot(shot("camera_close_stand.png", tmp_path))
        assert page.evaluate("document.getElementById('picker').classList.contains('open')")
        assert (
            page.evaluate("document.getElementById('picker-from').textContent")
            == (front_tile["tile"])
        )
