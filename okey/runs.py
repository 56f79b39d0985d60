"""Runs of one colour: every useful way to lay a colour's faces out in runs.

A colour's 13 counts and which faces still have a copy to draw form its line key
(``okey.distance.line_key``); ``line_profile`` gives, per key, the useful (slots, kept, excess)
choices (a ``Component``), found by a memoised search over the line (``_runs_bits``).
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from typing import TYPE_CHECKING

from okey.layout import (
    FIELD,
    SCALE,
    SHIFT,
    SLOT_PRICES,
    SLOTS_MASK,
    Component,
    interned,
    kept_field_width,
)

if TYPE_CHECKING:
    from okey.line_table import Profiles

LONGEST_RUN = 13

# The longest run the search lays out (``_runs_bits``, ``_slot_bits``): a longer one is two or
# more runs of 3 to 5 side by side, with the same slots, kept faces and excess.
LONGEST_SEARCHED = 5


# Most drawn tiles a run needs outside its kept faces: 2 to reach length 3, plus 2 to grow.
MAX_OUTSIDE = 4


def line_key(faces: Sequence[int], avail: Sequence[int], lo: int) -> int:
    """One colour's line as an int: 3 bits per number, the count held plus 4 if a copy is left."""
    key = 0
    for p in range(12, -1, -1):
        key = (key << 3) | faces[lo + p] | (4 if avail[lo + p] > 0 else 0)
    return key


def lone_faces(key: int, wrap: bool) -> int:
    """The number indexes (bit n) of a colour's line (``line_key``) whose held face may stand
    alone in a set of two drawn tiles of other colours.

    Such a set keeps one face in three slots, as a run around that face alone does; the run is
    the search's default, and the set is tried only where every run of three through the face
    draws a tile with no copy left (there the run needs an okey and the set may not)."""
    full = key | (wrap << 39)
    found = _LONE_FACES.get(full)
    if found is None:
        found = _lone_faces(key, wrap)
        _remember(_LONE_FACES, full, found)
    return found


_LONE_FACES: dict[int, int] = {}


def _lone_faces(key: int, wrap: bool) -> int:
    """``lone_faces``, computed (on the key's fields: bit 3p for number p, then one bit per
    number)."""
    held = (key | key >> 1) & _FIELD_LOW
    avail = (key >> 2) & _FIELD_LOW
    if wrap:
        avail |= (avail & 1) << 39  # position 13: the 1 played high
    # Bit 3p: some run of three through position p has both other tiles drawable.
    drawable = (avail << 3) & ((avail << 6) | (avail >> 3)) | (avail >> 3) & (avail >> 6)
    if wrap:
        drawable |= (drawable >> 39) & 1  # the 1 also ends 12-13-1
    lone = held & ~drawable & _FIELD_LOW
    if not lone:
        return 0
    # One bit per number, three numbers at a time.
    return (
        _SPREAD3[lone & 0o111]
        | _SPREAD3[(lone >> 9) & 0o111] << 3
        | _SPREAD3[(lone >> 18) & 0o111] << 6
        | _SPREAD3[(lone >> 27) & 0o111] << 9
        | (lone >> 36 & 1) << 12
    )


# Bits 0, 3 and 6 of a 9-bit chunk as bits 0, 1 and 2 (``_lone_faces``).
_SPREAD3 = [(c & 1) | (c >> 2 & 2) | (c >> 4 & 4) for c in range(0o112)]


def _run_neighbours(n: int, wrap: bool) -> tuple[tuple[int, int], ...]:
    """The other two number indexes of each run of three through number index ``n``."""
    top = 13 if wrap else 12  # position 13: a 1 played high
    found = []
    for position in (n, 13) if wrap and n == 0 else (n,):
        for start in range(position - 2, position + 1):
            if start >= 0 and start + 2 <= top:
                a, b = (p % 13 for p in range(start, start + 3) if p != position)
                found.append((a, b))
    return tuple(found)


_RUN_NEIGHBOURS = {wrap: [_run_neighbours(n, wrap) for n in range(13)] for wrap in (False, True)}


# The number indexes whose ``lone_faces`` may change when the last copy of a face at each one
# is drawn.
NEAR = {
    wrap: [
        sorted({m for m in range(13) for pair in _RUN_NEIGHBOURS[wrap][m] if n in pair})
        for n in range(13)
    ]
    for wrap in (False, True)
}


# The colour lines of the hand this thread's ``okey.advise`` call is about (``walk_near``).
_NEAR = threading.local()


def walk_near(keys: Sequence[int]) -> None:
    """Search the lines that differ from one of these colour lines (``line_key``) where they
    share the most states with each other (``_walk_mirrored``); ``()`` when done.

    ``advise`` searches the lines of its hand less each discard plus each drawn face: such a
    line differs from the hand's at two numbers, and the walk up the line (``_runs_bits``)
    makes new states for its faces up to the lower change (the states above it are those of
    the line with the higher change alone, shared by every line with that change); walked
    the other way (``mirror_key``: the same profile), for its faces from the higher change up."""
    _NEAR.keys = tuple(key for key in keys if key & _FIELD_COUNTS)


def _walk_mirrored(key: int, read: int = -1) -> bool:
    """Whether the line (``line_key``) is searched as its mirror (``mirror_key``): where it
    differs from the nearest of ``walk_near``'s lines in more held tiles below its lowest
    changed number than above its highest (the 1 aside: the mirror keeps it in place).
    ``read``: the bits of a key the search reads (the counts only, for a bound)."""
    nearest = 0
    fewest = 14
    for line in getattr(_NEAR, "keys", ()):
        diff = (key ^ line) & read
        fields = (diff | diff >> 1 | diff >> 2) & _FIELD_LOW  # (bit 3p: number p differs)
        changed = fields.bit_count()
        if changed < fewest:
            nearest, fewest = fields, changed
    # (Every state of a line with a 1 held reads its count, ``_runs_bits``'s lanes, in either
    # direction: a changed 1 decides nothing.)
    nearest &= ~1
    if not nearest:
        return False
    counts = key & _FIELD_COUNTS
    below = counts & ((nearest & -nearest) - 1)
    above = counts >> nearest.bit_length()
    return _held(above) < _held(below)


def _held(counts: int) -> int:
    """The tiles of a line key's count fields."""
    return (counts & _FIELD_LOW).bit_count() + 2 * ((counts >> 1) & _FIELD_LOW).bit_count()


# Colour profiles by line key (``line_key``), wrap switch and hand size.
LINE_PROFILES: dict[int, Component] = {}


_LINE_PROFILES_LIMIT = 1 << 18


def _remember(cache: dict, key: int, value: object) -> None:
    """Store ``value`` in one of the line caches, emptied first once it holds
    ``_LINE_PROFILES_LIMIT`` entries (a long-running process stays bounded)."""
    if len(cache) >= _LINE_PROFILES_LIMIT:
        cache.clear()
    cache[key] = value


def line_profile(key: int, wrap: bool, size: int) -> Component:
    """``_colour_profile`` of the line with this key (``line_key``)."""
    profile = LINE_PROFILES.get(key | (wrap << 39) | (size << 40))
    if profile is None:
        profile = line_at_hand(key, wrap, size) or searched_line(key, wrap, size)
    return profile


def line_at_hand(key: int, wrap: bool, size: int) -> Component | None:
    """``line_profile`` where it needs no search: made before, or in the table (the line or
    the line with a copy left at every number no run can reach, ``relevant_key``); else
    None (``searched_line`` makes it)."""
    full = key | (wrap << 39) | (size << 40)
    profile = LINE_PROFILES.get(full)
    if profile is None:
        plain = full >> 39 == _PLAIN_RULES
        if plain:
            # ``_table_profile(full)``, inline.
            keys, index, profiles, spans = _PLAIN_LINES or _load_plain_lines()
            mirrored = (
                (full & _UNMIRRORED)
                | _MIRROR_LOW[(full >> 3) & 4095]
                | _MIRROR_MID[(full >> 15) & 4095]
                | _MIRROR_HIGH[(full >> 27) & 4095]
            )
            lower = mirrored if mirrored < full else full
            span = spans.get(lower >> _SPAN_SHIFT)
            if span is not None:
                at = bisect_left(keys, lower, span[0], span[1])
                if at < span[1] and keys[at] == lower:
                    at = index[at]
                    profile = profiles.made[at] or profiles[at]
        if profile is None:
            # The line with a copy left at every number no run can reach has the same
            # profile (``relevant_key``): the table may hold it, or it was searched.
            relevant = relevant_key(key, wrap) | (full & ~_LINE_BITS)
            if relevant == full:
                return None
            profile = LINE_PROFILES.get(relevant)
            if profile is None and plain:
                profile = _table_profile(relevant)
            if profile is None:
                return None
        _remember(LINE_PROFILES, full, profile)
    return profile


