"""The RLlib backend: its config keys, its bad input, and a tiny training end to end through
train.py (a run, a Ctrl-C'd --resume, the conversion, the export and load_bot), with the exported
bot playing the RLlib module's moves. The end-to-end tests need the extra (pip install -e ".[rllib]")."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agents.training.config import RLLIB_KEYS, SB3_KEYS, ConfigError, load_config, requested_backend

ROOT = Path(__file__).parents[1]
TINY = [
    "total_timesteps=400", "n_steps=64", "envs_per_runner=2", "env_runners=1", "ray_num_cpus=2", "batch_size=64",
    "n_epochs=1", "net_arch=[32,32]", "snapshot_every=150", "pool_size=2", "eval_every=250", "eval_games=4",
    "eval_players=2", "eval_episode=round", "eval_opponents=[greedy]", "checkpoint_every=250", "progress=false",
    "players=2-3", "baselines=[random,greedy]", "baseline_fraction=0.5",
]


def train(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "train.py"), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


def tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# -- The config (no Ray needed) -------------------------------------------------------------------


@pytest.mark.parametrize("overrides, named", [
    (["env_runners=4"], "env_runners"),
    (["ray_address=auto"], "ray_address"),
    (["shared_fraction=0.9"], "shared_fraction"),
    (["backend=rllib", "n_envs=64"], "n_envs"),
    (["backend=rllib", "imitation_samples=1000"], "imitation_samples"),
    (["backend=rllib", "stakes_skip=true"], "stakes_skip"),
    (["backend=rllib", "learning_rate_schedule=linear"], "learning_rate_schedule"),
    (["backend=rllib", "rllib_env=aec", "rule_sets=[french]"], "rule_sets"),
    (["backend=rllib", "rllib_env=aec", "rule_space=house"], "rule_space"),
    (["backend=rllib", "rllib_env=aec", "episode=game", "round_share=0.5"], "round_share"),
    (["backend=rllib", "shared_fraction=0.9"], "shared_fraction"),
    (["backend=rllib", "rllib_env=gym"], "rllib_env"),
    (["rllib_env=aec"], "rllib_env"),
    (["backend=rllib", "ray_address=auto", "ray_num_cpus=2"], "ray_num_cpus"),
    (["backend=rllib", "batch_size=100000"], "batch_size"),
    (["backend=torch"], "backend"),
])
def test_the_keys_of_one_backend_are_refused_by_name_for_the_other(overrides, named):
    with pytest.raises(ConfigError, match=f"'{named}'"):
        load_config(None, overrides)


def test_the_backend_keys_are_documented_and_disjoint():
    from agents.training.config import FIELDS, TrainConfig

    docs = TrainConfig.field_docs()
    assert set(RLLIB_KEYS).isdisjoint(SB3_KEYS) and set(RLLIB_KEYS) | set(SB3_KEYS) <= set(FIELDS)
    for key in RLLIB_KEYS:
        assert f"  {key} (" in docs and "rllib:" in FIELDS[key].metadata["doc"]
    config = load_config(ROOT / "configs" / "rllib.yaml")
    assert config.backend == "rllib" and config.rollout_steps >= config.batch_size


def test_the_backend_is_read_before_the_config_is_built(tmp_path):
    (tmp_path / "config.yaml").write_text("backend: rllib\n")
    assert requested_backend(ROOT / "configs" / "rllib.yaml", None) == "rllib"
    assert requested_backend(ROOT / "configs" / "quick.yaml", None) == "sb3"
    assert requested_backend(ROOT / "configs" / "quick.yaml", None, ["backend=rllib"]) == "rllib"
    assert requested_backend(None, tmp_path) == "rllib"
    assert requested_backend(None, tmp_path / "nowhere") == "sb3"


def test_importing_training_imports_no_ray():
    code = "import sys, agents.training, agents.training.rllib, train; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_a_missing_extra_is_one_line_saying_how_to_install_it(tmp_path, monkeypatch, capsys):
    import train as train_script

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    code = train_script.main(["--config", str(ROOT / "configs" / "rllib.yaml"), f"runs_dir={tmp_path}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "pip install -e '.[rllib]'" in err
    assert not any(tmp_path.iterdir())


def test_the_core_tables_are_rllibs_next_step_vector_env_with_the_pool_inside():
    """rllib_env vector's env (no Ray needed): dict observations with the mask, all zeros on an
    episode's last one; the action sent after it ignored; the pool's snapshot and the baselines
    seated; the same seed the same stream, another seed another; rules drawn per game."""
    from agents.policies.ppo import NumpyPolicy
    from agents.training.rllib.tables import CoreTables
    from gymnasium.vector import AutoresetMode

    config = load_config(None, ["backend=rllib", "players=2-4", "baselines=[greedy]", "baseline_fraction=0.5",
                                "rule_space=house", "max_turns=60"])
    calls = []

    class Counted(NumpyPolicy):
        def act_batch(self, obs, masks, rng):
            calls.append(len(obs))
            return super().act_batch(obs, masks, rng)

    def run(seed: int, steps: int) -> tuple[list[bytes], int]:
        env = CoreTables({"config": config.to_dict()}, num_envs=6)
        assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        n_obs = env.single_observation_space["observation"].shape[0]
        n_act = env.single_action_space.n
        w = np.random.default_rng(0)
        env.set_pool([(100, Counted([w.normal(size=(8, n_obs)).astype(np.float32),
                                     w.normal(size=(n_act, 8)).astype(np.float32)],
                                    [np.zeros(8, np.float32), np.zeros(n_act, np.float32)], "tanh"))])
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(1)
        stream, ends, after_end = [obs["observation"].tobytes()], 0, np.zeros(6, dtype=bool)
        for _ in range(steps):
            assert env.observation_space.contains(obs)
            mask = obs["action_mask"]
            assert mask[~after_end].any(axis=1).all() and not mask[after_end].any()
            actions = (rng.random(mask.shape) * (mask > 0) + (mask > 0)).argmax(axis=1)
            actions[after_end] = 0  # ignored: the new episode's first observation comes back
            obs, rewards, terminated, truncated, infos = env.step(actions)
            assert rewards.dtype == np.float32 and (rewards[after_end] == 0).all()
            after_end = terminated | truncated
            ends += int(after_end.sum())
            stream.append(obs["observation"].tobytes())
        return stream, ends

    first, ends = run(5, 150)
    assert ends >= 10 and calls, "episodes ended, and the snapshot played seats"
    assert run(5, 150)[0] == first
    assert run(6, 1)[0][0] != first[0]
    from agents.registry import register, unregister
    from agents.baselines.random_agent import RandomAgent

    register("python_only", lambda spec, seed: RandomAgent(seed), help="a bot with no compiled form")
    try:
        with pytest.raises(ValueError, match="'python_only' has no form on the compiled core"):
            CoreTables({"config": {**config.to_dict(), "baselines": ["python_only"]}})
    finally:
        unregister("python_only")


# -- With Ray ---------------------------------------------------------------------------------


def main_in_process(capsys, *args: str) -> tuple[int, str]:
    """train.py's main in this process (for commands refused before Ray starts): exit code, stderr."""
    import train as train_script

    code = train_script.main(list(args))
    return code, capsys.readouterr().err


