"""The policy of ``agents.privileged``: MaskablePPO's MLP policy with an actor that reads the
first ``public_size`` observation entries and a critic that reads them all."""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, FlattenExtractor, MlpExtractor


class PublicSlice(BaseFeaturesExtractor):
    """The actor's features: the first ``public_size`` entries of the training observation."""

    def __init__(self, observation_space: spaces.Box, public_size: int) -> None:
        super().__init__(observation_space, public_size)
        self.public_size = public_size

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return observations[:, : self.public_size]


class SplitMlpExtractor(torch.nn.Module):
    """SB3's ``MlpExtractor`` with different inputs for the actor and the critic."""

    def __init__(self, public_size: int, full_size: int, net_arch: dict | list[int], activation_fn: type) -> None:
        super().__init__()
        pi, vf = (net_arch["pi"], net_arch["vf"]) if isinstance(net_arch, dict) else (net_arch, net_arch)
        actor = MlpExtractor(public_size, {"pi": list(pi), "vf": []}, activation_fn)
        critic = MlpExtractor(full_size, {"pi": [], "vf": list(vf)}, activation_fn)
        self.policy_net, self.value_net = actor.policy_net, critic.value_net
        self.latent_dim_pi, self.latent_dim_vf = actor.latent_dim_pi, critic.latent_dim_vf

    def forward(self, features: Any) -> tuple[torch.Tensor, torch.Tensor]:
        pi_features, vf_features = features
        return self.forward_actor(pi_features), self.forward_critic(vf_features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class PrivilegedCriticPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's MLP policy whose actor reads the first ``public_size`` observation entries
    and whose critic reads them all (the hidden cards included)."""

    def __init__(self, *args: Any, public_size: int, **kwargs: Any) -> None:
        self.public_size = public_size
        kwargs["share_features_extractor"] = False
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        # Called by _build once both feature extractors exist: the actor's becomes the slice.
        full = self.observation_space.shape[0]
        if not 0 < self.public_size < full:
            raise ValueError(f"public_size must be between 0 and the observation size {full}, got {self.public_size}")
        if not isinstance(self.vf_features_extractor, FlattenExtractor):
            raise ValueError("PrivilegedCriticPolicy takes flat observations (the default FlattenExtractor)")
        self.features_extractor = self.pi_features_extractor = PublicSlice(self.observation_space, self.public_size)
        self.mlp_extractor = SplitMlpExtractor(self.public_size, full, self.net_arch, self.activation_fn)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(public_size=self.public_size)
        return data
