"""Self-play: four policies play seeded games of classic Okey or 101 under the engine's rules.

    .venv/bin/python benchmarks/selfplay.py --games 1000                    # istaka vs 3 greedy
    .venv/bin/python benchmarks/selfplay.py --games 400 --lineup greedy,random,random,random
    .venv/bin/python benchmarks/selfplay.py --game okey101 --games 200     # 101 rounds

Each game deals a shuffled 106-tile set (``--seed`` plus the game's number): an indicator (no
false joker), 15 tiles to the first seat, 14 to the others (101: 22 and 21).  The lineup's
policies are rotated one seat per game, so each starts a quarter of the games.  A policy sees
only what its player could: its own hand, the indicator, the discards as they were thrown (a
player at the table sees every discard land; the ones since taken count as out of play, as the
tiles the others took), and in 101 the melds on the table.

Policies (each with its own seeded generator for its ties):

* ``random``: takes the offered tile or draws at random, discards at random.
* ``greedy``: always draws; discards a tile leaving the fewest tiles from a win
  (``distance_to_win`` with what it has seen), ties at random.  101: opens and lays off as soon
  as it can, discards the tile that keeps the highest opening (the lowest leftover once open),
  ties at random, blind to the table's melds.
* ``istaka``: ``okey.take_or_draw`` then ``okey.advise``'s best discard (101:
  ``take_or_draw`` with the table, ``okey.okey101.advise_discard`` with the table's melds; once
  open with fewer than 21 tiles, the tile leaving the smallest leftover, a tile fitting a table
  meld or an okey counted 101 more).
* ``istaka-draw``: ``istaka``'s discards, always drawing (what the take advice adds).

Classic: after each discard a hand whose 14 tiles win (``check_win``) ends the game; when the
centre is empty and the player does not take, the game is a draw.  101: a player opens when its
best opening reaches the threshold (melds, or five pairs), lays off what it can once open, and
finishes when its hand is gone; a round whose centre runs out ends with nobody finishing.  Round
points as ``okey.okey101.score_round`` counts them: -101 for the finisher, the face values left
in hand (an okey 101 more), 202 for a player who never opened, and 101 for each discard that fits
a table meld or is an okey.

It prints, per policy: games seated, wins, the share of all games and of the decided games
(95 % Wilson intervals), the mean turns of a winner, and in 101 the mean points per round and the
extra penalties; then the draws and the time taken.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from okey import FULL_SET, Rules, Tile, advise, check_win, distance_to_win, okey_for, take_or_draw
from okey.okey101 import (
    Meld,
    PlayerRound101,
    Round101,
    advise_discard,
    best_opening,
    best_pairs_opening,
    could_lay_off,
    lay_offs,
    min_leftover,
    opening_threshold,
    read_meld,
    score_round,
)

POLICIES = ("random", "greedy", "istaka", "istaka-draw")


@dataclass
class View:
    """What one player knows at its decision: its hand, the indicator, the offered tile (the
    last discard, None on the first turn), the other tiles out of play it has seen."""

    hand: list[Tile]
    indicator: Tile
    offered: Tile | None
    seen: list[Tile]
    rules: Rules
    table: list[Meld] = field(default_factory=list)  # 101: the melds on the table
    opened: bool = False  # 101: this player has opened
    pairs: bool = False  # 101: ... with pairs (then it may only lay tiles off)


class Policy:
    """A player's choices: take the offered tile or draw, then which tile to discard."""

    name = "policy"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def take(self, view: View) -> bool:
        raise NotImplementedError

    def discard(self, view: View) -> Tile:
        raise NotImplementedError


class RandomPolicy(Policy):
    name = "random"

    def take(self, view: View) -> bool:
        # (101: a take must be used at once; the random player only draws there.)
        return view.rules.game == "classic" and self.rng.random() < 0.5

    def discard(self, view: View) -> Tile:
        return self.rng.choice(view.hand)


class GreedyPolicy(Policy):
    name = "greedy"

    def take(self, view: View) -> bool:
        return False

    def discard(self, view: View) -> Tile:
        if view.rules.game == "okey101":
            scored = {tile: _greedy_101(view, tile) for tile in set(view.hand)}
        else:
            scored = {}
            for tile in set(view.hand):
                rest = list(view.hand)
                rest.remove(tile)
                seen = [*view.seen, tile]
                scored[tile] = distance_to_win(rest, view.indicator, view.rules, seen)
        least = min(scored.values())
        return self.rng.choice(sorted(t for t, d in scored.items() if d == least))


