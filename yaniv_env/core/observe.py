"""The observation in compiled code: ``yaniv_env.encoding.Observer.observe`` on a core row. numba kernels.

``observe(s, seat, out, buf)`` writes into ``out`` (``float32``, ``encoding.observation_size(H)``
entries, H the row's hand size) the observation of ``seat`` in the game held by row ``s``
(``yaniv_env.core.layout``): the same vector as
``Observer(rules, players).observe(game.view(seat))`` for the ``yaniv.Game`` the row holds
(``layout.from_game``), for any seat: the player to move or not, in a slamdown decision, and
after the game is over. ``buf`` is ``int64`` scratch of ``SCRATCH`` entries (``scratch()``).
``observe_batch(S, seats, out)`` does it for each game of a batch: ``S`` is ``(N, layout.WIDTH)``,
``seats`` ``int64 (N,)`` and ``out`` ``float32 (N, size)``. The games of a batch may play different
rules and player counts, but share one hand size, so one observation size. A wrong size of
``out``, a seat that is not at the table, or a short ``buf`` raise ValueError.

Everything is read from the row: the rule settings (``R_*``) give the settings segment and the
score stakes, ``LAST_HIGH`` and ``LAST_DREW`` each seat's last discard, ``KNOWN``, ``DEAD`` and
``TOP`` the public cards; the discards segment takes its subsets from ``engine.legal_discards``,
and score resets from ``engine.reset_score``. Two tables of the reference are pure functions of
small integers and are built at import by calling the reference itself, so their floats are its
floats: ``AT_MOST[jokers, cap + 1, plain, skewed, t]`` (``yaniv.odds.at_most``) and
``END_STAY[size]`` (one factor of ``yaniv.odds.round_end_chance``). The segment offsets per hand
size and every feature index come from ``yaniv_env.encoding`` by name.

Equality: each entry is computed in ``float64`` with the reference's operations in the
reference's order (its sums and products included) and stored once as ``float32``, so the vector
is bit-identical to the reference's (``tests/test_core_observe.py`` counts every entry that is
not). Under Python 3.12 and later, whose ``sum`` of floats compensates its rounding, the
reference's mean stakes of a deck draw may differ from these in the last bit.

One reading needs care: ``yaniv.game.last_discards(events, seats)`` stops after ``seats`` seats,
the seats still in the game; after a game's last round has put seats out, the observation
reads only the last discards of the ``seats`` most recent discarders, and so does this kernel,
walking back from the round's last mover (``_read_discards``).

Speed: the vector is zeroed, then only its non-zero entries are written; the score stakes
segments are built only when some move can reach a reset value or the limit.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numba import njit

from yaniv.cards import MAX_JOKERS, NUM_CARDS, NUM_STANDARD
from yaniv.odds import MAX_POINTS, MAX_TOTAL, ROUND_END_CHANCE, ROUND_END_CHANCE_OTHERWISE, at_most
from yaniv.rules import ASSAF_PENALTIES, GAME_ENDS, MAX_HAND, MIN_HAND, RUN_DRAWS, SCORE_RESETS, SET_DRAWS
from yaniv_env.core.engine import legal_discards, reset_score
from yaniv_env.core.layout import (
    ALIVE, CARD_POINTS, CARD_RANK, CARD_SUIT, CURRENT, DEAD, DECK_LEN, DECK_SOURCE, DRAWABLE, DRAWABLE_LEN,
    HAND, HAND_LEN, HAND_ROOM, KNOWN, LAST_DREW, LAST_HIGH, MAX_DISCARDS, MAX_SEATS, PENDING, PHASE, PHASE_OVER,
    PHASE_PLAY, PHASE_SLAMDOWN, PLAYERS, R_ASSAF_EQUAL, R_DRAW_RUN, R_DRAW_SET, R_GAME_END, R_HAND_SIZE, R_JOKERS,
    R_JOKERS_IN_SETS, R_LIMIT, R_PENALTY, R_PENALTY_KIND, R_RESET_AT, R_RESET_KIND, R_RESETS, R_SLAMDOWN,
    R_THRESHOLD, RES_CALLER, SCORE, TOP, TOP_LEN, TURN,
)
from yaniv_env.encoding import (
    CARD_FEATURES, DISCARD_FEATURES, DISCARD_FIELDS, DRAW, DRAW_FEATURES, DRAW_SOURCES, MAX_DRAWABLE,
    OPPONENT, OPPONENT_FEATURES, OPPONENT_SCALARS, POINT_SCALE, SELF, SETTINGS, SLOT, SLOT_FEATURES,
    TOTAL_STEPS, observation_layout, segment_offsets,
)

# ------------------------------------------------------------------------------------------------
# Tables built at import (numba freezes module-level arrays into the compiled code)
# ------------------------------------------------------------------------------------------------

# Segment offsets per hand size: OFFSETS[H, k] is where the k-th segment of
# ``observation_layout(H)`` starts; OFFSETS[H, SIZE] is the observation's length.
_SEGMENTS: Final = tuple(name for name, _ in observation_layout(MIN_HAND))
(SEG_HAND, SEG_SLOTS, SEG_DISCARDS, SEG_DRAWS, SEG_RESET, SEG_OVER, SEG_RESET_SOON, SEG_OVER_SOON, SEG_TOP,
 SEG_DEAD, SEG_OPPONENTS, SEG_SELF, SEG_SETTINGS) = (_SEGMENTS.index(name) for name in (
    "hand", "slots", "discards", "draws", "reset", "over", "reset_soon", "over_soon", "top", "dead",
    "opponents", "self", "settings"))
SIZE: Final = len(_SEGMENTS)


def _offsets() -> np.ndarray:
    table = np.zeros((MAX_HAND + 1, SIZE + 1), dtype=np.int64)
    for h in range(MIN_HAND, MAX_HAND + 1):
        offsets = segment_offsets(h)
        table[h, :SIZE] = [offsets[name] for name in _SEGMENTS]
        table[h, SIZE] = sum(size for _, size in observation_layout(h))
    return table


OFFSETS: Final = _offsets()

# AT_MOST[jokers, cap + 1, plain, skewed, t] = yaniv.odds.at_most(jokers, cap, plain, skewed)[t]: an
# opponent's last discard's highest card caps at 10 points, and it hides at most MAX_HAND cards.
AT_MOST: Final = np.array([[[[at_most(jokers, cap, plain, skewed) for skewed in range(MAX_HAND + 1)]
                             for plain in range(2)]
                            for cap in range(-1, MAX_POINTS + 1)]
                           for jokers in range(MAX_JOKERS + 1)])

# END_STAY[size]: 1 - the chance that an opponent holding ``size`` cards ends the round first, the
# factor round_end_chance multiplies (the same float it computes).
END_STAY: Final = np.array([1.0 - ROUND_END_CHANCE.get(size, ROUND_END_CHANCE_OTHERWISE)
                            for size in range(MAX_HAND + 2)])

# A slot's points feature per card: the reference's float32, taken from its own table.
SLOT_POINTS: Final = np.ascontiguousarray(CARD_FEATURES[:, SLOT.points])

# The score stakes per hand total t = 0..STAKES - 1 (a hand plus one drawn card).
STAKES: Final = (MAX_HAND + 1) * MAX_POINTS + 1

# Scratch (``buf``): the legal discards' slot masks, the points a reset takes off per t, whether
# score + t passes the limit per t, the unseen cards per value, and per seat how many cards it was
# seen taking and their points.
BUF_DISCARDS: Final = 0
BUF_TAKEN: Final = BUF_DISCARDS + MAX_DISCARDS
BUF_OVER: Final = BUF_TAKEN + STAKES
BUF_COUNTS: Final = BUF_OVER + STAKES
BUF_KNOWN_COUNT: Final = BUF_COUNTS + MAX_POINTS + 1
BUF_KNOWN_POINTS: Final = BUF_KNOWN_COUNT + MAX_SEATS
SCRATCH: Final = BUF_KNOWN_POINTS + MAX_SEATS


def scratch() -> np.ndarray:
    """A ``buf`` for ``observe``."""
    return np.zeros(SCRATCH, dtype=np.int64)


# Feature indices, by name (numba reads module-level ints as constants).
SLOT_PRESENT, SLOT_POINTS_AT, SLOT_RANK, SLOT_SUIT, SLOT_PENDING = (
    SLOT.present, SLOT.points, SLOT.rank_0, SLOT.suit_0, SLOT.pending)
D_LEGAL, D_SHED, D_LEFT = DISCARD_FIELDS.legal, DISCARD_FIELDS.shed, DISCARD_FIELDS.left
W_OPEN, W_POINTS, W_PAIRS, W_RUN, W_JOKER = DRAW.open, DRAW.points, DRAW.pairs, DRAW.run_material, DRAW.joker
O_PRESENT, O_IN_GAME, O_TO_MOVE, O_HAND_SIZE, O_SCORE, O_KNOWN_POINTS = (
    OPPONENT.present, OPPONENT.in_game, OPPONENT.to_move, OPPONENT.hand_size, OPPONENT.score, OPPONENT.known_points)
O_HAS_DISCARDED, O_LAST_HIGH, O_DREW, O_ODDS = (
    OPPONENT.has_discarded, OPPONENT.last_discard_high, OPPONENT.drew_from_deck, OPPONENT.assaf_odds)
F_SCORE, F_TOTAL, F_MAY_CALL, F_TO_MOVE, F_HAND_SIZE, F_DECK_SIZE, F_PENDING, F_TURN, F_ASSAFED, F_TOTAL_LE = (
    SELF.score, SELF.total, SELF.may_call, SELF.to_move, SELF.hand_size, SELF.deck_size, SELF.slamdown_pending,
    SELF.turn, SELF.assafed_odds, SELF.total_le_0)

# The settings segment, feature by feature as ``encoding.SETTINGS`` names them; the kernel writes
# each from the row's rule fields (``_settings``). Its codes are the indices layout.write_rules stores.
_SETTING: Final = {name: i for i, (name, _, _) in enumerate(SETTINGS)}
_WRITTEN: Final = ("yaniv_threshold", "assaf_on_equal", "assaf_penalty_points", "per_assafer", "flat_assaf", "halve",
                   "subtract", "score_limit", "first_over", "one_round", "jokers", "jokers_in_sets", "draw_run_jokers",
                   "draw_set_ends", "slamdown")
if set(_SETTING) != set(_WRITTEN):
    raise ImportError(f"encoding.SETTINGS names {sorted(_SETTING)}; observe.py writes {sorted(_WRITTEN)}")
(S_THRESHOLD, S_ASSAF_EQUAL, S_PENALTY, S_PER_ASSAFER, S_FLAT, S_HALVE, S_SUBTRACT, S_LIMIT, S_FIRST_OVER, S_ONE_ROUND,
 S_JOKERS,
 S_JOKERS_IN_SETS, S_RUN_JOKERS, S_SET_ENDS, S_SLAMDOWN) = (_SETTING[name] for name in _WRITTEN)
S_PLAYERS: Final = len(SETTINGS)  # then the player count one-hot, 2..8
PER_ASSAFER, FLAT = ASSAF_PENALTIES.index("per_assafer"), ASSAF_PENALTIES.index("flat")
HALVE, SUBTRACT, NO_RESET = SCORE_RESETS.index("halve"), SCORE_RESETS.index("subtract"), SCORE_RESETS.index("none")
FIRST_OVER, ONE_ROUND = GAME_ENDS.index("first_over"), GAME_ENDS.index("one_round")
RUN_JOKERS, SET_ENDS = RUN_DRAWS.index("ends_and_jokers"), SET_DRAWS.index("ends")


# ------------------------------------------------------------------------------------------------
# Kernels
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def observe_batch(S, seats, out):
    """``observe`` for each game: row ``S[g]``, seat ``seats[g]``, into ``out[g]``."""
    buf = np.empty(SCRATCH, dtype=np.int64)
    for g in range(S.shape[0]):
        observe(S[g], seats[g], out[g], buf)


@njit(cache=True)
def observe(s, seat, out, buf):
    """The observation of ``seat`` in row ``s``, written into ``out`` (see the module docstring)."""
    h = s[R_HAND_SIZE]
    n = s[PLAYERS]
    if out.shape[0] != OFFSETS[h, SIZE]:
        raise ValueError("out does not hold observation_size(hand size) entries")
    if seat < 0 or seat >= n:
        raise ValueError("seat is not at the table")
    if buf.shape[0] < SCRATCH:
        raise ValueError("buf holds fewer than SCRATCH entries")
    out[:] = 0.0
    phase = s[PHASE]
    to_move = seat == s[CURRENT] and phase != PHASE_OVER
    playing = to_move and phase == PHASE_PLAY
    may_draw = 1.0 if playing else 0.0
    base = HAND + seat * HAND_ROOM
    size = s[HAND_LEN + seat]

    # Hand and slots; what the cards in hand are, for the draw features.
    at = OFFSETS[h, SEG_SLOTS]
    total = 0
    held = np.int64(0)  # bit mask over card ids
    for i in range(size):
        c = s[base + i]
        total += CARD_POINTS[c]
        held |= np.int64(1) << c
        out[c] = 1.0
        out[at + SLOT_PRESENT] = 1.0
        out[at + SLOT_POINTS_AT] = SLOT_POINTS[c]
        out[at + SLOT_RANK + CARD_RANK[c]] = 1.0
        out[at + SLOT_SUIT + CARD_SUIT[c]] = 1.0
        if to_move and phase == PHASE_SLAMDOWN and c == s[PENDING]:
            out[at + SLOT_PENDING] = 1.0
        at += SLOT_FEATURES

    # What each legal discard would do.
    count = legal_discards(s, seat, buf)
    at = OFFSETS[h, SEG_DISCARDS]
    for k in range(count):
        m = buf[BUF_DISCARDS + k]
        shed = 0
        for i in range(size):
            if m >> i & 1:
                shed += CARD_POINTS[s[base + i]]
        d = at + (m - 1) * DISCARD_FEATURES
        out[d + D_LEGAL] = 1.0
        out[d + D_SHED] = shed / POINT_SCALE
        out[d + D_LEFT] = (total - shed) / POINT_SCALE

    # The pile, the cards seen taken by other seats, and the cards this seat has not seen.
    top = OFFSETS[h, SEG_TOP]
    dead = OFFSETS[h, SEG_DEAD]
    opponents = OFFSETS[h, SEG_OPPONENTS]
    on_top = np.int64(0)
    for i in range(s[TOP_LEN]):
        c = s[TOP + i]
        on_top |= np.int64(1) << c
        out[top + c] = 1.0
    buf[BUF_COUNTS : BUF_KNOWN_POINTS + MAX_SEATS] = 0
    unseen = 0
    unseen_points = 0
    for c in range(NUM_STANDARD + s[R_JOKERS]):
        if s[DEAD + c]:
            out[dead + c] = 1.0
            continue
        if on_top >> c & 1 or held >> c & 1:
            continue
        q = s[KNOWN + c]
        if q >= 0:
            buf[BUF_KNOWN_COUNT + q] += 1
            buf[BUF_KNOWN_POINTS + q] += CARD_POINTS[c]
            out[opponents + ((q - seat) % n - 1) * OPPONENT_FEATURES + OPPONENT_SCALARS + c] = 1.0
            continue
        unseen += 1
        unseen_points += CARD_POINTS[c]
        buf[BUF_COUNTS + CARD_POINTS[c]] += 1

    # Draw sources: the deck, then the top group's drawable cards.
    d = OFFSETS[h, SEG_DRAWS]
    deck = s[DECK_LEN]
    out[d + W_OPEN] = may_draw if deck else 0.0
    if unseen:
        out[d + W_POINTS] = unseen_points / unseen / 10
    drawable = min(s[DRAWABLE_LEN], MAX_DRAWABLE)
    for i in range(drawable):
        c = s[DRAWABLE + i]
        at = d + (i + 1) * DRAW_FEATURES
        out[at + W_OPEN] = may_draw
        if c >= NUM_STANDARD:
            out[at + W_JOKER] = 1.0
            continue
        out[at + W_POINTS] = CARD_POINTS[c] / 10
        rank, suit = CARD_RANK[c], CARD_SUIT[c]
        for j in range(size):
            other = s[base + j]
            if CARD_RANK[other] == rank:
                out[at + W_PAIRS] = 1.0
            if CARD_SUIT[other] == suit and 0 < abs(CARD_RANK[other] - rank) <= 2:
                out[at + W_RUN] = 1.0

    if playing:
        _score_stakes(s, seat, out, buf, count, total, unseen, drawable)

    # Opponents in turn order after the observer.
    limit = s[R_LIMIT]
    current = s[CURRENT] if phase != PHASE_OVER else -1
    below = total - (0 if s[R_ASSAF_EQUAL] else 1)  # an opponent at most this Assafs a call
    jokers = s[R_JOKERS]
    readable = _read_discards(s)
    safe = 1.0
    for k in range(1, n):
        q = (seat + k) % n
        at = opponents + (k - 1) * OPPONENT_FEATURES
        out[at + O_PRESENT] = 1.0
        alive = s[ALIVE + q] != 0
        if alive:
            out[at + O_IN_GAME] = 1.0
        if q == current:
            out[at + O_TO_MOVE] = 1.0
        qsize = s[HAND_LEN + q]
        out[at + O_HAND_SIZE] = qsize / MAX_HAND
        out[at + O_SCORE] = min(s[SCORE + q] / limit, 1.0)
        room = below
        seen = buf[BUF_KNOWN_COUNT + q]
        if seen:
            room -= buf[BUF_KNOWN_POINTS + q]
            out[at + O_KNOWN_POINTS] = buf[BUF_KNOWN_POINTS + q] / POINT_SCALE
        cap, fresh = -1, 0
        if readable >> q & 1:
            cap = s[LAST_HIGH + q]
            fresh = 1 if s[LAST_DREW + q] == DECK_SOURCE else 0
            out[at + O_HAS_DISCARDED] = 1.0
            out[at + O_LAST_HIGH] = cap / 10
            out[at + O_DREW] = fresh
        if alive and room >= 0:
            hidden = qsize - seen
            plain = min(fresh, hidden)  # a slamdown may have thrown the card it drew
            p = AT_MOST[jokers, cap + 1, plain, hidden - plain, min(room, MAX_TOTAL)]
            out[at + O_ODDS] = p
            safe *= 1.0 - p

    at = OFFSETS[h, SEG_SELF]
    out[at + F_SCORE] = min(s[SCORE + seat] / limit, 1.0)
    out[at + F_TOTAL] = total / POINT_SCALE
    out[at + F_MAY_CALL] = 1.0 if playing and total <= s[R_THRESHOLD] else 0.0
    out[at + F_TO_MOVE] = 1.0 if to_move else 0.0
    out[at + F_HAND_SIZE] = size / MAX_HAND
    out[at + F_DECK_SIZE] = deck / NUM_CARDS
    out[at + F_PENDING] = 1.0 if to_move and phase == PHASE_SLAMDOWN else 0.0
    out[at + F_TURN] = min(s[TURN] / 100, 1.0)
    out[at + F_ASSAFED] = 1.0 - safe
    for t in range(max(total, 0), TOTAL_STEPS):
        out[at + F_TOTAL_LE + t] = 1.0
    _settings(s, out, OFFSETS[h, SEG_SETTINGS])


@njit(cache=True)
def _read_discards(s):
    """The seats whose last discard the observation reads, as a bit mask.

    ``last_discards(events, seats)`` reads the round's record backwards and stops after ``seats``
    distinct discarders, ``seats`` the number still in the game (no stop when it is 0). While a
    round is played every discarder is still in; only after a game's last round, which may have
    put seats out, are there more discarders than seats in. Turns go round the table, so the
    discarders from the most recent back are the seats from the round's last mover backwards:
    the seat before the caller after a call, the seat to move when the turn cap ended it.
    """
    n = s[PLAYERS]
    seats = 0
    mask = 0
    count = 0
    for q in range(n):
        seats += s[ALIVE + q] != 0
        if s[LAST_HIGH + q] >= 0:
            mask |= 1 << q
            count += 1
    if seats == 0 or count <= seats:
        return mask
    q = s[CURRENT] if s[RES_CALLER] < 0 else (s[CURRENT] + n - 1) % n
    out = 0
    found = 0
    for _ in range(n):
        if mask >> q & 1:
            out |= 1 << q
            found += 1
            if found == seats:
                break
        q = (q + n - 1) % n
    return out


@njit(cache=True)
def _score_stakes(s, seat, out, buf, count, total, unseen, drawable):
    """The reset, over, reset_soon and over_soon segments of the player to move (``Observer._score_stakes``).

    ``buf`` holds the legal discards (``count`` of them) and the unseen cards per value.
    """
    if s[R_GAME_END] == ONE_ROUND:  # the round decides the game: no stakes (Rules.score_stakes)
        return
    score = s[SCORE + seat]
    limit = s[R_LIMIT]
    reach = total + MAX_POINTS + 1  # the largest total a move can leave, plus one
    hit = score + reach - 1 > limit
    if not hit and s[R_RESET_KIND] != NO_RESET:
        for i in range(s[R_RESETS]):
            if score <= s[R_RESET_AT + i] < score + reach:
                hit = True
    if not hit:  # no move reaches a reset value or the limit: all zeros
        return
    for t in range(reach):
        new = score + t
        after = reset_score(s, new)
        if after < 0:
            after = new
        buf[BUF_TAKEN + t] = new - after
        buf[BUF_OVER + t] = 1 if after > limit else 0
    h = s[R_HAND_SIZE]
    r_off, o_off = OFFSETS[h, SEG_RESET], OFFSETS[h, SEG_OVER]
    rs_off, os_off = OFFSETS[h, SEG_RESET_SOON], OFFSETS[h, SEG_OVER_SOON]
    stay = 1.0
    for q in range(s[PLAYERS]):
        if q != seat and s[ALIVE + q]:
            stay *= END_STAY[min(s[HAND_LEN + q], MAX_HAND + 1)]
    soon = 1.0 - stay
    base = HAND + seat * HAND_ROOM
    size = s[HAND_LEN + seat]
    deck = s[DECK_LEN] > 0 and unseen > 0
    for k in range(count):
        m = buf[BUF_DISCARDS + k]
        shed = 0
        for i in range(size):
            if m >> i & 1:
                shed += CARD_POINTS[s[base + i]]
        left = total - shed
        at = (m - 1) * DRAW_SOURCES
        if deck:
            r = 0.0
            o = 0.0
            for v in range(MAX_POINTS + 1):
                nv = buf[BUF_COUNTS + v]
                if nv:
                    r += nv * _reset_taken(buf[BUF_TAKEN + left + v])
                    o += nv * (1.0 if buf[BUF_OVER + left + v] else 0.0)
            r = r / unseen
            o = o / unseen
            out[r_off + at] = r
            out[o_off + at] = o
            out[rs_off + at] = soon * r
            out[os_off + at] = soon * o
        for i in range(drawable):
            v = CARD_POINTS[s[DRAWABLE + i]]
            r = _reset_taken(buf[BUF_TAKEN + left + v])
            o = 1.0 if buf[BUF_OVER + left + v] else 0.0
            out[r_off + at + i + 1] = r
            out[o_off + at + i + 1] = o
            out[rs_off + at + i + 1] = soon * r
            out[os_off + at + i + 1] = soon * o


@njit(cache=True, inline="always")
def _reset_taken(taken):
    """The reset feature of ``taken`` points a reset takes off: /100, at most 1."""
    return min(taken / 100, 1.0)


@njit(cache=True)
def _settings(s, out, at):
    """The settings segment (``encoding.settings_vector``) from the row's rule fields."""
    out[at + S_THRESHOLD] = min(s[R_THRESHOLD] / 10, 1.0)
    out[at + S_ASSAF_EQUAL] = 1.0 if s[R_ASSAF_EQUAL] else 0.0
    out[at + S_PENALTY] = min(s[R_PENALTY] / 50, 1.0)
    out[at + S_PER_ASSAFER] = 1.0 if s[R_PENALTY_KIND] == PER_ASSAFER else 0.0
    out[at + S_FLAT] = 1.0 if s[R_PENALTY_KIND] == FLAT else 0.0
    out[at + S_HALVE] = 1.0 if s[R_RESET_KIND] == HALVE else 0.0
    out[at + S_SUBTRACT] = 1.0 if s[R_RESET_KIND] == SUBTRACT else 0.0
    out[at + S_LIMIT] = min(s[R_LIMIT] / 300, 1.0)
    out[at + S_FIRST_OVER] = 1.0 if s[R_GAME_END] == FIRST_OVER else 0.0
    out[at + S_ONE_ROUND] = 1.0 if s[R_GAME_END] == ONE_ROUND else 0.0
    out[at + S_JOKERS] = s[R_JOKERS] / 2
    out[at + S_JOKERS_IN_SETS] = 1.0 if s[R_JOKERS_IN_SETS] else 0.0
    out[at + S_RUN_JOKERS] = 1.0 if s[R_DRAW_RUN] == RUN_JOKERS else 0.0
    out[at + S_SET_ENDS] = 1.0 if s[R_DRAW_SET] == SET_ENDS else 0.0
    out[at + S_SLAMDOWN] = 1.0 if s[R_SLAMDOWN] else 0.0
    out[at + S_PLAYERS + s[PLAYERS] - 2] = 1.0


__all__ = ["AT_MOST", "END_STAY", "OFFSETS", "SCRATCH", "observe", "observe_batch", "scratch"]
