"""A game followed over a table camera's frames: the tiles that have lain face up (``seen``), the
tiles taken from the discard piles, and every change with the frame it came from.

A *place* is where tiles lie (a discard pile, the indicator, a meld's tile).  Each frame's
readings are matched to the places by their centres (within ``REACH`` of a tile's long side),
and each place keeps its last ``window`` votes (the tile read there, or nothing) with the
classifier's probabilities.  The votes say *that* a tile is there; *which* tile it is, is what
the probabilities summed over its frames make it, and never a third copy of a tile (a set has
two of each, and two false jokers: a reading that would make a third is its next likeliest).  A
reading read every way up (``TableTile.ways``) is read the way the place's tiles lie, once its
sure readings agree on where their tops point (a discard pile's tiles all face the seat that
put them down: ``TableTracker._oriented``):

- a tile read at one place in ``confirm`` of the last ``window`` frames counts (the frames with
  nothing read there, a hand over it, stretch the window back by up to ``stretch`` frames): on
  an empty new place it is *added* to ``seen``; read where the tile below the top was (within
  ``POSE_SHIFT`` and ``POSE_TURN``) as that tile, or as another whose probabilities overlap
  that tile's own (``ALIKE``) lying nearer it than the top, the top was *taken* (recorded with
  the pile it came from, ``seen`` unchanged: the tile is known, now in a hand); read on top of
  another tile in ``confirm`` readings running, none of them the top, after the pile was
  hidden (a hand puts a tile down), a new tile was put on a pile and is *added* (unless they
  lie where the top lies and read like it, ``TOP_ALIKE``: the top read another way); the top itself
  read again after the pile was hidden, ``confirm`` readings running away from where it lay
  (``TOP_SHIFT``: the top seen again jitters a pixel or two), is a second copy put on it
  (*added*);
- every top tile is read again as frames come: when the probabilities summed over all the
  frames it lay on top name another tile by ``REREAD`` frames' worth, the tile is *corrected*
  (with that frame); a pile's top read now one way, now another stays what most frames read;
  only the readings lying where the top lies (``TOP_SHIFT``) re-read it;
- a reading a little off its place (a hand over part of the tile) whose tile is the top of a
  place within a tile's length is that place's;
- a place where nothing is read for ``gone`` frames in a row lost its last tile: *taken*;
  the same tile read there again afterwards was only hidden (a hand lingering), and the take is
  *returned* (never a take seen by the tile below shown again: that tile's twin put there later
  is *added*);
- a hand passing over the table hides tiles or shows skin for a few frames: nothing reaches
  ``confirm`` votes at one place, so nothing changes;
- a face whose numeral the classifier cannot name and whose top the way-up model cannot find
  is a false joker's mark, whatever its design (``marked``): each such reading gives a share of
  its probabilities to the false joker, so a tile read so frame after frame counts as one.

A person corrects a change by its id (``correct``): another tile, or no tile at all; a tile a
person named is not read again from the frames.

>>> from okey import Tile
>>> from vision.table import TableTile
>>> def frame(*tiles):
...     return [TableTile(k, Tile.parse(t), (x, 100, x + 40, 156), 0.9)
...             for k, (t, x) in enumerate(tiles)]
>>> tracker = TableTracker(image_size=(640, 480))
>>> for k in range(4):
...     changes = tracker.update(k, frame(("R5", 100), ("K7", 400)))
>>> [(c.kind, str(c.tile), c.frame) for c in changes]
[('added', 'R5', 3), ('added', 'K7', 3)]
>>> [str(t) for t in tracker.seen]
['R5', 'K7']
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from okey import Tile
from vision.table import TableTile, without_indicator

REACH = 0.45  # a reading belongs to a place within this share of a tile's long side
SHIFTED = 1.0  # or within this share, when the place's top tile is the tile read
WHOLE = (0.7, 2.0)  # a reading's size against a whole tile's there for it to count
# a nearly square box (its sides within SQUARE of each other: a tile turned about 45 degrees in
# it, boxed round its face) shows a tile's long side shorter: down to this share counts
SQUARE = 1.2
SQUARE_WHOLE = 0.55
PLANE_MIN = 4  # tiles to fit a whole tile's size down the picture
SLANT = 3.0  # a whole tile at the picture's bottom at most this many times one at its top
PLANE_BANDS = (2.5, 1.4, 1.2)  # each fit's points within this ratio of it make the next fit
POSE_SHIFT = 0.15  # a tile uncovered again lies within this share of a tile's long side
POSE_TURN = 20.0  # and within this many degrees of the turn it lay at
# a reading is the top tile's own (its probabilities re-read the top) only where the top lies:
# within this share of a tile's long side of the top's pose (a top seen again jitters a pixel or
# two; the tile below it uncovered, or a box shifted off by a hand, lies farther)
TOP_SHIFT = 0.08
# readings of another name are the tile below uncovered where they overlap its own readings (the
# classifier's probabilities summed) at least this much (``_alike``), and more than the top's
ALIKE = 0.25
# a pile's new top, read after a hand hid the pile, lying where the top lies and read this much
# like it (``_alike``) is the top read another way, not a tile put on it (where they lie on the
# top, two tiles' readings summed overlap 0.33-0.42 in the tune games; a held-out false joker
# read FJ for 100 frames, then B12 in other light, 0.91)
TOP_ALIKE = 0.5
# the table's sides as the camera sees them (near: the picture's bottom), and its middle (the
# face-down stacks and the indicator)
SIDES = ("near", "right", "far", "left", "middle")
REREAD = 2.0  # a top is re-read as another tile only when that tile leads by this many frames
# which way up a place's tiles lie (``TableTracker._oriented``): a reading shows it when its
# way-up reading is this sure; the place's readings agree when their tops' mean direction is
# this long (1: all alike); a nearly square box is read its way nearest it where the way-up
# model puts this much on that axis of the box
WAY_SURE = 0.9
WAY_AGREE = 0.8
WAY_AXIS = 0.5
MIDDLE = 0.12  # within this share of the picture's size from its centre: the middle
# a face whose numeral the classifier cannot name is a false joker's mark (``marked``): where a
# reading's numbers (each number's four colours summed, and the false joker) spread over
# UNSURE_FROM nats (entropy) or more, a share of it starts to count for the false joker, all of
# it from UNSURE_FULL on (readings of whole numbered tiles in the 32 tune games: 0.014 nats or
# less in nine of ten, over 0.2 in 1.5 %; held-out false jokers read B13, B12 or R13: over 0.2
# in 37 %) ...
UNSURE_FROM = 0.2
UNSURE_FULL = 0.6
# ... as far as the way-up model cannot find the face's top (a numeral shows which way is up; a
# clover, a star, a flower do not): from UP_SURE down to UP_LOST, its likeliest way's
# probability for a box read two ways (numbered tiles: 0.92 or more in nine of ten; the false
# jokers: 0.67 at the median) ...
UP_SURE = 0.9
UP_LOST = 0.6
# ... on a tile seen large enough for its numeral to be read surely: none below SMALL_PX (its
# long side in the picture), all from LARGE_PX on (the far pile's tiles, 35-55 px under a
# slanted camera, are read unsure whatever they show)
SMALL_PX = 50.0
LARGE_PX = 65.0


@dataclass(frozen=True)
class Change:
    """One change to the table's record."""

    id: int
    frame: int
    kind: str  # "added", "taken", "returned", "corrected", "removed"
    tile: Tile | None
    place: int
    pile: str  # the side of the table the place lies on (``SIDES``)
    of: int | None = None  # the change a correction, removal or return is about
    was: Tile | None = None  # a correction's former tile

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "frame": self.frame,
            "kind": self.kind,
            "tile": None if self.tile is None else str(self.tile),
            "place": self.place,
            "pile": self.pile,
            "of": self.of,
            "was": None if self.was is None else str(self.was),
        }


