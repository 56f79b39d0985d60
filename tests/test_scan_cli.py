"""``istaka scan`` and ``istaka live``: exit codes, messages, JSON, annotation, README example."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from istaka.cli import main
from vision.recognizer import MANIFEST, RecognizerSpec

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "rack_real.jpg"


def shipped_model() -> bool:
    try:
        spec = RecognizerSpec.load(MANIFEST)
    except FileNotFoundError:
        return False
    weights = [spec.detector] + ([spec.classifier] if spec.classifier else [])
    return all(w.with_suffix(".onnx").is_file() for w in weights)  # what openvino and onnx read


needs_model = pytest.mark.skipif(not shipped_model(), reason="shipped weights not in models/ yet")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(["scan", str(tmp_path / "nope.jpg")], capsys)
    assert code == 2
    assert err.strip() == f"istaka scan: no such file: {tmp_path / 'nope.jpg'}"
    assert out == ""


def test_not_an_image_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fake = tmp_path / "notes.jpg"
    fake.write_text("R1 R2 R3, not a photo")
    code, _, err = run(["scan", str(fake)], capsys)
    assert code == 2
    assert "is not an image" in err and err.count("\n") == 1


def test_bad_indicator_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["scan", str(EXAMPLE), "--indicator", "Z9"], capsys)
    assert code == 2 and "'Z9'" in err
    code, _, err = run(["scan", str(EXAMPLE), "--indicator", "FJ"], capsys)
    assert code == 2 and "false joker" in err


def test_bad_annotate_suffix_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(["scan", str(EXAMPLE), "--annotate", str(tmp_path / "out.txt")], capsys)
    assert code == 2 and ".png" in err


def test_live_without_display_or_out_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    code, _, err = run(["live", "--video", str(tmp_path / "none.mp4")], capsys)
    assert code == 2 and "--out" in err
    code, _, err = run(["live", "--video", str(tmp_path / "none.mp4"), "--out", "x.mp4"], capsys)
    assert code == 2 and "no such file" in err


@needs_model
def test_blank_image_exits_3(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blank = tmp_path / "table.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), 90, np.uint8))
    code, out, err = run(["scan", str(blank)], capsys)
    assert code == 3
    assert err.strip() == f"istaka scan: {blank}: no tiles found in the image"
    assert out == ""


def readme_hand() -> list[list[str]]:
    """The hand the README shows for the example photo: examples/rack_real.txt, one row a line."""
    lines = (REPO / "examples" / "rack_real.txt").read_text().splitlines()
    return [line.split() for line in lines if line.strip() and not line.startswith("#")]


@needs_model
def test_example_photo_gives_the_readme_hand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    annotated = tmp_path / "annotated.png"
    code, out, _ = run(["scan", str(EXAMPLE), "--json", "--annotate", str(annotated)], capsys)
    assert code == 0
    result = json.loads(out)
    rows = [[t["tile"] for group in row for t in group] for row in result["rows"]]
    assert rows == readme_hand()
    assert result["hand"] == [t for row in readme_hand() for t in row]
    for row in result["rows"]:
        for group in row:
            for tile in group:
                assert set(tile) >= {"tile", "box", "confidence", "id"}
                assert len(tile["box"]) == 4 and 0 < tile["confidence"] <= 1
    assert {"table", "flagged", "verdict", "advice"} <= set(result)

    # --annotate wrote the photo with each tile outlined, and the rack redrawn below it.
    drawn = cv2.imread(str(annotated))
    photo = cv2.imread(str(EXAMPLE))
    assert drawn is not None and drawn.shape[1] == photo.shape[1]
    assert drawn.shape[0] > photo.shape[0]
    x1, y1, x2, y2 = (round(v) for v in result["rows"][0][0][0]["box"])
    inside = drawn[y1 : y2 + 1, x1 : x2 + 1].astype(int)
    assert np.abs(inside - photo[y1 : y2 + 1, x1 : x2 + 1]).max() > 60


@needs_model
def test_the_example_saved_as_heic_gives_the_same_hand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A phone's HEIC photo (here the example re-encoded so, quality 90) is read as its JPEG."""
    pillow_heif = pytest.importorskip("pillow_heif")
    from PIL import Image

    pillow_heif.register_heif_opener()
    heic = tmp_path / "IMG_0001.HEIC"
    Image.open(EXAMPLE).save(heic, format="HEIF", quality=90)
    code, out, _ = run(["scan", str(heic), "--json"], capsys)
    assert code == 0
    rows = [[t["tile"] for group in row for t in group] for row in json.loads(out)["rows"]]
    assert rows == readme_hand()


