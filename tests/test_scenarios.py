"""Hand-worked scenario tests of the Yaniv rules engine, one table per rule of docs/rules.md.

Every expected value below was worked out by hand from the rules text (docs/rules.md), not by
running the engine; the arithmetic sits in a comment where it is not obvious. Positions are set up
with ``position(...)``: a ``Game`` whose hands, deck and pile are overwritten with named cards
("5H 6H JK1": ranks A 2-10 T J Q K, suits C D H S, jokers JK1 JK2).

Sections:
 1. discards (classify, legal_discards, apply)      7. reshuffle
 2. drawing                                         8. slamdown
 3. Yaniv eligibility                               9. turn cap
 4. showdowns and the next round                   10. rules validation
 5. score resets                                   11. presets
 6. game end
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import pytest

import numpy as np

from yaniv.cards import deck_cards, hand_points, parse_cards, sort_hand
from yaniv.game import DECK, KEEP, SLAMDOWN, YANIV, Event, Game, Move
from yaniv.melds import Group, classify, legal_discards, make_group
from yaniv.rules import PRESETS, Rules, get_rules, presets_table_markdown, rules_table_markdown

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules.md"

WILD = Rules(jokers_in_sets=True)
SLAM = Rules(slamdown=True)


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------


def C(text: str) -> tuple[int, ...]:
    """Cards from their codes: C("5H 6H JK1")."""
    return parse_cards(text)


def position(
    hands: list[str],
    *,
    rules: str | Rules = "default",
    top: str | None = None,
    top_by: int | None = None,
    dead: tuple[str, ...] = (),
    deck: str = "",
    rest: str | None = "deck",
    current: int = 0,
    scores: list[int] | None = None,
    single_round: bool = False,
) -> Game:
    """A game at the start of ``current``'s turn, with the given cards.

    hands   one card string per seat ("" for a seat out of the game: give it a score over the limit)
    top     the group on top of the pile, thrown by ``top_by`` (default: the seat before ``current``);
            None: a card turned up at the deal (the lowest card not placed anywhere else)
    dead    earlier groups under the top (bottom first); nobody may draw them any more
    deck    the top cards of the deck, the first named drawn first
    rest    where every card not named goes: "deck" (under the named deck cards, so all cards are
            accounted for), "dead" (one dead single per card, under the named pile) or None (left out)
    """
    rules = get_rules(rules)
    full = deck_cards(rules.jokers)
    named = [c for h in hands for c in C(h)] + list(C(deck)) + [c for d in dead for c in C(d)] + list(C(top or ""))
    assert len(named) == len(set(named)), "a card is placed twice"
    unused = [c for c in full if c not in named]
    if top is None:
        top_cards, top_by = (unused.pop(0),), -1
    else:
        top_cards = C(top)
    pile = [(c,) for c in (unused if rest == "dead" else [])] + [C(d) for d in dead] + [top_cards]
    below = unused if rest == "deck" else []
    return Game.from_position([C(h) for h in hands], pile, list(C(deck)) + below[::-1], rules, top_by=top_by,
                              current=current, scores=scores, single_round=single_round, seed=0)


def all_cards(g: Game) -> list[int]:
    """Every card of the game (hands, deck, pile), sorted: a full deck when nothing is lost."""
    return sorted([c for h in g.hands for c in h] + g.deck + list(g.pile_cards()))


def snapshot(g: Game) -> tuple:
    """Everything a move may change, deep-copied, to check that an illegal move changed nothing."""
    return copy.deepcopy((g.hands, g.deck, g.pile, g.scores, g.current, g.totals, g.known, g.events,
                          g.phase, g.pending, g.turn, g.alive, g.results, g.starter, g.round_number,
                          g.pools, g.winners, str(g.rng.bit_generator.state)))


def call_yaniv(hands: list[str], caller: int, rules: str | Rules = "default", scores=None, single_round=True) -> Game:
    """``caller`` calls Yaniv at the start of its turn holding hands[caller]."""
    g = position(hands, rules=rules, current=caller, scores=scores, single_round=single_round)
    g.apply(YANIV)
    return g


def as_sets(discards) -> set[frozenset[int]]:
    return {frozenset(d) for d in discards}


# ------------------------------------------------------------------------------------------------
# 1. Discards
# ------------------------------------------------------------------------------------------------

LEGAL_GROUPS = [
    # (cards as thrown, rules, kind, canonical order)
    ("7D", "default", "single", "7D"),
    ("JK1", "default", "single", "JK1"),
    ("5S 5H", "default", "set", "5H 5S"),  # sets lie in suit order: C D H S
    ("9S 9C 9D", "default", "set", "9C 9D 9S"),
    ("KS KH KD KC", "default", "set", "KC KD KH KS"),
    ("JK2 JK1", "default", "set", "JK1 JK2"),
    ("4H 3H 5H", "default", "run", "3H 4H 5H"),
    ("QC 9C JC TC", "default", "run", "9C TC JC QC"),
    ("KS 9S JS QS TS", "default", "run", "9S TS JS QS KS"),
    ("3D AD 2D", "default", "run", "AD 2D 3D"),
    ("5H 7H JK1", "default", "run", "5H JK1 7H"),  # the joker is the 6
    ("8H 5H JK2 JK1", "default", "run", "5H JK1 JK2 8H"),  # 6 and 7
    ("5H 7H JK2 JK1", "default", "run", "5H JK1 7H JK2"),  # gap first (6), then up (8)
    ("5H 6H JK1", "default", "run", "5H 6H JK1"),  # extends upwards: the 7
    ("QH KH JK1", "default", "run", "JK1 QH KH"),  # no room above the king: the J
    ("JH QH JK1 JK2", "default", "run", "JK1 JH QH JK2"),  # one up (K), then one down (10)
    ("AH 2H JK1", "default", "run", "AH 2H JK1"),  # the 3
    ("KS JK1 JK2", "default", "run", "JK1 JK2 KS"),  # J Q K
    ("5H JK1 JK2", "default", "run", "5H JK1 JK2"),  # one natural + two jokers: a run (5 6 7)
    ("5H JK1 JK2", WILD, "set", "5H JK1 JK2"),  # ... but a set when jokers are wild in sets
    ("JK1 5H", WILD, "set", "5H JK1"),
    ("5S 5H JK2", WILD, "set", "5H 5S JK2"),
    ("5H 6H JK1", WILD, "run", "5H 6H JK1"),  # two ranks: still a run
]


@pytest.mark.parametrize(
    "cards, rules, kind, order",
    LEGAL_GROUPS,
    ids=[f"{c} is a {k} lying as {o}" + (" with jokers in sets" if r is WILD else "") for c, r, k, o in LEGAL_GROUPS],
)
def test_legal_discard_is_classified_in_canonical_order(cards, rules, kind, order):
    assert classify(C(cards), get_rules(rules)) == (kind, C(order))


ILLEGAL_GROUPS = [
    # (id, cards, rules, the reason must match)
    ("two cards of different rank", "5H 6H", "default", "rank"),
    ("two cards of different rank and suit", "5H 9C", "default", "rank"),
    ("mixed ranks and suits in three cards", "5H 5S 6H", "default", "ranks differ"),
    ("a run of mixed suits", "3H 4S 5H", "default", "suits differ"),
    ("a run with a duplicate rank", "4H 5H 5S 6H", "default", "not a run"),
    ("the wrap Q-K-A", "QH KH AH", "default", "not a run.*wrap"),
    ("the wrap K-A-2", "KH AH 2H", "default", "not a run.*wrap"),
    ("the wrap Q-K-A even with a joker", "QH AH JK1", "default", "not a run"),
    ("a run with a gap and no joker", "3H 5H 6H", "default", "gap"),
    ("a run with two gaps and one joker", "3H 6H JK1", "default", "gap"),
    ("a joker with a natural as a pair by default", "5H JK1", "default", "jokers are not wild in sets"),
    ("a pair plus a joker by default", "5H 5S JK1", "default", "jokers are not wild in sets"),
    ("a quad plus a joker by default", "5C 5D 5H 5S JK1", "default", "jokers are not wild in sets"),
    ("a set of five cards with jokers in sets", "5C 5D 5H 5S JK1", WILD, "two to four"),
    ("a set of five cards: three naturals and two jokers", "5C 5D 5H JK1 JK2", WILD, "two to four"),
    ("the same card twice", "5H 5H", "default", "twice"),
    ("no card at all", "", "default", "at least one"),
]


@pytest.mark.parametrize("cards, rules, reason", [c[1:] for c in ILLEGAL_GROUPS], ids=[f"illegal: {c[0]}" for c in ILLEGAL_GROUPS])
def test_illegal_discard_is_refused_naming_the_problem(cards, rules, reason):
    with pytest.raises(ValueError, match=reason):
        classify(C(cards), get_rules(rules))


def _singles(text):
    return [(c,) for c in C(text)]


HAND_DISCARDS = [
    # (id, hand, rules, every legal discard)
    ("a lone king has only itself", "KS", "default", ["KS"]),
    (
        "a run of three with a pair and a joker",
        "5H 6H 7H 7S JK1", "default",
        # 5 singles + the pair 7H 7S + runs 5-6-Jk, 5-Jk-7, 6-7-Jk, 5-6-7, 5-6-7-Jk = 11
        ["5H", "6H", "7H", "7S", "JK1", "7H 7S",
         "5H 6H JK1", "5H JK1 7H", "6H 7H JK1", "5H 6H 7H", "5H 6H 7H JK1"],
    ),
    (
        "the same hand with jokers in sets adds every natural with the joker",
        "5H 6H 7H 7S JK1", WILD,
        # the 11 above + 5-Jk, 6-Jk, 7H-Jk, 7S-Jk, 7H-7S-Jk = 16
        ["5H", "6H", "7H", "7S", "JK1", "7H 7S",
         "5H 6H JK1", "5H JK1 7H", "6H 7H JK1", "5H 6H 7H", "5H 6H 7H JK1",
         "5H JK1", "6H JK1", "7H JK1", "7S JK1", "7H 7S JK1"],
    ),
    (
        "one natural and two jokers: the joker pair and one run",
        "5H JK1 JK2", "default",
        ["5H", "JK1", "JK2", "JK1 JK2", "5H JK1 JK2"],
    ),
    (
        "one natural and two jokers with jokers in sets: sets only",
        "5H JK1 JK2", WILD,
        ["5H", "JK1", "JK2", "JK1 JK2", "5H JK1", "5H JK2", "5H JK1 JK2"],
    ),
    (
        "ace-low run counts but Q-K does not wrap to the ace",
        "AH 2H 3H QH KH", "default",
        ["AH", "2H", "3H", "QH", "KH", "AH 2H 3H"],
    ),
    (
        "four of a kind gives six pairs, four triples and the quad",
        "3C 3D 3H 3S 4S", "default",
        ["3C", "3D", "3H", "3S", "4S",
         "3C 3D", "3C 3H", "3C 3S", "3D 3H", "3D 3S", "3H 3S",
         "3C 3D 3H", "3C 3D 3S", "3C 3H 3S", "3D 3H 3S", "3C 3D 3H 3S"],
    ),
    (
        "five in a row gives three runs of three, two of four and one of five",
        "9D TD JD QD KD", "default",
        ["9D", "TD", "JD", "QD", "KD",
         "9D TD JD", "TD JD QD", "JD QD KD", "9D TD JD QD", "TD JD QD KD", "9D TD JD QD KD"],
    ),
    (
        "a joker bridges a gap of one in a suit",
        "2C 4C JK2 KS", "default",
        ["2C", "4C", "JK2", "KS", "2C JK2 4C"],
    ),
]


@pytest.mark.parametrize("hand, rules, expected", [c[1:] for c in HAND_DISCARDS], ids=[c[0] for c in HAND_DISCARDS])
def test_legal_discards_lists_exactly_the_legal_groups(hand, rules, expected):
    rules = get_rules(rules)
    found = legal_discards(sort_hand(C(hand)), rules)
    assert len(found) == len(set(found)), "a discard is listed twice"
    assert as_sets(found) == {frozenset(C(e)) for e in expected}
    for d in found:  # each listed in canonical order, and accepted by classify
        assert classify(d, rules)[1] == d
    # and every subset of the hand that classify accepts is listed
    accepted = set()
    for k in range(1, len(C(hand)) + 1):
        for subset in itertools.combinations(C(hand), k):
            try:
                classify(subset, rules)
            except ValueError:
                continue
            accepted.add(frozenset(subset))
    assert accepted == as_sets(found)


APPLIED_DISCARDS = [
    # (id, hand, discard, top group after: (cards, kind, drawable for the next player))
    ("a single lies alone and is drawable", "5H KS", "5H", ("5H", "single", "5H")),
    ("a pair lies in suit order, both drawable", "5S 5H KS", "5S 5H", ("5H 5S", "set", "5H 5S")),
    ("a joker-extended run lies 5 6 Jk, its ends drawable", "JK1 6H 5H KS", "JK1 6H 5H", ("5H 6H JK1", "run", "5H JK1")),
    ("a run of five offers only its ends", "9S TS JS QS KS AC", "KS QS JS TS 9S", ("9S TS JS QS KS", "run", "9S KS")),
]


@pytest.mark.parametrize("hand, discard, top", [c[1:] for c in APPLIED_DISCARDS], ids=[c[0] for c in APPLIED_DISCARDS])
def test_apply_puts_the_discard_on_the_pile_and_draws(hand, discard, top):
    g = position([hand, "KD KC"], deck="2D")
    g.apply(Move.discard(C(discard), DECK))
    cards, kind, drawable = top
    assert g.top == Group(C(cards), kind, 0, C(drawable))
    assert g.hands[0] == sort_hand([c for c in C(hand) if c not in C(discard)] + [C("2D")[0]])
    assert g.totals[0] == hand_points(g.hands[0])
    assert g.current == 1 and g.turn == 1
    assert g.events[-1] == Event("discard", 0, C(cards), DECK)
    assert all_cards(g) == list(deck_cards(2))


ILLEGAL_APPLIED = [
    ("a card not held", "5H KS", "5S", "does not hold"),
    ("two cards of different rank", "5H 6H KS", "5H 6H", "rank"),
    ("the wrap Q-K-A", "QH KH AH", "QH KH AH", "run"),
    ("a joker paired with a natural", "5H JK1 KS", "5H JK1", "jokers are not wild in sets"),
]


@pytest.mark.parametrize("hand, discard, reason", [c[1:] for c in ILLEGAL_APPLIED], ids=[f"apply refuses {c[0]}" for c in ILLEGAL_APPLIED])
def test_apply_refuses_an_illegal_discard_and_changes_nothing(hand, discard, reason):
    g = position([hand, "KD KC"])
    before = snapshot(g)
    with pytest.raises(ValueError, match=reason):
        g.apply(Move.discard(C(discard), DECK))
    assert snapshot(g) == before


# ------------------------------------------------------------------------------------------------
# 2. Drawing
# ------------------------------------------------------------------------------------------------

DRAWS = [
    # (id, rules, top group thrown by seat 1, the pile cards seat 0 may draw, a pile card it may not)
    ("a single card", "default", "9C", "9C", None),
    ("any card of a set with draw_from_set any", "default", "8C 8D 8H", "8C 8D 8H", None),
    ("only the outer cards of a set with draw_from_set ends", Rules(draw_from_set="ends"), "8C 8D 8H", "8C 8H", "8D"),
    ("either joker of a joker pair with draw_from_set ends", Rules(draw_from_set="ends"), "JK1 JK2", "JK1 JK2", None),
    ("only the ends of a run with draw_from_run ends", "default", "4S 5S 6S", "4S 6S", "5S"),
    ("not a joker inside a run with draw_from_run ends", "default", "4S JK1 6S", "4S 6S", "JK1"),
    ("a joker at the end of a run with draw_from_run ends", "default", "4S 5S JK1", "4S JK1", "5S"),
    ("a joker inside a run with ends_and_jokers", Rules(draw_from_run="ends_and_jokers"), "4S JK1 6S", "4S JK1 6S", None),
    ("not a natural inside a run with ends_and_jokers", Rules(draw_from_run="ends_and_jokers"), "3S 4S JK1 6S", "3S JK1 6S", "4S"),
    ("german: only the outer cards of a set", "german", "8C 8D 8H", "8C 8H", "8D"),
    ("german: a joker inside a run", "german", "4S JK1 6S", "4S JK1 6S", None),
]


@pytest.mark.parametrize("rules, top, drawable, refused", [c[1:] for c in DRAWS], ids=[f"draw from {c[0]}" for c in DRAWS])
def test_drawable_cards_of_the_previous_discard(rules, top, drawable, refused):
    g = position(["KH 2C", "TD"], rules=rules, top=top, top_by=1, deck="3D")
    assert g.legal_draws() == (DECK,) + C(drawable)
    for card in C(drawable):
        h = copy.deepcopy(g)
        h.apply(Move.discard(C("KH"), card))
        assert card in h.hands[0] and C("KH")[0] not in h.hands[0]
        assert h.known[0] == {card}  # taken from the pile in view of everyone
        rest = tuple(c for c in C(top) if c != card)
        if rest:  # what is left of the previous group stays, dead
            assert h.pile[:-1] == g.pile[:-1] + [g.pile[-1]._replace(cards=rest, drawable=())]
        else:  # a single card taken leaves nothing of its group
            assert h.pile[:-1] == g.pile[:-1]
        assert h.top == Group(C("KH"), "single", 0, C("KH"))
        assert h.deck == g.deck
        assert all_cards(h) == list(deck_cards(get_rules(rules).jokers))
    if refused is not None:
        before = snapshot(g)
        with pytest.raises(ValueError, match="cannot draw"):
            g.apply(Move.discard(C("KH"), C(refused)[0]))
        assert snapshot(g) == before


def test_a_deck_draw_takes_the_top_card_hidden_and_kills_the_previous_group():
    g = position(["KH 2C", "TD"], top="8C 8D", top_by=1, deck="3D 4D")
    g.apply(Move.discard(C("KH"), DECK))
    assert g.hands[0] == sort_hand(C("2C 3D"))
    assert g.deck[-1] == C("4D")[0]
    assert g.known[0] == set()  # a deck draw stays hidden
    assert g.pile[-2] == Group(C("8C 8D"), "set", 1, ())
    assert g.events[-1] == Event("discard", 0, C("KH"), DECK)


@pytest.mark.parametrize(
    "discard, draw",
    [("3H", "3H"), ("3H 4H 5H", "5H"), ("7C 7D", "7C")],
    ids=["a single just thrown cannot be drawn back", "the end of a run just thrown cannot be drawn back",
         "a card of a pair just thrown cannot be drawn back"],
)
def test_cards_just_discarded_cannot_be_drawn(discard, draw):
    g = position(["3H 4H 5H 7C 7D", "TD"], top="9S", top_by=1)
    before = snapshot(g)
    with pytest.raises(ValueError, match="cannot draw"):
        g.apply(Move.discard(C(discard), C(draw)[0]))
    assert snapshot(g) == before


def test_a_known_card_stops_being_known_once_discarded():
    g = position(["KH 2C", "TD QD"], top="9S", top_by=1)
    g.apply(Move.discard(C("KH"), C("9S")[0]))  # seat 0 takes the 9S: public
    assert g.known == [set(C("9S")), set()]
    g.apply(Move.discard(C("QD"), DECK))
    g.apply(Move.discard(C("9S"), DECK))  # seat 0 throws it again
    assert g.known[0] == set()


def test_a_draw_not_on_offer_at_all_is_refused_and_changes_nothing():
    g = position(["KH 2C", "TD"], top="9S", top_by=1, dead=("8S",))
    before = snapshot(g)
    with pytest.raises(ValueError, match="cannot draw"):
        g.apply(Move.discard(C("KH"), C("8S")[0]))  # an older, dead discard
    with pytest.raises(ValueError, match="cannot draw"):
        g.apply(Move.discard(C("KH"), C("TD")[0]))  # a card in another hand
    assert snapshot(g) == before


# ------------------------------------------------------------------------------------------------
# 3. Yaniv eligibility
# ------------------------------------------------------------------------------------------------

YANIV_CALLS = [
    # (id, rules, hand, may call)
    ("a total of 7 may call under the default threshold 7", "default", "AH 2C 4S", True),
    ("a total of 8 may not call under the default threshold 7", "default", "AH 3C 4S", False),
    ("a total of 5 may call under the french threshold 5", "french", "AH 4S", True),
    ("a total of 6 may not call under the french threshold 5", "french", "2H 4S", False),
    ("a total of 7 may call under the german threshold 7", "german", "3C 4C", True),
    ("a joker alone may call under threshold 0", Rules(yaniv_threshold=0), "JK1", True),
    ("an ace may not call under threshold 0", Rules(yaniv_threshold=0), "AH", False),
    ("a total of 20 may call under threshold 20", Rules(yaniv_threshold=20), "KH QH", True),
    ("a total of 21 may not call under threshold 20", Rules(yaniv_threshold=20), "KH QH AH", False),
]


@pytest.mark.parametrize("rules, hand, allowed", [c[1:] for c in YANIV_CALLS], ids=[c[0] for c in YANIV_CALLS])
def test_yaniv_only_at_or_under_the_threshold(rules, hand, allowed):
    g = position([hand, "KD KC KS"], rules=rules, single_round=True)
    assert g.can_call_yaniv() is allowed
    assert (YANIV in g.legal_moves()) is allowed
    if allowed:
        g.apply(YANIV)
        assert g.results[-1].caller == 0
    else:
        before = snapshot(g)
        with pytest.raises(ValueError, match="cannot call Yaniv"):
            g.apply(YANIV)
        assert snapshot(g) == before


def test_yaniv_cannot_be_called_while_a_slamdown_is_pending():
    g = position(["5H AH", "KD"], rules=SLAM, deck="5S")
    g.apply(Move.discard(C("5H"), DECK))
    assert g.phase == "slamdown" and g.totals[0] == 6  # A + 5S: would be low enough
    with pytest.raises(ValueError, match="slamdown"):
        g.apply(YANIV)


def test_yaniv_cannot_be_called_once_the_game_is_over():
    g = call_yaniv(["AH", "KD"], caller=0)
    assert g.is_over
    with pytest.raises(ValueError, match="over"):
        g.apply(YANIV)
    assert g.legal_moves() == []


# ------------------------------------------------------------------------------------------------
# 4. Showdowns
# ------------------------------------------------------------------------------------------------

SHOWDOWNS = [
    # (id, rules, hands, caller, points added, round winners, Assafers)
    ("clean Yaniv: the caller scores 0 and the others add their hands",
     "default", ["AH 2C 3D", "KH QH", "5S 5C"], 0, (0, 20, 10), (0,), ()),
    ("a lower hand Assafs: the caller adds hand + 30, the Assafer 0",  # 7 + 30
     "default", ["3C 4C", "AH 2C", "TH"], 0, (37, 0, 10), (1,), (1,)),
    ("an equal hand Assafs with assaf_on_equal",
     "default", ["3C 4C", "3H 4H", "KS"], 0, (37, 0, 10), (1,), (1,)),
    ("an equal hand does not Assaf without assaf_on_equal and adds its total",
     Rules(assaf_on_equal=False), ["3C 4C", "3H 4H", "KS"], 0, (0, 7, 10), (0,), ()),
    ("without assaf_on_equal a lower hand still Assafs and the tied one adds",
     Rules(assaf_on_equal=False), ["3C 4C", "3H 4H", "2S"], 0, (37, 7, 0), (2,), (2,)),
    ("several Assafers: the lowest scores 0 and the other adds its hand",
     "default", ["7C", "5H", "2S", "KD"], 0, (37, 5, 0, 10), (2,), (1, 2)),
    ("tied lowest Assafers share the win",
     "default", ["7C", "3H", "3S", "KD"], 0, (37, 0, 0, 10), (1, 2), (1, 2)),
    ("a joker hand of 0 Assafs a caller in seat 2 holding an ace",  # 1 + 30
     "default", ["KH", "JK1", "AH"], 2, (10, 0, 31), (1,), (1,)),
    ("a custom assaf_penalty_points of 50",  # 7 + 50
     Rules(assaf_penalty_points=50), ["3C 4C", "AH 2C", "TH"], 0, (57, 0, 10), (1,), (1,)),
    ("per_assafer (german) with one Assafer: hand + 30",
     "german", ["3C 4C", "AH 2C", "TH"], 0, (37, 0, 10), (1,), (1,)),
    ("per_assafer (german) with two Assafers: hand + 20 x 2",  # 7 + 40
     "german", ["7C", "5H", "2S", "KD"], 0, (47, 5, 0, 10), (2,), (1, 2)),
    ("per_assafer (german) with three Assafers: hand + 20 x 3",  # 7 + 60
     "german", ["7C", "5H", "2S", "6D"], 0, (67, 5, 0, 6), (2,), (1, 2, 3)),
    ("per_assafer with 15 per Assafer and two Assafers",  # 6 + 15 x 2
     Rules(assaf_penalty="per_assafer", assaf_points_per_assafer=15), ["6C", "5H", "2S"], 0, (36, 5, 0), (2,), (1, 2)),
    ("flat: the Assafed caller scores 30 alone and nobody else scores",
     Rules(assaf_penalty="flat"), ["3C 4C", "AH 2C", "TH"], 0, (30, 0, 0), (1,), (1,)),
    ("flat with 25 points and two Assafers",
     Rules(assaf_penalty="flat", assaf_penalty_points=25), ["7C", "5H", "2S", "KD"], 0, (25, 0, 0, 0), (2,), (1, 2)),
    ("flat leaves a clean Yaniv as usual",
     Rules(assaf_penalty="flat"), ["AH 2C 3D", "KH QH", "5S 5C"], 0, (0, 20, 10), (0,), ()),
]


@pytest.mark.parametrize(
    "rules, hands, caller, points, winners, assafers", [c[1:] for c in SHOWDOWNS], ids=[c[0] for c in SHOWDOWNS]
)
def test_showdown_scores(rules, hands, caller, points, winners, assafers):
    g = call_yaniv(hands, caller, rules)
    result = g.results[-1]
    assert result.caller == caller
    assert result.totals == tuple(hand_points(C(h)) for h in hands)
    assert result.hands == tuple(tuple(sort_hand(C(h))) for h in hands)
    assert result.points == points
    assert result.winners == winners
    assert result.assafers == assafers
    assert g.scores == list(points)  # from 0, and no sum lands on a reset value
    assert result.scores == points
    assert g.is_over and g.winners == winners  # a single-round game
    assert g.events[-1] == Event("yaniv", caller, ())


NEXT_ROUNDS = [
    # (id, hands, caller, starter of the next round)
    ("the clean caller in seat 1 starts the next round", ["KH QH", "AH 2C", "5S 5C"], 1, 1),
    ("the Assafer in seat 2 starts the next round", ["3C 4C", "KH", "AH"], 0, 2),
    ("of tied winners 1 and 2 after caller 0, seat 1 starts", ["7C", "3H", "3S"], 0, 1),
    ("of tied winners 0 and 1 after caller 2, seat 0 starts", ["3H", "3S", "7C"], 2, 0),
    ("of tied winners 2 and 0 after caller 1, seat 2 starts", ["3H", "7C", "3S"], 1, 2),
]


@pytest.mark.parametrize("hands, caller, starter", [c[1:] for c in NEXT_ROUNDS], ids=[c[0] for c in NEXT_ROUNDS])
def test_the_next_round_is_dealt_with_the_winner_starting(hands, caller, starter):
    g = call_yaniv(hands, caller, single_round=False)
    assert not g.is_over and g.phase == "play"
    assert g.round_number == 2 and g.turn == 0
    assert g.starter == starter and g.current == starter
    assert g.hand_sizes == (5, 5, 5)
    assert g.deck_size == 54 - 15 - 1 and len(g.pile) == 1 and g.top.player == -1
    assert g.events == [] and g.known == [set(), set(), set()]
    assert all_cards(g) == list(deck_cards(2))
    assert len(g.results) == 1


# ------------------------------------------------------------------------------------------------
# 5. Resets
# ------------------------------------------------------------------------------------------------

SUBTRACT = Rules(score_reset="subtract", score_reset_at=(50, 100, 150, 200))

RESETS = [
    # (id, rules, scores before, hands, caller, scores after, seats reset); seat 0 calls with the ace
    ("landing exactly on 100 halves it", "default", [0, 90], ["AH", "KS"], 0, [0, 50], (1,)),
    ("landing exactly on 200 halves it", "default", [0, 180], ["AH", "KS KH"], 0, [0, 100], (1,)),
    ("passing 100 without landing on it changes nothing", "default", [0, 95], ["AH", "KS"], 0, [0, 105], ()),
    ("50 is no reset value by default", "default", [0, 40], ["AH", "KS"], 0, [0, 50], ()),
    ("halving rounds down", Rules(score_reset_at=(75,)), [0, 65], ["AH", "KS"], 0, [0, 37], (1,)),
    ("german halves at 50", "german", [0, 40], ["AH", "KS"], 0, [0, 25], (1,)),
    ("german halves at 100", "german", [0, 90], ["AH", "KS"], 0, [0, 50], (1,)),
    ("german halves at 150", "german", [0, 140], ["AH", "KS"], 0, [0, 75], (1,)),
    ("german does not halve at 200", "german", [0, 190], ["AH", "KS"], 0, [0, 200], ()),
    ("subtract takes 50 off at 50", SUBTRACT, [0, 40], ["AH", "KS"], 0, [0, 0], (1,)),
    ("subtract takes 50 off at 100", SUBTRACT, [0, 90], ["AH", "KS"], 0, [0, 50], (1,)),
    ("subtract takes 50 off at 150", SUBTRACT, [0, 140], ["AH", "KS"], 0, [0, 100], (1,)),
    ("subtract takes 50 off at 200", SUBTRACT, [0, 190], ["AH", "KS"], 0, [0, 150], (1,)),
    ("subtract leaves 105 alone", SUBTRACT, [0, 95], ["AH", "KS"], 0, [0, 105], ()),
    ("subtract with score_reset_subtract 30", SUBTRACT.replace(score_reset_subtract=30), [0, 90], ["AH", "KS"], 0, [0, 70], (1,)),
    ("none never changes 100", Rules(score_reset="none"), [0, 90], ["AH", "KS"], 0, [0, 100], ()),
    ("none never changes 200", Rules(score_reset="none"), [0, 190], ["AH", "KS"], 0, [0, 200], ()),
    ("an Assafed caller landing on 100 is halved",  # 63 + 7 + 30 = 100 -> 50
     "default", [63, 0], ["3C 4C", "AH 2C"], 0, [50, 0], (0,)),
    ("a caller scoring 0 while sitting on 100 is not reset", "default", [100, 0], ["AH", "KS"], 0, [100, 10], ()),
    ("an Assafer scoring 0 while sitting on 100 is not reset",  # the caller: 7 + 30
     "default", [0, 100], ["3C 4C", "AH"], 0, [37, 100], ()),
    ("two players landing on 100 and 200 in one round are both halved",
     "default", [0, 90, 180], ["AH", "KS", "KH QH"], 0, [0, 50, 100], (1, 2)),
]


@pytest.mark.parametrize("rules, before, hands, caller, after, resets", [c[1:] for c in RESETS], ids=[c[0] for c in RESETS])
def test_score_resets(rules, before, hands, caller, after, resets):
    g = call_yaniv(hands, caller, rules, scores=before)
    assert g.scores == after
    assert g.results[-1].scores == tuple(after)
    assert g.results[-1].resets == resets


# ------------------------------------------------------------------------------------------------
# 6. Game end
# ------------------------------------------------------------------------------------------------

GAME_ENDS = [
    # (id, rules, scores before, hands, caller, scores after, alive after, eliminated, game winners or None)
    ("exactly 200 is halved, not eliminated",
     "default", [0, 190, 0], ["AH", "KS", "KH"], 0, [0, 100, 10], [True, True, True], (), None),
    ("exactly 200 without resets stays in the game",
     Rules(score_reset="none"), [0, 190, 0], ["AH", "KS", "KH"], 0, [0, 200, 10], [True, True, True], (), None),
    ("201 is eliminated and the other two play on",  # 190 + 11
     "default", [0, 190, 0], ["AH", "KS AS", "KH"], 0, [0, 201, 10], [True, False, True], (1,), None),
    ("the last one standing wins",  # seat 2 was out already; seat 1 reaches 201
     "default", [0, 190, 250], ["AH", "KS AS", ""], 0, [0, 201, 250], [True, False, False], (1,), (0,)),
    ("two players out at once leave the caller as the winner",  # 195 + 10 twice
     "default", [0, 195, 195], ["AH", "KS", "KH"], 0, [0, 205, 205], [True, False, False], (1, 2), (0,)),
    ("an Assafed caller passing 200 is out and the Assafer wins",  # 190 + 7 + 30
     "default", [190, 0], ["3C 4C", "AH 2C"], 0, [227, 0], [False, True], (0,), (1,)),
    ("score_limit 100: 101 is eliminated",  # 95 + 6
     Rules(score_limit=100), [0, 95], ["AH", "5S AS"], 0, [0, 101], [True, False], (1,), (0,)),
    ("score_limit 100: exactly 100 is halved",
     Rules(score_limit=100), [0, 95], ["AH", "5S"], 0, [0, 50], [True, True], (), None),
    ("first_over (german): the first score past 200 ends it and the lowest score wins",  # 190 + 11; 120 + 9
     "german", [150, 190, 120], ["3C 4C", "TC AC", "9H"], 0, [150, 201, 129], [True, True, True], (), (2,)),
    ("first_over: tied lowest scores share the win",  # 190 + 11; 140 + 10
     Rules(game_end="first_over"), [150, 190, 140], ["AH", "TC AC", "TD"], 0, [150, 201, 150], [True, True, True], (), (0, 2)),
    ("first_over (german): exactly 200 does not end the game",
     "german", [0, 190, 0], ["AH", "KS", "KH"], 0, [0, 200, 10], [True, True, True], (), None),
    ("first_over with score_limit 100",  # 95 + 6
     Rules(game_end="first_over", score_limit=100), [0, 95], ["AH", "5S AS"], 0, [0, 101], [True, True], (), (0,)),
    ("one_round: the round's winner wins the game, however far behind on the scores",  # 0 + 10 twice
     Rules(game_end="one_round"), [150, 0, 0], ["AH", "KS", "KH"], 0, [150, 10, 10], [True] * 3, (), (0,)),
    ("one_round: a score past the limit eliminates nobody",  # 190 + 11
     Rules(game_end="one_round"), [0, 190], ["AH", "KS AS"], 0, [0, 201], [True, True], (), (0,)),
    ("one_round: a score landing on a reset value is still halved, and decides nothing",  # 190 + 10 -> 100
     Rules(game_end="one_round"), [0, 190], ["AH", "KS"], 0, [0, 100], [True, True], (), (0,)),
    ("one_round: an Assafed caller loses it to the Assafer",  # 7 + 30
     Rules(game_end="one_round"), [0, 0], ["3C 4C", "AH 2C"], 0, [37, 0], [True, True], (), (1,)),
]


@pytest.mark.parametrize(
    "rules, before, hands, caller, after, alive, eliminated, winners",
    [c[1:] for c in GAME_ENDS], ids=[c[0] for c in GAME_ENDS],
)
def test_game_end(rules, before, hands, caller, after, alive, eliminated, winners):
    g = call_yaniv(hands, caller, rules, scores=before, single_round=False)
    assert g.scores == after
    assert g.alive == alive
    assert g.results[-1].eliminated == eliminated
    if winners is None:  # the game goes on: a new round among the players still in
        assert not g.is_over and g.winners == () and g.round_number == 2
        n_alive = sum(alive)
        assert g.hand_sizes == tuple(5 if a else 0 for a in alive)
        assert g.deck_size == 54 - 5 * n_alive - 1
        assert all_cards(g) == list(deck_cards(2))
    else:
        assert g.is_over and g.winners == winners
        assert g.legal_moves() == []


def test_eliminated_seats_are_dealt_nothing_and_skipped_in_turn_order():
    g = Game(3, seed=0, scores=[0, 250, 0])
    assert g.alive == [True, False, True]
    assert g.hands[1] == [] and g.hand_sizes == (5, 0, 5)
    assert g.deck_size == 54 - 10 - 1
    assert all_cards(g) == list(deck_cards(2))
    order = [g.current]
    for _ in range(4):
        g.apply(Move.discard((g.hands[g.current][-1],), DECK))
        order.append(g.current)
    assert order == [0, 2, 0, 2, 0]


def test_an_eliminated_seat_takes_no_part_in_the_showdown():
    # seat 1 is out with an empty hand; its total 0 must not Assaf the caller
    g = position(["AH 2C", "", "KS"], scores=[0, 250, 0], single_round=True)
    g.apply(YANIV)
    r = g.results[-1]
    assert r.assafers == () and r.winners == (0,)
    assert r.points == (0, 0, 10)
    assert g.scores == [0, 250, 10]


def test_after_an_elimination_the_next_round_skips_the_seat():
    g = call_yaniv(["AH", "KS AS", "KH"], 0, scores=[0, 190, 0], single_round=False)  # seat 1: 201, out
    assert g.current == 0 and g.hands[1] == []
    g.apply(Move.discard((g.hands[0][-1],), DECK))
    assert g.current == 2
    g.apply(Move.discard((g.hands[2][-1],), DECK))
    assert g.current == 0


# ------------------------------------------------------------------------------------------------
# 7. Reshuffle
# ------------------------------------------------------------------------------------------------


def test_drawing_the_last_deck_card_reshuffles_the_pile_under_the_top_group():
    # 54 cards: seat 0 holds 2, seat 1 holds 3, the deck 1 (2C), the pile the other 48,
    # the top a 9S thrown by seat 1 over 47 dead singles.
    g = position(["KH QH", "TD TC TS"], top="9S", top_by=1, deck="2C", rest="dead")
    assert g.deck_size == 1 and len(g.pile_cards()) == 48
    g.apply(Move.discard(C("KH"), DECK))
    # the new deck: the pile except the KH just thrown = 47 dead cards + the 9S = 48
    assert g.deck_size == 48
    assert g.pile == [Group(C("KH"), "single", 0, C("KH"))]
    assert g.hands[0] == sort_hand(C("QH 2C"))
    assert all_cards(g) == list(deck_cards(2))
    pool = tuple(sorted(set(deck_cards(2)) - set(C("QH 2C TD TC TS KH"))))
    assert g.events[-1] == Event("reshuffle", -1, pool)
    assert g.events[-2] == Event("discard", 0, C("KH"), DECK)
    assert len(g.pools) == 2 and g.pools[-1] == frozenset(pool)
    assert sorted(g.deck) == list(pool)
    assert DECK in g.legal_draws()


def test_a_reshuffle_keeps_a_multi_card_top_group_on_the_pile():
    g = position(["KH QH JH 2S", "TD TC"], top="9S", top_by=1, dead=("4C 5C 6C",), deck="2C", rest=None)
    g.apply(Move.discard(C("JH QH KH"), DECK))
    assert g.pile == [Group(C("JH QH KH"), "run", 0, C("JH KH"))]
    assert sorted(g.deck) == sorted(C("4C 5C 6C 9S"))


def test_with_nothing_to_reshuffle_the_deck_is_no_draw():
    g = position(["KH QH", "TD"], top="9S", top_by=1, deck="", rest=None)
    assert g.legal_draws() == C("9S")
    assert all(m.draw != DECK for m in g.legal_moves())
    before = snapshot(g)
    with pytest.raises(ValueError, match="deck is empty"):
        g.apply(Move.discard(C("KH"), DECK))
    assert snapshot(g) == before
    # seat 0 takes the 9S: the pile is just its KH, still nothing to shuffle
    g.apply(Move.discard(C("KH"), C("9S")[0]))
    assert g.pile == [Group(C("KH"), "single", 0, C("KH"))]
    assert g.deck == [] and all(e.kind != "reshuffle" for e in g.events) and len(g.pools) == 1
    assert g.legal_draws() == C("KH")


# ------------------------------------------------------------------------------------------------
# 8. Slamdown
# ------------------------------------------------------------------------------------------------

SLAMDOWNS = [
    # (id, seat 0's hand, discard, card drawn from the deck, top group after SLAMDOWN (cards, kind, drawable))
    ("a single 5H and a drawn 5S make a set", "5H KH", "5H", "5S", ("5H 5S", "set", "5H 5S")),
    ("a pair and a drawn third card make a triple in suit order", "5H 5S KH", "5H 5S", "5D", ("5D 5H 5S", "set", "5D 5H 5S")),
    ("a run 4-5-6 and a drawn 7 extend it upwards", "4H 5H 6H KH", "4H 5H 6H", "7H", ("4H 5H 6H 7H", "run", "4H 7H")),
    ("a run 4-5-6 and a drawn 3 extend it downwards", "4H 5H 6H KH", "4H 5H 6H", "3H", ("3H 4H 5H 6H", "run", "3H 6H")),
    ("a run 5-6-Jk and a drawn 8 extend it past the joker", "5H 6H JK1 KH", "5H 6H JK1", "8H", ("5H 6H JK1 8H", "run", "5H 8H")),
    ("a run Jk-Q-K and a drawn 10 extend it below the joker", "QH KH JK1 2C", "QH KH JK1", "TH", ("TH JK1 QH KH", "run", "TH KH")),
]


@pytest.mark.parametrize("hand, discard, drawn, top", [c[1:] for c in SLAMDOWNS], ids=[f"slamdown: {c[0]}" for c in SLAMDOWNS])
def test_slamdown_throws_the_drawn_card_onto_the_group(hand, discard, drawn, top):
    g = position([hand, "TD TC"], rules=SLAM, deck=drawn)
    kept = sort_hand([c for c in C(hand) if c not in C(discard)])
    g.apply(Move.discard(C(discard), DECK))
    assert g.phase == "slamdown" and g.current == 0 and g.pending == C(drawn)[0]
    assert g.legal_moves() == [SLAMDOWN, KEEP]
    assert g.totals[0] == hand_points(kept) + hand_points(C(drawn))
    with pytest.raises(ValueError, match="slamdown"):
        g.apply(Move.discard((kept[0],), DECK))  # the decision comes first
    keep = copy.deepcopy(g)

    g.apply(SLAMDOWN)
    cards, kind, drawable = top
    assert g.top == Group(C(cards), kind, 0, C(drawable))
    assert g.hands[0] == kept and g.totals[0] == hand_points(kept)
    assert g.events[-1] == Event("slamdown", 0, C(drawn))
    assert g.phase == "play" and g.current == 1 and g.turn == 1
    assert g.legal_draws() == (DECK,) + C(drawable)  # the next player may draw from the grown group
    assert all_cards(g) == list(deck_cards(2))

    keep.apply(KEEP)
    assert keep.hands[0] == sort_hand(kept + [C(drawn)[0]])
    assert keep.top == make_group(C(discard), SLAM, 0)
    assert keep.phase == "play" and keep.current == 1 and keep.turn == 1


NO_SLAMDOWNS = [
    # (id, rules, seat 0's hand, discard, draw: a pile card or "deck", the top card of the deck)
    ("a drawn card of another rank", SLAM, "5H KH", "5H", "deck", "6H"),
    ("a drawn card two ranks past the run", SLAM, "4H 5H 6H KH", "4H 5H 6H", "deck", "8H"),
    ("a drawn card of another suit at the run's end", SLAM, "4H 5H 6H KH", "4H 5H 6H", "deck", "7S"),
    ("a drawn card a joker already stands for", SLAM, "5H 6H JK1 KH", "5H 6H JK1", "deck", "7H"),
    ("a drawn card inside the run where a joker stands", SLAM, "5H JK1 7H KH", "5H JK1 7H", "deck", "6H"),
    ("a drawn joker", SLAM, "5H KH", "5H", "deck", "JK1"),
    ("a drawn card onto a joker pair", SLAM, "JK1 JK2 KH", "JK1 JK2", "deck", "5H"),
    ("a matching card with slamdown off", "default", "5H KH", "5H", "deck", "5S"),
    ("a matching card drawn from the pile", SLAM, "5H KH", "5H", "5C", "5S"),
    ("the drawn card is the only card left after throwing the whole hand", SLAM, "4H 5H 6H", "4H 5H 6H", "deck", "7H"),
]


@pytest.mark.parametrize("rules, hand, discard, draw, deck", [c[1:] for c in NO_SLAMDOWNS], ids=[f"no slamdown: {c[0]}" for c in NO_SLAMDOWNS])
def test_no_slamdown(rules, hand, discard, draw, deck):
    g = position([hand, "TD TC"], rules=rules, top="5C", top_by=1, deck=deck)
    source = DECK if draw == "deck" else C(draw)[0]
    g.apply(Move.discard(C(discard), source))
    assert g.phase == "play" and g.pending is None
    assert g.current == 1 and g.turn == 1
    assert g.top == make_group(C(discard), get_rules(rules), 0)
    for move in (SLAMDOWN, KEEP):
        with pytest.raises(ValueError, match="no slamdown is pending"):
            g.apply(move)


# ------------------------------------------------------------------------------------------------
# 9. Turn cap
# ------------------------------------------------------------------------------------------------

TURN_CAPS = [
    # (id, max_turns, scores (one per seat), starter, seat starting the next round)
    ("one turn in a 2-player game", 1, [10, 20], 0, 1),
    ("three turns in a 2-player game", 3, [10, 20], 0, 1),
    ("four turns in a 3-player game started by seat 2", 4, [10, 20, 30], 2, 0),
    ("two turns in a 3-player game whose seat 1 is out", 2, [10, 250, 30], 0, 2),
]


def _play_single_discards(g: Game, turns: int) -> None:
    for _ in range(turns):
        g.apply(Move.discard((g.hands[g.current][-1],), DECK))


@pytest.mark.parametrize("cap, scores, starter, next_starter", [c[1:] for c in TURN_CAPS], ids=[f"turn cap after {c[0]}" for c in TURN_CAPS])
def test_turn_cap_ends_the_round_without_a_winner(cap, scores, starter, next_starter):
    players = len(scores)
    g = Game(players, Rules(max_turns=cap), seed=0, scores=scores, starter=starter)
    _play_single_discards(g, cap - 1)
    assert g.round_number == 1 and g.turn == cap - 1 and g.results == []
    _play_single_discards(g, 1)
    r = g.results[-1]
    assert r.caller is None and r.winners == () and r.assafers == ()
    assert r.points == (0,) * players and r.resets == () and r.eliminated == ()
    assert r.turns == cap
    assert g.scores == scores
    assert g.round_number == 2 and g.turn == 0
    assert g.starter == g.current == next_starter
    assert not g.is_over


def test_turn_cap_in_a_single_round_game_ends_it_with_no_winner():
    g = Game(2, Rules(max_turns=2), seed=0, single_round=True)
    _play_single_discards(g, 2)
    assert g.is_over and g.winners == () and g.scores == [0, 0]
    assert g.results[-1].caller is None


# ------------------------------------------------------------------------------------------------
# 10. Rules validation
# ------------------------------------------------------------------------------------------------

BAD_SETTINGS = [
    ("yaniv_threshold", -1), ("yaniv_threshold", "7"), ("yaniv_threshold", 7.0), ("yaniv_threshold", True),
    ("assaf_on_equal", 1), ("assaf_on_equal", "yes"),
    ("assaf_penalty", "double"), ("assaf_penalty", None),
    ("assaf_penalty_points", -5), ("assaf_penalty_points", 2.5),
    ("assaf_points_per_assafer", -1),
    ("score_reset", "triple"),
    ("score_reset_at", (0, 100)), ("score_reset_at", (100, 100)), ("score_reset_at", (100, "200")),
    ("score_reset_at", 100), ("score_reset_at", (True,)), ("score_reset_at", [50, 50]),
    ("score_reset_subtract", 0),
    ("game_end", "sudden_death"),
    ("score_limit", 0), ("score_limit", -200),
    ("jokers", 3), ("jokers", -1),
    ("jokers_in_sets", "no"),
    ("draw_from_run", "middle"),
    ("draw_from_set", "top"),
    ("hand_size", 3), ("hand_size", 8),
    ("slamdown", None),
    ("max_turns", 0), ("max_turns", 1.5), ("max_turns", True),
]


@pytest.mark.parametrize("name, value", BAD_SETTINGS, ids=[f"{n}={v!r} is refused naming the field" for n, v in BAD_SETTINGS])
def test_bad_setting_is_refused_naming_the_field(name, value):
    with pytest.raises(ValueError, match=rf"Rules\.{name}\b"):
        Rules(**{name: value})
    with pytest.raises(ValueError, match=rf"Rules\.{name}\b"):
        Rules().replace(**{name: value})
    with pytest.raises(ValueError, match=rf"Rules\.{name}\b"):
        Rules.from_dict({"preset": "german", name: value})


@pytest.mark.parametrize(
    "build",
    [lambda: Rules().replace(bogus=1), lambda: Rules.from_dict({"bogus": 1}),
     lambda: Rules.from_dict({"preset": "french", "bogus": 1, "jokers": 0}), lambda: get_rules({"bogus": 1})],
    ids=["replace refuses an unknown key naming it", "from_dict refuses an unknown key naming it",
         "from_dict with a preset refuses an unknown key naming it", "get_rules of a mapping refuses an unknown key"],
)
def test_unknown_setting_is_refused_naming_it(build):
    with pytest.raises(ValueError, match="bogus"):
        build()


@pytest.mark.parametrize(
    "build",
    [lambda: get_rules("italian"), lambda: Rules.from_dict({"preset": "italian"}), lambda: Game(2, "italian")],
    ids=["get_rules refuses an unknown preset naming the presets", "from_dict refuses an unknown preset naming the presets",
         "Game refuses an unknown preset naming the presets"],
)
def test_unknown_preset_is_refused_naming_the_presets(build):
    with pytest.raises(ValueError, match="italian.*default, french, german"):
        build()


def test_valid_settings_from_a_mapping():
    rules = Rules.from_dict({"preset": "french", "jokers": 0, "score_reset_at": [50, 100]})
    assert rules == Rules(yaniv_threshold=5, jokers_in_sets=True, min_set_with_jokers=3,
                          draw_from_set="ends_or_top_of_pair", jokers=0, score_reset_at=(50, 100))
    assert isinstance(rules.score_reset_at, tuple)


BAD_GAMES = [
    ("1 player", 1, "default", "num_players"),
    ("9 players", 9, "default", "num_players"),
    ("8 players x 7 cards (8 x 7 + 1 = 57 > 54)", 8, Rules(hand_size=7), "8 players x 7 cards"),
    ("8 players x 7 cards without jokers (57 > 52)", 8, Rules(hand_size=7, jokers=0), "52 cards"),
    ("a player count given as text", "2", "default", "num_players"),
]


@pytest.mark.parametrize("players, rules, reason", [b[1:] for b in BAD_GAMES], ids=[f"a game of {b[0]} is refused" for b in BAD_GAMES])
def test_impossible_games_are_refused(players, rules, reason):
    with pytest.raises(ValueError, match=reason):
        Game(players, rules)


@pytest.mark.parametrize(
    "players, rules, deck",
    [(2, "default", 54 - 10 - 1), (8, Rules(hand_size=6), 54 - 48 - 1), (7, Rules(hand_size=7, jokers=0), 52 - 49 - 1),
     (8, Rules(hand_size=4, jokers=1), 53 - 32 - 1)],
    ids=["2 players x 5 cards leave 43 in the deck", "8 players x 6 cards leave 5", "7 players x 7 cards without jokers leave 2",
         "8 players x 4 cards with one joker leave 20"],
)
def test_possible_games_deal_every_card(players, rules, deck):
    g = Game(players, rules, seed=3)
    assert g.deck_size == deck
    assert all_cards(g) == list(deck_cards(g.rules.jokers))


# ------------------------------------------------------------------------------------------------
# 11. Presets
# ------------------------------------------------------------------------------------------------


def test_the_french_preset_reproduces_000():
    # docs/rules.md: Yaniv at 5; jokers wild in a séquence (runs, and sets of three or four) but not in a
    # pair; of a set of three or four only the ends, of a pair only the top card; otherwise the defaults.
    assert PRESETS["french"] == Rules(yaniv_threshold=5, jokers_in_sets=True, min_set_with_jokers=3,
                                      draw_from_set="ends_or_top_of_pair")
    assert get_rules("french").yaniv_threshold == 5


def test_the_german_preset_reproduces_001():
    # docs/rules.md: +30 for one Assafer, +20 per Assafer when several; halving at 50, 100 and 150;
    # passing 200 ends the game and the lowest wins; a joker inside a run may be taken; only the
    # outer cards of a multi-card discard; otherwise the defaults (Yaniv at 7, an equal total Assafs).
    german = get_rules("german")
    assert german == Rules(
        yaniv_threshold=7, assaf_on_equal=True, assaf_penalty="per_assafer", assaf_penalty_points=30,
        assaf_points_per_assafer=20, score_reset="halve", score_reset_at=(50, 100, 150), game_end="first_over",
        score_limit=200, draw_from_run="ends_and_jokers", draw_from_set="ends",
    )


def test_the_default_preset_is_the_default_rules():
    assert get_rules("default") == get_rules(None) == Rules()


def test_the_docs_tables_match_the_rules():
    text = DOCS.read_text(encoding="utf-8")
    assert rules_table_markdown() in text
    assert presets_table_markdown() in text


@pytest.mark.parametrize("rules, score, hand", [
    ("default", 86, "KS 4H"),          # 100: halved to 50
    ("default", 180, "KS KH"),         # 200: halved to 100
    ("default", 95, "KS"),             # 105: nothing
    ("default", 190, "KS AD"),         # 201: over the limit
    (Rules(score_reset_at=(210,)), 190, "KS KH"),  # 210 is above the limit, but reset first: 105, in
    (SUBTRACT, 140, "KS"),             # 150 less 50
    ("german", 190, "KS"),             # 200: no reset in german, and not over
])
def test_score_stakes_agree_with_the_engine(rules, score, hand):
    """``Rules.score_stakes``, which the score-aware heuristic and the observation read, says what the
    engine does to a non-caller's score: the points a reset takes off, and whether it is out."""
    g = call_yaniv(["AH", hand], 0, rules, scores=[0, score])
    t = hand_points(parse_cards(hand))
    taken, over = g.rules.score_stakes(score)
    assert score + t - taken[t] == g.scores[1]
    assert over[t] == (g.scores[1] > g.rules.score_limit)
    assert len(taken) == len(over) == (g.rules.hand_size + 1) * 10 + 1


