"""Batched loops of the compiled core: every game of a batch advanced in one call. numba kernels.

What ``yaniv_env.vector`` runs on. A batch of E games, each one learner's episode:

=====================  ======================  ===================================================
array                  shape, dtype            holds
=====================  ======================  ===================================================
``S``                  (E, layout.WIDTH) i64   the game rows (``yaniv_env.core.layout``)
``R``                  (E, 1) u64              each game's generator (``engine.seed_rng``): ``R[g]``
                                               is the ``r`` of the engine's kernels
``G``                  (E, G_WIDTH) i64        each game's episode: the fields ``G_*`` below
``W``                  (E,) f64                the learner's reward since its last action
``P``                  (K, bots.PARAMS_SIZE)   heuristic parameter sets (``bots.heuristic_params``);
                       f64                     a heuristic seat names its row
``C``                  (C_WIDTH,) i64          the episode settings: the fields ``C_*`` below
=====================  ======================  ===================================================

Who plays a seat is a controller code (``G_SEAT_KIND + seat``) and a parameter
(``G_SEAT_PARAM + seat``): ``LEARNER``; ``RANDOM``, ``GREEDY`` and ``HEURISTIC`` (parameter: the
row of ``P``), the compiled bots of ``yaniv_env.core.bots``, which move inside the kernels; and
``SNAPSHOT`` (parameter: an index the caller keeps), a policy evaluated outside, in Python, for
all its seats of the batch at once. ``G_OTHER_KIND + k`` and ``G_OTHER_PARAM + k`` name the
controller of the k-th seat after the learner's, so a new deal may seat the learner anywhere.

Kernels:

* ``begin(S, R, G, games, counts)``: each game of ``games`` draws its table size from ``counts``
  (from its own generator) into ``G_PLAYERS``; the caller may then set ``G_OTHER_*``.
* ``deal(S, R, G, W, P, C, games)``: a new episode in each game: the learner's seat (uniform,
  from the game's generator), the seats' controllers from ``G_OTHER_*``, a fresh game dealt
  (seat 0 starts, as ``yaniv_env.aec`` does), then ``advance``.
* ``play(S, R, G, W, P, C, games, actions)``: ``actions[k]`` for the seat to move in game
  ``games[k]`` (the learner's, or a snapshot's), then ``advance``.
* ``advance`` (inside both): the compiled bots move until each game is at the learner's decision
  (``G_STATUS`` = ``AT_LEARNER``), at a snapshot's (``AT_SNAPSHOT``), or its episode has ended
  (``ENDED``, with ``G_DONE`` = ``TERMINATED`` or ``TRUNCATED`` and the final reward added to
  ``W``); ``MOVING`` is a fresh deal's status until then. An episode that ends before the
  learner's first decision is dealt again, at most ``MAX_REDEALS`` times in a row (then
  ``ERROR``): Gymnasium has no episode without an action.
* ``observe_games(S, games, seats, out, buf)`` and ``mask_games(S, games, out, buf)``: the
  observation (``yaniv_env.core.observe``) and the action mask of the given seats.

``deal``, ``play``, ``observe_games`` and ``mask_games`` release the GIL (``nogil``): a caller may
run them on parts of a batch in threads of its own (``yaniv_env.vector``'s ``threads``), each part
with its own scratch. A game's row, generator and episode are its own, so the parts give the
whole call's result, game for game.

Episode end and rewards (``yaniv_env.aec``'s): the episode is one round when the row's
``SINGLE_ROUND`` is 1, which each deal sets: always when ``C_ROUND_SHARE`` is ``SHARE_ONE``, never
when it is 0, and in between with the chance ``C_ROUND_SHARE / SHARE_ONE``, drawn from the game's
generator. A round pays ``round_reward`` (``-points / 50``, or relative to the others' mean with
``C_RELATIVE``; a round cut by the rules' turn cap truncates, reward 0), a whole game
``rank_reward`` (by ``yaniv.ranking.final_ranks``, here read off the row's ``OUT_ROUND``,
``WINNERS``, ``SCORE`` and ``RES_POINTS``). A game of one round (``game_end="one_round"``) pays
``rank_reward`` too, as a round episode or not: it is won by winning the round, and a capped one
ends in a tie. ``C_MAX_TURNS`` (-1: none) truncates an episode after
that many moves of any seat, reward 0.

``play`` and ``deal`` return -1, or the index k of the first game a move of which the engine
refused (its ``G_STATUS`` is then ``ERROR``): the caller checks actions against the mask first,
so this is a bug, never bad input.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numba import njit

from yaniv_env.core import bots
from yaniv_env.core.engine import GAME_OVER, ILLEGAL, action_mask, apply_action, below, new_game, one_round
from yaniv_env.core.layout import (
    CURRENT, MAX_DISCARDS, MAX_SEATS, ONE_ROUND, OUT_ROUND, PLAYERS, R_GAME_END, RES_CALLER, RES_DEALT, RES_POINTS,
    ROUNDS, SCORE, SINGLE_ROUND, WINNERS,
)
from yaniv_env.core.observe import SCRATCH as OBSERVE_SCRATCH
from yaniv_env.core.observe import observe

# Seat controllers.
EMPTY, LEARNER, RANDOM, GREEDY, HEURISTIC, SNAPSHOT = -1, 0, 1, 2, 3, 4
# G_STATUS
AT_LEARNER, AT_SNAPSHOT, ENDED, ERROR, MOVING = 0, 1, 2, 3, 4
# G_DONE
RUNNING, TERMINATED, TRUNCATED = 0, 1, 2
MAX_REDEALS: Final = 1000
ROUND_REWARD_SCALE: Final = 50.0  # yaniv_env.aec.ROUND_REWARD_SCALE (a test keeps them equal)

G_PLAYERS: Final = 0  # the table size of the episode
G_LEARNER: Final = 1  # the learner's seat
G_STATUS: Final = 2
G_DONE: Final = 3
G_TURNS: Final = 4  # moves of any seat this episode (C_MAX_TURNS)
G_STARTED: Final = 5  # 1 once the learner has been at a decision this episode
G_REDEALS: Final = 6  # deals in a row that ended before the learner's first decision
G_SEAT_KIND: Final = 7
G_SEAT_PARAM: Final = G_SEAT_KIND + MAX_SEATS
G_OTHER_KIND: Final = G_SEAT_PARAM + MAX_SEATS
G_OTHER_PARAM: Final = G_OTHER_KIND + MAX_SEATS - 1
G_WIDTH: Final = G_OTHER_PARAM + MAX_SEATS - 1

C_ROUND_SHARE: Final = 0  # the chance in SHARE_ONE that an episode is one round, else the whole game
C_RELATIVE: Final = 1  # 1: round_reward "relative"; 0: "points"
C_MAX_TURNS: Final = 2  # the env's cap on an episode's moves; -1 none
C_WIDTH: Final = 3

SHARE_ONE: Final = 1 << 30  # C_ROUND_SHARE's unit: every episode a round

SCRATCH: Final = max(MAX_DISCARDS, bots.SCRATCH, OBSERVE_SCRATCH)
ACTION_ROOM: Final = bots.ACTION_ROOM


def new_batch(count: int) -> np.ndarray:
    """``G`` for ``count`` games: every seat empty, every game waiting for its first deal."""
    G = np.zeros((count, G_WIDTH), dtype=np.int64)
    G[:, G_SEAT_KIND : G_SEAT_KIND + MAX_SEATS] = EMPTY
    G[:, G_OTHER_KIND : G_OTHER_KIND + MAX_SEATS - 1] = EMPTY
    G[:, G_STATUS] = ENDED
    return G


# ------------------------------------------------------------------------------------------------
# Rewards
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def round_reward(s, seat, relative):
    """``yaniv_env.aec.round_rewards`` of the row's last finished round, for ``seat``."""
    points = s[RES_POINTS + seat]
    if not relative:
        return -points / ROUND_REWARD_SCALE
    dealt = s[RES_DEALT]
    if not dealt >> seat & 1:
        return 0.0
    total = 0
    count = 0
    for q in range(s[PLAYERS]):
        if dealt >> q & 1:
            total += s[RES_POINTS + q]
            count += 1
    return ((total - points) / (count - 1) - points) / ROUND_REWARD_SCALE


