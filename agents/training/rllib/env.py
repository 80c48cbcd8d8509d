"""Yaniv self-play as an RLlib ``MultiAgentEnv``: the PettingZoo AEC table, seats played by
RLModules through the policy mapping, or by baseline bots inside the environment.

    env = YanivMultiAgentEnv({"players": "2-4", "rules": "default", "baselines": ["heuristic"], ...})
    obs, infos = env.reset(seed=0)              # {"player_2@learner": {"observation", "action_mask"}}
    obs, rewards, terminateds, truncateds, infos = env.step({"player_2@learner": action})

Each episode (a round, or a game with ``episode: game``) draws, from the env's own generator, a
table size from ``players`` and each seat's player:

* one seat, uniformly, is the learner (module ``learner``, the policy being trained);
* every other seat: a baseline bot (uniformly among ``baselines``) with probability
  ``baseline_fraction``; otherwise the learner again with probability ``shared_fraction`` (one
  shared policy, whose moves in every such seat are trained on), and always while the pool has no
  snapshot; otherwise a frozen snapshot: the newest with probability ``latest_fraction``, else one
  of the older ones uniformly.

The game is ``yaniv_env.aec.raw_env`` (its moves on the compiled core). Seats played by a module
are agents named ``player_<seat>@<module>``, so RLlib's policy mapping is the fixed function
``module_for_agent`` (the text after ``@``); baseline seats are not agents: the env plays them
(``agents.registry.make_agent``) between the agents' turns. Turn-based, as PettingZoo's AEC: a
step returns the observation of the one agent to move next; the episode's rewards
(``yaniv_env.aec``) are paid at its end to every agent that played, with its last observation (the
mask all zeros) and ``terminated`` (``truncated`` when a turn cap cut the episode). A deal that
ends before any agent's first turn is dealt again. Observations are the AEC's
``{"observation", "action_mask"}`` (one padded vector for 2 to 8 seats), which the RLModule
(``agents.training.rllib.module``) reads, masking illegal actions.

The snapshot modules ``snapshot_0`` .. ``snapshot_<pool_size - 1>`` exist from the start; the
first ``pool_fill`` of them hold the pool, oldest first. The trainer sets that count in every
process running envs with ``publish_pool_fill`` (the process-wide value each env reads at its
episodes' start), after writing the snapshots' weights into the modules.

Contract: all randomness flows from the seed of ``reset`` (RLlib seeds each env from the config's
seed, the runner and the env index), so the same seeds and actions give the same episodes; an
illegal action raises ValueError (``raw_env``), which the masking module never sends.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from yaniv_env.aec import raw_env

LEARNER = "learner"
"""The module being trained."""
ENV_KEYS = ("players", "rules", "episode", "round_reward", "max_turns", "baselines", "baseline_fraction",
            "shared_fraction", "latest_fraction", "pool_size")
"""The env config's keys, TrainConfig keys of the same name (``env_config``)."""

_POOL_FILL = [0]  # snapshots in the pool, as published in this process


def snapshot_module(slot: int) -> str:
    """The module id of pool slot ``slot`` (0: the oldest snapshot)."""
    return f"snapshot_{slot}"


def module_ids(pool_size: int) -> list[str]:
    """Every module of a run: the learner, then the snapshot slots."""
    return [LEARNER] + [snapshot_module(k) for k in range(pool_size)]


def agent_id(seat: int, module: str) -> str:
    return f"player_{seat}@{module}"


