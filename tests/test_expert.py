"""agents.training.expert: the planner's labels in the student's own positions (the same whatever the
thread count, legal, and the planner's choice among the student's candidates), a fit that moves only
the towers it has rows for, the fitted weights written back into the SB3 model exactly, and the stage
in train.py: measured before and after, resumable at every write, refused by name when it cannot run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.policies.ppo import NumpyPolicy
from agents.training import OpponentPool, SelfPlayEnv, TrainConfig, load_config, new_model
from agents.training.expert import collect_labels, empty_labels, fit, load_actor, stage_tables

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "agents" / "models" / "default"


def shipped() -> NumpyPolicy:
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from expert_iteration import policy_from_onnx

    return policy_from_onnx(BOT)


@pytest.fixture(scope="module")
def student() -> NumpyPolicy:
    return shipped()


def test_the_labels_are_the_planners_answers_among_the_students_candidates(student):
    from agents.policies.planner import PLAN_TOP_K, policy_candidates
    from yaniv_env.encoding import action_table

    data = collect_labels(student, 512, seed=2, budget=32)
    again = collect_labels(student, 512, seed=2, budget=32, threads=2)
    assert all(np.array_equal(data[k], again[k], equal_nan=True) for k in data)  # the same labels, any thread count
    obs = data["obs"].astype(np.float32)
    cands, counts = policy_candidates(student, obs, data["masks"], action_table(5).yaniv, PLAN_TOP_K, 32)
    assert (data["own"] == cands[:, 0]).all()  # the student plays its own best move
    for i in range(len(obs)):
        assert data["labels"][i] in cands[i, : counts[i]]
        assert data["masks"][i, data["labels"][i]]
    assert (data["labels"][counts == 1] == data["own"][counts == 1]).all()
    assert 0 < (data["labels"] != data["own"]).mean() < 0.3  # the planner overrules, now and then
    # Beside each label, the candidates searched and their means minus the student's move's.
    searched = data["cands"] >= 0
    assert (searched.sum(axis=1) == counts).all() and (data["cands"][:, 0] == data["own"]).all()
    assert all((data["cands"][i, : counts[i]] == cands[i, : counts[i]]).all() for i in range(len(obs)))
    assert (data["advantages"][:, 0] == 0).all() and np.isnan(data["advantages"][~searched]).all()
    over = np.flatnonzero(data["labels"] != data["own"])
    at = [int(np.flatnonzero(data["cands"][i] == data["labels"][i])[0]) for i in over]
    assert all(data["advantages"][i, k] > 0 for i, k in zip(over, at))  # an overrule: the rollouts favoured it


def test_the_planners_settings_reach_its_labels(student):
    shipped = collect_labels(student, 256, seed=4, budget=32)
    assert all(np.array_equal(shipped[k], collect_labels(student, 256, seed=4, budget=32, search_settings={})[k],
                              equal_nan=True) for k in shipped)
    short = collect_labels(student, 256, seed=4, budget=32, search_settings={"rollout_turns": 2})
    assert np.array_equal(short["obs"], shipped["obs"])  # the same positions (the student plays its own moves)...
    searched = shipped["cands"] >= 0
    assert not np.allclose(short["advantages"][searched], shipped["advantages"][searched])  # ...scored otherwise


def test_labels_at_larger_tables_under_drawn_rules_are_legal_and_seeded(student):
    from yaniv.rule_space import get_rule_space

    rule_sets = get_rule_space("house").sample(16, np.random.default_rng(0))
    kwargs = dict(players="3-6", rule_sets=rule_sets, episode="game", round_share=0.5, budget=16, tables=16)
    data = collect_labels(student, 300, seed=5, threads=2, **kwargs)
    assert len(data["labels"]) == 300 and data["masks"][np.arange(300), data["labels"]].all()
    again = collect_labels(student, 300, seed=5, **kwargs)
    assert all(np.array_equal(data[k], again[k], equal_nan=True) for k in data)
    assert not (data["labels"] == collect_labels(student, 300, seed=6, **kwargs)["labels"]).all()


def test_bad_arguments_are_refused_by_name(student):
    with pytest.raises(ValueError, match="samples"):
        collect_labels(student, 0, seed=0)
    with pytest.raises(ValueError, match="threads"):
        collect_labels(student, 10, seed=0, threads=0)
    with pytest.raises(ValueError, match="rollout_turns"):
        collect_labels(student, 10, seed=0, search_settings={"rollout_turns": 0})
    with pytest.raises(ValueError, match="out: arrays of 10 rows"):
        collect_labels(student, 10, seed=0, out=empty_labels(9, student))
    small = NumpyPolicy([np.zeros((4, 10), np.float32), np.zeros((189, 4), np.float32)],
                        [np.zeros(4, np.float32), np.zeros(189, np.float32)], "tanh")
    with pytest.raises(ValueError, match="takes 10 observations"):
        collect_labels(small, 10, seed=0)


@pytest.mark.parametrize("rules, tower", [("default", 0), ("default:game_end=one_round", 1)])
def test_the_fit_moves_each_tower_only_on_its_own_rows(student, rules, tower):
    from yaniv.rules import parse_rules

    data = collect_labels(student, 256, seed=3, rules=parse_rules(rules), budget=16)  # every row on one tower
    rng = np.random.default_rng(0)
    data["labels"] = np.array([rng.choice(np.flatnonzero(m)) for m in data["masks"]])  # labels unlike its play
    unchanged, _ = fit(student, data, epochs=1, lr=0.0, seed=0, log=None)
    obs = data["obs"].astype(np.float32)
    assert np.array_equal(unchanged.logits(obs), student.logits(obs))
    fitted, stats = fit(student, data, epochs=5, lr=1e-3, seed=0, batch_size=32, log=None)
    assert stats["tower1_share"] == tower and 0 <= stats["agreement_after"] <= 1  # random labels: none to agree with
    hits = lambda p: (np.argmax(p.masked_logits(obs, data["masks"]), axis=1) == data["labels"]).mean()  # noqa: E731
    assert hits(fitted) > hits(student) + 0.1
    moved, kept = ((fitted.weights, student.weights), (fitted.tower_weights, student.tower_weights))[:: 1 - 2 * tower]
    assert not np.array_equal(moved[0][0], moved[1][0])
    assert all(np.array_equal(a, b) for a, b in zip(*kept))
    assert np.array_equal(fitted.skip_weight, student.skip_weight)


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_the_advantage_target_is_the_start_tilted_by_the_rollouts_means(student):
    """At rate 0 the fit's loss is the cross-entropy of the start against q = softmax(logits + A / T),
    worked out here in numpy on the fit's own training rows; fitted, the student follows the tilt."""
    data = collect_labels(student, 400, seed=7, budget=16)
    obs, masks = data["obs"].astype(np.float32), data["masks"]
    z = np.where(masks, student.logits(obs).astype(np.float64), -1e9)
    tilt = np.zeros_like(z)
    for i in range(len(z)):
        for c, a in zip(data["cands"][i], data["advantages"][i]):
            if c >= 0:
                tilt[i, c] += a / 2.5
    train = np.random.default_rng(0).permutation(len(z))[len(z) // 20 :]  # fit's split for seed 0
    log_p = np.log(softmax(z) + 1e-300)
    expected = -(softmax(z + tilt) * log_p).sum(axis=1)[train].mean()
    _, stats = fit(student, data, epochs=1, lr=0.0, seed=0, log=None, target="advantage", temperature=2.5)
    assert stats["loss"] == pytest.approx(expected, rel=1e-4)
    # A tilt that is all one way: every second candidate 40 points better than the student's move.
    lifted = dict(data, advantages=np.where(data["cands"] >= 0, 0.0, np.nan).astype(np.float32))
    two = (data["cands"][:, 1] >= 0)
    lifted["advantages"][two, 1] = 40.0
    fitted, _ = fit(student, lifted, epochs=8, lr=1e-3, seed=0, batch_size=32, log=None, target="advantage")
    best = np.argmax(fitted.masked_logits(obs, masks), axis=1)
    assert (best[two] == data["cands"][two, 1]).mean() > 0.8
    assert (np.argmax(student.masked_logits(obs, masks), axis=1)[two] == data["cands"][two, 1]).mean() == 0


def test_the_fit_refuses_a_target_it_cannot_build(student):
    data = collect_labels(student, 64, seed=1, budget=16)
    with pytest.raises(ValueError, match="target must be one of label, advantage"):
        fit(student, data, epochs=1, lr=0.0, seed=0, log=None, target="value")
    with pytest.raises(ValueError, match="temperature"):
        fit(student, data, epochs=1, lr=0.0, seed=0, log=None, target="advantage", temperature=0.0)
    old = {k: v for k, v in data.items() if k != "advantages"}
    with pytest.raises(ValueError, match="'advantages'"):
        fit(student, old, epochs=1, lr=0.0, seed=0, log=None, target="advantage")
    assert fit(student, old, epochs=1, lr=0.0, seed=0, log=None)[1]["loss"] > 0  # labels alone still fit


def test_the_fit_on_rows_of_both_towers_moves_both_and_changes_nothing_at_rate_zero(student):
    from yaniv.rules import parse_rules

    parts = [collect_labels(student, 256, seed=4, rules=parse_rules(r), budget=16)
             for r in ("default", "default:game_end=one_round")]
    data = {k: np.concatenate([part[k] for part in parts]) for k in parts[0]}
    obs = data["obs"].astype(np.float32)
    assert np.array_equal(fit(student, data, epochs=1, lr=0.0, seed=0, log=None)[0].logits(obs), student.logits(obs))
    fitted, _ = fit(student, data, epochs=2, lr=1e-3, seed=0, batch_size=64, log=None)
    assert not np.array_equal(fitted.weights[0], student.weights[0])
    assert not np.array_equal(fitted.tower_weights[0], student.tower_weights[0])
    with pytest.raises(ValueError, match="at least 20"):
        fit(student, {k: v[:5] for k, v in data.items()}, epochs=1, lr=0.0, seed=0, log=None)


def make_model(**keys):
    from stable_baselines3.common.vec_env import DummyVecEnv

    config = TrainConfig(**{"players": "2-4", "n_envs": 1, "n_steps": 64, "batch_size": 64, "net_arch": [16, 16],
                            "baselines": ["greedy"], **keys})
    env = SelfPlayEnv(config, OpponentPool(config), seed=0)
    return new_model(config, DummyVecEnv([lambda: env])), env


@pytest.mark.parametrize("keys", [{}, {"stakes_skip": True}, {"stakes_skip": True, "towers": "one_round"}],
                         ids=["mlp", "stakes_skip", "towers"])
def test_load_actor_writes_a_fitted_policy_back_into_the_model_exactly(keys):
    model, env = make_model(**keys)
    with torch.no_grad():  # every part apart from its start, so that a misplaced weight shows
        for p in model.policy.parameters():
            if p.requires_grad:
                p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    before = NumpyPolicy.from_sb3(model)
    critic = [p.detach().clone() for n, p in model.policy.named_parameters() if "value" in n]
    load_actor(model.policy, before)  # the identity
    assert all(np.array_equal(a, b) for a, b in zip(NumpyPolicy.from_sb3(model).weights, before.weights))
    rng = np.random.default_rng(1)
    other = NumpyPolicy([w.T + rng.normal(0, 0.1, w.T.shape).astype(np.float32) for w in before.weights],
                        [b + 0.1 for b in before.biases], before.activation, None,
                        None if before.skip_index is None else (before.skip_index, before.skip_weight),
                        None if before.route_index is None else
                        (before.route_feature, [w.T * 1.5 for w in before.tower_weights],
                         [b - 0.1 for b in before.tower_biases]))
    load_actor(model.policy, other)
    after = NumpyPolicy.from_sb3(model)
    obs = np.stack([env.reset(seed=s)[0] for s in range(16)]).astype(np.float32)
    if other.route_index is not None:
        obs[8:, other.route_index] = 1.0  # half the rows through tower 1
    assert np.allclose(after.logits(obs), other.logits(obs), atol=1e-5)
    with torch.no_grad():  # the torch model itself plays the written policy
        torch_logits = model.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()
    want = other.logits(obs)
    want = want - np.log(np.exp(want - want.max(1, keepdims=True)).sum(1, keepdims=True)) - want.max(1, keepdims=True)
    assert np.allclose(torch_logits, want, atol=1e-4)
    assert all(torch.equal(a, p) for a, (n, p) in zip(critic, [(n, p) for n, p in model.policy.named_parameters()
                                                               if "value" in n]))
    wrong, _ = make_model(**(keys | {"net_arch": [16]}))
    with pytest.raises(ValueError, match="actor layers"):
        load_actor(wrong.policy, other)
    if "towers" in keys:
        with pytest.raises(ValueError, match="differ in towers"):
            load_actor(make_model(stakes_skip=True)[0].policy, other)


def test_the_stage_draws_each_towers_labels_from_the_tables_it_trains_on(monkeypatch):
    from agents.training import selfplay

    config = load_config(ROOT / "configs" / "default.yaml", ["expert_samples=1000", "expert_tower_share=0.5"])
    one, = stage_tables(config, towers=False)
    assert one[0] == 1.0 and one[1]["players"] == "2-6" and one[1]["round_share"] == 0.9
    main, late = stage_tables(config, towers=True)
    assert main[0] == late[0] == 0.5
    assert late[1]["players"] == "2" and all(r.one_round for r in late[1]["rule_sets"])
    assert not all(r.one_round for r in main[1]["rule_sets"])
    only, = stage_tables(load_config(ROOT / "configs" / "default.yaml"), towers=True)  # the recipe's: tower 1's alone
    assert only[0] == 1.0 and only[1]["players"] == "2" and all(r.one_round for r in only[1]["rule_sets"])
    monkeypatch.setattr(selfplay, "core_controller", lambda spec: None)
    with pytest.raises(ValueError, match="expert_samples: baseline 'heuristic:call_risk=0.1,score_weight=2' has no "
                                         "form on the compiled core"):
        stage_tables(config, towers=False)


TINY_RUN = [
    "total_timesteps=128", "n_envs=2", "n_steps=32", "batch_size=64", "n_epochs=1", "net_arch=[16]", "players=2-3",
    "baselines=[greedy]", "eval_every=0", "eval_games=4", "eval_episode=round", "eval_players=2",
    "eval_opponents=[greedy]", "checkpoint_every=64", "progress=false", "final_policy=last", "torch_threads=1",
    "expert_samples=300", "expert_budget=8", "expert_epochs=2", "expert_batch_size=64", "expert_learning_rate=1e-2",
]


def train_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_run_with_the_stage_measures_its_start_and_end_and_ships_its_end(tmp_path, capsys):
    train = train_script()
    assert train.main(["--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=ex",
                       *TINY_RUN]) == 0
    out = capsys.readouterr().out
    assert "expert stage (planner, 8 rollouts): 300 labels" in out and "and 300 expert labels" in out
    run = tmp_path / "ex"
    state = json.loads((run / "state.json").read_text())
    assert state["timesteps"] == 128 and state["expert"]["samples"] == 300
    assert 0 < state["expert"]["overruled"] < 1
    assert [e["step"] for e in state["evaluations"]] == [128, 428]  # the stage's start, and its end
    start, end = NumpyPolicy.load(run / "ppo.npz"), NumpyPolicy.load(run / "policy.npz")
    assert not np.array_equal(start.weights[0], end.weights[0])
    assert np.array_equal(end.weights[0], NumpyPolicy.load(run / "checkpoints" / "latest.npz").weights[0])
    assert np.array_equal(start.weights[0], NumpyPolicy.load(run / "checkpoints" / "best.npz").weights[0]) or \
        state["best_step"] == 428
    # The same seed, the same run: the stage's labels and fit are deterministic.
    assert train.main(["--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=again",
                       *TINY_RUN]) == 0
    assert np.array_equal(end.weights[0], NumpyPolicy.load(tmp_path / "again" / "policy.npz").weights[0])
    # A finished run resumed does nothing more (it loads expert.zip; every kill point: tests/test_train_runs.py).
    assert train.main(["--resume", str(run)]) == 0
    assert json.loads((run / "state.json").read_text())["evaluations"] == state["evaluations"]
    assert np.array_equal(end.weights[0], NumpyPolicy.load(run / "policy.npz").weights[0])


def test_a_trained_run_resumed_with_expert_samples_runs_the_stage_once(tmp_path, capsys):
    """The stage's keys may change until it has run: --resume RUN expert_samples=N gives a finished run
    the stage (measured before and after, as a run with it from the start), and then fixes them."""
    train = train_script()
    without = [arg for arg in TINY_RUN if not arg.startswith("expert_samples=")]
    assert train.main(["--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=late",
                       *without]) == 0
    run = tmp_path / "late"
    assert "expert" not in json.loads((run / "state.json").read_text()) and not (run / "ppo.npz").exists()
    capsys.readouterr()
    assert train.main(["--resume", str(run), "expert_samples=300"]) == 0
    assert "expert stage (planner, 8 rollouts): 300 labels" in capsys.readouterr().out
    state = json.loads((run / "state.json").read_text())
    assert state["expert"]["samples"] == 300 and [e["step"] for e in state["evaluations"]][-2:] == [128, 428]
    start, end = NumpyPolicy.load(run / "ppo.npz"), NumpyPolicy.load(run / "policy.npz")
    assert not np.array_equal(start.weights[0], end.weights[0])
    assert train.main(["--resume", str(run), "expert_samples=600"]) == 2
    assert "'expert_samples' cannot change on --resume" in capsys.readouterr().err


def test_the_stage_refuses_a_baseline_it_cannot_seat_before_anything_is_written(tmp_path, monkeypatch, capsys):
    from agents.training import selfplay

    monkeypatch.setattr(selfplay, "core_controller", lambda spec: None)
    train = train_script()
    assert train.main(["--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=refused",
                       *TINY_RUN]) == 2
    assert "expert_samples: baseline 'greedy' has no form on the compiled core" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()


@pytest.mark.parametrize("key, value, words", [
    ("expert_samples", "-1", "from 0 to 3,000,000"), ("expert_samples", "5000000", "from 0 to 3,000,000"),
    ("expert_budget", "4", "from 8 to 4,096"), ("expert_learning_rate", "0", "a number > 0"),
    ("expert_tower_share", "1.5", "from 0 to 1"), ("expert_threads", "0", "from 1 to 64"),
])
def test_the_stages_keys_have_bounds(key, value, words):
    from agents.training import ConfigError

    with pytest.raises(ConfigError, match=f"'{key}'.*{words}"):
        load_config(None, [f"{key}={value}"])
