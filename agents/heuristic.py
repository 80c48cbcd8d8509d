"""The heuristic baseline: a careful human player's rules of thumb, made explicit.

``HeuristicAgent`` scores every legal (discard, draw) pair by the hand it leaves and plays the best;
it calls Yaniv only when its estimate of the Assaf risk is low.

**The hand value.** A hand ``H`` is worth ``V(H) = total(H) - relief(H)`` (lower is better), where
``relief(H)`` is the most points ``H`` can shed in one legal discard next turn, weighted: ``gamma``
for a set or run, ``gamma_single`` for a single card. Points now count in full; most of the points
of a pair, set or run kept for later count as already gone. When an opponent holds at most
``threat_size`` cards both weights are multiplied by ``threat_scale``: the round may end before the
next turn, so only the points in hand now count. Breaking a pair or a run in progress therefore
costs its lost relief, and a card that completes or extends a combination earns it.

**Draws.** A pile card is known: the move is worth ``V(kept + card)``. A deck draw is worth the mean
of ``V(kept + c)`` over the cards ``c`` this player has not seen: not in its hand, not on the pile,
not seen taken by an opponent (``view.known``). So dead cards (on the pile, or held by an
opponent) never count as outs for a run or set in progress, and a pile card is taken when it
completes or extends a combination or is simply lower than what the deck is expected to give.
Taking back a card it threw earlier in the round costs a little (``recycle_cost``), and in a long
round pile draws cost more and more: two players passing the same cards back and forth through the
pile would never end the round.

**Feeding the next player.** Only the next seat may draw from this player's discard. A discard
whose drawable cards would help it (low cards, or cards of a rank / run it is seen collecting in
``view.known``) costs a penalty that grows as that player's hand shrinks (opponents' hand sizes are
public), so it avoids throwing the card that lets an opponent close to Yaniv call.

**Yaniv.** When it may call, it estimates the probability that some opponent's total is at most its
own (below it when ``assaf_on_equal`` is off). Each opponent's hand is its known cards plus hidden
cards drawn from the unseen cards, independently across opponents. Hidden cards the opponent has
held through a discard are skewed towards low cards: a card worth more than the highest card of that
opponent's last discard gets the weight ``kept_high_weight`` (players shed their high cards first),
except the card just drawn from the deck, which is a plain unseen card. The per-opponent sum
distribution is a convolution (exact for the model, with replacement); it calls when
``P(some opponent <= mine) <= call_risk``, or when its total is 0. The accepted risk grows slowly
in long rounds (``impatience``), so two cautious players cannot pass low cards back and forth for ever.

The agent uses no randomness: the same view always gives the same move (ties go to the earlier
move in ``view.legal_moves``). ``rank_moves`` exposes its full ordering, which the search bot uses
to pick the candidates it explores.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from yaniv import DECK, POINTS, RANK, SUIT, YANIV, Move, PlayerView
from yaniv.cards import NUM_STANDARD
from yaniv.game import DISCARD, KEEP, SLAMDOWN, SLAMDOWN_PHASE, STATE
from yaniv.melds import classify, drawable_cards, legal_discards
from yaniv.rules import Rules

from agents.base import SeededAgent
from agents.greedy import mean_points, unseen_cards

MAX_POINTS = 10


def sum_distribution(weights: Sequence[float], k: int, limit: int) -> list[float]:
    """P(sum of ``k`` independent cards = s) for s = 0..limit, a card worth v with probability weights[v]."""
    dist = [1.0] + [0.0] * limit
    for _ in range(k):
        new = [0.0] * (limit + 1)
        for s, p in enumerate(dist):
            if p:
                for v in range(min(MAX_POINTS, limit - s) + 1):
                    w = weights[v]
                    if w:
                        new[s + v] += p * w
        dist = new
    return dist


@lru_cache(maxsize=65536)
def _prob_at_most(
    plain: tuple[float, ...], skewed: tuple[float, ...], n_plain: int, n_skewed: int, limit: int
) -> float:
    """P(n_plain cards of ``plain`` plus n_skewed cards of ``skewed`` sum to at most ``limit``)."""
    if limit < 0:
        return 0.0
    a = sum_distribution(plain, n_plain, limit)
    b = sum_distribution(skewed, n_skewed, limit)
    return sum(a[i] * b[j] for i in range(limit + 1) for j in range(limit + 1 - i))


def _normalize(weights: list[float]) -> tuple[float, ...]:
    total = sum(weights)
    return tuple(w / total for w in weights) if total else tuple([1.0] + [0.0] * MAX_POINTS)


def assaf_risk(view: PlayerView, total: int | None = None, kept_high_weight: float = 0.35) -> float:
    """Estimated probability that calling Yaniv now with ``total`` (default: the hand's) is Assafed.

    See the module docstring for the model of the opponents' hidden cards.
    """
    me = view.player
    if total is None:
        total = sum(POINTS[c] for c in view.hand)
    unseen = unseen_cards(view)
    counts = [0] * (MAX_POINTS + 1)
    for c in unseen:
        counts[POINTS[c]] += 1
    plain = _normalize([float(x) for x in counts])
    last_discard: dict[int, tuple[int, ...]] = {}
    last_draw: dict[int, int] = {}
    for e in view.events:
        if e.kind == DISCARD:
            last_discard[e.player] = e.cards
            last_draw[e.player] = e.drew
    strict = 0 if view.rules.assaf_on_equal else 1
    p_safe = 1.0
    for q in range(view.num_players):
        if q == me or not view.alive[q]:
            continue
        known = view.known[q]
        hidden = view.hand_sizes[q] - len(known)
        limit = total - strict - sum(POINTS[c] for c in known)
        if limit < 0:
            continue
        if q in last_discard and hidden > 0:
            cap = max(POINTS[c] for c in last_discard[q])
            skewed = _normalize([counts[v] * (1.0 if v <= cap else kept_high_weight) for v in range(MAX_POINTS + 1)])
            n_plain = 1 if last_draw[q] == DECK else 0
            p = _prob_at_most(plain, skewed, n_plain, hidden - n_plain, limit)
        else:
            p = _prob_at_most(plain, plain, hidden, 0, limit)
        p_safe *= 1.0 - p
    return 1.0 - p_safe


_RELIEF_MEMO: dict[tuple, float] = {}


def relief(hand: Sequence[int], rules: Rules, gammas: tuple[float, float]) -> float:
    """Next turn's best discard, weighted: ``max(g * points(d))`` over the legal discards ``d`` of
    ``hand``, with ``g = gammas[0]`` for a single card and ``gammas[1]`` for a set or run.

    A single card thrown next turn is replaced by the card drawn then, so it counts little; a set or
    run sheds several cards for one drawn, so most of its points count as already gone.
    """
    if not hand:
        return 0.0
    if len(hand) == 1:
        return gammas[0] * POINTS[hand[0]]
    key = (rules.jokers_in_sets, gammas, *sorted(hand))
    out = _RELIEF_MEMO.get(key)
    if out is None:
        g1, gm = gammas
        out = 0.0
        for d in legal_discards(hand, rules):
            pts = 0
            for c in d:
                pts += POINTS[c]
            v = (gm if len(d) > 1 else g1) * pts
            if v > out:
                out = v
        if len(_RELIEF_MEMO) > 200_000:
            _RELIEF_MEMO.clear()
        _RELIEF_MEMO[key] = out
    return out


def _hand_value(hand: list[int], rules: Rules, gammas: tuple[float, float]) -> float:
    return sum(POINTS[c] for c in hand) - relief(hand, rules, gammas)


def _near(kept: Sequence[int]) -> set[int] | None:
    """The cards that may form a set or run with some of ``kept`` (None: any card, kept holds a joker).

    Jokers; the other cards of a kept card's rank; cards of its suit within two ranks of it.
    """
    near = {NUM_STANDARD, NUM_STANDARD + 1}
    for k in kept:
        if k >= NUM_STANDARD:
            return None
        r, s = RANK[k], SUIT[k]
        near.update(q * 13 + r for q in range(4))
        near.update(s * 13 + x for x in range(max(0, r - 2), min(12, r + 2) + 1))
    return near


class HeuristicAgent(SeededAgent):
    """A careful player's rules of thumb: see the module docstring for the strategy.

    Parameters: ``gamma`` and ``gamma_single`` (share of next turn's best discard counted as already
    shed, for a set or run and for a single card), ``threat_scale`` (their factor when an opponent
    holds at most ``threat_size`` cards), ``call_risk`` (the largest estimated Assaf probability at
    which it calls), ``feed_weights`` (penalty per point of help given to the next player, indexed
    by that player's hand size; 0 beyond the tuple), ``kept_high_weight`` (the Assaf model's weight
    of high cards an opponent kept), ``patience`` and
    ``impatience`` (after ``patience`` turns of its own in a round, the accepted risk grows by
    ``impatience`` per turn, and each pile draw costs ``10 * impatience`` per such turn, so that a
    round always ends), ``recycle_cost`` (the cost of taking back from the pile a card it threw
    earlier in the round).
    """

    name = "heuristic"

    def __init__(
        self,
        seed: int | None = None,
        *,
        gamma: float = 0.8,
        gamma_single: float = 0.8,
        threat_scale: float = 0.45,
        threat_size: int = 2,
        call_risk: float = 0.25,
        feed_weights: Sequence[float] = (0.0, 0.3, 0.15, 0.0),
        kept_high_weight: float = 0.35,
        patience: int = 8,
        impatience: float = 0.05,
        recycle_cost: float = 2.0,
    ) -> None:
        super().__init__(seed)
        self.gamma = gamma
        self.gamma_single = gamma_single
        self.threat_scale = threat_scale
        self.threat_size = threat_size
        self.call_risk = call_risk
        self.feed_weights = tuple(feed_weights)
        self.kept_high_weight = kept_high_weight
        self.patience = patience
        self.impatience = impatience
        self.recycle_cost = recycle_cost

    # -- the decision ------------------------------------------------------------------------------

    def act(self, view: PlayerView) -> Move:
        moves = view.legal_moves
        if not moves:
            raise ValueError(f"seat {view.player} has no legal move: it is not its turn")
        if view.phase == SLAMDOWN_PHASE:
            return self.slamdown_choice(view)
        if YANIV in moves and self.should_call(view):
            return YANIV
        return self.rank_moves(view)[0][1]

    def should_call(self, view: PlayerView) -> bool:
        total = sum(POINTS[c] for c in view.hand)
        if total > view.rules.yaniv_threshold:
            return False
        return total == 0 or assaf_risk(view, total, self.kept_high_weight) <= self.call_limit(view)

    def call_limit(self, view: PlayerView) -> float:
        """The Assaf risk it accepts: ``call_risk``, plus ``impatience`` per own turn past ``patience``.

        Two careful players at low totals could otherwise trade cards through the pile for ever.
        """
        own_turns = view.turn // max(1, sum(view.alive))
        return self.call_risk + self.impatience * max(0, own_turns - self.patience)

    def slamdown_choice(self, view: PlayerView) -> Move:
        """Slam unless the drawn card is worth more kept (it completes a better combination)."""
        hand = list(view.hand)
        gamma = self._gamma(view)
        rest = hand.copy()
        rest.remove(view.pending)
        return SLAMDOWN if _hand_value(rest, view.rules, gamma) <= _hand_value(hand, view.rules, gamma) else KEEP

    # -- scoring every discard and draw ------------------------------------------------------------

    def _gamma(self, view: PlayerView) -> tuple[float, float]:
        sizes = [view.hand_sizes[q] for q in range(view.num_players) if q != view.player and view.alive[q]]
        scale = self.threat_scale if sizes and min(sizes) <= self.threat_size else 1.0
        return (self.gamma_single * scale, self.gamma * scale)

    def rank_moves(self, view: PlayerView) -> list[tuple[float, Move]]:
        """Every legal discard-and-draw move with its score (lower is better), best first.

        Yaniv and slamdown decisions are not in it. Ties keep ``view.legal_moves`` order.
        """
        rules = view.rules
        gamma = self._gamma(view)
        hand = list(view.hand)
        unseen = unseen_cards(view)
        deck_mean = mean_points(unseen)
        nxt = self._next_seat(view)
        feed_w = self._feed_weight(view, nxt)
        # Pile draws that would keep a long round going in circles cost extra (see ``call_limit``).
        own_turns = view.turn // max(1, sum(view.alive))
        pile_cost = self.impatience * 10 * max(0, own_turns - self.patience)
        thrown = {c for e in view.events if e.player == view.player and e.kind != STATE for c in e.cards}
        scored: list[tuple[float, int, Move]] = []
        kept_cache: dict[tuple[int, ...], tuple[list[int], float]] = {}
        for i, m in enumerate(view.legal_moves):
            if m.kind != DISCARD:
                continue
            entry = kept_cache.get(m.cards)
            if entry is None:
                kept = [c for c in hand if c not in m.cards]
                feed = feed_w * self._feed(view, m.cards, nxt, deck_mean) if feed_w else 0.0
                entry = kept_cache[m.cards] = (kept, feed)
            kept, feed = entry
            if m.draw == DECK:
                value = self._deck_value(kept, unseen, rules, gamma)
            else:
                value = _hand_value(kept + [m.draw], rules, gamma) + pile_cost
                if m.draw in thrown:
                    value += self.recycle_cost
            scored.append((value + feed, i, m))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [(s, m) for s, _, m in scored]

    def _deck_value(self, kept: list[int], unseen: list[int], rules: Rules, gamma: tuple[float, float]) -> float:
        """The mean of V(kept + c) over the unseen cards c.

        A card that cannot combine with the kept ones only adds its points and competes for next
        turn's relief as a single: those are summed by value; the few that may combine are
        evaluated one by one.
        """
        if not unseen:
            return _hand_value(kept, rules, gamma) + 6.0
        base_total = sum(POINTS[c] for c in kept)
        base_next = relief(kept, rules, gamma)
        g1 = gamma[0]
        counts = [0] * (MAX_POINTS + 1)
        for c in unseen:
            counts[POINTS[c]] += 1
        acc = 0.0
        for v, n in enumerate(counts):
            if n:
                acc += n * (v - max(base_next, g1 * v))
        near = _near(kept)
        for c in unseen:
            if near is None or c in near:
                v = POINTS[c]
                acc += max(base_next, g1 * v) - relief(kept + [c], rules, gamma)
        return base_total + acc / len(unseen)

    # -- the next player ----------------------------------------------------------------------------

    @staticmethod
    def _next_seat(view: PlayerView) -> int:
        n = view.num_players
        q = (view.player + 1) % n
        while not view.alive[q]:
            q = (q + 1) % n
        return q

    def _feed_weight(self, view: PlayerView, q: int) -> float:
        size = view.hand_sizes[q]
        return self.feed_weights[size] if size < len(self.feed_weights) else 0.0

    @staticmethod
    def _feed(view: PlayerView, cards: tuple[int, ...], q: int, deck_mean: float) -> float:
        """How much the next player ``q`` could gain by drawing from this discard instead of the deck."""
        kind, ordered = classify(cards, view.rules)
        collected = view.known[q]
        gain = 0.0
        for c in drawable_cards(kind, ordered, view.rules):
            g = deck_mean - POINTS[c]
            if c < NUM_STANDARD:
                for k in collected:
                    if k >= NUM_STANDARD or RANK[k] == RANK[c] or (SUIT[k] == SUIT[c] and abs(RANK[k] - RANK[c]) <= 2):
                        g += POINTS[c] + POINTS[k]  # it makes a set or a run in progress with a card it took
                        break
            gain = max(gain, g)
        return gain


__all__ = ["HeuristicAgent", "assaf_risk", "relief", "sum_distribution"]
