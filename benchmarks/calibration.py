"""Does calibrating on a player's own set help?  Before/after figures per unseen style, and on real
photos.

**Held-out rendered styles.**  For each of ``--styles`` set styles drawn from the held-out pool
(typefaces, inks and false-joker marks the shipped model never trained on): render two
calibration photos of the layout (``vision.training.calibrate.render_layout``: four rows of 1-13
and the false jokers, face up on the table; ``--layout rack``: ``render_rack_layout``, red and
yellow on the rack's two rows, then blue and black, the false jokers in front) and ``--racks``
ordinary rack photos of the same set (``render_rack``); make a profile from the two calibration
photos exactly as ``istaka calibrate`` does (``make_profile``, timed; ``--reader`` chooses the
fine-tuned or the colour reader), then read the rack photos
with the shipped recogniser and with the profile applied to the same recognitions.  Printed per
style and in total: identity of the found tiles, identity of the tiles fully visible with their
number shown whole, and exact racks (every labelled tile found and read right, nothing extra:
``vision.training.evaluate``).

**Real photos** (``--real``): the real Rummikub photos are one set.  A profile is made from the
labelled tiles of ``--real-photos`` training-split photos (as if they were kept corrections;
``datasets/real_val.txt`` lists the validation sources, never used to calibrate), then the
validation photos are read before and after.

Renders and recognitions are cached under ``datasets/build/calibration`` (git-ignored).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/calibration.py [--styles 8] [--racks 30]
        [--first-style 0] [--reader auto|finetune|colour] [--real] [--real-photos 12]
        [--json runs/calibration.json]
    .venv/bin/python benchmarks/calibration.py --trained-pool wide [--styles 8] [--racks 25]
        # the reference: no calibration, the shipped recogniser on racks of styles it trained on

Candidates are chosen on other styles than the reported 0-7 (``--first-style 20 --styles 6``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices; threads only contend

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from okey import Tile  # noqa: E402
from vision.recognizer import Recognizer  # noqa: E402
from vision.training.calibrate import (  # noqa: E402
    CalibrationPhoto,
    heldout_style,
    make_profile,
    render_layout,
    render_rack,
    render_rack_layout,
)
from vision.training.evaluate import EvalReport, Sample, match, score_image  # noqa: E402
from vision.types import Recognition, TileReading  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "datasets" / "build" / "calibration"
NUMBER_WHOLE = 0.95


def _save_recognition(path: Path, recognition: Recognition) -> None:
    tiles = recognition.tiles
    np.savez(
        path,
        boxes=np.float32([t.box for t in tiles]).reshape(-1, 4),
        probs=np.float32([t.probs for t in tiles]).reshape(-1, 53),
        det=np.float32([t.detection_confidence for t in tiles]),
        size=np.int32(recognition.image_size),
    )


def _load_recognition(path: Path) -> Recognition:
    with np.load(path) as z:
        tiles = [
            TileReading(
                box=tuple(float(v) for v in b),
                tile=Tile(int(p.argmax())),
                confidence=float(p.max() * d),
                probs=p,
                detection_confidence=float(d),
            )
            for b, p, d in zip(z["boxes"], z["probs"], z["det"], strict=True)
        ]
        return Recognition(tiles=tiles, image_size=tuple(int(v) for v in z["size"]))


def cached(recognizer: Recognizer, name: str, render) -> tuple[np.ndarray, dict, Recognition]:  # noqa: ANN001
    """(image, sidecar, the shipped recognition) of one render, cached on disk."""
    image_path, truth_path, rec_path = (CACHE / f"{name}{s}" for s in (".png", ".json", ".npz"))
    if image_path.is_file() and truth_path.is_file() and rec_path.is_file():
        image = cv2.imread(str(image_path))
        return image, json.loads(truth_path.read_text()), _load_recognition(rec_path)
    image, truth = render()
    recognition = recognizer.recognize(image)
    CACHE.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(image_path), image)
    truth_path.write_text(json.dumps(truth))
    _save_recognition(rec_path, recognition)
    return image, truth, recognition


def sample_of(name: str, truth: dict) -> Sample:
    tiles = [t for t in truth["tiles"] if t["labelled"]]
    return Sample(
        Path(name),
        [(t["class"], tuple(t["box"])) for t in tiles],
        [
            float(t["number_visible"]) if t["visible"] >= 0.999 and not t["upside_down"] else 0.0
            for t in tiles
        ],
    )


def figures(report: EvalReport) -> dict[str, float | int]:
    s = report.summary()
    return {
        "images": report.images,
        "tiles": report.truth_tiles,
        "recall": round(s["recall"], 4),
        "identity": round(s["identity_accuracy"], 4),
        "identity_whole": (
            round(report.shown_correct / report.shown_matched, 4) if report.shown_matched else None
        ),
        "exact": report.exact_images,
    }


def line(label: str, before: dict, after: dict) -> str:
    whole = ""
    if before["identity_whole"] is not None:
        whole = f"whole faces {before['identity_whole']:7.2%} -> {after['identity_whole']:7.2%}   "
    return (
        f"{label:26s} identity {before['identity']:7.2%} -> {after['identity']:7.2%}   "
        f"{whole}exact {before['exact']:3d} -> {after['exact']:3d} of {before['images']}"
    )


def played_tiles(
    recognizer: Recognizer,
    style,
    index: int,
    n: int,
    which: str,  # noqa: ANN001
) -> list[tuple[np.ndarray, dict]]:
    """What ``n`` rack photos of the set, read and corrected on ``/camera`` before the measured
    ones (other renders), leave in the data folder: the tiles the shipped reading got wrong, set
    right (``which="corrected"``, as the page keeps them), or every tile found on those photos
    (``"all"``: the player also confirmed the tiles read right).  Boxes are the recogniser's,
    labels the truth's; tiles it did not find cannot be kept."""
    kept: list[tuple[np.ndarray, dict]] = []
    for k in range(n):
        name = f"style{index}_played{k}"
        image, truth, recognition = cached(
            recognizer, name, lambda k=k: render_rack(style, 2900 + index, k)
        )
        sample = sample_of(name, truth)
        pred = [t.box for t in recognition.tiles]
        for i, j in match([box for _, box in sample.truth], pred):
            label = sample.truth[i][0]
            if which == "all" or recognition.tiles[j].tile.index != label:
                record = {"box": list(pred[j]), "label": str(Tile(label)), "source": "correction"}
                kept.append((image, record))
    return kept


