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

from collections.abc import Iterable, Sequence

from okey.hand import check_playing_hand, okey_for
from okey.inputs import read_hand, read_rules, read_tiles
from okey.layout import (
    _MASKS,
    _PRICED,
    GUARDS,
    HIGH,
    _layout_masks,
    at_least_masks,
    bounded_cache,
    layout_kept,
    parts_table,
    priced_size,
)
from okey.rules import Rules
from okey.runs import (
    _FIELD_LOW,
    _LONE_FACES,
    LINE_PROFILES,
    drawn_as_okeys,
    line_key,
    line_or_plain,
    line_profile,
    lone_faces,
    searched_line,
)
from okey.sets import CHOICE_GAINS, CHOICES, SET_PARTS, SetChoice, choice_gain, take_set_keys
from okey.sets import _number_choices as number_choices_at
from okey.solver import NUMBERED_KINDS, faces_and_okeys
from okey.tiles import FALSE_JOKER_INDEX, Tile


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
    if type(rules) is not Rules:
        rules = read_rules(rules, Rules.classic())
    return HandState.checked(tiles, indicator, rules, seen).distance(rules)


# Per face (and 0 for the false joker, index 52): one held copy in the four colours' line keys
# (``line_key``) packed as one int, 39 bits a colour (``HandState.checked``).
_KEY_ADD = [1 << (39 * (face // 13) + 3 * (face % 13)) for face in range(52)] + [0]


# Bit 0 of every number's field of the four packed line keys.
_KEYS_LOW = sum(_KEY_ADD[:52])


_LINE_MASK = (1 << 39) - 1


# Per face (and 0 for the false joker): one held copy in a hand's columns (``HandState.columns``).
_COLUMN_ADD = [1 << (16 * (face % 13) + 2 * (face % 52 // 13)) for face in range(52)] + [0]


# Per face (and 0 for the false joker): ``_KEY_ADD`` and, above the four line keys' 156 bits,
# ``_COLUMN_ADD`` (``HandState.checked`` counts both in one sum).
_BOTH_ADD = [key | column << 156 for key, column in zip(_KEY_ADD, _COLUMN_ADD, strict=True)]


_KEYS_MASK = (1 << 156) - 1


# Per face: the shift of its copies held, and left, in the columns.
_HELD_SHIFT = [16 * (face % 13) + 2 * (face // 13) for face in range(52)]
_LEFT_SHIFT = [shift + 8 for shift in _HELD_SHIFT]


_BOTH_MASK = (1 << 364) - 1


# ``_BOTH_ADD`` plus, from bit ``_COUNTS_AT``, one byte per kind (the false joker's too): the
# copies held of each (``HandState.checked``).
_COUNTS_AT = 364
_ALL_ADD = [both | 1 << (_COUNTS_AT + 8 * kind) for kind, both in enumerate(_BOTH_ADD)]


# 125 added to every kind's byte, and bit 7 of every byte: a count of 3 or more (below 131)
# reaches bit 7.
_COUNTS_ADD = sum(125 << (8 * kind) for kind in range(FALSE_JOKER_INDEX + 1))
_COUNTS_HIGH = sum(128 << (8 * kind) for kind in range(FALSE_JOKER_INDEX + 1))


# Two copies of every face, as columns' counts.
_COLUMN_TWOS = 2 * sum(_COLUMN_ADD[:52])


# Bit 0 of every colour's count in the columns, and bit 0 of every number's column.
_COLUMN_PRESENT = sum(0x55 << (16 * n) for n in range(13))
_COLUMN_LOW = sum(1 << (16 * n) for n in range(13))


class HandState:
    """A hand as the distance search sees it: faces, okeys held, what can still be drawn."""

    __slots__ = ("faces", "okeys", "avail", "wild_avail", "_keys", "_columns")

    def __init__(self, faces: list[int], okeys: int, avail: list[int], wild_avail: int) -> None:
        self.faces = faces
        self.okeys = okeys
        self.avail = avail
        self.wild_avail = wild_avail
        self._keys: list[int] | None = None
        self._columns: int | None = None

    def __getattr__(self, name: str) -> list[int]:
        # ``faces`` and ``avail`` of a hand from ``checked``, read from its columns when first
        # asked for (the set search reads the columns and line keys only).
        columns = self._columns
        if name == "avail":
            avail = self.avail = [columns >> shift & 3 for shift in _LEFT_SHIFT]
            return avail
        if name == "faces":
            faces = self.faces = [columns >> shift & 3 for shift in _HELD_SHIFT]
            return faces
        raise AttributeError(name)

    def line_keys(self) -> list[int]:
        """The four colours' line keys (``line_key``)."""
        if self._keys is None:
            self._keys = [line_key(self.faces, self.avail, lo) for lo in (0, 13, 26, 39)]
        return self._keys

    def columns(self) -> int:
        """The hand by number, 16 bits a number (from bit 16 * number): per colour c the count
        held at bits 2c, 2c + 1 and the copies left to draw at bits 8 + 2c, 9 + 2c (the
        set search's key of a number's choices, ``SetSearch``)."""
        columns = self._columns
        if columns is None:
            columns = 0
            for face, (held, left) in enumerate(zip(self.faces, self.avail, strict=True)):
                if held or left:
                    columns += (held | left << 8) * _COLUMN_ADD[face]
            self._columns = columns
        return columns

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
        tiles = list(tiles) if type(tiles) in (list, tuple) else read_tiles(tiles, "tiles")
        if not seen:
            seen = []
        elif type(seen) in (list, tuple):
            seen = list(seen)
        else:
            seen = read_tiles(seen, "seen")
        try:
            faces = [tile.index for tile in tiles]
            at = indicator.index
            # The line keys, the columns and one byte per kind (``_ALL_ADD``) in one sum.
            held = sum(map(_ALL_ADD.__getitem__, faces))
            counts = held >> _COUNTS_AT
            if seen:
                seen_faces = [tile.index for tile in seen]
                out = sum(map(_ALL_ADD.__getitem__, seen_faces)) + _ALL_ADD[at]
                out_counts = out >> _COUNTS_AT
            usual = (
                len(tiles) in (rules.hand_size, rules.hand_size + 1)
                and len(tiles) <= rules.max_rack_tiles
                and type(indicator) is Tile
                and at != FALSE_JOKER_INDEX
                # (No kind held three times: a byte of 3 or more reaches its bit 7.)
                and not (counts + _COUNTS_ADD) & _COUNTS_HIGH
                and (
                    (counts >> (8 * at)) & 0xFF <= 1  # nothing seen: only the indicator is out
                    if not seen
                    # (No byte above 127 before the test: fewer than 100 tiles seen.)
                    else len(seen) < 100 and not (counts + out_counts + _COUNTS_ADD) & _COUNTS_HIGH
                )
            )
        except (AttributeError, TypeError, IndexError):
            usual = False
        if not usual:
            tiles, indicator, rules, seen = read_hand(tiles, indicator, rules, seen)
            check_playing_hand(tiles, indicator, rules, seen)
            return cls.of(tiles, indicator, seen)
        o = at - 12 if at % 13 == 12 else at + 1  # okey_for: the indicator is no false joker
        # The okeys are counted apart, the false jokers at the okey's face (as
        # ``faces_and_okeys`` counts them).
        okeys = (counts >> (8 * o)) & 0xFF
        jokers = counts >> (8 * FALSE_JOKER_INDEX)
        # The four line keys packed (``_KEY_ADD``) and the columns (``columns``), counted from
        # the held faces: the false jokers added at the okey's face, the okeys taken out.
        both = held & _BOTH_MASK
        if jokers != okeys:
            both += (jokers - okeys) * _BOTH_ADD[o]
        if seen:
            out_okeys = (out_counts >> (8 * o)) & 0xFF
            out_both = out & _BOTH_MASK
            out_both += ((out_counts >> (8 * FALSE_JOKER_INDEX)) - out_okeys) * _BOTH_ADD[o]
        else:
            # Only the indicator is out.
            out_okeys = 0
            out_both = _BOTH_ADD[at]
        # (Every face is held and out at most twice in all, so no field carries.)
        state = cls.__new__(cls)
        # (``faces`` and ``avail`` are read from the columns where asked for: ``__getattr__``.)
        state.okeys = okeys
        state.wild_avail = max(0, 2 - okeys - out_okeys)
        keys = both & _KEYS_MASK
        # A line key's field holds the count held, plus 4 where fewer than two are held or out.
        gone = keys + (out_both & _KEYS_MASK)
        keys += ((~gone >> 1) & _KEYS_LOW) << 2
        state._keys = [
            keys & _LINE_MASK,
            (keys >> 39) & _LINE_MASK,
            (keys >> 78) & _LINE_MASK,
            keys >> 117,
        ]
        columns = both >> 156
        state._columns = columns + ((_COLUMN_TWOS - columns - (out_both >> 156)) << 8)
        return state

    def less(self, face: int | None) -> HandState:
        """This hand less one held tile of ``face`` (None: an okey), that tile seen then (the
        copies left to draw stay the same, and the okeys left to draw)."""
        if face is None:
            less = HandState(self.faces, self.okeys - 1, self.avail, self.wild_avail)
            less._keys = self._keys
            less._columns = self._columns
            return less
        faces = list(self.faces)
        faces[face] -= 1
        less = HandState(faces, self.okeys, self.avail, self.wild_avail)
        if self._keys is not None:
            keys = list(self._keys)
            keys[face // 13] -= 1 << (3 * (face % 13))
            less._keys = keys
        if self._columns is not None:
            less._columns = self._columns - _COLUMN_ADD[face]
        return less

    def with_face(self, face: int) -> HandState:
        """This hand plus one drawn tile of ``face`` (that copy leaves the unseen pool)."""
        faces = list(self.faces)
        faces[face] += 1
        avail = list(self.avail)
        left = avail[face]
        if left:
            avail[face] = left - 1
        # (``__init__``'s fields set here, with the line keys and columns where known.)
        drawn = object.__new__(HandState)
        drawn.faces = faces
        drawn.okeys = self.okeys
        drawn.avail = avail
        drawn.wild_avail = self.wild_avail
        keys = self._keys
        if keys is not None:
            keys = list(keys)
            # (Its last copy drawn: none left to draw.)
            keys[face // 13] += (-3 if left == 1 else 1) << (3 * (face % 13))
        drawn._keys = keys
        columns = self._columns
        if columns is not None:
            # (One more held, one fewer left where any was.)
            columns += (-255 if left else 1) * _COLUMN_ADD[face]
        drawn._columns = columns
        return drawn

    def distance(self, rules: Rules, at_most: int | None = None) -> int:
        """The distance to win; with ``at_most``, any answer above it is reported as above it.

        (The search stops as soon as it proves the distance is at most ``at_most``.)
        """
        size = rules.hand_size
        best = size
        if rules.seven_pairs and size % 2 == 0:
            # At least this many pairs lack a tile (every pair not held whole or with a held
            # okey: ``kept_in_pairs`` keeps at most pairs + full pairs + okeys).
            # (The faces held twice, read from the line keys: bit 1 of their fields.)
            red, yellow, blue, black = self.line_keys()
            full = (
                ((red >> 1) & _FIELD_LOW).bit_count()
                + ((yellow >> 1) & _FIELD_LOW).bit_count()
                + ((blue >> 1) & _FIELD_LOW).bit_count()
                + ((black >> 1) & _FIELD_LOW).bit_count()
            )
            floor = size - min(size, size // 2 + full + self.okeys)
            if at_most is None:
                # (``max_kept_in_melds``.)
                melds = size - SetSearch(self, rules, size, False, True).run()[0] - self.okeys
                if melds <= floor:
                    return max(0, melds)
                return max(0, min(melds, size - kept_in_pairs(self, rules)))
            best = size - kept_in_pairs(self, rules)
        if at_most is not None and best <= at_most:
            return max(0, best)
        enough = None if at_most is None else size - self.okeys - at_most
        best = min(best, size - max_kept_in_melds(self, rules, enough) - self.okeys)
        return max(0, best)


def kept_in_pairs(hand: HandState, rules: Rules) -> int:
    """Most tiles (okeys included) kept by a hand of ``hand_size / 2`` pairs."""
    return kept_in_pairs_of(hand, pair_counts_of_keys(hand.line_keys()), rules)


def pair_counts_of_keys(keys: Sequence[int]) -> tuple[int, int, int]:
    """``pair_counts`` read from the four line keys (``line_key``): a field holds its count
    held (0 to 2) plus 4 where a copy is left to draw."""
    full = drawable = singles = 0
    for key in keys:
        full += ((key >> 1) & _FIELD_LOW).bit_count()
        one = key & ~(key >> 1) & _FIELD_LOW
        singles += one.bit_count()
        drawable += (one & (key >> 2)).bit_count()
    return full, drawable, singles - drawable


def kept_in_pairs_of(hand: HandState, counts: tuple[int, int, int], rules: Rules) -> int:
    """``kept_in_pairs`` of a hand with these ``pair_counts`` (and the hand's okeys)."""
    full, drawable, dead = counts
    pairs_needed = rules.hand_size // 2
    return pairs_kept(
        full, drawable, dead, hand.okeys, hand.wild_avail, pairs_needed, rules.okey_pair_with_okey
    )


def pair_counts(faces: Sequence[int], avail: Sequence[int]) -> tuple[int, int, int]:
    """What the pairs form of a hand depends on: its full pairs (faces held twice), its singles
    with a copy left to draw, and its singles with none."""
    singles = faces.count(1)
    full = len(faces) - faces.count(0) - singles
    drawable = 0
    if singles:
        for n, a in zip(faces, avail, strict=True):
            if n == 1 and a > 0:
                drawable += 1
    return full, drawable, singles - drawable


def pair_counts_drawn(
    hand: HandState, counts: tuple[int, int, int], face: int
) -> tuple[int, int, int]:
    """The ``pair_counts`` (``counts``) of a hand once a copy of ``face`` is drawn (it has one
    left to draw): a single becomes a full pair, an absent face a single, drawable if another
    copy is left."""
    full, drawable, dead = counts
    held = hand.faces[face]
    if held == 1:
        return full + 1, drawable - 1, dead
    if held == 0:
        if hand.avail[face] > 1:
            return full, drawable + 1, dead
        return full, drawable, dead + 1
    return counts


@bounded_cache(1 << 14)
def pairs_kept(
    full: int,
    drawable_singles: int,
    dead_singles: int,
    okeys: int,
    wild_avail: int,
    pairs_needed: int,
    okey_pair_with_okey: bool,
) -> int:
    """``kept_in_pairs`` from the hand's ``pair_counts``, its okeys held and still to draw."""
    best = 0
    for used_full in range(min(full, pairs_needed) + 1):
        left = pairs_needed - used_full
        # A full pair not kept whole gives two singles an okey can pair with (no copy left).
        dead = dead_singles + 2 * (full - used_full)
        with_okey = min(okeys, left, dead + drawable_singles)
        from_dead = min(with_okey, dead)
        drawable_left = drawable_singles - (with_okey - from_dead)
        left -= with_okey
        okeys_left = okeys - with_okey
        okey_pairs = min(okeys_left // 2, left) if okey_pair_with_okey else 0
        left -= okey_pairs
        okeys_left -= 2 * okey_pairs
        okey_draws = min(okeys_left, left)
        left -= okey_draws
        single_draws = min(drawable_left, left)
        left -= single_draws
        # A single with no copy left pairs with an okey still to be drawn.
        wild_draws = min(wild_avail, dead - from_dead, left)
        kept = 2 * (used_full + with_okey + okey_pairs) + okey_draws + single_draws + wild_draws
        best = max(best, kept)
    return best


def max_kept_in_melds(hand: HandState, rules: Rules, enough: int | None = None) -> int:
    """Most faces kept by a winning hand laid out in runs and sets (okeys not counted).

    With ``enough``, the search may stop as soon as it keeps that many (the answer is then at
    least ``enough``, not necessarily the most).
    """
    size = rules.hand_size
    if enough is None:
        return SetSearch(hand, rules, size, False, widest_first=True).run()[0]
    return SetSearch(hand, rules, min(enough, size), False).run()[0]


def optimal_set_choices(
    hand: HandState, rules: Rules, floor: int = 0
) -> tuple[int, list[SetChoice]]:
    """The most faces a meld layout keeps, and every choice of sets that keeps that many.

    ``floor``: a number of faces some layout is known to keep (the search skips whatever keeps
    fewer from the start); should none keep that many, the hand is searched again without."""
    if floor:
        search = SetSearch(hand, rules, rules.hand_size + 1, True)
        search.best = floor
        found = search.run()
        if found[1]:
            return found
    return SetSearch(hand, rules, rules.hand_size + 1, True).run()


def _most_kept(table: int, kept_masks: Sequence[int], size: int) -> int:
    """The most tiles a layout keeps, from a hand's parts table (``parts_table``) and the masks
    of the layouts keeping ``size``, ``size - 1``, ... tiles (``_layout_masks``)."""
    kept = size
    for mask in kept_masks:
        if table & mask:
            return kept
        kept -= 1
    return 0


class SetSearch:
    """Depth-first search over the set choices, number by number, with a bound that prunes.

    At each step the bound is: the sets chosen so far, plus every colour's runs as the faces now
    stand (taking more faces into sets never lets a colour keep more), plus the best the sets at
    the numbers still to decide could add, priced per slot (see ``kept_bound``).  The bound's
    terms, one per slot price, are added as packed ints (``Component.packed_bound``); each
    colour's line is an int key (``line_key``) that a choice of sets changes by a fixed amount.
    """

    __slots__ = (
        "size",
        "wrap",
        "budget",
        "enough",
        "ties",
        "numbers",
        "choices",
        "leaf",
        "rest",
        "keys",
        "tail",
        "profiles",
        "items",
        "sets",
        "best",
        "optimal",
        "plain",
        "guard",
        "masks",
        "standing",
    )

    def __init__(
        self, hand: HandState, rules: Rules, enough: int, ties: bool, widest_first: bool = False
    ) -> None:
        """``widest_first``: search the numbers with more than two choices first (the
        numbers' order changes no kept count, but which optimal layout is found first, or
        first keeps ``enough``: only where nothing but the most kept is wanted).  The choices
        of the widest number are then cut once, not under each choice of the narrower ones
        (about a quarter fewer choices tried)."""
        self.size = size = rules.hand_size
        self.wrap = wrap = rules.wrap_13_1
        self.budget = hand.okeys + hand.wild_avail
        self.enough = enough
        self.ties = ties
        keys = hand._keys
        if keys is None:
            keys = hand.line_keys()
        columns = hand._columns
        if columns is None:
            columns = hand.columns()
        # ``lone_colours``: the colours' ``lone_faces``, their cache read here first; none
        # where every number has a copy left (every run of three is then drawable).
        lone_of = _LONE_FACES.get
        wrap_bit = wrap << 39
        key0, key1, key2, key3 = keys
        lone0 = lone1 = lone2 = lone3 = 0
        if (~key0 >> 2) & _FIELD_LOW:
            lone0 = lone_of(key0 | wrap_bit)
            if lone0 is None:
                lone0 = lone_faces(key0, wrap)
        if (~key1 >> 2) & _FIELD_LOW:
            lone1 = lone_of(key1 | wrap_bit)
            if lone1 is None:
                lone1 = lone_faces(key1, wrap)
        if (~key2 >> 2) & _FIELD_LOW:
            lone2 = lone_of(key2 | wrap_bit)
            if lone2 is None:
                lone2 = lone_faces(key2, wrap)
        if (~key3 >> 2) & _FIELD_LOW:
            lone3 = lone_of(key3 | wrap_bit)
            if lone3 is None:
                lone3 = lone_faces(key3, wrap)
        any_lone = lone0 | lone1 | lone2 | lone3
        # The numbers searched: those with two or more colours held (bit 0 of their columns),
        # or a face that may stand alone in a set.
        present = (columns | columns >> 1) & _COLUMN_PRESENT
        pairs = (present & (present >> 2)) | (present & (present >> 4)) | (present & (present >> 6))
        chosen = (pairs | pairs >> 2 | pairs >> 4) & _COLUMN_LOW
        for n in range(13) if any_lone else ():
            if any_lone >> n & 1:
                chosen |= 1 << (16 * n)
        # Per number: its choices of sets, what each adds to the bound, and what each takes out
        # of the hand (a set's missing tiles are drawn at its own number only, so the effect of
        # a choice never depends on the choices at other numbers, and the change it makes to
        # each colour's line key is fixed).
        numbers: list[int] = []
        choices: list[tuple] = []
        gains: list[int] = []
        # (With ``widest_first``, the numbers with more than two choices, put first below.)
        wide_numbers: list[int] = []
        wide_choices: list[tuple] = []
        wide_gains: list[int] = []
        known, known_gains = CHOICES, CHOICE_GAINS
        while chosen:
            low = chosen & -chosen
            chosen ^= low
            at = low.bit_length() - 1
            n = at >> 4
            # ``number_choices``, read from its table by its key (``sets.choices_key``): the
            # number's column (``HandState.columns``), its lone colours and the number.
            key = (columns >> at) & 0xFFFF | n << 20
            if any_lone:
                key |= (
                    (lone0 >> n & 1)
                    | (lone1 >> n & 1) << 1
                    | (lone2 >> n & 1) << 2
                    | (lone3 >> n & 1) << 3
                ) << 16
            found = known.get(key)
            if found is None:
                found = number_choices_at(key)
            gain = known_gains.get(key)
            if gain is None:
                gain = choice_gain(key)
            if widest_first and len(found) > 2:
                wide_numbers.append(n)
                wide_choices.append(found)
                wide_gains.append(gain)
                continue
            numbers.append(n)
            choices.append(found)
            gains.append(gain)
        if wide_numbers:
            numbers = wide_numbers + numbers
            choices = wide_choices + choices
            gains = wide_gains + gains
        self.numbers = numbers
        self.choices = choices
        self.leaf = len(numbers)
        # rest[i]: price * size plus the most the sets at numbers i.. can add (packed).
        total = _PRICED.get(size) or priced_size(size)
        rest = [total]
        for gain in reversed(gains):
            total += gain
            rest.append(total)
        rest.reverse()
        self.rest = rest
        self.keys = [key0, key1, key2, key3]
        # ``line_profile``, its cache read here first; a line not searched yet stands as its
        # plain line where that is at hand (``standing``, below; searched only where a layout
        # needs it: ``run``, ``_leaf``).
        self.tail = tail = wrap_bit | (size << 40)
        get = LINE_PROFILES.get
        profiles = [get(key0 | tail), get(key1 | tail), get(key2 | tail), get(key3 | tail)]
        standing = 0
        for c in range(4):
            if profiles[c] is None:
                profiles[c], made = line_or_plain(keys[c], wrap, size)
                if not made:
                    standing |= 1 << c
        self.profiles = profiles
        self.items: list[int] = []  # (``SET_PARTS`` indexes)
        self.sets: list[tuple[tuple[int, ...], int]] = []
        self.best = 0
        self.optimal: list[SetChoice] = []
        # Whether the layout with no sets is a choice (``draws._last_copy_raises`` drops it).
        self.plain = True
        # (``_layout_masks`` of the size and budget, read where first needed.)
        self.masks: tuple[int, tuple[int, ...]] | None = None
        # The colours (bit c) whose profile in ``profiles`` stands for the line's as its plain
        # line's (``_visit``), not searched yet.
        self.standing = standing

    def run(self) -> tuple[int, list[SetChoice]]:
        red, yellow, blue, black = self.profiles
        runs = red.packed_bound + yellow.packed_bound + blue.packed_bound + black.packed_bound
        if self.leaf and self.plain:
            # The layout with no sets first: the search then looks for as good (ties) or
            # better ones only (a tie's list is the same: every layout keeping the most is
            # still visited, in the same order).
            # (``layout_kept``, its masks read once.)
            self.masks = masks = _MASKS.get((self.size, self.budget)) or _layout_masks(
                self.size, self.budget
            )
            valid, kept_masks = masks
            kept = _most_kept(parts_table(self.profiles, self.size, valid), kept_masks, self.size)
            if kept > self.best and self.standing and kept > self._floor_kept(valid, kept_masks):
                # (Plain lines keep at least as many, and as few as their choices drawing
                # only missing tiles: where those differ, the lines are searched, ``_leaf``.)
                profiles = self.profiles
                for c in range(4):
                    if self.standing >> c & 1:
                        profiles[c] = line_profile(self.keys[c], self.wrap, self.size)
                self.standing = 0
                kept = _most_kept(parts_table(profiles, self.size, valid), kept_masks, self.size)
            if kept > self.best:
                self.best = kept
                if not self.ties:
                    self.optimal = [()]
                    if kept >= self.enough:
                        return self.best, self.optimal
        self._set_guard()
        if (self.rest[0] + runs + self.guard) & HIGH != HIGH:
            return self.best, self.optimal
        if self.leaf:
            self._visit(0, runs)
        else:
            self._leaf()
        return self.best, self.optimal

    def _floor_kept(self, valid: int, kept_masks: Sequence[int], items: tuple = ()) -> int:
        """``layout_kept`` of the colours' runs (and the set components ``items``) with each
        line standing as its plain line read as ``runs.drawn_as_okeys`` of it: no more than
        the lines keep.  (Where it is what the plain lines keep, so is the lines'.)"""
        profiles = [
            drawn_as_okeys(profile) if self.standing >> c & 1 else profile
            for c, profile in enumerate(self.profiles)
        ]
        return _most_kept(parts_table((*profiles, *items), self.size, valid), kept_masks, self.size)

    def _set_guard(self) -> None:
        """``guard``: a packed bound plus it has bit 15 set in all five fields (``HIGH``) exactly
        when the bound, ``min(size, smallest field // SCALE)``, is worth visiting: at least the
        best so far, or one more once a layout is found and ties are not wanted.  (Each field
        is below 2^15 and gets 2^15 - need * SCALE added, so it carries into its bit 15 exactly
        when it is at least need * SCALE, and never into the next field.)"""
        need = self.best + (0 if self.ties or not self.optimal else 1)
        self.guard = 0 if need > self.size else GUARDS[need]

    def _leaf(self) -> bool:
        """Lay out the sets chosen at every number; True once the answer is settled."""
        # Only a layout keeping ``need`` or more changes anything: as many as the best where
        # every optimal layout is wanted (or none is found yet), else more.
        size, best = self.size, self.best
        need = best if self.ties or not self.optimal else best + 1
        if need <= size:
            masks = self.masks
            if masks is None:  # (no layout with no sets first: not read yet)
                masks = self.masks = _layout_masks(size, self.budget)
            valid = masks[0]
            at_least = at_least_masks(size, self.budget)
            profiles = self.profiles
            items = tuple(map(SET_PARTS.__getitem__, self.items))
            if self.standing:
                # A colour's line not searched yet stands as its plain line (``_visit``):
                # where the plain lines keep fewer than ``need`` (they keep at least as many
                # as the lines, ``runs.line_or_plain``), so do the lines; where as many as
                # with their choices drawing only missing tiles (``runs.drawn_as_okeys``: no
                # more than the lines keep), the lines keep that many; else they are searched.
                table = parts_table((*profiles, *items), size, valid)
                if not table & at_least[need]:
                    return not self.ties and self.best >= self.enough
                kept = _most_kept(table, masks[1], size)
                if self._floor_kept(valid, masks[1], items) < kept:
                    for c in range(4):
                        if self.standing >> c & 1:
                            profiles[c] = line_profile(self.keys[c], self.wrap, size)
                    self.standing = 0
                    table = parts_table((*profiles, *items), size, valid)
            else:
                # (``layout_kept``: the colours' runs first, whose choices are the most, then
                # the sets; the order changes no total.)
                table = parts_table((*profiles, *items), size, valid)
            if table & at_least[need]:
                kept = need
                while kept < size and table & at_least[kept + 1]:
                    kept += 1
                if kept > best:
                    self.best, self.optimal = kept, [tuple(self.sets)]
                    self._set_guard()
                else:
                    self.optimal.append(tuple(self.sets))
                    if len(self.optimal) == 1:
                        self._set_guard()
        return not self.ties and self.best >= self.enough

    def _visit(self, i: int, acc: int) -> bool:
        """Search from number ``i`` (before the leaf) on, its bound (``acc``: the packed bound
        terms of the sets chosen so far and the colours' runs) reaching the guard; True once
        the answer is settled (stop everything)."""
        after = self.rest[i + 1]
        last = i + 1 == self.leaf
        keys, profiles, items, sets = self.keys, self.profiles, self.items, self.sets
        get, tail = LINE_PROFILES.get, self.tail
        # (The guard changes only where a layout is found, below a child.)
        bound = after + self.guard
        for gains, deltas, choice_items, choice_sets in self.choices[i]:
            child = acc + gains
            # Taking faces into sets never raises a colour's runs bound, so the runs as they
            # stand now already bound the child: most children are cut here, before the
            # (costlier) profiles of their colours are looked up.
            if (bound + child) & HIGH != HIGH:
                continue
            if deltas:
                old_keys = keys[:]
                old_profiles = profiles[:]
                old_standing = self.standing
                for colour, delta in deltas:
                    key = keys[colour] = keys[colour] + delta
                    # ``line_profile``, its cache read here first; one not made yet stands as
                    # its plain line where that is at hand (the same bound terms,
                    # ``runs.line_bound``), made at a leaf only where needed (``_leaf``).
                    new = get(key | tail)
                    if new is None:
                        new, made = line_or_plain(key, self.wrap, self.size)
                        if not made:
                            self.standing |= 1 << colour
                        else:
                            self.standing &= ~(1 << colour)
                    else:
                        self.standing &= ~(1 << colour)
                    child += new.packed_bound - old_profiles[colour].packed_bound
                    profiles[colour] = new
                if (bound + child) & HIGH != HIGH:
                    keys[:] = old_keys
                    profiles[:] = old_profiles
                    self.standing = old_standing
                    continue
            if choice_items:
                items += choice_items
                sets += choice_sets
                done = self._leaf() if last else self._visit(i + 1, child)
                del items[-len(choice_items) :]
                del sets[-len(choice_items) :]
            else:
                done = self._leaf() if last else self._visit(i + 1, child)
            if deltas:
                keys[:] = old_keys
                profiles[:] = old_profiles
                self.standing = old_standing
            if done:
                return True
            bound = after + self.guard
        return False


def kept_with_sets(
    hand: HandState, rules: Rules, sets: SetChoice, at_least: int | None = None
) -> int:
    """Most faces kept by a meld layout with exactly these sets (-1 if the hand lacks a face).

    With ``at_least``, a layout that cannot keep that many may be reported as -1 straight from
    the bound of ``kept_bound`` (its knapsack is skipped).
    """
    need = _NEEDS.get(sets)
    if need is None:
        need = _needs(sets)
    valid, ones, twos, both, rare = need
    if not valid:
        return -1
    columns = hand._columns
    if columns is None:
        columns = hand.columns()
    # (Each mask is at most its sum, so the sum is reached only where both are: ``_needs``.)
    low = columns >> 1
    if ((columns | low) & ones) + (low & twos) != both:
        return -1
    for face, n in rare:
        if n > hand.faces[face]:
            return -1
    size = rules.hand_size
    components, keys, _ = take_set_keys(hand, sets)
    # (``kept_bound`` of the components, read below with the set search's guard.)
    bound = _PRICED.get(size) or priced_size(size)
    for component in components:
        bound += component.packed_bound
    wrap = rules.wrap_13_1
    cache, tail = LINE_PROFILES, (wrap << 39) | (size << 40)
    budget = hand.okeys + hand.wild_avail
    unmade = []  # (with ``at_least``: lines not made yet, read as their plain lines first)
    for key in keys:
        # ``line_profile``, its cache read here first.
        profile = cache.get(key | tail)
        if profile is None:
            if at_least is None:
                profile = line_profile(key, wrap, size)
            else:
                profile, made = line_or_plain(key, wrap, size)
                if not made:
                    unmade.append((len(components), key))
        components.append(profile)
        bound += profile.packed_bound
    if at_least is not None and (bound + GUARDS[at_least]) & HIGH != HIGH:
        # (``kept_bound(components, size) < at_least``.)
        return -1
    if unmade:
        # A plain line keeps at least as many as its line (``runs.plain_profile``): where
        # they fall short of ``at_least``, the lines themselves do; where its choices drawing
        # only missing tiles keep as many (``runs.drawn_as_okeys``: no more than the line),
        # the lines keep that many.
        most = layout_kept(components, size, budget)
        if most < at_least:
            return -1
        floors = components[:]
        for at, _ in unmade:
            floors[at] = drawn_as_okeys(floors[at])
        if layout_kept(floors, size, budget) == most:
            return most
        for at, key in unmade:
            components[at] = searched_line(key, wrap, size)
    return layout_kept(components, size, budget)


def _needs(sets: SetChoice) -> tuple[bool, int, int, int, tuple[tuple[int, int], ...]]:
    """Whether no set holds a colour twice, and what the sets hold as bits of the hand's
    columns (``HandState.columns``: a face's count held in two bits): the low bit of the count
    of each face they hold (held once or more where either bit of it is set), the same of each
    face they hold twice (held twice where its high bit is set), the two masks' sum, and the
    faces they hold three times or more, with those counts (``kept_with_sets``; cached in
    ``_NEEDS``)."""
    valid = True
    ones = twos = 0
    more: dict[int, int] = {}  # the faces held three times or more
    for colours, number in sets:
        seen = 0
        for c in colours:
            if seen >> c & 1:
                valid = False
            seen |= 1 << c
            face = c * 13 + number
            bit = 1 << _HELD_SHIFT[face]
            if twos & bit:
                more[face] = more.get(face, 2) + 1
            elif ones & bit:
                twos |= bit
            else:
                ones |= bit
    rare = tuple(more.items())
    found = (valid, ones, twos, ones + twos, rare)
    if len(_NEEDS) >= 1 << 15:
        _NEEDS.clear()
    _NEEDS[sets] = found
    return found


# ``_needs`` by choice of sets.
_NEEDS: dict[SetChoice, tuple[bool, int, int, int, tuple[tuple[int, int], ...]]] = {}


def unseen_counts(tiles: Iterable[Tile], indicator: Tile, seen: Iterable[Tile] = ()) -> list[int]:
    """Copies of each of the 53 tile kinds not in the hand, not the indicator, not seen."""
    left = [2] * (FALSE_JOKER_INDEX + 1)
    for tile in [*tiles, indicator, *seen]:
        left[tile.index] = max(0, left[tile.index] - 1)
    return left
