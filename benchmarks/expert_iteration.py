"""Expert iteration with the planner as the teacher: does a network learn its own search's moves?

A diagnostic beside the recipe: ``train.py``'s expert stage (``expert_samples``,
``agents.training.expert``, whose ``collect_labels`` and ``fit`` this script runs) does the same
after PPO, on the training's own tables; here the start is any exported bot. The planner
(``agents.policies.planner``: the network's likeliest moves checked by the compiled search's
rollouts) gains about +0.9 points a single round over its network against the heuristic
(docs/experiments.md, 2026-12-06). Earlier copies of the search's labels started from scratch and
kept none of its edge (2026-12-03, 2026-12-04). Here the student starts as the network itself, so
the labels differ from its own best move only where the planner overrules it (about one decision
in thirteen), and each iteration's planner searches over the student of the one before.

One iteration:

1. **Labels.** ``--samples`` decisions of the student at one seat of ``--players`` against the
   heuristic (``yaniv_env.vector.YanivBatch``, 128 tables, ``--rules``): single rounds, or whole games with
   ``--round-share`` of single rounds mixed in. The student plays its own best move (DAgger: the
   positions it reaches); each decision is labelled with the planner's choice among the student's
   candidates (``policy_candidates``, then ``search.choose_games``, a generator of its own per
   table). Saved as ``OUT/labels<k>.npz``; ``--data`` adds saved labels to the first iteration's.
2. **Fit.** Each tower on the positions routed to it (tower 1: games of one round) by
   cross-entropy on the labels, ``--epochs`` passes at ``--lr`` with Adam, the stakes skip
   unchanged; 5% of the decisions held out, on which the agreement with the labels is printed
   before and after (it falls a little as the play improves: the overrules are not what it learns
   to copy one by one).
3. **Save** the student as ``OUT/iter<k>.npz`` (``ppo:OUT/iter<k>.npz`` in the tournament).

The start is an exported bot (``--start agents/models/default``: its ONNX initializers read back into
a ``NumpyPolicy``, which plays as the bot) or a policy file (``ppo:PATH``). ``--compare A B ...``
measures instead: each bot's margin over ``--rounds`` heads-up single rounds against the heuristic
(the deals of ``strength.py --only rounds``), and each minus the first, paired by deal.

    OMP_NUM_THREADS=1 python benchmarks/expert_iteration.py --out /tmp/ei --samples 1600000
    python benchmarks/expert_iteration.py --compare default ppo:/tmp/ei/iter1.npz
    python benchmarks/strength.py --bot ppo:/tmp/ei/iter1.npz --only teacher,rules --workers 2

A label costs about a millisecond on one core (the planner's 256 rollouts), so 1.6 M take half an
hour; ``--threads 2`` shares the rollouts (about 1.1 to 1.4 times as fast on this 2-core host).
``--budget`` and ``--set KEY=VALUE`` (repeatable: ``yaniv_env.core.search.SETTINGS``, such as
``rollout_turns=6``) change the planner that labels.
What it gave (docs/experiments.md, 2026-12-06): the single-round margin of the shipped network
from +0.86 to +1.09 a round (1.6 M labels, in one iteration or two; a third added nothing), +1.16
with the same labels fitted at ``--lr 3e-4`` (the default, 1e-4, is the rate of the first runs), and the
no-jokers game of one round from 54.6% to 55.5% (tower 1, 800,000 labels); labels from heads-up
play alone cost tower 0 a point or more in full games and at four players.

Determinism: the same seed gives the same labels; the fit runs torch on the threads it is given
(``OMP_NUM_THREADS=1`` for the figures).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.policies.ppo import NumpyPolicy  # noqa: E402
from agents.training.expert import (  # noqa: E402
    FIT_TARGETS, MAX_EXPERT_SAMPLES, collect_labels, collect_parts, fit, stage_tables,
)
from yaniv.rules import parse_rules  # noqa: E402


MAX_SAMPLES = MAX_EXPERT_SAMPLES


def policy_from_onnx(folder: Path) -> NumpyPolicy:
    """The weights of an exported bot (``agents.policies.export``) as a ``NumpyPolicy``."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(Path(folder) / "model.onnx"))
    arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    n = sum(1 for name in arrays if name[0] == "w" and name[1:].isdigit())
    activation = next(node.op_type.lower() for node in model.graph.node if node.op_type in ("Tanh", "Relu"))
    weights = [arrays[f"w{i}"].T for i in range(n)]
    biases = [arrays[f"b{i}"] for i in range(n)]
    skip = (arrays["skip_index"], arrays["skip_weight"].reshape(-1)) if "skip_index" in arrays else None
    tower = None
    if "tower1_w0" in arrays:
        tower = ("one_round", [arrays[f"tower1_w{i}"].T for i in range(n)], [arrays[f"tower1_b{i}"] for i in range(n)])
    policy = NumpyPolicy(weights, biases, activation, {"rules": "default"}, skip, tower)
    if tower is not None and policy.route_index != int(arrays["route_index"][0]):
        raise ValueError(f"{folder}: the route entry {int(arrays['route_index'][0])} is not one_round's")
    return policy