def run_style(
    recognizer: Recognizer,
    index: int,
    racks: int,
    layout: str = "table",
    method: str = "auto",
    played: int = 0,
    kept_tiles: str = "corrected",
) -> dict:
    style = heldout_style(index)
    photos = []
    for k in range(2):
        if layout == "rack":  # red and yellow on the rack, then blue and black
            name = f"style{index}_racklayout{k}"
            draw = partial(render_rack_layout, style, index * 100 + k, ("RY", "BK")[k])
        else:
            name = f"style{index}_layout{k}"
            draw = partial(render_layout, style, index * 100 + k)
        image, _, recognition = cached(recognizer, name, draw)
        from vision.profiles import label_layout

        photos.append(CalibrationPhoto(f"layout{k}", image, recognition, label_layout(recognition)))
    kept = played_tiles(recognizer, style, index, played, kept_tiles)
    t0 = time.perf_counter()
    profile, report = make_profile(
        f"style{index}", recognizer, photos, kept=kept or None, method=method
    )
    seconds = time.perf_counter() - t0
    before, after = EvalReport(), EvalReport()
    for k in range(racks):
        name = f"style{index}_rack{k}"
        image, truth, recognition = cached(
            recognizer, name, lambda k=k: render_rack(style, 1900 + index, k)
        )
        sample = sample_of(name, truth)
        if not sample.truth:
            continue
        score_image(before, sample, recognition)
        score_image(after, sample, profile.apply(image, recognition))
    return {
        "style": index,
        "font": style.font,
        "joker_mark": style.joker_mark,
        "calibration_tiles": report["tiles"],
        "kept_tiles": len(kept),
        "reader": report["reader"],
        "calibrate_seconds": round(seconds, 2),
        "before": figures(before),
        "after": figures(after),
        "_reports": (before, after),
    }


def reference_line(label: str, got: dict) -> str:
    return (
        f"{label:32s} identity {got['identity']:7.2%}   whole faces {got['identity_whole']:7.2%}   "
        f"recall {got['recall']:7.2%}   exact {got['exact']:3d} of {got['images']}"
    )


def run_reference(recognizer: Recognizer, pool_name: str, index: int, racks: int) -> dict:
    """The shipped recogniser alone on rack photos of a style from a pool it trained on: the same
    renderer, seeds and conditions as the held-out styles' racks, so its figures are what "reads
    as well as the training sets do" means on this benchmark."""
    style = heldout_style(index, pool_name)
    report = EvalReport()
    for k in range(racks):
        name = f"{pool_name}{index}_rack{k}"
        image, truth, recognition = cached(
            recognizer, name, lambda k=k: render_rack(style, 1900 + index, k)
        )
        sample = sample_of(name, truth)
        if sample.truth:
            score_image(report, sample, recognition)
    return {"style": index, "font": style.font, "joker_mark": style.joker_mark, "_report": report}


def add_report(total: EvalReport, part: EvalReport) -> None:
    total.images += part.images
    total.truth_tiles += part.truth_tiles
    total.predicted_tiles += part.predicted_tiles
    total.matched += part.matched
    total.correct += part.correct
    total.exact_images += part.exact_images
    total.shown_matched += part.shown_matched
    total.shown_correct += part.shown_correct