Pose = tuple[float, float, float]  # a reading's centre (x, y) and the turn of its long side


@dataclass
class _Laid:
    """A tile on a place's stack: the ``added`` change that counts it, where it lay, and what
    the classifier made of it over the frames it lay on top: the probabilities summed
    (``scores``, over ``frames`` frames), the last few kept apart (``recent``: they may turn
    out to be a new tile's put on it)."""

    tile: Tile
    change: int
    pose: Pose | None
    scores: np.ndarray = field(default_factory=lambda: np.zeros(53))
    frames: int = 0
    recent: deque[tuple[int, np.ndarray]] = field(default_factory=deque)
    pinned: bool = False  # a person named it: the frames no longer re-read it

    def read(self, frame: int, probs: np.ndarray, keep: int) -> None:
        self.scores = self.scores + probs
        self.frames += 1
        self.recent.append((frame, probs))
        while self.recent and self.recent[0][0] <= frame - keep:
            self.recent.popleft()

    def scores_before(self, frame: int) -> np.ndarray:
        """``scores`` without the readings from ``frame`` on (those kept apart in ``recent``)."""
        return self.scores - sum((p for f, p in self.recent if f >= frame), np.zeros(53))

    def forget_since(self, frame: int) -> None:
        """The readings from ``frame`` on were of another tile (put on this one)."""
        while self.recent and self.recent[-1][0] >= frame:
            _, probs = self.recent.pop()
            self.scores = self.scores - probs
            self.frames -= 1


@dataclass
class _Place:
    id: int
    centre: np.ndarray
    size: float
    votes: deque[Tile | None]
    poses: deque[Pose | None]
    probs: deque[np.ndarray | None]
    stack: list[_Laid] = field(default_factory=list)  # bottom to top
    hidden: bool = False  # nothing was read here since the top tile was last read
    first_unseen: int | None = None  # the first frame nothing was read since then
    empty_for: int = 0
    taken: tuple[_Laid, int] | None = None  # the last take from here: its tile and change
    # which way up the tiles here lie: the directions of their tops summed (x, y) over the
    # readings that show it surely, and how many (``TableTracker._oriented``)
    way: np.ndarray = field(default_factory=lambda: np.zeros(3))


