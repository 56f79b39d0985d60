"""``istaka scan --scene table`` and ``istaka live --scene table``: the tiles lying face up on the
table (the indicator, the discard piles, 101's melds) read as the game's ``seen`` tiles.

``scan`` prints, per photo, the melds, the other tiles and the seen tiles in notation (``--json``:
``vision.table.TableScan.to_dict``); ``live`` follows a game over a camera's or a video's frames
(``vision.table_tracker.TableTracker``), prints each change with its frame, and draws the seen
tiles over the picture.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from istaka.cli import EXIT_BAD_INPUT, EXIT_NOT_FOUND, EXIT_OK, InputError
from okey import Rules, Tile


def _table_only(args: argparse.Namespace) -> None:
    """Options that mean something for a rack only are refused, not ignored."""
    if getattr(args, "declare", False):
        raise InputError("--declare: a table has no hand to declare (use --scene rack)")
    if getattr(args, "correct", None):
        raise InputError("--correct: corrections of a table scene are made on the table's page")
    if args.seen:
        raise InputError("--seen: a table scene reads the seen tiles itself")


def run_table_scan(args: argparse.Namespace, indicator: Tile | None, rules: Rules) -> int:
    from istaka.scan import _print, _report, _severity, photo_paths
    from vision.errors import NothingFoundError, VisionInputError
    from vision.pipeline import load_image
    from vision.table import TableReader

    _table_only(args)
    photos = photo_paths(args.photos)
    several = len(photos) > 1 or len(args.photos) > 1 or Path(args.photos[0]).is_dir()
    if args.annotate and several and Path(args.annotate).suffix:
        raise InputError(f"--annotate {args.annotate}: with several photos, give a folder")
    if (
        args.annotate
        and not several
        and Path(args.annotate).suffix.lower()
        not in (
            ".png",
            ".jpg",
            ".jpeg",
        )
    ):
        raise InputError(f"--annotate {args.annotate}: write a .png or .jpg file")
    # one photo at a time: no tracker reads a pile's tiles the other ways up
    reader = TableReader.default(args.backend, profile=args.profile, ways=False)
    worst = EXIT_OK
    for path in photos:
        try:
            image = load_image(path)
            scan = reader.read(image, indicator=indicator, rules=rules)
        except NothingFoundError as exc:
            _report(path, "not_found", exc, args.json and several)
            worst = max(worst, EXIT_NOT_FOUND, key=_severity)
            continue
        except (VisionInputError, FileNotFoundError) as exc:
            if not several:
                raise
            _report(path, "bad_input", exc, args.json)
            worst = max(worst, EXIT_BAD_INPUT, key=_severity)
            continue
        if args.annotate:
            _write(
                Path(args.annotate) / f"{path.stem}.png" if several else Path(args.annotate),
                image,
                scan,
            )
        if args.json:
            data = scan.to_dict()
            _print(json.dumps({"photo": str(path), **data} if several else data))
        else:
            text = format_table(scan)
            _print(f"== {path}\n{text}\n" if several else text)
    return worst


def _write(path: Path, image: Any, scan: Any) -> None:
    import cv2

    from vision.table import draw_table

    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), draw_table(image, scan)):
        raise InputError(f"--annotate: cannot write {path}")


def format_table(scan: Any) -> str:
    """A table scan as a player reads it: melds, the other tiles, the seen tiles, the indicator."""
    from okey import okey_for

    by_id = {t.id: t for t in scan.tiles}
    lines = [f"Table ({scan.rules.name}): {len(scan.tiles)} tiles face up"]
    for m, meld in enumerate(scan.melds, 1):
        lines.append(f"  meld {m}: [" + " ".join(str(by_id[i].tile) for i in meld) + "]")
    others = [t for t in scan.tiles if t.meld is None]
    if others:
        lines.append("  lying apart: " + " ".join(_named(t) for t in others))
    lines.append("Seen: " + " ".join(str(t) for t in sorted(scan.seen)))
    if scan.indicator is not None:
        how = "typed" if scan.indicator_source == "typed" else "on the face-down stacks"
        lines.append(f"Indicator {scan.indicator} ({how}), okey {okey_for(scan.indicator)}")
    lines.extend(f"Note: {w}" for w in scan.warnings)
    return "\n".join(lines)


def _named(tile: Any) -> str:
    return f"{tile.tile}(indicator)" if tile.role == "indicator" else str(tile.tile)


def run_table_live(args: argparse.Namespace, indicator: Tile | None, rules: Rules) -> int:

    from istaka.scan import _has_display, _open_source, show_frame
    from vision.table import TableReader, draw_table
    from vision.table_tracker import TableTracker

    _table_only(args)
    window = not args.out and _has_display()
    if not args.out and not window:
        raise InputError("no display here: give --out OUT.webm to write the annotated video")
    capture = _open_source(args)
    reader = TableReader.default(args.backend, profile=args.profile)
    tracker: TableTracker | None = None
    writer = None
    frames = 0
    fps: float | None = None
    try:
        while not args.max_frames or frames < args.max_frames:
            ok, frame = capture.read()
            if not ok:
                break
            start = time.perf_counter()
            if tracker is None:
                h, w = frame.shape[:2]
                tracker = TableTracker(image_size=(w, h), indicator=indicator)
            scan = reader.read(frame, indicator=indicator, rules=rules, require_tiles=False)
            for change in tracker.update(frames, scan.tiles):
                print(f"frame {frames}: {change_text(change)}", flush=True)
            drawn = draw_table(frame, scan, live_lines(tracker, fps))
            elapsed = time.perf_counter() - start
            fps = 1 / elapsed if fps is None else 0.9 * fps + 0.1 / max(elapsed, 1e-6)
            frames += 1
            writer, stop = show_frame(drawn, args.out, writer, capture, "istaka live (table)")
            if stop:
                break
    finally:
        capture.release()
        if writer is not None:
            writer.release()
    if frames == 0 or tracker is None:
        raise InputError("no frames could be read from the source")
    print(
        f"{frames} frames, {fps or 0:.1f} frames per second; seen ({len(tracker.seen)}): "
        + " ".join(str(t) for t in sorted(tracker.seen))
        + (f"; wrote {args.out}" * bool(args.out))
    )
    return EXIT_OK


def change_text(change: Any) -> str:
    """One change as a line: ``+ R5 (pile right)``, ``taken K7 from the left pile``, ..."""
    if change.kind == "added":
        return f"+ {change.tile} ({change.pile})"
    if change.kind == "taken":
        return f"taken {change.tile} from the {change.pile} pile"
    if change.kind == "returned":
        return f"{change.tile} back on the {change.pile} pile (it was only hidden)"
    if change.kind == "removed":
        return f"- {change.was} (change {change.of}: no tile)"
    return f"{change.was} -> {change.tile} (change {change.of} corrected)"


def live_lines(tracker: Any, fps: float | None) -> list[str]:
    seen = sorted(tracker.seen)
    head = f"seen {len(seen)}: " + " ".join(str(t) for t in seen[:24])
    if len(seen) > 24:
        head += " ..."
    taken = tracker.taken
    lines = [head]
    if taken:
        lines.append("taken: " + " ".join(f"{c.tile}<{c.pile}" for c in taken[-8:]))
    if fps:
        lines[-1] += f"   {fps:.1f} fps"
    return lines
