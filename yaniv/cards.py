"""Cards as small integers, with lookup tables for rank, suit and points.

Card ids::

    id = suit * 13 + rank      for the 52 standard cards (0..51)
    52, 53                     the two jokers

    rank: 0 = ace, 1 = two, ..., 9 = ten, 10 = jack, 11 = queen, 12 = king
    suit: 0 = clubs, 1 = diamonds, 2 = hearts, 3 = spades

Points: ace 1, two to ten their face value, jack/queen/king 10, joker 0.

Strings are for display and for the outside world only. ``card_str`` gives a
display name with a suit symbol ("10♥", "A♠", "Jk"); ``card_code`` an ASCII
code ("TH", "AS", "JK1"); ``parse_card`` reads either, and "10H" too.
"""

from __future__ import annotations

from typing import Final, Iterable

NUM_RANKS: Final = 13
NUM_SUITS: Final = 4
NUM_STANDARD: Final = NUM_RANKS * NUM_SUITS  # 52
MAX_JOKERS: Final = 2
NUM_CARDS: Final = NUM_STANDARD + MAX_JOKERS  # 54 ids; a deck uses 52 + rules.jokers of them
JOKERS: Final = (52, 53)

JOKER_RANK: Final = NUM_RANKS  # 13: jokers share one rank of their own (a pair of jokers is a set)
JOKER_SUIT: Final = NUM_SUITS  # 4

RANK_SYMBOLS: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
RANK_CODES: Final = "A23456789TJQK"
SUIT_SYMBOLS: Final = ("♣", "♦", "♥", "♠")
SUIT_CODES: Final = "CDHS"

RANK: Final[tuple[int, ...]] = tuple(c % NUM_RANKS for c in range(NUM_STANDARD)) + (JOKER_RANK,) * MAX_JOKERS
SUIT: Final[tuple[int, ...]] = tuple(c // NUM_RANKS for c in range(NUM_STANDARD)) + (JOKER_SUIT,) * MAX_JOKERS
POINTS: Final[tuple[int, ...]] = tuple(min(r + 1, 10) for r in RANK[:NUM_STANDARD]) + (0,) * MAX_JOKERS

# Hands are kept sorted by (points, rank, suit): jokers first, then aces, ..., then the
# ten-point cards in the order 10, J, Q, K. One integer key per card keeps the sort cheap; the card
# id breaks the tie between the two jokers, so a hand's order never depends on how it was dealt.
SORT_KEY: Final[tuple[int, ...]] = tuple(
    ((POINTS[c] * 16 + RANK[c]) * 8 + SUIT[c]) * NUM_CARDS + c for c in range(NUM_CARDS)
)


def is_joker(card: int) -> bool:
    return card >= NUM_STANDARD


def make_card(rank: int, suit: int) -> int:
    """The id of a standard card from its rank (0 = ace .. 12 = king) and suit (0..3)."""
    if not (0 <= rank < NUM_RANKS and 0 <= suit < NUM_SUITS):
        raise ValueError(f"no card with rank {rank} and suit {suit}")
    return suit * NUM_RANKS + rank


def deck_cards(jokers: int) -> tuple[int, ...]:
    """The ids of a full deck with the given number of jokers, in id order."""
    return tuple(range(NUM_STANDARD)) + JOKERS[:jokers]


def hand_points(cards: Iterable[int]) -> int:
    """The total points of some cards."""
    return sum(POINTS[c] for c in cards)


def sort_hand(cards: Iterable[int]) -> list[int]:
    """Cards in hand order: by points, then rank, then suit (jokers first)."""
    return sorted(cards, key=SORT_KEY.__getitem__)


def card_str(card: int) -> str:
    """Display name with a suit symbol: "A♠", "10♥", "Jk"."""
    _check_id(card)
    if is_joker(card):
        return "Jk"
    return RANK_SYMBOLS[RANK[card]] + SUIT_SYMBOLS[SUIT[card]]


def card_code(card: int) -> str:
    """ASCII code, unique per id: "AS", "TH", "JK1", "JK2"."""
    _check_id(card)
    if is_joker(card):
        return f"JK{card - NUM_STANDARD + 1}"
    return RANK_CODES[RANK[card]] + SUIT_CODES[SUIT[card]]


def cards_str(cards: Iterable[int]) -> str:
    return " ".join(card_str(c) for c in cards)


_SUIT_LOOKUP: Final = {**{s: i for i, s in enumerate(SUIT_CODES)}, **{s: i for i, s in enumerate(SUIT_SYMBOLS)}}
_RANK_LOOKUP: Final = {**{r: i for i, r in enumerate(RANK_CODES)}, "10": 9}


def parse_card(text: str) -> int:
    """Read one card: "AS", "as", "10H", "TH", "Q♦", "JK1", "JK2" (a bare "JK" is the first joker)."""
    raw = text.strip().upper()
    if raw in ("JK", "JK1", "JOKER", "JOKER1"):
        return JOKERS[0]
    if raw in ("JK2", "JOKER2"):
        return JOKERS[1]
    rank_text, suit_text = raw[:-1], raw[-1:]
    if rank_text not in _RANK_LOOKUP or suit_text not in _SUIT_LOOKUP:
        raise ValueError(
            f"unknown card {text!r}: expected a rank (A 2-10 T J Q K) then a suit (C D H S or ♣ ♦ ♥ ♠), "
            "or JK1/JK2 for a joker"
        )
    return make_card(_RANK_LOOKUP[rank_text], _SUIT_LOOKUP[suit_text])


def parse_cards(text: str) -> tuple[int, ...]:
    """Read cards separated by spaces or commas: "5H 5S JK1"."""
    return tuple(parse_card(t) for t in text.replace(",", " ").split())


def _check_id(card: int) -> None:
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card} is out of range 0..{NUM_CARDS - 1}")