def searched_line(key: int, wrap: bool, size: int) -> Component:
    """``line_profile`` of a line ``line_at_hand`` has not (the run search), remembered."""
    full = key | (wrap << 39) | (size << 40)
    if wrap and _walk_mirrored(key):
        profile = _profile_of_key(mirror_key(key), wrap, size)
    else:
        profile = _profile_of_key(key, wrap, size)
    _remember(LINE_PROFILES, relevant_key(key, wrap) | (full & ~_LINE_BITS), profile)
    # Its bound terms are those of every line with its plain key (``line_bound``).
    _remember(_BOUNDS, plain_key(key) | (full & ~_LINE_BITS), profile.packed_bound)
    _remember(LINE_PROFILES, full, profile)
    return profile


def _table_profile(full: int) -> Component | None:
    """The table's profile of a line (``line_profile``'s key), or None where it has none.

    (The table holds a line or its mirror (``mirror_key``), whichever key is lower.)"""
    keys, index, profiles, spans = _PLAIN_LINES or _load_plain_lines()
    mirrored = (
        (full & _UNMIRRORED)
        | _MIRROR_LOW[(full >> 3) & 4095]
        | _MIRROR_MID[(full >> 15) & 4095]
        | _MIRROR_HIGH[(full >> 27) & 4095]
    )
    if mirrored < full:
        full = mirrored
    span = spans.get(full >> _SPAN_SHIFT)
    if span is not None:
        at = bisect_left(keys, full, span[0], span[1])
        if at < span[1] and keys[at] == full:
            at = index[at]
            return profiles.made[at] or profiles[at]
    return None


_LINE_BITS = (1 << 39) - 1


def mirror_key(key: int) -> int:
    """The line key (``line_key``) with numbers 2 to 13 in reverse order (2 for 13, 3 for 12 and
    so on; the 1 stays): with ``wrap`` the same profile as the line's.

    With a 1 played high a line runs 1, 2, ..., 13, 1 and reads the same backwards with each
    number n of 2 to 13 as 15 - n: every layout of runs of the line is one of its mirror's, a
    1 played low played high and the other way round, with the same slots, kept faces and
    excess."""
    return (
        (key & _UNMIRRORED)
        | _MIRROR_LOW[(key >> 3) & 4095]
        | _MIRROR_MID[(key >> 15) & 4095]
        | _MIRROR_HIGH[(key >> 27) & 4095]
    )


# The bits ``mirror_key`` keeps in place: the 1's field, and a ``line_profile`` key's wrap
# switch and size.
_UNMIRRORED = 7 | ~_LINE_BITS


def _mirror_fields(chunk: int, first: int) -> int:
    """Four fields of a line key, those of number indexes ``first`` to ``first + 3`` (12 bits
    from bit 0), where ``mirror_key`` moves them: index n to 13 - n."""
    out = 0
    for j in range(4):
        out |= ((chunk >> (3 * j)) & 7) << (3 * (13 - (first + j)))
    return out


# ``mirror_key`` of the fields of number indexes 1 to 4, 5 to 8 and 9 to 12, 12 bits at a time.
_MIRROR_LOW = [_mirror_fields(chunk, 1) for chunk in range(4096)]
_MIRROR_MID = [_mirror_fields(chunk, 5) for chunk in range(4096)]
_MIRROR_HIGH = [_mirror_fields(chunk, 9) for chunk in range(4096)]


# Numbers 10 to 13 (the fields a 1 played high reaches, and that reach it).
_FIELDS_NEAR_HIGH = sum(1 << (3 * p) for p in range(9, 13))


def relevant_key(key: int, wrap: bool) -> int:
    """The line key (``line_key``) with a copy left wherever no number is held within 4 (and,
    with ``wrap``, none of 10 to 13 is held where the number is the 1, nor the 1 where the
    number is one of 10 to 13): the same profile as the line's.

    The run search solves a line's clusters (``_clusters_packed``), each from up to
    ``MAX_OUTSIDE`` positions before its first held face to as many after its last, a 1 played
    high at position 13 reading the 1's copy left; a number further from every held face is in
    no cluster, so whether a copy of it is left is never read."""
    if not ~(key >> 1 | key >> 2) & _FIELD_LOW:
        return key  # (a copy left at every number held fewer than twice: a plain line)
    held = (key | key >> 1) & _FIELD_LOW  # bit 3p: number p held
    near = held | held << 3 | held << 6 | held << 9 | held << 12
    near |= held >> 3 | held >> 6 | held >> 9 | held >> 12
    if wrap:
        if held & 1:
            near |= _FIELDS_NEAR_HIGH
        if held & _FIELDS_NEAR_HIGH:
            near |= 1
    return key | ((~near & _FIELD_LOW) << 2)


def plain_key(key: int) -> int:
    """The line key (``line_key``) with a copy left wherever fewer than two are held.

    A line's bound terms (``Component.packed_bound``) are those of its plain key: the run
    search lays out the same runs whatever is left to draw (a copy left or not only changes
    the excess of a drawn tile), and a choice it leaves out as not useful keeps no more in no
    fewer slots than one it keeps, so the most ``SCALE * kept - price * slots`` is the same.
    The plain lines are those the precomputed table holds (``okey.line_table``), so a bound
    is read there where the line itself would be searched."""
    return key | (((~key >> 1) & _FIELD_LOW) << 2)


# Bit 0 of each number's field of a line key, and its count bits.
_FIELD_LOW = sum(1 << (3 * p) for p in range(13))
_FIELD_COUNTS = 3 * _FIELD_LOW


def plain_profile(key: int, wrap: bool, size: int) -> Component | None:
    """The profile of the line's plain key (``plain_key``) where it is at hand (made before,
    or in the table), else None.

    The plain line has a copy left at least wherever the line has one, so it lays out the same
    runs with no more excess: each of the line's choices is beaten by or equal to one of its
    own, and no knapsack keeps more with the line than with it (an upper bound, read where
    the line itself would be searched)."""
    full = key | (((~key >> 1) & _FIELD_LOW) << 2) | (wrap << 39) | (size << 40)
    profile = LINE_PROFILES.get(full)
    if profile is None and full >> 39 == _PLAIN_RULES:
        profile = _table_profile(full)
    return profile


def line_or_plain(key: int, wrap: bool, size: int) -> tuple[Component, bool]:
    """The line's profile and True where it needs no search (``line_at_hand``); else a
    stand-in and False: its plain line's where that is at hand (``plain_profile``), else its
    most kept at each slot count with no excess (``_row_stand_in``).  Either has the line's
    bound terms and no knapsack keeps more with the line than with it, so a check it fails
    the line fails; with its drawn tiles all taken as missing (``drawn_as_okeys``) none keeps
    less, so a check that passes the line passes: only one between the two needs the line
    (``searched_line``).  (A line read so is remembered as such until it is searched:
    ``_STAND_INS``.)"""
    full = key | (wrap << 39) | (size << 40)
    profile = LINE_PROFILES.get(full)
    if profile is not None:
        return profile, True
    profile = _STAND_INS.get(full)
    if profile is not None:
        return profile, False
    profile = line_at_hand(key, wrap, size)
    if profile is not None:
        return profile, True
    plain = key | (((~key >> 1) & _FIELD_LOW) << 2)
    if plain != key:
        profile = plain_profile(plain, wrap, size)
        if profile is not None:
            _remember(_STAND_INS, full, profile)
            return profile, False
    # (Else the most kept at each slot count, with no excess: ``_row_stand_in``.)
    profile = _row_stand_in(_slot_row(plain, wrap, size))
    _remember(_STAND_INS, full, profile)
    return profile, False


