"""``istaka synth``: render labelled synthetic rack photos, a preview sheet, or a video.

Examples::

    istaka synth --n 1000 --seed 1 --out datasets/build/synth --workers 2
    istaka synth --n 200 --seed 9001 --out datasets/synth_eval --style-pool heldout --quality 85
    istaka synth --preview docs/img/synth_preview.png
    istaka synth --video rack.y4m --frames 90 --seed 3
    istaka synth --video game.mp4 --scene table --frames 240 --seed 3   # a table game
"""

from __future__ import annotations

import argparse
from pathlib import Path

from istaka.cli import InputError


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 640x480, got {text!r}") from None
    if not (64 <= w <= 4096 and 64 <= h <= 4096):
        raise argparse.ArgumentTypeError(f"size {text!r} out of range 64..4096")
    return w, h


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "synth",
        help="render synthetic labelled Okey rack photos (YOLO labels + JSON sidecars)",
        description="Render photo-like Okey racks with YOLO labels and JSON ground truth.",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--out", type=Path, help="output folder (images/, labels/, sidecars/, data.yaml)"
    )
    what.add_argument(
        "--preview", type=Path, metavar="OUT.png", help="write a contact sheet with boxes"
    )
    what.add_argument(
        "--video",
        type=Path,
        metavar="OUT.mp4|OUT.y4m",
        help="write a video of one rack (--scene table: a game filmed from above)",
    )
    p.add_argument("--n", type=int, default=100, help="number of images (default 100)")
    p.add_argument("--seed", type=int, default=0, help="run seed; image i uses (seed, i)")
    p.add_argument(
        "--start", type=int, default=0, help="index of the first image (to extend a run)"
    )
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    p.add_argument(
        "--style-pool", default="train", help="style pool: train, heldout, ... (default train)"
    )
    p.add_argument("--rules", choices=("classic", "okey101"), default=None, help="default: mixed")
    p.add_argument(
        "--scene",
        default="rack",
        help="rack: the player's rack (default); table: groups lying on the table at any angle; "
        "tiers, tiers_paste: close-ups of tiered racks; real_reframe: real training photos "
        "framed again (docs/synth.md)",
    )
    p.add_argument(
        "--labels",
        choices=("box", "obb"),
        default="box",
        help="box: upright YOLO boxes (default); obb: oriented boxes, for an OBB detector",
    )
    p.add_argument("--size", type=_size, default=(640, 480), help="WIDTHxHEIGHT (default 640x480)")
    p.add_argument(
        "--quality", type=int, default=90, help="JPEG quality of saved images (default 90)"
    )
    p.add_argument("--frames", type=int, default=60, help="video frames (default 60)")
    p.add_argument("--fps", type=int, default=15, help="video frame rate (default 15)")
    p.add_argument("--count", type=int, default=12, help="preview images (default 12)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vision.training.synth.dataset import SCENES
    from vision.training.synth.styles import POOLS

    if args.style_pool not in POOLS:
        raise InputError(f"--style-pool must be one of {', '.join(sorted(POOLS))}")
    if args.scene not in SCENES:
        raise InputError(f"--scene must be one of {', '.join(SCENES)}")
    if not 10 <= args.quality <= 100:
        raise InputError(f"--quality must be 10..100, got {args.quality}")
    if args.seed < 0 or args.start < 0:
        raise InputError(f"--seed and --start must be >= 0, got {args.seed} and {args.start}")
    if args.preview is not None:
        return _preview(args)
    if args.video is not None:
        return _video(args)
    from vision.training.synth.dataset import render_dataset

    if args.n < 1:
        raise InputError(f"--n must be at least 1, got {args.n}")
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    names = render_dataset(
        args.out,
        args.n,
        args.seed,
        workers=args.workers,
        pool_name=args.style_pool,
        size=args.size,
        quality=args.quality,
        rules=args.rules,
        start=args.start,
        progress=not args.quiet,
        scene=args.scene,
        labels=args.labels,
    )
    print(f"wrote {len(names)} images to {args.out} ({args.out / 'data.yaml'})")
    return 0


def _preview(args: argparse.Namespace) -> int:
    import cv2

    from vision.training.synth.preview import contact_sheet

    if args.preview.suffix.lower() != ".png":
        raise InputError(f"--preview writes a PNG; got {args.preview}")
    if args.count < 1:
        raise InputError(f"--count must be at least 1, got {args.count}")
    sheet = contact_sheet(
        args.seed, args.count, pool_name=args.style_pool, size=args.size, scene=args.scene
    )
    args.preview.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.preview), sheet, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(f"wrote {args.preview} ({args.count} images)")
    return 0


def _video(args: argparse.Namespace) -> int:
    from vision.training.synth.video import render_video, write_video

    suffix = args.video.suffix.lower()
    if suffix not in (".mp4", ".y4m"):
        raise InputError(f"--video must end in .mp4 or .y4m, got {args.video}")
    if args.frames < 1:
        raise InputError(f"--frames must be at least 1, got {args.frames}")
    if args.size[0] % 2 or args.size[1] % 2:
        raise InputError(f"--size must be even for a video, got {args.size[0]}x{args.size[1]}")
    if args.scene == "table":  # a game filmed from above, ten frames a turn (docs/table.md)
        from vision.training.synth.table_game import render_table_game

        turns = -(-args.frames // 10)
        frames, truths = render_table_game(args.seed, turns, 10, args.size, args.style_pool)
        frames, truths = frames[: args.frames], truths[: args.frames]
    else:
        frames, truths = render_video(
            args.seed, args.frames, size=args.size, pool_name=args.style_pool
        )
    write_video(args.video, frames, args.fps)
    sidecar = args.video.with_suffix(".json")
    import json

    sidecar.write_text(json.dumps({"fps": args.fps, "frames": truths}, separators=(",", ":")))
    print(f"wrote {args.video} ({len(frames)} frames) and {sidecar}")
    return 0
