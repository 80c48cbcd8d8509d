"""Evaluate agents against each other: a seat-rotated tournament on duplicate deals.

    python evaluate.py --players 4 --agents heuristic greedy random --games 400 --seed 0 --out runs/eval-4p
    python evaluate.py --players 2 --agents search heuristic runs/default/policy.npz --games 600 --rounds

Every deal is played by every line-up of agents in every seat rotation, so each agent is dealt
each hand of a deal once (duplicate format) and sits in every seat equally often; ``--games`` must
therefore be a multiple of (line-ups x players), and the error says which numbers work. With more
agents than seats the line-ups are all combinations of them (see ``agents/tournament/``). An agent
is any spec of ``agents.registry``: ``--help`` lists them.

It prints a table (win rate with a 95% Wilson interval, an OpenSkill rating, points and Yaniv
calls per round, Assaf rates as caller and as Assafer, game length, time per move, and head to
head) and writes into ``--out``: results.json, results.csv, head_to_head.csv, ratings.png and
head_to_head.png, all five or none. A folder that already holds any of them is refused unless
``--overwrite`` is given (other files in it are left alone). The same ``--seed`` gives the same
results for any ``--workers`` (on the compiled core, a policy's near-tie may break otherwise:
see ``agents/tournament/compiled.py``).

``--engine`` says where the games are played. ``core``: the compiled core (``yaniv_env.core``),
each worker's chunk of games as one batch, many times faster; it plays ``random``, ``greedy``,
``heuristic[:K=V,...]``, ``search[:N]`` and the policies (``ppo:PATH``, ``onnx:DIR``, ``default``,
a batched forward pass per step), and refuses, by name, an agent it cannot play. ``python``:
``yaniv.Game`` and each agent's own ``act``, one game at a time. ``auto`` (the default): the core
when it can play every agent, else Python. The two engines draw the cards from different
generators, so one seed gives other games on each, with figures that agree in distribution.

Every argument is checked before the first game: an unknown agent, a missing or corrupt
checkpoint, a bad player or game count (at most 10,000,000) or rules preset, an ``--out`` that is
empty, holds results or cannot be written (it is created, and a probe file written and removed)
ends it with status 2 and one line naming the problem. Memory stays flat however many games are
played: each game's record is reduced as it comes.

An SB3 checkpoint (``.zip``) is a pickle, which can run code when loaded: it is refused unless
``--trust-pickle`` is given, for files you trust. ``.npz`` weights and exported bots (``onnx:DIR``,
``python -m agents.policies.export``) are safe to load from anyone. The Python API is
``agents.tournament.run_tournament``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.registry import specs_help
from agents.tournament import MAX_GAMES, plan_tournament
from agents.tournament.report import existing_results, prepare_folder
from agents.tournament.schedule import ENGINES, MAX_WORKERS
from yaniv import PRESETS

PROG = "evaluate.py"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = _Parser(prog=PROG, description=__doc__.split("\n\n")[0].strip(), epilog=specs_help(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2, help="seats at each table, 2 to 8 (default: 2)")
    parser.add_argument("--agents", nargs="+", default=["heuristic", "greedy", "random"], metavar="AGENT",
                        help="agent specs (listed below); at least --players of them; repeat a spec to seat two "
                             "copies (default: heuristic greedy random)")
    parser.add_argument("--games", type=int, default=120,
                        help=f"games to play, a multiple of line-ups x players, at most {MAX_GAMES:,} (default: 120)")
    parser.add_argument("--seed", type=int, default=0, help="the tournament seed (default: 0)")
    parser.add_argument("--rules", default="default",
                        help=f"rules: a preset ({', '.join(PRESETS)}), or a preset with changes, "
                             "'default:jokers=0,game_end=one_round' (yaniv.rules.parse_rules; default: default)")
    parser.add_argument("--rounds", action="store_true", help="play single rounds instead of full games")
    parser.add_argument("--max-turns", type=int, default=None,
                        help="cap every round at this many turns (no winner, no points): a guard against agents "
                             "that never end a round (default: no cap)")
    parser.add_argument("--workers", type=int, default=None,
                        help=f"processes, 1 to {MAX_WORKERS} (default: every core)")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="where the games are played: core (the compiled core, batched; random, greedy, "
                             "heuristic, search and policies only), python (any agent, one game at a time) or auto "
                             "(core when every agent has a compiled form, else python) (default: auto)")
    parser.add_argument("--out", default="runs/eval", help="output folder (default: runs/eval)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the result files an existing --out holds (default: refuse)")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="load SB3 checkpoints (.zip, pickles that can run code): only files you trust")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def fail(message: str) -> int:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    # 1. Check everything before any game: the output folder, agents (names, checkpoints), counts, rules.
    if not args.out.strip():
        return fail("--out is empty: name the folder for the result files")
    out = Path(args.out)
    try:
        if out.exists() and not out.is_dir():
            return fail(f"--out {out} exists and is not a folder")
    except OSError as error:  # a name too long, a loop of links
        return fail(f"--out {out}: {error.strerror or error}")
    existing = existing_results(out)
    if existing and not args.overwrite:
        return fail(f"--out {out} already holds results ({', '.join(existing)}): choose another folder, "
                    "or pass --overwrite to replace them")
    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        return fail(f"--workers must be from 1 to {MAX_WORKERS}, got {args.workers}")
    try:
        plan = plan_tournament(args.agents, num_players=args.players, games=args.games, seed=args.seed,
                               rules=args.rules, rounds=args.rounds, max_turns=args.max_turns,
                               trust_pickle=args.trust_pickle, engine=args.engine)
    except ValueError as error:
        return fail(str(error))
    try:  # last, so that a refused argument leaves no folder behind
        prepare_folder(out)
    except ValueError as error:
        return fail(f"--out {out}: {error}")
    print(f"Playing {plan.describe()}", flush=True)

    # 2. Play (every core unless --workers says otherwise; the same results either way).
    result = plan.run(workers=args.workers, progress=not args.no_progress)

    # 3. Report: the table, then the files.
    print()
    print(result.table())
    paths = result.write(out, overwrite=args.overwrite)
    print(f"\nWrote {', '.join(p.name for p in paths.values())} to {out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