class TableTracker:
    """The seen tiles of one table over a stream of frames (one tracker per camera)."""

    def __init__(
        self,
        *,
        image_size: tuple[int, int],
        confirm: int = 4,
        window: int = 5,
        gone: int = 8,
        stretch: int = 3,
        indicator: Tile | None = None,
        ways: bool = True,
        unsure_from: float = UNSURE_FROM,
        unsure_full: float = UNSURE_FULL,
        up_sure: float = UP_SURE,
        up_lost: float = UP_LOST,
        small_px: float = SMALL_PX,
        large_px: float = LARGE_PX,
    ) -> None:
        if not 1 <= confirm <= window:
            raise ValueError(f"confirm must be 1..window ({window}), got {confirm}")
        self.image_size = image_size
        self.confirm = confirm
        self.window = window
        # the window's frames with nothing read in them (a hand over the tile) stretch it back
        # by up to this many frames: a tile read in ``confirm`` of the last ``window`` frames it
        # was seen in counts
        self.stretch = stretch
        self._keep = window + stretch  # frames of votes a place keeps
        self.gone = gone
        self.indicator = indicator
        self.ways = ways  # a reading read every way up is read the way its place's tiles lie
        # a face no number names, whose top the way-up model cannot find: a false joker
        self.unsure = (unsure_from, unsure_full, up_sure, up_lost, small_px, large_px)
        self.changes: list[Change] = []
        self._places: list[_Place] = []
        self._counted: dict[int, Tile] = {}  # "added" change id -> the tile it counts
        self._frame = -1
        self._place_ids = -1
        self._read_now: set[int] = set()  # the places read in the frame being taken

    # ------------------------------------------------------------------ what it knows

    @property
    def seen(self) -> list[Tile]:
        """Every tile that has lain face up, in the order it was added (corrections applied)."""
        return list(self._counted.values())

    def seen_for_advice(self) -> list[Tile]:
        """``seen`` less one copy of the indicator (the adviser counts the indicator itself)."""
        return without_indicator(self.seen, self.indicator)

    @property
    def taken(self) -> list[Change]:
        """The takes from the piles that stand (not returned)."""
        returned = {c.of for c in self.changes if c.kind == "returned"}
        return [c for c in self.changes if c.kind == "taken" and c.id not in returned]

    def on_table(self) -> list[tuple[int, Tile, tuple[float, float]]]:
        """The top tile of every place now: (place, tile, centre)."""
        return [
            (p.id, p.stack[-1].tile, (float(p.centre[0]), float(p.centre[1])))
            for p in self._places
            if p.stack
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "frame": self._frame,
            "seen": [str(t) for t in self.seen],
            "indicator": None if self.indicator is None else str(self.indicator),
            "taken": [c.to_dict() for c in self.taken],
            "changes": [c.to_dict() for c in self.changes],
            "on_table": [
                {"place": p, "tile": str(t), "centre": [round(x, 1), round(y, 1)]}
                for p, t, (x, y) in self.on_table()
            ],
        }

    # ------------------------------------------------------------------ frames

    def update(self, frame: int, tiles: Sequence[TableTile]) -> list[Change]:
        """Take one frame's face-up tiles; returns the changes it made."""
        if frame <= self._frame:
            raise ValueError(f"frame {frame} comes after frame {self._frame}")
        self._frame = frame
        before = len(self.changes)
        anchors = [
            ((float(p.centre[0]), float(p.centre[1])), p.size) for p in self._places if p.stack
        ]
        matched = self._match(whole_tiles(tiles, anchors, self.image_size[1]))
        self._read_now = set(matched)
        for place in list(self._places):
            reading = matched.get(place.id)
            if reading is not None and reading.ways and self.ways:
                reading = self._oriented(place, reading)
            if reading is not None:
                reading = marked(reading, *self.unsure)
            place.votes.append(None if reading is None else reading.tile)
            place.poses.append(None if reading is None else pose_of(reading))
            place.probs.append(None if reading is None else probs_of(reading))
            if reading is not None and place.stack and self._on_top(place, reading):
                place.stack[-1].read(frame, place.probs[-1], self.window)
            if reading is None:
                if not place.hidden:
                    place.first_unseen = frame
                place.hidden = True
            if (
                reading is not None
                and place.stack
                and reading.tile == place.stack[-1].tile
                and not (
                    place.hidden and not _where_top(place.stack[-1].pose, pose_of(reading), place)
                )
            ):
                place.centre = 0.8 * place.centre + 0.2 * np.asarray(reading.centre)
                place.size = 0.8 * place.size + 0.2 * reading.size
                top = place.stack[-1]
                top.pose = _blend(top.pose, pose_of(reading))
                place.hidden = False
            self._decide(place)
            self._reread(place)
        # a place that never showed one tile long enough is forgotten (a hand, a misread)
        self._places = [
            p for p in self._places if p.stack or p.taken or any(v is not None for v in p.votes)
        ]
        return self.changes[before:]

    def _match(self, tiles: Sequence[TableTile]) -> dict[int, TableTile]:
        """Each place's reading this frame (nearest first); readings far from every place open
        new places."""
        pairs = []
        for k, t in enumerate(tiles):
            for p in self._places:
                d = math.dist(t.centre, p.centre)
                if d <= REACH * max(p.size, t.size):
                    pairs.append((d, k, p.id))
        pairs.sort()
        used_tiles: set[int] = set()
        out: dict[int, TableTile] = {}
        for _, k, pid in pairs:
            if k in used_tiles or pid in out:
                continue
            used_tiles.add(k)
            out[pid] = tiles[k]
        # the readings left, surest first: of two boxes on one tile the surer opens its place
        for k in sorted(range(len(tiles)), key=lambda k: -tiles[k].confidence):
            t = tiles[k]
            if k in used_tiles:
                continue
            # a box shifted off its place (a hand over part of the tile, the frame's edge) still
            # belongs to a free place nearby whose top is the tile read
            near = [
                p
                for p in self._places
                if p.id not in out
                and p.stack
                and p.stack[-1].tile == t.tile
                and math.dist(t.centre, p.centre) <= SHIFTED * max(p.size, t.size)
            ]
            if near:
                out[min(near, key=lambda p: math.dist(t.centre, p.centre)).id] = t
            elif not t.beside and any(
                math.dist(t.centre, p.centre) <= REACH * max(p.size, t.size)
                for p in self._places
                if p.id in out
            ):
                # one tile per spot: a second box on a place already read this frame is the same
                # tile boxed twice (a sideways tile's two numbers), not a tile beside it; a tile
                # a zoomed look found beside another in one over-long box is its own
                # (``TableTile.beside``: a meld's end tile under the indicator's stack)
                continue
            else:
                place = _Place(
                    id=self._next_place_id(),
                    centre=np.asarray(t.centre, float),
                    size=t.size,
                    votes=deque([None] * (self._keep - 1), maxlen=self._keep),
                    poses=deque([None] * (self._keep - 1), maxlen=self._keep),
                    probs=deque([None] * (self._keep - 1), maxlen=self._keep),
                )
                self._places.append(place)
                out[place.id] = t
        return out

    def _oriented(self, place: _Place, reading: TableTile) -> TableTile:
        """``reading`` read the way up the place's tiles lie (all the tiles of a discard pile lie
        turned the same way, towards the seat that put them down).  The place's direction is
        where the tops of its tiles point in the readings that show it surely: a box clearly
        longer than wide (read two ways) whose way-up reading is sure (``WAY_SURE``).  Once
        ``confirm`` such readings agree on one direction (``WAY_AGREE``), a reading is read its
        way nearest that direction (a tile the way-up model is unsure of; a nearly square box,
        read four ways, whose surest reading is upside down), unless the box is nearly square
        and the way-up model finds the tile's top on its other axis."""
        ways = reading.ways
        if len(ways) == 2:
            best = max(ways, key=lambda w: w.upright)
            if best.upright >= WAY_SURE:
                a = math.radians(best.up)
                place.way += np.array([math.cos(a), math.sin(a), 1.0])
        x, y, n = place.way
        agree = math.hypot(x, y) / max(n, 1.0)
        if n < self.confirm or agree < WAY_AGREE:
            return reading
        direction = math.degrees(math.atan2(y, x))
        way = min(ways, key=lambda w: _apart(w.up, direction))
        # a nearly square box read four ways: the place tells which end of the box is the top,
        # not which of its sides is long; where the way-up model finds the top off the box's
        # axis nearest the place's direction (a box turned 45 degrees off its tile: two of its
        # ways lie about as near), the reading stays as read
        axis = sum(w.upright for w in ways if _apart(w.up, way.up) > 135.0 or w is way)
        if len(ways) > 2 and axis < WAY_AXIS:
            return reading
        tile = Tile(int(np.argmax(way.probs)))
        return dataclasses.replace(reading, tile=tile, probs=way.probs)

    def _next_place_id(self) -> int:
        self._place_ids += 1
        return self._place_ids

    def _decide(self, place: _Place) -> None:
        # the votes of the last ``window`` frames, stretched back over frames with nothing read
        votes = list(place.votes)
        seen = [v for v in votes[-self.window :] if v is not None]
        before = [v for v in votes[: -self.window] if v is not None]
        misses = self.window - len(seen)
        counts = Counter(before[len(before) - min(misses, len(before)) :] + seen)
        place.empty_for = place.empty_for + 1 if place.votes[-1] is None else 0
        if counts:
            tile, n = counts.most_common(1)[0]
            if n >= self.confirm:
                self._confirmed(place, tile)
                return
        if place.stack and place.empty_for >= self.gone:
            self._take(place)
            place.empty_for = 0  # the tile below, if any, is taken only after as long again

    def _take(self, place: _Place) -> None:
        top = place.stack.pop()
        change = self._record("taken", top.tile, place, of=top.change)
        place.taken = (top, change.id)

    def _confirmed(self, place: _Place, tile: Tile) -> None:
        stack, vote = place.stack, tile
        if stack and stack[-1].tile == tile:
            self._twin(place)
            return
        # the last ``confirm`` readings, frames with nothing read (a hand passing) skipped
        read = self._readings(place)
        if stack:
            read = read[-self.confirm :]
            if any(v == stack[-1].tile for _, v, _, _ in read):
                # a pile's top changes only on ``confirm`` readings in a row: a top tile read
                # now one way, now another (turned, half under a hand) stays what it was
                return
        # the tile is what the frames' probabilities summed make it (the votes say that a tile
        # is there)
        scores = np.sum([p for *_, p in read], axis=0)
        tile = Tile(int(np.argmax(scores)))
        if stack and stack[-1].tile == tile:
            return
        pose = _median_pose([p for v, p in zip(place.votes, place.poses, strict=True) if v == vote])
        if len(stack) >= 2 and self._uncovered(place, tile, pose, scores):
            self._take(place)  # the tile below the top shows again where it lay
            # a take seen so is no hand lingering: the same tile put here later is its other
            # copy, never the taken one returned
            place.taken = None
            return
        if place.taken is not None and place.taken[0].tile == tile:
            # the tile taken from here is back: it was only hidden, never taken
            laid, take = place.taken
            place.taken = None
            stack.append(laid)
            self._record("returned", tile, place, of=take)
            return
        if self._same_tile_nearby(place, tile):
            return
        hidden_before = place.first_unseen is not None and place.first_unseen < read[0][0]
        if stack and not (place.hidden and hidden_before):
            # read another way without anything hiding the pile before (a hand would have
            # hidden it while putting a tile down): the top's own frames re-read it (``_reread``)
            return
        tile = self._likeliest(scores)  # a new tile on the table: never a third copy
        if stack:
            top = stack[-1]
            if top.tile == tile:
                return
            # (a top with no readings before these is like nothing: ``_alike`` gives 0)
            if (
                _where_top(top.pose, pose, place)
                and _alike(scores, top.scores_before(read[0][0])) >= TOP_ALIKE
            ):
                # lying where the top lies, read like it: the top read another way after a
                # hand hid it (a held-out false joker read FJ, then B12 in other light)
                return
            top.forget_since(read[0][0])  # the new tile's readings are not the one below's
        change = self._record("added", tile, place)
        laid = _Laid(tile, change.id, pose)
        for f, *_, p in read:
            laid.read(f, p, self.window)
        stack.append(laid)
        self._counted[change.id] = tile
        place.hidden = False  # the pile is seen with its new top: hidden again only from now

    def _on_top(self, place: _Place, reading: TableTile) -> bool:
        """Whether a reading at ``place`` is of its top tile as far as where it lies goes: read
        as the top, or lying where the top lies (``TOP_SHIFT``).  Only those re-read the top: a
        tile below uncovered or a box shifted off by a hand is another tile's reading."""
        top = place.stack[-1]
        if reading.tile == top.tile or top.pose is None:
            return True
        return math.dist(pose_of(reading)[:2], top.pose[:2]) <= TOP_SHIFT * place.size

    def _uncovered(self, place: _Place, tile: Tile, pose: Pose | None, scores: np.ndarray) -> bool:
        """Whether readings of ``tile`` at ``pose`` (``scores``: their probabilities summed) are
        the tile below the top shown again where it lay: the top was taken.  The tile below is
        known by where it lay and by what the classifier made of it while it was on top: read
        as itself, or (a tile the classifier reads now one way, now another: a held-out false
        joker read B13 or B12) lying where it lay, away from the top, with readings more like
        its own than like the top's."""
        below, top = place.stack[-2], place.stack[-1]
        if not _same_pose(below.pose, pose, place):
            return False
        if below.tile == tile:
            return True
        if pose is None or top.pose is None or below.frames == 0 or top.frames == 0:
            return False
        if math.dist(pose[:2], top.pose[:2]) <= 2 * math.dist(pose[:2], below.pose[:2]):
            return False
        like = _alike(scores, below.scores)
        return like >= ALIKE and like > _alike(scores, top.scores)

    def _readings(self, place: _Place) -> list[tuple[int, Tile, Pose | None, np.ndarray]]:
        """The frames of a place's window where a tile was read: frame, tile, pose and the
        classifier's probabilities, oldest first."""
        first = self._frame - len(place.votes) + 1
        rows = zip(place.votes, place.poses, place.probs, strict=True)
        return [(first + k, v, q, p) for k, (v, q, p) in enumerate(rows) if v is not None]

    def _twin(self, place: _Place) -> None:
        """The top read again after the pile was hidden, ``confirm`` readings in a row away from
        where it lay: a second copy was put on it (``added``), unless that makes a third copy."""
        if not place.hidden:
            return
        read = self._readings(place)[-self.confirm :]
        top = place.stack[-1]
        if len(read) < self.confirm or any(v != top.tile for _, v, _, _ in read):
            return
        if place.first_unseen is None or place.first_unseen >= read[0][0]:
            return
        pose = _median_pose([q for _, _, q, _ in read])
        if _where_top(top.pose, pose, place):
            return
        copies = sum(t == top.tile for t in self._counted.values())
        if copies < 2:
            top.forget_since(read[0][0])
            change = self._record("added", top.tile, place)
            laid = _Laid(top.tile, change.id, pose)
            for f, _, _, p in read:
                laid.read(f, p, self.window)
            place.stack.append(laid)
            self._counted[change.id] = top.tile
        else:
            top.pose = pose  # moved, not a copy: the set has no third
        place.hidden = False

    def _reread(self, place: _Place) -> None:
        """A top tile read again from all its frames: where the probabilities summed over them
        name another tile (the first frames misread it), the tile is *corrected*."""
        if not place.stack:
            return
        top = place.stack[-1]
        if top.pinned or top.change not in self._counted or top.frames < self.confirm:
            return
        scores = top.scores
        tile = self._likeliest(scores, top.change)
        if tile != top.tile and scores[tile.index] >= scores[top.tile.index] + REREAD:
            self._record("corrected", tile, place, of=top.change, was=top.tile)
            self._counted[top.change] = tile
            top.tile = tile

    def _likeliest(self, scores: np.ndarray, change: int | None = None) -> Tile:
        """The most likely tile by ``scores`` that the record holds fewer than two copies of
        (``change``'s own tile not counted): a set has two of each tile and two false jokers,
        so a reading that would make a third copy is its next most likely tile."""
        copies = Counter(t for c, t in self._counted.items() if c != change)
        for index in np.argsort(-scores, kind="stable"):
            tile = Tile(int(index))
            if copies[tile] < 2:
                return tile
        return Tile(int(np.argmax(scores)))

    def _same_tile_nearby(self, place: _Place, tile: Tile) -> bool:
        """Whether ``tile``, confirmed at ``place``, is a tile already counted at a place within a
        tile's length (its box seen shifted: half under a hand, at the frame's edge): a new place
        is then dropped, and a place holding only that tile is folded into this pile.  A place
        read in the same frame is another tile (a meld's twins side by side), never this one."""
        for other in self._places:
            if (
                other is place
                or not other.stack
                or other.id in self._read_now  # read beside it in this frame: another tile
                or other.stack[-1].tile != tile
                or math.dist(other.centre, place.centre) > SHIFTED * max(other.size, place.size)
            ):
                continue
            if not place.stack:
                place.votes.clear()
                place.votes.extend([None] * self._keep)
                place.probs.clear()
                place.probs.extend([None] * self._keep)
                return True
            if len(other.stack) == 1:
                place.stack.append(other.stack.pop())
                self._places.remove(other)
                return True
        return False

    def _record(self, kind: str, tile: Tile | None, place: _Place, **extra: Any) -> Change:
        change = Change(
            id=len(self.changes),
            frame=self._frame,
            kind=kind,
            tile=tile,
            place=place.id,
            pile=self.side(place.centre),
            **extra,
        )
        self.changes.append(change)
        return change

    def side(self, centre: Sequence[float] | np.ndarray) -> str:
        """The side of the table a point lies towards, from the picture's centre."""
        w, h = self.image_size
        dx, dy = (float(centre[0]) - w / 2) / w, (float(centre[1]) - h / 2) / h
        if max(abs(dx), abs(dy)) <= MIDDLE:
            return "middle"
        if abs(dy) >= abs(dx):
            return "near" if dy > 0 else "far"
        return "right" if dx > 0 else "left"

    # ------------------------------------------------------------------ corrections

    def correct(self, change_id: int, tile: Tile | None) -> Change:
        """A person's correction of an ``added`` change: the tile was ``tile`` (None: there was
        no tile).  Returns the correction's own change."""
        target = next((c for c in self.changes if c.id == change_id), None)
        if target is None:
            raise KeyError(f"no change {change_id}")
        if target.kind != "added":
            raise ValueError(
                f"change {change_id} is {target.kind!r}: only an added tile is corrected"
            )
        if change_id not in self._counted:
            raise ValueError(f"change {change_id} was already removed")
        was = self._counted[change_id]
        place = next((p for p in self._places if p.id == target.place), None)
        if tile is None:
            del self._counted[change_id]
            if place is not None:
                place.stack = [laid for laid in place.stack if laid.change != change_id]
            kind = "removed"
        else:
            self._counted[change_id] = tile
            if place is not None:
                for laid in place.stack:
                    if laid.change == change_id:
                        laid.tile = tile
                        laid.pinned = True
            kind = "corrected"
        change = Change(
            id=len(self.changes),
            frame=self._frame,
            kind=kind,
            tile=tile,
            place=target.place,
            pile=target.pile,
            of=change_id,
            was=was,
        )
        self.changes.append(change)
        return change


