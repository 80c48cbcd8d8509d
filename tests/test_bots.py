"""Bots for other programs: load_bot, the ONNX export, the stdin/stdout server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents import load_bot, make_agent
from agents.policies.onnx import ExportedPolicy
from agents.policies.export import export_policy, main as export_main
from agents.policies.ppo import NumpyPolicy, PPOAgent, load_policy, policy_file_kind
from agents.registry import check_spec
from agents.serving.server import main as serve_main
from yaniv import Game
from yaniv.protocol import ProtocolError, apply_move, state_for
from yaniv_env.encoding import Observer

ROOT = Path(__file__).resolve().parent.parent


def play_through_bots(bots, num_players=3, seed=0, moves=150):
    """A game whose every move is a bot's answer to the protocol state; returns the states seen."""
    game = Game(num_players, seed=seed)
    states = []
    for _ in range(moves):
        if game.is_over:
            break
        state = json.loads(json.dumps(state_for(game, game.current)))
        states.append(state)
        apply_move(game, bots[game.current % len(bots)].choose(state))
    return states


@pytest.mark.parametrize("spec", ["random", "greedy", "heuristic", "search:8", "default"])
def test_every_bot_answers_states_with_legal_moves(spec):
    states = play_through_bots([load_bot(spec, seed=1), load_bot("random")], moves=60)
    assert len(states) >= 30


def test_the_same_state_gets_the_same_move():
    state = state_for(Game(4, seed=9), 0)
    for spec in ("random", "search:8", "default"):
        assert load_bot(spec, seed=3).choose(state) == load_bot(spec, seed=3).choose(json.dumps(state))


def test_a_bot_refuses_states_it_cannot_answer():
    bot = load_bot("greedy")
    game = Game(3, seed=2)
    with pytest.raises(ProtocolError, match="a bot moves only on its own turn"):
        bot.choose(state_for(game, (game.current + 1) % 3))
    with pytest.raises(ProtocolError, match="not JSON"):
        bot.choose("{'hand': }")


@pytest.mark.parametrize(
    "spec,words",
    [("alphago", "unknown agent"), ("ppo:nowhere.npz", "no policy file"), ("onnx:/nonexistent", "no exported bot"),
     ("search:zero", "search budget")],
)
def test_bad_bot_specs_are_named(spec, words):
    with pytest.raises(ValueError, match=words):
        load_bot(spec)


# ---------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A small MaskablePPO checkpoint whose weights are spread out, so its logits rarely tie."""
    import torch
    from sb3_contrib import MaskablePPO

    from yaniv_env.gym_env import YanivGymEnv

    torch.manual_seed(0)
    env = YanivGymEnv(num_players=3)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [32, 32]}, seed=0, device="cpu")
    with torch.no_grad():
        for p in model.policy.parameters():
            p.normal_(0.0, 0.3)
    path = tmp_path_factory.mktemp("ckpt") / "model.zip"
    model.save(path)
    return path


def test_an_exported_bot_picks_the_checkpoints_moves(checkpoint, tmp_path):
    """On 600 positions of 2-4 player games the ONNX bot and the SB3 checkpoint choose the same action
    (the checkpoint under the stall rule, which every player of a policy applies and SB3 does not)."""
    from sb3_contrib import MaskablePPO

    from agents.policies.stall import stall_masks

    assert export_main([str(checkpoint), str(tmp_path / "bot"), "--trust-pickle"]) == 0
    exported = ExportedPolicy(tmp_path / "bot")
    model = MaskablePPO.load(checkpoint, device="cpu")
    compared = 0
    for num_players in (2, 3, 4):
        observer = Observer(Game(num_players).rules, num_players)
        game, agent = Game(num_players, seed=num_players), make_agent("random", seed=0)
        while compared < 200 * (num_players - 1):
            if game.is_over:
                game = Game(num_players, seed=compared)
            view = game.view(game.current)
            obs, mask = observer.observe(view), observer.action_mask(view)
            theirs, _ = model.predict(obs, action_masks=stall_masks(obs, mask), deterministic=True)
            assert exported.act(obs, mask) == int(theirs)
            compared += 1
            game.apply(agent.act(game.view(game.current)))
    # Batches give the same answers as single observations.
    view = game.view(game.current)
    obs = np.stack([observer.observe(view)] * 3)
    masks = np.stack([observer.action_mask(view)] * 3)
    assert np.array_equal(exported.masked_logits(obs, masks)[1], exported.masked_logits(obs[0], masks[0]))


