"""The compiled observation (``yaniv_env.core.observe``) against the reference, ``Observer.observe``.

For every table of ``core_support.tables()`` (the presets, the house-rule sets, 2 to 8 players),
positions of seeded games are loaded into a row (``layout.from_game``) and every seat's
observation is compared, entry by entry, with ``Observer(rules, players).observe(game.view(seat))``:
positions of random play, whole games played to their end (the over phase included, scores that
grow, reset and pass the limit), games started from scores just under a reset value or the limit,
single rounds that put seats out (where the reference reads fewer last discards), slamdown
decisions, and rows the core played itself, side by side with the Python engine. Each test
asserts that no entry differs by more than 1e-6 and prints how many entries are not bit-identical
(the kernel aims at none).

The CI run takes a few hundred positions per rule set; ``YANIV_LONG_TESTS=1`` runs the sweep over
more than 100,000 position-seat pairs (``test_long_sweep``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterator

import numpy as np
import pytest
from core_support import RULE_SETS, SideBySide, positions, tables

from yaniv import Game
from yaniv.cards import POINTS
from yaniv.game import DISCARD, OVER, PLAY, SLAMDOWN_PHASE, YANIV
from yaniv.rules import Rules
from yaniv_env.core import layout as L
from yaniv_env.core import observe as O
from yaniv_env.encoding import Observer, observation_layout, observation_size

LONG = os.environ.get("YANIV_LONG_TESTS") == "1"
TABLES = tables()
TOLERANCE = 1e-6


@lru_cache(maxsize=None)
def observer(rules: Rules, players: int) -> Observer:
    return Observer(rules, players)


@dataclass
class Tally:
    """What a comparison saw: positions, position-seat pairs, entries, those not bit-identical, the
    largest difference, and the phases met."""

    positions: int = 0
    pairs: int = 0
    entries: int = 0
    differ: int = 0
    max_diff: float = 0.0
    slamdown: int = 0
    over: int = 0
    fewer_discards_read: int = 0  # over positions where more seats discarded than are still in

    def add(self, other: "Tally") -> None:
        for name in self.__dataclass_fields__:
            value = getattr(other, name)
            mine = getattr(self, name)
            setattr(self, name, max(mine, value) if name == "max_diff" else mine + value)

    def line(self, what: str) -> str:
        return (f"{what}: {self.positions} positions, {self.pairs} position-seat pairs, {self.entries} entries, "
                f"{self.differ} not bit-identical, max |diff| {self.max_diff:.3g} "
                f"(slamdown {self.slamdown}, over {self.over}, "
                f"over with fewer discards read {self.fewer_discards_read})")


def where(hand_size: int, index: int) -> str:
    """The segment and offset of an observation entry, for failure messages."""
    at = 0
    for name, size in observation_layout(hand_size):
        if index < at + size:
            return f"{name}[{index - at}]"
        at += size
    return f"entry {index}"


def compare(tally: Tally, game: Game, row: np.ndarray | None = None) -> None:
    """Compare every seat's observation of ``game`` (or of ``row``, a core row holding it)."""
    rules, n = game.rules, game.num_players
    if row is None:
        row = L.from_game(game)
    out = np.empty(observation_size(rules.hand_size), dtype=np.float32)
    buf = O.scratch()
    tally.positions += 1
    tally.slamdown += game.phase == SLAMDOWN_PHASE
    if game.phase == OVER:
        tally.over += 1
        discarders = int((row[L.LAST_HIGH : L.LAST_HIGH + n] >= 0).sum())
        tally.fewer_discards_read += 0 < sum(game.alive) < discarders
    for seat in range(n):
        ref = observer(rules, n).observe(game.view(seat))
        O.observe(row, seat, out, buf)
        tally.pairs += 1
        tally.entries += out.size
        tally.differ += int(np.count_nonzero(ref.view(np.uint32) != out.view(np.uint32)))
        diff = np.abs(ref.astype(np.float64) - out)
        worst = int(diff.argmax())
        tally.max_diff = max(tally.max_diff, float(diff[worst]))
        assert diff[worst] <= TOLERANCE, (
            f"{rules.describe()}, {n} players, seat {seat}, phase {game.phase}, turn {game.turn}: "
            f"{where(rules.hand_size, worst)} is {out[worst]!r}, the reference {ref[worst]!r}")


def report(capsys, tally: Tally, what: str) -> None:
    with capsys.disabled():
        print("\n" + tally.line(what))


# ------------------------------------------------------------------------------------------------
# Position sources
# ------------------------------------------------------------------------------------------------


