"""Sets at one number: the choices of sets a hand can lay at each number, and what each takes
out of the colours' lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from okey.layout import SCALE, SLOT_PRICES, Component, Entry, bounded_cache, interned, pack
from okey.runs import lone_faces

if TYPE_CHECKING:
    from okey.distance import HandState


# A choice of sets: (held colours, number index 0..12) per set.
SetChoice = tuple[tuple[tuple[int, ...], int], ...]


def lone_colours(keys: Sequence[int], wrap: bool) -> list[int]:
    """Per number index, the colours (bit c) whose face may stand alone in a set
    (``lone_faces`` of the four colours' line keys)."""
    lone = [lone_faces(key, wrap) for key in keys]
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


# One choice of sets at a number as the set search reads it (``number_choices``): its bound
# gains (packed), per colour it touches the change to that colour's line key, its set
# components (as ``SET_PARTS`` indexes), and its sets as (held colours, number).  Ints and
# tuples of them only, and no deeper than the collector untracks in its young collections
# (below): so the caches of choices that fill while a process runs add nothing to its full
# collections.
Choice = tuple[int, tuple[tuple[int, int], ...], tuple[int, ...], SetChoice]


# How these caches stay out of the full collections: the collector untracks a tuple of ints
# (and of untracked tuples) when a collection finds it, one level of nesting a collection (a
# tuple held only by another is found after it), and the young collections find an object once
# or twice before it is old: so every cached value is a flat tuple held by a cache
# (``number_choices``, ``_number_template``, ``_choice_shapes``), of tuples of ints or of tuples
# made once, shared and held by a cache too (``_COLOURS``, ``_PAIRS``, ``_SHIFTED``,
# ``_NUMBERED``, ``_HELD``).  (Nested five deep, they were walked by
# every full collection until one untracked them: two thirds of what a full collection walked
# in ``benchmarks/engine.py --adversarial``, 5-6 ms.)


# Each set of colours (sorted), one tuple each (made at import, untracked before
# ``okey.load_tables`` freezes them; as ``_PAIRS``).
_COLOURS: dict[tuple[int, ...], tuple[int, ...]] = {
    colours: colours for size in range(1, 5) for colours in combinations(range(4), size)
}


# The pairs the choices hold (made at import, one tuple each, so that a choice made later
# holds only tuples the collector has untracked, ``_COLOURS``): a set's (held colours, number),
# and a colour's change to its line key, (colour, -(what it takes off the number's field
# << 3 * number)).
_PAIRS: dict[tuple[object, int], tuple[object, int]] = {
    pair: pair
    for pair in [
        *((colours, number) for colours in _COLOURS for number in range(13)),
        *(
            (colour, -(amount << (3 * number)))
            for colour in range(4)
            for amount in range(1, 8)
            for number in range(13)
        ),
    ]
}


# The set components of the choices (``set_part``): a few dozen distinct ones.
SET_PARTS: list[Component] = []


_SET_PART_INDEX: dict[tuple[Entry, ...], int] = {}


def set_part(component: Component) -> int:
    """The index of a set component in ``SET_PARTS`` (one per choices, added where new)."""
    index = _SET_PART_INDEX.get(component.entries)
    if index is None:
        index = _SET_PART_INDEX[component.entries] = len(SET_PARTS)
        SET_PARTS.append(component)
    return index


def choices_key(counts: Sequence[int], avail: Sequence[int], number: int, singles: int) -> int:
    """``number_choices``' key (``CHOICES``): the counts held and the copies left per colour, two
    bits each (as ``HandState.columns`` holds them), the lone colours and the number."""
    return (
        counts[0]
        | counts[1] << 2
        | counts[2] << 4
        | counts[3] << 6
        | avail[0] << 8
        | avail[1] << 10
        | avail[2] << 12
        | avail[3] << 14
        | singles << 16
        | number << 20
    )


def number_choices(
    counts: Sequence[int], avail: Sequence[int], number: int, singles: int = 0
) -> tuple[tuple[Choice, ...], int]:
    """``_number_options`` at ``number`` as ``Choice`` tuples (with how each changes the line
    key of each colour it touches), and the most any of them adds to the bound (packed, per
    slot price).  ``singles``: the colours whose face may stand alone in a set
    (``lone_colours``).  (Made from ``_number_template``, which no number changes; cached in
    ``CHOICES`` and ``CHOICE_GAINS``, which the set search reads first.)"""
    key = choices_key(counts, avail, number, singles)
    found = CHOICES.get(key)
    if found is None:
        found = _number_choices(key)
    return found, choice_gain(key)


# ``number_choices`` by its key (``choices_key``): the choices, and apart (a pair of them would
# be one tuple deeper, ``_COLOURS``) the most they add to the bound.
CHOICES: dict[int, tuple[Choice, ...]] = {}
CHOICE_GAINS: dict[int, int] = {}


# Each choice and each template's set components, one tuple per value, held here too: a tuple
# held from outside the collector's youngest objects keeps its place among them, after its
# items, so one collection untracks a choice's items, the choice and the choices at once (one
# held by its choices alone is found after them, ``_COLOURS``).
_HELD: dict[tuple, tuple] = {}


def choice_gain(key: int) -> int:
    """``number_choices``' most added to the bound, at its key (``choices_key``): read from
    ``CHOICE_GAINS`` (or its template, where another thread emptied the table meanwhile)."""
    gain = CHOICE_GAINS.get(key)
    if gain is None:
        counts = (key & 3, key >> 2 & 3, key >> 4 & 3, key >> 6 & 3)
        avail = (key >> 8 & 3, key >> 10 & 3, key >> 12 & 3, key >> 14 & 3)
        gain = _number_template(counts, avail, key >> 16 & 15)[0]
    return gain


def _number_choices(key: int) -> tuple[Choice, ...]:
    """``number_choices``' choices at its key (``choices_key``), made and cached."""
    counts = (key & 3, key >> 2 & 3, key >> 4 & 3, key >> 6 & 3)
    avail = (key >> 8 & 3, key >> 10 & 3, key >> 12 & 3, key >> 14 & 3)
    number = key >> 20
    template = _number_template(counts, avail, key >> 16 & 15)
    # (The same few changes and sets recur in every template: each is made once per number.)
    shifted, numbered = _SHIFTED[number], _NUMBERED[number]
    choices = []
    for at in range(1, len(template), 4):
        gains, deltas, items, sets = template[at : at + 4]
        moved = shifted.get(deltas)
        if moved is None:
            moved = shifted[deltas] = tuple(
                [
                    _PAIRS[deltas[i], -(deltas[i + 1] << (3 * number))]
                    for i in range(0, len(deltas), 2)
                ]
            )
        placed = numbered.get(sets)
        if placed is None:
            placed = numbered[sets] = tuple([_PAIRS[colours, number] for colours in sets])
        choice = (gains, moved, items, placed)
        choices.append(_HELD.setdefault(choice, choice))
    found = tuple(choices)
    if len(CHOICES) >= 1 << 14:
        CHOICES.clear()
        CHOICE_GAINS.clear()
        _HELD.clear()
    CHOICES[key] = found
    CHOICE_GAINS[key] = template[0]
    return found


# Per number: a template's changes to the line keys shifted to its field, and its sets' held
# colours with the number (``number_choices``; a few hundred of each).
_SHIFTED: list[dict] = [{} for _ in range(13)]
_NUMBERED: list[dict] = [{} for _ in range(13)]


@bounded_cache(1 << 12)
def _number_template(counts: tuple[int, ...], avail: tuple[int, ...], singles: int) -> tuple:
    """``number_choices`` at any number: the most any choice adds to the bound, then per choice
    of sets at one number (held ``counts`` and drawable ``avail`` per colour; the ones taking
    the most faces first, as they tend to find the best layout early) four items: its packed
    bound gains, per colour whose line key it changes that colour and what it takes off the
    number's field (faces taken, plus 4 where the last copy left is drawn), flat, its set
    components (``SET_PARTS`` indexes) and its sets' held colours (``_COLOURS``).  One flat
    tuple (``_COLOURS``: out of the full collections).  (What the copies left do not change is
    read from ``_choice_shapes``.)"""
    shapes = _choice_shapes(counts, singles)
    template: list = [shapes[0]]
    for at in range(1, len(shapes), 3):
        sets, taken, gains = shapes[at : at + 3]
        here = list(avail)
        items = []
        for colours in sets:
            component, drawn_colours = set_component(colours, tuple(here))
            for c in drawn_colours:
                here[c] -= 1
            items.append(set_part(component))
        deltas = []
        for c in range(4):
            # (Faces taken, plus 4 where a set drew the last copy left; a colour whose copy a
            # set draws, one left after, keeps its line key.)
            change = taken[c] + (4 if avail[c] > 0 and here[c] <= 0 else 0)
            if change:
                deltas += (c, change)
        items = tuple(items)
        template += (gains, tuple(deltas), _HELD.setdefault(items, items), sets)
    return tuple(template)


@bounded_cache(1 << 10)
def _choice_shapes(counts: tuple[int, ...], singles: int) -> tuple:
    """The most any choice of sets at one number with these held ``counts`` adds to the bound,
    then per choice (``_sets_at``, the ones taking the most faces first) three items: its sets'
    held colours (``_COLOURS``), the faces it takes per colour and its packed bound gains (none
    of it depends on the copies left).  One flat tuple (``_COLOURS``)."""
    shapes = []
    best = [0] * len(SLOT_PRICES)
    padded = [0] * 52  # _sets_at reads counts at faces[c * 13 + number]; number 0 here
    for c in range(4):
        padded[c * 13] = counts[c]
    for choice in sorted(_sets_at(0, padded, singles), key=_taken, reverse=True):
        taken = [0, 0, 0, 0]
        for colours, _ in choice:
            for c in colours:
                taken[c] += 1
        sizes = tuple(len(colours) for colours, _ in choice)
        terms = [
            sum(SCALE * kept - price * max(3, kept) for kept in sizes) for price in SLOT_PRICES
        ]
        for k, gain in enumerate(terms):
            if gain > best[k]:
                best[k] = gain
        shapes += (tuple(_COLOURS[colours] for colours, _ in choice), tuple(taken), pack(terms))
    return (pack(best), *shapes)


def _taken(choice: list[tuple[tuple[int, ...], int]]) -> int:
    return sum(len(colours) for colours, _ in choice)


def number_gain(faces: Sequence[int], avail: Sequence[int], n: int, singles: int) -> int:
    """The most the sets at number ``n`` can add to the bound (packed), 0 where none can be
    chosen (``SetSearch.numbers``); ``singles`` as for ``number_choices``."""
    counts = (faces[n], faces[13 + n], faces[26 + n], faces[39 + n])
    if not singles and (counts[0] > 0) + (counts[1] > 0) + (counts[2] > 0) + (counts[3] > 0) < 2:
        return 0
    here = (avail[n], avail[13 + n], avail[26 + n], avail[39 + n])
    return _number_template(counts, here, singles)[0]


def take_set_keys(
    hand: HandState, sets: SetChoice
) -> tuple[list[Component], list[int], dict[int, int]]:
    """Take the sets' held faces out of the hand and draw their missing tiles: the set
    components, the colours' line keys after that, and the drawable copies left of each face
    the sets drew (the other faces keep ``hand.avail``).

    (The copies left at a set's number are read from the hand's columns, one byte for the four
    colours, less what the sets before drew there.)"""
    keys = hand._keys
    keys = list(hand.line_keys() if keys is None else keys)
    columns = hand._columns
    if columns is None:
        columns = hand.columns()
    changed: dict[int, int] = {}
    items: list[Component] = []
    for colours, number in sets:
        shift = 3 * number
        for c in colours:
            keys[c] -= 1 << shift
        at = 16 * number + 8
        here = (columns >> at) & 0xFF
        # ``set_component``, read first from its row of the colours (by the copies left).
        row = _SET_ROWS.get(colours)
        if row is None:
            row = _set_row(colours)
        found = row[here]
        if found is None:
            left = (here & 3, here >> 2 & 3, here >> 4 & 3, here >> 6)
            found = row[here] = set_component(colours, left)
        component, drawn = found
        for c in drawn:
            columns -= 1 << (at + 2 * c)
            left = (here >> (2 * c) & 3) - 1
            changed[c * 13 + number] = left
            if left <= 0:
                keys[c] -= 4 << shift
        items.append(component)
    return items, keys, changed


def _set_row(colours: tuple[int, ...]) -> list:
    """A new row of ``_SET_ROWS``."""
    if len(_SET_ROWS) >= 1 << 10:
        _SET_ROWS.clear()
    row = _SET_ROWS[colours] = [None] * 256
    return row


# ``set_component`` by the set's held colours, then by the copies left at its number (a byte,
# two bits per colour, as the hand's columns hold them: ``HandState.columns``); None where not
# read yet.  (The held colours are a few dozen tuples.)
_SET_ROWS: dict[tuple[int, ...], list] = {}


def _sets_at(
    number: int, faces: list[int], singles: int = 0
) -> list[list[tuple[tuple[int, ...], int]]]:
    """The choices of sets (0, 1 or 2 of them) at one number, each as (kept colours, number);
    a set may keep one face only in the colours of ``singles`` (``lone_colours``)."""
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


@bounded_cache(64)
def set_bound(kept: int) -> int:
    """The packed bound terms of a set of ``kept`` held faces (availability never changes them:
    a set of k held faces uses 3 or 4 slots, or k if more)."""
    return pack([max(0, SCALE * kept - price * max(3, kept)) for price in SLOT_PRICES])


@bounded_cache(4096)
def set_component(
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
    return interned(tuple(options)), tuple(drawn)
