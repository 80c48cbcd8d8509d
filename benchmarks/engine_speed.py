"""Engine speed: random legal play, the legal moves enumerated every turn, on one core.

    python benchmarks/engine_speed.py [--turns 200000] [--repeats 3]

One line per configuration, ending in "<number> turns/s": turns per second of this process's CPU
time, pinned to one core, best of the repeats. CPU time rather than wall time because the machines
this runs on are shared: other work on the other core then slows the figure far less. A turn is one call of
``legal_moves()`` plus one ``apply()``; new games are dealt as old ones end, and their set-up is
counted too. Target (issue 2): at least 100,000 turns/s.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from yaniv import Game


def turns_per_second(players: int, rules: str, turns: int, seed: int = 0) -> float:
    # Pre-drawn uniforms: the benchmark measures the engine, not numpy's per-call overhead.
    uniforms = np.random.default_rng(seed).random(turns).tolist()
    game = Game(players, rules=rules, seed=seed)
    games = 1
    start = time.process_time()
    for u in uniforms:
        if game.is_over:
            game = Game(players, rules=rules, seed=seed + games)
            games += 1
        moves = game.legal_moves()
        game.apply(moves[int(u * len(moves))])
    return turns / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    for players in (2, 4):
        for rules in ("default", "german"):
            best = max(turns_per_second(players, rules, args.turns, seed=r) for r in range(args.repeats))
            print(f"engine  players={players}  rules={rules:<8} {best:,.0f} turns/s")


if __name__ == "__main__":
    main()
