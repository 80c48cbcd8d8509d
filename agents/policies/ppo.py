"""Trained PPO policies as players: a numpy forward pass, and an agent of the ``agents`` protocol.

``NumpyPolicy`` holds the weights of a MaskablePPO MLP policy's actor (the layers that give
the action logits, the stakes skip where the policy has one: ``agents.policies.stakes``, and the
second tower where it has towers: ``agents.policies.towers``) as plain arrays and runs the forward
pass in numpy. It is what frozen snapshots use as self-play
opponents (a torch call per opponent move would cost more than the environment step) and what
``PPOAgent`` plays with; its moves follow the stall rule (``agents.policies.stall``: no pile draws
once a round has run 100 turns). Weights are saved as ``.npz`` files, which
load without running any code (``allow_pickle=False``).

``load_policy(path)`` reads either such an ``.npz`` or an SB3 checkpoint (``.zip``). An SB3
checkpoint is a pickle underneath and can run code when loaded, so it takes the trust switch:
``load_policy(path, trust_pickle=True)``; without it the file is refused with a ValueError that
names it and the safe formats. The format is read from the content, not the suffix
(``policy_file_kind``): a zip of ``.npy`` arrays is weights, any other zip (SB3, ``torch.save``)
or a bare pickle is a pickle, whatever the file is called. Weights holding NaN or infinity are
refused at load, by layer, and so is an array this version does not read (a newer network part:
played without it, the file would be another policy).
"""

from __future__ import annotations

import json
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import SeededAgent
from agents.policies.stall import stall_masks
from yaniv import Move, PlayerView
from yaniv.protocol import ProtocolError, parse_json
from yaniv.rules import Rules

ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}


