"""Improving draws: which drawable tiles bring a hand closer to a win (the waits of a hand one
tile away), found from the optimal layouts of the hand instead of solving it again per tile.
"""

from __future__ import annotations

from okey.distance import (
    HandState,
    SetSearch,
    kept_in_pairs_of,
    kept_with_sets,
    optimal_set_choices,
    pair_counts,
    pair_counts_drawn,
)
from okey.layout import (
    _BEST_WITH,
    _SERIALS,
    GUARDS,
    HIGH,
    SERIAL_BITS,
    TOTALS_SERIAL,
    Component,
    Totals,
    best_with,
    kept_adding,
    knapsack_table,
    layout_kept,
    priced_size,
    totals_of,
)
from okey.rules import Rules
from okey.runs import (
    _FIELD_LOW,
    LINE_PROFILES,
    NEAR,
    drawn_as_okeys,
    line_bound,
    line_or_plain,
    line_profile,
    lone_faces,
    searched_line,
)
from okey.sets import (
    CHOICES,
    SetChoice,
    _number_choices,
    choice_gain,
    lone_colours,
    number_gain,
    set_bound,
    set_component,
    take_set_keys,
)
from okey.solver import NUMBERED_KINDS


def improving_draws(hand: HandState, rules: Rules) -> tuple[int, set[int]]:
    """The distance of a hand and the drawable faces (0..51) whose draw lowers it (an okey always
    does while the distance is above 0).

    Rather than solving the hand again for every face, this starts from the optimal meld layouts
    of the hand: a drawn face lowers the meld distance only if some optimal layout can keep it, in
    its colour's runs, in one of its sets, or in a new set with one held face of its number (any
    layout keeping it one more time came from an optimal one in one of these ways; but for the
    last copy of a face that a set at its number may draw, ``_last_copy_raises``).
    """
    return improving_draws_from(hand, rules, optimal_set_choices(hand, rules))


def improving_draws_from(
    hand: HandState,
    rules: Rules,
    solved: tuple[int, list[SetChoice]],
    never: set[int] | frozenset[int] = frozenset(),
    shared: tuple[RootBound, int | None] | None = None,
    hints: dict[int, SetChoice] | None = None,
    witnesses: Witnesses | None = None,
) -> tuple[int, set[int]]:
    """``improving_draws`` from the hand's ``optimal_set_choices`` (``solved``).

    ``never`` are faces known not to let the meld layout keep one more: their meld check is
    skipped.  (``advise`` knows some: for a hand that is a 15-tile hand T less one tile (no
    okey) and keeps as many faces as T, the faces that do not let T keep one more, as the hand
    plus such a face holds less than T plus it.)
    A face whose bound (``RootBound``) already falls short is not checked any further.
    ``shared``: the root bound of a hand this one is less one tile of, and that tile's face
    (``RootBound``).  ``hints``: per face, sets that may well keep one more with it
    (``meld_raising_faces`` of a hand this one is less one tile of): tried first, checked with
    that hand's raising layouts (``witnesses``) in a knapsack step or two.
    """
    hints = hints or {}
    size = rules.hand_size
    pairs_on = rules.seven_pairs and size % 2 == 0
    kept_melds, optimal = solved
    melds = size - kept_melds - hand.okeys
    counts = pair_counts(hand.faces, hand.avail) if pairs_on else (0, 0, 0)
    pairs = size - kept_in_pairs_of(hand, counts, rules) if pairs_on else size
    distance = max(0, min(melds, pairs))
    lacking = None if shared is None else shared[1]
    found: set[int] = set()
    if distance == 0:
        return 0, found
    if melds != distance:
        layouts = []
    elif witnesses is not None and lacking is not None and kept_melds == witnesses.kept:
        # Optimal choices of the whole hand that keep as many without the discard: its layouts
        # less that tile.
        by_sets = witnesses.by_sets
        layouts = [by_sets[sets].less(hand, lacking) for sets in optimal]
    elif witnesses is not None and lacking is not None and witnesses.hand is not None:
        # The whole hand's layouts of these sets (made once for all its discards) less that
        # tile, where the sets leave it in its colour's runs.
        layouts = [witnesses.layout_less(sets, hand, lacking, rules) for sets in optimal]
    else:
        layouts = [_Layout(hand, rules, sets) for sets in optimal]
    root = RootBound(hand, rules, shared) if layouts else None
    pairs_count = pairs == distance
    target = kept_melds + 1
    checked: list[int] = []  # faces whose meld layouts are to be checked
    if root is not None:
        root_deltas, root_total = root.deltas, root.total + GUARDS[target]
        # ``root.delta``, inlined: the whole hand's change where it holds (``RootBound``),
        # per face 0 (computed), 1 (the whole hand's) or 2 (the whole hand's where a copy is
        # left after the draw).
        whole_root = None if shared is None else shared[0]
        if whole_root is not None:
            whole_deltas = whole_root.deltas
            sharing = _ALL_SHARED if lacking is None else _SHARED[rules.wrap_13_1][lacking]
    hand_avail = hand.avail
    for face in range(NUMBERED_KINDS):
        if not hand_avail[face]:
            continue  # no copy left to draw
        if not pairs_count and (not layouts or face in never):
            continue  # nothing to check for this face
        if (
            pairs_count
            and size - kept_in_pairs_of(hand, pair_counts_drawn(hand, counts, face), rules)
            < distance
        ):
            found.add(face)
        elif layouts and face not in never:
            if face in hints and (
                witnesses.lets_keep(hand, lacking, face, hints[face], target, rules)
                if witnesses is not None
                else kept_with_sets(hand.with_face(face), rules, hints[face], target) >= target
            ):
                found.add(face)
            else:
                # ``root.cuts(face, target)``, ``root.delta`` inlined (its cache is empty
                # until here: each face comes once).
                if whole_root is not None and (
                    sharing[face] == 1 or (sharing[face] and hand_avail[face] > 1)
                ):
                    delta = whole_deltas.get(face)
                    if delta is None:
                        delta = whole_root.delta(face)
                else:
                    delta = root._delta(face)
                root_deltas[face] = delta
                if (root_total + delta) & HIGH == HIGH:
                    checked.append(face)
    if checked:
        found.update(_melds_improving(hand, checked, layouts, target, rules, root))
    if melds > distance:
        # The pairs are closer, and a draw usually raises the melds by one at most; not the
        # draw of a face's last copy that a set at its number took (``_last_copy_raises``).
        need = size - hand.okeys - distance + 1
        faces = hand.faces
        for face in range(NUMBERED_KINDS):
            if (
                hand.avail[face] == 1
                and face not in found
                and face not in never
                and _set_may_take(faces, face)
                and _last_copy_raises(hand.with_face(face), face, need, rules) is not None
            ):
                found.add(face)
    return distance, found


def hand_layouts(hand: HandState, rules: Rules, solved: tuple[int, list[SetChoice]]) -> list:
    """The meld layouts of a hand's ``optimal_set_choices`` (``solved``), for
    ``sets_kept_without`` and ``meld_raising_faces`` to share."""
    return [_Layout(hand, rules, sets) for sets in solved[1]]


