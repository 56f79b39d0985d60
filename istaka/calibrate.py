"""``istaka calibrate`` (learn a player's own tile set from photos of a known layout) and
``istaka data`` (the tiles kept, with consent, in the local data folder).

Exit codes: 0 done, 2 bad input (not the layout, a refused profile, no such profile), 3 nothing
learned (the user said no).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from istaka.cli import EXIT_NOT_FOUND, EXIT_OK, InputError
from vision.engines import BACKENDS

LAYOUT_HELP = (
    "Lay the set out face up, one colour a row, 1 to 13 left to right (any order of colours), "
    "and the false jokers on a fifth row below; photograph it from above, the whole layout in "
    "the frame. One or two photos (two: different light or angle). Or on the rack: two colours "
    "on its two rows, the false jokers in front, one photo, then the other two colours."
)


def register(subparsers: Any) -> None:
    cal = subparsers.add_parser(
        "calibrate",
        help="learn your own tile set from one or two photos of a known layout (a profile)",
        description="Make a named profile for one tile set. " + LAYOUT_HELP + " The photos are "
        "read, labelled from the layout (tiles out of place are named and left out), shown, and "
        "after you agree a per-set reader is fitted on the CPU (one to three minutes) from them "
        "and the kept corrections: a copy of the classifier fine-tuned on the set (needs the "
        "train extra, torch), or without torch colour terms over the ink (seconds); it is "
        "refused if it reads its own photos worse than the shipped model. Use it with: istaka "
        "scan --profile NAME. The shipped model is never changed.",
    )
    cal.add_argument("photos", nargs="*", help="one or two photos of the layout")
    cal.add_argument("--profile", metavar="NAME", help="the profile to make (e.g. home-set)")
    cal.add_argument("--yes", action="store_true", help="learn without asking after the summary")
    cal.add_argument("--check", action="store_true", help="show what was understood; learn nothing")
    cal.add_argument(
        "--keep",
        action="store_true",
        help="also keep the labelled tiles in the local data folder (consent; see istaka data)",
    )
    cal.add_argument(
        "--no-kept",
        action="store_true",
        help="learn from the photos alone, not from corrections kept in the data folder",
    )
    cal.add_argument(
        "--reader",
        choices=["auto", "finetune", "colour"],
        default="auto",
        help="the per-set reader: finetune (torch), colour (numpy), auto: finetune where torch is "
        "installed",
    )
    cal.add_argument("--list", action="store_true", help="list the saved profiles and stop")
    cal.add_argument("--remove", metavar="NAME", help="delete a saved profile and stop")
    cal.add_argument("--backend", choices=BACKENDS, help="recogniser engine")
    cal.add_argument("--json", action="store_true", help="print the outcome as one JSON object")
    cal.set_defaults(func=run_calibrate)

    data = subparsers.add_parser(
        "data",
        help="the tiles kept with your consent (corrections, calibration): list, export, forget",
        description="The local data folder (ISTAKA_DATA, default ~/.local/share/istaka/data): "
        "labelled tiles kept with your consent, YOLO-style with their source photos. Nothing "
        "leaves this machine.",
    )
    sub = data.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="count the kept tiles by source and label")
    listing.add_argument("--json", action="store_true", help="print as JSON")
    listing.set_defaults(func=run_data)
    export = sub.add_parser("export", help="copy them out as a YOLO dataset")
    export.add_argument("out", help="an empty or new folder")
    export.set_defaults(func=run_data)
    forget = sub.add_parser("forget", help="delete every kept tile and photo")
    forget.add_argument("--yes", action="store_true", help="really delete")
    forget.set_defaults(func=run_data)


def _single_thread_blas() -> None:
    # Small matrices: OpenBLAS threads only fight over a laptop's few cores (measured 10x slower
    # on a busy 2-core machine).  Effective only before numpy loads.
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run_calibrate(args: argparse.Namespace) -> int:
    _single_thread_blas()
    from vision.profiles import ProfileError, list_profiles, profiles_dir

    if args.list:
        return _list_profiles(list_profiles(), args.json)
    if args.remove:
        import shutil

        from vision.profiles import check_name

        path = profiles_dir() / check_name(args.remove)
        if not path.is_dir():
            raise InputError(f"no profile named {args.remove!r} in {profiles_dir()}")
        shutil.rmtree(path)
        print(f"removed profile {args.remove}")
        return EXIT_OK
    if not args.photos or len(args.photos) > 2:
        raise InputError("give one or two photos of the layout. " + LAYOUT_HELP)
    if not args.profile and not args.check:
        raise InputError("--profile NAME: the name to save the profile under")
    from vision.pipeline import load_image
    from vision.profiles import DataStore, LayoutError, check_name
    from vision.recognizer import Recognizer
    from vision.training.calibrate import CalibrationPhoto, make_profile

    if args.profile:
        check_name(args.profile)
    recognizer = Recognizer.default(args.backend)
    photos = []
    for path in args.photos:
        image = load_image(path)
        try:
            photos.append(CalibrationPhoto.read(recognizer, image, name=Path(path).name))
        except LayoutError as exc:
            raise InputError(f"{path}: {exc}. {LAYOUT_HELP}") from None
    for photo in photos:
        _show(photo)
    if args.check:
        return EXIT_OK
    if not args.yes and not _agree(sum(len(p.layout.labelled) for p in photos)):
        print("nothing learned")
        return EXIT_NOT_FOUND
    store = DataStore()
    kept = [] if args.no_kept else store.crops()
    try:
        profile, report = make_profile(
            args.profile, recognizer, photos, kept=kept, method=args.reader
        )
    except ProfileError as exc:
        raise InputError(str(exc)) from None
    folder = profile.save()
    if args.keep:
        for photo in photos:
            store.keep(
                photo.image,
                [(t.box, t.label, t.read) for t in photo.labelled_tiles()],
                source="calibration",
                consent=True,
                profile=args.profile,
            )
    if args.json:
        print(json.dumps({"profile": profile.name, "path": str(folder), **report}))
        return EXIT_OK
    print(
        f"profile {profile.name} ({report['reader']} reader) saved in {folder} "
        f"({report['seconds']:.0f} s on the CPU; "
        f"{report['tiles']} tiles from {report['photos']} photo(s), {report['kept']} kept)"
    )
    print(
        f"its calibration photos: shipped model {report['shipped_identity']:.2%}, "
        f"profile {report['profile_identity']:.2%}"
    )
    print(f"use it: istaka scan --profile {profile.name} PHOTO")
    return EXIT_OK


def _show(photo: Any) -> None:
    layout = photo.layout
    print(
        f"{photo.name}: {len(photo.recognition.tiles)} tiles found, "
        f"{len(layout.labelled)} labelled from the layout"
    )
    print(layout.summary())
    read_otherwise = [t for t in layout.labelled if t.label != t.read]
    if read_otherwise:
        print(
            "  the shipped model reads "
            + ", ".join(f"{t.label} as {t.read}" for t in read_otherwise)
            + " (shown label(read)): the layout's label is what will be learned"
        )
    for problem in layout.problems:
        print(f"  note: {problem}")


def _agree(n: int) -> bool:
    if not sys.stdin.isatty():
        print(f"learn from these {n} tiles? add --yes to agree (no terminal to ask on)")
        return False
    answer = input(f"Learn from these {n} tiles? [y/N] ").strip().lower()
    return answer in ("y", "yes")


def _list_profiles(profiles: list[dict[str, Any]], as_json: bool) -> int:
    if as_json:
        print(json.dumps(profiles, default=str))
        return EXIT_OK
    if not profiles:
        print("no profiles yet: istaka calibrate --profile NAME PHOTO")
        return EXIT_OK
    for p in profiles:
        check = p.get("check", {})
        before, after = check.get("shipped_identity", 0), check.get("profile_identity", 0)
        print(
            f"{p['name']:20s} {p.get('created', '')}  {p.get('tiles', '?')} tiles; calibration "
            f"photos {before:.2%} -> {after:.2%}"
        )
    return EXIT_OK


def run_data(args: argparse.Namespace) -> int:
    from vision.profiles import DataStore

    store = DataStore()
    if args.action == "list":
        records = store.records()
        summary = _data_summary(records)
        usage = _usage()
        if args.json:
            print(json.dumps({"folder": str(store.root), **summary, "usage": usage}))
            return EXIT_OK
        print(f"{store.root}: {summary['tiles']} tiles kept from {summary['photos']} photo(s)")
        for line in _usage_lines(usage):
            print(line)
        for source, n in sorted(summary["by_source"].items()):
            print(f"  {source}: {n}")
        if summary["corrected"]:
            print(
                "  corrections (read -> right): "
                + ", ".join(f"{k} x{v}" if v > 1 else k for k, v in summary["corrected"].items())
            )
        return EXIT_OK
    if args.action == "export":
        try:
            out = store.export(Path(args.out))
        except FileExistsError as exc:
            raise InputError(str(exc)) from None
        print(f"exported {len(store.records())} tiles to {out} (YOLO: images/, labels/, data.yaml)")
        return EXIT_OK
    if args.action == "forget":
        if not args.yes:
            raise InputError("add --yes to delete every kept tile and photo")
        import shutil

        if store.root.is_dir():
            shutil.rmtree(store.root)
        print(f"deleted {store.root}")
        return EXIT_OK
    raise InputError(f"unknown action {args.action}")


def _usage() -> dict[str, Any]:
    """The kept data against the server's quotas (``service.quota``; the limits as ``istaka
    serve`` would set them from the environment)."""
    from service.quota import report
    from service.settings import Settings

    return report(Settings.from_env())


def _usage_lines(usage: dict[str, Any]) -> list[str]:
    mb = 1024 * 1024
    lines = [
        f"  usage (the data and profiles folders): {usage['bytes'] / mb:.1f} MB of"
        f" {usage['max_bytes'] / mb:g} MB, {usage['files']} of {usage['max_files']} files"
    ]
    for name, used in usage["by_credential"].items():
        lines.append(
            f"  kept by credential {name}: {used['bytes'] / mb:.1f} MB of"
            f" {usage['max_bytes_per_token'] / mb:g} MB, {used['files']} of"
            f" {usage['max_files_per_token']} files"
        )
    return lines


def _data_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    from collections import Counter

    by_source = Counter(r["source"] for r in records)
    corrected = Counter(
        f"{r['read']}->{r['label']}" for r in records if r.get("read") and r["read"] != r["label"]
    )
    return {
        "tiles": len(records),
        "photos": len({r["photo"] for r in records}),
        "by_source": dict(by_source),
        "corrected": dict(corrected.most_common()),
    }


# ------------------------------------------------------------------ helpers for scan and live


def profile_option(parser: argparse.ArgumentParser) -> None:
    """``--profile NAME``: read through a calibrated profile (``istaka calibrate``)."""
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="read with your tile set's profile (made by istaka calibrate; default: none)",
    )


def correction_options(parser: argparse.ArgumentParser) -> None:
    """``--correct ID=TILE ...`` and ``--keep`` (consent to keep the corrected tiles)."""
    parser.add_argument(
        "--correct",
        metavar="ID=TILE",
        action="append",
        default=[],
        help='the right reading of a tile, by its id in --json ("tiles"[].id), e.g. 3=R5; '
        "repeat or separate by commas",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the corrected tiles in the local data folder (your consent; istaka data)",
    )


def parse_corrections(texts: list[str], several: bool = False) -> dict[int, str]:
    """``["3=R5", "7=K1,8=FJ"]`` -> ``{3: "R5", 7: "K1", 8: "FJ"}`` (tiles checked)."""
    from okey import Tile

    out: dict[int, str] = {}
    for text in texts or []:
        for part in text.replace(",", " ").split():
            key, sep, value = part.partition("=")
            if not sep or not key.strip().isdigit():
                raise InputError(f"--correct {part}: write ID=TILE, e.g. 3=R5")
            out[int(key)] = str(Tile.parse(value.strip()))
    if out and several:
        raise InputError("--correct: correct one photo at a time")
    return out


def keep_corrections(image: Any, result: Any, args: argparse.Namespace) -> int:
    """With ``--keep`` (the user's consent), keep the tiles ``--correct`` set right."""
    if not getattr(args, "keep", False) or not getattr(args, "correct", None):
        return 0
    from vision.profiles import DataStore

    placed = [p for p in list(result.table) + [t for row in result.rows for g in row for t in g]]
    tiles = [(p.box, p.tile, None) for p in placed if p.corrected]
    kept = DataStore().keep(
        image, tiles, source="correction", consent=True, profile=getattr(args, "profile", None)
    )
    print(
        f"kept {kept} corrected tile(s) in the local data folder (istaka data list)",
        file=sys.stderr,
    )
    return kept
