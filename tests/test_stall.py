"""The stall rule (agents.policies.stall): past 100 turns of a round a trained policy calls Yaniv
when it may and else draws no pile card while another move is legal, in every player of a policy
(numpy, the exported ONNX graph, the ONNX player), and it ends the rounds that a pile-swapping
policy, or one that never calls, would otherwise play to the cap."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from agents.policies import stall
from agents.policies.export import export_policy
from agents.policies.onnx import ExportedPolicy
from agents.policies.ppo import NumpyPolicy
from agents.tournament import run_tournament
from yaniv_env.encoding import DRAW_SOURCES, SELF, action_table, observation_layout, observation_size

HAND = 5
N_OBS, N_ACT = observation_size(HAND), action_table(HAND).size


def turn_column() -> int:
    at = 0
    for name, size in observation_layout(HAND):
        if name == "self":
            return at + SELF.turn
        at += size
    raise AssertionError("no self segment")


def random_policy(seed: int) -> NumpyPolicy:
    rng = np.random.default_rng(seed)
    return NumpyPolicy([rng.normal(size=(32, N_OBS)), rng.normal(size=(N_ACT, 32))], [np.zeros(32), np.zeros(N_ACT)],
                       "tanh", {"rules": "default"})


def pile_swapper() -> NumpyPolicy:
    """A policy that calls Yaniv whenever it may, else draws the pile's card above all: heads-up, two
    of them pass the same cards back and forth and their totals never fall far enough to call."""
    bias = np.zeros(N_ACT)
    ids = np.arange(action_table(HAND).num_discard_actions)
    # Pile draws first; among discards the larger slot masks, which throw the higher cards.
    bias[ids] = np.where(ids % DRAW_SOURCES == 0, -5.0, 5.0) + (ids // DRAW_SOURCES) * 0.01
    bias[action_table(HAND).yaniv] = 50.0
    return NumpyPolicy([np.zeros((N_ACT, N_OBS))], [bias], "tanh", {"rules": "default"})


def never_caller() -> NumpyPolicy:
    """A policy that never calls Yaniv while another move is legal (as one that fears every Assaf):
    it draws from the deck, so the pile part of the rule leaves it as it is, and it throws the
    larger slot masks (sets and runs when it has them), so its hand shrinks and the call comes."""
    bias = np.zeros(N_ACT)
    ids = np.arange(action_table(HAND).num_discard_actions)
    bias[ids] = np.where(ids % DRAW_SOURCES == 0, 5.0, -5.0) + (ids // DRAW_SOURCES) * 0.01
    bias[action_table(HAND).yaniv] = -50.0
    return NumpyPolicy([np.zeros((N_ACT, N_OBS))], [bias], "tanh", {"rules": "default"})


def test_the_rule_removes_only_pile_draws_of_stalled_rows_and_never_empties_a_row():
    rng = np.random.default_rng(0)
    obs = rng.random((400, N_OBS)).astype(np.float32)
    obs[:200, turn_column()] = 1.0
    obs[200:, turn_column()] = 0.99
    masks = rng.random((400, N_ACT)) < 0.1
    masks[:, action_table(HAND).yaniv] = False  # the call: the test below
    masks[:10] = False
    masks[:10, 3] = True  # a pile draw alone: kept
    out = stall.stall_masks(obs, masks)
    pile = stall.stall_columns(N_OBS)[1]
    assert not (out & ~masks).any(), "it never adds a move"
    assert out.any(axis=1).all() and np.array_equal(out[:10], masks[:10])
    assert np.array_equal(out[200:], masks[200:]), "rounds under 100 turns are left alone"
    other = (masks[:200] & ~pile).any(axis=1)
    assert np.array_equal(out[:200][other], (masks[:200] & ~pile)[other]), "stalled: every pile draw goes"
    assert np.array_equal(out[:200][~other], masks[:200][~other]), "unless nothing else is legal"
    assert (out != masks).any(axis=1)[:200].sum() > 150
    assert np.array_equal(stall.stall_masks(obs[5], masks[5]), out[5]), "one row as a batch"
    assert stall.stall_columns(123) is None and np.array_equal(stall.stall_masks(obs[:, :123], masks), masks)


def test_numpy_onnx_graph_and_exported_player_apply_it_alike(tmp_path):
    policy = random_policy(1)
    export_policy(policy, tmp_path)
    exported = ExportedPolicy(tmp_path)
    session = ort.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(2)
    obs = rng.random((300, N_OBS)).astype(np.float32)
    obs[:150, turn_column()] = 1.0
    masks = rng.random((300, N_ACT)) < 0.2
    masks[:, 0] = True
    wanted = policy.act_batch(obs, masks)
    logits, actions = session.run(None, {"observation": obs, "action_mask": masks})
    assert np.array_equal(actions, wanted) and np.array_equal(exported.act_batch(obs, masks), wanted)
    assert np.array_equal(np.isfinite(logits), stall.stall_masks(obs, masks))
    assert [policy.act(o, m) for o, m in zip(obs[:20], masks[:20])] == list(wanted[:20])
    pile = stall.stall_columns(N_OBS)[1]
    assert not pile[wanted[:150]].any(), "stalled rows with a deck draw legal never draw the pile"


def test_a_stalled_row_where_the_call_is_legal_keeps_the_call_alone():
    rng = np.random.default_rng(3)
    yaniv = action_table(HAND).yaniv
    assert stall.stall_columns(N_OBS)[2] == yaniv
    obs = rng.random((200, N_OBS)).astype(np.float32)
    obs[:100, turn_column()] = 1.0
    obs[100:, turn_column()] = 0.5
    masks = rng.random((200, N_ACT)) < 0.2
    masks[::2, yaniv] = True
    masks[1::2, yaniv] = False
    out = stall.stall_masks(obs, masks)
    only = np.zeros(N_ACT, dtype=bool)
    only[yaniv] = True
    assert (out[:100:2] == only).all(), "stalled with the call legal: the call alone"
    assert not out[1:100:2, yaniv].any() and not (out[1:100:2] & stall.stall_columns(N_OBS)[1]).any()
    assert np.array_equal(out[100:], masks[100:]), "rounds under 100 turns are left alone"
    policy = random_policy(4)
    assert (policy.act_batch(obs[:100:2], masks[:100:2]) == yaniv).all()


@pytest.mark.parametrize("rule", [True, False])
@pytest.mark.parametrize("make_policy, why", [
    (pile_swapper, "the pile part: they pass the same cards back and forth"),
    (never_caller, "the forced call: they draw from the deck and never call"),
])
def test_looping_policies_stall_without_the_rule_and_finish_with_it(tmp_path, monkeypatch, rule, make_policy, why):
    path = tmp_path / "policy.npz"
    make_policy().save(path)
    if not rule:
        monkeypatch.setattr(stall, "stalled", lambda observations: np.zeros(observations.shape[:-1], dtype=bool))
    result = run_tournament([f"ppo:{path}", f"ppo:{path}"], 2, 16, seed=0, rounds=True, workers=1,
                            progress=False, max_turns=400, engine="core")
    if rule:
        assert result.capped_rounds == 0, f"{why}: the rule should end every round"
    else:
        assert result.capped_rounds > 8, f"{why}: they loop, or the test would pass without the rule"
