"""Tournaments on the compiled core (``agents.tournament.compiled``): the engine choice, records of the
Python path's shape, agreement with the Python path in distribution, duplicate deals, determinism,
policies in batched forward passes, and the errors named as on the Python path."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from agents.base import SeededAgent
from agents.tournament import GameRecord, plan_tournament, run_tournament
from agents.tournament import compiled
from yaniv import get_rules
from yaniv_env.core.layout import HAND, HAND_LEN, HAND_ROOM
from yaniv_env.encoding import observation_size

QUIET = dict(workers=1, progress=False)


def tiny_policy(path, seed: int = 0, hidden: int = 8):
    """A random two-layer policy for the default rules, saved as ppo weights (.npz)."""
    from agents.policies.ppo import NumpyPolicy
    from yaniv_env.encoding import Observer

    observer = Observer(get_rules("default"), 2)
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=(hidden, observer.size)), rng.normal(size=(observer.table.size, hidden))]
    NumpyPolicy(weights, [np.zeros(hidden), np.zeros(observer.table.size)], "tanh").save(path)
    return path


class Objecty(SeededAgent):
    name = "objecty"

    def act(self, view):
        return view.legal_moves[0]


# ----------------------------------------------------------------------------------------------
# The engine choice
# ----------------------------------------------------------------------------------------------


def test_auto_picks_the_core_when_every_agent_has_a_compiled_form(tmp_path):
    policy = tiny_policy(tmp_path / "p.npz")
    for specs in (["random", "greedy"], ["heuristic:call_risk=0.1", f"ppo:{policy}"], ["default", "search:8"]):
        plan = plan_tournament(specs, num_players=2, games=2, rounds=True)
        assert plan.engine == "core", specs
        assert plan.describe().endswith("on the compiled core")
    assert plan_tournament(["random", "greedy"], 2, 2, engine="python").engine == "python"
    assert plan_tournament([Objecty(), "greedy"], 2, 2).engine == "python"


def test_a_ppo_agent_object_plays_on_the_core_as_its_weights_file_does(tmp_path):
    """What a training run evaluates: a PPOAgent (best move) has a batched form, and gives the figures
    of ``ppo:PATH`` for the same weights; one that samples stays on the Python engine."""
    from agents.policies.ppo import NumpyPolicy, PPOAgent

    path = tiny_policy(tmp_path / "p.npz")
    agent = PPOAgent(NumpyPolicy.load(path), name="learner")
    plan = plan_tournament([agent, "heuristic"], 2, 16, seed=3, rounds=True)
    assert plan.engine == "core"
    by_object = plan.run(workers=1, progress=False).to_dict(include_timing=False)
    by_file = run_tournament([f"ppo:{path}", "heuristic"], 2, 16, seed=3, rounds=True, workers=1,
                             progress=False).to_dict(include_timing=False)
    assert by_object["agents"][0]["games"] == 16
    for a, b in zip(by_object["agents"], by_file["agents"]):
        names = ("agent", "spec")
        assert {k: v for k, v in a.items() if k not in names} == {k: v for k, v in b.items() if k not in names}
    assert plan_tournament([PPOAgent(NumpyPolicy.load(path), sample=True), "heuristic"], 2, 2).engine == "python"
    with pytest.raises(ValueError, match=f"takes {observation_size(5)} observations"):
        agent.act_batch(np.zeros((2, 5), np.float32), np.ones((2, 189), np.int8))


def test_engine_core_refuses_an_agent_without_a_compiled_form_by_name():
    from agents.registry import register, unregister

    with pytest.raises(ValueError, match="engine 'core': agent 'objecty' is an agent object without act_batch"):
        plan_tournament([Objecty(), "greedy"], 2, 2, engine="core")
    register("firstmove", lambda spec, seed: Objecty(seed), help="the first legal move")
    try:
        assert plan_tournament(["firstmove", "greedy"], 2, 2).engine == "python"
        with pytest.raises(ValueError, match="engine 'core': agent 'firstmove' has no compiled form"):
            plan_tournament(["firstmove", "greedy"], 2, 2, engine="core")
    finally:
        unregister("firstmove")
    with pytest.raises(ValueError, match="engine must be one of 'auto', 'core', 'python', got 'gpu'"):
        plan_tournament(["random", "greedy"], 2, 2, engine="gpu")


def test_evaluate_cli_takes_the_engine(tmp_path):
    from tests.test_evaluate import run_main

    args = ["--agents", "greedy", "random", "--games", "2", "--rounds", "--workers", "1", "--no-progress"]
    code, stdout, stderr = run_main(*args, "--out", str(tmp_path / "a"))
    assert code == 0 and "on the compiled core" in stdout, stderr
    code, stdout, stderr = run_main(*args, "--engine", "python", "--out", str(tmp_path / "b"))
    assert code == 0 and "on the Python engine" in stdout, stderr
    code, stdout, stderr = run_main(*args, "--engine", "gpu", "--out", str(tmp_path / "c"))
    assert code == 2 and "--engine" in stderr and not (tmp_path / "c").exists()


# ----------------------------------------------------------------------------------------------
# Records and agreement with the Python path
# ----------------------------------------------------------------------------------------------


def check_record(record: GameRecord, n: int, rounds_mode: bool) -> None:
    for name, value in record._asdict().items():
        if isinstance(value, tuple):
            assert len(value) == n, name
    assert all(type(x) is int for x in record.ranks + record.scores + record.points + record.moves + record.calls)
    assert all(type(x) is float and x >= 0 for x in record.seconds)
    assert sorted(record.ranks)[0] == 0 and max(record.ranks) < n
    wins = sum(record.win_shares)
    assert wins == pytest.approx(1.0) or (wins == 0 and record.capped)
    assert sum(record.calls) + record.capped == record.rounds
    assert all(a <= c for a, c in zip(record.assafed, record.calls))
    assert all(0 < r <= record.rounds for r in record.alive_rounds)
    assert sum(record.moves) >= record.turns > 0
    if rounds_mode:
        assert record.rounds == 1


@pytest.mark.parametrize("rounds_mode", [False, True])
def test_the_core_gives_records_of_the_python_shape(rounds_mode):
    specs = ["heuristic", "greedy", "random"]
    core = run_tournament(specs, 3, 6, seed=2, rounds=rounds_mode, keep_records=True, engine="core", **QUIET)
    python = run_tournament(specs, 3, 6, seed=2, rounds=rounds_mode, keep_records=True, engine="python", **QUIET)
    for a, b in zip(core.records, python.records):
        check_record(a, 3, rounds_mode)
        check_record(b, 3, rounds_mode)
        assert (a.index, a.deal, a.lineup, a.rotation, a.seats) == (b.index, b.deal, b.lineup, b.rotation, b.seats)
    assert core.to_dict(include_timing=False).keys() == python.to_dict(include_timing=False).keys()
    assert core.to_dict()["engine"] == "core" and python.to_dict()["engine"] == "python"


def test_the_core_and_python_paths_agree_in_distribution():
    """Heuristic against greedy, 400 single rounds on each engine (other cards, same schedule)."""
    results = {engine: run_tournament(["heuristic", "greedy"], 2, 400, seed=1, rounds=True, engine=engine, **QUIET)
               for engine in ("core", "python")}
    core, python = (results[e].agent("heuristic") for e in ("core", "python"))
    # standard error of a difference of two win rates near 0.66 over 400 games: 0.033
    assert abs(core.win_rate - python.win_rate) < 0.12, (core.win_rate, python.win_rate)
    assert 0.55 < core.win_rate < 0.8
    for name in ("heuristic", "greedy"):
        a, b = results["core"].agent(name), results["python"].agent(name)
        assert a.points_per_round == pytest.approx(b.points_per_round, rel=0.25), name
        assert a.calls_per_round == pytest.approx(b.calls_per_round, abs=0.12), name
    low, high = core.margin_interval
    assert low - 2 < python.margin < high + 2


def test_the_turn_cap_and_the_move_limit_as_on_the_python_path(monkeypatch):
    from agents.tournament import schedule

    capped = run_tournament(["random", "random"], 2, 8, seed=0, rounds=True, max_turns=3, keep_records=True,
                            engine="core", **QUIET)
    assert capped.capped_rounds > 0
    for record in capped.records:
        if record.capped:
            assert record.ranks == (0, 0) and record.win_shares == (0.0, 0.0) and record.points == (0, 0)
            assert record.turns == 3
    monkeypatch.setattr(schedule, "MAX_MOVES", 10)
    with pytest.raises(RuntimeError, match=r"game 0 \(random, greedy\) did not end within 10 moves"):
        run_tournament(["random", "greedy"], 2, 2, seed=0, engine="core", **QUIET)


# ----------------------------------------------------------------------------------------------
# Duplicate deals and determinism
# ----------------------------------------------------------------------------------------------


def dealt_hands(monkeypatch, specs, num_players, games, seed):
    """The hands each game of a core tournament was dealt, by seat: the rows as the first ``advance`` sees them."""
    hands: dict[int, tuple] = {}
    kernel = compiled.advance

    def spy(S, R, A, K, Q, HP, SP, SH, T, games_, max_moves):
        if not hands:
            for g in games_:
                hands[int(g)] = tuple(tuple(S[g, HAND + q * HAND_ROOM : HAND + q * HAND_ROOM + S[g, HAND_LEN + q]])
                                      for q in range(num_players))
        return kernel(S, R, A, K, Q, HP, SP, SH, T, games_, max_moves)

    monkeypatch.setattr(compiled, "advance", spy)
    run_tournament(specs, num_players, games, seed=seed, rounds=True, engine="core", **QUIET)
    monkeypatch.setattr(compiled, "advance", kernel)
    return hands


def test_every_rotation_and_line_up_of_a_deal_is_dealt_the_same_hands(monkeypatch):
    specs = ["random", "greedy", "heuristic", "random"]
    plan = plan_tournament(specs, 3, 24, seed=9, rounds=True)
    assert plan.cycle == 12 and plan.deals == 2
    hands = dealt_hands(monkeypatch, specs, 3, 24, seed=9)
    by_deal = defaultdict(set)
    for i, dealt in hands.items():
        by_deal[plan.game(i)[0]].add(dealt)
    assert len(hands) == 24 and all(len(h) == 1 for h in by_deal.values())
    assert by_deal[0] != by_deal[1]
    # The deal does not depend on who plays it (the agents draw from their own generators).
    other = dealt_hands(monkeypatch, ["greedy", "random", "random", "heuristic"], 3, 24, seed=9)
    assert other == hands


def test_same_seed_same_results_and_another_seed_differs():
    kwargs = dict(agent_specs=["heuristic", "random", "greedy"], num_players=3, games=6, keep_records=True,
                  engine="core", **QUIET)
    one, again, other = (run_tournament(seed=seed, **kwargs) for seed in (4, 4, 5))
    assert one.to_dict(include_timing=False) == again.to_dict(include_timing=False)
    assert [r._replace(seconds=()) for r in one.records] == [r._replace(seconds=()) for r in again.records]
    assert one.to_dict(include_timing=False)["agents"] != other.to_dict(include_timing=False)["agents"]


# ----------------------------------------------------------------------------------------------
# Policies: batched forward passes
# ----------------------------------------------------------------------------------------------


def test_a_policy_is_asked_in_batches_and_plays_legal_moves(tmp_path, monkeypatch):
    from agents.policies.ppo import NumpyPolicy

    spec = f"ppo:{tiny_policy(tmp_path / 'p.npz')}"
    sizes = []
    act_batch = NumpyPolicy.act_batch

    def spy(self, observations, masks, rng=None):
        actions = act_batch(self, observations, masks, rng)
        assert masks[np.arange(len(actions)), actions].all()
        sizes.append(len(actions))
        return actions

    monkeypatch.setattr(NumpyPolicy, "act_batch", spy)
    result = run_tournament([spec, "heuristic"], 2, 40, seed=3, rounds=True, max_turns=100, keep_records=True,
                            engine="core", **QUIET)
    assert sizes[0] == 40  # every game waits on the policy after the first compiled moves: one batch
    assert sum(sizes) == result.agent(spec).moves
    policy_seconds = sum(r.seconds[r.seats.index(0)] for r in result.records)
    assert policy_seconds > 0 and not math.isnan(policy_seconds)


def test_an_illegal_move_from_a_policy_is_reported_by_name(tmp_path, monkeypatch):
    from agents.policies.ppo import NumpyPolicy

    spec = f"ppo:{tiny_policy(tmp_path / 'p.npz')}"

    def first_illegal(self, observations, masks, rng=None):
        return np.argmin(masks, axis=1)

    monkeypatch.setattr(NumpyPolicy, "act_batch", first_illegal)
    with pytest.raises(ValueError, match=rf"agent '{spec}' in seat 0 of game 0 chose an illegal move \(action \d+\)"):
        run_tournament([spec, "random"], 2, 2, seed=0, rounds=True, engine="core", **QUIET)


def test_the_exported_bot_answers_a_batch_as_it_answers_each_row():
    from agents.policies.onnx import ExportedPolicy, default_bot_dir

    policy = ExportedPolicy(default_bot_dir())
    rng = np.random.default_rng(0)
    observations = rng.random((16, policy.observation_size), dtype=np.float32)
    masks = (rng.random((16, policy.num_actions)) < 0.1).astype(np.int8)
    masks[:, 0] = 1
    batch = policy.act_batch(observations, masks)
    assert batch.tolist() == [policy.act(o, m) for o, m in zip(observations, masks)]
    sampled = policy.act_batch(observations, masks, np.random.default_rng(1))
    assert masks[np.arange(16), sampled].all()
    assert policy.act_batch(observations[:0], masks[:0]).shape == (0,)
