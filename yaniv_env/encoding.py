"""Action ids and observation vectors: the bridge between the engine and a policy network.

Actions
=======
One ``Discrete`` space covers every decision. The hand is kept sorted (points, rank, suit), so
its cards sit in *slots* 0..H-1 (H = ``rules.hand_size``); a discard is a non-empty subset of
slots, written as a bit mask ``m`` (bit i = slot i). The draw source is an index ``d`` into
``DRAW_SOURCES``: 0 is the deck, 1..5 the previous group's *drawable* cards in pile order.

==========================  =====================================  =========================
ids                         meaning                                 count (H = 5)
==========================  =====================================  =========================
``(m - 1) * 6 + d``         discard slot subset ``m``, draw ``d``  (2^H - 1) * 6 = 186
``(2^H - 1) * 6``           call Yaniv                              1
``(2^H - 1) * 6 + 1``       slamdown: throw the card just drawn     1
``(2^H - 1) * 6 + 2``       slamdown: keep it                       1
==========================  =====================================  =========================

So 189 actions with 5-card hands (129 + 3 = 765 with seven). Why the draw is an index into the
drawable cards rather than a position in the group: a group holds up to eight cards (a seven-card
run plus a slamdown), but at most five of them can ever be drawn (a set of four plus a slamdown,
or a run's two ends and two inner jokers), so six draw sources cover every rule set with no
action that can never be legal. The two slamdown ids are always present (masked off when the rule
is off), so one table serves every rule set with the same hand size, and every player count.

Observations
============
A flat ``float32`` vector, every entry in [0, 1], in the segments below (seat-relative: opponent
1 is the next player to act after the observer, and so on; absent seats are zeros, so one policy
plays 2 to 8 players). H = hand size, S = 2^H - 1 slot subsets, D = 6 draw sources. The sizes in
the last column are for H = 5; ``observation_layout(H)`` gives them for any hand size, and a test
checks this table against it.

===============  =========================  ======  ==============================================
segment          size                       H = 5   content
===============  =========================  ======  ==============================================
hand             54                         54      own cards, multi-hot over card ids
slots            H * 22                     110     per hand slot: present, points/10, rank one-hot
                                                    (13 + joker), suit one-hot (4 + joker), is the
                                                    card awaiting a slamdown decision
discards         S * 3                      93      per slot subset: is a legal discard, points it
                                                    sheds/70, points left after it/70
draws            D * 5                      30      per draw source: may be drawn now, points/10
                                                    (deck: mean points of the unseen cards), pairs
                                                    with a card in hand, within two ranks of a
                                                    same-suit card in hand (run material), joker
reset            S * D                      186     per discard-and-draw action id (move on turn
                                                    only): the points a score reset would take off
                                                    if the round ended with the hand it leaves
                                                    (score + total on a reset value), /100; the
                                                    mean over the unseen cards for a deck draw
over             S * D                      186     per action id, the same way: the chance that the
                                                    hand it leaves takes the score over the limit
reset_soon       S * D                      186     reset, times the chance that the round ends before
                                                    the observer's next turn (below)
over_soon        S * D                      186     over, times that chance
top              54                         54      cards of the group on top of the pile
dead             54                         54      every other card on the pile
opponents        7 * 64                     448     per opponent seat: present, in the game, to
                                                    move, hand size/7, score/limit, known points/70,
                                                    has discarded this round, the highest card of
                                                    its last discard/10, drew from the deck since,
                                                    the odds that its total Assafs the observer's
                                                    (below), then the 54 cards it was seen taking
                                                    from the pile and still holds
self             20                         20      score/limit, hand total/70, may call Yaniv, to
                                                    move, hand size/7, deck size/54, slamdown
                                                    pending, turn/100 (capped at 1), the odds that
                                                    a Yaniv call now is Assafed, then total <= t
                                                    for t = 0..10 (eleven steps)
settings         22                         22      threshold/10, Assaf on equal, penalty/50, per-
                                                    Assafer, flat, halve, subtract, limit/300,
                                                    first-over end, a game of one round, jokers/2,
                                                    jokers in sets,
                                                    jokers drawable from runs, set ends only,
                                                    slamdown, players one-hot (2..8)
===============  =========================  ======  ==============================================

The observation is a function of the observer's ``yaniv.PlayerView`` and nothing else:
``Observer.observe(view)`` and ``Observer.action_mask(view)``. Within a segment, every feature
has a name, and the code writes and reads it by name: ``SLOT``, ``DISCARD_FIELDS``, ``DRAW``,
``OPPONENT`` and ``SELF`` hold each feature's index (``OPPONENT.assaf_odds``), ``SETTINGS`` maps
each settings feature to the ``Rules`` field it reads, and ``SETTINGS_NOT_OBSERVED`` names the
fields left out and why (a test makes every field of ``Rules`` choose one or the other).
``observation_size(H)`` is the length of the vector; no other place types it as a number.

The Assaf odds are ``yaniv.odds.at_most``: an opponent's total is its known cards plus its hidden
ones, which it kept through its last discard (``yaniv.game.last_discards``: so they are unlikely to
beat that discard's highest card), bar the card it drew from the deck since. A call is Assafed
when some opponent holds at most the observer's total (less than it when ``assaf_on_equal`` is
off), each opponent independently. The step features ``total <= t`` make the threshold a policy
acts on plain to read; the total alone, at a seventieth per point, hides it.

The reset and over segments price each move by the score it would leave: whether the observer's
score plus the hand a move leaves lands exactly on a reset value (halved, with the default rules)
or passes the limit (``Rules.score_stakes``). They are zero when no move can reach a reset value or
the limit, always so in a round that starts from zero scores, and in a game of one round, which
the round's points decide. What a move's score does counts only
if the round ends before the observer's next turn, and reset_soon and over_soon weigh reset and
over by that chance (``yaniv.odds.round_end_chance``). Why not leave the sums to the network: each
is an exact sum over three inputs at different scales, and products of inputs are hard for an MLP;
a copy of the score-aware heuristic kept its teacher's edge only with these segments
(docs/experiments.md, 2026-11-30).

Version: ``LAYOUT_VERSION`` names this layout and action table; the AEC environment's name, the
Gym id and an exported bot's ``bot.json`` all carry it. Bump it whenever either changes.
"""

