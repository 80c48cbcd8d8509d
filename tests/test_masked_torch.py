"""The training policy's masked distribution (``agents.policies.masked_torch``) against sb3-contrib's:
the same log-probabilities, entropy and modes, samples that follow the same probabilities and never
a masked action, the same samples from the same seed, and a bad mask refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

from agents.policies.masked_torch import FastMaskedDistribution

A = 189  # the action table's size


def batch(rows: int, seed: int) -> tuple[torch.Tensor, np.ndarray]:
    rng = np.random.default_rng(seed)
    logits = torch.as_tensor(rng.normal(0.0, 3.0, (rows, A)), dtype=torch.float32)
    masks = rng.random((rows, A)) < 0.08
    masks[np.arange(rows), rng.integers(0, A, rows)] = True  # every row keeps an action
    masks[0] = False
    masks[0, [0, A - 1]] = True  # the table's two ends
    masks[1] = False
    masks[1, 7] = True  # a single legal move
    return logits, masks


def both(logits: torch.Tensor, masks: np.ndarray | None):
    ours, theirs = FastMaskedDistribution(A), MaskableCategoricalDistribution(A)
    for d in (ours, theirs):
        d.proba_distribution(logits)
        if masks is not None:
            d.apply_masking(masks)
    return ours, theirs


@pytest.mark.parametrize("masked", [True, False])
def test_log_probs_entropy_and_modes_are_sb3_contrib_s(masked):
    logits, masks = batch(64, seed=1)
    ours, theirs = both(logits, masks if masked else None)
    actions = torch.as_tensor(np.array([np.flatnonzero(m)[0] for m in masks]))
    torch.testing.assert_close(ours.log_prob(actions), theirs.log_prob(actions), rtol=0, atol=1e-5)
    torch.testing.assert_close(ours.entropy(), theirs.entropy(), rtol=0, atol=1e-5)
    torch.testing.assert_close(ours.distribution.probs, theirs.distribution.probs, rtol=0, atol=1e-6)
    assert torch.equal(ours.mode(), theirs.mode())


def test_samples_follow_the_probabilities_and_never_a_masked_action():
    logits, masks = batch(8, seed=2)
    ours, _ = both(logits, masks)
    probs = ours.distribution.probs.numpy()
    torch.manual_seed(0)
    draws = 40_000
    counts = np.zeros((8, A))
    for _ in range(draws // 1000):
        samples = torch.stack([ours.sample() for _ in range(1000)]).numpy()  # (1000, 8)
        for row in range(8):
            counts[row] += np.bincount(samples[:, row], minlength=A)
    assert counts[~masks].sum() == 0
    assert counts[1, 7] == draws
    # each action's count within 5 standard deviations of its expectation
    expected = probs * draws
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected * (1 - probs)) + 1)


@pytest.mark.parametrize("u, first_row", [(0.0, 0), (1.0, A - 1)])  # 1 lies past rand's range, rounding's worst
def test_a_draw_at_either_end_of_the_range_lands_on_a_legal_action(monkeypatch, u, first_row):
    logits, masks = batch(16, seed=3)
    masks[2, 0] = False  # a row whose first action is masked
    ours, _ = both(logits, masks)
    monkeypatch.setattr(torch, "rand", lambda shape, dtype: torch.full(shape, u, dtype=dtype))
    samples = ours.sample().numpy()
    assert all(masks[row, a] for row, a in enumerate(samples))
    assert samples[0] == first_row  # the first row's first or last legal action


def test_the_same_seed_gives_the_same_samples():
    logits, masks = batch(32, seed=4)
    ours, _ = both(logits, masks)
    torch.manual_seed(5)
    first = ours.sample()
    torch.manual_seed(5)
    assert torch.equal(first, ours.sample())


def test_a_mask_of_the_wrong_size_is_refused():
    logits, masks = batch(4, seed=5)
    ours = FastMaskedDistribution(A).proba_distribution(logits)
    with pytest.raises(ValueError, match="action mask has"):
        ours.apply_masking(masks[:, :-1])


def test_every_training_run_learns_on_it_and_a_checkpoint_keeps_it(tmp_path):
    from sb3_contrib import MaskablePPO

    from agents.policies.masked_torch import MaskedMlpPolicy
    from agents.training.config import TrainConfig
    from agents.training.model import load_model, new_model
    from yaniv_env.vector import YanivVecEnv

    for stakes_skip in (False, True):
        config = TrainConfig(n_envs=4, n_steps=16, batch_size=64, n_epochs=1, net_arch=[16], stakes_skip=stakes_skip)
        model = new_model(config, YanivVecEnv(num_envs=4, opponents="random", seed=0))
        assert isinstance(model.policy, MaskedMlpPolicy)
        model.learn(total_timesteps=128)
        model.save(tmp_path / "model.zip")
        loaded = load_model(tmp_path / "model.zip")
        assert isinstance(loaded, MaskablePPO) and isinstance(loaded.policy.action_dist, FastMaskedDistribution)