def whole_tiles(
    tiles: Sequence[TableTile],
    anchors: Sequence[tuple[tuple[float, float], float]] = (),
    height: float | None = None,
) -> list[TableTile]:
    """The readings of tiles seen whole: a box much smaller than a whole tile would be there (a
    tile half under a hand or another tile) or much larger (two tiles, or a hand, in one box)
    reads what it shows, not the tile, and counts as nothing seen.

    A camera looking down at a slant sees the far tiles smaller than the near ones, so the size a
    whole tile has at a point is fitted across the picture (``usual_sizes``) from the frame's
    readings and ``anchors`` (the centre and size of tiles known to lie whole: a tracker's piles).

    >>> from okey import Tile
    >>> tiles = [TableTile(k, Tile(k), (10 * k, 0, 10 * k + w, w), 0.9)
    ...          for k, w in enumerate([56, 56, 56, 12])]
    >>> len(whole_tiles(tiles))
    3
    """
    if len(tiles) + len(anchors) < 3:
        return list(tiles)
    points = [(t.centre, t.size) for t in tiles] + list(anchors)
    usual = usual_sizes(points, height)[: len(tiles)]
    return [
        t
        for t, u in zip(tiles, usual, strict=True)
        if (SQUARE_WHOLE if _squarish(t) else WHOLE[0]) * u <= t.size <= WHOLE[1] * u
    ]