# ``line_or_plain``'s stand-ins (plain lines, rows) for lines not searched yet, by the lines'
# ``line_profile`` keys.
_STAND_INS: dict[int, Component] = {}


def drawn_as_okeys(plain: Component) -> Component:
    """A plain line's profile (``line_or_plain``'s stand-in, or a row) with every tile each
    choice draws taken as one with no copy left (its excess: its slots less its kept faces).

    A line with the plain line's counts lays out the same runs (the run search reads the copies
    left only for the excess of a drawn tile), each with at most that much excess, so no
    knapsack keeps fewer with the line than with this profile: a check it passes, the line
    passes unsearched (``advise``'s checks after the plain line's, where okeys to spare or a
    few drawn tiles settle them)."""
    found = _AS_OKEYS.get(plain.serial)
    if found is None:
        found = interned(tuple(sorted({(s, k, s - k) for s, k, _ in plain.entries})))
        _remember(_AS_OKEYS, plain.serial, found)
    return found


# ``drawn_as_okeys`` by the plain line's profile's serial.
_AS_OKEYS: dict[int, Component] = {}


def line_bound(key: int, wrap: bool, size: int) -> int:
    """``line_profile(key, wrap, size).packed_bound``, read from the line's plain key
    (``plain_key``)."""
    plain = key | (((~key >> 1) & _FIELD_LOW) << 2)
    full = plain | (wrap << 39) | (size << 40)
    profile = LINE_PROFILES.get(full)
    if profile is not None:
        return profile.packed_bound
    bound = _BOUNDS.get(full)
    if bound is None:
        profile = _table_profile(full) if full >> 39 == _PLAIN_RULES else None
        if profile is not None:
            bound = profile.packed_bound
        else:
            bound = _bound_terms(_slot_row(plain, wrap, size))
        _remember(_BOUNDS, full, bound)
    return bound


def _slot_row(plain: int, wrap: bool, size: int) -> tuple[int, ...]:
    """The most kept at each slot count (-1: none) of the lines with these counts (a plain
    key, ``plain_key``), from the run search without the excess (``_searched_row``; cached)."""
    full = plain | (wrap << 39) | (size << 40)
    row = _SLOT_ROWS.get(full)
    if row is None:
        if wrap and _walk_mirrored(plain, _FIELD_COUNTS):
            row = _searched_row(mirror_key(plain), wrap, size)
        else:
            row = _searched_row(plain, wrap, size)
        _remember(_SLOT_ROWS, full, row)
    return row


# ``_slot_row`` by ``line_profile`` key of the plain line (tuples of ints: untracked).
_SLOT_ROWS: dict[int, tuple[int, ...]] = {}


def _row_stand_in(row: tuple[int, ...]) -> Component:
    """A profile of the most kept at each slot count (``_slot_row``) with no excess: no line
    of those counts keeps more in any knapsack (each of its choices keeps no more in as many
    slots, with no less excess), and its bound terms are theirs (``line_bound``); and with its
    drawn tiles taken as missing (``drawn_as_okeys``), none keeps fewer (the choice keeping
    that many draws no more tiles than that).  ``line_or_plain``'s stand-in where no plain
    line is at hand."""
    found = _ROW_STAND_INS.get(row)
    if found is None:
        found = interned(tuple((slots, kept, 0) for slots, kept in enumerate(row) if kept >= 0))
        if len(_ROW_STAND_INS) >= 1 << 14:
            _ROW_STAND_INS.clear()
        _ROW_STAND_INS[row] = found
    return found


_ROW_STAND_INS: dict[tuple[int, ...], Component] = {}


# ``line_bound`` by ``line_profile`` key of the plain line (ints only), where no profile of it
# was made.
_BOUNDS: dict[int, int] = {}


def _searched_bound(key: int, wrap: bool, size: int) -> int:
    """``line_profile(key, wrap, size).packed_bound``, from the run search without the excess
    (``_searched_row``)."""
    return _bound_terms(_searched_row(key, wrap, size))


def _searched_row(key: int, wrap: bool, size: int) -> tuple[int, ...]:
    """The line's most kept at each slot count up to ``size`` (-1: none), from the run search
    without the excess: ``_searched_bound``'s row.

    A bound term is the most ``SCALE * kept - price * slots`` over the line's choices within
    ``size`` slots, which never reads the excess: so the search walks the same runs keeping only
    (slots, kept) (``_slot_bits``, where a copy left or not plays no part, so lines share far
    more of it) and each cluster's best kept per slot count is added up as in
    ``_profile_of_key`` (a choice within ``size`` slots draws fewer tiles than ``size``, so the
    excess limits of the full search drop none of them)."""
    line, _ = _line_bits(key, wrap)
    top = 13 if wrap else 12
    ones = line & 3
    kept_bits = kept_field_width(size)
    if wrap and ones:
        # Every split at once, in lanes (``_profile_of_key``).
        lanes, stride = ones + 1, _slot_lane(size)
        within = (1 << ((size + 1) << kept_bits)) - 1
        found = 0
        for high in range(lanes):
            found |= _slot_bits(line - high, top + 1, size, lanes) >> (high * stride) & within
        return tuple(_most_kept(found, kept_bits, size))
    best = None  # most kept at each slot count, over the clusters so far
    for cluster, _, length in _clusters_packed(line, 0, top):
        own = _most_kept(_slot_bits(cluster, length, size), kept_bits, size)
        if best is None:
            best = own
            continue
        added = [-1] * (size + 1)
        for slots, kept in enumerate(best):
            if kept >= 0:
                for more, extra in enumerate(own[: size + 1 - slots]):
                    if extra >= 0 and kept + extra > added[slots + more]:
                        added[slots + more] = kept + extra
        best = added
    return tuple(best or [0] + [-1] * size)


def _bound_terms(best: list[int]) -> int:
    """The packed bound terms (``Component.packed_bound``) of the most kept at each slot count
    (-1: none).  (Only the slot counts that keep more than every smaller one can give a term:
    a price per slot is positive.)  (Cached: a few hundred rows serve every line.)"""
    row = tuple(best)
    packed = _BOUND_TERMS.get(row)
    if packed is None:
        packed = _bound_terms_of(best)
        if len(_BOUND_TERMS) >= 1 << 14:
            _BOUND_TERMS.clear()
        _BOUND_TERMS[row] = packed
    return packed


# ``_bound_terms`` by the most kept at each slot count (tuples of ints: untracked).
_BOUND_TERMS: dict[tuple[int, ...], int] = {}


def _bound_terms_of(best: list[int]) -> int:
    """``_bound_terms``, computed."""
    rising = []
    top = -1
    for slots, kept in enumerate(best):
        if kept > top:
            rising.append((SCALE * kept, slots))
            top = kept
    packed = 0
    for at, price in enumerate(SLOT_PRICES):
        most = 0
        for value, slots in rising:
            if value - price * slots > most:
                most = value - price * slots
        packed |= most << (FIELD * at)
    return packed


def _most_kept(bits: int, kept_bits: int, size: int) -> list[int]:
    """Per slot count up to ``size``, the most kept of a ``_slot_bits`` set (-1: none)."""
    mask = (1 << (1 << kept_bits)) - 1
    return [((bits >> (s << kept_bits)) & mask).bit_length() - 1 for s in range(size + 1)]


# The precomputed profiles of the plain lines (``okey.line_table``), loaded on first use, with
# the span of the keys in each of their ranges (``_spans``), and the wrap switch and hand size
# they are for (``okey.line_table.TAIL >> 39``: classic rules).
_PLAIN_LINES: tuple[array, array, Profiles, dict[int, tuple[int, int]]] | None = None


_PLAIN_RULES = 1 | (14 << 1)


def _load_plain_lines() -> tuple[array, array, Profiles, dict[int, tuple[int, int]]]:
    global _PLAIN_LINES
    from okey.line_table import load

    keys, index, profiles = load()
    _PLAIN_LINES = keys, index, profiles, _spans_of(keys)
    return _PLAIN_LINES


# A table key's range: its bits from here up (numbers 8 to 13, the wrap switch and the size).
_SPAN_SHIFT = 21