def load_start(spec: str) -> NumpyPolicy:
    """``ppo:PATH`` (a policy file of weights, never a pickle) or an exported bot's folder."""
    if spec.startswith("ppo:"):
        return NumpyPolicy.load(spec[4:])
    from agents.policies.onnx import ExportedPolicy

    ExportedPolicy(spec)  # the folder's checks: bot.json, the model's checksum; ValueError naming what is wrong
    return policy_from_onnx(Path(spec))


def paired_margins(bots: list[str], rounds: int, seed: int, rules: str, workers: int) -> None:
    """Each bot's margin over ``rounds`` heads-up single rounds against the heuristic (the deals of
    ``strength.py --only rounds`` at that count), and each one's minus the first's, paired by deal
    and seat (a normal 95% interval of the mean difference)."""
    from agents.tournament import run_tournament

    per_bot = []
    for bot in bots:
        result = run_tournament([bot, "heuristic"], 2, rounds, seed=seed, rules=parse_rules(rules), rounds=True,
                                max_turns=500, workers=workers, progress=False, keep_records=True)
        margins = np.array([record.points[record.seats.index(1)] - record.points[record.seats.index(0)]
                            for record in result.records], dtype=np.float64)  # in game order: paired by index
        per_bot.append(margins)
        half = 1.96 * margins.std(ddof=1) / np.sqrt(len(margins))
        print(f"{bot}: margin {margins.mean():+.3f} +- {half:.3f} over {len(margins):,} rounds", flush=True)
    for bot, margins in zip(bots[1:], per_bot[1:]):
        d = margins - per_bot[0]
        half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
        print(f"{bot} minus {bots[0]}: {d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}] a round, "
              "paired by deal", flush=True)


