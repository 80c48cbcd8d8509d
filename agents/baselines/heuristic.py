"""The heuristic baseline: a careful human player's rules of thumb, made explicit.

``HeuristicAgent`` scores every legal (discard, draw) pair by the hand it leaves and plays the best;
it calls Yaniv only when its estimate of the Assaf risk is low. It is the baseline every other bot
is measured against, the opponent of PPO training, and (score-aware, ``score_weight=2``) the teacher
that ``configs/default.yaml`` copies. ``rank_moves(view)`` exposes its full ordering, which the
search bot uses to pick the candidates it explores.

**The hand value.** A hand ``H`` is worth ``V(H) = total(H) - relief(H)`` (lower is better), where
``relief(H)`` is the most points ``H`` can shed in one legal discard next turn, weighted: ``gamma``
for a set or run, ``gamma_single`` for a single card. Points now count in full; most of the points
of a pair, set or run kept for later count as already gone. When an opponent holds at most
``threat_size`` cards both weights are multiplied by ``threat_scale``: the round may end before the
next turn, so only the points in hand now count. Breaking a pair or a run in progress therefore
costs its lost relief, and a card that completes or extends a combination earns it.

**Draws.** A pile card is known: the move is worth ``V(kept + card)``. A deck draw is worth the mean
of ``V(kept + c)`` over the cards ``c`` this player has not seen (``PlayerView.unseen_cards``). So
dead cards (on the pile, or held by an opponent) never count as outs for a run or set in progress,
and a pile card is taken when it completes or extends a combination or is simply lower than what
the deck is expected to give. Taking back a card it threw earlier in the round costs a little
(``recycle_cost``), and in a long round pile draws cost more and more: two players passing the
same cards back and forth through the pile would never end the round.

**Feeding the next player.** Only the next seat may draw from this player's discard. A discard
whose drawable cards would help it (low cards, or cards of a rank / run it is seen collecting in
``view.known``) costs a penalty that grows as that player's hand shrinks (opponents' hand sizes are
public), so it avoids throwing the card that lets an opponent close to Yaniv call.

**Yaniv.** When the rules let it call (``Rules.may_call_yaniv``), it calls if its total is 0 or
the chance that some opponent's total is at most its own, ``yaniv.odds.assaf_risk`` (opponents'
hidden cards drawn from the unseen cards, those kept through a discard skewed low by
``kept_high_weight``), is at most ``call_risk``. The accepted risk grows slowly in long rounds
(``impatience``), so two cautious players cannot pass low cards back and forth for ever.

**Scores** (``score_weight``; 0, off, in the baseline). The hand left after a move is what this
player takes if another player calls before its next turn, and in the game's score a few totals are
worth far more or less than their points: one that lands the score exactly on a reset value
(``rules.score_reset_at``: halved with the default rules) gains half the score, one that takes it
over the limit loses ``OVER_LIMIT_COST`` more. With ``score_weight > 0`` each move's value adds
``score_weight * P(the round ends first) * (its score change - its total)``, averaged over the
unseen cards for a deck draw; the chance that the round ends first is read off the opponents' hand
sizes (``yaniv.odds.round_end_chance``). Measure it in full games: single rounds from zero scores
cannot show what it is for.

**Cost.** As the opponent of PPO training a move must be cheap. The deck draw of every discard
needs ``V(kept + c)`` for each unseen card ``c``; a card that makes no set or run with the kept ones
only adds its points and competes as a single for next turn's relief, so those are summed by value,
and only the few that combine are looked at one by one. The best set or run a card makes depends
only on the shape of the kept cards of its rank and suit (plus jokers), which is remembered
(``_combo_points``), so no hand's discards are enumerated for it; the scores are the same floats as
enumerating them.

The agent uses no randomness: the same view always gives the same move (ties go to the earlier
move in ``view.legal_moves``). Its measured strength, settings tried and speed:
``docs/experiments.md``.
"""

from __future__ import annotations

from typing import Final, Sequence

from yaniv import DECK, POINTS, RANK, SUIT, YANIV, Move, PlayerView
from yaniv.cards import JOKERS, NUM_RANKS, NUM_STANDARD
from yaniv.game import DISCARD, KEEP, SLAMDOWN, SLAMDOWN_PHASE, STATE
from yaniv.melds import classify, discard_settings, drawable_cards, legal_discards
from yaniv.odds import KEPT_HIGH_WEIGHT, assaf_risk, count_values, round_end_chance
from yaniv.rules import Rules

from agents.base import SeededAgent
from agents.baselines.greedy import mean_points

OVER_LIMIT_COST: Final = 60.0  # points a round ending over the score limit counts as, beyond the hand's own


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
    key = (discard_settings(rules), gammas, *sorted(hand))
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


_COMBO_MEMO: dict[tuple[int, int, int, int, bool], int] = {}