def test_an_unreachable_ray_address_fails_within_seconds_naming_it(tmp_path, capsys):
    pytest.importorskip("ray.rllib")
    start = time.perf_counter()
    code, err = main_in_process(capsys, "--config", str(ROOT / "configs" / "rllib.yaml"), f"runs_dir={tmp_path}",
                                "ray_address=127.0.0.1:9")
    assert code == 2 and "127.0.0.1:9" in err and "ray_address" in err
    assert time.perf_counter() - start < 10
    assert not any(tmp_path.iterdir())


def test_the_multi_agent_env_maps_seats_to_modules_and_pays_every_agent_at_the_end():
    pytest.importorskip("ray.rllib")
    from agents.training.rllib.env import LEARNER, YanivMultiAgentEnv, env_config, module_for_agent, publish_pool_fill

    config = load_config(None, ["backend=rllib", "players=2-8", "baselines=[random,greedy]", "baseline_fraction=0.3",
                                "shared_fraction=0.5", "pool_size=3"])
    env = YanivMultiAgentEnv(env_config(config))
    rng = np.random.default_rng(0)
    seen_modules, seen_sizes = set(), set()
    try:
        publish_pool_fill(2)
        for episode in range(40):
            obs, _ = env.reset(seed=episode)
            seen_sizes.add(env.aec.num_players)
            assert env.players.count(None) + len(env.agents) == env.aec.num_players
            assert any(p is not None and module_for_agent(p) == LEARNER for p in env.players)
            acted: set[str] = set()
            while True:
                (agent, o), = obs.items()  # turn-based: one agent observes, the one to move
                seen_modules.add(module_for_agent(agent))
                assert o["observation"].shape == env.single_observation_space["observation"].shape
                legal = np.flatnonzero(o["action_mask"])
                acted.add(agent)
                obs, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(legal))})
                if terminated["__all__"] or truncated["__all__"]:
                    assert set(obs) == set(rewards) == acted  # every agent that played gets its reward
                    assert all(not o["action_mask"].any() for o in obs.values())
                    break
                assert list(rewards.values()) == [0.0]
        with pytest.raises(ValueError, match="illegal action"):
            (agent, o), = env.reset(seed=1)[0].items()
            env.step({agent: int(np.flatnonzero(o["action_mask"] == 0)[0])})
    finally:
        publish_pool_fill(0)
    assert seen_modules == {LEARNER, "snapshot_0", "snapshot_1"} and len(seen_sizes) >= 5


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    pytest.importorskip("ray.rllib")
    runs = tmp_path_factory.mktemp("runs")
    done = train("--config", str(ROOT / "configs" / "rllib.yaml"), f"runs_dir={runs}", "name=tiny", *TINY)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "trained" in done.stdout and "local Ray instance" in done.stdout and "env runners: 1 on node" in done.stdout
    assert "2 tables (on the compiled core)" in done.stdout
    return runs / "tiny"


