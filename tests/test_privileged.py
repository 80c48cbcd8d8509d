"""The privileged critic (agents.privileged, agents.privileged_policy): what it sees, that the
actor does not see it, and a run that uses it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.policies.ppo import NumpyPolicy
from agents.privileged import OPPONENT_FEATURES, privileged_features, privileged_size
from agents.training import OpponentPool, SelfPlayEnv, TrainConfig, new_model
from yaniv import Game
from yaniv.cards import NUM_CARDS, parse_cards
from yaniv.rules import PRESETS
from yaniv_env.encoding import Observer

from test_train import ROOT, TINY, resume_and_refuse_a_change, train


def test_the_features_are_each_opponents_hand_in_seat_order_then_the_next_deck_card():
    game = Game(3, seed=0)
    game.hands = [list(parse_cards("AS 2S")), list(parse_cards("KH QH JK1")), list(parse_cards("5C 5D 9S 3H"))]
    game.deck = list(parse_cards("7D 8C"))  # the engine draws from the end: 8C is next
    f = privileged_features(game, seat=1, num_players=4)  # tables of up to four: three opponent slots
    assert f.shape == (3 * 55 + 54,) == (privileged_size(4),)
    first, second, absent = (f[k * OPPONENT_FEATURES:(k + 1) * OPPONENT_FEATURES] for k in range(3))
    # Seat 1's first opponent is seat 2 (next to act after it), then seat 0; the fourth seat is absent.
    assert set(np.flatnonzero(first[:NUM_CARDS])) == set(parse_cards("5C 5D 9S 3H"))
    assert first[NUM_CARDS] == pytest.approx((5 + 5 + 9 + 3) / 70)
    assert set(np.flatnonzero(second[:NUM_CARDS])) == set(parse_cards("AS 2S"))
    assert second[NUM_CARDS] == pytest.approx(3 / 70)
    assert not absent.any()
    assert list(np.flatnonzero(f[3 * OPPONENT_FEATURES:])) == list(parse_cards("8C"))
    game.deck = []
    assert not privileged_features(game, 1, 4)[3 * OPPONENT_FEATURES:].any(), "an empty deck shows no next card"


def test_the_self_play_env_appends_the_hidden_cards_of_the_learners_table():
    config = TrainConfig(players="2-3", baselines=["greedy"], baseline_fraction=1.0, privileged_critic=True)
    env = SelfPlayEnv(config, OpponentPool(config), seed=3)
    public = env.tables[2].observation_space.shape[0]
    assert env.observation_space.shape == (public + privileged_size(3),)
    obs, _ = env.reset(seed=3)
    for _ in range(60):
        table = env.table
        assert obs.shape == env.observation_space.shape and env.observation_space.contains(obs)
        assert np.array_equal(obs[:public], table.aec.observer.observe(table.aec.game, table.seat))
        assert np.array_equal(obs[public:], privileged_features(table.aec.game, table.seat, 3))
        obs, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if terminated or truncated:
            obs, _ = env.reset()


def test_the_actor_ignores_the_hidden_cards_and_the_critic_reads_them():
    config = TrainConfig(players="2-4", n_envs=1, n_steps=64, batch_size=64, net_arch=[32, 32], privileged_critic=True)
    env = SelfPlayEnv(config, OpponentPool(config), seed=0)
    from stable_baselines3.common.vec_env import DummyVecEnv

    model = new_model(config, DummyVecEnv([lambda: env]))
    obs, _ = env.reset(seed=0)
    public = model.policy.public_size
    other = obs.copy()
    other[public:] = np.random.default_rng(0).random(len(obs) - public) < 0.3
    mask = env.action_masks()
    with torch.no_grad():
        batch = torch.as_tensor(np.stack([obs, other]))
        probs = model.policy.get_distribution(batch, action_masks=np.stack([mask, mask])).distribution.probs
        values = model.policy.predict_values(batch).flatten()
    assert torch.equal(probs[0], probs[1]), "the actor must not see the hidden cards"
    assert values[0] != values[1], "the critic must see them"
    # The exported actor takes the public observation alone and computes the same policy.
    exported = NumpyPolicy.from_sb3(model)
    assert exported.observation_size == public
    logits = exported.masked_logits(obs[:public], mask)
    np.testing.assert_allclose(torch.softmax(torch.as_tensor(logits, dtype=torch.float64), 0).numpy(),
                               probs[0].numpy(), rtol=1e-4, atol=1e-6)


def test_a_privileged_run_trains_exports_resumes_and_refuses_to_change_the_critic(tmp_path):
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=pc", *TINY,
                 "privileged_critic=true", "imitation_samples=300", "imitation_epochs=1", "imitation_bot=greedy")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "pc"
    public = Observer(PRESETS["default"], 3).size
    exported = NumpyPolicy.load(run / "policy.npz")
    assert exported.observation_size == public, "the exported actor plays from the public view"
    resume_and_refuse_a_change(run, "privileged_critic", "false")
