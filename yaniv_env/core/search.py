"""The search bot, compiled: determinized rollouts that check the heuristic's best moves against each other.

A port of ``agents.baselines.search`` (the reference: its module docstring gives the method and
the why) to numba kernels on the core's rows (``yaniv_env.core.layout``). The algorithm is the
same, step for step; only the random numbers differ (the core's SplitMix64 instead of numpy's
PCG64), so the two bots choose alike in distribution, not move for move.

Use::

    params = search_params(budget=128)            # the search's settings, a float64 array
    heuristic = bots.heuristic_params(call_risk=CALL_RISK)   # the ranking heuristic's
    action = search_action(s, r, params, heuristic)

``parse_settings(["rollout_turns=6"])`` gives ``search_params``' keywords from a command line's
``KEY=VALUE`` strings (``SETTINGS``: the keys and their types), checked as ``search_params`` checks them.

``search_action(s, r, params, heuristic)`` is the action id the player to move in row ``s`` plays;
``r`` is the bot's own generator (a one-element ``uint64`` array, ``engine.seed_rng``), so the bot
is deterministic given its seed and the positions it is shown. It reads from ``s`` only what that
player may know (see the samples below); ``s`` is not changed.

For each decision:

1. **Candidates** (``candidates``): the heuristic's ``top_k`` best discard-and-draw moves
   (``bots.heuristic_rank``), plus Yaniv when legal (first if ``bots.heuristic_should_call``,
   else second), or both answers to a pending slamdown (``bots.heuristic_slamdown``'s first). At
   most ``max(2, budget // 4)`` are kept; a lone candidate is played at once.
2. **Samples** (``sample_view``): ``Game.from_view`` then ``informed_sample``. The seat's hand,
   the pile, the cards seen taken from it, the hand sizes and the deck size are kept; the cards
   the seat has not seen are dealt anew within their epochs (a hidden card in an opponent's hand
   came from the deck of its ``EPOCH``: how many each opponent holds of each epoch is public, and
   is all this reads of the true hidden cards). The pending slamdown card of another seat is
   drawn among the unseen cards of its epoch that extend the top group. Then, in the play phase
   with cards in the deck, ``sweeps`` Metropolis sweeps per opponent that has discarded this
   round (in seat order from ``FIRST_DISCARDER``) swap its hidden cards of the current epoch with
   deck cards, towards hands its last discard (``LAST_*``) argues for (``_likelihood``:
   ``KEPT_VALUE_WEIGHT``, ``rho``, ``PILE_ALONE``).
3. **Rollouts** (``_playout``): the candidate, then every seat plays ``rollout_move`` (the
   reference's ``RolloutPolicy``) until the round ends or ``rollout_turns`` turns pass, each seat
   drawing from its own stream of the sampled deck (``_streams``, ``_arrange``).
4. **Score**: the points the others took (their mean) minus its own on the cumulative scores,
   ``ELIMINATION`` per seat knocked out; an unfinished rollout scores the hands as they lie. In a
   game of one round, the seat's placing (``placing``: ``batch.rank_reward`` of the finished
   sample, or by the totals as they lie), as the reference.
5. **Choice** (``choose``): stage 1 plays every candidate on the same ``budget // (2 k)`` samples;
   if the best alternative's mean beats the heuristic's choice, stage 2 spends the rest of the
   budget on the two, paired, and the alternative is played only if its mean advantage exceeds
   ``confidence`` standard errors.

Kernels (``@njit(cache=True)``; ``s`` a row, ``r`` a generator):

=========================================================  ==============================================
``search_action(s, r, params, heuristic) -> int``          the move (above); -1 when the game is over
``candidates(s, params, heuristic, out) -> int``           step 1 into ``out`` (``MAX_CANDIDATES``)
``choose(s, r, params, cands, k) -> int``                  step 5: the index of the candidate to play
``choose_values(s, r, params, cands, k, means) -> int``    ``choose``, with each candidate's mean score
                                                           minus the first's into ``means``
``choose_games(S, A, games, seats, cands, counts, params,  ``choose`` in many rows, on candidates given
out)``                                                     from outside (``agents.policies.planner``);
                                                           releases the GIL: threads may each take a share of ``games``
``choose_games_values(..., out, means)``                   ``choose_games`` with ``choose_values``' means
                                                           (the expert stage's advantage targets)
``sample_view(s, seat, r, rho, sweeps) -> row``            one sample of ``seat``'s view (step 2), for
                                                           tests and one-off use; the search prepares the
                                                           view once (``prepare_view``) and draws many
                                                           (``draw_sample``, ``informed``)
``placing(g, seat, over) -> float``                        step 4's score in a game of one round
``rollout_move(s, params, values, discards) -> int``       the rollout policy's move (``values``:
                                                           ``deck_values(s, params)``)
``relief(s, mask, g1, gm)``, ``combines(card, mask)``      the heuristic's ``relief`` and the reference's
                                                           ``_combines`` on a hand as a card bit mask
=========================================================  ==============================================

``search_params(...)`` builds ``params`` (the reference's settings and defaults, offsets ``P_*``);
``heuristic`` is ``bots.heuristic_params(call_risk=CALL_RISK)`` for the reference's ranking.

Where the port departs from the reference, and why:

* The rollout policy values a hand from tables instead of listing its discards (``hand_parts``:
  the best single card, the best set by rank counts, the best run per suit from ``RUN_BEST``), and
  a deck draw from ``deck_values``; the floats are the reference's (the tests compare every move).
* Another seat's pending slamdown card is drawn among the unseen cards of the epoch it was drawn
  from (``EPOCH`` of that card), where ``Game.from_view`` takes the current epoch: the two differ
  only when that draw emptied the deck, where ``from_view``'s count of hidden cards no longer adds up.
* ``informed_sample``'s ``no_call`` (off in the reference) is left out.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numba import njit

from yaniv.cards import NUM_CARDS
from yaniv.odds import KEPT_VALUE_WEIGHT, MAX_TOTAL, at_most_table, value_counts
from yaniv_env.core.batch import ONE_ROUND, rank_reward
from yaniv_env.core.bots import ACTION_ROOM, SCRATCH, heuristic_rank, heuristic_should_call, heuristic_slamdown
from yaniv_env.core.engine import (
    NUM_STANDARD, action_ids, apply_action, below, insert_card, legal_discards, may_call, next_u64, slamdown_extends,
    uniform,
)
from yaniv_env.core.layout import (
    ALIVE, CARD_POINTS, CARD_RANK, CARD_SUIT, CURRENT, DEAD, DECK, DECK_LEN, DRAWABLE, DRAWABLE_LEN, EPOCH,
    FIRST_DISCARDER, GROUP_ROOM, HAND, HAND_LEN, HAND_ROOM, KNOWN, LAST_CARDS, LAST_DREW, LAST_HIGH, LAST_LEN,
    MAX_DISCARDS, MAX_SEATS, PENDING, PHASE, PHASE_OVER, PHASE_PLAY, PHASE_SLAMDOWN, PLAYERS, POOLS, R_ASSAF_EQUAL,
    R_GAME_END, R_HAND_SIZE, R_JOKERS, R_JOKERS_IN_SETS, R_MAX_SET, R_MIN_SET_JOKERS, RES_ELIMINATED, SCORE,
    SINGLE_ROUND, TOP, TOP_LEN, TOTAL, TURN, WIDTH,
)

DEFAULT_BUDGET: Final = 128
CALL_RISK: Final = 0.1  # the call_risk of the heuristic that ranks the candidates (the reference's)
ELIMINATION: Final = 60.0  # rollout score of knocking an opponent out (and minus it for being knocked out)
PILE_ALONE: Final = 0.3  # weight of a hand in which a pile card of 4+ points combines with nothing
MAX_CANDIDATES: Final = 16  # room for top_k moves and Yaniv

# The settings array (``search_params``): offsets by name.
P_BUDGET, P_TOP_K, P_CONFIDENCE, P_RHO, P_SWEEPS, P_ROLLOUT_TURNS = 0, 1, 2, 3, 4, 5
P_CALL_RISK, P_GAMMA_SINGLE, P_GAMMA, P_DECK_GAIN = 6, 7, 8, 9
NUM_PARAMS: Final = 10

# Tables the kernels read (numba freezes module-level arrays into the compiled code).
KEPT_WEIGHT = np.array(KEPT_VALUE_WEIGHT, dtype=np.float64)
# AT_MOST[jokers, k, t]: yaniv.odds.at_most_table(jokers, tilt=True)[k][t]
AT_MOST = np.array([at_most_table(j, True) for j in range(3)], dtype=np.float64)
# DECK_SHARE[jokers, v]: the share of a full deck's cards worth v points
DECK_SHARE = np.array([np.array(value_counts(j), dtype=np.float64) / sum(value_counts(j)) for j in range(3)])


def search_params(
    budget: int = DEFAULT_BUDGET,
    *,
    top_k: int = 4,
    confidence: float = 1.5,
    rho: float = 0.35,
    sweeps: int = 3,
    rollout_turns: int = 200,
    call_risk: float = 0.2,
    gammas: tuple[float, float] = (0.8, 0.8),
    deck_gain: float = 0.5,
) -> np.ndarray:
    """The search's settings as the float64 array ``search_action`` reads (defaults: the reference's).

    ``budget``: the most rollouts per decision. ``top_k``: the heuristic's moves searched.
    ``confidence``: the standard errors an alternative must win by. ``rho``: the weight of a hidden
    card an opponent would have thrown (1.0: uniform samples). ``sweeps``: Metropolis sweeps per
    opponent. ``rollout_turns``: a rollout still running after this many turns is scored on the
    hands as they lie. ``call_risk``, ``gammas`` (single, set or run), ``deck_gain``: the rollout
    policy's (``RolloutPolicy``). ValueError naming the setting for a count that is not an integer
    in range (budget, rollout_turns >= 1; top_k 1 to ``MAX_CANDIDATES - 1``; sweeps >= 0) or a
    ``rho`` outside (0, 1].
    """
    for name, value, low, high in (("budget", budget, 1, None), ("top_k", top_k, 1, MAX_CANDIDATES - 1),
                                   ("sweeps", sweeps, 0, None), ("rollout_turns", rollout_turns, 1, None)):
        if type(value) is not int or value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f">= {low}"
            raise ValueError(f"{name} must be an integer {bound}, got {value!r}")
    if not 0.0 < rho <= 1.0:
        raise ValueError(f"rho must be in (0, 1], got {rho!r}")
    out = np.zeros(NUM_PARAMS, dtype=np.float64)
    out[P_BUDGET] = budget
    out[P_TOP_K] = top_k
    out[P_CONFIDENCE] = confidence
    out[P_RHO] = rho
    out[P_SWEEPS] = sweeps
    out[P_ROLLOUT_TURNS] = rollout_turns
    out[P_CALL_RISK] = call_risk
    out[P_GAMMA_SINGLE] = gammas[0]
    out[P_GAMMA] = gammas[1]
    out[P_DECK_GAIN] = deck_gain
    return out


SETTINGS = {"top_k": int, "confidence": float, "rho": float, "sweeps": int, "rollout_turns": int,
            "call_risk": float, "deck_gain": float}  # search_params' keywords a KEY=VALUE may set


def parse_settings(items: list[str] | tuple[str, ...]) -> dict:
    """``search_params`` keywords from ``KEY=VALUE`` strings (``["rollout_turns=6", "rho=0.2"]``), checked
    by ``search_params`` itself: ValueError naming the item that is not ``KEY=VALUE``, the key that is
    not one of ``SETTINGS``, the value that does not parse or is out of range."""
    settings = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in SETTINGS:
            raise ValueError(f"a search setting is KEY=VALUE with KEY one of {', '.join(SETTINGS)}, got {item!r}")
        try:
            settings[key] = SETTINGS[key](value)
        except ValueError:
            kind = "an integer" if SETTINGS[key] is int else "a number"
            raise ValueError(f"search setting {key} must be {kind}, got {value!r}") from None
        if not np.isfinite(settings[key]):
            raise ValueError(f"search setting {key} must be finite, got {value!r}")
    search_params(**settings)
    return settings


# ------------------------------------------------------------------------------------------------
# Hand values: relief and combinations (agents.baselines.heuristic.relief, search._combines)
# ------------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _rank_points(rank):
    return rank + 1 if rank < 10 else 10


@njit(cache=True, inline="always")
def _lowest_rank(mask):
    rank = 0
    while not mask >> rank & 1:
        rank += 1
    return rank


@njit(cache=True, inline="always")
def _highest_rank(mask):
    rank = 12
    while not mask >> rank & 1:
        rank -= 1
    return rank


@njit(cache=True)
def _run_table():
    """``RUN_BEST[j, m]``: the most points of a run of one suit whose naturals have the ranks of the
    bit mask ``m``, with at most ``j`` jokers (0: none), by the rules of ``engine.legal_discards``
    (no setting changes them). The best run between two naturals takes every natural of the suit
    between them: fewer gaps never cost room, the jokers saved going inside instead of at an end.
    (One natural and two jokers is a set instead where jokers may make sets of three: the same
    points, which ``hand_parts`` counts as a set.)"""
    table = np.zeros((3, 1 << 13), dtype=np.int64)
    for nj in range(3):
        for mask in range(1, 1 << 13):
            best = 0
            for lo in range(13):
                if not mask >> lo & 1:
                    continue
                count = 0
                pts = 0
                for hi in range(lo, 13):
                    if not mask >> hi & 1:
                        continue
                    count += 1
                    pts += _rank_points(hi)
                    gaps = hi - lo + 1 - count
                    if gaps > nj:
                        break
                    for j in range(max(gaps, 3 - count), nj + 1):
                        extra = j - gaps
                        up = extra if extra < 12 - hi else 12 - hi
                        if extra - up <= lo:
                            if pts > best:
                                best = pts
                            break
            table[nj, mask] = best
    return table


RUN_BEST = _run_table().astype(np.int8)  # at most 85 points: int8 keeps it in cache
MAX_COMBINATION: Final = int(RUN_BEST.max())  # the most points of a set or run: a whole suit (a set: 40)


SUIT_BITS: Final = 0x1FFF  # a card's bit is 1 << id, and id = 13 * suit + rank: 13 bits per suit
JOKER_BITS: Final = 0b11 << NUM_STANDARD


@njit(cache=True, inline="always")
def card_mask(s, seat):
    """The cards of ``seat``'s hand as a bit mask (bit ``c`` for card ``c``)."""
    mask = 0
    at = HAND + seat * HAND_ROOM
    for i in range(s[HAND_LEN + seat]):
        mask |= 1 << s[at + i]
    return mask


