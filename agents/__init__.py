"""Strategies that play Yaniv through one protocol (``agents.base.Agent``)."""

from agents.base import Agent, SeededAgent, play_game
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent
from agents.registry import AGENT_NAMES, make_agent
from agents.search import SearchAgent

__all__ = [
    "AGENT_NAMES", "Agent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "SearchAgent", "SeededAgent",
    "make_agent", "play_game",
]