def quick_mover(rng: np.random.Generator, call: float = 0.8, shed: float = 0.7) -> Callable[[Game], object]:
    """Random play that calls Yaniv when it may (mostly) and sheds its highest discard (often), so that
    rounds end and whole games reach their end in a few hundred moves."""

    def choose(game: Game):
        moves = game.legal_moves()
        if YANIV in moves and rng.random() < call:
            return YANIV
        if game.phase == PLAY and rng.random() < shed:
            discards = [m for m in moves if m.kind == DISCARD]
            most = max(sum(POINTS[c] for c in m.cards) for m in discards)
            moves = [m for m in discards if sum(POINTS[c] for c in m.cards) == most]
        return moves[int(rng.integers(len(moves)))]

    return choose


def play(game: Game, mover: Callable[[Game], object], every: int = 1, moves: int = 20_000) -> Iterator[Game]:
    """Copies of every ``every``-th position of ``game`` as ``mover`` plays it to its end, and the last
    position (the over phase, unless ``moves`` ran out first)."""
    for played in range(moves):
        if game.is_over:
            break
        if played % every == 0:
            yield game.copy()
        game.apply(mover(game))
    yield game.copy()


def near_scores(rules: Rules, players: int, rng: np.random.Generator) -> list[int]:
    """Scores just under a reset value or the limit (at least two seats in the game)."""
    marks = [v for v in rules.score_reset_at if v <= rules.score_limit] + [rules.score_limit]
    while True:
        scores = [max(0, int(rng.choice(marks)) - int(rng.integers(0, 16))) for _ in range(players)]
        if sum(s <= rules.score_limit for s in scores) >= 2:
            return scores


def near_games(rules: Rules, players: int, seed: int, count: int, single_round: bool) -> Iterator[Game]:
    """``count`` games started from ``near_scores``; the first seat in the game starts."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        scores = near_scores(rules, players, rng)
        starter = next(q for q in range(players) if scores[q] <= rules.score_limit)
        yield Game(players, rules, seed=seed * 1000 + k, scores=scores, starter=starter, single_round=single_round)


# ------------------------------------------------------------------------------------------------
# CI tests
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,rules,players", TABLES, ids=[f"{t[0]}-{t[2]}p" for t in TABLES])
def test_random_positions_every_table(name, rules, players, capsys):
    tally = Tally()
    for game in positions(rules, players, 10, seed=players):
        compare(tally, game)
    assert tally.pairs == 10 * players
    if players == 4:
        report(capsys, tally, f"random play, {name}, {players} players")


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_whole_games_to_their_end(name, capsys):
    """Scores that grow, reset and pass the limit; eliminations; the over phase."""
    rules = RULE_SETS[name]
    tally = Tally()
    for players in (2, 5):
        rng = np.random.default_rng(players)
        game = Game(players, rules, seed=players)
        for position in play(game, quick_mover(rng), every=10):
            compare(tally, position)
        assert game.is_over
    assert tally.over == 2
    report(capsys, tally, f"whole games, {name}")


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_scores_near_a_reset_or_the_limit(name, capsys):
    """The reset and over segments: every move of rounds started just under a reset value or the limit."""
    rules = RULE_SETS[name]
    tally = Tally()
    stakes = 0
    for players in (2, 4):
        for single_round in (True, False):
            seed = players + 10 * single_round
            for game in near_games(rules, players, seed=seed, count=2, single_round=single_round):
                for position in play(game, quick_mover(np.random.default_rng(players)), every=2, moves=60):
                    compare(tally, position)
                    if position.phase == PLAY:
                        ref = observer(rules, players).observe(position.view(position.current))
                        stakes += bool(observer(rules, players).view("over", ref).any()
                                       or observer(rules, players).view("reset", ref).any())
    if rules.one_round:  # the round decides the game: nothing prices what the scores become
        assert stakes == 0, "a game of one round priced a reset or the limit"
    else:
        assert stakes > 0, "no position priced a reset or the limit"
    report(capsys, tally, f"near a reset or the limit, {name} ({stakes} with stakes)")


def test_single_rounds_that_put_seats_out(capsys):
    """After a last round that puts seats out, the reference reads the last discards of as many
    recent discarders as seats are still in (``last_discards``); so must the kernel."""
    tally = Tally()
    for name in ("default", "german", "flat_subtract", "capped"):
        rules = RULE_SETS[name]
        for players in (3, 5):
            for seed in range(6):
                rng = np.random.default_rng(seed)
                scores = [rules.score_limit - int(rng.integers(0, 6)) for _ in range(players)]
                game = Game(players, rules, seed=seed, scores=scores, single_round=True)
                for position in play(game, quick_mover(rng, call=0.3), every=5):
                    compare(tally, position)
    assert tally.fewer_discards_read > 0
    report(capsys, tally, "single rounds that put seats out")


def test_slamdown_decisions(capsys):
    tally = Tally()
    for name in ("slamdown", "wild_sets_ends", "run_jokers_slam"):
        rules = RULE_SETS[name]
        for players in (2, 5):
            for game in positions(rules, players, 300, seed=7):
                if game.phase == SLAMDOWN_PHASE or game.turn % 10 == 0:
                    compare(tally, game)
    assert tally.slamdown >= 20
    report(capsys, tally, "slamdown decisions")


@pytest.mark.parametrize("name", ["default", "german", "slamdown", "flat_subtract", "one_joker_7", "capped"])
def test_rows_the_core_played(name, capsys):
    """Rows moved by the core itself (``engine.apply_action``), not loaded: its bookkeeping of last
    discards and known cards must give the same observation as the reference's records."""
    rules = RULE_SETS[name]
    tally = Tally()
    for players in (2, 4):
        rng = np.random.default_rng(players)
        game = Game(players, rules, seed=players)
        both = SideBySide(game, seed=players)
        mover = quick_mover(rng)
        for moves in range(3000):
            if moves % 5 == 0 or game.is_over or game.phase == SLAMDOWN_PHASE:
                compare(tally, game, both.row)
            if game.is_over:
                break
            view = game.view(game.current)
            both.apply(both.table.to_action(mover(game), view))
        assert game.is_over
    report(capsys, tally, f"rows the core played, {name}")


