"""The baseline bots in compiled code: random, greedy and heuristic, as numba kernels on one game row.

Each kernel picks an action id (``yaniv_env.encoding.ActionTable``) for the player to move in the
row ``s`` (``yaniv_env.core.layout``). They are ports of the Python agents of
``agents.baselines`` and choose the same moves: ``tests/test_core_bots.py`` compares them on
positions of every table of ``tests/core_support.tables()``. They read the row only, never the
hidden cards of other seats: what the Python agents read in a ``PlayerView`` is in the row (the
hand, ``TOTAL``, ``HAND_LEN``, ``KNOWN``, ``THROWN``, ``LAST_HIGH``/``LAST_DREW``, ``DEAD`` and
``TOP``, ``SCORE``, ``ALIVE``, ``TURN`` and the rule fields).

Kernels (every one ``@njit(cache=True)``; ``buf`` is ``int64`` scratch of at least ``SCRATCH``
entries, ``out`` of at least ``ACTION_ROOM``; each returns -1 when nobody is to move, the game
being over):

=============================================================  ==========================================
``random_action(s, r, out, buf) -> int``                       the k-th of ``engine.legal_actions``,
                                                               k = ``engine.below(r, count)``: the move
                                                               ``RandomAgent`` plays when its generator
                                                               gives the same k
``greedy_action(s, buf) -> int``                               ``GreedyAgent.act``
``heuristic_action(s, params, buf) -> int``                    ``HeuristicAgent.act``
``heuristic_rank(s, params, out_actions, out_scores, buf)``    ``HeuristicAgent.rank_moves``: every
``-> int``                                                     discard-and-draw action (int64) with its
                                                               score (float64, lower is better), best
                                                               first, ties in legal order; the count
                                                               (0 in the slamdown phase)
``heuristic_should_call(s, params, buf) -> bool``              ``HeuristicAgent.should_call`` (False when
                                                               the rules do not let it call)
``heuristic_slamdown(s, params, buf) -> int``                  ``HeuristicAgent.slamdown_choice``: the
                                                               slamdown or the keep action id (the row
                                                               must be in the slamdown phase)
=============================================================  ==========================================

``params`` is the ``float64`` vector ``heuristic_params(**settings)`` builds from the keyword
arguments of ``HeuristicAgent`` (same names, same defaults; an unknown name is refused by name).
Its fields lie at the offsets ``P_*`` (``P_FEED`` holds up to ``MAX_FEED_WEIGHTS`` feed weights,
``P_FEED_LEN`` how many). The port assumes what the Python agent's fast path assumes: the three
gamma factors are not negative (``heuristic_params`` refuses them otherwise).

Same floats: the Python heuristic remembers what it computes (``relief``, ``_combo_points``); here
each value is computed afresh, from a table of the best run a card makes with the cards of its suit
(``RUN_POINTS``, built at import), and every sum is taken in the Python order (``_deck_value``,
``assaf_risk`` through ``sum_distribution``, ``_score_term``: CPython 3.11's ``sum`` adds floats
left to right), so the scores are the same floats and ties break the same way.

One input cannot be read off a row: ``HeuristicAgent._feed`` walks ``view.known[q]``, a
``frozenset``, and stops at the first card that combines with the drawable card, adding that card's
points, so when two such cards of different points are known, which one counts depends on the
set's slot order, which depends on the order the cards were taken. The port walks the cards in the
slot order CPython gives a set built by adding them in id order (``known_in_set_order``); the
moves that differ for this reason are rare (``tests/test_core_bots.py`` counts them).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numba import njit

from yaniv.cards import NUM_RANKS, NUM_STANDARD, RANK, SUIT
from yaniv.odds import KEPT_HIGH_WEIGHT, MAX_POINTS, ROUND_END_CHANCE, ROUND_END_CHANCE_OTHERWISE
from yaniv_env.core.engine import DRAW_SOURCES, action_ids, below, legal_actions, legal_discards, make_group, may_call, next_seat
from yaniv_env.core.layout import (
    ALIVE, CARD_POINTS, CARD_RANK, CARD_SUIT, CURRENT, DEAD, DECK_LEN, DRAWABLE, DRAWABLE_LEN, GROUP_ROOM, HAND,
    HAND_LEN, HAND_ROOM, KIND_RUN, KIND_SET, KIND_SINGLE, KNOWN, LAST_DREW, LAST_HIGH, MAX_DISCARDS, ONE_ROUND,
    PENDING, PHASE, PHASE_PLAY, PHASE_SLAMDOWN, PLAYERS, R_ASSAF_EQUAL, R_DRAW_RUN, R_DRAW_SET, R_GAME_END,
    R_HAND_SIZE, R_JOKERS,
    R_JOKERS_IN_SETS, R_LIMIT, R_MAX_SET, R_MIN_SET_JOKERS, R_RESET_AT, R_RESET_KIND, R_RESET_SUBTRACT, R_RESETS,
    SCORE, THROWN, TOP, TOP_LEN, TOTAL, TURN,
)

# ------------------------------------------------------------------------------------------------
# Sizes and the parameter vector
# ------------------------------------------------------------------------------------------------

ACTION_ROOM: Final = MAX_DISCARDS * DRAW_SOURCES  # more than the legal actions of any position
# ``buf`` segments: the legal discards' slot masks, the unseen cards, their count per value, one
# group, a set table (known_in_set_order), the kept cards of one discard.
_DISCARDS_AT: Final = 0
_UNSEEN_AT: Final = _DISCARDS_AT + MAX_DISCARDS
_COUNTS_AT: Final = _UNSEEN_AT + 64
_GROUP_AT: Final = _COUNTS_AT + 16
_SET_AT: Final = _GROUP_AT + GROUP_ROOM
_KNOWN_AT: Final = _SET_AT + 64
_KEPT_AT: Final = _KNOWN_AT + 16
SCRATCH: Final = _KEPT_AT + 16

MAX_FEED_WEIGHTS: Final = 8
P_GAMMA, P_GAMMA_SINGLE, P_THREAT_SCALE, P_THREAT_SIZE, P_CALL_RISK, P_KEPT_HIGH_WEIGHT = 0, 1, 2, 3, 4, 5
P_PATIENCE, P_IMPATIENCE, P_RECYCLE_COST, P_SCORE_WEIGHT, P_FEED_LEN, P_FEED = 6, 7, 8, 9, 10, 11
PARAMS_SIZE: Final = P_FEED + MAX_FEED_WEIGHTS

# ``HeuristicAgent``'s keyword arguments and defaults (a test keeps them the agent's: this layer
# may not import ``agents``).
HEURISTIC_DEFAULTS: Final = {
    "gamma": 0.8,
    "gamma_single": 0.8,
    "threat_scale": 0.45,
    "threat_size": 2,
    "call_risk": 0.25,
    "feed_weights": (0.0, 0.3, 0.15, 0.0),
    "kept_high_weight": KEPT_HIGH_WEIGHT,
    "patience": 8,
    "impatience": 0.05,
    "recycle_cost": 2.0,
    "score_weight": 0.0,
}
_OFFSET_OF: Final = {
    "gamma": P_GAMMA, "gamma_single": P_GAMMA_SINGLE, "threat_scale": P_THREAT_SCALE, "threat_size": P_THREAT_SIZE,
    "call_risk": P_CALL_RISK, "kept_high_weight": P_KEPT_HIGH_WEIGHT, "patience": P_PATIENCE,
    "impatience": P_IMPATIENCE, "recycle_cost": P_RECYCLE_COST, "score_weight": P_SCORE_WEIGHT,
}
OVER_LIMIT_COST: Final = 60.0  # agents.baselines.heuristic.OVER_LIMIT_COST


def heuristic_params(**settings: float | int | tuple[float, ...]) -> np.ndarray:
    """The ``params`` vector of the heuristic kernels for ``HeuristicAgent(**settings)``.

    ValueError naming the setting for an unknown name, a value that is not a finite number, more
    than ``MAX_FEED_WEIGHTS`` feed weights, or a negative gamma or threat scale.
    """
    unknown = sorted(set(settings) - set(HEURISTIC_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown heuristic setting(s) {', '.join(map(repr, unknown))}; "
                         f"expected some of {', '.join(HEURISTIC_DEFAULTS)}")
    merged = {**HEURISTIC_DEFAULTS, **settings}
    params = np.zeros(PARAMS_SIZE, dtype=np.float64)
    for name, at in _OFFSET_OF.items():
        value = merged[name]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
            raise ValueError(f"heuristic setting {name} must be a finite number, got {value!r}")
        params[at] = float(value)
    for name in ("gamma", "gamma_single", "threat_scale"):
        if params[_OFFSET_OF[name]] < 0:
            raise ValueError(f"heuristic setting {name} must not be negative, got {merged[name]!r}")
    feed = merged["feed_weights"]
    try:
        feed = tuple(feed)
    except TypeError:
        raise ValueError(f"heuristic setting feed_weights must be a sequence of numbers, got {feed!r}") from None
    if len(feed) > MAX_FEED_WEIGHTS:
        raise ValueError(f"heuristic setting feed_weights holds at most {MAX_FEED_WEIGHTS} weights, got {len(feed)}")
    for w in feed:
        if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)) or not math.isfinite(w):
            raise ValueError(f"heuristic setting feed_weights must hold finite numbers, got {feed!r}")
    params[P_FEED_LEN] = len(feed)
    params[P_FEED : P_FEED + len(feed)] = feed
    return params


# ------------------------------------------------------------------------------------------------
# Tables
# ------------------------------------------------------------------------------------------------

_RANK_POINTS: Final = np.array([min(r + 1, 10) for r in range(NUM_RANKS)], dtype=np.int64)
# Per rank: the bit mask of the ranks next to it (a run without jokers holds one of them).
_NEIGHBOURS: Final = np.array([sum(1 << x for x in (r - 1, r + 1) if 0 <= x < NUM_RANKS) for r in range(NUM_RANKS)],
                              dtype=np.int64)
# Per natural card: the bit mask of the cards that make a set or a run with it without a joker (its
# rank in the other suits, its suit at the ranks next to it).
_NEAR: Final = np.array([sum(1 << d for d in range(NUM_STANDARD) if d != c and (RANK[d] == RANK[c] or (
    SUIT[d] == SUIT[c] and abs(RANK[d] - RANK[c]) == 1))) for c in range(NUM_STANDARD)], dtype=np.int64)
# De Bruijn table: the index of a single set bit b of a uint64 is _BIT_INDEX[(b * _DE_BRUIJN) >> 58].
_DE_BRUIJN: Final = 0x03F79D71B4CB0A89
_BIT_INDEX: Final = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _BIT_INDEX[((1 << _i) * _DE_BRUIJN & (2**64 - 1)) >> 58] = _i
_END_STAY: Final = np.array([1.0 - ROUND_END_CHANCE.get(size, ROUND_END_CHANCE_OTHERWISE) for size in range(16)])
_NO_END_STAY: Final = 1.0 - ROUND_END_CHANCE_OTHERWISE
assert max(ROUND_END_CHANCE) < len(_END_STAY)


@njit(cache=True)
def _build_run_points(rank_points):
    """``RUN_POINTS[(others << 4 | rank) * 3 + jokers]``: the most points of a run holding a card of
    ``rank``, other cards of its suit at the ranks of the bit mask ``others`` and ``jokers`` jokers
    (0: none). The best run takes every card of its suit between its lowest and highest, and a
    run of at least three cards always fits between the ace and the king, so no rule setting
    changes it (a natural and two jokers read as a set are counted with the sets)."""
    out = np.zeros(8192 * 16 * 3, dtype=np.int8)
    for others in range(8192):
        for rank in range(13):
            bits = others | (1 << rank)
            for nj in range(3):
                best = 0
                for lo in range(rank + 1):
                    if not bits >> lo & 1:
                        continue
                    for hi in range(rank, 13):
                        if not bits >> hi & 1:
                            continue
                        count = 0
                        pts = 0
                        for x in range(lo, hi + 1):
                            if bits >> x & 1:
                                count += 1
                                pts += rank_points[x]
                        gaps = hi - lo + 1 - count
                        need = gaps if gaps > 3 - count else 3 - count
                        if need <= nj and pts > best:
                            best = pts
                out[(others << 4 | rank) * 3 + nj] = best
    return out


RUN_POINTS: Final = _build_run_points(_RANK_POINTS)


# ------------------------------------------------------------------------------------------------
# Hand values: the best set or run of a card, relief
# ------------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _set_naturals(s, same_rank, jokers):
    """The most naturals of a legal set holding a given natural card, with ``same_rank`` other
    naturals of its rank and ``jokers`` jokers at hand (0: no set)."""
    m = 1 + same_rank
    best = m if m >= 2 else 0
    if jokers > 0 and s[R_JOKERS_IN_SETS] == 1:
        lo = s[R_MIN_SET_JOKERS]
        hi = s[R_MAX_SET]
        for k in range(m, best, -1):
            if lo <= k + 1 <= hi or (jokers >= 2 and lo <= k + 2 <= hi):
                return k
    return best


@njit(cache=True, inline="always")
def combo_points(s, rank, suit_others, same_rank, jokers):
    """``agents.baselines.heuristic._combo_points``: the most points of a set or run that a natural
    card of ``rank`` makes with other cards: those of its suit at the ranks ``suit_others`` (a bit
    mask), ``same_rank`` of its rank, ``jokers`` jokers (0: none)."""
    sets = _set_naturals(s, same_rank, jokers) * _RANK_POINTS[rank]
    run = np.int64(RUN_POINTS[(suit_others << 4 | rank) * 3 + jokers])
    return sets if sets > run else run


@njit(cache=True, inline="always")
def _suit_mask(suits, su):
    return (suits >> (16 * su)) & 0x1FFF


@njit(cache=True, inline="always")
def _rank_count(ranks, r):
    return (ranks >> (3 * r)) & 7


@njit(cache=True)
def _best_combo(s, cards, n, suits, ranks, jokers):
    """The most points of a legal discard of two or more of ``cards[:n]`` (whose suit masks, rank
    counts and jokers are ``suits``, ``ranks``, ``jokers``), 0 if none."""
    best = 0
    for i in range(n):
        c = cards[i]
        if c >= NUM_STANDARD:
            continue
        r = CARD_RANK[c]
        su = CARD_SUIT[c]
        pts = combo_points(s, r, _suit_mask(suits, su) & ~(1 << r), _rank_count(ranks, r) - 1, jokers)
        if pts > best:
            best = pts
    return best


@njit(cache=True, inline="always")
def _relief(n, high, combo, g1, gm):
    """``agents.baselines.heuristic.relief`` of a hand of ``n`` cards whose highest card is worth
    ``high`` and whose best set or run ``combo`` points."""
    if n == 0:
        return 0.0
    if n == 1:
        return g1 * high
    out = 0.0
    v = g1 * high
    if v > out:
        out = v
    v = gm * combo
    if v > out:
        out = v
    return out


@njit(cache=True)
def _hand_shape(cards, n):
    """(total, highest card's points, suit masks packed 16 bits a suit, rank counts packed 3 bits a
    rank, jokers) of ``cards[:n]``."""
    total = 0
    high = 0
    suits = 0
    ranks = 0
    jokers = 0
    for i in range(n):
        c = cards[i]
        p = CARD_POINTS[c]
        total += p
        if p > high:
            high = p
        if c >= NUM_STANDARD:
            jokers += 1
        else:
            suits |= 1 << (16 * CARD_SUIT[c] + CARD_RANK[c])
            ranks += 1 << (3 * CARD_RANK[c])
    return total, high, suits, ranks, jokers


@njit(cache=True)
def _relief_with_joker(s, cards, n, high, suits, ranks, jokers, g1, gm):
    """``relief`` of ``cards[:n]`` (of the shape ``_hand_shape`` gave) and a joker."""
    combo = _best_combo(s, cards, n, suits, ranks, jokers + 1) if n >= 1 else 0
    return _relief(n + 1, high, combo, g1, gm)


@njit(cache=True)
def _hand_value(s, cards, n, g1, gm):
    """``agents.baselines.heuristic._hand_value``: total minus relief."""
    total, high, suits, ranks, jokers = _hand_shape(cards, n)
    combo = _best_combo(s, cards, n, suits, ranks, jokers) if n >= 2 else 0
    return total - _relief(n, high, combo, g1, gm)


# ------------------------------------------------------------------------------------------------
# What the player to move has seen
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def _unseen(s, me, buf):
    """``unseen_cards``, the bit mask (bit c for card c) of the unseen natural cards, and how many."""
    seen = 0
    base = HAND + me * HAND_ROOM
    for i in range(s[HAND_LEN + me]):
        seen |= 1 << s[base + i]
    for i in range(s[TOP_LEN]):
        seen |= 1 << s[TOP + i]
    for v in range(MAX_POINTS + 1):
        buf[_COUNTS_AT + v] = 0
    n = 0
    points = 0
    naturals = 0
    n_naturals = 0
    for c in range(NUM_STANDARD + s[R_JOKERS]):
        if seen >> c & 1 or s[DEAD + c] or (s[KNOWN + c] >= 0 and s[KNOWN + c] != me):
            continue
        buf[_UNSEEN_AT + n] = c
        n += 1
        p = CARD_POINTS[c]
        points += p
        buf[_COUNTS_AT + p] += 1
        if c < NUM_STANDARD:
            naturals |= 1 << c
            n_naturals += 1
    return n, points, naturals, n_naturals


@njit(cache=True)
def unseen_cards(s, me, buf):
    """``PlayerView.unseen_cards`` of seat ``me``: writes them in id order at ``buf[_UNSEEN_AT:]``,
    their count per value 0..10 at ``buf[_COUNTS_AT:]``; returns (how many, their points)."""
    n, points, _, _ = _unseen(s, me, buf)
    return n, points


@njit(cache=True, inline="always")
def _set_insert(table, mask, c):
    """CPython 3.11's ``set_insert_clean`` of the int ``c`` (its hash is itself) into ``table``."""
    perturb = c
    i = c & mask
    while True:
        if table[i] < 0:
            table[i] = c
            return
        if i + 9 <= mask:  # LINEAR_PROBES
            for j in range(1, 10):
                if table[i + j] < 0:
                    table[i + j] = c
                    return
        perturb >>= 5  # PERTURB_SHIFT
        i = (i * 5 + 1 + perturb) & mask