def test_a_run_writes_the_sb3_layout_with_an_rllib_checkpoint(run_dir):
    state = json.loads((run_dir / "state.json").read_text())
    assert state["timesteps"] >= 400
    for name in ("config.yaml", "policy.npz", "checkpoints/latest.npz", "checkpoints/best.npz",
                 f"checkpoints/rllib_{state['timesteps']:09d}/rllib_checkpoint.json"):
        assert (run_dir / name).is_file(), name
    assert [p.name for p in (run_dir / "checkpoints").iterdir() if p.is_dir()] == [f"rllib_{state['timesteps']:09d}"]
    assert sorted(p.name for p in (run_dir / "pool").iterdir()) == state["pool"] and len(state["pool"]) == 2
    assert [e["step"] for e in state["evaluations"]][-1] == state["timesteps"]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "tb" / "ppo_1"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"eval_greedy/win_rate", "eval/mean_win_rate", "selfplay/env_steps_per_second", "train/policy_loss"} <= tags


def test_the_aec_table_trains_the_learner_among_snapshot_modules_and_converts(tmp_path):
    """rllib_env aec end to end: the multi-agent table, the snapshot modules filled from the pool,
    and the learner module (``learner``, beside the snapshots') converting to the run's weights."""
    from agents.policies.ppo import NumpyPolicy
    from agents.training.rllib.convert import policy_from_checkpoint

    pytest.importorskip("ray.rllib")
    done = train("--config", str(ROOT / "configs" / "rllib.yaml"), f"runs_dir={tmp_path}", "name=aec", *TINY,
                 "rllib_env=aec", "total_timesteps=300", "eval_every=0", "shared_fraction=0.5")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 tables (AEC)" in done.stdout
    run = tmp_path / "aec"
    state = json.loads((run / "state.json").read_text())
    assert state["timesteps"] >= 300 and len(state["pool"]) == 2
    checkpoint = run / "checkpoints" / f"rllib_{state['timesteps']:09d}"
    assert (checkpoint / "learner_group" / "learner" / "rl_module" / "snapshot_1").is_dir()
    converted = policy_from_checkpoint(checkpoint, trust_pickle=True)
    latest = NumpyPolicy.load(run / "checkpoints" / "latest.npz")
    for a, b in zip(converted.weights + converted.biases, latest.weights + latest.biases):
        np.testing.assert_array_equal(a, b)


