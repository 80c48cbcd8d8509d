"""Hand-total odds: how likely a player's hidden cards sum to at most some value.

A Yaniv call is Assafed when an opponent's total is at most the caller's (below it when
``assaf_on_equal`` is off), so these odds are the core of every call decision. The model is the
heuristic bot's (``agents.baselines.heuristic``), on a full deck rather than on the cards one player has
not seen, so that it needs no per-view counting and fits in small tables:

* hidden cards are independent draws of a card value (with replacement);
* a player who has discarded this round sheds high cards first, so each card it kept through
  that discard is worth at most the highest card it threw with the full deck's odds, and more
  than it with ``KEPT_HIGH_WEIGHT`` times them;
* the card it drew from the deck since that discard is a plain card of the deck.

>>> round(at_most(jokers=2, cap=-1, plain=1, skewed=0)[3], 3)  # one card of a 54-card deck <= 3
0.259
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final, Iterable, Sequence

from yaniv.cards import POINTS, deck_cards

MAX_POINTS: Final = 10  # the most points one card is worth
MAX_TOTAL: Final = 70  # the most points a hand holds (seven ten-point cards)
KEPT_HIGH_WEIGHT: Final = 0.35  # the odds of a kept card above the cap, relative to the deck's
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


@lru_cache(maxsize=8)
def value_counts(jokers: int) -> tuple[int, ...]:
    """How many cards of each value (0..10) a full deck with ``jokers`` jokers holds."""
    counts = [0] * (MAX_POINTS + 1)
    for c in deck_cards(jokers):
        counts[POINTS[c]] += 1
    return tuple(counts)


@lru_cache(maxsize=4096)
def at_most(jokers: int, cap: int, plain: int, skewed: int) -> tuple[float, ...]:
    """``t -> P(total <= t)`` for t = 0..``MAX_TOTAL``, the total of ``plain`` cards of the deck plus
    ``skewed`` cards kept through a discard whose highest card was worth ``cap`` (``cap = -1``:
    no discard, so the skewed cards are plain too)."""
    counts = value_counts(jokers)
    n = sum(counts)
    deck = [x / n for x in counts]
    if cap < 0:
        kept = deck
    else:
        w = [x * (1.0 if v <= cap else KEPT_HIGH_WEIGHT) for v, x in enumerate(counts)]
        kept = [x / sum(w) for x in w]
    a = sum_distribution(deck, plain, MAX_TOTAL)
    b = sum_distribution(kept, skewed, MAX_TOTAL)
    out, acc = [], 0.0
    for t in range(MAX_TOTAL + 1):
        acc += sum(a[i] * b[t - i] for i in range(t + 1))
        out.append(min(acc, 1.0))
    return tuple(out)


__all__ = ["KEPT_HIGH_WEIGHT", "MAX_TOTAL", "at_most", "sum_distribution", "value_counts"]
