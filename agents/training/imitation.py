"""A head start for PPO: the network first learns to copy a bot (behaviour cloning, then DAgger).

    stats = imitation_stage(config, model)      # what train.py runs before a new run's first PPO step
    print(imitation_summary(config, stats))

    data = collect_imitation_data(config, "heuristic", 10_000, gamma=0.99, seed=0)
    imitate(model, data, epochs=6, batch_size=512, vf_coef=0.5, seed=0)

With ``imitation_samples > 0`` a new run plays that many decisions of ``imitation_bot`` (any agent
spec of ``agents.registry``) at every seat of full games, table sizes drawn from ``players`` (so
the scores, eliminations and starters are those of real play), and trains the model on them: the
actor learns the bot's moves (masked cross-entropy), the critic the round returns that followed.
With ``imitation_rounds > 1`` each further round is DAgger: the network plays about half the seats
of new games while the bot still names the move it would make there. These decisions do not count
in ``total_timesteps``.

Where the data comes from: a bot with a compiled form (random, greedy, the heuristic with any
settings, the search at any budget) plays on the compiled core, and every pass over the data
(``imitation_epochs``) gets ``imitation_samples`` fresh decisions, made on the fly and seen once
(``agents.training.teacher``, ``imitate_stream``); memory holds one chunk of them. Any other bot plays on the Python engine
(``collect_imitation_data``), and each round's decisions join those of the earlier rounds in
memory and the model trains on all of them (``imitate``).

Why: a round's return is mostly decided by when the other players call, so from the learner's
observation the critic explains little of its variance and PPO from scratch learns slowly, while
copying a good heuristic gets most of its strength in minutes; a gentle PPO then starts from
there. A copy trained on the bot's games alone never sees the positions its own small mistakes
lead to, and errs more there: hence DAgger. Measurements: docs/experiments.md.

Contract: the data's rows are the observation (``yaniv_env.encoding.Observer``, from the player's
view), the action mask, the bot's action id and the discounted return; every recorded action is
legal. ``imitate`` uses the model's own optimizer and gives it back its learning rate.
"""

from __future__ import annotations

import math
import time
from typing import Any, Iterator

import numpy as np

from agents.policies.ppo import NumpyPolicy
from agents.training.config import TrainConfig
from yaniv.rules import PRESETS


def collect_imitation_data(
    config: TrainConfig, bot: str, samples: int, gamma: float, seed: int, student: NumpyPolicy | None = None
) -> dict[str, np.ndarray]:
    """``samples`` decisions of ``bot`` playing every seat of full games (table sizes drawn from
    ``config.players``): each decision's observation and mask, the bot's action, and the return
    that followed it within its round (the round reward of ``config.round_reward``, discounted by
    ``gamma`` per own decision). Full games, so the scores, eliminations and starters are those of
    real play; every seat's decisions count, so a 4-player table gives four times the data of one
    seat.

    With a ``student`` (DAgger), each seat of a game is the student's with even odds (at least one
    per game): there the student's best move is played, and the bot's move is still the label. The
    data then holds the positions the student's own mistakes lead to, and what the bot would do
    there, which copying the bot's games alone never shows it."""
    from agents.registry import make_agent
    from yaniv.game import Game
    from yaniv.ranking import final_ranks
    from yaniv_env.aec import ranks_rewards, round_rewards
    from yaniv_env.encoding import Observer

    rng = np.random.default_rng(seed)
    counts = config.player_counts
    observers = {n: Observer(PRESETS[config.rules], n) for n in counts}
    # Filled row by row: at the default config's size the observations take gigabytes, once.
    any_observer = observers[counts[0]]
    obs_rows = np.empty((samples, any_observer.size), dtype=np.float32)
    mask_rows = np.empty((samples, any_observer.table.size), dtype=bool)
    actions: list[int] = []
    returns: list[float] = []
    while len(actions) < samples:
        n = counts[int(rng.integers(len(counts)))]
        observer = observers[n]
        game = Game(n, PRESETS[config.rules], seed=int(rng.integers(2**63)))
        teachers = [make_agent(bot) for _ in range(n)]
        for teacher in teachers:
            teacher.reset(int(rng.integers(2**63)))
        students = rng.random(n) < 0.5 if student is not None else np.zeros(n, dtype=bool)
        if student is not None and not students.any():
            students[int(rng.integers(n))] = True
        pending: list[list[int]] = [[] for _ in range(n)]  # this round's sample indices per seat
        round_turns = 0
        while not game.is_over and len(actions) < samples:
            seat = game.current
            view = game.view(seat)
            move = teachers[seat].act(view)
            obs, mask = observer.observe(view), observer.action_mask(view)
            pending[seat].append(len(actions))
            obs_rows[len(actions)] = obs
            mask_rows[len(actions)] = mask
            actions.append(observer.table.to_action(move, view))
            returns.append(0.0)
            if student is not None and students[seat]:
                move = observer.table.to_move(student.act(obs, mask), view)
            rounds = len(game.results)
            game.apply(move)
            round_turns += 1
            if len(game.results) > rounds or round_turns >= config.max_turns:
                if len(game.results) > rounds and game.results[-1].caller is not None:
                    if game.rules.one_round:  # a game of one round: its rank, as the envs pay it
                        rewards = ranks_rewards(final_ranks(game))
                    else:
                        rewards = round_rewards(game.results[-1], config.round_reward)
                    for q in range(n):
                        for k, i in enumerate(reversed(pending[q])):
                            returns[i] = rewards[q] * gamma**k
                if round_turns >= config.max_turns:
                    break  # a round going in circles: drop the rest of this game
                pending = [[] for _ in range(n)]
                round_turns = 0
    return {
        "obs": obs_rows[: len(actions)],
        "masks": mask_rows[: len(actions)],
        "actions": np.asarray(actions, dtype=np.int64),
        "returns": np.asarray(returns, dtype=np.float32),
    }


