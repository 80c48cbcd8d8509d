"""The learner: a MaskablePPO built from the config, or loaded from a run's checkpoint.

    model = new_model(config, vec_env, tensorboard_log="runs/NAME/tb")
    model = load_model(Path("runs/NAME/checkpoints/latest.zip"))

The actor and the critic are separate MLPs of ``net_arch`` (the critic's ``critic_arch`` where it
is set; ``activation`` between layers) in
``agents.policies.masked_torch.MaskedMlpPolicy`` (MaskablePPO's ``MlpPolicy``, number for number,
its masked distribution computed once); with ``stakes_skip`` the actor is
``agents.policies.stakes_torch.StakesSkipPolicy``, and with ``towers`` too
``agents.policies.towers_torch.TowerSkipPolicy`` (actor and critic doubled, routed by a rule), from
the first step, or from ``towers_from`` on, where ``split_towers`` turns the model's one network
into both towers (each a copy of it; the callback calls it). With
``learning_rate_schedule: linear`` the rate falls from ``learning_rate`` to zero at
``total_timesteps`` (SB3 reads it off the steps left after each rollout, resumed runs included);
with ``towers_learning_rate`` too it is two ramps (``TowerRamps``): to zero at ``towers_from``, so
the one network ends annealed as a run without towers does, then from that rate to zero at the end.
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
        "net_arch": {"pi": list(config.net_arch), "vf": list(config.critic_arch or config.net_arch)},
        "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[config.activation],
    }
    from agents.policies.masked_torch import MaskedMlpPolicy

    policy: Any = MaskedMlpPolicy
    if config.towers and not config.towers_from:
        from agents.policies.towers_torch import TowerSkipPolicy

        policy = TowerSkipPolicy
        policy_kwargs["route_feature"] = config.towers
    elif config.stakes_skip:
        from agents.policies.stakes_torch import StakesSkipPolicy

        policy = StakesSkipPolicy
    return MaskablePPO(
        policy,
        vec_env,
        learning_rate=learning_rate(config),
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


def learning_rate(config: TrainConfig) -> Any:
    """The rate MaskablePPO takes for ``config``: a number, SB3's linear schedule (read off the
    progress left, 1 to 0 at total_timesteps) or, with ``towers_learning_rate``, ``TowerRamps``."""
    from stable_baselines3.common.utils import LinearSchedule

    if config.learning_rate_schedule == "linear" and config.towers_learning_rate:
        return TowerRamps(config.learning_rate, config.towers_learning_rate, config.towers_from,
                          config.total_timesteps)
    if config.learning_rate_schedule == "linear":
        return LinearSchedule(config.learning_rate, 0.0, 1.0)
    return config.learning_rate


def load_model(checkpoint: Path) -> Any:
    """The MaskablePPO saved at ``checkpoint``; ValueError naming the file if it is missing or unreadable."""
    from sb3_contrib import MaskablePPO

    if not checkpoint.is_file():
        raise ValueError(f"no checkpoint to resume from at {checkpoint}")
    try:
        return MaskablePPO.load(checkpoint, device="cpu")
    except Exception as error:  # a truncated or foreign file raises many kinds
        raise ValueError(f"cannot load the checkpoint {checkpoint}: {type(error).__name__}: {error}") from None


class TowerRamps:
    """The learning rate of a run that splits into towers (``towers_learning_rate``): ``rate``
    falling linearly to zero at step ``towers_from``, then ``towers_rate`` falling linearly to zero
    at ``total``, so that the one network ends annealed, as a run without towers does, and the
    towers start a ramp of their own. SB3 calls it with the progress left (1 at step 0, 0 at
    ``total``); on --resume ``reschedule`` builds it again from the config."""

    def __init__(self, rate: float, towers_rate: float, towers_from: int, total: int) -> None:
        self.rate, self.towers_rate, self.towers_from, self.total = rate, towers_rate, towers_from, total

    def __call__(self, progress_remaining: float) -> float:
        step = (1.0 - progress_remaining) * self.total
        if step < self.towers_from:
            return self.rate * (1.0 - step / self.towers_from)
        return self.towers_rate * max(0.0, 1.0 - (step - self.towers_from) / max(1, self.total - self.towers_from))

    def __repr__(self) -> str:
        return (f"TowerRamps({self.rate} to 0 at step {self.towers_from:,}, then {self.towers_rate} to 0 at "
                f"{self.total:,})")


def reschedule(model: Any, config: TrainConfig) -> None:
    """A resumed ``model``'s learning rate read against the ``config`` it resumes with: its
    ``TowerRamps`` (rebuilt from the config, so a one-network run that splits on --resume gets the
    towers' ramp set then) following ``total_timesteps``. SB3's own schedules read the progress
    left and need nothing."""
    rate = learning_rate(config)
    if isinstance(rate, TowerRamps):
        model.learning_rate = rate
        model._setup_lr_schedule()


def has_towers(model: Any) -> bool:
    """Whether ``model``'s policy has its towers (``agents.policies.towers_torch``)."""
    from agents.policies.towers_torch import TowerSkipPolicy

    return isinstance(model.policy, TowerSkipPolicy)


def split_towers(model: Any, route_feature: str) -> None:
    """Give ``model`` (a MaskablePPO with a ``StakesSkipPolicy``) the towers routed by
    ``route_feature``, both copies of its network (``copy_tower``), so that every action's
    probability and every value stay what they were; saved and loaded from then on as towers. The
    optimizer starts afresh on the new parameters (Adam's moments of the old ones do not map onto
    two towers)."""
    from agents.policies.stakes_torch import StakesSkipPolicy
    from agents.policies.towers_torch import TowerSkipPolicy, copy_tower

    if type(model.policy) is not StakesSkipPolicy:
        raise ValueError(f"towers split a stakes-skip network, and this model's is {type(model.policy).__name__}")
    kwargs = dict(model.policy_kwargs, route_feature=route_feature)
    policy = TowerSkipPolicy(model.observation_space, model.action_space, model.lr_schedule, **kwargs).to(model.device)
    copy_tower(policy, model.policy)
    policy.set_training_mode(model.policy.training)
    model.policy, model.policy_class, model.policy_kwargs = policy, TowerSkipPolicy, kwargs
