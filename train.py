"""Train a Yaniv agent with MaskablePPO (sb3-contrib) against an opponent pool, or on Ray RLlib.

    python train.py --config configs/default.yaml [key=value ...]     # python train.py --help: every key
    python train.py --resume runs/NAME [key=value ...]
    python train.py --config configs/rllib.yaml [ray_address=auto]    # backend: rllib (docs/distributed.md)

The run writes to ``runs/<name>/`` (``agents.training.runs`` lists the files and their write
order). Ctrl-C saves a checkpoint; ``--resume`` continues the steps, the pool and the curves, and
refuses by name an override the saved model would ignore. A run killed at any instant resumes;
one killed before its first checkpoint restarts afresh from its config.yaml under ``--resume``.
Every bad input (a config key, a corrupted run folder, an unwritable ``runs_dir``) is one line
``train.py: error: ...`` and exit status 2, with nothing written.

Trust: ``--resume`` loads the run's own checkpoints/latest.zip, an SB3 checkpoint, which is a
pickle and can run code; naming the folder is the request to load it. Resume only run folders you
trust.

``backend: rllib`` (in the config, or ``backend=rllib``) trains on Ray RLlib instead
(``agents.training.rllib``): the same keys, run folder, curves, checkpoints, Ctrl-C and
``--resume`` (its checkpoint, ``checkpoints/rllib_<step>/``, is pickles too), with the Ray
cluster joined before anything is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.policies.ppo import one_blas_thread
from agents.training import (
    SelfPlayCallback, TrainConfig, expert_stage, expert_summary, imitation_stage, imitation_summary, new_run,
    resume_run, self_play_envs,
)
from agents.training.callbacks import TB_LOG_NAME
from agents.training.expert import stage_tables
from agents.training.config import requested_backend


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Train a Yaniv agent with MaskablePPO against an opponent pool (backend: sb3), or on Ray "
                    "RLlib (backend: rllib; keys marked rllib: are its own, docs/distributed.md).",
        epilog="config keys:\n" + TrainConfig.field_docs(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", type=Path, help="YAML file of config keys (see configs/)")
    source.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="continue the run in RUN_DIR (afresh if it stopped before its first checkpoint); "
                             "this loads RUN_DIR/checkpoints/latest.zip (rllib: checkpoints/rllib_<step>/), "
                             "pickles that can run code: resume only run folders you trust")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config keys to override")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if requested_backend(args.config, args.resume, args.overrides) == "rllib":
        return train_rllib(args)

    # -- Open the run: every check before anything is written, then claim the folder ------------
    try:
        run = resume_run(args.resume, args.overrides) if args.resume else new_run(args.config, args.overrides)
        if run.config.expert_samples:
            stage_tables(run.config, towers=False)  # refuses, before PPO, a baseline the stage could not seat
        run.write_files()
    except ValueError as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    config, state, pool = run.config, run.state, run.pool

    # -- Seeding and threads ---------------------------------------------------------------------
    import torch
    from stable_baselines3.common.utils import set_random_seed

    torch.set_num_threads(config.torch_threads)
    one_blas_thread()  # the snapshots' numpy forward passes, beside torch's threads
    set_random_seed(config.seed + state["timesteps"])

    # -- Environments (opponents from the run's pool) and the model ------------------------------
    envs, vec_env = self_play_envs(config, pool, state["timesteps"])
    vec_env.seed(config.seed + state["timesteps"])
    model = run.model_for(vec_env)

    # -- A head start: copy a bot, once, before the first PPO step -------------------------------
    if config.imitation_samples and model.num_timesteps == 0 and "imitation" not in state:
        state["imitation"] = imitation_stage(config, model)
        run.save_imitation(model)  # imitation.npz, the learning stage's start; --resume starts after it
        print(imitation_summary(config, state["imitation"]), flush=True)

    # -- PPO -------------------------------------------------------------------------------------
    callback = SelfPlayCallback(config, pool, envs, state)
    interrupted = False
    if model.num_timesteps < config.total_timesteps:
        try:
            model.learn(total_timesteps=config.total_timesteps - model.num_timesteps, callback=callback,
                        reset_num_timesteps=not run.resumed, tb_log_name=TB_LOG_NAME)
        except KeyboardInterrupt:
            interrupted = True
            if callback.bar is not None:
                callback.bar.close()
    callback.save_final_checkpoint(model)
    if interrupted:
        print(f"\ninterrupted at step {model.num_timesteps}: checkpoint saved; continue with --resume {run.dir}")
        return 0

    # -- Expert iteration: the network learns its planner's moves, once, after the last PPO step --
    end = model.num_timesteps
    if config.expert_samples:
        if "expert" not in state:
            callback.final_evaluation()  # the stage's start, measured as its end will be
            run.save_stage_start(model, "ppo.npz", model.num_timesteps)
            try:
                stats = expert_stage(config, model)
            except KeyboardInterrupt:
                print(f"\ninterrupted in the expert stage: the last PPO step's checkpoint stands; continue with "
                      f"--resume {run.dir}")
                return 0
            run.save_expert(model, stats)
            callback.save_final_checkpoint(model)
            print(expert_summary(config, stats), flush=True)
        end += config.expert_samples  # the curves' step after the stage: steps and labels

    # -- The final evaluation (if none ran at this step) and the summary -------------------------
    callback.final_evaluation(end)
    run.finish(model.num_timesteps)
    return 0


def train_rllib(args: argparse.Namespace) -> int:
    """``backend: rllib``: the same steps on Ray RLlib (``agents.training.rllib``)."""
    from agents.training import rllib

    # -- Open the run and join Ray: every check before anything is written, then claim the folder
    try:
        rllib.require_ray()
        from agents.training.rllib import trainer as rt

        run, checkpoint = rt.open_run(args.config, args.resume, args.overrides)
        cluster = rt.connect(run.config)
    except ValueError as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    try:
        run.write_files()
    except ValueError as error:
        rt.disconnect()
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    config = run.config
    learners = f"{config.learners} learner process(es)" if config.learners else "the learner in this process"
    tables = "on the compiled core" if config.rllib_env == "vector" else "AEC"
    print(f"rllib: {cluster}; {config.env_runners} env runner(s) x {config.envs_per_runner} tables ({tables}), "
          f"{learners}", flush=True)

    # -- The algorithm (env runners, learners, modules; the checkpoint's, if resumed), then PPO ---
    trainer = None
    try:
        try:
            with rt.StopOnInterrupt() as stop:  # Ctrl-C: the iteration under way finishes, then the save
                trainer = rt.RLlibTrainer(run, checkpoint)
                print(trainer.placement(), flush=True)
                while trainer.steps < config.total_timesteps and not stop.requested:
                    trainer.iteration()
            interrupted = stop.requested
        except KeyboardInterrupt:  # a second Ctrl-C
            interrupted = True
        if trainer is None:  # stopped while the algorithm was built: nothing trained, nothing to save
            print(f"\ninterrupted before the first iteration; continue with --resume {run.dir}")
            return 0
        trainer.save_checkpoint()
        if interrupted:
            print(f"\ninterrupted at step {trainer.steps}: checkpoint saved; continue with --resume {run.dir}")
            return 0

        # -- The final evaluation (if none ran at this step) and the summary ---------------------
        trainer.final_evaluation()
        run.finish(trainer.steps)
        if trainer.last_rate:
            print(f"  throughput {trainer.last_rate:,.0f} env steps/s (sampling and update, the last iteration)")
        return 0
    finally:
        if trainer is not None:
            trainer.close()
        rt.disconnect()


if __name__ == "__main__":
    sys.exit(main())
