"""Strategies that play Yaniv through one protocol (``agents.base.Agent``), and bots for other programs.

``load_bot(spec)`` (``agents.serving.bots``) answers JSON protocol states; it is imported on first use, so
``import agents`` stays light (no gymnasium, no torch).
"""

from agents.base import Agent, SeededAgent, play_game
from agents.baselines.greedy import GreedyAgent
from agents.baselines.heuristic import HeuristicAgent
from agents.baselines.random_agent import RandomAgent
from agents.registry import AGENT_NAMES, make_agent
from agents.baselines.search import SearchAgent

__all__ = [
    "AGENT_NAMES", "Agent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "SearchAgent", "SeededAgent",
    "load_bot", "make_agent", "play_game",
]


def __getattr__(name: str):
    if name == "load_bot":
        from agents.serving.bots import load_bot

        return load_bot
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