@njit(cache=True)
def known_in_set_order(s, q, buf, out):
    """The cards seat ``q`` was seen taking and still holds, written into ``out`` in the order
    CPython 3.11 iterates ``frozenset(x)`` where the set ``x`` got them by ``add`` in id order (a
    card's hash is its id); returns how many. ``buf``: 64 entries of scratch for the tables.

    The set starts with 8 slots and moves to 32 when a fifth card comes (``set_add_entry``: 5 * fill
    >= 3 * 21); the frozenset copies a set of 8 slots as it is, and inserts the cards of a larger
    one, in its order, into 16 slots (``set_merge`` sizes it for twice the cards).
    """
    small = buf[0:8]
    large = buf[8:40]
    frozen = buf[40:56]
    small[:] = -1
    large[:] = -1
    frozen[:] = -1
    n = 0
    for c in range(NUM_STANDARD + 2):
        if s[KNOWN + c] != q:
            continue
        n += 1
        if n <= 5:
            _set_insert(small, 7, c)
        else:
            _set_insert(large, 31, c)
        if n == 5:
            for i in range(8):
                if small[i] >= 0:
                    _set_insert(large, 31, small[i])
    k = 0
    if n < 5:
        for i in range(8):
            if small[i] >= 0:
                out[k] = small[i]
                k += 1
        return k
    for i in range(32):
        if large[i] >= 0:
            _set_insert(frozen, 15, large[i])
    for i in range(16):
        if frozen[i] >= 0:
            out[k] = frozen[i]
            k += 1
    return k


