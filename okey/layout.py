"""Laying out a winning hand from its parts: the knapsack over slot counts.

Every part of a hand (a set, or one colour's runs) offers choices of (slots, faces kept, excess);
a winning layout takes one choice per part, its slots adding up to the hand size (or 3 or more
fewer, filled by a group of drawn tiles) and its excess (missing tiles with no copy left) within
the okeys the player holds or can still draw.  This module adds the parts up, as bits of one int
(``layout_kept``), and bounds what a set of parts can keep (``kept_bound``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import wraps
from itertools import count
from operator import itemgetter
from typing import NamedTuple

# Slot count of a colour profile entry, faces kept, missing tiles with no drawable copy.
Entry = tuple[int, int, int]


def bounded_cache(limit: int) -> Callable[[Callable], Callable]:
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


class Component(NamedTuple):
    """One part of a layout (a set, or one colour's runs): its (slots, kept, excess) choices and,
    for each slot price of ``SLOT_PRICES``, its best ``SCALE * kept - price * slots`` (bound).

    ``packed`` holds the same choices as (slots + excess << ``SHIFT``, kept), so the knapsack adds
    one int per choice instead of a pair; ``packed_bound`` holds the bounds one per 16-bit field
    (they are never negative and their sums stay far below 2^16), so adding the bounds of parts is
    one int addition.  ``serial`` is the component's own number, never given to another while
    the process runs (the knapsack cache's key, ``_knapsack_of``)."""

    entries: tuple[Entry, ...]
    bounds: tuple[int, ...]
    packed: tuple[tuple[int, int], ...]
    packed_bound: int
    serial: int

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
        return cls(entries, bounds, packed, pack(bounds), next(_SERIALS))


# ``Component.serial``: numbers given out once each (``next`` on a count is atomic under the GIL).
_SERIALS = count()


_SERIAL = itemgetter(4)  # (``Component.serial``, read by ``map``)


def interned(entries: tuple[Entry, ...]) -> Component:
    """``Component.of(entries)``, one object per choices while the process runs (a bounded
    cache): the knapsack's caches key a part by the id of its choices (``_SHIFTS``,
    ``best_with``), so a set or a colour's runs with the same choices as another (a set
    of two held faces of any colours, a line from the table or searched) is then read, not
    computed again."""
    component = _INTERNED.get(entries)
    if component is None:
        if len(_INTERNED) >= _INTERNED_LIMIT:
            _INTERNED.clear()
        component = _INTERNED[entries] = Component.of(entries)
    return component


# ``interned`` by choices (a few thousand: the table's 2,719 profiles, the searched lines' and
# a few dozen sets').
_INTERNED: dict[tuple[Entry, ...], Component] = {}


_INTERNED_LIMIT = 1 << 16


# Prices of a slot, in 1/SCALE of a kept face, for the bound of ``kept_bound`` (any price >= 0
# gives a valid bound; integers keep it exact).
SCALE = 60


SLOT_PRICES = (15, 20, 24, 30, 40)


# A knapsack key is slots + (excess << SHIFT): slots of two parts added stay below 2^SHIFT.
SHIFT = 8


SLOTS_MASK = (1 << SHIFT) - 1


FIELD = 16


FIELD_MASK = (1 << FIELD) - 1


_HALF = 1 << (FIELD - 1)


# Bit 15 of each of the five fields (``SetSearch._set_guard``).
HIGH = sum(_HALF << (FIELD * k) for k in range(5))


def pack(values: Sequence[int]) -> int:
    """Non-negative values, one per slot price, as 16-bit fields of one int."""
    return sum(v << (FIELD * k) for k, v in enumerate(values))


# ``SetSearch._set_guard`` per number of faces needed (hands of up to 63 slots).
GUARDS = [pack([_HALF - need * SCALE] * len(SLOT_PRICES)) for need in range(64)]


# ``pack`` of every slot price times a hand size, per size.
_PRICED: dict[int, int] = {}


def priced_size(size: int) -> int:
    """The packed terms ``price * size``, one per slot price (the start of every bound)."""
    packed = _PRICED.get(size)
    if packed is None:
        packed = _PRICED[size] = pack([price * size for price in SLOT_PRICES])
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


def kept_bound(components: Sequence[Component], size: int) -> int:
    """An upper bound on the faces a layout of these components keeps in ``size`` slots.

    Every layout uses at most ``size`` slots, so for any price p >= 0 its kept total is at most
    the sum over components of max(kept - p * slots) plus p * size (a Lagrangian bound).
    """
    total = priced_size(size)
    for c in components:
        total += c.packed_bound
    return _packed_min(total) // SCALE


# Knapsack tables by their parts (``_knapsack_of``): the tables of "everything but one colour"
# shared by the optimal layouts of a hand and by the hands after each discard of one 15-tile hand
# (a discard changes one colour and the sets at one number, so most of these tables repeat), and
# the layouts of the same sets again (``layout_kept``, ``knapsack_table``).  Keyed on the parts'
# serials (``Component.serial``), in any order (the table does not depend on the order the parts
# are added in; the parts are ``interned``, so the same choices are the same component, and a
# serial is never another component's, so the entry need not hold its parts).  The table, its
# most kept and its ``Totals`` (these two where read) are kept apart, ints and tuples of ints
# only (objects the collector stops visiting); the three are cleared together.
_KNAPSACKS: dict[tuple[int, ...], int] = {}


_KNAPSACK_KEPT: dict[tuple[int, ...], int] = {}


_KNAPSACK_TOTALS: dict[tuple[int, ...], Totals] = {}


_KNAPSACKS_LIMIT = 1 << 15  # about 1 KB each


def _knapsack_of(
    components: Sequence[Component], size: int, budget: int
) -> tuple[tuple[int, ...], int]:
    """The key of these components' knapsack in ``_KNAPSACKS`` and its table, made where
    missing (the table is handed on, not read again: another thread may clear the caches)."""
    key = (*sorted(map(_SERIAL, components)), size, budget)
    table = _KNAPSACKS.get(key)
    if table is None:
        if len(_KNAPSACKS) >= _KNAPSACKS_LIMIT:
            _KNAPSACKS.clear()
            _KNAPSACK_KEPT.clear()
            _KNAPSACK_TOTALS.clear()
        table = _KNAPSACKS[key] = parts_table(components, size, _layout_masks(size, budget)[0])
    return key, table


def totals_of(components: Sequence[Component], size: int, budget: int) -> Totals:
    """The ``Totals`` of these components' knapsack (from the per-process cache if there)."""
    key, table = _knapsack_of(components, size, budget)
    totals = _KNAPSACK_TOTALS.get(key)
    if totals is None:
        valid, kept_masks = _layout_masks(size, budget)
        # (Never another table's serial while the process runs, as ``Component.serial``:
        # ``best_with``.)
        totals = (table, size, budget, valid, kept_masks, next(_SERIALS))
        _KNAPSACK_TOTALS[key] = totals
    return totals


# A knapsack table (``parts_table``) read for its last step (``best_with``): the table, the
# hand size, the excess budget, the table's masks (``_layout_masks``) and a serial, as one
# tuple of ints (the collector stops tracking such a tuple at the first collection it sees;
# objects of a class of their own it would walk at every full collection).
Totals = tuple[int, int, int, int, tuple[int, ...], int]
TOTALS_SERIAL = 5  # (where a ``Totals`` holds its serial)


def best_with(totals: Totals, packed: tuple[tuple[int, int], ...], serial: int) -> int:
    """Most kept once one more component (its packed choices, and the serial that names them:
    ``Component.serial``) is added to a knapsack (``totals``) and the slots must fit
    (remembered per table and choices: the same few hundred choices recur)."""
    key = (totals[5] << SERIAL_BITS) | serial
    best = _BEST_WITH.get(key)
    if best is None:
        best = _best_with(totals, packed)
        if len(_BEST_WITH) >= _BEST_WITH_LIMIT:
            _BEST_WITH.clear()
        _BEST_WITH[key] = best
    return best


def _best_with(totals: Totals, packed: tuple[tuple[int, int], ...]) -> int:
    """``best_with``, computed: one knapsack step (``kept_adding``), 0 where nothing fits.
    (Building a table of the most kept per slot count and excess first costs several times
    as much, and most tables are read with one or two components.)"""
    table, size, _, valid, kept_masks, _ = totals
    cached = _SHIFTS.get(id(packed))
    if cached is None or cached[0] is not packed or cached[1] != size:
        cached = _layout_shifts(packed, size)
    new = 0
    for shift in cached[2]:
        new |= table << shift
    # (``kept_of_table``, its masks read from the table's.)
    new &= valid
    kept = size
    for mask in kept_masks:
        if new & mask:
            return kept
        kept -= 1
    return 0


# ``best_with`` by the serials of the table and the choices (one int: ints only, so
# the collector never visits its entries).
_BEST_WITH: dict[int, int] = {}


# Bits of a choices' serial in a ``_BEST_WITH`` key (serials stay far below 2^40).
SERIAL_BITS = 40


_BEST_WITH_LIMIT = 1 << 16


def layout_kept(components: Sequence[Component], size: int, budget: int) -> int:
    """Most faces kept by one choice per component, with the slots adding up to a win.

    The knapsack runs on one int used as a set of bits, one per (kept, slots, excess) total that
    some choice per component reaches (``_layout_fields``): adding a component ORs the set shifted
    by each of its choices, so every step is a few big-int operations instead of a loop over
    the table's entries times the component's choices.
    """
    key, table = _knapsack_of(components, size, budget)
    kept = _KNAPSACK_KEPT.get(key)
    if kept is None:
        kept = _KNAPSACK_KEPT[key] = kept_of_table(table, size, budget)
    return kept


def knapsack_table(components: Sequence[Component], size: int, budget: int) -> int:
    """The knapsack of these components as bits (``layout_kept`` reads the most kept from
    it; ``kept_adding`` adds one more component to it first)."""
    return _knapsack_of(components, size, budget)[1]


def kept_adding(table: int, component: Component, size: int, budget: int) -> int:
    """``layout_kept`` of the components of a ``knapsack_table`` and one more."""
    steps = _STEPS.get(component.serial)
    if steps is None or steps[0] != size:
        steps = _component_steps(component, size)
    new = 0
    for shift in steps[1]:
        new |= table << shift
    return kept_of_table(new & _layout_masks(size, budget)[0], size, budget)


def parts_table(components: Sequence[Component], size: int, valid: int) -> int:
    """``knapsack_table`` of these components, the masks of ``_layout_masks`` read once by the
    caller (``valid``); the first component's bits are taken whole, so the one with the most
    choices best comes first."""
    table = 0
    steps_of = _STEPS.get
    for component in components:
        steps = steps_of(component.serial)
        if steps is None or steps[0] != size:
            steps = _component_steps(component, size)
        if table:
            new = 0
            for shift in steps[1]:
                new |= table << shift
            table = new & valid
        else:
            table = steps[2] & valid
        if not table:
            return 0  # (an empty table stays empty)
    return table if components else 1


def at_least_masks(size: int, budget: int) -> tuple[int, ...]:
    """Per kept count k from 0 to ``size``, the bits of the winning totals of a knapsack
    (``kept_of_table``) that keep k or more."""
    masks = _AT_LEAST.get((size, budget))
    if masks is None:
        _, kept_masks = _layout_masks(size, budget)  # from ``size`` kept down
        found = [0] * (size + 1)
        union = 0
        for kept in range(size, -1, -1):
            union |= kept_masks[size - kept]
            found[kept] = union
        masks = _AT_LEAST[(size, budget)] = tuple(found)
    return masks


_AT_LEAST: dict[tuple[int, int], tuple[int, ...]] = {}


def kept_of_table(table: int, size: int, budget: int) -> int:
    """The most kept by a knapsack's totals (bits) that win: exactly ``size`` slots, or 3 or
    more fewer (a group of drawn tiles fills them)."""
    kept = size
    _, kept_masks = _layout_masks(size, budget)
    for mask in kept_masks:
        if table & mask:
            return kept
        kept -= 1
    return 0


# Bit positions of a layout knapsack total (``layout_kept``): kept in the lowest
# ``size.bit_length()`` bits, slots in the next ``(2 * size + 1).bit_length()``, excess above.
# A choice never keeps more faces than its slots (each kept face fills one), and totals with
# more than ``size`` slots are dropped after every step, so two totals add to at most
# ``2 * size`` kept and slots: a kept sum that overflows its field carries one into a slot count
# above ``size`` (dropped at once), and slot sums never overflow theirs.
_SHIFTS: dict[int, tuple[tuple[tuple[int, int], ...], int, tuple[int, ...], int]] = {}


_SHIFTS_LIMIT = 1 << 17


_MASKS: dict[tuple[int, int], tuple[int, tuple[int, ...]]] = {}


def _layout_fields(size: int) -> tuple[int, int]:
    kept_bits = kept_field_width(size)
    return kept_bits, kept_bits + (2 * size + 1).bit_length()


def _layout_shifts(
    packed: tuple[tuple[int, int], ...], size: int
) -> tuple[tuple[tuple[int, int], ...], int, tuple[int, ...], int]:
    """A component's choices as bit shifts of the layout knapsack, and as bits on their own
    (cached by the choices' id, the entry holding them so the id stays theirs); choices over
    ``size`` slots never fit."""
    shifts, alone = _shifts_of(packed, size)
    if len(_SHIFTS) >= _SHIFTS_LIMIT:
        _SHIFTS.clear()
    entry = _SHIFTS[id(packed)] = (packed, size, shifts, alone)
    return entry


def _component_steps(component: Component, size: int) -> tuple[int, tuple[int, ...], int]:
    """``_layout_shifts`` of a component's choices, cached by its serial (``_STEPS``)."""
    shifts, alone = _shifts_of(component.packed, size)
    if len(_STEPS) >= _SHIFTS_LIMIT:
        _STEPS.clear()
    entry = _STEPS[component.serial] = (size, shifts, alone)
    return entry


# ``_component_steps`` by the component's serial: the size, the shifts and the bits alone.
_STEPS: dict[int, tuple[int, tuple[int, ...], int]] = {}


def _shifts_of(packed: tuple[tuple[int, int], ...], size: int) -> tuple[tuple[int, ...], int]:
    """The bit shifts of these choices in the layout knapsack, and their bits on their own."""
    kept_bits, excess_at = _layout_fields(size)
    shifts = tuple(
        kept + ((key & SLOTS_MASK) << kept_bits) + ((key >> SHIFT) << excess_at)
        for key, kept in packed
        if (key & SLOTS_MASK) <= size
    )
    alone = 0
    for shift in shifts:
        alone |= 1 << shift
    return shifts, alone


def _layout_masks(size: int, budget: int) -> tuple[int, tuple[int, ...]]:
    """For ``layout_kept``: the bits of totals that may still grow into a win (at most
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


# Array type codes of a field of ``useful_bits`` by its width in bits.
FIELD_CODES = {8: "B", 16: "H", 32: "I", 64: "Q"}


MAX_HAND_SIZE = 63


def kept_field_width(size: int) -> int:
    """Width of the kept field of a knapsack total: 3 to 6 bits, so that a slot count's field
    is a whole array item of 1, 2, 4 or 8 bytes (hands of up to ``MAX_HAND_SIZE`` tiles)."""
    if size > MAX_HAND_SIZE:
        raise ValueError(f"hands of more than {MAX_HAND_SIZE} tiles are not supported")
    return max(3, size.bit_length())
