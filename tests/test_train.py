"""train.py end to end through its CLI, the config rules, resume, and bad input that must touch nothing."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.training import FIXED_ON_RESUME, ConfigError, Run, TrainConfig, load_config, new_state, resume_run
from yaniv_env import encoding
from yaniv_env.core import layout as L

ROOT = Path(__file__).parents[1]
TINY = [
    "total_timesteps=1024", "n_envs=2", "n_steps=256", "batch_size=256", "n_epochs=1", "net_arch=[32,32]",
    "snapshot_every=256", "pool_size=2", "eval_every=512", "eval_games=2", "eval_episode=round",
    "checkpoint_every=512", "progress=false", "players=2-3", "baselines=[random,greedy]", "eval_opponents=[greedy]",
]


def train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def resume_and_refuse_a_change(run: Path, key: str, value: str) -> None:
    """The run resumes to 1,536 steps; then changing ``key`` on --resume is refused by name and
    touches nothing in the run directory."""
    again = train("--resume", str(run), "total_timesteps=1536")
    assert again.returncode == 0, again.stderr
    assert json.loads((run / "state.json").read_text())["timesteps"] == 1536
    before = tree_digest(run)
    refused = train("--resume", str(run), "total_timesteps=2048", f"{key}={value}")
    assert refused.returncode == 2 and key in refused.stderr
    assert tree_digest(run) == before


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={runs}", "name=tiny", *TINY)
    assert done.returncode == 0, done.stderr
    assert "trained 1024 steps" in done.stdout
    return runs / "tiny"


def test_a_run_writes_config_checkpoints_pool_and_tensorboard(run_dir):
    config = load_config(run_dir / "config.yaml")
    assert config.total_timesteps == 1024 and config.players == "2-3" and config.net_arch == [32, 32]
    for name in ("latest.zip", "latest.npz", "best.zip", "best.npz"):
        assert (run_dir / "checkpoints" / name).stat().st_size > 0
    state = json.loads((run_dir / "state.json").read_text())
    assert state["timesteps"] == 1024
    assert state["pool"] and all((run_dir / "pool" / name).is_file() for name in state["pool"])
    assert len(state["pool"]) <= 2, "the pool keeps pool_size snapshots"
    events = list((run_dir / "tb").rglob("events.out.tfevents.*"))
    assert events, "TensorBoard events are written"
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(events[0].parent))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"eval_greedy/win_rate", "eval_greedy/points_per_round", "selfplay/env_steps_per_second"} <= tags
    assert any(t.startswith("train/") for t in tags), "SB3's PPO metrics"
    assert "config" in " ".join(acc.Tags()["tensors"])


def test_resume_continues_the_step_count_pool_and_curves(run_dir, tmp_path):
    copy = tmp_path / "tiny"
    subprocess.run(["cp", "-r", str(run_dir), str(copy)], check=True)
    done = train("--resume", str(copy), "total_timesteps=1536")
    assert done.returncode == 0, done.stderr
    state = json.loads((copy / "state.json").read_text())
    assert state["timesteps"] == 1536
    assert [p.name for p in (copy / "tb").iterdir()] == ["ppo_1"], "the same TensorBoard run continues"
    assert load_config(copy / "config.yaml").total_timesteps == 1536


def test_an_evaluation_due_in_the_last_rollout_is_left_to_the_final_one(tmp_path):
    """Rollouts of 512 steps, an evaluation every 500: the one due at 1,000 falls in the last rollout
    (512 to 1,024), whose end the final evaluation plays; a resume to 1,536 does not evaluate again at
    once, and its own due one (1,500) is again the final one's."""
    tiny = [a for a in TINY if not a.startswith(("total_timesteps", "eval_every"))]
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=ends", *tiny,
                 "total_timesteps=1000", "eval_every=500")
    assert done.returncode == 0, done.stderr
    state = json.loads((tmp_path / "ends" / "state.json").read_text())
    assert [e["step"] for e in state["evaluations"]] == [500, 1024]
    assert state["next_eval"] == 1500
    again = train("--resume", str(tmp_path / "ends"), "total_timesteps=1536")
    assert again.returncode == 0, again.stderr
    state = json.loads((tmp_path / "ends" / "state.json").read_text())
    assert [e["step"] for e in state["evaluations"]] == [500, 1024, 1536]


# A value other than the saved run's, for each key a resumed run cannot change.
FIXED_CHANGES = {
    "name": "other", "runs_dir": "elsewhere", "n_envs": "3", "n_steps": "128", "batch_size": "128", "n_epochs": "2",
    "learning_rate": "1e-3", "learning_rate_schedule": "linear", "gamma": "0.9", "gae_lambda": "0.9",
    "clip_range": "0.1", "ent_coef": "0.0",
    "vf_coef": "1.0", "net_arch": "[16,16]", "critic_arch": "[16]", "activation": "relu", "stakes_skip": "false",
    "towers": "one_round",
    "towers_from": "512", "towers_learning_rate": "1e-4", "imitation_samples": "100",
    "imitation_bot": "greedy", "imitation_epochs": "2", "imitation_rounds": "2", "imitation_learning_rate": "1e-3",
    "imitation_schedule": "cosine", "imitation_batch_size": "64", "backend": "rllib", "rllib_env": "aec",
    "expert_samples": "1000", "expert_budget": "64", "expert_epochs": "1", "expert_learning_rate": "1e-3",
    "expert_batch_size": "256", "expert_tower_share": "0.2",
}