def _runs_keep(totals: Totals, key: int, wrap: bool, size: int, target: int) -> bool:
    """Whether a knapsack (``totals``) plus the runs of one colour's line (``key``) keeps
    ``target`` faces: ``best_with`` with its ``line_profile``.  Where the line is not made
    yet, its plain line's profile is read first where at hand (``runs.plain_profile``: it
    keeps at least as many), the line itself searched only where that reaches ``target``."""
    profile = LINE_PROFILES.get(key | (wrap << 39) | (size << 40))
    if profile is None:
        profile, made = line_or_plain(key, wrap, size)
        if not made:
            if best_with(totals, profile.packed, profile.serial) < target:
                return False
            # (The plain line's choices drawing only tiles with no copy left: no more than
            # the line's, ``runs.drawn_as_okeys``.)
            floor = drawn_as_okeys(profile)
            if best_with(totals, floor.packed, floor.serial) >= target:
                return True
            profile = searched_line(key, wrap, size)
    return best_with(totals, profile.packed, profile.serial) >= target


def sets_kept_without(layouts: list, face: int, kept: int) -> list[SetChoice]:
    """Of a hand's optimal layouts (``hand_layouts``, keeping ``kept`` faces), the sets of
    those that keep as many once a held tile of ``face`` (no okey) is discarded, a seen tile
    (the same copies left to draw): its colour's runs, less that tile, in one knapsack step
    with the rest (a layout whose sets hold every copy of it does not)."""
    colour, number = divmod(face, 13)
    shift = 3 * number
    guard = GUARDS[kept]
    found = []
    for layout in layouts:
        key = layout.keys[colour]
        if not (key >> shift) & 3:
            continue
        key -= 1 << shift
        # ``line_profile``, its cache read here first (where it is not made yet, its plain
        # line's where at hand: the same bound terms, ``runs.line_bound``, and a knapsack
        # keeping at least as many, ``_runs_keep``).
        wrap, size = layout.wrap, layout.size
        profile = LINE_PROFILES.get(key | (wrap << 39) | (size << 40))
        if profile is None:
            profile = line_or_plain(key, wrap, size)[0]
        if (layout.bases[colour] + profile.packed_bound + guard) & HIGH == HIGH and _runs_keep(
            layout.without(colour), key, wrap, size, kept
        ):
            found.append(layout.sets)
    return found


def meld_raising_faces(
    hand: HandState,
    rules: Rules,
    solved: tuple[int, list[SetChoice]],
    root: RootBound | None = None,
    layouts: list | None = None,
) -> dict[int, SetChoice]:
    """The drawable faces whose draw lets the hand's meld layout keep one more face than its
    ``optimal_set_choices`` (``solved``) do (the meld checks of ``improving_draws_from``, for
    any hand size: ``advise`` asks it of the whole 15-tile hand, ``root`` its ``RootBound``,
    ``layouts`` its ``hand_layouts``), each with the sets of a layout that does."""
    kept, optimal = solved
    if kept >= rules.hand_size:
        return {}
    if layouts is None:
        layouts = hand_layouts(hand, rules, solved)
    if root is None:
        root = RootBound(hand, rules)
    checked = [
        face for face in range(NUMBERED_KINDS) if hand.avail[face] and not root.cuts(face, kept + 1)
    ]
    return _melds_improving(hand, checked, layouts, kept + 1, rules, root)


class Witnesses:
    """The layouts of a hand (``hand_layouts``) that its raising faces (``meld_raising_faces``)
    were found in, so that such a face in such a layout with a discard of the hand left out
    is checked in a knapsack step or two: the layout's knapsack without the discard's colour,
    with the face in its colour's runs, kept per face and colour."""

    def __init__(self, layouts: list[_Layout], kept: int, hand: HandState | None = None) -> None:
        """``layouts``: the hand's optimal ones, keeping ``kept`` faces (``hand``: the hand,
        for ``layout_less``)."""
        self.kept = kept
        self.by_sets = {layout.sets: layout for layout in layouts}
        self.tables: dict[tuple[int, int], tuple[int, int | None, int]] = {}
        self.hand = hand
        self.others: dict[SetChoice, _Layout] = {}
        self.drawn: dict[tuple[int, SetChoice], _Layout] = {}
        # Per face, sets with which the hand plus that face keeps ``kept + 1`` faces (its
        # ``meld_raising_faces``, once ``advise`` has them): ``lets_keep``'s lower bound.
        self.raising: dict[int, SetChoice] = {}
        # The raising faces whose layout keeps ``kept + 1`` with an okey to spare (``spares``).
        self.spare: dict[int, SetChoice] | None = None

    def spares(self, lacking: int, rules: Rules) -> dict[int, SetChoice]:
        """Of the raising faces (``raising``, with their sets), those that let the hand less a
        held tile of face ``lacking`` with no copy left to draw keep ``kept`` faces, a
        seen tile: the hand plus the face keeps ``kept + 1`` with those sets and one okey fewer
        to stand in for missing tiles (its layout with an okey in place of the discard, where
        its runs keep it, then keeps ``kept`` within the budget: the same sets, the same
        slots), and the sets hold no set at the discard's number (its copies held stay in their
        colour's runs).  (``lets_keep`` reads them as known.)"""
        spare = self.spare
        if spare is None:
            spare = self.spare = {}
            for face, sets in self.raising.items():
                drawn = self.drawn.get((face, sets))
                if drawn is None:
                    drawn = self.drawn[(face, sets)] = _Layout(
                        self.hand.with_face(face), rules, sets
                    )
                if drawn.budget and _keeps_more(drawn, drawn.budget - 1, self.kept):
                    spare[face] = sets
        number = lacking % 13
        found = {}
        for face, sets in spare.items():
            shape = _SHAPES.get(sets)
            if shape is None:
                shape = _shape_of(sets)
            if face != lacking and not shape[13] >> number & 1:
                found[face] = sets
        return found

    def layout_less(self, sets: SetChoice, hand: HandState, lacking: int, rules: Rules) -> _Layout:
        """The layout of ``sets`` for the hand less a held tile of face ``lacking`` (``hand``;
        no okey): the whole hand's layout of them less that tile where they leave it in its
        colour's runs (``_Layout.less``), else made afresh."""
        whole = self.by_sets.get(sets) or self.others.get(sets)
        if whole is None:
            whole = self.others[sets] = _Layout(self.hand, rules, sets)
        colour, number = divmod(lacking, 13)
        if (whole.keys[colour] >> (3 * number)) & 3:
            return whole.less(hand, lacking)
        return _Layout(hand, rules, sets)

    def lets_keep(
        self,
        hand: HandState,
        lacking: int | None,
        face: int,
        sets: SetChoice,
        target: int,
        rules: Rules,
    ) -> bool:
        """Whether the hand (the witnesses' hand less a tile of face ``lacking``, a seen
        tile) plus a drawn ``face`` keeps ``target`` faces with these ``sets``
        (``kept_with_sets``); False also, unread, where the whole hand's layout with the face
        has a set at the discard's number (below)."""
        if (
            target <= self.kept
            and lacking is not None
            and lacking != face
            and self.hand is not None
            and not self.hand.avail[lacking]
            and self.spare is not None
            and self.spare.get(face) == sets
            and not (_SHAPES.get(sets) or _shape_of(sets))[13] >> (lacking % 13) & 1
        ):
            return True  # (``spares``)
        if (
            target <= self.kept
            and lacking is not None
            and lacking != face
            and self.raising.get(face) == sets
            and self.hand is not None
            and self.hand.avail[lacking]
        ):
            # The whole hand plus the face keeps ``kept + 1`` with these sets; with no set at
            # the discard's number, its held tiles are in its colour's runs, and each layout of
            # the whole hand plus the face, with a drawn copy of the discard (a copy is left:
            # no excess) in place of a held one, is one of this hand plus the face keeping at
            # most one fewer in the same slots: at least ``kept``, so ``target`` (exact: the
            # run search keeps a choice as good as any layout of runs, ``runs._runs_bits``).
            shape = _SHAPES.get(sets)
            if shape is None:
                shape = _shape_of(sets)
            if not shape[13] >> (lacking % 13) & 1:
                return True
        layout = self.by_sets.get(sets)
        colour, number = divmod(face, 13)
        if (
            self.hand is not None
            and lacking is not None
            and (layout is None or layout.numbers >> number & 1 or lacking == face)
        ):
            # Sets no layout of the whole hand has (the face in a set of them), or with a set
            # at the face's number, or the discard's own face drawn back: the whole hand plus
            # the face laid out with them (once per face and sets, for every discard), less
            # the discard, where they leave it in its colour's runs (the same copies left:
            # one knapsack step, ``_Layout.less``).
            away, at = divmod(lacking, 13)
            shape = _SHAPES.get(sets)
            if shape is None:
                shape = _shape_of(sets)
            if shape[13] >> at & 1:
                # A set at the discard's number: such sets mostly keep fewer without it
                # (about nine in ten in random deals), so the face is left to the checks
                # every face gets (``improving_draws_from``: this tells nothing then).
                return False
            drawn = self.drawn.get((face, sets))
            if drawn is None:
                drawn = self.drawn[(face, sets)] = _Layout(self.hand.with_face(face), rules, sets)
            key = drawn.keys[away]
            if (key >> (3 * at)) & 3:
                key -= 1 << (3 * at)
                return _runs_keep(drawn.without(away), key, drawn.wrap, drawn.size, target)
        if layout is None or layout.numbers >> number & 1 or lacking is None or lacking == face:
            return kept_with_sets(hand.with_face(face), rules, sets, target) >= target
        # The sets draw as they did (no set at the face's number, and the copies left are the
        # same but for the face's): the layout's parts but for two colours' runs, the face's
        # with it and the discard's without it.
        away, at = divmod(lacking, 13)
        wrap, size, budget = layout.wrap, layout.size, layout.budget
        tail = (wrap << 39) | (size << 40)
        step = (1 if hand.avail[face] > 1 else -3) << (3 * number)
        shift = 3 * at
        if away == colour:
            key = layout.keys[colour] + step
            if not (key >> shift) & 3:
                return False  # (the sets hold every copy of the discard)
            key -= 1 << shift
            return _runs_keep(layout.without(colour), key, wrap, size, target)
        key = layout.keys[away]
        if not (key >> shift) & 3:
            return False
        # The knapsack of the layout's parts but the discard's colour, with the face in its
        # colour's runs (once per face and that colour, for every discard): where that line
        # is not searched yet, as its plain line (no fewer kept) and with that line's choices
        # drawing only missing tiles (no more), searched only where those two differ
        # (``runs.drawn_as_okeys``).
        tables = self.tables.get((face, away))
        if tables is None:
            drawn = layout.keys[colour] + step
            runs = LINE_PROFILES.get(drawn | tail)
            made = True
            if runs is None:
                runs, made = line_or_plain(drawn, wrap, size)
            parts = [*layout.items]
            for c, profile in enumerate(layout.profiles):
                if c != away:
                    parts.append(runs if c == colour else profile)
            table = knapsack_table(parts, size, budget)
            floor = None
            if not made:
                floors = [*layout.items]
                for c, profile in enumerate(layout.profiles):
                    if c != away:
                        floors.append(drawn_as_okeys(runs) if c == colour else profile)
                floor = knapsack_table(floors, size, budget)
            tables = self.tables[(face, away)] = (table, floor, drawn)
        table, floor, drawn = tables
        key -= 1 << shift
        profile = LINE_PROFILES.get(key | tail)
        made = True
        if profile is None:
            # (Its plain line first where at hand, as ``_runs_keep``.)
            profile, made = line_or_plain(key, wrap, size)
        if not made or floor is not None:
            if kept_adding(table, profile, size, budget) < target:
                return False
            least = profile if made else drawn_as_okeys(profile)
            if kept_adding(table if floor is None else floor, least, size, budget) >= target:
                return True  # (``runs.drawn_as_okeys``)
            if floor is not None:
                runs = line_profile(drawn, wrap, size)
                parts = [*layout.items]
                for c, part in enumerate(layout.profiles):
                    if c != away:
                        parts.append(runs if c == colour else part)
                table = knapsack_table(parts, size, budget)
                self.tables[(face, away)] = (table, None, drawn)
            if not made:
                profile = searched_line(key, wrap, size)
        return kept_adding(table, profile, size, budget) >= target


