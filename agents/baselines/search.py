"""The search bot: determinized rollouts that check the heuristic's best moves against each other.

``SearchAgent(seed, budget)`` (spec ``search[:N]``) plans on samples of the hidden cards, never on
the real game. It is the strongest baseline, and the one that shows what looking ahead buys over
the heuristic's rules of thumb. For each decision:

1. **Candidates.** The heuristic bot (``agents.baselines.heuristic``, as a cautious caller:
   ``CALL_RISK``) ranks every (discard, draw) move; the search keeps its ``top_k`` best, plus Yaniv
   when it is legal (first if the heuristic would call, else right after the heuristic's choice),
   or both answers to a pending slamdown. The heuristic's own choice comes first. A lone candidate
   is played at once.
2. **Determinizations.** ``Game.from_view(view, rng, single_round=True)`` deals the cards this
   player cannot see anew, consistently with everything its view shows (hand sizes, cards seen
   taken from the pile, the pile, reshuffles). A uniform deal overstates what opponents hold
   (people shed high cards and keep low ones), so ``informed_sample`` then re-weighs each
   opponent's hidden cards with a few Metropolis swaps against the deck: cards above what it last
   threw are unlikely unless they pair, low cards likelier, a high card it took from the pile
   probably combines with something.
3. **Rollouts.** After the candidate, every seat plays the round out with ``RolloutPolicy``, a fast
   policy that reads the sampled ``Game`` directly (no views) and uses only what that seat may
   know: call Yaniv when the rules allow it and a table-based Assaf estimate
   (``yaniv.odds.at_most_table``) is low; otherwise the discard and draw that leave the lowest
   ``total - relief`` (the heuristic's hand value, a deck card at its mean). Each seat draws from
   its own stream of the sampled deck, so when candidates differ in whether this player takes a
   pile card, the others still get the same cards: candidates compared on one sample differ in
   their consequences, not in deck luck.
4. **Score.** A rollout scores the round for this player: the points the others took (their mean)
   minus its own, measured on the cumulative scores after the round, so a total landing on a
   halving value counts as the drop it is, plus ``ELIMINATION`` per opponent knocked out and minus
   it if this player is. A Yaniv call is scored by the sampled showdown itself. In a game of one
   round (``game_end="one_round"``) the round is the game and its placing is what counts: the
   rollout scores this player's place as the game's rank reward does (``placing``: 1 first, -1
   last, tied seats sharing), an unfinished rollout by the hands as they lie (lower total ahead).
   Why: scored by points, the search plays one-round games for the points they would move and
   wins fewer of them than the network bot does (the compiled search: 50.9% of 4,000 no-jokers
   games against the heuristic, 54.5% aimed at the placing; docs/experiments.md, 2026-12-04).
5. **Choice.** Stage 1 plays every candidate on the same ``budget / (2 k)`` samples. If the best
   alternative beats the heuristic's own choice on average, stage 2 spends the rest of the budget
   on those two alone, again paired. The alternative is played only if its mean advantage exceeds
   ``confidence`` standard errors of the paired difference; otherwise the heuristic's choice
   stands. A round's outcome varies far more with the cards than with the move, so this test keeps
   noise from overruling a sound heuristic.

``budget`` is the most rollouts one decision may use (stage 2 runs only when stage 1 finds a
promising alternative): strength against time per move (``benchmarks/agent_speed.py``). The bot is
deterministic given its seed: every sample and every rollout draws from its own generator in a
fixed order. Its measured strength, speed and the variants tried: ``docs/experiments.md``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from yaniv import DECK, POINTS, RANK, SUIT, YANIV, Game, Move, PlayerView
from yaniv.cards import NUM_STANDARD, sort_hand
from yaniv.game import DISCARD, OVER, PLAY, SLAM, SLAMDOWN, SLAMDOWN_PHASE, last_discards
from yaniv.odds import KEPT_VALUE_WEIGHT, MAX_TOTAL, at_most_table, value_counts
from yaniv.ranking import standing_keys
from yaniv.rules import Rules

from agents.base import SeededAgent
from agents.baselines.heuristic import HeuristicAgent, relief

_new = tuple.__new__
DEFAULT_BUDGET = 128
# The call_risk of the heuristic that ranks the search's candidates (the baseline heuristic's is 0.25):
# the cautious caller is stronger heads-up, and the search keeps its edge on top (docs/experiments.md).
CALL_RISK = 0.1
ELIMINATION = 60.0  # rollout score of knocking an opponent out (and minus it for being knocked out)


class RolloutPolicy:
    """The fast playout policy: ``move(game)`` for whichever seat is to move, read off the ``Game``.

    It looks only at what that seat may know: its hand, the top of the pile, whether the deck has
    cards, the opponents' hand sizes and the cards it saw them take. Yaniv: when the rules allow it
    (``Rules.may_call_yaniv``) and the Assaf risk is at most ``call_risk`` (each opponent's hidden
    cards: one plain deck card and the rest weighted by ``KEPT_VALUE_WEIGHT`` when ``tilt``, read
    off ``yaniv.odds.at_most_table``; the accepted risk grows in long rounds, as the heuristic's
    does). Otherwise the discard and draw with the lowest ``total - relief`` (the heuristic's hand
    value with ``gammas``), a deck card counting at the deck's mean less ``deck_gain`` for the
    combinations it may make. Slamdowns are always taken. Its choices are memoized by (hand,
    drawable cards, deck empty or not).
    """

    def __init__(
        self,
        call_risk: float = 0.2,
        gammas: tuple[float, float] = (0.8, 0.8),
        deck_gain: float = 0.5,
        tilt: bool = True,
    ) -> None:
        self.tilt = tilt
        self.call_risk = call_risk
        self.gammas = gammas
        self.deck_gain = deck_gain
        self._rules = None
        self._moves: dict[tuple, Move] = {}
        self._deck_values: dict[float, float] = {}

    def move(self, g: Game) -> Move:
        if g.phase == SLAMDOWN_PHASE:
            return SLAMDOWN
        p = g.current
        total = g.totals[p]
        rules = g.rules
        if rules.may_call_yaniv(total) and self._safe(g, p, total):
            return YANIV
        if rules is not self._rules:  # the memos below hold for one rule set
            self._rules, self._moves, self._deck_values = rules, {}, {}
        draws = g.pile[-1].drawable
        if g.turn > 24 * g.num_players and g.deck:  # a long round: stop passing cards in circles
            draws = ()
        hand = g.hands[p]
        key = (*hand, -2, *draws, -3 if g.deck else -4)
        move = self._moves.get(key)
        if move is None:
            move = self._choose(g, hand, total, draws)
            if len(self._moves) > 200_000:
                self._moves.clear()
            self._moves[key] = move
        return move

    def _choose(self, g: Game, hand: list[int], total: int, draws: tuple[int, ...]) -> Move:
        """The discard and draw that leave the lowest ``total - relief`` (a deck card at its mean)."""
        rules = g.rules
        gammas = self.gammas
        g1 = gammas[0]
        best = None
        best_draw = DECK
        best_value = 1e9
        for d in g.legal_discards():
            kept = [c for c in hand if c not in d] if len(d) > 1 else [c for c in hand if c != d[0]]
            base = total
            for c in d:
                base -= POINTS[c]
            nxt = relief(kept, rules, gammas)
            if g.deck:
                value = base + self._deck_value(nxt, rules.jokers)
                if value < best_value:
                    best, best_draw, best_value = d, DECK, value
            for c in draws:
                if _combines(c, kept):
                    value = base + POINTS[c] - relief(kept + [c], rules, gammas)
                else:
                    r = g1 * POINTS[c]
                    value = base + POINTS[c] - (nxt if nxt > r else r)
                if value < best_value:
                    best, best_draw, best_value = d, c, value
        return _new(Move, (DISCARD, best, best_draw))

    def _deck_value(self, nxt: float, jokers: int) -> float:
        """A deck card's mean points less the mean of next turn's relief with it (combinations
        it might make count as ``deck_gain``)."""
        value = self._deck_values.get(nxt)
        if value is None:
            g1 = self.gammas[0]
            value = -self.deck_gain
            for v, share in _deck_histogram(jokers):
                value += share * (v - (nxt if nxt > g1 * v else g1 * v))
            self._deck_values[nxt] = value
        return value

    def _safe(self, g: Game, p: int, total: int) -> bool:
        if total == 0:
            return True
        table = at_most_table(g.rules.jokers, self.tilt)
        strict = 0 if g.rules.assaf_on_equal else 1
        safe = 1.0
        hands, known, alive = g.hands, g.known, g.alive
        for q in range(g.num_players):
            if q == p or not alive[q]:
                continue
            kq = known[q]
            limit = total - strict
            for c in kq:
                limit -= POINTS[c]
            if limit < 0:
                continue
            hidden = len(hands[q]) - len(kq)
            safe *= 1.0 - table[hidden][min(limit, MAX_TOTAL)]
        own_turns = g.turn // g.num_players
        return 1.0 - safe <= self.call_risk + 0.05 * max(0, own_turns - 8)


def _streams(g: Game) -> list[list[int]]:
    """Each seat's own sequence of future deck cards: the deck dealt round-robin from the seat to move.

    While every seat draws from the deck, play is exactly as from the deck itself; when one seat
    takes a pile card instead, the other seats still get the cards they would have got. Candidate
    moves compared on one sample then differ in their consequences, not in the luck of the deck.
    """
    n = g.num_players
    order = [(g.current + i) % n for i in range(n)]
    order = [q for q in order if g.alive[q]]
    streams: list[list[int]] = [[] for _ in range(n)]
    for i, c in enumerate(reversed(g.deck)):
        streams[order[i % len(order)]].append(c)
    return streams


def _arrange(deck: list[int], stream: list[int], pos: list[int], seat: int) -> None:
    """Put the seat's next stream card still in the deck on top of the deck (if any is left)."""
    i = pos[seat]
    while i < len(stream):
        c = stream[i]
        i += 1
        if c in deck:
            j = deck.index(c)
            deck[j], deck[-1] = deck[-1], c
            break
    pos[seat] = i


