"""benchmarks/planner_edge.py: each arm lets the planner choose only among the moves it claims (the
network's move always first), so the diagnostic's split of the edge means what it says."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import planner_edge as pe  # noqa: E402

from agents.policies.planner import PLAN_BUDGET, PLAN_TOP_K, plan_candidates  # noqa: E402
from yaniv_env.encoding import DRAW_SOURCES, action_table  # noqa: E402

TABLE = action_table(5)
YANIV = TABLE.yaniv
SLAMDOWN = YANIV + 1


def batch(seed: int = 0, rows: int = 64):
    """Random logits over random legal sets: every row has moves of several discards and draws, half
    of them may call, a few are a slamdown's answer alone."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(rows, TABLE.size)).astype(np.float32)
    legal = np.zeros((rows, TABLE.size), dtype=bool)
    legal[:, :YANIV] = rng.random((rows, YANIV)) < 0.3
    legal[:, YANIV] = rng.random(rows) < 0.5
    slam = np.arange(rows) % 16 == 15
    legal[slam] = False
    legal[slam, SLAMDOWN:SLAMDOWN + 2] = True
    return logits, legal


def arm_candidates(arm: str, seed: int = 0):
    logits, legal = batch(seed)
    cands, counts = pe.restricted(arm, plan_candidates)(logits, legal, YANIV, PLAN_TOP_K, PLAN_BUDGET)
    best = np.argmax(np.where(legal, logits, -np.inf), axis=1)
    return logits, legal, cands, counts, best


@pytest.mark.parametrize("arm", pe.ARMS)
def test_every_arm_offers_legal_moves_the_networks_first(arm):
    logits, legal, cands, counts, best = arm_candidates(arm)
    assert (cands[:, 0] == best).all()
    for i in range(len(legal)):
        row = cands[i, :counts[i]]
        assert counts[i] >= 1 and legal[i, row].all() and len(set(row.tolist())) == len(row)
        assert (cands[i, counts[i]:] == -1).all() or arm == "full"


def test_full_is_the_shipped_planner():
    logits, legal = batch()
    shipped = plan_candidates(logits, legal, YANIV, PLAN_TOP_K, PLAN_BUDGET)
    mine = pe.restricted("full", plan_candidates)(logits, legal, YANIV, PLAN_TOP_K, PLAN_BUDGET)
    assert all((a == b).all() for a, b in zip(shipped, mine))


def test_none_searches_nothing():
    _, _, _, counts, _ = arm_candidates("none")
    assert (counts == 1).all()


def test_call_asks_only_whether_to_call():
    logits, legal, cands, counts, best = arm_candidates("call")
    for i in range(len(legal)):
        if not legal[i, YANIV]:
            assert counts[i] == 1
        else:
            row = set(cands[i, :counts[i]].tolist())
            assert counts[i] == 2 and YANIV in row and (row - {YANIV}) <= set(np.flatnonzero(legal[i]).tolist())
    assert (counts == 2).sum() == legal[:, YANIV].sum()


def test_nocall_keeps_the_networks_call_and_searches_the_rest():
    logits, legal, cands, counts, best = arm_candidates("nocall")
    for i in range(len(legal)):
        row = cands[i, :counts[i]].tolist()
        if legal[i, YANIV] and best[i] == YANIV:
            assert row == [YANIV]
        elif legal[i, YANIV]:
            assert YANIV not in row and counts[i] == min(PLAN_TOP_K, legal[i].sum() - 1)
    assert (counts > 1).any()


@pytest.mark.parametrize("arm, kept", [("draw", lambda a: a // DRAW_SOURCES),  # the discard kept
                                       ("discard", lambda a: a % DRAW_SOURCES)])  # the draw kept
def test_draw_and_discard_arms_hold_the_other_half_of_the_move(arm, kept):
    logits, legal, cands, counts, best = arm_candidates(arm)
    searched = 0
    for i in range(len(legal)):
        row = cands[i, :counts[i]]
        if best[i] >= YANIV:  # a call or a slamdown's answer: the network's
            assert counts[i] == 1
            continue
        assert (row < YANIV).all() and (kept(row) == kept(best[i])).all()
        same = [a for a in np.flatnonzero(legal[i]) if a < YANIV and kept(a) == kept(best[i])]
        assert counts[i] == min(PLAN_TOP_K, len(same))
        searched += counts[i] > 1
    assert searched > 0


def test_a_bad_setting_is_refused_by_name(capsys):
    with pytest.raises(SystemExit):
        pe.main(["--set", "budget=3"])
    assert "--set: a search setting is KEY=VALUE with KEY one of" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pe.main(["--set", "sweeps=many"])
    assert "search setting sweeps must be an integer, got 'many'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pe.main(["--set", "sweeps=-1"])
    assert "sweeps must be an integer >= 0" in capsys.readouterr().err
