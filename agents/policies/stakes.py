"""The stakes skip: a linear path from the observation's per-move score segments to those moves' logits.

Four segments of the observation (``SKIP_SEGMENTS``) hold one float per discard-and-draw action id:
reset, over, reset_soon and over_soon (``yaniv_env.encoding``: what the hand a move leaves does to
the score, and the same weighed by the chance that the round ends first). With
``stakes_skip: true`` in a training config (``agents.training``) the policy adds
``SKIP_SCALE * sum_k w_k * segment_k[a]`` to the logit of each discard-and-draw action ``a``: four
learned weights ``w_k``, shared by every action.

``skip_index(observation_size)`` gives the observation entries that feed each action, one row per
segment; every form of the policy reads the skip from it. The torch side, for training, is
``agents.policies.stakes_torch``; exported, the skip is that index array and a weight per row with
the scale folded in (``agents.policies.ppo.NumpyPolicy``), and two more nodes in the ONNX graph
(``agents.policies.export``).

Why: a plain MLP reads the segments like any other input, so to raise the logit of the one move
that lands the score on a reset value it must carry that move's entry through its hidden layers to
its own output, for every move separately. The skip lets the network learn once what a reset or
passing the limit is worth and apply it to every move. Why the scale: Adam moves a parameter by
about its learning rate a step, and the heuristic's choices need weights of about 10 per unit of a
segment; unscaled, the weights were still growing after ten passes. The measurements:
``docs/experiments.md``.
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