@njit(cache=True)
def _key_less(s, a, b):
    """Whether seat ``a`` finished strictly ahead of seat ``b`` (``yaniv.ranking.standing_keys``)."""
    wa = 0 if s[WINNERS] >> a & 1 else 1
    wb = 0 if s[WINNERS] >> b & 1 else 1
    if wa != wb:
        return wa < wb
    if one_round(s):
        if s[RES_CALLER] < 0:  # a round cut by the turn cap: every seat ties
            return False
        return s[RES_POINTS + a] < s[RES_POINTS + b]
    out_a = s[OUT_ROUND + a] if s[OUT_ROUND + a] >= 0 else s[ROUNDS]
    out_b = s[OUT_ROUND + b] if s[OUT_ROUND + b] >= 0 else s[ROUNDS]
    if out_a != out_b:
        return out_a > out_b  # the later out ranks higher
    return s[SCORE + a] < s[SCORE + b]


@njit(cache=True)
def rank_reward(s, seat):
    """``yaniv_env.aec.rank_rewards`` of the finished game in row ``s``, for ``seat``: rank r of n
    gets 1 - 2 r / (n - 1), tied seats the mean of their ranks' values."""
    n = s[PLAYERS]
    rank = 0
    tied = 0
    for q in range(n):
        if _key_less(s, q, seat):
            rank += 1
        elif not _key_less(s, seat, q):
            tied += 1  # seat itself included
    return 1.0 - 2.0 * (rank + (tied - 1) / 2.0) / (n - 1)


