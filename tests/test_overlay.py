"""The broadcast overlay in a real Chromium: a waiting state, the indicator and the okey, the
query options (scale, corner, theme, parts), no correction marks, and readable text over a light
and a dark scene.  The screenshots in ``docs/img/overlay_*.png`` come from here
(``ISTAKA_SCREENSHOTS=1``)."""

from __future__ import annotations

from pathlib import Path

import cv2
import httpx
import numpy as np
import pytest
from cdp_browser import chromium, require_chromium, shot
from conftest_service import OWNER_HEADERS, LiveServer, live_server

from service.settings import Settings

pytestmark = pytest.mark.slow

ROWS = [["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12"], ["B7 B8 B9 R6", "Y13"]]
# Scenes behind the transparent overlay: a dark felt table and a bright, white-lit one.
SCENES = {
    "dark": {"r": 24, "g": 64, "b": 44, "a": 1},
    "light": {"r": 238, "g": 236, "b": 228, "a": 1},
}
VISIBLE = "(id) => getComputedStyle(document.getElementById(id)).display !== 'none'"


@pytest.fixture(scope="module", autouse=True)
def browser_present() -> None:
    require_chromium()


def push(server: LiveServer, table: str) -> None:
    response = httpx.put(
        f"{server.url}/api/v1/tables/{table}",
        json={"rows": ROWS, "indicator": "R5", "rules": "classic", "declare": True},
        headers=OWNER_HEADERS,  # the server owner creates the table
        timeout=30,
    )
    assert response.status_code == 200, response.text


def text_contrast(png: Path, box: dict[str, float]) -> float:
    """Spread of brightness inside a text's box (95th - 5th percentile): ink against what is
    right around it; low when the letters melt into the scene."""
    image = cv2.imread(str(png), cv2.IMREAD_GRAYSCALE)
    x, y, w, h = (int(round(box[k])) for k in ("x", "y", "width", "height"))
    crop = image[max(0, y) : y + h, max(0, x) : x + w].astype(float)
    return float(np.percentile(crop, 95) - np.percentile(crop, 5))


@pytest.mark.parametrize("theme", ["panel", "clear"])
def test_overlay_reads_over_light_and_dark_scenes(theme: str, tmp_path: Path) -> None:
    with (
        live_server(Settings(load_pipeline=False)) as server,
        chromium(width=1280, height=720) as (page, _),
    ):
        table = f"stage-{theme}"
        page.navigate(f"{server.url}/overlay?table={table}&theme={theme}&corner=bl&scale=1.25")
        # A table with no reading yet says so instead of showing an empty page.
        page.wait_for("document.body && document.body.dataset.version === '0'")
        waiting = page.evaluate("document.getElementById('waiting').textContent")
        assert waiting.startswith(f"Waiting for table “{table}”")
        push(server, table)
        page.wait_for("document.body.dataset.version === '1'")
        assert page.evaluate("document.getElementById('waiting').textContent") == ""
        tile = "(id) => document.querySelector(`#${id} .tile`).dataset.tile"
        assert page.evaluate(f"({tile})('indicator-tile')") == "R5"
        assert page.evaluate(f"({tile})('okey-tile')") == "R6"
        assert page.evaluate("document.getElementById('indicator-source').dataset.source") == (
            "typed"
        )
        assert page.evaluate("document.getElementById('advice').textContent") == (
            "Discard Y13: the other 14 tiles win."
        )
        # Bottom-left corner, 1.25 times the base size.
        panel = page.evaluate(
            "(() => { const r = document.getElementById('panel').getBoundingClientRect();"
            " return {left: r.left, bottom: r.bottom,"
            " size: getComputedStyle(document.getElementById('panel')).fontSize}; })()"
        )
        assert panel["left"] < 40 and 720 - panel["bottom"] < 40 and panel["size"] == "22.5px"
        advice_box = page.evaluate(
            "JSON.parse(JSON.stringify(document.getElementById('advice').getBoundingClientRect()))"
        )
        for scene, colour in SCENES.items():
            page.send("Emulation.setDefaultBackgroundColorOverride", {"color": colour})
            path = shot(f"overlay_{theme}_{scene}.png", tmp_path)
            page.screenshot(path)
            assert text_contrast(path, advice_box) > 120, (theme, scene)


def test_overlay_options_pick_parts_and_show_no_correction_marks() -> None:
    with (
        live_server(Settings(load_pipeline=False)) as server,
        chromium(width=1280, height=720) as (page, _),
    ):
        push(server, "parts")
        page.navigate(f"{server.url}/overlay?table=parts&parts=rack,indicator&corner=tr")
        page.wait_for("document.body && document.body.dataset.version === '1'")
        shown = {
            part: page.evaluate(f"({VISIBLE})('{part}')")
            for part in ("hand", "meta", "advice", "verdict")
        }
        assert shown == {"hand": True, "meta": True, "advice": False, "verdict": False}
        right = page.evaluate("document.getElementById('panel').getBoundingClientRect().right")
        assert 1280 - right < 40
        # The overlay draws tiles plain: a correction or an uncertain reading is the player's
        # business, not the audience's.
        assert (
            page.evaluate(
                "(() => { const e = Istaka.face({tile: 'R1', corrected: true, flagged: true},"
                " {plain: true}); return e.className; })()"
            )
            == "tile R"
        )
        assert page.evaluate("document.querySelectorAll('#picker, .corrected').length") == 0
