"""Decision latency of a trained bot: the exported ONNX model against the SB3 checkpoint it came from.

    python benchmarks/bot_latency.py [--bot DIR] [--checkpoint ZIP] [--states 400]

Times every decision on the same protocol states (the player to move in random 2- and 4-player
games), pinned to one core with one torch / onnxruntime thread, in CPU time of this process, and
prints the median and 90th percentile in milliseconds:

* ``forward``: observation and mask in, action out. The exported model (onnxruntime), the
  checkpoint (SB3 ``MaskablePPO.predict`` with torch), and the numpy forward pass that self-play
  opponents use.
* ``choose``: a JSON state in, a JSON move out, as ``agents.serving`` answers: reading and checking
  the state, rebuilding the position, the observation, the forward pass, checking the move.

``--bot`` defaults to the bot shipped with the package; ``--checkpoint`` to runs/default's
best.zip when it exists. Without a checkpoint, a MaskablePPO model of the bot's shape with fresh
weights stands in for it (latency depends on the shape, not on the weights).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from agents import make_agent
from agents.policies.onnx import ExportedPolicy, default_bot_dir
from agents.policies.ppo import NumpyPolicy, PPOAgent
from agents.serving.bots import Bot
from yaniv import Game
from yaniv.protocol import game_from_state, state_for
from yaniv_env.encoding import Observer

ROOT = Path(__file__).resolve().parent.parent


class TorchPolicy:
    """An SB3 checkpoint behind the policy interface PPOAgent plays with."""

    def __init__(self, model):
        self.model = model
        self.observation_size = model.observation_space.shape[0]
        self.num_actions = model.action_space.n

    def act(self, observation, mask, rng=None):
        action, _ = self.model.predict(observation, action_masks=mask.astype(bool), deterministic=True)
        return int(action)


def collect_states(count: int) -> list[dict]:
    states: list[dict] = []
    seed = 0
    while len(states) < count:
        players = 2 if seed % 2 == 0 else 4
        game = Game(players, seed=seed, single_round=True)
        agent = make_agent("greedy", seed=seed)
        while not game.is_over and len(states) < count:
            states.append(json.loads(json.dumps(state_for(game, game.current))))
            game.apply(agent.act(game.view(game.current)))
        seed += 1
    return states


def timed(fn, items) -> list[float]:
    clock = time.process_time
    out = []
    for item in items:
        start = clock()
        fn(item)
        out.append(clock() - start)
    return out


def report(label: str, times: list[float]) -> None:
    ms = sorted(t * 1e3 for t in times)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    print(f"{label:<34} median {statistics.median(ms):7.3f} ms   p90 {p90:7.3f} ms   ({len(ms)} decisions)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", type=Path, default=default_bot_dir(), help="exported bot folder")
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "runs/default/checkpoints/best.zip")
    parser.add_argument("--states", type=int, default=400, help="decisions to time (default: 400)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    exported = ExportedPolicy(args.bot)
    if args.checkpoint.is_file():
        model = MaskablePPO.load(args.checkpoint, device="cpu")
        source = str(args.checkpoint)
    else:
        from yaniv_env.gym_env import YanivGymEnv

        meta = exported.meta["network"]
        activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[meta["activation"]]
        model = MaskablePPO("MlpPolicy", YanivGymEnv(num_players=2), device="cpu",
                            policy_kwargs={"net_arch": meta["hidden"], "activation_fn": activation})
        source = f"fresh MaskablePPO {meta['hidden']} {meta['activation']} (no checkpoint at {args.checkpoint})"
    numpy_policy = NumpyPolicy.from_sb3(model)
    states = collect_states(args.states)
    inputs = []
    for state in states:
        game = game_from_state(state, 0)
        observer = Observer(game.rules, game.num_players)
        view = game.view(game.current)
        inputs.append((observer.observe(view), observer.action_mask(view)))
    print(f"bot: {args.bot}\ncheckpoint: {source}\none core, 1 thread, CPU time")
    torch_policy = TorchPolicy(model)
    for _ in range(2):  # warm-up pass, then the timed one
        forward = {
            "forward  exported (onnxruntime)": timed(lambda x: exported.act(*x), inputs),
            "forward  checkpoint (SB3 + torch)": timed(lambda x: torch_policy.act(*x), inputs),
            "forward  numpy": timed(lambda x: numpy_policy.act(*x), inputs),
        }
        exported_bot = Bot(PPOAgent(exported, 0), "exported")
        checkpoint_bot = Bot(PPOAgent(torch_policy, 0), "checkpoint")
        choose = {
            "choose   exported (onnxruntime)": timed(exported_bot.choose, states),
            "choose   checkpoint (SB3 + torch)": timed(checkpoint_bot.choose, states),
        }
    for label, times in {**forward, **choose}.items():
        report(label, times)


if __name__ == "__main__":
    main()
