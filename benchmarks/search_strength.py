"""The compiled search (``yaniv_env.core.search``) against the Python ``SearchAgent``: speed and strength.

    python benchmarks/search_strength.py [--pairs 4000] [--python-pairs 600] [--workers 2]
                                         [--budget 128] [--speed-rounds 20] [--seed 0]

**Speed.** Heads-up positions of ``--speed-rounds`` single rounds of the heuristic against itself
(deals ``seed``, ``seed + 1``, ...): every position is given to both bots, and each decision is
timed in this process's CPU time (the machines this runs on are shared: CPU time is disturbed far
less than wall time). One line per bot: mean and median milliseconds per move, then the ratio.

**Strength.** Paired duplicate single rounds, heads-up, against the baseline heuristic
(``HeuristicAgent()``, in the core ``bots.heuristic_action``): each deal (``Game(2, seed=seed + i,
single_round=True)``) is played twice, the search in seat 0 and then in seat 1, so both bots get
both hands and both turns to start. Per deal: the margin (the heuristic's points minus the
search's, the mean of the two rounds; positive: the search is better) and the win rate (a round
won scores 1, lost 0, won by nobody 0.5). Each line gives the mean over deals with its 95%
interval (1.96 standard errors of the per-deal means). The compiled search plays ``--pairs``
deals, the Python search the first ``--python-pairs`` of them (``--workers`` processes); on those
common deals, the last line is the compiled margin less the Python margin, paired by deal.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time

import numpy as np
from numba import njit

from yaniv import Game
from yaniv_env.core import engine as E
from yaniv_env.core import layout as L
from yaniv_env.core.bots import SCRATCH, heuristic_action, heuristic_params
from yaniv_env.core.search import CALL_RISK, search_action, search_params

from agents.baselines.heuristic import HeuristicAgent
from agents.baselines.search import SearchAgent


# ------------------------------------------------------------------------------------------------
# The compiled match
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def _play_round(deal, search_seat, game_seed, bot_seed, params, ranking, baseline):
    """One single round from the row ``deal``: the search in ``search_seat``, the heuristic in the
    other. Returns (the search's points, the heuristic's, the search won, the heuristic won)."""
    s = deal.copy()
    r = np.full(1, game_seed, dtype=np.uint64)
    rb = np.full(1, bot_seed, dtype=np.uint64)
    buf = np.empty(max(SCRATCH, L.MAX_DISCARDS), dtype=np.int64)
    while s[L.PHASE] != L.PHASE_OVER:
        if s[L.CURRENT] == search_seat:
            action = search_action(s, rb, params, ranking)
        else:
            action = heuristic_action(s, baseline, buf)
        if E.apply_action(s, r, action, buf) == E.ILLEGAL:
            raise ValueError("a bot played an illegal action")
    other = 1 - search_seat
    winners = s[L.RES_WINNERS]
    return s[L.RES_POINTS + search_seat], s[L.RES_POINTS + other], winners >> search_seat & 1, winners >> other & 1


def compiled_pairs(pairs: int, seed: int, budget: int) -> tuple[np.ndarray, np.ndarray]:
    """Per deal: the compiled search's margin and win rate (module docstring)."""
    params = search_params(budget)
    ranking = heuristic_params(call_risk=CALL_RISK)
    baseline = heuristic_params()
    margins = np.empty(pairs)
    wins = np.empty(pairs)
    for i in range(pairs):
        deal = L.from_game(Game(2, seed=seed + i, single_round=True))
        m = w = 0.0
        for seat in (0, 1):
            game_seed = E.seed_rng(1_000_003 * (seed + i))
            bot_seed = E.seed_rng(2 * (seed + i) + seat + 7)
            mine, theirs, won, lost = _play_round(deal, seat, game_seed, bot_seed, params, ranking, baseline)
            m += (theirs - mine) / 2
            w += (won + 0.5 * (1 - won - lost)) / 2
        margins[i] = m
        wins[i] = w
    return margins, wins


# ------------------------------------------------------------------------------------------------
# The Python match
# ------------------------------------------------------------------------------------------------


