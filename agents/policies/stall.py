"""The stall rule: once a round has run 100 turns, a trained policy calls Yaniv when it may and
otherwise draws from the deck.

    masks = stall_masks(observations, masks)     # (B, N) float32, (B, A) bool -> (B, A) bool

A policy picks its move from what it observes, and a round's observation can repeat: two careful
players can pass the same few cards back and forth through the pile, each drawing what the other
just threw, and a deterministic policy then plays the same move for ever (the round reaches the
turn cap, scoreless). The observation counts the round's turns up to 100 (``SELF.turn``, turn/100
capped at 1), so from there on a policy cannot tell turn 100 from turn 1,000. The stall rule
breaks the cycle where the policy cannot: once that feature reads 1, every action that draws from
the pile is taken out of the mask, whenever some other legal action (a deck draw, a call, a
slamdown choice) remains, and where the call is legal it is the only action left. A deck draw
brings a card nobody threw, so the hands move on; the forced call is what makes the round end
once a hand is low enough: a policy that fears the Assaf may decline every call (the shipped bot
of 2026-12-07, at 190 of a 200 limit, held an ace with Yaniv legal for 400 turns while the search
declined too, and the round reached the 500-turn cap; docs/experiments.md). A round of 100 turns
is far past normal play (heads-up rounds last about 20 turns), so the rule leaves ordinary games
alone.

Every player of a trained policy applies it: ``NumpyPolicy`` (``PPOAgent``, snapshots, the
compiled tournament's batched seats), ``ExportedPolicy`` and the ONNX graph of
``agents.policies.export`` itself, so a program in any language that runs ``model.onnx`` plays the
same moves. Contract: it only ever removes actions, never adds one, and never empties a row.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import numpy as np

from yaniv_env.encoding import DRAW_SOURCES, SELF, action_table, hand_size_for, observation_layout

STALL_TURNS: Final = 100
"""Turns of a round after which the rule applies: where the observation's turn feature reaches 1."""


@lru_cache(maxsize=16)
def stall_columns(observation_size: int) -> tuple[int, np.ndarray, int] | None:
    """(index of the turn feature, bool vector of the pile-draw action ids, the Yaniv call's action
    id) for observations of ``observation_size``, or None when no hand size's layout has that size."""
    try:
        hand_size = hand_size_for(observation_size)
    except ValueError:
        return None
    offsets, at = {}, 0
    for name, size in observation_layout(hand_size):
        offsets[name] = at
        at += size
    table = action_table(hand_size)
    pile = np.zeros(table.size, dtype=bool)
    ids = np.arange(table.num_discard_actions)
    pile[ids] = ids % DRAW_SOURCES != 0  # action (m - 1) * DRAW_SOURCES + d; draw source 0 is the deck
    pile.flags.writeable = False
    return offsets["self"] + SELF.turn, pile, table.yaniv


def stalled(observations: np.ndarray) -> np.ndarray:
    """Whether each observation's round has run ``STALL_TURNS`` turns (B,) bool."""
    columns = stall_columns(observations.shape[-1])
    if columns is None:
        return np.zeros(observations.shape[:-1], dtype=bool)
    return observations[..., columns[0]] >= 1.0


def stall_masks(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``masks`` (bool) with the rows whose round has stalled changed: the call alone where it is
    legal, else the pile draws removed where another legal action remains; the other rows as they
    were. Works on one row or a batch."""
    masks = masks.astype(bool)
    columns = stall_columns(observations.shape[-1])
    if columns is None or masks.shape[-1] != columns[1].shape[0]:
        return masks
    rows = stalled(observations)
    if not rows.any():
        return masks
    _, pile, yaniv = columns
    guarded = masks & ~pile
    keep = rows & guarded.any(axis=-1)
    out = np.where(keep[..., None], guarded, masks)
    call = rows & masks[..., yaniv]
    if call.any():
        only_call = np.zeros(masks.shape[-1], dtype=bool)
        only_call[yaniv] = True
        out = np.where(call[..., None], only_call, out)
    return out
