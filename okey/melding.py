"""Exact meld search: lay the most valuable set of disjoint runs and sets from a hand.

Shared by the 101 opening solver (``okey.okey101``) and the counted-tiles scoring of classic Okey
(``okey.scoring``).  The search works on a count vector packed into one integer (two bits per tile
kind) plus the number of wild okeys held, always deciding about the lowest tile kind left: leave one
copy of it in hand, put it in a set, or put it in a run.  Every tile kind below it is already
decided, so a run through it can only reach lower numbers with okeys, which keeps the branching
small; results are memoised per (counts, okeys) state.

Two objectives:

* **opening value** (``okey_weight=None``): each tile is worth its number and an okey the number of
  the tile it stands for.  Here an okey never needs to replace a tile that is still in hand (swap
  them: same value), which prunes most okey placements.
* **fixed okey weight** (``okey_weight=w``): an okey is worth ``w`` wherever it goes; used to find
  the smallest leftover (101 Okey: an okey left in hand costs 101).  The pruning above is unsafe
  here, so okeys may take any slot.

>>> from okey.tiles import parse_tiles, Tile
>>> result = best_melds(parse_tiles("R1 R2 R3 K7 Y7 B7"), Tile.parse("B13"), wrap=False)
>>> result.value, [str(m) for m in result.melds]
(27, ['R1 R2 R3', 'Y7 B7 K7'])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from operator import attrgetter, itemgetter
from typing import Literal

from okey.hand import okey_for
from okey.tiles import ALL_KINDS, FALSE_JOKER_INDEX, Tile

MeldKind = Literal["run", "set"]
_HIGH_ONE = 14  # a run position after 13: the tile 1 played high (12-13-1), classic only


def _shift(colour: int, number: int) -> int:
    """Bit offset of a tile kind in the packed counts.  Kinds are packed number-major (R1 Y1 B1
    K1 R2 ...) so that the search, which always decides the lowest kind left, meets the four
    colours of a number together: sets stay local and only runs reach ahead."""
    return 8 * (number - 1) + 2 * colour


@dataclass(frozen=True, slots=True)
class Meld:
    """A run or set as laid: ``tiles`` as held (an okey is the okey tile, a false joker is FJ) and
    ``plays_as``, the tile each one stands for.

    >>> from okey.tiles import parse_tiles
    >>> okey = Tile.parse("R6")  # indicator R5
    >>> m = Meld("run", (Tile.parse("K4"), okey, Tile.parse("K6")), parse_tiles("K4 K5 K6"))
    >>> m.value, str(m)
    (15, 'K4 R6=K5 K6')
    """

    kind: MeldKind
    tiles: tuple[Tile, ...]
    plays_as: tuple[Tile, ...]

    @property
    def value(self) -> int:
        """Face value of the meld: the numbers the tiles play as."""
        return sum(t.number or 0 for t in self.plays_as)

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "tiles": [str(t) for t in self.tiles],
            "plays_as": [str(t) for t in self.plays_as],
            "value": self.value,
        }

    def __str__(self) -> str:
        return " ".join(
            str(t) if t == p or t.is_false_joker else f"{t}={p}"
            for t, p in zip(self.tiles, self.plays_as, strict=True)
        )


@dataclass(frozen=True, slots=True)
class MeldSearchResult:
    """The best melds of a hand: ``value`` under the objective, ``melds`` and ``remaining``."""

    value: int
    melds: tuple[Meld, ...]
    remaining: tuple[Tile, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "value": self.value,
            "melds": [m.to_dict() for m in self.melds],
            "remaining": [str(t) for t in self.remaining],
        }


# ``1 << _shift`` of each numbered tile kind.
_BIT = [1 << _shift(kind // 13, kind % 13 + 1) for kind in range(52)]


_index = attrgetter("index")
_second = itemgetter(1)


# Masks of ``MeldSearch.live`` over the packed counts: the low bit of every count, the low bit
# of each number's byte (colour R), the 1s (byte 0), and the shift of a 1 played high (byte 13).
_PRESENT = sum(0x55 << (8 * n0) for n0 in range(13))
_LOW_BITS = sum(1 << (8 * n0) for n0 in range(13))
_ONES = 0x55
_HIGH_ONE_SHIFT = 8 * 13


def _opening_sets(held: int, colour: int) -> tuple[tuple[int, tuple[int, ...], bool], ...]:
    """The sets through ``colour`` at a number where the colours of ``held`` (bit c) hold
    tiles, with colours above it only (the lower ones are decided), in ``_solve_opening``'s
    order: (the counts they take, as a byte, the set's colours, whether it holds every real
    tile left, so that okeys may complete it however few real tiles it has)."""
    others = [c for c in range(colour + 1, 4) if held >> c & 1]
    full = (1 << len(others)) - 1
    found = []
    for mask in range(full + 1):
        if mask == full or mask.bit_count() >= 2:
            chosen = tuple(c for i, c in enumerate(others) if mask >> i & 1)
            taken = sum(1 << (2 * c) for c in chosen)
            found.append((taken, (colour, *chosen), mask == full))
    return tuple(found)


def _set_tables() -> tuple[list, list]:
    """``_OPENING_SETS`` and ``_PLAIN_SETS``: per byte of a number's counts and colour, the
    sets of ``_solve_opening`` and those of three or four real tiles (``_solve_plain``'s, in
    the same order)."""
    opening = [[_opening_sets(held, colour) for colour in range(4)] for held in range(16)]
    plain = [
        [tuple((taken, colours) for taken, colours, _ in sets if len(colours) >= 3) for sets in row]
        for row in opening
    ]
    # A byte's colours holding tiles, as bits (each count is 2 bits).
    held = [sum(1 << c for c in range(4) if byte >> (2 * c) & 3) for byte in range(256)]
    return [opening[h] for h in held], [plain[h] for h in held]


# The sets through the lowest tile by its number's counts (a byte) and its colour.
_OPENING_SETS, _PLAIN_SETS = _set_tables()

# ``_OPENING_SETS`` with ``j`` okeys held, by j, byte and colour: (the counts taken, the
# colours, the okeys taken, the tiles of the set), in ``_solve_opening``'s order.
_OKEY_SETS = [
    [
        [
            tuple(
                (taken, colours, jk, len(colours) + jk)
                for taken, colours, full in sets
                for jk in (
                    range(max(0, 3 - len(colours)), min(j, 4 - len(colours)) + 1)
                    if full
                    else range(1)
                )
            )
            for sets in row
        ]
        for row in _OPENING_SETS
    ]
    for j in range(3)
]

# By colour, over the counts after a kind's (from the next colour at its number): the other
# colours at its number and its colour at the next two numbers.  With one okey and none of
# these held, no meld holds the kind: no set (two real tiles needed) and no run (a real tile
# in one of the next two slots needed; none below it, and none to 13 with an okey before it).
_ALONE = [((1 << (6 - 2 * c)) - 1) | (3 << 6) | (3 << 14) for c in range(4)]


def _set_code(colours: tuple[int, ...], okeys: int) -> int:
    """The code of a set (``_spec_of``) but its number: 1, the colours as bits from bit 6, the
    okeys from bit 10 (the number goes in bits 2 to 5)."""
    return 1 | sum(1 << c for c in colours) << 6 | okeys << 10


def _spec_of(code: int) -> tuple:
    """The spec of a meld the opening search codes as an int (``_solve_opening``'s entries):
    a set ``1 | n << 2 | colours << 6 | okeys << 10`` (colours as bits) is ("set", n, colours,
    okeys); a run ``2 | colour << 2 | a << 4 | b << 8 | r << 12 | slots << 16`` from a to b, its
    lowest held tile at r, is ("run", colour * 13 - 1, a, b, slots), slots r + 1 .. b (True: bit
    i of ``slots`` for an okey at r + 1 + i)."""
    if code & 3 == 1:
        return ("set", code >> 2 & 15, _MASK_COLOURS[code >> 6 & 15], code >> 10)
    b = code >> 8 & 15
    okeys = code >> 16
    slots = tuple([bool(okeys >> i & 1) for i in range(b - (code >> 12 & 15))])
    return ("run", (code >> 2 & 3) * 13 - 1, code >> 4 & 15, b, slots)


# The colours of each set of colours as bits (a set's code).
_MASK_COLOURS = [tuple(c for c in range(4) if mask >> c & 1) for mask in range(16)]


# ``_OKEY_SETS[1]`` split, by byte and colour: (the sets of held tiles, those with the okey),
# each (the counts taken, the set's code but its number, the tiles, the place in
# ``_OKEY_SETS[1]``'s order + 1).
_ONE_SETS = [
    [
        (
            tuple(
                (t, _set_code(c, jk), k, i + 1) for i, (t, c, jk, k) in enumerate(sets) if not jk
            ),
            tuple((t, _set_code(c, jk), k, i + 1) for i, (t, c, jk, k) in enumerate(sets) if jk),
        )
        for sets in row
    ]
    for row in _OKEY_SETS[1]
]

# The same for ``_OKEY_SETS[2]``: (taken, code, tiles, okeys, place).
_TWO_SETS = [
    [
        (
            tuple(
                (t, _set_code(c, jk), k, jk, i + 1)
                for i, (t, c, jk, k) in enumerate(sets)
                if not jk
            ),
            tuple(
                (t, _set_code(c, jk), k, jk, i + 1) for i, (t, c, jk, k) in enumerate(sets) if jk
            ),
        )
        for sets in row
    ]
    for row in _OKEY_SETS[2]
]

# By kind (number - 1) * 4 + colour: the low bit of every count of its colour above it.
_ABOVE = [sum(1 << _shift(kind & 3, m) for m in range((kind >> 2) + 2, 14)) for kind in range(52)]


def _byte_sets(byte: int, found: dict[int, tuple[int, tuple]]) -> tuple[int, tuple]:
    """``_solve_plain``'s search of one number's counts (a byte) alone, with sets only: (the
    tiles its sets hold, the sets' colours in the order the search lays them).  The same
    options in the same order (leave the lowest kind, then ``_PLAIN_SETS``), so the same choice
    on a tie; every set of a number is worth the number times its tiles, so the choices hold at
    every number."""
    hit = found.get(byte)
    if hit is not None:
        return hit
    if not byte:
        return 0, ()
    low = (byte & -byte).bit_length() - 1
    colour = low >> 1
    best = _byte_sets(byte - (1 << low), found)
    rest = byte - (1 << (2 * colour))
    for taken, colours in _PLAIN_SETS[byte][colour]:
        tiles, sets = _byte_sets(rest - taken, found)
        if len(colours) + tiles > best[0]:
            best = (len(colours) + tiles, (colours, *sets))
    found[byte] = best
    return best


# ``_byte_sets`` of every byte: where no colour held at the lowest number has a run of three
# starting there, ``_solve_plain`` lays that number's sets from this table (no run can hold
# its tiles, and every choice about it ends at the same state: the rest of the hand).
_BYTE_SETS: list[tuple[int, tuple]] = []
_found: dict[int, tuple[int, tuple]] = {}
for _byte in range(256):
    _BYTE_SETS.append(_byte_sets(_byte, _found))
del _byte, _found

# ``_solve_plain``'s tables: ``_PLAIN_SETS`` as (taken, tiles, code but the number) and
# ``_BYTE_SETS`` as (tiles, the sets' codes but the number).
_PLAIN_CODES = [
    [tuple((taken, len(colours), _set_code(colours, 0)) for taken, colours in sets) for sets in row]
    for row in _PLAIN_SETS
]
_BYTE_CODES = [(tiles, tuple(_set_code(c, 0) for c in sets)) for tiles, sets in _BYTE_SETS]


def _wraps(p: int) -> bool:
    """Whether some colour holds 12, 13 and 1 (presence bits of ``MeldSearch.live``)."""
    return bool(p & (p >> (8 * 11)) & (p >> (8 * 12)) & _ONES)


# Memos of ``MeldSearch._solve`` shared by every search with the same objective and run rules
# (entries of a few hundred bytes: some tens of MB each at most).
_MEMOS: dict[tuple, tuple[dict[int, tuple], ...]] = {}


_MEMO_LIMIT = 1 << 17


def _memo_full(memos: tuple[dict, ...]) -> bool:
    """Whether a search's memo (one dict per okey count) holds ``_MEMO_LIMIT`` entries."""
    return len(memos[0]) + len(memos[1]) + len(memos[2]) >= _MEMO_LIMIT


# ``MeldSearch._meld_of`` by choice and okey.
_MELDS: dict[tuple, Meld] = {}

# ``MeldSearch._build``'s entries of the choices whose melds hold no okey nor false joker, the
# same under every okey but those of their kinds (bit k of the first item: kind k played).
_PLAIN_BUILT: dict[int | tuple, tuple] = {}


class MeldSearch:
    """One search context: an indicator, the run rules and the objective.  Reusable across hands
    with the same okey (the memo is shared, which makes discard advice cheap).

    >>> from okey.tiles import parse_tiles
    >>> s = MeldSearch(Tile.parse("R4"), wrap=False)
    >>> s.best(parse_tiles("R5 R5 K1 K2 K3")).value  # R5 is the okey: K1 K2 K3 + two okeys
    15
    """

    def __init__(
        self,
        indicator: Tile,
        *,
        wrap: bool,
        max_run_length: int = 13,
        okey_weight: int | None = None,
        exhaustive: bool = False,
    ) -> None:
        self.okey = okey_for(indicator)
        self.wrap = wrap
        self.max_run = max_run_length
        self.okey_weight = okey_weight
        # Whether an okey may skip a real tile in hand (see module docstring).
        # ``exhaustive`` drops the pruning (the tests' cross-check of the fast path).
        self.free_okeys = okey_weight is not None or exhaustive
        # Opening value without the wrap: okeys go below a run only when it already reaches 13.
        self.top_okeys_only = okey_weight is None and not wrap and not exhaustive
        # The memo depends on the objective and the run rules only (never on the okey: its face
        # is counted like any other, and okeys are a count), so searches share it; a full one
        # is replaced by a new one (never emptied: a search under way keeps its own). A search
        # object kept across hands takes the new one before a hand, so it must not be shared
        # between threads (``okey.okey101`` keeps one per thread).
        self._shared = (wrap, max_run_length, okey_weight, self.free_okeys, self.top_okeys_only)
        self._memos: tuple[dict[int, tuple], ...] = ({}, {}, {})
        self._renew_memo()
        if self.top_okeys_only:
            self._solve = self._solve_opening  # type: ignore[method-assign]
        # ``pack``'s table: the packed count of each tile index (0 for the okey, counted apart;
        # a false joker as the okey's face).
        okey = self.okey.index
        self._bits = [*_BIT, _BIT[okey]]
        self._bits[okey] = 0
        # The melds of search choices as ``best`` uses them (``_build``).
        self._built: dict[int | tuple, tuple] = {}
        # Each kind's tile as held (the okey's face is a false joker: ``_tile_as_held``).
        self._held = [*ALL_KINDS[:FALSE_JOKER_INDEX]]
        self._held[okey] = ALL_KINDS[FALSE_JOKER_INDEX]
        # By number: the highest a run from it may reach.
        self._tops = [min(13, n - 1 + max_run_length) for n in range(14)]

    def _renew_memo(self) -> None:
        """Take the shared memo, or a new one where it is full (a search that is kept, as
        ``okey.okey101`` keeps one per okey and rules, checks before each hand).  The memo is
        one dict per okey count, keyed by the packed counts."""
        memos = _MEMOS.get(self._shared)
        if memos is None or _memo_full(memos):
            memos = _MEMOS[self._shared] = ({}, {}, {})
        self._memos = memos

    # -- packing ---------------------------------------------------------------------------------
    def pack(self, tiles: Iterable[Tile]) -> tuple[int, int, int]:
        """(packed counts, okeys held, false jokers held)."""
        indices = list(map(_index, tiles))
        # (A false joker plays as the okey's face: ``_bits``.)
        x = sum(map(self._bits.__getitem__, indices))
        return x, indices.count(self.okey.index), indices.count(FALSE_JOKER_INDEX)

    # -- search ----------------------------------------------------------------------------------
    def value(self, x: int, okeys: int) -> int:
        """Best total weight of disjoint melds from packed counts ``x`` and ``okeys`` wild tiles."""
        if _memo_full(self._memos):
            self._renew_memo()
        x = self.live(x, okeys)
        if okeys:
            return self._solve(x, okeys)
        return sum(self._solve(part, 0) for part in self.parts(x))

    def best(self, tiles: Sequence[Tile]) -> MeldSearchResult:
        """Search a hand and rebuild the melds (false jokers and okeys mapped back to the tiles)."""
        return MeldSearchResult(*self.best_of(list(map(_index, tiles))))

    def best_of(self, indices: list[int]) -> tuple[int, tuple[Meld, ...], tuple[Tile, ...]]:
        """``best`` of a hand given by its tiles' indices: (value, melds, remaining)."""
        x = sum(map(self._bits.__getitem__, indices))
        return self._best_of(indices, x, indices.count(self.okey.index))

    def best_of_possible(
        self, indices: list[int], indicator: int
    ) -> tuple[int, tuple[Meld, ...], tuple[Tile, ...]] | None:
        """``best_of`` of a hand that ``okey.hand.check_possible`` plainly accepts with the
        indicator (an index, no false joker): at most two tiles of each kind, counting the
        indicator; else None (the caller then checks the hand the long way)."""
        x = sum(map(self._bits.__getitem__, indices))
        okeys = indices.count(self.okey.index)
        # Each kind's count is a 2-bit field (the okeys counted apart, false jokers as the
        # okey's face): none may be 3 nor carry into the next (the fields add up to the tiles
        # but the okeys), and the indicator's may be 1 at most.
        if (
            okeys > 2
            or x & (x >> 1) & _PRESENT
            or (x & _PRESENT).bit_count() + 2 * ((x >> 1) & _PRESENT).bit_count()
            != len(indices) - okeys
            or x >> (8 * (indicator % 13) + 2 * (indicator // 13)) & 2
        ):
            return None
        return self._best_of(indices, x, okeys)

    def _best_of(
        self, indices: list[int], x: int, okeys: int
    ) -> tuple[int, tuple[Meld, ...], tuple[Tile, ...]]:
        if _memo_full(self._memos):
            self._renew_memo()
        built: list[tuple] = []
        if okeys:
            x = self.live(x, okeys)
            value = self._solve(x, okeys)
            self._rebuild_built(x, okeys, built)
        else:
            value = 0
            memo = self._memos[0]
            opening = self.top_okeys_only
            for part in self._live_parts(x):
                hit = memo.get(part)  # (parts recur across hands: mostly searched)
                if hit is not None:
                    value += hit[0]
                else:
                    value += _PLAIN_MISS(self, part) if opening else self._solve(part, 0)
                self._rebuild_built(part, 0, built)
        # Melds listed in tile order of their first slot (as ``_result``), the rest by index.
        built.sort(key=_second)
        left = sorted(indices)
        laid: list[int] = []
        for entry in built:
            laid += entry[3]
        try:
            list(map(left.remove, laid))
        except ValueError:
            raise ValueError("a meld holds a tile the hand does not") from None
        return value, tuple([b[2] for b in built]), tuple(map(ALL_KINDS.__getitem__, left))

    def _live_parts(self, x: int) -> list[int]:
        """``parts(live(x, 0))``, the presence bits read once (a kind no meld holds is in no
        run of three, so the runs that join numbers are the same before and after ``live``)."""
        if self.wrap or self.max_run < 3:
            return self.parts(self.live(x, 0))
        p = (x | (x >> 1)) & _PRESENT  # bit 2c of number n's byte: a tile of colour c there
        up1, up2 = p >> 8, p >> 16
        # ``live``'s dead kinds without okeys: in no run of three and no set of three.
        run = ((p << 8) & ((p << 16) | up1)) | (up1 & up2)
        q0, q1 = p & _LOW_BITS, (p >> 2) & _LOW_BITS
        q2, q3 = (p >> 4) & _LOW_BITS, (p >> 6) & _LOW_BITS
        sets = (
            ((q1 & q2) | (q1 & q3) | (q2 & q3))
            | ((q0 & q2) | (q0 & q3) | (q2 & q3)) << 2
            | ((q0 & q1) | (q0 & q3) | (q1 & q3)) << 4
            | ((q0 & q1) | (q0 & q2) | (q1 & q2)) << 6
        )
        x &= ~((p & ~(run | sets)) * 3)
        # ``parts``'s cuts.
        starts = p & up1 & up2  # colour and number where a run of three starts
        in_run = starts | (starts << 8) | (starts << 16)
        link = in_run & (in_run >> 8)  # both n and n + 1 in runs of one colour
        cuts = ~((link | (link >> 2) | (link >> 4) | (link >> 6)) & _LOW_BITS) & _LOW_BITS
        parts = []
        while x:
            start = ((x & -x).bit_length() - 1) & ~7  # the byte of the lowest tile left
            c = cuts >> start
            part = x & (((c & -c) << (start + 8)) - 1)  # every byte up to that cut
            parts.append(part)
            x ^= part
        return parts

    def parts(self, x: int) -> list[int]:
        """Packed counts with no okey (after ``live``) split into ranges of numbers that no meld
        spans, each searched on its own.

        Without okeys a run is held whole, so it joins numbers n and n + 1 only where some
        colour holds both inside a run of three held tiles; sets stay at one number.  Every
        choice the search makes about the lowest kind left involves its own range only, and
        the other ranges add the same value to every option, so each range's choices are the
        ones the whole search makes (and the melds the same: ``_result`` orders them).  Small
        ranges (one run, one set) recur across hands, so their searches are mostly memo hits."""
        p = (x | (x >> 1)) & _PRESENT
        starts = p & (p >> 8) & (p >> 16)  # colour and number where a run of three starts
        in_run = starts | (starts << 8) | (starts << 16)
        link = in_run & (in_run >> 8)  # both n and n + 1 in runs of one colour
        link = (link | (link >> 2) | (link >> 4) | (link >> 6)) & _LOW_BITS
        wraps = self.wrap and _wraps(p)
        if wraps:
            link |= 1 << (8 * 11)  # 12-13-1 joins 12 and 13 (and 1, below)
        parts = []
        # Each cut (after number n: bit 0 of byte n - 1 clear in ``link``) ends a range: the
        # first at or above the lowest tile left ends the next part.
        cuts = ~link & _LOW_BITS
        while x:
            start = ((x & -x).bit_length() - 1) & ~7  # the byte of the lowest tile left
            c = cuts >> start
            part = x & (((c & -c) << (start + 8)) - 1)  # every byte up to that cut
            parts.append(part)
            x ^= part
        if wraps and len(parts) > 1:
            # 12-13-1 joins the ranges of the 13s and the 1s (the last and the first).
            parts[0] |= parts.pop()
        return parts

    def live(self, x: int, okeys: int) -> int:
        """The packed counts ``x`` less every kind no meld can hold (with ``okeys`` wild tiles).

        A kind is in some meld exactly when it is in a run of three (its other two slots held,
        or as many of them as there are okeys missing) or in a set (enough other colours held
        at its number, okeys making up the rest): any longer run holding it holds such a run of
        three.  Such a kind is dead for the whole search (it only loses tiles and okeys), and no
        meld ever takes its slot, not even with an okey (an okey there could be swapped for the
        real tile, making a meld of it), so every search choice is the same without it: the
        search merely skips the states that decide about it.  With two okeys any kind may form
        a set with them: nothing is dead."""
        if okeys >= 2:
            return x
        p = (x | (x >> 1)) & _PRESENT  # bit 2c of number n's byte: a tile of colour c there
        if self.wrap:
            p |= (p & _ONES) << _HIGH_ONE_SHIFT  # the 1s again after the 13s (byte 13)
        if self.max_run < 3:
            run = 0
        else:
            up1, up2 = p >> 8, p >> 16
            down1, down2 = p << 8, p << 16
            # A run of three: one other slot held (the okey takes the other), or both.
            run = (up1 | up2 | down1 | down2) if okeys else (down1 & (down2 | up1)) | (up1 & up2)
            if self.wrap:
                run = (run | ((run >> _HIGH_ONE_SHIFT) & _ONES)) & _PRESENT
        # Per colour, the other colours held at its number.
        q0, q1 = p & _LOW_BITS, (p >> 2) & _LOW_BITS
        q2, q3 = (p >> 4) & _LOW_BITS, (p >> 6) & _LOW_BITS
        if okeys:
            sets = (q1 | q2 | q3) | (q0 | q2 | q3) << 2 | (q0 | q1 | q3) << 4 | (q0 | q1 | q2) << 6
        else:
            sets = (
                ((q1 & q2) | (q1 & q3) | (q2 & q3))
                | ((q0 & q2) | (q0 & q3) | (q2 & q3)) << 2
                | ((q0 & q1) | (q0 & q3) | (q1 & q3)) << 4
                | ((q0 & q1) | (q0 & q2) | (q1 & q2)) << 6
            )
        dead = p & _PRESENT & ~(run | sets)
        return x & ~(dead * 3)

    def best_using(self, tiles: Sequence[Tile], tile: Tile) -> MeldSearchResult | None:
        """The best melds among those that put ``tile`` (one copy of it) into a meld, or None when
        no meld can hold it.  101 Okey: a player who takes the previous discard and has not opened
        must open with it.

        >>> from okey.tiles import parse_tiles
        >>> s = MeldSearch(Tile.parse("B1"), wrap=False)
        >>> hand = parse_tiles("R9 Y9 B9 R7 R8")  # the set of 9s (27), or R7 in R7 R8 R9 (24)
        >>> s.best(hand).value, s.best_using(hand, Tile.parse("R7")).value
        (27, 24)
        """
        if tile not in tiles:
            raise ValueError(f"{tile} is not in the hand")
        if _memo_full(self._memos):
            self._renew_memo()
        x, j, _ = self.pack(tiles)
        if tile == self.okey:
            return self._best_using_okey(tiles, x, j)
        kind = self.okey.index if tile.is_false_joker else tile.index
        x -= 1 << _shift(kind // 13, kind % 13 + 1)
        found = self._best_through(x, j, kind)
        if found is None:
            return None
        value, nx, nj, spec = found
        melds = [self._meld_of(spec), *self._rebuild(nx, nj)]
        return self._result(value, melds, tiles)

    def _best_using_okey(self, tiles: Sequence[Tile], x: int, j: int) -> MeldSearchResult | None:
        # The okey stands for some tile kind: try each one as a forced real tile, then show the
        # okey in that slot.
        best: tuple | None = None
        for kind in range(52):
            if (x >> _shift(kind // 13, kind % 13 + 1)) & 3 == 3:
                continue
            found = self._best_through(x, j - 1, kind)
            if found is not None and (best is None or found[0] > best[0]):
                best = (*found, kind)
        if best is None:
            return None
        value, nx, nj, spec, kind = best
        forced = self._meld_of(spec)
        held = list(forced.tiles)
        slot = next(
            i
            for i, (t, p) in enumerate(zip(held, forced.plays_as, strict=True))
            if p.index == kind and t != self.okey
        )
        held[slot] = self.okey
        melds = [Meld(forced.kind, tuple(held), forced.plays_as), *self._rebuild(nx, nj)]
        return self._result(value, melds, tiles)

    def _result(self, value: int, melds: list[Meld], tiles: Sequence[Tile]) -> MeldSearchResult:
        # Melds listed in tile order of their first slot (R before Y before B before K).
        melds = sorted(melds, key=lambda m: (m.plays_as[0].index, m.kind))
        laid = [0] * (FALSE_JOKER_INDEX + 1)
        for meld in melds:
            for t in meld.tiles:
                laid[t.index] += 1
        remaining = []
        for t in tiles:
            if laid[t.index]:
                laid[t.index] -= 1
            else:
                remaining.append(t)
        if any(laid):
            raise ValueError("a meld holds a tile the hand does not")
        remaining.sort(key=_index)
        return MeldSearchResult(value, tuple(melds), tuple(remaining))

    def _best_through(self, x: int, j: int, kind: int) -> tuple | None:
        """Best (value, next x, next okeys, spec) over melds holding one more tile of ``kind``
        (already taken out of ``x``)."""
        best: tuple | None = None
        for nx, nj, gain, spec in self._melds_through(x, j, kind):
            total = gain + self._solve(nx, nj)
            if best is None or total > best[0]:
                best = (total, nx, nj, spec)
        return best

    def _melds_through(self, x: int, j: int, kind: int):
        colour, n0 = divmod(kind, 13)
        n = n0 + 1
        weight = self._joker_value
        # Sets: any other colours held, plus okeys for the rest.
        others = [c for c in range(4) if c != colour and (x >> _shift(c, n)) & 3]
        for mask in range(1 << len(others)):
            chosen = [others[i] for i in range(len(others)) if mask >> i & 1]
            real = 1 + len(chosen)
            for jk in range(max(0, 3 - real), min(j, 4 - real) + 1):
                nx = x
                for c in chosen:
                    nx -= 1 << _shift(c, n)
                yield nx, j - jk, n * real + weight(n) * jk, ("set", n, (colour, *chosen), jk)
        # Runs a..b through n, every other slot a real tile or an okey.
        base = colour * 13 - 1
        top = _HIGH_ONE if self.wrap else 13
        for a in range(1, n + 1):
            for b in range(max(n, a + 2), min(top, a + self.max_run - 1) + 1):
                if b == _HIGH_ONE and a == 1:
                    continue
                yield from self._fill_slots(x, j, base, a, b, n)

    def _fill_slots(self, x: int, j: int, base: int, a: int, b: int, n: int):
        def walk(m: int, x: int, j: int, value: int, okey_slots: tuple[bool, ...]):
            if m > b:
                yield x, j, value, ("fill", base, a, b, okey_slots)
                return
            face = 1 if m == _HIGH_ONE else m
            if m == n:
                yield from walk(m + 1, x, j, value + face, (*okey_slots, False))
                return
            shift = _shift((base + 1) // 13, face)
            real_here = (x >> shift) & 3
            if real_here:
                yield from walk(m + 1, x - (1 << shift), j, value + face, (*okey_slots, False))
            if j and (not real_here or self.free_okeys):
                # An okey over a real tile in hand: that tile stays in hand for good (were it
                # laid elsewhere, swapping the two would give the same value).
                rest = x - (1 << shift) if real_here else x
                yield from walk(
                    m + 1, rest, j - 1, value + self._joker_value(m), (*okey_slots, True)
                )

        yield from walk(a, x, j, 0, ())

    def _solve(self, x: int, j: int) -> int:
        memo = self._memos[j]
        hit = memo.get(x)
        if hit is not None:
            return hit[0]
        if x == 0:
            # Okeys alone cannot make a meld (at most two of them).
            memo[x] = (0, 0, j, None)
            return 0
        low = (x & -x).bit_length() - 1
        n0, colour = divmod(low >> 1, 4)
        # Leave the lowest kind in hand (every copy: the lowest set bit of a count of 2 is its
        # high bit; keeping one copy and melding the other is reached through a meld option).
        best = self._solve(x - (1 << low), j)
        choice: tuple = (x - (1 << low), j, None)
        for nx, nj, gain, spec in self._options(x, j, colour, n0 + 1):
            total = gain + self._solve(nx, nj)
            if total > best:
                best, choice = total, (nx, nj, spec)
        memo[x] = (best, *choice)
        return best

    def _solve_opening(self, x: int, j: int) -> int:
        """``_solve`` for opening value without the wrap, written out flat because it is the hot
        path of ``best_opening``: an okey takes a slot only where no real tile is left, and goes
        below a run only when the run reaches 13, so each run length has one filling.  Its
        memo entries are flat, (value, next x, next okeys, choice, ...), the choice a code
        (``_spec_of``): one tuple per state."""
        if j < 2:
            return self._solve_one(x) if j else self._solve_plain(x)
        hit = self._memos[2].get(x)
        return hit[0] if hit is not None else self._two_entry(x)[0]

    def _two_entry(self, x: int) -> tuple:
        """``_solve_opening``'s search with two okeys of a state not in the memo yet: its entry,
        (the value, the next state and okeys, the choice, the plain value of the state, as
        ``_one_entry``'s, and its value with one okey: the best of ``_one_entry``'s options,
        from the children's entries, so that x1's value with one okey bounds the options
        taking one okey without a search)."""
        memo0, memo1, memo = self._memos
        if x == 0:
            hit = memo[0] = (0, 0, 2, None, 0, 0)
            return hit
        # (The searches' steps as functions, called with the search: ``_TWO_ENTRY``.)
        entry = _TWO_ENTRY
        one = _ONE_ENTRY  # (with one okey left: the entry of a state not in the memo)
        plain = _PLAIN_MISS  # (with none: the value of a state not in the memo)
        low = (x & -x).bit_length() - 1
        kind = low >> 1  # (number - 1) * 4 + colour; its count starts at bit 2 * kind
        n0 = kind >> 2
        colour = kind & 3
        n = n0 + 1
        max_run = self.max_run
        # Leaving this kind in hand leaves every copy of it: keeping one copy and melding the
        # other is reached through the meld options below.
        rest = x - (1 << low)
        hit = memo.get(rest)
        if hit is None:
            hit = entry(self, rest)
        best = hit[0]
        # The plain value of the state and its value with one okey (``best1``: the options of
        # ``_one_entry`` here are those below that take one okey at most).
        rest_plain = best0 = hit[4]
        rest_one = best1 = hit[5]
        # The choice: the next state, its okeys and the meld's code (None: leave the kind).
        nxt, nj, code = rest, 2, None
        x1 = x - (1 << (2 * kind))  # one copy goes into the meld
        # (A hand holds two okeys at most.)  As in ``_solve_one``, the options
        # keeping the okeys are tried first, then those taking okeys, each bounded first by x1
        # with the okeys left (``ceiling1``: x1 with one; ``ceiling``: the plain value of x1;
        # where x holds two copies, x1 is not the rest: the plain value of x bounds x1's, and
        # x1 is searched with one okey): no tile is added, so a meld's gain and that bound the
        # option.  One is tried where its bound beats the best or ties it from earlier in the
        # search's order (``at``: the best's place, the leave option 0, sets from 1, runs 32 +
        # their top), so the choice is the search order's (the first of the highest totals).
        # An option taking one okey that is not tried here but may raise ``best1`` gives its
        # plain value.
        at = 0
        real_sets, okey_sets = _TWO_SETS[(x >> (8 * n0)) & 0xFF][colour]
        for taken, set_code, gain, _, _ in real_sets:
            nx = x1 - (taken << (8 * n0))
            hit = memo.get(nx)
            if hit is None:
                hit = entry(self, nx)
            gain *= n
            total = gain + hit[0]
            if total > best:
                best, at, nxt, code = total, 1, nx, set_code | n << 2
            if gain + hit[4] > best0:
                best0 = gain + hit[4]
            if gain + hit[5] > best1:
                best1 = gain + hit[5]
        # Runs of held tiles from this tile up (codes: ``_spec_of``; ``run_entry``: the
        # longest one's rest, whose values bound those of the runs through the gaps).
        run_entry = None
        run_code = 2 | colour << 2 | n << 4 | n << 12
        top = self._tops[n]
        value = n
        cx = x1
        p = n
        shift = 2 * kind + 8  # the count of (colour, p + 1)
        while p < top and (cx >> shift) & 3:
            cx -= 1 << shift
            shift += 8
            p += 1
            value += p
            if p - n >= 2:
                hit = memo.get(cx)
                if hit is None:
                    hit = entry(self, cx)
                run_entry = hit
                total = value + hit[0]
                if total > best:
                    best, at, nxt, code = total, 32 + p, cx, run_code | p << 8
                if value + hit[4] > best0:
                    best0 = value + hit[4]
                if value + hit[5] > best1:
                    best1 = value + hit[5]
        if x1 == rest:
            ceiling, ceiling1 = rest_plain, rest_one
        else:
            # x holds two copies of the kind, so x1 is not the rest: x's value with one okey
            # bounds x1's.  It is completed here: ``_one_entry``'s options taking the okey,
            # each by its plain value where that may raise ``best1`` (bounded by x's plain
            # value, which bounds x1's).
            ceiling = best0
            for taken, _, gain, _ in _ONE_SETS[(x >> (8 * n0)) & 0xFF][colour][1]:
                gain *= n
                if gain + ceiling > best1:
                    nx = x1 - (taken << (8 * n0))
                    hit = memo1.get(nx)
                    if hit is not None:
                        total = gain + hit[4]
                    else:
                        hit = memo0.get(nx)
                        total = gain + (hit[0] if hit is not None else plain(self, nx))
                    if total > best1:
                        best1 = total
            if p < top:
                # The okey at p + 1, held tiles after it (as ``_one_entry``).
                gx, gp, gvalue, gshift = cx, p + 1, value + p + 1, shift + 8
                while True:
                    if gp - n >= 2 and gvalue + ceiling > best1:
                        hit = memo1.get(gx)
                        if hit is not None:
                            total = gvalue + hit[4]
                        else:
                            hit = memo0.get(gx)
                            total = gvalue + (hit[0] if hit is not None else plain(self, gx))
                        if total > best1:
                            best1 = total
                    if gp >= top or not (gx >> gshift) & 3:
                        break
                    gx -= 1 << gshift
                    gshift += 8
                    gp += 1
                    gvalue += gp
            if (
                (x1 >> (96 + 2 * colour)) & 3
                and 1 < n < 13
                and not _ABOVE[kind] & ~(x1 | (x1 >> 1))
                and 15 - n <= max_run
            ):
                # The okey below this tile, held tiles to 13.
                total = (n - 1 + 13) * (15 - n) // 2
                if total + ceiling > best1:
                    total += _SOLVE_PLAIN(self, x1 - _ABOVE[kind])
                    if total > best1:
                        best1 = total
            ceiling1 = best1
        for taken, set_code, gain, jk, place in okey_sets:
            gain *= n
            if jk == 1:
                bound = gain + ceiling1
                if bound < best or (bound == best and place > at):
                    if gain + ceiling > best1:  # (its plain value may raise best1)
                        nx = x1 - (taken << (8 * n0))
                        hit = memo1.get(nx)
                        if hit is not None:
                            total = gain + hit[4]
                        else:
                            hit = memo0.get(nx)
                            total = gain + (hit[0] if hit is not None else plain(self, nx))
                        if total > best1:
                            best1 = total
                    continue
                nx = x1 - (taken << (8 * n0))
                hit = memo1.get(nx)
                if hit is None:
                    hit = one(self, nx)
                if gain + hit[4] > best1:
                    best1 = gain + hit[4]
                total = gain + hit[0]
            else:
                bound = gain + ceiling
                if bound < best or (bound == best and place > at):
                    continue
                nx = x1 - (taken << (8 * n0))
                hit = memo0.get(nx)
                if hit is not None:
                    total = gain + hit[0]
                else:
                    # (Its set with one okey fewer leaves the same tiles.)
                    hit = memo1.get(nx)
                    total = gain + (hit[4] if hit is not None else plain(self, nx))
            if total > best or (total == best and place < at):
                best, at, nxt, nj, code = total, place, nx, 2 - jk, set_code | n << 2
        if p < top:
            # Okeys fill the gaps (the first at p + 1), held tiles the rest (``okeys``: bit i
            # for an okey at n + 1 + i).
            okeys = 1 << (p - n)
            used = 1
            # Each run's rest holds fewer tiles than the one before: the values of the last
            # known (with one okey, ``bound_one``, and plain) bound its own.
            if run_entry is None:
                bound_one, bound_plain = ceiling1, ceiling
            else:
                bound_one, bound_plain = run_entry[5], run_entry[4]
            p += 1
            value += p
            shift += 8
            while True:
                if p - n >= 2:
                    if used == 1:
                        bound = value + bound_one
                        if bound > best or (bound == best and 32 + p < at):
                            hit = memo1.get(cx)
                            if hit is None:
                                hit = one(self, cx)
                            bound_one, bound_plain = hit[0], hit[4]
                            if value + bound_plain > best1:
                                best1 = value + bound_plain
                            total = value + bound_one
                            if total > best or (total == best and 32 + p < at):
                                best, at, nxt, nj = total, 32 + p, cx, 1
                                code = run_code | p << 8 | okeys << 16
                        elif value + bound_plain > best1:  # (its plain value may raise best1)
                            hit = memo1.get(cx)
                            if hit is not None:
                                bound_plain = hit[4]
                            else:
                                hit = memo0.get(cx)
                                bound_plain = hit[0] if hit is not None else plain(self, cx)
                            if value + bound_plain > best1:
                                best1 = value + bound_plain
                    else:
                        bound = value + bound_plain
                        if bound > best or (bound == best and 32 + p < at):
                            hit = memo0.get(cx)
                            if hit is not None:
                                bound_plain = hit[0]
                            else:
                                hit = memo1.get(cx)
                                bound_plain = hit[4] if hit is not None else plain(self, cx)
                            total = value + bound_plain
                            if total > best or (total == best and 32 + p < at):
                                best, at, nxt, nj = total, 32 + p, cx, 0
                                code = run_code | p << 8 | okeys << 16
                if p >= top:
                    break
                if (cx >> shift) & 3:
                    cx -= 1 << shift
                elif used == 1:
                    used = 2
                    okeys |= 1 << (p - n)
                else:
                    break
                shift += 8
                p += 1
                value += p
        # Runs through this tile with ``before`` okeys below it: those only where the okeys
        # left fill every number above it not held in its colour (the run must reach 13).
        if n > 1:
            missing = (_ABOVE[kind] & ~(x1 | (x1 >> 1))).bit_count()
            for before in range(1, min(2 - missing, n - 1) + 1):
                a = n - before
                value = (a + n - 1) * before // 2 + n
                left = 2 - before
                cx = x1
                okeys = 0
                p = n
                while True:
                    length = p - a + 1
                    if length >= 3 and p == 13:
                        if left:
                            # (One okey below, held tiles to 13: ``_one_entry``'s last option.)
                            total = 0
                            if value + ceiling1 > best:
                                hit = memo1.get(cx)
                                if hit is None:
                                    hit = one(self, cx)
                                total = value + hit[0]
                                if value + hit[4] > best1:
                                    best1 = value + hit[4]
                            elif value + ceiling > best1:
                                hit = memo0.get(cx)
                                total = value + (hit[0] if hit is not None else plain(self, cx))
                                if total > best1:
                                    best1 = total
                                total = 0
                        else:
                            total = value + _SOLVE_PLAIN(self, cx) if value + ceiling > best else 0
                        if total > best:
                            best, nxt, nj = total, cx, left
                            code = 2 | colour << 2 | a << 4 | p << 8 | n << 12 | okeys << 16
                    q = p + 1
                    if q > 13 or length >= max_run:
                        break
                    shift = 8 * p + 2 * colour  # _shift(colour, q)
                    if (cx >> shift) & 3:
                        cx -= 1 << shift
                    elif left:
                        left -= 1
                        okeys |= 1 << (p - n)
                    else:
                        break
                    value += q
                    p = q
        hit = memo[x] = (best, nxt, nj, code, best0, best1)
        return hit

    def _solve_one(self, x: int) -> int:
        """``_solve_opening`` with one okey, written out apart (the common case): the same
        options in the same order, so the same value and choice."""
        hit = self._memos[1].get(x)
        return hit[0] if hit is not None else self._one_entry(x)[0]

    def _one_entry(self, x: int) -> tuple:
        """``_solve_one``'s search of a state not in the memo yet: its entry, (the value, the
        next state and okeys, the choice, the plain value of the state: the best of its options
        keeping the okey, each child's plain value being the last item of its own entry)."""
        memo0, memo, _ = self._memos
        if x == 0:
            hit = memo[0] = (0, 0, 1, None, 0)
            return hit
        entry = _ONE_ENTRY
        plain = _PLAIN_MISS  # (the plain value of a state not in the memo)
        low = (x & -x).bit_length() - 1
        kind = low >> 1  # (number - 1) * 4 + colour; its count starts at bit 2 * kind
        if not (x >> (2 * kind + 2)) & _ALONE[kind & 3]:
            # No meld holds this kind (nor the next ones, while the same holds): leave them.
            rest = x
            while True:
                rest -= 1 << low
                if not rest:
                    hit = (0, 0, 1, None, 0)
                    break
                hit = memo.get(rest)
                if hit is not None:
                    break
                low = (rest & -rest).bit_length() - 1
                kind = low >> 1
                if (rest >> (2 * kind + 2)) & _ALONE[kind & 3]:
                    hit = entry(self, rest)
                    break
            # (Nor does any meld without the okey: the plain value is the rest's too.)
            hit = memo[x] = (hit[0], rest, 1, None, hit[4])
            return hit
        n0 = kind >> 2
        colour = kind & 3
        n = n0 + 1
        rest = x - (1 << low)
        hit = memo.get(rest)
        if hit is None:
            hit = entry(self, rest)
        best = hit[0]
        # The plain value of the state: the best of the options keeping the okey (the plain
        # search's options, in its order: their children's plain values).
        rest_plain = best0 = hit[4]
        # The choice: the next state, its okeys and the meld's code (None: leave the kind).
        nxt, nj, code = rest, 1, None
        # The options are tried out of the search's order, those keeping the okey first (they
        # raise ``best`` before the others are bounded), so the choice is kept as that order
        # would keep it: the first of the highest totals (``at``: the best's place in the
        # order, the leave option 0, sets from 1, runs 16 + their top; the okey below a run is
        # tried last, so it wins only when strictly greater).
        at = 0
        x1 = x - (1 << (2 * kind))
        real_sets, okey_sets = _ONE_SETS[(x >> (8 * n0)) & 0xFF][colour]
        for taken, set_code, gain, _ in real_sets:
            nx = x1 - (taken << (8 * n0))
            hit = memo.get(nx)
            if hit is None:
                hit = entry(self, nx)
            gain *= n
            total = gain + hit[0]
            if total > best:
                best, at, nxt, code = total, 1, nx, set_code | n << 2
            if gain + hit[4] > best0:
                best0 = gain + hit[4]
        # Runs of held tiles from this tile up (codes: ``_spec_of``; ``run_plain``: the plain
        # value of the longest one's rest, which bounds those of the runs through the gap).
        run_plain = -1
        top = self._tops[n]
        value = n
        cx = x1
        p = n
        shift = 2 * kind + 8  # the count of (colour, p + 1)
        while p < top and (cx >> shift) & 3:
            cx -= 1 << shift
            shift += 8
            p += 1
            value += p
            if p - n >= 2:
                hit = memo.get(cx)
                if hit is None:
                    hit = entry(self, cx)
                total = value + hit[0]
                if total > best:
                    best, at, nxt = total, 16 + p, cx
                    code = 2 | colour << 2 | n << 4 | p << 8 | n << 12
                run_plain = hit[4]
                if value + run_plain > best0:
                    best0 = value + run_plain
        # The okey's options, each bounded first by the plain value of x1 (see
        # ``_solve_opening``): one is tried where its bound beats the best, or ties it from
        # earlier in the order.  Where one copy is held x1 is the rest, else it holds fewer
        # tiles than x: the plain value of x bounds its own.
        ceiling = rest_plain if x1 == rest else best0
        for taken, set_code, gain, place in okey_sets:
            gain *= n
            if gain + ceiling < best or (gain + ceiling == best and place > at):
                continue
            nx = x1 - (taken << (8 * n0))
            hit = memo0.get(nx)
            if hit is not None:
                total = gain + hit[0]
            else:
                # (A set of four with the okey leaves what its set of three held tiles does.)
                hit = memo.get(nx)
                total = gain + (hit[4] if hit is not None else plain(self, nx))
            if total > best or (total == best and place < at):
                best, at, nxt, nj, code = total, place, nx, 0, set_code | n << 2
        if p < top:
            # The okey fills (colour, p + 1), then held tiles follow.  Each run's rest holds
            # fewer tiles than the one before: the plain value of the last known bounds it.
            bound_plain = ceiling if run_plain < 0 else run_plain
            gap = p + 1
            p = gap
            value += p
            shift += 8
            while True:
                if p - n >= 2:
                    bound = value + bound_plain
                    if bound > best or (bound == best and 16 + p < at):
                        hit = memo0.get(cx)
                        if hit is not None:
                            bound_plain = hit[0]
                        else:
                            hit = memo.get(cx)
                            bound_plain = hit[4] if hit is not None else plain(self, cx)
                        total = value + bound_plain
                        if total > best or (total == best and 16 + p < at):
                            best, at, nxt, nj = total, 16 + p, cx, 0
                            code = 2 | colour << 2 | n << 4 | p << 8 | n << 12 | 1 << (15 + gap - n)
                if p >= top or not (cx >> shift) & 3:
                    break
                shift += 8
                cx -= 1 << (shift - 8)
                p += 1
                value += p
        # The okey below this tile: only in a run to 13 of held tiles (last in the order).
        if (
            (x1 >> (96 + 2 * colour)) & 3  # (its colour's 13 held, first: a quick test)
            and 1 < n < 13
            and not _ABOVE[kind] & ~(x1 | (x1 >> 1))
            and 15 - n <= self.max_run
        ):
            value = (n - 1 + 13) * (15 - n) // 2
            if value + ceiling > best:
                cx = x1 - _ABOVE[kind]
                total = value + _SOLVE_PLAIN(self, cx)
                if total > best:
                    best, nxt, nj = total, cx, 0
                    code = 2 | colour << 2 | (n - 1) << 4 | 13 << 8 | n << 12
        hit = memo[x] = (best, nxt, nj, code, best0)
        return hit

    def _solve_plain(self, x: int) -> int:
        """``_solve_opening`` with no okey left: the same options in the same order (so the
        same choice on a tie), without the okeys' branches."""
        hit = self._memos[0].get(x)
        return hit[0] if hit is not None else _PLAIN_MISS(self, x)

    def _plain_miss(self, x: int) -> int:
        """``_solve_plain`` of a state not in the memo yet."""
        memo = self._memos[0]
        if x == 0:
            memo[0] = (0, 0, 0, None)
            return 0
        solve = _PLAIN_MISS
        low = (x & -x).bit_length() - 1
        n0 = low >> 3
        n = n0 + 1
        y = x >> (8 * n0)
        q = (y | (y >> 1)) & 0x555555  # the colours held at n, n + 1 and n + 2
        if not q & (q >> 8) & (q >> 16) & 0x55:
            # No run starts at n: only sets hold this number's tiles (``_BYTE_SETS``); the
            # same for the numbers after it, up to one where a run starts or a state searched.
            gained = 0
            laid = []
            rest = x
            while True:
                byte = y & 0xFF
                rest -= byte << (8 * n0)
                tiles, codes = _BYTE_CODES[byte]
                if tiles:
                    gained += (n0 + 1) * tiles
                    laid.append((n0 + 1, codes))
                if not rest:
                    break
                hit = memo.get(rest)
                if hit is not None:
                    gained += hit[0]
                    break
                n0 = ((rest & -rest).bit_length() - 1) >> 3
                y = rest >> (8 * n0)
                q = (y | (y >> 1)) & 0x555555
                if q & (q >> 8) & (q >> 16) & 0x55:
                    gained += solve(self, rest)
                    break
            memo[x] = (gained, rest, 0, ("sets", tuple(laid)) if laid else None)
            return gained
        kind = low >> 1
        colour = kind & 3
        rest = x - (1 << low)
        hit = memo.get(rest)
        best = hit[0] if hit is not None else solve(self, rest)
        nxt, code = rest, None
        x1 = x - (1 << (2 * kind))
        # Sets of three or four real tiles.
        for taken, size, set_code in _PLAIN_CODES[y & 0xFF][colour]:
            nx = x1 - (taken << (8 * n0))
            hit = memo.get(nx)
            total = n * size + (hit[0] if hit is not None else solve(self, nx))
            if total > best:
                best, nxt, code = total, nx, set_code | n << 2
        # Runs from this tile up, every tile real.
        top = self._tops[n]
        value = n
        cx = x1
        p = n
        shift = 2 * kind
        while p < top:
            shift += 8  # the count of (colour, p + 1)
            if not (cx >> shift) & 3:
                break
            cx -= 1 << shift
            p += 1
            value += p
            if p - n >= 2:
                hit = memo.get(cx)
                total = value + (hit[0] if hit is not None else solve(self, cx))
                if total > best:
                    best, nxt, code = total, cx, 2 | colour << 2 | n << 4 | p << 8 | n << 12
        memo[x] = (best, nxt, 0, code)
        return best

    def _joker_value(self, number: int) -> int:
        if self.okey_weight is not None:
            return self.okey_weight
        return 1 if number == _HIGH_ONE else number

    def _options(self, x: int, j: int, colour: int, n: int):
        """Melds through the lowest kind left: (next x, next okeys, gain, spec)."""
        yield from self._sets(x, j, colour, n)
        yield from self._runs(x, j, colour, n)

    def _sets(self, x: int, j: int, colour: int, n: int):
        others = [c for c in range(colour + 1, 4) if (x >> _shift(c, n)) & 3]
        jv = self._joker_value(n)
        for mask in range(1 << len(others)):
            chosen = [others[i] for i in range(len(others)) if mask >> i & 1]
            real = 1 + len(chosen)
            unchosen = [c for c in others if c not in chosen]
            empty = 3 - len(others)  # colours no real tile in hand can fill
            for jk in range(min(j, 4 - real) + 1):
                if real + jk < 3 or (jk and unchosen and not self.free_okeys):
                    continue
                nx = x - (1 << _shift(colour, n))
                for c in chosen:
                    nx -= 1 << _shift(c, n)
                spec = ("set", n, (colour, *chosen), jk)
                # Okeys beyond the empty colours stand over real tiles in hand, which then stay
                # in hand for good (laid elsewhere, a swap would give the same value).
                for over in combinations(unchosen, max(0, jk - empty)):
                    rest = nx
                    for c in over:
                        rest -= 1 << _shift(c, n)
                    yield rest, j - jk, n * real + jv * jk, spec

    def _runs(self, x: int, j: int, colour: int, n: int):
        base = colour * 13 - 1  # kind index of number m in this colour is base + m
        top = _HIGH_ONE if self.wrap else 13
        start_x = x - (1 << _shift(colour, n))
        for before in range(min(j, n - 1) + 1):
            a = n - before
            value = sum(self._joker_value(m) for m in range(a, n)) + n
            yield from self._extend(start_x, j - before, value, a, n, top, base, ())
        if self.wrap and n == 1:
            yield from self._high_one_runs(x, j, colour, base)

    def _extend(self, x, j, value, a, b, top, base, slots):
        """Grow a run a..b upwards; ``slots`` marks positions after the lowest real tile that an
        okey fills (True) or a real tile fills (False)."""
        length = b - a + 1
        if length >= 3:
            yield x, j, value, ("run", base, a, b, slots)
        p = b + 1
        if p > top or length >= self.max_run or (p == _HIGH_ONE and a == 1):
            return
        shift = _shift((base + 1) // 13, p) if p != _HIGH_ONE else 0
        real_here = p != _HIGH_ONE and (x >> shift) & 3
        if real_here:
            yield from self._extend(
                x - (1 << shift), j, value + p, a, p, top, base, (*slots, False)
            )
        if j and (not real_here or self.free_okeys):
            # An okey over a real tile in hand: that tile stays in hand for good (see _fill_slots).
            rest = x - (1 << shift) if real_here else x
            yield from self._extend(
                rest, j - 1, value + self._joker_value(p), a, p, top, base, (*slots, True)
            )

    def _high_one_runs(self, x, j, colour, base):
        """Runs a..13 followed by this colour's 1 played high (12-13-1); the 1 is the lowest kind,
        so every other slot may hold a real tile."""
        x1 = x - (1 << _shift(colour, 1))
        for a in range(12, max(1, 14 - self.max_run), -1):
            yield from self._fill(x1, j, a, 13, base, colour)

    def _fill(self, x, j, a, b, base, colour):
        # Every assignment of real tiles / okeys to the slots a..b, then the high 1.
        def walk(p, x, j, value, slots):
            if p > b:
                yield x, j, value + 1, ("run", base, a, _HIGH_ONE, ("high1", *slots))
                return
            shift = _shift(colour, p)
            real_here = (x >> shift) & 3
            if real_here:
                yield from walk(p + 1, x - (1 << shift), j, value + p, (*slots, False))
            if j and (not real_here or self.free_okeys):
                rest = x - (1 << shift) if real_here else x
                yield from walk(p + 1, rest, j - 1, value + self._joker_value(p), (*slots, True))

        yield from walk(a, x, j, 0, ())

    # -- rebuilding ------------------------------------------------------------------------------
    def _rebuild(self, x: int, j: int) -> list[Meld]:
        melds: list[Meld] = []
        memo = self._memos
        while x:
            entry = memo[j].get(x)
            if entry is None:  # (only where the search has not been run from here)
                self._solve(x, j)
                entry = memo[j][x]
            x, j, spec = entry[1], entry[2], entry[3]
            if spec is None:
                continue
            if type(spec) is int:
                melds.append(self._meld_of(_spec_of(spec)))
            elif spec[0] == "sets":  # numbers' sets laid at once (``_BYTE_SETS``)
                for n, codes in spec[1]:
                    melds += [self._meld_of(_spec_of(code | n << 2)) for code in codes]
            else:
                melds.append(self._meld_of(spec))
        return melds

    def _rebuild_built(self, x: int, j: int, out: list[tuple]) -> None:
        """``_rebuild`` for ``best``: each meld as (its kinds as bits, sort key, meld, tile
        indices), appended to ``out`` (``_build``)."""
        memo = self._memos
        built = self._built
        okey = self.okey.index
        while x:
            entry = memo[j].get(x)
            if entry is None:  # (only where the search has not been run from here)
                self._solve(x, j)
                entry = memo[j][x]
            x, j, spec = entry[1], entry[2], entry[3]
            if spec is None:
                continue
            if type(spec) is tuple and spec[0] == "sets":  # (``_BYTE_SETS``)
                for n, codes in spec[1]:
                    for code in codes:
                        code |= n << 2
                        plain = _PLAIN_BUILT.get(code)
                        if plain is not None and not plain[0] >> okey & 1:
                            out.append(plain)
                        else:
                            out.append(built.get(code) or self._build(code))
            else:
                plain = _PLAIN_BUILT.get(spec)
                if plain is not None and not plain[0] >> okey & 1:
                    out.append(plain)
                else:
                    out.append(built.get(spec) or self._build(spec))

    def _build(self, choice: int | tuple) -> tuple:
        """The entry of ``_rebuild_built`` for a choice (a code or a spec): in ``_PLAIN_BUILT``
        where its meld holds no okey (shared by every okey but its kinds' faces), else in this
        search's own."""
        meld = self._meld_of_code(choice) if type(choice) is int else self._new_meld(choice)
        laid = tuple([t.index for t in meld.tiles])
        okey = self.okey.index
        if okey not in laid and FALSE_JOKER_INDEX not in laid:
            kinds = sum([1 << t.index for t in meld.plays_as])
            entry = (kinds, (meld.plays_as[0].index, meld.kind), meld, laid)
            if len(_PLAIN_BUILT) >= _MEMO_LIMIT:
                _PLAIN_BUILT.clear()
            _PLAIN_BUILT[choice] = entry
            return entry
        if len(self._built) >= _MEMO_LIMIT:
            self._built.clear()
        entry = self._built[choice] = (0, (meld.plays_as[0].index, meld.kind), meld, laid)
        return entry

    def _tile_as_held(self, kind: int) -> Tile:
        # The okey's face in the count vector is a false joker (the real ones are wild).
        return ALL_KINDS[FALSE_JOKER_INDEX] if kind == self.okey.index else ALL_KINDS[kind]

    def _meld_of(self, spec: tuple) -> Meld:
        """The meld a search choice (``spec``) lays, with this search's okey (shared: melds are
        frozen, and the same choices come back across hands, under any okey where the meld
        shows neither an okey nor a false joker)."""
        key = (spec, self.okey.index if self._shows_okey(spec) else -1)
        meld = _MELDS.get(key)
        if meld is None:
            if len(_MELDS) >= _MEMO_LIMIT:
                _MELDS.clear()
            meld = _MELDS[key] = self._new_meld(spec)
        return meld

    def _shows_okey(self, spec: tuple) -> bool:
        """Whether the meld of a search choice may hold an okey or a false joker (one of its
        tiles the okey's face); False only where it is the same meld under every okey."""
        okey = self.okey.index
        if spec[0] == "set":
            _, n, colours, jk = spec
            return jk > 0 or any(c * 13 + n - 1 == okey for c in colours)
        if spec[0] == "run":
            _, base, a, b, slots = spec
            if b == _HIGH_ONE or not slots or slots[0] == "high1" or any(slots):
                return True
            # Real tiles a..b (none below the lowest real one).
            return a != b - len(slots) or base + a <= okey <= base + b
        return True

    def _meld_of_code(self, code: int) -> Meld:
        """``_new_meld`` of the spec a code stands for (``_spec_of``), read from the code."""
        okey = self.okey
        held = self._held
        if code & 3 == 1:
            # The set's colours, and okeys for the lowest missing ones, in colour order.
            n0 = (code >> 2 & 15) - 1
            mask = code >> 6 & 15
            jk = code >> 10
            tiles: list[Tile] = []
            plays: list[Tile] = []
            for c in range(4):
                kind = 13 * c + n0
                if mask >> c & 1:
                    tiles.append(held[kind])
                elif jk:
                    jk -= 1
                    tiles.append(okey)
                else:
                    continue
                plays.append(ALL_KINDS[kind])
            return Meld("set", tuple(tiles), tuple(plays))
        # Okeys below the lowest held tile, then the slots above it (bit i: an okey).
        base = (code >> 2 & 3) * 13 - 1
        a = code >> 4 & 15
        b = code >> 8 & 15
        lowest = code >> 12 & 15
        okeys = code >> 16
        kind = base + lowest
        tiles = [okey] * (lowest - a)
        tiles.append(held[kind])
        for i in range(b - lowest):
            kind += 1
            tiles.append(okey if okeys >> i & 1 else held[kind])
        return Meld("run", tuple(tiles), ALL_KINDS[base + a : base + b + 1])

    def _new_meld(self, spec: tuple) -> Meld:
        okey = self.okey
        held = self._held
        if spec[0] == "set":
            # The set's colours, and okeys for the lowest missing ones, in colour order.
            _, n, colours, jk = spec
            tiles: list[Tile] = []
            plays: list[Tile] = []
            for c in range(4):
                kind = c * 13 + n - 1
                if c in colours:
                    tiles.append(held[kind])
                elif jk:
                    jk -= 1
                    tiles.append(okey)
                else:
                    continue
                plays.append(ALL_KINDS[kind])
            return Meld("set", tuple(tiles), tuple(plays))
        if spec[0] == "run" and spec[3] <= 13:
            # Okeys below the lowest real tile, then ``slots`` above it (True: an okey).
            _, base, a, b, slots = spec
            kind = base + b - len(slots)  # the lowest real tile
            tiles = [okey] * (kind - base - a)
            tiles.append(held[kind])
            for by_okey in slots:
                kind += 1
                tiles.append(okey if by_okey else held[kind])
            return Meld("run", tuple(tiles), ALL_KINDS[base + a : base + b + 1])
        return self._new_meld_any(spec)

    def _new_meld_any(self, spec: tuple) -> Meld:
        tiles: list[Tile] = []
        plays: list[Tile] = []
        if spec[0] == "set":
            _, n, colours, jk = spec
            for c in colours:
                tiles.append(self._tile_as_held(c * 13 + n - 1))
                plays.append(ALL_KINDS[c * 13 + n - 1])
            missing = [c for c in range(4) if c not in colours]
            for c in missing[:jk]:
                tiles.append(self.okey)
                plays.append(ALL_KINDS[c * 13 + n - 1])
            order = sorted(range(len(tiles)), key=lambda i: plays[i].index)
            return Meld("set", tuple(tiles[i] for i in order), tuple(plays[i] for i in order))
        if spec[0] == "fill":
            # A run given slot by slot: True where an okey fills it.
            _, base, a, b, okey_slots = spec
            for m, by_okey in zip(range(a, b + 1), okey_slots, strict=True):
                kind = base + (1 if m == _HIGH_ONE else m)
                plays.append(ALL_KINDS[kind])
                tiles.append(self.okey if by_okey else self._tile_as_held(kind))
            return Meld("run", tuple(tiles), tuple(plays))
        _, base, a, b, slots = spec
        if slots and slots[0] == "high1":
            fills = dict(zip(range(a, 14), slots[1:], strict=True))
            lowest_real = _HIGH_ONE
        else:
            lowest_real = b - len(slots)
            fills = dict(zip(range(lowest_real + 1, b + 1), slots, strict=True))
            for m in range(a, lowest_real):
                fills[m] = True
            fills[lowest_real] = False
        for m in range(a, b + 1):
            kind = base + (1 if m == _HIGH_ONE else m)
            plays.append(ALL_KINDS[kind])
            if m == _HIGH_ONE and not (slots and slots[0] == "high1"):
                tiles.append(self.okey)
            elif m == _HIGH_ONE or not fills[m]:
                tiles.append(self._tile_as_held(kind))
            else:
                tiles.append(self.okey)
        return Meld("run", tuple(tiles), tuple(plays))


# ``MeldSearch``'s search steps as functions, which the steps call with the search (no bound
# method made at every state).
_ONE_ENTRY = MeldSearch._one_entry
_TWO_ENTRY = MeldSearch._two_entry
_SOLVE_PLAIN = MeldSearch._solve_plain
_PLAIN_MISS = MeldSearch._plain_miss


def best_melds(
    tiles: Sequence[Tile],
    indicator: Tile,
    *,
    wrap: bool,
    max_run_length: int = 13,
    okey_weight: int | None = None,
) -> MeldSearchResult:
    """One-shot search (see ``MeldSearch``)."""
    search = MeldSearch(
        indicator, wrap=wrap, max_run_length=max_run_length, okey_weight=okey_weight
    )
    return search.best(tiles)
