"""Random-play invariants, determinism, copies and hidden-card sampling, over many seeded games.

Each check here would catch a class of bugs that hand-worked scenarios can miss: a card lost or
duplicated, a legal move the enumerator forgets (or an illegal one it offers), an illegal move
that half-applies, scores that move outside a showdown, a game that never ends.
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from yaniv import DECK, KEEP, SLAMDOWN, YANIV, Game, Move, Rules, get_rules
from yaniv.cards import NUM_CARDS, SORT_KEY, deck_cards, hand_points
from yaniv.game import OVER, SLAMDOWN_PHASE
from yaniv.melds import classify
from yaniv.rules import parse_rules

HOUSE = Rules(
    jokers_in_sets=True, slamdown=True, assaf_penalty="flat", score_reset="subtract",
    score_reset_at=(50, 100, 150, 200), draw_from_set="ends", draw_from_run="ends_and_jokers",
)
# The house rules of issue 18: jokers placed by the discarder, sets of up to six, the caller starts.
PLACED = Rules(
    jokers_in_sets=True, max_set_size=6, discarder_places_jokers=True, slamdown=True, next_round_starter="caller",
    hand_size=7, draw_from_run="ends_and_jokers",
)
# (players, rules): every player count, every preset, and the variants that change move generation.
CONFIGS = [
    (3, PLACED), (4, Rules(discarder_places_jokers=True, next_round_starter="next_seat", max_set_size=5,
                           jokers_in_sets=True, min_set_with_jokers=3, draw_from_set="ends_or_top_of_pair")),
    (2, "default"), (3, "french"), (4, "german"), (5, "default"), (6, HOUSE), (7, "default"),
    (8, "german"), (2, HOUSE), (3, Rules(jokers=0, hand_size=4)), (7, Rules(hand_size=7, jokers=1)),
    (4, Rules(score_limit=100, game_end="first_over", assaf_on_equal=False, max_turns=60)),
]


def snapshot(g: Game) -> tuple:
    """Everything in the state, for exact before/after comparisons."""
    return (
        [list(h) for h in g.hands], list(g.totals), list(g.deck), list(g.pile), [set(k) for k in g.known],
        list(g.scores), list(g.alive), g.current, g.phase, g.pending, g.starter, g.turn, g.round_number,
        list(g.events), list(g.pools), list(g.results), g.winners, str(g.rng.bit_generator.state),
    )


def check_invariants(g: Game) -> None:
    cards = [c for h in g.hands for c in h] + g.deck + [c for group in g.pile for c in group.cards]
    assert sorted(cards) == sorted(deck_cards(g.rules.jokers)), "every card is in exactly one place"
    for q, hand in enumerate(g.hands):
        assert hand == sorted(hand, key=SORT_KEY.__getitem__), "hands stay in hand order"
        assert g.totals[q] == hand_points(hand)
        assert g.known[q] <= set(hand), "known cards are cards the player holds"
        if not g.alive[q] and g.phase != OVER:  # at the end the last showdown's hands stay on view
            assert hand == [] and not g.known[q]
        if g.alive[q] and g.phase != OVER:
            assert hand, "a seat in the game always holds a card"
    assert all(not group.drawable for group in g.pile[:-1]), "only the top group can be drawn from"
    assert set(g.pile[-1].drawable) <= set(g.pile[-1].cards)
    if g.phase != OVER:
        assert g.alive[g.current]


def brute_force_moves(g: Game) -> set[Move]:
    """Every legal move by trying every subset of the hand: slow, obviously right."""
    if g.phase == SLAMDOWN_PHASE:
        return {SLAMDOWN, KEEP}
    hand = g.hands[g.current]
    moves = {YANIV} if hand_points(hand) <= g.rules.yaniv_threshold else set()
    draws = ([DECK] if g.deck else []) + list(g.pile[-1].drawable)
    for size in range(1, len(hand) + 1):
        for subset in itertools.combinations(hand, size):
            for order in orders(subset, g.rules):
                try:
                    _, ordered = classify(order, g.rules)
                except ValueError:
                    continue
                moves.update(Move.discard(ordered, d) for d in draws)
    return moves


def orders(cards: tuple[int, ...], rules: Rules) -> list[tuple[int, ...]]:
    """The orders of ``cards`` to try: as they are, or with ``discarder_places_jokers`` and jokers among
    them, every order of the jokers in every set of positions around the naturals (any run has its
    naturals in rank order)."""
    jokers = [c for c in cards if c >= 52]
    if not (rules.discarder_places_jokers and jokers and len(cards) > 2):
        return [cards]
    naturals = sorted((c for c in cards if c < 52), key=lambda c: c % 13)
    out = []
    for places in itertools.combinations(range(len(cards)), len(jokers)):
        for perm in itertools.permutations(jokers):
            rest, fill = iter(naturals), dict(zip(places, perm))
            out.append(tuple(fill[i] if i in fill else next(rest) for i in range(len(cards))))
    return out


def canonical(move, rules: Rules):
    """The move with its cards in canonical order, when they form a group at all."""
    if isinstance(move, Move) and move.kind == "discard":
        try:
            return move._replace(cards=classify(move.cards, rules)[1])
        except ValueError:
            pass
    return move


def random_illegal_moves(g: Game, rng: np.random.Generator, n: int) -> list[Move]:
    """Moves made of random cards and draws, most of them illegal."""
    hand = g.hands[g.current]
    out = []
    for _ in range(n):
        size = int(rng.integers(1, 5))
        pool = hand + [int(c) for c in rng.integers(0, NUM_CARDS, size=3)]
        cards = tuple(int(c) for c in rng.choice(pool, size=min(size, len(pool)), replace=False))
        draw = int(rng.choice([DECK, *range(NUM_CARDS)]))
        out.append(Move.discard(cards, draw))
    out += [YANIV, SLAMDOWN, KEEP, Move("bogus"), ("not", "a move"), Move.discard((), DECK)]
    return out


def mistyped_moves(legal: list[Move], rng: np.random.Generator) -> list[Move]:
    """Legal moves with one field of the wrong type: a card id or the draw as a float, a numpy
    integer or a bool, and a call that carries cards or a draw. Each is illegal: plain ints only."""
    out = [Move(YANIV.kind, (0,), DECK), Move(YANIV.kind, (), 0), Move(KEEP.kind, (), 1.0)]
    discards = [m for m in legal if m.kind == "discard"]
    for _ in range(3):
        if not discards:
            break
        m = discards[int(rng.integers(len(discards)))]
        i = int(rng.integers(len(m.cards)))
        for wrong in (float, np.int64, bool):
            cards = m.cards[:i] + (wrong(m.cards[i]),) + m.cards[i + 1:]
            out += [m._replace(cards=cards), m._replace(draw=wrong(m.draw))]
    return out


def play_random(g: Game, rng: np.random.Generator, max_moves: int = 50_000) -> int:
    moves = 0
    while not g.is_over:
        legal = g.legal_moves()
        g.apply(legal[int(rng.integers(len(legal)))])
        moves += 1
        assert moves < max_moves, "the game must end"
    return moves


@pytest.mark.parametrize("players,rules", CONFIGS, ids=lambda v: str(v) if isinstance(v, (int, str)) else "custom")
def test_random_play_keeps_every_invariant(players, rules):
    rng = np.random.default_rng(players)
    for seed in range(3):
        g = Game(players, rules=rules, seed=seed)
        check_invariants(g)
        scores = list(g.scores)
        rounds = 0
        moves = 0
        while not g.is_over:
            legal = g.legal_moves()
            assert legal, "the player to move always has a move"
            assert len(set(legal)) == len(legal), "no move is listed twice"
            if moves % 7 == 0:  # the enumerator agrees with brute force
                assert set(legal) == brute_force_moves(g)
                before = snapshot(g)
                for bad in random_illegal_moves(g, rng, 12):
                    if canonical(bad, g.rules) in set(legal):
                        continue  # apply takes a discard's cards in any order
                    with pytest.raises(ValueError):
                        g.apply(bad)
                    assert snapshot(g) == before, f"illegal {bad} changed the state"
                mistyped = mistyped_moves(legal, rng)
                for bad in mistyped:
                    with pytest.raises(ValueError):
                        g.apply(bad)
                assert snapshot(g) == before, f"one of the mistyped moves {mistyped} changed the state"
            move = legal[int(rng.integers(len(legal)))]
            g.apply(move)
            moves += 1
            assert moves < 50_000
            check_invariants(g)
            if len(g.results) > rounds:  # a round ended: scores moved exactly as its result says
                result = g.results[-1]
                rounds += 1
                expect_scoring(g.rules, scores, result)
                scores = list(result.scores)
            else:
                assert g.scores == scores, "scores change only when a round ends"
        assert g.winners
        if g.rules.game_end == "elimination" and not g.single_round:
            assert g.winners == tuple(q for q in range(players) if g.alive[q]) and len(g.winners) == 1


def expect_scoring(rules: Rules, before: list[int], result) -> None:
    """Recompute a round's scoring from the revealed hands, independently of the engine."""
    n = len(before)
    if result.caller is None:
        assert result.scores == tuple(before) and result.winners == ()
        return
    alive = [bool(h) for h in result.hands]
    totals = [hand_points(h) for h in result.hands]
    assert list(result.totals) == totals
    c = result.caller
    beaten = [q for q in range(n) if alive[q] and q != c and (totals[q] < totals[c] or (rules.assaf_on_equal and totals[q] == totals[c]))]
    assert list(result.assafers) == beaten
    if not beaten:
        winners, points = [c], [0 if q == c or not alive[q] else totals[q] for q in range(n)]
    else:
        low = min(totals[q] for q in beaten)
        winners = [q for q in beaten if totals[q] == low]
        points = [0 if q in winners or not alive[q] else totals[q] for q in range(n)]
        if rules.assaf_penalty == "flat":
            points = [rules.assaf_penalty_points if q == c else 0 for q in range(n)]
        elif rules.assaf_penalty == "per_assafer" and len(beaten) > 1:
            points[c] = totals[c] + rules.assaf_points_per_assafer * len(beaten)
        else:
            points[c] = totals[c] + rules.assaf_penalty_points
    assert list(result.winners) == winners and list(result.points) == points
    for q in range(n):
        score = before[q] + points[q]
        if points[q] and rules.score_reset != "none" and score in rules.score_reset_at:
            score = score // 2 if rules.score_reset == "halve" else score - rules.score_reset_subtract
        assert result.scores[q] == score


