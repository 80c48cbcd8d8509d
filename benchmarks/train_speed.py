"""Training throughput: environment steps per second, and the share spent choosing opponent moves.

    python benchmarks/train_speed.py [--config configs/default.yaml] [--rollouts 4] [key=value ...]

Builds the config's self-play environments and MaskablePPO exactly as train.py does (no run
folder, no evaluation, no checkpoints) and prints, in wall time on this machine:

* the imitation head start's collection rate (decisions of the config's ``imitation_bot`` per
  second), when the config has one;
* rollouts: env steps per second while collecting, and the share of that time spent in the
  opponents' moves (bots and snapshots);
* updates: seconds per PPO update, and the overall rate (rollouts and updates together), which is
  what sets the run's length, and which of the two limits it;
* the process's peak memory.

The learner's tables run on the compiled core when every baseline has a compiled form
(``agents.training.selfplay``), and the imitation data is made on the fly there when the
imitation bot has one (``agents.training.teacher``).

Where the config plays snapshots (``baseline_fraction`` below 1), the pool holds one, the fresh
model's, so those seats cost what they do in a run. The first rollout is a warm-up and is not
counted. ``torch_threads``, ``rollout_threads`` and the other keys come from the config, and
``key=value`` arguments override them as in train.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.policies.ppo import NumpyPolicy, one_blas_thread  # noqa: E402
from agents.training import OpponentPool, collect_imitation_data, load_config, new_model, self_play_envs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "configs/default.yaml")
    parser.add_argument("--rollouts", type=int, default=4, help="rollouts to time after a warm-up one (default: 4)")
    parser.add_argument("--imitation", type=int, default=50_000, help="imitation decisions to time (0: skip)")
    parser.add_argument("overrides", nargs="*", metavar="key=value")
    args = parser.parse_args()
    config = load_config(args.config, args.overrides)

    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(config.torch_threads)
    one_blas_thread()  # as train.py
    print(f"config {args.config.name}: players {config.players}, {config.n_envs} envs x {config.n_steps} steps, "
          f"batch {config.batch_size} x {config.n_epochs} epochs, net {config.net_arch}, "
          f"baselines {config.baselines} ({config.baseline_fraction:.0%}), torch threads "
          f"{config.torch_threads} (rollouts {config.rollout_threads})")

    if config.imitation_samples and args.imitation:
        from agents.training.teacher import compiled_teacher, teacher_stream

        try:
            compiled_teacher(config.imitation_bot)
            stream = teacher_stream(config, config.imitation_bot, config.gamma, seed=0)
            next(stream)  # compiles (or loads the cache) and fills the games in flight
            start, count = time.perf_counter(), 0
            while count < args.imitation:
                count += len(next(stream)["actions"])
            where = "compiled core, made on the fly"
        except ValueError:
            start = time.perf_counter()
            data = collect_imitation_data(config, config.imitation_bot, args.imitation, config.gamma, seed=0)
            count = len(data["actions"])
            where = "Python engine"
        rate = count / (time.perf_counter() - start)
        total = config.imitation_samples * config.imitation_epochs * config.imitation_rounds
        print(f"imitation collection ({where}): {rate:,.0f} decisions/s of {config.imitation_bot} "
              f"({total:,} decisions: {total / rate / 60:.1f} min)")

    pool = OpponentPool(config)
    envs, vec_env = self_play_envs(config, pool)
    vec_env.seed(config.seed)
    model = new_model(config, vec_env)
    if config.baseline_fraction < 1:  # the seats a run gives snapshots once it has one (here: the fresh model)
        pool.add(0, NumpyPolicy.from_sb3(model, meta={"rules": config.rules, "step": 0}))

    class Clock(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.rollouts: list[tuple[float, int, float]] = []  # (seconds, steps, opponent seconds)
            self.updates: list[float] = []
            self._mark = time.perf_counter()

        def _on_rollout_start(self) -> None:
            now = time.perf_counter()
            if self.rollouts:
                self.updates.append(now - self._mark)
            torch.set_num_threads(config.rollout_threads)  # as train.py's callback does during rollouts
            self._mark = now
            self._steps = self.num_timesteps
            self._opponent = sum(env.clock[0] for env in envs)

        def _on_rollout_end(self) -> None:
            now = time.perf_counter()
            opponent = sum(env.clock[0] for env in envs) - self._opponent
            self.rollouts.append((now - self._mark, self.num_timesteps - self._steps, opponent))
            torch.set_num_threads(config.torch_threads)
            self._mark = now

        def _on_step(self) -> bool:
            return True

    clock = Clock()
    per_rollout = config.n_envs * config.n_steps
    model.learn(total_timesteps=per_rollout * (args.rollouts + 1), callback=clock)
    rollouts, updates = clock.rollouts[1:], clock.updates[1:] or clock.updates
    seconds = sum(r[0] for r in rollouts)
    steps = sum(r[1] for r in rollouts)
    opponent = sum(r[2] for r in rollouts)
    update = sum(updates) / len(updates)
    print(f"rollouts: {steps / seconds:,.0f} env steps/s, {opponent / seconds:.0%} of it choosing opponent moves")
    print(f"updates: {update:.2f} s per update of {per_rollout:,} steps")
    collect = seconds / len(rollouts)
    overall = per_rollout / (collect + update)
    limit = "the PPO updates" if update > collect else "collecting the rollouts"
    print(f"overall: {overall:,.0f} env steps/s (rollouts and updates); {limit} take "
          f"{max(update, collect) / (update + collect):.0%} of the time")
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak memory of this process: {peak:.2f} GB")


if __name__ == "__main__":
    main()