def labels(policy: NumpyPolicy, args: argparse.Namespace, seed: int) -> dict[str, np.ndarray]:
    """``args.samples`` labels: from the tables of ``--tables``' expert stage (``stage_tables``, each
    part its share), or heads-up against the heuristic as ``--players``, ``--rules`` and ``--round-share`` say."""
    if args.tables is None:
        share = args.round_share
        episode = {"episode": "round"} if share >= 1 else {"episode": "game", "round_share": share}
        return collect_labels(policy, args.samples, seed, players=args.players, rules=parse_rules(args.rules),
                              budget=args.budget, threads=args.threads, search_settings=args.search_settings,
                              **episode)
    parts = stage_tables(args.tables, towers=policy.route_index is not None)
    return collect_parts(policy, parts, args.samples, seed, args.budget, args.threads, args.search_settings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", default="agents/models/default", help="an exported bot's folder, or ppo:PATH")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs="+", metavar="BOT",
                        help="instead of training: these bots' round margins, each against the first, paired by deal")
    parser.add_argument("--rounds", type=int, default=100_000, help="rounds a bot for --compare")
    parser.add_argument("--workers", type=int, default=2, help="processes for --compare")
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--samples", type=int, default=400_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--target", choices=FIT_TARGETS, default="label",
                        help="fit the planner's choice (label) or the start tilted by the rollouts' means (advantage)")
    parser.add_argument("--temperature", type=float, default=1.0,
                        help="points of rollout advantage per unit of logit, for --target advantage")
    parser.add_argument("--budget", type=int, default=256)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="another setting of the planner's search (yaniv_env.core.search.SETTINGS), "
                             "such as rollout_turns=6")
    parser.add_argument("--rules", default="default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tables", type=Path, metavar="CONFIG",
                        help="draw the labels from the tables of this train config's expert stage (its table sizes, "
                             "rule sets, episodes, baselines and expert_tower_share) instead of --players and --rules")
    parser.add_argument("--players", default="2", help="seats per table, or a range such as 2-6")
    parser.add_argument("--threads", type=int, default=1, help="threads sharing the planner's rollouts")
    parser.add_argument("--round-share", type=float, default=1.0,
                        help="the share of single rounds among the episodes (under 1: whole games for the rest)")
    parser.add_argument("--data", type=Path, nargs="*", default=[],
                        help="labels saved by an earlier run (OUT/labels<k>.npz), fitted on with this run's first")
    args = parser.parse_args(argv)
    bounds = {"iterations": (1, 100), "samples": (128, MAX_SAMPLES), "epochs": (1, 100), "lr": (0.0, 1.0),
              "budget": (8, 4096), "round_share": (0.0, 1.0), "temperature": (1e-3, 1e6), "rounds": (2, 10_000_000),
              "workers": (1, 64), "threads": (1, 64)}
    for key, (low, high) in bounds.items():
        value = getattr(args, key)
        if not low <= value <= high:
            parser.error(f"--{key.replace('_', '-')} must be from {low:,} to {high:,}, got {value}")
    from yaniv_env.core import search

    try:
        args.search_settings = search.parse_settings(args.set)
    except ValueError as error:
        parser.error(f"--set: {error}")
    if args.compare:
        paired_margins(args.compare, args.rounds, args.seed, args.rules, args.workers)
        return
    if args.out is None:
        parser.error("--out is required to train")
    try:
        policy = load_start(args.start)
    except ValueError as error:
        parser.error(f"--start {args.start}: {error}")
    if args.tables is not None:
        from agents.training import load_config

        try:
            args.tables = load_config(args.tables, [])
        except ValueError as error:
            parser.error(f"--tables: {error}")
    args.out.mkdir(parents=True, exist_ok=True)
    for k in range(1, args.iterations + 1):
        t0 = time.perf_counter()
        data = labels(policy, args, args.seed + 1000 * k)
        np.savez(args.out / f"labels{k}.npz", **data)
        if k == 1 and args.data:
            earlier = [dict(np.load(path)) for path in args.data]
            data = {key: np.concatenate([d[key] for d in earlier] + [data[key]]) for key in data}
        changed = float((data["labels"] != data["own"]).mean())
        print(f"iteration {k}: {len(data['labels']):,} labels in {time.perf_counter() - t0:.0f} s, "
              f"the planner overrules the student in {changed:.2%}", flush=True)
        t0 = time.perf_counter()
        policy, _ = fit(policy, data, args.epochs, args.lr, args.seed + k, target=args.target,
                        temperature=args.temperature)
        policy.save(args.out / f"iter{k}.npz")
        print(f"iteration {k}: fitted in {time.perf_counter() - t0:.0f} s -> {args.out / f'iter{k}.npz'}", flush=True)


if __name__ == "__main__":
    main()
