"""Tournaments: evaluate.py end to end, the API, the seat rotation and duplicate deals, determinism
across worker counts, the statistics, and every bad input refused before any game."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from agents.base import SeededAgent
from agents.tournament import GameRecord, TournamentResult, plan_tournament, run_tournament, wilson_interval
from yaniv import YANIV, get_rules

ROOT = Path(__file__).resolve().parents[1]
FILES = ["results.json", "results.csv", "head_to_head.csv", "ratings.png", "head_to_head.png"]
PNG = b"\x89PNG\r\n\x1a\n"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "evaluate.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def load_evaluate():
    spec = importlib.util.spec_from_file_location("evaluate", ROOT / "evaluate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Spy(SeededAgent):
    """Calls Yaniv when it may, else plays at random; counts moves and records each dealt hand (class-wide)."""

    name = "spy"
    moves = 0
    dealt: list[tuple[str, tuple[int, ...]]] = []

    def __init__(self, name: str = "spy", seed: int | None = None) -> None:
        super().__init__(seed)
        self.name = name
        self.fresh = True

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.fresh = True

    def act(self, view):
        Spy.moves += 1
        if self.fresh:  # its first turn: its hand is still the one it was dealt
            Spy.dealt.append((self.name, tuple(sorted(view.hand))))
            self.fresh = False
        moves = view.legal_moves
        return moves[0] if moves[0] == YANIV else moves[int(self.rng.integers(len(moves)))]


# ----------------------------------------------------------------------------------------------
# The CLI
# ----------------------------------------------------------------------------------------------


def test_cli_plays_prints_the_table_and_writes_every_file(tmp_path):
    out = tmp_path / "eval"
    proc = run_cli("--players", "2", "--agents", "greedy", "random", "--games", "8", "--seed", "3",
                   "--rounds", "--workers", "2", "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "win rate [95% CI]" in proc.stdout and "Head to head" in proc.stdout
    assert "greedy" in proc.stdout and "random" in proc.stdout
    for name in FILES:
        assert (out / name).is_file(), name
    for name in ("ratings.png", "head_to_head.png"):
        assert (out / name).read_bytes().startswith(PNG)
    data = json.loads((out / "results.json").read_text())
    assert data["config"]["games"] == 8 and data["config"]["mode"] == "rounds" and data["config"]["seed"] == 3
    assert [a["agent"] for a in data["agents"]] == ["greedy", "random"]
    assert sum(a["games"] for a in data["agents"]) == 8 * 2
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["agent"] for r in rows] == ["greedy", "random"]
    assert all(float(r["win_rate_low"]) <= float(r["win_rate"]) <= float(r["win_rate_high"]) for r in rows)


BAD_CLI = [
    (["--agents", "greedy", "nosuchbot"], "nosuchbot"),
    (["--agents", "ppo:/no/such/model.zip", "random"], "/no/such/model.zip"),
    (["--agents", "ppo:{corrupt}", "random"], "ppo:"),
    (["--players", "1", "--agents", "random"], "players"),
    (["--players", "9", "--agents", *["random"] * 9], "players"),
    (["--players", "4", "--agents", "greedy", "random"], "4 seats need at least 4 agents"),
    (["--agents", "greedy", "random", "--games", "0"], "games"),
    (["--agents", "greedy", "random", "--games", "7"], "not a multiple of 2"),
    (["--agents", "greedy", "random", "--games", "seven"], "--games"),
    (["--agents", "greedy", "random", "--rules", "klingon"], "klingon"),
    (["--agents", "greedy", "random", "--workers", "0"], "--workers"),
    (["--agents", "greedy", "random", "--seed", "-1"], "seed"),
    (["--agents", "greedy", "random", "--max-turns", "0"], "max_turns"),
    (["--agents", "greedy", "random", "--out", "{corrupt}"], "not a folder"),
    (["--agents", "greedy", "random", "--out", ""], "--out"),
    (["--agents", "greedy", "random", "--games", "100000000000000000000"], "at most 10,000,000"),
    (["--agents", "greedy", "random", "--workers", "1000000"], "--workers"),
    (["--agents", ""], "an agent name is empty"),
]


@pytest.mark.parametrize("args,needle", BAD_CLI, ids=[a[1] for a in BAD_CLI])
def test_cli_refuses_bad_input_before_any_game(tmp_path, monkeypatch, capsys, args, needle):
    monkeypatch.chdir(tmp_path)  # a bad --out must not write into the repository
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"this is not a checkpoint")
    args = [a.format(corrupt=corrupt) for a in args]
    out = tmp_path / "out"
    if "--games" not in args:
        args += ["--games", "2"]
    with pytest.raises(SystemExit) as exit_info:
        sys.exit(load_evaluate().main(["--out", str(out), "--no-progress", *args]))
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evaluate.py: error:"), captured.err
    assert needle in lines[0]
    assert captured.out == ""  # not even the plan: nothing ran
    assert not out.exists()


def test_cli_error_through_a_subprocess_is_one_line_and_status_2(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("--agents", "greedy", "nosuchbot", "--games", "2", "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "nosuchbot" in proc.stderr
    assert proc.stdout == "" and not out.exists()


# ----------------------------------------------------------------------------------------------
# The API: schedule, determinism, statistics
# ----------------------------------------------------------------------------------------------


def test_every_agent_sits_in_every_seat_equally_and_replays_the_same_deals():
    Spy.dealt = []
    agents = [Spy("a"), Spy("b"), Spy("c")]
    result = run_tournament(agents, num_players=2, games=3 * 2 * 2, seed=5, rounds=True, workers=1, progress=False,
                            keep_records=True)
    plan = result.plan
    assert plan.lineups == ((0, 1), (0, 2), (1, 2)) and plan.deals == 2
    for stats in result.agents:
        assert stats.games == 8 and stats.seat_games == [4, 4]
    # Per deal and line-up, the rotations put each member in each seat once.
    seats = defaultdict(Counter)
    for record in result.records:
        for seat, agent in enumerate(record.seats):
            seats[record.deal, record.lineup][agent, seat] += 1
    assert all(set(c.values()) == {1} and len(c) == 4 for c in seats.values())
    # Duplicate deals: within a deal, every agent was dealt the same hands (one per seat).
    dealt = defaultdict(lambda: defaultdict(set))
    for i, record in enumerate(result.records):  # two dealt hands per game, in game order
        for name, hand in Spy.dealt[2 * i : 2 * i + 2]:
            dealt[record.deal][name].add(hand)
    for deal, by_agent in dealt.items():
        hands = list(by_agent.values())
        assert all(h == hands[0] for h in hands) and len(hands[0]) == 2, deal
    assert dealt[0]["a"] != dealt[1]["a"]  # another deal, other hands


def test_more_agents_than_seats_use_every_combination():
    plan = plan_tournament(["random"] * 4, num_players=3, games=12, seed=0)
    assert len(plan.lineups) == 4 and plan.cycle == 12
    counts = Counter(a for i in range(plan.games) for a in plan.game(i)[3])
    assert set(counts.values()) == {9}
    assert plan.labels == ("random", "random#2", "random#3", "random#4")


def test_same_seed_same_results_for_one_or_two_workers_and_another_seed_differs():
    kwargs = dict(agent_specs=["greedy", "random", "random"], num_players=2, games=12, rounds=True, progress=False)
    one = run_tournament(seed=11, workers=1, **kwargs).to_dict(include_timing=False)
    two = run_tournament(seed=11, workers=2, **kwargs).to_dict(include_timing=False)
    again = run_tournament(seed=11, workers=1, **kwargs).to_dict(include_timing=False)
    other = run_tournament(seed=12, workers=2, **kwargs).to_dict(include_timing=False)
    assert one == two == again
    assert one["agents"] != other["agents"]


def test_full_games_statistics_add_up():
    result = run_tournament(["greedy", "random"], num_players=2, games=4, seed=2, workers=1, progress=False,
                            keep_records=True)
    total = sum(s.win_rate for s in result.agents)
    assert total == pytest.approx(1.0)  # one line-up: every agent played every game
    for s in result.agents:
        assert s.games == 4 and s.rounds_per_game >= 1 and s.turns_per_game > 0 and s.moves > 0
        assert s.rounds == sum(r.alive_rounds[r.seats.index(result.plan.labels.index(s.name))] for r in result.records)
        low, high = s.win_interval
        assert (low, high) == wilson_interval(s.wins, s.games)
        assert low <= s.win_rate <= high
    # Every round with a caller: one call; every call Assafed at most once.
    rounds = sum(r.rounds for r in result.records)
    assert sum(s.calls for s in result.agents) == rounds
    assert sum(s.assafed for s in result.agents) <= rounds
    assert sum(result.seat_wins) == pytest.approx(4)


def test_wins_and_head_to_head_add_up_with_more_agents_than_seats():
    result = run_tournament(["greedy", "random", "random"], num_players=2, games=12, seed=4, rounds=True,
                            workers=1, progress=False)
    assert sum(s.wins for s in result.agents) == pytest.approx(result.games)  # ties split the win
    met, ahead, ties = result.head_to_head_games, result.head_to_head_ahead, result.head_to_head_ties
    assert (met == met.T).all() and (ties == ties.T).all() and (met.diagonal() == 0).all()
    off = ~np.eye(3, dtype=bool)
    assert ((ahead + ahead.T + ties)[off] == met[off]).all()
    assert (met[off] == 4).all()  # every pair shared a table 4 times: 2 deals x 2 rotations
    rates = result.head_to_head()
    assert math.isnan(rates[0, 0]) and rates[0, 1] + rates[1, 0] == pytest.approx(1.0)
    text = result.table()
    assert "greedy" in text and "random#2" in text and "rating ±2σ" in text


def test_the_margin_is_paired_by_deal_and_worked_out_by_hand():
    """Two deals, two rotations each (agent 0 = "a", 1 = "b"):
    deal 0: a 10 points in 2 rounds vs b 30 in 2 -> a's margin 15 - 5 = +10; then b 20 in 1 vs a 0
            in 1 -> a +20. Deal 0: a +15, b -15.
    deal 1: a 12 in 4 vs b 4 in 4 -> a 1 - 3 = -2; then 0 vs 0 -> 0. Deal 1: a -1, b +1.
    a: mean (15 - 1) / 2 = 7; sd of (15, -1) = 8 * sqrt(2); 95% half-width 1.96 * 8 = 15.68."""
    plan = plan_tournament(["random", "greedy"], num_players=2, games=4, seed=0)

    def record(i: int, deal: int, rotation: int, seats, points, alive) -> GameRecord:
        two = (0, 0)
        return GameRecord(i, deal, 0, rotation, seats, two, two, two, max(alive), 0, 0, alive, points, two, two, two,
                          two, (0.0, 0.0))

    records = [record(0, 0, 0, (0, 1), (10, 30), (2, 2)), record(1, 0, 1, (1, 0), (20, 0), (1, 1)),
               record(2, 1, 0, (0, 1), (12, 4), (4, 4)), record(3, 1, 1, (1, 0), (0, 0), (1, 1))]
    result = TournamentResult.from_records(plan, records)
    a, b = result.agent("random"), result.agent("greedy")
    assert a.deal_margins == [15.0, -1.0] and b.deal_margins == [-15.0, 1.0]
    assert a.margin == pytest.approx(7.0) and b.margin == pytest.approx(-7.0)
    low, high = a.margin_interval
    assert low == pytest.approx(7 - 15.68, abs=0.01) and high == pytest.approx(7 + 15.68, abs=0.01)
    row = a.to_dict()
    assert (row["margin"], row["margin_deals"]) == (pytest.approx(7.0), 2)
    assert "margin [95% CI]" in result.table() and "+7.00 [-8.68, +22.68]" in result.table()


def test_wilson_interval_against_a_hand_computed_value():
    # p = 0.7, n = 10, z = 1.96: centre (0.7 + 0.19207) / 1.38415 = 0.64449,
    # half-width 1.96 * sqrt(0.021 + 0.0096037) / 1.38415 = 0.24772.
    low, high = wilson_interval(7, 10)
    assert low == pytest.approx(0.39677, abs=1e-4) and high == pytest.approx(0.89221, abs=1e-4)
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(20, 20)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_ratings_rank_a_stronger_agent_higher():
    result = run_tournament(["greedy", "random"], num_players=2, games=40, seed=0, rounds=True, workers=1,
                            progress=False)
    greedy, random_ = result.agent("greedy"), result.agent("random")
    assert greedy.win_rate > random_.win_rate and greedy.mu > random_.mu
    assert result.ranking()[0].name == "greedy"
    assert greedy.sigma < 25 / 3  # the ratings moved from the prior


BAD_API = [
    (dict(agent_specs=["greedy", "nosuchbot"]), "nosuchbot"),
    (dict(agent_specs=["ppo:/no/such/model.zip", "random"]), "/no/such/model.zip"),
    (dict(agent_specs=["random"]), "2 seats need at least 2 agents"),
    (dict(agent_specs="random"), "agents must be a list"),
    (dict(agent_specs=["random", 3]), "an agent must be a name"),
    (dict(num_players=1), "number of players"),
    (dict(num_players=9), "number of players"),
    (dict(games=0), "number of games"),
    (dict(games=2.0), "number of games"),
    (dict(games=3), "not a multiple of 2"),
    (dict(seed=-3), "seed"),
    (dict(rules="klingon"), "klingon"),
    (dict(rules="default:jokerz=0"), "'jokerz=0' is not key=value"),
    (dict(rules="default:game_end=sudden_death"), "game_end"),
    (dict(rules={"hand_size": 9}), "hand_size"),
    (dict(num_players=8, rules={"hand_size": 7}, agent_specs=["random"] * 8, games=8), "cards"),
    (dict(rounds="yes"), "rounds"),
    (dict(workers=0), "workers"),
    (dict(max_turns=0), "max_turns"),
]


@pytest.mark.parametrize("kwargs,needle", BAD_API, ids=[b[1] for b in BAD_API])
def test_api_refuses_bad_input_before_any_game(kwargs, needle):
    Spy.moves = 0
    arguments = dict(agent_specs=[Spy(), "random"], num_players=2, games=2, seed=0, workers=1, progress=False)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=needle):
        run_tournament(**arguments)
    assert Spy.moves == 0


def test_rules_may_be_a_preset_with_changes():
    """``--rules 'default:jokers=0,game_end=one_round'``: the house set of the learning issue, a game
    of one round, plays as the same Rules object does."""
    spec = "default:jokers=0,game_end=one_round"
    by_text = run_tournament(["greedy", "random"], 2, 8, seed=1, rules=spec, workers=1, progress=False)
    by_object = run_tournament(["greedy", "random"], 2, 8, seed=1, rules=get_rules("default").replace(
        jokers=0, game_end="one_round"), workers=1, progress=False)
    assert by_text.plan.rules == by_object.plan.rules and by_text.plan.rules.one_round
    assert by_text.to_dict(include_timing=False) == by_object.to_dict(include_timing=False)
    assert all(a.rounds == a.games for a in by_text.agents), "a game of one round is one round"


class Cheat(Spy):
    def act(self, view):
        return YANIV  # even when the hand is too high


def test_an_illegal_move_is_an_error_naming_the_agent():
    with pytest.raises(ValueError, match="'cheat' in seat .* chose an illegal move"):
        run_tournament([Cheat("cheat"), "random"], num_players=2, games=2, seed=0, rounds=True, workers=1,
                       progress=False)


class Staller(Spy):
    def act(self, view):
        return view.legal_moves[-1]  # never calls Yaniv


def test_max_turns_caps_rounds_of_agents_that_never_end_them():
    result = run_tournament([Staller("staller"), Staller("staller")], num_players=2, games=4, seed=0, rounds=True,
                            max_turns=30, workers=1, progress=False)
    assert result.capped_rounds == 4 and result.plan.rules.max_turns == 30
    assert all(s.wins == 0 and s.points == 0 for s in result.agents)
    assert (result.head_to_head_ties[0, 1], result.head_to_head_games[0, 1]) == (4, 4)
    assert "cut by the turn cap" in result.table() and "capped at 30 turns" in result.table()


def tiny_policy(path: Path, observations: int, actions: int, seed: int = 0) -> Path:
    """A random two-layer policy saved as ppo weights (.npz)."""
    from agents.policies.ppo import NumpyPolicy

    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=(8, observations)), rng.normal(size=(actions, 8))]
    NumpyPolicy(weights, [np.zeros(8), np.zeros(actions)], "tanh").save(path)
    return path


def test_a_ppo_checkpoint_plays_and_a_misfit_one_is_refused_before_any_game(tmp_path):
    from yaniv_env.encoding import Observer

    observer = Observer(get_rules("default"), 2)
    good = tiny_policy(tmp_path / "good.npz", observer.size, observer.table.size)
    result = run_tournament([f"ppo:{good}", "random"], num_players=2, games=2, seed=0, rounds=True, max_turns=200,
                            workers=1, progress=False)
    assert result.agent(f"ppo:{good}").games == 2
    bad = tiny_policy(tmp_path / "bad.npz", 10, observer.table.size)
    out = tmp_path / "out"
    proc = run_cli("--agents", f"ppo:{bad}", "random", "--games", "2", "--out", str(out))
    assert proc.returncode == 2 and "cannot play 2 players" in proc.stderr and str(bad) in proc.stderr
    assert proc.stdout == "" and not out.exists()



# ----------------------------------------------------------------------------------------------
# Hostile and careless input (issue 18): the output folder, the game count, memory, pickles
# ----------------------------------------------------------------------------------------------


def run_main(*args: str) -> tuple[int, str, str]:
    """evaluate.main in this process: (status, stdout, stderr)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = load_evaluate().main(list(args))
        except SystemExit as exit_info:
            code = exit_info.code
    return code, out.getvalue(), err.getvalue()


