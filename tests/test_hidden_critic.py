"""The critic that reads the hidden cards (yaniv_env.core.hidden, critic_hidden in the vector env, the
teacher stream and the training policy): the block holds exactly what the seat cannot see, the actor
and every snapshot and export still read the observation alone, and a run trains and resumes with it."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from core_support import positions, tables
from test_train import ROOT, TINY, resume_and_refuse_a_change, train

from agents.policies.ppo import NumpyPolicy
from agents.training import OpponentPool, TrainConfig, new_model
from agents.training.config import load_config
from agents.training.selfplay import self_play_envs
from agents.training.teacher import teacher_stream
from yaniv.cards import NUM_CARDS
from yaniv.game import MAX_PLAYERS
from yaniv_env.core import layout as L
from yaniv_env.core.hidden import HIDDEN_SIZE, NEXT_CARD, hidden_games, observe_hidden
from yaniv_env.encoding import observation_size
from yaniv_env.vector import YanivVecEnv

N = observation_size(5)


def expected_hidden(game, seat: int) -> np.ndarray:
    """The block worked out from a Python ``Game``: the k-th seat after ``seat``'s hand, then the deck's next card."""
    out = np.zeros(HIDDEN_SIZE, dtype=np.float32)
    n = game.num_players
    for k in range(1, n):
        for card in game.hands[(seat + k) % n]:
            out[(k - 1) * NUM_CARDS + card] = 1.0
    if game.deck:
        out[NEXT_CARD + game.deck[-1]] = 1.0
    return out


@pytest.mark.parametrize("name, rules, players", [t for t in tables() if t[0] in ("default", "german", "one_joker_7")])
def test_the_block_is_the_other_hands_in_turn_order_then_the_next_card(name, rules, players):
    out = np.zeros(HIDDEN_SIZE, dtype=np.float32)
    for game in positions(rules, players, 60, seed=players):
        row = L.from_game(game)
        for seat in range(players):
            observe_hidden(row, seat, out)
            np.testing.assert_array_equal(out, expected_hidden(game, seat), err_msg=f"{name}, {players} seats, {seat}")
    assert HIDDEN_SIZE == MAX_PLAYERS * NUM_CARDS


def test_an_empty_deck_and_a_seat_out_of_cards_leave_their_blocks_zero():
    game = next(positions(*tables()[0][1:], 1, seed=0))
    row = L.from_game(game)
    row[L.DECK_LEN] = 0
    row[L.HAND_LEN + 1] = 0
    out = np.ones((1, HIDDEN_SIZE), dtype=np.float32)
    hidden_games(row[None, :], np.zeros(1, np.int64), np.zeros(1, np.int64), out)
    assert not out[0, :NUM_CARDS].any() and not out[0, NEXT_CARD:].any()


class Watcher:
    """A snapshot that records the width of what it is shown."""

    def __init__(self) -> None:
        self.widths: set[int] = set()

    def act_batch(self, observations, masks, rng):
        self.widths.add(observations.shape[1])
        return np.array([int(np.flatnonzero(m)[0]) for m in masks])


def test_the_vector_env_appends_the_block_to_the_learners_observations_only():
    snapshot = Watcher()
    kwargs = dict(num_envs=6, players="2-5", episode="game", round_share=0.5, seed=3,
                  opponents=["heuristic", snapshot, "greedy", snapshot, "heuristic", "random"])
    env, plain = YanivVecEnv(critic_hidden=True, **kwargs), YanivVecEnv(**kwargs)
    assert env.observation_space.shape == (N + HIDDEN_SIZE,) and plain.observation_space.shape == (N,)
    obs, base = env.reset(), plain.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        np.testing.assert_array_equal(obs[:, :N], base)
        for i in range(env.num_envs):
            row, seat = env.batch.S[i], int(env.batch.G[i, 1])
            want = np.zeros(HIDDEN_SIZE, dtype=np.float32)
            observe_hidden(row, seat, want)
            np.testing.assert_array_equal(obs[i, N:], want)
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        base, plain_rewards, plain_dones, plain_infos = plain.step(actions)
        np.testing.assert_array_equal(rewards, plain_rewards)
        for i in np.flatnonzero(dones):
            ended += 1
            final = infos[i]["terminal_observation"]
            assert final.shape == (N + HIDDEN_SIZE,)
            np.testing.assert_array_equal(final[:N], plain_infos[i]["terminal_observation"])
    assert ended > 5
    assert snapshot.widths == {N}
    with pytest.raises(ValueError, match="critic_hidden must be True or False"):
        YanivVecEnv(num_envs=1, critic_hidden="yes")


@pytest.fixture(scope="module")
def hidden_model():
    config = TrainConfig(players="2-4", n_envs=4, n_steps=64, batch_size=64, net_arch=[32, 32], stakes_skip=True,
                         critic_hidden=True, baselines=["greedy"])
    _, vec = self_play_envs(config, OpponentPool(config))
    return new_model(config, vec), vec


def test_the_actor_reads_the_observation_and_the_critic_the_hidden_cards_too(hidden_model):
    model, vec = hidden_model
    obs = vec.reset()
    masks = vec.action_masks()
    with torch.no_grad():
        model.policy.mlp_extractor.inner.critic.value_net[0].weight.normal_()  # make the hidden weights non-zero
    changed = obs.copy()
    changed[:, N:] = 1.0 - changed[:, N:]
    policy = model.policy
    with torch.no_grad():
        logits = [policy.get_distribution(torch.as_tensor(o), action_masks=masks).distribution.logits
                  for o in (obs, changed)]
        values = [policy.predict_values(torch.as_tensor(o)) for o in (obs, changed)]
    torch.testing.assert_close(logits[0], logits[1])
    assert not torch.allclose(values[0], values[1])
    exported = NumpyPolicy.from_sb3(model)
    assert exported.observation_size == N
    probs = torch.softmax(logits[0].double(), 1).numpy()
    mine = torch.softmax(torch.as_tensor(exported.masked_logits(obs[:, :N], masks), dtype=torch.float64), 1).numpy()
    np.testing.assert_allclose(mine, probs, rtol=1e-4, atol=1e-6)


def test_a_saved_model_keeps_its_hidden_critic(hidden_model, tmp_path):
    from sb3_contrib import MaskablePPO

    model, _ = hidden_model
    model.save(tmp_path / "m.zip")
    again = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert again.policy.hidden_size == HIDDEN_SIZE and again.policy.actor_size == N
    for a, b in zip(model.policy.state_dict().values(), again.policy.state_dict().values()):
        torch.testing.assert_close(a, b)


def test_the_teacher_stream_appends_the_block_to_the_same_decisions():
    config = TrainConfig(players="2-4", rules="default")
    plain = next(teacher_stream(config, "heuristic", 0.99, seed=5, games=16, chunk=512))
    hidden = next(teacher_stream(config, "heuristic", 0.99, seed=5, games=16, chunk=512, hidden=True))
    assert hidden["obs"].shape == (len(plain["obs"]), N + HIDDEN_SIZE)
    np.testing.assert_array_equal(hidden["obs"][:, :N], plain["obs"])
    for key in ("masks", "actions", "returns"):
        np.testing.assert_array_equal(hidden[key], plain[key])
    blocks = hidden["obs"][:, N:]
    assert blocks[:, :NUM_CARDS].sum(1).min() >= 1  # the next seat always holds cards at a decision
    assert set(np.unique(blocks)) <= {0.0, 1.0}


def test_a_broken_hidden_critic_config_is_refused_by_name():
    with pytest.raises(ValueError, match="critic_hidden"):
        load_config(None, ["critic_hidden=true", "stakes_skip=false"])
    with pytest.raises(ValueError, match="critic_hidden"):
        load_config(None, ["critic_hidden=maybe"])
    with pytest.raises(ValueError, match="critic_hidden"):
        load_config(None, ["backend=rllib", "critic_hidden=true", "stakes_skip=false"])


def test_a_run_with_the_hidden_critic_trains_exports_and_resumes(tmp_path):
    done = train("--config", str(ROOT / "configs" / "quick.yaml"), f"runs_dir={tmp_path}", "name=hc", *TINY,
                 "stakes_skip=true", "critic_hidden=true", "imitation_samples=300", "imitation_epochs=1",
                 "imitation_bot=greedy")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "hc"
    assert NumpyPolicy.load(run / "policy.npz").observation_size == N
    assert NumpyPolicy.load(run / "imitation.npz").observation_size == N
    resume_and_refuse_a_change(run, "critic_hidden", "false")