def _spans_of(keys: array) -> dict[int, tuple[int, int]]:
    """Per range of the table's keys (``key >> _SPAN_SHIFT``) that holds any, where its keys
    start and end: a line is searched for in its range only (about 10 steps of bisection
    instead of 18; a few thousand ranges, found by bisection too)."""
    spans = {}
    at, end = 0, len(keys)
    while at < end:
        bucket = keys[at] >> _SPAN_SHIFT
        stop = bisect_left(keys, (bucket + 1) << _SPAN_SHIFT, at)
        spans[bucket] = (at, stop)
        at = stop
    return spans


def _colour_profile(
    faces: tuple[int, ...], avail: tuple[int, ...], wrap: bool, size: int
) -> Component:
    """Runs of one colour: the useful (slots, kept, excess) choices of laying its faces in runs.

    ``faces`` are the colour's 13 counts, ``avail`` whether each face still has a copy to draw
    (the work is done by ``_profile_of_key`` on the line's int key)."""
    return line_profile(line_key(faces, avail, 0), wrap, size)


def _profile_of_key(key: int, wrap: bool, size: int) -> Component:
    """``_colour_profile`` of the line with this key (``line_key``).

    With ``wrap`` a 1 may be played high (position 14, after 13): each split of the held 1s into
    low and high ones is tried, all in one walk of the whole line (``_runs_bits`` with lanes:
    the splits differ only where a run reaches the high 1).  Otherwise runs never cross 4 or
    more empty positions, so faces further apart than that are solved apart (as clusters, whose
    run choices ``_runs_packed`` caches by their shape) and their choices added up.
    """
    line, avail = _line_bits(key, wrap)
    top = 13 if wrap else 12
    ones = line & 3
    splits = range(ones + 1) if wrap else range(1)
    if not ones or not wrap:
        # One split: the profile depends on the clusters' shapes only, which repeat across
        # lines far more than whole lines do (cached by them).
        clusters = _clusters_packed(line, avail, top)
        # (Keyed by one int: a tuple of tuples would stay tracked by the collector.)
        shapes = size
        for cluster_line, cluster_avail, length in clusters:
            shapes = (shapes << 48) | cluster_line | cluster_avail << 28 | length << 42 | 1 << 47
        component = _SHAPES_MEMO.get(shapes)
        if component is None:
            component = _profile_of_clusters(clusters, size)
            if len(_SHAPES_MEMO) >= _RUNS_MEMO_LIMIT:
                _SHAPES_MEMO.clear()
            _SHAPES_MEMO[shapes] = component
        return component
    # Every split at once: the line's choices with the 1s held high 0 to ``ones`` times, in
    # lanes (``_runs_bits``), from the line with ``ones - high`` held low (the walk of the
    # line with all held low reaches the others as its rests, from its memo).
    lanes = ones + 1
    found = 0
    for high in splits:
        bits = _runs_bits(line - high, avail, top + 1, size, lanes)
        found |= _lane_of(bits, high, lanes, size)
    return _component_of_packed(_useful_items(found & _run_fields(size)[3], size))


def _profile_of_clusters(clusters: list[tuple[int, int, int]], size: int) -> Component:
    """The profile of a line of one split (``_profile_of_key``) from its clusters."""
    if len(clusters) == 1:
        # One cluster: its choices are already the useful ones (``useful_bits`` of a useful set
        # of choices is the same set), all within ``size`` slots and with less excess than
        # LONGEST_RUN (a run keeps at least one face).
        return _component_of_packed(_runs_packed(*clusters[0], size))
    kept_bits, width, _, valid = _run_fields(size)
    within = _slots_within(size)
    # (The first cluster's bits are taken whole: choices another beats still lose to it once
    # the same choices are added, so the useful choices at the end are the same.)
    table = _runs_bits(*clusters[0], size) & valid if clusters else 1
    for cluster in clusters[1:]:
        new = 0
        for k, kept in _runs_packed(*cluster, size):
            slots = k & SLOTS_MASK
            # (Only the totals that stay within ``size`` slots: a layer has no room for more.)
            new |= (table & within[slots]) << (kept + (slots << kept_bits) + (k >> SHIFT) * width)
        table = new & valid
    return _component_of_packed(_useful_items(table, size))


def _slots_within(size: int) -> tuple[int, ...]:
    """Per slot count s up to ``size``, the mask of the totals (``_run_fields``) within
    ``size - s`` slots and ``size`` excess."""
    found = _SLOTS_WITHIN.get(size)
    if found is None:
        kept_bits, width, _, _ = _run_fields(size)
        masks = []
        for slots in range(size + 1):
            layer = (1 << ((size - slots + 1) << kept_bits)) - 1
            masks.append(sum(layer << (excess * width) for excess in range(size + 1)))
        found = _SLOTS_WITHIN[size] = tuple(masks)
    return found


_SLOTS_WITHIN: dict[int, tuple[int, ...]] = {}


# Profiles of lines of one split by their clusters (``_profile_of_clusters``), packed in one
# int (per cluster, 48 bits: its line, availability and length, and a marker bit; the size
# below them).
_SHAPES_MEMO: dict[int, Component] = {}


def _line_bits(key: int, wrap: bool) -> tuple[int, int]:
    """A line key as its counts (2 bits per position) and availability (1 bit per position);
    with ``wrap``, position 13 (a 1 played high) has the 1's availability.  (Three positions at
    a time, from a table.)"""
    l0, a0 = _BITS3[key & 511]
    l1, a1 = _BITS3[(key >> 9) & 511]
    l2, a2 = _BITS3[(key >> 18) & 511]
    l3, a3 = _BITS3[(key >> 27) & 511]
    l4, a4 = _BITS3[(key >> 36) & 7]
    line = l0 | (l1 << 6) | (l2 << 12) | (l3 << 18) | (l4 << 24)
    avail = a0 | (a1 << 3) | (a2 << 6) | (a3 << 9) | (a4 << 12)
    if wrap:
        avail |= (avail & 1) << 13
    return line, avail


def _bits3(chunk: int) -> tuple[int, int]:
    """Three positions of a line key (9 bits) as 2-bit counts and availability bits."""
    line = avail = 0
    for p in range(3):
        field = (chunk >> (3 * p)) & 7
        line |= (field & 3) << (2 * p)
        if field & 4:
            avail |= 1 << p
    return line, avail


_BITS3 = [_bits3(chunk) for chunk in range(512)]


def _component_of_packed(found: tuple[tuple[int, int], ...]) -> Component:
    """The component of useful choices (packed, as ``useful_bits`` items): a few hundred
    distinct ones serve every line, so they are cached."""
    component = _COMPONENTS.get(found)
    if component is None:
        component = interned(tuple(sorted((k & SLOTS_MASK, kept, k >> SHIFT) for k, kept in found)))
        if len(_COMPONENTS) >= _RUNS_MEMO_LIMIT:
            _COMPONENTS.clear()
        _COMPONENTS[found] = component
    return component


_COMPONENTS: dict[tuple[tuple[int, int], ...], Component] = {}


def _useful_items(bits: int, size: int) -> tuple[tuple[int, int], ...]:
    """``useful_bits`` as items (cached: the same choices come from many clusters)."""
    key = (bits, size)
    found = _USEFUL.get(key)
    if found is None:
        found = tuple(useful_bits(bits, size).items())
        if len(_USEFUL) >= _RUNS_MEMO_LIMIT:
            _USEFUL.clear()
        _USEFUL[key] = found
    return found


_USEFUL: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}


def _clusters_packed(line: int, avail: int, top: int) -> list[tuple[int, int, int]]:
    """Split a colour's line (2 bits per position, 0..top) into clusters: each as its line and
    availability from up to 4 positions before its first face to up to 4 after its last (the
    room a run may draw in), and that length."""
    occupied = (line | (line >> 1)) & 0x5555555  # bit 2p: position p held
    spans = _SPANS.get(occupied | (top << 28))
    if spans is None:
        spans = _SPANS[occupied | (top << 28)] = _spans(occupied, top)
    return [
        (
            (line >> (2 * start)) & ((1 << (2 * length)) - 1),
            (avail >> start) & ((1 << length) - 1),
            length,
        )
        for start, length in spans
    ]


