"""Distance to win: the fewest tiles a hand must exchange for tiles still available to win.

A winning hand W of ``rules.hand_size`` tiles (14 classic) is some tiles the player keeps plus tiles
still to come.  The distance is ``hand_size - kept`` for the W that keeps the most, counting held
okeys as kept (an okey fills any slot).  So the search maximises the number of *faces kept* over
every way to lay out a winning hand:

* **sets** are chosen first, number by number (only sets holding at least two kept faces need
  enumerating: a set around a single kept face costs the same two missing tiles as a run around it);
* each colour's remaining faces then go into **runs**, solved exactly by a memoised search over the
  colour's 13-slot count vector (``_colour_profile``): for every total run length it gives the most
  faces kept and how many missing tiles have no copy left to draw;
* the colours and sets are combined by a small knapsack over the number of slots used; slots left
  over are filled by whole new groups of drawn tiles (3 or more) or by growing a group by 1-2 tiles.

A missing tile must be drawable: its face must still have an unseen copy (the 106 tiles minus the
hand, the indicator and the ``seen`` tiles), otherwise an okey (held or still unseen) stands in.

The pairs form (``rules.seven_pairs``) is counted separately: full pairs, single + okey, okey +
okey, then single + a drawn copy.

>>> from okey import Rules, Tile, parse_tiles
>>> hand = parse_tiles("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6")
>>> distance_to_win(hand, Tile.parse("R5"), Rules.classic())
0
>>> distance_to_win(hand, Tile.parse("Y1"), Rules.classic())  # R6 is no longer the okey
1
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from functools import wraps
from itertools import combinations
from typing import NamedTuple

from okey.hand import check_playing_hand, okey_for
from okey.rules import Rules
from okey.solver import NUMBERED_KINDS, faces_and_okeys
from okey.tiles import FALSE_JOKER_INDEX, Tile

LONGEST_RUN = 13
# Most drawn tiles a run needs outside its kept faces: 2 to reach length 3, plus 2 to grow.
MAX_OUTSIDE = 4
# Slot count of a colour profile entry, faces kept, missing tiles with no drawable copy.
Entry = tuple[int, int, int]
# A choice of sets: (held colours, number index 0..12) per set.
SetChoice = tuple[tuple[tuple[int, ...], int], ...]


def _cached(limit: int) -> Callable[[Callable], Callable]:
    """Memoise a function of hashable arguments in a plain dict, emptied when it holds ``limit``.

    (``functools.lru_cache`` keeps a linked list of small lists that the garbage collector walks
    on every full collection: with 10^5 entries that caused pauses of a few hundred ms.)
    """

    def decorate(function: Callable) -> Callable:
        table: dict = {}

        @wraps(function)
        def memoised(*args):  # noqa: ANN002, ANN202 - same signature as the wrapped function
            try:
                return table[args]
            except KeyError:
                if len(table) >= limit:
                    table.clear()
                value = table[args] = function(*args)
                return value

        memoised.cache_clear = table.clear  # type: ignore[attr-defined]
        return memoised

    return decorate


def distance_to_win(
    tiles: Sequence[Tile],
    indicator: Tile,
    rules: Rules | None = None,
    seen: Iterable[Tile] = (),
) -> int:
    """The exact number of tiles to exchange (for still-available ones) to hold a win; 0 = a win.

    ``tiles`` is a hand of ``rules.hand_size`` tiles, or one more (before the discard: then the
    answer is for the best discard).  ``seen`` are tiles known to be out of play (discards).
    """
    rules = rules or Rules.classic()
    return HandState.checked(tiles, indicator, rules, seen).distance(rules)


class HandState:
    """A hand as the distance search sees it: faces, okeys held, what can still be drawn."""

    __slots__ = ("faces", "okeys", "avail", "wild_avail", "_keys")

    def __init__(self, faces: list[int], okeys: int, avail: list[int], wild_avail: int) -> None:
        self.faces = faces
        self.okeys = okeys
        self.avail = avail
        self.wild_avail = wild_avail
        self._keys: list[int] | None = None

    def line_keys(self) -> list[int]:
        """The four colours' line keys (``_line_key``)."""
        if self._keys is None:
            self._keys = [_line_key(self.faces, self.avail, lo) for lo in (0, 13, 26, 39)]
        return self._keys

    @classmethod
    def of(cls, tiles: Sequence[Tile], indicator: Tile, seen: Iterable[Tile] = ()) -> HandState:
        okey = okey_for(indicator)
        faces, okeys = faces_and_okeys(tiles, okey)
        out_faces, out_okeys = faces_and_okeys([*seen, indicator], okey)
        avail = [max(0, 2 - faces[i] - out_faces[i]) for i in range(NUMBERED_KINDS)]
        return cls(faces, okeys, avail, max(0, 2 - okeys - out_okeys))

    @classmethod
    def checked(
        cls, tiles: Iterable[Tile], indicator: Tile, rules: Rules, seen: Iterable[Tile] = ()
    ) -> HandState:
        """``of``, after ``check_playing_hand`` (which raises for a hand that cannot be in play).

        The usual hand is checked here from its counts; anything unusual goes through
        ``check_playing_hand`` itself, so the errors and their messages are the same."""
        tiles = list(tiles)
        seen = list(seen)
        held = [0] * (FALSE_JOKER_INDEX + 1)
        out = [0] * (FALSE_JOKER_INDEX + 1)
        try:
            for tile in tiles:
                held[tile.index] += 1
            for tile in seen:
                out[tile.index] += 1
            out[indicator.index] += 1
            usual = (
                len(tiles) in (rules.hand_size, rules.hand_size + 1)
                and len(tiles) <= rules.max_rack_tiles
                and not indicator.is_false_joker
                and max(held) <= 2
                and (
                    held[indicator.index] <= 1  # nothing seen: only the indicator is out
                    if not seen
                    else all(h + o <= 2 for h, o in zip(held, out, strict=True))
                )
            )
        except (AttributeError, TypeError, IndexError):
            usual = False
        if not usual:
            check_playing_hand(tiles, indicator, rules, seen)
            return cls.of(tiles, indicator, seen)
        okey = indicator.next()  # okey_for: the indicator is no false joker here
        o = okey.index
        held[o], held[FALSE_JOKER_INDEX] = held[FALSE_JOKER_INDEX], held[o]
        out[o], out[FALSE_JOKER_INDEX] = out[FALSE_JOKER_INDEX], out[o]
        # (After the swap the okeys are counted at FALSE_JOKER_INDEX and the false jokers at the
        # okey's face, as ``faces_and_okeys`` counts them.)
        okeys = held.pop()
        out_okeys = out.pop()
        avail = [max(0, 2 - h - x) for h, x in zip(held, out, strict=True)]
        return cls(held, okeys, avail, max(0, 2 - okeys - out_okeys))

    def with_face(self, face: int) -> HandState:
        """This hand plus one drawn tile of ``face`` (that copy leaves the unseen pool)."""
        faces = list(self.faces)
        faces[face] += 1
        avail = list(self.avail)
        avail[face] = max(0, avail[face] - 1)
        drawn = HandState(faces, self.okeys, avail, self.wild_avail)
        if self._keys is not None:
            keys = list(self._keys)
            lost = 4 if self.avail[face] == 1 else 0
            keys[face // 13] += (1 - lost) << (3 * (face % 13))
            drawn._keys = keys
        return drawn

    def distance(self, rules: Rules, at_most: int | None = None) -> int:
        """The distance to win; with ``at_most``, any answer above it is reported as above it.

        (The search stops as soon as it proves the distance is at most ``at_most``.)
        """
        size = rules.hand_size
        best = size
        if rules.seven_pairs and size % 2 == 0:
            best = size - kept_in_pairs(self, rules)
        if at_most is not None and best <= at_most:
            return max(0, best)
        enough = None if at_most is None else size - self.okeys - at_most
        best = min(best, size - max_kept_in_melds(self, rules, enough) - self.okeys)
        return max(0, best)


def kept_in_pairs(hand: HandState, rules: Rules) -> int:
    """Most tiles (okeys included) kept by a hand of ``hand_size / 2`` pairs."""
    pairs_needed = rules.hand_size // 2
    full = sum(1 for n in hand.faces if n >= 2)
    singles = [i for i, n in enumerate(hand.faces) if n == 1]
    drawable_singles = sum(1 for i in singles if hand.avail[i] > 0)
    dead_singles = len(singles) - drawable_singles
    best = 0
    for used_full in range(min(full, pairs_needed) + 1):
        left = pairs_needed - used_full
        # A full pair not kept whole gives two singles an okey can pair with (no copy left).
        dead = dead_singles + 2 * (full - used_full)
        with_okey = min(hand.okeys, left, dead + drawable_singles)
        from_dead = min(with_okey, dead)
        drawable_left = drawable_singles - (with_okey - from_dead)
        left -= with_okey
        okeys_left = hand.okeys - with_okey
        okey_pairs = min(okeys_left // 2, left) if rules.okey_pair_with_okey else 0
        left -= okey_pairs
        okeys_left -= 2 * okey_pairs
        okey_draws = min(okeys_left, left)
        left -= okey_draws
        single_draws = min(drawable_left, left)
        left -= single_draws
        # A single with no copy left pairs with an okey still to be drawn.
        wild_draws = min(hand.wild_avail, dead - from_dead, left)
        kept = 2 * (used_full + with_okey + okey_pairs) + okey_draws + single_draws + wild_draws
        best = max(best, kept)
    return best


class Component(NamedTuple):
    """One part of a layout (a set, or one colour's runs): its (slots, kept, excess) choices and,
    for each slot price of ``SLOT_PRICES``, its best ``SCALE * kept - price * slots`` (bound).

    ``packed`` holds the same choices as (slots + excess << ``SHIFT``, kept), so the knapsack adds
    one int per choice instead of a pair; ``packed_bound`` holds the bounds one per 16-bit field
    (they are never negative and their sums stay far below 2^16), so adding the bounds of parts is
    one int addition."""

    entries: tuple[Entry, ...]
    bounds: tuple[int, ...]
    packed: tuple[tuple[int, int], ...]
    packed_bound: int

    @classmethod
    def of(cls, entries: tuple[Entry, ...]) -> Component:
        packed = tuple((s + (x << SHIFT), k) for s, k, x in entries)
        return cls.of_packed(entries, packed)

    @classmethod
    def of_packed(
        cls, entries: tuple[Entry, ...], packed: tuple[tuple[int, int], ...]
    ) -> Component:
        """``of``, given the packed choices too (in the same order)."""
        p0, p1, p2, p3, p4 = SLOT_PRICES
        b0 = b1 = b2 = b3 = b4 = 0
        for slots, kept, _ in entries:
            value = SCALE * kept
            if value - p0 * slots > b0:
                b0 = value - p0 * slots
            if value - p1 * slots > b1:
                b1 = value - p1 * slots
            if value - p2 * slots > b2:
                b2 = value - p2 * slots
            if value - p3 * slots > b3:
                b3 = value - p3 * slots
            if value - p4 * slots > b4:
                b4 = value - p4 * slots
        bounds = (b0, b1, b2, b3, b4)
        return cls(entries, bounds, packed, _pack(bounds))


# Prices of a slot, in 1/SCALE of a kept face, for the bound of ``_kept_bound`` (any price >= 0
# gives a valid bound; integers keep it exact).
SCALE = 60
SLOT_PRICES = (15, 20, 24, 30, 40)
# A knapsack key is slots + (excess << SHIFT): slots of two parts added stay below 2^SHIFT.
SHIFT = 8
SLOTS_MASK = (1 << SHIFT) - 1
FIELD = 16
FIELD_MASK = (1 << FIELD) - 1


_HALF = 1 << (FIELD - 1)
# Bit 15 of each of the five fields (``_SetSearch._set_guard``).
HIGH = sum(_HALF << (FIELD * k) for k in range(5))


def _pack(values: Sequence[int]) -> int:
    """Non-negative values, one per slot price, as 16-bit fields of one int."""
    return sum(v << (FIELD * k) for k, v in enumerate(values))


# ``_SetSearch._set_guard`` per number of faces needed (hands of up to 63 slots).
_GUARDS = [_pack([_HALF - need * SCALE] * len(SLOT_PRICES)) for need in range(64)]


# ``_pack`` of every slot price times a hand size, per size.
_PRICED: dict[int, int] = {}


def _priced(size: int) -> int:
    """The packed terms ``price * size``, one per slot price (the start of every bound)."""
    packed = _PRICED.get(size)
    if packed is None:
        packed = _PRICED[size] = _pack([price * size for price in SLOT_PRICES])
    return packed


def _packed_min(packed: int) -> int:
    """The smallest of the five 16-bit fields of ``packed`` (one per slot price)."""
    return min(
        packed & FIELD_MASK,
        (packed >> FIELD) & FIELD_MASK,
        (packed >> (2 * FIELD)) & FIELD_MASK,
        (packed >> (3 * FIELD)) & FIELD_MASK,
        packed >> (4 * FIELD),
    )


def _kept_bound(components: Sequence[Component], size: int) -> int:
    """An upper bound on the faces a layout of these components keeps in ``size`` slots.

    Every layout uses at most ``size`` slots, so for any price p >= 0 its kept total is at most
    the sum over components of max(kept - p * slots) plus p * size (a Lagrangian bound).
    """
    total = _priced(size)
    for c in components:
        total += c.packed_bound
    return _packed_min(total) // SCALE


def max_kept_in_melds(hand: HandState, rules: Rules, enough: int | None = None) -> int:
    """Most faces kept by a winning hand laid out in runs and sets (okeys not counted).

    With ``enough``, the search may stop as soon as it keeps that many (the answer is then at
    least ``enough``, not necessarily the most).
    """
    size = rules.hand_size
    return _SetSearch(hand, rules, size if enough is None else min(enough, size), False).run()[0]


def optimal_set_choices(hand: HandState, rules: Rules) -> tuple[int, list[SetChoice]]:
    """The most faces a meld layout keeps, and every choice of sets that keeps that many."""
    return _SetSearch(hand, rules, rules.hand_size + 1, True).run()


class _SetSearch:
    """Depth-first search over the set choices, number by number, with a bound that prunes.

    At each step the bound is: the sets chosen so far, plus every colour's runs as the faces now
    stand (taking more faces into sets never lets a colour keep more), plus the best the sets at
    the numbers still to decide could add, priced per slot (see ``_kept_bound``).  The bound's
    terms, one per slot price, are added as packed ints (``Component.packed_bound``); each
    colour's line is an int key (``_line_key``) that a choice of sets changes by a fixed amount.
    """

    def __init__(self, hand: HandState, rules: Rules, enough: int, ties: bool) -> None:
        self.size = size = rules.hand_size
        self.wrap = rules.wrap_13_1
        self.budget = hand.okeys + hand.wild_avail
        self.enough = enough
        self.ties = ties
        faces, avail = hand.faces, hand.avail
        singles = _lone_colours(hand.line_keys(), self.wrap)
        self.numbers = [
            n
            for n in range(13)
            if singles[n]
            or (faces[n] > 0) + (faces[13 + n] > 0) + (faces[26 + n] > 0) + (faces[39 + n] > 0) >= 2
        ]
        # Per number: its choices of sets, what each adds to the bound, and what each takes out
        # of the hand (a set's missing tiles are drawn at its own number only, so the effect of
        # a choice never depends on the choices at other numbers, and the change it makes to
        # each colour's line key is fixed).
        self.options = []
        self.deltas = []
        gains = []
        for n in self.numbers:
            options, deltas, gain = _number_choices(
                (faces[n], faces[13 + n], faces[26 + n], faces[39 + n]),
                (avail[n], avail[13 + n], avail[26 + n], avail[39 + n]),
                n,
                singles[n],
            )
            self.options.append(options)
            self.deltas.append(deltas)
            gains.append(gain)
        # rest[i]: price * size plus the most the sets at numbers i.. can add (packed).
        self.rest = [_priced(size)]
        for gain in reversed(gains):
            self.rest.append(self.rest[-1] + gain)
        self.rest.reverse()
        self.keys = list(hand.line_keys())
        self.profiles = [_line_profile(key, self.wrap, size) for key in self.keys]
        self.items: list[Component] = []
        self.sets: list[tuple[tuple[int, ...], int]] = []
        self.best = 0
        self.optimal: list[SetChoice] = []

    def run(self) -> tuple[int, list[SetChoice]]:
        runs = sum(p.packed_bound for p in self.profiles)
        self._set_guard()
        self._visit(0, runs)
        return self.best, self.optimal

    def _set_guard(self) -> None:
        """``guard``: a packed bound plus it has bit 15 set in all five fields (``HIGH``) exactly
        when the bound, ``min(size, smallest field // SCALE)``, is worth visiting: at least the
        best so far, or one more once a layout is found and ties are not wanted.  (Each field
        is below 2^15 and gets 2^15 - need * SCALE added, so it carries into its bit 15 exactly
        when it is at least need * SCALE, and never into the next field.)"""
        need = self.best + (0 if self.ties or not self.optimal else 1)
        self.guard = 0 if need > self.size else _GUARDS[need]

    def _visit(self, i: int, acc: int) -> bool:
        """Search from number ``i`` on; True once the answer is settled (stop everything).

        ``acc`` is the packed bound terms of the sets chosen so far and the colours' runs."""
        size = self.size
        if (self.rest[i] + acc + self.guard) & HIGH != HIGH:
            return False
        if i == len(self.numbers):
            kept = _layout_kept((*self.items, *self.profiles), size, self.budget)
            if kept > self.best or not self.optimal:
                self.best, self.optimal = kept, [tuple(self.sets)]
                self._set_guard()
            elif kept == self.best and self.ties:
                self.optimal.append(tuple(self.sets))
            return not self.ties and self.best >= self.enough
        number = self.numbers[i]
        after = self.rest[i + 1]
        keys, profiles, wrap = self.keys, self.profiles, self.wrap
        cache, tail = _LINE_PROFILES, (wrap << 39) | (size << 40)
        for option, deltas in zip(self.options[i], self.deltas[i], strict=True):
            child = acc + option.packed_gains
            # Taking faces into sets never raises a colour's runs bound, so the runs as they
            # stand now already bound the child: most children are cut here, before the
            # (costlier) profiles of their colours are looked up.
            if (after + child + self.guard) & HIGH != HIGH:
                continue
            old = []
            for colour, delta in deltas:
                profile = profiles[colour]
                old.append((colour, profile))
                key = keys[colour] = keys[colour] + delta
                # ``_line_profile``, its cache read here first.
                new = cache.get(key | tail)
                if new is None:
                    new = _line_profile(key, wrap, size)
                profiles[colour] = new
                child += new.packed_bound - profile.packed_bound
            if option.items:
                self.items.extend(option.items)
                self.sets.extend((colours, number) for colours in option.sets)
            done = self._visit(i + 1, child)
            for colour, delta in deltas:
                keys[colour] -= delta
            for colour, profile in old:
                profiles[colour] = profile
            if option.items:
                del self.items[-len(option.items) :]
                del self.sets[-len(option.items) :]
            if done:
                return True
        return False


def _line_key(faces: Sequence[int], avail: Sequence[int], lo: int) -> int:
    """One colour's line as an int: 3 bits per number, the count held plus 4 if a copy is left."""
    key = 0
    for p in range(12, -1, -1):
        key = (key << 3) | faces[lo + p] | (4 if avail[lo + p] > 0 else 0)
    return key


def _lone_faces(key: int, wrap: bool) -> int:
    """The number indexes (bit n) of a colour's line (``_line_key``) whose held face may stand
    alone in a set of two drawn tiles of other colours.

    Such a set keeps one face in three slots, as a run around that face alone does; the run is
    the search's default, and the set is tried only where every run of three through the face
    draws a tile with no copy left (there the run needs an okey and the set may not)."""
    full = key | (wrap << 39)
    found = _LONE_FACES.get(full)
    if found is None:
        found = 0
        for n in range(13):
            if (key >> (3 * n)) & 3 and not any(
                (key >> (3 * a)) & 4 and (key >> (3 * b)) & 4 for a, b in _RUN_NEIGHBOURS[wrap][n]
            ):
                found |= 1 << n
        if len(_LONE_FACES) >= _LINE_PROFILES_LIMIT:
            _LONE_FACES.clear()
        _LONE_FACES[full] = found
    return found


_LONE_FACES: dict[int, int] = {}


def _lone_colours(keys: Sequence[int], wrap: bool) -> list[int]:
    """Per number index, the colours (bit c) whose face may stand alone in a set
    (``_lone_faces`` of the four colours' line keys)."""
    lone = [_lone_faces(key, wrap) for key in keys]
    if not any(lone):
        return _NO_LONE
    return [
        (lone[0] >> n & 1)
        | (lone[1] >> n & 1) << 1
        | (lone[2] >> n & 1) << 2
        | (lone[3] >> n & 1) << 3
        for n in range(13)
    ]


_NO_LONE = [0] * 13


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
# The number indexes whose ``_lone_faces`` may change when the last copy of a face at each one
# is drawn.
_NEAR = {
    wrap: [
        sorted({m for m in range(13) for pair in _RUN_NEIGHBOURS[wrap][m] if n in pair})
        for n in range(13)
    ]
    for wrap in (False, True)
}


@_cached(1 << 14)
def _number_choices(
    counts: tuple[int, ...], avail: tuple[int, ...], number: int, singles: int = 0
) -> tuple[list[_Option], list[list[tuple[int, int]]], int]:
    """``_number_options`` at ``number``, how each changes the line key of each colour it
    touches, and the most any of them adds to the bound (packed, per slot price).  ``singles``:
    the colours whose face may stand alone in a set (``_lone_colours``)."""
    options = _number_options(counts, avail, singles)
    deltas = []
    for option in options:
        out = []
        for colour, taken, drawn in option.changes:
            lost = 4 if avail[colour] > 0 and avail[colour] - drawn <= 0 else 0
            out.append((colour, -((taken + lost) << (3 * number))))
        deltas.append(out)
    best = [max(0, *(o.gains[k] for o in options)) for k in range(len(SLOT_PRICES))]
    return options, deltas, _pack(best)


# Colour profiles by line key (``_line_key``), wrap switch and hand size.
_LINE_PROFILES: dict[int, Component] = {}
_LINE_PROFILES_LIMIT = 1 << 18


def _line_profile(key: int, wrap: bool, size: int) -> Component:
    """``_colour_profile`` of the line with this key (``_line_key``)."""
    full = key | (wrap << 39) | (size << 40)
    profile = _LINE_PROFILES.get(full)
    if profile is None:
        profile = _profile_of_key(key, wrap, size)
        if len(_LINE_PROFILES) >= _LINE_PROFILES_LIMIT:
            _LINE_PROFILES.clear()
        _LINE_PROFILES[full] = profile
    return profile


class _Option(NamedTuple):
    """One choice of sets at a number: the held colours of each set, its bound gains per slot
    price, the set components, and per touched colour (colour, faces taken, copies drawn)."""

    sets: tuple[tuple[int, ...], ...]
    gains: list[int]
    items: tuple[Component, ...]
    changes: tuple[tuple[int, int, int], ...]
    packed_gains: int


@_cached(1 << 12)
def _number_options(counts: tuple[int, ...], avail: tuple[int, ...], singles: int) -> list[_Option]:
    """The choices of sets at one number (held ``counts`` and drawable ``avail`` per colour),
    the ones taking the most faces first (they tend to find the best layout early)."""
    options = []
    faces = list(counts)  # _sets_at reads counts at faces[c * 13 + number]; number 0 here
    padded = [0] * 52
    for c in range(4):
        padded[c * 13] = faces[c]
    for choice in sorted(_sets_at(0, padded, singles), key=_taken, reverse=True):
        here = list(avail)
        taken = [0] * 4
        drawn = [0] * 4
        items = []
        for colours, _ in choice:
            for c in colours:
                taken[c] += 1
            component, drawn_colours = _set_component(colours, tuple(here))
            for c in drawn_colours:
                here[c] -= 1
                drawn[c] += 1
            items.append(component)
        gains = [
            sum(SCALE * len(c) - price * max(3, len(c)) for c, _ in choice) for price in SLOT_PRICES
        ]
        changes = tuple((c, taken[c], drawn[c]) for c in range(4) if taken[c] or drawn[c])
        options.append(
            _Option(
                tuple(colours for colours, _ in choice),
                gains,
                tuple(items),
                changes,
                _pack(gains),
            )
        )
    return options


def _taken(choice: list[tuple[tuple[int, ...], int]]) -> int:
    return sum(len(colours) for colours, _ in choice)


def kept_with_sets(
    hand: HandState, rules: Rules, sets: SetChoice, at_least: int | None = None
) -> int:
    """Most faces kept by a meld layout with exactly these sets (-1 if the hand lacks a face).

    With ``at_least``, a layout that cannot keep that many may be reported as -1 straight from
    the bound of ``_kept_bound`` (its knapsack is skipped).
    """
    need: dict[int, int] = {}
    for colours, number in sets:
        if len(set(colours)) != len(colours):
            return -1
        for c in colours:
            need[c * 13 + number] = need.get(c * 13 + number, 0) + 1
    if any(n > hand.faces[face] for face, n in need.items()):
        return -1
    size = rules.hand_size
    items, keys, _ = _take_set_keys(hand, sets)
    wrap = rules.wrap_13_1
    components = (*items, *(_line_profile(key, wrap, size) for key in keys))
    if at_least is not None and _kept_bound(components, size) < at_least:
        return -1
    return _layout_kept(components, size, hand.okeys + hand.wild_avail)


def improving_draws(hand: HandState, rules: Rules) -> tuple[int, set[int]]:
    """The distance of a hand and the drawable faces (0..51) whose draw lowers it (an okey always
    does while the distance is above 0).

    Rather than solving the hand again for every face, this starts from the optimal meld layouts
    of the hand: a drawn face lowers the meld distance only if some optimal layout can keep it, in
    its colour's runs, in one of its sets, or in a new set with one held face of its number (any
    layout keeping it one more time came from an optimal one in one of these ways).
    """
    distance, found, _ = improving_draws_from(hand, rules, optimal_set_choices(hand, rules))
    return distance, found


def improving_draws_from(
    hand: HandState,
    rules: Rules,
    solved: tuple[int, list[SetChoice]],
    never: set[int] | frozenset[int] = frozenset(),
) -> tuple[int, set[int], set[int]]:
    """``improving_draws`` from the hand's ``optimal_set_choices`` (``solved``), also returning
    the faces checked and found not to let the meld layout keep one more.

    ``never`` are faces known not to let the meld layout keep one more: their meld check is
    skipped.  (``advise`` knows some.  Say hands A and B are one 15-tile hand T less one tile
    each, neither an okey, B keeps more faces than A, and A's missing tile still has a copy to
    draw.  If a face f (not A's missing one) does not let A keep one more, then T plus f keeps at
    most one more than A (removing A's missing tile from it loses at most one kept face, as a
    drawn copy can take its place), so B plus f, which holds less, keeps no more than B.)
    A face whose bound (``_RootBound``) already falls short is not checked any further.
    """
    size = rules.hand_size
    pairs_on = rules.seven_pairs and size % 2 == 0
    kept_melds, optimal = solved
    melds = size - kept_melds - hand.okeys
    pairs = size - kept_in_pairs(hand, rules) if pairs_on else size
    distance = max(0, min(melds, pairs))
    found: set[int] = set()
    melds_failed: set[int] = set()
    if distance == 0:
        return 0, found, melds_failed
    layouts = [_Layout(hand, rules, sets) for sets in optimal] if melds == distance else []
    root = _RootBound(hand, rules) if layouts else None
    pairs_count = pairs == distance
    for face in range(NUMBERED_KINDS):
        if not hand.avail[face]:
            continue  # no copy left to draw
        if not pairs_count and (not layouts or face in never):
            continue  # nothing to check for this face
        drawn = hand.with_face(face)
        if pairs_count and size - kept_in_pairs(drawn, rules) < distance:
            found.add(face)
        elif layouts and face not in never:
            if root.cuts(drawn, face, kept_melds + 1):
                melds_failed.add(face)
            elif _melds_improve(drawn, face, layouts, kept_melds + 1, rules):
                found.add(face)
            else:
                melds_failed.add(face)
    return distance, found, melds_failed


def meld_raising_faces(
    hand: HandState, rules: Rules, solved: tuple[int, list[SetChoice]]
) -> set[int]:
    """The drawable faces whose draw lets the hand's meld layout keep one more face than its
    ``optimal_set_choices`` (``solved``) do (the meld checks of ``improving_draws_from``, for
    any hand size: ``advise`` asks it of the whole 15-tile hand)."""
    kept, optimal = solved
    if kept >= rules.hand_size:
        return set()
    layouts = [_Layout(hand, rules, sets) for sets in optimal]
    root = _RootBound(hand, rules)
    found = set()
    for face in range(NUMBERED_KINDS):
        if not hand.avail[face]:
            continue
        drawn = hand.with_face(face)
        if not root.cuts(drawn, face, kept + 1) and _melds_improve(
            drawn, face, layouts, kept + 1, rules
        ):
            found.add(face)
    return found


class _RootBound:
    """The set search's bound at its root (``_SetSearch``: every colour's runs as the faces
    stand, plus the most the sets at each number could add), kept per part so that the bound
    of the hand plus one drawn face costs one colour profile and one number's choices.

    It bounds every meld layout of the hand plus that face, so a face whose bound falls short
    of the target cannot let the layout keep that many: its layout checks are skipped."""

    __slots__ = ("wrap", "size", "gains", "runs", "total")

    def __init__(self, hand: HandState, rules: Rules) -> None:
        faces, avail = hand.faces, hand.avail
        self.wrap = rules.wrap_13_1
        self.size = rules.hand_size
        lone = _lone_colours(hand.line_keys(), self.wrap)
        self.gains = [_number_gain(faces, avail, n, lone[n]) for n in range(13)]
        self.runs = [_line_profile(key, self.wrap, self.size) for key in hand.line_keys()]
        self.total = _priced(self.size) + sum(self.gains) + sum(p.packed_bound for p in self.runs)

    def cuts(self, drawn: HandState, face: int, target: int) -> bool:
        """True when the hand plus a drawn ``face`` (``drawn``) keeps fewer than ``target``
        faces in any meld layout (its bound says so)."""
        colour, number = divmod(face, 13)
        keys = drawn.line_keys()
        profile = _line_profile(keys[colour], self.wrap, self.size)
        lone = _lone_colours(keys, self.wrap)
        total = (
            self.total
            - self.gains[number]
            + _number_gain(drawn.faces, drawn.avail, number, lone[number])
            - self.runs[colour].packed_bound
            + profile.packed_bound
        )
        if not drawn.avail[face]:
            # Its last copy drawn: runs through it draw no more, so a lone face nearby may
            # now stand in a set.
            for near in _NEAR[self.wrap][number]:
                total += _number_gain(drawn.faces, drawn.avail, near, lone[near]) - self.gains[near]
        # The bound is below the target in some field (``_SetSearch._set_guard``).
        return (total + _GUARDS[target]) & HIGH != HIGH


def _number_gain(faces: Sequence[int], avail: Sequence[int], n: int, singles: int) -> int:
    """The most the sets at number ``n`` can add to the bound (packed), 0 where none can be
    chosen (``_SetSearch.numbers``); ``singles`` as for ``_number_choices``."""
    counts = (faces[n], faces[13 + n], faces[26 + n], faces[39 + n])
    if not singles and (counts[0] > 0) + (counts[1] > 0) + (counts[2] > 0) + (counts[3] > 0) < 2:
        return 0
    here = (avail[n], avail[13 + n], avail[26 + n], avail[39 + n])
    return _number_choices(counts, here, n, singles)[2]


class _Layout:
    """One optimal choice of sets, with the knapsack of everything but one colour kept at hand,
    so a face drawn into that colour's runs costs one knapsack step."""

    def __init__(self, hand: HandState, rules: Rules, sets: SetChoice) -> None:
        self.sets = sets
        self.numbers = {number for _, number in sets}
        self.items, self.keys, self.avail = _take_set_keys(hand, sets)
        self.hand_avail = hand.avail
        self.size = rules.hand_size
        self.wrap = rules.wrap_13_1
        self.budget = hand.okeys + hand.wild_avail
        self.profiles = [_line_profile(key, self.wrap, self.size) for key in self.keys]
        self._without: dict[int, _Totals] = {}
        # The layout's bound terms (``_kept_bound``), plus a new set of two held faces: a bound
        # for the layout with such a set added for a drawn face (that set's faces leave their
        # colours' runs, which never raises their bounds, and availability never changes one).
        self.bound = (
            _priced(self.size)
            + sum(c.packed_bound for c in self.items)
            + sum(p.packed_bound for p in self.profiles)
        )
        self.bound_with_pair = self.bound + _set_bound(2)

    def kept_with_run_face(self, face: int) -> int:
        """Faces kept when a drawn ``face`` joins its colour's runs (the sets stay as they are)."""
        colour = face // 13
        totals = self._without.get(colour)
        if totals is None:
            others = [p for c, p in enumerate(self.profiles) if c != colour]
            totals = _totals_of((*self.items, *others), self.size, self.budget)
            self._without[colour] = totals
        # One more held copy, and the copy drawn leaves the pool (its last one: no copy left).
        lost = 4 if self.avail.get(face, self.hand_avail[face]) == 1 else 0
        key = self.keys[colour] + ((1 - lost) << (3 * (face % 13)))
        # ``_line_profile``, its cache read here first.
        profile = _LINE_PROFILES.get(key | (self.wrap << 39) | (self.size << 40))
        if profile is None:
            profile = _line_profile(key, self.wrap, self.size)
        return totals.best_with(profile.packed)


# Knapsack tables of "everything but one colour", shared by the optimal layouts of a hand and by
# the hands after each discard of one 15-tile hand (a discard changes one colour and the sets at
# one number, so most of these tables repeat).  Keyed on the components' choices, in any order
# (the table does not depend on the order the components are added in).
_TOTALS_CACHE: dict[tuple, _Totals] = {}
_TOTALS_CACHE_LIMIT = 1 << 15  # about 1 KB each


def _totals_of(components: Sequence[Component], size: int, budget: int) -> _Totals:
    """The ``_Totals`` of these components' knapsack (from the per-process cache if there)."""
    return _totals_of_packed([c.packed for c in components], size, budget)


def _totals_of_packed(parts: list[tuple[tuple[int, int], ...]], size: int, budget: int) -> _Totals:
    """The ``_Totals`` of the knapsack of these parts' packed choices (cached per process)."""
    key = (tuple(sorted(parts)), size, budget)
    totals = _TOTALS_CACHE.get(key)
    if totals is None:
        totals = _Totals(_knapsack_bits(parts, size, budget), size, budget)
        if len(_TOTALS_CACHE) >= _TOTALS_CACHE_LIMIT:
            _TOTALS_CACHE.clear()
        _TOTALS_CACHE[key] = totals
    return totals


class _Totals:
    """A knapsack table read for its last step: for each excess allowance, the most kept at
    exactly each slot count and at each slot count or fewer."""

    def __init__(self, table: int, size: int, budget: int) -> None:
        """From the knapsack's totals as bits (``_knapsack_bits``)."""
        self.size = size
        self.budget = budget
        exact = []
        kept_bits, excess_at = _layout_fields(size)
        block = 1 << kept_bits
        per_layer = 1 << (excess_at - kept_bits)  # slot fields per excess value
        code = _FIELD_CODES.get(block)
        row = [-1] * (size + 1)
        if code is not None:
            # The table as an array of fields, one per (excess, slot count): each field's
            # highest bit is the most kept there.
            count = min((table.bit_length() + block - 1) // block, (budget + 1) * per_layer)
            fields = memoryview(table.to_bytes(count * (block >> 3), "little")).cast(code)
        for excess in range(budget + 1):
            # The totals with this excess, one block of kept bits per slot count (an empty
            # layer, the usual case above excess 0, leaves the row as it is).
            if code is not None:
                layer = fields[excess * per_layer : excess * per_layer + size + 1]
                if any(layer):
                    row = [
                        max(kept, v.bit_length() - 1) for kept, v in zip(row, layer, strict=False)
                    ] + row[len(layer) :]
            else:
                layer = (table >> (excess << excess_at)) & ((1 << (1 << excess_at)) - 1)
                if layer:
                    row = row[:]
                    for slots in range(size + 1):
                        found = (layer & ((1 << block) - 1)).bit_length() - 1
                        if found > row[slots]:
                            row[slots] = found
                        layer >>= block
                        if not layer:
                            break
            exact.append(row)
        # by_key[slots + (excess << SHIFT)]: the most the table adds to a last component's
        # choice of that many slots and that excess (-1: none fits); bytes, as the shared cache
        # holds many of these tables.
        self.by_key = by_key = array("b", [-1]) * ((budget + 1) << SHIFT)
        for excess in range(budget + 1):
            row = exact[budget - excess]  # at most this excess left for the other parts
            running, upto = -1, []
            for kept in row:
                if kept > running:
                    running = kept
                upto.append(running)
            at = excess << SHIFT
            by_key[at : at + size + 1] = array(
                "b",
                [
                    row[rest] if rest < 3 or upto[rest - 3] <= row[rest] else upto[rest - 3]
                    for rest in range(size, -1, -1)
                ],
            )

    def best_with(self, packed: Sequence[tuple[int, int]]) -> int:
        """Most kept once one more component (its packed choices) is added and the slots must
        fit."""
        best = -1
        by_key = self.by_key
        limit = len(by_key)
        for key, kept in packed:
            if key < limit:
                found = by_key[key]
                if found >= 0 and found + kept > best:
                    best = found + kept
        return max(best, 0)


def _melds_improve(
    drawn: HandState, face: int, layouts: list[_Layout], target: int, rules: Rules
) -> bool:
    colour, number = divmod(face, 13)
    tried: set[SetChoice] = set()
    # The drawn face in its colour's runs, in every layout first (one knapsack step each).  (A
    # set at its number may draw that face as its missing tile, so then the whole layout is
    # solved again, below.)
    for layout in layouts:
        if number not in layout.numbers:
            if layout.kept_with_run_face(face) >= target:
                return True
            tried.add(layout.sets)
    for layout in layouts:
        sets = layout.sets
        options = [sets]
        for i, (colours, at) in enumerate(sets):
            if at == number and colour not in colours and len(colours) < 4:
                grown = (tuple(sorted((*colours, colour))), at)
                options.append((*sets[:i], grown, *sets[i + 1 :]))
        used = [0] * 4
        for colours, at in sets:
            if at == number:
                for c in colours:
                    used[c] += 1
        if (layout.bound_with_pair + _GUARDS[target]) & HIGH == HIGH:  # bound >= target
            for other in range(4):
                if other != colour and drawn.faces[other * 13 + number] > used[other]:
                    options.append((*sets, (tuple(sorted((colour, other))), number)))
        for option in options:
            if option in tried:
                continue
            tried.add(option)
            if kept_with_sets(drawn, rules, option, target) >= target:
                return True
    return False


def _layout_kept(components: Sequence[Component], size: int, budget: int) -> int:
    """Most faces kept by one choice per component, with the slots adding up to a win.

    The knapsack runs on one int used as a set of bits, one per (kept, slots, excess) total that
    some choice per component reaches (``_layout_fields``): adding a component ORs the set shifted
    by each of its choices, so every step is a few big-int operations instead of a loop over
    the table's entries times the component's choices.
    """
    table = _knapsack_bits([c.packed for c in components], size, budget)
    kept = size
    _, kept_masks = _layout_masks(size, budget)
    for mask in kept_masks:
        if table & mask:
            return kept
        kept -= 1
    return 0


def _knapsack_bits(parts: Sequence[tuple[tuple[int, int], ...]], size: int, budget: int) -> int:
    """The (kept, slots, excess) totals of one choice per part (packed choices), as bits
    (``_layout_fields``), those over ``size`` slots or ``budget`` excess left out."""
    valid = _layout_masks(size, budget)[0]
    table = 1
    for packed in parts:
        cached = _SHIFTS.get(id(packed))
        if cached is None or cached[0] is not packed or cached[1] != size:
            cached = _layout_shifts(packed, size)
        new = 0
        for shift in cached[2]:
            new |= table << shift
        table = new & valid
    return table


# Bit positions of a layout knapsack total (``_layout_kept``): kept in the lowest
# ``size.bit_length()`` bits, slots in the next ``(2 * size + 1).bit_length()``, excess above.
# A choice never keeps more faces than its slots (each kept face fills one), and totals with
# more than ``size`` slots are dropped after every step, so two totals add to at most
# ``2 * size`` kept and slots: a kept sum that overflows its field carries one into a slot count
# above ``size`` (dropped at once), and slot sums never overflow theirs.
_SHIFTS: dict[int, tuple[tuple[tuple[int, int], ...], int, tuple[int, ...]]] = {}
_SHIFTS_LIMIT = 1 << 17
_MASKS: dict[tuple[int, int], tuple[int, tuple[int, ...]]] = {}


def _layout_fields(size: int) -> tuple[int, int]:
    kept_bits = size.bit_length()
    return kept_bits, kept_bits + (2 * size + 1).bit_length()


def _layout_shifts(
    packed: tuple[tuple[int, int], ...], size: int
) -> tuple[tuple[tuple[int, int], ...], int, tuple[int, ...]]:
    """A component's choices as bit shifts of the layout knapsack (cached by the choices' id,
    the entry holding them so the id stays theirs); choices over ``size`` slots never fit."""
    kept_bits, excess_at = _layout_fields(size)
    shifts = tuple(
        kept + ((key & SLOTS_MASK) << kept_bits) + ((key >> SHIFT) << excess_at)
        for key, kept in packed
        if (key & SLOTS_MASK) <= size
    )
    if len(_SHIFTS) >= _SHIFTS_LIMIT:
        _SHIFTS.clear()
    entry = _SHIFTS[id(packed)] = (packed, size, shifts)
    return entry


def _layout_masks(size: int, budget: int) -> tuple[int, tuple[int, ...]]:
    """For ``_layout_kept``: the bits of totals that may still grow into a win (at most
    ``size`` slots and ``budget`` excess), and for each kept count from ``size`` down the bits
    of the winning totals (exactly ``size`` slots or 3+ fewer, which a group of drawn tiles
    fills) that keep that many."""
    masks = _MASKS.get((size, budget))
    if masks is None:
        kept_bits, excess_at = _layout_fields(size)
        valid = 0
        kept_masks = [0] * (size + 1)
        for excess in range(budget + 1):
            for slots in range(size + 1):
                at = (slots << kept_bits) + (excess << excess_at)
                valid |= ((1 << (size + 1)) - 1) << at
                if slots == size or slots <= size - 3:
                    for kept in range(size + 1):
                        kept_masks[kept] |= 1 << (at + kept)
        masks = _MASKS[(size, budget)] = (valid, tuple(reversed(kept_masks)))
    return masks


def _take_set_keys(
    hand: HandState, sets: SetChoice
) -> tuple[list[Component], list[int], dict[int, int]]:
    """Take the sets' held faces out of the hand and draw their missing tiles: the set
    components, the colours' line keys after that, and the drawable copies left of each face
    the sets drew (the other faces keep ``hand.avail``)."""
    keys = list(hand.line_keys())
    avail = hand.avail
    changed: dict[int, int] = {}
    items: list[Component] = []
    for colours, number in sets:
        shift = 3 * number
        for c in colours:
            keys[c] -= 1 << shift
        if changed:
            here = tuple(changed.get(c * 13 + number, avail[c * 13 + number]) for c in range(4))
        else:
            here = (avail[number], avail[13 + number], avail[26 + number], avail[39 + number])
        component, drawn = _set_component(colours, here)
        for c in drawn:
            left = here[c] - 1
            changed[c * 13 + number] = left
            if left <= 0:
                keys[c] -= 4 << shift
        items.append(component)
    return items, keys, changed


def _sets_at(
    number: int, faces: list[int], singles: int = 0
) -> list[list[tuple[tuple[int, ...], int]]]:
    """The choices of sets (0, 1 or 2 of them) at one number, each as (kept colours, number);
    a set may keep one face only in the colours of ``singles`` (``_lone_colours``)."""
    counts = [faces[c * 13 + number] for c in range(4)]
    choices: list[list[tuple[tuple[int, ...], int]]] = [[]]
    for first in _colour_subsets(counts, singles):
        choices.append([(first, number)])
        rest = [n - (c in first) for c, n in enumerate(counts)]
        for second in _colour_subsets(rest, singles):
            if second <= first:
                choices.append([(first, number), (second, number)])
    return choices


def _colour_subsets(counts: list[int], singles: int = 0) -> list[tuple[int, ...]]:
    present = [c for c in range(4) if counts[c]]
    alone = [(c,) for c in present if singles >> c & 1]
    return alone + [s for size in (2, 3, 4) for s in combinations(present, size)]


@_cached(64)
def _set_bound(kept: int) -> int:
    """The packed bound terms of a set of ``kept`` held faces (availability never changes them:
    a set of k held faces uses 3 or 4 slots, or k if more)."""
    return _pack([max(0, SCALE * kept - price * max(3, kept)) for price in SLOT_PRICES])


@_cached(4096)
def _set_component(
    colours: tuple[int, ...], avail: tuple[int, ...]
) -> tuple[Component, tuple[int, ...]]:
    """Slot options of one set (3 or 4 tiles) and the colours whose copies it draws.

    ``avail`` is the drawable copies at the set's number, per colour.  The most available missing
    colours are drawn first; a missing tile with no copy left needs an okey (one excess).
    """
    missing = sorted((c for c in range(4) if c not in colours), key=lambda c: -avail[c])
    options: list[Entry] = []
    drawn: list[int] = []
    excess = 0
    kept = len(colours)
    for slots in range(kept, 5):
        if slots >= 3:
            options.append((slots, kept, excess))
        if slots == 4:
            break
        colour = missing[slots - kept]
        if avail[colour]:
            drawn.append(colour)
        else:
            excess += 1
    return Component.of(tuple(options)), tuple(drawn)


def _colour_profile(
    faces: tuple[int, ...], avail: tuple[int, ...], wrap: bool, size: int
) -> Component:
    """Runs of one colour: the useful (slots, kept, excess) choices of laying its faces in runs.

    ``faces`` are the colour's 13 counts, ``avail`` whether each face still has a copy to draw
    (the work is done by ``_profile_of_key`` on the line's int key)."""
    return _line_profile(_line_key(faces, avail, 0), wrap, size)


def _profile_of_key(key: int, wrap: bool, size: int) -> Component:
    """``_colour_profile`` of the line with this key (``_line_key``).

    With ``wrap`` a 1 may be played high (position 14, after 13): each split of the held 1s into
    low and high ones is tried.  Runs never cross 4 or more empty positions, so faces further
    apart than that are solved apart (as clusters, whose run choices ``_runs_packed`` caches by
    their shape) and their choices added up.
    """
    line, avail = _line_bits(key, wrap)
    top = 13 if wrap else 12
    ones = line & 3
    splits = range(ones + 1) if wrap else range(1)
    kept_bits, excess_at, _, valid = _run_fields(size)
    found = 0
    for high in splits:
        split = line - high + (high << 26)
        clusters = _clusters_packed(split, avail, top)
        if len(splits) == 1 and len(clusters) == 1:
            # One cluster: its choices are already the useful ones (``_useful_bits`` of a
            # useful set of choices is the same set), all within ``size`` slots and with less
            # excess than LONGEST_RUN (a run keeps at least one face).
            return _component_of_packed(dict(_runs_packed(*clusters[0], size)))
        # The clusters' knapsack as bits (``_run_fields``), each choice of a cluster a shift;
        # the splits' totals ORed.
        # (The first cluster's bits are taken whole: choices another beats still lose to it
        # once the same choices are added, so the useful choices at the end are the same.)
        table = _runs_bits(*clusters[0], size) & valid if clusters else 1
        for cluster in clusters[1:]:
            new = 0
            for k, kept in _runs_packed(*cluster, size):
                new |= table << (
                    kept + ((k & SLOTS_MASK) << kept_bits) + ((k >> SHIFT) << excess_at)
                )
            table = new & valid
        found |= table
    return _component_of_packed(_useful_bits(found, size))


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


def _component_of_packed(found: dict[int, int]) -> Component:
    entries = tuple(sorted((k & SLOTS_MASK, kept, k >> SHIFT) for k, kept in found.items()))
    return Component.of_packed(entries, tuple((s + (x << SHIFT), k) for s, k, x in entries))


def _clusters_packed(line: int, avail: int, top: int) -> list[tuple[int, int, int]]:
    """Split a colour's line (2 bits per position, 0..top) into clusters: each as its line and
    availability from up to 4 positions before its first face to up to 4 after its last (the
    room a run may draw in), and that length."""
    held = [p for p in range(top + 1) if (line >> (2 * p)) & 3]
    out = []
    i = 0
    while i < len(held):
        j = i
        while j + 1 < len(held) and held[j + 1] - held[j] <= 4:
            j += 1
        lo, hi = held[i], held[j]
        start = lo - min(MAX_OUTSIDE, lo)
        length = hi + min(MAX_OUTSIDE, top - hi) - start + 1
        out.append(
            (
                (line >> (2 * start)) & ((1 << (2 * length)) - 1),
                (avail >> start) & ((1 << length) - 1),
                length,
            )
        )
        i = j + 1
    return out


# Results of ``_runs_packed`` shared by every cluster and hand of the process, keyed on the line
# and its availability from 4 positions before the lowest held face (nothing further left
# matters), so the clusters of different hands share the solutions of their common tails.
_RUNS_MEMO_LIMIT = 1 << 17  # about 2 KB each with the other caches: a bounded few hundred MB
_PACKED_MEMO: dict[int, tuple[tuple[int, int], ...]] = {}
# The same lines' choices as bits (``_runs_bits``), which the search itself reads.
_BITS_MEMO: dict[int, int] = {}
# Most drawn tiles outside a run's kept span of each length: what makes it 3 long, plus 2.
_OUTSIDE = tuple(2 + max(0, 3 - span) for span in range(64))


def _runs_packed(line: int, avail: int, length: int, size: int) -> tuple[tuple[int, int], ...]:
    """Every useful way to lay a colour's faces out in runs: (slots + (excess << SHIFT), most
    faces kept) pairs (``_useful_bits`` of the choices ``_runs_bits`` finds)."""
    key = line | (avail << 32) | (length << 48) | (size << 56)
    cached = _PACKED_MEMO.get(key)
    if cached is None:
        cached = tuple(_useful_bits(_runs_bits(line, avail, length, size), size).items())
        if len(_PACKED_MEMO) >= _RUNS_MEMO_LIMIT:
            _PACKED_MEMO.clear()
        _PACKED_MEMO[key] = cached
    return cached


# Bit positions of a run choice (``_runs_bits``): kept in the lowest ``size.bit_length()`` bits,
# slots in the next ones, wide enough for a total over ``size`` plus a longest run and a carry
# (such totals are dropped at once), excess above.  Per size: (kept bits, excess shift, mask of
# the totals within ``size`` slots and ``size`` excess).
_RUN_FIELDS: dict[int, tuple[int, int, int, int]] = {}


def _run_fields(size: int) -> tuple[int, int, int, int]:
    """(kept bits, excess shift, mask of the totals within ``size`` slots, the same with at
    most ``LONGEST_RUN`` excess: a whole line's totals, ``_profile_of_key``)."""
    fields = _RUN_FIELDS.get(size)
    if fields is None:
        kept_bits = size.bit_length()
        excess_at = kept_bits + (max(size + LONGEST_RUN, 2 * size) + 1).bit_length()
        valid = line = 0
        slots_mask = (1 << ((size + 1) << kept_bits)) - 1
        for excess in range(size + 1):
            valid |= slots_mask << (excess << excess_at)
            if excess <= LONGEST_RUN:
                line |= slots_mask << (excess << excess_at)
        fields = _RUN_FIELDS[size] = (kept_bits, excess_at, valid, line)
    return fields


def _useful_bits(bits: int, size: int) -> dict[int, int]:
    """The choices in a ``_runs_bits`` set that no other beats (slots + (excess << SHIFT) ->
    most kept): a choice is kept when it keeps more than any with less excess at its slot count
    and more than any with no more excess in 3 or more fewer slots.  (Three or more spare slots
    are always filled by a new group of drawn tiles, so only choices within two slots of a
    better one can matter: they make the total exact.  Dropping the others is safe at every
    step of a knapsack: what beats a choice still beats it once the same parts are added.)

    The bits are read as an array of fields, one per slot count (kept bits of 1, 2, 4 or 8 bytes:
    hand sizes 4 to 63), where it fits; otherwise one field at a time."""
    kept_bits, excess_at, _, _ = _run_fields(size)
    block = 1 << kept_bits
    per_layer = 1 << (excess_at - kept_bits)  # fields per excess value
    code = _FIELD_CODES.get(block)
    if code is None:
        return _useful_bits_slow(bits, size)
    count = (bits.bit_length() + block - 1) // block
    fields = memoryview(bits.to_bytes(count * (block >> 3), "little")).cast(code)
    found = {}
    lower = [-1] * (size + 1)  # most kept at each slot count with less excess
    base = 0
    for at in range(0, count, per_layer):
        layer = [v.bit_length() - 1 for v in fields[at : at + size + 1]]
        running = -1  # most kept with no more excess, up to each slot count
        upto = []
        for slots, kept in enumerate(layer):
            low = lower[slots]
            if kept > low:
                if slots < 3 or upto[slots - 3] < kept:
                    found[base + slots] = kept
                lower[slots] = low = kept
            if low > running:
                running = low
            upto.append(running)
        base += 1 << SHIFT
    return found


# Array type codes of a field of ``_useful_bits`` by its width in bits.
_FIELD_CODES = {8: "B", 16: "H", 32: "I", 64: "Q"}


def _useful_bits_slow(bits: int, size: int) -> dict[int, int]:
    """``_useful_bits``, one field at a time (hand sizes whose fields are no whole array item)."""
    kept_bits, excess_at, _, _ = _run_fields(size)
    block = 1 << kept_bits
    field = (1 << block) - 1
    layer_bits = 1 << excess_at
    layer_mask = (1 << layer_bits) - 1
    found = {}
    below = 0  # the layers of less excess, ORed
    excess = 0
    while bits:
        layer = bits & layer_mask
        if layer:
            both = below | layer
            base = excess << SHIFT
            running = -1  # most kept in 3 or more fewer slots, excess up to this one
            upto = []
            slots = 0
            while both:
                best = (both & field).bit_length() - 1
                kept = (layer & field).bit_length() - 1
                if (
                    kept == best
                    and kept >= 0
                    and ((below >> (slots << kept_bits)) & field) >> kept == 0
                    and (slots < 3 or upto[slots - 3] < kept)
                ):
                    found[base + slots] = kept
                if best > running:
                    running = best
                upto.append(running)
                both >>= block
                layer >>= block
                slots += 1
            below |= bits & layer_mask
        bits >>= layer_bits
        excess += 1
    return found


def _runs_bits(line: int, avail: int, length: int, size: int) -> int:
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
    """
    if not line:
        return 1
    first = ((line & -line).bit_length() - 1) >> 1
    if first > MAX_OUTSIDE:
        # Positions further left than a lead of MAX_OUTSIDE can reach play no part.
        cut = first - MAX_OUTSIDE
        line >>= 2 * cut
        avail >>= cut
        length -= cut
        first = MAX_OUTSIDE
    tail = (avail << 32) | (length << 48) | (size << 56)
    memo = _BITS_MEMO
    cached = memo.get(line | tail)
    if cached is not None:
        return cached
    kept_bits, excess_at, valid, _ = _run_fields(size)
    top = length - 1
    rest = line - (1 << (2 * first))
    found = _runs_bits(rest, avail, length, size)
    missing = ~avail
    for lead in range(min(MAX_OUTSIDE, first) + 1):
        start = first - lead
        left = rest
        excess = ((missing >> start) & ((1 << lead) - 1)).bit_count()
        kept = 1
        since_kept = 0
        run = lead + 1
        pos = first
        sub_of = -1  # the ``left`` that ``sub`` is the rest of (a drawn tile leaves it as is)
        while True:
            # Drawn tiles outside the kept span: at most what makes the run 3 long, plus 2.
            outside = _OUTSIDE[run - lead - since_kept]
            if lead > outside:
                break  # the lead is too long for this run or any longer one
            if run >= 3 and lead + since_kept <= outside:
                # The rest of the line: ``_runs_bits(left, ...)``, looked up here first.
                if left == sub_of:
                    pass
                elif left:
                    low = ((left & -left).bit_length() - 1) >> 1
                    if low > MAX_OUTSIDE:
                        cut = low - MAX_OUTSIDE
                        key = (
                            (left >> (2 * cut))
                            | ((avail >> cut) << 32)
                            | ((length - cut) << 48)
                            | (size << 56)
                        )
                    else:
                        key = left | tail
                    sub = memo.get(key)
                    if sub is None:
                        sub = _runs_bits(left, avail, length, size)
                    sub_of = left
                else:
                    sub = 1
                    sub_of = 0
                found |= sub << (kept + (run << kept_bits) + (excess << excess_at))
            pos += 1
            if pos > top or run >= LONGEST_RUN:
                break
            if (left >> (2 * pos)) & 3:
                left -= 1 << (2 * pos)
                kept += 1
                since_kept = 0
            else:
                excess += (missing >> pos) & 1
                since_kept += 1
                if since_kept > MAX_OUTSIDE:
                    break
            run += 1
    found &= valid
    if len(memo) >= _RUNS_MEMO_LIMIT:
        memo.clear()
    memo[line | tail] = found
    return found


def unseen_counts(tiles: Iterable[Tile], indicator: Tile, seen: Iterable[Tile] = ()) -> list[int]:
    """Copies of each of the 53 tile kinds not in the hand, not the indicator, not seen."""
    left = [2] * (FALSE_JOKER_INDEX + 1)
    for tile in [*tiles, indicator, *seen]:
        left[tile.index] = max(0, left[tile.index] - 1)
    return left