def _combo_points(suit_ranks: int, rank: int, same_rank: int, jokers: int, rules: Rules) -> int:
    """The most points of a set or run that a natural card of rank ``rank`` makes with cards kept
    in hand (0: none): the kept cards of its suit (their ranks as the bit mask ``suit_ranks``),
    ``same_rank`` kept cards of its rank (other suits) and ``jokers`` kept jokers.

    No other kept card can share a set or a run with it, and suits only matter by being equal, so
    the card is placed in suit 0 and the answer holds for every hand of that shape. It is
    remembered (a few thousand shapes cover almost every position); ``legal_discards`` reads only
    the settings ``discard_settings`` names, so they are the rules' part of the key.
    """
    key = (suit_ranks, rank, same_rank, jokers, discard_settings(rules))
    out = _COMBO_MEMO.get(key)
    if out is None:
        card = rank  # the card of that rank in suit 0
        hand = [card]
        hand += [r for r in range(NUM_RANKS) if suit_ranks >> r & 1]
        hand += [s * NUM_RANKS + rank for s in range(1, same_rank + 1)]
        hand += JOKERS[:jokers]
        out = 0
        for d in legal_discards(hand, rules):
            if len(d) > 1 and card in d:
                out = max(out, sum(POINTS[c] for c in d))
        if len(_COMBO_MEMO) > 200_000:
            _COMBO_MEMO.clear()
        _COMBO_MEMO[key] = out
    return out


# Per rank, the bit mask of the ranks next to it. Without jokers a run is consecutive cards, so a
# run holding a card holds a card of a neighbouring rank too.
_NEIGHBOURS: Final = tuple(sum(1 << x for x in (r - 1, r + 1) if 0 <= x < NUM_RANKS) for r in range(NUM_RANKS))


class _Kept:
    """A hand left after a discard, with what valuing its draws needs (computed once per discard).

    ``relief_with(card)`` is ``relief(cards + [card])`` without enumerating that hand's discards:
    they are the discards of ``cards`` (best: ``relief``), the card alone, and the sets and runs
    the card makes with some of ``cards`` (best: ``_combo_points``). Each is worth a gamma times
    its points, and the gammas are non-negative, so the best of the three is the same float
    ``relief`` finds.
    """

    __slots__ = ("cards", "total", "relief", "suit_ranks", "same_rank", "jokers", "feed")

    def __init__(self, cards: list[int], rules: Rules, gammas: tuple[float, float], feed: float) -> None:
        self.cards = cards
        self.feed = feed
        self.relief = relief(cards, rules, gammas)
        total = jokers = 0
        suit_ranks = [0, 0, 0, 0]
        same_rank = [0] * NUM_RANKS
        for c in cards:
            total += POINTS[c]
            if c >= NUM_STANDARD:
                jokers += 1
            else:
                suit_ranks[SUIT[c]] |= 1 << RANK[c]
                same_rank[RANK[c]] += 1
        self.total = total
        self.suit_ranks = suit_ranks
        self.same_rank = same_rank
        self.jokers = jokers

    def relief_with(self, card: int, rules: Rules, gammas: tuple[float, float]) -> float:
        if card >= NUM_STANDARD:  # a joker may combine with anything: the full computation
            return relief(self.cards + [card], rules, gammas)
        r = RANK[card]
        out = max(self.relief, gammas[0] * POINTS[card])
        pts = _combo_points(self.suit_ranks[SUIT[card]], r, self.same_rank[r], self.jokers, rules)
        return max(out, gammas[1] * pts) if pts else out


