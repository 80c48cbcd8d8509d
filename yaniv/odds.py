"""Hand-total odds: how likely a player's hidden cards sum to at most some value.

A Yaniv call is Assafed when an opponent's total is at most the caller's (below it when
``assaf_on_equal`` is off), so these odds are the core of every call decision. Each model treats
hidden cards as independent draws of a card value (with replacement), so a hand's total is a
convolution (``sum_distribution``). Three readers, three models, one set of constants:

``assaf_risk(view, total)``
    The heuristic bot's call (``agents.baselines.heuristic``): the chance that some opponent
    Assafs a call at ``total``, the hidden cards drawn from the cards ``view``'s player has not
    seen (``PlayerView.unseen_cards``). An opponent that has discarded this round sheds high cards
    first, so each card it kept through its last discard (``yaniv.game.last_discards``) is worth
    at most the highest card it threw with the unseen cards' odds, and more than it with
    ``KEPT_HIGH_WEIGHT`` times them; the card it drew from the deck since is a plain unseen card.
``at_most(jokers, cap, plain, skewed)``
    The same model on a full deck instead of one player's unseen cards, so that it needs no
    per-view counting and fits in small tables: the observation's Assaf features
    (``yaniv_env.encoding``).
``at_most_table(jokers, tilt)``
    The search bot's fast rollouts (``agents.baselines.search``): one plain card of the deck (the
    last draw) and the other hidden cards weighted per value by ``KEPT_VALUE_WEIGHT``.

``round_end_chance(hand_sizes)`` is the chance that an opponent ends the round before a player's
next turn, which the score-aware heuristic and the observation's reset_soon and over_soon
segments weigh what a move does to the score by.

The models round differently (``assaf_risk`` sums its joint table by rows, the tables add up
running totals), and each reader's decisions depend on its model's exact floats: they share
their pieces, not their arithmetic. Where the figures behind the constants come from:
``docs/experiments.md``.

>>> round(at_most(jokers=2, cap=-1, plain=1, skewed=0)[3], 3)  # one card of a 54-card deck <= 3
0.259
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final, Iterable, Sequence

from yaniv.cards import POINTS, deck_cards, hand_points
from yaniv.game import DECK, PlayerView, last_discards
from yaniv.rules import MAX_HAND

MAX_POINTS: Final = 10  # the most points one card is worth
MAX_TOTAL: Final = 70  # the most points a hand holds (seven ten-point cards)
# The odds of a card above the cap kept through a discard, relative to a plain card's
# (``assaf_risk``, ``at_most``): players shed their high cards first.
KEPT_HIGH_WEIGHT: Final = 0.35
# Per card value 0..10: how much likelier than a uniformly dealt card a hidden card of that value is
# in the hand of a player who has thrown at least once this round (``at_most_table``, and the search
# bot's informed deals); measured on the heuristic bot's own games and rounded.
KEPT_VALUE_WEIGHT: Final = (1.2, 2.0, 2.0, 1.7, 1.5, 1.3, 1.2, 1.0, 0.8, 0.8, 0.35)
# The chance that an opponent holding this many cards calls Yaniv (ending the round) before a given
# player's next turn: rough guesses, 0.02 for larger hands. The score-aware heuristic weighs what a
# move does to its score by it, and the observation's reset_soon and over_soon segments carry it.
ROUND_END_CHANCE: Final = {1: 0.6, 2: 0.35, 3: 0.12}
ROUND_END_CHANCE_OTHERWISE: Final = 0.02


def round_end_chance(hand_sizes: Iterable[int]) -> float:
    """The chance that one of the opponents holding these hand sizes ends the round first (each
    independently, by ``ROUND_END_CHANCE``).

    >>> round(round_end_chance([1, 5]), 3)  # 1 - (1 - 0.6) * (1 - 0.02)
    0.608
    """
    stay = 1.0
    for size in hand_sizes:
        stay *= 1.0 - ROUND_END_CHANCE.get(size, ROUND_END_CHANCE_OTHERWISE)
    return 1.0 - stay


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


def count_values(cards: Iterable[int]) -> list[int]:
    """How many of ``cards`` are worth each value 0..``MAX_POINTS``."""
    counts = [0] * (MAX_POINTS + 1)
    for c in cards:
        counts[POINTS[c]] += 1
    return counts


@lru_cache(maxsize=8)
def value_counts(jokers: int) -> tuple[int, ...]:
    """How many cards of each value (0..10) a full deck with ``jokers`` jokers holds."""
    return tuple(count_values(deck_cards(jokers)))


def _normalize(weights: Sequence[float]) -> tuple[float, ...]:
    """``weights`` scaled to sum to 1 (all on value 0 when they are all 0)."""
    total = sum(weights)
    return tuple(w / total for w in weights) if total else tuple([1.0] + [0.0] * MAX_POINTS)


def _cumulative(plain: Sequence[float], n_plain: int, kept: Sequence[float], n_kept: int) -> tuple[float, ...]:
    """``t -> P(total <= t)`` for t = 0..``MAX_TOTAL``: ``n_plain`` cards of ``plain`` plus ``n_kept``
    of ``kept``, summed as running totals."""
    a = sum_distribution(plain, n_plain, MAX_TOTAL)
    b = sum_distribution(kept, n_kept, MAX_TOTAL)
    out, acc = [], 0.0
    for t in range(MAX_TOTAL + 1):
        acc += sum(a[i] * b[t - i] for i in range(t + 1))
        out.append(min(acc, 1.0))
    return tuple(out)


@lru_cache(maxsize=4096)
def at_most(jokers: int, cap: int, plain: int, skewed: int) -> tuple[float, ...]:
    """``t -> P(total <= t)`` for t = 0..``MAX_TOTAL``, the total of ``plain`` cards of the deck plus
    ``skewed`` cards kept through a discard whose highest card was worth ``cap`` (``cap = -1``:
    no discard, so the skewed cards are plain too)."""
    counts = value_counts(jokers)
    deck = _normalize(counts)
    kept = deck if cap < 0 else _normalize([x * (1.0 if v <= cap else KEPT_HIGH_WEIGHT) for v, x in enumerate(counts)])
    return _cumulative(deck, plain, kept, skewed)


@lru_cache(maxsize=8)
def at_most_table(jokers: int, tilt: bool = True) -> tuple[tuple[float, ...], ...]:
    """``table[k][t]``: P(sum of k hidden cards <= t) for k = 0..``MAX_HAND``, t = 0..``MAX_TOTAL``.

    One card is a plain card of the deck (the last draw) and the other k - 1 follow
    ``KEPT_VALUE_WEIGHT`` (cards a player kept), or the deck too without ``tilt``.
    """
    counts = value_counts(jokers)
    deck = _normalize(counts)
    kept = _normalize([x * w for x, w in zip(counts, KEPT_VALUE_WEIGHT)]) if tilt else deck
    return (tuple([1.0] * (MAX_TOTAL + 1)),) + tuple(_cumulative(deck, 1, kept, k - 1) for k in range(1, MAX_HAND + 1))


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


def assaf_risk(view: PlayerView, total: int | None = None, kept_high_weight: float = KEPT_HIGH_WEIGHT) -> float:
    """The chance that calling Yaniv now at ``total`` (default: the hand's) is Assafed, by the
    unseen-cards model of the module docstring, each opponent independently.

    An opponent's known cards (``view.known``) count as they are; its other cards are hidden.
    """
    if total is None:
        total = hand_points(view.hand)
    counts = count_values(view.unseen_cards())
    plain = _normalize(counts)
    last = last_discards(view.events, sum(view.alive))
    strict = 0 if view.rules.assaf_on_equal else 1
    p_safe = 1.0
    for q in range(view.num_players):
        if q == view.player or not view.alive[q]:
            continue
        known = view.known[q]
        hidden = view.hand_sizes[q] - len(known)
        limit = total - strict - hand_points(known)
        if limit < 0:
            continue
        discard = last.get(q)
        if discard is not None and hidden > 0:
            cap = max(POINTS[c] for c in discard.cards)
            skewed = _normalize([x * (1.0 if v <= cap else kept_high_weight) for v, x in enumerate(counts)])
            n_plain = 1 if discard.drew == DECK else 0
            p = _prob_at_most(plain, skewed, n_plain, hidden - n_plain, limit)
        else:
            p = _prob_at_most(plain, plain, hidden, 0, limit)
        p_safe *= 1.0 - p
    return 1.0 - p_safe


__all__ = [
    "KEPT_HIGH_WEIGHT",
    "KEPT_VALUE_WEIGHT",
    "MAX_POINTS",
    "MAX_TOTAL",
    "assaf_risk",
    "at_most",
    "at_most_table",
    "count_values",
    "round_end_chance",
    "sum_distribution",
    "value_counts",
]
