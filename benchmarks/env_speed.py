"""Environment speed: random legal play through ``yaniv_env.env()``, observation and mask built
every turn, next to the engine alone and the unwrapped ``raw_env``.

    python benchmarks/env_speed.py [--turns 30000] [--repeats 3]

One line per configuration ending in "<number> turns/s" (the figure for ``env()``), with the
engine's own figure (``benchmarks/engine_speed.py``'s loop) and ``raw_env``'s beside it, so the
cost of the observation and of PettingZoo's wrappers shows. Each turn is ``last()`` (observation +
mask of the agent to move) then ``step()``; finished episodes are reset. Figures are turns per
second of this process's CPU time, pinned to one core, best of the repeats (the machines are
shared). Target (issue 3): 30,000 turns/s. The last line is the ceiling PettingZoo's usual wrappers
(illegal-move termination, bounds check, call order) put on ``env()`` by themselves, measured
around an environment that does nothing: ``raw_env`` is the fast path for simulation-heavy use.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

import yaniv_env
from engine_speed import turns_per_second as engine_turns_per_second


def env_turns_per_second(make, turns: int, seed: int = 0) -> float:
    env = make()
    uniforms = np.random.default_rng(seed).random(turns).tolist()
    env.reset(seed=seed)
    done = 0
    start = time.process_time()
    while done < turns:
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            if not env.agents:
                env.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[int(uniforms[done] * len(legal))]))
        done += 1
    return turns / (time.process_time() - start)


class NoopEnv(AECEnv):
    """Two agents, a fixed observation, nothing else: what PettingZoo's wrappers cost by themselves."""

    metadata = {"render_modes": [], "name": "noop", "is_parallelizable": False}

    def __init__(self) -> None:
        super().__init__()
        self.possible_agents = ["a", "b"]
        template = yaniv_env.raw_env(num_players=2)
        self._space = template.action_space("player_0")
        self._obs = {
            "observation": np.zeros(template.observer.size, np.float32),
            "action_mask": np.ones(template.table.size, np.int8),
        }

    def action_space(self, agent):
        return self._space

    def reset(self, seed=None, options=None) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = "a"

    def observe(self, agent):
        return self._obs

    def step(self, action) -> None:
        self._cumulative_rewards[self.agent_selection] = 0.0
        self.agent_selection = "b" if self.agent_selection == "a" else "a"
        self._accumulate_rewards()


def wrapped_noop() -> AECEnv:
    return wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(NoopEnv(), illegal_reward=-1))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=30_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    for players in (2, 4):
        def best(measure) -> float:
            return max(measure(r) for r in range(args.repeats))

        engine = best(lambda r: engine_turns_per_second(players, "default", args.turns * 3, seed=r))
        raw = best(lambda r: env_turns_per_second(lambda: yaniv_env.raw_env(num_players=players), args.turns, r))
        wrapped = best(lambda r: env_turns_per_second(lambda: yaniv_env.env(num_players=players), args.turns, r))
        print(
            f"env  players={players}  engine {engine:,.0f} turns/s | raw_env {raw:,.0f} turns/s | "
            f"env() {wrapped:,.0f} turns/s"
        )
    floor = max(env_turns_per_second(wrapped_noop, args.turns, r) for r in range(args.repeats))
    print(f"PettingZoo's wrappers around an env that does nothing: {floor:,.0f} turns/s")


if __name__ == "__main__":
    main()
