"""Expert iteration with the planner as the teacher: does a network learn its own search's moves?

A diagnostic, not yet a recipe (``train.py`` has no such stage). The planner
(``agents.policies.planner``: the network's likeliest moves checked by the compiled search's
rollouts) gains about +0.9 points a single round over its network against the heuristic
(docs/experiments.md, 2026-12-06). Earlier copies of the search's labels started from scratch and
kept none of its edge (2026-12-03, 2026-12-04). Here the student starts as the network itself, so
the labels differ from its own best move only where the planner overrules it (about one decision
in thirteen), and each iteration's planner searches over the student of the one before.

One iteration:

1. **Labels.** ``--samples`` decisions of the student at two seats against the heuristic
   (``yaniv_env.vector.YanivBatch``, 128 tables, ``--rules``): single rounds, or whole games with
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
hour. What it gave (docs/experiments.md, 2026-12-06): the single-round margin of the shipped network
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


MAX_SAMPLES = 3_000_000  # labels an iteration: 3,300 bytes each (the observation in float16), 10 GB at most


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


def collect(policy: NumpyPolicy, samples: int, seed: int, rules: str, budget: int, tables: int = 128,
            round_share: float = 1.0) -> dict[str, np.ndarray]:
    """``samples`` decisions of ``policy`` against the heuristic, with the planner's labels: in single
    rounds, or (``round_share`` under 1) in whole games with that share of single rounds mixed in."""
    from agents.policies.planner import PLAN_TOP_K, policy_candidates
    from yaniv.rules import parse_rules
    from yaniv_env.core import batch as B, engine, layout as L, search
    from yaniv_env.vector import YanivBatch

    episode = {"episode": "round"} if round_share >= 1 else {"episode": "game", "round_share": round_share}
    batch = YanivBatch(tables, players=2, rules=parse_rules(rules), opponents="heuristic", round_reward="relative",
                       seed=seed, **episode)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(11,)))
    A = np.array([[engine.seed_rng(int(rng.integers(2**63))) for _ in range(L.MAX_SEATS)] for _ in range(tables)],
                 dtype=np.uint64)
    params = search.search_params(budget)
    games = np.arange(tables, dtype=np.int64)
    step = batch.reset()
    out = {"obs": [], "masks": [], "labels": [], "own": []}
    n = 0
    while n < samples:
        obs, masks = step.obs.copy(), batch.masks.copy()
        seats = batch.G[:, B.G_LEARNER].astype(np.int64)
        cands, counts = policy_candidates(policy, obs, masks, batch.table.yaniv, PLAN_TOP_K, budget)
        labels = np.empty(tables, dtype=np.int64)
        search.choose_games(batch.S, A, games, seats, cands, counts, params, labels)
        own = cands[:, 0].copy()
        out["obs"].append(obs.astype(np.float16))
        out["masks"].append(masks.astype(bool))
        out["labels"].append(labels)
        out["own"].append(own)
        n += tables
        step = batch.step(own)
    return {k: np.concatenate(v)[:samples] for k, v in out.items()}


def fit(policy: NumpyPolicy, data: dict[str, np.ndarray], epochs: int, lr: float, seed: int,
        batch_size: int = 1024) -> NumpyPolicy:
    """The policy fitted to the labels by cross-entropy: each tower on the rows routed to it (a tower
    with no rows is left as it was), the stakes skip unchanged. Prints the held-out agreement
    before and after."""
    import torch

    torch.manual_seed(seed)
    x_all = data["obs"]
    n = len(x_all)
    routed = (x_all[:, policy.route_index] >= 0.5) if policy.route_index is not None else np.zeros(n, dtype=bool)
    order = np.random.default_rng(seed).permutation(n)
    held, train = order[: n // 20], order[n // 20 :]
    towers = [(policy.weights, policy.biases)]
    if policy.route_index is not None:
        towers.append((policy.tower_weights, policy.tower_biases))
    params = [([torch.nn.Parameter(torch.tensor(w.T.copy())) for w in ws],  # (out, in)
               [torch.nn.Parameter(torch.tensor(b.copy())) for b in bs]) for ws, bs in towers]
    layers_out = policy.num_actions
    act = torch.tanh if policy.activation == "tanh" else torch.relu
    skip_index = None if policy.skip_index is None else torch.tensor(policy.skip_index)
    skip_weight = None if policy.skip_weight is None else torch.tensor(policy.skip_weight)

    def mlp(x: torch.Tensor, tower: int) -> torch.Tensor:
        layers, biases = params[tower]
        h = x
        for w, b in zip(layers[:-1], biases[:-1]):
            h = act(h @ w.T + b)
        return h @ layers[-1].T + biases[-1]

    def logits(x: torch.Tensor, route: torch.Tensor) -> torch.Tensor:
        if len(params) == 1 or not route.any():
            out = mlp(x, 0)
        elif route.all():
            out = mlp(x, 1)
        else:  # each row through its own tower only
            out = torch.empty(len(x), layers_out, dtype=x.dtype)
            out = out.index_put((~route,), mlp(x[~route], 0)).index_put((route,), mlp(x[route], 1))
        if skip_index is not None:
            moves = skip_index.shape[1]
            extra = torch.einsum("nka,k->na", x[:, skip_index], skip_weight)
            out = torch.cat([out[:, :moves] + extra, out[:, moves:]], dim=1)
        return out

    def batch(idx: np.ndarray) -> tuple[torch.Tensor, ...]:
        return (torch.tensor(x_all[idx].astype(np.float32)), torch.tensor(routed[idx]),
                torch.tensor(data["masks"][idx]), torch.tensor(data["labels"][idx]))

    def agreement() -> float:
        with torch.no_grad():
            hits = 0
            for i in range(0, len(held), 8192):
                x, r, m, y = batch(held[i : i + 8192])
                hits += int((logits(x, r).masked_fill(~m, -1e9).argmax(1) == y).sum())
        return hits / max(1, len(held))

    print(f"fit: {len(train):,} decisions ({routed.mean():.0%} on tower 1), {len(held):,} held out; "
          f"agreement before {agreement():.4f}", flush=True)
    optimizer = torch.optim.Adam([p for ws, bs in params for p in ws + bs], lr=lr)
    for epoch in range(epochs):
        perm = np.random.default_rng(seed + 1 + epoch).permutation(train)
        total = 0.0
        for i in range(0, len(perm), batch_size):
            x, r, m, y = batch(perm[i : i + batch_size])
            loss = torch.nn.functional.cross_entropy(logits(x, r).masked_fill(~m, -1e9), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(x)
        print(f"fit epoch {epoch}: loss {total / len(perm):.4f}, held-out agreement {agreement():.4f}", flush=True)
    fitted = [([w.detach().numpy().copy() for w in ws], [b.detach().numpy().copy() for b in bs]) for ws, bs in params]
    skip = None if policy.skip_index is None else (policy.skip_index, policy.skip_weight)
    tower = None if len(fitted) == 1 else (policy.route_feature, *fitted[1])
    return NumpyPolicy(*fitted[0], policy.activation, policy.meta, skip, tower)


def paired_margins(bots: list[str], rounds: int, seed: int, rules: str, workers: int) -> None:
    """Each bot's margin over ``rounds`` heads-up single rounds against the heuristic (the deals of
    ``strength.py --only rounds`` at that count), and each one's minus the first's, paired by deal
    and seat (a normal 95% interval of the mean difference)."""
    from agents.tournament import run_tournament
    from yaniv.rules import parse_rules

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
    parser.add_argument("--budget", type=int, default=256)
    parser.add_argument("--rules", default="default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--round-share", type=float, default=1.0,
                        help="the share of single rounds among the episodes (under 1: whole games for the rest)")
    parser.add_argument("--data", type=Path, nargs="*", default=[],
                        help="labels saved by an earlier run (OUT/labels<k>.npz), fitted on with this run's first")
    args = parser.parse_args(argv)
    bounds = {"iterations": (1, 100), "samples": (128, MAX_SAMPLES), "epochs": (1, 100), "lr": (0.0, 1.0),
              "budget": (8, 4096), "round_share": (0.0, 1.0), "rounds": (2, 10_000_000), "workers": (1, 64)}
    for key, (low, high) in bounds.items():
        value = getattr(args, key)
        if not low <= value <= high:
            parser.error(f"--{key.replace('_', '-')} must be from {low:,} to {high:,}, got {value}")
    if args.compare:
        paired_margins(args.compare, args.rounds, args.seed, args.rules, args.workers)
        return
    if args.out is None:
        parser.error("--out is required to train")
    try:
        policy = load_start(args.start)
    except ValueError as error:
        parser.error(f"--start {args.start}: {error}")
    args.out.mkdir(parents=True, exist_ok=True)
    for k in range(1, args.iterations + 1):
        t0 = time.perf_counter()
        data = collect(policy, args.samples, args.seed + 1000 * k, args.rules, args.budget,
                       round_share=args.round_share)
        np.savez(args.out / f"labels{k}.npz", **data)
        if k == 1 and args.data:
            earlier = [dict(np.load(path)) for path in args.data]
            data = {key: np.concatenate([d[key] for d in earlier] + [data[key]]) for key in data}
        changed = float((data["labels"] != data["own"]).mean())
        print(f"iteration {k}: {len(data['labels']):,} labels in {time.perf_counter() - t0:.0f} s, "
              f"the planner overrules the student in {changed:.2%}", flush=True)
        t0 = time.perf_counter()
        policy = fit(policy, data, args.epochs, args.lr, args.seed + k)
        policy.save(args.out / f"iter{k}.npz")
        print(f"iteration {k}: fitted in {time.perf_counter() - t0:.0f} s -> {args.out / f'iter{k}.npz'}", flush=True)


if __name__ == "__main__":
    main()
