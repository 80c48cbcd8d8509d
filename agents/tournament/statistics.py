"""Tournament statistics: the per-game records, and what they add up to per agent and per pair.

A ``Tally`` reduces the ``GameRecord`` of every game (made by ``agents.tournament.schedule``) as it
comes, in game order, and drops it, so a tournament's memory does not grow with its games beyond
one margin per agent and deal; ``TournamentResult.from_records(plan, records)`` does the same over
a list. ``TournamentResult`` holds the figures below (and the records only if asked to keep them),
and its ``table()``, ``write(out_dir)`` and plots come from ``agents.tournament.report``.

Per agent (``AgentStats``): games; win rate (a tie for first splits the win, so the wins of a
table add up to one game) with its 95% Wilson interval (``wilson_interval``); over the rounds it
played (alive at the deal): mean points taken per round (before score resets), Yaniv calls per
round, the fraction of its calls that were Assafed, and Assafs it made per round; the mean length
of its games in rounds and turns; its seat counts; time per move.

Its **margin**: in each game, its tablemates' mean points per round minus its own (positive: it
took fewer points than they did), averaged over the games of each deal, then over deals, with a
95% interval over deals (a normal approximation; the deals are independent, the rotations of one
deal are not). Rounds are cheap and the margin is paired by deal, so it tells close bots apart
where win rates cannot (``docs/experiments.md`` has an example).

A rating per agent: OpenSkill's Plackett-Luce model updated on every game's final ranking, in
game order (reported as mu and sigma; the interval is mu +- 2 sigma; ``ordinal`` is OpenSkill's
conservative mu - 3 sigma). Head to head: for every pair, at the tables where both sat, how often
the row agent finished ahead of the column agent (ties count one half).

The final ranking of a game is ``yaniv.ranking.final_ranks``: the same definition of "finished
ahead" as the environment's game rewards.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

import numpy as np

from agents.tournament import report

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from agents.tournament.schedule import TournamentPlan

Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion (95% by default); (0, 1) with no trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


class GameRecord(NamedTuple):
    """One game's outcome, per seat (tuples indexed by seat). ``seats`` holds agent indices."""

    index: int
    deal: int
    lineup: int
    rotation: int
    seats: tuple[int, ...]
    ranks: tuple[int, ...]  # final placement, 0 best; ties share the better rank
    win_shares: tuple[float, ...]  # 1 / number of winners for each winner, else 0
    scores: tuple[int, ...]  # final cumulative scores
    rounds: int
    turns: int
    capped: int  # rounds ended by the rules' turn cap (no winner, no points)
    alive_rounds: tuple[int, ...]  # rounds each seat was dealt into
    points: tuple[int, ...]  # points taken over those rounds (before resets)
    calls: tuple[int, ...]
    assafed: tuple[int, ...]  # calls that were Assafed
    assafs: tuple[int, ...]  # times the seat Assafed a caller
    moves: tuple[int, ...]
    seconds: tuple[float, ...]  # time spent in act(), per seat


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


@dataclass
class AgentStats:
    """One agent's figures over the tournament (see the module docstring)."""

    name: str
    spec: str
    games: int = 0
    wins: float = 0.0
    rounds: int = 0  # rounds played (dealt in)
    points: int = 0
    calls: int = 0
    assafed: int = 0
    assafs: int = 0
    game_rounds: int = 0  # rounds of its games, summed over its games
    game_turns: int = 0
    moves: int = 0
    seconds: float = 0.0
    seat_games: list[int] = field(default_factory=list)
    seat_wins: list[float] = field(default_factory=list)
    mu: float = 0.0
    sigma: float = 0.0
    deal_margins: list[float] = field(default_factory=list)  # per deal: the mean margin of its games there

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def win_interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.games)

    @property
    def points_per_round(self) -> float | None:
        return _ratio(self.points, self.rounds)

    @property
    def margin(self) -> float | None:
        """Its tablemates' mean points per round minus its own (positive: it takes fewer), averaged
        over deals (see the module docstring)."""
        return float(np.mean(self.deal_margins)) if self.deal_margins else None

    @property
    def margin_interval(self) -> tuple[float, float] | None:
        """The 95% interval of ``margin``: deals are the independent units (normal approximation)."""
        n = len(self.deal_margins)
        if n < 2:
            return None
        half = Z95 * float(np.std(self.deal_margins, ddof=1)) / math.sqrt(n)
        return self.margin - half, self.margin + half

    @property
    def calls_per_round(self) -> float | None:
        return _ratio(self.calls, self.rounds)

    @property
    def assafed_per_call(self) -> float | None:
        """The Assaf rate as caller: the fraction of its Yaniv calls that were Assafed."""
        return _ratio(self.assafed, self.calls)

    @property
    def assafs_per_round(self) -> float | None:
        """The Assaf rate as Assafer: Assafs it made per round played."""
        return _ratio(self.assafs, self.rounds)

    @property
    def rounds_per_game(self) -> float | None:
        return _ratio(self.game_rounds, self.games)

    @property
    def turns_per_game(self) -> float | None:
        return _ratio(self.game_turns, self.games)

    @property
    def ms_per_move(self) -> float | None:
        return _ratio(1000 * self.seconds, self.moves)

    @property
    def rating_interval(self) -> tuple[float, float]:
        return self.mu - 2 * self.sigma, self.mu + 2 * self.sigma

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    def to_dict(self, include_timing: bool = True) -> dict[str, Any]:
        low, high = self.win_interval
        out = {
            "agent": self.name,
            "spec": self.spec,
            "games": self.games,
            "wins": self.wins,
            "win_rate": self.win_rate,
            "win_rate_low": low,
            "win_rate_high": high,
            "rating_mu": self.mu,
            "rating_sigma": self.sigma,
            "rating_low": self.rating_interval[0],
            "rating_high": self.rating_interval[1],
            "rating_ordinal": self.ordinal,
            "rounds": self.rounds,
            "points_per_round": self.points_per_round,
            "margin": self.margin,
            "margin_low": self.margin_interval[0] if self.margin_interval else None,
            "margin_high": self.margin_interval[1] if self.margin_interval else None,
            "margin_deals": len(self.deal_margins),
            "calls": self.calls,
            "calls_per_round": self.calls_per_round,
            "assafed": self.assafed,
            "assafed_per_call": self.assafed_per_call,
            "assafs": self.assafs,
            "assafs_per_round": self.assafs_per_round,
            "rounds_per_game": self.rounds_per_game,
            "turns_per_game": self.turns_per_game,
            "moves": self.moves,
            "seat_games": list(self.seat_games),
            "seat_win_rates": [w / g if g else None for w, g in zip(self.seat_wins, self.seat_games)],
        }
        if include_timing:
            out["ms_per_move"] = self.ms_per_move
        return out


