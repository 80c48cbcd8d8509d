"""The RLModule RLlib trains: separate actor and critic MLPs, with action masking inside.

    spec = RLModuleSpec(module_class=MaskedActorCritic, model_config={"net_arch": [128, 128], "activation": "tanh"})
    policy = numpy_policy(module.get_state(), "tanh", meta)   # the actor as agents.policies.ppo.NumpyPolicy
    module.set_state(module_state(policy, module.get_state()))  # a snapshot's actor into a module

The network is the SB3 ``MlpPolicy`` that ``agents.training.model`` builds, layer for layer: an
actor ``Linear(N, h1), act, ..., Linear(hk, A)`` and a critic ``Linear(N, h1), act, ..., Linear(hk,
1)`` of ``net_arch`` and ``activation``, no shared layers, SB3's orthogonal initialisation (gains
sqrt 2, 0.01 for the logits, 1 for the value). So the actor's weights map 1:1 onto
``NumpyPolicy`` (``numpy_policy``), and from there onto the ``.npz`` weights and the ONNX export
of ``agents.policies.export``: an RLlib-trained bot is played, exported and loaded exactly as an
SB3-trained one.

Masking: the observation is the AEC's ``{"observation", "action_mask"}``; every forward pass puts
``FLOAT_MIN`` on the logits of the actions the mask forbids, so no sampled or greedy action is ever
illegal (a row with no legal action, an agent's last observation, gets equal logits: it is never
acted on). The critic reads the observation alone. The stall rule of ``agents.policies.stall``
(from a round's 100th turn the call where legal, else no pile draws) belongs to the bot's players
(``NumpyPolicy``, the ONNX graph), as with SB3's learner, not to the module: below that turn both
pick the same moves.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from agents.policies.ppo import ACTIVATIONS, NumpyPolicy

TORCH_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
assert set(TORCH_ACTIVATIONS) == set(ACTIVATIONS)


def _mlp(sizes: list[int], activation: str, last_gain: float) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        linear = torch.nn.Linear(a, b)
        torch.nn.init.orthogonal_(linear.weight, gain=last_gain if i == len(sizes) - 2 else math.sqrt(2))
        torch.nn.init.zeros_(linear.bias)
        layers.append(linear)
        if i < len(sizes) - 2:
            layers.append(TORCH_ACTIVATIONS[activation]())
    return torch.nn.Sequential(*layers)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """See the module docstring. ``model_config``: ``net_arch`` (hidden sizes), ``activation``."""

    def setup(self) -> None:
        config = self.model_config or {}
        hidden = [int(n) for n in config.get("net_arch", [128, 128])]
        activation = config.get("activation", "tanh")
        if activation not in TORCH_ACTIVATIONS:
            known = ", ".join(TORCH_ACTIVATIONS)
            raise ValueError(f"MaskedActorCritic: unknown activation {activation!r}; known: {known}")
        n_obs = int(self.observation_space["observation"].shape[0])
        n_act = int(self.action_space.n)
        self.actor = _mlp([n_obs, *hidden, n_act], activation, 0.01)
        self.critic = _mlp([n_obs, *hidden, 1], activation, 1.0)

    def _masked_logits(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        logits = self.actor(obs["observation"])
        return torch.where(obs["action_mask"] > 0, logits, torch.full_like(logits, FLOAT_MIN))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch[Columns.OBS])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.critic(batch[Columns.OBS]["observation"]).squeeze(-1)


def actor_keys(state: dict[str, Any]) -> list[tuple[str, str]]:
    """(weight key, bias key) of each of the actor's linear layers in a module state, input first."""
    indices = sorted({int(k.split(".")[1]) for k in state if k.startswith("actor.")})
    keys = [(f"actor.{i}.weight", f"actor.{i}.bias") for i in indices]
    missing = [k for pair in keys for k in pair if k not in state]
    if not keys or missing:
        raise ValueError(f"not a MaskedActorCritic state: no actor layers or missing {missing[:2]}")
    return keys


def numpy_policy(state: dict[str, Any], activation: str, meta: dict | None = None) -> NumpyPolicy:
    """The actor of a ``MaskedActorCritic`` state (``module.get_state()``) as a ``NumpyPolicy``."""
    keys = actor_keys(state)
    weights = [np.asarray(state[w], dtype=np.float32) for w, _ in keys]
    biases = [np.asarray(state[b], dtype=np.float32) for _, b in keys]
    return NumpyPolicy(weights, biases, activation, meta)


def module_state(policy: NumpyPolicy, like: dict[str, Any]) -> dict[str, Any]:
    """``like`` (a module state) with its actor's weights replaced by ``policy``'s (a snapshot); the
    critic is kept (a snapshot module is never trained nor asked for values)."""
    if policy.route_index is not None:  # played with one tower, it would be another policy
        raise ValueError(f"the policy has towers (on {policy.route_feature}); the module has one actor")
    keys = actor_keys(like)
    if len(keys) != len(policy.weights):
        raise ValueError(f"the policy has {len(policy.weights)} layers, the module's actor {len(keys)}")
    state = dict(like)
    for (w, b), weight, bias in zip(keys, policy.weights, policy.biases):
        if tuple(np.shape(like[w])) != weight.T.shape:
            raise ValueError(f"{w}: the module has shape {np.shape(like[w])}, the policy {weight.T.shape}")
        state[w], state[b] = np.ascontiguousarray(weight.T), np.asarray(bias)
    return state
