"""Shared by the compiled core's differential tests: the rule sets and tables they sweep, the
positions they compare on, and the side-by-side player of the Python engine and the core.

``TABLES`` covers every preset, the house-rule settings, and 2 to 8 players. ``positions(...)``
plays seeded games with the Python engine and yields a copy of every position where a seat is
to move. ``SideBySide`` keeps a ``yaniv.Game`` and a core row in step: after each move the two
must hold the same state (``layout.position``); where a shuffle happens (a reshuffle, a new
deal), the cards are compared as sets and the Python game then adopts the core's order.
"""

from __future__ import annotations

import itertools

import numpy as np

from yaniv import Game, get_rules
from yaniv.game import OVER, RESHUFFLE
from yaniv.melds import Group, SINGLE
from yaniv.rules import Rules
from yaniv_env.core import engine as E
from yaniv_env.core import layout as L
from yaniv_env.encoding import action_table

HOUSE = {
    "slamdown": dict(slamdown=True),
    "wild_sets": dict(jokers_in_sets=True, min_set_with_jokers=2, max_set_size=5),
    "wild_sets_ends": dict(jokers_in_sets=True, max_set_size=6, draw_from_set="ends", slamdown=True),
    "run_jokers_slam": dict(draw_from_run="ends_and_jokers", slamdown=True, jokers_in_sets=True, min_set_with_jokers=4),
    "flat_subtract": dict(assaf_penalty="flat", score_reset="subtract", score_reset_at=(50, 100), score_limit=100,
                          next_round_starter="caller"),
    "strict_none": dict(assaf_on_equal=False, score_reset="none", game_end="first_over", next_round_starter="next_seat",
                        score_limit=100),
    "one_joker_7": dict(jokers=1, hand_size=7, yaniv_threshold=5, assaf_penalty="per_assafer"),
    "no_jokers_4": dict(jokers=0, hand_size=4, yaniv_threshold=7, assaf_penalty_points=20),
    "capped": dict(max_turns=9, score_limit=60, score_reset_at=(20, 40)),
    "one_round": dict(game_end="one_round", jokers=0, score_reset_at=(20, 40), score_limit=30),
}

RULE_SETS: dict[str, Rules] = {name: get_rules(name) for name in ("default", "french", "german")}
RULE_SETS.update({name: get_rules("default").replace(**changes) for name, changes in HOUSE.items()})


def tables(players=range(2, 9)) -> list[tuple[str, Rules, int]]:
    """(rule set name, rules, players) for every rule set and player count the deck can deal."""
    out = []
    for (name, rules), n in itertools.product(RULE_SETS.items(), players):
        if n * rules.hand_size + 1 <= 52 + rules.jokers:
            out.append((name, rules, n))
    return out


def random_mover(rng: np.random.Generator):
    def choose(game: Game):
        moves = game.legal_moves()
        return moves[int(rng.integers(len(moves)))]
    return choose


def positions(rules: Rules, players: int, count: int, seed: int, *, single_round: bool = False, mover=None):
    """Copies of ``count`` positions (a seat to move) from seeded games played by ``mover(game)``
    (default: uniformly random legal moves)."""
    rng = np.random.default_rng(seed)
    mover = mover or random_mover(rng)
    found = 0
    game_seed = seed * 1000
    while found < count:
        game = Game(players, rules, seed=game_seed, single_round=single_round)
        game_seed += 1
        turns = 0
        while not game.is_over and found < count and turns < 3000:
            yield game.copy()
            found += 1
            game.apply(mover(game))
            turns += 1


def heuristic_positions(players: int, rounds: int, seed: int = 0, rules: str = "default") -> list[Game]:
    """Every position of ``rounds`` single rounds (seeds ``seed``, ``seed + 1``, ...) of the baseline
    heuristic against itself, under ``RULE_SETS[rules]``: realistic positions, not random ones."""
    from agents.baselines.heuristic import HeuristicAgent

    agent = HeuristicAgent()
    out = []
    for i in range(rounds):
        game = Game(players, RULE_SETS[rules], seed=seed + i, single_round=True)
        while not game.is_over:
            out.append(game.copy())
            game.apply(agent.act(game.view(game.current)))
    return out


class SideBySide:
    """A Python ``Game`` and a core row, moved together; ``check()`` compares them."""

    def __init__(self, game: Game, seed: int) -> None:
        self.game = game
        self.row = L.from_game(game)
        self.r = np.array([E.seed_rng(seed)], dtype=np.uint64)
        self.buf = np.zeros(L.MAX_DISCARDS, dtype=np.int64)
        self.out = np.zeros(1024, dtype=np.int64)
        self.table = action_table(game.rules.hand_size)

    def legal_actions(self) -> tuple[list[int], list[int]]:
        """(the Python engine's legal moves as action ids in order, the core's)."""
        game = self.game
        view = game.view(game.current)
        python = [self.table.to_action(m, view) for m in view.legal_moves]
        k = E.legal_actions(self.row, self.out, self.buf)
        return python, [int(a) for a in self.out[:k]]

    def apply(self, action: int) -> int:
        game = self.game
        move = self.table.to_move(action, game.view(game.current))
        rounds = len(game.results)
        code = E.apply_action(self.row, self.r, action, self.buf)
        game.apply(move)
        if len(game.results) > rounds and not game.is_over:
            # a new deal: compare the finished round, then deal the core's cards into the Python game
            self._compare(skip_round=True)
            self._adopt_deal()
        elif game.events and game.events[-1].kind == RESHUFFLE or (len(game.events) > 1 and game.events[-2].kind == RESHUFFLE):
            core_deck = [int(c) for c in self.row[L.DECK : L.DECK + self.row[L.DECK_LEN]]]
            assert sorted(core_deck) == sorted(game.deck), "the reshuffle gathered other cards"
            game.deck = core_deck
        return code

    def _adopt_deal(self) -> None:
        game, row = self.game, self.row
        n = game.num_players
        hands = [[int(c) for c in row[L.HAND + q * L.HAND_ROOM : L.HAND + q * L.HAND_ROOM + row[L.HAND_LEN + q]]]
                 for q in range(n)]
        assert [len(h) for h in hands] == [len(h) for h in game.hands], "the deals give other hand sizes"
        game.hands = hands
        game.totals = [int(row[L.TOTAL + q]) for q in range(n)]
        game.deck = [int(c) for c in row[L.DECK : L.DECK + row[L.DECK_LEN]]]
        face_up = int(row[L.TOP])
        game.pile = [Group((face_up,), SINGLE, -1, (face_up,))]
        game._views = {}
        game._discards = None

    def _compare(self, skip_round: bool = False) -> None:
        mine = L.position(self.row)
        theirs = L.position(L.from_game(self.game))
        if skip_round:  # the next round's cards come from two different generators
            for key in ("hands", "totals", "deck", "dead", "top", "top_kind", "top_player", "drawable", "known"):
                mine.pop(key)
                theirs.pop(key)
        assert mine == theirs, _diff(mine, theirs)

    def check(self) -> None:
        self._compare()
        if self.game.phase == OVER:
            assert self.row[L.PHASE] == L.PHASE_OVER


def _diff(a: dict, b: dict) -> str:
    return "; ".join(f"{k}: core {a[k]!r} != python {b.get(k)!r}" for k in a if a[k] != b.get(k))