from __future__ import annotations

from array import array
from collections import namedtuple
from functools import lru_cache
from typing import Any, Callable, Final

import numpy as np

from yaniv.cards import NUM_CARDS, NUM_RANKS, NUM_STANDARD, NUM_SUITS, POINTS, RANK, SUIT
from yaniv.game import DECK, DISCARD, KEEP, OVER, PLAY, SLAMDOWN, SLAMDOWN_PHASE, YANIV, Move, PlayerView, last_discards
from yaniv.melds import classify, legal_discards, most_drawable
from yaniv.odds import MAX_TOTAL, at_most, round_end_chance
from yaniv.rules import MAX_HAND, Rules

LAYOUT_VERSION: Final = 5  # bump whenever the observation layout or the action table changes
MAX_SEATS: Final = 8
MAX_DRAWABLE: Final = 5
DRAW_SOURCES: Final = 1 + MAX_DRAWABLE  # the deck, then up to five drawable pile cards
POINT_SCALE: Final = 70.0  # the most points a hand can hold (seven ten-point cards)
TOTAL_STEPS: Final = 11  # self features total <= t, t = 0..10


def _fields(name: str, names: tuple[str, ...]) -> Any:
    """A named tuple whose field ``f`` holds its own index: ``OPPONENT.score`` is where an opponent
    block keeps its score. The offsets are named once here and read by name everywhere."""
    return namedtuple(name, names)(*range(len(names)))


