"""What a seat cannot see, as a vector for a critic that learns from more than the policy is shown.

    out = np.zeros((len(games), HIDDEN_SIZE), dtype=np.float32)
    hidden_games(S, games, seats, out)                 # per game: the other hands, the next card

``observe_hidden(s, seat, out)`` writes into ``out`` (``float32``, ``HIDDEN_SIZE`` entries) the
cards of row ``s`` (``yaniv_env.core.layout``) that ``seat`` does not see: for the k-th seat after
it in turn order (k = 1 to ``MAX_PLAYERS - 1``; the seats of a smaller table stay zero), a 0/1
entry per card id of that seat's hand (``NUM_CARDS`` each, in that order), then the deck's next
card (``NUM_CARDS`` entries; all zero when the deck is empty and the next draw reshuffles). An
eliminated seat holds no cards, so its block is zero. ``hidden_games(S, games, seats, out)`` does
it for ``seats[k]`` in game ``games[k]`` into ``out[k]``.

Who reads it: ``yaniv_env.vector`` appends it to the learner's observation with
``critic_hidden=True``, and the training policy (``agents.policies.stakes_torch``) gives it to the
critic alone; the actor, every snapshot and every exported bot read the observation as before.

Why: a round's outcome hangs on the cards the others hold and on what the deck gives next, none
of which the learner sees, so a critic that reads only the observation explains little of the
return and PPO's advantages are mostly noise. A baseline may depend on anything that the action
does not change without biasing the policy gradient (the asymmetric actor-critic of Pinto et al.,
2017; the "perfect-information" critics of card-game agents), so the critic may read the hidden
cards while the policy, which is what plays, still reads only what a player sees.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numba import njit

from yaniv.cards import NUM_CARDS
from yaniv.game import MAX_PLAYERS
from yaniv_env.core.layout import DECK, DECK_LEN, HAND, HAND_LEN, HAND_ROOM, PLAYERS

HIDDEN_SEATS: Final = MAX_PLAYERS - 1
HIDDEN_SIZE: Final = HIDDEN_SEATS * NUM_CARDS + NUM_CARDS
NEXT_CARD: Final = HIDDEN_SEATS * NUM_CARDS  # where the deck's next card starts


@njit(cache=True)
def observe_hidden(s, seat, out):
    """The other seats' hands and the deck's next card, as ``seat`` sees none of them (see above)."""
    out[:] = 0.0
    n = s[PLAYERS]
    for k in range(1, n):
        q = (seat + k) % n
        for i in range(s[HAND_LEN + q]):
            out[(k - 1) * NUM_CARDS + s[HAND + q * HAND_ROOM + i]] = 1.0
    d = s[DECK_LEN]
    if d > 0:
        out[NEXT_CARD + s[DECK + d - 1]] = 1.0


@njit(cache=True)
def hidden_games(S, games, seats, out):
    """``out[k]``: ``observe_hidden`` of seat ``seats[k]`` in game ``games[k]``."""
    for k in range(games.shape[0]):
        observe_hidden(S[games[k]], seats[k], out[k])
