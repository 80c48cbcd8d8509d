"""What more observed information is worth to PPO on heads-up single rounds against the heuristic.

A diagnostic, not a recipe: PPO on heads-up rounds against the heuristic ends near the search's
margin (about +1.2 points a round), whatever its mix, width, passes or samples, while the learning
issue asks +1.5 (docs/experiments.md, 2026-12-03 and 2026-12-05). Is the observation the limit, or
the learner? Each *arm* appends features to the observation and trains the same way from the same
start:

* ``zeros``: as many entries, always 0 (the control: the same network, the same samples);
* ``hand``: the opponent's hand, one entry per card (it cheats: the ceiling perfect inference gives);
* ``total``: the opponent's hand total alone, as entries ``total <= t`` for t = 0..53 (it cheats too:
  how much of the hand's worth is its points);
* ``thrown``: the round's history, per card whether the opponent threw it this round and whether the
  learner did (the observation holds only each seat's last discard and the dead cards);
* ``memory``: ``thrown``, plus what the opponent passed up (per card, whether the learner threw it
  and the opponent drew something else) and how often it drew from the deck this round (entries
  ``draws > k``, k = 0..9): what a memory of the round's public moves adds;
* ``belief``: the opponent's total as a fitted belief predicts it from what the learner may see (the
  observation and ``memory``'s entries): ``P(total <= t)``, t = 0..53, where the belief is an MLP fitted
  by cross-entropy on the true totals of positions played by the start (``--fit-belief``). No
  cheating at play; the hidden totals only label its training data, as a critic's returns do;
* ``posterior``: per card, the share of 16 samples of the hidden cards in which the opponent holds
  it, the samples drawn as the search draws them (``yaniv_env.core.search``: uniform within their
  epochs, then swept towards the hands the opponent's last discard argues for): the inference that
  gives the planner most of its edge (``benchmarks/planner_edge.py``), as an input. No cheating.

What they gave (docs/experiments.md, 2026-12-05 and 2026-12-07; 100,000 rounds): the control
+1.21 from either start; ``hand`` +2.05 and ``total`` +2.64 (the cheats); ``thrown`` +1.26,
``memory`` +1.21, ``belief`` +1.31, ``posterior`` +1.24: nothing the learner may see, given as an
input, moves PPO past the control's interval. From the expert-iteration student of the shipped
network instead (+1.15), the control reaches +1.7 (2026-12-07): PPO climbs further from where the
planner's labels put it than from the network they were drawn from.

The start is a run's checkpoint (``--start runs/NAME/checkpoints/latest.zip``; with towers, tower
``--tower``: 0, the one for whole games, unless given): its actor and critic, the first layers
widened by columns of zeros, so every arm starts from the same play. Or a policy file
(``--start iter1.npz``: what ``ppo:PATH`` plays, such as ``expert_iteration.py``'s students): its
actor so widened, and a new critic, trained ``--warm`` steps (1,000,000 unless given) with the actor
frozen before PPO moves it (``actor_model``, ``warm_critic``; the rate's fall runs over both).
Then ``--steps`` of MaskablePPO (the default config's hyperparameters, the rate falling linearly
from ``--lr`` to zero) on 128 tables of heads-up rounds under ``--rules`` (the default rules unless
given), paid as the env pays them (the relative points; a game of one round, its rank), against
``--opponent`` (``heuristic`` unless given); then the margin (the heuristic's points minus the learner's, a round) over
``--eval-rounds`` rounds on fresh seeds, the learner's best action (as the tournament plays a bot),
with a normal 95% interval, and the share of rounds won (fewer points than the heuristic: under
``game_end=one_round``, the games won). ``--tower 1`` starts from the tower for games of one round,
as the shipped bot plays them; ``--house-share S`` trains on rules of the house space in that share
of the games (made games of one round when ``--rules`` is one, as the recipe's tower stage draws
them).

    python benchmarks/information_value.py --start runs/default/checkpoints/latest.zip --arm zeros --save zeros.zip
    python benchmarks/information_value.py --start runs/default/checkpoints/latest.zip --arm zeros --steps 0  # the start
    python benchmarks/information_value.py --start zeros.zip --arm zeros --steps 0   # a saved arm, measured again
    python benchmarks/information_value.py --start zeros.zip --arm zeros --steps 0 --export zeros.npz  # ppo:zeros.npz
    python benchmarks/information_value.py --start runs/default/checkpoints/latest.zip --fit-belief belief.npz
    python benchmarks/information_value.py --start runs/default/checkpoints/latest.zip --arm belief --belief belief.npz
    python benchmarks/information_value.py --start /tmp/ei/iter1.npz --arm zeros --export after.npz  # PPO after EI
    # the no-jokers row of the learning issue: a game of one round, from the tower that plays it
    python benchmarks/information_value.py --start runs/default/checkpoints/latest.zip --arm zeros \
        --rules default:jokers=0,game_end=one_round --tower 1

Besides the margin and the rounds won (``won``, with ``won_half_width``), the line gives where they
come from: the share of rounds the learner calls and is Assafed calling, the heuristic's two, and
the mean turns a round. The same seed gives the same figures for a saved model (the evaluation's
deals and moves are fixed); training runs on torch's default threads, so two runs of an arm agree
only as far as torch allows.

The checkpoint is an SB3 pickle: pass only a run of your own. Prints one line of figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yaniv.cards import NUM_CARDS  # noqa: E402
from yaniv_env.core import batch as B  # noqa: E402
from yaniv_env.core import layout as L  # noqa: E402

EXTRA = {"zeros": NUM_CARDS, "hand": NUM_CARDS, "total": NUM_CARDS, "thrown": 2 * NUM_CARDS,
         "memory": 3 * NUM_CARDS + 10, "belief": NUM_CARDS, "posterior": NUM_CARDS}
POSTERIOR_SAMPLES = 16  # the posterior arm's samples of the hidden cards a decision
POSTERIOR_RHO, POSTERIOR_SWEEPS = 0.35, 3  # the search's defaults (yaniv_env.core.search.search_params)


def _posterior_kernel():
    """The ``posterior`` arm's numba kernel, compiled on first use: per row, the share of
    ``samples`` informed samples of the learner's view (``yaniv_env.core.search``: the uniform deal
    within epochs, then the sweeps towards what the opponent's last discard argues for) in which the
    opponent holds each card. Cards it is known to hold read 1 in every sample."""
    from numba import njit

    from yaniv_env.core.search import draw_sample, informed, prepare_view

    @njit(cache=True)
    def posterior(rows, seats, r, samples, rho, sweeps, out):
        work = np.empty(NUM_CARDS, dtype=np.int64)
        for k in range(rows.shape[0]):
            s = rows[k]
            if s[L.PHASE] == L.PHASE_OVER:
                continue
            me = seats[k]
            other = 1 - me
            template, cards, places, starts, pending = prepare_view(s, me)
            sample = np.empty_like(s)
            for _ in range(samples):
                draw_sample(sample, r, template, cards, places, starts, pending, work)
                informed(sample, me, r, rho, sweeps)
                at = L.HAND + other * L.HAND_ROOM
                for i in range(sample[L.HAND_LEN + other]):
                    out[k, sample[at + i]] += 1.0 / samples
    return posterior


_POSTERIOR = _POSTERIOR_RNG = None  # the posterior arm's kernel and its generator, made on first use


def seed_posterior(seed: int) -> None:
    """Seed the posterior arm's samples (``wrapped_env`` does, from its own seed)."""
    global _POSTERIOR_RNG
    from yaniv_env.core.engine import seed_rng

    _POSTERIOR_RNG = np.array([seed_rng(seed)], dtype=np.uint64)