def marked(
    reading: TableTile,
    unsure_from: float,
    unsure_full: float,
    up_sure: float = 1.01,
    up_lost: float = 1.0,
    small_px: float = 0.0,
    large_px: float = 0.0,
) -> TableTile:
    """``reading`` with a share of its probabilities moved to the false joker where its face
    shows no numeral: the classifier spreads it over several numbers (entropy of the numbers'
    probabilities from ``unsure_from`` nats; all of it from ``unsure_full``), the way-up model
    cannot tell its top (its likeliest way under ``up_sure``; all of it from ``up_lost``; a box
    read two ways only: a nearly square box's four ways split the model over its sides), and
    the tile is seen large enough (``small_px`` to ``large_px``, its long side) for its numeral
    to be read.  A false joker of a design the classifier never saw (a flower, a star) is read
    B13, B12 or R13 by turns, unsure, with no way up; a numbered tile lying whole is read
    surely, and a numeral shows its top.  The colours are not looked at: a blue 8 read now
    blue, now black is sure of its number.  Summed over a place's frames (the tracker's
    ``scores``), a tile read so frame after frame is a false joker; an unsure frame among
    sure ones changes nothing.  With the way-up gate (``up_sure`` at most 1, as the tracker
    asks) a reading without its ways is left as it is.

    >>> from okey import Tile
    >>> from vision.table import Way
    >>> spread = np.zeros(53); spread[[37, 38, 12]] = [0.5, 0.3, 0.2]  # B12, B13, R13
    >>> ways = (Way(-90, 0.55, spread), Way(90, 0.45, spread))
    >>> t = TableTile(0, Tile(37), (0, 0, 40, 56), 0.9, probs=spread, ways=ways)
    >>> str(marked(t, 0.2, 0.6, 0.9, 0.6).tile)
    'FJ'
    >>> str(marked(t, 0.2, 0.6).tile)  # no way-up evidence asked for: the spread alone
    'FJ'
    """
    if unsure_full <= 0:
        return reading
    probs = probs_of(reading)
    # the numbers' probabilities (each number's four colours summed, and the false joker's): a
    # blue 8 read now blue, now black is sure of its numeral
    numbers = np.append(probs[:52].reshape(4, 13).sum(axis=0), probs[52])
    p = np.clip(numbers, 1e-12, None) / max(float(numbers.sum()), 1e-12)
    spread = float(-(p * np.log(p)).sum())
    share = min(max((spread - unsure_from) / max(unsure_full - unsure_from, 1e-9), 0.0), 1.0)
    if share > 0 and large_px > 0:
        share *= min(max((reading.size - small_px) / max(large_px - small_px, 1e-9), 0.0), 1.0)
    if share > 0 and up_sure <= 1.0:
        up = max(w.upright for w in reading.ways) if len(reading.ways) == 2 else 1.0
        share *= min(max((up_sure - up) / max(up_sure - up_lost, 1e-9), 0.0), 1.0)
    if share <= 0:
        return reading
    out = probs * (1.0 - share)
    out[Tile.false_joker().index] += share * float(probs.sum())
    return dataclasses.replace(reading, tile=Tile(int(np.argmax(out))), probs=out)


