"""The run profiles of the common colour lines, precomputed (as mahjong shanten tables are).

A colour's line (``runs.line_key``: 3 bits per number, the count held plus 4 if a copy is left
to draw) has a run profile (``runs.line_profile``: the useful (slots, kept, excess) choices of
laying its faces out in runs) that the run search finds in about 25 us.  Random hands rarely
repeat a line, so most of a ``distance_to_win`` call went into solving its four colours afresh.

The table holds the profile of every *plain* line of the classic rules (1 may follow 13, hands
of 14): at most ``MAX_TILES`` tiles held, and a copy left to draw exactly at the numbers held
fewer than twice (what a line is until some of its tiles are seen, or the indicator is one of
them); and of every line of at most ``MAX_TILES_ONE_OFF`` tiles that is plain but for one
number held fewer than twice with no copy left (the set search's lines after a set takes one
of two copies, or draws the last one; ``advise``'s lines with a discard's other copy held or a
drawn face's last copy); and of every line of at most ``MAX_TILES_TWO_OFF`` tiles plain but for
two such numbers, both within reach of a run (the indicator's colour after a set takes one of
two copies; ``advise``'s lines with both a discard's other copy and a drawn face's last copy;
a line with a number out of reach is looked up with a copy left there,
``runs.relevant_key``); and of a line and its mirror (``runs.mirror_key``: numbers 2 to 13
read backwards, the same profile) the one with the lower key only.  That is 284,548 lines,
which share 2,719 distinct profiles; they serve about 99% of the new lines of random 14-tile
deals (94% of ``advise``'s on 15-tile deals, whose bounds read plain lines only,
``runs.line_bound``: hence the plain lines of 9 tiles).  A line the table lacks is searched as
before.

Stored (``okey/line_table_data.py``, generated: ``python -m okey.line_table``) as three
base64 strings of zlib-compressed little-endian arrays: the distinct profiles' entries (per
profile its entry count, then slots, kept, excess per entry, one byte each), the lines' keys in
increasing order as differences from the previous key (8 bytes each), and per line the index
of its profile (2 bytes); 348 KB.  Loaded on first use (about 30 ms) as arrays, searched by
bisection for the lower of the line's key and its mirror's, within the keys that share its top
bits (``runs._spans_of``; a line found is then cached with the searched ones,
``runs.LINE_PROFILES``; a profile is made a ``Component`` when first read).
``tests/test_engine_properties.py`` checks the lines against the search.
"""

from __future__ import annotations

import base64
import sys
import zlib
from array import array
from itertools import accumulate
from pathlib import Path

from okey.layout import Component, interned

# The rules the table is for: 1 may follow 13 (``Rules.wrap_13_1``), hands of 14 tiles.
WRAP = True
SIZE = 14

# Most tiles a plain line in the table holds (more in one colour: under 1% of random 14-tile
# deals; 8 or 9 in one colour of a 15-tile hand plus a drawn face is common enough in
# ``advise``).
MAX_TILES = 9

# The table's keys carry the wrap switch and the size as ``runs.line_profile`` keys do.
TAIL = (WRAP << 39) | (SIZE << 40)


# Most tiles a line with one number off the plain pattern holds.
MAX_TILES_ONE_OFF = 6


def plain_keys(most: int = MAX_TILES) -> list[int]:
    """The keys (``runs.line_key``) of the plain lines with at most ``most`` tiles, in
    increasing order."""
    keys = [(0, 0)]  # (key of the numbers above, tiles held there), number 13 down to 1
    for _ in range(13):
        keys = [
            ((key << 3) | count | (4 if count < 2 else 0), held + count)
            for key, held in keys
            for count in range(3)
            if held + count <= most
        ]
    return sorted(key for key, _ in keys)


# Most tiles a line with two numbers off the plain pattern holds.
MAX_TILES_TWO_OFF = 4