PILE_ALONE = 0.3  # weight of a hand in which a card of 4+ points taken from the pile combines with nothing


class _LastTurn(NamedTuple):
    """What an opponent's last discard says about its hand."""

    cap: int  # the highest card value it threw
    single: int  # the rank of the single card it threw, else -1
    thrown: tuple[int, ...]  # the cards it threw
    drew: int  # the pile card it took, or DECK (then one of its hidden cards is that draw)
    plain: bool  # its hand since is its hand then less the throw plus the draw (no slamdown since)


def _last_turns(view: PlayerView) -> dict[int, _LastTurn]:
    """Per opponent that has discarded this round, its last discard (see ``_LastTurn``).

    In the order the opponents first discarded this round (seat order from the round's first
    discard): ``informed_sample`` draws its random numbers in this order.
    """
    events = view.events
    last = last_discards(events, sum(view.alive))
    if not last:
        return {}
    # A slamdown follows its own discard (a reshuffle perhaps between), so the slamdowns after the
    # oldest of the last discards are those made since a seat's last discard.
    slammed: set[int] = set()
    discards = 0
    for e in reversed(events):
        if e.kind == SLAM:
            slammed.add(e.player)
        elif e.kind == DISCARD:
            discards += 1
            if discards == len(last):
                break
    first = next(e.player for e in events if e.kind == DISCARD)
    n = view.num_players
    out: dict[int, _LastTurn] = {}
    for q in sorted(last, key=lambda seat: (seat - first) % n):
        if q != view.player:
            e = last[q]
            single = RANK[e.cards[0]] if len(e.cards) == 1 else -1
            out[q] = _LastTurn(max(POINTS[c] for c in e.cards), single, e.cards, e.drew, q not in slammed)
    return out


