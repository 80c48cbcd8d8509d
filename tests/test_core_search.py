"""The compiled search (``yaniv_env.core.search``) is the algorithm of ``agents.baselines.search``.

Its parts that use no randomness must give the reference's results exactly: the hand values
(``relief``, ``combines``), the rollout policy's moves (``RolloutPolicy.move``) and the candidates
(``SearchAgent.candidates``). Its samples must keep everything the seat's view shows (own hand,
pile, known cards, hand sizes, each hidden card's epoch, deck size; every card exactly once), and
follow ``informed_sample``'s distribution. In a game of one round a rollout scores the seat's
placing, the same on both sides and the game's rank reward where the round is over. The search
must be deterministic given its seed, play legal moves only, answer a slamdown, and finish a
match. Its strength against the heuristic, and the Python search's on the same deals:
``benchmarks/search_strength.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agents.baselines.heuristic import HeuristicAgent
from agents.baselines.heuristic import relief as reference_relief
from agents.baselines.search import RolloutPolicy, SearchAgent, _combines, informed_sample, placing
from core_support import RULE_SETS, heuristic_positions, positions, tables
from yaniv.cards import parse_cards
from yaniv.game import Game
from yaniv.ranking import final_ranks, standing_keys
from yaniv_env.aec import ranks_rewards
from yaniv_env.core import batch as BT
from yaniv_env.core import bots as B
from yaniv_env.core import engine as E
from yaniv_env.core import layout as L
from yaniv_env.core import search as S
from yaniv_env.encoding import action_table


def _rng(seed: int) -> np.ndarray:
    return np.array([E.seed_rng(seed)], dtype=np.uint64)


def _hand(row: np.ndarray, seat: int) -> list[int]:
    at = L.HAND + seat * L.HAND_ROOM
    return [int(c) for c in row[at : at + row[L.HAND_LEN + seat]]]


# ------------------------------------------------------------------------------------------------
# Hand values and the rollout policy: the reference's floats and moves
# ------------------------------------------------------------------------------------------------

COMBINATIONS = [
    # (why, rule set, cards, the most points of one set or run)
    ("no set or run", "default", "KS 2H 9D", 0),
    ("a pair", "default", "9H 9S 2D", 18),
    ("three of a kind beats a run of lower cards", "default", "8H 8S 8D 2C 3C 4C", 24),
    ("a run of three", "default", "4H 5H 6H KS", 15),
    ("the longest run is not the richest: its best part is", "default", "9H 10H JH QH", 39),
    ("a joker fills a gap", "default", "4H 6H JK1", 10),
    ("two jokers fill two gaps", "default", "4H 7H JK1 JK2", 11),
    ("one joker cannot fill two gaps", "default", "4H 7H JK1", 0),
    ("a lone natural and two jokers make a run", "default", "KH JK1 JK2", 10),
    ("a run with jokers needs room: the ace is low", "default", "AH 2H JK1", 3),
    ("jokers do not pair a natural unless the rules say so", "default", "KH JK1", 0),
    ("wild sets: a joker pairs a natural", "wild_sets", "KH JK1", 10),
    ("wild sets: a pair and a joker", "wild_sets", "KH KS JK1", 20),
]


@pytest.mark.parametrize("why, rules, cards, points", COMBINATIONS, ids=[c[0] for c in COMBINATIONS])
def test_best_combination_scenarios(why, rules, cards, points):
    row = L.new_rows(1)[0]
    L.write_rules(row, RULE_SETS[rules])
    mask = sum(1 << c for c in parse_cards(cards))
    assert S.hand_parts(row, mask)[1] == points


def test_hand_values_and_rollout_moves_are_the_reference_ones():
    """``relief`` and ``combines`` give the heuristic's floats, ``rollout_move`` RolloutPolicy's move,
    on positions of random play of every rule set, 2 and 3 players."""
    params = S.search_params()
    discards = np.empty(L.MAX_DISCARDS, dtype=np.int64)
    rng = np.random.default_rng(0)
    checked = 0
    for name, rules in RULE_SETS.items():
        policy = RolloutPolicy()
        table = action_table(rules.hand_size)
        for players in (2, 3):
            values = None
            for game in positions(rules, players, 80, seed=7):
                row = L.from_game(game)
                if values is None:
                    values = S.deck_values(row, params)
                for hand in game.hands:
                    mask = sum(1 << c for c in hand)
                    for gammas in ((0.8, 0.8), (0.5, 0.9)):
                        assert S.relief(row, mask, *gammas) == reference_relief(hand, rules, gammas), (name, hand)
                    card = int(rng.integers(52 + rules.jokers))
                    if card not in hand:
                        assert S.combines(card, mask) == _combines(card, hand), (name, card, hand)
                expected = table.to_action(policy.move(game), game.view(game.current))
                assert S.rollout_move(row, params, values, discards) == expected, (name, players, game)
                checked += 1
    assert checked == 2 * 80 * len(RULE_SETS)


def test_candidates_are_the_reference_candidates():
    """The heuristic's top four and Yaniv where the reference puts it, cut to ``budget // 4``."""
    ranking = B.heuristic_params(call_risk=S.CALL_RISK)
    out = np.empty(S.MAX_CANDIDATES, dtype=np.int64)
    games = heuristic_positions(2, 12) + heuristic_positions(3, 4) + heuristic_positions(2, 4, rules="slamdown")
    for budget in (128, 8):
        agent = SearchAgent(seed=0, budget=budget)
        params = S.search_params(budget)
        for game in games:
            view = game.view(game.current)
            table = action_table(game.rules.hand_size)
            expected = [table.to_action(m, view) for m in agent.candidates(view)[: max(2, budget // 4)]]
            k = S.candidates(L.from_game(game), params, ranking, out)
            assert list(out[:k]) == expected


# ------------------------------------------------------------------------------------------------
# Samples
# ------------------------------------------------------------------------------------------------


def _check_sample(row: np.ndarray, sample: np.ndarray, seat: int) -> None:
    n = int(row[L.PLAYERS])
    size = 52 + int(row[L.R_JOKERS])
    held = []
    for q in range(n):
        hand = _hand(sample, q)
        held += hand
        assert len(hand) == row[L.HAND_LEN + q], "hand sizes are public"
        assert hand == sorted(hand, key=lambda c: L.CARD_KEY[c]), "hands lie in hand order"
        assert sample[L.TOTAL + q] == sum(L.CARD_POINTS[c] for c in hand)
        assert {c for c in range(size) if row[L.KNOWN + c] == q} <= set(hand), "known cards stay where seen"
        if q != seat and row[L.ALIVE + q]:
            true_hidden = sorted(row[L.EPOCH + c] for c in _hand(row, q) if row[L.KNOWN + c] != q)
            hidden = sorted(sample[L.EPOCH + c] for c in hand if sample[L.KNOWN + c] != q)
            assert hidden == true_hidden, "each hidden card came from the deck of its epoch"
    assert _hand(sample, seat) == _hand(row, seat), "the seat's own hand"
    deck = [int(c) for c in sample[L.DECK : L.DECK + sample[L.DECK_LEN]]]
    assert len(deck) == row[L.DECK_LEN]
    assert all(sample[L.EPOCH + c] == sample[L.POOLS] for c in deck), "the deck holds the current epoch"
    pile = [c for c in range(L.NUM_CARDS) if sample[L.DEAD + c]]
    pile += [int(c) for c in sample[L.TOP : L.TOP + sample[L.TOP_LEN]]]
    assert sorted(held + deck + pile) == list(range(size)), "every card exactly once"
    public = np.ones(L.WIDTH, dtype=bool)  # every field but the hidden cards' places is the row's
    for at, width in ((L.HAND, L.MAX_SEATS * L.HAND_ROOM), (L.TOTAL, L.MAX_SEATS), (L.DECK, L.NUM_CARDS),
                      (L.PENDING, 1), (L.SINGLE_ROUND, 1)):
        public[at : at + width] = False
    assert (sample[public] == row[public]).all()
    assert sample[L.SINGLE_ROUND] == 1
    if row[L.PHASE] == L.PHASE_SLAMDOWN:
        pending = int(sample[L.PENDING])
        assert pending in _hand(sample, int(row[L.CURRENT])) and E.slamdown_extends(sample, pending)
        if row[L.CURRENT] == seat:
            assert pending == row[L.PENDING]
        assert sample[L.EPOCH + pending] == row[L.EPOCH + row[L.PENDING]]


def test_samples_keep_everything_the_view_shows():
    r = _rng(1)
    others_pending = 0
    for name, rules, players in tables(players=(2, 3, 4)):
        for game in positions(rules, players, 20, seed=3):
            row = L.from_game(game)
            for seat in range(players):
                if not game.alive[seat]:
                    continue
                for rho in (1.0, 0.35):
                    _check_sample(row, S.sample_view(row, seat, r, rho, 3), seat)
                others_pending += row[L.PHASE] == L.PHASE_SLAMDOWN and seat != row[L.CURRENT]
    assert others_pending > 10, "another seat's pending slamdown card was sampled"


def test_samples_follow_the_reference_distribution():
    """Over many samples, an opponent's mean total and each card's chance to be in its hand are
    those of ``informed_sample`` (different generators: equal within the sampling noise)."""
    agent = HeuristicAgent()
    r = _rng(5)
    rng = np.random.default_rng(0)
    count = 1500
    for deal, turns in ((1, 5), (4, 8)):
        game = Game(2, seed=deal, single_round=True)
        for _ in range(turns):
            game.apply(agent.act(game.view(game.current)))
        seat, other = game.current, 1 - game.current
        view, row = game.view(seat), L.from_game(game)
        ours, theirs = np.zeros(L.NUM_CARDS), np.zeros(L.NUM_CARDS)
        our_totals, their_totals = [], []
        for _ in range(count):
            sample = S.sample_view(row, seat, r, 0.35, 3)
            ours[_hand(sample, other)] += 1
            our_totals.append(sample[L.TOTAL + other])
            reference = informed_sample(view, rng, 0.35)
            theirs[reference.hands[other]] += 1
            their_totals.append(reference.totals[other])
        noise = np.sqrt((np.var(our_totals) + np.var(their_totals)) / count)
        assert abs(np.mean(our_totals) - np.mean(their_totals)) < 4 * noise
        assert np.abs(ours - theirs).max() / count < 0.06
        uniform = [S.sample_view(row, seat, r, 1.0, 3)[L.TOTAL + other] for _ in range(count)]
        assert np.mean(uniform) > np.mean(our_totals) + 4 * noise, "the informed deal gives opponents lower hands"


# ------------------------------------------------------------------------------------------------
# The score of a game of one round: the placing
# ------------------------------------------------------------------------------------------------

PLACINGS = [
    # (why, keys by seat (lower ahead), seat, its placing)
    ("heads-up, ahead", [(0, 3), (1, 9)], 0, 1.0),
    ("heads-up, behind", [(0, 3), (1, 9)], 1, -1.0),
    ("heads-up, level", [(5,), (5,)], 1, 0.0),
    ("three seats, second", [(4,), (2,), (9,)], 0, 0.0),
    ("three seats, last", [(4,), (2,), (9,)], 2, -1.0),
    ("three seats, two tied first share 1 and 0", [(2,), (2,), (9,)], 1, 0.5),
    ("four seats, two tied second share 1/3 and -1/3", [(1,), (6,), (6,), (8,)], 2, 0.0),
    ("four seats, all tied", [(0,)] * 4, 3, 0.0),
]


@pytest.mark.parametrize("why, keys, seat, value", PLACINGS, ids=[c[0] for c in PLACINGS])
def test_placing_scenarios(why, keys, seat, value):
    assert placing(keys, seat) == pytest.approx(value)


def _one_round_positions(players: int, games: int, seed: int) -> list[Game]:
    """Every position of ``games`` games of one round without jokers played by the heuristic, each
    game's finished position last."""
    rules = RULE_SETS["default"].replace(jokers=0, game_end="one_round")
    agent = HeuristicAgent()
    out = []
    for i in range(games):
        game = Game(players, rules, seed=seed + i)
        out.append(game.copy())
        while not game.is_over:
            game.apply(agent.act(game.view(game.current)))
            out.append(game.copy())
    return out


def test_placings_are_the_reference_ones_and_the_rank_reward():
    """The compiled ``placing`` of every seat is the reference's: by the totals as they lie during
    the round, and, once it is over, by the final ranking, which is then the game's rank reward
    (``yaniv_env.aec.rank_rewards``) and ``batch.rank_reward``."""
    finished = 0
    for players in (2, 3, 5):
        for game in _one_round_positions(players, 12, seed=40 + players):
            row = L.from_game(game)
            over = game.is_over
            keys = standing_keys(game) if over else [(total,) for total in game.totals]
            rewards = ranks_rewards(final_ranks(game)) if over else None
            for seat in range(players):
                expected = placing(keys, seat)
                assert S.placing(row, seat, over) == pytest.approx(expected), (players, seat, game)
                if over:
                    assert expected == pytest.approx(rewards[seat])
                    assert BT.rank_reward(row, seat) == pytest.approx(expected)
            finished += over
    assert finished == 36


def test_the_reference_scores_a_game_of_one_round_by_its_placing():
    """The same heads-up positions, each candidate on the same samples: as a game of one round,
    mean placings (within [-1, 1], not all level); as a round of a longer game, points (some mean
    beyond 1)."""
    spread, largest = 0.0, 0.0
    for game in _one_round_positions(2, 3, seed=7)[:-1:3]:
        view = game.view(game.current)
        cands = SearchAgent(seed=0).candidates(view)[:3]
        if game.is_over or len(cands) < 2:
            continue
        one_round = SearchAgent(seed=1, budget=16).evaluate(view, cands, samples=8)
        assert all(-1.0 <= v <= 1.0 for v in one_round)
        spread = max(spread, max(one_round) - min(one_round))
        longer = dataclasses.replace(view, rules=view.rules.replace(game_end="elimination"))
        largest = max(largest, *(abs(v) for v in SearchAgent(seed=1, budget=16).evaluate(longer, cands, samples=8)))
    assert spread > 0 and largest > 1


def test_the_compiled_playouts_score_a_game_of_one_round_by_its_placing():
    """The compiled rollouts of the same positions and moves: placings in a game of one round
    (heads-up: -1, 0 or 1), points when the same row is a round of a longer game."""
    params = S.search_params()
    streams, lengths = np.empty((L.MAX_SEATS, L.NUM_CARDS), dtype=np.int64), np.zeros(L.MAX_SEATS, dtype=np.int64)
    out, buf = np.empty(1024, dtype=np.int64), np.empty(L.MAX_DISCARDS, dtype=np.int64)
    one_round, longer = set(), set()
    for game in _one_round_positions(2, 4, seed=3)[:-1]:
        if game.is_over:
            continue
        row = L.from_game(game)
        values = S.deck_values(row, params)
        S._streams(row, streams, lengths)
        for action in out[: E.legal_actions(row, out, buf)][:4]:
            one_round.add(S._playout(row, row[L.CURRENT], row, 5, action, params, values, streams, lengths,
                                     S._scratch()))
            as_round = row.copy()
            as_round[L.R_GAME_END] = 0  # elimination
            longer.add(S._playout(as_round, row[L.CURRENT], as_round, 5, action, params, values, streams, lengths,
                                  S._scratch()))
    assert one_round <= {-1.0, 0.0, 1.0} and len(one_round) >= 2
    assert max(abs(v) for v in longer) > 1


# ------------------------------------------------------------------------------------------------
# The search
# ------------------------------------------------------------------------------------------------


def test_search_is_deterministic_given_its_seed():
    params = S.search_params(32)
    ranking = B.heuristic_params(call_risk=S.CALL_RISK)
    rows = [L.from_game(g) for g in heuristic_positions(2, 3)]
    runs = []
    for _ in range(2):
        r = _rng(11)
        runs.append([S.search_action(row, r, params, ranking) for row in rows] + [int(r[0])])
    assert runs[0] == runs[1]


def test_search_plays_legal_moves():
    """Every table of 2 to 4 players at a small budget, and heads-up at the default budget; the
    row searched is never changed."""
    ranking = B.heuristic_params(call_risk=S.CALL_RISK)
    r = _rng(2)
    out = np.empty(1024, dtype=np.int64)
    buf = np.empty(L.MAX_DISCARDS, dtype=np.int64)
    small = S.search_params(12)
    cases = [(small, g) for _, rules, n in tables(players=(2, 3, 4)) for g in positions(rules, n, 6, seed=5)]
    cases += [(S.search_params(), g) for g in heuristic_positions(2, 3)]
    for params, game in cases:
        if game.is_over:
            continue
        row = L.from_game(game)
        before = row.copy()
        action = S.search_action(row, r, params, ranking)
        assert (row == before).all()
        k = E.legal_actions(row, out, buf)
        assert action in out[:k]


def test_slamdown_phase():
    """In its own slamdown phase the search weighs slamming against keeping, the heuristic's answer first."""
    rules = RULE_SETS["slamdown"]
    ranking = B.heuristic_params(call_risk=S.CALL_RISK)
    params = S.search_params()
    _, slam, keep = E.action_ids(rules.hand_size)
    out = np.empty(S.MAX_CANDIDATES, dtype=np.int64)
    buf = np.empty(B.SCRATCH, dtype=np.int64)
    r = _rng(3)
    found = 0
    for game in positions(rules, 2, 400, seed=9):
        row = L.from_game(game)
        if row[L.PHASE] != L.PHASE_SLAMDOWN:
            continue
        found += 1
        assert S.candidates(row, params, ranking, out) == 2
        assert out[0] == B.heuristic_slamdown(row, ranking, buf) and {out[0], out[1]} == {slam, keep}
        assert S.search_action(row, r, params, ranking) in (slam, keep)
    assert found >= 5


def test_a_small_match_against_the_heuristic():
    """Duplicate single rounds heads-up (each deal twice, seats swapped): every round ends."""
    params = S.search_params(32)
    ranking = B.heuristic_params(call_risk=S.CALL_RISK)
    baseline = B.heuristic_params()
    buf = np.empty(max(B.SCRATCH, L.MAX_DISCARDS), dtype=np.int64)
    margin = 0.0
    for deal in range(20):
        start = L.from_game(Game(2, seed=deal, single_round=True))
        for seat in (0, 1):
            s, r, bot = start.copy(), _rng(deal), _rng(1000 + 2 * deal + seat)
            for _ in range(500):
                if s[L.CURRENT] == seat:
                    action = S.search_action(s, bot, params, ranking)
                else:
                    action = B.heuristic_action(s, baseline, buf)
                assert E.apply_action(s, r, action, buf) != E.ILLEGAL
                if s[L.PHASE] == L.PHASE_OVER:
                    break
            assert s[L.PHASE] == L.PHASE_OVER
            margin += s[L.RES_POINTS + 1 - seat] - s[L.RES_POINTS + seat]
    assert np.isfinite(margin)


def test_search_params_refuse_bad_settings():
    for bad in (dict(budget=0), dict(budget=1.5), dict(top_k=0), dict(top_k=S.MAX_CANDIDATES), dict(rho=0.0),
                dict(sweeps=-1), dict(rollout_turns=0)):
        with pytest.raises(ValueError):
            S.search_params(**bad)


def test_settings_parse_from_key_value_strings_and_bad_ones_are_named():
    assert S.parse_settings(["rollout_turns=6", "rho=0.2", "sweeps=0"]) == {"rollout_turns": 6, "rho": 0.2, "sweeps": 0}
    assert S.parse_settings([]) == {}
    for bad, named in (("rollout_turns", "KEY=VALUE"), ("budget=8", "KEY one of"), ("rollout_turns=6.5", "an integer"),
                       ("rho=high", "a number"), ("confidence=nan", "finite"), ("rho=1.5", "rho must be in"),
                       ("rollout_turns=0", "rollout_turns must be")):
        with pytest.raises(ValueError, match=named):
            S.parse_settings([bad])
