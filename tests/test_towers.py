"""The towers (agents.policies.towers, towers_torch): which rows each tower plays, that a row's loss moves only its
own tower, that the numpy and ONNX forms pick what torch picks, the split of a one-tower network, what a config
and a weights file may say about them, a run that trains, exports and resumes with them, and one whose network
splits into them part way (towers_from), in one run or on --resume."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_train import ROOT, TINY, resume_and_refuse_a_change, train

from agents.policies.ppo import NumpyPolicy
from agents.policies.towers import route_index
from agents.policies.towers_torch import copy_tower
from agents.training import OpponentPool, SelfPlayEnv, TrainConfig, new_model
from agents.training.config import ConfigError, refuse_changes_on_resume
from agents.training.model import TowerRamps, has_towers, reschedule, split_towers
from yaniv.game import Game
from yaniv.rules import get_rules
from yaniv_env.encoding import Observer


def make_model(**keys):
    from stable_baselines3.common.vec_env import DummyVecEnv

    config = TrainConfig(players="2-4", n_envs=1, n_steps=64, batch_size=64, net_arch=[16, 16], stakes_skip=True,
                         baselines=["greedy"], **keys)
    env = SelfPlayEnv(config, OpponentPool(config), seed=0)
    return new_model(config, DummyVecEnv([lambda: env])), env


@pytest.fixture(scope="module")
def towers():
    model, env = make_model(towers="one_round")
    with torch.no_grad():  # the towers apart, and the skip on, so that every part shows in the logits
        for p in model.policy.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    return model, env


def batch(env, route: int, rows: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations of real positions, the route entry cleared on the first half of the rows and set on the rest."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    observations = np.repeat(obs[None], rows, axis=0) * (rng.random((rows, len(obs))) < 0.9)
    observations[: rows // 2, route], observations[rows // 2 :, route] = 0.0, 1.0
    return observations.astype(np.float32), np.repeat(env.action_masks()[None], rows, axis=0)


def test_the_route_is_the_one_round_setting_of_the_observation():
    for rules, players in ((get_rules("default"), 2), (get_rules("german").replace(game_end="one_round"), 5)):
        observer = Observer(rules, players)
        view_size = observer.size
        index = route_index(view_size, "one_round")
        game = Game(players, rules, seed=1)
        assert observer.observe(game.view(0))[index] == float(rules.one_round)
    with pytest.raises(ValueError, match="towers route on one of one_round, not 'jokers'"):
        route_index(view_size, "jokers")
    with pytest.raises(ValueError, match="no observation layout has 99 entries"):
        route_index(99, "one_round")


def test_each_row_plays_its_own_tower_in_torch_numpy_and_onnx(towers, tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    from agents.policies.export import export_policy

    model, env = towers
    exported = NumpyPolicy.from_sb3(model)
    observations, masks = batch(env, exported.route_index)
    with torch.no_grad():
        probs = model.policy.get_distribution(torch.as_tensor(observations), action_masks=masks).distribution.probs
    logits = exported.masked_logits(observations, masks)
    np.testing.assert_allclose(torch.softmax(torch.as_tensor(logits, dtype=torch.float64), 1).numpy(), probs.numpy(),
                               rtol=1e-4, atol=1e-6)
    # Each tower alone, as a one-tower policy with the same skip: the rows of its half, and only those.
    skip = (exported.skip_index, exported.skip_weight)
    alone = [NumpyPolicy([w.T for w in exported.weights], exported.biases, exported.activation, skip=skip),
             NumpyPolicy([w.T for w in exported.tower_weights], exported.tower_biases, exported.activation, skip=skip)]
    half = len(observations) // 2
    np.testing.assert_allclose(logits[:half], alone[0].masked_logits(observations[:half], masks[:half]), atol=1e-5)
    np.testing.assert_allclose(logits[half:], alone[1].masked_logits(observations[half:], masks[half:]), atol=1e-5)
    assert not np.allclose(alone[0].logits(observations[half:]), alone[1].logits(observations[half:]), atol=1e-3)
    np.testing.assert_allclose(exported.logits(observations[half]), exported.logits(observations)[half], atol=1e-5)
    # Saved and loaded, then exported: the same logits.
    exported.save(tmp_path / "policy.npz")
    again = NumpyPolicy.load(tmp_path / "policy.npz")
    assert (again.route_feature, again.route_index) == ("one_round", exported.route_index)
    np.testing.assert_array_equal(again.masked_logits(observations, masks), logits)
    out = export_policy(again, tmp_path / "bot")
    session = onnxruntime.InferenceSession(str(out / "model.onnx"))
    onnx_logits, action = session.run(None, {"observation": observations, "action_mask": masks})
    np.testing.assert_allclose(onnx_logits, logits, rtol=1e-5, atol=1e-4)
    assert list(action) == [int(np.argmax(row)) for row in logits]
    meta = json.loads((out / "bot.json").read_text())["network"]["towers"]
    assert (meta["route"], meta["index"]) == ("one_round", exported.route_index)


def test_a_rows_loss_moves_only_its_own_towers_weights(towers):
    model, env = towers
    policy = model.policy
    observations, masks = batch(env, NumpyPolicy.from_sb3(model).route_index)
    for rows, mine in ((slice(0, 4), 0), (slice(4, 8), 1)):
        policy.zero_grad()
        obs = torch.as_tensor(observations[rows])
        actions = torch.as_tensor(np.argmax(masks[rows], axis=1))
        values, log_prob, _ = policy.evaluate_actions(obs, actions, action_masks=masks[rows])
        (values.sum() - log_prob.sum()).backward()
        for k, tower in enumerate(policy.mlp_extractor.towers):
            grads = [p.grad for p in tower.parameters()]
            moved = any(g is not None and g.abs().sum() > 0 for g in grads)
            assert moved == (k == mine), f"rows of tower {mine}: tower {k} {'moved' if moved else 'did not move'}"
        width = policy.mlp_extractor.towers[0].latent_dim_pi + 1
        other = slice((1 - mine) * width, (1 - mine) * width + width)
        assert policy.action_net.weight.grad[:, other].abs().sum() == 0
        assert policy.value_net.weight.grad[:, other].abs().sum() == 0
        assert policy.action_net.bias.grad is None and policy.value_net.bias.grad is None  # shared: frozen


def test_a_one_tower_network_split_in_two_plays_as_before_on_every_row():
    plain, env = make_model()
    split, _ = make_model(towers="one_round")
    with torch.no_grad():
        for p in plain.policy.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    copy_tower(split.policy, plain.policy)
    observations, masks = batch(env, route_index(env.observation_space.shape[0], "one_round"))
    obs = torch.as_tensor(observations)
    with torch.no_grad():
        a, b = plain.policy, split.policy
        np.testing.assert_allclose(a.predict_values(obs).numpy(), b.predict_values(obs).numpy(), atol=1e-5)
        np.testing.assert_allclose(a.get_distribution(obs, action_masks=masks).distribution.probs.numpy(),
                                   b.get_distribution(obs, action_masks=masks).distribution.probs.numpy(), atol=1e-6)


def test_a_model_split_into_towers_plays_as_before_and_saves_and_loads_as_towers(tmp_path):
    from sb3_contrib import MaskablePPO

    model, env = make_model()
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    observations, masks = batch(env, route_index(env.observation_space.shape[0], "one_round"))
    obs = torch.as_tensor(observations)

    def outputs(policy):
        with torch.no_grad():
            return (policy.predict_values(obs).numpy(),
                    policy.get_distribution(obs, action_masks=masks).distribution.probs.numpy())

    before = outputs(model.policy)
    assert not has_towers(model)
    split_towers(model, "one_round")
    assert has_towers(model) and model.policy.route_feature == "one_round"
    for was, now in zip(before, outputs(model.policy)):
        np.testing.assert_allclose(was, now, atol=1e-5)
    assert {id(p) for g in model.policy.optimizer.param_groups for p in g["params"]} == \
        {id(p) for p in model.policy.parameters()}
    model.save(tmp_path / "split.zip")
    loaded = MaskablePPO.load(tmp_path / "split.zip", device="cpu")
    assert has_towers(loaded)
    for was, now in zip(before, outputs(loaded.policy)):
        np.testing.assert_allclose(was, now, atol=1e-5)
    with pytest.raises(ValueError, match="towers split a stakes-skip network, and this model's is TowerSkipPolicy"):
        split_towers(model, "one_round")


def test_towers_from_gates_the_one_round_games_and_may_change_until_the_split():
    keys = dict(stakes_skip=True, towers="one_round", rule_space="house", one_round_share=0.25,
                total_timesteps=2000)
    config = TrainConfig(towers_from=1000, **keys)
    assert not any(r.one_round for r in config.training_rule_sets(999))
    assert sum(r.one_round for r in config.training_rule_sets(1000)) == 256
    assert config.training_rule_sets(1000) == TrainConfig(**keys).training_rule_sets(0)
    with pytest.raises(ValueError, match="towers_from.*0 without towers"):
        TrainConfig(towers_from=1000, total_timesteps=2000)
    with pytest.raises(ValueError, match="towers_from.*before total_timesteps"):
        TrainConfig(towers_from=2000, **keys)
    plain = TrainConfig(stakes_skip=True, total_timesteps=2000)
    refuse_changes_on_resume(plain, config, step=1500)  # a one-network run splits on resume
    refuse_changes_on_resume(config, TrainConfig(towers_from=1500, **keys), step=999)  # not split yet
    with pytest.raises(ConfigError, match="'towers_from' cannot change on --resume"):
        refuse_changes_on_resume(config, TrainConfig(towers_from=1500, **keys), step=1000)
    with pytest.raises(ConfigError, match="'towers' cannot change on --resume"):
        refuse_changes_on_resume(TrainConfig(**keys), plain, step=0)  # towers from the start
    ramps = dict(keys, towers_from=1000, learning_rate_schedule="linear")
    refuse_changes_on_resume(TrainConfig(**ramps, towers_learning_rate=1e-4),
                             TrainConfig(**ramps, towers_learning_rate=2e-4), step=999)  # the ramp starts at 1,000
    with pytest.raises(ConfigError, match="'towers_learning_rate' cannot change on --resume.*ramp starts"):
        refuse_changes_on_resume(TrainConfig(**ramps, towers_learning_rate=1e-4),
                                 TrainConfig(**ramps, towers_learning_rate=2e-4), step=1000)


def test_towers_players_seat_the_tables_from_the_split_on_and_a_resumed_runs_tables_at_once():
    from agents.training import self_play_envs

    keys = dict(stakes_skip=True, towers="one_round", rule_space="house", total_timesteps=2000, players="2-6",
                baselines=["heuristic"])
    config = TrainConfig(towers_from=1000, towers_players="2", **keys)
    assert config.training_players(999) == "2-6" and config.training_players(1000) == "2"
    assert TrainConfig(towers_from=1000, **keys).training_players(1000) == "2-6"  # empty: players all along
    for step, counts in ((0, (2, 3, 4, 5, 6)), (1000, (2,))):  # a run resumed past the split seats two at once
        _, vec_env = self_play_envs(config, OpponentPool(config), step)
        assert vec_env.batch.counts == counts
    for bad, words in ((dict(towers_from=1000, towers_players="1"), "towers_players.*a count 2..8"),
                       (dict(towers_from=1000, towers_players="4-2"), "towers_players.*a count 2..8"),
                       (dict(towers_players="2"), "towers_players.*unless towers_from is set")):
        with pytest.raises(ValueError, match=words):
            TrainConfig(**{**keys, **bad})


def test_towers_baselines_are_the_pools_opponents_from_the_split_on_and_a_resumed_runs_at_once():
    from agents.training import self_play_envs

    keys = dict(stakes_skip=True, towers="one_round", rule_space="house", total_timesteps=2000, players="2",
                baselines=["heuristic"])
    config = TrainConfig(towers_from=1000, towers_baselines=["greedy", "heuristic:call_risk=1"], **keys)
    assert config.training_baselines(999) == ["heuristic"]
    assert config.training_baselines(1000) == ["greedy", "heuristic:call_risk=1"]
    assert TrainConfig(towers_from=1000, **keys).training_baselines(1000) == ["heuristic"]  # empty: baselines all along
    for step, baselines in ((0, ["heuristic"]), (1000, ["greedy", "heuristic:call_risk=1"])):
        pool = OpponentPool(config)
        _, vec_env = self_play_envs(config, pool, step)  # a run resumed past the split draws the new ones at once
        assert pool.baselines == baselines
        rng = np.random.default_rng(0)
        assert {pool.draw(rng)[1] for _ in range(64)} == set(baselines)
        vec_env.seed(0)
        vec_env.reset()  # every table deals, its seats drawn from the pool: each drawn bot has its controller
    for bad, words in ((dict(towers_baselines=["greedy"]), "towers_baselines.*unless towers_from is set"),
                       (dict(towers_from=1000, towers_baselines=["nobody"]), "towers_baselines")):
        with pytest.raises(ValueError, match=words):
            TrainConfig(**{**keys, **bad})


def test_tower_ramps_anneal_the_one_network_by_the_split_then_the_towers_by_the_end(tmp_path):
    from sb3_contrib import MaskablePPO

    ramps = TowerRamps(3e-4, 1e-4, towers_from=28, total=35)
    at = {step: ramps(1 - step / 35) for step in (0, 14, 27.999, 28, 31.5, 35)}
    assert at[0] == pytest.approx(3e-4) and at[14] == pytest.approx(1.5e-4) and at[27.999] < 1e-7
    assert at[28] == pytest.approx(1e-4) and at[31.5] == pytest.approx(5e-5) and at[35] == 0.0
    model, _ = make_model(towers="one_round", towers_from=28, total_timesteps=35, learning_rate_schedule="linear",
                          towers_learning_rate=1e-4)
    assert isinstance(model.learning_rate, TowerRamps) and model.lr_schedule(1 - 28 / 35) == pytest.approx(1e-4)
    model.save(tmp_path / "ramps.zip")
    loaded = MaskablePPO.load(tmp_path / "ramps.zip", device="cpu")
    resumed = TrainConfig(stakes_skip=True, towers="one_round", towers_from=28, total_timesteps=70,
                          learning_rate_schedule="linear", towers_learning_rate=1e-4)
    reschedule(loaded, resumed)  # a resume with twice the steps: the towers' ramp stretches, the split stays at 28
    assert loaded.lr_schedule(1 - 28 / 70) == pytest.approx(1e-4) and loaded.lr_schedule(1 - 49 / 70) == pytest.approx(5e-5)
    for keys, words in ((dict(towers_learning_rate=1e-4), "towers_learning_rate.*0 unless towers_from"),
                        (dict(towers_learning_rate=1e-4, towers="one_round", towers_from=10, total_timesteps=20),
                         "towers_learning_rate.*learning_rate_schedule is linear"),
                        (dict(towers_learning_rate=2.0), "towers_learning_rate.*from 0 to 1")):
        with pytest.raises(ValueError, match=words):
            TrainConfig(stakes_skip=True, **keys)


def test_a_config_names_what_is_wrong_with_its_towers():
    with pytest.raises(ValueError, match="towers"):
        TrainConfig(towers="jokers", stakes_skip=True)
    with pytest.raises(ValueError, match="towers need stakes_skip"):
        TrainConfig(towers="one_round")
    with pytest.raises(ValueError, match="one_round_share"):
        TrainConfig(one_round_share=0.5)
    with pytest.raises(ValueError, match="one_round_share"):
        TrainConfig(one_round_share=1.5, rule_space="house")
    sets = TrainConfig(rule_space="house", one_round_share=0.25).training_rule_sets()
    plain = TrainConfig(rule_space="house").training_rule_sets()
    assert [r.one_round for r in sets] == [i < 256 for i in range(1024)]
    assert [r.replace(game_end="elimination") for r in sets] == [r.replace(game_end="elimination") for r in plain]


def test_a_weights_file_with_half_a_tower_is_refused_by_name(towers, tmp_path):
    model, _ = towers
    exported = NumpyPolicy.from_sb3(model)
    exported.save(tmp_path / "policy.npz")
    with np.load(tmp_path / "policy.npz") as data:
        arrays = {name: data[name] for name in data.files}
    without = {k: v for k, v in arrays.items() if k != "tower1_w1"}
    np.savez(tmp_path / "missing.npz", **without)
    with pytest.raises(ValueError, match="missing.npz.*tower1_w1"):
        NumpyPolicy.load(tmp_path / "missing.npz")
    meta = json.loads(str(arrays["meta"]))
    del meta["tower_route"]
    np.savez(tmp_path / "unrouted.npz", **(arrays | {"meta": np.array(json.dumps(meta))}))
    with pytest.raises(ValueError, match="arrays this version does not know: tower1_b0"):
        NumpyPolicy.load(tmp_path / "unrouted.npz")
    meta["tower_route"] = "jokers"
    np.savez(tmp_path / "jokers.npz", **(arrays | {"meta": np.array(json.dumps(meta))}))
    with pytest.raises(ValueError, match="jokers.npz.*not 'jokers'"):
        NumpyPolicy.load(tmp_path / "jokers.npz")
    bad = dict(arrays)
    bad["tower1_w0"] = bad["tower1_w0"][:, :-1]
    np.savez(tmp_path / "shape.npz", **bad)
    with pytest.raises(ValueError, match="shape.npz.*tower 1"):
        NumpyPolicy.load(tmp_path / "shape.npz")


def test_a_run_with_towers_trains_exports_resumes_and_refuses_to_drop_them(tmp_path):
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=tw", *TINY,
                 "stakes_skip=true", "towers=one_round", "rule_space=house", "one_round_share=0.5",
                 "imitation_samples=300", "imitation_epochs=1", "imitation_bot=greedy")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "tw"
    assert NumpyPolicy.load(run / "policy.npz").route_feature == "one_round"
    assert all(NumpyPolicy.load(p).route_feature == "one_round" for p in (run / "pool").glob("*.npz"))
    resume_and_refuse_a_change(run, "towers", "''")


def test_rllibs_one_actor_refuses_a_policy_with_towers(towers):
    pytest.importorskip("ray")
    from agents.training.rllib.module import module_state

    with pytest.raises(ValueError, match="towers \\(on one_round\\); the module has one actor"):
        module_state(NumpyPolicy.from_sb3(towers[0]), {})


def test_a_run_splits_into_towers_at_towers_from_and_a_trained_run_on_resume(tmp_path):
    from sb3_contrib import MaskablePPO

    keys = [*TINY, "stakes_skip=true", "rule_space=house", "imitation_samples=0", "total_timesteps=1536",
            "pool_size=8", "final_policy=last"]
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=late", *keys,
                 "towers=one_round", "towers_from=600", "one_round_share=0.5", "towers_players=2",
                 "towers_baselines=[greedy]", "towers_rule_sets=['default:jokers=0,game_end=one_round']",
                 "towers_rule_sets_share=0.5")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "late"
    assert "the network split into two towers (one_round); the tables seat 2, against greedy from here" in done.stdout
    assert json.loads((run / "state.json").read_text())["towers_split_at"] == 1024  # the first rollout end past 600
    routes = {p.name: NumpyPolicy.load(p).route_feature for p in (run / "pool").glob("*.npz")}
    assert routes == {f"snapshot_{step:09d}.npz": None if step <= 1024 else "one_round"  # 1,024: before the split
                      for step in range(256, 1537, 256)}
    assert NumpyPolicy.load(run / "policy.npz").route_feature == "one_round"
    refused = train("--resume", str(run), "total_timesteps=2048", "towers_from=1500")
    assert refused.returncode == 2 and "towers_from" in refused.stderr

    plain = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=plain", *keys,
                  "learning_rate_schedule=linear")
    assert plain.returncode == 0, plain.stderr
    split = train("--resume", str(tmp_path / "plain"), "total_timesteps=2048", "towers=one_round",
                  "towers_from=1536", "one_round_share=0.5", "towers_learning_rate=1e-4")
    assert split.returncode == 0, split.stderr
    ramps = MaskablePPO.load(tmp_path / "plain" / "checkpoints" / "latest.zip", device="cpu").learning_rate
    assert (ramps.towers_rate, ramps.towers_from, ramps.total) == (1e-4, 1536, 2048)  # set on the resume
    assert json.loads((tmp_path / "plain" / "state.json").read_text())["towers_split_at"] == 1536
    assert NumpyPolicy.load(tmp_path / "plain" / "policy.npz").route_feature == "one_round"


def test_towers_rule_sets_take_their_share_of_the_stages_games_from_the_split_on():
    from yaniv.rules import parse_rules

    nj = "default:jokers=0,game_end=one_round"
    keys = dict(stakes_skip=True, towers="one_round", rule_space="house", one_round_share=1.0, total_timesteps=2000,
                towers_from=1000)
    config = TrainConfig(towers_rule_sets=[nj, "french:game_end=one_round"], towers_rule_sets_share=0.5, **keys)
    plain = TrainConfig(**keys)
    before, after = config.training_rule_sets(999), config.training_rule_sets(1000)
    assert before == plain.training_rule_sets(999)  # nothing changes before the split
    assert after[:512] == [parse_rules(nj), parse_rules("french:game_end=one_round")] * 256  # each as often
    assert after[512:] == plain.training_rule_sets(1000)[512:]  # the rest: the space's sets, as without them
    for bad, words in ((dict(towers_rule_sets=[nj]), "towers_rule_sets_share.*above 0 with towers_rule_sets"),
                       (dict(towers_rule_sets_share=0.5), "towers_rule_sets_share.*0 without"),
                       (dict(towers_rule_sets=[nj], towers_rule_sets_share=1.5), "towers_rule_sets_share.*0 to 1"),
                       (dict(towers_rule_sets=["default:jokers=9"], towers_rule_sets_share=0.5), "towers_rule_sets.*jokers"),
                       (dict(towers_rule_sets=["default:hand_size=7"], towers_rule_sets_share=0.5),
                        "towers_rule_sets.*hand size")):
        with pytest.raises(ValueError, match=words):
            TrainConfig(**{**keys, **bad})
    with pytest.raises(ValueError, match="towers_rule_sets.*unless towers_from and rule_space"):
        TrainConfig(stakes_skip=True, towers="one_round", total_timesteps=2000, towers_from=1000,
                    rule_sets=["default"], towers_rule_sets=[nj], towers_rule_sets_share=0.5)
