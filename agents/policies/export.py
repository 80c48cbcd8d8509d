"""Export a trained policy as an ONNX model plus a JSON metadata file, for programs without torch.

    python -m agents.policies.export CHECKPOINT OUT_DIR

CHECKPOINT is a policy's weights (``.npz``, as train.py writes them) or an SB3 MaskablePPO
checkpoint (``.zip``: a pickle underneath, which can run code when loaded, so it takes
``--trust-pickle``: trusted files only). OUT_DIR receives:

``model.onnx``
    inputs ``observation`` (float32, [batch, observation size]) and ``action_mask`` (bool,
    [batch, actions]); outputs ``masked_logits`` (float32, [batch, actions], -inf where the mask
    is false or the stall rule of ``agents.policies.stall`` removes a move) and ``action`` (int64,
    [batch], the best legal action). The graph is the policy's actor, written layer by layer from
    its weights (MatMul, Add, Tanh/Relu; Gather and Pad for the stakes skip of
    ``agents.policies.stakes``), then the stall rule and the mask, so it needs nothing but ONNX itself: onnxruntime, or
    any other ONNX runtime, in any language.
``bot.json``
    what a loader must know: the format, the observation layout (version and segments), the action
    table (hand size, ids), the rules the policy was trained for, the network's shape, and the
    SHA-256 of the model and of the checkpoint it came from.

``agents.load_bot(OUT_DIR)`` plays the exported bot with onnxruntime alone. Loading it runs no code
from the files: ONNX is a protobuf of tensors and operators, bot.json is data.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from agents.policies.ppo import NumpyPolicy, load_policy
from agents.policies.stakes import SKIP_SEGMENTS
from agents.policies.stall import stall_columns
from yaniv.rules import get_rules
from yaniv_env.encoding import DRAW_SOURCES, LAYOUT_VERSION, action_table, observation_layout
from yaniv_env.encoding import hand_size_for as observation_hand_size  # this module's hand_size_for takes a policy

BOT_FORMAT = "yaniv-bot/1"
MODEL_FILE = "model.onnx"
META_FILE = "bot.json"
OPSET = 17
IR_VERSION = 8  # the IR that opset 17 came with: readable by onnxruntime >= 1.13


def hand_size_for(policy: NumpyPolicy) -> int:
    """The hand size whose observation and action table fit the policy's input and output sizes."""
    try:
        hand_size = observation_hand_size(policy.observation_size)
    except ValueError:
        hand_size = None
    if hand_size is None or action_table(hand_size).size != policy.num_actions:
        raise ValueError(
            f"the policy takes {policy.observation_size} inputs and gives {policy.num_actions} actions: "
            "no hand size's observation layout and action table fit"
        )
    return hand_size


