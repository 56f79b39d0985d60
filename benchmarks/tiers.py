"""The tier stage's check: rendered tiered racks read as racks, with the tiers' truth.

Renders two- and three-tier stands of standing, touching tiles (``vision.training.synth.tiers``,
the held-out style pool: sets and racks the models never trained on), frontal and oblique, near
(a tile 10-20 % of the frame width) and far (4-10 %), and shows each turned 0, 30, 90 and 180
degrees.  Every photo goes through the whole pipeline (``Pipeline.read``: recognition, layout,
decoding), once with the tier stage and once with the whole-photo path, and is scored against the
renderer's truth:

- **tiers found**: a true tier (one with a readable tile) is found when one row of the result
  holds at least 80 % of its readable tiles and no tile of another tier;
- **tiles split**: readable tiles with exactly one rack tile on them (a tile's centre inside
  its true outline); **extra**: rack tiles on no readable tile (a seam, a hidden tile, the table);
- **tiles right**: split and read as the truth says;
- **racks exact**: every row of the result equal to its true tier's readable tiles, in order;
- **half-hidden tiles whose numeral shows** (printed below the table): tiles a tier in front hides
  under half of, their numeral (80 % of its ink box) in view, which "readable" leaves out but a
  player reads: read right when exactly one rack tile lies on the part that shows, read as the
  truth says.

A rack turned 90 or 180 degrees is the same rack: its rows must come out the same.  These
renders are a check of the stage, not its training set (the detector and classifier never saw
them); the judge of the product is real photos from other phones.

    .venv/bin/python benchmarks/tiers.py                   # 8 kinds x 6 racks x 4 turns
    .venv/bin/python benchmarks/tiers.py --phone 12         # + 12 MP phone photos end to end

``--real`` also reads the real photos of a two-tier rack, ``datasets/rummikub-real``'s ``rummy3``
series (72 photos: 14 source photos of tiles standing on a black rack, far and spaced, turned by the
export's augmentation, and 9 of tiles lying on a table), against their tiers labelled by eye
(``datasets/rummy3_tiers.json``): tiers found (a row holds 80 % of a tier's tiles and none of
another's), racks exact (every row its tier, tile for tile), and table photos read as tables. Most
of these photos are in the training split of the detector and classifier (their tiles, not their
tiers: no model here learns tiers).

``--phone N`` also times ``istaka scan``'s work on N phone-sized photos (the far renders
enlarged to 4032 x 3024 and saved as JPEG): the file read and decoded, recognised, laid out,
decoded with the rules and advised (an indicator given), median and p95 seconds.

``--shift N`` also reads every photo moved 1..N pixels right and down (the same scene framed a
pixel apart) and counts the photos whose rows come out the same at every shift: a reading that
flips there is noise under any decision taken on these renders.

``--decide`` reads, instead of the check, renders of other racks in the styles the models trained
on: the set a reading constant is decided on (the check then reports it, untouched).

Renders are cached in ``datasets/build/tiers_check`` and ``tiers_decide`` (ignored by git).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vision.errors import NothingFoundError  # noqa: E402
from vision.pipeline import Pipeline  # noqa: E402
from vision.recognizer import Recognizer, RecognizerSpec  # noqa: E402
from vision.training.synth.dataset import render_sample  # noqa: E402

CACHE = ROOT / "datasets" / "build" / "tiers_check"
SEED = 7100
# ``--decide``: renders of other racks in the training styles, to decide a reading constant on
DECIDE_CACHE = ROOT / "datasets" / "build" / "tiers_decide"
DECIDE_SEED = 9100
KINDS = (
    "tiers2_frontal_far",
    "tiers2_oblique_far",
    "tiers3_frontal_far",
    "tiers3_oblique_far",
    "tiers2_frontal",
    "tiers2_oblique",
    "tiers3_frontal",
    "tiers3_oblique",
)
TURNS = (0, 30, 90, 180)
# A tile hidden over half by a tier in front still shows its numeral when this share of the
# numeral's ink box is in view (the renderer's "readable" asks half the face too)
SHOWN_NUMBER = 0.8
SIZE = (1600, 1200)


@dataclass
class Score:
    photos: int = 0
    tiers: int = 0
    tiers_found: int = 0
    tiles: int = 0
    split: int = 0
    right: int = 0
    extra: int = 0
    exact: int = 0
    shown: int = 0  # half-hidden tiles whose numeral shows
    shown_right: int = 0
    seconds: list[float] = field(default_factory=list)

    @classmethod
    def total(cls, scores) -> Score:
        out = cls()
        for score in scores:
            out.add(score)
        return out

    def add(self, other: Score) -> None:
        counts = ("photos", "tiers", "tiers_found", "tiles", "split", "right", "extra", "exact")
        for name in (*counts, "shown", "shown_right"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds


def rendered(kind: str, index: int, decide: bool = False) -> tuple[np.ndarray, dict]:
    """Render ``index`` of ``kind``: of the check (held-out styles), or with ``decide`` of the
    set a reading constant is decided on (other racks, the training styles), never reported."""
    folder = (DECIDE_CACHE if decide else CACHE) / kind
    image_path, truth_path = folder / f"{index:03d}.jpg", folder / f"{index:03d}.json"
    if image_path.is_file() and truth_path.is_file():
        return cv2.imread(str(image_path)), json.loads(truth_path.read_text())
    seed, pool = (DECIDE_SEED, "train") if decide else (SEED, "heldout")
    image, truth = render_sample(seed + KINDS.index(kind), index, pool, SIZE, scene_kind=kind)
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(image_path), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    truth_path.write_text(json.dumps(truth, separators=(",", ":")))
    # the photo as saved (JPEG), as every later run reads it: a figure does not depend on
    # whether the renders were cached
    return cv2.imread(str(image_path)), truth


def turn(image: np.ndarray, degrees: int) -> tuple[np.ndarray, np.ndarray]:
    """The photo turned counter-clockwise by ``degrees`` on a canvas that holds all of it, and
    the 2 x 3 matrix that maps its pixels."""
    h, w = image.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    cos, sin = abs(matrix[0, 0]), abs(matrix[0, 1])
    nw, nh = int(round(h * sin + w * cos)), int(round(h * cos + w * sin))
    matrix[:, 2] += (nw / 2 - w / 2, nh / 2 - h / 2)
    out = cv2.warpAffine(image, matrix, (nw, nh), borderValue=(114, 114, 114))
    return out, matrix


def score_photo(result, truth: dict, matrix: np.ndarray) -> Score:
    """Score one read photo (``ScanResult`` or None when nothing was found) against its truth."""
    tiles = {t["id"]: t for t in truth["tiles"]}
    readable = {i for i, t in tiles.items() if t.get("readable")}
    shown = {
        i
        for i, t in tiles.items()
        if t.get("labelled") and i not in readable and t.get("number_visible", 0) >= SHOWN_NUMBER
    }
    # a point where a tile shows is that tile's (a tile behind it may reach there, hidden); then
    # the whole outlines (a box may reach past what shows)
    outlines = [
        {
            i: (np.c_[np.float64(t[key]), np.ones(len(t[key]))] @ matrix.T).astype(np.float32)
            for i, t in tiles.items()
            if t.get(key) is not None and t.get("visible", 0) > 0
        }
        for key in ("visible_quad", "quad")
    ]
    true_rows = [[i for i in row if i in readable] for row in truth["rows"]]
    true_rows = [r for r in true_rows if r]
    score = Score(photos=1, tiers=len(true_rows), tiles=len(readable), shown=len(shown))
    if result is None:
        return score
    rows = [[p for group in row for p in group] for row in result.rows]
    on = {}  # result tile -> true tile id under its centre (readable or not), else None

    def under(box) -> int | None:
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        for polygons in outlines:
            for i, poly in polygons.items():
                if cv2.pointPolygonTest(poly, (float(cx), float(cy)), False) >= 0:
                    return i
        return None

    for row in rows:
        for p in row:
            on[p.id] = under(p.box)
    hits: dict[int, list] = {}
    for row in rows:
        for p in row:
            if on[p.id] in readable:
                hits.setdefault(on[p.id], []).append(p)
            elif on[p.id] is None:
                score.extra += 1
    on_shown: dict[int, list] = {}
    for row in rows:
        for p in row:
            if on[p.id] in shown:
                on_shown.setdefault(on[p.id], []).append(str(p.tile))
    score.shown_right = sum(v == [tiles[i]["tile"]] for i, v in on_shown.items())
    score.split = sum(len(v) == 1 for v in hits.values())
    score.right = sum(len(v) == 1 and str(v[0].tile) == tiles[i]["tile"] for i, v in hits.items())
    row_of = {p.id: k for k, row in enumerate(rows) for p in row}
    for true_row in true_rows:
        found = [row_of[p.id] for i in true_row for p in hits.get(i, [])]
        if not found:
            continue
        k = max(set(found), key=found.count)
        others = {on[p.id] for p in rows[k]} - set(true_row) - {None}
        others &= readable
        if found.count(k) >= 0.8 * len(true_row) and not others:
            score.tiers_found += 1
    read_rows = [[str(p.tile) for p in row if on[p.id] in readable] for row in rows]
    read_rows = [r for r in read_rows if r]
    want = [[tiles[i]["tile"] for i in row] for row in true_rows]
    score.exact = int(read_rows == want and score.extra == 0)
    return score


def shift(photo: np.ndarray, matrix: np.ndarray, pixels: int) -> tuple[np.ndarray, np.ndarray]:
    """The photo moved ``pixels`` right and down (its first rows and columns repeated, its last
    ones dropped: the same scene framed a pixel or two apart) and the matrix that maps to it."""
    if not pixels:
        return photo, matrix
    h, w = photo.shape[:2]
    padded = cv2.copyMakeBorder(photo, pixels, 0, pixels, 0, cv2.BORDER_REPLICATE)
    moved = matrix.copy()
    moved[:, 2] += pixels
    return np.ascontiguousarray(padded[:h, :w]), moved


def run(
    pipeline: Pipeline,
    racks: int,
    turns: tuple[int, ...],
    decide: bool = False,
    shifts: int = 0,
    same: list[int] | None = None,
) -> dict[tuple[str, int], Score]:
    """Every render of ``racks`` per kind, turned by each of ``turns``, read and scored.  With
    ``shifts``, each is also read moved 1..``shifts`` pixels (scored alike), and ``same`` counts
    [photos, photos whose rows came out the same tile for tile at every shift]."""
    out: dict[tuple[str, int], Score] = {}
    for kind in KINDS:
        for index in range(racks):
            image, truth = rendered(kind, index, decide)
            for degrees in turns:
                turned, turn_matrix = turn(image, degrees)
                readings = []
                for pixels in range(shifts + 1):
                    photo, matrix = shift(turned, turn_matrix, pixels)
                    t0 = time.perf_counter()
                    try:
                        result = pipeline.read(pipeline.recognizer.recognize(photo))
                    except NothingFoundError:
                        result = None
                    seconds = time.perf_counter() - t0
                    score = score_photo(result, truth, matrix)
                    score.seconds.append(seconds)
                    out.setdefault((kind, degrees), Score()).add(score)
                    rows = result.rows if result is not None else []
                    readings.append([[str(p.tile) for g in row for p in g] for row in rows])
                if same is not None:
                    same[0] += 1
                    same[1] += all(r == readings[0] for r in readings)
    return out


def phone_seconds(pipeline: Pipeline, count: int) -> list[float]:
    """Seconds from a 12 MP JPEG file to the advised hand, per photo."""
    import tempfile

    from vision.pipeline import load_image

    seconds = []
    with tempfile.TemporaryDirectory() as folder:
        for n in range(count):
            kind = KINDS[n % 4]  # the far kinds: a phone 40-80 cm from the stand
            image, _ = rendered(kind, n // 4)
            path = Path(folder) / f"{n}.jpg"
            big = cv2.resize(image, (4032, 3024), interpolation=cv2.INTER_CUBIC)
            cv2.imwrite(str(path), big, [cv2.IMWRITE_JPEG_QUALITY, 90])
            t0 = time.perf_counter()
            with contextlib.suppress(NothingFoundError):
                pipeline.scan(load_image(path), indicator="R5")
            seconds.append(time.perf_counter() - t0)
    return seconds


def real_racks(pipeline: Pipeline) -> dict[str, int]:
    """The rummy3 photos against their labelled tiers (``--real``)."""
    from vision.pipeline import load_image

    truth = json.loads((ROOT / "datasets" / "rummy3_tiers.json").read_text())["tiers"]
    out = dict.fromkeys(("tiers", "found", "racks", "exact", "tables", "as_tables"), 0)
    for source, tiers in truth.items():
        for path in sorted(
            (ROOT / "datasets" / "rummikub-real" / "images").glob(f"{source}_jpeg*")
        ):
            try:
                result = pipeline.read(pipeline.recognizer.recognize(load_image(path)))
                rows = [[str(p.tile) for g in row for p in g] for row in result.rows]
                reading = result.reading
            except NothingFoundError:
                rows, reading = [], "photo"
            if not tiers:
                out["tables"] += 1
                out["as_tables"] += reading == "photo"
                continue
            out["racks"] += 1
            out["tiers"] += len(tiers)
            out["exact"] += rows == tiers
            for k, tier in enumerate(tiers):
                others = {t for j, other in enumerate(tiers) if j != k for t in other}
                out["found"] += any(
                    sum(t in row for t in tier) >= 0.8 * len(tier) and not others & set(row)
                    for row in rows
                )
    return out


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.1f} %)" if b else "-"


def table(results: dict[str, dict[tuple[str, int], Score]]) -> str:
    lines = [
        "| bin | path | tiers found | tiles split | tiles right | extra | racks exact | median s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    bins = sorted(
        {key for r in results.values() for key in r}, key=lambda k: (KINDS.index(k[0]), k[1])
    )
    groups: dict[str, list[tuple[str, int]]] = {}
    for kind, degrees in bins:
        groups.setdefault(kind.replace("_far", " far").replace("_", " "), []).append(
            (kind, degrees)
        )
        groups.setdefault(f"turned {degrees}", []).append((kind, degrees))
    for name, keys in groups.items():
        for path, result in results.items():
            s = Score.total(result[key] for key in keys)
            lines.append(
                f"| {name} | {path} | {_pct(s.tiers_found, s.tiers)} | {_pct(s.split, s.tiles)} | "
                f"{_pct(s.right, s.tiles)} | {s.extra} | {_pct(s.exact, s.photos)} | "
                f"{np.median(s.seconds):.2f} |"
            )
    for path, result in results.items():
        s = Score.total(result.values())
        lines.append(
            f"| **all** | {path} | {_pct(s.tiers_found, s.tiers)} | {_pct(s.split, s.tiles)} | "
            f"{_pct(s.right, s.tiles)} | {s.extra} | {_pct(s.exact, s.photos)} | "
            f"{np.median(s.seconds):.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--racks", type=int, default=6, help="racks per kind (default 6)")
    parser.add_argument(
        "--turns", default=",".join(map(str, TURNS)), help="degrees, comma-separated"
    )
    parser.add_argument("--paths", default="tiers,photo", help="tiers, photo or both (default)")
    parser.add_argument("--phone", type=int, default=0, help="12 MP photos to time end to end")
    parser.add_argument("--real", action="store_true", help="also the real rummy3 rack photos")
    parser.add_argument(
        "--decide",
        action="store_true",
        help="the renders to decide a constant on (other racks, training styles), not the check",
    )
    parser.add_argument(
        "--way-up",
        help="a way-up model (.onnx) to read with instead of the manifest's, or 'none'",
    )
    parser.add_argument("--manifest", type=Path, help="a recogniser manifest to read with")
    parser.add_argument(
        "--shift",
        type=int,
        default=0,
        help="also read each photo moved 1..N pixels: the scores count every reading, and the "
        "photos read the same at every shift are counted (the noise under a decision)",
    )
    args = parser.parse_args(argv)
    turns = tuple(int(v) for v in args.turns.split(","))
    spec = RecognizerSpec.load(args.manifest) if args.manifest else RecognizerSpec.load()
    if args.way_up:
        way_up = None if args.way_up == "none" else Path(args.way_up).with_suffix("")
        spec = replace(spec, way_up=way_up)
    results = {}
    same: dict[str, list[int]] = {}
    for path in args.paths.split(","):
        recognizer = Recognizer(replace(spec, tiers=path == "tiers"))
        # the tier stage gives rows for any number of tiers; the whole-photo layout is told 3
        pipeline = Pipeline(recognizer, max_rows=3)
        same[path] = [0, 0]
        results[path] = run(pipeline, args.racks, turns, args.decide, args.shift, same[path])
    print(table(results))
    for path, result in results.items():
        s = Score.total(result.values())
        shown = _pct(s.shown_right, s.shown)
        print(f"{path}: half-hidden tiles whose numeral shows read right {shown}")
    if args.shift:
        for path, (photos, alike) in same.items():
            print(
                f"{path}: {_pct(alike, photos)} of the photos read the same rows, tile for tile, "
                f"moved 0-{args.shift} pixels"
            )
    if args.real:
        print("\n| real rummy3 photos | path | tiers found | racks exact | tables read as tables |")
        print("|---|---|---|---|---|")
        for path in args.paths.split(","):
            recognizer = Recognizer(replace(spec, tiers=path == "tiers"))
            r = real_racks(Pipeline(recognizer, max_rows=3))
            print(
                f"| 14 racks x 3 copies, 9 tables x 3 | {path} | {_pct(r['found'], r['tiers'])} | "
                f"{_pct(r['exact'], r['racks'])} | {_pct(r['as_tables'], r['tables'])} |"
            )
    if args.phone:
        seconds = sorted(phone_seconds(Pipeline(Recognizer(spec), max_rows=3), args.phone))
        p95 = seconds[min(len(seconds) - 1, int(round(0.95 * (len(seconds) - 1))))]
        print(
            f"12 MP photo, file to advised hand: median {np.median(seconds):.2f} s, "
            f"p95 {p95:.2f} s over {len(seconds)} photos"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
