"""The greedy baseline: shed the most points now, call Yaniv at the first chance."""

from __future__ import annotations

from yaniv import DECK, POINTS, YANIV, Move, PlayerView
from yaniv.game import DISCARD, KEEP, SLAMDOWN, SLAMDOWN_PHASE

from agents.base import SeededAgent


def mean_points(cards: list[int]) -> float:
    """Mean points of some cards (6.0, about a full deck's mean, when there are none)."""
    return sum(POINTS[c] for c in cards) / len(cards) if cards else 6.0


class GreedyAgent(SeededAgent):
    """Sheds the most points it can every turn and calls Yaniv as soon as the rules allow.

    * **Yaniv**: called whenever it is legal (``Rules.may_call_yaniv``), whatever the risk.
    * **Discard**: the legal group with the most points. Ties go to the group with more cards (the
      hand left is smaller), then to the first such group in ``view.legal_moves`` order (singles,
      then sets, then runs, each in the engine's fixed order), which makes the choice deterministic.
    * **Draw**: the pile card "lowers the hand" when its points are strictly below both the expected
      points of a deck draw, estimated as the mean points of the cards this player has not seen
      (``PlayerView.unseen_cards``: not in its hand, not on the pile, not seen taken by an
      opponent), and the points of the group it discards. So it takes the pile card exactly when
      the hand total after the discard plus that card is below the expected total after the
      discard plus a deck card, and below the total before the turn. (The second condition makes
      every pile draw lower its total for good: without it two greedy players could hand the same
      cards back and forth through the pile for ever.) Of several drawable cards it considers the
      lowest (ties: the first drawable). Otherwise, and on equality, it draws from the deck (from
      the pile if the deck cannot be drawn).
    * **Slamdown**: always slams (the hand only gets lower).

    It ignores combinations kept for later, opponents and the Assaf risk. It never uses its
    generator: the same view always gives the same move.
    """

    name = "greedy"

    def act(self, view: PlayerView) -> Move:
        moves = view.legal_moves
        if not moves:
            raise ValueError(f"seat {view.player} has no legal move: it is not its turn")
        if view.phase == SLAMDOWN_PHASE:
            return SLAMDOWN if SLAMDOWN in moves else KEEP
        if YANIV in moves:
            return YANIV
        # The discard: most points, then most cards, then first in legal-move order.
        best: tuple[int, ...] | None = None
        best_key = (-1, -1)
        for m in moves:
            if m.kind == DISCARD:
                key = (sum(POINTS[c] for c in m.cards), len(m.cards))
                if key > best_key:
                    best, best_key = m.cards, key
        assert best is not None
        draws = [m.draw for m in moves if m.kind == DISCARD and m.cards == best]
        pile = [d for d in draws if d != DECK]
        choice = DECK
        if pile:
            low = min(pile, key=POINTS.__getitem__)
            if DECK not in draws or POINTS[low] < min(best_key[0], mean_points(view.unseen_cards())):
                choice = low
        return Move(DISCARD, best, choice)