@pytest.fixture
def saved_run(tmp_path) -> Path:
    """A run's config.yaml and state.json as train.py writes them, with no checkpoint: the checks of
    the overrides come before the checkpoint is loaded."""
    config = load_config(ROOT / "configs" / "quick.yaml", [f"runs_dir={tmp_path}", "name=saved", *TINY,
                                                           "stakes_skip=true"])
    Run(config, config.run_dir, new_state(config)).write_files()
    return config.run_dir


def test_every_key_fixed_on_resume_has_a_case():
    assert set(FIXED_ON_RESUME) == set(FIXED_CHANGES)


EXPERT_KEYS = {key for key in FIXED_ON_RESUME if key.startswith("expert_")}


# rllib_env: an rllib run's, test_rllib.py; towers and towers_from: fixed once the network has split, and
# towers_learning_rate, which needs them: test_towers.py checks them (this saved run has one network, which may
# still gain towers); the expert stage's keys: fixed once the stage has run (below)
@pytest.mark.parametrize("key", sorted(set(FIXED_CHANGES) - {"rllib_env", "towers", "towers_from",
                                                             "towers_learning_rate"} - EXPERT_KEYS))
def test_resume_refuses_by_name_a_change_the_resumed_model_would_ignore(saved_run, key):
    with pytest.raises(ConfigError, match=f"config key '{key}' cannot change on --resume"):
        resume_run(saved_run, [f"{key}={FIXED_CHANGES[key]}"])


@pytest.mark.parametrize("key", sorted(EXPERT_KEYS))
def test_the_expert_stages_keys_change_until_the_stage_has_run(saved_run, key):
    """Before the stage runs nothing of it exists, so a trained run may be given it (or another one);
    once state.json records it, its labels were drawn with the saved keys."""
    change = [f"{key}={FIXED_CHANGES[key]}"]
    assert getattr(resume_run(saved_run, change).config, key) == getattr(load_config(None, change), key)
    state = json.loads((saved_run / "state.json").read_text())
    (saved_run / "state.json").write_text(json.dumps(state | {"expert": {"samples": 1000}}))
    with pytest.raises(ConfigError, match=f"config key '{key}' cannot change on --resume.*expert stage has run"):
        resume_run(saved_run, change)


def test_resume_takes_the_keys_the_run_reads_again_and_fixed_keys_left_as_they_were(saved_run):
    overrides = ["total_timesteps=4096", "seed=3", "eval_every=0", "eval_games=4", "eval_opponents=[random]",
                 "baseline_fraction=1.0", "snapshot_every=1024", "torch_threads=1", "progress=true", "n_envs=2",
                 "net_arch=[32,32]", "name=saved"]
    # past every check of the config: with no checkpoint yet, the run starts afresh with the overrides
    run = resume_run(saved_run, overrides)
    assert not run.resumed and run.config.total_timesteps == 4096 and run.config.eval_opponents == ["random"]
    assert run.state == new_state(run.config)


def test_a_refused_resume_names_the_key_and_touches_nothing(run_dir, tmp_path):
    copy = tmp_path / "tiny"
    subprocess.run(["cp", "-r", str(run_dir), str(copy)], check=True)
    before = tree_digest(copy)
    done = train("--resume", str(copy), "learning_rate=1e-3")
    assert done.returncode == 2 and "'learning_rate' cannot change on --resume" in done.stderr
    assert tree_digest(copy) == before


def test_resuming_a_finished_run_keeps_its_step_count(run_dir, tmp_path):
    copy = tmp_path / "tiny"
    subprocess.run(["cp", "-r", str(run_dir), str(copy)], check=True)
    done = train("--resume", str(copy))
    assert done.returncode == 0, done.stderr
    assert "trained 1024 steps" in done.stdout
    assert json.loads((copy / "state.json").read_text())["timesteps"] == 1024


def test_a_corrupt_checkpoint_is_named_and_nothing_is_touched(run_dir, tmp_path):
    copy = tmp_path / "tiny"
    subprocess.run(["cp", "-r", str(run_dir), str(copy)], check=True)
    latest = copy / "checkpoints" / "latest.zip"
    latest.write_bytes(latest.read_bytes()[:200])
    before = tree_digest(copy)
    done = train("--resume", str(copy))
    assert done.returncode == 2
    assert "latest.zip" in done.stderr and "cannot load" in done.stderr
    assert tree_digest(copy) == before