@njit(cache=True)
def hand_parts(s, mask):
    """(the most points of one card, the most points of one legal set or run) of the cards of
    ``mask``, under the rules of ``s``: the maxima over ``engine.legal_discards``, without listing
    them. A set's best is every natural of a rank held twice or more (at most four), or a lone
    natural with jokers where the rules let jokers make a set of that size; a run's is read off
    ``RUN_BEST`` per suit."""
    m0 = mask & SUIT_BITS
    m1 = (mask >> 13) & SUIT_BITS
    m2 = (mask >> 26) & SUIT_BITS
    m3 = (mask >> 39) & SUIT_BITS
    nj = ((mask >> NUM_STANDARD) & 1) + ((mask >> (NUM_STANDARD + 1)) & 1)
    naturals = m0 | m1 | m2 | m3
    high = _rank_points(_highest_rank(naturals)) if naturals else 0
    best = 0
    pairs = (m0 & (m1 | m2 | m3)) | (m1 & (m2 | m3)) | (m2 & m3)
    while pairs:
        rank = _lowest_rank(pairs)
        pairs &= pairs - 1
        pts = _rank_points(rank) * ((m0 >> rank & 1) + (m1 >> rank & 1) + (m2 >> rank & 1) + (m3 >> rank & 1))
        if pts > best:
            best = pts
    if nj > 0 and naturals and s[R_JOKERS_IN_SETS] == 1 and high > best:
        for j in range(1, nj + 1):
            if s[R_MIN_SET_JOKERS] <= 1 + j <= s[R_MAX_SET]:
                best = high
    table = RUN_BEST[nj]
    runs = max(max(table[m0], table[m1]), max(table[m2], table[m3]))
    return high, (runs if runs > best else best)


