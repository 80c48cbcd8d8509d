"""Tournaments between agents: seat rotation, duplicate deals, statistics, ratings, reports.

The Python API behind ``evaluate.py``, for notebooks and training callbacks:

>>> from agents.tournament import run_tournament
>>> result = run_tournament(["random", "random"], num_players=2, games=4, seed=0,
...                         rounds=True, workers=1, progress=False)
>>> result.games
4
>>> print(result.table())                                    # doctest: +SKIP
>>> result.write("runs/eval")                                # doctest: +SKIP

The schedule
------------
With ``k`` agents at ``n`` seats (``k >= n``; name an agent twice to seat two copies):

* **Line-ups.** With ``k == n`` the one line-up is every agent. With ``k > n`` the line-ups are
  all ``C(k, n)`` combinations of ``n`` agents, so every agent, and every pair of agents, meets
  equally often; when there would be more than ``MAX_COMBINATIONS`` of them, the ``k`` cyclic
  windows ``(i, i+1, ..., i+n-1 mod k)`` instead, where every agent still plays the same number
  of games (in ``n`` of the ``k`` windows), though pairs no longer meet equally often.
* **Rotations.** Each line-up plays each deal in all ``n`` rotations: in rotation ``r`` seat ``s``
  holds the line-up's agent ``(s + r) mod n``, so each agent sits in every seat once per line-up
  and deal (seat 0 opens the first round).
* **Duplicate deals.** Deal ``d`` has one seed, derived from ``(seed, d)``, and every line-up and
  rotation replays it: each agent is dealt, in turn, every hand of the first round. Later rounds
  of a full game are dealt by the same generator, so they stay the same across rotations only
  until the play differs (a reshuffle draws on it; an elimination changes who is dealt in).
* A **cycle** is one deal played by every line-up in every rotation: ``len(lineups) * n`` games.
  ``games`` must be a whole number of cycles, so that every agent plays equally often in every
  seat; ``games / cycle`` deals are played.

Game ``i`` is deal ``i // cycle``, line-up ``(i % cycle) // n``, rotation ``i % n``. Its deal
seed comes from ``(seed, deal)`` and each seat's agent is ``reset`` with a seed from
``(seed, i, seat)``; results are reduced in game order. So the same ``seed`` gives the same
results whatever the number of worker processes (timings aside).

Statistics
----------
Per agent: games; win rate (a tie for first splits the win, so the wins of a table add up to
one game) with its 95% Wilson interval; over the rounds it played (alive at the deal): mean
points taken per round (before score resets), Yaniv calls per round, the fraction of its calls
that were Assafed, and Assafs it made per round; the mean length of its games in rounds and
turns; its seat counts; time per move. Its **margin**: in each game, its tablemates' mean points
per round minus its own (positive: it took fewer points than they did), averaged over the games of
each deal, then over deals, with a 95% interval over deals (a normal approximation; the deals are
independent, the rotations of one deal are not). Rounds are cheap and the margin is paired by
deal, so it tells close bots apart where win rates cannot: the shipped policy against the
heuristic, heads-up, over 8,000 single rounds (35 s on one core) has a margin of +0.19 +- 0.28
points a round, and a win rate of 48.1% +- 1.1. A rating per agent: OpenSkill's Plackett-Luce model
updated on every game's final ranking, in game order (reported as mu and sigma; the interval is
mu +- 2 sigma; ``ordinal`` is OpenSkill's conservative mu - 3 sigma). Head to head: for every
pair, at the tables where both sat, how often the row agent finished ahead of the column agent
(ties count one half).

Final ranking: in a full game the winners first, then the players still in, then the eliminated,
the later out first, then by lower score (as ``yaniv_env.rank_rewards``); in a single round the
round's winners first, then by the points taken. A round cut by the rules' turn cap has no
winner: every seat ties.
"""

from __future__ import annotations

import copy
import csv
import itertools
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from yaniv import MAX_PLAYERS, MIN_PLAYERS, PRESETS, Game, Rules, get_rules

Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal
MAX_COMBINATIONS = 100  # above this many line-ups, use the cyclic windows
MAX_MOVES = 100_000  # per game; a longer game is an error (agents that never end a round)

# Seed derivation tags: deal seeds and agent seeds come from distinct streams.
_DEAL, _AGENT = 0, 1


# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion (95% by default); (0, 1) with no trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def derive_seed(seed: int, *keys: int) -> int:
    """A 63-bit seed from ``seed`` and a path of keys (numpy's SeedSequence: independent streams)."""
    state = np.random.SeedSequence(entropy=seed, spawn_key=tuple(keys)).generate_state(1, np.uint64)
    return int(state[0]) >> 1


