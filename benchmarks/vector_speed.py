"""Speed of the compiled core (``yaniv_env.core``) beside today's Python engine, one core.

    python benchmarks/vector_speed.py [--games 1024] [--turns 400000] [--repeats 3]

Lines ending in "<number> turns/s" (or decisions/s, ms/move), for 2 and 4 players under the
default and german rules:

* ``engine``: the Python reference (``benchmarks/engine_speed.py``'s loop): legal moves + apply;
* ``core random+mask``: a batch of games stepped in compiled code, the action mask built every
  turn and a uniformly random legal action drawn from it;
* ``core random+mask+obs``: the same, plus the observation of the player to move.

Figures are per second of this process's CPU time, pinned to one core, best of the repeats (the
machines are shared). The first lines give the JIT's compile time on a cold cache and the time a
warm process takes to import the core and play its first turn (numba's on-disk cache,
``cache=True``: only the first process on a machine compiles).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_speed import turns_per_second as engine_turns_per_second  # noqa: E402
from yaniv import get_rules  # noqa: E402
from yaniv_env.core import engine as E  # noqa: E402
from yaniv_env.core import layout as L  # noqa: E402
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


@njit(cache=True)
def random_turns(S, R, masks, buf, turns):
    """``turns`` turns over the batch: mask, a random legal action, apply; a new game where one ends."""
    done = 0
    n = S.shape[0]
    while done < turns:
        for g in range(n):
            s = S[g]
            r = R[g : g + 1]
            if s[L.PHASE] == L.PHASE_OVER:
                E.new_game(s, r, s[L.PLAYERS], s[L.SINGLE_ROUND], 0)
            E.action_mask(s, masks[g], buf)
            E.apply_action(s, r, _pick(masks[g], r), buf)
        done += n
    return done


def batch(players: int, rules: str, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rows = L.new_rows(games)
    R = np.array([E.seed_rng(seed * 100_003 + g) for g in range(games)], dtype=np.uint64)
    for g in range(games):
        L.write_rules(rows[g], get_rules(rules))
        E.new_game(rows[g], R[g : g + 1], players, 0, 0)
    return rows, R


def core_random(players: int, rules: str, games: int, turns: int, seed: int) -> float:
    S, R = batch(players, rules, games, seed)
    size = action_table(get_rules(rules).hand_size).size
    masks = np.zeros((games, size), dtype=np.int8)
    buf = np.zeros(L.MAX_DISCARDS, dtype=np.int64)
    start = time.process_time()
    done = random_turns(S, R, masks, buf, turns)
    return done / (time.process_time() - start)


def warm_start() -> float:
    """Seconds for a fresh process to import the core and play one turn (the JIT cache warm)."""
    code = (
        "import time; t = time.perf_counter(); import numpy as np; "
        "from yaniv_env.core import engine as E, layout as L; from yaniv import get_rules; "
        "s = L.new_rows(1)[0]; L.write_rules(s, get_rules('default')); r = np.array([1], dtype=np.uint64); "
        "E.new_game(s, r, 2, 0, 0); out = np.zeros(1024, dtype=np.int64); b = np.zeros(128, dtype=np.int64); "
        "E.apply_action(s, r, out[E.legal_actions(s, out, b) - 1], b); print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1024)
    parser.add_argument("--turns", type=int, default=400_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    start = time.perf_counter()
    core_random(2, "default", 8, 16, 0)  # compiles, or loads the cache
    print(f"jit: first call {time.perf_counter() - start:.2f} s in this process; "
          f"warm start (import + first turn, a new process) {warm_start():.2f} s")
    for players in (2, 4):
        for rules in ("default", "german"):
            def best(measure) -> float:
                return max(measure(r) for r in range(args.repeats))

            engine = best(lambda r: engine_turns_per_second(players, rules, args.turns // 20, seed=r))
            core = best(lambda r: core_random(players, rules, args.games, args.turns, r))
            print(f"players={players} rules={rules:<8} engine {engine:,.0f} turns/s | "
                  f"core random+mask {core:,.0f} turns/s ({core / engine:.0f}x)")


if __name__ == "__main__":
    main()
