"""``istaka train``, ``istaka eval`` and ``istaka export``: the model's life on the command line.

Examples::

    istaka train models/tile_detector.yaml [--resume] [--device 0 --workers 8]
    istaka eval datasets/real_val --png runs/eval/real_val.png [--backend torch] [--json OUT]
    istaka export                      # ONNX files next to the shipped .pt weights
"""

from __future__ import annotations

import argparse
from pathlib import Path

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
    p.add_argument("--backend", choices=("onnx", "torch"), help="default: the manifest's")
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


def _train(args: argparse.Namespace) -> int:
    from vision.train import TrainConfig, train

    config = TrainConfig.load(args.config)
    given = {"epochs": args.epochs, "device": args.device, "workers": args.workers}
    overrides = {key: value for key, value in given.items() if value is not None}
    train(config, resume=args.resume, **overrides)
    return 0


def _eval(args: argparse.Namespace) -> int:
    from vision.evaluate import (
        evaluate,
        format_report,
        load_samples,
        report_json,
        write_confusion_png,
        write_failure_sheet,
    )
    from vision.recognizer import MANIFEST, Recognizer, RecognizerSpec

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
    from vision.train import export_onnx

    spec = RecognizerSpec.load(args.manifest or MANIFEST)
    print(export_onnx(spec.detector.with_suffix(".pt"), spec.detector_imgsz, dynamic=False))
    if spec.classifier is not None:
        print(export_onnx(spec.classifier.with_suffix(".pt"), spec.classifier_imgsz, dynamic=True))
    return 0