def extra_features(arm: str, rows: np.ndarray, seats: np.ndarray, memory: tuple | None = None) -> np.ndarray:
    """(len(rows), EXTRA[arm]) float32: the arm's features of each row for the learner at ``seats``
    (``memory``: the ``memory`` arm's (passed, deck draws) per row)."""
    out = np.zeros((len(rows), EXTRA[arm]), dtype=np.float32)
    if arm == "zeros" or not len(rows):
        return out
    other = 1 - seats  # heads-up
    if arm == "hand":
        for k in range(len(rows)):
            at = L.HAND + other[k] * L.HAND_ROOM
            out[k, rows[k, at : at + rows[k, L.HAND_LEN + other[k]]]] = 1.0
        return out
    if arm == "posterior":
        global _POSTERIOR
        if _POSTERIOR is None:
            _POSTERIOR = _posterior_kernel()
        if _POSTERIOR_RNG is None:
            seed_posterior(0)
        _POSTERIOR(np.ascontiguousarray(rows), np.ascontiguousarray(seats, dtype=np.int64), _POSTERIOR_RNG,
                   POSTERIOR_SAMPLES, POSTERIOR_RHO, POSTERIOR_SWEEPS, out)
        return out
    if arm == "total":
        totals = rows[np.arange(len(rows)), L.TOTAL + other]
        out[:] = totals[:, None] <= np.arange(NUM_CARDS)[None, :]
        return out
    thrown = rows[:, L.THROWN : L.THROWN + NUM_CARDS]
    out[:, :NUM_CARDS] = (thrown >> other[:, None]) & 1
    out[:, NUM_CARDS : 2 * NUM_CARDS] = (thrown >> seats[:, None]) & 1
    if arm == "memory":
        passed, draws = memory
        out[:, 2 * NUM_CARDS : 3 * NUM_CARDS] = passed
        out[:, 3 * NUM_CARDS :] = draws[:, None] > np.arange(10)[None, :]
    return out


