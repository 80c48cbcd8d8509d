"""A critic that sees the hidden cards (an asymmetric actor-critic), for training only.

In Yaniv a round's return is mostly decided by cards the learner cannot see: how much the others
hold, and what the deck gives next. From the learner's own observation the critic explains little
of the return's variance, so PPO's advantages are mostly noise. Here the value network is given
the truth as well: every opponent's hand and the next card of the deck. The actor still sees only
the observation it will have in play, so the trained policy is as legal to use as any other; only
its learning signal is sharper. (The same idea as the "perfect-information distillation" critics
of PerfectDou and the oracle critics used for Mahjong and poker bots.)

Training observations are the learner's observation followed by ``privileged_size(players)``
more entries (``privileged_features``). ``PrivilegedCriticPolicy`` feeds the actor the first
``public_size`` of them and the critic all of them. The actor's layers are those of a plain
``MlpPolicy`` with ``public_size`` inputs, so ``agents.ppo.NumpyPolicy.from_sb3`` exports it like
any other: nothing that plays the policy ever needs the extra entries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, FlattenExtractor, MlpExtractor

from yaniv import POINTS
from yaniv.cards import NUM_CARDS
from yaniv.game import Game

OPPONENT_FEATURES = NUM_CARDS + 1  # the hand (multi-hot over card ids), its total / 70


def privileged_size(num_players: int) -> int:
    """Entries ``privileged_features`` adds for tables of up to ``num_players`` seats."""
    return (num_players - 1) * OPPONENT_FEATURES + NUM_CARDS


def privileged_features(game: Game, seat: int, num_players: int) -> np.ndarray:
    """What ``seat`` cannot see, as floats in [0, 1]: per opponent in seat order after it (the
    observation's order; absent seats are zeros up to ``num_players``), its hand and hand total/70;
    then the next card of the deck (all zeros when the deck is empty)."""
    out = np.zeros(privileged_size(num_players), dtype=np.float32)
    n = game.num_players
    for k in range(1, n):
        hand = game.hands[(seat + k) % n]
        base = (k - 1) * OPPONENT_FEATURES
        out[[base + c for c in hand]] = 1.0
        out[base + NUM_CARDS] = min(sum(POINTS[c] for c in hand) / 70.0, 1.0)
    if game.deck:
        out[(num_players - 1) * OPPONENT_FEATURES + game.deck[-1]] = 1.0
    return out


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
