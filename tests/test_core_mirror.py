"""``yaniv_env.core.mirror``: the core row and the Python game it replays on demand hold one position.

Played through ``raw_env`` (which steps its games on the core): after any number of moves, in
round and game episodes over every rule set, ``Mirror.game`` is the row's position field by field
(``layout.position``), the observation and mask the environment gives are those of the reference
observer on that game's views, and the row's rewards and final ranking are those the Python game
gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from core_support import RULE_SETS

import yaniv_env
from yaniv.ranking import final_ranks
from yaniv_env.aec import rank_rewards, round_rewards
from yaniv_env.core import layout as L
from yaniv_env.core import mirror as M


@pytest.mark.parametrize("name", list(RULE_SETS))
@pytest.mark.parametrize("episode", ["round", "game"])
def test_raw_env_matches_its_python_game(name, episode):
    env = yaniv_env.raw_env(num_players=3, rules=RULE_SETS[name], episode=episode)
    rng = np.random.default_rng(0)
    episodes = 0
    for seed in range(3 if episode == "round" else 1):
        env.reset(seed=seed)
        turn, final = 0, None
        while env.agents and turn < 20_000:
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if turn % (5 if turn < 300 else 200) == 0:
                game = env.game
                assert L.position(env._mirror.row) == L.position(L.from_game(game))
                for seat, other in enumerate(env.possible_agents):
                    view = game.view(seat)
                    got = env.observe(other)
                    assert np.array_equal(got["observation"], env.observer.observe(view)), f"seat {seat} turn {turn}"
                    assert np.array_equal(got["action_mask"], env.observer.action_mask(view))
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            turn += 1
            if env._mirror.over and final is None:
                final = [env.rewards[a] for a in env.possible_agents]
        row, game = env._mirror.row, env.game
        if env._mirror.over:
            episodes += 1
            assert final_ranks(game) == M.final_ranks(row)
            if episode == "game" or game.rules.one_round:  # a game of one round pays its rank in either
                assert rank_rewards(game) == final
            elif game.results[-1].caller is not None:
                assert round_rewards(game.results[-1]) == final
    assert episodes or RULE_SETS[name].max_turns is not None  # random play rarely wins a capped round


def test_illegal_actions_name_the_reason_and_change_nothing():
    env = yaniv_env.raw_env(num_players=2)
    env.reset(seed=1)
    before = env._mirror.row.copy()
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match=f"illegal action {illegal} "):
        env.step(illegal)
    assert np.array_equal(env._mirror.row, before)