@njit(cache=True)
def relief(s, mask, g1, gm):
    """``agents.baselines.heuristic.relief`` of the cards of ``mask``: next turn's best legal discard,
    weighted by ``g1`` for a single card and ``gm`` for a set or run (the same float)."""
    high, multi = hand_parts(s, mask)
    single = g1 * high
    combo = gm * multi
    return combo if combo > single else single


@njit(cache=True)
def combines(card, mask):
    """``search._combines``: whether ``card`` may make a set or a run with some of the cards of ``mask``."""
    if card >= NUM_STANDARD:
        return mask != 0
    if mask & JOKER_BITS:
        return True
    rank = CARD_RANK[card]
    for su in range(4):
        if mask >> (13 * su + rank) & 1:
            return True
    near = ((0b11111 << rank) >> 2) & SUIT_BITS  # the ranks within two of it
    return ((mask >> (13 * CARD_SUIT[card])) & near) != 0


# ------------------------------------------------------------------------------------------------
# The rollout policy (agents.baselines.search.RolloutPolicy)
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def _safe(s, p, total, call_risk):
    """``RolloutPolicy._safe``: the table-based Assaf risk of calling at ``total`` is acceptable."""
    if total == 0:
        return True
    table = AT_MOST[s[R_JOKERS]]
    strict = 0 if s[R_ASSAF_EQUAL] == 1 else 1
    safe = 1.0
    for q in range(s[PLAYERS]):
        if q == p or not s[ALIVE + q]:
            continue
        limit = total - strict
        hidden = s[HAND_LEN + q]
        for i in range(s[HAND_LEN + q]):
            c = s[HAND + q * HAND_ROOM + i]
            if s[KNOWN + c] == q:
                limit -= CARD_POINTS[c]
                hidden -= 1
        if limit < 0:
            continue
        safe *= 1.0 - table[hidden, limit if limit < MAX_TOTAL else MAX_TOTAL]
    own_turns = s[TURN] // s[PLAYERS]
    return 1.0 - safe <= call_risk + 0.05 * max(0, own_turns - 8)


