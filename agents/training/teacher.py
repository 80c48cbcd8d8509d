"""Imitation data made on the fly on the compiled core: a teacher bot's decisions in full games.

    for chunk in teacher_stream(config, "heuristic:call_risk=0.1,score_weight=2", gamma=0.99, seed=0):
        ...   # chunk: {"obs", "masks", "actions", "returns"}, each decision once

``teacher_stream`` plays ``games`` full games at a time on the core (``yaniv_env.core``), table
sizes drawn from ``config.players``, under ``config.rules`` (or, with ``config.rule_sets`` or ``config.rule_space``,
each game under rules drawn from those); at every decision of every seat it
records the observation and mask (``yaniv_env.core.observe``, the layout of
``yaniv_env.encoding``), the teacher's action (a compiled bot: ``yaniv_env.core.bots``) and, once
the round is over, the round reward that followed, discounted by ``gamma`` per own decision of
that seat (``yaniv_env.aec`` rewards of ``config.round_reward``, the rank in a game of one round;
0 in a round the turn cap cut).
With a ``student`` (DAgger), each seat of a new game is the student's with even odds (at least
one per game): there the student's best move (``NumpyPolicy.act_batch``) is played and the
teacher's is still the label. A game whose round passes ``config.max_turns`` turns is dropped
from there and a new one dealt, as ``collect_imitation_data`` does.

Chunks of about ``chunk`` decisions come out as their rounds end, so memory holds one chunk and
the games in flight, never the whole data: the default run's 600,000 decisions of 1,628 floats
took 4 GB when they were held at once. Teachers: the bots with a compiled form
(``compiled_teacher``): random, greedy, the heuristic with any settings, and the search at any
budget (``yaniv_env.core.search``, ranking with ``call_risk=CALL_RISK`` as the tournament's; expert
iteration's teacher: with a ``student`` its labels are the search's answers in the positions the
network reaches). The search draws its samples from a generator of its own per game, seeded at the
deal, so its labels never move the game's deck.

Determinism: the games' deals and shuffles come from per-game generators seeded from ``seed``,
the table sizes and student seats from a numpy generator seeded from it, the search's generators
from another, so the same seed gives the same chunks, and the same deals whatever the teacher.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
from numba import njit

from yaniv.rules import PRESETS
from yaniv_env.aec import points_rewards, ranks_rewards
from yaniv_env.core import bots, engine, layout as L, observe as core_observe, search
from yaniv_env.core.mirror import final_ranks, round_points
from yaniv_env.encoding import action_table, observation_size
from yaniv_env.vector import CompiledSearch

RANDOM, GREEDY, HEURISTIC, SEARCH = 0, 1, 2, 3


def compiled_teacher(spec: str) -> tuple[int, np.ndarray, np.ndarray]:
    """(kind, heuristic params, search params) of a teacher spec: the heuristic's settings (the
    search's ranking heuristic for the search) and ``search.search_params`` (the search only, else
    empty); ValueError naming the spec if it has no compiled form."""
    from agents.registry import parse_spec

    parsed = parse_spec(spec)
    none = np.zeros(0, dtype=np.float64)
    if parsed.name == "random":
        return RANDOM, bots.heuristic_params(), none
    if parsed.name == "greedy":
        return GREEDY, bots.heuristic_params(), none
    if parsed.name == "heuristic":
        return HEURISTIC, bots.heuristic_params(**parsed.value), none
    if parsed.name == "search":  # the settings of the vector env's search seats
        seat = CompiledSearch() if parsed.value is None else CompiledSearch(parsed.value)
        return SEARCH, seat.ranking, seat.params
    raise ValueError(f"imitation_bot {spec!r}: the imitation data is made on the compiled core, which plays "
                     "random, greedy, heuristic[:K=V,...] and search[:N] only")


@njit(cache=True)
def _decide(S, R, A, live, kind, params, sparams, obs, masks, labels, seats, buf, obuf, out):
    """For each live game: the seat to move, its observation and mask, and the teacher's action
    (``A[g]``: the search's own generator in game g)."""
    for g in range(S.shape[0]):
        if not live[g]:
            continue
        s = S[g]
        q = s[L.CURRENT]
        seats[g] = q
        core_observe.observe(s, q, obs[g], obuf)
        engine.action_mask(s, masks[g], buf)
        if kind == RANDOM:
            labels[g] = bots.random_action(s, R[g : g + 1], out, buf)
        elif kind == GREEDY:
            labels[g] = bots.greedy_action(s, buf)
        elif kind == SEARCH:
            labels[g] = search.search_action(s, A[g : g + 1], sparams, params)
        else:
            labels[g] = bots.heuristic_action(s, params, buf)


@njit(cache=True)
def _apply(S, R, live, actions, codes, buf):
    for g in range(S.shape[0]):
        if live[g]:
            codes[g] = engine.apply_action(S[g], R[g : g + 1], actions[g], buf)


def teacher_stream(
    config: Any, bot: str, gamma: float, seed: int, student: Any = None, games: int = 256, chunk: int = 16_384,
) -> Iterator[dict[str, np.ndarray]]:
    """Chunks of the teacher's decisions, for ever (see the module docstring); the caller stops."""
    kind, params, sparams = compiled_teacher(bot)
    rules = PRESETS[config.rules]
    drawn = config.training_rule_sets()  # per game, when given
    counts = config.player_counts
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
    searches = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(8,)))  # apart: the same deals
    size = observation_size(rules.hand_size)
    actions_n = action_table(rules.hand_size).size
    S = L.new_rows(games)
    for row in S:
        L.write_rules(row, rules)
    R = np.zeros(games, dtype=np.uint64)
    A = np.zeros(games, dtype=np.uint64)  # the search's generators
    students = np.zeros((games, L.MAX_SEATS), dtype=bool)
    round_turns = np.zeros(games, dtype=np.int64)
    pending: list[list[list[int]]] = [[[] for _ in range(L.MAX_SEATS)] for _ in range(games)]

    def deal(g: int) -> None:
        if drawn:
            L.write_rules(S[g], drawn[int(rng.integers(len(drawn)))])
        n = counts[int(rng.integers(len(counts)))]
        R[g] = engine.seed_rng(int(rng.integers(2**63)))
        if kind == SEARCH:
            A[g] = engine.seed_rng(int(searches.integers(2**63)))
        engine.new_game(S[g], R[g : g + 1], n, 0, 0)
        students[g] = False
        if student is not None:
            students[g, :n] = rng.random(n) < 0.5
            if not students[g, :n].any():
                students[g, int(rng.integers(n))] = True
        round_turns[g] = 0
        pending[g] = [[] for _ in range(L.MAX_SEATS)]

    for g in range(games):
        deal(g)
    live = np.ones(games, dtype=bool)
    obs = np.zeros((games, size), dtype=np.float32)
    masks = np.zeros((games, actions_n), dtype=np.int8)
    labels = np.zeros(games, dtype=np.int64)
    seats = np.zeros(games, dtype=np.int64)
    codes = np.zeros(games, dtype=np.int64)
    buf = np.zeros(bots.SCRATCH, dtype=np.int64)
    obuf = core_observe.scratch()
    out = np.zeros(bots.ACTION_ROOM, dtype=np.int64)
    room = chunk + games * 64
    data = {"obs": np.zeros((room, size), np.float32), "masks": np.zeros((room, actions_n), bool),
            "actions": np.zeros(room, np.int64), "returns": np.zeros(room, np.float32)}
    done = np.zeros(room, dtype=bool)  # the decision's return is final
    filled = 0
    while True:
        _decide(S, R, A, live, kind, params, sparams, obs, masks, labels, seats, buf, obuf, out)
        played = labels.copy()
        if student is not None:
            mine = np.flatnonzero(students[np.arange(games), seats])
            if len(mine):
                played[mine] = student.act_batch(obs[mine], masks[mine])
        at = np.arange(filled, filled + games)
        data["obs"][at] = obs
        data["masks"][at] = masks
        data["actions"][at] = labels
        data["returns"][at] = 0.0
        done[at] = False
        for g in range(games):
            pending[g][seats[g]].append(filled + g)
        filled += games
        _apply(S, R, live, played, codes, buf)
        round_turns += 1
        for g in np.flatnonzero((codes != engine.TURN_ON) | (round_turns >= config.max_turns)):
            row = S[g]
            if codes[g] != engine.TURN_ON and row[L.RES_CALLER] >= 0:
                if row[L.R_GAME_END] == L.ONE_ROUND:  # a game of one round: its rank, as the envs pay it
                    rewards = ranks_rewards(final_ranks(row))
                else:
                    points, dealt = round_points(row)
                    rewards = points_rewards(points, dealt, config.round_reward)
                for q, indices in enumerate(pending[g][: len(rewards)]):
                    for k, i in enumerate(reversed(indices)):
                        data["returns"][i] = rewards[q] * gamma**k
            for indices in pending[g]:
                done[indices] = True
            pending[g] = [[] for _ in range(L.MAX_SEATS)]
            if codes[g] == engine.GAME_OVER or round_turns[g] >= config.max_turns:
                deal(g)
            else:
                round_turns[g] = 0
        if filled + games > room:
            final = np.flatnonzero(done[:filled])
            yield {k: v[final].copy() for k, v in data.items()}
            open_ = np.flatnonzero(~done[:filled])  # decisions whose round goes on: moved to the front
            moved = {int(i): j for j, i in enumerate(open_)}
            for k, v in data.items():
                v[: len(open_)] = v[open_]
            done[: len(open_)] = False
            for g in range(games):
                for q in range(L.MAX_SEATS):
                    pending[g][q] = [moved[i] for i in pending[g][q]]
            filled = len(open_)
