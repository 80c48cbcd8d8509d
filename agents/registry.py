"""Agents by name: the one place that turns a spec such as ``"search:64"`` into an agent.

>>> from agents.registry import make_agent, check_spec, specs_help
>>> agent = make_agent("heuristic:call_risk=0.1", seed=0)
>>> check_spec("search:many")                           # doctest: +SKIP
ValueError: agent 'search:many': the search budget must be a whole number >= 1
>>> print(specs_help())                                 # doctest: +SKIP

A spec is ``NAME`` or ``NAME:ARGUMENT``, NAME one of the registered names (``agent_names()``;
``specs_help()`` lists them with their arguments, and every command line's ``--help`` prints it),
or a bare path, which ``path_spec`` reads as:

* an exported bot (a folder with ``bot.json`` and ``model.onnx``, or one of those two files):
  ``onnx:DIR``;
* a run folder holding ``policy.npz`` (train.py's best policy): ``ppo:DIR/policy.npz``;
* anything else that exists, has a ``.npz``/``.zip`` suffix or a folder separator: ``ppo:PATH``
  (so a missing file is reported as a missing policy file).

``evaluate.py`` and the tournament, training's baselines and imitation bots, the terminal game
(``agents.play``), ``load_bot`` and the stdio server (``agents.serving``) all resolve specs here,
so a bot registered once is known to all of them::

    register("first", lambda spec, seed: FirstMoveAgent(seed), help="always the first legal move")

Contract: ``check_spec`` (``parse_spec``) checks a spec without loading anything heavy (no policy
is read, no onnxruntime or torch imported), and raises ValueError naming the spec and the problem;
``make_agent`` builds the agent, seeded with ``seed``. Registered names come before paths: a
folder named ``random`` is still the random bot; write ``./random`` for the folder.

The trust switch: an SB3 checkpoint (or any pickle-based file, recognised by its content whatever
its suffix) can run code when loaded, so ``check_spec`` and ``make_agent`` refuse it with a
ValueError naming the file and the safe formats unless ``trust_pickle=True`` (``--trust-pickle`` on
the command lines). Exported bots (``onnx:DIR``, ``default``), ``.npz`` weights and the baselines
need no trust: they run no code from any file.
"""

from __future__ import annotations

import inspect
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NamedTuple

from agents.base import Agent

RUN_POLICY_FILE = "policy.npz"  # the best policy in a run folder (train.py)
POLICY_SUFFIXES = (".npz", ".zip")


class Spec(NamedTuple):
    """A checked spec: the text as written, the registered name, and its argument (text and parsed)."""

    text: str
    name: str
    argument: str | None  # the text after ``NAME:`` (a bare path's path); None without one
    value: Any  # the argument as the entry's parser read it
    trust_pickle: bool = False  # whether the user trusts a pickle-based file this spec names

    @property
    def canonical(self) -> str:
        """The spec as ``NAME[:ARGUMENT]``: a bare path written as the spec it stands for."""
        return self.name if self.argument is None else f"{self.name}:{self.argument}"


@dataclass(frozen=True)
class Entry:
    """One registered kind of agent."""

    build: Callable[[Spec, int | None], Agent]  # (the checked spec, seed) -> the agent
    parse: Callable[[str | None], Any]  # the argument (None without one) -> ``Spec.value``; ValueError(reason)
    usage: str  # how the spec is written: "search[:N]"
    help: str  # one line
    check: Callable[[Spec], None] | None = None  # a light check beyond the text (a file's format); ValueError


REGISTRY: dict[str, Entry] = {}


def no_argument(argument: str | None) -> None:
    """The parser of a name that takes no argument."""
    if argument is not None:
        raise ValueError("it takes no argument")


def register(
    name: str,
    build: Callable[[Spec, int | None], Agent],
    *,
    help: str,
    parse: Callable[[str | None], Any] = no_argument,
    usage: str | None = None,
    check: Callable[[Spec], None] | None = None,
) -> None:
    """Make ``name`` a spec: ``build(spec, seed)`` gives the agent, ``parse(argument)`` checks and
    reads the text after ``name:`` (None when there is none; ValueError with the reason otherwise).
    ``usage`` (default: the name) and ``help`` are the line of ``specs_help``. ``check(spec)``, if
    given, checks the parsed spec further without loading anything heavy (a file's format against
    ``spec.trust_pickle``); ValueError with the reason."""
    if not name.isidentifier() or name in REGISTRY:
        raise ValueError(f"cannot register {name!r}: " + ("taken" if name in REGISTRY else "not a plain name"))
    REGISTRY[name] = Entry(build, parse, usage or name, help, check)


def unregister(name: str) -> None:
    """Forget ``name`` (KeyError if it is not registered)."""
    del REGISTRY[name]


def agent_names() -> tuple[str, ...]:
    """The registered names, in registration order."""
    return tuple(REGISTRY)


