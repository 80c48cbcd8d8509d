"""benchmarks/information_value.py: its extra entries say what they claim, and the widened network
starts from the checkpoint's play (the diagnostic's arms are only comparable if both hold)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import information_value as iv  # noqa: E402

from yaniv.cards import NUM_CARDS  # noqa: E402
from yaniv_env.core import batch as B  # noqa: E402
from yaniv_env.core import layout as L  # noqa: E402


def play(arm: str, steps: int = 40, seed: int = 5):
    """Random legal play on the arm's wrapped env; yields (obs, rows, learner seats) at each step."""
    env = iv.wrapped_env(arm, seed)
    base = env.venv.observation_space.shape[0]
    obs = env.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield obs[:, base:], env.venv.batch.S, env.venv.batch.G[:, B.G_LEARNER]
        masks = env.action_masks()
        obs, _, _, _ = env.step((masks * rng.random(masks.shape)).argmax(axis=1))


def test_the_hand_and_total_entries_are_the_opponents():
    for extra, rows, seats in play("hand"):
        for k in range(len(rows)):
            other = 1 - seats[k]
            hand = rows[k, L.HAND + other * L.HAND_ROOM : L.HAND + other * L.HAND_ROOM + rows[k, L.HAND_LEN + other]]
            assert set(np.flatnonzero(extra[k])) == set(hand.tolist())
    for extra, rows, seats in play("total", steps=5):
        totals = rows[np.arange(len(rows)), L.TOTAL + 1 - seats]
        assert (extra.argmax(axis=1) == np.minimum(totals, NUM_CARDS - 1)).all()
        assert (extra.sum(axis=1) == NUM_CARDS - totals).all()


def test_the_posterior_entries_are_a_belief_over_the_unseen_and_the_known_cards():
    """Per card, the share of samples the opponent holds it in: it sums to its hand size, holds every
    card it was seen taking from the pile at 1, and never a card the learner holds or sees on the pile."""
    seen_known = False
    for extra, rows, seats in play("posterior", steps=30):
        for k in range(len(rows)):
            s, me = rows[k], seats[k]
            if s[L.PHASE] == L.PHASE_OVER:
                continue
            other = 1 - me
            assert extra[k].sum() == pytest.approx(s[L.HAND_LEN + other], abs=1e-4)
            mine = s[L.HAND + me * L.HAND_ROOM : L.HAND + me * L.HAND_ROOM + s[L.HAND_LEN + me]]
            dead = np.flatnonzero(s[L.DEAD : L.DEAD + NUM_CARDS] == 1)
            top = s[L.TOP : L.TOP + s[L.TOP_LEN]]
            assert not extra[k, mine].any() and not extra[k, top].any() and not extra[k, dead].any()
            known = np.flatnonzero(s[L.KNOWN : L.KNOWN + NUM_CARDS] == other)
            np.testing.assert_allclose(extra[k, known], 1.0, atol=1e-5)
            seen_known |= len(known) > 0
    assert seen_known


def test_the_memory_entries_follow_the_round():
    seen_pass = seen_draw = False
    for extra, rows, seats in play("memory", steps=60):
        for k in range(len(rows)):
            s, me = rows[k], seats[k]
            other = 1 - me
            thrown_by_other = set(np.flatnonzero(extra[k, :NUM_CARDS]))
            last = s[L.LAST_CARDS + other * L.GROUP_ROOM : L.LAST_CARDS + other * L.GROUP_ROOM + s[L.LAST_LEN + other]]
            assert set(last.tolist()) <= thrown_by_other  # its last discard of the round is among its throws
            passed = set(np.flatnonzero(extra[k, 2 * NUM_CARDS : 3 * NUM_CARDS]))
            assert passed <= set(np.flatnonzero(extra[k, NUM_CARDS : 2 * NUM_CARDS]))  # passed: cards I threw
            if s[L.LAST_HIGH + other] >= 0 and s[L.LAST_DREW + other] >= 0:
                assert s[L.LAST_DREW + other] not in passed  # the card it took from my discard was not passed up
            draws = extra[k, 3 * NUM_CARDS :]
            assert (np.diff(draws) <= 0).all()  # entries "draws > k" fall with k
            if s[L.TURN] == 0:
                assert not extra[k].any(), "a new round starts with an empty memory"
            seen_pass |= bool(passed)
            seen_draw |= bool(draws[0])
    assert seen_pass and seen_draw


