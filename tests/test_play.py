"""The terminal game: a whole game driven through a real subprocess, the move notation both ways,
bad input refused with its reason and no change, bad bot specs refused before the deal, EOF."""

from __future__ import annotations

import io
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from yaniv import DECK, Event, Game, get_rules
from yaniv.cards import NUM_CARDS, RANK, parse_card
from yaniv.game import DISCARD
from agents.play import PROMPT, SetupError, bot_specs, card_text, main, move_text, parse_move, play

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------------------------
# End to end, as another program would drive it
# ----------------------------------------------------------------------------------------------


class Driver:
    """A subprocess read line by line on a thread, so every read can time out instead of hanging."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agents.play", *args], cwd=ROOT, env=env, text=True, encoding="utf-8",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.transcript: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def read_until_prompt(self, timeout: float = 20.0) -> list[str] | None:
        """The lines up to the next prompt; None when the output ended instead."""
        block = []
        while True:
            line = self.lines.get(timeout=timeout)  # queue.Empty fails the test on a hang
            if line is None:
                return None
            self.transcript.append(line)
            if line.startswith(PROMPT.strip()):
                return block
            block.append(line)

    def send(self, text: str) -> None:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()


def listed_moves(block: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(block) if line.startswith("legal moves"))
    return [m.strip() for line in block[start + 1:] for m in line.split("|")]


def test_a_whole_game_through_a_subprocess() -> None:
    driver = Driver("--players", "3", "--bots", "greedy,random", "--seed", "4")
    try:
        deadline = time.monotonic() + 60
        answered = 0
        while driver.read_until_prompt() is not None:
            assert time.monotonic() < deadline, "the game did not finish in time"
            driver.send("moves")
            moves = listed_moves(driver.read_until_prompt())
            assert moves and all(moves)
            driver.send("yaniv" if "yaniv" in moves else moves[0])
            answered += 1
        assert driver.proc.wait(timeout=20) == 0
    finally:
        if driver.proc.poll() is None:
            driver.proc.kill()
    text = "\n".join(driver.transcript)
    assert answered > 5
    assert "refused" not in text
    assert "called Yaniv" in text and "=== Round 2" in text
    assert driver.transcript[-1].startswith("Game over after") and "Winner: P" in driver.transcript[-1]


# ----------------------------------------------------------------------------------------------
# The notation
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ["default", "german", get_rules("default").replace(slamdown=True)])
def test_every_legal_move_reads_back_from_its_text(rules) -> None:
    rng = np.random.default_rng(0)
    for seed in range(4):
        game = Game(3, rules, seed=seed)
        for _ in range(150):
            if game.is_over:
                break
            moves = game.legal_moves()
            for move in moves:
                assert parse_move(move_text(move), game) == move
            game.apply(moves[int(rng.integers(len(moves)))])


def first_game_with_a_pair(players: int = 2) -> tuple[int, Game, tuple[int, ...]]:
    """A seed whose first hand (seat 0 starts) holds a two-card set."""
    for seed in range(200):
        game = Game(players, "default", seed=seed)
        pairs = [d for d in game.legal_discards() if len(d) == 2]
        if pairs:
            return seed, game, pairs[0]
    raise AssertionError("no deal with a pair")


def test_cards_in_any_order_any_case_and_spelling() -> None:
    _, game, pair = first_game_with_a_pair()
    forward = parse_move(" ".join(card_text(c) for c in pair) + " deck", game)
    backward = parse_move(" ".join(card_text(c).lower() for c in reversed(pair)) + " D", game)
    assert forward == backward and set(forward.cards) == set(pair) and forward.draw == DECK
    top = game.top.drawable[0]
    assert parse_move(f"{card_text(pair[0])}, {card_text(top)}", game).draw == top
    assert [card_text(parse_card(t)) for t in ("10h", "TH", "10♥", "jk", "JK2")] == ["10H"] * 3 + ["JK1", "JK2"]


def test_bad_input_is_refused_with_its_reason_and_changes_nothing() -> None:
    seed, game, pair = first_game_with_a_pair()
    hand = game.hands[0]
    missing = next(c for c in range(NUM_CARDS) if c not in hand and c not in game.top.cards)
    mixed = next((a, b) for a in hand for b in hand if RANK[a] != RANK[b] and a < 52 and b < 52)
    bad = [
        (f"{card_text(missing)} deck", "does not hold"),
        (f"{card_text(mixed[0])} {card_text(mixed[1])} deck", "two cards must be of one rank"),
        (f"{card_text(hand[0])} {card_text(missing)}", "cannot draw"),
        (f"{card_text(hand[0])} {card_text(hand[1])}", "where to draw"),
        ("hello world", "unknown card 'hello'"),
        ("xyzzy", "not a move"),
        ("slam", "no slamdown is pending"),
    ]
    if not game.can_call_yaniv():
        bad.append(("yaniv", "cannot call Yaniv"))
    good = " ".join(card_text(c) for c in reversed(pair)) + " deck"
    stdin = io.StringIO("\n".join([text for text, _ in bad] + ["moves", "help", "", good]) + "\n")
    stdout = io.StringIO()
    played = play(2, "greedy", "default", seed, stdin, stdout)
    out = stdout.getvalue()
    refusals = [line for line in out.splitlines() if "refused:" in line]
    assert len(refusals) == len(bad)
    for line, (_, reason) in zip(refusals, bad):
        assert reason in line, (line, reason)
    # Only the good move was played: seat 0 threw the pair, then the bot moved, then input ended.
    assert played.events[0] == Event(DISCARD, 0, pair, DECK)
    assert played.turn == 2 and [e.player for e in played.events] == [0, 1]
    assert "You threw" in out and "(you drew" in out and "End of input" in out
    assert out.count(PROMPT) == len(bad) + 5  # every refusal and command prompts again


def test_a_slamdown_is_offered_and_taken() -> None:
    rules = get_rules("default").replace(slamdown=True)
    for seed in range(300):  # a deal whose first deck draw fits the card thrown
        game = Game(2, rules, seed=seed)
        slams = [m for m in game.legal_moves() if m.kind == DISCARD and m.draw == DECK and _slams(game, m)]
        if slams:
            break
    stdin = io.StringIO(f"{move_text(slams[0])}\n{move_text(slams[0])}\nslam\n")
    stdout = io.StringIO()
    played = play(2, "greedy", rules, seed, stdin, stdout)
    out = stdout.getvalue()
    assert "which fits your discard" in out and "refused: decide on the card you drew" in out
    assert "You slammed down" in out and [e.kind for e in played.events][:2] == [DISCARD, "slamdown"]


def _slams(game: Game, move) -> bool:
    trial = game.copy()
    trial.apply(move)
    return trial.phase == "slamdown"


# ----------------------------------------------------------------------------------------------
# Bots and setup
# ----------------------------------------------------------------------------------------------


def test_bot_specs_fill_seats_and_read_paths_as_policies(tmp_path: Path) -> None:
    assert bot_specs("search:5,greedy", 5) == ["search:5", "greedy", "greedy", "greedy"]
    policy = tmp_path / "policy.npz"
    policy.write_bytes(b"")
    assert bot_specs([str(policy)], 2) == [f"ppo:{policy}"]
    assert bot_specs(f"random,{tmp_path}", 3) == ["random", f"ppo:{policy}"]


@pytest.mark.parametrize(
    ("bots", "players", "message"),
    [("random,nonsense", 3, "nonsense"), ("search:x", 2, "search:x"), ("ppo:/no/such.npz", 2, "/no/such.npz"),
     ("random,random,random", 3, "3 bots given"),
     ("runs/none/policy.npz", 2, "no policy file")],
)
def test_bad_bot_specs_fail_before_the_deal(bots: str, players: int, message: str) -> None:
    stdout = io.StringIO()
    with pytest.raises(SetupError, match=message):
        play(players, bots, "default", 0, io.StringIO("yaniv\n"), stdout)
    assert stdout.getvalue() == ""


def test_main_reports_setup_errors_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [(["--bots", "nonsense"], "nonsense"), (["--rules", "klingon"], "klingon"),
                          (["--players", "9"], "--players"), (["--seat", "3"], "--seat")]:
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and message in captured.err and captured.err.count("\n") == 1


def test_eof_and_quit_end_cleanly(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["--players", "3", "--bots", "random", "--seed", "1", "--seat", "2"]) == 0
    out = capsys.readouterr().out
    assert "End of input" in out and "Winner" not in out and out.count(PROMPT) == 1
    game = play(2, "random", "default", 1, io.StringIO("quit\n"), io.StringIO())
    assert not game.is_over and game.turn == 0


# ----------------------------------------------------------------------------------------------
# Hostile and careless input (issue 18)
# ----------------------------------------------------------------------------------------------


def run_play(*args: str, stdin: bytes) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "agents.play", *args], cwd=ROOT, env=env, input=stdin,
                          capture_output=True, timeout=60)


def test_bytes_that_are_not_utf8_get_a_message_and_the_game_goes_on() -> None:
    seed, game, pair = first_game_with_a_pair()
    good = " ".join(card_text(c) for c in pair) + " deck"
    proc = run_play("--bots", "greedy", "--seed", str(seed), stdin=b"\xff\xfe 5H\n" + good.encode() + b"\n\xc3\n")
    out = proc.stdout.decode("utf-8")
    assert proc.returncode == 0, proc.stderr.decode()
    refusals = [line for line in out.splitlines() if "refused" in line]
    assert len(refusals) == 2 and all("UTF-8" in line for line in refusals), out
    assert "You threw" in out and "End of input" in out and proc.stderr == b""


def test_an_overlong_line_is_refused_and_the_game_goes_on() -> None:
    proc = run_play("--bots", "greedy", "--seed", "1", stdin=b"5H " * 100_000 + b"\nquit\n")
    out = proc.stdout.decode("utf-8")
    assert proc.returncode == 0 and "refused: the line is longer than" in out and "You left the game" in out


@pytest.mark.parametrize("bots", ["", ",,,", " , ", "random,,greedy"])
def test_empty_bot_specs_are_refused_by_name(bots: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--players", "4", "--bots", bots, "--seed", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--bots" in captured.err and "empty" in captured.err
    assert captured.err.count("\n") == 1
    with pytest.raises(ValueError, match="empty"):
        bot_specs(bots, 4)


def test_a_pickle_checkpoint_needs_the_trust_switch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sb3_contrib import MaskablePPO

    from yaniv_env.gym_env import YanivGymEnv

    path = tmp_path / "model.zip"
    MaskablePPO("MlpPolicy", YanivGymEnv(num_players=2), policy_kwargs={"net_arch": [8]}, seed=0,
                device="cpu").save(path)
    with pytest.raises(SetupError, match="--trust-pickle"):
        play(2, f"ppo:{path}", "default", 0, io.StringIO("quit\n"), io.StringIO())
    assert main(["--bots", str(path), "--seed", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--trust-pickle" in captured.err and ".npz" in captured.err
    game = play(2, f"ppo:{path}", "default", 0, io.StringIO("quit\n"), io.StringIO(), trust_pickle=True)
    assert not game.is_over
