"""``istaka``: the command line.

Each part registers its own subcommands (see ``COMMAND_MODULES``) through a
``register(subparsers)`` function; a subcommand's handler takes the parsed arguments and returns the
exit code.  Heavy imports (torch, ultralytics, FastAPI) happen inside handlers, so ``istaka hand``
starts fast.

Exit codes: 0 success, 2 bad input (one-line message on stderr), 3 nothing found (scan).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

# Modules that provide ``register(subparsers)``, one per part of the product.  They import only
# the standard library and ``okey`` at the top, so every command is listed in an engine-only
# install; a command whose extra is missing says which extra to install (see ``main``).
COMMAND_MODULES = (
    "istaka.engine",  # hand, referee
    "istaka.match",  # match
    "istaka.scan",  # scan, live
    "istaka.calibrate",  # calibrate, data
    "istaka.serve",  # serve
    "istaka.synth",  # synth
    "istaka.training",  # train, eval, export
)

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_NOT_FOUND = 3


class InputError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="istaka",
        description="Camera assistant for Okey: read a rack, referee a hand, advise the discard.",
    )
    parser.add_argument("--version", action="version", version=f"istaka {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue
            raise
        module.register(subparsers)
    return parser


def _version() -> str:
    """The installed distribution's version (pyproject.toml's, through the package metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("istaka")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


# Imports that name an extra: a command that needs one of these says which extra to install.
EXTRAS = {
    "numpy": "read",
    "yaml": "read",
    "cv2": "read",
    "onnxruntime": "read",
    "fastapi": "read",
    "uvicorn": "read",
    "redis": "read",
    "cryptography": "read",
    "segno": "read",
    "fastapi_offline": "read",
    "PIL": "train",
    "matplotlib": "train",
    "ultralytics": "train",
    "torch": "train",
}


def _input_errors() -> tuple[type[BaseException], ...]:
    """The project's own bad-input errors; any other exception is a bug and keeps its traceback."""
    from okey.errors import OkeyError

    errors: list[type[BaseException]] = [InputError, OkeyError, FileNotFoundError]
    try:
        from vision.errors import VisionInputError
    except ModuleNotFoundError:  # an engine-only install
        pass
    else:
        errors.append(VisionInputError)
    return tuple(errors)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except _input_errors() as exc:
        print(f"istaka {args.command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRAS:
            raise
        extra = EXTRAS[top]
        print(
            f"istaka {args.command}: needs the '{extra}' extra ({top} is not installed): "
            f"pip install 'istaka[{extra}]'",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # `istaka ... | head` closed the pipe: stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
