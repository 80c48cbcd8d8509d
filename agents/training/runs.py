"""A run's folder: opening a new run or resuming one, its files, and the final summary.

    run = new_run(Path("configs/quick.yaml"), ["seed=1"])    # or resume_run(Path("runs/quick"), [...])
    model = run.model_for(vec_env)                           # new, or the resumed checkpoint's
    run.write_files()                                        # config.yaml, state.json
    ...
    run.finish(model.num_timesteps)                          # policy.npz and the summary

A run lives in ``<runs_dir>/<name>/``:

    config.yaml              the resolved config
    tb/ppo_1/                TensorBoard: SB3's PPO metrics, evaluations, steps/s, the config
    checkpoints/latest.zip   the SB3 model (periodic, after the imitation, at the end and on Ctrl-C)
    checkpoints/latest.npz   the policy's weights alone (numpy, no pickle)
    checkpoints/best.zip|npz the best model by mean evaluation win rate
    pool/snapshot_*.npz      the frozen snapshots in the opponent pool
    state.json               step counts, the schedule, the pool, evaluations: what --resume needs
    policy.npz               the best policy, copied there at the end

Contract: ``new_run`` and ``resume_run`` check everything (the config, that a new run's folder
holds no run, that a resumed one has its config, state and a loadable checkpoint, and that no
override changes a key the resumed model would ignore) and raise ValueError (``ConfigError`` for
the config) before anything is written. Every file is written to a temporary name and renamed,
so a crash never leaves a broken one.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from agents.training.config import ConfigError, TrainConfig, load_config, refuse_changes_on_resume
from agents.training.model import load_model, new_model

STATE_KEYS = ("timesteps", "next_snapshot", "next_eval", "next_checkpoint", "pool")
"""What state.json must hold for a run to resume."""


def atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def save_model_atomically(model: Any, path: Path) -> None:
    """SB3 save to a temporary file, then an atomic rename: a crash never leaves a broken file."""
    tmp = path.with_name(path.stem + ".tmp.zip")
    model.save(tmp)
    os.replace(tmp, path)


def save_state(run_dir: Path, state: dict[str, Any]) -> None:
    atomic_write_text(run_dir / "state.json", json.dumps(state, indent=2))


def new_state(config: TrainConfig) -> dict[str, Any]:
    """The state of a run before its first step: when the first snapshot, evaluation and checkpoint fall due."""
    return {
        "timesteps": 0,
        "next_snapshot": config.snapshot_every,
        "next_eval": config.eval_every or config.total_timesteps + 1,
        "next_checkpoint": config.checkpoint_every,
        "pool": [],
        "evaluations": [],
    }


def load_state(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "state.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read the run state {path}: {error}") from None
    for key in STATE_KEYS:
        if key not in state:
            raise ValueError(f"the run state {path} lacks {key!r}")
    return state


@dataclass
class Run:
    """A run folder opened for training: its config, its state and, when resumed, the checkpoint's model."""

    config: TrainConfig
    dir: Path
    state: dict[str, Any]
    resumed_model: Any | None = None

    @property
    def resumed(self) -> bool:
        return self.resumed_model is not None

    def model_for(self, vec_env: Any) -> Any:
        """The model to train on ``vec_env``, logging to the run's tb/: the resumed one, or a new one."""
        tensorboard_log = str(self.dir / "tb")
        if self.resumed_model is None:
            return new_model(self.config, vec_env, tensorboard_log=tensorboard_log)
        self.resumed_model.set_env(vec_env)
        self.resumed_model.tensorboard_log = tensorboard_log
        return self.resumed_model

    def write_files(self) -> None:
        """The checkpoints/ folder, config.yaml (with this session's overrides) and state.json."""
        (self.dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.dir / "config.yaml", yaml.safe_dump(self.config.to_dict(), sort_keys=False))
        save_state(self.dir, self.state)

    def save(self, model: Any) -> None:
        """checkpoints/latest.zip, then state.json: a resumed run starts from here."""
        save_model_atomically(model, self.dir / "checkpoints" / "latest.zip")
        save_state(self.dir, self.state)

    def finish(self, steps: int) -> None:
        """Copies the best policy to policy.npz and prints the last evaluation and the throughput."""
        last = self.state["evaluations"][-1]
        print(f"\ntrained {steps} steps; run in {self.dir}")
        for opponent, stats in last["results"].items():
            print(
                f"  vs {opponent:<10} win rate {stats['win_rate']:.1%} "
                f"[{stats['win_rate_low']:.1%}, {stats['win_rate_high']:.1%}] over {stats['games']} "
                f"{self.config.eval_episode}s, {stats['points_per_round']:.1f} points/round"
            )
        if "last_steps_per_second" in self.state:
            print(
                f"  throughput {self.state['last_steps_per_second']:,.0f} env steps/s, "
                f"{self.state['last_opponent_share']:.0%} of it choosing opponent moves"
            )
        best = self.dir / "checkpoints" / "best.npz"
        if best.exists():
            shutil.copyfile(best, self.dir / "policy.npz")
            print(f"  best policy (step {self.state.get('best_step')}): {self.dir / 'policy.npz'}")


def new_run(yaml_path: Path | None, overrides: Sequence[str]) -> Run:
    """A new run of the config in ``yaml_path`` (defaults if None) with ``key=value`` overrides;
    ConfigError if its folder already holds a run."""
    config = load_config(yaml_path, overrides)
    run_dir = config.run_dir
    if (run_dir / "state.json").exists() or (run_dir / "checkpoints").exists():
        raise ConfigError(f"{run_dir} already holds a run: --resume {run_dir}, or choose another name=")
    return Run(config, run_dir, new_state(config))


def resume_run(run_dir: Path, overrides: Sequence[str]) -> Run:
    """The run in ``run_dir`` with its saved config, ``key=value`` overrides on top (ConfigError
    naming any key of ``FIXED_ON_RESUME`` they would change), its state and its latest checkpoint."""
    saved_path = run_dir / "config.yaml"
    if not saved_path.is_file():
        raise ConfigError(f"{run_dir} is not a run directory: no config.yaml")
    saved = yaml.safe_load(saved_path.read_text())
    saved.update(runs_dir=str(run_dir.parent), name=run_dir.name)  # the folder may have moved
    config = load_config(None, overrides, base=saved)
    refuse_changes_on_resume(load_config(None, base=saved), config)
    state = load_state(run_dir)
    return Run(config, run_dir, state, load_model(run_dir / "checkpoints" / "latest.zip"))