def module_for_agent(agent: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib's ``policy_mapping_fn``: the module named in the agent id (``agent_id``)."""
    return agent.rpartition("@")[2]


def publish_pool_fill(count: int) -> None:
    """Sets, in this process, how many snapshot slots hold a snapshot (read at each episode's start)."""
    if type(count) is not int or count < 0:
        raise ValueError(f"a pool holds a count of snapshots >= 0, got {count!r}")
    _POOL_FILL[0] = count


def pool_fill() -> int:
    return _POOL_FILL[0]


def env_config(config: Any) -> dict[str, Any]:
    """The env config of a ``TrainConfig`` (plain values: it travels to the env runners)."""
    out = {key: getattr(config, key) for key in ENV_KEYS}
    out["players"] = list(config.player_counts)
    out["baselines"] = list(config.baselines)
    return out


class YanivMultiAgentEnv(MultiAgentEnv):
    """See the module docstring."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        c = dict(config or {})
        missing = [key for key in ENV_KEYS if key not in c]
        if missing:
            raise ValueError(f"YanivMultiAgentEnv: the env config lacks {', '.join(missing)}")
        from agents.registry import make_agent

        self.counts = tuple(int(n) for n in c["players"])
        self.baseline_fraction = float(c["baseline_fraction"])
        self.shared_fraction = float(c["shared_fraction"])
        self.latest_fraction = float(c["latest_fraction"])
        self.pool_size = int(c["pool_size"])
        self.baseline_specs = list(c["baselines"])
        self.tables = {
            n: raw_env(num_players=n, rules=c["rules"], episode=c["episode"], max_turns=c["max_turns"],
                       round_reward=c["round_reward"])
            for n in self.counts
        }
        self.bots = {spec: make_agent(spec) for spec in self.baseline_specs}
        first = self.tables[self.counts[0]]
        self.single_observation_space = first.observation_space(first.possible_agents[0])
        self.single_action_space = first.action_space(first.possible_agents[0])
        self.possible_agents = [agent_id(seat, m) for seat in range(max(self.counts))
                                for m in module_ids(self.pool_size)]
        self.agents = []
        self.observation_spaces = {a: self.single_observation_space for a in self.possible_agents}
        self.action_spaces = {a: self.single_action_space for a in self.possible_agents}
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        self.rng = np.random.default_rng()
        self.aec = first
        self.players: list[str | None] = []  # per seat: an agent id, or None for a baseline seat
        self.seat_bots: list[Any] = []
        self.observed: set[int] = set()

    # -- the draw ---------------------------------------------------------------------------------

    def _draw_seat(self, filled: int) -> str | None:
        """A non-learner seat's module, or None for a baseline (see the module docstring)."""
        rng = self.rng
        if self.baseline_specs and rng.random() < self.baseline_fraction:
            return None
        if not filled or rng.random() < self.shared_fraction:
            return LEARNER
        if filled == 1 or rng.random() < self.latest_fraction:
            return snapshot_module(filled - 1)
        return snapshot_module(int(rng.integers(filled - 1)))

    def _new_episode(self) -> None:
        rng = self.rng
        n = self.counts[int(rng.integers(len(self.counts)))]
        self.aec = self.tables[n]
        learner_seat = int(rng.integers(n))
        filled = min(pool_fill(), self.pool_size)
        self.players, self.seat_bots = [], []
        for seat in range(n):
            module = LEARNER if seat == learner_seat else self._draw_seat(filled)
            self.players.append(None if module is None else agent_id(seat, module))
            if module is None:
                bot = self.bots[self.baseline_specs[int(rng.integers(len(self.baseline_specs)))]]
                bot.reset(int(rng.integers(2**63)))
                self.seat_bots.append(bot)
            else:
                self.seat_bots.append(None)
        self.aec.reset(seed=int(rng.integers(2**63)))
        self.observed = set()
        self.agents = [p for p in self.players if p is not None]

    # -- the MultiAgentEnv API --------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        while True:
            self._new_episode()
            if self._play_bots():
                break  # an agent is to move (else the bots ended the deal: deal again)
        return self._observe_to_move(), {}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        seat = self._to_move()
        agent = self.players[seat]
        if agent is None or agent not in action_dict:
            raise ValueError(f"YanivMultiAgentEnv: expected an action for {agent!r}, got {sorted(action_dict)}")
        self.aec.step(int(action_dict[agent]))
        if self._play_bots():
            obs = self._observe_to_move()
            return obs, {a: 0.0 for a in obs}, {"__all__": False}, {"__all__": False}, {}
        return self._final()

    # -- internals --------------------------------------------------------------------------------

    def _to_move(self) -> int:
        return self.aec.agent_name_mapping[self.aec.agent_selection]

    def _over(self) -> bool:
        aec = self.aec
        first = aec.possible_agents[0]
        return aec.terminations[first] or aec.truncations[first]

    def _play_bots(self) -> bool:
        """Plays the baseline seats until an agent is to move (True) or the episode is over (False)."""
        aec = self.aec
        while not self._over():
            seat = self._to_move()
            bot = self.seat_bots[seat]
            if bot is None:
                return True
            view = aec.game.view(seat)
            aec.step(aec.table.to_action(bot.act(view), view))
        return False

    def _observe_to_move(self) -> dict[str, Any]:
        seat = self._to_move()
        self.observed.add(seat)
        return {self.players[seat]: self.aec.observe(self.aec.possible_agents[seat])}

    def _final(self) -> tuple[dict, dict, dict, dict, dict]:
        aec = self.aec
        obs, rewards, terminated, truncated = {}, {}, {}, {}
        for seat in sorted(self.observed):
            agent, player = self.players[seat], aec.possible_agents[seat]
            obs[agent] = aec.observe(player)
            rewards[agent] = float(aec.rewards[player])
            terminated[agent] = bool(aec.terminations[player])
            truncated[agent] = bool(aec.truncations[player])
        terminated["__all__"] = all(terminated[a] for a in obs)
        truncated["__all__"] = not terminated["__all__"]
        self.agents = []
        return obs, rewards, terminated, truncated, {}
