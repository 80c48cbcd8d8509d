"""Tournament schedules: who plays which deal in which seat, and the playing of the games.

``plan_tournament`` checks every argument and builds each agent once before any game;
``TournamentPlan.run`` plays the games (in worker processes) and returns a ``TournamentResult``
(``agents.tournament.statistics``). ``run_tournament`` does both; ``agents.tournament`` shows it in use.

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

A game's outcome is a ``GameRecord``: per seat, its final place (``yaniv.ranking.final_ranks``),
win share, points, calls and Assafs, moves and time to move.

Engines
-------
The games are played on one of two engines, the same schedule and records on both:

* ``"core"``: the compiled core (``yaniv_env.core``), a chunk of games as one batch
  (``agents.tournament.compiled``). Only for agents with a compiled or batched form: ``random``,
  ``greedy``, ``heuristic[:K=V,...]``, ``search[:N]``, the policies ``ppo:PATH``, ``onnx:DIR``
  and ``default`` (one forward pass for the batch's games that wait on them) and agent objects
  with ``act_batch(observations, masks)`` (a ``PPOAgent`` that does not sample), and rules the core
  plays (``yaniv_env.core.layout.check_rules``). Many times faster.
* ``"python"``: ``yaniv.Game`` and each agent's ``act(view)``, one game at a time. Any agent,
  agent objects included.

``plan_tournament(..., engine="auto")`` (the default) picks the core when it can play the plan,
else Python; ``engine="core"`` refuses, by name, an agent without a compiled form (or rules the
core cannot play). The two engines draw their cards from different generators, so a seed gives
other games on each; their figures agree in distribution. The plan's ``engine`` says which was
chosen; ``describe()`` names it. On the core, a policy answers a batch at once, and another worker
count gives other batches: a near-tie between two of its moves may then break the other way
(``agents.tournament.compiled``).

Bounds
------
At most ``MAX_GAMES`` games and ``MAX_WORKERS`` processes; more is refused by name. The workers
play chunks of at most ``MAX_CHUNK`` games, at most four chunks per worker are out at a time,
and each record is reduced as soon as its turn in game order comes (``statistics.Tally``), so
memory stays flat however many games are played (``keep_records=True`` keeps them all).

Pickles
-------
A spec naming an SB3 checkpoint (a pickle, which can run code when loaded) is refused unless
``trust_pickle=True`` (``evaluate.py --trust-pickle``); the plan carries the switch to the worker
processes. See ``agents.registry``.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from agents.base import Agent
from agents.registry import make_agent
from agents.tournament.statistics import GameRecord, Tally, TournamentResult
from yaniv import MAX_PLAYERS, MIN_PLAYERS, PRESETS, Game, Rules, get_rules
from yaniv.ranking import final_ranks
from yaniv.rules import parse_rules

MAX_COMBINATIONS = 100  # above this many line-ups, use the cyclic windows
MAX_MOVES = 100_000  # per game; a longer game is an error (agents that never end a round)
MAX_GAMES = 10_000_000  # per tournament
MAX_WORKERS = 1024  # processes
MAX_CHUNK = 256  # games a worker plays before handing back their records (on the core: one batch)
ENGINES = ("auto", "core", "python")

# Seed derivation tags: deal seeds and agent seeds come from distinct streams.
_DEAL, _AGENT = 0, 1


# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------


def derive_seed(seed: int, *keys: int) -> int:
    """A 63-bit seed from ``seed`` and a path of keys (numpy's SeedSequence: independent streams)."""
    state = np.random.SeedSequence(entropy=seed, spawn_key=tuple(keys)).generate_state(1, np.uint64)
    return int(state[0]) >> 1


def _is_agent(obj: object) -> bool:
    return callable(getattr(obj, "act", None)) and callable(getattr(obj, "reset", None))


def _seat_agent(spec: str | Agent, trust_pickle: bool = False) -> Agent:
    """The agent for a seat, seeded 0 (``reset`` reseeds it per game): built from a spec by the
    registry, or a deep copy of an agent object, so the caller's own is never played."""
    if isinstance(spec, str):
        return make_agent(spec, seed=0, trust_pickle=trust_pickle)
    agent = copy.deepcopy(spec)
    agent.reset(0)
    return agent


def _one_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return " ".join(text.split())


def _about(spec: str, error: BaseException) -> str:
    """The error as one line that names the agent spec."""
    message = _one_line(error)
    return message if repr(spec) in message else f"agent {spec!r}: {message}"


def _number_text(value: object) -> str:
    """``repr(value)``, or the size of an integer too long to print (Python refuses over 4,300 digits)."""
    if isinstance(value, int) and value.bit_length() > 10_000:
        return f"an integer of about {int(value.bit_length() * math.log10(2)):,} digits"
    return repr(value)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _labels(specs: Sequence[str | Agent]) -> list[str]:
    """Unique display names: the spec (or the agent's name), with #2, #3 ... for repeats."""
    labels: list[str] = []
    seen: dict[str, int] = {}
    for spec in specs:
        base = spec if isinstance(spec, str) else str(getattr(spec, "name", type(spec).__name__))
        seen[base] = seen.get(base, 0) + 1
        labels.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return labels


# ----------------------------------------------------------------------------------------------
# The plan: everything checked before any game
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TournamentPlan:
    """A checked tournament: agents, rules, schedule. ``run()`` plays it."""

    specs: tuple[str | Agent, ...]  # registry specs, or agent objects (deep-copied for each process)
    labels: tuple[str, ...]
    num_players: int
    games: int
    seed: int
    rules: Rules
    rules_name: str | None  # the preset's name, when one was given
    rounds: bool
    lineups: tuple[tuple[int, ...], ...]
    trust_pickle: bool = False  # the registry may load pickle-based checkpoints (the user trusts them)
    engine: str = "python"  # where the games are played: "core" or "python" (see the module docstring)

    @property
    def cycle(self) -> int:
        """Games per deal: every line-up in every rotation."""
        return len(self.lineups) * self.num_players

    @property
    def deals(self) -> int:
        return self.games // self.cycle

    @property
    def spec_texts(self) -> tuple[str, ...]:
        """Each spec as text: the spec itself, or the class of an agent object."""
        return tuple(
            spec if isinstance(spec, str) else f"object:{type(spec).__module__}.{type(spec).__qualname__}"
            for spec in self.specs
        )

    def game(self, index: int) -> tuple[int, int, int, tuple[int, ...]]:
        """Deal, line-up, rotation and the agent in each seat of game ``index``."""
        n = self.num_players
        deal, rest = divmod(index, self.cycle)
        lineup, rotation = divmod(rest, n)
        members = self.lineups[lineup]
        return deal, lineup, rotation, tuple(members[(s + rotation) % n] for s in range(n))

    def deal_seed(self, deal: int) -> int:
        """The seed of deal ``deal``: its Game (or core row) draws the deal and reshuffles from it."""
        return derive_seed(self.seed, _DEAL, deal)

    def agent_seed(self, index: int, seat: int) -> int:
        """The seed the agent in ``seat`` of game ``index`` is reset with."""
        return derive_seed(self.seed, _AGENT, index, seat)

    @property
    def max_moves(self) -> int:
        """Moves after which a game is an error (agents that never end a round)."""
        return MAX_MOVES

    def describe(self) -> str:
        unit = "single rounds" if self.rounds else "full games"
        rules = self.rules_name or self.rules.describe()
        if self.rules_name and self.rules.max_turns != PRESETS[self.rules_name].max_turns:
            rules += f", rounds capped at {self.rules.max_turns} turns"
        engine = "the compiled core" if self.engine == "core" else "the Python engine"
        return (
            f"{self.games} {unit} of {self.num_players} players ({rules}): {self.deals} deal(s) x "
            f"{len(self.lineups)} line-up(s) x {self.num_players} seat rotations; agents: {', '.join(self.labels)}; "
            f"on {engine}"
        )

    def run(self, workers: int | None = None, progress: bool = True, keep_records: bool = False) -> TournamentResult:
        """Play every game (``workers`` processes; None: every core) and reduce in game order, each
        record as it comes; ``keep_records`` keeps them all in the result (memory grows with the games)."""
        workers = check_workers(workers)
        if type(keep_records) is not bool:
            raise ValueError(f"keep_records must be True or False, got {keep_records!r}")
        start = time.perf_counter()
        tally = Tally(self, keep_records=keep_records)
        for record in _play(self, workers, progress):
            tally.add(record)
        return tally.result(wall_seconds=time.perf_counter() - start)


def _lineups(num_agents: int, num_players: int) -> tuple[tuple[int, ...], ...]:
    if num_agents == num_players:
        return (tuple(range(num_agents)),)
    if math.comb(num_agents, num_players) <= MAX_COMBINATIONS:
        return tuple(itertools.combinations(range(num_agents), num_players))
    return tuple(tuple((i + j) % num_agents for j in range(num_players)) for i in range(num_agents))


def check_workers(workers: object) -> int:
    """The number of processes: ``workers``, or every core for None; ValueError naming a bad value."""
    if workers is None:
        return _cpu_count()
    if type(workers) is not int or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(
            f"workers must be a whole number from 1 to {MAX_WORKERS} (or None for every core), "
            f"got {_number_text(workers)}"
        )
    return workers


def plan_tournament(
    agent_specs: Sequence[str | Agent],
    num_players: int,
    games: int,
    seed: int = 0,
    rules: str | Rules | Mapping[str, Any] | None = "default",
    rounds: bool = False,
    max_turns: int | None = None,
    trust_pickle: bool = False,
    engine: str = "auto",
) -> TournamentPlan:
    """Check every argument and build the agents once; ValueError naming the first problem.

    ``agent_specs`` are agent specs (``agents.registry``: "random", "search:64", "ppo:PATH", a
    path ...) or agent objects (``act(view)``, ``reset(seed)``,
    ``name``), which are deep-copied for each worker. Each named agent is built here and makes one
    move on a sample deal, so a checkpoint that does not fit the rules or the table size is refused
    before the tournament (agent objects are the caller's: not probed). ``rules``: a preset's name, a
    preset with changes on one line (``"default:jokers=0,game_end=one_round"``,
    ``yaniv.rules.parse_rules``), a mapping of settings or a ``Rules``. ``max_turns`` caps every
    round at that many turns (the rules' ``max_turns``: a capped round has no winner and no
    points), a guard against agents that may never end a round. ``trust_pickle`` lets the registry
    load pickle-based checkpoints (SB3 ``.zip``), which can run code: only for files you trust.
    ``engine``: ``"auto"`` (the compiled core when every agent has a compiled form, else Python),
    ``"core"`` (refused, naming the agent, when one has none) or ``"python"``; see the module
    docstring. At most ``MAX_GAMES`` games.
    """
    # Player count.
    if type(num_players) is not int or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise ValueError(
            f"the number of players must be a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}, got {num_players!r}"
        )

    # Rules.
    rules_name = rules if isinstance(rules, str) and rules in PRESETS else None
    if isinstance(rules, str) and rules not in PRESETS:  # a preset with changes, 'default:jokers=0,...'
        if ":" not in rules:
            raise ValueError(f"unknown rules preset {rules!r}; presets: {', '.join(PRESETS)}, or a preset with "
                             "changes, 'default:jokers=0,game_end=one_round'")
        rules = parse_rules(rules)
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
    for spec in specs:
        if isinstance(spec, str):
            if not spec.strip():
                raise ValueError("an agent name is empty")
        elif not _is_agent(spec):
            raise ValueError(f"an agent must be a name or an object with act(view) and reset(seed), got {spec!r}")
    if len(specs) < num_players:
        raise ValueError(
            f"{num_players} seats need at least {num_players} agents, got {len(specs)} "
            f"({', '.join(map(str, specs)) or 'none'}); name an agent twice to seat two copies of it"
        )

    # Seed, mode, game count.
    if type(seed) is not int or seed < 0:
        raise ValueError(f"the seed must be a whole number >= 0, got {seed!r}")
    if type(rounds) is not bool:
        raise ValueError(f"rounds must be True or False, got {rounds!r}")
    if type(trust_pickle) is not bool:
        raise ValueError(f"trust_pickle must be True or False, got {trust_pickle!r}")
    if not isinstance(engine, str) or engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    lineups = _lineups(len(specs), num_players)
    cycle = len(lineups) * num_players
    if type(games) is not int or games < 1:
        raise ValueError(f"the number of games must be a whole number >= 1, got {_number_text(games)}")
    if games > MAX_GAMES:
        raise ValueError(f"the number of games must be at most {MAX_GAMES:,}, got {_number_text(games)}")
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
            agent = make_agent(spec, seed=0, trust_pickle=trust_pickle)
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

    labels = tuple(_labels(specs))
    return TournamentPlan(
        specs=specs,
        labels=labels,
        num_players=num_players,
        games=games,
        seed=seed,
        rules=rules_obj,
        rules_name=rules_name,
        rounds=rounds,
        lineups=lineups,
        trust_pickle=trust_pickle,
        engine=_choose_engine(engine, specs, labels, rules_obj, trust_pickle),
    )


def _choose_engine(engine: str, specs: Sequence[str | Agent], labels: Sequence[str], rules: Rules,
                   trust_pickle: bool) -> str:
    """"core" or "python" for the requested ``engine`` (see the module docstring); ValueError naming
    the agent (or the rule) when "core" is asked for and cannot be had."""
    if engine == "python":
        return engine
    for spec, label in zip(specs, labels):
        if not isinstance(spec, str) and not callable(getattr(spec, "act_batch", None)):
            if engine == "auto":
                return "python"
            raise ValueError(f"engine 'core': agent {label!r} is an agent object without act_batch, which plays "
                             "only on the Python engine (engine='python' or 'auto')")
    from agents.tournament import compiled  # numba and the core: imported only when they may be used

    for spec, label in zip(specs, labels):
        if compiled.compiled_form(spec, trust_pickle) is None:
            if engine == "auto":
                return "python"
            raise ValueError(f"engine 'core': agent {label!r} has no compiled form (the core plays "
                             f"{', '.join(compiled.KIND_NAMES)}); use engine='python' or 'auto'")
    problem = compiled.check_core_rules(rules)
    if problem is not None:
        if engine == "auto":
            return "python"
        raise ValueError(f"engine 'core' cannot play these rules: {problem}")
    return "core"


def run_tournament(
    agent_specs: Sequence[str | Agent],
    num_players: int,
    games: int,
    seed: int = 0,
    rules: str | Rules | Mapping[str, Any] | None = "default",
    rounds: bool = False,
    workers: int | None = None,
    progress: bool = True,
    max_turns: int | None = None,
    trust_pickle: bool = False,
    keep_records: bool = False,
    engine: str = "auto",
) -> TournamentResult:
    """Check everything, then play ``games`` games (single rounds with ``rounds=True``).

    See the module docstring for the schedule. ``workers``: processes (None: every core; 1 plays
    in this process). The same ``seed`` gives the same result for any number of workers.
    ``trust_pickle`` and ``engine``: see ``plan_tournament``; ``keep_records``: see ``TournamentPlan.run``.
    """
    workers = check_workers(workers)
    plan = plan_tournament(agent_specs, num_players, games, seed=seed, rules=rules, rounds=rounds, max_turns=max_turns,
                           trust_pickle=trust_pickle, engine=engine)
    return plan.run(workers=workers, progress=progress, keep_records=keep_records)


# ----------------------------------------------------------------------------------------------
# Playing
# ----------------------------------------------------------------------------------------------


class _Player:
    """The games of one process: the plan and one agent per agent index, built on first use."""

    def __init__(self, plan: TournamentPlan) -> None:
        self.plan = plan
        self.agents: dict[int, Agent] = {}

    def agent(self, index: int) -> Agent:
        if index not in self.agents:
            self.agents[index] = _seat_agent(self.plan.specs[index], self.plan.trust_pickle)
        return self.agents[index]

    def play_range(self, start: int, stop: int) -> list[GameRecord]:
        return [self.play(i) for i in range(start, stop)]

    def play(self, index: int) -> GameRecord:
        plan = self.plan
        n = plan.num_players
        deal, lineup, rotation, seats = plan.game(index)
        game = Game(n, plan.rules, seed=plan.deal_seed(deal), single_round=plan.rounds)
        agents = [self.agent(a) for a in seats]
        for s, agent in enumerate(agents):
            agent.reset(plan.agent_seed(index, s))
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


def _record(
    game: Game, index: int, deal: int, lineup: int, rotation: int, seats: Sequence[int], moves: Sequence[int],
    seconds: Sequence[float],
) -> GameRecord:
    """The record of a finished game (see ``GameRecord``)."""
    n = game.num_players
    alive = [True] * n
    alive_rounds, points, calls, assafed, assafs = ([0] * n for _ in range(5))
    turns = capped = 0
    for result in game.results:
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
    winners = set(game.winners)
    share = 1.0 / len(winners) if winners else 0.0
    return GameRecord(
        index=index, deal=deal, lineup=lineup, rotation=rotation, seats=tuple(seats), ranks=final_ranks(game),
        win_shares=tuple(share if q in winners else 0.0 for q in range(n)), scores=tuple(game.scores),
        rounds=len(game.results), turns=turns, capped=capped, alive_rounds=tuple(alive_rounds), points=tuple(points),
        calls=tuple(calls), assafed=tuple(assafed), assafs=tuple(assafs), moves=tuple(moves),
        seconds=tuple(seconds),
    )


def _player(plan: TournamentPlan) -> Any:
    """The player of this process: ``play_range(start, stop)`` gives those games' records."""
    if plan.engine == "core":
        from agents.tournament.compiled import BatchPlayer

        return BatchPlayer(plan)
    return _Player(plan)


_WORKER: Any = None


def _init_worker(plan: TournamentPlan) -> None:
    """One thread per process, the processes being the parallelism: torch's, and numpy's BLAS and
    any OpenMP pool (threadpoolctl). A numpy policy's forward pass is a BLAS product; with a pool
    of BLAS threads in each of two workers on two cores it took 1.3 ms a move instead of 0.07."""
    global _WORKER
    from threadpoolctl import threadpool_limits

    _WORKER = _player(plan)  # first, so that the libraries its agents load are limited too
    threadpool_limits(1)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _play_range(start: int, stop: int) -> list[GameRecord]:
    assert _WORKER is not None
    return _WORKER.play_range(start, stop)


def _play(plan: TournamentPlan, workers: int, progress: bool) -> Iterator[GameRecord]:
    """Every game's record, in game order, as the games are played."""
    from tqdm import tqdm

    total = plan.games

    def bar() -> tqdm:
        return tqdm(total=total, unit="game", desc="tournament", disable=not progress, leave=False)

    if workers == 1 or total == 1:
        player = _player(plan)
        step = MAX_CHUNK if plan.engine == "core" else 1  # the core plays a chunk as one batch
        with bar() as progress_bar:
            for start in range(0, total, step):
                chunk = player.play_range(start, min(start + step, total))
                yield from chunk
                progress_bar.update(len(chunk))
        return
    # A few chunks per worker (the load stays balanced and the bar moves), each of at most MAX_CHUNK
    # games, and at most four per worker out at a time: the records of chunks that finish early
    # wait for their turn in game order, so what waits is bounded, whatever the number of games.
    size = min(MAX_CHUNK, -(-total // (workers * 4)))
    starts = iter(range(0, total, size))
    pool = ProcessPoolExecutor(max_workers=min(workers, -(-total // size)), initializer=_init_worker,
                               initargs=(plan,))
    pending: dict[int, Future[list[GameRecord]]] = {}

    def submit() -> None:
        start = next(starts, None)
        if start is not None:
            pending[start] = pool.submit(_play_range, start, min(start + size, total))

    try:
        # The worker processes start at the first submit, before the bar exists (no thread of ours is forked).
        for _ in range(workers * 4):
            submit()
        with bar() as progress_bar:
            for start in range(0, total, size):
                chunk = pending.pop(start).result()
                submit()
                yield from chunk
                progress_bar.update(len(chunk))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
