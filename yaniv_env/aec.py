"""Yaniv as a PettingZoo AEC environment.

=====================  ==========================================================================
Import                 ``import yaniv_env; env = yaniv_env.env(num_players=4)``
Agents                 ``player_0`` .. ``player_{n-1}``, 2 to 8; the seat order is the turn order
Actions                ``Discrete``: every (discard, draw) pair plus Yaniv and the two slamdown
                       choices; 189 ids with 5-card hands (see ``yaniv_env.encoding``)
Observations           ``{"observation": Box(0, 1, (N,), float32), "action_mask": Box(0, 1, (A,), int8)}``;
                       N = ``encoding.observation_size(hand_size)``; the mask is all zeros for
                       agents not on turn
Episode                ``"round"`` (one round, from the given scores) or ``"game"`` (rounds until
                       the game ends)
Rewards                at the end of the episode only (0 before), see below
=====================  ==========================================================================

Arguments
---------
``num_players`` (2-8), ``rules`` (a preset name, a ``yaniv.Rules`` or a mapping of settings),
``episode`` ("round" or "game"), ``round_reward`` ("points" or "relative", see below),
``max_turns`` (truncate the episode after this many turns; None for no cap), ``render_mode``
("human" prints, "ansi" returns the text).

Rewards
-------
* ``episode="round"``: each agent gets ``-points / 50``, where ``points`` is what it takes in
  the round (0 for the winner; the hand total for the others; the Assaf penalty for a caller
  who is undercut). Within about [-1, 0]; a seven-card hand of tens gives -1.4. With
  ``round_reward="relative"`` it gets ``(mean points of the others in the round - points) / 50``
  instead: zero-sum at two seats, and a Yaniv called while the others hold much is worth more
  than one called while they hold little, as it is for the score race the game is.
* ``episode="game"``: agents are ranked (last standing, or lowest score with ``first_over``;
  among the eliminated, the later out ranks higher, then the lower score). Rank r of n (0 best)
  gets ``1 - 2 r / (n - 1)``: the winner +1, the last -1, linear between; tied agents share the
  mean of their ranks' rewards.
* A game of one round (``Rules.game_end="one_round"``) is paid by rank in either episode: it is
  won by winning the round (then the fewer points taken), whatever the points.
* A round cut by the rules' ``max_turns`` ends with no winner and no points: in a round episode
  every agent is truncated with reward 0. The env's own ``max_turns`` truncates any episode,
  reward 0.

Every agent receives its final reward at the step that ends the episode, whoever moved.

Illegal actions raise ``ValueError`` in ``raw_env`` naming the action and the reason, and so does
anything that is not an integer action id (a float such as 3.7, a bool, a string, None for an
agent still in play); ``env()`` adds PettingZoo's usual wrappers (illegal action: -1 and the
episode ends; bounds; call order). ``step()``, ``last()`` and ``observe()`` before ``reset()``, or
``step()`` and ``last()`` once every agent is done, raise ``RuntimeError`` saying to call ``reset()``.

Version history
---------------
* v0: first release (observation layout 1, 844 floats with 5-card hands).
* v1: observation layout 2 (884 floats): each opponent's last discard and the odds that it
  Assafs a call, the odds that a call is Assafed, and the hand total's steps. Policies trained on
  layout 1 do not read it: train them again.
* v2: observation layout 3 (1256 floats): per discard-and-draw action, what the hand it leaves
  would do to the score if the round ended (a reset value reached, the limit passed). Without
  them a network copying ``heuristic:score_weight=2`` did not see the stakes and lost its edge
  (``agents.training``). Policies trained on layout 2 do not read it: train them again.
* v3: observation layout 4 (1628 floats): the reset and over segments again, weighed by the
  chance that the round ends before the observer's next turn (``yaniv_env.encoding``). Policies
  trained on layout 3 do not read it: train them again.
* v4: the same environment as v3. From here the version is the observation layout's
  (``encoding.LAYOUT_VERSION``), and so is the Gym id's (``yaniv_env.GYM_ID``) and an exported
  bot's: one number for one thing.
* v5: observation layout 5 (1629 floats): the settings segment says whether the game is one round
  (``Rules.game_end="one_round"``, a house rule), and such a game pays its rank in a round
  episode too. Policies trained on layout 4 do not read it: train them again.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from yaniv.game import Game, RoundResult
from yaniv.ranking import final_ranks
from yaniv.render import describe_event, render_game
from yaniv.rules import Rules, get_rules
from yaniv_env.core import engine as core_engine
from yaniv_env.core import mirror as core_mirror
from yaniv_env.core.layout import MAX_DISCARDS, RES_CALLER
from yaniv_env.encoding import LAYOUT_VERSION, Observer

EPISODES = ("round", "game")
ROUND_REWARDS = ("points", "relative")
ROUND_REWARD_SCALE = 50.0


def round_rewards(result: RoundResult, kind: str = "points") -> list[float]:
    """Each seat's reward for a finished round (see Rewards above); 0 for seats out of the game."""
    return points_rewards(result.points, [q for q, hand in enumerate(result.hands) if hand], kind)