@njit(cache=True)
def deck_values(s, params):
    """``RolloutPolicy._deck_value`` for every relief the policy meets: ``out[0, k]`` for a relief of
    ``g1 * k`` (a single card of k points), ``out[1, k]`` for ``gm * k`` (a set or run). A deck
    card's mean points less the mean of next turn's relief with it, less ``deck_gain``."""
    share = DECK_SHARE[s[R_JOKERS]]
    g1 = params[P_GAMMA_SINGLE]
    out = np.empty((2, MAX_COMBINATION + 1), dtype=np.float64)
    for kind in range(2):
        gamma = g1 if kind == 0 else params[P_GAMMA]
        for k in range(MAX_COMBINATION + 1):
            nxt = gamma * k
            value = -params[P_DECK_GAIN]
            for v in range(11):
                if share[v] > 0.0:
                    r = g1 * v
                    value += share[v] * (v - (nxt if nxt > r else r))
            out[kind, k] = value
    return out


@njit(cache=True)
def rollout_move(s, params, values, discards):
    """The rollout policy's action id for the player to move (``RolloutPolicy.move``).

    Slamdowns are always taken; Yaniv when the rules allow it and ``_safe``; otherwise the discard
    and draw with the lowest ``total - relief`` (a deck card at ``values``: ``deck_values``), pile
    draws left out in a round past 24 turns a seat. Ties: the first in ``Game.legal_moves`` order.
    ``discards``: scratch of ``MAX_DISCARDS``.
    """
    yaniv, slam, keep = action_ids(s[R_HAND_SIZE])
    if s[PHASE] == PHASE_SLAMDOWN:
        return slam
    p = s[CURRENT]
    total = s[TOTAL + p]
    if may_call(s, total) and _safe(s, p, total, params[P_CALL_RISK]):
        return yaniv
    g1 = params[P_GAMMA_SINGLE]
    gm = params[P_GAMMA]
    has_deck = s[DECK_LEN] > 0
    draws = s[DRAWABLE_LEN]
    if s[TURN] > 24 * s[PLAYERS] and has_deck:
        draws = 0
    at = HAND + p * HAND_ROOM
    n = s[HAND_LEN + p]
    hand = card_mask(s, p)
    count = legal_discards(s, p, discards)
    best = -1
    best_value = 1e9
    for i in range(count):
        slots = discards[i]
        kept = hand
        base = total
        for t in range(n):
            if slots >> t & 1:
                c = s[at + t]
                base -= CARD_POINTS[c]
                kept ^= 1 << c
        high, multi = hand_parts(s, kept)
        single = g1 * high
        combo = gm * multi
        nxt = combo if combo > single else single
        action = (slots - 1) * 6
        if has_deck:
            value = base + (values[1, multi] if combo > single else values[0, high])
            if value < best_value:
                best = action
                best_value = value
        for k in range(draws):
            c = s[DRAWABLE + k]
            pc = CARD_POINTS[c]
            if combines(c, kept):
                value = base + pc - relief(s, kept | (1 << c), g1, gm)
            else:
                r = g1 * pc
                value = base + pc - (nxt if nxt > r else r)
            if value < best_value:
                best = action + 1 + k
                best_value = value
    return best


