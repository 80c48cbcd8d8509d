"""Self-play training support for ``train.py``: the config, the opponent pool, the self-play
environment, evaluation against baselines, and checkpoints.

Self-play, as trained here
--------------------------
Each episode (a round, or a game with ``episode: game``) the learner takes a random seat at a
table of ``players`` seats (a fixed count, or drawn from a range such as "2-4"), and every other
seat gets an opponent drawn from the pool, independently:

* with probability ``baseline_fraction``: a baseline bot, uniformly among ``baselines``;
* otherwise, with probability ``latest_fraction``: the newest frozen snapshot of the learner;
* otherwise: a snapshot drawn uniformly among the older ones.

Until the first snapshot exists every seat gets a baseline. A snapshot is taken every
``snapshot_every`` steps; the pool keeps the newest ``pool_size``. Snapshots play with their
numpy forward pass (``agents.policies.ppo.NumpyPolicy``), sampling from their masked policy.

A head start by imitation
-------------------------
With ``imitation_samples > 0`` a new run first plays that many decisions of ``imitation_bot`` at
every seat of full games (table sizes from ``players``; the scores, eliminations and starters of
real play) and trains the network on them before the first PPO step (behaviour cloning): the
actor learns the bot's moves (masked cross-entropy), the critic the round returns that followed.
These decisions do not count in ``total_timesteps``. Why: a round's return is mostly decided by
when the other players call, so from the learner's observation the critic explains almost none of
its variance, and PPO from scratch learns slowly; copying the heuristic gets most of its strength
in minutes, and a gentle PPO (small learning rate and clip range, no entropy bonus) then improves
on it where the usual settings undo it. ``configs/default.yaml`` gives the figures.

What to copy matters more than anything PPO did here. The baseline heuristic ignores the game's
score; ``heuristic:call_risk=0.1,score_weight=2`` minds it (``agents.baselines.heuristic``, "Scores") and
wins 69.5% heads-up and 48.8% at four against baseline heuristics. The default config copies it
(full games, 1,000 heads-up and 400 at four, seed 0, ``configs/default.yaml`` has the intervals):

* 600k decisions, six passes a round at a rate falling from 1e-3 to zero (cosine), minibatches
  of 512 (on observation layout 3, without the stakes skip below): the copy picks one of the
  teacher's best moves in 91.9% of held-out heads-up decisions (90.9% at four) and wins 60.9%
  and 45.5%. After 400k PPO steps the run then shipped won 61.5% and 36.5% (60.1% of 4,000
  heads-up games); four runs of the recipe (three with 600k PPO steps) won 60.7% to 64.2%
  heads-up and 36.5% to 45.5% at four.
* 300k decisions, ten passes at a constant 3e-4, minibatches of 256 (the recipe before): 91.2%
  and 89.7%; the copy won 61.9% and 45.2%, after 600k PPO steps 60.3% and 39.8% (56.9% and 37.8%
  after 300k).

Both copies win about the same. Heads-up, PPO adds a point or two to the later one on average;
at four it gains nothing and can cost up to nine points: there a run's figure moves by up to
eight with the PPO stage alone (the same run on one torch thread or two). Every PPO variant
below, copying the plain heuristic, ended between 51% and 55% heads-up and near 21% at four.
configs/heads_up.yaml, copying the score-aware teacher at two seats with the recipe before, won
61.2% heads-up.

Where the copy lost its teacher's edge, and the stakes skip
-----------------------------------------------------------
Heads-up the copy of that recipe won about 61% against the heuristic, its teacher 69.5%. Mixing
the two by kind of decision (1,000 heads-up games each, seed 0) found where: the teacher's Yaniv
calls with the copy's moves won 61.8%, the copy's calls with the teacher's moves 68.9%; the
teacher's moves where the score is at stake (some move reaches a reset value or the limit, 17%
of decisions) and the copy's elsewhere won 69.1%, the other way round 61.7%. The whole gap lay in
those 17%, where the copy erred on 14% of decisions (8.5% elsewhere) and each error cost 3 to 5
points by the teacher's own values (1.5 elsewhere). Observation layout 4 (the stakes weighed by
the chance that the round ends first) and ``stakes_skip: true`` (``agents.policies.stakes``) halved that
regret offline (0.54 to 0.26 points a decision heads-up). The default config's runs with them
won 61.5% [60.4, 62.5] (seed 0) and 63.0% [61.9, 64.0] (seed=1) of 8,000 heads-up games
(tournament seeds 0 and 1) and 43.0% and 42.2% of 400 at four, where the bot before them won
60.1% [58.5, 61.6] of 4,000 and 36.5%. Their copies alone won 62.3% and 61.1% of 4,000: the
gain is the copy's, and PPO moves a run a point or two either way. Heads-up that is a point or
two of the teacher's eight-point edge over the copy: most of the gap is still there, in the
decisions where the score is at stake (the next lever to try: more of those decisions in the
imitation data, or a per-move head over more of each move's features). The skip's learned weights
in the shipped run: 9.1 on reset, -7.0 on over, 49.1 on reset_soon and -14.7 on over_soon (per
unit of each segment, in logits).

With ``imitation_rounds > 1`` the copy goes on as DAgger: each further round lets the network play
about half the seats of new games while the bot still names the move it would make there, adds
those decisions to the data and trains again on all of it. A copy trained on the bot's games alone
never sees the positions its own small mistakes lead to, and errs more there.

Tried and not kept
------------------
Routes past the copied heuristic that did not pay, measured in full games against it
(``evaluate.py``, duplicate deals, seats rotated, seed 0; 1,000 games heads-up, 400 at four
against three heuristics), all copying the plain heuristic before the score-aware teacher above. The
references: the default recipe of then won 51.1% [48.0, 54.2]
heads-up and 21.2% [17.5, 25.5] at four; the heads-up recipe's 55.1% [52.0, 58.2]
heads-up. The search bot wins 63.7% (of 400) and 42.5% (of 200): ``agents.baselines.search``.

* **Real scores.** PPO's rounds start at zero scores, where no total can land on a halving value
  and nobody is near elimination, so the policy never learns what the scores mean. Tried in the
  default recipe: each round starting from the scores at a round's start in heuristic games,
  every seat still in (150 to 400 games per table size).
  - With the relative reward: 53.6% heads-up, 22.0% at four. Within the noise of the reference.
  - Scored as the search's rollouts are (the others' mean score change minus one's own on the
    cumulative scores, halvings counted, 60 points per elimination): 47.5% and 20.0%.
  - Rewarded by the change in an estimate of the chance to win the game (two seats: exact for
    the rules' halving and elimination, given the heuristic's round outcomes; more seats: each
    seat's time to elimination taken as independent): 47.7% and 15.5%; in the heads-up recipe
    55.3% [52.2, 58.4].
* **The search's moves as labels.** The heads-up run's actor, fine-tuned on 60,000 moves of
  ``search`` in positions the policy reached itself (DAgger against the heuristic; 19 minutes of
  labelling on 2 cores), agreed with the search on 86% of held-out positions instead of 83%, and
  won 53.2% [50.1, 56.3]. The search's edge comes from rollouts on sampled hidden cards; its
  labels vary with the samples, and the network does not learn them from its observation.
* **Rollout advantages as regression targets.** 300,000 positions of heuristic games (2 to 4
  seats, real scores), each candidate of the search (the cautious heuristic's top four and Yaniv)
  played out once on the true state with the search's rollout policy and paired deck streams; a
  network regressed each candidate's score over the heuristic's choice. The paired differences
  spread by about 24 points; the network explained 4% of their variance. Choosing by it (the
  heuristic's move unless another is predicted 6 points better) won 20.7% at four and 55.5%
  heads-up, the cautious heuristic alone 22.0% and 55.7%: no gain.

Two more, on the score-aware teacher and the default recipe of ``configs/default.yaml``:

* **An imitation anchor in PPO.** Before each PPO rollout, four minibatches of 512 of behaviour
  cloning on the imitation data (the actor only, with PPO's optimizer), to hold the copy's play
  where PPO's rounds, from zero scores, say nothing. It held the teacher's move at the copy's
  rate (91.6% of held-out heads-up decisions, against 87.5% without it), and won 62.9% heads-up
  and 44.0% at four against 64.2% and 45.2% without: the moves PPO changed were gains.
* **Soft targets.** Learning the heuristic's whole ranking of the moves (a softmax of its move
  values at a temperature of 0.3 or 1 point) rather than the move it picks. Offline, on the same
  300,000 decisions, after six passes the copy picked the teacher's move in 85% of held-out
  decisions, against 90% with the picked moves as labels.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np

from agents.policies.ppo import NumpyPolicy, PPOAgent
from yaniv.rules import PRESETS
from yaniv_env.aec import ROUND_REWARDS
from yaniv_env.gym_env import YanivGymEnv


IMITATION_BOTS = ("random", "greedy", "heuristic", "search")


class ConfigError(ValueError):
    """A config key that does not exist or a value it cannot take."""


def _f(default: Any, doc: str) -> Any:
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"doc": doc})
    return field(default=default, metadata={"doc": doc})


@dataclass
class TrainConfig:
    """A training run. configs/*.yaml override these defaults; ``key=value`` arguments override those."""

    name: str = _f("default", "Run name: the run lives in <runs_dir>/<name>.")
    runs_dir: str = _f("runs", "Folder holding the runs.")
    seed: int = _f(0, "Seeds the environments, the opponents, the network and the evaluation.")
    total_timesteps: int = _f(2_000_000, "Learner steps (decisions) to train for, resumed runs included.")
    players: str = _f("4", "Seats per table: a count such as 4, or a range such as 2-4 drawn per episode.")
    rules: str = _f("default", f"Rules preset: {', '.join(PRESETS)}.")
    episode: str = _f("round", "Training episode: round (reward -points/50) or game (rank reward).")
    round_reward: str = _f("points", "Round reward: points (-points/50) or relative ((the others' mean points - "
                           "points)/50); see yaniv_env.aec.")
    max_turns: int = _f(500, "Turns after which a training episode is truncated and an evaluation round ends.")
    n_envs: int = _f(8, "Environments stepped together (DummyVecEnv).")
    n_steps: int = _f(256, "Steps per environment per rollout.")
    batch_size: int = _f(512, "Minibatch size of the PPO update.")
    n_epochs: int = _f(4, "Passes over each rollout.")
    learning_rate: float = _f(3e-4, "Adam learning rate.")
    gamma: float = _f(0.99, "Discount factor.")
    gae_lambda: float = _f(0.95, "GAE lambda.")
    clip_range: float = _f(0.2, "PPO clip range.")
    ent_coef: float = _f(0.01, "Entropy bonus.")
    vf_coef: float = _f(0.5, "Value loss weight.")
    net_arch: list[int] = _f([128, 128], "Hidden layer sizes of the actor and of the critic.")
    stakes_skip: bool = _f(False, "Add to each discard-and-draw logit four learned weights times that move's entries "
                                  "of the observation's score segments (reset, over, reset_soon, over_soon); see "
                                  "agents.policies.stakes.")
    activation: str = _f("tanh", "Hidden activation: tanh or relu.")
    torch_threads: int = _f(2, "torch threads for the PPO update (rollouts use one). Use 1 when other jobs share "
                               "the cores: measured on 2 cores beside another run, 2 threads spinning against it "
                               "cut heads-up training from about 1,600 to 200 steps/s.")
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
    imitation_samples: int = _f(0, "Decisions of imitation_bot (at every seat of full games) that the network learns "
                                   "to copy before PPO starts (behaviour cloning; 0: none). Not counted in "
                                   "total_timesteps.")
    imitation_bot: str = _f("heuristic", "The bot whose moves (and round returns) the network first learns: an agent "
                                         "spec such as heuristic, heuristic:call_risk=0.1 or search:64.")
    imitation_epochs: int = _f(10, "Passes over the imitation data.")
    imitation_rounds: int = _f(1, "Rounds of imitation: the first copies the bot's own games; each further round "
                                  "(DAgger) collects imitation_samples more decisions in games where the network "
                                  "plays about half the seats and the bot names its move, then trains again on "
                                  "all the data.")
    imitation_learning_rate: float = _f(3e-4, "Adam learning rate of the imitation.")
    imitation_schedule: str = _f("constant", "Learning rate over each imitation round's passes: constant, or cosine "
                                             "(falling to zero, half a cosine wave).")
    imitation_batch_size: int = _f(256, "Minibatch size of the imitation.")
    progress: bool = _f(True, "Show a progress bar.")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _coerce(f, getattr(self, f.name)))
        self._validate()

    def _validate(self) -> None:
        def need(ok: bool, key: str, message: str) -> None:
            if not ok:
                raise ConfigError(f"config key {key!r}: {message}, got {getattr(self, key)!r}")

        need(bool(self.name) and "/" not in self.name and self.name not in (".", ".."), "name", "a plain folder name")
        for key in ("total_timesteps", "max_turns", "n_envs", "n_steps", "batch_size", "n_epochs", "torch_threads",
                    "snapshot_every", "pool_size", "checkpoint_every", "eval_games", "imitation_epochs",
                    "imitation_rounds", "imitation_batch_size"):
            need(getattr(self, key) >= 1, key, "an integer >= 1")
        need(self.eval_every >= 0, "eval_every", "an integer >= 0")
        need(self.imitation_samples >= 0, "imitation_samples", "an integer >= 0")
        need(self.imitation_schedule in ("constant", "cosine"), "imitation_schedule", "constant or cosine")
        need(self.eval_players == 0 or 2 <= self.eval_players <= 8, "eval_players", "0 or 2..8")
        for key in ("learning_rate", "clip_range", "imitation_learning_rate"):
            need(getattr(self, key) > 0, key, "a number > 0")
        for key in ("gamma", "gae_lambda", "baseline_fraction", "latest_fraction"):
            need(0.0 <= getattr(self, key) <= 1.0, key, "a number from 0 to 1")
        for key in ("ent_coef", "vf_coef"):
            need(getattr(self, key) >= 0, key, "a number >= 0")
        need(self.rules in PRESETS, "rules", f"one of {', '.join(PRESETS)}")
        need(self.episode in ("round", "game"), "episode", "round or game")
        need(self.round_reward in ROUND_REWARDS, "round_reward", " or ".join(ROUND_REWARDS))
        need(self.eval_episode in ("round", "game"), "eval_episode", "round or game")
        need(self.activation in ("tanh", "relu"), "activation", "tanh or relu")
        need(bool(self.net_arch) and all(n >= 1 for n in self.net_arch), "net_arch", "a list of layer sizes >= 1")
        need(self.batch_size <= self.n_envs * self.n_steps, "batch_size", "at most n_envs * n_steps")
        try:
            counts = self.player_counts
        except ValueError:
            counts = ()
        need(bool(counts) and min(counts) >= 2 and max(counts) <= 8, "players", "a count 2..8 or a range such as 2-4")
        need(bool(self.baselines) or self.baseline_fraction == 0, "baselines", "at least one bot when baseline_fraction > 0")
        need(self.imitation_bot.split(":")[0] in IMITATION_BOTS, "imitation_bot", f"one of {', '.join(IMITATION_BOTS)}")
        from agents.registry import check_spec

        for key, specs in (("imitation_bot", [self.imitation_bot]), ("baselines", self.baselines),
                           ("eval_opponents", self.eval_opponents)):
            for spec in specs:
                try:
                    check_spec(spec)
                except ValueError as error:
                    need(False, key, str(error))

    @property
    def player_counts(self) -> tuple[int, ...]:
        text = str(self.players)
        low, _, high = text.partition("-")
        low_n = int(low)
        high_n = int(high) if high else low_n
        if high_n < low_n:
            raise ValueError(text)
        return tuple(range(low_n, high_n + 1))

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
            lines.append(f"  {f.name} ({_type_name(f)}, default {default!r}): {f.metadata['doc']}")
        return "\n".join(lines)


FIELDS = {f.name: f for f in dataclasses.fields(TrainConfig)}


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
        path = Path(yaml_path)
        if not path.is_file():
            raise ConfigError(f"no config file at {path}")
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as error:
            raise ConfigError(f"{path} is not valid YAML: {error}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path} must hold a mapping of config keys, not {type(loaded).__name__}")
        settings.update(loaded)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"override {item!r} must look like key=value")
        settings[key.strip()] = yaml.safe_load(text) if text.strip() else ""
    unknown = sorted(set(settings) - set(FIELDS))
    if unknown:
        raise ConfigError(f"unknown config key(s) {', '.join(map(repr, unknown))}; run train.py --help for the keys")
    return TrainConfig(**settings)


# ----------------------------------------------------------------------------------------------
# Opponents
# ----------------------------------------------------------------------------------------------


class OpponentPool:
    """Baseline bots and frozen snapshots of the learner; see the module docstring for the draw."""

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.baselines = list(config.baselines)
        self.snapshots: list[tuple[int, NumpyPolicy]] = []  # (step, policy), oldest first

    def add(self, step: int, policy: NumpyPolicy) -> None:
        self.snapshots.append((step, policy))
        del self.snapshots[: max(0, len(self.snapshots) - self.config.pool_size)]

    def draw(self, rng: np.random.Generator) -> tuple[str, Any]:
        """(label, opponent): a baseline name or a snapshot, chosen as documented."""
        c = self.config
        if not self.snapshots or (self.baselines and rng.random() < c.baseline_fraction):
            return ("baseline", self.baselines[int(rng.integers(len(self.baselines)))])
        if len(self.snapshots) == 1 or rng.random() < c.latest_fraction:
            return ("snapshot", self.snapshots[-1][1])
        return ("snapshot", self.snapshots[int(rng.integers(len(self.snapshots) - 1))][1])


class _TimedAgent:
    """A baseline agent whose act() time is added to a shared clock."""

    def __init__(self, agent: Any, clock: list[float]) -> None:
        self.agent, self.clock, self.name = agent, clock, agent.name

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, view):
        start = time.perf_counter()
        move = self.agent.act(view)
        self.clock[0] += time.perf_counter() - start
        return move


class SelfPlayEnv(gym.Env):
    """The learner's Gymnasium view with a table size and opponents drawn from the pool per episode."""

    metadata = {"render_modes": []}

    def __init__(self, config: TrainConfig, pool: OpponentPool, seed: int) -> None:
        from agents.registry import make_agent

        self.pool = pool
        self.rng = np.random.default_rng(seed)
        self.counts = config.player_counts
        self.tables = {
            n: YanivGymEnv(
                num_players=n, rules=config.rules, episode=config.episode, max_turns=config.max_turns,
                round_reward=config.round_reward,
            )
            for n in self.counts
        }
        first = self.tables[self.counts[0]]
        self.observation_space = first.observation_space
        self.action_space = first.action_space
        self.clock = [0.0]  # seconds spent choosing opponent moves
        self._bots = {name: _TimedAgent(make_agent(name), self.clock) for name in pool.baselines}
        self.table = first

    def _snapshot_player(self, policy: NumpyPolicy) -> Callable[[np.ndarray, np.ndarray], int]:
        rng = np.random.default_rng(self.rng.integers(2**63))
        clock = self.clock

        def play(observation: np.ndarray, mask: np.ndarray) -> int:
            start = time.perf_counter()
            action = policy.act(observation, mask, rng)
            clock[0] += time.perf_counter() - start
            return action

        return play

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        n = self.counts[int(self.rng.integers(len(self.counts)))]
        self.table = self.tables[n]
        opponents = []
        for _ in range(n - 1):
            kind, opponent = self.pool.draw(self.rng)
            opponents.append(self._bots[opponent] if kind == "baseline" else self._snapshot_player(opponent))
        self.table.set_opponents(opponents)
        return self.table.reset(seed=int(self.rng.integers(2**63)), options=options)

    def step(self, action: int):
        return self.table.step(action)

    def action_masks(self) -> np.ndarray:
        return self.table.action_masks()


# ----------------------------------------------------------------------------------------------
# Imitation: a head start copying a bot
# ----------------------------------------------------------------------------------------------


def collect_imitation_data(
    config: TrainConfig, bot: str, samples: int, gamma: float, seed: int, student: NumpyPolicy | None = None
) -> dict:
    """``samples`` decisions of ``bot`` playing every seat of full games (table sizes drawn from
    ``config.players``): each decision's observation and mask, the bot's action, and the return
    that followed it within its round (the round reward of ``config.round_reward``, discounted by
    ``gamma`` per own decision). Full games, so the scores, eliminations and starters are those of
    real play; every seat's decisions count, so a 4-player table gives four times the data of one
    seat.

    With a ``student`` (DAgger), each seat of a game is the student's with even odds (at least one
    per game): there the student's best move is played, and the bot's move is still the label. The
    data then holds the positions the student's own mistakes lead to, and what the bot would do
    there, which copying the bot's games alone never shows it."""
    from agents.registry import make_agent
    from yaniv.game import Game
    from yaniv_env.aec import round_rewards
    from yaniv_env.encoding import Observer

    rng = np.random.default_rng(seed)
    counts = config.player_counts
    observers = {n: Observer(PRESETS[config.rules], n) for n in counts}
    # Filled row by row: at the default config's size the observations take gigabytes, once.
    any_observer = observers[counts[0]]
    obs_rows = np.empty((samples, any_observer.size), dtype=np.float32)
    mask_rows = np.empty((samples, any_observer.table.size), dtype=bool)
    actions: list[int] = []
    returns: list[float] = []
    while len(actions) < samples:
        n = counts[int(rng.integers(len(counts)))]
        observer = observers[n]
        game = Game(n, PRESETS[config.rules], seed=int(rng.integers(2**63)))
        teachers = [make_agent(bot) for _ in range(n)]
        for q, teacher in enumerate(teachers):
            if hasattr(teacher, "reset"):
                teacher.reset(int(rng.integers(2**63)))
        students = rng.random(n) < 0.5 if student is not None else np.zeros(n, dtype=bool)
        if student is not None and not students.any():
            students[int(rng.integers(n))] = True
        pending: list[list[int]] = [[] for _ in range(n)]  # this round's sample indices per seat
        round_turns = 0
        while not game.is_over and len(actions) < samples:
            seat = game.current
            move = teachers[seat].act(game.view(seat))
            obs, mask = observer.observe(game, seat), observer.action_mask(game, seat)
            pending[seat].append(len(actions))
            obs_rows[len(actions)] = obs
            mask_rows[len(actions)] = mask
            actions.append(observer.table.to_action(move, game))
            returns.append(0.0)
            if students[seat]:
                move = observer.table.to_move(student.act(obs, mask), game)
            rounds = len(game.results)
            game.apply(move)
            round_turns += 1
            if len(game.results) > rounds or round_turns >= config.max_turns:
                if len(game.results) > rounds and game.results[-1].caller is not None:
                    rewards = round_rewards(game.results[-1], config.round_reward)
                    for q in range(n):
                        for k, i in enumerate(reversed(pending[q])):
                            returns[i] = rewards[q] * gamma**k
                if round_turns >= config.max_turns:
                    break  # a round going in circles: drop the rest of this game
                pending = [[] for _ in range(n)]
                round_turns = 0
    return {
        "obs": obs_rows[: len(actions)],
        "masks": mask_rows[: len(actions)],
        "actions": np.asarray(actions, dtype=np.int64),
        "returns": np.asarray(returns, dtype=np.float32),
    }


def imitate(
    model: Any,
    data: dict,
    epochs: int,
    batch_size: int,
    vf_coef: float,
    seed: int,
    learning_rate: float | None = None,
    schedule: str = "constant",
) -> dict[str, float]:
    """Behaviour cloning: the policy learns the bot's actions (masked cross-entropy) and the value
    net its returns, with the model's own optimizer (at ``learning_rate`` if given, then back at
    its own). With ``schedule="cosine"`` the rate falls from there to zero over the passes, half a
    cosine wave. Returns the last epoch's figures."""
    import math

    import torch

    policy = model.policy
    saved_lr = [group["lr"] for group in policy.optimizer.param_groups]
    if learning_rate is not None:
        for group in policy.optimizer.param_groups:
            group["lr"] = learning_rate
    policy.set_training_mode(True)
    n = len(data["actions"])
    rng = np.random.default_rng(seed)
    tensors = {k: torch.as_tensor(v) for k, v in data.items()}
    stats: dict[str, float] = {}
    steps, step = epochs * -(-n // batch_size), 0
    base_lr = [group["lr"] for group in policy.optimizer.param_groups]
    for _ in range(epochs):
        order = torch.as_tensor(rng.permutation(n))
        totals = np.zeros(3)
        for start in range(0, n, batch_size):
            if schedule == "cosine":
                for group, lr in zip(policy.optimizer.param_groups, base_lr):
                    group["lr"] = lr * 0.5 * (1.0 + math.cos(math.pi * step / steps))
            step += 1
            idx = order[start : start + batch_size]
            values, log_prob, _ = policy.evaluate_actions(
                tensors["obs"][idx], tensors["actions"][idx], action_masks=tensors["masks"][idx]
            )
            policy_loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), tensors["returns"][idx])
            loss = policy_loss + vf_coef * value_loss
            policy.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
            policy.optimizer.step()
            with torch.no_grad():
                agree = (log_prob > np.log(0.5)).float().sum().item()
            totals += (policy_loss.item() * len(idx), value_loss.item() * len(idx), agree)
        stats = {"policy_loss": totals[0] / n, "value_loss": totals[1] / n, "agreement": totals[2] / n}
    for group, lr in zip(policy.optimizer.param_groups, saved_lr):
        group["lr"] = lr
    policy.set_training_mode(False)
    return stats


# ----------------------------------------------------------------------------------------------
# Evaluation
# ----------------------------------------------------------------------------------------------


def new_model(config: TrainConfig, vec_env: Any, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO with the config's hyperparameters and network (actor and critic apart)."""
    import torch
    from sb3_contrib import MaskablePPO

    policy_kwargs: dict[str, Any] = {
        "net_arch": {"pi": list(config.net_arch), "vf": list(config.net_arch)},
        "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[config.activation],
    }
    policy: Any = "MlpPolicy"
    if config.stakes_skip:
        from agents.policies.stakes_torch import StakesSkipPolicy

        policy = StakesSkipPolicy
    return MaskablePPO(
        policy,
        vec_env,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_range,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        policy_kwargs=policy_kwargs,
        tensorboard_log=tensorboard_log,
        seed=config.seed,
        device="cpu",
        verbose=0,
    )


def evaluate_policy(
    policy: NumpyPolicy,
    opponent: str,
    num_players: int,
    games: int,
    seed: int,
    rules: str,
    episode: str = "game",
    max_turns: int = 500,
) -> dict[str, float]:
    """The policy against ``opponent`` bots in every other seat: a tournament of ``games`` (rounded
    up to whole seat rotations; see ``agents.tournament``) on duplicate deals, in this process.
    A round reaching ``max_turns`` ends with no winner (bots can trade cards forever). The
    tournament stops with an error naming the agent on any illegal move, so a finished
    evaluation had none."""
    from agents.tournament import run_tournament

    games = -(-games // num_players) * num_players
    learner = PPOAgent(policy, name="learner")
    result = run_tournament(
        [learner] + [opponent] * (num_players - 1), num_players, games, seed=seed, rules=rules,
        rounds=episode == "round", workers=1, progress=False, max_turns=max_turns,
    )
    stats = next(a for a in result.agents if a.name == "learner")
    low, high = stats.win_interval
    return {
        "win_rate": stats.win_rate,
        "win_rate_low": low,
        "win_rate_high": high,
        "points_per_round": stats.points_per_round or 0.0,
        "yaniv_per_round": stats.calls_per_round or 0.0,
        "assafed_rate": stats.assafed_per_call or 0.0,
        "rounds_per_game": stats.rounds_per_game or 0.0,
        "illegal_actions": 0,
        "games": stats.games,
    }


# ----------------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------------


def atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def save_model_atomically(model: Any, path: Path) -> None:
    """SB3 save to a temporary file, then an atomic rename: a crash never leaves a broken file."""
    tmp = path.with_name(path.stem + ".tmp.zip")
    model.save(tmp)
    os.replace(tmp, path)


def save_state(run_dir: Path, state: dict) -> None:
    atomic_write_text(run_dir / "state.json", json.dumps(state, indent=2))


# ----------------------------------------------------------------------------------------------
# The callback: snapshots, evaluation, checkpoints, progress
# ----------------------------------------------------------------------------------------------

from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402  (training needs SB3 anyway)


class SelfPlayCallback(BaseCallback):
    """Adds snapshots to the pool, evaluates, writes checkpoints and drives the progress bar.

    Everything it must remember across a resume lives in ``self.state`` (state.json).
    """

    def __init__(self, config: TrainConfig, pool: OpponentPool, envs: Sequence[SelfPlayEnv], state: dict) -> None:
        super().__init__()
        self.config = config
        self.pool = pool
        self.envs = envs
        self.state = state
        self.run_dir = config.run_dir
        self.bar = None
        self._rollout_start = time.perf_counter()
        self._rollout_steps = 0
        self._clock_start = 0.0
        self._eval_text = "no evaluation yet"

    # SB3 hooks --------------------------------------------------------------------------------

    def _on_training_start(self) -> None:
        from stable_baselines3.common.logger import TensorBoardOutputFormat

        text = "\n".join(f"    {k}: {v!r}" for k, v in self.config.to_dict().items())
        for fmt in self.logger.output_formats:
            if isinstance(fmt, TensorBoardOutputFormat):
                fmt.writer.add_text("config", text, self.num_timesteps)
                fmt.writer.flush()
        if self.config.progress:
            from tqdm import tqdm

            self.bar = tqdm(total=self.config.total_timesteps, initial=self.num_timesteps, unit="step", dynamic_ncols=True)

    def _on_rollout_start(self) -> None:
        # Rollouts run the network on a handful of observations at a time: extra torch threads
        # only spin (badly, on a shared machine). The update gets config.torch_threads back.
        import torch

        torch.set_num_threads(1)
        self._rollout_start = time.perf_counter()
        self._rollout_steps = self.num_timesteps
        self._clock_start = sum(env.clock[0] for env in self.envs)

    def _on_rollout_end(self) -> None:
        import torch

        torch.set_num_threads(self.config.torch_threads)
        elapsed = time.perf_counter() - self._rollout_start
        steps = self.num_timesteps - self._rollout_steps
        opponent = sum(env.clock[0] for env in self.envs) - self._clock_start
        if elapsed > 0:
            self.logger.record("selfplay/env_steps_per_second", steps / elapsed)
            self.logger.record("selfplay/opponent_time_share", opponent / elapsed)
            self.state["last_steps_per_second"] = steps / elapsed
            self.state["last_opponent_share"] = opponent / elapsed
        self.logger.record("selfplay/pool_snapshots", len(self.pool.snapshots))

    def _on_step(self) -> bool:
        step = self.num_timesteps
        c = self.config
        if step >= self.state["next_snapshot"]:
            self.add_snapshot()
            self.state["next_snapshot"] += c.snapshot_every
        if c.eval_every and step >= self.state["next_eval"]:
            self.evaluate()
            self.state["next_eval"] += c.eval_every
        if step >= self.state["next_checkpoint"]:
            self.save_checkpoint()
            self.state["next_checkpoint"] += c.checkpoint_every
        if self.bar is not None:
            self.bar.update(step - self.bar.n)
            rate = self.state.get("last_steps_per_second")
            self.bar.set_postfix_str((f"{rate:,.0f} steps/s | " if rate else "") + self._eval_text, refresh=False)
        return True

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()

    # Actions ----------------------------------------------------------------------------------

    def current_policy(self) -> NumpyPolicy:
        return NumpyPolicy.from_sb3(self.model, meta={"rules": self.config.rules, "step": self.num_timesteps})

    def add_snapshot(self) -> None:
        policy = self.current_policy()
        pool_dir = self.run_dir / "pool"
        pool_dir.mkdir(exist_ok=True)
        path = pool_dir / f"snapshot_{self.num_timesteps:09d}.npz"
        policy.save(path)
        self.pool.add(self.num_timesteps, policy)
        kept = {f"snapshot_{s:09d}.npz" for s, _ in self.pool.snapshots}
        self.state["pool"] = sorted(kept)
        for old in pool_dir.glob("snapshot_*.npz"):
            if old.name not in kept:
                old.unlink()

    def evaluate(self) -> dict[str, dict[str, float]]:
        c = self.config
        policy = self.current_policy()
        players = c.eval_players or max(c.player_counts)
        results = {}
        for opponent in c.eval_opponents:
            stats = evaluate_policy(
                policy, opponent, players, c.eval_games, seed=c.seed + 7919, rules=c.rules,
                episode=c.eval_episode, max_turns=c.max_turns,
            )
            results[opponent] = stats
            for key, value in stats.items():
                self.logger.record(f"eval_{opponent}/{key}", value)
        score = float(np.mean([r["win_rate"] for r in results.values()]))
        self.logger.record("eval/mean_win_rate", score)
        self.logger.dump(self.num_timesteps)
        self.state.setdefault("evaluations", []).append({"step": self.num_timesteps, "results": results})
        first = c.eval_opponents[0]
        self._eval_text = f"eval vs {first}: {results[first]['win_rate']:.0%}"
        if score > self.state.get("best_score", -1.0):
            self.state["best_score"] = score
            self.state["best_step"] = self.num_timesteps
            save_model_atomically(self.model, self.run_dir / "checkpoints" / "best.zip")
            policy.save(self.run_dir / "checkpoints" / "best.npz")
        save_state(self.run_dir, self.state)
        return results

    def save_checkpoint(self) -> None:
        """latest.zip (the SB3 model) and latest.npz (the policy's weights), then state.json."""
        folder = self.run_dir / "checkpoints"
        save_model_atomically(self.model, folder / "latest.zip")
        self.current_policy().save(folder / "latest.npz")
        self.state["timesteps"] = self.num_timesteps
        save_state(self.run_dir, self.state)


def new_state(config: TrainConfig) -> dict:
    return {
        "timesteps": 0,
        "next_snapshot": config.snapshot_every,
        "next_eval": config.eval_every or config.total_timesteps + 1,
        "next_checkpoint": config.checkpoint_every,
        "pool": [],
        "evaluations": [],
    }


def load_state(run_dir: Path) -> dict:
    path = run_dir / "state.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read the run state {path}: {error}") from None
    for key in ("timesteps", "next_snapshot", "next_eval", "next_checkpoint", "pool"):
        if key not in state:
            raise ValueError(f"the run state {path} lacks {key!r}")
    return state