@pytest.mark.parametrize(
    "override,named",
    [("n_envs=zero", "n_envs"), ("bogus_key=1", "bogus_key"), ("gamma=1.5", "gamma"), ("players=9", "players"),
     ("rules=klaberjass", "rules"), ("baselines=[random,alphazero]", "baselines"), ("batch_size=100000", "batch_size"),
     ("imitation_bot=ppo", "imitation_bot"), ("imitation_samples=-1", "imitation_samples"),
     ("imitation_rounds=0", "imitation_rounds"), ("round_reward=score", "round_reward"),
     ("round_share=2", "round_share"), ("round_share=0.5", "round_share"),
     ("imitation_bot=heuristic:call_rsk=0.1", "call_rsk"), ("imitation_bot=alphazero", "imitation_bot"),
     ("imitation_schedule=linear", "imitation_schedule"), ("imitation_batch_size=0", "imitation_batch_size"),
     ("stakes_skip=perhaps", "stakes_skip")],
)
def test_bad_config_values_name_the_key_and_create_nothing(tmp_path, capsys, override, named):
    """train.py's main in this process (a subprocess each would cost the suite a minute: the CLI's
    own exit path is the existing-run test's)."""
    import train as train_script

    code = train_script.main(["--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=bad",
                              override])
    err = capsys.readouterr().err
    assert code == 2
    assert named in err and "Traceback" not in err
    assert not (tmp_path / "bad").exists()


def test_an_existing_run_is_never_overwritten(run_dir):
    before = tree_digest(run_dir)
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={run_dir.parent}", "name=tiny")
    assert done.returncode == 2 and "--resume" in done.stderr
    assert tree_digest(run_dir) == before


