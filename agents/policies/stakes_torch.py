"""The torch form of the stakes skip (``agents.policies.stakes``): MaskablePPO's MLP policy plus
the skip on the discard-and-draw logits, for training.

``StakesSkipPolicy`` is the ``policy`` a training run with ``stakes_skip: true`` hands to
MaskablePPO (``agents.training``). Its MLP extractor (``StakesLatent``) passes the skip's
observation entries along with the actor's latent; the policy adds ``SKIP_SCALE`` times the learned
weights times those entries to the discard-and-draw logits. ``skip_arrays()`` gives what the numpy
and ONNX exports need, the scale folded into the weights, so that every form of the policy picks
the same moves.

``hidden_size`` (a policy keyword, 0 by default; ``critic_hidden: true`` in a training config sets
it to ``yaniv_env.core.hidden.HIDDEN_SIZE``): the last ``hidden_size`` entries of the observation
are the cards the player cannot see, which the critic reads and the actor does not
(``HiddenCriticLatent``: the actor's MLP takes the first entries, the critic's all of them). The
actor, and so every exported form, is the same network as without them; a baseline that depends
on hidden information leaves the policy gradient unbiased (``yaniv_env.core.hidden`` says why).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor

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
        return torch.cat([self.inner.forward_actor(features), features[:, self.index]], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.inner.forward_critic(features)


class HiddenCriticLatent(torch.nn.Module):
    """Separate actor and critic MLPs, the actor reading the first ``actor_size`` features only."""

    def __init__(self, actor_size: int, features_dim: int, net_arch: Any, activation_fn: Any, device: Any) -> None:
        super().__init__()
        if not isinstance(net_arch, dict):  # SB3's list form: the same layers for both
            net_arch = {"pi": net_arch, "vf": net_arch}
        pi, vf = net_arch.get("pi", []), net_arch.get("vf", [])
        self.actor_size = actor_size
        self.actor = MlpExtractor(actor_size, {"pi": list(pi), "vf": []}, activation_fn, device)
        self.critic = MlpExtractor(features_dim, {"pi": [], "vf": list(vf)}, activation_fn, device)
        self.latent_dim_pi = self.actor.latent_dim_pi
        self.latent_dim_vf = self.critic.latent_dim_vf

    @property
    def policy_net(self) -> torch.nn.Module:
        return self.actor.policy_net

    @property
    def value_net(self) -> torch.nn.Module:
        return self.critic.value_net

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.actor.forward_actor(features[:, : self.actor_size])

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.critic.forward_critic(features)


class StakesSkipPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's MLP policy plus the stakes skip on the discard-and-draw logits; with
    ``hidden_size``, a critic that also reads the observation's last ``hidden_size`` entries."""

    def __init__(self, *args: Any, hidden_size: int = 0, **kwargs: Any) -> None:
        self.hidden_size = hidden_size  # read by _build_mlp_extractor, which the base __init__ calls
        super().__init__(*args, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "hidden_size": self.hidden_size}

    @property
    def actor_size(self) -> int:
        """The observation's entries that the actor reads: what a player sees."""
        return int(self.observation_space.shape[0]) - self.hidden_size

    def _build_mlp_extractor(self) -> None:
        if self.hidden_size:
            self.mlp_extractor = HiddenCriticLatent(self.actor_size, self.features_dim, self.net_arch,
                                                    self.activation_fn, self.device)
        else:
            super()._build_mlp_extractor()
        index = skip_index(self.actor_size)
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
