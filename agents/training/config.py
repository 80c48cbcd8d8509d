"""The typed config of a training run: ``TrainConfig``, read by ``load_config``.

    config = load_config("configs/default.yaml", ["seed=1", "net_arch=[64,64]"])
    config.player_counts, config.run_dir
    print(TrainConfig.field_docs())          # every key, its type, default and meaning

Precedence: the field defaults, then a saved run's config (``base``, for ``--resume``), then the
YAML file, then ``key=value`` overrides (parsed as YAML values; lists also as ``a,b``). Every value
is coerced to its field's type and checked when the config is built: a bad key or value raises
``ConfigError`` naming the key, before anything is written. Every number has a range (``LIMITS``,
shown by ``--help``): a typo such as ``n_envs=100000`` or ``seed=-1`` is refused, not run. YAML
files (a config, a run's config.yaml) are read by ``read_yaml_mapping``: at most
``MAX_YAML_BYTES``, a mapping, and a named error for bad YAML or nesting too deep to parse.
Agent specs (``imitation_bot``, ``baselines``, ``towers_baselines``, ``eval_opponents``) are
checked by ``agents.registry.check_spec``, so any registered bot can be named.

Each field carries its doc and, when a resumed run cannot honour a change of it, why
(``FIXED_ON_RESUME``): SB3 saves its hyperparameters with the model and ``MaskablePPO.load``
restores them, the network is rebuilt from the saved architecture, the run folder is the one
resumed, and the imitation stage ran before the first PPO step. ``refuse_changes_on_resume``
turns such a change into an error rather than a line in config.yaml that the run ignored.

Backends: ``backend`` picks the trainer, ``sb3`` (MaskablePPO in this process, the default) or
``rllib`` (Ray RLlib, ``agents.training.rllib``). The keys of one backend alone (``RLLIB_KEYS``,
``SB3_KEYS``) are refused by name when set for the other; ``requested_backend`` reads the backend a
command asks for before the config is built, so train.py can dispatch.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from yaniv.rule_space import get_rule_space
from yaniv.rules import PRESETS, Rules, parse_rules
from yaniv_env.encoding import check_expressible
from agents.policies.ppo import ACTIVATIONS
from yaniv_env.aec import ROUND_REWARDS

# Why a resumed run cannot change a key (the ``fixed`` of its field).
RUN = "the run's folder is the one given to --resume"
MODEL = "SB3 saved it with the model, and MaskablePPO.load restores the saved value"
NETWORK = "the checkpoint's network was built with it"
IMITATION = "the imitation stage runs once, before the run's first PPO step"
EXPERT = "the run's expert stage has run with it"
BACKEND = "the run's checkpoints are its backend's own"
RAMP = "the towers' ramp starts from it at the split, which the run has passed"


MAX_STEPS = 2**31 - 1
"""The most steps a run may train for: ``seed + steps`` stays a valid 32-bit seed."""
MAX_YAML_BYTES = 64 << 10
"""The largest config file read (a run's config.yaml is about two kilobytes)."""
MAX_YAML_DEPTH = 32
"""The deepest nesting of ``[`` and ``{`` read from a config file (PyYAML takes quadratic time and
then fails on deep nesting; a config nests two deep)."""

LIMITS: dict[str, tuple[int, int]] = {
    "seed": (0, 2**31 - 1),
    "total_timesteps": (1, MAX_STEPS),
    "max_turns": (1, 100_000),
    "n_envs": (1, 1024),
    "n_steps": (1, 1 << 20),
    "batch_size": (1, MAX_STEPS),
    "n_epochs": (1, 1000),
    "torch_threads": (1, 1024),
    "rollout_threads": (1, 1024),
    "env_threads": (1, 256),
    "snapshot_every": (1, MAX_STEPS),
    "towers_from": (0, MAX_STEPS),
    "pool_size": (1, 1000),
    "eval_every": (0, MAX_STEPS),
    "eval_games": (1, 1_000_000),
    "checkpoint_every": (1, MAX_STEPS),
    "imitation_samples": (0, 10_000_000),
    "imitation_epochs": (1, 1000),
    "imitation_rounds": (1, 100),
    "imitation_batch_size": (1, 1 << 20),
    "expert_samples": (0, 3_000_000),
    "expert_budget": (8, 4096),
    "expert_epochs": (1, 100),
    "expert_batch_size": (1, 1 << 20),
    "expert_threads": (1, 64),
    "net_arch": (1, 4096),
    # RLlib's keys
    "ray_num_cpus": (0, 1 << 16),
    "env_runners": (0, 4096),
    "envs_per_runner": (1, 1024),
    "learners": (0, 1024),
}
"""The inclusive range of each integer key (of each layer size for ``net_arch``, which has at most
``MAX_LAYERS`` layers): wide enough for any real run, narrow enough to refuse a typo before it
allocates a million environments or a 100,000-wide layer."""
MAX_LAYERS = 16
MAX_RULE_SETS = 64
RULE_SPACE_SAMPLE = 1024
"""The rule sets a ``rule_space`` run draws once and its games pick from (the vector env's most)."""


class ConfigError(ValueError):
    """A config key that does not exist or a value it cannot take."""


def _flow_depth(text: str) -> int:
    """The deepest nesting of brackets and braces in ``text`` (quoted ones too: a bound, not a parse)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


def read_yaml_mapping(path: Path, what: str = "config keys") -> dict[str, Any]:
    """The mapping in the YAML file at ``path``; ConfigError naming the file if it is missing, larger
    than ``MAX_YAML_BYTES``, not YAML, nested deeper than ``MAX_YAML_DEPTH``, or not a mapping."""
    import yaml

    if not path.is_file():
        raise ConfigError(f"no config file at {path}")
    try:
        if path.stat().st_size > MAX_YAML_BYTES:
            raise ConfigError(f"{path} is larger than {MAX_YAML_BYTES} bytes: not a config file")
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    if _flow_depth(text) > MAX_YAML_DEPTH:
        raise ConfigError(f"{path} is nested more than {MAX_YAML_DEPTH} deep: not a config file")
    try:
        loaded = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"{path} is not valid YAML: {' '.join(str(error).split())}") from None
    except RecursionError:
        raise ConfigError(f"{path} is nested too deeply to be a config file") from None
    except ValueError as error:  # an integer of more than 4,300 digits
        raise ConfigError(f"{path} holds a value YAML cannot read: {error}") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path} must hold a mapping of {what}, not {type(loaded).__name__}")
    return loaded


def _f(default: Any, doc: str, fixed: str = "") -> Any:
    """A config field: its default, its doc, and (``fixed``) why a resumed run cannot change it."""
    metadata = {"doc": doc, "fixed": fixed}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class TrainConfig:
    """A training run. configs/*.yaml override these defaults; ``key=value`` arguments override those."""

    name: str = _f("default", "Run name: the run lives in <runs_dir>/<name>.", fixed=RUN)
    runs_dir: str = _f("runs", "Folder holding the runs.", fixed=RUN)
    seed: int = _f(0, "Seeds the environments, the opponents, the network and the evaluation.")
    total_timesteps: int = _f(2_000_000, "Learner steps (decisions) to train for, resumed runs included.")
    players: str = _f("4", "Seats per table: a count such as 4, or a range such as 2-4 drawn per episode.")
    rules: str = _f("default", f"Rules preset: {', '.join(PRESETS)}.")
    rule_sets: list[str] = _f([], "Rule sets drawn per game (per episode) while training, the imitation data and "
                                  "the learner's tables alike; empty: every game plays rules. Each a preset, or a "
                                  "preset with changes, 'default:jokers=0,yaniv_threshold=6' (yaniv.rules."
                                  "parse_rules); one hand size. Needs the compiled core (every baseline and the "
                                  "imitation bot with a form there). Evaluations play rules.")
    rule_space: str = _f("", "Draw each training game's rules from this space instead (yaniv.rule_space: house): "
                             f"a sample of {RULE_SPACE_SAMPLE:,} rule sets drawn once from the seed, which each "
                             "game picks from, the imitation data and the learner's tables alike; empty: none. "
                             "Not with rule_sets. Evaluations play rules.")
    one_round_share: float = _f(0.0, "With rule_space, the share of its sampled rule sets made games of one round "
                                     "(game_end: one_round, won by winning the round; the first sets of the sample, "
                                     "so each game is one with that chance). Pairs with towers: one_round (from "
                                     "towers_from on).")
    episode: str = _f("round", "Training episode: round (reward -points/50) or game (rank reward).")
    round_share: float = _f(0.0, "With episode: game, the chance that a training episode is a single round from zero "
                                 "scores instead, paid by round_reward: one learner trained on whole games and on "
                                 "rounds. Needs the compiled core (every baseline with a form there).")
    round_reward: str = _f("points", "Round reward: points (-points/50) or relative ((the others' mean points - "
                           "points)/50); see yaniv_env.aec.")
    max_turns: int = _f(500, "Turns after which a training episode is truncated and an evaluation round ends.")
    n_envs: int = _f(8, "Tables stepped together (one vector env on the compiled core; else a DummyVecEnv).",
                     fixed=MODEL)
    n_steps: int = _f(256, "Steps per environment per rollout.", fixed=MODEL)
    batch_size: int = _f(512, "Minibatch size of the PPO update.", fixed=MODEL)
    n_epochs: int = _f(4, "Passes over each rollout.", fixed=MODEL)
    learning_rate: float = _f(3e-4, "Adam learning rate.", fixed=MODEL)
    learning_rate_schedule: str = _f("constant", "The learning rate over the run: constant, or linear (from "
                                                 "learning_rate at the first step to zero at total_timesteps).",
                                     fixed=MODEL)
    towers_learning_rate: float = _f(0.0, "With towers_from and learning_rate_schedule linear: the one network's rate "
                                          "falls to zero at towers_from, and the towers' then falls from this one to "
                                          "zero at total_timesteps (agents.training.model.TowerRamps); 0: one ramp "
                                          "over the whole run.", fixed=RAMP)
    gamma: float = _f(0.99, "Discount factor.", fixed=MODEL)
    gae_lambda: float = _f(0.95, "GAE lambda.", fixed=MODEL)
    clip_range: float = _f(0.2, "PPO clip range.", fixed=MODEL)
    ent_coef: float = _f(0.01, "Entropy bonus.", fixed=MODEL)
    vf_coef: float = _f(0.5, "Value loss weight.", fixed=MODEL)
    net_arch: list[int] = _f([128, 128], "Hidden layer sizes of the actor (and of the critic, unless critic_arch).",
                             fixed=NETWORK)
    critic_arch: list[int] = _f([], "Hidden layer sizes of the critic, where they differ from net_arch's; empty: "
                                    "net_arch. The critic is never exported (a bot plays its actor), so its width "
                                    "costs nothing at play; but a narrow one trains a weaker actor ([128, 128] under "
                                    "the default config's [256, 256]: 2.6 points fewer games won against the "
                                    "teacher), and a wider one no stronger ([512, 512]: level, 36% slower; "
                                    "docs/experiments.md, 2026-12-07).", fixed=NETWORK)
    stakes_skip: bool = _f(False, "Add to each discard-and-draw logit four learned weights times that move's entries "
                                  "of the observation's score segments (reset, over, reset_soon, over_soon); see "
                                  "agents.policies.stakes.", fixed=NETWORK)
    towers: str = _f("", "Give the actor and the critic a second MLP for the games whose settings feature of this "
                         "name is set (one_round: games of one round, won by winning it), so that neither game's "
                         "samples move the other's weights; empty: one network. Needs stakes_skip; see "
                         "agents.policies.towers.", fixed=NETWORK)
    towers_from: int = _f(0, "With towers: the step from which the run has them. 0: from the start; later: one "
                             "network trains until then, and there splits in two towers that both start as it "
                             "(copy_tower), one_round_share making its games of one round from then on only. "
                             "Fixed on --resume once the network has split; before that, towers and towers_from "
                             "may be set or changed, which splits a trained one-network run.", fixed=NETWORK)
    towers_players: str = _f("", "With towers_from: seats per table from the split on, as players (2: the towers' "
                                 "stage plays heads-up); empty: players all along.")
    towers_baselines: list[str] = _f([], "With towers_from: the baseline bots in the opponent pool from the split on "
                                         "(the towers' stage meets other opponents); empty: baselines all along.")
    towers_rule_sets: list[str] = _f([], "With towers_from and rule_space: named rule sets that towers_rule_sets_share "
                                         "of the games play from the split on, in place of the space's first sets "
                                         "(each named set as often): the house sets the bot is held to, weighted in "
                                         "the towers' stage (docs/experiments.md, 2026-12-05); empty: the space alone. "
                                         "Each as in rule_sets.")
    towers_rule_sets_share: float = _f(0.0, "With towers_rule_sets: the share of the stage's games they play, 0 to 1.")
    activation: str = _f("tanh", f"Hidden activation: {' or '.join(ACTIVATIONS)}.", fixed=NETWORK)
    torch_threads: int = _f(2, "torch threads for the PPO update. Use 1 when other jobs share the cores: spinning "
                               "threads slow both (docs/experiments.md).")
    rollout_threads: int = _f(1, "torch threads for the rollouts' forward passes (one batch of n_envs observations a "
                                 "step): 1 suits a few tables, where extra threads only spin; from about 64 tables "
                                 "up, 2 pay (docs/experiments.md).")
    env_threads: int = _f(1, "Threads stepping the tables on the compiled core (yaniv_env.vector's threads: each "
                             "call's games, the bots' moves, observations and masks, split among them): 1 on a few "
                             "cores, which the update and the rollout's forward pass already take; more on a big "
                             "machine, where one thread leaves most of them idle.")
    baselines: list[str] = _f(["random", "greedy", "heuristic"], "Baseline bots in the opponent pool.")
    baseline_fraction: float = _f(0.3, "Chance that an opponent seat gets a baseline bot.")
    latest_fraction: float = _f(0.5, "Chance that a snapshot seat gets the newest snapshot rather than an older one.")
    snapshot_every: int = _f(100_000, "Steps between frozen snapshots added to the pool.")
    pool_size: int = _f(8, "Snapshots kept in the pool (the newest).")
    eval_every: int = _f(100_000, "Steps between evaluations (0: only at the end).")
    eval_games: int = _f(40, "Games (or rounds) per evaluation opponent.")
    eval_episode: str = _f("game", "Evaluate on full games or single rounds.")
    eval_opponents: list[str] = _f(["heuristic", "greedy"], "Bots the evaluation plays against (all other seats).")
    eval_players: int = _f(0, "Seats in evaluation games; 0 takes the largest training count.")
    checkpoint_every: int = _f(100_000, "Steps between periodic checkpoints.")
    final_policy: str = _f("best", "What the run's policy.npz holds at the end: best (the checkpoint with the best "
                                   "mean evaluation win rate) or last (the end point; evaluations of a few hundred "
                                   "games cannot tell checkpoints a few points apart, and a run whose rate falls to "
                                   "zero ends settled).")
    imitation_samples: int = _f(0, "Decisions of imitation_bot (at every seat of full games) that the network learns "
                                   "to copy before PPO starts (behaviour cloning; 0: none). Not counted in "
                                   "total_timesteps.", fixed=IMITATION)
    imitation_bot: str = _f("heuristic", "The bot whose moves (and round returns) the network first learns: an agent "
                                         "spec such as heuristic, heuristic:call_risk=0.1 or search:64.", fixed=IMITATION)
    imitation_epochs: int = _f(10, "Passes over the imitation data.", fixed=IMITATION)
    imitation_rounds: int = _f(1, "Rounds of imitation: the first copies the bot's own games; each further round "
                                  "(DAgger) collects imitation_samples more decisions in games where the network "
                                  "plays about half the seats and the bot names its move, then trains again on "
                                  "all the data.", fixed=IMITATION)
    imitation_learning_rate: float = _f(3e-4, "Adam learning rate of the imitation.", fixed=IMITATION)
    imitation_schedule: str = _f("constant", "Learning rate over each imitation round's passes: constant, or cosine "
                                             "(falling to zero, half a cosine wave).", fixed=IMITATION)
    imitation_batch_size: int = _f(256, "Minibatch size of the imitation.", fixed=IMITATION)
    expert_samples: int = _f(0, "Decisions labelled by the network's planner (its likeliest moves checked by the "
                                "search's rollouts) after the last PPO step, which the actor then learns "
                                "(agents.training.expert; 0: no such stage). Not counted in total_timesteps.",
                             fixed=EXPERT)
    expert_budget: int = _f(256, "Rollouts of the planner a decision in the expert stage.", fixed=EXPERT)
    expert_epochs: int = _f(3, "Passes over the expert stage's labels.", fixed=EXPERT)
    expert_learning_rate: float = _f(3e-4, "Adam learning rate of the expert stage's fit.", fixed=EXPERT)
    expert_batch_size: int = _f(1024, "Minibatch size of the expert stage's fit.", fixed=EXPERT)
    expert_tower_share: float = _f(0.5, "With towers: the share of the expert stage's labels drawn from the tables "
                                        "of the towers' stage (towers_players, its rule sets); the rest from those "
                                        "before it.", fixed=EXPERT)
    expert_threads: int = _f(2, "Threads sharing the expert stage's rollouts.")
    progress: bool = _f(True, "Show a progress bar.")

    # -- The backend, and the keys of RLlib's alone (RLLIB_KEYS; docs/distributed.md) ------------
    backend: str = _f("sb3", "Trainer: sb3 (MaskablePPO in this process) or rllib (Ray RLlib: multi-agent self-play "
                             "on env runners, pip install -e '.[rllib]', docs/distributed.md).", fixed=BACKEND)
    ray_address: str = _f("", "rllib: the Ray cluster to join: empty starts a local Ray instance; auto, the one "
                              "'ray start' runs on this machine; or HOST:PORT of a head node.")
    ray_num_cpus: int = _f(0, "rllib: CPUs of the local Ray instance (0: all of the machine's); not with ray_address.")
    env_runners: int = _f(1, "rllib: env runner processes playing the games, one CPU each (0: in the trainer's "
                             "process).")
    rllib_env: str = _f("vector", "rllib: what the env runners play: vector (the learner's tables on the compiled "
                                  "core, one call for all of a runner's tables, the opponents inside them as in sb3's "
                                  "runs) or aec (the PettingZoo AEC table as a multi-agent env: snapshots as RLlib "
                                  "modules, the learner also at other seats by shared_fraction).", fixed=BACKEND)
    envs_per_runner: int = _f(4, "rllib: tables each env runner steps together, one forward pass for all.")
    learners: int = _f(0, "rllib: learner processes updating the network (0: in the trainer's process); rollouts "
                          "are split among them.")
    learner_gpus: float = _f(0.0, "rllib: GPUs per learner (0: CPU).")
    shared_fraction: float = _f(0.5, "rllib: chance that an opponent seat not given a baseline is played by the "
                                     "learner itself (one shared policy, trained on every seat it plays) rather "
                                     "than by a frozen snapshot; every such seat is, until the first snapshot.")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _coerce(f, getattr(self, f.name)))
        self._validate()

    def _validate(self) -> None:
        def need(ok: bool, key: str, message: str) -> None:
            if not ok:
                raise ConfigError(f"config key {key!r}: {message}, got {getattr(self, key)!r}")

        need(bool(self.name) and "/" not in self.name and self.name not in (".", ".."), "name", "a plain folder name")
        for key, (low, high) in LIMITS.items():
            if key != "net_arch":
                need(low <= getattr(self, key) <= high, key, f"an integer from {low:,} to {high:,}")
        need(self.imitation_schedule in ("constant", "cosine"), "imitation_schedule", "constant or cosine")
        need(self.learning_rate_schedule in ("constant", "linear"), "learning_rate_schedule", "constant or linear")
        need(self.final_policy in ("best", "last"), "final_policy", "best or last")
        need(self.eval_players == 0 or 2 <= self.eval_players <= 8, "eval_players", "0 or 2..8")
        for key in ("learning_rate", "clip_range", "imitation_learning_rate", "expert_learning_rate"):
            need(getattr(self, key) > 0, key, "a number > 0")
        for key in ("gamma", "gae_lambda", "baseline_fraction", "latest_fraction", "round_share", "expert_tower_share"):
            need(0.0 <= getattr(self, key) <= 1.0, key, "a number from 0 to 1")
        for key in ("ent_coef", "vf_coef"):
            need(getattr(self, key) >= 0, key, "a number >= 0")
        need(self.rules in PRESETS, "rules", f"one of {', '.join(PRESETS)}")
        for key in ("rule_sets", "towers_rule_sets"):
            need(len(getattr(self, key)) <= MAX_RULE_SETS, key, f"at most {MAX_RULE_SETS} rule sets")
            for text in getattr(self, key):
                try:
                    drawn = parse_rules(text)
                    check_expressible(drawn)
                except ValueError as error:
                    need(False, key, str(error))
                if self.rules in PRESETS:
                    need(drawn.hand_size == PRESETS[self.rules].hand_size, key,
                         f"rule sets dealing the hand size of rules ({PRESETS[self.rules].hand_size} cards)")
        if self.rule_space:
            try:
                space = get_rule_space(self.rule_space)
            except ValueError as error:
                need(False, "rule_space", str(error))
            need(not self.rule_sets, "rule_space", "either rule_space or rule_sets, not both")
            if self.rules in PRESETS:
                need(space.base.hand_size == PRESETS[self.rules].hand_size, "rule_space",
                     f"a space dealing the hand size of rules ({PRESETS[self.rules].hand_size} cards)")
        need(not self.towers_rule_sets or (self.towers_from and self.rule_space), "towers_rule_sets",
             "empty unless towers_from and rule_space are set (they replace a share of the space's sets)")
        need(0.0 <= self.towers_rule_sets_share <= 1.0, "towers_rule_sets_share", "a number from 0 to 1")
        need(bool(self.towers_rule_sets) == bool(self.towers_rule_sets_share), "towers_rule_sets_share",
             "above 0 with towers_rule_sets, 0 without")
        need(0.0 <= self.one_round_share <= 1.0, "one_round_share", "a number from 0 to 1")
        need(not self.one_round_share or self.rule_space, "one_round_share", "0 without rule_space (rule_sets name "
                                                                              "their game_end themselves)")
        need(self.episode in ("round", "game"), "episode", "round or game")
        need(self.episode == "game" or self.round_share == 0, "round_share", "0 with episode round (every episode "
                                                                              "is a round)")
        need(self.round_reward in ROUND_REWARDS, "round_reward", " or ".join(ROUND_REWARDS))
        need(self.eval_episode in ("round", "game"), "eval_episode", "round or game")
        need(self.activation in ACTIVATIONS, "activation", " or ".join(ACTIVATIONS))
        if self.towers:
            from agents.policies.towers import TOWER_FEATURES

            need(self.towers in TOWER_FEATURES, "towers", f"empty or one of {', '.join(TOWER_FEATURES)}")
            need(self.stakes_skip, "towers", "towers need stakes_skip: true")
        need(not self.towers_from or self.towers, "towers_from", "0 without towers (the step the network splits in two)")
        need(0.0 <= self.towers_learning_rate <= 1.0, "towers_learning_rate", "a number from 0 to 1")
        need(not self.towers_learning_rate or (self.towers_from and self.learning_rate_schedule == "linear"),
             "towers_learning_rate", "0 unless towers_from is set and learning_rate_schedule is linear (the second "
                                     "of two ramps)")
        need(self.towers_from < self.total_timesteps, "towers_from", "a step before total_timesteps (else the "
                                                                     "network never splits)")
        low, high = LIMITS["net_arch"]
        for key, least, what in (("net_arch", 1, ""), ("critic_arch", 0, "empty (net_arch's) or ")):
            sizes = getattr(self, key)
            need(least <= len(sizes) <= MAX_LAYERS and all(low <= n <= high for n in sizes), key,
                 f"{what}a list of 1 to {MAX_LAYERS} layer sizes from {low} to {high:,}")
        if self.backend == "rllib":
            need(self.batch_size <= self.rollout_steps, "batch_size",
                 "at most n_steps * envs_per_runner * max(1, env_runners) / max(1, learners) (a learner's rollout)")
        else:
            need(self.batch_size <= self.n_envs * self.n_steps, "batch_size", "at most n_envs * n_steps")
        self._validate_backend(need)
        try:
            counts = self.player_counts
        except ValueError:
            counts = ()
        need(bool(counts) and min(counts) >= 2 and max(counts) <= 8, "players", "a count 2..8 or a range such as 2-4")
        if self.towers_players:
            try:
                tower_counts = _counts(self.towers_players)
            except ValueError:
                tower_counts = ()
            need(bool(tower_counts) and min(tower_counts) >= 2 and max(tower_counts) <= 8, "towers_players",
                 "empty, a count 2..8 or a range such as 2-4")
            need(bool(self.towers_from), "towers_players", "empty unless towers_from is set (the step it applies from)")
        need(bool(self.baselines) or self.baseline_fraction == 0, "baselines", "at least one bot when baseline_fraction > 0")
        need(not self.towers_baselines or bool(self.towers_from), "towers_baselines",
             "empty unless towers_from is set (the step it applies from)")
        from agents.registry import check_spec

        for key, specs in (("imitation_bot", [self.imitation_bot]), ("baselines", self.baselines),
                           ("towers_baselines", self.towers_baselines), ("eval_opponents", self.eval_opponents)):
            for spec in specs:
                try:
                    check_spec(spec)
                except ValueError as error:
                    need(False, key, str(error))

    def _validate_backend(self, need: Any) -> None:
        """The backend, and each key of the other backend alone left at its default."""
        need(self.backend in BACKENDS, "backend", " or ".join(BACKENDS))
        own, other = (RLLIB_KEYS, SB3_KEYS) if self.backend == "rllib" else (SB3_KEYS, RLLIB_KEYS)
        for key, why in other.items():
            default = _default(FIELDS[key])
            need(getattr(self, key) == default, key, f"its default with backend {self.backend} ({why}; default {default!r})")
        if self.backend == "rllib":
            need(self.learner_gpus >= 0, "learner_gpus", "a number >= 0")
            need(self.rllib_env in RLLIB_ENVS, "rllib_env", " or ".join(RLLIB_ENVS))
            need(0.0 <= self.shared_fraction <= 1.0, "shared_fraction", "a number from 0 to 1")
            if self.rllib_env == "vector":
                default = _default(FIELDS["shared_fraction"])
                need(self.shared_fraction == default, "shared_fraction",
                     f"its default with rllib_env vector (the learner holds one seat of each table; default {default!r})")
            else:
                for key in ("rule_sets", "rule_space", "round_share", "one_round_share"):
                    need(not getattr(self, key), key, "unset with rllib_env aec (its tables play the rules key and "
                                                      "episode; rllib_env vector draws rules and episodes per game)")
            need(not (self.ray_address and self.ray_num_cpus), "ray_num_cpus",
                 "0 with ray_address (a cluster's CPUs are its nodes')")

    @property
    def rollout_steps(self) -> int:
        """rllib: the env steps one learner updates on per iteration (each runner's tables times
        n_steps, split among the learners)."""
        return self.n_steps * self.envs_per_runner * max(1, self.env_runners) // max(1, self.learners)

    @property
    def player_counts(self) -> tuple[int, ...]:
        """The table sizes of ``players`` (ValueError if it is not a count or a range)."""
        return _counts(self.players)

    def training_players(self, step: int = 0) -> str:
        """The table sizes the learner's tables draw from at ``step``: ``towers_players`` from
        ``towers_from`` on where it is set, else ``players``."""
        return self.towers_players if self.towers_players and step >= self.towers_from else self.players

    def training_baselines(self, step: int = 0) -> list[str]:
        """The baseline bots the opponent pool draws at ``step``: ``towers_baselines`` from
        ``towers_from`` on where it is set, else ``baselines``."""
        return self.towers_baselines if self.towers_baselines and step >= self.towers_from else self.baselines

    def training_rule_sets(self, step: int = 0) -> list[Rules]:
        """The rule sets the training games draw from at ``step``, one per game: ``rule_sets`` parsed,
        or the sample of ``rule_space`` (from the seed, so a resumed run draws the same), with its
        ``one_round_share`` made games of one round once the run has its towers (``towers_from``),
        and from then on ``towers_rule_sets_share`` of it the ``towers_rule_sets`` in turn; empty:
        ``rules``."""
        if self.rule_space:
            rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(11,)))
            drawn = get_rule_space(self.rule_space).sample(RULE_SPACE_SAMPLE, rng)
            share = self.one_round_share if step >= self.towers_from else 0.0
            one_round = round(share * len(drawn))  # the sample is in random order: its first sets
            drawn = [rules.replace(game_end="one_round") for rules in drawn[:one_round]] + drawn[one_round:]
            if self.towers_rule_sets and step >= self.towers_from:
                named = [parse_rules(text) for text in self.towers_rule_sets]
                count = round(self.towers_rule_sets_share * len(drawn))
                drawn[:count] = [named[i % len(named)] for i in range(count)]
            return drawn
        return [parse_rules(text) for text in self.rule_sets]

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.name

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def field_docs(cls) -> str:
        """One line per key with its type, default and meaning (for --help)."""
        lines = []
        for f in dataclasses.fields(cls):
            default = f.default_factory() if f.default is dataclasses.MISSING else f.default
            fixed = " Fixed on --resume." if f.metadata["fixed"] else ""
            limits = f" From {LIMITS[f.name][0]:,} to {LIMITS[f.name][1]:,}." if f.name in LIMITS else ""
            lines.append(f"  {f.name} ({_type_name(f)}, default {default!r}): {f.metadata['doc']}{limits}{fixed}")
        return "\n".join(lines)


FIELDS = {f.name: f for f in dataclasses.fields(TrainConfig)}
FIXED_ON_RESUME = {name: f.metadata["fixed"] for name, f in FIELDS.items() if f.metadata["fixed"]}
"""The keys a resumed run cannot change, and why."""

BACKENDS = ("sb3", "rllib")
RLLIB_ENVS = ("vector", "aec")
"""What the RLlib env runners can play (``rllib_env``): the vector env on the core, or the AEC table."""
_NOT_RLLIB = "the RLlib backend has no such stage or setting"
RLLIB_KEYS = {key: "a key of backend rllib" for key in (
    "ray_address", "ray_num_cpus", "env_runners", "rllib_env", "envs_per_runner", "learners", "learner_gpus",
    "shared_fraction")}
"""The keys of the RLlib backend alone (refused, by name, away from their defaults under sb3)."""
SB3_KEYS = {
    "n_envs": "RLlib's tables are env_runners x envs_per_runner",
    "rollout_threads": "RLlib's env runners set their own threads",
    "env_threads": "RLlib's env runners set their own threads",
    "learning_rate_schedule": "the RLlib backend trains at a constant learning rate",
    "stakes_skip": "RLlib's network is the plain actor and critic",
    "critic_arch": "RLlib's actor and critic are both net_arch",
    "towers": "RLlib's network is the plain actor and critic",
    "towers_from": "RLlib's network is the plain actor and critic",
    "towers_players": "RLlib's network is the plain actor and critic",
    "towers_baselines": "RLlib's network is the plain actor and critic",
    "towers_rule_sets": "RLlib's network is the plain actor and critic",
    "towers_rule_sets_share": "RLlib's network is the plain actor and critic",
    "imitation_samples": _NOT_RLLIB, "imitation_bot": _NOT_RLLIB, "imitation_epochs": _NOT_RLLIB,
    "imitation_rounds": _NOT_RLLIB, "imitation_learning_rate": _NOT_RLLIB, "imitation_schedule": _NOT_RLLIB,
    "imitation_batch_size": _NOT_RLLIB,
    **{key: _NOT_RLLIB for key in ("expert_samples", "expert_budget", "expert_epochs", "expert_learning_rate",
                                   "expert_batch_size", "expert_tower_share", "expert_threads")},
}
"""The keys of the SB3 backend alone, and why the RLlib backend refuses them away from their defaults."""


def _counts(text: Any) -> tuple[int, ...]:
    """The table sizes of a ``players`` value: a count such as 4 or a range such as 2-4 (ValueError
    otherwise)."""
    low, _, high = str(text).partition("-")
    low_n = int(low)
    high_n = int(high) if high else low_n
    if high_n < low_n:
        raise ValueError(text)
    return tuple(range(low_n, high_n + 1))


def requested_backend(config_path: Path | None, resume_dir: Path | None, overrides: Sequence[str] = ()) -> str:
    """The backend a train.py command asks for, before its config is built: a ``backend=`` override,
    else the YAML file's (or, resuming, the run's config.yaml's) ``backend``, else ``sb3``. Unreadable
    files and bad values are left for ``load_config`` to name."""
    for item in reversed(list(overrides)):
        key, sep, value = item.partition("=")
        if sep and key.strip() == "backend":
            return value.strip()
    path = resume_dir / "config.yaml" if resume_dir is not None else config_path
    try:
        settings = read_yaml_mapping(path) if path is not None else {}
    except ConfigError:
        return "sb3"
    return str(settings.get("backend", "sb3"))


def _default(f: dataclasses.Field) -> Any:
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def _type_name(f: dataclasses.Field) -> str:
    return f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))


def _coerce(f: dataclasses.Field, value: Any) -> Any:
    """A value of the field's type, from YAML or from a key=value string; ConfigError otherwise."""
    kind = _type_name(f)

    def bad(expected: str) -> ConfigError:
        return ConfigError(f"config key {f.name!r}: expected {expected}, got {value!r}")

    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
            return value.lower() in ("true", "yes", "1")
        raise bad("true or false")
    if kind == "int":
        if isinstance(value, bool):
            raise bad("an integer")
        if isinstance(value, int):
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise bad("an integer") from None
        if not number.is_integer():
            raise bad("an integer")
        return int(number)
    if kind == "float":
        if isinstance(value, bool):
            raise bad("a number")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise bad("a number") from None
        if not math.isfinite(number):
            raise bad("a finite number")
        return number
    if kind == "str":
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
        raise bad("a string")
    if kind.startswith("list"):
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)):
            raise bad("a list")
        item_kind = "int" if "int" in kind else "str"
        inner = dataclasses.field(metadata=f.metadata)
        inner.name, inner.type = f.name, item_kind
        return [_coerce(inner, item.strip() if isinstance(item, str) else item) for item in items]
    raise bad(kind)  # pragma: no cover - every field type is handled above


def load_config(yaml_path: str | Path | None, overrides: Sequence[str] = (), base: dict | None = None) -> TrainConfig:
    """Defaults, then ``base`` (a saved config), then the YAML file, then ``key=value`` overrides."""
    import yaml

    settings: dict[str, Any] = dict(base or {})
    if yaml_path is not None:
        settings.update(read_yaml_mapping(Path(yaml_path)))
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"override {item!r} must look like key=value")
        try:
            settings[key.strip()] = yaml.safe_load(text) if text.strip() else ""
        except (yaml.YAMLError, RecursionError, ValueError):
            raise ConfigError(f"override {item[:100]!r}: the value is not a YAML value") from None
    unknown = sorted(set(settings) - set(FIELDS))
    if unknown:
        raise ConfigError(f"unknown config key(s) {', '.join(map(repr, unknown))}; run train.py --help for the keys")
    if base is not None and settings.get("backend", "sb3") != base.get("backend", "sb3"):  # before the keys of one
        was, now = base.get("backend", "sb3"), settings.get("backend")                      # backend are checked
        raise ConfigError(f"config key 'backend' cannot change on --resume (the run has {was!r}, not {now!r}): "
                          f"{BACKEND}; start a new run to change it")
    return TrainConfig(**settings)


def refuse_changes_on_resume(saved: TrainConfig, config: TrainConfig, step: int = 0,
                             expert_done: bool = True) -> None:
    """ConfigError naming the first key of ``FIXED_ON_RESUME`` whose value in ``config`` differs
    from the ``saved`` run's: a resumed run would ignore the new value while its config.yaml
    claimed it. ``towers``, ``towers_from`` and ``towers_learning_rate`` may change while the saved
    run at ``step`` has not split its network (no towers, or a split still ahead): the network is
    one until it does, and the resumed model's rate is rebuilt from the config
    (``agents.training.model.reschedule``). The expert stage's keys may change until the stage has
    run (``expert_done`` false: its labels are drawn when it runs, from the config resumed with),
    so ``--resume RUN expert_samples=N`` gives a trained run the stage."""
    one_network = not saved.towers or step < saved.towers_from
    for key, reason in FIXED_ON_RESUME.items():
        if one_network and key in ("towers", "towers_from", "towers_learning_rate"):
            continue
        if not expert_done and reason == EXPERT:
            continue
        was, now = getattr(saved, key), getattr(config, key)
        if now != was:
            raise ConfigError(f"config key {key!r} cannot change on --resume (the run has {was!r}, not {now!r}): "
                              f"{reason}; start a new run to change it")