def test_config_precedence_defaults_then_yaml_then_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("n_envs: 3\nplayers: 2-5\nlearning_rate: 1.0e-3\n")
    config = load_config(path, ["n_envs=5", "net_arch=64,32"])
    assert config.n_envs == 5 and config.players == "2-5" and config.player_counts == (2, 3, 4, 5)
    assert config.learning_rate == 1e-3 and config.net_arch == [64, 32]
    assert config.n_steps == TrainConfig().n_steps
    with pytest.raises(ConfigError, match="'n_steps'"):
        load_config(None, ["n_steps=2.5"])
    with pytest.raises(ConfigError, match="key=value"):
        load_config(None, ["n_steps"])
    path.write_text("- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(path)


def test_every_config_file_loads_and_names_its_own_run():
    paths = sorted((ROOT / "configs").glob("*.yaml"))
    assert {p.stem for p in paths} >= {"default", "quick", "heads_up"}
    for path in paths:
        assert load_config(path).name == path.stem, f"{path.name} would train into another config's run"
    assert load_config(ROOT / "configs" / "default.yaml").player_counts == (2, 3, 4, 5, 6)
    assert load_config(ROOT / "configs" / "heads_up.yaml").player_counts == (2,)


@pytest.mark.slow
def test_a_short_training_run_beats_random(tmp_path):
    done = train(
        "--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=learn", "players=2",
        "total_timesteps=60000", "n_envs=8", "n_steps=256", "batch_size=1024", "n_epochs=3", "net_arch=[64,64]",
        "baselines=[random]", "baseline_fraction=0.5", "eval_every=0", "eval_games=200", "eval_episode=round",
        "eval_opponents=[random]", "snapshot_every=15000", "checkpoint_every=30000", "progress=false",
    )
    assert done.returncode == 0, done.stderr
    state = json.loads((tmp_path / "learn" / "state.json").read_text())
    stats = state["evaluations"][-1]["results"]["random"]
    assert stats["win_rate_low"] > 0.6, f"won {stats['win_rate']:.0%} of 200 heads-up rounds against random"
    assert np.isfinite(stats["points_per_round"])


@pytest.mark.slow
def test_the_learning_stages_beat_their_own_starts(tmp_path):
    """The recipe in small (copy the heuristic, PPO against it, then the expert stage; the default
    config's shape at a fraction of its numbers): the run's imitation.npz (where PPO started), its
    ppo.npz (where the expert stage started) and its end point play the same single-round deals
    heads-up against the heuristic, and each stage's end has the higher margin, paired by deal,
    with the 95% interval above zero."""
    from agents.tournament import run_tournament

    done = train(
        "--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=learn", "players=2",
        "imitation_samples=20000", "imitation_rounds=1", "imitation_epochs=2", "imitation_bot=heuristic",
        "round_reward=relative", "net_arch=[64,64]", "total_timesteps=200000", "n_envs=64", "n_steps=32",
        "batch_size=1024", "n_epochs=2", "learning_rate=3e-4", "ent_coef=0.0", "baselines=[heuristic]",
        "baseline_fraction=1.0", "eval_every=0", "eval_games=20", "eval_episode=round", "eval_opponents=[heuristic]",
        "snapshot_every=1000000", "checkpoint_every=1000000", "torch_threads=1", "rollout_threads=1", "progress=false",
        "expert_samples=60000", "expert_learning_rate=1e-3", "expert_epochs=4", "final_policy=last",
    )
    assert done.returncode == 0, done.stderr
    margins = {}
    for name in ("imitation", "ppo", "policy"):
        result = run_tournament([f"ppo:{tmp_path / 'learn' / name}.npz", "heuristic"], 2, 1500, seed=5, rounds=True,
                                workers=1, progress=False, max_turns=500)
        margins[name] = np.array(result.agent(result.names[0]).deal_margins)
    for stage, start, end in (("PPO", "imitation", "ppo"), ("the expert stage", "ppo", "policy")):
        gain = margins[end] - margins[start]
        half = 1.96 * gain.std(ddof=1) / math.sqrt(len(gain))
        assert gain.mean() - half > 0, (f"{stage} moved the margin by {gain.mean():+.2f} [{gain.mean() - half:+.2f}, "
                                        f"{gain.mean() + half:+.2f}] points a round over {len(gain)} deals")


def test_an_illegal_move_stops_the_evaluation_naming_the_learner(monkeypatch):
    """Why evaluations report no count of illegal moves: the first one is an error."""
    from agents.policies.ppo import NumpyPolicy, PPOAgent
    from agents.training import evaluate_policy

    monkeypatch.setattr(PPOAgent, "act", lambda self, view: "no move")  # on the Python engine
    monkeypatch.setattr(PPOAgent, "act_batch", lambda self, obs, masks: np.full(len(obs), 10_000))  # on the core
    policy = NumpyPolicy([np.zeros((4, 10))], [np.zeros(4)], "tanh")
    with pytest.raises(ValueError, match="'learner'.*illegal move"):
        evaluate_policy(policy, "greedy", 2, 2, seed=0, rules="default", episode="round")


def test_imitation_data_holds_the_bots_legal_moves_and_round_returns():
    from agents.training import collect_imitation_data
    from yaniv import Game
    from yaniv.rules import PRESETS
    from agents.registry import make_agent

    config = TrainConfig(players="2-3")
    data = collect_imitation_data(config, "greedy", 600, gamma=1.0, seed=3)
    n = len(data["actions"])
    assert n >= 600 and data["obs"].shape[0] == data["masks"].shape[0] == data["returns"].shape[0] == n
    assert data["masks"][np.arange(n), data["actions"]].all(), "every recorded action is legal"
    assert 0.0 <= data["obs"].min() and data["obs"].max() <= 1.0
    assert (data["returns"] <= 0).all() and (data["returns"] < 0).any()
    # Full games: later rounds start from non-zero scores, which the observation shows.
    own_score = -(encoding.SELF_FEATURES + encoding.SETTINGS_FEATURES)
    assert (data["obs"][:, own_score] > 0).any(), "the own-score feature is seen non-zero"
    # With gamma 1, the first round's returns are -points / 50 of that round, seat by seat.
    rng = np.random.default_rng(3)
    n_players = config.player_counts[int(rng.integers(2))]
    game = Game(n_players, PRESETS["default"], seed=int(rng.integers(2**63)))
    bots = [make_agent("greedy") for _ in range(n_players)]
    for bot in bots:
        bot.reset(int(rng.integers(2**63)))
    seats = []
    while not game.results:
        seats.append(game.current)
        game.apply(bots[game.current].act(game.view(game.current)))
    expected = [-game.results[0].points[q] / 50 for q in seats]
    assert np.allclose(data["returns"][: len(seats)], expected)


def test_dagger_plays_the_students_moves_and_records_the_bots():
    """With a student, its seats play its best move while the data records the bot's move there:
    replayed by hand through the first game's first round (or as much of it as the data holds)."""
    from agents.policies.ppo import NumpyPolicy
    from agents.registry import make_agent
    from agents.training import collect_imitation_data
    from yaniv import Game
    from yaniv.rules import PRESETS

    observer = encoding.Observer(PRESETS["default"], 2)
    w = np.random.default_rng(0)
    student = NumpyPolicy([w.normal(size=(16, observer.size)), w.normal(size=(observer.table.size, 16))],
                          [np.zeros(16), np.zeros(observer.table.size)], "tanh")
    data = collect_imitation_data(TrainConfig(players="2"), "greedy", 400, gamma=1.0, seed=5, student=student)
    rng = np.random.default_rng(5)
    rng.integers(1)  # the table size, of one choice
    game = Game(2, PRESETS["default"], seed=int(rng.integers(2**63)))
    bots = [make_agent("greedy") for _ in range(2)]
    for bot in bots:
        bot.reset(int(rng.integers(2**63)))
    students = rng.random(2) < 0.5
    if not students.any():
        students[int(rng.integers(2))] = True
    i = overruled = 0
    while not game.results and i < len(data["actions"]):
        seat = game.current
        view = game.view(seat)
        label = bots[seat].act(view)
        obs, mask = observer.observe(view), observer.action_mask(view)
        assert np.array_equal(data["obs"][i], obs)
        assert data["actions"][i] == observer.table.to_action(label, view), "the label is the bot's move"
        move = observer.table.to_move(student.act(obs, mask), view) if students[seat] else label
        overruled += move != label
        game.apply(move)
        i += 1
    assert overruled > 0, "the student's seats played the student's moves"
    assert data["masks"][np.arange(len(data["actions"])), data["actions"]].all()


def test_any_registered_bot_can_be_copied():
    """The imitation bot is any agent spec of the registry, here the shipped bot."""
    from agents.training import collect_imitation_data

    config = TrainConfig(players="2", imitation_bot="default")
    data = collect_imitation_data(config, config.imitation_bot, 60, gamma=1.0, seed=0)
    assert data["masks"][np.arange(len(data["actions"])), data["actions"]].all()


def test_imitation_teaches_the_network_the_bots_moves():
    import torch
    from sb3_contrib import MaskablePPO

    from agents.training import collect_imitation_data, imitate
    from yaniv_env.gym_env import YanivGymEnv

    data = collect_imitation_data(TrainConfig(players="2"), "greedy", 1500, gamma=0.99, seed=1)
    model = MaskablePPO("MlpPolicy", YanivGymEnv(num_players=2), seed=0, device="cpu",
                        policy_kwargs={"net_arch": [64, 64]})

    def agreement() -> float:
        with torch.no_grad():
            obs, masks = torch.as_tensor(data["obs"]), torch.as_tensor(data["masks"])
            dist = model.policy.get_distribution(obs, action_masks=masks)
            return float((dist.distribution.probs.argmax(-1).numpy() == data["actions"]).mean())

    before = agreement()
    stats = imitate(model, data, epochs=12, batch_size=128, vf_coef=0.5, seed=0)
    assert agreement() > max(0.6, before + 0.3), (before, agreement())
    assert np.isfinite(stats["value_loss"]) and stats["policy_loss"] > 0


def test_a_run_with_imitation_records_it_once(tmp_path):
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=bc", *TINY,
                 "imitation_samples=300", "imitation_epochs=1", "imitation_bot=greedy", "imitation_rounds=2",
                 "imitation_batch_size=128", "imitation_schedule=cosine")
    assert done.returncode == 0, done.stderr
    assert "imitation of greedy (2 round(s))" in done.stdout
    state = json.loads((tmp_path / "bc" / "state.json").read_text())
    assert state["imitation"]["samples"] >= 600 and state["timesteps"] == 1024
    again = train("--resume", str(tmp_path / "bc"), "total_timesteps=1536")
    assert again.returncode == 0, again.stderr
    assert "imitation of" not in again.stdout, "a resumed run does not imitate again"