def one_blas_thread() -> None:
    """numpy's BLAS on one thread in this process, for good (threadpoolctl). A ``NumpyPolicy``
    multiplies batches of a few hundred rows; beside torch's threads, or other processes on the same
    cores, a pool of BLAS threads only contends: self-play against snapshots collected 4,200 env
    steps a second with it and 6,900 without on 2 cores (docs/experiments.md, 2026-12-02). train.py
    and benchmarks/train_speed.py call it; torch's threads are set apart, and the tournament's worker
    processes hold every pool to one thread (``agents.tournament.schedule``)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


def _check_layers(weights: list[np.ndarray], biases: list[np.ndarray], what: str = "") -> None:
    """ValueError naming the layer unless the (out, in) weights and biases chain into an MLP of finite numbers."""
    if len(weights) != len(biases) or not weights:
        raise ValueError(f"{what}a policy needs as many bias vectors as weight matrices, and at least one layer")
    for i, (w, b) in enumerate(zip(weights, biases)):
        if w.ndim != 2 or b.shape != (w.shape[0],):
            raise ValueError(f"{what}layer {i}: weight {w.shape} and bias {b.shape} do not fit")
        if i and w.shape[1] != weights[i - 1].shape[0]:
            raise ValueError(f"{what}layer {i} takes {w.shape[1]} inputs but layer {i - 1} gives {weights[i - 1].shape[0]}")
        for part, array in (("weights", w), ("bias", b)):
            if not np.issubdtype(array.dtype, np.number) or not np.isfinite(array).all():
                raise ValueError(f"{what}layer {i}: its {part} hold NaN, infinity or non-numbers")


def pick_action(masked_logits: np.ndarray, rng: np.random.Generator | None = None) -> int:
    """The best action of masked logits (-inf where illegal), or one sampled from their softmax."""
    if not np.isfinite(masked_logits).any():
        raise ValueError("the action mask allows no action")
    if rng is None:
        return int(np.argmax(masked_logits))
    z = np.exp(masked_logits - masked_logits.max())
    return int(rng.choice(len(z), p=z / z.sum()))


class NumpyPolicy:
    """The actor of an MLP policy: hidden layers with one activation, then the action logits."""

    def __init__(
        self,
        weights: list[np.ndarray],
        biases: list[np.ndarray],
        activation: str,
        meta: dict | None = None,
        skip: tuple[np.ndarray, np.ndarray] | None = None,
        tower: tuple[str, list[np.ndarray], list[np.ndarray]] | None = None,
    ):
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; known: {', '.join(ACTIVATIONS)}")
        _check_layers(weights, biases)
        self.weights = [np.ascontiguousarray(w.T, dtype=np.float32) for w in weights]  # (in, out) for x @ W
        self.biases = [np.asarray(b, dtype=np.float32) for b in biases]
        # The second tower (agents.policies.towers): its layers, for the rows whose route entry is set.
        self.route_feature: str | None = None
        self.route_index: int | None = None
        self.tower_weights: list[np.ndarray] = []
        self.tower_biases: list[np.ndarray] = []
        if tower is not None:
            from agents.policies.towers import route_index

            feature, tower_weights, tower_biases = tower
            _check_layers(tower_weights, tower_biases, "tower 1 ")
            if [w.shape for w in tower_weights] != [w.shape for w in weights]:
                raise ValueError(f"tower 1's layers {[w.shape for w in tower_weights]} are not shaped as tower 0's "
                                 f"{[w.shape for w in weights]}")
            self.route_index = route_index(self.weights[0].shape[0], feature)
            self.route_feature = feature
            self.tower_weights = [np.ascontiguousarray(w.T, dtype=np.float32) for w in tower_weights]
            self.tower_biases = [np.asarray(b, dtype=np.float32) for b in tower_biases]
        self.activation = activation
        self._act = ACTIVATIONS[activation]
        self.meta = dict(meta or {})
        self.skip_index: np.ndarray | None = None
        self.skip_weight: np.ndarray | None = None
        if skip is not None:
            index, weight = np.asarray(skip[0]), np.asarray(skip[1], dtype=np.float32)
            n_obs, n_act = self.weights[0].shape[0], self.weights[-1].shape[1]
            if (index.ndim != 2 or weight.shape != (index.shape[0],) or index.shape[1] > n_act
                    or not np.issubdtype(index.dtype, np.integer) or index.min() < 0 or index.max() >= n_obs):
                raise ValueError(f"stakes skip: index {index.shape} and weight {weight.shape} do not fit "
                                 f"{n_obs} observations and {n_act} actions")
            if not np.isfinite(weight).all():
                raise ValueError("stakes skip: its weights hold NaN or infinity")
            self.skip_index, self.skip_weight = index.astype(np.int64), weight

    @property
    def observation_size(self) -> int:
        return self.weights[0].shape[0]

    @property
    def num_actions(self) -> int:
        return self.weights[-1].shape[1]

    @classmethod
    def from_sb3(cls, model: Any, meta: dict | None = None) -> "NumpyPolicy":
        """The actor of a MaskablePPO ``MlpPolicy`` (separate actor and critic networks)."""
        import torch

        policy = model.policy
        name = policy.activation_fn.__name__.lower()
        skip = policy.skip_arrays() if hasattr(policy, "skip_arrays") else None
        if hasattr(policy, "tower_layers"):  # agents.policies.towers_torch
            (weights, biases), tower = policy.tower_layers(0), policy.tower_layers(1)
            return cls(weights, biases, name, meta, skip, (policy.route_feature, *tower))
        linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
        linears.append(policy.action_net)
        with torch.no_grad():
            weights = [layer.weight.detach().cpu().numpy().copy() for layer in linears]
            biases = [layer.bias.detach().cpu().numpy().copy() for layer in linears]
        return cls(weights, biases, name, meta, skip)

    def _mlp(self, observation: np.ndarray, weights: list[np.ndarray], biases: list[np.ndarray]) -> np.ndarray:
        h = observation
        for w, b in zip(weights[:-1], biases[:-1]):
            h = self._act(h @ w + b)
        return h @ weights[-1] + biases[-1]

    def logits(self, observation: np.ndarray) -> np.ndarray:
        if self.route_index is None:
            logits = self._mlp(observation, self.weights, self.biases)
        else:  # each row through its own tower: rows with the route entry set through tower 1
            routed = observation[..., self.route_index] >= 0.5
            if observation.ndim == 1:
                logits = self._mlp(observation, *((self.tower_weights, self.tower_biases) if routed
                                                  else (self.weights, self.biases)))
            else:
                logits = np.empty(observation.shape[:-1] + (self.num_actions,), dtype=np.float32)
                for rows, layers in ((~routed, (self.weights, self.biases)),
                                     (routed, (self.tower_weights, self.tower_biases))):
                    if rows.any():
                        logits[rows] = self._mlp(observation[rows], *layers)
        if self.skip_index is not None:
            moves = self.skip_index.shape[1]
            logits[..., :moves] += np.einsum("...ka,k->...a", observation[..., self.skip_index], self.skip_weight)
        return logits

    def masked_logits(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The logits, -inf where ``mask`` is false or the stall rule (``agents.policies.stall``) removes a move."""
        logits = self.logits(observation).astype(np.float32)
        return np.where(stall_masks(observation, mask), logits, -np.inf)

    def act(self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> int:
        """The best legal action, or one sampled from the masked softmax when ``rng`` is given."""
        return pick_action(self.masked_logits(observation, mask), rng)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """``act`` for a batch: one forward pass for (B, N) observations and (B, A) masks; the best legal
        action of each row, or one sampled from its masked softmax (Gumbel-max, from ``rng``) when ``rng``
        is given. What the vector environment calls for a snapshot's seats of all its games at once."""
        if len(observations) == 0:
            return np.zeros(0, dtype=np.int64)
        legal = masks.astype(bool)
        if not legal.any(axis=1).all():
            raise ValueError(f"the action mask of row {int(np.flatnonzero(~legal.any(axis=1))[0])} allows no action")
        legal = stall_masks(observations, legal)
        logits = self.logits(observations).astype(np.float64)
        if rng is not None:
            u = np.maximum(rng.random(logits.shape), 1e-300)
            logits = logits - np.log(-np.log(u))  # + Gumbel noise: argmax is a softmax sample
        return np.argmax(np.where(legal, logits, -np.inf), axis=1)

    def save(self, path: str | Path) -> None:
        """Write the weights as .npz (no pickle), atomically."""
        path = Path(path)
        arrays = {f"w{i}": w.T for i, w in enumerate(self.weights)} | {f"b{i}": b for i, b in enumerate(self.biases)}
        if self.skip_index is not None:
            arrays |= {"skip_index": self.skip_index, "skip_weight": self.skip_weight}
        tower = {}
        if self.route_feature is not None:
            arrays |= {f"tower1_w{i}": w.T for i, w in enumerate(self.tower_weights)}
            arrays |= {f"tower1_b{i}": b for i, b in enumerate(self.tower_biases)}
            tower = {"tower_route": self.route_feature}
        meta = json.dumps({"activation": self.activation, "layers": len(self.weights), **tower, **self.meta})
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            np.savez(f, meta=np.array(meta), **arrays)
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> "NumpyPolicy":
        """Weights saved by ``save`` (no pickle); ValueError naming the file and the problem."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = parse_json(str(data["meta"]), what="meta")
                if not isinstance(meta, dict) or type(meta.get("layers")) is not int or not 1 <= meta["layers"] <= 64:
                    raise ValueError(f"meta: expected an object with 'layers' from 1 to 64, got {meta!r:.80}")
                n = meta.pop("layers")
                route = meta.pop("tower_route", None)
                if route is not None and not isinstance(route, str):
                    raise ValueError(f"meta: tower_route must be a settings feature's name, got {route!r:.80}")
                prefixes = ("", "tower1_") if route is not None else ("",)
                known = {"meta", "skip_index", "skip_weight"} | {
                    f"{prefix}{kind}{i}" for prefix in prefixes for kind in "wb" for i in range(n)}
                unknown = sorted(set(data.files) - known)
                if unknown:  # a newer network part played without it would be another policy, silently
                    raise ValueError(f"arrays this version does not know: {', '.join(unknown)[:200]} (a file from a "
                                     "newer version of yaniv-rl, or a damaged one)")
                weights = [data[f"w{i}"] for i in range(n)]
                biases = [data[f"b{i}"] for i in range(n)]
                skip = (data["skip_index"], data["skip_weight"]) if "skip_index" in data else None
                tower = None
                if route is not None:
                    tower = (route, [data[f"tower1_w{i}"] for i in range(n)], [data[f"tower1_b{i}"] for i in range(n)])
            return cls(weights, biases, meta.pop("activation", None), meta, skip, tower)
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, ProtocolError) as error:
            raise ValueError(f"cannot read policy weights from {path}: {error}") from None


WEIGHTS, PICKLE, UNKNOWN = "weights", "pickle", "unknown"
PICKLE_PROTO = b"\x80"  # how every pickle since protocol 2 starts (older ones read as UNKNOWN: never unpickled)


def policy_file_kind(path: str | Path) -> str:
    """What a policy file holds, by its content: ``WEIGHTS`` (an .npz, a zip of .npy arrays),
    ``PICKLE`` (any other zip, as SB3 and ``torch.save`` write, or a bare pickle), or ``UNKNOWN``.
    Reads the first bytes and a zip's list of names, nothing more."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head.startswith(b"PK"):
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, OSError, ValueError):
            return UNKNOWN
        return WEIGHTS if names and all(name.endswith(".npy") for name in names) else PICKLE
    return PICKLE if head.startswith(PICKLE_PROTO) else UNKNOWN


