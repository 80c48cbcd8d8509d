"""yaniv.odds: the hand-total odds behind the observation's Assaf features, checked by hand."""

from __future__ import annotations

import pytest

from yaniv.odds import KEPT_HIGH_WEIGHT, MAX_TOTAL, at_most, value_counts


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