@pytest.mark.parametrize(
    "hands, pile, deck, options, words",
    [
        (["AC 2C", "AC"], ["5S"], "", {}, "placed twice"),
        (["AC 2C", "3D"], ["5S 9H"], "", {}, "one rank"),
        (["AC 2C", "3D"], [], "", {}, "pile"),
        (["AC 2C 3C 4C 5C 6C 7C 8C", "3D"], ["5S"], "", {}, "seat 0 holds 8 cards"),
        (["AC 2C", ""], ["5S"], "", {}, "seat 1 holds 0 cards"),
        (["AC 2C", "3D"], ["5S"], "", {"known": [(), C("4D")]}, "known"),
        (["AC 2C", "3D"], ["5S"], "JK2", {"rules": Rules(jokers=1)}, "not in a deck with 1 joker"),
    ],
    ids=["a card twice", "a top that is no group", "no pile", "eight cards", "an empty hand in the game",
         "known cards not held", "a joker the deck lacks"],
)
def test_a_position_that_cannot_be_is_refused_by_name(hands, pile, deck, options, words):
    with pytest.raises(ValueError, match=words):
        Game.from_position([C(h) for h in hands], [C(p) for p in pile], list(C(deck)), **options)


def test_a_position_plays_on_from_where_it_was_placed():
    g = Game.from_position([C("AC 2C"), C("KD QD")], [C("5S"), C("9H")], list(C("3H 4H")), top_by=1,
                           known=[C("2C"), ()])
    assert g.current == 0 and g.top == Group(C("9H"), "single", 1, C("9H")) and g.pile_cards() == C("5S 9H")
    assert g.view(1).known[0] == {C("2C")[0]} and g.view(0).dead == C("5S")
    g.apply(Move.discard(C("2C"), DECK))
    assert g.hands[0] == list(C("AC 3H")) and g.deck == list(C("4H")) and g.known == [set(), set()]