def test_the_cosine_schedule_falls_to_zero_over_the_passes_and_gives_the_rate_back():
    from sb3_contrib import MaskablePPO

    from agents.training import collect_imitation_data, imitate
    from yaniv_env.gym_env import YanivGymEnv

    data = collect_imitation_data(TrainConfig(players="2"), "greedy", 300, gamma=0.99, seed=1)
    model = MaskablePPO("MlpPolicy", YanivGymEnv(num_players=2), seed=0, device="cpu", learning_rate=1e-3,
                        policy_kwargs={"net_arch": [32, 32]})
    optimizer = model.policy.optimizer
    rates: list[float] = []
    optimizer.register_step_pre_hook(lambda opt, args, kwargs: rates.append(opt.param_groups[0]["lr"]))
    imitate(model, data, epochs=3, batch_size=64, vf_coef=0.5, seed=0, learning_rate=4e-3, schedule="cosine")
    steps = 3 * -(-len(data["actions"]) // 64)
    assert len(rates) == steps == 15
    # half a cosine wave from the given rate, step by step: 4e-3 at the first, 2e-3 at step 7.5 of 15
    assert rates == pytest.approx([2e-3 * (1 + math.cos(math.pi * k / steps)) for k in range(steps)])
    assert all(a > b for a, b in zip(rates, rates[1:])) and rates[-1] < 4e-3 * 0.02
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1e-3), "PPO gets its own rate back"


def test_the_linear_learning_rate_falls_to_zero_at_total_timesteps():
    from agents.training.model import new_model
    from yaniv_env.vector import YanivVecEnv

    config = TrainConfig(learning_rate=1e-3, learning_rate_schedule="linear", n_envs=4, n_steps=16, batch_size=64,
                         n_epochs=1, net_arch=[16, 16])
    model = new_model(config, YanivVecEnv(num_envs=4, opponents="random", seed=0))
    rates: list[float] = []
    model.policy.optimizer.register_step_pre_hook(lambda opt, args, kwargs: rates.append(opt.param_groups[0]["lr"]))
    model.learn(total_timesteps=4 * 64)
    # one update per rollout of 64 steps, at the rate of the steps left once it is collected (SB3's
    # progress): 3/4, 1/2, 1/4 and none of them
    assert rates == pytest.approx([1e-3 * left for left in (0.75, 0.5, 0.25, 0.0)])
    assert TrainConfig(learning_rate=1e-3).learning_rate_schedule == "constant"