def test_same_seed_same_game_and_different_seed_different_game():
    def record(seed: int) -> tuple:
        g = Game(4, rules=HOUSE, seed=seed)
        play_random(g, np.random.default_rng(99))
        return tuple(g.results), tuple(g.events), g.winners

    assert record(5) == record(5)
    assert record(5) != record(6)


def test_copy_is_independent_and_plays_out_the_same_future():
    g = Game(3, seed=11)
    rng = np.random.default_rng(0)
    for _ in range(40):
        legal = g.legal_moves()
        g.apply(legal[int(rng.integers(len(legal)))])
    twin = g.copy()
    assert snapshot(twin) == snapshot(g)
    play_random(twin, np.random.default_rng(1))
    assert twin.is_over and not g.is_over, "playing the copy leaves the original alone"
    again = g.copy()
    play_random(again, np.random.default_rng(1))
    assert again.results == twin.results, "same moves from a copy give the same game (rng copied)"


@pytest.mark.parametrize("rules", ["default", HOUSE], ids=["default", "house"])
def test_sample_hidden_keeps_what_the_player_knows_and_reshuffles_the_rest(rules):
    rng = np.random.default_rng(3)
    g = Game(4, rules=rules, seed=21, single_round=True)
    differing = 0
    checked = 0
    for _ in range(400):
        if g.is_over:
            break
        legal = g.legal_moves()
        g.apply(legal[int(rng.integers(len(legal)))])
        if g.is_over:
            break
        observer = int(rng.integers(4))
        sample = g.sample_hidden(observer, rng)
        check_invariants(sample)
        assert sample.view(observer) == g.view(observer), "the observer cannot tell the sample from the game"
        hidden = lambda game: sorted(  # noqa: E731
            game.deck + [c for q in range(4) if q != observer for c in game.hands[q] if c not in game.known[q]]
        )
        assert hidden(sample) == hidden(g), "the same cards stay hidden"
        differing += hidden_layout(sample, observer) != hidden_layout(g, observer)
        checked += 1
        # Cards of one deck epoch stay in that epoch: after a reshuffle, a card drawn before it
        # cannot turn up in the new deck and vice versa.
        for q in range(4):
            if q != observer:
                assert epochs(sample, q) == epochs(g, q)
        assert all(c in g.pools[-1] for c in sample.deck)
    assert checked > 20 and differing > checked * 0.8, "samples really reshuffle the hidden cards"