def test_exported_bots_load_without_torch_or_sb3(tmp_path):
    export_policy(_policy(), tmp_path / "bot")
    state = json.dumps(state_for(Game(3, seed=4), 0))
    code = (
        "import sys, json\n"
        "for name in ('torch', 'stable_baselines3', 'sb3_contrib'):\n"
        "    sys.modules[name] = None  # any import of them now fails\n"
        "from agents import load_bot\n"
        f"print(json.dumps(load_bot({str(tmp_path / 'bot')!r}).choose({state!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["action"] in ("discard", "yaniv")


def _policy(hidden=16, seed=0):
    rng = np.random.default_rng(seed)
    observer = Observer(Game(2).rules, 2)
    sizes = [observer.size, hidden, hidden, observer.table.size]
    weights = [rng.normal(0, 0.3, (o, i)).astype(np.float32) for i, o in zip(sizes, sizes[1:])]
    biases = [rng.normal(0, 0.1, o).astype(np.float32) for o in sizes[1:]]
    return NumpyPolicy(weights, biases, "relu", {"rules": "german"})


def test_export_writes_the_metadata_a_loader_needs(tmp_path):
    policy = _policy()
    export_policy(policy, tmp_path)
    meta = json.loads((tmp_path / "bot.json").read_text())
    assert meta["format"] == "yaniv-bot/1" and meta["rules"] == "german"
    observer = Observer(Game(2).rules, 2)
    assert meta["actions"]["size"] == observer.table.size and meta["actions"]["yaniv"] == observer.table.yaniv
    assert sum(size for _, size in meta["observation"]["segments"]) == meta["observation"]["size"] == observer.size
    assert meta["network"] == {"hidden": [16, 16], "activation": "relu"}
    game = Game(2, seed=1)
    obs, mask = observer.observe(game.view(0)), observer.action_mask(game.view(0))
    exported = ExportedPolicy(tmp_path).masked_logits(obs, mask)
    np.testing.assert_allclose(exported, policy.masked_logits(obs, mask), rtol=1e-5, atol=1e-5)


def test_damaged_exports_are_refused_by_name(tmp_path):
    export_policy(_policy(), tmp_path / "bot")
    model = tmp_path / "bot" / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="does not match the checksum"):
        ExportedPolicy(tmp_path / "bot")
    meta = tmp_path / "bot" / "bot.json"
    meta.write_text("{not json")
    with pytest.raises(ValueError, match="bot.json is not valid JSON"):
        load_bot(str(tmp_path / "bot"))
    export_policy(_policy(), tmp_path / "bot")
    text = json.loads(meta.read_text())
    text["observation"]["layout_version"] = 0
    meta.write_text(json.dumps(text))
    with pytest.raises(ValueError, match="layout version 0"):
        ExportedPolicy(tmp_path / "bot")


def test_export_cli_names_a_bad_checkpoint_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "broken.zip"
    bad.write_bytes(b"PK\x03\x04 not a checkpoint")
    out = tmp_path / "out"
    assert export_main([str(bad), str(out)]) == 2
    assert "broken.zip" in capsys.readouterr().err
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------


