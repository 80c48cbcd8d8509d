"""Discard groups: which card combinations may be thrown, in what order they lie, what can be drawn.

A discard is one card; a *set* of two to four cards of one rank; or a *run* of three or more
consecutive cards of one suit (ace low, no wrap past the king) in which jokers stand in for
missing cards. Two jokers together are a set of their own rank. With ``jokers_in_sets`` a set
is also cards of one rank plus jokers, from ``min_set_with_jokers`` to ``max_set_size`` cards
(at least one natural).

Canonical order (what the next player sees, and what "the ends" of a group means):

* a set lies in suit order, jokers last;
* a run lies in rank order; jokers fill its gaps first, and any left over extend it upwards while
  there is room below the king, then downwards. So 5♥ 6♥ Jk lies as 5♥ 6♥ Jk(7).
* with ``discarder_places_jokers`` a run holding a joker lies as the discarder gave it, low to
  high, each joker where it stands (Jk 5♥ 6♥ is the run 4-5-6); every such order is a discard of
  its own, and an order that does not read as a run is refused.

A card set that could be read both ways (one natural and two jokers, when jokers are wild in sets
of three) counts as a set.

Of a set the next player may draw any card, its ends, or (``ends_or_top_of_pair``) the ends of
three or more and the top card of a pair; of a run its ends, and with ``ends_and_jokers`` its inner
jokers too. ``most_drawable(rules)`` bounds how many cards a group on the pile can offer.

``legal_discards`` derives every legal discard of a hand from its rank and suit groups instead of
trying every subset, so it stays cheap on the hot path.
"""

from __future__ import annotations

from itertools import combinations, permutations
from typing import Final, NamedTuple, Sequence

from yaniv.cards import NUM_RANKS, NUM_STANDARD, RANK, SUIT, card_str
from yaniv.rules import NATURAL_SET, Rules

SINGLE: Final = "single"
SET: Final = "set"
RUN: Final = "run"
MAX_SET: Final = NATURAL_SET  # the most cards of a set of naturals (four suits); jokers may add more
_COUNT_WORDS: Final = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


class Group(NamedTuple):
    """A discard as it lies on the pile."""

    cards: tuple[int, ...]  # canonical order
    kind: str  # SINGLE, SET or RUN
    player: int  # the seat that threw it; -1 for the card turned up at the deal
    drawable: tuple[int, ...]  # the cards the next player may take from it


def classify(cards: Sequence[int], rules: Rules) -> tuple[str, tuple[int, ...]]:
    """The kind and the order on the pile of a discard; ValueError saying why if it is not legal.

    The order is the canonical one, except for a run with jokers under ``discarder_places_jokers``,
    which keeps the order given (low to high, each joker where it stands).
    """
    n = len(cards)
    if n == 0:
        raise ValueError("a discard needs at least one card")
    if len(set(cards)) != n:
        raise ValueError(f"a discard names a card twice: {_names(cards)}")
    if n == 1:
        return SINGLE, (cards[0],)
    naturals = sorted(c for c in cards if c < NUM_STANDARD)
    jokers = sorted(c for c in cards if c >= NUM_STANDARD)
    ranks = {RANK[c] for c in naturals}
    if not naturals:  # two jokers: a set of the joker rank
        return SET, tuple(jokers)
    if len(ranks) == 1:
        if not jokers:  # at most four: the cards are distinct
            return SET, tuple(naturals)
        if jokers_may_set(n, rules):
            return SET, tuple(naturals) + tuple(jokers)
        if rules.jokers_in_sets and n > rules.max_set_size:
            raise ValueError(f"a set has two to {_COUNT_WORDS[rules.max_set_size]} cards, not {n}: {_names(cards)}")
        if len(naturals) > 1 or n < 3:
            raise ValueError(_no_joker_set(cards, rules))
        # one natural and jokers: read as a run below
    if n < 3:
        raise ValueError(f"two cards must be of one rank: {_names(cards)}")
    if len({SUIT[c] for c in naturals}) != 1:
        raise ValueError(f"not a set (ranks differ) and not a run (suits differ): {_names(cards)}")
    order = run_order(naturals, jokers)
    if order is None:  # (two naturals of one suit and one rank would be the same card: no duplicates here)
        span = RANK[naturals[-1]] - RANK[naturals[0]] + 1
        raise ValueError(
            f"not a run: {_names(cards)} leaves {span - len(naturals)} gap(s) and has {len(jokers)} joker(s) "
            "to fill them (aces are low and runs do not wrap past the king)"
        )
    if jokers and rules.discarder_places_jokers:
        if not _reads_as_run(cards):
            raise ValueError(
                f"not a run in the order given: {_names(cards)}; with discarder_places_jokers a run with jokers "
                f"is given low to high, each joker where it stands (for example {_names(order)})"
            )
        return RUN, tuple(cards)
    return RUN, order


