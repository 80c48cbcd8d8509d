"""Tournament games on the compiled core: a chunk of games played as one batch.

``agents.tournament.schedule`` plays a plan here when every agent has a compiled or a batched
form (``plan_tournament(..., engine="auto")``, the default, or ``engine="core"``):

=========================  =====================================================================
spec                       how its seats move
=========================  =====================================================================
``random``                 ``yaniv_env.core.bots.random_action``, inside the kernel
``greedy``                 ``bots.greedy_action``, inside the kernel
``heuristic[:K=V,...]``    ``bots.heuristic_action`` with ``bots.heuristic_params(**K=V)``
``search[:N]``             ``yaniv_env.core.search.search_action`` with ``search_params(N)``
``ppo:PATH``               the policy's ``act_batch`` (``NumpyPolicy``): one forward pass for the
``onnx:DIR``, ``default``  seats of every game of the batch that wait on it
                           (``ExportedPolicy.act_batch``); its best legal action, as ``PPOAgent``
``plan[:N]:BOT``           its policy's candidates for every waiting game (one forward pass), then
                           ``search.choose_games``: the compiled rollouts (``agents.policies.planner``)
an agent object with       its own ``act_batch(observations, masks)`` (``PPOAgent``, unless it
``act_batch``              samples): how a training run evaluates its current policy
=========================  =====================================================================

``compiled_form(spec)`` says which form a spec has (None: none; other agent objects have none), and
``BatchPlayer(plan).play_range(start, stop)`` plays games ``start`` to ``stop - 1`` of the plan and
returns their ``GameRecord``s in game order.

How a batch is played: one core row per game (``yaniv_env.core.layout``), dealt with
``engine.new_game`` (seat 0 opens the first round). ``advance``, one numba call, moves the
compiled seats of every game until each game is over or waits on a policy's seat; then each
policy decides for all the games that wait on it at once (``batch.observe_games``,
``batch.mask_games``, ``act_batch``) and ``apply_moves`` plays its answers; and so on until every
game is over. Each finished round's figures (``RES_*``) are added to the game's tallies as the
round ends, and the record is read off the row at the end (``mirror.final_ranks``).

The same tournament as the Python path (``schedule``): the same schedule, seat rotations, rules,
turn cap and ``MAX_MOVES``, and the same ``GameRecord`` fields. Randomness:

* **Deals.** Each game's own generator (``engine.seed_rng``) is seeded from the deal's seed,
  ``plan.deal_seed(deal)``, and serves the deal and the reshuffles only, so every
  rotation and line-up of a deal is dealt the same first hands.
* **Agents.** The random bot, the search and the planner draw from their seat's own generator, seeded from
  ``plan.agent_seed(game, seat)``, as the Python agents are ``reset``; the other bots
  and the policies (their best action) use none.

So the same seed gives the same results, but not the Python path's games: the core's generators
are SplitMix64, not numpy's PCG64, and the compiled heuristic differs from the Python one in a
rare tie (``yaniv_env.core.bots``). The two paths agree in distribution (``tests/test_tournament_core.py``).

Time per move (``GameRecord.seconds``): a compiled seat's move is timed inside the kernel with
the processor's cycle counter (x86 only), turned into seconds by the kernel call's wall time;
without a cycle counter, each kernel call's time is shared evenly among the moves it made. A
policy's time is its batched call's (observations, masks and forward pass), shared evenly among
the games it answered.

One caveat on worker counts: the chunks, and so the batches a policy sees, depend on the number
of workers, and a batched forward pass may round a row's logits differently in the last bit for
another batch size; two near-equal best actions could then swap. The compiled bots' moves do not
depend on the batch.
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from agents.registry import parse_spec
from agents.tournament.statistics import GameRecord
from yaniv_env.core import bots, search
from yaniv_env.core.batch import mask_games, observe_games
from yaniv_env.core.batch import SCRATCH as OBSERVE_SCRATCH
from yaniv_env.core.engine import GAME_OVER, ILLEGAL, TURN_ON, apply_action, new_game, seed_rng
from yaniv_env.core.layout import (
    CURRENT, MAX_SEATS, PHASE, PHASE_OVER, PLAYERS, RES_ASSAFERS, RES_CALLER, RES_DEALT, RES_POINTS, RES_TURNS, ROUND,
    ROUNDS, SCORE, TURN, WINNERS, check_rules, new_rows, write_rules,
)
from yaniv_env.core.mirror import final_ranks
from yaniv_env.encoding import action_table, observation_size

if TYPE_CHECKING:
    from agents.tournament.schedule import TournamentPlan

# Seat kinds: how a seat moves.
RANDOM, GREEDY, HEURISTIC, SEARCH, POLICY, PLAN = 0, 1, 2, 3, 4, 5
KIND_NAMES: Final = {"random": RANDOM, "greedy": GREEDY, "heuristic": HEURISTIC, "search": SEARCH,
                     "ppo": POLICY, "onnx": POLICY, "default": POLICY, "plan": PLAN}

# A game's status (T_STATUS).
PLAYING, AT_POLICY, OVER, ILLEGAL_MOVE, TOO_LONG, NO_MOVE = 0, 1, 2, 3, 4, 5

# A game's tallies: T[g, field] (per seat: field + seat).
T_STATUS: Final = 0
T_TOTAL: Final = 1  # moves of every seat
T_TURNS: Final = 2  # turns of the finished rounds
T_CAPPED: Final = 3  # rounds ended by the turn cap
T_ACTION: Final = 4  # the refused action of an ILLEGAL_MOVE
T_MOVES: Final = 5
T_ALIVE: Final = T_MOVES + MAX_SEATS  # rounds the seat was dealt into
T_POINTS: Final = T_ALIVE + MAX_SEATS
T_CALLS: Final = T_POINTS + MAX_SEATS
T_ASSAFED: Final = T_CALLS + MAX_SEATS
T_ASSAFS: Final = T_ASSAFED + MAX_SEATS
T_CYCLES: Final = T_ASSAFS + MAX_SEATS  # the seat's compiled moves' time in cycles (units of work without them)
T_WIDTH: Final = T_CYCLES + MAX_SEATS

SCRATCH: Final = max(bots.SCRATCH, OBSERVE_SCRATCH)


# ----------------------------------------------------------------------------------------------
# Which specs have a compiled form
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompiledForm:
    """How a spec plays on the core: its seat kind and what that kind needs (the heuristic's keyword
    arguments, the search's budget or None, the policy's spec, the planner's (budget or None, policy
    spec))."""

    kind: int
    value: Any


def compiled_form(spec: object, trust_pickle: bool = False) -> CompiledForm | None:
    """The compiled or batched form of an agent spec, or None (an agent object, or a registered name
    without one). The spec must be valid (``plan_tournament`` has checked it)."""
    if not isinstance(spec, str):
        batched = callable(getattr(spec, "act_batch", None)) and not getattr(spec, "sample", False)
        return CompiledForm(POLICY, spec) if batched else None
    checked = parse_spec(spec, trust_pickle=trust_pickle)
    kind = KIND_NAMES.get(checked.name)
    if kind is None:
        return None
    if kind == HEURISTIC:
        try:
            bots.heuristic_params(**checked.value)
        except (TypeError, ValueError):
            return None  # a setting the port does not take
    return CompiledForm(kind, spec if kind == POLICY else checked.value)


def check_core_rules(rules: Any) -> str | None:
    """None if the core plays ``rules``, else the reason (``layout.check_rules``)."""
    try:
        check_rules(rules)
    except ValueError as error:
        return str(error)
    return None


def batched_policy(spec: str, trust_pickle: bool = False) -> Any:
    """The batched policy of a ``ppo``, ``onnx`` or ``default`` spec: an object with ``act_batch``."""
    checked = parse_spec(spec, trust_pickle=trust_pickle)
    if checked.name == "ppo":
        from agents.policies.ppo import load_policy

        return load_policy(checked.value, trust_pickle=trust_pickle)
    from agents.policies.onnx import ExportedPolicy

    return ExportedPolicy(checked.value)


# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------

HAS_CYCLE_COUNTER: Final = platform.machine().lower() in ("x86_64", "amd64")


@intrinsic
def _cycles(typingctx):
    """The processor's cycle counter (``llvm.readcyclecounter``: rdtsc); 0 where there is none."""

    def codegen(context, builder, signature, args):
        if not HAS_CYCLE_COUNTER:
            return context.get_constant(types.int64, 0)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.int64(), codegen


