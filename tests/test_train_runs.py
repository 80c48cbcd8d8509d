"""A run folder under kills, leftovers and corruption (issue 18, items 9-12).

Every point where a kill can stop train.py (before each rename or deletion in the run folder)
leaves a folder that the documented next command finishes; every corrupted folder and every bad
start is refused by a ValueError naming what is wrong, and a refused command changes no byte of
the folder. The runs are tiny and in this process, so each test takes a few seconds.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from agents.training import ConfigError, load_config, new_run, resume_run, runs

ROOT = Path(__file__).parents[1]
QUICK = ROOT / "configs" / "quick.yaml"
TOTAL = 128
# The shape of the repro (pool_size=1, a snapshot every half eval and checkpoint interval),
# scaled down, with an imitation stage so that its checkpoint is a kill point too.
KILL_TINY = [
    f"total_timesteps={TOTAL}", "n_envs=1", "n_steps=32", "batch_size=32", "n_epochs=1", "net_arch=[8]",
    "snapshot_every=32", "pool_size=1", "eval_every=64", "checkpoint_every=64", "eval_games=2",
    "eval_episode=round", "eval_players=2", "progress=false", "players=2", "baselines=[random]",
    "eval_opponents=[random]", "imitation_samples=32", "imitation_epochs=1", "imitation_bot=greedy",
    "imitation_batch_size=32", "torch_threads=1",
    "expert_samples=64", "expert_budget=8", "expert_epochs=1", "expert_threads=1",  # its three writes: kill points
]


def load_train_script() -> Any:
    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRAIN = load_train_script()


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def assert_finished(folder: Path) -> None:
    """A finished run: its step count, a pool folder holding exactly the snapshots state.json names,
    no temporary file left, and the best policy copied out."""
    state = json.loads((folder / "state.json").read_text())
    assert state["timesteps"] == TOTAL, folder
    assert {p.name for p in (folder / "pool").iterdir()} == set(state["pool"]), folder
    assert not [p for p in folder.rglob("*") if ".tmp" in p.name], folder
    assert (folder / "policy.npz").is_file() and (folder / "checkpoints" / "latest.zip").is_file()
    assert "expert" in state and (folder / "checkpoints" / "expert.zip").is_file() and (folder / "ppo.npz").is_file()


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    runs_dir = tmp_path_factory.mktemp("runs")
    assert TRAIN.main(["--config", str(QUICK), f"runs_dir={runs_dir}", "name=run", *KILL_TINY]) == 0
    return runs_dir / "run"


def test_a_training_process_runs_numpy_s_blas_on_one_thread(finished_run):
    """The snapshots' numpy forward passes beside torch's threads: a pool of BLAS threads made
    self-play against snapshots 1.7x slower on 2 cores (agents.policies.ppo.one_blas_thread)."""
    from threadpoolctl import threadpool_info

    numpy_blas = subprocess.run(  # the BLAS that numpy itself loads (libraries loaded later are not its)
        [sys.executable, "-c", "import numpy, threadpoolctl; "
         "print('\\n'.join(p['filepath'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas'))"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    here = {p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}
    assert numpy_blas and all(here[path] == 1 for path in numpy_blas), (numpy_blas, here)


@pytest.fixture
def copy_of(finished_run, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(finished_run, copy)
    return copy


# -- Items 9 and 10: a kill at every write ---------------------------------------------------------


def record_kill_points(monkeypatch, run_dir: Path, into: Path) -> list[Path]:
    """Before every rename into and every deletion from ``run_dir``, a copy of the folder as a
    SIGKILL at that instant would leave it (temporary files included)."""
    copies: list[Path] = []

    def kill_point(path: Any) -> None:
        if run_dir in Path(path).absolute().parents:
            copy = into / f"{len(copies):03d}" / run_dir.name
            shutil.copytree(run_dir, copy)
            copies.append(copy)

    def hooked(real: Callable, target_arg: int) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            kill_point(args[target_arg])
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(os, "replace", hooked(os.replace, 1))
    monkeypatch.setattr(os, "unlink", hooked(os.unlink, 0))
    monkeypatch.setattr(os, "remove", hooked(os.remove, 0))
    return copies


def test_a_kill_at_every_write_leaves_a_run_that_the_next_command_finishes(monkeypatch, tmp_path, capsys):
    runs_dir = tmp_path / "runs"
    copies = record_kill_points(monkeypatch, runs_dir / "run", tmp_path / "killed")
    assert TRAIN.main(["--config", str(QUICK), f"runs_dir={runs_dir}", "name=run", *KILL_TINY]) == 0
    monkeypatch.undo()
    assert_finished(runs_dir / "run")
    assert len(copies) >= 20, "every snapshot, evaluation and checkpoint is a kill point"
    for copy in copies:
        if (copy / "config.yaml").exists():
            done = TRAIN.main(["--resume", str(copy)])
        else:  # killed before the run claimed its folder: the same command again
            done = TRAIN.main(["--config", str(QUICK), f"runs_dir={copy.parent}", "name=run", *KILL_TINY])
        assert done == 0, (copy, capsys.readouterr().err)
        assert_finished(copy)


def test_a_run_killed_before_its_first_checkpoint_says_what_to_do_and_resumes_afresh(monkeypatch, tmp_path):
    runs_dir = tmp_path / "runs"
    copies = record_kill_points(monkeypatch, runs_dir / "run", tmp_path / "killed")
    assert TRAIN.main(["--config", str(QUICK), f"runs_dir={runs_dir}", "name=run", *KILL_TINY,
                       "imitation_samples=0"]) == 0
    monkeypatch.undo()
    early = next(c for c in copies if (c / "state.json").exists() and not (c / "checkpoints" / "latest.zip").exists())
    before = tree_digest(early)
    with pytest.raises(ConfigError, match=rf"stopped before its first checkpoint: --resume {early} starts it afresh"):
        new_run(QUICK, [f"runs_dir={early.parent}", "name=run"])
    assert tree_digest(early) == before
    run = resume_run(early, [])
    assert not run.resumed and run.state == runs.new_state(run.config), "afresh: a new model and a new state"


def test_a_real_sigkill_after_a_pool_snapshot_rotates_resumes(tmp_path):
    """The issue's repro with a real SIGKILL: the process dies as it deletes the first snapshot that
    left the pool (pool_size=1)."""
    script = (
        "import os, signal, sys, importlib.util\n"
        "real = os.unlink\n"
        "def unlink(path, *a, **k):\n"
        "    if 'snapshot_' in str(path) and '.tmp' not in str(path):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(path, *a, **k)\n"
        "os.unlink = unlink\n"
        f"spec = importlib.util.spec_from_file_location('train_script', {str(ROOT / 'train.py')!r})\n"
        "train = importlib.util.module_from_spec(spec); spec.loader.exec_module(train)\n"
        "sys.exit(train.main(sys.argv[1:]))\n"
    )
    args = ["--config", str(QUICK), f"runs_dir={tmp_path}", "name=run", *KILL_TINY, "imitation_samples=0"]
    killed = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert TRAIN.main(["--resume", str(tmp_path / "run")]) == 0
    assert_finished(tmp_path / "run")


# -- Item 11: a finished run, and leftovers of a kill ------------------------------------------------


def test_resuming_leaves_the_step_count_and_removes_orphan_temporary_files(copy_of):
    for leftover in ("checkpoints/latest.tmp.zip", "checkpoints/latest.tmp.npz", "state.tmp.json",
                     "pool/snapshot_000000032.tmp.npz", "checkpoints/latest.npz.tmp", "state.json.tmp"):
        (copy_of / leftover).write_bytes(b"half a file")
    assert TRAIN.main(["--resume", str(copy_of)]) == 0
    assert_finished(copy_of)


# -- Item 12: a corrupted run folder, and bad starts -------------------------------------------------


def set_state(**changes: Any) -> Callable[[Path], None]:
    def corrupt(folder: Path) -> None:
        state = json.loads((folder / "state.json").read_text())
        for key, value in changes.items():
            if value is KeyError:
                del state[key]
            else:
                state[key] = value
        (folder / "state.json").write_text(json.dumps(state))

    return corrupt


def write(name: str, text: str) -> Callable[[Path], None]:
    def corrupt(folder: Path) -> None:
        (folder / name).write_text(text)

    return corrupt


def remove(name: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).unlink()


def corrupt_first_snapshot(folder: Path) -> None:
    name = json.loads((folder / "state.json").read_text())["pool"][0]
    (folder / "pool" / name).write_bytes(b"PK\x03\x04 not a zip")


CORRUPTIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    "state.json a number": (write("state.json", "42"), r"state\.json must hold a JSON object, not int"),
    "state.json null": (write("state.json", "null"), r"state\.json must hold a JSON object, not NoneType"),
    "state.json a list": (write("state.json", "[]"), r"state\.json must hold a JSON object, not list"),
    "state.json not JSON": (write("state.json", "{"), r"state\.json is not valid JSON"),
    "state.json nested 100,000 deep": (write("state.json", "[" * 100_000 + "]" * 100_000), r"state\.json.*nested"),
    "state.json an integer of 5,000 digits": (write("state.json", '{"timesteps": ' + "9" * 5000 + "}"),
                                             r"state\.json is not valid JSON"),
    "state.json missing": (remove("state.json"), r"cannot read the run state"),
    "timesteps missing": (set_state(timesteps=KeyError), r"lacks 'timesteps'"),
    "timesteps a string": (set_state(timesteps="100"), r"'timesteps' must be an integer"),
    "timesteps true": (set_state(timesteps=True), r"'timesteps' must be an integer"),
    "timesteps negative": (set_state(timesteps=-5), r"'timesteps' must be an integer from 0"),
    "timesteps past the checkpoint": (set_state(timesteps=10**9), r"step 1000000000 but its checkpoint"),
    "next_eval a string": (set_state(next_eval="x"), r"'next_eval' must be an integer"),
    "next_snapshot a float": (set_state(next_snapshot=1.5), r"'next_snapshot' must be an integer"),
    "next_checkpoint null": (set_state(next_checkpoint=None), r"'next_checkpoint' must be an integer"),
    "pool a string": (set_state(pool="snapshot_000000032.npz"), r"'pool' must be a list"),
    "pool entry a number": (set_state(pool=[5]), r"'pool' entry 5 is not a snapshot file name"),
    "pool entry a path": (set_state(pool=["../config.yaml"]), r"'pool' entry '../config.yaml' is not a snapshot"),
    "pool entry missing": (set_state(pool=["snapshot_000000001.npz"]), r"no snapshot .*snapshot_000000001\.npz"),
    "pool entries repeated": (set_state(pool=["snapshot_000000128.npz"] * 2), r"'pool' must name each snapshot once"),
    "pool snapshot corrupt": (corrupt_first_snapshot, r"cannot read policy weights"),
    "pool entries too many": (set_state(pool=[f"snapshot_{i:09d}.npz" for i in range(10_001)]),
                              r"'pool' holds 10001 entries"),
    "evaluations not a list": (set_state(evaluations={"step": 1}), r"'evaluations' must be a list"),
    "evaluation without results": (set_state(evaluations=[{"step": 64}]), r"'evaluations' entry 0 .*'results'"),
    "evaluation result a string": (set_state(evaluations=[{"step": 64, "results": {"random": "won"}}]),
                                   r"'evaluations' entry 0 .*'random'"),
    "best_score a string": (set_state(best_score="high"), r"'best_score' must be a number"),
    "imitation a list": (set_state(imitation=[1]), r"'imitation' must be an object"),
    "an unknown key": (set_state(bogus=1), r"unknown key 'bogus'"),
    "checkpoint missing": (remove("checkpoints/expert.zip"), r"no checkpoint .*expert\.zip.*step 128"),
    "expert a number": (set_state(expert=3), r"'expert' must be an object"),
    "config.yaml a list": (write("config.yaml", "- a\n- b\n"), r"config\.yaml must hold a mapping of config keys, not list"),
    "config.yaml not YAML": (write("config.yaml", "a: [\n"), r"config\.yaml is not valid YAML"),
    "config.yaml nested 60,000 deep": (write("config.yaml", "[" * 60_000), r"config\.yaml.*nested"),
    "config.yaml missing": (remove("config.yaml"), r"no config\.yaml"),
    "config.yaml of 100 kB": (write("config.yaml", "#" * 100_000), r"config\.yaml is larger than"),
    "config.yaml a bad value": (write("config.yaml", "n_envs: zero\n"), r"'n_envs'"),
    "config.yaml a bad seed": (write("config.yaml", "seed: -1\n"), r"'seed'"),
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_a_corrupted_run_folder_is_refused_by_name_and_left_as_it_was(copy_of, case, capsys):
    corrupt, message = CORRUPTIONS[case]
    corrupt(copy_of)
    before = tree_digest(copy_of)
    with pytest.raises(ValueError, match=message):
        resume_run(copy_of, [])
    assert TRAIN.main(["--resume", str(copy_of)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("train.py: error: ") and err.count("\n") == 1, err
    assert tree_digest(copy_of) == before


def test_the_state_file_has_a_size_bound(copy_of, monkeypatch):
    monkeypatch.setattr(runs, "MAX_STATE_BYTES", 100)
    with pytest.raises(ValueError, match=r"state\.json is larger than 100 bytes"):
        resume_run(copy_of, [])


@pytest.mark.parametrize(
    "override,named",
    [("seed=-1", "'seed'"), (f"seed={2**40}", "'seed'"), ("total_timesteps=1e15", "'total_timesteps'"),
     ("n_envs=100000", "'n_envs'"), ("net_arch=[100000]", "'net_arch'"), ("runs_dir=/proc/x", "'runs_dir'"),
     ("runs_dir=QUICK_FILE/x", "'runs_dir'")],
)
def test_a_bad_start_is_refused_by_name_before_anything_is_written(tmp_path, override, named, capsys):
    override = override.replace("QUICK_FILE", str(QUICK))
    runs_dir = [] if override.startswith("runs_dir") else [f"runs_dir={tmp_path}"]
    with pytest.raises(ConfigError, match=named):
        new_run(QUICK, [*runs_dir, "name=bad", override])
    assert TRAIN.main(["--config", str(QUICK), *runs_dir, "name=bad", override]) == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "bad").exists() and not Path("/proc/x").exists()


def test_a_refused_start_on_an_existing_run_touches_nothing(finished_run):
    before = tree_digest(finished_run)
    with pytest.raises(ConfigError, match="already holds a run: --resume"):
        new_run(QUICK, [f"runs_dir={finished_run.parent}", "name=run"])
    assert tree_digest(finished_run) == before


def test_the_help_says_that_resume_loads_the_runs_own_pickle(capsys):
    with pytest.raises(SystemExit):
        TRAIN.parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "pickle" in text and "--resume" in text
    assert "pickle" in runs.__doc__ and "--resume" in runs.__doc__


def test_the_config_has_bounds_and_the_shipped_configs_are_inside_them():
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        load_config(path)


@pytest.mark.parametrize("final_policy, source", [("best", "best.npz"), ("last", "latest.npz")])
def test_the_run_policy_is_the_best_or_the_last_checkpoint(tmp_path, capsys, final_policy, source):
    config = load_config(QUICK, [f"runs_dir={tmp_path}", "name=done", f"final_policy={final_policy}"])
    run = runs.Run(config, config.run_dir, runs.new_state(config))
    run.write_files()
    for name in ("best.npz", "latest.npz"):
        (run.dir / "checkpoints" / name).write_bytes(name.encode())  # two different files
    run.state.update(best_step=64, evaluations=[{"step": 128, "results": {}}])
    run.finish(128)
    assert (run.dir / "policy.npz").read_bytes() == source.encode()
    assert ("best policy (step 64)" if final_policy == "best" else "policy at the last step (128)") in capsys.readouterr().out