def onnx_model(policy: NumpyPolicy) -> Any:
    """The policy's actor as an ``onnx.ModelProto`` (observation, action_mask) -> (masked_logits, action)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    n_obs, n_act = policy.observation_size, policy.num_actions
    initializers, nodes = [numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1")], []
    mlp_out = "mlp_logits" if policy.skip_index is not None else "logits"

    def mlp(weights: list[np.ndarray], biases: list[np.ndarray], prefix: str, out: str) -> None:
        h, last = "observation", len(weights) - 1
        for i, (w, b) in enumerate(zip(weights, biases)):
            initializers.append(numpy_helper.from_array(w.astype(np.float32), f"{prefix}w{i}"))
            initializers.append(numpy_helper.from_array(b.astype(np.float32), f"{prefix}b{i}"))
            nodes.append(helper.make_node("MatMul", [h, f"{prefix}w{i}"], [f"{prefix}mm{i}"]))
            pre = out if i == last else f"{prefix}pre{i}"
            nodes.append(helper.make_node("Add", [f"{prefix}mm{i}", f"{prefix}b{i}"], [pre]))
            if i < last:
                nodes.append(helper.make_node(policy.activation.capitalize(), [pre], [f"{prefix}h{i}"]))
                h = f"{prefix}h{i}"

    if policy.route_index is None:
        mlp(policy.weights, policy.biases, "", mlp_out)
    else:  # the towers (agents.policies.towers): both run, and each row takes its own
        mlp(policy.weights, policy.biases, "", "tower0_logits")
        mlp(policy.tower_weights, policy.tower_biases, "tower1_", "tower1_logits")
        initializers += [
            numpy_helper.from_array(np.array([policy.route_index], dtype=np.int64), "route_index"),
            numpy_helper.from_array(np.array([0.5], dtype=np.float32), "half"),
        ]
        nodes += [
            helper.make_node("Gather", ["observation", "route_index"], ["route"], axis=1),  # [batch, 1]
            helper.make_node("GreaterOrEqual", ["route", "half"], ["routed"]),
            helper.make_node("Where", ["routed", "tower1_logits", "tower0_logits"], [mlp_out]),
        ]
    if policy.skip_index is not None:  # the stakes skip (agents.policies.stakes): logits[:, a] += sum_k w_k obs[:, index[k, a]]
        index, weight = policy.skip_index, policy.skip_weight
        initializers += [
            numpy_helper.from_array(index.astype(np.int64), "skip_index"),
            numpy_helper.from_array(weight.reshape(1, -1).astype(np.float32), "skip_weight"),
            numpy_helper.from_array(np.array([0, 0, 0, n_act - index.shape[1]], dtype=np.int64), "skip_pads"),
        ]
        nodes += [
            helper.make_node("Gather", ["observation", "skip_index"], ["skip_segments"], axis=1),  # [batch, K, A]
            helper.make_node("MatMul", ["skip_weight", "skip_segments"], ["skip_3d"]),  # [batch, 1, A]
            helper.make_node("Squeeze", ["skip_3d", "axis1"], ["skip_moves"]),
            helper.make_node("Pad", ["skip_moves", "skip_pads"], ["skip"]),  # zeros for Yaniv and slamdown
            helper.make_node("Add", ["mlp_logits", "skip"], ["logits"]),
        ]
    # The stall rule (agents.policies.stall): past its turns, the call alone where it is legal, else no
    # pile draw while another move is legal.
    columns = stall_columns(n_obs)
    if columns is None:
        raise ValueError(f"the policy takes {n_obs} inputs: no observation layout has that size")
    turn_index, pile, yaniv = columns
    only_call = np.zeros(n_act, dtype=bool)
    only_call[yaniv] = True
    initializers += [
        numpy_helper.from_array(np.array([turn_index], dtype=np.int64), "stall_turn_index"),
        numpy_helper.from_array(np.array([1.0], dtype=np.float32), "one"),
        numpy_helper.from_array(np.array([0.0], dtype=np.float32), "zero"),
        numpy_helper.from_array(~pile, "not_pile"),
        numpy_helper.from_array(pile, "pile"),
        numpy_helper.from_array(np.array([yaniv], dtype=np.int64), "yaniv_index"),
        numpy_helper.from_array(only_call, "only_call"),
    ]
    nodes += [
        helper.make_node("Gather", ["observation", "stall_turn_index"], ["turn"], axis=1),  # [batch, 1]
        helper.make_node("GreaterOrEqual", ["turn", "one"], ["stalled"]),
        helper.make_node("And", ["action_mask", "not_pile"], ["unstalled_mask"]),
        helper.make_node("Cast", ["unstalled_mask"], ["unstalled_float"], to=TensorProto.FLOAT),
        helper.make_node("ReduceMax", ["unstalled_float"], ["unstalled_any_float"], axes=[1], keepdims=1),
        helper.make_node("Greater", ["unstalled_any_float", "zero"], ["unstalled_any"]),
        helper.make_node("And", ["stalled", "unstalled_any"], ["use_stall_rule"]),
        helper.make_node("And", ["use_stall_rule", "pile"], ["stalled_pile"]),  # mask & ~(use & pile)
        helper.make_node("Not", ["stalled_pile"], ["not_stalled_pile"]),
        helper.make_node("And", ["action_mask", "not_stalled_pile"], ["drawn_mask"]),
        helper.make_node("Gather", ["action_mask", "yaniv_index"], ["call_legal"], axis=1),  # [batch, 1]
        helper.make_node("And", ["stalled", "call_legal"], ["forced_call"]),
        helper.make_node("And", ["forced_call", "only_call"], ["call_part"]),  # onnxruntime has no bool Where
        helper.make_node("Not", ["forced_call"], ["not_forced_call"]),
        helper.make_node("And", ["not_forced_call", "drawn_mask"], ["drawn_part"]),
        helper.make_node("Or", ["call_part", "drawn_part"], ["played_mask"]),
    ]
    initializers.append(numpy_helper.from_array(np.array([-np.inf], dtype=np.float32), "minus_inf"))
    nodes.append(helper.make_node("Where", ["played_mask", "logits", "minus_inf"], ["masked_logits"]))
    nodes.append(helper.make_node("ArgMax", ["masked_logits"], ["action_2d"], axis=1, keepdims=1))
    nodes.append(helper.make_node("Squeeze", ["action_2d", "axis1"], ["action"]))
    graph = helper.make_graph(
        nodes,
        "yaniv_policy",
        [
            helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", n_obs]),
            helper.make_tensor_value_info("action_mask", TensorProto.BOOL, ["batch", n_act]),
        ],
        [
            helper.make_tensor_value_info("masked_logits", TensorProto.FLOAT, ["batch", n_act]),
            helper.make_tensor_value_info("action", TensorProto.INT64, ["batch"]),
        ],
        initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="yaniv-rl agents.policies.export"
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def bot_metadata(policy: NumpyPolicy, model_bytes: bytes, source: Path | None) -> dict[str, Any]:
    from yaniv.protocol import rules_to_json

    hand_size = hand_size_for(policy)
    rules = get_rules(policy.meta.get("rules", "default"))
    if rules.hand_size != hand_size:
        rules = rules.replace(hand_size=hand_size)
    table = action_table(hand_size)
    hidden = [int(w.shape[1]) for w in policy.weights[:-1]]
    network: dict[str, Any] = {"hidden": hidden, "activation": policy.activation}
    if policy.route_index is not None:
        network["towers"] = {
            "route": policy.route_feature,
            "index": policy.route_index,
            "doc": "agents.policies.towers: rows with observation[index] >= 0.5 play tower 1, the others tower 0",
        }
    if policy.skip_index is not None:
        network["stakes_skip"] = {
            "segments": list(SKIP_SEGMENTS),
            "weights": [float(w) for w in policy.skip_weight],
            "doc": "agents.policies.stakes: logits[a] += sum_k weights[k] * segment_k[a], for every discard-and-draw a",
        }
    return {
        "format": BOT_FORMAT,
        "model": MODEL_FILE,
        "model_sha256": _sha256(model_bytes),
        "inputs": {"observation": ["batch", policy.observation_size], "action_mask": ["batch", policy.num_actions]},
        "outputs": {"masked_logits": ["batch", policy.num_actions], "action": ["batch"]},
        "observation": {
            "layout_version": LAYOUT_VERSION,
            "size": policy.observation_size,
            "segments": [[name, size] for name, size in observation_layout(hand_size)],
            "doc": "yaniv_env.encoding (module docstring)",
        },
        "actions": {
            "size": table.size,
            "hand_size": hand_size,
            "draw_sources": DRAW_SOURCES,
            "discard": f"(m - 1) * {DRAW_SOURCES} + d for slot subset bit mask m (1..{table.num_subsets}) "
                       f"and draw source d (0 deck, 1..{DRAW_SOURCES - 1} drawable pile cards)",
            "yaniv": table.yaniv,
            "slamdown": table.slamdown,
            "keep": table.keep,
        },
        "rules": rules_to_json(rules),
        "network": network,
        "training": {k: v for k, v in policy.meta.items() if k != "rules"},
        "source": None if source is None else {"file": source.name, "sha256": _sha256(source.read_bytes())},
    }


def export_policy(policy: NumpyPolicy, out_dir: str | Path, source: Path | None = None) -> Path:
    """Write ``model.onnx`` and ``bot.json`` into ``out_dir`` (created if needed); returns the folder.

    Both files are written to temporary names first and renamed into place, so an interrupted export
    never leaves a half-written bot where a good one was.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a folder")
    model_bytes = onnx_model(policy).SerializeToString()
    meta = bot_metadata(policy, model_bytes, source)
    out.mkdir(parents=True, exist_ok=True)
    for name, data in ((MODEL_FILE, model_bytes), (META_FILE, (json.dumps(meta, indent=2) + "\n").encode())):
        tmp = out / (name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(out / name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agents.policies.export",
        description="Export a trained policy as ONNX + bot.json (loadable with onnxruntime alone).",
    )
    parser.add_argument(
        "checkpoint", type=Path, help="policy weights (.npz) or an SB3 checkpoint (.zip, with --trust-pickle)"
    )
    parser.add_argument("out_dir", type=Path, help="folder for model.onnx and bot.json")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="allow an SB3 checkpoint (a pickle that can run code when loaded): trusted files only")
    args = parser.parse_args(argv)
    try:
        policy = load_policy(args.checkpoint, trust_pickle=args.trust_pickle)
        out = export_policy(policy, args.out_dir, source=args.checkpoint)
    except ValueError as error:
        print(f"export: {error}", file=sys.stderr)
        return 2
    meta = json.loads((out / META_FILE).read_text())
    print(
        f"wrote {out / MODEL_FILE} ({(out / MODEL_FILE).stat().st_size // 1024} KiB) and {out / META_FILE}: "
        f"{meta['observation']['size']} observations -> {meta['actions']['size']} actions, "
        f"hidden {meta['network']['hidden']} {meta['network']['activation']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