# One hand slot: present, points/10, rank one-hot (13 ranks + the joker rank), suit one-hot (4
# suits + the joker suit), and whether it is the card awaiting a slamdown decision.
SLOT = _fields("SlotFeatures", ("present", "points", *(f"rank_{r}" for r in range(NUM_RANKS + 1)),
                                *(f"suit_{s}" for s in range(NUM_SUITS + 1)), "pending"))
DISCARD_FIELDS = _fields("DiscardFeatures", ("legal", "shed", "left"))
DRAW = _fields("DrawFeatures", ("open", "points", "pairs", "run_material", "joker"))
OPPONENT = _fields("OpponentFeatures", (
    "present", "in_game", "to_move", "hand_size", "score", "known_points", "has_discarded", "last_discard_high",
    "drew_from_deck", "assaf_odds",
))  # then the 54 cards it was seen taking from the pile and still holds
SELF = _fields("SelfFeatures", (
    "score", "total", "may_call", "to_move", "hand_size", "deck_size", "slamdown_pending", "turn", "assafed_odds",
    *(f"total_le_{t}" for t in range(TOTAL_STEPS)),
))

SLOT_FEATURES: Final = len(SLOT)
DISCARD_FEATURES: Final = len(DISCARD_FIELDS)
DRAW_FEATURES: Final = len(DRAW)
OPPONENT_SCALARS: Final = len(OPPONENT)
OPPONENT_FEATURES: Final = OPPONENT_SCALARS + NUM_CARDS
SELF_FEATURES: Final = len(SELF)

# The rule settings as observed: (feature, the Rules field it reads, its value in [0, 1]). Every
# field of ``Rules`` is either here or in SETTINGS_NOT_OBSERVED with the reason (a test checks).
SETTINGS: Final[tuple[tuple[str, str, Callable[[Rules], float]], ...]] = (
    ("yaniv_threshold", "yaniv_threshold", lambda r: min(r.yaniv_threshold / 10, 1.0)),
    ("assaf_on_equal", "assaf_on_equal", lambda r: r.assaf_on_equal),
    ("assaf_penalty_points", "assaf_penalty_points", lambda r: min(r.assaf_penalty_points / 50, 1.0)),
    ("per_assafer", "assaf_penalty", lambda r: r.assaf_penalty == "per_assafer"),
    ("flat_assaf", "assaf_penalty", lambda r: r.assaf_penalty == "flat"),
    ("halve", "score_reset", lambda r: r.score_reset == "halve"),
    ("subtract", "score_reset", lambda r: r.score_reset == "subtract"),
    ("score_limit", "score_limit", lambda r: min(r.score_limit / 300, 1.0)),
    ("first_over", "game_end", lambda r: r.game_end == "first_over"),
    ("one_round", "game_end", lambda r: r.game_end == "one_round"),
    ("jokers", "jokers", lambda r: r.jokers / 2),
    ("jokers_in_sets", "jokers_in_sets", lambda r: r.jokers_in_sets),
    ("draw_run_jokers", "draw_from_run", lambda r: r.draw_from_run == "ends_and_jokers"),
    ("draw_set_ends", "draw_from_set", lambda r: r.draw_from_set == "ends"),
    ("slamdown", "slamdown", lambda r: r.slamdown),
)
SETTINGS_NOT_OBSERVED: Final = {
    "assaf_points_per_assafer": "layout 5 leaves it out; the Assaf penalty and its kind are observed",
    "score_reset_at": "its effect on each move is observed (the reset and over segments)",
    "score_reset_subtract": "its effect on each move is observed (the reset and over segments)",
    "hand_size": "fixed by the layout itself (the slots and the action table)",
    "max_turns": "a cap for simulation, not a rule a player plays to; the turn is observed",
    "min_set_with_jokers": "layout 5 leaves it out; the legal moves and the mask carry it (the discards segment)",
    "max_set_size": "layout 5 leaves it out; the legal moves and the mask carry it (the discards segment)",
    "discarder_places_jokers": "the environments refuse it: an action id names a set of slots, not their order",
    "next_round_starter": "layout 5 leaves it out; it decides who moves first in the next round, which the "
                          "observation shows when it comes",
}
SETTINGS_FEATURES: Final = len(SETTINGS) + (MAX_SEATS - 1)  # then the player count one-hot, 2..8


