"""Every strength figure of the learning issue (docs/experiments.md), for one bot, in one run.

    python benchmarks/strength.py [--bot default] [--quick | --scale K] [--only teacher,search,...]
                                  [--workers N]

Each check is a tournament (``agents.tournament``: duplicate deals, seats rotated, Wilson 95%
intervals; full games unless it says rounds; ``--max-turns`` caps a round, 500 by default as in
the experiments' commands), played on the compiled core, and prints one line: the figure, its
interval, the number of games, the target and whether it is met.

* ``teacher``: heads-up against the imitation teacher ``heuristic:call_risk=0.1,score_weight=2``
  (target: at least 55%, the interval's lower end above 50%), and at a table of three teachers
  (more than 25%, the lower end above 25%; 1,600 games where the issue asks for at least 400: at
  400 a four-player rate's interval is nine points wide, at 1,600 four and a half);
* ``search``: heads-up against the search at its default budget (at least 55%), and the bot's time
  per move in that tournament (under 0.1 ms; batched on the core);
* ``rounds``: single rounds heads-up against the baseline heuristic: the bot's margin, the
  heuristic's points a round minus its own (at least +1.5, the interval above zero);
* ``rules``: heads-up against the heuristic under each rule set of the issue (the three presets;
  52 cards without jokers, Yaniv at 7, +30 Assaf, a game of one round (``game_end="one_round"``);
  Yaniv at 5, a flat 30 Assaf, 50 subtracted on landing at exactly 50 or 100, out above 100): at
  least 55% under each; each line gives the margin in points a round too, which tells a gap in
  play from one of aim (a game of one round is won by winning the round, and a bot playing for
  points may take more of them and win fewer);
* ``loops``: full games against each baseline (random, greedy, heuristic, search) and against
  itself: the rounds that reached the turn cap (target: none). ``--loops-against`` names the
  opponents, ``--loop-games`` the games against each (the issue's 10,000; fewer for a slow bot).

``--quick`` plays a tenth of the games (a smoke run; the intervals are then too wide to decide).
``--scale K`` plays K times the games: the counts above are the issue's least, and where a figure
lies near its target their interval straddles it (at 2,000 heads-up games a win rate's interval is
about 4.4 points wide); ten times the games narrow it to 1.4, which answers the question. The bots
on the core are cheap (20,000 one-round games of the shipped bot take seconds); the search is not.
The same seed gives the same figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.tournament import run_tournament  # noqa: E402
from yaniv.rules import get_rules  # noqa: E402

TEACHER = "heuristic:call_risk=0.1,score_weight=2"
CHECKS = ("teacher", "search", "rounds", "rules", "loops")
# The house-rule sets: (name, rules)
HOUSE_SETS = (
    ("no jokers, Yaniv at 7, +30, one round", get_rules("default").replace(jokers=0, game_end="one_round")),
    ("Yaniv at 5, flat 30, -50 at 50/100, out above 100",
     get_rules("default").replace(yaniv_threshold=5, assaf_penalty="flat", assaf_penalty_points=30,
                                  score_reset="subtract", score_reset_at=(50, 100), score_reset_subtract=50,
                                  score_limit=100)),
)


def interval(stats) -> str:
    low, high = stats.win_interval
    return f"{stats.win_rate:.1%} [{low:.1%}, {high:.1%}]"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", default="default", help="the bot's agent spec (default: the shipped bot)")
    parser.add_argument("--only", default=",".join(CHECKS), help=f"checks to run, of {', '.join(CHECKS)}")
    parser.add_argument("--quick", action="store_true", help="a tenth of the games")
    parser.add_argument("--scale", type=int, default=1, help="K times the games (1 to 100; default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-turns", type=int, default=500, help="turn cap of a round (default: 500)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
    parser.add_argument("--loops-against", default="random,greedy,heuristic,search,self",
                        help="the loop check's opponents, 'self' for the bot itself, 'teacher' for its teacher "
                             "(default: the baselines and itself)")
    parser.add_argument("--loop-games", type=int, default=10_000,
                        help="full games against each in the loop check, before --quick/--scale (default: 10,000)")
    args = parser.parse_args()
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = sorted(set(only) - set(CHECKS))
    if unknown:
        parser.error(f"unknown check(s) {', '.join(unknown)}; the checks are {', '.join(CHECKS)}")
    if not 1 <= args.scale <= 100:
        parser.error(f"--scale must be 1 to 100, got {args.scale}")
    if not 1 <= args.loop_games <= 1_000_000:
        parser.error(f"--loop-games must be 1 to 1,000,000, got {args.loop_games}")
    if args.quick and args.scale != 1:
        parser.error("--quick and --scale are two sizes: give one")
    factor = 0.1 if args.quick else args.scale
    bot = args.bot

    def play(agents, players, games, rules="default", rounds=False):
        start = time.perf_counter()
        line_ups = 2 * players  # a multiple of the line-ups x seats: every deal played from every seat
        result = run_tournament(agents, players, max(int(games * factor) // line_ups * line_ups, line_ups),
                                seed=args.seed, rules=rules, rounds=rounds, max_turns=args.max_turns,
                                workers=args.workers, progress=False, engine="core")
        return result, time.perf_counter() - start

    print(f"bot {bot}, seed {args.seed}, rounds capped at {args.max_turns} turns"
          + (" (quick: a tenth of the games)" if args.quick else "")
          + (f" ({args.scale} times the games)" if args.scale != 1 else ""))
    if "teacher" in only:
        result, seconds = play([bot, TEACHER], 2, 2000)
        me = result.agents[0]
        low = me.win_interval[0]
        print(f"teacher heads-up: {interval(me)} of {me.games} games; target >= 55%, low > 50%: "
              f"{verdict(me.win_rate >= 0.55 and low > 0.5)} ({seconds:.0f} s)")
        result, seconds = play([bot, TEACHER, TEACHER, TEACHER], 4, 1600)
        me = result.agents[0]
        low = me.win_interval[0]
        print(f"teacher at four (three teachers): {interval(me)} of {me.games} games; target > 25%, low > 25%: "
              f"{verdict(me.win_rate > 0.25 and low > 0.25)} ({seconds:.0f} s)")
    if "search" in only:
        result, seconds = play([bot, "search"], 2, 2000)
        me = result.agents[0]
        print(f"search heads-up: {interval(me)} of {me.games} games; target >= 55%: {verdict(me.win_rate >= 0.55)}; "
              f"the bot's time {me.ms_per_move:.3f} ms a move, target < 0.1: {verdict(me.ms_per_move < 0.1)} "
              f"({seconds:.0f} s)")
    if "rounds" in only:
        result, seconds = play([bot, "heuristic"], 2, 4000, rounds=True)
        me = result.agents[0]
        low, high = me.margin_interval
        print(f"single rounds heads-up vs heuristic: margin {me.margin:+.2f} [{low:+.2f}, {high:+.2f}] points a round "
              f"over {me.games} rounds; target >= +1.5, low > 0: {verdict(me.margin >= 1.5 and low > 0)} "
              f"({seconds:.0f} s)")
    if "rules" in only:
        sets = [(name, get_rules(name)) for name in ("default", "french", "german")] + list(HOUSE_SETS)
        for name, rules in sets:
            result, seconds = play([bot, "heuristic"], 2, 2000, rules=rules)
            me = result.agents[0]
            print(f"rules {name}: {interval(me)} of {me.games} games vs heuristic, margin {me.margin:+.2f} points a "
                  f"round; target >= 55%: {verdict(me.win_rate >= 0.55)} ({seconds:.0f} s)")
    if "loops" in only:
        aliases = {"self": bot, "teacher": TEACHER}  # a spec with a comma cannot go in the list
        against = [aliases.get(name.strip(), name.strip()) for name in args.loops_against.split(",")]
        for other in [name for name in against if name]:
            result, seconds = play([bot, other], 2, args.loop_games)
            print(f"loops vs {other if other != bot else 'itself'}: {result.capped_rounds} of {result.rounds} rounds "
                  f"reached the turn cap in {result.games} games; target 0: {verdict(result.capped_rounds == 0)} "
                  f"({seconds:.0f} s)")


if __name__ == "__main__":
    main()
