"""``istaka hand`` and ``istaka referee``: the engine on the command line.

    istaka hand "R1 R2 R3 ..." --indicator K7 [--seen "..."] [--rules classic|okey101] [--json]
    istaka hand "R1 R2 R3 ..." --indicator K7 --offered Y7 [--table "..."] [--opened] ...
    istaka hand ... [--next-takes "..."] [--next-discards "..."]   (classic: the discards' risk)
    istaka hand ... --rules okey101 [--table "K4 K5 K6 | ..."] [--opened]   (101: the same)
    istaka referee "R1 R2 R3 | K5 Y5 B5 | ..." --indicator K7 [--discard R9] [--rules ...] [--json]

Bad input raises ``ValueError`` (a one-line message, exit 2, printed by ``istaka.cli``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from istaka.cli import InputError
from okey import okey101
from okey.advice import advise
from okey.distance import distance_to_win
from okey.hand import check_possible, hand_stage, okey_for
from okey.referee import RefereeVerdict, parse_groups, referee
from okey.rules import PRESETS, Rules
from okey.solver import check_win
from okey.startup import load_tables
from okey.tiles import Tile, parse_tiles
from okey.turn import TurnError, read_turn, take_or_draw


def register(subparsers: argparse._SubParsersAction) -> None:
    hand = subparsers.add_parser(
        "hand",
        help="arrangement, discard advice or waits for a hand",
        description="14 tiles: the win check and the waits; 15 tiles: every discard ranked.",
    )
    hand.add_argument("tiles", help='the hand, e.g. "R1 R2 R3 K5 Y5 B5 ..." (FJ = false joker)')
    _common(hand)
    hand.add_argument("--seen", default="", help="tiles seen in the discard piles")
    hand.add_argument(
        "--offered",
        default=None,
        help="the tile the left-hand player just discarded: take it or draw? (14 / 21 tiles)",
    )
    hand.add_argument(
        "--table",
        default="",
        help='101: the melds on the table, split by "|" (a discard that fits one ranks last)',
    )
    hand.add_argument("--opened", action="store_true", help="101: you have opened")
    hand.add_argument(
        "--next-takes",
        default="",
        help="classic: tiles the right-hand player took (a discard that fits them ranks later)",
    )
    hand.add_argument(
        "--next-discards", default="", help="classic: tiles the right-hand player threw"
    )
    hand.set_defaults(func=run_hand)

    ref = subparsers.add_parser(
        "referee",
        help="referee a declared hand (groups split by |)",
        description="Check a declared hand group by group, as laid out, and score the finish.",
    )
    ref.add_argument("groups", help='groups split by "|", e.g. "R1 R2 R3 | K5 Y5 B5 | ..."')
    _common(ref)
    ref.add_argument("--discard", default=None, help="the finishing discard (e.g. an okey)")
    ref.add_argument(
        "--second-okey",
        action="store_true",
        help="the discard is the second okey after a tur (double okey rules)",
    )
    ref.set_defaults(func=run_referee)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--indicator", required=True, help="the face-up indicator tile, e.g. K7")
    parser.add_argument("--rules", default="classic", choices=sorted(PRESETS), help="rule preset")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _indicator(text: str) -> Tile:
    return _tile("--indicator", text)


def _tile(option: str, text: str) -> Tile:
    try:
        return Tile.parse(text)
    except ValueError as exc:
        raise InputError(f"{option}: {exc}") from exc


def run_hand(args: argparse.Namespace) -> int:
    load_tables()
    rules = Rules.preset(args.rules)
    indicator = _indicator(args.indicator)
    tiles = parse_tiles(args.tiles)
    seen = parse_tiles(args.seen) if args.seen else []
    check_possible(tiles, indicator, rules, others=seen)
    turn = _turn(args, tiles, indicator, rules)
    if args.offered is not None:  # (take_or_draw checks the hand's size: 101 open, any)
        offered = _tile("--offered", args.offered)
        answer = take_or_draw(tiles, offered, indicator, rules, seen, **turn)
        return _print(args, answer.to_dict(), answer.sentence)
    hand_stage(len(tiles), rules)  # both games: a hand in play has its size, or one more
    if rules.game == "okey101":
        report = okey101.describe_hand(tiles, indicator, rules, **turn)
        return _print(args, report, okey101.format_hand_report(report))
    nexts = turn["next_takes"], turn["next_discards"]
    data, text = hand_report(tiles, indicator, rules, seen, nexts)
    return _print(args, data, text)


def _turn(
    args: argparse.Namespace, tiles: list[Tile], indicator: Tile, rules: Rules
) -> dict[str, Any]:
    """What rates the discards' risk, as ``POST /hand`` takes it (``okey.turn.read_turn``: the
    other game's options refused by name, never ignored)."""
    given: dict[str, Any] = {}
    for option, text in (
        ("--next-takes", args.next_takes),
        ("--next-discards", args.next_discards),
        ("--table", args.table),
    ):
        try:
            if option == "--table":
                given["table"] = parse_groups(text) if text else []
            else:
                given[option[2:].replace("-", "_")] = parse_tiles(text)
        except ValueError as exc:
            raise InputError(f"{option}: {exc}") from exc
    offered = _tile("--offered", args.offered) if args.offered is not None else None
    try:
        return read_turn(
            rules, indicator, tiles, offered, opened=args.opened, names=OPTIONS, **given
        )
    except TurnError as exc:
        raise InputError(str(exc)) from exc


