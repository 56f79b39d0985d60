"""Calibration (issue 19): the layout's labels, a refused profile, the consent switch, the data
folder, and the end-to-end path (render a layout of an unseen style, calibrate, scan through the
profile, the service) on a small rendered style."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from okey import Tile
from vision.profiles import (
    DataStore,
    LayoutError,
    Profile,
    ProfileError,
    Reader,
    check_name,
    label_layout,
    profiles_dir,
)
from vision.types import Recognition, TileReading

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _local_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own data folder (profiles, kept tiles)."""
    home = tmp_path / "istaka-home"
    monkeypatch.setenv("ISTAKA_HOME", str(home))
    monkeypatch.delenv("ISTAKA_PROFILES", raising=False)
    monkeypatch.delenv("ISTAKA_DATA", raising=False)
    return home


def reading(tile: Tile, box: tuple[float, float, float, float], sure: float = 0.97) -> TileReading:
    probs = np.full(53, (1 - sure) / 52, np.float32)
    probs[tile.index] = sure
    return TileReading(box=box, tile=tile, confidence=sure, probs=probs)


def layout_recognition(
    swap: tuple[int, int] | None = None,
    misread: dict[int, Tile] | None = None,
    drop: tuple[int, ...] = (),
    order: str = "RYBK",
    angle: float = 0.0,
) -> Recognition:
    """Readings of the layout (rows in ``order``, then two false jokers), as a reader that reads
    every tile right would give them; ``swap``: two flat positions (row * 13 + column) whose
    tiles trade places; ``misread``: flat position -> what the reader reads there instead;
    ``drop``: positions the detector missed; ``angle``: the whole layout turned (degrees)."""
    tiles = []
    grid = [[Tile("RYBK".index(c) * 13 + n) for n in range(13)] for c in order]
    flat = [t for row in grid for t in row]
    if swap:
        a, b = swap
        flat[a], flat[b] = flat[b], flat[a]
    c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))
    for k, tile in enumerate([*flat, Tile(52), Tile(52)]):
        if k in drop:
            continue
        row, col = (k // 13, k % 13) if k < 52 else (4, k - 52)
        x, y = 40 + col * 30.0, 40 + row * 50.0
        x, y = 300 + (x - 300) * c - (y - 150) * s, 150 + (x - 300) * s + (y - 150) * c
        read = (misread or {}).get(k, tile)
        tiles.append(reading(read, (x - 13, y - 19, x + 13, y + 19)))
    return Recognition(tiles=tiles, image_size=(640, 400))


def test_layout_labels_every_tile_from_its_place() -> None:
    layout = label_layout(layout_recognition(order="KBYR", angle=8.0))
    assert layout.rows == ["K", "B", "Y", "R", "FJ"]
    assert len(layout.labelled) == 54
    assert not layout.problems
    assert all(t.label == t.read for t in layout.labelled)


def test_half_the_layout_on_a_rack_is_labelled_too() -> None:
    """Two colours on a rack's two rows, the false jokers in front (an unseen joker picture:
    read as anything, yet the one short row beside the long ones is the jokers')."""
    layout = label_layout(layout_recognition(order="BK", misread={26: Tile.parse("R3")}))
    assert layout.rows == ["B", "K", "FJ"]
    assert [str(t.label) for t in layout.tiles if t.row == 2] == ["FJ", "FJ"]
    assert len(layout.labelled) == 28


def test_layout_keeps_the_layouts_label_for_a_misread_of_the_set() -> None:
    # the shipped reader takes this set's blue 7 for a black 7: the layout says B7, and B7 is
    # what the profile must learn
    layout = label_layout(layout_recognition(misread={2 * 13 + 6: Tile.parse("K7")}))
    tile = next(t for t in layout.tiles if t.row == 2 and t.column == 6)
    assert (str(tile.label), str(tile.read)) == ("B7", "K7")
    assert "B7(K7)" in layout.summary()


def test_layout_names_two_tiles_out_of_place_and_leaves_them_out() -> None:
    layout = label_layout(layout_recognition(swap=(3, 4)))  # R4 and R5 traded places
    left_out = [t for t in layout.tiles if t.label is None]
    assert sorted(str(t.read) for t in left_out) == ["R4", "R5"]
    assert len(layout.labelled) == 52
    text = " ".join(layout.problems)
    assert "row 1, place 4: the layout says R4 but the tile reads R5" in text
    assert "swapped" in text


def test_layout_with_a_missing_tile_shifts_nothing() -> None:
    layout = label_layout(layout_recognition(drop=(13 + 5,)))  # Y6 not found
    assert any("no tile found for Y6" in p for p in layout.problems)
    yellow = [str(t.label) for t in layout.tiles if t.row == 1]
    assert yellow == [f"Y{n}" for n in range(1, 14) if n != 6]


def test_not_the_layout_is_refused_with_a_reason() -> None:
    tiles = [reading(Tile(k % 53), (k * 30.0, 0, k * 30.0 + 26, 38)) for k in range(14)]
    with pytest.raises(LayoutError, match="four colours as four rows"):
        label_layout(Recognition(tiles=tiles, image_size=(640, 100)))


def _features(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    from vision.profiles import INK_DIM, logits_of

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 53, n)
    probs = np.full((n, 53), 0.001)
    probs[np.arange(n), labels] = 0.95
    probs /= probs.sum(axis=1, keepdims=True)
    return np.concatenate([logits_of(probs), rng.normal(size=(n, INK_DIM))], axis=1), labels


def _reader(features: np.ndarray, towards: int | None = None) -> Reader:
    f = features.shape[1]
    bias = np.zeros(53, np.float32)
    if towards is not None:
        bias[towards] = 100.0
    return Reader(
        mean=np.zeros(f, np.float32),
        std=np.ones(f, np.float32),
        scale=1.0,
        w_colour=np.zeros((f, 5), np.float32),
        b_colour=np.zeros(5, np.float32),
        w_number=np.zeros((f, 14), np.float32),
        b_number=np.zeros(14, np.float32),
        w_identity=np.zeros((f, 53), np.float32),
        b_identity=bias,
    )


def test_a_profile_reading_its_own_photos_worse_is_refused() -> None:
    from vision.training.calibrate import check_profile

    features, labels = _features()
    figures = check_profile(_reader(features), features, labels)  # reads as shipped: accepted
    assert figures["profile_identity"] == figures["shipped_identity"] == 1.0
    with pytest.raises(ProfileError, match="profile refused"):
        check_profile(_reader(features, towards=52), features, labels)  # everything a joker


def test_fitting_learns_a_sets_colour(tmp_path: Path) -> None:
    """Blue read as black by the shipped logits, told apart by the ink: the fitted reader
    reads it right, and saves and loads."""
    from vision.profiles import INK_DIM
    from vision.training.calibrate import READER_COLUMNS, READER_L2, fit_reader

    rng = np.random.default_rng(1)
    labels = np.tile(np.arange(52), 3)
    read = np.where(labels // 13 == 2, labels + 13, labels)  # B n read as K n
    probs = np.full((len(labels), 53), 0.001)
    probs[np.arange(len(labels)), read] = 0.9
    probs /= probs.sum(axis=1, keepdims=True)
    ink = rng.normal(0, 0.05, (len(labels), INK_DIM))
    ink[:, 0] += (labels // 13 == 2) * 1.0  # blue ink is bluer
    from vision.profiles import logits_of

    features = np.concatenate([logits_of(probs), ink], axis=1).astype(np.float32)
    reader = fit_reader(features, labels, l2=READER_L2, columns=READER_COLUMNS)
    assert (reader.probs(features).argmax(axis=1) == labels).mean() == 1.0
    folder = Profile("unit", reader, {"classifier": "x"}).save(tmp_path / "unit")
    loaded = Profile.load(folder, check_model=False)
    assert np.allclose(loaded.reader.probs(features), reader.probs(features), atol=1e-5)


def test_a_fine_tuned_profile_reading_its_own_photos_worse_is_refused() -> None:
    from vision.training.calibrate import check_readings

    labels = np.arange(53)
    shipped = np.eye(53)[labels] * 0.9 + 0.1 / 53
    figures = check_readings(shipped, shipped, labels)
    assert figures["profile_identity"] == figures["shipped_identity"] == 1.0
    worse = shipped.copy()
    worse[:5] = np.eye(53)[52] * 0.9 + 0.1 / 53  # five tiles now read as jokers
    with pytest.raises(ProfileError, match="profile refused"):
        check_readings(shipped, worse, labels)


def test_the_mix_leaves_a_tile_to_the_shipped_reading_where_the_profile_is_unsure() -> None:
    from vision.profiles import mix_logs

    shipped = np.full((2, 53), 0.1 / 52)
    shipped[:, 7] = 0.9
    mine = np.full((2, 53), 1 / 53)  # no evidence: uniform
    mine[1] = 0.02 / 52
    mine[1, 20] = 0.98  # sure of another reading
    mixed = mix_logs(mine, shipped, 0.5)
    assert mixed.argmax(axis=1).tolist() == [7, 20]
    assert np.allclose(mixed.sum(axis=1), 1.0)
    assert np.allclose(mix_logs(mine, shipped, 0.0), shipped, atol=1e-6)


def test_rack_like_copies_are_crops_of_the_tile_and_repeat_by_seed() -> None:
    from vision.training.calibrate import rack_like

    image = np.full((300, 400, 3), 60, np.uint8)
    image[100:190, 150:210] = 235  # a tile's face
    box = (150.0, 100.0, 210.0, 190.0)
    first = [rack_like(image, box, np.random.default_rng(3)) for _ in range(2)]
    again = rack_like(image, box, np.random.default_rng(3))
    assert first[0].shape == (96, 96, 3) and first[0].dtype == np.uint8
    assert np.array_equal(first[0], again)
    # the face fills the middle of the crop whatever the copy did (a hiding band stops short)
    for k in range(20):
        crop = rack_like(image, box, np.random.default_rng(k))
        assert crop[40:56, 40:56].mean() > 150, k


def test_a_fine_tuned_profile_saves_loads_and_rereads(tmp_path: Path) -> None:
    """A profile holding its own ONNX classifier (here the shipped one, unchanged): saved and
    loaded with its mix; re-reading a tile gives the mix of its box crop's reading and the
    shipped probabilities."""
    from conftest_service import require_model

    require_model()
    from vision.profiles import NetReader, mix_logs

    net = NetReader((REPO / "models" / "tile_classifier.onnx").read_bytes(), weight=0.5)
    folder = Profile("net", net, {"classifier": "x"}).save(tmp_path / "net")
    assert sorted(p.name for p in folder.iterdir()) == ["classifier.onnx", "profile.yaml"]
    loaded = Profile.load(folder, check_model=False)
    assert isinstance(loaded.reader, NetReader) and loaded.reader.weight == 0.5
    image = np.full((200, 200, 3), 200, np.uint8)
    boxes = [(60.0, 40.0, 120.0, 130.0)]
    shipped = np.full((1, 53), 1 / 53, np.float32)
    own = net.own_probs(net.crops(image, boxes))
    assert np.allclose(own.sum(axis=1), 1.0)
    assert np.allclose(loaded.reread(image, boxes, shipped), mix_logs(own, shipped, 0.5), atol=1e-6)
    # saving the colour reader over it leaves no stale classifier behind
    features, _ = _features()
    Profile("net", _reader(features), {"classifier": "x"}).save(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["profile.yaml", "reader.npz"]


@pytest.mark.slow
def test_fine_tuning_without_steps_exports_the_shipped_classifier() -> None:
    """The fine-tuned copy starts as the shipped network: exported with no training it reads
    crops as the shipped ONNX does."""
    from conftest_service import require_model

    require_model()
    from vision.training.calibrate import torch_available

    if not torch_available():
        pytest.skip("needs the train extra (torch)")
    import onnxruntime as ort

    from vision.profiles import NetReader
    from vision.training.calibrate import finetune_classifier

    rng = np.random.default_rng(0)
    crops = [rng.integers(0, 255, (96, 96, 3), dtype=np.uint8) for _ in range(4)]
    onnx_bytes, trained_for = finetune_classifier(crops, np.array([0, 1, 2, 3]), epochs=0)
    assert trained_for["steps"] == trained_for["planned"] == 0
    copy = NetReader(onnx_bytes)
    shipped = ort.InferenceSession(str(REPO / "models" / "tile_classifier.onnx"))
    batch = np.stack([c[:, :, ::-1] for c in crops]).astype(np.float32).transpose(0, 3, 1, 2)
    expected = shipped.run(None, {"images": batch / 255.0})[0][:, :53]
    expected /= expected.sum(axis=1, keepdims=True)
    assert np.allclose(copy.own_probs(crops), expected, atol=1e-5)


def test_profile_names_and_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_name("home_set.2") == "home_set.2"
    for bad in ("", "../x", ".hidden", "a/b", "x" * 49):
        with pytest.raises(ProfileError):
            check_name(bad)
    monkeypatch.setenv("ISTAKA_PROFILES", str(tmp_path / "p"))
    assert profiles_dir() == tmp_path / "p"
    with pytest.raises(ProfileError, match="no profile named 'nope'"):
        Profile.load("nope")


def _photo() -> np.ndarray:
    rng = np.random.default_rng(2)
    return rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)


def test_nothing_is_kept_without_consent(_local_home: Path) -> None:
    store = DataStore()
    tiles = [((10, 10, 40, 60), "R5", "K5")]
    kept = store.keep(_photo(), tiles, source="correction", consent=False)
    assert kept == 0
    assert store.records() == []
    assert not _local_home.exists()


def test_kept_tiles_are_yolo_labels_beside_their_photo(_local_home: Path, tmp_path: Path) -> None:
    store = DataStore()
    box = (10.0, 20.0, 40.0, 80.0)
    assert store.keep(_photo(), [(box, "R5", "K5")], source="correction", consent=True) == 1
    assert store.keep(_photo(), [(box, "R5", "K5")], source="correction", consent=True) == 0
    (record,) = store.records()
    assert record["label"] == "R5" and record["read"] == "K5" and record["box"] == list(box)
    photo = store.root / "images" / record["photo"]
    label = (store.root / "labels" / photo.with_suffix(".txt").name).read_text().split()
    assert photo.is_file() and str(photo).startswith(str(_local_home))
    assert label[0] == str(Tile.parse("R5").index)
    assert [float(v) for v in label[1:]] == pytest.approx([25 / 160, 50 / 120, 30 / 160, 60 / 120])
    out = store.export(tmp_path / "export")
    assert (out / "data.yaml").is_file() and len(list((out / "labels").iterdir())) == 1


def test_istaka_data_lists_exports_and_forgets(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from istaka.cli import main

    DataStore().keep(_photo(), [((1, 1, 30, 40), "Y7", "R7")], source="correction", consent=True)
    assert main(["data", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["tiles"] == 1 and listed["corrected"] == {"R7->Y7": 1}
    assert main(["data", "export", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "records.jsonl").is_file()
    assert main(["data", "forget"]) == 2
    assert main(["data", "forget", "--yes"]) == 0
    assert DataStore().records() == []


def test_scan_corrections_parse_and_need_one_photo() -> None:
    from istaka.calibrate import parse_corrections
    from istaka.cli import InputError

    assert parse_corrections(["3=r5", "7=K1,8=FJ"]) == {3: "R5", 7: "K1", 8: "FJ"}
    with pytest.raises(InputError):
        parse_corrections(["R5"])
    with pytest.raises(InputError):
        parse_corrections(["3=R5"], several=True)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_calibrate_scan_and_serve_end_to_end(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A small rendered unseen style: its layout photo through ``istaka calibrate``, the
    profile saved beside (never over) the shipped model, a rack photo of the same set scanned
    through it with a correction kept, and the service reading and calibrating with it."""
    from conftest_service import require_model

    require_model()
    import cv2

    from istaka.cli import main
    from vision.training.calibrate import heldout_style, render_layout, render_rack

    shipped = {p: _digest(p) for p in (REPO / "models").glob("tile_*.onnx")}
    style = heldout_style(2)
    layout, _ = render_layout(style, 7)
    layout_path = tmp_path / "layout.png"
    cv2.imwrite(str(layout_path), layout)
    code = main(["calibrate", "--profile", "set-a", str(layout_path), "--yes", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    report = json.loads(out.strip().splitlines()[-1])
    assert report["profile"] == "set-a" and report["tiles"] >= 30
    assert report["reader"] in ("finetune", "colour")
    assert report["profile_identity"] >= report["shipped_identity"]
    assert report["seconds"] < 300
    assert (profiles_dir() / "set-a" / "profile.yaml").is_file()
    assert {p: _digest(p) for p in shipped} == shipped

    rack = None
    for index in range(6):
        rack, truth = render_rack(style, 5, index)
        if sum(t["labelled"] and t["on_rack"] for t in truth["tiles"]) >= 8:
            break
    rack_path = tmp_path / "rack.png"
    cv2.imwrite(str(rack_path), rack)
    assert main(["scan", "--profile", "set-a", str(rack_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    first = result["rows"][0][0][0]
    fix = "R1" if first["tile"] != "R1" else "K2"
    fixing = ["--correct", f"{first['id']}={fix}", "--keep"]
    code = main(["scan", "--profile", "set-a", str(rack_path), *fixing])
    assert code == 0
    (kept,) = DataStore().records()
    assert kept["label"] == fix and kept["source"] == "correction"

    from fastapi.testclient import TestClient

    from service.app import create_app
    from service.settings import Settings

    with TestClient(create_app(Settings()), base_url="http://127.0.0.1") as client:
        listed = client.get("/api/v1/profiles").json()
        assert [p["name"] for p in listed] == ["set-a"]
        answer = client.post(
            "/api/v1/scan?profile=set-a", files={"image": ("rack.png", rack_path.read_bytes())}
        )
        assert answer.status_code == 200, answer.text
        assert (
            client.post(
                "/api/v1/scan?profile=nope", files={"image": ("rack.png", rack_path.read_bytes())}
            ).json()["error"]["code"]
            == "no_profile"
        )
        understood = client.post(
            "/api/v1/calibrate?profile=set-b&learn=false",
            files={"image": ("layout.png", layout_path.read_bytes())},
        )
        assert understood.status_code == 200, understood.text
        body = understood.json()
        assert body["learned"] is False and body["photos"][0]["rows"][-1] == "FJ"
        assert not (profiles_dir() / "set-b").exists()
        assert client.get("/calibrate").status_code == 200


def test_live_stream_settings_take_a_saved_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    from service.errors import ApiError
    from service.routers.stream import apply_message
    from service.stream import StreamSession
    from vision.profiles import INK_DIM

    session = StreamSession()
    with pytest.raises(ApiError) as refused:
        apply_message(session, '{"type": "settings", "profile": "nope"}')
    assert refused.value.code == "no_profile"
    features = np.zeros((1, 53 + INK_DIM), np.float32)
    import vision.profiles as profiles

    monkeypatch.setattr(profiles, "classifier_digest", lambda manifest=None: "d")  # no model
    Profile("home", _reader(features), {"classifier": "d"}).save()
    apply_message(session, '{"type": "settings", "profile": "home"}')
    assert session.settings.profile == "home"
    apply_message(session, '{"type": "settings"}')
    assert session.settings.profile is None


@pytest.mark.slow
def test_calibration_page_reads_shows_and_learns(tmp_path: Path) -> None:
    """The /calibrate page in headless Chromium: a rendered layout photo chosen, what was
    understood shown, learned with consent to keep; the camera page then offers the set."""
    from cdp_browser import chromium, require_chromium
    from conftest_service import OWNER, live_server, require_model

    require_chromium()
    require_model()
    import cv2

    from service.settings import Settings
    from vision.training.calibrate import FT_DEADLINE, heldout_style, render_layout

    layout, _ = render_layout(heldout_style(1), 3)
    photo = tmp_path / "layout.jpg"
    cv2.imwrite(str(photo), layout)
    with live_server(Settings()) as server, chromium(width=1000, height=900) as (page, _):
        page.navigate(f"{server.url}/calibrate?owner={OWNER}")  # learning is the owner's
        # the read button is enabled once the page's script handles the form (a click before
        # that would submit it natively and reload the page, losing the chosen photo)
        page.wait_for("document.querySelector('#read:enabled') !== null")
        root = page.send("DOM.getDocument")["root"]["nodeId"]
        node = page.send("DOM.querySelector", {"nodeId": root, "selector": "#photo1"})["nodeId"]
        page.send("DOM.setFileInputFiles", {"files": [str(photo)], "nodeId": node})
        page.evaluate("document.getElementById('name').value = 'page-set'")
        page.evaluate("document.getElementById('read').click()")
        page.wait_for("!document.getElementById('understood').hidden", timeout=120)
        shown = page.evaluate("document.getElementById('photos').textContent")
        assert "row 1 (red)" in shown and "false jokers" in shown
        assert not (profiles_dir() / "page-set").exists()  # nothing learned before agreeing
        page.evaluate("document.getElementById('keep').click()")
        page.evaluate("document.getElementById('learn').click()")
        # learning stops at FT_DEADLINE whatever is left; a slow or shared machine gets there
        page.wait_for("document.body.dataset.learned === 'page-set'", timeout=FT_DEADLINE + 120)
        assert (profiles_dir() / "page-set" / "profile.yaml").is_file()
        assert {r["source"] for r in DataStore().records()} == {"calibration"}
        page.navigate(f"{server.url}/camera")
        page.wait_for(
            "[...document.querySelectorAll('#profile option')].some(o => o.value === 'page-set')",
            timeout=60,
        )


@pytest.mark.slow
def test_scans_are_answered_while_a_calibration_learns(tmp_path: Path) -> None:
    """A calibration that learns (the fine-tune takes a minute or more) runs beside the pipeline's
    thread: a scan sent while it learns is answered before it has finished, and the profile is
    then saved."""
    import threading
    import time

    import httpx
    from conftest_service import OWNER_HEADERS, live_server, require_model

    from service.settings import Settings
    from vision.training.calibrate import heldout_style, render_layout, torch_available

    require_model()
    if not torch_available():
        pytest.skip("the colour reader learns in under a second: nothing to overlap")
    import cv2

    layout, _ = render_layout(heldout_style(1), 3)
    layout_bytes = cv2.imencode(".png", layout)[1].tobytes()
    rack = (REPO / "examples" / "rack_real.jpg").read_bytes()
    with live_server(Settings()) as server, httpx.Client(base_url=server.url, timeout=600) as http:
        learned: dict[str, httpx.Response] = {}

        def calibrate() -> None:
            learned["answer"] = http.post(
                "/api/v1/calibrate?profile=busy-set&learn=true",
                files={"image": ("layout.png", layout_bytes)},
                headers=OWNER_HEADERS,  # learning writes a profile: the owner's
            )

        learning = threading.Thread(target=calibrate)
        learning.start()
        # let the upload reach the server (a loopback post of one photo): the scan below then
        # comes after the calibration in the pipeline's queue; before learning left that thread,
        # it waited there for the whole fine-tune
        time.sleep(2.0)
        scan = http.post("/api/v1/scan", files={"image": ("rack.jpg", rack)})
        assert scan.status_code == 200, scan.text
        assert learning.is_alive()  # answered while the calibration still learns
        learning.join()
    assert learned["answer"].status_code == 200, learned["answer"].text
    assert learned["answer"].json()["learned"] is True
    assert (profiles_dir() / "busy-set" / "profile.yaml").is_file()
