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
import sys
from collections.abc import Sequence

# Modules that provide ``register(subparsers)``, one per part of the product; a module that is not
# there is skipped, so the engine commands work in an install without the vision or service extras.
COMMAND_MODULES = (
    "okey.cli",  # hand, referee
    "okey.scoring_cli",  # match
    "vision.synth.cli",  # synth
    "vision.training_cli",  # train, eval, export
    "vision.pipeline_cli",  # scan, live
    "service.cli",  # serve
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (InputError, ValueError, FileNotFoundError) as exc:
        print(f"istaka {args.command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