def _spans(occupied: int, top: int) -> tuple[tuple[int, int], ...]:
    """The (start, length) of each cluster of ``_clusters_packed``, from the held positions
    (bit 2p set where position p is held)."""
    held = [p for p in range(top + 1) if (occupied >> (2 * p)) & 1]
    out = []
    i = 0
    while i < len(held):
        j = i
        while j + 1 < len(held) and held[j + 1] - held[j] <= 4:
            j += 1
        lo, hi = held[i], held[j]
        start = lo - min(MAX_OUTSIDE, lo)
        out.append((start, hi + min(MAX_OUTSIDE, top - hi) - start + 1))
        i = j + 1
    return tuple(out)


# ``_spans`` by the held positions and the top position (at most 2^15 entries).
_SPANS: dict[int, tuple[tuple[int, int], ...]] = {}


# Results of ``_runs_packed`` shared by every cluster and hand of the process, keyed on the line
# and its availability from 4 positions before the lowest held face (nothing further left
# matters), so the clusters of different hands share the solutions of their common tails.
_RUNS_MEMO_LIMIT = 1 << 17  # about 2 KB each with the other caches: a bounded few hundred MB


_PACKED_MEMO: dict[int, tuple[tuple[int, int], ...]] = {}


# The same lines' choices as bits (``_runs_bits``), which the search itself reads.
_BITS_MEMO: dict[int, int] = {}


# Most drawn tiles outside a run's kept span of each length: what makes it 3 long, plus 2.
_OUTSIDE = tuple(2 + max(0, 3 - span) for span in range(64))


# ``_pads`` per hand size (and ``_runs_bits``'s lanes, ``size | lanes << 8``), by the walk's
# situation.
_PADS: dict[int, dict[int, tuple[int, ...]]] = {}


def _pads(
    reach: int,
    leads: int,
    room: int,
    lead_missing: int,
    trail_missing: int,
    size: int,
    lanes: int = 1,
) -> tuple[int, ...]:
    """The shifts (``_run_fields``) that the drawn tiles around a run's kept span add, each
    once: a lead of up to ``leads`` tiles before its first face and a trail of up to ``room``
    after its last (``reach`` positions apart), together at most what makes the run 3 long
    plus 2 (``_OUTSIDE``), the run 3 to ``LONGEST_RUN`` long; each drawn tile at a position
    with no copy left (bits of ``lead_missing``, the lowest the furthest left, and of
    ``trail_missing``, the lowest the nearest) counts one excess (``lanes`` layers of
    ``_runs_bits``'s lanes apart)."""
    kept_bits, width, _, _ = _run_fields(size)
    excess_step = lanes * width
    outside = _OUTSIDE[reach]
    shifts = set()
    for trail in range(room + 1):
        trail_excess = (trail_missing & ((1 << trail) - 1)).bit_count()
        run = reach + trail
        for lead in range(max(0, 3 - run), min(leads, outside - trail, LONGEST_SEARCHED - run) + 1):
            lead_excess = (lead_missing >> (leads - lead)).bit_count()
            shifts.add(((lead + trail) << kept_bits) + (lead_excess + trail_excess) * excess_step)
    return tuple(sorted(shifts))


def _runs_packed(line: int, avail: int, length: int, size: int) -> tuple[tuple[int, int], ...]:
    """Every useful way to lay a colour's faces out in runs: (slots + (excess << SHIFT), most
    faces kept) pairs (``useful_bits`` of the choices ``_runs_bits`` finds)."""
    key = line | (avail << 32) | (length << 48) | (size << 56)
    cached = _PACKED_MEMO.get(key)
    if cached is None:
        cached = _useful_items(_runs_bits(line, avail, length, size), size)
        if len(_PACKED_MEMO) >= _RUNS_MEMO_LIMIT:
            _PACKED_MEMO.clear()
        _PACKED_MEMO[key] = cached
    return cached


# Bit positions of a run choice (``_runs_bits``): kept in the lowest ``size.bit_length()`` bits
# (a field of one bit per kept count), slots in the next ones, one field per slot count, excess
# above: excess e's layer from bit ``e * width`` on.  A layer holds the fields of ``size`` slots,
# and room for what a step adds before the totals over ``size`` are dropped (a longest searched
# run and a carry of its kept into the next field, ``_runs_bits``; ``useful_bits``' spread of
# a field to more slots), no more: the sets are shifted and ORed at every state of the search,
# and their length is most of the cost (a layer of a power of two fields, 32 for 14 tiles, made
# them 40 % longer).  Per size: (kept bits, layer width in bits, mask of the totals within
# ``size`` slots and ``size`` excess, the same with at most ``LONGEST_RUN`` excess).
_RUN_FIELDS: dict[int, tuple[int, int, int, int]] = {}


def _run_fields(size: int) -> tuple[int, int, int, int]:
    """(kept bits, layer width, mask of the totals within ``size`` slots, the same with at
    most ``LONGEST_RUN`` excess: a whole line's totals, ``_profile_of_key``)."""
    fields = _RUN_FIELDS.get(size)
    if fields is None:
        kept_bits = kept_field_width(size)
        width = _layer_fields(size) << kept_bits
        valid = line = 0
        slots_mask = (1 << ((size + 1) << kept_bits)) - 1
        for excess in range(size + 1):
            valid |= slots_mask << (excess * width)
            if excess <= LONGEST_RUN:
                line |= slots_mask << (excess * width)
        fields = _RUN_FIELDS[size] = (kept_bits, width, valid, line)
    return fields


def _useful_spreads(size: int) -> list[int]:
    """The numbers of slots ``useful_bits`` spreads a field by, one step each (1, 2, 4, ...:
    a field reaches every count from 3 to ``size`` more slots)."""
    spreads = []
    spread, reached = 1, 0
    while reached < size - 3:
        spreads.append(spread)
        reached += spread
        spread <<= 1
    return spreads


def _layer_fields(size: int) -> int:
    """The slot fields of a layer of ``_run_fields``: the ``size + 1`` of the totals kept, and
    room past them for the most a step moves a field before the fields over ``size`` are
    dropped, so that nothing reaches the next layer: a run of ``LONGEST_SEARCHED`` slots, plus
    the carry of its kept count (at most ``size`` kept before it, as no total keeps more than
    its slots) into the fields above (``_runs_bits``); ``useful_bits``' largest spread."""
    longest = LONGEST_SEARCHED
    carry = (size + longest) >> kept_field_width(size)
    return size + 1 + max(longest + carry, *_useful_spreads(size), 3)


def useful_bits(bits: int, size: int) -> dict[int, int]:
    """The choices in a ``_runs_bits`` set that no other beats (slots + (excess << SHIFT) ->
    most kept): a choice is kept when it keeps more than any with less excess at its slot count
    and more than any with no more excess in 3 or more fewer slots.  (Three or more spare slots
    are always filled by a new group of drawn tiles, so only choices within two slots of a
    better one can matter: they make the total exact.  Dropping the others is safe at every
    step of a knapsack: what beats a choice still beats it once the same parts are added.)

    The bits are read as an array of fields, one per slot count (``kept_field_width``), all at
    once: each field's most kept, less those that the fields of less excess (at its slot
    count) or of 3 or more fewer slots (no more excess) reach, each field filled below its
    most kept first (``_useful_masks``); the few choices left are read off in order."""
    kept_bits = _run_fields(size)[0]
    width, smear, low_bits, slot_fields, steps = _USEFUL_MASKS.get(size) or _useful_masks(size)
    # Each field with every kept count under its most kept (as ``_undominated``) ...
    down = bits
    for step, mask in smear:
        down |= (down >> step) & mask
    # ... its most kept alone, ...
    most = down & ~((down >> 1) & low_bits)
    # ... the fields of less excess at each slot count (a prefix OR over the layers, one up),
    length = bits.bit_length()
    below = down << width
    shift = width
    while shift < length:
        below |= below << shift
        shift <<= 1
    # ... and those of no more excess in 3 or more fewer slots (within each layer).
    fewer = ((down | below) << (3 << kept_bits)) & slot_fields
    for step in steps:
        fewer |= (fewer << step) & slot_fields
    left = most & ~below & ~fewer
    found = {}
    field_mask = (1 << kept_bits) - 1
    while left:
        bit = left & -left
        excess, at = divmod(bit.bit_length() - 1, width)
        found[(at >> kept_bits) + (excess << SHIFT)] = at & field_mask
        left ^= bit
    return found