QUICK = ["--agents", "greedy", "random", "--games", "2", "--rounds", "--workers", "1", "--no-progress"]


def unwritable_outs(tmp_path: Path) -> list[tuple[str, str]]:
    """Output folders that cannot be written, each with what the error must name."""
    import os

    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    outs = [(str(a_file / "sub"), str(a_file / "sub")), (str(tmp_path / ("n" * 300)), "n" * 300)]
    if Path("/proc/self").is_dir():
        outs.append(("/proc/x", "/proc/x"))
    if os.geteuid() != 0:  # root writes into a read-only folder anyway
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        outs.append((str(locked / "eval"), str(locked)))
        outs.append((str(locked), str(locked)))
    return outs


def test_an_unwritable_out_is_refused_before_any_game(tmp_path):
    outs = unwritable_outs(tmp_path)
    assert len(outs) >= 2
    for out, needle in outs:
        code, stdout, stderr = run_main(*QUICK, "--out", out)
        assert code == 2, (out, stderr)
        assert stdout == "", out  # not even the plan's line: no game was played
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("evaluate.py: error: --out") and needle in lines[0], stderr
    assert sorted(p.name for p in tmp_path.iterdir()) in (["a_file"], ["a_file", "locked"])  # nothing made


def test_an_empty_out_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run_main(*QUICK, "--out", "")
    assert code == 2 and stdout == "" and "--out" in stderr and "empty" in stderr
    assert list(tmp_path.iterdir()) == []