@dataclass
class TournamentResult:
    """Statistics of a played tournament; the per-game records only when they were kept."""

    plan: TournamentPlan
    agents: list[AgentStats]
    head_to_head_ahead: np.ndarray  # [a, b]: games a finished ahead of b
    head_to_head_ties: np.ndarray
    head_to_head_games: np.ndarray  # [a, b]: games where both sat
    seat_wins: list[float]  # per seat, over all games
    games: int
    rounds: int  # rounds played, over all games
    capped_rounds: int  # rounds ended by the turn cap (no winner, no points)
    records: list[GameRecord] | None = None  # every game's record, in game order, if kept (``Tally``)
    wall_seconds: float = 0.0

    # -- building -------------------------------------------------------------------------------

    @classmethod
    def from_records(
        cls, plan: TournamentPlan, records: Iterable[GameRecord], wall_seconds: float = 0.0,
        keep_records: bool = True,
    ) -> TournamentResult:
        """The figures of ``records``, in game order (``Tally``); they are kept unless ``keep_records`` is False."""
        tally = Tally(plan, keep_records=keep_records)
        for record in records:
            tally.add(record)
        return tally.result(wall_seconds)

    # -- figures --------------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.agents]

    def agent(self, name: str) -> AgentStats:
        for s in self.agents:
            if s.name == name:
                return s
        raise KeyError(f"no agent {name!r} in this tournament; agents: {', '.join(self.names)}")

    def head_to_head(self) -> np.ndarray:
        """[a, b]: the fraction of shared tables where a finished ahead of b (ties one half); NaN if they never met."""
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = (self.head_to_head_ahead + 0.5 * self.head_to_head_ties) / self.head_to_head_games
        return np.where(self.head_to_head_games > 0, rate, np.nan)

    def ranking(self) -> list[AgentStats]:
        """The agents by rating (mu), best first."""
        return sorted(self.agents, key=lambda s: (-s.mu, s.name))

    def to_dict(self, include_timing: bool = True) -> dict[str, Any]:
        """The results as JSON-ready data (``results.json``). ``include_timing=False`` leaves out how the
        games were run: the engine (``TournamentPlan.engine``), the wall time and each agent's time per
        move, so that two runs of one plan compare equal."""
        plan = self.plan
        rates = self.head_to_head()
        out: dict[str, Any] = {
            "config": {
                "agents": list(plan.labels),
                "specs": list(plan.spec_texts),
                "players": plan.num_players,
                "games": plan.games,
                "mode": "rounds" if plan.rounds else "games",
                "seed": plan.seed,
                "rules": plan.rules_name,
                "max_turns": plan.rules.max_turns,
                "rules_settings": {k: list(v) if isinstance(v, tuple) else v for k, v in plan.rules.to_dict().items()},
                "deals": plan.deals,
                "lineups": [[plan.labels[a] for a in lineup] for lineup in plan.lineups],
            },
            "agents": [s.to_dict(include_timing) for s in self.agents],
            "head_to_head": {
                "agents": list(plan.labels),
                "ahead_rate": [[None if math.isnan(v) else float(v) for v in row] for row in rates],
                "ahead": self.head_to_head_ahead.tolist(),
                "ties": self.head_to_head_ties.tolist(),
                "games": self.head_to_head_games.tolist(),
            },
            "seat_win_rates": [w / self.games if self.games else None for w in self.seat_wins],
            "rounds": self.rounds,
            "capped_rounds": self.capped_rounds,
        }
        if include_timing:
            out["engine"] = plan.engine
            out["wall_seconds"] = self.wall_seconds
        return out

    # -- the report (agents.tournament.report) -------------------------------------------------

    def table(self) -> str:
        """The terminal report: one row per agent (best rating first), then head to head."""
        return report.table(self)

    def __str__(self) -> str:
        return self.table()

    def write(self, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> dict[str, Path]:
        """Write results.json, results.csv, head_to_head.csv, ratings.png and head_to_head.png, all or
        none (``agents.tournament.report.write``); FileExistsError if ``out_dir`` holds results and
        ``overwrite`` is off."""
        return report.write(self, out_dir, overwrite=overwrite)

    def plot_ratings(self) -> Figure:
        """A matplotlib Figure: each agent's rating mu with its mu ± 2 sigma interval."""
        return report.plot_ratings(self)

    def plot_head_to_head(self) -> Figure:
        """A matplotlib Figure: the head-to-head matrix (row ahead of column)."""
        return report.plot_head_to_head(self)


class Tally:
    """The running figures of a tournament: ``add`` each game's record in game order, then ``result``.

    Memory does not grow with the games beyond the margins' one number per agent and deal (see the
    module docstring; at most 16 bytes a game): a record is reduced as it comes and dropped, unless
    ``keep_records``. The margins of one deal are summed when the next deal begins, so the records
    of a deal must come together, as they do in game order; an earlier deal after a later one is a
    ValueError.
    """

    def __init__(self, plan: TournamentPlan, keep_records: bool = False) -> None:
        from openskill.models import PlackettLuce

        k, n = len(plan.labels), plan.num_players
        self.plan = plan
        self.stats = [
            AgentStats(name=label, spec=spec, seat_games=[0] * n, seat_wins=[0.0] * n)
            for label, spec in zip(plan.labels, plan.spec_texts)
        ]
        self.ahead = np.zeros((k, k), dtype=np.int64)
        self.ties = np.zeros((k, k), dtype=np.int64)
        self.met = np.zeros((k, k), dtype=np.int64)
        self.seat_wins = [0.0] * n
        self.games = self.rounds = self.capped_rounds = 0
        self.records: list[GameRecord] | None = [] if keep_records else None
        self._model = PlackettLuce()
        self._ratings = [self._model.rating(name=label) for label in plan.labels]
        self._deal: int | None = None  # the deal whose margins are being gathered
        self._deal_margins: list[list[float]] = [[] for _ in range(k)]  # per agent: its games' margins there

    def add(self, record: GameRecord) -> None:
        """Count one game (the next in game order)."""
        if self._deal is not None and record.deal < self._deal:
            raise ValueError(f"records must come in game order: deal {record.deal} after deal {self._deal}")
        if record.deal != self._deal:
            self._close_deal()
            self._deal = record.deal
        self.games += 1
        self.rounds += record.rounds
        self.capped_rounds += record.capped
        if self.records is not None:
            self.records.append(record)
        per_round = [p / r if r else None for p, r in zip(record.points, record.alive_rounds)]
        for seat, a in enumerate(record.seats):
            others = [x for q, x in enumerate(per_round) if q != seat and x is not None]
            if per_round[seat] is not None and others:
                self._deal_margins[a].append(sum(others) / len(others) - per_round[seat])
        for seat, a in enumerate(record.seats):
            s = self.stats[a]
            s.games += 1
            s.wins += record.win_shares[seat]
            s.rounds += record.alive_rounds[seat]
            s.points += record.points[seat]
            s.calls += record.calls[seat]
            s.assafed += record.assafed[seat]
            s.assafs += record.assafs[seat]
            s.game_rounds += record.rounds
            s.game_turns += record.turns
            s.moves += record.moves[seat]
            s.seconds += record.seconds[seat]
            s.seat_games[seat] += 1
            s.seat_wins[seat] += record.win_shares[seat]
            self.seat_wins[seat] += record.win_shares[seat]
            for other, b in enumerate(record.seats):
                if other != seat:
                    self.met[a, b] += 1
                    self.ahead[a, b] += record.ranks[seat] < record.ranks[other]
                    self.ties[a, b] += record.ranks[seat] == record.ranks[other]
        teams = [[self._ratings[a]] for a in record.seats]
        rated = self._model.rate(teams, ranks=list(record.ranks))
        for a, team in zip(record.seats, rated):
            self._ratings[a] = team[0]

    def _close_deal(self) -> None:
        """Each agent's mean margin over its games of the deal just finished."""
        for s, margins in zip(self.stats, self._deal_margins):
            if margins:
                s.deal_margins.append(sum(margins) / len(margins))
                margins.clear()

    def result(self, wall_seconds: float = 0.0) -> TournamentResult:
        """The figures of the games added so far."""
        self._close_deal()
        self._deal = None
        for s, rating in zip(self.stats, self._ratings):
            s.mu, s.sigma = float(rating.mu), float(rating.sigma)
        return TournamentResult(
            self.plan, self.stats, self.ahead, self.ties, self.met, self.seat_wins, self.games, self.rounds,
            self.capped_rounds, self.records, wall_seconds,
        )
