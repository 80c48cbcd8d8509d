"""The compiled baseline bots (``yaniv_env.core.bots``) choose the moves of the Python agents.

On positions of every table of ``core_support.tables()`` (every preset, the house-rule sets, 2 to 8
players; positions of random play and of heuristic play, full games so that scores matter), the
compiled greedy and heuristic (default settings; ``call_risk=0.1, score_weight=2``; a set changing
every setting) must pick the action id of ``table.to_action(agent.act(view), view)``, and the random
bot the k-th legal action. ``heuristic_rank`` must give ``rank_moves``' order and its exact floats.

One difference is allowed, and counted: ``HeuristicAgent._feed`` walks a ``frozenset`` of known
cards, whose order depends on the order they were taken, which a row does not hold (see the
``yaniv_env.core.bots`` docstring). A move may differ from the agent's only if the agent, given the
same cards in the port's order (``known_in_set_order``), plays the port's move.

``YANIV_LONG_TESTS=1`` runs the long sweep (over 100,000 positions) and prints its figures.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import time
from functools import lru_cache

import numpy as np
import pytest
from numba import njit

from agents.baselines import heuristic as H
from agents.baselines.greedy import GreedyAgent
from agents.baselines.heuristic import HeuristicAgent
from core_support import RULE_SETS, positions, tables
from yaniv.cards import NUM_RANKS, NUM_STANDARD, deck_cards
from yaniv.game import Game
from yaniv_env.core import bots as B
from yaniv_env.core import engine as E
from yaniv_env.core import layout as L
from yaniv_env.encoding import action_table

LONG = os.environ.get("YANIV_LONG_TESTS") == "1"

SETTINGS = {
    "default": {},
    "careful_scores": dict(call_risk=0.1, score_weight=2),
    "every_setting": dict(gamma=0.7, gamma_single=0.6, threat_scale=0.5, threat_size=3, call_risk=0.3,
                          feed_weights=(0.1, 0.4, 0.2, 0.1, 0.05), kept_high_weight=0.5, patience=4, impatience=0.08,
                          recycle_cost=3.0, score_weight=1.5),
}
assert set(SETTINGS["every_setting"]) == set(B.HEURISTIC_DEFAULTS)


def _spread(rules, players, count, stride, seed, mover=None):
    """``count`` positions of seeded full games, every ``stride``-th one (so they reach later rounds)."""
    for i, game in enumerate(positions(rules, players, count * stride, seed, mover=mover)):
        if i % stride == 0:
            yield game


def _heuristic_mover():
    agent = HeuristicAgent(call_risk=0.1, score_weight=2)
    return lambda game: agent.act(game.view(game.current))


def _each_position(per_table: int, seed: int, stride: int):
    """(rule set, players, game) for ``per_table`` random-play and as many heuristic-play positions
    per table, every ``stride``-th position of heuristic play (every 5th of random play)."""
    for name, rules, n in tables():
        for game in _spread(rules, n, per_table, 5, seed + n):
            yield name, n, game
        for game in _spread(rules, n, per_table, stride, seed + 100 + n, mover=_heuristic_mover()):
            yield name, n, game


@lru_cache(maxsize=None)
def _positions(per_table: int, seed: int, stride: int = 10) -> tuple[tuple[str, int, Game], ...]:
    return tuple(_each_position(per_table, seed, stride))


def _set_ordered_view(view, row):
    """``view`` with each seat's known cards in the port's order (a tuple instead of a frozenset)."""
    scratch = np.zeros(64, dtype=np.int64)
    out = np.zeros(16, dtype=np.int64)
    known = []
    for q in range(view.num_players):
        k = B.known_in_set_order(row, q, scratch, out)
        assert sorted(out[:k]) == sorted(view.known[q])
        known.append(tuple(int(c) for c in out[:k]))
    return dataclasses.replace(view, known=tuple(known))


class Tally:
    """Compares the compiled heuristic with the agent; counts the moves the set order explains."""

    def __init__(self) -> None:
        self.positions = 0
        self.set_order = 0
        self.examples: list[str] = []

    def check(self, agent: HeuristicAgent, params: np.ndarray, game: Game, buf: np.ndarray, label: str) -> None:
        view = game.view(game.current)
        table = action_table(game.rules.hand_size)
        row = L.from_game(game)
        got = int(B.heuristic_action(row, params, buf))
        want = table.to_action(agent.act(view), view)
        self.positions += 1
        if got == want:
            return
        ported = table.to_action(agent.act(_set_ordered_view(view, row)), view)
        assert got == ported, f"{label}: compiled {got}, Python {want} (with the port's set order {ported})"
        self.set_order += 1
        if len(self.examples) < 5:
            self.examples.append(f"{label}: known {[sorted(k) for k in view.known]}, compiled {got}, Python {want}")


# ------------------------------------------------------------------------------------------------
# The parameters
# ------------------------------------------------------------------------------------------------


def test_the_defaults_are_the_agents():
    signature = inspect.signature(HeuristicAgent.__init__)
    defaults = {name: p.default for name, p in signature.parameters.items() if p.kind == p.KEYWORD_ONLY}
    assert defaults == B.HEURISTIC_DEFAULTS
    assert B.OVER_LIMIT_COST == H.OVER_LIMIT_COST
    p = B.heuristic_params()
    assert p[B.P_FEED_LEN] == 4 and list(p[B.P_FEED : B.P_FEED + 4]) == [0.0, 0.3, 0.15, 0.0]


@pytest.mark.parametrize("settings, words", [
    (dict(gama=0.5), "'gama'"),
    (dict(feed_weights=(0.1,) * 9), "feed_weights holds at most 8"),
    (dict(gamma=-0.1), "gamma must not be negative"),
    (dict(threat_scale=float("nan")), "threat_scale must be a finite number"),
    (dict(call_risk="0.1"), "call_risk must be a finite number"),
    (dict(feed_weights=(0.1, None)), "feed_weights must hold finite numbers"),
])
def test_heuristic_params_refuses_by_name(settings, words):
    with pytest.raises(ValueError, match=words):
        B.heuristic_params(**settings)


# ------------------------------------------------------------------------------------------------
# The pieces: the best combination of a card, relief, the set order
# ------------------------------------------------------------------------------------------------


def _rule_rows():
    for name, rules in RULE_SETS.items():
        row = L.new_rows(1)[0]
        L.write_rules(row, rules)
        yield name, rules, row


def test_combo_points_match_python():
    rng = np.random.default_rng(1)
    for name, rules, row in _rule_rows():
        for _ in range(600):
            rank = int(rng.integers(NUM_RANKS))
            others = 0
            for r in rng.choice(NUM_RANKS, size=int(rng.integers(0, 7)), replace=False):
                if r != rank:
                    others |= 1 << int(r)
            same = int(rng.integers(0, 4))
            jokers = int(rng.integers(0, rules.jokers + 1))
            want = H._combo_points(others, rank, same, jokers, rules)
            assert B.combo_points(row, rank, others, same, jokers) == want, (name, rank, bin(others), same, jokers)


def test_hand_value_matches_python():
    rng = np.random.default_rng(2)
    gammas = [(0.8, 0.8), (0.36, 0.36), (0.6, 0.7), (0.0, 0.5)]
    cards = np.zeros(8, dtype=np.int64)
    for name, rules, row in _rule_rows():
        deck = deck_cards(rules.jokers)
        for _ in range(800):
            hand = sorted(int(c) for c in rng.choice(deck, size=int(rng.integers(0, rules.hand_size + 1)), replace=False))
            g1, gm = gammas[int(rng.integers(len(gammas)))]
            cards[: len(hand)] = hand
            want = H._hand_value(hand, rules, (g1, gm))
            assert B._hand_value(row, cards, len(hand), g1, gm) == want, (name, hand, g1, gm)


def test_known_in_set_order_is_cpythons():
    rng = np.random.default_rng(3)
    row = L.new_rows(1)[0]
    scratch = np.zeros(64, dtype=np.int64)
    out = np.zeros(16, dtype=np.int64)
    for _ in range(3000):
        cards = sorted(int(c) for c in rng.choice(NUM_STANDARD + 2, size=int(rng.integers(0, 8)), replace=False))
        row[L.KNOWN : L.KNOWN + L.NUM_CARDS] = -1
        seen: set[int] = set()
        for c in cards:  # taken in id order
            row[L.KNOWN + c] = 1
            seen.add(c)
        k = B.known_in_set_order(row, 1, scratch, out)
        assert list(out[:k]) == list(frozenset(seen)), cards


# ------------------------------------------------------------------------------------------------
# The bots against the agents
# ------------------------------------------------------------------------------------------------


def test_random_action_is_the_kth_legal_action():
    out = np.zeros(B.ACTION_ROOM, dtype=np.int64)
    buf = np.zeros(B.SCRATCH, dtype=np.int64)
    for i, (name, n, game) in enumerate(_positions(12, 0)):
        view = game.view(game.current)
        table = action_table(game.rules.hand_size)
        row = L.from_game(game)
        r = np.array([E.seed_rng(i)], dtype=np.uint64)
        twin = r.copy()
        k = E.below(twin, len(view.legal_moves))
        assert B.random_action(row, r, out, buf) == table.to_action(view.legal_moves[k], view), (name, n)
        assert r[0] == twin[0]


def test_greedy_matches_python():
    agent = GreedyAgent()
    buf = np.zeros(B.SCRATCH, dtype=np.int64)
    for name, n, game in _positions(12, 0):
        view = game.view(game.current)
        table = action_table(game.rules.hand_size)
        want = table.to_action(agent.act(view), view)
        assert B.greedy_action(L.from_game(game), buf) == want, (name, n, game.turn)


@pytest.mark.parametrize("label", list(SETTINGS))
def test_heuristic_matches_python(label):
    agent = HeuristicAgent(**SETTINGS[label])
    params = B.heuristic_params(**SETTINGS[label])
    buf = np.zeros(B.SCRATCH, dtype=np.int64)
    tally = Tally()
    for name, n, game in _positions(12, 0):
        tally.check(agent, params, game, buf, f"{label} {name} {n}p turn {game.turn}")
    assert tally.set_order <= tally.positions // 200, tally.examples


def test_heuristic_slamdown_matches_slamdown_choice():
    """On the slamdown decisions of random play, over a grid of gammas, so that keeping the drawn
    card wins in some positions."""
    buf = np.zeros(B.SCRATCH, dtype=np.int64)
    answers = set()
    checked = 0
    for name in ("slamdown", "wild_sets_ends", "run_jokers_slam"):
        for n in (2, 3, 4):
            for game in positions(RULE_SETS[name], n, 1500, seed=n):
                if game.phase != "slamdown":
                    continue
                view = game.view(game.current)
                table = action_table(game.rules.hand_size)
                row = L.from_game(game)
                for gamma in (0.0, 0.5, 0.8, 1.0, 1.5):
                    for gamma_single in (0.0, 0.4, 0.8, 1.2):
                        agent = HeuristicAgent(gamma=gamma, gamma_single=gamma_single)
                        params = B.heuristic_params(gamma=gamma, gamma_single=gamma_single)
                        want = table.to_action(agent.slamdown_choice(view), view)
                        assert B.heuristic_slamdown(row, params, buf) == want, (name, n, gamma, gamma_single)
                        answers.add(want - table.yaniv)
                checked += 1
    assert checked >= 200
    assert answers == {1, 2}  # both slam and keep were chosen somewhere


def test_heuristic_rank_is_rank_moves_to_the_float():
    buf = np.zeros(B.SCRATCH, dtype=np.int64)
    actions = np.zeros(B.ACTION_ROOM, dtype=np.int64)
    scores = np.zeros(B.ACTION_ROOM, dtype=np.float64)
    checked = 0
    for label, settings in SETTINGS.items():
        agent = HeuristicAgent(**settings)
        params = B.heuristic_params(**settings)
        for name, n, game in _positions(12, 0)[::3]:
            view = game.view(game.current)
            table = action_table(game.rules.hand_size)
            row = L.from_game(game)
            ported = _set_ordered_view(view, row)
            k = B.heuristic_rank(row, params, actions, scores, buf)
            if view.phase != "play":
                assert k == 0
                continue
            want = [(table.to_action(m, view), s) for s, m in agent.rank_moves(ported)]
            assert [(int(a), float(s)) for a, s in zip(actions[:k], scores[:k])] == want, (label, name, n)
            assert bool(B.heuristic_should_call(row, params, buf)) == (view.can_call_yaniv and agent.should_call(view))
            checked += 1
    assert checked > 1000


# ------------------------------------------------------------------------------------------------
# The long sweep (YANIV_LONG_TESTS=1)
# ------------------------------------------------------------------------------------------------


@njit
def _decide_all(rows, params, buf):
    acc = 0
    for g in range(rows.shape[0]):
        acc += B.heuristic_action(rows[g], params, buf)
    return acc


@pytest.mark.skipif(not LONG, reason="the long sweep runs with YANIV_LONG_TESTS=1")
def test_long_sweep():
    """Over 100,000 positions over every table: the moves, the set-order count, and the speed."""
    per_table = 100_000 // (2 * len(tables())) + 1
    greedy = GreedyAgent()
    buf = np.zeros(B.SCRATCH, dtype=np.int64)
    tallies = {label: Tally() for label in SETTINGS}
    agents = {label: HeuristicAgent(**s) for label, s in SETTINGS.items()}
    params = {label: B.heuristic_params(**s) for label, s in SETTINGS.items()}
    rows = []  # every 5th position's row, for the speed figure
    count = 0
    for name, n, game in _each_position(per_table, 1000, 4):
        view = game.view(game.current)
        table = action_table(game.rules.hand_size)
        row = L.from_game(game)
        assert B.greedy_action(row, buf) == table.to_action(greedy.act(view), view), (name, n)
        for label, tally in tallies.items():
            tally.check(agents[label], params[label], game, buf, f"{label} {name} {n}p turn {game.turn}")
        if count % 5 == 0:
            rows.append(row)
        count += 1
    assert count >= 100_000
    for label, tally in tallies.items():
        print(f"\n{label}: {tally.positions} positions, {tally.set_order} moves differ by the set order "
              f"({1e5 * tally.set_order / tally.positions:.1f} per 10^5)")
        for line in tally.examples:
            print("   ", line)
    rows = np.stack(rows)
    for label in ("default", "careful_scores"):
        _decide_all(rows[:10], params[label], buf)
        start = time.process_time()
        _decide_all(rows, params[label], buf)
        rate = len(rows) / (time.process_time() - start)
        print(f"{label}: {rate:,.0f} heuristic decisions/s (one core, CPU time, {len(rows)} rows)")