# ------------------------------------------------------------------------------------------------
# Episodes
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def begin(S, R, G, games, counts):
    """Each game of ``games`` draws its next episode's table size from ``counts``."""
    for k in range(games.shape[0]):
        g = games[k]
        G[g, G_PLAYERS] = counts[below(R[g], counts.shape[0])] if counts.shape[0] > 1 else counts[0]


@njit(cache=True)
def _seat_and_deal(S, R, G, W, C, g):
    n = G[g, G_PLAYERS]
    learner = below(R[g], n)
    G[g, G_LEARNER] = learner
    for q in range(MAX_SEATS):
        G[g, G_SEAT_KIND + q] = EMPTY
        G[g, G_SEAT_PARAM + q] = 0
    G[g, G_SEAT_KIND + learner] = LEARNER
    for k in range(n - 1):
        q = (learner + 1 + k) % n
        G[g, G_SEAT_KIND + q] = G[g, G_OTHER_KIND + k]
        G[g, G_SEAT_PARAM + q] = G[g, G_OTHER_PARAM + k]
    share = C[C_ROUND_SHARE]
    single = 1 if share >= SHARE_ONE else 0
    if 0 < share < SHARE_ONE:  # drawn only when both kinds can come: the streams of one kind stay as they were
        single = 1 if below(R[g], SHARE_ONE) < share else 0
    new_game(S[g], R[g], n, single, 0)
    G[g, G_TURNS] = 0
    G[g, G_STARTED] = 0
    G[g, G_DONE] = RUNNING
    G[g, G_STATUS] = MOVING
    W[g] = 0.0


@njit(cache=True, nogil=True)
def deal(S, R, G, W, P, C, games):
    """A new episode in each game of ``games`` (see the module docstring); -1, or a failed game's k."""
    buf = np.empty(SCRATCH, dtype=np.int64)
    out = np.empty(ACTION_ROOM, dtype=np.int64)
    failed = -1
    for k in range(games.shape[0]):
        g = games[k]
        G[g, G_REDEALS] = 0
        _seat_and_deal(S, R, G, W, C, g)
        if not _advance(S, R, G, W, P, C, g, buf, out) and failed < 0:
            failed = k
    return failed


