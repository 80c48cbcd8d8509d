"""Many Yaniv tables as one vector environment on the compiled core: a Stable-Baselines3 ``VecEnv``
and a Gymnasium ``VectorEnv``.

>>> from yaniv_env.vector import YanivVecEnv
>>> env = YanivVecEnv(num_envs=256, players="2-4", opponents="heuristic", seed=0)
>>> obs = env.reset()                                  # (256, N) float32
>>> obs, rewards, dones, infos = env.step(actions)     # actions (256,) int, legal by env.action_masks()

Each env is one learner's table, as ``yaniv_env.gym_env.YanivGymEnv``: the learner holds one seat,
the other seats are played by compiled bots or by frozen policy snapshots, and a step plays the
learner's action and then the other seats until the learner is to act again or its episode ends.
All tables advance in one call of compiled code (``yaniv_env.core.batch``); the bots move inside
it, and a snapshot's seats of all tables are evaluated in one batched forward pass per snapshot
per round of the advance.

=====================  ==========================================================================
Observation            the learner's ``yaniv_env.encoding`` vector: ``Box(0, 1, (N,), float32)``
                       per env, N = ``encoding.observation_size(hand_size)``
Action                 ``Discrete(A)`` per env, the action table of ``yaniv_env.encoding``; the
                       legal ones are ``action_masks()``, (num_envs, A) bool (sb3-contrib's
                       protocol, so ``MaskablePPO`` masks them)
Episode, rewards       as ``YanivGymEnv`` over ``yaniv_env.aec``: a round (``-points / 50``, or
                       ``round_reward="relative"``) or a game (by final rank, +1 to -1), or,
                       with ``round_share``, either one drawn per episode; paid at
                       the step that ends the episode, whoever moved last; a round cut by the
                       rules' turn cap, or an episode by ``max_turns``, is truncated, reward 0
Reset                  each episode draws its table size from ``players`` and the learner's seat,
                       uniformly, and deals (seat 0 starts); a deal that ends before the
                       learner's first decision is dealt again (``YanivGymEnv.reset``)
=====================  ==========================================================================

Arguments
---------
``num_envs``; ``players``: a count 2-8, a range such as ``"2-4"`` or a sequence of counts, drawn
per episode (``set_players`` changes them for the episodes to come); ``rules``: a preset name,
``yaniv.Rules`` or mapping for all envs, or a list with one per env (one hand size for all: one
observation size); ``episode`` ("round" or "game");
``round_reward`` ("points" or "relative"); ``max_turns`` (None, or truncate an episode after that
many moves of any seat); ``seed`` (None: fresh entropy); ``opponents`` (below); ``rule_sets`` (None,
or a list of presets, ``Rules`` or mappings: each episode of each env then draws its rules from
them, uniformly, with the env's own generator, so one agent trains across house rules; they must
deal the envs' hand size, and the observation's settings segment tells the learner which apply;
``set_rule_sets`` changes them for the episodes to come);
``round_share`` (with ``episode="game"``: the chance that an episode is a single round from zero
scores instead, paid by ``round_reward``, drawn per episode from the game's generator, so one
learner trains on both; at 0, the default, nothing is drawn and the streams are as without it);
``threads`` (1, the default: the kernels run on the calling thread; more: the games of each call
split in that many parts, run on a pool of as many threads, since the kernels release the GIL;
for a machine whose cores the learner's forward pass leaves idle; the same results, game for game).

Opponents
---------
A *controller* plays a seat: a bot name, ``"random"``, ``"greedy"``, ``"heuristic"`` or
``"heuristic:K=V,..."`` (the keyword arguments of ``agents.baselines.heuristic.HeuristicAgent``,
spelled as ``agents.registry`` spells them; ``yaniv_env.core.bots`` plays them), ``"search"`` or
``"search:N"`` (the determinized-rollout search with N rollouts a move, ``yaniv_env.core.search``:
about a millisecond a move at the default 128, so its seats of all tables are searched in one
compiled call per round of the advance, like a snapshot's, drawing from the game's generator), or
a *snapshot*:
any object with ``act_batch(observations (B, N) float32, masks (B, A) int8, rng) -> actions (B,)``
(``agents.policies.ppo.NumpyPolicy`` has one; this module never imports ``agents``). A *spec* says
who plays the seats other than the learner's in one env:

* one controller: every other seat;
* a tuple (or, inside a per-env list, a list) of controllers: the k-th seat after the learner's
  gets the k-th; at least ``max(players) - 1`` of them;
* a callable ``draw(rng, n_seats) -> controllers`` (not itself a snapshot): called at each
  episode's start with the env's own ``numpy.random.Generator`` and the number of other seats, so
  a training loop's opponent pool draws the table (``agents.training.OpponentPool``).

``opponents`` is one spec for every env (None: ``"random"``), or a list of ``num_envs`` specs, one
per env. ``set_opponents(spec, indices)`` changes them; the change takes effect at each env's next
episode. Snapshots sample with one generator of the vector env.

Seeding and determinism
-----------------------
Env i is seeded with ``seed + i`` (SB3's and Gymnasium's convention): its deals, the learner's
seat, the table size and the random bot's moves come from the game's own generator
(``engine.seed_rng``), its ``draw`` calls from a ``numpy`` generator spawned from the same seed,
and the snapshots sample from one generator spawned from env 0's seed. The same seeds and the same
learner actions give the same trajectories. ``reset`` without a seed continues the streams.

Faces
-----
``YanivVecEnv`` (a ``stable_baselines3.common.vec_env.VecEnv``): ``reset()``, ``step_async`` /
``step_wait``, ``seed``, ``action_masks()``; at an episode's end ``dones[i]`` is True, ``obs[i]``
is the next episode's first observation, ``infos[i]["terminal_observation"]`` the last one,
``infos[i]["TimeLimit.truncated"]`` whether it was truncated and ``infos[i]["seat"]`` the
learner's seat in it (other infos are empty). ``env_method("action_masks")``,
``get_attr`` (``seat``, ``num_players``, ``rules``, ``opponents``, ``render_mode``, the spaces, and
whatever ``set_attr`` stored) and ``set_attr("opponents", spec, indices)`` work per env.

``YanivVectorEnv`` (a ``gymnasium.vector.VectorEnv``) has the same tables with Gymnasium's
batched API, ``metadata["autoreset_mode"]`` = ``AutoresetMode.SAME_STEP``: the step that ends an
episode returns the next episode's first observation, with the last one in
``infos["final_obs"]`` and its info in ``infos["final_info"]`` (each with its ``_`` mask). Every
info holds ``"action_mask"`` (num_envs, A) int8 and ``"seat"``. With
``autoreset_mode=AutoresetMode.NEXT_STEP`` (Gymnasium's default mode, which RLlib's env runners
expect) the step that ends an episode returns its last observation itself, with an all-zero mask,
and the env's next step ignores its action and returns the next episode's first observation
(reward 0): only the other envs play that step (``YanivBatch.step`` with ``games``).

Bad input raises ValueError naming it: actions of the wrong shape or dtype, an action id out of
range or one the mask forbids (naming the env and the action), an unknown bot or setting, a
spec of the wrong size, a snapshot's illegal action. ``final_rows`` holds a copy of the row
(``yaniv_env.core.layout``) of each env whose episode ended at the last step, for analysis.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence, Union

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from stable_baselines3.common.vec_env import VecEnv

from yaniv.game import MAX_PLAYERS, MIN_PLAYERS
from yaniv.rules import Rules, get_rules
from yaniv_env.aec import EPISODES, ROUND_REWARDS
from yaniv_env.core import batch as B
from yaniv_env.core import bots
from yaniv_env.core import engine
from yaniv_env.core import layout as L
from yaniv_env.core import search
from yaniv_env.encoding import action_table, observation_size

Controller = Union[str, Any]  # a bot name or an object with act_batch
Spec = Union[Controller, Sequence[Controller], Callable[[np.random.Generator, int], Sequence[Controller]]]

BOTS = {"random": B.RANDOM, "greedy": B.GREEDY, "heuristic": B.HEURISTIC}
SEARCH = "search"
MAX_SEARCH_BUDGET = 1 << 20  # rollouts a move: a bound on a typo, far above any real use
_OTHER_SEATS = L.MAX_SEATS - 1
MAX_RULE_SETS = 1024
_MAX_LINE_UPS = 4096  # line-ups of bot names whose seat codes are kept
MAX_THREADS = 256  # a bound on a typo


def parse_players(players: int | str | Sequence[int]) -> tuple[int, ...]:
    """The table sizes ``players`` allows: a count, ``"LOW-HIGH"``, or a sequence of counts."""
    counts: tuple[int, ...]
    if isinstance(players, str):
        low, dash, high = players.partition("-")
        try:
            counts = tuple(range(int(low), int(high) + 1)) if dash else (int(low),)
        except ValueError:
            counts = ()
    elif isinstance(players, (int, np.integer)) and not isinstance(players, bool):
        counts = (int(players),)
    elif isinstance(players, (Sequence, np.ndarray)):
        counts = tuple(int(n) if isinstance(n, np.integer) else n for n in players)
    else:
        counts = ()
    if not counts or any(type(n) is not int or not MIN_PLAYERS <= n <= MAX_PLAYERS for n in counts):
        raise ValueError(f"players must be a count from {MIN_PLAYERS} to {MAX_PLAYERS}, a range such as '2-4' "
                         f"or a sequence of counts, got {players!r}")
    return counts


def is_snapshot(controller: Any) -> bool:
    """Whether ``controller`` is a policy the env evaluates in Python (it has ``act_batch``)."""
    return callable(getattr(controller, "act_batch", None))


class CompiledSearch:
    """The compiled search as a seat controller: ``act_rows`` answers for every table where it is to
    move in one compiled call (``yaniv_env.core.search.search_games``) on the game rows, not on
    observations. ``budget``: rollouts a move."""

    def __init__(self, budget: int = search.DEFAULT_BUDGET) -> None:
        self.budget = budget
        self.params = search.search_params(budget)
        self.ranking = bots.heuristic_params(call_risk=search.CALL_RISK)

    def act_rows(self, S: np.ndarray, R: np.ndarray, games: np.ndarray) -> np.ndarray:
        out = np.empty(games.size, dtype=np.int64)
        search.search_games(S, R, games, self.params, self.ranking, out)
        return out

    def __repr__(self) -> str:
        return f"CompiledSearch(budget={self.budget})"


class YanivBatch:
    """The tables, their compiled state and the episode loop; the two faces below wrap it.

    ``reset()`` starts a new episode in every env, ``step(actions)`` plays one learner action per
    env (checked first by ``check_actions``); both return a ``Step``. ``masks`` holds the learners'
    action masks (int8), ``final_rows`` the rows of the episodes the last call ended. Arguments:
    see the module docstring."""

    def __init__(
        self,
        num_envs: int,
        players: int | str | Sequence[int] = 2,
        rules: str | Rules | dict | Sequence[str | Rules | dict] | None = "default",
        opponents: Spec | list[Spec] | None = None,
        episode: str = "round",
        round_reward: str = "points",
        max_turns: int | None = None,
        seed: int | None = None,
        rule_sets: Sequence[str | Rules | dict] | None = None,
        round_share: float = 0.0,
        threads: int = 1,
    ) -> None:
        if type(num_envs) is not int or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
        if round_reward not in ROUND_REWARDS:
            raise ValueError(f"round_reward must be one of {ROUND_REWARDS}, got {round_reward!r}")
        if isinstance(round_share, bool) or not isinstance(round_share, (int, float)) or not 0 <= round_share <= 1:
            raise ValueError(f"round_share must be a number from 0 to 1, got {round_share!r}")
        if round_share and episode != "game":
            raise ValueError(f"round_share mixes single rounds into episode 'game', not {episode!r}")
        if max_turns is not None and (type(max_turns) is not int or max_turns < 1):
            raise ValueError(f"max_turns must be None or an integer >= 1, got {max_turns!r}")
        if seed is not None and (type(seed) is not int or seed < 0):
            raise ValueError(f"seed must be None or an integer >= 0, got {seed!r}")
        if type(threads) is not int or not 1 <= threads <= MAX_THREADS:
            raise ValueError(f"threads must be an integer from 1 to {MAX_THREADS}, got {threads!r}")
        self.threads = threads
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="yaniv-core") if threads > 1 else None
        self.num_envs = E = num_envs
        self.counts = parse_players(players)
        self.episode, self.round_reward, self.max_turns = episode, round_reward, max_turns
        self.round_share = float(round_share)
        self.rules = self._per_env_rules(rules)
        self.rule_sets, self._rule_rows = self._rule_sets(rule_sets)
        hand = self.rules[0].hand_size
        self.table = action_table(hand)
        self.obs_size = observation_size(hand)

        self.S = L.new_rows(E)
        for i, r in enumerate(self.rules):
            L.write_rules(self.S[i], r)
        self.R = np.zeros((E, 1), dtype=np.uint64)
        self.G = B.new_batch(E)
        self.W = np.zeros(E, dtype=np.float64)
        self.C = np.zeros(B.C_WIDTH, dtype=np.int64)
        self.C[B.C_ROUND_SHARE] = B.SHARE_ONE if episode == "round" else round(round_share * B.SHARE_ONE)
        self.C[B.C_RELATIVE] = round_reward == "relative"
        self.C[B.C_MAX_TURNS] = -1 if max_turns is None else max_turns
        self.P = bots.heuristic_params()[None, :].copy()
        self._param_rows: dict[tuple[float, ...], int] = {tuple(self.P[0]): 0}
        self._bot_codes: dict[str, tuple[int, int]] = {}
        self._line_ups: dict[tuple[str, ...], np.ndarray] = {}
        self._searches: dict[int, CompiledSearch] = {}
        self._snapshots: list[Any] = []  # by the SNAPSHOT seats' parameter; None: a free slot
        self._snapshot_ids: dict[int, int] = {}  # id(snapshot) -> its index
        self._free: list[int] = []
        self._buf = np.zeros(B.SCRATCH, dtype=np.int64)
        self._bufs = [self._buf] + [np.zeros(B.SCRATCH, dtype=np.int64) for _ in range(threads - 1)]
        self._all = np.arange(E, dtype=np.int64)
        self.masks = np.zeros((E, self.table.size), dtype=np.int8)
        self.obs = np.zeros((E, self.obs_size), dtype=np.float32)
        self.final_rows: dict[int, np.ndarray] = {}

        self.snapshot_rng = np.random.default_rng(0)  # both replaced by seed_envs below
        self.draw_rngs = [self.snapshot_rng] * E
        self.specs: list[Spec] = [None] * E
        self._draws: list[Callable | None] = [None] * E
        self.set_opponents(opponents, per_env=isinstance(opponents, list))
        self.seed_envs([None] * E if seed is None else [seed + i for i in range(E)], fresh=seed is None)
        self.started = False

    # -- arguments -----------------------------------------------------------------------------

    def _per_env_rules(self, rules: Any) -> list[Rules]:
        if isinstance(rules, (list, tuple)):
            if len(rules) != self.num_envs:
                raise ValueError(f"rules: give one for all envs or a list of {self.num_envs} (one per env), "
                                 f"got {len(rules)}")
            out = [get_rules(r) for r in rules]
        else:
            out = [get_rules(rules)] * self.num_envs
        sizes = {r.hand_size for r in out}
        if len(sizes) > 1:
            raise ValueError(f"rules: every env must deal the same hand size (one observation size), "
                             f"got {sorted(sizes)}")
        for i, r in enumerate(out):
            self._check_deals(r, f"rules of env {i}")
        return out

    def _check_deals(self, r: Rules, what: str, counts: Sequence[int] | None = None) -> None:
        L.check_rules(r)
        top = max(self.counts if counts is None else counts)
        if top * r.hand_size + 1 > 52 + r.jokers:
            raise ValueError(f"{what}: {top} players x {r.hand_size} cards + 1 face-up card need more "
                             f"than the {52 + r.jokers} cards of the deck")

    def _rule_sets(self, rule_sets: Any) -> tuple[list[Rules] | None, np.ndarray | None]:
        """The rule sets each episode draws from (None: every episode plays its env's ``rules``), and
        their rule fields as the core's rows hold them (``yaniv_env.core.layout.write_rules``), one row a
        set, written once here so that a new episode copies its set's fields instead of encoding them."""
        if rule_sets is None:
            return None, None
        if isinstance(rule_sets, (str, dict, Rules)) or not isinstance(rule_sets, Sequence) or not rule_sets:
            raise ValueError(f"rule_sets must be a non-empty list of presets, Rules or mappings, got {rule_sets!r}")
        if len(rule_sets) > MAX_RULE_SETS:
            raise ValueError(f"rule_sets: at most {MAX_RULE_SETS} rule sets, got {len(rule_sets)}")
        out = []
        for k, r in enumerate(rule_sets):
            try:
                rules = get_rules(r)
            except (TypeError, ValueError) as error:
                raise ValueError(f"rule_sets[{k}]: {error}") from None
            if rules.hand_size != self.rules[0].hand_size:
                raise ValueError(f"rule_sets[{k}] deals {rules.hand_size} cards, the envs {self.rules[0].hand_size}: "
                                 "every rule set must deal one hand size (one observation size)")
            self._check_deals(rules, f"rule_sets[{k}]")
            out.append(rules)
        rows = L.new_rows(len(out))
        for k, rules in enumerate(out):
            try:
                L.write_rules(rows[k], rules)
            except ValueError as error:
                raise ValueError(f"rule_sets[{k}]: {error}") from None
        return out, np.ascontiguousarray(rows[:, L.RULE_FIELDS])

    def controller_code(self, controller: Controller) -> tuple[int, int]:
        """(controller code, parameter) of ``yaniv_env.core.batch`` for a bot name or a snapshot."""
        if isinstance(controller, str) and controller.partition(":")[0] == SEARCH:
            controller = self._search(controller)
        if isinstance(controller, str):
            code = self._bot_codes.get(controller)
            if code is None:
                code = self._bot_codes[controller] = self._parse_bot(controller)
            return code
        if is_snapshot(controller) or isinstance(controller, CompiledSearch):  # played outside the kernel
            index = self._snapshot_ids.get(id(controller))
            if index is None:
                if self._free:
                    index = self._free.pop()
                    self._snapshots[index] = controller
                else:
                    index = len(self._snapshots)
                    self._snapshots.append(controller)
                self._snapshot_ids[id(controller)] = index
            return B.SNAPSHOT, index
        raise ValueError(f"an opponent is a bot name ({', '.join(BOTS)}, 'heuristic:K=V,...', 'search[:N]') or a "
                         f"policy with act_batch(observations, masks, rng), got {controller!r}")

    def _search(self, spec: str) -> CompiledSearch:
        """The search seat of ``spec`` (one object per budget, kept, so its snapshot index is stable)."""
        _, colon, argument = spec.partition(":")
        budget = search.DEFAULT_BUDGET
        if colon:
            text = argument.strip()
            if not text.isdigit() or not 1 <= int(text) <= MAX_SEARCH_BUDGET:
                raise ValueError(f"bot {spec!r}: the search budget must be a whole number from 1 to "
                                 f"{MAX_SEARCH_BUDGET:,}")
            budget = int(text)
        found = self._searches.get(budget)
        if found is None:
            found = self._searches[budget] = CompiledSearch(budget)
        return found

    def _parse_bot(self, spec: str) -> tuple[int, int]:
        name, colon, argument = spec.partition(":")
        if name not in BOTS:
            raise ValueError(f"unknown bot {spec!r}; the compiled bots are {', '.join(BOTS)} (heuristic:K=V,...) "
                             f"and search[:N]")
        if not colon:
            return BOTS[name], 0
        if name != "heuristic":
            raise ValueError(f"bot {spec!r}: only the heuristic takes settings")
        settings: dict[str, float | int] = {}
        for item in argument.split(","):
            key, eq, text = (part.strip() for part in item.partition("="))
            default = bots.HEURISTIC_DEFAULTS.get(key)
            if not eq or type(default) not in (int, float):
                numbers = [k for k, v in bots.HEURISTIC_DEFAULTS.items() if type(v) in (int, float)]
                raise ValueError(f"bot {spec!r}: {item!r} is not K=V with K one of {', '.join(numbers)}")
            try:
                settings[key] = type(default)(text)
            except ValueError:
                kind = "a whole number" if type(default) is int else "a number"
                raise ValueError(f"bot {spec!r}: {key} must be {kind}, got {text!r}") from None
        try:
            params = bots.heuristic_params(**settings)
        except ValueError as error:
            raise ValueError(f"bot {spec!r}: {error}") from None
        key = tuple(params)
        row = self._param_rows.get(key)
        if row is None:
            row = self._param_rows[key] = len(self.P)
            self.P = np.vstack([self.P, params[None, :]])
        return B.HEURISTIC, row

    def _seat_codes(self, controllers: Sequence[Controller]) -> np.ndarray:
        """(2, other seats): the kinds and parameters of ``controllers`` (read only: it may be kept). The
        codes of a line-up of bot names are kept (a new episode's draw names the same few line-ups again
        and again); those that hold a snapshot or a search seat are not: a dropped snapshot frees its index."""
        key = tuple(controllers) if all(isinstance(c, str) for c in controllers) else None
        codes = self._line_ups.get(key) if key is not None else None
        if codes is not None:
            return codes
        codes = np.full((2, _OTHER_SEATS), B.EMPTY, dtype=np.int64)
        codes[1] = 0
        for k, c in enumerate(controllers):
            codes[:, k] = self.controller_code(c)
        if key is not None and not (codes[0] == B.SNAPSHOT).any() and len(self._line_ups) < _MAX_LINE_UPS:
            self._line_ups[key] = codes
        return codes

    def set_opponents(self, spec: Spec | list[Spec] | None, indices: Sequence[int] | None = None,
                      per_env: bool = False) -> None:
        """Who plays the other seats of the envs ``indices`` (all: None) from their next episode.
        ``per_env``: ``spec`` is a list with one spec per env of ``indices``."""
        indices = list(range(self.num_envs)) if indices is None else [int(i) for i in indices]
        if per_env:
            if len(spec) != len(indices):
                raise ValueError(f"opponents: a list gives one spec per env ({len(indices)}), got {len(spec)}; "
                                 f"write the seats of one spec as a tuple")
            specs = list(spec)
        else:
            specs = [spec] * len(indices)
        need = max(self.counts) - 1
        checked = []
        for i, s in zip(indices, specs):
            s = "random" if s is None else s
            if isinstance(s, (tuple, list)):
                if not need <= len(s) <= _OTHER_SEATS:
                    raise ValueError(f"opponents of env {i}: a sequence names the seats after the learner's, at least "
                                     f"{need} (players {self.counts}) and at most {_OTHER_SEATS}, got {len(s)}")
                checked.append((i, s, self._seat_codes(s), None))
            elif callable(s) and not is_snapshot(s):
                checked.append((i, s, None, s))
            else:
                checked.append((i, s, self._seat_codes([s] * _OTHER_SEATS), None))
        for i, s, codes, draw in checked:  # all checked: change nothing on an error
            self.specs[i] = s
            self._draws[i] = draw
            if codes is not None:
                self.G[i, B.G_OTHER_KIND : B.G_OTHER_KIND + _OTHER_SEATS] = codes[0]
                self.G[i, B.G_OTHER_PARAM : B.G_OTHER_PARAM + _OTHER_SEATS] = codes[1]

    def seed_envs(self, seeds: Sequence[int | None], fresh: bool = False) -> None:
        """Seed env i with ``seeds[i]`` (None: leave it, or fresh entropy when ``fresh``)."""
        for i, seed in enumerate(seeds):
            if seed is None:
                if not fresh:
                    continue
                seed = int(np.random.SeedSequence().entropy % 2**63)
            self.R[i, 0] = engine.seed_rng(seed)
            if i == 0:
                self.snapshot_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
            self.draw_rngs[i] = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))

    # -- episodes ------------------------------------------------------------------------------

    def reset(self) -> "Step":
        """New episodes in every env; the first observations (in ``self.obs``)."""
        self._new_episodes(self._all)
        step = self._settle(np.zeros(self.num_envs, dtype=np.float32))
        self.started = True
        return step

    def check_actions(self, actions: Any, games: np.ndarray | None = None) -> np.ndarray:
        """``actions`` as int64 (num_envs,), or ValueError naming what is wrong; with ``games``, only
        those envs' actions must be legal (the others are not played: see ``step``)."""
        if not self.started:
            raise RuntimeError("step before reset(): call reset() first")
        a = np.asarray(actions)
        E = self.num_envs
        if a.shape != (E,):
            raise ValueError(f"actions must have shape ({E},), one action id per env, got shape {a.shape}")
        if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be integer action ids, got dtype {a.dtype}")
        a = a.astype(np.int64)
        rows = self._all if games is None else games
        out = rows[(a[rows] < 0) | (a[rows] >= self.table.size)]
        if out.size:
            i = int(out[0])
            raise ValueError(f"env {i}: {a[i]} is not an action id (0 to {self.table.size - 1})")
        illegal = rows[self.masks[rows, a[rows]] == 0]
        if illegal.size:
            i = int(illegal[0])
            raise ValueError(f"env {i}: illegal action {a[i]} ({self.table.describe(int(a[i]))}); "
                             f"the mask allows {int(self.masks[i].sum())} actions"
                             + (f" ({illegal.size} envs got an illegal action)" if illegal.size > 1 else ""))
        return a

    def step(self, actions: np.ndarray, games: np.ndarray | None = None) -> "Step":
        """One learner action per env (checked by ``check_actions``), then the other seats. With
        ``games`` (int64 env indices), only those envs play their action; the others keep their
        position (reward 0: a next-step autoreset's envs that have just been dealt)."""
        self.W[:] = 0.0
        games, moves = (self._all, actions) if games is None else (games, actions[games])
        if games.size:
            self._check_kernel(self._play(games, moves), games)
        return self._settle(None)

    def close(self) -> None:
        """Stop the thread pool of ``threads`` (the env steps on the calling thread from then on)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    # The kernels, on the calling thread or split among ``threads`` (the same result, game for game).

    def _split(self, call: Callable[[int, int, np.ndarray], int], n: int) -> int:
        """``call(lo, hi, buf)`` for the parts of n games, on the pool's threads where there is one
        (the kernels release the GIL); the first failed k over all parts, or -1."""
        if self._pool is None or n < 2 * self.threads:
            return call(0, n, self._buf)
        bounds = [n * p // self.threads for p in range(self.threads + 1)]
        parts = [self._pool.submit(call, lo, hi, buf) for lo, hi, buf in zip(bounds, bounds[1:], self._bufs)]
        failed = [part.result() for part in parts]  # every part finishes before any error is read
        return next((lo + k for lo, k in zip(bounds, failed) if k >= 0), -1)

    def _deal(self, games: np.ndarray) -> int:
        S, R, G, W, P, C = self.S, self.R, self.G, self.W, self.P, self.C
        return self._split(lambda lo, hi, buf: B.deal(S, R, G, W, P, C, games[lo:hi]), games.size)

    def _play(self, games: np.ndarray, actions: np.ndarray) -> int:
        S, R, G, W, P, C = self.S, self.R, self.G, self.W, self.P, self.C
        return self._split(lambda lo, hi, buf: B.play(S, R, G, W, P, C, games[lo:hi], actions[lo:hi]), games.size)

    def _observe(self, games: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        self._split(lambda lo, hi, buf: B.observe_games(self.S, games[lo:hi], seats[lo:hi], out[lo:hi], buf) or -1,
                    games.size)

    def _mask(self, games: np.ndarray, out: np.ndarray) -> None:
        self._split(lambda lo, hi, buf: B.mask_games(self.S, games[lo:hi], out[lo:hi], buf) or -1, games.size)

    def _check_kernel(self, failed: int, games: np.ndarray) -> None:
        if failed >= 0:
            g = int(games[failed])
            raise RuntimeError(f"env {g}: the core refused a move it should have taken (status "
                               f"{int(self.G[g, B.G_STATUS])}, redeals {int(self.G[g, B.G_REDEALS])}): "
                               f"an episode that always ends before the learner's first decision?")

    def _drop_unused_snapshots(self) -> None:
        """Forget the snapshots no seat and no spec names any more (a pool's dropped ones), so that
        a long run does not keep every snapshot it ever met alive."""
        G = self.G
        used = set(G[:, B.G_SEAT_PARAM : B.G_SEAT_PARAM + L.MAX_SEATS][
            G[:, B.G_SEAT_KIND : B.G_SEAT_KIND + L.MAX_SEATS] == B.SNAPSHOT].tolist())
        used |= set(G[:, B.G_OTHER_PARAM : B.G_OTHER_PARAM + _OTHER_SEATS][
            G[:, B.G_OTHER_KIND : B.G_OTHER_KIND + _OTHER_SEATS] == B.SNAPSHOT].tolist())
        for index, snapshot in enumerate(self._snapshots):
            if snapshot is not None and index not in used:
                del self._snapshot_ids[id(snapshot)]
                self._snapshots[index] = None
                self._free.append(index)

    def set_rule_sets(self, rule_sets: Sequence[str | Rules | dict] | None) -> None:
        """The rule sets that episodes draw from, from each env's next episode on (None: each env's
        ``rules``); checked as at construction, and left as they were if any is refused."""
        self.rule_sets, self._rule_rows = self._rule_sets(rule_sets)

    def set_players(self, players: int | str | Sequence[int]) -> None:
        """The table sizes episodes draw from, from each env's next episode on; checked as at
        construction (every env's rules and rule set must deal the largest table, every opponent
        sequence name its seats), and left as they were if refused."""
        counts = parse_players(players)
        for i, r in enumerate(self.rules):
            self._check_deals(r, f"rules of env {i}", counts)
        for k, r in enumerate(self.rule_sets or ()):
            self._check_deals(r, f"rule_sets[{k}]", counts)
        for i, s in enumerate(self.specs):
            if isinstance(s, (tuple, list)) and len(s) < max(counts) - 1:
                raise ValueError(f"players {counts}: the opponents of env {i} name {len(s)} seats, and the largest "
                                 f"table needs {max(counts) - 1}")
        self.counts = counts

    def _new_episodes(self, games: np.ndarray) -> None:
        if len(self._snapshot_ids) > 32:
            self._drop_unused_snapshots()
        if self.rule_sets is not None:
            count = len(self.rule_sets)
            picks = [int(self.draw_rngs[g].integers(count)) for g in games]
            self.S[games, L.RULE_FIELDS] = self._rule_rows[picks]
            for g, k in zip(games.tolist(), picks):
                self.rules[g] = self.rule_sets[k]
        B.begin(self.S, self.R, self.G, games, np.array(self.counts, dtype=np.int64))
        for g in games:
            draw = self._draws[g]
            if draw is not None:
                seats = int(self.G[g, B.G_PLAYERS]) - 1
                drawn = list(draw(self.draw_rngs[g], seats))
                if len(drawn) != seats:
                    raise ValueError(f"opponents of env {g}: draw gave {len(drawn)} controllers for {seats} seats")
                codes = self._seat_codes(drawn)
                self.G[g, B.G_OTHER_KIND : B.G_OTHER_KIND + _OTHER_SEATS] = codes[0]
                self.G[g, B.G_OTHER_PARAM : B.G_OTHER_PARAM + _OTHER_SEATS] = codes[1]
        self._check_kernel(self._deal(games), games)

    def _settle(self, rewards: np.ndarray | None) -> "Step":
        """Snapshots move and ended episodes restart until every env is at the learner's decision."""
        E = self.num_envs
        ended_all: list[np.ndarray] = []
        final_obs: list[np.ndarray] = []
        final_seats: list[np.ndarray] = []
        done_codes = np.zeros(E, dtype=np.int64)
        paid = np.zeros(E, dtype=np.float64)
        self.final_rows = {}
        while True:
            status = self.G[:, B.G_STATUS]
            ended = np.flatnonzero(status == B.ENDED)
            if ended.size:
                seats = np.ascontiguousarray(self.G[ended, B.G_LEARNER])
                out = np.empty((ended.size, self.obs_size), dtype=np.float32)
                self._observe(ended, seats, out)
                final_obs.append(out)
                final_seats.append(seats)
                ended_all.append(ended)
                done_codes[ended] = self.G[ended, B.G_DONE]
                paid[ended] = self.W[ended]
                rows = self.S[ended].copy()
                self.final_rows.update(zip(ended.tolist(), rows))
                self._new_episodes(ended)
                status = self.G[:, B.G_STATUS]
            waiting = np.flatnonzero(status == B.AT_SNAPSHOT)
            if not waiting.size:
                break
            self._play_snapshots(waiting)
        reward = self.W.copy()
        if ended_all:
            ended = np.concatenate(ended_all)
            reward[ended] = paid[ended]
            final = np.concatenate(final_obs)
            ended_seats = np.concatenate(final_seats)
        else:
            ended = ended_seats = np.zeros(0, dtype=np.int64)
            final = np.zeros((0, self.obs_size), dtype=np.float32)
        seats = np.ascontiguousarray(self.G[:, B.G_LEARNER])
        obs = np.empty((E, self.obs_size), dtype=np.float32)
        self._observe(self._all, seats, obs)
        self._mask(self._all, self.masks)
        self.obs = obs
        terminated, truncated = done_codes == B.TERMINATED, done_codes == B.TRUNCATED
        return Step(obs, reward, terminated, truncated, ended, final, ended_seats, seats)

    def _play_snapshots(self, waiting: np.ndarray) -> None:
        seats = self.S[waiting, L.CURRENT]
        ids = self.G[waiting, B.G_SEAT_PARAM + seats]
        games_parts, action_parts = [], []
        for sid in np.unique(ids):
            pick = ids == sid
            games = waiting[pick]
            policy = self._snapshots[int(sid)]
            if isinstance(policy, CompiledSearch):
                games_parts.append(games)
                action_parts.append(policy.act_rows(self.S, self.R, games))
                continue
            obs = np.empty((games.size, self.obs_size), dtype=np.float32)
            self._observe(games, np.ascontiguousarray(seats[pick]), obs)
            masks = np.zeros((games.size, self.table.size), dtype=np.int8)
            self._mask(games, masks)
            acts = np.asarray(policy.act_batch(obs, masks, self.snapshot_rng))
            if acts.shape != (games.size,) or acts.dtype == np.bool_ or not np.issubdtype(acts.dtype, np.integer):
                raise ValueError(f"snapshot {policy!r}: act_batch must return ({games.size},) integer actions, "
                                 f"got shape {acts.shape} dtype {acts.dtype}")
            acts = acts.astype(np.int64)
            inside = (acts >= 0) & (acts < self.table.size)
            bad = np.flatnonzero(~inside | (masks[np.arange(games.size), np.where(inside, acts, 0)] == 0))
            if bad.size:
                k = int(bad[0])
                raise ValueError(f"snapshot {policy!r} chose illegal action {int(acts[k])} in env {int(games[k])}")
            games_parts.append(games)
            action_parts.append(acts)
        games = np.concatenate(games_parts)
        actions = np.concatenate(action_parts)
        self._check_kernel(self._play(games, actions), games)

    # -- per env -------------------------------------------------------------------------------

    def env_attr(self, name: str, i: int) -> Any:
        """A per-env attribute (see the module docstring); AttributeError if there is none."""
        if name == "seat":
            return int(self.G[i, B.G_LEARNER])
        if name == "num_players":
            return int(self.G[i, B.G_PLAYERS])
        if name == "rules":
            return self.rules[i]
        if name == "opponents":
            return self.specs[i]
        if name in ("episode", "round_reward", "round_share", "max_turns"):
            return getattr(self, name)
        raise AttributeError(name)


