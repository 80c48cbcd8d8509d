"""The agent protocol: every strategy, tournament seat and training opponent speaks it.

An agent sees exactly what its seat may know, a ``yaniv.PlayerView`` (its hand, the public
record, and ``view.legal_moves`` when it is to move), and returns one of those legal moves. It
owns its random generator: ``reset(seed)`` before each game makes it deterministic.

>>> from yaniv import Game
>>> from agents import make_agent, play_game
>>> game = play_game(Game(3, seed=0), [make_agent("random", seed=s) for s in range(3)])
>>> game.is_over
True
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from yaniv import Game, Move, PlayerView


@runtime_checkable
class Agent(Protocol):
    name: str

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; (re)seeds the agent's own generator."""

    def act(self, view: PlayerView) -> Move:
        """A move from ``view.legal_moves``."""


class SeededAgent:
    """Base for agents that own one numpy generator."""

    name = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, view: PlayerView) -> Move:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def play_game(game: Game, agents: Sequence[Agent], max_moves: int = 100_000) -> Game:
    """Play ``game`` to its end with one agent per seat; a move outside the legal ones is an error."""
    if len(agents) != game.num_players:
        raise ValueError(f"{game.num_players} seats need {game.num_players} agents, got {len(agents)}")
    for _ in range(max_moves):
        if game.is_over:
            return game
        seat = game.current
        view = game.view(seat)
        move = agents[seat].act(view)
        if move not in view.legal_moves:
            raise ValueError(f"agent {agents[seat].name!r} in seat {seat} chose an illegal move {move!r}")
        game.apply(move)
    raise RuntimeError(f"the game did not end within {max_moves} moves")
