"""The compiled rules: deal, legal discards, the action mask, one transition, scoring. numba kernels.

Every kernel works on one game: ``s`` is its row (``yaniv_env.core.layout``) and ``r`` a
one-element ``uint64`` array, the game's own random generator. The batched loops
(``yaniv_env.core.batch``) call them once per game. ``yaniv.game.Game`` is the reference: each
kernel here is a port of the method it names, and the differential tests
(``tests/test_core_engine.py``) play both side by side and compare every field after every move.

Moves are action ids of ``yaniv_env.encoding.ActionTable`` (hand slots and a draw source), so
the core plays every rule set the environments do (``layout.check_rules``).

Contract:

* ``new_game(s, r, players, single_round, starter)`` deals a fresh game into a row whose rule
  fields are set (``layout.write_rules``); the caller has checked the table (``Game`` does).
* ``legal_discards(s, seat, out)`` writes the slot masks of the legal discards of ``seat``'s hand
  into ``out``, in the order of ``yaniv.melds.legal_discards`` (singles, sets, runs), and returns
  how many. Bots break ties by that order, as the Python bots do by ``view.legal_moves``.
* ``legal_actions(s, out, buf)`` writes the legal action ids of the player to move in the order of
  ``Game.legal_moves`` (Yaniv, then each discard with each draw source) and returns how many;
  ``action_mask(s, mask, buf)`` sets the same ids to 1 in a zeroed int8 mask.
* ``apply_action(s, r, action, buf)`` plays an action id for the player to move; it returns
  ``TURN_ON`` (the game goes on in the same round), ``ROUND_OVER`` (a round ended and the next is
  dealt: its result is in ``RES_*``), ``GAME_OVER``, or ``ILLEGAL`` (the row is untouched).

Randomness: each game draws from its own SplitMix64 stream (``seed_rng``), so a game's deal and
reshuffles depend on its seed alone, never on the other games of the batch or the bots. The
Python engine draws from numpy's PCG64, so the two agree on everything but the order a shuffle
gives; the differential tests compare each shuffle's cards and then adopt the core's order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from yaniv_env.core.layout import (
    ALIVE, CARD_KEY, CARD_POINTS, CARD_RANK, CARD_SUIT, CURRENT, DEAD, DECK, DECK_LEN, DECK_SOURCE, DRAWABLE,
    DRAWABLE_LEN, ELIMINATION, EPOCH, FIRST_DISCARDER, GROUP_ROOM, HAND, HAND_LEN, HAND_ROOM, KIND_RUN, KIND_SET,
    KIND_SINGLE, KNOWN, LAST_CARDS, LAST_DREW, LAST_HIGH, LAST_LEN, LAST_SLAMMED, MAX_SEATS, ONE_ROUND, OUT_ROUND,
    PENDING, PHASE, PHASE_OVER, PHASE_PLAY, PHASE_SLAMDOWN, PLAYERS, POOLS, R_ASSAF_EQUAL, R_DRAW_RUN, R_DRAW_SET,
    R_GAME_END, R_HAND_SIZE, R_JOKERS, R_JOKERS_IN_SETS, R_LIMIT, R_MAX_SET, R_MAX_TURNS, R_MIN_SET_JOKERS,
    R_PENALTY, R_PENALTY_KIND, R_PER_ASSAFER, R_RESET_AT, R_RESET_KIND, R_RESET_SUBTRACT, R_RESETS, R_SLAMDOWN,
    R_STARTER_RULE, R_THRESHOLD, RES_ASSAFERS, RES_CALLER, RES_DEALT, RES_ELIMINATED, RES_POINTS, RES_RESETS,
    RES_TOTALS, RES_TURNS, RES_WINNERS, ROUND, ROUNDS, SCORE, SINGLE_ROUND, STARTER, THROWN, TOP, TOP_KIND, TOP_LEN,
    TOP_PLAYER, TOTAL, TURN, WINNERS,
)

NUM_STANDARD = 52
DRAW_SOURCES = 6
TURN_ON, ROUND_OVER, GAME_OVER, ILLEGAL = 0, 1, 2, -1


def _combination_masks() -> np.ndarray:
    """``COMBOS[n, i]``: the i-th subset (a bit mask over positions 0..n-1) of n items, by size then
    in ``itertools.combinations`` order: the order of ``yaniv.melds._SUBSETS[n, 1]``."""
    from itertools import combinations

    table = np.zeros((8, 128), dtype=np.int64)
    for n in range(8):
        i = 0
        for size in range(1, n + 1):
            for combo in combinations(range(n), size):
                table[n, i] = sum(1 << k for k in combo)
                i += 1
    return table


COMBOS = _combination_masks()


# ------------------------------------------------------------------------------------------------
# Random numbers: SplitMix64, one stream per game
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def next_u64(r):
    z = r[0] + np.uint64(0x9E3779B97F4A7C15)
    r[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def below(r, n):
    """A uniform integer in 0..n-1 (53 random bits modulo n: a bias under 2^-46 for n <= 128)."""
    return np.int64(next_u64(r) >> np.uint64(11)) % n


@njit(cache=True)
def uniform(r):
    """A uniform float in [0, 1)."""
    return np.float64(next_u64(r) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def seed_rng(seed: int) -> np.uint64:
    """The generator state for a seed (any int; numpy's SeedSequence mixes it)."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]


# ------------------------------------------------------------------------------------------------
# Small helpers
# ------------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True, inline="always")
def spread(positions, slots):
    """The slots named by ``positions`` (a bit mask over the set bits of ``slots``, lowest first)."""
    out = 0
    k = 0
    rest = slots
    while rest:
        low = rest & -rest
        if positions >> k & 1:
            out |= low
        rest ^= low
        k += 1
    return out


@njit(cache=True)
def next_seat(s, seat):
    n = s[PLAYERS]
    seat = (seat + 1) % n
    while not s[ALIVE + seat]:
        seat = (seat + 1) % n
    return seat


@njit(cache=True)
def alive_count(s):
    k = 0
    for q in range(s[PLAYERS]):
        k += s[ALIVE + q]
    return k


@njit(cache=True)
def may_call(s, total):
    """``Rules.may_call_yaniv``."""
    return total <= s[R_THRESHOLD]


@njit(cache=True)
def jokers_may_set(s, size):
    """``yaniv.melds.jokers_may_set``."""
    return s[R_JOKERS_IN_SETS] == 1 and s[R_MIN_SET_JOKERS] <= size <= s[R_MAX_SET]


@njit(cache=True)
def insert_card(s, seat, card):
    """Put ``card`` into ``seat``'s hand at its place in hand order."""
    base = HAND + seat * HAND_ROOM
    n = s[HAND_LEN + seat]
    key = CARD_KEY[card]
    i = n
    while i > 0 and CARD_KEY[s[base + i - 1]] > key:
        s[base + i] = s[base + i - 1]
        i -= 1
    s[base + i] = card
    s[HAND_LEN + seat] = n + 1


# ------------------------------------------------------------------------------------------------
# Legal discards (yaniv.melds.legal_discards) and groups (classify, drawable_cards, slamdowns)
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def legal_discards(s, seat, out):
    """The legal discards of ``seat``'s hand as slot masks, in ``yaniv.melds.legal_discards`` order."""
    base = HAND + seat * HAND_ROOM
    n = s[HAND_LEN + seat]
    k = 0
    for i in range(n):
        out[k] = 1 << i
        k += 1
    if n < 2:
        return k
    jokers = 0  # slot mask of the jokers
    nj = 0
    seen_ranks = 0
    paired = False
    suit_slots0 = 0
    suit_slots1 = 0
    suit_slots2 = 0
    suit_slots3 = 0
    for i in range(n):
        c = s[base + i]
        if c >= NUM_STANDARD:
            jokers |= 1 << i
            nj += 1
            continue
        bit = 1 << CARD_RANK[c]
        if seen_ranks & bit:
            paired = True
        seen_ranks |= bit
        su = CARD_SUIT[c]
        if su == 0:
            suit_slots0 |= 1 << i
        elif su == 1:
            suit_slots1 |= 1 << i
        elif su == 2:
            suit_slots2 |= 1 << i
        else:
            suit_slots3 |= 1 << i
    set_jokers = jokers if s[R_JOKERS_IN_SETS] == 1 else 0
    nsj = nj if set_jokers else 0
    j_low = jokers & -jokers
    j_high = jokers ^ j_low
    lo_size = s[R_MIN_SET_JOKERS]
    hi_size = s[R_MAX_SET]
    if paired or set_jokers:
        done = 0
        for i in range(n):  # rank groups in order of first appearance in the hand
            c = s[base + i]
            if c >= NUM_STANDARD:
                continue
            rank = CARD_RANK[c]
            if done >> rank & 1:
                continue
            done |= 1 << rank
            slots = 0
            for t in range(i, n):
                d = s[base + t]
                if d < NUM_STANDARD and CARD_RANK[d] == rank:
                    slots |= 1 << t
            m = popcount(slots)
            if m < 2 and not set_jokers:
                continue
            for idx in range(2**m - 1):
                chosen = spread(COMBOS[m, idx], slots)
                size0 = popcount(chosen)
                for j in range(nsj + 1):
                    size = size0 + j
                    if j == 0:
                        if 2 <= size <= 4:
                            out[k] = chosen
                            k += 1
                    elif lo_size <= size <= hi_size:
                        if j == 1:
                            out[k] = chosen | j_low
                            k += 1
                            if nj == 2:
                                out[k] = chosen | j_high
                                k += 1
                        else:
                            out[k] = chosen | jokers
                            k += 1
    if nj == 2:
        out[k] = jokers
        k += 1
    need = 3 - nj
    triple_sets = jokers_may_set(s, 3)
    for su in range(4):
        if su == 0:
            slots = suit_slots0
        elif su == 1:
            slots = suit_slots1
        elif su == 2:
            slots = suit_slots2
        else:
            slots = suit_slots3
        m = popcount(slots)
        if m == 0 or m < need or m + nj < 3:
            continue
        for idx in range(2**m - 1):
            chosen = spread(COMBOS[m, idx], slots)
            count = popcount(chosen)
            low_slot = chosen & -chosen
            high_slot = chosen
            while high_slot & (high_slot - 1):
                high_slot &= high_slot - 1
            lo = CARD_RANK[s[base + _bit_index(low_slot)]]
            hi = CARD_RANK[s[base + _bit_index(high_slot)]]
            gaps = hi - lo + 1 - count
            start = gaps if gaps > 3 - count else 3 - count
            for j in range(start, nj + 1):
                if triple_sets and count == 1 and j == 2:
                    continue
                extra = j - gaps
                up = extra if extra < 12 - hi else 12 - hi
                if extra - up > lo:
                    continue  # no room below the ace
                if j == 0:
                    out[k] = chosen
                    k += 1
                elif j == 1:
                    out[k] = chosen | j_low
                    k += 1
                    if nj == 2:
                        out[k] = chosen | j_high
                        k += 1
                else:
                    out[k] = chosen | jokers
                    k += 1
    return k


@njit(cache=True, inline="always")
def _bit_index(bit):
    i = 0
    while bit > 1:
        bit >>= 1
        i += 1
    return i


@njit(cache=True)
def make_group(s, seat, slots, group):
    """The discard of ``seat``'s hand slots ``slots`` in canonical order (``yaniv.melds.classify``):
    writes its cards into ``group`` and returns (kind, size). The discard must be legal."""
    base = HAND + seat * HAND_ROOM
    n = 0
    naturals = 0
    nj = 0
    first_rank = -1
    one_rank = True
    for i in range(s[HAND_LEN + seat]):
        if slots >> i & 1:
            c = s[base + i]
            group[n] = c  # hand order: naturals of one rank by suit, of one suit by rank; jokers first
            n += 1
            if c >= NUM_STANDARD:
                nj += 1
            else:
                naturals += 1
                if first_rank < 0:
                    first_rank = CARD_RANK[c]
                elif CARD_RANK[c] != first_rank:
                    one_rank = False
    if n == 1:
        return KIND_SINGLE, 1
    # hand order puts the jokers first; a group lies naturals first, jokers last
    if nj:
        for i in range(n - nj):
            group[i] = group[i + nj]
        j = 0
        for i in range(s[HAND_LEN + seat]):
            if slots >> i & 1 and s[base + i] >= NUM_STANDARD:
                group[n - nj + j] = s[base + i]
                j += 1
    if naturals == 0 or (one_rank and (nj == 0 or jokers_may_set(s, n))):
        return KIND_SET, n
    # a run: jokers fill the gaps, then extend it upwards, then downwards
    lo = CARD_RANK[group[0]]
    hi = CARD_RANK[group[naturals - 1]]
    gaps = hi - lo + 1 - naturals
    extra = nj - gaps
    up = extra if extra < 12 - hi else 12 - hi
    down = extra - up
    jokers0 = group[naturals] if nj > 0 else -1
    jokers1 = group[naturals + 1] if nj > 1 else -1
    nat = np.empty(GROUP_ROOM, dtype=np.int64)
    for i in range(naturals):
        nat[i] = group[i]
    at = 0
    used = 0
    ni = 0
    for rank in range(lo - down, hi + up + 1):
        if ni < naturals and CARD_RANK[nat[ni]] == rank:
            group[at] = nat[ni]
            ni += 1
        else:
            group[at] = jokers0 if used == 0 else jokers1
            used += 1
        at += 1
    return KIND_RUN, n


@njit(cache=True)
def set_top(s, group, size, kind, player):
    """Lay ``group`` on the pile as its top group, with its drawable cards (``drawable_cards``)."""
    for i in range(size):
        s[TOP + i] = group[i]
    s[TOP_LEN] = size
    s[TOP_KIND] = kind
    s[TOP_PLAYER] = player
    k = 0
    if kind == KIND_SINGLE:
        s[DRAWABLE] = group[0]
        k = 1
    elif kind == KIND_SET:
        how = s[R_DRAW_SET]
        if how == 0:  # any
            for i in range(size):
                s[DRAWABLE + i] = group[i]
            k = size
        elif size == 2 and how == 2:  # ends_or_top_of_pair: a pair's top card
            s[DRAWABLE] = group[1]
            k = 1
        else:
            s[DRAWABLE] = group[0]
            s[DRAWABLE + 1] = group[size - 1]
            k = 2
    else:
        s[DRAWABLE] = group[0]
        k = 1
        if s[R_DRAW_RUN] == 1:  # ends_and_jokers
            for i in range(1, size - 1):
                if group[i] >= NUM_STANDARD:
                    s[DRAWABLE + k] = group[i]
                    k += 1
        s[DRAWABLE + k] = group[size - 1]
        k += 1
    s[DRAWABLE_LEN] = k


@njit(cache=True)
def slamdown_extends(s, card):
    """``yaniv.melds.slamdown_extends`` on the top group."""
    if card >= NUM_STANDARD:
        return False
    size = s[TOP_LEN]
    if s[TOP_KIND] == KIND_RUN:
        for i in range(size):
            c = s[TOP + i]
            if c < NUM_STANDARD:
                lo = CARD_RANK[c] - i
                hi = lo + size - 1
                r = CARD_RANK[card]
                return CARD_SUIT[card] == CARD_SUIT[c] and (r == lo - 1 or r == hi + 1)
        return False
    found = False
    for i in range(size):
        c = s[TOP + i]
        if c < NUM_STANDARD:
            if CARD_RANK[c] != CARD_RANK[card]:
                return False
            found = True
    return found


@njit(cache=True)
def add_slamdown(s, card, group):
    """``yaniv.melds.add_slamdown``: the top group with ``card`` at its place (drawables anew)."""
    size = s[TOP_LEN]
    if s[TOP_KIND] == KIND_RUN:
        lo = 0
        for i in range(size):
            c = s[TOP + i]
            if c < NUM_STANDARD:
                lo = CARD_RANK[c] - i
                break
        if CARD_RANK[card] == lo - 1:
            group[0] = card
            for i in range(size):
                group[i + 1] = s[TOP + i]
        else:
            for i in range(size):
                group[i] = s[TOP + i]
            group[size] = card
        set_top(s, group, size + 1, KIND_RUN, s[TOP_PLAYER])
        return
    k = 0  # naturals by id (one rank: by suit), the new card among them, then the jokers as they lay
    placed = False
    for i in range(size):
        c = s[TOP + i]
        if c >= NUM_STANDARD:
            continue
        if not placed and card < c:
            group[k] = card
            k += 1
            placed = True
        group[k] = c
        k += 1
    if not placed:
        group[k] = card
        k += 1
    for i in range(size):
        c = s[TOP + i]
        if c >= NUM_STANDARD:
            group[k] = c
            k += 1
    set_top(s, group, size + 1, KIND_SET, s[TOP_PLAYER])


# ------------------------------------------------------------------------------------------------
# Legal actions and the mask
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def action_ids(hand_size):
    """(Yaniv, slamdown, keep) action ids of ``yaniv_env.encoding.ActionTable(hand_size)``."""
    yaniv = (2**hand_size - 1) * DRAW_SOURCES
    return yaniv, yaniv + 1, yaniv + 2


@njit(cache=True)
def legal_actions(s, out, buf):
    """The legal action ids of the player to move, in ``Game.legal_moves`` order; their count."""
    yaniv, slam, keep = action_ids(s[R_HAND_SIZE])
    phase = s[PHASE]
    if phase == PHASE_SLAMDOWN:
        out[0] = slam
        out[1] = keep
        return 2
    if phase != PHASE_PLAY:
        return 0
    p = s[CURRENT]
    k = 0
    if may_call(s, s[TOTAL + p]):
        out[0] = yaniv
        k = 1
    first = 0 if s[DECK_LEN] > 0 else 1
    last = s[DRAWABLE_LEN]
    count = legal_discards(s, p, buf)
    for i in range(count):
        at = (buf[i] - 1) * DRAW_SOURCES
        for src in range(first, last + 1):
            out[k] = at + src
            k += 1
    return k


@njit(cache=True)
def action_mask(s, mask, buf):
    """Set ``mask[a] = 1`` for every legal action id ``a`` of the player to move (mask zeroed first)."""
    yaniv, slam, keep = action_ids(s[R_HAND_SIZE])
    mask[:] = 0
    phase = s[PHASE]
    if phase == PHASE_SLAMDOWN:
        mask[slam] = 1
        mask[keep] = 1
        return
    if phase != PHASE_PLAY:
        return
    p = s[CURRENT]
    if may_call(s, s[TOTAL + p]):
        mask[yaniv] = 1
    first = 0 if s[DECK_LEN] > 0 else 1
    last = s[DRAWABLE_LEN]
    count = legal_discards(s, p, buf)
    for i in range(count):
        at = (buf[i] - 1) * DRAW_SOURCES
        for src in range(first, last + 1):
            mask[at + src] = 1


# ------------------------------------------------------------------------------------------------
# Dealing
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def deal(s, r, starter):
    """``Game._deal`` then ``Game._open_round``: a shuffled full deck, hands from its end, one card face up."""
    size = 52 + s[R_JOKERS]
    for i in range(size):
        s[DECK + i] = i
    for i in range(size - 1, 0, -1):  # Fisher-Yates
        j = below(r, i + 1)
        t = s[DECK + i]
        s[DECK + i] = s[DECK + j]
        s[DECK + j] = t
    top = size
    hand_size = s[R_HAND_SIZE]
    for q in range(MAX_SEATS):
        s[HAND_LEN + q] = 0
        s[TOTAL + q] = 0
    for q in range(s[PLAYERS]):
        if not s[ALIVE + q]:
            continue
        total = 0
        for i in range(top - hand_size, top):
            insert_card(s, q, s[DECK + i])
            total += CARD_POINTS[s[DECK + i]]
        s[TOTAL + q] = total
        top -= hand_size
    face_up = s[DECK + top - 1]
    s[DECK_LEN] = top - 1
    s[ROUND] += 1
    for c in range(54):
        s[DEAD + c] = 0
        s[KNOWN + c] = -1
        s[THROWN + c] = 0
        s[EPOCH + c] = 0
    s[TOP] = face_up
    s[TOP_LEN] = 1
    s[TOP_KIND] = KIND_SINGLE
    s[TOP_PLAYER] = -1
    s[DRAWABLE] = face_up
    s[DRAWABLE_LEN] = 1
    for q in range(MAX_SEATS):
        s[LAST_HIGH + q] = -1
        s[LAST_DREW + q] = DECK_SOURCE
        s[LAST_SLAMMED + q] = 0
        s[LAST_LEN + q] = 0
    s[POOLS] = 0
    s[FIRST_DISCARDER] = -1
    s[STARTER] = starter
    s[CURRENT] = starter
    s[PHASE] = PHASE_PLAY
    s[PENDING] = -1
    s[TURN] = 0


@njit(cache=True)
def new_game(s, r, players, single_round, starter):
    """A fresh game at zero scores (``Game(players, rules, single_round=...)``); rules already in ``s``."""
    s[PLAYERS] = players
    s[SINGLE_ROUND] = single_round
    for q in range(MAX_SEATS):
        s[SCORE + q] = 0
        s[ALIVE + q] = 1 if q < players else 0
        s[OUT_ROUND + q] = -1
    s[WINNERS] = 0
    s[ROUNDS] = 0
    s[ROUND] = 0
    s[RES_CALLER] = -1
    deal(s, r, starter)


# ------------------------------------------------------------------------------------------------
# The transition
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def apply_action(s, r, action, buf):
    """Play ``action`` for the player to move (see the module docstring for what it returns).

    ``buf``: scratch of at least ``layout.MAX_DISCARDS`` int64 entries.
    """
    phase = s[PHASE]
    if phase == PHASE_OVER:
        return ILLEGAL
    yaniv, slam, keep = action_ids(s[R_HAND_SIZE])
    if phase == PHASE_SLAMDOWN:
        if action == slam:
            return _slamdown(s, r, buf)
        if action == keep:
            return _end_turn(s, r)
        return ILLEGAL
    p = s[CURRENT]
    if action == yaniv:
        if not may_call(s, s[TOTAL + p]):
            return ILLEGAL
        return _showdown(s, r)
    if action < 0 or action >= yaniv:
        return ILLEGAL
    slots = action // DRAW_SOURCES + 1
    src = action % DRAW_SOURCES
    if src == 0:
        if s[DECK_LEN] == 0:
            return ILLEGAL
    elif src > s[DRAWABLE_LEN]:
        return ILLEGAL
    count = legal_discards(s, p, buf)
    legal = False
    for i in range(count):
        if buf[i] == slots:
            legal = True
            break
    if not legal:
        return ILLEGAL
    return _discard(s, r, p, slots, src, buf)


@njit(cache=True)
def _discard(s, r, p, slots, src, buf):
    group = buf[:GROUP_ROOM]
    kind, size = make_group(s, p, slots, group)
    base = HAND + p * HAND_ROOM
    # the hand less the discard
    n = s[HAND_LEN + p]
    shed = 0
    k = 0
    for i in range(n):
        c = s[base + i]
        if slots >> i & 1:
            shed += CARD_POINTS[c]
            if s[KNOWN + c] == p:
                s[KNOWN + c] = -1
            s[THROWN + c] |= 1 << p
        else:
            s[base + k] = c
            k += 1
    s[HAND_LEN + p] = k
    if src == 0:
        s[DECK_LEN] -= 1
        card = s[DECK + s[DECK_LEN]]
        drew = DECK_SOURCE
    else:
        card = s[DRAWABLE + src - 1]
        s[KNOWN + card] = p
        drew = card
    insert_card(s, p, card)
    s[TOTAL + p] += CARD_POINTS[card] - shed
    # what is left of the previous group is dead
    for i in range(s[TOP_LEN]):
        c = s[TOP + i]
        if c != drew:
            s[DEAD + c] = 1
    set_top(s, group, size, kind, p)
    # the round's record
    high = 0
    for i in range(size):
        if CARD_POINTS[group[i]] > high:
            high = CARD_POINTS[group[i]]
        s[LAST_CARDS + p * GROUP_ROOM + i] = group[i]
    s[LAST_HIGH + p] = high
    s[LAST_DREW + p] = drew
    s[LAST_SLAMMED + p] = 0
    s[LAST_LEN + p] = size
    if s[FIRST_DISCARDER] < 0:
        s[FIRST_DISCARDER] = p
    if s[DECK_LEN] == 0:
        _reshuffle(s, r)
    if src == 0 and s[R_SLAMDOWN] == 1 and s[HAND_LEN + p] > 1 and slamdown_extends(s, card):
        s[PHASE] = PHASE_SLAMDOWN
        s[PENDING] = card
        return TURN_ON
    return _end_turn(s, r)


@njit(cache=True)
def _slamdown(s, r, buf):
    p = s[CURRENT]
    card = s[PENDING]
    base = HAND + p * HAND_ROOM
    n = s[HAND_LEN + p]
    k = 0
    for i in range(n):
        if s[base + i] != card:
            s[base + k] = s[base + i]
            k += 1
    s[HAND_LEN + p] = k
    s[TOTAL + p] -= CARD_POINTS[card]
    s[THROWN + card] |= 1 << p
    s[LAST_SLAMMED + p] = 1
    add_slamdown(s, card, buf[:GROUP_ROOM])
    return _end_turn(s, r)


@njit(cache=True)
def _reshuffle(s, r):
    """``Game._reshuffle``: the dead cards, by id, shuffled into a new deck."""
    k = 0
    for c in range(54):
        if s[DEAD + c]:
            s[DECK + k] = c
            k += 1
    if k == 0:
        return
    for i in range(k - 1, 0, -1):
        j = below(r, i + 1)
        t = s[DECK + i]
        s[DECK + i] = s[DECK + j]
        s[DECK + j] = t
    s[DECK_LEN] = k
    s[POOLS] += 1
    for i in range(k):
        c = s[DECK + i]
        s[DEAD + c] = 0
        s[EPOCH + c] = s[POOLS]


@njit(cache=True)
def _end_turn(s, r):
    s[PHASE] = PHASE_PLAY
    s[PENDING] = -1
    s[TURN] += 1
    cap = s[R_MAX_TURNS]
    if cap >= 0 and s[TURN] >= cap:
        return _finish_round(s, r, -1, 0, 0, True)
    s[CURRENT] = next_seat(s, s[CURRENT])
    return TURN_ON


@njit(cache=True)
def _showdown(s, r):
    """``Game._showdown``: who Assafs the caller, and the round's points (into RES_POINTS)."""
    n = s[PLAYERS]
    caller = s[CURRENT]
    mine = s[TOTAL + caller]
    assafers = 0
    low = 1 << 30
    equal = s[R_ASSAF_EQUAL] == 1
    for q in range(n):
        if q == caller or not s[ALIVE + q]:
            continue
        t = s[TOTAL + q]
        if t < mine or (equal and t == mine):
            assafers |= 1 << q
            if t < low:
                low = t
    for q in range(MAX_SEATS):
        s[RES_POINTS + q] = s[TOTAL + q] if (q < n and s[ALIVE + q]) else 0
    if assafers == 0:
        winners = 1 << caller
        s[RES_POINTS + caller] = 0
    else:
        winners = 0
        for q in range(n):
            if assafers >> q & 1 and s[TOTAL + q] == low:
                winners |= 1 << q
                s[RES_POINTS + q] = 0
        kind = s[R_PENALTY_KIND]
        if kind == 0:  # hand_plus
            s[RES_POINTS + caller] = mine + s[R_PENALTY]
        elif kind == 1:  # per_assafer
            count = popcount(assafers)
            s[RES_POINTS + caller] = mine + (s[R_PENALTY] if count == 1 else s[R_PER_ASSAFER] * count)
        else:  # flat: the caller takes the penalty alone
            for q in range(MAX_SEATS):
                s[RES_POINTS + q] = 0
            s[RES_POINTS + caller] = s[R_PENALTY]
    return _finish_round(s, r, caller, winners, assafers, False)


@njit(cache=True)
def reset_score(s, score):
    """``Rules.reset_score``: the score after a reset, or -1 when none applies."""
    kind = s[R_RESET_KIND]
    if kind == 2:
        return -1
    for i in range(s[R_RESETS]):
        if s[R_RESET_AT + i] == score:
            if kind == 0:
                return score // 2
            out = score - s[R_RESET_SUBTRACT]
            return out if out > 0 else 0
    return -1


@njit(cache=True)
def one_round(s):
    """``Game.one_round``: the game ends with this round (a single round, or a game of one round)."""
    return s[SINGLE_ROUND] == 1 or s[R_GAME_END] == ONE_ROUND


@njit(cache=True)
def _finish_round(s, r, caller, winners, assafers, capped):
    """``Game._finish_round``: scores, resets, eliminations, the game's end or the next deal."""
    n = s[PLAYERS]
    if capped:
        for q in range(MAX_SEATS):
            s[RES_POINTS + q] = 0
    resets = 0
    for q in range(n):
        points = s[RES_POINTS + q]
        if not s[ALIVE + q] or points == 0:
            continue
        score = s[SCORE + q] + points
        after = reset_score(s, score)
        if after >= 0:
            score = after
            resets |= 1 << q
        s[SCORE + q] = score
    limit = s[R_LIMIT]
    over = 0
    for q in range(n):
        if s[ALIVE + q] and s[SCORE + q] > limit:
            over |= 1 << q
    eliminated = 0
    game_over = one_round(s)
    if s[R_GAME_END] == ONE_ROUND:
        pass  # the round decides the game: no eliminations, no limit
    elif s[R_GAME_END] == ELIMINATION:
        eliminated = over
        left = 0
        for q in range(n):
            if over >> q & 1:
                s[ALIVE + q] = 0
                s[OUT_ROUND + q] = s[ROUNDS]
            if s[ALIVE + q]:
                left |= 1 << q
        if popcount(left) <= 1:
            game_over = True
            s[WINNERS] = left
    elif over:
        game_over = True
        low = 1 << 40
        for q in range(n):
            if s[ALIVE + q] and s[SCORE + q] < low:
                low = s[SCORE + q]
        best = 0
        for q in range(n):
            if s[ALIVE + q] and s[SCORE + q] == low:
                best |= 1 << q
        s[WINNERS] = best
    dealt = 0
    for q in range(n):
        s[RES_TOTALS + q] = s[TOTAL + q]
        if s[HAND_LEN + q] > 0:
            dealt |= 1 << q
    s[RES_CALLER] = caller
    s[RES_WINNERS] = winners
    s[RES_ASSAFERS] = assafers
    s[RES_RESETS] = resets
    s[RES_ELIMINATED] = eliminated
    s[RES_DEALT] = dealt
    s[RES_TURNS] = s[TURN]
    s[ROUNDS] += 1
    if game_over:
        if one_round(s):
            s[WINNERS] = winners
        s[PHASE] = PHASE_OVER
        s[PENDING] = -1
        return GAME_OVER
    deal(s, r, _next_starter(s, caller, winners))
    return ROUND_OVER


@njit(cache=True)
def _next_starter(s, caller, winners):
    """``Game._next_starter``."""
    how = s[R_STARTER_RULE]
    if caller < 0 or how == 2:  # capped, or next_seat
        return next_seat(s, s[STARTER])
    if how == 1:  # the caller, or the next seat in the game after it
        return caller if s[ALIVE + caller] else next_seat(s, caller)
    n = s[PLAYERS]
    for k in range(n):  # of tied winners, the first after the caller (the caller itself first)
        q = (caller + k) % n
        if winners >> q & 1:
            return q
    return caller