# ------------------------------------------------------------------------------------------------
# Samples of the hidden cards (Game.from_view, search.informed_sample)
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def prepare_view(s, seat):
    """What every sample of ``seat``'s view shares, read once per decision.

    Returns ``(template, cards, places, starts, pending_epoch)``: ``template`` is ``s`` as a
    single-round game with every card ``seat`` has not seen taken out (the opponents hold their
    known cards only, the deck is empty, no pending card); ``cards`` the unseen cards grouped by
    epoch, epoch ``e`` at ``cards[starts[e]:starts[e + 1]]``; ``places[i]`` the seat (or -1: the
    deck) that the i-th card of a shuffled group goes to. In the slamdown phase of another seat its
    pending card is one more card of ``pending_epoch`` (else -1), drawn first (``draw_sample``).
    The true hidden cards are read for their epochs only: how many each opponent holds per epoch
    is public (``Game.from_view`` replays it from the events).
    """
    n = s[PLAYERS]
    pools = s[POOLS]
    size = NUM_STANDARD + s[R_JOKERS]
    template = s.copy()
    template[SINGLE_ROUND] = 1
    seen = np.zeros(NUM_CARDS, dtype=np.bool_)
    for i in range(s[HAND_LEN + seat]):
        seen[s[HAND + seat * HAND_ROOM + i]] = True
    for i in range(s[TOP_LEN]):
        seen[s[TOP + i]] = True
    for c in range(size):
        if s[DEAD + c] or s[KNOWN + c] >= 0:
            seen[c] = True
    held = np.zeros((MAX_SEATS, pools + 1), dtype=np.int64)  # hidden cards per seat and epoch
    for q in range(n):
        if q == seat or not s[ALIVE + q]:
            continue
        at = HAND + q * HAND_ROOM
        k = 0
        total = 0
        for i in range(s[HAND_LEN + q]):
            c = s[at + i]
            if s[KNOWN + c] == q:
                template[at + k] = c
                k += 1
                total += CARD_POINTS[c]
            else:
                held[q, s[EPOCH + c]] += 1
        template[HAND_LEN + q] = k
        template[TOTAL + q] = total
    pending_epoch = -1
    if s[PHASE] == PHASE_SLAMDOWN and s[CURRENT] != seat:
        pending_epoch = s[EPOCH + s[PENDING]]
        held[s[CURRENT], pending_epoch] -= 1
        template[PENDING] = -1
    template[DECK_LEN] = 0
    cards = np.empty(NUM_CARDS, dtype=np.int64)
    places = np.full(NUM_CARDS, -1, dtype=np.int64)
    starts = np.zeros(pools + 2, dtype=np.int64)
    at = 0
    for e in range(pools + 1):
        starts[e] = at
        k = at
        for q in range(n):
            for _ in range(held[q, e]):
                places[k] = q
                k += 1
        if e == pools:
            k += s[DECK_LEN]  # places of -1: the deck
        for c in range(size):
            if not seen[c] and s[EPOCH + c] == e:
                cards[at] = c
                at += 1
    starts[pools + 1] = at
    return template, cards, places, starts, pending_epoch


@njit(cache=True)
def draw_sample(out, r, template, cards, places, starts, pending_epoch, work):
    """One uniform deal of the unseen cards into ``out`` (``Game.from_view``): ``template`` with each
    epoch's unseen cards shuffled into that epoch's places. ``work``: scratch of ``NUM_CARDS``."""
    out[:] = template
    epochs = starts.shape[0] - 1
    for i in range(starts[epochs]):
        work[i] = cards[i]
    current = out[CURRENT]
    for e in range(epochs):
        a = starts[e]
        b = starts[e + 1]
        if e == pending_epoch:  # the other seat's pending card: an unseen card that extends the top group
            fits = 0
            for i in range(a, b):
                if slamdown_extends(out, work[i]):
                    fits += 1
            if fits > 0:
                pick = below(r, fits)
                for i in range(a, b):
                    if slamdown_extends(out, work[i]):
                        if pick == 0:
                            c = work[i]
                            work[i] = work[b - 1]
                            work[b - 1] = c
                            break
                        pick -= 1
            b -= 1
            c = work[b]
            insert_card(out, current, c)
            out[TOTAL + current] += CARD_POINTS[c]
            out[PENDING] = c
        for i in range(b - 1, a, -1):  # Fisher-Yates
            j = a + below(r, i - a + 1)
            c = work[i]
            work[i] = work[j]
            work[j] = c
        for i in range(a, b):
            c = work[i]
            q = places[i]
            if q < 0:
                out[DECK + out[DECK_LEN]] = c
                out[DECK_LEN] += 1
            else:
                insert_card(out, q, c)
                out[TOTAL + q] += CARD_POINTS[c]


@njit(cache=True)
def _card_weight(c, hand, m, cap, single, rho):
    """``search._card_weight``: the plausibility of hidden card ``c`` kept in ``hand[:m]``."""
    w = KEPT_WEIGHT[CARD_POINTS[c]]
    rank = CARD_RANK[c]
    if CARD_POINTS[c] > cap or rank == single:
        for i in range(m):
            k = hand[i]
            if k != c and CARD_RANK[k] == rank:
                return w
        w *= rho
    return w


