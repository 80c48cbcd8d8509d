"""Speed of the compiled core (``yaniv_env.core``) beside today's Python engine, one core.

    python benchmarks/vector_speed.py [--games 1024] [--turns 400000] [--repeats 3]

Lines ending in "<number> turns/s" (or decisions/s, ms/move), for 2 and 4 players under the
default and german rules:

* ``engine``: the Python reference (``benchmarks/engine_speed.py``'s loop): legal moves + apply;
* ``core random+mask``: a batch of games stepped in compiled code, the action mask built every
  turn and a uniformly random legal action drawn from it;
* ``core random+mask+obs``: the same, plus the observation of the player to move (float32, the
  ``yaniv_env.encoding`` vector, ``yaniv_env.core.observe``);
* ``heuristic``: every seat the baseline heuristic (``yaniv_env.core.bots.heuristic_action``), its
  decision and the move applied, beside the Python ``HeuristicAgent`` (its ``act`` on a view);
* ``raw_env`` and ``env()``: ``benchmarks/env_speed.py``'s loop (``last()`` then ``step()``), and
  PettingZoo's own three wrappers around an environment that does nothing, in the same run;
* ``search``: the compiled search at its default budget, milliseconds per move over heads-up
  positions (``benchmarks/search_strength.py``'s timing, the Python search beside it).

Figures are per second of this process's CPU time, pinned to one core, best of the repeats (the
machines are shared). The first line gives the time a new process takes to import the core and
play its first turn, with an empty cache (the JIT compiles) and with a filled one (numba's on-disk
cache, ``cache=True``: only the first process on a machine compiles; see ``yaniv_env.core``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_speed import turns_per_second as engine_turns_per_second  # noqa: E402
from env_speed import env_turns_per_second, wrapped_noop  # noqa: E402
from yaniv import Game, get_rules  # noqa: E402
import yaniv_env  # noqa: E402
from yaniv_env.core import bots as B  # noqa: E402
from yaniv_env.core import engine as E  # noqa: E402
from yaniv_env.core import layout as L  # noqa: E402
from yaniv_env.core import observe as O  # noqa: E402
from yaniv_env.encoding import action_table, observation_size  # noqa: E402


@njit(cache=True)
def _pick(mask, r):
    """A uniformly random set entry of ``mask``."""
    k = 0
    for a in range(mask.shape[0]):
        k += mask[a]
    j = E.below(r, k)
    for a in range(mask.shape[0]):
        if mask[a]:
            if j == 0:
                return a
            j -= 1
    return -1


RANDOM, RANDOM_OBS, HEURISTIC = 0, 1, 2  # what each turn of ``play_turns`` does


@njit(cache=True)
def play_turns(S, R, mode, masks, obs, params, buf, obuf, turns):
    """``turns`` turns over the batch, a new game where one ends. ``RANDOM``: the action mask, then
    a random legal action; ``RANDOM_OBS``: the observation of the player to move as well;
    ``HEURISTIC``: the heuristic's decision. Each move applied."""
    done = 0
    n = S.shape[0]
    while done < turns:
        for g in range(n):
            s = S[g]
            r = R[g : g + 1]
            if s[L.PHASE] == L.PHASE_OVER:
                E.new_game(s, r, s[L.PLAYERS], s[L.SINGLE_ROUND], 0)
            if mode == HEURISTIC:
                action = B.heuristic_action(s, params, buf)
            else:
                if mode == RANDOM_OBS:
                    O.observe(s, s[L.CURRENT], obs[g], obuf)
                E.action_mask(s, masks[g], buf)
                action = _pick(masks[g], r)
            E.apply_action(s, r, action, buf)
        done += n
    return done