def hidden_layout(g: Game, observer: int) -> tuple:
    return tuple(tuple(g.hands[q]) for q in range(g.num_players) if q != observer) + (tuple(g.deck),)


def epochs(g: Game, seat: int) -> list[int]:
    def latest(card: int) -> int:
        return max(e for e, pool in enumerate(g.pools) if card in pool)

    return sorted(latest(c) for c in g.hands[seat] if c not in g.known[seat])


def test_sample_hidden_during_a_pending_slamdown_draws_a_card_that_fits():
    rules = Rules(slamdown=True)
    rng = np.random.default_rng(0)
    found = 0
    for seed in range(300):
        g = Game(3, rules=rules, seed=seed, single_round=True)
        while not g.is_over and g.phase != SLAMDOWN_PHASE:
            legal = g.legal_moves()
            g.apply(legal[int(rng.integers(len(legal)))])
        if g.phase != SLAMDOWN_PHASE:
            continue
        found += 1
        observer = (g.current + 1) % 3
        sample = g.sample_hidden(observer, rng)
        assert sample.phase == SLAMDOWN_PHASE and sample.pending in sample.hands[g.current]
        before = hand_points(sample.hands[g.current])
        sample.apply(SLAMDOWN)
        check_invariants(sample)
        assert sample.totals[g.current] <= before
        if found >= 10:
            break
    assert found >= 10