# ------------------------------------------------------------------------------------------------
# 12. Moves with bad fields: refused by name before anything changes
# ------------------------------------------------------------------------------------------------

KS, FIVE_H, NINE_S = C("KS")[0], C("5H")[0], C("9S")[0]

BAD_MOVES = [
    # (id, the move, for seat 0 holding 5H KS with a 9S on the pile, words the error must hold)
    ("a float card id", Move("discard", (float(KS),), DECK), "card ids are plain integers"),
    ("a float card id among good ones", Move("discard", (FIVE_H, 5.0), DECK), "card ids are plain integers"),
    ("a float draw", Move("discard", (KS,), float(NINE_S)), "the draw is DECK"),
    ("a float deck draw", Move("discard", (KS,), -1.0), "the draw is DECK"),
    ("a bool card id", Move("discard", (True,), DECK), "card ids are plain integers"),
    ("a bool draw", Move("discard", (KS,), True), "the draw is DECK"),
    ("a numpy card id", Move("discard", (np.int64(KS),), DECK), "card ids are plain integers.*int64"),
    ("a numpy draw", Move("discard", (KS,), np.int64(NINE_S)), "the draw is DECK.*int64"),
    ("a None draw", Move("discard", (KS,), None), "the draw is DECK"),
    ("a string card", Move("discard", ("KS",), DECK), "card ids are plain integers"),
    ("a nested tuple card", Move("discard", ((KS,),), DECK), "card ids are plain integers"),
    ("cards as a list", Move("discard", [KS], DECK), "tuple"),
    ("more cards than the hand holds", Move("discard", (KS,) * 1000, DECK), "1000 cards.*holds 2"),
    ("a call carrying a card and a draw", Move("yaniv", (KS,), 12345), "'yaniv' carries no cards and no draw"),
    ("a call carrying a card", Move("yaniv", (KS,), DECK), "'yaniv' carries no cards and no draw"),
    ("a call carrying a draw", Move("yaniv", (), NINE_S), "'yaniv' carries no cards and no draw"),
    ("a keep carrying a card", Move("keep", (KS,), DECK), "'keep' carries no cards and no draw"),
    ("a kind that is not a string", Move(5, (KS,), DECK), "unknown move kind"),
    ("a kind as bytes", Move(b"yaniv"), "unknown move kind"),
    ("a move of two fields", ("discard", (KS,)), "a move is"),
    ("a move that is no tuple", 7, "a move is"),
]


