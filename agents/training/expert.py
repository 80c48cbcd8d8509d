"""Expert iteration after PPO: the network learns the moves its own planner picks.

    stats = expert_stage(config, model)        # what train.py runs after PPO when expert_samples > 0
    print(expert_summary(config, stats))

    data = collect_labels(student, 100_000, seed=0, players="2-6", opponents="heuristic")
    fitted, stats = fit(student, data, epochs=3, lr=3e-4, seed=0)
    load_actor(model.policy, fitted)           # the fitted weights back into the SB3 model

The teacher is the planner (``agents.policies.planner``): the student network's likeliest moves,
checked by the compiled search's rollouts (``yaniv_env.core.search.choose_games``, ``expert_budget``
rollouts a decision). The student plays its own best move at one seat of the tables the training
plays (DAgger: the positions its own play reaches), against the run's baseline bots at the other
seats; each decision is labelled with the planner's choice among the student's candidates, which
differs from the student's own move where the rollouts overrule it (one decision in ten to fifteen).
Then ``fit`` trains the actor by masked cross-entropy on the labels, each tower on the rows routed to
it (``agents.policies.towers``), with the critic and the stakes skip left as they are. Beside each
label are the candidates and their mean rollout scores minus the student's move's; ``fit(...,
target="advantage")`` fits the start tilted by those instead, which gave no more than the labels
(docs/experiments.md, 2026-12-07), so the stage fits the labels.

Where the labels come from (``expert_stage``): ``expert_samples`` decisions in all, drawn as the
training draws its episodes. With ``towers``, ``expert_tower_share`` of them from the tables of the
towers' stage (its table sizes, rule sets, baselines: the run's last steps) and the rest from the
tables of the steps before it, so that each tower's labels come from the games it plays; without,
all from the run's tables. The rollouts run on ``expert_threads`` threads (the kernel releases the
GIL); the network's forward passes between them are batched over ``EXPERT_TABLES`` tables.

Why: PPO's learning stage moves a network trained by imitation a point or two (docs/experiments.md);
the planner gains close to a point a single round over the same network, and fitting the network
to the planner's choices keeps a third of that gain at no cost at play time (2026-12-06).

Contract: the same seed and student give the same labels whatever the thread count (each table has
its own generator); ``fit`` changes only the actor's layers of the towers that have rows, and at
``lr`` 0 nothing; ``load_actor(p, NumpyPolicy.from_sb3(model))`` is the identity. Labels take
3,600 bytes each (the observation as float16), held in memory once for the fit: 1.6 M take 5.8 GB.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence

import numpy as np

from agents.policies.planner import MAX_PLAN_CANDIDATES
from agents.policies.ppo import NumpyPolicy

EXPERT_TABLES = 128
"""The tables the student plays at once: one batched forward pass a step, then their rollouts."""

MAX_EXPERT_SAMPLES = 3_000_000
"""The most labels a stage or a call collects (about 10 GB of observations)."""

LABEL_KEYS = ("obs", "masks", "labels", "own", "cands", "advantages")
"""The arrays of a set of labels (``collect_labels``, ``empty_labels``)."""

FIT_TARGETS = ("label", "advantage")
"""What ``fit`` fits the network to: the planner's choice, or the start tilted by the rollouts' means."""


def collect_labels(
    policy: NumpyPolicy,
    samples: int,
    seed: int,
    *,
    players: int | str = 2,
    rules: Any = "default",
    rule_sets: Sequence[Any] | None = None,
    episode: str = "round",
    round_share: float = 0.0,
    opponents: Any = "heuristic",
    round_reward: str = "relative",
    max_turns: int | None = None,
    budget: int = 256,
    threads: int = 1,
    tables: int = EXPERT_TABLES,
    out: dict[str, np.ndarray] | None = None,
    search_settings: dict[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """``samples`` decisions of ``policy`` at the learner's seat of ``tables`` tables
    (``yaniv_env.vector.YanivBatch``, its arguments as named), each playing the policy's own best
    move, with the planner's choice there: ``obs`` (float16), ``masks`` (bool), ``labels`` (the
    planner's action ids), ``own`` (the policy's), ``cands`` (int16, the candidates searched, -1 past
    them) and ``advantages`` (float32, each candidate's mean rollout score minus the policy's move's,
    NaN past them: ``search.choose_games_values``). ``threads`` share the rollouts by table. With
    ``out`` (arrays of those names, ``samples`` rows each) the rows are written there.
    ``search_settings``: the planner's other settings (``search.search_params`` keywords, such as
    ``rollout_turns``); the shipped planner's by default."""
    from agents.policies.planner import PLAN_TOP_K, policy_candidates
    from yaniv_env.core import batch as B, engine, layout as L, search
    from yaniv_env.vector import YanivBatch

    if not 1 <= samples <= MAX_EXPERT_SAMPLES:
        raise ValueError(f"samples must be from 1 to {MAX_EXPERT_SAMPLES:,}, got {samples!r}")
    if not 1 <= threads <= 64:
        raise ValueError(f"threads must be from 1 to 64, got {threads!r}")
    batch = YanivBatch(tables, players=players, rules=rules, opponents=opponents, episode=episode,
                       round_reward=round_reward, max_turns=max_turns, seed=seed, rule_sets=rule_sets,
                       round_share=round_share)
    if batch.obs.shape[1] != policy.observation_size or batch.table.size != policy.num_actions:
        raise ValueError(f"the policy takes {policy.observation_size} observations and {policy.num_actions} "
                         f"actions; these tables give {batch.obs.shape[1]} and {batch.table.size}")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(11,)))
    A = np.array([[engine.seed_rng(int(rng.integers(2**63))) for _ in range(L.MAX_SEATS)] for _ in range(tables)],
                 dtype=np.uint64)
    params = search.search_params(budget, **(search_settings or {}))
    # Small slices, taken by whichever thread is free: one table's rollouts can cost many times another's.
    parts = np.array_split(np.arange(tables, dtype=np.int64), -(-tables // 4) if threads > 1 else 1)
    if out is None:
        out = empty_labels(samples, policy)
    elif any(k not in out or len(out[k]) != samples for k in LABEL_KEYS):
        raise ValueError(f"out: arrays of {samples} rows are needed")
    pool = ThreadPoolExecutor(threads, thread_name_prefix="yaniv-expert") if threads > 1 else None
    step = batch.reset()
    n = 0
    try:
        while n < samples:
            obs, masks = step.obs, batch.masks.astype(bool)
            seats = batch.G[:, B.G_LEARNER].astype(np.int64)
            cands, counts = policy_candidates(policy, obs, masks, batch.table.yaniv, PLAN_TOP_K, budget)
            labels = np.empty(tables, dtype=np.int64)
            advantages = np.empty(cands.shape)
            results = [np.empty(len(part), dtype=np.int64) for part in parts]
            means = [np.empty((len(part), cands.shape[1])) for part in parts]

            def label(k: int, cands=cands, counts=counts, seats=seats, results=results, means=means) -> None:
                games = parts[k]
                search.choose_games_values(batch.S, A, games, seats[games], cands[games], counts[games], params,
                                           results[k], means[k])

            if pool is None:
                label(0)
            else:
                list(pool.map(label, range(len(parts))))
            for part, result, mean in zip(parts, results, means):
                labels[part] = result
                advantages[part] = mean
            take = min(tables, samples - n)
            out["obs"][n : n + take] = obs[:take]
            out["masks"][n : n + take] = masks[:take]
            out["labels"][n : n + take] = labels[:take]
            out["own"][n : n + take] = cands[:take, 0]
            out["cands"][n : n + take] = cands[:take]
            out["advantages"][n : n + take] = advantages[:take]
            n += take
            step = batch.step(cands[:, 0].copy())
    finally:
        if pool is not None:
            pool.shutdown()
    return out


def empty_labels(samples: int, policy: NumpyPolicy) -> dict[str, np.ndarray]:
    """Room for ``samples`` labels of ``policy`` (``collect_labels``' arrays)."""
    return {"obs": np.empty((samples, policy.observation_size), dtype=np.float16),
            "masks": np.empty((samples, policy.num_actions), dtype=bool),
            "labels": np.empty(samples, dtype=np.int64), "own": np.empty(samples, dtype=np.int64),
            "cands": np.empty((samples, MAX_PLAN_CANDIDATES), dtype=np.int16),
            "advantages": np.empty((samples, MAX_PLAN_CANDIDATES), dtype=np.float32)}


def fit(policy: NumpyPolicy, data: dict[str, np.ndarray], epochs: int, lr: float, seed: int,
        batch_size: int = 1024, log: Callable[[str], None] | None = print, *, target: str = "label",
        temperature: float = 1.0) -> tuple[NumpyPolicy, dict[str, float]]:
    """The policy fitted to the planner's labels by masked cross-entropy with Adam, ``epochs`` passes at
    ``lr``: each tower on the rows routed to it (a tower with no rows is left as it was), the stakes
    skip unchanged. 5% of the rows are held out; returns the fitted policy and the held-out agreement
    with the labels before and after, the last pass's loss and the share of rows on tower 1.

    ``target``: ``"label"``, the planner's choice (``data["labels"]``) as a one-hot target; or
    ``"advantage"``, the start's own distribution tilted by the rollouts' verdicts, ``q(a) ∝
    pi_start(a) exp(A(a) / temperature)`` over the legal actions, ``A`` the candidate's mean rollout
    score minus the start's move's (``data["advantages"]``, points) and 0 for the moves not searched:
    the KL-regularized improvement of the start, which carries how much better a move is, not only
    which one won the planner's test."""
    import torch

    if target not in FIT_TARGETS:
        raise ValueError(f"target must be one of {', '.join(FIT_TARGETS)}, got {target!r}")
    if target == "advantage":
        if not 0.0 < temperature <= 1e6:
            raise ValueError(f"temperature must be in (0, 1e6] points, got {temperature!r}")
        missing = [k for k in ("cands", "advantages") if k not in data]
        if missing:
            raise ValueError(f"target 'advantage' needs the labels' {missing[0]!r} (labels saved before it existed?)")
    torch.manual_seed(seed)
    x_all = data["obs"]
    n = len(x_all)
    if n < 20:
        raise ValueError(f"fit needs at least 20 labels, got {n}")
    routed = (x_all[:, policy.route_index] >= 0.5) if policy.route_index is not None else np.zeros(n, dtype=bool)
    order = np.random.default_rng(seed).permutation(n)
    held, train = order[: n // 20], order[n // 20 :]
    towers = [(policy.weights, policy.biases)]
    if policy.route_index is not None:
        towers.append((policy.tower_weights, policy.tower_biases))
    params = [([torch.nn.Parameter(torch.tensor(w.T.copy())) for w in ws],  # (out, in)
               [torch.nn.Parameter(torch.tensor(b.copy())) for b in bs]) for ws, bs in towers]
    start = ([([w.detach().clone() for w in ws], [b.detach().clone() for b in bs]) for ws, bs in params]
             if target == "advantage" else None)  # the frozen start the advantage target tilts
    layers_out = policy.num_actions
    act = torch.tanh if policy.activation == "tanh" else torch.relu
    skip_index = None if policy.skip_index is None else torch.tensor(policy.skip_index)
    skip_weight = None if policy.skip_weight is None else torch.tensor(policy.skip_weight)

    def mlp(x: torch.Tensor, tower: int, weights: list = params) -> torch.Tensor:
        layers, biases = weights[tower]
        h = x
        for w, b in zip(layers[:-1], biases[:-1]):
            h = act(h @ w.T + b)
        return h @ layers[-1].T + biases[-1]

    def logits(x: torch.Tensor, route: torch.Tensor, weights: list = params) -> torch.Tensor:
        if len(weights) == 1 or not route.any():
            out = mlp(x, 0, weights)
        elif route.all():
            out = mlp(x, 1, weights)
        else:  # each row through its own tower only
            out = torch.empty(len(x), layers_out, dtype=x.dtype)
            out = out.index_put((~route,), mlp(x[~route], 0, weights)).index_put((route,), mlp(x[route], 1, weights))
        if skip_index is not None:
            moves = skip_index.shape[1]
            extra = torch.einsum("nka,k->na", x[:, skip_index], skip_weight)
            out = torch.cat([out[:, :moves] + extra, out[:, moves:]], dim=1)
        return out

    def rows(idx: np.ndarray) -> tuple[torch.Tensor, ...]:
        return (torch.tensor(x_all[idx].astype(np.float32)), torch.tensor(routed[idx]),
                torch.tensor(data["masks"][idx]), torch.tensor(data["labels"][idx]))

    def loss_of(idx: np.ndarray) -> torch.Tensor:
        x, r, m, y = rows(idx)
        z = logits(x, r).masked_fill(~m, -1e9)
        if target == "label":
            return torch.nn.functional.cross_entropy(z, y)
        with torch.no_grad():  # the start's logits, tilted at the searched candidates
            tilted = logits(x, r, start).masked_fill(~m, -1e9)
            cands = torch.tensor(data["cands"][idx].astype(np.int64))
            gain = torch.tensor(np.nan_to_num(data["advantages"][idx], nan=0.0), dtype=tilted.dtype)
            searched = cands >= 0
            gain = torch.where(searched, gain / temperature, torch.zeros_like(gain))
            tilted = tilted.scatter_add(1, cands.clamp(min=0), gain)
            q = torch.softmax(tilted, dim=1)
        return -(q * torch.log_softmax(z, dim=1)).sum(dim=1).mean()

    def agreement() -> float:
        with torch.no_grad():
            hits = 0
            for i in range(0, len(held), 8192):
                x, r, m, y = rows(held[i : i + 8192])
                hits += int((logits(x, r).masked_fill(~m, -1e9).argmax(1) == y).sum())
        return hits / max(1, len(held))

    stats = {"agreement_before": agreement(), "tower1_share": float(routed.mean()), "loss": float("nan")}
    if log:
        log(f"fit: {len(train):,} labels ({stats['tower1_share']:.0%} on tower 1), {len(held):,} held out; "
            f"agreement before {stats['agreement_before']:.4f}")
    optimizer = torch.optim.Adam([p for ws, bs in params for p in ws + bs], lr=lr)
    for epoch in range(epochs):
        perm = np.random.default_rng(seed + 1 + epoch).permutation(train)
        total = 0.0
        for i in range(0, len(perm), batch_size):
            batch = perm[i : i + batch_size]
            loss = loss_of(batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        stats["loss"] = total / len(perm)
        if log:
            log(f"fit epoch {epoch}: loss {stats['loss']:.4f}, held-out agreement {agreement():.4f}")
    stats["agreement_after"] = agreement()
    fitted = [([w.detach().numpy().copy() for w in ws], [b.detach().numpy().copy() for b in bs]) for ws, bs in params]
    skip = None if policy.skip_index is None else (policy.skip_index, policy.skip_weight)
    tower = None if len(fitted) == 1 else (policy.route_feature, *fitted[1])
    return NumpyPolicy(*fitted[0], policy.activation, policy.meta, skip, tower), stats


def load_actor(sb3_policy: Any, policy: NumpyPolicy) -> None:
    """Writes ``policy``'s actor layers into a MaskablePPO policy of the same shape (``MlpPolicy``,
    ``StakesSkipPolicy`` or ``TowerSkipPolicy``): the inverse of ``NumpyPolicy.from_sb3``. The critic
    and the stakes skip are left as they are (``fit`` does not change the skip)."""
    import torch

    def linears(net: torch.nn.Module) -> list[torch.nn.Linear]:
        return [m for m in net if isinstance(m, torch.nn.Linear)]

    def put(layer: torch.nn.Linear | None, weight: torch.Tensor, w: np.ndarray, name: str) -> None:
        if tuple(weight.shape) != w.shape:
            raise ValueError(f"{name}: the model's layer is {tuple(weight.shape)}, the policy's {w.shape}")
        weight.copy_(torch.as_tensor(w, dtype=weight.dtype))

    towered = hasattr(sb3_policy, "tower_layers")
    if towered != (policy.route_index is not None):
        raise ValueError("the model and the policy differ in towers: "
                         f"{'two' if towered else 'one'} against {'two' if policy.route_index is not None else 'one'}")
    with torch.no_grad():
        if not towered:
            layers = linears(sb3_policy.mlp_extractor.policy_net) + [sb3_policy.action_net]
            if len(layers) != len(policy.weights):
                raise ValueError(f"the model has {len(layers)} actor layers, the policy {len(policy.weights)}")
            for i, (layer, w, b) in enumerate(zip(layers, policy.weights, policy.biases)):
                put(layer, layer.weight, w.T, f"layer {i}")
                put(layer, layer.bias, b, f"layer {i}'s bias")
            return
        action = sb3_policy.action_net
        for k, (ws, bs) in enumerate(((policy.weights, policy.biases), (policy.tower_weights, policy.tower_biases))):
            tower = sb3_policy.mlp_extractor.towers[k]
            hidden = linears(tower.policy_net)
            if len(hidden) + 1 != len(ws):
                raise ValueError(f"tower {k}: the model has {len(hidden) + 1} actor layers, the policy {len(ws)}")
            for i, (layer, w, b) in enumerate(zip(hidden, ws, bs)):
                put(layer, layer.weight, w.T, f"tower {k} layer {i}")
                put(layer, layer.bias, b, f"tower {k} layer {i}'s bias")
            width = tower.latent_dim_pi
            at = k * (width + 1)
            put(None, action.weight[:, at : at + width], ws[-1].T, f"tower {k}'s action layer")
            action.weight[:, at + width] = torch.as_tensor(bs[-1], dtype=action.weight.dtype) - action.bias


def stage_tables(config: Any, towers: bool) -> list[tuple[float, dict[str, Any]]]:
    """The tables ``expert_stage`` draws its labels from: (share of the labels, ``collect_labels``
    arguments), those of the run's first steps and, for a network with ``towers``, of the towers'
    stage (``towers_from`` on)."""
    from agents.training.selfplay import compiled_baselines

    controllers = compiled_baselines(config)
    missing = [spec for spec, c in controllers.items() if c is None]
    if missing:
        raise ValueError(f"expert_samples: baseline {missing[0]!r} has no form on the compiled core, where the "
                         "planner's labels are made")

    def tables(step: int) -> dict[str, Any]:
        specs = [controllers[s] for s in config.training_baselines(step)]

        def draw(rng: np.random.Generator, seats: int) -> list[Any]:
            return [specs[int(rng.integers(len(specs)))] for _ in range(seats)]

        return dict(players=config.training_players(step), rules=config.rules,
                    rule_sets=config.training_rule_sets(step) or None, episode=config.episode,
                    round_share=config.round_share, opponents=draw, round_reward=config.round_reward,
                    max_turns=config.max_turns)

    if not towers:
        return [(1.0, tables(0))]
    share = config.expert_tower_share
    return [(s, t) for s, t in ((1.0 - share, tables(0)), (share, tables(config.towers_from))) if s > 0]


def collect_parts(policy: NumpyPolicy, parts: list[tuple[float, dict[str, Any]]], samples: int, seed: int,
                  budget: int, threads: int, search_settings: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """``samples`` labels from ``parts`` (``stage_tables``), each part its share (the last the rest)
    with seed ``seed + k``, written in place into one set of arrays: the labels held once."""
    counts = [int(round(share * samples)) for share, _ in parts]
    counts[-1] = samples - sum(counts[:-1])
    data = empty_labels(samples, policy)
    at = 0
    for k, ((_, tables), count) in enumerate(zip(parts, counts)):
        if count > 0:
            collect_labels(policy, count, seed=seed + k, budget=budget, threads=threads,
                           out={key: v[at : at + count] for key, v in data.items()},
                           search_settings=search_settings, **tables)
            at += count
    return data


def expert_stage(config: Any, model: Any, log: Callable[[str], None] | None = print) -> dict[str, float]:
    """The stage ``train.py`` runs after PPO: ``config.expert_samples`` labels of the model's planner
    from the training's tables (``stage_tables``), the actor fitted to them (``fit``, at
    ``expert_learning_rate`` for ``expert_epochs`` passes) and written back into ``model``. Returns
    its figures: labels, the share the planner overruled, the held-out agreement before and after,
    and the seconds (collecting, and in all)."""
    start = time.perf_counter()
    student = NumpyPolicy.from_sb3(model)
    parts = stage_tables(config, towers=student.route_index is not None)
    data = collect_parts(student, parts, config.expert_samples, config.seed * 1000 + 777, config.expert_budget,
                         config.expert_threads)
    collect_seconds = time.perf_counter() - start
    overruled = float((data["labels"] != data["own"]).mean())
    fitted, stats = fit(student, data, config.expert_epochs, config.expert_learning_rate, seed=config.seed,
                        batch_size=config.expert_batch_size, log=log)
    load_actor(model.policy, fitted)
    return {"samples": len(data["labels"]), "overruled": overruled, "agreement_before": stats["agreement_before"],
            "agreement_after": stats["agreement_after"], "tower1_share": stats["tower1_share"],
            "collect_seconds": collect_seconds, "seconds": time.perf_counter() - start}


def expert_summary(config: Any, stats: dict[str, float]) -> str:
    """One line on the expert stage's figures, as train.py prints it."""
    return (f"expert stage (planner, {config.expert_budget} rollouts): {stats['samples']:,} labels in "
            f"{stats['collect_seconds']:.0f}s, the planner overruling the network in {stats['overruled']:.1%}; "
            f"fitted in {stats['seconds'] - stats['collect_seconds']:.0f}s, held-out agreement "
            f"{stats['agreement_before']:.1%} -> {stats['agreement_after']:.1%}")
