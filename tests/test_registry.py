"""The spec resolver: a bot registered once is known everywhere, and a bare path means one thing."""

from __future__ import annotations

import importlib.util
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.base import SeededAgent
from agents.play import bot_specs, parse_args, play
from agents.policies.onnx import default_bot_dir
from agents.registry import agent_names, check_spec, make_agent, parse_spec, register, specs_help, unregister
from agents.serving.bots import load_bot
from agents.serving.server import answer, main as serve_main
from agents.tournament import run_tournament
from yaniv import Game, Move, PlayerView
from yaniv.protocol import apply_move, state_for

ROOT = Path(__file__).resolve().parents[1]
NAME = "first_legal"
HELP = "always the first legal move (a test's throwaway bot)"


class FirstLegal(SeededAgent):
    name = NAME

    def act(self, view: PlayerView) -> Move:
        return view.legal_moves[0]


@pytest.fixture
def first_legal() -> Iterator[str]:
    """The throwaway bot, registered for one test."""
    register(NAME, lambda spec, seed: FirstLegal(seed), help=HELP)
    try:
        yield NAME
    finally:
        unregister(NAME)


def help_text(main, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def test_a_registered_bot_is_known_everywhere(first_legal: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert first_legal in agent_names() and HELP in specs_help()
    assert isinstance(make_agent(first_legal, seed=1), FirstLegal)

    # evaluate.py: its --help, and a tiny tournament.
    spec = importlib.util.spec_from_file_location("evaluate", ROOT / "evaluate.py")
    evaluate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evaluate)
    assert HELP in help_text(evaluate.parse_args, capsys)
    result = run_tournament([first_legal, "random"], num_players=2, games=4, seed=0, rounds=True, max_turns=200,
                            workers=1, progress=False)
    assert result.agent(first_legal).games == 4

    # The terminal game: its --help, its bot list, and a game against it.
    assert HELP in help_text(parse_args, capsys)
    assert bot_specs(f"random,{first_legal}", 4) == ["random", first_legal, first_legal]
    out = io.StringIO()
    play(2, first_legal, "default", 0, io.StringIO("quit\n"), out)
    assert f"P1 ({first_legal})" in out.getvalue()

    # load_bot, and the server's answer to a line.
    game = Game(3, seed=5)
    state = state_for(game, game.current)
    bot = load_bot(first_legal)
    move = bot.choose(state)
    assert answer(bot, json.dumps(state)) == move
    assert HELP in help_text(serve_main, capsys)
    apply_move(game, move)  # a legal move of the real game


def test_an_unregistered_bot_is_unknown_again() -> None:
    register(NAME, lambda spec, seed: FirstLegal(seed), help=HELP)
    unregister(NAME)
    with pytest.raises(ValueError, match=f"unknown agent '{NAME}'"):
        check_spec(NAME)
    assert NAME not in agent_names() and HELP not in specs_help()


@pytest.mark.parametrize("name", ["random", "first legal", "x:y"])
def test_a_name_is_registered_once_and_plainly(name: str) -> None:
    with pytest.raises(ValueError, match="cannot register"):
        register(name, lambda spec, seed: FirstLegal(seed), help=HELP)


def test_a_bare_path_means_the_same_spec_everywhere(tmp_path: Path) -> None:
    bot_dir = default_bot_dir()
    run = tmp_path / "run"
    run.mkdir()
    (run / "policy.npz").write_bytes(b"")  # checked to exist, not read
    cases = {
        str(bot_dir): f"onnx:{bot_dir}",
        str(bot_dir / "model.onnx"): f"onnx:{bot_dir}",
        str(run): f"ppo:{run / 'policy.npz'}",
        str(run / "policy.npz"): f"ppo:{run / 'policy.npz'}",
    }
    for path, expected in cases.items():
        assert parse_spec(path).canonical == expected
        assert bot_specs(path, 2) == [expected]
    # The shipped bot by its folder plays as the shipped bot by its name.
    state = state_for(Game(4, seed=9), 0)
    assert load_bot(str(bot_dir), seed=3).choose(state) == load_bot("default", seed=3).choose(state)
    for missing in ("runs/none", "none.npz", "ppo:none.npz"):
        with pytest.raises(ValueError, match="no policy file at"):
            check_spec(missing)
    with pytest.raises(ValueError, match="unknown agent"):
        check_spec("nosuchbot")


def test_the_trust_switch_reaches_the_entry_without_loading(tmp_path: Path) -> None:
    """check_spec reads a file's format, not its pickle; trust_pickle travels in the checked spec."""
    pickled = tmp_path / "model.pt"
    pickled.write_bytes(b"\x80\x04K\x01.")  # pickle.dumps(1): any pickle, whatever it holds, needs the switch
    with pytest.raises(ValueError, match=rf"agent '{pickled}': {pickled} is a pickle"):
        check_spec(str(pickled))
    check_spec(str(pickled), trust_pickle=True)
    assert parse_spec(f"ppo:{pickled}", trust_pickle=True).trust_pickle
    seen: list[bool] = []
    register(NAME, lambda spec, seed: FirstLegal(seed), help=HELP, check=lambda spec: seen.append(spec.trust_pickle))
    try:
        make_agent(NAME, trust_pickle=True)
        check_spec(NAME)
    finally:
        unregister(NAME)
    assert seen == [True, False]