def test_the_widened_network_plays_as_the_checkpoint(tmp_path):
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from agents.policies.stakes_torch import StakesSkipPolicy

    env = iv.wrapped_env("hand", 0)
    base_env = env.venv
    start = MaskablePPO(StakesSkipPolicy, base_env, n_steps=32, batch_size=1024, seed=0,
                        policy_kwargs={"net_arch": {"pi": [256, 256], "vf": [256, 256]}}, device="cpu")
    with torch.no_grad():
        start.policy.skip_weight.normal_()  # a skip that is not zero must come along too
    start.save(tmp_path / "start.zip")
    wide = iv.widened_model(tmp_path / "start.zip", env, base_env.observation_space.shape[0], 1e-4, 0)
    obs = env.reset()
    base = base_env.observation_space.shape[0]
    with torch.no_grad():
        a = start.policy.get_distribution(torch.as_tensor(obs[:, :base])).distribution.logits
        b = wide.policy.get_distribution(torch.as_tensor(obs)).distribution.logits
        va = start.policy.predict_values(torch.as_tensor(obs[:, :base]))
        vb = wide.policy.predict_values(torch.as_tensor(obs))
    assert obs[:, base:].any()  # the extra entries are live, and ignored
    assert torch.equal(wide.policy.skip_weight, start.policy.skip_weight)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("tower", [0, 1])
def test_the_widened_network_plays_as_the_checkpoints_tower(tmp_path, tower):
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from agents.policies.towers_torch import TowerSkipPolicy

    rules = "default:jokers=0,game_end=one_round" if tower == 1 else "default"  # the rows' route
    env = iv.wrapped_env("zeros", 0, rules=rules)
    base_env = env.venv
    start = MaskablePPO(TowerSkipPolicy, base_env, n_steps=32, batch_size=1024, seed=0,
                        policy_kwargs={"net_arch": {"pi": [64, 64], "vf": [64, 64]}}, device="cpu")
    with torch.no_grad():  # two towers unlike each other, and last layers unlike in each tower's part
        for p in start.policy.parameters():
            p.normal_(0.0, 0.1)
    start.save(tmp_path / "start.zip")
    base = base_env.observation_space.shape[0]
    wide = iv.widened_model(tmp_path / "start.zip", env, base, 1e-4, 0, tower=tower)
    obs = env.reset()
    with torch.no_grad():
        a = start.policy.get_distribution(torch.as_tensor(obs[:, :base])).distribution.logits
        b = wide.policy.get_distribution(torch.as_tensor(obs)).distribution.logits
        va = start.policy.predict_values(torch.as_tensor(obs[:, :base]))
        vb = wide.policy.predict_values(torch.as_tensor(obs))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tower", [0, 1])
def test_a_policy_files_actor_plays_as_the_file_and_the_warm_up_moves_only_the_critic(tmp_path, tower):
    torch = pytest.importorskip("torch")
    from expert_iteration import policy_from_onnx

    from agents.policies.ppo import NumpyPolicy

    ROOT = Path(__file__).resolve().parent.parent
    policy_from_onnx(ROOT / "agents" / "models" / "default").save(tmp_path / "start.npz")  # two towers, a skip
    policy = NumpyPolicy.load(tmp_path / "start.npz")
    rules = "default:jokers=0,game_end=one_round" if tower == 1 else "default"  # the rows' route
    env = iv.wrapped_env("zeros", 0, rules=rules)
    base = env.venv.observation_space.shape[0]
    model = iv.actor_model(tmp_path / "start.npz", env, base, 1e-4, 0, tower=tower)
    obs = env.reset()

    def logits():
        with torch.no_grad():
            return model.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()

    def values():
        with torch.no_grad():
            return model.policy.predict_values(torch.as_tensor(obs)).numpy()

    expected = policy.logits(obs[:, :base]).astype(np.float64)
    top = expected.max(axis=1, keepdims=True)
    expected -= top + np.log(np.exp(expected - top).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(logits(), expected, rtol=1e-4, atol=1e-4)  # the file's play, on its tower's rows
    before, critic = logits(), values()
    iv.warm_critic(model, 2 * 128 * 32)  # two rollouts of the 128 tables
    assert np.array_equal(logits(), before)  # the actor frozen
    assert not np.allclose(values(), critic)  # the critic learned
    assert all(p.requires_grad for p in model.policy.parameters())  # and the actor free again for PPO


def test_a_policy_file_of_another_shape_is_refused_by_name(tmp_path):
    from agents.policies.ppo import NumpyPolicy

    env = iv.wrapped_env("zeros", 0)
    base = env.venv.observation_space.shape[0]
    bare = NumpyPolicy([np.zeros((8, base), np.float32), np.zeros((189, 8), np.float32)],
                       [np.zeros(8, np.float32), np.zeros(189, np.float32)], "tanh")
    bare.save(tmp_path / "bare.npz")
    with pytest.raises(ValueError, match="no stakes skip"):
        iv.actor_model(tmp_path / "bare.npz", env, base, 1e-4, 0)
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="cannot read policy weights from .*bad.npz"):
        iv.actor_model(tmp_path / "bad.npz", env, base, 1e-4, 0)


