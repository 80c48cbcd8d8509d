"""The planner (agents.policies.planner): its candidates, its two forms against each other, the
compiled batch kernel against the single one, and its spec."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.policies.onnx import ExportedPolicy, default_bot_dir
from agents.policies.planner import MAX_PLAN_CANDIDATES, PlannerAgent, plan_candidates, policy_candidates
from agents.policies.ppo import PPOAgent
from agents.policies.stall import STALL_TURNS
from agents.registry import check_spec
from agents.tournament import run_tournament
from tests.core_support import heuristic_positions
from yaniv import Game
from yaniv_env.core import engine as E
from yaniv_env.core import layout as L
from yaniv_env.core import search as S
from yaniv_env.core.batch import SCRATCH, mask_games, observe_games
from yaniv_env.encoding import action_table, observation_size

NEG = -np.inf

# (why, logits, legal, yaniv id, top_k, budget, the candidates)
CANDIDATES = [
    ("the best first, the top k", [0.1, 3.0, 2.0, 1.0, 0.5], [1, 1, 1, 1, 0], 4, 2, 256, [1, 2]),
    ("illegal actions are never candidates", [9.0, 3.0, 2.0, 8.0, 0.5], [0, 1, 1, 0, 1], 4, 3, 256, [1, 2, 4]),
    ("Yaniv added when legal and not in the top k", [5.0, 3.0, 2.0, 1.0, 0.5], [1, 1, 1, 0, 1], 4, 2, 256, [0, 1, 4]),
    ("Yaniv not twice when the network ranks it", [0.0, 3.0, 2.0, 1.0, 4.0], [1, 1, 1, 0, 1], 4, 2, 256, [4, 1]),
    ("fewer legal moves than k", [0.0, 3.0, 2.0, 1.0, 0.5], [0, 1, 0, 0, 0], 4, 4, 256, [1]),
    ("a lone legal move and Yaniv", [0.0, 3.0, 2.0, 1.0, 0.5], [0, 1, 0, 0, 1], 4, 4, 256, [1, 4]),
    ("ties go to the lower action id", [1.0, 1.0, 1.0, 1.0, 0.0], [1, 1, 1, 1, 0], 4, 2, 256, [0, 1]),
    ("a small budget compares fewer (budget // 4)", [5.0, 4.0, 3.0, 2.0, 1.0], [1, 1, 1, 1, 1], 4, 4, 12, [0, 1, 2]),
    ("but always two", [5.0, 4.0, 3.0, 2.0, 1.0], [1, 1, 1, 1, 1], 4, 4, 1, [0, 1]),
]


@pytest.mark.parametrize("why, logits, legal, yaniv, top_k, budget, expected", CANDIDATES, ids=[c[0] for c in CANDIDATES])
def test_candidate_scenarios(why, logits, legal, yaniv, top_k, budget, expected):
    legal = np.array([legal], dtype=bool)
    logits = np.where(legal, np.array([logits], dtype=np.float32), NEG)
    cands, counts = plan_candidates(logits, legal, yaniv, top_k, budget)
    assert cands.shape == (1, MAX_PLAN_CANDIDATES)
    assert list(cands[0, : counts[0]]) == expected


def test_candidates_of_a_batch_are_each_row_s():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(50, 9)).astype(np.float32)
    legal = rng.random((50, 9)) < 0.4
    legal[np.arange(50), rng.integers(0, 9, 50)] = True
    batch = plan_candidates(logits, legal, 8, 3, 256)
    for i in range(50):
        one = plan_candidates(logits[i : i + 1], legal[i : i + 1], 8, 3, 256)
        assert list(one[0][0, : one[1][0]]) == list(batch[0][i, : batch[1][i]])


def test_top_k_is_bounded():
    with pytest.raises(ValueError, match="top_k"):
        plan_candidates(np.zeros((1, 4)), np.ones((1, 4), dtype=bool), 3, MAX_PLAN_CANDIDATES, 256)


# ------------------------------------------------------------------------------------------------
# The shipped bot's planner on real positions
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    return ExportedPolicy(default_bot_dir())


def _core_candidates(policy, game: Game) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The core form's candidates of ``game``'s position, from the batched observation and mask
    the tournament builds: ``(cands, counts, row)``."""
    table = action_table(game.rules.hand_size)
    rows = L.from_game(game)[None, :]
    obs = np.zeros((1, observation_size(game.rules.hand_size)), dtype=np.float32)
    masks = np.zeros((1, table.size), dtype=np.int8)
    buf = np.empty(SCRATCH, dtype=np.int64)
    observe_games(rows, np.zeros(1, dtype=np.int64), rows[:, L.CURRENT].copy(), obs, buf)
    mask_games(rows, np.zeros(1, dtype=np.int64), masks, buf)
    cands, counts = policy_candidates(policy, obs, masks, table.yaniv)
    return cands, counts, rows[0]


def test_both_forms_search_the_same_candidates(shipped):
    """The Python form's candidates (from the view) are the core's (from the row: the batched
    observation and mask the tournament builds), at 2 and 3 seats and in slamdown phases."""
    games = heuristic_positions(2, 6) + heuristic_positions(3, 3) + heuristic_positions(2, 12, rules="slamdown")
    planner = PlannerAgent(shipped, seed=0)
    slamdowns = 0
    for game in games:
        view = game.view(game.current)
        table = action_table(game.rules.hand_size)
        python = [table.to_action(m, view) for m in planner.candidates(view)]
        cands, counts, row = _core_candidates(shipped, game)
        assert python == list(cands[0, : counts[0]])
        assert python[0] == table.to_action(PPOAgent(shipped).act(view), view)
        slamdowns += row[L.PHASE] == L.PHASE_SLAMDOWN
    assert slamdowns >= 3