@njit(cache=True)
def _gammas(s, params, me):
    """``HeuristicAgent._gamma``: (single, set or run) relief weights, scaled under threat."""
    smallest = 1 << 30
    for q in range(s[PLAYERS]):
        if q != me and s[ALIVE + q] and s[HAND_LEN + q] < smallest:
            smallest = s[HAND_LEN + q]
    scale = params[P_THREAT_SCALE] if smallest < (1 << 30) and smallest <= params[P_THREAT_SIZE] else 1.0
    return params[P_GAMMA_SINGLE] * scale, params[P_GAMMA] * scale


@njit(cache=True)
def _own_turns(s):
    alive = 0
    for q in range(s[PLAYERS]):
        alive += s[ALIVE + q]
    return s[TURN] // (alive if alive > 1 else 1)


# ------------------------------------------------------------------------------------------------
# Random and greedy
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def random_action(s, r, out, buf):
    """A uniformly random legal action: ``out[below(r, count)]`` after ``legal_actions(s, out, buf)``."""
    count = legal_actions(s, out, buf)
    if count == 0:
        return -1
    return out[below(r, count)]


@njit(cache=True)
def greedy_action(s, buf):
    """``agents.baselines.greedy.GreedyAgent.act``: call when allowed, shed the most points (then
    the most cards, then the first in legal order), take the lowest pile card only when it is below
    both the discard's points and the unseen cards' mean, slam down always."""
    phase = s[PHASE]
    yaniv, slam, keep = action_ids(s[R_HAND_SIZE])
    if phase == PHASE_SLAMDOWN:
        return slam
    if phase != PHASE_PLAY:
        return -1
    p = s[CURRENT]
    if may_call(s, s[TOTAL + p]):
        return yaniv
    base = HAND + p * HAND_ROOM
    count = legal_discards(s, p, buf[_DISCARDS_AT:])
    best = 0
    best_pts = -1
    best_len = -1
    for i in range(count):
        slots = buf[_DISCARDS_AT + i]
        pts = 0
        size = 0
        for k in range(s[HAND_LEN + p]):
            if slots >> k & 1:
                pts += CARD_POINTS[s[base + k]]
                size += 1
        if pts > best_pts or (pts == best_pts and size > best_len):
            best, best_pts, best_len = slots, pts, size
    low = 1
    for src in range(2, s[DRAWABLE_LEN] + 1):
        if CARD_POINTS[s[DRAWABLE + src - 1]] < CARD_POINTS[s[DRAWABLE + low - 1]]:
            low = src
    at = (best - 1) * DRAW_SOURCES
    if s[DECK_LEN] == 0:
        return at + low
    n, points = unseen_cards(s, p, buf)
    mean = points / n if n else 6.0
    low_pts = CARD_POINTS[s[DRAWABLE + low - 1]]
    if low_pts < best_pts and low_pts < mean:
        return at + low
    return at