# ``useful_bits``'s masks per hand size: a layer's width in bits, the smearing steps of
# ``_undominated``, every bit of each field but its top one, the fields of ``size`` slots or
# fewer in each layer, and the shifts (in bits) that spread a field to 1, 2, 4, ... more slots.
_USEFUL_MASKS: dict[int, tuple[int, tuple[tuple[int, int], ...], int, int, tuple[int, ...]]] = {}


def _useful_masks(size: int) -> tuple[int, tuple[tuple[int, int], ...], int, int, tuple[int, ...]]:
    """``_USEFUL_MASKS``'s entry for a hand size, made (over as many layers as
    ``_domination``'s, which the smearing covers: every excess up to ``size``)."""
    kept_bits = _run_fields(size)[0]
    width, smear = _DOMINATION.get(size) or _domination(size)
    field = 1 << kept_bits
    per_layer = _layer_fields(size)
    low_bits = slot_fields = 0
    for layer in range(3 * (size + 1)):
        for slots in range(per_layer):
            at = layer * width + slots * field
            low_bits |= ((1 << (field - 1)) - 1) << at
            if slots <= size:
                slot_fields |= ((1 << field) - 1) << at
    # (A field moves at most 3 + (size - 3) fields up, one spread at a time, within its layer:
    # a layer has room for the largest spread past ``size`` (``_layer_fields``), and the mask
    # drops the fields past ``size`` at each step.)
    steps = tuple(spread << kept_bits for spread in _useful_spreads(size))
    found = _USEFUL_MASKS[size] = (width, smear, low_bits, slot_fields, steps)
    return found


def _runs_bits(line: int, avail: int, length: int, size: int, lanes: int = 1) -> int:
    """Every way to lay a colour's faces out in runs, as a set of bits: one per (slots, kept,
    excess) some layout reaches (``_run_fields``), those over ``size`` slots left out.

    ``line`` holds 2 bits per position (the count), ``avail`` 1 bit per position (a copy left
    to draw), over ``length`` positions (the last may be a 1 played high); the lowest held face
    either stays out of every run or is the first kept face of a run, perhaps with drawn tiles
    before it.
    The run then takes every held face on its way (taking beats drawing the same face), may cross
    gaps of up to 3 drawn tiles to reach further faces (a longer gap costs at least as many slots
    as two separate runs), and ends on a kept face, perhaps plus drawn tiles.  The drawn tiles
    outside the kept span are at most what makes the run 3 long plus 2: more is never needed, as
    3 or more spare slots make a group of their own.  A drawn tile whose face has no copy left
    counts one excess (an okey must stand in).  Adding a run to the rest of the line's choices
    is one shift of the rest's bits (by the run's slots, kept and excess).

    With ``lanes`` over 1, the line's last position (a 1 played high) is left empty in ``line``
    and the answer holds the line's choices with it held 0 to ``lanes - 1`` times at once, in
    lanes (``_lane_spread``): excess e of lane t in layer ``e * lanes + t``.  Where no run from
    the lowest face can reach the last position, the walk is the same for every count held
    there, so one walk serves them all (the splits of a line's 1s, ``_profile_of_key``, share
    it); nearer, each lane is walked alone.
    """
    if line:
        first = ((line & -line).bit_length() - 1) >> 1
    elif lanes == 1:
        return 1
    else:
        first = length - 1  # (lanes: nothing held before the last position)
    if first > MAX_OUTSIDE:
        # Positions further left than a lead of MAX_OUTSIDE can reach play no part.
        cut = first - MAX_OUTSIDE
        line >>= 2 * cut
        avail >>= cut
        length -= cut
        first = MAX_OUTSIDE
    key = line | (avail << 32) | (length << 48) | (size << 56) | ((lanes - 1) << 62)
    found = _BITS_MEMO.get(key)
    if found is None:
        found = _runs_walk(line, avail, length, size, lanes, key)
    return found


def _runs_walk(line: int, avail: int, length: int, size: int, lanes: int, key: int) -> int:
    """``_runs_bits`` of a line whose lowest face is at most ``MAX_OUTSIDE`` positions from
    its start (or, with lanes, an empty line), not in the memo (``key``: its key there), made:
    the walk up the line from its lowest face."""
    first = ((line & -line).bit_length() - 1) >> 1 if line else length - 1
    tail = key & ~0xFFFFFFFF
    memo = _BITS_MEMO
    top = length - 1
    if lanes > 1 and top - first < LONGEST_SEARCHED:
        found = _lanes_apart(line, avail, length, size, lanes)
        if len(memo) >= _RUNS_MEMO_LIMIT:
            memo.clear()
        memo[key] = found
        return found
    walk = _WALKS.get(size | (lanes << 8))
    if walk is None:
        walk = _walk_constants(size, lanes)
    kept_bits, excess_step, valid = walk
    longest = LONGEST_SEARCHED
    rest = line - (1 << (2 * first))
    # ``_runs_bits(rest, ...)``, its memo read here first (as for ``left`` below).
    if not rest:
        found = 1 if lanes == 1 else _runs_bits(0, avail, length, size, lanes)
    else:
        low = ((rest & -rest).bit_length() - 1) >> 1
        if low > MAX_OUTSIDE:
            cut = low - MAX_OUTSIDE
            sub_line, sub_avail = rest >> (2 * cut), avail >> cut
            sub_key = (
                sub_line
                | (sub_avail << 32)
                | ((length - cut) << 48)
                | (size << 56)
                | ((lanes - 1) << 62)
            )
            found = memo.get(sub_key)
            if found is None:
                found = _runs_walk(sub_line, sub_avail, length - cut, size, lanes, sub_key)
        else:
            found = memo.get(rest | tail)
            if found is None:
                found = _runs_walk(rest, avail, length, size, lanes, rest | tail)
    missing = ~avail
    leads = first if first < MAX_OUTSIDE else MAX_OUTSIDE
    # The positions a lead may draw (bit i: position first - leads + i) with no copy left.
    lead_missing = (missing >> (first - leads)) & ((1 << leads) - 1)
    # (The situation's fields that stay the same along the walk.)
    lead_fields = (leads << 17) | (lead_missing << 7)
    pads_of = _PADS.get(size | (lanes << 8))
    if pads_of is None:
        pads_of = _PADS[size | (lanes << 8)] = {}
    # One walk up the line from the first face, from one kept face to the next (a run takes
    # every held face on its way): a run through the first face may end on each, perhaps plus
    # drawn tiles (its trail), and start with drawn tiles before the first face (its lead).
    # Where it goes reads the line only near its first face: made once per such neighbourhood
    # (``_walk_plan``), the copies left read here.
    span = top - first
    plan_key = (
        ((line >> (2 * first)) & ((1 << (2 * longest)) - 1))
        | ((span if span < longest else longest) << (2 * longest))
        | (size << 40)
        | (longest << 46)
    )
    plan = _PLANS.get(plan_key)
    if plan is None:
        if len(_PLANS) >= _RUNS_MEMO_LIMIT:
            _PLANS.clear()
        plan = _PLANS[plan_key] = _walk_plan(rest, first, top, size)
    missing >>= first
    for delta, low_off, reach_room, trail_at, trail_mask, gaps, kept_reach in plan:
        trail_missing = (missing >> trail_at) & trail_mask
        situation = reach_room | lead_fields | trail_missing
        pads = pads_of.get(situation)
        if pads is None:
            reach, room = reach_room >> 20, (reach_room >> 14) & 7
            pads = _pads(reach, leads, room, lead_missing, trail_missing, size, lanes)
            pads_of[situation] = pads
        if not pads:
            continue
        left = rest - (delta << (2 * first))
        if not left:
            sub = 1 if lanes == 1 else _runs_bits(0, avail, length, size, lanes)
        else:
            # ``_runs_bits(left, ...)``, its memo read here first.
            low = first + low_off if low_off >= 0 else ((left & -left).bit_length() - 1) >> 1
            if low > MAX_OUTSIDE:
                cut = low - MAX_OUTSIDE
                sub_line, sub_avail = left >> (2 * cut), avail >> cut
                sub_key = (
                    sub_line
                    | (sub_avail << 32)
                    | ((length - cut) << 48)
                    | (size << 56)
                    | ((lanes - 1) << 62)
                )
                sub = memo.get(sub_key)
                if sub is None:
                    sub = _runs_walk(sub_line, sub_avail, length - cut, size, lanes, sub_key)
            else:
                sub = memo.get(left | tail)
                if sub is None:
                    sub = _runs_walk(left, avail, length, size, lanes, left | tail)
        at = kept_reach + (missing & gaps).bit_count() * excess_step if gaps else kept_reach
        if len(pads) == 1:
            found |= sub << (at + pads[0])
        else:
            sub <<= at
            for shift in pads:
                found |= sub << shift
    found &= valid
    if found.bit_length() > _LAYER_BITS[size | (lanes << 8)]:
        found = _undominated(found, size, lanes)  # (one layer of excess: nothing to drop)
    if len(memo) >= _RUNS_MEMO_LIMIT:
        memo.clear()
    memo[key] = found
    return found