def remember(rows: np.ndarray, seats: np.ndarray, passed: np.ndarray, draws: np.ndarray) -> None:
    """At each learner's decision of the play phase, the opponent's turn since its last one: the
    cards of the learner's last discard it did not draw are passed up, and a deck draw counts."""
    for k in range(len(rows)):
        s, me = rows[k], seats[k]
        other = 1 - me
        if s[L.PHASE] != L.PHASE_PLAY or s[L.LAST_HIGH + other] < 0 or s[L.LAST_LEN + me] == 0:
            continue
        drew = s[L.LAST_DREW + other]
        for c in s[L.LAST_CARDS + me * L.GROUP_ROOM : L.LAST_CARDS + me * L.GROUP_ROOM + s[L.LAST_LEN + me]]:
            if c != drew:
                passed[k, c] = 1
        if drew == L.DECK_SOURCE:
            draws[k] += 1


class Belief:
    """The fitted belief in numpy: ``cumulative(x)`` is ``P(total <= t)`` per row, t = 0..53."""

    def __init__(self, path: Path) -> None:
        with np.load(path, allow_pickle=False) as data:
            self.layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(sum(f.startswith("w") for f in data.files))]
            self.memory = bool(data["memory"])  # whether memory's entries are among its inputs

    def logits(self, x: np.ndarray) -> np.ndarray:
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return x

    def cumulative(self, x: np.ndarray) -> np.ndarray:
        z = self.logits(x)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        return (np.cumsum(p, axis=1) / p.sum(axis=1, keepdims=True)).astype(np.float32)