def observation_layout(hand_size: int) -> list[tuple[str, int]]:
    """The observation's segments, in order, as (name, size)."""
    subsets = 2**hand_size - 1
    return [
        ("hand", NUM_CARDS),
        ("slots", hand_size * SLOT_FEATURES),
        ("discards", subsets * DISCARD_FEATURES),
        ("draws", DRAW_SOURCES * DRAW_FEATURES),
        ("reset", subsets * DRAW_SOURCES),
        ("over", subsets * DRAW_SOURCES),
        ("reset_soon", subsets * DRAW_SOURCES),
        ("over_soon", subsets * DRAW_SOURCES),
        ("top", NUM_CARDS),
        ("dead", NUM_CARDS),
        ("opponents", (MAX_SEATS - 1) * OPPONENT_FEATURES),
        ("self", SELF_FEATURES),
        ("settings", SETTINGS_FEATURES),
    ]


def segment_offsets(hand_size: int) -> dict[str, int]:
    """Where each segment of ``observation_layout(hand_size)`` starts."""
    offsets, at = {}, 0
    for name, size in observation_layout(hand_size):
        offsets[name] = at
        at += size
    return offsets


def hand_size_for(size: int) -> int:
    """The hand size whose observation has ``size`` entries; ValueError if none has."""
    for hand_size in range(1, MAX_HAND + 1):
        if observation_size(hand_size) == size:
            return hand_size
    raise ValueError(f"no observation layout has {size} entries")


def observation_size(hand_size: int) -> int:
    """The length of the observation vector with hands of ``hand_size`` cards."""
    return sum(size for _, size in observation_layout(hand_size))


def _card_features() -> np.ndarray:
    rows = np.zeros((NUM_CARDS, SLOT_FEATURES), dtype=np.float32)
    for c in range(NUM_CARDS):
        rows[c, SLOT.present] = 1.0
        rows[c, SLOT.points] = POINTS[c] / 10
        rows[c, SLOT.rank_0 + RANK[c]] = 1.0
        rows[c, SLOT.suit_0 + SUIT[c]] = 1.0
    return rows  # the pending column is set per observation


CARD_FEATURES: Final = _card_features()
CARD_ROWS: Final = tuple(array("f", row.tolist()) for row in CARD_FEATURES)  # one slot's block, per card