def imitate(
    model: Any,
    data: dict[str, np.ndarray],
    epochs: int,
    batch_size: int,
    vf_coef: float,
    seed: int,
    learning_rate: float | None = None,
    schedule: str = "constant",
) -> dict[str, float]:
    """Behaviour cloning: the policy learns the bot's actions (masked cross-entropy) and the value
    net its returns, with the model's own optimizer (at ``learning_rate`` if given, then back at
    its own). With ``schedule="cosine"`` the rate falls from there to zero over the passes, half a
    cosine wave. Returns the last epoch's figures."""
    import torch

    policy = model.policy
    saved_lr = [group["lr"] for group in policy.optimizer.param_groups]
    if learning_rate is not None:
        for group in policy.optimizer.param_groups:
            group["lr"] = learning_rate
    policy.set_training_mode(True)
    n = len(data["actions"])
    rng = np.random.default_rng(seed)
    tensors = {k: torch.as_tensor(v) for k, v in data.items()}
    stats: dict[str, float] = {}
    steps, step = epochs * -(-n // batch_size), 0
    base_lr = [group["lr"] for group in policy.optimizer.param_groups]
    for _ in range(epochs):
        order = torch.as_tensor(rng.permutation(n))
        totals = np.zeros(3)
        for start in range(0, n, batch_size):
            if schedule == "cosine":
                for group, lr in zip(policy.optimizer.param_groups, base_lr):
                    group["lr"] = lr * 0.5 * (1.0 + math.cos(math.pi * step / steps))
            step += 1
            idx = order[start : start + batch_size]
            values, log_prob, _ = policy.evaluate_actions(
                tensors["obs"][idx], tensors["actions"][idx], action_masks=tensors["masks"][idx]
            )
            policy_loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), tensors["returns"][idx])
            loss = policy_loss + vf_coef * value_loss
            policy.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
            policy.optimizer.step()
            with torch.no_grad():
                agree = (log_prob > np.log(0.5)).float().sum().item()
            totals += (policy_loss.item() * len(idx), value_loss.item() * len(idx), agree)
        stats = {"policy_loss": totals[0] / n, "value_loss": totals[1] / n, "agreement": totals[2] / n}
    for group, lr in zip(policy.optimizer.param_groups, saved_lr):
        group["lr"] = lr
    policy.set_training_mode(False)
    return stats


def imitate_stream(
    model: Any,
    chunks: Iterator[dict[str, np.ndarray]],
    samples: int,
    epochs: int,
    batch_size: int,
    vf_coef: float,
    seed: int,
    learning_rate: float | None = None,
    schedule: str = "constant",
) -> dict[str, float]:
    """``imitate`` on data made on the fly: ``epochs`` passes of ``samples`` fresh decisions each, drawn
    from ``chunks`` (``agents.training.teacher.teacher_stream``), each decision seen once. Minibatches
    come from one chunk at a time, shuffled within it. Returns the last pass's figures and the seconds
    spent waiting for the data (``collect_seconds``)."""
    import torch

    policy = model.policy
    saved_lr = [group["lr"] for group in policy.optimizer.param_groups]
    if learning_rate is not None:
        for group in policy.optimizer.param_groups:
            group["lr"] = learning_rate
    base_lr = [group["lr"] for group in policy.optimizer.param_groups]
    policy.set_training_mode(True)
    rng = np.random.default_rng(seed)
    total = samples * epochs
    steps, step, seen, waited = -(-total // batch_size), 0, 0, 0.0
    totals, last_pass = np.zeros(3), max(0, total - samples)
    while seen < total:
        began = time.perf_counter()
        chunk = next(chunks)
        waited += time.perf_counter() - began
        tensors = {k: torch.as_tensor(v) for k, v in chunk.items()}
        order = torch.as_tensor(rng.permutation(len(chunk["actions"])))
        for start in range(0, len(order), batch_size):
            if seen >= total:
                break
            if schedule == "cosine":
                for group, lr in zip(policy.optimizer.param_groups, base_lr):
                    group["lr"] = lr * 0.5 * (1.0 + math.cos(math.pi * min(step, steps) / steps))
            step += 1
            idx = order[start : start + min(batch_size, total - seen)]
            values, log_prob, _ = policy.evaluate_actions(
                tensors["obs"][idx], tensors["actions"][idx], action_masks=tensors["masks"][idx]
            )
            policy_loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), tensors["returns"][idx])
            loss = policy_loss + vf_coef * value_loss
            policy.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
            policy.optimizer.step()
            if seen >= last_pass:
                with torch.no_grad():
                    agree = (log_prob > np.log(0.5)).float().sum().item()
                totals += (policy_loss.item() * len(idx), value_loss.item() * len(idx), agree)
            seen += len(idx)
    for group, lr in zip(policy.optimizer.param_groups, saved_lr):
        group["lr"] = lr
    policy.set_training_mode(False)
    n = min(samples, total)
    return {"policy_loss": totals[0] / n, "value_loss": totals[1] / n, "agreement": totals[2] / n,
            "collect_seconds": waited}