def run_real(recognizer: Recognizer, n_photos: int, method: str = "auto") -> dict:
    """Profile from the labelled tiles of ``n_photos`` training-split photos, measured on the
    validation photos."""
    from vision.training.data_real import (
        DEFAULT_SRC,
        read_upstream_labels,
        read_val_list,
        source_of,
    )

    val_sources = {source_of(n) for n in read_val_list()}
    images = sorted((DEFAULT_SRC / "images").glob("*.jpg"))
    val = [p for p in images if source_of(p.name) in val_sources]
    train = [p for p in images if source_of(p.name) not in val_sources]

    def labelled(path: Path) -> list[tuple[int, tuple[float, ...]]]:
        label = DEFAULT_SRC / "labels" / f"{path.stem}.txt"
        image = cv2.imread(str(path))
        h, w = image.shape[:2]
        out = []
        for lab in read_upstream_labels(label):
            cx, cy, bw, bh = lab.box
            box = ((cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h)
            out.append((lab.index, box))
        return out

    # one copy of each training source, the ones with the most tiles, every series in turn
    by_source: dict[str, Path] = {}
    for p in train:
        by_source.setdefault(source_of(p.name), p)
    ranked = sorted(by_source.values(), key=lambda p: (-len(labelled(p)), p.name))
    picked = ranked[:n_photos]
    kept = []
    for p in picked:
        image = cv2.imread(str(p))
        for cls, box in labelled(p):
            kept.append((image, {"box": list(box), "label": str(Tile(cls)), "source": "import"}))
    t0 = time.perf_counter()
    profile, report = make_profile("real", recognizer, [], kept=kept, method=method)
    seconds = time.perf_counter() - t0
    before, after = EvalReport(), EvalReport()
    for p in val:
        image = cv2.imread(str(p))
        sample = Sample(p, labelled(p))
        recognition = recognizer.recognize(image)
        score_image(before, sample, recognition)
        score_image(after, sample, profile.apply(image, recognition))
    return {
        "calibration_photos": [p.name for p in picked],
        "calibration_tiles": len(kept),
        "calibrate_seconds": round(seconds, 2),
        "before": figures(before),
        "after": figures(after),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--styles", type=int, default=8, help="held-out styles to try")
    parser.add_argument("--first-style", type=int, default=0)
    parser.add_argument("--racks", type=int, default=30, help="rack photos per style")
    parser.add_argument(
        "--layout",
        choices=["table", "rack"],
        default="table",
        help="calibration photos: the layout on the table (one photo holds it; two taken), or "
        "on the rack (two colours a photo)",
    )
    parser.add_argument(
        "--reader",
        choices=["auto", "finetune", "colour"],
        default="auto",
        help="the per-set reader made (make_profile's method; auto: finetune where torch is)",
    )
    parser.add_argument(
        "--played",
        type=int,
        default=0,
        help="rack photos of each set read and corrected before the measured ones: their kept "
        "tiles join the two calibration photos (the data folder after a few hands)",
    )
    parser.add_argument(
        "--kept-tiles",
        choices=["corrected", "all"],
        default="corrected",
        help="what those photos leave: the tiles set right (as /camera keeps them), or every "
        "tile found (the player confirmed the rest too)",
    )
    parser.add_argument("--real", action="store_true", help="also the real photos")
    parser.add_argument("--real-photos", type=int, default=12)
    parser.add_argument(
        "--trained-pool",
        choices=["train", "wide"],
        help="instead: no calibration, the shipped recogniser alone on rack photos of --styles "
        "styles of a pool it trained on (the training sets' own reading, as a reference)",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()

    recognizer = Recognizer.default()
    if args.trained_pool:
        total = EvalReport()
        for index in range(args.first_style, args.first_style + args.styles):
            result = run_reference(recognizer, args.trained_pool, index, args.racks)
            report = result.pop("_report")
            add_report(total, report)
            label = f"{args.trained_pool} style {index} ({result['font'].split('.')[0]})"
            print(reference_line(label, figures(report)), flush=True)
        print(reference_line(f"all {args.trained_pool} styles", figures(total)))
        return
    results = []
    total_before, total_after = EvalReport(), EvalReport()
    for index in range(args.first_style, args.first_style + args.styles):
        result = run_style(
            recognizer,
            index,
            args.racks,
            args.layout,
            args.reader,
            args.played,
            args.kept_tiles,
        )
        before, after = result.pop("_reports")
        add_report(total_before, before)
        add_report(total_after, after)
        results.append(result)
        label = f"style {index} ({result['font'].split('.')[0]})"
        print(line(label, result["before"], result["after"]), flush=True)
        print(
            f"{'':26s} calibrated ({result['reader']}) from {result['calibration_tiles']} tiles "
            f"({result['kept_tiles']} kept from {args.played} played photos) "
            f"in {result['calibrate_seconds']:.1f} s",
            flush=True,
        )
    out: dict = {"styles": results}
    if results:
        out["total"] = {"before": figures(total_before), "after": figures(total_after)}
        print(line("all held-out styles", out["total"]["before"], out["total"]["after"]))
        slowest = max(r["calibrate_seconds"] for r in results)
        print(f"time to calibrate: at most {slowest:.1f} s (two photos, this machine)")
    if args.real:
        real = run_real(recognizer, args.real_photos, args.reader)
        out["real"] = real
        print(line("real validation photos", real["before"], real["after"]))
        print(
            f"{'':26s} calibrated from {real['calibration_tiles']} labelled tiles of "
            f"{len(real['calibration_photos'])} training photos in "
            f"{real['calibrate_seconds']:.1f} s"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