def test_critic_arch_sizes_the_critic_alone_and_survives_the_towers_split_and_the_export():
    """The critic gets ``critic_arch``'s layers, the actor ``net_arch``'s; the split into towers
    keeps both shapes, and the export (the actor) is the one ``net_arch`` alone gives."""
    import dataclasses

    import torch

    from agents.policies.ppo import NumpyPolicy
    from agents.training.model import new_model, split_towers
    from yaniv_env.vector import YanivVecEnv

    def widths(net: torch.nn.Module) -> list[tuple[int, int]]:
        return [(m.in_features, m.out_features) for m in net.modules() if isinstance(m, torch.nn.Linear)]

    config = TrainConfig(n_envs=4, n_steps=16, batch_size=64, net_arch=[32, 32], critic_arch=[8], stakes_skip=True)
    model = new_model(config, YanivVecEnv(num_envs=4, opponents="random", seed=0))
    size = model.observation_space.shape[0]
    assert widths(model.policy.mlp_extractor.inner.policy_net) == [(size, 32), (32, 32)]
    assert widths(model.policy.mlp_extractor.inner.value_net) == [(size, 8)]
    assert (model.policy.value_net.in_features, model.policy.value_net.out_features) == (8, 1)
    plain = new_model(dataclasses.replace(config, critic_arch=[]), YanivVecEnv(num_envs=4, opponents="random", seed=0))
    assert widths(plain.policy.mlp_extractor.inner.value_net) == [(size, 32), (32, 32)]
    exported, exported_plain = NumpyPolicy.from_sb3(model), NumpyPolicy.from_sb3(plain)
    assert [w.shape for w in exported.weights] == [w.shape for w in exported_plain.weights]

    split_towers(model, "one_round")
    assert [widths(t.value_net) for t in model.policy.mlp_extractor.towers] == [[(size, 8)]] * 2
    model.learn(total_timesteps=64)  # the towers' critic trains at its own width
    for bad in ([0], [8] * 17, [5000]):
        with pytest.raises(ConfigError, match="critic_arch"):
            TrainConfig(critic_arch=bad)
    with pytest.raises(ConfigError, match="'critic_arch'"):
        load_config(None, ["backend=rllib", "critic_arch=[64]"])


def test_teacher_stream_records_the_compiled_bots_moves_and_round_returns():
    """The on-the-fly imitation data (``agents.training.teacher``): every action legal, the same
    observations and labels the Python teacher gives on the same positions, each decision's return
    the round reward that followed it, and the same chunks from the same seed."""
    from agents.registry import make_agent
    from agents.training.teacher import teacher_stream

    config = TrainConfig(players="2-3", round_reward="relative")
    chunk = next(teacher_stream(config, "heuristic:call_risk=0.1,score_weight=2", 1.0, seed=4, games=8, chunk=600))
    n = len(chunk["actions"])
    assert n > 300 and chunk["masks"][np.arange(n), chunk["actions"]].all(), "every recorded action is legal"
    again = next(teacher_stream(config, "heuristic:call_risk=0.1,score_weight=2", 1.0, seed=4, games=8, chunk=600))
    assert all(np.array_equal(chunk[k], again[k]) for k in chunk), "the same seed gives the same chunk"
    # Relative rewards are zero-sum per round: a round's returns (gamma 1) sum to zero over its seats.
    assert abs(chunk["returns"].mean()) < 0.2 and (chunk["returns"] > 0).any() and (chunk["returns"] < 0).any()
    # The labels are the Python heuristic's moves, the observations the reference's: one game side by side.
    from core_support import SideBySide

    from agents.training.teacher import HEURISTIC, _decide, compiled_teacher
    from yaniv import Game
    from yaniv.rules import PRESETS
    from yaniv_env.core import bots, observe

    teacher = make_agent("heuristic:call_risk=0.1,score_weight=2")
    kind, params, sparams = compiled_teacher("heuristic:call_risk=0.1,score_weight=2")
    assert kind == HEURISTIC
    game = Game(3, PRESETS["default"], seed=9)
    both = SideBySide(game, 9)
    observer = encoding.Observer(PRESETS["default"], 3)
    obs, mask = np.zeros((1, observer.size), np.float32), np.zeros((1, observer.table.size), np.int8)
    label, seat = np.zeros(1, np.int64), np.zeros(1, np.int64)
    for _ in range(60):
        if game.is_over:
            break
        _decide(both.row[None, :], both.r, np.zeros(1, np.uint64), np.ones(1, bool), kind, params, sparams, obs,
                mask, label, seat, np.zeros(bots.SCRATCH, np.int64), observe.scratch(),
                np.zeros(bots.ACTION_ROOM, np.int64))
        view = game.view(game.current)
        assert np.array_equal(obs[0], observer.observe(view))
        assert label[0] == observer.table.to_action(teacher.act(view), view)
        both.apply(int(label[0]))