def _keeps_more(layout: _Layout, budget: int, kept: int) -> bool:
    """Whether the layout keeps more than ``kept`` faces within ``budget`` excess
    (``layout_kept``); its lines standing as their plain lines are searched only where those
    keep more and their choices drawing only missing tiles do not (``runs.drawn_as_okeys``)."""
    standing = layout.standing
    if standing:
        profiles = layout._profiles
        if layout_kept([*layout.items, *profiles], layout.size, budget) <= kept:
            return False
        floors = [drawn_as_okeys(p) if standing >> c & 1 else p for c, p in enumerate(profiles)]
        if layout_kept([*layout.items, *floors], layout.size, budget) > kept:
            return True
    return layout_kept([*layout.items, *layout.profiles], layout.size, budget) > kept


class RootBound:
    """The set search's bound at its root (``SetSearch``: every colour's runs as the faces
    stand, plus the most the sets at each number could add), kept per part so that the bound
    of the hand plus one drawn face costs one colour profile and one number's choices.

    It bounds every meld layout of the hand plus that face, so a face whose bound falls short
    of the target cannot let the layout keep that many: its layout checks are skipped.

    The bound of a hand less one tile (``advise``'s discards) plus a face changes by what the
    whole hand's does (``shared``) where the face is of another colour and its number (and,
    its last copy drawn, the numbers near it) is not the discard's: each part of the change
    reads the faces and copies left at those numbers and the face's colour line, which the
    discard leaves as they are (a discarded tile is seen: the copies left stay the same; of the
    faces that may stand alone in a set only the discard's own may change)."""

    __slots__ = ("hand", "wrap", "size", "gains", "runs", "total", "lone", "shared", "deltas")

    def __init__(
        self,
        hand: HandState,
        rules: Rules,
        shared: tuple[RootBound, int | None] | None = None,
    ) -> None:
        """``shared``: the whole hand's bound and the face index of the tile this hand lacks
        (None: an okey, which changes no face): its parts are the whole hand's but at that
        tile's colour line and number."""
        faces, avail = hand.faces, hand.avail
        self.hand = hand
        self.wrap = rules.wrap_13_1
        self.size = rules.hand_size
        self.shared = shared
        self.deltas: dict[int, int] = {}  # per face: the change a draw makes to the total
        keys = hand.line_keys()
        if shared is not None:
            whole, lacking = shared
            if lacking is None:  # (an okey: the same faces)
                self.lone, self.gains, self.runs = whole.lone, whole.gains, whole.runs
                self.total = whole.total
                return
            # The whole hand's parts but for the lacking tile's colour line and number.
            colour, number = divmod(lacking, 13)
            self.lone = list(whole.lone)
            self.lone[colour] = lone_faces(keys[colour], self.wrap)
            l0, l1, l2, l3 = self.lone
            self.gains = list(whole.gains)
            self.gains[number] = number_gain(
                faces,
                avail,
                number,
                (l0 >> number & 1)
                | (l1 >> number & 1) << 1
                | (l2 >> number & 1) << 2
                | (l3 >> number & 1) << 3,
            )
            self.runs = list(whole.runs)
            self.runs[colour] = line_bound(keys[colour], self.wrap, self.size)
            self.total = (
                whole.total
                + self.gains[number]
                - whole.gains[number]
                + self.runs[colour]
                - whole.runs[colour]
            )
            return
        # ``lone_faces`` per colour: a drawn face changes its own colour's only.
        self.lone = [lone_faces(key, self.wrap) for key in keys]
        lone = lone_colours(keys, self.wrap)
        self.gains = [number_gain(faces, avail, n, lone[n]) for n in range(13)]
        self.runs = [line_bound(key, self.wrap, self.size) for key in keys]
        self.total = priced_size(self.size) + sum(self.gains) + sum(self.runs)

    def cuts(self, face: int, target: int) -> bool:
        """True when the hand plus a drawn ``face`` keeps fewer than ``target`` faces in any
        meld layout (its bound says so)."""
        return (self.total + self.delta(face) + GUARDS[target]) & HIGH != HIGH

    def delta(self, face: int) -> int:
        """What drawing ``face`` adds to the packed bound (``total``)."""
        found = self.deltas.get(face)
        if found is not None:
            return found
        shared = self.shared
        if shared is not None:
            whole, lacking = shared
            if lacking is None:
                found = whole.delta(face)
            else:
                colour, number = divmod(face, 13)
                at = lacking % 13
                if (
                    lacking // 13 != colour
                    and at != number
                    and (self.hand.avail[face] > 1 or at not in NEAR[self.wrap][number])
                ):
                    found = whole.delta(face)
        if found is None:
            found = self._delta(face)
        self.deltas[face] = found
        return found

    def _delta(self, face: int) -> int:
        """``delta``, computed."""
        colour, number = divmod(face, 13)
        hand = self.hand
        faces, avail = hand.faces, hand.avail
        # The hand plus that face: one more held copy, and the copy drawn leaves the pool
        # (``HandState.with_face``), read at its colour's line and its number only.
        left = avail[face] - 1
        key = hand.line_keys()[colour] + ((1 if left else -3) << (3 * number))
        # ``runs.line_bound(key)``: per count line, a row of them (``_raised_bounds``).
        counts_line = ((key & _FIELD_COUNTS) - (1 << (3 * number))) | (self.wrap << 39)
        counts_line |= self.size << 40
        row = _RAISED_BOUNDS.get(counts_line)
        if row is None:
            row = _raised_bounds(counts_line)
        bound = row[number]
        if bound is None:
            bound = _raised_bound(row, number, self.wrap, self.size)
        # ``lone_colours(keys, wrap)``, at the numbers read below.
        lines = self.lone
        was = lines[colour]
        mine = lone_faces(key, self.wrap)
        l0, l1, l2, l3 = lines
        singles = (
            (l0 >> number & 1)
            | (l1 >> number & 1) << 1
            | (l2 >> number & 1) << 2
            | (l3 >> number & 1) << 3
        ) & ~(1 << colour) | (mine >> number & 1) << colour
        # ``number_gain`` of the hand plus that face at its number (its colour held there).
        f0, f1, f2, f3 = faces[number], faces[13 + number], faces[26 + number], faces[39 + number]
        if singles or (f0 > 0) + (f1 > 0) + (f2 > 0) + (f3 > 0) - (faces[face] > 0) >= 1:
            a0, a1, a2, a3 = (
                avail[number],
                avail[13 + number],
                avail[26 + number],
                avail[39 + number],
            )
            # ``number_choices(...)[1]``, cached by its key (``sets.choices_key``): the counts
            # held and the copies left there, two bits a colour (one more held of the face's
            # colour and one fewer left: a copy drawn), the lone colours and the number.
            step = 2 * colour
            packed = (
                (f0 | f1 << 2 | f2 << 4 | f3 << 6) + (1 << step)
                | ((a0 | a1 << 2 | a2 << 4 | a3 << 6) - (1 << step)) << 8
                | singles << 16
                | number << 20
            )
            gain = _DRAWN_GAINS.get(packed)
            if gain is None:
                # (``sets.choice_gain``: the most of the choices there, read from their
                # template, which no number changes, where they are not made yet.)
                gain = choice_gain(packed)
                if len(_DRAWN_GAINS) >= 1 << 16:
                    _DRAWN_GAINS.clear()
                _DRAWN_GAINS[packed] = gain
        else:
            gain = 0
        change = gain - self.gains[number] + bound - self.runs[colour]
        if not left:
            # Its last copy drawn: runs through it draw no more, so a lone face nearby may
            # now stand in a set (the faces and copies at those numbers are the hand's).
            for near in NEAR[self.wrap][number]:
                if not (was ^ mine) >> near & 1:
                    continue  # (the same faces, copies and lone faces there: the same gain)
                lone = (
                    (l0 >> near & 1)
                    | (l1 >> near & 1) << 1
                    | (l2 >> near & 1) << 2
                    | (l3 >> near & 1) << 3
                ) & ~(1 << colour) | (mine >> near & 1) << colour
                change += number_gain(faces, avail, near, lone) - self.gains[near]
        return change


