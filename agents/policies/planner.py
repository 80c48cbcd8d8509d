"""The planner: a trained policy that checks its best moves by search before it plays.

``PlannerAgent(policy, seed, budget)`` (spec ``plan[:N]:BOT``, BOT a policy spec such as
``default``, ``onnx:DIR`` or ``ppo:PATH``) is the search bot (``agents.baselines.search``) with the
network in the heuristic's place: the network proposes, the rollouts dispose. For each decision:

1. **Candidates** (``plan_candidates``): the policy's ``top_k`` most likely legal actions (its
   masked logits, the stall rule applied), best first, plus Yaniv when it is legal and not among
   them; in a slamdown, both answers, the network's first. At most ``max(2, budget // 4)``. A lone
   candidate is played at once, with no rollout. Once the round has stalled (100 turns, the stall
   rule of ``agents.policies.stall``) the only candidate is the network's move: past that turn the
   planner is its network, so the stall rule's guarantee (deck draws only, the hands move on) is
   the network's, with no rollout to talk it out of a call.
2. **Choice**: the search's own ``choose`` on those candidates (the same samples of the hidden
   cards, rollouts and paired test): the network's choice stands unless another candidate beats
   it by ``confidence`` standard errors over the rollouts. So the planner plays the network's move
   wherever the search cannot tell the candidates apart, and overrules it where sampled play-outs
   clearly disagree (about one decision in twelve heads-up with the shipped bot).

Why: the network's edge lies in what it learned to read from the observation (the score's
stakes, what the opponent kept); the search's in checking a move against play-outs of the round
(its margin in single rounds is higher than the network's). A copy of the search's labels keeps
none of its edge (docs/experiments.md, 2026-12-03 and 2026-12-04): the edge is in rare overrules
that look like noise from the observation. Decision-time search keeps them, at the search's cost
per move (about a millisecond heads-up at the default budget, against 0.02 ms for the network).
Where the edge lies (``benchmarks/planner_edge.py``, docs/experiments.md, 2026-12-07): in the
discards and draws, not the call (searched alone, the call adds nothing), and two thirds of it in
the samples' lean towards the hands the opponent's last discard argues for; rollouts of six turns
keep all of it. The same inference given to the network as an input adds nothing to PPO.

Two forms, chosen as for every bot: ``PlannerAgent.act(view)`` plays one view (the Python engine,
the AEC environment, the stdio server, the terminal game; the search's reference rollouts), and
on the compiled core the tournament (``agents.tournament.compiled``) runs the network once for
every waiting game, then ``yaniv_env.core.search.choose_games`` (the compiled rollouts). The two
agree in distribution, not move for move (the search's two forms draw different random numbers).

Contract: deterministic given its seed and the views it is shown; it plays only legal moves (the
candidates are the policy's legal actions); its policy must take the rules' observation and
action sizes (ValueError naming both otherwise, as ``PPOAgent``).
"""

from __future__ import annotations

import numpy as np

from yaniv import Move, PlayerView
from yaniv.game import SLAMDOWN_PHASE

from agents.baselines.search import SearchAgent
from agents.policies.ppo import PPOAgent
from agents.policies.stall import stall_masks, stalled

PLAN_BUDGET = 256  # rollouts a decision (the search's own default is 128): docs/experiments.md, 2026-12-05
PLAN_TOP_K = 4  # the network's moves searched (as the search's top_k)
MAX_PLAN_CANDIDATES = 16  # yaniv_env.core.search.MAX_CANDIDATES: top_k moves and Yaniv