def test_the_search_teaches_on_the_core_with_a_generator_of_its_own():
    """imitation_bot search[:N] plays on the core (expert iteration's teacher): its labels are the
    compiled search's moves at that budget, ranked with call_risk=CALL_RISK as in the tournament,
    drawn from a generator of its own (the game's deck never moves for it), legal, and the same for
    the same seed."""
    from agents.training.teacher import SEARCH, _decide, compiled_teacher, teacher_stream
    from yaniv.rules import PRESETS
    from yaniv_env.core import bots, engine, layout as L, observe, search

    kind, params, sparams = compiled_teacher("search:8")
    assert kind == SEARCH
    S = L.new_rows(1)
    L.write_rules(S[0], PRESETS["default"])
    R, A = np.array([engine.seed_rng(5)], np.uint64), np.array([engine.seed_rng(6)], np.uint64)
    engine.new_game(S[0], R, 2, 0, 0)
    size, actions = encoding.observation_size(5), encoding.action_table(5).size
    obs, mask = np.zeros((1, size), np.float32), np.zeros((1, actions), np.int8)
    label, seat, buf = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(bots.SCRATCH, np.int64)
    reference = (search.search_params(8), bots.heuristic_params(call_risk=search.CALL_RISK))
    overruled = 0
    for _ in range(300):
        row, mine, deck = S[0].copy(), A.copy(), R.copy()
        _decide(S, R, A, np.ones(1, bool), kind, params, sparams, obs, mask, label, seat, buf, observe.scratch(),
                np.zeros(bots.ACTION_ROOM, np.int64))
        assert label[0] == search.search_action(row, mine, *reference) and mask[0, label[0]]
        assert np.array_equal(R, deck) and np.array_equal(S[0], row), "the search reads the game, never moves it"
        overruled += label[0] != bots.heuristic_action(row, reference[1], buf)
        if engine.apply_action(S[0], R, label[0], buf) == engine.GAME_OVER:
            break
    assert overruled > 0, "the search's rollouts overrule its ranking heuristic somewhere"
    config = TrainConfig(players="2", rules="default")
    chunk = next(teacher_stream(config, "search:8", 1.0, seed=2, games=8, chunk=200))
    again = next(teacher_stream(config, "search:8", 1.0, seed=2, games=8, chunk=200))
    assert np.array_equal(chunk["actions"], again["actions"]) and np.array_equal(chunk["obs"], again["obs"])
    assert chunk["masks"][np.arange(len(chunk["actions"])), chunk["actions"]].all()
    with pytest.raises(ValueError, match="'default': the imitation data is made on the compiled core"):
        compiled_teacher("default")


def test_the_learners_tables_mix_single_rounds_into_games_by_round_share():
    from agents.training import OpponentPool, self_play_envs

    config = TrainConfig(players="2-3", episode="game", round_share=0.25, round_reward="relative", n_envs=64,
                         baselines=["heuristic"], baseline_fraction=1.0)
    _, vec_env = self_play_envs(config, OpponentPool(config))
    vec_env.seed(0)
    vec_env.reset()
    rng = np.random.default_rng(0)
    kinds = []
    for _ in range(300):
        masks = vec_env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, _, dones, _ = vec_env.step(actions)
        kinds += [bool(vec_env.final_rows[int(i)][L.SINGLE_ROUND]) for i in np.flatnonzero(dones)]
    # a round is over in about 10 learner steps, a game in about 200: most episodes that end are rounds
    assert vec_env.batch.round_share == 0.25 and 0 < sum(kinds) < len(kinds)


def test_the_learners_tables_run_on_the_core_and_meet_the_pools_snapshots(monkeypatch):
    """With compiled baselines the tables are one YanivVecEnv on the core; with a snapshot in the
    pool and baseline_fraction 0 every opponent seat is that snapshot, played through act_batch; a
    baseline without a compiled form (search) keeps the Python tables."""
    from agents.policies.ppo import NumpyPolicy
    from agents.training import OpponentPool, self_play_envs
    from agents.training.selfplay import CoreSelfPlayEnv
    from yaniv_env.vector import YanivVecEnv

    config = TrainConfig(players="2-3", n_envs=6, baselines=["heuristic:call_risk=0.1", "greedy"], baseline_fraction=0.0)
    pool = OpponentPool(config)
    size = encoding.observation_size(5)
    calls = []

    class Snapshot(NumpyPolicy):
        def act_batch(self, observations, masks, rng=None):
            calls.append(len(observations))
            return super().act_batch(observations, masks, rng)

    w = np.random.default_rng(0)
    pool.add(0, Snapshot([w.normal(size=(8, size)), w.normal(size=(189, 8))], [np.zeros(8), np.zeros(189)], "tanh"))
    envs, vec_env = self_play_envs(config, pool)
    assert isinstance(envs[0], CoreSelfPlayEnv) and isinstance(vec_env, YanivVecEnv)
    vec_env.seed(1)
    obs = vec_env.reset()
    assert obs.shape == (6, size)
    for _ in range(40):
        masks = vec_env.action_masks()
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        obs, rewards, dones, infos = vec_env.step(actions)
    assert calls and max(calls) > 1, "the snapshot plays its seats of several tables in one forward pass"
    assert envs[0].clock[0] > 0
    # the search and a saved policy play on the core too; a spec with no form there (a bot a user
    # registered) keeps every table on the Python engine
    from agents.training import selfplay

    searching = TrainConfig(n_envs=2, baselines=["search:4", "greedy"])
    assert selfplay.compiled_baselines(searching) == {"search:4": "search:4", "greedy": "greedy"}
    envs, vec_env = self_play_envs(searching, OpponentPool(searching))
    vec_env.seed(0)
    vec_env.reset()
    vec_env.step(np.array([np.flatnonzero(m)[0] for m in vec_env.action_masks()]))
    monkeypatch.setattr(selfplay, "core_controller", lambda spec: None if spec == "greedy" else spec)
    python_envs, python_vec = self_play_envs(searching, pool)
    assert not isinstance(python_vec, YanivVecEnv) and len(python_envs) == 2