# ``_runs_bits``'s walks (``_walk_plan``) by the line near the walk's first face, the hand size
# (bit 40 up) and the longest run searched (bit 46 up).  (One dict for all, made at import:
# ``okey.load_tables`` freezes it, so a full collection never walks its entries.)
_PLANS: dict[int, tuple[tuple[int, ...], ...]] = {}


def _walk_plan(rest: int, first: int, top: int, size: int) -> tuple[tuple[int, ...], ...]:
    """The steps of ``_runs_bits``'s walk from the first face (at ``first``; ``rest``: the line
    less that face), one per kept face a run through the first may end on: (the faces that run
    takes after the first, two bits per position from ``first``; where the rest of the line
    then starts, from ``first``, or -1 where further than the walk reads; the reach and the
    longest trail as ``_pads``'s situation fields; where the trail starts, from ``first``, and
    the mask of its length; the drawn positions inside the run, as bits from ``first``; the
    run's kept and reach as a shift).

    Where the walk goes reads the counts of the first face and the ``LONGEST_SEARCHED - 1``
    positions after it only (no kept face and no trail reaches further), and where the line
    ends if within them: the same steps serve every line that agrees there, whatever copies
    are left and however far a lead may reach (``_runs_bits`` reads those; its
    ``plan_key``)."""
    kept_bits = kept_field_width(size)
    longest = LONGEST_SEARCHED
    steps = []
    left = rest
    kept, gaps, end = 1, 0, first
    while True:
        reach = end - first + 1
        above = left >> (2 * end + 2)
        if above:
            after = end + 1 + (((above & -above).bit_length() - 1) >> 1)  # the next held face
            gap = after - end - 1
        else:
            after = top + 1
            gap = top - end
        room = min(gap, MAX_OUTSIDE, longest - reach)  # the longest trail
        low_off = -1
        if left:
            low_off = (((left & -left).bit_length() - 1) >> 1) - first
            if low_off >= longest:
                low_off = -1  # (past what the walk reads: found from the line itself)
        steps.append(
            (
                (rest - left) >> (2 * first),
                low_off,
                (reach << 20) | (room << 14),
                end + 1 - first,
                (1 << room) - 1,
                gaps,
                kept + (reach << kept_bits),
            )
        )
        # The run goes on to the next held face across at most MAX_OUTSIDE drawn tiles.
        if after > top or gap > MAX_OUTSIDE or after - first >= longest:
            break
        gaps |= ((1 << gap) - 1) << (end + 1 - first)
        left -= 1 << (2 * after)
        kept += 1
        end = after
    return tuple(steps)


# ``_runs_bits``'s fields per hand size and lanes (``size | lanes << 8``): the kept field's
# width, the step of one excess, and the mask of the totals within ``size`` slots and excess.
_WALKS: dict[int, tuple[int, int, int]] = {}


# Bits of one layer of excess (all its lanes) per hand size and lanes, as ``_WALKS``: a
# ``_runs_bits`` set no longer has no choice with less excess than another (``_undominated``).
_LAYER_BITS: dict[int, int] = {}


def _walk_constants(size: int, lanes: int) -> tuple[int, int, int]:
    """``_WALKS``'s entry for a hand size and lanes, made."""
    kept_bits, width, valid, _ = _run_fields(size)
    if lanes > 1:
        valid = _lanes_valid(size, lanes)
    _LAYER_BITS[size | (lanes << 8)] = lanes * width
    walk = _WALKS[size | (lanes << 8)] = (kept_bits, lanes * width, valid)
    return walk


def _lanes_apart(line: int, avail: int, length: int, size: int, lanes: int) -> int:
    """``_runs_bits(line, avail, length, size, lanes)``, each lane walked alone: the line with
    its last position held 0 to ``lanes - 1`` times."""
    top = 2 * (length - 1)
    found = 0
    for held in range(lanes):
        bits = _runs_bits(line | (held << top), avail, length, size)
        found |= _lane_spread(bits, held, lanes, size)
    return found


def _lane_spread(bits: int, lane: int, lanes: int, size: int) -> int:
    """A ``_runs_bits`` set of one lane in lanes' layers: excess e's layer (``_run_fields``'
    width) to layer ``e * lanes + lane`` (``_runs_bits`` with ``lanes``)."""
    width = _run_fields(size)[1]
    mask = (1 << width) - 1
    found = 0
    at = lane * width
    while bits:
        found |= (bits & mask) << at
        bits >>= width
        at += lanes * width
    return found


def _lane_of(bits: int, lane: int, lanes: int, size: int) -> int:
    """One lane of a ``_runs_bits`` set in lanes (``_lane_spread`` undone)."""
    width = _run_fields(size)[1]
    mask = (1 << width) - 1
    bits >>= lane * width
    found = 0
    at = 0
    while bits:
        found |= (bits & mask) << at
        bits >>= lanes * width
        at += width
    return found


def _lanes_valid(size: int, lanes: int) -> int:
    """``_run_fields(size)``'s mask of totals within ``size`` slots and excess, in each lane."""
    valid = _LANES_VALID.get(size | (lanes << 8))
    if valid is None:
        within = _run_fields(size)[2]
        valid = 0
        for lane in range(lanes):
            valid |= _lane_spread(within, lane, lanes, size)
        _LANES_VALID[size | (lanes << 8)] = valid
    return valid


_LANES_VALID: dict[int, int] = {}


def _undominated(bits: int, size: int, lanes: int = 1) -> int:
    """A ``_runs_bits`` set less every choice that one with the same slots, one more excess
    and as many kept faces or more beats.

    Such a choice is never useful (``useful_bits``), and stays beaten once the same runs are
    added to both (the same shift; the one with less excess is within every mask the other
    is), so dropping it at any step of the search changes no useful choice.  Most choices with
    much excess (drawn tiles with no copy left) are beaten that way: the sets shrink to a few
    layers of excess, and every later shift of them is that much cheaper.  (Only the layer
    just below each is read: one more step, ORing the layers below, drops few more and costs
    more than it saves.)  (With ``lanes``, as ``_runs_bits``'s: each lane's layers apart.)"""
    width, smear = _DOMINATION.get(size) or _domination(size)
    width *= lanes
    if bits.bit_length() <= width:
        return bits  # (one layer of excess: nothing with less)
    # Each field (one slot count of one layer) with every kept count under its most kept ...
    down = bits
    for step, mask in smear:
        down |= (down >> step) & mask
    # ... one layer up.
    return bits & ~(down << width)


def _domination(size: int) -> tuple[int, tuple[tuple[int, int], ...]]:
    """``_undominated``'s layer width and its smearing steps (shift, mask) of the kept fields,
    over every layer within ``size`` excess, in up to 3 lanes (``_runs_bits``)."""
    kept_bits, width, _, _ = _run_fields(size)
    field = 1 << kept_bits
    fields = 3 * (size + 1) * _layer_fields(size)
    smear = []
    step = 1
    while step < field:
        mask = (1 << (field - step)) - 1  # the bits of a field that read a bit ``step`` above
        copies = 1
        while copies < fields:  # (copied to every field, doubling)
            mask |= mask << (copies * field)
            copies *= 2
        smear.append((step, mask))
        step <<= 1
    found = _DOMINATION[size] = (width, tuple(smear))
    return found


_DOMINATION: dict[int, tuple[int, tuple[tuple[int, int], ...]]] = {}