def _greedy_101(view: View, tile: Tile) -> tuple[int, ...]:
    """The greedy 101 rank of a discard, blind to the table: unopened, the highest opening
    (melds or pairs) then the lowest leftover; open, the lowest leftover."""
    rest = list(view.hand)
    rest.remove(tile)
    leftover = min_leftover(rest, view.indicator, view.rules).penalty
    if view.opened:
        return (leftover,)
    points = best_opening(rest, view.indicator, view.rules).points
    pairs = best_pairs_opening(rest, view.indicator, view.rules).count
    threshold = opening_threshold(view.rules)
    opens = points >= threshold or pairs >= view.rules.pairs_opening_min
    return (0 if opens else 1, 0 if opens else -points, leftover)


class IstakaPolicy(Policy):
    name = "istaka"

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.planned: Tile | None = None

    def take(self, view: View) -> bool:
        assert view.offered is not None
        answer = take_or_draw(
            view.hand,
            view.offered,
            view.indicator,
            view.rules,
            view.seen,
            table=view.table,
            opened=view.opened,
        )
        self.planned = answer.discard
        if answer.take and view.pairs:
            # A pairs opener lays no new meld: only a tile that goes onto the table is usable.
            fits = could_lay_off(view.offered, view.table, view.indicator, view.rules)
            return bool(view.table) and fits is not None
        return answer.take

    def discard(self, view: View) -> Tile:
        planned, self.planned = self.planned, None
        if planned is not None and planned in view.hand:
            return planned
        if view.rules.game == "classic":
            return advise(view.hand, view.indicator, view.rules, view.seen).best.discard
        if not view.opened and len(view.hand) == view.rules.max_rack_tiles:
            ranked = advise_discard(
                view.hand, view.indicator, view.rules, table=view.table, opened=False
            )
            return ranked[0].tile
        return min(set(view.hand), key=lambda tile: (_cost_101(view, tile), tile.index))


def _cost_101(view: View, tile: Tile) -> int:
    """Points a discard leaves an open hand with: its smallest leftover, plus 101 for a tile
    that fits a table meld or is an okey (``okey.okey101.advise_discard``'s penalties)."""
    rest = list(view.hand)
    rest.remove(tile)
    cost = min_leftover(rest, view.indicator, view.rules).penalty
    fits = bool(view.table) and could_lay_off(tile, view.table, view.indicator, view.rules)
    return cost + (101 if tile == okey_for(view.indicator) or fits else 0)


class DrawingIstakaPolicy(IstakaPolicy):
    """``istaka``'s discards, but always a draw: what the discard advice alone is worth."""

    name = "istaka-draw"

    def take(self, view: View) -> bool:
        return False


CLASSES = {
    "random": RandomPolicy,
    "greedy": GreedyPolicy,
    "istaka": IstakaPolicy,
    "istaka-draw": DrawingIstakaPolicy,
}


@dataclass
class Table:
    """The public state of one game: the centre, the discards lying face up, what each player
    took from them (known to all)."""

    centre: list[Tile]
    indicator: Tile
    lying: Counter = field(default_factory=Counter)
    taken: list[Counter] = field(default_factory=lambda: [Counter() for _ in range(4)])

    def seen_by(self, seat: int, offered: Tile | None) -> list[Tile]:
        """The tiles out of play ``seat`` knows of, the offered one left out."""
        out = Counter(self.lying)
        for other in range(4):
            if other != seat:
                out += self.taken[other]
        if offered is not None:
            out[offered] -= 1
        return list(out.elements())

    def discarded(self, seat: int, tile: Tile) -> None:
        self.lying[tile] += 1
        if self.taken[seat][tile]:
            self.taken[seat][tile] -= 1  # a taken tile thrown again lies in the open again

    def took(self, seat: int, tile: Tile) -> None:
        self.lying[tile] -= 1
        self.taken[seat][tile] += 1


@dataclass(frozen=True)
class Result:
    winner: str | None  # the winning policy, None for a draw
    turns: int  # the winner's turns (0 for a draw)
    seated: tuple[str, ...]  # the policy at each seat
    points: tuple[int, ...] = ()  # 101: each seat's round points
    penalties: tuple[int, ...] = ()  # 101: each seat's extra 101 penalties


def deal(seed: int, first: int, others: int) -> tuple[Tile, list[list[Tile]], list[Tile]]:
    pool = list(FULL_SET)
    random.Random(seed).shuffle(pool)
    indicator = next(t for t in pool if not t.is_false_joker)
    pool.remove(indicator)
    hands = [pool[:first]]
    at = first
    for _ in range(3):
        hands.append(pool[at : at + others])
        at += others
    return indicator, hands, pool[at:]


