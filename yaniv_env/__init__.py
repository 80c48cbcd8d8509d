"""yaniv_env: Yaniv as a PettingZoo AEC environment and a Gymnasium single-agent view.

>>> import yaniv_env
>>> env = yaniv_env.env(num_players=4, rules="default", episode="round")
>>> env.reset(seed=0)
>>> obs, reward, terminated, truncated, info = env.last()

``gymnasium.make("yaniv_env/Yaniv-v2", num_players=2, opponents=...)`` gives the single-agent
view once this package is imported. Manuals: ``yaniv_env.aec`` (the AEC environment),
``yaniv_env.gym_env`` (the single-agent view), ``yaniv_env.encoding`` (action ids and the
observation layout).
"""

import gymnasium

from yaniv_env.aec import env, raw_env, rank_rewards
from yaniv_env.encoding import ActionTable, Observer, action_table, observation_layout
from yaniv_env.gym_env import RandomPolicy, YanivGymEnv

GYM_ID = "yaniv_env/Yaniv-v2"

if GYM_ID not in gymnasium.registry:
    gymnasium.register(id=GYM_ID, entry_point="yaniv_env.gym_env:YanivGymEnv")

__all__ = [
    "GYM_ID", "ActionTable", "Observer", "RandomPolicy", "YanivGymEnv", "action_table", "env",
    "observation_layout", "rank_rewards", "raw_env",
]