class _Unseen:
    """The cards a player has not seen (``PlayerView.unseen_cards``), summarised once per decision for
    ``HeuristicAgent._deck_value``: how many of each value there are, and each natural card's
    points, rank and suit (the table look-ups hoisted out of the loop over discards)."""

    __slots__ = ("cards", "counts", "naturals", "jokers", "mean")

    def __init__(self, cards: list[int]) -> None:
        self.cards = cards
        self.counts = [(v, n) for v, n in enumerate(count_values(cards)) if n]  # (value, how many), values present
        self.mean = mean_points(cards)
        # ``cards`` is in id order, so the jokers (52, 53) come after every natural card.
        self.naturals = [(c, POINTS[c], RANK[c], SUIT[c]) for c in cards if c < NUM_STANDARD]
        self.jokers = [c for c in cards if c >= NUM_STANDARD]


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
    earlier in the round), ``score_weight`` (how much the game's score after the round counts:
    reset values and the limit, see "Scores" in the module docstring; 0 ignores the scores).

    The defaults are the baseline every other bot is measured against, not its best settings: a
    more cautious caller (``heuristic:call_risk=0.1``) is stronger heads-up, and minding the score
    as well (``heuristic:call_risk=0.1,score_weight=2``) stronger still (``docs/experiments.md``).
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
        kept_high_weight: float = KEPT_HIGH_WEIGHT,
        patience: int = 8,
        impatience: float = 0.05,
        recycle_cost: float = 2.0,
        score_weight: float = 0.0,
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
        self.score_weight = score_weight

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
        if not view.rules.may_call_yaniv(total):
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
        hand = view.hand
        unseen = _Unseen(view.unseen_cards())
        nxt = self._next_seat(view)
        feed_w = self._feed_weight(view, nxt)
        # Pile draws that would keep a long round going in circles cost extra (see ``call_limit``).
        own_turns = view.turn // max(1, sum(view.alive))
        pile_cost = self.impatience * 10 * max(0, own_turns - self.patience)
        thrown: set[int] | None = None  # the cards it threw this round, gathered at the first pile draw
        scored: list[tuple[float, int, Move]] = []
        score_costs: tuple[float, ...] | None = None  # see _score_costs, built at the first move
        kept_by_discard: dict[tuple[int, ...], _Kept] = {}  # one per discard: its draws share it
        for i, m in enumerate(view.legal_moves):
            if m.kind != DISCARD:
                continue
            kept = kept_by_discard.get(m.cards)
            if kept is None:
                feed = feed_w * self._feed(view, m.cards, nxt, unseen.mean) if feed_w else 0.0
                kept = kept_by_discard[m.cards] = _Kept([c for c in hand if c not in m.cards], rules, gamma, feed)
            if m.draw == DECK:
                value = self._deck_value(kept, unseen, rules, gamma)
            else:
                # V(kept + [draw]), the same float as _hand_value(kept.cards + [m.draw], ...)
                value = kept.total + POINTS[m.draw] - kept.relief_with(m.draw, rules, gamma) + pile_cost
                if thrown is None:
                    me = view.player
                    thrown = {c for e in view.events if e.player == me and e.kind != STATE for c in e.cards}
                if m.draw in thrown:
                    value += self.recycle_cost
            if score_costs is None:
                score_costs = self._score_costs(view) or ()
            if score_costs:
                value += self._score_term(score_costs, kept.total, m.draw, unseen)
            scored.append((value + kept.feed, i, m))
        scored.sort()  # by score, then legal-move index (unique, so the moves are never compared)
        return [(s, m) for s, _, m in scored]

    def _score_costs(self, view: PlayerView) -> tuple[float, ...] | None:
        """``score_weight * P(round ends first) * (score cost - t)`` for each hand total t, or None
        when that is 0 for every total (no weight, or no reset value nor the limit within reach)."""
        if not self.score_weight:
            return None
        taken, over = view.rules.score_stakes(view.scores[view.player])
        costs = [OVER_LIMIT_COST if o else -x for x, o in zip(taken, over)]
        if not any(costs):
            return None
        me, sizes = view.player, view.hand_sizes
        chance = round_end_chance(sizes[q] for q in range(view.num_players) if q != me and view.alive[q])
        scale = self.score_weight * chance
        return tuple(scale * c for c in costs)

    @staticmethod
    def _score_term(costs: tuple[float, ...], kept_total: int, draw: int, unseen: _Unseen) -> float:
        """The ``score_weight`` term of a move: its hand total's cost, the mean over unseen cards for a deck draw."""
        last = len(costs) - 1
        if draw != DECK:
            return costs[min(kept_total + POINTS[draw], last)]
        if not unseen.cards:
            return 0.0
        return sum(n * costs[min(kept_total + v, last)] for v, n in unseen.counts) / len(unseen.cards)

    @staticmethod
    def _deck_value(kept: _Kept, unseen: _Unseen, rules: Rules, gamma: tuple[float, float]) -> float:
        """The mean of V(kept + c) over the unseen cards c.

        A card that makes no set or run with the kept ones only adds its points and competes for
        next turn's relief as a single: those are summed by value. The few that do combine are
        corrected one by one with the best combination they make (``_combo_points``), in the
        unseen cards' order, so the sum is the same float as scoring every card one by one.
        """
        if not unseen.cards:
            return kept.total - kept.relief + 6.0
        base_next = kept.relief
        g1, gm = gamma
        acc = 0.0
        for v, n in unseen.counts:
            acc += n * (v - max(base_next, g1 * v))
        suit_ranks, same_rank, jokers = kept.suit_ranks, kept.same_rank, kept.jokers
        wild = discard_settings(rules)
        memo = _COMBO_MEMO
        for c, v, r, s in unseen.naturals:
            if not (jokers or same_rank[r] or suit_ranks[s] & _NEIGHBOURS[r]):
                continue  # no set or run: no kept joker, no kept card of its rank, nor of its suit next to it
            pts = memo.get((suit_ranks[s], r, same_rank[r], jokers, wild))  # _combo_points' key
            if pts is None:
                pts = _combo_points(suit_ranks[s], r, same_rank[r], jokers, rules)
            if pts:
                single = max(base_next, g1 * v)
                combo = gm * pts
                if combo > single:  # otherwise relief(kept + [c]) == single: nothing to correct
                    acc += single - combo
        for c in unseen.jokers:  # a joker may combine with anything: the full computation
            acc += max(base_next, g1 * POINTS[c]) - relief(kept.cards + [c], rules, gamma)
        return kept.total + acc / len(unseen.cards)

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


__all__ = ["HeuristicAgent", "relief"]
