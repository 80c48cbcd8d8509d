"""The stakes skip: a linear path from the observation's per-move score segments to those moves' logits.

Four segments of the observation hold one float per discard-and-draw action id: reset, over,
reset_soon and over_soon (``yaniv_env.encoding``: what the hand a move leaves does to the score,
and the same weighed by the chance that the round ends first). A plain MLP reads them like any
other input, so to raise the logit of the one move that lands the score on a reset value it must
carry that move's entry through its hidden layers to its own output, for each of 186 moves. With
``stakes_skip: true`` (``agents.training``) the policy adds ``sum_k w_k * segment_k[a]`` to the
logit of each discard-and-draw action ``a``: four learned weights, shared by every action, so the
network learns once what a reset or passing the limit is worth and applies it to every move.

Fitted to the same 300k decisions of the score-aware heuristic and scored on held-out ones by the
heuristic's own move values, the skip and the soon segments together halved the regret where the
score is at stake (decisions where some move reaches a reset value or the limit; 17% of them):
0.54 to 0.26 points a decision heads-up, 0.92 to 0.32 at four; elsewhere it stayed at 0.13. The
skip alone on the older segments: 0.34 and 0.69; the soon segments alone: 0.44 and 0.74.

The weights act on the segments times ``SKIP_SCALE``: Adam moves a parameter by about its
learning rate a step, and a weight of about 10 per unit of a segment (a logit per 0.1 of reset)
is what the heuristic's choices need; unscaled, the four weights were still growing after ten
passes, and the regret fell only to 0.41 and 0.60.

Exported, the skip is an index array (which observation entries feed which action) and a weight
per index row (``agents.policies.ppo.NumpyPolicy``), and two more nodes in the ONNX graph
(``agents.policies.export``). The torch side, for training, is ``agents.policies.stakes_torch``.
"""

from __future__ import annotations

from typing import Final

import numpy as np

SKIP_SEGMENTS: Final = ("reset", "over", "reset_soon", "over_soon")
SKIP_SCALE: Final = 20.0


def skip_index(observation_size: int) -> np.ndarray:
    """``(len(SKIP_SEGMENTS), moves)`` observation indices: row k, column a is segment k's entry of action a."""
    from yaniv_env.encoding import hand_size_for, observation_layout, segment_offsets

    hand_size = hand_size_for(observation_size)
    sizes, offsets = dict(observation_layout(hand_size)), segment_offsets(hand_size)
    return np.stack([np.arange(offsets[name], offsets[name] + sizes[name]) for name in SKIP_SEGMENTS])
