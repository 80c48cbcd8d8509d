"""Strategies that play Yaniv through one protocol (``agents.base.Agent``), and bots for other programs.

``make_agent(spec)`` builds any agent by its spec, ``register`` adds a name, ``agent_names()`` lists
them (``agents.registry``). ``load_bot(spec)`` (``agents.serving.bots``) answers JSON protocol
states; it is imported on first use, so ``import agents`` stays light (no gymnasium, no torch).
"""

from agents.base import Agent, SeededAgent, play_game
from agents.baselines.greedy import GreedyAgent
from agents.baselines.heuristic import HeuristicAgent
from agents.baselines.random_agent import RandomAgent
from agents.baselines.search import SearchAgent
from agents.registry import agent_names, make_agent, register

__all__ = [
    "Agent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "SearchAgent", "SeededAgent", "agent_names",
    "load_bot", "make_agent", "play_game", "register",
]


def __getattr__(name: str) -> object:
    if name == "load_bot":
        from agents.serving.bots import load_bot

        return load_bot
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
