"""Agent speed: the median time each bot takes to choose a move, at 2 and 4 players.

    python benchmarks/agent_speed.py [--rounds 20] [--agents random greedy heuristic search:16 search:64 search]

One line per bot: its median (and 90th percentile) time per move at 2 and at 4 players, in
milliseconds of this process's CPU time, pinned to one core (the machines this runs on are shared;
CPU time is disturbed far less by other work than wall time). Every seat of a table is the same bot;
each table plays ``--rounds`` single rounds on fixed deals (seeds 0, 1, ...), and every move of every
seat is timed (``act`` alone: building the seat's view is the engine's cost, not the bot's).
The figures measured with it, and when, are in ``docs/experiments.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from yaniv import Game

from agents.registry import make_agent

DEFAULT_AGENTS = ("random", "greedy", "heuristic", "search:16", "search:64", "search")


def move_times(spec: str, players: int, rounds: int, rules: str = "default") -> list[float]:
    """CPU seconds of every ``act`` call over ``rounds`` single rounds of ``players`` copies of ``spec``."""
    times: list[float] = []
    clock = time.process_time
    for r in range(rounds):
        game = Game(players, rules=rules, seed=r, single_round=True)
        agents = [make_agent(spec, seed=1000 * r + seat) for seat in range(players)]
        while not game.is_over:
            view = game.view(game.current)
            start = clock()
            move = agents[game.current].act(view)
            times.append(clock() - start)
            game.apply(move)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20, help="single rounds per table (default: 20)")
    parser.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS), help="agent specs to time")
    parser.add_argument("--rules", default="default", help="rules preset (default: default)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    for spec in args.agents:
        cells = []
        for players in (2, 4):
            t = move_times(spec, players, args.rounds, args.rules)
            p90 = statistics.quantiles(t, n=10)[-1] if len(t) > 1 else t[0]
            cells.append(f"{players}p {statistics.median(t) * 1e3:8.3f} ms/move (p90 {p90 * 1e3:7.2f}, {len(t)} moves)")
        print(f"{spec:<12} " + "   ".join(cells), flush=True)


if __name__ == "__main__":
    main()
