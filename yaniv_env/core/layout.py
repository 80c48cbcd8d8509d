"""The compiled core's state: one game is one row of ``int64``, every field at a named offset.

Why one row: numba kernels then take a single 2-D array for a whole batch (``S[g]`` is game g),
a game is copied with one slice assignment (the search's rollouts), and nothing is an object.
The row holds the game's rule settings too, so every game of a batch may play its own rules.

The fields mirror ``yaniv.game.Game`` (the reference): cards are the ids of ``yaniv.cards``; a
hand lies in hand order (``SORT_KEY``) in ``HAND + 8 * seat``; the deck is drawn from its end
(``DECK[DECK_LEN - 1]`` is the next card), as ``Game.deck``; the pile is its top group
(``TOP``, in canonical order, with its drawable cards ``DRAWABLE``) and the dead cards under it
(``DEAD``, a flag per card: the reshuffle sorts them by id, so their order never matters). What
the round's public record says and the observation and the bots read is kept as it happens,
instead of as an event list: ``KNOWN`` (the seat everyone saw take the card from the pile, or
-1), ``THROWN`` (per card, a bit mask of the seats that threw it this round), each seat's last
discard (``LAST_*``), and ``EPOCH`` (per card, the index of the last deck that held it: 0 the
deal, k the k-th reshuffle; what ``Game.from_view`` rebuilds from the events).

The finished round's result is kept in ``RES_*`` until the next one ends (the rewards read it).

``write_rules(row, rules)`` fills the rule fields; ``from_game(game)`` is a row holding the same
position as a Python ``Game`` (the differential tests start both from it); ``position(row)`` reads
a row back as plain Python values (compare ``position(core row)`` with
``position(from_game(game))`` after the same moves). Every other module of ``yaniv_env.core`` reads the offsets
from here by name.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from yaniv.cards import NUM_CARDS, POINTS, RANK, SORT_KEY, SUIT
from yaniv.game import DISCARD, OVER, PLAY, SLAM, SLAMDOWN_PHASE, STATE, Game, last_discards
from yaniv.rules import ASSAF_PENALTIES, GAME_ENDS, MAX_RESET_VALUES, ROUND_STARTERS, RUN_DRAWS, SCORE_RESETS, SET_DRAWS, Rules

MAX_SEATS: Final = 8
HAND_ROOM: Final = 8  # slots per seat in HAND (a hand holds at most 7 cards)
GROUP_ROOM: Final = 8  # the most cards of one group on the pile: a seven-card run and a slamdown
MAX_DRAWABLE: Final = 5
MAX_DISCARDS: Final = 128  # the most legal discards of one hand (2^7 - 1 slot subsets)

# Card tables as arrays: numba freezes module-level arrays into the compiled code.
CARD_POINTS: Final = np.array(POINTS, dtype=np.int64)
CARD_RANK: Final = np.array(RANK, dtype=np.int64)
CARD_SUIT: Final = np.array(SUIT, dtype=np.int64)
CARD_KEY: Final = np.array(SORT_KEY, dtype=np.int64)

# Codes of the string settings and states.
PHASE_PLAY, PHASE_SLAMDOWN, PHASE_OVER = 0, 1, 2
KIND_SINGLE, KIND_SET, KIND_RUN = 0, 1, 2
DECK_SOURCE: Final = -1  # a draw from the deck (``yaniv.game.DECK``)


def _fields(*spec: tuple[str, int]) -> dict[str, int]:
    out, at = {}, 0
    for name, size in spec:
        out[name] = at
        at += size
    out["WIDTH"] = at
    return out


_OFFSETS = _fields(
    # rules
    ("R_THRESHOLD", 1), ("R_ASSAF_EQUAL", 1), ("R_PENALTY_KIND", 1), ("R_PENALTY", 1), ("R_PER_ASSAFER", 1),
    ("R_RESET_KIND", 1), ("R_RESET_SUBTRACT", 1), ("R_GAME_END", 1), ("R_LIMIT", 1), ("R_STARTER_RULE", 1),
    ("R_JOKERS", 1), ("R_JOKERS_IN_SETS", 1), ("R_MIN_SET_JOKERS", 1), ("R_MAX_SET", 1), ("R_DRAW_RUN", 1),
    ("R_DRAW_SET", 1), ("R_HAND_SIZE", 1), ("R_SLAMDOWN", 1), ("R_MAX_TURNS", 1), ("R_RESETS", 1),
    ("R_RESET_AT", MAX_RESET_VALUES),
    # the table
    ("PLAYERS", 1), ("SINGLE_ROUND", 1), ("SCORE", MAX_SEATS), ("ALIVE", MAX_SEATS), ("OUT_ROUND", MAX_SEATS),
    ("WINNERS", 1), ("ROUNDS", 1),
    # the round
    ("PHASE", 1), ("CURRENT", 1), ("PENDING", 1), ("STARTER", 1), ("TURN", 1), ("ROUND", 1), ("POOLS", 1),
    ("FIRST_DISCARDER", 1),
    ("HAND", MAX_SEATS * HAND_ROOM), ("HAND_LEN", MAX_SEATS), ("TOTAL", MAX_SEATS),
    ("DECK", NUM_CARDS), ("DECK_LEN", 1),
    ("DEAD", NUM_CARDS), ("KNOWN", NUM_CARDS), ("THROWN", NUM_CARDS), ("EPOCH", NUM_CARDS),
    ("TOP", GROUP_ROOM), ("TOP_LEN", 1), ("TOP_KIND", 1), ("TOP_PLAYER", 1), ("DRAWABLE", MAX_DRAWABLE + 1),
    ("DRAWABLE_LEN", 1),
    ("LAST_HIGH", MAX_SEATS), ("LAST_DREW", MAX_SEATS), ("LAST_SLAMMED", MAX_SEATS), ("LAST_LEN", MAX_SEATS),
    ("LAST_CARDS", MAX_SEATS * GROUP_ROOM),
    # the last finished round
    ("RES_CALLER", 1), ("RES_POINTS", MAX_SEATS), ("RES_TOTALS", MAX_SEATS), ("RES_WINNERS", 1),
    ("RES_ASSAFERS", 1), ("RES_RESETS", 1), ("RES_ELIMINATED", 1), ("RES_DEALT", 1), ("RES_TURNS", 1),
)

# The offsets as module constants (numba reads them as compile-time constants).
R_THRESHOLD: Final = _OFFSETS["R_THRESHOLD"]  # Rules.yaniv_threshold
R_ASSAF_EQUAL: Final = _OFFSETS["R_ASSAF_EQUAL"]  # Rules.assaf_on_equal (0/1)
R_PENALTY_KIND: Final = _OFFSETS["R_PENALTY_KIND"]  # index into ASSAF_PENALTIES
R_PENALTY: Final = _OFFSETS["R_PENALTY"]  # Rules.assaf_penalty_points
R_PER_ASSAFER: Final = _OFFSETS["R_PER_ASSAFER"]  # Rules.assaf_points_per_assafer
R_RESET_KIND: Final = _OFFSETS["R_RESET_KIND"]  # index into SCORE_RESETS
R_RESET_SUBTRACT: Final = _OFFSETS["R_RESET_SUBTRACT"]
R_GAME_END: Final = _OFFSETS["R_GAME_END"]  # index into GAME_ENDS
ELIMINATION, FIRST_OVER, ONE_ROUND = (GAME_ENDS.index(end) for end in ("elimination", "first_over", "one_round"))
R_LIMIT: Final = _OFFSETS["R_LIMIT"]
R_STARTER_RULE: Final = _OFFSETS["R_STARTER_RULE"]  # index into ROUND_STARTERS
R_JOKERS: Final = _OFFSETS["R_JOKERS"]
R_JOKERS_IN_SETS: Final = _OFFSETS["R_JOKERS_IN_SETS"]
R_MIN_SET_JOKERS: Final = _OFFSETS["R_MIN_SET_JOKERS"]
R_MAX_SET: Final = _OFFSETS["R_MAX_SET"]
R_DRAW_RUN: Final = _OFFSETS["R_DRAW_RUN"]  # index into RUN_DRAWS
R_DRAW_SET: Final = _OFFSETS["R_DRAW_SET"]  # index into SET_DRAWS
R_HAND_SIZE: Final = _OFFSETS["R_HAND_SIZE"]
R_SLAMDOWN: Final = _OFFSETS["R_SLAMDOWN"]
R_MAX_TURNS: Final = _OFFSETS["R_MAX_TURNS"]  # -1: no cap
R_RESETS: Final = _OFFSETS["R_RESETS"]  # how many values R_RESET_AT holds
R_RESET_AT: Final = _OFFSETS["R_RESET_AT"]
RULE_FIELDS: Final = slice(R_THRESHOLD, R_RESET_AT + MAX_RESET_VALUES)  # every field write_rules writes
PLAYERS: Final = _OFFSETS["PLAYERS"]
SINGLE_ROUND: Final = _OFFSETS["SINGLE_ROUND"]
SCORE: Final = _OFFSETS["SCORE"]
ALIVE: Final = _OFFSETS["ALIVE"]
OUT_ROUND: Final = _OFFSETS["OUT_ROUND"]  # per seat: the index of the round that eliminated it, else -1
WINNERS: Final = _OFFSETS["WINNERS"]  # bit mask of Game.winners (set when the game is over)
ROUNDS: Final = _OFFSETS["ROUNDS"]  # finished rounds (len(Game.results))
PHASE: Final = _OFFSETS["PHASE"]
CURRENT: Final = _OFFSETS["CURRENT"]
PENDING: Final = _OFFSETS["PENDING"]  # the card awaiting the slamdown decision, else -1
STARTER: Final = _OFFSETS["STARTER"]
TURN: Final = _OFFSETS["TURN"]
ROUND: Final = _OFFSETS["ROUND"]  # Game.round_number
POOLS: Final = _OFFSETS["POOLS"]  # reshuffles this round (len(Game.pools) - 1): the current epoch
FIRST_DISCARDER: Final = _OFFSETS["FIRST_DISCARDER"]  # the seat of the round's first discard, else -1
HAND: Final = _OFFSETS["HAND"]
HAND_LEN: Final = _OFFSETS["HAND_LEN"]
TOTAL: Final = _OFFSETS["TOTAL"]
DECK: Final = _OFFSETS["DECK"]
DECK_LEN: Final = _OFFSETS["DECK_LEN"]
DEAD: Final = _OFFSETS["DEAD"]  # per card: 1 if it lies dead on the pile (under the top group)
KNOWN: Final = _OFFSETS["KNOWN"]  # per card: the seat seen taking it from the pile and still holding it, else -1
THROWN: Final = _OFFSETS["THROWN"]  # per card: bit mask of the seats that threw it this round
EPOCH: Final = _OFFSETS["EPOCH"]  # per card: the last deck that held it (0: the deal's)
TOP: Final = _OFFSETS["TOP"]
TOP_LEN: Final = _OFFSETS["TOP_LEN"]
TOP_KIND: Final = _OFFSETS["TOP_KIND"]
TOP_PLAYER: Final = _OFFSETS["TOP_PLAYER"]
DRAWABLE: Final = _OFFSETS["DRAWABLE"]
DRAWABLE_LEN: Final = _OFFSETS["DRAWABLE_LEN"]
LAST_HIGH: Final = _OFFSETS["LAST_HIGH"]  # per seat: the highest points of its last discard this round, else -1
LAST_DREW: Final = _OFFSETS["LAST_DREW"]  # per seat: the card it drew with that discard, DECK_SOURCE for the deck
LAST_SLAMMED: Final = _OFFSETS["LAST_SLAMMED"]  # per seat: 1 if it slammed a card down since that discard
LAST_LEN: Final = _OFFSETS["LAST_LEN"]
LAST_CARDS: Final = _OFFSETS["LAST_CARDS"]  # per seat, GROUP_ROOM cards: that discard as it lay
RES_CALLER: Final = _OFFSETS["RES_CALLER"]  # -1: the turn cap ended the round
RES_POINTS: Final = _OFFSETS["RES_POINTS"]
RES_TOTALS: Final = _OFFSETS["RES_TOTALS"]
RES_WINNERS: Final = _OFFSETS["RES_WINNERS"]  # bit masks of seats
RES_ASSAFERS: Final = _OFFSETS["RES_ASSAFERS"]
RES_RESETS: Final = _OFFSETS["RES_RESETS"]
RES_ELIMINATED: Final = _OFFSETS["RES_ELIMINATED"]
RES_DEALT: Final = _OFFSETS["RES_DEALT"]  # the seats dealt in that round
RES_TURNS: Final = _OFFSETS["RES_TURNS"]
WIDTH: Final = _OFFSETS["WIDTH"]


def check_rules(rules: Rules) -> None:
    """ValueError naming the setting if the core cannot play ``rules``.

    One refusal, shared with the environments (``yaniv_env.encoding.check_expressible``): the core
    plays action ids, and an action id names a set of hand slots, not the order in which
    ``discarder_places_jokers`` says where a joker stands; nor can it name more than five pile cards.
    """
    from yaniv_env.encoding import check_expressible

    check_expressible(rules)


def write_rules(row: np.ndarray, rules: Rules) -> None:
    """Fill the rule fields of ``row`` from ``rules`` (checked by ``check_rules`` first)."""
    check_rules(rules)
    row[R_THRESHOLD] = rules.yaniv_threshold
    row[R_ASSAF_EQUAL] = rules.assaf_on_equal
    row[R_PENALTY_KIND] = ASSAF_PENALTIES.index(rules.assaf_penalty)
    row[R_PENALTY] = rules.assaf_penalty_points
    row[R_PER_ASSAFER] = rules.assaf_points_per_assafer
    row[R_RESET_KIND] = SCORE_RESETS.index(rules.score_reset)
    row[R_RESET_SUBTRACT] = rules.score_reset_subtract
    row[R_GAME_END] = GAME_ENDS.index(rules.game_end)
    row[R_LIMIT] = rules.score_limit
    row[R_STARTER_RULE] = ROUND_STARTERS.index(rules.next_round_starter)
    row[R_JOKERS] = rules.jokers
    row[R_JOKERS_IN_SETS] = rules.jokers_in_sets
    row[R_MIN_SET_JOKERS] = rules.min_set_with_jokers
    row[R_MAX_SET] = rules.max_set_size
    row[R_DRAW_RUN] = RUN_DRAWS.index(rules.draw_from_run)
    row[R_DRAW_SET] = SET_DRAWS.index(rules.draw_from_set)
    row[R_HAND_SIZE] = rules.hand_size
    row[R_SLAMDOWN] = rules.slamdown
    row[R_MAX_TURNS] = -1 if rules.max_turns is None else rules.max_turns
    row[R_RESETS] = len(rules.score_reset_at)
    row[R_RESET_AT : R_RESET_AT + MAX_RESET_VALUES] = 0
    row[R_RESET_AT : R_RESET_AT + len(rules.score_reset_at)] = rules.score_reset_at


def new_rows(count: int) -> np.ndarray:
    """``count`` empty rows (every card field -1 or 0 as a fresh row holds)."""
    rows = np.zeros((count, WIDTH), dtype=np.int64)
    rows[:, KNOWN : KNOWN + NUM_CARDS] = -1
    return rows


_KINDS = {"single": KIND_SINGLE, "set": KIND_SET, "run": KIND_RUN}
_PHASES = {PLAY: PHASE_PLAY, SLAMDOWN_PHASE: PHASE_SLAMDOWN, OVER: PHASE_OVER}


def from_game(game: Game) -> np.ndarray:
    """A row holding the position of ``game`` (a Python ``yaniv.Game``): what the differential
    tests load into the core. ValueError if the core cannot play its rules, or the game was
    rebuilt from a protocol state (its record does not start at the deal)."""
    if any(e.kind == STATE for e in game.events):
        raise ValueError("a game rebuilt from a protocol state has no record of its deal; the core needs one")
    row = new_rows(1)[0]
    write_rules(row, game.rules)
    n = game.num_players
    row[PLAYERS] = n
    row[SINGLE_ROUND] = game.single_round
    row[SCORE : SCORE + n] = game.scores
    row[ALIVE : ALIVE + n] = game.alive
    row[OUT_ROUND : OUT_ROUND + MAX_SEATS] = -1
    for number, result in enumerate(game.results):
        for q in result.eliminated:
            row[OUT_ROUND + q] = number
    row[WINNERS] = sum(1 << q for q in game.winners)
    row[ROUNDS] = len(game.results)
    row[PHASE] = _PHASES[game.phase]
    row[CURRENT] = game.current
    row[PENDING] = -1 if game.pending is None else game.pending
    row[STARTER] = game.starter
    row[TURN] = game.turn
    row[ROUND] = game.round_number
    row[POOLS] = len(game.pools) - 1
    for q, hand in enumerate(game.hands):
        row[HAND + q * HAND_ROOM : HAND + q * HAND_ROOM + len(hand)] = hand
        row[HAND_LEN + q] = len(hand)
        row[TOTAL + q] = game.totals[q]
    row[DECK : DECK + len(game.deck)] = game.deck
    row[DECK_LEN] = len(game.deck)
    for group in game.pile[:-1]:
        for c in group.cards:
            row[DEAD + c] = 1
    for q, cards in enumerate(game.known):
        for c in cards:
            row[KNOWN + c] = q
    for k, pool in enumerate(game.pools):
        for c in pool:
            row[EPOCH + c] = k
    top = game.pile[-1]
    row[TOP : TOP + len(top.cards)] = top.cards
    row[TOP_LEN] = len(top.cards)
    row[TOP_KIND] = _KINDS[top.kind]
    row[TOP_PLAYER] = top.player
    row[DRAWABLE : DRAWABLE + len(top.drawable)] = top.drawable
    row[DRAWABLE_LEN] = len(top.drawable)
    row[LAST_HIGH : LAST_HIGH + MAX_SEATS] = -1
    row[LAST_DREW : LAST_DREW + MAX_SEATS] = DECK_SOURCE
    row[FIRST_DISCARDER] = -1
    for e in game.events:
        if e.kind in (DISCARD, SLAM):
            for c in e.cards:
                row[THROWN + c] |= 1 << e.player
        if e.kind == DISCARD:
            if row[FIRST_DISCARDER] < 0:
                row[FIRST_DISCARDER] = e.player
            q = e.player
            row[LAST_HIGH + q] = max(POINTS[c] for c in e.cards)
            row[LAST_DREW + q] = e.drew
            row[LAST_SLAMMED + q] = 0
            row[LAST_LEN + q] = len(e.cards)
            row[LAST_CARDS + q * GROUP_ROOM : LAST_CARDS + q * GROUP_ROOM + len(e.cards)] = e.cards
        elif e.kind == SLAM:
            row[LAST_SLAMMED + e.player] = 1
    assert set(last_discards(game.events, n)) == {q for q in range(n) if row[LAST_HIGH + q] >= 0}
    row[RES_CALLER] = -1
    if game.results:
        r = game.results[-1]
        row[RES_CALLER] = -1 if r.caller is None else r.caller
        row[RES_POINTS : RES_POINTS + n] = r.points
        row[RES_TOTALS : RES_TOTALS + n] = r.totals
        row[RES_WINNERS] = sum(1 << q for q in r.winners)
        row[RES_ASSAFERS] = sum(1 << q for q in r.assafers)
        row[RES_RESETS] = sum(1 << q for q in r.resets)
        row[RES_ELIMINATED] = sum(1 << q for q in r.eliminated)
        row[RES_DEALT] = sum(1 << q for q, hand in enumerate(r.hands) if hand)
        row[RES_TURNS] = r.turns
    return row


def _seats(mask: int) -> tuple[int, ...]:
    return tuple(q for q in range(MAX_SEATS) if mask >> q & 1)


def position(row: np.ndarray) -> dict[str, Any]:
    """The state a row holds, as plain Python values named like ``Game``'s fields (for tests and
    debugging: compare with ``game_position(game)``)."""
    n = int(row[PLAYERS])
    hands = [tuple(int(c) for c in row[HAND + q * HAND_ROOM : HAND + q * HAND_ROOM + row[HAND_LEN + q]]) for q in range(n)]
    out = {
        "hands": hands,
        "totals": [int(row[TOTAL + q]) for q in range(n)],
        "deck": [int(c) for c in row[DECK : DECK + row[DECK_LEN]]],
        "dead": sorted(c for c in range(NUM_CARDS) if row[DEAD + c]),
        "top": tuple(int(c) for c in row[TOP : TOP + row[TOP_LEN]]),
        "top_kind": int(row[TOP_KIND]),
        "top_player": int(row[TOP_PLAYER]),
        "drawable": tuple(int(c) for c in row[DRAWABLE : DRAWABLE + row[DRAWABLE_LEN]]),
        "known": [sorted(c for c in range(NUM_CARDS) if row[KNOWN + c] == q) for q in range(n)],
        "scores": [int(row[SCORE + q]) for q in range(n)],
        "alive": [bool(row[ALIVE + q]) for q in range(n)],
        "current": int(row[CURRENT]),
        "phase": int(row[PHASE]),
        "pending": int(row[PENDING]),
        "starter": int(row[STARTER]),
        "turn": int(row[TURN]),
        "round_number": int(row[ROUND]),
        "rounds": int(row[ROUNDS]),
        "winners": _seats(int(row[WINNERS])),
    }
    if row[ROUNDS]:
        out["result"] = {
            "caller": None if row[RES_CALLER] < 0 else int(row[RES_CALLER]),
            "points": tuple(int(x) for x in row[RES_POINTS : RES_POINTS + n]),
            "totals": tuple(int(x) for x in row[RES_TOTALS : RES_TOTALS + n]),
            "winners": _seats(int(row[RES_WINNERS])),
            "assafers": _seats(int(row[RES_ASSAFERS])),
            "resets": _seats(int(row[RES_RESETS])),
            "eliminated": _seats(int(row[RES_ELIMINATED])),
            "turns": int(row[RES_TURNS]),
        }
    return out


__all__ = [name for name in _OFFSETS] + [
    "CARD_KEY", "CARD_POINTS", "CARD_RANK", "CARD_SUIT", "DECK_SOURCE", "GROUP_ROOM", "HAND_ROOM", "KIND_RUN",
    "KIND_SET", "KIND_SINGLE", "MAX_DISCARDS", "MAX_DRAWABLE", "MAX_SEATS", "PHASE_OVER", "PHASE_PLAY",
    "PHASE_SLAMDOWN", "check_rules", "from_game", "new_rows", "position", "write_rules",
]