def imitation_stage(config: TrainConfig, model: Any) -> dict[str, float]:
    """The whole head start of a new run: ``imitation_rounds`` rounds (the first on the bot's own
    games, the others DAgger with the model as the student), each ``imitation_epochs`` passes of
    ``imitation_samples`` decisions. A bot with a compiled form (``teacher.compiled_teacher``: random,
    greedy, the heuristic, the search) plays on the compiled core and each pass gets fresh
    decisions, made on the fly (``teacher.teacher_stream``): memory holds one chunk. Any other bot
    plays on the Python engine, and each round's decisions are kept and trained on with the earlier
    rounds' (DAgger's aggregate). Returns the last round's figures, the decisions, rounds and seconds."""
    from agents.training.teacher import compiled_teacher, teacher_stream

    try:
        compiled_teacher(config.imitation_bot)
    except ValueError:
        if config.rule_sets or config.rule_space:
            key = "rule_sets" if config.rule_sets else "rule_space"
            raise ValueError(f"{key}: the imitation bot {config.imitation_bot!r} has no compiled form, and the "
                             "Python engine's imitation plays rules only") from None
        return _python_imitation_stage(config, model)
    start = time.perf_counter()
    stats: dict[str, float] = {}
    collected = 0.0
    for round_ in range(config.imitation_rounds):
        student = NumpyPolicy.from_sb3(model) if round_ else None
        stream = teacher_stream(config, config.imitation_bot, config.gamma, seed=config.seed * 1000 + 999 + round_,
                                student=student)
        stats = imitate_stream(model, stream, config.imitation_samples, config.imitation_epochs,
                               config.imitation_batch_size, config.vf_coef, seed=config.seed + round_,
                               learning_rate=config.imitation_learning_rate, schedule=config.imitation_schedule)
        collected += stats.pop("collect_seconds")
    stats.update(samples=config.imitation_samples * config.imitation_epochs * config.imitation_rounds,
                 rounds=config.imitation_rounds, collect_seconds=collected, seconds=time.perf_counter() - start)
    return stats


def _python_imitation_stage(config: TrainConfig, model: Any) -> dict[str, float]:
    """``imitation_stage`` for a bot without a compiled form: the data of every round held in memory."""
    start = time.perf_counter()
    collected = 0.0
    data: dict[str, np.ndarray] = {}  # every round's decisions, in one block allotted at the first round
    filled = 0
    stats: dict[str, float] = {}
    for round_ in range(config.imitation_rounds):
        student = NumpyPolicy.from_sb3(model) if round_ else None
        began = time.perf_counter()
        more = collect_imitation_data(config, config.imitation_bot, config.imitation_samples, config.gamma,
                                      seed=config.seed * 1000 + 999 + round_, student=student)
        if not data:
            data = {k: np.empty((config.imitation_rounds * len(v), *v.shape[1:]), v.dtype) for k, v in more.items()}
        for k, v in more.items():
            data[k][filled : filled + len(v)] = v
        filled += len(more["actions"])
        del more
        collected += time.perf_counter() - began
        stats = imitate(model, {k: v[:filled] for k, v in data.items()}, config.imitation_epochs,
                        config.imitation_batch_size, config.vf_coef, seed=config.seed + round_,
                        learning_rate=config.imitation_learning_rate, schedule=config.imitation_schedule)
    stats.update(samples=filled, rounds=config.imitation_rounds, collect_seconds=collected,
                 seconds=time.perf_counter() - start)
    return stats


def imitation_summary(config: TrainConfig, stats: dict[str, float]) -> str:
    """One line on the imitation stage's figures, as train.py prints it."""
    return (
        f"imitation of {config.imitation_bot} ({config.imitation_rounds} round(s)): {stats['samples']} decisions "
        f"in {stats['collect_seconds']:.0f}s, "
        f"trained in {stats['seconds'] - stats['collect_seconds']:.0f}s: policy loss {stats['policy_loss']:.3f}, "
        f"bot's move above half {stats['agreement']:.1%}, value loss {stats['value_loss']:.4f}"
    )