def _card_weight(c: int, hand: list[int], last: _LastTurn, rho: float) -> float:
    """The plausibility of a hidden card ``c`` kept in ``hand`` (see ``informed_sample``)."""
    w = KEPT_VALUE_WEIGHT[POINTS[c]]
    if POINTS[c] > last.cap or RANK[c] == last.single:
        r = RANK[c]
        if not any(k != c and RANK[k] == r for k in hand):
            w *= rho
    return w


def _likelihood(
    hand: list[int], hidden: list[int], last: _LastTurn, rules: Rules, rho: float, no_call: float
) -> float:
    """How plausible ``hand`` is for an opponent, given its last turn (see ``informed_sample``)."""
    weights = [_card_weight(c, hand, last, rho) for c in hidden]
    if len(weights) < len(hand):  # it holds cards it took from the pile: most were taken to combine
        hidden_set = set(hidden)
        for k in hand:
            if k not in hidden_set and POINTS[k] >= 4 and not _combines(k, [c for c in hand if c != k]):
                weights.append(PILE_ALONE)
    total = sum(POINTS[c] for c in hand) + sum(POINTS[c] for c in last.thrown)
    if last.drew != DECK:
        out = 1.0
        for w in weights:
            out *= w
        if last.plain and rules.may_call_yaniv(total - POINTS[last.drew]):
            out *= no_call  # it could have called Yaniv at the start of that turn, and did not
        return out
    if not hidden:
        return 1.0
    acc = 0.0
    for i, x in enumerate(hidden):  # x: the card it drew from the deck last turn
        out = 1.0
        for j, w in enumerate(weights):
            if j != i:
                out *= w
        if last.plain and rules.may_call_yaniv(total - POINTS[x]):
            out *= no_call
        acc += out
    return acc / len(hidden)