def _squarish(tile: TableTile) -> bool:
    """Whether a reading's turned box is nearly square (sides within ``SQUARE`` of each other)."""
    if tile.quad is None:
        return False
    q = np.asarray(tile.quad)
    a, b = float(np.hypot(*(q[1] - q[0]))), float(np.hypot(*(q[3] - q[0])))
    return max(a, b) <= SQUARE * max(min(a, b), 1e-6)


def usual_sizes(
    points: Sequence[tuple[tuple[float, float], float]], height: float | None = None
) -> np.ndarray:
    """The size a whole tile has at each point ``(centre, size)`` of a picture ``height`` px
    high: a camera at a slant sees a flat table's tiles smaller the farther up the picture they
    lie, so with ``PLANE_MIN`` points or more a line is fitted to their log sizes down the
    picture (at most ``SLANT`` times larger from top to bottom), refitted without the points far
    off it (covered tiles, a hand: ``PLANE_BANDS``); with fewer, the median size.

    >>> far_to_near = [((x, y), s) for x, y, s in [(0, 0, 40), (300, 100, 48), (100, 200, 58),
    ...                                              (200, 300, 70), (0, 400, 84), (90, 420, 30)]]
    >>> [round(float(u)) for u in usual_sizes(far_to_near, 480)]
    [40, 48, 58, 70, 84, 88]
    """
    sizes = np.log(np.array([max(float(s), 1.0) for _, s in points]))
    median = math.exp(float(np.median(sizes)))
    if len(points) < PLANE_MIN:
        return np.full(len(points), median)
    y = np.array([c[1] for c, _ in points], float)
    most = math.log(SLANT) / max(height or float(y.max()), 1.0)
    keep = np.ones(len(points), bool)
    fit = np.full(len(points), math.log(median))
    for band in PLANE_BANDS:
        if keep.sum() < PLANE_MIN:
            break
        ys, ss = y[keep], sizes[keep]
        spread = float(np.var(ys))
        slope = float(np.cov(ys, ss, bias=True)[0, 1] / spread) if spread > 0 else 0.0
        slope = min(max(slope, -most), most)
        fit = float(ss.mean()) + slope * (y - float(ys.mean()))
        keep = np.abs(sizes - fit) <= math.log(band)
    return np.exp(fit)