def _is_agent(obj: Any) -> bool:
    return callable(getattr(obj, "act", None)) and callable(getattr(obj, "reset", None))


def make_agent(spec: Any, seed: int | None = None) -> Any:
    """An agent from a spec: a registry name ("random", "ppo:PATH", ...) or an agent object (copied)."""
    if not isinstance(spec, str):
        agent = copy.deepcopy(spec)
        agent.reset(seed)
        return agent
    from agents.registry import make_agent as registry_make_agent

    return registry_make_agent(spec, seed=seed)


def _one_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return " ".join(text.split())


def _about(spec: str, error: BaseException) -> str:
    """The error as one line that names the agent spec."""
    message = _one_line(error)
    return message if repr(spec) in message else f"agent {spec!r}: {message}"


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _spec_text(spec: Any) -> str:
    """A spec as text: the name itself, or the class of an agent object."""
    return spec if isinstance(spec, str) else f"object:{type(spec).__module__}.{type(spec).__qualname__}"


def _labels(specs: Sequence[Any]) -> list[str]:
    """Unique display names: the spec (or the agent's name), with #2, #3 ... for repeats."""
    labels, seen = [], {}
    for spec in specs:
        base = spec if isinstance(spec, str) else str(getattr(spec, "name", type(spec).__name__))
        seen[base] = seen.get(base, 0) + 1
        labels.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return labels


# ----------------------------------------------------------------------------------------------
# The plan: everything checked before any game
# ----------------------------------------------------------------------------------------------


class GameRecord(NamedTuple):
    """One game's outcome, per seat (tuples indexed by seat). ``seats`` holds agent indices."""

    index: int
    deal: int
    lineup: int
    rotation: int
    seats: tuple[int, ...]
    ranks: tuple[int, ...]  # final placement, 0 best; ties share the better rank
    win_shares: tuple[float, ...]  # 1 / number of winners for each winner, else 0
    scores: tuple[int, ...]  # final cumulative scores
    rounds: int
    turns: int
    capped: int  # rounds ended by the rules' turn cap (no winner, no points)
    alive_rounds: tuple[int, ...]  # rounds each seat was dealt into
    points: tuple[int, ...]  # points taken over those rounds (before resets)
    calls: tuple[int, ...]
    assafed: tuple[int, ...]  # calls that were Assafed
    assafs: tuple[int, ...]  # times the seat Assafed a caller
    moves: tuple[int, ...]
    seconds: tuple[float, ...]  # time spent in act(), per seat


@dataclass(frozen=True)
class TournamentPlan:
    """A checked tournament: agents, rules, schedule. ``run()`` plays it."""

    specs: tuple[Any, ...]
    labels: tuple[str, ...]
    num_players: int
    games: int
    seed: int
    rules: Rules
    rules_name: str | None  # the preset's name, when one was given
    rounds: bool
    lineups: tuple[tuple[int, ...], ...]

    @property
    def cycle(self) -> int:
        """Games per deal: every line-up in every rotation."""
        return len(self.lineups) * self.num_players

    @property
    def deals(self) -> int:
        return self.games // self.cycle

    def game(self, index: int) -> tuple[int, int, int, tuple[int, ...]]:
        """Deal, line-up, rotation and the agent in each seat of game ``index``."""
        n = self.num_players
        deal, rest = divmod(index, self.cycle)
        lineup, rotation = divmod(rest, n)
        members = self.lineups[lineup]
        return deal, lineup, rotation, tuple(members[(s + rotation) % n] for s in range(n))

    def describe(self) -> str:
        unit = "single rounds" if self.rounds else "full games"
        rules = self.rules_name or self.rules.describe()
        if self.rules_name and self.rules.max_turns != PRESETS[self.rules_name].max_turns:
            rules += f", rounds capped at {self.rules.max_turns} turns"
        return (
            f"{self.games} {unit} of {self.num_players} players ({rules}): {self.deals} deal(s) x "
            f"{len(self.lineups)} line-up(s) x {self.num_players} seat rotations; agents: {', '.join(self.labels)}"
        )

    def run(self, workers: int | None = None, progress: bool = True) -> "TournamentResult":
        """Play every game (``workers`` processes; None: every core) and reduce in game order."""
        workers = _check_workers(workers)
        start = time.perf_counter()
        records = _play(self, workers, progress)
        return TournamentResult.from_records(self, records, wall_seconds=time.perf_counter() - start)


