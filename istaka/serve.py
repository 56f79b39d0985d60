"""``istaka serve [--host 127.0.0.1] [--port 8000]``: the web app (API, camera page, overlay)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from istaka.cli import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the REST/WebSocket API, the camera page and the OBS overlay",
        description="Serve the API under /api/v1 (docs at /docs), the camera page at /camera and"
        " the overlay at /overlay?table=NAME.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=_port, default=8000, help="TCP port (default 8000)")
    parser.add_argument(
        "--max-upload-mb", type=float, default=10.0, help="largest accepted upload in MB"
    )
    parser.add_argument(
        "--max-fps", type=float, default=8.0, help="frames per second read per camera stream"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes, each with its own recognition model (default 1)",
    )
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="uvicorn log level (warning hides the access log)",
    )
    parser.add_argument(
        "--model",
        type=Path,
        help="recogniser manifest to serve (default: models/recognizer.yaml)",
    )
    parser.add_argument(
        "--no-model",
        action="store_true",
        help="start without the recognition model (engine endpoints and overlay only)",
    )
    parser.set_defaults(func=serve)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"port must be a number, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535, got {port}")
    return port


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.app import create_app
    from service.settings import MODEL_ENV, Settings

    if args.max_upload_mb <= 0 or args.max_fps <= 0:
        raise InputError("--max-upload-mb and --max-fps must be positive")
    if args.model is not None:
        if not args.model.is_file():
            raise FileNotFoundError(f"--model: no such manifest {args.model}")
        os.environ[MODEL_ENV] = str(args.model.resolve())
    if not 1 <= args.workers <= 32:
        raise InputError(f"--workers must be 1-32, got {args.workers}")
    # The options travel as environment variables, so every worker process builds the same app.
    os.environ["ISTAKA_MAX_UPLOAD_MB"] = str(args.max_upload_mb)
    os.environ["ISTAKA_MAX_FPS"] = str(args.max_fps)
    os.environ["ISTAKA_NO_MODEL"] = "1" if args.no_model else "0"
    common = {"host": args.host, "port": args.port, "log_level": args.log_level}
    if args.workers == 1:
        uvicorn.run(create_app(Settings.from_env()), **common)
    else:
        uvicorn.run("service.app:create_app", factory=True, workers=args.workers, **common)
    return 0
