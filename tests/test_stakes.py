"""The stakes skip (agents.policies.stakes, agents.policies.stakes_torch): what it adds to which logits, that the
numpy and ONNX exports compute the same policy, and a run that trains, exports and resumes with it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_train import ROOT, TINY, resume_and_refuse_a_change, train

from agents.policies.ppo import NumpyPolicy
from agents.policies.stakes import SKIP_SCALE, SKIP_SEGMENTS, skip_index
from agents.training import OpponentPool, SelfPlayEnv, TrainConfig, new_model
from yaniv_env import encoding


def test_the_skip_index_names_each_segments_entry_of_each_move():
    layout = encoding.observation_layout(5)
    size = sum(s for _, s in layout)
    index = skip_index(size)
    assert index.shape == (len(SKIP_SEGMENTS), 31 * encoding.DRAW_SOURCES)
    at = 0
    for name, length in layout:
        if name in SKIP_SEGMENTS:
            assert list(index[SKIP_SEGMENTS.index(name)]) == list(range(at, at + length))
        at += length
    with pytest.raises(ValueError, match="no observation layout has 1000 entries"):
        skip_index(1000)


@pytest.fixture(scope="module")
def skip_model():
    from stable_baselines3.common.vec_env import DummyVecEnv

    config = TrainConfig(players="2-4", n_envs=1, n_steps=64, batch_size=64, net_arch=[32, 32], stakes_skip=True,
                         baselines=["greedy"])
    env = SelfPlayEnv(config, OpponentPool(config), seed=0)
    model = new_model(config, DummyVecEnv([lambda: env]))
    with torch.no_grad():
        model.policy.skip_weight.copy_(torch.tensor([0.5, -0.25, 1.0, -2.0]))
    return model, env


def test_the_skip_adds_its_weights_times_each_moves_segments_to_that_moves_logit(skip_model):
    model, env = skip_model
    obs, _ = env.reset(seed=0)
    size = len(obs)
    index = skip_index(size)
    rng = np.random.default_rng(0)
    stakes = obs.copy()
    stakes[index.ravel()] = rng.random(index.size).astype(np.float32)
    mask = np.ones(env.action_space.n, dtype=bool)
    with torch.no_grad():
        logits = model.policy.get_distribution(torch.as_tensor(np.stack([obs, stakes])), action_masks=np.stack(
            [mask, mask])).distribution.logits
        plain = model.policy.get_distribution(torch.as_tensor(np.stack([obs, obs])), action_masks=np.stack(
            [mask, mask])).distribution.logits
    # Logits are normalized log-probabilities: compare differences to the Yaniv id, which the skip leaves alone.
    yaniv = index.shape[1]
    lift = (logits[1] - logits[1][yaniv]) - (plain[0] - plain[0][yaniv])
    weights = np.array([0.5, -0.25, 1.0, -2.0]) * SKIP_SCALE
    expected = (stakes[index] - obs[index]).T @ weights
    # The MLP also reads the changed entries, so only the skip's share is exact: check it with the MLP's
    # own change taken out (the same observation through a policy whose skip weights are zero).
    with torch.no_grad():
        saved = model.policy.skip_weight.clone()
        model.policy.skip_weight.zero_()
        mlp_only = model.policy.get_distribution(torch.as_tensor(np.stack([obs, stakes])), action_masks=np.stack(
            [mask, mask])).distribution.logits
        model.policy.skip_weight.copy_(saved)
    mlp_lift = (mlp_only[1] - mlp_only[1][yaniv]) - (mlp_only[0] - mlp_only[0][yaniv])
    np.testing.assert_allclose((lift - mlp_lift)[:yaniv].numpy(), expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose((lift - mlp_lift)[yaniv:].numpy(), 0.0, atol=1e-4)


def test_numpy_and_onnx_exports_compute_the_same_policy(skip_model, tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    from agents.policies.export import export_policy

    model, env = skip_model
    observations, masks = [], []
    obs, _ = env.reset(seed=3)
    index = skip_index(len(obs))
    rng = np.random.default_rng(1)
    for _ in range(6):
        o = obs.copy()
        o[index.ravel()] = rng.random(index.size) * (rng.random(index.size) < 0.2)
        observations.append(o)
        masks.append(env.action_masks())
    batch, mask = np.stack(observations).astype(np.float32), np.stack(masks)
    with torch.no_grad():
        probs = model.policy.get_distribution(torch.as_tensor(batch), action_masks=mask).distribution.probs.numpy()
    exported = NumpyPolicy.from_sb3(model)
    assert exported.skip_index is not None and exported.skip_weight.shape == (4,)
    np.testing.assert_allclose(exported.skip_weight, np.array([0.5, -0.25, 1.0, -2.0]) * SKIP_SCALE)
    logits = exported.masked_logits(batch, mask)
    np.testing.assert_allclose(torch.softmax(torch.as_tensor(logits, dtype=torch.float64), 1).numpy(), probs,
                               rtol=1e-4, atol=1e-6)
    path = tmp_path / "policy.npz"
    exported.save(path)
    again = NumpyPolicy.load(path)
    np.testing.assert_array_equal(again.masked_logits(batch, mask), logits)
    out = export_policy(again, tmp_path / "bot")
    session = onnxruntime.InferenceSession(str(out / "model.onnx"))
    onnx_logits, action = session.run(None, {"observation": batch, "action_mask": mask})
    np.testing.assert_allclose(onnx_logits, logits, rtol=1e-5, atol=1e-4)
    assert list(action) == [int(np.argmax(row)) for row in logits]
    meta = json.loads((out / "bot.json").read_text())
    assert meta["network"]["stakes_skip"]["segments"] == list(SKIP_SEGMENTS)


def test_a_broken_skip_is_refused_by_name():
    weights = [np.zeros((8, 10), np.float32), np.zeros((4, 8), np.float32)]
    biases = [np.zeros(8, np.float32), np.zeros(4, np.float32)]
    with pytest.raises(ValueError, match="stakes skip"):
        NumpyPolicy(weights, biases, "tanh", skip=(np.array([[0, 1, 10]]), np.ones(1)))  # index 10 >= 10 inputs
    with pytest.raises(ValueError, match="stakes skip"):
        NumpyPolicy(weights, biases, "tanh", skip=(np.array([[0, 1]]), np.ones(2)))  # one weight per row


def test_a_run_with_the_skip_trains_exports_resumes_and_refuses_to_drop_it(tmp_path):
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=sk", *TINY,
                 "stakes_skip=true", "imitation_samples=300", "imitation_epochs=1", "imitation_bot=greedy")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "sk"
    assert NumpyPolicy.load(run / "policy.npz").skip_index is not None
    resume_and_refuse_a_change(run, "stakes_skip", "false")
