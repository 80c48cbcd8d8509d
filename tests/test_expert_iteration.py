"""benchmarks/expert_iteration.py: the start read back from the shipped bot plays as the bot, the
labels are the planner's answers in the student's positions, and the fit moves only what it fits
(the diagnostic's figures mean nothing unless all three hold)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import expert_iteration as ei  # noqa: E402

from agents.policies.onnx import ExportedPolicy  # noqa: E402

BOT = Path(__file__).resolve().parent.parent / "agents" / "models" / "default"


def test_the_start_read_from_the_onnx_file_plays_as_the_exported_bot():
    policy = ei.policy_from_onnx(BOT)
    assert policy.route_feature == "one_round" and policy.skip_index is not None
    data = ei.collect(policy, 256, seed=1, rules="default", budget=16)
    obs = data["obs"].astype(np.float32)
    ours, theirs = policy.masked_logits(obs, data["masks"]), ExportedPolicy(BOT).masked_logits(obs, data["masks"])
    legal = np.isfinite(ours)
    assert (legal == np.isfinite(theirs)).all()
    assert np.abs(ours[legal] - theirs[legal]).max() < 1e-4
    assert (np.argmax(ours, axis=1) == np.argmax(theirs, axis=1)).all()


def test_the_labels_are_the_planners_answers_among_the_students_candidates():
    from agents.policies.planner import PLAN_TOP_K, policy_candidates
    from yaniv_env.encoding import action_table

    policy = ei.policy_from_onnx(BOT)
    data = ei.collect(policy, 512, seed=2, rules="default", budget=32)
    again = ei.collect(policy, 512, seed=2, rules="default", budget=32)
    assert all((data[k] == again[k]).all() for k in data)  # the same seed, the same positions and labels
    obs = data["obs"].astype(np.float32)
    cands, counts = policy_candidates(policy, obs, data["masks"], action_table(5).yaniv, PLAN_TOP_K, 32)
    assert (data["own"] == cands[:, 0]).all()  # the student plays its own best move
    for i in range(len(obs)):
        assert data["labels"][i] in cands[i, : counts[i]]
        assert data["masks"][i, data["labels"][i]]
    assert (data["labels"][counts == 1] == data["own"][counts == 1]).all()
    assert 0 < (data["labels"] != data["own"]).mean() < 0.3  # the planner overrules, now and then


@pytest.mark.parametrize("rules, tower", [("default", 0), ("default:game_end=one_round", 1)])
def test_the_fit_moves_each_tower_only_on_its_own_rows(rules, tower):
    policy = ei.policy_from_onnx(BOT)
    data = ei.collect(policy, 256, seed=3, rules=rules, budget=16)  # every row on one tower
    rng = np.random.default_rng(0)
    data["labels"] = np.array([rng.choice(np.flatnonzero(m)) for m in data["masks"]])  # labels unlike its play
    unchanged = ei.fit(policy, data, epochs=1, lr=0.0, seed=0)
    obs = data["obs"].astype(np.float32)
    assert np.array_equal(unchanged.logits(obs), policy.logits(obs))
    fitted = ei.fit(policy, data, epochs=5, lr=1e-3, seed=0, batch_size=32)
    hits = lambda p: (np.argmax(p.masked_logits(obs, data["masks"]), axis=1) == data["labels"]).mean()  # noqa: E731
    assert hits(fitted) > hits(policy) + 0.1
    moved, kept = ((fitted.weights, policy.weights), (fitted.tower_weights, policy.tower_weights))[:: 1 - 2 * tower]
    assert not np.array_equal(moved[0][0], moved[1][0])
    assert all(np.array_equal(a, b) for a, b in zip(*kept))
    assert np.array_equal(fitted.skip_weight, policy.skip_weight)


def test_the_fit_on_rows_of_both_towers_moves_both_and_changes_nothing_at_rate_zero():
    policy = ei.policy_from_onnx(BOT)
    parts = [ei.collect(policy, 256, seed=4, rules=rules, budget=16) for rules in ("default", "default:game_end=one_round")]
    data = {k: np.concatenate([part[k] for part in parts]) for k in parts[0]}
    obs = data["obs"].astype(np.float32)
    assert np.array_equal(ei.fit(policy, data, epochs=1, lr=0.0, seed=0).logits(obs), policy.logits(obs))
    fitted = ei.fit(policy, data, epochs=2, lr=1e-3, seed=0, batch_size=64)
    assert not np.array_equal(fitted.weights[0], policy.weights[0])
    assert not np.array_equal(fitted.tower_weights[0], policy.tower_weights[0])
