"""``istaka scan`` (a photo) and ``istaka live`` (a camera or a video): the pipeline at the table.

Exit codes: 0 read, 2 bad input (missing file, not an image, bad tile), 3 no tiles or no rack row.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from istaka.cli import EXIT_NOT_FOUND, EXIT_OK, InputError
from okey import Rules, Tile, parse_tiles


def register(subparsers: Any) -> None:
    scan = subparsers.add_parser(
        "scan",
        help="read a rack photo: the hand as laid out, flagged tiles, verdict and advice",
        description="Read a rack photo: rows and groups as laid out, uncertain tiles, the "
        "referee's verdict (14 tiles, or 15 with --declare) and the discard advice (15 tiles).",
    )
    scan.add_argument("photo", help="image file (JPEG, PNG, ...)")
    _game_options(scan)
    scan.add_argument(
        "--declare",
        action="store_true",
        help="the player declares a win: with 15 tiles, the lone tile is the finishing discard",
    )
    scan.add_argument("--json", action="store_true", help="print the result as one JSON object")
    scan.add_argument(
        "--annotate", metavar="OUT.png", help="write the photo with the reading drawn"
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
    live.add_argument("--out", metavar="OUT.mp4", help="write the annotated video here (headless)")
    live.add_argument("--max-frames", type=int, default=0, help="stop after N frames (0: no limit)")
    _game_options(live)
    live.set_defaults(func=run_live)


def _game_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--indicator", help="the indicator tile, e.g. R5 (else a lone table tile)")
    parser.add_argument("--rules", choices=["classic", "okey101"], default="classic")
    parser.add_argument("--seen", default="", help='tiles seen elsewhere, e.g. "K3 Y7"')
    parser.add_argument("--backend", choices=["onnx", "torch"], help="recogniser engine")


def _parse_game(args: argparse.Namespace) -> tuple[Tile | None, Rules, list[Tile]]:
    indicator = Tile.parse(args.indicator) if args.indicator else None
    if indicator is not None and indicator.is_false_joker:
        raise InputError("--indicator: the indicator can never be a false joker")
    return indicator, Rules.preset(args.rules), parse_tiles(args.seen)


def run_scan(args: argparse.Namespace) -> int:
    from vision.pipeline import NothingFoundError, Pipeline, load_image

    indicator, rules, seen = _parse_game(args)
    if args.annotate and Path(args.annotate).suffix.lower() not in (".png", ".jpg", ".jpeg"):
        raise InputError(f"--annotate {args.annotate}: write a .png or .jpg file")
    image = load_image(args.photo)
    pipeline = Pipeline.default(args.backend)
    try:
        result = pipeline.scan(
            image, indicator=indicator, rules=rules, seen=seen, declare=args.declare
        )
    except NothingFoundError as exc:
        print(f"istaka scan: {args.photo}: {exc}", file=sys.stderr)
        return EXIT_NOT_FOUND
    if args.annotate:
        _write_annotated(args.annotate, image, result)
    text = json.dumps(result.to_dict(), ensure_ascii=False) if args.json else format_result(result)
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `istaka scan ... | head`: the reader left, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK


def _write_annotated(path: str, image: Any, result: Any) -> None:
    import cv2

    from vision.draw import annotate

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), annotate(image, result)):
        raise InputError(f"--annotate: cannot write {path}")


def format_result(result: Any) -> str:
    """The scan as a player reads it: rows with groups in brackets, then what to do."""
    lines = [f"Rack ({result.rules.name}): {len(result.hand)} tiles in {len(result.rows)} row(s)"]
    for r, row in enumerate(result.rows, 1):
        groups = "  ".join("[" + " ".join(_tile_text(p) for p in group) + "]" for group in row)
        lines.append(f"  row {r}: {groups}")
    if result.table:
        lines.append("Table: " + " ".join(_tile_text(p) for p in result.table))
    if result.indicator is not None:
        source = " (the tile on the table)" if result.indicator_source == "table" else ""
        lines.append(f"Indicator {result.indicator}{source}, okey {result.okey}")
    if result.flagged:
        lines.append("Uncertain (marked ?): " + "; ".join(f.text for f in result.flagged))
    if result.verdict is not None:
        lines.append("Verdict: " + (result.verdict.sentence or result.verdict.reason))
    if result.advice is not None:
        lines.append("Advice: " + result.advice.sentence)
    lines.extend(f"Hint: {h}" for h in result.hints)
    lines.extend(f"Note: {w}" for w in result.warnings)
    return "\n".join(lines)


def _tile_text(placed: Any) -> str:
    return f"{placed.tile}{'?' if placed.flagged else ''}{'*' if placed.corrected else ''}"


def run_live(args: argparse.Namespace) -> int:
    import cv2

    from vision.draw import annotate
    from vision.pipeline import NothingFoundError, Pipeline
    from vision.smoothing import HandTracker

    indicator, rules, seen = _parse_game(args)
    window = not args.out and _has_display()
    if not args.out and not window:
        raise InputError("no display here: give --out OUT.mp4 to write the annotated video")
    capture = _open_source(args)
    pipeline = Pipeline.default(args.backend, background_engine=True)
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
            drawn = annotate(frame, result, fps=fps) if result else _no_hand(frame, fps)
            elapsed = time.perf_counter() - start
            fps = 1 / elapsed if fps is None else 0.9 * fps + 0.1 / max(elapsed, 1e-6)
            frames += 1
            hand = tuple(str(t) for t in result.hand) if result else ()
            if hand != last_hand:
                last_hand = hand
                print(f"frame {frames}: {_live_line(result)}", flush=True)
            if args.out:
                writer = writer or _open_writer(args.out, drawn.shape, capture)
                writer.write(drawn)
            else:
                cv2.imshow("istaka live", drawn)
                if cv2.waitKey(1) & 0xFF in (27, ord("q")):
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


def _open_writer(path: str, shape: tuple[int, ...], capture: Any) -> Any:
    import cv2

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    rate = capture.get(cv2.CAP_PROP_FPS) or 15.0
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"mp4v"), rate, (shape[1], shape[0]))
    if not writer.isOpened():
        raise InputError(f"--out: cannot write video {path}")
    return writer


def _no_hand(frame: Any, fps: float | None) -> Any:
    import cv2

    out = frame.copy()
    text = "no rack in view" + (f"  {fps:.1f} fps" if fps else "")
    cv2.putText(out, text, (10, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 255), 2, cv2.LINE_AA)
    return out


def _live_line(result: Any) -> str:
    if result is None:
        return "no rack in view"
    text = " ".join(str(t) for t in result.hand)
    discard = result.discard
    if discard is not None:
        text += f"  -> discard {discard.tile}"
    return text
