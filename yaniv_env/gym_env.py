"""Yaniv as a Gymnasium single-agent environment: the learner holds one seat, opponents the rest.

``gymnasium.make(yaniv_env.GYM_ID, num_players=3, opponents=[...])`` after ``import yaniv_env``
(the id's version is the observation layout version, ``yaniv_env.encoding.LAYOUT_VERSION``).

* Observation: the learner's observation vector (``Box(0, 1, (N,), float32)``, the layout of
  ``yaniv_env.encoding``); its action mask is ``env.action_masks()`` (sb3-contrib's protocol, so
  masking works inside vector environments) and ``info["action_mask"]``.
* Action: ``Discrete`` over the action table of ``yaniv_env.encoding``.
* Opponents: one per other seat, or one for all; each is an agent (an object with
  ``act(view) -> move`` on its seat's ``yaniv.PlayerView``, the protocol of ``agents``) or a
  callable ``(observation, action_mask) -> action``. The default plays uniformly at random among
  the legal actions, from the env's own generator (seeded by ``reset``).
* Seat: random each episode (from the reset seed) unless ``seat`` fixes it.
* ``reset()`` deals until the learner gets a turn: a deal that an opponent ends with a Yaniv
  before the learner's first move is dropped (it would be an episode without an action).
* ``step()`` plays the learner's action, then the opponents until it is the learner's turn again
  or the episode ends. The reward is the sum of what the learner received since its last action
  (the rewards of ``yaniv_env.aec``); when the episode ends on an opponent's move the learner
  still receives its final reward with ``terminated=True``.
* An illegal action (one the mask forbids) ends the episode with reward -1 and
  ``info["illegal_action"]`` saying why, as ``yaniv_env.env()`` does; ``illegal_action="raise"``
  raises ``ValueError`` instead. MaskablePPO never picks one. Anything that is not an integer
  action id (3.7, True, "3", None) raises ``ValueError`` naming it, whatever ``illegal_action`` says.
* The other arguments (``num_players``, ``rules``, ``episode``, ``round_reward``, ``max_turns``,
  ``render_mode``) are those of ``yaniv_env.aec.raw_env``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import gymnasium as gym
import numpy as np

from yaniv.rules import Rules
from yaniv_env.aec import raw_env

Policy = Union[Callable[[np.ndarray, np.ndarray], int], Any]


def _check_policy(policy: Policy) -> Policy:
    if isinstance(policy, (str, bytes)) or not (hasattr(policy, "act") or callable(policy)):
        raise TypeError(f"an opponent must be an agent with act(view) or a callable (observation, mask), got {policy!r}")
    return policy


class YanivGymEnv(gym.Env):
    metadata = {"render_modes": ["human", "ansi"]}

    def __init__(
        self,
        num_players: int = 2,
        rules: str | Rules | dict | None = "default",
        opponents: Policy | Sequence[Policy] | None = None,
        episode: str = "round",
        seat: int | None = None,
        max_turns: int | None = None,
        render_mode: str | None = None,
        illegal_action: str = "penalize",
        round_reward: str = "points",
    ) -> None:
        if illegal_action not in ("penalize", "raise"):
            raise ValueError(f"illegal_action must be 'penalize' or 'raise', got {illegal_action!r}")
        self.illegal_action = illegal_action
        self._ended = False
        self.aec = raw_env(
            num_players=num_players, rules=rules, episode=episode, max_turns=max_turns, render_mode=render_mode,
            round_reward=round_reward,
        )
        self.num_players = num_players
        self.render_mode = render_mode
        if seat is not None and (type(seat) is not int or not 0 <= seat < num_players):
            raise ValueError(f"seat must be None or a seat from 0 to {num_players - 1}, got {seat!r}")
        self.fixed_seat = seat
        self.set_opponents(opponents)
        agent = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent)["observation"]
        self.action_space = self.aec.action_space(agent)
        self.seat = 0
        self._mask = np.zeros(self.action_space.n, dtype=np.int8)

    def set_opponents(self, opponents: Policy | Sequence[Policy] | None) -> None:
        """One opponent for every other seat, or a sequence with one per seat (the learner's ignored)."""
        if opponents is None:
            self._opponents = [self._uniform_opponent] * self.num_players
        elif isinstance(opponents, Sequence) and not isinstance(opponents, (str, bytes)):
            if len(opponents) not in (self.num_players - 1, self.num_players):
                raise ValueError(
                    f"give {self.num_players - 1} opponents (or one per seat, {self.num_players}), got {len(opponents)}"
                )
            acts = [_check_policy(p) for p in opponents]
            self._opponents = acts if len(acts) == self.num_players else None
            self._others = acts
        else:
            self._opponents = [_check_policy(opponents)] * self.num_players

    def _uniform_opponent(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The default opponent: uniform among the legal actions, from the env's own seeded generator."""
        return int(self.np_random.choice(np.flatnonzero(mask)))

    def _opponent_for(self, seat: int) -> Policy:
        if self._opponents is not None:
            return self._opponents[seat]
        # num_players - 1 opponents: they fill the other seats in order.
        return self._others[(seat - self.seat - 1) % self.num_players]

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            for policy in {id(p): p for p in self._opponents or self._others}.values():
                if hasattr(policy, "reset"):
                    policy.reset(int(self.np_random.integers(2**63)))
        # An opponent seated before the learner may call Yaniv on its very first turn and end
        # the episode before the learner acts. Gymnasium has no way to start an episode that is
        # already over, so such a deal is dropped and the next one played (from the same seed
        # stream, so determinism holds).
        for _ in range(1000):
            self.aec.reset(seed=int(self.np_random.integers(2**63)), options=options)
            self.seat = self.fixed_seat if self.fixed_seat is not None else int(self.np_random.integers(self.num_players))
            self.learner = self.aec.possible_agents[self.seat]
            self._ended = False
            _, done = self._play_opponents()
            if not done:
                return self._observe(done)
        raise RuntimeError("1000 deals in a row ended before the learner's first turn")

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.aec._mirror is None:
            raise RuntimeError("step() before reset(): call reset() first")
        if self._done() or self.aec.agent_selection != self.learner:
            raise RuntimeError("step() called after the episode ended; call reset()")
        action = self.aec.table.check(action)  # a non-integer is an error, not an illegal move
        if not self._mask[action]:
            reason = self._illegal_reason(action)
            if self.illegal_action == "raise":
                raise ValueError(reason)
            self._ended = True
            obs = self.aec.observe(self.learner)["observation"]
            self._mask = np.zeros_like(self._mask)
            return obs, -1.0, True, False, {"action_mask": self._mask, "seat": self.seat, "illegal_action": reason}
        self.aec.step(action)
        reward = self.aec.rewards[self.learner]
        more, done = self._play_opponents()
        obs, info = self._observe(done)
        terminated = self.aec.terminations[self.learner]
        truncated = self.aec.truncations[self.learner] and not terminated
        return obs, float(reward + more), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (sb3-contrib's MaskablePPO protocol)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        return self.aec.render()

    # ------------------------------------------------------------------------------------------

    def _done(self) -> bool:
        return self._ended or self.aec.terminations[self.learner] or self.aec.truncations[self.learner]

    def _illegal_reason(self, action: int) -> str:
        return f"illegal action {action} ({self.aec.table.describe(action)}): {self.aec.illegal_reason(action)}"

    def _play_opponents(self) -> tuple[float, bool]:
        """Opponents move until the learner is to act or the episode ends; the learner's rewards meanwhile."""
        aec = self.aec
        reward = 0.0
        while not self._done() and aec.agent_selection != self.learner:
            agent = aec.agent_selection
            seat = aec.agent_name_mapping[agent]
            policy = self._opponent_for(seat)
            if hasattr(policy, "act"):
                view = aec.game.view(seat)
                action = aec.table.to_action(policy.act(view), view)
            else:
                obs = aec.observe(agent)
                action = policy(obs["observation"], obs["action_mask"])
            aec.step(int(action))
            reward += aec.rewards[self.learner]
        return reward, self._done()

    def _observe(self, done: bool) -> tuple[np.ndarray, dict]:
        seat = self.seat
        obs = self.aec.observe(self.learner)
        self._mask = obs["action_mask"]
        return obs["observation"], {"action_mask": self._mask, "seat": seat}