def specs_help() -> str:
    """The registered specs, one a line with its help, then what a bare path means: for --help texts."""
    width = max(len(entry.usage) for entry in REGISTRY.values())
    lines = [f"  {entry.usage:<{width}}  {entry.help}" for entry in REGISTRY.values()]
    lines.append(f"  {'PATH':<{width}}  an exported bot's folder (onnx:DIR), a run folder with {RUN_POLICY_FILE} or "
                 "a policy file (ppo:PATH)")
    return "agent specs:\n" + "\n".join(lines)


def specs_usage() -> str:
    """The registered specs on one line: "random, greedy, ..., search[:N], ppo:PATH, ... or a path"."""
    return ", ".join(entry.usage for entry in REGISTRY.values()) + " or a path"


def path_spec(text: str) -> str | None:
    """The spec that a bare path stands for (see the module docstring), or None if ``text`` is not a path."""
    from agents.policies.onnx import exported_bot_folder

    path = Path(text)
    folder = exported_bot_folder(path)
    if folder is not None:
        return f"onnx:{folder}"
    if path.is_dir() and (path / RUN_POLICY_FILE).is_file():
        return f"ppo:{path / RUN_POLICY_FILE}"
    if path.exists() or path.suffix in POLICY_SUFFIXES or "/" in text or os.sep in text:
        return f"ppo:{path}"
    return None