def wrapped_env(arm: str, seed: int, belief: Belief | None = None, rules: str = "default",
                opponent: str = "heuristic", house_share: float = 0.0) -> Any:
    """128 tables of heads-up rounds under ``rules`` (a preset, or one with changes:
    ``yaniv.rules.parse_rules``) against ``opponent`` (``YanivVecEnv``, env i seeded ``seed + i``),
    ``house_share`` of the games under rules of the house space instead (``house_rule_sets``),
    each observation followed by the arm's entries (the ``belief`` arm needs its ``belief``);
    ``action_masks()`` as the env's, so MaskablePPO masks them."""
    if arm not in EXTRA:
        raise ValueError(f"arm must be one of {sorted(EXTRA)}, got {arm!r}")
    if arm == "belief" and belief is None:
        raise ValueError("the belief arm needs a fitted belief (--belief PATH, from --fit-belief)")
    from gymnasium import spaces
    from stable_baselines3.common.vec_env import VecEnvWrapper

    from yaniv_env.vector import YanivVecEnv

    class Extra(VecEnvWrapper):
        def __init__(self, venv: YanivVecEnv) -> None:
            size = venv.observation_space.shape[0] + EXTRA[arm]
            super().__init__(venv, observation_space=spaces.Box(0.0, 1.0, (size,), dtype=np.float32))

        def _now(self, obs: np.ndarray, dones: np.ndarray | None = None) -> np.ndarray:
            batch = self.venv.batch
            seats = np.ascontiguousarray(batch.G[:, B.G_LEARNER])
            if dones is None:
                self.passed = np.zeros((self.num_envs, NUM_CARDS), dtype=np.float32)
                self.draws = np.zeros(self.num_envs, dtype=np.int64)
            else:
                self.passed[dones] = 0
                self.draws[dones] = 0
            if arm in ("memory", "belief"):
                remember(batch.S, seats, self.passed, self.draws)
            return np.concatenate([obs, self._extra(obs, batch.S, seats, (self.passed, self.draws))], axis=1)

        def _extra(self, obs: np.ndarray, rows: np.ndarray, seats: np.ndarray, memory: tuple) -> np.ndarray:
            if arm != "belief":
                return extra_features(arm, rows, seats, memory)
            if not belief.memory:
                return belief.cumulative(obs)
            return belief.cumulative(np.concatenate([obs, extra_features("memory", rows, seats, memory)], axis=1))

        def reset(self) -> np.ndarray:
            return self._now(self.venv.reset())

        def step_wait(self) -> Any:
            obs, rewards, dones, infos = self.venv.step_wait()
            finals = self.venv.final_rows
            for i, info in enumerate(infos):
                if "terminal_observation" in info:
                    row = finals[i][None, :]
                    seat = np.array([info["seat"]], dtype=np.int64)
                    memory = (self.passed[i : i + 1], self.draws[i : i + 1])
                    final = info["terminal_observation"]
                    info["terminal_observation"] = np.concatenate([final, self._extra(final[None], row, seat, memory)[0]])
            return self._now(obs, dones.astype(bool)), rewards, dones, infos

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

    from yaniv.rules import parse_rules

    if arm == "posterior":
        seed_posterior(seed + 7919)  # its own stream, apart from the tables' seeds seed + i
    parsed = parse_rules(rules)
    rule_sets = house_rule_sets(parsed, house_share, seed) if house_share else None
    venv = YanivVecEnv(num_envs=128, players=2, rules=parsed, opponents=opponent, episode="round",
                       round_reward="relative", seed=seed, rule_sets=rule_sets)
    return Extra(venv)


def house_rule_sets(rules: Any, share: float, seed: int) -> list:
    """1,024 rule sets a game draws from: ``share`` of them a sample of the house space
    (``yaniv.rule_space``) with ``rules``' game end (a game of one round, as the recipe's tower stage
    makes them), the others ``rules``."""
    from yaniv.rule_space import get_rule_space

    drawn = get_rule_space("house").sample(1024, np.random.default_rng(seed))
    house = round(share * len(drawn))
    return [r.replace(game_end=rules.game_end) for r in drawn[:house]] + [rules] * (len(drawn) - house)


