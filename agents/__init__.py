"""Strategies that play Yaniv through one protocol (``agents.base.Agent``)."""

from agents.base import Agent, SeededAgent, play_game

__all__ = ["Agent", "SeededAgent", "play_game"]
