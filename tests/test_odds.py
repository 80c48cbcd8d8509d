"""yaniv.odds: the hand-total odds of the observation, the heuristic's call and the search's rollouts, checked by hand."""

from __future__ import annotations

import pytest

from yaniv import POINTS, Game, parse_cards
from yaniv.cards import deck_cards
from yaniv.odds import (
    KEPT_HIGH_WEIGHT,
    KEPT_VALUE_WEIGHT,
    MAX_TOTAL,
    assaf_risk,
    at_most,
    at_most_table,
    count_values,
    value_counts,
)
from yaniv.rules import MAX_HAND


def test_value_counts_of_a_full_deck():
    # jokers 0 points; aces 1 ... nines 9 (four each); tens and faces 10 (sixteen)
    assert value_counts(2) == (2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 16)
    assert value_counts(0)[0] == 0 and sum(value_counts(0)) == 52


@pytest.mark.parametrize(
    "jokers, cap, plain, skewed, t, expected",
    [
        (2, -1, 1, 0, 3, 14 / 54),  # two jokers, four aces, twos, threes
        (0, -1, 2, 0, 2, (4 / 52) ** 2),  # only ace + ace
        (2, -1, 0, 0, 0, 1.0),  # no hidden cards: the total is zero
        # one card kept through a discard topped by a 2: values 0..2 (10 cards) weigh 1, the
        # 44 others 0.35, so P(<= 2) = 10 / (10 + 0.35 * 44) = 10 / 25.4
        (2, 2, 0, 1, 2, 10 / (10 + KEPT_HIGH_WEIGHT * 44)),
        # that kept card plus a plain one summing to 0: both jokers
        (2, 2, 1, 1, 0, (2 / 54) * (2 / (10 + KEPT_HIGH_WEIGHT * 44))),
        (2, 10, 0, 1, 3, 14 / 54),  # a cap of 10 leaves the kept card plain
    ],
)
def test_at_most_by_hand(jokers, cap, plain, skewed, t, expected):
    assert at_most(jokers, cap, plain, skewed)[t] == pytest.approx(expected)


def test_at_most_is_a_distribution_function():
    row = at_most(2, 5, 1, 6)
    assert len(row) == MAX_TOTAL + 1
    assert all(a <= b for a, b in zip(row, row[1:]))
    assert row[-1] == pytest.approx(1.0)
    # keeping cards through a low discard makes a low total likelier than plain cards do
    assert at_most(2, 3, 0, 4)[10] > at_most(2, -1, 0, 4)[10]


def test_count_values_counts_cards_by_points():
    assert count_values(parse_cards("JK1 AS AH 5D KC QS")) == [1, 2, 0, 0, 0, 1, 0, 0, 0, 0, 2]


def test_at_most_table_by_hand():
    counts = value_counts(2)
    tilted = [x * w for x, w in zip(counts, KEPT_VALUE_WEIGHT)]
    table = at_most_table(2)
    assert len(table) == MAX_HAND + 1 and all(len(row) == MAX_TOTAL + 1 for row in table)
    assert table[0] == (1.0,) * (MAX_TOTAL + 1)  # no hidden card: the total is zero
    assert table[1][3] == pytest.approx(14 / 54)  # the one card is a plain card of the deck
    # two cards summing to 0: a plain joker and a kept joker
    assert table[2][0] == pytest.approx((2 / 54) * (tilted[0] / sum(tilted)))
    # untilted, k cards are k plain cards of the deck: at_most's numbers
    untilted = at_most_table(2, tilt=False)
    for k in range(1, MAX_HAND + 1):
        assert untilted[k] == pytest.approx(at_most(2, -1, k, 0))


def test_assaf_risk_of_one_hidden_card_counts_the_unseen_cards():
    # Seat 1 holds one card and has not discarded: it is a plain unseen card. Seat 0 calls at 3 and
    # an equal total Assafs (default rules), so the risk is the share of the unseen cards worth at
    # most 3. Seat 0 sees its hand and the pile's king: 51 unseen cards, of which two jokers, three
    # aces, three twos and four threes are worth at most 3.
    hands = [parse_cards("AS 2S"), parse_cards("9H")]
    pile = [parse_cards("KD")]
    deck = sorted(set(deck_cards(2)) - {c for cards in hands + pile for c in cards})
    view = Game.from_position(hands, pile, deck).view(0)
    unseen = view.unseen_cards()
    assert len(unseen) == 51 and sum(POINTS[c] <= 3 for c in unseen) == 12
    assert assaf_risk(view) == pytest.approx(12 / 51)
    assert assaf_risk(view, 0) == pytest.approx(2 / 51)  # only a joker ties a total of 0
