"""The learner: a MaskablePPO built from the config, or loaded from a run's checkpoint.

    model = new_model(config, vec_env, tensorboard_log="runs/NAME/tb")
    model = load_model(Path("runs/NAME/checkpoints/latest.zip"))

The actor and the critic are separate MLPs of ``net_arch`` (``activation`` between layers); with
``stakes_skip`` the actor is ``agents.policies.stakes_torch.StakesSkipPolicy``, and with ``towers`` too
``agents.policies.towers_torch.TowerSkipPolicy`` (actor and critic doubled, routed by a rule). With
``learning_rate_schedule: linear`` the rate falls from ``learning_rate`` to zero at
``total_timesteps`` (SB3 reads it off the steps left after each rollout, resumed runs included).
Everything that ``new_model`` passes to MaskablePPO is saved with the model and restored by
``load_model``, which is why ``agents.training.config`` refuses to change those keys on
``--resume``. SB3 checkpoints are pickles: load only runs you trust.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.training.config import TrainConfig


def new_model(config: TrainConfig, vec_env: Any, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO with the config's hyperparameters and network (actor and critic apart)."""
    import torch
    from sb3_contrib import MaskablePPO

    policy_kwargs: dict[str, Any] = {
        "net_arch": {"pi": list(config.net_arch), "vf": list(config.net_arch)},
        "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[config.activation],
    }
    policy: Any = "MlpPolicy"
    if config.towers:
        from agents.policies.towers_torch import TowerSkipPolicy

        policy = TowerSkipPolicy
        policy_kwargs["route_feature"] = config.towers
    elif config.stakes_skip:
        from agents.policies.stakes_torch import StakesSkipPolicy

        policy = StakesSkipPolicy
    from stable_baselines3.common.utils import LinearSchedule

    learning_rate: Any = config.learning_rate
    if config.learning_rate_schedule == "linear":  # SB3 reads it off the progress left, 1 to 0 at total_timesteps
        learning_rate = LinearSchedule(config.learning_rate, 0.0, 1.0)
    return MaskablePPO(
        policy,
        vec_env,
        learning_rate=learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_range,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        policy_kwargs=policy_kwargs,
        tensorboard_log=tensorboard_log,
        seed=config.seed,
        device="cpu",
        verbose=0,
    )


def load_model(checkpoint: Path) -> Any:
    """The MaskablePPO saved at ``checkpoint``; ValueError naming the file if it is missing or unreadable."""
    from sb3_contrib import MaskablePPO

    if not checkpoint.is_file():
        raise ValueError(f"no checkpoint to resume from at {checkpoint}")
    try:
        return MaskablePPO.load(checkpoint, device="cpu")
    except Exception as error:  # a truncated or foreign file raises many kinds
        raise ValueError(f"cannot load the checkpoint {checkpoint}: {type(error).__name__}: {error}") from None
