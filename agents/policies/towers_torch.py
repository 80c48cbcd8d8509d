"""The torch form of the towers (``agents.policies.towers``): two actor and two critic MLPs, routed by a rule.

``TowerSkipPolicy`` is the ``policy`` a training run with ``towers: one_round`` hands to MaskablePPO
(``agents.training``); it is ``agents.policies.stakes_torch.StakesSkipPolicy`` with each MLP doubled.
Its extractor (``TowerLatent``) runs each tower on its own rows and hands on ``[h0, 1, 0, 0]`` for
a row of tower 0 and ``[0, 0, h1, 1]`` for one of tower 1 (the route entry set): the action and
value layers, linear over that latent, are then each tower's own last layer (the columns of ones
carry each tower's bias; the layers' own biases are frozen), and a row's loss reaches only its own
tower's weights. A batch costs
what one tower's pass costs, plus the gathering. ``tower_layers(k)`` gives tower ``k``'s layers as
``NumpyPolicy`` takes them; ``copy_tower(policy, source)`` starts both towers from a one-tower
policy's weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from stable_baselines3.common.torch_layers import MlpExtractor

from agents.policies.stakes import skip_index
from agents.policies.stakes_torch import StakesSkipPolicy
from agents.policies.towers import route_index


class TowerLatent(torch.nn.Module):
    """Two MLP extractors, each run on its own rows; the actor's latent also carries the skip's entries."""

    def __init__(self, towers: list[MlpExtractor], route: int, skip: np.ndarray) -> None:
        super().__init__()
        self.towers = torch.nn.ModuleList(towers)
        self.route = route
        self.register_buffer("index", torch.as_tensor(skip.reshape(-1), dtype=torch.long), persistent=False)
        self.latent_dim_pi = 2 * (towers[0].latent_dim_pi + 1)  # what the action_net reads
        self.latent_dim_vf = 2 * (towers[0].latent_dim_vf + 1)

    def _routed(self, features: torch.Tensor, part: str) -> torch.Tensor:
        """``[h0, 1, 0, 0]`` on tower 0's rows and ``[0, 0, h1, 1]`` on tower 1's, each tower run on its rows only."""
        routed = features[:, self.route] >= 0.5
        width = self.latent_dim_pi // 2 - 1 if part == "forward_actor" else self.latent_dim_vf // 2 - 1
        out = features.new_zeros(features.shape[0], 2 * (width + 1))
        for k, rows in enumerate((torch.nonzero(~routed).squeeze(1), torch.nonzero(routed).squeeze(1))):
            h = getattr(self.towers[k], part)(features[rows])
            ones, zeros = h.new_ones(len(rows), 1), h.new_zeros(len(rows), width + 1)
            out = out.index_copy(0, rows, torch.cat([h, ones, zeros] if k == 0 else [zeros, h, ones], dim=1))
        return out

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self._routed(features, "forward_actor"), features.index_select(1, self.index)], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self._routed(features, "forward_critic")


class TowerSkipPolicy(StakesSkipPolicy):
    """The stakes-skip policy with two towers, routed by the settings feature ``route_feature``."""

    def __init__(self, *args: Any, route_feature: str = "one_round", **kwargs: Any) -> None:
        self.route_feature = route_feature  # read by _build_mlp_extractor, which the parent's __init__ calls
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        # The action and value layers' own biases are shared by the towers: frozen (at zero when new),
        # so that each tower's bias is its column of ones alone, and a row of one tower cannot move
        # the other's logits or values through them.
        for layer in (self.action_net, self.value_net):
            layer.bias.requires_grad_(False)

    def _get_constructor_parameters(self) -> dict[str, Any]:  # saved with the model, so that load rebuilds it
        return super()._get_constructor_parameters() | {"route_feature": self.route_feature}

    def _build_mlp_extractor(self) -> None:
        size = self.observation_space.shape[0]
        towers = [MlpExtractor(self.features_dim, net_arch=self.net_arch, activation_fn=self.activation_fn,
                               device=self.device) for _ in range(2)]
        index = skip_index(size)
        self.mlp_extractor = TowerLatent(towers, route_index(size, self.route_feature), index)
        self.skip_shape = index.shape
        self.skip_weight = torch.nn.Parameter(torch.zeros(index.shape[0]))

    def _last_layer(self, layer: torch.nn.Linear, tower: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        """Tower ``tower``'s part of a linear layer over the routed latent: (weight, bias)."""
        weight = layer.weight.detach().cpu().numpy()
        at = tower * (width + 1)
        return weight[:, at : at + width].copy(), (layer.bias.detach().cpu().numpy() + weight[:, at + width]).copy()

    def tower_layers(self, tower: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Tower ``tower``'s actor as (weights, biases), each weight (out, in), the action layer last."""
        linears = [m for m in self.mlp_extractor.towers[tower].policy_net if isinstance(m, torch.nn.Linear)]
        weights = [m.weight.detach().cpu().numpy().copy() for m in linears]
        biases = [m.bias.detach().cpu().numpy().copy() for m in linears]
        w, b = self._last_layer(self.action_net, tower, self.mlp_extractor.towers[tower].latent_dim_pi)
        return weights + [w], biases + [b]


def copy_tower(policy: TowerSkipPolicy, source: Any) -> None:
    """Both towers of ``policy`` start as the one-tower ``source`` policy (a ``StakesSkipPolicy`` of the
    same ``net_arch``): every row then gets the source's logits and value, and each tower moves on
    from there on its own rows. For a run that splits a trained network in two."""
    inner = source.mlp_extractor.inner
    with torch.no_grad():
        for tower in policy.mlp_extractor.towers:
            tower.load_state_dict(inner.state_dict())
        for mine, theirs in ((policy.action_net, source.action_net), (policy.value_net, source.value_net)):
            width = theirs.weight.shape[1]
            mine.weight.zero_()
            mine.bias.zero_()  # frozen: each tower's bias is its column of ones
            for tower in range(2):
                mine.weight[:, tower * (width + 1) : tower * (width + 1) + width] = theirs.weight
                mine.weight[:, tower * (width + 1) + width] = theirs.bias
        policy.skip_weight.copy_(source.skip_weight)