def points_rewards(points: Sequence[int], dealt: Sequence[int], kind: str = "points") -> list[float]:
    """``round_rewards`` from a round's points per seat and the seats dealt in it."""
    if kind == "points":
        return [-p / ROUND_REWARD_SCALE for p in points]
    seats = list(dealt)
    total = sum(points[q] for q in seats)
    out = [0.0] * len(points)
    for q in seats:
        out[q] = ((total - points[q]) / (len(seats) - 1) - points[q]) / ROUND_REWARD_SCALE
    return out


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment with PettingZoo's usual wrappers."""
    aec = raw_env(**kwargs)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    aec = wrappers.OrderEnforcingWrapper(aec)
    return aec


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's naming)
    metadata = {"render_modes": ["human", "ansi"], "name": f"yaniv_v{LAYOUT_VERSION}", "is_parallelizable": False}

    def __init__(
        self,
        num_players: int = 2,
        rules: str | Rules | dict | None = "default",
        episode: str = "round",
        max_turns: int | None = None,
        render_mode: str | None = None,
        round_reward: str = "points",
    ) -> None:
        super().__init__()
        self.rules = get_rules(rules)
        if type(num_players) is not int or not 2 <= num_players <= 8:
            raise ValueError(f"num_players must be an integer from 2 to 8, got {num_players!r}")
        Game(num_players, self.rules, seed=0)  # checks that the deck can deal this table
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
        if round_reward not in ROUND_REWARDS:
            raise ValueError(f"round_reward must be one of {ROUND_REWARDS}, got {round_reward!r}")
        if max_turns is not None and (type(max_turns) is not int or max_turns < 1):
            raise ValueError(f"max_turns must be None or an integer >= 1, got {max_turns!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}")
        self.num_players = num_players
        self.episode = episode
        self.round_reward = round_reward
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.observer = Observer(self.rules, num_players)
        self.table = self.observer.table
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.observer.size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self.table.size,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.table.size) for a in self.possible_agents}
        self._seeds = np.random.default_rng()
        self._mirror: core_mirror.Mirror | None = None
        self._buf = np.zeros(MAX_DISCARDS, dtype=np.int64)

    @property
    def game(self) -> Game | None:
        """The episode's game as a ``yaniv.Game`` (None before ``reset``): the core plays it, and this
        brings the Python game up to date on each access (``yaniv_env.core.mirror``)."""
        return None if self._mirror is None else self._mirror.game

    @game.setter
    def game(self, game: Game) -> None:
        """Play on from ``game``'s position (a position set up by hand, for tests and lessons); its
        later shuffles come from the core's generator, seeded from the env's seed stream."""
        self._mirror = core_mirror.Mirror(game, int(self._seeds.integers(2**63)))
        self._mirror.game  # noqa: B018 (handed in: kept up to date move by move)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """New episode. ``options`` may set "scores" (list of ints) and "starter" (a seat)."""
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
        options = options or {}
        seed = int(self._seeds.integers(2**63))
        game = Game(
            self.num_players,
            self.rules,
            seed=seed,
            single_round=self.episode == "round",
            scores=options.get("scores"),
            starter=options.get("starter", 0),
        )
        self._mirror = core_mirror.Mirror(game, seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.turns = 0
        self.agent_selection = self.possible_agents[self._mirror.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat(agent)
        obs = np.empty(self.observer.size, dtype=np.float32)
        mask = np.empty(self.table.size, dtype=np.int8)
        self._mirror.observe(seat, obs, mask)
        return {"observation": obs, "action_mask": mask}

    def action_mask(self, agent: str) -> np.ndarray:
        return self._mask(self._seat(agent))

    def _mask(self, seat: int) -> np.ndarray:
        mask = np.zeros(self.table.size, dtype=np.int8)
        mirror = self._mirror
        if seat == mirror.current and not mirror.over:
            core_engine.action_mask(mirror.row, mask, self._buf)
        return mask

    def last(self, observe: bool = True) -> tuple:
        self._require_episode("last()")
        return super().last(observe)

    def step(self, action: int) -> None:
        self._require_episode("step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        action = self.table.check(action)
        mirror = self._mirror
        if mirror.apply(action) == core_engine.ILLEGAL:
            raise ValueError(f"illegal action {action} ({self.table.describe(action)}) for {agent}: "
                             f"{self.illegal_reason(action)}")
        self._cumulative_rewards[agent] = 0.0
        self.turns += 1
        for a in self.agents:
            self.rewards[a] = 0.0
        if mirror.over:
            self._end_episode()
        elif self.max_turns is not None and self.turns >= self.max_turns:
            self.truncations = {a: True for a in self.agents}
        self.agent_selection = self.possible_agents[mirror.current]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _require_episode(self, call: str) -> None:
        """RuntimeError naming the call if no episode is under way (before reset, or once every agent is done)."""
        if self._mirror is None:
            raise RuntimeError(f"{call} before reset(): call reset() first")
        if not self.agents:
            raise RuntimeError(f"{call} after the episode ended (every agent is done): call reset()")

    def illegal_reason(self, action: int) -> str:
        """Why the engine refuses ``action`` for the player to move (the Python engine's words)."""
        game = self.game
        try:
            game.copy().apply(self.table.to_move(action, game.view(game.current)))
        except ValueError as error:
            return str(error)
        return "the action mask forbids it"

    def _seat(self, agent: str) -> int:
        if self._mirror is None:
            raise RuntimeError("observe() before reset(): call reset() first")
        if agent not in self.agent_name_mapping:
            raise ValueError(f"unknown agent {agent!r}; the agents are {', '.join(self.possible_agents)}")
        return self.agent_name_mapping[agent]

    def _end_episode(self) -> None:
        row = self._mirror.row
        if self.episode == "round" and not self.rules.one_round:  # a game of one round is paid by rank
            if row[RES_CALLER] < 0:  # the rules' turn cap cut the round: no winner
                self.truncations = {a: True for a in self.agents}
                return
            points, dealt = core_mirror.round_points(row)
            values = points_rewards(points, dealt, self.round_reward)
            for a, seat in self.agent_name_mapping.items():
                self.rewards[a] = values[seat]
        else:
            for a, value in zip(self.possible_agents, ranks_rewards(core_mirror.final_ranks(row))):
                self.rewards[a] = value
        self.terminations = {a: True for a in self.agents}

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = render_game(self.game)
        if self.game.events:
            text = describe_event(self.game.events[-1]) + "\n" + text
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


def rank_rewards(game: Game) -> list[float]:
    """Game rewards by final rank (``yaniv.ranking.final_ranks``): rank r of n gets 1 - 2 r / (n - 1),
    tied seats sharing the mean of their ranks' rewards."""
    return ranks_rewards(final_ranks(game))


def ranks_rewards(ranks: Sequence[int]) -> list[float]:
    """``rank_rewards`` from the final ranks (``yaniv.ranking.final_ranks``)."""
    n = len(ranks)
    values = [1 - 2 * r / (n - 1) for r in range(n)]
    rewards = []
    for rank in ranks:
        tied = ranks.count(rank)
        rewards.append(sum(values[rank : rank + tied]) / tied)
    return rewards