def _wide_policy(base_size: int) -> type:
    """``StakesSkipPolicy`` whose stakes skip reads the base observation's first ``base_size`` entries."""
    import torch

    from agents.policies.stakes import skip_index
    from agents.policies.stakes_torch import StakesLatent, StakesSkipPolicy

    class WidePolicy(StakesSkipPolicy):
        def _build_mlp_extractor(self) -> None:
            super(StakesSkipPolicy, self)._build_mlp_extractor()
            index = skip_index(base_size)
            self.mlp_extractor = StakesLatent(self.mlp_extractor, index)
            self.skip_shape = index.shape
            self.skip_weight = torch.nn.Parameter(torch.zeros(index.shape[0]))

    return WidePolicy


def _arm_model(env: Any, base_size: int, lr: float, seed: int, net_arch: Any) -> Any:
    """The arms' MaskablePPO (the default config's hyperparameters, the rate falling from ``lr`` to zero)."""
    from sb3_contrib import MaskablePPO

    return MaskablePPO(_wide_policy(base_size), env, learning_rate=lambda left: lr * left, n_steps=32,
                       batch_size=1024, n_epochs=1, gamma=0.995, gae_lambda=0.95, clip_range=0.1, ent_coef=0.0,
                       seed=seed, policy_kwargs={"net_arch": net_arch}, device="cpu")


def widened_model(start: Path, env: Any, base_size: int, lr: float, seed: int, tower: int = 0) -> Any:
    """A MaskablePPO on ``env`` whose actor and critic are the start's (its tower ``tower`` when it has
    towers), the first layers widened by zero columns for the extra entries."""
    import torch

    from agents.training.model import load_model

    old = load_model(start).policy
    model = _arm_model(env, base_size, lr, seed, old.net_arch)
    new = model.policy
    towers = getattr(old.mlp_extractor, "towers", None)
    if towers is None and tower != 0:
        raise ValueError(f"the start {start} has one network, not towers: --tower must be 0, got {tower}")
    source = towers[tower] if towers is not None else old.mlp_extractor.inner
    with torch.no_grad():
        state = source.state_dict()
        for name, tensor in new.mlp_extractor.inner.state_dict().items():
            src = state[name]
            if src.shape != tensor.shape:  # a first layer: the old columns, then zeros
                tensor.zero_()
                tensor[:, : src.shape[1]] = src
            else:
                tensor.copy_(src)
        for mine, theirs in ((new.action_net, old.action_net), (new.value_net, old.value_net)):
            width = mine.weight.shape[1]
            at = tower * (width + 1)  # a tower's columns over the routed latent, then its column of ones
            mine.weight.copy_(theirs.weight[:, at : at + width])
            bias = theirs.bias + (theirs.weight[:, at + width] if theirs.weight.shape[1] > width else 0)
            mine.bias.copy_(bias)
        new.skip_weight.copy_(old.skip_weight)
    return model