@njit(cache=True)
def _likelihood(s, q, hand, m, cap, single, from_deck, rho, weights):
    """``search._likelihood`` (``no_call = 1``): how plausible ``hand[:m]`` is for seat ``q``, given
    its last discard (the highest card ``cap``, the rank ``single`` of a lone card, else -1) and
    whether it drew from the deck then (that card, unknown which, is exempt)."""
    h = 0
    pile = 1.0
    mask = 0
    for i in range(m):
        mask |= 1 << hand[i]
    for i in range(m):
        c = hand[i]
        if s[KNOWN + c] != q:
            weights[h] = _card_weight(c, hand, m, cap, single, rho)
            h += 1
    for i in range(m):
        c = hand[i]
        if s[KNOWN + c] == q and CARD_POINTS[c] >= 4 and not combines(c, mask ^ (1 << c)):
            pile *= PILE_ALONE
    if not from_deck:
        out = 1.0
        for j in range(h):
            out *= weights[j]
        return out * pile
    if h == 0:
        return 1.0
    acc = 0.0
    for i in range(h):
        out = 1.0
        for j in range(h):
            if j != i:
                out *= weights[j]
        acc += out * pile
    return acc / h


@njit(cache=True)
def _reweigh(out, q, r, rho, sweeps, hand, weights):
    """``informed_sample``'s Metropolis sweeps for seat ``q``: swap its hidden cards of the current
    epoch with deck cards, accepting by the ratio of ``_likelihood``."""
    at = HAND + q * HAND_ROOM
    m = out[HAND_LEN + q]
    slots = 0
    for i in range(m):
        c = out[at + i]
        hand[i] = c
        if out[KNOWN + c] != q and out[EPOCH + c] == out[POOLS]:
            slots |= 1 << i
    if slots == 0:
        return
    cap = out[LAST_HIGH + q]
    single = CARD_RANK[out[LAST_CARDS + q * GROUP_ROOM]] if out[LAST_LEN + q] == 1 else -1
    from_deck = out[LAST_DREW + q] < 0
    before = _likelihood(out, q, hand, m, cap, single, from_deck, rho, weights)
    changed = False
    deck_len = out[DECK_LEN]
    for _ in range(sweeps):
        for i in range(m):
            if not slots >> i & 1:
                continue
            j = below(r, deck_len)
            old = hand[i]
            hand[i] = out[DECK + j]
            after = _likelihood(out, q, hand, m, cap, single, from_deck, rho, weights)
            if after >= before or uniform(r) * before < after:
                out[DECK + j] = old
                before = after
                changed = True
            else:
                hand[i] = old
    if changed:
        out[HAND_LEN + q] = 0
        total = 0
        for i in range(m):
            insert_card(out, q, hand[i])
            total += CARD_POINTS[hand[i]]
        out[TOTAL + q] = total


@njit(cache=True)
def informed(out, seat, r, rho, sweeps):
    """``informed_sample``'s re-weighing of a uniform sample ``out`` of ``seat``'s view: each opponent
    that has discarded this round, in seat order from the round's first discard."""
    if rho >= 1.0 or out[DECK_LEN] == 0 or out[PHASE] != PHASE_PLAY or out[FIRST_DISCARDER] < 0:
        return
    hand = np.empty(HAND_ROOM, dtype=np.int64)
    weights = np.empty(HAND_ROOM, dtype=np.float64)
    n = out[PLAYERS]
    first = out[FIRST_DISCARDER]
    for step in range(n):
        q = (first + step) % n
        if q != seat and out[ALIVE + q] and out[LAST_HIGH + q] >= 0:
            _reweigh(out, q, r, rho, sweeps, hand, weights)


@njit(cache=True)
def sample_view(s, seat, r, rho, sweeps):
    """One determinized sample of ``seat``'s view of ``s``, as a new single-round row:
    ``informed_sample`` (``rho = 1``: ``Game.from_view``'s uniform deal). For tests and one-off
    use; the search prepares the view once and draws many (``prepare_view``, ``draw_sample``)."""
    template, cards, places, starts, pending_epoch = prepare_view(s, seat)
    out = np.empty_like(s)
    work = np.empty(NUM_CARDS, dtype=np.int64)
    draw_sample(out, r, template, cards, places, starts, pending_epoch, work)
    informed(out, seat, r, rho, sweeps)
    return out


# ------------------------------------------------------------------------------------------------
# Rollouts and the choice (search.SearchAgent)
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def _streams(s, streams, lengths):
    """``search._streams``: each seat's own sequence of future deck cards, the deck dealt round-robin
    from the top to the live seats from the seat to move."""
    n = s[PLAYERS]
    order = np.empty(MAX_SEATS, dtype=np.int64)
    live = 0
    for i in range(n):
        q = (s[CURRENT] + i) % n
        if s[ALIVE + q]:
            order[live] = q
            live += 1
    lengths[:] = 0
    top = s[DECK_LEN] - 1
    for i in range(s[DECK_LEN]):
        q = order[i % live]
        streams[q, lengths[q]] = s[DECK + top - i]
        lengths[q] += 1