def _lineups(num_agents: int, num_players: int) -> tuple[tuple[int, ...], ...]:
    if num_agents == num_players:
        return (tuple(range(num_agents)),)
    if math.comb(num_agents, num_players) <= MAX_COMBINATIONS:
        return tuple(itertools.combinations(range(num_agents), num_players))
    return tuple(tuple((i + j) % num_agents for j in range(num_players)) for i in range(num_agents))


def _check_workers(workers: Any) -> int:
    if workers is None:
        return _cpu_count()
    if type(workers) is not int or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1 (or None for every core), got {workers!r}")
    return workers


def plan_tournament(
    agent_specs: Sequence[Any],
    num_players: int,
    games: int,
    seed: int = 0,
    rules: str | Rules | Mapping[str, Any] | None = "default",
    rounds: bool = False,
    max_turns: int | None = None,
) -> TournamentPlan:
    """Check every argument and build the agents once; ValueError naming the first problem.

    ``agent_specs`` are registry names (``agents.registry.make_agent``: "random", "greedy",
    "heuristic", "search", "ppo:PATH" ...) or agent objects (``act(view)``, ``reset(seed)``,
    ``name``), which are deep-copied for each worker. Each named agent is built here and makes one
    move on a sample deal, so a checkpoint that does not fit the rules or the table size is refused
    before the tournament (agent objects are the caller's: not probed). ``max_turns`` caps every
    round at that many turns (the rules' ``max_turns``: a capped round has no winner and no
    points), a guard against agents that may never end a round.
    """
    # Player count.
    if type(num_players) is not int or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise ValueError(
            f"the number of players must be a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}, got {num_players!r}"
        )

    # Rules.
    rules_name = rules if isinstance(rules, str) else None
    if isinstance(rules, str) and rules not in PRESETS:
        raise ValueError(f"unknown rules preset {rules!r}; presets: {', '.join(PRESETS)}")
    if max_turns is not None and (type(max_turns) is not int or max_turns < 1):
        raise ValueError(f"max_turns must be a whole number >= 1 (or None for the rules' own), got {max_turns!r}")
    try:
        rules_obj = get_rules(rules)
        if max_turns is not None:
            rules_obj = rules_obj.replace(max_turns=max_turns)
        Game(num_players, rules_obj, seed=0, single_round=True)  # e.g. too many cards for the deck
    except (TypeError, ValueError) as error:
        raise ValueError(f"bad rules for {num_players} players: {_one_line(error)}") from None

    # The agent list.
    if isinstance(agent_specs, (str, bytes)) or not isinstance(agent_specs, Sequence):
        raise ValueError(f"agents must be a list of agent names or agent objects, got {agent_specs!r}")
    specs = tuple(agent_specs)
    if len(specs) < num_players:
        raise ValueError(
            f"{num_players} seats need at least {num_players} agents, got {len(specs)} "
            f"({', '.join(map(str, specs)) or 'none'}); name an agent twice to seat two copies of it"
        )
    for spec in specs:
        if isinstance(spec, str):
            if not spec.strip():
                raise ValueError("an agent name is empty")
        elif not _is_agent(spec):
            raise ValueError(f"an agent must be a name or an object with act(view) and reset(seed), got {spec!r}")

    # Seed, mode, game count.
    if type(seed) is not int or seed < 0:
        raise ValueError(f"the seed must be a whole number >= 0, got {seed!r}")
    if type(rounds) is not bool:
        raise ValueError(f"rounds must be True or False, got {rounds!r}")
    lineups = _lineups(len(specs), num_players)
    cycle = len(lineups) * num_players
    if type(games) is not int or games < 1:
        raise ValueError(f"the number of games must be a whole number >= 1, got {games!r}")
    if games % cycle:
        below, above = games // cycle * cycle, (games // cycle + 1) * cycle
        suggestion = f"{below} or {above}" if below else f"{above}"
        raise ValueError(
            f"{games} games is not a multiple of {cycle}: each deal is played by {len(lineups)} line-up(s) "
            f"of {len(specs)} agents in all {num_players} seat rotations ({cycle} games); try {suggestion}"
        )

    # Each named agent built once (unknown names, missing or corrupt checkpoints), and probed.
    probe = Game(num_players, rules_obj, seed=0, single_round=True).view(0)
    for spec in dict.fromkeys(s for s in specs if isinstance(s, str)):
        try:
            agent = make_agent(spec, seed=0)
        except Exception as error:  # noqa: BLE001 - a corrupt checkpoint may raise anything
            raise ValueError(_about(spec, error)) from None
        if not _is_agent(agent):
            raise ValueError(f"agent {spec!r}: the registry returned {agent!r}, which has no act(view) and reset(seed)")
        # One move on a sample deal: a policy that does not fit these rules or this table fails here.
        try:
            move = agent.act(probe)
        except Exception as error:  # noqa: BLE001
            problem = _one_line(error)
            raise ValueError(f"agent {spec!r} cannot play {num_players} players with these rules: {problem}") from None
        if move not in probe.legal_moves:
            raise ValueError(f"agent {spec!r} chose an illegal move {move!r} on a sample deal")

    return TournamentPlan(
        specs=specs,
        labels=tuple(_labels(specs)),
        num_players=num_players,
        games=games,
        seed=seed,
        rules=rules_obj,
        rules_name=rules_name,
        rounds=rounds,
        lineups=lineups,
    )


