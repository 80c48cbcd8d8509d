"""The Yaniv game: explicit state, legal moves, one transition function, scoring.

A ``Game`` holds one round in progress plus the scores of the game around it. It changes only
through ``apply(move)``, which checks the move first: an illegal move raises ``ValueError`` saying
why and leaves the state exactly as it was. Card ids and draws are plain ``int`` (a bool, a float
or a numpy integer is refused by name), so the state holds plain ints only.

Moves (``Move``) are small tuples:

* ``YANIV``: call Yaniv (start of the turn only, hand total at most the threshold);
* ``Move.discard(cards, draw)``: discard ``cards`` (a legal group, see ``yaniv.melds``) then draw
  ``draw``: ``DECK`` for the top of the deck, or the id of a drawable card of the group the
  previous player discarded;
* ``SLAMDOWN`` / ``KEEP``: with ``rules.slamdown``, after a deck draw that matches the group just
  thrown, the same player decides whether to throw the drawn card onto it.

All randomness comes from one seeded ``numpy.random.Generator``: the same seed and the same moves
give the same game, bit for bit. A full game deals the next round itself when a round ends (the
round's winner starts it, or as ``Rules.next_round_starter`` says); ``single_round=True`` stops after
one round (a round cut from a game, as a training episode), and so does a game whose rules say it
is one round (``game_end="one_round"``, which leaves no one eliminated). Each finished round leaves
a ``RoundResult`` in ``results``.

Public information lives in the state on its own terms (``pile``, ``events``, ``known``,
``hand_sizes``, ``scores``) and ``view(player)`` bundles exactly what one player may know; what
every reader of a view needs is said once, here: ``PlayerView.can_call_yaniv`` (the right itself
is ``Rules.may_call_yaniv``), ``PlayerView.unseen_cards()``, ``PlayerView.dead`` and
``last_discards(events)``. ``sample_hidden(player, rng)`` deals the cards that player cannot see
anew, consistently with everything it has seen, for search bots. ``Game.from_position(...)``
places every card by hand: for tests, puzzles and lessons.
"""

from __future__ import annotations

from bisect import insort
from collections import defaultdict
from dataclasses import dataclass
from typing import Final, NamedTuple, Sequence

import numpy as np

from yaniv.cards import NUM_CARDS, POINTS, SORT_KEY, cards_str, deck_cards, hand_points, sort_hand
from yaniv.melds import SINGLE, Group, add_slamdown, classify, drawable_cards, legal_discards, slamdown_extends
from yaniv.rules import MAX_HAND, Rules, get_rules, lowest_hand

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 8

DECK: Final = -1  # draw source: the top of the deck

# Move kinds.
DISCARD: Final = "discard"
CALL: Final = "yaniv"
SLAM: Final = "slamdown"
KEEP_CARD: Final = "keep"

# Phases.
PLAY: Final = "play"
SLAMDOWN_PHASE: Final = "slamdown"
OVER: Final = "over"

# Event kinds in ``Game.events`` (this round's public history), besides the move kinds.
RESHUFFLE: Final = "reshuffle"
STATE: Final = "state"  # the record starts mid-round (a game rebuilt from a protocol state)


_new = tuple.__new__


class Move(NamedTuple):
    """One decision. Build discards with ``Move.discard``; the other moves are constants."""

    kind: str
    cards: tuple[int, ...] = ()
    draw: int = DECK

    @classmethod
    def discard(cls, cards: Sequence[int], draw: int = DECK) -> "Move":
        return cls(DISCARD, tuple(cards), draw)


YANIV: Final = Move(CALL)
SLAMDOWN: Final = Move(SLAM)
KEEP: Final = Move(KEEP_CARD)


class Event(NamedTuple):
    """One public happening of the round: a discard (with its draw), a slamdown, a call, a reshuffle.

    ``drew`` is the card taken from the pile, or ``DECK`` (the card stays hidden). A round whose
    beginning is not on record (rebuilt from a ``yaniv.protocol`` state) opens with one ``STATE``
    event per seat: ``cards`` are the seat's cards known to all, ``drew`` the count of its other
    (hidden) cards, all of them dealt from one shuffled deck.
    """

    kind: str
    player: int
    cards: tuple[int, ...]
    drew: int = DECK