def actor_model(start: Path, env: Any, base_size: int, lr: float, seed: int, tower: int = 0) -> Any:
    """A MaskablePPO on ``env`` whose actor is the policy file ``start``'s (``NumpyPolicy``: its tower
    ``tower`` when it has towers), the first layer widened by zero columns, and whose critic is new
    (as wide as the actor, at torch's initialization): ``warm_critic`` it before PPO moves the actor."""
    import torch

    from agents.policies.ppo import NumpyPolicy
    from agents.policies.stakes_torch import SKIP_SCALE

    policy = NumpyPolicy.load(start)
    if policy.skip_index is None:
        raise ValueError(f"the policy file {start} has no stakes skip: not an actor of the default config's shape")
    if policy.route_index is None and tower != 0:
        raise ValueError(f"the policy file {start} has one network, not towers: --tower must be 0, got {tower}")
    if policy.observation_size != base_size:
        raise ValueError(f"the policy file {start} takes {policy.observation_size} observations, the env gives "
                         f"{base_size}")
    weights, biases = ((policy.tower_weights, policy.tower_biases) if tower == 1 else (policy.weights, policy.biases))
    model = _arm_model(env, base_size, lr, seed, [w.shape[1] for w in weights[:-1]])
    actor = [m for m in model.policy.mlp_extractor.inner.policy_net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for layer, w, b in zip(actor + [model.policy.action_net], weights, biases, strict=True):
            layer.weight.zero_()  # (out, in): the file's columns, then zeros for the extra entries
            layer.weight[:, : w.shape[0]] = torch.as_tensor(w.T)
            layer.bias.copy_(torch.as_tensor(b))
        model.policy.skip_weight.copy_(torch.as_tensor(policy.skip_weight / SKIP_SCALE))  # the file folds the scale in
    return model


def warm_critic(model: Any, steps: int) -> None:
    """``steps`` of ``model.learn`` with the actor (its layers, its logits' layer and the stakes skip)
    frozen: the critic learns the actor's values, the actor does not move. The rate's schedule then
    continues over the steps that follow (``learn(..., reset_num_timesteps=False)``)."""
    policy = model.policy
    frozen = list(policy.mlp_extractor.inner.policy_net.parameters())
    frozen += list(policy.action_net.parameters()) + [policy.skip_weight]
    for p in frozen:
        p.requires_grad_(False)
    try:
        model.learn(steps)
    finally:
        for p in frozen:
            p.requires_grad_(True)


def fit_belief(start: Path, out: Path, samples: int, seed: int, memory: bool = True, rules: str = "default",
               tower: int = 0) -> None:
    """Positions the start plays against the heuristic (sampling its moves), labelled with the
    opponent's true total; an MLP [256, 128] fitted on 90% by cross-entropy, its held-out log-loss
    and mean absolute error printed beside the prior's (the totals' frequencies); saved as .npz.
    Its inputs: the observation and ``memory``'s entries, or (``memory=False``) the observation alone."""
    import torch

    env = wrapped_env("memory", seed, rules=rules)
    base = env.venv.observation_space.shape[0]
    model = widened_model(start, env, base, 0.0, seed, tower)  # zero columns: the start's play
    xs, ys = [], []
    obs = env.reset()
    while sum(len(x) for x in xs) < samples:
        batch = env.venv.batch
        seats = batch.G[:, B.G_LEARNER]
        xs.append(obs.copy() if memory else obs[:, :base].copy())
        ys.append(np.minimum(batch.S[np.arange(len(seats)), L.TOTAL + 1 - seats], NUM_CARDS - 1))
        actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=False)
        obs, _, _, _ = env.step(actions)
    x = torch.as_tensor(np.concatenate(xs)[:samples])
    y = torch.as_tensor(np.concatenate(ys)[:samples])
    cut = samples * 9 // 10
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                              torch.nn.ReLU(), torch.nn.Linear(128, NUM_CARDS))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss = torch.nn.functional.cross_entropy
    for epoch in range(6):
        order = torch.randperm(cut)
        for i in range(0, cut, 1024):
            rows = order[i : i + 1024]
            optimizer.zero_grad()
            loss(net(x[rows]), y[rows]).backward()
            optimizer.step()
        with torch.no_grad():
            logits = net(x[cut:])
            held = float(loss(logits, y[cut:]))
            p = torch.softmax(logits, dim=1)
            mae = float((p @ torch.arange(NUM_CARDS, dtype=torch.float32) - y[cut:]).abs().mean())
        print(f"belief epoch {epoch}: held-out log-loss {held:.3f}, mean absolute error of the mean {mae:.2f}", flush=True)
    prior = torch.bincount(y[:cut], minlength=NUM_CARDS).float() + 1
    prior /= prior.sum()
    prior_loss = float(-torch.log(prior[y[cut:]]).mean())
    prior_mae = float((prior @ torch.arange(NUM_CARDS, dtype=torch.float32) - y[cut:].float()).abs().mean())
    print(f"belief: {samples} positions; the prior's log-loss {prior_loss:.3f}, mean absolute error {prior_mae:.2f}")
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    arrays = {"memory": np.array(memory)}
    for i, m in enumerate(linears):
        arrays[f"w{i}"] = m.weight.detach().numpy().T.copy()
        arrays[f"b{i}"] = m.bias.detach().numpy().copy()
    np.savez(out, **arrays)


