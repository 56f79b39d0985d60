"""``istaka train``, ``istaka eval`` and ``istaka export``: the model's life on the command line.

Examples::

    istaka train models/tile_detector.yaml [--resume] [--device 0 --workers 8]
    istaka eval datasets/real_val --png runs/eval/real_val.png [--backend torch] [--json OUT]
    istaka export                      # ONNX files next to the shipped .pt weights
    istaka prepare real_obb            # the real photos as a YOLO set (oriented boxes)
    istaka crops --src datasets/build/real --out datasets/build/crops --copies 3
    istaka way-up build && istaka way-up train   # the way-up model (models/tile_up.onnx)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vision.engines import BACKENDS

MANIFEST_HELP = "recogniser manifest (default models/recognizer.yaml)"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the train, eval and export subcommands."""
    p = subparsers.add_parser("train", help="train a recognition model from a config in models/")
    p.add_argument("config", type=Path, help="training config, e.g. models/tile_detector.yaml")
    p.add_argument("--resume", action="store_true", help="continue runs/<name>/weights/last.pt")
    p.add_argument("--epochs", type=int, help="override the config's epochs")
    p.add_argument("--device", help="ultralytics device, e.g. 0 for the first GPU (default cpu)")
    p.add_argument(
        "--workers", type=int, help="data loader, render and crop-export processes (default 2)"
    )
    p.set_defaults(func=_train)

    p = subparsers.add_parser("eval", help="measure the recogniser on labelled images")
    p.add_argument("data", type=Path, help="folder of images with YOLO labels, or a data YAML")
    p.add_argument("--manifest", type=Path, help=MANIFEST_HELP)
    p.add_argument("--backend", choices=BACKENDS, help="default: the manifest's")
    p.add_argument("--png", type=Path, default=Path("runs/eval/confusion.png"))
    p.add_argument("--json", type=Path, help="also write the figures as JSON here")
    p.add_argument(
        "--sheet",
        type=Path,
        help="also draw the images not read exactly (missed red, extra orange, misread yellow)",
    )
    p.set_defaults(func=_eval)

    p = subparsers.add_parser("export", help="export the shipped .pt weights to ONNX")
    p.add_argument("--manifest", type=Path, help=MANIFEST_HELP)
    p.set_defaults(func=_export)

    p = subparsers.add_parser(
        "prepare", help="convert the committed real photos into a YOLO training set"
    )
    p.add_argument("step", choices=("real", "real_obb"), help="upright or oriented boxes")
    p.add_argument("--src", type=Path, help="default datasets/rummikub-real")
    p.add_argument("--out", type=Path, help="default datasets/build/<step>")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--val-fraction", type=float, default=0.2)
    p.add_argument(
        "--write-val-list",
        action="store_true",
        help="recompute the seeded split and write datasets/real_val.txt",
    )
    p.set_defaults(func=_prepare)

    p = subparsers.add_parser("crops", help="cut labelled tile crops for the classifier")
    p.add_argument("--src", type=Path, nargs="+", required=True, help="YOLO set roots")
    p.add_argument("--out", type=Path, help="default datasets/build/crops")
    p.add_argument("--copies", type=int, default=3, help="jittered crops per training tile")
    p.add_argument("--jitter", type=float, default=0.08)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--augment", action="store_true", help="camera-like changes on copies after the first"
    )
    p.set_defaults(func=_crops)

    p = subparsers.add_parser("way-up", help="build the way-up model's crops, or train it")
    p.add_argument("step", choices=("build", "train"), help="render and cut crops, or train")
    p.add_argument("--data", type=Path, default=Path("datasets/build/up"), help="the crops' folder")
    p.add_argument("--scenes", type=int, default=900, help="build: renders to cut tiles from")
    p.add_argument("--workers", type=int, default=2, help="build: render processes")
    p.add_argument("--epochs", type=int, default=6, help="train: passes over the crops")
    p.add_argument("--out", type=Path, default=Path("models/tile_up.onnx"), help="train: ONNX")
    p.set_defaults(func=_way_up)


def _train(args: argparse.Namespace) -> int:
    from vision.training.train import TrainConfig, train

    config = TrainConfig.load(args.config)
    given = {"epochs": args.epochs, "device": args.device, "workers": args.workers}
    overrides = {key: value for key, value in given.items() if value is not None}
    train(config, resume=args.resume, **overrides)
    return 0


def _eval(args: argparse.Namespace) -> int:
    from vision.recognizer import MANIFEST, Recognizer, RecognizerSpec
    from vision.training.evaluate import (
        evaluate,
        format_report,
        load_samples,
        report_json,
        write_confusion_png,
        write_failure_sheet,
    )

    samples = load_samples(args.data)
    recognizer = Recognizer(RecognizerSpec.load(args.manifest or MANIFEST), args.backend)
    report = evaluate(recognizer.recognize, samples)
    print(f"recogniser: {recognizer.spec.architecture}, backend {recognizer.backend}")
    print(format_report(report))
    print(f"confusion matrix: {write_confusion_png(report, args.png)}")
    if args.sheet:
        print(f"images not read exactly: {write_failure_sheet(report, samples, args.sheet)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(report_json(report))
    return 0


def _export(args: argparse.Namespace) -> int:
    from vision.recognizer import MANIFEST, RecognizerSpec
    from vision.training.train import export_onnx

    spec = RecognizerSpec.load(args.manifest or MANIFEST)
    # the detector takes any input size (the tier stage packs strips into canvases cut to fit)
    print(export_onnx(spec.detector.with_suffix(".pt"), spec.detector_imgsz, dynamic=True))
    if spec.classifier is not None:
        print(export_onnx(spec.classifier.with_suffix(".pt"), spec.classifier_imgsz, dynamic=True))
    return 0


def _prepare(args: argparse.Namespace) -> int:
    from vision.training import data_real

    src = args.src or data_real.DEFAULT_SRC
    if args.write_val_list:
        names = sorted(p.name for p in (src / "images").iterdir())
        _, val = data_real.split_sources(names, args.val_fraction, args.seed)
        header = (
            f"# Real validation images: istaka prepare real --write-val-list "
            f"--seed {args.seed} --val-fraction {args.val_fraction}\n"
        )
        data_real.VAL_LIST.write_text(header + "".join(n + "\n" for n in val))
        print(f"wrote {data_real.VAL_LIST} ({len(val)} images)")
        return 0
    obb = args.step == "real_obb"
    out = args.out or (data_real.DEFAULT_OUT_OBB if obb else data_real.DEFAULT_OUT)
    counts = data_real.convert(src, out, seed=args.seed, val_fraction=args.val_fraction, obb=obb)
    print(f"wrote {out}: {counts['train']} train, {counts['val']} val images")
    return 0


def _crops(args: argparse.Namespace) -> int:
    from vision.training import crops

    result = crops.export_split_set(
        args.src,
        args.out or crops.DEFAULT_OUT,
        args.copies,
        args.jitter,
        args.seed,
        args.size,
        augment=args.augment,
    )
    for split, counts in result.items():
        print(f"{split}: {sum(counts.values())} crops over {len(counts)} classes")
    return 0


def _way_up(args: argparse.Namespace) -> int:
    from vision.training.up import build, train

    if args.step == "build":
        build(args.scenes, args.data, args.workers)
    else:
        train(args.data, args.out, args.epochs)
    return 0