# ``RootBound._delta``'s gains of the sets at a drawn face's number, by its packed key there
# (ints only: the collector does not track the dict).
_DRAWN_GAINS: dict[int, int] = {}


class _Layout:
    """One optimal choice of sets, with the knapsack of everything but one colour kept at hand,
    so a face drawn into that colour's runs costs one knapsack step."""

    __slots__ = (
        "sets",
        "at",
        "numbers",
        "items",
        "keys",
        "avail",
        "hand_avail",
        "size",
        "wrap",
        "budget",
        "_profiles",
        "standing",
        "_without",
        "bound",
        "bound_with_pair",
        "bases",
    )

    def __init__(self, hand: HandState, rules: Rules, sets: SetChoice) -> None:
        self.sets = sets
        shape = _SHAPES.get(sets)
        if shape is None:
            shape = _shape_of(sets)
        self.at, self.numbers = shape, shape[13]
        self.items, self.keys, self.avail = take_set_keys(hand, sets)
        self.hand_avail = hand.avail
        self.size = size = rules.hand_size
        self.wrap = wrap = rules.wrap_13_1
        self.budget = hand.okeys + hand.wild_avail
        # ``line_profile``, its cache read here first; a line not searched yet stands as its
        # plain line where at hand (``runs.line_or_plain``: the same bound terms), searched
        # only where a knapsack needs it (``profiles``, ``without``).
        tail = (wrap << 39) | (size << 40)
        get = LINE_PROFILES.get
        self._profiles = profiles = []
        standing = 0
        for c, key in enumerate(self.keys):
            profile = get(key | tail)
            if profile is None:
                profile, made = line_or_plain(key, wrap, size)
                if not made:
                    standing |= 1 << c
            profiles.append(profile)
        self.standing = standing
        self._without: dict[int, Totals] = {}
        # The layout's bound terms (``kept_bound``), plus a new set of two held faces: a bound
        # for the layout with such a set added for a drawn face (that set's faces leave their
        # colours' runs, which never raises their bounds, and availability never changes one).
        self.bound = (
            priced_size(self.size)
            + sum(c.packed_bound for c in self.items)
            + sum(p.packed_bound for p in profiles)
        )
        self.bound_with_pair = self.bound + set_bound(2)
        # The bound terms of everything but each colour's runs.
        self.bases = [self.bound - p.packed_bound for p in profiles]

    @property
    def profiles(self) -> list[Component]:
        """The colours' runs (``line_profile`` of each line; those standing as their plain
        lines searched now)."""
        if self.standing:
            self._search(self.standing)
        return self._profiles

    def _search(self, colours: int) -> None:
        """Search the lines of these colours (bits) that stand as their plain lines."""
        profiles, keys = self._profiles, self.keys
        for c in range(4):
            if colours >> c & 1:
                profiles[c] = line_profile(keys[c], self.wrap, self.size)
        self.standing &= ~colours

    def less(self, hand: HandState, face: int) -> _Layout:
        """This layout of a hand, for that hand less a held tile of ``face`` (no okey; the
        tile is seen then, so the copies left to draw are the same) that its sets leave in
        their colour's runs (``hand``: the hand less that tile): the same sets, and that
        colour's runs less the tile."""
        colour, number = divmod(face, 13)
        layout = object.__new__(_Layout)
        layout.sets, layout.numbers, layout.at = self.sets, self.numbers, self.at
        layout.items, layout.avail, layout.hand_avail = self.items, self.avail, hand.avail
        layout.size, layout.wrap, layout.budget = self.size, self.wrap, self.budget
        layout.keys = keys = list(self.keys)
        key = keys[colour] = keys[colour] - (1 << (3 * number))
        layout._profiles = profiles = list(self._profiles)
        # ``line_profile``, its cache read here first; where not searched yet, its plain line
        # where at hand (as ``__init__``).
        standing = self.standing & ~(1 << colour)
        profile = LINE_PROFILES.get(key | (self.wrap << 39) | (self.size << 40))
        if profile is None:
            profile, made = line_or_plain(key, self.wrap, self.size)
            if not made:
                standing |= 1 << colour
        layout.standing = standing
        profiles[colour] = profile
        change = profile.packed_bound - self._profiles[colour].packed_bound
        layout.bound = bound = self.bound + change
        layout.bound_with_pair = bound + _PAIR_TERMS
        # (The bases of the other colours change as the bound does; that colour's is as it was.)
        layout.bases = bases = [base + change for base in self.bases]
        bases[colour] = self.bases[colour]
        # (Everything but that colour's runs is as it was.)
        same = self._without.get(colour)
        layout._without = {} if same is None else {colour: same}
        return layout

    def without(self, colour: int) -> Totals:
        """The knapsack of everything but ``colour``'s runs."""
        totals = self._without.get(colour)
        if totals is None:
            need = self.standing & ~(1 << colour)
            if need:
                self._search(need)
            others = [p for c, p in enumerate(self._profiles) if c != colour]
            totals = _canonical(totals_of((*self.items, *others), self.size, self.budget))
            self._without[colour] = totals
        return totals