def play_classic(seed: int, lineup: list[str]) -> Result:
    rules = Rules.classic()
    indicator, hands, centre = deal(seed, 15, 14)
    players = [CLASSES[name](random.Random(seed * 4 + seat)) for seat, name in enumerate(lineup)]
    table = Table(centre, indicator)
    turns = [0] * 4
    offered: Tile | None = None
    seat = 0
    while True:
        hand = hands[seat]
        player = players[seat]
        turns[seat] += 1
        if offered is not None:
            view = View(hand, indicator, offered, table.seen_by(seat, offered), rules)
            if player.take(view):
                table.took(seat, offered)
                hand.append(offered)
            elif table.centre:
                hand.append(table.centre.pop())
            else:
                return Result(None, 0, tuple(lineup))
        view = View(hand, indicator, None, table.seen_by(seat, None), rules)
        thrown = player.discard(view)
        hand.remove(thrown)
        table.discarded(seat, thrown)
        if check_win(hand, indicator, rules).winning:
            return Result(lineup[seat], turns[seat], tuple(lineup))
        offered = thrown
        seat = (seat + 1) % 4


@dataclass
class Seat101:
    """One 101 player's state: hand, how it opened, its extra penalties."""

    hand: list[Tile]
    opened: bool = False
    pairs: bool = False
    penalties: list[str] = field(default_factory=list)


def play_101(seed: int, lineup: list[str]) -> Result:
    rules = Rules.okey101()
    indicator, hands, centre = deal(seed, 22, 21)
    okey = okey_for(indicator)
    players = [CLASSES[name](random.Random(seed * 4 + seat)) for seat, name in enumerate(lineup)]
    seats = [Seat101(hand) for hand in hands]
    table = Table(centre, indicator)
    melds: list[Meld] = []
    turns = [0] * 4
    offered: Tile | None = None
    seat = 0
    finisher = None
    while finisher is None:
        me, player = seats[seat], players[seat]
        turns[seat] += 1
        took = None
        if offered is not None:
            seen = table.seen_by(seat, offered)
            view = View(me.hand, indicator, offered, seen, rules, melds, me.opened, me.pairs)
            if player.take(view):
                took = offered
                table.took(seat, offered)
                me.hand.append(offered)
            elif table.centre:
                me.hand.append(table.centre.pop())
            else:
                break
        _lay(me, melds, indicator, rules, took)
        seen = table.seen_by(seat, None)
        view = View(me.hand, indicator, None, seen, rules, melds, me.opened, me.pairs)
        thrown = player.discard(view)
        me.hand.remove(thrown)
        table.discarded(seat, thrown)
        if me.opened and not me.hand:
            finisher = seat
            okey_finish = thrown == okey
            break
        if thrown == okey:
            me.penalties.append("okey_discard")
        elif melds and could_lay_off(thrown, melds, indicator, rules) is not None:
            me.penalties.append("lay_off_discard")
        offered = thrown
        seat = (seat + 1) % 4
    summary = Round101(
        tuple(
            PlayerRound101(
                str(k),
                opened=s.opened,
                pairs=s.pairs,
                remaining=tuple(s.hand),
                penalties=tuple(s.penalties),
            )
            for k, s in enumerate(seats)
        ),
        finisher=None if finisher is None else str(finisher),
        indicator=indicator,
        okey_finish=finisher is not None and okey_finish,
    )
    points = score_round(summary, rules)
    return Result(
        None if finisher is None else lineup[finisher],
        0 if finisher is None else turns[finisher],
        tuple(lineup),
        tuple(points[str(k)] for k in range(4)),
        tuple(len(s.penalties) for s in seats),
    )


def _lay(me: Seat101, melds: list[Meld], indicator: Tile, rules: Rules, took: Tile | None) -> None:
    """The shared mechanics after the draw or take (every policy plays them alike): open when
    the best opening reaches the threshold (melds first, else five pairs; with a taken tile, an
    opening that uses it), once open lay new melds and lay off what fits, always keeping a tile
    to discard."""
    if not me.opened:
        opening = best_opening(me.hand, indicator, rules, must_use=took)
        pairs = best_pairs_opening(me.hand, indicator, rules)
        if opening.opens and opening.remaining:
            _put_down(me, [m.tiles for m in opening.melds])
            melds.extend(opening.melds)
            me.opened = True
        elif pairs.opens and pairs.remaining and (took is None or _in_pairs(took, pairs)):
            _put_down(me, pairs.pairs)
            me.opened = me.pairs = True
        elif took is not None:
            raise AssertionError(f"a take of {took} that does not open")
        return
    if not me.pairs:
        if took is not None and not (melds and could_lay_off(took, melds, indicator, rules)):
            # A taken tile that goes onto no table meld is melded first (the rule: use it).
            for meld in best_opening(me.hand, indicator, rules, must_use=took).melds:
                if took in meld.tiles and len(me.hand) > len(meld.tiles):
                    _put_down(me, [meld.tiles])
                    melds.append(meld)
        for meld in min_leftover(me.hand, indicator, rules).melds:
            if len(me.hand) > len(meld.tiles):
                _put_down(me, [meld.tiles])
                melds.append(meld)
    placed = True
    while placed and len(me.hand) > 1:
        placed = False
        for option in lay_offs(me.hand, melds, indicator, rules):
            if option.where == "swap" or option.tile == okey_for(indicator):
                continue
            meld = melds[option.meld]
            tiles = (
                [option.tile, *meld.tiles]
                if option.where == "start"
                else [*meld.tiles, option.tile]
            )
            melds[option.meld] = read_meld(tiles, indicator, rules)
            me.hand.remove(option.tile)
            placed = True
            break


