"""Agents by name: the specs that evaluate.py, training configs and load_bot-style callers use.

=====================  ============================================================
spec                   agent
=====================  ============================================================
``random``             ``RandomAgent``: uniform over the legal moves
``greedy``             ``GreedyAgent``
``heuristic``          ``HeuristicAgent``
``heuristic:K=V,...``  ``HeuristicAgent`` with some of its number parameters set, e.g.
                       ``heuristic:call_risk=0.1`` (a more cautious caller)
``search``             ``SearchAgent`` with its default budget
``search:N``           ``SearchAgent`` with N rollouts per decision
``ppo:PATH``           ``PPOAgent`` playing the policy in PATH: weights (``.npz``, safe to load)
                       or an SB3 checkpoint (``.zip``, a pickle: trusted files only)
``onnx:DIR``           ``PPOAgent`` playing an exported bot (``python -m agents.policies.export``)
                       with onnxruntime
``default``            the exported bot shipped with the package
=====================  ============================================================
"""

from __future__ import annotations

import math
from pathlib import Path

from agents.base import Agent

AGENT_NAMES = ("random", "greedy", "heuristic", "search", "ppo", "onnx", "default")


def check_spec(spec: str) -> None:
    """Raise ValueError naming the problem if ``spec`` cannot make an agent (loads nothing heavy)."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'heuristic' or 'ppo:PATH', got {spec!r}")
    name, sep, arg = spec.partition(":")
    if name not in AGENT_NAMES:
        raise ValueError(f"unknown agent {spec!r}; known: {', '.join(AGENT_NAMES)} (ppo:PATH, onnx:DIR, search:BUDGET, "
                         "heuristic:K=V)")
    if name == "search" and sep:
        if not arg.isdigit() or int(arg) < 1:
            raise ValueError(f"agent {spec!r}: the search budget must be a whole number >= 1")
    elif name == "heuristic" and sep:
        heuristic_parameters(spec)
    elif name == "ppo":
        if not arg:
            raise ValueError("agent 'ppo' needs a policy file: ppo:PATH")
        if not Path(arg).is_file():
            raise ValueError(f"agent {spec!r}: no policy file at {arg}")
    elif name == "onnx":
        from agents.serving.bots import is_exported_bot

        if not is_exported_bot(arg):
            raise ValueError(f"agent {spec!r}: no exported bot (bot.json + model.onnx) in {arg or 'the folder'!r}")
    elif sep:
        raise ValueError(f"agent {spec!r}: {name} takes no argument")
    elif name == "default":
        from agents.serving.bots import default_bot_dir, is_exported_bot

        if not is_exported_bot(default_bot_dir()):
            raise ValueError(f"the default bot is missing from this installation (expected in {default_bot_dir()})")


def heuristic_parameters(spec: str) -> dict[str, float | int]:
    """The keyword arguments of a ``heuristic:K=V,...`` spec, checked against ``HeuristicAgent``'s
    number parameters (ValueError naming the key or value otherwise)."""
    import inspect

    from agents.baselines.heuristic import HeuristicAgent

    numbers = {
        p.name: type(p.default)
        for p in inspect.signature(HeuristicAgent.__init__).parameters.values()
        if p.kind is p.KEYWORD_ONLY and type(p.default) in (int, float)
    }
    _, sep, arg = spec.partition(":")
    out: dict[str, float | int] = {}
    for item in arg.split(",") if sep else ():
        key, eq, text = (part.strip() for part in item.partition("="))
        if not eq or key not in numbers:
            raise ValueError(f"agent {spec!r}: {item!r} is not K=V with K one of {', '.join(numbers)}")
        try:
            value = numbers[key](text)
        except ValueError:
            raise ValueError(f"agent {spec!r}: {key} must be {'a whole number' if numbers[key] is int else 'a number'}"
                             f", got {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"agent {spec!r}: {key} must be a finite number >= 0, got {text!r}")
        out[key] = value
    return out


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """The agent a spec names (see the module docstring); ValueError naming the problem otherwise."""
    check_spec(spec)
    name, _, arg = spec.partition(":")
    if name == "random":
        from agents.baselines.random_agent import RandomAgent

        return RandomAgent(seed)
    if name == "greedy":
        from agents.baselines.greedy import GreedyAgent

        return GreedyAgent(seed)
    if name == "heuristic":
        from agents.baselines.heuristic import HeuristicAgent

        agent = HeuristicAgent(seed, **heuristic_parameters(spec))
        agent.name = spec
        return agent
    if name == "search":
        from agents.baselines.search import SearchAgent

        return SearchAgent(seed, budget=int(arg)) if arg else SearchAgent(seed)
    from agents.policies.ppo import PPOAgent

    if name in ("onnx", "default"):
        from agents.serving.bots import ExportedPolicy, default_bot_dir

        return PPOAgent(ExportedPolicy(arg or default_bot_dir()), seed, name=spec)
    from agents.policies.ppo import load_policy

    return PPOAgent(load_policy(arg), seed, name=spec)