def _canonical(totals: Totals) -> Totals:
    """The first ``Totals`` seen with the same table, size and budget: their knapsack steps
    (``layout.best_with``, remembered per serial and choices) are the same, and about half of
    the layouts' tables repeat another's with other parts (another choice of sets with the
    same totals, or the same parts after another discard)."""
    key = totals[:3]
    found = _CANONICAL.get(key)
    if found is None:
        if len(_CANONICAL) >= 1 << 15:
            _CANONICAL.clear()
        found = _CANONICAL[key] = totals
    return found


# ``_canonical`` by table, size and budget (tuples of ints: the collector stops visiting them).
_CANONICAL: dict[tuple[int, ...], Totals] = {}


def _shape_of(sets: SetChoice) -> tuple:
    """The shape of a choice of sets (``_Layout.at``; cached in ``_SHAPES``): per number index
    0..12, None where it has no set, else the faces its sets hold per colour (four counts), the
    colours (bit c) every set there holds, then each set's index and colours (bit c); and at 13
    its numbers (bit n).  (Ints only: the collector stops tracking such tuples at once, where
    sets, dicts, lists or tuples holding the choice's own tuples would stay on its lists and
    bring on its full collections as the cache grows.)"""
    at: list = [None] * 13
    numbers = 0
    for i, (colours, number) in enumerate(sets):
        mask = 0
        for c in colours:
            mask |= 1 << c
        entry = at[number]
        if entry is None:
            entry = at[number] = [0, 0, 0, 0, 15]
            numbers |= 1 << number
        for c in colours:
            entry[c] += 1
        entry[4] &= mask
        entry += (i, mask)
    shape = (*[None if entry is None else tuple(entry) for entry in at], numbers)
    if len(_SHAPES) >= 1 << 14:
        _SHAPES.clear()
    _SHAPES[sets] = shape
    return shape


# The colours of each set of colours (bit c), in order.
_MASK_COLOURS = [tuple(c for c in range(4) if mask >> c & 1) for mask in range(16)]


# ``_shape_of`` by choice of sets (the layouts only read them).
_SHAPES: dict[SetChoice, tuple] = {}


# The count bits of each number's field of a line key.
_FIELD_COUNTS = 3 * _FIELD_LOW


def _raised_bounds(counts: int) -> tuple[int | None, ...]:
    """Per number, the bound terms (``Component.packed_bound``) of a colour's runs with one
    more held there than the count line ``counts`` (the counts of a line key, with the tail
    of ``runs.line_profile`` keys), read from plain lines (``runs.line_bound``) when first
    asked for (``_raised_bound``; None until then; the row cached, ``counts`` at 13)."""
    row = _NO_RAISED_BOUNDS + (counts,)
    if len(_RAISED_BOUNDS) >= 1 << 16:
        _RAISED_BOUNDS.clear()
    _RAISED_BOUNDS[counts] = row
    return row


def _raised_bound(row: tuple[int | None, ...], number: int, wrap: bool, size: int) -> int:
    """``row[number]`` of a ``_raised_bounds`` row, computed where not yet read; the cached
    row is replaced by one with it (a tuple of ints and None: the collector stops visiting
    it, where it would visit a list at every full collection)."""
    counts: int = row[13]  # type: ignore[assignment]
    bound = line_bound((counts & ((1 << 39) - 1)) + (1 << (3 * number)), wrap, size)
    now = _RAISED_BOUNDS.get(counts, row)  # (with what was read since the row was taken)
    _RAISED_BOUNDS[counts] = (*now[:number], bound, *now[number + 1 :])
    return bound


_NO_RAISED_BOUNDS: tuple[None, ...] = (None,) * 13


# ``RootBound.delta`` of a hand less a tile of face ``lacking`` (``_SHARED[wrap][lacking]``):
# per face 1 where the whole hand's change holds (another colour, another number, and that
# number's draws reach no lone face at ``lacking``'s number), 2 where it holds if a copy is
# left after the draw, else 0 (computed); ``_ALL_SHARED`` for an okey's (no face lacking).
_SHARED = {
    wrap: [
        [
            0
            if lacking // 13 == face // 13 or lacking % 13 == face % 13
            else 2
            if lacking % 13 in NEAR[wrap][face % 13]
            else 1
            for face in range(NUMBERED_KINDS)
        ]
        for lacking in range(NUMBERED_KINDS)
    ]
    for wrap in (False, True)
}


_ALL_SHARED = [1] * NUMBERED_KINDS


# ``_raised_bounds`` by count line and tail.
_RAISED_BOUNDS: dict[int, tuple[int | None, ...]] = {}


