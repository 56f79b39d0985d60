"""``istaka match FILE.json``: the standings table of a recorded match.

The file is what ``okey.Match.to_json`` writes: ``{"rules": ..., "players": [...],
"rounds": [...]}`` (``rules`` may also be a preset name such as ``"classic"`` or ``"okey101"``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from istaka.cli import InputError
from okey.match import Match


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "match",
        help="print the standings of a recorded match (JSON file)",
        description="Replay a recorded match and print its standings table.",
    )
    parser.add_argument("file", type=Path, help="match JSON (see examples/match.json)")
    parser.add_argument("--json", action="store_true", help="print standings as JSON")
    parser.set_defaults(func=run_match)


def run_match(args: argparse.Namespace) -> int:
    path: Path = args.file
    if not path.is_file():
        raise FileNotFoundError(f"no match file at {path}")
    try:
        match = Match.load(path)
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from exc
    if args.json:
        result = match.result
        print(
            json.dumps(
                {
                    "rounds": len(match.rounds),
                    "standings": [s.to_dict() for s in match.standings()],
                    "history": match.history,
                    "result": None if result is None else result.to_dict(),
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        print(match.format_table())
    return 0