def _alike(a: np.ndarray, b: np.ndarray) -> float:
    """How alike two sums of the classifier's probabilities are: the overlap of the two
    distributions they make (Bhattacharyya's coefficient, 0-1)."""
    sa, sb = float(np.sum(a)), float(np.sum(b))
    if sa <= 0 or sb <= 0:
        return 0.0
    return float(np.sum(np.sqrt(np.clip(a / sa, 0, None) * np.clip(b / sb, 0, None))))


def _apart(a: float, b: float) -> float:
    """Degrees between two directions."""
    return abs((a - b + 180.0) % 360.0 - 180.0)


def probs_of(tile: TableTile) -> np.ndarray:
    """A reading's probability of each tile: the classifier's, or all on the tile read."""
    if tile.probs is not None:
        return np.asarray(tile.probs, float)
    out = np.zeros(53)
    out[tile.tile.index] = 1.0
    return out


def pose_of(tile: TableTile) -> Pose:
    """A reading's centre and the turn of its long side (degrees, 0-180; 0 without an outline;
    NaN for a nearly square box, ``_squarish``: its sides say nothing of the tile's turn)."""
    x, y = tile.centre
    if tile.quad is None:
        return (x, y, 0.0)
    if _squarish(tile):
        return (x, y, math.nan)
    q = np.asarray(tile.quad)
    side = q[1] - q[0] if np.hypot(*(q[1] - q[0])) >= np.hypot(*(q[3] - q[0])) else q[3] - q[0]
    return (x, y, float(np.degrees(np.arctan2(side[1], side[0])) % 180.0))