def refuse_untrusted_pickle(path: str | Path, trust_pickle: bool) -> None:
    """ValueError naming ``path`` and the safe formats if it holds a pickle and ``trust_pickle`` is off."""
    if not trust_pickle and Path(path).is_file() and policy_file_kind(path) == PICKLE:
        raise ValueError(
            f"{path} is a pickle (an SB3 or torch checkpoint), which can run code when loaded: load it only if "
            "you trust it, with trust_pickle=True (--trust-pickle on the command line). Safe to share and load: "
            "policy weights (.npz, as train.py writes them) or an exported bot (the ONNX folder that "
            "python -m agents.policies.export CHECKPOINT OUT_DIR --trust-pickle writes from a trusted checkpoint)"
        )


def load_policy(path: str | Path, *, trust_pickle: bool = False) -> NumpyPolicy:
    """A policy from weights (.npz) or an SB3 MaskablePPO checkpoint (a pickle: only with ``trust_pickle``).

    The format is read from the content (``policy_file_kind``), whatever the suffix; ValueError
    naming the file and the problem (an untrusted pickle, a damaged file, NaN weights)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no policy file at {path}")
    kind = policy_file_kind(path)
    if kind == WEIGHTS or (kind == UNKNOWN and path.suffix == ".npz"):
        return NumpyPolicy.load(path)
    if kind == UNKNOWN:
        raise ValueError(f"{path} is neither policy weights (.npz) nor an SB3 checkpoint (.zip)")
    refuse_untrusted_pickle(path, trust_pickle)
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(path, device="cpu")
        return NumpyPolicy.from_sb3(model)
    except Exception as error:  # SB3 raises many kinds on a broken file
        raise ValueError(f"cannot load the checkpoint {path}: {type(error).__name__}: {error}") from None


@lru_cache(maxsize=64)
def _observer(rules: Rules, num_players: int):
    from yaniv_env.encoding import Observer

    return Observer(rules, num_players)


class PPOAgent(SeededAgent):
    """Plays a trained policy from its seat's view.

    The observation and mask are built from the view exactly as the environment builds them; the
    policy's best legal action is played (``sample=True`` samples the masked softmax instead).
    """

    def __init__(self, policy: NumpyPolicy, seed: int | None = None, sample: bool = False, name: str = "ppo"):
        super().__init__(seed)
        self.policy = policy
        self.sample = sample
        self.name = name

    def observer(self, view: PlayerView):
        """The ``Observer`` of the view's rules and table (cached), once the policy is checked to fit it."""
        observer = _observer(view.rules, view.num_players)
        if self.policy.observation_size != observer.size or self.policy.num_actions != observer.table.size:
            raise ValueError(
                f"policy {self.name!r} takes {self.policy.observation_size} observations and "
                f"{self.policy.num_actions} actions, but these rules need {observer.size} and {observer.table.size}"
            )
        return observer

    def act(self, view: PlayerView) -> Move:
        observer = self.observer(view)
        action = self.policy.act(observer.observe(view), observer.action_mask(view), self.rng if self.sample else None)
        return observer.table.to_move(action, view)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``act`` for a batch of observations and masks (the compiled tournament's seats): the
        policy's best legal actions. A sampling agent has no batched form (its draws would not be
        ``act``'s), so the tournament plays it on the Python engine."""
        if self.sample:
            raise ValueError(f"agent {self.name!r} samples its moves: it plays on the Python engine only")
        if observations.ndim != 2 or observations.shape[1] != self.policy.observation_size:
            raise ValueError(f"policy {self.name!r} takes {self.policy.observation_size} observations, got an array "
                             f"of shape {observations.shape}")
        return self.policy.act_batch(observations, masks)