class Step:
    """What one step (or reset) of ``YanivBatch`` gives: per env the observation, reward and end
    flags; ``ended`` the envs whose episode ended, ``final_obs`` their last observations in that
    order, ``final_seats`` the learner's seats in them; ``seats`` the learner's seat per env (of
    the new episode where one began)."""

    __slots__ = ("obs", "reward", "terminated", "truncated", "ended", "final_obs", "final_seats", "seats")

    def __init__(self, obs, reward, terminated, truncated, ended, final_obs, final_seats, seats) -> None:
        self.obs, self.reward, self.terminated, self.truncated = obs, reward, terminated, truncated
        self.ended, self.final_obs, self.final_seats, self.seats = ended, final_obs, final_seats, seats


def _indices(indices: Any, n: int) -> list[int]:
    if indices is None:
        return list(range(n))
    if isinstance(indices, (int, np.integer)):
        return [int(indices)]
    return [int(i) for i in indices]


class YanivVecEnv(VecEnv):
    """The Stable-Baselines3 face (see the module docstring)."""

    def __init__(
        self,
        num_envs: int = 8,
        players: int | str | Sequence[int] = 2,
        rules: str | Rules | dict | Sequence[str | Rules | dict] | None = "default",
        opponents: Spec | list[Spec] | None = None,
        episode: str = "round",
        round_reward: str = "points",
        max_turns: int | None = None,
        seed: int | None = None,
        rule_sets: Sequence[str | Rules | dict] | None = None,
        round_share: float = 0.0,
        threads: int = 1,
    ) -> None:
        self.batch = YanivBatch(num_envs, players, rules, opponents, episode, round_reward, max_turns, seed,
                                rule_sets, round_share, threads)
        self._attrs: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        self._actions: np.ndarray | None = None
        obs_space = spaces.Box(0.0, 1.0, (self.batch.obs_size,), dtype=np.float32)
        super().__init__(num_envs, obs_space, spaces.Discrete(self.batch.table.size))
        if seed is not None:
            self._seeds = [seed + i for i in range(num_envs)]

    @property
    def final_rows(self) -> dict[int, np.ndarray]:
        return self.batch.final_rows

    def set_opponents(self, spec: Spec | list[Spec] | None, indices: Any = None) -> None:
        """Opponents of the envs ``indices`` from their next episode (a list: one spec per env)."""
        self.batch.set_opponents(spec, _indices(indices, self.num_envs), per_env=isinstance(spec, list))

    def set_rule_sets(self, rule_sets: Sequence[str | Rules | dict] | None) -> None:
        """The rule sets each env's episodes draw from, from its next episode on (as ``rule_sets``)."""
        self.batch.set_rule_sets(rule_sets)

    def set_players(self, players: int | str | Sequence[int]) -> None:
        """The table sizes each env's episodes draw from, from its next episode on (as ``players``)."""
        self.batch.set_players(players)

    def reset(self) -> np.ndarray:
        if any(self._options):
            raise ValueError(f"YanivVecEnv.reset takes no options, got {self._options!r}")
        self.batch.seed_envs(self._seeds)
        self._reset_seeds()
        self._reset_options()
        step = self.batch.reset()
        self.reset_infos = [{"seat": int(q)} for q in step.seats]
        return step.obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = self.batch.check_actions(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        actions, self._actions = self._actions, None
        step = self.batch.step(actions)
        dones = step.terminated | step.truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for k, i in enumerate(step.ended.tolist()):
            infos[i]["terminal_observation"] = step.final_obs[k]
            infos[i]["TimeLimit.truncated"] = bool(step.truncated[i] and not step.terminated[i])
            infos[i]["seat"] = int(step.final_seats[k])
        return step.obs, step.reward.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, A) bool: each learner's legal actions now."""
        return self.batch.masks.astype(bool)

    def close(self) -> None:
        if hasattr(self, "batch"):
            self.batch.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        out = []
        for i in _indices(indices, self.num_envs):
            if attr_name in self._attrs[i]:
                out.append(self._attrs[i][attr_name])
            elif attr_name == "render_mode":
                out.append(None)
            elif attr_name == "action_masks":
                out.append(lambda i=i: self.batch.masks[i].astype(bool))
            elif attr_name in ("observation_space", "action_space"):
                out.append(getattr(self, attr_name))
            else:
                out.append(self.batch.env_attr(attr_name, i))
        return out

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        targets = _indices(indices, self.num_envs)
        if attr_name == "opponents":
            self.batch.set_opponents(value, targets)
            return
        if attr_name in ("seat", "num_players", "rules", "episode", "round_reward", "round_share", "max_turns"):
            raise AttributeError(f"{attr_name} is fixed at construction (num_players and seat per episode)")
        for i in targets:
            self._attrs[i][attr_name] = value

    def env_method(self, method_name: str, *method_args, indices: Any = None, **method_kwargs) -> list[Any]:
        targets = _indices(indices, self.num_envs)
        if method_name == "action_masks":
            masks = self.batch.masks.astype(bool)
            return [masks[i] for i in targets]
        if method_name == "set_opponents":
            self.batch.set_opponents(*method_args, targets, **method_kwargs)
            return [None] * len(targets)
        raise AttributeError(f"YanivVecEnv has no per-env method {method_name!r} (action_masks, set_opponents)")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: Any = None) -> list[bool]:
        return [False] * len(_indices(indices, self.num_envs))


