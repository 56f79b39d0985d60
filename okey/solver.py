"""Win check: can a hand be laid out entirely in groups, and one arrangement that does it.

The search works on the 52-slot count vector of the tiles' faces in play (a false joker is counted
as the okey's face) plus the number of wild okeys, taking the lowest tile first.

>>> from okey import Rules, Tile, parse_tiles
>>> hand = parse_tiles("R1 R2 R3 Y5 B5 K5 K9 K10 K11 K12 B7 B8 B9 R6")
>>> result = check_win(hand, Tile.parse("R5"), Rules.classic())  # okey R6
>>> result.winning, result.kind
(True, 'melds')
>>> [g.text for g in result.groups][:2]
['R1 R2 R3', 'Y5 B5 K5']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from okey.hand import check_possible, okey_for
from okey.inputs import read_rules, read_tile, read_tiles
from okey.rules import Rules
from okey.tiles import COLOURS, FALSE_JOKER_INDEX, Tile, format_tiles

NUMBERED_KINDS = 52


@dataclass(frozen=True, slots=True)
class Group:
    """One group of an arrangement: the tiles as held and the tile each one plays as."""

    kind: str  # "run", "set" or "pair"
    tiles: tuple[Tile, ...]
    stands_for: tuple[Tile, ...]

    @property
    def text(self) -> str:
        return format_tiles(self.tiles)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tiles": [str(t) for t in self.tiles],
            "stands_for": [str(t) for t in self.stands_for],
        }


@dataclass(frozen=True, slots=True)
class WinResult:
    """The answer of ``check_win``: winning or not, and how (``"melds"`` or ``"pairs"``)."""

    winning: bool
    kind: str | None = None
    groups: tuple[Group, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "winning": self.winning,
            "kind": self.kind,
            "groups": [g.to_dict() for g in self.groups],
        }


def faces_and_okeys(tiles: Iterable[Tile], okey: Tile) -> tuple[list[int], int]:
    """Count vector over the 52 numbered faces (false jokers as the okey's face) and the okeys."""
    faces = [0] * NUMBERED_KINDS
    okeys = 0
    for tile in tiles:
        if tile == okey:
            okeys += 1
        elif tile.index == FALSE_JOKER_INDEX:
            faces[okey.index] += 1
        else:
            faces[tile.index] += 1
    return faces, okeys


def check_win(tiles: Sequence[Tile], indicator: Tile, rules: Rules | None = None) -> WinResult:
    """Is this hand (``rules.hand_size`` tiles, 14 in classic) a win?  With one arrangement.

    The groups form is tried first, then (where ``rules.seven_pairs``) the pairs form.
    """
    if type(rules) is not Rules:
        rules = read_rules(rules, Rules.classic())
    tiles = list(tiles) if type(tiles) in (list, tuple) else read_tiles(tiles, "tiles")
    if len(tiles) != rules.hand_size:
        raise ValueError(
            f"a win check takes {rules.hand_size} tiles ({rules.name}); got {len(tiles)}"
        )
    counted = _usual_counts(tiles, indicator, rules)
    if counted is None:
        tiles, indicator = read_tiles(tiles, "tiles"), read_tile(indicator, "indicator")
        check_possible(tiles, indicator, rules)
        okey = okey_for(indicator)
        faces, okeys = faces_and_okeys(tiles, okey)
    else:
        okey, faces, okeys = counted
    if _melds_possible(faces, okeys, rules.wrap_13_1):
        melds = find_melds(faces, okeys, rules)
        if melds is not None:
            return WinResult(True, "melds", tuple(_assign(melds, tiles, okey)))
    if rules.seven_pairs and len(tiles) % 2 == 0 and sum(n & 1 for n in faces) <= okeys:
        pairs = find_pairs(faces, okeys, rules)
        if pairs is not None:
            return WinResult(True, "pairs", tuple(_assign(pairs, tiles, okey)))
    return WinResult(False)


def _usual_counts(
    tiles: list[Tile], indicator: Tile, rules: Rules
) -> tuple[Tile, list[int], int] | None:
    """(okey, ``faces_and_okeys``) of a hand that ``check_possible`` accepts, counted once; None
    for anything unusual (which then goes through ``check_possible`` for its error)."""
    held = [0] * (FALSE_JOKER_INDEX + 1)
    try:
        for tile in tiles:
            held[tile.index] += 1
        at = indicator.index
        if (
            at == FALSE_JOKER_INDEX
            or type(indicator) is not Tile
            or max(held) > 2
            or held[at] > 1
            or len(tiles) > rules.max_rack_tiles
        ):
            return None
    except (AttributeError, TypeError, IndexError):
        return None
    o = at - 12 if at % 13 == 12 else at + 1  # okey_for
    okeys = held[o]
    held[o] = held.pop()  # false jokers play as the okey's face
    return Tile(o), held, okeys


def _partners(face: int, reach: int, wrap: bool) -> tuple[int, ...]:
    """The faces that may share a group with ``face`` when at most ``reach - 1`` okeys stand
    between them in a run: its number in the other colours, and its colour within ``reach``
    numbers (with ``wrap``, a 1 is next to 13 as well as to 2)."""
    colour, number = divmod(face, 13)
    found = [c * 13 + number for c in range(4) if c != colour]
    for other in range(13):
        gap = abs(other - number)
        if wrap and 0 in (other, number):
            gap = min(gap, 13 - max(other, number))  # the 1 played high, after 13
        if other != number and gap <= reach:
            found.append(colour * 13 + other)
    return tuple(found)


_PARTNERS = {
    wrap: [[_partners(face, reach, wrap) for face in range(NUMBERED_KINDS)] for reach in range(15)]
    for wrap in (False, True)
}


def _melds_possible(faces: list[int], okeys: int, wrap: bool) -> bool:
    """False when the faces cannot all go into runs and sets (a quick necessary condition,
    never False for a hand ``find_melds`` splits): a face with no held face it could share a
    group with (``_partners``, as far as the okeys reach) needs a group of its own with two
    okeys."""
    partners = _PARTNERS[wrap][min(okeys + 1, 14)]
    lone = 0
    for face in range(NUMBERED_KINDS):
        n = faces[face]
        if n:
            for other in partners[face]:
                if faces[other]:
                    break
            else:
                lone += n
                if 2 * lone > okeys:
                    return False
    return True


# A planned group: kind and the faces it plays as, with None for an okey.
Plan = tuple[str, tuple[int | None, ...]]


def find_melds(faces: list[int], okeys: int, rules: Rules) -> list[Plan] | None:
    """Split faces plus okeys into runs and sets, or None.  Faces are grouped lowest first."""
    failed: set[tuple[tuple[int, ...], int]] = set()
    counts = list(faces)

    def search(okeys_left: int) -> list[Plan] | None:
        first = next((i for i in range(NUMBERED_KINDS) if counts[i]), -1)
        if first < 0:
            return [] if okeys_left == 0 else None
        key = (tuple(counts), okeys_left)
        if key in failed:
            return None
        for plan, used in _groups_with(first, counts, okeys_left, rules):
            for face in plan[1]:
                if face is not None:
                    counts[face] -= 1
            rest = search(okeys_left - used)
            for face in plan[1]:
                if face is not None:
                    counts[face] += 1
            if rest is not None:
                return [plan, *rest]
        failed.add(key)
        return None

    if okeys and not any(faces):
        return _okeys_only(okeys)
    return search(okeys)


def _okeys_only(okeys: int) -> list[Plan] | None:
    return [("run", (None,) * okeys)] if okeys >= 3 else None


def _groups_with(
    first: int, counts: list[int], okeys: int, rules: Rules
) -> Iterable[tuple[Plan, int]]:
    """Every group that contains face ``first`` as its lowest remaining face (plan, okeys used)."""
    colour, number = divmod(first, 13)
    number += 1
    # Sets: the other colours present at this number, plus okeys, 3 or 4 tiles.
    others = [c * 13 + number - 1 for c in range(4) if c != colour and counts[c * 13 + number - 1]]
    for mask in range(1 << len(others)):
        chosen = [others[i] for i in range(len(others)) if mask >> i & 1]
        for size in (3, 4):
            need = size - 1 - len(chosen)
            if 0 <= need <= okeys:
                yield ("set", (first, *chosen, *(None,) * need)), need
    yield from _runs_with(first, counts, okeys, rules)


def _runs_with(
    first: int, counts: list[int], okeys: int, rules: Rules
) -> Iterable[tuple[Plan, int]]:
    """Runs through face ``first``; lower faces of its colour are used up, so they are okeys."""
    colour, number = divmod(first, 13)
    number += 1
    top = 14 if rules.wrap_13_1 else 13
    longest = min(13, rules.max_run_length)
    if number == 1 and rules.wrap_13_1:
        # The 1 played high ends a run ...12-13-1: the faces below it on the line are 2..13.
        for start in range(max(2, 15 - longest), 13):
            plan: list[int | None] = []
            for pos in range(start, 14):
                face = colour * 13 + pos - 1
                plan.append(face if counts[face] else None)
            used = plan.count(None)
            if used <= okeys:
                yield ("run", (*plan, first)), used
    for lead in range(min(okeys, number - 1, 2) + 1):
        start = number - lead
        plan = [None] * lead + [first]
        used = lead
        pos = number
        while True:
            if len(plan) >= 3:
                yield ("run", tuple(plan)), used
            pos += 1
            if pos > top or pos - start + 1 > longest:
                break
            face = colour * 13 + (pos - 1) % 13
            if pos != 14 and counts[face]:
                plan.append(face)
            else:
                plan.append(None)
                used += 1
                if used > okeys:
                    break


def find_pairs(faces: list[int], okeys: int, rules: Rules) -> list[Plan] | None:
    """Split faces plus okeys into pairs (an okey pairs with anything), or None."""
    plans: list[Plan] = []
    singles: list[int] = []
    for face, n in enumerate(faces):
        plans.extend(("pair", (face, face)) for _ in range(n // 2))
        if n % 2:
            singles.append(face)
    if len(singles) > okeys:
        return None
    plans.extend(("pair", (face, None)) for face in singles)
    left = okeys - len(singles)
    if left % 2:
        return None
    if left == 2:
        if rules.okey_pair_with_okey:
            plans.append(("pair", (None, None)))
        else:
            # Two okeys may not pair each other: split a real pair into two okey pairs instead.
            split = next((i for i, (_, f) in enumerate(plans) if f[1] is not None), None)
            if split is None:
                return None
            face = plans[split][1][0]
            plans[split : split + 1] = [("pair", (face, None)), ("pair", (face, None))]
    return plans


def _assign(plans: list[Plan], tiles: list[Tile], okey: Tile) -> list[Group]:
    """Turn planned groups back into the player's tiles, with the face each okey plays as."""
    pool = list(tiles)
    groups: list[Group] = []
    for kind, faces in plans:
        held: list[Tile] = []
        for face in faces:
            if face is None:
                pool.remove(okey)
                held.append(okey)
            elif Tile(face) in pool and Tile(face) != okey:
                pool.remove(Tile(face))
                held.append(Tile(face))
            else:
                pool.remove(Tile(FALSE_JOKER_INDEX))
                held.append(Tile(FALSE_JOKER_INDEX))
        groups.append(Group(kind, tuple(held), _stands_for(kind, faces, okey)))
    return groups


def _stands_for(kind: str, faces: tuple[int | None, ...], okey: Tile) -> tuple[Tile, ...]:
    """The face each position plays as: okeys take the value that completes the group."""
    real = [f for f in faces if f is not None]
    if kind == "pair":
        face = real[0] if real else okey.index
        return (Tile(face), Tile(face))
    if kind == "set":
        number = real[0] % 13 + 1 if real else 1
        used = {f // 13 for f in real}
        free = iter(c for c in range(4) if c not in used)
        return tuple(
            Tile(f) if f is not None else Tile(next(free) * 13 + number - 1) for f in faces
        )
    # A run: positions are consecutive; find where the first real face sits.
    colour = real[0] // 13 if real else 0
    offset = next((i for i, f in enumerate(faces) if f is not None), 0)
    start = (real[0] % 13 + 1 if real else 1) - offset
    if start < 1:  # the first real face is a 1 played high (12-13-1)
        start += 13
    out = []
    for i, f in enumerate(faces):
        if f is not None:
            out.append(Tile(f))
        else:
            out.append(Tile.of(COLOURS[colour], (start + i - 1) % 13 + 1))
    return tuple(out)