def _python_pair(job: tuple[int, int]) -> tuple[float, float]:
    deal_seed, budget = job
    m = w = 0.0
    for seat in (0, 1):
        game = Game(2, seed=deal_seed, single_round=True)
        agents = {seat: SearchAgent(seed=2 * deal_seed + seat + 7, budget=budget), 1 - seat: HeuristicAgent()}
        while not game.is_over:
            p = game.current
            game.apply(agents[p].act(game.view(p)))
        result = game.results[-1]
        m += (result.points[1 - seat] - result.points[seat]) / 2
        won, lost = seat in result.winners, (1 - seat) in result.winners
        w += (won + 0.5 * (1 - won - lost)) / 2
    return m, w


def python_pairs(pairs: int, seed: int, budget: int, workers: int) -> tuple[np.ndarray, np.ndarray]:
    jobs = [(seed + i, budget) for i in range(pairs)]
    if workers > 1:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            out = pool.map(_python_pair, jobs, chunksize=4)
    else:
        out = [_python_pair(job) for job in jobs]
    return np.array([m for m, _ in out]), np.array([w for _, w in out])


# ------------------------------------------------------------------------------------------------
# Speed
# ------------------------------------------------------------------------------------------------


def speed(rounds: int, seed: int, budget: int) -> list[str]:
    heuristic = HeuristicAgent()
    games = []
    for i in range(rounds):
        game = Game(2, seed=seed + i, single_round=True)
        while not game.is_over:
            games.append(game.copy())
            game.apply(heuristic.act(game.view(game.current)))
    params = search_params(budget)
    ranking = heuristic_params(call_risk=CALL_RISK)
    r = np.full(1, E.seed_rng(seed), dtype=np.uint64)
    search_action(L.from_game(games[0]), r, params, ranking)  # compile (or load the cache) first
    clock = time.process_time
    compiled, python = [], []
    agent = SearchAgent(seed=seed, budget=budget)
    for game in games:
        row = L.from_game(game)
        start = clock()
        search_action(row, r, params, ranking)
        compiled.append(clock() - start)
        view = game.view(game.current)
        start = clock()
        agent.act(view)
        python.append(clock() - start)
    lines = []
    for name, t in (("compiled search", compiled), ("python search", python)):
        lines.append(f"{name:<16} {np.mean(t) * 1e3:8.3f} ms/move mean, {np.median(t) * 1e3:8.3f} median "
                     f"({len(t)} heads-up positions, budget {budget})")
    lines.append(f"{'speed-up':<16} {np.mean(python) / np.mean(compiled):8.1f}x on the mean, "
                 f"{np.median(python) / np.median(compiled):.1f}x on the median")
    return lines


def interval(x: np.ndarray) -> str:
    mean = float(np.mean(x))
    half = 1.96 * float(np.std(x, ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else float("nan")
    return f"{mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=4000, help="deals for the compiled search (default: 4000)")
    parser.add_argument("--python-pairs", type=int, default=600, help="deals for the Python search (default: 600)")
    parser.add_argument("--workers", type=int, default=2, help="processes for the Python search (default: 2)")
    parser.add_argument("--budget", type=int, default=128, help="rollouts per decision (default: 128)")
    parser.add_argument("--speed-rounds", type=int, default=20, help="rounds of positions to time (0: skip)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.pairs < args.python_pairs:
        parser.error("--pairs must be at least --python-pairs (the Python deals are the first of them)")
    if args.speed_rounds:
        for line in speed(args.speed_rounds, args.seed, args.budget):
            print(line, flush=True)
    start = time.perf_counter()
    cm, cw = compiled_pairs(args.pairs, args.seed, args.budget)
    print(f"compiled search vs heuristic: {args.pairs} deals, margin {interval(cm)} points a round, "
          f"win rate {interval(100 * cw)}% ({time.perf_counter() - start:.0f} s)", flush=True)
    if args.python_pairs:
        start = time.perf_counter()
        pm, pw = python_pairs(args.python_pairs, args.seed, args.budget, args.workers)
        n = args.python_pairs
        print(f"python search vs heuristic:   {n} deals, margin {interval(pm)} points a round, "
              f"win rate {interval(100 * pw)}% ({time.perf_counter() - start:.0f} s)")
        print(f"compiled search on the same {n} deals: margin {interval(cm[:n])}, win rate {interval(100 * cw[:n])}%")
        print(f"compiled minus python, paired by deal: margin {interval(cm[:n] - pm)}, "
              f"win rate {interval(100 * (cw[:n] - pw))}%")


if __name__ == "__main__":
    main()
