"""``istaka scan`` (photos) and ``istaka live`` (a camera or a video): the pipeline at the table.

``istaka scan`` takes photos, folders (their images, sorted by name) and quoted globs
(``"shots/*.jpg"``); with more than one photo it draws a progress bar on a terminal's stderr and,
with ``--json``, prints one JSON object per line, each with its ``"photo"``.

Exit codes: 0 read, 2 bad input (missing file, not an image, bad tile), 3 no tiles or no rack row
(with several photos: the worst of them).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from istaka.calibrate import correction_options, keep_corrections, parse_corrections, profile_option
from istaka.cli import EXIT_BAD_INPUT, EXIT_NOT_FOUND, EXIT_OK, InputError
from okey import Rules, Tile, parse_tiles
from vision.engines import BACKENDS

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".heic", ".heif", ".bmp", ".webp", ".tif", ".tiff")
# Video containers ``istaka live --out`` writes, with the codecs tried in order: browsers play
# H.264 in MP4 and VP9 / VP8 in WebM; MPEG-4 Part 2 ("mp4v") is the last resort most players
# outside a browser still open.
VIDEO_CODECS = {".mp4": ("avc1", "mp4v"), ".webm": ("VP90", "VP80"), ".avi": ("MJPG",)}
BROWSER_CODECS = frozenset({"avc1", "VP90", "VP80"})


def register(subparsers: Any) -> None:
    scan = subparsers.add_parser(
        "scan",
        help="read a rack photo: the hand as laid out, flagged tiles, verdict and advice",
        description="Read a rack photo: rows and groups as laid out, uncertain tiles, the "
        "referee's verdict (14 tiles, or 15 with --declare) and the discard advice (15 tiles).",
    )
    scan.add_argument(
        "photos",
        nargs="+",
        metavar="PHOTO",
        help='image files (JPEG, PNG, ...), folders of them, or quoted globs ("shots/*.jpg")',
    )
    _game_options(scan)
    _scene_option(scan)
    correction_options(scan)
    scan.add_argument(
        "--declare",
        action="store_true",
        help="the player declares a win: with 15 tiles, the lone tile is the finishing discard",
    )
    scan.add_argument(
        "--json", action="store_true", help="print each result as one JSON object (one a line)"
    )
    scan.add_argument(
        "--annotate",
        metavar="OUT.png",
        help="write the photo with the reading drawn (several photos: a folder, one PNG each)",
    )
    scan.set_defaults(func=run_scan)

    live = subparsers.add_parser(
        "live",
        help="camera or video with the reading drawn live (headless into a file with --out)",
        description="Read a rack from a camera or a video, smoothed across frames; draw boxes, "
        "readings, groups, advice and frames per second; show a window or write --out.",
    )
    source = live.add_mutually_exclusive_group()
    source.add_argument("--camera", type=int, default=0, help="camera number (default 0)")
    source.add_argument("--video", metavar="FILE", help="read this video file instead")
    live.add_argument(
        "--out",
        metavar="OUT.mp4",
        help="write the annotated video here (headless): .mp4 (H.264 where this OpenCV has it),"
        " .webm (VP9/VP8, plays in every browser) or .avi",
    )
    live.add_argument("--max-frames", type=int, default=0, help="stop after N frames (0: no limit)")
    _game_options(live)
    _scene_option(live)
    live.set_defaults(func=run_live)


def _game_options(parser: argparse.ArgumentParser) -> None:
    profile_option(parser)
    parser.add_argument("--indicator", help="the indicator tile, e.g. R5 (else a lone table tile)")
    parser.add_argument("--rules", choices=["classic", "okey101"], default="classic")
    parser.add_argument("--seen", default="", help='tiles seen elsewhere, e.g. "K3 Y7"')
    parser.add_argument("--backend", choices=BACKENDS, help="recogniser engine")


def _scene_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scene",
        choices=["rack", "table"],
        default="rack",
        help="rack: a player's rack (default); table: the tiles lying face up on the table "
        "(indicator, discard piles, melds) read as the game's seen tiles",
    )


def _parse_game(args: argparse.Namespace) -> tuple[Tile | None, Rules, list[Tile]]:
    indicator = Tile.parse(args.indicator) if args.indicator else None
    if indicator is not None and indicator.is_false_joker:
        raise InputError("--indicator: the indicator can never be a false joker")
    return indicator, Rules.preset(args.rules), parse_tiles(args.seen)


def run_scan(args: argparse.Namespace) -> int:
    from vision.pipeline import Pipeline

    indicator, rules, seen = _parse_game(args)
    if args.scene == "table":
        from istaka.table import run_table_scan

        return run_table_scan(args, indicator, rules)
    photos = photo_paths(args.photos)
    several = len(photos) > 1 or len(args.photos) > 1 or Path(args.photos[0]).is_dir()
    if args.annotate:
        suffix = Path(args.annotate).suffix.lower()
        if several and suffix:
            raise InputError(f"--annotate {args.annotate}: with several photos, give a folder")
        if not several and suffix not in (".png", ".jpg", ".jpeg"):
            raise InputError(f"--annotate {args.annotate}: write a .png or .jpg file")
    options = {"indicator": indicator, "rules": rules, "seen": seen, "declare": args.declare}
    options["corrections"] = parse_corrections(args.correct, several)
    pipeline = Pipeline.default(args.backend, profile=args.profile)
    if not several:
        return _scan_one(pipeline, photos[0], options, args)
    worst = EXIT_OK
    with _progress(len(photos)) as step:
        for path in photos:
            step(path)
            code = _scan_one(pipeline, path, options, args, several=True)
            worst = max(worst, code, key=_severity)
    return worst


def _severity(code: int) -> int:
    return {EXIT_OK: 0, EXIT_NOT_FOUND: 1, EXIT_BAD_INPUT: 2}.get(code, 3)


def photo_paths(arguments: list[str]) -> list[Path]:
    """The photos named by files, folders (their images, sorted) and globs, in the order given.

    A name that is not a file, a folder or a glob that matches is ``FileNotFoundError``."""
    photos: list[Path] = []
    for text in arguments:
        path = Path(text)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            if not found:
                raise InputError(f"no photos in {path} ({', '.join(IMAGE_SUFFIXES)})")
            photos.extend(found)
        elif path.is_file():
            photos.append(path)
        elif glob.has_magic(text):
            found = sorted(
                Path(p)
                for p in glob.glob(text, recursive=True)
                if Path(p).suffix.lower() in IMAGE_SUFFIXES
            )
            if not found:
                raise InputError(f"no photos match {text}")
            photos.extend(found)
        else:
            raise FileNotFoundError(f"no such file: {text}")
    return photos


def _scan_one(
    pipeline: Any,
    path: Path,
    options: dict[str, Any],
    args: argparse.Namespace,
    *,
    several: bool = False,
) -> int:
    """Scan one photo and print its result; with ``several``, a photo's own trouble is printed
    (a JSON line with ``"error"``, or a line on stderr) and its exit code returned."""
    from vision.errors import VisionInputError
    from vision.pipeline import NothingFoundError, load_image

    try:
        image = load_image(path)
        result = pipeline.scan(image, **options)
        keep_corrections(image, result, args)
    except NothingFoundError as exc:
        _report(path, "not_found", exc, args.json and several)
        return EXIT_NOT_FOUND
    except (VisionInputError, FileNotFoundError) as exc:
        if not several:
            raise
        _report(path, "bad_input", exc, args.json)
        return EXIT_BAD_INPUT
    if args.annotate:
        target = Path(args.annotate) / f"{path.stem}.png" if several else Path(args.annotate)
        _write_annotated(str(target), image, result)
    if args.json:
        data = result.to_dict()
        text = json.dumps({"photo": str(path), **data} if several else data, ensure_ascii=False)
    else:
        text = format_result(result)
        if several:
            text = f"== {path}\n{text}\n"
    _print(text)
    return EXIT_OK


def _report(path: Path, code: str, exc: Exception, as_json: bool) -> None:
    if as_json:
        _print(json.dumps({"photo": str(path), "error": {"code": code, "message": str(exc)}}))
    else:
        _clear_progress()
        print(f"istaka scan: {path}: {exc}", file=sys.stderr)


def _print(text: str) -> None:
    _clear_progress()
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `istaka scan ... | head`: the reader left, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise


_BAR = {"shown": False}


@contextlib.contextmanager
def _progress(total: int) -> Iterator[Any]:
    """A progress bar on stderr when it is a terminal (never in a pipe or a log file)."""
    live = sys.stderr.isatty()
    done = [0]

    def step(path: Path) -> None:
        if not live:
            return
        width = 30
        filled = width * done[0] // total
        name = path.name if len(path.name) <= 40 else "…" + path.name[-39:]
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\r[{bar}] {done[0]}/{total} {name}\x1b[K")
        sys.stderr.flush()
        _BAR["shown"] = True
        done[0] += 1

    try:
        yield step
    finally:
        if live:
            _clear_progress()
            sys.stderr.write(f"{total} photos read\n")


def _clear_progress() -> None:
    if _BAR["shown"]:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
        _BAR["shown"] = False


def _write_annotated(path: str, image: Any, result: Any) -> None:
    import cv2

    from vision.draw import annotate

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), annotate(image, result)):
        raise InputError(f"--annotate: cannot write {path}")


def format_result(result: Any) -> str:
    """The scan as a player reads it: rows with groups in brackets, then what to do."""
    how = (
        f"{len(result.rows)} tier(s), read tier by tier"
        if result.reading == "tiers"
        else f"{len(result.rows)} row(s), read from the whole photo"
    )
    lines = [f"Rack ({result.rules.name}): {len(result.hand)} tiles in {how}"]
    for r, row in enumerate(result.rows, 1):
        groups = "  ".join("[" + " ".join(_tile_text(p) for p in group) + "]" for group in row)
        lines.append(f"  row {r}: {groups}")
    if result.table:
        lines.append("Table: " + " ".join(_tile_text(p) for p in result.table))
    lines.append(result.indicator_text)
    if result.flagged:
        lines.append("Uncertain (marked ?): " + "; ".join(f.text for f in result.flagged))
    if result.verdict is not None:
        unconfirmed = result.verdict.valid and result.indicator_source == "photo"
        lines.append(
            "Verdict: "
            + (result.verdict.sentence or result.verdict.reason)
            + (f" (if the indicator is {result.indicator}: not confirmed)" * unconfirmed)
        )
    if result.advice is not None:
        lines.append("Advice: " + result.advice.sentence)
    lines.extend(f"Hint: {h}" for h in result.hints)
    lines.extend(f"Note: {w}" for w in result.warnings)
    return "\n".join(lines)


def _tile_text(placed: Any) -> str:
    return f"{placed.tile}{'?' if placed.flagged else ''}{'*' if placed.corrected else ''}"


def run_live(args: argparse.Namespace) -> int:

    from vision.draw import annotate
    from vision.pipeline import NothingFoundError, Pipeline
    from vision.smoothing import HandTracker

    indicator, rules, seen = _parse_game(args)
    if args.scene == "table":
        from istaka.table import run_table_live

        return run_table_live(args, indicator, rules)
    if args.out and Path(args.out).suffix.lower() not in VIDEO_CODECS:
        raise InputError(f"--out {args.out}: write a {', '.join(VIDEO_CODECS)} file")
    window = not args.out and _has_display()
    if not args.out and not window:
        raise InputError("no display here: give --out OUT.mp4 to write the annotated video")
    capture = _open_source(args)
    pipeline = Pipeline.default(args.backend, background_engine=True, profile=args.profile)
    tracker = HandTracker()
    writer = None
    fps = None
    frames = 0
    last_hand: tuple | None = None
    try:
        while not args.max_frames or frames < args.max_frames:
            ok, frame = capture.read()
            if not ok:
                break
            start = time.perf_counter()
            tracked = tracker.update(pipeline.recognizer.recognize(frame))
            try:
                result = pipeline.read(tracked, indicator=indicator, rules=rules, seen=seen)
            except NothingFoundError:
                result = None
            drawn = annotate(frame, result, fps=fps, band=True) if result else _no_hand(frame, fps)
            elapsed = time.perf_counter() - start
            fps = 1 / elapsed if fps is None else 0.9 * fps + 0.1 / max(elapsed, 1e-6)
            frames += 1
            hand = tuple(str(t) for t in result.hand) if result else ()
            if hand != last_hand:
                last_hand = hand
                print(f"frame {frames}: {_live_line(result)}", flush=True)
            writer, stop = show_frame(drawn, args.out, writer, capture, "istaka live")
            if stop:
                break
    finally:
        capture.release()
        if writer is not None:
            writer.release()
    if frames == 0:
        raise InputError("no frames could be read from the source")
    print(
        f"{frames} frames, {fps or 0:.1f} frames per second"
        + (f", wrote {args.out}" * bool(args.out))
    )
    return EXIT_OK


def _has_display() -> bool:
    return sys.platform in ("win32", "darwin") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def _open_source(args: argparse.Namespace) -> Any:
    import cv2

    # A missing camera makes OpenCV log several lines; the one-line message below says it all.
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    if args.video:
        if not Path(args.video).is_file():
            raise FileNotFoundError(f"no such file: {args.video}")
        capture = cv2.VideoCapture(args.video)
        what = args.video
    else:
        capture = cv2.VideoCapture(args.camera)
        what = f"camera {args.camera}"
    if not capture.isOpened():
        raise InputError(f"cannot open {what}")
    return capture


def show_frame(
    drawn: Any, out: str | None, writer: Any, capture: Any, title: str
) -> tuple[Any, bool]:
    """A drawn frame written to ``out`` (the writer opened on the first frame) or shown in a
    window titled ``title``; the writer, and whether the viewer asked to stop (Esc or q)."""
    import cv2

    if out:
        writer = writer or _open_writer(out, drawn.shape, capture)
        writer.write(drawn)
        return writer, False
    cv2.imshow(title, drawn)
    return writer, cv2.waitKey(1) & 0xFF in (27, ord("q"))


def _open_writer(path: str, shape: tuple[int, ...], capture: Any) -> Any:
    """A video writer for ``path``: the first codec of ``VIDEO_CODECS`` this OpenCV can write,
    with a note on stderr when browsers will not play it."""
    import cv2

    out = Path(path)
    codecs = VIDEO_CODECS.get(out.suffix.lower())
    if codecs is None:
        raise InputError(f"--out {path}: write a {', '.join(VIDEO_CODECS)} file")
    out.parent.mkdir(parents=True, exist_ok=True)
    rate = capture.get(cv2.CAP_PROP_FPS) or 15.0
    for codec in codecs:
        with _quiet_stderr():  # FFmpeg logs each encoder it cannot open
            writer = cv2.VideoWriter(
                path, cv2.VideoWriter_fourcc(*codec), rate, (shape[1], shape[0])
            )
        if writer.isOpened():
            if codec not in BROWSER_CODECS:
                print(
                    f"istaka live: this OpenCV cannot write H.264; {path} is {codec} video, which"
                    " browsers do not play (--out NAME.webm writes VP9 that they do)",
                    file=sys.stderr,
                )
            return writer
        writer.release()
    raise InputError(f"--out: cannot write video {path}")


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _no_hand(frame: Any, fps: float | None) -> Any:
    from vision.draw import header_band

    return header_band(frame, ["no rack in view" + (f"  {fps:.1f} fps" if fps else "")])


def _live_line(result: Any) -> str:
    if result is None:
        return "no rack in view"
    text = " ".join(str(t) for t in result.hand)
    discard = result.discard
    if discard is not None:
        text += f"  -> discard {discard.tile}"
    return text
