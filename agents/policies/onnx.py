"""Exported bots: a policy saved as ``model.onnx`` + ``bot.json`` (``agents.policies.export``), played
with onnxruntime alone.

>>> from agents.policies.onnx import ExportedPolicy, default_bot_dir
>>> policy = ExportedPolicy(default_bot_dir())          # the bot shipped with the package
>>> policy.observation_size == policy.meta["observation"]["size"]
True

``ExportedPolicy`` has the interface of ``agents.policies.ppo.NumpyPolicy`` (``masked_logits``,
``act``, and ``act_batch`` for a batch of observations), so ``PPOAgent`` and the tournament's
batched games play either, the stall rule (``agents.policies.stall``) included, also for a model
exported before its graph held it. Loading checks everything before the first move, and
refuses with a ValueError naming the file and the field: ``bot.json``'s size, nesting and every
field's type (read by ``yaniv.protocol.parse_json``), the format, the observation layout version (a
bot trained on another layout is refused, not misread), the sizes against the hand size, the
model's SHA-256 against the one ``bot.json`` must give, and one probe of the model, whose logits
must be finite (NaN or infinite weights are refused at load, not met at the first request). It
runs no code from the files (ONNX is a protobuf of tensors and operators, ``bot.json`` is data), so
an exported bot is safe to load from strangers; and it runs on one thread: a bot answers one state
at a time, and its host often runs several.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from agents.policies.export import BOT_FORMAT, META_FILE, MODEL_FILE
from agents.policies.ppo import pick_action
from agents.policies.stall import stall_masks
from yaniv.protocol import MAX_TEXT_BYTES, ProtocolError, parse_json, quote, rules_from_json
from yaniv.rules import MAX_HAND, MIN_HAND
from yaniv_env.encoding import LAYOUT_VERSION, action_table, observation_layout

DEFAULT_BOT = "default"


def default_bot_dir() -> Path:
    """The folder of the bot shipped with the package (``agents/models/default``)."""
    return Path(str(resources.files("agents").joinpath("models", DEFAULT_BOT)))


def is_exported_bot(folder: str | Path) -> bool:
    """Whether ``folder`` holds an exported bot's two files."""
    return (Path(folder) / META_FILE).is_file() and (Path(folder) / MODEL_FILE).is_file()


def exported_bot_folder(path: str | Path) -> Path | None:
    """The exported bot that ``path`` names: its folder, or one of its two files; None otherwise."""
    path = Path(path)
    if is_exported_bot(path):
        return path
    if path.name in (META_FILE, MODEL_FILE) and is_exported_bot(path.parent):
        return path.parent
    return None


def _field(meta: Any, path: str, kind: type, where: Path) -> Any:
    """``meta``'s field at a dotted ``path``, of exactly type ``kind``; ValueError naming it otherwise."""
    value = meta
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            raise ValueError(f"{where}: missing field {path}")
        value = value[key]
    if type(value) is not kind:
        raise ValueError(f"{where}: {path} must be {'an integer' if kind is int else 'a string'}, got {quote(value)}")
    return value