class RoundResult(NamedTuple):
    """How a round ended. ``caller`` is None and ``winners`` empty when the turn cap ended it."""

    caller: int | None
    hands: tuple[tuple[int, ...], ...]  # every seat's hand at the end (empty for seats out of the game)
    totals: tuple[int, ...]
    points: tuple[int, ...]  # points added this round, before resets
    winners: tuple[int, ...]
    assafers: tuple[int, ...]
    resets: tuple[int, ...]  # seats whose score was reset (halved or reduced) this round
    scores: tuple[int, ...]  # cumulative scores after the round
    eliminated: tuple[int, ...]  # seats eliminated by this round
    turns: int


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Everything one player may know, and nothing else. Observations are built from this."""

    player: int
    rules: Rules
    phase: str
    current: int  # the seat to move
    hand: tuple[int, ...]  # in hand order
    pending: int | None  # the drawn card awaiting the slamdown decision, if it is this player's
    top: Group  # the group on top of the pile (what the player to move may draw from)
    pile: tuple[int, ...]  # every card on the discard pile, the top group included
    events: tuple[Event, ...]  # this round's public history
    known: tuple[frozenset[int], ...]  # per seat: cards seen taken from the pile and still held
    hand_sizes: tuple[int, ...]
    scores: tuple[int, ...]
    alive: tuple[bool, ...]
    deck_size: int
    turn: int
    round_number: int
    legal_moves: tuple[Move, ...]  # empty unless this player is to move

    @property
    def num_players(self) -> int:
        return len(self.scores)

    @property
    def can_call_yaniv(self) -> bool:
        """Whether this player may call Yaniv now (it is to move and ``Rules.may_call_yaniv`` holds)."""
        return YANIV in self.legal_moves

    @property
    def dead(self) -> tuple[int, ...]:
        """The pile's cards under its top group: nobody may draw them any more."""
        return self.pile[: len(self.pile) - len(self.top.cards)]

    def unseen_cards(self) -> list[int]:
        """The cards this player has not seen, in id order: not in its hand, not on the pile, not seen
        taken into another hand. They are in the deck or hidden in the opponents' hands."""
        seen = set(self.hand)
        seen.update(self.pile)
        for q, cards in enumerate(self.known):
            if q != self.player:
                seen.update(cards)
        return [c for c in deck_cards(self.rules.jokers) if c not in seen]


MOVE_KINDS: Final = (DISCARD, CALL, SLAM, KEEP_CARD)


def _check_move(move: object, hand_size: int) -> tuple[str, tuple[int, ...], int]:
    """``move``'s fields, each checked for its type before any state is read or changed.

    A move is a (kind, cards, draw) triple; the kind is one of ``MOVE_KINDS``; a call or a slamdown
    decision carries no cards and draws nothing (``()`` and ``DECK``); a discard's cards are a tuple
    of plain ``int`` card ids, no more than the hand holds, and its draw a plain ``int`` (``DECK`` or
    a card id). A bool, a float (5.0 == 5 would pass a membership test and then fail half-way) or a
    numpy integer is refused by name: the state stores plain ints only. Legality in the position
    (held cards, a legal group, a drawable card) is checked afterwards, by the caller.
    """
    try:
        kind, cards, draw = move  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"a move is (kind, cards, draw), got {move!r}"[:300]) from None
    if type(kind) is not str or kind not in MOVE_KINDS:
        raise ValueError(f"unknown move kind {kind!r}; expected one of {', '.join(map(repr, MOVE_KINDS))}"[:300])
    if kind != DISCARD:
        if not (type(cards) is tuple and not cards and type(draw) is int and draw == DECK):
            raise ValueError(f"{kind!r} carries no cards and no draw (cards (), draw DECK), got cards "
                             f"{cards!r} and draw {draw!r}"[:300])
        return kind, cards, draw
    if type(cards) is not tuple:
        raise ValueError(f"a discard's cards must be a tuple of card ids, got {type(cards).__name__} {cards!r}"[:300])
    if len(cards) > hand_size:
        raise ValueError(f"a discard of {len(cards)} cards, but the hand holds {hand_size}")
    strangers = [c for c in cards if type(c) is not int]
    if strangers:
        c = strangers[0]
        raise ValueError(f"card ids are plain integers (int), got {c!r} ({type(c).__module__}.{type(c).__name__})"
                         f" in the discard's cards"[:300])
    if type(draw) is not int:
        raise ValueError(f"the draw is DECK ({DECK}) or a card id, a plain integer (int), got {draw!r} "
                         f"({type(draw).__module__}.{type(draw).__name__})"[:300])
    return kind, cards, draw