# ------------------------------------------------------------------------------------------------
# The heuristic: Yaniv and slamdown
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def _sum_distribution(weights, k, limit):
    """``yaniv.odds.sum_distribution``, the same additions in the same order."""
    dist = np.zeros(limit + 1)
    dist[0] = 1.0
    for _ in range(k):
        new = np.zeros(limit + 1)
        for t in range(limit + 1):
            p = dist[t]
            if p:
                top = limit - t
                if top > MAX_POINTS:
                    top = MAX_POINTS
                for v in range(top + 1):
                    w = weights[v]
                    if w:
                        new[t + v] += p * w
        dist = new
    return dist


@njit(cache=True)
def _prob_at_most(plain, skewed, n_plain, n_skewed, limit):
    """``yaniv.odds._prob_at_most``."""
    if limit < 0:
        return 0.0
    a = _sum_distribution(plain, n_plain, limit)
    b = _sum_distribution(skewed, n_skewed, limit)
    acc = 0.0
    for i in range(limit + 1):
        for j in range(limit + 1 - i):
            acc += a[i] * b[j]
    return acc


@njit(cache=True)
def assaf_risk(s, me, total, kept_high_weight, buf):
    """``yaniv.odds.assaf_risk`` for seat ``me`` calling at ``total``."""
    unseen_cards(s, me, buf)
    counts_total = 0
    for v in range(MAX_POINTS + 1):
        counts_total += buf[_COUNTS_AT + v]
    plain = np.zeros(MAX_POINTS + 1)
    if counts_total:
        for v in range(MAX_POINTS + 1):
            plain[v] = buf[_COUNTS_AT + v] / counts_total
    else:
        plain[0] = 1.0
    strict = 0 if s[R_ASSAF_EQUAL] == 1 else 1
    p_safe = 1.0
    for q in range(s[PLAYERS]):
        if q == me or not s[ALIVE + q]:
            continue
        known = 0
        known_points = 0
        for c in range(NUM_STANDARD + 2):
            if s[KNOWN + c] == q:
                known += 1
                known_points += CARD_POINTS[c]
        hidden = s[HAND_LEN + q] - known
        limit = total - strict - known_points
        if limit < 0:
            continue
        cap = s[LAST_HIGH + q]
        if cap >= 0 and hidden > 0:
            skewed = np.zeros(MAX_POINTS + 1)
            weight_sum = 0.0
            for v in range(MAX_POINTS + 1):
                skewed[v] = buf[_COUNTS_AT + v] * (1.0 if v <= cap else kept_high_weight)
                weight_sum += skewed[v]
            if weight_sum:
                for v in range(MAX_POINTS + 1):
                    skewed[v] = skewed[v] / weight_sum
            else:
                skewed[:] = 0.0
                skewed[0] = 1.0
            n_plain = 1 if s[LAST_DREW + q] < 0 else 0
            p = _prob_at_most(plain, skewed, n_plain, hidden - n_plain, limit)
        else:
            p = _prob_at_most(plain, plain, hidden, 0, limit)
        p_safe *= 1.0 - p
    return 1.0 - p_safe


