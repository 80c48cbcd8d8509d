"""Train a Yaniv agent with MaskablePPO (sb3-contrib) by self-play.

    python train.py --config configs/default.yaml [key=value ...]
    python train.py --resume runs/NAME [key=value ...]

The config is ``agents.training.TrainConfig``: its defaults, overridden by the YAML file,
overridden by ``key=value`` arguments (``python train.py --help`` lists every key). A run writes
to ``runs/<name>/``:

    config.yaml              the resolved config
    tb/ppo_1/                TensorBoard: SB3's PPO metrics, evaluations, steps/s, the config
    checkpoints/latest.zip   the SB3 model (periodic, at the end and on Ctrl-C; written atomically)
    checkpoints/latest.npz   the policy's weights alone (numpy, no pickle)
    checkpoints/best.zip|npz the best model by mean evaluation win rate
    pool/snapshot_*.npz      the frozen snapshots in the opponent pool
    state.json               step counts, pool, evaluations: what --resume needs

Self-play and the opponent pool are described in ``agents/training/``. Ctrl-C saves a
checkpoint and exits cleanly; ``--resume`` continues the step count, the pool and the
TensorBoard curves. SB3 checkpoints are pickles: resume only runs you trust.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import yaml

from agents.training import (
    ConfigError,
    OpponentPool,
    SelfPlayCallback,
    SelfPlayEnv,
    TrainConfig,
    atomic_write_text,
    collect_imitation_data,
    imitate,
    load_config,
    load_state,
    new_model,
    new_state,
    save_model_atomically,
    save_state,
)

# Config keys that shape the network a checkpoint holds, and what each one changes.
FIXED_ON_RESUME = {"stakes_skip": "the actor's network"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Train a Yaniv agent with MaskablePPO by self-play.",
        epilog="config keys:\n" + TrainConfig.field_docs(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", type=Path, help="YAML file of config keys (see configs/)")
    source.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config keys to override")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    # ------------------------------------------------------------------------------------------
    # Config, and everything that can be wrong, before anything is written
    # ------------------------------------------------------------------------------------------
    from sb3_contrib import MaskablePPO

    model = None
    try:
        if args.resume:
            run_dir = args.resume
            saved_path = run_dir / "config.yaml"
            if not saved_path.is_file():
                raise ConfigError(f"{run_dir} is not a run directory: no config.yaml")
            saved = yaml.safe_load(saved_path.read_text())
            saved.update(runs_dir=str(run_dir.parent), name=run_dir.name)
            config = load_config(None, args.overrides, base=saved)
            for key, what in FIXED_ON_RESUME.items():
                if getattr(config, key) != bool(saved.get(key, False)):
                    raise ConfigError(f"config key {key!r} cannot change on --resume: it changes {what}, "
                                      "which the checkpoint was trained with")
            state = load_state(run_dir)
            checkpoint = run_dir / "checkpoints" / "latest.zip"
            if not checkpoint.is_file():
                raise ValueError(f"no checkpoint to resume from at {checkpoint}")
            try:
                model = MaskablePPO.load(checkpoint, device="cpu")
            except Exception as error:  # a truncated or foreign file raises many kinds
                raise ValueError(f"cannot load the checkpoint {checkpoint}: {type(error).__name__}: {error}") from None
        else:
            config = load_config(args.config, args.overrides)
            run_dir = config.run_dir
            if (run_dir / "state.json").exists() or (run_dir / "checkpoints").exists():
                raise ConfigError(f"{run_dir} already holds a run: --resume {run_dir}, or choose another name=")
            state = new_state(config)
    except ValueError as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2

    # ------------------------------------------------------------------------------------------
    # Seeding and threads
    # ------------------------------------------------------------------------------------------
    import torch
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.policies.ppo import NumpyPolicy

    torch.set_num_threads(config.torch_threads)
    set_random_seed(config.seed + state["timesteps"])

    # ------------------------------------------------------------------------------------------
    # Opponent pool and environments
    # ------------------------------------------------------------------------------------------
    pool = OpponentPool(config)
    for name in state["pool"]:
        pool.add(int(name.split("_")[1].split(".")[0]), NumpyPolicy.load(run_dir / "pool" / name))
    envs = [SelfPlayEnv(config, pool, seed=config.seed * 1000 + i) for i in range(config.n_envs)]
    vec_env = DummyVecEnv([lambda env=env: env for env in envs])
    vec_env.seed(config.seed + state["timesteps"])

    # ------------------------------------------------------------------------------------------
    # Model
    # ------------------------------------------------------------------------------------------
    tb_dir = run_dir / "tb"
    if model is None:
        model = new_model(config, vec_env, tensorboard_log=str(tb_dir))
    else:
        model.set_env(vec_env)
        model.tensorboard_log = str(tb_dir)

    # ------------------------------------------------------------------------------------------
    # The run directory
    # ------------------------------------------------------------------------------------------
    (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / "config.yaml", yaml.safe_dump(config.to_dict(), sort_keys=False))
    save_state(run_dir, state)

    # ------------------------------------------------------------------------------------------
    # A head start: copy a bot (behaviour cloning), once, before the first PPO step
    # ------------------------------------------------------------------------------------------
    if config.imitation_samples and model.num_timesteps == 0 and "imitation" not in state:
        import time

        import numpy as np

        start = time.perf_counter()
        collected = 0.0
        data: dict = {}  # every round's decisions, in one block allotted at the first round
        filled = 0
        for round_ in range(config.imitation_rounds):  # the first copies the bot's games; then DAgger
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
        state["imitation"] = stats
        del data  # gigabytes at the default config's size, which PPO does not need
        save_model_atomically(model, run_dir / "checkpoints" / "latest.zip")  # --resume starts after it
        save_state(run_dir, state)
        print(
            f"imitation of {config.imitation_bot} ({config.imitation_rounds} round(s)): {stats['samples']} decisions "
            f"in {stats['collect_seconds']:.0f}s, "
            f"trained in {stats['seconds'] - stats['collect_seconds']:.0f}s: policy loss {stats['policy_loss']:.3f}, "
            f"bot's move above half {stats['agreement']:.1%}, value loss {stats['value_loss']:.4f}",
            flush=True,
        )

    # ------------------------------------------------------------------------------------------
    # Training
    # ------------------------------------------------------------------------------------------
    callback = SelfPlayCallback(config, pool, envs, state)
    remaining = config.total_timesteps - model.num_timesteps
    interrupted = False
    if remaining > 0:
        try:
            model.learn(
                total_timesteps=remaining,
                callback=callback,
                reset_num_timesteps=not args.resume,
                tb_log_name="ppo",
            )
        except KeyboardInterrupt:
            interrupted = True
            if callback.bar is not None:
                callback.bar.close()
    callback.model = model
    callback.save_checkpoint()
    if interrupted:
        print(f"\ninterrupted at step {model.num_timesteps}: checkpoint saved; continue with --resume {run_dir}")
        return 0

    # ------------------------------------------------------------------------------------------
    # Final evaluation (if none ran at this step) and summary
    # ------------------------------------------------------------------------------------------
    evaluations = state.get("evaluations", [])
    if not evaluations or evaluations[-1]["step"] != model.num_timesteps:
        callback.evaluate()
    last = state["evaluations"][-1]
    print(f"\ntrained {model.num_timesteps} steps; run in {run_dir}")
    for opponent, stats in last["results"].items():
        print(
            f"  vs {opponent:<10} win rate {stats['win_rate']:.1%} "
            f"[{stats['win_rate_low']:.1%}, {stats['win_rate_high']:.1%}] over {stats['games']} "
            f"{config.eval_episode}s, {stats['points_per_round']:.1f} points/round, "
            f"illegal actions {stats['illegal_actions']:.0f}"
        )
    if "last_steps_per_second" in state:
        print(
            f"  throughput {state['last_steps_per_second']:,.0f} env steps/s, "
            f"{state['last_opponent_share']:.0%} of it choosing opponent moves"
        )
    best = run_dir / "checkpoints" / "best.npz"
    if best.exists():
        shutil.copyfile(best, run_dir / "policy.npz")
        print(f"  best policy (step {state.get('best_step')}): {run_dir / 'policy.npz'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
