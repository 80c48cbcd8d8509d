"""The torch form of the stakes skip (``agents.policies.stakes``): MaskablePPO's MLP policy plus
the skip on the discard-and-draw logits, for training.

``StakesSkipPolicy`` is the ``policy`` a training run with ``stakes_skip: true`` hands to
MaskablePPO (``agents.training``): ``agents.policies.masked_torch.MaskedMlpPolicy`` with the skip.
Its MLP extractor (``StakesLatent``) passes the skip's observation entries along with the actor's
latent; the policy adds ``SKIP_SCALE`` times the learned weights times those entries to the
discard-and-draw logits. ``skip_arrays()`` gives what the numpy and ONNX exports need, the scale
folded into the weights, so that every form of the policy picks the same moves.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.policies.masked_torch import MaskedMlpPolicy
from agents.policies.stakes import SKIP_SCALE, skip_index


class StakesLatent(torch.nn.Module):
    """An MLP extractor whose actor latent also carries the skip's observation entries."""

    def __init__(self, inner: torch.nn.Module, index: np.ndarray) -> None:
        super().__init__()
        self.inner = inner
        self.register_buffer("index", torch.as_tensor(index.reshape(-1), dtype=torch.long), persistent=False)
        self.latent_dim_pi = inner.latent_dim_pi  # the action_net reads only the MLP's part
        self.latent_dim_vf = inner.latent_dim_vf

    @property
    def policy_net(self) -> torch.nn.Module:  # what NumpyPolicy.from_sb3 reads the actor's layers from
        return self.inner.policy_net

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.inner.forward_actor(features), features.index_select(1, self.index)], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.inner.forward_critic(features)


class StakesSkipPolicy(MaskedMlpPolicy):
    """MaskablePPO's MLP policy plus the stakes skip on the discard-and-draw logits."""

    def _build_mlp_extractor(self) -> None:
        super()._build_mlp_extractor()
        index = skip_index(self.observation_space.shape[0])
        self.mlp_extractor = StakesLatent(self.mlp_extractor, index)
        self.skip_shape = index.shape
        self.skip_weight = torch.nn.Parameter(torch.zeros(index.shape[0]))

    def _get_action_dist_from_latent(self, latent_pi: torch.Tensor):
        width = self.mlp_extractor.latent_dim_pi
        logits = self.action_net(latent_pi[:, :width])
        segments = latent_pi[:, width:].view(-1, *self.skip_shape)
        skip = torch.einsum("bka,k->ba", segments, self.skip_weight) * SKIP_SCALE
        moves = self.skip_shape[1]
        logits = torch.cat([logits[:, :moves] + skip, logits[:, moves:]], dim=1)
        return self.action_dist.proba_distribution(action_logits=logits)

    def skip_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(index, weight) for ``NumpyPolicy``: the scale folded into the weights."""
        index = self.mlp_extractor.index.cpu().numpy().reshape(self.skip_shape)
        weight = self.skip_weight.detach().cpu().numpy().astype(np.float32) * SKIP_SCALE
        return index, weight