@njit(cache=True)
def cycles():
    """The cycle counter, read from Python (0 where there is none)."""
    return _cycles()


@njit(cache=True)
def _settle(s, T, g):
    """Add the round that just ended (``RES_*``) to game g's tallies (``schedule._record``'s sums)."""
    T[g, T_TURNS] += s[RES_TURNS]
    caller = s[RES_CALLER]
    dealt = s[RES_DEALT]
    for q in range(s[PLAYERS]):
        if dealt >> q & 1:
            T[g, T_ALIVE + q] += 1
            T[g, T_POINTS + q] += s[RES_POINTS + q]
    if caller < 0:
        T[g, T_CAPPED] += 1
        return
    T[g, T_CALLS + caller] += 1
    assafers = s[RES_ASSAFERS]
    if assafers:
        T[g, T_ASSAFED + caller] += 1
    for q in range(s[PLAYERS]):
        if assafers >> q & 1:
            T[g, T_ASSAFS + q] += 1


@njit(cache=True)
def _step(S, R, T, g, seat, action, buf):
    """Play ``action`` for ``seat`` (the player to move) in game g and tally it; False if refused."""
    s = S[g]
    code = apply_action(s, R[g], action, buf)
    if code == ILLEGAL:
        T[g, T_STATUS] = ILLEGAL_MOVE
        T[g, T_ACTION] = action
        return False
    T[g, T_MOVES + seat] += 1
    T[g, T_TOTAL] += 1
    if code != TURN_ON:
        _settle(s, T, g)
    if code == GAME_OVER:
        T[g, T_STATUS] = OVER
    return True


