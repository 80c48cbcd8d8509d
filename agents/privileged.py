"""A critic that sees the hidden cards (an asymmetric actor-critic), for training only.

In Yaniv a round's return is mostly decided by cards the learner cannot see: how much the others
hold, and what the deck gives next. From the learner's own observation the critic explains little
of the return's variance, so PPO's advantages are mostly noise. Here the value network is given
the truth as well: every opponent's hand and the next card of the deck. The actor still sees only
the observation it will have in play, so the trained policy is as legal to use as any other; only
its learning signal may be sharper (what it measured: ``agents.training``). The same idea as the
perfect-information critics of PerfectDou and the oracle critics of Mahjong and poker bots.

Training observations are the learner's observation followed by ``privileged_size(players)``
more entries (``privileged_features``; this module needs no torch).
``agents.privileged_policy.PrivilegedCriticPolicy`` feeds the actor the first ``public_size`` of
them and the critic all of them. The actor's layers are those of a plain ``MlpPolicy`` with
``public_size`` inputs, so ``agents.policies.ppo.NumpyPolicy.from_sb3`` exports it like any other: nothing
that plays the policy ever needs the extra entries.
"""

from __future__ import annotations

import numpy as np

from yaniv import POINTS
from yaniv.cards import NUM_CARDS
from yaniv.game import Game

OPPONENT_FEATURES = NUM_CARDS + 1  # the hand (multi-hot over card ids), its total / 70


def privileged_size(num_players: int) -> int:
    """Entries ``privileged_features`` adds for tables of up to ``num_players`` seats."""
    return (num_players - 1) * OPPONENT_FEATURES + NUM_CARDS


def privileged_features(game: Game, seat: int, num_players: int) -> np.ndarray:
    """What ``seat`` cannot see, as floats in [0, 1]: per opponent in seat order after it (the
    observation's order; absent seats are zeros up to ``num_players``), its hand and hand total/70;
    then the next card of the deck (all zeros when the deck is empty)."""
    out = np.zeros(privileged_size(num_players), dtype=np.float32)
    n = game.num_players
    for k in range(1, n):
        hand = game.hands[(seat + k) % n]
        base = (k - 1) * OPPONENT_FEATURES
        out[[base + c for c in hand]] = 1.0
        out[base + NUM_CARDS] = min(sum(POINTS[c] for c in hand) / 70.0, 1.0)
    if game.deck:
        out[(num_players - 1) * OPPONENT_FEATURES + game.deck[-1]] = 1.0
    return out