def jokers_may_set(size: int, rules: Rules) -> bool:
    """Whether jokers are wild in a set of ``size`` cards (jokers and naturals of one rank) under ``rules``."""
    return rules.jokers_in_sets and rules.min_set_with_jokers <= size <= rules.max_set_size


def _no_joker_set(cards: Sequence[int], rules: Rules) -> str:
    if not rules.jokers_in_sets:
        return f"jokers are not wild in sets under these rules: {_names(cards)}"
    low, high = _COUNT_WORDS[rules.min_set_with_jokers], _COUNT_WORDS[rules.max_set_size]
    return f"jokers are wild only in sets of {low} to {high} cards under these rules: {_names(cards)}"


def _reads_as_run(cards: Sequence[int]) -> bool:
    """Whether ``cards`` (naturals of one suit, and jokers) read as a run in the order given, low to high."""
    first = next(i for i, c in enumerate(cards) if c < NUM_STANDARD)
    low = RANK[cards[first]] - first
    if low < 0 or low + len(cards) > NUM_RANKS:
        return False
    return all(c >= NUM_STANDARD or RANK[c] == low + i for i, c in enumerate(cards))


def run_placements(naturals: Sequence[int], jokers: Sequence[int]) -> list[tuple[int, ...]]:
    """Every order of a run of ``naturals`` (one suit, sorted by rank) and ``jokers``, low to high: each
    stretch of ranks the run can cover, each joker in each rank left free (``discarder_places_jokers``)."""
    size = len(naturals) + len(jokers)
    lo, hi = RANK[naturals[0]], RANK[naturals[-1]]
    by_rank = {RANK[c]: c for c in naturals}
    found = []
    for start in range(max(0, hi - size + 1), min(lo, NUM_RANKS - size) + 1):
        free = [r for r in range(start, start + size) if r not in by_rank]
        for order in permutations(jokers):
            stand = dict(zip(free, order))
            found.append(tuple(by_rank.get(r, stand.get(r, -1)) for r in range(start, start + size)))
    return found


def run_order(naturals: Sequence[int], jokers: Sequence[int]) -> tuple[int, ...] | None:
    """Canonical order of a run from its naturals (one suit, sorted by rank) and jokers, or None."""
    lo, hi = RANK[naturals[0]], RANK[naturals[-1]]
    gaps = hi - lo + 1 - len(naturals)
    extra = len(jokers) - gaps
    if extra < 0 or len({RANK[c] for c in naturals}) != len(naturals):
        return None
    up = min(extra, NUM_RANKS - 1 - hi)
    down = extra - up
    if down > lo:
        return None
    by_rank = {RANK[c]: c for c in naturals}
    spare = list(jokers)
    return tuple(by_rank[r] if r in by_rank else spare.pop(0) for r in range(lo - down, hi + up + 1))


def drawable_cards(kind: str, cards: tuple[int, ...], rules: Rules) -> tuple[int, ...]:
    """The cards of a group (in canonical order) that the next player may draw."""
    if kind == SINGLE:
        return cards
    if kind == SET:
        if rules.draw_from_set == "any":
            return cards
        if len(cards) == 2 and rules.draw_from_set == "ends_or_top_of_pair":
            return cards[1:]  # the top card of a pair: the last as it lies
        return (cards[0], cards[-1])
    ends = (cards[0], cards[-1])
    if rules.draw_from_run == "ends_and_jokers":
        return ends[:1] + tuple(c for c in cards[1:-1] if c >= NUM_STANDARD) + ends[1:]
    return ends


