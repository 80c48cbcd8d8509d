"""Training a Yaniv agent with MaskablePPO: what ``train.py`` is made of.

    from agents.training import new_run, resume_run, OpponentPool, self_play_envs, SelfPlayCallback

=========================  ====================================================================
module                     job
=========================  ====================================================================
``config``                 ``TrainConfig`` (every key with its doc and range), ``load_config``,
                           the keys that ``--resume`` may not change
``runs``                   a run's folder: ``new_run``, ``resume_run``, state.json and its
                           schema, the write order that survives a kill, the final summary
``model``                  the MaskablePPO learner: ``new_model``, ``load_model``
``selfplay``               ``OpponentPool`` (baselines and snapshots) and ``SelfPlayEnv``
``imitation``              the head start: collecting a bot's decisions, behaviour cloning, DAgger
``expert``                 the stage after PPO: the network learns the moves of its own planner
``callbacks``              ``SelfPlayCallback`` (snapshots, evaluation, checkpoints, progress) and
                           ``evaluate_policy``
=========================  ====================================================================

Each module's docstring is its manual. Measurements of the recipes: docs/experiments.md.
"""

from agents.training.callbacks import SelfPlayCallback, evaluate_policy
from agents.training.config import (
    FIXED_ON_RESUME, ConfigError, TrainConfig, load_config, refuse_changes_on_resume,
)
from agents.training.expert import expert_stage, expert_summary
from agents.training.imitation import collect_imitation_data, imitate, imitation_stage, imitation_summary
from agents.training.model import load_model, new_model
from agents.training.runs import (
    Run, atomic_write_text, load_state, new_run, new_state, resume_run, save_model_atomically, save_state,
)
from agents.training.selfplay import OpponentPool, SelfPlayEnv, self_play_envs

__all__ = [
    "FIXED_ON_RESUME", "ConfigError", "OpponentPool", "Run", "SelfPlayCallback", "SelfPlayEnv", "TrainConfig",
    "atomic_write_text", "collect_imitation_data", "evaluate_policy", "expert_stage", "expert_summary", "imitate",
    "imitation_stage", "imitation_summary", "load_config", "load_model", "load_state", "new_model", "new_run", "new_state",
    "refuse_changes_on_resume", "resume_run", "save_model_atomically", "save_state", "self_play_envs",
]