# ``_slot_bits`` results by line, length and size (ints only).
_SLOT_MEMO: dict[int, int] = {}


def _slot_bits(line: int, length: int, size: int, lanes: int = 1) -> int:
    """``_runs_bits`` without the excess (every copy taken as left to draw): one bit per
    (slots, kept) some layout of the line's runs reaches within ``size`` slots, in the fields
    of ``_run_fields`` (the same walk up the line, the same runs).  With ``lanes``, as
    ``_runs_bits``'s (the last position left empty in ``line``), lane t from bit
    ``t * _slot_lane(size)`` on."""
    if line:
        first = ((line & -line).bit_length() - 1) >> 1
    elif lanes == 1:
        return 1
    else:
        first = length - 1
    if first > MAX_OUTSIDE:
        cut = first - MAX_OUTSIDE
        line >>= 2 * cut
        length -= cut
        first = MAX_OUTSIDE
    key = line | (length << 32) | (size << 40) | ((lanes - 1) << 46)
    found = _SLOT_MEMO.get(key)
    if found is None:
        found = _slot_walk(line, length, size, lanes, key)
    return found


def _slot_walk(line: int, length: int, size: int, lanes: int, key: int) -> int:
    """``_slot_bits`` of a line whose lowest face is at most ``MAX_OUTSIDE`` positions from its
    start (or, with lanes, an empty line), not in the memo (``key``: its key there), made:
    the walk up the line from its lowest face."""
    first = ((line & -line).bit_length() - 1) >> 1 if line else length - 1
    tail = key & ~((1 << 40) - 1)
    memo = _SLOT_MEMO
    top = length - 1
    if lanes > 1 and top - first < LONGEST_SEARCHED:
        # Each lane walked alone (``_runs_bits``).
        stride = _slot_lane(size)
        found = 0
        for held in range(lanes):
            found |= _slot_bits(line | (held << (2 * top)), length, size) << (held * stride)
        if len(memo) >= _RUNS_MEMO_LIMIT:
            memo.clear()
        memo[key] = found
        return found
    walk = _SLOT_WALKS.get(size | (lanes << 8))
    if walk is None:
        walk = _slot_walk_constants(size, lanes)
    kept_bits, valid = walk
    longest = LONGEST_SEARCHED
    rest = line - (1 << (2 * first))
    # ``_slot_bits(rest, ...)``, its memo read here first (as for ``left`` below).
    if not rest:
        found = 1 if lanes == 1 else _slot_bits(0, length, size, lanes)
    else:
        low = ((rest & -rest).bit_length() - 1) >> 1
        if low > MAX_OUTSIDE:
            cut = low - MAX_OUTSIDE
            sub_key = (rest >> (2 * cut)) | ((length - cut) << 32) | tail
            found = memo.get(sub_key)
            if found is None:
                found = _slot_walk(rest >> (2 * cut), length - cut, size, lanes, sub_key)
        else:
            sub_key = rest | (length << 32) | tail
            found = memo.get(sub_key)
            if found is None:
                found = _slot_walk(rest, length, size, lanes, sub_key)
    # The walk reads the line only near its first face: its steps are made once per such
    # neighbourhood (``_slot_plan``) and replayed here.
    leads = first if first < MAX_OUTSIDE else MAX_OUTSIDE
    span = top - first
    plan_key = (
        ((line >> (2 * first)) & ((1 << (2 * longest)) - 1))
        | (leads << (2 * longest))
        | ((span if span < longest else longest) << (2 * longest + 3))
        | (size << 40)
        | (longest << 46)
    )
    plan = _SLOT_PLANS.get(plan_key)
    if plan is None:
        if len(_SLOT_PLANS) >= _RUNS_MEMO_LIMIT:
            _SLOT_PLANS.clear()
        plan = _SLOT_PLANS[plan_key] = _slot_plan(rest, first, top, leads, size)
    for delta, low_off, shifts in plan:
        left = rest - (delta << (2 * first))
        if not left:
            sub = 1 if lanes == 1 else _slot_bits(0, length, size, lanes)
        else:
            # ``_slot_bits(left, ...)``, its memo read here first.
            low = first + low_off if low_off >= 0 else ((left & -left).bit_length() - 1) >> 1
            if low > MAX_OUTSIDE:
                cut = low - MAX_OUTSIDE
                sub_key = (left >> (2 * cut)) | ((length - cut) << 32) | tail
                sub = memo.get(sub_key)
                if sub is None:
                    sub = _slot_walk(left >> (2 * cut), length - cut, size, lanes, sub_key)
            else:
                sub_key = left | (length << 32) | tail
                sub = memo.get(sub_key)
                if sub is None:
                    sub = _slot_walk(left, length, size, lanes, sub_key)
        for shift in shifts:
            found |= sub << shift
    found &= valid
    if len(memo) >= _RUNS_MEMO_LIMIT:
        memo.clear()
    memo[key] = found
    return found


# ``_slot_bits``'s walks (``_slot_plan``) by the line near the walk's first face, the hand size
# (bit 40 up) and the longest run searched (bit 46 up), as ``_PLANS``.
_SLOT_PLANS: dict[int, tuple[tuple[int, int, tuple[int, ...]], ...]] = {}


def _slot_plan(
    rest: int, first: int, top: int, leads: int, size: int
) -> tuple[tuple[int, int, tuple[int, ...]], ...]:
    """The steps of ``_slot_bits``'s walk from the first face (at ``first``; ``rest``: the line
    less that face), each where some run ends: (the faces that run takes after the first, two
    bits per position from ``first``; where the rest of the line then starts, from ``first``,
    or -1 where further than the walk reads; the shifts of the rest's choices, one per pad:
    the run's slots and kept).

    The walk up the line from the first face reads the counts of that face and the
    ``LONGEST_SEARCHED - 1`` positions after it only (the longest run searched: no kept face and
    no trail reaches further), where the line ends if within them, and how far a lead may
    reach: the same steps serve every line that agrees there (``_slot_bits``'s ``plan_key``)."""
    kept_bits = kept_field_width(size)
    pads_of = _PADS.get(size)
    if pads_of is None:
        pads_of = _PADS[size] = {}
    longest = LONGEST_SEARCHED
    steps = []
    left = rest
    kept, end = 1, first
    while True:
        reach = end - first + 1
        above = left >> (2 * end + 2)
        if above:
            after = end + 1 + (((above & -above).bit_length() - 1) >> 1)
            gap = after - end - 1
        else:
            after = top + 1
            gap = top - end
        room = min(gap, MAX_OUTSIDE, longest - reach)
        # (``_pads`` with no tile missing: slot shifts only, each once.)
        situation = (reach << 20) | (leads << 17) | (room << 14)
        pads = pads_of.get(situation)
        if pads is None:
            pads = pads_of[situation] = _pads(reach, leads, room, 0, 0, size)
        if pads:
            at = kept + (reach << kept_bits)
            low_off = -1
            if left:
                low_off = (((left & -left).bit_length() - 1) >> 1) - first
                if low_off >= longest:
                    low_off = -1  # (past what the walk reads: found from the line itself)
            steps.append(((rest - left) >> (2 * first), low_off, tuple(at + s for s in pads)))
        if after > top or gap > MAX_OUTSIDE or after - first >= longest:
            break
        left -= 1 << (2 * after)
        kept += 1
        end = after
    return tuple(steps)


# ``_slot_bits``'s fields per hand size and lanes (``size | lanes << 8``): the kept field's
# width and the mask of the totals within ``size`` slots (each lane's).
_SLOT_WALKS: dict[int, tuple[int, int]] = {}


def _slot_walk_constants(size: int, lanes: int) -> tuple[int, int]:
    """``_SLOT_WALKS``'s entry for a hand size and lanes, made."""
    kept_bits = kept_field_width(size)
    valid = (1 << ((size + 1) << kept_bits)) - 1
    if lanes > 1:
        stride = _slot_lane(size)
        valid = sum(valid << (lane * stride) for lane in range(lanes))
    walk = _SLOT_WALKS[size | (lanes << 8)] = (kept_bits, valid)
    return walk


def _slot_lane(size: int) -> int:
    """Where a lane of ``_slot_bits`` starts after the one before it: ``size`` slots, and room
    for a run's shift past them before the mask."""
    return (size + 8) << kept_field_width(size)
