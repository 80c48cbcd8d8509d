"""RLlib's training throughput beside SB3's, for the same network and tables, and from 1 to N runners.

    python benchmarks/rllib_speed.py [--config configs/rllib.yaml] [--iterations 3] [--runners 1 2]
                                     [--envs vector aec] [key=value ...]

Needs the extra (pip install -e ".[rllib]"). In one run, on this machine, in wall time:

* SB3: MaskablePPO built as train.py builds it (``backend: sb3``) on ``envs_per_runner`` tables of
  the config's players, baselines and network, ``n_steps`` steps per table per rollout; a warm-up
  rollout and update, then ``--iterations`` of them timed;
* RLlib: the algorithm train.py builds (``agents.training.rllib.trainer.algorithm_config``) for
  each ``rllib_env`` of ``--envs`` (``vector``: the tables on the compiled core; ``aec``: the AEC
  table) with each count of ``--runners`` env runners of ``envs_per_runner`` tables (a local Ray
  instance of ``max(--runners)`` CPUs); a warm-up iteration, then ``--iterations`` timed.

Each line gives env steps per second overall (sampling and update) and while sampling alone, and
learner decisions per second. The units differ where the tables hold more than the learner: an
SB3 env step, and one of ``rllib_env: vector``, is one learner decision (the opponents move inside
the env, on the compiled core); an ``aec`` env step is one decision of any seat a module plays
(the learner, or a snapshot), the baseline seats moving inside the env (on the Python agents).
Learner decisions per second are the common unit: what a run's total_timesteps counts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.training import OpponentPool, load_config, new_model, self_play_envs  # noqa: E402
from agents.training.config import RLLIB_KEYS, TrainConfig  # noqa: E402


def sb3_rates(config: TrainConfig, iterations: int) -> tuple[float, float]:
    """(env steps/s overall, env steps/s while collecting) of MaskablePPO on the config's tables."""
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(config.torch_threads)
    _, vec_env = self_play_envs(config, OpponentPool(config))
    vec_env.seed(config.seed)
    model = new_model(config, vec_env)
    rollout = config.n_envs * config.n_steps

    class Clock(BaseCallback):
        collecting = 0.0
        _start = 0.0

        def _on_rollout_start(self) -> None:
            self._start = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.collecting += time.perf_counter() - self._start

        def _on_step(self) -> bool:
            return True

    model.learn(rollout)  # warm-up: the kernels, the first update
    clock = Clock()
    start = time.perf_counter()
    model.learn(rollout * iterations, callback=clock, reset_num_timesteps=False)
    elapsed = time.perf_counter() - start
    return rollout * iterations / elapsed, rollout * iterations / clock.collecting


def rllib_rates(config: TrainConfig, iterations: int) -> tuple[float, float, float]:
    """(env steps/s overall, env steps/s while sampling, learner decisions/s) of the RLlib algorithm."""
    from agents.training.rllib.trainer import algorithm_config, learner_module

    module = learner_module(config)
    algo = algorithm_config(config, seed=config.seed).build_algo()
    try:
        algo.train()  # warm-up
        env_steps = learner_steps = sampling = 0.0
        start = time.perf_counter()
        for _ in range(iterations):
            result = algo.train()
            env_steps += result["env_runners"]["num_env_steps_sampled"]
            learner_steps += result["env_runners"]["num_module_steps_sampled"][module]
            sampling += result["timers"]["env_runner_sampling_timer"]
        elapsed = time.perf_counter() - start
    finally:
        algo.stop()
    return env_steps / elapsed, env_steps / sampling, learner_steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "configs/rllib.yaml")
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations after a warm-up (default: 3)")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="env runner counts (default: 1 2)")
    parser.add_argument("--envs", nargs="+", default=["vector", "aec"], choices=["vector", "aec"],
                        help="what the runners play, rllib_env (default: vector aec)")
    parser.add_argument("overrides", nargs="*", metavar="key=value")
    args = parser.parse_args()
    config = load_config(args.config, ["backend=rllib", *args.overrides])
    settings = config.to_dict() | {"backend": "sb3", "n_envs": config.envs_per_runner}
    settings |= {key: TrainConfig.__dataclass_fields__[key].default for key in RLLIB_KEYS}
    sb3 = TrainConfig(**settings)  # the same tables, network and PPO keys, on SB3
    print(f"config {args.config.name}: players {config.players}, {config.envs_per_runner} tables x {config.n_steps} "
          f"steps, batch {config.batch_size} x {config.n_epochs} epochs, net {config.net_arch} {config.activation}, "
          f"baselines {config.baselines} ({config.baseline_fraction:.0%}), torch threads {config.torch_threads}")

    overall, collecting = sb3_rates(sb3, args.iterations)
    print(f"SB3   1 process,  {sb3.n_envs} tables:  {overall:8,.0f} env steps/s overall, {collecting:8,.0f} collecting "
          f"(= learner decisions)", flush=True)

    import ray

    ray.init(num_cpus=max(args.runners), include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        for env in args.envs:
            for runners in args.runners:
                scaled = load_config(args.config, ["backend=rllib", f"rllib_env={env}", f"env_runners={runners}",
                                                   *args.overrides])
                overall, sampling, learner = rllib_rates(scaled, args.iterations)
                tables = f"{runners} x {scaled.envs_per_runner} tables"
                print(f"RLlib {env:6} {runners} runner(s), {tables}: {overall:8,.0f} env steps/s "
                      f"overall, {sampling:8,.0f} sampling, {learner:8,.0f} learner decisions/s", flush=True)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