@needs_model
def test_example_photo_text_shows_rows_and_groups(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["scan", str(EXAMPLE), "--indicator", "K7"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Rack (classic): 10 tiles in 2 tier(s), read tier by tier"
    for r, row in enumerate(readme_hand(), 1):
        line = next(x for x in lines if x.startswith(f"  row {r}:"))
        assert line.replace("[", "").replace("]", "").replace("?", "").split()[2:] == row


FULL_EXAMPLE = REPO / "examples" / "rack_full.jpg"


@needs_model
def test_full_rack_example_gets_a_verdict_and_advice(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's full rack: 14 tiles as laid out, the indicator typed, a verdict and advice;
    without it, the tile on the table is only suggested."""
    lines = FULL_EXAMPLE.with_suffix(".txt").read_text().splitlines()
    truth = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    code, out, _ = run(["scan", str(FULL_EXAMPLE), "--indicator", "R3", "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    assert [[t["tile"] for g in row for t in g] for row in result["rows"]] == truth
    assert result["verdict"] is not None and result["verdict"]["other_arrangement_wins"]
    assert result["advice"]["distance"] == 0 and result["indicator_source"] == "typed"
    code, out, _ = run(["scan", str(FULL_EXAMPLE), "--json"], capsys)
    result = json.loads(out)
    assert result["indicator"] is None and result["verdict"] is None
    assert result["indicator_suggestion"]["tile"] == "R3"


# Rendered 101 racks of 22 tiles (seed, index) that the shipped model reads in full.
RACKS_101 = [(5, 3), (1, 1)]


@needs_model
def test_scan_of_a_101_rack_of_22_uses_the_101_adviser(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from okey import Rules, Tile, parse_tiles
    from okey.okey101 import advise_discard
    from vision.training.synth import render_sample

    read_in_full = 0
    for seed, index in RACKS_101:
        image, truth = render_sample(seed, index, rules="okey101")
        photo = tmp_path / f"rack101_{seed}_{index}.png"
        cv2.imwrite(str(photo), image)
        argv = ["scan", str(photo), "--rules", "okey101", "--indicator", truth["indicator"]]
        code, out, _ = run([*argv, "--json"], capsys)
        assert code == 0
        result = json.loads(out)
        if len(result["hand"]) != 22:  # the model's misses are the model card's business
            continue
        read_in_full += 1
        advice = result["advice"]
        assert advice["adviser"] == "okey101"
        hand, indicator = parse_tiles(result["hand"]), Tile.parse(truth["indicator"])
        ranked = advise_discard(hand, indicator, Rules.okey101())
        assert [o["discard"] for o in advice["options"]] == [str(o.tile) for o in ranked]
        assert {"opening_points", "opens", "leftover", "penalty"} <= set(advice["options"][0])
        assert result["discard"]["tile"] == advice["options"][0]["discard"]
        code, text, _ = run(argv, capsys)
        assert code == 0
        assert f"Advice: {advice['sentence']}" in text.splitlines()
        assert "points left in hand" in advice["sentence"]
        assert result["rules"] == "okey101"
    assert read_in_full, "no rendered 101 rack read in full"


@needs_model
def test_live_writes_an_annotated_video(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from vision.training.synth import render_video, write_video

    frames, truths = render_video(seed=3, n_frames=6, size=(320, 240))
    source = tmp_path / "rack.mp4"
    write_video(source, frames, fps=10)
    out = tmp_path / "live.mp4"
    code, printed, _ = run(
        ["live", "--video", str(source), "--out", str(out), "--indicator", truths[0]["indicator"]],
        capsys,
    )
    assert code == 0
    assert printed.splitlines()[0].startswith("frame 1:")
    assert "6 frames" in printed.splitlines()[-1]
    capture = cv2.VideoCapture(str(out))
    written = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        written += 1
        # The header is a band above the picture: the whole picture is there below it.
        assert frame.shape[1] == 320 and frame.shape[0] > 240
        band = frame.shape[0] - 240
        assert frame[: band - 4, :, :].mean() < 80  # the dark band
        assert np.abs(frame[band:].astype(int) - frames[written - 1].astype(int)).mean() < 40
    assert written == 6


@needs_model
def test_live_writes_webm_that_browsers_play(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from vision.training.synth import render_video, write_video

    frames, truths = render_video(seed=3, n_frames=3, size=(320, 240))
    source = tmp_path / "rack.mp4"
    write_video(source, frames, fps=10)
    out = tmp_path / "live.webm"
    code, _, err = run(["live", "--video", str(source), "--out", str(out)], capsys)
    assert code == 0 and "browsers do not play" not in err
    capture = cv2.VideoCapture(str(out))
    fourcc = int(capture.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode()
    assert fourcc in ("VP90", "VP80")
    code, _, err = run(["live", "--video", str(source), "--out", str(tmp_path / "x.gif")], capsys)
    assert code == 2 and ".webm" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"istaka {version('istaka')}\n"


@needs_model
def test_scan_of_a_folder_and_a_glob_prints_one_json_line_per_photo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "shots"
    folder.mkdir()
    for name in ("b.jpg", "a.jpg"):
        (folder / name).write_bytes(EXAMPLE.read_bytes())
    (folder / "c.png").write_bytes(b"not a photo")
    (folder / "notes.txt").write_text("ignored: not an image name")
    code, out, _ = run(["scan", str(folder), "--json", "--indicator", "K4"], capsys)
    assert code == 2  # the worst photo: c.png is not an image
    lines = [json.loads(line) for line in out.splitlines()]
    assert [Path(x["photo"]).name for x in lines] == ["a.jpg", "b.jpg", "c.png"]
    assert lines[0]["hand"] == [t for row in readme_hand() for t in row]
    assert lines[0]["indicator_source"] == "typed" and lines[0]["indicator_confirmed"]
    assert lines[2]["error"]["code"] == "bad_input"
    code, out, _ = run(
        ["scan", str(folder / "*.jpg"), "--annotate", str(tmp_path / "drawn")], capsys
    )
    assert code == 0
    assert [x for x in out.splitlines() if x.startswith("== ")] == [
        f"== {folder / 'a.jpg'}",
        f"== {folder / 'b.jpg'}",
    ]
    assert sorted(p.name for p in (tmp_path / "drawn").iterdir()) == ["a.png", "b.png"]
    code, _, err = run(["scan", str(folder / "*.gif")], capsys)
    assert code == 2 and "no photos match" in err


@needs_model
def test_scan_of_several_photos_draws_a_progress_bar_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sys

    for name in ("a.jpg", "b.jpg"):
        (tmp_path / name).write_bytes(EXAMPLE.read_bytes())
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(["scan", str(tmp_path), "--json"], capsys)
    assert code == 0 and len(out.splitlines()) == 2
    assert "[" + "-" * 30 + "] 0/2 a.jpg" in err and "] 1/2 b.jpg" in err
    assert err.endswith("2 photos read\n")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    code, _, err = run(["scan", str(tmp_path), "--json"], capsys)
    assert code == 0 and err == ""  # no bar in a pipe or a log


@needs_model
def test_scan_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    import subprocess
    import sys

    folder = tmp_path / "shots"
    folder.mkdir()
    for k in range(3):
        (folder / f"{k}.jpg").write_bytes(EXAMPLE.read_bytes())
    command = f"{sys.executable} -m istaka scan {folder} | head -n 1"
    done = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=REPO)
    assert done.stdout.startswith("== ") and done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


@needs_model
def test_classic_and_101_answers_share_one_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from vision.training.synth import render_sample

    image, truth = render_sample(5, 3, rules="okey101")
    photo = tmp_path / "rack101.png"
    cv2.imwrite(str(photo), image)
    answers = {}
    for rules in ("classic", "okey101"):
        argv = ["scan", str(photo), "--rules", rules, "--indicator", truth["indicator"], "--json"]
        code, out, _ = run(argv, capsys)
        assert code == 0
        answers[rules] = json.loads(out)
    assert set(answers["classic"]) == set(answers["okey101"])
    for name in ("rows", "table", "flagged"):
        assert type(answers["classic"][name]) is type(answers["okey101"][name])


def test_live_without_a_camera_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(["live", "--camera", "57", "--out", str(tmp_path / "o.mp4")], capsys)
    assert code == 2
    assert err == "istaka live: cannot open camera 57\n"