def informed_sample(
    view: PlayerView, rng: np.random.Generator, rho: float = 0.35, no_call: float = 1.0, sweeps: int = 3
) -> Game:
    """``Game.from_view``, then a few Metropolis swaps between the opponents' hidden cards and the deck
    that make the hands an opponent's play argues against less likely.

    The uniform sample overstates what opponents hold: players shed high cards first and keep low
    ones. For each opponent that has thrown this round the target weighs its hand by

    * each hidden card: ``yaniv.odds.KEPT_VALUE_WEIGHT`` of its value, times ``rho`` when it is
      worth more than the highest card of the opponent's last discard or has the rank of the single
      card it last threw (it would have thrown it), unless it makes a set with another card of its
      hand. The card it last drew from the deck (unknown which) is exempt: it came after that
      discard;
    * ``PILE_ALONE`` for each card of 4 points or more that it took from the pile and that makes
      no set or run with the rest of its hand (such cards are taken to combine);
    * ``no_call`` (off by default: it did not sharpen the estimates) when the hand it held at the
      start of its last turn (now less that draw, plus what it threw) was low enough to call Yaniv.

    ``rho = no_call = 1.0`` gives ``from_view``'s uniform deal unchanged.
    Swaps keep each card's epoch (only cards of the current deck's epoch trade places with the
    deck), and the uniform prior is symmetric under them, so the chain keeps everything else
    ``from_view`` knows.
    """
    g = Game.from_view(view, rng, single_round=True)
    if (rho >= 1.0 and no_call >= 1.0) or not g.deck or g.phase != PLAY:
        return g
    rules = view.rules
    deck = g.deck
    pool = g.pools[-1]
    for q, last in _last_turns(view).items():
        if not g.alive[q]:
            continue
        hand = g.hands[q]
        known = g.known[q]
        slots = [i for i, c in enumerate(hand) if c not in known and c in pool]
        if not slots:
            continue
        hidden = [c for c in hand if c not in known]
        before = _likelihood(hand, hidden, last, rules, rho, no_call)
        changed = False
        for _ in range(sweeps):
            for i in slots:
                j = int(rng.integers(len(deck)))
                old = hand[i]
                hand[i] = deck[j]
                hidden = [c for c in hand if c not in known]
                after = _likelihood(hand, hidden, last, rules, rho, no_call)
                if after >= before or rng.random() * before < after:
                    deck[j] = old
                    before = after
                    changed = True
                else:
                    hand[i] = old
        if changed:
            g.hands[q] = sort_hand(hand)
            g.totals[q] = sum(POINTS[c] for c in hand)
    return g


