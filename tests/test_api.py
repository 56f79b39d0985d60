"""The REST API against a real uvicorn server: the engine endpoints, and ``/scan`` with the
shipped model on real photos (the committed real validation set and the README's example)."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from conftest_service import REPO, engine_client, live_server, require_model

import okey
from okey import Rules, Tile, parse_tiles
from service.settings import Settings

pytestmark = pytest.mark.slow

FIFTEEN = "R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6 Y13"
EXAMPLE = REPO / "examples" / "rack_real.jpg"
REAL_VAL = REPO / "datasets" / "real_val"


@pytest.fixture(scope="module")
def engine() -> Iterator[httpx.Client]:
    with engine_client() as http:
        yield http


def test_hand_of_15_ranks_every_discard(engine: httpx.Client) -> None:
    body = engine.post("/api/v1/hand", json={"tiles": FIFTEEN, "indicator": "R5"}).json()
    assert body["okey"] == "R6"
    assert body["distance_to_win"] == 0
    assert body["arrangement"] is None
    advice = body["advice"]
    assert advice["kind"] == "discard"
    assert advice["options"][0]["discard"] == "Y13"
    assert advice["options"][0]["distance"] == 0
    assert {o["discard"] for o in advice["options"]} == set(FIFTEEN.split())
    # The same as the engine says in-process.
    expected = okey.advise(parse_tiles(FIFTEEN), Tile.parse("R5"), Rules.classic()).to_dict()
    assert advice == expected


def test_hand_of_14_gives_the_win_check_and_waits(engine: httpx.Client) -> None:
    tiles = FIFTEEN.split()[:-1]
    body = engine.post(
        "/api/v1/hand", json={"tiles": tiles, "indicator": "R5", "seen": "R4 R4"}
    ).json()
    assert body["arrangement"]["winning"] is True
    assert body["advice"]["kind"] == "waits"
    waits = {w["tile"]: w["unseen"] for w in body["advice"]["waits"]}
    assert "R4" not in waits or waits["R4"] == 0  # both R4 seen: none left to draw


def test_hand_rules_preset_and_overrides(engine: httpx.Client) -> None:
    pairs = "R1 R1 Y2 Y2 B3 B3 K4 K4 R9 R9 Y11 Y11 K13 K13"
    classic = engine.post("/api/v1/hand", json={"tiles": pairs, "indicator": "B12"}).json()
    assert classic["arrangement"]["winning"] is True
    assert classic["arrangement"]["kind"] == "pairs"
    no_pairs = engine.post(
        "/api/v1/hand",
        json={
            "tiles": pairs,
            "indicator": "B12",
            "rules": {"name": "classic", "seven_pairs": False},
        },
    ).json()
    assert no_pairs["arrangement"]["winning"] is False
    assert no_pairs["distance_to_win"] > 0


def test_hand_errors_name_the_problem(engine: httpx.Client) -> None:
    cases = [
        ({"tiles": "R1 R2 Q7", "indicator": "R5"}, "Q7"),
        ({"tiles": "R1 R2 R3", "indicator": "R5"}, "got 3"),
        ({"tiles": FIFTEEN.replace("R2 R3", "R1 R1"), "indicator": "R5"}, "R1"),
        ({"tiles": FIFTEEN, "indicator": "FJ"}, "indicator"),
        ({"tiles": FIFTEEN, "indicator": "R5", "rules": "chess"}, "chess"),
        ({"tiles": FIFTEEN, "indicator": "R5", "rules": {"hand_size": 0}}, "hand_size"),
    ]
    for body, needle in cases:
        response = engine.post("/api/v1/hand", json=body)
        assert response.status_code == 422, (body, response.text)
        assert needle in response.json()["error"]["message"], (needle, response.text)


@pytest.mark.parametrize("written", ["R-5", "R 5", "R\u0665", "r05", "red 5", "R5\n"])
def test_tiles_are_read_only_in_the_ascii_notation(engine: httpx.Client, written: str) -> None:
    # "R-5", "R 5" and "R" with an Arabic-Indic five were all taken as R5.
    tiles = FIFTEEN.split()
    tiles[5] = written
    for body in ({"tiles": tiles, "indicator": "K7"}, {"tiles": FIFTEEN, "indicator": written}):
        response = engine.post("/api/v1/hand", json=body)
        assert response.status_code == 422, (written, response.text)
        assert repr(written) in response.json()["error"]["message"]
    groups = {"groups": [["R1", "R2", written]], "indicator": "K7"}
    assert engine.post("/api/v1/referee", json=groups).status_code == 422
    assert (
        engine.post("/api/v1/hand", json={"tiles": FIFTEEN, "indicator": "r5"}).status_code == 200
    )


def test_referee_valid_and_invalid(engine: httpx.Client) -> None:
    valid = engine.post(
        "/api/v1/referee",
        json={
            "groups": ["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12", "B7 B8 B9 R6"],
            "indicator": "R5",
            "discard": "Y13",
        },
    ).json()["verdict"]
    assert valid["valid"] is True and valid["finish"] == "normal"
    assert (
        valid["points"]
        == okey.referee(
            [parse_tiles(g) for g in ["R1 R2 R3", "Y5 B5 K5", "K9 K10 K11 K12", "B7 B8 B9 R6"]],
            Tile.parse("R5"),
            Rules.classic(),
            discard=Tile.parse("Y13"),
        ).points
    )
    invalid = engine.post(
        "/api/v1/referee",
        json={"groups": [["K12", "Y12", "K12"], "R1 R2 R3"], "indicator": "B4"},
    ).json()["verdict"]
    assert invalid["valid"] is False
    assert invalid["first_bad_group"] == 1
    assert "repeat a colour" in invalid["reason"]


def test_referee_errors(engine: httpx.Client) -> None:
    empty = engine.post("/api/v1/referee", json={"groups": [], "indicator": "R5"})
    assert empty.status_code == 422 and "groups" in empty.json()["error"]["message"]
    bad = engine.post("/api/v1/referee", json={"groups": ["R1 R2 X3"], "indicator": "R5"})
    assert bad.status_code == 422 and "groups.0" in bad.json()["error"]["message"]


# --- /scan with the shipped model -----------------------------------------------------------


@pytest.fixture(scope="module")
def scanner() -> Iterator[tuple[httpx.Client, object]]:
    require_model()
    from service.settings import default_pipeline

    with (
        live_server(Settings()) as live,
        httpx.Client(base_url=live.url, timeout=120) as http,
    ):
        yield http, default_pipeline()


def val_photos(n: int) -> list[Path]:
    return sorted((REAL_VAL / "images").glob("*.jpg"))[:n]


def label_tiles(photo: Path) -> list[str]:
    label = REAL_VAL / "labels" / f"{photo.stem}.txt"
    return [str(Tile(int(line.split()[0]))) for line in label.read_text().splitlines() if line]


def expected_answer(pipeline: object, photo: Path) -> dict | str:
    """What the pipeline reads in-process: its answer, or the error code the API should give."""
    import cv2

    from vision.pipeline import NoRackError, NothingFoundError

    try:
        answer = pipeline.scan(cv2.imread(str(photo))).to_dict()  # type: ignore[attr-defined]
    except NothingFoundError as exc:
        return "no_rack" if isinstance(exc, NoRackError) else "no_tiles"
    # The API always spells out "flagged", "corrected" and "quad"; the pipeline leaves out false
    # ones and a tile with no outline of its tier's
    for tile in [t for row in answer["rows"] for g in row for t in g] + answer["table"]:
        tile.setdefault("flagged", False)
        tile.setdefault("corrected", False)
        tile.setdefault("quad", None)
    return answer


def assert_same_reading(body: dict, expected: dict) -> None:
    for key in ("rows", "hand", "table", "flagged", "warnings", "indicator", "image_size"):
        assert body[key] == expected[key], key


def test_scan_answers_what_the_pipeline_reads(scanner: tuple[httpx.Client, object]) -> None:
    http, pipeline = scanner
    assert http.get("/api/v1/health").json()["recognition"] is True
    data = EXAMPLE.read_bytes()
    expected = expected_answer(pipeline, EXAMPLE)
    assert isinstance(expected, dict), expected
    as_form = http.post("/api/v1/scan", files={"image": ("rack.jpg", data, "image/jpeg")})
    assert as_form.status_code == 200, as_form.text
    raw = http.post("/api/v1/scan", content=data, headers={"content-type": "image/jpeg"})
    assert raw.status_code == 200, raw.text
    assert_same_reading(as_form.json(), expected)
    assert_same_reading(raw.json(), expected)
    tiles = [t for row in raw.json()["rows"] for g in row for t in g]
    assert tiles and all(len(t["box"]) == 4 and 0 <= t["confidence"] <= 1 for t in tiles)
    assert raw.json()["image_size"] == [640, 640]
    # the example rack is read tier by tier, and the answer says so with each tier's outline
    assert raw.json()["reading"] == "tiers"
    assert len(raw.json()["tiers"]) == len(raw.json()["rows"]) == 2
    assert all(len(quad) == 4 and all(len(p) == 2 for p in quad) for quad in raw.json()["tiers"])
    # and each tile the tiers read with its outline along its tier (what the camera page draws)
    outlined = [t["quad"] for t in tiles if t.get("quad") is not None]
    assert outlined and all(len(q) == 4 and all(len(p) == 2 for p in q) for q in outlined)


def test_scan_of_real_photos_matches_the_pipeline(scanner: tuple[httpx.Client, object]) -> None:
    http, pipeline = scanner
    photos = val_photos(8)
    found = 0
    for photo in photos:
        expected = expected_answer(pipeline, photo)
        response = http.post("/api/v1/scan", content=photo.read_bytes())
        if isinstance(expected, str):  # no rack in this photo: the API says so by name
            assert response.status_code == 422, response.text
            assert response.json()["error"]["code"] == expected
            continue
        assert response.status_code == 200, response.text
        assert_same_reading(response.json(), expected)
        found += len(response.json()["hand"]) + len(response.json()["table"])
    truth = sum(len(label_tiles(photo)) for photo in photos)
    # Not an accuracy figure (the model card has those): the photos' tiles are being found.
    assert found >= truth / 2, (found, truth)


def test_scan_options_annotate_indicator_and_corrections(
    scanner: tuple[httpx.Client, object],
) -> None:
    http, _ = scanner
    data = EXAMPLE.read_bytes()
    body = http.post(
        "/api/v1/scan", params={"annotate": "true", "indicator": "K4"}, content=data
    ).json()
    assert body["indicator"] == "K4" and body["indicator_source"] == "typed"
    assert body["okey"] == "K5"
    jpeg = base64.b64decode(body["annotated_jpeg"])
    assert jpeg.startswith(b"\xff\xd8\xff")
    first = body["rows"][0][0][0]
    new = "FJ" if first["tile"] != "FJ" else "R1"
    fixed = http.post(
        "/api/v1/scan", params={"corrections": f'{{"{first["id"]}": "{new}"}}'}, content=data
    ).json()
    tile = next(t for row in fixed["rows"] for g in row for t in g if t["id"] == first["id"])
    assert tile["tile"] == new and tile["corrected"] is True


def test_scan_of_a_blank_image_says_no_tiles(scanner: tuple[httpx.Client, object]) -> None:
    import cv2
    import numpy as np

    http, _ = scanner
    ok, png = cv2.imencode(".png", np.full((240, 320, 3), 200, np.uint8))
    assert ok
    response = http.post("/api/v1/scan", content=png.tobytes())
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "no_tiles"


def test_a_burst_of_scans_is_shed_with_503_not_queued() -> None:
    require_model()
    data = EXAMPLE.read_bytes()
    with live_server(Settings(max_pending_scans=1)) as live:
        barrier = threading.Barrier(10)

        def scan(_: int) -> httpx.Response:
            with httpx.Client(base_url=live.url, timeout=120) as http:
                barrier.wait()
                return http.post("/api/v1/scan", content=data)

        with ThreadPoolExecutor(10) as pool:
            answers = list(pool.map(scan, range(10)))
        statuses = sorted(r.status_code for r in answers)
        assert statuses[0] == 200  # the first one in is read
        shed = [r for r in answers if r.status_code == 503]
        assert shed, statuses  # ten at once, one allowed to wait: the rest are told to retry
        assert all(r.json()["error"]["code"] == "busy" for r in shed)
        assert all(r.headers["retry-after"] == "1" for r in shed)
        assert set(statuses) <= {200, 503}
        assert httpx.get(f"{live.url}/api/v1/health").json()["pending_scans"] == 0