def most_drawable(rules: Rules) -> int:
    """The most cards one group on the pile can offer the next player under ``rules``.

    A run offers its two ends, and its inner jokers with ``ends_and_jokers``; a set with
    ``draw_from_set = any`` all its cards: four naturals, or with jokers wild in sets up to
    ``max_set_size`` cards, one more after a slamdown, never more than four naturals and the jokers.
    """
    run = 2 + (rules.jokers if rules.draw_from_run == "ends_and_jokers" else 0)
    if rules.draw_from_set != "any":
        return max(run, 2)
    largest = NATURAL_SET
    if rules.jokers_in_sets:
        largest = min(rules.max_set_size + rules.slamdown, NATURAL_SET + rules.jokers)
    return max(run, largest)


def discard_settings(rules: Rules) -> tuple:
    """The settings ``legal_discards`` reads, as a key for memos of what it returns for a hand."""
    return (rules.jokers_in_sets, rules.min_set_with_jokers, rules.max_set_size, rules.discarder_places_jokers)


def make_group(cards: Sequence[int], rules: Rules, player: int) -> Group:
    kind, ordered = classify(cards, rules)
    return Group(ordered, kind, player, drawable_cards(kind, ordered, rules))


def slamdown_extends(group: Group, card: int) -> bool:
    """Whether ``card`` (just drawn from the deck) may be slammed onto ``group``.

    It must be a natural card: of the set's rank, or of the run's suit one rank beyond either end.
    Jokers are never slammed: where a joker would extend a run is not defined by any rule text.
    """
    if card >= NUM_STANDARD:
        return False
    if group.kind == RUN:
        natural = next(c for c in group.cards if c < NUM_STANDARD)
        lo = RANK[natural] - group.cards.index(natural)
        hi = lo + len(group.cards) - 1
        return SUIT[card] == SUIT[natural] and RANK[card] in (lo - 1, hi + 1)
    ranks = {RANK[c] for c in group.cards if c < NUM_STANDARD}
    return ranks == {RANK[card]}


def add_slamdown(group: Group, card: int, rules: Rules) -> Group:
    """The group with a slammed card added at its place."""
    if group.kind == RUN:
        natural = next(c for c in group.cards if c < NUM_STANDARD)
        lo = RANK[natural] - group.cards.index(natural)
        cards = (card,) + group.cards if RANK[card] == lo - 1 else group.cards + (card,)
        kind = RUN
    else:
        kind = SET
        naturals = sorted(c for c in group.cards + (card,) if c < NUM_STANDARD)
        cards = tuple(naturals) + tuple(c for c in group.cards if c >= NUM_STANDARD)
    return Group(cards, kind, group.player, drawable_cards(kind, cards, rules))


# ----------------------------------------------------------------------------------------------
# Enumeration
# ----------------------------------------------------------------------------------------------

# Index patterns for every subset of size >= k of n items, built once.
_SUBSETS: Final = {
    (n, k): tuple(c for size in range(k, n + 1) for c in combinations(range(n), size))
    for n in range(8)
    for k in range(4)
}