def test_past_the_stall_turn_the_planner_is_its_network(shipped):
    """Once a round has run 100 turns both forms keep one candidate, the network's move (the stall
    rule applied), in slamdowns too: the planner's loop guarantee is the network's."""
    games = heuristic_positions(2, 3) + heuristic_positions(3, 2) + heuristic_positions(2, 12, rules="slamdown")
    planner, network = PlannerAgent(shipped, seed=0), PPOAgent(shipped)
    searched = slamdowns = 0
    for game in games:
        table = action_table(game.rules.hand_size)
        searched += len(planner.candidates(game.view(game.current))) > 1
        game = game.copy()
        game.turn = STALL_TURNS + 7
        view = game.view(game.current)
        assert planner.candidates(view) == [network.act(view)] and planner.act(view) == network.act(view)
        cands, counts, row = _core_candidates(shipped, game)
        assert counts[0] == 1 and cands[0, 0] == table.to_action(network.act(view), view)
        slamdowns += row[L.PHASE] == L.PHASE_SLAMDOWN
    assert searched > len(games) // 2 and slamdowns >= 3  # the same positions before the stall turn search


def test_the_network_s_move_stands_when_no_rollout_can_overrule_it(shipped):
    """With an unreachable confidence the planner plays its network's move, every time."""
    planner = PlannerAgent(shipped, seed=0, budget=16, confidence=1e9)
    network = PPOAgent(shipped)
    for game in heuristic_positions(2, 3) + heuristic_positions(4, 1):
        view = game.view(game.current)
        assert planner.act(view) == network.act(view)


def test_the_batched_kernel_is_choose_row_by_row(shipped):
    """``choose_games`` on a batch equals ``choose`` on each row with the same seat generators."""
    games = [g for g in heuristic_positions(2, 4) + heuristic_positions(3, 2) if not g.is_over]
    rows = np.array([L.from_game(g) for g in games])
    seats = rows[:, L.CURRENT].copy()
    buf = np.empty(SCRATCH, dtype=np.int64)
    table = action_table(5)
    obs = np.zeros((len(games), observation_size(5)), dtype=np.float32)
    masks = np.zeros((len(games), table.size), dtype=np.int8)
    index = np.arange(len(games), dtype=np.int64)
    observe_games(rows, index, seats, obs, buf)
    mask_games(rows, index, masks, buf)
    cands, counts = policy_candidates(shipped, obs, masks, table.yaniv, budget=32)
    params = S.search_params(32)
    A = np.array([[E.seed_rng(100 + g * 7 + q) for q in range(L.MAX_SEATS)] for g in range(len(games))], dtype=np.uint64)
    out = np.empty(len(games), dtype=np.int64)
    S.choose_games(rows, A.copy(), index, seats, cands, counts, params, out)
    for g in range(len(games)):
        r = A[g, seats[g] : seats[g] + 1].copy()
        expected = cands[g, 0] if counts[g] == 1 else cands[g, S.choose(rows[g], r, params, cands[g], counts[g])]
        assert out[g] == expected
        assert masks[g, out[g]]
    # The means beside the choice: the same choices on the same generators, 0 for the network's move,
    # NaN past the candidates, and an overrule only where the chosen move's mean is above the network's.
    chosen = np.empty(len(games), dtype=np.int64)
    means = np.empty((len(games), cands.shape[1]))
    S.choose_games_values(rows, A.copy(), index, seats, cands, counts, params, chosen, means)
    assert (chosen == out).all()
    assert (means[:, 0] == 0).all()
    for g in range(len(games)):
        assert np.isnan(means[g, counts[g]:]).all() and np.isfinite(means[g, :counts[g]]).all()
        k = int(np.flatnonzero(cands[g] == out[g])[0])
        assert k == 0 or means[g, k] == means[g, 1:counts[g]].max() > 0
    assert (chosen != cands[:, 0]).any() and (np.abs(means[counts > 1, 1]) > 0).mean() > 0.5


def test_the_planner_is_deterministic_given_its_seed_and_plays_legal_moves():
    """The Python form, whole games at 2 and 3 seats at a small budget: legal moves, the same game twice."""
    from agents import play_game

    for players in (2, 3):
        records = []
        for _ in range(2):
            agents = [make_agent("plan:8:default", seed=5)] + [make_agent("heuristic") for _ in range(players - 1)]
            game = play_game(Game(players, seed=3), agents)  # play_game refuses an illegal move
            records.append(list(game.events))
        assert records[0] == records[1]


def test_the_core_plays_the_planner_deterministically():
    """The compiled form in a tournament: the same seed, the same records; every round ends."""
    runs = [run_tournament(["plan:16:default", "heuristic"], 2, 8, seed=4, rounds=True, max_turns=500, workers=1,
                           progress=False, engine="core") for _ in range(2)]
    figures = [(r.agents[0].win_rate, r.agents[0].margin, r.rounds) for r in runs]
    assert figures[0] == figures[1]
    assert runs[0].capped_rounds == 0 and runs[0].agents[0].games == 8


@pytest.mark.parametrize("spec, problem", [
    ("plan", "needs a policy"),
    ("plan:", "needs a policy"),
    ("plan:0:default", "budget must be a whole number >= 1"),
    ("plan:7:", "needs a policy after the budget"),
    ("plan:heuristic", "'heuristic' is not a trained policy"),
    ("plan:64:search", "'search' is not a trained policy"),
    ("plan:no/such/policy.npz", "no policy file"),
])
def test_bad_plan_specs_are_refused_by_name(spec, problem):
    with pytest.raises(ValueError, match=problem):
        check_spec(spec)


def test_plan_specs():
    agent = make_agent("plan:default", seed=0)
    assert agent.budget == 256 and agent.name == "plan:default"
    assert make_agent("plan:64:default").budget == 64
