"""Towers: a policy with a second network for the games whose aim differs, chosen by a rule.

    index = route_index(observation_size, "one_round")   # the settings entry that picks the tower

A game of one round (``game_end="one_round"``) is won by winning its round; in every other game a
round is played for its points and for the score they leave. The two aims ask for different play
(a one-round game is won by calling sooner and risking the Assaf more), and one network trained on
both keeps mostly the play of the games that hold most of its samples: five mixes of one-round
games into the default recipe ended between 52% and 54% of the no-jokers one-round games against
the heuristic, where the same network trained on one-round games alone for 7 M steps reached 55%
(docs/experiments.md, 2026-12-03). With ``towers: one_round`` in a training config the actor and
the critic each hold two MLPs of ``net_arch``: tower 0 plays and values the positions whose
observation has the route entry below 0.5, tower 1 those with it set, and neither tower's weights
move for the other's samples. The stakes skip (``agents.policies.stakes``) is shared: what a score
reset is worth does not depend on the aim. With ``towers_from: N`` the run trains one network until
step N and there splits it (``agents.training.model.split_towers``): both towers start as that
network, so play is unchanged at the split, and ``one_round_share`` makes its games of one round
from then on; ``train.py --resume RUN towers=one_round towers_from=STEP`` splits a trained
one-network run the same way.

Every form of the policy routes the same way: ``agents.policies.towers_torch`` for training,
``agents.policies.ppo.NumpyPolicy`` (its ``route_index`` and second set of layers), and the ONNX
graph of ``agents.policies.export`` (both towers, then a ``Where`` on the route entry).

What it gave so far (docs/experiments.md, 2026-12-03): towers from scratch (``one_round_share:
0.4``, 34 M steps, 58 minutes on 2 cores) won 51.5% of the no-jokers one-round games against the
heuristic, a point below the one-network recipe (52.5%): tower 1 starts from the copy (44%). Split
from the recipe's trained network (``towers_from: 28000000``, ``towers_learning_rate: 2e-4``,
``one_round_share: 1.0``, 35 M steps, 45 minutes) tower 1 reaches 54.1%, and three other ways of
training a trained network on those games end at 53.6% to 54.9%: about two points gained, short
of the 55% asked. The default config does not use towers.
"""

from __future__ import annotations

from typing import Final

TOWER_FEATURES: Final = ("one_round",)
"""The settings features a policy may route on (``yaniv_env.encoding.SETTINGS``)."""


def route_index(observation_size: int, feature: str) -> int:
    """The observation entry of the settings feature ``feature``, for observations of ``observation_size``;
    ValueError naming the feature or the size when there is none."""
    from yaniv_env.encoding import SETTINGS, hand_size_for, segment_offsets

    if feature not in TOWER_FEATURES:
        raise ValueError(f"towers route on one of {', '.join(TOWER_FEATURES)}, not {feature!r}")
    hand_size = hand_size_for(observation_size)
    names = [name for name, _, _ in SETTINGS]
    return segment_offsets(hand_size)["settings"] + names.index(feature)