@njit(cache=True)
def heuristic_should_call(s, params, buf):
    """``HeuristicAgent.should_call`` for the player to move."""
    me = s[CURRENT]
    total = s[TOTAL + me]
    if not may_call(s, total):
        return False
    if total == 0:
        return True
    late = _own_turns(s) - params[P_PATIENCE]
    limit = params[P_CALL_RISK] + params[P_IMPATIENCE] * (late if late > 0 else 0.0)
    return assaf_risk(s, me, total, params[P_KEPT_HIGH_WEIGHT], buf) <= limit


@njit(cache=True)
def heuristic_slamdown(s, params, buf):
    """``HeuristicAgent.slamdown_choice``: slam unless the hand is worth less with the drawn card kept."""
    yaniv, slam, keep = action_ids(s[R_HAND_SIZE])
    me = s[CURRENT]
    g1, gm = _gammas(s, params, me)
    base = HAND + me * HAND_ROOM
    n = s[HAND_LEN + me]
    hand = buf[_KEPT_AT : _KEPT_AT + HAND_ROOM]
    pending = s[PENDING]
    k = 0
    for i in range(n):
        hand[i] = s[base + i]
    with_card = _hand_value(s, hand, n, g1, gm)
    for i in range(n):
        if s[base + i] != pending:
            hand[k] = s[base + i]
            k += 1
    without = _hand_value(s, hand, k, g1, gm)
    return slam if without <= with_card else keep


