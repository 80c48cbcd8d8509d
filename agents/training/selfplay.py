"""The learner's environment: a table whose other seats are drawn from an opponent pool.

    pool = OpponentPool(config)
    pool.load(run_dir / "pool", state["pool"])         # a resumed run's snapshots, if any
    envs, vec_env = self_play_envs(config, pool)        # what MaskablePPO trains on

Each episode (a round, or a game with ``episode: game``) a ``SelfPlayEnv`` draws a table size from
``players`` (a fixed count, or a range such as "2-4"), puts the learner in a random seat
(``yaniv_env.gym_env.YanivGymEnv``) and gives every other seat an opponent drawn from the pool,
independently:

* with probability ``baseline_fraction``: a baseline bot, uniformly among ``baselines`` (from a
  network's split into towers on, ``towers_baselines`` where set);
* otherwise, with probability ``latest_fraction``: the newest frozen snapshot of the learner;
* otherwise: a snapshot drawn uniformly among the older ones.

Until the first snapshot exists every seat gets a baseline; with ``baseline_fraction: 1.0`` every
seat always does, and the learner never meets a snapshot. The training callback
(``agents.training.callbacks``) adds a snapshot every ``snapshot_every`` steps; the pool keeps the
newest ``pool_size``. Snapshots play with their numpy forward pass
(``agents.policies.ppo.NumpyPolicy``), sampling from their masked policy.

Where the tables run: when every baseline has a form on the compiled core (random, greedy, the
heuristic, the search; ``ppo:``, ``onnx:`` and ``default`` as batched policies), all ``n_envs``
tables are one ``yaniv_env.vector.YanivVecEnv`` (``CoreSelfPlayEnv``): the bots move inside
compiled code, and each snapshot or policy plays its seats of all tables in one batched forward
pass. Otherwise (a spec with no such form) each table is a ``SelfPlayEnv`` on the Python engine,
in a DummyVecEnv.

Contract: all randomness (table sizes, seats, opponents, deals, snapshot sampling) flows from the
seed an environment is built or reset with, so the same seeds give the same episodes. Each
environment adds the seconds its opponents spend choosing moves to ``clock[0]`` (on the core: the
seconds of its steps, the games' moves included, which are one compiled call with the bots'),
which the callback reports as the opponents' share of the rollout time.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np

from agents.base import Agent
from agents.policies.ppo import NumpyPolicy
from agents.training.config import TrainConfig
from yaniv.game import Move, PlayerView
from yaniv_env.gym_env import YanivGymEnv


class OpponentPool:
    """Baseline bots and frozen snapshots of the learner; see the module docstring for the draw."""

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.baselines = list(config.baselines)
        self.snapshots: list[tuple[int, NumpyPolicy]] = []  # (step, policy), oldest first

    def set_step(self, step: int) -> None:
        """Draw the baselines of the run at ``step`` (``TrainConfig.training_baselines``: a
        towers' stage may meet other opponents)."""
        self.baselines = list(self.config.training_baselines(step))

    @staticmethod
    def file_name(step: int) -> str:
        """The file a snapshot taken at ``step`` is saved as, in the run's pool/ folder."""
        return f"snapshot_{step:09d}.npz"

    @staticmethod
    def step_of(name: Any) -> int | None:
        """The step of a ``file_name``, or None if ``name`` is not one (a path, a temporary file)."""
        match = re.fullmatch(r"snapshot_(\d{9,12})\.npz", name) if isinstance(name, str) else None
        return int(match.group(1)) if match else None

    def add(self, step: int, policy: NumpyPolicy) -> None:
        self.snapshots.append((step, policy))
        del self.snapshots[: max(0, len(self.snapshots) - self.config.pool_size)]

    def load(self, folder: Path, names: Sequence[str]) -> None:
        """Adds the snapshots saved in ``folder`` as ``names`` (``file_name``s, oldest first)."""
        for name in names:
            step = self.step_of(name)
            if step is None:
                raise ValueError(f"{name!r} is not a snapshot file name such as {self.file_name(0)!r}")
            self.add(step, NumpyPolicy.load(folder / name))

    def draw(self, rng: np.random.Generator) -> tuple[str, Any]:
        """(label, opponent): a baseline name or a snapshot, chosen as documented."""
        c = self.config
        if not self.snapshots or (self.baselines and rng.random() < c.baseline_fraction):
            return ("baseline", self.baselines[int(rng.integers(len(self.baselines)))])
        if len(self.snapshots) == 1 or rng.random() < c.latest_fraction:
            return ("snapshot", self.snapshots[-1][1])
        return ("snapshot", self.snapshots[int(rng.integers(len(self.snapshots) - 1))][1])


class _TimedAgent:
    """A baseline agent whose act() time is added to a shared clock."""

    def __init__(self, agent: Agent, clock: list[float]) -> None:
        self.agent, self.clock, self.name = agent, clock, agent.name

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, view: PlayerView) -> Move:
        start = time.perf_counter()
        move = self.agent.act(view)
        self.clock[0] += time.perf_counter() - start
        return move