@pytest.mark.parametrize("move, words", [b[1:] for b in BAD_MOVES], ids=[f"apply refuses {b[0]}" for b in BAD_MOVES])
def test_a_move_with_a_bad_field_is_refused_by_name_and_changes_nothing(move, words):
    g = position(["5H KS", "TD"], top="9S", top_by=1, rules=Rules(yaniv_threshold=20), deck="3D")  # a call is legal
    before = snapshot(g)
    with pytest.raises(ValueError, match=words):
        g.apply(move)
    assert snapshot(g) == before
    assert all_cards(g) == list(deck_cards(2))
    g.apply(Move.discard((KS,), NINE_S))  # and the game plays on
    assert g.hands[0] == [FIVE_H, NINE_S] and all(type(c) is int for c in g.hands[0])


def test_a_slamdown_decision_with_a_card_or_a_draw_is_refused_and_changes_nothing():
    g = position(["5H KH", "TD TC"], rules=SLAM, deck="5S")
    g.apply(Move.discard(C("5H"), DECK))
    before = snapshot(g)
    for move in (Move("slamdown", C("5S"), DECK), Move("keep", (), C("5S")[0]), Move("slamdown", (), 0.0)):
        with pytest.raises(ValueError, match="carries no cards and no draw"):
            g.apply(move)
        assert snapshot(g) == before