def test_observe_batch_mixes_rules_and_player_counts():
    games = [game for name in ("default", "german", "slamdown", "strict_none")
             for players in (2, 3, 7) for game in positions(RULE_SETS[name], players, 5, seed=players)]
    S = np.stack([L.from_game(game) for game in games])
    seats = np.array([i % game.num_players for i, game in enumerate(games)], dtype=np.int64)
    out = np.full((len(games), observation_size(5)), np.nan, dtype=np.float32)
    O.observe_batch(S, seats, out)
    for g, game in enumerate(games):
        ref = observer(game.rules, game.num_players).observe(game.view(int(seats[g])))
        assert np.array_equal(out[g].view(np.uint32), ref.view(np.uint32))


def test_wrong_shapes_are_refused():
    game = next(positions(RULE_SETS["default"], 3, 1, seed=0))
    row = L.from_game(game)
    with pytest.raises(ValueError):
        O.observe(row, 0, np.zeros(observation_size(4), np.float32), O.scratch())
    with pytest.raises(ValueError):
        O.observe(row, 3, np.zeros(observation_size(5), np.float32), O.scratch())
    with pytest.raises(ValueError):
        O.observe(row, 0, np.zeros(observation_size(5), np.float32), np.zeros(10, np.int64))


def test_speed(capsys):
    """Observations per second on one core, a batch of 4096 positions (printed; a loose floor only)."""
    games = [game for name, rules, players in TABLES if rules.hand_size == 5
             for game in positions(rules, players, 2, seed=1)]
    S = np.stack([L.from_game(games[i % len(games)]) for i in range(4096)])
    seats = np.array([i % int(S[i, L.PLAYERS]) for i in range(4096)], dtype=np.int64)
    out = np.empty((4096, observation_size(5)), dtype=np.float32)
    O.observe_batch(S, seats, out)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        O.observe_batch(S, seats, out)
        best = min(best, time.perf_counter() - start)
    rate = 4096 / best
    with capsys.disabled():
        print(f"\nobserve_batch: {rate:,.0f} observations/s on one core ({best / 4096 * 1e6:.2f} us each)")
    assert rate > 20_000


# ------------------------------------------------------------------------------------------------
# The long sweep
# ------------------------------------------------------------------------------------------------


@pytest.mark.skipif(not LONG, reason="the long sweep runs with YANIV_LONG_TESTS=1")
def test_long_sweep(capsys):
    """More than 100,000 position-seat pairs over every table: random play, whole games, near scores."""
    total = Tally()
    for i, (name, rules, players) in enumerate(TABLES):
        tally = Tally()
        for game in positions(rules, players, 150, seed=1000 + i):
            compare(tally, game)
        rng = np.random.default_rng(i)
        for k in range(2):
            for position in play(Game(players, rules, seed=2000 + 10 * i + k), quick_mover(rng), every=3):
                compare(tally, position)
        for single_round in (True, False):
            for game in near_games(rules, players, seed=3000 + i, count=2, single_round=single_round):
                for position in play(game, quick_mover(rng, call=0.5), every=2, moves=80):
                    compare(tally, position)
        total.add(tally)
    report(capsys, total, "long sweep, every table")
    assert total.pairs >= 100_000
