"""The random baseline: a uniformly random legal move."""

from __future__ import annotations

from yaniv import Move, PlayerView

from agents.base import SeededAgent


class RandomAgent(SeededAgent):
    """Plays a move drawn uniformly from ``view.legal_moves`` with its own seeded generator.

    Every legal move is equally likely, so a turn with many (discard, draw) pairs rarely calls
    Yaniv even when it may; it is the floor every other strategy must clear.
    """

    name = "random"

    def act(self, view: PlayerView) -> Move:
        moves = view.legal_moves
        if not moves:
            raise ValueError(f"seat {view.player} has no legal move: it is not its turn")
        return moves[int(self.rng.integers(len(moves)))]