@njit(cache=True)
def _arrange(g, streams, lengths, pos, seat):
    """``search._arrange``: put the seat's next stream card still in the deck on top of the deck."""
    i = pos[seat]
    deck_len = g[DECK_LEN]
    while i < lengths[seat]:
        c = streams[seat, i]
        i += 1
        found = False
        for j in range(deck_len):
            if g[DECK + j] == c:
                g[DECK + j] = g[DECK + deck_len - 1]
                g[DECK + deck_len - 1] = c
                found = True
                break
        if found:
            break
    pos[seat] = i


@njit(cache=True)
def _playout(s, seat, sample, seed, first, params, values, streams, lengths, scratch):
    """Play ``first`` then the rollout policy to the round's end in a copy of ``sample``, with the
    generator state ``seed`` for its reshuffles; the score for ``seat`` (module docstring, 4).
    ``s`` is the true row (the scores before); ``scratch``: ``_scratch()``."""
    g, rr, pos, buf, discards = scratch
    g[:] = sample
    rr[0] = seed
    pos[:] = 0
    yaniv = action_ids(g[R_HAND_SIZE])[0]
    move = first
    for _ in range(np.int64(params[P_ROLLOUT_TURNS])):
        if move < yaniv and move % 6 == 0 and g[PHASE] == PHASE_PLAY:
            _arrange(g, streams, lengths, pos, g[CURRENT])
        apply_action(g, rr, move, buf)
        if g[PHASE] == PHASE_OVER:
            break
        move = rollout_move(g, params, values, discards)
    over = g[PHASE] == PHASE_OVER
    if s[R_GAME_END] == ONE_ROUND:
        return placing(g, seat, over)
    eliminated = g[RES_ELIMINATED] if over else 0
    mine = 0.0
    theirs = 0.0
    others = 0
    knocked = 0
    for q in range(s[PLAYERS]):
        if not s[ALIVE + q]:
            continue
        if over:
            took = g[SCORE + q] - s[SCORE + q]
        else:
            took = g[TOTAL + q] if g[ALIVE + q] else 0
        if q == seat:
            mine = took
        else:
            theirs += took
            others += 1
            if eliminated >> q & 1:
                knocked += 1
    score = theirs / others - mine
    if eliminated:
        if eliminated >> seat & 1:
            score -= ELIMINATION
        score += ELIMINATION * knocked / others
    return score


@njit(cache=True)
def placing(g, seat, over):
    """``seat``'s rank reward in the played-out row ``g`` of a game of one round: the game's
    (``batch.rank_reward``) when ``over``, else by the hands' totals as they lie (the reference's
    ``placing``)."""
    if over:
        return rank_reward(g, seat)
    ahead = 0
    tied = 0
    for q in range(g[PLAYERS]):
        if g[TOTAL + q] < g[TOTAL + seat]:
            ahead += 1
        elif g[TOTAL + q] == g[TOTAL + seat]:
            tied += 1  # seat itself included
    return 1.0 - 2.0 * (ahead + (tied - 1) / 2.0) / (g[PLAYERS] - 1)


@njit(cache=True)
def _scratch():
    """The playouts' scratch: the row played, its generator, the stream positions, two buffers."""
    return (np.empty(WIDTH, dtype=np.int64), np.zeros(1, dtype=np.uint64), np.zeros(MAX_SEATS, dtype=np.int64),
            np.empty(MAX_DISCARDS, dtype=np.int64), np.empty(MAX_DISCARDS, dtype=np.int64))


@njit(cache=True)
def _rollouts(s, r, params, values, view, cands, which, count, scores):
    """One sample of the view of the player to move (``view``: ``prepare_view``'s), then one playout
    after each candidate ``cands[which[i]]``, i < ``count``, on it: its score into ``scores[i]``.
    The playouts share the sample, the seat's deck streams and the reshuffles' generator state."""
    template, cards, places, starts, pending_epoch, sample, work, streams, lengths, scratch = view
    seat = s[CURRENT]
    draw_sample(sample, r, template, cards, places, starts, pending_epoch, work)
    seed = next_u64(r)
    informed(sample, seat, r, params[P_RHO], np.int64(params[P_SWEEPS]))
    _streams(sample, streams, lengths)
    for i in range(count):
        scores[i] = _playout(s, seat, sample, seed, cands[which[i]], params, values, streams, lengths, scratch)


@njit(cache=True)
def choose(s, r, params, cands, k):
    """The index of the candidate to play (``SearchAgent.choose``): 0, the heuristic's choice, unless
    another beats it clearly. ``cands[:k]``: action ids for the player to move, ``k >= 2``."""
    return choose_values(s, r, params, cands, k, np.empty(k, dtype=np.float64))