def _combines(card: int, kept: list[int]) -> bool:
    """Whether ``card`` may make a set or a run with some kept cards (else it only adds its points)."""
    if card >= NUM_STANDARD:
        return len(kept) >= 1
    r, s = RANK[card], SUIT[card]
    for k in kept:
        if k >= NUM_STANDARD or RANK[k] == r or (SUIT[k] == s and -2 <= RANK[k] - r <= 2):
            return True
    return False


@lru_cache(maxsize=8)
def _deck_histogram(jokers: int) -> tuple[tuple[int, float], ...]:
    """(points, share of the deck) for each card value of a full deck."""
    counts = value_counts(jokers)
    size = sum(counts)
    return tuple((v, n / size) for v, n in enumerate(counts) if n)


class SearchAgent(SeededAgent):
    """Determinized-rollout search over the heuristic's best candidates; see the module docstring.

    ``budget``: the most rollouts per decision (``DEFAULT_BUDGET`` by default; a budget under 20
    compares fewer candidates, at most ``budget / 4`` but always two). ``top_k``: how many of the
    heuristic's discard-and-draw moves are candidates. ``confidence``: how many standard
    errors an alternative must win by to overrule the heuristic. ``rho``: the weight of a hidden
    card an opponent would have thrown rather than kept (1.0: uniform deals, see
    ``informed_sample``). ``rollout_turns``: a rollout still running after this many turns is
    scored on the hands as they lie. ``heuristic``: the ranking (and fallback) agent (default: the
    heuristic with ``call_risk=CALL_RISK``); ``rollout``: the playout policy.
    """

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        budget: int = DEFAULT_BUDGET,
        *,
        top_k: int = 4,
        confidence: float = 1.5,
        rho: float = 0.35,
        rollout_turns: int = 200,
        heuristic: HeuristicAgent | None = None,
        rollout: RolloutPolicy | None = None,
    ) -> None:
        super().__init__(seed)
        if type(budget) is not int or budget < 1:
            raise ValueError(f"budget must be an integer >= 1, got {budget!r}")
        if type(top_k) is not int or top_k < 1:
            raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
        self.budget = budget
        self.top_k = top_k
        self.confidence = confidence
        self.rho = rho
        self.rollout_turns = rollout_turns
        self.heuristic = heuristic or HeuristicAgent(call_risk=CALL_RISK)
        self.rollout = rollout or RolloutPolicy()
        self.name = "search" if budget == DEFAULT_BUDGET else f"search:{budget}"

    def candidates(self, view: PlayerView) -> list[Move]:
        """The moves searched, the heuristic's own choice first."""
        if view.phase == SLAMDOWN_PHASE:
            first = self.heuristic.slamdown_choice(view)
            return [first] + [m for m in view.legal_moves if m != first]
        ranked = [m for _, m in self.heuristic.rank_moves(view)[: self.top_k]]
        if YANIV in view.legal_moves:  # first if the heuristic would call, else the first alternative
            ranked.insert(0 if self.heuristic.should_call(view) else 1, YANIV)
        return ranked

    def act(self, view: PlayerView) -> Move:
        moves = view.legal_moves
        if not moves:
            raise ValueError(f"seat {view.player} has no legal move: it is not its turn")
        cands = self.candidates(view)[: max(2, self.budget // 4)]  # a small budget compares fewer
        if len(cands) == 1:
            return cands[0]
        return cands[self.choose(view, cands)]

    def choose(self, view: PlayerView, cands: list[Move]) -> int:
        """The index of the candidate to play: 0 (the heuristic's choice) unless another beats it clearly.

        Stage 1 plays every candidate on the same ``budget / (2 k)`` samples. If the best
        alternative's mean beats the heuristic's choice, stage 2 spends the rest of the budget on
        those two alone (paired again); the alternative is played only if its mean advantage exceeds
        ``confidence`` standard errors of the paired difference.
        """
        k = len(cands)
        first = max(1, self.budget // (2 * k))
        n = [0] * k
        s1 = [0.0] * k
        s2 = [0.0] * k
        for _ in range(first):
            row = self._rollouts(view, cands)
            for i in range(1, k):
                d = row[i] - row[0]
                n[i] += 1
                s1[i] += d
                s2[i] += d * d
        j = max(range(1, k), key=lambda i: (s1[i] / n[i], -i))
        if s1[j] <= 0:
            return 0
        pair = [cands[0], cands[j]]
        for _ in range(max(0, self.budget - first * k) // 2):
            r0, rj = self._rollouts(view, pair)
            d = rj - r0
            n[j] += 1
            s1[j] += d
            s2[j] += d * d
        if n[j] < 2:
            return 0
        mean = s1[j] / n[j]
        var = max(s2[j] / n[j] - mean * mean, 0.0) * n[j] / (n[j] - 1)
        return j if mean > self.confidence * math.sqrt(var / n[j]) else 0

    def evaluate(self, view: PlayerView, cands: list[Move], samples: int | None = None) -> list[float]:
        """Each candidate's mean rollout score over ``samples`` shared samples (default: budget / k)."""
        samples = samples or max(1, self.budget // len(cands))
        sums = [0.0] * len(cands)
        for _ in range(samples):
            for i, r in enumerate(self._rollouts(view, cands)):
                sums[i] += r
        return [x / samples for x in sums]

    def _rollouts(self, view: PlayerView, cands: list[Move]) -> list[float]:
        """One sample of the hidden cards; one playout after each candidate on it."""
        base = informed_sample(view, self.rng, self.rho)
        streams = _streams(base)
        return [self._playout(base.copy(), m, view, streams) for m in cands]

    def _playout(self, g: Game, first: Move, view: PlayerView, streams: list[list[int]]) -> float:
        """Play ``first`` then the rollout policy to the end of the round; the score (module doc, 4)."""
        policy = self.rollout
        pos = [0] * g.num_players
        move = first
        for _ in range(self.rollout_turns):
            if move.kind == DISCARD and move.draw == DECK:
                _arrange(g.deck, streams[g.current], pos, g.current)
            g.apply(move)
            if g.phase == OVER:
                break
            move = policy.move(g)
        me = view.player
        if view.rules.one_round:
            keys = standing_keys(g) if g.results else [(total,) for total in g.totals]
            return placing(keys, me)
        before = view.scores
        if g.results:
            r = g.results[-1]
            after, eliminated = r.scores, r.eliminated
        else:  # unfinished: score the hands as they lie, as if the round ended with no caller
            after = tuple(s + t if a else s for s, t, a in zip(before, g.totals, g.alive))
            eliminated = ()
        others = [q for q in range(g.num_players) if q != me and view.alive[q]]
        theirs = sum(after[q] - before[q] for q in others) / len(others)
        score = theirs - (after[me] - before[me])
        if eliminated:
            if me in eliminated:
                score -= ELIMINATION
            score += ELIMINATION * sum(q in eliminated for q in others) / len(others)
        return score


def placing(keys: list[tuple[int, ...]], seat: int) -> float:
    """``seat``'s rank reward among seats ordered by ``keys`` (lower first): rank r of n gets
    1 - 2 r / (n - 1), tied seats the mean of their ranks' values (``yaniv_env.aec.rank_rewards``)."""
    n = len(keys)
    ahead = sum(key < keys[seat] for key in keys)
    tied = sum(key == keys[seat] for key in keys)
    return 1.0 - 2.0 * (ahead + (tied - 1) / 2.0) / (n - 1)


__all__ = ["DEFAULT_BUDGET", "RolloutPolicy", "SearchAgent", "informed_sample", "placing"]
