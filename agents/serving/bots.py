"""Bots for other programs: ``load_bot(spec)`` gives an object whose ``choose(state)`` returns a move.

States and moves are the JSON objects of ``yaniv.protocol`` (``docs/protocol.md``). Specs:

==========================  ==================================================================
spec                        bot
==========================  ==================================================================
``default``                 the bot shipped with the package (``agents/models/default``), an
                            exported policy played with onnxruntime
``random``, ``greedy``,     the baselines (``agents.registry``); ``search:N`` sets the search
``heuristic``, ``search``   budget
``DIR`` (or ``onnx:DIR``)   an exported bot: a folder with ``bot.json`` and ``model.onnx``
                            (``python -m agents.policies.export``); loads with onnxruntime alone, runs no
                            code from the files
``PATH.npz``                policy weights as train.py saves them (numpy only, no pickle)
``PATH.zip``/``ppo:PATH``   an SB3 checkpoint: a pickle underneath, which can run code when
                            loaded: trusted files only
==========================  ==================================================================

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
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.policies.export import BOT_FORMAT, META_FILE, MODEL_FILE
from agents.policies.ppo import PPOAgent, pick_action
from agents.registry import check_spec, make_agent
from yaniv.protocol import ProtocolError, game_from_state, move_to_json, rules_from_json, view_from_state
from yaniv_env.encoding import LAYOUT_VERSION, action_table, observation_layout

DEFAULT_BOT = "default"


def default_bot_dir() -> Path:
    """The folder of the bot shipped with the package."""
    return Path(str(resources.files("agents").joinpath("models", DEFAULT_BOT)))


class ExportedPolicy:
    """An exported policy (``model.onnx`` + ``bot.json``) run by onnxruntime on one thread.

    It has the interface of ``agents.policies.ppo.NumpyPolicy`` that ``PPOAgent`` plays with.
    """

    def __init__(self, folder: str | Path):
        folder = Path(folder)
        meta_path, model_path = folder / META_FILE, folder / MODEL_FILE
        if not meta_path.is_file() or not model_path.is_file():
            raise ValueError(f"{folder} is not an exported bot: it needs {META_FILE} and {MODEL_FILE}")
        try:
            meta = json.loads(meta_path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{meta_path} is not valid JSON: {error}") from None
        if not isinstance(meta, dict) or meta.get("format") != BOT_FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else meta
            raise ValueError(f"{meta_path}: expected format {BOT_FORMAT!r}, got {found!r}")
        try:
            version = meta["observation"]["layout_version"]
            hand_size = meta["actions"]["hand_size"]
            size, actions = meta["observation"]["size"], meta["actions"]["size"]
            self.rules = rules_from_json(meta["rules"])
        except (KeyError, TypeError, ProtocolError) as error:
            raise ValueError(f"{meta_path}: missing or bad field ({error})") from None
        if version != LAYOUT_VERSION:
            raise ValueError(
                f"{meta_path}: the bot reads observation layout version {version}, this yaniv-rl writes "
                f"version {LAYOUT_VERSION}: export it again from its checkpoint"
            )
        expected = sum(s for _, s in observation_layout(hand_size)), action_table(hand_size).size
        if (size, actions) != expected:
            raise ValueError(f"{meta_path}: {size} observations and {actions} actions do not fit hand size {hand_size}")
        model = model_path.read_bytes()
        if meta.get("model_sha256") not in (None, hashlib.sha256(model).hexdigest()):
            raise ValueError(
                f"{model_path} does not match the checksum in {META_FILE}: the files are damaged or mismatched"
            )

        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own exception types on a bad model
            raise ValueError(f"cannot load {model_path}: {error}") from None
        self.meta = meta
        self.observation_size = size
        self.num_actions = actions
        self.name = str(folder)

    def masked_logits(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch = observation.ndim == 2
        obs = np.asarray(observation, dtype=np.float32).reshape(-1, self.observation_size)
        mask = np.asarray(mask, dtype=bool).reshape(-1, self.num_actions)
        logits, _ = self.session.run(None, {"observation": obs, "action_mask": mask})
        return logits if batch else logits[0]

    def act(self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> int:
        """The best legal action, or one sampled from the masked softmax when ``rng`` is given."""
        return pick_action(self.masked_logits(observation, mask), rng)


class Bot:
    """Answers protocol states with protocol moves through an agent (see the module docstring)."""

    def __init__(self, agent: Agent, name: str, seed: int = 0):
        self.agent = agent
        self.name = name
        self.seed = seed

    def choose(self, state: Any) -> dict[str, Any]:
        """The move for ``state`` (a dict, or its JSON text); ProtocolError if the state is bad."""
        if isinstance(state, (str, bytes)):
            try:
                state = json.loads(state)
            except json.JSONDecodeError as error:
                raise ProtocolError(f"not JSON: {error}") from None
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


def is_exported_bot(folder: str | Path) -> bool:
    """Whether ``folder`` holds an exported bot's two files."""
    return (Path(folder) / META_FILE).is_file() and (Path(folder) / MODEL_FILE).is_file()


def _exported_dir(spec: str) -> Path | None:
    """The exported bot folder a spec names, if it names one."""
    if spec == DEFAULT_BOT:
        return default_bot_dir()
    path = Path(spec.removeprefix("onnx:"))
    if is_exported_bot(path):
        return path
    if path.name in (MODEL_FILE, META_FILE) and path.is_file():
        return path.parent
    if spec.startswith("onnx:"):
        raise ValueError(f"bot {spec!r}: no exported bot ({META_FILE} + {MODEL_FILE}) at {path}")
    return None


def load_bot(spec: str, seed: int = 0) -> Bot:
    """The bot a spec names (see the module docstring); ValueError naming the problem otherwise."""
    if not isinstance(spec, str):
        raise ValueError(f"a bot spec is a string such as 'default', 'heuristic' or a path, got {spec!r}")
    folder = _exported_dir(spec)
    if folder is not None:
        if not folder.is_dir():
            raise ValueError(f"bot {spec!r}: no exported bot at {folder}")
        return Bot(PPOAgent(ExportedPolicy(folder), seed, name=spec), spec, seed)
    if Path(spec).suffix in (".npz", ".zip") and ":" not in spec:
        spec = f"ppo:{spec}"
    check_spec(spec)
    return Bot(make_agent(spec, seed), spec, seed)


__all__ = ["Bot", "ExportedPolicy", "default_bot_dir", "load_bot"]
