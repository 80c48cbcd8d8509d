"""benchmarks/expert_iteration.py: the start read back from the shipped bot plays as the bot (the
diagnostic's figures mean nothing otherwise). Its labels and fit are agents.training.expert's,
tested in tests/test_expert.py."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import expert_iteration as ei  # noqa: E402

from agents.policies.onnx import ExportedPolicy  # noqa: E402
from agents.training.expert import collect_labels  # noqa: E402

BOT = Path(__file__).resolve().parent.parent / "agents" / "models" / "default"


def test_the_start_read_from_the_onnx_file_plays_as_the_exported_bot():
    policy = ei.policy_from_onnx(BOT)
    assert policy.route_feature == "one_round" and policy.skip_index is not None
    data = collect_labels(policy, 256, seed=1, budget=16)
    obs = data["obs"].astype(np.float32)
    ours, theirs = policy.masked_logits(obs, data["masks"]), ExportedPolicy(BOT).masked_logits(obs, data["masks"])
    legal = np.isfinite(ours)
    assert (legal == np.isfinite(theirs)).all()
    assert np.abs(ours[legal] - theirs[legal]).max() < 1e-4
    assert (np.argmax(ours, axis=1) == np.argmax(theirs, axis=1)).all()