# ------------------------------------------------------------------------------------------------
# 13. Settings under which a round or a game could never end: refused by name
# ------------------------------------------------------------------------------------------------

NEVER_ENDING = [
    # (id, settings, the names the error must hold)
    ("threshold 0 without jokers: an ace, the lowest card, is worth 1",
     {"yaniv_threshold": 0, "jokers": 0}, r"Rules\.yaniv_threshold=0 with Rules\.jokers=0"),
    ("threshold 0 without jokers and a turn cap: every round capped, scoreless",
     {"yaniv_threshold": 0, "jokers": 0, "max_turns": 50}, r"Rules\.yaniv_threshold=0 with Rules\.jokers=0"),
    ("threshold 0 without jokers under first_over",
     {"yaniv_threshold": 0, "jokers": 0, "game_end": "first_over"}, r"Rules\.yaniv_threshold=0"),
    # the five lowest cards without jokers: A A A A 2 = 6 > 5; nobody plays twice within two turns
    ("a cap of 2 turns and threshold 5 without jokers",
     {"max_turns": 2, "yaniv_threshold": 5, "jokers": 0}, r"Rules\.max_turns=2 with Rules\.yaniv_threshold=5"),
    # with two jokers the lowest five cards are Jk Jk A A A = 3 > 2
    ("a cap of 1 turn and threshold 2",
     {"max_turns": 1, "yaniv_threshold": 2}, r"Rules\.max_turns=1 with Rules\.yaniv_threshold=2"),
    # seven cards without jokers: A A A A 2 2 2 = 10 > 9
    ("a cap of 2 turns, seven cards and threshold 9 without jokers",
     {"max_turns": 2, "yaniv_threshold": 9, "jokers": 0, "hand_size": 7}, r"Rules\.max_turns=2"),
    ("a joker set bigger than any set may be",
     {"jokers_in_sets": True, "min_set_with_jokers": 5}, r"Rules\.min_set_with_jokers"),
]