def test_full_game_deals_new_rounds_with_the_winner_starting():
    g = Game(3, seed=4)
    play_random(g, np.random.default_rng(8))
    assert len(g.results) > 1 and g.round_number == len(g.results)
    for before, result in zip(g.results, g.results[1:]):
        assert result.turns >= 1
    assert g.phase == OVER


def test_single_round_stops_after_one_round():
    g = Game(4, seed=2, single_round=True)
    play_random(g, np.random.default_rng(2))
    assert len(g.results) == 1 and g.winners == g.results[0].winners


def test_the_engine_imports_no_rl_stack():
    code = "import sys, yaniv; bad = [m for m in ('gymnasium', 'pettingzoo', 'torch') if m in sys.modules]; print(bad)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_view_hides_other_hands_and_the_deck():
    g = Game(3, seed=1)
    view = g.view(1)
    assert view.hand == tuple(g.hands[1]) and view.legal_moves == ()
    assert g.view(0).legal_moves == tuple(g.legal_moves())
    fields = set(view.__dataclass_fields__)
    assert not fields & {"hands", "deck", "rng"}


def test_rules_doc_is_the_generated_table():
    from pathlib import Path

    from yaniv.rules import presets_table_markdown, rules_table_markdown

    doc = (Path(__file__).parents[1] / "docs" / "rules.md").read_text()
    assert rules_table_markdown() in doc and presets_table_markdown() in doc
    assert get_rules("default") == Rules()


PARSED = [
    ("german", get_rules("german")),
    ("default:jokers=0", get_rules("default").replace(jokers=0)),
    ("default: yaniv_threshold=5, assaf_penalty=flat, score_reset=subtract, score_reset_at=50/100, score_limit=100",
     get_rules("default").replace(yaniv_threshold=5, assaf_penalty="flat", score_reset="subtract",
                                  score_reset_at=(50, 100), score_limit=100)),
    ("french:slamdown=true,max_turns=300", get_rules("french").replace(slamdown=True, max_turns=300)),
    ("default:max_turns=none,score_reset_at=", get_rules("default").replace(score_reset_at=())),
]


@pytest.mark.parametrize("text,expected", PARSED)
def test_a_rule_set_spelled_on_one_line(text, expected):
    assert parse_rules(text) == expected


@pytest.mark.parametrize("text,words", [
    ("klingon", "unknown rules preset 'klingon'"), ("default:jokers", "'jokers' is not key=value"),
    ("default:joker=1", "'joker=1' is not key=value"), ("default:jokers=two", "jokers must be a whole number"),
    ("default:slamdown=yes", "slamdown must be true or false"), ("default:score_reset_at=50/x", "joined by /"),
    ("default:jokers=1,jokers=0", "jokers is given twice"), ("default:yaniv_threshold=-3", "yaniv_threshold"),
    ("", "a preset name"), ("default:" + "jokers=1," * 300, "at most 2000 characters"),
])
def test_a_misspelled_rule_set_is_named(text, words):
    with pytest.raises(ValueError, match=words):
        parse_rules(text)