def legal_discards(hand: Sequence[int], rules: Rules) -> list[tuple[int, ...]]:
    """Every legal discard of a hand, each in canonical order, in a fixed order: singles, sets, runs.

    Sets come from the hand's rank groups and runs from its suit groups, never from the 2^n
    subsets of the hand. The combinations of one rank group (or one suit group) with the hand's
    jokers are computed once and remembered, so a turn costs one pass over the hand plus a few
    dictionary look-ups.
    """
    discards: list[tuple[int, ...]] = [(c,) for c in hand]
    if len(hand) < 2:
        return discards
    jokers: tuple[int, ...] = ()
    seen_ranks = 0
    paired = False
    suit_ranks = [0, 0, 0, 0]  # suit -> bit mask of its ranks in the hand
    for c in hand:
        if c >= NUM_STANDARD:
            jokers += (c,)
            continue
        bit = _RANK_BIT[c]
        paired = paired or bool(seen_ranks & bit)
        seen_ranks |= bit
        suit_ranks[SUIT[c]] |= bit
    if len(jokers) == 2 and jokers[0] > jokers[1]:
        jokers = jokers[::-1]
    wild = rules.jokers_in_sets
    set_jokers = jokers if wild else ()
    if paired or set_jokers:
        sizes = (rules.min_set_with_jokers, rules.max_set_size)
        rank_suits: dict[int, int] = {}  # rank -> bit mask of its suits in the hand
        for c in hand:
            if c < NUM_STANDARD:
                rank_suits[RANK[c]] = rank_suits.get(RANK[c], 0) | 1 << SUIT[c]
        for r, suits in rank_suits.items():
            if suits & (suits - 1) or set_jokers:  # two cards of the rank, or wild jokers
                key = (r, suits, set_jokers, sizes)
                found = _SET_MEMO.get(key)
                if found is None:
                    found = _SET_MEMO[key] = _sets_of_rank(r, suits, set_jokers, sizes)
                discards += found
    if len(jokers) == 2:
        discards.append(jokers)
    need = 3 - len(jokers)
    triple_sets = jokers_may_set(3, rules)  # one natural and two jokers: a set, then, not a run
    placed = rules.discarder_places_jokers
    for s in range(4):
        ranks = suit_ranks[s]
        if ranks and ranks.bit_count() >= need:
            key = (s, ranks, jokers, triple_sets, placed)
            found = _RUN_MEMO.get(key)
            if found is None:
                found = _RUN_MEMO[key] = _runs_of_suit(s, ranks, jokers, triple_sets, placed)
            discards += found
    return discards


_RANK_BIT: Final = tuple(1 << RANK[c] for c in range(NUM_STANDARD))
_SET_MEMO: Final[dict[tuple, tuple[tuple[int, ...], ...]]] = {}
_RUN_MEMO: Final[dict[tuple, tuple[tuple[int, ...], ...]]] = {}


def _sets_of_rank(
    rank: int, suits: int, jokers: tuple[int, ...], sizes: tuple[int, int]
) -> tuple[tuple[int, ...], ...]:
    """Every set made of the given cards of one rank (``suits`` a bit mask) plus wild ``jokers``:
    two to four naturals, or from ``sizes[0]`` to ``sizes[1]`` cards with a joker."""
    naturals = [s * NUM_RANKS + rank for s in range(4) if suits >> s & 1]
    smallest, largest = sizes
    found = []
    for idx in _SUBSETS[len(naturals), 1]:
        base = tuple(naturals[i] for i in idx)
        for j in range(len(jokers) + 1):
            size = len(base) + j
            if (2 <= size <= MAX_SET) if j == 0 else (smallest <= size <= largest):
                found += [base + combo for combo in combinations(jokers, j)]
    return tuple(found)


def _runs_of_suit(
    suit: int, ranks: int, jokers: tuple[int, ...], triple_sets: bool, placed: bool
) -> tuple[tuple[int, ...], ...]:
    """Every run made of the given cards of one suit (``ranks`` a bit mask) and the hand's ``jokers``;
    with ``placed`` (``discarder_places_jokers``) every placement of the jokers."""
    suit_cards = [suit * NUM_RANKS + r for r in range(NUM_RANKS) if ranks >> r & 1]
    if len(suit_cards) + len(jokers) < 3:
        return ()
    found = []
    for idx in _SUBSETS[len(suit_cards), 1]:
        naturals = [suit_cards[i] for i in idx]
        gaps = RANK[naturals[-1]] - RANK[naturals[0]] + 1 - len(naturals)
        for j in range(max(gaps, 3 - len(naturals)), len(jokers) + 1):
            if triple_sets and len(naturals) == 1 and j == 2:
                continue  # one natural and two jokers is read as a set when jokers are wild in sets of three
            for combo in combinations(jokers, j):
                order = run_order(naturals, combo)
                if order is not None:
                    found += run_placements(naturals, combo) if placed and combo else [order]
    return tuple(found)


def _names(cards: Sequence[int]) -> str:
    return " ".join(card_str(c) for c in cards)