class FirstLegal:
    """A stand-in model: the lowest legal action, as ``predict`` hands it."""

    def predict(self, obs, action_masks, deterministic):
        return action_masks.argmax(axis=1), None


@pytest.mark.parametrize("rules", ["default", "default:jokers=0,game_end=one_round"])
def test_the_margin_and_wins_are_the_envs_rewards(rules):
    rounds = 300
    mean, _, n, shares = iv.margin(FirstLegal(), "zeros", rounds, seed=3, rules=rules)
    env = iv.wrapped_env("zeros", 3, rules=rules)  # the same rounds again, read off the rewards
    obs, rewards_seen = env.reset(), []
    while len(rewards_seen) < rounds:
        obs, rewards, dones, _ = env.step(FirstLegal().predict(obs, env.action_masks(), True)[0])
        rewards_seen.extend(rewards[dones].tolist())
    assert n == rounds
    if rules == "default":  # paid the relative points: the margin over 50
        assert mean == pytest.approx(np.mean(rewards_seen[:rounds]) * B.ROUND_REWARD_SCALE, abs=1e-4)  # float32 rewards
    else:  # a game of one round pays its rank: +1 won
        assert shares["won"] == pytest.approx(np.mean(np.array(rewards_seen) > 0), abs=1e-12)


def test_the_exported_zeros_arm_plays_the_arms_moves(tmp_path):
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from agents.policies.ppo import NumpyPolicy
    from agents.policies.stakes_torch import StakesSkipPolicy

    env = iv.wrapped_env("zeros", 0)
    base = env.venv.observation_space.shape[0]
    start = MaskablePPO(StakesSkipPolicy, env.venv, n_steps=32, batch_size=1024, seed=0,
                        policy_kwargs={"net_arch": {"pi": [64, 64], "vf": [64, 64]}}, device="cpu")
    with torch.no_grad():
        for p in start.policy.parameters():
            p.normal_(0.0, 0.1)
    start.save(tmp_path / "start.zip")
    arm = iv.widened_model(tmp_path / "start.zip", env, base, 1e-4, 0)
    iv.export_policy(arm, base, "default", tmp_path / "arm.npz")
    policy = NumpyPolicy.load(tmp_path / "arm.npz")
    obs = env.reset()
    with torch.no_grad():
        expected = arm.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()
    got = policy.logits(obs[:, :base]).astype(np.float64)
    top = got.max(axis=1, keepdims=True)
    got -= top + np.log(np.exp(got - top).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)  # the distribution's logits are normalised
    with torch.no_grad():  # an extra column that moved: the file would not be the arm
        next(arm.policy.mlp_extractor.inner.policy_net.parameters())[0, base] = 0.5
    with pytest.raises(ValueError, match="only the zeros arm"):
        iv.export_policy(arm, base, "default", tmp_path / "bad.npz")


def test_the_house_share_draws_house_rules_of_the_same_game_end():
    from yaniv.rules import parse_rules

    rules = parse_rules("default:jokers=0,game_end=one_round")
    sets = iv.house_rule_sets(rules, 0.25, seed=1)
    assert len(sets) == 1024
    assert sum(r == rules for r in sets) >= 768  # the house sample may hold the row's rules themselves
    assert sum(r != rules for r in sets) > 200
    assert all(r.game_end == "one_round" for r in sets)
    env = iv.wrapped_env("zeros", 0, rules="default:jokers=0,game_end=one_round", house_share=0.25)
    assert env.venv.batch.rule_sets == iv.house_rule_sets(rules, 0.25, seed=0)  # what the tables draw from