def run_tournament(
    agent_specs: Sequence[Any],
    num_players: int,
    games: int,
    seed: int = 0,
    rules: str | Rules | Mapping[str, Any] | None = "default",
    rounds: bool = False,
    workers: int | None = None,
    progress: bool = True,
    max_turns: int | None = None,
) -> "TournamentResult":
    """Check everything, then play ``games`` games (single rounds with ``rounds=True``).

    See the module docstring for the schedule. ``workers``: processes (None: every core; 1 plays
    in this process). The same ``seed`` gives the same result for any number of workers.
    """
    workers = _check_workers(workers)
    plan = plan_tournament(agent_specs, num_players, games, seed=seed, rules=rules, rounds=rounds, max_turns=max_turns)
    return plan.run(workers=workers, progress=progress)


# ----------------------------------------------------------------------------------------------
# Playing
# ----------------------------------------------------------------------------------------------


class _Player:
    """The games of one process: the plan and one agent per agent index, built on first use."""

    def __init__(self, plan: TournamentPlan) -> None:
        self.plan = plan
        self.agents: dict[int, Any] = {}

    def agent(self, index: int) -> Any:
        if index not in self.agents:
            self.agents[index] = make_agent(self.plan.specs[index], seed=0)
        return self.agents[index]

    def play(self, index: int) -> GameRecord:
        plan = self.plan
        n = plan.num_players
        deal, lineup, rotation, seats = plan.game(index)
        game = Game(n, plan.rules, seed=derive_seed(plan.seed, _DEAL, deal), single_round=plan.rounds)
        agents = [self.agent(a) for a in seats]
        for s, agent in enumerate(agents):
            agent.reset(derive_seed(plan.seed, _AGENT, index, s))
        moves = [0] * n
        seconds = [0.0] * n
        clock = time.perf_counter
        for _ in range(MAX_MOVES):
            if game.is_over:
                break
            seat = game.current
            view = game.view(seat)
            start = clock()
            move = agents[seat].act(view)
            seconds[seat] += clock() - start
            if move not in view.legal_moves:
                raise ValueError(
                    f"agent {plan.labels[seats[seat]]!r} in seat {seat} of game {index} chose an illegal move {move!r}"
                )
            game.apply(move)
            moves[seat] += 1
        else:
            raise RuntimeError(
                f"game {index} ({', '.join(plan.labels[a] for a in seats)}) did not end within {MAX_MOVES} moves "
                f"(round {game.round_number} at turn {game.turn}): the agents may never end a round; "
                "cap rounds with max_turns (evaluate.py --max-turns)"
            )
        return _record(game, index, deal, lineup, rotation, seats, moves, seconds)


def _record(game: Game, index, deal, lineup, rotation, seats, moves, seconds) -> GameRecord:
    n = game.num_players
    alive = [True] * n
    alive_rounds, points, calls, assafed, assafs = ([0] * n for _ in range(5))
    out_round = [len(game.results)] * n  # still in at the end: best
    turns = capped = 0
    for number, result in enumerate(game.results):
        turns += result.turns
        capped += result.caller is None
        for q in range(n):
            if alive[q]:
                alive_rounds[q] += 1
                points[q] += result.points[q]
        if result.caller is not None:
            calls[result.caller] += 1
            if result.assafers:
                assafed[result.caller] += 1
            for q in result.assafers:
                assafs[q] += 1
        for q in result.eliminated:
            alive[q] = False
            out_round[q] = number
    winners = set(game.winners)
    if game.single_round:
        last = game.results[-1]
        keys = [(q not in winners, last.points[q] if last.caller is not None else 0) for q in range(n)]
    else:
        keys = [(q not in winners, -out_round[q], game.scores[q]) for q in range(n)]
    ranks = tuple(sum(keys[p] < keys[q] for p in range(n)) for q in range(n))
    share = 1.0 / len(winners) if winners else 0.0
    return GameRecord(
        index=index, deal=deal, lineup=lineup, rotation=rotation, seats=tuple(seats), ranks=ranks,
        win_shares=tuple(share if q in winners else 0.0 for q in range(n)), scores=tuple(game.scores),
        rounds=len(game.results), turns=turns, capped=capped, alive_rounds=tuple(alive_rounds), points=tuple(points),
        calls=tuple(calls), assafed=tuple(assafed), assafs=tuple(assafs), moves=tuple(moves),
        seconds=tuple(seconds),
    )