class SelfPlayEnv(gym.Env):
    """The learner's Gymnasium view with a table size and opponents drawn from the pool per episode."""

    metadata = {"render_modes": []}

    def __init__(self, config: TrainConfig, pool: OpponentPool, seed: int) -> None:
        from agents.registry import make_agent

        self.pool = pool
        self.rng = np.random.default_rng(seed)
        self.counts = config.player_counts
        self.tables = {
            n: YanivGymEnv(
                num_players=n, rules=config.rules, episode=config.episode, max_turns=config.max_turns,
                round_reward=config.round_reward,
            )
            for n in self.counts
        }
        first = self.tables[self.counts[0]]
        self.observation_space = first.observation_space
        self.action_space = first.action_space
        self.clock = [0.0]  # seconds spent choosing opponent moves
        self._bots = {name: _TimedAgent(make_agent(name), self.clock) for name in pool.baselines}
        self.table = first

    def _snapshot_player(self, policy: NumpyPolicy) -> Callable[[np.ndarray, np.ndarray], int]:
        rng = np.random.default_rng(self.rng.integers(2**63))
        clock = self.clock

        def play(observation: np.ndarray, mask: np.ndarray) -> int:
            start = time.perf_counter()
            action = policy.act(observation, mask, rng)
            clock[0] += time.perf_counter() - start
            return action

        return play

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        n = self.counts[int(self.rng.integers(len(self.counts)))]
        self.table = self.tables[n]
        opponents: list[Any] = []
        for _ in range(n - 1):
            kind, opponent = self.pool.draw(self.rng)
            opponents.append(self._bots[opponent] if kind == "baseline" else self._snapshot_player(opponent))
        self.table.set_opponents(opponents)
        return self.table.reset(seed=int(self.rng.integers(2**63)), options=options)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        return self.table.step(action)

    def action_masks(self) -> np.ndarray:
        return self.table.action_masks()


def core_controller(spec: str) -> Any | None:
    """What plays baseline ``spec`` on the compiled core (``yaniv_env.vector``): the spec itself for
    a compiled bot (random, greedy, the heuristic with numeric settings, the search), a policy with
    ``act_batch`` for ``ppo:``, ``onnx:`` and ``default``; None for a spec with neither (a planner
    among them)."""
    from agents.registry import parse_spec
    from agents.tournament.compiled import PLAN, POLICY, batched_policy, compiled_form

    form = compiled_form(spec)
    if form is None or form.kind == PLAN:  # the planner's rollouts are the tournament's alone
        return None
    if form.kind == POLICY:
        return batched_policy(spec)
    if parse_spec(spec).name == "heuristic" and not all(type(v) in (int, float) for v in form.value.values()):
        return None  # a tuple-valued setting: the vector env's spec parser takes numbers only
    return spec


def compiled_baselines(config: TrainConfig) -> dict[str, Any]:
    """Each baseline of ``config`` (the towers' stage's too) and what plays it on the compiled core
    (``core_controller``; None for one with no form there, whose presence keeps the tables on the
    Python engine)."""
    return {spec: core_controller(spec) for spec in dict.fromkeys(config.baselines + config.towers_baselines)}


class CoreSelfPlayEnv:
    """The learner's tables on the compiled core: a ``yaniv_env.vector.YanivVecEnv`` whose episodes
    draw their opponents from the pool (``OpponentPool.draw`` per seat), with the seconds spent in
    its steps (the games and every opponent's moves: one compiled call, plus the snapshots' batched
    forward passes) added to ``clock[0]``."""

    def __init__(self, config: TrainConfig, pool: OpponentPool, controllers: dict[str, Any], step: int = 0) -> None:
        from yaniv_env.vector import YanivVecEnv

        clock = self.clock = [0.0]

        def draw(rng: np.random.Generator, seats: int) -> list[Any]:
            picked = [pool.draw(rng)[1] for _ in range(seats)]
            return [controllers[p] if isinstance(p, str) else p for p in picked]

        class Timed(YanivVecEnv):
            def step_wait(self) -> Any:
                start = time.perf_counter()
                out = super().step_wait()
                clock[0] += time.perf_counter() - start
                return out

        self.vec_env = Timed(
            num_envs=config.n_envs, players=config.training_players(step), rules=config.rules, episode=config.episode,
            round_reward=config.round_reward, max_turns=config.max_turns, seed=config.seed * 1000,
            opponents=draw, rule_sets=config.training_rule_sets(step) or None, round_share=config.round_share,
            threads=config.env_threads,
        )


def self_play_envs(config: TrainConfig, pool: OpponentPool, step: int = 0) -> tuple[list[Any], Any]:
    """The learner's ``config.n_envs`` tables drawing from ``pool``, and the SB3 vector env stepping
    them (not yet seeded: the caller seeds it): on the compiled core when every baseline has a
    compiled form (``CoreSelfPlayEnv``), else ``SelfPlayEnv``s in a DummyVecEnv. Each item of the
    list has a ``clock`` of the seconds spent choosing opponent moves. ``step``: the run's step, which
    picks the rule sets, the table sizes and the pool's baselines (``TrainConfig.training_*``)."""
    pool.set_step(step)
    controllers = compiled_baselines(config)
    missing = [spec for spec, c in controllers.items() if c is None]
    if not missing:
        core = CoreSelfPlayEnv(config, pool, controllers, step)
        return [core], core.vec_env
    keys = ("rule_sets", "rule_space", "round_share", "towers_players", "towers_baselines", "towers_rule_sets")
    if any(getattr(config, k) for k in keys) or config.env_threads > 1:
        key = next((k for k in keys if getattr(config, k)), "env_threads")
        raise ValueError(f"{key}: baseline {missing[0]!r} has no form on the compiled core, and the Python "
                         "engine's tables play rules and episode only")
    from stable_baselines3.common.vec_env import DummyVecEnv

    envs = [SelfPlayEnv(config, pool, seed=config.seed * 1000 + i) for i in range(config.n_envs)]
    return envs, DummyVecEnv([lambda env=env: env for env in envs])