class ExportedPolicy:
    """An exported policy (``model.onnx`` + ``bot.json``) run by onnxruntime on one thread.

    ValueError naming the file and the problem if the folder is not a loadable bot (see the module
    docstring).
    """

    def __init__(self, folder: str | Path) -> None:
        folder = Path(folder)
        meta_path, model_path = folder / META_FILE, folder / MODEL_FILE
        if not meta_path.is_file() or not model_path.is_file():
            raise ValueError(f"{folder} is not an exported bot: it needs {META_FILE} and {MODEL_FILE}")
        if meta_path.stat().st_size > MAX_TEXT_BYTES:
            raise ValueError(f"{meta_path}: {meta_path.stat().st_size} bytes, over the limit of {MAX_TEXT_BYTES}")
        try:
            meta = parse_json(meta_path.read_bytes(), what=META_FILE)
        except ProtocolError as error:
            raise ValueError(f"{meta_path} is not valid JSON: {error}") from None
        if not isinstance(meta, dict) or meta.get("format") != BOT_FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else meta
            raise ValueError(f"{meta_path}: expected format {BOT_FORMAT!r}, got {quote(found)}")
        version = _field(meta, "observation.layout_version", int, meta_path)
        size = _field(meta, "observation.size", int, meta_path)
        actions = _field(meta, "actions.size", int, meta_path)
        hand_size = _field(meta, "actions.hand_size", int, meta_path)
        checksum = _field(meta, "model_sha256", str, meta_path)
        if "rules" not in meta:
            raise ValueError(f"{meta_path}: missing field rules")
        try:
            self.rules = rules_from_json(meta["rules"])
        except ProtocolError as error:
            raise ValueError(f"{meta_path}: {error}") from None
        if not MIN_HAND <= hand_size <= MAX_HAND:
            raise ValueError(f"{meta_path}: actions.hand_size must be from {MIN_HAND} to {MAX_HAND}, got {hand_size}")
        if version != LAYOUT_VERSION:
            raise ValueError(
                f"{meta_path}: the bot reads observation layout version {version}, this yaniv-rl writes "
                f"version {LAYOUT_VERSION}: export it again from its checkpoint"
            )
        expected = sum(s for _, s in observation_layout(hand_size)), action_table(hand_size).size
        if (size, actions) != expected:
            raise ValueError(f"{meta_path}: {size} observations and {actions} actions do not fit hand size {hand_size}")
        model = model_path.read_bytes()
        if checksum != hashlib.sha256(model).hexdigest():
            raise ValueError(
                f"{model_path} does not match the checksum in {META_FILE}: the files are damaged or mismatched"
            )

        import onnxruntime as ort  # here, not at the top: importing this module must stay cheap

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
        try:
            probe = self.masked_logits(np.zeros(size, dtype=np.float32), np.ones(actions, dtype=bool))
        except Exception as error:  # onnxruntime's own types: a graph whose shapes do not fit bot.json
            raise ValueError(f"cannot run {model_path} on an observation of {size}: {error}") from None
        if probe.shape != (actions,) or not np.isfinite(probe).all():
            raise ValueError(f"{model_path} gives NaN or infinite logits (or {probe.shape[-1:]} of them, not "
                             f"{actions}): its weights hold NaN or infinity, or the graph does not fit {META_FILE}")

    def masked_logits(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The logits, -inf where ``mask`` is false; a batch for a batch ([n, size]) of observations."""
        batch = observation.ndim == 2
        obs = np.asarray(observation, dtype=np.float32).reshape(-1, self.observation_size)
        mask = stall_masks(obs, np.asarray(mask, dtype=bool).reshape(-1, self.num_actions))  # models exported before it
        logits, _ = self.session.run(None, {"observation": obs, "action_mask": mask})
        return logits if batch else logits[0]

    def act(self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> int:
        """The best legal action, or one sampled from the masked softmax when ``rng`` is given."""
        return pick_action(self.masked_logits(observation, mask), rng)

    def act_batch(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """``act`` for a batch, as ``NumpyPolicy.act_batch``: one model run for (B, N) observations and
        (B, A) masks; each row's best legal action, or one sampled from its masked softmax (Gumbel-max,
        from ``rng``) when ``rng`` is given. What the tournament calls on the compiled core."""
        if len(observations) == 0:
            return np.zeros(0, dtype=np.int64)
        legal = np.asarray(masks).astype(bool)
        if not legal.any(axis=1).all():
            raise ValueError(f"the action mask of row {int(np.flatnonzero(~legal.any(axis=1))[0])} allows no action")
        observations = np.asarray(observations).reshape(len(legal), -1)
        legal = stall_masks(observations, legal)
        logits = self.masked_logits(observations, legal).astype(np.float64)
        if rng is not None:
            u = np.maximum(rng.random(logits.shape), 1e-300)
            logits = logits - np.log(-np.log(u))  # + Gumbel noise: argmax is a softmax sample
        return np.argmax(np.where(legal, logits, -np.inf), axis=1)