@njit(cache=True)
def advance(S, R, A, K, Q, HP, SP, SH, T, games, max_moves):
    """The compiled seats of each game of ``games`` move until it is over (``OVER``), waits on a
    policy (``AT_POLICY``) or fails (``ILLEGAL_MOVE``, ``NO_MOVE``: a bug; ``TOO_LONG``: ``max_moves``
    moves and not over). ``R[g]``: game g's generator; ``A[g, q]``: seat q's; ``K[g, q]``: seat q's
    kind, ``Q[g, q]``: its row of ``HP`` (heuristic parameters) or ``SP`` (search settings; ``SH``
    the search's heuristic). Returns how many games wait on a policy."""
    buf = np.empty(SCRATCH, dtype=np.int64)
    out = np.empty(bots.ACTION_ROOM, dtype=np.int64)
    waiting = 0
    for k in range(games.shape[0]):
        g = games[k]
        s = S[g]
        T[g, T_STATUS] = PLAYING
        while True:
            if s[PHASE] == PHASE_OVER:
                T[g, T_STATUS] = OVER
                break
            if T[g, T_TOTAL] >= max_moves:
                T[g, T_STATUS] = TOO_LONG
                break
            seat = s[CURRENT]
            kind = K[g, seat]
            if kind >= POLICY:  # a policy or a planner: decided outside, for every waiting game at once
                T[g, T_STATUS] = AT_POLICY
                waiting += 1
                break
            start = _cycles()
            if kind == RANDOM:
                action = bots.random_action(s, A[g, seat : seat + 1], out, buf)
            elif kind == GREEDY:
                action = bots.greedy_action(s, buf)
            elif kind == HEURISTIC:
                action = bots.heuristic_action(s, HP[Q[g, seat]], buf)
            else:
                action = search.search_action(s, A[g, seat : seat + 1], SP[Q[g, seat]], SH)
            if HAS_CYCLE_COUNTER:
                T[g, T_CYCLES + seat] += max(_cycles() - start, 0)
            else:
                T[g, T_CYCLES + seat] += 1
            if action < 0:
                T[g, T_STATUS] = NO_MOVE
                break
            if not _step(S, R, T, g, seat, action, buf):
                break
    return waiting


@njit(cache=True)
def apply_moves(S, R, T, games, actions):
    """``actions[k]`` for the player to move in game ``games[k]``; -1, or the first k refused."""
    buf = np.empty(SCRATCH, dtype=np.int64)
    failed = -1
    for k in range(games.shape[0]):
        g = games[k]
        if not _step(S, R, T, g, S[g, CURRENT], actions[k], buf) and failed < 0:
            failed = k
    return failed


# ----------------------------------------------------------------------------------------------
# The player of one process
# ----------------------------------------------------------------------------------------------