def test_existing_results_are_kept_unless_overwrite_is_given(tmp_path):
    out = tmp_path / "eval"
    out.mkdir()
    (out / "results.json").write_text("earlier results")
    (out / "notes.txt").write_text("my notes")
    code, stdout, stderr = run_main(*QUICK, "--out", str(out))
    assert code == 2 and stdout == ""
    assert str(out) in stderr and "--overwrite" in stderr and "results.json" in stderr, stderr
    assert (out / "results.json").read_text() == "earlier results"
    # With the flag the results are replaced; other files stay, and no probe or temporary file is left.
    code, stdout, stderr = run_main(*QUICK, "--out", str(out), "--overwrite")
    assert code == 0, stderr
    assert json.loads((out / "results.json").read_text())["config"]["games"] == 2
    assert (out / "notes.txt").read_text() == "my notes"
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES + ["notes.txt"])
    # A folder that exists but holds no results (empty, or other files only) is written without the flag.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_main(*QUICK, "--out", str(empty))[0] == 0
    assert sorted(p.name for p in empty.iterdir()) == sorted(FILES)


def test_write_refuses_to_overwrite_and_a_failure_mid_write_loses_nothing(tmp_path, monkeypatch):
    from agents.tournament import report

    result = run_tournament(["greedy", "random"], num_players=2, games=2, seed=0, rounds=True, workers=1,
                            progress=False)
    out = tmp_path / "eval"
    result.write(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(FileExistsError, match="overwrite"):
        result.write(out)

    def broken(_result):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(report, "plot_head_to_head", broken)  # the last file: the others are rendered by then
    with pytest.raises(RuntimeError, match="the disk is full"):
        result.write(out, overwrite=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no file changed, no temporary left


HUGE_GAMES = "100000000000000000000"


def test_an_absurd_game_count_is_refused_by_name(tmp_path):
    code, stdout, stderr = run_main("--agents", "greedy", "random", "--games", HUGE_GAMES, "--out",
                                    str(tmp_path / "out"), "--no-progress")
    assert code == 2 and stdout == "" and "10,000,000" in stderr and HUGE_GAMES in stderr, stderr
    with pytest.raises(ValueError, match="at most 10,000,000"):
        plan_tournament(["greedy", "random"], num_players=2, games=10**20)
    with pytest.raises(ValueError, match="workers"):
        run_tournament(["greedy", "random"], num_players=2, games=2, workers=10**6, progress=False)


class Quick(SeededAgent):
    """Calls Yaniv when it may, else throws its first legal discard: short, cheap rounds."""

    name = "quick"

    def act(self, view):
        moves = view.legal_moves
        return moves[0] if moves[0] == YANIV else moves[-1]


def peak_memory(games: int, keep_records: bool = False) -> int:
    """Bytes allocated at the peak of playing and reducing ``games`` rounds, over what was there before.

    OpenSkill's rating update leaves a few small reference cycles per game, which Python frees at
    its next full collection (after a number of objects proportional to the whole heap); a full
    collection every 8 games takes them out of the measure, leaving what the tournament holds."""
    import gc
    import tracemalloc

    from agents.tournament import statistics

    plan = plan_tournament([Quick(), Quick()], num_players=2, games=games, seed=0, rounds=True, max_turns=8)
    add = statistics.Tally.add

    def add_and_collect(tally, record):
        add(tally, record)
        if record.index % 8 == 7:
            gc.collect()

    statistics.Tally.add = add_and_collect
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        plan.run(workers=1, progress=False, keep_records=keep_records)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
        statistics.Tally.add = add


def test_memory_does_not_grow_with_the_games_beyond_the_aggregates():
    """Records are reduced as they come, not held: 8x the games cost no more than the per-deal margins
    (two agents x one float per deal of 2 games) and some noise; holding every record costs far more."""
    plan_tournament([Quick(), Quick()], num_players=2, games=160, seed=0, rounds=True, max_turns=8).run(
        workers=1, progress=False)  # imports, and the engine's memos of the hands these deals hold
    small, large = peak_memory(20), peak_memory(160)
    margins = 2 * (160 - 20) // 2 * 32  # a float in a list per agent and deal
    assert large - small < margins + 8_000, (small, large)
    assert peak_memory(160, keep_records=True) - large > 80_000  # what the measure sees of held records


def test_records_are_kept_only_when_asked():
    kwargs = dict(agent_specs=[Quick(), Quick()], num_players=2, games=4, seed=0, rounds=True, max_turns=8,
                  workers=1, progress=False)
    assert run_tournament(**kwargs).records is None
    kept = run_tournament(keep_records=True, **kwargs)
    assert [r.index for r in kept.records] == [0, 1, 2, 3]
    assert kept.games == 4 and kept.rounds == 4


def test_small_chunks_in_any_order_give_the_same_results(monkeypatch):
    """Many bounded chunks over the worker processes, reduced in game order: the same figures as one process."""
    from agents.tournament import schedule

    monkeypatch.setattr(schedule, "MAX_CHUNK", 3)
    kwargs = dict(agent_specs=["greedy", "random", "random"], num_players=2, games=24, seed=7, rounds=True,
                  progress=False)
    one = run_tournament(workers=1, **kwargs).to_dict(include_timing=False)
    two = run_tournament(workers=2, keep_records=True, **kwargs)
    assert [r.index for r in two.records] == list(range(24))
    assert two.to_dict(include_timing=False) == one


def test_a_worker_process_runs_its_libraries_on_one_thread():
    """The processes are the parallelism: a pool of BLAS threads in each worker made a numpy
    policy's forward pass twenty times slower on two cores."""
    from concurrent.futures import ProcessPoolExecutor

    from threadpoolctl import threadpool_info

    from agents.tournament import plan_tournament, schedule

    plan = plan_tournament(["greedy", "random"], num_players=2, games=2, seed=0)
    with ProcessPoolExecutor(1, initializer=schedule._init_worker, initargs=(plan,)) as pool:
        pools = pool.submit(threadpool_info).result()
    assert any(p["internal_api"] == "openblas" or p["user_api"] == "blas" for p in pools), pools
    assert all(p["num_threads"] == 1 for p in pools), pools


@pytest.fixture(scope="module")
def sb3_checkpoint(tmp_path_factory) -> Path:
    """A tiny MaskablePPO checkpoint for two players (a pickle underneath)."""
    from sb3_contrib import MaskablePPO

    from yaniv_env.gym_env import YanivGymEnv

    model = MaskablePPO("MlpPolicy", YanivGymEnv(num_players=2), policy_kwargs={"net_arch": [8]}, seed=0,
                        device="cpu")
    path = tmp_path_factory.mktemp("ckpt") / "model.zip"
    model.save(path)
    return path


def test_a_pickle_checkpoint_needs_the_trust_switch(sb3_checkpoint, tmp_path):
    spec = f"ppo:{sb3_checkpoint}"
    kwargs = dict(num_players=2, games=2, seed=0, rounds=True, max_turns=50)
    with pytest.raises(ValueError, match="trust") as refused:
        plan_tournament([spec, "random"], **kwargs)
    assert ".npz" in str(refused.value) and "export" in str(refused.value)
    plan = plan_tournament([spec, "random"], trust_pickle=True, **kwargs)
    assert plan.run(workers=2, progress=False).agent(spec).games == 2  # the worker processes load it too
    # The command line: refused without --trust-pickle, naming it and the safe formats; played with it.
    out = tmp_path / "out"
    args = ["--agents", spec, "random", "--games", "2", "--rounds", "--max-turns", "50", "--workers", "1",
            "--no-progress", "--out", str(out)]
    code, stdout, stderr = run_main(*args)
    assert code == 2 and stdout == "" and not out.exists()
    assert "--trust-pickle" in stderr and ".npz" in stderr and str(sb3_checkpoint) in stderr, stderr
    code, stdout, stderr = run_main(*args, "--trust-pickle")
    assert code == 0, stderr
    assert json.loads((out / "results.json").read_text())["config"]["specs"][0] == spec