# ------------------------------------------------------------------------------------------------
# The heuristic: scoring every discard and draw
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def _score_cost(s, score, t, last, scale):
    """``HeuristicAgent._score_costs``' entry for hand total ``min(t, last)``."""
    if t > last:
        t = last
    new = score + t
    after = new
    kind = s[R_RESET_KIND]
    if kind != 2:
        for i in range(s[R_RESETS]):
            if s[R_RESET_AT + i] == new:
                if kind == 0:
                    after = new // 2
                else:
                    after = new - s[R_RESET_SUBTRACT]
                    if after < 0:
                        after = 0
                break
    if after > s[R_LIMIT]:
        return scale * OVER_LIMIT_COST
    return scale * (after - new)


@njit(cache=True)
def _deck_score_term(s, score, total, last, scale, buf, n_unseen):
    """``HeuristicAgent._score_term`` of a deck draw keeping ``total`` points: the mean cost over the
    unseen cards (their count per value at ``buf[_COUNTS_AT:]``), summed by value as Python does."""
    if n_unseen == 0:
        return 0.0
    acc = 0.0
    for v in range(MAX_POINTS + 1):
        n = buf[_COUNTS_AT + v]
        if n:
            acc += n * _score_cost(s, score, total + v, last, scale)
    return acc / n_unseen