def test_serve_answers_each_line_and_survives_bad_ones():
    game = Game(3, seed=6)
    good = state_for(game, game.current)
    impossible = dict(good, hand=good["hand"][:-1])
    duplicate = dict(good, hand=[good["hand"][0]] * len(good["hand"]))
    unknown_card = dict(good, hand=["ZZ"] + good["hand"][1:])
    lines = [json.dumps(good), "{broken", "", json.dumps(impossible), json.dumps(duplicate), json.dumps(unknown_card),
             json.dumps({"id": 7, "state": good}), json.dumps(good)]
    out = subprocess.run(
        [sys.executable, "-m", "agents.serving", "--bot", "greedy", "--id"],
        input="\n".join(lines) + "\n", capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(replies) == 7  # the blank line is skipped
    move = replies[0]
    assert move["action"] in ("discard", "yaniv")
    assert "not JSON" in replies[1]["error"]
    assert "hand holds 4 cards" in replies[2]["error"]
    assert "twice" in replies[3]["error"]
    assert "unknown card 'ZZ'" in replies[4]["error"]
    assert replies[5] == {"id": 7, **move} and replies[6] == move
    apply_move(game, move)  # the answer is a legal move of the real game


def test_serve_reports_a_bot_it_cannot_load():
    out = subprocess.run([sys.executable, "-m", "agents.serving", "--bot", "ppo:missing.npz"],
                         input="", capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 2 and "no policy file" in out.stderr and out.stdout == ""


def test_serve_survives_hostile_lines_and_names_each_problem():
    """Issue 18, items 1-6: each line gets one error naming what is wrong, and the server keeps serving."""
    game = Game(3, seed=6)
    good = state_for(game, game.current)
    text = json.dumps(good)
    lines = [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b"[" * 100_000,
        text.replace(f'"seat": {good["seat"]}', '"seat": ' + "9" * 5000).encode(),
        text.replace(f'"turn": {good["turn"]}', '"turn": 1' + "0" * 300).encode(),
        b"\xff",
        text.encode()[:100] + b"\xc3\x28" + text.encode()[100:],
        b"x" * (3 << 20),  # over the default limit of 1 MiB
        json.dumps(dict(good, hand=[good["hand"][0]] * 40_000)).encode(),
        json.dumps(dict(good, rules={"preset": {"preset": "default"}})).encode(),
        json.dumps({"id": None, "state": good}).encode(),
        json.dumps({"id": None, "state": dict(good, turn=-1)}).encode(),
        text.encode(),
    ]
    out = subprocess.run(
        [sys.executable, "-m", "agents.serving", "--bot", "greedy", "--id"],
        input=b"\n".join(lines) + b"\n", capture_output=True, cwd=ROOT, timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8"},
    )
    assert out.returncode == 0, out.stderr.decode()
    replies = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert len(replies) == len(lines)
    words = ["nested", "nested", "nested", "seat: expected an integer", "turn: expected an integer", "not UTF-8",
             "not UTF-8", "longer than the limit of 1048576", "hand: 40000 cards", "rules.preset"]
    for reply, word in zip(replies, words):
        assert word in reply["error"] and len(reply["error"]) < 400, (word, reply)
    move = replies[-1]
    assert move["action"] in ("discard", "yaniv")
    assert replies[-3] == {"id": None, **move}
    assert set(replies[-2]) == {"id", "error"} and replies[-2]["id"] is None and "turn" in replies[-2]["error"]


def test_serve_takes_a_line_limit():
    good = json.dumps(state_for(Game(3, seed=6), 0))
    out = subprocess.run([sys.executable, "-m", "agents.serving", "--bot", "random", "--max-line-bytes", "100"],
                         input=good + "\n" + "[]\n", capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert "longer than the limit of 100" in replies[0]["error"] and "state" in replies[1]["error"]
    for bad in ("0", "-5", "x"):
        with pytest.raises(SystemExit) as exit_info:
            serve_main(["--max-line-bytes", bad])
        assert exit_info.value.code == 2


# ---------------------------------------------------------------------------------------------
# Loading bots from strangers (issue 18, items 7-8): no pickle without trust, every field checked
# ---------------------------------------------------------------------------------------------


class _Touch:
    """Unpickling this creates a file: the proof that loading ran code from the file."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _forged_checkpoint(path: Path, marker: Path) -> Path:
    """An SB3-shaped zip whose "data" holds a pickle that runs code when SB3 loads it."""
    import base64
    import pickle
    import zipfile

    evil = base64.b64encode(pickle.dumps(_Touch(marker))).decode()
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps({"policy_class": {":type:": "x", ":serialized:": evil}}))
        archive.writestr("_stable_baselines3_version", "2.0.0")
    return path


@pytest.mark.parametrize("suffix", [".zip", ".pt", ".npz", ".bin"])
def test_a_forged_checkpoint_runs_no_code_without_the_trust_switch(tmp_path, suffix, capsys):
    marker = tmp_path / "pwned"
    forged = _forged_checkpoint(tmp_path / f"model{suffix}", marker)
    for load in (lambda: load_bot(str(forged)), lambda: load_bot(f"ppo:{forged}"),
                 lambda: make_agent(f"ppo:{forged}"), lambda: check_spec(str(forged))):
        with pytest.raises(ValueError) as error:
            load()
        assert str(forged) in str(error.value) and "trust_pickle=True" in str(error.value)
        assert ".npz" in str(error.value) and "agents.policies.export" in str(error.value)
    assert serve_main(["--bot", str(forged)]) == 2
    assert "--trust-pickle" in capsys.readouterr().err
    assert export_main([str(forged), str(tmp_path / "out")]) == 2
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_a_trusted_checkpoint_loads_by_content_whatever_its_suffix(checkpoint, tmp_path):
    renamed = tmp_path / "model.pt"
    renamed.write_bytes(checkpoint.read_bytes())
    for path in (checkpoint, renamed):
        assert policy_file_kind(path) == "pickle"
        with pytest.raises(ValueError, match="trust_pickle=True"):
            load_policy(path)
        assert load_policy(path, trust_pickle=True).num_actions > 0
        assert isinstance(make_agent(str(path), trust_pickle=True), PPOAgent)
    weights = tmp_path / "weights.zip"  # an .npz under another name is still weights: no trust needed
    _policy().save(weights)
    assert policy_file_kind(weights) == "weights" and load_policy(weights).num_actions > 0


def _break_meta(folder: Path, change) -> None:
    """``change(meta)`` edits bot.json's object in place, or returns the bytes to write instead."""
    meta = json.loads((folder / "bot.json").read_text())
    data = change(meta)
    (folder / "bot.json").write_bytes(data if isinstance(data, bytes) else json.dumps(meta).encode())


BAD_BOT_JSON = [
    ("hand_size a string", lambda m: m["actions"].update(hand_size="5"), "actions.hand_size must be an integer"),
    ("hand_size of 40", lambda m: m["actions"].update(hand_size=40), "actions.hand_size must be from 4 to 7"),
    ("size a float", lambda m: m["observation"].update(size=1.5), "observation.size must be an integer"),
    ("layout version a string", lambda m: m["observation"].update(layout_version="4"),
     "observation.layout_version must be an integer"),
    ("observation a list", lambda m: m.update(observation=[1]), "missing field observation.layout_version"),
    ("null checksum", lambda m: m.update(model_sha256=None), "model_sha256 must be a string"),
    ("missing checksum", lambda m: m.pop("model_sha256") and None, "missing field model_sha256"),
    ("rules of 10^300", lambda m: m.update(rules={"score_limit": 10**300}), "rules.score_limit"),
    ("100k nesting", lambda m: b"[" * 100_000 + b"]" * 100_000, "nested 100000 deep"),
    ("not UTF-8", lambda m: b'{"format": "\xff"}', "not UTF-8"),
]


@pytest.mark.parametrize("name,change,words", BAD_BOT_JSON, ids=[b[0] for b in BAD_BOT_JSON])
def test_a_damaged_bot_json_is_refused_by_field_with_exit_status_2(tmp_path, capsys, name, change, words):
    folder = export_policy(_policy(), tmp_path / "bot")
    _break_meta(folder, change)
    with pytest.raises(ValueError) as error:
        load_bot(str(folder))
    assert words in str(error.value) and "bot.json" in str(error.value)
    assert serve_main(["--bot", str(folder)]) == 2
    assert words in capsys.readouterr().err


def test_weights_with_arrays_this_version_does_not_read_are_refused_by_name(tmp_path):
    policy = _policy()
    arrays = {f"w{i}": w.T for i, w in enumerate(policy.weights)} | {f"b{i}": b for i, b in enumerate(policy.biases)}
    meta = np.array(json.dumps({"activation": "relu", "layers": 3}))
    np.savez(tmp_path / "good.npz", meta=meta, **arrays)
    good = NumpyPolicy.load(tmp_path / "good.npz")  # the control: the same arrays, nothing more, load as they were
    for mine, theirs in zip(good.weights + good.biases, policy.weights + policy.biases):
        np.testing.assert_array_equal(mine, theirs)
    # e.g. a network part a newer version adds: played without it the file would be another policy
    np.savez(tmp_path / "newer.npz", meta=meta, film0=np.zeros((2, 22, 8), np.float32), **arrays)
    with pytest.raises(ValueError, match="newer.npz: arrays this version does not know: film0"):
        load_bot(str(tmp_path / "newer.npz"))
    np.savez(tmp_path / "extra.npz", meta=meta, w3=np.zeros((4, 4), np.float32), **arrays)  # a layer past "layers"
    with pytest.raises(ValueError, match="extra.npz: arrays this version does not know: w3"):
        load_bot(str(tmp_path / "extra.npz"))


def test_nan_weights_are_refused_at_load(tmp_path):
    for layer, part in ((0, "weights"), (2, "biases")):
        policy = _policy()
        getattr(policy, part)[layer][0] = np.nan if part == "weights" else np.inf
        np.savez(tmp_path / "bad.npz", meta=np.array(json.dumps({"activation": "relu", "layers": 3})),
                 **{f"w{i}": w.T for i, w in enumerate(policy.weights)}, **{f"b{i}": b for i, b in enumerate(policy.biases)})
        with pytest.raises(ValueError, match=rf"bad.npz: layer {layer}: its (weights|bias) hold NaN"):
            load_bot(str(tmp_path / "bad.npz"))
    folder = export_policy(policy, tmp_path / "bot")  # an ONNX model whose initializers hold NaN and infinity
    with pytest.raises(ValueError, match="model.onnx gives NaN or infinite logits"):
        load_bot(str(folder))