def batch(players: int, rules: str, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rows = L.new_rows(games)
    R = np.array([E.seed_rng(seed * 100_003 + g) for g in range(games)], dtype=np.uint64)
    for g in range(games):
        L.write_rules(rows[g], get_rules(rules))
        E.new_game(rows[g], R[g : g + 1], players, 0, 0)
    return rows, R


def core_rate(mode: int, players: int, rules: str, games: int, turns: int, seed: int) -> float:
    """Turns a second of ``play_turns`` in ``mode`` (CPU time)."""
    S, R = batch(players, rules, games, seed)
    hand = get_rules(rules).hand_size
    masks = np.zeros((games, action_table(hand).size), dtype=np.int8)
    obs = np.zeros((games, observation_size(hand)), dtype=np.float32)
    buf = np.zeros(max(B.SCRATCH, L.MAX_DISCARDS), dtype=np.int64)
    start = time.process_time()
    done = play_turns(S, R, mode, masks, obs, B.heuristic_params(), buf, O.scratch(), turns)
    return done / (time.process_time() - start)


def python_heuristic(players: int, rules: str, decisions: int, seed: int) -> float:
    """The Python ``HeuristicAgent``'s decisions a second (its ``act`` on the view; the engine's
    moves are not counted)."""
    from agents.baselines.heuristic import HeuristicAgent

    agent = HeuristicAgent()
    game = Game(players, get_rules(rules), seed=seed)
    spent, done = 0.0, 0
    while done < decisions:
        if game.is_over:
            seed += 1
            game = Game(players, get_rules(rules), seed=seed)
        start = time.process_time()
        action = agent.act(game.view(game.current))
        spent += time.process_time() - start
        game.apply(action)
        done += 1
    return done / spent


def first_turn(cache: str | None = None) -> float:
    """Seconds for a fresh process to import the core and play one turn: with numba's cache as it
    is (warm), or in the empty folder ``cache`` (the JIT compiles everything that turn needs)."""
    code = (
        "import time; t = time.perf_counter(); import numpy as np; "
        "from yaniv_env.core import engine as E, layout as L; from yaniv import get_rules; "
        "s = L.new_rows(1)[0]; L.write_rules(s, get_rules('default')); r = np.array([1], dtype=np.uint64); "
        "E.new_game(s, r, 2, 0, 0); out = np.zeros(1024, dtype=np.int64); b = np.zeros(128, dtype=np.int64); "
        "E.apply_action(s, r, out[E.legal_actions(s, out, b) - 1], b); print(time.perf_counter() - t)"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=cache) if cache else None
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True, env=env)
    return float(out.stdout.strip())


def search_budget() -> int:
    from yaniv_env.core.search import DEFAULT_BUDGET

    return DEFAULT_BUDGET


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1024)
    parser.add_argument("--turns", type=int, default=400_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--search-rounds", type=int, default=8,
                        help="heads-up rounds of positions for the search's time (0: skip)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    start = time.perf_counter()
    core_rate(RANDOM, 2, "default", 8, 16, 0)  # compiles, or loads the cache
    first = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as empty:
        cold = first_turn(empty)
    print(f"jit: cold start (a new process, empty cache: import, compile, first turn) {cold:.2f} s; "
          f"warm start (a new process, cache filled) {first_turn():.2f} s; this process's first call {first:.2f} s")

    def best(measure) -> float:
        return max(measure(r) for r in range(args.repeats))

    for players in (2, 4):
        for rules in ("default", "german"):
            engine = best(lambda r: engine_turns_per_second(players, rules, args.turns // 20, seed=r))
            core = best(lambda r: core_rate(RANDOM, players, rules, args.games, args.turns, r))
            obs = best(lambda r: core_rate(RANDOM_OBS, players, rules, args.games, args.turns // 4, r))
            heuristic = best(lambda r: core_rate(HEURISTIC, players, rules, args.games, args.turns // 10, r))
            python = best(lambda r: python_heuristic(players, rules, args.turns // 400, r))
            print(f"players={players} rules={rules:<8} engine {engine:,.0f} turns/s | "
                  f"core random+mask {core:,.0f} turns/s ({core / engine:.0f}x) | "
                  f"core random+mask+obs {obs:,.0f} turns/s")
            print(f"players={players} rules={rules:<8} heuristic: python {python:,.0f} decisions/s | "
                  f"core {heuristic:,.0f} decisions/s ({heuristic / python:.0f}x)")
        turns = args.turns // 10
        raw = best(lambda r: env_turns_per_second(lambda: yaniv_env.raw_env(num_players=players), turns, r))
        wrapped = best(lambda r: env_turns_per_second(lambda: yaniv_env.env(num_players=players), turns, r))
        noop = best(lambda r: env_turns_per_second(wrapped_noop, turns, r))
        print(f"players={players} rules=default  raw_env {raw:,.0f} turns/s | env() {wrapped:,.0f} turns/s | "
              f"PettingZoo's wrappers around a do-nothing env {noop:,.0f} turns/s "
              f"(env() at {wrapped / noop:.2f} of it)")
    if args.search_rounds:
        from search_strength import speed

        for line in speed(args.search_rounds, 0, search_budget()):
            print(f"search: {line}")


if __name__ == "__main__":
    main()