@njit(cache=True)
def _score_scale(s, params, me):
    """``score_weight * round_end_chance``, or 0.0 when ``_score_costs`` is None (no weight, or no
    total with a cost)."""
    if not params[P_SCORE_WEIGHT] or s[R_GAME_END] == ONE_ROUND:  # one round: no stakes (Rules.score_stakes)
        return 0.0
    last = (s[R_HAND_SIZE] + 1) * 10
    score = s[SCORE + me]
    any_cost = False
    for t in range(last + 1):
        if _score_cost(s, score, t, last, 1.0) != 0.0:
            any_cost = True
            break
    if not any_cost:
        return 0.0
    stay = 1.0
    for q in range(s[PLAYERS]):
        if q != me and s[ALIVE + q]:
            size = s[HAND_LEN + q]
            stay *= _END_STAY[size] if size < len(_END_STAY) else _NO_END_STAY
    return params[P_SCORE_WEIGHT] * (1.0 - stay)


@njit(cache=True)
def _feed_gain(s, me, slots, known, n_known, mean, group):
    """``HeuristicAgent._feed``: the most the next player gains by drawing from this discard
    instead of the deck; ``known[:n_known]`` its known cards in set order."""
    kind, size = make_group(s, me, slots, group)
    # the drawable cards (engine.set_top), as positions in the group
    lo_at = 0
    hi_at = size - 1
    every = kind == KIND_SINGLE
    inner_jokers = False
    if kind == KIND_SET:
        how = s[R_DRAW_SET]
        if how == 0:
            every = True
        elif size == 2 and how == 2:
            lo_at = 1
    elif kind == KIND_RUN:
        inner_jokers = s[R_DRAW_RUN] == 1
    gain = 0.0
    for i in range(size):
        if not (every or i == lo_at or i == hi_at or (inner_jokers and group[i] >= NUM_STANDARD)):
            continue
        c = group[i]
        g = mean - CARD_POINTS[c]
        if c < NUM_STANDARD:
            r = CARD_RANK[c]
            su = CARD_SUIT[c]
            for j in range(n_known):
                k = known[j]
                if k >= NUM_STANDARD or CARD_RANK[k] == r or (CARD_SUIT[k] == su and abs(CARD_RANK[k] - r) <= 2):
                    g += CARD_POINTS[c] + CARD_POINTS[k]
                    break
        if g > gain:
            gain = g
    return gain


@njit(cache=True, inline="always")
def _lowest_bit(x):
    """The index of the lowest set bit of ``x`` (not 0)."""
    low = np.uint64(x & -x)
    return _BIT_INDEX[np.int64((low * np.uint64(_DE_BRUIJN)) >> np.uint64(58))]


@njit(cache=True)
def _deck_value(s, kept, nk, total, high, relief, suits, ranks, jokers, buf, n_unseen, naturals, n_naturals, g1, gm):
    """``HeuristicAgent._deck_value``: the mean of V(kept + c) over the unseen cards c (``naturals``:
    the bit mask of the unseen natural cards, ``n_naturals`` how many)."""
    if n_unseen == 0:
        return total - relief + 6.0
    acc = 0.0
    for v in range(MAX_POINTS + 1):
        n = buf[_COUNTS_AT + v]
        if n:
            single = g1 * v
            acc += n * (v - (single if single > relief else relief))
    # the unseen naturals that make a set or run with the kept cards, in id order: with a kept
    # joker any of them may, without one only those next to a kept natural (_NEAR)
    candidates = naturals
    if not jokers:
        near = 0
        for i in range(nk):
            near |= _NEAR[kept[i]]
        candidates &= near
    while candidates:
        c = _lowest_bit(candidates)
        candidates &= candidates - 1
        r = CARD_RANK[c]
        pts = combo_points(s, r, _suit_mask(suits, CARD_SUIT[c]), _rank_count(ranks, r), jokers)
        if pts:
            single = g1 * CARD_POINTS[c]
            if relief > single:
                single = relief
            combo_v = gm * pts
            if combo_v > single:
                acc += single - combo_v
    if n_unseen > n_naturals:
        # a joker may combine with anything: relief(kept + [joker]) in full (the same for either joker)
        single = g1 * 0
        best = single if single > relief else relief
        joker_value = best - _relief_with_joker(s, kept, nk, high, suits, ranks, jokers, g1, gm)
        for _ in range(n_unseen - n_naturals):
            acc += joker_value
    return total + acc / n_unseen


