"""The final ranking of a finished game: who finished ahead of whom.

``final_ranks(game)`` gives, per seat, how many seats finished strictly ahead of it (0 is first;
tied seats share a rank). The order:

* a full game: the winners first (the last seat standing, or the lowest score when the rules end
  the game at the first score over the limit); then, among the others, the later a seat was
  eliminated the better (a seat still in at the end beats every eliminated one); then the lower
  score;
* a single round (``single_round=True``, or a game of one round, ``game_end="one_round"``): the
  round's winners first, then the fewer points taken in the round (a round cut by the turn cap has
  no winner and every seat ties).

The tournament (``agents.tournament``) reads places from this, and the game rewards of
``yaniv_env.aec`` are a function of it: one definition of "finished ahead".
"""

from __future__ import annotations

from yaniv.game import Game


def standing_keys(game: Game) -> list[tuple[int, ...]]:
    """Per seat, a key that sorts the seats best first (see the module docstring)."""
    n = game.num_players
    winners = set(game.winners)
    if game.one_round:
        last = game.results[-1] if game.results else None
        capped = last is None or last.caller is None
        return [(q not in winners, 0 if capped else last.points[q]) for q in range(n)]
    out_round = [len(game.results)] * n  # still in at the end: best
    for number, result in enumerate(game.results):
        for q in result.eliminated:
            out_round[q] = number
    return [(q not in winners, -out_round[q], game.scores[q]) for q in range(n)]


def final_ranks(game: Game) -> tuple[int, ...]:
    """Per seat, how many seats finished strictly ahead of it (tied seats share a rank)."""
    if not game.is_over:
        raise ValueError("the game is not over: it has no final ranking yet")
    keys = standing_keys(game)
    return tuple(sum(other < mine for other in keys) for mine in keys)