@njit(cache=True)
def choose_values(s, r, params, cands, k, means):
    """``choose``, which also writes each candidate's mean rollout score minus the first's into
    ``means[:k]`` (``means[0]`` is 0): over stage 1's shared samples, and for the runner-up over
    stage 2's as well. The same random numbers and the same choice as ``choose``."""
    budget = np.int64(params[P_BUDGET])
    template, cards, places, starts, pending_epoch = prepare_view(s, s[CURRENT])
    view = (template, cards, places, starts, pending_epoch, np.empty(WIDTH, dtype=np.int64),
            np.empty(NUM_CARDS, dtype=np.int64), np.empty((MAX_SEATS, NUM_CARDS), dtype=np.int64),
            np.zeros(MAX_SEATS, dtype=np.int64), _scratch())
    values = deck_values(s, params)
    row = np.empty(k, dtype=np.float64)
    n = np.zeros(k, dtype=np.int64)
    s1 = np.zeros(k, dtype=np.float64)
    s2 = np.zeros(k, dtype=np.float64)
    which = np.arange(k)
    first = max(1, budget // (2 * k))
    for _ in range(first):  # stage 1: every candidate on the same samples
        _rollouts(s, r, params, values, view, cands, which, k, row)
        for i in range(1, k):
            d = row[i] - row[0]
            n[i] += 1
            s1[i] += d
            s2[i] += d * d
    means[0] = 0.0
    for i in range(1, k):
        means[i] = s1[i] / n[i]
    j = 1
    for i in range(2, k):
        if s1[i] / n[i] > s1[j] / n[j]:
            j = i
    if s1[j] <= 0:
        return 0
    which[1] = j
    for _ in range(max(0, budget - first * k) // 2):  # stage 2: the heuristic's choice and the best other
        _rollouts(s, r, params, values, view, cands, which, 2, row)
        d = row[1] - row[0]
        n[j] += 1
        s1[j] += d
        s2[j] += d * d
    means[j] = s1[j] / n[j]
    if n[j] < 2:
        return 0
    mean = s1[j] / n[j]
    var = max(s2[j] / n[j] - mean * mean, 0.0) * n[j] / (n[j] - 1)
    return j if mean > params[P_CONFIDENCE] * math.sqrt(var / n[j]) else 0


@njit(cache=True)
def candidates(s, params, heuristic, out):
    """The moves searched for the player to move, the heuristic's own choice first, into ``out``
    (``MAX_CANDIDATES``); their count (``SearchAgent.candidates``, cut to ``max(2, budget // 4)``).

    The play phase: the ``top_k`` best of ``bots.heuristic_rank``, with Yaniv when the rules let
    the player call, first if ``bots.heuristic_should_call``, else second. The slamdown phase:
    ``bots.heuristic_slamdown``'s answer, then the other.
    """
    buf = np.empty(SCRATCH, dtype=np.int64)
    yaniv, slam, keep = action_ids(s[R_HAND_SIZE])
    if s[PHASE] == PHASE_SLAMDOWN:
        out[0] = heuristic_slamdown(s, heuristic, buf)
        out[1] = keep if out[0] == slam else slam
        k = 2
    else:
        actions = np.empty(ACTION_ROOM, dtype=np.int64)
        scores = np.empty(ACTION_ROOM, dtype=np.float64)
        count = heuristic_rank(s, heuristic, actions, scores, buf)
        k = min(count, np.int64(params[P_TOP_K]))
        for i in range(k):
            out[i] = actions[i]
        if may_call(s, s[TOTAL + s[CURRENT]]):
            at = 0 if heuristic_should_call(s, heuristic, buf) else min(1, k)
            for i in range(k, at, -1):
                out[i] = out[i - 1]
            out[at] = yaniv
            k += 1
    return min(k, max(2, np.int64(params[P_BUDGET]) // 4))


@njit(cache=True)
def search_action(s, r, params, heuristic):
    """The search's action id for the player to move in ``s`` (-1 when the game is over): the
    candidates (``candidates``), the lone one at once, else ``choose``'s. ``r``: the bot's own
    generator; ``params``: ``search_params``; ``heuristic``: ``bots.heuristic_params`` (the
    reference ranks with ``call_risk=CALL_RISK``)."""
    if s[PHASE] == PHASE_OVER:
        return -1
    cands = np.empty(MAX_CANDIDATES, dtype=np.int64)
    k = candidates(s, params, heuristic, cands)
    if k == 1:
        return cands[0]
    return cands[choose(s, r, params, cands, k)]


@njit(cache=True)
def search_games(S, R, games, params, heuristic, out):
    """``out[k]``: ``search_action`` in row ``S[games[k]]`` with that game's generator ``R[games[k]]``
    (``yaniv_env.vector``'s search seats: one call for every table where the search is to move)."""
    for k in range(games.shape[0]):
        g = games[k]
        out[k] = search_action(S[g], R[g], params, heuristic)


@njit(cache=True, nogil=True)
def choose_games(S, A, games, seats, cands, counts, params, out):
    """``out[k]``: the candidate ``choose`` plays among ``cands[k, :counts[k]]`` (action ids, the default
    first) in row ``S[games[k]]``, with the generator of the seat to move, ``A[games[k], seats[k]]``; the
    lone candidate at once. The planner's seats (``agents.policies.planner``): its candidates come from a
    network instead of the heuristic."""
    choose_games_values(S, A, games, seats, cands, counts, params, out,
                        np.empty((games.shape[0], cands.shape[1]), dtype=np.float64))


@njit(cache=True, nogil=True)
def choose_games_values(S, A, games, seats, cands, counts, params, out, means):
    """``choose_games``, which also writes ``choose_values``' means into ``means[k, :counts[k]]`` (a lone
    candidate's 0) and NaN past them: the expert stage's advantage targets (``agents.training.expert``)."""
    for k in range(games.shape[0]):
        g = games[k]
        means[k, :] = np.nan
        means[k, 0] = 0.0
        if counts[k] == 1:
            out[k] = cands[k, 0]
        else:
            q = seats[k]
            out[k] = cands[k, choose_values(S[g], A[g, q : q + 1], params, cands[k], counts[k], means[k])]
