"""Real headless Chromium against a real server: ``/camera`` with Chromium's fake camera playing a
rendered rack video, and ``/overlay`` following pushed states and reconnecting by itself.  The
screenshots in ``docs/img/`` come from here."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import httpx
import pytest
from cdp_browser import chromium, require_chromium
from conftest_service import REPO, LiveServer, live_server, require_model

from service.settings import Settings

pytestmark = pytest.mark.slow

DOCS_IMG = REPO / "docs" / "img"
ROWS = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]
# Dark felt behind the transparent overlay in the screenshot, as a stream scene would be.
FELT = {"r": 24, "g": 64, "b": 44, "a": 1}

VIDEO_SEED, VIDEO_FRAMES = 7, 30
HAND_TILES = "[...document.querySelectorAll('#hand .tile')].map(e => e.dataset.tile)"


@pytest.fixture(scope="module", autouse=True)
def browser_present() -> None:
    require_chromium()


def shot(name: str, tmp_path: Path) -> Path:
    """Where a screenshot goes: docs/img with ISTAKA_SCREENSHOTS=1 (to refresh the docs), else a
    temporary folder (so an ordinary test run leaves the repository untouched)."""
    folder = DOCS_IMG if os.environ.get("ISTAKA_SCREENSHOTS") == "1" else tmp_path
    return folder / name


def push(server: LiveServer, table: str, rows: list[list[str]] = ROWS) -> dict:
    response = httpx.put(
        f"{server.url}/api/v1/tables/{table}",
        json={"rows": rows, "indicator": "R5", "rules": "classic", "declare": True},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()


def tiles_of(rows: list[list[str]]) -> list[str]:
    return [tile for row in rows for group in row for tile in group.split()]


def test_overlay_updates_when_a_state_is_pushed(tmp_path: Path) -> None:
    with (
        live_server(Settings(load_pipeline=False)) as first,
        chromium(width=900, height=330) as (
            page,
            _,
        ),
    ):
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
    with chromium(width=900, height=330) as (page, _):
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


@pytest.fixture(scope="module")
def rack_video(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """A rendered rack video as .y4m, the file Chromium's fake camera plays (in a loop)."""
    from vision.synth.video import render_video, write_y4m

    frames, truths = render_video(VIDEO_SEED, VIDEO_FRAMES)
    path = tmp_path_factory.mktemp("video") / "rack.y4m"
    write_y4m(path, frames, 15)
    return path, truths


def test_camera_shows_the_recognised_tiles_and_takes_a_correction(
    rack_video: tuple[Path, list[dict]], tmp_path: Path
) -> None:
    require_model()
    video, truths = rack_video
    indicator = truths[0]["indicator"]
    truth = Counter(t["tile"] for t in truths[0]["tiles"] if t["on_rack"] and t["labelled"])
    with (
        live_server(Settings()) as server,
        chromium(video=video, width=1000, height=900) as (
            page,
            _,
        ),
    ):
        assert httpx.get(f"{server.url}/api/v1/health").json()["recognition"]
        page.navigate(f"{server.url}/camera?indicator={indicator}")
        page.wait_for("Number(document.body.dataset.frames) >= 4", timeout=120)
        shown = page.evaluate(HAND_TILES)
        # The page draws the hand the server read from the fake camera, tile for tile ...
        assert " ".join(shown) == page.evaluate("document.body.dataset.hand")
        assert page.evaluate("document.querySelectorAll('#hand .tile[data-id]').length") == len(
            shown
        )
        # ... and that hand is the rendered rack's: its tiles are found (accuracy figures are in
        # the model card, not here).
        assert len(shown) >= sum(truth.values()) / 2, (shown, truth)
        page.screenshot(shot("camera.png", tmp_path))
        # Tap a tile, pick another reading: the page shows that tile as corrected.
        first = page.evaluate(
            "(() => { const e = document.querySelector('#hand .tile');"
            " return {id: e.dataset.id, tile: e.dataset.tile}; })()"
        )
        new = "FJ" if first["tile"] != "FJ" else "R1"
        page.evaluate(f"document.querySelector('#hand .tile[data-id=\"{first['id']}\"]').click()")
        page.wait_for("document.getElementById('picker').classList.contains('open')")
        page.evaluate(
            "[...document.querySelectorAll('#picker-tiles .tile')]"
            f".find(e => e.dataset.tile === '{new}').click()"
        )
        page.wait_for(
            f"(() => {{ const e = document.querySelector('#hand .tile[data-id=\"{first['id']}\"]');"
            f" return e && e.classList.contains('corrected') && e.dataset.tile === '{new}'; }})()",
            timeout=60,
        )