class ActionTable:
    """The action ids for one hand size. Built once per hand size: use ``action_table(H)``."""

    def __init__(self, hand_size: int) -> None:
        if not isinstance(hand_size, int) or not 1 <= hand_size <= MAX_HAND:
            raise ValueError(f"hand_size must be 1..{MAX_HAND}, got {hand_size!r}")
        self.hand_size = hand_size
        self.num_subsets = 2**hand_size - 1
        self.num_discard_actions = self.num_subsets * DRAW_SOURCES
        self.yaniv = self.num_discard_actions
        self.slamdown = self.yaniv + 1
        self.keep = self.yaniv + 2
        self.size = self.yaniv + 3
        # slots of each subset mask (index m - 1)
        self.subset_slots: tuple[tuple[int, ...], ...] = tuple(
            tuple(i for i in range(hand_size) if m >> i & 1) for m in range(1, self.num_subsets + 1)
        )

    def check(self, action: object) -> int:
        """``action`` as a plain int if it is an action id: an int or a numpy integer (a 0-d integer
        array too), from 0 to ``size - 1``. ValueError naming the value otherwise: a float, a bool, a
        string or None is not an action id, even when it would round to one."""
        if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
            action = action.item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"an action is an integer id from 0 to {self.size - 1}, got {action!r} "
                             f"({type(action).__name__})")
        if not 0 <= action < self.size:
            raise ValueError(f"action {action} is out of range 0..{self.size - 1}")
        return int(action)

    def describe(self, action: int) -> str:
        """A readable name for an action id: "discard slots (0, 2), draw source 1"."""
        if not 0 <= action < self.size:
            return f"action {action} (out of range 0..{self.size - 1})"
        if action == self.yaniv:
            return "call Yaniv"
        if action == self.slamdown:
            return "slamdown"
        if action == self.keep:
            return "keep (no slamdown)"
        subset, source = divmod(action, DRAW_SOURCES)
        draw = "the deck" if source == 0 else f"pile card {source}"
        return f"discard slots {self.subset_slots[subset]}, draw from {draw}"

    def to_move(self, action: int, view: PlayerView) -> Move:
        """The engine move for an action id, in the position ``view`` shows its player (the one to
        move); ValueError if it names nothing."""
        if not 0 <= action < self.size:
            raise ValueError(f"action {action} is out of range 0..{self.size - 1}")
        if action == self.yaniv:
            return YANIV
        if action == self.slamdown:
            return SLAMDOWN
        if action == self.keep:
            return KEEP
        subset, source = divmod(action, DRAW_SOURCES)
        hand = view.hand
        slots = self.subset_slots[subset]
        if slots[-1] >= len(hand):
            raise ValueError(
                f"action {action} ({self.describe(action)}) names slot {slots[-1]}, "
                f"but the hand holds {len(hand)} cards"
            )
        drawable = view.top.drawable
        if source == 0:
            draw = DECK
        elif source <= len(drawable):
            draw = drawable[source - 1]
        else:
            raise ValueError(
                f"action {action} ({self.describe(action)}) names pile card {source}, "
                f"but only {len(drawable)} may be drawn"
            )
        cards = tuple(hand[i] for i in slots)
        try:  # the canonical order, as in Game.legal_moves; an illegal discard keeps slot order
            cards = classify(cards, view.rules)[1]
        except ValueError:
            pass
        return Move(DISCARD, cards, draw)

    def to_action(self, move: Move, view: PlayerView) -> int:
        """The action id of a legal engine move in the position ``view`` shows its player."""
        if move.kind == "yaniv":
            return self.yaniv
        if move.kind == "slamdown":
            return self.slamdown
        if move.kind == "keep":
            return self.keep
        hand = view.hand
        mask = sum(1 << hand.index(c) for c in move.cards)
        source = 0 if move.draw == DECK else 1 + view.top.drawable.index(move.draw)
        return (mask - 1) * DRAW_SOURCES + source


@lru_cache(maxsize=None)
def action_table(hand_size: int) -> ActionTable:
    return ActionTable(hand_size)