@pytest.mark.parametrize("settings, words", [c[1:] for c in NEVER_ENDING], ids=[f"refused: {c[0]}" for c in NEVER_ENDING])
def test_settings_under_which_no_game_can_end_are_refused_by_name(settings, words):
    with pytest.raises(ValueError, match=words):
        Rules(**settings)
    with pytest.raises(ValueError, match=words):
        Rules.from_dict({"preset": "german", **settings})


ENDING_AT_THE_EDGE = [
    # (id, settings): each is accepted, a game under it can end
    ("threshold 0 with one joker: a lone joker may call", {"yaniv_threshold": 0, "jokers": 1}),
    ("threshold 1 without jokers: a lone ace may call", {"yaniv_threshold": 1, "jokers": 0}),
    ("a cap of 2 turns and threshold 6 without jokers: A A A A 2 may call", {"max_turns": 2, "yaniv_threshold": 6, "jokers": 0}),
    ("a cap of 3 turns and threshold 5 without jokers: the starter plays twice at two seats",
     {"max_turns": 3, "yaniv_threshold": 5, "jokers": 0}),
    ("a subtract reset at every one of 32 scores up to the limit",
     {"score_reset": "subtract", "score_reset_subtract": 1000, "score_reset_at": tuple(range(169, 201))}),
]