@njit(cache=True)
def _rank_core(s, params, buf, out_actions, out_scores, store):
    """Score every discard-and-draw action of the player to move (``HeuristicAgent.rank_moves``).

    With ``store``, writes them into ``out_actions``/``out_scores`` in legal order and returns
    (count, -1); otherwise returns (count, the best action: lowest score, first in legal order).
    """
    me = s[CURRENT]
    g1, gm = _gammas(s, params, me)
    base = HAND + me * HAND_ROOM
    hand_len = s[HAND_LEN + me]
    n_unseen, unseen_points, naturals, n_naturals = _unseen(s, me, buf)
    mean = unseen_points / n_unseen if n_unseen else 6.0
    nxt = next_seat(s, me)
    size_next = s[HAND_LEN + nxt]
    feed_w = params[P_FEED + size_next] if size_next < params[P_FEED_LEN] else 0.0
    known = buf[_KNOWN_AT : _KNOWN_AT + 16]
    n_known = known_in_set_order(s, nxt, buf[_SET_AT : _SET_AT + 64], known) if feed_w else 0
    late = _own_turns(s) - params[P_PATIENCE]
    pile_cost = params[P_IMPATIENCE] * 10 * (late if late > 0 else 0.0)
    scale = _score_scale(s, params, me)
    score = s[SCORE + me]
    last = (s[R_HAND_SIZE] + 1) * 10
    first_src = 0 if s[DECK_LEN] > 0 else 1
    n_draw = s[DRAWABLE_LEN]
    kept = buf[_KEPT_AT : _KEPT_AT + HAND_ROOM]
    group = buf[_GROUP_AT : _GROUP_AT + GROUP_ROOM]
    count = legal_discards(s, me, buf[_DISCARDS_AT:])
    k = 0
    best = -1
    best_value = 0.0
    for i in range(count):
        slots = buf[_DISCARDS_AT + i]
        nk = 0
        for j in range(hand_len):
            if not slots >> j & 1:
                kept[nk] = s[base + j]
                nk += 1
        total, high, suits, ranks, jokers = _hand_shape(kept, nk)
        combo = _best_combo(s, kept, nk, suits, ranks, jokers) if nk >= 2 else 0
        relief = _relief(nk, high, combo, g1, gm)
        feed = feed_w * _feed_gain(s, me, slots, known, n_known, mean, group) if feed_w else 0.0
        at = (slots - 1) * DRAW_SOURCES
        for src in range(first_src, n_draw + 1):
            if src == 0:
                value = _deck_value(s, kept, nk, total, high, relief, suits, ranks, jokers, buf, n_unseen, naturals, n_naturals, g1, gm)
                if scale != 0.0:
                    value += _deck_score_term(s, score, total, last, scale, buf, n_unseen)
            else:
                card = s[DRAWABLE + src - 1]
                p = CARD_POINTS[card]
                # relief(kept + [card]): _Kept.relief_with
                if card >= NUM_STANDARD:
                    with_card = _relief_with_joker(s, kept, nk, high, suits, ranks, jokers, g1, gm)
                else:
                    with_card = g1 * p
                    if relief >= with_card:
                        with_card = relief
                    r = CARD_RANK[card]
                    pts = combo_points(s, r, _suit_mask(suits, CARD_SUIT[card]), _rank_count(ranks, r), jokers)
                    if pts:
                        combo_v = gm * pts
                        if combo_v > with_card:
                            with_card = combo_v
                value = total + p - with_card + pile_cost
                if s[THROWN + card] >> me & 1:
                    value += params[P_RECYCLE_COST]
                if scale != 0.0:
                    value += _score_cost(s, score, total + p, last, scale)
            value = value + feed
            action = at + src
            if store:
                out_actions[k] = action
                out_scores[k] = value
            elif best < 0 or value < best_value:
                best = action
                best_value = value
            k += 1
    return k, best


@njit(cache=True)
def heuristic_rank(s, params, out_actions, out_scores, buf):
    """``HeuristicAgent.rank_moves``: every discard-and-draw action with its score, best first (ties
    in legal order); returns the count (0 when the player to move has no discard to make)."""
    if s[PHASE] != PHASE_PLAY:
        return 0
    count, _ = _rank_core(s, params, buf, out_actions, out_scores, True)
    for i in range(1, count):  # insertion sort: stable, so ties keep legal order
        a = out_actions[i]
        v = out_scores[i]
        j = i - 1
        while j >= 0 and out_scores[j] > v:
            out_actions[j + 1] = out_actions[j]
            out_scores[j + 1] = out_scores[j]
            j -= 1
        out_actions[j + 1] = a
        out_scores[j + 1] = v
    return count


@njit(cache=True)
def heuristic_action(s, params, buf):
    """``HeuristicAgent.act``: the slamdown choice, Yaniv when ``heuristic_should_call``, else the
    best-ranked discard and draw."""
    phase = s[PHASE]
    if phase == PHASE_SLAMDOWN:
        return heuristic_slamdown(s, params, buf)
    if phase != PHASE_PLAY:
        return -1
    if heuristic_should_call(s, params, buf):
        yaniv, slam, keep = action_ids(s[R_HAND_SIZE])
        return yaniv
    no_actions = np.empty(0, dtype=np.int64)
    no_scores = np.empty(0, dtype=np.float64)
    _, best = _rank_core(s, params, buf, no_actions, no_scores, False)
    return best


__all__ = [
    "ACTION_ROOM", "HEURISTIC_DEFAULTS", "MAX_FEED_WEIGHTS", "PARAMS_SIZE", "RUN_POINTS", "SCRATCH", "assaf_risk",
    "combo_points", "greedy_action", "heuristic_action", "heuristic_params", "heuristic_rank",
    "heuristic_should_call", "heuristic_slamdown", "known_in_set_order", "random_action", "unseen_cards",
]
