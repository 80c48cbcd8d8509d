"""MaskedCategorical against sb3-contrib's MaskableCategoricalDistribution: every tensor bit for bit.

A training run with the fast distribution must be the run without it, so the comparisons are
``torch.equal``, not a tolerance: the logits, probabilities, log-probabilities and entropies of the
same inputs, and the samples drawn from the same random state; the gradients reaching the logits
too, since PPO's loss goes through them.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

from agents.policies.masked_torch import MaskedCategorical, MaskedMlpPolicy

ACTIONS = 189


def _inputs(rows: int, seed: int) -> tuple[torch.Tensor, np.ndarray]:
    rng = np.random.default_rng(seed)
    logits = torch.as_tensor(rng.normal(0.0, 3.0, (rows, ACTIONS)).astype(np.float32))
    masks = rng.random((rows, ACTIONS)) < rng.uniform(0.02, 0.5, (rows, 1))
    masks[np.arange(rows), rng.integers(ACTIONS, size=rows)] = True  # every row has a legal action
    return logits, masks


def _both(logits: torch.Tensor, masks: np.ndarray | None):
    ours, theirs = MaskedCategorical(ACTIONS), MaskableCategoricalDistribution(ACTIONS)
    ours.proba_distribution(logits)
    theirs.proba_distribution(logits)
    ours.apply_masking(masks)
    theirs.apply_masking(masks)
    return ours, theirs


@pytest.mark.parametrize("rows,seed", [(1, 0), (128, 1), (1024, 2), (37, 3)])
@pytest.mark.parametrize("masked", [True, False])
def test_every_tensor_is_sb3_contribs_bit_for_bit(rows, seed, masked):
    logits, masks = _inputs(rows, seed)
    ours, theirs = _both(logits, masks if masked else None)
    assert torch.equal(ours.distribution.logits, theirs.distribution.logits)
    assert torch.equal(ours.distribution.probs, theirs.distribution.probs)
    assert torch.equal(ours.entropy(), theirs.entropy())
    assert torch.equal(ours.mode(), theirs.mode())
    actions = theirs.mode().float()  # the rollout buffer holds actions as floats
    assert torch.equal(ours.log_prob(actions), theirs.log_prob(actions))
    torch.manual_seed(seed)
    drawn = ours.sample()
    torch.manual_seed(seed)
    assert torch.equal(drawn, theirs.sample())
    if masked:
        assert masks[np.arange(rows), drawn.numpy()].all(), "a sample is an illegal action"


def test_the_gradients_reaching_the_logits_are_sb3_contribs():
    logits, masks = _inputs(256, 7)
    grads = []
    for dist in (MaskedCategorical(ACTIONS), MaskableCategoricalDistribution(ACTIONS)):
        x = logits.clone().requires_grad_(True)
        dist.proba_distribution(x)
        dist.apply_masking(masks)
        actions = torch.as_tensor(masks.argmax(1))
        (dist.log_prob(actions).sum() * 0.7 - 0.01 * dist.entropy().sum()).backward()
        grads.append(x.grad)
    assert torch.equal(grads[0], grads[1])


def test_masks_may_be_a_tensor_and_are_reshaped():
    logits, masks = _inputs(16, 4)
    ours, theirs = _both(logits, torch.as_tensor(masks).reshape(-1))
    assert torch.equal(ours.logits, theirs.distribution.logits)


def test_nan_logits_are_refused_by_name():
    logits, _ = _inputs(8, 5)
    logits[3, 10] = float("nan")
    with pytest.raises(ValueError, match="NaN.*1 of 8 rows.*diverged"):
        MaskedCategorical(ACTIONS).proba_distribution(logits)


def test_masking_before_the_logits_is_refused():
    with pytest.raises(RuntimeError, match="apply_masking before proba_distribution"):
        MaskedCategorical(ACTIONS).apply_masking(None)


def test_the_policy_is_mlp_policy_number_for_number():
    """Same seed, same weights, same actions, values and log-probabilities as sb3-contrib's MlpPolicy."""
    from sb3_contrib import MaskablePPO

    from yaniv_env.gym_env import YanivGymEnv

    env = YanivGymEnv(num_players=2)
    kwargs = {"policy_kwargs": {"net_arch": [32, 32]}, "seed": 0, "device": "cpu"}
    ours, theirs = MaskablePPO(MaskedMlpPolicy, env, **kwargs), MaskablePPO("MlpPolicy", env, **kwargs)
    for a, b in zip(ours.policy.state_dict().values(), theirs.policy.state_dict().values()):
        assert torch.equal(a, b)
    obs, _ = env.reset(seed=3)
    batch = torch.as_tensor(np.stack([obs] * 5))
    masks = np.stack([env.action_masks()] * 5)
    results = []
    for model in (ours, theirs):
        torch.manual_seed(11)
        with torch.no_grad():
            actions, values, log_prob = model.policy(batch, action_masks=masks)
            _, evaluated, entropy = model.policy.evaluate_actions(batch, actions, action_masks=masks)
        results.append((actions, values, log_prob, evaluated, entropy))
    for a, b in zip(*results):
        assert torch.equal(a, b)
