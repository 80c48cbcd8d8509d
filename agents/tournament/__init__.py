"""Tournaments between agents: seat-rotated play on duplicate deals, with statistics, ratings and reports.

The Python API behind ``evaluate.py``, for notebooks and training callbacks:

>>> from agents.tournament import run_tournament
>>> result = run_tournament(["random", "random"], num_players=2, games=4, seed=0,
...                         rounds=True, workers=1, progress=False)
>>> result.games
4
>>> print(result.table())                                    # doctest: +SKIP
>>> result.write("runs/eval")                                # doctest: +SKIP

The modules, in the order a tournament goes through them:

* ``schedule``: ``plan_tournament`` checks everything and builds each agent once; the plan's
  line-ups, seat rotations and duplicate deals; ``run`` plays the games in worker processes, one
  ``GameRecord`` each (the same results for any number of processes), on the compiled core when
  every agent has a compiled form (``engine="auto"``, the default), else in Python;
* ``compiled``: the games on the compiled core, a chunk of them as one batch (compiled bots move
  inside one numba call, policies answer in batched forward passes);
* ``statistics``: a ``Tally`` reduces the records, one at a time in game order, to each agent's
  figures (``AgentStats``: win rate with its Wilson interval, margin, rating, ...) and head to
  head, in a ``TournamentResult`` (``from_records`` does it over a list);
* ``report``: the terminal table, the result files (written all or none, never over earlier
  results unless asked) and the plots.

Bounds and trust: at most ``MAX_GAMES`` games, memory flat in their number; a pickle-based
checkpoint (SB3 ``.zip``) only with ``trust_pickle=True``.
"""

from agents.tournament.schedule import MAX_GAMES, TournamentPlan, plan_tournament, run_tournament
from agents.tournament.statistics import AgentStats, GameRecord, Tally, TournamentResult, wilson_interval

__all__ = [
    "MAX_GAMES", "AgentStats", "GameRecord", "Tally", "TournamentPlan", "TournamentResult", "plan_tournament",
    "run_tournament", "wilson_interval",
]