class BatchPlayer:
    """Plays chunks of a plan's games on the core (one per process; policies loaded on first use)."""

    def __init__(self, plan: TournamentPlan) -> None:
        self.plan = plan
        self.max_moves = plan.max_moves
        self.forms: list[CompiledForm] = []
        for spec, label in zip(plan.specs, plan.labels):
            form = compiled_form(spec, plan.trust_pickle)
            if form is None:
                raise ValueError(f"agent {label!r} has no compiled form")
            self.forms.append(form)
        # Parameter tables: a heuristic's row of HP, a search's row of SP, a policy's agent index.
        heuristics = [bots.heuristic_params(**f.value) for f in self.forms if f.kind == HEURISTIC]
        searches = [search.search_params(search.DEFAULT_BUDGET if f.value is None else f.value)
                    for f in self.forms if f.kind == SEARCH]
        self.HP = np.array(heuristics or [bots.heuristic_params()], dtype=np.float64)
        self.SP = np.array(searches or [search.search_params()], dtype=np.float64)
        self.SH = bots.heuristic_params(call_risk=search.CALL_RISK)
        self.param = []
        counters = {HEURISTIC: 0, SEARCH: 0}
        for a, f in enumerate(self.forms):
            if f.kind in counters:
                self.param.append(counters[f.kind])
                counters[f.kind] += 1
            else:
                self.param.append(a)
        self.template = new_rows(1)[0]
        write_rules(self.template, plan.rules)
        self.obs_size = observation_size(plan.rules.hand_size)
        self.num_actions = action_table(plan.rules.hand_size).size
        self.policies: dict[int, Any] = {}
        self.buf = np.zeros(SCRATCH, dtype=np.int64)

    def policy(self, agent: int) -> Any:
        """Agent ``agent``'s batched policy (a planner's: the network it searches over), loaded on first use."""
        if agent not in self.policies:
            form = self.forms[agent]
            value = form.value[1] if form.kind == PLAN else form.value
            self.policies[agent] = value if not isinstance(value, str) else batched_policy(value, self.plan.trust_pickle)
        return self.policies[agent]

    def play_range(self, start: int, stop: int) -> list[GameRecord]:
        """The records of games ``start`` to ``stop - 1``, played as one batch, in game order."""
        plan = self.plan
        n = plan.num_players
        count = stop - start
        S = np.repeat(self.template[None, :], count, axis=0)
        R = np.zeros((count, 1), dtype=np.uint64)
        A = np.zeros((count, MAX_SEATS), dtype=np.uint64)
        K = np.zeros((count, MAX_SEATS), dtype=np.int64)
        Q = np.zeros((count, MAX_SEATS), dtype=np.int64)
        T = np.zeros((count, T_WIDTH), dtype=np.int64)
        self.seconds = np.zeros((count, MAX_SEATS), dtype=np.float64)
        games = [plan.game(i) for i in range(start, stop)]
        for j, (i, (deal, _, _, seats)) in enumerate(zip(range(start, stop), games)):
            R[j, 0] = seed_rng(plan.deal_seed(deal))
            for q, a in enumerate(seats):
                A[j, q] = seed_rng(plan.agent_seed(i, q))
                K[j, q] = self.forms[a].kind
                Q[j, q] = self.param[a]
            new_game(S[j], R[j], n, plan.rounds, 0)
        self._arrays = (S, R, A, K, Q, T)
        self._games = games
        self._start = start

        self._advance(np.arange(count, dtype=np.int64))
        while True:
            waiting = np.flatnonzero(T[:, T_STATUS] == AT_POLICY)
            if not waiting.size:
                break
            seats = S[waiting, CURRENT]
            agents = Q[waiting, seats]
            for a in np.unique(agents):
                self._policy_moves(int(a), waiting[agents == a], seats[agents == a])

        records = []
        for j, (i, (deal, lineup, rotation, seats)) in enumerate(zip(range(start, stop), games)):
            records.append(self._record(j, i, deal, lineup, rotation, seats))
        return records

    # -- the steps --------------------------------------------------------------------------------

    def _advance(self, games: np.ndarray) -> None:
        """``advance`` on ``games``, the time of their compiled moves into ``self.seconds``, and any
        failure raised."""
        S, R, A, K, Q, T = self._arrays
        clock = time.perf_counter
        t0, c0 = clock(), cycles()
        advance(S, R, A, K, Q, self.HP, self.SP, self.SH, T, games, self.max_moves)
        c1, t1 = cycles(), clock()
        work = T[games, T_CYCLES : T_CYCLES + MAX_SEATS]
        units = (c1 - c0) if HAS_CYCLE_COUNTER else work.sum()
        if units > 0:
            self.seconds[games] += work * ((t1 - t0) / units)
        T[games, T_CYCLES : T_CYCLES + MAX_SEATS] = 0
        status = T[games, T_STATUS]
        bad = np.flatnonzero((status != OVER) & (status != AT_POLICY))
        if bad.size:
            self._fail(int(games[bad[0]]))

    def _policy_moves(self, agent: int, games: np.ndarray, seats: np.ndarray) -> None:
        """Agent ``agent``'s policy decides in every game of ``games`` (its seat ``seats``), then the
        compiled seats move on."""
        S, R, A, K, Q, T = self._arrays
        start = time.perf_counter()
        obs = np.zeros((games.size, self.obs_size), dtype=np.float32)
        masks = np.zeros((games.size, self.num_actions), dtype=np.int8)
        observe_games(S, games, seats, obs, self.buf)
        mask_games(S, games, masks, self.buf)
        if self.forms[agent].kind == PLAN:
            actions = self._plan(agent, games, seats, obs, masks)
        else:
            actions = np.asarray(self.policy(agent).act_batch(obs, masks))
        self.seconds[games, seats] += (time.perf_counter() - start) / games.size
        label = self.plan.labels[agent]
        if actions.shape != games.shape or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"agent {label!r}: its policy's act_batch gave {actions.dtype} actions of shape "
                             f"{actions.shape} for {games.size} games")
        actions = actions.astype(np.int64)
        failed = apply_moves(S, R, T, games, actions)
        if failed >= 0:
            self._fail(int(games[failed]))
        self._advance(games)

    def _plan(self, agent: int, games: np.ndarray, seats: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """A planner's moves (``agents.policies.planner``): its network's candidates for every waiting
        game, checked by the compiled search's rollouts on each seat's own generator."""
        from agents.policies.planner import PLAN_BUDGET, PLAN_TOP_K, policy_candidates

        S, R, A, K, Q, T = self._arrays
        budget = self.forms[agent].value[0] or PLAN_BUDGET
        yaniv = action_table(self.plan.rules.hand_size).yaniv
        cands, counts = policy_candidates(self.policy(agent), obs, masks, yaniv, PLAN_TOP_K, budget)
        actions = np.empty(games.size, dtype=np.int64)
        search.choose_games(S, A, games, seats.astype(np.int64), cands, counts, search.search_params(budget), actions)
        return actions

    def _fail(self, j: int) -> None:
        """Raise the error of game j (its status says which)."""
        S, R, A, K, Q, T = self._arrays
        s = S[j]
        index = self._start + j
        seats = self._games[j][3]
        seat = int(s[CURRENT])
        label = self.plan.labels[seats[seat]]
        status = T[j, T_STATUS]
        if status == ILLEGAL_MOVE:
            raise ValueError(f"agent {label!r} in seat {seat} of game {index} chose an illegal move "
                             f"(action {int(T[j, T_ACTION])})")
        if status == TOO_LONG:
            raise RuntimeError(
                f"game {index} ({', '.join(self.plan.labels[a] for a in seats)}) did not end within "
                f"{self.max_moves} moves (round {int(s[ROUND])} at turn {int(s[TURN])}): the agents may never end a "
                "round; cap rounds with max_turns (evaluate.py --max-turns)"
            )
        raise RuntimeError(f"agent {label!r} in seat {seat} of game {index} found no move on the core: "
                           "a bug in yaniv_env.core")

    def _record(self, j: int, index: int, deal: int, lineup: int, rotation: int, seats: tuple[int, ...]) -> GameRecord:
        """The record of finished game j (``schedule._record``'s fields, read off the row and the tallies)."""
        S, R, A, K, Q, T = self._arrays
        s, t = S[j], T[j]
        n = self.plan.num_players

        def per_seat(field: int) -> tuple[int, ...]:
            return tuple(int(x) for x in t[field : field + n])

        winners = [q for q in range(n) if s[WINNERS] >> q & 1]
        share = 1.0 / len(winners) if winners else 0.0
        return GameRecord(
            index=index, deal=deal, lineup=lineup, rotation=rotation, seats=tuple(seats), ranks=final_ranks(s),
            win_shares=tuple(share if q in winners else 0.0 for q in range(n)),
            scores=tuple(int(x) for x in s[SCORE : SCORE + n]),
            rounds=int(s[ROUNDS]), turns=int(t[T_TURNS]), capped=int(t[T_CAPPED]), alive_rounds=per_seat(T_ALIVE),
            points=per_seat(T_POINTS), calls=per_seat(T_CALLS), assafed=per_seat(T_ASSAFED),
            assafs=per_seat(T_ASSAFS), moves=per_seat(T_MOVES),
            seconds=tuple(float(x) for x in self.seconds[j, :n]),
        )