class Observer:
    """Builds the observation and the action mask of one player's view, for one rule set and player count.

    ``observe(view)`` and ``action_mask(view)`` read a ``yaniv.PlayerView`` and nothing else, so
    the observation is by construction a function of what the player may know.
    """

    def __init__(self, rules: Rules, num_players: int) -> None:
        check_expressible(rules)
        self.rules = rules
        self.num_players = num_players
        self.table = action_table(rules.hand_size)
        self.layout = observation_layout(rules.hand_size)
        self.offsets = segment_offsets(rules.hand_size)
        self.size = observation_size(rules.hand_size)
        self.settings = settings_vector(rules, num_players)
        self.settings_array = array("f", self.settings.tolist())
        self._zeros = bytes(4 * self.size)
        self._mask_zeros = bytes(self.table.size)
        # The legal discards of the last hand seen, as (slot subset mask, points shed): the mask
        # and the observation of one turn both need them.
        self._subsets_hand: tuple[int, ...] | None = None
        self._subsets: list[tuple[int, int]] = []
        self._stakes_memo: dict[int, tuple[list[float], list[float]]] = {}

    def history_entries(self) -> np.ndarray:
        """A bool vector over the observation: the entries read off the round's history, not its
        state (each opponent's last discard, and the Assaf odds built on it). A game rebuilt from
        a ``yaniv.protocol`` state without history has none: they read as if nobody had discarded."""
        out = np.zeros(self.size, dtype=bool)
        for k in range(MAX_SEATS - 1):
            at = self.offsets["opponents"] + k * OPPONENT_FEATURES
            out[at + OPPONENT.has_discarded : at + OPPONENT.assaf_odds + 1] = True
        out[self.offsets["self"] + SELF.assafed_odds] = True
        return out

    def view(self, name: str, obs: np.ndarray) -> np.ndarray:
        """The named segment of an observation (a view, not a copy)."""
        size = dict(self.layout)[name]
        return obs[self.offsets[name] : self.offsets[name] + size]

    def discard_subsets(self, view: PlayerView) -> list[tuple[int, int]]:
        """(slot subset mask, points shed) of each legal discard of the view's hand."""
        hand = view.hand
        if hand != self._subsets_hand:
            slot = {c: 1 << i for i, c in enumerate(hand)}
            if view.legal_moves and view.phase == PLAY:  # the engine has them already, in its legal moves
                discards = list(dict.fromkeys(m.cards for m in view.legal_moves if m.kind == DISCARD))
            else:
                discards = legal_discards(hand, self.rules)
            self._subsets = [(sum(map(slot.__getitem__, d)), sum(map(POINTS.__getitem__, d))) for d in discards]
            self._subsets_hand = hand
        return self._subsets

    def _stakes(self, score: int) -> tuple[list[float], list[float]]:
        """Per hand total t: the points a reset takes off ``score + t`` (/100), and 1 if it is over the limit."""
        stakes = self._stakes_memo.get(score)
        if stakes is None:
            taken, passed = self.rules.score_stakes(score)
            reset = [min(x / 100, 1.0) for x in taken]
            over = [1.0 if o else 0.0 for o in passed]
            stakes = self._stakes_memo[score] = (reset, over)
        return stakes

    def _score_stakes(self, buf: array, view: PlayerView, total: int, unseen: list[int]) -> None:
        """The reset and over segments: what the hand each move leaves would do to the score (and
        reset_soon and over_soon, the same weighed by the chance that the round ends first)."""
        player = view.player
        reset, over = self._stakes(view.scores[player])
        reach = total + 11  # the largest total a move can leave, plus one
        if not (any(reset[:reach]) or any(over[:reach])):
            return
        r_off, o_off = self.offsets["reset"], self.offsets["over"]
        rs_off, os_off = self.offsets["reset_soon"], self.offsets["over_soon"]
        soon = round_end_chance(view.hand_sizes[q] for q in range(self.num_players) if q != player and view.alive[q])
        drawable = [POINTS[c] for c in view.top.drawable[:MAX_DRAWABLE]]
        deck: dict[int, tuple[float, float]] = {}
        counts: list[int] | None = None
        for subset, shed in self.discard_subsets(view):
            left = total - shed
            at = (subset - 1) * DRAW_SOURCES
            if view.deck_size and unseen:
                mean = deck.get(left)
                if mean is None:
                    if counts is None:
                        counts = [0] * (max(POINTS) + 1)
                        for c in unseen:
                            counts[POINTS[c]] += 1
                    r = sum(n * reset[left + v] for v, n in enumerate(counts) if n)
                    o = sum(n * over[left + v] for v, n in enumerate(counts) if n)
                    mean = deck[left] = (r / len(unseen), o / len(unseen))
                r, o = buf[r_off + at], buf[o_off + at] = mean
                buf[rs_off + at], buf[os_off + at] = soon * r, soon * o
            for i, v in enumerate(drawable, start=1):
                r, o = reset[left + v], over[left + v]
                buf[r_off + at + i], buf[o_off + at + i] = r, o
                buf[rs_off + at + i], buf[os_off + at + i] = soon * r, soon * o

    def action_mask(self, view: PlayerView) -> np.ndarray:
        """1 for each action id that is a legal move of the view's player now (all 0 when it is not to move)."""
        mask = bytearray(self._mask_zeros)
        if not view.legal_moves:
            pass
        elif view.phase == SLAMDOWN_PHASE:
            mask[self.table.slamdown] = mask[self.table.keep] = 1
        else:
            sources = range(0 if view.deck_size else 1, len(view.top.drawable) + 1)
            for m, _ in self.discard_subsets(view):
                base = (m - 1) * DRAW_SOURCES
                for s in sources:
                    mask[base + s] = 1
            if view.can_call_yaniv:
                mask[self.table.yaniv] = 1
        return np.frombuffer(mask, dtype=np.int8)

    def observe(self, view: PlayerView) -> np.ndarray:
        """The observation of the view's player: its hand and public information only.

        Written element by element into a zeroed ``array('f')`` that numpy then wraps without a
        copy: at a hundred or so non-zero entries, that beats any numpy scatter on this hot path.
        """
        rules = self.rules
        off = self.offsets
        player = view.player
        hand = view.hand
        total = sum(map(POINTS.__getitem__, hand))
        phase = view.phase
        to_move = player == view.current and phase != OVER
        may_draw = 1.0 if to_move and phase != SLAMDOWN_PHASE else 0.0
        buf = array("f", self._zeros)

        at = off["slots"]
        for c in hand:
            buf[c] = 1.0
            buf[at : at + SLOT_FEATURES] = CARD_ROWS[c]
            at += SLOT_FEATURES
        if to_move and phase == SLAMDOWN_PHASE:
            buf[off["slots"] + hand.index(view.pending) * SLOT_FEATURES + SLOT.pending] = 1.0

        # What each slot subset would do, if it is a legal discard.
        base = off["discards"]
        for subset, shed in self.discard_subsets(view):
            at = base + (subset - 1) * DISCARD_FEATURES
            buf[at + DISCARD_FIELDS.legal] = 1.0
            buf[at + DISCARD_FIELDS.shed] = shed / POINT_SCALE
            buf[at + DISCARD_FIELDS.left] = (total - shed) / POINT_SCALE

        # The pile: the top group and the dead cards under it; the cards nobody has seen.
        top = view.top
        dead_off, top_off = off["dead"], off["top"]
        for c in view.dead:
            buf[dead_off + c] = 1.0
        for c in top.cards:
            buf[top_off + c] = 1.0
        unseen = view.unseen_cards()

        # Draw sources: the deck, then the top group's drawable cards.
        d = off["draws"]
        buf[d + DRAW.open] = may_draw if view.deck_size else 0.0
        buf[d + DRAW.points] = sum(map(POINTS.__getitem__, unseen)) / len(unseen) / 10 if unseen else 0.0
        if top.drawable:
            hand_ranks = {RANK[c] for c in hand}
            for i, c in enumerate(top.drawable[:MAX_DRAWABLE], start=1):
                at = d + i * DRAW_FEATURES
                buf[at + DRAW.open] = may_draw
                if c >= NUM_STANDARD:
                    buf[at + DRAW.joker] = 1.0
                    continue
                buf[at + DRAW.points] = POINTS[c] / 10
                if RANK[c] in hand_ranks:
                    buf[at + DRAW.pairs] = 1.0
                suit, rank = SUIT[c], RANK[c]
                if any(SUIT[h] == suit and 0 < abs(RANK[h] - rank) <= 2 for h in hand):
                    buf[at + DRAW.run_material] = 1.0

        if to_move and phase == PLAY:
            self._score_stakes(buf, view, total, unseen)

        # Opponents in turn order after the observer; absent seats stay zero.
        n = self.num_players
        limit = rules.score_limit
        current = view.current if phase != OVER else -1
        last = last_discards(view.events, sum(view.alive))
        jokers = rules.jokers
        below = total - (0 if rules.assaf_on_equal else 1)  # an opponent at most this Assafs a call
        safe = 1.0
        for k in range(1, n):
            q = (player + k) % n
            at = off["opponents"] + (k - 1) * OPPONENT_FEATURES
            buf[at + OPPONENT.present] = 1.0
            alive = view.alive[q]
            if alive:
                buf[at + OPPONENT.in_game] = 1.0
            if q == current:
                buf[at + OPPONENT.to_move] = 1.0
            size = view.hand_sizes[q]
            buf[at + OPPONENT.hand_size] = size / MAX_HAND
            buf[at + OPPONENT.score] = min(view.scores[q] / limit, 1.0)
            seen = view.known[q]
            room = below
            if seen:
                points = sum(map(POINTS.__getitem__, seen))
                room -= points
                buf[at + OPPONENT.known_points] = points / POINT_SCALE
                for c in seen:
                    buf[at + OPPONENT_SCALARS + c] = 1.0
            event = last.get(q)
            cap, fresh = (-1, 0) if event is None else (max(map(POINTS.__getitem__, event.cards)), int(event.drew == DECK))
            if cap >= 0:
                buf[at + OPPONENT.has_discarded] = 1.0
                buf[at + OPPONENT.last_discard_high] = cap / 10
                buf[at + OPPONENT.drew_from_deck] = fresh
            if alive and room >= 0:
                hidden = size - len(seen)
                plain = min(fresh, hidden)  # a slamdown may have thrown the card it drew
                p = at_most(jokers, cap, plain, hidden - plain)[min(room, MAX_TOTAL)]
                buf[at + OPPONENT.assaf_odds] = p
                safe *= 1.0 - p

        at = off["self"]
        buf[at + SELF.score] = min(view.scores[player] / limit, 1.0)
        buf[at + SELF.total] = total / POINT_SCALE
        buf[at + SELF.may_call] = 1.0 if view.can_call_yaniv else 0.0
        buf[at + SELF.to_move] = 1.0 if to_move else 0.0
        buf[at + SELF.hand_size] = len(hand) / MAX_HAND
        buf[at + SELF.deck_size] = view.deck_size / NUM_CARDS
        buf[at + SELF.slamdown_pending] = 1.0 if to_move and phase == SLAMDOWN_PHASE else 0.0
        buf[at + SELF.turn] = min(view.turn / 100, 1.0)
        buf[at + SELF.assafed_odds] = 1.0 - safe
        for t in range(max(total, 0), TOTAL_STEPS):
            buf[at + SELF.total_le_0 + t] = 1.0
        buf[off["settings"] :] = self.settings_array
        return np.frombuffer(buf, dtype=np.float32)


def check_expressible(rules: Rules) -> None:
    """ValueError naming the setting if the action table cannot express every legal move under ``rules``."""
    if rules.discarder_places_jokers:
        raise ValueError("rules.discarder_places_jokers is not supported by the environments: an action id names a "
                         "set of hand slots, not the order that says where a joker stands (play these rules "
                         "through yaniv.Game and the bots)")
    if most_drawable(rules) > MAX_DRAWABLE:
        raise ValueError(f"rules: a group on the pile could offer {most_drawable(rules)} cards to draw "
                         f"(max_set_size={rules.max_set_size} with draw_from_set={rules.draw_from_set!r}), more "
                         f"than the {MAX_DRAWABLE} pile draw sources of the action table")


def settings_vector(rules: Rules, num_players: int) -> np.ndarray:
    """The settings segment: each of ``SETTINGS`` in order, then the player count one-hot (2..8)."""
    v = np.zeros(SETTINGS_FEATURES, dtype=np.float32)
    v[: len(SETTINGS)] = [float(value(rules)) for _, _, value in SETTINGS]
    v[len(SETTINGS) + num_players - 2] = 1.0
    return v