def _blend(old: Pose | None, new: Pose, rate: float = 0.3) -> Pose:
    """A top tile's pose refreshed by a new reading of it (the turn blended modulo a right
    angle, as turns are compared: ``_same_pose``)."""
    if old is None:
        return new
    if math.isnan(old[2]) or math.isnan(new[2]):
        blended = new[2] if math.isnan(old[2]) else old[2]
    else:
        blended = (old[2] + rate * ((new[2] - old[2] + 45.0) % 90.0 - 45.0)) % 180.0
    return (old[0] + rate * (new[0] - old[0]), old[1] + rate * (new[1] - old[1]), blended)


def _median_pose(poses: list[Pose | None]) -> Pose | None:
    """The median centre of ``poses`` and their mean turn modulo a right angle (a tile's box
    may name either side the long one: boxes at 68 and 153 degrees lie alike)."""
    known = np.asarray([p for p in poses if p is not None], float)
    if not len(known):
        return None
    x, y = (float(v) for v in np.median(known[:, :2], axis=0))
    turns = known[~np.isnan(known[:, 2]), 2]
    if not len(turns):
        return (x, y, math.nan)
    quarter = np.radians(turns * 4.0)  # a right angle's period made a whole turn's
    turn = math.degrees(math.atan2(np.sin(quarter).sum(), np.cos(quarter).sum())) / 4.0
    return (x, y, turn % 90.0)


def _where_top(a: Pose | None, b: Pose | None, place: _Place) -> bool:
    """Whether a tile lies where the top lay (within ``TOP_SHIFT`` and ``POSE_TURN``): the top
    seen again after a hand hid it, not its twin put on it a little off."""
    if a is None or b is None:
        return True
    return math.dist(a[:2], b[:2]) <= TOP_SHIFT * place.size and _turned(a, b) <= POSE_TURN


def _same_pose(a: Pose | None, b: Pose | None, place: _Place) -> bool:
    """Whether a tile lies where and as another lay (within ``POSE_SHIFT`` and ``POSE_TURN``): a
    tile uncovered again, not a second copy of it put on the pile.  Turns are compared modulo a
    right angle: the detector's box of a tile may name either side the long one."""
    if a is None or b is None:
        return True
    return math.dist(a[:2], b[:2]) <= POSE_SHIFT * place.size and _turned(a, b) <= POSE_TURN


def _turned(a: Pose, b: Pose) -> float:
    """Degrees between two poses' turns modulo a right angle (0 where a nearly square box gives
    no turn)."""
    if math.isnan(a[2]) or math.isnan(b[2]):
        return 0.0
    turn = abs(a[2] - b[2]) % 90.0
    return min(turn, 90.0 - turn)
