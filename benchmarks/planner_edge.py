"""Where the planner's round edge lies: the planner allowed to overrule its network on one kind of decision.

A diagnostic, not a recipe. ``plan:default`` (agents.policies.planner) wins +1.8 points a round
against the heuristic in heads-up single rounds, its network alone about +1.0, and every way of
training the network tried so far stops near +1.2 (docs/experiments.md). This script plays the same
rounds (``run_tournament``, duplicate deals, seats rotated, the compiled core) with the planner's
candidates cut down to one kind of decision, the network's move standing everywhere else:

* ``full``: the planner as shipped (the network's four likeliest moves, plus Yaniv when legal);
* ``none``: the network's move alone everywhere (the network's own margin, on the same deals);
* ``call``: where Yaniv is legal, whether to call (the network's move against Yaniv, or Yaniv
  against the network's best other move); nothing else searched;
* ``nocall``: every decision but that one (where the network calls, it calls; elsewhere the four
  likeliest moves other than Yaniv);
* ``draw``: the network's discard stands, the draw is searched (its four likeliest draws with it);
* ``discard``: the network's draw stands, the discard is searched (its four likeliest with it).

A slamdown's answer is the network's in every arm but ``full``. ``--set KEY=VALUE`` (repeatable)
changes a setting of the compiled search (``yaniv_env.core.search.search_params``: ``sweeps``,
``rho``, ``rollout_turns``, ...), to ask whether the edge comes from what the samples infer of the
opponent's hand (``sweeps=0 rho=1``: hidden cards uniform within their epochs) or from how far the
rollouts look (``rollout_turns``).

    python benchmarks/planner_edge.py --arm call --rounds 40000
    python benchmarks/planner_edge.py --arm full --set sweeps=0 --set rho=1.0

What it gave (docs/experiments.md, 2026-12-07; the shipped network, 40,000 rounds): the network
+0.96, the call searched alone +0.99, the draw alone +1.31, the discard alone +1.31, all but the
call +1.73, the planner +1.83; the planner with uniform samples (``sweeps=0``) +1.28, with rollouts
of six turns +1.82 (0.58 ms a move, against 0.92).

Prints one line: the margin (the heuristic's points minus the bot's, a round) with its 95% interval,
the bot's time a move, the wall time. Deterministic given ``--seed`` (the tournament's seeds).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import agents.policies.planner as planner  # noqa: E402
from agents.tournament import run_tournament  # noqa: E402
from yaniv_env.core import search  # noqa: E402
from yaniv_env.encoding import DRAW_SOURCES  # noqa: E402

ARMS = ("full", "none", "call", "nocall", "draw", "discard")
def restricted(arm: str, shipped):
    """``plan_candidates`` cut down to ``arm``'s decisions (the module docstring)."""

    def candidates(logits, legal, yaniv, top_k, budget):
        cands, counts = shipped(logits, legal, yaniv, top_k, budget)
        if arm == "full":
            return cands, counts
        scores = np.where(legal, logits.astype(np.float64), -np.inf)
        top = np.argmax(scores, axis=1)
        out = np.full_like(cands, -1)
        n = np.ones(len(legal), dtype=counts.dtype)
        out[:, 0] = top
        moves = yaniv  # the discard-and-draw ids come first
        ids = np.arange(legal.shape[1])

        def best(i, keep):
            alt = np.where(keep, scores[i], -np.inf)
            order = np.argsort(-alt, kind="stable")[:top_k]
            order = order[np.isfinite(alt[order])]
            out[i, :len(order)], n[i] = order, len(order)

        for i in range(len(legal)):
            t = int(top[i])
            if arm == "none":
                continue
            if arm in ("call", "nocall"):
                if not legal[i, yaniv]:
                    if arm == "nocall":
                        out[i], n[i] = cands[i], counts[i]
                elif arm == "call":
                    other = np.where(ids == yaniv, -np.inf, scores[i])
                    if t != yaniv:
                        out[i, 1], n[i] = yaniv, 2
                    elif np.isfinite(other.max()):
                        out[i, 1], n[i] = int(np.argmax(other)), 2
                elif t != yaniv:
                    best(i, ids != yaniv)
                continue
            if t >= moves:  # a call or a slamdown: the network's
                continue
            m, d = divmod(t, DRAW_SOURCES)
            same = ids // DRAW_SOURCES == m if arm == "draw" else ids % DRAW_SOURCES == d
            best(i, same & (ids < moves))
        return out, np.minimum(n, max(2, budget // 4))

    return candidates


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arm", choices=ARMS, default="full")
    parser.add_argument("--bot", default="default", help="the policy the planner searches over (default: default)")
    parser.add_argument("--rounds", type=int, default=40000, help="single rounds, heads-up (default: 40000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help=f"a search setting: one of {', '.join(search.SETTINGS)}")
    args = parser.parse_args(argv)
    if not 4 <= args.rounds <= 1_000_000:
        parser.error(f"--rounds must be 4 to 1,000,000, got {args.rounds}")
    try:
        settings = search.parse_settings(args.set)  # checked before any game is played
    except ValueError as error:
        parser.error(f"--set: {error}")

    planner.plan_candidates = restricted(args.arm, planner.plan_candidates)
    shipped_params = search.search_params
    search.search_params = lambda budget=search.DEFAULT_BUDGET, **kw: shipped_params(budget, **{**kw, **settings})
    start = time.perf_counter()
    result = run_tournament([f"plan:{args.bot}", "heuristic"], 2, args.rounds // 4 * 4, seed=args.seed, rounds=True,
                            max_turns=500, workers=1, progress=False, engine="core")
    me = result.agents[0]
    low, high = me.margin_interval
    label = " ".join([args.arm] + [f"{k}={v}" for k, v in settings.items()])
    print(f"{label}: margin {me.margin:+.3f} [{low:+.3f}, {high:+.3f}] over {me.games} rounds, "
          f"{me.ms_per_move:.3f} ms a move, {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