@njit(cache=True, nogil=True)
def play(S, R, G, W, P, C, games, actions):
    """``actions[k]`` for the seat to move in game ``games[k]``, then ``advance``; -1, or a failed k."""
    buf = np.empty(SCRATCH, dtype=np.int64)
    out = np.empty(ACTION_ROOM, dtype=np.int64)
    failed = -1
    for k in range(games.shape[0]):
        g = games[k]
        ok = _move(S, R, G, W, C, g, actions[k], buf)
        if ok:
            ok = _advance(S, R, G, W, P, C, g, buf, out)
        if not ok and failed < 0:
            failed = k
    return failed


@njit(cache=True)
def _move(S, R, G, W, C, g, action, buf):
    """Play ``action`` in game g and settle what it ended; False if the engine refused it."""
    s = S[g]
    code = apply_action(s, R[g], action, buf)
    if code == ILLEGAL:
        G[g, G_STATUS] = ERROR
        return False
    G[g, G_TURNS] += 1
    done = RUNNING
    value = 0.0
    if code == GAME_OVER:
        seat = G[g, G_LEARNER]
        if s[SINGLE_ROUND] == 1 and s[R_GAME_END] != ONE_ROUND:  # a round cut from a game
            if s[RES_CALLER] < 0:
                done = TRUNCATED
            else:
                done = TERMINATED
                value = round_reward(s, seat, C[C_RELATIVE] == 1)
        else:
            done = TERMINATED
            value = rank_reward(s, seat)
    elif C[C_MAX_TURNS] >= 0 and G[g, G_TURNS] >= C[C_MAX_TURNS]:
        done = TRUNCATED
    if done != RUNNING:
        G[g, G_DONE] = done
        G[g, G_STATUS] = ENDED
        W[g] += value
    return True


@njit(cache=True)
def _advance(S, R, G, W, P, C, g, buf, out):
    """The compiled bots move in game g until a learner's or a snapshot's decision, or the episode's
    end; an episode over before the learner's first decision is dealt again. False on an error."""
    while True:
        if G[g, G_STATUS] == ENDED:
            if G[g, G_STARTED] == 1:
                return True
            G[g, G_REDEALS] += 1
            if G[g, G_REDEALS] > MAX_REDEALS:
                G[g, G_STATUS] = ERROR
                return False
            _seat_and_deal(S, R, G, W, C, g)
        s = S[g]
        seat = s[CURRENT]
        kind = G[g, G_SEAT_KIND + seat]
        if kind == LEARNER:
            G[g, G_STATUS] = AT_LEARNER
            G[g, G_STARTED] = 1
            return True
        if kind == SNAPSHOT:
            G[g, G_STATUS] = AT_SNAPSHOT
            return True
        if kind == RANDOM:
            action = bots.random_action(s, R[g], out, buf)
        elif kind == GREEDY:
            action = bots.greedy_action(s, buf)
        elif kind == HEURISTIC:
            action = bots.heuristic_action(s, P[G[g, G_SEAT_PARAM + seat]], buf)
        else:
            G[g, G_STATUS] = ERROR
            return False
        if action < 0 or not _move(S, R, G, W, C, g, action, buf):
            G[g, G_STATUS] = ERROR
            return False


# ------------------------------------------------------------------------------------------------
# What the seats see
# ------------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def observe_games(S, games, seats, out, buf):
    """``out[k]``: the observation of seat ``seats[k]`` in game ``games[k]``."""
    for k in range(games.shape[0]):
        observe(S[games[k]], seats[k], out[k], buf)


@njit(cache=True, nogil=True)
def mask_games(S, games, out, buf):
    """``out[k]``: the action mask of the player to move in game ``games[k]`` (zeros once it is over)."""
    for k in range(games.shape[0]):
        action_mask(S[games[k]], out[k], buf)