def export_policy(model: Any, base_size: int, rules: str, out: Path) -> None:
    """The ``zeros`` arm's actor as a policy file the tournament plays (``ppo:PATH``): one network,
    its first layer without the extra columns. They held zeros all along, so their weights never
    moved from zero (checked: a ValueError otherwise) and the file plays the arm's moves."""
    from agents.policies.ppo import NumpyPolicy

    policy = NumpyPolicy.from_sb3(model)
    first = policy.weights[0]  # (inputs, outputs)
    if first.shape[0] != base_size + EXTRA["zeros"] or np.abs(first[base_size:]).max() != 0:
        raise ValueError("only the zeros arm exports: its extra columns must be zeros, of the base observation's width")
    weights = [w.T for w in policy.weights]
    weights[0] = weights[0][:, :base_size]
    NumpyPolicy(weights, policy.biases, policy.activation, {"rules": rules, "step": int(model.num_timesteps)},
                (policy.skip_index, policy.skip_weight)).save(out)


def margin(model: Any, arm: str, rounds: int, seed: int, belief: Belief | None = None, rules: str = "default"
           ) -> tuple[float, float, int, dict[str, float]]:
    """The mean margin a round (the heuristic's points minus the learner's), its 95% half-width, the
    rounds, and where it comes from: the share of rounds the learner wins (fewer points: a game of one
    round won) and its 95% half-width, the share it calls, is Assafed, the heuristic calls, is
    Assafed, and the mean turns a round."""
    env = wrapped_env(arm, seed, belief, rules)
    obs = env.reset()
    got: list[float] = []
    keys = ("won", "calls", "assafed", "their_calls", "they_assafed", "turns")
    counts = dict.fromkeys(keys, 0.0)
    while len(got) < rounds:
        actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        obs, rewards, dones, infos = env.step(actions)
        for i in np.flatnonzero(dones):
            row, me = env.venv.final_rows[int(i)], infos[i]["seat"]
            points = row[L.RES_POINTS : L.RES_POINTS + 2]
            got.append(float(points[1 - me] - points[me]))
            caller, assafed = row[L.RES_CALLER], row[L.RES_ASSAFERS] != 0
            counts["won"] += caller >= 0 and points[me] < points[1 - me]
            counts["calls" if caller == me else "their_calls"] += caller >= 0
            counts["assafed" if caller == me else "they_assafed"] += caller >= 0 and assafed
            counts["turns"] += row[L.RES_TURNS]
    values = np.array(got[:rounds])
    shares = {key: value / len(got) for key, value in counts.items()}
    shares["won_half_width"] = 1.96 * np.sqrt(shares["won"] * (1 - shares["won"]) / len(got))
    return float(values.mean()), float(1.96 * values.std(ddof=1) / np.sqrt(len(values))), len(values), shares


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", type=Path, required=True,
                        help="a run's checkpoint .zip (an SB3 pickle: your own), or a policy file .npz (ppo:PATH's "
                             "file, such as expert_iteration.py's iter1.npz: its actor, with a new critic)")
    parser.add_argument("--warm", type=int,
                        help="steps that train the critic alone, the actor frozen, before --steps (default: "
                             "1,000,000 from a policy file, whose critic is new; 0 from a checkpoint)")
    parser.add_argument("--arm", choices=sorted(EXTRA), default="zeros")
    parser.add_argument("--steps", type=int, default=10_000_000)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-rounds", type=int, default=40_000)
    parser.add_argument("--save", type=Path, help="write the trained model here (.zip)")
    parser.add_argument("--export", type=Path, help="the zeros arm only: write its actor as a policy .npz (ppo:PATH)")
    parser.add_argument("--belief", type=Path, help="the belief arm's fitted belief (.npz)")
    parser.add_argument("--fit-belief", type=Path, help="fit a belief on positions the start plays, write it here (.npz)")
    parser.add_argument("--samples", type=int, default=400_000, help="positions for --fit-belief")
    parser.add_argument("--rules", default="default",
                        help="the rounds' rules: a preset or one with changes, 'default:jokers=0,game_end=one_round'")
    parser.add_argument("--opponent", default="heuristic",
                        help="the bot the arm trains against (a spec with a compiled form; the margin is always "
                             "measured against heuristic)")
    parser.add_argument("--house-share", type=float, default=0.0,
                        help="the share of training games under rule sets of the house space (with --rules' game "
                             "end) instead of --rules; the margin is always measured under --rules")
    parser.add_argument("--tower", type=int, choices=(0, 1), default=0,
                        help="with a start of two towers, the one to take (1: the one for games of one round)")
    parser.add_argument("--obs-only", action="store_true", help="--fit-belief on the observation alone, without memory")
    args = parser.parse_args(argv)
    import torch

    from agents.policies.ppo import one_blas_thread

    one_blas_thread()  # the belief's numpy products beside torch's threads (as train.py)
    torch.manual_seed(args.seed)
    from_file = args.start.suffix == ".npz"
    if args.warm is None:
        args.warm = 1_000_000 if from_file else 0
    for name, low in (("steps", 0), ("warm", 0), ("eval_rounds", 2), ("samples", 1000)):
        if getattr(args, name) < low:
            parser.error(f"--{name.replace('_', '-')} must be at least {low}, got {getattr(args, name)}")
    from yaniv.rules import parse_rules

    try:
        parse_rules(args.rules)
    except ValueError as error:
        parser.error(f"--rules: {error}")
    if not 0.0 <= args.house_share <= 1.0:
        parser.error(f"--house-share is a share from 0 to 1, got {args.house_share}")
    if args.fit_belief and from_file:
        parser.error("--fit-belief needs a checkpoint .zip as --start (a policy file has no critic to widen)")
    if args.fit_belief:
        fit_belief(args.start, args.fit_belief, args.samples, args.seed, memory=not args.obs_only, rules=args.rules,
                   tower=args.tower)
        return
    if args.export and args.arm != "zeros":
        parser.error(f"--export writes the zeros arm only (the {args.arm} arm's extra entries are not seen in play)")
    if args.arm == "belief" and not args.belief:
        parser.error("--arm belief needs --belief PATH (from --fit-belief)")
    belief = Belief(args.belief) if args.arm == "belief" else None
    try:
        env = wrapped_env(args.arm, args.seed, belief, args.rules, args.opponent, args.house_share)
    except ValueError as error:  # an opponent the core cannot play, say
        parser.error(str(error))
    base = env.venv.observation_space.shape[0]
    try:
        model = (actor_model if from_file else widened_model)(args.start, env, base, args.lr, args.seed, args.tower)
    except ValueError as error:
        parser.error(f"--start {args.start}: {error}")
    began = time.perf_counter()
    if args.warm:
        warm_critic(model, args.warm)
    if args.steps:
        model.learn(args.steps, reset_num_timesteps=not args.warm)
    trained = time.perf_counter() - began
    if args.save:
        model.save(args.save)
    if args.export:
        export_policy(model, base, args.rules, args.export)
    mean, half, n, shares = margin(model, args.arm, args.eval_rounds, seed=10**6, belief=belief, rules=args.rules)
    print(f"arm={args.arm} rules={args.rules} tower={args.tower} opponent={args.opponent} house={args.house_share} "
          f"warm={args.warm} steps={args.steps} "
          f"lr={args.lr} seed={args.seed} train_s={trained:.0f} "
          f"margin={mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}] rounds={n} "
          + " ".join(f"{key}={value:.3f}" for key, value in shares.items()), flush=True)


if __name__ == "__main__":
    main()