# Per face: its colour, its number, and what a drawn copy adds to its colour's line key
# (``line_key``) with a copy still left after it and with none.
_FACE_STEPS = [
    (face // 13, face % 13, 1 << (3 * (face % 13)), -3 << (3 * (face % 13)))
    for face in range(NUMBERED_KINDS)
]


def _melds_improving(
    hand: HandState,
    faces: list[int],
    layouts: list[_Layout],
    target: int,
    rules: Rules,
    root: RootBound | None = None,
) -> dict[int, SetChoice]:
    """Of ``faces`` (drawable), those whose draw lets a meld layout of the hand keep ``target``
    faces, each with the sets of the first such layout found.

    A drawn face joins its colour's runs in each layout first, layout by layout (one bound,
    and where the bound reaches the target one knapsack step, per layout and face: the faces
    still unanswered go on to the next layout); the faces no layout's runs take are then
    tried in the layouts' sets (``_sets_improve``).  ``root``: the hand's ``RootBound``, which
    has the change of each of ``faces`` computed (``RootBound.delta``): the last-copy searches
    start from it."""
    found: dict[int, SetChoice] = {}
    guard = GUARDS[target]
    wrap, size = rules.wrap_13_1, rules.hand_size
    tail = (wrap << 39) | (size << 40)
    cache = LINE_PROFILES
    raised = _RAISED_BOUNDS
    hand_avail = hand.avail
    best_get = _BEST_WITH.get
    pending = faces
    for layout in layouts:
        if not pending:
            break
        numbers, keys, bases, avail = layout.numbers, layout.keys, layout.bases, layout.avail
        withouts = layout._without
        left = []
        rows = [None, None, None, None]
        for face in pending:
            colour, number, drawn, last = _FACE_STEPS[face]
            if numbers >> number & 1:
                # A set at its number may draw that face as its missing tile: its sets are
                # solved again (``_sets_improve``).
                left.append(face)
                continue
            # The bound first: the colour's runs with one more held at that number bound the
            # same whatever copies are left (``runs.plain_key``), per count line and number
            # (``_raised_bounds``); the line itself only where the bound reaches the target.
            row = rows[colour]
            if row is None:
                counts = (keys[colour] & _FIELD_COUNTS) | tail
                row = raised.get(counts)
                if row is None:
                    row = _raised_bounds(counts)
                row = rows[colour] = (row, bases[colour] + guard)
            bound = row[0][number]
            if bound is None:
                bound = _raised_bound(row[0], number, wrap, size)
            if (row[1] + bound) & HIGH != HIGH:
                left.append(face)
                continue
            # One more held copy, and the copy drawn leaves the pool (its last one: no copy
            # left).
            key = keys[colour] + (
                last
                if (avail.get(face, hand_avail[face]) if avail else hand_avail[face]) == 1
                else drawn
            )
            # ``best_with(layout.without(colour), profile.packed, ...)``, the caches read first.
            totals = withouts.get(colour)
            if totals is None:
                totals = layout.without(colour)
            # ``line_profile``, its cache read here first.
            profile = cache.get(key | tail)
            if profile is None:
                # Where the line needs a search, its plain line's knapsack first where at
                # hand: it keeps at least as many (``runs.line_or_plain``); the line only where
                # that reaches the target.
                profile, made = line_or_plain(key, wrap, size)
                if not made:
                    if best_with(totals, profile.packed, profile.serial) < target:
                        left.append(face)
                        continue
                    # (No line keeps fewer than its plain line drawing only tiles with no
                    # copy left, ``runs.drawn_as_okeys``: where that reaches the target, so
                    # does the line, unsearched.)
                    floor = drawn_as_okeys(profile)
                    if best_with(totals, floor.packed, floor.serial) >= target:
                        found[face] = layout.sets
                        continue
                    profile = searched_line(key, wrap, size)
            kept = best_get((totals[TOTALS_SERIAL] << SERIAL_BITS) | profile.serial)
            if kept is None:
                kept = best_with(totals, profile.packed, profile.serial)
            if kept >= target:
                found[face] = layout.sets
            else:
                left.append(face)
        pending = left
    faces_held = hand.faces
    if pending:
        at_sets = 0
        for layout in layouts:
            at_sets |= layout.numbers
    for face in pending:
        number = face % 13
        if (
            not at_sets >> number & 1
            and faces_held[number]
            + faces_held[13 + number]
            + faces_held[26 + number]
            + faces_held[39 + number]
            == faces_held[face]
        ):
            # No other colour held at its number and no set there: no set can take it
            # (``_sets_improve`` has nothing to try), nor draw its copy.
            continue
        witness = _sets_improve(hand, face, layouts, target, rules)
        if witness is None and hand_avail[face] == 1 and _set_may_take(faces_held, face):
            # (its last copy)
            witness = _last_copy_raises(
                hand.with_face(face),
                face,
                target,
                rules,
                None if root is None else root.total + root.delta(face),
            )
        if witness is not None:
            found[face] = witness
    return found


def _set_may_take(faces: list[int], face: int) -> bool:
    """Whether a set at a face's number may draw its copy left (``_last_copy_raises``): another
    colour is held there."""
    number = face % 13
    return (
        faces[number] + faces[13 + number] + faces[26 + number] + faces[39 + number] > faces[face]
    )


def _last_copy_raises(
    drawn: HandState, face: int, target: int, rules: Rules, bound: int | None = None
) -> SetChoice | None:
    """The sets of a meld layout of a hand plus the drawn last copy of ``face`` (``drawn``)
    that keeps ``target`` faces, or None, the drawn hand searched itself (up to ``target``).

    A set that draws its missing tiles takes the copy left of each missing colour, so a
    layout with a set at the face's number may take that face's last copy from its colour's
    runs and keep one face fewer than it could (not optimal for the hand, or no better than
    its pairs); drawing that copy then raises it by two, which the optimal layouts do not show.

    Only the choices of sets with such a set at the face's number, or one holding the drawn
    copy (more sets there holding its colour than the hand held copies), are searched: any
    other choice of sets S is a choice of the hand before the draw, whose sets draw the same
    tiles with or without it (none at its number lacks its colour), and whose runs of its
    colour, the drawn copy held and no copy left, keep at most one more than with one copy
    fewer and a copy left (a run through it draws the copy instead), so S keeps at most one
    more than it did in the hand: to keep ``target`` (one more than the hand's optimal
    layouts, or more where the pairs are closer) S must be optimal for the hand and keep the
    face in its runs, which the checks of its optimal layouts read (``_melds_improving``).
    (Not where the drawn last copy lets another face of its colour stand alone in a set,
    ``lone_faces``: such a set is no choice of the hand's own search, so its optimal layouts
    may lack S; every choice is searched then.)

    ``bound``: the search's bound at its root (``RootBound`` of the hand before the draw, plus
    the face's change), where known: the search's first step, each choice searched at the face's
    number with the bound of the other numbers and the runs as they stand, is then read before
    the search is set up (most choices are cut there)."""
    colour, number = divmod(face, 13)
    held = drawn.faces[face]
    # (The hand's line of its colour: one copy fewer held there, and a copy left.)
    keys = drawn.line_keys()
    line = keys[colour]
    wrap = rules.wrap_13_1
    every = lone_faces(line, wrap) & ~lone_faces(line + (3 << (3 * number)), wrap) & ~(1 << number)
    if not every:
        # The choices at its number that the search tries (below), read first: where there
        # are none, no layout of those choices is found (the search needs no setting up).
        faces, avail = drawn.faces, drawn.avail
        r, y, b, k = number, 13 + number, 26 + number, 39 + number
        singles = (
            (lone_faces(keys[0], wrap) >> number & 1)
            | (lone_faces(keys[1], wrap) >> number & 1) << 1
            | (lone_faces(keys[2], wrap) >> number & 1) << 2
            | (lone_faces(keys[3], wrap) >> number & 1) << 3
        )
        # ``number_choices``, read from its table by its key (``sets.choices_key``).
        key = (
            faces[r]
            | faces[y] << 2
            | faces[b] << 4
            | faces[k] << 6
            | avail[r] << 8
            | avail[y] << 10
            | avail[b] << 12
            | avail[k] << 14
            | singles << 16
            | number << 20
        )
        here = CHOICES.get(key)
        if here is None:
            here = _number_choices(key)
        kept_choices = _last_copy_choices(here, colour, held)
        if not kept_choices:
            return None
        if bound is not None:
            # The search's first step (``SetSearch._visit`` at its number, searched first):
            # the root's bound with that number's gain (``choice_gain``, the most of its
            # choices) replaced by each choice's own, then the runs bound of each colour the
            # choice takes faces or last copies from replaced by that of its line after.
            cut = bound - choice_gain(key) + GUARDS[target]
            size = rules.hand_size
            for choice in kept_choices:
                child = cut + choice[0]
                if child & HIGH != HIGH:
                    continue
                for c, change in choice[1]:
                    child += line_bound(keys[c] + change, wrap, size) - line_bound(
                        keys[c], wrap, size
                    )
                if child & HIGH == HIGH:
                    break
            else:
                return None
    search = SetSearch(drawn, rules, target, False)
    # As if a layout keeping ``target - 1`` were found: the search looks for ``target`` from
    # its root (its first layout keeping that many is the same, found sooner).
    search.best = target - 1
    search.optimal = [()]
    # Its number searched first (the order of the numbers changes no answer), with only those
    # choices there.
    numbers, choices, rest = search.numbers, search.choices, search.rest
    at = numbers.index(number)
    gains = [rest[i] - rest[i + 1] for i in range(len(numbers))]
    numbers.insert(0, numbers.pop(at))
    gains.insert(0, gains.pop(at))
    choices.insert(0, choices.pop(at))
    for i in range(len(numbers) - 1, -1, -1):
        rest[i] = rest[i + 1] + gains[i]
    if not every:
        # (The same choices as the search's there, read above.)
        choices[0] = kept_choices
        search.plain = False  # (no set at its number)
    kept, optimal = search.run()
    if kept < target or not optimal:
        return None
    return tuple(sorted(optimal[0], key=lambda s: s[1]))  # (in the order of their numbers)


def _last_copy_choices(here: tuple, colour: int, held: int) -> tuple:
    """Of the choices of sets at a face's number (``here``), those ``_last_copy_raises``
    searches: a set there lacking its colour, or as many sets holding it as the drawn hand
    holds copies (cached by the choices' id, the face's colour and its copies held)."""
    key = (id(here), colour, held)
    hit = _LAST_COPY_CHOICES.get(key)
    if hit is None or hit[0] is not here:
        kept_choices = tuple(
            choice
            for choice in here
            if choice[3]
            and (
                any(colour not in colours for colours, _ in choice[3])
                or sum(colour in colours for colours, _ in choice[3]) == held
            )
        )
        if len(_LAST_COPY_CHOICES) >= 1 << 12:
            _LAST_COPY_CHOICES.clear()
        # (The entry holds the choices, so their id stays theirs while it lasts.)
        hit = _LAST_COPY_CHOICES[key] = (here, kept_choices)
    return hit[1]


# ``_last_copy_raises``'s choices at the face's number, by the id of all of them there, the
# face's colour and its copies held.
_LAST_COPY_CHOICES: dict[tuple[int, int, int], tuple] = {}


def _sets_improve(
    hand: HandState, face: int, layouts: list[_Layout], target: int, rules: Rules
) -> SetChoice | None:
    """The sets of a meld layout of the hand plus a drawn ``face`` (``hand.with_face``, made
    where a choice of sets is solved) keeping
    ``target`` faces with that face in a set (or in its colour's runs, where a set at its
    number draws it as a missing tile), or None where none does: each layout's sets solved
    again with it, a set at its number grown by it, or a new set of it and a held face of its
    number (the layouts with no set at its number were tried with it in their runs)."""
    colour, number = divmod(face, 13)
    # (The layouts with no set at its number, whose sets as they are were tried, never come
    # back below: every option has a set at its number.)
    tried: set[SetChoice] = set()
    guard = GUARDS[target]
    wrap, size = rules.wrap_13_1, rules.hand_size
    tail = (wrap << 39) | (size << 40)
    shift = 3 * number
    # The face's field of its colour's line key once drawn, a copy left or not: a layout's key
    # there holds one more than it did (whatever copy a set took aside), and a copy may be left
    # at most where the drawn hand has one.
    left = 4 if hand.avail[face] > 1 else 0
    # (The faces held at its number in other colours are the hand's.)
    faces = hand.faces
    pair_terms = _PAIR_TERMS + guard
    # The other colours held at its number (a new set's partners).
    others = [other for other in range(4) if other != colour and faces[other * 13 + number] > 0]
    lowered: dict[int, int] = {}  # the bound terms of a line less its face at that number
    for layout in layouts:
        sets = layout.sets
        here = layout.at[number]
        if here is None:
            # No set at its number: a new set of the face and a held face of another colour
            # is all there is to try (in the order of the colours; its bound terms first).
            if not others or (layout.bound_with_pair + guard) & HIGH != HIGH:
                continue
            keys, bases = layout.keys, layout.bases
            for other in others:
                lower = keys[other] - (1 << shift)
                runs_bound = lowered.get(lower)
                if runs_bound is None:
                    runs_bound = lowered[lower] = line_bound(lower, wrap, size)
                if (bases[other] + runs_bound + pair_terms) & HIGH != HIGH:
                    continue
                pair = (_PAIR_COLOURS[colour][other], number)
                option = (*sets, pair)
                if option in tried:
                    continue
                tried.add(option)
                if _pair_bound(layout, pair, other, target) < target:
                    continue
                if _option_keeps(layout, hand, face, option, target):
                    return option
            continue
        options = []
        if sets not in tried:
            # Its sets as they are, the face in its colour's runs: bounded first by the
            # layout's bound with the colour's runs holding it (a set at its number
            # drawing other copies only lowers what is left).
            key = layout.keys[colour]
            key += ((((key >> shift) & 3) + 1) | left) - ((key >> shift) & 7) << shift
            # ``line_profile``, its cache read here first (its bound terms are its plain
            # line's, ``runs.line_bound``: read first, the line only where they reach the
            # target).
            profile = LINE_PROFILES.get(key | tail)
            runs_bound = line_bound(key, wrap, size) if profile is None else profile.packed_bound
            if (layout.bases[colour] + runs_bound + guard) & HIGH != HIGH:
                tried.add(sets)
            elif here[4] >> colour & 1:
                # No set there lacks its colour: the sets draw as they did, and the layout
                # with the face is its knapsack without the colour's runs plus those
                # (``kept_with_sets`` in one step).
                tried.add(sets)
                if _runs_keep(layout.without(colour), key, wrap, size, target):
                    return sets
            else:
                options.append(sets)
        for k in range(5, len(here), 2):
            i, mask = here[k], here[k + 1]
            if not mask >> colour & 1:
                grown = (_MASK_COLOURS[mask | 1 << colour], number)
                options.append((*sets[:i], grown, *sets[i + 1 :]))
        if (layout.bound_with_pair + guard) & HIGH == HIGH:  # bound >= target
            keys, bases = layout.keys, layout.bases
            for other in range(4):
                if other != colour and faces[other * 13 + number] > here[other]:
                    # First the bound terms: the layout but for ``other``'s runs, those less
                    # the face (``runs.line_bound``), and a set of two held faces.
                    runs_bound = line_bound(keys[other] - (1 << shift), wrap, size)
                    if (bases[other] + runs_bound + pair_terms) & HIGH != HIGH:
                        continue
                    pair = (_PAIR_COLOURS[colour][other], number)
                    option = (*sets, pair)
                    if option not in tried and _pair_bound(layout, pair, other, target) < target:
                        tried.add(option)
                        continue
                    options.append(option)
        for option in options:
            if option in tried:
                continue
            tried.add(option)
            if _option_keeps(layout, hand, face, option, target):
                return option
    return None


def _option_keeps(
    layout: _Layout, hand: HandState, face: int, option: SetChoice, target: int
) -> bool:
    """Whether the hand plus a drawn ``face`` keeps ``target`` faces with the sets ``option``,
    which are the layout's sets but at the face's number (``_sets_improve``'s options):
    ``kept_with_sets(hand.with_face(face), rules, option, target) >= target``, read from the
    layout.

    Sets draw their missing tiles at their own number only, and the draw changes the faces
    and copies left at its number only, so the sets at the other numbers take what they took
    in the layout (its set components, and its line keys there): the sets at its number are
    laid out again (in their order, as ``take_set_keys`` does), from the drawn hand's faces
    and copies left there (none where they hold a face more often than it is held, as
    ``kept_with_sets`` reads it)."""
    colour, number = divmod(face, 13)
    faces, avail = hand.faces, hand.avail
    held = [faces[number], faces[13 + number], faces[26 + number], faces[39 + number]]
    held[colour] += 1
    here = [avail[number], avail[13 + number], avail[26 + number], avail[39 + number]]
    if here[colour]:
        here[colour] -= 1
    # (The layout's bound terms, less those of the parts laid out again.)
    bound = layout.bound
    if layout.numbers >> number & 1:
        items = []
        for item, (_, at) in zip(layout.items, layout.sets, strict=True):
            if at == number:
                bound -= item.packed_bound
            else:
                items.append(item)
    else:
        items = [*layout.items]
    for colours, at in option:
        if at == number:
            for c in colours:
                held[c] -= 1
            component, drawn = set_component(colours, tuple(here))
            for c in drawn:
                here[c] -= 1
            items.append(component)
            bound += component.packed_bound
    if held[0] < 0 or held[1] < 0 or held[2] < 0 or held[3] < 0:
        return False
    # The lines with the number's field as the sets there leave it (its count held, plus 4
    # where a copy is left).
    shift = 3 * number
    keys, profiles, standing = layout.keys, layout._profiles, layout.standing
    wrap, size = layout.wrap, layout.size
    unmade = []  # (the lines not made yet, each read as its plain line first: ``_runs_keep``)
    for c in range(4):
        key = keys[c]
        was = (key >> shift) & 7
        field = held[c] | (4 if here[c] > 0 else 0)
        if was == field:
            if standing >> c & 1:
                unmade.append((len(items), key))  # (the layout's, not searched yet)
            items.append(profiles[c])
        else:
            key += (field - was) << shift
            # ``line_profile``, its cache read here first.
            profile = LINE_PROFILES.get(key | (wrap << 39) | (size << 40))
            if profile is None:
                profile, made = line_or_plain(key, wrap, size)
                if not made:
                    unmade.append((len(items), key))
            items.append(profile)
            bound += profile.packed_bound - profiles[c].packed_bound
    if (bound + GUARDS[target]) & HIGH != HIGH:
        return False
    if unmade:
        if layout_kept(items, size, layout.budget) < target:
            return False
        floors = items[:]
        for at, _ in unmade:
            floors[at] = drawn_as_okeys(floors[at])
        if layout_kept(floors, size, layout.budget) >= target:
            return True  # (no line keeps fewer: ``runs.drawn_as_okeys``)
        for at, key in unmade:
            items[at] = line_profile(key, wrap, size)
    return layout_kept(items, size, layout.budget) >= target


def _pair_bound(layout: _Layout, pair: tuple[tuple[int, ...], int], other: int, target: int) -> int:
    """A bound on the faces a layout keeps with a new set of a drawn face and a held face of
    colour ``other`` at its number (``pair``) added: its knapsack without ``other``'s runs,
    plus that set and ``other``'s runs less that face, one choice of each.  (The drawn copy
    and the set's drawn tiles only lower what is left to draw elsewhere.)  Where those runs
    are not made yet, their plain line's is read first where at hand (``_runs_keep``): a
    bound under ``target`` from it is returned as it is."""
    colours, number = pair
    key = layout.keys[other] - (1 << (3 * number))
    # ``line_profile``, its cache read here first.
    wrap, size = layout.wrap, layout.size
    runs = LINE_PROFILES.get(key | (wrap << 39) | (size << 40))
    if runs is None:
        runs, made = line_or_plain(key, wrap, size)
        if not made:
            found = _pair_kept(layout, pair, other, runs)
            if found < target or _pair_kept(layout, pair, other, drawn_as_okeys(runs)) == found:
                return found  # (the line's: no fewer, ``runs.drawn_as_okeys``)
            runs = searched_line(key, wrap, size)
    return _pair_kept(layout, pair, other, runs)


def _pair_kept(
    layout: _Layout, pair: tuple[tuple[int, ...], int], other: int, runs: Component
) -> int:
    """``_pair_bound`` with ``other``'s runs less the face (``runs``) given."""
    colours, number = pair
    # (The caller checked the bound terms first: the layout but for ``other``'s runs, those
    # less the face, and a set of two held faces, ``set_bound``.)
    avail, hand_avail = layout.avail, layout.hand_avail
    if avail:
        get = avail.get
        here = (
            get(number, hand_avail[number]),
            get(13 + number, hand_avail[13 + number]),
            get(26 + number, hand_avail[26 + number]),
            get(39 + number, hand_avail[39 + number]),
        )
    else:
        here = (
            hand_avail[number],
            hand_avail[13 + number],
            hand_avail[26 + number],
            hand_avail[39 + number],
        )
    component = set_component(colours, here)[0]
    key = (id(component.packed), id(runs.packed))
    hit = _COMBINED.get(key)
    if hit is None or hit[0] is not component or hit[1] is not runs:
        combined = tuple(
            (k + j, kept + more) for k, kept in component.packed for j, more in runs.packed
        )
        if len(_COMBINED) >= 1 << 14:
            _COMBINED.clear()
        # (The entry holds both parts, so their ids stay theirs while it lasts.)
        # (A serial of its own names the combined choices in ``layout.best_with``.)
        hit = _COMBINED[key] = (component, runs, combined, next(_SERIALS))
    # ``best_with(layout.without(other), hit[2], hit[3])``, their caches read here first.
    totals = layout._without.get(other)
    if totals is None:
        totals = layout.without(other)
    found = _BEST_WITH.get((totals[TOTALS_SERIAL] << SERIAL_BITS) | hit[3])
    if found is not None:
        return found
    return best_with(totals, hit[2], hit[3])


# The held colours of a set of two, sorted, per pair of colours.
_PAIR_COLOURS = [[(min(a, b), max(a, b)) for b in range(4)] for a in range(4)]


# The bound terms of a set of two held faces (``_pair_bound``).
_PAIR_TERMS = set_bound(2)


# The choices of a set and a colour's runs together, by their ids (``_pair_bound``).
_COMBINED: dict[tuple[int, int], tuple] = {}