def plan_candidates(logits: np.ndarray, legal: np.ndarray, yaniv: int, top_k: int, budget: int) -> tuple[np.ndarray, np.ndarray]:
    """The candidates of a batch of decisions: ``(cands, counts)``, row ``i``'s action ids in
    ``cands[i, :counts[i]]``, the network's best first.

    ``logits`` (B, A): the policy's logits; ``legal`` (B, A): the legal actions after the stall rule
    (each row with at least one); ``yaniv``: Yaniv's action id (added when legal and not among the
    ``top_k`` best). Ties go to the lower action id, as ``argmax``. At most ``max(2, budget // 4)``
    candidates (the search's cut)."""
    if not 1 <= top_k < MAX_PLAN_CANDIDATES:
        raise ValueError(f"top_k must be from 1 to {MAX_PLAN_CANDIDATES - 1}, got {top_k!r}")
    scores = np.where(legal, logits.astype(np.float64), -np.inf)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]
    n_legal = legal.sum(axis=1)
    counts = np.minimum(n_legal, top_k)
    cands = np.full((len(legal), MAX_PLAN_CANDIDATES), -1, dtype=np.int64)
    cands[:, :top_k] = order
    cands[:, :top_k][np.arange(top_k)[None, :] >= counts[:, None]] = -1  # rows with fewer legal moves
    has_yaniv = (cands == yaniv).any(axis=1)
    add = legal[:, yaniv] & ~has_yaniv
    cands[add, counts[add]] = yaniv
    counts = counts + add
    return cands, np.minimum(counts, max(2, budget // 4))


def policy_candidates(policy, observations: np.ndarray, masks: np.ndarray, yaniv: int, top_k: int = PLAN_TOP_K,
                      budget: int = PLAN_BUDGET) -> tuple[np.ndarray, np.ndarray]:
    """``plan_candidates`` of a policy's masked logits (``policy.masked_logits``: the stall rule
    applied) for a batch of (B, N) observations and (B, A) action masks: what both forms search.
    A row whose round has stalled (``stall.stalled``) keeps one candidate, the network's move."""
    legal = stall_masks(observations, np.asarray(masks).astype(bool))
    logits = policy.masked_logits(observations, legal)
    cands, counts = plan_candidates(logits, legal & np.isfinite(logits), yaniv, top_k, budget)
    return cands, np.where(stalled(observations), 1, counts)


class PlannerAgent(SearchAgent):
    """A policy's top moves checked by the search's rollouts before it plays (module docstring).

    ``policy``: a ``NumpyPolicy`` or ``ExportedPolicy`` (``masked_logits``); ``budget``, ``top_k``,
    ``confidence``, ``rho``, ``rollout_turns``: the search's (``SearchAgent``)."""

    def __init__(self, policy, seed: int | None = None, budget: int = PLAN_BUDGET, *, top_k: int = PLAN_TOP_K,
                 name: str = "plan", **search: float | int) -> None:
        super().__init__(seed, budget, top_k=top_k, **search)
        if top_k >= MAX_PLAN_CANDIDATES:
            raise ValueError(f"top_k must be from 1 to {MAX_PLAN_CANDIDATES - 1}, got {top_k!r}")
        self.network = PPOAgent(policy, name=name)
        self.name = name

    def candidates(self, view: PlayerView) -> list[Move]:
        """The policy's ``top_k`` legal moves, best first, plus Yaniv when legal (both answers in a
        slamdown), cut as ``plan_candidates`` cuts them."""
        observer = self.network.observer(view)
        table = observer.table
        observation, mask = observer.observe(view)[None, :], observer.action_mask(view)[None, :]
        cands, counts = policy_candidates(self.network.policy, observation, mask, table.yaniv, self.top_k, self.budget)
        moves = [table.to_move(int(a), view) for a in cands[0, : counts[0]]]
        if view.phase == SLAMDOWN_PHASE and counts[0] > 1:  # both answers, the network's first; not once stalled
            moves += [m for m in view.legal_moves if m not in moves]
        return moves

    def act(self, view: PlayerView) -> Move:
        if not view.legal_moves:
            raise ValueError(f"seat {view.player} has no legal move: it is not its turn")
        cands = self.candidates(view)
        if len(cands) == 1:
            return cands[0]
        return cands[self.choose(view, cands)]