_WORKER: _Player | None = None


def _init_worker(plan: TournamentPlan) -> None:
    global _WORKER
    _WORKER = _Player(plan)
    if "torch" in sys.modules:  # one thread per process: the processes are the parallelism
        sys.modules["torch"].set_num_threads(1)


def _play_range(start: int, stop: int) -> list[GameRecord]:
    assert _WORKER is not None
    return [_WORKER.play(i) for i in range(start, stop)]


def _play(plan: TournamentPlan, workers: int, progress: bool) -> list[GameRecord]:
    from tqdm import tqdm

    total = plan.games

    def bar() -> tqdm:
        return tqdm(total=total, unit="game", desc="tournament", disable=not progress, leave=False)

    if workers == 1 or total == 1:
        player = _Player(plan)
        records = []
        with bar() as progress_bar:
            for i in range(total):
                records.append(player.play(i))
                progress_bar.update(1)
        return records
    # A few chunks per worker: the load stays balanced and the bar moves. The worker processes
    # start at the first submit, before the bar exists (no thread of ours is forked).
    chunks = min(total, workers * 4)
    bounds = [total * c // chunks for c in range(chunks + 1)]
    results: dict[int, list[GameRecord]] = {}
    pool = ProcessPoolExecutor(max_workers=min(workers, chunks), initializer=_init_worker, initargs=(plan,))
    try:
        futures = {pool.submit(_play_range, a, b): a for a, b in zip(bounds, bounds[1:])}
        with bar() as progress_bar:
            for future in as_completed(futures):
                chunk = future.result()
                results[futures[future]] = chunk
                progress_bar.update(len(chunk))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return [record for start in sorted(results) for record in results[start]]


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


@dataclass
class AgentStats:
    """One agent's figures over the tournament (see the module docstring)."""

    name: str
    spec: str
    games: int = 0
    wins: float = 0.0
    rounds: int = 0  # rounds played (dealt in)
    points: int = 0
    calls: int = 0
    assafed: int = 0
    assafs: int = 0
    game_rounds: int = 0  # rounds of its games, summed over its games
    game_turns: int = 0
    moves: int = 0
    seconds: float = 0.0
    seat_games: list[int] = field(default_factory=list)
    seat_wins: list[float] = field(default_factory=list)
    mu: float = 0.0
    sigma: float = 0.0
    deal_margins: list[float] = field(default_factory=list)  # per deal: the mean margin of its games there

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def win_interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.games)

    @property
    def points_per_round(self) -> float | None:
        return _ratio(self.points, self.rounds)

    @property
    def margin(self) -> float | None:
        """Its tablemates' mean points per round minus its own (positive: it takes fewer), averaged
        over deals (see the module docstring)."""
        return float(np.mean(self.deal_margins)) if self.deal_margins else None

    @property
    def margin_interval(self) -> tuple[float, float] | None:
        """The 95% interval of ``margin``: deals are the independent units (normal approximation)."""
        n = len(self.deal_margins)
        if n < 2:
            return None
        half = Z95 * float(np.std(self.deal_margins, ddof=1)) / math.sqrt(n)
        return self.margin - half, self.margin + half

    @property
    def calls_per_round(self) -> float | None:
        return _ratio(self.calls, self.rounds)

    @property
    def assafed_per_call(self) -> float | None:
        """The Assaf rate as caller: the fraction of its Yaniv calls that were Assafed."""
        return _ratio(self.assafed, self.calls)

    @property
    def assafs_per_round(self) -> float | None:
        """The Assaf rate as Assafer: Assafs it made per round played."""
        return _ratio(self.assafs, self.rounds)

    @property
    def rounds_per_game(self) -> float | None:
        return _ratio(self.game_rounds, self.games)

    @property
    def turns_per_game(self) -> float | None:
        return _ratio(self.game_turns, self.games)

    @property
    def ms_per_move(self) -> float | None:
        return _ratio(1000 * self.seconds, self.moves)

    @property
    def rating_interval(self) -> tuple[float, float]:
        return self.mu - 2 * self.sigma, self.mu + 2 * self.sigma

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    def to_dict(self, include_timing: bool = True) -> dict[str, Any]:
        low, high = self.win_interval
        out = {
            "agent": self.name,
            "spec": self.spec,
            "games": self.games,
            "wins": self.wins,
            "win_rate": self.win_rate,
            "win_rate_low": low,
            "win_rate_high": high,
            "rating_mu": self.mu,
            "rating_sigma": self.sigma,
            "rating_low": self.rating_interval[0],
            "rating_high": self.rating_interval[1],
            "rating_ordinal": self.ordinal,
            "rounds": self.rounds,
            "points_per_round": self.points_per_round,
            "margin": self.margin,
            "margin_low": self.margin_interval[0] if self.margin_interval else None,
            "margin_high": self.margin_interval[1] if self.margin_interval else None,
            "margin_deals": len(self.deal_margins),
            "calls": self.calls,
            "calls_per_round": self.calls_per_round,
            "assafed": self.assafed,
            "assafed_per_call": self.assafed_per_call,
            "assafs": self.assafs,
            "assafs_per_round": self.assafs_per_round,
            "rounds_per_game": self.rounds_per_game,
            "turns_per_game": self.turns_per_game,
            "moves": self.moves,
            "seat_games": list(self.seat_games),
            "seat_win_rates": [w / g if g else None for w, g in zip(self.seat_wins, self.seat_games)],
        }
        if include_timing:
            out["ms_per_move"] = self.ms_per_move
        return out