def test_a_refused_resume_touches_nothing(run_dir, capsys):
    before = tree_digest(run_dir)
    for override in ("pool_size=3", "net_arch=[64,64]", "backend=sb3", "n_envs=3", "rllib_env=aec"):
        code, err = main_in_process(capsys, "--resume", str(run_dir), override)
        assert code == 2 and override.partition("=")[0] in err, err
    code, err = main_in_process(capsys, "--resume", str(run_dir), "ray_address=127.0.0.1:9", "ray_num_cpus=0")
    assert code == 2 and "127.0.0.1:9" in err
    assert tree_digest(run_dir) == before


@pytest.fixture(scope="module")
def resumed(run_dir) -> Path:
    """The run resumed with a far budget and stopped by Ctrl-C after its first new checkpoint."""
    first = json.loads((run_dir / "state.json").read_text())["timesteps"]
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--resume", str(run_dir),
                             "total_timesteps=100000", "checkpoint_every=100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if json.loads((run_dir / "state.json").read_text())["timesteps"] > first:
                break
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    assert "interrupted at step" in out and f"--resume {run_dir}" in out
    state = json.loads((run_dir / "state.json").read_text())
    assert state["timesteps"] > first
    assert (run_dir / "checkpoints" / f"rllib_{state['timesteps']:09d}").is_dir()
    return run_dir


def test_the_rllib_checkpoint_converts_exports_and_loads_as_a_bot(resumed, tmp_path):
    from agents import load_bot, make_agent
    from agents.policies.export import export_policy
    from agents.policies.onnx import ExportedPolicy
    from agents.policies.ppo import NumpyPolicy
    from agents.policies.stall import stalled
    from agents.training.rllib.convert import load_module, main as convert_main, policy_from_checkpoint
    from yaniv import Game
    from yaniv.protocol import state_for
    from yaniv_env.aec import raw_env

    state = json.loads((resumed / "state.json").read_text())
    checkpoint = resumed / "checkpoints" / f"rllib_{state['timesteps']:09d}"
    with pytest.raises(ValueError, match="trust_pickle"):
        policy_from_checkpoint(checkpoint)
    assert convert_main([str(checkpoint), str(tmp_path / "w.npz")]) == 2
    assert convert_main([str(checkpoint), str(tmp_path / "w.npz"), "--trust-pickle"]) == 0
    converted, latest = NumpyPolicy.load(tmp_path / "w.npz"), NumpyPolicy.load(resumed / "checkpoints" / "latest.npz")
    for a, b in zip(converted.weights + converted.biases, latest.weights + latest.biases):
        np.testing.assert_array_equal(a, b)

    # 1,000 positions of random play at 2 to 8 seats, below the stall rule's turn (the export's, not the module's)
    rng = np.random.default_rng(0)
    observations, masks = [], []
    while len(observations) < 1000:
        env = raw_env(num_players=int(rng.integers(2, 9)), episode="round")
        env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if not stalled(obs["observation"][None])[0]:
                observations.append(obs["observation"])
                masks.append(obs["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    obs, mask = np.stack(observations[:1000]), np.stack(masks[:1000])

    import torch

    module = load_module(checkpoint, trust_pickle=True)
    with torch.no_grad():
        batch = {"obs": {"observation": torch.from_numpy(obs), "action_mask": torch.from_numpy(mask)}}
        out = module.forward_inference(batch)
    module_moves = out["action_dist_inputs"].argmax(dim=-1).numpy()
    assert mask[np.arange(1000), module_moves].all()  # the module's own masking

    export_policy(converted, tmp_path / "bot", source=tmp_path / "w.npz")
    exported = ExportedPolicy(tmp_path / "bot")
    np.testing.assert_array_equal(exported.act_batch(obs, mask), module_moves)
    np.testing.assert_array_equal(converted.act_batch(obs, mask), module_moves)

    game = Game(3, seed=1)
    move = load_bot(str(tmp_path / "bot")).choose(state_for(game, game.current))
    assert move["action"] in ("discard", "yaniv")
    assert make_agent(f"ppo:{resumed / 'policy.npz'}") is not None