def _put_down(me: Seat101, groups: list[tuple[Tile, ...]]) -> None:
    for group in groups:
        for tile in group:
            me.hand.remove(tile)


def _in_pairs(tile: Tile, pairs: object) -> bool:
    return any(tile in pair for pair in pairs.pairs)


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    scale = 1 + z * z / trials
    # (Clamped: rounding may put an end a hair past the share itself, or past 0 or 1.)
    return max(0.0, min(p, (centre - spread) / scale)), min(1.0, max(p, (centre + spread) / scale))


def rotated(lineup: list[str], game: int) -> list[str]:
    """The lineup moved one seat per game: policy i sits at seat (i + game) mod 4."""
    return [lineup[(seat - game) % 4] for seat in range(4)]


def report(results: list[Result], lineup: list[str], elapsed: float, cpu: float) -> str:
    decided = sum(1 for r in results if r.winner is not None)
    lines = [
        f"{len(results)} games, lineup {','.join(lineup)} (rotated each game); "
        f"{decided} won, {len(results) - decided} drawn (centre empty)",
        "| policy | seats | wins | share of all games, per seat (95 % CI) | share of won "
        "games, per seat (95 % CI) | fair share | turns to a win (mean, median) |"
        + (
            " points a round (mean ± 95 %) | extra penalties a round |" if results[0].points else ""
        ),
        "|---|---|---|---|---|---|---|" + ("---|---|" if results[0].points else ""),
    ]
    for name in dict.fromkeys(lineup):
        seats = lineup.count(name)
        trials = seats * len(results)
        won = [r for r in results if r.winner == name]
        lo, hi = wilson(len(won), trials)
        dlo, dhi = wilson(len(won), seats * decided)
        # A policy holding k seats wins k of every 4 won games by chance: its per-seat share of
        # the won games is compared with 25 %.
        per_seat = len(won) / (seats * decided) if decided else 0.0
        turns = [r.turns for r in won]
        turn_text = (
            f"{statistics.mean(turns):.1f}, {statistics.median(turns):.0f}" if turns else "-"
        )
        row = (
            f"| {name} | {seats} | {len(won)} | {len(won) / trials:.1%} ({lo:.1%}-{hi:.1%}) "
            f"| {per_seat:.1%} ({dlo:.1%}-{dhi:.1%}) | 25.0% | {turn_text} |"
        )
        if results[0].points:
            points = [r.points[s] for r in results for s in range(4) if r.seated[s] == name]
            extras = [r.penalties[s] for r in results for s in range(4) if r.seated[s] == name]
            spread = 1.96 * statistics.stdev(points) / math.sqrt(len(points))
            row += (
                f" {statistics.mean(points):.1f} ± {spread:.1f} | {sum(extras) / len(extras):.3f} |"
            )
        lines.append(row)
    lines.append(
        f"{elapsed:.1f} s wall, {cpu:.1f} s CPU ({elapsed / len(results) * 1e3:.0f} ms a game)"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="classic", choices=["classic", "okey101"])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--lineup", default="istaka,greedy,greedy,greedy", help="four policies, comma-separated"
    )
    args = parser.parse_args()
    lineup = args.lineup.split(",")
    if len(lineup) != 4 or set(lineup) - set(POLICIES):
        parser.error(f"--lineup: four of {', '.join(POLICIES)}")
    play = play_classic if args.game == "classic" else play_101
    started, cpu = time.perf_counter(), time.process_time()
    results = [
        play(args.seed * 100_003 + game, rotated(lineup, game)) for game in range(args.games)
    ]
    print(f"{args.game}, seed {args.seed}")
    print(report(results, lineup, time.perf_counter() - started, time.process_time() - cpu))


if __name__ == "__main__":
    main()