def table_keys() -> list[int]:
    """The keys of the table's lines, in increasing order: the plain ones, those with at most
    ``MAX_TILES_ONE_OFF`` tiles and no copy left at exactly one number held fewer than twice,
    and those with at most ``MAX_TILES_TWO_OFF`` tiles and no copy left at exactly two such
    numbers, each within reach of a run (``runs.relevant_key``: a line with a number out of
    reach is looked up with a copy left there); of a line and its mirror (``runs.mirror_key``,
    the same profile), the lower key only."""
    from okey.runs import mirror_key, relevant_key

    keys = set(plain_keys())
    for key in plain_keys(MAX_TILES_ONE_OFF):
        for shift in range(0, 39, 3):
            if key >> shift & 4:
                keys.add(key - (4 << shift))
    for key in plain_keys(MAX_TILES_TWO_OFF):
        left = [shift for shift in range(0, 39, 3) if key >> shift & 4]
        for i, first in enumerate(left):
            for second in left[i + 1 :]:
                off = key - (4 << first) - (4 << second)
                if relevant_key(off, WRAP) == off:
                    keys.add(off)
    return sorted({min(key, mirror_key(key)) for key in keys})


def _unpack(text: str, code: str) -> array:
    values = array(code, zlib.decompress(base64.b64decode(text)))
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _pack(values: array) -> str:
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return base64.b64encode(zlib.compress(values.tobytes(), 9)).decode("ascii")


def load() -> tuple[array, array, Profiles]:
    """The table: the ``runs.line_profile`` keys of its lines (line key, wrap and size) in
    increasing order, per line the index of its profile, and the profiles.  (Arrays: loaded in
    a few ms and never walked by the garbage collector; a line is found by bisection.)"""
    from okey.line_table_data import ENTRIES, INDEX, KEYS

    deltas = _unpack(KEYS, "Q")
    deltas[0] |= TAIL
    return array("Q", accumulate(deltas)), _unpack(INDEX, "H"), Profiles(_unpack(ENTRIES, "B"))


class Profiles:
    """The table's distinct profiles, each made a ``Component`` the first time it is read
    (most processes read a few hundred of them)."""

    __slots__ = ("raw", "starts", "made")

    def __init__(self, raw: array) -> None:
        """From the stored entries: per profile its entry count, then slots, kept, excess per
        entry, one byte each."""
        self.raw = raw
        self.starts = []
        at = 0
        while at < len(raw):
            self.starts.append(at)
            at += 1 + 3 * raw[at]
        self.made: list[Component | None] = [None] * len(self.starts)

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: int) -> Component:
        profile = self.made[i]
        if profile is None:
            at = self.starts[i]
            flat = self.raw[at + 1 : at + 1 + 3 * self.raw[at]]
            entries = tuple(zip(flat[::3], flat[1::3], flat[2::3], strict=True))
            profile = self.made[i] = interned(entries)
        return profile


def build() -> tuple[list[int], list[tuple[tuple[int, int, int], ...]], list[int]]:
    """The plain keys, the distinct profiles' entries (in order of first use) and per key the
    index of its profile, all from the run search."""
    from okey.runs import _profile_of_key

    keys = table_keys()
    found: dict[tuple[tuple[int, int, int], ...], int] = {}
    index = [found.setdefault(_profile_of_key(key, WRAP, SIZE).entries, len(found)) for key in keys]
    return keys, list(found), index


DATA = Path(__file__).with_name("line_table_data.py")


def write(path: Path = DATA) -> None:
    """Regenerate the stored table from the run search."""
    keys, entries, index = build()
    flat = array("B")
    for profile in entries:
        flat.append(len(profile))
        for entry in profile:
            flat.extend(entry)
    deltas = array("Q", [b - a for a, b in zip([0, *keys], keys, strict=False)])
    fields = {"ENTRIES": _pack(flat), "KEYS": _pack(deltas), "INDEX": _pack(array("H", index))}
    lines = [
        '"""The run profiles of the plain colour lines (``okey.line_table``): generated by',
        '``python -m okey.line_table``, do not edit."""',
        "",
    ]
    for name, text in fields.items():
        lines.append(f"{name} = (")
        lines += [f'    "{text[i : i + 92]}"' for i in range(0, len(text), 92)]
        lines.append(")")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    write()
