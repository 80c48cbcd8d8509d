"""A run's folder: opening a new run or resuming one, its files, their write order, and the summary.

    run = new_run(Path("configs/quick.yaml"), ["seed=1"])    # or resume_run(Path("runs/quick"), [...])
    run.write_files()                                        # claims the folder: config.yaml, state.json
    model = run.model_for(vec_env)                           # new, or the resumed checkpoint's
    ...                                                      # run.pool: the opponent pool, loaded
    run.finish(model.num_timesteps)                          # policy.npz and the summary

A run lives in ``<runs_dir>/<name>/``:

    config.yaml              the resolved config (written first: it claims the folder)
    state.json               step counts, the schedule, the pool, evaluations: what --resume needs
    tb/ppo_1/                TensorBoard: SB3's PPO metrics, evaluations, steps/s, the config
    checkpoints/latest.zip   the SB3 model (periodic, after the imitation, at the end and on Ctrl-C)
    checkpoints/latest.npz   the policy's weights alone (numpy, no pickle)
    checkpoints/best.zip|npz the best model by mean evaluation win rate
    pool/snapshot_*.npz      the frozen snapshots in the opponent pool
    policy.npz               the run's policy, copied there at the end: the best by evaluation, or
                             the last checkpoint's (``final_policy``)
    imitation.npz            the policy after the imitation stage, before the first PPO step: where
                             the learning stage started, to measure its end point against
    ppo.npz                  with expert_samples: the policy at the last PPO step, before the expert
                             stage (``agents.training.expert``): that stage's start
    checkpoints/expert.zip   the SB3 model after the expert stage (then copied to latest.zip)

Trust: ``--resume`` loads the run's own checkpoints/latest.zip (or expert.zip), an SB3 checkpoint, which is a
pickle and can run code. Naming a folder to ``--resume`` is the explicit request to load it, so no
further switch is asked; resume only folders you (or someone you trust) wrote. Everything else
the run reads back (state.json, config.yaml, the pool's .npz) loads no code.

Contract: ``new_run`` and ``resume_run`` check everything (the config, that a new run's folder
holds no run and can be written, that a resumed one has its config, a valid state, its pool's
snapshots and a loadable checkpoint, and that no override changes a key the resumed model would
ignore) and raise ValueError (``ConfigError`` for the config) before anything is written; a refused
command leaves the folder byte for byte as it was. state.json is checked against ``STATE_FIELDS``
(each key's type and range; unknown keys refused) and read only up to ``MAX_STATE_BYTES``.

Kills: every file is written to a temporary name and renamed, and the order of the writes makes
the folder resumable after a kill at any instant:

* state.json is written after every file it names (a snapshot, a checkpoint); a pool snapshot
  is deleted only once the state.json on disk no longer names it (``save_state`` prunes);
* ``Run.write_files`` (the start of every session) removes the temporary files a kill left;
* the expert stage writes checkpoints/expert.zip, then state.json saying the stage ran, then
  latest.zip: a resumed run whose state says so loads expert.zip, any other latest.zip (the last
  PPO step's model, from which the stage runs again and draws the same labels);
* a run killed before its first checkpoint (config.yaml written, no checkpoints/latest.zip, and
  state.json at step 0 or absent) holds nothing a resume could continue: ``--resume`` starts it
  afresh from its config.yaml (a new model, a new state, ``key=value`` overrides on top), and
  ``--config`` on its folder says so. A folder without config.yaml holds no run: ``--config``
  starts there as in an empty folder.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

from agents.training.config import (
    LIMITS, ConfigError, TrainConfig, load_config, read_yaml_mapping, refuse_changes_on_resume,
)
from agents.training.model import load_model, new_model, reschedule
from agents.training.selfplay import OpponentPool

MAX_STATE_BYTES = 64 << 20
"""The largest state.json read (a run of a million evaluations would stay under it)."""
MAX_STATE_STEP = 2**32 - 1
"""The largest step count state.json may hold (``TrainConfig``'s steps stay below 2**31)."""
EVAL_STATS = ("win_rate", "win_rate_low", "win_rate_high", "points_per_round", "games")
"""The numbers each evaluation result must hold (the summary prints them)."""


def _temporary(path: Path) -> Path:
    """The name ``path`` is written under before its rename: same folder, ``.tmp`` before the suffix."""
    return path.with_name(f"{path.stem}.tmp{path.suffix}")


def atomic_write_text(path: Path, text: str) -> None:
    tmp = _temporary(path)
    tmp.write_text(text)
    os.replace(tmp, path)


def save_model_atomically(model: Any, path: Path) -> None:
    """SB3 save to a temporary file, then an atomic rename: a crash never leaves a broken file."""
    tmp = _temporary(path)
    model.save(tmp)
    os.replace(tmp, path)


def copy_atomically(source: Path, target: Path) -> None:
    tmp = _temporary(target)
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def save_state(run_dir: Path, state: dict[str, Any]) -> None:
    """state.json, then the deletion of the pool snapshots it no longer names (never before: a kill
    in between would leave a state.json naming a deleted file)."""
    atomic_write_text(run_dir / "state.json", json.dumps(state, indent=2))
    pool_dir, kept = run_dir / "pool", set(state["pool"])
    if pool_dir.is_dir():
        for path in sorted(pool_dir.iterdir()):
            if OpponentPool.step_of(path.name) is not None and path.name not in kept:
                path.unlink()


def remove_leftovers(run_dir: Path) -> None:
    """Deletes the temporary files a killed session left in the run folder (any name with ``.tmp``
    before its suffix or at its end: ours, and ``NumpyPolicy.save``'s)."""
    for folder in (run_dir, run_dir / "checkpoints", run_dir / "pool"):
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if path.is_file() and (path.name.endswith(".tmp") or ".tmp." in path.name):
                    path.unlink()


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


# -- state.json's schema -------------------------------------------------------------------------


def _step(key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_STATE_STEP:
        raise ValueError(f"{key!r} must be an integer from 0 to {MAX_STATE_STEP:,}, got {value!r:.100}")


def _number(low: float, high: float) -> Callable[[str, Any], None]:
    def check(key: str, value: Any) -> None:
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                or not low <= value <= high):
            raise ValueError(f"{key!r} must be a number from {low} to {high}, got {value!r:.100}")

    return check


def _object(key: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"{key!r} must be an object, got {value!r:.100}")


def _pool(key: str, value: Any) -> None:
    if not isinstance(value, list):
        raise ValueError(f"{key!r} must be a list of snapshot file names, got {value!r:.100}")
    most = LIMITS["pool_size"][1]
    if len(value) > most:
        raise ValueError(f"{key!r} holds {len(value)} entries, more than a pool can ({most})")
    steps = []
    for name in value:
        step = OpponentPool.step_of(name)
        if step is None:
            raise ValueError(f"{key!r} entry {name!r:.100} is not a snapshot file name such as "
                             f"{OpponentPool.file_name(0)!r}")
        steps.append(step)
    if any(a >= b for a, b in zip(steps, steps[1:])):
        raise ValueError(f"{key!r} must name each snapshot once, oldest first, got {value!r:.200}")


def _evaluations(key: str, value: Any) -> None:
    if not isinstance(value, list):
        raise ValueError(f"{key!r} must be a list of evaluations, got {value!r:.100}")
    for i, entry in enumerate(value):
        if not (isinstance(entry, dict) and set(entry) == {"step", "results"} and isinstance(entry["results"], dict)):
            raise ValueError(f"{key!r} entry {i} must hold 'step' (an integer) and 'results' (an object), "
                             f"got {entry!r:.100}")
        _step(f"{key}[{i}].step", entry["step"])
        for opponent, stats in entry["results"].items():
            if not (isinstance(stats, dict) and all(
                    isinstance(stats.get(s), (int, float)) and not isinstance(stats.get(s), bool)
                    and math.isfinite(stats[s]) for s in EVAL_STATS)):
                raise ValueError(f"{key!r} entry {i} holds results against {opponent!r:.100} that are not an "
                                 f"object with the numbers {', '.join(EVAL_STATS)}")


STATE_FIELDS: dict[str, tuple[bool, Callable[[str, Any], None], str]] = {
    "timesteps": (True, _step, "learner steps of the last checkpoint (checkpoints/latest.zip)"),
    "next_snapshot": (True, _step, "the step at which the next pool snapshot is due"),
    "next_eval": (True, _step, "the step at which the next evaluation is due"),
    "next_checkpoint": (True, _step, "the step at which the next checkpoint is due"),
    "pool": (True, _pool, "the pool's snapshots in pool/, oldest first"),
    "evaluations": (False, _evaluations, "each evaluation's step and results per opponent"),
    "best_score": (False, _number(0.0, 1.0), "the best mean win rate so far"),
    "best_step": (False, _step, "the step of checkpoints/best.zip"),
    "last_steps_per_second": (False, _number(0.0, 1e12), "the last rollout's env steps per second"),
    "last_opponent_share": (False, _number(0.0, 1e6), "the last rollout's share of time in opponent moves"),
    "imitation": (False, _object, "the imitation stage's statistics (present: it ran)"),
    "expert": (False, _object, "the expert stage's statistics (present: it ran, and checkpoints/expert.zip holds "
                               "its model)"),
    "towers_split_at": (False, _step, "the step at which the network split into towers (towers_from)"),
}
"""state.json's keys: (required, check of type and range, meaning)."""


def check_state(state: Any) -> dict[str, Any]:
    """``state`` if it fits ``STATE_FIELDS``; ValueError naming the first key that does not."""
    if not isinstance(state, dict):
        raise ValueError(f"must hold a JSON object, not {type(state).__name__}")
    for key in state:
        if key not in STATE_FIELDS:
            raise ValueError(f"holds an unknown key {key!r:.100}")
    for key, (required, check, _) in STATE_FIELDS.items():
        if key in state:
            check(key, state[key])
        elif required:
            raise ValueError(f"lacks {key!r}")
    return state


def load_state(run_dir: Path) -> dict[str, Any]:
    """The run's state.json, checked by ``check_state``; ValueError naming the file and the fault."""
    path = run_dir / "state.json"
    try:
        if path.stat().st_size > MAX_STATE_BYTES:
            raise ValueError(f"the run state {path} is larger than {MAX_STATE_BYTES} bytes")
        state = json.loads(path.read_bytes())
    except OSError as error:
        raise ValueError(f"cannot read the run state {path}: {error}") from None
    except RecursionError:
        raise ValueError(f"the run state {path} is nested too deeply to be a run state") from None
    except ValueError as error:  # bad JSON or UTF-8, an integer of more than 4,300 digits, or too large
        if str(error).startswith("the run state"):
            raise
        raise ValueError(f"the run state {path} is not valid JSON: {error}") from None
    try:
        return check_state(state)
    except ValueError as error:
        raise ValueError(f"the run state {path} {error}") from None


def load_pool(config: TrainConfig, run_dir: Path, names: Sequence[str]) -> OpponentPool:
    """The opponent pool with the snapshots ``names`` (state.json's 'pool') from the run's pool/."""
    pool = OpponentPool(config)
    for name in names:
        path = run_dir / "pool" / name
        if not path.is_file():
            raise ValueError(f"no snapshot {path}, which the run state's 'pool' names")
        try:
            pool.load(path.parent, [name])
        except ValueError:
            raise
        except Exception as error:  # a forged .npz (no code runs) can break its meta in many ways
            raise ValueError(f"cannot read policy weights from {path}: {type(error).__name__}: {error}") from None
    return pool


def _check_writable(run_dir: Path) -> None:
    """ConfigError naming ``runs_dir`` unless the run folder exists or can be made: its nearest
    existing folder must be a folder we may write in, on a file system with free space."""
    folder = run_dir
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    problem = ""
    if not folder.is_dir():
        problem = f"{folder} is not a folder"
    elif not os.access(folder, os.W_OK | os.X_OK):
        problem = f"{folder} is not writable"
    else:
        try:
            if os.statvfs(folder).f_bavail == 0:
                problem = f"the file system of {folder} has no free space"
        except OSError as error:
            problem = f"cannot inspect {folder}: {error}"
    if problem:
        raise ConfigError(f"config key 'runs_dir': cannot write the run folder {run_dir}: {problem}")


# -- Runs ----------------------------------------------------------------------------------------


@dataclass
class Run:
    """A run folder opened for training: its config, its state, its opponent pool and, when
    resumed, the checkpoint's model."""

    config: TrainConfig
    dir: Path
    state: dict[str, Any]
    pool: OpponentPool | None = None  # None: an empty pool of the config
    resumed_model: Any | None = None

    def __post_init__(self) -> None:
        if self.pool is None:
            self.pool = OpponentPool(self.config)

    @property
    def resumed(self) -> bool:
        return self.resumed_model is not None

    def model_for(self, vec_env: Any) -> Any:
        """The model to train on ``vec_env``, logging to the run's tb/: the resumed one, or a new one."""
        tensorboard_log = str(self.dir / "tb")
        if self.resumed_model is None:
            return new_model(self.config, vec_env, tensorboard_log=tensorboard_log)
        self.resumed_model.set_env(vec_env)
        reschedule(self.resumed_model, self.config)
        self.resumed_model.tensorboard_log = tensorboard_log
        return self.resumed_model

    def write_files(self) -> None:
        """Claims the folder: config.yaml (with this session's overrides), state.json, checkpoints/,
        and the removal of a killed session's temporary files. ConfigError naming ``runs_dir`` if
        the folder cannot be written."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.dir / "config.yaml", yaml.safe_dump(self.config.to_dict(), sort_keys=False))
            save_state(self.dir, self.state)
            (self.dir / "checkpoints").mkdir(exist_ok=True)
            remove_leftovers(self.dir)
        except OSError as error:
            raise ConfigError(f"config key 'runs_dir': cannot write the run folder {self.dir}: {error}") from None

    def save_imitation(self, model: Any) -> None:
        """imitation.npz: the policy the imitation stage made, before any PPO step (then ``save``)."""
        self.save_stage_start(model, "imitation.npz", 0)
        self.save(model)

    def save_stage_start(self, model: Any, name: str, step: int) -> None:
        """``name`` (imitation.npz, ppo.npz): the policy where a stage starts, for the record."""
        from agents.policies.ppo import NumpyPolicy

        NumpyPolicy.from_sb3(model, meta={"rules": self.config.rules, "step": step}).save(self.dir / name)

    def save_expert(self, model: Any, stats: dict[str, Any]) -> None:
        """checkpoints/expert.zip (the model after the expert stage), then state.json with ``stats`` as
        its ``expert``: from here a resumed run loads expert.zip (the module docstring's write order)."""
        save_model_atomically(model, self.dir / "checkpoints" / "expert.zip")
        self.state["expert"] = stats
        save_state(self.dir, self.state)

    def save(self, model: Any) -> None:
        """checkpoints/latest.zip, then state.json: a resumed run starts from here."""
        save_model_atomically(model, self.dir / "checkpoints" / "latest.zip")
        save_state(self.dir, self.state)

    def finish(self, steps: int) -> None:
        """Copies the run's policy to policy.npz (``final_policy``: the best by evaluation, or the
        last checkpoint's) and prints the last evaluation and the throughput."""
        last = self.state["evaluations"][-1]
        labels = f" and {self.config.expert_samples:,} expert labels" if "expert" in self.state else ""
        print(f"\ntrained {steps} steps{labels}; run in {self.dir}")
        for opponent, stats in last["results"].items():
            print(
                f"  vs {opponent:<10} win rate {stats['win_rate']:.1%} "
                f"[{stats['win_rate_low']:.1%}, {stats['win_rate_high']:.1%}] over {stats['games']} "
                f"{self.config.eval_episode}s, {stats['points_per_round']:.1f} points/round"
                + (f", {stats['capped_rounds']} round(s) at the turn cap" if stats.get("capped_rounds") else "")
            )
        if "last_steps_per_second" in self.state:
            print(
                f"  throughput {self.state['last_steps_per_second']:,.0f} env steps/s, "
                f"{self.state['last_opponent_share']:.0%} of it choosing opponent moves"
            )
        if self.config.final_policy == "last":
            source, which = self.dir / "checkpoints" / "latest.npz", f"policy at the last step ({steps})"
        else:
            source, which = self.dir / "checkpoints" / "best.npz", f"best policy (step {self.state.get('best_step')})"
        if source.exists():
            copy_atomically(source, self.dir / "policy.npz")
            print(f"  {which}: {self.dir / 'policy.npz'}")


def _stopped_before_first_checkpoint(run_dir: Path) -> bool:
    """config.yaml written, no checkpoint, and state.json absent or at step 0 (a valid one)."""
    if not (run_dir / "config.yaml").is_file() or (run_dir / "checkpoints" / "latest.zip").exists():
        return False
    if not (run_dir / "state.json").exists():
        return True
    try:
        return load_state(run_dir)["timesteps"] == 0
    except ValueError:
        return False


def new_run(yaml_path: Path | None, overrides: Sequence[str]) -> Run:
    """A new run of the config in ``yaml_path`` (defaults if None) with ``key=value`` overrides;
    ConfigError if its folder already holds a run (saying which command continues it) or cannot
    be written."""
    config = load_config(yaml_path, overrides)
    run_dir = config.run_dir
    _check_writable(run_dir)
    if _stopped_before_first_checkpoint(run_dir):
        raise ConfigError(f"{run_dir} holds a run that stopped before its first checkpoint: --resume {run_dir} "
                          f"starts it afresh from its config.yaml (key=value overrides on top), or choose another "
                          f"name=")
    if any((run_dir / name).exists() for name in ("config.yaml", "state.json", "checkpoints/latest.zip")):
        raise ConfigError(f"{run_dir} already holds a run: --resume {run_dir}, or choose another name=")
    return Run(config, run_dir, new_state(config))


def resume_run(run_dir: Path, overrides: Sequence[str]) -> Run:
    """The run in ``run_dir`` with its saved config, ``key=value`` overrides on top (ConfigError
    naming any key of ``FIXED_ON_RESUME`` they would change), its state, its pool and its latest
    checkpoint (an SB3 pickle: naming the folder is the request to load it); afresh, with a new
    state and no model, if it stopped before its first checkpoint."""
    saved_path = run_dir / "config.yaml"
    if not saved_path.is_file():
        raise ConfigError(f"{run_dir} holds no run to resume: no config.yaml (a run killed before writing it "
                          f"never started: start it with --config)")
    saved = read_yaml_mapping(saved_path)
    saved.update(runs_dir=str(run_dir.parent), name=run_dir.name)  # the folder may have moved
    config = load_config(None, overrides, base=saved)
    state = load_state(run_dir) if (run_dir / "state.json").exists() else None
    refuse_changes_on_resume(load_config(None, base=saved), config, state["timesteps"] if state else 0,
                             expert_done=state is not None and "expert" in state)
    # After the expert stage, its model: state.json said so only once expert.zip was written.
    checkpoint = run_dir / "checkpoints" / ("expert.zip" if state is not None and "expert" in state else "latest.zip")
    if not checkpoint.exists():
        if state is not None and state["timesteps"]:
            raise ValueError(f"no checkpoint to resume from at {checkpoint}, though the run state says step "
                             f"{state['timesteps']}: put it back, or start a new run with another name=")
        return Run(config, run_dir, new_state(config))
    if state is None:
        state = load_state(run_dir)  # raises, naming the missing file
    pool = load_pool(config, run_dir, state["pool"])
    model = load_model(checkpoint)
    if state["timesteps"] > model.num_timesteps:
        raise ValueError(f"the run state {run_dir / 'state.json'} says step {state['timesteps']} but its checkpoint "
                         f"{checkpoint} holds step {model.num_timesteps}")
    inputs, actions = model.observation_space.shape[0], model.action_space.n
    for step, policy in pool.snapshots:
        if policy.weights[0].shape[0] != inputs or policy.weights[-1].shape[-1] != actions:
            raise ValueError(f"the snapshot {run_dir / 'pool' / OpponentPool.file_name(step)} does not fit the "
                             f"run's model ({inputs} inputs, {actions} actions)")
    return Run(config, run_dir, state, pool, model)