def test_rule_sets_are_drawn_per_game_for_the_teacher_and_the_tables(monkeypatch):
    """rule_sets: the imitation stream and the learner's tables both play games under rules drawn
    from the list (the observation's settings segment differs between them), the same seed the same
    draws; a rule set the environments cannot play, or one of another hand size, is refused by name;
    a bot without a form on the core is refused rather than silently playing rules alone."""
    from agents.training import OpponentPool, self_play_envs
    from agents.training import selfplay
    from agents.training.imitation import imitation_stage
    from agents.training.teacher import teacher_stream

    sets = ["default", "default:yaniv_threshold=5,assaf_penalty=flat", "german:jokers=0"]
    config = TrainConfig(players="2-3", n_envs=4, baselines=["heuristic"], rule_sets=sets)
    settings = encoding.SETTINGS_FEATURES
    chunk = next(teacher_stream(config, "heuristic", 1.0, seed=1, games=16, chunk=2000))
    kinds = {tuple(row) for row in chunk["obs"][:, -settings:-(encoding.MAX_SEATS - 1)]}
    assert len(kinds) == 3, "every rule set is played"
    again = next(teacher_stream(config, "heuristic", 1.0, seed=1, games=16, chunk=2000))
    assert np.array_equal(chunk["obs"], again["obs"])
    envs, vec_env = self_play_envs(config, OpponentPool(config))
    vec_env.seed(0)
    vec_env.reset()
    seen = set()
    for _ in range(200):
        seen |= {(r.yaniv_threshold, r.jokers) for r in vec_env.get_attr("rules")}
        vec_env.step(np.array([np.flatnonzero(m)[0] for m in vec_env.action_masks()]))
    assert seen == {(7, 2), (5, 2), (7, 0)}
    for bad, words in ((["default:hand_size=6"], "hand size"), (["default:discarder_places_jokers=true"], "joker"),
                       (["default:jokers=many"], "whole number"), (["nosuch"], "nosuch")):
        with pytest.raises(ConfigError, match=words):
            TrainConfig(rule_sets=bad)
    monkeypatch.setattr(selfplay, "core_controller", lambda spec: None)
    with pytest.raises(ValueError, match="rule_sets: baseline 'heuristic' has no form on the compiled core"):
        self_play_envs(config, OpponentPool(config))
    with pytest.raises(ValueError, match="rule_sets: the imitation bot 'default' has no compiled form"):
        imitation_stage(TrainConfig(rule_sets=sets, imitation_bot="default", imitation_samples=10), model=None)


def test_env_threads_reach_the_core_tables_and_are_refused_without_the_core(monkeypatch):
    from agents.training import OpponentPool, self_play_envs
    from agents.training import selfplay

    config = TrainConfig(n_envs=4, baselines=["heuristic"], env_threads=2)
    _, vec_env = self_play_envs(config, OpponentPool(config))
    assert vec_env.batch.threads == 2
    monkeypatch.setattr(selfplay, "core_controller", lambda spec: None)
    with pytest.raises(ValueError, match="env_threads: baseline 'heuristic' has no form on the compiled core"):
        self_play_envs(config, OpponentPool(config))
    with pytest.raises(ConfigError, match="env_threads"):
        TrainConfig(env_threads=0)


def test_rule_space_draws_many_rule_sets_for_the_teacher_and_the_tables():
    """rule_space: house: the run's games pick from a sample of the space drawn once from the seed
    (the same seed, the same sample), and the imitation stream plays many of them; a space with
    rule_sets, or an unknown space, is refused by name."""
    from agents.training import OpponentPool, self_play_envs
    from agents.training.teacher import teacher_stream

    config = TrainConfig(players="2-3", n_envs=4, baselines=["heuristic"], rule_space="house")
    sample = config.training_rule_sets()
    assert sample == TrainConfig(rule_space="house").training_rule_sets()
    assert sample != TrainConfig(rule_space="house", seed=1).training_rule_sets()
    assert len(set(sample)) > 1000 * 0.99, "the space is large: a sample hardly repeats"
    settings = encoding.SETTINGS_FEATURES
    chunk = next(teacher_stream(config, "heuristic", 1.0, seed=1, games=16, chunk=2000))
    kinds = {tuple(row) for row in chunk["obs"][:, -settings:-(encoding.MAX_SEATS - 1)]}
    assert len(kinds) >= 10, "games under many rule sets"
    envs, vec_env = self_play_envs(config, OpponentPool(config))
    vec_env.seed(0)
    vec_env.reset()
    seen = set()
    for _ in range(100):
        seen |= set(vec_env.get_attr("rules"))
        vec_env.step(np.array([np.flatnonzero(m)[0] for m in vec_env.action_masks()]))
    assert len(seen) >= 10 and seen <= set(sample)
    for bad, words in (({"rule_space": "nosuch"}, "unknown rule space 'nosuch'"),
                       ({"rule_space": "house", "rule_sets": ["german"]}, "either rule_space or rule_sets")):
        with pytest.raises(ConfigError, match=words):
            TrainConfig(**bad)