@pytest.mark.parametrize("settings", [c[1] for c in ENDING_AT_THE_EDGE], ids=[f"accepted: {c[0]}" for c in ENDING_AT_THE_EDGE])
def test_settings_at_the_edge_of_ending_are_accepted(settings):
    assert Rules(**settings).to_dict().items() >= settings.items()


def test_a_turn_cap_no_seat_outlasts_is_refused_by_game_for_full_games():
    rules = Rules(max_turns=3, yaniv_threshold=5, jokers=0)  # lowest dealt hand 6: only a second turn may call
    with pytest.raises(ValueError, match=r"Rules\.max_turns=3 with 3 seats"):
        Game(3, rules)
    with pytest.raises(ValueError, match=r"Rules\.max_turns=3 with 3 seats"):  # seat 3 out: three still in
        Game(4, rules, scores=[0, 0, 0, 250])
    Game(3, rules, single_round=True)  # one round: it ends at the cap
    Game(2, rules)  # the starter plays the third turn
    Game(4, rules, scores=[0, 0, 250, 250])  # two in the game


def test_a_subtract_reset_cannot_stop_a_game_from_ending():
    # 32 reset values just under the limit, each back to 0: a hand of 33 points or more jumps past them
    rules = Rules(score_reset="subtract", score_reset_subtract=1000, score_reset_at=tuple(range(169, 201)))
    g = call_yaniv(["AH", "KS KH KD 4C"], 0, rules, scores=[0, 168], single_round=False)  # 168 + 34 = 202
    assert g.is_over and g.winners == (0,)


@pytest.mark.parametrize("name, value", [
    ("yaniv_threshold", 10**7), ("score_limit", 10**300), ("assaf_penalty_points", 1_000_001),
    ("max_turns", 10**9), ("score_reset_at", tuple(range(1, 34))), ("score_reset_at", (10**7,)),
], ids=["a threshold of ten million", "a limit of 10^300", "a penalty over a million", "a cap of a billion turns",
        "33 reset values", "a reset value of ten million"])
def test_every_number_setting_has_a_bound(name, value):
    with pytest.raises(ValueError, match=rf"Rules\.{name}: got .*1,000,000"):
        Rules(**{name: value})


# ------------------------------------------------------------------------------------------------
# 14. The french preset against its text (000), quoted
# ------------------------------------------------------------------------------------------------

FRENCH_GROUPS = [
    # (the words of 000, cards thrown, kind and order on the pile or the refusal, drawable by the next player)
    ("trois à quatre cartes de la même à valeur ... la première carte dans la séquence ou la dernière carte dans la "
     "séquence, aucune autre carte entre les deux", "9S 9C 9D", ("set", "9C 9D 9S"), "9C 9S"),
    ("trois à quatre cartes de la même à valeur", "KS KH KD KC", ("set", "KC KD KH KS"), "KC KS"),
    ("la carte du dessus de la pile de défausse", "5S 5H", ("set", "5H 5S"), "5S"),
    ("Avant de jeter une paire, les deux cartes doivent être de la valeur-a même", "5H JK1", "wild only in sets of three to four", None),
    ("Jokers peuvent être utilisés comme une carte sauvage et remplacées par une carte que vous pouvez faire défaut "
     "dans une séquence", "5S 5H JK2", ("set", "5H 5S JK2"), "5H JK2"),
    ("Jokers peuvent être utilisés comme une carte sauvage ... dans une séquence", "5C 5D 5H JK1", ("set", "5C 5D 5H JK1"), "5C JK1"),
    ("Jokers peuvent être utilisés comme une carte sauvage ... dans une séquence", "5H JK1 JK2", ("set", "5H JK1 JK2"), "5H JK2"),
    ("être trois à quatre cartes de la même à valeur", "5C 5D 5H 5S JK1", "two to four cards", None),
    ("la première carte dans la séquence ou la dernière carte dans la séquence, aucune autre carte entre les deux",
     "4S JK1 6S", ("run", "4S JK1 6S"), "4S 6S"),
    ("former une ligne droite dans le costume d'un même", "4S 5S 6S 7S", ("run", "4S 5S 6S 7S"), "4S 7S"),
]


@pytest.mark.parametrize("quote, cards, outcome, drawable", FRENCH_GROUPS,
                         ids=[f"french: {c[1]} ({c[0][:40]})" for c in FRENCH_GROUPS])
def test_the_french_preset_groups_and_draws_as_000_says(quote, cards, outcome, drawable):
    french = get_rules("french")
    if isinstance(outcome, str):
        with pytest.raises(ValueError, match=outcome):
            classify(C(cards), french)
        return
    kind, order = outcome
    assert classify(C(cards), french) == (kind, C(order))
    g = position(["8H 2C", "TD"], rules="french", top=cards, top_by=1, deck="3D")
    assert g.legal_draws() == (DECK,) + C(drawable)
    inner = [c for c in C(order) if c not in C(drawable)]
    for card in inner:  # "aucune autre carte entre les deux"
        with pytest.raises(ValueError, match="cannot draw"):
            g.apply(Move.discard(C("8H"), card))