def last_discards(events: Sequence[Event], seats: int = MAX_PLAYERS) -> dict[int, Event]:
    """Per seat that has discarded in this round's record ``events``, its last discard event.

    What a player threw last bounds what it kept (a player sheds its high cards first): the
    heuristic and search bots, and the observation's opponent features, read it from here. The
    record is read backwards and the reading stops once ``seats`` seats (the seats in the game)
    are found: every seat discards once a lap, so one lap back is enough.
    """
    out: dict[int, Event] = {}
    for event in reversed(events):
        if event.kind == DISCARD and event.player not in out:
            out[event.player] = event
            if len(out) == seats:
                break
    return out


class Game:
    """A game of Yaniv in progress. See the module docstring."""

    __slots__ = (
        "rules", "num_players", "single_round", "rng",
        "hands", "totals", "deck", "pile", "known", "scores", "alive",
        "current", "phase", "pending", "starter", "turn", "round_number",
        "events", "pools", "results", "winners", "_discards", "_views",
    )

    def __init__(
        self,
        num_players: int = 2,
        rules: str | Rules | None = None,
        seed: int | np.random.Generator | None = None,
        *,
        single_round: bool = False,
        scores: Sequence[int] | None = None,
        starter: int = 0,
    ) -> None:
        self.rules = rules = get_rules(rules)
        if type(num_players) is not int or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}, got {num_players!r}")
        deck_size = len(deck_cards(rules.jokers))
        if num_players * rules.hand_size + 1 > deck_size:
            raise ValueError(
                f"{num_players} players x {rules.hand_size} cards + 1 face-up card need more than the "
                f"{deck_size} cards of the deck"
            )
        self._seat_table(num_players, single_round, seed, scores, starter)
        self.round_number = 0
        self._deal(starter)

    def _seat_table(
        self, num_players: int, single_round: bool, seed: int | np.random.Generator | None,
        scores: Sequence[int] | None, starter: int,
    ) -> None:
        """The game-level state before a deal, every value checked: players, scores, who is still in."""
        rules = self.rules
        self.num_players = num_players
        self.single_round = single_round
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        scores = [0] * num_players if scores is None else list(scores)
        if len(scores) != num_players or any(type(s) is not int or s < 0 for s in scores):
            raise ValueError(f"scores must be {num_players} integers >= 0, got {scores!r}")
        self.scores = scores
        self.alive = [s <= rules.score_limit for s in scores]
        if sum(self.alive) < 2:
            raise ValueError(f"at least two players must be at or under the score limit {rules.score_limit}")
        if type(starter) is not int or not (0 <= starter < num_players and self.alive[starter]):
            raise ValueError(f"starter must be a seat still in the game, got {starter!r}")
        seats = sum(self.alive)
        dealt = lowest_hand(rules, rules.hand_size)
        capped_first_turns = rules.max_turns is not None and rules.max_turns <= seats
        if not self.one_round and capped_first_turns and rules.yaniv_threshold < dealt:
            raise ValueError(
                f"Rules.max_turns={rules.max_turns} with {seats} seats in the game and Rules.yaniv_threshold="
                f"{rules.yaniv_threshold}: nobody plays a second turn before the cap and no dealt hand of "
                f"{rules.hand_size} cards totals less than {dealt}, so no round could be won and the game could "
                "not end (play single rounds, or raise the cap or the threshold)"
            )
        self.results: list[RoundResult] = []
        self.winners: tuple[int, ...] = ()

    @classmethod
    def from_position(
        cls,
        hands: Sequence[Sequence[int]],
        pile: Sequence[Sequence[int]],
        deck: Sequence[int],
        rules: str | Rules | None = None,
        *,
        top_by: int | None = None,
        current: int = 0,
        scores: Sequence[int] | None = None,
        known: Sequence[Sequence[int]] | None = None,
        single_round: bool = False,
        seed: int | np.random.Generator | None = None,
    ) -> "Game":
        """A game at the start of ``current``'s turn, every card placed by hand: for tests, puzzles and
        lessons. ValueError naming the problem if the position cannot be.

        ``hands``   per seat, its cards (empty for a seat out of the game: its score is over the limit);
        ``pile``    the discarded groups, bottom first; the last is the top group (a legal group whose
                    drawable cards follow from the rules), the ones under it are dead;
        ``deck``    the deck's cards, the first drawn first;
        ``top_by``  the seat that threw the top group (default: the seat before ``current``);
        ``known``   per seat, the cards of its hand that everyone saw it take from the pile (default: none).

        Cards left out of all three are out of play. The round's record is empty, and it is turn 0
        of round 1; the rest is as in ``Game(...)``.
        """
        g = cls.__new__(cls)
        g.rules = rules = get_rules(rules)
        n = len(hands)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(f"a position needs {MIN_PLAYERS} to {MAX_PLAYERS} hands, got {n}")
        g._seat_table(n, single_round, seed, scores, current)
        if not pile or not pile[-1]:
            raise ValueError("a position needs a pile with a group on top")
        full = deck_cards(rules.jokers)
        placed = [c for h in hands for c in h] + [c for group in pile for c in group] + list(deck)
        strangers = [c for c in placed if type(c) is not int or c not in full]
        if strangers:
            raise ValueError(f"cards {strangers!r} are not in a deck with {rules.jokers} joker(s)")
        twice = sorted({c for c in placed if placed.count(c) > 1})
        if twice:
            raise ValueError(f"cards placed twice: {cards_str(twice)}")
        for q, hand in enumerate(hands):
            if g.alive[q] != bool(hand) or len(hand) > MAX_HAND:
                raise ValueError(f"seat {q} holds {len(hand)} cards: a seat in the game holds 1 to "
                                 f"{MAX_HAND}, a seat out of it none")
        if top_by is None:
            top_by = g._previous_seat(current)
        g.hands = [sort_hand(h) for h in hands]
        g.totals = [hand_points(h) for h in g.hands]
        groups = [classify(tuple(group), rules) for group in pile]  # raises naming a group that is not one
        groups_on_pile = [Group(ordered, kind, -1, ()) for kind, ordered in groups[:-1]]  # dead: nothing drawable
        kind, ordered = groups[-1]
        groups_on_pile.append(Group(ordered, kind, top_by, drawable_cards(kind, ordered, rules)))
        g.round_number = 1
        g._open_round(current, list(reversed(deck)), groups_on_pile, full)  # the deck is drawn from the end
        if known is not None:
            if len(known) != n or any(not set(seen) <= set(hand) for seen, hand in zip(known, hands)):
                raise ValueError(f"known must give, for each of the {n} seats, cards of its own hand; got {known!r}")
            g.known = [set(seen) for seen in known]
        return g

    # ------------------------------------------------------------------------------------------
    # Reading the state
    # ------------------------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def one_round(self) -> bool:
        """Whether the game ends with its first round: a single round (``single_round``, an episode
        cut from a game) or a game of one round (``Rules.game_end = "one_round"``)."""
        return self.single_round or self.rules.one_round

    @property
    def top(self) -> Group:
        """The group on top of the pile: at the start of a turn, the previous player's discard."""
        return self.pile[-1]

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(len(h) for h in self.hands)

    @property
    def deck_size(self) -> int:
        return len(self.deck)

    def pile_cards(self) -> tuple[int, ...]:
        return tuple(c for group in self.pile for c in group.cards)

    def can_call_yaniv(self) -> bool:
        """Whether the player to move may call Yaniv now (``Rules.may_call_yaniv``)."""
        return self.phase == PLAY and self.rules.may_call_yaniv(self.totals[self.current])

    def legal_discards(self) -> list[tuple[int, ...]]:
        """The legal discards of the player to move (computed once per turn)."""
        if self._discards is None:
            self._discards = legal_discards(self.hands[self.current], self.rules) if self.phase == PLAY else []
        return self._discards

    def legal_draws(self) -> tuple[int, ...]:
        """The draw sources open to the player to move: DECK (if it has cards) then the top group's drawable cards."""
        if self.phase != PLAY:
            return ()
        return ((DECK,) if self.deck else ()) + self.pile[-1].drawable

    def legal_moves(self) -> list[Move]:
        """Every legal move of the player to move, in a fixed order."""
        if self.phase == SLAMDOWN_PHASE:
            return [SLAMDOWN, KEEP]
        if self.phase != PLAY:
            return []
        draws = self.legal_draws()
        moves = [YANIV] if self.can_call_yaniv() else []
        moves += [_new(Move, (DISCARD, d, s)) for d in self.legal_discards() for s in draws]
        return moves

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know: its own hand, and the public information.

        A view is immutable and the state changes only through ``apply``, so the views of one state
        are kept until the next move: the environment's observation and its step share one."""
        if type(player) is not int or not 0 <= player < self.num_players:
            raise ValueError(f"player must be a seat from 0 to {self.num_players - 1}, got {player!r}")
        view = self._views.get(player)
        if view is not None:
            return view
        to_move = player == self.current and self.phase != OVER
        view = self._views[player] = PlayerView(
            player=player,
            rules=self.rules,
            phase=self.phase,
            current=self.current,
            hand=tuple(self.hands[player]),
            pending=self.pending if to_move else None,
            top=self.pile[-1],
            pile=self.pile_cards(),
            events=tuple(self.events),
            known=tuple(frozenset(k) for k in self.known),
            hand_sizes=self.hand_sizes,
            scores=tuple(self.scores),
            alive=tuple(self.alive),
            deck_size=len(self.deck),
            turn=self.turn,
            round_number=self.round_number,
            legal_moves=tuple(self.legal_moves()) if to_move else (),
        )
        return view

    # ------------------------------------------------------------------------------------------
    # The transition
    # ------------------------------------------------------------------------------------------

    def apply(self, move: Move) -> None:
        """Play ``move`` for the player to move. ValueError (state untouched) if it is illegal.

        Every field is checked before the state changes (``_check_move``): card ids and the draw
        are plain ints (not bools, floats or numpy integers), and a call or a slamdown decision
        carries no cards and no draw.
        """
        kind, cards, draw = _check_move(move, len(self.hands[self.current]))
        self._views = {}  # the views of this state (see ``view``); an illegal move only costs them
        if self.phase == OVER:
            raise ValueError("the game is over; no move can be played")
        if self.phase == SLAMDOWN_PHASE:
            if kind == SLAM:
                return self._slamdown()
            if kind == KEEP_CARD:
                return self._end_turn()
            raise ValueError(f"player {self.current} must decide on the slamdown first (SLAMDOWN or KEEP), not {kind!r}")
        if kind == CALL:
            total = self.totals[self.current]
            if not self.rules.may_call_yaniv(total):
                raise ValueError(
                    f"player {self.current} cannot call Yaniv: the hand totals {total}, "
                    f"above the threshold {self.rules.yaniv_threshold}"
                )
            return self._showdown()
        if kind == DISCARD:
            return self._discard(cards, draw)
        raise ValueError(f"no slamdown is pending; {kind!r} is not a move now")

    def _discard(self, cards: tuple[int, ...], draw: int) -> None:
        p = self.current
        hand = self.hands[p]
        missing = [c for c in cards if c not in hand]
        if missing:
            names = cards_str(c for c in missing if type(c) is int and 0 <= c < NUM_CARDS)
            raise ValueError(f"player {p} does not hold {names or missing!r}")
        kind, ordered = classify(cards, self.rules)  # raises with the reason
        previous = self.pile[-1]
        if draw == DECK:
            if not self.deck:
                raise ValueError("the deck is empty and nothing is left to reshuffle; draw from the pile")
        elif draw not in previous.drawable:
            raise ValueError(
                f"cannot draw card {draw!r} from the pile: only {cards_str(previous.drawable)} "
                "of the previous discard may be drawn"
            )

        # The move is legal: change the state.
        shed = 0
        for c in cards:
            hand.remove(c)
            shed += POINTS[c]
        known = self.known[p]
        if known:
            known.difference_update(cards)
        if draw == DECK:
            card = self.deck.pop()
        else:
            card = draw
            known.add(card)
        insort(hand, card, key=SORT_KEY.__getitem__)
        self.totals[p] += POINTS[card] - shed
        # What is left of the previous group is dead: nobody may draw it any more.
        # (tuple.__new__ builds the named tuples without their Python-level __new__: this is the hot path.)
        pile = self.pile
        if draw == DECK:
            pile[-1] = _new(Group, (previous.cards, previous.kind, previous.player, ()))
        elif len(previous.cards) > 1:
            rest = tuple(c for c in previous.cards if c != draw)
            pile[-1] = _new(Group, (rest, previous.kind, previous.player, ()))
        else:
            pile.pop()
        group = _new(Group, (ordered, kind, p, drawable_cards(kind, ordered, self.rules)))
        pile.append(group)
        self.events.append(_new(Event, (DISCARD, p, ordered, draw)))
        if not self.deck:
            self._reshuffle()
        # A slamdown is offered only when a card would stay in hand: throwing the whole hand and then
        # the card drawn would leave the seat empty-handed, with a total of 0 that Assafs every call.
        if draw == DECK and self.rules.slamdown and len(hand) > 1 and slamdown_extends(group, card):
            self.phase = SLAMDOWN_PHASE
            self.pending = card
            self._discards = None
            return
        self._end_turn()

    def _slamdown(self) -> None:
        card = self.pending
        self.hands[self.current].remove(card)
        self.totals[self.current] -= POINTS[card]
        self.pile[-1] = add_slamdown(self.pile[-1], card, self.rules)
        self.events.append(Event(SLAM, self.current, (card,)))
        self._end_turn()

    def _reshuffle(self) -> None:
        """The discard pile except its top group becomes the new deck."""
        pool = sorted(c for group in self.pile[:-1] for c in group.cards)
        if not pool:
            return
        self.deck = [pool[i] for i in self.rng.permutation(len(pool))]
        self.pile = self.pile[-1:]
        self.pools.append(frozenset(pool))
        self.events.append(Event(RESHUFFLE, -1, tuple(pool)))

    def _end_turn(self) -> None:
        self.phase = PLAY
        self.pending = None
        self._discards = None
        self.turn += 1
        if self.rules.max_turns is not None and self.turn >= self.rules.max_turns:
            n = self.num_players
            self._finish_round(None, (0,) * n, (), ())
            return
        self.current = self._next_seat(self.current)

    def _previous_seat(self, seat: int) -> int:
        n = self.num_players
        seat = (seat - 1) % n
        while not self.alive[seat]:
            seat = (seat - 1) % n
        return seat

    def _next_seat(self, seat: int) -> int:
        n = self.num_players
        seat = (seat + 1) % n
        while not self.alive[seat]:
            seat = (seat + 1) % n
        return seat

    # ------------------------------------------------------------------------------------------
    # Scoring
    # ------------------------------------------------------------------------------------------

    def _showdown(self) -> None:
        rules = self.rules
        caller = self.current
        totals = self.totals
        mine = totals[caller]
        others = [q for q in range(self.num_players) if self.alive[q] and q != caller]
        if rules.assaf_on_equal:
            assafers = tuple(q for q in others if totals[q] <= mine)
        else:
            assafers = tuple(q for q in others if totals[q] < mine)
        points = [totals[q] if self.alive[q] else 0 for q in range(self.num_players)]
        if not assafers:
            winners: tuple[int, ...] = (caller,)
            points[caller] = 0
        else:
            low = min(totals[q] for q in assafers)
            winners = tuple(q for q in assafers if totals[q] == low)
            for q in winners:
                points[q] = 0
            if rules.assaf_penalty == "hand_plus":
                points[caller] = mine + rules.assaf_penalty_points
            elif rules.assaf_penalty == "per_assafer":
                extra = rules.assaf_penalty_points if len(assafers) == 1 else rules.assaf_points_per_assafer * len(assafers)
                points[caller] = mine + extra
            else:  # flat: the caller takes the penalty alone
                points = [0] * self.num_players
                points[caller] = rules.assaf_penalty_points
        self.events.append(Event(CALL, caller, ()))
        self._finish_round(caller, tuple(points), winners, assafers)

    def _finish_round(
        self, caller: int | None, points: tuple[int, ...], winners: tuple[int, ...], assafers: tuple[int, ...]
    ) -> None:
        rules = self.rules
        n = self.num_players
        resets = []
        for q in range(n):
            if not self.alive[q] or points[q] == 0:
                continue
            score = self.scores[q] + points[q]
            reset = rules.reset_score(score)
            if reset is not None:
                score = reset
                resets.append(q)
            self.scores[q] = score
        over_limit = [q for q in range(n) if self.alive[q] and self.scores[q] > rules.score_limit]
        eliminated: tuple[int, ...] = ()
        game_over = self.one_round
        if rules.one_round:
            pass  # the round decides the game: no eliminations, no limit
        elif rules.game_end == "elimination":
            eliminated = tuple(over_limit)
            for q in eliminated:
                self.alive[q] = False
            if sum(self.alive) <= 1:
                game_over = True
                self.winners = tuple(q for q in range(n) if self.alive[q])
        elif over_limit:
            game_over = True
            low = min(self.scores[q] for q in range(n) if self.alive[q])
            self.winners = tuple(q for q in range(n) if self.alive[q] and self.scores[q] == low)
        self.results.append(
            RoundResult(
                caller=caller,
                hands=tuple(tuple(h) for h in self.hands),
                totals=tuple(self.totals),
                points=points,
                winners=winners,
                assafers=assafers,
                resets=tuple(resets),
                scores=tuple(self.scores),
                eliminated=eliminated,
                turns=self.turn,
            )
        )
        if game_over:
            if self.one_round:
                self.winners = winners
            self.phase = OVER
            self.pending = None
            self._discards = None
            return
        self._deal(self._next_starter(caller, winners))

    def _next_starter(self, caller: int | None, winners: tuple[int, ...]) -> int:
        """Who starts the next round (``Rules.next_round_starter``); after a round cut by the turn cap,
        the seat after the previous starter."""
        how = self.rules.next_round_starter
        if caller is None or how == "next_seat":
            return self._next_seat(self.starter)
        if how == "caller":  # even when Assafed; if the round put it out, the next seat in the game
            return caller if self.alive[caller] else self._next_seat(caller)
        # The round's winner; of tied winners, the first after the caller (a winner scores 0: still in).
        return min(winners, key=lambda q: (q - caller) % self.num_players)

    # ------------------------------------------------------------------------------------------
    # Dealing, copying, sampling
    # ------------------------------------------------------------------------------------------

    def _deal(self, starter: int) -> None:
        rules = self.rules
        cards = deck_cards(rules.jokers)
        deck = [cards[i] for i in self.rng.permutation(len(cards))]
        size = rules.hand_size
        self.hands = [[] for _ in range(self.num_players)]
        for q in range(self.num_players):
            if self.alive[q]:
                self.hands[q] = sort_hand(deck[-size:])
                del deck[-size:]
        self.totals = [hand_points(h) for h in self.hands]
        face_up = deck.pop()
        self.round_number += 1
        self._open_round(starter, deck, [Group((face_up,), SINGLE, -1, (face_up,))], cards)

    def _open_round(self, starter: int, deck: list[int], pile: list[Group], cards: tuple[int, ...]) -> None:
        """The start of a round, hands dealt: ``starter`` to move, nothing seen taken, an empty record."""
        self.deck = deck
        self.pile = pile
        self.known = [set() for _ in range(self.num_players)]
        self.pools = [frozenset(cards)]
        self.events = []
        self.starter = self.current = starter
        self.phase = PLAY
        self.pending = None
        self.turn = 0
        self._discards = None
        self._views: dict[int, PlayerView] = {}

    def copy(self) -> "Game":
        """An independent copy, random generator included (it plays out the same future)."""
        g = Game.__new__(Game)
        g.rules = self.rules
        g.num_players = self.num_players
        g.single_round = self.single_round
        bit_generator = type(self.rng.bit_generator)()
        bit_generator.state = self.rng.bit_generator.state
        g.rng = np.random.Generator(bit_generator)
        g.hands = [h.copy() for h in self.hands]
        g.totals = self.totals.copy()
        g.deck = self.deck.copy()
        g.pile = self.pile.copy()
        g.known = [k.copy() for k in self.known]
        g.scores = self.scores.copy()
        g.alive = self.alive.copy()
        g.current = self.current
        g.phase = self.phase
        g.pending = self.pending
        g.starter = self.starter
        g.turn = self.turn
        g.round_number = self.round_number
        g.events = self.events.copy()
        g.pools = self.pools.copy()
        g.results = self.results.copy()
        g.winners = self.winners
        g._discards = self._discards
        g._views = {}
        return g

    def sample_hidden(self, player: int, rng: np.random.Generator) -> "Game":
        """A copy in which every card ``player`` cannot see is dealt anew, consistently with what it knows.

        ``Game.from_view(self.view(player), rng)`` with the game-level record (results, starter)
        carried over: the sample is built from the player's view alone.
        """
        g = Game.from_view(self.view(player), rng, single_round=self.single_round)
        g.results = self.results.copy()
        g.starter = self.starter
        g.winners = self.winners
        return g

    @classmethod
    def from_view(cls, view: PlayerView, rng: np.random.Generator, *, single_round: bool = True) -> "Game":
        """A full game state consistent with everything ``view`` shows, the hidden cards sampled.

        Hidden cards are the deck and the opponents' cards not seen taken from the pile. Each was
        dealt or drawn from the deck of some *epoch* (the deal, or a later reshuffle), and each
        epoch's deck is public. Replaying the round's public events gives how many hidden cards of
        each epoch every opponent holds; the unseen cards of each epoch (a card's epoch is the last
        deck that held it) are then shuffled uniformly into those places and into the deck. A
        pending slamdown card of another player is drawn among the unseen cards that could be
        slammed. The state gets a fresh generator from ``rng``, so no real future leaks into it.
        This is what search bots plan on: it needs nothing but the player's view.
        """
        rules = view.rules
        n = view.num_players
        me = view.player
        full = deck_cards(rules.jokers)
        pools = [frozenset(full)]
        known: list[set[int]] = [set() for _ in range(n)]
        hidden = [defaultdict(int) for _ in range(n)]  # seat -> epoch -> hidden cards held

        latest = dict.fromkeys(full, 0)  # each card's epoch: the last deck that held it

        def epoch_of(card: int) -> int:
            return latest[card]

        for q in range(n):
            if view.alive[q]:
                hidden[q][0] = rules.hand_size
        for event in view.events:
            p = event.player
            if event.kind == RESHUFFLE:
                pools.append(frozenset(event.cards))
                for c in event.cards:
                    latest[c] = len(pools) - 1
                continue
            if event.kind == STATE:
                known[p] = set(event.cards)
                hidden[p] = defaultdict(int, {0: event.drew})
                continue
            for c in event.cards:  # a discard or a slamdown reveals cards
                if c in known[p]:
                    known[p].discard(c)
                else:
                    hidden[p][epoch_of(c)] -= 1
            if event.kind == DISCARD:
                if event.drew == DECK:
                    hidden[p][len(pools) - 1] += 1
                else:
                    known[p].add(event.drew)
        if [frozenset(k) for k in known] != list(view.known):
            raise ValueError("the view's known cards do not follow from its events")
        for q in range(n):
            held = sum(hidden[q].values()) + len(known[q])
            if q != me and held != view.hand_sizes[q]:
                raise ValueError(f"the view is inconsistent: its events leave seat {q} {held} cards, not {view.hand_sizes[q]}")

        seen = set(view.hand) | set(view.pile) | {c for q in range(n) if q != me for c in known[q]}
        unseen: dict[int, list[int]] = defaultdict(list)
        for c in full:
            if c not in seen:
                unseen[epoch_of(c)].append(c)
        current_epoch = len(pools) - 1
        hands = [sorted(known[q]) if q != me else list(view.hand) for q in range(n)]
        pending = view.pending
        if view.phase == SLAMDOWN_PHASE and view.current != me:
            # The pending card is one of this epoch's unseen cards that fits the top group.
            candidates = [c for c in unseen[current_epoch] if slamdown_extends(view.top, c)]
            pending = candidates[int(rng.integers(len(candidates)))]
            unseen[current_epoch].remove(pending)
            hidden[view.current][current_epoch] -= 1
            hands[view.current].append(pending)
        deck: list[int] = []
        for e in sorted(unseen):
            cards = unseen[e]
            places = [q for q in range(n) if q != me for _ in range(hidden[q][e])]
            if e == current_epoch:
                places += [DECK] * view.deck_size
            if len(places) != len(cards):
                raise ValueError(f"the view is inconsistent: {len(cards)} unseen cards of epoch {e} for {len(places)} places")
            for place, i in zip(places, rng.permutation(len(cards))):
                if place == DECK:
                    deck.append(cards[i])
                else:
                    hands[place].append(cards[i])

        g = Game.__new__(Game)
        g.rules = rules
        g.num_players = n
        g.single_round = single_round
        g.rng = np.random.default_rng(rng.integers(2**63))
        g.hands = [sort_hand(h) for h in hands]
        g.totals = [hand_points(h) for h in g.hands]
        g.deck = deck
        dead = view.pile[: len(view.pile) - len(view.top.cards)]
        # The dead cards lie as one lump under the top group: only which cards they are matters.
        g.pile = ([Group(dead, SINGLE, -1, ())] if dead else []) + [view.top]
        g.known = known
        g.scores = list(view.scores)
        g.alive = list(view.alive)
        g.current = view.current
        g.phase = view.phase
        g.pending = pending
        g.starter = view.current
        g.turn = view.turn
        g.round_number = view.round_number
        g.events = list(view.events)
        g.pools = pools
        g.results = []
        g.winners = ()
        g._discards = None
        g._views = {}
        return g

    def __repr__(self) -> str:
        return (
            f"Game(players={self.num_players}, round={self.round_number}, turn={self.turn}, "
            f"current={self.current}, phase={self.phase!r}, scores={self.scores})"
        )