# how ``read_turn``'s messages name the inputs here
OPTIONS = {
    "next_takes": "--next-takes",
    "next_discards": "--next-discards",
    "table": "--table",
    "opened": "--opened",
    "rules": "--rules",
}


def hand_report(
    tiles: list[Tile],
    indicator: Tile,
    rules: Rules,
    seen: list[Tile],
    nexts: tuple[list[Tile], list[Tile]] = ([], []),
) -> tuple[dict[str, Any], str]:
    """The JSON data and the text ``istaka hand`` prints for a checked hand (``nexts``: the
    right-hand player's takes and discards, for the discards' risk)."""
    okey = okey_for(indicator)
    data: dict[str, Any] = {
        "rules": rules.name,
        "tiles": [str(t) for t in tiles],
        "indicator": str(indicator),
        "okey": str(okey),
        "distance_to_win": distance_to_win(tiles, indicator, rules, seen),
    }
    lines = [f"indicator {indicator}, okey {okey}; {len(tiles)} tiles"]
    if hand_stage(len(tiles), rules) == "waits":
        win = check_win(tiles, indicator, rules)
        data["arrangement"] = win.to_dict()
        if win.winning:
            layout = " | ".join(g.text for g in win.groups)
            lines.append(f"wins ({'seven pairs' if win.kind == 'pairs' else 'runs and sets'}):")
            lines.append(f"  {layout}")
            okeys = [g for g in win.groups if okey in g.tiles]
            for g in okeys:
                faces = " ".join(
                    f"{t}={f}" for t, f in zip(g.tiles, g.stands_for, strict=True) if t == okey
                )
                lines.append(f"  okey plays as: {faces}")
    advice = advise(tiles, indicator, rules, seen, next_takes=nexts[0], next_discards=nexts[1])
    data["advice"] = advice.to_dict()
    if advice.kind == "waits":
        if advice.distance:
            lines.append(advice.sentence)
    else:
        lines.append(f"best discard: {advice.sentence}")
        for option in advice.options[1:6]:
            lines.append(f"  then: {option.sentence}")
        if len(advice.options) > 6:
            lines.append(f"  ({len(advice.options) - 6} more discards rank lower)")
    return data, "\n".join(lines)


def run_referee(args: argparse.Namespace) -> int:
    load_tables()
    rules = Rules.preset(args.rules)
    indicator = _indicator(args.indicator)
    groups = parse_groups(args.groups)
    discard = None
    if args.discard:
        discard = _tile("--discard", args.discard)
    verdict = referee(groups, indicator, rules, discard, second_okey=args.second_okey)
    return _print(args, verdict.to_dict(), referee_text(verdict))


def referee_text(verdict: RefereeVerdict) -> str:
    """The referee's verdict as a few lines of text."""
    lines = []
    for i, g in enumerate(verdict.groups, start=1):
        tiles = " ".join(str(t) for t in g.tiles)
        if g.valid:
            kind = next(k for k in ("run", "set", "pair") if k in g.kinds)
            lines.append(f"  {i}. {tiles}: {kind}")
        else:
            lines.append(f"  {i}. {tiles}: NOT a group")
    lines.append(verdict.sentence)
    return "\n".join(lines)


def _print(args: argparse.Namespace, data: dict[str, Any], text: str) -> int:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else text)
    return 0