class YanivVectorEnv(gym.vector.VectorEnv):
    """The Gymnasium face (see the module docstring): same-step autoreset, or next-step with
    ``autoreset_mode=AutoresetMode.NEXT_STEP`` (``metadata`` says which, per instance)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 8,
        players: int | str | Sequence[int] = 2,
        rules: str | Rules | dict | Sequence[str | Rules | dict] | None = "default",
        opponents: Spec | list[Spec] | None = None,
        episode: str = "round",
        round_reward: str = "points",
        max_turns: int | None = None,
        seed: int | None = None,
        rule_sets: Sequence[str | Rules | dict] | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        round_share: float = 0.0,
        threads: int = 1,
    ) -> None:
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"autoreset_mode must be {AutoresetMode.SAME_STEP.value!r} or "
                             f"{AutoresetMode.NEXT_STEP.value!r}, got {autoreset_mode!r}") from None
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ValueError(f"autoreset_mode {mode.value!r} is not offered: {AutoresetMode.SAME_STEP.value!r} "
                             f"or {AutoresetMode.NEXT_STEP.value!r}")
        self.batch = YanivBatch(num_envs, players, rules, opponents, episode, round_reward, max_turns, seed,
                                rule_sets, round_share, threads)
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.next_step = mode is AutoresetMode.NEXT_STEP
        self._dealt = np.zeros(num_envs, dtype=bool)  # next-step: envs whose returned obs ended an episode
        self._masks = self.batch.masks  # the masks of the observations last returned
        self.num_envs = num_envs
        self.single_observation_space = spaces.Box(0.0, 1.0, (self.batch.obs_size,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(self.batch.table.size)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None

    @property
    def final_rows(self) -> dict[int, np.ndarray]:
        return self.batch.final_rows

    def set_opponents(self, spec: Spec | list[Spec] | None, indices: Any = None) -> None:
        """Opponents of the envs ``indices`` from their next episode (a list: one spec per env)."""
        self.batch.set_opponents(spec, _indices(indices, self.num_envs), per_env=isinstance(spec, list))

    def set_rule_sets(self, rule_sets: Sequence[str | Rules | dict] | None) -> None:
        """The rule sets each env's episodes draw from, from its next episode on (as ``rule_sets``)."""
        self.batch.set_rule_sets(rule_sets)

    def set_players(self, players: int | str | Sequence[int]) -> None:
        """The table sizes each env's episodes draw from, from its next episode on (as ``players``)."""
        self.batch.set_players(players)

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if options:
            raise ValueError(f"YanivVectorEnv.reset takes no options, got {options!r}")
        if seed is not None:
            if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
                seeds: list[int | None] = [int(seed) + i for i in range(self.num_envs)]
            else:
                seeds = list(seed)
                if len(seeds) != self.num_envs:
                    raise ValueError(f"seed: an int, or a list of {self.num_envs} seeds (one per env), "
                                     f"got {len(seeds)}")
            self.batch.seed_envs(seeds)
            self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seeds[0])
        step = self.batch.reset()
        self._dealt[:] = False
        self._masks = self.batch.masks
        return step.obs, self._infos(step)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self.next_step:
            return self._step_next(actions)
        step = self.batch.step(self.batch.check_actions(actions))
        infos = self._infos(step)
        if step.ended.size:
            E = self.num_envs
            ended = np.zeros(E, dtype=bool)
            ended[step.ended] = True
            final_obs = np.full(E, None, dtype=object)
            for k, i in enumerate(step.ended.tolist()):
                final_obs[i] = step.final_obs[k]
            final_seats = np.zeros(E, dtype=np.int64)
            final_seats[step.ended] = step.final_seats
            infos["final_obs"], infos["_final_obs"] = final_obs, ended
            infos["final_info"] = {"seat": final_seats, "_seat": ended.copy()}
            infos["_final_info"] = ended.copy()
        return step.obs, step.reward.copy(), step.terminated, step.truncated, infos

    def _step_next(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Next-step autoreset: an episode's last step returns its last observation (mask all zeros);
        the env's next step ignores its action and returns the new episode's first observation,
        which the batch dealt at once (reward 0, neither flag)."""
        dealt = self._dealt
        moving = np.flatnonzero(~dealt)
        step = self.batch.step(self.batch.check_actions(actions, moving), moving)
        obs, masks, seats = step.obs.copy(), self.batch.masks.copy(), step.seats.copy()
        self._dealt = np.zeros(self.num_envs, dtype=bool)
        if step.ended.size:
            obs[step.ended] = step.final_obs
            masks[step.ended] = 0
            seats[step.ended] = step.final_seats
            self._dealt[step.ended] = True
        self._masks = masks
        every = np.ones(self.num_envs, dtype=bool)
        infos = {"action_mask": masks.copy(), "_action_mask": every, "seat": seats, "_seat": every.copy()}
        return obs, step.reward.copy(), step.terminated, step.truncated, infos

    def _infos(self, step: Step) -> dict[str, Any]:
        every = np.ones(self.num_envs, dtype=bool)
        return {"action_mask": self.batch.masks.copy(), "_action_mask": every, "seat": step.seats.copy(),
                "_seat": every.copy()}

    def action_masks(self) -> np.ndarray:
        """(num_envs, A) bool: the legal actions of the observations last returned (next-step: all
        False where that observation ended an episode)."""
        return self._masks.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        if hasattr(self, "batch"):  # not when the constructor refused its arguments (__del__ closes)
            self.batch.close()
