"""yaniv_env: Yaniv as a PettingZoo AEC environment and a Gymnasium single-agent view.

>>> import yaniv_env
>>> env = yaniv_env.env(num_players=4, rules="default", episode="round")
>>> env.reset(seed=0)
>>> obs, reward, terminated, truncated, info = env.last()

``gymnasium.make(yaniv_env.GYM_ID, num_players=2, opponents=...)`` gives the single-agent view
once this package is imported; ``GYM_ID``'s version is the observation layout version. Manuals: ``yaniv_env.aec`` (the AEC environment),
``yaniv_env.gym_env`` (the single-agent view), ``yaniv_env.encoding`` (action ids and the
observation layout).
"""

import gymnasium

from yaniv_env.aec import env, raw_env, rank_rewards
from yaniv_env.encoding import LAYOUT_VERSION, ActionTable, Observer, action_table, observation_layout, observation_size
from yaniv_env.gym_env import YanivGymEnv

GYM_ID = f"yaniv_env/Yaniv-v{LAYOUT_VERSION}"

if GYM_ID not in gymnasium.registry:
    gymnasium.register(id=GYM_ID, entry_point="yaniv_env.gym_env:YanivGymEnv")

__all__ = [
    "GYM_ID", "LAYOUT_VERSION", "ActionTable", "Observer", "YanivGymEnv", "action_table", "env", "observation_layout",
    "observation_size", "rank_rewards", "raw_env",
]