def test_the_french_legal_discards_of_a_hand():
    # "une seule carte, une paire de cartes ou une séquence": 5 singles; the pair 5H 5S; the séquences
    # 5H 5S JK1 (a set of three with the joker) and 5H 6H JK1, 5H JK1 7H... here 5H 6H JK1 (a run 5-6-7)
    # and JK1 5H 6H? no: canonical order only; 5H JK1 and 5S JK1 are pairs with a joker: refused.
    found = legal_discards(sort_hand(C("5H 5S 6H JK1 KS")), get_rules("french"))
    assert as_sets(found) == {frozenset(C(e)) for e in ["5H", "5S", "6H", "JK1", "KS", "5H 5S", "5H 5S JK1", "5H 6H JK1"]}


# ------------------------------------------------------------------------------------------------
# 15. House rules: who starts the next round, sets past four cards, jokers placed by the discarder
# ------------------------------------------------------------------------------------------------

STARTERS = [
    # (id, hands, caller, scores before, starter of the next round under winner, caller, next_seat);
    # the round was started by seat 0 (position: current = caller, starter = caller; see below)
    ("a clean Yaniv by seat 1", ["KH QH", "AH 2C", "5S 5C"], 1, [0, 0, 0], (1, 1, 1)),
    ("seat 0 Assafed by seat 2", ["3C 4C", "KH", "AH"], 0, [0, 0, 0], (2, 0, 1)),
    ("seat 2 Assafed by seats 0 and 1 tied", ["3H", "3S", "7C"], 2, [0, 0, 0], (0, 2, 1)),
    # seat 0 Assafed: 180 + 7 + 30 = 217, out; the next seat in the game after it is 1
    ("the Assafed caller put out of the game", ["3C 4C", "KH", "AH"], 0, [180, 0, 0], (2, 1, 1)),
]


@pytest.mark.parametrize("hands, caller, scores, starters", [c[1:] for c in STARTERS], ids=[c[0] for c in STARTERS])
def test_who_starts_the_next_round(hands, caller, scores, starters):
    for how, expected in zip(("winner", "caller", "next_seat"), starters):
        g = position(hands, rules=Rules(next_round_starter=how), current=caller, scores=scores)
        g.starter = 0  # the round was started by seat 0 (a position starts at the caller's turn)
        g.apply(YANIV)
        assert g.round_number == 2 and g.starter == g.current == expected, how


def test_a_capped_round_is_followed_by_the_next_seat_whatever_the_setting():
    for how in ("winner", "caller", "next_seat"):
        g = Game(3, Rules(max_turns=2, next_round_starter=how), seed=0, starter=1)
        _play_single_discards(g, 2)
        assert g.round_number == 2 and g.current == 2


BIG = Rules(jokers_in_sets=True, max_set_size=6)
BIG_SETS = [
    # (id, rules, cards, kind and order, or the refusal)
    ("four naturals and a joker", Rules(jokers_in_sets=True, max_set_size=5), "5C 5D 5H 5S JK1", ("set", "5C 5D 5H 5S JK1")),
    ("three naturals and two jokers", Rules(jokers_in_sets=True, max_set_size=5), "5C 5D 5H JK1 JK2", ("set", "5C 5D 5H JK1 JK2")),
    ("four naturals and two jokers over a limit of five", Rules(jokers_in_sets=True, max_set_size=5), "5C 5D 5H 5S JK1 JK2", "two to five"),
    ("four naturals and two jokers", BIG, "JK2 5S 5H 5D 5C JK1", ("set", "5C 5D 5H 5S JK1 JK2")),
    ("a pair and two jokers", BIG, "5C 5D JK1 JK2", ("set", "5C 5D JK1 JK2")),
    ("a joker pairs a natural under the default smallest set", BIG, "5C JK1", ("set", "5C JK1")),
]


@pytest.mark.parametrize("rules, cards, outcome", [c[1:] for c in BIG_SETS], ids=[f"big sets: {c[0]}" for c in BIG_SETS])
def test_sets_past_four_cards_with_jokers(rules, cards, outcome):
    if isinstance(outcome, str):
        with pytest.raises(ValueError, match=outcome):
            classify(C(cards), rules)
    else:
        assert classify(C(cards), rules) == (outcome[0], C(outcome[1]))


def test_a_six_card_set_is_thrown_and_lists_among_the_legal_discards():
    g = position(["5C 5D 5H 5S JK1 JK2 KS", "TD"], rules=BIG.replace(hand_size=7))
    six = C("5C 5D 5H 5S JK1 JK2")
    assert any(m.cards == six for m in g.legal_moves())
    g.apply(Move.discard(six, DECK))
    assert g.top == Group(six, "set", 0, six) and len(g.hands[0]) == 2


PLACED = Rules(discarder_places_jokers=True)
PLACEMENTS = [
    # (id, the cards as given, the run they make (low to high) or the refusal, drawable ends)
    ("a joker below: Jk 5 6 is the run 4-5-6", "JK1 5H 6H", "JK1 5H 6H", "JK1 6H"),
    ("a joker above: 5 6 Jk is the run 5-6-7", "5H 6H JK1", "5H 6H JK1", "5H JK1"),
    ("a joker in the gap, where it must stand", "5H JK1 7H", "5H JK1 7H", "5H 7H"),
    ("two jokers around a natural", "JK2 5H JK1", "JK2 5H JK1", "JK2 JK1"),
    ("no joker: any order, the canonical one kept", "7H 5H 6H", "5H 6H 7H", "5H 7H"),
    ("a joker below the ace is refused", "JK1 AH 2H", "not a run in the order given", None),
    ("a joker above the king is refused", "QH KH JK1", "not a run in the order given", None),
    ("a joker between two adjacent naturals is refused", "5H JK1 6H", "not a run in the order given", None),
    ("a high-to-low order is refused", "6H 5H JK1", "not a run in the order given", None),
]


@pytest.mark.parametrize("cards, outcome, drawable", [c[1:] for c in PLACEMENTS], ids=[f"placed jokers: {c[0]}" for c in PLACEMENTS])
def test_the_discarder_places_the_jokers_of_a_run(cards, outcome, drawable):
    if drawable is None:
        with pytest.raises(ValueError, match=outcome):
            classify(C(cards), PLACED)
        g = position([cards + " TC", "TD"], rules=PLACED)
        before = snapshot(g)
        with pytest.raises(ValueError, match=outcome):
            g.apply(Move.discard(C(cards), DECK))
        assert snapshot(g) == before
        return
    assert classify(C(cards), PLACED) == ("run", C(outcome))
    g = position([cards + " TC", "TD KD"], rules=PLACED, deck="2C")
    g.apply(Move.discard(C(cards), DECK))
    assert g.top == Group(C(outcome), "run", 0, C(drawable))
    assert g.legal_draws() == (DECK,) + C(drawable)
    assert g.events[-1] == Event("discard", 0, C(outcome), DECK)


def test_each_placement_of_the_jokers_is_a_legal_move_of_its_own():
    g = position(["5H 6H JK1 KS", "TD"], rules=PLACED, top="9S", top_by=1)
    runs = [m.cards for m in g.legal_moves() if len(m.cards) == 3 and m.draw == DECK]
    assert sorted(runs) == sorted([C("JK1 5H 6H"), C("5H 6H JK1")])
    g = position(["5H 7H JK1 JK2", "TD"], rules=PLACED)
    runs = {m.cards for m in g.legal_moves() if len(m.cards) == 4}
    # 5 Jk 7 Jk (6, 8) and Jk 5 Jk 7 (4, 6), each with the two jokers either way round
    assert runs == {C("5H JK1 7H JK2"), C("5H JK2 7H JK1"), C("JK1 5H JK2 7H"), C("JK2 5H JK1 7H")}
    default = position(["5H 7H JK1 JK2", "TD"])
    assert {m.cards for m in default.legal_moves() if len(m.cards) == 4} == {C("5H JK1 7H JK2")}


def test_a_placed_run_keeps_its_order_through_views_samples_and_the_protocol():
    from yaniv.protocol import game_from_state, move_from_json, state_for

    g = position(["JK1 5H 6H TC", "TD KD"], rules=PLACED, deck="2C")
    g.apply(Move.discard(C("JK1 5H 6H"), DECK))
    assert g.view(1).top.cards == C("JK1 5H 6H")
    rebuilt = game_from_state(state_for(g, 1, history=False), 0)
    assert rebuilt.top == g.top._replace(player=-1) and rebuilt.legal_draws() == g.legal_draws()
    sample = rebuilt.sample_hidden(1, np.random.default_rng(0))
    assert sample.top == rebuilt.top and sample.legal_draws() == g.legal_draws()
    move = move_from_json({"action": "discard", "cards": ["JK1", "5H", "6H"], "draw": "deck"}, PLACED)
    assert move.cards == C("JK1 5H 6H")


def test_a_view_is_kept_for_its_state_only():
    """Game.view keeps the views of one state (the environment's observation and step share one);
    a move, even an illegal one, drops them, and a copy starts without them."""
    g = position(["AC 2C 9D", "KD QD"], top="5S")
    assert g.view(0) is g.view(0) and g.view(0) is not g.view(1)
    before = g.view(0)
    with pytest.raises(ValueError):
        g.apply(Move.discard(C("KD"), DECK))
    assert g.view(0) == before and g.view(0) is not before
    g.apply(Move.discard(C("9D"), DECK))
    assert g.view(0).hand != before.hand and g.view(0).legal_moves == ()
    assert g.copy().view(1) == g.view(1) and g.copy().view(1) is not g.view(1)
    with pytest.raises(ValueError, match="player must be a seat"):
        g.view(True)