def parse_spec(spec: str, *, trust_pickle: bool = False) -> Spec:
    """The checked spec (registered names first, then paths); ValueError naming the spec and the problem.

    A spec naming a pickle-based file is refused unless ``trust_pickle`` (see the module docstring)."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'heuristic' or 'ppo:PATH', got {spec!r}")
    name, sep, argument = spec.partition(":")
    if name not in REGISTRY:
        resolved = path_spec(spec)
        if resolved is None:
            raise ValueError(f"unknown agent {spec!r}; known: {specs_usage()}")
        name, sep, argument = resolved.partition(":")
    entry = REGISTRY[name]
    try:
        checked = Spec(spec, name, argument if sep else None, entry.parse(argument if sep else None), trust_pickle)
        if entry.check is not None:
            entry.check(checked)
    except ValueError as error:
        raise ValueError(f"agent {spec!r}: {error}") from None
    return checked


def check_spec(spec: str, *, trust_pickle: bool = False) -> None:
    """Raise ValueError naming the problem if ``spec`` cannot make an agent (loads nothing heavy);
    a pickle-based file without ``trust_pickle`` is such a problem."""
    parse_spec(spec, trust_pickle=trust_pickle)


def make_agent(spec: str, seed: int | None = None, *, trust_pickle: bool = False) -> Agent:
    """The agent a spec names (see the module docstring); ValueError naming the problem otherwise.

    A pickle-based file (an SB3 checkpoint) is loaded only with ``trust_pickle=True``."""
    checked = parse_spec(spec, trust_pickle=trust_pickle)
    return REGISTRY[checked.name].build(checked, seed)


# ----------------------------------------------------------------------------------------------
# The argument parsers of the built-in names (imports on use: see below)
# ----------------------------------------------------------------------------------------------


def search_budget(argument: str | None) -> int | None:
    """``search:N``: N rollouts per decision (None: the search's default)."""
    if argument is None:
        return None
    if not argument.isdigit() or int(argument) < 1:
        raise ValueError("the search budget must be a whole number >= 1")
    return int(argument)


def heuristic_parameters(argument: str | None) -> dict[str, float | int]:
    """``heuristic:K=V,...``: keyword arguments checked against ``HeuristicAgent``'s number parameters."""
    from agents.baselines.heuristic import HeuristicAgent

    numbers = {
        p.name: type(p.default)
        for p in inspect.signature(HeuristicAgent.__init__).parameters.values()
        if p.kind is p.KEYWORD_ONLY and type(p.default) in (int, float)
    }
    out: dict[str, float | int] = {}
    for item in argument.split(",") if argument is not None else ():
        key, eq, text = (part.strip() for part in item.partition("="))
        if not eq or key not in numbers:
            raise ValueError(f"{item!r} is not K=V with K one of {', '.join(numbers)}")
        try:
            value = numbers[key](text)
        except ValueError:
            raise ValueError(f"{key} must be {'a whole number' if numbers[key] is int else 'a number'}, "
                             f"got {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{key} must be a finite number >= 0, got {text!r}")
        out[key] = value
    return out


def policy_file(argument: str | None) -> Path:
    """``ppo:PATH``: an existing policy file (read only when the agent is built)."""
    if not argument:
        raise ValueError("needs a policy file: ppo:PATH")
    if not Path(argument).is_file():
        raise ValueError(f"no policy file at {argument}")
    return Path(argument)


def trusted_policy_file(spec: Spec) -> None:
    """``ppo:PATH``'s check: a pickle-based file (by its content) only with ``spec.trust_pickle``."""
    from agents.policies.ppo import refuse_untrusted_pickle

    refuse_untrusted_pickle(spec.value, spec.trust_pickle)


def bot_folder(argument: str | None) -> Path:
    """``onnx:DIR``: an exported bot's folder (or one of its two files)."""
    from agents.policies.onnx import exported_bot_folder

    folder = exported_bot_folder(argument or "")
    if folder is None:
        raise ValueError(f"no exported bot (bot.json + model.onnx) in {argument or 'the folder'!r}")
    return folder


def shipped_bot(argument: str | None) -> Path:
    """``default``: the bot shipped with the package."""
    from agents.policies.onnx import default_bot_dir, is_exported_bot

    no_argument(argument)
    if not is_exported_bot(default_bot_dir()):
        raise ValueError(f"the default bot is missing from this installation (expected in {default_bot_dir()})")
    return default_bot_dir()


POLICY_NAMES = ("ppo", "onnx", "default")  # the specs of a trained policy (what ``plan:`` searches over)


def plan_argument(argument: str | None) -> tuple[int | None, str]:
    """``plan[:N]:BOT``: the search budget (None: the planner's default) and the policy spec BOT,
    checked by ``planned_policy``."""
    if not argument:
        raise ValueError("needs a policy: plan[:N]:BOT, BOT such as default, onnx:DIR or ppo:PATH")
    head, sep, rest = argument.partition(":")
    if sep and head.isdigit():
        if int(head) < 1:
            raise ValueError("the search budget must be a whole number >= 1")
        if not rest:
            raise ValueError("needs a policy after the budget: plan:N:BOT")
        return int(head), rest
    return None, argument


def planned_policy(spec: Spec) -> None:
    """``plan:``'s check: BOT is a trained policy's spec (checked as itself, with the same trust)."""
    inner = parse_spec(spec.value[1], trust_pickle=spec.trust_pickle)
    if inner.name not in POLICY_NAMES:
        raise ValueError(f"{spec.value[1]!r} is not a trained policy (plan searches over a policy: "
                         f"{', '.join(POLICY_NAMES)} or a path)")


# ----------------------------------------------------------------------------------------------
# The built-in names. Each parser and factory imports what it needs on use, so that ``import
# agents`` and ``check_spec`` stay light (the ONNX helpers import yaniv_env, and with it gymnasium).
# ----------------------------------------------------------------------------------------------


def _random(spec: Spec, seed: int | None) -> Agent:
    from agents.baselines.random_agent import RandomAgent

    return RandomAgent(seed)


def _greedy(spec: Spec, seed: int | None) -> Agent:
    from agents.baselines.greedy import GreedyAgent

    return GreedyAgent(seed)


def _heuristic(spec: Spec, seed: int | None) -> Agent:
    from agents.baselines.heuristic import HeuristicAgent

    agent = HeuristicAgent(seed, **spec.value)
    agent.name = spec.text
    return agent


def _search(spec: Spec, seed: int | None) -> Agent:
    from agents.baselines.search import SearchAgent

    return SearchAgent(seed) if spec.value is None else SearchAgent(seed, budget=spec.value)


def _ppo(spec: Spec, seed: int | None) -> Agent:
    from agents.policies.ppo import PPOAgent, load_policy

    return PPOAgent(load_policy(spec.value, trust_pickle=spec.trust_pickle), seed, name=spec.text)


def _exported(spec: Spec, seed: int | None) -> Agent:
    from agents.policies.onnx import ExportedPolicy
    from agents.policies.ppo import PPOAgent

    return PPOAgent(ExportedPolicy(spec.value), seed, name=spec.text)


def _planner(spec: Spec, seed: int | None) -> Agent:
    from agents.policies.planner import PLAN_BUDGET, PlannerAgent

    budget, bot = spec.value
    policy = make_agent(bot, trust_pickle=spec.trust_pickle).policy  # a PPOAgent's: NumpyPolicy or ExportedPolicy
    return PlannerAgent(policy, seed, PLAN_BUDGET if budget is None else budget, name=spec.text)


register("random", _random, help="uniform over the legal moves")
register("greedy", _greedy, help="sheds the most points now, calls Yaniv at the first chance")
register("heuristic", _heuristic, parse=heuristic_parameters, usage="heuristic[:K=V,...]",
         help="a careful player's rules of thumb; K=V sets its number parameters, e.g. heuristic:call_risk=0.1")
register("search", _search, parse=search_budget, usage="search[:N]",
         help="rollouts that check the heuristic's best moves on sampled hidden cards, N per decision")
register("ppo", _ppo, parse=policy_file, check=trusted_policy_file, usage="ppo:PATH",
         help="a trained policy: weights (.npz, safe to load) or an SB3 checkpoint (.zip: a pickle, "
              "only with --trust-pickle)")
register("onnx", _exported, parse=bot_folder, usage="onnx:DIR",
         help="an exported bot (python -m agents.policies.export), played with onnxruntime")
register("default", _exported, parse=shipped_bot, help="the exported bot shipped with the package")
register("plan", _planner, parse=plan_argument, check=planned_policy, usage="plan[:N]:BOT",
         help="a trained policy (BOT: default, onnx:DIR, ppo:PATH or a path) whose top moves the search's "
              "rollouts check, N per decision")
