"""Bots for other programs: ``load_bot(spec)`` gives an object whose ``choose(state)`` returns a move.

States and moves are the JSON objects of ``yaniv.protocol`` (``docs/protocol.md``). A spec is any
agent spec of ``agents.registry`` (``specs_help()`` lists them): ``default`` (the bot shipped with
the package, an exported policy played with onnxruntime), a baseline such as ``heuristic`` or
``search:64``, or a path: an exported bot's folder (``python -m agents.policies.export``; loads
with onnxruntime alone and runs no code from the files), policy weights ``PATH.npz`` (numpy only,
no pickle), or an SB3 checkpoint ``PATH.zip`` (a pickle underneath, which can run code when
loaded: refused unless ``load_bot(..., trust_pickle=True)``; see ``load_bot``).

Every answer is checked: the bot builds the position from the state (``game_from_state``), its
agent picks a move (a trained policy picks the best action its mask allows), and the move must be
one of the position's legal moves, or ``choose`` raises instead of answering. The same state gets
the same move: each decision is seeded from the bot's seed and the state itself.

>>> from agents import load_bot
>>> from yaniv import Game
>>> from yaniv.protocol import state_for, apply_move
>>> game = Game(3, seed=1)
>>> move = load_bot("greedy").choose(state_for(game, game.current))
>>> _ = apply_move(game, move)
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import make_agent
from yaniv.protocol import ProtocolError, game_from_state, move_to_json, parse_json, view_from_state


class Bot:
    """Answers protocol states with protocol moves through an agent (see the module docstring)."""

    def __init__(self, agent: Agent, name: str, seed: int = 0) -> None:
        self.agent = agent
        self.name = name
        self.seed = seed

    def choose(self, state: Any) -> dict[str, Any]:
        """The move for ``state`` (a dict, or its JSON text, read within ``yaniv.protocol.parse_json``'s
        limits); ProtocolError naming the problem if the state is bad."""
        if isinstance(state, (str, bytes)):
            state = parse_json(state)
        view = view_from_state(state)
        if view.current != view.player:
            raise ProtocolError(
                f"to_move is seat {view.current}, not seat {view.player}: a bot moves only on its own turn"
            )
        digest = hashlib.sha256(json.dumps(state, sort_keys=True).encode()).digest()
        seed = [self.seed, int.from_bytes(digest[:8], "little")]
        game = game_from_state(state, np.random.default_rng(seed))
        own = game.view(view.player)
        self.agent.reset(seed)
        move = self.agent.act(own)
        if move not in own.legal_moves:
            raise RuntimeError(f"bot {self.name!r} chose {move!r}, which is not legal here; this is a bug in the bot")
        return move_to_json(move)

    def __repr__(self) -> str:
        return f"Bot({self.name!r})"


def load_bot(spec: str, seed: int = 0, *, trust_pickle: bool = False) -> Bot:
    """The bot a spec names (see the module docstring); ValueError naming the problem otherwise.

    Safe to load from strangers: the names of ``agents.registry`` (baselines, ``default``), an
    exported bot's folder (ONNX + bot.json, checked before use) and ``.npz`` weights (numpy data,
    no pickle). Not safe: an SB3 checkpoint or any other pickle-based file (recognised by its
    content, whatever its suffix), which can run code when loaded; it is refused with a ValueError
    pointing to the safe formats unless ``trust_pickle=True`` says you trust the file.
    """
    return Bot(make_agent(spec, seed, trust_pickle=trust_pickle), spec, seed)


__all__ = ["Bot", "load_bot"]