@dataclass
class TournamentResult:
    """Statistics of a played tournament, with the per-game records it came from."""

    plan: TournamentPlan
    agents: list[AgentStats]
    head_to_head_ahead: np.ndarray  # [a, b]: games a finished ahead of b
    head_to_head_ties: np.ndarray
    head_to_head_games: np.ndarray  # [a, b]: games where both sat
    seat_wins: list[float]  # per seat, over all games
    records: list[GameRecord]
    wall_seconds: float = 0.0

    # -- building -------------------------------------------------------------------------------

    @classmethod
    def from_records(
        cls, plan: TournamentPlan, records: Sequence[GameRecord], wall_seconds: float = 0.0
    ) -> "TournamentResult":
        from openskill.models import PlackettLuce

        k, n = len(plan.labels), plan.num_players
        stats = [
            AgentStats(name=label, spec=_spec_text(spec), seat_games=[0] * n, seat_wins=[0.0] * n)
            for label, spec in zip(plan.labels, plan.specs)
        ]
        ahead = np.zeros((k, k), dtype=np.int64)
        ties = np.zeros((k, k), dtype=np.int64)
        met = np.zeros((k, k), dtype=np.int64)
        seat_wins = [0.0] * n
        model = PlackettLuce()
        ratings = [model.rating(name=label) for label in plan.labels]
        margins: list[dict[int, list[float]]] = [{} for _ in range(k)]  # per agent: deal -> its games' margins
        for record in records:
            per_round = [p / r if r else None for p, r in zip(record.points, record.alive_rounds)]
            for seat, a in enumerate(record.seats):
                others = [x for q, x in enumerate(per_round) if q != seat and x is not None]
                if per_round[seat] is not None and others:
                    margins[a].setdefault(record.deal, []).append(sum(others) / len(others) - per_round[seat])
            for seat, a in enumerate(record.seats):
                s = stats[a]
                s.games += 1
                s.wins += record.win_shares[seat]
                s.rounds += record.alive_rounds[seat]
                s.points += record.points[seat]
                s.calls += record.calls[seat]
                s.assafed += record.assafed[seat]
                s.assafs += record.assafs[seat]
                s.game_rounds += record.rounds
                s.game_turns += record.turns
                s.moves += record.moves[seat]
                s.seconds += record.seconds[seat]
                s.seat_games[seat] += 1
                s.seat_wins[seat] += record.win_shares[seat]
                seat_wins[seat] += record.win_shares[seat]
                for other, b in enumerate(record.seats):
                    if other != seat:
                        met[a, b] += 1
                        ahead[a, b] += record.ranks[seat] < record.ranks[other]
                        ties[a, b] += record.ranks[seat] == record.ranks[other]
            teams = [[ratings[a]] for a in record.seats]
            rated = model.rate(teams, ranks=list(record.ranks))
            for a, team in zip(record.seats, rated):
                ratings[a] = team[0]
        for s, rating, by_deal in zip(stats, ratings, margins):
            s.mu, s.sigma = float(rating.mu), float(rating.sigma)
            s.deal_margins = [sum(m) / len(m) for _, m in sorted(by_deal.items())]
        return cls(plan, stats, ahead, ties, met, seat_wins, list(records), wall_seconds)

    # -- figures --------------------------------------------------------------------------------

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def capped_rounds(self) -> int:
        """Rounds ended by the turn cap (no winner, no points)."""
        return sum(r.capped for r in self.records)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.agents]

    def agent(self, name: str) -> AgentStats:
        for s in self.agents:
            if s.name == name:
                return s
        raise KeyError(f"no agent {name!r} in this tournament; agents: {', '.join(self.names)}")

    def head_to_head(self) -> np.ndarray:
        """[a, b]: the fraction of shared tables where a finished ahead of b (ties one half); NaN if they never met."""
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = (self.head_to_head_ahead + 0.5 * self.head_to_head_ties) / self.head_to_head_games
        return np.where(self.head_to_head_games > 0, rate, np.nan)

    def ranking(self) -> list[AgentStats]:
        """The agents by rating (mu), best first."""
        return sorted(self.agents, key=lambda s: (-s.mu, s.name))

    def to_dict(self, include_timing: bool = True) -> dict[str, Any]:
        plan = self.plan
        rates = self.head_to_head()
        out: dict[str, Any] = {
            "config": {
                "agents": list(plan.labels),
                "specs": [_spec_text(s) for s in plan.specs],
                "players": plan.num_players,
                "games": plan.games,
                "mode": "rounds" if plan.rounds else "games",
                "seed": plan.seed,
                "rules": plan.rules_name,
                "max_turns": plan.rules.max_turns,
                "rules_settings": {k: list(v) if isinstance(v, tuple) else v for k, v in plan.rules.to_dict().items()},
                "deals": plan.deals,
                "lineups": [[plan.labels[a] for a in lineup] for lineup in plan.lineups],
            },
            "agents": [s.to_dict(include_timing) for s in self.agents],
            "head_to_head": {
                "agents": list(plan.labels),
                "ahead_rate": [[None if math.isnan(v) else float(v) for v in row] for row in rates],
                "ahead": self.head_to_head_ahead.tolist(),
                "ties": self.head_to_head_ties.tolist(),
                "games": self.head_to_head_games.tolist(),
            },
            "seat_win_rates": [w / self.games if self.games else None for w in self.seat_wins],
            "rounds": sum(r.rounds for r in self.records),
            "capped_rounds": self.capped_rounds,
        }
        if include_timing:
            out["wall_seconds"] = self.wall_seconds
        return out

    # -- text -----------------------------------------------------------------------------------

    def table(self) -> str:
        """The terminal report: one row per agent (best rating first), then head to head."""

        def num(value: float | None, fmt: str) -> str:
            return "-" if value is None else format(value, fmt)

        plan = self.plan
        header = ["agent", "games", "win rate [95% CI]", "rating ±2σ", "pts/round", "margin [95% CI]", "Yaniv/round",
                  "Assafed/call", "Assafs/round", "rounds/game", "turns/game", "ms/move"]
        rows = []
        for s in self.ranking():
            low, high = s.win_interval
            rows.append([
                s.name, str(s.games), f"{s.win_rate:6.1%} [{low:.1%}, {high:.1%}]", f"{s.mu:.1f} ± {2 * s.sigma:.1f}",
                num(s.points_per_round, ".2f"), _margin_text(s), num(s.calls_per_round, ".3f"),
                num(s.assafed_per_call, ".1%"),
                num(s.assafs_per_round, ".3f"), num(s.rounds_per_game, ".1f"), num(s.turns_per_game, ".1f"),
                num(s.ms_per_move, ".3f"),
            ])
        lines = [plan.describe(), ""]
        lines += _format_table(header, rows, right=range(1, len(header)))
        lines.append("margin: the tablemates' mean points per round minus the agent's own (positive: it takes fewer), "
                     "paired by deal")
        # Head to head.
        order = [plan.labels.index(s.name) for s in self.ranking()]
        rates = self.head_to_head()
        short = [plan.labels[a] if len(plan.labels[a]) <= 12 else plan.labels[a][:11] + "…" for a in order]
        h2h_rows = [[short[i]] + ["-" if i == j or math.isnan(rates[a, b]) else f"{rates[a, b]:.0%}"
                                  for j, b in enumerate(order)] for i, a in enumerate(order)]
        lines += ["", "Head to head: how often the row agent finished ahead of the column agent (ties count 1/2)"]
        lines += _format_table(["ahead of →"] + short, h2h_rows, right=range(1, len(short) + 1))
        seat_rates = ", ".join(f"seat {q}: {w / max(self.games, 1):.1%}" for q, w in enumerate(self.seat_wins))
        lines += ["", f"Wins by seat: {seat_rates}"]
        if self.capped_rounds:
            total = sum(r.rounds for r in self.records)
            lines.append(f"Rounds cut by the turn cap (no winner, no points): {self.capped_rounds} of {total}")
        lines.append(f"{self.games} games in {self.wall_seconds:.1f} s")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    # -- files ----------------------------------------------------------------------------------

    def write(self, out_dir: str | os.PathLike) -> dict[str, Path]:
        """Write results.json, results.csv, head_to_head.csv, ratings.png and head_to_head.png."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            "json": out / "results.json",
            "csv": out / "results.csv",
            "head_to_head_csv": out / "head_to_head.csv",
            "ratings_png": out / "ratings.png",
            "head_to_head_png": out / "head_to_head.png",
        }
        paths["json"].write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        rows = [s.to_dict() for s in self.agents]
        with paths["csv"].open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            for row in rows:
                row["seat_games"] = " ".join(map(str, row["seat_games"]))
                row["seat_win_rates"] = " ".join("" if v is None else f"{v:.6g}" for v in row["seat_win_rates"])
                writer.writerow({k: "" if v is None else v for k, v in row.items()})
        rates = self.head_to_head()
        with paths["head_to_head_csv"].open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["agent", "opponent", "games", "ahead", "ties", "ahead_rate"])
            for a, name in enumerate(self.plan.labels):
                for b, other in enumerate(self.plan.labels):
                    if a != b and self.head_to_head_games[a, b]:
                        counts = (self.head_to_head_games, self.head_to_head_ahead, self.head_to_head_ties)
                        writer.writerow([name, other, *(int(c[a, b]) for c in counts), f"{rates[a, b]:.6g}"])
        self.plot_ratings().savefig(paths["ratings_png"], dpi=120)
        self.plot_head_to_head().savefig(paths["head_to_head_png"], dpi=120)
        return paths

    def plot_ratings(self):
        """A matplotlib Figure: each agent's rating mu with its mu ± 2 sigma interval."""
        from matplotlib.figure import Figure

        ranked = self.ranking()[::-1]  # best on top
        fig = Figure(figsize=(6.4, 1.2 + 0.45 * len(ranked)), layout="constrained")
        ax = fig.subplots()
        ys = np.arange(len(ranked))
        mus = [s.mu for s in ranked]
        ax.errorbar(mus, ys, xerr=[2 * s.sigma for s in ranked], fmt="o", capsize=4, color="tab:blue")
        ax.set_yticks(ys, [s.name for s in ranked])
        ax.set_xlabel("OpenSkill rating (Plackett-Luce): μ ± 2σ")
        mode = "rounds" if self.plan.rounds else "games"
        ax.set_title(f"Ratings: {self.games} {mode}, {self.plan.num_players} players")
        ax.grid(axis="x", alpha=0.3)
        ax.set_ylim(-0.6, len(ranked) - 0.4)
        return fig

    def plot_head_to_head(self):
        """A matplotlib Figure: the head-to-head matrix (row ahead of column)."""
        import matplotlib
        from matplotlib.figure import Figure

        order = [self.plan.labels.index(s.name) for s in self.ranking()]
        rates = self.head_to_head()[np.ix_(order, order)]
        names = [self.plan.labels[a] for a in order]
        size = 2.5 + 0.7 * len(names)
        fig = Figure(figsize=(size + 1.2, size), layout="constrained")
        ax = fig.subplots()
        cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="0.92")  # the diagonal, pairs that never met
        image = ax.imshow(np.ma.masked_invalid(rates), cmap=cmap, vmin=0, vmax=1)
        for i in range(len(names)):
            for j in range(len(names)):
                if not math.isnan(rates[i, j]):
                    ax.text(j, i, f"{rates[i, j]:.0%}", ha="center", va="center",
                            color="white" if abs(rates[i, j] - 0.5) > 0.3 else "black")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("opponent")
        ax.set_ylabel("agent")
        ax.set_title("Head to head: row finished ahead of column")
        fig.colorbar(image, ax=ax, shrink=0.8)
        return fig


def _margin_text(s: AgentStats) -> str:
    if s.margin is None:
        return "-"
    interval = s.margin_interval
    return f"{s.margin:+.2f}" + (f" [{interval[0]:+.2f}, {interval[1]:+.2f}]" if interval else "")


def _format_table(header: list[str], rows: list[list[str]], right: Sequence[int] = ()) -> list[str]:
    right = set(right)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "  ".join(padded).rstrip()

    return [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]
