"""The learner's tables on the compiled core as the vector env of RLlib's single-agent env runners
(``rllib_env: vector``, the default).

    env = CoreTables({"config": config.to_dict()}, num_envs=64)
    obs, infos = env.reset(seed=1)           # obs {"observation": (64, N) float32, "action_mask": (64, A) int8}
    obs, rewards, terminateds, truncateds, infos = env.step(actions)
    env.set_pool([(step, numpy_policy), ...])  # the run's snapshots, oldest first (the trainer pushes them)

What SB3's runs train on (``agents.training.selfplay.CoreSelfPlayEnv``), with RLlib's API: one
``yaniv_env.vector.YanivVectorEnv`` of ``num_envs`` tables (``envs_per_runner``), every table one
learner seat whose other seats are drawn per episode from an ``OpponentPool`` (baselines with
``baseline_fraction``, else the newest snapshot with ``latest_fraction``, else an older one), the
bots moving inside compiled code and each snapshot's seats of all tables in one batched numpy
forward pass. Rules: ``rules``, or per game from ``rule_sets`` / ``rule_space``
(``TrainConfig.training_rule_sets``).

RLlib's contract, and why each part: the autoreset is next-step (``AutoresetMode.NEXT_STEP``: what
``SingleAgentEnvRunner`` expects; an episode's last step returns its last observation, the next
step the new episode's first, with the action sent ignored); observations are the AEC's dict
``{"observation", "action_mask"}`` (the mask all zeros on an episode's last observation), which
``agents.training.rllib.module.MaskedActorCritic`` reads, so the module and its export are the AEC
mode's. RLlib registers the class with ``vector_entry_point`` (``gym_env_vectorize_mode:
vector_entry_point``) and builds it with the env config plus ``num_envs``.

Seeding: ``reset(seed=s)`` seeds the tables from ``numpy.random.SeedSequence(s)`` (RLlib passes the
config's seed plus the runner's index, so runners and tables get distinct streams); the same seed,
pool and actions give the same episodes. The pool's snapshots are set by ``set_pool`` in every
runner after each change (the trainer's ``push_pool``), and take effect from each table's next
episode. Bad input: an illegal action raises ValueError naming the env (``yaniv_env.vector``).
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from agents.policies.ppo import NumpyPolicy
from agents.training.config import load_config
from agents.training.selfplay import OpponentPool, compiled_baselines
from yaniv_env.vector import YanivVectorEnv


class CoreTables(gym.vector.VectorEnv):
    """See the module docstring. ``env_config["config"]``: a ``TrainConfig.to_dict()``;
    ``num_envs`` (the argument, else ``env_config["num_envs"]``, else ``envs_per_runner``)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, env_config: dict[str, Any], num_envs: int | None = None) -> None:
        if "config" not in env_config:
            raise ValueError("CoreTables: the env config holds no 'config' (a TrainConfig.to_dict())")
        config = load_config(None, base=dict(env_config["config"]))
        num_envs = int(env_config.get("num_envs", config.envs_per_runner) if num_envs is None else num_envs)
        controllers = compiled_baselines(config)
        missing = [spec for spec, c in controllers.items() if c is None]
        if missing:
            raise ValueError(f"baselines: {missing[0]!r} has no form on the compiled core, which rllib_env vector "
                             "plays (rllib_env aec plays any bot)")
        self.pool = pool = OpponentPool(config)

        def draw(rng: np.random.Generator, seats: int) -> list[Any]:
            picked = [pool.draw(rng)[1] for _ in range(seats)]
            return [controllers[p] if isinstance(p, str) else p for p in picked]

        self.tables = YanivVectorEnv(
            num_envs=num_envs, players=config.players, rules=config.rules, episode=config.episode,
            round_reward=config.round_reward, max_turns=config.max_turns, opponents=draw,
            rule_sets=config.training_rule_sets() or None, autoreset_mode=AutoresetMode.NEXT_STEP,
            round_share=config.round_share,
        )
        self.num_envs = num_envs
        self.single_observation_space = spaces.Dict({
            "observation": self.tables.single_observation_space,
            "action_mask": spaces.Box(0, 1, (self.tables.single_action_space.n,), dtype=np.int8),
        })
        self.single_action_space = self.tables.single_action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None

    def set_pool(self, snapshots: Sequence[tuple[int, NumpyPolicy]]) -> None:
        """The run's snapshots, oldest first (the pool keeps the newest ``pool_size``)."""
        self.pool.snapshots = []
        for step, policy in snapshots:
            self.pool.add(int(step), policy)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if options:
            raise ValueError(f"CoreTables.reset takes no options, got {options!r}")
        seeds = None
        if seed is not None:
            state = np.random.SeedSequence(int(seed)).generate_state(self.num_envs, dtype=np.uint32)
            seeds = [int(s) for s in state]
            self._np_random, self._np_random_seed = gym.utils.seeding.np_random(int(seed))
        obs, infos = self.tables.reset(seed=seeds)
        return self._observe(obs, infos)

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, rewards, terminated, truncated, infos = self.tables.step(np.asarray(actions))
        obs, infos = self._observe(obs, infos)
        return obs, rewards.astype(np.float32), terminated, truncated, infos

    @staticmethod
    def _observe(obs: np.ndarray, infos: dict[str, Any]) -> tuple[dict, dict]:
        mask = infos.pop("action_mask")
        infos.pop("_action_mask", None)
        return {"observation": obs, "action_mask": mask}, infos

